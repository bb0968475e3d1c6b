"""Layout of rewritten code: the line length a file evidently keeps, and wrapping inside brackets.

A fix's replacement is one line of code (``torch.where(mask, x, 0).sum()``);
where it would make its line longer than the file's limit it is wrapped the
way black wraps a call: after its last non-empty bracket, one indent deeper,
then, if still too long, one argument (or one operand) per line.  Every break
is inside the replacement's own brackets, so it is valid wherever the
replacement stands.

The limit, in order: ``line-length`` of ``[tool.ruff]`` or ``[tool.black]`` in
the nearest pyproject.toml (or ruff.toml / .ruff.toml), ``max-line-length`` of
``[flake8]`` / ``[pycodestyle]`` in the nearest setup.cfg, tox.ini or .flake8;
otherwise the longest line of the file itself, but at least 79 and at most 120
(one very long line, a URL in a comment, says nothing about the rest).
"""

from __future__ import annotations

import ast
import configparser
import io
import keyword
import os
import re
import tokenize
from functools import lru_cache

MIN_INFERRED = 79
MAX_INFERRED = 120
_INDENT = "    "

_OPENING = {"(": ")", "[": "]", "{": "}"}
# binary operators a line may break before, by how loosely they bind (black's delimiter priority)
_PRIORITY = {"|": 0, "^": 1, "&": 2, "+": 3, "-": 3, "*": 4, "/": 4, "//": 4, "%": 4, "@": 4}
_SPLIT_OPERATORS = frozenset(_PRIORITY)


# --------------------------------------------------------------------------- the limit
def line_length(text: str, path: str | None = None) -> int:
    configured = _configured(os.path.dirname(os.path.abspath(path))) if path and os.path.exists(path) else None
    if configured:
        return configured
    longest = max((len(line) for line in text.splitlines()), default=0)
    return max(MIN_INFERRED, min(longest, MAX_INFERRED))


@lru_cache(maxsize=256)
def _configured(directory: str) -> int | None:
    while True:
        for name in ("pyproject.toml", "ruff.toml", ".ruff.toml"):
            value = _from_toml(os.path.join(directory, name), name == "pyproject.toml")
            if value:
                return value
        for name in ("setup.cfg", "tox.ini", ".flake8"):
            value = _from_ini(os.path.join(directory, name))
            if value:
                return value
        if os.path.exists(os.path.join(directory, "pyproject.toml")) or os.path.isdir(os.path.join(directory, ".git")):
            return None  # the project's root: nothing configured
        parent = os.path.dirname(directory)
        if parent == directory:
            return None
        directory = parent


def _from_toml(path: str, pyproject: bool) -> int | None:
    if not os.path.isfile(path):
        return None
    try:
        try:
            import tomllib
        except ModuleNotFoundError:  # Python 3.10
            import tomli as tomllib
        with open(path, "rb") as handle:
            data = tomllib.load(handle)
    except Exception:  # noqa: BLE001 - another tool's broken config is not ours to report
        return None
    tables = [data.get("tool", {}).get("ruff", {}), data.get("tool", {}).get("black", {})] if pyproject else [data]
    for table in tables:
        value = table.get("line-length", table.get("line_length")) if isinstance(table, dict) else None
        if isinstance(value, int) and 40 <= value <= 1000:
            return value
    return None


def _from_ini(path: str) -> int | None:
    if not os.path.isfile(path):
        return None
    parser = configparser.RawConfigParser()
    try:
        parser.read(path, encoding="utf-8")
    except (configparser.Error, UnicodeDecodeError, OSError):
        return None
    for section in ("flake8", "pycodestyle"):
        for key in ("max-line-length", "max_line_length"):
            if parser.has_option(section, key):
                value = parser.get(section, key).strip()
                if value.isdigit() and 40 <= int(value) <= 1000:
                    return int(value)
    return None


# --------------------------------------------------------------------------- wrapping
def fit(content: str, prefix: str, suffix: str, limit: int) -> str:
    """``content`` as it should be written between ``prefix`` (its line up to it) and
    ``suffix`` (the rest of its last line): unchanged when the line fits, when it spans
    lines already, or when it has no brackets to break inside; else wrapped."""
    if "\n" in content or "\r" in content or len(prefix) + len(content) + len(suffix) <= limit:
        return content
    indent = re.match(r"[ \t]*", prefix).group(0)
    unit = "\t" if indent.startswith("\t") else _INDENT
    wrapped = _split(content, indent, unit, len(prefix), len(suffix), limit, _open_context(prefix, suffix))
    if wrapped is None or not _same_code(content, wrapped):
        return content
    return wrapped


def _same_code(before: str, after: str) -> bool:
    """Whether the wrapped text is the same program as the original (the splitter works on
    tokens, so a case it misreads, e.g. a comma inside a lambda, must never reach a file):
    both parsed as one parenthesised expression, or else as statements, give one tree."""
    def tree(text: str) -> str | None:
        for source, mode in ((f"(\n{text}\n)", "eval"), (text, "exec")):
            try:
                return ast.dump(ast.parse(source, mode=mode))
            except (SyntaxError, ValueError):
                continue
        return None
    original = tree(before)
    return original is not None and original == tree(after)


_TIGHT_BEFORE = ("+", "-", "*", "/", "%", "@", "|", "&", "^", "~", "<<", ">>", "await", "not")
_TIGHT_AFTER = ("+", "-", "*", "/", "%", "@", "|", "&", "^", "<<", ">>", ".", "[", "(")


def _open_context(prefix: str, suffix: str) -> bool:
    """Whether parentheses around the content change nothing: no arithmetic or bitwise operator,
    and no trailer (``.x``, ``[i]``, ``(...)``), binds it to its neighbours.  ``not`` is looser
    than arithmetic, but is kept out for simplicity."""
    before, after = prefix.rstrip(), suffix.lstrip()
    if before.endswith(("==", "<=", ">=", "!=", "+=", "-=", "*=", "/=", "%=", "@=", "|=", "&=", "^=", "**=",
                        "//=", "<<=", ">>=")):
        before = "="
    return not before.endswith(_TIGHT_BEFORE) and not after.startswith(_TIGHT_AFTER)


def _split(code: str, indent: str, unit: str, first_width: int, last_width: int, limit: int,
           open_context: bool = True) -> str | None:
    """Right-hand split: ``head(`` / body one indent deeper / ``)tail``; the body split
    further (one item per line) when it is still too long."""
    tokens = _tokens(code)
    if tokens is None:
        return None
    leading_operator = bool(tokens) and tokens[0][2] == 0 and tokens[0][0] == "inner" and tokens[0][1] not in _OPENING
    if open_context and not leading_operator \
            and any(kind == "top" and text in _SPLIT_OPERATORS for kind, text, _, _ in tokens):
        # a / b: split at the operator inside added parentheses (an atom wherever it stands)
        return "(\n" + "\n".join(_one_per_line(code, indent + unit, unit, limit)) + "\n" + indent + ")"
    pairs = _top_level_pairs(tokens)
    pairs = [(i, j) for i, j in pairs if code[i + 1:j].strip()]
    if not pairs:
        return None
    # the last bracket whose head and tail lines fit (black omits optional trailers the same way)
    i, j = next(((i, j) for i, j in reversed(pairs)
                 if first_width + i + 1 <= limit and len(indent) + len(code) - j + last_width <= limit), pairs[-1])
    head, body, tail = code[:i + 1], code[i + 1:j].strip(), code[j:]
    inner = indent + unit
    if len(inner) + len(body) <= limit:
        lines = [inner + body]
    else:
        lines = _one_per_line(body, inner, unit, limit)
    return head + "\n" + "\n".join(lines) + "\n" + indent + tail


def _one_per_line(body: str, indent: str, unit: str, limit: int) -> list[str]:
    tokens = _tokens(body) or []
    commas = [start for kind, text, start, _ in tokens if kind == "top" and text == ","]
    if commas:  # one item per line; a trailing comma where it cannot turn one item into a tuple
        items = [item.strip() for item in _cut(body, commas)]
        trailing = not items[-1]
        items = [item for item in items if item]
        comma = "," if len(items) > 1 or trailing else ""
        lines = []
        for number, item in enumerate(items, start=1):
            if len(indent) + len(item) + 1 > limit:
                item = _split(item, indent, unit, len(indent), 1, limit) or item
            lines.append(indent + item + ("," if number < len(items) else comma))
        return lines
    operators = [(start, text) for kind, text, start, _ in tokens if kind == "top" and text in _SPLIT_OPERATORS]
    if operators:  # break before each loosest-binding top-level binary operator, as black does
        loosest = min(_PRIORITY[text] for _, text in operators)
        operators = [start for start, text in operators if _PRIORITY[text] == loosest]
        lines = []
        for part in (p.strip() for p in _cut_before(body, operators)):
            if part and len(indent) + len(part) > limit:
                operator = re.match(r"(\*\*|//|[-+*/%@|&^])\s*", part) if part is not body.strip() else None
                lead = operator.group(1) + " " if operator and lines else ""
                operand = part[operator.end():] if lead else part
                part = lead + (_split(operand, indent, unit, len(indent) + len(lead), 0, limit) or operand)
            if part:
                lines.append(indent + part)
        return lines
    nested = _split(body, indent, unit, len(indent), 0, limit)
    return [indent + (nested if nested is not None else body)]


def _cut(text: str, at: list[int]) -> list[str]:
    parts, last = [], 0
    for index in at:
        parts.append(text[last:index])
        last = index + 1
    parts.append(text[last:])
    return parts


def _cut_before(text: str, at: list[int]) -> list[str]:
    parts, last = [], 0
    for index in at:
        parts.append(text[last:index])
        last = index
    parts.append(text[last:])
    return parts


def _tokens(code: str):
    """(kind, text, start, end) of the operator tokens of one line of code.  kind: "open" and
    "close" for brackets at depth 0, "top" for other depth-0 operators that follow an operand
    (binary ones), "inner" for everything else."""
    try:
        raw = list(tokenize.generate_tokens(io.StringIO(code).readline))
    except (tokenize.TokenError, IndentationError, SyntaxError):
        return None
    out = []
    depth = 0
    after_operand = False
    for token in raw:
        if token.type in (tokenize.NEWLINE, tokenize.NL, tokenize.ENDMARKER, tokenize.COMMENT):
            continue
        if token.start[0] != 1:
            return None  # single-line code only
        text, start = token.string, token.start[1]
        if token.type != tokenize.OP:
            after_operand = token.type in (tokenize.NUMBER, tokenize.STRING) or (
                token.type == tokenize.NAME and not keyword.iskeyword(text)) or text in ("None", "True", "False")
            continue
        if text in _OPENING:
            out.append(("open" if depth == 0 else "inner", text, start, token.end[1]))
            depth += 1
            after_operand = False
        elif text in (")", "]", "}"):
            depth -= 1
            out.append(("close" if depth == 0 else "inner", text, start, token.end[1]))
            after_operand = True
        else:
            # an operator with no operand before it is a sign, or leads a continuation line ("/ b")
            out.append(("top" if depth == 0 and after_operand else "inner", text, start, token.end[1]))
            after_operand = False
    return out if depth == 0 else None


def _top_level_pairs(tokens) -> list[tuple[int, int]]:
    pairs, stack = [], []
    for kind, _text, start, _end in tokens:
        if kind == "open":
            stack.append(start)
        elif kind == "close" and stack:
            pairs.append((stack.pop(), start))
    return pairs
