"""DYN203 size-dependent-loop: a loop over a tensor's rows or size is unrolled once per size."""

from __future__ import annotations

import ast

from dynlint import ops
from dynlint.analysis.kinds import DATA_DERIVED, SIZE, TENSORISH
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


def _configured_count(a, call: ast.Call, position: int) -> bool:
    """``split(x, x.shape[0] // n)``: pieces sized from the tensor's own size come in a
    configured number, whatever the size."""
    size = call.args[position] if len(call.args) > position else None
    if size is None:
        size = next((k.value for k in call.keywords if k.arg in ("split_size", "split_size_or_sections")), None)
    return size is not None and a.kind(size) == SIZE
