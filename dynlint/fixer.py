"""Apply fixes: the libcst rewriting step of ``dynlint fix`` (imported only when fixing).

Findings carry their fixes as text edits on the original source (computed in
the checker's ``ast`` pass).  Here each fix is anchored to the smallest libcst
expression node whose range holds its edits; the edits are applied inside that
node's own code, the node is re-parsed and swapped in, and the module is
regenerated losslessly (comments, formatting and line endings elsewhere are
untouched).  Fixes whose nodes overlap wait for the next round; rounds repeat,
re-checking the new text, until nothing applies (at most ``MAX_ROUNDS``, like
ruff).  A result that does not parse is never returned.
"""

from __future__ import annotations

import ast
import io
import os
import re
import stat
import tokenize
from dataclasses import dataclass, field

import libcst as cst
from libcst.metadata import MetadataWrapper, PositionProvider

from dynlint.source import LINE_BREAK_RE
from dynlint.atomic import replace_file
from dynlint.source import read_document
from dynlint import api, layout
from dynlint.config import Settings
from dynlint.diagnostics import Applicability, Edit, Finding

MAX_ROUNDS = 10
_LINE_RE = re.compile(r"([^\r\n]*)(\r\n|\r|\n|$)")
_STATEMENTS = (cst.SimpleStatementLine, cst.BaseCompoundStatement)


class FixError(Exception):
    """The file cannot be fixed (libcst cannot parse it, or a fix would break it)."""


@dataclass
class FixResult:
    path: str
    relpath: str
    original: str | None                 # decoded text; None when unreadable
    fixed: str | None                    # text after fixing (== original when nothing applied)
    applied: list[Finding] = field(default_factory=list)
    remaining: list[Finding] = field(default_factory=list)
    written: bool = False
    document: object = None             # what the text was read from (source.read_document): a notebook maps
                                        # lines to cells (``document.cells_of(fixed)``) and cells for --diff
    skipped: list["SkippedFix"] = field(default_factory=list)  # fixes that could not be placed

    @property
    def changed(self) -> bool:
        return self.original is not None and self.fixed is not None and self.fixed != self.original


def is_applicable(finding: Finding, unsafe: bool) -> bool:
    fix = finding.fix
    return fix is not None and bool(fix.edits) and (fix.applicability == Applicability.SAFE or unsafe)


# --------------------------------------------------------------------------- fixing text
@dataclass(frozen=True)
class SkippedFix:
    """A fix that could not be placed: dropped alone, reported, the rest applied."""
    finding: Finding
    reason: str

    def describe(self, location: str) -> str:
        """One line; ``location`` is where the finding is (``path:line:col``, or with a notebook cell)."""
        return f"{location}: warning: {self.finding.code} fix not applied ({self.reason}); the finding remains"


@dataclass
class FixOutcome:
    text: str                                                    # after every applicable fix
    applied: list[Finding] = field(default_factory=list)
    skipped: list[SkippedFix] = field(default_factory=list)


def fix_source(text: str, findings: list[Finding], *, unsafe: bool, filename: str = "<string>",
               settings: Settings | None = None, relpath: str | None = None) -> tuple[str, list[Finding]]:
    """``fix_text`` returning (new text, findings whose fix was applied)."""
    outcome = fix_text(text, findings, unsafe=unsafe, filename=filename, settings=settings, relpath=relpath)
    return outcome.text, outcome.applied


def fix_text(text: str, findings: list[Finding], *, unsafe: bool, filename: str = "<string>",
             settings: Settings | None = None, relpath: str | None = None) -> FixOutcome:
    """Apply the applicable fixes of ``findings`` (found in ``text``), re-checking and
    repeating until no fix applies.  A fix that cannot be placed (its edits lie outside any
    expression, or the rewritten expression or file would not parse) is skipped alone and
    listed in ``skipped``.  Raises FixError, with nothing applied, only when the file itself
    cannot be fixed (libcst cannot parse it, or the fixed code cannot be checked again)."""
    settings = settings or Settings()
    outcome = FixOutcome(text)
    refused: set[tuple] = set()  # fixes skipped once are not tried again in later rounds
    pending = [f for f in findings if is_applicable(f, unsafe)]
    limit = layout.line_length(text, filename)
    for _ in range(MAX_ROUNDS):
        pending = [f for f in pending if _identity(outcome.text, f) not in refused]
        if not pending:
            break
        new_text, used, skipped = _apply_round(outcome.text, pending, limit)
        for item in skipped:
            refused.add(_identity(outcome.text, item.finding))
            outcome.skipped.append(item)
        if not used:
            break
        outcome.text = new_text
        outcome.applied.extend(used)
        rechecked = api.check_source(new_text, filename, settings, relpath)
        if any(f.code == "DYN000" for f in rechecked):
            raise FixError("the fixed code could not be checked again")
        pending = [f for f in rechecked if is_applicable(f, unsafe)]
    return outcome


def _identity(text: str, finding: Finding) -> tuple:
    """What a fix rewrites and into what: the same fix found again in a later round has it too."""
    lines = None
    parts = []
    for edit in finding.fix.edits:
        if lines is None:
            lines = text.splitlines(keepends=True)
        parts.append((_slice(lines, edit.line, edit.col, edit.end_line, edit.end_col), edit.content))
    return (finding.code, tuple(parts))


def _slice(lines: list[str], line: int, col: int, end_line: int, end_col: int) -> str:
    if not (1 <= line <= end_line <= len(lines)):
        return ""
    if line == end_line:
        return lines[line - 1][col:end_col]
    return lines[line - 1][col:] + "".join(lines[line:end_line - 1]) + lines[end_line - 1][:end_col]


def _apply_round(text: str, findings: list[Finding], limit: int) -> tuple[str, list[Finding], list[SkippedFix]]:
    """One round: place each fix in the smallest expression that holds its edits, rewrite that
    expression's own source text, and splice the results into ``text``.  Fixes whose
    expressions overlap an earlier one, or share a line with it, wait for the next round
    (against re-checked text)."""
    try:
        module = cst.parse_module(text)
    except (cst.ParserSyntaxError, RecursionError, ValueError) as exc:
        raise FixError(f"libcst cannot parse it: {_first_line(exc)}") from None
    wrapper = MetadataWrapper(module, unsafe_skip_copy=True)
    positions = wrapper.resolve(PositionProvider)
    # where a fix can be placed: expressions, and statements for fixes that rewrite or remove
    # whole statements (dynlint.fixspans); True marks a statement
    containers = [((p.start.line, p.start.column), (p.end.line, p.end.column), isinstance(node, _STATEMENTS))
                  for node, p in positions.items() if isinstance(node, (cst.BaseExpression, *_STATEMENTS))]
    source = _Text(text)

    chosen: list[_Placed] = []
    by_edits: dict[tuple[Edit, ...], list[Finding]] = {}
    skipped: list[SkippedFix] = []
    for finding in sorted(findings, key=lambda f: _span(f.fix.edits)):
        edits = tuple(sorted(set(finding.fix.edits), key=lambda e: (e.line, e.col, e.end_line, e.end_col)))
        if edits in by_edits:  # the same rewrite reported by several findings, e.g. (a[k] * b[k]).sum()
            by_edits[edits].append(finding)
            continue
        target = _smallest_container(containers, edits)
        if target is None:
            skipped.append(SkippedFix(finding, "its edits do not lie inside one expression or statement"))
            continue
        start, end, statement = target
        if any(_ranges_overlap(start, end, other.start, other.end) for other in chosen) \
                or _overlaps_edits(edits, [other.edits for other in chosen]):
            continue  # overlapping candidate: next round, against the re-checked text
        if any(start[0] <= other.end[0] and other.start[0] <= end[0] for other in chosen):
            continue  # on a line another fix changes: next round, so its layout sees that line as changed
        try:
            placed = _place(source, start, end, edits, limit, statement)
        except FixError as exc:
            skipped.append(SkippedFix(finding, str(exc)))
            continue
        chosen.append(placed)
        by_edits[edits] = [finding]
    if not chosen:
        return text, [], skipped

    new_text = _splice(source, chosen)
    if not _parses(new_text):  # each replacement parses alone; together they do not: one at a time,
        kept: list[_Placed] = []  # wrapped if that parses (not inside an f-string, say), else as emitted
        for placed in chosen:
            for version in dict.fromkeys([placed, placed.unwrapped()]):
                if _parses(_splice(source, kept + [version])):
                    kept.append(version)
                    break
            else:
                for finding in by_edits.pop(placed.edits):
                    skipped.append(SkippedFix(finding, "the fixed code would not parse"))
        chosen = kept
        new_text = _splice(source, chosen)
    used = [finding for placed in chosen for finding in by_edits[placed.edits]]
    return new_text, used, skipped


@dataclass(frozen=True)
class _Placed:
    start: tuple[int, int]     # the expression rewritten (libcst positions: 1-based lines, char columns)
    end: tuple[int, int]
    edits: tuple[Edit, ...]
    code: str                  # its new source text
    plain: str                 # the same without wrapping long lines

    def unwrapped(self) -> "_Placed":
        return _Placed(self.start, self.end, self.edits, self.plain, self.plain)


class _Text:
    """The text with conversions from (line, column) to offsets; line endings kept per line."""

    def __init__(self, text: str):
        self.text = text
        self.starts = [0] + [m.end() for m in LINE_BREAK_RE.finditer(text)]
        self.endings = [m.group(2) for m in _LINE_RE.finditer(text)]

    def offset(self, line: int, col: int) -> int:
        if not 1 <= line <= len(self.starts):
            raise FixError("an edit lies outside the file")
        return self.starts[line - 1] + col

    def ending(self, line: int) -> str:
        return (self.endings[line - 1] if line - 1 < len(self.endings) else "") or "\n"

    def line_text(self, line: int) -> str:
        begin = self.starts[line - 1]
        end = self.starts[line] if line < len(self.starts) else len(self.text)
        return self.text[begin:end].rstrip("\r\n")


def _place(source: _Text, start, end, edits, limit: int, statement: bool = False) -> _Placed:
    """The expression's (or statement's) own source text with the edits applied: with long new
    lines wrapped inside the replacement's brackets (``code``) and as emitted (``plain``)."""
    begin, finish = source.offset(*start), source.offset(*end)
    original = source.text[begin:finish]
    ending = source.ending(start[0])
    versions = []
    for wrap in (True, False):
        code = original
        for edit in sorted(edits, key=lambda e: (e.line, e.col), reverse=True):
            at, to = source.offset(edit.line, edit.col) - begin, source.offset(edit.end_line, edit.end_col) - begin
            if not 0 <= at <= to <= len(code):
                raise FixError("an edit lies outside its expression")
            content = edit.content
            if wrap:  # against the line as edited: the edits left of it as emitted, right of it as placed
                prefix = _edited_prefix(source.line_text(edit.line), edit, edits)
                rest = code[to:]
                cut = LINE_BREAK_RE.search(rest)
                suffix = rest[:cut.start()] if cut else rest + source.line_text(end[0])[end[1]:]
                content = layout.fit(content, prefix, suffix, limit)
            code = code[:at] + LINE_BREAK_RE.sub(lambda _m: ending, content) + code[to:]
        versions.append(code)
    wrapped, plain = versions
    if statement:
        if _statement_tree(plain, start[1]) is None:
            raise FixError("the rewritten statements would not parse")
        if wrapped != plain and _statement_tree(wrapped, start[1]) != _statement_tree(plain, start[1]):
            wrapped = plain
        return _Placed(start, end, edits, wrapped, plain)
    if not _parses_as_expression(plain):
        raise FixError("the rewritten expression would not parse")
    if wrapped != plain and not _same_expression(wrapped, plain):
        wrapped = plain  # layout only: wrapping may never change what the code means
    return _Placed(start, end, edits, wrapped, plain)


def _edited_prefix(line: str, edit, edits) -> str:
    """``line`` up to ``edit``'s start, with the other edits that lie wholly before it on that
    line applied as emitted (a replacement's own line breaks: the text after the last one)."""
    prefix = line[:edit.col]
    for other in sorted(edits, key=lambda e: e.col, reverse=True):
        if other is not edit and other.line == other.end_line == edit.line and other.end_col <= edit.col:
            prefix = prefix[:other.col] + other.content + prefix[other.end_col:]
    cut = list(LINE_BREAK_RE.finditer(prefix))
    return prefix[cut[-1].end():] if cut else prefix


def _statement_tree(code: str, col: int) -> str | None:
    """The dumped syntax tree of statements whose first line starts at column ``col`` (their
    other lines keep their own indentation), or None when they do not parse."""
    text = f"if 1:\n{' ' * col}{code}\n" if col else f"{code}\n"
    try:
        tree = ast.parse(text)
        cst.parse_module(text)
    except (SyntaxError, ValueError, RecursionError, MemoryError, cst.ParserSyntaxError):
        return None
    return ast.dump(tree)


def _same_expression(a: str, b: str) -> bool:
    try:
        return ast.dump(ast.parse(f"({a}\n)", mode="eval")) == ast.dump(ast.parse(f"({b}\n)", mode="eval")) \
            and _parses_as_expression(a)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return False


def _parses_as_expression(code: str) -> bool:
    """As it stands inside its parent (brackets there allow line breaks)."""
    try:
        ast.parse(f"({code}\n)", mode="eval")
        cst.parse_expression(f"({code}\n)")
    except (SyntaxError, ValueError, RecursionError, MemoryError, cst.ParserSyntaxError):
        return False
    return True


def _splice(source: _Text, placed: list[_Placed]) -> str:
    text = source.text
    for item in sorted(placed, key=lambda p: p.start, reverse=True):
        text = text[:source.offset(*item.start)] + item.code + text[source.offset(*item.end):]
    return text


def _parses(text: str) -> bool:
    try:
        _verify(text)
    except FixError:
        return False
    return True


def _smallest_container(containers, edits):
    """The smallest (start, end, is a statement) holding every edit; an expression before a
    statement of the same range."""
    first = (edits[0].line, edits[0].col)
    last = max((e.end_line, e.end_col) for e in edits)
    insertion = first == last
    best = None
    for start, end, statement in containers:
        inside = start < first and last < end if insertion else start <= first and last <= end
        if not inside:
            continue
        if best is None or (start >= best[0] and end <= best[1] and ((start, end) != best[:2] or not statement)):
            best = (start, end, statement)
    return best


def _span(edits) -> tuple:
    return min((e.line, e.col) for e in edits), max((e.end_line, e.end_col) for e in edits)


def _ranges_overlap(a_start, a_end, b_start, b_end) -> bool:
    return a_start <= b_end and b_start <= a_end


def _overlaps_edits(edits, chosen_edit_lists) -> bool:
    return any(_ranges_overlap((e.line, e.col), (e.end_line, e.end_col), (o.line, o.col), (o.end_line, o.end_col))
               for other in chosen_edit_lists for o in other for e in edits)


def _verify(text: str) -> None:
    try:
        ast.parse(text)
        cst.parse_module(text)
    except (SyntaxError, ValueError, cst.ParserSyntaxError, RecursionError) as exc:
        raise FixError(f"the fixed code would not parse ({_first_line(exc)})") from None


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__


# --------------------------------------------------------------------------- files
def fix_file(path: str, settings: Settings | None = None, relpath: str | None = None, *,
             unsafe: bool = False, write: bool = True) -> FixResult:
    """Fix one file; write it (atomically, same encoding, line endings and mode) when
    ``write`` and something changed.  Any failure leaves the file untouched and
    reports DYN000 among the remaining findings."""
    settings = settings or Settings()
    relpath = relpath if relpath is not None else path
    try:
        with open(path, "rb") as handle:
            data = handle.read()
    except OSError:
        return FixResult(path, relpath, None, None, remaining=api.check_file(path, settings, relpath))
    try:
        document = read_document(data, path)  # a Python file, or a notebook's code cells as one module
    except api.SourceError:
        return FixResult(path, relpath, None, None, remaining=api.check_bytes(data, path, relpath, settings).findings)
    text = document.text
    findings = api.check_source(text, path, settings, relpath)
    result = FixResult(path, relpath, text, text, remaining=findings, document=document)
    if not any(is_applicable(f, unsafe) for f in findings) or any(f.code == "DYN000" for f in findings):
        return result  # nothing to do: libcst never parses this file
    try:
        outcome = fix_text(text, findings, unsafe=unsafe, filename=path, settings=settings, relpath=relpath)
        new_text, applied = outcome.text, outcome.applied
        result.skipped = outcome.skipped
        payload = document.encode(new_text) if new_text != text else b""
    except (FixError, api.SourceError) as exc:
        result.remaining = [_fix_error(path, str(exc))] + findings
        return result
    except UnicodeEncodeError:
        result.remaining = [_fix_error(path, f"the fixed code cannot be encoded as {document.encoding}")] + findings
        return result
    if new_text == text:
        return result
    if write:
        try:
            atomic_write(path, payload)
        except OSError as exc:
            result.remaining = [_fix_error(path, f"cannot write: {exc.strerror or exc}")] + findings
            return result
        result.written = True
    result.fixed = new_text
    result.applied = applied
    result.remaining = api.check_source(new_text, path, settings, relpath)
    return result


def _fix_error(path: str, reason: str) -> Finding:
    finding = Finding("DYN000", f"cannot fix this file, left unchanged: {reason}", 1, 0, 1, 0)
    object.__setattr__(finding, "filename", path)
    return finding


def atomic_write(path: str, data: bytes) -> None:
    """Replace the file's contents atomically, keeping its permission bits (and owner where
    allowed); a symlink keeps pointing at the rewritten target."""
    target = os.path.realpath(path)
    info = os.stat(target)
    replace_file(target, data, mode=stat.S_IMODE(info.st_mode), owner=(info.st_uid, info.st_gid), durable=True)


# --------------------------------------------------------------------------- noqa
def add_noqa(text: str, findings: list[Finding]) -> str:
    """Append ``# noqa: CODE[, CODE]`` to each finding's line, merging with an existing
    noqa comment.  Lines that end inside a multi-line string or with a backslash
    continuation cannot take a comment and are left alone."""
    codes_by_line: dict[int, set[str]] = {}
    for finding in findings:
        if finding.code != "DYN000":
            codes_by_line.setdefault(finding.line, set()).add(finding.code)
    if not codes_by_line:
        return text
    blocked = _lines_without_room_for_comments(text)
    parts = [(m.group(1), m.group(2)) for m in _LINE_RE.finditer(text)]
    if parts and parts[-1] == ("", ""):
        parts.pop()
    for line_number, codes in codes_by_line.items():
        index = line_number - 1
        if not 0 <= index < len(parts) or line_number in blocked:
            continue
        content, ending = parts[index]
        parts[index] = (_with_noqa(content, codes), ending)
    return "".join(content + ending for content, ending in parts)


def _with_noqa(line: str, codes: set[str]) -> str:
    existing = api.noqa_codes(line)
    if existing is not None:
        if not existing:  # a bare "# noqa" already covers every code
            return line
        match = api._NOQA_RE.search(line)
        listed = [c for c in re.split(r"[,\s]+", match.group("codes").strip()) if c]
        merged = listed + sorted(c for c in codes if c not in existing)
        return line[:match.start()] + "# noqa: " + ", ".join(merged) + line[match.end():]
    stripped = line.rstrip()
    return f"{stripped}  # noqa: {', '.join(sorted(codes))}" + line[len(stripped):]


def _lines_without_room_for_comments(text: str) -> set[int]:
    blocked: set[int] = set()
    try:
        for token in tokenize.generate_tokens(io.StringIO(text).readline):
            if token.type not in (tokenize.NL, tokenize.NEWLINE) and token.end[0] > token.start[0]:
                blocked.update(range(token.start[0], token.end[0]))
    except (tokenize.TokenError, SyntaxError):
        pass
    for number, match in enumerate(_LINE_RE.finditer(text), start=1):
        if match.group(1).endswith("\\"):
            blocked.add(number)
    return blocked
