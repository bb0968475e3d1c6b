"""flake8 plugin: the same rules as ``dynlint check``, under the ``DYN`` prefix.

It runs the analyzer on the ``ast`` tree flake8 has already parsed (no second
parse).  Selection and ``# noqa`` are flake8's business; from ``[tool.dynlint]``
only ``extend-dynamic-ops`` and ``include-host`` are used, loaded once per
process.

flake8 hands a plugin one file at a time, so the plugin cannot see the rest of
the project.  When a ``dynlint check`` of the project left its facts in the
results cache (``.dynlint_cache/project.json``), the file is read as part of
that project (what its callers pass, what its callees return, where it runs);
otherwise as a project of its own.
"""

from __future__ import annotations

import ast
import os
import re
import sys
from functools import lru_cache
from typing import Iterator

from dynlint import __version__
from dynlint.codes import ALL_CODES, OPT_IN_CODES
from dynlint.config import Settings

# flake8 reports unparsable files itself (E999), so DYN000 is never ours to report here; the opt-in
# rules (DYN204, DYN205, DYN501) only when flake8's --select/--extend-select names them by their code, as
# `dynlint check` does (`--select DYN` does not turn them on)
_FLAKE8_CODES = frozenset(code for code in ALL_CODES if code != "DYN000" and code not in OPT_IN_CODES)
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
    return Settings(extend_dynamic_ops=settings.extend_dynamic_ops, include_host=settings.include_host,
                    root=settings.root, source=settings.source)


@lru_cache(maxsize=1)
def project_table(cwd: str):
    """The project facts the last ``dynlint check`` saved in the results cache, or None."""
    from dynlint.cache import Cache, default_cache_dir

    settings = project_settings(cwd)
    return Cache(default_cache_dir(settings), settings).load_project()


class Plugin:
    name = "dynlint"
    version = __version__
    #: the codes this run may report: the default ones, and the opt-in ones flake8's options name
    codes = _FLAKE8_CODES

    @classmethod
    def parse_options(cls, options) -> None:
        """flake8 hands over its parsed options once: an opt-in rule runs when ``--select`` or
        ``--extend-select`` (or their config keys) names its full code."""
        named = set()
        for key in ("select", "extend_select"):
            for value in getattr(options, key, None) or ():
                named.update(part.strip().upper() for part in str(value).split(","))
        cls.codes = _FLAKE8_CODES | frozenset(code for code in OPT_IN_CODES if code in named)

    def __init__(self, tree: ast.AST, lines: list[str], filename: str = "") -> None:
        self.tree = tree
        self.lines = lines
        self.filename = filename

    def run(self) -> Iterator[tuple[int, int, str, type]]:
        from dynlint.api import check_tree

        lines = [line.rstrip("\r\n") for line in self.lines]
        if any(_FILE_EXEMPT_RE.match(line) for line in lines):
            return
        cwd = os.getcwd()
        settings = project_settings(cwd)
        table = project_table(cwd)
        filename = self.filename
        if table is not None and filename:
            from dynlint.discovery import relative_to_root

            filename = relative_to_root(filename, settings.root)
        for finding in check_tree(self.tree, lines, settings, self.codes, filename=filename, table=table):
            if finding.code == "DYN000":  # the analyzer gave up on this file (e.g. too deep)
                continue
            yield finding.line, finding.col, f"{finding.code} {finding.message}", type(self)
