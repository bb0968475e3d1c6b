"""Library entry points of the static checker (no torch, no libcst here).

``check_source`` is the whole pipeline for one file: decode, parse once with
the stdlib ``ast``, run every rule in one pass (``dynlint.checker``), then
apply rule selection and ``# noqa`` comments.
"""

from __future__ import annotations

import ast
import io
import re
import tokenize
from pathlib import Path

from dynlint.config import Settings
from dynlint.diagnostics import Finding

_DEFAULT_SETTINGS = Settings()

# flake8-compatible: "# noqa", "# noqa: DYN101", "# noqa:DYN101,DYN202".
_NOQA_RE = re.compile(r"#\s*noqa(?::[\s]?(?P<codes>[A-Z]+[0-9]+(?:[,\s]+[A-Z]+[0-9]+)*))?", re.IGNORECASE)
_FILE_EXEMPT_RE = re.compile(r"^\s*#\s*dynlint\s*:\s*noqa\s*$", re.IGNORECASE | re.MULTILINE)
_CODE_SPLIT_RE = re.compile(r"[,\s]+")


LINE_BREAK_RE = re.compile(r"\r\n|\r|\n")  # the line breaks Python's tokenizer counts


class SourceError(Exception):
    """The file cannot be read, decoded or parsed; the message says why."""

    def __init__(self, message: str, line: int = 1):
        super().__init__(message)
        self.line = line


def split_lines(text: str) -> list[str]:
    """Lines as Python's tokenizer counts them (str.splitlines also breaks at form feeds etc.)."""
    lines = LINE_BREAK_RE.split(text)
    if lines and lines[-1] == "":
        lines.pop()
    return lines


def decode_source(data: bytes) -> str:
    """Decode Python source bytes the way the interpreter does (BOM, coding cookie)."""
    try:
        encoding, _ = tokenize.detect_encoding(io.BytesIO(data).readline)
    except SyntaxError as exc:
        raise SourceError(f"cannot determine encoding: {exc.msg if hasattr(exc, 'msg') else exc}") from None
    try:
        text = data.decode(encoding)
    except (UnicodeDecodeError, LookupError) as exc:
        raise SourceError(f"cannot decode as {encoding}: {exc.reason if hasattr(exc, 'reason') else exc}") from None
    if text.startswith("\ufeff"):
        text = text[1:]
    return text


def parse_source(text: str, filename: str = "<string>") -> ast.Module:
    try:
        return ast.parse(text, filename=filename)
    except SyntaxError as exc:
        where = f" at line {exc.lineno}" if exc.lineno else ""
        raise SourceError(f"syntax error{where}: {exc.msg}", exc.lineno or 1) from None
    except (ValueError, TypeError) as exc:  # e.g. null bytes
        raise SourceError(f"cannot parse: {exc}") from None
    except (RecursionError, MemoryError):
        raise SourceError("too deeply nested for the Python parser") from None


def parse_error_finding(message: str, line: int = 1) -> Finding:
    return Finding("DYN000", f"cannot check this file: {message}", line, 0, line, 0)


def check_tree(tree: ast.AST, lines: list[str], settings: Settings = _DEFAULT_SETTINGS,
               enabled: frozenset[str] | None = None) -> list[Finding]:
    """Run every enabled rule over an already parsed module (used by flake8). No noqa handling."""
    from dynlint.checker import analyze

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
        return [_with_name(parse_error_finding(str(exc), exc.line), filename)] if "DYN000" in enabled else []
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
    return check_source(data, str(path), settings, relpath)


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


def apply_noqa(findings: list[Finding], lines: list[str]) -> list[Finding]:
    kept = []
    for finding in findings:
        index = finding.line - 1
        codes = noqa_codes(lines[index]) if 0 <= index < len(lines) else None
        if codes is None or (codes and finding.code not in codes):
            kept.append(finding)
    return kept


def _with_name(finding: Finding, filename: str) -> Finding:
    object.__setattr__(finding, "filename", filename)
    return finding
