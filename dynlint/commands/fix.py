"""The fixing side of the CLI: ``dynlint check --fix/--diff/--add-noqa`` and ``dynlint fix``.

``add_fix_arguments`` adds the flags to a parser; ``run_fix`` runs them over
the files ``dynlint check`` discovered.  Import-light: libcst is imported (via
dynlint.fixer) only when fixing actually runs.
"""

from __future__ import annotations

import argparse
import difflib
import io
import re
import sys
from collections import Counter
from typing import Iterable, TextIO

from dynlint.codes import RULES
from dynlint.diagnostics import Applicability, FileResult
from dynlint.config import Settings
from dynlint.discovery import STDIN

_TEXT_FORMATS = ("full", "concise")


def add_fix_arguments(parser: argparse.ArgumentParser, *, fix_flag: bool = True) -> None:
    group = parser.add_argument_group("fixing")
    if fix_flag:
        group.add_argument("--fix", action="store_true", help="apply safe fixes in place, then report what remains")
    group.add_argument("--unsafe-fixes", action="store_true",
                       help="also apply (and mark as fixable) fixes that can change results; see each rule's "
                            "'Fix safety'")
    group.add_argument("--diff", action="store_true",
                       help="print the fixes as a unified diff instead of writing them (exit 1 if there is a diff)")
    group.add_argument("--show-fixes", action="store_true", help="list the fixes that were applied")
    group.add_argument("--exit-non-zero-on-fix", action="store_true",
                       help="exit 1 when a file was fixed, even if no findings remain")
    group.add_argument("--add-noqa", action="store_true",
                       help="append '# noqa: CODE' to every line with a finding (for adopting dynlint)")


def wants_fix(args: argparse.Namespace) -> bool:
    return bool(getattr(args, "fix", False) or getattr(args, "diff", False) or getattr(args, "add_noqa", False))


def register_fix_command(subparsers, add_check_arguments, run) -> None:
    """``dynlint fix [PATH ...]``: ``dynlint check --fix`` with every other check option."""
    parser = subparsers.add_parser("fix", help="apply safe fixes (= dynlint check --fix)",
                                   description="Apply dynlint's fixes in place (dynlint check --fix).")
    add_check_arguments(parser, fix_flag=False)
    parser.set_defaults(func=run, fix=True)


def run_fix(args: argparse.Namespace, files: Iterable[tuple[str, str]], settings: Settings,
            stream: TextIO | None = None) -> int:
    """Fix (or diff, or add noqa to) ``files`` — (path, relpath) pairs — and report."""
    from dynlint.errors import UsageError

    if getattr(args, "add_noqa", False):
        if getattr(args, "fix", False) or getattr(args, "diff", False):
            raise UsageError("--add-noqa cannot be combined with --fix or --diff")
        return _run_add_noqa(files, settings)
    files = list(files)
    output_file = getattr(args, "output_file", None)
    if stream is None and output_file:
        try:
            with open(output_file, "w", encoding="utf-8") as handle:
                return _dispatch(args, files, settings, handle)
        except OSError as exc:
            raise UsageError(f"cannot write {output_file}: {exc.strerror or exc}") from None
    return _dispatch(args, files, settings, stream or sys.stdout)


def _dispatch(args, files, settings, stream) -> int:
    if [path for path, _ in files] == [STDIN]:
        return _run_stdin(args, files[0][1], settings, stream)
    if getattr(args, "diff", False):
        return _run_diff(args, files, settings, stream)
    return _run_fix_in_place(args, files, settings, stream)


def _scan(args, files, settings):
    """Check every file with the pool and the cache (as ``dynlint check`` does) and yield
    (FileResult, fixable): libcst is then paid for only on files with an applicable fix."""
    from dynlint.cache import open_cache
    from dynlint.runner import iter_results

    unsafe = getattr(args, "unsafe_fixes", False)
    jobs = getattr(args, "jobs", 0) or 0
    cache = open_cache(getattr(args, "cache_dir", None), settings, enabled=not getattr(args, "no_cache", True))
    for result in iter_results(files, settings, jobs, cache):
        fixable = any(f.fix is not None and (unsafe or f.fix.applicability == Applicability.SAFE)
                      for f in result.findings)
        yield result, fixable


def _run_fix_in_place(args, files, settings, stream) -> int:
    from dynlint.fixer import fix_file
    from dynlint.output import make_reporter

    unsafe = getattr(args, "unsafe_fixes", False)
    output_format = getattr(args, "output_format", "full")
    quiet = getattr(args, "quiet", False)
    reporter = make_reporter(output_format, stream, settings, statistics=getattr(args, "statistics", False),
                             unsafe_fixes=unsafe, quiet=quiet)
    applied_by_file: list[tuple[str, list]] = []
    skipped = 0
    reporter.start()
    for scanned, fixable in _scan(args, files, settings):
        if not fixable:
            reporter.add(scanned)
            continue
        path, relpath = scanned.path, scanned.relpath
        result = fix_file(path, settings, relpath, unsafe=unsafe, write=True)
        if result.applied:
            applied_by_file.append((path, result.applied))
        skipped += _warn_skipped(path, relpath, result.document, result.original, result.skipped)
        reporter.add(FileResult(path, relpath, result.remaining, _lines_of(result.fixed, result.remaining),
                                _cells_of(result)))
    reporter.finish()
    fixed = sum(len(applied) for _, applied in applied_by_file)
    # Machine formats keep stdout a single document: the fix summary goes to stderr.
    summary = stream if output_format in _TEXT_FORMATS else sys.stderr
    if getattr(args, "show_fixes", False):
        summary.write(_describe_fixes(applied_by_file))
    if fixed and not quiet:
        summary.write(f"Fixed {_plural(fixed, 'finding')} in {_plural(len(applied_by_file), 'file')} "
                      f"({reporter.total} remaining){_skipped_note(skipped)}.\n")
    elif skipped and not quiet:
        summary.write(f"No fixes applied{_skipped_note(skipped)}.\n")
    if getattr(args, "exit_non_zero_on_fix", False) and fixed:
        return 1
    if getattr(args, "exit_zero", False):
        return 0
    return 1 if reporter.total else 0


def _run_diff(args, files, settings, stream) -> int:
    from dynlint.fixer import fix_file
    from dynlint.output import location_text

    unsafe = getattr(args, "unsafe_fixes", False)
    fixes = changed = skipped = 0
    for scanned, fixable in _scan(args, files, settings):
        path, relpath = scanned.path, scanned.relpath
        if not fixable:
            for finding in scanned.findings:
                if finding.code == "DYN000":
                    sys.stderr.write(f"{location_text(scanned, finding)}: DYN000 {finding.message}\n")
            continue
        result = fix_file(path, settings, relpath, unsafe=unsafe, write=False)
        located = FileResult(path, relpath, result.remaining, cells=_cells_of(result))
        for finding in result.remaining:
            if finding.code == "DYN000":
                sys.stderr.write(f"{location_text(located, finding)}: DYN000 {finding.message}\n")
        skipped += _warn_skipped(path, relpath, result.document, result.original, result.skipped)
        if result.changed:
            changed += 1
            fixes += len(result.applied)
            stream.write(_document_diff(result.document, result.original, result.fixed, path))
    if getattr(args, "show_fixes", False) or not getattr(args, "quiet", False):
        sys.stderr.write(f"Would fix {_plural(fixes, 'finding')} in {_plural(changed, 'file')}"
                         f"{_skipped_note(skipped)}.\n" if changed else f"No fixes to apply{_skipped_note(skipped)}.\n")
    return 1 if changed else 0


def _run_stdin(args, relpath, settings, stream) -> int:
    """``-``: the fixed source (or its diff) on stdout, remaining findings on stderr.  With a
    ``--stdin-filename`` ending in ``.ipynb`` the input is a notebook, and so is the output."""
    from dynlint import api
    from dynlint.fixer import FixError, fix_text
    from dynlint.output import location_text

    name = getattr(args, "stdin_filename", None) or STDIN
    data = sys.stdin.buffer.read()
    try:
        document = api.read_document(data, name)
    except api.SourceError as exc:
        unreadable = FileResult(name, relpath, [api.source_error_finding(exc)])
        sys.stderr.write(f"{location_text(unreadable, unreadable.findings[0])}: DYN000 "
                         f"{unreadable.findings[0].message}\n")
        sys.stdout.buffer.write(data)
        return 1
    text = document.text
    findings = api.check_source(text, name, settings, relpath)
    try:
        outcome = fix_text(text, findings, unsafe=getattr(args, "unsafe_fixes", False), filename=name,
                           settings=settings, relpath=relpath)
        fixed, applied = outcome.text, outcome.applied
        _warn_skipped(name, relpath, document, text, outcome.skipped)
        payload = document.encode(fixed) if fixed != text else data
    except (FixError, api.SourceError) as exc:
        sys.stderr.write(f"{name}:1:1: DYN000 cannot fix this file, left unchanged: {exc}\n")
        fixed, applied, payload = text, [], data
    if getattr(args, "diff", False):
        if fixed != text:
            stream.write(_document_diff(document, text, fixed, name))
        return 1 if fixed != text else 0
    # A notebook goes out as the notebook's JSON (its fixed cells written back), Python as text.
    stream.write(fixed if document.cells is None else payload.decode("utf-8-sig"))
    remaining = api.check_source(fixed, name, settings, relpath) if applied else findings
    located = FileResult(name, relpath, remaining, cells=document.cells_of(fixed))
    for finding in remaining:
        sys.stderr.write(f"{location_text(located, finding)}: {finding.code} {finding.message}\n")
    if getattr(args, "exit_non_zero_on_fix", False) and applied:
        return 1
    return 0 if getattr(args, "exit_zero", False) or not remaining else 1


def _run_add_noqa(files, settings) -> int:
    from dynlint import api
    from dynlint.fixer import add_noqa, atomic_write

    from dynlint.errors import UsageError

    added = 0
    for path, relpath in files:
        if path == STDIN:
            raise UsageError("--add-noqa needs files, not stdin")
        try:
            with open(path, "rb") as handle:
                data = handle.read()
            document = api.read_document(data, path)  # a Python file, or a notebook's code cells
        except (OSError, api.SourceError) as exc:
            sys.stderr.write(f"{path}: DYN000 cannot add noqa, left unchanged: {exc}\n")
            continue
        text = document.text
        findings = [f for f in api.check_source(text, path, settings, relpath) if f.code != "DYN000"]
        new_text = add_noqa(text, findings)
        if new_text == text:
            continue
        try:
            atomic_write(path, document.encode(new_text))
        except (OSError, UnicodeEncodeError, api.SourceError) as exc:
            sys.stderr.write(f"{path}: cannot write: {exc}\n")
            continue
        remaining = {f.line for f in api.check_source(new_text, path, settings, relpath)}
        added += len({f.line for f in findings} - remaining)
    sys.stderr.write(f"Added {_plural(added, 'noqa directive')}.\n")
    return 0


def _cells_of(result) -> tuple | None:
    """The notebook cell map of a FixResult's text (None for Python files)."""
    document = getattr(result, "document", None)
    if document is None or result.fixed is None:
        return None
    return document.cells_of(result.fixed)


def _document_diff(document, before: str, after: str, path: str) -> str:
    """A unified diff of a fix; for a notebook, one per changed cell (``a/nb.ipynb:cell 3``, as ruff)."""
    if document is None or document.cells is None:
        return _unified_diff(before, after, path)
    old, new = document.cell_texts(before), document.cell_texts(after)
    return "".join(_unified_diff(old_text, new_text, f"{path}:cell {cell}")
                   for (cell, old_text), (_, new_text) in zip(old, new) if old_text != new_text)


def _warn_skipped(path: str, relpath: str, document, text: str | None, skipped) -> int:
    """One line on stderr per fix that could not be placed (the rest of the file's fixes apply)."""
    from dynlint.output import location_text

    cells = document.cells_of(text) if document is not None and text is not None else None
    located = FileResult(path, relpath, [], cells=cells)
    for item in skipped:
        sys.stderr.write(item.describe(location_text(located, item.finding)) + "\n")
    return len(skipped)


def _skipped_note(skipped: int) -> str:
    return f"; {_plural(skipped, 'fix', 'fixes')} could not be applied (see the warnings)" if skipped else ""


def _unified_diff(before: str, after: str, path: str) -> str:
    lines = difflib.unified_diff(io.StringIO(before, newline="").readlines(),
                                 io.StringIO(after, newline="").readlines(),
                                 fromfile=f"a/{path}", tofile=f"b/{path}")
    out = []
    for line in lines:
        out.append(line if line.endswith(("\n", "\r")) else line + "\n\\ No newline at end of file\n")
    return "".join(out)


def _describe_fixes(applied_by_file) -> str:
    if not applied_by_file:
        return "No fixes applied.\n"
    total = sum(len(applied) for _, applied in applied_by_file)
    lines = [f"Fixed {_plural(total, 'finding')}:"]
    for path, applied in applied_by_file:
        lines.append(f"- {path}:")
        for code, count in sorted(Counter(f.code for f in applied).items()):
            name = RULES[code].name if code in RULES else ""
            lines.append(f"    {count} × {code} ({name})")
    return "\n".join(lines) + "\n"


def _lines_of(text: str | None, findings) -> dict[int, str]:
    if text is None or not findings:
        return {}
    source_lines = re.split(r"\r\n|\r|\n", text)
    return {f.line: source_lines[f.line - 1] for f in findings if 1 <= f.line <= len(source_lines)}


def _plural(count: int, word: str, plural: str | None = None) -> str:
    return f"{count} {word if count == 1 else plural or word + 's'}"
