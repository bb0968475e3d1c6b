"""Small questions about stdlib ``ast`` nodes, shared by the walker and the rule units."""

from __future__ import annotations

import ast


def size_elements(node: ast.expr):
    """The sizes in a size argument: the elements of a tuple/list display, else the value itself."""
    if isinstance(node, (ast.Tuple, ast.List)):
        for element in node.elts:
            yield element.value if isinstance(element, ast.Starred) else element
    elif isinstance(node, ast.Starred):
        yield node.value
    else:
        yield node


def keyword(node: ast.Call, name: str) -> ast.expr | None:
    """The value passed as keyword ``name``, or None."""
    for item in node.keywords:
        if item.arg == name:
            return item.value
    return None


def keyword_node(node: ast.Call, name: str) -> ast.keyword | None:
    for item in node.keywords:
        if item.arg == name:
            return item
    return None


def has_keyword(node: ast.Call, *names: str) -> bool:
    return any(k.arg in names for k in node.keywords)


def argument(node: ast.Call, index: int, name: str) -> ast.expr | None:
    """The argument given as keyword ``name`` or at position ``index`` (None when *args hide it)."""
    value = keyword(node, name)
    if value is not None:
        return value
    positional = [a for a in node.args if not isinstance(a, ast.Starred)]
    return positional[index] if index < len(positional) and len(positional) == len(node.args) else None


def is_constant(node: ast.expr, value) -> bool:
    return isinstance(node, ast.Constant) and node.value is value if value in (None, True, False) else (
        isinstance(node, ast.Constant) and type(node.value) is type(value) and node.value == value)


def only_raises(body: list[ast.stmt]) -> bool:
    statements = [s for s in body if not (isinstance(s, ast.Expr) and isinstance(s.value, ast.Constant))]
    return bool(statements) and all(isinstance(s, ast.Raise) for s in statements)


def only_exits(body: list[ast.stmt]) -> bool:
    """The block always leaves its function (ends in ``return`` or ``raise``)."""
    return bool(body) and isinstance(body[-1], (ast.Return, ast.Raise))
