"""The helpers behind bench/handpicked_recall.py and bench/precision_sample.py.

These need no corpus and no network: they check how a hazard line is matched
to findings, how judgments are keyed, and that the committed data files are
well formed (the scripts themselves run on the corpus, outside the test suite).
"""

from __future__ import annotations

import ast
import json
import os
import re
import sys
import textwrap

import pytest

BENCH = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "bench")
sys.path.insert(0, BENCH)

import corpus  # noqa: E402
import corpus_findings as cf  # noqa: E402
import handpicked_recall as hr  # noqa: E402
import judged_rules  # noqa: E402
import precision_sample as ps  # noqa: E402

SOURCE = textwrap.dedent('''\
    import torch

    @decorator
    def loss(x,
             lengths):
        if (x.sum() > 0 or
                lengths.any()):
            y = torch.cat([x,
                           x])
        elif x.max() > 1:
            pass
        else:
            y = x[x > 0]
        while lengths.sum() > 3:
            lengths = lengths - 1
        return y
    ''')


def _tree():
    return ast.parse(SOURCE)


@pytest.mark.parametrize("line, expected", [
    (1, (1, 1)),      # import
    (3, (3, 5)),      # decorator line: the def header with its decorators
    (5, (3, 5)),      # second line of the def header
    (6, (6, 7)),      # if test over two lines: the header only, not the block
    (7, (6, 7)),
    (8, (8, 9)),      # a call spread over two lines
    (9, (8, 9)),
    (10, (10, 10)),   # elif test: header of the nested If
    (12, (12, 12)),   # `else:` belongs to no statement
    (13, (13, 13)),
    (14, (14, 14)),   # while header
    (15, (15, 15)),
    (16, (16, 16)),
])
def test_statement_range(line, expected):
    assert cf.statement_range(_tree(), line) == expected


def _finding(line, end_line=None, code="DYN101"):
    return cf.Finding("pkg/mod.py", line, end_line or line, code, "", None)


def test_flagged_by_needs_an_overlapping_hazard_rule_finding():
    findings = [_finding(5), _finding(8, 9, "DYN402"), _finding(11, 12, "DYN301"), _finding(20, code="DYN000")]
    assert cf.flagged_by(findings, 6, 7) == []                 # nothing on 6-7
    assert cf.flagged_by(findings, 8, 9) == []                 # DYN4xx is not a hazard rule
    assert cf.flagged_by(findings, 12, 14) == [findings[2]]     # a multi-line finding overlapping the range
    assert cf.flagged_by(findings, 5, 5) == [findings[0]]
    assert cf.flagged_by(findings, 20, 20) == []                # DYN000 is not a hazard rule


def test_hidden_device_hazards_are_the_device_hazards_flagged_only_in_host_code():
    def hazard(region):
        return {"region": region, "package": "pkg", "path": "pkg/mod.py", "line": 1, "snippet": ""}

    def found(*regions):
        return [cf.Finding("pkg/mod.py", 1, 1, "DYN101", "", r) for r in regions]

    results = [(hazard("compiled"), found("host")), (hazard("training-step"), found("host", "host")),
               (hazard("compiled"), found("host", "compiled")), (hazard("compiled"), found()),
               (hazard("host"), found("host")), (hazard("compiled"), found("unknown"))]
    assert hr.hidden_device_hazards(results) == results[:2]


def test_function_hash_follows_the_function_not_the_file(tmp_path):
    first = tmp_path / "a.py"
    first.write_text(SOURCE)
    moved = tmp_path / "b.py"
    moved.write_text("# a comment that shifts every line\n\n" + SOURCE)
    edited = tmp_path / "c.py"
    edited.write_text(SOURCE.replace("lengths - 1", "lengths - 2"))
    cf.read_source.cache_clear()
    cf.parse.cache_clear()
    base = cf.function_hash(str(first), 13)
    assert cf.function_hash(str(moved), 15) == base            # same function, other lines
    assert cf.function_hash(str(edited), 13) != base           # the function changed: judge again
    assert cf.enclosing_function_name(str(first), 13) == "loss"
    assert cf.enclosing_function_name(str(first), 1) == "<module>"


def test_judgment_keys_round_trip(tmp_path):
    row = {"package": "monai", "relpath": "m/x.py", "code": "DYN101", "line_text": "y = x[m]",
           "function_hash": "abc", "line": 3, "key": ps.key_of("monai", "m/x.py", "DYN101", "y = x[m]", "abc") + "|#2"}
    item = ps.stub(row)
    assert item["occurrence"] == 2 and item["verdict"] == "?"
    item["verdict"] = "hazard"
    path = tmp_path / "judgments.json"
    path.write_text(json.dumps({"judgments": [item]}))
    assert list(ps.load_judgments(str(path))) == [row["key"]]
    item["verdict"] = "maybe"
    path.write_text(json.dumps({"judgments": [item]}))
    with pytest.raises(SystemExit):
        ps.load_judgments(str(path))


def test_sheet_is_never_written_into_the_corpus(tmp_path):
    package_dir = tmp_path / "pkg-1.0"
    package_dir.mkdir()
    with pytest.raises(SystemExit):
        ps.write_sheet(str(package_dir / "sheet.md"), [], {}, {"pkg": str(package_dir)})
    with pytest.raises(SystemExit):
        ps.write_sheet(str(tmp_path / "module.py"), [], {}, {"pkg": str(package_dir)})
    ps.write_sheet(str(tmp_path / "out" / "sheet.md"), [], {}, {"pkg": str(package_dir)})
    assert (tmp_path / "out" / "sheet.md").read_text().startswith("# Precision sample: 0 findings")


def test_corpus_split():
    groups = [p.group for p in corpus.PACKAGES]
    # a held-out package becomes dev once its misses are read (torchaudio did); at least 5 stay held out
    assert groups.count("dev") >= 3 and groups.count("held-out") >= 5
    # one entry per project, however it is spelled (PEP 503: open_clip_torch is open-clip-torch)
    assert len({re.sub(r"[-_.]+", "-", p.name).lower() for p in corpus.PACKAGES}) == len(corpus.PACKAGES)
    assert all(p.version and p.version[0].isdigit() for p in corpus.PACKAGES)


def test_handpicked_hazards_file_is_well_formed():
    with open(hr.HAZARDS, encoding="utf-8") as handle:
        document = json.load(handle)
    hazards = document["hazards"]
    pinned = {p.name: p for p in corpus.PACKAGES}
    seen = set()
    for hazard in hazards:
        package = pinned[hazard["package"]]
        assert hazard["version"] == package.version and hazard["group"] == package.group
        assert hazard["category"] in hr.CATEGORIES and hazard["region"] in hr.REGIONS
        assert hazard["snippet"] and hazard["why"] and hazard["line"] > 0
        key = (hazard["package"], hazard["path"], hazard["line"])
        assert key not in seen
        seen.add(key)
    # every listed hazard sits in a file the method says was read, with the stated count
    for name, files in document["files_read"].items():
        for entry in files:
            count = sum(1 for h in hazards if h["package"] == name and h["path"] == entry["path"])
            assert count == entry["hazards"], (name, entry)
    held_out = [h for h in hazards if h["group"] == "held-out"]
    # the held-out set is re-drawn when it becomes dev; a set's pools can be small (the fifth held 37)
    assert len(held_out) >= 30 and len(hazards) - len(held_out) >= 40


def test_precision_judgments_file_is_well_formed():
    judgments = ps.load_judgments()
    assert len(judgments) >= 100
    # judged while held out; a package may have moved to dev since (its judgments stay on file)
    assert {j["package"] for j in judgments.values()} <= {p.name for p in corpus.PACKAGES}
    assert len({j["package"] for j in judgments.values()}) >= 5


def test_judged_rules_counts_judgments_still_reported_and_gone(tmp_path):
    (tmp_path / "model.py").write_text(textwrap.dedent("""\
        import torch
        from torch import nn


        class Net(nn.Module):
            def forward(self, x: torch.Tensor):
                y = x[x > 0]
                return y.sum()
        """))
    path = str(tmp_path / "model.py")
    fhash = cf.function_hash(path, 7)
    reported = {"package": "p", "relpath": "model.py", "code": "DYN101", "line_text": "y = x[x > 0]",
                "function_hash": fhash, "verdict": "hazard"}
    # judged once, not reported any more (the line reads otherwise now): counted as gone
    stale = dict(reported, line_text="y = x[x > 1]", verdict="false-alarm")
    items = [(ps.key_of("p", i["relpath"], i["code"], i["line_text"], i["function_hash"]), i)
             for i in (reported, stale)]
    still, gone = {}, {}
    judged_rules.tally("p", str(tmp_path), items, still, gone)
    assert still == {"DYN101": {"hazard": 1}}
    assert gone == {"DYN101": {"false-alarm": 1}}
