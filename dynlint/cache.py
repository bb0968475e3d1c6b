"""The results cache of ``dynlint check`` (``.dynlint_cache/`` in the project root).

One entry per checked file content: the key hashes the file's bytes together
with everything else of this file that decides its walk (dynlint's version and
its own source, the effective settings, the rules enabled for that path, the
module name the project index gives it and the project's top-level packages).

A file's findings also depend on other files, through the project table
(``dynlint.analysis.facts``).  So an entry holds *variants*: the outcome of
each walk of this content, with every question that walk asked of the table
and the answer it got.  A lookup hits only when the current table gives every
recorded question the same answer — editing a helper changes what its callers'
questions get, so they are walked again; nothing stale is ever served.

Entries are compact JSON (never pickle: a cache directory may be shared, and
loading it must not run code), written to a temporary file and renamed into
place, so concurrent runs sharing one cache see either a whole entry or none.
Anything unexpected in the cache is a miss, never an error.

``project.json`` keeps the facts of the last full run's files, for the flake8
plugin, which sees one file at a time.

``runs/`` keeps whole runs: the final results of a run (regions decided,
findings filtered) under a key made of everything a run's results depend on
but its files' contents (the salt above, ``include_host``, the working
directory, the Python version, and each file's path, relative path and module
name).  The snapshot records each file's size, ``mtime_ns``, ``ctime_ns`` and
content key; a later run with the same key is served the snapshot when every
file still has them.  The stat is trusted only when the file's ctime (which
every write, and every ``touch`` setting an old mtime back, moves to the
present) is older than the snapshot's run by ``RACY_S`` (a file edited twice
within the file system's timestamp granularity keeps its size and times);
otherwise the file is read and its content key compared.  Anything different
is a miss: the run goes through the per-file entries and the project pass as
usual, and writes a new snapshot.
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
from dynlint.diagnostics import Applicability, Edit, Finding, Fix
from dynlint.notebook import is_notebook

ENTRIES_DIR_NAME = "entries"
RUNS_DIR_NAME = "runs"
PROJECT_FILE_NAME = "project.json"
FORMAT_VERSION = 2
MAX_VARIANTS = 8
MAX_RUNS = 16     # snapshots of distinct runs (file lists, options) kept; the oldest go first
RACY_S = 2.0      # an mtime this close to the run that recorded it does not prove the content unchanged

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
    for module in sorted(package.rglob("*.py")):
        if "runtime" in module.relative_to(package).parts or "commands" in module.relative_to(package).parts:
            continue  # not on the check path
        try:
            digest.update(str(module.relative_to(package)).encode())
            digest.update(module.read_bytes())
        except OSError:
            digest.update(b"?")
    return digest.hexdigest()


class Cache:
    """Lookups and stores for one run."""

    def __init__(self, directory: str, settings: Settings):
        self.directory = directory
        self.entries = os.path.join(directory, ENTRIES_DIR_NAME)
        self._salt = "\0".join((str(FORMAT_VERSION), __version__, _code_digest(), settings.fingerprint()))
        self._settings = settings
        self._salts: dict[tuple, bytes] = {}
        self._loaded: dict[str, list] = {}   # key -> variants read (or written) during this run
        self.project_digest: str | None = None  # of the project.json this run wrote
        self.project_stat: list | None = None    # its (size, mtime_ns, inode), to skip re-hashing it

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
    def key(self, data: bytes, relpath: str, module: str = "", roots=frozenset()) -> str:
        """The entry name for this content checked at ``relpath`` (which decides the rules
        enabled through per-file-ignores) as module ``module`` of a project with these
        top-level packages."""
        enabled = self._settings.enabled_codes(relpath)
        salt_key = (enabled, module, roots)
        salt = self._salts.get(salt_key)
        if salt is None:
            salt = self._salts[salt_key] = (
                f"{self._salt}\0{','.join(sorted(enabled))}\0{module}\0{','.join(sorted(roots))}\0".encode())
        digest = hashlib.blake2b(salt, digest_size=20)
        if is_notebook(relpath):  # the same bytes read as a notebook or as Python give different results
            digest.update(b"ipynb\0")
        digest.update(data)
        return digest.hexdigest()

    def _entry_path(self, key: str) -> str:
        return os.path.join(self.entries, key[:2], key[2:])

    # ---------------------------------------------------------------- load / store
    def _variants(self, key: str) -> list:
        variants = self._loaded.get(key)
        if variants is None:
            try:
                with open(self._entry_path(key), "rb") as handle:
                    variants = json.loads(handle.read())
                if not isinstance(variants, list):
                    variants = []
            except (OSError, ValueError):
                variants = []
            self._loaded[key] = variants
        return variants

    def lookup(self, key: str, table):
        """The stored outcome of this content whose recorded questions all get the same
        answers from ``table``, or None."""
        from dynlint.analysis.facts import tuples

        for variant in self._variants(key):
            try:
                consumed = [(tuples(question), tuples(answer)) for question, answer in variant["c"]]
                if all(table.answer(question) == answer for question, answer in consumed):
                    return _outcome_from_json(variant, dict(consumed))
            except (KeyError, TypeError, ValueError, AttributeError, IndexError):
                continue  # torn or foreign: walk the file again
        return None

    def store(self, key: str, outcome) -> None:
        variant = _outcome_to_json(outcome)
        variants = [v for v in self._variants(key) if v.get("c") != variant["c"]]
        variants.append(variant)
        variants = variants[-MAX_VARIANTS:]
        self._loaded[key] = variants
        payload = json.dumps(variants, ensure_ascii=False, separators=(",", ":")).encode("utf-8", "surrogatepass")
        target = self._entry_path(key)
        try:
            try:
                replace_file(target, payload)
            except FileNotFoundError:
                os.makedirs(os.path.dirname(target), exist_ok=True)
                replace_file(target, payload)
        except OSError:
            pass  # a cache that cannot be written only costs time

    # ---------------------------------------------------------------- project facts
    def save_project(self, table) -> str | None:
        """The facts of this run's files, for the flake8 plugin (``load_project``); the digest of
        what was written (None when nothing was)."""
        payload = {"salt": self._salt, "files": [facts.to_json() for facts in table.files],
                   "modules": table.module_of}
        try:
            data = json.dumps(payload, separators=(",", ":")).encode("utf-8", "surrogatepass")
            replace_file(os.path.join(self.directory, PROJECT_FILE_NAME), data)
        except (OSError, TypeError, ValueError):
            return None
        self.project_digest = _digest(data)
        self.project_stat = _stat_signature(os.path.join(self.directory, PROJECT_FILE_NAME))
        return self.project_digest

    def load_project(self):
        """The project table the last ``dynlint check`` of this project saved, or None."""
        from dynlint.analysis.facts import FileFacts, ProjectFacts

        try:
            with open(os.path.join(self.directory, PROJECT_FILE_NAME), "rb") as handle:
                payload = json.loads(handle.read())
            if payload.get("salt") != self._salt:
                return None  # another dynlint or other settings: its facts may mean something else
            table = ProjectFacts([FileFacts.from_json(item) for item in payload["files"]])
            table.module_of.update(payload["modules"])
            return table
        except (OSError, ValueError, KeyError, TypeError, AttributeError):
            return None


    # ---------------------------------------------------------------- whole runs
    def run_key(self, units, include_host: bool) -> str:
        """The snapshot name of a run over ``units`` (everything but the files' contents)."""
        digest = hashlib.blake2b(digest_size=20)
        digest.update(f"{self._salt}\0{include_host}\0{os.getcwd()}\0{sys.version_info[:2]}\0".encode())
        for unit in units:
            digest.update(f"{unit.path}\0{unit.relpath}\0{unit.module}\0{unit.is_package}\n"
                          .encode("utf-8", "surrogatepass"))
        return digest.hexdigest()

    def _run_path(self, key: str) -> str:
        return os.path.join(self.directory, RUNS_DIR_NAME, key)

    def load_run(self, key: str, units, roots) -> list | None:
        """The results of the run snapshot ``key`` when every file is unchanged, else None."""
        try:
            with open(self._run_path(key), "rb") as handle:
                snapshot = json.loads(handle.read())
            files, started = snapshot["files"], snapshot["started"]
            if len(files) != len(units) or not self._project_unchanged(snapshot["project"],
                                                                         snapshot.get("project_stat")):
                return None
            trusted_before = started - int(RACY_S * 1e9)
            for unit, (size, mtime_ns, ctime_ns, key_of_content) in zip(units, files):
                stat = os.stat(unit.path)
                if stat.st_size != size:
                    return None
                if stat.st_mtime_ns == mtime_ns and stat.st_ctime_ns == ctime_ns and ctime_ns < trusted_before:
                    continue
                with open(unit.path, "rb") as handle:
                    data = handle.read()
                if self.key(data, unit.relpath, unit.module, roots) != key_of_content:
                    return None
            return [_result_from_json(item) for item in snapshot["results"]]
        except (OSError, ValueError, KeyError, TypeError, AttributeError, IndexError):
            return None

    def _project_unchanged(self, digest: str | None, stat: list | None = None) -> bool:
        """project.json is still the one the snapshot's run wrote (another run may have replaced it):
        the same (size, mtime_ns, inode) as when it was written (every write replaces the file: a new
        inode), else the same content."""
        if digest is None:
            return True
        path = os.path.join(self.directory, PROJECT_FILE_NAME)
        if stat is not None and _stat_signature(path) == list(stat):
            return True
        try:
            with open(path, "rb") as handle:
                return _digest(handle.read()) == digest
        except OSError:
            return False

    def store_run(self, key: str, started: int, files: list, results) -> None:
        """Snapshot a run: ``files`` holds (size, mtime_ns, ctime_ns, content key) per unit, as read."""
        snapshot = {"started": started, "files": files, "project": self.project_digest,
                    "project_stat": self.project_stat,
                    "results": [_result_to_json(result) for result in results]}
        target = self._run_path(key)
        try:
            payload = json.dumps(snapshot, ensure_ascii=False, separators=(",", ":")).encode("utf-8",
                                                                                         "surrogatepass")
            try:
                replace_file(target, payload)
            except FileNotFoundError:
                os.makedirs(os.path.dirname(target), exist_ok=True)
                replace_file(target, payload)
            self._prune_runs()
        except (OSError, TypeError, ValueError):
            pass

    def _prune_runs(self) -> None:
        directory = os.path.join(self.directory, RUNS_DIR_NAME)
        entries = []
        for name in os.listdir(directory):
            try:
                entries.append((os.stat(os.path.join(directory, name)).st_mtime_ns, name))
            except OSError:
                continue
        for _, name in sorted(entries)[:-MAX_RUNS]:
            try:
                os.unlink(os.path.join(directory, name))
            except OSError:
                pass


def _stat_signature(path: str) -> list | None:
    try:
        stat = os.stat(path)
    except OSError:
        return None
    return [stat.st_size, stat.st_mtime_ns, stat.st_ino]


def _digest(data: bytes) -> str:
    return hashlib.blake2b(data, digest_size=20).hexdigest()


# -------------------------------------------------------------------- JSON form
def _result_to_json(result) -> list:
    return [result.path, result.relpath,
            [[*_finding_to_json(f), f.filename, f.region] for f in result.findings],
            {str(number): text for number, text in result.lines.items()},
            None if result.cells is None else [list(pair) for pair in result.cells]]


def _result_from_json(item: list):
    from dynlint.diagnostics import FileResult

    path, relpath, findings, lines, cells = item
    kept = []
    for entry in findings:
        finding = _finding_from_json(entry[:7])
        object.__setattr__(finding, "filename", entry[7])
        object.__setattr__(finding, "region", entry[8])
        kept.append(finding)
    return FileResult(path, relpath, kept, {int(number): text for number, text in lines.items()},
                      None if cells is None else tuple((int(start), int(cell)) for start, cell in cells))


def _outcome_to_json(outcome) -> dict:
    return {
        "c": [[list(question) if isinstance(question, tuple) else question, answer]
              for question, answer in outcome.consumed.items()],
        "f": [_finding_to_json(f) for f in outcome.findings],
        "p": [list(place) for place in outcome.places],
        "x": outcome.facts.to_json() if outcome.facts is not None else None,
        "t": outcome.imports_torch,
        "l": {str(number): text for number, text in outcome.lines.items()},
        "n": None if outcome.cells is None else [list(pair) for pair in outcome.cells],
    }


def _outcome_from_json(variant: dict, consumed: dict):
    from dynlint.analysis.facts import FileFacts
    from dynlint.api import Outcome

    facts = FileFacts.from_json(variant["x"]) if variant["x"] is not None else None
    cells = None if variant.get("n") is None else tuple((int(start), int(cell)) for start, cell in variant["n"])
    return Outcome([_finding_from_json(item) for item in variant["f"]], [tuple(p) for p in variant["p"]], facts,
                   consumed, bool(variant["t"]), {int(number): text for number, text in variant["l"].items()}, cells)


def _finding_to_json(finding: Finding) -> list:
    fix = finding.fix
    fix_json = None if fix is None else [
        fix.applicability.value, fix.message,
        [[e.line, e.col, e.end_line, e.end_col, e.content] for e in fix.edits],
    ]
    return [finding.code, finding.message, finding.line, finding.col, finding.end_line, finding.end_col, fix_json]


def _finding_from_json(item: list) -> Finding:
    code, message, line, col, end_line, end_col, fix_json = item
    fix = None
    if fix_json is not None:
        applicability, fix_message, edits = fix_json
        fix = Fix(Applicability(applicability), fix_message, tuple(Edit(*edit) for edit in edits))
    return Finding(code, message, line, col, end_line, end_col, fix)
