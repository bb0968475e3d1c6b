"""Running the checker over a project: the project pass, rounds, cache, process pool, progress.

Every run indexes the files it checks (module names from paths and packages,
``dynlint.analysis.modules``) and walks each one with the project table
(``dynlint.analysis.facts``):

1. round 1 walks every file with an empty table; each walk produces the file's
   facts (its functions, classes, calls with argument kinds, returns) and
   records every question it asked of the table with the answer it got;
2. the table is solved from all files' facts; a file is walked again when one
   of its recorded questions now gets another answer (its callers pass tensors
   now, a callee's return kind became known...); repeat until no answer changes
   (``MAX_ROUNDS`` at most);
3. the regions come from the final table's call graph, and each file's findings
   are labelled and filtered (``dynlint.api.finish``).

The result depends only on the files' contents: the table is always solved
from round 1 on, so a warm cache replays the same rounds.  The cache keeps,
per file content, the outcome of each distinct set of answers it was walked
with (``dynlint.cache``): a lookup hits only when every recorded question gets
the same answer from the current table, so editing a helper re-checks its
callers and nothing stale is ever served.  Before all that, a run over the same
files as an earlier one, none of them changed since, is served that run's final
results whole (``Cache.load_run``).

Walking is done in this process for few files (or ``jobs == 1``), keeping the
parsed trees between rounds; otherwise in a process pool per round (forked
with the round's table), in batches, largest files first.  Results come back
in the order the files were given.
"""

from __future__ import annotations

import gc
import os
import sys
import time
from typing import Iterator, Sequence, TextIO

from dynlint.api import Outcome, Unit, analyze_source, finish, parse_error_finding, parse_for_reuse, rewalk
from dynlint.analysis.facts import EMPTY, FileFacts, ProjectFacts, still_valid
from dynlint.analysis.modules import imported_modules, is_package_init, levels, module_name, unique_aliases
from dynlint.cache import Cache
from dynlint.config import Settings
from dynlint.diagnostics import FileResult

# Below this much source to check, starting worker processes costs more than it saves
# (measured: forking and feeding two workers ~ 40 ms, about what parsing 300 KB takes).
IN_PROCESS_MAX_BYTES = 400_000
# Parsed trees kept between rounds when walking in this process, up to this much source.
KEEP_TREES_MAX_BYTES = 48_000_000
# Batches per worker: enough to balance the tail, few enough to amortise the per-batch round trip.
BATCHES_PER_WORKER = 8
MAX_BATCH_FILES = 64
# Rounds of the project pass: chains of helpers passing a tensor along need one round per link
# (rounds stop as soon as no answer changes; real projects settle in 2-4).
MAX_ROUNDS = 12


def default_jobs() -> int:
    """The CPUs this process may run on (a container's affinity mask, not the host's count)."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):
        return max(1, os.cpu_count() or 1)


# ------------------------------------------------------------------ the project index
def make_units(files: Sequence[tuple[str, str]]) -> list[Unit]:
    """(path, relpath) pairs → units with module names; files whose module names collide
    (two ``train.py`` scripts) are told apart by their relative paths."""
    units = [Unit(path, relpath, module_name(path) if path != "-" else _stdin_module(relpath),
                  is_package_init(path)) for path, relpath in files]
    seen: dict[str, int] = {}
    for unit in units:
        seen[unit.module] = seen.get(unit.module, 0) + 1
    for unit in units:
        if seen[unit.module] > 1:
            stem = unit.relpath[:-3] if unit.relpath.endswith(".py") else unit.relpath
            unit.module = stem.strip("./").replace("/", ".").replace("-", "_") or unit.module
    return units


def _stdin_module(relpath: str) -> str:
    return module_name(relpath) if relpath not in ("", "-") else "<stdin>"


def project_roots(units: Sequence[Unit]) -> frozenset[str]:
    """The first components of the names the run's modules can be imported by (their module
    names and the path aliases of ``modules.unique_aliases``)."""
    names = {unit.module for unit in units if unit.module}
    names.update(unique_aliases({unit.relpath: unit.module for unit in units if unit.module}))
    return frozenset(name.split(".", 1)[0] for name in names)


# ------------------------------------------------------------------ one walk
def internal_error_outcome(exc: BaseException) -> Outcome:
    """A checker bug on one file is that file's DYN000, not the end of the run."""
    return Outcome([parse_error_finding(f"internal error in dynlint ({type(exc).__name__}: {exc}); please report it")])


def analyze_one(unit: Unit, settings: Settings, table: ProjectFacts, roots: frozenset[str],
                data: bytes | str | None = None, parsed=None, enabled=None, noqa: bool = True) -> Outcome:
    """Walk one file (``data`` when already read, ``parsed`` when already parsed)."""
    # CPython's cyclic GC rescans the AST again and again while it grows (a 5 MB file parses
    # in 4 s instead of 10 s without it); trees hold no cycles, so collecting can wait.
    gc_was_enabled = gc.isenabled()
    gc.disable()
    try:
        if data is None and parsed is None:
            try:
                with open(unit.path, "rb") as handle:
                    data = handle.read()
            except OSError as exc:
                reason = exc.strerror or type(exc).__name__
                return Outcome([parse_error_finding(f"cannot read: {reason}")])
        return analyze_source(data, unit.path, settings, unit.relpath, module=unit.module,
                              is_package=unit.is_package, table=table, project_roots=roots, parsed=parsed,
                              enabled=enabled, noqa=noqa)
    except Exception as exc:  # noqa: BLE001 - any checker bug becomes this file's DYN000
        return internal_error_outcome(exc)
    finally:
        if gc_was_enabled:
            gc.enable()


# ------------------------------------------------------------------ pool workers
_worker_state: tuple | None = None


def _init_worker(settings: Settings, table: ProjectFacts, roots: frozenset[str]) -> None:
    global _worker_state
    _worker_state = (settings, table, roots)
    import dynlint.analysis.walker  # noqa: F401 - imported once per worker, before the first file


def _analyze_batch(batch: list[tuple[int, Unit]]) -> list[tuple[int, Outcome]]:
    settings, table, roots = _worker_state
    return [(index, analyze_one(unit, settings, table, roots)) for index, unit in batch]


def make_batches(items: list[tuple[int, str, str, int]], workers: int) -> list[list[tuple[int, str, str]]]:
    """(index, path, relpath, size) → batches, largest files first, each about an equal
    share of bytes (a big file is a batch of its own)."""
    items = sorted(items, key=lambda item: (-item[3], item[0]))
    total = sum(item[3] for item in items) or 1
    target = max(1, total // (workers * BATCHES_PER_WORKER))
    batches: list[list[tuple[int, str, str]]] = []
    current: list[tuple[int, str, str]] = []
    current_bytes = 0
    for index, path, relpath, size in items:
        current.append((index, path, relpath))
        current_bytes += size
        if current_bytes >= target or len(current) >= MAX_BATCH_FILES:
            batches.append(current)
            current, current_bytes = [], 0
    if current:
        batches.append(current)
    return batches


def _pooled(indices: list[int], units: list[Unit], sizes: dict[int, int], settings: Settings,
            table: ProjectFacts, roots: frozenset[str], workers: int) -> Iterator[tuple[int, Outcome]]:
    import multiprocessing
    from concurrent.futures import FIRST_COMPLETED, ProcessPoolExecutor, wait
    from concurrent.futures.process import BrokenProcessPool

    import dynlint.analysis.walker  # noqa: F401 - forked workers inherit it instead of importing it each

    items = [(i, units[i].path, units[i].relpath, sizes.get(i, 0)) for i in indices]
    batches = [[(index, units[index]) for index, _, _ in batch] for batch in make_batches(items, workers)]
    # fork: workers start in milliseconds with dynlint and the round's table already in memory.
    context = multiprocessing.get_context("fork") if "fork" in multiprocessing.get_all_start_methods() else None
    with ProcessPoolExecutor(max_workers=workers, mp_context=context, initializer=_init_worker,
                             initargs=(settings, table, roots)) as pool:
        pending = {pool.submit(_analyze_batch, batch): batch for batch in batches}
        try:
            while pending:
                done, _ = wait(pending, return_when=FIRST_COMPLETED)
                for future in done:
                    batch = pending.pop(future)
                    try:
                        yield from future.result()
                    except BrokenProcessPool:
                        # A worker died (killed, out of memory): walk its files here instead.
                        for index, unit in batch:
                            yield index, analyze_one(unit, settings, table, roots)
        finally:
            for future in pending:
                future.cancel()


# ------------------------------------------------------------------ the run
def check_units(units: list[Unit], settings: Settings, jobs: int = 1, cache: Cache | None = None, *,
                sources: dict[int, bytes | str] | None = None, parsed: dict[int, tuple] | None = None,
                base_table: ProjectFacts | None = None, enabled=None, noqa: bool = True,
                progress: "Progress | None" = None, record: dict | None = None) -> list[FileResult]:
    """The project pass over ``units`` (see the module docstring): one ``FileResult`` per unit,
    in order.  ``sources``/``parsed`` give some files' bytes or trees instead of reading them;
    ``base_table`` the facts of a wider project whose other files are not walked now.
    ``record`` (with a cache) receives, per index, (size, mtime_ns, ctime_ns, content key) of each file as read."""
    # The parsed trees kept between rounds are many small acyclic objects: CPython's cyclic GC
    # would rescan them again and again while more are parsed (measured: parsing timm with its
    # trees alive took 4x the parse floor).  Nothing here makes cycles; collect once at the end.
    gc_was_enabled = gc.isenabled()
    gc.disable()
    try:
        return _check_units(units, settings, jobs, cache, sources, parsed, base_table, enabled, noqa, progress,
                            record)
    finally:
        if gc_was_enabled:
            gc.enable()


def _check_units(units, settings, jobs, cache, sources, parsed, base_table, enabled, noqa, progress, record):
    jobs = jobs or default_jobs()
    sources = dict(sources or {})
    parsed = dict(parsed or {})
    roots = project_roots(units)
    if base_table is not None:
        roots = roots | frozenset(m.split(".", 1)[0] for m in base_table.modules()) \
            | frozenset(alias.split(".", 1)[0] for alias in unique_aliases(base_table.module_of))
    count = len(units)
    data: dict[int, bytes | str] = {}
    sizes: dict[int, int] = {}
    keys: dict[int, str] = {}
    outcomes: list[Outcome | None] = [None] * count
    for index, unit in enumerate(units):
        if index in parsed:
            continue
        content = sources.get(index)
        stat = None
        if content is None:  # read here: the import levels need every file's text
            content, stat = _read_with_stat(unit.path) if record is not None else (_read(unit.path), None)
        if content is not None:
            data[index] = content
            sizes[index] = len(content)
            if cache is not None:
                raw = content.encode("utf-8", "surrogatepass") if isinstance(content, str) else content
                keys[index] = cache.key(raw, unit.relpath, unit.module, roots)
                if stat is not None:
                    record[index] = (stat.st_size, stat.st_mtime_ns, stat.st_ctime_ns, keys[index])
        else:
            sizes[index] = _size(unit.path)
    in_process = jobs == 1 or count < 2 or sum(sizes.values()) < IN_PROCESS_MAX_BYTES
    keep_trees = sum(sizes.values()) <= KEEP_TREES_MAX_BYTES
    trees: dict[int, tuple | None] = dict(parsed)

    def walk(indices: list[int], table: ProjectFacts, first: bool) -> None:
        misses = []
        for index in indices:
            hit = cache.lookup(keys[index], table) if cache is not None and index in keys else None
            if hit is not None:
                outcomes[index] = hit
                if first and progress is not None:
                    progress.advance()
            else:
                misses.append(index)
        if not misses:
            return
        # files walked here before (their walker kept) walk only their changed functions, here;
        # a pool pays off only for a batch of fresh walks big enough to cover starting it
        # (later rounds walk here too: few functions change, and a worker would parse the file again,
        # solve the table again and send everything back)
        fresh = [i for i in misses if outcomes[i] is None or outcomes[i].walker is None]
        if in_process or not first or len(fresh) < 2 or sum(sizes.get(i, 0) for i in fresh) < IN_PROCESS_MAX_BYTES:
            for index in misses:
                outcomes[index] = _walk_here(index, units[index], settings, table, roots, data, trees,
                                             keep_trees, enabled, noqa, outcomes[index])
                if first and progress is not None:
                    progress.advance()
        else:
            for index in misses:
                if index not in fresh:
                    outcomes[index] = _walk_here(index, units[index], settings, table, roots, data, trees,
                                                 keep_trees, enabled, noqa, outcomes[index])
            for index, outcome in _pooled(fresh, units, sizes, settings, table, roots, min(jobs, len(fresh))):
                outcomes[index] = outcome
                if first and progress is not None:
                    progress.advance()
        if cache is not None:
            for index in misses:
                if index in keys:
                    cache.store(keys[index], outcomes[index])

    # First pass: files after the files they import, each level with the facts of the levels below
    # (what callees return and which classes are modules is then mostly known at the first walk).
    table = _with_base(EMPTY, base_table, units) if base_table is not None else EMPTY
    for level in _import_levels(units, data, trees):
        walk(level, table, first=True)
        table = _solve(outcomes, units, base_table, callers=False)
    table = _solve(outcomes, units, base_table)
    # Then again, while what a walk asked of the table gets other answers (mostly: what callers pass).
    for _ in range(MAX_ROUNDS):
        pending = [i for i, outcome in enumerate(outcomes)
                   if outcome is not None and outcome.consumed and not still_valid(outcome.consumed.items(), table)]
        if not pending:
            break
        walk(pending, table, first=False)
        table = _solve(outcomes, units, base_table)
    if cache is not None:
        cache.save_project(table)

    from dynlint.analysis.regions import function_regions

    regions = function_regions(table)
    return [finish(outcome, unit.path, unit.relpath, settings, regions) for unit, outcome in zip(units, outcomes)]


def _import_levels(units: list[Unit], data: dict, trees: dict) -> list[list[int]]:
    """The files in levels of the project's import graph (see ``modules.levels``)."""
    if len(units) < 2:
        return [list(range(len(units)))]
    known = {unit.module: index for index, unit in enumerate(units)}
    for alias, module in unique_aliases({unit.relpath: unit.module for unit in units}).items():
        known.setdefault(alias, known[module])
    names = set(known)
    dependencies: list[set[int]] = []
    for index, unit in enumerate(units):
        content = data.get(index)
        if isinstance(content, str):
            content = content.encode("utf-8", "surrogatepass")
        if content is None:
            parsed = trees.get(index)
            content = "\n".join(parsed[1]).encode("utf-8", "surrogatepass") if parsed else b""
        imported = imported_modules(content, unit.module, unit.is_package, names)
        dependencies.append({known[name] for name in imported})
    return levels(dependencies)


def _walk_here(index, unit, settings, table, roots, data, trees, keep_trees, enabled, noqa,
               previous: Outcome | None = None) -> Outcome:
    reuse = trees.get(index)
    if previous is not None and previous.walker is not None and reuse is not None:
        # walked before in this process: walk again only the functions whose questions changed
        changed = [key for key, answers in previous.units.items() if not still_valid(answers.items(), table)]
        if None not in changed:
            try:
                return rewalk(previous, table, changed, reuse[1], settings, unit.relpath, enabled, noqa)
            except Exception as exc:  # noqa: BLE001 - any checker bug becomes this file's DYN000
                return internal_error_outcome(exc)
    if reuse is None and keep_trees and index in data:
        reuse = trees[index] = parse_for_reuse(data[index], unit.path)
    if reuse is not None:
        return analyze_one(unit, settings, table, roots, parsed=reuse, enabled=enabled, noqa=noqa)
    return analyze_one(unit, settings, table, roots, data=data.get(index), enabled=enabled, noqa=noqa)


def _solve(outcomes: list[Outcome | None], units: list[Unit], base_table: ProjectFacts | None, *,
           callers: bool = True) -> ProjectFacts:
    files = [outcome.facts for outcome in outcomes if outcome is not None and outcome.facts is not None]
    table = ProjectFacts(files, callers=callers)
    table.module_of.update({unit.relpath: unit.module for unit in units})
    if base_table is not None:
        table = _with_base(table, base_table, units)
    return table


def _with_base(table: ProjectFacts, base: ProjectFacts, units: list[Unit]) -> ProjectFacts:
    """The run's facts, with the base project's facts for every module not in the run."""
    walked = {unit.module for unit in units} | {facts.module for facts in table.files}
    merged = ProjectFacts(list(table.files) + [facts for facts in base.files if facts.module not in walked],
                          callers=table.callers)
    merged.module_of.update(base.module_of)
    merged.module_of.update(table.module_of)
    return merged


def iter_results(files: Sequence[tuple[str, str]], settings: Settings, jobs: int = 0,
                 cache: Cache | None = None, progress: "Progress | None" = None) -> Iterator[FileResult]:
    """Results for ``files`` ((path, relpath) pairs) in their order; ``jobs`` 0 = one per CPU."""
    units = make_units(files)
    if cache is None:
        yield from check_units(units, settings, jobs, cache, progress=progress)
        return
    # a run over the same files, unchanged since, gives the results it gave (see dynlint.cache)
    key = cache.run_key(units, settings.include_host)
    results = cache.load_run(key, units, project_roots(units))
    if results is not None:
        yield from results
        return
    started = time.time_ns()
    record: dict[int, tuple] = {}
    results = check_units(units, settings, jobs, cache, progress=progress, record=record)
    if len(record) == len(units):
        cache.store_run(key, started, [record[index] for index in range(len(units))], results)
    yield from results


def _read(path: str) -> bytes | None:
    try:
        with open(path, "rb") as handle:
            return handle.read()
    except OSError:
        return None


def _read_with_stat(path: str) -> tuple[bytes | None, os.stat_result | None]:
    """The file's bytes and its stat taken before they were read (what a run snapshot records)."""
    try:
        with open(path, "rb") as handle:
            stat = os.fstat(handle.fileno())
            return handle.read(), stat
    except OSError:
        return None, None


def _size(path: str) -> int:
    try:
        return os.stat(path).st_size
    except OSError:
        return 0


# ------------------------------------------------------------------ progress
class Progress:
    """``[done/total files]`` on one self-rewriting stderr line, for long runs on a terminal.

    Off when stderr is not a TTY (piped, redirected) or in CI (the ``CI``
    variable set, as every CI service does); it appears only after
    ``DELAY_S`` so quick runs print nothing extra.
    """

    DELAY_S = 0.5
    INTERVAL_S = 0.1

    def __init__(self, total: int, stream: TextIO, clock=time.monotonic):
        self.total = total
        self.stream = stream
        self.clock = clock
        self.started = clock()
        self.last_drawn = 0.0
        self.visible = False
        self.done = 0

    @classmethod
    def for_run(cls, total: int, stream: TextIO | None = None, environ=None) -> "Progress | None":
        stream = stream if stream is not None else sys.stderr
        environ = os.environ if environ is None else environ
        try:
            tty = stream.isatty()
        except (AttributeError, ValueError):
            tty = False
        if not tty or environ.get("CI", "").lower() not in ("", "0", "false") or total < 2:
            return None
        return cls(total, stream)

    def advance(self) -> None:
        self.done += 1
        now = self.clock()
        if now - self.started < self.DELAY_S or (now - self.last_drawn < self.INTERVAL_S and self.done < self.total):
            return
        self.last_drawn = now
        self.visible = True
        width = len(str(self.total))
        self.stream.write(f"\r\x1b[2Kdynlint: checked {self.done:>{width}}/{self.total} files")
        self.stream.flush()

    def clear(self) -> None:
        """Erase the line (before other output, and at the end)."""
        if self.visible:
            self.stream.write("\r\x1b[2K")
            self.stream.flush()
            self.visible = False
