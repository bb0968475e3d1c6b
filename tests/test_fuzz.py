"""Property-based robustness: generated programs and mutated real snippets never make the checker raise,
DYN000 appears exactly when CPython rejects the code, and fixing yields code that parses and is stable."""

from __future__ import annotations

import ast
import warnings
from pathlib import Path

import hypothesmith
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from dynlint.api import check_source, split_lines

REPO = Path(__file__).parents[1]
SEED_FILES = sorted((REPO / "tests" / "fixtures").glob("*.py")) + sorted((REPO / "examples").glob("*.py"))
SEEDS = [p.read_text(encoding="utf-8") for p in SEED_FILES]

# Fragments that stress the parser and the analyzer when spliced anywhere.
FRAGMENTS = [
    "(", ")", "[", "]", ":", ",", "\n", "    ", "\t", "\\\n", "\r\n", "\r", "\x0c", "'", '"""', "#", "# noqa",
    "é", "lambda: ", "await ", "yield ", "*", "**", "@", "if ", "else ", "for i in ", "async ", "del ",
    "torch.nonzero(x)", "x[x > 0]", ".item()", ".shape[0]", "torch.unique(", "DataLoader(ds, batch_size=4)",
    "torch.compile(m, dynamic=True)", "import torch as T\n", "from torch import where\n", "x = x[mask]\n",
    "if x.sum() > 0:\n    pass\n", "def forward(self, x):\n", "class D(torch.utils.data.Dataset):\n",
]

FUZZ_SETTINGS = settings(max_examples=150, deadline=None, derandomize=True,
                         suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])


def cpython_parses(text: str) -> bool:
    try:
        with warnings.catch_warnings():  # generated code is full of "invalid decimal literal" and the like
            warnings.simplefilter("ignore", SyntaxWarning)
            warnings.simplefilter("ignore", DeprecationWarning)
            ast.parse(text)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return False
    return True


def assert_sound_findings(text: str) -> list:
    findings = check_source(text)  # must not raise, whatever the text
    line_count = len(split_lines(text))
    for finding in findings:
        assert 1 <= finding.line <= max(1, line_count + 1), finding
        assert finding.col >= 0 and (finding.end_line, finding.end_col) >= (finding.line, finding.col), finding
    dyn000 = [f for f in findings if f.code == "DYN000"]
    if cpython_parses(text):
        assert all("too deeply nested" in f.message for f in dyn000), dyn000
    else:
        assert len(dyn000) == 1 and len(findings) == 1, findings
    return findings


def assert_fix_parses_and_is_idempotent(text: str, findings: list) -> bool:
    """True when fixes were applied (and checked)."""
    fixer = pytest.importorskip("dynlint.fixer")
    if not any(fixer.is_applicable(f, True) for f in findings) or any(f.code == "DYN000" for f in findings):
        return False
    try:
        fixed, applied = fixer.fix_source(text, findings, unsafe=True)
    except fixer.FixError:
        return False  # refused, nothing applied: allowed
    assert cpython_parses(fixed), fixed
    again, applied_again = fixer.fix_source(fixed, check_source(fixed), unsafe=True)
    assert again == fixed and not applied_again
    return bool(applied)


@st.composite
def mutated_seed(draw):
    text = draw(st.sampled_from(SEEDS))
    for _ in range(draw(st.integers(1, 4))):
        kind = draw(st.sampled_from(["insert", "delete", "duplicate", "swap_lines"]))
        at = draw(st.integers(0, len(text)))
        if kind == "insert":
            text = text[:at] + draw(st.sampled_from(FRAGMENTS)) + text[at:]
        elif kind == "delete":
            text = text[:at] + text[at + draw(st.integers(1, 40)):]
        elif kind == "duplicate":
            text = text[:at] + text[at:at + draw(st.integers(1, 200))] + text[at:]
        else:
            lines = text.split("\n")
            i, j = draw(st.integers(0, len(lines) - 1)), draw(st.integers(0, len(lines) - 1))
            lines[i], lines[j] = lines[j], lines[i]
            text = "\n".join(lines)
    return text


@FUZZ_SETTINGS
@given(mutated_seed())
def test_mutated_real_snippets(text):
    findings = assert_sound_findings(text)
    assert_fix_parses_and_is_idempotent(text, findings)


@settings(max_examples=40, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.filter_too_much])
@given(hypothesmith.from_grammar())
def test_grammar_generated_programs(text):
    assert_sound_findings(text)


@settings(max_examples=40, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.filter_too_much])
@given(hypothesmith.from_node())
def test_syntax_tree_generated_programs_with_torch_in_scope(text):
    text = "import torch\nimport torch.nn.functional as F\n" + text
    assert_fix_parses_and_is_idempotent(text, assert_sound_findings(text))


@FUZZ_SETTINGS
@given(st.binary(max_size=300))
def test_arbitrary_bytes(data):
    findings = check_source(data)
    assert all(f.code != "DYN000" for f in findings) or len(findings) == 1


def test_every_seed_is_valid_checked_and_fixed_stably():
    assert len(SEEDS) >= 10
    fixed_seeds = 0
    for seed in SEEDS:
        assert cpython_parses(seed)
        fixed_seeds += assert_fix_parses_and_is_idempotent(seed, assert_sound_findings(seed))
    assert fixed_seeds >= 3  # the seeds do exercise the fixer, so the mutated ones can too
