"""The results cache: never changes results, only skips work (dynlint.cache)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import time
import sys

import pytest

from dynlint.cache import CACHE_DIR_NAME, Cache, is_dynlint_cache
from dynlint.config import Settings
from dynlint.diagnostics import Applicability, Edit, Finding, Fix

NONZERO_SRC = "import torch\ndef f(x: torch.Tensor):\n    return torch.nonzero(x)\n"
CLEAN_SRC = "import torch\n\ndef f(x: torch.Tensor):\n    return x + 1\n"
FIXABLE_SRC = "import torch\nfrom torch.utils.data import DataLoader\nloader = DataLoader(ds, batch_size=8, shuffle=True)\n"


def dynlint(*args, cwd, timeout=120):
    return subprocess.run([sys.executable, "-m", "dynlint", *args], cwd=cwd, capture_output=True, text=True,
                          timeout=timeout)


@pytest.fixture
def project(tmp_path):
    (tmp_path / "pyproject.toml").write_text("[tool.dynlint]\n")
    for i in range(6):
        (tmp_path / "pkg").mkdir(exist_ok=True)
        (tmp_path / "pkg" / f"m{i}.py").write_text(NONZERO_SRC if i % 2 else CLEAN_SRC)
    (tmp_path / "pkg" / "loader.py").write_text(FIXABLE_SRC)
    (tmp_path / "pkg" / "broken.py").write_text("def f(:\n")
    return tmp_path


def entry_files(cache_dir):
    entries = cache_dir / "entries"
    return sorted(p for p in entries.rglob("*") if p.is_file()) if entries.exists() else []


@pytest.mark.parametrize("fmt", ["full", "json"])
def test_cold_and_warm_runs_print_the_same(project, fmt):
    cold = dynlint("check", "--output-format", fmt, cwd=project)
    cache_dir = project / CACHE_DIR_NAME
    stored = entry_files(cache_dir)
    assert len(stored) == 8  # one per file (its module name is part of the key), the unparsable one included
    warm = dynlint("check", "--output-format", fmt, cwd=project)
    uncached = dynlint("check", "--output-format", fmt, "--no-cache", cwd=project)
    assert (cold.returncode, cold.stdout, cold.stderr) == (warm.returncode, warm.stdout, warm.stderr)
    assert (uncached.returncode, uncached.stdout) == (cold.returncode, cold.stdout)
    assert entry_files(cache_dir) == stored  # nothing re-checked
    if fmt == "json":
        findings = json.loads(warm.stdout)
        assert {f["code"] for f in findings} == {"DYN102", "DYN401", "DYN000"}
        assert any(f["fix"] and f["fix"]["edits"] for f in findings)  # fixes survive the round trip


def test_cache_directory_is_tagged_and_ignored_by_git(project):
    dynlint("check", cwd=project)
    cache_dir = project / CACHE_DIR_NAME
    assert (cache_dir / "CACHEDIR.TAG").read_text().startswith("Signature: 8a477f597d28d172789f06886806bc55")
    assert "*" in (cache_dir / ".gitignore").read_text().splitlines()
    assert is_dynlint_cache(str(cache_dir))


def test_the_hits_are_really_served_from_the_cache(project):
    """A planted entry is returned as is: proof that a warm run reads the cache instead of checking."""
    dynlint("check", cwd=project)
    cache = Cache(str(project / CACHE_DIR_NAME), load(project))
    # the roots of the names the run's modules can be imported by: m0..m5, loader, broken, and
    # "pkg" (pkg/ has no __init__.py: "pkg.m0" is a path alias of m0)
    roots = frozenset(f"m{i}" for i in range(6)) | {"loader", "broken", "pkg"}
    key = cache.key(CLEAN_SRC.encode(), "pkg/m0.py", "m0", roots)
    path = project / CACHE_DIR_NAME / "entries" / key[:2] / key[2:]
    assert path.exists()
    variants = json.loads(path.read_text())
    assert len(variants) == 1
    variants[0]["f"] = [["DYN103", "planted", 1, 0, 1, 1, None]]
    variants[0]["p"] = [["m0.f", None, False]]  # function id, context, kept only in the step
    variants[0]["l"] = {"1": "import torch"}
    path.write_text(json.dumps(variants))
    shutil.rmtree(project / CACHE_DIR_NAME / "runs")  # else the whole run's snapshot answers first
    proc = dynlint("check", "--output-format", "concise", cwd=project)
    assert "pkg/m0.py:1:1: DYN103 planted" in proc.stdout
    assert "planted" not in dynlint("check", "--no-cache", "pkg/m0.py", cwd=project).stdout


def load(project):
    from dynlint.config import load_settings

    cwd = os.getcwd()
    os.chdir(project)
    try:
        return load_settings(["."], {})
    finally:
        os.chdir(cwd)


def test_an_edited_file_is_checked_again(project):
    dynlint("check", cwd=project)
    (project / "pkg" / "m0.py").write_text(NONZERO_SRC)
    proc = dynlint("check", "--output-format", "concise", "pkg/m0.py", cwd=project)
    assert proc.returncode == 1 and "pkg/m0.py:3:12: DYN102" in proc.stdout
    (project / "pkg" / "m0.py").write_text(CLEAN_SRC)
    assert dynlint("check", "pkg/m0.py", cwd=project).returncode == 0


def test_selection_and_per_file_ignores_are_part_of_the_key(project):
    dynlint("check", cwd=project)
    assert dynlint("check", "--select", "DYN103", "pkg", cwd=project).returncode == 1  # only broken.py's DYN000
    (project / "pyproject.toml").write_text("[tool.dynlint.per-file-ignores]\n'pkg/m1.py' = ['DYN102']\n")
    proc = dynlint("check", "--output-format", "concise", cwd=project)
    assert "pkg/m1.py" not in proc.stdout and "pkg/m3.py:3:12: DYN102" in proc.stdout
    # The same content under a path without the ignore is still reported.
    (project / "pkg" / "copy.py").write_text(NONZERO_SRC)
    assert "pkg/copy.py:3:12: DYN102" in dynlint("check", "--output-format", "concise", cwd=project).stdout


def test_corrupt_entries_are_misses_and_get_rewritten(project):
    expected = dynlint("check", "--output-format", "json", "--no-cache", cwd=project).stdout
    dynlint("check", cwd=project)
    for path in entry_files(project / CACHE_DIR_NAME) + run_snapshots(project / CACHE_DIR_NAME):
        path.write_bytes(b"\x00{not json")
    proc = dynlint("check", "--output-format", "json", cwd=project)
    assert proc.stdout == expected and proc.stderr == ""
    assert all(p.read_bytes().startswith(b"[{") for p in entry_files(project / CACHE_DIR_NAME))
    assert all(p.read_bytes().startswith(b'{"started"') for p in run_snapshots(project / CACHE_DIR_NAME))


def test_no_cache_writes_nothing_and_cache_dir_moves_it(project, tmp_path_factory):
    dynlint("check", "--no-cache", cwd=project)
    assert not (project / CACHE_DIR_NAME).exists()
    elsewhere = tmp_path_factory.mktemp("caches") / "mine"
    dynlint("check", "--cache-dir", str(elsewhere), cwd=project)
    assert not (project / CACHE_DIR_NAME).exists()
    assert len(entry_files(elsewhere)) == 8 and (elsewhere / "CACHEDIR.TAG").exists()


def test_clean_removes_the_cache_a_check_created(project):
    dynlint("check", cwd=project)
    assert (project / CACHE_DIR_NAME).is_dir()
    proc = dynlint("clean", cwd=project)
    assert proc.returncode == 0 and proc.stdout == f"Removed {CACHE_DIR_NAME}\n"
    assert not (project / CACHE_DIR_NAME).exists()


def test_an_unusable_cache_directory_only_warns(project):
    blocker = project / "not-a-dir"
    blocker.write_text("a file where the cache directory should go")
    proc = dynlint("check", "--output-format", "concise", "--cache-dir", str(blocker), cwd=project)
    expected = dynlint("check", "--output-format", "concise", "--no-cache", cwd=project)
    assert (proc.returncode, proc.stdout) == (expected.returncode, expected.stdout) == (1, expected.stdout)
    assert proc.stderr.startswith("dynlint: warning: cache disabled") and proc.stderr.count("\n") == 1
    assert blocker.read_text().startswith("a file")


def test_two_runs_sharing_one_cache_at_once_both_give_correct_results(tmp_path):
    (tmp_path / "pyproject.toml").write_text("[tool.dynlint]\n")
    body = "".join(f"def g{j}(x: torch.Tensor):\n    return x.nonzero(), torch.unique(x)\n" for j in range(40))
    for i in range(60):
        (tmp_path / f"m{i:02}.py").write_text(f"import torch\n# file {i}\n{body}")
    expected = dynlint("check", "--output-format", "json", "--no-cache", cwd=tmp_path).stdout
    cache_dir = tmp_path / "shared-cache"
    for round_number in range(3):
        command = [sys.executable, "-m", "dynlint", "check", "--output-format", "json", "--cache-dir", str(cache_dir)]
        runs = [subprocess.Popen([*command, "-j", str(jobs)], cwd=tmp_path, stdout=subprocess.PIPE,
                                 stderr=subprocess.PIPE, text=True) for jobs in (1, 2)]
        outputs = [run.communicate(timeout=120) for run in runs]
        for stdout, stderr in outputs:
            assert stderr == ""
            assert stdout == expected, f"round {round_number}"
    assert len(entry_files(cache_dir)) == 60
    assert not [p for p in cache_dir.rglob("*.tmp")]  # no temporary file left behind


def test_entries_round_trip_outcomes_with_fixes_facts_and_answers(tmp_path):
    from dynlint.analysis.facts import EMPTY, FileFacts, ProjectFacts
    from dynlint.api import Outcome

    settings = Settings(root=str(tmp_path))
    cache = Cache.open(str(tmp_path / "c"), settings)
    fix = Fix(Applicability.UNSAFE, "use where", (Edit(3, 4, 3, 9, "torch.where(m, x, 0)"), Edit(4, 0, 4, 0, "é\n")))
    findings = [Finding("DYN101", "boolean mask", 3, 4, 3, 9, fix), Finding("DYN000", "bad", 1, 0, 1, 0)]
    facts = FileFacts("a", functions={"a.f": (("x",), (), False, False, False, ())},
                      returns={"a.f": (("tuple", "tensor", "py"), False)},
                      calls=[("a.f", ("q", "b.g"), (("tensor", True),), {"m": ("mask", False)}, False, "call")])
    consumed = {("call", "b.g"): None, ("param", "a.f", "x"): None}
    outcome = Outcome(findings, [("a.f", None), ("a", "train")], facts, consumed, True,
                      {3: "    y = x[m]  # ünïcode", 1: "line"})
    key = cache.key(b"source", "a.py", "a", frozenset({"a", "b"}))
    cache.store(key, outcome)
    reopened = Cache(str(tmp_path / "c"), settings)  # a later run reads it from disk
    loaded = reopened.lookup(key, EMPTY)
    assert loaded.findings == findings and loaded.lines == outcome.lines and loaded.places == outcome.places
    assert loaded.facts == facts and loaded.consumed == consumed and loaded.imports_torch
    # a table that answers one recorded question differently: a miss
    other = ProjectFacts([FileFacts("b", functions={"b.g": ((), (), False, False, False, ())},
                                    returns={"b.g": ("tensor", False)})])
    assert reopened.lookup(key, other) is None
    assert reopened.lookup(cache.key(b"source!", "a.py", "a", frozenset({"a", "b"})), EMPTY) is None


def test_key_depends_on_content_settings_and_enabled_rules(tmp_path):
    base = Settings(root=str(tmp_path), per_file_ignores=(("tests/*", frozenset({"DYN301"})),))
    cache = Cache(str(tmp_path), base)
    assert cache.key(b"x", "src/a.py") == cache.key(b"x", "src/b.py")  # same rules: a moved file still hits
    assert cache.key(b"x", "src/a.py", "a") != cache.key(b"x", "src/a.py", "b")  # another module name
    assert cache.key(b"x", "src/a.py", "a", frozenset({"a"})) != cache.key(b"x", "src/a.py", "a", frozenset({"a", "z"}))
    assert cache.key(b"x", "src/a.py") != cache.key(b"x", "tests/a.py")
    assert cache.key(b"x", "src/a.py") != cache.key(b"y", "src/a.py")
    other = Cache(str(tmp_path), Settings(root=str(tmp_path), extend_dynamic_ops=("my.op",),
                                          per_file_ignores=base.per_file_ignores))
    assert other.key(b"x", "src/a.py") != cache.key(b"x", "src/a.py")


def test_clean_removes_a_cache_dir_given_explicitly_but_nothing_else(project, tmp_path_factory):
    elsewhere = tmp_path_factory.mktemp("caches") / "mine"
    dynlint("check", "--cache-dir", str(elsewhere), cwd=project)
    precious = tmp_path_factory.mktemp("data")
    (precious / "keep.txt").write_text("user data")
    refused = dynlint("clean", "--cache-dir", str(precious), cwd=project)
    assert refused.returncode == 2 and "not a dynlint cache" in refused.stderr
    assert (precious / "keep.txt").exists() and elsewhere.exists()
    proc = dynlint("clean", "--cache-dir", str(elsewhere), cwd=project)
    assert (proc.returncode, proc.stdout) == (0, f"Removed {elsewhere}\n")
    assert not elsewhere.exists()


def run_snapshots(cache_dir):
    runs = cache_dir / "runs"
    return sorted(runs.iterdir()) if runs.exists() else []


def test_an_unchanged_run_is_served_from_its_snapshot(project):
    """A planted snapshot is returned as is (so a warm run really reads it); any edit is a miss."""
    expected = dynlint("check", "--output-format", "concise", cwd=project).stdout
    (snapshot,) = run_snapshots(project / CACHE_DIR_NAME)
    data = json.loads(snapshot.read_text())
    assert len(data["files"]) == 8
    planted = next(result for result in data["results"] if result[2])
    planted[2][0][1] = "planted"
    started = data["started"]
    snapshot.write_text(json.dumps(data))
    # the files are younger than RACY_S before the run: their contents are compared, and match
    assert "planted" in dynlint("check", "--output-format", "concise", cwd=project).stdout
    data["started"] = started + 10**12  # as if the run were long after the files' last change
    snapshot.write_text(json.dumps(data))
    assert "planted" in dynlint("check", "--output-format", "concise", cwd=project).stdout
    (project / "pkg" / "m0.py").write_text(CLEAN_SRC + "\n")  # any edit: the project pass runs again
    proc = dynlint("check", "--output-format", "concise", cwd=project)
    assert "planted" not in proc.stdout and proc.stdout == expected
    # options that change results name another snapshot
    dynlint("check", "--include-host", cwd=project)
    assert len(run_snapshots(project / CACHE_DIR_NAME)) == 2


def test_an_edit_keeping_size_and_mtime_is_not_served_stale(project):
    """Rewritten with the same size and its mtime set back: the content is compared (ctime moved)."""
    target = project / "pkg" / "m1.py"
    old = os.stat(target)
    assert "pkg/m1.py:3:12: DYN102" in dynlint("check", "--output-format", "concise", cwd=project).stdout
    (snapshot,) = run_snapshots(project / CACHE_DIR_NAME)
    data = json.loads(snapshot.read_text())
    data["started"] += 10**12  # as if the run were long after the files' last change: stats are trusted
    snapshot.write_text(json.dumps(data))
    time.sleep(0.01)  # a ctime the file system tells apart
    target.write_text(NONZERO_SRC.replace("nonzero(x)", "abs(x)    "))
    os.utime(target, ns=(old.st_atime_ns, old.st_mtime_ns))
    assert os.stat(target).st_size == old.st_size
    proc = dynlint("check", "--output-format", "concise", cwd=project)
    assert "pkg/m1.py" not in proc.stdout
    assert proc.stdout == dynlint("check", "--output-format", "concise", "--no-cache", cwd=project).stdout


def test_a_run_snapshot_needs_the_project_facts_it_wrote(project):
    """Another run over other files replaces project.json (the flake8 plugin's facts): the first
    run's snapshot is then not served, so project.json comes back to what that run writes."""
    cache_dir = project / CACHE_DIR_NAME
    dynlint("check", cwd=project)
    whole = (cache_dir / "project.json").read_bytes()
    dynlint("check", "pkg/m1.py", cwd=project)
    assert (cache_dir / "project.json").read_bytes() != whole
    dynlint("check", cwd=project)
    assert (cache_dir / "project.json").read_bytes() == whole


def test_project_facts_replaced_with_the_same_size_are_compared_by_content(project):
    """The snapshot trusts project.json by (size, mtime, inode); a replacement of the same size (a new
    inode) is hashed, and other content means the snapshot is not served."""
    cache_dir = project / CACHE_DIR_NAME
    expected = dynlint("check", "--output-format", "concise", cwd=project).stdout
    (snapshot,) = run_snapshots(cache_dir)
    data = json.loads(snapshot.read_text())
    assert data["project_stat"] is not None
    planted = next(result for result in data["results"] if result[2])
    planted[2][0][1] = "planted"
    data["started"] += 10**12
    snapshot.write_text(json.dumps(data))
    assert "planted" in dynlint("check", "--output-format", "concise", cwd=project).stdout  # trusted by stat
    facts = cache_dir / "project.json"
    original = facts.read_bytes()
    replacement = cache_dir / "project.json.new"
    replacement.write_bytes(original.replace(b'"modules"', b'"modulez"', 1))
    os.replace(replacement, facts)  # same size, new inode
    assert facts.stat().st_size == len(original)
    proc = dynlint("check", "--output-format", "concise", cwd=project)
    assert "planted" not in proc.stdout and proc.stdout == expected
