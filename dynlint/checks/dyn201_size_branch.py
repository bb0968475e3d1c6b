"""DYN201 size-dependent-branch: ``if x.shape[0] > 16`` specializes the graph on the size."""

from __future__ import annotations

from dynlint.analysis.syntax import only_raises
from dynlint.checks import Scope, rule

RULE = rule("DYN201", "size-dependent-branch", "A branch on a tensor's size specializes the graph", scope=Scope.DEVICE)


@RULE.on_branch
def check(a, test, body) -> None:
    if body is not None and only_raises(body):
        return  # size checks that only raise are input validation
    if a.depends_on_values(test):
        return  # `while mask[..., right, :]` tests values (DYN202), whatever indexes it
    if a.reads_tensor_size(test):
        a.report(RULE, test, "branch on a tensor's size specializes the graph: one more compile each time "
                 "the size crosses the condition; make the code shape-agnostic or mark the dimension static")
