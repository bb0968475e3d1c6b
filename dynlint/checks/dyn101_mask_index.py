"""DYN101 boolean-mask-index: ``x[mask]`` reads a data-dependent number of elements."""

from __future__ import annotations

import ast

from dynlint import fixes
from dynlint.analysis.kinds import MASK, TENSORISH, is_not_tensor
from dynlint.checks import Scope, rule

RULE = rule("DYN101", "boolean-mask-index", "Boolean-mask indexing has a data-dependent output shape",
            scope=Scope.DEVICE, fix=fixes.fix_mask_index)


@RULE.on_subscript
def check(a, node: ast.Subscript) -> None:
    base = a.kind(node.value)
    if is_not_tensor(base):
        return
    if base not in TENSORISH and base is not None:
        return
    index = node.slice
    for element in index.elts if type(index) is ast.Tuple else (index,):
        if type(element) is not ast.Slice and a.kind(element) == MASK:
            a.report(RULE, node, "boolean-mask indexing has a data-dependent output shape; "
                     "use torch.where(mask, x, 0) with a masked reduction")
            return
