"""Which tensor sizes vary from step to step, as far as the code shows.

A branch or loop on a size costs compiles only when that size changes between
calls.  Some dimensions do by their nature: the *batch* dimension (a short last
batch, a varying batch size), the number of rows a data-dependent op returns
(``nonzero``, ``x[mask]``, ``unique``), sequence and time lengths.  Others are
fixed by the model's configuration: channels, classes, heads, keypoints,
feature levels, coordinate widths.  The code rarely says which is which; a
reader goes by a few kinds of evidence, and so does ``variation``:

* **dim 0** of a tensor (``x.size(0)``, ``x.shape[0]``, ``len(x)``,
  ``x.numel()``, iterating ``x``, ``x.unbind(0)``) is the batch or the number of
  rows: it varies, unless the tensor is a module's own (``self.weight``) or a
  parameter named for one (``weight``, ``rel_pos``, ``pos_embed``), was
  built from Python values (``torch.tensor(...)``, ``torch.linspace(...)``,
  ``torch.arange(n)``, ``x.new_zeros(n, ...)`` with ``n`` not a varying size), or is a transpose or
  permutation that brought another dimension to the front;
* any dimension of a **data-dependent result** (``nonzero``, ``argwhere``,
  ``unique``, ``masked_select``, one-argument ``where``, ``x[mask]``, and what
  is sliced or reshaped from them) varies;
* a size **named** as a batch or a length (``batch_size``, ``bsz``, ``seq_len``,
  ``max_length``, ``num_tokens``, ``T``, ``B``...), or compared with such a name
  (``x.size(1) > self.max_len``), varies;
* every other size read (``x.shape[1]``, ``x.size(-1)``, ``x.shape[2:]``, a
  whole ``x.size()``, a name bound to one of those) is **unknown**: often fixed
  for a model, sometimes not.

The size rules (DYN201, DYN203) report what varies; what is only unknown goes
to their opt-in companions (DYN204, DYN205).  Pure ``ast``.
"""

from __future__ import annotations

import ast
import re

from dynlint import ops
from dynlint.analysis.kinds import MASK, TENSORISH
from dynlint.analysis.syntax import assigned_once_from, assigned_values, innermost_function

VARIES = "varies"
UNKNOWN = "unknown"

_DEPTH = 6

# words of an identifier that name a varying count: a batch, a length, a number of tokens/samples
_VARYING_WORDS = frozenset({
    "batch", "batches", "bs", "bsz", "nbatch", "imgs", "images", "len", "lens", "length", "lengths", "seq", "seqlen",
    "seqlens", "time", "tokens", "ntokens", "samples", "nsamples",
})
# whole identifiers that conventionally name the batch (B, N) or a length (T, L)
_VARYING_LETTERS = frozenset({"B", "N", "T", "L"})
_WORD_SPLIT = re.compile(r"_+|(?<=[a-z0-9])(?=[A-Z])")

# words of a tensor's name that say a weight or an embedding table, whose rows the model fixes
# (not ``weights``, ``embeddings``: attention weights and embedded inputs have a batch)
_WEIGHT_WORDS = frozenset({"weight", "bias", "codebook", "kernel", "table",
                           # a parameter of the model (``for param in group["params"]``), not ``grad``: a
                           # custom backward's ``grad_output`` has a batch
                           "param", "params", "parameter",
                           # one row per feature level: deformable attention's ``spatial_shapes`` (num_levels, 2)
                           "shapes", "levels"})
_WEIGHT_PREFIXES = ("rel_pos", "pos_embed", "pos_emb", "absolute_pos")
#: words that make ``*_weights`` one weight per item of the data (``token_weights``, ``node_weights``)
_PER_ITEM_WORDS = frozenset({"sample", "samples", "token", "tokens", "seq", "frame", "frames", "node", "nodes",
                             "edge", "edges", "atom", "atoms", "pixel", "pixels", "point", "points", "instance",
                             "instances", "example", "examples", "batch", "item", "items", "elem", "element", "per",
                             "box", "boxes", "anchor", "anchors", "query", "queries", "target", "targets"})

# tensors built from Python values: their rows are what the code put there
_BUILT_FROM_VALUES = frozenset({
    "torch.tensor", "torch.as_tensor", "torch.from_numpy", "torch.linspace", "torch.logspace", "torch.eye",
    "torch.Tensor", "torch.LongTensor", "torch.FloatTensor", "torch.BoolTensor",
})
# factories whose first positional argument (or ``size``) is the length of dim 0
_FACTORIES = frozenset({
    "torch.arange", "torch.zeros", "torch.ones", "torch.empty", "torch.full", "torch.rand", "torch.randn",
    "torch.randint", "torch.randperm",
})
# tensor methods making a new tensor of the sizes given (first positional argument, or a tuple of them)
_NEW_FACTORY_METHODS = frozenset({"new_zeros", "new_ones", "new_empty", "new_full"})
_SHAPE_FOLLOWING_METHODS = frozenset({
    "view", "reshape", "contiguous", "float", "long", "int", "bool", "half", "double", "to", "clone", "detach",
    "squeeze", "unsqueeze", "flatten", "cpu", "cuda", "sort", "argsort", "type", "abs", "neg", "sigmoid", "exp",
    "log", "softmax", "log_softmax", "masked_fill", "clamp", "sum", "mean", "max", "min", "index_select", "gather",
    # elementwise, or reordering within the shape (torchmultimodal's DDPM sampler: `self.eval_steps.flip(0)`)
    "flip", "fliplr", "flipud", "roll", "cumsum", "cumprod", "round", "floor", "ceil", "sqrt", "square", "pow",
    "reciprocal", "tanh", "relu", "clamp_min", "clamp_max",
})


def varying_name(identifier: str) -> bool:
    """``batch_size``, ``seq_len``, ``max_length``, ``num_tokens``, ``olen``, ``T``: a name for a count
    that changes between steps."""
    if identifier in _VARYING_LETTERS:
        return True
    words = [word.lower() for word in _WORD_SPLIT.split(identifier)]
    if "shape" in words or "shapes" in words or "dims" in words:
        return False  # `batch_shape`: a tuple of dimensions (a model's batch dims), not a count
    for word in words:
        if word in _VARYING_WORDS or (len(word) > 3 and word.endswith("len")):
            return True
    return False


def _identifier(node: ast.expr) -> str | None:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return node.attr
    return None


def variation(a, expr: ast.expr, depth: int = 0) -> str | None:
    """VARIES when a size ``expr`` reads is known to vary, UNKNOWN when it reads sizes none of which
    is known to vary, None when it reads no tensor size."""
    found = None
    if _in_optimizer(a):
        # an optimizer's methods work on the model's parameters, their gradients and the flat buffers and
        # partitions made from them (DeepSpeed's ZeRO optimizers): sizes the model fixes
        return UNKNOWN if any(True for _ in a.size_reads(expr)) else None
    if isinstance(expr, ast.Compare):
        sides = [expr.left, *expr.comparators]
        if any(a.reads_tensor_size(side) for side in sides):
            named = [side for side in sides if (ident := _identifier(side)) and varying_name(ident)
                     and not (isinstance(side, ast.Name) and _model_size(a, side.id))]
            if named:
                return VARIES  # `x.size(1) > self.max_len`: compared with a length
    for read in a.size_reads(expr):
        result = _read_variation(a, read, depth)
        if result == VARIES:
            return VARIES
        found = found or result
    return found


def _in_optimizer(a) -> bool:
    """The code is in a method of an optimizer class (named ``*Optimizer``, or derived, through the
    project's classes, from ``torch.optim.Optimizer`` or a ``*Optimizer`` base)."""
    cls = a.classes[-1] if a.classes else None
    return cls is not None and (cls.name.endswith("Optimizer") or a.has_base(cls, _optimizer_base))


def _optimizer_base(qualname: str) -> bool:
    return qualname.startswith("torch.optim.") or qualname.endswith("Optimizer")


def _model_size(a, name: str) -> bool:
    """``pos_len = self.pos_embed.shape[1]`` or ``pos_embed.shape[1]`` of a parameter named as a weight: a
    size the model fixes, whatever the name says (``len``)."""
    value = a.bound_value(name) or _unpacked_value(a, name)
    if value is None:
        return False
    reads = list(a.size_reads(value))
    return bool(reads) and all(_weight_tensor(_read_tensor(read)) for read in reads)


def _top_level_unpackings(a):
    """``(targets, value)`` of the enclosing function's top-level ``a, b = value`` statements (a tuple or
    list of targets), in order."""
    function = innermost_function(a.stack)
    if function is None:
        return
    for statement in function.body:
        if isinstance(statement, ast.Assign) and len(statement.targets) == 1 \
                and isinstance(statement.targets[0], (ast.Tuple, ast.List)):
            yield statement.targets[0].elts, statement.value


def _unpacked_value(a, name: str) -> ast.expr | None:
    """``x_len, pos_len = x.shape[1], pos_embed.shape[1]`` at the enclosing function's top level: the value
    unpacked into ``name``."""
    for targets, value in _top_level_unpackings(a):
        if isinstance(value, ast.Tuple) and len(targets) == len(value.elts):
            for target, element in zip(targets, value.elts):
                if isinstance(target, ast.Name) and target.id == name:
                    return element
    return None


def _read_tensor(read: ast.expr) -> ast.expr | None:
    """The tensor a size read reads: ``x`` of ``x.size(1)``, ``x.shape[1]``, ``len(x)``, ``x.shape``."""
    if isinstance(read, ast.Call):
        if isinstance(read.func, ast.Name):
            return read.args[0] if read.args else None
        return read.func.value if isinstance(read.func, ast.Attribute) else None
    if isinstance(read, ast.Subscript):
        inner = read.value
        return inner.value if isinstance(inner, ast.Attribute) else (
            inner.func.value if isinstance(inner, ast.Call) and isinstance(inner.func, ast.Attribute) else None)
    if isinstance(read, ast.Attribute):
        return read.value
    return None


def _weight_tensor(tensor: ast.expr | None) -> bool:
    """A module's own tensor (``self.pos_embed``) or a name for a weight (``pos_embed``, ``rel_pos``)."""
    if isinstance(tensor, ast.Attribute):
        root = tensor
        while isinstance(root, ast.Attribute):
            root = root.value
        return isinstance(root, ast.Name) and root.id == "self"
    return isinstance(tensor, ast.Name) and _names_a_weight(tensor.id)


def _int(node: ast.expr | None) -> int | None:
    if isinstance(node, ast.Constant) and type(node.value) is int:
        return node.value
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub) and isinstance(node.operand, ast.Constant) \
            and type(node.operand.value) is int:
        return -node.operand.value
    return None


def _read_variation(a, read: ast.expr, depth: int) -> str:
    """One size read: VARIES or UNKNOWN."""
    if isinstance(read, ast.Name):
        return name_variation(a, read.id, depth)
    tensor = _read_tensor(read)
    if isinstance(read, ast.Call) and isinstance(read.func, ast.Name):  # len(x): its rows
        return dim_variation(a, tensor, 0, depth)
    if isinstance(read, ast.Call):  # x.size(k), x.numel()
        if read.func.attr in ("numel", "nelement"):
            return dim_variation(a, tensor, 0, depth)
        dim = read.args[0] if read.args else next((k.value for k in read.keywords if k.arg == "dim"), None)
        return dim_variation(a, tensor, _int(dim) if dim is not None else None, depth)
    if isinstance(read, ast.Subscript):  # x.shape[k], x.size()[k]
        return dim_variation(a, tensor, _int(read.slice), depth)
    return dim_variation(a, tensor, None, depth)  # a whole x.shape


def name_variation(a, name: str, depth: int = 0) -> str:
    """A name holding a size: by its name, else by what it was bound to."""
    if varying_name(name) and not (depth < _DEPTH and _model_size(a, name)):
        return VARIES
    if depth >= _DEPTH:
        return UNKNOWN
    value = a.bound_value(name)
    if value is not None:
        return variation(a, value, depth + 1) or UNKNOWN
    unpacked = _unpacked_dim(a, name)
    if unpacked is not None:
        tensor, dim = unpacked
        return dim_variation(a, tensor, dim, depth + 1)
    return UNKNOWN


def _unpacked_dim(a, name: str):
    """``b, c, h, w = x.shape`` (also ``x.size()``) at the enclosing function's top level: (x, position)."""
    for targets, value in _top_level_unpackings(a):
        tensor = None
        if isinstance(value, ast.Subscript) and isinstance(value.slice, ast.Slice) and value.slice.lower is None \
                and value.slice.step is None:
            value = value.value  # x.shape[:2]
        if isinstance(value, ast.Attribute) and value.attr == "shape":
            tensor = value.value
        elif isinstance(value, ast.Call) and isinstance(value.func, ast.Attribute) and value.func.attr == "size" \
                and not value.args and not value.keywords:
            tensor = value.func.value
        if tensor is None:
            continue
        for position, element in enumerate(targets):
            if isinstance(element, ast.Starred):
                return None
            if isinstance(element, ast.Name) and element.id == name:
                return tensor, position
    return None


def dim_variation(a, tensor: ast.expr, dim: int | None, depth: int = 0) -> str:
    """Dimension ``dim`` of ``tensor`` (None: not a constant, or several dimensions)."""
    if data_dependent(a, tensor, depth):
        return VARIES
    if dim != 0:
        return UNKNOWN
    return VARIES if _rows_vary(a, tensor, depth) else UNKNOWN


def _rows_vary(a, tensor: ast.expr, depth: int) -> bool:
    """Whether dim 0 of ``tensor`` is the batch/rows dimension of data (True unless the code shows
    otherwise)."""
    node = tensor
    for _ in range(_DEPTH):
        if isinstance(node, ast.Attribute):
            if node.attr in ("T", "mT", "H", "mH"):
                return False  # a transpose: dim 0 is another dimension
            root = node
            while isinstance(root, (ast.Attribute, ast.Subscript)):
                root = root.value
            if isinstance(root, ast.Name) and root.id == "self":
                return False  # a module's own tensor (a parameter, a buffer): fixed for the model
            return True
        if isinstance(node, ast.Subscript):
            if a.kind(node.value) not in TENSORISH:
                return True  # y[0], out["prediction"]: an item of a container, a whole tensor
            index = node.slice
            first = index.elts[0] if isinstance(index, ast.Tuple) and index.elts else index
            if not isinstance(first, ast.Slice) and not (isinstance(first, ast.Constant) and first.value is Ellipsis):
                # x[0], x[i]: a row; its dim 0 is x's dim 1
                return False
            node = node.value
            continue
        if isinstance(node, ast.Call):
            func = node.func
            qual = a.qualname(func)
            if qual in _BUILT_FROM_VALUES:
                return False
            if qual in ("torch.cartesian_prod", "torch.combinations"):
                # rows: the product (or combinations) of the inputs' rows (demucs' indices over channels)
                return any(_rows_vary(a, arg, depth + 1) for arg in node.args)
            if qual in _FACTORIES:
                first = node.args[0] if node.args else next((k.value for k in node.keywords if k.arg in ("size", "end", "n")), None)
                return first is not None and variation(a, first, depth + 1) == VARIES
            if isinstance(func, ast.Attribute):
                method = func.attr
                if method in _NEW_FACTORY_METHODS:
                    # dist.new_zeros(kernel_size, len(dist)) (piq's resize): dim 0 is the size given first
                    first = node.args[0] if node.args else next((k.value for k in node.keywords if k.arg == "size"), None)
                    if type(first) in (ast.Tuple, ast.List):
                        first = first.elts[0] if first.elts and type(first.elts[0]) is not ast.Starred else None
                    elif len(node.args) < (3 if method == "new_full" else 2):
                        return True  # new_full(batch_shape, 0): a whole shape held in a name (torchvision's batch)
                    return first is None or variation(a, first, depth + 1) == VARIES
                if method in ("t", "transpose", "permute", "movedim", "swapaxes", "swapdims", "moveaxis"):
                    if method == "t" or not _keeps_dim0(method, node):
                        return False
                    node = func.value
                    continue
                if method in _SHAPE_FOLLOWING_METHODS:
                    node = func.value
                    continue
            return True
        if isinstance(node, ast.Name):
            value = _bound(a, node.id, depth)
            if value is None:
                every = assigned_values(a.stack, node.id) if depth < _DEPTH else None
                if every is not None and (any(_refers_to(value, node.id) for value in every)
                                          or not any(_row_of(a, value) for value in every)):
                    # bound under a branch or a loop, or rebound from itself (`times = torch.linspace(0, 1, steps +
                    # 1)[:-1]`, then under a branch `times = times.flip(0)`; openunmix's `indices =
                    # torch.cartesian_prod(...)` in a loop over sources): the rows of its bindings; not a row of
                    # another tensor taken in a loop (`y_true = ys_pad[i]` in each loop over the batch: its length,
                    # the padded one, is left unknown, as a parameter's)
                    return _rows_vary_rebound(a, node.id, every, depth + 1)
                # a parameter: the rows of what it names a weight or an embedding table (``rel_pos``,
                # ``pos_embed``, ``weight``: passed a module's own parameter) are fixed for the model;
                # so are those of a model's parameters iterated (``for p in model.parameters()``)
                return not _names_a_weight(node.id) and not _parameter_loop_variable(a, node.id)
            node, depth = value, depth + 1
            continue
        return True
    return True


def _row_of(a, value: ast.expr) -> bool:
    """``ys_pad[i]``: one row of a tensor (an index, not a slice, first)."""
    if not isinstance(value, ast.Subscript) or a.kind(value.value) not in TENSORISH:
        return False
    index = value.slice
    first = index.elts[0] if isinstance(index, ast.Tuple) and index.elts else index
    return not isinstance(first, ast.Slice) and not (isinstance(first, ast.Constant) and first.value is Ellipsis)


def _refers_to(value: ast.expr, name: str) -> bool:
    return any(isinstance(n, ast.Name) and n.id == name for n in ast.walk(value))


def _rows_vary_rebound(a, name: str, values: tuple, depth: int) -> bool:
    """Rows of a name bound by several plain assignments: they vary when those of a binding not made from the
    name itself vary; a binding from the name itself must keep its rows (``times.flip(0)``, ``x.float()``)."""
    fresh = []
    for value in values:
        if not _refers_to(value, name):
            fresh.append(value)
            continue
        call = value
        while isinstance(call, ast.Call) and isinstance(call.func, ast.Attribute) \
                and call.func.attr in _ROW_KEEPING_METHODS:
            call = call.func.value
        if not (isinstance(call, ast.Name) and call.id == name):
            return True  # made from itself some other way: not followed
    return not fresh or any(_rows_vary(a, value, depth) for value in fresh)


#: methods that keep a tensor's rows (its dim 0), in number
_ROW_KEEPING_METHODS = _SHAPE_FOLLOWING_METHODS - {"view", "reshape", "squeeze", "unsqueeze", "flatten", "sort",
                                                   "index_select", "gather", "sum", "mean", "max", "min"} | {"flip", "roll"}

_PARAMETER_ITERATORS = frozenset({"parameters", "named_parameters", "buffers", "named_buffers"})


def _parameter_loop_variable(a, name: str) -> bool:
    """``p`` of ``for p in model.parameters()`` (``for n, p in model.named_parameters()``, a comprehension's
    too) around the code: a weight of the model, whose sizes the model fixes."""
    for node in reversed(a.stack):
        if isinstance(node, (ast.For, ast.AsyncFor)):
            loops = [(node.target, node.iter)]
        elif isinstance(node, (ast.ListComp, ast.SetComp, ast.GeneratorExp, ast.DictComp)):
            loops = [(g.target, g.iter) for g in node.generators]
        else:
            continue
        for target, iterable in loops:
            if not any(isinstance(n, ast.Name) and n.id == name for n in ast.walk(target)):
                continue
            return isinstance(iterable, ast.Call) and isinstance(iterable.func, ast.Attribute) \
                and iterable.func.attr in _PARAMETER_ITERATORS
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
            break
    return False


def _names_a_weight(identifier: str) -> bool:
    if varying_name(identifier):
        return False  # batch_weight, seq_bias: one per sample or step
    words = {word.lower() for word in _WORD_SPLIT.split(identifier) if word}
    if "sample" in words:
        return False  # sample_weight: one per sample
    if "weights" in words and len(words) > 1 and words.isdisjoint(_PER_ITEM_WORDS):
        return True  # scale_weights, class_weights, layer_weights: one per configured scale, class or layer
        # (a bare `weights` is as often one per sample)
    return not _WEIGHT_WORDS.isdisjoint(words) or identifier.lower().startswith(_WEIGHT_PREFIXES)


def _bound(a, name: str, depth: int) -> ast.expr | None:
    """The value ``name`` was bound to once in this function, while the depth allows following it."""
    return a.bound_value(name) if depth < _DEPTH else None


def _keeps_dim0(method: str, call: ast.Call) -> bool:
    args = [_int(arg) for arg in call.args]
    if method == "permute":
        dims = call.args[0].elts if len(call.args) == 1 and isinstance(call.args[0], (ast.Tuple, ast.List)) else call.args
        return bool(dims) and _int(dims[0]) == 0
    if len(args) >= 2:
        return 0 not in args[:2] and None not in args[:2]
    return False


def data_dependent(a, tensor: ast.expr, depth: int = 0) -> bool:
    """The tensor is (sliced, reshaped or converted from) the result of an op whose output size
    depends on the data: ``nonzero``, ``unique``, ``masked_select``, ``where(c)``, ``x[mask]``..."""
    node = tensor
    for _ in range(_DEPTH):
        if isinstance(node, ast.Name):
            value = _bound(a, node.id, depth)
            if value is None:
                # bound under a branch or more than once (`singleton_clusters = unique[counts == 1]` inside
                # an `if`): data-dependent when one of its bindings is
                every = assigned_values(a.stack, node.id) if depth < _DEPTH else None
                if every is None and depth < _DEPTH:
                    # `idx, top_x = torch.where(expert_mask[e])`, `values, counts = x.unique(return_counts=True)`:
                    # every element of a data-dependent result unpacked is as long as the data says
                    unpacked = assigned_once_from(a.stack, node.id)
                    return unpacked is not None and data_dependent(a, unpacked, depth + 1)
                return every is not None and any(data_dependent(a, v, depth + 1) for v in every)
            node, depth = value, depth + 1
            continue
        if isinstance(node, ast.Subscript):
            index = node.slice
            parts = index.elts if isinstance(index, ast.Tuple) else [index]
            if any(not isinstance(p, ast.Slice) and a.kind(p) == MASK for p in parts):
                return True
            if depth < _DEPTH and any(isinstance(p, (ast.Name, ast.Call)) and a.kind(p) in TENSORISH
                                      and data_dependent(a, p, depth + 1) for p in parts):
                return True  # x[torch.nonzero(v > z).view(-1)]: as many rows as the index has
            node = node.value
            continue
        if isinstance(node, ast.Call):
            func = node.func
            qual = a.qualname(func)
            if qual in ops.DYNAMIC_FUNCTIONS or (qual == ops.WHERE and len(node.args) == 1):
                return True
            if isinstance(func, ast.Attribute):
                if func.attr in ops.DYNAMIC_METHODS:
                    return True
                node = func.value  # x.nonzero().squeeze(1), pos.view(-1)
                continue
            return False
        return False
    return False
