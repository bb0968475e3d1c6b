"""Confirm static findings at runtime: ``with dynlint.runtime.confirm() as session: ...``.

While the block runs, every graph break (reason + user file:line) and every
recompile (code object + guard reason) of torch.compile'd code is captured.
Afterwards the static linter runs over the user files involved and the two are
matched:

* confirmed: a finding at a line that broke the graph (any DYN1xx/DYN2xx/DYN3xx)
  or that a recompile guard points at (DYN2xx size branches and loops);
* not observed: a finding whose line neither broke nor recompiled in this run;
* missed: a runtime break or guarded line in user code with no finding (a rule gap).

Recompiles caused by a changing input size get the exact remedy, from the guard:
``torch._dynamo.mark_dynamic(x, 0)`` / ``maybe_mark_dynamic`` or
``TORCH_COMPILE_DYNAMIC_SOURCES="L['x']:0"``.
"""

from __future__ import annotations

import json
import os
import sys
from dataclasses import asdict, dataclass, field

from dynlint.runtime.dynamo_events import Compile, DynamoCapture, GraphBreak, is_library_file, path_matches

CONFIRMABLE_PREFIXES = ("DYN1", "DYN2", "DYN3")


def confirm(paths=(), compile_modules: bool = False, quiet: bool = True) -> "ConfirmSession":
    """A context manager capturing graph breaks and recompiles; ``session.report()`` afterwards.

    ``paths``: source files to lint even if no event happened in them (e.g. the script).
    ``compile_modules``: wrap top-level ``nn.Module`` calls in ``torch.compile(backend="eager")``.
    """
    return ConfirmSession(paths, compile_modules, quiet)


@dataclass
class RuntimeEvent:
    kind: str            # "graph break" | "recompile"
    filename: str
    line: int
    reason: str

    def describe(self) -> str:
        return f"{self.kind}: {self.reason}"


@dataclass
class Remedy:
    filename: str
    line: int
    function: str
    argument: str
    dim: int
    sizes_seen: list
    mark_dynamic: str
    maybe_mark_dynamic: str
    dynamic_sources: str

    def describe(self) -> str:
        sizes = ", ".join(str(s) for s in self.sizes_seen)
        return (f"{_short(self.filename)}:{self.line} {self.function}(): argument '{self.argument}' dim {self.dim} "
                f"changed size ({sizes}). Before the call: {self.mark_dynamic}  (or {self.maybe_mark_dynamic}; "
                f"or set {self.dynamic_sources})")


@dataclass
class ConfirmResult:
    confirmed: list = field(default_factory=list)      # {code, filename, line, message, runtime}
    not_observed: list = field(default_factory=list)   # {code, filename, line, message}
    missed: list = field(default_factory=list)         # {filename, line, kind, reason}
    remedies: list = field(default_factory=list)       # Remedy
    files: list = field(default_factory=list)
    graph_breaks: int = 0
    recompiles: int = 0

    def to_dict(self) -> dict:
        data = asdict(self)
        return data

    def to_json(self, indent: int | None = 2) -> str:
        return json.dumps(self.to_dict(), indent=indent)

    def format_text(self) -> str:
        out = [f"dynlint confirm: {self.graph_breaks} graph break(s), {self.recompiles} recompile(s) observed; "
               f"{len(self.files)} file(s) linted"]
        out.append("")
        out.append(f"Confirmed at runtime ({len(self.confirmed)}):")
        out += [f"  {_short(c['filename'])}:{c['line']}: {c['code']} {c['message']}\n      runtime: {c['runtime']}"
                for c in self.confirmed] or ["  none"]
        out.append(f"Not observed in this run ({len(self.not_observed)}):")
        out += [f"  {_short(n['filename'])}:{n['line']}: {n['code']} {n['message']}"
                for n in self.not_observed] or ["  none"]
        out.append(f"Missed by the static rules ({len(self.missed)}):")
        out += [f"  {_short(m['filename'])}:{m['line']}: {m['kind']}: {m['reason']}" for m in self.missed] or ["  none"]
        if self.remedies:
            out.append(f"Recompiles from a changing input size ({len(self.remedies)}):")
            out += [f"  {r.describe() if isinstance(r, Remedy) else Remedy(**r).describe()}" for r in self.remedies]
        return "\n".join(out)


class ConfirmSession:
    def __init__(self, paths=(), compile_modules: bool = False, quiet: bool = True):
        self.paths = [os.path.abspath(p) for p in paths]
        self.compile_modules = compile_modules
        self._capture = DynamoCapture(quiet=quiet)
        self._unpatch = None
        self._result: ConfirmResult | None = None

    def __enter__(self) -> "ConfirmSession":
        self._capture.start()
        if self.compile_modules:
            self._unpatch = compile_top_level_modules()
        return self

    def __exit__(self, *exc):
        if self._unpatch is not None:
            self._unpatch()
            self._unpatch = None
        self._capture.stop()
        return False

    @property
    def graph_breaks(self) -> list[GraphBreak]:
        return list(self._capture.graph_breaks)

    @property
    def compiles(self) -> list[Compile]:
        return self._capture.compiles

    def result(self) -> ConfirmResult:
        if self._result is None:
            self._result = match_findings(self.graph_breaks, self.compiles, self.paths)
        return self._result

    def report(self, file=None, output_format: str = "text") -> ConfirmResult:
        """Print the three lists (text or JSON) and return them."""
        result = self.result()
        file = sys.stdout if file is None else file
        print(result.to_json() if output_format == "json" else result.format_text(), file=file)
        return result


def runtime_events(graph_breaks, compiles, known_files) -> tuple[list[RuntimeEvent], list[Remedy]]:
    """Breaks and guarded user lines as located events; size-driven recompiles as remedies."""
    events: list[RuntimeEvent] = []
    seen = set()
    for brk in graph_breaks:
        key = ("graph break", os.path.abspath(brk.filename), brk.line)
        if key not in seen:
            seen.add(key)
            reason = brk.reason + (f" ({brk.detail})" if brk.detail else "")
            events.append(RuntimeEvent("graph break", key[1], brk.line, reason))
    remedies: list[Remedy] = []
    remedy_keys = set()
    for compile_ in compiles:
        if not compile_.is_recompile:
            continue
        reason = " ".join(compile_.recompile_reason.split(" (user code shown is first use")[0].split())
        for fragment, line in compile_.guard_locations:
            filename = next((f for f in known_files if path_matches(fragment, f)), None)
            if filename is None and os.path.exists(fragment):
                filename = os.path.abspath(fragment)
            if filename is None or is_library_file(filename):
                continue
            key = ("recompile", filename, line)
            if key not in seen:
                seen.add(key)
                events.append(RuntimeEvent("recompile", filename, line, f"{compile_.co_name}: {reason}"))
        # A resume function's locals are intermediates of the user function, not arguments one can mark.
        mismatches = [] if compile_.co_name.startswith("torch_dynamo_resume_in_") else compile_.size_mismatches()
        for mismatch in mismatches:
            name = mismatch["name"]
            if name.startswith("___"):     # an intermediate of a resume function, not a user argument
                continue
            key = (compile_.co_filename, compile_.co_name, name, mismatch["dim"])
            if key in remedy_keys:
                for remedy in remedies:
                    if (remedy.filename, remedy.function, remedy.argument, remedy.dim) == key:
                        if mismatch["actual"] not in remedy.sizes_seen:
                            remedy.sizes_seen.append(mismatch["actual"])
                continue
            remedy_keys.add(key)
            source = f"L['{name}']" if name.isidentifier() else name
            remedies.append(Remedy(compile_.co_filename, compile_.co_firstlineno, compile_.function, name,
                                   mismatch["dim"], [mismatch["expected"], mismatch["actual"]],
                                   f"torch._dynamo.mark_dynamic({name}, {mismatch['dim']})",
                                   f"torch._dynamo.maybe_mark_dynamic({name}, {mismatch['dim']})",
                                   f"TORCH_COMPILE_DYNAMIC_SOURCES=\"{source}:{mismatch['dim']}\""))
    return events, remedies


def match_findings(graph_breaks, compiles, paths=()) -> ConfirmResult:
    from dynlint.api import check_file

    user_files = []
    candidates = list(paths) + [b.filename for b in graph_breaks] + [c.co_filename for c in compiles]
    for filename in candidates:
        filename = os.path.abspath(filename)
        if filename not in user_files and os.path.isfile(filename) and not is_library_file(filename):
            user_files.append(filename)
    events, remedies = runtime_events(graph_breaks, compiles, user_files)
    for event in events:
        if event.filename not in user_files and os.path.isfile(event.filename):
            user_files.append(event.filename)

    findings = []
    for filename in user_files:
        for finding in check_file(filename):
            if finding.code.startswith(CONFIRMABLE_PREFIXES):
                findings.append((filename, finding))

    result = ConfirmResult(files=user_files, graph_breaks=len(graph_breaks),
                           recompiles=sum(1 for c in compiles if c.is_recompile), remedies=remedies)
    explained = set()
    for filename, finding in findings:
        hits = [e for e in events if e.filename == filename and finding.line <= e.line <= finding.end_line
                and (e.kind == "graph break" or finding.code.startswith("DYN2") or e.line == finding.line)]
        entry = {"code": finding.code, "filename": filename, "line": finding.line, "message": finding.message}
        if hits:
            explained.update(id(e) for e in hits)
            result.confirmed.append(dict(entry, runtime="; ".join(e.describe() for e in hits)))
        else:
            result.not_observed.append(entry)
    for event in events:
        if id(event) not in explained and event.filename in user_files:
            result.missed.append({"filename": event.filename, "line": event.line, "kind": event.kind,
                                  "reason": event.reason})
    return result


def compile_top_level_modules():
    """Route every outermost ``nn.Module`` call through ``module.compile(backend="eager")``.

    Returns the function that undoes it.  Only calls made while no other module
    call is running are compiled (the model, not each layer); modules keep their
    compiled entry point only until the undo.
    """
    import torch
    import torch.nn as nn

    original_call = nn.Module.__call__
    compiled_here: list = []
    depth = [0]

    def call(self, *args, **kwargs):
        if torch.compiler.is_compiling() or depth[0]:
            return original_call(self, *args, **kwargs)
        if getattr(self, "_compiled_call_impl", None) is None:
            compiled_here.append((self, "_compiled_call_impl" in self.__dict__))
            self.compile(backend="eager")
        depth[0] += 1
        try:
            return original_call(self, *args, **kwargs)
        finally:
            depth[0] -= 1

    nn.Module.__call__ = call

    def undo():
        nn.Module.__call__ = original_call
        for module, had_own in compiled_here:
            if had_own:
                module.__dict__["_compiled_call_impl"] = None
            else:
                module.__dict__.pop("_compiled_call_impl", None)

    return undo


def _short(filename: str) -> str:
    try:
        relative = os.path.relpath(filename)
    except ValueError:
        return filename
    return filename if relative.startswith("..") else relative
