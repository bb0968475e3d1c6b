"""dynlint.runtime.detect_recompilation_auto_model: backends, report, root causes, safety."""

from __future__ import annotations

import csv
import gc
import json
import weakref

import pytest

torch = pytest.importorskip("torch")
nn = torch.nn

from dynlint.runtime import detect_recompilation_auto_model  # noqa: E402
from dynlint.runtime.recompile import choose_backend  # noqa: E402
from dynlint.runtime.report import (  # noqa: E402
    COMMENT_NEW_INPUT,
    COMMENT_SAME_SHAPES,
    STEP_COLUMNS,
    SUMMARY_COLUMNS,
    Event,
    RecompileReport,
    mark_explained_by_children,
)

MASK_LINE = None  # set below from the source, so the test does not hard-code line numbers


class MaskSum(nn.Module):
    """Gaudi's example: a dynamic op whose module output shape is static again."""

    def forward(self, x):
        x = x[x > 0]  # MASK
        return x.sum()


class MaskOut(nn.Module):
    def forward(self, x):
        return x[x > 0]


class SizeBranch(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(4, 4)

    def forward(self, x):
        y = self.lin(x)
        if x.shape[0] > 6:
            y = y * 2
        return y


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.pre = nn.Linear(4, 4)
        self.branch = SizeBranch()
        self.mask = MaskSum()
        self.post = nn.Linear(4, 4)

    def forward(self, x):
        y = self.branch(self.pre(x))
        return self.post(y).sum() + self.mask(y)


class StaticNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 4))
        self.branch = SizeBranch()

    def forward(self, x):
        return self.branch(self.body(x))


def _mask_line() -> int:
    import inspect

    lines, first = inspect.getsourcelines(MaskSum.forward)
    return first + next(i for i, text in enumerate(lines) if "# MASK" in text)


SIZES = [4, 4, 4, 8, 8, 4, 8, 4]


def _inputs(seed=0):
    gen = torch.Generator().manual_seed(seed)
    return [torch.randn(n, 4, generator=gen) for n in SIZES]


def _run(model, backend, inputs=None, **kwargs):
    model = detect_recompilation_auto_model(model, csv_out=None, backend=backend, **kwargs)
    outputs = [model(x) for x in (inputs if inputs is not None else _inputs())]
    report = model.analyse_dynamicity(print_tables=False)
    model.remove_hooks()
    return report, outputs


@pytest.fixture(autouse=True)
def _fresh_dynamo():
    torch._dynamo.reset()
    yield
    torch._dynamo.reset()


def _paths_with(report, predicate):
    return {e.path for e in report.events if predicate(e)}


def test_trace_blames_only_the_dynamic_submodule_even_with_static_output():
    torch.manual_seed(0)
    report, _ = _run(Net(), "trace")
    assert report.dynamic_modules() == ["Net/mask"]
    same_shape = [e for e in report.events if e.path == "Net/mask" and not e.new_in]
    assert same_shape, "the mask module must recompile on an input shape it has seen"
    assert all(e.comment == COMMENT_SAME_SHAPES and not e.new_out for e in same_shape)
    assert all("aten.index.Tensor (boolean mask)" in e.cause for e in same_shape)
    assert all(e.cause.endswith(f"test_runtime_recompile.py:{_mask_line()}") for e in same_shape)
    # Its parent recompiled too, but only because of it; static siblings only on new input shapes.
    parent = [e for e in report.events if e.path == "Net" and not e.new_in]
    assert parent and all(e.explained_by_child and not e.root for e in parent)
    assert all(e.full_comment().endswith(". Could be due to dynamic child") for e in parent)
    for sibling in ("Net/pre", "Net/post", "Net/branch", "Net/branch/lin"):
        assert all(e.comment == COMMENT_NEW_INPUT for e in report.events if e.path == sibling)


def test_static_model_with_varying_batch_shows_only_new_input_rows():
    report, _ = _run(StaticNet(), "trace")
    assert report.events
    assert {e.comment for e in report.events} == {COMMENT_NEW_INPUT}
    assert report.dynamic_modules() == []
    # Two distinct batch sizes: each module compiles once for 4 and once more for 8.
    assert dict(report.recompile_counts()) == {m.path: 1 for m in report.modules}


def test_shapes_mode_sees_dynamic_output_shapes_but_not_static_ones():
    class OutNet(nn.Module):
        def __init__(self):
            super().__init__()
            self.pre = nn.Linear(4, 4)
            self.mask = MaskOut()

        def forward(self, x):
            return self.mask(self.pre(x)).sum()

    torch.manual_seed(0)
    report, _ = _run(OutNet(), "shapes")
    assert report.dynamic_modules() == ["OutNet/mask"]
    # The documented blind spot of the cheap mode: x[x > 0].sum() has a static output shape.
    torch.manual_seed(0)
    blind, _ = _run(Net(), "shapes")
    assert "Net/mask" not in blind.dynamic_modules()


def test_gaudi_example_names_the_op_and_line():
    class InnerNet(nn.Module):
        def __init__(self):
            super().__init__()
            self.conv = nn.Conv2d(1, 8, 3, 3)

        def forward(self, x):
            x = torch.flatten(self.conv(x), 1)
            x = x[x > 0]  # GAUDI
            return x.sum()

    import inspect

    lines, first = inspect.getsourcelines(InnerNet.forward)
    line = first + next(i for i, text in enumerate(lines) if "# GAUDI" in text)
    gen = torch.Generator().manual_seed(1)
    inputs = [torch.randn(2, 1, 9, 9, generator=gen) for _ in range(6)]
    report, _ = _run(nn.Sequential(nn.ReLU(), InnerNet()), "trace", inputs)
    assert report.dynamic_modules() == ["Sequential/1"]
    causes = {e.cause for e in report.events if e.path == "Sequential/1"}
    assert len(causes) == 1
    (cause,) = causes
    assert cause.startswith("aten.index.Tensor (boolean mask) at ")
    assert cause.endswith(f"test_runtime_recompile.py:{line}")


def test_data_dependent_branch_names_local_scalar_dense():
    class DataBranch(nn.Module):
        def forward(self, x):
            if x.sum() > 0:  # BRANCH
                return x * 2
            return x - 1

    inputs = [torch.ones(3), -torch.ones(3), torch.ones(3)]
    report, _ = _run(nn.Sequential(nn.Identity(), DataBranch()), "trace", inputs)
    assert report.dynamic_modules() == ["Sequential/1"]
    (event,) = [e for e in report.events if e.path == "Sequential/1"]
    assert event.step == 1 and event.cause.startswith("aten._local_scalar_dense at ")


@pytest.mark.parametrize("backend", ["trace", "shapes"])
def test_outputs_are_bitwise_equal_with_the_detector(backend):
    torch.manual_seed(0)
    model = Net()
    plain = [model(x) for x in _inputs()]
    _, detected = _run(model, backend)
    assert all(torch.equal(a, b) for a, b in zip(plain, detected))
    # With autograd too: gradients are the same.
    x = _inputs()[3].requires_grad_()
    model(x).backward()
    grad_plain = x.grad.clone()
    x.grad = None
    model = detect_recompilation_auto_model(model, csv_out=None, backend=backend)
    model(x).backward()
    model.remove_hooks()
    assert torch.equal(grad_plain, x.grad)


class Boom(Exception):
    pass


@pytest.mark.parametrize("backend", ["trace", "shapes"])
def test_exception_in_forward_propagates_unchanged(backend):
    from torch.utils._python_dispatch import _get_current_dispatch_mode

    raised = Boom("inner failure")

    class Fails(nn.Module):
        def forward(self, x):
            if x.shape[0] == 5:
                raise raised
            return x + 1

    model = detect_recompilation_auto_model(nn.Sequential(nn.Linear(4, 4), Fails()), csv_out=None, backend=backend)
    model(torch.randn(3, 4))
    with pytest.raises(Boom) as info:
        model(torch.randn(5, 4))
    assert info.value is raised
    assert _get_current_dispatch_mode() is None          # the trace mode was exited
    assert model(torch.randn(3, 4)).shape == (3, 4)      # and the detector still works
    assert model.recompile_detector._stack == []
    model.remove_hooks()


def test_remove_hooks_restores_the_model_exactly():
    model = Net()
    own_forward = lambda x: x  # noqa: E731 - a module that already had an instance-level forward
    model.post.forward = own_forward
    before = {name: (set(m.__dict__), m.__dict__.get("forward")) for name, m in model.named_modules()}
    detect_recompilation_auto_model(model, csv_out=None)
    assert "forward" in model.pre.__dict__
    model(torch.randn(4, 4))
    model.remove_hooks()
    after = {name: (set(m.__dict__), m.__dict__.get("forward")) for name, m in model.named_modules()}
    assert after == before
    assert model.post.forward is own_forward
    assert not hasattr(model, "analyse_dynamicity")


def test_memory_holds_no_tensors_and_stays_bounded():
    model = detect_recompilation_auto_model(StaticNet(), csv_out=None)
    probes = []
    for step in range(300):
        x = torch.randn(4 if step % 2 else 8, 4)
        probes.append(weakref.ref(x))
        out = model(x)
        probes.append(weakref.ref(out))
    del x, out
    gc.collect()
    assert all(p() is None for p in probes)
    detector = model.recompile_detector
    assert max(len(s.seen_graphs) for s in detector._states) == 2
    assert max(len(s.seen_in) for s in detector._states) == 2
    report = model.analyse_dynamicity(print_tables=False)
    assert report.steps == 300
    model.remove_hooks()


def test_tables_and_csv_use_gaudis_columns_and_quote(tmp_path, capsys):
    torch.manual_seed(0)
    model = detect_recompilation_auto_model(Net(), csv_out=str(tmp_path / "out"))
    for x in _inputs():
        model(x)
    report = model.analyse_dynamicity()
    model.remove_hooks()
    printed = capsys.readouterr().out
    headers = [[c.strip() for c in line.strip("|").split("|")] for line in printed.splitlines()
               if line.startswith("| Step") or line.startswith("| Module name")]
    assert headers == [list(STEP_COLUMNS) + ["Cause"], list(SUMMARY_COLUMNS) + ["Root cause"]]
    with open(tmp_path / "out_1.csv", newline="") as handle:
        rows = list(csv.reader(handle))
    assert tuple(rows[0][:7]) == STEP_COLUMNS
    assert rows[1:] == report.step_rows()
    assert any("," in cell for row in rows[1:] for cell in row)   # e.g. "input ([8, 4])", read back intact
    with open(tmp_path / "out_2.csv", newline="") as handle:
        summary = list(csv.reader(handle))
    assert tuple(summary[0][:2]) == SUMMARY_COLUMNS
    assert [row[:2] for row in summary[1:]] == [[p, str(c)] for p, c in report.recompile_counts()]


def test_json_and_html_reports(tmp_path):
    torch.manual_seed(0)
    report, _ = _run(Net(), "trace")
    data = json.loads(report.to_json())
    assert data["dynamic_modules"] == ["Net/mask"]
    assert data["backend"] == "trace" and data["steps"] == len(SIZES)
    assert RecompileReport.from_dict(data).dynamic_modules() == ["Net/mask"]
    page = (report.to_html(str(tmp_path / "r.html")) and (tmp_path / "r.html").read_text())
    assert "<svg" in page and "Net/mask" in page and "Root cause" in page
    # self-contained: nothing to fetch
    assert "<script" not in page and "src=" not in page and "href=" not in page and "@import" not in page


def test_compile_backend_blames_the_dynamic_submodule():
    torch.manual_seed(0)
    compiled = torch.compile(Net(), backend="eager")
    assert choose_backend(compiled) == "compile"
    report, outputs = _run(compiled, None)
    assert report.backend == "compile"
    assert report.dynamic_modules() == ["Net/mask"]
    breaks = [e for e in report.events if e.comment.startswith("Graph break")]
    assert breaks and all(e.path == "Net/mask" for e in breaks)
    assert all(f"test_runtime_recompile.py:{_mask_line()}" in e.cause for e in breaks)
    # Everything else recompiled only because the batch size changed.
    others = [e for e in report.events if e.path != "Net/mask"]
    assert others and all(e.new_in and not e.dynamic for e in others)
    for sibling in ("Net/pre", "Net/post", "Net"):
        assert sibling not in report.dynamic_modules()
    assert "forward" not in compiled.__dict__ or compiled.__dict__["forward"].__name__ != "step_call"


def test_backend_choice_and_bad_arguments():
    assert choose_backend(Net()) == "trace"
    with pytest.raises(ValueError, match="unknown backend"):
        choose_backend(Net(), "xla")
    with pytest.raises(ValueError, match="torch.compile"):
        detect_recompilation_auto_model(Net(), backend="compile")
    with pytest.raises(TypeError):
        detect_recompilation_auto_model(lambda x: x)


def _event(step, path, dynamic):
    return Event(step, path, not dynamic, False, COMMENT_SAME_SHAPES if dynamic else COMMENT_NEW_INPUT, "", dynamic)


def test_root_cause_pass_looks_at_every_descendant():
    # Gaudi only looked at the last child; here the dynamic grandchild sits under the first child.
    events = [_event(1, "Net/a/deep", True), _event(1, "Net/a", True), _event(1, "Net/z", False),
              _event(1, "Net", True), _event(2, "Net", True), _event(2, "Net/ab", True)]
    mark_explained_by_children(events)
    roots = [(e.step, e.path) for e in events if e.root]
    assert roots == [(1, "Net/a/deep"), (2, "Net/ab")]
    # "Net/ab" is not under "Net/a": prefixes are matched on whole path components.
    assert not events[5].explained_by_child


def test_step_count_in_the_header_matches_the_step_numbers():
    report, _ = _run(StaticNet(), "trace", [torch.randn(n, 4) for n in (4, 4, 4, 4, 8)])
    assert report.steps == 5 and {e.step for e in report.events} == {4}   # the last of 5 steps is step 4
    title = report.format_tables().splitlines()[0]
    assert "5 steps, numbered 0-4" in title and "5 step(s)" not in title


@pytest.mark.parametrize("backend, bound", [("shapes", 9), ("trace", 11)])
def test_per_call_work_is_bounded(backend, bound):
    """The detector's per-module-call work, counted (not timed: timings are in bench/runtime_overhead.py).

    Before the cost model it built a string signature of every input and output (26 Python calls
    per module call in shapes mode, 34 in trace); now a call costs a handful: the wrapper, two
    shape keys, the bookkeeping."""
    import os
    import sys

    import dynlint.runtime.signature as signature_module

    runtime_dir = os.path.dirname(signature_module.__file__)
    model = detect_recompilation_auto_model(nn.Sequential(*[nn.Linear(4, 4) for _ in range(50)]),
                                            csv_out=None, backend=backend)
    x = torch.randn(2, 4)
    model(x)
    calls = {"runtime": 0, "signature": 0}

    def profile(frame, event, arg):
        if event == "call" and frame.f_code.co_filename.startswith(runtime_dir):
            calls["runtime"] += 1
            calls["signature"] += frame.f_code is signature_module.signature.__code__

    sys.setprofile(profile)
    try:
        model(x)
    finally:
        sys.setprofile(None)
    model.remove_hooks()
    assert calls["signature"] == 0               # no string signature unless a row is reported
    assert calls["runtime"] / 51 <= bound
