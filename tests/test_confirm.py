"""dynlint.runtime.confirm and `dynlint confirm`: static findings matched with real breaks and recompiles."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap

import pytest

from dynlint.cli import main
from dynlint.runtime.dynamo_events import Compile, GraphBreak, guard_locations, parse_graph_break
from dynlint.runtime.confirm_session import match_findings, runtime_events

MODEL_SCRIPT = textwrap.dedent('''\
    import sys

    import torch
    import torch.nn as nn


    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.lin = nn.Linear(4, 4)

        def forward(self, x):
            y = self.lin(x)
            kept = y[y > 0]
            if y.sum() > 0:
                return kept.sum() * 2
            return kept.sum()


    net = Net()
    torch.manual_seed(0)
    for n in (3, 3, 5):
        net(torch.randn(n, 4))
    print("script args:", sys.argv[1:])
''')
_LINES = MODEL_SCRIPT.splitlines()
MASK_LINE = _LINES.index("        kept = y[y > 0]") + 1
BRANCH_LINE = _LINES.index("        if y.sum() > 0:") + 1
FORWARD_LINE = _LINES.index("    def forward(self, x):") + 1


def _write(tmp_path, text, name="train.py"):
    path = tmp_path / name
    path.write_text(text)
    return path


@pytest.fixture(autouse=True)
def _fresh_dynamo():
    torch = pytest.importorskip("torch")
    torch._dynamo.reset()
    yield
    torch._dynamo.reset()


def test_cli_confirms_mask_and_data_branch_and_misses_nothing(tmp_path, capsys):
    script = _write(tmp_path, MODEL_SCRIPT)
    code = main(["confirm", "--compile", "--output-format", "json", str(script), "--", "--epochs", "1"])
    captured = capsys.readouterr()
    assert code == 0
    data = json.loads(captured.out)
    confirmed = {(c["code"], c["line"]) for c in data["confirmed"]}
    assert confirmed == {("DYN101", MASK_LINE), ("DYN202", BRANCH_LINE)}
    assert data["missed"] == []
    assert any("Dynamic shape operator" in c["runtime"] for c in data["confirmed"] if c["line"] == MASK_LINE)
    assert any("Data-dependent branching" in c["runtime"] for c in data["confirmed"] if c["line"] == BRANCH_LINE)
    # The batch went from 3 to 5: the exact remedy names forward's argument x, dimension 0.
    remedy = next(r for r in data["remedies"] if r["function"] == "forward")
    assert (remedy["argument"], remedy["dim"], remedy["line"]) == ("x", 0, FORWARD_LINE)
    assert remedy["mark_dynamic"] == "torch._dynamo.mark_dynamic(x, 0)"
    assert remedy["dynamic_sources"] == "TORCH_COMPILE_DYNAMIC_SOURCES=\"L['x']:0\""
    # The script's own output goes to stderr in JSON mode, with its arguments after "--".
    assert "script args: ['--epochs', '1']" in captured.err


def test_cli_without_compile_observes_nothing(tmp_path, capsys):
    script = _write(tmp_path, MODEL_SCRIPT)
    assert main(["confirm", str(script)]) == 0
    out = capsys.readouterr().out
    assert "0 graph break(s), 0 recompile(s)" in out
    assert "Confirmed at runtime (0)" in out
    assert f"train.py:{MASK_LINE}: DYN101" in out and f"train.py:{BRANCH_LINE}: DYN202" in out
    assert "Missed by the static rules (0)" in out


def test_api_reports_a_break_the_rules_missed(tmp_path, monkeypatch, capsys):
    import torch

    from dynlint.runtime import confirm

    module = _write(tmp_path, textwrap.dedent('''\
        import torch


        def step(x):
            y = x * 2
            torch._dynamo.graph_break()
            return y + 1
    '''), "helper.py")
    monkeypatch.syspath_prepend(str(tmp_path))
    import helper

    with confirm(paths=[str(module)]) as session:
        torch.compile(helper.step, backend="eager")(torch.ones(3))
    result = session.report()
    assert [(m["line"], m["kind"]) for m in result.missed] == [(6, "graph break")]
    assert result.confirmed == []
    assert "Missed by the static rules (1)" in capsys.readouterr().out


def test_cli_bad_input_is_one_line(tmp_path, capsys):
    assert main(["confirm", str(tmp_path / "missing.py")]) == 2
    err = capsys.readouterr().err
    assert err.strip().count("\n") == 0 and "no such script" in err
    failing = _write(tmp_path, "raise ValueError('bad data\\nsecond line')\n", "fails.py")
    assert main(["confirm", str(failing)]) == 1
    err = capsys.readouterr().err
    assert "dynlint: script raised ValueError: bad data" in err and "Traceback" not in err


def test_confirm_help_does_not_import_torch():
    code = ("import sys\nfrom dynlint.cli import main\n"
            "try:\n    main(['confirm', '--help'])\nexcept SystemExit:\n    pass\n"
            "print('TORCH' if 'torch' in sys.modules else 'NO-TORCH')")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip().endswith("NO-TORCH")
    assert "--compile" in out and "--output-format" in out


def test_compile_top_level_modules_is_undone():
    import torch
    import torch.nn as nn

    from dynlint.runtime.confirm_session import compile_top_level_modules

    original = nn.Module.__call__
    model = nn.Sequential(nn.Linear(2, 2))
    keys = set(model.__dict__)
    undo = compile_top_level_modules()
    try:
        out = model(torch.ones(1, 2))
        assert model.__dict__.get("_compiled_call_impl") is not None
        assert model[0].__dict__.get("_compiled_call_impl") is None   # only the outermost call is compiled
    finally:
        undo()
    assert nn.Module.__call__ is original
    assert set(model.__dict__) == keys
    assert torch.equal(out, model(torch.ones(1, 2)))


# -- pure parsing and matching (no torch run) ---------------------------------------------------------------

def test_parse_graph_break_message():
    message = ("Graph break in user code at /src/m.py:12\n"
               "Graph Break Reason: Encountered graph break when attempting to trace CALL\n\n"
               "Dynamic shape operator\n  Explanation: Operator `aten.nonzero.default`'s output shape depends.\n")
    assert parse_graph_break(message) == GraphBreak("/src/m.py", 12, "Dynamic shape operator",
                                                    "Operator `aten.nonzero.default`'s output shape depends.")
    assert parse_graph_break("Graph break (user stack suppressed due to duplicate graph break) in user code at "
                             "/a b/c.py:3\nGraph Break Reason: x\n").line == 3
    assert parse_graph_break("something else") is None


def test_guard_locations_skip_torch_files():
    reason = ("0/1: 2 <= x.size()[0] <= 16  # return F.linear(input)  # nn/modules/linear.py:134 in forward "
              "(user code shown ...) and if x.shape[0] > 16:  # mp/exp/e1.py:12 in forward")
    assert guard_locations(reason) == (("mp/exp/e1.py", 12),)


def test_runtime_events_remedies_and_resume_functions(tmp_path):
    user = str(tmp_path / "m.py")
    compiles = [
        Compile("forward", user, 10),
        Compile("forward", user, 10, "0/0: tensor 'x' size mismatch at index 0. expected 3, actual 5"),
        Compile("forward", user, 10, "0/1: tensor 'x' size mismatch at index 0. expected 5, actual 7"),
        Compile("torch_dynamo_resume_in_forward_at_12", user, 12,
                "2/0: tensor '___stack0' size mismatch at index 0. expected 9, actual 7"),
        Compile("forward", user, 10, "0/2: 2 <= x.size()[0] <= 16  # if x.shape[0] > 16:  # m.py:14 in forward",
                guard_locations("# m.py:14 in forward")),
    ]
    events, remedies = runtime_events([], compiles, [user])
    assert [(e.kind, e.line) for e in events] == [("recompile", 14)]
    assert len(remedies) == 1
    assert (remedies[0].argument, remedies[0].dim, remedies[0].sizes_seen) == ("x", 0, [3, 5, 7])


def test_match_findings_confirms_size_branch_by_guard(tmp_path):
    path = _write(tmp_path, textwrap.dedent('''\
        import torch.nn as nn


        class Net(nn.Module):
            def forward(self, x):
                if x.shape[0] > 16:
                    return x * 2
                return x
    '''), "net.py")
    findings_lines = {f.line for f in __import__("dynlint.api", fromlist=["check_file"]).check_file(path)}
    compile_ = Compile("forward", str(path), 5, "0/1: 2 <= x.size()[0] <= 16  # if x.shape[0] > 16:  # net.py:6 "
                       "in forward", guard_locations("# net.py:6 in forward"))
    result = match_findings([], [compile_], [str(path)])
    if 6 in findings_lines:
        assert [(c["code"], c["line"]) for c in result.confirmed] == [("DYN201", 6)]
        assert result.missed == []
    else:  # the static rule does not flag it: then it is a rule gap, reported as missed
        assert [(m["line"], m["kind"]) for m in result.missed] == [(6, "recompile")]
