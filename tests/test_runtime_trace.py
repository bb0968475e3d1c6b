"""The trace backend on the patterns real models have: mode switches (periodic validation), a parent
with its own dynamic ops beside a dynamic child, modules called several times per step, symptoms
ranked below causes, call sites in the module's own code, custom ops, the HTML grid.

Small stand-ins for Mask R-CNN and MoE blocks; tests/test_runtime_models.py (slow) runs the real ones.
"""

from __future__ import annotations

import csv
import functools
import inspect

import pytest

torch = pytest.importorskip("torch")
nn = torch.nn

from dynlint.runtime import detect_recompilation_auto_model  # noqa: E402
from dynlint.runtime.recompile import DATA_DEPENDENT_OPS  # noqa: E402
from dynlint.runtime.report import (  # noqa: E402
    COMMENT_DYNAMIC_INPUT,
    COMMENT_MODE_SWITCH,
    COMMENT_NEW_INPUT,
)


def line_of(function, marker: str) -> int:
    lines, first = inspect.getsourcelines(inspect.unwrap(function))
    return first + next(i for i, text in enumerate(lines) if marker in text)


def run(model, inputs, backend="trace"):
    model = detect_recompilation_auto_model(model, csv_out=None, backend=backend)
    for x in inputs:
        model(x)
    report = model.analyse_dynamicity(print_tables=False)
    model.remove_hooks()
    return report


class BNNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 4, 3)
        self.bn = nn.BatchNorm2d(4)
        self.relu = nn.ReLU()
        self.drop = nn.Dropout(0.1)
        self.fc = nn.Linear(4 * 6 * 6, 2)

    def forward(self, x):
        return self.fc(self.drop(torch.flatten(self.relu(self.bn(self.conv(x))), 1)))


@pytest.mark.parametrize("backend", ["trace", "shapes"])
def test_periodic_validation_is_a_mode_switch_not_a_root_cause(backend):
    gen = torch.Generator().manual_seed(0)
    x = torch.randn(2, 3, 8, 8, generator=gen)
    model = detect_recompilation_auto_model(BNNet(), csv_out=None, backend=backend)
    for epoch in range(2):
        model.train()
        model(x).sum().backward()
        model(x).sum().backward()
        model.eval()
        with torch.no_grad():
            model(x)
    report = model.analyse_dynamicity(print_tables=False)
    model.remove_hooks()
    assert report.dynamic_modules() == []
    assert not any(e.dynamic for e in report.events)
    switches = [e for e in report.events if e.comment == COMMENT_MODE_SWITCH]
    # One row for the module that switched (the model), not one per BatchNorm/ReLU inside it.
    assert [e.path for e in switches] == ["BNNet"] and switches[0].step == 2
    assert "eval" in switches[0].cause and "no_grad" in switches[0].cause


class MaskSum(nn.Module):
    def forward(self, x):
        return x[x > 0].sum()  # CHILD-MASK


class Parent(nn.Module):
    """Dynamic itself (nonzero in its own forward) and through its child."""

    def __init__(self):
        super().__init__()
        self.child = MaskSum()

    def forward(self, x):
        total = self.child(x)
        kept = torch.nonzero(x[:, 0] > 0)  # PARENT-NONZERO
        return total + kept.shape[0]


class Top(nn.Module):
    def __init__(self):
        super().__init__()
        self.parent = Parent()

    def forward(self, x):
        return self.parent(x)


def rows_positive(count):
    x = -torch.ones(8, 4)
    x[:count, 0] = 1.0       # `count` positives: both the child's mask and the parent's nonzero change size
    return x


def test_a_parents_own_dynamic_op_is_reported_beside_its_dynamic_child():
    report = run(Top(), [rows_positive(k) for k in (1, 2, 3, 4)])
    assert set(report.dynamic_modules()) == {"Top/parent", "Top/parent/child"}
    own = [e for e in report.events if e.path == "Top/parent" and e.root]
    assert [e.step for e in own] == [1, 2, 3]          # every step where both it and its child changed
    assert all(e.cause.startswith("aten.nonzero at ") for e in own)
    assert all(e.cause.endswith(f"test_runtime_trace.py:{line_of(Parent.forward, 'PARENT-NONZERO')}") for e in own)
    # The top module has no dynamic op of its own: explained by the child, not a root cause.
    assert all(not e.root for e in report.events if e.path == "Top")


class SharedHead(nn.Module):
    """An RPN-like head shared across feature levels, and one ReLU reused three times."""

    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(4, 4, 3, padding=1)
        self.act = nn.ReLU()

    def forward(self, levels):
        return [self.act(self.act(self.act(self.conv(level)))) for level in levels]


def keep_positive(x):
    return x[x > 0]  # HELPER-MASK


class Picker(nn.Module):
    def forward(self, x):
        return keep_positive(x).sum()  # PICKER-CALL


class Pyramid(nn.Module):
    def __init__(self):
        super().__init__()
        self.head = SharedHead()
        self.pick = Picker()

    def forward(self, x):
        levels = [x, x[:, :, ::2, ::2], x[:, :, ::4, ::4]]
        outs = self.head(levels)
        return self.pick(outs[0])


def test_modules_called_several_times_per_step_do_not_top_the_table():
    gen = torch.Generator().manual_seed(0)
    report = run(Pyramid(), [torch.randn(1, 4, 16, 16, generator=gen) for _ in range(4)])
    assert report.dynamic_modules() == ["Pyramid/pick"]
    # Three level shapes in every step: compiled in step 0, never "recompiled".
    assert not any(e.path.startswith("Pyramid/head") for e in report.events)
    assert report.recompile_counts()[0][0] == "Pyramid/pick"
    # The cause names the library-style helper line and the call site in the module's own forward.
    cause = next(e.cause for e in report.events if e.root)
    assert f"test_runtime_trace.py:{line_of(keep_positive, 'HELPER-MASK')}" in cause
    assert f"(from tests/test_runtime_trace.py:{line_of(Picker.forward, 'PICKER-CALL')})" in cause


class Experts(nn.Module):
    """An MoE block with eager experts: tokens routed by a data-dependent index, one act per expert."""

    def __init__(self):
        super().__init__()
        self.router = nn.Linear(8, 4)
        self.up = nn.Linear(8, 8)
        self.act_fn = nn.SiLU()

    def forward(self, x):
        route = self.router(x).argmax(-1)
        out = torch.zeros_like(x)
        for expert in range(4):
            idx = torch.nonzero(route == expert).squeeze(1)  # ROUTE
            out[idx] = self.act_fn(self.up(x[idx]))
        return out


class MoE(nn.Module):
    def __init__(self):
        super().__init__()
        self.experts = Experts()

    def forward(self, x):
        return self.experts(x)


def test_root_causes_rank_above_their_symptoms_in_the_summary(tmp_path):
    torch.manual_seed(0)
    gen = torch.Generator().manual_seed(0)
    model = detect_recompilation_auto_model(MoE(), csv_out=str(tmp_path / "out"))
    for _ in range(6):
        model(torch.randn(96, 8, generator=gen))
    report = model.analyse_dynamicity(print_tables=False)
    model.remove_hooks()
    counts = dict(report.recompile_counts())
    assert report.dynamic_modules() == ["MoE/experts"]
    # The act and up projections recompile more often (new token counts per expert) but only as a symptom.
    assert counts["MoE/experts/act_fn"] > counts["MoE/experts"]
    assert report.recompile_counts()[0][0] == "MoE/experts"
    symptoms = [e for e in report.events if e.path in ("MoE/experts/act_fn", "MoE/experts/up")]
    assert symptoms and {e.comment for e in symptoms} == {COMMENT_DYNAMIC_INPUT}
    with open(tmp_path / "out_2.csv", newline="") as handle:
        rows = list(csv.reader(handle))
    assert rows[0] == ["Module name", "Recompile count", "Root cause"]
    assert rows[1] == ["MoE/experts", str(counts["MoE/experts"]), "yes"]
    assert all(r[2] == "" for r in rows[2:])


def test_new_model_input_is_still_a_new_input_shape():
    gen = torch.Generator().manual_seed(0)
    report = run(MoE(), [torch.randn(n, 8, generator=gen) for n in (16, 24)])
    assert {e.comment for e in report.events} == {COMMENT_NEW_INPUT}


def test_custom_data_dependent_ops_are_known():
    assert "torchvision::nms" in DATA_DEPENDENT_OPS
    assert "torchvision::roi_align" not in DATA_DEPENDENT_OPS       # static output shape
    assert {"aten::nonzero", "aten::_local_scalar_dense", "aten::unique_consecutive"} <= DATA_DEPENDENT_OPS


def test_custom_op_with_data_dependent_output_is_named():
    lib = torch.library.Library("torchvision", "FRAGMENT")
    try:
        nms = torch.ops.torchvision.nms
    except (AttributeError, RuntimeError):
        lib.define("nms(Tensor dets, Tensor scores, float iou_threshold) -> Tensor")
        lib.impl("nms", lambda dets, scores, iou: torch.nonzero(scores > iou).squeeze(1).clone(), "CPU")
        nms = torch.ops.torchvision.nms

    class Suppress(nn.Module):
        def forward(self, boxes, scores):
            return boxes[nms(boxes, scores, 0.5)].sum()  # NMS

    class Detect(nn.Module):
        def __init__(self):
            super().__init__()
            self.post = Suppress()

        def forward(self, x):
            return self.post(x, x[:, 0].sigmoid())

    gen = torch.Generator().manual_seed(0)
    model = detect_recompilation_auto_model(Detect(), csv_out=None)
    for _ in range(4):
        model(torch.randn(20, 4, generator=gen))
    report = model.analyse_dynamicity(print_tables=False)
    model.remove_hooks()
    causes = [e.cause for e in report.events if e.root]
    assert report.dynamic_modules() == ["Detect/post"]
    assert causes and all(c.startswith("torchvision.nms at ") for c in causes)


def passthrough(function):
    @functools.wraps(function)
    def wrapper(*args, **kwargs):
        return function(*args, **kwargs)
    return wrapper


class Wrapped(nn.Module):
    @passthrough
    def forward(self, x):
        return x * 2


def test_location_is_the_modules_own_forward_not_the_wrapper():
    report = run(nn.Sequential(Wrapped()), [torch.ones(2)])
    location = report.module("Sequential/0").location
    assert location == f"tests/test_runtime_trace.py:{inspect.unwrap(Wrapped.forward).__code__.co_firstlineno}"


class Probe(nn.Module):
    """Passes its input on, after a data-dependent reduction."""

    def forward(self, x):
        self.positive = x[x > 0].sum()
        return x


def test_html_collapses_input_only_modules_and_fits_the_page(tmp_path):
    gen = torch.Generator().manual_seed(0)
    model = nn.Sequential(Probe(), *[nn.Linear(4, 4) for _ in range(30)])
    report = run(model, [torch.randn(n, 4, generator=gen) for n in (7, 7, 7, 9, 9)])
    assert report.dynamic_modules() == ["Sequential/0"]
    assert len([p for p, _ in report.recompile_counts()]) == 32
    page = report.to_html(str(tmp_path / "r.html")) and (tmp_path / "r.html").read_text()
    labels = [chunk.split(">", 1)[1].split("<", 1)[0] for chunk in page.split('<text x=')[1:]
              if 'text-anchor="end"' in chunk.split(">", 1)[0]]
    # The dynamic module and its parent (recompiled because of it) get rows; 30 Linear layers share one.
    assert labels == ["Sequential/0", "Sequential", "(input shapes only)"]
    assert "30 module(s) recompiled only for new input shapes" in page
    assert "overflow-wrap: anywhere" in page and "width: 100%" in page
