"""DYN104 masked-select: ``masked_select`` returns one element per true mask entry."""

from __future__ import annotations

from dynlint.checks import Scope, rule
from dynlint.checks._dynamic_ops import functions_of, methods_of, report_function, report_method

RULE = rule("DYN104", "masked-select", "masked_select has a data-dependent output shape",
            scope=Scope.DEVICE, fix="fix_masked_select")


@RULE.on_call(functions=functions_of("DYN104"), methods=methods_of("DYN104"))
def check(a, node, qual, method, receiver) -> None:
    if qual is not None:
        report_function(a, RULE, node, qual)
    else:
        report_method(a, RULE, node, method, receiver)
