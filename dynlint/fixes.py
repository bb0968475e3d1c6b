"""Fix builders: turn a finding's node into text edits on the original source.

Called by the checker during its one ``ast`` pass (no torch, no libcst here).
Each builder returns a ``Fix`` whose applicability is what the measurements in
shared/pytorch-facts.md support (see rules/*.md "Fix safety"):

* SAFE only when the rewrite is exact for every valid input: every dtype,
  NaN/inf outside the mask, empty/full masks, gradients, and every valid mask
  rank, and when it evaluates the same sub-expressions (reordering is harmless
  only for side-effect-free operands).
* UNSAFE when a result can differ (a 0-d tensor instead of an int, an int input
  that used to raise, an empty mask, dropped data, more compute).

The emitted code is plain PyTorch spelled with the file's own torch alias.
"""

from __future__ import annotations

import ast
import io
import re
import tokenize

from dynlint.source import LINE_BREAK_RE
from dynlint.diagnostics import Applicability, Edit, Fix
from dynlint.fixcontext import FixContext
from dynlint.ops import PURE_TENSOR_METHODS

SAFE = Applicability.SAFE
UNSAFE = Applicability.UNSAFE


# Full reductions a masked value can feed.
_SUM = "sum"
_MEAN = "mean"
_MAX_LIKE = frozenset({"max", "amax"})
_MIN_LIKE = frozenset({"min", "amin"})
_REDUCTIONS = frozenset({_SUM, _MEAN}) | _MAX_LIKE | _MIN_LIKE

# Ops whose result has the broadcast shape of their tensor operands (so a mask
# computed with them from ``x`` has x's shape whenever ``x[mask]`` is valid).
_ELEMENTWISE_FUNCS = frozenset({
    "isnan", "isinf", "isfinite", "isneginf", "isposinf", "isreal", "signbit", "logical_not",
    "logical_and", "logical_or", "logical_xor", "eq", "ne", "gt", "lt", "ge", "le",
    "greater", "less", "greater_equal", "less_equal", "not_equal",
    "abs", "neg", "exp", "log", "sigmoid", "sign", "sqrt", "square",
})
_ELEMENTWISE_METHODS = _ELEMENTWISE_FUNCS | frozenset({"bool", "float", "double", "half", "int", "long", "detach"})
_BOOL_FUNCS = frozenset({
    "isnan", "isinf", "isfinite", "isneginf", "isposinf", "isreal", "signbit", "logical_not",
    "logical_and", "logical_or", "logical_xor", "eq", "ne", "gt", "lt", "ge", "le",
    "greater", "less", "greater_equal", "less_equal", "not_equal",
})
_BOOL_METHODS = _BOOL_FUNCS | frozenset({"bool"})
# One-tensor ops whose result has exactly their operand's shape.
_SHAPE_KEEPING_FUNCS = frozenset({
    "abs", "neg", "exp", "log", "sigmoid", "sign", "sqrt", "square", "isnan", "isinf", "isfinite", "isneginf",
    "isposinf", "signbit", "logical_not", "tanh", "relu", "log1p", "expm1", "reciprocal", "rsqrt", "floor", "ceil",
    "round", "trunc", "clone",
})
_SHAPE_KEEPING_METHODS = _SHAPE_KEEPING_FUNCS | frozenset({
    "bool", "float", "double", "half", "bfloat16", "int", "long", "short", "detach", "contiguous",
})
# Full reductions: 0-d tensors on x's device (for "flows into tensor arithmetic").
_REDUCTION_METHODS = frozenset({"sum", "mean", "amax", "amin", "max", "min", "prod", "nansum", "nanmean"})
_TENSOR_KINDS = frozenset({"tensor", "mask", "scalar_tensor"})
_COMPARE_OPS = (ast.Lt, ast.Gt, ast.LtE, ast.GtE, ast.Eq, ast.NotEq)
_ARITH_OPS = (ast.Add, ast.Sub, ast.Mult, ast.Div, ast.FloorDiv, ast.Mod, ast.Pow,
              ast.BitAnd, ast.BitOr, ast.BitXor)
_PRODUCT_OPS = (ast.Add, ast.Sub, ast.Mult)

# Parents in which any expression can stand without parentheses.
_OPEN_CONTEXTS = (ast.stmt, ast.keyword, ast.List, ast.Tuple, ast.Set, ast.Dict, ast.FormattedValue)

# DataLoader(dataset, batch_size, shuffle, sampler, batch_sampler, num_workers, collate_fn, pin_memory, drop_last)
_DATALOADER_DROP_LAST_POSITION = 8


def build_fix(code: str, node: ast.AST, ancestors: list[ast.AST], ctx: FixContext) -> Fix | None:
    """The fix for a finding of ``code`` at ``node`` (see dynlint.fixcontext), or None."""
    builder = _BUILDERS.get(code)
    if builder is None:
        return None
    return builder(node, list(ancestors), ctx)


# --------------------------------------------------------------------------- DYN101 / DYN104 / DYN102
def _fix_mask_index(node, ancestors, ctx):
    """DYN101: ``x[m]`` feeding a full reduction."""
    if ctx.torch_alias is None or not isinstance(node, ast.Subscript):
        return None
    if isinstance(node.slice, (ast.Tuple, ast.Slice, ast.Starred)):
        return None
    product = _masked_product(node, ancestors, ctx)
    if product is not None:
        return product
    return _reduction_fix(node, ancestors, ctx, node.value, node.slice, row_semantics=True)


def _fix_masked_select(node, ancestors, ctx):
    """DYN104: ``masked_select(x, m)`` feeding a full reduction.

    masked_select broadcasts x and m together, exactly as torch.where does, so no
    mask-rank question arises here."""
    if ctx.torch_alias is None or not isinstance(node, ast.Call):
        return None
    operands = _masked_select_operands(node, ctx)
    if operands is None:
        return None
    x, m = operands
    return _reduction_fix(node, ancestors, ctx, x, m, row_semantics=False)


def _fix_nonzero(node, ancestors, ctx):
    """DYN102: a count of nonzeros, or indices that only select values to sum."""
    if ctx.torch_alias is None or not isinstance(node, ast.Call) or not ancestors:
        return None
    parent = ancestors[-1]
    if isinstance(parent, ast.Subscript) and parent.slice is node:
        return _index_by_nonzero_fix(node, ancestors, ctx)
    return _count_fix(node, ancestors, ctx)


def _reduction_fix(masked, ancestors, ctx, x, m, *, row_semantics):
    reduction = _enclosing_reduction(masked, ancestors, ctx)
    if reduction is None:
        return None
    name, replaced, replaced_index = reduction
    torch = ctx.torch_alias
    pure = _pure(x, ctx) and _pure(m, ctx)
    same_shape = _derived_from(m, x, ctx, allow_reductions=False)
    mask, exact_rank, mask_is_primary = _mask_text(x, m, ctx, row_semantics)
    x_text = _arg(ctx, x)
    if name == _SUM:
        content = f"{torch}.where({mask}, {x_text}, 0).sum()"
        safe = exact_rank and pure
        message = f"Replace with `{torch}.where(mask, x, 0).sum()` (static shape)"
    elif name == _MEAN:
        if same_shape:
            count = f"{_primary(ctx, m)}.sum()"
        elif row_semantics and exact_rank:
            count = f"{mask}.expand_as({_primary(ctx, x)}).sum()"
        else:
            return None  # masked_select broadcasts m and x: m.sum() would miscount
        content = f"{torch}.where({mask}, {x_text}, 0).sum() / {count}"
        content = _parenthesize(content, ancestors[replaced_index - 1] if replaced_index else None, replaced)
        safe = False  # int inputs: the original raises, the rewrite returns a float; float16 sums can overflow
        message = "Replace with a masked sum divided by the mask count (unsafe: integer inputs no longer raise)"
    else:
        if not (exact_rank and _is_simple(x) and (row_semantics or same_shape)):
            return None  # the dtype-extreme expression repeats x; masked_fill cannot grow x
        inverted = f"~{mask}" if mask_is_primary else f"~{_primary(ctx, m)}"
        fill = _extreme_fill(torch, _primary(ctx, x), lowest=name in _MAX_LIKE)
        content = f"{_primary(ctx, x)}.masked_fill({inverted}, {fill}).{name}()"
        safe = False  # an empty mask raises in the original and returns the fill value here
        message = f"Replace with `x.masked_fill(~mask, <dtype extreme>).{name}()` (unsafe: an empty mask no longer raises)"
    if _has_comment(ctx.segment(replaced)):
        return None
    return Fix(SAFE if safe else UNSAFE, message, (_replace(ctx, replaced, content),))


def _masked_product(node, ancestors, ctx):
    """``(a[k] OP b[k]).sum()`` for OP in ``*``, ``+``, ``-``.

    ``*`` -> ``(torch.where(k, a, 0) * torch.where(k, b, 0)).sum()``: one where per
    factor, because ``torch.where(k, a * b, 0)`` gives NaN gradients when a partner
    value outside the mask is inf/NaN (measured).  ``+``/``-`` ->
    ``torch.where(k, a OP b, 0).sum()``: the operator runs on the operands' own
    dtypes (bool + bool is a logical or, bool - bool raises, int32 wraps), which a
    where per factor would not keep (``where(k, bool, 0)`` is int64), and its
    gradient does not depend on the partner.  Either is exact only when ``a`` and
    ``b`` provably have the same shape: with an (N, 1) and an (N,) factor the
    selections broadcast to (K, K), the rewrite to (N, N) (measured)."""
    if not ancestors or not isinstance(ancestors[-1], ast.BinOp):
        return None
    product = ancestors[-1]
    if not isinstance(product.op, _PRODUCT_OPS):
        return None
    left, right = product.left, product.right
    if not (isinstance(left, ast.Subscript) and isinstance(right, ast.Subscript)):
        return None
    if _dump(left.slice) != _dump(right.slice) or isinstance(left.slice, (ast.Tuple, ast.Slice, ast.Starred)):
        return None
    reduction = _enclosing_reduction(product, ancestors[:-1], ctx)
    if reduction is None or reduction[0] != _SUM:
        return None
    _, replaced, _ = reduction
    if _has_comment(ctx.segment(replaced)):
        return None
    torch = ctx.torch_alias
    m, a, b = left.slice, left.value, right.value
    same_shape = _same_shape(a, b, ctx)
    exact = _pure(m, ctx) and _pure(a, ctx) and _pure(b, ctx) and same_shape
    if same_shape:  # one mask for both, aligned with whichever factor allows it
        aligned = [_mask_text(x, m, ctx, row_semantics=True)[:2] for x in (a, b)]
        masks = [next((text for text, exact_rank in aligned if exact_rank), aligned[0][0])] * 2
        exact = exact and any(exact_rank for _, exact_rank in aligned)
    else:
        masks = [_mask_text(x, m, ctx, row_semantics=True)[0] for x in (a, b)]
    operator = {ast.Add: "+", ast.Sub: "-", ast.Mult: "*"}[type(product.op)]
    if operator == "*":
        terms = [f"{torch}.where({mask}, {_arg(ctx, x)}, 0)" for mask, x in zip(masks, (a, b))]
        content = f"({terms[0]} * {terms[1]}).sum()"
        message = f"Replace with `({torch}.where(k, a, 0) * {torch}.where(k, b, 0)).sum()` (static shape)"
    else:  # a and b have one shape: the mask aligned with a is aligned with a OP b
        mask = masks[0]
        combined = f"{_primary(ctx, a)} {operator} {_primary(ctx, b)}"
        content = f"{torch}.where({mask}, {combined}, 0).sum()"
        message = f"Replace with `{torch}.where(k, a {operator} b, 0).sum()` (static shape)"
    if not exact:
        message += " (unsafe: the factors' shapes are not known to be equal, or an operand may have side effects)"
    return Fix(SAFE if exact else UNSAFE, message, (_replace(ctx, replaced, content),))


def _same_shape(a, b, ctx) -> bool:
    """Whether ``a`` and ``b`` provably have one shape: both are computed from one tensor
    by ops that keep its shape (casts, elementwise math, arithmetic with Python numbers)."""
    root_a, root_b = _shape_root(a, ctx), _shape_root(b, ctx)
    return root_a is not None and root_b is not None and _dump(root_a) == _dump(root_b)


def _shape_root(expr, ctx, depth: int = 0):
    if depth > 8:
        return None
    recurse = lambda e: _shape_root(e, ctx, depth + 1)  # noqa: E731
    if isinstance(expr, ast.Name):
        bound = ctx.binding(expr.id)
        return recurse(bound) if bound is not None else expr
    if isinstance(expr, ast.UnaryOp) and isinstance(expr.op, (ast.USub, ast.UAdd, ast.Invert)):
        return recurse(expr.operand)
    if isinstance(expr, ast.BinOp) and isinstance(expr.op, _ARITH_OPS):
        if _is_number(expr.right):
            return recurse(expr.left)
        if _is_number(expr.left):
            return recurse(expr.right)
        return expr
    if isinstance(expr, ast.Call) and isinstance(expr.func, ast.Attribute) and not expr.keywords:
        func = expr.func
        if isinstance(func.value, ast.Name) and func.value.id == ctx.torch_alias:
            if func.attr in _SHAPE_KEEPING_FUNCS and len(expr.args) == 1:
                return recurse(expr.args[0])
        elif func.attr in _SHAPE_KEEPING_METHODS and not expr.args:
            return recurse(func.value)
    return expr


def _is_number(node) -> bool:
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
        node = node.operand
    return isinstance(node, ast.Constant) and type(node.value) in (int, float, bool)


def _index_by_nonzero_fix(node, ancestors, ctx):
    """``x[torch.where(c)].sum()`` / ``x[c.nonzero(as_tuple=True)].sum()`` with c a boolean mask of x.

    Indexing with the index tuple of ``c`` equals ``x[c]``; the rewrite is proven
    only for masks computed elementwise from x itself."""
    condition = _index_tuple_condition(node, ctx)
    subscript = ancestors[-1]
    if condition is None or not _is_bool_mask(condition, ctx):
        return None
    if not _derived_from(condition, subscript.value, ctx, allow_reductions=False):
        return None
    reduction = _enclosing_reduction(subscript, ancestors[:-1], ctx)
    if reduction is None or reduction[0] != _SUM:
        return None
    _, replaced, _ = reduction
    if _has_comment(ctx.segment(replaced)):
        return None
    torch = ctx.torch_alias
    content = f"{torch}.where({_arg(ctx, condition)}, {_arg(ctx, subscript.value)}, 0).sum()"
    safe = _pure(condition, ctx) and _pure(subscript.value, ctx)
    return Fix(SAFE if safe else UNSAFE, f"Replace with `{torch}.where(mask, x, 0).sum()` (static shape)",
               (_replace(ctx, replaced, content),))


def _count_fix(node, ancestors, ctx):
    """``len(x.nonzero())`` / ``x.nonzero().shape[0]`` / ``.size(0)`` -> ``torch.count_nonzero(x)``."""
    x = _nonzero_operand(node, ctx)
    if x is None:
        return None
    parent = ancestors[-1]
    replaced = None
    if (isinstance(parent, ast.Call) and isinstance(parent.func, ast.Name) and parent.func.id == "len"
            and parent.args == [node] and not parent.keywords):
        replaced, depth = parent, 1
    elif isinstance(parent, ast.Attribute) and parent.value is node and len(ancestors) >= 2:
        outer = ancestors[-2]
        if (parent.attr == "shape" and isinstance(outer, ast.Subscript) and outer.value is parent
                and _is_int_constant(outer.slice, 0)):
            replaced, depth = outer, 2
        elif (parent.attr == "size" and isinstance(outer, ast.Call) and outer.func is parent
              and len(outer.args) == 1 and not outer.keywords and _is_int_constant(outer.args[0], 0)):
            replaced, depth = outer, 2
    if replaced is None or _has_comment(ctx.segment(replaced)):
        return None
    torch = ctx.torch_alias
    content = f"{torch}.count_nonzero({_arg(ctx, x)})"
    user = ancestors[-1 - depth] if len(ancestors) > depth else None
    safe = _count_flows_into_tensor_division(replaced, user, x, ctx)
    message = (f"Replace with `{torch}.count_nonzero(x)`"
               + ("" if safe else " (unsafe: a 0-d tensor instead of a Python int)"))
    return Fix(SAFE if safe else UNSAFE, message, (_replace(ctx, replaced, content),))


def _count_flows_into_tensor_division(count, user, x, ctx) -> bool:
    """True division with a tensor computed from x itself: the 0-d count gives the same
    value, dtype (true division always yields x's float dtype or the default float dtype)
    and device as the Python int did.  +, -, * are not: a 0-d int32 partner would
    promote to int64."""
    if not (isinstance(user, ast.BinOp) and isinstance(user.op, ast.Div)) or not _pure(x, ctx):
        return False
    other = user.right if user.left is count else user.left
    return _derived_from(other, x, ctx, allow_reductions=True) and _pure(other, ctx)


# --------------------------------------------------------------------------- DYN401 / DYN402 / DYN501
def _fix_dataloader(node, ancestors, ctx):
    """DYN401: add ``drop_last=True`` (unsafe: the last partial batch is dropped)."""
    if not isinstance(node, ast.Call):
        return None
    if any(isinstance(a, ast.Starred) for a in node.args) or any(k.arg is None for k in node.keywords):
        return None
    if len(node.args) > _DATALOADER_DROP_LAST_POSITION:
        return None  # drop_last given positionally
    message = "Add `drop_last=True` (unsafe: the last partial batch of each epoch is dropped)"
    for keyword in node.keywords:
        if keyword.arg == "drop_last":
            if not (isinstance(keyword.value, ast.Constant) and keyword.value.value is False):
                return None
            return Fix(UNSAFE, message, (_replace(ctx, keyword.value, "True"),))
    edit = _append_keyword(node, "drop_last=True", ctx)
    return Fix(UNSAFE, message, (edit,)) if edit is not None else None


def _fix_padding(node, ancestors, ctx):
    """DYN402: ``padding=True``/``"longest"`` -> ``"max_length"`` when max_length is given."""
    if not isinstance(node, ast.Call):
        return None
    keywords = {k.arg: k for k in node.keywords if k.arg is not None}
    padding = keywords.get("padding")
    if padding is None or "max_length" not in keywords:
        return None
    value = padding.value
    if not (isinstance(value, ast.Constant) and (value.value is True or value.value == "longest")):
        return None
    quote = "'" if ctx.segment(value).startswith("'") else '"'
    return Fix(UNSAFE, 'Use `padding="max_length"` (unsafe: every batch is padded to max_length, more compute)',
               (_replace(ctx, value, f"{quote}max_length{quote}"),))


def _fix_compile_dynamic(node, ancestors, ctx):
    """DYN501: remove ``dynamic=True`` (unsafe: compiles static first, then recompiles dynamic)."""
    if not isinstance(node, ast.Call):
        return None
    keyword = next((k for k in node.keywords if k.arg == "dynamic"), None)
    if keyword is None or not (isinstance(keyword.value, ast.Constant) and keyword.value.value is True):
        return None
    edit = _remove_argument(node, keyword, ctx)
    if edit is None:
        return None
    return Fix(UNSAFE, "Remove `dynamic=True` (unsafe: changes what gets compiled; mark varying "
               "dimensions with torch._dynamo.mark_dynamic)", (edit,))


# --------------------------------------------------------------------------- reductions and operands
def _enclosing_reduction(expr, ancestors, ctx):
    """(name, replaced node, index of replaced in ancestors) when ``expr`` is fully reduced:
    ``expr.sum()`` or ``torch.sum(expr)`` with no other arguments."""
    if not ancestors:
        return None
    parent = ancestors[-1]
    if (isinstance(parent, ast.Attribute) and parent.value is expr and parent.attr in _REDUCTIONS
            and len(ancestors) >= 2):
        call = ancestors[-2]
        if isinstance(call, ast.Call) and call.func is parent and not call.args and not call.keywords:
            return parent.attr, call, len(ancestors) - 2
    if (isinstance(parent, ast.Call) and parent.args == [expr] and not parent.keywords
            and isinstance(parent.func, ast.Attribute) and parent.func.attr in _REDUCTIONS
            and isinstance(parent.func.value, ast.Name) and parent.func.value.id == ctx.torch_alias):
        return parent.func.attr, parent, len(ancestors) - 1
    return None


def _masked_select_operands(call, ctx):
    keywords = {k.arg: k.value for k in call.keywords}
    if None in keywords or any(isinstance(a, ast.Starred) for a in call.args):
        return None
    func = call.func
    is_function = isinstance(func, ast.Name) or (
        isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name) and func.value.id == ctx.torch_alias)
    if is_function:
        args = list(call.args) + [keywords.pop(name) for name in ("input", "mask") if name in keywords]
        if keywords or len(args) != 2:
            return None
        return args[0], args[1]
    if isinstance(func, ast.Attribute) and func.attr == "masked_select":
        if isinstance(func.value, ast.Attribute) and func.value.attr == "Tensor":
            return None  # torch.Tensor.masked_select(x, m): rare; not rewritten
        args = list(call.args) + ([keywords.pop("mask")] if "mask" in keywords else [])
        if keywords or len(args) != 1:
            return None
        return func.value, args[0]
    return None


def _nonzero_operand(call, ctx):
    """x of ``torch.nonzero(x)``, ``x.nonzero()``, ``torch.argwhere(x)``, ``x.argwhere()``."""
    func = call.func
    for keyword in call.keywords:
        if keyword.arg != "as_tuple" or not (isinstance(keyword.value, ast.Constant) and keyword.value.value is False):
            return None
    if any(isinstance(a, ast.Starred) for a in call.args):
        return None
    name = func.id if isinstance(func, ast.Name) else func.attr if isinstance(func, ast.Attribute) else None
    if name not in ("nonzero", "argwhere"):
        return None
    if isinstance(func, ast.Name) or (isinstance(func.value, ast.Name) and func.value.id == ctx.torch_alias):
        return call.args[0] if len(call.args) == 1 else None
    return func.value if not call.args else None


def _index_tuple_condition(call, ctx):
    """c of ``torch.where(c)``, ``c.nonzero(as_tuple=True)``, ``torch.nonzero(c, as_tuple=True)``."""
    func = call.func
    name = func.id if isinstance(func, ast.Name) else func.attr if isinstance(func, ast.Attribute) else None
    is_function = isinstance(func, ast.Name) or (isinstance(func.value, ast.Name) and func.value.id == ctx.torch_alias)
    if name == "where" and is_function and len(call.args) == 1 and not call.keywords:
        return call.args[0]
    if name == "nonzero" and len(call.keywords) == 1 and call.keywords[0].arg == "as_tuple":
        flag = call.keywords[0].value
        if not (isinstance(flag, ast.Constant) and flag.value is True):
            return None
        if is_function:
            return call.args[0] if len(call.args) == 1 else None
        return func.value if not call.args else None
    return None


# --------------------------------------------------------------------------- masks
def _mask_text(x, m, ctx, row_semantics):
    """(mask source, exact, is a primary): the mask as torch.where needs it for ``x[m]``.

    ``x[m]`` aligns m with x's *leading* dims, torch.where broadcasts from the
    *right*: a row mask on a square matrix silently gives a different answer.  When
    m provably has x's shape it is used as is; when both are plain names, it is
    reshaped to x's rank with trailing singleton dims (exact for every valid mask
    rank); otherwise it is used as is and the fix is not exact."""
    if not row_semantics or _derived_from(m, x, ctx, allow_reductions=False):
        return _arg(ctx, m), True, False
    if _is_simple(m) and _is_simple(x):
        mp, xp = _primary(ctx, m), _primary(ctx, x)
        return f"{mp}.reshape({mp}.shape + (1,) * ({xp}.ndim - {mp}.ndim))", True, True
    return _arg(ctx, m), False, False


def _derived_from(expr, x, ctx, *, allow_reductions: bool, depth: int = 0) -> bool:
    """Whether ``expr`` is computed elementwise (broadcasting) from ``x`` itself.

    Broadcasting only grows shapes, so such a mask has x's shape whenever
    ``x[mask]`` is valid.  With ``allow_reductions``, full reductions of such
    values (0-d tensors on x's device) count too."""
    if depth > 8:
        return False
    if _dump(expr) == _dump(x):
        return True
    recurse = lambda e: _derived_from(e, x, ctx, allow_reductions=allow_reductions, depth=depth + 1)  # noqa: E731
    if isinstance(expr, ast.Name):
        bound = ctx.binding(expr.id)
        return bound is not None and recurse(bound)
    if isinstance(expr, ast.Compare):
        return all(isinstance(op, _COMPARE_OPS) for op in expr.ops) and any(
            recurse(e) for e in [expr.left, *expr.comparators])
    if isinstance(expr, ast.BinOp):
        return isinstance(expr.op, _ARITH_OPS) and (recurse(expr.left) or recurse(expr.right))
    if isinstance(expr, ast.UnaryOp):
        return isinstance(expr.op, (ast.Invert, ast.USub, ast.UAdd)) and recurse(expr.operand)
    if isinstance(expr, ast.Call) and not any(isinstance(a, ast.Starred) for a in expr.args):
        func = expr.func
        if not isinstance(func, ast.Attribute):
            return False
        if isinstance(func.value, ast.Name) and func.value.id == ctx.torch_alias:
            if func.attr in _ELEMENTWISE_FUNCS and not expr.keywords:
                return any(recurse(a) for a in expr.args)
            return False
        if func.attr in _ELEMENTWISE_METHODS and not expr.keywords:
            return recurse(func.value) or any(recurse(a) for a in expr.args)
        if allow_reductions and func.attr in _REDUCTION_METHODS and not expr.args and not expr.keywords:
            return recurse(func.value)
    return False


def _is_bool_mask(expr, ctx, depth: int = 0) -> bool:
    if depth > 8:
        return False
    if ctx.kind(expr) == "mask":
        return True
    recurse = lambda e: _is_bool_mask(e, ctx, depth + 1)  # noqa: E731
    if isinstance(expr, ast.Compare):
        return all(isinstance(op, _COMPARE_OPS) for op in expr.ops)
    if isinstance(expr, ast.UnaryOp) and isinstance(expr.op, ast.Invert):
        return recurse(expr.operand)
    if isinstance(expr, ast.BinOp) and isinstance(expr.op, (ast.BitAnd, ast.BitOr, ast.BitXor)):
        return recurse(expr.left) and recurse(expr.right)
    if isinstance(expr, ast.Call) and isinstance(expr.func, ast.Attribute):
        func = expr.func
        if isinstance(func.value, ast.Name) and func.value.id == ctx.torch_alias:
            return func.attr in _BOOL_FUNCS
        return func.attr in _BOOL_METHODS
    if isinstance(expr, ast.Name):
        bound = ctx.binding(expr.id)
        return bound is not None and recurse(bound)
    return False


def _pure(expr, ctx, depth: int = 0) -> bool:
    """No side effects and no dependence on evaluation order: names, constants,
    attribute/subscript reads and elementwise torch ops of such."""
    if depth > 16:
        return False
    recurse = lambda e: _pure(e, ctx, depth + 1)  # noqa: E731
    if isinstance(expr, (ast.Name, ast.Constant)):
        return True
    if isinstance(expr, ast.Attribute):
        return recurse(expr.value)
    if isinstance(expr, ast.Subscript):
        return recurse(expr.value) and recurse(expr.slice)
    if isinstance(expr, ast.Slice):
        return all(part is None or recurse(part) for part in (expr.lower, expr.upper, expr.step))
    if isinstance(expr, ast.Tuple):
        return all(recurse(e) for e in expr.elts)
    if isinstance(expr, ast.Compare):
        return recurse(expr.left) and all(recurse(e) for e in expr.comparators)
    if isinstance(expr, ast.BinOp):
        return recurse(expr.left) and recurse(expr.right)
    if isinstance(expr, ast.UnaryOp):
        return recurse(expr.operand)
    if isinstance(expr, ast.Call) and isinstance(expr.func, ast.Attribute):
        func = expr.func
        if any(isinstance(a, ast.Starred) for a in expr.args) \
                or any(k.arg in (None, "out", "inplace") for k in expr.keywords):
            return False  # unknown arguments, or a write
        arguments = [*expr.args, *(k.value for k in expr.keywords)]
        if isinstance(func.value, ast.Name) and func.value.id == ctx.torch_alias:
            known = func.attr in _ELEMENTWISE_FUNCS and not expr.keywords
        elif func.attr in PURE_TENSOR_METHODS and ctx.kind(func.value) in _TENSOR_KINDS:
            known = recurse(func.value)  # a tensor's method with no side effect (ops.PURE_TENSOR_METHODS)
        else:
            known = (func.attr in _ELEMENTWISE_METHODS or func.attr in _REDUCTION_METHODS) and not expr.keywords \
                and recurse(func.value)
        return known and all(recurse(a) for a in arguments)
    return False


def _is_simple(expr) -> bool:
    """A name or attribute chain: cheap and side-effect-free to repeat."""
    while isinstance(expr, ast.Attribute):
        expr = expr.value
    return isinstance(expr, ast.Name)


def _extreme_fill(torch: str, x: str, *, lowest: bool) -> str:
    """The identity of max (lowest) or min (highest) for x's dtype, exact for every dtype:
    ±inf for floating point (finfo.min would beat an all -inf selection), iinfo for
    integers, False/True for bool (iinfo rejects bool)."""
    if lowest:
        return (f"-{torch}.inf if {x}.is_floating_point() else "
                f"({torch}.iinfo({x}.dtype).min if {x}.dtype != {torch}.bool else False)")
    return (f"{torch}.inf if {x}.is_floating_point() else "
            f"({torch}.iinfo({x}.dtype).max if {x}.dtype != {torch}.bool else True)")


# --------------------------------------------------------------------------- text helpers
def _dump(node) -> str:
    return ast.dump(node)


def _is_int_constant(node, value: int) -> bool:
    return isinstance(node, ast.Constant) and type(node.value) is int and node.value == value


_PRIMARY = (ast.Name, ast.Attribute, ast.Subscript, ast.Call, ast.Constant, ast.List, ast.Tuple,
            ast.Dict, ast.Set, ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp, ast.JoinedStr)


def _primary(ctx, node) -> str:
    """Source of node, parenthesized unless it is a primary (safe before ``.attr``)."""
    text = ctx.segment(node)
    if isinstance(node, ast.Constant) and isinstance(node.value, (int, float)):
        return f"({text})"  # 1.real vs (1).real
    if isinstance(node, ast.Tuple) and not text.startswith("("):
        return f"({text})"
    return text if isinstance(node, _PRIMARY) else f"({text})"


def _arg(ctx, node) -> str:
    """Source of node as a call argument."""
    text = ctx.segment(node)
    if isinstance(node, (ast.NamedExpr, ast.Starred, ast.Yield, ast.YieldFrom)) or (
            isinstance(node, ast.Tuple) and not text.startswith("(")):
        return f"({text})"
    return text


def _parenthesize(content: str, parent, replaced) -> str:
    """Wrap a non-primary replacement whose parent is an operator or attribute access."""
    if parent is None or isinstance(parent, _OPEN_CONTEXTS):
        return content
    if isinstance(parent, ast.Call) and parent.func is not replaced:
        return content
    return f"({content})"


def _has_comment(text: str) -> bool:
    """A comment inside the replaced range would be lost: no fix then."""
    if "#" not in text:
        return False
    try:
        tokens = list(tokenize.generate_tokens(io.StringIO(f"({text})").readline))
    except (tokenize.TokenError, SyntaxError, IndentationError):
        return True
    return any(t.type == tokenize.COMMENT for t in tokens)


def _replace(ctx, node, content: str) -> Edit:
    line, col, end_line, end_col = ctx.position(node)
    return Edit(line, col, end_line, end_col, content)


class _Source:
    """A node's source text with conversions between absolute (line, col) and offsets in it."""

    def __init__(self, ctx, node):
        self.text = ctx.segment(node)
        self.line, self.col, _, _ = ctx.position(node)
        self.starts = [0] + [m.end() for m in LINE_BREAK_RE.finditer(self.text)]

    def offset(self, line: int, col: int) -> int:
        row = line - self.line
        return col - self.col if row == 0 else self.starts[row] + col

    def position(self, offset: int) -> tuple[int, int]:
        row = max(i for i, start in enumerate(self.starts) if start <= offset)
        col = offset - self.starts[row] + (self.col if row == 0 else 0)
        return self.line + row, col

    def edit(self, start: int, end: int, content: str) -> Edit:
        return Edit(*self.position(start), *self.position(end), content)


def _arguments_in_order(call):
    return sorted([*call.args, *call.keywords], key=lambda n: (n.lineno, n.col_offset))


def _scan_separator(tail: str) -> tuple[int, bool]:
    """In the text after an argument (whitespace, comments, at most a comma): the
    index of the comma (-1 if none) and whether a line break comes before it."""
    index, broke = 0, False
    while index < len(tail):
        char = tail[index]
        if char == ",":
            return index, broke
        if char == "#":
            match = LINE_BREAK_RE.search(tail, index)
            index = match.start() if match else len(tail)
            continue
        if char in "\r\n":
            broke = True
        index += 1
    return -1, broke


def _append_keyword(call, keyword_text: str, ctx) -> Edit | None:
    """Insert ``keyword_text`` as the call's last argument, in the call's own layout:
    one argument per line stays one per line, a trailing comma stays, a comment
    after the last argument stays on its line."""
    arguments = _arguments_in_order(call)
    if not arguments:
        return None
    source = _Source(ctx, call)
    last = arguments[-1]
    last_line, _, end_line, end_col = ctx.position(last)
    last_end = source.offset(end_line, end_col)
    tail = source.text[last_end:-1]  # between the last argument and the closing parenthesis
    comma, comma_after_break = _scan_separator(tail)
    has_comma = comma >= 0 and not comma_after_break
    multi_line = LINE_BREAK_RE.search(tail) is not None and last_line > source.line
    if multi_line:
        line_start = source.starts[last_line - source.line]
        indent = re.match(r"[ \t]*", source.text[line_start:]).group(0)
        if has_comma:  # after the comma and any comment on that line
            at = last_end + LINE_BREAK_RE.search(tail, comma).start()
            return source.edit(at, at, f"\n{indent}{keyword_text},")
        if "#" not in tail.split("\n")[0].split("\r")[0]:
            return source.edit(last_end, last_end, f",\n{indent}{keyword_text}")
    if has_comma:
        at = last_end + comma + 1
        return source.edit(at, at, f" {keyword_text},")
    return source.edit(last_end, last_end, f", {keyword_text}")


def _remove_argument(call, argument, ctx) -> Edit | None:
    """Remove one argument with its separating comma, keeping the rest of the layout."""
    arguments = _arguments_in_order(call)
    index = arguments.index(argument)
    source = _Source(ctx, call)
    start_line, start_col, end_line, end_col = ctx.position(argument)
    start, end = source.offset(start_line, start_col), source.offset(end_line, end_col)
    if start_line > source.line:  # alone on its line(s), maybe with a trailing comma: drop the lines
        line_start = source.starts[start_line - source.line]
        after = LINE_BREAK_RE.search(source.text, end)
        if after is not None and not source.text[line_start:start].strip() \
                and source.text[end:after.start()].strip() in ("", ","):
            return source.edit(line_start, after.end(), "")
    if index + 1 < len(arguments):  # drop "argument, " up to the next argument
        end = source.offset(*ctx.position(arguments[index + 1])[:2])
    elif index > 0:  # the last one: drop ", argument" back to the previous argument
        start = source.offset(*ctx.position(arguments[index - 1])[2:])
    else:  # the only one: drop it and a trailing comma
        comma, _ = _scan_separator(source.text[end:-1])
        if comma >= 0:
            end += comma + 1
    if _has_comment(source.text[start:end]):
        return None
    return source.edit(start, end, "")


_BUILDERS = {
    "DYN101": _fix_mask_index,
    "DYN102": _fix_nonzero,
    "DYN104": _fix_masked_select,
    "DYN401": _fix_dataloader,
    "DYN402": _fix_padding,
    "DYN501": _fix_compile_dynamic,
}


# The builders by name, for the rule units that own them (dynlint.checks).
fix_mask_index = _fix_mask_index
fix_nonzero = _fix_nonzero
fix_masked_select = _fix_masked_select
fix_dataloader = _fix_dataloader
fix_padding = _fix_padding
fix_compile_dynamic = _fix_compile_dynamic
