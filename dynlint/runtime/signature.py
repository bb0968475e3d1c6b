"""Shape signatures of nested inputs/outputs, shared by the runtime tools.

A signature is a hashable, torch-free description of a value: tensors and
arrays by (shape, dtype, device), containers recursively, Python scalars by
value (graph compilers specialize on them) or by type.  Nothing here keeps a
reference to the value, so storing signatures never holds tensors alive.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping

TENSOR = "tensor"
ARRAY = "ndarray"
_SCALARS = (bool, int, float, complex, str, bytes, type(None))


def signature(value, scalars_by_value: bool = True, _depth: int = 0):
    """Hashable signature of ``value``.

    Tensors -> ("tensor", shape, dtype, device); numpy arrays -> ("ndarray", shape, dtype);
    list/tuple -> (type name, (items...)); mappings (dicts, BatchEncoding-like) ->
    ("dict", ((key, sig), ...)) in key order (str/int/float/bool keys as they are, others as str); dataclasses -> ("dataclass", name, fields);
    scalars -> ("scalar", value) or ("scalar", type name); anything else -> ("object", type name).
    """
    if _depth > 64:
        return ("object", "<too deep>")
    kind = _tensor_kind(value)
    if kind is not None:
        shape = tuple(int(d) for d in value.shape)
        if kind == TENSOR:
            return (TENSOR, shape, str(value.dtype), str(value.device))
        return (ARRAY, shape, str(value.dtype))
    if isinstance(value, _SCALARS):
        return ("scalar", value if scalars_by_value else type(value).__name__)
    if isinstance(value, (list, tuple)):
        items = tuple(signature(v, scalars_by_value, _depth + 1) for v in value)
        return (type(value).__name__ if type(value) in (list, tuple) else "tuple", items)
    if isinstance(value, Mapping):
        return ("dict", tuple((_key(k), signature(value[k], scalars_by_value, _depth + 1)) for k in value))
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return ("dataclass", type(value).__name__,
                tuple((f.name, signature(getattr(value, f.name), scalars_by_value, _depth + 1))
                      for f in dataclasses.fields(value)))
    return ("object", type(value).__qualname__)


def make_fast_key():
    """A function value -> hashable key equal for values of equal signature, much cheaper than
    ``signature`` (no strings): tensors by (shape, dtype, device) as torch gives them, containers
    recursively, scalars by value; anything else falls back to ``signature``.  Used once or
    twice per module call by the runtime detector."""
    import torch

    tensor = torch.Tensor
    plain = (int, float, bool, str, type(None))

    def key(value):
        kind = type(value)
        if kind is tensor or isinstance(value, tensor):
            return (value.shape, value.dtype, value.device)
        if kind is tuple or kind is list:
            return (kind, tuple([key(v) for v in value]))
        if kind is dict:
            return (dict, tuple([(k, key(v)) for k, v in value.items()]))
        if kind in plain:
            return value
        return signature(value)

    def call_key(args, kwargs):
        if kwargs:
            return (tuple([key(a) for a in args]), tuple([(k, key(v)) for k, v in kwargs.items()]))
        return tuple([key(a) for a in args])

    return key, call_key


def _key(key):
    return key if isinstance(key, (str, int, float, bool)) else str(key)


def shape_key(sig):
    """The shape-only key Gaudi's tools use for a batch: a tensor or array is ``tuple(shape)``, a
    list/tuple the tuple of its items' keys, a mapping ``((key, item key), ...)``, a scalar its value.

    So a histogram can be looked up the way Gaudi's ``data_dynamicity`` result is:
    ``hist[(4, 3, 30, 30)]`` or ``hist[((7, 1, 28, 28), (7,))]``.
    """
    if not isinstance(sig, tuple) or not sig:
        return sig
    head = sig[0]
    if head in (TENSOR, ARRAY):
        return tuple(sig[1])
    if head == "scalar":
        return sig[1]
    if head in ("list", "tuple"):
        return tuple(shape_key(item) for item in sig[1])
    if head == "dict":
        return tuple((key, shape_key(item)) for key, item in sig[1])
    if head == "dataclass":
        return tuple((name, shape_key(item)) for name, item in sig[2])
    return sig[1]


def iter_leaves(sig):
    """Yield every leaf of a signature (tensors, arrays, scalars, objects), depth first."""
    if not isinstance(sig, tuple) or not sig:
        return
    head = sig[0]
    if head in ("list", "tuple"):
        for item in sig[1]:
            yield from iter_leaves(item)
    elif head == "dict":
        for _, item in sig[1]:
            yield from iter_leaves(item)
    elif head == "dataclass":
        for _, item in sig[2]:
            yield from iter_leaves(item)
    else:
        yield sig


def iter_tensors(sig):
    """Yield every ("tensor"|"ndarray", ...) leaf of a signature."""
    for leaf in iter_leaves(sig):
        if leaf[0] in (TENSOR, ARRAY):
            yield leaf


def format_signature(sig) -> str:
    """Compact human form: tensors as [2, 3] (dtype omitted), containers with brackets."""
    if not isinstance(sig, tuple) or not sig:
        return repr(sig)
    head = sig[0]
    if head in (TENSOR, ARRAY):
        return "[" + ", ".join(str(d) for d in sig[1]) + "]"
    if head == "scalar":
        return repr(sig[1])
    if head == "list":
        return "[" + ", ".join(format_signature(s) for s in sig[1]) + "]"
    if head == "tuple":
        return "(" + ", ".join(format_signature(s) for s in sig[1]) + ")"
    if head == "dict":
        return "{" + ", ".join(f"{k}: {format_signature(s)}" for k, s in sig[1]) + "}"
    if head == "dataclass":
        return sig[1] + "(" + ", ".join(f"{k}={format_signature(s)}" for k, s in sig[2]) + ")"
    return f"<{sig[1]}>"


def _tensor_kind(value):
    module = type(value).__module__
    if module.startswith("torch") and hasattr(value, "shape") and hasattr(value, "device"):
        return TENSOR
    if module == "numpy" and hasattr(value, "shape") and hasattr(value, "dtype"):
        return ARRAY
    return None
