"""DYN202 data-dependent-branch: ``if t.sum() > 0`` needs the value on the host: a graph break.

Builtins that compare values in Python are branches too: ``min(t)``, ``max(0, t)``,
``sorted(t)``, ``any(t)``, ``all(t)`` call ``bool()`` on tensor comparisons."""

from __future__ import annotations

import ast

from dynlint import ops
from dynlint.analysis.kinds import SEQ, TENSORISH, TUPLE
from dynlint.analysis.placement import test_reads_cpu
from dynlint.analysis.syntax import last_name
from dynlint.checks import Scope, rule
from dynlint.checks._weak_evidence import maybe_numpy

RULE = rule("DYN202", "data-dependent-branch", "A branch on tensor values breaks the graph", scope=Scope.DEVICE,
            fix="fix_raise_branch")


_MESSAGE = ("branch on tensor values breaks the graph (data-dependent control flow); "
            "use torch.where / torch.cond, or move the check out of the compiled region")


@RULE.on_branch
def check(a, test, body) -> None:
    if a.depends_on_values(test):
        a.silence_syncs(test)
        a.report(RULE, test, _MESSAGE, cpu_value=test_reads_cpu(a, test))
    elif _mask_named_any(a, test):
        # `if not inside_flags.any():` on the result of an external helper (mmcv's anchor_inside_flags): a
        # value named a mask and reduced with any()/all() is a tensor where the step runs it, and in numpy
        # code elsewhere as often as not
        a.report(RULE, test, _MESSAGE, step_only=True)
    elif _compared_any(a, test):
        # `if (graph.in_degrees() == 0).any():` in a graph layer's forward (dgl: a method of a graph object
        # whose class the call graph cannot see): an elementwise comparison reduced with any()/all() is an
        # array's, a tensor's where the step runs it
        a.report(RULE, test, _MESSAGE, step_only=True)


def _compared_any(a, test: ast.expr) -> bool:
    """``(x.f() == 0).any()``, ``not (a != b).all()`` (in an ``and``/``or`` too): an elementwise comparison
    of a value of unknown kind (not numpy by what the code does) with constants or other such values,
    reduced with any()/all()."""
    if type(test) is ast.BoolOp:
        return any(_compared_any(a, value) for value in test.values)
    if type(test) is ast.UnaryOp and isinstance(test.op, ast.Not):
        test = test.operand
    if type(test) is not ast.Call or test.args or test.keywords or type(test.func) is not ast.Attribute \
            or test.func.attr not in ("any", "all") or type(test.func.value) is not ast.Compare:
        return False
    compare = test.func.value
    if len(compare.ops) != 1 or not isinstance(compare.ops[0], (ast.Eq, ast.NotEq, ast.Lt, ast.LtE, ast.Gt, ast.GtE)):
        return False
    unknown = False
    for side in (compare.left, *compare.comparators):
        if type(side) is ast.Constant:
            continue
        if a.kind(side) is not None or maybe_numpy(a, side):
            return False
        unknown = True
    return unknown


def _mask_named_any(a, test: ast.expr) -> bool:
    """``mask.any()``, ``not valid.all()`` (in an ``and``/``or`` too) on a value of unknown kind
    whose name says it is a mask."""
    if type(test) is ast.BoolOp:
        return any(_mask_named_any(a, value) for value in test.values)
    if type(test) is ast.UnaryOp and isinstance(test.op, ast.Not):
        test = test.operand
    if type(test) is not ast.Call or test.args or test.keywords or type(test.func) is not ast.Attribute \
            or test.func.attr not in ("any", "all"):
        return False
    value = test.func.value
    name = last_name(value)
    return name is not None and a.kind(value) is None and ops.named_as_mask(name)


@RULE.on_call(functions=ops.COMPARING_BUILTINS)
def check_builtin(a, node, qual, method, receiver) -> None:
    """``min(lengths)``, ``sorted(lengths)``, ``max(0, t - n)``: Python compares tensor values."""
    if a.is_silenced(node) or not node.args or any(type(arg) is ast.Starred for arg in node.args):
        return
    elements = len(node.args) == 1 and _of_tensors(a, node.args[0])
    if not elements and not any(a.value_kind(arg) in TENSORISH or a.on_some_path(arg) for arg in node.args):
        return
    a.silence_syncs(node)
    advice, effect = ops.COMPARING_BUILTINS[qual]
    if elements:
        # max([norm(t) for t in ts]): Python compares the tensors with each other (torchdiffeq's _mixed_norm)
        message = (f"`{qual}()` over a list of tensors compares tensor values in Python (bool() of a tensor: a host "
                   f"sync in eager and lazy XLA/HPU mode); use {advice[0]} on torch.stack(...)")
    elif len(node.args) == 1:
        message = (f"`{qual}()` over a tensor compares its elements in Python ({effect}); "
                   f"use {advice[0]}")
    else:
        message = (f"`{qual}()` with a tensor argument compares tensor values in Python (bool() of a tensor: a host "
                   f"sync in eager and lazy XLA/HPU mode); use {advice[1]}")
    a.report(RULE, node, message)


_SEQUENCES = (ast.List, ast.Tuple, ast.ListComp, ast.GeneratorExp)


def _of_tensors(a, node: ast.expr) -> bool:
    """A list, tuple or comprehension written here whose elements are all proven tensors.  A
    comprehension's element is judged before its variables are bound (checks run before the
    call's arguments are walked): it counts only when none of them is bound yet in the function
    (a stale binding of the same name could stand in for the variable) and the element is a
    tensor whatever the variable holds (``norm(t)`` of a helper returning one)."""
    t = type(node)
    if t not in _SEQUENCES:
        return False
    if t in (ast.List, ast.Tuple):
        if any(type(e) is ast.Starred or a.uncertain(e) for e in node.elts):
            return False
    else:
        bound = a.scope.kinds
        for generator in node.generators:
            names = [n.id for n in ast.walk(generator.target) if type(n) is ast.Name]
            if any(name in bound for name in names):
                return False
        if a.uncertain(node.elt):
            return False
    kind = a.value_kind(node)
    if type(kind) is not tuple:
        return False
    if kind[0] == SEQ:
        return kind[1] in TENSORISH
    return kind[0] == TUPLE and len(kind) > 1 and all(part in TENSORISH for part in kind[1:])
