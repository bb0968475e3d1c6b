"""Fix expectations that live with the rules: ``tests/fixtures/fixes/<CODE>.py`` is an input,
``<CODE>.fixed.py`` what ``dynlint fix`` must make of it and ``<CODE>.unsafe-fixed.py`` what
``dynlint fix --unsafe-fixes`` must make of it.  The expected files are written by hand, case
by case; every rule whose unit has a fix builder has all three (adding a fix is: its builder in
``dynlint/fixes.py`` named by the rule unit, a case here, and its differential test in
``tests/test_fixes_differential.py`` / ``tests/test_fixes_spans.py``).  Discovered from the
directory: a new ``DYNxxx.py`` there is tested without touching this file.
"""

from __future__ import annotations

import ast
import difflib
import io
from pathlib import Path

import pytest
from pyflakes.api import check as pyflakes_check
from pyflakes.reporter import Reporter

from dynlint.api import check_source
from dynlint.checks import load_all
from dynlint.codes import RULES
from dynlint.config import Settings
from dynlint.fixer import fix_source

FIXES = Path(__file__).parent / "fixtures" / "fixes"
INPUTS = sorted(p for p in FIXES.glob("DYN*.py") if p.name.count(".") == 1)
MODES = {"fixed": False, "unsafe-fixed": True}


def _expected(path: Path, mode: str) -> Path:
    return path.with_name(f"{path.stem}.{mode}.py")


EVERY_RULE = Settings(select=frozenset(RULES))


def _fix(text: str, path: Path, unsafe: bool) -> str:
    # every rule on: an opt-in rule's fix (DYN501) is checked like the others
    findings = check_source(text, str(path), settings=EVERY_RULE)
    return fix_source(text, findings, unsafe=unsafe, filename=str(path))[0]


def test_every_rule_with_a_fix_has_its_expectations_and_only_those():
    with_fix = {code for code, declared in load_all().items() if declared.fix is not None}
    assert {p.stem for p in INPUTS} == with_fix
    for path in INPUTS:
        for mode in MODES:
            assert _expected(path, mode).is_file(), f"{_expected(path, mode).name} is missing"
    names = {p.name for p in FIXES.glob("*.py")}
    assert names == {p.name for p in INPUTS} | {_expected(p, m).name for p in INPUTS for m in MODES}


@pytest.mark.parametrize("mode", sorted(MODES))
@pytest.mark.parametrize("path", INPUTS, ids=lambda p: p.stem)
def test_fix_gives_the_expected_file(path, mode):
    text = path.read_text(encoding="utf-8")
    want = _expected(path, mode).read_text(encoding="utf-8")
    got = _fix(text, path, MODES[mode])
    diff = "".join(difflib.unified_diff(want.splitlines(True), got.splitlines(True), "expected", "dynlint fix"))
    assert got == want, f"{_expected(path, mode).name}:\n{diff}"


@pytest.mark.parametrize("mode", sorted(MODES))
@pytest.mark.parametrize("path", INPUTS, ids=lambda p: p.stem)
def test_expected_files_are_valid_and_fixed_for_good(path, mode):
    """Each expected file parses and is a fixed point: fixing it again in the same mode changes
    nothing.  With --unsafe-fixes every rule's input changes (rules whose fixes are all unsafe
    keep their input unchanged in safe mode)."""
    expected = _expected(path, mode)
    text = expected.read_text(encoding="utf-8")
    ast.parse(text)
    if MODES[mode]:
        assert text != path.read_text(encoding="utf-8"), f"{expected.name} changes nothing"
    assert _fix(text, expected, MODES[mode]) == text


@pytest.mark.parametrize("path", INPUTS, ids=lambda p: p.stem)
def test_unsafe_mode_applies_everything_safe_mode_does(path):
    """Safe fixes are applied in both modes: every line the safe expectation changes is changed
    the same way in the unsafe one."""
    original = path.read_text(encoding="utf-8").splitlines()
    safe = _expected(path, "fixed").read_text(encoding="utf-8").splitlines()
    unsafe = _expected(path, "unsafe-fixed").read_text(encoding="utf-8").splitlines()
    added_safe = {line for tag, line in _changes(original, safe) if tag == "+"}
    added_unsafe = {line for tag, line in _changes(original, unsafe) if tag == "+"}
    assert added_safe <= added_unsafe, sorted(added_safe - added_unsafe)


def _changes(a, b):
    for line in difflib.ndiff(a, b):
        if line[:2] in ("+ ", "- "):
            yield line[0], line[2:]


@pytest.mark.parametrize("mode", sorted(MODES))
@pytest.mark.parametrize("path", INPUTS, ids=lambda p: p.stem)
def test_fixed_files_read_no_name_the_fix_removed(path, mode):
    """A fix never leaves a read of a name whose binding it removed (a span inlines and deletes
    bindings: ``a = x[m]; b = a[a > 1]`` once emitted a mask still reading ``a``)."""
    def undefined(text):
        out = io.StringIO()
        pyflakes_check(text, str(path), Reporter(out, io.StringIO()))
        return sorted(line.split(": ", 1)[1] for line in out.getvalue().splitlines() if "undefined name" in line)

    assert undefined(path.read_text(encoding="utf-8")) == []
    assert undefined(_fix(path.read_text(encoding="utf-8"), path, MODES[mode])) == []
