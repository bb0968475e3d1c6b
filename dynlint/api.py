"""Library entry points of the static checker (no torch, no libcst here).

``check_source`` is the whole pipeline for one file: decode, parse once with
the stdlib ``ast``, run every rule in one pass (``dynlint.checker``), then
apply rule selection and ``# noqa`` comments.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

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


def check_tree(tree: ast.AST, lines: list[str], settings: Settings = _DEFAULT_SETTINGS,
               enabled: frozenset[str] | None = None) -> list[Finding]:
    """Run every enabled rule over an already parsed module (used by flake8). No noqa handling."""
    from dynlint.analysis.walker import analyze

    if enabled is None:
        enabled = settings.enabled_codes()
    try:
        findings = analyze(tree, lines, dynamic_ops=settings.extend_dynamic_ops)
    except RecursionError:
        return [parse_error_finding("too deeply nested to analyze")]
    return [f for f in findings if f.code in enabled]


def check_source(source: str | bytes, filename: str = "<string>", settings: Settings = _DEFAULT_SETTINGS,
                 relpath: str | None = None) -> list[Finding]:
    """All findings for one file's source, sorted, with noqa applied."""
    enabled = settings.enabled_codes(relpath)
    try:
        text = decode_source(source) if isinstance(source, bytes) else source
        tree = parse_source(text, filename)
    except SourceError as exc:
        return [_with_name(source_error_finding(exc), filename)] if "DYN000" in enabled else []
    if "dynlint" in text and _FILE_EXEMPT_RE.search(text):
        return []
    lines = split_lines(text)
    findings = check_tree(tree, lines, settings, enabled)
    findings = apply_noqa(findings, lines)
    findings.sort(key=Finding.sort_key)
    return [_with_name(f, filename) for f in findings]


def check_file(path: str | Path, settings: Settings = _DEFAULT_SETTINGS, relpath: str | None = None) -> list[Finding]:
    try:
        data = Path(path).read_bytes()
    except OSError as exc:
        reason = exc.strerror or type(exc).__name__
        return [_with_name(parse_error_finding(f"cannot read: {reason}"), str(path))]
    return check_bytes(data, str(path), relpath or str(path), settings).findings


def check_path(path: str, relpath: str, settings: Settings) -> FileResult:
    """Check one file: its findings (noqa applied) and the source lines they point at."""
    try:
        with open(path, "rb") as handle:
            data = handle.read()
    except OSError:
        return FileResult(path, relpath, check_file(path, settings, relpath))  # DYN000 naming why
    return check_bytes(data, path, relpath, settings)


def check_bytes(data: bytes, path: str, relpath: str, settings: Settings) -> FileResult:
    """Check one file's bytes: a Python file, or a Jupyter notebook (its code cells as one
    module; ``FileResult.cells`` maps the lines back to cells)."""
    try:
        document = read_document(data, path)
    except SourceError as exc:
        enabled = "DYN000" in settings.enabled_codes(relpath)
        return FileResult(path, relpath, [_with_name(source_error_finding(exc), path)] if enabled else [])
    text = document.text
    findings = check_source(text, path, settings, relpath)
    lines: dict[int, str] = {}
    if findings:
        source_lines = LINE_BREAK_RE.split(text)
        for finding in findings:
            if 1 <= finding.line <= len(source_lines):
                lines[finding.line] = source_lines[finding.line - 1]
    return FileResult(path, relpath, findings, lines, document.cells)


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


def apply_noqa(findings: list[Finding], lines: list[str]) -> list[Finding]:
    kept = []
    for finding in findings:
        index = finding.line - 1
        codes = noqa_codes(lines[index]) if 0 <= index < len(lines) else None
        if not noqa_suppresses(codes, finding.code):
            kept.append(finding)
    return kept


def _with_name(finding: Finding, filename: str) -> Finding:
    object.__setattr__(finding, "filename", filename)
    return finding
