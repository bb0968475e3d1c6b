"""Effective settings for a check run.

``Settings`` is what the engine consumes; loading it from ``[tool.dynlint]`` in
pyproject.toml and from CLI flags happens in ``load_settings``.
"""

from __future__ import annotations

import fnmatch
from dataclasses import dataclass, field

from dynlint.codes import ALL_CODES

# Rules enabled when the user selects nothing.
DEFAULT_SELECT = frozenset(ALL_CODES)


@dataclass(frozen=True)
class Settings:
    select: frozenset[str] = DEFAULT_SELECT
    per_file_ignores: tuple[tuple[str, frozenset[str]], ...] = ()
    exclude: tuple[str, ...] = ()
    extend_dynamic_ops: tuple[str, ...] = ()   # fully qualified names, reported as DYN105
    root: str = "."                            # directory that globs are relative to
    source: str | None = field(default=None, compare=False)  # the pyproject.toml used, if any

    def enabled_codes(self, relpath: str | None = None) -> frozenset[str]:
        """Codes active for a file (``relpath`` relative to ``root``, '/'-separated)."""
        codes = self.select | {"DYN000"}
        if relpath is not None:
            for pattern, ignored in self.per_file_ignores:
                if _glob_match(relpath, pattern):
                    codes = codes - ignored
        return frozenset(codes)

    def fingerprint(self) -> str:
        """A stable string of everything that changes findings (for the cache key)."""
        return repr((sorted(self.select), self.per_file_ignores, self.extend_dynamic_ops))


def _glob_match(relpath: str, pattern: str) -> bool:
    name = relpath.rsplit("/", 1)[-1]
    return (
        fnmatch.fnmatchcase(relpath, pattern)
        or fnmatch.fnmatchcase(name, pattern)
        or fnmatch.fnmatchcase(relpath, pattern.rstrip("/") + "/*")
    )
