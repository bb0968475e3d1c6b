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
parsed trees between rounds; otherwise this process and ``jobs - 1`` forked
workers each own a share of the files (about equal bytes, largest first) for
the whole run, and keep their files' trees and walkers between levels and
rounds as one process does (``_Walkers``).  Results come back in the order the
files were given.
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
# Parsed trees (and walkers) kept between rounds, up to this much source in one process: they take
# ~35x the source in memory (timm, 5.4 MB: 283 MB peak), so a quarter of the machine's memory, at
# least 48 MB of source.  Beyond it, a file walked again in a later round is parsed and walked whole
# again (on timm+torchvision+transformers with -j 1: twice the CPU time).
def _keep_trees_max_bytes() -> int:
    try:
        memory = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (AttributeError, ValueError, OSError):
        memory = 0
    return max(48_000_000, memory // 4 // 35)


KEEP_TREES_MAX_BYTES = _keep_trees_max_bytes()
# Set to a list by the ``dynlint`` command, which ends with os._exit: each run's trees and walkers
# are kept there instead of being freed one by one at the end of the run (~5% of a check's time).
KEEP_UNTIL_EXIT: list | None = None
# This process walks its share of the files and also solves the project table between steps:
# it takes about 1/1.15 of a worker's share (measured on timm: ~0.5 s of serial work in ~4.5 s).
MAIN_PROCESS_WEIGHT = 1.15
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


# ------------------------------------------------------------------ worker processes
def assign_workers(sizes: Sequence[int], workers: int, groups: Sequence[Sequence[int]] | None = None) -> list[int]:
    """Which worker (0 .. workers-1) walks each file; worker 0 is this process.  Each group (an
    import level: walked together, then the next) is shared on its own, largest files first, each
    to the worker with the least work in that group, this process counting its bytes
    ``MAIN_PROCESS_WEIGHT`` times (it also solves the table between steps).  Deterministic."""
    owner = [0] * len(sizes)
    total = [0] * workers
    weight = [MAIN_PROCESS_WEIGHT] + [1.0] * (workers - 1)
    for group in (groups if groups is not None else [range(len(sizes))]):
        load = [0.0] * workers
        for index in sorted(group, key=lambda i: (-sizes[i], i)):
            worker = min(range(workers), key=lambda w: ((load[w] + sizes[index]) * weight[w], total[w], w))
            owner[index] = worker
            load[worker] += sizes[index]
            total[worker] += sizes[index]
    return owner


class _Walkers:
    """Worker processes that each own a fixed share of the files for the whole run.

    Forked once, after every file has been read, with the run's state in memory.  A worker
    keeps the trees and walkers of its files between rounds, so a later round walks again only
    the functions whose questions got new answers (as a run in one process does), and its files
    are never parsed twice.  Each request carries the facts of other files it has not seen yet
    (few after the first pass) and which table to solve from them; the worker solves the same
    table this process does (``_table_from``) and sends back the outcomes.  This process is
    worker 0: it walks its own share meanwhile.  A worker that dies has its files walked here
    from then on."""

    def __init__(self, count: int, state: tuple):
        import multiprocessing

        import dynlint.analysis.walker  # noqa: F401 - forked workers inherit it instead of importing it each

        context = multiprocessing.get_context("fork")
        self.connections: dict[int, object] = {}
        self.processes: dict[int, object] = {}
        self.known: dict[int, dict[int, object]] = {}  # worker -> index -> the facts object it has
        for worker in range(1, count):
            mine, theirs = context.Pipe()
            process = context.Process(target=_worker_loop, args=(theirs, state), daemon=True)
            process.start()
            theirs.close()
            self.connections[worker] = mine
            self.processes[worker] = process
            self.known[worker] = {}

    def alive(self, worker: int) -> bool:
        return worker in self.connections

    def send(self, worker: int, spec: tuple, outcomes: list, items: list[tuple[int, bool]]) -> bool:
        known = self.known[worker]
        updates = {}
        for index, outcome in enumerate(outcomes):
            if outcome is not None and known.get(index, _MISSING) is not outcome.facts:
                updates[index] = known[index] = outcome.facts
        try:
            self.connections[worker].send((spec, updates, items))
            return True
        except (OSError, EOFError, ValueError):
            self.drop(worker)
            return False

    def receive(self, workers) -> Iterator[tuple[int, list | None]]:
        """(worker, its outcomes or None when it died) as they come."""
        from multiprocessing.connection import wait

        waiting = {self.connections[w]: w for w in workers if w in self.connections}
        while waiting:
            for connection in wait(list(waiting)):
                worker = waiting.pop(connection)
                try:
                    results = connection.recv()
                except (OSError, EOFError, ValueError):
                    self.drop(worker)
                    results = None
                else:
                    known = self.known[worker]
                    for index, outcome in results:
                        known[index] = outcome.facts  # the worker holds the same facts
                yield worker, results

    def drop(self, worker: int) -> None:
        connection = self.connections.pop(worker, None)
        process = self.processes.pop(worker, None)
        if connection is not None:
            connection.close()
        if process is not None:
            process.kill()
            process.join()

    def close(self) -> None:
        for worker, connection in list(self.connections.items()):
            try:
                connection.send(None)
            except (OSError, ValueError):
                pass
        for worker, process in list(self.processes.items()):
            process.join(timeout=5)
            if process.is_alive():
                process.kill()
                process.join()
            self.connections.pop(worker).close()
        self.processes.clear()


_MISSING = object()


def _worker_loop(connection, state: tuple) -> None:
    """A worker: walk what is asked with the table asked for, until told to stop."""
    units, settings, roots, data, keep_trees, enabled, noqa, base_table = state
    facts: dict[int, FileFacts | None] = {}
    outcomes: dict[int, Outcome] = {}
    trees: dict[int, tuple | None] = {}
    while True:
        try:
            message = connection.recv()
        except (EOFError, OSError):
            return
        if message is None:
            # done: exit without freeing this worker's trees one by one (the main process waits for it)
            connection.close()
            os._exit(0)
        spec, updates, items = message
        facts.update(updates)
        table = _table_from(spec, facts, units, base_table)
        results = []
        for index, fresh in items:
            previous = None if fresh else outcomes.get(index)
            outcome = _walk_here(index, units[index], settings, table, roots, data, trees, keep_trees, enabled,
                                 noqa, previous)
            outcomes[index] = outcome
            facts[index] = outcome.facts
            results.append((index, outcome))
        connection.send(results)


def _table_from(spec: tuple, facts: dict, units: list[Unit], base_table: ProjectFacts | None) -> ProjectFacts:
    """The table ``spec`` names, from the facts of the files walked so far (by index): what
    ``_check_units`` solves, in a worker."""
    if spec[0] == "empty":
        return _with_base(EMPTY, base_table, units) if base_table is not None else EMPTY
    return _solve_facts([facts[index] for index in sorted(facts) if facts[index] is not None], units, base_table,
                        callers=spec[1])


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
    walkers = owner = None
    walked_by: dict[int, int] = {}  # index -> the worker whose walker made its outcome
    import_levels = _import_levels(units, data, trees)
    if not in_process:
        workers = min(jobs, count)
        owner = assign_workers([sizes.get(i, 0) for i in range(count)], workers, import_levels)
        loads = [0] * workers
        for index, worker in enumerate(owner):
            loads[worker] += sizes.get(index, 0)
        keep_trees = max(loads) <= KEEP_TREES_MAX_BYTES  # each process keeps its own files' trees
        # fork: workers start in milliseconds with dynlint, the files and the run's state in memory
        walkers = _Walkers(workers, (units, settings, roots, data, keep_trees, enabled, noqa, base_table))

    def here(index: int, table: ProjectFacts) -> None:
        outcomes[index] = _walk_here(index, units[index], settings, table, roots, data, trees, keep_trees,
                                     enabled, noqa, outcomes[index] if walked_by.get(index) == 0 else None)
        walked_by[index] = 0

    def walk(indices: list[int], table: ProjectFacts, spec: tuple, first: bool) -> None:
        misses = []
        for index in indices:
            hit = cache.lookup(keys[index], table) if cache is not None and index in keys else None
            if hit is not None:
                outcomes[index] = hit
                walked_by.pop(index, None)
                if first and progress is not None:
                    progress.advance()
            else:
                misses.append(index)
        if not misses:
            return
        mine = misses
        if walkers is not None:
            shares: dict[int, list[tuple[int, bool]]] = {}
            mine = []
            for index in misses:
                worker = owner[index]
                if worker == 0 or not walkers.alive(worker):
                    mine.append(index)
                else:
                    shares.setdefault(worker, []).append((index, walked_by.get(index) != worker))
            for worker, items in list(shares.items()):
                if not walkers.send(worker, spec, outcomes, items):
                    mine.extend(index for index, _ in shares.pop(worker))
        for index in mine:
            here(index, table)
            if first and progress is not None:
                progress.advance()
        if walkers is not None:
            for worker, results in walkers.receive(list(shares)):
                if results is None:  # the worker died: its files are walked here from now on
                    for index, _ in shares[worker]:
                        here(index, table)
                        if first and progress is not None:
                            progress.advance()
                    continue
                for index, outcome in results:
                    outcomes[index] = outcome
                    walked_by[index] = worker
                    if first and progress is not None:
                        progress.advance()
        if cache is not None:
            for index in misses:
                if index in keys:
                    cache.store(keys[index], outcomes[index])

    try:
        # First pass: files after the files they import, each level with the facts of the levels below
        # (what callees return and which classes are modules is then mostly known at the first walk).
        spec = ("empty",)
        table = _table_from(spec, {}, units, base_table)
        for level in import_levels:
            walk(level, table, spec, first=True)
            spec = ("solved", False)
            table = _solve(outcomes, units, base_table, callers=False)
        spec = ("solved", True)
        table = _solve(outcomes, units, base_table)
        # Then again, while what a walk asked of the table gets other answers (mostly: what callers pass).
        for _ in range(MAX_ROUNDS):
            pending = [i for i, outcome in enumerate(outcomes) if outcome is not None and outcome.consumed
                       and not still_valid(outcome.consumed.items(), table)]
            if not pending:
                break
            walk(pending, table, spec, first=False)
            table = _solve(outcomes, units, base_table)
    finally:
        if walkers is not None:
            walkers.close()
    if cache is not None:
        cache.save_project(table)

    if KEEP_UNTIL_EXIT is not None:
        KEEP_UNTIL_EXIT.append((trees, outcomes))
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
    return _solve_facts(files, units, base_table, callers=callers)


def _solve_facts(files: list[FileFacts], units: list[Unit], base_table: ProjectFacts | None, *,
                 callers: bool = True) -> ProjectFacts:
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
