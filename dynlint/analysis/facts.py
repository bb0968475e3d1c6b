"""Project facts: what one file tells the others, and the solved table they all read.

Each file's walk *produces* ``FileFacts`` — its functions (parameters,
decorations), classes (bases, methods, the kinds of ``self.<attr>``), the
module-level names it imports (re-exports), the kind each function returns,
every call to a project function with the kinds of its arguments, and the call
edges and roots that decide where code runs.  Nothing in it depends on other
files.

``ProjectFacts`` solves all files' facts into one table: names resolved
through re-exports, classes' method resolution and ``nn.Module``-ness through
project bases, each parameter's kind as the join of the arguments its callers
pass, each function's return kind.  A walk *consumes* it through ``answer``:
every question and its answer is recorded (``Consumed``), so the engine knows
which files to walk again when the table changes, and the cache can tell
whether a stored result is still valid (``dynlint.project``).

Keys and answers are plain tuples/strings (JSON-able), so both sides survive
the results cache.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from dynlint import ops
from dynlint.analysis.modules import unique_aliases
from dynlint.analysis.kinds import MASK, OBJ, PY, SCALAR_TENSOR, TENSOR, TENSORISH

# --- what a file produces -------------------------------------------------------------

#: a function: (positional parameter names, keyword-only names, has *args, has **kwargs,
#: bound: the first positional parameter is self/cls, flags)
FunctionRecord = tuple

# flags of a function
COMPILED = "compiled"     # @torch.compile, or passed to torch.compile/checkpoint/vmap
DISABLED = "disabled"     # @torch.compiler.disable / @torch._dynamo.disable: always runs eagerly
KERNEL = "kernel"         # @triton.jit, @numba.jit, @cuda.jit: not PyTorch code at all
NO_GRAD = "no_grad"       # a module-level function under @torch.no_grad() / @torch.inference_mode()
OVERRIDE = "override"      # a call that reaches a method as an override of the one it names (params)
STEPS = "steps"           # a step function: calls backward() or steps an optimizer outside any loop of its own,
                          # or calls a step function of its file so
TRAINS = "trains"         # an nn.Module's forward that runs a training loop (a trainer that is a module): not
                          # the compiled step; its loops' bodies are the training step

# call contexts (where a call stands in its caller)
CALL = "call"             # an ordinary call
TRAIN = "train"           # inside a training loop's body (a loop that calls backward/optimizer.step)
HOST = "host"             # under a guard that only runs eagerly (not is_compiling(), ...)
FORWARD = "forward"       # in a lambda given to an nn.Module's constructor: runs in that module's forward

#: the third entry of a finding's place (after the function and the call context) when the value the
#: finding reads was made on the CPU (``Analyzer.report``); else whether it is kept only in the step
CPU_VALUE = "cpu"

#: the ``star`` of a call that only references its callee (``functools.partial(f, ...)``): where it runs,
#: not what it is passed
REFERENCE = "ref"

# root kinds
ROOT_COMPILED = "compiled"
ROOT_TRAIN = "train"
ROOT_HOST = "host"
ROOT_DRIVER = "driver"    # runs a model from outside its forward: host unless compiled/training code reaches it
ROOT_TO_HOST = "to_host"  # moves tensors to the CPU on purpose (.cpu(), .numpy()): host unless reached otherwise


@dataclass
class FileFacts:
    module: str
    functions: dict[str, FunctionRecord] = field(default_factory=dict)
    #: class id -> (base qualified names, local module evidence, local dataset evidence)
    classes: dict[str, tuple] = field(default_factory=dict)
    #: module-level name -> qualified name it imports (what the module re-exports); ``"*" + module`` ->
    #: module for ``from module import *`` of a project module
    aliases: dict[str, str] = field(default_factory=dict)
    #: function id -> (kind, maybe) of what it returns
    returns: dict[str, tuple] = field(default_factory=dict)
    #: (caller id, callee ref, positional (kind, maybe)..., {keyword: (kind, maybe)}, has * or ** (or
    #: REFERENCE: the callee runs there with arguments unseen, ``partial(f, ...)``), context)
    calls: list[tuple] = field(default_factory=list)
    #: class id -> {attribute: kind} for ``self.<attribute> = value``, and for tensors another class's code
    #: stores on an instance (``self.criterion.use_queue = mask``)
    attrs: dict[str, dict] = field(default_factory=dict)
    #: (root kind, callee ref): where compiled/training/host code starts
    roots: list[tuple] = field(default_factory=list)
    #: function id -> (positional parameter names, the parameters it returns) of a module-level function
    #: that returns one of its parameters on every path (``default(val, d)``): a call gives what it passes
    passthrough: dict[str, tuple] = field(default_factory=dict)
    #: function id -> names of its parameters its own code shows to be tensors (an annotation, a tensor-only
    #: use): a caller's local value passed there is one
    tensor_params: dict[str, tuple] = field(default_factory=dict)
    #: qualified name -> kind of a module-level type alias (nequip's ``Type = Dict[str, torch.Tensor]``):
    #: another module's annotation ``AtomicDataDict.Type`` means the same
    type_kinds: dict[str, object] = field(default_factory=dict)
    #: attribute name -> kind of the fields the module's classes declare by annotation in their body
    #: (``n_node: torch.Tensor`` in a NamedTuple or dataclass; ``PY`` for any other type, or for names
    #: declared with different kinds): what an object of unknown class holds under that name
    fields: dict[str, object] = field(default_factory=dict)
    #: string key -> kind of the values the module stores under it in dicts (``{"n_answers":
    #: torch.LongTensor(n)}`` in a collater, ``batch["mask"] = m``; ``PY`` when the stores disagree, values of
    #: unknown kind not counted): what a dict of unknown origin holds under that key
    keys: dict[str, object] = field(default_factory=dict)
    #: attribute name -> kind of what the module's classes store under it (``self.num_node =
    #: torch.as_tensor(n)``; ``PY`` for a plain value or one of unknown kind, a method of that name, a
    #: property that does not surely return a tensor, or stores that disagree): what an object of unknown
    #: class holds there
    stores: dict[str, object] = field(default_factory=dict)
    #: class id -> field names of a namedtuple class made at module level by the factory (``State =
    #: collections.namedtuple("State", "y t dt")``): other files' constructions say what its fields hold
    namedtuples: dict[str, tuple] = field(default_factory=dict)

    def to_json(self) -> list:
        return [self.module, self.functions, self.classes, self.aliases, self.returns,
                self.calls, self.attrs, self.roots, self.passthrough, self.tensor_params, self.type_kinds,
                self.fields, self.keys, self.stores, self.namedtuples]

    @classmethod
    def from_json(cls, data: list) -> "FileFacts":
        module, functions, classes, aliases, returns, calls, attrs, roots = data[:8]
        passthrough = data[8] if len(data) > 8 else {}
        tensor_params = data[9] if len(data) > 9 else {}
        type_kinds = data[10] if len(data) > 10 else {}
        fields = data[11] if len(data) > 11 else {}
        keys = data[12] if len(data) > 12 else {}
        stores = data[13] if len(data) > 13 else {}
        namedtuples = data[14] if len(data) > 14 else {}
        return cls(module, {k: tuples(v) for k, v in functions.items()}, {k: tuples(v) for k, v in classes.items()},
                   aliases, {k: tuples(v) for k, v in returns.items()}, [tuples(c) for c in calls],
                   {k: {a: tuples(v) for a, v in d.items()} for k, d in attrs.items()}, [tuples(r) for r in roots],
                   {k: tuples(v) for k, v in passthrough.items()}, {k: tuples(v) for k, v in tensor_params.items()},
                   {k: tuples(v) for k, v in type_kinds.items()}, {k: tuples(v) for k, v in fields.items()},
                   {k: tuples(v) for k, v in keys.items()}, {k: tuples(v) for k, v in stores.items()},
                   {k: tuple(v) for k, v in namedtuples.items()})


def join_field(known, kind):
    """Two declarations of a field name: the same kind, else a plain value (no agreement)."""
    return kind if known is None or known == kind else PY


def join_key(known, kind):
    """Two values stored under one dict key: the same kind; a tensor when both are tensors (a mask and a
    float tensor); else a plain value (no agreement)."""
    if known is None or known == kind:
        return kind
    return TENSOR if known in TENSORISH and kind in TENSORISH else PY


def tuples(value):
    """JSON lists back to the tuples they were (dicts are kept)."""
    if type(value) is list:
        return tuple(tuples(v) for v in value)
    if type(value) is dict:
        return {k: tuples(v) for k, v in value.items()}
    return value


#: the ``bound`` of a callee that takes a context object first (a custom autograd function's ``forward``,
#: called through ``apply``): the arguments of the call start at its second parameter
CTX = "ctx"

# Callee references, resolved by the table:
#   ("q", qualified name)          a function, or a class (its constructor)
#   ("m", class qualname, method)  a method looked up through the class's bases (bound call)
#   ("mod", class qualname)        calling an nn.Module instance: its forward (bound call)
def ref_function(qualname: str) -> tuple:
    return ("q", qualname)


def ref_method(class_id: str, method: str) -> tuple:
    return ("m", class_id, method)


def ref_module_call(class_id: str) -> tuple:
    return ("mod", class_id)


def ref_named(method: str) -> tuple:
    """A call of ``method`` on a receiver of unknown type: the project's methods of that name."""
    return ("n", method)


def ref_site(method: str) -> tuple:
    """A call of ``method`` on a receiver of unknown type whose name says nothing definite: no edge, only a
    call site (regions: ``model.compress(x)`` in host code makes an otherwise uncalled ``compress`` host)."""
    return ("u", method)


# --- joins --------------------------------------------------------------------------------

def join_contributions(contributions) -> tuple | None:
    """The kind of a parameter from what its call sites pass: (kind, maybe) or None.

    Every site passing a proven tensor makes a proven tensor (a boolean mask stays a
    mask only if all are masks); some sites passing a tensor and others something else
    (a default, a flag, an unknown value) make a *maybe* tensor; no tensor at all gives
    the one kind every site agrees on, or unknown."""
    kinds = set()
    maybe = False
    for kind, sure in contributions:
        kinds.add(kind)
        if not sure:
            maybe = True
    tensors = kinds & TENSORISH
    if tensors:
        kind = MASK if tensors == {MASK} else SCALAR_TENSOR if tensors == {SCALAR_TENSOR} else TENSOR
        return (kind, maybe or len(tensors) != len(kinds))
    if len(kinds) == 1:
        kind = kinds.pop()
        return None if kind is None else (kind, maybe)
    return None


# --- the solved table ---------------------------------------------------------------------

class ProjectFacts:
    """All files' facts, solved; ``answer(key)`` is the only question a walk asks."""

    def __init__(self, files=(), *, callers: bool = True):
        """``callers=False``: a table that does not yet join what callers pass (the first,
        bottom-up pass over the import levels, where callers are mostly still to come)."""
        self.callers = callers
        self.functions: dict[str, FunctionRecord] = {}
        self.classes: dict[str, tuple] = {}
        self.returns: dict[str, tuple] = {}
        self.passthrough: dict[str, tuple] = {}
        self.tensor_params: dict[str, tuple] = {}
        self.type_kinds: dict[str, object] = {}
        self.attrs: dict[str, dict] = {}
        self.fields: dict[str, object] = {}
        self.keys: dict[str, object] = {}
        self.stores: dict[str, object] = {}
        self.namedtuples: dict[str, tuple] = {}
        self.namespaces: dict[str, dict[str, str]] = {}
        self.files: list[FileFacts] = list(files)
        #: relpath -> module name of the files of the run that solved this table
        self.module_of: dict[str, str] = {}
        self._aliases: dict[str, str] = {}
        self._aliases_from = 0
        for facts in self.files:
            namespace = self.namespaces.setdefault(facts.module, {})
            namespace.update(facts.aliases)
            for table, items in ((self.functions, facts.functions), (self.classes, facts.classes),
                                 (self.returns, facts.returns), (self.passthrough, facts.passthrough),
                                 (self.tensor_params, facts.tensor_params), (self.type_kinds, facts.type_kinds),
                                 (self.namedtuples, facts.namedtuples)):
                for key, value in items.items():
                    table.setdefault(key, value)
            for class_id, attrs in facts.attrs.items():
                merged = self.attrs.setdefault(class_id, {})
                for name, kind in attrs.items():
                    merged[name] = kind if merged.get(name, kind) == kind else None
            for name, kind in facts.fields.items():
                self.fields[name] = join_field(self.fields.get(name), kind)
            for name, kind in facts.keys.items():
                self.keys[name] = join_key(self.keys.get(name), kind)
            for name, kind in facts.stores.items():
                self.stores[name] = join_key(self.stores.get(name), kind)
        for defined in list(self.functions) + list(self.classes):
            module, _, name = defined.rpartition(".")
            if module in self.namespaces and "." not in name:
                self.namespaces[module].setdefault(name, defined)
        self._resolved: dict[str, str | None] = {}
        self._resolving: set[str] = set()   # names being resolved (a re-export or star-import cycle)
        self._cuts = 0                      # times a cycle or the depth bound cut a resolution short
        self._star_modules: dict[str, list[str]] = {}
        self._exports: dict[str, tuple] = {}
        self._flags: dict[str, tuple] = {}
        self._params_solved: dict[tuple[str, str], tuple] | None = None
        self._answers: dict[tuple, object] = {}
        self._mro: dict[str, list[str]] = {}
        self._children: dict[str, list[str]] | None = None
        self._callees: dict[tuple, tuple] = {}
        self._by_method_name: dict[str, list[str]] | None = None

    def methods_named(self, name: str) -> list[str]:
        """The project's methods (of any class) with this name: the candidates of a call on a receiver
        of unknown type (``self.loss.process_slcwa_scores(...)``); a name shared by more than
        ``ops.NAMED_CALL_CANDIDATES`` methods resolves to none."""
        if self._by_method_name is None:
            found: dict[str, list[str]] = {}
            for function_id in self.functions:
                owner, _, method = function_id.rpartition(".")
                if owner in self.classes:
                    found.setdefault(method, []).append(function_id)
            self._by_method_name = found
        candidates = self._by_method_name.get(name, ())
        return list(candidates) if len(candidates) <= ops.NAMED_CALL_CANDIDATES else []

    def modules(self) -> list[str]:
        return [facts.module for facts in self.files]

    # ---------------------------------------------------------------- the one entry point
    def answer(self, key: tuple):
        """The answer to one question a walk asks.  Questions are about meaning, not names, so
        a walk is repeated only when something it used really changed:

        * ``("call", qualname)``: what calling that project name gives — ``(kind, maybe)`` of
          the function's return, ``(("obj", class, is_module), False)`` for a class;
        * ``("mcall", class, method)``: what calling that method on an instance gives;
        * ``("modcall", class)``: what calling an instance (its ``forward``) gives;
        * ``("param", function, name)``: the join of what callers pass, ``(kind, maybe)``;
        * ``("base", qualname)``: ``(is_module, is_dataset)`` of a project base class;
        * ``("attr", class, name)``: the kind of ``self.<name>`` in that class or its bases;
        * ``("targs", callee ref)``: ``(positions, keywords)`` of the arguments the callee's own code shows to
          be tensors;
        * ``("bases", class)``: the bases outside the project (qualified names) of the class and its
          project bases, sorted;
        * ``("pass", qualname)``: ``(parameter names, returned parameters)`` of a function that returns
          one of its parameters (``default(val, d)``), else None;
        * ``("typekind", qualname)``: the kind a project type alias stands for (through re-exports), else
          None.
        * ``("field", name)``: the tensor kind of the attribute ``name`` when the project's classes that
          declare a field of that name (a NamedTuple's or dataclass's ``n_node: torch.Tensor``) all declare
          a tensor and no class stores anything else under it, else None: ``batch.n_node`` of an object
          whose class the call graph does not know is then maybe that tensor.
        * ``("stored", name)``: TENSOR when no class declares a field ``name`` and the project's classes store
          only tensors under that attribute name (``stored_kind``), else None;
        * ``("subattr", class, name)``: the tensor kind the project's subclasses of a class store under an
          attribute the class itself never sets (a mixin's ``self.queue_ptr``), else None;
        * ``("passed", function, name)``: what every call passes, calls of a base class's method that reach this
          override included (``("param", ...)`` leaves them out);
        * ``("ntfields", qualname)``: ``(class id, field names)`` of the project namedtuple class the name
          refers to (made by the factory at module level), else None;
        * ``("steps", callee ref)``: whether the call runs a step function (``STEPS``), whatever file defines it;
        * ``("anchor", module)``: the dotted name a file named by its bare stem has inside the regular package
          around its directory (``torchdyn/numerics/solvers/root.py``, in a directory without ``__init__.py``:
          ``torchdyn.numerics.solvers.root``), which its relative imports start from, else None;
        * ``("key", name)``: the tensor kind of what the project's dicts store under the string key ``name``
          when every store whose kind is known stores a tensor (a collater's ``{"n_answers":
          torch.LongTensor(n)}``), else None: ``samples["n_answers"]`` of a dict of unknown origin is then
          maybe that tensor.
        """
        answers = self._answers
        if key in answers:
            return answers[key]
        value = answers[key] = self._answer(key)
        return value

    def _answer(self, key: tuple):
        kind = key[0]
        if kind == "call":
            target = self.resolve(key[1])
            if target is None:
                applied = self.applied_forward(key[1])
                return self.returns.get(applied) if applied else None
            if target in self.classes:
                flags = self.class_flags(target)
                return ((OBJ, target, bool(flags and flags[0])), False)
            return self.returns.get(target)
        if kind == "mcall":
            target = self.method(key[1], key[2])
            return self.returns.get(target) if target else None
        if kind == "modcall":
            target = self.method(key[1], "forward") or self.method(key[1], "__call__")
            return self.returns.get(target) if target else None
        if kind == "param":
            return self._solved_params().get((key[1], key[2]))
        if kind == "base":
            target = self.resolve(key[1])
            flags = self.class_flags(target) if target else None
            return flags if flags and (flags[0] or flags[1]) else None
        if kind == "attr":
            return self.attr(key[1], key[2])
        if kind == "pass":
            target = self.resolve(key[1])
            return self.passthrough.get(target) if target else None
        if kind == "targs":
            return self.tensor_arguments(key[1])
        if kind == "bases":
            target = self.resolve(key[1])
            return self.external_bases(target) if target in self.classes else None
        if kind == "star":
            return self.star_exports(key[1])
        if kind == "alias":
            return self.alias_target(key[1])
        if kind == "typekind":
            return self.type_kind(key[1])
        if kind == "field":
            return self.field_kind(key[1])
        if kind == "stored":
            return self.stored_kind(key[1])
        if kind == "subattr":
            return self.subclass_attr(key[1], key[2])
        if kind == "key":
            stored = self.keys.get(key[1])
            return stored if stored in TENSORISH else None
        if kind == "anchor":
            return self.anchor(key[1])
        if kind == "ntfields":
            target = self.resolve(key[1])
            return (target, self.namedtuples[target]) if target in self.namedtuples else None
        if kind == "steps":
            return self.steps(key[1])
        if kind == "passed":
            solved = self._solved_params()
            found = solved.get((key[1], key[2], OVERRIDE))
            return found if found is not None else solved.get((key[1], key[2]))
        raise KeyError(key)

    # ---------------------------------------------------------------- names
    def resolve(self, qualname: str, depth: int = 0) -> str | None:
        """The project definition a qualified name refers to (through re-exports), or None."""
        if qualname in self.functions or qualname in self.classes:
            return qualname
        if qualname in self._resolved:
            return self._resolved[qualname]
        if depth >= 12 or qualname in self._resolving:
            self._cuts += 1
            return None
        # Memoized at every depth: a package's `from .x import *` chains reach the same modules along
        # many paths (transformers: minutes, unmemoized).  A result that a cycle or the depth bound cut
        # short is kept only at depth 0 (as it always was), so answers never depend on the order asked.
        cuts = self._cuts
        self._resolving.add(qualname)
        result = None
        try:
            parts = qualname.split(".")
            for cut in range(len(parts) - 1, 0, -1):
                namespace = self.namespaces.get(".".join(parts[:cut]))
                if namespace is None:
                    alias = self._module_aliases().get(".".join(parts[:cut]))
                    namespace = self.namespaces.get(alias) if alias else None
                if namespace is None:
                    continue
                target = namespace.get(parts[cut])
                if target is not None and target != qualname:
                    rest = parts[cut + 1:]
                    result = self.resolve(".".join([target, *rest]), depth + 1)
                elif target is None:
                    # `from module import *` of project modules: the name may be one of theirs
                    for star in self._stars(".".join(parts[:cut]), namespace):
                        if star not in self.namespaces and self._module_aliases().get(star) not in self.namespaces:
                            # not a module of this run: its names are unknown (following it would fall back
                            # to this same namespace with a longer name, again and again)
                            continue
                        result = self.resolve(".".join([star, *parts[cut:]]), depth + 1)
                        if result is not None:
                            break
                break
        finally:
            self._resolving.discard(qualname)
        if depth == 0 or self._cuts == cuts:
            self._resolved[qualname] = result
        return result

    def _namespace(self, module: str) -> tuple[str, dict | None]:
        """``(module, its namespace)`` for a module of the run, also when ``module`` is an alias of one
        (the alias resolved); ``(module, None)`` for a module outside the run."""
        namespace = self.namespaces.get(module)
        if namespace is None:
            alias = self._module_aliases().get(module)
            if alias and alias in self.namespaces:
                return alias, self.namespaces[alias]
        return module, namespace

    def type_kind(self, qualname: str):
        """The kind of the project type alias a qualified name refers to, followed through the modules
        that import it (``from .typing import Batch``), or None."""
        seen: set[str] = set()
        while qualname not in seen and len(seen) < 12:
            seen.add(qualname)
            if qualname in self.type_kinds:
                return self.type_kinds[qualname]
            module, _, name = qualname.rpartition(".")
            module, namespace = self._namespace(module)
            if namespace is None:
                return None
            if f"{module}.{name}" in self.type_kinds:  # named through a module alias
                return self.type_kinds[f"{module}.{name}"]
            target = namespace.get(name)
            if target is None:
                return None
            qualname = target
        return None

    def field_kind(self, name: str):
        declared = self.fields.get(name)
        if declared not in TENSORISH:
            return None
        for attrs in self.attrs.values():
            stored = attrs.get(name)
            if stored is not None and stored not in TENSORISH:
                return None  # a submodule or a project object under that name in some class
        return declared

    def stored_kind(self, name: str):
        """No class declares a field ``name`` by annotation: TENSOR when every store of an attribute of that
        name in the project's classes stores a tensor (torchdrug's ``Graph.__init__``: ``self.num_node =
        torch.as_tensor(...)``, read as ``graph.num_node`` wherever ``graph`` is some graph): no class stores
        a plain value or one of unknown kind there, defines a method of that name, or a property that does not
        surely return a tensor; else None."""
        if name in self.fields:
            return None
        return TENSOR if self.stores.get(name) in TENSORISH else None

    def alias_target(self, qualname: str) -> str | None:
        """The name outside the project that a project name stands for, through the modules that import
        or alias it (``pykeen.typing.FloatTensor`` -> ``torch.Tensor``), or None (a project definition,
        or nothing known)."""
        seen: set[str] = set()
        while qualname not in seen and len(seen) < 12:
            seen.add(qualname)
            if qualname in self.functions or qualname in self.classes:
                return None
            module, _, name = qualname.rpartition(".")
            module, namespace = self._namespace(module)
            if namespace is None:
                # not a module of the run: the name outside it, once an alias led there (a name inside one of
                # its modules, ``pkg.mod.Class.attr``, is no such name)
                parts = qualname.split(".")
                inside = any(".".join(parts[:cut]) in self.namespaces for cut in range(1, len(parts)))
                return qualname if len(seen) > 1 and not inside else None
            target = namespace.get(name)
            if target is None:
                for star in self._stars(module, namespace):
                    if name in self.namespaces.get(star, ()):
                        target = f"{star}.{name}"
                        break
            if target is None:
                return None
            qualname = target
        return None

    def star_exports(self, module: str, seen: frozenset = frozenset()) -> tuple | None:
        """The imports ``from <module> import *`` brings, as sorted (local name, qualified name) pairs:
        the module's own imports, then those of the project modules it star-imports in turn (fastai's
        ``from .torch_basics import *`` chains end at ``import torch``).  Private names are not
        exported, as in Python; ``__all__`` is not read (a name that is imported is nearly always
        meant to be used).  None when the module is not in the run."""
        module, namespace = self._namespace(module)
        if namespace is None:
            return None
        cached = self._exports.get(module)
        if cached is not None:
            return cached
        found: dict[str, str] = {}
        if len(seen) < 12:
            for star in self._stars(module, namespace):
                if star not in seen:
                    for local, qualified in self.star_exports(star, seen | {module}) or ():
                        found.setdefault(local, qualified)
        for local, qualified in namespace.items():
            if local[:1] not in ("*", "_") and "." not in local:
                found[local] = qualified  # the module's own import wins over one it star-imports
        result = tuple(sorted(found.items()))
        if not seen:
            self._exports[module] = result
        return result

    def _stars(self, module: str, namespace: dict) -> list[str]:
        stars = self._star_modules.get(module)
        if stars is None:
            stars = self._star_modules[module] = [v for k, v in namespace.items() if k[:1] == "*" and v != module]
        return stars

    def anchor(self, module: str) -> str | None:
        """The longest path alias of ``module`` (``modules.path_aliases``) that lies inside a regular package
        of the run: a directory without ``__init__.py`` under a package is a namespace portion of it (PEP 420),
        so ``from ..utils import f`` in ``torchdyn/numerics/solvers/root.py`` names ``torchdyn.numerics.utils``.
        None when no alias does (a script directory, a file outside every package)."""
        best = None
        for alias, target in self._module_aliases().items():
            if target != module or (best is not None and len(alias) <= len(best)):
                continue
            package = alias.rpartition(".")[0]
            while package and package not in self.namespaces:
                package = package.rpartition(".")[0]
            if package:
                best = alias
        return best

    def _module_aliases(self) -> dict[str, str]:
        """Other names the run's modules may be imported by (``modules.unique_aliases``)."""
        if self._aliases_from != len(self.module_of):  # module_of is filled after construction
            self._aliases = unique_aliases(self.module_of)
            self._aliases_from = len(self.module_of)
        return self._aliases

    # ---------------------------------------------------------------- classes
    def class_flags(self, class_id: str, seen: frozenset = frozenset()) -> tuple | None:
        """(is an nn.Module, is a Dataset) for a project class, through its bases."""
        record = self.classes.get(class_id)
        if record is None:
            return None
        cached = self._flags.get(class_id)
        if cached is not None:
            return cached
        bases, is_module, is_dataset = record
        for base in bases:
            if base in ops.DATASET_BASE_QUALNAMES:
                is_dataset = True
            elif is_module_base(base):
                is_module = True
            else:
                resolved = self.resolve(base)
                if resolved is not None and resolved not in seen and resolved != class_id:
                    flags = self.class_flags(resolved, seen | {class_id})
                    if flags is not None:
                        is_module = is_module or flags[0]
                        is_dataset = is_dataset or flags[1]
        flags = (is_module, is_dataset)
        if not seen:
            self._flags[class_id] = flags
        return flags

    def mro(self, class_id: str) -> list[str]:
        """The class and its project bases, depth-first, left to right (close enough to C3 here)."""
        cached = self._mro.get(class_id)
        if cached is None:
            cached = self._mro[class_id] = self._compute_mro(class_id)
        return cached

    def _compute_mro(self, class_id: str) -> list[str]:
        order: list[str] = []
        pending = [class_id]
        while pending and len(order) < 64:
            current = pending.pop(0)
            if current in order or current not in self.classes:
                continue
            order.append(current)
            bases = [self.resolve(b) for b in self.classes[current][0]]
            pending[:0] = [b for b in bases if b is not None]
        return order

    def overrides(self, class_id: str, name: str) -> list[str]:
        """``name`` as defined by the project's subclasses of ``class_id`` (``self.m()`` in a base
        class runs a subclass's ``m`` when self is one)."""
        return sorted(f"{child}.{name}" for child in self._descendants(class_id) if f"{child}.{name}" in self.functions)

    def _descendants(self, class_id: str) -> list[str]:
        """The project's subclasses of ``class_id``, at any depth."""
        if self._children is None:
            self._children = {}
            for child in self.classes:
                for base in self.classes[child][0]:
                    parent = self.resolve(base)
                    if parent is not None and parent != child:
                        self._children.setdefault(parent, []).append(child)
        found, pending, seen = [], list(self._children.get(class_id, ())), set()
        while pending:
            child = pending.pop()
            if child in seen:
                continue
            seen.add(child)
            found.append(child)
            pending.extend(self._children.get(child, ()))
        return found

    def subclass_attr(self, class_id: str, name: str):
        """``self.<name>`` in a class that never sets it (a mixin: lavis' ``SharedQueueMixin`` reads
        ``self.queue_ptr``, which the models mixing it in register as a buffer): the tensor kind every
        project subclass that sets it stores, else None."""
        kinds = set()
        for child in self._descendants(class_id):
            attrs = self.attrs.get(child)
            if attrs and name in attrs:
                kinds.add(attrs[name])
        if not kinds or not kinds <= TENSORISH:
            return None
        return kinds.pop() if len(kinds) == 1 else TENSOR

    def applied_forward(self, qualname: str) -> str | None:
        """``Fn.apply`` of a project ``torch.autograd.Function``: its ``forward`` (called with ``ctx`` first,
        then the arguments of ``apply``), or None."""
        owner_name, _, attr = qualname.rpartition(".")
        if attr != "apply" or not owner_name:
            return None
        owner = self.resolve(owner_name)
        if owner is None or owner not in self.classes or not self.is_autograd_function(owner):
            return None
        return self.method(owner, "forward")

    def overrides_called(self, ref: tuple) -> list[str]:
        """For a method called on an instance (``("m", ...)``, ``("mod", ...)``), the overrides in the project's
        subclasses: the instance may be one of them."""
        if ref[0] not in ("m", "mod"):
            return []
        owner = self.resolve(ref[1])
        if owner is None:
            return []
        found: list[str] = []
        for name in ((ref[2],) if ref[0] == "m" else ("forward", "__call__")):
            found.extend(t for t in self.overrides(owner, name) if t not in found)
        return found

    def steps(self, ref: tuple) -> bool:
        """A call of ``ref`` runs a step function (of another file: a loop calling it is a training loop), the
        function it resolves to or, for a method called on an instance, an override in a project subclass."""
        target, _ = self.callee(ref)
        targets = ([target] if target is not None else []) + self.overrides_called(ref)
        return any(t in self.functions and STEPS in self.functions[t][5] for t in targets)

    def tensor_arguments(self, ref: tuple) -> tuple | None:
        """(positions, keywords) of a call's arguments that the callee's own code shows to be tensors; for a
        method, every override in the project's subclasses must say so too (espnet's ``ScorerInterface.
        init_state(self, x: Tensor)`` is ``init_state(self, batch_size: int)`` in a transducer decoder)."""
        target, bound = self.callee(ref)
        if target is None or target not in self.tensor_params:
            return None
        targets = [target]
        targets.extend(t for t in self.overrides_called(ref) if t not in targets)
        found = None
        for function_id in targets:
            record = self.functions.get(function_id)
            if record is None:
                continue
            params = self.tensor_params.get(function_id, ())
            positional, keyword_only = record[0], record[1]
            names = positional[1:] if bound and (record[4] or bound == CTX) else positional
            positions = {i for i, name in enumerate(names) if name in params}
            keywords = {name for name in list(names) + list(keyword_only) if name in params}
            found = (positions, keywords) if found is None else (found[0] & positions, found[1] & keywords)
        if not found or not (found[0] or found[1]):
            return None
        return tuple(sorted(found[0])), tuple(sorted(found[1]))

    def external_bases(self, class_id: str) -> list[str]:
        """Qualified names of the bases outside the project, through the class's project bases."""
        return sorted({base for owner in self.mro(class_id) for base in self.classes[owner][0]
                       if self.resolve(base) is None})

    def is_tensor_type(self, class_id: str) -> bool:
        """A tensor subclass (``class TimeTensor(TensorType[...])``, ``class Scaled(torch.Tensor)``): its
        comparisons compare tensor data."""
        return any(self.type_kinds.get(owner) in TENSORISH for owner in self.mro(class_id)) \
            or not ops.TENSOR_ANNOTATIONS.isdisjoint(self.external_bases(class_id))

    def is_autograd_function(self, class_id: str) -> bool:
        """A subclass of ``torch.autograd.Function`` (through project bases)."""
        return any(not ops.AUTOGRAD_FUNCTION_BASES.isdisjoint(self.classes[owner][0]) for owner in self.mro(class_id))

    def method(self, class_id: str, name: str) -> str | None:
        for owner in self.mro(class_id):
            candidate = f"{owner}.{name}"
            if candidate in self.functions:
                return candidate
        return None

    def attr(self, class_id: str, name: str):
        for owner in self.mro(class_id):
            attrs = self.attrs.get(owner)
            if attrs and name in attrs:
                return attrs[name]
        return None

    # ---------------------------------------------------------------- calls
    def callee(self, ref: tuple) -> tuple[str | None, bool]:
        """(function id, bound) for a callee reference; bound: the first parameter is the
        receiver, not an argument."""
        cached = self._callees.get(ref)
        if cached is None:
            cached = self._callees[ref] = self._callee(ref)
        return cached

    def _callee(self, ref: tuple) -> tuple[str | None, bool]:
        tag = ref[0]
        if tag == "q":
            target = self.resolve(ref[1])
            if target is None:
                applied = self.applied_forward(ref[1])
                return (applied, CTX) if applied else (None, False)
            if target in self.classes:
                return self.method(target, "__init__"), True
            record = self.functions.get(target)
            return target, bool(record and record[4] and _is_method_id(target, self))
        if tag == "m":
            owner = self.resolve(ref[1])
            return (self.method(owner, ref[2]) if owner else None), True
        if tag == "mod":
            owner = self.resolve(ref[1])
            if owner is None:
                return None, True
            return self.method(owner, "forward") or self.method(owner, "__call__"), True
        if tag == "n":
            candidates = self.methods_named(ref[1])
            return (candidates[0] if len(candidates) == 1 else None), True
        return None, False

    def _solved_params(self) -> dict[tuple, tuple]:
        """What the calls pass to each parameter (solved once; empty when the run has no callers' facts)."""
        if not self.callers:
            return {}
        if self._params_solved is None:
            self._params_solved = self._solve_params()
        return self._params_solved

    def _solve_params(self) -> dict[tuple, tuple]:
        contributions: dict[tuple[str, str], list] = {}
        for facts in self.files:
            for _caller, ref, args, keywords, star, _context in facts.calls:
                if star == REFERENCE:
                    continue
                target, bound = self.callee(ref)
                if target:
                    self._contribute(contributions, target, bound, args, keywords)
                if ref[0] == "m":
                    # `self.compute_distance(x_features, ...)` in a base class passes its arguments to whichever
                    # override runs (piq's StyleLoss.compute_distance gets ContentLoss.forward's feature lists):
                    # kept apart, to test an override's annotations (``("passed", ...)``)
                    for override in self.overrides_called(ref):
                        self._contribute(contributions, override, bound, args, keywords, OVERRIDE)
        for key in [k for k in contributions if len(k) == 3]:
            contributions[key] = contributions.get(key[:2], []) + contributions[key]  # every call, override or not
        return {key: joined for key, values in contributions.items()
                if (joined := join_contributions(values)) is not None}

    def _contribute(self, contributions: dict, target: str, bound, args, keywords, tag: str = "") -> None:
        """What one call passes to each parameter of ``target`` (keyed ``(target, name)``, or ``(target, name,
        tag)`` for calls that reach it as an override)."""
        record = self.functions.get(target)
        if record is None:
            return
        positional, keyword_only, has_varargs, has_varkw, _bound, _flags = record
        names = positional[1:] if bound and (record[4] or bound == CTX) else positional
        passed = list(zip(names, args))
        passed += [(name, value) for name, value in keywords.items() if name in names or name in keyword_only]
        given = {name for name, _ in passed}
        # omitted: the default (a plain value), or hidden in *args/**kwargs: not a tensor this walk knows of
        passed += [(name, (None, False)) for name in list(names[len(args):]) + list(keyword_only) if name not in given]
        for name, value in passed:
            contributions.setdefault((target, name, tag) if tag else (target, name), []).append(value)


def _is_method_id(function_id: str, table: ProjectFacts) -> bool:
    owner = function_id.rpartition(".")[0]
    return owner in table.classes


def is_module_base(qualname: str) -> bool:
    """A base class (qualified name, torch or third-party) that makes a class an nn.Module."""
    if qualname in ops.MODULE_BASE_QUALNAMES:
        return True
    # torch.nn classes: Linear, Module... and the private bases _Loss, _WeightedLoss, _ConvNd, _BatchNorm
    if qualname.startswith("torch.nn.") and qualname.rsplit(".", 1)[-1].lstrip("_")[:1].isupper() \
            and qualname not in ops.DATASET_BASE_QUALNAMES and not qualname.startswith("torch.nn.parameter."):
        return True
    return qualname.endswith(ops.MODULE_BASE_SUFFIXES)


EMPTY = ProjectFacts()


class Consumed:
    """The questions one walk asked of a table, with the answers it got."""

    __slots__ = ("table", "answers")

    def __init__(self, table: ProjectFacts):
        self.table = table
        self.answers: dict[tuple, object] = {}

    def ask(self, key: tuple):
        answers = self.answers
        if key in answers:
            return answers[key]
        value = answers[key] = self.table.answer(key)
        return value


def still_valid(answers, table: ProjectFacts) -> bool:
    """Whether every recorded question (``answers``: a dict, question -> answer, or its
    ``items()``) gets the same answer from ``table``."""
    if not isinstance(answers, dict):
        answers = getattr(answers, "mapping", None) or dict(answers)
    # mostly the questions were asked of this table already: compared in C, all at once
    if answers.items() <= table._answers.items():
        return True
    # else question by question, computing answers only until one differs
    return all(table.answer(key) == value for key, value in answers.items())
