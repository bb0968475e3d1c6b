"""The compile backend on the shapes real models have: breaks in helpers, methods and wrapped forwards,
keyword inputs, data-dependent sizes after a break, mode switches, a parent with its own dynamic ops.

Each model here is a small stand-in for what Mask R-CNN (torchvision) and transformers models do;
tests/test_runtime_models.py (slow) runs the real ones.
"""

from __future__ import annotations

import functools
import inspect

import pytest

torch = pytest.importorskip("torch")
nn = torch.nn

from dynlint.runtime import detect_recompilation_auto_model  # noqa: E402
from dynlint.runtime.dynamo_events import parse_guard_failures  # noqa: E402
from dynlint.runtime.report import (  # noqa: E402
    COMMENT_DYNAMIC_INPUT,
    COMMENT_MODE_SWITCH,
    COMMENT_NEW_INPUT,
)


@pytest.fixture(autouse=True)
def _fresh_dynamo():
    torch._dynamo.reset()
    yield
    torch._dynamo.reset()


def line_of(function, marker: str) -> int:
    lines, first = inspect.getsourcelines(inspect.unwrap(function))
    return first + next(i for i, text in enumerate(lines) if marker in text)


def passthrough(function):
    """A decorator like the ones transformers puts on forward (output capturing, kwargs checks)."""
    @functools.wraps(function)
    def wrapper(*args, **kwargs):
        return function(*args, **kwargs)
    return wrapper


def keep_positive(y):
    return y[y > 0]  # HELPER-BREAK


class Head(nn.Module):
    """Breaks in a helper function, in a method called from forward, under a wrapped forward."""

    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(4, 4)

    @passthrough
    def forward(self, x):
        y = self.lin(x)
        return keep_positive(y).sum() + self.postprocess(y)  # HEAD-CALL

    def postprocess(self, y):
        return y.nonzero().shape[0] * 1.0  # METHOD-BREAK


class Body(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(4, 4)

    def forward(self, x):
        return torch.relu(self.lin(x))


class Detector(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = Body()
        self.head = Head()

    def forward(self, x):
        return self.head(self.body(x))


def run(model, inputs, **call_kwargs):
    model = detect_recompilation_auto_model(model, csv_out=None)
    outputs = []
    for x in inputs:
        outputs.append(model(**x) if isinstance(x, dict) else model(x))
    report = model.analyse_dynamicity(print_tables=False)
    model.remove_hooks()
    return report, outputs


def test_breaks_in_helpers_methods_and_wrapped_forwards_go_to_the_running_module():
    gen = torch.Generator().manual_seed(0)
    inputs = [torch.randn(n, 4, generator=gen) for n in (6, 6, 6, 9, 6)]
    report, _ = run(torch.compile(Detector(), backend="eager"), inputs)
    assert report.backend == "compile"
    breaks = [e for e in report.events if e.comment.startswith("Graph break")]
    assert breaks
    assert {e.path for e in breaks} == {"Detector/head"}          # never the root, never the static body
    on_head = [e for e in report.events if e.path == "Detector/head"]
    assert len(on_head) >= 0.9 * len([e for e in report.events if e.dynamic])
    assert report.dynamic_modules() == ["Detector/head"]
    causes = " ".join(e.cause for e in breaks)
    assert f"test_runtime_compile.py:{line_of(keep_positive, 'HELPER-BREAK')}" in causes
    assert f"test_runtime_compile.py:{line_of(Head.postprocess, 'METHOD-BREAK')}" in causes
    # The helper's break also names the call site in the module's own forward.
    assert f"(from tests/test_runtime_compile.py:{line_of(Head.forward, 'HEAD-CALL')})" in causes \
        or f"test_runtime_compile.py:{line_of(Head.forward, 'HEAD-CALL')})" in causes
    # Location is the module's own forward, not the decorator's wrapper.
    head = report.module("Detector/head")
    assert head.location.endswith(f"test_runtime_compile.py:{inspect.unwrap(Head.forward).__code__.co_firstlineno}")


def test_outputs_equal_and_no_extra_recompiles_with_the_detector():
    gen = torch.Generator().manual_seed(1)
    inputs = [torch.randn(n, 4, generator=gen) for n in (6, 6, 9, 6)]
    torch.manual_seed(0)
    model = Detector()
    torch._dynamo.utils.clear_compilation_metrics()
    plain = torch.compile(model, backend="eager")
    expected = [plain(x) for x in inputs]
    baseline = [(r.co_name, bool(r.recompile_reason)) for r in torch._dynamo.utils.get_compilation_metrics()]
    torch._dynamo.reset()
    torch._dynamo.utils.clear_compilation_metrics()
    report, outputs = run(torch.compile(model, backend="eager"), inputs)
    observed = [(r.co_name, bool(r.recompile_reason)) for r in torch._dynamo.utils.get_compilation_metrics()]
    assert all(torch.equal(a, b) for a, b in zip(expected, outputs))
    assert sorted(observed) == sorted(baseline)      # the hooks add no guard and no compile


def test_guard_reason_with_quoted_name_parses():
    (failure,) = parse_guard_failures("0/0: tensor 'kwargs['input_ids']' size mismatch at index 1. "
                                      "expected 16, actual 24")
    assert (failure.kind, failure.source, failure.dim, failure.expected, failure.actual) == \
        ("size", "kwargs['input_ids']", 1, "16", "24")
    (failure,) = parse_guard_failures("3/1: tensor 'L['self']._modules['a'].weight' size mismatch at index 0. "
                                      "expected 2, actual 3")
    assert failure.source == "L['self']._modules['a'].weight" and failure.kind == "size"
    (failure,) = parse_guard_failures("6/0: tensor '___stack0' size mismatch at index 0. expected 3, actual 6")
    assert failure.intermediate
    assert [f.kind for f in parse_guard_failures("0/0: GLOBAL_STATE changed: grad_mode ")] == ["mode"]
    assert [f.kind for f in parse_guard_failures("0/1: fn._modules['1'].training == True  # if self.training")] \
        == ["mode"]
    assert [f.kind for f in parse_guard_failures("38/0: ___stack0 == 171  # h = int(box[3])")] == ["value"]
    assert [f.kind for f in parse_guard_failures("16/0: self.scales is None  # if self.scales")] == ["state"]


class Embed(nn.Module):
    def __init__(self):
        super().__init__()
        self.emb = nn.Embedding(32, 8)

    @passthrough
    def forward(self, input_ids=None):
        return self.emb(input_ids).sum(-1)


def test_keyword_input_with_a_new_length_is_a_new_input_shape():
    gen = torch.Generator().manual_seed(0)
    inputs = [{"input_ids": torch.randint(0, 32, (2, n), generator=gen)} for n in (16, 16, 24)]
    report, _ = run(torch.compile(Embed(), backend="eager"), inputs)
    later = [e for e in report.events if e.step == 2]
    assert later, "the new sequence length recompiles"
    assert all(e.comment == COMMENT_NEW_INPUT and e.new_in and not e.dynamic for e in later)
    assert any("kwargs['input_ids']" in e.cause or "input_ids" in e.cause for e in later)
    assert report.dynamic_modules() == []


class Select(nn.Module):
    """Keeps the rows a data-dependent index selects (nonzero), then keeps computing with them."""

    def __init__(self):
        super().__init__()
        self.proj = nn.Linear(4, 4)

    def forward(self, x):
        keep = torch.nonzero(x[:, 0] > 0).squeeze(1)  # SELECT-BREAK
        rows = x.index_select(0, keep)
        return self.proj(rows).sum(0)


class Outer(nn.Module):
    def __init__(self):
        super().__init__()
        self.pre = nn.Linear(4, 4)
        self.select = Select()

    def forward(self, x):
        return self.select(self.pre(x))


def test_sizes_from_a_dynamic_op_after_a_break_are_not_a_new_input():
    gen = torch.Generator().manual_seed(3)
    inputs = [torch.randn(12, 4, generator=gen) for _ in range(5)]        # one input shape throughout
    report, _ = run(torch.compile(Outer(), backend="eager"), inputs)
    assert not any(e.comment == COMMENT_NEW_INPUT for e in report.events)
    followers = [e for e in report.events if e.comment == COMMENT_DYNAMIC_INPUT]
    assert followers, [e.comment for e in report.events]
    assert all(e.path == "Outer/select" and not e.dynamic for e in followers)
    assert report.dynamic_modules() == ["Outer/select"]


class BNNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 4, 3)
        self.bn = nn.BatchNorm2d(4)
        self.relu = nn.ReLU()
        self.fc = nn.Linear(4 * 6 * 6, 2)

    def forward(self, x):
        return self.fc(torch.flatten(self.relu(self.bn(self.conv(x))), 1))


def train_eval_train(model):
    gen = torch.Generator().manual_seed(0)
    x = torch.randn(2, 3, 8, 8, generator=gen)
    model(x).sum().backward()
    model.eval()
    with torch.no_grad():          # periodic validation
        model(x)
    model.train()
    model(x).sum().backward()


def test_mode_switch_is_its_own_comment_and_never_a_root_cause():
    compiled = torch.compile(BNNet(), backend="eager")
    model = detect_recompilation_auto_model(compiled, csv_out=None)
    train_eval_train(model)
    report = model.analyse_dynamicity(print_tables=False)
    model.remove_hooks()
    switches = [e for e in report.events if e.comment == COMMENT_MODE_SWITCH]
    assert [(e.step, e.path) for e in switches] == [(1, "BNNet")]      # one row, for the model that switched
    assert all(not e.dynamic for e in switches)
    assert any("grad_mode" in e.cause or "training" in e.cause for e in switches)
    assert report.dynamic_modules() == []


class MaskSum(nn.Module):
    def forward(self, x):
        return x[x > 0].sum()  # CHILD-BREAK


class Parent(nn.Module):
    """Dynamic itself (nonzero in its own forward) and through its child."""

    def __init__(self):
        super().__init__()
        self.child = MaskSum()

    def forward(self, x):
        total = self.child(x)
        kept = torch.nonzero(x[:, 0] > 0)  # PARENT-BREAK
        return total + kept.shape[0]


class Top(nn.Module):
    def __init__(self):
        super().__init__()
        self.parent = Parent()

    def forward(self, x):
        return self.parent(x)


def test_a_parents_own_break_is_reported_beside_its_dynamic_child():
    gen = torch.Generator().manual_seed(0)
    inputs = [torch.randn(8, 4, generator=gen) for _ in range(3)]
    report, _ = run(torch.compile(Top(), backend="eager"), inputs)
    assert set(report.dynamic_modules()) == {"Top/parent", "Top/parent/child"}
    own = [e for e in report.events if e.path == "Top/parent" and e.root]
    assert own and all(f":{line_of(Parent.forward, 'PARENT-BREAK')}" in e.cause for e in own)
