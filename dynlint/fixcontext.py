"""What the checker hands to fix builders (``dynlint.fixes.build_fix``).

Fixes are computed during the one ast pass, as text edits on the original
source; the libcst step (``dynlint.fixer``) only applies them.  A builder sees
the node a finding is about, its ancestors, and this context.
"""

from __future__ import annotations

import ast
from typing import Protocol


class FixContext(Protocol):
    #: local name bound to the ``torch`` module (``"torch"`` or an alias like ``"T"``),
    #: None when the file has no module-level binding of torch itself.
    torch_alias: str | None

    def segment(self, node: ast.AST) -> str:
        """The node's exact source text (original formatting, comments inside kept)."""

    def position(self, node: ast.AST) -> tuple[int, int, int, int]:
        """(line, col, end_line, end_col): 1-based lines, 0-based character columns."""

    def source_line(self, number: int) -> str:
        """Line ``number`` (1-based) of the file, without its line break ("" outside the file)."""

    def binding(self, name: str) -> ast.expr | None:
        """The expression the local ``name`` was bound to by a plain ``name = expr`` in the
        current function (or module) scope, when that binding still describes ``name`` and
        everything ``expr`` reads on every path to this point (see dynlint.analysis.rebinding:
        rebindings in between, loop back-edges, closures, in-place shape changes); None if
        unknown, rebound, bound in a loop/branch, augmented, or a parameter."""

    def latest_binding(self, name: str) -> ast.expr | None:
        """Like ``binding``, but for a name bound again too: the value of its latest binding when
        that is a plain ``name = expr`` outside branches and loops of the function (it dominates
        what follows) and still holds here.  A self-referential value (``h = h.view(-1)``) reads
        the previous ``h``: facts derived through it must not need that one (the shape facts of
        ``dynlint.analysis.shapes`` give up on the recursion)."""

    def forget(self, nodes) -> None:
        """Drop anything cached about these nodes (made-up expressions, see dynlint.fixspans):
        caches keyed by id() must not answer for a later node that reuses the id."""

    def kind(self, node: ast.expr) -> str | None:
        """Inferred kind of an expression: "tensor", "mask" (boolean tensor), "scalar_tensor"
        (0-d tensor from a full reduction), "data" (Python value from tensor data: .item(),
        .tolist(), int(t)), "size" (static int from .shape/.size()/.numel()), "ndarray",
        "py" (plain Python value), "module" (an nn.Module instance), or None (unknown)."""
