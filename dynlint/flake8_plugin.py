"""flake8 plugin: the same findings as ``dynlint check``, under the ``DYN`` prefix.

It runs the analyzer on the ``ast`` tree flake8 has already parsed (no second
parse).  Selection and ``# noqa`` are flake8's business; from ``[tool.dynlint]``
only ``extend-dynamic-ops`` is used, loaded once per process.
"""

from __future__ import annotations

import ast
import os
import re
import sys
from functools import lru_cache
from typing import Iterator

from dynlint import __version__
from dynlint.codes import ALL_CODES
from dynlint.config import Settings

# flake8 reports unparsable files itself (E999), so DYN000 is never ours to report here.
_FLAKE8_CODES = frozenset(code for code in ALL_CODES if code != "DYN000")
_FILE_EXEMPT_RE = re.compile(r"^\s*#\s*dynlint\s*:\s*noqa\s*$", re.IGNORECASE)


@lru_cache(maxsize=1)
def project_settings(cwd: str) -> Settings:
    """``[tool.dynlint]`` of the project flake8 runs in (the nearest one above ``cwd``)."""
    from dynlint.errors import UsageError
    from dynlint.config import load_settings

    try:
        settings = load_settings([cwd], {})
    except UsageError as exc:
        # flake8 has no exit code of ours to give: say it once and go on with defaults.
        print(f"dynlint: error: {exc} (flake8 plugin uses the defaults)", file=sys.stderr)
        return Settings()
    return Settings(extend_dynamic_ops=settings.extend_dynamic_ops, root=settings.root, source=settings.source)


class Plugin:
    name = "dynlint"
    version = __version__

    def __init__(self, tree: ast.AST, lines: list[str], filename: str = "") -> None:
        self.tree = tree
        self.lines = lines
        self.filename = filename

    def run(self) -> Iterator[tuple[int, int, str, type]]:
        from dynlint.api import check_tree

        lines = [line.rstrip("\r\n") for line in self.lines]
        if any(_FILE_EXEMPT_RE.match(line) for line in lines):
            return
        settings = project_settings(os.getcwd())
        for finding in check_tree(self.tree, lines, settings, _FLAKE8_CODES):
            if finding.code == "DYN000":  # the analyzer gave up on this file (e.g. too deep)
                continue
            yield finding.line, finding.col, f"{finding.code} {finding.message}", type(self)
