"""Output formats, built from Finding objects directly (independent of the analyzer)."""

from __future__ import annotations

import io
import json

import pytest

from dynlint import __version__
from dynlint.codes import RULES
from dynlint.config import Settings
from dynlint.diagnostics import Applicability, Edit, Finding, Fix
from dynlint.output import FileResult, make_reporter

SAFE_FIX = Fix(Applicability.SAFE, "Replace with torch.where", (Edit(2, 4, 2, 13, "torch.where(m, x, 0)"),))
UNSAFE_FIX = Fix(Applicability.UNSAFE, "Add drop_last=True", (Edit(5, 30, 5, 30, ", drop_last=True"),))


def model_result(path="pkg/model.py", relpath="pkg/model.py"):
    return FileResult(
        path=path,
        relpath=relpath,
        findings=[
            Finding("DYN101", "boolean-mask indexing is dynamic", 2, 4, 2, 13, fix=SAFE_FIX),
            Finding("DYN102", "nonzero is dynamic", 3, 8, 3, 24),
            Finding("DYN401", "DataLoader keeps a short last batch", 5, 9, 5, 31, fix=UNSAFE_FIX),
        ],
        lines={2: "    x[x > 0].sum()", 3: "    y = torch.nonzero(x)", 5: "    loader = DataLoader(ds, batch_size=8)"},
    )


def render(fmt, results, settings=None, **options):
    stream = io.StringIO()
    reporter = make_reporter(fmt, stream, settings or Settings(root="/project"), **options)
    reporter.start()
    for result in results:
        reporter.add(result)
    reporter.finish()
    return stream.getvalue()


def test_concise_lines_have_one_based_columns_and_mark_safe_fixes():
    out = render("concise", [model_result()])
    assert out.splitlines() == [
        "pkg/model.py:2:5: DYN101 [*] boolean-mask indexing is dynamic",
        "pkg/model.py:3:9: DYN102 nonzero is dynamic",
        "pkg/model.py:5:10: DYN401 DataLoader keeps a short last batch",
        "Found 3 findings in 1 file.",
        "[*] 1 fixable with `dynlint fix` (1 more with `--unsafe-fixes`).",
    ]


def test_unsafe_fixes_flag_counts_unsafe_fixes_as_fixable():
    out = render("concise", [model_result()], unsafe_fixes=True)
    assert "pkg/model.py:5:10: DYN401 [*] DataLoader" in out
    assert out.splitlines()[-1] == "[*] 2 fixable with `dynlint fix --unsafe-fixes`."


def test_only_unsafe_fixes_summary():
    result = FileResult("a.py", "a.py", [Finding("DYN401", "m", 5, 9, 5, 31, fix=UNSAFE_FIX)])
    assert render("concise", [result]).splitlines()[-1] == "No safe fixes available (1 more with `--unsafe-fixes`)."


def test_clean_run_says_all_checks_passed_and_quiet_says_nothing():
    assert render("concise", [FileResult("a.py", "a.py", [])]) == "All checks passed!\n"
    assert render("full", []) == ""  # no file checked: nothing passed (the command warns on stderr)
    assert render("full", [FileResult("a.py", "a.py", [])], quiet=True) == ""


def test_summary_counts_files_with_findings_and_pluralises():
    one = FileResult("a.py", "a.py", [Finding("DYN301", "sync", 1, 0, 1, 6)])
    clean = FileResult("b.py", "b.py", [])
    assert render("concise", [one, clean]).splitlines()[-1] == "Found 1 finding in 1 file."
    assert render("concise", [model_result(), one]).splitlines()[-2] == "Found 4 findings in 2 files."


def test_full_format_shows_source_line_and_caret_under_the_span():
    out = render("full", [model_result()])
    block = out.split("\n\n")[1]
    assert block.splitlines() == [
        "pkg/model.py:3:9: DYN102 nonzero is dynamic",
        "  |",
        "3 |     y = torch.nonzero(x)",
        "  |         ^^^^^^^^^^^^^^^^ DYN102",
        "  |",
    ]
    first = out.split("\n\n")[0].splitlines()
    assert first[3] == "  |     ^^^^^^^^^ DYN101"
    assert first[-1] == "  = help: Replace with torch.where"
    assert out.endswith("Found 3 findings in 1 file.\n"
                        "[*] 1 fixable with `dynlint fix` (1 more with `--unsafe-fixes`).\n")


def caret_line(finding, source):
    out = render("full", [FileResult("f.py", "f.py", [finding], {finding.line: source})], quiet=True)
    lines = out.splitlines()
    return lines[2], lines[3]


def test_full_caret_aligns_after_tabs_and_wide_characters():
    shown, caret = caret_line(Finding("DYN301", "m", 1, 1, 1, 9, ), "\tx.item()")
    assert shown == "1 |     x.item()"
    assert caret == "  |     ^^^^^^^^ DYN301"
    source = "s = '日本'; x.item()"
    col = source.index("x.item()")
    shown, caret = caret_line(Finding("DYN301", "m", 1, col, 1, col + 8), source)
    # Each of the two wide characters takes two terminal columns.
    assert caret.index("^") == shown.index("x.item()") + 2
    assert caret.count("^") == len("x.item()")


def test_full_caret_for_multiline_span_runs_to_end_of_line_and_is_never_empty():
    _, caret = caret_line(Finding("DYN401", "m", 1, 4, 3, 1), "x = DataLoader(")
    assert caret == "  |     ^^^^^^^^^^^ DYN401"
    _, caret = caret_line(Finding("DYN000", "m", 1, 0, 1, 0), "def f(:")
    assert caret == "  | ^ DYN000"


def test_full_without_source_line_prints_only_the_header():
    result = FileResult("gone.py", "gone.py", [Finding("DYN000", "cannot read", 1, 0, 1, 0)])
    assert render("full", [result], quiet=True) == "gone.py:1:1: DYN000 cannot read\n\n"


def test_json_is_ruff_compatible():
    data = json.loads(render("json", [model_result("./pkg/model.py")]))
    assert len(data) == 3
    for item in data:
        # ruff's keys, plus where the code runs (dynlint.analysis.regions)
        assert set(item) == {"cell", "code", "end_location", "filename", "fix", "location", "message",
                             "noqa_row", "region", "url"}
    first = data[0]
    assert first["code"] == "DYN101"
    assert first["filename"] == "./pkg/model.py"     # the path as given
    assert first["location"] == {"row": 2, "column": 5}
    assert first["end_location"] == {"row": 2, "column": 14}
    assert first["noqa_row"] == 2
    assert first["url"] == RULES["DYN101"].url
    assert first["fix"] == {
        "applicability": "safe",
        "message": "Replace with torch.where",
        "edits": [{"content": "torch.where(m, x, 0)", "location": {"row": 2, "column": 5},
                   "end_location": {"row": 2, "column": 14}}],
    }
    assert data[1]["fix"] is None
    assert data[2]["fix"]["applicability"] == "unsafe"


def test_json_without_findings_is_an_empty_list_and_has_no_summary():
    assert json.loads(render("json", [FileResult("a.py", "a.py", [])])) == []
    assert "Found" not in render("json", [model_result()])


def test_json_streams_file_by_file():
    stream = io.StringIO()
    reporter = make_reporter("json", stream, Settings())
    reporter.start()
    reporter.add(model_result())
    assert "nonzero is dynamic" in stream.getvalue()   # written before the run finishes
    reporter.finish()


def test_github_annotations():
    out = render("github", [model_result()])
    lines = out.splitlines()
    assert len(lines) == 3
    assert lines[1] == ("::error title=dynlint (DYN102),file=pkg/model.py,line=3,col=9,endLine=3,endColumn=25"
                        "::DYN102 nonzero is dynamic")


def test_github_escapes_properties_and_message():
    result = FileResult("a,b:c.py", "a,b:c.py", [Finding("DYN301", "50% slower\nreally", 1, 0, 1, 1)])
    line = render("github", [result]).strip()
    assert "file=a%2Cb%3Ac.py," in line
    assert line.endswith("::DYN301 50%25 slower%0Areally")


def sarif(results, root="/project"):
    return json.loads(render("sarif", results, Settings(root=root)))


def test_sarif_structure():
    doc = sarif([model_result(), FileResult("pkg/clean.py", "pkg/clean.py", [])])
    assert doc["version"] == "2.1.0"
    assert doc["$schema"].endswith("sarif-2.1.0.json")
    assert len(doc["runs"]) == 1
    run = doc["runs"][0]
    driver = run["tool"]["driver"]
    assert driver["name"] == "dynlint"
    assert driver["version"] == __version__
    assert driver["informationUri"].startswith("https://")
    assert [rule["id"] for rule in driver["rules"]] == list(RULES)
    for rule in driver["rules"]:
        info = RULES[rule["id"]]
        assert rule["name"] == info.name
        assert rule["shortDescription"] == {"text": info.summary}
        assert rule["helpUri"] == info.url
    assert run["originalUriBaseIds"] == {"%SRCROOT%": {"uri": "file:///project/"}}
    results = run["results"]
    assert [r["ruleId"] for r in results] == ["DYN101", "DYN102", "DYN401"]
    second = results[1]
    assert second["level"] == "error"
    assert second["message"] == {"text": "nonzero is dynamic"}
    assert driver["rules"][second["ruleIndex"]]["id"] == "DYN102"
    location = second["locations"][0]["physicalLocation"]
    assert location["artifactLocation"] == {"uri": "pkg/model.py", "uriBaseId": "%SRCROOT%"}
    assert location["region"] == {"startLine": 3, "startColumn": 9, "endLine": 3, "endColumn": 25}
    fix = results[0]["fixes"][0]
    replacement = fix["artifactChanges"][0]["replacements"][0]
    assert replacement["insertedContent"] == {"text": "torch.where(m, x, 0)"}
    assert replacement["deletedRegion"] == {"startLine": 2, "startColumn": 5, "endLine": 2, "endColumn": 14}


def test_sarif_uris_are_relative_and_percent_encoded_or_absolute_outside_the_root():
    inside = FileResult("/project/my dir/m.py", "my dir/m.py", [Finding("DYN301", "m", 1, 0, 1, 1)])
    outside = FileResult("/elsewhere/o.py", "../elsewhere/o.py", [Finding("DYN301", "m", 1, 0, 1, 1)])
    results = sarif([inside, outside])["runs"][0]["results"]
    uris = [r["locations"][0]["physicalLocation"]["artifactLocation"] for r in results]
    assert uris == [{"uri": "my%20dir/m.py", "uriBaseId": "%SRCROOT%"}, {"uri": "file:///elsewhere/o.py"}]


def test_sarif_without_findings_is_valid():
    doc = sarif([])
    assert doc["runs"][0]["results"] == []
    assert doc["runs"][0]["tool"]["driver"]["rules"]


@pytest.mark.parametrize("fmt", ["full", "concise"])
def test_statistics_text_table(fmt):
    other = FileResult("b.py", "b.py", [Finding("DYN102", "n", 1, 0, 1, 1), Finding("DYN102", "n", 2, 0, 2, 1)])
    out = render(fmt, [model_result(), other], statistics=True)
    assert out.splitlines() == [
        "3  DYN102  [ ] nonzero",
        "1  DYN101  [*] boolean-mask-index",
        "1  DYN401  [ ] dataloader-partial-batch",
        "Found 5 findings in 2 files.",
        "[*] 1 fixable with `dynlint fix` (1 more with `--unsafe-fixes`).",
    ]


def test_statistics_json():
    table = json.loads(render("json", [model_result()], statistics=True))
    assert table[0] == {"code": "DYN101", "name": "boolean-mask-index", "count": 1, "fixable": True,
                        "fixes": {"safe": 1, "unsafe": 0}}
    assert {row["code"] for row in table} == {"DYN101", "DYN102", "DYN401"}


def test_statistics_json_says_which_fixes_exist_and_how_safe():
    """An unsafe-only fix is not `fixable` (ruff's meaning: applied with these flags), but it exists."""
    more = FileResult("b.py", "b.py", [
        Finding("DYN401", "m", 1, 0, 1, 5, fix=UNSAFE_FIX), Finding("DYN101", "m", 2, 0, 2, 5, fix=UNSAFE_FIX),
        Finding("DYN102", "n", 3, 0, 3, 5),
    ])
    rows = {row["code"]: row for row in json.loads(render("json", [model_result(), more], statistics=True))}
    assert (rows["DYN401"]["fixable"], rows["DYN401"]["fixes"]) == (False, {"safe": 0, "unsafe": 2})
    assert (rows["DYN101"]["fixable"], rows["DYN101"]["fixes"]) == (True, {"safe": 1, "unsafe": 1})
    assert (rows["DYN102"]["fixable"], rows["DYN102"]["fixes"]) == (False, {"safe": 0, "unsafe": 0})
    rows = {row["code"]: row for row in json.loads(render("json", [more], statistics=True, unsafe_fixes=True))}
    assert (rows["DYN401"]["fixable"], rows["DYN401"]["fixes"]) == (True, {"safe": 0, "unsafe": 1})


@pytest.mark.parametrize("fmt", ["github", "sarif"])
def test_statistics_has_no_github_or_sarif_form(fmt):
    with pytest.raises(ValueError, match="statistics"):
        render(fmt, [model_result()], statistics=True)


def test_statistics_without_fixes_has_no_marker_column():
    result = FileResult("a.py", "a.py", [Finding("DYN301", "s", 1, 0, 1, 1)])
    assert render("concise", [result], statistics=True, quiet=True) == "1  DYN301  host-sync\n"


def test_every_format_says_where_the_code_runs():
    finding = Finding("DYN301", "sync", 2, 4, 2, 12, region="training")
    result = FileResult("a.py", "a.py", [finding], {2: "    t.item()"})
    assert json.loads(render("json", [result]))[0]["region"] == "training"
    sarif = json.loads(render("sarif", [result]))
    assert sarif["runs"][0]["results"][0]["properties"]["region"] == "training"
    assert "= runs in: training step" in render("full", [result])
    unlabelled = FileResult("a.py", "a.py", [Finding("DYN301", "sync", 2, 4, 2, 12)], {2: "    t.item()"})
    assert json.loads(render("json", [unlabelled]))[0]["region"] is None
    assert "runs in" not in render("full", [unlabelled])
