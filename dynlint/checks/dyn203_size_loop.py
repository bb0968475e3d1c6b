"""DYN203 size-dependent-loop: a loop over a tensor's rows or size is unrolled once per size."""

from __future__ import annotations

import ast

from dynlint import ops
from dynlint.analysis.kinds import DATA_DERIVED, MASK, SIZE, TENSOR, TENSORISH
from dynlint.checks import Scope, rule

RULE = rule("DYN203", "size-dependent-loop", "A loop over a tensor's size is unrolled per size", scope=Scope.STEP)

_ROWS = ("iterating a tensor unrolls one step per row and recompiles for every new size; "
         "vectorize over the dimension")


@RULE.on_loop
def check(a, iterable) -> None:
    node = iterable
    if isinstance(node, ast.Call):
        qual = a.qualname(node.func)
        if qual == "range":
            if any(a.reads_tensor_size(arg) and a.kind(arg) not in DATA_DERIVED for arg in node.args):
                a.report(RULE, iterable, "loop over range(<tensor size>) is unrolled by the compiler and "
                         "recompiles for every new size; vectorize it over the dimension")
            return
        if qual in ops.ITERATION_WRAPPERS:
            if any(a.value_kind(arg) in TENSORISH for arg in node.args):
                a.report(RULE, iterable, _ROWS)
            return
        if qual in ops.TENSOR_ITERATION_FUNCTIONS:
            if not _configured_count(a, node, 1):
                a.report(RULE, iterable, f"looping over `{qual}` unrolls one step per piece and recompiles "
                         "for every new size; vectorize over the dimension")
            return
        if isinstance(node.func, ast.Attribute) and node.func.attr in ops.TENSOR_ITERATION_METHODS:
            receiver = a.kind(node.func.value)
            if _configured_count(a, node, 0):
                return
            if receiver in TENSORISH or (receiver is None and node.func.attr != "split"):
                a.report(RULE, iterable, f"looping over `.{node.func.attr}()` unrolls one step per piece "
                         "and recompiles for every new size; vectorize over the dimension")
            return
    if a.value_kind(node) in TENSORISH:
        a.report(RULE, iterable, _ROWS)


@RULE.on_call(functions=ops.ITERATING_BUILTINS)
def check_builtin(a, node, qual, method, receiver) -> None:
    """``sum(t)``, ``list(t)``, ``tuple(t)``: Python iterates the tensor's rows (measured: one compile per
    length).  ``min``/``max``/``sorted`` compare the rows too: DYN202."""
    if a.is_silenced(node):
        return  # inside a branch test already reported (DYN202)
    if len(node.args) == 1 and not node.keywords and a.value_kind(node.args[0]) in (TENSOR, MASK):
        a.report(RULE, node, f"`{qual}()` of a tensor iterates its rows in Python: unrolled, and recompiled for "
                 "every new size; use the tensor op (t.sum(dim=0), t.unbind(0) with a fixed count) instead")


def _configured_count(a, call: ast.Call, position: int) -> bool:
    """``split(x, x.shape[0] // n)``: pieces sized from the tensor's own size come in a
    configured number, whatever the size."""
    size = call.args[position] if len(call.args) > position else None
    if size is None:
        size = next((k.value for k in call.keywords if k.arg in ("split_size", "split_size_or_sections")), None)
    return size is not None and a.kind(size) == SIZE
