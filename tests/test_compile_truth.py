"""bench/compile_truth.py: its matching and classification helpers and its score mode (no models needed)."""

import ast
import importlib.util
import json
import os
import subprocess
import sys
import textwrap

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SCRIPT = os.path.join(ROOT, "bench", "compile_truth.py")


@pytest.fixture(scope="module")
def ct():
    spec = importlib.util.spec_from_file_location("compile_truth", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    sys.modules["compile_truth"] = module       # dataclasses look the module up while the class is made
    try:
        spec.loader.exec_module(module)
    finally:
        del sys.modules["compile_truth"]
    return module


def run_script(*args, cwd=None):
    return subprocess.run([sys.executable, SCRIPT, *args], capture_output=True, text=True, cwd=cwd or ROOT,
                          timeout=120)


@pytest.mark.parametrize("reason, category", [
    ("Dynamic shape operator", "dynamic-shape operator"),
    ("Dynamic shape operator (no meta kernel)", "dynamic-shape operator"),
    ("Data-dependent branching", "data-dependent branching"),
    ("Data-dependent branching with non-constant __bool__", "data-dependent branching"),
    ("Unsupported Tensor.item() call with capture_scalar_outputs=False", "Tensor.item()"),
    ("Tensor.tolist() with non-integer tensor", "Tensor.tolist()"),
    ("Data dependent operator", "data-dependent operator"),
    ("C-implemented special method without VariableTracker model", None),
    ("Unsupported context manager", None),
    ("setattr() on unsupported type", None),
    ("", None),
])
def test_classify(ct, reason, category):
    assert ct.classify(reason) == category


def test_library_relpath(ct):
    assert ct.library_relpath("/v/lib/python3.11/site-packages/torchvision/ops/boxes.py") == "torchvision/ops/boxes.py"
    assert ct.library_relpath("/usr/lib/python3/dist-packages/timm/layers/drop.py") == "timm/layers/drop.py"
    assert ct.library_relpath("/v/lib/python3.11/site-packages/torch/nn/functional.py") is None
    assert ct.library_relpath("/home/me/project/transformers/x.py") is None


SOURCE = textwrap.dedent("""\
    def f(x, mask):
        y = torch.cat(
            [x, x],
        )
        if mask.any():
            y = y[mask]
        elif x.sum() > 0:
            y = y + 1
        else:
            y = y - 1
        for row in x.nonzero(): pass
        try:
            z = int(x.max())
        except (ValueError,
                RuntimeError):
            z = 0
        return y
    """)


@pytest.mark.parametrize("line, span", [
    (1, (1, 1)),      # the def header alone, not the function body
    (3, (2, 4)),      # inside a multi-line statement: the whole statement
    (5, (5, 5)),      # an if header: the header, not the if block
    (6, (6, 6)),
    (7, (7, 7)),      # elif header
    (8, (8, 8)),
    (9, (9, 9)),      # the `else:` line itself
    (11, (11, 11)),   # one-line for: header and body share the line
    (13, (13, 13)),
    (15, (14, 15)),   # multi-line except header
    (17, (17, 17)),
])
def test_statement_span(ct, line, span):
    assert ct.statement_span(ast.parse(SOURCE), line) == span


def finding(code, row, end_row=None):
    return {"code": code, "location": {"row": row, "column": 1}, "end_location": {"row": end_row or row, "column": 9}}


def test_covers(ct):
    assert ct.covers(finding("DYN101", 5), (5, 5))
    assert ct.covers(finding("DYN301", 3, 6), (5, 5))      # a multi-line finding reaching into the statement
    assert ct.covers(finding("DYN202", 5), (4, 6))
    assert not ct.covers(finding("DYN202", 5), (6, 6))     # a finding on the if header does not cover its body
    assert not ct.covers(finding("DYN402", 5), (5, 5))     # dynamic-input rules do not count
    assert not ct.covers(finding("DYN000", 5), (5, 5))


MESSAGE = textwrap.dedent("""\
    Graph break in user code at /v/lib/python3.11/site-packages/torch/nn/functional.py:4100
    Graph Break Reason: Encountered graph break when attempting to trace CALL

    Unsupported Tensor.item() call with capture_scalar_outputs=False
      Explanation: Dynamo does not support tracing `Tensor.item()`.

    User code traceback:
      File "/work/run.py", line 19, in <module>
        out = model(x)
      File "/v/lib/python3.11/site-packages/torchvision/models/detection/transform.py", line 176, in resize
        image = F.interpolate(image, size=size)
      File "/v/lib/python3.11/site-packages/torch/nn/functional.py", line 4100, in interpolate
        n = int(size)
    """)


def test_attribution_goes_to_the_innermost_library_frame(ct):
    frames = ct.traceback_frames(MESSAGE)
    assert frames[0] == ("/work/run.py", 19)
    assert frames[-1] == ("/v/lib/python3.11/site-packages/torch/nn/functional.py", 4100)
    header = ("/v/lib/python3.11/site-packages/torch/nn/functional.py", 4100)
    assert ct.attribute(header, frames) == ("torchvision/models/detection/transform.py", 176,
                                            "torch/nn/functional.py:4100")
    library = ("/v/lib/python3.11/site-packages/timm/layers/drop.py", 7)
    assert ct.attribute(library, frames) == ("timm/layers/drop.py", 7, "")
    assert ct.attribute(("/work/run.py", 19), [("/work/run.py", 19)]) is None


FAKE_MODULE = textwrap.dedent("""\
    import torch
    from torch import nn


    class Filter(nn.Module):
        def forward(self, scores):
            keep = torch.nonzero(scores > 0.5)
            total = scores + 1
            if scores.sum() > 0:
                total = total * 2
            return keep, total
    """)


def fake_install(tmp_path, version="0.29.1"):
    site = tmp_path / "site-packages"
    package = site / "torchvision" / "ops"
    package.mkdir(parents=True)
    (site / "torchvision" / "__init__.py").write_text("")
    (package / "__init__.py").write_text("")
    (package / "boxes.py").write_text(FAKE_MODULE)
    (site / f"torchvision-{version}.dist-info").mkdir()
    return site


def fake_truth(tmp_path, site):
    def brk(line, reason, model="m1"):
        return {"family": "detection", "model": model, "mode": "eval", "size": "1@64x64",
                "file": "torchvision/ops/boxes.py", "line": line, "reason": reason, "detail": "", "via": ""}
    truth = {
        "schema": 1, "collected": "2026-01-01T00:00:00+00:00", "command": "test",
        "versions": {"python": "3.11", "torch": "2.14.1", "torchvision": "0.29.1+cu130",
                     "transformers": "5.23.0", "timm": "1.0.31"},
        "site_packages": str(site), "classification": [], "cases": [],
        "breaks": [brk(7, "Dynamic shape operator"), brk(7, "Dynamic shape operator", model="m2"),
                   brk(9, "Data-dependent branching"), brk(10, "Unsupported Tensor.item() call")],
        # a non-data-dependent reason on a line dynlint does not flag: not truth, so not a miss
        "excluded_breaks": [brk(8, "Unsupported context manager")],
    }
    path = tmp_path / "truth.json"
    path.write_text(json.dumps(truth))
    return path


def test_score_counts_distinct_lines_and_lists_misses(tmp_path):
    site = fake_install(tmp_path)
    truth = fake_truth(tmp_path, site)
    result = run_script("--score", "--truth", str(truth))
    assert result.returncode == 0, result.stderr
    out = result.stdout
    assert "detection              2 / 3       66.7%" in out
    assert "misses (1):" in out
    assert "torchvision/ops/boxes.py:10  [Tensor.item()]" in out          # the if body is not the if header
    assert "total = total * 2" in out
    assert "torchvision/ops/boxes.py:7  [dynamic-shape operator]  <- DYN102@7" in out
    assert "torchvision/ops/boxes.py:9  [data-dependent branching]  <- DYN202@9" in out
    assert "boxes.py:8" not in out


def test_score_json_out(tmp_path):
    site = fake_install(tmp_path)
    truth = fake_truth(tmp_path, site)
    out = tmp_path / "score.json"
    assert run_script("--score", "--truth", str(truth), "--json-out", str(out)).returncode == 0
    data = json.loads(out.read_text())
    assert data["summary"]["overall"] == {"flagged": 2, "lines": 3}
    assert [(x["line"], x["flagged"]) for x in data["lines"]] == [(7, True), (9, True), (10, False)]


@pytest.mark.parametrize("make_args, message", [
    (lambda tmp, truth: ["--site-packages", str(tmp / "nowhere")], "site-packages directory not found"),
    (lambda tmp, truth: ["--site-packages", str(tmp)], "torchvision is not installed in"),
])
def test_score_bad_site_packages_is_one_line_error(tmp_path, make_args, message):
    site = fake_install(tmp_path)
    truth = fake_truth(tmp_path, site)
    result = run_script("--score", "--truth", str(truth), *make_args(tmp_path, truth))
    assert result.returncode == 2
    assert result.stdout == ""
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("compile_truth: error: ") and message in lines[0]
    assert "Traceback" not in result.stderr


def test_score_version_mismatch_is_one_line_error(tmp_path):
    site = fake_install(tmp_path, version="0.30.0")
    truth = fake_truth(tmp_path, site)
    result = run_script("--score", "--truth", str(truth))
    assert result.returncode == 2
    assert result.stderr.count("\n") == 1 and "torchvision 0.30.0" in result.stderr and "0.29.1" in result.stderr


def test_score_missing_truth_file_is_one_line_error(tmp_path):
    result = run_script("--score", "--truth", str(tmp_path / "absent.json"))
    assert result.returncode == 2
    absent = tmp_path / "absent.json"
    assert result.stderr.strip() == f"compile_truth: error: no truth file at {absent}; run --collect first"
