"""DYN202 data-dependent-branch: ``if t.sum() > 0`` needs the value on the host: a graph break."""

from __future__ import annotations

from dynlint import fixes
from dynlint.checks import Scope, rule

RULE = rule("DYN202", "data-dependent-branch", "A branch on tensor values breaks the graph", scope=Scope.DEVICE,
            fix=fixes.fix_raise_branch)


@RULE.on_branch
def check(a, test, body) -> None:
    if a.depends_on_values(test):
        a.silence_syncs(test)
        a.report(RULE, test, "branch on tensor values breaks the graph (data-dependent control flow); "
                 "use torch.where / torch.cond, or move the check out of the compiled region")
