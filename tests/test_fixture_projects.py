"""Multi-file fixture projects (issue 9): the project pass across files.

Each directory under ``tests/fixtures/projects/`` is a small project (real
packages with ``__init__.py``, relative and absolute imports, re-exports through
``__init__``, scripts beside them).  Its files carry the annotations of
``fixture_annotations`` (``# ruleid:``, ``# ok:``, ``# region:``...), checked
with all the project's files in one run, as ``dynlint check`` on the project's
directory does.

Checking one file *alone* (``dynlint check pkg/model.py``, or the flake8
plugin without a cache) reads it as a project of its own: what it learns from
other files (a helper's return kind, the arguments its callers pass, a base
class defined elsewhere, who calls it) is unknown.  The documented difference is
written in the files as ``# alone-...`` annotations, and checked too.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from dynlint.codes import DEFAULT_CODES
from fixture_annotations import DEFAULT, INCLUDE_HOST, check, default_view, malformed, parse_annotations, run

PROJECTS_DIR = Path(__file__).parent / "fixtures" / "projects"
PROJECTS = sorted(p for p in PROJECTS_DIR.iterdir() if p.is_dir())
_CACHE: dict = {}


def project_files(project: Path) -> list[Path]:
    return sorted(project.rglob("*.py"))


def whole(project: Path) -> tuple[dict, dict]:
    key = ("whole", project)
    if key not in _CACHE:
        files = project_files(project)
        _CACHE[key] = (run(files, project, DEFAULT), run(files, project, INCLUDE_HOST))
    return _CACHE[key]


def alone(project: Path, path: Path) -> tuple[list, list]:
    relpath = path.relative_to(project).as_posix()
    return run([path], project, DEFAULT)[relpath], run([path], project, INCLUDE_HOST)[relpath]


def _ids(path: Path) -> str:
    return path.name


def test_there_are_fixture_projects():
    assert {p.name for p in PROJECTS} >= {"detector", "scripts"}


@pytest.mark.parametrize("project", PROJECTS, ids=_ids)
def test_project_files_are_valid_and_annotated(project):
    import ast

    kinds = set()
    for path in project_files(project):
        text = path.read_text(encoding="utf-8")
        ast.parse(text, filename=str(path))
        annotations = parse_annotations(text)
        problems = malformed(annotations)
        assert not problems, f"{path}: " + "\n".join(problems)
        kinds |= {("alone-" if a.alone else "") + a.kind for a in annotations}
    # positives, negatives, regions, and the documented difference of a file checked alone
    assert {"ruleid", "ok", "region", "alone-ok", "alone-region"} <= kinds, sorted(kinds)


@pytest.mark.parametrize("project", PROJECTS, ids=_ids)
def test_the_whole_project_meets_its_annotations(project):
    default, with_host = whole(project)
    problems = []
    for path in project_files(project):
        relpath = path.relative_to(project).as_posix()
        problems += check(relpath, path.read_text(encoding="utf-8"), default[relpath], with_host[relpath])
    assert not problems, "\n".join(problems)


@pytest.mark.parametrize("project", PROJECTS, ids=_ids)
def test_each_file_checked_alone_gives_the_intra_file_result(project):
    problems = []
    for path in project_files(project):
        default, with_host = alone(project, path)
        relpath = path.relative_to(project).as_posix()
        problems += check(relpath, path.read_text(encoding="utf-8"), default, with_host, alone=True)
    assert not problems, "\n".join(problems)


@pytest.mark.parametrize("project", PROJECTS, ids=_ids)
def test_the_default_report_hides_exactly_the_host_device_findings(project):
    default, with_host = whole(project)
    for relpath in default:
        assert [(f.line, f.code, f.region) for f in default[relpath]] == \
            [(f.line, f.code, f.region) for f in default_view(with_host[relpath])], relpath


@pytest.mark.parametrize("project", PROJECTS, ids=_ids)
def test_the_cli_on_the_project_directory_reports_the_same(project, tmp_path):
    """``dynlint check`` run in the project's directory is the project pass the annotations describe."""
    import json

    proc = subprocess.run([sys.executable, "-m", "dynlint", "check", "--no-cache", "--include-host",
                           "--extend-select", "DYN204,DYN205",  # the annotations cover the opt-in rules
                           "--output-format", "json", "."], cwd=project, capture_output=True, text=True,
                          timeout=120)
    assert proc.returncode in (0, 1), proc.stderr
    reported = sorted(((project / f["filename"]).resolve().relative_to(project.resolve()).as_posix(),
                       f["location"]["row"], f["code"], f["region"]) for f in json.loads(proc.stdout))
    _, with_host = whole(project)
    expected = sorted((relpath, f.line, f.code, f.region) for relpath, findings in with_host.items()
                      for f in findings)
    assert reported == expected


@pytest.mark.parametrize("project", PROJECTS, ids=_ids)
def test_flake8_reads_a_file_alone_until_a_check_left_the_project_facts_in_the_cache(project, tmp_path):
    """The README's flake8 difference: without a cache, each file is its own project (the
    ``alone`` reading); after ``dynlint check`` saved the project's facts, flake8 reports
    what the whole-project check reports."""
    import re
    import shutil

    copy = tmp_path / project.name
    shutil.copytree(project, copy)
    (copy / "pyproject.toml").write_text("[tool.dynlint]\n")
    line_re = re.compile(r"^\./(?P<path>[^:]+):(?P<line>\d+):\d+: (?P<code>DYN\d+) ")

    def flake8() -> list[tuple]:
        proc = subprocess.run([sys.executable, "-m", "flake8", "--select", "DYN", "-j", "1", "."], cwd=copy,
                              capture_output=True, text=True, timeout=120)
        assert proc.returncode in (0, 1), proc.stderr
        return sorted((m["path"], int(m["line"]), m["code"]) for m in map(line_re.match, proc.stdout.splitlines()))

    files = project_files(project)
    # flake8's `--select DYN` reports the default rules (the opt-in ones only when named by code)
    alone_default = sorted((path.relative_to(project).as_posix(), f.line, f.code)
                           for path in files for f in alone(project, path)[0] if f.code in DEFAULT_CODES)
    whole_default = sorted((relpath, f.line, f.code) for relpath, findings in whole(project)[0].items()
                           for f in findings if f.code in DEFAULT_CODES)
    assert alone_default != whole_default  # the fixture shows a difference
    assert flake8() == alone_default
    proc = subprocess.run([sys.executable, "-m", "dynlint", "check", "-q", "."], cwd=copy, capture_output=True,
                          text=True, timeout=120)
    assert proc.returncode in (0, 1), proc.stderr
    assert flake8() == whole_default
