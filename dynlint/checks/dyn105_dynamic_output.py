"""DYN105 dynamic-output-op: any other op whose output shape depends on tensor values
(bincount, NMS, repeat_interleave with tensor repeats, one_hot without num_classes, and
the project's own ``extend-dynamic-ops``)."""

from __future__ import annotations

import ast

from dynlint import ops
from dynlint.analysis.kinds import TENSORISH
from dynlint.analysis.syntax import argument, is_constant, keyword
from dynlint.checks import Scope, rule
from dynlint.checks._dynamic_ops import functions_of, methods_of, report_function, report_method

RULE = rule("DYN105", "dynamic-output-op", "An op whose output shape depends on tensor values", scope=Scope.DEVICE)


@RULE.on_call(functions=functions_of("DYN105"), methods=methods_of("DYN105"))
def check(a, node, qual, method, receiver) -> None:
    if qual is not None:
        report_function(a, RULE, node, qual)
    else:
        report_method(a, RULE, node, method, receiver)


@RULE.on_call(functions={ops.REPEAT_INTERLEAVE}, methods={"repeat_interleave"})
def check_repeat_interleave(a, node: ast.Call, qual, method, receiver) -> None:
    if keyword(node, "output_size") is not None:
        return
    if qual is not None and len(node.args) == 1 and not keyword(node, "repeats"):
        repeats = node.args[0]  # torch.repeat_interleave(repeats)
    else:
        repeats = argument(node, 1 if qual is not None else 0, "repeats")
    if repeats is not None and a.kind(repeats) in TENSORISH:
        a.report(RULE, node, "`repeat_interleave` with tensor repeats has a data-dependent output shape; "
                 "pass output_size=<total>, or use a fixed-size formulation")


@RULE.on_call(functions={ops.ONE_HOT})
def check_one_hot(a, node: ast.Call, qual, method, receiver) -> None:
    num_classes = argument(node, 1, "num_classes")
    if num_classes is None or (isinstance(num_classes, ast.UnaryOp) and isinstance(num_classes.operand, ast.Constant)
                               and num_classes.operand.value == 1):
        a.report(RULE, node, "`F.one_hot` without num_classes reads the maximum value to size its "
                 "output; pass num_classes=<number of classes>")


@RULE.on_call(functions=frozenset(ops.SIZED_UNLESS_GIVEN))
def check_sized_unless_given(a, node: ast.Call, qual, method, receiver) -> None:
    if a.is_project(qual):
        return  # the project's own degree/to_dense_batch (PyTorch Geometric checked as a project): its body is checked
    if any(isinstance(arg, ast.Starred) for arg in node.args) or any(k.arg is None for k in node.keywords):
        return  # *args or **kwargs may carry the sizes
    alternative = ops.SIZE_ALTERNATIVES.get(qual)
    if alternative is not None and _given(argument(node, alternative[1], alternative[0])):
        return  # torch_scatter's scatter_add(src, index, out=buffer): the buffer's rows
    if qual in ops.STATIC_WHEN_NONE:
        name, position = ops.STATIC_WHEN_NONE[qual]
        if not _given(argument(node, position, name)):
            return  # global_add_pool(x, None): one graph, a plain sum
    missing, defaulted = [], []
    for name, position in ops.SIZED_UNLESS_GIVEN[qual]:
        value = argument(node, position, name)
        if value is None or is_constant(value, None):
            missing.append(name)
        elif a.none_by_default(value):
            defaulted.append(value.id)  # def conv(edge_index, num_nodes=None): None unless the caller passes it
    short = qual.rsplit(".", 1)[1]
    if missing:
        given = " and ".join(f"{name}=" for name in missing)
        a.report(RULE, node, f"`{short}` without {given} reads tensor values to size its output (a sync and a "
                 f"graph break); pass {given}")
    elif defaulted:
        names = " and ".join(f"`{name}`" for name in defaulted)
        a.report(RULE, node, f"`{short}` reads tensor values to size its output (a sync and a graph break) when "
                 f"{names} keeps its default None; have callers pass the size, or give it one before the call")


def _given(value) -> bool:
    return value is not None and not is_constant(value, None)


@RULE.on_call(setting="extend_dynamic_ops")
def check_declared(a, node: ast.Call, qual, method, receiver) -> None:
    if qual not in ops.DYNAMIC_FUNCTIONS:
        a.report(RULE, node, f"`{qual}` is declared in extend-dynamic-ops as having a data-dependent output "
                 "shape; move it out of the compiled region or give it a fixed output size")
