"""DYN103 unique: ``unique``/``unique_consecutive`` return one element per distinct value."""

from __future__ import annotations

from dynlint.checks import Scope, rule
from dynlint.checks._dynamic_ops import functions_of, methods_of, report_function, report_method

RULE = rule("DYN103", "unique", "unique/unique_consecutive have a data-dependent output shape", scope=Scope.DEVICE)


@RULE.on_call(functions=functions_of("DYN103"), methods=methods_of("DYN103"))
def check(a, node, qual, method, receiver) -> None:
    if qual is not None:
        report_function(a, RULE, node, qual)
    else:
        report_method(a, RULE, node, method, receiver)
