"""Shared by the rules that report on weak evidence (``step_only``): what says a value may not be a tensor."""

from __future__ import annotations

import ast

from dynlint.analysis.syntax import last_name


def maybe_numpy(a, value: ast.expr) -> bool:
    """The code itself says the value may be something else than a tensor: its name is used the way only
    numpy arrays are (``x.astype(...)``, ``x.size == 1``), or an enclosing test asks what it is
    (``isinstance(x, np.ndarray)``, ``hasattr(x, "tolist") and not torch.is_tensor(x)``)."""
    root = value
    while type(root) in (ast.Attribute, ast.Subscript, ast.Call):
        root = root.func if type(root) is ast.Call else root.value
    if type(root) is not ast.Name:
        return False
    if a.used_as_numpy(root.id):
        return True
    for node in a.stack:
        if type(node) in (ast.If, ast.IfExp, ast.While) and any(
                _asks_for_an_array(a, sub, root.id) for sub in ast.walk(node.test)):
            return True
    return False


_TYPE_QUESTIONS = frozenset({"isinstance", "hasattr", "is_tensor"})


def _asks_for_an_array(a, node: ast.AST, name: str) -> bool:
    """``isinstance(name, ...)``, ``hasattr(name, ...)``, ``torch.is_tensor(name)``: the code is unsure what
    the value is (a tensor found this way is narrowed to one before the rule sees it)."""
    if type(node) is not ast.Call or not node.args or type(node.args[0]) is not ast.Name or node.args[0].id != name:
        return False
    return last_name(node.func) in _TYPE_QUESTIONS
