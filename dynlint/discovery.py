"""Which files ``dynlint check`` reads.

Directories are walked in sorted order, skipping version-control metadata,
virtualenvs, caches, build output and the configured ``exclude`` globs; only
``.py``/``.pyi``/``.ipynb`` files are picked up there.  A file named on the command line is
always checked, whatever its extension.  Symlinked directories are followed once
(a loop is not walked twice).
"""

from __future__ import annotations

import fnmatch
import os
import stat
import sys
from dataclasses import dataclass
from typing import Callable, Iterator, Sequence

from dynlint.config import CACHE_DIR_NAME, Settings
from dynlint.errors import UsageError

PYTHON_SUFFIXES = (".py", ".pyi", ".ipynb")  # .ipynb: Jupyter notebooks (dynlint.notebook)
STDIN = "-"  # the path that means "read the source from standard input"

# Directory names never walked into (ruff's defaults plus our own cache);
# an explicitly named directory is still walked.
SKIPPED_DIR_NAMES = frozenset({
    ".bzr", ".direnv", ".eggs", ".git", ".git-rewrite", ".hg", ".svn", ".ipynb_checkpoints",
    ".mypy_cache", ".nox", ".pants.d", ".pyenv", ".pytest_cache", ".pytype", ".ruff_cache",
    ".tox", ".venv", ".vscode", "__pycache__", "__pypackages__", "_build", "buck-out",
    "build", "dist", "node_modules", "site-packages", "venv", CACHE_DIR_NAME,
})
SKIPPED_DIR_GLOBS = ("*.egg-info",)


@dataclass(frozen=True)
class SourceFile:
    path: str      # as the user wrote it (joined with what the walk found); shown in output
    relpath: str   # '/'-separated, relative to settings.root; matched by per-file-ignores


def relative_to_root(path: str, root: str) -> str:
    """``path`` relative to ``root`` with '/' separators (absolute when on another drive)."""
    absolute = os.path.abspath(path)
    root_absolute = _absolute_root(root)
    if absolute.startswith(root_absolute) and absolute[len(root_absolute):len(root_absolute) + 1] == os.sep:
        rel = absolute[len(root_absolute) + 1:]  # the common case, without relpath's own abspath calls
    else:
        try:
            rel = os.path.relpath(absolute, root_absolute)
        except ValueError:  # Windows: different drives
            rel = absolute
    return rel.replace(os.sep, "/")


def _absolute_root(root: str) -> str:
    """``os.path.abspath(root)``, once per root and working directory of a run (a check relates
    every file to the same root)."""
    key = (root, os.getcwd()) if not os.path.isabs(root) else (root, "")
    found = _ROOTS.get(key)
    if found is None:
        found = _ROOTS[key] = os.path.abspath(root)
    return found


_ROOTS: dict[tuple[str, str], str] = {}


def is_skipped_dir(name: str, path: str) -> bool:
    if name in SKIPPED_DIR_NAMES or any(fnmatch.fnmatchcase(name, g) for g in SKIPPED_DIR_GLOBS):
        return True
    # Any virtualenv, whatever its name (``env``, ``.env311`` ...).
    return os.path.isfile(os.path.join(path, "pyvenv.cfg"))


def warn(message: str) -> None:
    print(f"dynlint: warning: {message}", file=sys.stderr)


_warn = warn


def iter_source_files(paths: Sequence[str], settings: Settings,
                      warn: Callable[[str], None] = _warn) -> Iterator[SourceFile]:
    """Every file to check, deterministic: arguments in order, each directory sorted.

    Raises ``UsageError`` up front (before yielding anything) for a missing path.
    A file reached twice (two arguments, symlinks) is yielded once.
    """
    paths = list(paths) or ["."]
    missing = [p for p in paths if not os.path.exists(p)]
    if missing:
        raise UsageError(f"path does not exist: {', '.join(missing)}")
    return _generate(paths, settings, warn)


def _generate(paths: list[str], settings: Settings, warn) -> Iterator[SourceFile]:
    seen_files: set[tuple[int, int] | str] = set()
    seen_dirs: set[tuple[int, int]] = set()

    def file_key(path: str):
        try:
            info = os.stat(path)
            return (info.st_dev, info.st_ino)
        except OSError:
            return os.path.abspath(path)  # dangling link: reported as unreadable by the checker

    for given in paths:
        if os.path.isdir(given):
            yield from _walk(given, settings, warn, seen_files, seen_dirs, file_key)
        else:
            key = file_key(given)
            if key not in seen_files:
                seen_files.add(key)
                yield SourceFile(given, relative_to_root(given, settings.root))


def _walk(top: str, settings: Settings, warn, seen_files, seen_dirs, file_key) -> Iterator[SourceFile]:
    try:
        info = os.stat(top)
    except OSError as exc:
        warn(f"cannot read directory {top}: {exc.strerror or exc}")
        return
    dir_key = (info.st_dev, info.st_ino)
    if dir_key in seen_dirs:
        return  # symlink loop or the same directory given twice
    seen_dirs.add(dir_key)
    try:
        with os.scandir(top) as scan:
            entries = sorted(scan, key=lambda e: e.name)
    except OSError as exc:
        warn(f"cannot read directory {top}: {exc.strerror or exc}")
        return
    for entry in entries:
        path = os.path.normpath(entry.path)  # "./a.py" -> "a.py", as ruff prints it
        try:
            is_dir = entry.is_dir()  # follows symlinks
        except OSError:
            is_dir = False
        relpath = relative_to_root(path, settings.root)
        if is_dir:
            if is_skipped_dir(entry.name, path) or settings.is_excluded(relpath):
                continue
            yield from _walk(path, settings, warn, seen_files, seen_dirs, file_key)
            continue
        if not entry.name.endswith(PYTHON_SUFFIXES) or settings.is_excluded(relpath):
            continue
        try:
            mode = os.stat(path).st_mode
            if not stat.S_ISREG(mode):
                continue  # a FIFO or device would block or never end
        except OSError:
            pass  # dangling symlink: let the checker report it (DYN000)
        key = file_key(path)
        if key in seen_files:
            continue
        seen_files.add(key)
        yield SourceFile(path, relpath)
