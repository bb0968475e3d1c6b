"""Static shape facts for the fix builders: same-shape proofs and ranks.

A fix such as ``x[m].sum()`` -> ``torch.where(M, x, 0).sum()`` needs the mask
``M`` aligned with ``x``: ``x[m]`` aligns ``m`` with x's *leading* dimensions,
``torch.where`` broadcasts it from the *right*.  The plain ``m`` is exact when
``m`` provably has x's shape, ``m.unsqueeze(-1)`` when m's rank is provably one
less than x's, and so on.  This module answers those questions from the code
alone, following local bindings through the fix context
(``dynlint.fixcontext.FixContext.latest_binding``: the latest plain binding of
a name outside branches and loops, when it still holds at the point of the
finding on every path).

* ``shape_key(e)``: a key such that two expressions with one key have one shape
  whenever both evaluate (``h``, ``h * 2``, ``h.float()``, ``z.view(h.size())``,
  ``torch.zeros_like(h)`` share h's key).  A name bound to something this module
  cannot see through is its own key: the same name read twice at one point is
  the same tensor, two different names never share a key.
* ``grown_keys(e)``: the keys of tensors whose shape ``e``'s shape contains by
  broadcasting (``h > 0`` and ``(h > 0) | torch.isnan(g)`` contain h's shape).
  Broadcasting only grows shapes, so a mask that contains x's shape has exactly
  x's shape whenever ``x[mask]`` is valid.
* ``rank(e)``: the number of dimensions of ``e`` when the code fixes it
  (``y.view(-1)``: 1; ``torch.zeros(a, b)``: 2; ``x.sum(-1)``: rank(x) - 1), else None.

Pure ``ast``: no torch, no libcst.
"""

from __future__ import annotations

import ast

_DEPTH = 12

# One-tensor functions (torch.F(x)) and methods (x.F()) whose result has exactly x's shape,
# whatever their other arguments are when those are Python numbers, dtypes or keywords.
_SHAPE_KEEPING = frozenset({
    "abs", "neg", "negative", "exp", "exp2", "expm1", "log", "log2", "log10", "log1p", "sigmoid", "logit", "tanh",
    "sin", "cos", "tan", "asin", "acos", "atan", "sinh", "cosh", "asinh", "acosh", "atanh", "sign", "sgn",
    "signbit", "sqrt", "rsqrt", "square", "reciprocal", "relu", "floor", "ceil", "round", "trunc", "frac",
    "isnan", "isinf", "isfinite", "isneginf", "isposinf", "isreal", "logical_not", "bitwise_not", "erf", "erfc",
    "clone", "clamp", "clip", "clamp_min", "clamp_max", "nan_to_num", "softmax", "log_softmax", "cumsum",
    "cumprod", "argsort", "detach", "contiguous", "bool", "float", "double", "half", "bfloat16", "int", "long",
    "short", "byte", "char", "to", "type", "type_as", "cpu", "cuda", "zeros_like", "ones_like", "empty_like",
    "full_like", "rand_like", "randn_like", "randint_like", "requires_grad_",
})
# ... whose result is shaped like their one tensor argument *other* than the receiver
_SHAPED_LIKE_ARGUMENT = frozenset({"view_as", "reshape_as", "expand_as"})
# Tensor-valued results of one call returning (values, indices) shaped like the input.
_SHAPE_KEEPING_PAIRS = frozenset({"sort", "cummax", "cummin", "frexp"})
# Elementwise ops of several tensors: the result has their broadcast shape.
_ELEMENTWISE_MULTI = frozenset({
    "eq", "ne", "gt", "lt", "ge", "le", "greater", "less", "greater_equal", "less_equal", "not_equal",
    "logical_and", "logical_or", "logical_xor", "bitwise_and", "bitwise_or", "bitwise_xor", "add", "sub",
    "subtract", "mul", "multiply", "div", "divide", "true_divide", "maximum", "minimum", "fmax", "fmin", "where",
    "atan2", "hypot", "isclose", "pow", "remainder", "fmod",
})
_COMPARE_OPS = (ast.Lt, ast.Gt, ast.LtE, ast.GtE, ast.Eq, ast.NotEq)
_ARITH_OPS = (ast.Add, ast.Sub, ast.Mult, ast.Div, ast.FloorDiv, ast.Mod, ast.Pow, ast.BitAnd, ast.BitOr,
              ast.BitXor)
# Factory functions whose positional arguments (or one tuple/list) are the sizes.
_FACTORIES = frozenset({"zeros", "ones", "empty", "rand", "randn"})
# Full reductions that take a dimension (``keepdim`` keeps the rank).
_DIM_REDUCTIONS = frozenset({"sum", "mean", "prod", "amax", "amin", "any", "all", "argmax", "argmin", "nansum",
                             "nanmean", "std", "var", "logsumexp", "count_nonzero"})
_FLATTENING = frozenset({"flatten", "ravel"})
# Ops whose floating-point result has their (first) tensor operand's dtype.
_DTYPE_KEEPING = frozenset({
    "abs", "neg", "negative", "exp", "log", "log1p", "sigmoid", "tanh", "sqrt", "square", "relu", "clamp",
    "clamp_min", "clamp_max", "clip", "clone", "detach", "contiguous", "softmax", "log_softmax", "cumsum",
    "sum", "mean", "nansum", "amax", "amin", "logsumexp", "view", "reshape", "flatten", "ravel", "squeeze",
    "unsqueeze", "transpose", "permute", "expand", "expand_as", "view_as", "reshape_as", "t", "mul", "add", "sub",
    "div", "softplus", "smooth_l1_loss", "l1_loss", "mse_loss", "nan_to_num",
})
# Functions whose result has the dtype their ``dtype=`` argument names.
_DTYPE_RESULTS = frozenset({
    "log_softmax", "softmax", "sum", "mean", "nansum", "cumsum", "prod", "zeros", "ones", "full", "empty",
    "rand", "randn", "arange", "linspace", "tensor", "as_tensor", "zeros_like", "ones_like", "full_like",
    "empty_like", "rand_like", "randn_like", "to",
})
_FUNCTIONAL = frozenset({"F", "nn.functional", "torch.nn.functional", "functional"})


class Shapes:
    """Shape questions about expressions, answered through ``ctx`` (a FixContext)."""

    def __init__(self, ctx):
        self.ctx = ctx
        self.torch = ctx.torch_alias

    # ------------------------------------------------------------------ keys
    def key(self, expr, depth: int = 0) -> str | None:
        """The shape key of ``expr`` (see the module docstring), or None."""
        if depth > _DEPTH:
            return None
        recurse = lambda e: self.key(e, depth + 1)  # noqa: E731
        if isinstance(expr, ast.Name):
            bound = self.ctx.latest_binding(expr.id)
            if bound is not None:
                inner = recurse(bound)
                if inner is not None:
                    return inner
            return f"name:{expr.id}"
        if isinstance(expr, ast.Attribute) and expr.attr in ("values", "indices"):
            operand = self._call_operand(expr.value, _SHAPE_KEEPING_PAIRS)
            if operand is not None:
                return recurse(operand)
        if isinstance(expr, ast.Attribute):
            chain = _chain(expr)
            return f"attr:{chain}" if chain else None
        if isinstance(expr, ast.UnaryOp) and isinstance(expr.op, (ast.USub, ast.UAdd, ast.Invert)):
            return recurse(expr.operand)
        if isinstance(expr, ast.BinOp) and isinstance(expr.op, _ARITH_OPS):
            if _is_number(expr.right):
                return recurse(expr.left)
            if _is_number(expr.left):
                return recurse(expr.right)
            return self._broadcast_key(expr, depth)
        if isinstance(expr, ast.Compare):
            return self._broadcast_key(expr, depth)
        if isinstance(expr, ast.Subscript) and _is_int_constant(expr.slice, (0, 1)):
            pair = expr.value  # x.sort(...)[0] / torch.sort(x)[1]
            operand = self._call_operand(pair, _SHAPE_KEEPING_PAIRS)
            return recurse(operand) if operand is not None else None
        if isinstance(expr, ast.Call) and isinstance(expr.func, ast.Attribute):
            func = expr.func
            if any(isinstance(a, ast.Starred) for a in expr.args) or any(k.arg is None for k in expr.keywords):
                return None
            if self._is_torch(func.value) or _chain(func.value) in _FUNCTIONAL:
                if func.attr in _SHAPE_KEEPING and expr.args and self._only_plain(expr.args[1:], expr.keywords):
                    return recurse(expr.args[0])
                return None
            if func.attr in _SHAPE_KEEPING and self._only_plain(expr.args, expr.keywords):
                return recurse(func.value)
            if func.attr in _SHAPED_LIKE_ARGUMENT and len(expr.args) == 1 and not expr.keywords:
                return recurse(expr.args[0])
            if func.attr in ("view", "reshape", "expand") and len(expr.args) == 1 and not expr.keywords:
                source = _size_source(expr.args[0])  # z.view(h.size()) / z.reshape(h.shape)
                return recurse(source) if source is not None else None
        return None

    def _broadcast_key(self, expr, depth: int) -> str | None:
        """The key of an elementwise expression of several tensors: its shape is the broadcast of
        their shapes, so two such expressions over the same tensors have one shape
        (``up = (mel - left) / (center - left)`` and ``up_idx = (mel > left) & (mel <= center)``).
        Numbers (literals, Python values) do not change a broadcast shape and are left out."""
        leaves = self._broadcast_leaves(expr, depth)
        if not leaves:
            return None
        return next(iter(leaves)) if len(leaves) == 1 else "bcast:" + ",".join(sorted(leaves))

    def _broadcast_leaves(self, expr, depth: int) -> set[str] | None:
        if depth > _DEPTH:
            return None
        recurse = lambda e: self._broadcast_leaves(e, depth + 1)  # noqa: E731
        parts = None
        if isinstance(expr, ast.BinOp) and isinstance(expr.op, _ARITH_OPS):
            parts = [expr.left, expr.right]
        elif isinstance(expr, ast.Compare) and all(isinstance(op, _COMPARE_OPS) for op in expr.ops):
            parts = [expr.left, *expr.comparators]
        elif isinstance(expr, ast.UnaryOp) and isinstance(expr.op, (ast.USub, ast.UAdd, ast.Invert)):
            parts = [expr.operand]
        elif isinstance(expr, ast.Call) and isinstance(expr.func, ast.Attribute) and not expr.keywords \
                and not any(isinstance(a, ast.Starred) for a in expr.args) and expr.func.attr in _ELEMENTWISE_MULTI:
            parts = list(expr.args) if self._is_torch(expr.func.value) else [expr.func.value, *expr.args]
        if parts is None:
            if _is_number(expr) or (isinstance(expr, (ast.Name, ast.Attribute)) and self.ctx.kind(expr) == "py"):
                return set()
            key = self.key(expr, depth + 1)
            if key is None:
                return None
            return set(key[len("bcast:"):].split(",")) if key.startswith("bcast:") else {key}
        found: set[str] = set()
        for part in parts:
            inner = recurse(part)
            if inner is None:
                return None
            found |= inner
        return found

    def _call_operand(self, call, names):
        if not (isinstance(call, ast.Call) and isinstance(call.func, ast.Attribute) and call.func.attr in names):
            return None
        if any(isinstance(a, ast.Starred) for a in call.args):
            return None
        if self._is_torch(call.func.value):
            return call.args[0] if call.args else None
        return call.func.value

    def same_shape(self, a, b) -> bool:
        key_a = self.key(a)
        return key_a is not None and key_a == self.key(b)

    def grown_keys(self, expr, depth: int = 0) -> set[str]:
        """Keys of the tensors whose shapes ``expr``'s shape contains (broadcasting only grows)."""
        if depth > _DEPTH:
            return set()
        recurse = lambda e: self.grown_keys(e, depth + 1)  # noqa: E731
        found = set()
        own = self.key(expr, depth)
        if own is not None:
            found.add(own)
        if isinstance(expr, ast.Name):
            bound = self.ctx.latest_binding(expr.id)
            if bound is not None:
                found |= recurse(bound)
        elif isinstance(expr, ast.Compare):
            if all(isinstance(op, _COMPARE_OPS) for op in expr.ops):
                for operand in [expr.left, *expr.comparators]:
                    found |= recurse(operand)
        elif isinstance(expr, ast.BinOp) and isinstance(expr.op, _ARITH_OPS):
            found |= recurse(expr.left) | recurse(expr.right)
        elif isinstance(expr, ast.UnaryOp) and isinstance(expr.op, (ast.Invert, ast.USub, ast.UAdd)):
            found |= recurse(expr.operand)
        elif isinstance(expr, ast.Call) and isinstance(expr.func, ast.Attribute) \
                and not any(isinstance(a, ast.Starred) for a in expr.args) and not expr.keywords:
            func = expr.func
            if self._is_torch(func.value):
                if func.attr in _ELEMENTWISE_MULTI or func.attr in _SHAPE_KEEPING:
                    for argument in expr.args:
                        found |= recurse(argument)
            elif func.attr in _ELEMENTWISE_MULTI or (func.attr in _SHAPE_KEEPING and not expr.args):
                found |= recurse(func.value)
                for argument in expr.args:
                    found |= recurse(argument)
        return found

    def has_shape_of(self, mask, x) -> bool:
        """Whether ``mask`` provably has x's shape whenever ``x[mask]`` is valid."""
        key = self.key(x)
        return key is not None and key in self.grown_keys(mask)

    # ------------------------------------------------------------------ ranks
    def rank(self, expr, depth: int = 0) -> int | None:
        if depth > _DEPTH:
            return None
        recurse = lambda e: self.rank(e, depth + 1)  # noqa: E731
        if _is_number(expr):
            return 0
        if isinstance(expr, ast.Name):
            bound = self.ctx.latest_binding(expr.id)
            return recurse(bound) if bound is not None else None
        if isinstance(expr, ast.UnaryOp) and isinstance(expr.op, (ast.USub, ast.UAdd, ast.Invert)):
            return recurse(expr.operand)
        pair = expr.value if isinstance(expr, ast.Attribute) and expr.attr in ("values", "indices") else \
            expr.value if isinstance(expr, ast.Subscript) and _is_int_constant(expr.slice, (0, 1)) else None
        if pair is not None:  # x.sort(1)[1], torch.sort(x).values: x's rank
            operand = self._call_operand(pair, _SHAPE_KEEPING_PAIRS)
            return recurse(operand) if operand is not None else None
        if isinstance(expr, (ast.BinOp, ast.Compare)):
            operands = [expr.left, expr.right] if isinstance(expr, ast.BinOp) else [expr.left, *expr.comparators]
            if isinstance(expr, ast.Compare) and not all(isinstance(op, _COMPARE_OPS) for op in expr.ops):
                return None
            if isinstance(expr, ast.BinOp) and not isinstance(expr.op, _ARITH_OPS):
                return None
            ranks = [recurse(operand) for operand in operands]
            return None if None in ranks else max(ranks)
        if not (isinstance(expr, ast.Call) and isinstance(expr.func, ast.Attribute)):
            return None
        if any(isinstance(a, ast.Starred) for a in expr.args) or any(k.arg is None for k in expr.keywords):
            return None
        func = expr.func
        name = func.attr
        keywords = {k.arg: k.value for k in expr.keywords}
        if self._is_torch(func.value):
            if name in _FACTORIES:
                return _size_arguments_rank(expr.args, keywords)
            if name in ("arange", "linspace", "logspace", "randperm"):
                return 1
            if name in _FLATTENING and len(expr.args) == 1 and not keywords:
                return 1
            if not expr.args:
                return None
            receiver, arguments = expr.args[0], expr.args[1:]
        elif _chain(func.value) in _FUNCTIONAL:  # F.log_softmax(x, -1): x's rank
            if not expr.args or name not in _SHAPE_KEEPING:
                return None
            receiver, arguments = expr.args[0], expr.args[1:]
        else:
            receiver, arguments = func.value, list(expr.args)
        if name in _FLATTENING and not arguments and not keywords:
            return 1
        if name in ("view", "reshape") and not keywords:
            if len(arguments) == 1:
                source = _size_source(arguments[0])
                if source is not None:
                    return recurse(source)
                if isinstance(arguments[0], (ast.Tuple, ast.List)):
                    return len(arguments[0].elts) if not any(
                        isinstance(e, ast.Starred) for e in arguments[0].elts) else None
                return 1 if _is_sizeish(arguments[0]) else None
            return len(arguments) if len(arguments) >= 2 else None  # each one int (or it raises)
        if name in _SHAPED_LIKE_ARGUMENT and len(arguments) == 1:
            return recurse(arguments[0])
        if name == "unsqueeze" and len(arguments) == 1:
            inner = recurse(receiver)
            return inner + 1 if inner is not None else None
        if name in _DIM_REDUCTIONS:
            dim = arguments[0] if arguments else keywords.get("dim")
            keepdim = keywords.get("keepdim", arguments[1] if len(arguments) > 1 else None)
            if dim is None and not arguments and "dim" not in keywords:
                return 0 if not keywords else None
            if not _is_int_constant(dim):
                return None
            inner = recurse(receiver)
            if inner is None:
                return None
            if keepdim is None or (isinstance(keepdim, ast.Constant) and keepdim.value is False):
                return inner - 1
            if isinstance(keepdim, ast.Constant) and keepdim.value is True:
                return inner
            return None
        if name in _SHAPE_KEEPING or name in _SHAPE_KEEPING_PAIRS:
            return recurse(receiver)
        if name in _ELEMENTWISE_MULTI and not keywords:
            ranks = [recurse(e) for e in [receiver, *arguments]]
            return None if None in ranks else max(ranks)
        return None

    # ------------------------------------------------------------------ dtypes
    def full_float(self, expr, depth: int = 0) -> bool:
        """Whether ``expr`` is provably a float32 or float64 tensor (or a selection of one): a
        ``.float()``/``.double()``/``.to(torch.float32)`` cast, a ``dtype=torch.float32``
        argument of a function that returns that dtype, and what keeps the dtype of such a
        value (indexing, views, elementwise ops and reductions, arithmetic with Python
        numbers or with another such value)."""
        if depth > _DEPTH:
            return False
        recurse = lambda e: self.full_float(e, depth + 1)  # noqa: E731
        if isinstance(expr, ast.Name):
            bound = self.ctx.latest_binding(expr.id)
            return bound is not None and recurse(bound)
        if isinstance(expr, ast.UnaryOp) and isinstance(expr.op, (ast.USub, ast.UAdd)):
            return recurse(expr.operand)
        if isinstance(expr, ast.BinOp) and isinstance(expr.op, (ast.Add, ast.Sub, ast.Mult, ast.Div)):
            sides = [expr.left, expr.right]
            if any(_is_number(side) for side in sides):
                return any(recurse(side) for side in sides if not _is_number(side))
            return all(recurse(side) for side in sides)
        if isinstance(expr, ast.Subscript):
            return recurse(expr.value)
        if not (isinstance(expr, ast.Call) and isinstance(expr.func, ast.Attribute)):
            return False
        if any(isinstance(a, ast.Starred) for a in expr.args) or any(k.arg is None for k in expr.keywords):
            return False
        func, name = expr.func, expr.func.attr
        keywords = {k.arg: k.value for k in expr.keywords}
        if "dtype" in keywords:
            return name in _DTYPE_RESULTS and self._full_float_dtype(keywords["dtype"]) \
                and (self._is_torch(func.value) or _chain(func.value) in _FUNCTIONAL
                     or self.ctx.kind(func.value) in ("tensor", "mask", "scalar_tensor"))
        if self._is_torch(func.value) or _chain(func.value) in _FUNCTIONAL:
            return name in _DTYPE_KEEPING and bool(expr.args) and recurse(expr.args[0])
        if name in ("float", "double") and not expr.args and not keywords:
            return True
        if name == "to" and len(expr.args) == 1 and not keywords and self._full_float_dtype(expr.args[0]):
            return True
        if name in ("masked_select", "index_select", "gather") or name in _DTYPE_KEEPING:
            return recurse(func.value)
        return False

    def _full_float_dtype(self, node) -> bool:
        return isinstance(node, ast.Attribute) and self._is_torch(node.value) \
            and node.attr in ("float32", "float", "float64", "double")

    def _is_torch(self, node) -> bool:
        return isinstance(node, ast.Name) and node.id == self.torch

    def _only_plain(self, args, keywords) -> bool:
        """Arguments that cannot broadcast: numbers, dtypes, devices, Python values."""
        return all(not self._could_be_tensor(a) for a in [*args, *(k.value for k in keywords)])

    def _could_be_tensor(self, node) -> bool:
        if isinstance(node, ast.Constant) or _is_number(node):
            return False
        if isinstance(node, ast.Attribute) and (node.attr in ("dtype", "device") or self._is_torch(node.value)):
            return False
        return self.ctx.kind(node) not in ("py", "size")


def _chain(node) -> str | None:
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if not isinstance(node, ast.Name):
        return None
    parts.append(node.id)
    return ".".join(reversed(parts))


def _is_number(node) -> bool:
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
        node = node.operand
    return isinstance(node, ast.Constant) and type(node.value) in (int, float, bool)


def _is_int_constant(node, values=None) -> bool:
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        node = node.operand
    ok = isinstance(node, ast.Constant) and type(node.value) is int
    return ok and (values is None or node.value in values)


def _size_source(node):
    """y of ``y.shape`` / ``y.size()``."""
    if isinstance(node, ast.Attribute) and node.attr == "shape":
        return node.value
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "size" \
            and not node.args and not node.keywords:
        return node.func.value
    return None


def _is_sizeish(node) -> bool:
    """An expression that is one int size: a literal, ``y.size(i)``, ``y.shape[i]``, ``len(y)``, arithmetic of such."""
    if _is_int_constant(node):
        return True
    if isinstance(node, ast.BinOp) and isinstance(node.op, (ast.Add, ast.Sub, ast.Mult, ast.FloorDiv)):
        return _is_sizeish(node.left) and _is_sizeish(node.right)
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in ("size", "numel") \
            and len(node.args) == (1 if node.func.attr == "size" else 0):
        return True
    if isinstance(node, ast.Subscript) and isinstance(node.value, ast.Attribute) and node.value.attr == "shape" \
            and _is_int_constant(node.slice):
        return True
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "len":
        return True
    return False


def _size_arguments_rank(args, keywords) -> int | None:
    if not args:
        size = keywords.get("size")
        return len(size.elts) if isinstance(size, (ast.Tuple, ast.List)) else None
    if len(args) == 1:
        if isinstance(args[0], (ast.Tuple, ast.List)):
            return len(args[0].elts) if not any(isinstance(e, ast.Starred) for e in args[0].elts) else None
        return 1 if _is_sizeish(args[0]) else None
    return len(args)  # each one int (or it raises)
