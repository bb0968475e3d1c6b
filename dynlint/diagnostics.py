"""The data a check produces: findings and the fixes they carry.

Positions are 1-based lines and 0-based *character* columns (ast reports UTF-8
byte offsets; the checker converts).  Output formats turn columns 1-based.
A fix is a set of edits on the original text, so the rewriting step (libcst,
only for files that have fixes) needs nothing but the finding itself.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import Enum


class Applicability(str, Enum):
    SAFE = "safe"      # keeps results equal for every input
    UNSAFE = "unsafe"  # offered; applied only with --unsafe-fixes


@dataclass(frozen=True)
class Edit:
    """Replace the text between (line, col) and (end_line, end_col) with content."""

    line: int
    col: int
    end_line: int
    end_col: int
    content: str

    def to_dict(self) -> dict:
        return {
            "content": self.content,
            "location": {"row": self.line, "column": self.col + 1},
            "end_location": {"row": self.end_line, "column": self.end_col + 1},
        }


@dataclass(frozen=True)
class Fix:
    applicability: Applicability
    message: str
    edits: tuple[Edit, ...]

    def to_dict(self) -> dict:
        return {
            "applicability": self.applicability.value,
            "message": self.message,
            "edits": [e.to_dict() for e in self.edits],
        }


@dataclass(frozen=True)
class Finding:
    code: str
    message: str
    line: int
    col: int
    end_line: int
    end_col: int
    fix: Fix | None = None
    filename: str = field(default="", compare=False)
    #: where the code runs (dynlint.analysis.regions): compiled, training, host, unknown; "" before
    #: the project's regions are known
    region: str = field(default="", compare=False)

    def sort_key(self):
        return (self.filename, self.line, self.col, self.code)


@dataclass
class FileResult:
    """What checking one file produced; picklable, so a process pool can return it."""

    path: str
    relpath: str
    findings: list[Finding]
    lines: dict[int, str] = field(default_factory=dict)  # source of the lines findings point at
    # Jupyter notebooks: (first line, 1-based cell number) of each code cell in the checked source,
    # whose line numbers the findings use; None for Python files.
    cells: tuple[tuple[int, int], ...] | None = None

    def locate(self, line: int) -> tuple[int | None, int]:
        """(cell number or None, line) for display: notebook lines count from their cell's start."""
        if not self.cells:
            return None, line
        from dynlint.notebook import locate

        return locate(self.cells, line)
