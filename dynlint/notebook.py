"""Jupyter notebooks as Python source, and back.

A notebook is read as one Python module: its code cells, in order, joined
(as ruff does), so an ``import torch`` in the first cell counts for the
others.  Everything downstream (the one ``ast`` parse, the rules, noqa, the
fixer) sees plain Python; this module only

* builds that source (``Notebook.text``): each code cell's text, its IPython
  lines (``%magic``, ``!shell``, ``x = !cmd``, ``obj?``) replaced by a
  ``pass`` placeholder of the same indentation, and a boundary comment line
  after every cell.  Markdown and raw cells, cells run by a cell magic
  (``%%bash``, ``%%time``, ...) or an automagic (``pip install x``), and
  notebooks of other languages (R, Julia) are not part of it, as in ruff;
* maps its lines back to cells (``Notebook.cells``: the first source line of
  each code cell and its 1-based position among *all* cells, markdown
  included, which is the number Jupyter and ruff show);
* writes a fixed source back (``Notebook.encode``): placeholders become the
  original IPython lines again, and only the ``"source"`` values of cells
  whose text changed are re-serialized, in the notebook's own style; every
  other byte of the file (outputs, metadata, ids, indentation, key order) is
  kept as it was.
"""

from __future__ import annotations

import ast
import json
import re
import warnings
from bisect import bisect_right
from dataclasses import dataclass

from dynlint.source import SourceError

SUFFIX = ".ipynb"

CellMap = tuple[tuple[int, int], ...]  # (first line in the joined source, 1-based cell number), by line

# First words of IPython's automagics (ruff's list): a cell starting with one, e.g. "pip install x",
# is shell-like all through (IPython allows no Python after it), so the cell is not read.
AUTOMAGICS = frozenset("""
alias alias_magic autoawait autocall automagic bookmark cd code_wrap colors conda config debug dhist dirs
doctest_mode edit env gui history killbgscripts load load_ext loadpy logoff logon logstart logstate logstop
lsmagic macro magic mamba matplotlib micromamba notebook page pastebin pdb pdef pdoc pfile pinfo pinfo2 pip
popd pprint precision prun psearch psource pushd pwd pycat pylab quickref recall rehashx reload_ext rerun
reset reset_selective run save sc set_env sx system tb time timeit unalias unload_ext who who_ls whos xdel
xmode
""".split())

_MAGIC_ASSIGNMENT_RE = re.compile(r"[A-Za-z_][\w.]*(\s*,\s*[A-Za-z_][\w.]*)*\s*=\s*[!%]")
_LINE_RE = re.compile(r"[^\r\n]*(?:\r\n|\r|\n)|[^\r\n]+")  # lines as Python's tokenizer counts them


def is_notebook(path: str) -> bool:
    return path.lower().endswith(SUFFIX)


def locate(cells: CellMap, line: int) -> tuple[int, int]:
    """(1-based cell number, 1-based line in that cell) of a line of the joined source."""
    index = bisect_right([start for start, _ in cells], line) - 1
    if index < 0:
        return cells[0][1], line
    start, cell = cells[index]
    return cell, line - start + 1


@dataclass
class _Cell:
    index: int                 # 0-based position among all cells
    original: str              # the cell's text as stored
    python: str                # the text the checker reads (IPython lines replaced), ending in a line break
    added_newline: bool        # python got a line break the original lacks
    magics: dict[int, str]     # placeholder number -> the original line it stands for


class Notebook:
    """A parsed ``.ipynb`` file: the Python the checker reads, and the way back."""

    encoding = "utf-8"

    def __init__(self, raw: str, bom: bool, cells: list[_Cell], marker: str):
        self.raw = raw
        self.bom = bom
        self._cells = cells
        self._marker = marker
        self._boundary = f"# {marker}-cell"
        self._magic_re = re.compile(rf"^[ \t]*(?:pass  )?# {re.escape(marker)}-magic-(\d+)[ \t]*(\r\n|\r|\n)?$")
        parts: list[str] = []
        starts: list[tuple[int, int]] = []
        line = 1
        for cell in cells:
            starts.append((line, cell.index + 1))
            parts.append(cell.python)
            parts.append(self._boundary + "\n")
            line += len(_LINE_RE.findall(cell.python)) + 1
        self.text = "".join(parts)
        self.cells: CellMap = tuple(starts)

    # ------------------------------------------------------------------ reading
    @classmethod
    def from_bytes(cls, data: bytes) -> "Notebook":
        bom = data.startswith(b"\xef\xbb\xbf")
        try:
            raw = data.decode("utf-8-sig")
        except UnicodeDecodeError as exc:
            raise SourceError(f"not a valid notebook: not UTF-8 ({exc.reason} at byte {exc.start})") from None
        try:
            document = json.loads(raw)
        except RecursionError:
            raise SourceError("not a valid notebook: JSON nested too deeply") from None
        except ValueError as exc:
            line, col = getattr(exc, "lineno", 1), getattr(exc, "colno", 1)
            message = getattr(exc, "msg", str(exc))
            raise SourceError(f"not a valid notebook: invalid JSON ({message} at line {line} column {col})",
                              line, max(0, col - 1)) from None
        cells = _code_cells(document)
        marker = "dynlint-nb"
        number = 0
        while marker in raw:  # a marker the notebook itself never contains
            number += 1
            marker = f"dynlint-nb{number}"
        return cls(raw, bom, [_read_cell(index, text, marker) for index, text in cells], marker)

    # ------------------------------------------------------------------ the way back
    def cell_texts(self, text: str) -> list[tuple[int, str]]:
        """(cell number, cell text) of every code cell in ``text`` (this notebook's joined source,
        possibly fixed): boundaries removed, IPython lines put back.  Raises SourceError when a
        change crossed a cell boundary."""
        pieces: list[list[str]] = [[]]
        for line in _LINE_RE.findall(text):
            if line.rstrip("\r\n") == self._boundary:
                pieces.append([])
            else:
                pieces[-1].append(line)
        if pieces[-1]:
            raise SourceError("the fixed code no longer ends with its last cell")
        pieces.pop()
        if len(pieces) != len(self._cells):
            raise SourceError("a change crossed a notebook cell boundary")
        texts = []
        for cell, lines in zip(self._cells, pieces):
            restored = []
            for line in lines:
                match = self._magic_re.match(line)
                restored.append(cell.magics[int(match.group(1))] if match and int(match.group(1)) in cell.magics
                                else line)
            cell_text = "".join(restored)
            if cell.added_newline and cell_text.endswith("\n"):
                cell_text = cell_text[:-1]
            texts.append((cell.index + 1, cell_text))
        return texts

    def cells_of(self, text: str) -> CellMap:
        """The cell map of ``text`` (this notebook's joined source after a fix changed line counts)."""
        starts, line, start = [], 1, 1
        cells = iter(self._cells)
        for source_line in _LINE_RE.findall(text):
            if source_line.rstrip("\r\n") == self._boundary:
                cell = next(cells, None)
                if cell is None:
                    break
                starts.append((start, cell.index + 1))
                start = line + 1
            line += 1
        return tuple(starts)

    def encode(self, text: str) -> bytes:
        """The notebook file with ``text`` (a fixed joined source) written back into its cells."""
        new_texts = dict(self.cell_texts(text))
        changed = {cell.index: new_texts[cell.index + 1] for cell in self._cells
                   if new_texts[cell.index + 1] != cell.original}
        raw = self.raw
        if changed:
            spans = _source_spans(raw)
            for index in sorted(changed, reverse=True):
                start, end = spans[index]
                raw = raw[:start] + _serialize_like(raw, start, end, changed[index]) + raw[end:]
        return (b"\xef\xbb\xbf" if self.bom else b"") + raw.encode("utf-8")


# ---------------------------------------------------------------------- notebook structure
def _code_cells(document) -> list[tuple[int, str]]:
    """(index among all cells, text) of the code cells of a Python notebook; SourceError for a
    file that is JSON but not a notebook."""
    if not isinstance(document, dict):
        raise SourceError("not a valid notebook: the JSON is not an object")
    nbformat = document.get("nbformat")
    if nbformat != 4:
        raise SourceError(f"not a valid notebook: nbformat {nbformat!r} (only nbformat 4 is supported)")
    if not isinstance(document.get("cells"), list):
        raise SourceError("not a valid notebook: no list of cells")
    metadata = document.get("metadata") if isinstance(document.get("metadata"), dict) else {}
    language = (metadata.get("language_info") or {}).get("name") if isinstance(metadata.get("language_info"),
                                                                                  dict) else None
    if language is None and isinstance(metadata.get("kernelspec"), dict):
        language = metadata["kernelspec"].get("language")
    if isinstance(language, str) and language.lower() != "python":
        return []  # an R or Julia notebook: nothing for a Python checker (ruff skips them too)
    cells = []
    for index, cell in enumerate(document["cells"]):
        if not isinstance(cell, dict):
            raise SourceError(f"not a valid notebook: cell {index + 1} is not an object")
        source = cell.get("source", "")
        if isinstance(source, list) and all(isinstance(part, str) for part in source):
            source = "".join(source)
        if not isinstance(source, str):
            raise SourceError(f"not a valid notebook: cell {index + 1} has a source that is not text")
        if cell.get("cell_type") == "code" and not _is_magic_cell(source):
            cells.append((index, source))
    return cells


def _is_magic_cell(source: str) -> bool:
    """A cell run by a cell magic (``%%bash``) or an automagic (``pip install x``) is not Python."""
    lines = source.splitlines()
    if any(line.lstrip().startswith("%%") for line in lines):
        return True
    first = next((line for line in lines if line.strip()), "")
    words = first.split()
    return bool(words) and words[0] in AUTOMAGICS and not _parses(first.strip())


def _parses(code: str) -> bool:
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            ast.parse(code)
    except (SyntaxError, ValueError):
        return False
    return True


# ---------------------------------------------------------------------- IPython lines
def _read_cell(index: int, original: str, marker: str) -> _Cell:
    lines = _LINE_RE.findall(original)
    out: list[str] = []
    magics: dict[int, str] = {}
    scanner = _Scanner()
    continuing_magic = False
    for line in lines:
        ending = line[len(line.rstrip("\r\n")):]
        body = line[:len(line) - len(ending)]
        if continuing_magic or (scanner.at_statement_start() and _is_magic_line(body)):
            number = len(magics)
            magics[number] = line
            indent = body[:len(body) - len(body.lstrip())]
            prefix = "# " if continuing_magic else f"{indent}pass  # "
            out.append(f"{prefix}{marker}-magic-{number}{ending}")
            continuing_magic = body.endswith("\\")
            continue
        scanner.feed(body)
        out.append(line)
    python = "".join(out)
    added = not python.endswith(("\n", "\r"))
    if added:
        python += "\n"
    return _Cell(index, original, python, added, magics)


def _is_magic_line(body: str) -> bool:
    stripped = body.strip()
    if not stripped:
        return False
    if stripped[0] in "%!?":
        return True
    if _MAGIC_ASSIGNMENT_RE.match(stripped):
        return True
    if stripped.endswith("?"):  # obj? / obj?? (help); a "?" is never Python outside strings and comments
        probe = _Scanner()
        return probe.feed(body) == "?"
    return False


class _Scanner:
    """Just enough of Python's tokenizer to know whether a line starts a new statement:
    open brackets, open strings (triple-quoted across lines), backslash continuations."""

    def __init__(self):
        self.depth = 0
        self.quote: str | None = None
        self.continued = False

    def at_statement_start(self) -> bool:
        return self.depth == 0 and self.quote is None and not self.continued

    def feed(self, body: str) -> str:
        """Scan one line (without its line break); returns the last code character (or "")."""
        last = ""
        i, n = 0, len(body)
        self.continued = False
        while i < n:
            if self.quote is not None:
                if body[i] == "\\":
                    i += 2
                    continue
                if body.startswith(self.quote, i):
                    i += len(self.quote)
                    self.quote = None
                    last = '"'
                    continue
                i += 1
                continue
            char = body[i]
            if char == "#":
                break
            if char in "([{":
                self.depth += 1
            elif char in ")]}":
                self.depth = max(0, self.depth - 1)
            elif char in "\"'":
                self.quote = char * 3 if body.startswith(char * 3, i) else char
                i += len(self.quote)
                continue
            elif char == "\\" and i == n - 1:
                self.continued = True
            if not char.isspace():
                last = char
            i += 1
        if self.quote is not None and len(self.quote) == 1:
            if body.endswith("\\"):
                self.continued = True  # a single-quoted string continued on the next line
            else:
                self.quote = None  # unterminated: the parser will say so
        return last


# ---------------------------------------------------------------------- writing JSON back
def _source_spans(raw: str) -> dict[int, tuple[int, int]]:
    """Offsets of each cell's ``"source"`` value in the notebook's JSON text (the last one,
    when a key repeats, as ``json.loads`` keeps)."""
    decoder = json.JSONDecoder()
    spans: dict[int, tuple[int, int]] = {}
    position = _skip(raw, 0)

    def members(position: int):
        """(key, value start) of each member of the object at ``position``; yields the end last."""
        if raw[position] != "{":
            raise SourceError("not a valid notebook: expected a JSON object")
        position = _skip(raw, position + 1)
        if raw[position] == "}":
            yield None, position + 1
            return
        while True:
            key, position = json.decoder.scanstring(raw, position + 1)
            position = _skip(raw, position)
            position = _skip(raw, position + 1)  # the colon
            end = yield key, position
            position = _skip(raw, end)
            if raw[position] == "}":
                yield None, position + 1
                return
            position = _skip(raw, position + 1)  # the comma

    walker = members(position)
    key, start = next(walker)
    while key is not None:
        if key == "cells" and raw[start] == "[":
            position = _skip(raw, start + 1)
            index = 0
            while raw[position] != "]":
                cell = members(position)
                cell_key, value = next(cell)
                while cell_key is not None:
                    _, end = decoder.raw_decode(raw, value)
                    if cell_key == "source":
                        spans[index] = (value, end)
                    cell_key, value = cell.send(end)
                position = _skip(raw, value)
                index += 1
                if raw[position] == ",":
                    position = _skip(raw, position + 1)
            end = position + 1
        else:
            _, end = decoder.raw_decode(raw, start)
        key, start = walker.send(end)
    return spans


def _skip(raw: str, position: int) -> int:
    while position < len(raw) and raw[position] in " \t\r\n":
        position += 1
    return position


def _serialize_like(raw: str, start: int, end: int, text: str) -> str:
    """``text`` as a JSON cell source, in the style of the value at raw[start:end]: a list of
    lines (Jupyter's usual form, one element per line, same indentation) or one string."""
    old = raw[start:end]
    ascii_only = not any(ord(char) > 127 for char in old) and re.search(r"\\u00[89a-fA-F]|\\u0[1-9a-fA-F]|"
                                                                       r"\\u[1-9a-fA-F]", old) is not None
    if not old.startswith("["):
        return json.dumps(text, ensure_ascii=ascii_only)
    items = [json.dumps(line, ensure_ascii=ascii_only) for line in text.splitlines(True)]  # as nbformat splits
    if not items:
        return "[]"
    inner = re.match(r"\[(\s*)", old).group(1)
    if old != "[]" and "\n" not in inner:
        return "[" + ", ".join(items) + "]"  # a list written on one line
    if "\n" in inner:
        closing = re.search(r"(\s*)\]$", old).group(1)
    else:  # was empty: one element per line, one level deeper than the "source" key (Jupyter's indent)
        line_start = raw.rfind("\n", 0, start) + 1
        indent = re.match(r"[ \t]*", raw[line_start:]).group(0)
        inner, closing = "\n" + indent + " ", "\n" + indent
    return "[" + inner + ("," + inner).join(items) + closing + "]"
