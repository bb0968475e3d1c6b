"""DYN301 host-sync: ``.item()``, ``.tolist()``, ``.numpy()``, ``int(t)`` copy a value to the host."""

from __future__ import annotations

import ast

from dynlint import ops
from dynlint.analysis.kinds import NDARRAY, TENSORISH
from dynlint.checks import Scope, rule

RULE = rule("DYN301", "host-sync", "Copying a tensor value to the host syncs and breaks the graph", scope=Scope.DEVICE)


@RULE.on_call(functions=ops.HOST_SYNC_BUILTINS)
def check_builtin(a, node, qual, method, receiver) -> None:
    if not node.args or a.is_silenced(node):
        return
    if a.value_kind(node.args[0]) in TENSORISH or a.on_some_path(node.args[0]):
        a.report(RULE, node, f"`{qual}()` of a tensor copies its value to the host (a sync and a graph "
                 "break); keep the value as a tensor")


@RULE.on_call(methods=ops.HOST_SYNC_METHODS)
def check_method(a, node, qual, method, receiver) -> None:
    if node.args or a.is_silenced(node):
        return
    if receiver in TENSORISH or ops.HOST_SYNC_METHODS[method]:
        a.report(RULE, node, f"`.{method}()` copies tensor data to the host (a sync and a graph "
                 "break); keep the value as a tensor, or move this out of the compiled region")


@RULE.on_call(functions=ops.HOST_SYNC_FUNCTIONS)
def check_function(a, node, qual, method, receiver) -> None:
    if node.args and not a.is_silenced(node):
        a.report(RULE, node, f"`{qual}` reads the tensor's value on the host (a sync and a graph break, like "
                 "Tensor.item()); use torch._assert_async, or check outside the compiled region")


@RULE.on_subscript_store
def check_numpy_store(a, target) -> None:
    """``array[i] = t`` copies a tensor into a numpy array: to the host."""
    statement = a.stack[-1] if a.stack else None
    if not isinstance(statement, ast.Assign) or a.kind(target.value) != NDARRAY:
        return
    if a.value_kind(statement.value) in TENSORISH and not a.is_silenced(statement.value):
        a.report(RULE, statement.value, "storing a tensor into a numpy array copies it to the host (a sync); "
                 "keep the values in a tensor, and convert once outside the step")
