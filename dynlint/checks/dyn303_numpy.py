"""DYN303 numpy-in-compiled-code: numpy's RNG, and numpy values turned into Python numbers, in the
compiled step."""

from __future__ import annotations

from dynlint import ops
from dynlint.analysis.kinds import NDARRAY
from dynlint.checks import Scope, rule

RULE = rule("DYN303", "numpy-in-compiled-code", "NumPy randomness or NumPy values made Python numbers break the graph",
            scope=Scope.COMPILED)


@RULE.on_call(prefixes=(ops.NUMPY_RANDOM_PREFIX,))
def check_random(a, node, qual, method, receiver) -> None:
    a.report(RULE, node, f"`{qual.replace('numpy.', 'np.')}` in the compiled step is a data-dependent operator "
             "(a graph break); draw the randomness with torch (torch.rand, torch.randperm, torch.multinomial) on "
             "the tensor's device")


@RULE.on_call(methods={"item", "tolist"}, any_receiver=True)
def check_scalar(a, node, qual, method, receiver) -> None:
    if a.kind(node.func.value) == NDARRAY and not node.args:
        a.report(RULE, node, f"`.{method}()` of a numpy value in the compiled step is a data-dependent operator "
                 "(a graph break); compute it with torch ops, or before the compiled region")


@RULE.on_call(functions={"int", "float", "bool"})
def check_conversion(a, node, qual, method, receiver) -> None:
    if node.args and a.kind(node.args[0]) == NDARRAY:
        a.report(RULE, node, f"`{qual}()` of a numpy value in the compiled step is a data-dependent operator "
                 "(a graph break); compute it with torch ops, or before the compiled region")
