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


def test_cli_without_compile_says_nothing_was_compiled_and_suggests_compile(tmp_path, capsys):
    script = _write(tmp_path, MODEL_SCRIPT)
    assert main(["confirm", str(script)]) == 0
    out = capsys.readouterr().out
    assert "0 graph break(s), 0 recompile(s)" in out
    assert "Nothing was compiled in this run" in out and "--compile" in out
    assert "Confirmed at runtime (0)" in out
    # The run proves nothing about the findings: listed as not judged, never as "not observed".
    assert "Not observed in this run" not in out and "Not judged (nothing was compiled) (2):" in out
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


# -- the lint half honours the project's settings; failed runs; followers of a confirmed break --------------

def _project(tmp_path, table: str):
    (tmp_path / "pyproject.toml").write_text("[tool.dynlint]\n" + textwrap.dedent(table))


def test_per_file_ignores_apply_and_a_silenced_line_is_not_a_rule_gap(tmp_path, capsys):
    _project(tmp_path, """
        [tool.dynlint.per-file-ignores]
        "train.py" = ["DYN202"]
    """)
    script = _write(tmp_path, MODEL_SCRIPT)
    assert main(["confirm", "--compile", "--output-format", "json", str(script)]) == 0
    data = json.loads(capsys.readouterr().out)
    codes = {c["code"] for c in data["confirmed"]} | {n["code"] for n in data["not_observed"]}
    assert "DYN202" not in codes and "DYN101" in codes
    assert data["missed"] == []     # the branch broke the graph, but the project chose not to hear about it


HELPER_LIB = textwrap.dedent('''\
    import torch


    @torch.compiler.disable
    def my_op(x):
        return x[x > 0]
''')
EXTEND_SCRIPT = textwrap.dedent('''\
    import torch
    import torch.nn as nn

    import helperlib


    class Net(nn.Module):
        def forward(self, x):
            kept = helperlib.my_op(x)
            return kept.sum()


    net = Net()
    for n in (3, 3):
        net(torch.randn(n, 4))
''')


def test_extend_dynamic_ops_apply(tmp_path, capsys):
    _project(tmp_path, """
        extend-dynamic-ops = ["helperlib.my_op"]
    """)
    _write(tmp_path, HELPER_LIB, "helperlib.py")
    script = _write(tmp_path, EXTEND_SCRIPT)
    call_line = EXTEND_SCRIPT.splitlines().index("        kept = helperlib.my_op(x)") + 1
    assert main(["confirm", "--compile", "--output-format", "json", str(script)]) == 0
    data = json.loads(capsys.readouterr().out)
    assert [(c["code"], c["line"]) for c in data["confirmed"]] == [("DYN105", call_line)]
    assert not [m for m in data["missed"] if m["line"] == call_line]


def test_a_script_that_dies_on_import_clears_nothing(tmp_path, capsys):
    script = _write(tmp_path, "import not_a_module_anywhere_xyz\n" + MODEL_SCRIPT)
    assert main(["confirm", "--compile", str(script)]) == 1
    captured = capsys.readouterr()
    out = captured.out
    assert "The run failed (script raised ModuleNotFoundError" in out and "none is cleared" in out
    assert "Not observed in this run" not in out
    assert "Not judged (the run failed) (2):" in out
    assert "dynlint: script raised ModuleNotFoundError" in captured.err
    import torch

    torch._dynamo.reset()
    assert main(["confirm", "--compile", "--output-format", "json", str(script)]) == 1
    data = json.loads(capsys.readouterr().out)
    assert data["status"] == "failed" and data["not_observed"] == [] and len(data["not_judged"]) == 2


def test_api_session_records_an_exception_as_a_failed_run(tmp_path):
    from dynlint.runtime import confirm

    path = _write(tmp_path, MODEL_SCRIPT.split("net = Net()")[0], "model.py")
    with pytest.raises(RuntimeError):
        with confirm(paths=[str(path)]) as session:
            raise RuntimeError("data loader crashed")
    result = session.result()
    assert result.status == "failed" and "RuntimeError: data loader crashed" in result.failure
    assert result.not_observed == [] and {n["code"] for n in result.not_judged} == {"DYN101", "DYN202"}


FOLLOWER_SCRIPT = textwrap.dedent('''\
    import torch
    import torch.nn as nn


    class Net(nn.Module):
        def forward(self, x):
            keep = x > 0
            n = int(keep.sum())
            return x * n


    net = Net()
    for k in (2, 4, 5, 4, 6):
        x = -torch.ones(8)
        x[:k] = 1.0
        net(x)
''')


def test_a_recompile_after_a_confirmed_break_is_not_missed_and_its_guard_shows_once(tmp_path, capsys):
    import torch

    torch._dynamo.variables.tensor.TensorVariable._warn_capture_scalar_outputs.cache_clear()
    script = _write(tmp_path, FOLLOWER_SCRIPT)
    int_line = FOLLOWER_SCRIPT.splitlines().index("        n = int(keep.sum())") + 1
    assert main(["confirm", "--compile", str(script)]) == 0
    captured = capsys.readouterr()
    out = captured.out
    assert "Missed by the static rules (0)" in out
    confirmed = out.split("Confirmed at runtime")[1].split("Not observed")[0]
    assert f"train.py:{int_line}: DYN301" in confirmed
    assert "recompile: forward(): guard ___stack0 == " in confirmed       # the follower, with its guard once
    assert "User stack trace" not in out and out.count("___stack0 ==") == 1
    # torch's own graph-break warnings do not clutter the output
    assert "Graph break from `Tensor.item()`" not in captured.err and "consider setting" not in captured.err


LOADER_SCRIPT = textwrap.dedent('''\
    import torch
    import torch.nn as nn
    from torch.utils.data import DataLoader, TensorDataset


    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.lin = nn.Linear(4, 2)

        def forward(self, x):
            return self.lin(x)


    loader = DataLoader(TensorDataset(torch.randn(10, 4)), batch_size=4)
    net = torch.compile(Net(), backend="eager")
    for (batch,) in loader:
        net(batch)
''')


def test_short_last_batch_recompile_is_linked_to_the_dataloader_finding(tmp_path, capsys):
    script = _write(tmp_path, LOADER_SCRIPT)
    loader_line = LOADER_SCRIPT.splitlines().index(
        "loader = DataLoader(TensorDataset(torch.randn(10, 4)), batch_size=4)") + 1
    assert main(["confirm", "--output-format", "json", str(script)]) == 0
    data = json.loads(capsys.readouterr().out)
    (remedy,) = [r for r in data["remedies"] if r["dim"] == 0]
    assert remedy["sizes_seen"] == [4, 2]
    assert remedy["short_last_batch"] == [f"train.py:{loader_line}"] or \
        remedy["short_last_batch"][0].endswith(f"train.py:{loader_line}")
    assert [(c["code"], c["line"]) for c in data["confirmed"]] == [("DYN401", loader_line)]
    import torch

    torch._dynamo.reset()
    assert main(["confirm", str(script)]) == 0
    out = capsys.readouterr().out
    assert f"Likely the short last batch of the DataLoader at" in out and "drop_last=True" in out
