"""DYN201 size-dependent-branch: ``if x.shape[0] > 16`` specializes the graph on the size."""

from __future__ import annotations

import ast

from dynlint.analysis.syntax import only_raises
from dynlint.checks import Scope, rule

RULE = rule("DYN201", "size-dependent-branch", "A branch on a tensor's size specializes the graph", scope=Scope.STEP)


@RULE.on_branch
def check(a, test, body) -> None:
    if body is not None and only_raises(body):
        return  # size checks that only raise are input validation
    if a.depends_on_values(test):
        return  # `while mask[..., right, :]` tests values (DYN202), whatever indexes it
    if _against_configuration(test):
        return  # `x.size(-1) == self.hidden_size`: a model's fixed sizes checked against its settings
    if a.reads_tensor_size(test):
        a.report(RULE, test, "branch on a tensor's size specializes the graph: one more compile each time "
                 "the size crosses the condition; make the code shape-agnostic or mark the dimension static")


def _against_configuration(test: ast.expr) -> bool:
    """An equality check of a size against the model's configuration (``x.size(-1) ==
    self.hidden_size``, ``len(self.vocab)``, ``self.config.dim``): the sizes it checks are fixed for
    a model.  Bounds (``x.size(1) > self.max_len``) are not: the size varies, the bound does not."""
    comparisons = [test] if isinstance(test, ast.Compare) else \
        [v for v in test.values if isinstance(v, ast.Compare)] if isinstance(test, ast.BoolOp) else []
    for comparison in comparisons:
        if not all(isinstance(op, (ast.Eq, ast.NotEq)) for op in comparison.ops):
            continue  # `x.size(1) > self.max_len`: a varying size against a bound
        for side in [comparison.left, *comparison.comparators]:
            inner = side.args[0] if isinstance(side, ast.Call) and isinstance(side.func, ast.Name) and \
                side.func.id == "len" and len(side.args) == 1 else side
            root = inner
            while isinstance(root, (ast.Attribute, ast.Subscript)):
                root = root.value
            if isinstance(inner, ast.Attribute) and isinstance(root, ast.Name) and root.id in ("self", "config", "cfg"):
                return True
    return False
