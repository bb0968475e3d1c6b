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

The masked reductions share one core.  A *selection* is ``x[m]`` (any mask
rank), ``masked_select(x, m)``, indexing by ``torch.where(c)`` /
``c.nonzero(as_tuple=True)``, or a row index of a 1-D mask
(``torch.where(c)[0]``, ``c.nonzero().squeeze(1)``...) used by ``x[...]``,
``index_select(x, 0, ...)`` or ``gather(x, 0, ...)``.  A *term* is a selection
under linear elementwise wrappers (casts, ``-``, ``+ - *`` with a number,
``/`` by a number), whose derivative is finite everywhere, so a ``where``
around them keeps gradients exact.  The reduced expression is one term, a
``+``/``-`` tree of terms or a ``*`` tree of terms over one mask; the emitted
static form keeps every operation on the operands' own dtypes.  Dynamic spans
(``dynlint.fixspans``) feed the same core with the bindings of a function
inlined.

The emitted code is plain PyTorch spelled with the file's own torch alias; the
mask is aligned to the selected tensor in the plainest form the shape facts
(``dynlint.analysis.shapes``) prove: ``m``, ``m.unsqueeze(-1)``, ``m[..., None, None]``,
or the rank-generic ``m.reshape(m.shape + (1,) * (x.ndim - m.ndim))``.
"""

from __future__ import annotations

import ast
import io
import math
import re
import tokenize
from dataclasses import dataclass

from dynlint.source import LINE_BREAK_RE
from dynlint.analysis.shapes import Shapes
from dynlint.diagnostics import Applicability, Edit, Fix
from dynlint.fixcontext import FixContext
from dynlint.ops import PURE_TENSOR_METHODS

SAFE = Applicability.SAFE
UNSAFE = Applicability.UNSAFE


# Full reductions a masked value can feed.
_SUM_LIKE = frozenset({"sum", "nansum"})
_MEAN = "mean"
_MAX_LIKE = frozenset({"max", "amax"})
_MIN_LIKE = frozenset({"min", "amin"})
_REDUCTIONS = _SUM_LIKE | {_MEAN} | _MAX_LIKE | _MIN_LIKE

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
# Casts: linear wrappers of a selection (their derivative is 1 or none).
_CASTS = frozenset({"float", "double", "half", "bfloat16", "int", "long", "short", "bool"})
# Full reductions: 0-d tensors on x's device (for "flows into tensor arithmetic").
_REDUCTION_METHODS = frozenset({"sum", "mean", "amax", "amin", "max", "min", "prod", "nansum", "nanmean"})
_TENSOR_KINDS = frozenset({"tensor", "mask", "scalar_tensor"})
_COMPARE_OPS = (ast.Lt, ast.Gt, ast.LtE, ast.GtE, ast.Eq, ast.NotEq)
_ARITH_OPS = (ast.Add, ast.Sub, ast.Mult, ast.Div, ast.FloorDiv, ast.Mod, ast.Pow,
              ast.BitAnd, ast.BitOr, ast.BitXor)
_OPERATOR_TEXT = {ast.Add: "+", ast.Sub: "-", ast.Mult: "*", ast.Div: "/"}
_UNARY_TEXT = {ast.USub: "-", ast.UAdd: "+", ast.Invert: "~"}
_PRECEDENCE = {ast.Add: 1, ast.Sub: 1, ast.Mult: 2, ast.Div: 2}

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
    """DYN101: ``x[m]`` feeding a reduction or a count, ``x[m] = y[m]``, or the start of a span."""
    if ctx.torch_alias is None or not isinstance(node, ast.Subscript):
        return None
    if _leaf(node, ctx) is None:
        return None
    return _fix_selection(node, ancestors, ctx) or _fix_masked_copy(node, ancestors, ctx) \
        or _span(node, ancestors, ctx)


def _fix_masked_select(node, ancestors, ctx):
    """DYN104: ``masked_select(x, m)`` feeding a reduction or a count, or the start of a span.

    masked_select broadcasts x and m together, exactly as torch.where does, so no
    mask-rank question arises here."""
    if ctx.torch_alias is None or not isinstance(node, ast.Call) or _leaf(node, ctx) is None:
        return None
    return _fix_selection(node, ancestors, ctx) or _span(node, ancestors, ctx)


def _fix_nonzero(node, ancestors, ctx):
    """DYN102: a count of nonzeros, indices that only select values to reduce, or the start of a span."""
    if ctx.torch_alias is None or not isinstance(node, ast.Call) or not ancestors:
        return None
    for depth in range(1, min(4, len(ancestors)) + 1):  # the selection this index is part of
        candidate = ancestors[-depth]
        leaf = _leaf(candidate, ctx)
        if leaf is not None and leaf.index is not None and any(sub is node for sub in ast.walk(leaf.index)):
            return _fix_selection(candidate, ancestors[:-depth], ctx)
    return _count_fix(node, ancestors, ctx) or _span(node, ancestors, ctx)


def _span(node, ancestors, ctx):
    from dynlint import fixspans  # noqa: PLC0415 - the span search is only needed when no local fix applies

    return fixspans.span_fix(node, ancestors, ctx)


# --------------------------------------------------------------------------- selections and terms
@dataclass
class _Leaf:
    """A selection: the elements of ``x`` where the boolean mask ``m`` holds."""

    node: ast.expr          # the selecting expression
    x: ast.expr
    m: ast.expr
    row: bool               # x[m]: m aligned with x's leading dims; False: masked_select (broadcast together)
    exact: bool             # equals x[m] for every valid input (False: e.g. a row index of a mask of unknown rank)
    index: ast.expr | None = None  # the index expression replaced by the mask (where(c), c.nonzero()[:, 0]...)
    gather: bool = False    # gather(x, 0, idx): raises unless x is 1-D
    rows: bool = False      # the index lists rows of a mask (torch.where(c)[0]...): x[c] only for a 1-D c


def _leaf(expr, ctx) -> _Leaf | None:
    shapes = Shapes(ctx)
    if isinstance(expr, ast.Subscript):
        index = expr.slice
        if isinstance(index, (ast.Tuple, ast.Slice, ast.Starred)):
            return None
        if _is_bool_mask(index, ctx):
            return _Leaf(expr, expr.value, index, row=True, exact=True)
        condition = _index_tuple_condition(index, ctx) if isinstance(index, ast.Call) else None
        if condition is not None and _is_bool_mask(condition, ctx):
            # x[where(c)] is x[c] only when c has x's (leading) shape: unlike x[c], it does not
            # check, and a c of another shape whose true positions fit x selects without an error
            return _Leaf(expr, expr.value, condition, True, shapes.has_shape_of(condition, expr.value), index)
        condition = _row_index_condition(index, ctx)
        if condition is not None:
            return _Leaf(expr, expr.value, condition, True, _rows_exact(condition, expr.value, shapes), index,
                         rows=True)
        return None
    if isinstance(expr, ast.Call):
        operands = _masked_select_operands(expr, ctx)
        if operands is not None:
            return _Leaf(expr, operands[0], operands[1], row=False, exact=True)
        selected = _index_select_operands(expr, ctx)
        if selected is not None:
            x, index, gather = selected
            condition = _row_index_condition(index, ctx)
            if condition is None:
                return None
            return _Leaf(expr, x, condition, True, _rows_exact(condition, x, shapes), index, gather, rows=True)
    return None


def _rows_exact(condition, x, shapes) -> bool:
    """Selecting rows of x by the true positions of c is x[c] when c is 1-D *and* as long as x
    (a longer c whose true positions fit x selects without an error): both proven only when c
    has x's shape, x then 1-D too."""
    return shapes.rank(condition) == 1 and shapes.has_shape_of(condition, x)


@dataclass
class _Term:
    """A selection under linear elementwise wrappers: ``leaf`` inside ``node``."""

    node: ast.expr
    leaf: _Leaf

    def full(self, ctx) -> tuple[str, int]:
        """(text, precedence) of the term computed on the whole tensor (the selection replaced by x)."""
        return _render(self.node, ctx, {id(self.leaf.node): _source(ctx, self.leaf.x)})


def _term(expr, ctx, variables: bool = False) -> _Term | None:
    inner = expr
    for _ in range(16):
        leaf = _leaf(inner, ctx)
        if leaf is not None:
            return _Term(expr, leaf)
        inner = _linear_operand(inner, ctx, variables)
        if inner is None:
            return None
    return None


def _linear_operand(expr, ctx, variables: bool = False):
    """The tensor operand of a linear elementwise wrapper, or None: ``-e``, ``e * 2``, ``e / 2``,
    ``1 - e``, ``e.float()``, ``e.to(torch.float32)``.  Their derivative is finite everywhere,
    so ``where(m, f(x), 0)`` has the gradient of ``f(x[m])`` (a nonlinear f would give NaN
    gradients where f' is infinite outside the mask).  With ``variables``, a Python number held
    in a variable (``scale * e``) counts too: its value may be inf or NaN (only for fixes that are
    unsafe anyway)."""
    number = (lambda n, nonzero=False: _finite_number(n, nonzero) or _python_number(n, ctx)) if variables \
        else _finite_number
    if isinstance(expr, ast.UnaryOp) and type(expr.op) in _UNARY_TEXT:
        return expr.operand
    if isinstance(expr, ast.BinOp) and type(expr.op) in _OPERATOR_TEXT:
        if isinstance(expr.op, ast.Div):
            return expr.left if number(expr.right, nonzero=True) else None
        if number(expr.right):
            return expr.left
        if number(expr.left):
            return expr.right
        return None
    if isinstance(expr, ast.Call) and isinstance(expr.func, ast.Attribute) and not expr.keywords:
        func = expr.func
        if func.attr in _CASTS and not expr.args:
            return func.value
        if func.attr == "to" and len(expr.args) == 1 and _is_torch_attribute(expr.args[0], ctx):
            return func.value
    return None


def _python_number(node, ctx) -> bool:
    """A name or attribute read of a plain Python value (a float parameter, ``self.scale``...)."""
    return isinstance(node, (ast.Name, ast.Attribute)) and _is_simple(node) and ctx.kind(node) == "py"


def _finite_number(node, nonzero: bool = False) -> bool:
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
        node = node.operand
    if not (isinstance(node, ast.Constant) and type(node.value) in (int, float)):
        return False
    return math.isfinite(node.value) and (node.value != 0 or not nonzero)


def _is_torch_attribute(node, ctx) -> bool:
    return isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == ctx.torch_alias


def _render(node, ctx, replacements):
    """(text, precedence) of ``node`` with the nodes in ``replacements`` (id -> (text,
    precedence)) replaced, composed structurally: the parts may come from different
    statements (see dynlint.fixspans).  Precedence: 9 a primary, 3 unary, 2 ``* /``,
    1 ``+ -``, 0 anything else."""
    if id(node) in replacements:
        return replacements[id(node)]
    if isinstance(node, ast.UnaryOp) and type(node.op) in _UNARY_TEXT:
        text, precedence = _render(node.operand, ctx, replacements)
        return f"{_UNARY_TEXT[type(node.op)]}{text if precedence >= 3 else f'({text})'}", 3
    if isinstance(node, ast.BinOp) and type(node.op) in _PRECEDENCE:
        own = _PRECEDENCE[type(node.op)]
        left, left_precedence = _render(node.left, ctx, replacements)
        right, right_precedence = _render(node.right, ctx, replacements)
        left = left if left_precedence >= own else f"({left})"
        right = right if right_precedence > own else f"({right})"
        return f"{left} {_OPERATOR_TEXT[type(node.op)]} {right}", own
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and not node.keywords \
            and any(id(sub) in replacements for sub in ast.walk(node.func.value)):
        text, precedence = _render(node.func.value, ctx, replacements)
        arguments = ", ".join(ctx.segment(a) for a in node.args)
        return f"{text if precedence >= 9 else f'({text})'}.{node.func.attr}({arguments})", 9
    return _source(ctx, node)


def _source(ctx, node):
    """(text, precedence) of a node as written (a number needs parentheses only before ``.attr``)."""
    if isinstance(node, ast.Constant) and type(node.value) in (int, float):
        return ctx.segment(node), 8
    primary = _primary(ctx, node)
    text = ctx.segment(node)
    if primary == text:
        return text, 9
    return _arg(ctx, node), 0


def _combination(expr, ctx, variables: bool = False):
    """("term", [t]) for one term; ("sum", [t...]) for a ``+``/``-`` tree of terms; ("product",
    [t...]) for a ``*`` tree of terms; else None."""
    term = _term(expr, ctx, variables)
    if term is not None:
        return "term", [term]
    for kind, operators in (("sum", (ast.Add, ast.Sub)), ("product", (ast.Mult,))):
        terms = _tree_terms(expr, operators, ctx, variables)
        if terms is not None and len(terms) >= 2:
            return kind, terms
    return None


def _tree_terms(expr, operators, ctx, variables: bool = False):
    term = _term(expr, ctx, variables)
    if term is not None:
        return [term]
    if isinstance(expr, ast.BinOp) and isinstance(expr.op, operators):
        left = _tree_terms(expr.left, operators, ctx, variables)
        right = _tree_terms(expr.right, operators, ctx, variables)
        if left is not None and right is not None:
            return left + right
    return None


# --------------------------------------------------------------------------- reductions
def _reduction(call, ctx):
    """(name, operand, dimension argument text or None) when ``call`` reduces one operand:
    ``e.sum()``, ``torch.sum(e)``, ``e.sum(0)``, ``e.sum(dim=0)``, ``torch.sum(e, 0)``."""
    if not isinstance(call, ast.Call) or not isinstance(call.func, ast.Attribute):
        return None
    func = call.func
    if func.attr not in _REDUCTIONS or any(isinstance(a, ast.Starred) for a in call.args):
        return None
    if isinstance(func.value, ast.Name) and func.value.id == ctx.torch_alias:
        if not call.args:
            return None
        operand, rest = call.args[0], call.args[1:]
    else:
        operand, rest = func.value, list(call.args)
    if not rest and not call.keywords:
        return func.attr, operand, None
    if func.attr in _SUM_LIKE:
        dims = rest + [k.value for k in call.keywords if k.arg == "dim"]
        if len(dims) == 1 and len(rest) + len(call.keywords) == 1 and _is_int_constant(dims[0], 0):
            keyword = next((k for k in call.keywords), None)
            return func.attr, operand, ("dim=0" if keyword is not None else "0")
    return None


def _fix_selection(node, ancestors, ctx):
    """A selection (``node``) that feeds, through linear wrappers and ``+ - *`` with other
    selections, the operand of a reduction; or that is counted."""
    child = node
    index = len(ancestors) - 1
    while index >= 0:
        parent = ancestors[index]
        if isinstance(parent, ast.Attribute) and parent.value is child and index >= 1 \
                and isinstance(ancestors[index - 1], ast.Call) and ancestors[index - 1].func is parent:
            call = ancestors[index - 1]
            reduction = _reduction(call, ctx)
            if reduction is not None and reduction[1] is child:
                return rewrite_reduction(call, call, ancestors[index - 2] if index >= 2 else None, ctx)
            if _linear_operand(call, ctx) is not child:
                break
            child, index = call, index - 2  # a cast: x[m].float()
            continue
        if isinstance(parent, ast.Call) and parent.args and parent.args[0] is child:
            reduction = _reduction(parent, ctx)
            if reduction is not None and reduction[1] is child:
                return rewrite_reduction(parent, parent, ancestors[index - 1] if index >= 1 else None, ctx)
            break
        if isinstance(parent, ast.UnaryOp) or (isinstance(parent, ast.BinOp) and type(parent.op) in _OPERATOR_TEXT):
            child, index = parent, index - 1
            continue
        break
    if child is node:
        return _count_of_selection(node, ancestors, ctx)
    return None


def rewrite_reduction(call, real, parent, ctx) -> Fix | None:
    """The static form of the reduction ``call`` of a masked combination.  ``real`` is the node of
    the source that is replaced (``call`` itself, or, in a span, the reduction whose names
    ``call`` has inlined: dynlint.fixspans); ``parent`` is real's parent."""
    reduction = _reduction(call, ctx)
    if reduction is None:
        return None
    name, operand, dim = reduction
    combination = _combination(operand, ctx)
    if combination is None or _has_comment(ctx.segment(real)):
        return None
    kind, terms = combination
    shapes = Shapes(ctx)
    torch = ctx.torch_alias
    if kind == "term":
        return _rewrite_term(name, dim, terms[0], real, parent, ctx, shapes)
    if dim is not None or name not in _SUM_LIKE or not all(t.leaf.row for t in terms):
        return None
    mask_dumps = {_dump(t.leaf.m) for t in terms}
    if len(mask_dumps) != 1:
        return None
    first = terms[0].leaf
    same_shape = all(shapes.same_shape(first.x, t.leaf.x) for t in terms[1:])
    pure = all(_pure(t.leaf.x, ctx) and _pure(t.leaf.m, ctx) for t in terms)
    aligned = [_mask_text(t.leaf, ctx, shapes) for t in terms]
    if None in aligned:
        return None
    if same_shape:  # one mask for all, aligned with whichever term allows it
        chosen = next((a for a in aligned if a.exact), aligned[0])
        aligned = [chosen] * len(terms)
    exact = same_shape and pure and all(a.exact for a in aligned) and all(t.leaf.exact for t in terms)
    if kind == "product" and len(terms) == 2:
        replacements = {id(t.node): (f"{torch}.where({a.text}, {_bare(t.full(ctx))}, 0)", 9)
                        for t, a in zip(terms, aligned)}
        body = _render(operand, ctx, replacements)[0]
        content = f"({body}).{name}()"
        message = f"Replace with `({torch}.where(k, a, 0) * {torch}.where(k, b, 0)).{name}()` (static shape)"
    elif kind == "product":
        # three or more factors: where(k, p, 0) makes a bool p int64, which changes the dtype of the
        # partial products and so their integer overflow (uint8 255 * True * 255 wraps to 1 in the
        # original); masked_fill keeps each factor's own dtype (found by the fix fuzzer)
        replacements = {id(t.node): (f"{_wrap(t.full(ctx))}.masked_fill({_inverted(a, t.leaf, ctx)}, 0)", 9)
                        for t, a in zip(terms, aligned)}
        body = _render(operand, ctx, replacements)[0]
        content = f"({body}).{name}()"
        message = f"Replace with `(a.masked_fill(~k, 0) * b.masked_fill(~k, 0) * ...).{name}()` (static shape)"
    else:  # one shape for all: the mask aligned with one term is aligned with the whole tree
        body = _render(operand, ctx, {id(t.node): t.full(ctx) for t in terms})[0]
        content = f"{torch}.where({aligned[0].text}, {body}, 0).{name}()"
        message = f"Replace with `{torch}.where(k, a + b, 0).{name}()` (static shape)"
    if not exact:
        message += " (unsafe: the terms' shapes are not known to be equal, a mask's rank is unknown, " \
                   "or an operand may have side effects)"
    return Fix(SAFE if exact else UNSAFE, message, (_replace(ctx, real, content),))


def _wrap(rendered) -> str:
    """A rendered expression before ``.attr``."""
    text, precedence = rendered
    return text if precedence >= 9 else f"({text})"


def _inverted(aligned, leaf, ctx) -> str:
    return f"~{aligned.text}" if aligned.aligned or _is_primary_text(ctx, leaf.m) else f"~({aligned.text})"


def _is_primary_text(ctx, node) -> bool:
    return _primary(ctx, node) == ctx.segment(node)


def _bare(rendered) -> str:
    """A rendered expression as a call argument."""
    return rendered[0]


def _rewrite_term(name, dim, term, real, parent, ctx, shapes):
    leaf = term.leaf
    x, m = leaf.x, leaf.m
    torch = ctx.torch_alias
    pure = _pure(x, ctx) and _pure(m, ctx)
    aligned = _mask_text(leaf, ctx, shapes)
    if aligned is None:
        return None
    full = _bare(term.full(ctx))
    plain = term.node is leaf.node
    exact = leaf.exact and aligned.exact and pure
    if name in _SUM_LIKE and dim is None:
        content = f"{torch}.where({aligned.text}, {full}, 0).{name}()"
        safe = exact
        message = f"Replace with `{torch}.where(mask, x, 0).{name}()` (static shape)"
    elif name in _SUM_LIKE:
        if not leaf.row:
            return None
        if shapes.has_shape_of(m, x):  # x[m] is 1-D: its sum over dim 0 is its sum
            content = f"{torch}.where({_arg(ctx, m)}, {full}, 0).{name}()"
        elif shapes.rank(m) == 1:  # a row mask: x[m] keeps x's other dims
            content = f"{torch}.where({aligned.text}, {full}, 0).{name}({dim})"
        else:
            return None
        safe = exact
        message = f"Replace with `{torch}.where(mask, x, 0).{name}({dim})` (static shape)"
    elif name == _MEAN:
        if aligned.same_shape:
            count = f"{_primary(ctx, m)}.sum()"
        elif leaf.row and aligned.exact:
            count = f"{aligned.text}.expand_as({_primary(ctx, x)}).sum()"
        else:
            return None  # masked_select broadcasts m and x: m.sum() would miscount
        content = f"{torch}.where({aligned.text}, {full}, 0).sum() / {count}"
        content = _parenthesize(content, parent, real)
        # exact for float32/float64 values (an empty mask gives NaN in both); integer inputs raise in
        # the original, float16/bfloat16 sums round (or overflow) before the division
        safe = exact and shapes.full_float(term.node)
        message = "Replace with a masked sum divided by the mask count" + (
            "" if safe else " (unsafe: integer inputs no longer raise, float16 sums round before the division)")
    else:
        if not (plain and aligned.exact and _is_simple(x) and (leaf.row or aligned.same_shape)):
            return None  # the dtype-extreme expression repeats x; masked_fill cannot grow x
        inverted = f"~{aligned.text}" if aligned.aligned else f"~{_primary(ctx, m)}"
        fill = _extreme_fill(torch, _primary(ctx, x), lowest=name in _MAX_LIKE)
        content = f"{_primary(ctx, x)}.masked_fill({inverted}, {fill}).{name}()"
        safe = False  # an empty mask raises in the original and returns the fill value here
        message = (f"Replace with `x.masked_fill(~mask, <dtype extreme>).{name}()` "
                   "(unsafe: an empty mask no longer raises)")
    if not safe and name in _SUM_LIKE:
        message += " (unsafe: the mask's rank is unknown, or an operand may have side effects)"
    return Fix(SAFE if safe else UNSAFE, message, (_replace(ctx, real, content),))


# --------------------------------------------------------------------------- counts
def _count_fix(node, ancestors, ctx):
    """``len(x.nonzero())`` / ``x.nonzero().shape[0]`` / ``.size(0)`` -> ``torch.count_nonzero(x)``."""
    x = _nonzero_operand(node, ctx)
    if x is None:
        return None
    target = _count_target(node, ancestors)
    if target is None or target[2]:
        return None
    replaced, user, _ = target
    return _count_rewrite(replaced, user, x, x, ctx, exact=True)


def _count_of_selection(node, ancestors, ctx):
    """``len(x[m])`` / ``x[m].shape[0]`` / ``.size(0)`` -> ``torch.count_nonzero(m)`` (any valid mask
    rank: one row per true element); ``x[m].numel()`` too when m has x's shape."""
    leaf = _leaf(node, ctx)
    target = _count_target(node, ancestors)
    if leaf is None or target is None:
        return None
    replaced, user, is_numel = target
    return count_selection(leaf, replaced, user, is_numel, ctx)


def count_selection(leaf, real, user, is_numel, ctx):
    """The count ``real`` of the selection ``leaf`` (its user ``user``) as ``torch.count_nonzero(m)``."""
    shapes = Shapes(ctx)
    covers = shapes.key(leaf.x) is not None and shapes.key(leaf.x) in shapes.grown_keys(leaf.m)
    if (is_numel or not leaf.row) and not covers:
        return None  # numel counts x's other dims too; masked_select counts the broadcast mask
    # one row per true element, whatever the index form (as long as the original does not raise)
    exact = (leaf.exact or (leaf.index is not None and not leaf.gather)) \
        and (not leaf.gather or shapes.rank(leaf.x) == 1)
    return _count_rewrite(real, user, leaf.m, leaf.x, ctx, exact=exact and _pure(leaf.m, ctx))


def _count_target(node, ancestors):
    """(the count expression, its user, is numel) for ``len(node)``, ``node.shape[0]``,
    ``node.size(0)``, ``node.numel()``."""
    if not ancestors:
        return None
    parent = ancestors[-1]
    if (isinstance(parent, ast.Call) and isinstance(parent.func, ast.Name) and parent.func.id == "len"
            and parent.args == [node] and not parent.keywords):
        replaced, depth, is_numel = parent, 1, False
    elif isinstance(parent, ast.Attribute) and parent.value is node and len(ancestors) >= 2:
        outer = ancestors[-2]
        if (parent.attr == "shape" and isinstance(outer, ast.Subscript) and outer.value is parent
                and _is_int_constant(outer.slice, 0)):
            replaced, depth, is_numel = outer, 2, False
        elif (parent.attr in ("size", "numel") and isinstance(outer, ast.Call) and outer.func is parent
              and not outer.keywords):
            if parent.attr == "size" and (len(outer.args) != 1 or not _is_int_constant(outer.args[0], 0)):
                return None
            if parent.attr == "numel" and outer.args:
                return None
            replaced, depth, is_numel = outer, 2, parent.attr == "numel"
        else:
            return None
    else:
        return None
    user = ancestors[-1 - depth] if len(ancestors) > depth else None
    return replaced, user, is_numel


def _count_rewrite(replaced, user, counted, x, ctx, *, exact: bool):
    if _has_comment(ctx.segment(replaced)):
        return None
    torch = ctx.torch_alias
    content = f"{torch}.count_nonzero({_arg(ctx, counted)})"
    safe = exact and _count_flows_into_tensor_division(replaced, user, x, ctx)
    message = (f"Replace with `{torch}.count_nonzero(...)`"
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


# --------------------------------------------------------------------------- x[m] = y[m]
def _fix_masked_copy(node, ancestors, ctx):
    """``x[m] = y[m]`` -> ``x.copy_(torch.where(M, y, x))``, and likewise for a linear function of
    selections by the same mask (``res[m] = a + s * (y[m] - a)``, ``x[m] = y[m] - z[m]``: the
    function computed on the whole tensors): in place, so aliases of x see the change as
    before.  Unsafe: where the original raises (x and the value of different dtypes, y[m] not
    broadcastable to x[m]) the rewrite promotes or broadcasts instead; a number held in a
    variable that is inf or NaN makes the gradient NaN outside the mask."""
    statement = next((a for a in reversed(ancestors) if isinstance(a, ast.stmt)), None)
    if not isinstance(statement, ast.Assign) or len(statement.targets) != 1 \
            or not any(sub is node for sub in ast.walk(statement.value)):
        return None
    target = statement.targets[0]
    written = _leaf(target, ctx) if isinstance(target, ast.Subscript) else None
    if written is None or written.index is not None:
        return None
    combination = _combination(statement.value, ctx, variables=True)
    if combination is None or combination[0] not in ("term", "sum"):
        return None
    kind, terms = combination
    mask = _dump(target.slice)
    if not any(t.leaf.node is node for t in terms) or any(
            _dump(t.leaf.m) != mask or t.leaf.index is not None or not t.leaf.row for t in terms):
        return None
    shapes = Shapes(ctx)
    if kind == "sum" and not all(shapes.same_shape(terms[0].leaf.x, t.leaf.x) for t in terms[1:]):
        return None  # selections of different shapes broadcast differently from the whole tensors
    if not (_pure(target.value, ctx) and _pure(target.slice, ctx) and _pure(statement.value, ctx)):
        return None
    if _has_comment(ctx.segment(statement)):
        return None
    aligned = _mask_text(written, ctx, shapes)
    if aligned is None or not aligned.exact:
        return None
    torch = ctx.torch_alias
    x = _primary(ctx, target.value)
    if kind == "term":
        value = _bare(terms[0].full(ctx))
    else:
        value = _render(statement.value, ctx, {id(t.node): t.full(ctx) for t in terms})[0]
    content = f"{x}.copy_({torch}.where({aligned.text}, {value}, {_arg(ctx, target.value)}))"
    return Fix(UNSAFE, f"Replace with `x.copy_({torch}.where(mask, y, x))` (unsafe: where x and y differ in "
               "dtype or y[m] does not fit x[m], the original raises and the rewrite does not)",
               (_replace(ctx, statement, content),))


# --------------------------------------------------------------------------- DYN202
def _fix_raise_branch(node, ancestors, ctx):
    """``if <tensor test>: raise E("literal")`` -> ``torch._assert_async(<negated test>, "literal")``:
    checked on the device, no graph break.  Unsafe: the error is a RuntimeError (not E), raised
    when the device gets there (later, on an accelerator), and only if the test is a
    single-element tensor.  The test is evaluated once, where it was: its side effects stay."""
    if ctx.torch_alias is None or not ancestors or not isinstance(ancestors[-1], ast.If):
        return None
    branch = ancestors[-1]
    if branch.test is not node or branch.orelse or len(branch.body) != 1 or not ctx.segment(branch).startswith("if"):
        return None  # (an elif starts at its keyword: replacing it would break the if above)
    raised = branch.body[0]
    if not isinstance(raised, ast.Raise) or raised.exc is None or raised.cause is not None:
        return None
    exception = raised.exc
    message = None
    if isinstance(exception, ast.Call):
        if exception.keywords or len(exception.args) > 1 or not isinstance(exception.func, (ast.Name, ast.Attribute)):
            return None
        if exception.args:
            if not (isinstance(exception.args[0], ast.Constant) and isinstance(exception.args[0].value, str)):
                return None  # an f-string or a value would be formatted on the host: a sync
            message = ctx.segment(exception.args[0])
        name = ctx.segment(exception.func)
    elif isinstance(exception, (ast.Name, ast.Attribute)):
        name = ctx.segment(exception)
    else:
        return None
    if message is None:
        message = f'"{name}"' if '"' not in name else repr(name)
    torch = ctx.torch_alias
    negated = isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not)
    if negated:
        condition = _tensor_truth(node.operand, ctx)
    else:
        test = _tensor_truth(node, ctx)
        condition = None if test is None else f"{torch}.logical_not({_bare(test)})"
    if condition is None or _has_comment(ctx.segment(branch)):
        return None
    content = f"{torch}._assert_async({_bare(condition) if isinstance(condition, tuple) else condition}, {message})"
    return Fix(UNSAFE, f"Replace with `{torch}._assert_async(condition, message)` (unsafe: raises a RuntimeError "
               "instead of the original exception, when the device reaches it)", (_replace(ctx, branch, content),))


def _tensor_truth(expr, ctx):
    """(text, precedence) of a tensor whose truth is the truth of ``expr`` (a single-element
    tensor's), or None: a tensor itself, ``bool(t)`` / ``t.item()`` of one, ``not t``, and ``or``
    / ``and`` of such (``torch.logical_or``/``logical_and``: both sides are then evaluated, so a
    side after the first must be free of side effects).  Python values in the test (``x is
    None or ...``) give None: the assert would need the branch around it."""
    torch = ctx.torch_alias
    if isinstance(expr, ast.UnaryOp) and isinstance(expr.op, ast.Not):
        inner = _tensor_truth(expr.operand, ctx)
        return None if inner is None else (f"{torch}.logical_not({_bare(inner)})", 9)
    if isinstance(expr, ast.BoolOp):
        parts = [_tensor_truth(value, ctx) for value in expr.values]
        if None in parts or not all(_pure(value, ctx) for value in expr.values[1:]):
            return None
        function = "logical_or" if isinstance(expr.op, ast.Or) else "logical_and"
        text = _bare(parts[0])
        for part in parts[1:]:
            text = f"{torch}.{function}({text}, {_bare(part)})"
        return text, 9
    if isinstance(expr, ast.Call) and isinstance(expr.func, ast.Name) and expr.func.id == "bool" \
            and len(expr.args) == 1 and not expr.keywords and ctx.kind(expr.args[0]) in _TENSOR_KINDS:
        return _tensor_truth(expr.args[0], ctx)
    if isinstance(expr, ast.Call) and isinstance(expr.func, ast.Attribute) and expr.func.attr == "item" \
            and not expr.args and not expr.keywords and ctx.kind(expr.func.value) in _TENSOR_KINDS:
        return _tensor_truth(expr.func.value, ctx)
    if ctx.kind(expr) not in _TENSOR_KINDS:
        return None
    return _arg(ctx, expr), 0


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
    """DYN402: ``padding=True``/``"longest"`` -> ``"max_length"`` when the call also gives a
    ``max_length`` (not None) and turns truncation on (see ``pads_to_a_fixed_length``)."""
    if not isinstance(node, ast.Call) or not pads_to_a_fixed_length(node):
        return None
    padding = next(k for k in node.keywords if k.arg == "padding")
    value = padding.value
    if not (isinstance(value, ast.Constant) and (value.value is True or value.value == "longest")):
        return None
    line = ctx.source_line(ctx.position(value)[2])
    if _has_comment(line[ctx.position(value)[3]:].lstrip(",) ")):
        return None  # a comment about this choice (diffusers: `padding="longest",  # not use max length`)
    quote = "'" if ctx.segment(value).startswith("'") else '"'
    return Fix(UNSAFE, 'Use `padding="max_length"` (unsafe: every batch is padded to max_length, more compute)',
               (_replace(ctx, value, f"{quote}max_length{quote}"),))


def pads_to_a_fixed_length(call) -> bool:
    """Whether ``padding="max_length"`` in this tokenizer call gives every batch one length: the
    call passes ``max_length`` (not None: that pads to the tokenizer's model length, or not at
    all) and ``truncation`` that is True or a truncation strategy.  Without truncation, longer
    items stay longer: the batch is ragged and ``return_tensors`` raises "Unable to create
    tensor" where padding to the longest item worked (measured with transformers 5.23)."""
    keywords = {k.arg: k.value for k in call.keywords if k.arg is not None}
    length, truncation = keywords.get("max_length"), keywords.get("truncation")
    if length is None or (isinstance(length, ast.Constant) and length.value is None):
        return False
    return isinstance(truncation, ast.Constant) and (
        truncation.value is True or truncation.value in ("longest_first", "only_first", "only_second"))


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


# --------------------------------------------------------------------------- operands
def _masked_select_operands(call, ctx):
    if not isinstance(call.func, (ast.Name, ast.Attribute)):
        return None
    keywords = {k.arg: k.value for k in call.keywords}
    if None in keywords or any(isinstance(a, ast.Starred) for a in call.args):
        return None
    func = call.func
    name = func.id if isinstance(func, ast.Name) else func.attr
    if name != "masked_select":
        return None
    is_function = isinstance(func, ast.Name) or (
        isinstance(func.value, ast.Name) and func.value.id == ctx.torch_alias)
    if is_function:
        args = list(call.args) + [keywords.pop(name) for name in ("input", "mask") if name in keywords]
        if keywords or len(args) != 2:
            return None
        return args[0], args[1]
    if isinstance(func.value, ast.Attribute) and func.value.attr == "Tensor":
        return None  # torch.Tensor.masked_select(x, m): rare; not rewritten
    args = list(call.args) + ([keywords.pop("mask")] if "mask" in keywords else [])
    if keywords or len(args) != 1:
        return None
    return func.value, args[0]


def _index_select_operands(call, ctx):
    """(x, index, is gather) of ``x.index_select(0, i)``, ``torch.index_select(x, 0, i)``,
    ``x.gather(0, i)``, ``torch.gather(x, 0, i)`` (also with ``dim=0`` / ``index=i``)."""
    func = call.func
    if not isinstance(func, ast.Attribute) or func.attr not in ("index_select", "gather"):
        return None
    if any(isinstance(a, ast.Starred) for a in call.args):
        return None
    keywords = {k.arg: k.value for k in call.keywords}
    if None in keywords or set(keywords) - {"dim", "index", "input"}:
        return None
    if isinstance(func.value, ast.Name) and func.value.id == ctx.torch_alias:
        names = ["input", "dim", "index"]
        args = list(call.args)
    else:
        names = ["dim", "index"]
        args = list(call.args)
        keywords.setdefault("input", func.value)
        if "input" in {k.arg for k in call.keywords}:
            return None
    if len(args) > len(names):
        return None
    for position, value in enumerate(args):
        if names[position] in keywords:
            return None
        keywords[names[position]] = value
    if set(keywords) != {"input", "dim", "index"} or not _is_int_constant(keywords["dim"], 0):
        return None
    return keywords["input"], keywords["index"], func.attr == "gather"


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
    if not isinstance(call, ast.Call):
        return None
    func = call.func
    if not isinstance(func, (ast.Name, ast.Attribute)):
        return None
    name = func.id if isinstance(func, ast.Name) else func.attr
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


def _row_index_condition(index, ctx):
    """c (a boolean mask) when ``index`` lists the positions along dim 0 of c's true elements,
    one per element: ``torch.where(c)[0]``, ``c.nonzero(as_tuple=True)[0]``, ``c.nonzero()[:, 0]``,
    ``c.nonzero().squeeze(1)``, ``c.nonzero().view(-1)``, ``.flatten()``.  For a 1-D c, selecting
    with it is selecting with c; for other ranks rows repeat (the fix is exact only for rank 1)."""
    condition = None
    if isinstance(index, ast.Subscript):
        if _is_int_constant(index.slice, 0):
            condition = _index_tuple_condition(index.value, ctx)
        elif isinstance(index.slice, ast.Tuple) and len(index.slice.elts) == 2:
            first, second = index.slice.elts
            if isinstance(first, ast.Slice) and first.lower is None and first.upper is None and first.step is None \
                    and _is_int_constant(second, 0) and isinstance(index.value, ast.Call):
                condition = _nonzero_operand(index.value, ctx)
    elif isinstance(index, ast.Call) and isinstance(index.func, ast.Attribute) \
            and isinstance(index.func.value, ast.Call) and not index.keywords:
        method, args = index.func.attr, index.args
        one = len(args) == 1 and (_is_int_constant(args[0], 1) or _is_minus_one(args[0]))
        flat = (method == "squeeze" and one) \
            or (method in ("view", "reshape") and len(args) == 1 and _is_minus_one(args[0])) \
            or (method in ("flatten", "ravel") and not args)
        if flat:
            condition = _nonzero_operand(index.func.value, ctx)
    if condition is None or not _is_bool_mask(condition, ctx):
        return None
    return condition


def _is_minus_one(node) -> bool:
    return isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub) and _is_int_constant(node.operand, 1)


# --------------------------------------------------------------------------- masks
@dataclass
class _Aligned:
    text: str          # the mask as torch.where needs it
    exact: bool        # aligned for every valid input
    aligned: bool      # text is not m as written (m.unsqueeze(-1), the reshape form)
    same_shape: bool   # m has x's shape (so m.sum() counts the selection)


def _mask_text(leaf, ctx, shapes) -> _Aligned | None:
    """The mask as torch.where needs it for the selection ``leaf``.

    ``x[m]`` aligns m with x's *leading* dims, torch.where broadcasts it from the
    *right*: a row mask on a square matrix silently gives a different answer.  In
    order: m as is when it provably has x's shape (or x[m] is masked_select, which
    broadcasts as torch.where does); when both ranks are known, m, m.unsqueeze(-1) or
    m[..., None, None] (rank r of m, R of x: R - r trailing dims); for a 1-D m and a plain
    x, ``m.reshape(-1, *(1,) * (x.ndim - 1))``; when both are plain names or attribute
    reads, reshaped to x's rank with trailing singleton dims (exact for every valid mask
    rank); otherwise m as written, and not exact, except for a
    row index used by ``x[...]`` or ``index_select`` (None: m as written would broadcast a
    row mask over x's last dim, wrong in the very case the index form is written for)."""
    x, m = leaf.x, leaf.m
    if not leaf.row:
        return _Aligned(_arg(ctx, m), True, False, shapes.has_shape_of(m, x))
    if shapes.has_shape_of(m, x):
        return _Aligned(_arg(ctx, m), True, False, True)
    rank_x, rank_m = shapes.rank(x), shapes.rank(m)
    if rank_x is not None and rank_m is not None and rank_m <= rank_x:
        missing = rank_x - rank_m
        if missing == 0 or rank_m == 0:  # a valid m of x's rank has x's shape; a 0-d m broadcasts
            return _Aligned(_arg(ctx, m), True, False, missing == 0)
        if missing == 1:
            return _Aligned(f"{_primary(ctx, m)}.unsqueeze(-1)", True, True, False)
        return _Aligned(f"{_primary(ctx, m)}[..., {', '.join(['None'] * missing)}]", True, True, False)
    if rank_m == 1 and _is_simple(x):  # a row mask: m once, x's rank at run time
        mp, xp = _primary(ctx, m), _primary(ctx, x)
        return _Aligned(f"{mp}.reshape(-1, *(1,) * ({xp}.ndim - 1))", True, True, False)
    if _is_simple(m) and _is_simple(x):
        mp, xp = _primary(ctx, m), _primary(ctx, x)
        return _Aligned(f"{mp}.reshape({mp}.shape + (1,) * ({xp}.ndim - {mp}.ndim))", True, True, False)
    if leaf.rows and not leaf.gather:
        return None
    return _Aligned(_arg(ctx, m), False, False, False)


def _derived_from(expr, x, ctx, *, allow_reductions: bool, depth: int = 0) -> bool:
    """Whether ``expr`` is computed elementwise (broadcasting) from ``x`` itself.

    With ``allow_reductions``, full reductions of such values (0-d tensors on x's
    device) count too."""
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
    "DYN202": _fix_raise_branch,
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
fix_raise_branch = _fix_raise_branch
