"""Where code runs: the region of every function, from the project's call graph.

* ``compiled`` — the compiled step: reachable from an ``nn.Module``'s ``forward``
  or from a function compiled with ``torch.compile`` (decorated, passed to it,
  to ``checkpoint``/``vmap``), losses and helpers they call included, the
  ``forward`` and ``backward`` of a custom ``torch.autograd.Function`` applied
  there (``Fn.apply(x)``), and
  callables given to an ``nn.Module``'s constructor (its forward runs them);
* ``training`` — the training step: the body of a loop that itself calls
  ``backward()`` or steps an optimizer (MMEngine's ``update_params`` does both;
  not an epoch loop around it, nor a loop in a test suite; a ``while True: try:`` retry
  or a loop over optimizers, micro-batches or accumulation steps inside it hides nothing),
  or calls a step function of its file (by name, or as ``self.<method>`` of its class:
  Composer's ``_train_batch``) or of another file (through a subclass's override: rl-games'
  ``train_actor_critic``), a step function (one that does so itself outside any loop
  of its own, or calls another step function so; none in a test suite, nor in a ``benchmarks``/
  ``analysis`` module: ``ops.CHECKING_MODULE_PARTS``), the generator a training loop iterates
  (``self._iter_dataloader()``), what they call (a host sync
  there stalls Gaudi/XLA lazy mode each step) except plotting and evaluation modules and
  functions named for an evaluation run (``_run_evaluators``, ``validate``: every so many steps),
  Lightning's ``training_step`` and the per-step hooks its fit loop calls inside the step
  (``on_after_backward``, ``on_train_batch_end``..., of a callback too), a Hugging Face Trainer's
  ``compute_loss`` and ``_prepare_inputs``;
* ``host`` — only ever runs on the host, eagerly: every method of a Dataset,
  ``collate_fn``/``worker_init_fn`` callbacks, the ``forward`` of a trainer that is an ``nn.Module`` (it
  holds a training loop: the loop's body is still the training step), functions given to a project
  Dataset's constructor, DataLoader samplers and collator
  classes, the ``forward`` of ``nn.Module``s in data-pipeline and metrics modules (transforms) or named
  as post-processing (unless a model's forward calls it), ``nn.Module`` construction
  (``__init__``, weight initialisation), module methods that merge, fuse or load weights
  (``merge*``/``unmerge*``/``fuse*``, ``load_state_dict``) or pre-process inputs (``tokenize``,
  ``preprocess``), module-level ``@torch.no_grad()`` functions and such methods named for sampling or
  decoding (``ddim_sample``, ``p_sample``), ``@torch.compiler.disable``
  functions and custom operators' bodies (``@torch.library.custom_op``), GPU kernels, ``torch.fx`` graph
  passes, code under ``if not torch.compiler.is_compiling():`` or a debugging flag (``if debug:``)
  and the like, code that runs a model from outside its forward (a value named
  like a model: ``model``/``net``/``unet``/``*_model``...) and every method of a
  class (not an ``nn.Module``) that does, with its subclasses (pipelines,
  predictors, validators, trainers), Lightning's and MMEngine's evaluation steps, module
  evaluation methods (``test``, ``evaluate``, ``inference``, ``infer``), ``generate`` methods of any class
  (decoding loops) and hooks (``on_*``, ``*_epoch_end``),
  ``*Callback`` classes, ``fit`` methods, ``plot*``/``visualize*`` functions, code that moves tensors
  to the CPU on purpose (``.cpu()``, ``.numpy()`` of a tensor or an untyped value, in an ``nn.Module`` outside its
  ``forward``: metrics, plots, export), code in modules whose path says host code (tests,
  ``metrics``, ``data``/``datasets``, ``visualization``, ``export``...; in a ``transforms`` module,
  not the bijections of a normalizing flow: a distribution ``Transform``'s methods, an ``nn.Module``
  with an inverse), the
  top-level statements of a script (a module with an ``if __name__ ==
  "__main__":`` block) and a module-level ``main()``, and anything reachable only
  from them;
  An uncalled method whose name is called on values of unknown type only from host code outside the
  test suite (``model.compress(x)`` in an evaluation script) is host code too;
* ``unknown`` — nothing in this run reaches it (a library checked alone), or only
  an entry point nothing in this run calls and host code reach it.

A function reachable from several kinds of roots takes the first region of that
list: the host rules decide only for code nothing compiled or training reaches.
Statements can override their function's region: inside a training loop
a statement is ``training``; under an eager-only guard it is ``host``.
"""

from __future__ import annotations

from collections import deque

from dynlint import ops
from dynlint.analysis.facts import (
    CTX, FORWARD, HOST, NO_GRAD, ROOT_COMPILED, ROOT_DRIVER, ROOT_HOST, ROOT_TO_HOST, ROOT_TRAIN, TRAIN, TRAINS,
    ProjectFacts,
)

COMPILED = "compiled"
TRAINING = "training"
HOST_REGION = "host"
UNKNOWN = "unknown"
REGIONS = (COMPILED, TRAINING, HOST_REGION, UNKNOWN)
#: prefix of a key of ``function_regions``' result that places only a module's own top-level statements
TOP_LEVEL = "<top>."

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
    drivers: set[str] = set()
    sites: dict[str, list[tuple[str, str]]] = {}  # method name -> (caller, context) of calls on unknown receivers
    scripts: set[str] = set()
    for facts in table.files:
        for caller, ref, _args, _keywords, _star, context in facts.calls:
            if ref[0] == "u":
                sites.setdefault(ref[1], []).append((caller, context))
                continue
            for target in _targets(table, ref):
                edges.setdefault(caller, []).append((target, context))
                if context == TRAIN:
                    training.add(target)
                elif context == FORWARD:
                    compiled.add(target)
        for root, ref in facts.roots:
            target, _ = table.callee(ref) if ref[0] != "q" or ref[1] not in table.classes else (None, False)
            if target is None and ref[0] == "q" and ref[1] in table.functions:
                target = ref[1]
            if target is None and root == ROOT_HOST and ref[0] == "q" and ref[1] in table.namespaces:
                target = ref[1]  # a script's own statements (it has an `if __name__ == "__main__":` block)
                scripts.add(target)
            if target is None:
                continue
            if root == ROOT_DRIVER:
                drivers.add(target)
            {ROOT_COMPILED: compiled, ROOT_TRAIN: training, ROOT_HOST: host, ROOT_DRIVER: host,
             ROOT_TO_HOST: host}.get(root, host).add(target)
    driver_methods = set(_driver_class_methods(table, drivers))
    host.update(driver_methods)
    disabled: set[str] = set()
    occasional: set[str] = set()  # run from a training loop at a few chosen steps: plots, evaluation
    host_modules, plot_modules, transform_modules = _host_modules(table)
    module_of = _module_finder(table)
    flow_classes: dict[str, bool] = {}

    def flow_transform(function_id: str, module: str | None) -> bool:
        """A method of a flow's bijection in a module only its ``transforms`` name makes host code."""
        if module not in transform_modules:
            return False
        owner = _class_of(table, function_id)
        if owner is None:
            return False
        found = flow_classes.get(owner)
        if found is None:
            found = flow_classes[owner] = _flow_transform(table, owner)
        return found
    for function_id, record in table.functions.items():
        flags = record[5]
        if "disabled" in flags or "kernel" in flags:
            disabled.add(function_id)
            host.add(function_id)
        owner, _, name = function_id.rpartition(".")
        if NO_GRAD in flags:
            host.add(function_id)  # a module-level @torch.no_grad() function: sampling, decoding, evaluation
        if owner in table.classes and name in ops.GENERATE_METHODS:
            host.add(function_id)  # a decoding loop, in a module or not
        words_of_name = name.strip("_").split("_")
        if not ops.HOST_FUNCTION_WORDS.isdisjoint(words_of_name):
            host.add(function_id)  # export and debugging code: cif_v1_export, export_onnx, dump_gradients
            if not ops.SAVING_FUNCTION_WORDS.isdisjoint(words_of_name):
                # a training loop saves and exports at a few chosen steps (imagen's save_to_checkpoint_folder)
                occasional.add(function_id)
        if name.startswith(ops.HOST_FUNCTION_PREFIXES) or name in ops.REPR_METHODS:
            host.add(function_id)  # plot_losses, visualize_attention, __repr__, extra_repr
            occasional.add(function_id)
        if owner in table.classes and name in ops.IDENTITY_METHODS and not table.is_tensor_type(owner):
            host.add(function_id)  # escnn's basis `__eq__`: bases compared when they are cached
            occasional.add(function_id)
        words = ops.name_words(name)
        if not ops.EVALUATION_RUN_WORDS.isdisjoint(words) and ops.NOT_EVALUATION_RUN_WORDS.isdisjoint(words):
            # evaluation a training loop runs every so many steps (Composer's Trainer._run_evaluators and
            # _eval_loop): not part of the step, whatever else reaches it (not an `eval_loss` helper, nor a
            # `_train_val_step`)
            occasional.add(function_id)
        if owner in table.classes:
            class_flags = table.class_flags(owner)
            if owner.endswith(ops.INFERENCE_CLASS_SUFFIXES) and class_flags and not class_flags[0] \
                    and _plain_class(table, owner):
                host.add(function_id)  # a pipeline, predictor or decoding driver that is no nn.Module
            if class_flags and class_flags[0]:
                if name in ("forward", "__call__"):
                    if NO_GRAD in flags:
                        pass  # an inference wrapper's no-grad forward (walker): host, above
                    elif TRAINS in flags:
                        # a trainer that is an nn.Module (lucidrains' trainers): its forward runs the training
                        # loop, whose body is the training step (statement context); the rest runs on the host
                        host.add(function_id)
                    elif (_host_forward_module(module_of(function_id))
                          and not flow_transform(function_id, module_of(function_id))) \
                            or owner.endswith(ops.POSTPROCESS_MODULE_SUFFIXES):
                        # a transform or a metric that is an nn.Module (torchvision v2's, nequip's data
                        # transforms), a DETR's PostProcess: run outside the step, unless a model's forward
                        # calls them
                        host.add(function_id)
                    else:
                        compiled.add(function_id)
                elif name in ops.CONSTRUCTION_METHODS or name in ops.EVAL_METHODS \
                        or name in ops.INFERENCE_METHODS or name in ops.WEIGHT_EDIT_METHODS \
                        or name.startswith(ops.HOOK_PREFIXES) or name.endswith(ops.HOOK_SUFFIXES) \
                        or name.startswith(ops.WEIGHT_EDIT_PREFIXES):
                    # construction, evaluation and inference entry points, weight merging and
                    # loading, framework hooks (a forward that calls one makes it compiled first)
                    host.add(function_id)
            if name in ops.FIT_METHODS:
                host.add(function_id)  # an encoder or normalizer fitted on data
    # a script's `main()`; its training loops still make a training step (statement context)
    for module in table.namespaces:
        main = f"{module}.main"
        if main in table.functions:
            host.add(main)
    driver_methods.update(_entry_class_methods(table))
    if host_modules:
        for function_id in table.functions:
            module = module_of(function_id)
            if module in host_modules and not flow_transform(function_id, module):
                host.add(function_id)
                if module in plot_modules:
                    # plots made from a training loop are made at a few chosen steps, not as part of the step
                    occasional.add(function_id)
    entries = _uncalled_entries(table, edges, compiled | training | host)
    regions = _propagate(edges, compiled, training, host, entries, occasional, disabled, driver_methods)
    # a method nothing calls through a known receiver, whose name is called (on receivers of unknown type) only
    # from host code outside the test suite: an entry point of that host code (compressai's `compress`, called
    # as `model.compress(x)` by its evaluation script), host too
    candidates = _host_called_entries(table, entries, regions, sites, module_of, scripts, hopeful=True)
    while candidates:
        trial = _propagate(edges, compiled, training, host | candidates, [f for f in entries if f not in candidates],
                           occasional, disabled, driver_methods)
        kept = _host_called_entries(table, candidates, trial, sites, module_of, scripts)
        if kept == candidates:
            regions = trial
            break
        candidates = kept
    # the top-level statements of a module whose path says host code (a sphinx-gallery demo in `examples/`,
    # a benchmark or a tool without a `__main__` block) are host code, as its functions are; only they are:
    # what they call keeps the region the rest of the run gives it (a library's functional a demo calls may
    # run in a user's step); a training loop among them is still the training step (statement context)
    for module in host_modules | _host_directory_modules(table):
        if module not in regions:
            regions[TOP_LEVEL + module] = HOST_REGION
    return regions


def _host_called_entries(table: ProjectFacts, entries, regions: dict[str, str],
                         sites: dict[str, list[tuple[str, str]]], module_of, scripts: set[str],
                         hopeful: bool = False) -> set[str]:
    """The uncalled methods whose name is called on receivers of unknown type, at least once in host code and
    every time in host code of a module outside the test suite (a call in a test keeps the method where it
    was) or in a script's function nothing calls by name (compressai's ``examples/codec.py`` picks
    ``encode_image`` from a dict), as ``regions`` place them (``compress`` calling
    ``self.entropy_bottleneck.compress`` is host code once the outer ``compress`` is).  ``hopeful``: a call
    in code of unknown region may turn out host once these methods are."""
    found = set()
    for function_id in entries:
        owner, _, name = function_id.rpartition(".")
        calls = sites.get(name)
        if not calls or owner not in table.classes:
            continue
        host_calls = 0
        for caller, context in calls:
            region = region_of(caller, context, regions)
            module = module_of(caller)
            if region == HOST_REGION and not ops.is_test_module(module or caller):
                host_calls += 1
            elif not (region == UNKNOWN and (hopeful or module in scripts)):
                break
        else:
            if host_calls:
                found.add(function_id)
    return found


def _propagate(edges, compiled, training, host, entries, occasional, disabled, driver_methods) -> dict[str, str]:
    regions: dict[str, str] = {}
    # host last: a function also reached from compiled or training code runs there too, and so may one
    # also reached from an entry point nothing in this run calls (odeint: a user's forward calls it)
    for region, roots in ((COMPILED, compiled), (TRAINING, training), (UNKNOWN, entries), (HOST_REGION, host)):
        barrier = occasional if region == TRAINING else ()
        pending = deque(f for f in roots if f not in regions and f not in barrier)
        for function_id in pending:
            regions[function_id] = region
        while pending:
            current = pending.popleft()
            if current in disabled and region != HOST_REGION:
                continue  # runs eagerly: what it calls is not compiled through it
            for target, context in edges.get(current, ()):
                if context == HOST and region != HOST_REGION:
                    continue  # called only from eager-only code
                if region == COMPILED and target in driver_methods and target not in compiled:
                    continue  # a pipeline a module's forward calls (a serving wrapper) still runs eagerly
                if region == UNKNOWN and target in host:
                    continue  # host code by its own rule, whoever calls it
                if target not in regions and target not in barrier:
                    regions[target] = region
                    pending.append(target)
    return regions


def _uncalled_entries(table: ProjectFacts, edges: dict[str, list[tuple[str, str]]], rooted: set[str]) -> list[str]:
    """The functions and methods nothing in this run calls and no region rule places: a library's
    entry points (``torchdiffeq.odeint``), or code reached in ways the call graph does not see.  What
    they reach may run anywhere, so it is ``unknown`` rather than host, even when host code reaches it
    too.  Nested functions are left out: they run where the function around them runs."""
    called = {target for calls in edges.values() for target, _ in calls}
    functions = table.functions
    return [function_id for function_id in functions
            if function_id not in called and function_id not in rooted
            and function_id.rpartition(".")[0] not in functions]


def _plain_class(table: ProjectFacts, class_id: str) -> bool:
    """Every base of the class, through its project bases, is a project class or a plain Python base
    (``object``, ``ABC``, ``Generic``...): no base this run cannot see may make it an nn.Module."""
    for owner in table.mro(class_id):
        for base in table.classes[owner][0]:
            if table.resolve(base) is None and base.rpartition(".")[2] not in ops.PLAIN_BASES:
                return False
    return True


def _driver_class_methods(table: ProjectFacts, drivers: set[str]) -> list[str]:
    """Every method of a class (not an nn.Module) one of whose methods runs a model from outside its
    forward, and of the project's subclasses of such a class: a pipeline, predictor, validator or
    trainer object; its other methods (pre/post-processing, result decoding) run on the host too."""
    driver_classes = set()
    for function_id in drivers:
        owner = function_id.rpartition(".")[0]
        if owner in table.classes and not (table.class_flags(owner) or (False,))[0]:
            driver_classes.add(owner)
    if not driver_classes:
        return []
    roots = {module.split(".", 1)[0] for module in table.namespaces}

    def known(class_id: str) -> bool:
        """Its project bases all resolve: it is no nn.Module through a base this run cannot see."""
        return all(table.resolve(base) is not None or base.split(".", 1)[0] not in roots
                   for owner in table.mro(class_id) for base in table.classes[owner][0])
    methods: dict[str, list[str]] = {}
    for function_id in table.functions:
        owner = function_id.rpartition(".")[0]
        if owner in table.classes:
            methods.setdefault(owner, []).append(function_id)
    found = []
    for class_id in table.classes:
        if class_id in methods and not (table.class_flags(class_id) or (False,))[0] \
                and any(base in driver_classes for base in table.mro(class_id)) and known(class_id):
            found.extend(methods[class_id])
    return found


def _entry_class_methods(table: ProjectFacts) -> list[str]:
    """Methods of the classes (no nn.Module) defined in command-line and inference-pipeline modules
    (``ops.ENTRY_MODULE_WORDS``: ``espnet2/bin/tts_inference.py``'s ``Text2Speech``)."""
    found = []
    for function_id in table.functions:
        owner, _, _ = function_id.rpartition(".")
        if owner not in table.classes or (table.class_flags(owner) or (False,))[0]:
            continue
        module = owner.rpartition(".")[0]
        if module in table.namespaces and any(_entry_part(part) for part in module.split(".")):
            found.append(function_id)
    return found


def _entry_part(part: str) -> bool:
    """A part of a module's name that says command-line programs or inference pipelines (``bin``,
    ``tts_inference``), not a kind of parallelism (``pipeline_parallel``)."""
    if part in ops.ENTRY_MODULE_WORDS:
        return True
    words = part.strip("_").split("_")
    return not ops.ENTRY_MODULE_WORDS.isdisjoint(words) and ops.PARALLELISM_WORDS.isdisjoint(words)


def _host_modules(table: ProjectFacts) -> tuple[set[str], set[str], set[str]]:
    """The run's modules whose path says host code, the plotting ones among them, and those only a
    ``transforms`` part or word says it of (a flow's transforms live there too; a ``transform`` part too,
    which says host code of an ``nn.Module``'s forward only).  A path part
    says it when it is one of ``ops.HOST_MODULE_PARTS`` (``tests``, ``metrics``, ``data``...), a
    ``test_*``/``*_test`` file, or one of its ``_``-separated words is one of ``ops.HOST_MODULE_WORDS``
    (``export_utils``, ``modular_pipelines``, ``metric_stats``, ``tu_dataset``)."""
    host, plots, transforms = set(), set(), set()
    for module in table.namespaces:
        parts = module.split(".")
        other = False
        for index, part in enumerate(parts):
            words = part.strip("_").split("_")
            # the words of a package's own name say what the package is about, not which of its modules are
            # host code (``pytorch_metric_learning``: its losses and miners run in the step)
            worded = len(words) > 1 and (index > 0 or len(parts) == 1)
            if _says_host(part, words, worded):
                host.add(module)
                if part in ops.PLOT_MODULE_PARTS or not ops.PLOT_MODULE_PARTS.isdisjoint(words):
                    plots.add(module)
                if part not in ops.TRANSFORM_MODULE_PARTS and (
                        not worded or not (ops.HOST_MODULE_WORDS - ops.TRANSFORM_MODULE_PARTS).isdisjoint(words)):
                    other = True
        if (module in host and not other) or (module not in host and not ops.TRANSFORM_MODULE_PARTS.isdisjoint(parts)):
            transforms.add(module)
    return host, plots, transforms


def _host_directory_modules(table: ProjectFacts) -> set[str]:
    """The run's modules outside every package (their module name is their file's stem) in a directory whose
    name says host code as ``_host_modules`` reads it (``examples/``, ``scripts/``, ``benchmarks/``,
    ``tests/``), as the run's root sees their path: deepinv's sphinx-gallery demos,
    ``examples/basics/demo_custom_optim.py``."""
    found = set()
    for relpath, module in table.module_of.items():
        if "." in module or not relpath.endswith(".py"):
            continue  # a package's module (``_host_modules`` reads its name), or a notebook (its cells keep theirs)
        for part in relpath.replace("\\", "/").split("/")[:-1]:
            words = part.strip("_").split("_")
            if _says_host(part, words, len(words) > 1):
                found.add(module)
                break
    return found


def _says_host(part: str, words: list[str], worded: bool) -> bool:
    """A part of a module's dotted name or of its path says host code (see ``_host_modules``); ``words``:
    its ``_``-separated words, read only when ``worded``."""
    return part in ops.HOST_MODULE_PARTS or ops.is_test_module_part(part) \
        or (worded and not ops.HOST_MODULE_WORDS.isdisjoint(words) and ops.PARALLELISM_WORDS.isdisjoint(words))


def _flow_transform(table: ProjectFacts, class_id: str) -> bool:
    """A bijection of a normalizing flow: a subclass of torch's (or pyro's) distribution ``Transform``
    (zuko's, pyro's), or an ``nn.Module`` with an inverse (nflows' ``Tanh``, its spline transforms).
    Its methods compute a model's log-likelihood in the step, though its module is named ``transforms``
    like a data pipeline's."""
    for owner in table.mro(class_id):
        for base in table.classes[owner][0]:
            if base.startswith(ops.FLOW_TRANSFORM_BASE_PREFIXES) and base.endswith(ops.FLOW_TRANSFORM_BASE_SUFFIXES):
                return True
    flags = table.class_flags(class_id)
    return bool(flags and flags[0]) and any(table.method(class_id, name) for name in ops.FLOW_TRANSFORM_METHODS)


def _class_of(table: ProjectFacts, function_id: str) -> str | None:
    """The class a method (or a function nested in one) belongs to."""
    owner = function_id.rpartition(".")[0]
    while owner and owner not in table.classes:
        if owner in table.namespaces:
            return None
        owner = owner.rpartition(".")[0]
    return owner or None


def _host_forward_module(module: str | None) -> bool:
    """A module whose path says the data pipeline or metrics: ``transforms``, ``data``, ``metrics``..."""
    return module is not None and not ops.HOST_FORWARD_MODULE_PARTS.isdisjoint(module.split("."))


def _module_finder(table: ProjectFacts):
    """function id -> the run's module that defines it (the longest dotted prefix that is one)."""
    modules = table.namespaces
    cache: dict[str, str | None] = {}

    def module_of(function_id: str) -> str | None:
        owner = function_id.rpartition(".")[0]
        found = cache.get(owner, False)
        if found is False:
            found = owner if owner in modules else (module_of(owner) if "." in owner else None)
            cache[owner] = found
        return found

    return module_of


def _targets(table: ProjectFacts, ref: tuple) -> list[str]:
    """What a call may run: the function it resolves to and, for a method called on an
    instance, the overrides in the project's subclasses (the instance may be one)."""
    if ref[0] == "n":
        return table.methods_named(ref[1])  # a distinctive method name on a receiver of unknown type
    target, bound = table.callee(ref)
    targets = [target] if target is not None else []
    if bound == CTX and target is not None:
        # `Fn.apply(x)`: its backward runs in the same step, when the loss is differentiated
        backward = table.method(target.rpartition(".")[0], "backward")
        if backward is not None:
            targets.append(backward)
    targets.extend(t for t in table.overrides_called(ref) if t not in targets)
    return targets


def region_of(function_id: str, context: str | None, regions: dict[str, str]) -> str:
    """The region of a statement in ``function_id`` standing in ``context`` (TRAIN/HOST/None).

    Nested functions and lambdas run where their enclosing function runs unless the call
    graph places them themselves."""
    if context == HOST:
        return HOST_REGION
    if context == FORWARD:
        return COMPILED
    current = function_id
    region = regions.get(TOP_LEVEL + function_id)  # a module's own statements, not what it encloses
    while region is None:
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
