"""Does a recorded binding still describe its names at a use, on every path?

The checker records ``m = <expr>`` (``Analyzer.binding``) so fix builders can
prove shapes: after ``m = h != 0``, ``h[m]`` masks with a mask of h's shape.
That proof holds only while neither ``m`` nor anything ``<expr>`` reads has
changed between the binding and the use, on every path between them:

* statements between the two, in source order (branches included);
* the whole body of every loop around the use that does not also hold the
  binding: on the next iteration, code after the use has run (the back-edge);
* closures: a nested function declaring ``nonlocal h`` (or any function
  declaring ``global h``) can rebind ``h`` whenever it is called;
* in-place shape changes (``h.unsqueeze_(-1)``, ``resize_``, ``t_``, ``set_``,
  ``h.data = ...``, ``out=`` arguments): they change the shape of every alias
  of the tensor, so any of them between the two (or in a function that may be
  called there) breaks every such proof;
* attribute reads (``m = self.h > 0``): an assignment to the same attribute
  chain, or a call that could assign it (a plain function, or a method of the
  same object), between the two.

The check runs lazily, only when a fix builder asks (``binding`` is rare;
assignments are many), from one cached walk of the module.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass, field

from dynlint.ops import INPLACE_SHAPE_ATTRIBUTES, INPLACE_SHAPE_METHODS, PURE_TENSOR_METHODS

# Calls that cannot rebind a local or an attribute of another object.
_HARMLESS_BUILTINS = frozenset({
    "len", "int", "float", "bool", "abs", "min", "max", "sum", "range", "isinstance", "hasattr", "getattr",
    "print", "round", "str", "repr", "tuple", "list", "dict", "set", "enumerate", "zip", "sorted", "reversed",
    "type", "id", "any", "all", "divmod", "pow", "hash", "iter", "next", "map", "filter", "format",
})

_SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef, ast.Module)
_LOOPS = (ast.For, ast.AsyncFor, ast.While)
_COMPREHENSIONS = (ast.ListComp, ast.SetComp, ast.GeneratorExp, ast.DictComp)

# event kinds
_BIND = "bind"          # a name gets a new value
_STORE = "store"        # an attribute chain gets a new value
_RESHAPE = "reshape"    # some tensor changes shape in place
_CALL = "call"          # a call that could assign attributes (plain function or method)
_NONLOCAL = "nonlocal"  # a nested function may rebind the name
_GLOBAL = "global"      # any function may rebind the module-level name


@dataclass
class _Event:
    kind: str
    key: str          # a name, a dotted attribute chain, or "" (reshape)
    start: tuple[int, int]


@dataclass
class ModuleFacts:
    """Events of one module, grouped by the scope (id of its node) whose code they are in."""
    by_scope: dict[int, list[_Event]] = field(default_factory=dict)
    # names declared nonlocal/global anywhere; scopes (ids) holding an in-place shape change
    nonlocal_names: set[str] = field(default_factory=set)
    global_names: set[str] = field(default_factory=set)
    reshaping_scopes: set[int] = field(default_factory=set)


class Cache:
    """One ``ModuleFacts`` per analyzed module, computed on first use."""

    def __init__(self) -> None:
        self.facts: ModuleFacts | None = None

    def get(self, module: ast.AST) -> ModuleFacts:
        if self.facts is None:
            self.facts = _collect(module)
        return self.facts


def binding_holds(value: ast.expr, name: str, stack: list[ast.AST], cache: Cache,
                  imported: frozenset[str] | set[str] = frozenset()) -> bool:
    """Whether ``name = value`` (a plain assignment, not under a loop or branch of the
    current scope) still describes ``name`` and everything ``value`` reads at the node
    being visited (``stack``: its ancestors, the module first, the node last).
    ``imported``: names bound to modules (``torch.float32`` is no object state)."""
    if not stack or not hasattr(value, "end_lineno"):
        return False
    facts = cache.get(stack[0])
    scope_index = max(i for i, node in enumerate(stack) if isinstance(node, _SCOPES))
    scope = stack[scope_index]
    names = {name} | {n.id for n in ast.walk(value) if type(n) is ast.Name}
    chains = _read_chains(value, imported)
    roots = {c.split(".", 1)[0] for c in chains}
    # something elsewhere, that may run at any time, changes a shape or rebinds a name
    if facts.reshaping_scopes - {id(scope)}:
        return False
    if names & facts.global_names or (not isinstance(scope, ast.Module) and names & facts.nonlocal_names):
        return False
    bound = (value.end_lineno, value.end_col_offset)  # where the binding's own target event sits
    # (start, end): events strictly inside.  The use's own statement's targets are bound after
    # the use, at its end.
    regions = [(bound, _statement_end(stack, scope_index))]
    for index in range(scope_index + 1, len(stack) - 1):
        loop, child = stack[index], stack[index + 1]
        if _repeats(loop, child, stack[index + 2] if index + 2 < len(stack) else None) \
                and not _contains(loop, bound):
            regions.append(((loop.lineno, loop.col_offset - 1), (loop.end_lineno, loop.end_col_offset + 1)))
    for event in facts.by_scope.get(id(scope), ()):
        if not any(start < event.start < end for start, end in regions):
            continue
        if event.kind == _RESHAPE:
            return False
        if event.kind == _BIND and event.key in names:
            return False
        if event.kind == _STORE and any(_overlap(event.key, chain) for chain in chains):
            return False
        if event.kind == _CALL and chains and (event.key == "" or event.key in roots):
            return False
    return True


def _read_chains(value: ast.expr, imported) -> set[str]:
    """Attribute chains ``value`` reads as data (not called, not rooted at a module)."""
    called = {id(n.func) for n in ast.walk(value) if type(n) is ast.Call}
    chains = set()
    for node in ast.walk(value):
        if type(node) is ast.Attribute and id(node) not in called:
            chain = _chain(node)
            if chain and chain.split(".", 1)[0] not in imported:
                chains.add(chain)
    return chains


# --------------------------------------------------------------------------- paths
def _statement_end(stack: list[ast.AST], scope_index: int) -> tuple[int, int]:
    """End of what runs with the use: its simple statement, or the header expression of
    a compound one (Python evaluates a statement's parts in an order that is not always
    the source order: ``a if c else b``, targets after values)."""
    for index in range(len(stack) - 1, scope_index, -1):
        node = stack[index]
        if isinstance(node, ast.stmt):
            if hasattr(node, "body") and index + 1 < len(stack):
                node = stack[index + 1]  # the header (test, iter, items) holding the use
            return (node.end_lineno, node.end_col_offset)
    node = stack[-1]
    return (getattr(node, "end_lineno", 0) or 0, getattr(node, "end_col_offset", 0) or 0)


def _repeats(node: ast.AST, child: ast.AST, grandchild: ast.AST | None) -> bool:
    """Whether ``child`` (holding the use) runs again on a later iteration of ``node``."""
    if isinstance(node, (ast.For, ast.AsyncFor)):
        return child is not node.iter and child not in node.orelse
    if isinstance(node, ast.While):
        return child not in node.orelse
    if isinstance(node, _COMPREHENSIONS):
        first = node.generators[0]
        return not (child is first and grandchild is first.iter)
    return False


def _contains(node: ast.AST, position: tuple[int, int]) -> bool:
    return (node.lineno, node.col_offset) <= position <= (node.end_lineno, node.end_col_offset)


def _chain(node: ast.AST) -> str | None:
    """``self.h.data`` -> "self.h.data"; None when not rooted at a name."""
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if not isinstance(node, ast.Name):
        return None
    parts.append(node.id)
    return ".".join(reversed(parts))


def _overlap(a: str, b: str) -> bool:
    return a == b or a.startswith(b + ".") or b.startswith(a + ".")


# --------------------------------------------------------------------------- the module walk
def _collect(module: ast.AST) -> ModuleFacts:
    facts = ModuleFacts()
    if isinstance(module, _SCOPES):
        _walk_scope(module, facts)
    return facts


def _walk_scope(scope: ast.AST, facts: ModuleFacts) -> None:
    events = facts.by_scope.setdefault(id(scope), [])
    if isinstance(scope, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
        body = scope.body if isinstance(scope.body, list) else [scope.body]
    else:
        body = scope.body
    recorded: set[int] = set()  # targets already recorded at the end of their assignment
    pending = list(reversed(body))
    while pending:
        node = pending.pop()
        if isinstance(node, _SCOPES):
            if not isinstance(node, (ast.Lambda, ast.Module)):  # def/class: the name is bound here
                events.append(_Event(_BIND, node.name, (node.lineno, node.col_offset)))
            _walk_scope(node, facts)
            continue
        if id(node) not in recorded:
            _record(node, events, facts, id(scope), recorded)
        children = list(ast.iter_child_nodes(node))
        if isinstance(node, ast.comprehension):  # its target is the comprehension's own name
            children = [c for c in children if c is not node.target]
        pending.extend(reversed(children))


def _targets(node: ast.AST) -> list[ast.AST]:
    if isinstance(node, ast.Assign):
        return node.targets
    if isinstance(node, (ast.AugAssign, ast.AnnAssign, ast.NamedExpr)):
        return [node.target]
    if isinstance(node, ast.withitem):
        return [node.optional_vars] if node.optional_vars is not None else []
    return []


def _record(node: ast.AST, events: list[_Event], facts: ModuleFacts, scope_id: int, recorded: set[int]) -> None:
    start = (getattr(node, "lineno", 0), getattr(node, "col_offset", 0))
    kind = type(node)
    targets = _targets(node)
    if targets:  # a target gets its value after the value is computed: at the end of the node
        last = node if hasattr(node, "end_lineno") else targets[-1]  # a withitem has no position
        end = (last.end_lineno, last.end_col_offset)
        for target in targets:
            for sub in ast.walk(target):
                if type(sub) in (ast.Name, ast.Attribute) and not isinstance(sub.ctx, ast.Load):
                    _record_store(sub, end, events, facts, scope_id)
                    recorded.add(id(sub))
        return
    if kind in (ast.Name, ast.Attribute) and not isinstance(node.ctx, ast.Load):
        _record_store(node, start, events, facts, scope_id)  # for targets, del
    elif kind is ast.Call:
        func = node.func
        if (isinstance(func, ast.Attribute) and func.attr in INPLACE_SHAPE_METHODS) \
                or any(k.arg == "out" for k in node.keywords):
            events.append(_Event(_RESHAPE, "", start))
            facts.reshaping_scopes.add(scope_id)
        elif isinstance(func, ast.Name):
            if func.id not in _HARMLESS_BUILTINS:
                events.append(_Event(_CALL, "", start))
        elif isinstance(func, ast.Attribute):
            # x[m].sum(): a tensor method assigns nothing (self.add(...) may be the object's own)
            if func.attr not in PURE_TENSOR_METHODS or isinstance(func.value, ast.Name):
                chain = _chain(func.value)
                events.append(_Event(_CALL, chain.split(".", 1)[0] if chain else "", start))
        else:
            events.append(_Event(_CALL, "", start))
    elif kind is ast.Nonlocal:
        facts.nonlocal_names.update(node.names)
    elif kind is ast.Global:
        facts.global_names.update(node.names)
    elif kind in (ast.Import, ast.ImportFrom):
        for alias in node.names:
            if alias.name != "*":
                events.append(_Event(_BIND, alias.asname or alias.name.split(".", 1)[0], start))
    elif kind is ast.ExceptHandler and node.name:
        events.append(_Event(_BIND, node.name, start))
    elif kind in (ast.MatchAs, ast.MatchStar) and node.name:
        events.append(_Event(_BIND, node.name, start))
    elif kind is ast.MatchMapping and node.rest:
        events.append(_Event(_BIND, node.rest, start))


def _record_store(node: ast.AST, at: tuple[int, int], events: list[_Event], facts: ModuleFacts,
                  scope_id: int) -> None:
    if type(node) is ast.Name:
        events.append(_Event(_BIND, node.id, at))
        return
    chain = _chain(node)
    if node.attr in INPLACE_SHAPE_ATTRIBUTES:
        events.append(_Event(_RESHAPE, "", at))
        facts.reshaping_scopes.add(scope_id)
    elif chain:
        events.append(_Event(_STORE, chain, at))
    else:
        events.append(_Event(_CALL, "", at))  # x[i].h = ...: some object's attribute
