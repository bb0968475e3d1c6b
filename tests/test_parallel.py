"""The runner: pool batching, ordered results, in-process shortcut, worker failures, progress."""

from __future__ import annotations

import io
import os
import subprocess
import sys

import pytest

from dynlint import runner
from dynlint.config import Settings
from dynlint.runner import Progress, iter_results

NONZERO_SRC = "import torch\ndef f(x: torch.Tensor):\n    return torch.nonzero(x)\n"


def make_corpus(directory, count, body_repeats):
    """``count`` files of varied sizes (total well above the in-process threshold when body_repeats is large)."""
    files = []
    for i in range(count):
        body = "".join(f"def g{j}(x: torch.Tensor):\n    return torch.unique(x) + {i}\n"
                       for j in range(body_repeats * (1 + i % 5)))
        path = directory / f"m{i:03}.py"
        path.write_text(("def broken(:\n" if i % 7 == 3 else "") + "import torch\n" + body)
        files.append((str(path), path.name))
    return files


def summary(results):
    return [(r.path, [(f.code, f.line, f.col, f.message) for f in r.findings], r.lines) for r in results]


def test_files_are_shared_largest_first_by_bytes():
    sizes = [10, 5000, 30, 30, 100_000, 1, 700, 90_000]
    owner = runner.assign_workers(sizes, workers=2)
    assert owner[4] != owner[7]  # the two biggest files, one each
    assert runner.assign_workers(sizes, workers=2) == owner  # deterministic
    load = [sum(size for size, worker in zip(sizes, owner) if worker == w) for w in (0, 1)]
    assert abs(load[0] - load[1]) <= max(sizes)
    assert load[0] <= load[1]  # this process also solves the table: it takes a little less
    assert sorted(set(runner.assign_workers(sizes, workers=3))) == [0, 1, 2]
    assert runner.assign_workers([], workers=2) == []


def test_each_import_level_is_shared_on_its_own():
    sizes = [100, 100, 100, 100, 7, 7]
    levels = [[0, 1], [2, 3], [4, 5]]  # walked one after the other: each must keep both busy
    owner = runner.assign_workers(sizes, workers=2, groups=levels)
    assert all(owner[a] != owner[b] for a, b in levels)


def test_the_pool_returns_the_same_results_in_the_same_order(tmp_path, monkeypatch):
    files = make_corpus(tmp_path, 40, body_repeats=60)
    assert sum(os.path.getsize(p) for p, _ in files) > runner.IN_PROCESS_MAX_BYTES  # really pooled
    settings = Settings(root=str(tmp_path))
    serial = summary(iter_results(files, settings, jobs=1))
    pooled = summary(iter_results(files, settings, jobs=2))
    three = summary(iter_results(files, settings, jobs=3))
    assert serial == pooled == three
    assert [path for path, _, _ in serial] == [path for path, _ in files]
    assert sum(1 for _, findings, _ in serial if findings and findings[0][0] == "DYN000") == 6


def test_few_files_are_checked_without_starting_a_pool(tmp_path, monkeypatch):
    files = make_corpus(tmp_path, 6, body_repeats=1)

    def no_pool(*args, **kwargs):
        raise AssertionError("worker processes were started for a handful of small files")

    monkeypatch.setattr(runner, "_Walkers", no_pool)
    results = list(iter_results(files, Settings(root=str(tmp_path)), jobs=4))
    assert [r.path for r in results] == [p for p, _ in files]
    assert all(any(f.code == "DYN103" for f in r.findings) for r in results if "m003" not in r.path)


def test_a_checker_crash_on_one_file_is_that_files_dyn000(tmp_path, monkeypatch):
    files = make_corpus(tmp_path, 30, body_repeats=60)
    real = runner.analyze_source

    def crashing(source, path, settings, relpath, **kwargs):
        if path.endswith("m005.py"):
            raise KeyError("boom")
        return real(source, path, settings, relpath, **kwargs)

    monkeypatch.setattr(runner, "analyze_source", crashing)  # forked workers inherit the patch
    for jobs in (1, 2):
        results = list(iter_results(files, Settings(root=str(tmp_path)), jobs=jobs))
        assert len(results) == 30
        crashed = [r for r in results if r.path.endswith("m005.py")][0]
        assert [f.code for f in crashed.findings] == ["DYN000"]
        assert "internal error in dynlint (KeyError: 'boom')" in crashed.findings[0].message
        others = [r for r in results if r is not crashed and "broken" not in r.lines.get(1, "")]
        assert len(others) == 25 and all(any(f.code == "DYN103" for f in r.findings) for r in others)


def test_a_dying_worker_does_not_lose_files(tmp_path, monkeypatch):
    files = make_corpus(tmp_path, 30, body_repeats=60)
    expected = summary(iter_results(files, Settings(root=str(tmp_path)), jobs=1))
    parent = os.getpid()
    real = runner.analyze_source

    def dying_in_workers(source, path, settings, relpath, **kwargs):
        if os.getpid() != parent and path.endswith("m010.py"):
            os._exit(9)  # as if killed by the OOM killer
        return real(source, path, settings, relpath, **kwargs)

    monkeypatch.setattr(runner, "analyze_source", dying_in_workers)
    assert summary(iter_results(files, Settings(root=str(tmp_path)), jobs=2)) == expected


def test_default_jobs_is_the_cpus_this_process_may_use():
    expected = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    assert runner.default_jobs() == expected


class FakeTTY(io.StringIO):
    def isatty(self):
        return True


def test_progress_only_on_a_terminal_outside_ci():
    assert Progress.for_run(100, io.StringIO(), environ={}) is None
    assert Progress.for_run(100, FakeTTY(), environ={"CI": "true"}) is None
    assert Progress.for_run(100, FakeTTY(), environ={"CI": "1"}) is None
    assert isinstance(Progress.for_run(100, FakeTTY(), environ={}), Progress)
    assert isinstance(Progress.for_run(100, FakeTTY(), environ={"CI": "false"}), Progress)


def test_progress_waits_then_redraws_one_line_and_clears_it():
    now = [0.0]
    stream = FakeTTY()
    progress = Progress(3, stream, clock=lambda: now[0])
    progress.advance()
    assert stream.getvalue() == ""  # a quick run prints nothing
    now[0] = 1.0
    progress.advance()
    assert stream.getvalue().endswith("dynlint: checked 2/3 files")
    progress.clear()
    now[0] = 1.01
    progress.advance()  # the last file is always drawn
    assert stream.getvalue().endswith("\r\x1b[2Kdynlint: checked 3/3 files")
    progress.clear()
    assert stream.getvalue().endswith("\r\x1b[2K") and "\n" not in stream.getvalue()


def test_cli_prints_no_progress_when_stderr_is_piped(tmp_path):
    (tmp_path / "pyproject.toml").write_text("[tool.dynlint]\n")
    make_corpus(tmp_path, 40, body_repeats=30)
    env = {k: v for k, v in os.environ.items() if k != "CI"}
    proc = subprocess.run([sys.executable, "-m", "dynlint", "check", "--no-cache", "-q"], cwd=tmp_path, env=env,
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 1 and proc.stderr == ""


@pytest.mark.skipif(not hasattr(os, "openpty"), reason="needs a pseudo-terminal")
def test_cli_progress_on_a_terminal_goes_to_stderr_only(tmp_path):
    import pty

    (tmp_path / "pyproject.toml").write_text("[tool.dynlint]\n")
    make_corpus(tmp_path, 40, body_repeats=30)
    env = {k: v for k, v in os.environ.items() if k != "CI"}
    code = ("import sys, dynlint.runner as r; r.Progress.DELAY_S = 0; r.Progress.INTERVAL_S = 0;"
            "from dynlint.cli import main; sys.exit(main(['check', '--no-cache', '-j', '1']))")
    leader, follower = pty.openpty()
    proc = subprocess.Popen([sys.executable, "-c", code], cwd=tmp_path, env=env, stdout=subprocess.PIPE,
                            stderr=follower, text=True)
    os.close(follower)
    stdout, _ = proc.communicate(timeout=120)
    chunks = []
    while True:
        try:
            chunk = os.read(leader, 65536)
        except OSError:
            break
        if not chunk:
            break
        chunks.append(chunk)
    os.close(leader)
    terminal = b"".join(chunks).decode()
    assert "dynlint: checked 40/40 files" in terminal
    assert terminal.endswith("\r\x1b[2K")  # the line is erased at the end
    assert "checked" not in stdout and "Found" in stdout
