"""Annotated rule fixtures (semgrep style) run through the checker.

``tests/fixtures/*.py`` (one per rule) and ``tests/fixtures/inference/*.py``
(one per theme of the project pass: parameters, call results, evidence,
annotations, flow, patterns, judged false alarms, regions) carry annotations
read by ``fixture_annotations`` (see there): ``# ruleid: CODE``, ``# ok: CODE``,
``# todoruleid: CODE`` (expected one day, must not be reported today),
``# todook: CODE`` (a false alarm still reported), ``# region: NAME``.  Every
fixture is checked as a project of its own through the real pipeline
(``dynlint.runner.iter_results``), with the default settings and with
include-host.  A rule fixture (``DYN101.py``) may have no *unannotated* finding
of its rule; an inference fixture no unannotated finding at all.
``no_torch_import.py`` must produce no DYN1xx-DYN3xx finding at all.  Fixtures
are parsed, never executed.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from dynlint.api import check_source
from dynlint.checks import Scope, load_all
from dynlint.codes import RULES
from dynlint.diagnostics import Finding
from fixture_annotations import (
    DEFAULT, INCLUDE_HOST, check, default_view, malformed, parse_annotations, run,
)

FIXTURES = Path(__file__).parent / "fixtures"
RULE_FIXTURES = sorted(p for p in FIXTURES.glob("DYN*.py") if p.stem in RULES)
NO_TORCH_FIXTURE = FIXTURES / "no_torch_import.py"
INFERENCE_FIXTURES = sorted((FIXTURES / "inference").glob("*.py"))
INFERENCE_THEMES = {"parameters", "call_results", "evidence", "annotations", "flow", "patterns",
                    "false_alarms", "regions"}
MIN_ANNOTATIONS = 15


def _fixture_id(path: Path) -> str:
    return path.relative_to(FIXTURES).as_posix()


ALL_FIXTURES = RULE_FIXTURES + [NO_TORCH_FIXTURE]
_RESULTS: dict[Path, tuple[list, list]] = {}


def results(path: Path) -> tuple[list, list]:
    """(default findings, include-host findings) of one fixture checked as its own project."""
    if path not in _RESULTS:
        name = path.name
        _RESULTS[path] = (run([path], path.parent, DEFAULT)[name], run([path], path.parent, INCLUDE_HOST)[name])
    return _RESULTS[path]


def test_every_rule_except_parse_error_has_a_fixture():
    expected = {code for code in RULES if code != "DYN000"}
    assert {p.stem for p in RULE_FIXTURES} == expected
    assert NO_TORCH_FIXTURE.is_file()


def test_every_inference_theme_has_a_fixture():
    assert {p.stem for p in INFERENCE_FIXTURES} == INFERENCE_THEMES


@pytest.mark.parametrize("path", ALL_FIXTURES + INFERENCE_FIXTURES, ids=_fixture_id)
def test_fixture_is_valid_python_with_well_formed_annotations(path):
    text = path.read_text(encoding="utf-8")
    ast.parse(text, filename=str(path))
    annotations = parse_annotations(text)
    assert annotations, f"{path.name} has no annotations"
    assert not [a for a in annotations if a.alone], "alone-* annotations belong to fixture projects"
    problems = malformed(annotations)
    assert not problems, f"{path.name}: " + "\n".join(problems)


@pytest.mark.parametrize("path", RULE_FIXTURES, ids=_fixture_id)
def test_fixture_has_enough_cases_of_both_kinds(path):
    annotations = [a for a in parse_annotations(path.read_text(encoding="utf-8")) if a.value == path.stem]
    positives = [a for a in annotations if a.kind == "ruleid"]
    negatives = [a for a in annotations if a.kind == "ok"]
    assert len(annotations) >= MIN_ANNOTATIONS, f"{path.name}: only {len(annotations)} cases for {path.stem}"
    assert len(positives) >= 5 and len(negatives) >= 5, (
        f"{path.name}: {len(positives)} positive and {len(negatives)} negative cases; both kinds are needed"
    )


@pytest.mark.parametrize("path", INFERENCE_FIXTURES, ids=_fixture_id)
def test_inference_fixture_has_cases_of_both_kinds(path):
    annotations = parse_annotations(path.read_text(encoding="utf-8"))
    kinds = {a.kind for a in annotations}
    assert {"ruleid", "ok", "region"} <= kinds, f"{path.name}: annotation kinds {sorted(kinds)}"
    assert len([a for a in annotations if a.kind == "ruleid"]) >= 5
    assert len([a for a in annotations if a.kind in ("ok", "todook")]) >= 5


@pytest.mark.parametrize("path", ALL_FIXTURES, ids=_fixture_id)
def test_fixture_annotations_hold(path):
    default, with_host = results(path)
    strict = frozenset({path.stem}) if path in RULE_FIXTURES else frozenset()
    problems = check(path.name, path.read_text(encoding="utf-8"), default, with_host,
                     strict_codes=strict, strict_with_host=False)
    assert not problems, "\n".join(problems)


@pytest.mark.parametrize("path", INFERENCE_FIXTURES, ids=_fixture_id)
def test_inference_fixture_annotations_hold(path):
    """Every annotation holds and every finding (include-host ones too) is annotated."""
    default, with_host = results(path)
    problems = check(path.name, path.read_text(encoding="utf-8"), default, with_host)
    assert not problems, "\n".join(problems)


@pytest.mark.parametrize("path", ALL_FIXTURES + INFERENCE_FIXTURES, ids=_fixture_id)
def test_the_default_report_is_the_include_host_report_without_host_device_findings(path):
    default, with_host = results(path)
    def key(f):
        return f.sort_key(), f.message, f.region

    assert [key(f) for f in default] == [key(f) for f in default_view(with_host)]
    assert {f.region for f in with_host} <= {"compiled", "training", "host", "unknown"}


@pytest.mark.parametrize("path", ALL_FIXTURES + INFERENCE_FIXTURES, ids=_fixture_id)
def test_compiled_scope_rules_report_only_in_the_compiled_region(path):
    compiled_only = {code for code, rule in load_all().items() if rule.scope is Scope.COMPILED}
    _, with_host = results(path)
    outside = [(f.line, f.code, f.region) for f in with_host if f.code in compiled_only and f.region != "compiled"]
    assert not outside


# -- the harness itself: every annotation kind can fail --

_HARNESS_SOURCE = """import torch
# ruleid: DYN301
a = 1
# ok: DYN301
b = 2
# todoruleid: DYN301
c = 3
# todook: DYN202
d = 4
# region: host
# ruleid: DYN102
e = 5
# todoregion: host
# ruleid: DYN103
f = 6
# ruleid: DYN101
# ruleid: DYN101
g = 7
"""


def _finding(code, line, region="compiled"):
    return Finding(code, "m", line, 0, line, 1, region=region)


def _harness_findings():
    """Findings that satisfy every annotation of _HARNESS_SOURCE: (default, include-host)."""
    host = [_finding("DYN301", 3), _finding("DYN202", 9), _finding("DYN102", 12, "host"),
            _finding("DYN103", 15, "compiled"), _finding("DYN101", 18), _finding("DYN101", 18)]
    return [f for f in host if f.region != "host"], host


def test_harness_accepts_findings_matching_the_annotations():
    default, with_host = _harness_findings()
    assert check("h.py", _HARNESS_SOURCE, default, with_host) == []
    assert not malformed(parse_annotations(_HARNESS_SOURCE))


@pytest.mark.parametrize("change, message", [
    (lambda d, h: (d[1:], h[1:]), "expected exactly one DYN301, got 0"),
    (lambda d, h: (d + [_finding("DYN301", 5)], h + [_finding("DYN301", 5)]), "unexpected DYN301"),
    (lambda d, h: (d + [_finding("DYN301", 7)], h + [_finding("DYN301", 7)]), "promote `todoruleid` to `ruleid`"),
    (lambda d, h: ([f for f in d if f.line != 9], [f for f in h if f.line != 9]), "promote `todook` to `ok`"),
    (lambda d, h: (d, [_finding("DYN102", 12, "unknown") if f.line == 12 else f for f in h]),
     "expected region host"),
    (lambda d, h: (d + [_finding("DYN102", 12, "host")], h), "shown without include-host"),
    (lambda d, h: (d, [_finding("DYN103", 15, "host") if f.line == 15 else f for f in h]),
     "promote `todoregion` to `region`"),
    (lambda d, h: (d[:-1], h[:-1]), "expected 2 DYN101, got 1"),
    (lambda d, h: (d, h + [_finding("DYN203", 3, "host")]), "unannotated DYN203"),
])
def test_harness_reports_every_kind_of_mismatch(change, message):
    default, with_host = change(*_harness_findings())
    problems = check("h.py", _HARNESS_SOURCE, default, with_host)
    assert any(message in p for p in problems), problems


def test_harness_rejects_malformed_annotations():
    text = "# ruleid: DYN999\n# region: gpu\n# ok: DYN301\n# ruleid: DYN301\nx = 1\n"
    problems = malformed(parse_annotations(text))
    assert any("unknown code DYN999" in p for p in problems)
    assert any("unknown region gpu" in p for p in problems)
    assert any("conflicting" in p for p in problems)
    with pytest.raises(AssertionError, match="point at no code line"):
        parse_annotations("x = 1\n# ruleid: DYN301\n")


def test_file_without_torch_import_gets_no_tensor_findings():
    findings = check_source(NO_TORCH_FIXTURE.read_text(encoding="utf-8"), str(NO_TORCH_FIXTURE))
    tensor_codes = [f for f in findings if f.code[3] in "123"]
    assert not tensor_codes, [(f.line, f.code, f.message) for f in tensor_codes]


def test_the_same_patterns_are_reported_once_torch_is_imported():
    """Guards the file-level negative: it is silent because torch is missing, not because the patterns are inert."""
    text = NO_TORCH_FIXTURE.read_text(encoding="utf-8")
    with_torch = text.replace("import numpy as np\n", "import numpy as np\nimport torch\nfrom torch import nn\n", 1)
    with_torch = with_torch.replace("from flax import linen as nn\n", "", 1)
    codes = {f.code for f in check_source(with_torch, "with_torch.py")}
    assert {"DYN101", "DYN102", "DYN103", "DYN201", "DYN202", "DYN301"} <= codes, codes


# -- DYN000: cases generated here (an invalid .py file in the repo would trip other tools) --

PARSE_ERROR_CASES = {
    "python2_print": b"import torch\n\ndef f(x):\n    print 'hi'\n    return x\n",
    "unclosed_paren": b"import torch\nx = torch.zeros((3, 4)\n",
    "bad_indent": b"import torch\ndef f(x):\nreturn x\n",
    "null_byte": b"import torch\nx = 1\x00\n",
    "invalid_utf8": b"import torch\nname = '\xff\xfe'\n",
    "bad_coding_cookie": b"# -*- coding: no-such-codec -*-\nimport torch\n",
}


@pytest.mark.parametrize("case", sorted(PARSE_ERROR_CASES))
def test_unparsable_source_gives_exactly_one_parse_error(case):
    findings = check_source(PARSE_ERROR_CASES[case], f"{case}.py")
    assert [f.code for f in findings] == ["DYN000"], findings
    assert findings[0].line >= 1 and findings[0].message.strip()


def test_parse_error_message_names_the_reason():
    (finding,) = check_source(PARSE_ERROR_CASES["unclosed_paren"], "unclosed.py")
    assert "syntax" in finding.message.lower()
    (finding,) = check_source(PARSE_ERROR_CASES["invalid_utf8"], "bad.py")
    assert "decode" in finding.message.lower() or "utf" in finding.message.lower()


@pytest.mark.parametrize("source", [
    b"",
    b"\xef\xbb\xbfimport torch\nx = torch.zeros(3)\n",   # UTF-8 BOM
    b"# -*- coding: latin-1 -*-\nimport torch\nname = '\xe9'\n",
    b"import torch\r\nx = torch.zeros(3)\r\n",          # CRLF
])
def test_valid_source_gives_no_parse_error(source):
    assert [f for f in check_source(source, "ok.py") if f.code == "DYN000"] == []
