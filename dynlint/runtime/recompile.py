"""Which modules of a model recompile, and why: a hook-based detector for every backend.

``detect_recompilation_auto_model(model)`` has the call shape of Gaudi's tool:
it instruments every submodule, each call of the model is one step, and
``model.analyse_dynamicity()`` prints the two tables.  Backends:

* ``"trace"`` (eager CPU/CUDA): emulates a lazy-mode graph cache.  While the
  model runs, one TorchDispatchMode records every aten op with its input and
  output shapes; the ops a module call ran are that module's graph.  A new
  graph for an input signature already seen means something inside depends on
  tensor values (the op that differed is named with the user line).
* ``"shapes"``: only input/output signatures; cheap, but blind to a dynamic op
  whose output shape is static again (``x[x > 0].sum()``).
* ``"compile"``: a model compiled with ``torch.compile``; counts real dynamo
  recompiles and graph breaks and attributes them to the innermost module
  whose ``forward`` contains the reported line.
* ``"hpu"``: Gaudi lazy mode, counting real graph compilations (untested here:
  no Gaudi in CI; kept thin and marked).

Memory stays bounded: per module only hashes of signatures and graphs, and a
capped number of events; tensors are never kept.
"""

from __future__ import annotations

import bisect
import inspect
import os
import sys
import time

from dynlint.runtime.report import (
    COMMENT_DYNAMIC_INPUT,
    COMMENT_MODE_SWITCH,
    COMMENT_NEW_INPUT,
    COMMENT_NEW_OUTPUT,
    COMMENT_SAME_SHAPES,
    COMMENT_STATE_CHANGE,
    Event,
    ModuleInfo,
    RecompileReport,
    mark_explained_by_children,
    merge_reports,
)
from dynlint.runtime.signature import format_signature, signature

BACKENDS = ("hpu", "compile", "trace", "shapes")
MAX_EVENTS = 100_000          # events kept for the tables; counts stay exact beyond it
MAX_REFERENCE_GRAPHS = 16     # per module: op sequences kept to name the op that changed
GAUDI_TAG = "[DETECT_RECOMPILE_AUTO]"   # Gaudi's raw-log tag, kept so its parsers read raw_logs()
_RUNTIME_DIR = os.path.dirname(os.path.abspath(__file__))


def detect_recompilation_auto_model(model, mdlname=None, waittime=None, csv_out="out", *, backend=None):
    """Instrument ``model`` and every submodule; returns the same model object.

    Gaudi's signature and meaning: ``mdlname`` names the root in module paths
    (default: the root's class name; Gaudi's default is "Net"), ``waittime`` is
    the per-call sleep (hpu backend only), ``csv_out`` the prefix of the two CSV
    files (None: no files).  Adds ``model.analyse_dynamicity()`` (prints both
    tables, writes ``<csv_out>_1.csv`` / ``<csv_out>_2.csv``, returns the report),
    ``model.raw_logs()`` (Gaudi's log lines) and ``model.remove_hooks()``.
    ``backend`` (keyword only) overrides the automatic choice (compiled model ->
    "compile", habana_frameworks importable -> "hpu", else "trace").
    """
    if mdlname is not None and not isinstance(mdlname, str):
        raise TypeError(f"mdlname must be a string naming the root module, got {mdlname!r:.40} "
                        "(the signature is Gaudi's: model, mdlname, waittime, csv_out)")
    if waittime is not None and (isinstance(waittime, bool) or not isinstance(waittime, (int, float))
                                 or waittime < 0):
        raise TypeError(f"waittime must be a non-negative number of seconds, got {waittime!r:.40}")
    detector = RecompileDetector(model, backend=backend, waittime=waittime, csv_out=csv_out, mdlname=mdlname)
    detector.attach()
    return model


def choose_backend(model, backend=None) -> str:
    if backend not in (None, "auto"):
        if backend not in BACKENDS:
            raise ValueError(f"unknown backend {backend!r}; expected one of {', '.join(BACKENDS)}")
        return backend
    if _compiled_target(model) is not None:
        return "compile"
    if _hpu_available():
        return "hpu"
    return "trace"


class _ModuleState:
    """What one module has seen: hashes only, never tensors."""

    __slots__ = ("info", "seen_in", "seen_out", "seen_graphs", "seen_modes", "reference_ops", "span", "parent",
                 "children", "depth", "name", "first_step", "code")

    def __init__(self, info: ModuleInfo, span, parent=None):
        self.info = info
        self.seen_in: set = set()
        self.seen_out: set = set()
        self.seen_graphs: set = set()
        self.seen_modes: set = set()    # (training, grad enabled) pairs it ran in
        self.reference_ops: dict = {}   # (mode, input-signature hash) -> (op keys, own dynamic-op keys) of its first graph
        self.span = span                # (abs filename, first line, last line) of the unwrapped forward, or None
        self.parent = parent
        self.children: list = []
        self.depth = 0 if parent is None else parent.depth + 1
        self.name = info.path.rsplit("/", 1)[-1]   # the attribute name in its parent
        self.first_step = None          # the step it first ran (or compiled) in
        self.code = None                # the code object of its unwrapped forward (trace: call sites)
        if parent is not None:
            parent.children.append(self)

    def descendants(self):
        for child in self.children:
            yield child
            yield from child.descendants()

    def contains(self, other) -> bool:
        while other is not None:
            if other is self:
                return True
            other = other.parent
        return False


class _Frame:
    """One running module call (eager backends)."""

    __slots__ = ("state", "dynamic_below", "own", "mode_new")

    def __init__(self, state, mode_new=False):
        self.state = state
        self.dynamic_below = False
        self.own = None           # indices of the data-dependent ops this call ran itself (trace)
        self.mode_new = mode_new  # first call of this module in this train/eval + grad mode


class RecompileDetector:
    def __init__(self, model, backend=None, waittime=None, csv_out="out", mdlname=None):
        import torch.nn as nn

        compiled = _compiled_target(model)
        self.model = model
        self.backend = choose_backend(model, backend)
        self.root = compiled[0] if compiled is not None else model
        if not isinstance(self.root, nn.Module):
            raise TypeError(f"detect_recompilation_auto_model needs an nn.Module, got {type(model).__name__}")
        if self.backend == "compile" and compiled is None:
            raise ValueError("backend='compile' needs a model compiled with torch.compile(model) or model.compile(); "
                             "attach the detector to the compiled model")
        self.waittime = waittime
        self.csv_out = csv_out
        self.mdlname = mdlname or type(self.root).__name__
        self._registrations: list[str] = []
        self.step = -1
        self.events: list[Event] = []
        self.counts: dict[str, int] = {}
        self.dropped_events = 0
        self.calls: dict[str, int] = {}
        self._stack: list[_Frame] = []
        self._root_inputs: set = set()     # input-signature hashes of the model's calls
        self._input_new = True             # this step's model input was not seen before
        self._restore: list = []          # (object, attribute, had_own_value, old_value)
        self._attached = False
        self._recorder = None
        self._capture = None
        self._states: list[_ModuleState] = []
        self._root_state = None

    # -- attach / detach -----------------------------------------------------
    def attach(self) -> None:
        if self._attached:
            return
        by_path = {}
        for path, module in _walk(self.root, self.mdlname):
            info = ModuleInfo(path, type(module).__name__, _forward_location(module))
            state = _ModuleState(info, _forward_span(module), by_path.get(path.rsplit("/", 1)[0]) if by_path else None)
            by_path[path] = state
            self._states.append(state)
            self._registrations.append(f"{'  ' * path.count('/')}{GAUDI_TAG} Registering hooks for {path} of type "
                                       f"{type(module)} probably defined here {inspect.getmodule(type(module))}")
        self._root_state = self._states[0]
        if self.backend == "compile":
            self._attach_compile()
        else:
            import torch

            from dynlint.runtime.signature import make_fast_key

            self._is_grad_enabled = torch.is_grad_enabled
            self._value_key, self._call_key = make_fast_key()
            if self.backend == "trace":
                self._recorder = _make_recorder(self._stack)
            modules = [m for _, m in _walk(self.root, "")]
            for state, module in zip(self._states, modules):
                state.code = _forward_code(module)
                self._wrap(module, "forward", self._make_eager_wrapper(state, module, module.forward))
        for name, value in (("analyse_dynamicity", self.analyse_dynamicity), ("remove_hooks", self.remove_hooks),
                            ("raw_logs", self.raw_logs), ("recompile_detector", self)):
            self._set(self.model, name, value)
        self._attached = True

    def remove_hooks(self) -> None:
        """Put every patched attribute back exactly as it was (or remove ours)."""
        if self._capture is not None:
            self._capture.stop()
            self._capture = None
        for handle in getattr(self, "_hook_handles", ()):
            handle.remove()
        self._hook_handles = []
        if getattr(self, "_warning_filter", None) is not None:
            import warnings

            if self._warning_filter in warnings.filters:
                warnings.filters.remove(self._warning_filter)
                warnings._filters_mutated()
            self._warning_filter = None
        for obj, name, had_own, old in reversed(self._restore):
            if had_own:
                obj.__dict__[name] = old
            else:
                obj.__dict__.pop(name, None)
        self._restore.clear()
        self._attached = False

    def _set(self, obj, name, value) -> None:
        # Write straight into the instance dict: nn.Module.__setattr__ and OptimizedModule's
        # forwarding would put the value elsewhere, and restoring must undo exactly this.
        had_own = name in obj.__dict__
        self._restore.append((obj, name, had_own, obj.__dict__.get(name)))
        obj.__dict__[name] = value

    def _wrap(self, obj, name, wrapper) -> None:
        self._set(obj, name, wrapper)

    # -- eager backends (trace, shapes, hpu) ----------------------------------
    def _make_eager_wrapper(self, state, module, original):
        call = self._call_hpu if self.backend == "hpu" else self._call_eager

        def forward(*args, **kwargs):
            return call(state, module, original, args, kwargs)

        forward.__wrapped__ = original
        return forward

    def _call_eager(self, state, module, original, args, kwargs):
        stack = self._stack
        outermost = not stack
        recorder = self._recorder
        in_sig = hash(self._call_key(args, kwargs))
        if outermost and state is self._root_state:
            self.step += 1
            self._input_new = in_sig not in self._root_inputs
            self._root_inputs.add(in_sig)
        mode = (module.training, self._is_grad_enabled())
        frame = _Frame(state, mode not in state.seen_modes)
        if outermost and recorder is not None:
            recorder.clear()
            recorder.__enter__()
        start = len(recorder.keys) if recorder is not None else 0
        stack.append(frame)
        try:
            output = original(*args, **kwargs)
        finally:
            stack.pop()
            if outermost and recorder is not None:
                recorder.__exit__(*sys.exc_info())
        try:
            out_sig = hash(self._value_key(output))
            if recorder is not None:
                ops = tuple(recorder.keys[start:])
                graph = (mode, in_sig, hash(ops))
            else:
                ops = None
                graph = (mode, in_sig, out_sig)
            self._after_call(state, frame, mode, in_sig, out_sig, graph, ops, start, args, kwargs)
        finally:
            if outermost and recorder is not None:
                recorder.clear()
        return output

    def _after_call(self, state, frame, mode, in_sig, out_sig, graph, ops, start, args, kwargs) -> None:
        path = state.info.path
        self.calls[path] = self.calls.get(path, 0) + 1
        new_in = in_sig not in state.seen_in
        new_out = out_sig not in state.seen_out
        if state.first_step is None:
            state.first_step = self.step
        dynamic = False
        if graph not in state.seen_graphs:
            state.seen_graphs.add(graph)
            reference_key = (mode, in_sig)
            parent = self._stack[-1] if self._stack else None
            if state.first_step == self.step:
                pass        # its first step: every graph it needs now is its compile, not a recompile
            elif frame.mode_new:
                if parent is None or not parent.mode_new:   # one row for the module that switched, not its tree
                    train = "train" if mode[0] else "eval"
                    grad = "grad on" if mode[1] else "no_grad"
                    self._add_event(Event(self.step, path, new_in, new_out, COMMENT_MODE_SWITCH,
                                          f"first call in {train} mode with {grad}", False))
            elif new_in:
                comment = COMMENT_NEW_INPUT if self._input_new else COMMENT_DYNAMIC_INPUT
                cause = "input " + _short_signature(args, kwargs)
                if frame.own:        # it runs a data-dependent op itself: worth a look once inputs are fixed
                    cause += "; runs " + self._recorder.describe(frame.own[0])
                self._add_event(Event(self.step, path, True, new_out, comment, cause, False))
            else:
                dynamic = True
                own_changed = ops is not None and self._own_ops_changed(state, reference_key, frame)
                comment = COMMENT_NEW_OUTPUT if new_out else COMMENT_SAME_SHAPES
                cause = self._name_changed_op(state, reference_key, ops, start, frame if own_changed else None) \
                    if ops is not None else ""
                self._add_event(Event(self.step, path, False, new_out, comment, cause, True,
                                      explained_by_child=frame.dynamic_below and not own_changed))
            if ops is not None and reference_key not in state.reference_ops \
                    and len(state.reference_ops) < MAX_REFERENCE_GRAPHS:
                state.reference_ops[reference_key] = (ops, self._own_keys(frame))
        state.seen_modes.add(mode)
        state.seen_in.add(in_sig)
        state.seen_out.add(out_sig)
        if self._stack and (dynamic or frame.dynamic_below):
            self._stack[-1].dynamic_below = True

    def _own_keys(self, frame) -> tuple:
        if not frame.own:
            return ()
        keys = self._recorder.keys
        return tuple(keys[i] for i in frame.own)

    def _own_ops_changed(self, state, reference_key, frame) -> bool:
        """Did the data-dependent ops this module ran itself (not its children) change shape?"""
        reference = state.reference_ops.get(reference_key)
        return reference is not None and self._own_keys(frame) != reference[1]

    def _name_changed_op(self, state, reference_key, ops, start, own_frame=None) -> str:
        """The data-dependent aten op behind a new graph, with the user line that called it.

        With ``own_frame``, only the module's own data-dependent ops are candidates (the
        first one whose shape changed), so a parent's own cause is named beside its child's.
        """
        recorder = self._recorder
        reference = state.reference_ops.get(reference_key, ((), ()))
        if own_frame is not None and own_frame.own:
            own_reference = reference[1]
            keys = recorder.keys
            for position, index in enumerate(own_frame.own):
                if position >= len(own_reference) or keys[index] != own_reference[position]:
                    return recorder.describe(index)
            return recorder.describe(own_frame.own[-1])
        reference_ops = reference[0]
        differ = next((i for i, (a, b) in enumerate(zip(ops, reference_ops)) if a != b),
                      min(len(ops), len(reference_ops)))
        at = start + differ
        end = start + len(ops)
        indices = recorder.dynamic_indices
        # The cause is the last value-dependent op at or before the first difference
        # (nonzero, a mask index, .item() before a branch); else the first one after it.
        pos = bisect.bisect_right(indices, at)
        if pos > 0 and indices[pos - 1] >= start:
            return recorder.describe(indices[pos - 1])
        if pos < len(indices) and indices[pos] < end:
            return recorder.describe(indices[pos])
        if at < end:
            return f"first changed op: {recorder.op_name(at)}"
        return ""

    def _call_hpu(self, state, module, original, args, kwargs):
        # UNTESTED PATH (no Gaudi here): brackets each call with mark_step as Gaudi's tool does and
        # reads the graph_compilation metric; a call that compiled anything is a (re)compile.
        import habana_frameworks.torch.core as htcore

        outermost = not self._stack
        if outermost and state is self._root_state:
            self.step += 1
        wait = 1.0 if self.waittime is None else float(self.waittime)
        in_sig = hash(self._call_key(args, kwargs))
        frame = _Frame(state)
        htcore.mark_step()
        time.sleep(wait)
        before = _hpu_compile_count()
        self._stack.append(frame)
        try:
            output = original(*args, **kwargs)
        finally:
            self._stack.pop()
        htcore.mark_step()
        time.sleep(wait)
        compiled = _hpu_compile_count() > before
        out_sig = hash(self._value_key(output))
        graph = (in_sig, out_sig) if not compiled else (in_sig, out_sig, self.step, len(self.events))
        if not compiled and graph not in state.seen_graphs and state.seen_graphs:
            state.seen_graphs.add(graph)      # cached graph: a new shape pair that did not compile
        mode = (module.training, self._is_grad_enabled())
        self._after_call(state, frame, mode, in_sig, out_sig, graph, None, 0, args, kwargs)
        return output

    # -- compile backend ----------------------------------------------------
    # Attribution: global module hooks keep a stack of the modules whose forward really runs
    # (inside a compiled graph they are traced away, so they cost nothing there and add no
    # guards).  A compile recorded, or a graph break logged, while module M is on top belongs
    # to M or, when the traced frames show it, to a submodule of M inlined into M's graph.
    # Dynamo logs a break again each time it retraces a deeper frame, so within a step the
    # deepest attribution of a break wins.
    def _attach_compile(self) -> None:
        import torch
        from torch.nn.modules import module as nn_module

        from dynlint.runtime.dynamo_events import DynamoCapture

        _, holder, attribute = _compiled_target(self.model)
        original = holder.__dict__[attribute]
        modules = [m for _, m in _walk(self.root, "")]
        by_id = {id(m): state for state, m in zip(self._states, modules)}
        self._by_id = by_id
        self._compile_stack: list = []
        self._last_record = None
        self._root_input_seen: set = set()
        self._input_new = True
        self._break_events: dict = {}
        self._mode_rows: dict = {}
        self._capture = DynamoCapture(quiet=True)
        self._capture.listeners.append(self._on_dynamo_event)
        self._capture.start()
        self._last_record = _last_compile_record()
        stack = self._compile_stack
        is_compiling = torch.compiler.is_compiling
        detector = self

        def pre_hook(module, args):
            if is_compiling():
                return
            state = by_id.get(id(module))
            if state is not None:
                detector._poll()
                stack.append(state)

        def post_hook(module, args, output):
            if is_compiling():
                return
            state = by_id.get(id(module))
            if state is not None and state in stack:
                detector._poll()
                while stack and stack.pop() is not state:
                    pass

        _skip_dynamo(pre_hook, post_hook)
        # torch warns that global hooks also fire for the OptimizedModule wrapper; ours ignore it.
        import warnings

        warnings.filterwarnings("ignore", message=r"Using `torch\.compile\(module\)` when there are global hooks")
        self._warning_filter = warnings.filters[0]
        self._hook_handles = [nn_module.register_module_forward_pre_hook(pre_hook),
                              nn_module.register_module_forward_hook(post_hook, always_call=True)]

        def step_call(*args, **kwargs):
            detector._poll()               # anything compiled between steps belongs to the step before
            detector.step += 1
            path = detector._root_state.info.path
            detector.calls[path] = detector.calls.get(path, 0) + 1
            key = hash(signature((args, kwargs)))
            detector._input_new = key not in detector._root_input_seen
            detector._root_input_seen.add(key)
            stack.clear()
            try:
                return original(*args, **kwargs)
            finally:
                detector._poll()
                stack.clear()

        step_call.__wrapped__ = original
        self._wrap(holder, attribute, step_call)

    def _current(self):
        stack = getattr(self, "_compile_stack", None)
        return stack[-1] if stack else self._root_state

    def _poll(self) -> None:
        capture = self._capture
        if capture is None:
            return
        last = _last_compile_record()
        if last is self._last_record:
            return
        self._last_record = last
        capture.poll()

    def _on_dynamo_event(self, event) -> None:
        from dynlint.runtime.dynamo_events import GraphBreak

        if isinstance(event, GraphBreak):
            self._on_graph_break(event)
        else:
            self._on_compile(event)

    def _on_graph_break(self, event) -> None:
        step = max(self.step, 0)
        current = self._current()
        state = self._descend(current, event.frames)
        location = f"{_short_path(event.filename)}:{event.line}"
        call_site = self._call_site(state, event.frames, event.filename, event.line) or \
            self._call_site(state, tuple(reversed(event.callers)), event.filename, event.line)
        cause = location + (f" (from {call_site})" if call_site else "") + (f" {event.detail}" if event.detail else "")
        key = (step, os.path.abspath(event.filename), event.line, event.reason)
        known = self._break_events.setdefault(key, [])
        for index in known:
            existing = self.events[index] if index < len(self.events) else None
            if existing is None:
                continue
            old = self._state_of(existing.path)
            if old is state or (old is not None and state.contains(old)):
                return              # the same break, seen again from its module or from further out
            if old is not None and old.contains(state):
                self._move_event(index, state)   # a deeper retrace shows where it really is
                existing.cause = cause
                return
        comment = f"Graph break: {event.reason}" if event.data_dependent else \
            f"Graph break (not shape-related): {event.reason}"
        index = len(self.events)
        if self._add_event(Event(step, state.info.path, False, False, comment, cause, event.data_dependent)):
            known.append(index)

    def _on_compile(self, event) -> None:
        from dynlint.runtime.dynamo_events import guard_locations, user_frames

        step = max(self.step, 0)
        state = self._current()
        failures = event.failures() if event.is_recompile else []
        kinds = {f.kind for f in failures}
        if "mode" not in kinds:     # a mode switch recompiles the whole frame: keep it on the running module
            frames = user_frames(event.recompile_reason)
            if not frames:
                frames = tuple((fragment, line, "") for fragment, line in guard_locations(event.recompile_reason,
                                                                                           keep_libraries=True))
            state = self._descend(state, frames, fuzzy_paths=True)
        first_step = state.first_step is None or state.first_step == step
        if state.first_step is None:
            state.first_step = step
        if not event.is_recompile:
            return
        guard = " ".join(event.recompile_reason.split("\nUser stack trace:")[0].split(" (user code shown is first use")[0]
                         .split())
        cause = f"{event.co_name}: {guard}"
        cause = cause if len(cause) <= 200 else cause[:197] + "..."
        data_value = any(f.kind == "value" and (f.intermediate or event.is_resume) for f in failures)
        if "mode" in kinds:
            # Every compiled frame recompiles after a mode switch: one row per step for the outermost module.
            switched = self._mode_rows.setdefault(step, [])
            if any(other.contains(state) for other in switched):
                return
            switched.append(state)
            self._add_event(Event(step, state.info.path, False, False, COMMENT_MODE_SWITCH, cause, False))
        elif kinds & {"size", "input"}:
            if first_step:
                return          # called again in its first step with other shapes: part of its first compile
            if self._input_new:
                self._add_event(Event(step, state.info.path, True, False, COMMENT_NEW_INPUT, cause, False))
            else:
                self._add_event(Event(step, state.info.path, True, False, COMMENT_DYNAMIC_INPUT, cause, False))
        elif data_value:
            self._add_event(Event(step, state.info.path, False, False, COMMENT_SAME_SHAPES, cause, True))
        elif "value" in kinds:
            if first_step:
                return
            if self._input_new:
                self._add_event(Event(step, state.info.path, True, False, COMMENT_NEW_INPUT, cause, False))
            else:
                self._add_event(Event(step, state.info.path, False, False, COMMENT_SAME_SHAPES, cause, True))
        elif "state" in kinds:
            self._add_event(Event(step, state.info.path, False, False, COMMENT_STATE_CHANGE, cause, False))
        else:
            self._add_event(Event(step, state.info.path, False, False, COMMENT_SAME_SHAPES, cause, False))

    def _state_of(self, path):
        for state in self._states:
            if state.info.path == path:
                return state
        return None

    def _move_event(self, index: int, state) -> None:
        event = self.events[index]
        self.counts[event.path] -= 1
        if not self.counts[event.path]:
            del self.counts[event.path]
        event.path = state.info.path
        self.counts[event.path] = self.counts.get(event.path, 0) + 1

    def _descend(self, state, frames, fuzzy_paths: bool = False):
        """The submodule of ``state`` whose forward the traced ``frames`` (outermost first) ran in."""
        from dynlint.runtime.dynamo_events import path_matches

        previous = None
        for filename, line, _function in frames:
            candidates = []
            for candidate in state.descendants():
                span = candidate.span
                if not span or not span[1] <= line <= span[2]:
                    continue
                if (path_matches(filename, span[0]) if fuzzy_paths else os.path.abspath(filename) == span[0]):
                    candidates.append(candidate)
            if candidates:
                chosen = _disambiguate(candidates, previous)
                if chosen is None:
                    break       # same class in several places and the call line does not tell which
                state = chosen
            previous = (filename, line)
        return state

    def _call_site(self, state, frames, filename, line) -> str:
        """Where ``state``'s own forward led to a break in a helper or library function, as file:line."""
        span = state.span
        if not span or not frames:
            return ""
        if os.path.abspath(filename) == span[0] and span[1] <= line <= span[2]:
            return ""
        for frame_file, frame_line, _ in reversed(frames):
            if os.path.abspath(frame_file) == span[0] and span[1] <= frame_line <= span[2]:
                return f"{_short_path(frame_file)}:{frame_line}"
        return ""

    # -- events and report --------------------------------------------------
    def _add_event(self, event: Event) -> bool:
        self.counts[event.path] = self.counts.get(event.path, 0) + 1
        if len(self.events) < MAX_EVENTS:
            self.events.append(event)
            return True
        self.dropped_events += 1
        return False

    def local_report(self) -> RecompileReport:
        if self._capture is not None:
            self._poll()
        events = [Event(**vars(e)) for e in self.events]
        if self.backend == "compile":
            mark_explained_by_children(events)
        modules = [ModuleInfo(s.info.path, s.info.cls, s.info.location, self.calls.get(s.info.path, 0))
                   for s in self._states]
        return RecompileReport(self.backend, self.step + 1, modules, events, dropped_events=self.dropped_events,
                               counts=dict(self.counts))

    def raw_logs(self) -> list[str]:
        """Gaudi's raw log lines: one registration line per module, then per step one line per
        recompile ("Recompilation!") and the root's "step:N" line, children before parents."""
        report = self.local_report()
        order = {s.info.path: i for i, s in enumerate(self._states)}
        root = self._root_state.info.path
        by_step: dict[int, list] = {}
        for event in report.events:
            by_step.setdefault(event.step, []).append(event)
        lines = list(self._registrations)
        for step in range(report.steps):
            events = sorted(by_step.get(step, ()), key=lambda e: -order.get(e.path, 0))
            root_events = [e for e in events if e.path == root]
            for event in [e for e in events if e.path != root] + root_events[:-1]:
                lines.append(_gaudi_line(event.path, "", event.new_in, event.new_out, 1))
            last = root_events[-1] if root_events else None
            lines.append(_gaudi_line(root, f"step:{step}", bool(last and last.new_in), bool(last and last.new_out),
                                     1 if last else 0))
        return lines

    def analyse_dynamicity(self, csv_out=..., print_tables: bool = True, file=None) -> RecompileReport:
        """Print both tables, write the CSV files, return the report.

        Under an initialized torch.distributed process group every rank must call
        this; rank 0 gathers all ranks and prints per rank and merged, the other
        ranks return their own report and print nothing.
        """
        csv_out = self.csv_out if csv_out is ... else csv_out
        report = self.local_report()
        gathered = _gather_to_rank0(report)
        if gathered is None:          # a non-zero rank
            return report
        report = gathered
        if print_tables:
            report.print_tables(file=file)
        if csv_out:
            report.write_csv(str(csv_out))
        return report


# -- trace recorder -----------------------------------------------------------
# Ops whose output shape (or returned host value) depends on tensor values: the op knowledge of
# the trace backend, by qualified name ("namespace::op").  Custom ops count too: torchvision's
# nms keeps a data-dependent number of boxes (roi_align's output shape is static, so it is not here).
DATA_DEPENDENT_OPS = frozenset({
    "aten::nonzero", "aten::nonzero_numpy", "aten::argwhere", "aten::unique", "aten::_unique", "aten::_unique2",
    "aten::unique_dim", "aten::unique_consecutive", "aten::unique_dim_consecutive", "aten::masked_select",
    "aten::_local_scalar_dense", "aten::item", "aten::bincount", "aten::repeat_interleave",
    "aten::nonzero_static_fallback", "torchvision::nms",
})
# Ops that are data-dependent only with some arguments: indexing with a boolean mask, one-argument where.
_BOOL_INDEX_OPS = frozenset({"aten::index"})
_CONDITION_ONLY_OPS = frozenset({"aten::where"})


def _make_recorder(owner_stack):
    """A dispatch mode recording one key per aten op (op, output shape and dtype); ``owner_stack`` is the detector's running-call stack,
    read when a data-dependent op runs so the op is credited to the module that ran it itself."""
    import torch
    from torch.utils._python_dispatch import TorchDispatchMode

    tensor_type = torch.Tensor
    bool_types = (torch.bool, torch.uint8)
    internal_dirs = (os.path.dirname(torch.__file__) + os.sep, _RUNTIME_DIR + os.sep)
    kinds: dict = {}      # func -> 0 static, 1 data-dependent, 2 data-dependent with a bool index, 3 with one arg

    def kind_of(func):
        name = func._schema.name
        kind = 1 if name in DATA_DEPENDENT_OPS else 2 if name in _BOOL_INDEX_OPS else \
            3 if name in _CONDITION_ONLY_OPS else 0
        kinds[func] = kind
        return kind

    def user_location(owner):
        """The innermost user line, and the line in the owning module's own forward that led there."""
        frame = sys._getframe(2)
        innermost = None
        code = owner.state.code if owner is not None else None
        while frame is not None:
            filename = frame.f_code.co_filename
            if innermost is None and not filename.startswith(internal_dirs) and not filename.startswith("<"):
                innermost = f"{_short_path(filename)}:{frame.f_lineno}"
                if code is None or frame.f_code is code:
                    return innermost
            elif innermost is not None and frame.f_code is code:
                return f"{innermost} (from {_short_path(filename)}:{frame.f_lineno})"
            frame = frame.f_back
        return innermost or "unknown location"

    class OpRecorder(TorchDispatchMode):
        """Records a hashable key per aten op (op, input and output shapes/dtypes) for the running step."""

        def __init__(self):
            super().__init__()
            self.clear()

        def clear(self):
            self.keys: list[int] = []
            self.funcs: list = []
            self.dynamic_indices: list[int] = []
            self.dynamic_where: dict[int, str] = {}

        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            output = func(*args, **kwargs) if kwargs else func(*args)
            # One key per op: the op and what it produced (shape and dtype; a host value, e.g. from
            # .item(), by value).  Inputs come from earlier ops or the module's inputs, which are keyed
            # already, so the sequence of keys identifies the graph a lazy-mode backend would build.
            kind_of_output = type(output)
            if kind_of_output is tensor_type or isinstance(output, tensor_type):
                key = hash((func, output.shape, output.dtype))
            elif kind_of_output is tuple or kind_of_output is list:
                key = hash((func, tuple([(o.shape, o.dtype) if isinstance(o, tensor_type) else o
                                         for o in output])))
            else:
                key = hash((func, output))
            keys = self.keys
            index = len(keys)
            keys.append(key)
            self.funcs.append(func)
            kind = kinds.get(func)
            if kind is None:
                kind = kind_of(func)
            if kind and (kind == 1 or (kind == 3 and len(args) == 1) or (kind == 2 and len(args) > 1 and any(
                    isinstance(i, tensor_type) and i.dtype in bool_types for i in args[1] or ()))):
                owner = owner_stack[-1] if owner_stack else None
                if owner is not None:
                    if owner.own is None:
                        owner.own = []
                    owner.own.append(index)
                self.dynamic_indices.append(index)
                self.dynamic_where[index] = user_location(owner)
            return output

        def op_name(self, index: int) -> str:
            return _op_label(self.funcs[index])

        def describe(self, index: int) -> str:
            func = self.funcs[index]
            label = _op_label(func)
            if func._schema.name in _BOOL_INDEX_OPS:
                label += " (boolean mask)"
            return f"{label} at {self.dynamic_where.get(index, 'unknown location')}"

    return OpRecorder()


def _op_label(func) -> str:
    name = str(func)            # e.g. "aten.nonzero.default"
    return name[:-len(".default")] if name.endswith(".default") else name


# -- helpers ------------------------------------------------------------------
def _gaudi_line(path: str, step: str, new_in: bool, new_out: bool, graphs: int) -> str:
    return (f"{'  ' * path.count('/')}{GAUDI_TAG}[{path}]{step} {'Found new input signature ' if new_in else ''}"
            f"{'Found new output signature ' if new_out else ''}num_graphs:{graphs} "
            + ("Recompilation!" if graphs else ""))



def _walk(module, path, seen=None):
    """(path, module) in tree order; Gaudi's naming: root class name, then named_children names."""
    if seen is None:
        seen = {id(module)}
    yield path, module
    for name, child in module.named_children():
        if id(child) in seen:       # a module shared in two places is instrumented once
            continue
        seen.add(id(child))
        yield from _walk(child, f"{path}/{name}" if path else name, seen)


def _disambiguate(candidates, previous):
    """One module out of several whose forward holds the frame: the one the calling line names."""
    if len(candidates) == 1:
        return candidates[0]
    if previous is not None:
        import linecache
        import re

        text = linecache.getline(previous[0], previous[1])
        named = [c for c in candidates if re.search(r"\b" + re.escape(c.name) + r"\b", text)]
        if len(named) == 1:
            return named[0]
    shallow = min(c.depth for c in candidates)
    top = [c for c in candidates if c.depth == shallow]
    return top[0] if len(top) == 1 else None


def _last_compile_record():
    import torch._dynamo.utils as dynamo_utils

    records = getattr(dynamo_utils, "_compilation_metrics", None)
    return records[-1] if records else None


def _skip_dynamo(*functions) -> None:
    """Tell dynamo not to compile these functions' frames when they run for real (they hold no tensor code)."""
    try:
        from torch._dynamo.eval_frame import skip_code
    except ImportError:  # pragma: no cover - other torch versions: dynamo then finds no graph and runs them as is
        return
    for function in functions:
        skip_code(function.__code__)


def _compiled_target(model):
    """(original module, object holding the compiled callable, attribute) or None if not compiled."""
    try:
        from torch._dynamo.eval_frame import OptimizedModule
    except Exception:  # pragma: no cover - very old torch
        return None
    if isinstance(model, OptimizedModule) and "forward" in model.__dict__:
        return model._orig_mod, model, "forward"
    if getattr(model, "_compiled_call_impl", None) is not None and "_compiled_call_impl" in model.__dict__:
        return model, model, "_compiled_call_impl"
    return None


def _forward_code(module):
    """The code of the class's forward, under any decorator (transformers wraps many)."""
    forward = getattr(type(module), "forward", None)
    forward = getattr(forward, "__func__", forward)
    try:
        forward = inspect.unwrap(forward) if forward is not None else None
    except ValueError:  # a cycle of __wrapped__
        pass
    return getattr(forward, "__code__", None)


def _forward_location(module) -> str:
    code = _forward_code(module)
    if code is None:
        return ""
    return f"{_short_path(code.co_filename)}:{code.co_firstlineno}"


def _forward_span(module):
    code = _forward_code(module)
    if code is None:
        return None
    lines = [line for _, _, line in code.co_lines() if line is not None]
    return (os.path.abspath(code.co_filename), code.co_firstlineno, max(lines, default=code.co_firstlineno))


def _short_path(filename: str) -> str:
    """torch/... for installed packages, relative to the working directory when under it."""
    normalized = filename.replace("\\", "/")
    for marker in ("/site-packages/", "/dist-packages/"):
        if marker in normalized:
            return normalized.split(marker, 1)[1]
    try:
        relative = os.path.relpath(filename)
    except ValueError:
        return filename
    return filename if relative.startswith("..") else relative


def _short_signature(args, kwargs) -> str:
    items = [format_signature(signature(a)) for a in args]
    items += [f"{k}={format_signature(signature(v))}" for k, v in kwargs.items()]
    text = "(" + ", ".join(items) + ")"
    return text if len(text) <= 160 else text[:157] + "..."


def _hpu_available() -> bool:
    import importlib.util

    if importlib.util.find_spec("habana_frameworks") is None:
        return False
    try:
        import habana_frameworks.torch.core  # noqa: F401
    except Exception:
        return False
    return True


def _hpu_compile_count() -> int:
    # UNTESTED PATH: Gaudi's metric API, as its own tool reads it.
    from habana_frameworks.torch.hpu.metrics import metric_global

    stats = dict(metric_global("graph_compilation").stats())
    return int(stats.get("TotalNumber", 0))


def _gather_to_rank0(report: RecompileReport):
    """The merged report on rank 0, None on other ranks, the report itself when not distributed."""
    try:
        import torch.distributed as dist
    except Exception:
        return report
    if not (dist.is_available() and dist.is_initialized()) or dist.get_world_size() < 2:
        return report
    rank = dist.get_rank()
    report.rank = rank
    payload = report.to_dict()
    gathered = [None] * dist.get_world_size() if rank == 0 else None
    dist.gather_object(payload, gathered, dst=0)
    if rank != 0:
        return None
    return merge_reports([RecompileReport.from_dict(item) for item in gathered])
