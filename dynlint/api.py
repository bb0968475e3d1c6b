"""Library entry points of the static checker (no torch, no libcst here).

The pipeline for a run: files (``dynlint.source``: decode, one stdlib ``ast``
parse) → the walk of each file with the project table (``dynlint.analysis``:
per-function facts, rule units in ``dynlint.checks``) → the table solved from
every file's facts, files walked again while what they asked of it changes
(``dynlint.runner``) → each finding's region from the call graph → findings
filtered by selection, ``# noqa`` and region → output or fixes.

``analyze_source`` is one file's walk; ``finish`` turns its outcome into the
reported ``FileResult``.  ``check_source``/``check_file`` check one file as a
project of its own (a run of the CLI checks all its files together).
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass, field
from pathlib import Path

from dynlint.analysis.facts import CPU_VALUE, EMPTY, FileFacts, ProjectFacts
from dynlint.config import Settings
from dynlint.diagnostics import FileResult, Finding
from dynlint.source import (  # noqa: F401 - part of this module's API
    LINE_BREAK_RE, SourceError, decode_source, parse_source, read_document, split_lines,
)

_DEFAULT_SETTINGS = Settings()

# flake8-compatible: "# noqa", "# noqa: DYN101", "# noqa:DYN101,DYN202".
_NOQA_RE = re.compile(r"#\s*noqa(?::[\s]?(?P<codes>[A-Z]+[0-9]+(?:[,\s]+[A-Z]+[0-9]+)*))?", re.IGNORECASE)
_FILE_EXEMPT_RE = re.compile(r"^\s*#\s*dynlint\s*:\s*noqa\s*$", re.IGNORECASE | re.MULTILINE)
_CODE_SPLIT_RE = re.compile(r"[,\s]+")


def parse_error_finding(message: str, line: int = 1, col: int = 0, end_line: int | None = None,
                        end_col: int | None = None) -> Finding:
    return Finding("DYN000", f"cannot check this file: {message}", line, col,
                   line if end_line is None else end_line, col if end_col is None else end_col)


def source_error_finding(exc: SourceError) -> Finding:
    """DYN000 at the error's position (CPython's own, for syntax errors)."""
    return parse_error_finding(str(exc), exc.line, exc.col, exc.end_line, exc.end_col)


@dataclass
class Unit:
    """One file of a run, as the project index names it."""

    path: str
    relpath: str
    module: str = ""
    is_package: bool = False


@dataclass
class Outcome:
    """One file walked under one project table: picklable (pool workers return it) and
    JSON-able (the results cache stores it, see ``dynlint.cache``)."""

    findings: list[Finding]                                  # selection and noqa applied
    # per finding: function id, context, and how it is kept (see walker.FileAnalysis.places)
    places: list[tuple[str, str | None, bool | str]] = field(default_factory=list)
    facts: FileFacts | None = None                           # None: the file could not be walked
    consumed: dict = field(default_factory=dict)             # question -> answer it got from the table
    imports_torch: bool = False
    lines: dict[int, str] = field(default_factory=dict)      # source of the lines findings point at
    cells: tuple[tuple[int, int], ...] | None = None         # notebooks: see FileResult.cells
    exempt: bool = False                                     # `# dynlint: noqa`: findings dropped
    # in this process only (never pickled or cached): the walker, kept to walk functions again
    units: dict | None = field(default=None, repr=False, compare=False)
    walker: object = field(default=None, repr=False, compare=False)

    def __getstate__(self):  # pool workers send outcomes back: the walker stays behind
        state = dict(self.__dict__)
        state["units"] = state["walker"] = None
        return state


def analyze_tree(tree: ast.AST, lines: list[str], settings: Settings, relpath: str | None, *, module: str = "",
                 is_package: bool = False, table: ProjectFacts = EMPTY, project_roots: frozenset[str] = frozenset(),
                 enabled: frozenset[str] | None = None, noqa: bool = True) -> Outcome:
    """Walk an already parsed file with ``table``; selection (``enabled``, by default the
    settings' codes for ``relpath``) and, with ``noqa``, ``# noqa`` comments applied."""
    from dynlint.analysis.walker import analyze_file

    try:
        analysis = analyze_file(tree, lines, settings.extend_dynamic_ops, module=module, is_package=is_package,
                                facts=table, project_roots=project_roots)
    except RecursionError:
        return _too_deep(settings, relpath, enabled)
    return outcome_of(analysis, lines, settings, relpath, enabled, noqa)


def rewalk(outcome: "Outcome", table: ProjectFacts, units, lines: list[str], settings: Settings,
           relpath: str | None, enabled: frozenset[str] | None = None, noqa: bool = True) -> "Outcome":
    """Walk some functions of an already walked file again with a new table (see
    ``Analyzer.rewalk``); the outcome is the one a whole walk with ``table`` gives."""
    cells, exempt = outcome.cells, outcome.exempt
    try:
        analysis = outcome.walker.rewalk(table, units)
    except RecursionError:
        return _too_deep(settings, relpath, enabled)
    new = outcome_of(analysis, lines, settings, relpath, enabled, noqa)
    if exempt:
        new.findings, new.places, new.lines = [], [], {}
    new.cells, new.exempt = cells, exempt
    return new


def _too_deep(settings, relpath, enabled) -> "Outcome":
    if enabled is None:
        enabled = settings.enabled_codes(relpath)
    return Outcome([parse_error_finding("too deeply nested to analyze")] if "DYN000" in enabled else [])


def outcome_of(analysis, lines: list[str], settings: Settings, relpath: str | None,
               enabled: frozenset[str] | None = None, noqa: bool = True) -> "Outcome":
    """A walk's results as reported: selection (``enabled``, by default the settings' codes for
    ``relpath``) and, with ``noqa``, ``# noqa`` comments applied."""
    if enabled is None:
        enabled = settings.enabled_codes(relpath)
    kept, places = [], []
    for finding, place in zip(analysis.findings, analysis.places):
        if finding.code in enabled and not (noqa and _suppressed(finding, lines)):
            kept.append(finding)
            places.append(place)
    source_lines = {f.line: lines[f.line - 1] for f in kept if 1 <= f.line <= len(lines)}
    outcome = Outcome(kept, places, analysis.facts, analysis.consumed, analysis.imports_torch, source_lines)
    outcome.units, outcome.walker = analysis.units, analysis.walker
    return outcome


def analyze_source(source: str | bytes | None, filename: str, settings: Settings, relpath: str | None, *,
                   module: str = "", is_package: bool = False, table: ProjectFacts = EMPTY,
                   project_roots: frozenset[str] = frozenset(), parsed=None, enabled: frozenset[str] | None = None,
                   noqa: bool = True) -> Outcome:
    """Decode, parse and walk one file's source.  ``parsed`` (tree, lines) skips the parse."""
    if parsed is None:
        text = None
        cells = None
        try:
            if isinstance(source, bytes):
                document = read_document(source, filename)  # a Python file, or a notebook's code cells
                text, cells = document.text, document.cells
            else:
                text = source
            tree = parse_source(text, filename)
        except SourceError as exc:
            if "DYN000" not in (enabled if enabled is not None else settings.enabled_codes(relpath)):
                return Outcome([], cells=cells)
            finding = source_error_finding(exc)
            lines = split_lines(text) if text is not None else []
            shown = {finding.line: lines[finding.line - 1]} if 1 <= finding.line <= len(lines) else {}
            return Outcome([finding], lines=shown, cells=cells)
        lines = split_lines(text)
        exempt = "dynlint" in text and _FILE_EXEMPT_RE.search(text) is not None
    else:
        tree, lines, exempt, cells = parsed
    outcome = analyze_tree(tree, lines, settings, relpath, module=module, is_package=is_package, table=table,
                           project_roots=project_roots, enabled=enabled, noqa=noqa)
    if exempt:  # `# dynlint: noqa` silences the file; what it tells other files still counts
        outcome.findings, outcome.places, outcome.lines = [], [], {}
    outcome.cells, outcome.exempt = cells, exempt
    return outcome


def parse_for_reuse(source: str | bytes, filename: str):
    """(tree, lines, exempt, cells) for ``analyze_source(parsed=...)``, or None when it does not parse."""
    try:
        if isinstance(source, bytes):
            document = read_document(source, filename)
            text, cells = document.text, document.cells
        else:
            text, cells = source, None
        tree = parse_source(text, filename)
    except SourceError:
        return None
    return tree, split_lines(text), "dynlint" in text and _FILE_EXEMPT_RE.search(text) is not None, cells


def finish(outcome: Outcome, path: str, relpath: str, settings: Settings, regions: dict[str, str]) -> FileResult:
    """The reported result: each finding labelled with its region, device hazards in host-only
    code (and in files that never import torch) dropped unless ``include_host``, sorted."""
    from dynlint.analysis.regions import COMPILED, HOST_REGION, TRAINING, UNKNOWN, region_of
    from dynlint.checks import Scope, load_all

    rules = load_all()
    kept = []
    places = outcome.places or [("", None, False)] * len(outcome.findings)
    for finding, (function_id, context, step_only) in zip(outcome.findings, places):
        rule = rules.get(finding.code)
        region = region_of(function_id, context, regions) if function_id else ""
        if step_only == CPU_VALUE:
            if region in (TRAINING, UNKNOWN):
                # a CPU tensor read in a training loop, or in code nothing compiled reaches: no device sync,
                # host work (torchreid's FLOP-counting hooks, fairseq2's process-group meshes)
                region = HOST_REGION
        elif step_only and (region not in (COMPILED, TRAINING) or not outcome.imports_torch):
            continue  # weak evidence: kept only in the step, in a file that imports torch
        # a file that never imports torch has device hazards only where torch code of the project
        # reaches it (a helper module its model calls with tensors)
        torch_code = outcome.imports_torch or region in (COMPILED, TRAINING)
        if rule is not None and rule.scope == Scope.DEVICE:
            if not torch_code:
                continue
            if region == HOST_REGION and not settings.include_host:
                continue
        elif rule is not None and rule.scope == Scope.COMPILED:
            if not torch_code or region != COMPILED:
                continue  # harmless unless torch.compile traces it
        elif rule is not None and rule.scope == Scope.STEP:
            if not torch_code or region not in (COMPILED, TRAINING):
                continue  # specializes only where a step is traced
        object.__setattr__(finding, "region", region)
        object.__setattr__(finding, "filename", path)
        kept.append(finding)
    kept.sort(key=Finding.sort_key)
    lines = {f.line: outcome.lines[f.line] for f in kept if f.line in outcome.lines}
    return FileResult(path, relpath, kept, lines, outcome.cells)


# --------------------------------------------------------------------------- one file as a project
def check_source(source: str | bytes, filename: str = "<string>", settings: Settings = _DEFAULT_SETTINGS,
                 relpath: str | None = None, table: ProjectFacts | None = None) -> list[Finding]:
    """All findings for one file's source, sorted, with noqa applied.  The file is its own
    project (its functions' facts solved among themselves); ``table`` gives the facts of a
    wider project instead (the fixer re-checking a file of a checked project)."""
    from dynlint.runner import check_units

    unit = Unit(filename, relpath if relpath is not None else filename)
    if table is not None:
        unit.module = table.module_of.get(unit.relpath, "")
    result = check_units([unit], settings, sources={0: source}, base_table=table)[0]
    for finding in result.findings:
        object.__setattr__(finding, "filename", filename)
    return result.findings


def check_bytes(data: bytes, path: str, relpath: str, settings: Settings) -> FileResult:
    """One file's source (read elsewhere, e.g. stdin) as a project of its own."""
    from dynlint.runner import check_units, make_units

    return check_units(make_units([(path, relpath)]), settings, sources={0: data})[0]


def check_file(path: str | Path, settings: Settings = _DEFAULT_SETTINGS, relpath: str | None = None) -> list[Finding]:
    try:
        data = Path(path).read_bytes()
    except OSError as exc:
        reason = exc.strerror or type(exc).__name__
        return [_with_name(parse_error_finding(f"cannot read: {reason}"), str(path))]
    return check_source(data, str(path), settings, relpath)


def check_tree(tree: ast.AST, lines: list[str], settings: Settings = _DEFAULT_SETTINGS,
               enabled: frozenset[str] | None = None, *, filename: str = "", table: ProjectFacts | None = None
               ) -> list[Finding]:
    """Findings for an already parsed module (used by flake8; no noqa handling: flake8 does it).
    With ``table`` (the project facts of the last ``dynlint check``), the file is read as part of
    that project; without, as a project of its own."""
    from dynlint.runner import check_units

    from dynlint.analysis.modules import is_package_init, module_name

    unit = Unit(filename or "<string>", filename or "<string>")
    if filename:  # the file's module name, as a run of dynlint check names it
        unit.module = (table.module_of.get(filename) if table is not None else None) or module_name(filename)
        unit.is_package = is_package_init(filename)
    result = check_units([unit], settings, parsed={0: (tree, lines, False, None)}, base_table=table,
                         enabled=enabled, noqa=False)[0]
    return result.findings


def noqa_codes(line: str) -> frozenset[str] | None:
    """None when the line has no noqa; an empty set for a bare ``# noqa`` (all codes)."""
    if "noqa" not in line.lower():
        return None
    match = _NOQA_RE.search(line)
    if match is None:
        return None
    codes = match.group("codes")
    if not codes:
        return frozenset()
    return frozenset(c.upper() for c in _CODE_SPLIT_RE.split(codes.strip()) if c)


def noqa_suppresses(codes: frozenset[str] | None, code: str) -> bool:
    """Whether a line's noqa ``codes`` (from ``noqa_codes``) silence ``code``: a bare noqa
    silences everything, a listed code silences itself and every code it prefixes
    (``# noqa: DYN1`` covers DYN101), as in flake8."""
    if codes is None:
        return False
    return not codes or any(code.startswith(listed) for listed in codes)


def _suppressed(finding: Finding, lines: list[str]) -> bool:
    index = finding.line - 1
    return noqa_suppresses(noqa_codes(lines[index]) if 0 <= index < len(lines) else None, finding.code)


def apply_noqa(findings: list[Finding], lines: list[str]) -> list[Finding]:
    return [f for f in findings if not _suppressed(f, lines)]


def _with_name(finding: Finding, filename: str) -> Finding:
    object.__setattr__(finding, "filename", filename)
    return finding
