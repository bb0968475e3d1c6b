"""Running the checker over many files: cache, process pool, progress.

``iter_results`` yields one ``FileResult`` per file, always in the order the
files were given, whatever the number of processes:

* with a cache, the parent first looks every file up (read + hash: cheap
  next to parsing); only misses are checked;
* few misses (or ``jobs == 1``) are checked in this process, streaming: a pool
  costs more to start than it saves;
* otherwise misses go to a process pool in batches, largest files first, so
  one big file does not finish last on one core while the others idle; each
  worker gets the settings once (pool initializer), not per file.  Results are
  re-ordered with a buffer of finished results (small: findings only, never
  sources or trees), so the parent's memory does not grow with the corpus.
"""

from __future__ import annotations

import gc
import os
import sys
import time
from typing import Iterator, Sequence, TextIO

from dynlint.cache import Cache
from dynlint.config import Settings
from dynlint.diagnostics import FileResult

# Below this much source to check, starting worker processes costs more than it saves
# (measured: forking and feeding two workers ~ 40 ms, about what parsing 300 KB takes).
IN_PROCESS_MAX_BYTES = 400_000
# Batches per worker: enough to balance the tail, few enough to amortise the per-batch round trip.
BATCHES_PER_WORKER = 8
MAX_BATCH_FILES = 64


def default_jobs() -> int:
    """The CPUs this process may run on (a container's affinity mask, not the host's count)."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):
        return max(1, os.cpu_count() or 1)


def internal_error_result(path: str, relpath: str, exc: BaseException) -> FileResult:
    """A checker bug on one file is that file's DYN000, not the end of the run."""
    from dynlint.api import parse_error_finding

    finding = parse_error_finding(f"internal error in dynlint ({type(exc).__name__}: {exc}); please report it")
    object.__setattr__(finding, "filename", path)
    return FileResult(path, relpath, [finding])


def check_one(path: str, relpath: str, settings: Settings, cache: Cache | None,
              data: bytes | None = None) -> FileResult:
    """Check one file (``data`` when already read), storing the result in ``cache``."""
    from dynlint.api import check_bytes, check_path

    # CPython's cyclic GC rescans the AST again and again while it grows (a 5 MB file parses
    # in 4 s instead of 10 s without it); trees hold no cycles, so collecting can wait.
    gc_was_enabled = gc.isenabled()
    gc.disable()
    try:
        if data is None:
            try:
                with open(path, "rb") as handle:
                    data = handle.read()
            except OSError:
                return check_path(path, relpath, settings)  # DYN000 naming the reason
        result = check_bytes(data, path, relpath, settings)
    except Exception as exc:  # noqa: BLE001 - any checker bug becomes this file's DYN000
        return internal_error_result(path, relpath, exc)
    finally:
        if gc_was_enabled:
            gc.enable()
    if cache is not None:
        cache.store(cache.key(data, relpath), result)
    return result


# ------------------------------------------------------------------ pool workers
_worker_settings: Settings | None = None
_worker_cache: Cache | None = None


def _init_worker(settings: Settings, cache: Cache | None) -> None:
    global _worker_settings, _worker_cache
    _worker_settings, _worker_cache = settings, cache
    import dynlint.analysis.walker  # noqa: F401 - imported once per worker, before the first file


def _check_batch(batch: list[tuple[int, str, str]]) -> list[tuple[int, FileResult]]:
    return [(index, check_one(path, relpath, _worker_settings, _worker_cache)) for index, path, relpath in batch]


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


# ------------------------------------------------------------------ the run
def iter_results(files: Sequence[tuple[str, str]], settings: Settings, jobs: int = 0,
                 cache: Cache | None = None) -> Iterator[FileResult]:
    """Results for ``files`` ((path, relpath) pairs) in their order; ``jobs`` 0 = one per CPU."""
    jobs = jobs or default_jobs()
    if jobs == 1 or len(files) < 2:
        for path, relpath in files:
            yield _lookup_or_check(path, relpath, settings, cache)
        return

    ready: dict[int, FileResult] = {}
    misses: list[tuple[int, str, str, int]] = []
    miss_bytes = 0
    # Bytes read for lookups, kept only while the misses may still be checked in this process.
    kept_data: dict[int, bytes] | None = {}
    for index, (path, relpath) in enumerate(files):
        data = None
        if cache is not None:
            data = _read(path)
            if data is not None:
                hit = cache.load(cache.key(data, relpath), path, relpath)
                if hit is not None:
                    ready[index] = hit
                    continue
            size = len(data) if data is not None else 0
        else:
            size = _size(path)
        misses.append((index, path, relpath, size))
        miss_bytes += size
        if kept_data is not None:
            if miss_bytes >= IN_PROCESS_MAX_BYTES:
                kept_data = None
            elif data is not None:
                kept_data[index] = data

    if kept_data is not None or len(misses) < 2:
        # Not worth a pool: check the misses here, streaming in order.
        kept_data = kept_data or {}
        for index, (path, relpath) in enumerate(files):
            result = ready.pop(index, None)
            if result is None:
                result = check_one(path, relpath, settings, cache, kept_data.pop(index, None))
            yield result
        return
    yield from _pooled(files, ready, misses, settings, cache, min(jobs, len(misses)))


def _pooled(files, ready: dict[int, FileResult], misses, settings: Settings, cache: Cache | None,
            workers: int) -> Iterator[FileResult]:
    import multiprocessing
    from concurrent.futures import FIRST_COMPLETED, ProcessPoolExecutor, wait
    from concurrent.futures.process import BrokenProcessPool

    import dynlint.analysis.walker  # noqa: F401 - forked workers inherit it instead of importing it each

    batches = make_batches(misses, workers)
    # fork: workers start in milliseconds with dynlint already imported; elsewhere the platform default.
    context = multiprocessing.get_context("fork") if "fork" in multiprocessing.get_all_start_methods() else None
    next_index = 0
    with ProcessPoolExecutor(max_workers=workers, mp_context=context, initializer=_init_worker,
                             initargs=(settings, cache)) as pool:
        pending = {pool.submit(_check_batch, batch): batch for batch in batches}
        try:
            while pending:
                done, _ = wait(pending, return_when=FIRST_COMPLETED)
                for future in done:
                    batch = pending.pop(future)
                    try:
                        ready.update(future.result())
                    except BrokenProcessPool:
                        # A worker died (killed, out of memory): check its files here instead.
                        for index, path, relpath in batch:
                            ready[index] = check_one(path, relpath, settings, cache)
                while next_index in ready:
                    yield ready.pop(next_index)
                    next_index += 1
        finally:
            for future in pending:
                future.cancel()
    while next_index < len(files):
        yield ready.pop(next_index)
        next_index += 1


def _lookup_or_check(path: str, relpath: str, settings: Settings, cache: Cache | None) -> FileResult:
    if cache is None:
        return check_one(path, relpath, settings, None)
    data = _read(path)
    if data is None:
        return check_one(path, relpath, settings, None)
    hit = cache.load(cache.key(data, relpath), path, relpath)
    return hit if hit is not None else check_one(path, relpath, settings, cache, data)


def _read(path: str) -> bytes | None:
    try:
        with open(path, "rb") as handle:
            return handle.read()
    except OSError:
        return None


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
