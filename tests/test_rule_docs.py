"""Rule documents (rules/CODE.md), `dynlint rule`, and the documents' presence in the built wheel."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from dynlint.api import check_source
from dynlint.config import Settings
from dynlint.cli import main
from dynlint.codes import RULES
from dynlint.ruledocs import REQUIRED_SECTIONS, load_doc, parse_doc, resolve_code, rules_dir

REPO = Path(__file__).resolve().parent.parent
CODES = sorted(RULES)

# the examples are checked with every rule on, the opt-in ones (DYN204, DYN205, DYN501) too
EVERY_RULE = Settings(select=frozenset(RULES))


# -- the documents ------------------------------------------------------------------------------

def test_rules_directory_holds_exactly_one_document_per_code():
    names = sorted(entry.name for entry in rules_dir().iterdir() if entry.name.endswith(".md"))
    assert names == [f"{code}.md" for code in CODES]


@pytest.mark.parametrize("code", CODES)
def test_document_has_title_summary_and_required_sections(code):
    doc = load_doc(code)
    info = RULES[code]
    assert doc.text.splitlines()[0] == f"# {code}: {info.name}"
    assert (doc.code, doc.name) == (code, info.name)
    assert doc.summary == info.summary
    assert "\n" not in info.summary and info.summary.strip() == info.summary
    missing = [s for s in REQUIRED_SECTIONS if s not in doc.sections]
    assert not missing, f"{code}.md lacks sections {missing}"
    for section in REQUIRED_SECTIONS:
        assert doc.sections[section].strip(), f"{code}.md: empty section {section!r}"
    assert "https://" in doc.sections["References"]
    assert doc.example and doc.use_instead, f"{code}.md needs a python block in Example and in Use instead"


# what each registered scope means for the report (dynlint.api.finish), in the words its docs must use
SCOPE_PHRASES = {
    "device": "reported only with `--include-host`",
    "step": "Only in the compiled step and the training step",
    "compiled": "Only in the compiled step (",
    "anywhere": "Everywhere, host code included",
}


@pytest.mark.parametrize("code", [c for c in CODES if c != "DYN000"])
def test_where_it_reports_states_the_registered_scope(code):
    section = load_doc(code).sections["Where it reports"]
    scope = RULES[code].scope
    assert SCOPE_PHRASES[scope] in section, f"{code} is registered with scope {scope!r}"
    for other, phrase in SCOPE_PHRASES.items():
        if other != scope and phrase not in SCOPE_PHRASES[scope]:
            assert phrase not in section, f"{code}.md describes scope {other!r} but is registered {scope!r}"


@pytest.mark.parametrize("code", [c for c in CODES if c != "DYN000"])
def test_example_imports_torch_and_use_instead_is_valid_python(code):
    doc = load_doc(code)
    for block in (doc.example, doc.use_instead):
        compile(block, f"{code}.md", "exec")
        assert "import torch" in block or "from torch" in block


@pytest.mark.parametrize("code", CODES)
def test_example_is_flagged_with_its_code(code):
    doc = load_doc(code)
    findings = check_source(doc.example, f"{code}_example.py", settings=EVERY_RULE)
    assert code in {f.code for f in findings}, (code, [(f.line, f.code, f.message) for f in findings])


@pytest.mark.parametrize("code", CODES)
def test_use_instead_is_clean_for_every_rule(code):
    doc = load_doc(code)
    findings = check_source(doc.use_instead, f"{code}_use_instead.py", settings=EVERY_RULE)
    assert findings == [], [(f.line, f.code, f.message) for f in findings]


@pytest.mark.parametrize("code", ["DYN401", "DYN402"])
def test_input_rules_point_to_the_bucketing_tools(code):
    text = load_doc(code).text
    for pointer in ("dynlint.runtime.buckets", "dynlint buckets", "data_dynamicity"):
        assert pointer in text, f"{code}.md should mention {pointer}"


def test_dynamic_output_op_documents_its_option():
    assert "extend-dynamic-ops" in load_doc("DYN105").sections.get("Options", "")


def test_fix_safety_sections_state_the_applicability_issue_3_requires():
    safety = {code: load_doc(code).sections["Fix safety"].lower() for code in CODES}
    assert "unsafe" in safety["DYN101"] and "safe" in safety["DYN101"]
    assert "mean" in safety["DYN101"] and "max" in safety["DYN101"]
    assert "drop_last=true" in safety["DYN401"] and "unsafe" in safety["DYN401"]
    assert "unsafe" in safety["DYN501"]
    for no_fix in ("DYN103", "DYN105", "DYN301", "DYN302"):
        assert safety[no_fix].startswith("no fix"), no_fix


def test_parse_doc_rejects_a_document_without_a_title():
    from dynlint.ruledocs import RuleDocError

    with pytest.raises(RuleDocError):
        parse_doc("DYN101 boolean-mask-index\n\nsummary\n")


def test_resolve_code_accepts_codes_in_any_case_and_names():
    assert resolve_code("dyn101").code == "DYN101"
    assert resolve_code("boolean-mask-index").code == "DYN101"
    assert resolve_code("DYN999") is None


# -- `dynlint rule` -----------------------------------------------------------------------------

def test_rule_prints_the_document(capsys):
    assert main(["rule", "DYN101"]) == 0
    out = capsys.readouterr().out
    assert out == load_doc("DYN101").text
    assert out.startswith("# DYN101: boolean-mask-index\n")
    assert "## Why is this bad?" in out


@pytest.mark.parametrize("spelling", ["dyn202", "Dyn202", "data-dependent-branch"])
def test_rule_accepts_lowercase_codes_and_names(capsys, spelling):
    assert main(["rule", spelling]) == 0
    assert capsys.readouterr().out.startswith("# DYN202: data-dependent-branch\n")


def test_rule_all_lists_every_rule_aligned(capsys):
    assert main(["rule", "--all"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert [line.split()[0] for line in lines] == list(RULES)
    summary_columns = set()
    for line, info in zip(lines, RULES.values()):
        assert line.split()[1] == info.name
        assert line.removesuffix("  (opt-in)").endswith(info.summary)
        summary_columns.add(line.index(info.summary))
    assert len(summary_columns) == 1, "summaries should start in one aligned column"


def test_rule_json_for_one_rule(capsys):
    assert main(["rule", "DYN105", "--output-format", "json"]) == 0
    record = json.loads(capsys.readouterr().out)
    assert record["code"] == "DYN105"
    assert record["name"] == "dynamic-output-op"
    assert record["summary"] == RULES["DYN105"].summary
    assert record["scope"] == "device"
    assert record["explanation"].startswith("# DYN105")


def test_rule_json_for_all_rules(capsys):
    assert main(["rule", "--all", "--output-format", "json"]) == 0
    records = json.loads(capsys.readouterr().out)
    assert [r["code"] for r in records] == list(RULES)
    assert all(r["explanation"] and r["summary"] == RULES[r["code"]].summary for r in records)
    assert [r["code"] for r in records if not r["default"]] == ["DYN204", "DYN205", "DYN501"]


def test_rule_list_marks_the_opt_in_rules(capsys):
    assert main(["rule", "--all"]) == 0
    lines = {line.split()[0]: line for line in capsys.readouterr().out.splitlines()}
    assert lines["DYN204"].endswith("(opt-in)") and lines["DYN205"].endswith("(opt-in)")
    assert lines["DYN501"].endswith("(opt-in)")
    assert not lines["DYN201"].endswith("(opt-in)")


@pytest.mark.parametrize("argv", [["rule", "DYN999"], ["rule", "no-such-rule"], ["rule"], ["rule", "DYN101", "--all"]])
def test_rule_usage_errors_exit_2_with_one_line(capsys, argv):
    assert main(argv) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    err_lines = captured.err.strip().splitlines()
    assert len(err_lines) == 1 and err_lines[0].startswith("dynlint: error:")
    assert "Traceback" not in captured.err


def test_python_dash_m_dynlint_rule_in_a_subprocess():
    result = subprocess.run([sys.executable, "-m", "dynlint", "rule", "DYN101"],
                            capture_output=True, text=True, timeout=60, cwd=REPO)
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith("# DYN101: boolean-mask-index")
    unknown = subprocess.run([sys.executable, "-m", "dynlint", "rule", "DYN999"],
                             capture_output=True, text=True, timeout=60, cwd=REPO)
    assert unknown.returncode == 2
    assert unknown.stderr.strip().startswith("dynlint: error:") and "Traceback" not in unknown.stderr


# -- the built wheel ----------------------------------------------------------------------------

def _build_wheel(outdir: Path) -> Path:
    """Build from a copy of the working tree's non-ignored files, so the shared tree gets no build artefacts."""
    src = outdir / "src"
    listed = ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"]
    tracked = subprocess.run(listed, cwd=REPO, capture_output=True, check=True).stdout
    for rel in filter(None, tracked.decode().split("\0")):
        path = REPO / rel
        if path.is_file():
            (src / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(path, src / rel)
    dist = outdir / "dist"
    env = {**os.environ, "PIP_NO_INPUT": "1"}
    command = [sys.executable, "-m", "build", "--wheel", "--no-isolation", "--outdir", str(dist), str(src)]
    result = subprocess.run(command, capture_output=True, text=True, timeout=300, env=env)
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    (wheel,) = dist.glob("dynlint-*.whl")
    return wheel


@pytest.mark.wheel
def test_built_wheel_ships_every_rule_document_and_rule_works_from_it(tmp_path):
    wheel = _build_wheel(tmp_path)
    with zipfile.ZipFile(wheel) as archive:
        names = set(archive.namelist())
        for code in CODES:
            member = f"dynlint/rules/{code}.md"
            assert member in names, f"{member} missing from {wheel.name}"
            shipped = archive.read(member).decode("utf-8")
            assert shipped == (REPO / "rules" / f"{code}.md").read_text(encoding="utf-8")
        archive.extractall(tmp_path / "installed")
    # run `dynlint rule` from the unpacked wheel, not from the checkout
    env = {**os.environ, "PYTHONPATH": str(tmp_path / "installed")}
    result = subprocess.run([sys.executable, "-c", (
        "import dynlint, sys; from dynlint.ruledocs import rules_dir; "
        "print(dynlint.__file__); print(rules_dir()); "
        "sys.exit(__import__('dynlint.cli', fromlist=['main']).main(['rule', 'DYN402']))")],
        capture_output=True, text=True, timeout=60, env=env, cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    module_file, docs_dir, *doc = result.stdout.splitlines()
    assert module_file.startswith(str(tmp_path / "installed"))
    assert docs_dir.startswith(str(tmp_path / "installed"))
    assert doc[0] == "# DYN402: pad-to-longest"
