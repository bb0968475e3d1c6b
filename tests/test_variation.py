"""Which sizes vary (dynlint/analysis/variation.py) and which helpers pass their arguments through:
the facts DYN201/DYN203 (and their opt-in companions DYN204/DYN205) stand on, checked directly."""

from __future__ import annotations

import ast
import textwrap

import pytest

from dynlint.analysis.variation import varying_name
from dynlint.analysis.walker import _passthrough_functions
from dynlint.api import check_source
from dynlint.codes import RULES
from dynlint.config import Settings

EVERY_RULE = Settings(select=frozenset(RULES))


@pytest.mark.parametrize("name", ["batch_size", "bsz", "seq_len", "max_length", "num_tokens", "olen", "T", "B",
                                  "noise_tensor_len", "lengths", "maxLen"])
def test_names_of_varying_counts(name):
    assert varying_name(name)


@pytest.mark.parametrize("name", ["channels", "num_classes", "n_heads", "hidden_size", "batch_shape", "K", "width",
                                  "num_keypoints", "len_dims", "t"])
def test_names_that_say_nothing_about_varying(name):
    assert not varying_name(name)


def test_passthrough_functions_are_those_returning_a_parameter_on_every_path():
    tree = ast.parse(textwrap.dedent("""\
        def default(val, d):
            return val if val is not None else d

        def first(a, b):
            return a or b

        def computed(x):
            return x * 2

        def sometimes(x, y):
            if x:
                return x
            return None

        def rebinds(x):
            x = x + 1
            return x

        @decorated
        def wrapped(x):
            return x
        """))
    found = _passthrough_functions(tree.body)
    assert found == {"default": (("val", "d"), frozenset({"val", "d"})),
                     "first": (("a", "b"), frozenset({"a", "b"}))}


def _codes(source: str) -> list[tuple[int, str]]:
    return sorted((f.line, f.code) for f in check_source(textwrap.dedent(source), "m.py", settings=EVERY_RULE))


def test_dimension_zero_varies_other_dimensions_are_opt_in():
    assert _codes("""\
        import torch
        from torch import nn


        class M(nn.Module):
            def forward(self, x: torch.Tensor):
                if x.shape[0] > 8:
                    x = x[:8]
                if x.shape[1] > 8:
                    x = x[:, :8]
                for row in x.transpose(0, 1):
                    x = x + row.sum()
                return x
        """) == [(7, "DYN201"), (9, "DYN204"), (11, "DYN205")]


def test_a_data_dependent_result_varies_in_every_dimension():
    assert _codes("""\
        import torch
        from torch import nn


        class M(nn.Module):
            def forward(self, x: torch.Tensor):
                kept = x[x[:, 0] > 0]
                if kept.shape[1] > 3:
                    return kept
                return x
        """) == [(7, "DYN101"), (8, "DYN201")]
