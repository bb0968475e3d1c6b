"""The flake8 plugin: same findings under DYN, on flake8's own parse tree."""

from __future__ import annotations

import ast
import subprocess
import sys

import pytest

import dynlint.analysis.walker
from dynlint import __version__
from dynlint import flake8_plugin
from dynlint.diagnostics import Finding
from dynlint.flake8_plugin import Plugin

NONZERO_SRC = "import torch\ndef f(x: torch.Tensor):\n    return torch.nonzero(x)\n"


def flake8(*args, cwd):
    return subprocess.run([sys.executable, "-m", "flake8", *args], cwd=cwd, capture_output=True, text=True,
                          timeout=120)


@pytest.fixture(autouse=True)
def fresh_settings_cache():
    flake8_plugin.project_settings.cache_clear()
    yield
    flake8_plugin.project_settings.cache_clear()


def test_plugin_is_registered_with_flake8(tmp_path):
    proc = flake8("--version", cwd=tmp_path)
    assert f"dynlint: {__version__}" in proc.stdout


def test_flake8_reports_dyn_findings(tmp_path):
    (tmp_path / "m.py").write_text(NONZERO_SRC)
    proc = flake8("--select", "DYN", "m.py", cwd=tmp_path)
    assert proc.returncode == 1, proc.stderr
    assert proc.stdout.startswith("m.py:3:12: DYN102 ")
    assert proc.stdout.count("\n") == 1


def test_flake8_handles_noqa_and_its_own_selection(tmp_path):
    (tmp_path / "m.py").write_text(NONZERO_SRC.replace("(x)\n", "(x)  # noqa: DYN102\n"))
    assert flake8("--select", "DYN", "m.py", cwd=tmp_path).stdout == ""
    (tmp_path / "m.py").write_text(NONZERO_SRC)
    assert flake8("--select", "DYN", "--extend-ignore", "DYN102", "m.py", cwd=tmp_path).stdout == ""


NOQA_FORMS = {
    "# noqa": True, "# NOQA": True, "# noqa: DYN102": True, "# noqa: DYN1": True, "# noqa:DYN10": True,
    "# noqa: DYN": True, "# noqa: E501, DYN1": True, "# noqa: DYN2": False, "# noqa: E501": False,
    "# noqa: DYN1021": False,
}


@pytest.mark.parametrize("comment", NOQA_FORMS)
def test_noqa_forms_agree_between_flake8_and_dynlint_check(tmp_path, comment):
    """A code prefix (``# noqa: DYN1``) suppresses under both, as flake8 defines it."""
    (tmp_path / "m.py").write_text(NONZERO_SRC.replace("(x)\n", f"(x)  {comment}\n"))
    under_flake8 = flake8("--select", "DYN", "m.py", cwd=tmp_path).stdout
    check = subprocess.run([sys.executable, "-m", "dynlint", "check", "--no-cache", "--output-format", "concise",
                            "-q", "m.py"], cwd=tmp_path, capture_output=True, text=True, timeout=120)
    suppressed = NOQA_FORMS[comment]
    assert (under_flake8 == "") is suppressed, under_flake8
    assert (check.stdout == "") is suppressed, check.stdout
    assert check.returncode == (0 if suppressed else 1), check.stderr


def test_flake8_reports_syntax_errors_itself_not_dyn000(tmp_path):
    (tmp_path / "bad.py").write_text("def f(:\n")
    proc = flake8("--select", "DYN,E999", "bad.py", cwd=tmp_path)
    assert "E999" in proc.stdout
    assert "DYN" not in proc.stdout


def fake_analysis(findings):
    """What the walker returns, for stand-in findings in a file that imports torch, in a function nothing in the
    run reaches (region unknown: reported by default; the module's own top-level statements are host code)."""
    from dynlint.analysis.facts import FileFacts
    from dynlint.analysis.walker import FileAnalysis

    facts = FileFacts("m")
    facts.functions["m.f"] = ((), (), False, False, False, ())  # def f(): ..., called by nothing
    return FileAnalysis(list(findings), [("m.f", None, False)] * len(findings), facts, {}, True)


def run_plugin(source, monkeypatch, findings, lines=None):
    """Run the plugin in process with a stand-in analyzer; returns (results, analyzer calls)."""
    calls = []

    def fake_analyze(tree, lines, dynamic_ops=(), **kwargs):
        calls.append((tree, list(lines), tuple(dynamic_ops)))
        return fake_analysis(findings)

    monkeypatch.setattr(dynlint.analysis.walker, "analyze_file", fake_analyze)
    tree = ast.parse(source)
    raw_lines = lines if lines is not None else source.splitlines(keepends=True)
    return list(Plugin(tree, raw_lines, "m.py").run()), calls, tree


def test_run_yields_flake8_tuples_from_flake8s_tree_without_reparsing(monkeypatch, tmp_path):
    monkeypatch.chdir(tmp_path)
    found = [Finding("DYN301", "host sync", 2, 4, 2, 12), Finding("DYN000", "too deep", 1, 0, 1, 0)]
    source = "import torch\nx = t.item()\r\n"
    tree = ast.parse(source)

    def no_parse(*args, **kwargs):
        raise AssertionError("the plugin must not parse the file again")

    calls = []
    monkeypatch.setattr(dynlint.analysis.walker, "analyze_file",
                        lambda tree, lines, dynamic_ops=(), **kw: calls.append((tree, lines)) or fake_analysis(found))
    monkeypatch.setattr(ast, "parse", no_parse)
    results = list(Plugin(tree, source.splitlines(keepends=True), "m.py").run())
    assert results == [(2, 4, "DYN301 host sync", Plugin)]   # DYN000 is flake8's E999 business
    assert calls[0][0] is tree
    assert calls[0][1] == ["import torch", "x = t.item()"]    # line endings stripped, like check_source


def test_file_exemption_comment_is_honoured(monkeypatch, tmp_path):
    monkeypatch.chdir(tmp_path)
    results, calls, _ = run_plugin("# dynlint: noqa\nimport torch\n", monkeypatch,
                                   [Finding("DYN301", "m", 2, 0, 2, 1)])
    assert results == [] and calls == []


def test_extend_dynamic_ops_come_from_the_project_config(monkeypatch, tmp_path):
    (tmp_path / "pyproject.toml").write_text("[tool.dynlint]\nextend-dynamic-ops = ['mypkg.ops.compact']\n"
                                             "select = ['DYN3']\n")
    (tmp_path / "sub").mkdir()
    monkeypatch.chdir(tmp_path / "sub")
    results, calls, _ = run_plugin("import torch\n", monkeypatch, [Finding("DYN105", "m", 1, 0, 1, 1)])
    assert calls[0][2] == ("mypkg.ops.compact",)
    assert [r[2] for r in results] == ["DYN105 m"]   # dynlint's select does not filter under flake8


def test_bad_project_config_warns_once_and_uses_defaults(monkeypatch, tmp_path, capsys):
    (tmp_path / "pyproject.toml").write_text("[tool.dynlint]\nbogus = 1\n")
    monkeypatch.chdir(tmp_path)
    for _ in range(2):
        results, calls, _ = run_plugin("import torch\n", monkeypatch, [Finding("DYN301", "m", 1, 0, 1, 1)])
        assert [r[2] for r in results] == ["DYN301 m"]
    err = capsys.readouterr().err
    assert err.count("dynlint: error: unknown key 'bogus'") == 1


SIZE_BRANCHES_SRC = """import torch
from torch import nn


class M(nn.Module):
    def forward(self, x: torch.Tensor):
        if x.shape[1] > 16:
            x = x[:, :16]
        if x.shape[0] > 16:
            x = x[:16]
        return x
"""


@pytest.mark.parametrize("args, codes", [
    (["--select", "DYN"], ["DYN201"]),                            # a prefix leaves the opt-in rules off
    (["--extend-select", "DYN204"], ["DYN204", "DYN201"]),        # named by code: on
    (["--select", "DYN201,DYN204"], ["DYN204", "DYN201"]),
    (["-j", "2", "--select", "DYN,DYN204"], ["DYN204", "DYN201"]),  # also in flake8's worker processes
    (["--select", "DYN204"], ["DYN204"]),
])
def test_opt_in_rules_run_only_when_flake8_names_their_code(tmp_path, args, codes):
    (tmp_path / "m.py").write_text(SIZE_BRANCHES_SRC)
    (tmp_path / "n.py").write_text(SIZE_BRANCHES_SRC)  # two files, so -j 2 really uses workers
    proc = flake8(*args, "m.py", "n.py", cwd=tmp_path)
    assert proc.returncode == 1, proc.stderr
    reported = [line.split()[1] for line in proc.stdout.splitlines() if line.startswith("m.py:")]
    assert reported == codes, proc.stdout
