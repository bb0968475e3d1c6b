"""Dynamic spans: a rewrite from the op that starts the dynamicity to the one that ends it.

Intel Gaudi's "Handling Dynamic Shapes" guide rewrites code by "identifying
where dynamicity starts and where it ends":

    non_pad_mask = targets.ne(pad).view(-1)
    smooth_loss = smooth_loss[non_pad_mask]      # starts: a data-dependent shape
    smooth_loss = smooth_loss.sum()              # ends: a full reduction

The selection and the reduction are separate statements, so no expression-level
fix sees both.  A *span* follows the dynamic value from the statement that
starts it (a selection bound to a local name: ``x[m]``, ``masked_select``,
``torch.where(c)`` / ``nonzero`` indices) through further single-name bindings
in the same statement list (gathers, ``index_select``, casts, products of
selections) to the statement whose reduction or count consumes it, inlines
those bindings into that reduction, lets the expression-level core
(``dynlint.fixes.rewrite_reduction``) find the static form, and removes the
bindings that are then dead:

    non_pad_mask = targets.ne(pad).view(-1)
    smooth_loss = torch.where(<non_pad_mask aligned with smooth_loss>, smooth_loss, 0).sum()

A span is rewritten only when it cannot change what the rest of the function
sees:

* every read of a dynamic name (each name a span statement binds) lies inside
  the span: none before it inside a loop around it, none after it until the
  name is bound again at the same level, none in a nested function, lambda,
  class or comprehension, no ``global``/``nonlocal``/``del`` of it;
* the statements between the span's own are *quiet*: assignments of
  side-effect-free expressions to names the span neither reads nor binds (the
  inlined operands are now evaluated at the reduction instead of where they
  were bound, so nothing may change them in between);
* whatever the reducing statement evaluates before the reduction is free of
  side effects;
* each removed statement owns its lines and holds no comment (a comment after
  it stays, on its own line).

The fix is safe exactly when the inlined reduction's static form is (see
``dynlint.fixes``).  Pure ``ast``: no torch, no libcst.
"""

from __future__ import annotations

import ast
import copy

from dynlint import fixes
from dynlint.diagnostics import Edit, Fix

_FUNCTIONS = (ast.FunctionDef, ast.AsyncFunctionDef)
_NESTED_SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef, ast.ListComp, ast.SetComp,
                  ast.DictComp, ast.GeneratorExp)
_LOOPS = (ast.For, ast.AsyncFor, ast.While)
_BODY_FIELDS = ("body", "orelse", "finalbody")
_MAX_SPAN = 12  # statements from the start to the end


def span_fix(node, ancestors, ctx) -> Fix | None:
    """The span fix for the dynamic op ``node`` (a finding's node; ``ancestors`` its walker stack)."""
    position = _statement_index(ancestors)
    if position is None:
        return None
    start = ancestors[position]
    if _bound_name(start) is None or not any(sub is node for sub in ast.walk(start.value)):
        return None
    function = next((a for a in reversed(ancestors[:position]) if isinstance(a, _FUNCTIONS)), None)
    body = _body_holding(ancestors[position - 1], start) if position else None
    if function is None or body is None:
        return None
    found = _follow(body, start, ctx)
    if found is None:
        return None
    span, between, end, ending = found
    if not _quiet(between, span, ctx) or not _settled_before(end, ending.real, ctx):
        return None
    if _escapes(function, ancestors[:position], body, span, end):
        return None
    deletions = [_deletion(statement, ctx) for statement in span]
    if any(d is None for d in deletions):
        return None
    fix = _rewrite(span, ending, _Facts(ctx, _preceding_bindings(body, span, end, ctx)))
    if fix is None:
        return None
    removed = ", ".join(f"`{_bound_name(s)}`" for s in span)
    message = f"{fix.message}; inlines and removes the binding{'s' if len(span) > 1 else ''} of {removed}"
    return Fix(fix.applicability, message, tuple(fix.edits) + tuple(deletions))


# --------------------------------------------------------------------------- finding the span
class _Ending:
    """Where the span ends: a reduction (``real`` the call) or a count (``real`` the count expression)."""

    def __init__(self, real, parent, count=None):
        self.real = real
        self.parent = parent
        self.count = count  # (leaf operand node, user, is numel) for counts


def _follow(body, start, ctx):
    """(span statements, statements between them, the ending statement, _Ending) or None.

    Forward from ``start`` to the statement whose reduction (or count) consumes the dynamic
    value; then back from that reduction: other selections it combines with (``a_f = A[k]``
    and ``b_f = B[k]`` of ``(a_f * b_f).sum()``), bound by plain assignments in the same
    statement list, join the span."""
    index = next(i for i, s in enumerate(body) if s is start)
    span = [start]
    dynamic = {_bound_name(start)}
    found = None
    for later in body[index + 1: index + 1 + _MAX_SPAN]:
        reads = _reads(later, dynamic)
        if reads is None:
            return None
        if not reads:
            continue
        ending = _ending(later, reads, ctx)
        if ending is not None:
            found = later, ending
            break
        name = _bound_name(later)
        if name is None:
            return None
        span.append(later)
        dynamic.add(name)
    if found is None:
        return None
    end, ending = found
    end_index = next(i for i, s in enumerate(body) if s is end)
    span = _joined(body, end_index, span, ending, ctx)
    if span is None:
        return None
    first = min(i for i, s in enumerate(body) if any(s is t for t in span))
    between = [s for s in body[first:end_index] if not any(s is t for t in span)]
    return span, between, end, ending


def _joined(body, end_index, span, ending, ctx):
    """The span with the other selections the reduction reads (see ``_follow``), in body order."""
    operand = ending.real
    while True:
        names = {_bound_name(s) for s in span}
        read = {n.id for tree in [operand, *(s.value for s in span)] for n in ast.walk(tree)
                if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load) and n.id not in names}
        added = False
        for name in sorted(read):
            binder = next((s for s in reversed(body[:end_index]) if _binds_any(s, name)), None)
            if binder is None or _bound_name(binder) != name or any(binder is s for s in span):
                continue
            if not any(fixes._leaf(sub, ctx) is not None for sub in ast.walk(binder.value)):
                continue
            if len(span) >= _MAX_SPAN:
                return None
            span.append(binder)
            added = True
        if not added:
            break
    order = {id(s): i for i, s in enumerate(body)}
    return sorted(span, key=lambda s: order[id(s)])


def _binds_any(statement, name) -> bool:
    """Whether the statement (at this level or in a block under it) binds ``name``."""
    for node in ast.walk(statement):
        if isinstance(node, ast.Name) and node.id == name and isinstance(node.ctx, ast.Store):
            return True
    return False


def _reads(statement, names):
    """Loads of ``names`` in ``statement`` (None when one is inside a nested scope)."""
    found = []
    pending = [(statement, False)]
    while pending:
        node, nested = pending.pop()
        if isinstance(node, ast.Name) and node.id in names and not isinstance(node.ctx, ast.Store):
            if nested:
                return None
            found.append(node)
        if isinstance(node, ast.AugAssign) and isinstance(node.target, ast.Name) and node.target.id in names:
            return None
        inner = nested or isinstance(node, _NESTED_SCOPES)
        pending.extend((child, inner) for child in ast.iter_child_nodes(node))
    return found


def _ending(statement, reads, ctx):
    """The smallest reduction (or count) in ``statement`` whose operand holds every read."""
    parents = {}
    for parent in ast.walk(statement):
        for child in ast.iter_child_nodes(parent):
            parents[id(child)] = parent
    best = None
    for node in ast.walk(statement):
        if not isinstance(node, ast.Call):
            continue
        reduction = fixes._reduction(node, ctx)
        if reduction is None:
            continue
        inside = {id(sub) for sub in ast.walk(reduction[1])}
        if all(id(r) in inside for r in reads) and (best is None or _within(node, best.real)):
            best = _Ending(node, parents.get(id(node)))
    if best is not None:
        return best
    if len(reads) == 1:  # len(v), v.shape[0], v.size(0), v.numel()
        node = reads[0]
        lineage = []
        while id(node) in parents:
            node = parents[id(node)]
            lineage.append(node)
        lineage.reverse()
        target = fixes._count_target(reads[0], lineage)
        if target is not None:
            replaced, user, is_numel = target
            return _Ending(replaced, user, (reads[0], user, is_numel))
    return None


def _within(inner, outer) -> bool:
    return any(sub is inner for sub in ast.walk(outer)) and inner is not outer


def _bound_name(statement) -> str | None:
    if isinstance(statement, ast.Assign) and len(statement.targets) == 1 \
            and isinstance(statement.targets[0], ast.Name):
        return statement.targets[0].id
    return None


def _statement_index(ancestors) -> int | None:
    for index in range(len(ancestors) - 1, -1, -1):
        if isinstance(ancestors[index], ast.stmt):
            return index
    return None


def _body_holding(parent, statement):
    for name in _BODY_FIELDS:
        body = getattr(parent, name, None)
        if isinstance(body, list) and any(s is statement for s in body):
            return body
    return None


# --------------------------------------------------------------------------- conditions
def _quiet(between, span, ctx) -> bool:
    """The statements between the span's own change nothing the span reads or binds."""
    touched = set()
    for statement in span:
        touched |= {n.id for n in ast.walk(statement) if isinstance(n, ast.Name)}
    for statement in between:
        if isinstance(statement, ast.Pass) or (isinstance(statement, ast.Expr)
                                               and isinstance(statement.value, ast.Constant)):
            continue
        if not isinstance(statement, (ast.Assign, ast.AnnAssign)) or statement.value is None:
            return False
        targets = statement.targets if isinstance(statement, ast.Assign) else [statement.target]
        if not all(isinstance(t, ast.Name) and t.id not in touched for t in targets):
            return False
        if not fixes._pure(statement.value, ctx):
            return False
    return True


def _settled_before(statement, real, ctx) -> bool:
    """What ``statement`` evaluates before ``real`` has no side effects (the inlined operands are
    read at ``real`` now, not where they were bound)."""
    inside = {id(sub) for sub in ast.walk(real)}
    around = {id(node) for node in ast.walk(statement) if any(sub is real for sub in ast.walk(node))}
    start = (real.lineno, real.col_offset)
    for node in ast.walk(statement):
        if isinstance(node, ast.Call) and id(node) not in inside and id(node) not in around \
                and (node.lineno, node.col_offset) < start and not fixes._pure(node, ctx):
            return False
    return True


def _escapes(function, outer, body, span, end) -> bool:
    """Whether a dynamic name can be read outside the span (see the module docstring)."""
    names = {_bound_name(s) for s in span}
    first = span[0]
    span_nodes = set()
    for statement in [*span, end]:
        span_nodes |= {id(n) for n in ast.walk(statement)}
    loops = [a for a in _after(outer, function) if isinstance(a, _LOOPS)]
    end_index = next(i for i, s in enumerate(body) if s is end)
    rebound = {}
    for statement in body[end_index:]:
        for name in names:
            if name not in rebound and _binds(statement, name) and (statement is not end or _bound_name(end) == name):
                rebound[name] = (statement.end_lineno, statement.end_col_offset)
    for node, nested in _walk_function(function):
        if isinstance(node, (ast.Global, ast.Nonlocal)) and names & set(node.names):
            return True
        if not isinstance(node, ast.Name) or node.id not in names:
            continue
        if isinstance(node.ctx, ast.Del) or (nested and not isinstance(node.ctx, ast.Store)):
            return True
        if isinstance(node.ctx, ast.Store) or id(node) in span_nodes:
            continue
        where = (node.lineno, node.col_offset)
        if where < (first.lineno, first.col_offset):
            if any(_contains(loop, node) for loop in loops):
                return True
            continue
        if node.id in rebound and where > rebound[node.id]:
            continue
        return True
    return False


def _after(outer, function):
    """The ancestors below ``function``."""
    index = next(i for i, a in enumerate(outer) if a is function)
    return outer[index + 1:]


def _binds(statement, name) -> bool:
    if isinstance(statement, ast.Assign):
        return any(isinstance(t, ast.Name) and t.id == name for t in statement.targets)
    if isinstance(statement, ast.AnnAssign):
        return isinstance(statement.target, ast.Name) and statement.target.id == name and statement.value is not None
    return False


def _walk_function(function):
    """(node, inside a nested scope) for every node of the function's body."""
    pending = [(statement, False) for statement in function.body]
    while pending:
        node, nested = pending.pop()
        yield node, nested
        inner = nested or isinstance(node, _NESTED_SCOPES)
        pending.extend((child, inner) for child in ast.iter_child_nodes(node))


def _contains(outer, node) -> bool:
    return any(sub is node for sub in ast.walk(outer))


# --------------------------------------------------------------------------- facts before the span
class _Facts:
    """The fix context, with the values of names bound just before the span in its own statement
    list (``_preceding_bindings``) answering ``binding``/``latest_binding`` for them: the analyzer
    records values only outside branches and loops, while a span inside an ``if`` reads names
    bound in that same block (ProphetNet's ``if eps > 0: smooth_loss = -lprobs.sum(...);
    smooth_loss = smooth_loss[mask]; smooth_loss = smooth_loss.mean()``)."""

    def __init__(self, ctx, values):
        self._ctx = ctx
        self._values = values

    def binding(self, name):
        return self._values[name] if name in self._values else self._ctx.binding(name)

    def latest_binding(self, name):
        return self._values[name] if name in self._values else self._ctx.latest_binding(name)

    def __getattr__(self, name):
        return getattr(self._ctx, name)


def _preceding_bindings(body, span, end, ctx) -> dict:
    """name -> value of the plain assignments ``name = value`` that directly precede the span in
    ``body`` (back to the first statement that is not one, the latest binding of a name winning),
    whose value is free of side effects and reads no name bound again from there up to ``end``
    (nor its own name; ``end`` itself binds after its reduction), and whose name is bound again only by span statements (reads after
    those are inlined): those values still describe the names wherever the rewrite reads them."""
    start = span[0]
    index = next(i for i, s in enumerate(body) if s is start)
    end_index = next(i for i, s in enumerate(body) if s is end)
    values: dict = {}
    for position in range(index - 1, -1, -1):
        statement = body[position]
        name = _bound_name(statement)
        if name is None:
            break
        if name in values:
            continue
        read = {n.id for n in ast.walk(statement.value) if isinstance(n, ast.Name)}
        later = body[position + 1:end_index]  # (the end statement binds after its reduction)
        if name in read or any(_binds_any(s, r) for s in later for r in read) \
                or any(_binds_any(s, name) and not any(s is t for t in span) for s in later) \
                or not fixes._pure(statement.value, ctx):
            continue
        values[name] = statement.value
    return values


# --------------------------------------------------------------------------- the rewrite
_INLINED = "_dynlint_inlined"  # marks the root of an inlined copy (deepcopy keeps it)


class _Inline(ast.NodeTransformer):
    def __init__(self, values):
        self.values = values

    def visit_Name(self, node):
        if isinstance(node.ctx, ast.Load) and node.id in self.values:
            inlined = copy.deepcopy(self.values[node.id])
            setattr(inlined, _INLINED, True)
            return inlined
        return node


class _Tainted(Exception):
    """The core asked for the source text of a made-up node that holds an inlined value."""


class _Guarded:
    """The fix context for the core while it rewrites an inlined tree.  The inlined copies keep
    their originals' positions, so the source text of a node *around* an inlined value is the
    original text, which still names the removed binding (``b = a[a > 1]`` inlined gives a mask
    whose text is ``a > 1``): asking for it refuses the rewrite instead of emitting a name that
    no longer exists.  A node with no inlined value below it is the original text, and an
    inlined root stands for its own text."""

    def __init__(self, ctx, trees):
        self._ctx = ctx
        self._tainted = set()
        for tree in trees:
            for node in ast.walk(tree):
                if any(getattr(sub, _INLINED, False) for sub in ast.walk(node) if sub is not node):
                    self._tainted.add(id(node))

    def segment(self, node):
        if id(node) in self._tainted:
            raise _Tainted
        return self._ctx.segment(node)

    def __getattr__(self, name):
        return getattr(self._ctx, name)


def _nested_selection(tree, ctx) -> bool:
    """Whether a selection selects from, or with, another selection (``b = a[a > 1]`` with
    ``a = x[m]``): its static form would still read the dynamic value."""
    for node in ast.walk(tree):
        leaf = fixes._leaf(node, ctx)
        if leaf is None:
            continue
        for part in (leaf.x, leaf.m):
            if any(fixes._leaf(sub, ctx) is not None for sub in ast.walk(part)):
                return True
    return False


def _inline(node, values):
    return _Inline(values).visit(copy.deepcopy(node))


def _rewrite(span, ending, ctx) -> Fix | None:
    """The reduction (or count) with the span's bindings inlined, rewritten by the core.  The
    inlined expressions are made up for the moment: the context forgets them afterwards (its
    caches are keyed by id())."""
    values = {}
    made = []
    try:
        for statement in span:
            values[_bound_name(statement)] = _inline(statement.value, values)
            made.append(values[_bound_name(statement)])
        if ending.count is None:
            virtual = _inline(ending.real, values)
            made.append(virtual)
            if _nested_selection(virtual, ctx):
                return None
            return fixes.rewrite_reduction(virtual, ending.real, ending.parent, _Guarded(ctx, [virtual]))
        read, user, is_numel = ending.count
        selection = values.get(read.id)
        leaf = fixes._leaf(selection, ctx) if selection is not None else None
        if leaf is None or _nested_selection(selection, ctx):
            return None
        return fixes.count_selection(leaf, ending.real, user, is_numel, _Guarded(ctx, [selection]))
    except _Tainted:
        return None
    finally:
        ctx.forget([node for tree in made for node in ast.walk(tree)])


def _deletion(statement, ctx) -> Edit | None:
    """An edit removing the statement's lines (a comment after it stays, on its own line), or None
    when the statement shares its lines with other code or holds a comment."""
    line, col, end_line, end_col = ctx.position(statement)
    first, last = ctx.source_line(line), ctx.source_line(end_line)
    if first[:col].strip() or fixes._has_comment(ctx.segment(statement)):
        return None
    rest = last[end_col:]
    if not rest.strip():
        if line == 1:
            return Edit(line, 0, end_line + 1, 0, "")
        previous = ctx.source_line(line - 1)
        return Edit(line - 1, len(previous), end_line, len(last), "")
    if rest.lstrip().startswith("#"):
        return Edit(line, col, end_line, end_col + len(rest) - len(rest.lstrip()), "")
    return None
