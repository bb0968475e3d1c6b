"""DYN101 boolean-mask-index: ``x[mask]`` reads a data-dependent number of elements."""

from __future__ import annotations

import ast

from dynlint import ops
from dynlint.analysis.kinds import MASK, NDARRAY, TENSOR, TENSORISH, is_not_tensor
from dynlint.analysis.placement import made_on_cpu
from dynlint.analysis.syntax import key_name, last_name
from dynlint.checks import Scope, rule
from dynlint.checks._weak_evidence import maybe_numpy

RULE = rule("DYN101", "boolean-mask-index", "Boolean-mask indexing has a data-dependent output shape",
            scope=Scope.DEVICE, fix="fix_mask_index")


@RULE.on_subscript
def check(a, node: ast.Subscript) -> None:
    base = a.kind(node.value)
    if is_not_tensor(base):
        return
    if base not in TENSORISH and base is not None:
        return
    index = node.slice
    for element in index.elts if type(index) is ast.Tuple else (index,):
        if type(element) is ast.Slice:
            continue
        kind = a.kind(element)
        if _uint8_cast(element) and base is not None:
            kind = MASK  # `pred[m.byte()]`: a uint8 index selects like a boolean mask (deprecated, still a mask)
        if kind == MASK or (kind in (None, TENSOR) and base in TENSORISH and _named_as_mask(element)
                            and not _bound_to_an_index(a, element)) or (
                kind == NDARRAY and base in TENSORISH and type(element) is ast.Compare):  # x[seeds == 1]
            # a CPU tensor's selection (`labels[labels == pad_id]` before `labels.to(device)`) syncs no device
            a.report(RULE, node, "boolean-mask indexing has a data-dependent output shape; "
                     "use torch.where(mask, x, 0) with a masked reduction",
                     cpu_value=base is not None and made_on_cpu(a, node.value))
            return
    if base is None:
        _check_unknown_base(a, node, index)


def _check_unknown_base(a, node: ast.Subscript, index: ast.expr) -> None:
    """``pred_scores[valid_mask]`` where neither side is typed (an assigner's inputs from a toolkit's
    containers, mmyolo's pose SimOTA): a value named a mask selecting from another value is a tensor
    where the step runs it; reported only there (``step_only``), and not where the code says numpy."""
    if type(index) is not ast.Name or not index.id.islower() or ops.named_as_key(index.id):
        return  # a local value; not `self.mask_name`, `ATTENTION_MASK` or `mask_key`: keys of dicts
    kind = a.kind(index)
    if kind not in (None, TENSOR, MASK) or not _named_as_mask(index) or _bound_to_an_index(a, index):
        return
    if type(node.value) not in (ast.Name, ast.Attribute, ast.Subscript) or maybe_numpy(a, node.value) \
            or maybe_numpy(a, index):
        return
    a.report(RULE, node, "boolean-mask indexing has a data-dependent output shape; "
             "use torch.where(mask, x, 0) with a masked reduction", step_only=True)


def _uint8_cast(element: ast.expr) -> bool:
    """``m.byte()``: a tensor cast to uint8 (only tensors have ``.byte()``)."""
    return type(element) is ast.Call and type(element.func) is ast.Attribute and element.func.attr == "byte" \
        and not element.args and not element.keywords


def _bound_to_an_index(a, element: ast.expr) -> bool:
    """``valid = det.nonzero()`` then ``x[valid]``: the name says mask, its value is an integer index."""
    if type(element) is not ast.Name:
        return False
    value = a.bound_value(element.id)  # its only plain binding in the function
    if type(value) is not ast.Call:
        return False
    func = value.func
    name = func.attr if type(func) is ast.Attribute else func.id if type(func) is ast.Name else ""
    return name in ops.INDEX_RESULT_CALLS


def _named_as_mask(element: ast.expr) -> bool:
    """``x[valid_mask]``, ``boxes[keep]``: a tensor indexed by a value its author named a mask, by a
    row of one (``samples[seq_mask[i]]``), by one reshaped (``x[valid_mask.view(-1)]``) or inverted
    (``x[~matching_mask]``), or by a dict's entry under a key named for a mask (``info["padding_mask"]``,
    stable-audio's ``info[self.mask_key]``)."""
    if type(element) is ast.Subscript and type(element.slice) is not ast.Slice:
        if _mask_key(element.slice):
            return True
        element = element.value
    while (type(element) is ast.Call and type(element.func) is ast.Attribute
           and element.func.attr in ops.MASK_PRESERVING_METHODS) or \
            (type(element) is ast.UnaryOp and isinstance(element.op, ast.Invert)):
        # x[atompair_mask.view(-1)]: the mask, reshaped; x[~matching_mask]: the mask, inverted
        element = element.operand if type(element) is ast.UnaryOp else element.func.value
    name = last_name(element)
    return name is not None and ops.named_as_mask(name)


def _mask_key(key: ast.expr) -> bool:
    """``"padding_mask"``, ``self.mask_key``, ``MASK_KEY``: a dict key that names a mask."""
    name = key_name(key)
    return name is not None and ops.named_as_mask(name)
