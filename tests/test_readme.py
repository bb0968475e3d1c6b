"""The README's instructions work as written: install lines, the runtime example and its quoted output.

(The pre-commit snippets are run for real in tests/test_precommit.py.)"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parent.parent
README = (REPO_ROOT / "README.md").read_text(encoding="utf-8")
DOCS = {"README.md": README, **{f"docs/{p.name}": p.read_text(encoding="utf-8")
                                 for p in sorted((REPO_ROOT / "docs").glob("*.md"))}}
GIT_ENV = {
    "GIT_AUTHOR_NAME": "dynlint tests", "GIT_AUTHOR_EMAIL": "tests@example.invalid",
    "GIT_COMMITTER_NAME": "dynlint tests", "GIT_COMMITTER_EMAIL": "tests@example.invalid",
}
URL_PLACEHOLDER = "<dynlint-git-url>"


def fenced_blocks(text: str) -> list[tuple[str, str]]:
    """(info string, content) of each fenced code block, in order."""
    blocks, current, info = [], None, ""
    for line in text.splitlines(keepends=True):
        if line.startswith("```"):
            if current is None:
                current, info = [], line[3:].strip()
            else:
                blocks.append((info, "".join(current)))
                current = None
        elif current is not None:
            current.append(line)
    return blocks


def code_blocks(text: str, language: str | None = None) -> list[str]:
    """Contents of the fenced blocks (only those of ``language`` when given; "" = no language)."""
    return [content for info, content in fenced_blocks(text) if language is None or info == language]


def paragraphs(text: str) -> list[str]:
    return re.split(r"\n\s*\n", text)


@pytest.mark.parametrize("name", DOCS)
def test_no_documented_install_that_cannot_work_today(name):
    """dynlint is not on PyPI and has no public repository or tags yet: the PyPI and
    GitHub forms may appear only as what will work "once released"."""
    for paragraph in paragraphs(DOCS[name]):
        future = "once released" in paragraph.lower() or "once dynlint is released" in paragraph.lower()
        if re.search(r"pip install [\"']?dynlint(\[[a-z,]+\])?[\"']?(?!\s*@)(\s|$|`)", paragraph):
            assert future, f"{name}: 'pip install dynlint' presented as working today:\n{paragraph}"
        for block in code_blocks(paragraph + "\n"):
            assert "github.com/dynlint" not in block and "rev: v0.1.0" not in block, f"{name}:\n{block}"


def committed_copy(tmp_path: Path) -> tuple[Path, str]:
    """A git repository holding this checkout's files (tracked and untracked, not ignored)."""
    listed = subprocess.run(["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
                            cwd=REPO_ROOT, check=True, capture_output=True).stdout.decode()
    copy = tmp_path / "dynlint-origin"
    for name in filter(None, listed.split("\0")):
        source = REPO_ROOT / name
        if source.is_file():
            (copy / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, copy / name)
    env = {**os.environ, **GIT_ENV}
    for args in (["init", "-q"], ["add", "."], ["commit", "-q", "-m", "snapshot"]):
        subprocess.run(["git", *args], cwd=copy, check=True, capture_output=True, env=env)
    sha = subprocess.run(["git", "rev-parse", "HEAD"], cwd=copy, check=True, capture_output=True,
                         text=True).stdout.strip()
    return copy, sha


def install_lines() -> list[str]:
    section = README[README.index("### Install\n"):README.index("### Three ways to run it")]
    lines = []
    for block in code_blocks(section, "console"):
        for line in block.splitlines():
            command = line.removeprefix("$ ").split("  #")[0].strip()
            if command:
                lines.append(command)
    return lines


def test_install_section_lines_work_with_a_real_git_url(tmp_path):
    """Every line of the Install block, with the placeholders filled in by a real git URL
    (file://) and commit, resolves to this project (pip --dry-run: nothing installed)."""
    if shutil.which("git") is None:
        pytest.fail("git is required for this test")
    origin, sha = committed_copy(tmp_path)
    lines = install_lines()
    assert len(lines) == 3, lines
    work = tmp_path / "work"
    work.mkdir()
    for line in lines:
        command = line.replace(URL_PLACEHOLDER, origin.as_uri()).replace("<commit>", sha)
        assert "<" not in command, command
        # Offline and quick: no dependencies, the build backend already installed (dev extras).
        command = command.replace("pip install ", f"{sys.executable} -m pip install --dry-run --no-deps "
                                                  "--no-build-isolation --disable-pip-version-check ")
        proc = subprocess.run(command, shell=True, cwd=work, capture_output=True, text=True, timeout=300,
                              env={**os.environ, **GIT_ENV})
        assert proc.returncode == 0, f"{line}\n{proc.stdout}\n{proc.stderr}"
        assert "Would install dynlint-" in proc.stdout, f"{line}\n{proc.stdout}"


def normalized_report(text: str) -> str:
    """Line numbers inside torch itself change between torch builds; column widths follow them."""
    text = re.sub(r"(torch/[\w/]+\.py):\d+", r"\1:N", text)
    return "\n".join(re.sub(r"-{2,}", "-", re.sub(r" {2,}", " ", line)).rstrip() for line in text.splitlines())


def test_gaudi_example_code_and_output_are_the_real_ones():
    """The README quotes the example's whole code, and the output it quotes is what running it prints."""
    pytest.importorskip("torch")
    example = (REPO_ROOT / "examples" / "gaudi_recompile.py").read_text(encoding="utf-8")
    section = README[README.index("Gaudi's own example"):README.index("The columns and comments are Gaudi's")]
    [code] = code_blocks(section, "python")
    assert code == example
    [quoted] = code_blocks(section, "")
    proc = subprocess.run([sys.executable, "examples/gaudi_recompile.py"], cwd=REPO_ROOT, capture_output=True,
                          text=True, timeout=300, env={**os.environ, "PYTHONPATH": str(REPO_ROOT)})
    assert proc.returncode == 0, proc.stderr
    assert normalized_report(proc.stdout) == normalized_report(quoted)
    assert "Dynamic modules (root causes): Sequential/1" in proc.stdout


def test_dev_command_says_how_to_get_the_cpu_torch_build():
    quick_start = README[README.index("## Quick start"):README.index("## Rules")]
    assert 'pip install torch==2.13.0 && pip install -e ".[dev]" && python -m pytest -q' in quick_start
    assert "CUDA build" in quick_start
    assert "--index-url https://download.pytorch.org/whl/cpu" in quick_start
