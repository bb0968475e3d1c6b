"""The harness of bench/fix_endtoend.py on made-up functions (the real cases run only from the
script): it must see a changed result, NaN where the original has none, a changed gradient, an
error that is no longer raised, and count graph breaks."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

torch = pytest.importorskip("torch")

_SPEC = importlib.util.spec_from_file_location(
    "fix_endtoend", Path(__file__).resolve().parents[1] / "bench" / "fix_endtoend.py")
harness = importlib.util.module_from_spec(_SPEC)
sys.modules.setdefault("fix_endtoend", harness)  # its dataclasses look their module up
_SPEC.loader.exec_module(harness)


def masked_sum(x, y):
    return x[y > 0].sum()


def where_sum(x, y):
    return torch.where(y > 0, x, 0).sum()


def multiplied_sum(x, y):  # the classic wrong rewrite: NaN * 0 is NaN
    return (x * (y > 0)).sum()


def detached_sum(x, y):  # same value, no gradient
    return torch.where(y > 0, x.detach(), 0).sum()


def _cases():
    x = torch.tensor([1.0, float("nan"), 3.0, float("inf")])
    y = torch.tensor([1.0, -1.0, 1.0, -1.0])
    return [(x, y), (x, -y.abs()), (torch.arange(4.0), y)]


def test_an_exact_rewrite_is_equal_everywhere():
    assert harness.compare(masked_sum, where_sum, _cases(), grad=(0,)) == (3, 3, None)


def test_nan_outside_the_mask_is_caught():
    equal, runs, first = harness.compare(masked_sum, multiplied_sum, _cases(), grad=(0,))
    assert (equal, runs) == (1, 3) and first.startswith("output")


def test_a_changed_gradient_is_caught():
    equal, runs, first = harness.compare(masked_sum, detached_sum, _cases(), grad=(0,))
    assert equal == 0 and "gradient" in first


def test_an_error_no_longer_raised_is_caught():
    def strict(x, y):
        if (x < 0).any():
            raise ValueError("negative")
        return x * 2

    def relaxed(x, y):
        return x * 2

    cases = [(torch.tensor([-1.0]), None), (torch.tensor([1.0]), None)]
    equal, runs, first = harness.compare(strict, relaxed, cases)
    assert (equal, runs, first) == (1, 2, "original raised ValueError, fixed returned")


def test_dtype_and_integer_values_are_compared_exactly():
    def as_float(x, y):
        return torch.where(y > 0, x, 0).sum().float()

    cases = [(torch.tensor([1, 2, 3]), torch.tensor([1, 1, -1]))]
    assert "torch.int64" in harness.compare(where_sum, as_float, cases)[2]


def test_graph_breaks_are_counted():
    x, y = _cases()[0]
    assert harness.graph_breaks(masked_sum, (x, y)) == (1, 2)
    assert harness.graph_breaks(where_sum, (x, y)) == (0, 1)
