"""Rule units: one module per rule, each owning its check and its fix.

A unit declares its rule with ``rule(...)`` (code, name, one-line summary, the
*scope* it applies in, and its fix builder) and subscribes handlers to the
events the analysis walker emits while it walks a file:

* ``subscript(a, node)`` — a subscript read (also ``x[i] += v``);
* ``subscript_store(a, node)`` — a subscript assigned to (``x[i] = v``);
* ``call(a, node, qual, method, receiver)`` — a call; ``qual`` is the qualified
  name of the callee when it resolves to an import (``torch.nonzero``), else
  None; ``method`` the attribute name of a method call on a value (``x.item()``)
  with ``receiver`` the kind of that value.  A subscription can name the
  qualified functions, methods or keywords it is about, so the walker only
  calls handlers that can fire;
* ``branch(a, test, body)`` — the test of an ``if``/``while`` (``body`` is the
  statement list) or of a conditional expression (``body`` None);
* ``loop(a, iterable)`` — what a ``for`` loop or comprehension iterates;
* ``format(a, value)`` — a value formatted as text by an f-string (``f"{loss:.3f}"``) or by
  ``%`` on a string (``"%.5f" % loss``).
* ``repeat(a, count)`` — the count a list or tuple display is repeated by (``[x] * n``, ``n * (x,)``).

``a`` is the walker (``dynlint.analysis.walker.Analyzer``): it answers kind
questions (``a.kind``, ``a.value_kind``) and takes reports (``a.report``).
The registry is the catalogue of rules (``dynlint.codes`` reads it).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import Enum
from typing import Callable


class Scope(str, Enum):
    """Where a rule's hazard matters."""

    #: code that runs on the device: the compiled step and the training step.  In code that
    #: only ever runs on the host (datasets, collate functions, metrics, export) these
    #: findings are real but harmless to the graph: reported only with --include-host.
    DEVICE = "device"
    #: only the compiled step: what breaks the graph under torch.compile but costs nothing when the
    #: code runs eagerly (numpy on the host); never reported elsewhere, not even with --include-host
    COMPILED = "compiled"
    #: the compiled step and the training step: graphs traced per step, where what specializes on
    #: sizes (branches, unrolled loops) costs compiles; not reported in code no step is known to run
    STEP = "step"
    #: the input pipeline and compile settings: reported wherever they are
    ANYWHERE = "anywhere"


@dataclass
class Rule:
    code: str
    name: str
    summary: str
    scope: Scope
    #: fix builder: (node, ancestors, ctx) -> Fix | None, or the name of one in ``dynlint.fixes`` (imported
    #: when a finding is first fixed: a warm-cache check never imports the fix machinery)
    fix: Callable | str | None = None
    module: str = ""                     # the unit that declared it
    #: reported only when selected by name or prefix (``extend-select = ["DYN204"]``): rules whose
    #: findings are too often harmless for a default report (ruff's and flake8-bugbear's opt-in rules)
    opt_in: bool = False
    #: the rule whose handlers report this one too (DYN204 by DYN201's: one judgement split in two);
    #: such a rule subscribes to no event itself
    reported_by: str | None = None
    handlers: dict[str, list] = field(default_factory=dict)

    def fix_builder(self) -> Callable | None:
        """The fix builder, ``dynlint.fixes``' function when ``fix`` names one."""
        if isinstance(self.fix, str):
            from dynlint import fixes

            return getattr(fixes, self.fix)
        return self.fix

    def on_subscript(self, function):
        self._add("subscript", (function, None))
        return function

    def on_subscript_store(self, function):
        """``x[i] = v``: the target of an assignment (``x[mask] = 0`` is static; slices are not)."""
        self._add("subscript_store", (function, None))
        return function

    def on_branch(self, function):
        self._add("branch", (function, None))
        return function

    def on_loop(self, function):
        self._add("loop", (function, None))
        return function

    def on_format(self, function):
        """A value formatted as text: an f-string field or the operand of ``"..." % value``."""
        self._add("format", (function, None))
        return function

    def on_repeat(self, function):
        """The count of a repeated list or tuple display: ``[x] * n`` (``n`` is read as an int)."""
        self._add("repeat", (function, None))
        return function

    def on_call(self, *, functions=None, methods=None, keywords=None, setting: str | None = None,
                prefixes=None, any_receiver: bool = False):
        """Subscribe to calls of these qualified ``functions`` (or names starting with one of these
        ``prefixes``), these ``methods`` (on a value not known to be a non-tensor, or on any value
        with ``any_receiver``), calls passing one of these ``keywords``, and calls of the qualified
        names a ``setting`` lists (e.g. ``extend_dynamic_ops``)."""
        def decorate(function):
            self._add("call", (function, (frozenset(functions or ()), frozenset(methods or ()),
                                          frozenset(keywords or ()), setting, tuple(prefixes or ()), any_receiver)))
            return function
        return decorate

    def _add(self, event: str, handler) -> None:
        self.handlers.setdefault(event, []).append(handler)


REGISTRY: dict[str, Rule] = {}


def rule(code: str, name: str, summary: str, *, scope: Scope, fix: Callable | str | None = None,
         opt_in: bool = False, reported_by: str | None = None) -> Rule:
    if code in REGISTRY:
        raise ValueError(f"rule {code} declared twice")
    import sys

    caller = sys._getframe(1).f_globals.get("__name__", "")
    REGISTRY[code] = declared = Rule(code, name, summary, scope, fix, caller, opt_in=opt_in,
                                     reported_by=reported_by)
    return declared


# The units, in code order (importing one registers its rule).
UNITS = (
    "dyn101_mask_index", "dyn102_nonzero", "dyn103_unique", "dyn104_masked_select", "dyn105_dynamic_output",
    "dyn201_size_branch", "dyn202_data_branch", "dyn203_size_loop", "dyn204_unknown_size_branch",
    "dyn205_unknown_size_loop", "dyn301_host_sync", "dyn302_data_size",
    "dyn303_numpy",
    "dyn401_dataloader", "dyn402_pad_to_longest", "dyn501_compile_dynamic",
)


def load_all() -> dict[str, Rule]:
    import importlib

    for unit in UNITS:
        importlib.import_module(f"{__name__}.{unit}")
    return REGISTRY


class Dispatch:
    """The handlers of the enabled rules, indexed by event (and for calls by callee), built
    once per analysis."""

    __slots__ = ("subscript", "subscript_store", "branch", "loop", "format", "repeat", "by_function", "by_method",
                 "by_keyword", "by_prefix", "any_receiver")

    def __init__(self, rules, settings: dict[str, tuple[str, ...]] | None = None):
        """``settings``: setting name -> the qualified names it lists (see ``Rule.on_call``)."""
        self.subscript, self.subscript_store, self.branch, self.loop, self.format = [], [], [], [], []
        self.repeat: list = []
        self.by_function: dict[str, list] = {}
        self.by_method: dict[str, list] = {}
        self.by_keyword: dict[str, list] = {}
        self.by_prefix: list[tuple[str, object]] = []
        self.any_receiver: set = set()   # method handlers that also see receivers known not to be tensors
        settings = settings or {}
        for declared in rules:
            for event, handlers in declared.handlers.items():
                for function, filters in handlers:
                    if event != "call":
                        getattr(self, event).append(function)
                        continue
                    functions, methods, keywords, setting, prefixes, any_receiver = filters
                    self.by_prefix.extend((prefix, function) for prefix in prefixes)
                    if any_receiver:
                        self.any_receiver.add(function)
                    if setting is not None:
                        functions = functions | frozenset(settings.get(setting, ()))
                    for name in functions:
                        self.by_function.setdefault(name, []).append(function)
                    for name in methods:
                        self.by_method.setdefault(name, []).append(function)
                    for name in keywords:
                        self.by_keyword.setdefault(name, []).append(function)
