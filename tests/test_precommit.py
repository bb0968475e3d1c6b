"""The pre-commit hook, exercised the way a user's repository would use it."""

from __future__ import annotations

import os
import re
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
        "entry": "dynlint check", "language": "python", "types_or": ["python", "pyi", "jupyter"], "require_serial": True,
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
    shutil.copy(REPO_ROOT / "tests" / "fixtures" / "notebooks" / "detection_postprocess.ipynb", user_repo / "post.ipynb")
    git("init", "-q", cwd=user_repo)
    git("add", ".", cwd=user_repo)

    failing = try_repo(hook_repo, user_repo, pre_commit_home, "model.py", "broken.py", "clean.py", "notes.txt",
                       "post.ipynb")
    output = failing.stdout + failing.stderr
    assert failing.returncode == 1, output
    assert "model.py:3:12: DYN102" in output
    assert "broken.py:1:7: DYN000" in output
    assert "post.ipynb:cell 4:3:12: DYN101" in output  # notebooks too (types_or: jupyter), located by cell
    assert "Found 7 findings in 3 files." in output
    assert "notes.txt" not in output.split("hooks:")[-1]

    passing = try_repo(hook_repo, user_repo, pre_commit_home, "clean.py", "stub.pyi", "notes.txt")
    output = passing.stdout + passing.stderr
    assert passing.returncode == 0, output
    assert "Passed" in output


# ----------------------------------------------------------------- the README's own configurations
FIXABLE_AND_NOT = (
    "import torch\n"
    "\n"
    "def f(x: torch.Tensor):\n"
    "    y = x[x > 0].sum()\n"          # DYN101, safe fix
    "    return torch.nonzero(x), y\n"  # DYN102, no fix
)


def readme_pre_commit_configs() -> list[str]:
    readme = (REPO_ROOT / "README.md").read_text(encoding="utf-8")
    blocks = re.findall(r"^```yaml\n(.*?)^```$", readme, flags=re.S | re.M)
    return [block for block in blocks if block.startswith("repos:")]


def test_readme_documents_three_pre_commit_setups():
    configs = readme_pre_commit_configs()
    kinds = sorted(("local" if "repo: local" in c else "file") + ":" + ("fix" if "dynlint-fix" in c or "--fix" in c
                                                                          else "check") for c in configs)
    assert kinds == ["file:check", "file:fix", "local:check"], configs


@pytest.mark.parametrize("index", range(3))
def test_readme_pre_commit_config_works_as_written(hook_repo, pre_commit_home, tmp_path, index):
    """Each `.pre-commit-config.yaml` the README shows, with its placeholders filled in (the clone's
    path, a real commit), runs and reports every remaining finding exactly once."""
    config = readme_pre_commit_configs()[index]
    sha = subprocess.run(["git", "rev-parse", "HEAD"], cwd=hook_repo, check=True, capture_output=True,
                         text=True).stdout.strip()
    config = config.replace("file:///home/you/src/dynlint", hook_repo.as_uri()).replace("<commit>", sha)
    unfilled = re.sub(r"\s+#.*", "", config)  # comments may keep their examples
    assert "<" not in unfilled and "/home/you" not in unfilled, config
    user_repo = tmp_path / "user"
    user_repo.mkdir()
    (user_repo / ".pre-commit-config.yaml").write_text(config)
    (user_repo / "model.py").write_text(FIXABLE_AND_NOT)
    git("init", "-q", cwd=user_repo)
    git("add", ".", cwd=user_repo)
    env = {**os.environ, **GIT_ENV, "PRE_COMMIT_HOME": str(pre_commit_home), "PRE_COMMIT_COLOR": "never"}
    proc = subprocess.run([*pre_commit_command(), "run", "--all-files"], cwd=user_repo, capture_output=True,
                          text=True, env=env, timeout=600)
    output = proc.stdout + proc.stderr
    assert proc.returncode == 1, output
    assert output.count("model.py:5:12: DYN102") == 1, output
    fixing = "dynlint-fix" in config
    if fixing:
        assert "torch.where(x > 0, x, 0).sum()" in (user_repo / "model.py").read_text()
        assert "DYN101" not in output and "files were modified by this hook" in output, output
    else:
        assert (user_repo / "model.py").read_text() == FIXABLE_AND_NOT
        assert output.count("model.py:4:9: DYN101") == 1, output
