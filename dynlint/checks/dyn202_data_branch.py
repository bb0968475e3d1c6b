"""DYN202 data-dependent-branch: ``if t.sum() > 0`` needs the value on the host: a graph break.

Builtins that compare values in Python are branches too: ``min(t)``, ``max(0, t)``,
``sorted(t)``, ``any(t)``, ``all(t)`` call ``bool()`` on tensor comparisons."""

from __future__ import annotations

import ast

from dynlint import ops
from dynlint.analysis.kinds import TENSORISH
from dynlint.checks import Scope, rule

RULE = rule("DYN202", "data-dependent-branch", "A branch on tensor values breaks the graph", scope=Scope.DEVICE,
            fix="fix_raise_branch")


@RULE.on_branch
def check(a, test, body) -> None:
    if a.depends_on_values(test):
        a.silence_syncs(test)
        a.report(RULE, test, "branch on tensor values breaks the graph (data-dependent control flow); "
                 "use torch.where / torch.cond, or move the check out of the compiled region")


@RULE.on_call(functions=ops.COMPARING_BUILTINS)
def check_builtin(a, node, qual, method, receiver) -> None:
    """``min(lengths)``, ``sorted(lengths)``, ``max(0, t - n)``: Python compares tensor values."""
    if a.is_silenced(node) or not node.args or any(type(arg) is ast.Starred for arg in node.args):
        return
    if not any(a.value_kind(arg) in TENSORISH or a.on_some_path(arg) for arg in node.args):
        return
    a.silence_syncs(node)
    advice, effect = ops.COMPARING_BUILTINS[qual]
    if len(node.args) == 1:
        message = (f"`{qual}()` over a tensor compares its elements in Python ({effect}); "
                   f"use {advice[0]}")
    else:
        message = (f"`{qual}()` with a tensor argument compares tensor values in Python (bool() of a tensor: a host "
                   f"sync in eager and lazy XLA/HPU mode); use {advice[1]}")
    a.report(RULE, node, message)
