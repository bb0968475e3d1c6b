"""When a mask bound to a name still proves its tensor's shape (dynlint.analysis.rebinding).

Seen through the DYN101 fix: the bare mask (``torch.where(m, h, 0)``) is emitted only when
``m = h ...`` still describes ``h`` at the use on every path; otherwise the mask is aligned
explicitly (``m.reshape(...)``, exact for every valid rank) or, when that is impossible, the
fix is unsafe.  tests/test_fixes_differential.py runs such programs under torch."""

from __future__ import annotations

import textwrap

import pytest

from dynlint.api import check_source
from dynlint.diagnostics import Applicability


def dyn101_fix(body: str):
    source = "import torch\n\n" + textwrap.dedent(body)
    fixes = [f.fix for f in check_source(source) if f.code == "DYN101" and f.fix is not None]
    assert len(fixes) == 1, source
    return fixes[0].edits[0].content, fixes[0].applicability


TRUSTED = {
    "straight": """
        def f(h: torch.Tensor):
            m = h > 0
            return h[m].sum()
        """,
    "unrelated_call_between": """
        def f(h: torch.Tensor):
            m = h > 0
            print(h.shape)
            return h[m].sum()
        """,
    "loop_without_rebinding": """
        def f(h: torch.Tensor, xs):
            m = h > 0
            acc = 0
            for x in xs:
                acc = acc + h[m].sum() * x
            return acc
        """,
    "attribute_without_stores": """
        class M(torch.nn.Module):
            def __init__(self):
                super().__init__()
                self.register_buffer("h", torch.ones(3))

            def forward(self, x: torch.Tensor):
                m = self.h > 0
                y = x * 2
                return self.h[m].sum() + y
        """,
    "rebound_after_the_use_outside_loops": """
        def f(h: torch.Tensor):
            m = h > 0
            total = h[m].sum()
            h = h.unsqueeze(-1)
            return total, h
        """,
    "the_uses_own_target": """
        def f(h: torch.Tensor):
            m = h > 0
            h = h[m].sum()
            return h
        """,
}

DISTRUSTED = {
    "for_back_edge": """
        def f(h: torch.Tensor):
            m = h > 0
            acc = 0
            for _ in range(3):
                acc = acc + h[m].sum()
                h = h[..., None]
            return acc
        """,
    "while_test_rebinds": """
        def f(h: torch.Tensor):
            m = h > 0
            acc = 0
            while (h := h[..., None]).dim() < 4:
                acc = acc + h[m].sum()
            return acc
        """,
    "mask_itself_rebound_later_in_the_loop": """
        def f(h: torch.Tensor, y: torch.Tensor):
            m = h > 0
            acc = 0
            for _ in range(2):
                acc = acc + h[m].sum()
                m = y > 0
            return acc
        """,
    "walrus_in_a_comprehension": """
        def f(h: torch.Tensor):
            m = h > 0
            return [(h[m].sum(), (h := h[..., None])) for _ in range(2)]
        """,
    "with_as": """
        def f(h: torch.Tensor, ctx):
            m = h > 0
            with ctx as h:
                pass
            return h[m].sum()
        """,
    "nonlocal_closure": """
        def f(h: torch.Tensor):
            m = h > 0

            def grow():
                nonlocal h
                h = h[..., None]

            grow()
            return h[m].sum()
        """,
    "closure_reshaping_in_place": """
        def f(h: torch.Tensor):
            m = h > 0

            def grow():
                h.unsqueeze_(-1)

            grow()
            return h[m].sum()
        """,
    "helper_elsewhere_reshaping_its_argument": """
        def grow(t):
            t.unsqueeze_(-1)

        def f(h: torch.Tensor):
            m = h > 0
            grow(h)
            return h[m].sum()
        """,
    "alias_reshaped_in_place": """
        def f(h: torch.Tensor):
            m = h > 0
            g = h
            g.t_()
            return h[m].sum()
        """,
    "out_argument": """
        def f(h: torch.Tensor, a: torch.Tensor):
            m = h > 0
            torch.add(a, a, out=h)
            return h[m].sum()
        """,
    "data_assignment": """
        def f(h: torch.Tensor, a: torch.Tensor):
            m = h > 0
            h.data = a
            return h[m].sum()
        """,
    "attribute_store": """
        class M(torch.nn.Module):
            def __init__(self):
                super().__init__()
                self.register_buffer("h", torch.ones(3))

            def forward(self, x: torch.Tensor):
                m = self.h > 0
                self.h = x
                return self.h[m].sum()
        """,
    "method_of_the_same_object": """
        class M(torch.nn.Module):
            def __init__(self):
                super().__init__()
                self.register_buffer("h", torch.ones(3))

            def forward(self, x: torch.Tensor):
                m = self.h > 0
                self.update(x)
                return self.h[m].sum()
        """,
    "branch_rebinding": """
        def f(h: torch.Tensor, flag: bool):
            m = h > 0
            if flag:
                h = h[..., None]
            return h[m].sum()
        """,
}

GLOBAL = """
H = torch.ones(3, device="cuda")
m = H > 0


def grow():
    global H
    H = H[..., None]


grow()
total = H[m].sum()
"""


@pytest.mark.parametrize("name", sorted(TRUSTED))
def test_a_binding_that_holds_on_every_path_is_used(name):
    content, applicability = dyn101_fix(TRUSTED[name])
    assert applicability == Applicability.SAFE
    assert content in ("torch.where(m, h, 0).sum()", "torch.where(m, self.h, 0).sum()"), content


@pytest.mark.parametrize("name", sorted(DISTRUSTED))
def test_a_binding_that_may_be_stale_on_some_path_is_not_trusted(name):
    content, applicability = dyn101_fix(DISTRUSTED[name])
    assert content not in ("torch.where(m, h, 0).sum()", "torch.where(m, self.h, 0).sum()"), content
    assert applicability == Applicability.SAFE and "m.reshape(m.shape + (1,) * (" in content


def test_a_global_rebound_by_a_function_is_not_trusted_at_module_level():
    content, applicability = dyn101_fix(GLOBAL.replace("import torch\n", ""))
    assert content.startswith("torch.where(m.reshape(") and applicability == Applicability.SAFE
