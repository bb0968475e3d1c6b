"""Confirm static findings at runtime: ``with dynlint.runtime.confirm() as session: ...``.

While the block runs, every graph break (reason + user file:line) and every
recompile (code object + guard reason) of torch.compile'd code is captured.
Afterwards the static linter runs over the user files involved and the two are
matched:

* confirmed: a finding at a line that broke the graph (any DYN1xx/DYN2xx/DYN3xx)
  or that a recompile guard points at (DYN2xx size branches and loops); a
  DataLoader that keeps a short last batch (DYN401) when the batch dimension
  shrank;
* not observed: a finding whose line neither broke nor recompiled in this run;
* missed: a runtime break or guarded line in user code with no finding (a rule
  gap) -- not a recompile that follows a break a finding already explains.

The lint half honours the project's settings (the nearest ``[tool.dynlint]``
from the first path: select/ignore, per-file-ignores, extend-dynamic-ops,
exclude).  When the run failed, or compiled nothing, findings that were not
confirmed are "not judged" rather than "not observed": the run proves nothing
about them.

Recompiles caused by a changing input size get the exact remedy, from the guard:
``torch._dynamo.mark_dynamic(x, 0)`` / ``maybe_mark_dynamic`` or
``TORCH_COMPILE_DYNAMIC_SOURCES="L['x']:0"``.
"""

from __future__ import annotations

import json
import os
import re
import sys
from dataclasses import asdict, dataclass, field

from dynlint.runtime.dynamo_events import Compile, DynamoCapture, GraphBreak, is_library_file, path_matches

CONFIRMABLE_PREFIXES = ("DYN1", "DYN2", "DYN3")
SHORT_BATCH_CODE = "DYN401"      # a DataLoader keeping a short last batch
_RESUME_LINE_RE = re.compile(r"^torch_dynamo_resume_in_\w+?_at_(?P<line>\d+)$")

STATUS_OK = "ok"
STATUS_FAILED = "failed"
STATUS_NOTHING_COMPILED = "nothing compiled"


def confirm(paths=(), compile_modules: bool = False, quiet: bool = True, settings=None) -> "ConfirmSession":
    """A context manager capturing graph breaks and recompiles; ``session.report()`` afterwards.

    ``paths``: source files to lint even if no event happened in them (e.g. the script).
    ``compile_modules``: wrap top-level ``nn.Module`` calls in ``torch.compile(backend="eager")``.
    ``settings``: a ``dynlint.config.Settings``; default: the project's, loaded from the first path.
    """
    return ConfirmSession(paths, compile_modules, quiet, settings)


@dataclass
class RuntimeEvent:
    kind: str            # "graph break" | "recompile"
    filename: str
    line: int
    reason: str
    after_break: int | None = None    # a recompile of the code resuming after a graph break at this line

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
    short_last_batch: list = field(default_factory=list)   # "file:line" of DYN401 loaders it points to

    def describe(self) -> str:
        sizes = ", ".join(str(s) for s in self.sizes_seen)
        text = (f"{_short(self.filename)}:{self.line} {self.function}(): argument '{self.argument}' dim {self.dim} "
                f"changed size ({sizes}).")
        if self.short_last_batch:
            loaders = ", ".join(self.short_last_batch)
            text += (f" Likely the short last batch of the DataLoader at {loaders} ({SHORT_BATCH_CODE}): "
                     f"pass drop_last=True there (or pad the last batch).")
        return (text + f" {'Or, b' if self.short_last_batch else 'B'}efore the call: {self.mark_dynamic}  "
                f"(or {self.maybe_mark_dynamic}; or set {self.dynamic_sources})")


@dataclass
class ConfirmResult:
    confirmed: list = field(default_factory=list)      # {code, filename, line, message, runtime}
    not_observed: list = field(default_factory=list)   # {code, filename, line, message}
    missed: list = field(default_factory=list)         # {filename, line, kind, reason}
    remedies: list = field(default_factory=list)       # Remedy
    files: list = field(default_factory=list)
    graph_breaks: int = 0
    recompiles: int = 0
    status: str = STATUS_OK                            # "ok" | "failed" | "nothing compiled"
    failure: str = ""                                  # why the run failed, when it did
    not_judged: list = field(default_factory=list)     # findings the run cannot speak for (failed / nothing compiled)
    notes: list = field(default_factory=list)          # hints, e.g. to use --compile

    def to_dict(self) -> dict:
        data = asdict(self)
        return data

    def to_json(self, indent: int | None = 2) -> str:
        return json.dumps(self.to_dict(), indent=indent)

    def format_text(self) -> str:
        out = [f"dynlint confirm: {self.graph_breaks} graph break(s), {self.recompiles} recompile(s) observed; "
               f"{len(self.files)} file(s) linted"]
        if self.status == STATUS_FAILED:
            out.append(f"The run failed ({self.failure}): findings it did not confirm are not judged, "
                       f"none is cleared.")
        out += self.notes
        out.append("")
        out.append(f"Confirmed at runtime ({len(self.confirmed)}):")
        out += [f"  {_short(c['filename'])}:{c['line']}: {c['code']} {c['message']}\n      runtime: {c['runtime']}"
                for c in self.confirmed] or ["  none"]
        if self.status == STATUS_OK:
            out.append(f"Not observed in this run ({len(self.not_observed)}):")
            out += [f"  {_short(n['filename'])}:{n['line']}: {n['code']} {n['message']}"
                    for n in self.not_observed] or ["  none"]
        else:
            why = "the run failed" if self.status == STATUS_FAILED else "nothing was compiled"
            out.append(f"Not judged ({why}) ({len(self.not_judged)}):")
            out += [f"  {_short(n['filename'])}:{n['line']}: {n['code']} {n['message']}"
                    for n in self.not_judged] or ["  none"]
        out.append(f"Missed by the static rules ({len(self.missed)}):")
        out += [f"  {_short(m['filename'])}:{m['line']}: {m['kind']}: {m['reason']}" for m in self.missed] or ["  none"]
        if self.remedies:
            out.append(f"Recompiles from a changing input size ({len(self.remedies)}):")
            out += [f"  {r.describe() if isinstance(r, Remedy) else Remedy(**r).describe()}" for r in self.remedies]
        return "\n".join(out)


class ConfirmSession:
    def __init__(self, paths=(), compile_modules: bool = False, quiet: bool = True, settings=None):
        self.paths = [os.path.abspath(p) for p in paths]
        self.compile_modules = compile_modules
        self.settings = settings
        self.failure = ""
        self._capture = DynamoCapture(quiet=quiet)
        self._unpatch = None
        self._result: ConfirmResult | None = None

    def mark_failed(self, reason: str) -> None:
        """Record that the code under test failed: unconfirmed findings are then not judged."""
        self.failure = reason
        self._result = None

    def __enter__(self) -> "ConfirmSession":
        self._capture.start()
        if self.compile_modules:
            self._unpatch = compile_top_level_modules()
        return self

    def __exit__(self, exc_type, exc, traceback):
        if self._unpatch is not None:
            self._unpatch()
            self._unpatch = None
        self._capture.stop()
        if exc_type is not None and not self.failure:
            text = str(exc).strip().splitlines()
            self.failure = f"{exc_type.__name__}" + (f": {text[0]}" if text else "")
        return False

    @property
    def graph_breaks(self) -> list[GraphBreak]:
        return list(self._capture.graph_breaks)

    @property
    def compiles(self) -> list[Compile]:
        return self._capture.compiles

    def result(self) -> ConfirmResult:
        if self._result is None:
            self._result = match_findings(self.graph_breaks, self.compiles, self.paths, settings=self.settings,
                                          failure=self.failure, compile_modules=self.compile_modules)
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
        reason = _guard_text(compile_)
        resumed = _RESUME_LINE_RE.match(compile_.co_name)
        after_break = int(resumed.group("line")) if resumed else None
        for fragment, line in compile_.guard_locations:
            filename = next((f for f in known_files if path_matches(fragment, f)), None)
            if filename is None and os.path.exists(fragment):
                filename = os.path.abspath(fragment)
            if filename is None or is_library_file(filename):
                continue
            key = ("recompile", filename, line)
            if key not in seen:
                seen.add(key)
                events.append(RuntimeEvent("recompile", filename, line, f"{compile_.function}(): guard {reason}",
                                           after_break if os.path.abspath(compile_.co_filename) == filename
                                           else None))
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
            source = _dynamic_source(name)
            remedies.append(Remedy(compile_.co_filename, compile_.co_firstlineno, compile_.function, name,
                                   mismatch["dim"], [mismatch["expected"], mismatch["actual"]],
                                   f"torch._dynamo.mark_dynamic({name}, {mismatch['dim']})",
                                   f"torch._dynamo.maybe_mark_dynamic({name}, {mismatch['dim']})",
                                   f"TORCH_COMPILE_DYNAMIC_SOURCES=\"{source}:{mismatch['dim']}\""))
    return events, remedies


def match_findings(graph_breaks, compiles, paths=(), settings=None, failure: str = "",
                   compile_modules: bool = False) -> ConfirmResult:
    from dynlint.api import check_source
    from dynlint.config import load_settings
    from dynlint.discovery import relative_to_root

    if settings is None:
        settings = load_settings(list(paths[:1]))
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
    # The project's exclude globs leave files out of linting; their events are not rule gaps either.
    linted = [f for f in user_files if not settings.is_excluded(relative_to_root(f, settings.root))]

    findings = []
    suppressed: set = set()       # (file, line) a rule flags but the project silenced: not a rule gap
    for filename in linted:
        try:
            with open(filename, "rb") as handle:
                source = handle.read()
        except OSError:
            continue
        reported = check_source(source, filename, settings, relative_to_root(filename, settings.root))
        for finding in reported:
            if finding.code.startswith(CONFIRMABLE_PREFIXES) or finding.code == SHORT_BATCH_CODE:
                findings.append((filename, finding))
        suppressed.update((filename, line) for line in _flagged_lines(source, settings)
                          - {line for f in reported for line in range(f.line, f.end_line + 1)})

    recompiles = sum(1 for c in compiles if c.is_recompile)
    status = STATUS_FAILED if failure else STATUS_OK if compiles or graph_breaks else STATUS_NOTHING_COMPILED
    result = ConfirmResult(files=linted, graph_breaks=len(graph_breaks), recompiles=recompiles, remedies=remedies,
                           status=status, failure=failure)
    if status == STATUS_NOTHING_COMPILED:
        result.notes.append("Nothing was compiled in this run, so nothing could be confirmed: the code calls no "
                            "torch.compile'd function or module."
                            + ("" if compile_modules else " Run again with --compile (compile_modules=True) to "
                               "compile its top-level nn.Module calls with torch.compile(backend='eager')."))

    loaders = [(filename, finding) for filename, finding in findings if finding.code == SHORT_BATCH_CODE]
    short_batch_remedies = [r for r in remedies if r.dim == 0 and len(r.sizes_seen) > 1
                            and min(r.sizes_seen[1:]) < r.sizes_seen[0]]
    for remedy in short_batch_remedies:
        remedy.short_last_batch = [f"{_short(filename)}:{finding.line}" for filename, finding in loaders]

    explained = set()
    for filename, finding in findings:
        entry = {"code": finding.code, "filename": filename, "line": finding.line, "message": finding.message}
        if finding.code == SHORT_BATCH_CODE:
            hits = []
            runtime = "; ".join(f"recompile: {r.function}() argument '{r.argument}' dim 0 changed size "
                                f"({', '.join(str(n) for n in r.sizes_seen)}), a shorter batch"
                                for r in short_batch_remedies)
        else:
            hits = [e for e in events if e.filename == filename and finding.line <= e.line <= finding.end_line
                    and (e.kind == "graph break" or finding.code.startswith("DYN2") or e.line == finding.line)]
            # A recompile of the code that resumes after this line's break follows from it, not from a rule gap.
            followers = [e for e in events if e.kind == "recompile" and e.filename == filename
                         and e.after_break is not None and finding.line <= e.after_break <= finding.end_line
                         and e not in hits]
            if hits:
                hits += followers
            runtime = "; ".join(_unique(e.describe() for e in hits))
        if runtime:
            explained.update(id(e) for e in hits)
            result.confirmed.append(dict(entry, runtime=runtime))
        elif status == STATUS_OK:
            result.not_observed.append(entry)
        else:
            result.not_judged.append(entry)
    confirmed_breaks = {(e.filename, e.line) for e in events if id(e) in explained and e.kind == "graph break"}
    for event in events:
        if id(event) in explained or event.filename not in linted or (event.filename, event.line) in suppressed:
            continue
        if event.kind == "recompile" and event.after_break is not None \
                and (event.filename, event.after_break) in confirmed_breaks:
            continue
        result.missed.append({"filename": event.filename, "line": event.line, "kind": event.kind,
                              "reason": event.reason})
    return result


def _flagged_lines(source: bytes, settings) -> set:
    """Lines any rule flags, before selection, per-file-ignores and noqa comments."""
    from dynlint.api import SourceError, check_tree, decode_source, parse_source, split_lines
    from dynlint.codes import ALL_CODES

    try:
        text = decode_source(source)
        tree = parse_source(text)
    except SourceError:
        return set()
    findings = check_tree(tree, split_lines(text), settings, frozenset(ALL_CODES))
    return {line for f in findings for line in range(f.line, f.end_line + 1)}


def _guard_text(compile_: Compile) -> str:
    """The failed guard(s), once: without dynamo's quoted source comment and user stack."""
    texts = _unique(f.text for f in compile_.failures() if f.text)
    if texts:
        return "; ".join(texts)
    head = compile_.recompile_reason.split("\nUser stack trace:", 1)[0].split(" (user code shown is first use")[0]
    return " ".join(head.split())


def _unique(items) -> list:
    seen, out = set(), []
    for item in items:
        if item not in seen:
            seen.add(item)
            out.append(item)
    return out


def _dynamic_source(name: str) -> str:
    """The TORCH_COMPILE_DYNAMIC_SOURCES spelling of a guard's source: x -> L['x'], kwargs['a'] -> L['kwargs']['a']."""
    if name.startswith(("L[", "G[")):
        return name
    match = re.match(r"^([A-Za-z_]\w*)(.*)$", name)
    if not match:
        return name
    return f"L['{match.group(1)}']{match.group(2)}"


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
