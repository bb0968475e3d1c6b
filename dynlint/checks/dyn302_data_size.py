"""DYN302 data-dependent-size: a size or slice bound computed from tensor data."""

from __future__ import annotations

import ast

from dynlint import ops
from dynlint.analysis.kinds import DATA_DERIVED, TENSORISH, TUPLE, is_not_tensor
from dynlint.analysis.placement import data_from_cpu
from dynlint.analysis.syntax import size_elements
from dynlint.checks import Scope, rule

RULE = rule("DYN302", "data-dependent-size", "A size computed from tensor data makes shapes data-dependent",
            scope=Scope.DEVICE)


_SLICE_BOUND = ("slice bound computed from tensor data gives a data-dependent shape; slice with sizes from "
                ".shape, or use torch.where/masking over the full tensor")


def _data(a, value: ast.expr) -> bool:
    """Tensor data, or a value read from it, on every path or on one (``start = 0``, or ``start = t.item()``)."""
    return a.value_kind(value) in DATA_DERIVED or a.on_some_path(value, DATA_DERIVED)


@RULE.on_subscript
@RULE.on_subscript_store
def check_slice_bounds(a, node: ast.Subscript) -> None:
    base = a.kind(node.value)
    if is_not_tensor(base) or (base not in TENSORISH and base is not None):
        return
    index = node.slice
    for element in index.elts if type(index) is ast.Tuple else (index,):
        if type(element) is not ast.Slice:
            continue
        if _constant_width(element):
            if a.value_kind(element.lower) not in TENSORISH:
                continue  # x[i:i + 1]: the width is static whatever i is
            # x[t:t + 1] with a 0-d tensor t: the width is static, but t is read on the host (measured on
            # torch 2.13: "Tensor.item()", a graph break)
            a.silence_syncs(element.lower)
            a.report(RULE, element.lower, "a tensor as a slice start is read on the host (a graph break); "
                     "select the row with index_select/gather (x.index_select(0, t.view(1))) instead",
                     cpu_value=data_from_cpu(a, element.lower))
            continue
        for bound in (element.lower, element.upper, element.step):
            # also a bound that is data on some path (`start = 0`, or `start = torch.randint(...)`)
            if bound is not None and _data(a, bound):
                a.silence_syncs(bound)
                a.report(RULE, bound, _SLICE_BOUND, cpu_value=data_from_cpu(a, bound))


@RULE.on_call(functions=ops.SLICE_BUILTINS)
def check_slice_object(a, node, qual, method, receiver) -> None:
    """``slice(t, t + n)`` with a tensor bound (q-transformer's replay memory: a row of an index tensor
    unpacked into 0-d tensors): whatever it slices, the bound is read as a Python number on the host.  Only a
    call shaped like the builtin's (one to three positional bounds, no lists): TensorRT-LLM's
    ``slice(x, [0, i * 64], shape, [1, 1])`` is another function, and a star import of a library module
    (``from tensorrt_llm.functional import *``) leaves the name looking like the builtin."""
    if not 1 <= len(node.args) <= 3 or node.keywords:
        return
    for bound in node.args:
        if isinstance(bound, (ast.Starred, ast.List, ast.Tuple)):
            return
    for bound in node.args:
        if _data(a, bound):
            a.silence_syncs(bound)
            a.report(RULE, bound, _SLICE_BOUND, cpu_value=data_from_cpu(a, bound))
            return


@RULE.on_call(functions=ops.SIZE_ARGUMENT_FUNCTIONS)
def check_function(a, node, qual, method, receiver) -> None:
    short = qual.replace("torch.nn.functional.", "F.")
    _check_sizes(a, node, *ops.SIZE_ARGUMENT_FUNCTIONS[qual], what=f"`{short}`")


@RULE.on_call(functions=ops.BOUND_ARGUMENT_FUNCTIONS)
def check_bounds(a, node, qual, method, receiver) -> None:
    """``torch.randint(s, e - length, (1,))``: bounds the op needs as Python numbers; a tuple among the
    positional arguments is the size."""
    positions, keywords = ops.BOUND_ARGUMENT_FUNCTIONS[qual]
    short = qual.replace("torch.", "torch.")
    for index, argument in enumerate(node.args):
        if index not in positions or isinstance(argument, ast.Starred):
            continue
        if isinstance(argument, (ast.Tuple, ast.List)):
            _check_sizes(a, node, (index,), frozenset(), what=f"`{short}`")
        elif _report_bound(a, argument, short):
            return
    for keyword in node.keywords:
        if keyword.arg in keywords and _report_bound(a, keyword.value, short):
            return


def _report_bound(a, value: ast.expr, what: str) -> bool:
    if not _data(a, value):
        return False
    a.silence_syncs(value)
    a.report(RULE, value, f"bound passed to `{what}` is computed from tensor data: the op needs it as a Python "
             "number, read on the host (a graph break); draw on the device instead, e.g. "
             "`low + (torch.rand(size) * (high - low)).long()`", cpu_value=data_from_cpu(a, value))
    return True


@RULE.on_call(methods=ops.SIZE_ARGUMENT_METHODS)
def check_method(a, node, qual, method, receiver) -> None:
    if receiver in TENSORISH or receiver is None:
        _check_sizes(a, node, *ops.SIZE_ARGUMENT_METHODS[method], what=f"`.{method}()`")


def _check_sizes(a, node: ast.Call, positions, keywords, what: str) -> None:
    candidates = []
    if positions and positions[0] == ops.ALL_POSITIONAL:
        candidates.extend(node.args)
    else:
        candidates.extend(node.args[i] for i in positions if i < len(node.args))
    candidates.extend(k.value for k in node.keywords if k.arg in keywords)
    for candidate in candidates:
        if _rows_arithmetic(a, candidate):
            a.report(RULE, candidate, f"sizes passed to {what} are computed from the rows of a tensor (each element "
                     "is a 0-d tensor), so the output shapes are data-dependent; pass Python ints (a list of "
                     "shapes kept beside the tensor), or read them once outside the compiled region")
            return
        for value in size_elements(candidate):
            if a.size_tensor(value):
                continue  # `scores.view(torch.div(n, k, rounding_mode="trunc"), -1)`: a size, as dynamo sees it
            # also a size that is data on some path (`if max_len is None: max_len = lens.amax()`), and a
            # name bound to a tuple that holds one (`padding = (0, max_len - x.size(-1))`, then `F.pad(x, padding)`)
            kind = a.value_kind(value)
            if kind in DATA_DERIVED or a.on_some_path(value, DATA_DERIVED) or (
                    type(kind) is tuple and kind[0] == TUPLE and any(k in DATA_DERIVED for k in kind[1:])):
                a.silence_syncs(value)
                a.report(RULE, value, f"size passed to {what} is computed from tensor data, so the "
                         "output shape is data-dependent; derive sizes from .shape/.size(), or use a fixed "
                         "maximum size with masking", cpu_value=data_from_cpu(a, value))
                return


def _rows_arithmetic(a, node: ast.expr) -> bool:
    """``[h * w for h, w in spatial_shapes]`` with a tensor ``spatial_shapes`` (deformable attention's split of
    the flattened feature levels): a comprehension over the rows of a proven tensor whose elements are arithmetic
    on the rows' values (not their sizes: ``[len(r) for r in t]``, ``[r.shape[0] for r in t]`` are static)."""
    if type(node) not in (ast.ListComp, ast.GeneratorExp) or len(node.generators) != 1:
        return False
    generator = node.generators[0]
    source = generator.iter
    if a.value_kind(source) not in TENSORISH or a.uncertain(source):
        return False
    targets = {n.id for n in ast.walk(generator.target) if type(n) is ast.Name}
    used = False
    for part in ast.walk(node.elt):
        t = type(part)
        if t is ast.Name:
            if part.id not in targets:
                return False
            used = True
        elif t not in (ast.BinOp, ast.UnaryOp, ast.Constant, ast.Load) and not isinstance(
                part, (ast.operator, ast.unaryop)):
            return False
    return used


def _constant_width(element: ast.Slice) -> bool:
    upper, lower = element.upper, element.lower
    if lower is None or element.step is not None or not isinstance(upper, ast.BinOp):
        return False
    if not isinstance(upper.op, (ast.Add, ast.Sub)):
        return False
    constant = upper.right if isinstance(upper.right, ast.Constant) else upper.left if isinstance(upper.op, ast.Add) else None
    other = upper.left if constant is upper.right else upper.right
    return isinstance(constant, ast.Constant) and type(constant.value) is int and ast.dump(other) == ast.dump(lower)
