"""DYN501 compile-dynamic-true: ``torch.compile(dynamic=True)`` makes every dimension dynamic."""

from __future__ import annotations

from dynlint import ops
from dynlint.analysis.syntax import is_constant, keyword_node
from dynlint.checks import Scope, rule

RULE = rule("DYN501", "compile-dynamic-true", "torch.compile(dynamic=True) compiles everything dynamic",
            scope=Scope.ANYWHERE, fix="fix_compile_dynamic", opt_in=True)


@RULE.on_call(functions=ops.COMPILE_FUNCTIONS)
def check(a, node, qual, method, receiver) -> None:
    dynamic_arg = keyword_node(node, "dynamic")
    if dynamic_arg is not None and is_constant(dynamic_arg.value, True):
        a.report(RULE, dynamic_arg, "`dynamic=True` compiles every dimension as dynamic (slower "
                 "kernels, more guards); use torch._dynamo.mark_dynamic on the dimensions that vary",
                 fix_node=node)
