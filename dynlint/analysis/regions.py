"""Where code runs: the region of every function, from the project's call graph.

* ``compiled`` — the compiled step: reachable from an ``nn.Module``'s ``forward``
  or from a function compiled with ``torch.compile`` (decorated, passed to it,
  to ``checkpoint``/``vmap``), losses and helpers they call included;
* ``training`` — the training step: the body of a loop that calls
  ``backward()`` or steps an optimizer, what it calls (a host sync there stalls
  Gaudi/XLA lazy mode each step), and framework step methods
  (``training_step``/``validation_step``...);
* ``host`` — only ever runs on the host, eagerly: Dataset ``__getitem__``/``__iter__``,
  ``collate_fn``/``worker_init_fn`` callbacks, ``nn.Module`` construction
  (``__init__``, weight initialisation), ``@torch.compiler.disable``
  functions, GPU kernels, code under ``if not torch.compiler.is_compiling():``
  and the like, code that runs a model from outside its forward (inference
  pipelines, predictors, evaluation loops: a call of an ``nn.Module`` instance,
  or of a value named ``model``/``net``/``unet``...), code that moves tensors
  to the CPU on purpose (``.cpu()``, ``.numpy()`` outside an ``nn.Module``:
  metrics, plots, export), code in modules whose path says host code (tests,
  ``metrics``, ``data``/``datasets``, ``visualization``, ``export``...), and
  anything reachable only from them;
* ``unknown`` — nothing in this run reaches it (a library checked alone).

A function reachable from several kinds of roots takes the first region of that
list.  Statements can override their function's region: inside a training loop
a statement is ``training``; under an eager-only guard it is ``host``.
"""

from __future__ import annotations

from collections import deque

from dynlint import ops
from dynlint.analysis.facts import HOST, ROOT_COMPILED, ROOT_DRIVER, ROOT_HOST, ROOT_TRAIN, TRAIN, ProjectFacts

COMPILED = "compiled"
TRAINING = "training"
HOST_REGION = "host"
UNKNOWN = "unknown"
REGIONS = (COMPILED, TRAINING, HOST_REGION, UNKNOWN)

#: how each region reads in the full output
LABELS = {
    COMPILED: "compiled step",
    TRAINING: "training step",
    HOST_REGION: "host only",
    UNKNOWN: "unknown (not reached from a forward, a compiled function or a training loop in this run)",
}


def function_regions(table: ProjectFacts) -> dict[str, str]:
    """Region of every function the table knows (absent: unknown)."""
    edges: dict[str, list[tuple[str, str]]] = {}
    compiled: set[str] = set()
    training: set[str] = set()
    host: set[str] = set()
    for facts in table.files:
        for caller, ref, _args, _keywords, _star, context in facts.calls:
            for target in _targets(table, ref):
                edges.setdefault(caller, []).append((target, context))
                if context == TRAIN:
                    training.add(target)
        for root, ref in facts.roots:
            target, _ = table.callee(ref) if ref[0] != "q" or ref[1] not in table.classes else (None, False)
            if target is None and ref[0] == "q" and ref[1] in table.functions:
                target = ref[1]
            if target is None:
                continue
            {ROOT_COMPILED: compiled, ROOT_TRAIN: training, ROOT_HOST: host, ROOT_DRIVER: host}[root].add(target)
    disabled: set[str] = set()
    for function_id, record in table.functions.items():
        flags = record[5]
        if "disabled" in flags or "kernel" in flags:
            disabled.add(function_id)
            host.add(function_id)
        owner, _, name = function_id.rpartition(".")
        if owner in table.classes:
            class_flags = table.class_flags(owner)
            if class_flags and class_flags[0]:
                if name in ("forward", "__call__"):
                    compiled.add(function_id)
                elif name in ops.CONSTRUCTION_METHODS:
                    host.add(function_id)
    for function_id in table.functions:
        if _host_module(function_id):
            host.add(function_id)
    regions: dict[str, str] = {}
    # host last: a function also reached from compiled or training code runs there too
    for region, roots in ((COMPILED, compiled), (TRAINING, training), (HOST_REGION, host)):
        pending = deque(f for f in roots if f not in regions)
        for function_id in pending:
            regions[function_id] = region
        while pending:
            current = pending.popleft()
            if current in disabled and region != HOST_REGION:
                continue  # runs eagerly: what it calls is not compiled through it
            for target, context in edges.get(current, ()):
                if context == HOST and region != HOST_REGION:
                    continue  # called only from eager-only code
                if target not in regions:
                    regions[target] = region
                    pending.append(target)
    return regions


def _host_module(function_id: str) -> bool:
    """In a module whose path says host code (``tests``, ``metrics``, ``data``, ``visualization``...,
    or a ``test_*.py`` file)."""
    parts = function_id.split(".")
    return any(part in ops.HOST_MODULE_PARTS or part.startswith("test_") or part.endswith("_test")
               for part in parts[:-1])


def _targets(table: ProjectFacts, ref: tuple) -> list[str]:
    """What a call may run: the function it resolves to and, for a method called on an
    instance, the overrides in the project's subclasses (the instance may be one)."""
    target, _ = table.callee(ref)
    targets = [target] if target is not None else []
    if ref[0] in ("m", "mod"):
        owner = table.resolve(ref[1])
        if owner is not None:
            names = (ref[2],) if ref[0] == "m" else ("forward", "__call__")
            for name in names:
                targets.extend(t for t in table.overrides(owner, name) if t not in targets)
    return targets


def region_of(function_id: str, context: str | None, regions: dict[str, str]) -> str:
    """The region of a statement in ``function_id`` standing in ``context`` (TRAIN/HOST/None).

    Nested functions and lambdas run where their enclosing function runs unless the call
    graph places them themselves."""
    if context == HOST:
        return HOST_REGION
    current = function_id
    while True:
        region = regions.get(current)
        if region is not None:
            break
        owner, _, _ = current.rpartition(".")
        if not owner:
            region = UNKNOWN
            break
        current = owner
    if context == TRAIN and region in (UNKNOWN, HOST_REGION):
        return TRAINING
    return region
