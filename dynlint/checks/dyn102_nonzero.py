"""DYN102 nonzero: ``nonzero``/``argwhere``/one-argument ``torch.where`` return one row per true element."""

from __future__ import annotations

from dynlint import ops
from dynlint.analysis.placement import made_on_cpu
from dynlint.checks import Scope, rule
from dynlint.checks._dynamic_ops import functions_of, methods_of, report_function, report_method

RULE = rule("DYN102", "nonzero", "nonzero/argwhere/one-argument where have a data-dependent output shape",
            scope=Scope.DEVICE, fix="fix_nonzero")


@RULE.on_call(functions=functions_of("DYN102"), methods=methods_of("DYN102"))
def check(a, node, qual, method, receiver) -> None:
    if qual is not None:
        report_function(a, RULE, node, qual)
    else:
        report_method(a, RULE, node, method, receiver)


@RULE.on_call(functions={ops.WHERE})
def check_where(a, node, qual, method, receiver) -> None:
    if len(node.args) == 1 and not node.keywords:
        a.report(RULE, node, "one-argument `torch.where(cond)` is `nonzero` (data-dependent output shape); "
                 "use the three-argument torch.where(cond, x, y) or a masked reduction",
                 cpu_value=made_on_cpu(a, node.args[0]))
