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
_SIZE_MISMATCH_RE = re.compile(
    r"tensor '(?P<name>[^']+)' size mismatch at index (?P<dim>\d+)\. "
    r"expected (?P<expected>\d+), actual (?P<actual>\d+)")
# Guard reasons quote user code as "...  # some/file.py:12 in forward"; paths may be cut on the left.
_GUARD_LOCATION_RE = re.compile(r"#\s*(?P<file>[^\s#()]+\.py):(?P<line>\d+) in (?P<func>[\w<>]+)")
_RESUME_RE = re.compile(r"^torch_dynamo_resume_in_(?P<func>\w+?)_at_(?P<line>\d+)$")


@dataclass(frozen=True)
class GraphBreak:
    filename: str
    line: int
    reason: str        # the break type, e.g. "Dynamic shape operator"
    detail: str = ""   # dynamo's explanation line, when it gave one

    def to_dict(self) -> dict:
        return asdict(self)


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

    def size_mismatches(self) -> list[dict]:
        return [dict(name=m.group("name"), dim=int(m.group("dim")), expected=int(m.group("expected")),
                     actual=int(m.group("actual"))) for m in _SIZE_MISMATCH_RE.finditer(self.recompile_reason)]

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


def guard_locations(reason: str) -> tuple:
    """(file fragment, line) pairs quoted by a guard reason, torch's own files left out."""
    found = []
    for match in _GUARD_LOCATION_RE.finditer(reason or ""):
        fragment = match.group("file")
        if is_library_file(fragment):
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
        except Exception:  # never let bookkeeping break the user's run
            return
        if event is not None:
            self._sink(event)


class _DropGraphBreaks(logging.Filter):
    def filter(self, record):
        return not record.name.endswith("__graph_breaks")


class DynamoCapture:
    """Collects graph breaks (as they are logged) and compiles (from the metrics) between start() and stop().

    ``quiet`` hides the graph-break log text that enabling the artifact would
    otherwise print to stderr, unless the user asked for it in TORCH_LOGS.
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
