"""Files to text to trees: decoding like the interpreter, one stdlib ``ast`` parse, line splitting.

The first stage of the pipeline; it knows nothing about rules.  ``read_document``
turns a file's bytes into the Python text the checker reads and back: for a
``.py`` file that is decoding and encoding; a Jupyter notebook is handled by
``dynlint.notebook`` (its code cells as one module, and a map back to cells).
"""

from __future__ import annotations

import ast
import io
import re
import tokenize
import warnings

LINE_BREAK_RE = re.compile(r"\r\n|\r|\n")  # the line breaks Python's tokenizer counts


class SourceError(Exception):
    """The file cannot be read, decoded or parsed; the message says why.  ``line`` is
    1-based, ``col``/``end_col`` 0-based character columns (CPython's own, for syntax errors)."""

    def __init__(self, message: str, line: int = 1, col: int = 0, end_line: int | None = None,
                 end_col: int | None = None):
        super().__init__(message)
        self.line = line
        self.col = col
        self.end_line = line if end_line is None else end_line
        self.end_col = col if end_col is None else end_col


def split_lines(text: str) -> list[str]:
    """Lines as Python's tokenizer counts them (str.splitlines also breaks at form feeds etc.)."""
    # without a carriage return the only line break is "\n", and str.split is ~10x the regex's speed
    lines = text.split("\n") if "\r" not in text else LINE_BREAK_RE.split(text)
    if lines and lines[-1] == "":
        lines.pop()
    return lines


def decode_source(data: bytes) -> str:
    """Decode Python source bytes the way the interpreter does (BOM, coding cookie)."""
    return _decode(data)[0]


def _decode(data: bytes) -> tuple[str, str]:
    """(text, encoding) of Python source bytes."""
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
    return text, encoding


def parse_source(text: str, filename: str = "<string>") -> ast.Module:
    try:
        with warnings.catch_warnings():
            # The compiler's warnings about the user's code ("invalid escape sequence", "'int' object
            # is not callable") are not dynlint's findings; printed, they would clutter the report.
            warnings.simplefilter("ignore", SyntaxWarning)
            warnings.simplefilter("ignore", DeprecationWarning)
            return ast.parse(text, filename=filename)
    except SyntaxError as exc:
        raise syntax_error(exc) from None
    except (ValueError, TypeError) as exc:  # e.g. null bytes
        raise SourceError(f"cannot parse: {exc}") from None
    except (RecursionError, MemoryError):
        raise SourceError("too deeply nested for the Python parser") from None


def syntax_error(exc: SyntaxError) -> SourceError:
    """CPython's SyntaxError as a SourceError at CPython's own position (its 1-based
    character offset becomes our 0-based column; the span ends at its end offset)."""
    line = exc.lineno or 1
    col = max(0, (exc.offset or 1) - 1)
    end_col = col
    if exc.end_lineno == line and exc.end_offset and exc.end_offset - 1 > col:
        end_col = exc.end_offset - 1
    return SourceError(f"syntax error: {exc.msg}", line, col, line, end_col)  # the position says where


class PythonDocument:
    """A Python file's text, and how a new text is written back (same encoding, BOM included)."""

    cells = None  # no notebook cells: lines are the file's own

    def __init__(self, text: str, encoding: str):
        self.text = text
        self.encoding = encoding

    def encode(self, text: str) -> bytes:
        return text.encode(self.encoding)

    def cells_of(self, text: str) -> None:
        return None

    def cell_texts(self, text: str) -> None:
        return None


def read_document(data: bytes, path: str):
    """The Python text of a file (a ``PythonDocument``, or a ``dynlint.notebook.Notebook`` for
    ``.ipynb``); raises SourceError when it cannot be decoded or is not a notebook."""
    from dynlint.notebook import Notebook, is_notebook

    if is_notebook(path):
        return Notebook.from_bytes(data)
    return PythonDocument(*_decode(data))
