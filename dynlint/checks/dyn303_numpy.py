"""DYN303 numpy-in-compiled-code: numpy's RNG, and numpy values turned into Python numbers, in the
compiled step."""

from __future__ import annotations

import ast

from dynlint import ops
from dynlint.analysis.kinds import NDARRAY, PY, SIZE
from dynlint.analysis.variation import VARIES, variation
from dynlint.checks import Scope, rule

RULE = rule("DYN303", "numpy-in-compiled-code", "NumPy randomness or NumPy values made Python numbers break the graph",
            scope=Scope.COMPILED)


@RULE.on_call(prefixes=(ops.NUMPY_RANDOM_PREFIX,))
def check_random(a, node, qual, method, receiver) -> None:
    a.report(RULE, node, f"`{qual.replace('numpy.', 'np.')}` in the compiled step is a data-dependent operator "
             "(a graph break); draw the randomness with torch (torch.rand, torch.randperm, torch.multinomial) on "
             "the tensor's device")


@RULE.on_call(methods=ops.VALUE_READING_METHODS, any_receiver=True)
def check_scalar(a, node, qual, method, receiver) -> None:
    if a.kind(node.func.value) == NDARRAY and not node.args and not _from_numbers(a, node.func.value,
                                                                                unknown_ok=_fixed(a, node.func.value)):
        a.report(RULE, node, f"`.{method}()` of a numpy value in the compiled step is a data-dependent operator "
                 "(a graph break); compute it with torch ops, or before the compiled region")


@RULE.on_call(functions={"int", "float", "bool"})
def check_conversion(a, node, qual, method, receiver) -> None:
    if node.args and a.kind(node.args[0]) == NDARRAY and not _from_numbers(a, node.args[0],
                                                                        unknown_ok=_fixed(a, node.args[0])):
        a.report(RULE, node, f"`{qual}()` of a numpy value in the compiled step is a data-dependent operator "
                 "(a graph break); compute it with torch ops, or before the compiled region")


def _fixed(a, node: ast.expr) -> bool:
    """No size in the expression varies between steps (the batch: ``x.shape[0]``)."""
    return variation(a, node) != VARIES


def _from_numbers(a, node: ast.expr, depth: int = 0, unknown_ok: bool = False) -> bool:
    """``np.ceil(len(x) / 4)``, ``np.log(seq_len)``: numpy math on Python numbers and sizes, no array in
    it.  Measured on torch 2.13: dynamo folds it (no graph break; with a dynamic size it specializes
    that size, as a branch on it would), unlike numpy values read from arrays (``np.zeros(3).sum()``)."""
    if depth > 8:
        return False
    if isinstance(node, ast.Constant):
        return type(node.value) in (int, float)
    if isinstance(node, ast.BinOp):
        return _from_numbers(a, node.left, depth + 1, unknown_ok) and _from_numbers(a, node.right, depth + 1, unknown_ok)
    if isinstance(node, ast.UnaryOp):
        return _from_numbers(a, node.operand, depth + 1, unknown_ok)
    if isinstance(node, ast.Call):
        qual = a.qualname(node.func) or ""
        if qual == "len":
            return True
        if (qual.startswith("numpy.") and not qual.startswith(ops.NUMPY_RANDOM_PREFIX)) or \
                qual in ("int", "float", "abs", "round", "min", "max"):
            return bool(node.args) and all(_from_numbers(a, arg, depth + 1, unknown_ok) for arg in node.args)
        return False
    kind = a.kind(node)
    if unknown_ok and (kind is None or a.uncertain(node)) and depth > 0 \
            and type(node) in (ast.Name, ast.Attribute, ast.Subscript):
        # an operand of unknown kind (or only maybe a tensor: an unannotated forward parameter) in numpy math
        # on fixed sizes (swin's ``np.ceil(H / window_size[1])``, H a block's forward parameter):
        # a Python number (an array would make the int() itself fail unless it held one element); with the
        # batch in it (``np.ceil(x.shape[0] / self.virtual_batch_size)``) it stays reported: one compile per
        # batch size
        return True
    return kind in (PY, SIZE)
