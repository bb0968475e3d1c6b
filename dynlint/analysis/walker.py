"""The walk over one file: per-function facts (what is a tensor, where code runs) feeding every rule.

One stdlib-``ast`` pass per file, in source order.  The walker resolves imports
and aliases (project modules included), infers what each expression is (see
``dynlint.analysis.kinds``) from torch ops, annotations (unions and containers
too), tensor-only usage (``x.detach()``, ``x.device``, ``torch.sigmoid(x)``:
``evidence``), and the project table (``dynlint.analysis.facts``): what callers
pass to a function's parameters, what callees return, which project classes are
``nn.Module``s and what their ``self.<attr>`` hold.  It emits events to the
rule units (``dynlint.checks``), which report findings, and records this file's
own facts for the other files.

Each finding carries the function it stands in and, where a statement decides
it, its context: inside a training loop (``TRAIN``), or under a guard that only
runs eagerly (``HOST``: ``if not torch.compiler.is_compiling(): ...``).  The
region of the function itself comes from the project's call graph
(``dynlint.analysis.regions``).
"""

from __future__ import annotations

import ast
import contextlib
import functools
import os
import re
import sys
from dataclasses import dataclass, field

from dynlint import checks, ops
from dynlint.analysis import evidence as _evidence, rebinding
from dynlint.analysis.facts import (
    CALL, COMPILED, CPU_VALUE, DISABLED, EMPTY, FORWARD, HOST, KERNEL, NO_GRAD, REFERENCE, ROOT_COMPILED, ROOT_DRIVER, ROOT_HOST,
    ROOT_TO_HOST, ROOT_TRAIN, STEPS, TRAIN, TRAINS,
    Consumed, FileFacts, ProjectFacts, is_module_base, join_field, join_key, ref_function, ref_method, ref_module_call,
    ref_named, ref_site,
)
from dynlint.analysis.kinds import (  # noqa: F401 - the kind names are part of this module's vocabulary
    DATA, DATA_DERIVED, DICT, DISTRIBUTION, MASK, MODULE, NDARRAY, NOT_TENSOR, OBJ, PY, SCALAR_TENSOR, SEQ, SIZE, TENSOR, TENSORISH,
    TUPLE, combine_binop as _combine_binop, element_kind, holds_tensor, is_module, is_not_tensor, item_kind, join,
    obj_class, iteration_kind, relevant, tensor_free, unpacked_kinds,
)
from dynlint.analysis.modules import resolve_relative
from dynlint.analysis.syntax import (
    assigned_values, has_keyword, key_name, last_name, never_falls_through, only_exits, only_raises,
    parameter_defaults, parameters, positional_parameters, single_assignment,
)
from dynlint.tensor_api import TENSOR_API
from dynlint.diagnostics import Finding

_STRICT = bool(os.environ.get("DYNLINT_STRICT"))  # tests: let fix-builder errors surface


class _Scope:
    """Names of one function (or the module) and what they hold."""

    __slots__ = ("kinds", "bindings", "name", "id", "maybe", "partial", "bound_at", "defs", "evidence", "node",
                 "returns", "is_generator", "aliases", "self_attrs", "latest", "block_entry", "declared")

    def __init__(self, name: str, function_id: str, node: ast.AST | None = None):
        self.name = name
        self.id = function_id
        self.node = node
        self.kinds: dict[str, object] = {}
        # names that are only *maybe* tensors: good enough to type what is derived from them
        # (x.sum(), x > 0), not to judge the bare name itself (a flag, a size, a list)
        self.maybe: set[str] = set()
        # maybe-tensors that are a proven tensor on some path (a flag on the other)
        self.partial: set[str] = set()
        self.bound_at: dict[str, int] = {}  # name -> stamp of its latest (re)binding
        self.bindings: dict[str, tuple[ast.expr, int] | None] = {}  # name -> (value, stamp when bound)
        # name -> (value, stamp) of its latest binding when that is a plain one outside branches and
        # loops (a rebinding too, unlike ``bindings``): what the shape facts of fixes read
        self.latest: dict[str, tuple[ast.expr, int]] = {}
        self.defs: dict[str, str] = {}       # local def/class name -> its id
        self.evidence: frozenset[str] | None = None  # names used as tensors (computed on first need)
        self.returns: list[tuple] | None = None      # (kind, maybe) of each return statement
        self.is_generator = False
        self.aliases: dict[str, str] | None = None   # imports inside a function are its own names
        self.self_attrs: dict[str, object] | None = None  # self.<attr> assigned in this method (not __init__)
        # name -> (block, kind, maybe, partial) it held when first bound in that block (a branch or loop body)
        self.block_entry: dict[str, tuple] = {}
        # annotated parameters: name -> the kind its annotation declares (the variable's type for the
        # whole function, as a type checker reads it)
        self.declared: dict[str, object] = {}


class _ClassInfo:
    __slots__ = ("name", "id", "is_module", "is_dataset", "attr_kinds", "body_attrs", "node", "deferred", "host_class",
                 "step_registered", "function_attrs")

    def __init__(self, name: str, class_id: str, is_module: bool, is_dataset: bool, node=None):
        self.name = name
        self.id = class_id
        self.is_module = is_module
        self.is_dataset = is_dataset
        self.node = node
        # self.<attr> kinds every method sees: set by the class body and __init__ (other methods'
        # assignments reach their siblings through the project table, so each method's walk
        # depends only on the module, __init__ and the table: see Analyzer.rewalk)
        self.attr_kinds: dict[str, object] = {}
        self.body_attrs: dict[str, object] = {}  # attr_kinds before __init__ runs
        self.deferred = False                    # its methods are walked one by one (module-level class)
        self.host_class = False                  # every method runs on the host (a LightningDataModule)
        self.step_registered = False             # registered as a task utility a head runs in its loss
        self.function_attrs: dict[str, str | None] = {}  # attr -> project function __init__ stores there by name


@dataclass
class FileAnalysis:
    """What walking one file produced."""

    findings: list[Finding]
    #: per finding (same order): (id of the function it stands in, context or None, and True when it is kept
    #: only in the step (weak evidence), CPU_VALUE when the value it reads was made on the CPU (see
    #: Analyzer.report), else False)
    places: list[tuple[str, str | None, bool | str]]
    facts: FileFacts
    consumed: dict = field(default_factory=dict)   # question -> answer (see facts.Consumed)
    imports_torch: bool = False
    #: per unit of the walk (None: the module's own statements; else a function or method walked on
    #: its own): the questions it asked, with their answers (what Analyzer.rewalk needs to know)
    units: dict = field(default_factory=dict)
    walker: object = field(default=None, repr=False, compare=False)  # the Analyzer, for rewalk


class Analyzer:
    def __init__(self, lines: list[str], dynamic_ops=(), *, module: str = "", is_package: bool = False,
                 facts: ProjectFacts = EMPTY, project_roots: frozenset[str] = frozenset()):
        self.lines = lines
        self.rules = checks.load_all()
        self.dispatch = _dispatch(tuple(dynamic_ops))
        self.module = module or "<module>"
        self.is_package = is_package
        self.table = facts
        self.consumed = Consumed(facts)
        self.produced = FileFacts(self.module)
        self._in_tests = ops.is_test_module(self.module)
        # benchmarks and analysis tools: their backward passes check or analyse (see ops.CHECKING_MODULE_PARTS)
        self._no_step_functions = self._in_tests or ops.is_checking_module(self.module)
        # first components of the project's module names: calls into them are worth recording
        self.project_roots = project_roots | {self.module.split(".", 1)[0]}
        self.aliases: dict[str, str] = {}      # local name -> qualified name of a module or object
        self.imports_foreign = False           # a module-level import of another array framework (_foreign_arrays)
        self.foreign_blocks: tuple[tuple[int, int], ...] = ()  # lines of module-level blocks importing one
        self.star_imports = False              # `from <project module> import *` at module level
        self.imports_torch = False
        self.torch_alias: str | None = None
        self.module_scope = _Scope("<module>", self.module)
        self.scopes: list[_Scope] = [self.module_scope]
        self.classes: list[_ClassInfo] = []
        self.local_classes: dict[str, _ClassInfo] = {}
        self.stack: list[ast.AST] = []          # ancestors of the node being visited
        self.control_depth = 0                  # >0 inside if/for/while/try bodies of the current scope
        # if/for/while blocks being walked: (owner id, field) -> {name: what it held when the block began}
        self._flow_pending: dict[tuple, dict] = {}
        self._every_path: dict[int, dict] = {}  # an elif's names bound on every path (_rebound_on_every_path)
        self._second_pass = False               # walking a loop's body again (names it carries round)
        self.context: str | None = None         # TRAIN / HOST for the statements being visited
        self.findings: list[Finding] = []
        self.places: list[tuple[str, str | None, bool | str]] = []  # see FileAnalysis.places
        self.seen: dict[tuple[str, int, int], int] = {}  # (code, line, col) -> index in findings
        self.silenced_syncs: set[int] = set()   # id() of host-sync nodes already covered by DYN202/DYN302
        self._values_test = None  # (test, depends_on_values(test)) while the rules check one branch test
        self._tested: set[int] = set()  # id() of and/or/not/chained comparisons of a test already checked (_mark_tested)
        self._kind_cache: dict[int, object] = {}
        self._qual_cache: dict[int, str | None] = {}  # per node: names bound later do not change it
        self._temporaries: list = []            # trees parsed from strings during a walk (see _qual_cache)
        self._maybe_calls: set[int] = set()     # id() of calls whose result is only maybe what kind() says
        self._typed_maybe: set[tuple[str, str]] = set()  # (function id, name) made maybe by a type test (visit_If)
        self._none_or_tensor: set[int] = set()  # id() of maybe-tensors whose only other value is None
        self.stamp = 0                          # counts bindings, to tell which came later
        self.function_depth = 0                 # >0 while walking a function body
        self.tree: ast.AST | None = None
        self._steppers: frozenset[str] | None = None  # _step_function_names, once per file
        # module-level functions and methods: walked after the module's own statements, each on its own
        self.deferred: list[tuple] = []
        self.units: dict = {}                   # unit key -> (findings, places, facts, answers)
        self._init_of: _ClassInfo | None = None  # the class whose __init__ is being walked
        self._drivers: set[tuple] = set()       # (root, function) already noted: runs a model, moves to host
        self._rebinding = rebinding.Cache()     # what may rebind or reshape, for binding()
        #: names narrowed by an isinstance test for a block: (scope, kind, maybe, partial before, negative),
        #: so that a binding there joins with what the name was, not with the narrowed kind
        self._narrowed_from: dict[str, tuple] = {}
        # items narrowed by an isinstance test: (name, constant key) -> kind, while the block runs
        self._narrowed_items: dict[tuple, object] = {}
        #: this file's functions that return one of their parameters: qualname -> (params, returned)
        self._passthrough: dict[str, tuple] = {}
        #: module-level type aliases written as a subscript or union (``Tensorish = Union[Tensor, float]``)
        self._type_aliases: dict[str, ast.expr] = {}
        #: namedtuple classes this file makes with the factory (``State = namedtuple("State", "y t dt")``):
        #: class id -> field names
        self._namedtuples: dict[str, tuple[str, ...]] = {}
        self._comprehension_target = False      # binding a comprehension's variable (see bind)

    # ------------------------------------------------------------------ driver
    def run(self, tree: ast.AST) -> FileAnalysis:
        """Walk the file in two phases.  First the module's own statements (imports, assignments,
        class bodies, definitions): the state every function sees when it runs.  Then each
        module-level function and method body on its own (a class's ``__init__`` before its
        other methods), seeing that state, its class's ``__init__`` attributes and the table —
        so one of them can be walked again alone (``rewalk``) with the result a whole walk gives."""
        self.tree = tree
        self._steppers = None
        if isinstance(tree, ast.Module):
            self.module_scope.node = tree
            self._declare_module_names(tree.body)
            self._passthrough = {f"{self.module}.{name}": params
                                 for name, params in _passthrough_functions(tree.body).items()}
        self._begin_unit()
        # the module's own unit tells the table, for calls from other files
        self.produced.passthrough.update((qual, (params, tuple(sorted(returned))))
                                         for qual, (params, returned) in self._passthrough.items())
        self.visit(tree)
        self._end_unit(None)
        for item in self._ordered_deferred():
            self._walk_unit(item)
        return self._finish_walk()

    def rewalk(self, table: ProjectFacts, unit_keys) -> FileAnalysis:
        """Walk these functions again with a new table (the module's own statements asked
        nothing whose answer changed).  An ``__init__`` whose attributes come out different
        takes its class's other methods along."""
        self.table = table
        self._kind_cache.clear()
        self._qual_cache.clear()
        self._temporaries.clear()
        self._tested.clear()
        self._maybe_calls.clear()
        self._typed_maybe.clear()
        self._none_or_tensor.clear()
        self.silenced_syncs.clear()
        todo = set(unit_keys)
        for item in self._ordered_deferred():
            function_id, node, cls = item[0], item[1], item[2]
            if function_id not in todo:
                continue
            before = dict(cls.attr_kinds) if cls is not None and node.name == "__init__" else None
            self._walk_unit(item)
            if before is not None and before != cls.attr_kinds:
                todo.update(other[0] for other in self.deferred if other[2] is cls)
        return self._finish_walk()

    def _finish_walk(self) -> FileAnalysis:
        self._kind_cache.clear()  # per walk: a kept walker should not hold them between rounds
        self._qual_cache.clear()
        self._temporaries.clear()
        self._tested.clear()
        self._maybe_calls.clear()
        self._typed_maybe.clear()
        self._none_or_tensor.clear()
        self.silenced_syncs.clear()
        analysis = self._analysis()
        analysis.walker = self
        return analysis

    def _ordered_deferred(self) -> list[tuple]:
        ordered, placed = [], set()
        for item in self.deferred:
            cls = item[2]
            if cls is not None and id(cls) not in placed:
                placed.add(id(cls))
                ordered.extend(other for other in self.deferred if other[2] is cls and other[1].name == "__init__")
            if not (cls is not None and item[1].name == "__init__"):
                ordered.append(item)
        return ordered

    def _begin_unit(self) -> None:
        self.produced = FileFacts(self.module)
        self.findings, self.places = [], []
        self.seen = {}
        self._drivers = set()  # per unit: a unit walked again must note its driver roots again
        self.consumed = Consumed(self.table)

    def _end_unit(self, key) -> None:
        self.units[key] = (self.findings, self.places, self.produced, self.consumed.answers)

    def _walk_unit(self, item) -> None:
        function_id, node, cls, context, flags = item
        self._begin_unit()
        self.scopes = [self.module_scope]
        self.classes = [cls] if cls is not None else []
        self.stack = [self.tree] + ([cls.node] if cls is not None and cls.node is not None else []) + [node]
        self.control_depth, self.context = 0, context
        is_init = cls is not None and node.name == "__init__"
        if is_init:
            cls.attr_kinds = dict(cls.body_attrs)
            cls.function_attrs = {}
            self._init_of = cls
        try:
            self._walk_function(node, function_id, cls, flags)
        finally:
            self._init_of = None
            self.stack = []
        self._end_unit(function_id)

    def _analysis(self) -> FileAnalysis:
        findings, places, answers = [], [], {}
        facts = FileFacts(self.module)
        # dict.fromkeys: overloads (``@overload`` stubs, then the definition) share one function id
        # and one unit: count it once
        for key in dict.fromkeys([None] + [item[0] for item in self._ordered_deferred()]):
            unit = self.units.get(key)
            if unit is None:
                continue
            unit_findings, unit_places, produced, unit_answers = unit
            findings.extend(unit_findings)
            places.extend(unit_places)
            answers.update(unit_answers)
            facts.functions.update(produced.functions)
            facts.classes.update(produced.classes)
            facts.aliases.update(produced.aliases)
            facts.returns.update(produced.returns)
            facts.passthrough.update(produced.passthrough)
            facts.tensor_params.update(produced.tensor_params)
            facts.type_kinds.update(produced.type_kinds)
            facts.namedtuples.update(produced.namedtuples)
            for name, kind in produced.fields.items():
                facts.fields[name] = join_field(facts.fields.get(name), kind)
            for name, kind in produced.keys.items():
                facts.keys[name] = join_key(facts.keys.get(name), kind)
            for name, kind in produced.stores.items():
                facts.stores[name] = join_key(facts.stores.get(name), kind)
            facts.calls.extend(produced.calls)
            facts.roots.extend(produced.roots)
            for class_id, attrs in produced.attrs.items():
                merged = facts.attrs.setdefault(class_id, {})
                for name, kind in attrs.items():
                    merged[name] = kind if merged.get(name, kind) == kind else join(merged[name], kind)[0]
        units = {key: unit[3] for key, unit in self.units.items()}
        return FileAnalysis(findings, places, facts, answers, self.imports_torch, units)

    def _declare_module_names(self, body) -> None:
        """Top-level defs and classes are callable before their definition is reached."""
        for stmt in body:
            if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                self.module_scope.defs[stmt.name] = f"{self.module}.{stmt.name}"

    def visit(self, node: ast.AST) -> None:
        node_type = type(node)
        if node_type in _LEAVES:
            return
        method = _DISPATCH.get(node_type)
        self.stack.append(node)
        try:
            if method is None:
                self.generic_visit(node)
            else:
                method(self, node)
        finally:
            self.stack.pop()

    def generic_visit(self, node: ast.AST) -> None:
        node_type = type(node)
        fields = _CHILD_FIELDS.get(node_type)
        if fields is None:
            fields = _CHILD_FIELDS[node_type] = tuple(f for f in node._fields if f not in _NON_CHILD_FIELDS)
        for name in fields:
            value = getattr(node, name, None)
            if type(value) is list:
                for item in value:
                    if isinstance(item, ast.AST):
                        self.visit(item)
                        if type(item) in _TERMINATORS:
                            break  # a statement list (a try/with/except body): the rest is dead code
            elif isinstance(value, ast.AST):
                self.visit(value)

    def visit_all(self, nodes) -> None:
        for node in nodes:
            self.visit(node)

    # ------------------------------------------------------------------ reporting
    @property
    def scope(self) -> _Scope:
        return self.scopes[-1]

    def ask(self, key: tuple):
        return self.consumed.ask(key)

    def report(self, rule: checks.Rule, node: ast.AST, message: str, fix_node: ast.AST | None = None,
               with_fix: bool = True, step_only: bool = False, cpu_value: bool = False) -> None:
        """Record a finding.  ``step_only``: the finding rests on weak evidence (a value of unknown kind
        used the way tensors are), so it is kept only where the call graph puts the statement in the
        compiled or the training step, where such a value is a tensor far more often than not.
        ``cpu_value``: the value read is a tensor made on the CPU (``torch.randint(0, n, (1,)).item()``):
        outside the compiled step it syncs nothing, so a training step's read counts as host code."""
        line, col, end_line, end_col = self.position(node)
        if rule.scope is not checks.Scope.ANYWHERE and (
                self.on_error_path() or self._foreign_arrays() or self._in_foreign_block(line)):
            return  # computed only to describe a failure: the step that gets there is over anyway; or no torch here
        code = rule.code
        key = (code, line, col)
        # `t.cpu().numpy().astype(f).tolist()`: the calls of a chain start at the same place; a finding on
        # firm evidence replaces one kept only in the step
        earlier = self.seen.get(key)
        if earlier is not None and (step_only or not self.places[earlier][2]):
            return
        fix = None
        if rule.fix is not None and with_fix:
            target = fix_node or node
            ancestors = self.stack[: self.stack.index(target)] if target in self.stack else list(self.stack)
            try:
                fix = rule.fix_builder()(target, ancestors, self)
            except Exception:
                if _STRICT:
                    raise
                fix = None
        finding = Finding(code, message, line, col, end_line, end_col, fix)
        place = (self._function_id(), self.context, CPU_VALUE if cpu_value and not step_only else step_only)
        if earlier is not None:
            self.findings[earlier], self.places[earlier] = finding, place
            return
        self.seen[key] = len(self.findings)
        self.findings.append(finding)
        self.places.append(place)

    def _foreign_arrays(self) -> bool:
        """The file imports another array framework (``ops.FOREIGN_ARRAY_MODULES``: JAX, TensorFlow, Warp...) and
        not torch, at module level: its arrays are that framework's, none of this analysis's hazards."""
        return self.imports_foreign and not self.imports_torch

    def _in_foreign_block(self, line: int) -> bool:
        """The line lies in a module-level block that imports another array framework itself (scvi-tools'
        ``if is_package_installed("mlx"): import mlx.core as mx`` and the training plan defined under it): the
        arrays there are that framework's, even in a file that imports torch too."""
        return any(first <= line <= last for first, last in self.foreign_blocks)

    def on_error_path(self) -> bool:
        """The node being walked only runs when the code is about to fail: inside ``raise ...``, in an
        ``assert``'s message, or in a statement of a block that ends by raising (``if bad: print(t.sum());
        raise ...``, ``first = mask.nonzero()[0].item(); raise RuntimeError(f"... {first}")``) when nothing
        from that statement on can leave the block first (a function whose last statement raises after
        ``if ok := t.all(): return`` does not only fail).  The test
        that leads there is not on it, nor is an assert's test: under torch.compile dynamo makes it a
        runtime assertion in the graph (measured on torch 2.13), but in eager, Gaudi lazy or XLA mode
        ``assert t.all().item()`` still copies the value to the host every step."""
        stack = self.stack
        for index, node in enumerate(stack):
            t = type(node)
            if t is ast.Raise:
                return True
            if t is ast.Assert and index + 1 < len(stack) and stack[index + 1] is node.msg:
                return True
        for index in range(len(stack) - 1, 0, -1):
            if isinstance(stack[index], ast.stmt):
                statement, parent = stack[index], stack[index - 1]
                for name in ("body", "orelse", "finalbody"):
                    block = getattr(parent, name, None)
                    if type(block) is list and statement in block:
                        # the statements from this one to the block's end only end by raising
                        return only_raises(block[block.index(statement):])
                return False
        return False

    def _in_construction(self) -> bool:
        """The code being walked is a class's construction method (``__init__``, weight initialisation)."""
        for scope in reversed(self.scopes):
            node = scope.node
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                return node.name in ops.CONSTRUCTION_METHODS and bool(self.classes)
        return False

    def in_model_step(self) -> bool:
        """Whether the code being walked is a model's own step: a method of an ``nn.Module`` (not its
        construction) outside eager-only code, or a training-loop statement.  There a value of
        unknown kind that the code calls ``.item()`` on is a tensor far more often than anything else."""
        if self.context == TRAIN:
            return True
        if self.context == HOST or not self.classes or not self.classes[-1].is_module:
            return False
        for scope in self.scopes:
            node = scope.node
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                return node.name not in ops.CONSTRUCTION_METHODS
        return False

    def _function_id(self) -> str:
        for scope in reversed(self.scopes):
            if scope.node is not None or scope is self.module_scope:
                return scope.id
        return self.module

    def position(self, node: ast.AST) -> tuple[int, int, int, int]:
        line = node.lineno
        end_line = getattr(node, "end_lineno", None) or line
        col = self._char_col(line, node.col_offset)
        end_col = self._char_col(end_line, getattr(node, "end_col_offset", None) or node.col_offset)
        return line, col, end_line, end_col

    def _char_col(self, line: int, byte_col: int) -> int:
        if 0 < line <= len(self.lines):
            text = self.lines[line - 1]
            if not text.isascii():
                return len(text.encode("utf-8")[:byte_col].decode("utf-8", errors="replace"))
        return byte_col

    # FixContext -----------------------------------------------------------------
    def segment(self, node: ast.AST) -> str:
        line, col, end_line, end_col = self.position(node)
        if line == end_line:
            return self.lines[line - 1][col:end_col]
        parts = [self.lines[line - 1][col:]]
        parts.extend(self.lines[line:end_line - 1])
        parts.append(self.lines[end_line - 1][:end_col])
        return "\n".join(parts)

    def source_line(self, number: int) -> str:
        """Line ``number`` (1-based) of the file, without its line break."""
        return self.lines[number - 1] if 0 < number <= len(self.lines) else ""

    def forget(self, nodes) -> None:
        """Drop what was inferred about these nodes: expressions a fix builder made up for a
        moment (dynlint.fixspans), whose ids later nodes may reuse."""
        for node in nodes:
            self._kind_cache.pop(id(node), None)
            self._maybe_calls.discard(id(node))

    def latest_binding(self, name: str) -> ast.expr | None:
        """Like ``binding``, but also for a name bound again: its latest binding, when that is a
        plain ``name = value`` outside branches and loops of this function (it then dominates
        the code after it) and still holds here (the same checks as ``binding``).  Used for
        shape facts (``lprobs = lprobs.view(-1, v)`` fixes lprobs' rank from there on)."""
        entry = self.scope.latest.get(name)
        if entry is None or entry[1] != self.scope.bound_at.get(name):
            return None  # rebound since by a path that records no value (augmented, walrus...)
        return self._still_holds(name, *entry)

    def binding(self, name: str) -> ast.expr | None:
        entry = self.scope.bindings.get(name)
        if entry is None:
            return None
        return self._still_holds(name, *entry)

    def bound_value(self, name: str) -> ast.expr | None:
        """The value of ``name``'s only plain binding in this function (``n = x.size(0)``), without
        ``binding``'s check that the names it read still hold: for facts the check does not change
        (``n`` is the size of the batch, whatever ``x`` is bound to later), and cheap."""
        entry = self.scope.bindings.get(name)
        return None if entry is None else entry[0]

    def _still_holds(self, name: str, value: ast.expr, stamp: int) -> ast.expr | None:
        # after ``m = x > 0; x = x[:, 1:]`` m no longer describes the current x: checked here,
        # lazily, because fix builders ask rarely and assignments are many
        bound_at = self.scope.bound_at
        for sub in ast.walk(value):
            if type(sub) is ast.Name and bound_at.get(sub.id, 0) > stamp:
                return None
        # ... nor across a loop's back-edge, a closure's nonlocal, an in-place shape change
        if not rebinding.binding_holds(value, name, self.stack, self._rebinding, self.aliases.keys()):
            return None
        return value

    # ------------------------------------------------------------------ names
    def qualname(self, node: ast.AST) -> str | None:
        """Fully qualified name of a Name/Attribute chain rooted at an import or a definition
        of this project, else None."""
        key = id(node)
        cache = self._qual_cache
        if key in cache:
            return cache[key]
        result = cache[key] = self._qualname(node)
        return result

    def _qualname(self, node: ast.AST) -> str | None:
        if isinstance(node, ast.Name):
            name = node.id
            for scope in reversed(self.scopes):
                if scope.aliases is not None and name in scope.aliases:
                    return scope.aliases[name]
                if name in scope.defs:
                    return scope.defs[name]
                if name in scope.kinds:
                    return None  # a local binding hides the import or builtin of the same name
            if name in self.aliases:
                return self.aliases[name]
            if name in _BUILTIN_NAMES:
                return name
            if self.star_imports:
                return f"{self.module}.{name}"  # maybe a name a project module's `import *` brought
            return None
        if isinstance(node, ast.Attribute):
            base = self.qualname(node.value)
            return f"{base}.{node.attr}" if base else None
        return None

    def lookup(self, name: str):
        for scope in reversed(self.scopes):  # closures see their enclosing functions' names
            if name in scope.kinds:
                return scope.kinds[name]
        return None

    def _is_maybe(self, name: str) -> bool:
        for scope in reversed(self.scopes):
            if name in scope.kinds:
                return name in scope.maybe
        return False

    def _rebound(self, name: str) -> None:
        """``name`` gets a new value (see ``binding``)."""
        self.stamp += 1
        self.scope.bound_at[name] = self.stamp

    def bind(self, target: ast.AST, kind, value: ast.expr | None = None, maybe: bool | None = None) -> None:
        if isinstance(target, ast.Name):
            scope = self.scope
            name = target.id
            if scope is self.module_scope and name in self.aliases and _is_constant_none(value) \
                    and any(type(node) is ast.ExceptHandler for node in self.stack):
                # `try: from flash_attn.bert_padding import unpad_input / except ImportError: unpad_input = None`:
                # the fallback of an optional import; where the name is called, it is the import
                return
            if self._narrowed_items:
                # `y = (...)` inside `if isinstance(y[0], tuple):` — what the test said of y[0] no longer holds
                stale = [key for key in self._narrowed_items if key[0] == name]
                if stale:
                    for key in stale:
                        del self._narrowed_items[key]
                    self._kind_cache.clear()
            if maybe is None:
                maybe = value is not None and self.uncertain(value)
            if kind is None and name in self._scope_evidence():
                # used as a tensor (x.detach(), torch.sigmoid(x), ...); a comprehension's variable only
                # maybe: its name (x, t, i) is often another value's elsewhere in the function; a tensor made by
                # comparing is a mask (easyocr's `pos_index = (gt == 1) * (m == 1)`, then `pred[pos_index]`)
                kind, maybe = MASK if _compares(value) else TENSOR, self._comprehension_target
            elif maybe and kind in TENSORISH and type(value) in (ast.Subscript, ast.Attribute) \
                    and id(value) in self._maybe_calls and name in self._scope_evidence():
                # `exp_avg_sq = state["exp_avg_sq"]` (maybe what the project stores under the key) used as a
                # tensor here: the use confirms it
                maybe = False
            elif kind is None and name + _evidence.DICT_MARK in self._scope_evidence():
                kind = (DICT, TENSOR)  # torch.bmm(feats["atom_to_token"], ...): a dict of tensors
            if kind is None and value is None and name in scope.declared:
                # `images, targets = self.transform(images, targets)` with `targets: Optional[List[Dict[str,
                # Tensor]]]` declared: an untyped part of an unpacked result keeps the declared type, only
                # maybe; a whole value assigned is not judged by it (`x: list[Tensor]`, then
                # `x = self.embedders[k](torch.cat(x))`: a tensor now)
                kind, maybe = scope.declared[name], True
            if kind in (None, TENSOR) and name in self._scope_masks():
                kind = MASK  # used as a mask (~keep, x.masked_fill(keep, 0), torch.where(keep, a, b))
            partial = False
            key = self._block_key() if self.control_depth else None
            pending = self._flow_pending.get(key) if key is not None else None
            if pending is not None:
                # in an if/for/while block a binding holds exactly its value until the block ends (uses
                # it dominates see it: idx = t.nonzero(); for ...: idx = f(); if idx > 0:); what the name
                # held when the block began joins in when the block ends (_flow_block)
                if name not in pending:
                    pending[name] = self._entry_state(scope, name)
            elif key is not None:
                # a later binding in the same block replaces an earlier one there: it joins with what
                # the name held when the block began, not with that earlier binding (n = t * c; n = int(n))
                entry = scope.block_entry.get(name)
                if entry is not None and entry[0] == key:
                    _, previous, was_maybe, was_partial = entry
                else:
                    _, previous, was_maybe, was_partial = self._entry_state(scope, name)
                    scope.block_entry[name] = (key, previous, was_maybe, was_partial)
                if previous is not _UNBOUND and previous != kind:
                    kind, maybe, partial = _join_paths(previous, was_maybe, was_partial, kind, maybe, False)
            else:
                scope.block_entry.pop(name, None)
            if not partial and maybe and value is not None and (
                    (kind in TENSORISH and self.on_some_path(value))
                    or (kind == DATA and self.on_some_path(value, DATA_DERIVED))):
                partial = True  # n = m * 2 where m is a tensor (or data read from one) on one path: so is n
            scope.kinds[name] = kind
            if maybe:
                scope.maybe.add(name)
            else:
                scope.maybe.discard(name)
            if partial:
                scope.partial.add(name)
            else:
                scope.partial.discard(name)
            scope.defs.pop(name, None)
            self._rebound(name)
            plain = value is not None and self.control_depth == 0 and self._is_plain_assignment()
            if plain and name not in scope.bindings:
                scope.bindings[name] = (value, self.stamp)
            else:  # rebound, or bound under a branch/loop: the value at a later point is not known
                scope.bindings[name] = None
            if plain:
                scope.latest[name] = (value, self.stamp)
            else:
                scope.latest.pop(name, None)
        elif isinstance(target, (ast.Tuple, ast.List)):
            items = target.elts
            starred = any(isinstance(item, ast.Starred) for item in items)
            parts = [element_kind(kind)] * len(items) if starred else unpacked_kinds(kind, len(items))
            fields = self._namedtuples.get(obj_class(kind)) if self._namedtuples and not starred else None
            if fields is not None and len(fields) == len(items):
                # y0, f0, _, t0, dt, coeff = rk_state: each field holds what constructions put there
                parts = [self.ask(("attr", obj_class(kind), field)) for field in fields]
            if value is not None and self._is_module_call(value) and not self._known_call(value):
                parts = [None] * len(items)  # out, (h, c) = self.lstm(x): the parts' types are unknown
            if type(value) in (ast.Tuple, ast.List) and not starred and len(value.elts) == len(items):
                for item, part in zip(items, value.elts):  # a, b = (torch.stack(p), q)
                    self.bind(item, self.kind(part), part if not isinstance(part, ast.Starred) else None)
                return
            if maybe is None:  # (`for a, b in rows:` of a maybe-tensor passes it: the rows only maybe hold tensors)
                maybe = value is not None and self.uncertain(value)
            for item, part in zip(items, parts):
                if isinstance(item, ast.Starred):
                    self.bind(item.value, None)
                else:
                    self.bind(item, part, maybe=maybe and part in TENSORISH)
            if type(value) is ast.Call and not starred and self.control_depth == 0 and self._unpacks(target):
                self._note_unpacked(items, value)
        elif isinstance(target, ast.Attribute) and isinstance(target.value, ast.Name) and target.value.id == "self":
            # Only submodules, project objects and tensors are worth remembering: other attributes set in
            # __init__ are configuration, constant by the time forward runs.
            if self.classes:
                if kind in TENSORISH and self._init_of is not None and value is not None and self.uncertain(value) \
                        and not _defines(self.classes[-1].node, target.attr) \
                        and type(self.stack[-1]) is not ast.AnnAssign:
                    # `self.atom_types = atom_types` of a `Union[ArrayLike, Tensor]` parameter (deepchem's
                    # AtomicConvolution, given a list of atomic numbers): configuration that only maybe is a tensor
                    # (not through a property's setter: captum's `token_attr` setter makes it one)
                    kind = None
                self._set_self_attr(self.classes[-1], target.attr,
                                    kind if kind is None or relevant(kind) is not None else PY)
                if self._init_of is self.classes[-1]:
                    self._note_function_attr(self.classes[-1], target.attr, value)
        elif isinstance(target, ast.Attribute) and kind in TENSORISH and value is not None \
                and (type(value) is ast.BoolOp or not self.uncertain(value)):  # (`flag and mask`: False or the mask)
            owner = obj_class(self.kind(target.value))
            if owner is not None and self._is_project(owner):
                # `self.swav_criterion.use_queue = (... and self.swav_criterion.num_iteration >= k)` (vissl): the
                # other class's `self.use_queue`, False since its __init__, is also this tensor
                attrs = self.produced.attrs.setdefault(owner, {})
                attrs[target.attr] = join(attrs[target.attr], kind)[0] if attrs.get(target.attr) else kind

    def _entry_state(self, scope: "_Scope", name: str) -> tuple:
        """(scope, kind, maybe, partial) of ``name`` where a block begins (_UNBOUND kind: not bound)."""
        if name not in scope.kinds:
            return scope, _UNBOUND, False, False
        previous = scope.kinds[name]
        narrowed = self._narrowed_from.get(name) if self._narrowed_from else None
        if narrowed is not None and narrowed[0] is scope:
            if narrowed[4]:
                previous = narrowed[1]  # what it was before `else:` of an isinstance test
            else:
                # `if isinstance(done, Tensor): done = done.item()`: the path that skips the body never
                # held the tensor the test narrowed to, it holds what the name held before the test
                return narrowed[:4]
        return scope, previous, name in scope.maybe, name in scope.partial

    def _flow_block(self, owner: ast.AST, field: str, statements, ends: dict | None = None) -> list[str]:
        """Walk one block of an if/for/while: its bindings join what the names held before it at its end.
        Returns the names the block made tensors that held something else before it.  ``ends``, when
        given, receives what each name the block bound (in the current function) held at its end,
        before the join, and when the block began: (kind, maybe, partial, previous, was_maybe,
        was_partial)."""
        became: list[str] = []
        key = (id(owner), field)
        outer = self._flow_pending.get(key)
        self._flow_pending[key] = {}
        try:
            self._visit_block(statements)  # `if is_compiling(): return ...` in a branch too
        finally:
            pending = self._flow_pending.pop(key)
            if outer is not None:
                self._flow_pending[key] = outer
            for name, (scope, previous, was_maybe, was_partial) in pending.items():
                if previous is _UNBOUND or name not in scope.kinds:
                    continue
                kind = scope.kinds[name]
                if ends is not None and scope is self.scope:
                    ends[name] = (kind, name in scope.maybe, name in scope.partial, previous, was_maybe, was_partial)
                if previous == kind:
                    continue
                if kind in TENSORISH and previous not in TENSORISH and scope is self.scope:
                    became.append(name)
                kind, maybe, partial = _join_paths(previous, was_maybe, was_partial, kind, name in scope.maybe,
                                                   name in scope.partial)
                scope.kinds[name] = kind
                (scope.maybe.add if maybe else scope.maybe.discard)(name)
                (scope.partial.add if partial else scope.partial.discard)(name)
        return became

    def _block_key(self) -> tuple:
        """The statement list holding the statement being walked: (its owner, the field)."""
        stack = self.stack
        for i in range(len(stack) - 1, 0, -1):
            node = stack[i]
            if isinstance(node, ast.stmt):
                parent = stack[i - 1]
                for name in ("body", "orelse", "finalbody"):
                    statements = getattr(parent, name, None)
                    if type(statements) is list and any(s is node for s in statements):
                        return id(parent), name
                return id(parent), ""
        return 0, ""

    def _own_attrs(self, info: "_ClassInfo") -> dict:
        """Where ``self.<attr> = value`` goes: the class's shared attributes in its body and
        ``__init__`` (and in classes defined inside functions, walked in one piece), else the
        method's own (siblings learn them through the project table)."""
        if self.function_depth == 0 or self._init_of is info or not info.deferred:
            return info.attr_kinds
        for scope in reversed(self.scopes):
            if scope.node is not None and "self" in scope.kinds:
                if scope.self_attrs is None:
                    scope.self_attrs = {}
                return scope.self_attrs
        return info.attr_kinds

    def _set_self_attr(self, info: "_ClassInfo", attr: str, remembered) -> None:
        attrs = self._own_attrs(info)
        if attr in attrs and attrs[attr] != remembered:
            # None in __init__, a mask once computed: a tensor whenever it is used as one
            remembered = join(attrs[attr], remembered)[0]
        attrs[attr] = remembered
        # what an object of unknown class holds under this name, as far as the project's stores agree (a value
        # of unknown kind, `self.lefts = lefts`, could be anything: no agreement)
        stores = self.produced.stores
        stores[attr] = join_key(stores.get(attr), remembered if remembered in TENSORISH else PY)
        shared = relevant(remembered)
        if shared is not None or attr in self.produced.attrs.get(info.id, ()):
            self.produced.attrs.setdefault(info.id, {})[attr] = shared

    def _self_attr(self, info: "_ClassInfo", attr: str):
        """(known, kind) of ``self.<attr>`` here: set earlier in this method, by the class, or not."""
        for scope in reversed(self.scopes):
            if scope.node is not None and "self" in scope.kinds:
                if scope.self_attrs is not None and attr in scope.self_attrs:
                    return True, scope.self_attrs[attr]
                break
        if attr in info.attr_kinds:
            return True, info.attr_kinds[attr]
        return False, None

    def _set_in_this_method(self, attr: str) -> bool:
        for scope in reversed(self.scopes):
            if scope.node is not None and "self" in scope.kinds:
                return scope.self_attrs is not None and attr in scope.self_attrs
        return False

    def bound_to_sequence(self, name: str) -> bool:
        """Whether the current function binds ``name`` to a list or tuple display, a list comprehension
        or ``list(...)``/``tuple(...)`` somewhere (``parts = [(0, n)]`` inside a branch)."""
        node = self.scope.node
        if node is None:
            return False
        names = getattr(node, "_dynlint_sequences", None)
        if names is None:
            found = set()
            for sub in ast.walk(node):
                if type(sub) is ast.Assign and len(sub.targets) == 1 and type(sub.targets[0]) is ast.Name:
                    value = sub.value
                    if type(value) in (ast.List, ast.Tuple, ast.ListComp) or (
                            type(value) is ast.Call and type(value.func) is ast.Name and value.func.id in ("list", "tuple")):
                        found.add(sub.targets[0].id)
            names = node._dynlint_sequences = frozenset(found)
        return name in names

    def _scope_masks(self) -> frozenset[str]:
        """Names the current function uses as boolean masks (computed once per function)."""
        scope = self.scope
        node = scope.node
        if node is None:
            return frozenset()
        masks = getattr(node, "_dynlint_masks", None)
        if masks is None:
            masks = node._dynlint_masks = _evidence.mask_names(self._body_text(node), self._aliases_here(),
                                                                self._is_local_name)
        return masks

    def _scanned_names(self, attr: str, scan) -> frozenset[str]:
        """``scan(text)`` of the current function's body, computed once per function and kept on its node
        under ``attr`` (a file walked again in a later round rescans nothing)."""
        node = self.scope.node
        if node is None:
            return frozenset()
        names = getattr(node, attr, None)
        if names is None:
            names = scan(self._body_text(node))
            setattr(node, attr, names)
        return names

    def _scope_sizes(self) -> frozenset[str]:
        """Names the current function gives as sizes to shape methods."""
        return self._scanned_names("_dynlint_sizes", _evidence.size_names)

    def used_as_numpy(self, name: str) -> bool:
        """Whether the current function uses ``name`` the way only numpy arrays are used (``x.astype(...)``,
        ``x.size`` as an attribute)."""
        return name in self._scanned_names("_dynlint_numpy", _evidence.numpy_names)

    def _aliases_here(self) -> dict[str, str]:
        aliases = self.aliases
        if any(other.aliases for other in self.scopes):
            aliases = {**aliases}
            for other in self.scopes:
                aliases.update(other.aliases or {})
        return aliases

    def _scope_evidence(self) -> frozenset[str]:
        """Names the current function uses as tensors (computed once per function, on first need)."""
        scope = self.scope
        if scope.evidence is None:
            node = scope.node
            # kept on the tree: a file walked again in a later round (same tree) does not rescan
            evidence = getattr(node, "_dynlint_evidence", None)
            if evidence is None:
                evidence = _evidence.tensor_names(self._body_text(node), self._aliases_here(), self._is_local_name) \
                    if node is not None else frozenset()
                if node is not None:
                    node._dynlint_evidence = evidence
            if node is not None and not isinstance(node, ast.Module):
                passed = self._passed_to_tensor_parameters(node)
                if passed:
                    evidence = evidence | passed
            scope.evidence = evidence
        return scope.evidence

    def _passed_to_tensor_parameters(self, node) -> frozenset[str]:
        """Names the function passes to a project helper whose own code shows that parameter to be a tensor
        (unimol-tools' `trn_loss.append(float(loss.data))`, then `self._backward_and_step(optimizer, loss,
        model)` whose body calls `loss.backward()`): a tensor wherever the function uses them, before the call
        too (``_learn_from_callee`` types a name from the call on).  The calls are found in the body's text
        (kept on the tree); which parameters are tensors is the project's answer, asked on every round."""
        calls = getattr(node, "_dynlint_helper_calls", None)
        if calls is None:
            # the callee as a node of its own, kept with the tree (the kinds cache is keyed by node identity)
            calls = node._dynlint_helper_calls = [
                (ast.Attribute(ast.Name("self", ast.Load()), callee[5:], ast.Load()) if callee.startswith("self.")
                 else ast.Name(callee, ast.Load()), positional, keywords)
                for callee, positional, keywords in _evidence.helper_calls(self._body_text(node))]
        found = set()
        for func, positional, keywords in calls:
            ref = self._callee_ref(func)
            if ref is None:
                continue
            answer = self.ask(("targs", ref))
            if not answer:
                continue
            positions, keyword_names = answer
            found.update(name for i, name in enumerate(positional) if name is not None and i in positions)
            found.update(name for key, name in keywords if key in keyword_names)
        # not the function's parameters: a configured size passed to a helper that takes a tensor in one branch
        # and a pair or a number in another (dgl's `expand_as_pair(in_feats)` in a layer's __init__) is what
        # its callers pass; ``_learn_from_callee`` still types one from the call on
        found.difference_update(parameter.arg for parameter in parameters(node.args))
        return frozenset(found)

    def _body_text(self, node) -> str:
        """The source of a function's body (without its docstring), or of a module's own statements."""
        body = getattr(node, "body", None) or []
        if isinstance(node, ast.Module):
            spans = [(s.lineno, s.end_lineno) for s in body
                     if not isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))]
        else:
            if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
                body = body[1:]
            spans = _spans_without_nested_scopes(body)
        lines = self.lines
        return "\n".join("\n".join(lines[start - 1:end]) for start, end in spans)

    def _is_local_name(self, name: str) -> bool:
        return any(name in scope.kinds for scope in self.scopes)

    # ------------------------------------------------------------------ kinds
    def kind(self, node: ast.AST):
        key = id(node)
        cache = self._kind_cache
        if key in cache:
            return cache[key]
        result = self._infer(node)
        cache[key] = result
        return result

    def _is_module_call(self, node: ast.AST) -> bool:
        return type(node) is ast.Call and self.qualname(node.func) is None and is_module(self.kind(node.func))

    def _known_call(self, node: ast.Call) -> bool:
        """The call's result kind comes from the project table (not a guess)."""
        return id(node) not in self._maybe_calls and self.kind(node) is not None

    def value_kind(self, node: ast.AST):
        """Kind of an expression judged as a value in its own right (a branch test, a size, an
        iterable): what derives from a maybe-tensor without confirming it counts as unknown."""
        if self.uncertain(node):
            return None
        return self.kind(node)

    def uncertain(self, node: ast.AST) -> bool:
        """True when the expression's tensor-ness rests only on a *maybe* (an unannotated forward()
        parameter, a submodule's result, a name bound to a tensor on one path only).  Calling a
        tensor method or reading .shape confirms it; indexing, arithmetic and int()/len() do not
        (``window_size[0] * 2`` is fine for a tuple too)."""
        t = type(node)
        if t is ast.Name:
            return self._is_maybe(node.id)
        if t is ast.Subscript:
            if self.uncertain(node.value):
                return True
            self.kind(node)
            return id(node) in self._maybe_calls
        if t is ast.BinOp:
            left, right = self.uncertain(node.left), self.uncertain(node.right)
            if left and right:
                return True
            if left or right:
                # `longest - len(item)`: data (or a tensor) on the sure side decides the result whatever
                # the other side is
                sure = self.kind(node.right if left else node.left)
                return sure != DATA and sure not in TENSORISH
            return False
        if t is ast.UnaryOp:
            return self.uncertain(node.operand)
        if t is ast.Tuple and self._typed_maybe:
            # `return domain, codomain` of names a type test made only maybe tensors (see visit_If): what
            # callers unpack is only maybe one (a submodule's maybe output in a tuple stays as it was)
            scope = self.scope.id
            return any(type(e) is ast.Name and (scope, e.id) in self._typed_maybe and self._is_maybe(e.id)
                       for e in node.elts)
        if t is ast.Compare:
            # `beam_size > 1` of a maybe-tensor parameter is a maybe too (a bool when it is an int), unless
            # a sure tensor takes part (`lengths > k`)
            operands = (node.left, *node.comparators)
            if not any(self.uncertain(operand) for operand in operands):
                return False
            return not any(self.kind(operand) in TENSORISH and not self.uncertain(operand) for operand in operands)
        if t is ast.BoolOp:
            return len({self.kind(v) for v in node.values}) > 1
        if t is ast.Call:
            if type(node.func) is ast.Name and node.func.id in _VALUE_BUILTINS:
                return any(self.uncertain(a) for a in node.args)
            self.kind(node)
            return id(node) in self._maybe_calls
        if t is ast.Attribute and type(node.value) is ast.Name:
            self.kind(node)  # `self.mask` set to None elsewhere; `batch.n_node` of an unknown object
            return id(node) in self._maybe_calls
        return False

    def _forward_kwargs(self, name: str) -> bool:
        """``name`` is the ``**kwargs`` of the forward being walked, not rebound (see _bind_parameters)."""
        function = self.scope.node
        return type(function) in (ast.FunctionDef, ast.AsyncFunctionDef) and function.name == "forward" \
            and function.args.kwarg is not None and function.args.kwarg.arg == name and name in self.scope.maybe

    def none_or_tensor(self, node: ast.AST) -> bool:
        """A maybe-tensor whose only other value is None: a buffer that a torch.nn layer registers only
        when built with it (``num_batches_tracked``).  ``float()``/``int()`` of None raise, so where the
        code converts it, it is a tensor."""
        return type(node) is ast.Attribute and self.kind(node) in TENSORISH and id(node) in self._none_or_tensor

    def none_by_default(self, node: ast.AST) -> bool:
        """A parameter of this function that defaults to None, not rebound up to here: passing it on
        (``maybe_num_nodes(edge_index, num_nodes)`` in ``def conv(edge_index, num_nodes=None)``) passes
        None whenever the caller leaves it out."""
        if type(node) is not ast.Name or self.scope.bound_at.get(node.id):
            return False
        function = self.scope.node
        if type(function) not in (ast.FunctionDef, ast.AsyncFunctionDef):
            return False
        return any(arg.arg == node.id and default is not None and _is_constant_none(default)
                   for arg, default in parameter_defaults(function.args))

    def on_some_path(self, node: ast.AST, kinds=TENSORISH) -> bool:
        """Whether the value is, on some path, a proven tensor: a name bound to a tensor in one
        branch and to something else in another (or what is computed from it).  Rules that
        judge a value (a branch test, a conversion to int) report those too: on that path the
        hazard is real.  The size rules ask with ``kinds=DATA_DERIVED``: data read from a tensor
        on some path (``.tolist()`` in one branch, a configured tuple in the other) counts too."""
        t = type(node)
        if t is ast.Name:
            for scope in reversed(self.scopes):
                if node.id in scope.kinds:
                    return node.id in scope.partial and scope.kinds[node.id] in kinds
            return False
        if t is ast.UnaryOp:
            return self.on_some_path(node.operand, kinds)
        if t is ast.BoolOp:
            return any(self.value_kind(v) in kinds or self.on_some_path(v, kinds) for v in node.values)
        if t is ast.BinOp:
            return self.on_some_path(node.left, kinds) or self.on_some_path(node.right, kinds)
        if t is ast.Compare:
            return any(self.on_some_path(v, kinds) for v in [node.left, *node.comparators])
        if t is ast.Subscript or (t is ast.Call and type(node.func) is ast.Attribute):
            return self.on_some_path(node.value if t is ast.Subscript else node.func.value, kinds) and \
                self.kind(node) in kinds
        if t is ast.Attribute and type(node.value) is ast.Name and node.value.id == "self" and self.classes \
                and self.classes[-1].node is not None and self.kind(node) in kinds and id(node) in self._maybe_calls:
            # `self.use_queue = False` in __init__, a comparison of tensors stored there by other code (vissl's
            # SwAV loss): a flag that is a tensor on that path
            stores = _self_attr_values(self.classes[-1].node).get(node.attr, ())
            return any(type(value) is ast.Constant and type(value.value) is bool for value, _ in stores)
        return False

    def _infer(self, node: ast.AST):
        t = type(node)
        if t is ast.Name:
            return self.lookup(node.id)
        if t is ast.Constant:
            return PY
        if t is ast.Tuple:
            return self._infer_display(node)
        if t is ast.List:
            kinds = {self.kind(e) for e in node.elts if not isinstance(e, ast.Starred)}
            if DATA in kinds and kinds <= {DATA, PY, SIZE}:
                return DATA  # [t.item() + 1]: Python values read from a tensor, as t.tolist() is
            return (SEQ, _display_element(kinds)) if kinds and kinds <= TENSORISH else PY
        if t is ast.Dict:
            # {"should_apply": p.to(dtype=torch.bool)}: a dict of masks, whose entries index as masks
            kinds = {self.kind(v) for v in node.values}
            return (DICT, _display_element(kinds)) if kinds and kinds <= TENSORISH and None not in node.keys else PY
        if t is ast.ListComp or t is ast.GeneratorExp:
            element = self.kind(node.elt)  # [m[i] for i in range(n)]: a list of tensors
            return (SEQ, TENSOR) if element in TENSORISH else PY
        if t in _PY_DISPLAYS:
            return PY
        if t is ast.Attribute:
            return self._infer_attribute(node)
        if t is ast.Call:
            return self._infer_call(node)
        if t is ast.Subscript:
            if self._narrowed_items:
                key = _item_key(node)
                if key is not None and key in self._narrowed_items:
                    return self._narrowed_items[key]
            base = self.kind(node.value)
            if base in (MASK, SCALAR_TENSOR):
                return MASK if base == MASK else SCALAR_TENSOR
            if base == TENSOR:
                return TENSOR
            if base in (SIZE, DATA, NDARRAY):
                return base
            if type(base) is tuple:
                index = node.slice
                if type(index) is ast.Slice:
                    return base if base[0] in (TUPLE, SEQ) else None
                constant = index.value if type(index) is ast.Constant and type(index.value) is int else None
                if base[0] == DICT:
                    return base[1]
                return item_kind(base, constant)
            index = node.slice
            if base is None and type(index) is ast.Constant and index.value in ops.TENSOR_ITEM_KEYS:
                # batch["input_ids"], inputs["attention_mask"]: the model-input entries of a batch dict
                # (Hugging Face's names) hold tensors; a maybe, since nothing here says what the dict is
                self._maybe_calls.add(id(node))
                return TENSOR  # not a mask: Hugging Face's attention masks hold 0/1 integers
            if base is None and type(index) is ast.Constant and type(index.value) is str:
                # samples["n_answers"]: maybe what the project's dicts store under that key (lavis' collater:
                # {"n_answers": torch.LongTensor(n)})
                found = self.ask(("key", index.value))
                if found in TENSORISH:
                    self._maybe_calls.add(id(node))
                    return found
            return None
        if t is ast.BinOp:
            left, right = self.kind(node.left), self.kind(node.right)
            if NDARRAY in (left, right) and (left in TENSORISH or right in TENSORISH):
                side = node.left if left in TENSORISH else node.right
                if type(side) is ast.Name and self._is_maybe(side.id):
                    # numpy code (alphafold2's `dist_mat - pre_dist_mat`, dist_mat from np.linalg.norm): a name
                    # only maybe a tensor is an array here (a submodule's output stays a tensor)
                    return NDARRAY
            kind = _combine_binop(left, right, node.op)
            # `(gt == 1) * (m == 1)` with one side a mask, the other of unknown kind: booleans too
            return MASK if kind == TENSOR and _compares(node) else kind
        if t is ast.UnaryOp:
            operand = self.kind(node.operand)
            if isinstance(node.op, ast.Not):
                return DATA if operand in TENSORISH or operand == DATA else (PY if operand else None)
            if isinstance(node.op, ast.Invert) and operand == MASK:
                return MASK
            return operand
        if t is ast.Compare:
            if all(isinstance(op, (ast.Is, ast.IsNot)) for op in node.ops):
                return PY
            if len(node.ops) == 1 and type(node.ops[0]) in (ast.Eq, ast.NotEq) and (
                    _is_constant_none(node.left) or _is_constant_none(node.comparators[0])):
                return PY  # `mask != None`: a tensor compared with None is a Python bool (identity), no data read
            if len(node.ops) == 1 and type(node.ops[0]) in (ast.Eq, ast.NotEq) and (
                    _is_text_constant(node.left) or _is_text_constant(node.comparators[0])
                    or self._is_torch_dtype(node.left) or self._is_torch_dtype(node.comparators[0])):
                # `logger == "current"`, `dtype == torch.bfloat16`: no tensor is ever compared with a string or a
                # dtype (a tensor would give a Python bool, and its values are not read): a plain value's test
                return PY
            if any(isinstance(op, (ast.In, ast.NotIn)) for op in node.ops):
                if key_name(node.left) is not None:
                    return PY  # a key looked up in a dict, never in a tensor
                if any(self.kind(c) in TENSORISH for c in node.comparators):
                    return DATA
                if self.value_kind(node.left) in TENSORISH and all(map(self._listed_container, node.comparators)):
                    # `token not in self.som_ids`: a tensor looked up in a list or tuple is compared with each
                    # entry (`entry == token`, a tensor) until one is true: its value is read (a set or a dict
                    # hashes it instead, by identity)
                    return DATA
                return PY
            kinds = [self.kind(node.left)] + [self.kind(c) for c in node.comparators]
            if any(k in TENSORISH for k in kinds):
                return SCALAR_TENSOR if all(k in (SCALAR_TENSOR, PY, SIZE, DATA) for k in kinds) else MASK
            if DATA in kinds:
                return DATA
            if NDARRAY in kinds:
                return NDARRAY
            if all(k in (PY, SIZE) for k in kinds):
                return PY
            return None
        if t is ast.BoolOp:
            kinds = {self.kind(v) for v in node.values}
            if len(kinds) == 1:
                return kinds.pop()
            tensors = kinds & TENSORISH
            # `done or (x >= level)`: the tensor operand whenever the others are falsy
            return (tensors.pop() if len(tensors) == 1 else TENSOR) if tensors else None
        if t is ast.IfExp:
            body, orelse = self.kind(node.body), self.kind(node.orelse)
            if body == orelse:
                return body
            # `ilens.max() if ilens is not None else ilens`: a tensor either way
            if body in TENSORISH and orelse in TENSORISH:
                return TENSOR
            if body in (PY, DATA) and orelse in (PY, DATA):
                # `[r.tolist()] if r.ndim == 0 else r.tolist()`: Python values either way, read from a
                # tensor on one side at least
                return DATA
            return None
        if t is ast.NamedExpr:
            return self.kind(node.value)
        return None

    def _listed_container(self, node: ast.expr, depth: int = 0) -> bool:
        """A list or a tuple, as far as the code shows: a display or a comprehension, a value of a list or
        tuple kind, data read from a tensor (``t.tolist()``), a name bound once to one, or an attribute every
        store of which in the class is one (``self.som_ids, self.eom_ids = ids.tolist()``).  What is not known
        to be one may be a dict or a set, which hash a tensor (by identity) instead of comparing it."""
        if type(node) in _DISPLAYS:
            return True
        kind = self.kind(node)
        if kind == DATA or (type(kind) is tuple and kind[0] in (SEQ, TUPLE)):
            return True
        if depth > 2:
            return False
        if type(node) is ast.Name:
            bound = single_assignment(self.stack, node.id)
            return bound is not None and self._listed_container(bound, depth + 1)
        if type(node) is ast.Call:
            return _tolist_call(node)
        if type(node) is ast.Attribute and type(node.value) is ast.Name and node.value.id == "self" and self.classes \
                and self.classes[-1].node is not None:
            stores = _self_attr_values(self.classes[-1].node).get(node.attr)
            return bool(stores) and all(_tolist_call(value) if unpacked else self._listed_store(value)
                                        for value, unpacked in stores)
        return False

    def _listed_store(self, value: ast.expr) -> bool:
        """A list or tuple stored: a display, ``x.tolist()``, ``list(...)``, ``tuple(...)``, ``sorted(...)``."""
        return type(value) in _DISPLAYS or _tolist_call(value) or (
            type(value) is ast.Call and self.qualname(value.func) in ("list", "tuple", "sorted"))

    def _infer_display(self, node: ast.Tuple):
        if any(isinstance(e, ast.Starred) for e in node.elts) or not node.elts or len(node.elts) > 16:
            return PY
        kinds = tuple(self.kind(e) for e in node.elts)
        return (TUPLE, *kinds) if any(k is not None and k != PY for k in kinds) else PY

    def _infer_attribute(self, node: ast.Attribute):
        attr = node.attr
        value = node.value
        if isinstance(value, ast.Name) and value.id == "self" and self.classes and self._self_is_instance():
            info = self.classes[-1]
            known, kind = self._self_attr(info, attr)
            if kind == DATA and not self._set_in_this_method(attr):
                # `self.n_systems = int(idx.max().item()) + 1` in a set-up method: read on the host once
                # (reported there), a plain Python number wherever another method uses it
                return PY
            if known:
                if kind == PY and info.id:
                    # `self.mask = None` in __init__, a tensor once another method computed it: a
                    # tensor whenever it is used as one (as within one method, see _set_self_attr)
                    elsewhere = self.ask(("attr", info.id, attr))
                    if elsewhere in TENSORISH:
                        self._maybe_calls.add(id(node))  # only maybe: a plain value on the other path
                        return elsewhere
                return kind
            found = self.ask(("attr", info.id, attr)) if info.id else None
            if found is None and info.id and info.is_module and self._torch_layer_tensor(info.id, attr):
                self._maybe_calls.add(id(node))  # None when the layer was built without it
                self._none_or_tensor.add(id(node))
                return TENSOR
            if found is None and info.id and info.node is not None and attr not in _self_stores(info.node):
                # a mixin's `int(self.queue_ptr)`: what every class mixing it in stores there (self is one
                # of them, or the read fails)
                return self.ask(("subattr", info.id, attr))
            return PY if found == DATA else found
        if attr in ops.TENSOR_SEQUENCE_ATTRIBUTES:
            # `hidden, valid = ctx.saved_tensors` in a custom backward: what its forward saved
            saved = self.ask(("attr", self.classes[-1].id, _SAVED)) if self.classes and self.classes[-1].id else None
            if type(saved) is tuple and saved[0] == TUPLE:
                return (TUPLE, *(k if k in TENSORISH else TENSOR for k in saved[1:]))
            return (SEQ, TENSOR)
        qual = self.qualname(node)
        if qual is not None:  # torch.float32, np.pi, module attributes
            return PY if not qual.startswith(("torch.nn.", "numpy.")) and not self._is_project(qual) else None
        base = self.kind(value)
        if base in TENSORISH:
            if attr == "shape":
                return SIZE
            if attr in ops.META_ATTRIBUTES:
                return PY
            if attr in ops.TENSOR_ATTRIBUTES:
                return MASK if base == MASK and attr in ("T", "mT") else TENSOR
            # an attribute no tensor has: the value is some object after all (or a tensor subclass), and what
            # the project's classes declare or store under that name is the best guess
            return self._declared_field(node)
        if base == NDARRAY:
            return PY if attr in ("shape", "ndim", "dtype", "size") else NDARRAY if attr in ("T", "real", "imag") else None
        if base == SIZE:
            return SIZE
        owner = obj_class(base)
        if owner is not None:
            return self.ask(("attr", owner, attr))
        return self._declared_field(node) if base is None else None

    def _declared_field(self, node: ast.Attribute):
        """``batch.n_node`` of an object the analysis does not know (an unannotated parameter, or one
        presumed a tensor that reads an attribute no tensor has): maybe the tensor that the project's
        classes declare under that name (orb's ``AtomGraphs.n_node: torch.Tensor``); where no class
        declares it, the tensor they all store there (torchdrug's ``graph.num_node``, ``self.num_node =
        torch.as_tensor(...)`` in ``Graph.__init__``), not only a maybe: no other kind of object is known
        to hold that name."""
        value = node.value
        if type(value) is ast.Subscript and type(value.value) is ast.Attribute and self.kind(value.value) == MODULE:
            # `self.act_fun[l].mask`: an entry of a module container (an nn.ModuleList of the project's
            # layers); what the project's classes all store under that name
            return self.ask(("stored", node.attr))
        if type(value) is not ast.Name or value.id in ("self", "cls"):
            return None
        found = self.ask(("field", node.attr))
        if found in TENSORISH:
            self._maybe_calls.add(id(node))
            return found
        if value.id == "ctx":
            return None  # an autograd Function's context holds what its forward put there
        return self.ask(("stored", node.attr))

    def _self_is_instance(self) -> bool:
        """``self`` names the instance: we are in a method of the innermost class (not a nested def)."""
        for scope in reversed(self.scopes):
            if "self" in scope.kinds:
                return scope.node is not None and scope.name != "<lambda>"
        return False

    def _is_torch_dtype(self, node: ast.expr) -> bool:
        """``torch.bfloat16``, ``torch.float32``: a dtype constant (``torch.<name>`` of ``ops.TORCH_DTYPES``)."""
        if type(node) is not ast.Attribute:
            return False
        qual = self.qualname(node)
        return qual is not None and qual.startswith("torch.") and qual[6:] in ops.TORCH_DTYPES

    def _is_project(self, qualname: str) -> bool:
        return qualname.split(".", 1)[0] in self.project_roots

    is_project = _is_project

    def _instance_kind(self, qualname: str):
        """The kind of an instance of the project class ``qualname`` (what calling the class gives), or None
        when the name is no project class."""
        answer = self.ask(("call", qualname))
        return answer[0] if answer is not None and type(answer[0]) is tuple and answer[0][0] == OBJ else None

    def _names_project_class(self, qualname: str) -> bool:
        """A project class, named through a module (``DecodeCache = util.DecodeCache``, timesfm): a
        module-level name for it is an alias, so annotations with it name instances of the class."""
        return self._is_project(qualname) and qualname.rpartition(".")[2][:1].isupper() \
            and self._instance_kind(qualname) is not None

    def _infer_call(self, node: ast.Call):
        func = node.func
        qual = self.qualname(func)
        if qual is not None:
            if qual in _BUILTIN_NAMES or not self._is_project(qual):
                return self._infer_qualified_call(qual, node)
            return self._infer_project_call(node, ("q", qual), qual)
        if type(func) is ast.Name:
            chosen = self._chosen_function_call(node, func.id)
            if chosen is not None:
                return chosen
        func_kind = self.kind(func)
        if is_module(func_kind):
            owner = obj_class(func_kind)
            if owner is not None:
                returned = self._answered(node, self.ask(("modcall", owner)))
                if returned is not None:
                    return returned
            self._maybe_calls.add(id(node))
            return TENSOR  # calling an nn.Module instance runs its forward: usually a tensor
        if isinstance(func, ast.Attribute):
            receiver = self.kind(func.value)
            method = func.attr
            if method == "astype" and (receiver in TENSORISH or receiver == NDARRAY):
                # tensors have no .astype(): a value that may be a tensor and gets one is a numpy array here
                # (naturalspeech2's `wav = wav.contiguous().cpu().numpy()` on one path, then `wav.astype(...)`)
                return NDARRAY
            if receiver in TENSORISH:
                if method in ops.CONTAINER_SHARED_METHODS and self.uncertain(func.value):
                    self._maybe_calls.add(id(node))
                return _tensor_method_kind(receiver, method, node, self._asks_for_bool(node))
            if receiver == NDARRAY:
                return PY if method in ops.VALUE_READING_METHODS else NDARRAY
            if receiver == DISTRIBUTION:
                return TENSOR if method in ops.DISTRIBUTION_TENSOR_METHODS else None
            if type(func.value) is ast.Name and func.value.id == "self" and self.classes and self._self_is_instance():
                stored = self._function_attribute(self.classes[-1], method)
                if stored is not None:
                    return self._infer_project_call(node, ("q", stored), stored)
                return self._answered(node, self.ask(("mcall", self.classes[-1].id, method)))
            owner = obj_class(receiver)
            if owner is not None:
                returned = self._answered(node, self.ask(("mcall", owner, method)))
                if returned is None and is_module(receiver) and method in ("forward", "__call__"):
                    self._maybe_calls.add(id(node))
                    return TENSOR
                if returned is None and is_module(receiver):
                    return _module_method_kind(receiver, method)
                return returned
            if receiver == MODULE:
                if method in ("forward", "__call__"):
                    self._maybe_calls.add(id(node))
                    return TENSOR
                return _module_method_kind(receiver, method)
            if receiver == SIZE:
                return SIZE if method in ("numel", "index", "count") else None
            if type(receiver) is tuple and receiver[0] == DICT:
                if method in ("get", "pop"):
                    if type(func.value) is ast.Name and self._forward_kwargs(func.value.id):
                        self._maybe_calls.add(id(node))  # kwargs.get("cu_seqlens"): only maybe a tensor
                    return receiver[1]
                if method == "values":
                    return (SEQ, receiver[1])
                if method == "items":
                    return (SEQ, (TUPLE, None, receiver[1]))
                return None
            if receiver is None and node.args and not node.keywords and \
                    not any(type(arg) is ast.Starred for arg in node.args) and (
                    (method in ops.UNWRAPPING_METHODS and len(node.args) == 1)
                    or (method in ops.ACCELERATOR_PREPARE_METHODS and _names_an_accelerator(func.value))):
                # accelerate's `unwrap_model(self.model)`, `self.accelerator.prepare(model, optimizer)`:
                # what they are given (the model's class, so that calling it runs its forward)
                kinds = [self.kind(arg) for arg in node.args]
                return kinds[0] if len(kinds) == 1 else (TUPLE, *kinds)
            if receiver is None and method in ops.HOST_SYNC_METHODS and not ops.HOST_SYNC_METHODS[method]:
                # `.item()`/`.tolist()` of whatever it is: a Python number or list, never a tensor (what
                # says a name is a tensor elsewhere in the function does not make this binding one)
                return PY
            if receiver is None and method in ops.SIZE_METHODS and node.args:
                return SIZE  # x.size(0) on an unknown receiver: size() with an argument is tensor-specific
            if receiver is None and method in ops.TENSOR_ONLY_METHODS and not (
                    node.args and method in ops.NO_ARGUMENT_TENSOR_METHODS):
                # only a tensor has .int(), .detach()... (not env.bool("X", False))
                return _tensor_method_kind(TENSOR, method, node, self._asks_for_bool(node))
            return None
        return None

    def _infer_project_call(self, node: ast.Call, ref: tuple, qual: str):
        passthrough = self._passthrough.get(qual) if self._passthrough else None
        if passthrough is None and not qual.startswith(self.module + "."):
            answer = self.ask(("pass", qual))  # a helper of another file (`from .utils import default`)
            if answer is not None:
                passthrough = (tuple(answer[0]), frozenset(answer[1]))
        if passthrough is not None:
            passed = self._passed_through(node, *passthrough)
            if passed is not _NOT_PASSED:
                return passed
        returned = self._answered(node, self.ask(("call", qual)))
        if id(node) in self._maybe_calls and self._in_construction() and not any(
                self.kind(arg) in TENSORISH for arg in (*node.args, *(k.value for k in node.keywords))):
            # `self._in_src_feats, self._in_dst_feats = expand_as_pair(in_feats)` in an `__init__`: a helper
            # that returns what it is given, or tensors made of it, passed configuration values (dgl)
            self._maybe_calls.discard(id(node))
            return PY
        if returned == TENSOR and qual.rpartition(".")[2].startswith(ops.PREDICATE_PREFIXES):
            returned = MASK  # botorch's `Y[is_non_dominated(Y)]`: a tensor-valued predicate is a boolean tensor
        if returned is None and qual.startswith(self.module + "."):
            local = self.local_classes.get(qual.rsplit(".", 1)[-1])
            if local is not None and local.id == qual:  # a class of this file, before the table knows it
                return (OBJ, local.id, local.is_module)
        return returned

    def _passed_through(self, node: ast.Call, params: tuple[str, ...], returned: frozenset[str]):
        """``default(causal, self.causal)`` with ``def default(val, d): return val if exists(val) else d``:
        a function of this file that returns one of its arguments gives what this call passes them, not
        the join over every call in the project (a bool here, a tensor there), unknown when what it
        passes is.  ``_NOT_PASSED`` when a returned parameter is not passed here (its default value is
        not looked at): the table's answer stands."""
        if any(isinstance(arg, ast.Starred) for arg in node.args) or any(k.arg is None for k in node.keywords):
            return _NOT_PASSED
        passed = dict(zip(params, node.args))
        passed.update((k.arg, k.value) for k in node.keywords)
        values = []
        for name in sorted(returned):
            called = name.endswith("()")
            value = passed.get(name[:-2] if called else name)
            if value is None:
                return _NOT_PASSED
            if called:
                # `return d() if callable(d) else d`: a lambda passed gives what its body gives; a constant
                # is never called (the other branch returns it); anything else may be called to anything
                if type(value) is ast.Lambda:
                    value = value.body
                elif type(value) is ast.Constant or _never_called(self.kind(value)):
                    continue
                elif self.qualname(value) is not None or type(value) is not ast.Name:
                    return _NOT_PASSED  # a function passed (``default(x, make_mask)``): what it returns
                # else a local value of unknown kind: returned as it is or called to something unknown
            values.append(value)
        if not values:
            return _NOT_PASSED
        kind, maybe = self.kind(values[0]), False
        for value in values:
            other = self.kind(value)
            if other != kind:
                kind, joined_maybe = join(kind, other)
                maybe = maybe or joined_maybe
            maybe = maybe or self.uncertain(value)
        if maybe:
            self._maybe_calls.add(id(node))
        return kind

    def _note_function_attr(self, info: "_ClassInfo", attr: str, value) -> None:
        """``self._compute_prototypes = compute_prototypes`` in ``__init__``: the project function it names."""
        if type(value) is ast.Name:
            qual = self.qualname(value)
            if qual is not None and self._is_project(qual):
                info.function_attrs[attr] = qual if info.function_attrs.get(attr, qual) == qual else None
                return
        if attr in info.function_attrs:
            info.function_attrs[attr] = None

    def _function_attribute(self, info: "_ClassInfo", attr: str) -> str | None:
        """The project function that ``self.<attr>`` holds when ``__init__`` stores it there by name and every
        other store of the attribute in the class names it too (learn2learn's ``self._compute_prototypes =
        compute_prototypes``, called as ``self._compute_prototypes(support, labels)``), else None."""
        qual = info.function_attrs.get(attr)
        if qual is None or info.node is None:
            return None
        # __init__ stored it (a name resolved there: `self.fn = fn` of a parameter is not the function); no other
        # store of the attribute in the class says otherwise
        stores = _self_attr_values(info.node).get(attr, ())
        return qual if all(not unpacked and type(value) is ast.Name and value.id == stores[0][0].id
                           for value, unpacked in stores) else None

    def _torch_layer_tensor(self, class_id: str, attr: str) -> bool:
        """``attr`` is a parameter or buffer that a torch.nn layer among the class's bases registers."""
        if attr not in _TORCH_LAYER_ATTRIBUTE_NAMES:
            return False
        bases = self.ask(("bases", class_id)) or ()
        return any(attr in ops.TORCH_LAYER_TENSOR_ATTRIBUTES.get(base.rpartition(".")[2], ())
                   for base in bases if base.startswith("torch."))

    def _chosen_function_call(self, node: ast.Call, name: str):
        """What calling a local name gives when every binding of it names a project function
        (``filter_func = _1d_filter`` on one path, ``_2d_filter`` on the other: solo-learn) and the
        functions agree on what they return; None otherwise."""
        scope = self.scope
        if name not in scope.kinds or scope.kinds[name] is not None or type(scope.node) not in _FUNCTION_NODES:
            return None  # (a name bound to a function has no kind; cheap tests before the function's index)
        arguments = scope.node.args
        if any(a.arg == name for a in parameters(arguments)):
            return None  # a parameter: whatever the caller passes (timm's `act_layer(...)`)
        bound = scope.bindings.get(name)
        if bound is not None and type(bound[0]) not in (ast.Name, ast.Attribute):
            return None  # bound once, to something else than a name (`layer = make_layer(...)`)
        values = assigned_values(self.stack, name)
        if not values or len(values) > 8:
            return None
        answers = set()
        for value in values:
            qual = self.qualname(value) if type(value) in (ast.Name, ast.Attribute) else None
            if qual is None or not self._is_project(qual) or self._instance_kind(qual) is not None:
                return None
            answer = self.ask(("call", qual))
            if answer is None:
                return None
            answers.add(answer)
        return self._answered(node, answers.pop()) if len(answers) == 1 else None

    def _answered(self, node: ast.Call, answer):
        """The kind a call gives, from the table's (kind, maybe) answer."""
        if answer is None:
            return None
        if answer[1]:
            self._maybe_calls.add(id(node))
        return answer[0]

    def _infer_qualified_call(self, qual: str, node: ast.Call):
        args = node.args
        if qual in _BUILTIN_NAMES:
            return self._infer_builtin(qual, node)
        root = qual.split(".", 1)[0]
        namespace, _, last = qual.rpartition(".")
        if root == "numpy" or (root in ops.NUMPY_LIBRARY_ROOTS and last[:1].islower()):
            return NDARRAY
        if qual in ops.MATH_SCALAR_FUNCTIONS:
            # math.cos(t): a Python number, read from the tensor's value (like float(t)), or from a size
            kinds = [self.kind(a) for a in args]
            read = [a for a, k in zip(args, kinds) if k in TENSORISH or k == DATA]
            if read:
                if all(self.uncertain(a) for a in read):
                    self._maybe_calls.add(id(node))  # of a maybe-tensor: maybe data (a list's length, imagen's)
                return DATA
            return SIZE if SIZE in kinds else PY
        if qual in ops.PROGRESS_WRAPPERS and node.args and type(node.args[0]) is not ast.Starred:
            # tqdm(zip(counts, steps)): yields what it wraps yields
            wrapped = self.kind(node.args[0])
            if self.uncertain(node.args[0]):
                self._maybe_calls.add(id(node))
            if wrapped in TENSORISH:
                return (SEQ, TENSOR)
            if type(wrapped) is tuple and wrapped[0] in (SEQ, TUPLE):
                element = element_kind(wrapped)
                return (SEQ, element) if element is not None else None
            return None
        if root != "torch":
            how = ops.TENSOR_PASSING_FUNCTIONS.get(qual)
            if how is None and qual.startswith(ops.TENSOR_PASSING_NAMESPACES):
                how = "any"
            return self._passed_tensor(how, node) if how is not None else None
        if qual.startswith("torch.distributions.") and qual.rsplit(".", 1)[-1][:1].isupper():
            return DISTRIBUTION  # Categorical(probs): its .sample() is a tensor
        if qual in ops.TENSOR_TORCH_FUNCTIONS:
            return TENSOR
        if "._" in qual:
            return None  # private APIs (torch._foreach_*, torch._custom_ops.*): no promise about what they return
        if qual in ops.MASK_FUNCTIONS:
            return MASK
        if qual in ops.DATA_TORCH_FUNCTIONS:
            return DATA
        if qual in ops.NON_TENSOR_TORCH or qual.startswith(ops.NON_TENSOR_TORCH_PREFIXES):
            return PY
        if last.startswith(("is_", "are_")):
            return PY  # torch.is_autocast_cache_enabled(), torch.is_same_size(a, b): Python bools
        if namespace == "torch" and last.startswith(ops.NON_TENSOR_TORCH_NAME_PREFIXES):
            return PY  # global settings: torch.get_autocast_gpu_dtype() is a dtype, torch.get_device(t) an int
        if qual.startswith("torch.nn.") and not qual.startswith("torch.nn.functional."):
            if qual in ("torch.nn.Parameter", "torch.nn.parameter.Parameter", "torch.nn.Buffer"):
                return TENSOR
            if last[:1].isupper():
                return MODULE
            # Functions outside torch.nn.functional are helpers (torch.nn.parameter.is_lazy,
            # torch.nn.attention.sdpa_kernel, hook registration) unless their namespace is listed.
            return TENSOR if namespace in ops.TENSOR_NAMESPACES else None
        if namespace not in ops.TENSOR_NAMESPACES:
            return None  # torch.version.cuda.split(...), torch.ops.* and the like
        if qual == "torch.BoolTensor":
            return MASK
        if last[:1].isupper() and qual != "torch.Tensor" and qual not in ops.LEGACY_TENSOR_CONSTRUCTORS:
            return None  # classes: torch.Generator(...), torch.Size(...) handled above; torch.LongTensor(n) is one
        if last in ops.FULL_REDUCTIONS and len(args) <= 1 and not has_keyword(node, "dim", "axis"):
            return SCALAR_TENSOR
        if qual in ("torch.any", "torch.all"):
            return MASK  # torch.any(x, dim=0): a boolean per row, like x.any(0)
        if qual in ops.SEQUENCE_RESULT_FUNCTIONS:
            return (SEQ, TENSOR)
        if qual in ops.DTYPE_PRESERVING_FUNCTIONS and args and self.kind(args[0]) == MASK \
                and not any(k.arg == "dtype" for k in node.keywords) \
                and (qual != ops.REPEAT_INTERLEAVE or len(args) > 1 or node.keywords):
            return MASK  # torch.ones_like(mask) is a boolean tensor too
        if self._asks_for_bool(node):
            return MASK  # torch.zeros(n, dtype=torch.bool)
        return TENSOR

    def size_tensor(self, value: ast.expr) -> bool:
        """A tensor computed by torch arithmetic from sizes and Python numbers only (sockeye's `batch_size =
        pt.div(batch_times_beam, self.k, rounding_mode='trunc')`), directly or through a name bound once:
        measured on torch 2.13, dynamo takes it in the size arguments of `view`/`reshape`/`zeros`/`arange`/
        `narrow`/`new_zeros`/`expand` without a break (fullgraph, across sizes), while `int()` of it, `.item()`
        and a slice bound with it break (Tensor.item())."""
        if type(value) is ast.Name:
            value = self.bound_value(value.id)
        if type(value) is not ast.Call or self.qualname(value.func) not in ops.SIZE_ARITHMETIC_FUNCTIONS:
            return False
        # at least one size, none a tensor or a value read from one (`*args` unknown), keywords only options
        # (`rounding_mode`)
        args = value.args
        if not args or any(isinstance(arg, ast.Starred) for arg in args) \
                or any(k.arg is None or k.arg == "out" for k in value.keywords):
            return False
        kinds = [self.kind(arg) for arg in args]
        return SIZE in kinds and not any(kind in DATA_DERIVED for kind in kinds)

    def _passed_tensor(self, how: str, node: ast.Call):
        """What a ``TENSOR_PASSING_FUNCTIONS`` call gives: a tensor (a mask, a pair, a list of them) when
        it is given one, a maybe when that is a maybe, unknown otherwise (einops takes numpy too)."""
        args = [a for a in node.args if not isinstance(a, ast.Starred)]
        if how == "any":
            given = [a for a in args if self.kind(a) in TENSORISH]
        else:
            first = args[:1]
            given = [a for a in first if self.kind(a) in TENSORISH or element_kind(self.kind(a)) in TENSORISH]
        if not given:
            return None
        if all(self.uncertain(a) for a in given):
            self._maybe_calls.add(id(node))
        if how == "pack":
            return (TUPLE, TENSOR, PY)
        if how == "unpack":
            return (SEQ, TENSOR)
        if how == "same" and self.kind(given[0]) == MASK:
            return MASK
        return TENSOR

    def _asks_for_bool(self, node: ast.Call) -> bool:
        """``dtype=torch.bool`` (or ``torch.bool`` as the argument of ``.to()``/``.type()``)."""
        for item in node.keywords:
            if item.arg == "dtype":
                return self.qualname(item.value) == "torch.bool"
        func = node.func
        if type(func) is ast.Attribute and func.attr in ("to", "type") and node.args:
            return self.qualname(node.args[0]) == "torch.bool"
        return False

    def _infer_builtin(self, name: str, node: ast.Call):
        args = node.args
        kinds = [self.kind(a) for a in args]
        if name == "len":
            if kinds and (kinds[0] in TENSORISH):
                return SIZE
            if kinds and kinds[0] == DATA:
                return SIZE  # len(t.tolist()) is a tensor size
            if kinds and kinds[0] == SIZE:
                return PY  # len(x.shape) is the rank
            return PY
        if name in ops.HOST_SYNC_BUILTINS:
            if not kinds:
                return PY
            if kinds[0] in TENSORISH or kinds[0] == DATA:
                return DATA
            if kinds[0] == SIZE:
                return SIZE
            return PY if kinds[0] in (PY, NDARRAY) else None
        if name in ("any", "all") and len(args) == 1:
            # any(torch.equal(p, q) for p in params), any(t), all(losses): the truth of tensor data, element
            # by element
            arg = args[0]
            if type(arg) in (ast.GeneratorExp, ast.ListComp):
                element = self.value_kind(arg.elt)
                return DATA if element in TENSORISH or element == DATA else (PY if element == PY else None)
            kind = self.value_kind(arg)
            if kind in TENSORISH or kind == DATA or (type(kind) is tuple and kind[0] == SEQ and kind[1] in TENSORISH):
                return DATA
            return None
        if name == "sum" and kinds and type(kinds[0]) is tuple and kinds[0][0] == SEQ and kinds[0][1] in TENSORISH:
            return TENSOR  # sum(losses) over a list of tensors: their sum, a tensor
        if name in ("max", "min", "sum") and any(k in TENSORISH for k in kinds):
            # over a tensor (or with one): its 0-d elements, compared or added on the way
            return SCALAR_TENSOR if len(kinds) == 1 else TENSOR
        if name in ("sorted", "list", "tuple", "reversed") and kinds and kinds[0] in TENSORISH:
            return (SEQ, SCALAR_TENSOR if kinds[0] == SCALAR_TENSOR else TENSOR)  # its rows
        if name in ("max", "min", "abs", "round", "sum"):
            if DATA in kinds or any(k in TENSORISH for k in kinds):
                return DATA if name != "sum" else None
            if SIZE in kinds:
                return SIZE
            return PY if kinds and all(k == PY for k in kinds) else None
        if name == "enumerate" and kinds:
            return (SEQ, (TUPLE, PY, element_kind(kinds[0]))) if element_kind(kinds[0]) is not None else PY
        if name == "zip" and kinds and not any(isinstance(a, ast.Starred) for a in args) and len(kinds) <= 16:
            elements = tuple(element_kind(k) for k in kinds)
            return (SEQ, (TUPLE, *elements)) if any(e is not None for e in elements) else PY
        if name in ("list", "tuple", "reversed", "sorted") and kinds and type(kinds[0]) is tuple \
                and kinds[0][0] in (SEQ, TUPLE) and name != "sorted":
            return kinds[0] if kinds[0][0] == SEQ else (SEQ, element_kind(kinds[0]))
        if name == "getattr" and len(args) >= 2 and type(args[0]) is ast.Name and args[0].id == "self" \
                and self.classes and self._self_is_instance():
            pattern = _computed_name_pattern(args[1])
            if pattern is not None:
                info = self.classes[-1]
                known, kind = self._self_attr(info, pattern)
                if not known and info.id:
                    kind = self.ask(("attr", info.id, pattern))
                if kind in TENSORISH:
                    return kind
        if name in ("range", "list", "tuple", "dict", "set", "str", "sorted", "repr", "isinstance", "slice",
                    "hasattr", "getattr", "type", "id", "print", "enumerate", "zip", "map", "filter", "reversed"):
            return PY if name not in ("getattr", "list", "tuple", "sorted", "reversed") else (
                DATA if kinds and kinds[0] == DATA else (SIZE if kinds and kinds[0] == SIZE and name == "tuple" else None))
        return None

    # ------------------------------------------------------------------ scopes & statements
    def visit_Module(self, node: ast.Module) -> None:
        self.foreign_blocks = _foreign_blocks(node.body)
        self._visit_block(node.body)

    def visit_Import(self, node: ast.Import) -> None:
        for alias in node.names:
            root = alias.name.split(".", 1)[0]
            if root in ops.TORCH_MODULE_ROOTS:
                self.imports_torch = True
            if alias.asname:
                self._set_alias(alias.asname, alias.name)
            else:
                self._set_alias(root, root)

    def visit_ImportFrom(self, node: ast.ImportFrom) -> None:
        module = node.module
        if node.level:
            base = self.module
            if base and "." not in base and not self.is_package:
                # a file in a directory without __init__.py inside a package: its imports climb from its
                # place in that package (PEP 420 namespace portion), not from its bare stem
                base = self.ask(("anchor", base)) or base
            module = resolve_relative(base, self.is_package, node.level, node.module)
            if module is None:
                # climbs above the run's top package (f5-tts' TensorRT patch, copied into another package):
                # the names are that package's, unknown here; bound all the same, so that none reads as the
                # builtin it shadows (`slice`, TensorRT-LLM's)
                for alias in node.names:
                    if alias.name != "*":
                        self._set_alias(alias.asname or alias.name, ".".join(
                            part for part in (_UNRESOLVED_MODULE, node.module, alias.name) if part))
                return
        elif not module:
            return
        root = module.split(".", 1)[0]
        if root in ops.TORCH_MODULE_ROOTS:
            self.imports_torch = True
        for alias in node.names:
            if alias.name == "*":
                if self.scope is self.module_scope and self._is_project(module):
                    # the project table looks names up there (``ProjectFacts.resolve``)
                    self.star_imports = True
                    self.produced.aliases["*" + module] = module
                    # and the imports it re-exports (``from .imports import *`` bringing torch, nn, F)
                    for local, qualified in self.ask(("star", module)) or ():
                        self._set_alias(local, qualified)
                continue
            self._set_alias(alias.asname or alias.name, f"{module}.{alias.name}")

    def _set_alias(self, local: str, qualified: str) -> None:
        qualified = _canonical(qualified)
        if qualified.split(".", 1)[0] in ops.TORCH_MODULE_ROOTS:
            self.imports_torch = True  # an import, or a name a star import of a project module brought
        scope = self.scope
        if self.function_depth:  # an import inside a function binds the function's own name
            if scope.aliases is None:
                scope.aliases = {}
            scope.aliases[local] = qualified
            scope.kinds.pop(local, None)
            scope.defs.pop(local, None)
            return
        self.aliases[local] = qualified
        if ops.foreign_array_module(qualified):
            self.imports_foreign = True
        for other in self.scopes:
            other.kinds.pop(local, None)
            other.defs.pop(local, None)
        if scope is self.module_scope:
            self.produced.aliases[local] = qualified
            if qualified == "torch":
                self.torch_alias = local

    def visit_FunctionDef(self, node) -> None:
        function_id, cls, flags = self._define(node)
        if KERNEL in flags:
            return  # a GPU/JIT kernel: not PyTorch code, nothing here is about tensors
        if self.function_depth == 0:
            # a module-level function or a method: its body is walked after the module's statements
            self.deferred.append((function_id, node, cls, self.context, flags))
            if cls is not None:
                cls.deferred = True
            return
        self._walk_function(node, function_id, cls, flags)

    def _define(self, node) -> tuple[str, "_ClassInfo | None", set[str]]:
        """What the ``def`` statement itself does: decorators, defaults, the name bound."""
        self.visit_all(node.decorator_list)
        self._visit_defaults(node.args)
        if node.returns is not None:
            self.visit(node.returns)
        cls = self.classes[-1] if self.classes and self._directly_in_class() else None
        parent = self.scope if cls is None else None
        function_id = f"{cls.id}.{node.name}" if cls is not None else (
            f"{self.module}.{node.name}" if self.scope is self.module_scope else f"{self._function_id()}.{node.name}")
        flags = self._decoration(node)
        if not self._no_step_functions and id(node) in self._step_functions()[0]:
            flags.add(STEPS)  # a loop of another file calling it is a training loop (rl-games' train_actor_critic)
        if cls is not None and cls.is_module and node.name in ("forward", "__call__") and not self._in_tests \
                and _may_hold_a_step("\n".join(self.lines[node.lineno - 1:node.end_lineno or node.lineno])) \
                and any(self._is_training_loop(loop) for loop in _own_loops(node)):
            flags.add(TRAINS)  # meshgpt's MeshAutoencoderTrainer(Module).forward: the loop over batches itself
        bound = bool(cls and node.args.args and not _is_staticmethod(node))
        args = node.args
        positional = tuple(a.arg for a in positional_parameters(args))
        self.produced.functions[function_id] = (positional, tuple(a.arg for a in args.kwonlyargs),
                                                args.vararg is not None, args.kwarg is not None, bound,
                                                tuple(sorted(flags)))
        self._note_roots(function_id, node, cls, flags)
        if parent is not None:  # a method's name lives in its class, invisible to the code around it
            self.bind_name_in_parent(node.name)
            parent.defs[node.name] = function_id
        return function_id, cls, flags

    def _walk_function(self, node, function_id: str, cls: "_ClassInfo | None", flags) -> None:
        scope = _Scope(node.name, function_id, node)
        scope.returns = []
        outer_depth, outer_context = self.control_depth, self.context
        self.scopes.append(scope)
        self.function_depth += 1
        self._bind_parameters(node, scope, cls)
        self.control_depth = 0
        if DISABLED in flags:
            self.context = HOST
        try:
            self._visit_block(node.body)
        finally:
            self.scopes.pop()
            self.function_depth -= 1
            self.control_depth, self.context = outer_depth, outer_context
        kind, maybe = None, False
        if scope.returns and not scope.is_generator:
            kind, maybe = scope.returns[0]
            for other, other_maybe in scope.returns[1:]:
                if other != kind:
                    kind, joined_maybe = join(kind, other)
                    maybe = maybe or joined_maybe
                maybe = maybe or other_maybe
            kind = relevant(kind, sizes=True)
            if maybe and holds_tensor(kind) and node.returns is not None and \
                    tensor_free(self._annotation_kind(node.returns)):
                # `def _shape(tensor) -> torch.Size`, one of whose paths returns what a method no tensor
                # has gives (`tensor._nested_tensor_size()`): what the annotation promises, not a tensor;
                # so too `-> tuple[int, ...]` over elements only maybe tensors (monai's get_valid_patch_size)
                kind, maybe = None, False
        if kind is None and node.returns is not None and not scope.is_generator:
            # what the body returns says nothing (a parameter of unknown kind, a helper's result):
            # the return annotation says what callers get (``-> tuple[Tensor, Tensor]``)
            kind, maybe = _without_maybe(self._annotation_kind(node.returns))
            kind = relevant(kind, sizes=True) if kind != PY else None
        if kind is not None:
            self.produced.returns[function_id] = (kind, maybe)
        if cls is not None and _member_kind(node) == "property":
            # what objects hold under the property's name: a tensor only when it surely returns one
            stores = self.produced.stores
            stores[node.name] = join_key(stores.get(node.name), kind if kind in TENSORISH and not maybe else PY)

    visit_AsyncFunctionDef = visit_FunctionDef

    def _decoration(self, node) -> set[str]:
        flags = set()
        for decorator in node.decorator_list:
            target = decorator.func if isinstance(decorator, ast.Call) else decorator
            qual = self.qualname(target) or ""
            last = qual.rsplit(".", 1)[-1] if qual else (target.attr if isinstance(target, ast.Attribute) else
                                                          target.id if isinstance(target, ast.Name) else "")
            if qual in ops.COMPILE_DECORATORS:
                flags.add(COMPILED)
            elif qual in ops.DISABLE_DECORATORS:
                flags.add(DISABLED)
            elif qual in ops.NO_GRAD_DECORATORS and self.scope is self.module_scope and not self.classes:
                flags.add(NO_GRAD)
            elif qual in ops.NO_GRAD_DECORATORS and self.classes and self._directly_in_class() \
                    and not ops.NO_GRAD_HOST_METHOD_WORDS.isdisjoint(node.name.strip("_").split("_")):
                flags.add(NO_GRAD)  # a sampling or decoding loop of a model (ddim_sample, p_sample)
            elif qual in ops.NO_GRAD_DECORATORS and self.classes and self._directly_in_class() \
                    and node.name in ("forward", "__call__") and self.classes[-1].name.endswith(ops.PREDICTOR_MODULE_SUFFIXES):
                # an inference wrapper that is an nn.Module (doctr's OCRPredictor): its no-grad forward runs the
                # models, then post-processes on the host; the models' own forwards are the compiled step
                flags.add(NO_GRAD)
            elif (qual.startswith(ops.KERNEL_DECORATOR_PREFIXES) or _chain_root(target) in ("cuda", "triton", "numba", "nb", "tl")) \
                    and last in ops.KERNEL_DECORATOR_NAMES:
                flags.add(KERNEL)
            elif last in ("njit",):
                flags.add(KERNEL)
        return flags

    def _note_roots(self, function_id: str, node, cls: _ClassInfo | None, flags: set[str]) -> None:
        roots = self.produced.roots
        if COMPILED in flags:
            roots.append((ROOT_COMPILED, ref_function(function_id)))
        if DISABLED in flags or KERNEL in flags or self._takes_a_graph(node):
            roots.append((ROOT_HOST, ref_function(function_id)))
        if cls is not None:
            name = node.name
            if cls.is_dataset or cls.host_class or name in ops.EVAL_STEP_METHODS or name in ops.BATCH_BOUNDARY_HOOKS:
                # every method of a Dataset (construction, caching, loading helpers: yolov5's
                # LoadImagesAndLabels.check_cache_ram/load_image) runs in the data pipeline
                roots.append((ROOT_HOST, ref_function(function_id)))
            if cls.step_registered and not name.startswith("_"):
                # built from a config by a head and run in its loss (see ops.STEP_REGISTRIES)
                roots.append((ROOT_COMPILED, ref_function(function_id)))
            if name in ops.STEP_METHODS or (name in ops.TRAINER_STEP_HOOKS and self._hf_trainer(cls)) or \
                    (name in ops.TRAINING_STEP_HOOKS and not cls.is_dataset):
                roots.append((ROOT_TRAIN, ref_function(function_id)))
                return
        if not self._no_step_functions and self._is_training_loop(node):
            # a function that itself calls backward() or steps an optimizer, outside any loop of its own
            # (widedeep's Trainer._train_step: the loop over batches calls it): its body is the step
            roots.append((ROOT_TRAIN, ref_function(function_id)))

    def _hf_trainer(self, cls: _ClassInfo) -> bool:
        """A subclass (through project bases) of a Hugging Face ``Trainer``."""
        return self.has_base(cls, lambda base: base.startswith("transformers.") and base.endswith("Trainer"))

    def has_base(self, cls: _ClassInfo, wanted) -> bool:
        """One of the class's bases outside the project (its own, then through its project bases, which
        the table knows) satisfies ``wanted(qualified name)``."""
        node = cls.node
        if node is not None and any(wanted(self.qualname(base) or "") for base in node.bases):
            return True
        return bool(cls.id) and any(wanted(base) for base in self.ask(("bases", cls.id)) or ())

    def _takes_a_graph(self, node) -> bool:
        """A graph pass: a parameter annotated as a ``torch.fx`` graph, graph module or node (deepspeed's
        DeepCompile passes). It runs while a model is being compiled, on the host, not in the step."""
        args = node.args
        for arg in parameters(args):
            annotation = arg.annotation
            if annotation is not None and type(annotation) in (ast.Name, ast.Attribute) \
                    and self.qualname(annotation) in ops.FX_GRAPH_ANNOTATIONS:
                return True
        return False

    def _is_plain_assignment(self) -> bool:
        """The statement being visited is ``name = value`` with a single target."""
        for node in reversed(self.stack):
            if isinstance(node, ast.Assign):
                return len(node.targets) == 1 and isinstance(node.targets[0], ast.Name)
            if isinstance(node, ast.AnnAssign):
                return isinstance(node.target, ast.Name)
            if isinstance(node, ast.stmt):
                return False
        return False

    def _unpacks(self, target) -> bool:
        """The statement being visited is ``a, b = value`` with this single target."""
        for node in reversed(self.stack):
            if isinstance(node, ast.stmt):
                return isinstance(node, ast.Assign) and len(node.targets) == 1 and node.targets[0] is target
        return False

    def _note_unpacked(self, items, value: ast.Call) -> None:
        """``values, idx = x.sort(1)``: each name's latest value is ``value[i]``, for the shape facts
        of the fix builders (``latest_binding``); not when a target is read by the value itself
        (``x, idx = x.sort(1)``: the value would read the new x)."""
        read = {n.id for n in ast.walk(value) if type(n) is ast.Name}
        if any(type(item) is ast.Name and item.id in read for item in items):
            return
        for index, item in enumerate(items):
            if type(item) is ast.Name:
                element = ast.copy_location(ast.Subscript(value, ast.Constant(index), ast.Load()), value)
                ast.copy_location(element.slice, value)
                self.scope.latest[item.id] = (element, self.scope.bound_at[item.id])

    def bind_name_in_parent(self, name: str) -> None:
        scope = self.scope
        scope.kinds[name] = None
        scope.bindings[name] = None
        scope.latest.pop(name, None)
        scope.maybe.discard(name)

    def _directly_in_class(self) -> bool:
        # the enclosing node (below the FunctionDef itself) is the ClassDef
        return len(self.stack) >= 2 and isinstance(self.stack[-2], ast.ClassDef)

    def _visit_defaults(self, args: ast.arguments) -> None:
        self.visit_all(args.defaults)
        self.visit_all(d for d in args.kw_defaults if d is not None)

    def _bind_parameters(self, node, scope: _Scope, cls: _ClassInfo | None) -> None:
        args = node.args
        positional = positional_parameters(args)
        is_forward = bool(cls and cls.is_module and node.name == "forward")
        params = parameter_defaults(args)
        evidence = documented = None
        own_tensors: list[str] = []  # parameters the function itself shows to be tensors (annotation, use)
        bound = cls is not None and bool(positional) and not _is_staticmethod(node)
        # a custom autograd function's backward(ctx, *grads): the gradients of its outputs, tensors (or
        # None for an output that needs none)
        gradients = cls is not None and node.name == "backward" and not bound and bool(positional) \
            and self._autograd_function(cls)
        commented = self._type_comment(node, len(positional) - bound)
        for index, (arg, default) in enumerate(params):
            name = arg.arg
            scope.bindings[name] = None
            if bound and index == 0:
                scope.kinds[name] = None  # self / cls
                continue
            if gradients:
                scope.kinds[name] = None if index == 0 else TENSOR  # ctx, then the gradients
                if index:
                    scope.maybe.add(name)
                continue
            annotation = arg.annotation
            if annotation is None and commented is not None and arg in positional:
                annotation = commented[index - bound] if index - bound < len(commented) else None
            kind = self._annotation_kind(annotation, torchscript=annotation is not arg.annotation)
            maybe = kind in _MAYBE_ANNOTATIONS
            if maybe:
                kind = TENSOR
            elif type(kind) is tuple:
                # dict[str, Tensor | Any]: the items are maybe tensors, and so (as a whole) is the container
                kind, maybe = _without_maybe(kind)
            if kind == PY and annotation is not None and self.qualname(annotation) in _BARE_CONTAINERS:
                # a bare `tuple`/`list`/`dict` says nothing of its items: what the callers pass does
                # (flair's ViterbiLoss.forward(features_tuple: tuple): (features, lengths, transitions))
                passed = self.ask(("param", scope.id, name))
                if passed is not None and type(passed[0]) is tuple and passed[0][0] in (TUPLE, SEQ, DICT):
                    kind, maybe = passed
            if annotation is not None and not maybe and (kind in TENSORISH or (
                    kind == PY and self.qualname(annotation) in _NUMBER_ANNOTATIONS)):
                passed = self.ask(("passed", scope.id, name))
                if passed is not None and not passed[1] and (
                        (kind in TENSORISH and type(passed[0]) is tuple and passed[0][0] in (TUPLE, SEQ))
                        or (kind == PY and passed[0] in TENSORISH)):
                    # every call contradicts the annotation: piq's `compute_distance(self, x_features:
                    # torch.Tensor)` gets the list of per-layer feature maps, mmengine's EMA `avg_func(...,
                    # steps: int)` the `steps` buffer (the calls of a base class's method that reach an
                    # override counted)
                    kind = passed[0]
            if kind is not None:
                scope.declared[name] = kind
                if kind in TENSORISH and not maybe:
                    own_tensors.append(name)
            if kind is None:  # unannotated, or a type dynlint does not know: what callers pass, how it is used
                passed = self.ask(("param", scope.id, name))
                if passed is not None:
                    kind, maybe = passed
                if evidence is None:
                    evidence = self._scope_evidence()
                if name in evidence and (kind is None or kind in TENSORISH):
                    kind, maybe = (kind if kind in TENSORISH else TENSOR), False
                    own_tensors.append(name)
                elif kind is None and name + _evidence.DICT_MARK in evidence:
                    kind = (DICT, TENSOR)  # boltz's feats: torch.bmm(feats["atom_to_token"], ...)
                if kind in (None, TENSOR) and name in self._scope_masks():
                    kind, maybe = MASK, False
                if annotation is None and (kind is None or (maybe and kind in TENSORISH)):
                    if documented is None:
                        documented = _evidence.documented_types(ast.get_docstring(node, clean=False) or "")
                    if name in documented:  # "x (torch.Tensor): ..." in the docstring: confirms a maybe too
                        kind, maybe = documented[name], False
                if kind is None and is_forward and annotation is None:
                    if default is None or _is_constant_none(default):
                        kind, maybe = TENSOR, True  # forward(self, x, mask=None): most likely tensors
                    elif isinstance(default, ast.Constant):
                        kind = PY
                if maybe and kind in TENSORISH and annotation is None and name in self._scope_sizes():
                    # only presumed a tensor, and given as a size: `x.view(B, H, W, C)` (swin's
                    # forward(self, x, H, W), H and W passed on from block to block)
                    kind, maybe = PY, False
            scope.kinds[name] = kind
            if maybe:
                scope.maybe.add(name)
        for extra in (args.vararg, args.kwarg):
            if extra is not None:
                scope.kinds[extra.arg] = (SEQ, TENSOR) if gradients and extra is args.vararg else None
                scope.bindings[extra.arg] = None
        if is_forward and args.kwarg is not None and not (
                type(args.kwarg.annotation) is ast.Name and args.kwarg.annotation.id in _PLAIN_KWARGS):
            # forward(self, x, **kwargs) (`**kwargs: Unpack[...]` too): what it reads by name
            # (`kwargs.get("cu_seqlens")`) is most likely a tensor, as its unannotated parameters are (a
            # maybe: flags read the same way are never confirmed)
            scope.kinds[args.kwarg.arg] = (DICT, TENSOR)
            scope.maybe.add(args.kwarg.arg)
        if own_tensors:
            self.produced.tensor_params[scope.id] = tuple(own_tensors)

    def _note_saved(self, node: ast.Call) -> None:
        """``ctx.save_for_backward(hidden, valid)`` in a custom autograd function: the kinds of what it
        saves, for its backward's ``ctx.saved_tensors`` (a mask saved stays a mask there)."""
        info = self.classes[-1]
        if not info.id or any(isinstance(arg, ast.Starred) for arg in node.args) or node.keywords:
            return
        kinds = (TUPLE, *(relevant(self.kind(arg)) for arg in node.args))
        attrs = self.produced.attrs.setdefault(info.id, {})
        earlier = attrs.get(_SAVED)
        if earlier is not None and earlier != kinds:
            kinds = join(earlier, kinds)[0]  # saved twice, differently: element by element
        attrs[_SAVED] = kinds

    def _autograd_function(self, cls: _ClassInfo) -> bool:
        """The class subclasses ``torch.autograd.Function`` (through project bases)."""
        return self.has_base(cls, ops.AUTOGRAD_FUNCTION_BASES.__contains__)

    def _type_comment(self, node, count: int) -> list | None:
        """The parameter annotations of a ``# type: (A, B) -> R`` comment (TorchScript style), if
        the function has one and it names ``count`` parameters."""
        first = node.body[0].lineno if node.body else node.lineno
        for number in range(node.lineno, min(first, len(self.lines) + 1)):
            line = self.lines[number - 1]
            if "# type:" not in line:
                continue
            comment = line.split("# type:", 1)[1].strip()
            if not comment.startswith("("):
                return None
            try:
                signature = ast.parse(comment, mode="func_type")
                self._temporaries.append(signature)  # its nodes' ids key the caches: keep it alive
            except (SyntaxError, ValueError, RecursionError):
                return None
            return signature.argtypes if len(signature.argtypes) == count else None
        return None

    def _annotation_kind(self, annotation: ast.expr | None, depth: int = 0, torchscript: bool = False):
        """The kind an annotation promises: Tensor, Optional[Tensor], ``list[int] | Tensor`` (a
        maybe), containers (``Dict[str, Tensor]``, ``list[dict[str, Tensor]]``,
        ``tuple[Tensor, ...]``), plain Python types, numpy arrays.  ``torchscript``: a type
        comment, where TorchScript knows ``Tensor``, ``List``, ``Dict``... without imports."""
        if annotation is None or depth > 4:
            return None
        if torchscript and isinstance(annotation, ast.Name) and annotation.id == "Tensor" \
                and self.qualname(annotation) is None:
            return TENSOR
        if isinstance(annotation, ast.Constant) and isinstance(annotation.value, str):
            try:
                annotation = ast.parse(annotation.value, mode="eval").body
                self._temporaries.append(annotation)  # its nodes' ids key the caches: keep it alive
            except (SyntaxError, ValueError, RecursionError):
                return None
        if isinstance(annotation, ast.Constant) and annotation.value is None:
            return PY
        if type(annotation) is ast.Name and annotation.id in self._type_aliases \
                and not any(annotation.id in scope.kinds for scope in self.scopes[1:]):
            return self._annotation_kind(self._type_aliases[annotation.id], depth + 1, torchscript)
        sides = None
        if isinstance(annotation, ast.BinOp) and isinstance(annotation.op, ast.BitOr):
            sides = _union_sides(annotation)
        elif isinstance(annotation, ast.Subscript):
            outer = self.qualname(annotation.value)
            if outer in ("typing.Optional", "Optional"):
                return self._annotation_kind(annotation.slice, depth + 1, torchscript)
            if outer in ("typing.Union", "Union"):
                sides = list(annotation.slice.elts) if isinstance(annotation.slice, ast.Tuple) else [annotation.slice]
        if sides is not None:
            kinds = [self._annotation_kind(s, depth + 1, torchscript) for s in sides
                     if not (isinstance(s, ast.Constant) and s.value is None)]
            if len(kinds) == 1:
                return kinds[0]
            if any(k in TENSORISH for k in kinds):
                return _MAYBE_TENSOR  # list[int] | Tensor: whatever is only a tensor's is the tensor's
            if kinds and all(k is not None and k != _MAYBE_TENSOR for k in kinds):
                return PY  # str | Path | list: no side a tensor
            return None
        if isinstance(annotation, ast.Subscript):
            shaped = self._shape_dtype_kind(annotation, depth, torchscript)
            if shaped is not _NOT_SHAPED:
                return shaped
        qual = self.qualname(annotation)
        container = None
        if qual is None and isinstance(annotation, ast.Subscript):
            qual = self.qualname(annotation.value)
            if qual is None and isinstance(annotation.value, ast.Name):
                qual = annotation.value.id  # list[...] and friends shadowed nowhere
            container = annotation.slice
        if qual is None:
            return None
        named = qual
        if container is None and self._is_project(qual):
            aliased_kind = self.ask(("typekind", qual))  # a type alias another module defines
            if aliased_kind is not None:
                return aliased_kind
        if self._is_project(qual):
            aliased = self.ask(("alias", qual))  # a type alias another module of the project defines
            if aliased is not None:
                qual = aliased
                if qual.split(".", 1)[0] in ops.TORCH_MODULE_ROOTS:
                    self.imports_torch = True  # torch code, though torch comes in only by the alias
        if qual in ops.MASK_ANNOTATIONS:
            return MASK
        if qual in ops.MISTAKEN_TENSOR_ANNOTATIONS:
            return TENSOR
        if qual in ops.TENSOR_ANNOTATIONS:
            # an alias named for booleans (pykeen's ``BoolTensor: TypeAlias = torch.Tensor``) is a mask
            return MASK if named != qual and named.rpartition(".")[2] in ops.MASK_ALIAS_NAMES else TENSOR
        if qual in ops.TENSOR_MAPPING_ANNOTATIONS:
            return (DICT, _MAYBE_TENSOR)  # what a TensorDict holds: tensors, or nested TensorDicts
        if container is not None and qual in _SEQUENCE_ANNOTATIONS:
            elements = container.elts if isinstance(container, ast.Tuple) else [container]
            if qual in ("tuple", "typing.Tuple", "Tuple") and len(elements) == 2 and \
                    isinstance(elements[1], ast.Constant) and elements[1].value is Ellipsis:
                element = self._annotation_kind(elements[0], depth + 1, torchscript)
                return (SEQ, element) if element is not None else PY
            if qual in ("tuple", "typing.Tuple", "Tuple"):
                kinds = tuple(self._annotation_kind(e, depth + 1, torchscript) for e in elements)
                return (TUPLE, *kinds) if any(k is not None and k != PY for k in kinds) else PY
            element = self._annotation_kind(elements[0], depth + 1, torchscript)
            return (SEQ, element) if element is not None and element != PY else PY
        if container is not None and qual in _MAPPING_ANNOTATIONS:
            elements = container.elts if isinstance(container, ast.Tuple) else [container]
            value = self._annotation_kind(elements[-1], depth + 1, torchscript) if len(elements) == 2 else None
            return (DICT, value) if value is not None and value != PY else PY
        if qual in ops.PY_ANNOTATIONS:
            return PY
        if qual in ("numpy.ndarray", "numpy.typing.NDArray"):
            return NDARRAY
        if container is None and not self._is_project(qual) and is_module_base(qual):
            return MODULE  # `model: torch.nn.Module`
        if container is None and self._is_project(qual):
            # a project class: an instance of it (calling one that is an nn.Module runs its forward)
            return self._instance_kind(qual)
        if container is None and qual.startswith("torch.") and not qual.startswith(_TORCH_TENSORISH_NAMESPACES):
            last = qual.rpartition(".")[2]
            if last[:1].isupper() and "Tensor" not in last:
                return PY  # torch.Stream, torch.cuda.Event, torch.device, torch.Generator: no tensor
        return None

    def _shape_dtype_kind(self, annotation: ast.Subscript, depth: int, torchscript: bool):
        """``Float[Tensor, "b n"]`` (jaxtyping), ``Float["b n"]`` (a project's shorthand for it),
        ``TensorType["batch", 3]`` (torchtyping): a tensor, a mask for ``Bool``; ``_NOT_SHAPED`` when
        the annotation is none of these."""
        base = self.qualname(annotation.value)
        if base in ops.TENSOR_SUBSCRIPT_ANNOTATIONS:
            return TENSOR
        if base is None:
            return _NOT_SHAPED
        root, _, last = base.rpartition(".")
        if last not in ops.SHAPE_DTYPE_ANNOTATIONS or not (root == "jaxtyping" or self._is_project(base)):
            return _NOT_SHAPED
        elements = annotation.slice.elts if isinstance(annotation.slice, ast.Tuple) else [annotation.slice]
        if len(elements) == 1 and self._is_project(base):
            shape = elements[0]
            if not (isinstance(shape, ast.Constant) and isinstance(shape.value, str)):
                return _NOT_SHAPED
            return MASK if last == "Bool" else TENSOR  # Float['b n d']: the project wraps the array type in
        if len(elements) != 2:
            return _NOT_SHAPED
        array = self._annotation_kind(elements[0], depth + 1, torchscript)
        if array in TENSORISH:
            return MASK if last == "Bool" else TENSOR
        return array  # Float[np.ndarray, "n"]: an array; Float[Array, ...] (jax): unknown

    def _tensor_type_class(self, node: ast.ClassDef):
        """TENSOR (MASK for a ``torch.bool`` dtype) when the class is a tensor type: a subclass of
        ``torch.Tensor`` or of a torchtyping ``TensorType[...]`` that adds no methods of its own (dunders
        aside); None otherwise.  A subclass with methods (torch_geometric's ``EdgeIndex.to_sparse_csr``)
        means them, not torch's."""
        if any(type(item) in (ast.FunctionDef, ast.AsyncFunctionDef) and not item.name.startswith("__")
               for item in node.body):
            return None
        for base in node.bases:
            if type(base) is ast.Subscript and self.qualname(base.value) in ops.TENSOR_SUBSCRIPT_ANNOTATIONS:
                elements = base.slice.elts if type(base.slice) is ast.Tuple else [base.slice]
                return MASK if any(self.qualname(e) == "torch.bool" for e in elements) else TENSOR
            if type(base) is not ast.Subscript and self.qualname(base) in ops.TENSOR_ANNOTATIONS:
                return TENSOR
        return None

    def _namedtuple_class(self, target: ast.expr, value: ast.expr) -> bool:
        """``_RungeKuttaState = collections.namedtuple("_RungeKuttaState", "y1, f1, t0, t1, dt")`` at module
        level (torchdiffeq's solver state): a class whose instances hold, in each field, what this file's
        constructions pass for it (``state.t1`` of a state built from tensors is a tensor)."""
        if not self._module_level_name(target) or type(value) is not ast.Call or len(value.args) < 2:
            return False
        if self.qualname(value.func) not in _NAMEDTUPLE_FACTORIES:
            return False
        fields = _namedtuple_fields(value.args[1])
        if not fields:
            return False
        class_id = f"{self.module}.{target.id}"
        self.produced.classes[class_id] = ((), False, False)
        self.produced.namedtuples[class_id] = tuple(fields)
        self._namedtuples[class_id] = fields
        self.module_scope.kinds.pop(target.id, None)
        self.module_scope.defs[target.id] = class_id
        return True

    def _note_namedtuple(self, node: ast.Call, qual: str) -> None:
        """A construction of a namedtuple class of the project: what it puts in each field (torchdiffeq's
        solvers build `_ButcherTableau(alpha=torch.tensor(...), ...)` in other files than the factory's)."""
        class_id, fields = qual, self._namedtuples.get(qual)
        if fields is None:
            answer = self.ask(("ntfields", qual))
            if answer is None:
                return
            class_id, fields = answer
        if any(type(arg) is ast.Starred for arg in node.args) or any(k.arg is None for k in node.keywords):
            return
        passed = list(zip(fields, node.args)) + [(k.arg, k.value) for k in node.keywords if k.arg in fields]
        attrs = self.produced.attrs.setdefault(class_id, {})
        for name, value in passed:
            known = self.value_kind(value)
            if known is None:
                continue  # a value of unknown kind says nothing (`alpha=self.tableau.alpha.to(device)`)
            kind = relevant(known)
            if name in attrs and attrs[name] != kind:
                kind = None  # other constructions here put something else there
            attrs[name] = kind

    def _module_level_name(self, target: ast.expr) -> bool:
        """``target`` is a name bound by a statement of the module itself (not in a class or a function)."""
        return type(target) is ast.Name and not self.function_depth and not self.classes \
            and self.scope is self.module_scope

    def _type_alias(self, target: ast.expr, value: ast.expr, declared: bool) -> bool:
        """A module-level type alias (pykeen's ``FloatTensor: TypeAlias = torch.Tensor``): a name for a
        tensor type, a project class (timesfm's ``DecodeCache = util.DecodeCache``) or, ``declared`` with
        ``TypeAlias``, any named type becomes an alias of it, as an
        import is, and other files resolve it through this module; a subscript or union
        (``Tensorish = Union[Tensor, float]``) is kept for this file's annotations.  True when the
        assignment was taken as an alias (nothing else to bind)."""
        if not self._module_level_name(target):
            return False
        if type(value) in (ast.Name, ast.Attribute):
            qual = self.qualname(value)
            if qual is not None and (declared or qual in ops.TENSOR_ANNOTATIONS or self._names_project_class(qual)):
                self._set_alias(target.id, qual)
                return True
            return False
        if declared or (type(value) is ast.Subscript and self.qualname(value.value) in _ALIASED_SUBSCRIPTS) or \
                (type(value) is ast.BinOp and type(value.op) is ast.BitOr):
            self._type_aliases[target.id] = value
            kind = self._annotation_kind(value)
            if kind is not None and kind != PY and kind != _MAYBE_TENSOR:
                # other modules' annotations naming it mean the same (nequip's AtomicDataDict.Type)
                self.produced.type_kinds[f"{self.module}.{target.id}"] = kind
        return False

    def visit_Lambda(self, node: ast.Lambda) -> None:
        self._visit_defaults(node.args)
        scope = _Scope("<lambda>", self._function_id())
        for arg in parameters(node.args):
            scope.kinds[arg.arg] = None
        scope.evidence = frozenset()
        self.scopes.append(scope)
        try:
            self.visit(node.body)
        finally:
            self.scopes.pop()

    def visit_ClassDef(self, node: ast.ClassDef) -> None:
        self.visit_all(node.decorator_list)
        self.visit_all(node.bases)
        self.visit_all(node.keywords)
        class_id = (f"{self.module}.{node.name}" if self.scope is self.module_scope and not self.classes
                    else f"{self._function_id()}.{node.name}" if not self.classes else f"{self.classes[-1].id}.{node.name}")
        is_module_class = is_dataset = False
        bases = []
        for base in node.bases:
            if type(base) is ast.Subscript:
                base = base.value  # a generic base (Algorithm[TPolicy], Generic[T]): the class is what counts
            qual = self.qualname(base)
            name = qual or (base.id if isinstance(base, ast.Name) else base.attr if isinstance(base, ast.Attribute) else "")
            local = self.local_classes.get(base.id) if isinstance(base, ast.Name) else None
            if qual:
                bases.append(qual)
            if (qual and is_module_base(qual)) or name.endswith(ops.MODULE_BASE_SUFFIXES) or (local and local.is_module):
                is_module_class = True
            if qual in ops.DATASET_BASE_QUALNAMES or (local and local.is_dataset):
                is_dataset = True
            if qual and self._is_project(qual) and not (local and local.id == qual):
                flags = self.ask(("base", qual))
                if flags:
                    is_module_class = is_module_class or bool(flags[0])
                    is_dataset = is_dataset or bool(flags[1])
        info = _ClassInfo(node.name, class_id, is_module_class, is_dataset, node)
        info.host_class = any((self.qualname(b) or getattr(b, "attr", getattr(b, "id", ""))).endswith(
            ops.HOST_CLASS_SUFFIXES) for b in node.bases) or (not is_module_class and (
                any(base in ops.HOST_CLASS_BASES for base in bases)
                or any(word in node.name for word in ops.HOST_CLASS_NAME_WORDS)))
        info.step_registered = any(_registry_name(d) in ops.STEP_REGISTRIES for d in node.decorator_list) \
            and ops.TRACKING_MODULE_PART not in self.module.split(".")
        self.produced.classes[class_id] = (tuple(bases), is_module_class, is_dataset)
        tensor_type = self._tensor_type_class(node)
        if tensor_type is not None and self.scope is self.module_scope and not self.classes:
            # `class TimeTensor(TensorType["batch", is_float]): pass` (torchode): annotations naming the
            # class name tensors, here and in the modules that import it
            self.produced.type_kinds[class_id] = tensor_type
        self.local_classes[node.name] = info
        self.bind_name_in_parent(node.name)
        self.scope.defs[node.name] = class_id
        self.classes.append(info)
        class_scope = _Scope(node.name, class_id)
        # class bodies see module names but their own names are not visible in methods
        outer_depth = self.control_depth
        self.scopes.append(class_scope)
        try:
            for stmt in node.body:
                if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)):
                    if _member_kind(stmt) == "method":
                        # a method: no object holds a tensor under its name (a property tells its own walk)
                        self.produced.stores[stmt.name] = PY
                    # methods resolve names in the enclosing (module/function) scope, not the class
                    self.scopes.pop()
                    try:
                        self.visit(stmt)
                    finally:
                        self.scopes.append(class_scope)
                else:
                    self.visit(stmt)
        finally:
            self.scopes.pop()
            self.classes.pop()
            self.control_depth = outer_depth
        info.body_attrs = dict(info.attr_kinds)

    def visit_Assign(self, node: ast.Assign) -> None:
        self.visit(node.value)
        if len(node.targets) == 1 and self._type_alias(node.targets[0], node.value, False):
            return
        if len(node.targets) == 1 and self._namedtuple_class(node.targets[0], node.value):
            return
        kind = self.kind(node.value)
        for target in node.targets:
            self.visit_target(target)
            self.bind(target, kind, node.value)
            if type(target) is ast.Subscript and type(target.slice) is ast.Constant \
                    and type(target.slice.value) is str:
                self._store_key(target.slice.value, node.value)

    def visit_Dict(self, node: ast.Dict) -> None:
        self.generic_visit(node)
        for key, value in zip(node.keys, node.values):
            if type(key) is ast.Constant and type(key.value) is str:
                self._store_key(key.value, value)

    def _store_key(self, key: str, value: ast.expr) -> None:
        """A value stored under a string key of a dict: what dicts of unknown origin may hold under it (a
        value of unknown kind, or one only presumed a tensor, says nothing)."""
        kind = self.kind(value)
        if kind is None or (kind in TENSORISH and self.uncertain(value)):
            return
        if kind not in TENSORISH:
            kind = PY
        keys = self.produced.keys
        keys[key] = join_key(keys.get(key), kind)

    def visit_AnnAssign(self, node: ast.AnnAssign) -> None:
        if node.value is not None:
            self.visit(node.value)
            if self.qualname(node.annotation) in _TYPE_ALIAS_MARKS \
                    and self._type_alias(node.target, node.value, True):
                return
        kind = self._annotation_kind(node.annotation)
        maybe = kind in _MAYBE_ANNOTATIONS
        if maybe:
            kind = TENSOR
        elif type(kind) is tuple:
            kind, maybe = _without_maybe(kind)
        elif kind is None and node.value is not None:
            kind = self.kind(node.value)
            maybe = self.uncertain(node.value)
        self.visit_target(node.target)
        if node.value is not None or isinstance(node.target, ast.Name):
            self.bind(node.target, kind, node.value, maybe=maybe)
        if self.classes and self.function_depth == 0 and isinstance(node.target, ast.Name) \
                and self.scope.id == self.classes[-1].id and kind is not None:
            # a dataclass-style field (`loss: Optional[torch.FloatTensor] = None`, ModelOutput): what
            # instances hold
            self._set_self_attr(self.classes[-1], node.target.id, kind)
        if self.classes and self.function_depth == 0 and isinstance(node.target, ast.Name) \
                and self.scope.id == self.classes[-1].id:
            # what any object holds under this name, as far as the project's declarations agree
            field_kind = kind if kind in TENSORISH else PY
            self.produced.fields[node.target.id] = join_field(self.produced.fields.get(node.target.id), field_kind)

    def visit_AugAssign(self, node: ast.AugAssign) -> None:
        self.visit(node.value)
        target = node.target
        if isinstance(target, ast.Subscript):
            # x[m] += v reads x[m] first: the read is a dynamic-shape op
            self.check_subscript_read(target)
            self.visit(target.value)
            self.visit(target.slice)
        elif isinstance(target, ast.Name):
            combined = _combine_binop(self.lookup(target.id), self.kind(node.value), node.op)
            self.scope.kinds[target.id] = combined
            self.scope.bindings[target.id] = None
            self._rebound(target.id)
        else:
            self.visit(target)

    def visit_target(self, target: ast.AST) -> None:
        """Visit the sub-expressions of an assignment target (indexes, attribute bases)."""
        if isinstance(target, ast.Subscript):
            for handler in self.dispatch.subscript_store:
                handler(self, target)
            self.stack.append(target)
            try:
                self.visit(target.value)
                self.visit(target.slice)
            finally:
                self.stack.pop()
        elif isinstance(target, ast.Attribute):
            self.visit(target.value)
        elif isinstance(target, (ast.Tuple, ast.List)):
            for item in target.elts:
                self.visit_target(item)
        elif isinstance(target, ast.Starred):
            self.visit_target(target.value)

    def visit_Expr(self, node: ast.Expr) -> None:
        value = node.value
        # self.register_buffer("name", tensor) makes self.name a tensor
        if (isinstance(value, ast.Call) and isinstance(value.func, ast.Attribute)
                and value.func.attr in ("register_buffer", "register_parameter")
                and isinstance(value.func.value, ast.Name) and value.func.value.id == "self"
                and value.args and self.classes):
            name = value.args[0]
            if isinstance(name, ast.Constant) and isinstance(name.value, str):
                self._set_self_attr(self.classes[-1], name.value, TENSOR)
            else:
                pattern = _computed_name_pattern(name)
                if pattern is not None:
                    # `self.register_buffer('input_indices_{}'.format(t), ...)` (escnn): every name made
                    # alike is a buffer, read back with `getattr(self, f"input_indices_{t}")`
                    self._set_self_attr(self.classes[-1], pattern, TENSOR)
        self.visit(value)

    def visit_Return(self, node: ast.Return) -> None:
        if node.value is not None:
            self.visit(node.value)
        scope = self.scope
        if scope.returns is not None:
            if node.value is None:
                scope.returns.append((PY, False))
            else:
                scope.returns.append((self.kind(node.value), self.uncertain(node.value)
                                      or (type(node.value) is ast.Name and self._is_maybe(node.value.id))))

    def visit_Yield(self, node) -> None:
        self.scope.is_generator = True
        self.generic_visit(node)

    visit_YieldFrom = visit_Yield

    def visit_For(self, node) -> None:
        outer = self.context
        training = outer is None and self._is_training_loop(node)
        if training and _project_generator_call(node.iter):
            # `for batch in self._iter_dataloader(...)`: the generator's body runs between the steps, each step
            self.context = TRAIN
        try:
            self.visit(node.iter)
            self.check_loop_iterable(node.iter)
        finally:
            self.context = outer
        self.visit_target(node.target)
        iterable = node.iter
        if type(iterable) in (ast.Tuple, ast.List) and iterable.elts and type(node.target) is ast.Name \
                and all(type(e) is not ast.Starred and self.kind(e) == PY for e in iterable.elts):
            element = PY  # `for kernel in kernel_size, gaussian_size:`: one of these plain values, whatever the
            # name holds later in the function (piq's `kernel = gaussian_filter(...)`)
        else:
            element = _iteration_kind(self.kind(iterable))
        self.bind(node.target, element, maybe=self.uncertain(iterable))
        if training:
            self.context = TRAIN
        try:
            self._visit_branches(node)
        finally:
            self.context = outer

    visit_AsyncFor = visit_For

    def _is_training_loop(self, loop) -> bool:
        if self._in_tests:
            return False  # a test that trains a few steps checks the code; it is no user's training step
        # the words are in the loop's text before its tree is searched (most loops have neither)
        text = "\n".join(self.lines[loop.lineno - 1:loop.end_lineno or loop.lineno])
        if _mentions_a_step(text) and _is_training_loop(loop):
            return True
        return "(" in text and not self._no_step_functions and self._calls_a_step_function(loop)

    def _calls_a_step_function(self, loop) -> bool:
        """The loop calls a step function of this file: by name, a function (at any depth) that itself calls
        ``backward()`` or steps an optimizer outside any loop of its own, or calls such a function so
        (torchrl's scripts: ``for batch in buffer: loss = update(batch)`` with ``def update(...)`` in main);
        or, as ``self.<name>(...)``, such a method of the class it is in (Composer's ``Trainer._train_loop``:
        ``self._train_batch(...)`` steps the optimizers, ``self._train_microbatch`` calls ``backward()``)."""
        steppers = self._step_functions()
        if isinstance(loop, (ast.FunctionDef, ast.AsyncFunctionDef)):
            return id(loop) in steppers[0]
        cls = self.classes[-1].node if self.classes else None
        for node in _direct_nodes(loop):
            if type(node) is ast.Call:
                func = node.func
                if type(func) is ast.Name and func.id in steppers[1]:
                    return True
                if cls is not None and type(func) is ast.Attribute and type(func.value) is ast.Name \
                        and func.value.id == "self" and (id(cls), func.attr) in steppers[2]:
                    return True
                # a step function of another file (a method a subclass elsewhere overrides: rl-games'
                # `A2CBase.train_epoch` calls `self.train_actor_critic(...)`, which `A2CAgent` defines to step)
                ref = self._step_call_ref(func)
                if ref is not None and self.ask(("steps", ref)):
                    return True
        return False

    def _step_call_ref(self, func: ast.expr) -> tuple | None:
        """The project function (``name(...)``) or method of this class (``self.name(...)``) a call in a loop
        runs, found without inferring kinds: the loop's body has not been walked yet."""
        if type(func) is ast.Name:
            qual = self.qualname(func)
            return ref_function(qual) if qual is not None and self._is_project(qual) else None
        if type(func) is ast.Attribute and type(func.value) is ast.Name and func.value.id == "self" \
                and self.classes and self.classes[-1].id and self._self_is_instance():
            info = self.classes[-1]
            known, _ = self._self_attr(info, func.attr)
            return None if known else ref_method(info.id, func.attr)
        return None

    def _step_functions(self) -> tuple[frozenset, frozenset, frozenset]:
        """This file's step functions (computed once per file): their nodes' ids, the names of those not in a
        class, and (class node id, name) of the methods."""
        found = self._steppers
        if found is None:
            ids: set[int] = set()
            steppers: set = set()  # a function's name, or (its class node's id, its name) for a method
            if _mentions_a_step("\n".join(self.lines)):
                functions = []  # (node, id of the class it is a method of, or None)
                pending = [(self.tree, None)]
                while pending:
                    parent, owner = pending.pop()
                    for child in ast.iter_child_nodes(parent):
                        t = type(child)
                        if t in (ast.FunctionDef, ast.AsyncFunctionDef):
                            functions.append((child, owner))
                            pending.append((child, None))
                        elif t is ast.ClassDef:
                            pending.append((child, id(child)))
                        else:
                            pending.append((child, owner))  # a method defined under an `if` in the class body
                calls = {}  # id of a function -> the names and (class id, method) it calls outside its loops
                for function, owner in functions:
                    called = set()
                    for node in _direct_nodes(function):
                        if type(node) is ast.Call:
                            func = node.func
                            if type(func) is ast.Name:
                                called.add(func.id)
                            elif owner is not None and type(func) is ast.Attribute and type(func.value) is ast.Name \
                                    and func.value.id == "self":
                                called.add((owner, func.attr))
                    calls[id(function)] = called
                stepping = {id(function) for function, _ in functions if _is_training_loop(function)}
                changed = True
                while changed:  # a function calling a step function outside its loops is one too
                    changed = False
                    for function, owner in functions:
                        if id(function) not in ids and (id(function) in stepping
                                                        or not calls[id(function)].isdisjoint(steppers)):
                            ids.add(id(function))
                            steppers.add(function.name if owner is None else (owner, function.name))
                            changed = True
            names = frozenset(k for k in steppers if type(k) is str)
            found = self._steppers = (frozenset(ids), names, frozenset(steppers) - names)
        return found

    def visit_While(self, node) -> None:
        with self._test_narrowed(node.test):
            self.check_branch_test(node.test, node.body)
            self.visit(node.test)
        outer = self.context
        if outer is None and self._is_training_loop(node):
            self.context = TRAIN
        try:
            self._visit_branches(node)
        finally:
            self.context = outer

    def _visit_branches(self, loop) -> None:
        """A loop's body and else: statements that may or may not run, names bound there are
        path-dependent."""
        self.control_depth += 1
        try:
            carried = self._flow_block(loop, "body", loop.body)
            if carried and not self._second_pass and _read_before_bound(loop.body, carried):
                # `start = 0; for end in ends: ... start == 0 ...; start = end`: from the second time round,
                # a name the body binds to a tensor holds one where the body reads it first
                self._second_pass = True
                self._kind_cache.clear()  # the kinds computed in the first pass saw the names' first values
                try:
                    self._flow_block(loop, "body", loop.body)
                finally:
                    self._second_pass = False
            self._flow_block(loop, "orelse", loop.orelse)
        finally:
            self.control_depth -= 1

    def _visit_block(self, statements) -> None:
        """A block of statements (a function or module body, a branch, a loop body).  After ``if
        is_compiling(): return ...`` the rest of the block only runs eagerly."""
        outer = self.context
        try:
            for stmt in statements:
                self.visit(stmt)
                if type(stmt) in _TERMINATORS or (type(stmt) is ast.If and never_falls_through([stmt])):
                    break  # what follows `raise`/`return`/`continue`/`break` in the same block never runs
                if type(stmt) is ast.If and self.context != HOST and only_exits(stmt.body) \
                        and self._guard(stmt.test) == _COMPILING and not stmt.orelse:
                    self.context = HOST
        finally:
            self.context = outer

    def visit_comprehension(self, node: ast.comprehension) -> None:
        self.visit(node.iter)
        self.check_loop_iterable(node.iter)
        self._comprehension_target = True
        try:
            self.bind(node.target, _iteration_kind(self.kind(node.iter)), maybe=self.uncertain(node.iter))
        finally:
            self._comprehension_target = False
        for condition in node.ifs:  # `[t for t in ts if t.sum() > 0]` branches per element
            self.check_branch_test(condition, None)
            self.visit(condition)

    def _visit_comprehension_expr(self, node) -> None:
        if self._kind_cache:
            # a check of the call around it may have judged the element before its variables were bound
            # (`int(max(s.item() for s in sizes))`: int() asks max()'s kind first): those kinds saw no `s`
            cache = self._kind_cache
            for sub in ast.walk(node):
                cache.pop(id(sub), None)
        for generator in node.generators:
            self.stack.append(generator)
            try:
                self.visit_comprehension(generator)
            finally:
                self.stack.pop()
        if isinstance(node, ast.DictComp):
            self.visit(node.key)
            self.visit(node.value)
        else:
            self.visit(node.elt)

    visit_ListComp = visit_SetComp = visit_GeneratorExp = visit_DictComp = _visit_comprehension_expr

    def visit_If(self, node) -> None:
        if self.function_depth == 0 and not self.classes and _is_main_guard(node.test):
            # a script: its top-level statements run as the script, on the host (a training loop among
            # them is still the training step)
            self.produced.roots.append((ROOT_HOST, ref_function(self.module)))
        guard = self._guard(node.test)
        outer = self.context
        if self._eager_only_rest(node.test):
            # `if not is_compiling() and mask.all():` (or `is_compiling() or ...`) evaluates the rest only
            # when not compiling
            self.context = HOST
        try:
            with self._test_narrowed(node.test):
                self.check_branch_test(node.test, node.body)
                self.visit(node.test)
        finally:
            self.context = outer
        self.control_depth += 1
        typed = self._type_tested_names(node)
        body_ends: dict = {}
        else_ends: dict = {}
        try:
            self.context = HOST if guard == _NOT_COMPILING or _debug_only(node.test) else outer
            with self._narrowed(node.test, node.body):
                self._flow_block(node, "body", node.body, body_ends)
            self.context = HOST if guard == _COMPILING else outer
            with self._narrowed(node.test, node.orelse, negate=True):
                self._flow_block(node, "orelse", node.orelse, else_ends)
        finally:
            self.control_depth -= 1
            self.context = outer
        if node.orelse:
            self._rebound_on_every_path(node, body_ends, else_ends)
        if typed:
            # `if torch.is_tensor(self.domain): d = squash(self.domain) else: d = self.domain`: d is a
            # tensor exactly when the tested value is, which nothing here says it is: only maybe one,
            # not a tensor for real on one path (normflows' compute_domain_codomain)
            scope = self.scope
            for name in typed:
                if name in scope.partial:
                    scope.partial.discard(name)
                    scope.maybe.add(name)
                    self._typed_maybe.add((scope.id, name))

    def _rebound_on_every_path(self, node: ast.If, body_ends: dict, else_ends: dict) -> None:
        """``if isinstance(r, int): r = [r] * n / else: r = r.tolist()``: a name bound on every path
        through an if/else (an ``elif`` chain included) holds what those paths bound, not what it held
        before the ``if`` (a branch that always returns, raises, breaks or continues does not reach
        the end).  Each block joined its binding with the earlier value at its end (_flow_block); this
        replaces that join with the join of the paths that reach the end.  The block around the ``if``
        still joins what the name held before the ``if`` at its own end."""
        if len(node.orelse) == 1 and type(node.orelse[0]) is ast.If:
            nested = self._every_path.pop(id(node.orelse[0]), None)
            if nested is not None:
                else_ends = {**else_ends, **nested}
        body_exits, else_exits = never_falls_through(node.body), never_falls_through(node.orelse)
        if body_exits and else_exits:
            return
        if body_exits:
            reaching = [else_ends]
        elif else_exits:
            reaching = [body_ends]
        else:
            reaching = [body_ends, else_ends]
        names = set(reaching[0]).intersection(*reaching[1:])
        if not names:
            return
        scope = self.scope
        found = {}
        pending = self._flow_pending.get(self._block_key()) if self.control_depth else None
        for name in names:
            if name not in scope.kinds:
                continue
            kind, maybe, partial, *before = reaching[0][name]
            for other in reaching[1:]:
                other_kind, other_maybe, other_partial = other[name][:3]
                if other_kind != kind:
                    kind, maybe, partial = _join_paths(kind, maybe, partial, other_kind, other_maybe, other_partial)
                else:
                    maybe, partial = maybe or other_maybe, partial or other_partial
            # what the name held before the `if`: where the body bound it, what its block began with
            before = body_ends[name][3:] if name in body_ends else before
            found[name] = (kind, maybe, partial, *before)
            if pending is not None and name not in pending:
                pending[name] = (scope, *before)
            if scope.kinds[name] != kind or (name in scope.maybe) != maybe or (name in scope.partial) != partial:
                scope.kinds[name] = kind
                (scope.maybe.add if maybe else scope.maybe.discard)(name)
                (scope.partial.add if partial else scope.partial.discard)(name)
                self._kind_cache.clear()
        if found:
            self._every_path[id(node)] = found

    def _type_tested_names(self, node: ast.If) -> list[str]:
        """The names an ``if`` binds in its body when its test asks whether a value not known to be a
        tensor is one (``isinstance(x, Tensor)``, ``torch.is_tensor(x)``) and it has an ``else``."""
        if not node.orelse:
            return []
        test = node.test
        if type(test) is ast.Call and self.qualname(test.func) == "torch.is_tensor" and len(test.args) == 1:
            subjects = [test.args[0]]
        else:
            subjects = [c.args[0] for c in _isinstance_checks(test) if self._names_tensor_type(c.args[1])]
        if not subjects or any(self.kind(subject) in TENSORISH for subject in subjects):
            return []
        return [n.id for stmt in node.body for n in ast.walk(stmt)
                if type(n) is ast.Name and type(n.ctx) is ast.Store]

    def _test_narrowed(self, test: ast.expr):
        """``isinstance(angle, (list, tuple)) and len(angle) == 3``: the type tests an ``and`` starts with hold
        while the rest of it is evaluated (deepinv's blur generators: ``len`` of a list there, no tensor
        size).  Only the leading ones: what comes before a test is evaluated without it."""
        if type(test) is not ast.BoolOp or not isinstance(test.op, ast.And):
            return _NO_NARROWING
        leading = []
        for value in test.values[:-1]:
            inner = value.operand if type(value) is ast.UnaryOp and isinstance(value.op, ast.Not) else value
            if not (_isinstance_checks(inner) == [inner] or self._lone_tensor_test(inner) is not None):
                break
            leading.append(value)
        if not leading:
            return _NO_NARROWING
        return self._narrowed(leading[0] if len(leading) == 1 else ast.BoolOp(op=ast.And(), values=leading), None)

    def _narrowed(self, test: ast.expr, block, negate: bool = False):
        """``if isinstance(x, torch.Tensor):`` — x (a name or ``self.<attr>``) is a tensor in the body,
        whatever it was before; in the ``else`` of a lone ``isinstance`` test, or in the body of
        ``isinstance(x, list)`` (a plain type), it is not one (``float(r.min()) if isinstance(r,
        Tensor) else min(r)``).  ``not isinstance(...)`` the other way round."""
        holds = not negate
        if type(test) is ast.UnaryOp and isinstance(test.op, ast.Not):
            test, holds = test.operand, not holds
        checks = _isinstance_checks(test)
        lone_tensor = self._lone_tensor_test(test)
        lone = checks == [test] or lone_tensor is not None
        if holds:
            tensors = self._tensor_test_subjects(test)
            # `isinstance(obj, tuple) and len(obj) > 0`: every conjunct holds in the body, so obj is a tuple there
            plain = [c.args[0] for c in checks if self._names_plain_type(c.args[1])]
            # `hasattr(v, "tolist") and not torch.is_tensor(v)`: past a negated tensor test, v is no tensor
            for value in test.values if type(test) is ast.BoolOp and isinstance(test.op, ast.And) else ():
                if type(value) is ast.UnaryOp and isinstance(value.op, ast.Not):
                    subject = self._lone_tensor_test(value.operand)
                    if subject is not None:
                        plain.append(subject)
        else:
            tensors = []
            plain = [lone_tensor] if lone_tensor is not None else []
        if not tensors and not plain:
            return _NO_NARROWING
        assigned = _assigned_self_attrs(block) if block else set()

        def split(targets):
            names = [t.id for t in targets if type(t) is ast.Name]
            attrs = [t for t in targets if type(t) is ast.Attribute and type(t.value) is ast.Name
                     and t.value.id == "self" and self.classes and self._self_is_instance() and t.attr not in assigned]
            return names, attrs

        # `isinstance(y[0], list | tuple)`, `isinstance(out["prediction"], (list, tuple))`: an item of a
        # name at a constant key, until the block binds that name again (``bind`` drops it)
        items = [(_item_key(node), node) for node in tensors or plain]
        items = [key for key, node in items if key is not None and (tensors or self.kind(node) in TENSORISH)]

        if tensors:
            names, attrs = split(tensors)
            return _Narrowing(self, names, [a.attr for a in attrs], TENSOR, items=items)
        # not a tensor here; what was taken for one is most likely a tuple or list of them
        # (``Union[Tensor, Tuple[Tensor, Tensor]]``): maybe a sequence of tensors, for names
        names, attrs = split(plain)
        names = [n for n in names if self.lookup(n) in TENSORISH]
        attrs = [a.attr for a in attrs if self.kind(a) in TENSORISH]
        return _Narrowing(self, names, attrs, (SEQ, TENSOR), negative=True, items=items)

    def _tensor_test_subjects(self, test: ast.expr) -> list[ast.expr]:
        """What the tensor type tests that must all hold for ``test`` to be true ask about:
        ``isinstance(x, torch.Tensor)``, and ``torch.is_tensor(x)``, which asks the same (through ``and``)."""
        subjects = [c.args[0] for c in _isinstance_checks(test) if self._names_tensor_type(c.args[1])]
        return subjects + [c.args[0] for c in _is_tensor_checks(test) if self.qualname(c.func) == "torch.is_tensor"]

    def _lone_tensor_test(self, node: ast.expr) -> ast.expr | None:
        """``x`` when ``node`` is a single tensor type test of it (``isinstance(x, Tensor)``, ``torch.is_tensor(x)``)."""
        if type(node) is not ast.Call:
            return None
        subjects = self._tensor_test_subjects(node)
        return subjects[0] if len(subjects) == 1 else None

    def _names_plain_type(self, node: ast.expr) -> bool:
        """``list``, ``(list, tuple)``, ``list | tuple``, ``int``, ``np.ndarray``: types no tensor is an
        instance of."""
        types = _isinstance_types(node)
        return bool(types) and all(self.qualname(t) in _PLAIN_TYPES for t in types)

    def _names_tensor_type(self, node: ast.expr) -> bool:
        types = _isinstance_types(node)
        return bool(types) and all(self.qualname(t) in ops.TENSOR_ANNOTATIONS for t in types)

    def _guard(self, test: ast.expr) -> str | None:
        """_COMPILING when the test is true only under dynamo, _NOT_COMPILING when it is true only
        outside it (``not is_compiling()``, ``torch.jit.is_scripting()``, their and/or forms)."""
        t = type(test)
        if t is ast.UnaryOp and isinstance(test.op, ast.Not):
            inner = self._guard(test.operand)
            return _NOT_COMPILING if inner == _COMPILING else None
        if t is ast.BoolOp:
            parts = [self._guard(v) for v in test.values]
            if isinstance(test.op, ast.And):
                if _NOT_COMPILING in parts:
                    return _NOT_COMPILING
                return _COMPILING if _COMPILING in parts else None
            # `a or is_compiling()`: the else branch runs only when not compiling
            if _COMPILING in parts:
                return _COMPILING
            return parts[0] if len(set(parts)) == 1 else None
        if t is ast.Call:
            qual = self.qualname(test.func) or ""
            last = (test.func.attr if isinstance(test.func, ast.Attribute)
                    else test.func.id if isinstance(test.func, ast.Name) else "")
            if not test.args and (qual in ops.IS_SCRIPTING_FUNCTIONS or
                                  (last in ops.IS_SCRIPTING_NAMES and not qual.startswith("torch."))):
                return _NOT_COMPILING
            # transformers' is_tracing(tensor) takes the tensor it asks about
            if qual in ops.IS_COMPILING_FUNCTIONS or last in ops.IS_COMPILING_NAMES:
                return _COMPILING
        return None

    def _eager_only_rest(self, test: ast.expr) -> bool:
        """``not is_compiling() and mask.all()``, ``is_compiling() or (rows, cols) != padded``: under dynamo
        the first operand decides, and the rest is evaluated only when not compiling."""
        if type(test) is not ast.BoolOp:
            return False
        return self._guard(test.values[0]) == (_NOT_COMPILING if isinstance(test.op, ast.And) else _COMPILING)

    def visit_IfExp(self, node: ast.IfExp) -> None:
        with self._test_narrowed(node.test):
            self.check_branch_test(node.test, None)
            self.visit(node.test)
        with self._narrowed(node.test, [node.body]):
            self.visit(node.body)
        with self._narrowed(node.test, [node.orelse], negate=True):
            self.visit(node.orelse)

    def _visit_in_control(self, node) -> None:
        self.control_depth += 1
        try:
            self.generic_visit(node)
        finally:
            self.control_depth -= 1

    visit_Try = visit_TryStar = visit_Match = _visit_in_control

    def visit_Assert(self, node: ast.Assert) -> None:
        # assert is input validation: no branch rule; host syncs inside are still syncs (see on_error_path)
        self._mark_tested(node.test)
        self.generic_visit(node)

    def _mark_tested(self, test: ast.expr) -> None:
        """The ``and``/``or``/``not`` and chained comparisons of a test whose truth the rules judge as one (an
        ``if``'s, an assert's): ``visit_BoolOp``, ``visit_UnaryOp`` and ``visit_Compare`` do not judge their
        operands again."""
        while True:
            t = type(test)
            if t is ast.BoolOp:
                self._tested.add(id(test))
                for value in test.values:
                    self._mark_tested(value)
                return
            if t is ast.UnaryOp and isinstance(test.op, ast.Not):
                self._tested.add(id(test))
                test = test.operand
                continue
            if t is ast.Compare and len(test.ops) > 1:
                self._tested.add(id(test))
            return

    def visit_BoolOp(self, node: ast.BoolOp) -> None:
        """``found = a in ids or b in ids``, ``return x.any() and y``: outside a branch test, ``and``/``or``
        still ask each operand but the last for its truth (``bool()``: a sync and a graph break when it is
        a tensor's; measured on torch 2.13: ``3 in t or 4 in t`` fails under ``fullgraph``, ``d = 3 in t``
        alone does not)."""
        if id(node) not in self._tested and not self._eager_only_rest(node):
            with self._test_narrowed(node):
                for value in node.values[:-1]:
                    self.check_branch_test(value, None)
        self.generic_visit(node)

    def visit_Compare(self, node: ast.Compare) -> None:
        """``on_step = t0 < next_t < t0 + dt`` outside a branch test: a chained comparison asks each link but
        the last for its truth (``a < b and b < c``), each judged on its own."""
        if len(node.ops) > 1 and id(node) not in self._tested:
            operands = [node.left, *node.comparators]
            for i, op in enumerate(node.ops[:-1]):
                link = ast.Compare(left=operands[i], ops=[op], comparators=[operands[i + 1]])
                link.lineno, link.col_offset = operands[i].lineno, operands[i].col_offset
                link.end_lineno = operands[i + 1].end_lineno
                link.end_col_offset = operands[i + 1].end_col_offset
                self._temporaries.append(link)  # its id keys the caches: keep it alive
                self.check_branch_test(link, None)
        self.generic_visit(node)

    def visit_UnaryOp(self, node: ast.UnaryOp) -> None:
        """``empty = not mask.any()``: ``not`` asks its operand for its truth, in a test or not."""
        if isinstance(node.op, ast.Not) and id(node) not in self._tested:
            self.check_branch_test(node.operand, None)
        self.generic_visit(node)

    def visit_With(self, node) -> None:
        for item in node.items:
            self.visit(item.context_expr)
            if item.optional_vars is not None:
                self.visit_target(item.optional_vars)
                # `with np.load(f) as data:` enters the archive itself: numpy data
                self.bind(item.optional_vars, NDARRAY if self.kind(item.context_expr) == NDARRAY else None)
        self._visit_block(node.body)

    visit_AsyncWith = visit_With

    def visit_NamedExpr(self, node: ast.NamedExpr) -> None:
        self.visit(node.value)
        self.scope.kinds[node.target.id] = self.kind(node.value)
        self.scope.bindings[node.target.id] = None
        self._rebound(node.target.id)

    def visit_Global(self, node) -> None:
        for name in node.names:
            self.scope.kinds.pop(name, None)

    # ------------------------------------------------------------------ expressions
    def visit_FormattedValue(self, node: ast.FormattedValue) -> None:
        """``f"{loss:.3f}"``: the value is formatted as text."""
        for handler in self.dispatch.format:
            handler(self, node.value)
        self.generic_visit(node)

    def visit_BinOp(self, node: ast.BinOp) -> None:
        """``"%.5f" % loss``, ``"%s: %f" % (name, loss)``: the operands are formatted as text; ``[x] * n``:
        a display repeated by a count."""
        if type(node.op) is ast.Mod and type(node.left) is ast.Constant and type(node.left.value) is str:
            values = node.right.elts if type(node.right) is ast.Tuple else [node.right]
            for handler in self.dispatch.format:
                for value in values:
                    handler(self, value)
        elif type(node.op) is ast.Mult and self.dispatch.repeat:
            # `[x] * n`, `n * (x,)`: a list or tuple display repeated by a count (read with __index__)
            if type(node.left) in _DISPLAYS and type(node.right) not in _DISPLAYS:
                count = node.right
            elif type(node.right) in _DISPLAYS and type(node.left) not in _DISPLAYS:
                count = node.left
            else:
                count = None
            if count is not None and type(count) is not ast.Constant:
                for handler in self.dispatch.repeat:
                    handler(self, count)
        self.generic_visit(node)

    def visit_Subscript(self, node: ast.Subscript) -> None:
        if isinstance(node.ctx, ast.Load):
            self.check_subscript_read(node)
        self.generic_visit(node)

    def visit_Call(self, node: ast.Call) -> None:
        self.check_call(node)
        self._record_call(node)
        func = node.func
        if (last_name(func) or "").lstrip("_")[:1].isupper():  # a class's name: maybe a namedtuple's
            qual = self.qualname(func)
            if qual is not None and self._is_project(qual):
                self._note_namedtuple(node, qual)
        if type(func) is ast.Attribute and func.attr in ("append", "insert") and type(func.value) is ast.Name \
                and node.args:
            self._note_element(func.value.id, node.args[-1])
        if type(func) is ast.Attribute and func.attr == "save_for_backward" and self.classes:
            self._note_saved(node)
        if type(func) is ast.Attribute and func.attr in ops.STATE_DICT_HOOK_REGISTRARS and node.args:
            self._note_callback(node.args[0], ROOT_HOST)  # runs when a checkpoint is saved or loaded
        self.visit(node.func)
        if self.context is None and self._passes_callables(node):
            made = self.kind(node)
            if is_module(made):
                # a callable given to an nn.Module's constructor (``Lambda(lambda x: f(x))``,
                # ``Wrapper(fn)``) runs in that module's forward: the compiled step
                self._visit_forward_callables(node)
                return
            if self._makes_dataset(made):
                # ``ExperienceSourceDataset(self.generate_trajectory_samples)``: what a dataset is given to
                # call runs where the dataset runs, in the input pipeline on the host
                for value in list(node.args) + [k.value for k in node.keywords]:
                    if type(value) in (ast.Name, ast.Attribute):
                        self._note_callback(value, ROOT_HOST)
        self.visit_all(node.args)
        for keyword in node.keywords:
            if keyword.arg in ops.HOST_CALLBACK_KEYWORDS:
                self._note_callback(keyword.value, ROOT_HOST)
                if isinstance(keyword.value, ast.Lambda):
                    self.stack.append(keyword)
                    outer = self.context
                    self.context = HOST
                    try:
                        self.visit(keyword.value)
                    finally:
                        self.context = outer
                        self.stack.pop()
                    continue
            self.visit(keyword)

    @staticmethod
    def _passes_callables(node: ast.Call) -> bool:
        return any(type(a) in _CALLABLE_ARGS for a in node.args) or \
            any(type(k.value) in _CALLABLE_ARGS for k in node.keywords)

    def _visit_forward_callables(self, node: ast.Call) -> None:
        for value in list(node.args) + [k.value for k in node.keywords]:
            if type(value) is ast.Lambda:
                self.context = FORWARD
                try:
                    self.visit(value)
                finally:
                    self.context = None
                continue
            if type(value) in (ast.Name, ast.Attribute):
                self._note_callback(value, ROOT_COMPILED)
            self.visit(value)

    def _stored_on_self(self, node: ast.expr) -> bool:
        """``node`` is the value of an assignment to attributes of ``self`` (``self.fn = ...``)."""
        parent = self.stack[-2] if len(self.stack) > 1 else None
        return type(parent) is ast.Assign and parent.value is node and all(
            type(t) is ast.Attribute and type(t.value) is ast.Name and t.value.id == "self" for t in parent.targets)

    def _makes_dataset(self, kind) -> bool:
        """``kind`` is an instance of a project Dataset class (through its bases)."""
        owner = obj_class(kind)
        if owner is None or is_module(kind):
            return False
        flags = self.ask(("base", owner))
        return bool(flags and flags[1])

    def _note_element(self, name: str, value: ast.expr) -> None:
        """``boxes = []; boxes.append(t)``: a list of tensors (kept only while every element is one)."""
        scope = self.scope
        if name not in scope.kinds:
            return
        current = scope.kinds[name]
        element = self.kind(value)
        if current == PY and element in TENSORISH and name not in scope.maybe:
            scope.kinds[name] = (SEQ, TENSOR)
        elif type(current) is tuple and current[0] == SEQ and current[1] in TENSORISH and element not in TENSORISH:
            scope.kinds[name] = PY

    def _note_callback(self, value: ast.expr, root: str) -> None:
        if isinstance(value, ast.Call) and value.args and self.qualname(value.func) == "functools.partial":
            value = value.args[0]
        ref = self._callee_ref(value, call=False)
        if ref is not None:
            self.produced.roots.append((root, ref))

    def _callee_ref(self, func: ast.expr, call: bool = True) -> tuple | None:
        """How the table will find the function a call (or a passed callable) runs."""
        qual = self.qualname(func)
        if qual is not None:
            return ref_function(qual) if self._is_project(qual) else None
        if type(func) is ast.Attribute:
            receiver = func.value
            if type(receiver) is ast.Name and receiver.id in ("self", "cls") and self.classes and self._self_is_instance():
                info = self.classes[-1]
                stored = self._function_attribute(info, func.attr)
                if stored is not None:
                    return ref_function(stored)
                known, attr_kind = self._self_attr(info, func.attr)
                if not known:
                    attr_kind = self.ask(("attr", info.id, func.attr))
                owner = obj_class(attr_kind)
                if owner is not None:
                    return ref_module_call(owner) if call else None
                if attr_kind is None:
                    return ref_method(info.id, func.attr)
                return None
            receiver_kind = self.kind(receiver)
            owner = obj_class(receiver_kind)
            if owner is not None:
                return ref_method(owner, func.attr)
            if receiver_kind is None and _distinctive_method(func.attr):
                return ref_named(func.attr)  # self.loss.process_slcwa_scores(...): by the method's name
            return None
        owner = obj_class(self.kind(func))
        if owner is not None and call:
            return ref_module_call(owner)
        return None

    def _record_call(self, node: ast.Call) -> None:
        func = node.func
        qual = self.qualname(func)
        root = ROOT_DRIVER if self._drives_a_model(func, qual) or self._hands_over_the_model(node) else \
            ROOT_TO_HOST if self._moves_to_host(func) else None
        if root is not None:
            # code that runs a model from outside its forward (a pipeline, a predictor, an eval
            # loop), or that moves tensors to the CPU on purpose (.cpu(), .numpy(): metrics, plots,
            # export), runs eagerly on the host, unless a compiled or training path reaches it
            owners = [self._function_id()]
            if root == ROOT_DRIVER:
                # a nested helper that runs the model (whisper's transcribe: decode_with_fallback calls
                # model.decode) makes the function around it a driver too
                owners.extend(scope.id for scope in self.scopes[1:-1]
                              if scope.node is not None and scope.id != owners[0] and scope.name != "<lambda>")
            for owner in owners:
                noted = (root, owner)
                if noted not in self._drivers:
                    self._drivers.add(noted)
                    self.produced.roots.append((root, ref_function(owner)))
        positional, own_keywords = node.args, ()
        if node.args and _applies_a_function(func):
            self._note_applied_function(node.args[0])
        if qual is not None and not self._is_project(qual):
            if qual == "functools.partial" and node.args and not isinstance(node.args[0], ast.Starred):
                if self._stored_on_self(node):
                    # `self.smax = partial(entmax15, dim=-1)` in __init__: called where the attribute is, in
                    # a module that is its forward (like a callable given to a module's constructor)
                    if self.classes and self.classes[-1].is_module:
                        self._note_callback(node.args[0], ROOT_COMPILED)
                    return
                # the partial is called where it is made (nms_fn = partial(f, ...); nms_fn(x)): f runs
                # here, with arguments this walk does not see
                ref = self._callee_ref(node.args[0], call=False)
                if ref is not None:
                    self.produced.calls.append((self._function_id(), ref, (), {}, REFERENCE, self.context or CALL))
                return
            if qual in ops.COMPILED_WRAPPERS and node.args:
                self._note_callback(node.args[0], ROOT_COMPILED)
            elif qual in ops.DISABLE_DECORATORS and node.args:
                self._note_callback(node.args[0], ROOT_HOST)
            forwarding = ops.FORWARDING_WRAPPERS.get(qual)
            if forwarding is None or len(node.args) <= forwarding[0] \
                    or isinstance(node.args[forwarding[0]], ast.Starred):
                return
            # checkpoint(fn, *args): fn is called with the wrapper's remaining arguments
            func, positional, own_keywords = node.args[forwarding[0]], node.args[forwarding[1]:], forwarding[2]
        ref = self._callee_ref(func)
        if ref is None:
            if type(func) is ast.Attribute and _site_method(func.attr) and self.kind(func.value) in (None, MODULE):
                # `model.compress(x)` on a receiver of unknown type (or a module of unknown class): only where
                # the call stands (regions: a method nothing else calls is host code when every such call is)
                self.produced.calls.append((self._function_id(), ref_site(func.attr), (), {}, REFERENCE,
                                            self.context or CALL))
            return
        args = []
        star = False
        for arg in positional:
            if isinstance(arg, ast.Starred):
                star = True
                break
            args.append(self._arg_fact(arg))
        keywords = {}
        for item in node.keywords:
            if item.arg is None:
                star = True
            elif item.arg not in own_keywords:
                keywords[item.arg] = self._arg_fact(item.value)
        context = self.context or CALL
        self.produced.calls.append((self._function_id(), ref, tuple(args), keywords, star, context))
        self._learn_from_callee(ref, positional, node.keywords, star)

    def _learn_from_callee(self, ref: tuple, positional, keywords, star) -> None:
        """``helper(x)`` where ``helper``'s own code shows its parameter is a tensor (``def helper(t: Tensor)``,
        ``t.detach()`` in its body): a local name of unknown kind passed there holds a tensor, from here on."""
        scope = self.scope
        names = [(i, arg.id) for i, arg in enumerate(positional) if type(arg) is ast.Name]
        named = [(k.arg, k.value.id) for k in keywords if k.arg is not None and type(k.value) is ast.Name]
        if not names and not named:
            return
        if not any(scope.kinds.get(name, PY) is None and name not in scope.maybe for _, name in names + named):
            return
        answer = self.ask(("targs", ref))
        if not answer:
            return
        positions, keyword_names = answer
        learned = [name for i, name in names if i in positions and not star] + \
            [name for key, name in named if key in keyword_names]
        for name in learned:
            if name in scope.kinds and scope.kinds[name] is None and name not in scope.maybe:
                scope.kinds[name] = TENSOR

    def _note_applied_function(self, value: ast.expr) -> None:
        """``multi_apply(self._get_targets_single, ...)`` (mmdet), ``map(self._decode, xs)``,
        ``apply_to_collection(fn, ...)``: the project function or method given first to a function that
        applies it runs right there, in this function's region (an edge that only references it, as
        ``functools.partial`` does: the arguments it gets are elements, not what is passed here)."""
        if type(value) is ast.Name or (type(value) is ast.Attribute and type(value.value) is ast.Name
                                        and value.value.id in ("self", "cls")):
            ref = self._callee_ref(value, call=False)
            if ref is not None and ref[0] in ("q", "m"):
                self.produced.calls.append((self._function_id(), ref, (), {}, REFERENCE, self.context or CALL))

    def _moves_to_host(self, func: ast.expr) -> bool:
        if type(func) is not ast.Attribute or func.attr not in ops.TO_HOST_METHODS:
            return False
        if self.classes and self.classes[-1].is_module:
            # a module's own method other than its forward (logging, plotting, export helpers);
            # forward and what it reaches stay compiled whatever they call
            owner, _, name = self._function_id().rpartition(".")
            if owner != self.classes[-1].id or name in ("forward", "__call__"):
                return False
        # on a tensor, or on a value the analysis cannot type (`preds.cpu().numpy()` of an unannotated
        # parameter: judged host-only code every time in functions nothing calls)
        kind = self.kind(func.value)
        return kind in TENSORISH or kind is None

    def _drives_a_model(self, func: ast.expr, qual: str | None) -> bool:
        if qual is not None or (self.classes and self.classes[-1].is_module):
            return False  # an nn.Module's own methods calling its submodules are the model itself
        # by the name of what is called: a module instance as such may be a loss (self.bce), an assigner or
        # a layer a functional wrapper builds and calls (NonMaximaSuppression2d(k)(x)): model code
        entry = type(func) is ast.Attribute and (func.attr in ops.MODEL_ENTRY_METHODS
                                                 or func.attr.startswith(ops.MODEL_ENTRY_PREFIXES))
        target = func.value if entry else func
        name = target.attr if type(target) is ast.Attribute else target.id if type(target) is ast.Name else ""
        name = name.lower().lstrip("_")
        if name in ops.MODEL_ATTRIBUTE_NAMES:
            return type(target) is ast.Attribute and type(target.value) is ast.Name and target.value.id == "self"
        return name in ops.MODEL_NAMES or name.endswith(ops.MODEL_NAME_SUFFIXES)

    def _hands_over_the_model(self, node: ast.Call) -> bool:
        """``_run_forward(self.forward_func, inputs)``: the model a class keeps as a callable, handed to a
        helper that runs it (captum's attribution methods, outside any nn.Module)."""
        if self.classes and self.classes[-1].is_module:
            return False
        return any(type(arg) is ast.Attribute and arg.attr in ops.MODEL_ATTRIBUTE_NAMES and type(arg.value) is ast.Name
                   and arg.value.id == "self" for arg in [*node.args, *(k.value for k in node.keywords)])

    def _arg_fact(self, arg: ast.expr) -> tuple:
        return (relevant(self.kind(arg), sizes=True), not self.uncertain(arg))

    # ------------------------------------------------------------------ rule events
    def check_subscript_read(self, node: ast.Subscript) -> None:
        for handler in self.dispatch.subscript:
            handler(self, node)

    def check_branch_test(self, test: ast.expr, body: list[ast.stmt] | None) -> None:
        self._mark_tested(test)
        self._values_test = (test, None)  # the rules ask depends_on_values of this test: answered once
        try:
            for handler in self.dispatch.branch:
                handler(self, test, body)
        finally:
            self._values_test = None

    def check_loop_iterable(self, iterable: ast.expr) -> None:
        for handler in self.dispatch.loop:
            handler(self, iterable)

    def check_call(self, node: ast.Call) -> None:
        dispatch = self.dispatch
        func = node.func
        qual = self.qualname(func)
        method = receiver = None
        handlers: list = []
        if qual is not None:
            handlers.extend(dispatch.by_function.get(qual, ()))
            for prefix, handler in dispatch.by_prefix:
                if qual.startswith(prefix):
                    handlers.append(handler)
        elif type(func) is ast.Attribute and not (type(func.value) is ast.Name and func.value.id in ("self", "cls")):
            # not the class's own methods and submodules, and (unless a handler asks) not on a value
            # known to be no tensor
            found = dispatch.by_method.get(func.attr)
            if found:
                receiver = self.kind(func.value)
                method = func.attr
                if not is_not_tensor(receiver):
                    handlers.extend(found)
                else:
                    handlers.extend(h for h in found if h in dispatch.any_receiver)
        if dispatch.by_keyword and node.keywords:
            for keyword in node.keywords:
                if keyword.arg is not None:
                    handlers.extend(dispatch.by_keyword.get(keyword.arg, ()))
        if not handlers:
            return
        seen = set()
        for handler in handlers:
            if handler not in seen:
                seen.add(handler)
                handler(self, node, qual, method, receiver)

    # ------------------------------------------------------------------ helpers for rules
    def silence_syncs(self, expr: ast.AST) -> None:
        """A host sync inside an expression already reported as DYN202/DYN302 is not reported again."""
        for sub in ast.walk(expr):
            if isinstance(sub, ast.Call):
                self.silenced_syncs.add(id(sub))

    def is_silenced(self, node: ast.AST) -> bool:
        return id(node) in self.silenced_syncs

    def reads_tensor_size(self, test: ast.expr) -> bool:
        """Whether the expression reads a tensor's size (``.shape``, ``.size()``, ``len(t)``...)."""
        return next(self.size_reads(test), None) is not None

    def size_reads(self, test: ast.expr):
        """The tensor-size reads in an expression: ``x.shape`` (``x.shape[k]`` when indexed),
        ``x.size(k)``, ``x.size()`` (``x.size()[k]`` when indexed), ``x.numel()``, ``len(x)`` of a tensor,
        and names holding sizes.  What a read holds inside is not searched further."""
        pending: list[tuple[ast.AST, ast.AST | None]] = [(test, None)]
        while pending:
            sub, parent = pending.pop()
            t = type(sub)
            if t is ast.Call and isinstance(sub.func, ast.Name) and sub.func.id == "len" and sub.args \
                    and self.kind(sub.args[0]) == SIZE:
                continue  # len(x.size()) / len(x.shape) is the rank: static
            indexed = type(parent) is ast.Subscript and parent.value is sub
            if t is ast.Attribute and sub.attr == "shape" and self.kind(sub.value) in TENSORISH:
                yield parent if indexed else sub
                continue
            if t is ast.Call:
                func = sub.func
                if isinstance(func, ast.Attribute) and func.attr in ops.SIZE_METHODS:
                    receiver = self.kind(func.value)
                    if receiver in TENSORISH or (receiver is None and (func.attr != "size" or sub.args)):
                        yield parent if indexed and func.attr == "size" and not sub.args else sub
                        continue
                elif isinstance(func, ast.Name) and func.id == "len" and sub.args and self.qualname(func) == "len":
                    argument = sub.args[0]
                    found = self.value_kind(argument)
                    # also the length of data read from a tensor (`len(t.tolist())`), on some path at least
                    if found in TENSORISH or found == DATA or (
                            self.kind(argument) == DATA and self.on_some_path(argument, DATA_DERIVED)):
                        yield sub
                        continue
            elif t is ast.Name and self.lookup(sub.id) == SIZE:
                yield sub
                continue
            pending.extend((child, sub) for child in ast.iter_child_nodes(sub))

    def depends_on_values(self, test: ast.expr) -> bool:
        """Whether a branch test's outcome depends on tensor values."""
        memo = self._values_test
        if memo is None or memo[0] is not test:
            return self._depends_on_values(test)
        if memo[1] is None:
            self._values_test = memo = (test, self._depends_on_values(test))
        return memo[1]

    def _depends_on_values(self, test: ast.expr) -> bool:
        t = type(test)
        if t is ast.BoolOp:
            if not isinstance(test.op, ast.And):
                return any(self.depends_on_values(v) for v in test.values)
            # `isinstance(self.value, list) and self.value`: past the isinstance test the value is a list
            plain: set[str] = set()
            for value in test.values:
                operand = value.operand if type(value) is ast.UnaryOp and isinstance(value.op, ast.Not) else value
                if plain and ast.dump(operand) in plain:
                    continue
                checked = self._plain_isinstance(value)
                if checked is not None:
                    plain.add(checked)
                elif self.depends_on_values(value):
                    return True
            return False
        if t is ast.UnaryOp and isinstance(test.op, ast.Not):
            return self.depends_on_values(test.operand)
        if t is ast.Compare:
            if all(isinstance(op, (ast.Is, ast.IsNot)) for op in test.ops) or self.kind(test) == PY:
                return False  # `mask != None` too: a Python bool
            if any(isinstance(op, (ast.In, ast.NotIn)) for op in test.ops):
                # `i in t` asks a tensor for a Python bool (Tensor.__contains__): a sync; a string is never
                # looked for in a tensor (`"image_features" in out`: `out` is a dict, whatever it was taken
                # for), nor is a key (`EDGE_INDEX_KEY in data`, `self.norm_key in data`)
                if key_name(test.left) is not None:
                    return False
                if any(self.value_kind(c) in TENSORISH for c in test.comparators):
                    return True
                # `token not in self.som_ids`: a tensor compared with each entry of a list (see _infer)
                return self.value_kind(test.left) in TENSORISH and self.kind(test) == DATA
            return any(self._value_dependent(v) for v in [test.left, *test.comparators])
        return self._value_dependent(test)

    def _plain_isinstance(self, node: ast.expr) -> str | None:
        """``isinstance(x, list)`` (a type that is no tensor): the dump of ``x``; None for anything else."""
        if type(node) is not ast.Call or type(node.func) is not ast.Name or node.func.id != "isinstance" \
                or len(node.args) != 2 or node.keywords:
            return None
        types = _isinstance_types(node.args[1])
        if not types or any(self.qualname(side) not in _PLAIN_TYPES for side in types):
            return None
        return ast.dump(node.args[0])

    def _value_dependent(self, node: ast.expr) -> bool:
        """A tensor value, or data read from one right here (``t.item() > 0``).  A name holding
        data read earlier (``flag = bool(t.item())``) is not: its conversion is the hazard, and
        it was reported where it happened."""
        if type(node) is ast.Subscript and type(node.slice) is ast.Constant and type(node.slice.value) is str \
                and self.kind(node.value) in TENSORISH:
            return False  # `if site["is_observed"]:` tests an entry of a dict taken for a tensor, no tensor value
        kind = self.value_kind(node)
        if kind in TENSORISH or self.on_some_path(node):
            return True
        # `if self._inputs_are_safe(outputs):` a project function that returns a Python bool made from tensor
        # data read it inside, where that conversion is reported; the branch here tests a Python value
        return kind == DATA and not self._reads_nothing_new(node) and not (
            type(node) is ast.Call and self._callee_ref(node.func) is not None)

    def _reads_nothing_new(self, node: ast.expr) -> bool:
        """The data in the expression comes only from names, through math functions of them
        (``math.isnan(total)`` with ``total = loss.item()``: read where it was converted, reported there)."""
        for sub in ast.walk(node):
            if type(sub) is ast.Call and not (
                    self.qualname(sub.func) in ops.MATH_SCALAR_FUNCTIONS
                    and not any(self.value_kind(arg) in TENSORISH or self.on_some_path(arg) for arg in sub.args)):
                return False
        return True


# ---------------------------------------------------------------------- helpers
_PY_DISPLAYS = frozenset({ast.Set, ast.ListComp, ast.SetComp, ast.DictComp, ast.JoinedStr, ast.GeneratorExp})
_VALUE_BUILTINS = frozenset({"int", "float", "bool", "len", "max", "min", "abs", "round"})
_BUILTIN_NAMES = frozenset({"len", "int", "float", "bool", "complex", "range", "slice", "max", "min", "abs", "round", "sum",
                            "any", "all", "list", "tuple", "dict", "set", "str", "sorted", "repr", "isinstance", "hasattr",
                            "getattr", "type", "id", "print", "enumerate", "zip", "map", "filter", "reversed"})
_BARE_CONTAINERS = frozenset({"tuple", "list", "dict", "typing.Tuple", "typing.List", "typing.Dict", "typing.Sequence",
                              "collections.abc.Sequence"})
_SEQUENCE_ANNOTATIONS = frozenset({"list", "tuple", "List", "Tuple", "Sequence", "Iterable", "typing.List",
                                   "typing.Tuple", "typing.Sequence", "typing.Iterable", "collections.abc.Sequence",
                                   "collections.abc.Iterable"})
_MAPPING_ANNOTATIONS = frozenset({"dict", "Dict", "Mapping", "typing.Dict", "typing.Mapping", "collections.abc.Mapping",
                                  "OrderedDict", "typing.OrderedDict", "collections.OrderedDict"})
_PLAIN_TYPES = frozenset({"list", "tuple", "dict", "int", "float", "bool", "str", "bytes", "complex",
                          "numpy.ndarray", "numbers.Number", "collections.abc.Sequence", "typing.Sequence",
                          "collections.abc.Mapping", "typing.Mapping"})
_SAVED = "<saved_tensors>"  # the attribute key of what a custom autograd function's forward saves
_NOT_SHAPED = object()  # _shape_dtype_kind: not a shape-and-dtype annotation
_UNRESOLVED_MODULE = "<outside the run>"  # what a relative import above the run's top package names
_MAYBE_TENSOR = "maybe_tensor"  # what a union with a tensor side annotates (see _annotation_kind)
_MAYBE_ANNOTATIONS = frozenset({_MAYBE_TENSOR})


def _compares(value: ast.expr | None) -> bool:
    """An elementwise comparison (``gt == 1``), or ``&``/``|``/``^``/``*``/``~`` of such: a boolean tensor when
    it is a tensor."""
    t = type(value)
    if t is ast.Compare:
        return len(value.ops) == 1 and isinstance(value.ops[0], (ast.Eq, ast.NotEq, ast.Lt, ast.LtE, ast.Gt, ast.GtE))
    if t is ast.BinOp:
        return isinstance(value.op, (ast.BitAnd, ast.BitOr, ast.BitXor, ast.Mult)) and _compares(value.left) \
            and _compares(value.right)
    if t is ast.UnaryOp:
        return isinstance(value.op, ast.Invert) and _compares(value.operand)
    return False


def _names_an_accelerator(value: ast.expr) -> bool:
    """``accelerator``, ``self.accelerator``: a receiver named for accelerate's Accelerator."""
    return "accelerator" in (last_name(value) or "").lower()


def _without_maybe(kind) -> tuple:
    """(the kind with every nested ``_MAYBE_TENSOR`` made a tensor, whether there was one)."""
    if kind == _MAYBE_TENSOR:
        return TENSOR, True
    if type(kind) is not tuple or kind[0] == OBJ:
        return kind, False
    parts = [_without_maybe(part) for part in kind[1:]]
    return (kind[0], *(part for part, _ in parts)), any(found for _, found in parts)
_COMPILING = "compiling"
_NOT_COMPILING = "not compiling"


def _spans_without_nested_scopes(body: list[ast.stmt]) -> list[tuple[int, int]]:
    """Line spans of a function body, leaving out the functions and classes defined in it (their
    names are their own; searching them would leak their evidence into this scope)."""
    holes: list[tuple[int, int]] = []
    pending = list(body)
    while pending:
        stmt = pending.pop()
        if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            first = min([stmt.lineno] + [d.lineno for d in stmt.decorator_list])
            holes.append((first, stmt.end_lineno))
            continue
        for name in ("body", "orelse", "finalbody", "handlers", "cases"):
            pending.extend(getattr(stmt, name, ()) or ())
    if not body:
        return []
    spans, start, end = [], body[0].lineno, body[-1].end_lineno
    for hole_start, hole_end in sorted(holes):
        if hole_start > start:
            spans.append((start, hole_start - 1))
        start = max(start, hole_end + 1)
    if start <= end:
        spans.append((start, end))
    return spans


class _Narrowing:
    """Names (and ``self.<attr>``s not assigned in the block) taken as proven tensors — or as plain
    values, in the else of an isinstance test — for a block, given back their kinds after it
    (unless the block bound them itself)."""

    def __init__(self, walker: "Analyzer", names: list[str], attrs: list[str] = (), kind=TENSOR,
                 negative: bool = False, items: list[tuple] = ()):
        self.walker = walker
        self.items = items  # (name, constant key) of items narrowed like the names
        self.saved_items: list[tuple] = []
        self.names = names
        self.attrs = attrs
        self.kind = kind
        self.negative = negative  # names become maybe `kind`, attributes unknown
        self.saved: list[tuple] = []
        self.saved_attrs: list[tuple] = []
        self.attr_scope = None
        self.had_own = True

    def __enter__(self):
        scope = self.walker.scope
        narrowed_from = self.walker._narrowed_from
        for name in self.names:
            had, maybe, partial = name in scope.kinds, name in scope.maybe, name in scope.partial
            self.saved.append((name, had, scope.kinds.get(name), maybe, partial, scope.bound_at.get(name),
                               narrowed_from.get(name)))
            narrowed_from[name] = (scope, scope.kinds.get(name) if had or self.negative else _UNBOUND, maybe, partial,
                                   self.negative)
            scope.kinds[name] = self.kind
            (scope.maybe.add if self.negative else scope.maybe.discard)(name)
            scope.partial.discard(name)
        if self.attrs:
            for candidate in reversed(self.walker.scopes):
                if candidate.node is not None and "self" in candidate.kinds:
                    self.attr_scope = candidate
                    break
            if self.attr_scope is not None:
                self.had_own = self.attr_scope.self_attrs is not None
                if not self.had_own:
                    self.attr_scope.self_attrs = {}
                own = self.attr_scope.self_attrs
                for attr in self.attrs:
                    self.saved_attrs.append((attr, attr in own, own.get(attr)))
                    own[attr] = None if self.negative else self.kind
        narrowed = self.walker._narrowed_items
        for key in self.items:
            self.saved_items.append((key, narrowed.get(key, _UNBOUND)))
            narrowed[key] = self.kind
        if self.names or self.saved_attrs or self.items:
            self.walker._kind_cache.clear()  # kinds computed before the test no longer hold inside
        return self

    def __exit__(self, *exc):
        scope = self.walker.scope
        narrowed_from = self.walker._narrowed_from
        for name, had, kind, maybe, partial, stamp, outer in self.saved:
            if outer is None:
                narrowed_from.pop(name, None)
            else:
                narrowed_from[name] = outer
            if scope.bound_at.get(name) != stamp:
                continue  # rebound in the block: its own binding stands
            if had:
                scope.kinds[name] = kind
            else:
                scope.kinds.pop(name, None)
            (scope.maybe.add if maybe else scope.maybe.discard)(name)
            (scope.partial.add if partial else scope.partial.discard)(name)
        if self.saved_attrs:
            own = self.attr_scope.self_attrs
            for attr, had, kind in self.saved_attrs:
                if had:
                    own[attr] = kind
                else:
                    own.pop(attr, None)
            if not self.had_own and not own:
                self.attr_scope.self_attrs = None
        narrowed = self.walker._narrowed_items
        for key, previous in reversed(self.saved_items):
            if previous is _UNBOUND:
                narrowed.pop(key, None)
            else:
                narrowed[key] = previous
        if self.names or self.saved_attrs or self.items:
            self.walker._kind_cache.clear()
        return False


_NO_NARROWING = contextlib.nullcontext()
_NOT_PASSED = object()  # a pass-through helper called without the parameters it returns
_UNBOUND = object()  # a name not bound before the block that binds it


def _read_before_bound(body: list[ast.stmt], names: list[str]) -> bool:
    """One of ``names`` is read in the loop body before an earlier statement of the body binds it (a
    statement that reads and binds it, ``h = cell(x, h)``, reads it first)."""
    pending = set(names)
    for statement in body:
        stored = set()
        for node in ast.walk(statement):
            if type(node) is ast.Name and node.id in pending:
                if type(node.ctx) is ast.Load:
                    return True
                stored.add(node.id)
        pending -= stored
        if not pending:
            return False
    return False


def _registry_name(decorator: ast.expr) -> str:
    """``TASK_UTILS`` of ``@TASK_UTILS.register_module()`` (or without the call), else ``""``."""
    if type(decorator) is ast.Call:
        decorator = decorator.func
    if type(decorator) is ast.Attribute and decorator.attr == "register_module":
        target = decorator.value
        return last_name(target) or ""
    return ""


def _member_kind(node: ast.FunctionDef) -> str:
    """``"property"`` for a property's getter (``@property``, ``@cached_property``), ``"accessor"`` for its
    setter or deleter (``@x.setter``), else ``"method"``."""
    for decorator in node.decorator_list:
        name = decorator.attr if type(decorator) is ast.Attribute else decorator.id if type(decorator) is ast.Name else ""
        if name in ("property", "cached_property"):
            return "property"
        if name in ("setter", "deleter"):
            return "accessor"
    return "method"


def _assigned_self_attrs(block) -> set[str]:
    """``self.<attr>`` names a block (statements or expressions) assigns."""
    found = set()
    for item in block:
        for sub in ast.walk(item):
            if type(sub) is ast.Attribute and isinstance(sub.ctx, ast.Store) and type(sub.value) is ast.Name \
                    and sub.value.id == "self":
                found.add(sub.attr)
    return found


def _isinstance_checks(test: ast.expr) -> list[ast.Call]:
    """``isinstance(...)`` calls that must all hold for the test to be true."""
    if type(test) is ast.BoolOp and isinstance(test.op, ast.And):
        return [c for v in test.values for c in _isinstance_checks(v)]
    if type(test) is ast.Call and type(test.func) is ast.Name and test.func.id == "isinstance" \
            and len(test.args) == 2:
        return [test]
    return []


def _applies_a_function(func: ast.expr) -> bool:
    """``map``, ``multi_apply``, ``tree_map``, ``apply_to_collection``, ``starmap``: by the callee's name."""
    name = last_name(func) or ""
    return ("map" in name or "apply" in name) and _APPLY_NAME_RE.search(name) is not None


_APPLY_NAME_RE = re.compile(r"(?:^|_)(?:map|starmap|apply)(?:$|_)")


def _is_tensor_checks(test: ast.expr) -> list[ast.Call]:
    """One-argument ``....is_tensor(x)`` calls that must all hold for the test to be true."""
    if type(test) is ast.BoolOp and isinstance(test.op, ast.And):
        return [c for v in test.values for c in _is_tensor_checks(v)]
    if type(test) is ast.Call and len(test.args) == 1 and not test.keywords and (
            (type(test.func) is ast.Attribute and test.func.attr == "is_tensor")
            or (type(test.func) is ast.Name and test.func.id == "is_tensor")):
        return [test]
    return []


def _join_paths(previous, was_maybe: bool, was_partial: bool, kind, maybe: bool, partial: bool) -> tuple:
    """(kind, maybe, partial) of a name bound differently on different paths: only maybe a tensor
    after the branch, but a tensor for real on one path when that binding was proven (skip = False;
    if training: skip = torch.rand([]) < p) — see ``on_some_path``."""
    sure_tensor = (kind in TENSORISH and not maybe) or (previous in TENSORISH and not was_maybe) \
        or was_partial or partial
    joined, join_maybe = join(previous, kind)
    if joined is None and DATA in (previous, kind) and previous not in TENSORISH and kind not in TENSORISH:
        # `split_sizes = (...).tolist()` on one path, `(seq_len,)` on another: data read from a tensor on
        # that path (a size made from it is data-dependent there, see on_some_path), only maybe after
        return DATA, True, (previous == DATA and (not was_maybe or was_partial)) or (kind == DATA and (not maybe or partial))
    return joined, maybe or join_maybe or was_maybe, sure_tensor and joined in TENSORISH


def _is_text_constant(node: ast.expr) -> bool:
    return type(node) is ast.Constant and type(node.value) in (str, bytes)


def _distinctive_method(name: str) -> bool:
    """A method name specific enough to find its definition by name alone when the receiver's type is
    unknown: a word-joined name (``process_slcwa_scores``, ``_get_targets_single``), no tensor method,
    no name every other object has (``update``, ``step``, ``get_config``)."""
    return "_" in name.strip("_") and len(name) >= 10 and name not in TENSOR_API \
        and name not in ops.GENERIC_METHOD_NAMES and not name.startswith("__")


def _site_method(name: str) -> bool:
    """A method name whose calls on receivers of unknown type are kept as call sites: not a tensor method,
    a dunder or a name every other object has."""
    return name not in TENSOR_API and name not in ops.GENERIC_METHOD_NAMES and not name.startswith("__")


#: annotations of plain numbers that a caller may in fact fill with a 0-d tensor
_NUMBER_ANNOTATIONS = frozenset({"int", "float", "bool"})

_TYPE_ALIAS_MARKS = frozenset({"typing.TypeAlias", "typing_extensions.TypeAlias"})
_NAMEDTUPLE_FACTORIES = frozenset({"collections.namedtuple", "typing.NamedTuple"})


def _namedtuple_fields(spec: ast.expr) -> tuple[str, ...]:
    """The field names of ``namedtuple(name, "a, b c")``, ``namedtuple(name, ["a", "b"])`` or
    ``NamedTuple(name, [("a", Tensor), ...])``; empty when they are not written there."""
    if type(spec) is ast.Constant and type(spec.value) is str:
        return tuple(part for part in spec.value.replace(",", " ").split() if part.isidentifier())
    if type(spec) in (ast.List, ast.Tuple):
        names = []
        for element in spec.elts:
            if type(element) in (ast.Tuple, ast.List) and element.elts:
                element = element.elts[0]
            if type(element) is not ast.Constant or type(element.value) is not str:
                return ()
            names.append(element.value)
        return tuple(names)
    return ()


_UNION_ANNOTATIONS = frozenset({"typing.Union", "typing.Optional", "Union", "Optional"})


#: subscripted types a module-level assignment names as a type alias (``Type = Dict[str, torch.Tensor]``)
_ALIASED_SUBSCRIPTS = _UNION_ANNOTATIONS | (_SEQUENCE_ANNOTATIONS - {"list", "tuple"}) | \
    (_MAPPING_ANNOTATIONS - {"dict"})


def _never_called(kind) -> bool:
    """A value of this kind is not callable (a tensor, a size, a container): ``d() if callable(d) else d``
    returns it as it is."""
    return kind in TENSORISH or kind in (DATA, SIZE, NDARRAY) or (type(kind) is tuple and kind[0] in (TUPLE, SEQ, DICT))


def _passthrough_functions(body) -> dict[str, tuple[tuple[str, ...], frozenset[str]]]:
    """Module-level functions whose every ``return`` gives back one of their parameters (``return val
    if exists(val) else d``, ``return a or b``, ``return x``): name -> (positional parameter names,
    the parameters returned).  Helpers like lucidrains' ``default``/``cast_tuple`` pass through
    whatever they are given, so each call's result is what that call passes.  A parameter called
    without arguments (``return d() if callable(d) else d``) is returned as ``"d()"``: what the lambda
    passed for it gives."""
    found = {}
    for statement in body:
        if type(statement) is not ast.FunctionDef or statement.decorator_list or len(statement.body) > 4 \
                or statement.end_lineno - statement.lineno > 12:
            continue  # such helpers are a line or two: a long function is not walked for it
        arguments = statement.args
        if arguments.vararg is not None or arguments.kwarg is not None:
            continue
        params = tuple(a.arg for a in positional_parameters(arguments))
        names = set(params) | {a.arg for a in arguments.kwonlyargs}
        returned: set[str] = set()
        ok = True
        for node in ast.walk(statement):
            if type(node) is ast.Return:
                if node.value is None or not _returns_parameters(node.value, names, returned):
                    ok = False
                    break
            elif type(node) in (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.Yield, ast.YieldFrom) \
                    and node is not statement:
                ok = False
                break
            elif type(node) is ast.Name and type(node.ctx) is ast.Store and node.id in names:
                ok = False  # a parameter rebound: what is returned is not what was passed
                break
        if ok and returned:
            found[statement.name] = (params, frozenset(returned))
    return found


def _returns_parameters(value: ast.expr, names: set[str], returned: set[str]) -> bool:
    if type(value) is ast.Name and value.id in names:
        returned.add(value.id)
        return True
    if type(value) is ast.IfExp:
        return _returns_parameters(value.body, names, returned) and _returns_parameters(value.orelse, names, returned)
    if type(value) is ast.BoolOp and isinstance(value.op, ast.Or):
        return all(_returns_parameters(v, names, returned) for v in value.values)
    if type(value) is ast.Call and type(value.func) is ast.Name and value.func.id in names \
            and not value.args and not value.keywords:
        returned.add(value.func.id + "()")  # `d()`: a factory passed for the default (`lambda: torch.ones(n)`)
        return True
    return False


def _display_element(kinds: set):
    """The element kind of a list or dict display whose elements are all tensors: masks when every
    one is a mask, else tensors."""
    return MASK if kinds == {MASK} else TENSOR


def _item_key(node: ast.expr) -> tuple | None:
    """``y[0]``, ``out["prediction"]``: (the name, the constant key); None for anything else."""
    if type(node) is ast.Subscript and type(node.value) is ast.Name and type(node.slice) is ast.Constant \
            and type(node.slice.value) in (int, str):
        return node.value.id, node.slice.value
    return None


def _isinstance_types(node: ast.expr) -> list[ast.expr]:
    """The types an isinstance() second argument names: ``T``, ``(A, B)``, ``A | B``."""
    types = node.elts if type(node) is ast.Tuple else [node]
    return [side for t in types for side in _union_sides(t)]


def _union_sides(node: ast.expr) -> list[ast.expr]:
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.BitOr):
        return _union_sides(node.left) + _union_sides(node.right)
    return [node]


def _chain_root(node: ast.expr) -> str:
    while isinstance(node, ast.Attribute):
        node = node.value
    return node.id if isinstance(node, ast.Name) else ""


def _is_constant_none(node) -> bool:
    return isinstance(node, ast.Constant) and node.value is None


#: arguments that may be callables a module's forward runs (a lambda, a function's name)
_CALLABLE_ARGS = (ast.Lambda, ast.Name, ast.Attribute)


def _mentions_a_step(text: str) -> bool:
    """The words of a training step's calls are in the text (before its tree is searched)."""
    return any(word in text for word in ops.TRAINING_STEP_WORDS)


def _may_hold_a_step(text: str) -> bool:
    """A function's text may hold a training loop: a step's own calls, or a call of a step function
    (``self.train_step()``, ``self._train_batch(...)``)."""
    return "step" in text or "backward" in text or "update_params" in text or "train" in text


def _own_loops(function) -> list:
    """The ``for``/``while`` loops of a function's body, nested ones included, not those of nested
    functions or classes."""
    found = []
    pending = list(ast.iter_child_nodes(function))
    while pending:
        node = pending.pop()
        t = type(node)
        if t in (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda):
            continue
        if t in (ast.For, ast.AsyncFor, ast.While):
            found.append(node)
        pending.extend(ast.iter_child_nodes(node))
    return found


def _is_training_loop(loop) -> bool:
    """The loop's (or function's) body (not nested functions, not nested loops other than those of one
    step: ``_inner_step_loop``) calls ``.backward()`` or steps an optimizer.  An epoch loop around the loop
    over batches is not the step: what it does once an epoch (validation, logging) is not per-step work."""
    for node in _direct_nodes(loop):
        t = type(node)
        if t is ast.Call and type(node.func) is ast.Attribute:
            method = node.func.attr
            if method in ops.TRAINING_STEP_METHODS:
                if method == "backward":
                    return True  # (step and update_params: of an optimizer, not a scheduler or a logger)
                receiver = _chain_root(node.func.value).lower() + "." + (
                    node.func.value.attr.lower() if isinstance(node.func.value, ast.Attribute) else "")
                if any(hint in receiver for hint in ops.OPTIMIZER_NAME_HINTS) \
                        or receiver.endswith(ops.OPTIMIZER_NAME_ENDINGS):
                    return True
    return False


def _debug_only(test: ast.expr) -> bool:
    """``if debug:``, ``if self.debug and rank == 0:``, ``if DEBUG_MODE:``: a debugging flag (a name or an attribute
    one of whose ``_``-separated words is ``debug``) decides the body, which runs only when a developer turns
    it on (unsloth's grouped GEMM prints ``m_sizes.tolist()`` under ``if debug:``): host code, not the step."""
    if type(test) is ast.BoolOp and isinstance(test.op, ast.And):
        return any(_debug_only(value) for value in test.values)
    name = test.id if type(test) is ast.Name else test.attr if type(test) is ast.Attribute else None
    return name is not None and "debug" in name.lower().strip("_").split("_")


def _is_main_guard(test: ast.expr) -> bool:
    """``__name__ == "__main__"`` (either side)."""
    if type(test) is not ast.Compare or len(test.ops) != 1 or not isinstance(test.ops[0], ast.Eq):
        return False
    sides = [test.left, test.comparators[0]]
    return any(type(side) is ast.Name and side.id == "__name__" for side in sides) and \
        any(type(side) is ast.Constant and side.value == "__main__" for side in sides)


def _defines(cls: ast.ClassDef | None, name: str) -> bool:
    """The class body defines a method (a property) of that name."""
    return cls is not None and any(type(node) in (ast.FunctionDef, ast.AsyncFunctionDef) and node.name == name
                                   for node in cls.body)


def _direct_nodes(loop):
    """The nodes of a loop's (or function's) body outside nested functions, classes and loops, but inside
    the loops that belong to one step (``_inner_step_loop``)."""
    pending = list(loop.body)
    while pending:
        node = pending.pop()
        t = type(node)
        if t in (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda):
            continue
        if t in (ast.For, ast.AsyncFor, ast.While) and not _inner_step_loop(node):
            continue
        yield node
        pending.extend(ast.iter_child_nodes(node))


def _tolist_call(node: ast.expr) -> bool:
    """``<value>.tolist()``: a list (of lists) read from a tensor or an array."""
    return type(node) is ast.Call and type(node.func) is ast.Attribute and node.func.attr == "tolist"


_FUNCTION_NODES = (ast.FunctionDef, ast.AsyncFunctionDef)
_TORCH_LAYER_ATTRIBUTE_NAMES = frozenset(name for names in ops.TORCH_LAYER_TENSOR_ATTRIBUTES.values() for name in names)
#: stands for the computed part of an attribute name in the key under which a class records what it stores
#: under names computed alike (``indices_*``: no attribute name holds the character)
_COMPUTED_NAME = "*"


def _computed_name_pattern(node: ast.expr) -> str | None:
    """The pattern of an attribute name computed at run time, its constant start and end around a ``*``:
    ``f"indices_{i}"``, ``"indices_{}".format(i)`` and ``"indices_" + str(i)`` give ``indices_*``,
    ``name + "_needs_init"`` gives ``*_needs_init``; None for anything else or no constant part."""
    start = end = ""
    if type(node) is ast.JoinedStr and node.values:
        first, last = node.values[0], node.values[-1]
        start = first.value if type(first) is ast.Constant else ""
        end = last.value if type(last) is ast.Constant and len(node.values) > 1 else ""
    elif type(node) is ast.Call and type(node.func) is ast.Attribute and node.func.attr == "format" \
            and type(node.func.value) is ast.Constant and isinstance(node.func.value.value, str):
        template = node.func.value.value
        start, end = template.partition("{")[0], template.rpartition("}")[2]
    elif type(node) is ast.BinOp and type(node.op) is ast.Add:
        start = node.left.value if type(node.left) is ast.Constant else ""
        end = node.right.value if type(node.right) is ast.Constant else ""
    if not isinstance(start, str) or not isinstance(end, str) or not (start or end):
        return None
    return start + _COMPUTED_NAME + end


def _self_attr_values(cls: ast.ClassDef) -> dict[str, list]:
    """attribute -> [(value, unpacked)] of the class's assignments ``self.<attribute> = value`` (``unpacked``: a
    target inside a tuple, ``self.a, self.b = value``), kept on the tree."""
    found = getattr(cls, "_dynlint_self_attr_values", None)
    if found is None:
        found = {}
        for node in ast.walk(cls):
            if type(node) is not ast.Assign:
                continue
            for target in node.targets:
                unpacked = type(target) in (ast.Tuple, ast.List)
                for element in (target.elts if unpacked else [target]):
                    if type(element) is ast.Attribute and type(element.value) is ast.Name and element.value.id == "self":
                        found.setdefault(element.attr, []).append((node.value, unpacked))
        cls._dynlint_self_attr_values = found
    return found


def _self_stores(cls: ast.ClassDef) -> frozenset[str]:
    """The attributes a class's own methods assign on ``self`` (kept on the tree)."""
    stores = getattr(cls, "_dynlint_self_stores", None)
    if stores is None:
        stores = frozenset(node.attr for node in ast.walk(cls) if type(node) is ast.Attribute
                           and type(node.ctx) is ast.Store and type(node.value) is ast.Name and node.value.id == "self")
        cls._dynlint_self_stores = stores
    return stores


#: torch namespaces whose classes may stand for tensors or hold them (modules, distributions, masked and nested
#: tensors, TensorDict-like containers): an annotation naming one of their classes is not a plain object
_TORCH_TENSORISH_NAMESPACES = ("torch.nn.", "torch.distributions.", "torch.masked.", "torch.nested.", "torch.fx.",
                               "torch.utils.")


#: list and tuple displays (what `*` repeats)
_DISPLAYS = (ast.List, ast.Tuple, ast.ListComp)


def _project_generator_call(iterable) -> bool:
    """A loop's iterable that calls one of the project's own functions or methods (``self._iter_batches()``,
    ``enumerate(get_batches(loader))``), not a builtin or a loader."""
    while type(iterable) is ast.Call and type(iterable.func) is ast.Name and iterable.func.id in ops.ITERABLE_WRAPPERS \
            and iterable.args:
        iterable = iterable.args[0]
    if type(iterable) is not ast.Call:
        return False
    func = iterable.func
    if type(func) is ast.Attribute:
        return type(func.value) is ast.Name and func.value.id == "self"
    return type(func) is ast.Name and func.id not in ops.BUILTIN_ITERABLES




_TRY_STATEMENTS = (ast.Try, getattr(ast, "TryStar", ast.Try))


def _inner_step_loop(loop) -> bool:
    """A loop that is part of one training step: ``while True: try:`` (a retry), or a loop over optimizers,
    micro-batches or accumulation steps (``for optimizer in self.state.optimizers: optimizer.step()``)."""
    if type(loop) is ast.While:
        # a retry: `while True:` around a `try:` (not a main loop that runs until told to stop)
        test = loop.test
        return type(test) is ast.Constant and bool(test.value) is True and \
            any(type(statement) in _TRY_STATEMENTS for statement in loop.body)
    for node in ast.walk(loop.iter):
        word = last_name(node)
        if word is not None and any(hint in word.lower() for hint in ops.INNER_STEP_LOOP_WORDS):
            return True
    return False


def _foreign_blocks(body: list[ast.stmt]) -> tuple[tuple[int, int], ...]:
    """The line spans of module-level ``if``/``try``/``with`` blocks whose own statements import another array
    framework (``ops.FOREIGN_ARRAY_MODULES``): code defined there works on that framework's arrays."""
    spans = []
    for statement in body:
        if type(statement) not in (ast.If, ast.Try, ast.With):
            continue
        blocks = [statement.body]
        if type(statement) is ast.If:
            blocks.append(statement.orelse)
        for block in blocks:
            if any(_imports_foreign(inner) for inner in block):
                spans.append((block[0].lineno, block[-1].end_lineno or block[-1].lineno))
    return tuple(spans)


def _imports_foreign(statement: ast.stmt) -> bool:
    if type(statement) is ast.Import:
        return any(ops.foreign_array_module(alias.name) for alias in statement.names)
    return type(statement) is ast.ImportFrom and not statement.level and statement.module is not None \
        and ops.foreign_array_module(statement.module)


def _canonical(qualified: str) -> str:
    """Map re-exports to one spelling (torch.functional.unique -> torch.unique)."""
    if qualified.startswith("torch.functional."):
        return "torch." + qualified[len("torch.functional."):]
    if qualified.startswith("torch.utils.data.dataloader."):
        return "torch.utils.data." + qualified[len("torch.utils.data.dataloader."):]
    if qualified.startswith("torchvision.ops.boxes."):
        return "torchvision.ops." + qualified[len("torchvision.ops.boxes."):]
    return qualified


def _tensor_method_kind(receiver, method: str, node: ast.Call, asks_for_bool: bool = False):
    if method not in TENSOR_API:
        return None  # a tensor has no .items()/.append(): the receiver is not one here (or a subclass's own)
    if asks_for_bool:
        return MASK  # x.new_zeros(n, dtype=torch.bool), x.to(torch.bool)
    if method in ops.SIZE_METHODS:
        return SIZE
    if method == "type" and (node.args or node.keywords):
        # x.type(torch.int64) converts like .to(); a bare x.type() names the type (a str)
        return SCALAR_TENSOR if receiver == SCALAR_TENSOR else TENSOR
    if method in ops.RANK_METHODS or method in ops.META_METHODS:
        return PY
    if method in ops.DATA_METHODS:
        return DATA
    if method == "numpy":
        return NDARRAY
    if method in ops.MASK_METHODS:
        return MASK
    if method in ("any", "all"):
        return MASK if node.args or node.keywords else SCALAR_TENSOR
    if method in ops.FULL_REDUCTIONS and not node.args and not has_keyword(node, "dim", "axis"):
        return SCALAR_TENSOR
    if receiver == MASK and (method in ops.MASK_PRESERVING_METHODS or (method == "to" and _device_only(node))):
        return MASK
    if receiver == SCALAR_TENSOR and method in ops.MASK_PRESERVING_METHODS:
        return SCALAR_TENSOR
    if method in ops.SEQUENCE_RESULT_METHODS:
        return (SEQ, TENSOR)
    if method in ("float", "double", "half", "bfloat16", "long", "int", "to", "type_as", "abs", "neg",
                  "exp", "log", "sqrt", "sigmoid", "relu", "clamp", "detach", "clone", "cpu", "cuda"):
        return SCALAR_TENSOR if receiver == SCALAR_TENSOR else TENSOR
    return TENSOR


def _module_method_kind(module, method: str):
    """What an ``nn.Module``'s own methods give: the module itself from the in-place moves and mode switches
    (``model.to("cpu")``, ``model.eval()``), a dict of tensors from ``state_dict()``."""
    if method in ops.MODULE_SELF_METHODS:
        return module
    if method == "state_dict":
        return (DICT, TENSOR)
    return None


def _device_only(node: ast.Call) -> bool:
    """``.to(mask.device)``, ``.to("cuda")``, ``.to(device, non_blocking=True)``: a move, no dtype given."""
    for arg in node.args:
        if not ((type(arg) is ast.Attribute and arg.attr == "device") or (type(arg) is ast.Name and "device" in arg.id)
                or (type(arg) is ast.Constant and type(arg.value) is str)):
            return False
    return bool(node.args or node.keywords) and all(k.arg in ("device", "non_blocking", "copy") for k in node.keywords)


def _iteration_kind(kind):
    return iteration_kind(kind)


def _is_staticmethod(node) -> bool:
    return any(isinstance(d, ast.Name) and d.id == "staticmethod" for d in node.decorator_list)


# The single hot loop: nodes with nothing to check below them are not visited at all, and
# fields that only hold operators or load/store markers are not walked.
_LEAVES = frozenset({ast.Name, ast.Constant, ast.Pass, ast.Break, ast.Continue, ast.Nonlocal,
                     ast.Load, ast.Store, ast.Del})
_TERMINATORS = frozenset({ast.Return, ast.Raise, ast.Continue, ast.Break})
_NON_CHILD_FIELDS = frozenset({"ctx", "op", "ops", "type_comment", "id", "attr", "arg", "name", "level",
                               "conversion", "is_async", "kind"})
_CHILD_FIELDS: dict[type, tuple[str, ...]] = {}

_PLAIN_KWARGS = frozenset({"int", "float", "bool", "str", "bytes"})  # **kwargs: int (each keyword an int)

_DISPATCH = {
    getattr(ast, name[len("visit_"):]): function
    for name, function in vars(Analyzer).items()
    if name.startswith("visit_") and name != "visit_all" and name != "visit_target"
    and hasattr(ast, name[len("visit_"):])
}


@functools.lru_cache(maxsize=8)
def _dispatch(dynamic_ops: tuple[str, ...]) -> checks.Dispatch:
    return checks.Dispatch(checks.load_all().values(), {"extend_dynamic_ops": dynamic_ops})


# Long operator chains (a + b + ... with thousands of terms) nest as deep as CPython's parser
# allows; walking them recursively needs more than the default 1000 frames.  Python-to-Python
# calls do not grow the C stack on 3.11+, so a higher limit is safe here.
_RECURSION_LIMIT = 20_000


def analyze_file(tree: ast.AST, lines: list[str], dynamic_ops=(), *, module: str = "", is_package: bool = False,
                 facts: ProjectFacts = EMPTY, project_roots: frozenset[str] = frozenset()) -> FileAnalysis:
    """Walk a parsed module with the project table ``facts``: findings (unsorted, no noqa or
    selection applied), where they stand, and the file's own facts."""
    limit = sys.getrecursionlimit()
    if limit < _RECURSION_LIMIT and sys.version_info >= (3, 11):
        sys.setrecursionlimit(_RECURSION_LIMIT)
    try:
        return Analyzer(lines, dynamic_ops, module=module, is_package=is_package, facts=facts,
                        project_roots=project_roots).run(tree)
    finally:
        sys.setrecursionlimit(limit)
