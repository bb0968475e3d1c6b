"""The pre-commit hook, exercised the way a user's repository would use it."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parent.parent
GIT_ENV = {
    "GIT_AUTHOR_NAME": "dynlint tests", "GIT_AUTHOR_EMAIL": "tests@example.invalid",
    "GIT_COMMITTER_NAME": "dynlint tests", "GIT_COMMITTER_EMAIL": "tests@example.invalid",
}


def pre_commit_command() -> list[str]:
    """pre-commit, installing it if needed; the tests skip only when it cannot be installed."""
    probe = subprocess.run([sys.executable, "-m", "pre_commit", "--version"], capture_output=True)
    if probe.returncode != 0:
        install = subprocess.run([sys.executable, "-m", "pip", "install", "-q", "pre-commit"], capture_output=True)
        if install.returncode != 0:
            pytest.skip("pre-commit is not installed and cannot be installed")
    return [sys.executable, "-m", "pre_commit"]


def git(*args, cwd):
    subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True, env={**os.environ, **GIT_ENV})


@pytest.fixture(scope="module")
def hook_repo(tmp_path_factory):
    """A committed copy of this checkout (try-repo ignores untracked files of a live repo)."""
    if shutil.which("git") is None:
        pytest.fail("git is required for the pre-commit test")
    listed = subprocess.run(["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
                            cwd=REPO_ROOT, check=True, capture_output=True).stdout.decode()
    copy = tmp_path_factory.mktemp("hook-repo")
    for name in filter(None, listed.split("\0")):
        source = REPO_ROOT / name
        if source.is_file():
            (copy / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, copy / name)
    git("init", "-q", cwd=copy)
    git("add", ".", cwd=copy)
    git("commit", "-q", "-m", "snapshot", cwd=copy)
    return copy


@pytest.fixture(scope="module")
def pre_commit_home(tmp_path_factory):
    return tmp_path_factory.mktemp("pre-commit-home")


def try_repo(hook_repo, user_repo, pre_commit_home, *files):
    env = {**os.environ, **GIT_ENV, "PRE_COMMIT_HOME": str(pre_commit_home), "PRE_COMMIT_COLOR": "never"}
    return subprocess.run([*pre_commit_command(), "try-repo", str(hook_repo), "dynlint", "--files", *files],
                          cwd=user_repo, capture_output=True, text=True, env=env, timeout=600)


def test_manifest_is_valid():
    proc = subprocess.run([*pre_commit_command(), "validate-manifest", str(REPO_ROOT / ".pre-commit-hooks.yaml")],
                          capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_manifest_declares_the_dynlint_hook():
    import yaml  # a dependency of pre-commit

    hooks = {hook["id"]: hook for hook in yaml.safe_load((REPO_ROOT / ".pre-commit-hooks.yaml").read_text())}
    assert hooks["dynlint"] == {
        "id": "dynlint", "name": "dynlint", "description": hooks["dynlint"]["description"],
        "entry": "dynlint check", "language": "python", "types_or": ["python", "pyi"], "require_serial": True,
        "minimum_pre_commit_version": "2.9.2",
    }


def test_try_repo_fails_on_findings_and_passes_on_clean_code(hook_repo, pre_commit_home, tmp_path):
    user_repo = tmp_path / "user"
    user_repo.mkdir()
    (user_repo / "model.py").write_text("import torch\ndef f(x: torch.Tensor):\n    return torch.nonzero(x)\n")
    (user_repo / "broken.py").write_text("def f(:\n")
    (user_repo / "clean.py").write_text("import torch\n\ndef f(x: torch.Tensor):\n    return x + 1\n")
    (user_repo / "stub.pyi").write_text("def g() -> int: ...\n")
    (user_repo / "notes.txt").write_text("def f(:\n")  # not a Python file: the hook never sees it
    git("init", "-q", cwd=user_repo)
    git("add", ".", cwd=user_repo)

    failing = try_repo(hook_repo, user_repo, pre_commit_home, "model.py", "broken.py", "clean.py", "notes.txt")
    output = failing.stdout + failing.stderr
    assert failing.returncode == 1, output
    assert "model.py:3:12: DYN102" in output
    assert "broken.py:1:7: DYN000" in output
    assert "Found 2 findings in 2 files." in output
    assert "notes.txt" not in output.split("hooks:")[-1]

    passing = try_repo(hook_repo, user_repo, pre_commit_home, "clean.py", "stub.pyi", "notes.txt")
    output = passing.stdout + passing.stderr
    assert passing.returncode == 0, output
    assert "Passed" in output
