"""Annotated rule fixtures (semgrep style) run through the checker.

In ``tests/fixtures/*.py`` a comment line ``# ruleid: DYN101`` says that the
next code line (the next line that is neither blank nor a comment) must carry
exactly one DYN101 finding; ``# ok: DYN101`` says it must carry none.  Several
annotations may be stacked above one line.  A fixture named after a rule
(``DYN101.py``) may have no *unannotated* finding of that rule anywhere, so an
unexpected false positive fails the test.  ``no_torch_import.py`` must produce
no DYN1xx-DYN3xx finding at all.  Fixtures are parsed, never executed.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass
from pathlib import Path

import pytest

from dynlint.api import check_source
from dynlint.codes import RULES

FIXTURES = Path(__file__).parent / "fixtures"
RULE_FIXTURES = sorted(p for p in FIXTURES.glob("DYN*.py") if p.stem in RULES)
NO_TORCH_FIXTURE = FIXTURES / "no_torch_import.py"
MIN_ANNOTATIONS = 15

_ANNOTATION_RE = re.compile(r"^\s*#\s*(?P<kind>ruleid|ok)\s*:\s*(?P<code>[A-Za-z]+[0-9]+)\s*$")


@dataclass(frozen=True)
class Annotation:
    kind: str        # "ruleid" or "ok"
    code: str
    comment_line: int
    target_line: int  # 1-based line the annotation is about


def parse_annotations(text: str) -> list[Annotation]:
    lines = text.splitlines()
    annotations: list[Annotation] = []
    pending: list[tuple[str, str, int]] = []
    for number, line in enumerate(lines, start=1):
        match = _ANNOTATION_RE.match(line)
        if match:
            pending.append((match.group("kind"), match.group("code").upper(), number))
            continue
        stripped = line.strip()
        if not stripped or stripped.startswith("#"):
            continue
        annotations.extend(Annotation(kind, code, at, number) for kind, code, at in pending)
        pending = []
    if pending:
        raise AssertionError(f"annotations at the end of the file point at no code line: {pending}")
    return annotations


def findings_by_line(path: Path) -> dict[tuple[int, str], list]:
    findings = check_source(path.read_text(encoding="utf-8"), str(path))
    grouped: dict[tuple[int, str], list] = {}
    for finding in findings:
        grouped.setdefault((finding.line, finding.code), []).append(finding)
    return grouped


def _fixture_id(path: Path) -> str:
    return path.name


ALL_FIXTURES = RULE_FIXTURES + [NO_TORCH_FIXTURE]


def test_every_rule_except_parse_error_has_a_fixture():
    expected = {code for code in RULES if code != "DYN000"}
    assert {p.stem for p in RULE_FIXTURES} == expected
    assert NO_TORCH_FIXTURE.is_file()


@pytest.mark.parametrize("path", ALL_FIXTURES, ids=_fixture_id)
def test_fixture_is_valid_python_with_well_formed_annotations(path):
    text = path.read_text(encoding="utf-8")
    ast.parse(text, filename=str(path))
    annotations = parse_annotations(text)
    assert annotations, f"{path.name} has no annotations"
    for ann in annotations:
        assert ann.code in RULES, f"{path.name}:{ann.comment_line}: unknown code {ann.code}"
    # the same line cannot be both expected and forbidden for one code
    kinds = {}
    for ann in annotations:
        kinds.setdefault((ann.target_line, ann.code), set()).add(ann.kind)
    conflicting = [key for key, value in kinds.items() if len(value) > 1]
    assert not conflicting, f"{path.name}: lines annotated both ruleid and ok: {conflicting}"


@pytest.mark.parametrize("path", RULE_FIXTURES, ids=_fixture_id)
def test_fixture_has_enough_cases_of_both_kinds(path):
    annotations = [a for a in parse_annotations(path.read_text(encoding="utf-8")) if a.code == path.stem]
    positives = [a for a in annotations if a.kind == "ruleid"]
    negatives = [a for a in annotations if a.kind == "ok"]
    assert len(annotations) >= MIN_ANNOTATIONS, f"{path.name}: only {len(annotations)} cases for {path.stem}"
    assert len(positives) >= 5 and len(negatives) >= 5, (
        f"{path.name}: {len(positives)} positive and {len(negatives)} negative cases; both kinds are needed"
    )


@pytest.mark.parametrize("path", ALL_FIXTURES, ids=_fixture_id)
def test_fixture_annotations_hold(path):
    text = path.read_text(encoding="utf-8")
    source_lines = text.splitlines()
    grouped = findings_by_line(path)
    problems = []
    for ann in parse_annotations(text):
        found = grouped.get((ann.target_line, ann.code), [])
        where = f"{path.name}:{ann.target_line}: {source_lines[ann.target_line - 1].strip()}"
        if ann.kind == "ruleid" and len(found) != 1:
            problems.append(f"expected exactly one {ann.code}, got {len(found)}  ({where})")
        if ann.kind == "ok" and found:
            problems.append(f"unexpected {ann.code}: {found[0].message}  ({where})")
    assert not problems, "\n".join(problems)


@pytest.mark.parametrize("path", RULE_FIXTURES, ids=_fixture_id)
def test_no_unannotated_findings_of_the_fixture_rule(path):
    text = path.read_text(encoding="utf-8")
    source_lines = text.splitlines()
    expected_lines = {a.target_line for a in parse_annotations(text) if a.kind == "ruleid" and a.code == path.stem}
    unexpected = [
        f"{path.name}:{f.line}:{f.col}: {f.code} {f.message}  ({source_lines[f.line - 1].strip()})"
        for f in check_source(text, str(path))
        if f.code == path.stem and f.line not in expected_lines
    ]
    assert not unexpected, "false positives:\n" + "\n".join(unexpected)


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
