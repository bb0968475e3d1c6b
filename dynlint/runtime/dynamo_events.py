"""Capture what torch.compile (dynamo) did while some code ran.

Two sources, both measured on torch 2.13 (see ../shared/pytorch-facts.md):
graph breaks come from the ``graph_breaks`` log artifact (records named
``torch._dynamo...__graph_breaks`` reaching the ``torch._dynamo`` logger, with
``in user code at FILE:LINE``); compiles and recompiles come from
``torch._dynamo.utils.get_compilation_metrics()`` (one record per frame
compile, with the code object and the guard that failed).
torch is imported only when a capture starts.
"""

from __future__ import annotations

import logging
import os
import re
from dataclasses import asdict, dataclass, field

_BREAK_AT_RE = re.compile(r"in user code at (?P<file>.+?):(?P<line>\d+)\s*$", re.MULTILINE)
# "tensor 'kwargs['input_ids']' size mismatch at index 1. expected 16, actual 24": the name may hold
# quotes and brackets, so it runs (greedily) up to the last "' <what> mismatch".
_TENSOR_MISMATCH_RE = re.compile(r"^tensor '(?P<name>.+)' (?P<what>[A-Za-z_ ]+?) mismatch\b(?P<rest>.*)$", re.DOTALL)
_MISMATCH_DETAIL_RE = re.compile(r"(?:at index (?P<dim>\d+)\.?\s*)?(?:expected (?P<expected>[^,;]+?)"
                                 r"(?:,\s*actual (?P<actual>[^;]+?))?)?\s*$")
_COMPILE_ID_RE = re.compile(r"^\s*\[?[\d/_]+\]?:\s*")
_GUARD_COMMENT_RE = re.compile(r"\s+#\s")
_VALUE_GUARD_RE = re.compile(r"^(?P<source>[\w.\[\]'\"]+?)\s*(?P<op>==|!=)\s*(?P<value>.+)$")
_STATE_GUARD_RE = re.compile(r"___check_obj_id|___check_type_id|\bis (?:not )?None\b|hasattr|___dict_contains|"
                             r"___dict_version|___check_current_backend|___odict_getitem|isinstance")
_MODE_GUARD_RE = re.compile(r"GLOBAL_STATE|\.training\b|grad_mode|requires_grad|autocast|torch_function_mode|"
                            r"___is_grad_enabled|inference_mode|deterministic_algorithms", re.IGNORECASE)
_SIZE_GUARD_RE = re.compile(r"\.size\(\)|\.stride\(\)|\bsym_size\b|\blen\(")
_USER_FRAME_RE = re.compile(r'^\s*File "(?P<file>[^"]+)", line (?P<line>\d+), in (?P<func>\S+)', re.MULTILINE)
# Graph-break types (dynamo's gb_type) that a data-dependent shape or value causes; the others
# (unsupported Python, C functions, ...) split the graph for reasons that have nothing to do with shapes.
_DATA_DEPENDENT_BREAK_RE = re.compile(
    r"data[- ]dependent|dynamic shape operator|dynamic slicing|Tensor\.item\(\)|tolist|unbacked|guard_scalar|"
    r"one_hot", re.IGNORECASE)
# Guard reasons quote user code as "...  # some/file.py:12 in forward"; paths may be cut on the left.
_GUARD_LOCATION_RE = re.compile(r"#\s*(?P<file>[^\s#()]+\.py):(?P<line>\d+) in (?P<func>[\w<>]+)")
_RESUME_RE = re.compile(r"^torch_dynamo_resume_in_(?P<func>\w+?)_at_(?P<line>\d+)$")


@dataclass(frozen=True)
class GraphBreak:
    filename: str
    line: int
    reason: str        # the break type, e.g. "Dynamic shape operator"
    detail: str = ""   # dynamo's explanation line, when it gave one
    frames: tuple = field(default=(), compare=False)   # ((file, line, function), ...) traced frames, outermost first
    callers: tuple = field(default=(), compare=False)  # real frames (outside torch) calling the traced one, innermost first

    @property
    def data_dependent(self) -> bool:
        """A break caused by a data-dependent shape or value (not by unsupported Python)."""
        return bool(_DATA_DEPENDENT_BREAK_RE.search(self.reason) or _DATA_DEPENDENT_BREAK_RE.search(self.detail))

    def to_dict(self) -> dict:
        data = asdict(self)
        data["frames"] = [list(f) for f in self.frames]
        data["callers"] = [list(f) for f in self.callers]
        return data


@dataclass(frozen=True)
class GuardFailure:
    """One failed guard of a recompile, classified.

    ``kind``: "size" (a tensor's size, rank or stride, a list's length, a size guard),
    "input" (a tensor's dtype or device), "mode" (grad mode, train/eval, requires_grad,
    autocast), "value" (a Python value baked into the graph), "state" (an object's
    identity, type or attribute presence), or "other".
    """

    kind: str
    source: str = ""          # what the guard is on, e.g. "kwargs['input_ids']", "___stack0", "self.scales"
    text: str = ""            # the guard as dynamo printed it, without its source comment
    dim: int | None = None
    expected: str | None = None
    actual: str | None = None

    @property
    def intermediate(self) -> bool:
        """On a value computed before a graph break (``___stack0``), not on an argument of the frame."""
        return self.source.startswith("___")


def parse_guard_failures(reason: str) -> list[GuardFailure]:
    """The failed guards in a ``recompile_reason`` ("0/1: tensor 'x' size mismatch ...; ...")."""
    head = (reason or "").split("\nUser stack trace:", 1)[0]
    head = _COMPILE_ID_RE.sub("", head, count=1).strip()
    failures = []
    for part in _split_reasons(head):
        failures.append(_classify_guard(part))
    return failures


def _split_reasons(head: str) -> list[str]:
    # Several failures are joined by "; "; a tensor name never contains "; ".
    parts = [p.strip() for p in re.split(r";\s+(?=tensor '|[A-Za-z_\d(\[]|___)", head) if p.strip()]
    return parts or ([head] if head else [])


def _classify_guard(part: str) -> GuardFailure:
    guard = _GUARD_COMMENT_RE.split(part, maxsplit=1)[0].strip()
    match = _TENSOR_MISMATCH_RE.match(guard)
    if match:
        what = match.group("what").strip().lower()
        detail = _MISMATCH_DETAIL_RE.search(match.group("rest").lstrip(". "))
        dim = int(detail.group("dim")) if detail and detail.group("dim") else None
        expected = _strip(detail.group("expected")) if detail else None
        actual = _strip(detail.group("actual")) if detail else None
        kind = "size" if what in ("size", "rank", "stride", "storage offset") else \
            "mode" if "requires_grad" in what else "input"
        return GuardFailure(kind, match.group("name"), guard, dim, expected, actual)
    if _MODE_GUARD_RE.search(guard):
        return GuardFailure("mode", "", guard)
    if _SIZE_GUARD_RE.search(guard):
        sources = re.findall(r"([\w.\[\]'\"]+)\.(?:size|stride)\(\)", guard)
        return GuardFailure("size", sources[0] if sources else "", guard)
    if _STATE_GUARD_RE.search(guard):
        return GuardFailure("state", "", guard)
    match = _VALUE_GUARD_RE.match(guard)
    if match:
        source = match.group("source")
        # A module's own attribute (self.output_size): another instance or configuration, not data.
        kind = "state" if re.match(r"(?:self|L\['self'\]|fn)\b|.*_modules\[", source) else "value"
        return GuardFailure(kind, source, guard, expected=match.group("value").strip())
    if re.search(r"\b___stack\d+\b|\bsym_(?:max|min|not|float|int)\b|[<>]=?", guard):
        names = re.findall(r"\b(___stack\d+|[A-Za-z_]\w*)\b", guard)
        source = next((n for n in names if n.startswith("___")), "")
        return GuardFailure("value", source, guard)
    return GuardFailure("other", "", guard)


def _strip(text):
    return text.strip().rstrip(".") if text is not None else None


def user_frames(reason: str) -> tuple:
    """((file, line, function), ...) of the "User stack trace" a guard reason may carry, outermost first."""
    if "User stack trace:" not in (reason or ""):
        return ()
    tail = reason.split("User stack trace:", 1)[1]
    return tuple((m.group("file"), int(m.group("line")), m.group("func")) for m in _USER_FRAME_RE.finditer(tail))


@dataclass(frozen=True)
class Compile:
    """One frame compile; ``recompile_reason`` is empty for a frame's first compile."""

    co_name: str
    co_filename: str
    co_firstlineno: int
    recompile_reason: str = ""
    guard_locations: tuple = field(default=())   # ((file fragment, line), ...) quoted by the guard

    @property
    def is_recompile(self) -> bool:
        return bool(self.recompile_reason)

    @property
    def function(self) -> str:
        match = _RESUME_RE.match(self.co_name)
        return match.group("func") if match else self.co_name

    @property
    def is_resume(self) -> bool:
        return bool(_RESUME_RE.match(self.co_name))

    def failures(self) -> list[GuardFailure]:
        return parse_guard_failures(self.recompile_reason)

    def size_mismatches(self) -> list[dict]:
        """Tensor size mismatches with integer sizes: {name, dim, expected, actual}."""
        found = []
        for failure in self.failures():
            if failure.kind == "size" and failure.dim is not None and str(failure.expected).isdigit() \
                    and str(failure.actual).isdigit():
                found.append(dict(name=failure.source, dim=failure.dim, expected=int(failure.expected),
                                  actual=int(failure.actual)))
        return found

    def to_dict(self) -> dict:
        data = asdict(self)
        data["guard_locations"] = [list(loc) for loc in self.guard_locations]
        return data


def parse_graph_break(message: str) -> GraphBreak | None:
    """A GraphBreak from one ``graph_breaks`` log message, or None when it names no user line."""
    match = _BREAK_AT_RE.search(message.split("\n", 1)[0])
    if match is None:
        return None
    reason, detail = "", ""
    lines = [ln.strip() for ln in message.splitlines()[1:]]
    # Layout: "Graph Break Reason: <what dynamo was tracing>", blank, "<break type>", "Explanation: ...".
    for index, text in enumerate(lines):
        if text.startswith("Graph Break Reason:"):
            rest = [t for t in lines[index + 1:] if t]
            tail = text[len("Graph Break Reason:"):].strip()
            if rest and not rest[0].startswith(("Explanation:", "Hint:", "Developer debug context:")):
                reason = rest[0]
            else:
                reason = tail
            break
    for text in lines:
        if text.startswith("Explanation:"):
            detail = text[len("Explanation:"):].strip()
            break
    return GraphBreak(match.group("file"), int(match.group("line")), reason or "graph break", detail)


def guard_locations(reason: str, keep_libraries: bool = False) -> tuple:
    """(file fragment, line) pairs quoted by a guard reason; library files left out (with
    ``keep_libraries``, only torch's own), so confirm lints only the user's files."""
    found = []
    for match in _GUARD_LOCATION_RE.finditer(reason or ""):
        fragment = match.group("file")
        if is_torch_file(fragment) if keep_libraries else is_library_file(fragment):
            continue
        item = (fragment, int(match.group("line")))
        if item not in found:
            found.append(item)
    return tuple(found)


def path_matches(fragment: str, path: str) -> bool:
    """Guard reasons shorten paths from the left ("mp/exp/m.py" for "/tmp/exp/m.py")."""
    fragment = fragment.replace("\\", "/")
    path = os.path.abspath(path).replace("\\", "/")
    return path == fragment or path.endswith(fragment if fragment.startswith("/") else "/" + fragment) \
        or path.endswith(fragment)


_LIBRARY_MARKERS = ("/torch/", "/site-packages/", "/dist-packages/", "/dynlint/runtime/", "<frozen", "<string>")


def is_torch_file(path: str) -> bool:
    """torch's own files (and ours), as full or left-shortened paths."""
    normalized = path.replace("\\", "/")
    if normalized.startswith(("torch/", "nn/modules/", "_dynamo/", "fx/", "utils/_", "_ops.py")):
        return True
    return any(marker in normalized for marker in ("/torch/", "/dynlint/runtime/", "<frozen", "<string>"))


def is_library_file(path: str) -> bool:
    normalized = path.replace("\\", "/")
    if normalized.startswith(("torch/", "nn/modules/", "_dynamo/", "fx/", "utils/")):
        return True
    return any(marker in normalized for marker in _LIBRARY_MARKERS)


class _Collector(logging.Handler):
    def __init__(self, sink):
        super().__init__(logging.DEBUG)
        self._sink = sink

    def emit(self, record):
        if not record.name.endswith("__graph_breaks"):
            return
        try:
            event = parse_graph_break(record.getMessage())
            if event is not None:
                event = GraphBreak(event.filename, event.line, event.reason, event.detail, traced_frames(),
                                   calling_frames())
        except Exception:  # never let bookkeeping break the user's run
            return
        if event is not None:
            self._sink(event)


def calling_frames(limit: int = 40) -> tuple:
    """((file, line, function), ...) of the real frames below dynamo, innermost first: the code that
    called the frame being compiled (a module's forward that called a helper, or a resume function)."""
    import sys

    frame = sys._getframe(1)
    found = []
    while frame is not None and len(found) < limit:
        filename = frame.f_code.co_filename
        if not is_torch_file(filename) and not filename.startswith("<") and "/logging/" not in filename:
            found.append((filename, frame.f_lineno or 0, frame.f_code.co_name))
        frame = frame.f_back
    return tuple(found)


def traced_frames() -> tuple:
    """((file, line, function), ...) of the frames dynamo was tracing when it logged a graph break.

    Read from the exception that ``log_graph_break`` (a method of dynamo's translator, calling
    the logger synchronously) is reporting: its ``real_stack`` holds the traced frames from the
    compiled frame down to the break, inlined calls included.  Empty when not found.
    """
    import sys

    frame = sys._getframe(1)
    for _ in range(40):
        if frame is None:
            break
        if frame.f_code.co_name == "log_graph_break":
            f_locals = frame.f_locals
            stack = getattr(f_locals.get("exc"), "real_stack", None) or ()
            return tuple((f.filename, int(f.lineno or 0), f.name) for f in stack)
        frame = frame.f_back
    return ()


class _DropGraphBreaks(logging.Filter):
    """Drops the graph-break log (we collect it) and torch's own graph-break warnings
    ("Graph break from `Tensor.item()`, consider setting ...") while a capture runs: the
    report names every break with its line already."""

    def filter(self, record):
        if record.name.endswith("__graph_breaks"):
            return False
        message = record.msg if isinstance(record.msg, str) else ""
        return not message.lstrip().startswith("Graph break")


class DynamoCapture:
    """Collects graph breaks (as they are logged) and compiles (from the metrics) between start() and stop().

    ``quiet`` hides the graph-break log text that enabling the artifact would
    otherwise print to stderr, and torch's own graph-break warnings, unless the
    user asked for graph breaks in TORCH_LOGS.
    """

    def __init__(self, quiet: bool = True):
        self.quiet = quiet
        self.graph_breaks: list[GraphBreak] = []
        self.listeners = []          # callables(event) told about each new GraphBreak / Compile
        self._seen_keys = set()
        self._handler = None
        self._filter = None
        self._filtered_handlers = []
        self._active = False

    # -- lifecycle ---------------------------------------------------------
    def start(self) -> "DynamoCapture":
        import torch
        import torch._dynamo.utils

        if self._active:
            return self
        torch._logging.set_logs(graph_breaks=True)
        dynamo_logger = logging.getLogger("torch._dynamo")
        self._handler = _Collector(self._on_break)
        dynamo_logger.addHandler(self._handler)
        if self.quiet and "graph_breaks" not in os.environ.get("TORCH_LOGS", ""):
            self._filter = _DropGraphBreaks()
            self._filtered_handlers = [h for h in dynamo_logger.handlers if h is not self._handler]
            for handler in self._filtered_handlers:
                handler.addFilter(self._filter)
        self._seen_keys = {(str(r.compile_id), r.start_time_us) for r in torch._dynamo.utils.get_compilation_metrics()}
        self._compiles: list[Compile] = []
        self._active = True
        return self

    def stop(self) -> None:
        import torch

        if not self._active:
            return
        self.poll()
        dynamo_logger = logging.getLogger("torch._dynamo")
        dynamo_logger.removeHandler(self._handler)
        for handler in self._filtered_handlers:
            handler.removeFilter(self._filter)
        self._filtered_handlers = []
        # Put logging back: from TORCH_LOGS when the user set it, else torch's defaults.
        if os.environ.get("TORCH_LOGS"):
            from torch._logging._internal import _init_logs
            _init_logs()
        else:
            torch._logging.set_logs()
        self._active = False

    def __enter__(self):
        return self.start()

    def __exit__(self, *exc):
        self.stop()
        return False

    # -- events ------------------------------------------------------------
    @property
    def compiles(self) -> list[Compile]:
        if self._active:
            self.poll()
        return list(getattr(self, "_compiles", []))

    def poll(self) -> list[Compile]:
        """Read compile records that appeared since the last poll; returns the new ones."""
        import torch._dynamo.utils

        metrics = list(torch._dynamo.utils.get_compilation_metrics())
        # The metrics deque is bounded (it drops old records), so identify records, not positions.
        keys = [(str(r.compile_id), r.start_time_us) for r in metrics]
        new = []
        for key, record in zip(keys, metrics):
            if key in self._seen_keys:
                continue
            reason = record.recompile_reason or ""
            new.append(Compile(str(record.co_name or ""), str(record.co_filename or ""),
                               int(record.co_firstlineno or 0), reason, guard_locations(reason)))
        self._seen_keys = set(keys)
        self._compiles.extend(new)
        for event in new:
            for listener in self.listeners:
                listener(event)
        return new

    def _on_break(self, event: GraphBreak) -> None:
        self.graph_breaks.append(event)
        for listener in self.listeners:
            listener(event)
