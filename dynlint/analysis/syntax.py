"""Small questions about stdlib ``ast`` nodes, shared by the walker and the rule units."""

from __future__ import annotations

import ast

from dynlint import ops


def last_name(node: ast.expr) -> str | None:
    """The name a ``Name`` says, or the last attribute of an ``Attribute`` (``self.mask_key``: ``mask_key``)."""
    t = type(node)
    return node.id if t is ast.Name else node.attr if t is ast.Attribute else None


def key_name(node: ast.expr) -> str | None:
    """What a dict key written here says: a string's text, or the name of a value named as a key
    (``AtomicDataDict.CELL_KEY``, ``self.norm_key``, ``edge_vec_field``); None for anything else."""
    if type(node) is ast.Constant:
        return node.value if type(node.value) is str else None
    name = last_name(node)
    return name if name is not None and ops.named_as_key(name) else None


def size_elements(node: ast.expr):
    """The sizes in a size argument: the elements of a tuple/list display, else the value itself."""
    if isinstance(node, (ast.Tuple, ast.List)):
        for element in node.elts:
            yield element.value if isinstance(element, ast.Starred) else element
    elif isinstance(node, ast.Starred):
        yield node.value
    else:
        yield node


def parameters(args: ast.arguments) -> list[ast.arg]:
    """A function's named parameters, in order (positional-only, positional, keyword-only; not ``*args``/``**kw``)."""
    return [*args.posonlyargs, *args.args, *args.kwonlyargs]


def positional_parameters(args: ast.arguments) -> list[ast.arg]:
    """A function's parameters that may be passed by position, in order (positional-only, then positional)."""
    return [*args.posonlyargs, *args.args]


def parameter_defaults(args: ast.arguments) -> list[tuple[ast.arg, ast.expr | None]]:
    """Each named parameter with its default (None when it has none), in the order of ``parameters``."""
    positional = positional_parameters(args)
    defaults = [None] * (len(positional) - len(args.defaults)) + list(args.defaults)
    return [*zip(positional, defaults), *zip(args.kwonlyargs, args.kw_defaults)]


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
    """The block always ends by raising: its last statement raises and nothing before it can leave the block
    first (``raise ValueError(...)``; ``msg = f"..."; raise ValueError(msg)``; ``logger.error(...); raise``)."""
    return bool(body) and isinstance(body[-1], ast.Raise) and not can_leave(body)


def only_exits(body: list[ast.stmt]) -> bool:
    """The block always leaves its function (ends in ``return`` or ``raise``)."""
    return bool(body) and isinstance(body[-1], (ast.Return, ast.Raise))


def can_leave(statements: list[ast.stmt]) -> bool:
    """Some statement of ``statements`` can leave the block early: a ``return`` (outside nested
    functions and classes), or a ``break``/``continue`` outside loops nested in it."""
    pending = [(statement, False) for statement in statements]
    while pending:
        node, in_loop = pending.pop()
        t = type(node)
        if t is ast.Return or (not in_loop and t in (ast.Break, ast.Continue)):
            return True
        if t in (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda):
            continue
        nested = in_loop or t in (ast.For, ast.AsyncFor, ast.While)
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.stmt, ast.excepthandler, ast.match_case)):
                # a loop's else block is not inside the loop: its break leaves the enclosing one
                inner = nested and not (t in (ast.For, ast.AsyncFor, ast.While) and child in node.orelse)
                pending.append((child, inner))
    return False


def never_falls_through(body: list[ast.stmt]) -> bool:
    """The block never reaches its end: it returns, raises, breaks or continues (or ends in an if/else
    whose every branch does)."""
    if not body:
        return False
    last = body[-1]
    if isinstance(last, (ast.Return, ast.Raise, ast.Continue, ast.Break)):
        return True
    if isinstance(last, ast.If):
        return bool(last.orelse) and never_falls_through(last.body) and never_falls_through(last.orelse)
    return False


def single_assignment(stack, name: str) -> ast.expr | None:
    """The value of ``name = value`` when that is the only binding of ``name`` in the innermost
    function of ``stack`` (the walker's stack of nodes), wherever it sits (in a loop or a branch
    too); None otherwise."""
    entry = _single_stores_of(stack).get(name)
    return entry[0] if entry is not None else None


def assigned_once_from(stack, name: str) -> ast.expr | None:
    """The right-hand side of the only binding of ``name`` in the innermost function, also when
    it unpacks (``loss, acc = self.step(x)``: the call); None when the name is bound otherwise
    (a parameter, a loop variable, twice)."""
    entry = _single_stores_of(stack).get(name)
    return entry[1] if entry is not None else None


def assigned_values(stack, name: str) -> tuple[ast.expr, ...] | None:
    """The values of every binding of ``name`` in the innermost function when each is a plain
    ``name = value`` (``sigmas = self.schedule(n)``, then ``sigmas = repeat(sigmas, ...)``), or its element
    of a display unpacked (``hiddens, targets = [], []``); None when some binding is anything else (a
    parameter, a loop variable, another unpacking, ``+=``)."""
    index = _stores_of(stack)
    return index[1].get(name) if index is not None else None


def accumulated_values(stack, name: str) -> tuple[tuple[ast.expr, ...], tuple[ast.expr, ...]] | None:
    """(plain values, augmented values) of ``name`` in the innermost function when every binding of it is
    a plain ``name = value`` or an augmented ``name += value`` and at least one is augmented (an
    accumulator: ``total = 0.``, then ``total += loss`` in a loop); None otherwise."""
    index = _stores_of(stack)
    return index[2].get(name) if index is not None else None


def appended_values(stack, name: str) -> tuple[ast.expr, ...]:
    """What the innermost function adds to the list ``name``: the argument of ``name.append(v)``, the
    elements of ``name.extend([...])`` and of ``name += [...]`` displays, and ``*v`` for ``name.extend(v)``
    of any other iterable (its elements)."""
    index = _stores_of(stack)
    return index[3].get(name, ()) if index is not None else ()


def store_count(stack, name: str) -> int:
    """How many times the innermost function (nested functions included) binds ``name``: stores to it and
    parameters so named (``b, c, h, w = x.shape`` counts once for each name); 0 outside functions."""
    index = _stores_of(stack)
    return index[4].get(name, 0) if index is not None else 0


def host_read_names(stack) -> frozenset[str]:
    """Names on which the innermost function calls ``.item()`` or ``.tolist()`` (``total.item()``)."""
    function = innermost_function(stack)
    if function is None:
        return frozenset()
    found = getattr(function, "_dynlint_host_reads", None)
    if found is None:
        found = function._dynlint_host_reads = frozenset(
            n.func.value.id for n in ast.walk(function)
            if type(n) is ast.Call and type(n.func) is ast.Attribute and n.func.attr in ops.VALUE_READING_METHODS
            and type(n.func.value) is ast.Name and not n.args)
    return found


def innermost_function(stack):
    """The innermost function (``def`` or ``async def``) of the walker's stack of nodes, or None."""
    return next((n for n in reversed(stack) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))), None)


def _single_stores_of(stack) -> dict[str, tuple]:
    """name -> (value of a plain ``name = value`` or None, the assignment's right-hand side) for the
    names bound exactly once, by an assignment, in the innermost function of ``stack``."""
    index = _stores_of(stack)
    return index[0] if index is not None else {}


def _stores_of(stack) -> tuple[dict, dict, dict, dict, dict] | None:
    """(single stores, every plain assignment, accumulators, values added to lists, binding counts) of the
    innermost function of ``stack``, built in one walk and kept on the function's node; None outside functions."""
    function = innermost_function(stack)
    if function is None:
        return None
    index = getattr(function, "_dynlint_stores", None)
    if index is None:
        index = function._dynlint_stores = _stores(function)
    return index


def _stores(function) -> tuple[dict, dict, dict, dict, dict]:
    counts: dict[str, int] = {}
    single: dict[str, tuple] = {}
    every: dict[str, list] = {}
    augmented: dict[str, list] = {}
    added: dict[str, list] = {}
    for n in ast.walk(function):
        t = type(n)
        if t is ast.Name and type(n.ctx) is ast.Store:
            counts[n.id] = counts.get(n.id, 0) + 1
        elif t is ast.arg:
            counts[n.arg] = counts.get(n.arg, 0) + 1
        elif t is ast.AugAssign and type(n.target) is ast.Name:
            augmented.setdefault(n.target.id, []).append(n.value)
            if type(n.op) is ast.Add and type(n.value) in (ast.List, ast.Tuple):
                added.setdefault(n.target.id, []).extend(n.value.elts)
        elif t is ast.Call and type(n.func) is ast.Attribute and type(n.func.value) is ast.Name and not n.keywords:
            if n.func.attr == "append" and len(n.args) == 1:
                added.setdefault(n.func.value.id, []).append(n.args[0])
            elif n.func.attr == "extend" and len(n.args) == 1 and type(n.args[0]) in (ast.List, ast.Tuple):
                added.setdefault(n.func.value.id, []).extend(n.args[0].elts)
            elif n.func.attr == "extend" and len(n.args) == 1 and type(n.args[0]) is not ast.Starred:
                # the elements of some iterable (dgllife's ``stop_targets.extend(stop_target)``, a tensor: its
                # 0-d elements): written as ``*value``
                added.setdefault(n.func.value.id, []).append(
                    ast.copy_location(ast.Starred(n.args[0], ast.Load()), n.args[0]))
        elif t is ast.Assign and len(n.targets) == 1:
            target = n.targets[0]
            if type(target) is ast.Name:
                single[target.id] = (n.value, n.value)
                every.setdefault(target.id, []).append(n.value)
            elif type(target) in (ast.Tuple, ast.List):
                # `hiddens, targets = [], []`: each name bound to its own element of a display
                pairs = type(n.value) in (ast.Tuple, ast.List) and len(n.value.elts) == len(target.elts) \
                    and not any(type(e) is ast.Starred for e in (*target.elts, *n.value.elts))
                for position, element in enumerate(target.elts):
                    if type(element) is ast.Name:
                        single[element.id] = (None, n.value)
                        if pairs:
                            every.setdefault(element.id, []).append(n.value.elts[position])
    return ({name: entry for name, entry in single.items() if counts.get(name) == 1},
            {name: tuple(found) for name, found in every.items() if counts.get(name) == len(found)},
            {name: (tuple(every.get(name, ())), tuple(found)) for name, found in augmented.items()
             if counts.get(name) == len(found) + len(every.get(name, ()))},
            {name: tuple(found) for name, found in added.items()},
            counts)
