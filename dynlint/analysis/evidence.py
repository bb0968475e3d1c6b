"""Evidence from use: names a function uses the way only tensors are used.

A reader who sees ``x.detach()``, ``x.new_zeros(n)``, ``x.device`` or
``torch.sigmoid(x)`` knows ``x`` holds a tensor, whatever its annotation or
its callers say.  ``tensor_names`` collects such names for one function body
(not descending into nested functions, classes or lambdas, which are scopes of
their own); the walker takes a name bound to an unknown value there as a
proven tensor.  What counts as evidence is data in ``dynlint.ops``
(``TENSOR_ONLY_METHODS``, ``TENSOR_ONLY_ATTRIBUTES``, which torch functions
take a tensor first).
"""

from __future__ import annotations

import ast
from typing import Callable

from dynlint import ops

_SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)
_TORCH_FUNCTION_NAMESPACES = ("torch.", "torch.nn.functional.", "torch.linalg.", "torch.special.", "torch.fft.")


def tensor_names(body: list[ast.stmt], qualname: Callable[[ast.AST], str | None]) -> frozenset[str]:
    found: set[str] = set()
    pending: list[ast.AST] = list(body)
    tensor_methods = ops.TENSOR_ONLY_METHODS
    tensor_attributes = ops.TENSOR_ONLY_ATTRIBUTES
    fields_of = _FIELDS
    while pending:
        node = pending.pop()
        t = type(node)
        if t in _SCOPES:
            if t is not ast.Lambda:
                pending.extend(node.decorator_list)
            continue
        if t is ast.Attribute:
            value = node.value
            if type(value) is ast.Name and node.attr in tensor_attributes and type(node.ctx) is ast.Load:
                found.add(value.id)
        elif t is ast.Call:
            func = node.func
            if type(func) is ast.Attribute:
                qual = qualname(func)
                if qual is not None:
                    if node.args:
                        _torch_arguments(node, qual, found)
                else:
                    receiver = func.value
                    if type(receiver) is ast.Name and func.attr in tensor_methods and receiver.id not in ("self", "cls"):
                        found.add(receiver.id)
            elif type(func) is ast.Name and node.args:
                qual = qualname(func)  # from torch.nn.functional import relu
                if qual is not None:
                    _torch_arguments(node, qual, found)
        fields = fields_of.get(t)
        if fields is None:  # once per node type; not a node (None in Dict.keys...): nothing below
            fields = fields_of[t] = tuple(f for f in getattr(t, "_fields", ()) if f not in _NOT_CHILDREN) \
                if isinstance(node, ast.AST) and t not in _LEAVES else ()
        for name in fields:
            value = getattr(node, name, None)
            if type(value) is list:
                pending.extend(value)
            elif value is not None and type(value) not in _LEAVES:
                pending.append(value)
    return frozenset(found)


_NOT_CHILDREN = frozenset({"ctx", "op", "ops", "type_comment", "id", "attr", "arg", "name", "level", "names",
                           "conversion", "is_async", "kind", "module", "value_kind"})
_LEAVES = frozenset({ast.Name, ast.Constant, str, int, bool})
_FIELDS: dict[type, tuple[str, ...]] = {}


def _torch_arguments(node: ast.Call, qual: str, found: set[str]) -> None:
    """``torch.f(x, ...)``: x is a tensor for most torch functions; ``F.loss(a, b)``: both;
    ``torch.cat([a, b])``: the elements."""
    if not qual.startswith(_TORCH_FUNCTION_NAMESPACES) or "._" in qual:
        return
    if qual in ops.TENSOR_SEQUENCE_FUNCTIONS:
        first = node.args[0]
        if type(first) in (ast.List, ast.Tuple):
            found.update(e.id for e in first.elts if type(e) is ast.Name)
        return
    if qual in ops.NOT_TENSOR_FIRST_FUNCTIONS or qual in ops.NON_TENSOR_TORCH \
            or qual.startswith(ops.NON_TENSOR_TORCH_PREFIXES) or qual.startswith("torch.nn.") and \
            not qual.startswith("torch.nn.functional."):
        return
    last = qual.rsplit(".", 1)[-1]
    if last[:1].isupper():
        return  # classes
    count = 2 if qual in ops.TWO_TENSOR_FUNCTIONS else 1
    for argument in node.args[:count]:
        if type(argument) is ast.Name:
            found.add(argument.id)
