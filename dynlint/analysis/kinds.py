"""What an expression is, as far as the analysis can tell: its *kind*.

A kind is a short string for the common cases and a tuple for structured ones:

* ``TENSOR``, ``MASK`` (a boolean tensor), ``SCALAR_TENSOR`` (0-d, from a full
  reduction): tensors, together ``TENSORISH``;
* ``DATA``: a Python value computed from tensor data (``.item()``, ``.tolist()``,
  ``int(t)``) — using it as a size makes shapes data-dependent;
* ``SIZE``: a static size from ``.shape``/``.size()``/``.numel()``;
* ``NDARRAY``, ``PY`` (any other plain Python value), ``MODULE`` (an ``nn.Module``),
  ``DISTRIBUTION`` (a ``torch.distributions`` object);
* ``("obj", class_id, is_module)``: an instance of a project class;
* ``("tuple", k0, k1, ...)``: a tuple whose elements have these kinds;
* ``("seq", k)`` / ``("dict", k)``: a list/sequence of / a dict with values of kind k;
* ``None``: unknown.

Certainty is kept apart from the kind: a value can be *proven* to be a tensor
(a torch op made it, an annotation says so, the code calls a tensor-only method
on it, every caller passes one) or only *maybe* a tensor (an unannotated
``forward`` parameter, a submodule's output, bound to a tensor on one path and
to ``False`` on another).  Each rule decides which certainty it needs.
"""

from __future__ import annotations

import ast

TENSOR = "tensor"
MASK = "mask"
SCALAR_TENSOR = "scalar_tensor"
DATA = "data"
SIZE = "size"
NDARRAY = "ndarray"
PY = "py"
MODULE = "module"
DISTRIBUTION = "distribution"  # a torch.distributions object: its sample()/log_prob() are tensors
OBJ = "obj"          # tag of ("obj", class_id, is_module)
TUPLE = "tuple"      # tag of ("tuple", k0, k1, ...)
SEQ = "seq"          # tag of ("seq", element kind)
DICT = "dict"        # tag of ("dict", value kind)

TENSORISH = frozenset({TENSOR, MASK, SCALAR_TENSOR})
NOT_TENSOR = frozenset({DATA, SIZE, NDARRAY, PY, MODULE, DISTRIBUTION})
# values computed from tensor data: used as a size, they make the shape data-dependent
DATA_DERIVED = frozenset({DATA, SCALAR_TENSOR, TENSOR, MASK})

Kind = "str | tuple | None"


def is_tensorish(kind) -> bool:
    return kind in TENSORISH


def is_module(kind) -> bool:
    return kind == MODULE or (type(kind) is tuple and kind[0] == OBJ and kind[2])


def is_not_tensor(kind) -> bool:
    """Known to be something other than a tensor (structured kinds included)."""
    return kind in NOT_TENSOR or type(kind) is tuple


def holds_tensor(kind) -> bool:
    """A tensor, or a container (not an object) with one among its elements."""
    if kind in TENSORISH:
        return True
    return type(kind) is tuple and kind[0] != OBJ and any(holds_tensor(part) for part in kind[1:])


def tensor_free(kind) -> bool:
    """Holds no tensor anywhere, by what it is (what an annotation promises: ``int``, ``torch.Size``,
    ``tuple[int, ...]``); unknown parts (None) are not."""
    if kind == PY:
        return True
    return type(kind) is tuple and kind[0] in (SEQ, TUPLE, DICT) and all(tensor_free(part) for part in kind[1:])


def obj_class(kind) -> str | None:
    return kind[1] if type(kind) is tuple and kind[0] == OBJ else None


def element_kind(kind):
    """Kind of what iterating or indexing (with an integer) gives."""
    if kind in TENSORISH:
        return TENSOR
    if kind in (SIZE, DATA, NDARRAY):
        return kind  # a numpy array's rows and elements (numpy scalars) are numpy values too
    if type(kind) is tuple:
        tag = kind[0]
        if tag in (SEQ, DICT):
            return kind[1]
        if tag == TUPLE:
            elements = set(kind[1:])
            return elements.pop() if len(elements) == 1 else None
    return None


def item_kind(kind, index: int | None):
    """Kind of ``value[index]`` for a constant integer index (None: not constant)."""
    if type(kind) is tuple and kind[0] == TUPLE and index is not None:
        elements = kind[1:]
        if -len(elements) <= index < len(elements):
            return elements[index]
        return None
    return element_kind(kind)


def unpacked_kinds(kind, count: int) -> list:
    """Kinds of ``a, b, ... = value`` with ``count`` targets (no starred target)."""
    if type(kind) is tuple and kind[0] == TUPLE:
        elements = kind[1:]
        return list(elements) if len(elements) == count else [None] * count
    element = element_kind(kind)
    return [element] * count


def join(a, b):
    """The kind of a value bound to ``a`` on one path and ``b`` on another, with whether
    the join is only a *maybe*: (kind, maybe)."""
    if a == b:
        return a, False
    if a in TENSORISH and b in TENSORISH:
        return TENSOR, False
    if a in TENSORISH or b in TENSORISH:
        return (a if a in TENSORISH else b), True
    if type(a) is tuple and type(b) is tuple and a[0] == b[0] == TUPLE and len(a) == len(b):
        # `return None, None` on one path, `return node_mask, edge_mask` on another: element by element
        parts = [join(x, y) for x, y in zip(a[1:], b[1:])]
        return (TUPLE, *(kind for kind, _ in parts)), any(maybe for _, maybe in parts)
    for one, other in ((a, b), (b, a)):
        # `if head is None: head = Head()`: the object whenever it is used as one
        if (is_module(one) or obj_class(one) is not None) and other in (None, PY):
            return one, True
        # `return None` on one path, a tuple of tensors on another: the tuple whenever it is unpacked
        if type(one) is tuple and one[0] == TUPLE and other in (None, PY) and any(k in TENSORISH for k in one[1:]):
            return one, True
    return None, False


def combine_binop(left, right, op: ast.operator):
    kinds = (left, right)
    if MASK in kinds and isinstance(op, (ast.BitAnd, ast.BitOr, ast.BitXor)) and all(k in (MASK, SCALAR_TENSOR, PY, TENSOR) for k in kinds):
        # `in_shard & (target >= start)`: with a mask, the other operand is a mask as well (bitwise logic on
        # integer tensors is rarely mixed with a comparison)
        return MASK
    if left == MASK and right == MASK and isinstance(op, ast.Mult):
        return MASK  # bool * bool is bool in torch: `mask * (p == True)` (vit-pytorch's MPP)
    if TENSOR in kinds or MASK in kinds:
        return TENSOR
    if SCALAR_TENSOR in kinds:
        # with a plain number, still 0-d; with anything else (an unknown operand), still a tensor
        return SCALAR_TENSOR if all(k in (SCALAR_TENSOR, PY, SIZE, DATA) for k in kinds) else TENSOR
    if NDARRAY in kinds:
        return NDARRAY
    if DATA in kinds:
        return DATA  # data-derived stays data-derived whatever the other operand
    if SIZE in kinds:
        return SIZE if all(k in (SIZE, PY) for k in kinds) else None
    if left == PY and right == PY:
        return PY
    return None


def iteration_kind(kind):
    """Kind of the loop variable of ``for v in <kind>`` (a dict yields its keys)."""
    if type(kind) is tuple and kind[0] == DICT:
        return None
    return element_kind(kind)


def relevant(kind, sizes: bool = False):
    """The part of a kind worth telling other functions about: tensors, data read from tensors,
    numpy arrays, modules, distributions and project objects, and containers of those; with ``sizes``, tensor
    sizes too (what a call passes and a function returns: ``helper(x.shape[:2])`` branching on
    them specializes the graph, DYN201).  Plain values (flags, strings) become unknown, so that
    what a walk learns from other files changes only when something that matters to the rules
    changed (fewer walks, same findings)."""
    if kind in TENSORISH or kind in (DATA, NDARRAY, MODULE, DISTRIBUTION) or (sizes and kind == SIZE):
        return kind
    if type(kind) is tuple:
        tag = kind[0]
        if tag == OBJ:
            return kind
        if tag in (SEQ, DICT):
            inner = relevant(kind[1], sizes)
            return (tag, inner) if inner is not None else None
        if tag == TUPLE:
            inner = tuple(relevant(k, sizes) for k in kind[1:])
            return (TUPLE, *inner) if any(k is not None for k in inner) else None
    return None
