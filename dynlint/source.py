"""Files to text to trees: decoding like the interpreter, one stdlib ``ast`` parse, line splitting.

The first stage of the pipeline; it knows nothing about rules.
"""

from __future__ import annotations

import ast
import io
import re
import tokenize

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
