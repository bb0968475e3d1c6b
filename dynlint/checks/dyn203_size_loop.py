"""DYN203 size-dependent-loop: a loop over a tensor's rows or size is unrolled once per size."""

from __future__ import annotations

import ast

from dynlint import ops
from dynlint.analysis.kinds import DATA_DERIVED, MASK, PY, SIZE, TENSOR, TENSORISH, is_module
from dynlint.analysis.placement import loop_on_cpu
from dynlint.analysis.variation import UNKNOWN, VARIES, dim_variation, variation
from dynlint.checks import Scope, dyn205_unknown_size_loop as unknown_size_loop, rule

RULE = rule("DYN203", "size-dependent-loop", "A loop over a tensor's size is unrolled per size", scope=Scope.STEP)

_ROWS = ("iterating a tensor unrolls one step per row and recompiles for every new size; "
         "vectorize over the dimension")


_PIECES = "looping over `{}` unrolls one step per piece and recompiles for every new size; vectorize over the dimension"


@RULE.on_loop
def check(a, iterable) -> None:
    """Also reports DYN205 (opt-in): one computation for both, whatever is selected."""
    found = size_loop(a, iterable)
    if found is not None:
        variation_, message = found
        cpu = loop_on_cpu(a, iterable)
        if variation_ == VARIES:
            a.report(RULE, iterable, message, cpu_value=cpu)
        else:
            a.report(unknown_size_loop.RULE, iterable, message + unknown_size_loop.NOTE, cpu_value=cpu)


def size_loop(a, iterable):
    """(variation, message) of a loop whose trip count is a tensor's size, or None.  The variation
    (``variation.VARIES`` or ``UNKNOWN``) is that of the size iterated: DYN203 reports what varies,
    DYN205 (opt-in) the rest."""
    node = iterable
    if isinstance(node, ast.Call):
        qual = a.qualname(node.func)
        if qual == "range":
            sizes = [arg for arg in node.args if a.reads_tensor_size(arg) and a.kind(arg) not in DATA_DERIVED]
            if not sizes:
                return None
            varies = any(variation(a, arg) == VARIES for arg in sizes)
            return (VARIES if varies else UNKNOWN), ("loop over range(<tensor size>) is unrolled by the compiler "
                                                     "and recompiles for every new size; vectorize it over the dimension")
        if qual in ops.ITERATION_WRAPPERS:
            tensors = [arg for arg in node.args if a.value_kind(arg) in TENSORISH]
            if not tensors:
                return None
            varies = any(dim_variation(a, arg, 0) == VARIES for arg in tensors)
            if varies and qual == "zip" and any(_configured_sequence(a, arg) for arg in node.args if arg not in tensors):
                varies = False  # zip(self.experts, x): as many steps as the model's configured list, at most
            return (VARIES if varies else UNKNOWN), _ROWS
        if qual in ops.TENSOR_ITERATION_FUNCTIONS:
            if _configured_count(a, node, 1):
                return None
            tensor = node.args[0] if node.args else None
            found = dim_variation(a, tensor, _dim_argument(node, 2)) if tensor is not None else UNKNOWN
            return found, _PIECES.format(qual)
        if isinstance(node.func, ast.Attribute) and node.func.attr in ops.TENSOR_ITERATION_METHODS:
            receiver = a.kind(node.func.value)
            if _configured_count(a, node, 0):
                return None
            if receiver in TENSORISH or (receiver is None and node.func.attr != "split"):
                dim = _dim_argument(node, 0 if node.func.attr == "unbind" else 1)
                return dim_variation(a, node.func.value, dim), _PIECES.format(f".{node.func.attr}()")
            return None
    if a.value_kind(node) in TENSORISH:
        return dim_variation(a, node, 0), _ROWS
    return None


def _configured_sequence(a, node: ast.expr) -> bool:
    """A Python sequence the model or the code fixes the length of: a module list (``self.experts``), an
    attribute of ``self`` that is no tensor (``self.labels``, ``self.model.sources``), a Python value
    (``names = list(losses)``), a list or tuple written here."""
    if type(node) in (ast.List, ast.Tuple):
        return True
    kind = a.value_kind(node)
    if kind in TENSORISH:
        return False
    if is_module(kind) or kind == PY:
        return True
    root = node
    while type(root) is ast.Attribute:
        root = root.value
    return type(node) is ast.Attribute and type(root) is ast.Name and root.id == "self"


def _dim_argument(call: ast.Call, position: int) -> int | None:
    """The ``dim`` of unbind/split (default 0; None when not a constant)."""
    dim = call.args[position] if len(call.args) > position else \
        next((k.value for k in call.keywords if k.arg in ("dim", "axis")), None)
    if dim is None:
        return 0
    if isinstance(dim, ast.Constant) and type(dim.value) is int:
        return dim.value
    return None


@RULE.on_call(functions=ops.ITERATING_BUILTINS)
def check_builtin(a, node, qual, method, receiver) -> None:
    """``sum(t)``, ``list(t)``, ``tuple(t)``: Python iterates the tensor's rows (measured: one compile per
    length).  ``min``/``max``/``sorted`` compare the rows too: DYN202."""
    found = builtin_loop(a, node)
    if found == VARIES:
        a.report(RULE, node, builtin_message(qual))
    elif found == UNKNOWN:
        a.report(unknown_size_loop.RULE, node, builtin_message(qual) + unknown_size_loop.NOTE)


def builtin_loop(a, node) -> str | None:
    if a.is_silenced(node):
        return None  # inside a branch test already reported (DYN202)
    if len(node.args) == 1 and not node.keywords and a.value_kind(node.args[0]) in (TENSOR, MASK):
        return dim_variation(a, node.args[0], 0)
    return None


def builtin_message(qual: str) -> str:
    return (f"`{qual}()` of a tensor iterates its rows in Python: unrolled, and recompiled for every new size; "
            "use the tensor op (t.sum(dim=0), t.unbind(0) with a fixed count) instead")


def _configured_count(a, call: ast.Call, position: int) -> bool:
    """``split(x, x.shape[0] // n)``: pieces sized from the tensor's own size come in a
    configured number, whatever the size."""
    size = call.args[position] if len(call.args) > position else None
    if size is None:
        size = next((k.value for k in call.keywords if k.arg in ("split_size", "split_size_or_sections")), None)
    return size is not None and a.kind(size) == SIZE
