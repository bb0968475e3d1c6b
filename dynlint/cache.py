"""The results cache of ``dynlint check`` (``.dynlint_cache/`` in the project root).

One entry per checked file content: the key hashes the file's bytes together
with everything else that decides its findings (dynlint's version and its own
source, the effective settings, the rules enabled for that path), so a hit
can only return what a fresh check would.  Entries are compact JSON (never
pickle: a cache directory may be shared, and loading it must not run code),
written to a temporary file and renamed into place, so concurrent runs
sharing one cache see either a whole entry or none.  Anything unexpected in
the cache is a miss, never an error.
"""

from __future__ import annotations

import hashlib
import json
import os
import sys
from pathlib import Path

from dynlint import __version__
from dynlint.atomic import replace_file
from dynlint.config import CACHE_DIR_NAME, Settings
from dynlint.notebook import is_notebook
from dynlint.diagnostics import Applicability, Edit, FileResult, Finding, Fix

ENTRIES_DIR_NAME = "entries"
FORMAT_VERSION = 1

# https://bford.info/cachedir/ : backup and archiving tools skip directories holding this.
CACHEDIR_TAG = (
    "Signature: 8a477f597d28d172789f06886806bc55\n"
    "# This file is a cache directory tag created by dynlint.\n"
    "# For information about cache directory tags, see https://bford.info/cachedir/\n"
)


def default_cache_dir(settings: Settings) -> str:
    return os.path.join(settings.root, CACHE_DIR_NAME)


def open_cache(directory: str | None, settings: Settings, *, enabled: bool = True) -> "Cache | None":
    """The results cache for a run (``directory`` or the project's default), or None when
    caching is off (``--no-cache``) or the directory cannot be created."""
    if not enabled:
        return None
    return Cache.open(directory or default_cache_dir(settings), settings)


def is_dynlint_cache(directory: str) -> bool:
    """Whether ``directory`` is a cache this module created (so removing it is safe)."""
    try:
        with open(os.path.join(directory, "CACHEDIR.TAG"), encoding="utf-8") as handle:
            return "created by dynlint" in handle.read(512)
    except (OSError, UnicodeDecodeError):
        return False


def _code_digest() -> str:
    """A digest of dynlint's own modules: an edited checker (editable installs keep
    the version number) must not be served results of the old one."""
    digest = hashlib.blake2b(digest_size=16)
    package = Path(__file__).resolve().parent
    for module in sorted(package.glob("*.py")):
        try:
            digest.update(module.name.encode())
            digest.update(module.read_bytes())
        except OSError:
            digest.update(b"?")
    return digest.hexdigest()


class Cache:
    """Lookups and stores for one run; picklable, so pool workers get their own copy."""

    def __init__(self, directory: str, settings: Settings):
        self.directory = directory
        self.entries = os.path.join(directory, ENTRIES_DIR_NAME)
        self._salt = "\0".join((str(FORMAT_VERSION), __version__, _code_digest(), settings.fingerprint()))
        self._settings = settings
        self._salts: dict[frozenset[str], bytes] = {}

    @classmethod
    def open(cls, directory: str, settings: Settings) -> "Cache | None":
        """The cache in ``directory`` (created with its tag files), or None with a
        warning when it cannot be created: checking goes on uncached."""
        try:
            os.makedirs(os.path.join(directory, ENTRIES_DIR_NAME), exist_ok=True)
            for name, content in (("CACHEDIR.TAG", CACHEDIR_TAG), (".gitignore", "# Created by dynlint.\n*\n")):
                path = os.path.join(directory, name)
                if not os.path.exists(path):
                    replace_file(path, content.encode())
        except OSError as exc:
            print(f"dynlint: warning: cache disabled, cannot create {directory}: {exc.strerror or exc}",
                  file=sys.stderr)
            return None
        return cls(directory, settings)

    # ---------------------------------------------------------------- keys
    def key(self, data: bytes, relpath: str) -> str:
        """The entry name for this content checked at ``relpath`` (which decides the
        rules enabled through per-file-ignores)."""
        enabled = self._settings.enabled_codes(relpath)
        salt = self._salts.get(enabled)
        if salt is None:
            salt = self._salts[enabled] = f"{self._salt}\0{','.join(sorted(enabled))}\0".encode()
        digest = hashlib.blake2b(salt, digest_size=20)
        if is_notebook(relpath):  # the same bytes read as a notebook or as Python give different results
            digest.update(b"ipynb\0")
        digest.update(data)
        return digest.hexdigest()

    def _entry_path(self, key: str) -> str:
        return os.path.join(self.entries, key[:2], key[2:])

    # ---------------------------------------------------------------- load / store
    def load(self, key: str, path: str, relpath: str) -> FileResult | None:
        try:
            with open(self._entry_path(key), "rb") as handle:
                entry = json.loads(handle.read())
            findings = [_finding_from_json(item, path) for item in entry["f"]]
            lines = {int(number): text for number, text in entry["l"].items()}
            cells = None if entry.get("c") is None else tuple((int(start), int(cell)) for start, cell in entry["c"])
        except (OSError, ValueError, KeyError, TypeError, AttributeError, IndexError):
            return None  # absent, torn or foreign: check the file again
        return FileResult(path, relpath, findings, lines, cells)

    def store(self, key: str, result: FileResult) -> None:
        entry = {"f": [_finding_to_json(f) for f in result.findings],
                 "l": {str(number): text for number, text in result.lines.items()}}
        if result.cells is not None:
            entry["c"] = [list(pair) for pair in result.cells]
        payload = json.dumps(entry, ensure_ascii=False, separators=(",", ":")).encode("utf-8", "surrogatepass")
        target = self._entry_path(key)
        try:
            try:
                self._write(target, payload)
            except FileNotFoundError:
                os.makedirs(os.path.dirname(target), exist_ok=True)
                self._write(target, payload)
        except OSError:
            pass  # a cache that cannot be written only costs time

    def _write(self, target: str, payload: bytes) -> None:
        replace_file(target, payload)


# -------------------------------------------------------------------- JSON form
def _finding_to_json(finding: Finding) -> list:
    fix = finding.fix
    fix_json = None if fix is None else [
        fix.applicability.value, fix.message,
        [[e.line, e.col, e.end_line, e.end_col, e.content] for e in fix.edits],
    ]
    return [finding.code, finding.message, finding.line, finding.col, finding.end_line, finding.end_col, fix_json]


def _finding_from_json(item: list, filename: str) -> Finding:
    code, message, line, col, end_line, end_col, fix_json = item
    fix = None
    if fix_json is not None:
        applicability, fix_message, edits = fix_json
        fix = Fix(Applicability(applicability), fix_message, tuple(Edit(*edit) for edit in edits))
    return Finding(code, message, line, col, end_line, end_col, fix, filename)
