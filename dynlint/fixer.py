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
from dynlint import api
from dynlint.config import Settings
from dynlint.diagnostics import Applicability, Edit, Finding

MAX_ROUNDS = 10
_LINE_RE = re.compile(r"([^\r\n]*)(\r\n|\r|\n|$)")


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

    @property
    def changed(self) -> bool:
        return self.original is not None and self.fixed is not None and self.fixed != self.original


def is_applicable(finding: Finding, unsafe: bool) -> bool:
    fix = finding.fix
    return fix is not None and bool(fix.edits) and (fix.applicability == Applicability.SAFE or unsafe)


# --------------------------------------------------------------------------- fixing text
def fix_source(text: str, findings: list[Finding], *, unsafe: bool, filename: str = "<string>",
               settings: Settings | None = None, relpath: str | None = None) -> tuple[str, list[Finding]]:
    """Apply the applicable fixes of ``findings`` (found in ``text``), re-checking and
    repeating until no fix applies.  Returns (new text, findings whose fix was applied).
    Raises FixError, with nothing applied, when the file cannot be fixed safely."""
    settings = settings or Settings()
    pending = [f for f in findings if is_applicable(f, unsafe)]
    applied: list[Finding] = []
    current = text
    for _ in range(MAX_ROUNDS):
        if not pending:
            break
        current, used = _apply_round(current, pending)
        if not used:
            break
        applied.extend(used)
        rechecked = api.check_source(current, filename, settings, relpath)
        if any(f.code == "DYN000" for f in rechecked):
            raise FixError("the fixed code could not be checked again")
        pending = [f for f in rechecked if is_applicable(f, unsafe)]
    return current, applied


def _apply_round(text: str, findings: list[Finding]) -> tuple[str, list[Finding]]:
    try:
        module = cst.parse_module(text)
    except (cst.ParserSyntaxError, RecursionError, ValueError) as exc:
        raise FixError(f"libcst cannot parse it: {_first_line(exc)}") from None
    wrapper = MetadataWrapper(module, unsafe_skip_copy=True)
    positions = wrapper.resolve(PositionProvider)
    expressions = [(node, (p.start.line, p.start.column), (p.end.line, p.end.column))
                   for node, p in positions.items() if isinstance(node, cst.BaseExpression)]
    line_endings = [m.group(2) for m in _LINE_RE.finditer(text)]

    chosen: list[tuple[cst.BaseExpression, tuple, tuple, list[Edit]]] = []
    by_edits: dict[tuple[Edit, ...], list[Finding]] = {}
    used: list[Finding] = []
    for finding in sorted(findings, key=lambda f: _span(f.fix.edits)):
        edits = tuple(sorted(set(finding.fix.edits), key=lambda e: (e.line, e.col, e.end_line, e.end_col)))
        if edits in by_edits:  # the same rewrite reported by several findings, e.g. (a[k] * b[k]).sum()
            by_edits[edits].append(finding)
            continue
        target = _smallest_container(expressions, edits)
        if target is None:
            raise FixError(f"the {finding.code} fix at line {finding.line} does not lie inside an expression")
        if _overlaps_edits(edits, [c[3] for c in chosen]):
            continue
        node, start, end = target
        if any(_ranges_overlap(start, end, other_start, other_end) for _, other_start, other_end, _ in chosen):
            continue  # overlapping candidate: next round, against the re-checked text
        chosen.append((node, start, end, list(edits)))
        by_edits[edits] = [finding]

    replacements: dict[int, cst.CSTNode] = {}
    for node, start, _end, edits in chosen:
        replacements[id(node)] = _rewrite_node(module, node, start, edits, line_endings)
    for group in by_edits.values():
        used.extend(group)
    if not replacements:
        return text, []
    try:
        new_text = module.visit(_Replacer(replacements)).code
    except Exception as exc:  # libcst validation: the new node cannot stand where the old one stood
        raise FixError(f"the fixed code would not be valid ({_first_line(exc)})") from None
    _verify(new_text)
    return new_text, used


class _Replacer(cst.CSTTransformer):
    def __init__(self, replacements: dict[int, cst.CSTNode]):
        super().__init__()
        self.replacements = replacements

    def on_leave(self, original_node, updated_node):
        return self.replacements.get(id(original_node), updated_node)


def _rewrite_node(module: cst.Module, node: cst.BaseExpression, start: tuple[int, int], edits: list[Edit],
                  line_endings: list[str]) -> cst.BaseExpression:
    """The node with the edits applied to its own code (parentheses kept as they were)."""
    bare = node.with_changes(lpar=[], rpar=[]) if getattr(node, "lpar", None) else node
    code = module.code_for_node(bare)
    starts = [0] + [m.end() for m in LINE_BREAK_RE.finditer(code)]

    def offset(line: int, col: int) -> int:
        row = line - start[0]
        if not 0 <= row < len(starts):
            raise FixError("edit outside its node")
        return starts[row] + (col - start[1] if row == 0 else col)

    for edit in sorted(edits, key=lambda e: (e.line, e.col), reverse=True):
        begin, finish = offset(edit.line, edit.col), offset(edit.end_line, edit.end_col)
        if not 0 <= begin <= finish <= len(code):
            raise FixError("edit outside its node")
        ending = line_endings[edit.line - 1] if edit.line - 1 < len(line_endings) else "\n"
        content = LINE_BREAK_RE.sub(lambda _m: ending or "\n", edit.content)
        code = code[:begin] + content + code[finish:]
    config = module.config_for_parsing
    try:
        new = cst.parse_expression(code, config=config)
    except (cst.ParserSyntaxError, RecursionError):
        try:  # an expression that spans lines only inside its parent's brackets
            new = cst.parse_expression(f"({code})", config=config).with_changes(lpar=[], rpar=[])
        except (cst.ParserSyntaxError, RecursionError, ValueError):
            raise FixError("the replacement does not parse") from None
    if getattr(node, "lpar", None):
        new = new.with_changes(lpar=node.lpar, rpar=node.rpar)
    return new


def _smallest_container(expressions, edits):
    first = (edits[0].line, edits[0].col)
    last = max((e.end_line, e.end_col) for e in edits)
    insertion = first == last
    best = None
    for node, start, end in expressions:
        inside = start < first and last < end if insertion else start <= first and last <= end
        if inside and (best is None or (start >= best[1] and end <= best[2])):
            best = (node, start, end)
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
        new_text, applied = fix_source(text, findings, unsafe=unsafe, filename=path, settings=settings,
                                       relpath=relpath)
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
