"""Differential tests of the fixes of issue 11: dynamic spans (Gaudi's two seed examples), row
reductions, linear wrappers, products and sums of several terms, counts, ``x[m] = y[m]`` and
validation branches.  Original and fixed snippets run on generated inputs (every dtype, NaN/±inf
outside the mask, empty/full/single masks, row masks on square matrices, gradients); safe fixes
must agree everywhere, unsafe ones must show the documented difference, and every fixed snippet
must compile with no graph break where the original breaks.
"""

from __future__ import annotations

import ast
import textwrap

import pytest

torch = pytest.importorskip("torch")
from hypothesis import example, given, strategies as st  # noqa: E402

from dynlint.api import check_source  # noqa: E402
from dynlint.diagnostics import Applicability  # noqa: E402
from test_fixes_differential import (  # noqa: E402
    ALL_DTYPES, EXAMPLES, FLOATS, INTS, ROW_MASK_CASE, _outcome, assert_same, compare_with_grad, fixed_pair,
    matrix_and_mask, tensors,
)

SAFE, UNSAFE = Applicability.SAFE, Applicability.UNSAFE


def _statements(source: str) -> list[str]:
    """The dumped statements of ``f``'s body (layout-independent comparisons)."""
    tree = ast.parse(source)
    function = next(n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == "f")
    return [ast.dump(statement) for statement in ast.walk(function) if isinstance(statement, ast.stmt)]


def has_statement(source: str, statement: str) -> bool:
    return ast.dump(ast.parse(statement).body[0]) in _statements(source)


class _Pair:
    def __init__(self, body, expect, code):
        self.arguments = (body, expect, code)
        self.value = None

    def __iter__(self):
        if self.value is None:
            body, expect, code = self.arguments
            self.value = fixed_pair(body, expect=expect, code=code)
        return iter(self.value)


# --------------------------------------------------------------------------- Gaudi's seed (a)
GAUDI_A = """
def f(smooth_loss: torch.Tensor, targets: torch.Tensor):
    pad = 0
    non_pad_mask = targets.ne(pad).view(-1)
    smooth_loss = smooth_loss[non_pad_mask]
    smooth_loss = smooth_loss.sum()
    return smooth_loss
"""
_GAUDI_A = _Pair(GAUDI_A, SAFE, "DYN101")


@st.composite
def label_smoothing_inputs(draw):
    """smooth_loss (N,), (N, 1) or (N, 3) of any dtype with NaN/inf anywhere; targets with pads (0)."""
    n = draw(st.integers(0, 4))
    shape = draw(st.sampled_from([(n,), (n, 1), (n, 3)]))
    loss = draw(tensors(shape))
    style = draw(st.sampled_from(["random", "none", "all"]))
    if style == "random":
        targets = torch.tensor(draw(st.lists(st.integers(0, 2), min_size=n, max_size=n)), dtype=torch.long)
    else:
        targets = torch.full((n,), 0 if style == "all" else 1, dtype=torch.long)
    return loss, targets


def test_gaudi_seed_a_is_one_statement_with_the_dead_binding_removed():
    _, _, source = _GAUDI_A
    body = source.split("def f", 1)[1]
    assert "smooth_loss[" not in body and body.count("smooth_loss = ") == 1
    assert has_statement(source, "smooth_loss = torch.where(non_pad_mask.reshape(-1, *(1,) * (smooth_loss.ndim - 1)), "
                                 "smooth_loss, 0).sum()")


@EXAMPLES
@given(label_smoothing_inputs())
@example((torch.tensor([[float("inf")]]), torch.tensor([0])))  # N = 1, inf on the pad
@example((torch.tensor([[1.0], [float("nan")], [2.0]]), torch.tensor([1, 0, 2])))
def test_gaudi_seed_a_is_exact(case):
    original, fixed, _ = _GAUDI_A
    compare_with_grad(original, fixed, *case)


def test_gaudis_own_rewrite_of_seed_a_is_what_the_fix_avoids():
    """Gaudi's `smooth_loss.squeeze() * non_pad_mask.int()` is wrong with NaN on a pad and, for
    an (N, 1) loss with N = 1, by broadcasting; dynlint's fix is exact on both (measured)."""
    original, fixed, _ = _GAUDI_A

    def gaudi(smooth_loss, targets):
        return (smooth_loss.squeeze() * targets.ne(0).view(-1).int()).sum()

    nan_on_pad = (torch.tensor([[1.0], [float("nan")]]), torch.tensor([1, 0]))
    assert torch.isnan(gaudi(*nan_on_pad)) and original(*nan_on_pad) == fixed(*nan_on_pad) == 1.0
    one_row = (torch.tensor([[3.0]]), torch.tensor([2]))
    assert original(*one_row) == fixed(*one_row) == 3.0


GAUDI_A_KNOWN_RANKS = """
def f(logits: torch.Tensor, target: torch.Tensor):
    lprobs = logits.log_softmax(-1).view(-1, 7)
    smooth_loss = -lprobs.sum(dim=-1, keepdim=True)
    non_pad_mask = target.ne(0).view(-1)
    smooth_loss = smooth_loss[non_pad_mask]
    smooth_loss = smooth_loss.sum()
    return smooth_loss
"""


@EXAMPLES
@given(st.integers(0, 4), st.data())
def test_gaudi_seed_a_with_known_ranks_reads_plainly_and_is_exact(n, data):
    original, fixed, source = _GAUDI_A_KNOWN
    assert has_statement(source, "smooth_loss = torch.where(non_pad_mask.unsqueeze(-1), smooth_loss, 0).sum()")
    logits = data.draw(tensors((n, 7), dtypes=FLOATS))
    target = torch.tensor(data.draw(st.lists(st.integers(0, 2), min_size=n, max_size=n)), dtype=torch.long)
    compare_with_grad(original, fixed, logits, target)


_GAUDI_A_KNOWN = _Pair(GAUDI_A_KNOWN_RANKS, SAFE, "DYN101")


# --------------------------------------------------------------------------- Gaudi's seed (b)
GAUDI_B = """
def f(A: torch.Tensor, B: torch.Tensor, C: torch.Tensor):
    indices = torch.where(C != -1)
    A_f = torch.gather(A, 0, indices[0])
    B_f = torch.gather(B, 0, indices[0])
    res = torch.sum(A_f * B_f)
    return res
"""
_GAUDI_B = _Pair(GAUDI_B, UNSAFE, "DYN102")


def test_gaudi_seed_b_is_one_where_per_factor_with_the_dead_bindings_removed():
    _, _, source = _GAUDI_B
    body = source.split("def f", 1)[1]
    assert has_statement(source, "res = (torch.where(C != -1, A, 0) * torch.where(C != -1, B, 0)).sum()")
    assert "indices" not in body and "A_f" not in body and "B_f" not in body


@EXAMPLES
@given(st.integers(0, 5).flatmap(lambda n: st.tuples(tensors((n,)), tensors((n,)),
                                                     st.lists(st.sampled_from([-1, 0, 3]), min_size=n, max_size=n))))
def test_gaudi_seed_b_is_exact_on_inputs_of_one_length(case):
    """1-D A, B, C of one length (what the example assumes): equal values, and for float A the
    gradient, with NaN/inf in A and B where C == -1."""
    original, fixed, _ = _GAUDI_B
    a, b, c = case
    c = torch.tensor(c, dtype=torch.long)
    if a.dtype != b.dtype and (a.dtype == torch.bool or b.dtype == torch.bool):
        b = b.to(a.dtype)
    compare_with_grad(lambda x, z: original(x, b, z), lambda x, z: fixed(x, b, z), a, c)


def test_gaudi_seed_b_is_unsafe_because_shapes_are_not_known():
    """A longer than C: the original gathers, the rewrite cannot broadcast; C of rank 2: the
    original repeats rows, the rewrite masks elements."""
    original, fixed, _ = _GAUDI_B
    a, b = torch.arange(1.0, 5.0), torch.ones(4)
    c = torch.tensor([0, -1])
    assert original(a, b, c) == 1.0
    assert _outcome(fixed, a, b, c)[1] is RuntimeError
    c2 = torch.tensor([[0, 0], [-1, 0]])
    assert original(a[:2], b[:2], c2) != fixed(a[:2], b[:2], c2)


GAUDI_B_PROVEN = """
def f(x: torch.Tensor):
    v = x.view(-1)
    c = v.long()
    indices = torch.where(c != -1)
    a_f = torch.gather(v, 0, indices[0])
    b_f = torch.gather(v * 2, 0, indices[0])
    return torch.sum(a_f * b_f)
"""
_GAUDI_B_PROVEN = _Pair(GAUDI_B_PROVEN, SAFE, "DYN102")


@EXAMPLES
@given(st.integers(0, 4).flatmap(lambda n: tensors((n, 2))))
def test_gathers_of_one_flat_tensor_are_exact(x):
    original, fixed, source = _GAUDI_B_PROVEN
    assert has_statement(source, "return (torch.where(c != -1, v, 0) * torch.where(c != -1, v * 2, 0)).sum()")
    compare_with_grad(original, fixed, x)


# --------------------------------------------------------------------------- spans
SPAN_CAST = """
def f(x: torch.Tensor, y: torch.Tensor):
    valid = y > 0
    picked = x[valid]
    scaled = picked.double() * 0.5
    total = scaled.sum()
    return total
"""
SPAN_QUIET = """
def f(x: torch.Tensor, y: torch.Tensor):
    picked = x[x > 0]
    weight = 2.0
    return picked.sum() * weight
"""
SPAN_LOOP = """
def f(x: torch.Tensor, y: torch.Tensor):
    total = x.new_zeros(())
    for row in x:
        kept = row[row > 0]
        total = total + kept.sum()
    return total
"""
SPAN_MASKED_SELECT = """
def f(x: torch.Tensor, y: torch.Tensor):
    m = y > 0
    picked = x.masked_select(m)
    return picked.float().sum()
"""
SPAN_INDICES = """
def f(x: torch.Tensor, y: torch.Tensor):
    flat = x.reshape(-1)
    idx = torch.where(flat > 0)[0]
    return flat[idx].sum()
"""
SPANS = {
    "cast": (SPAN_CAST, "DYN101"),
    "quiet": (SPAN_QUIET, "DYN101"),
    "loop": (SPAN_LOOP, "DYN101"),
    "masked_select": (SPAN_MASKED_SELECT, "DYN104"),
    "indices": (SPAN_INDICES, "DYN102"),
}
_SPANS = {name: _Pair(body, SAFE, code) for name, (body, code) in SPANS.items()}


@EXAMPLES
@given(st.sampled_from(sorted(SPANS)), matrix_and_mask())
@example("cast", ROW_MASK_CASE)
@example("indices", ROW_MASK_CASE)
@example("cast", (torch.tensor([[1.0, 2.0], [3.0, 4.0]]), torch.tensor([-1.0, -1.0, -1.0, -1.0])))
def test_spans_are_exact(name, case):
    original, fixed, source = _SPANS[name]
    x, y = case
    if name == "loop" and (x.dim() == 0 or len(x) == 0):
        return  # nothing to iterate: the result is a constant without a gradient
    want, error = _outcome(original, x, y)
    if error is not None:  # a mask that does not fit x: not a valid run (IndexError)
        assert error is IndexError
        return
    compare_with_grad(original, fixed, x, y)


def test_spans_remove_their_dead_bindings():
    for name, pair in _SPANS.items():
        _, _, source = pair
        body = source.split("def f", 1)[1]
        for dead in ("picked", "scaled", "kept", "idx"):
            assert f"{dead} =" not in body, (name, source)


INDEX_OF_ANOTHER_TENSOR = {
    "tuple": "def f(x: torch.Tensor, y: torch.Tensor):\n    m = y.view(-1) > 0\n    return x[torch.where(m)].sum()\n",
    "rows": "def f(x: torch.Tensor, y: torch.Tensor):\n    m = y.view(-1) > 0\n    return x[torch.where(m)[0]].sum()\n",
    "index_select": "def f(x: torch.Tensor, y: torch.Tensor):\n    m = y.view(-1) > 0\n"
                    "    return x.index_select(0, m.nonzero().squeeze(1)).sum()\n",
}


@pytest.mark.parametrize("form", sorted(INDEX_OF_ANOTHER_TENSOR))
def test_indices_of_a_mask_of_another_shape_make_the_fix_unsafe(form):
    """Found by the fix fuzzer: unlike x[m], x[torch.where(m)] does not check m's shape, so a
    longer m whose true positions fit x (or that selects nothing) runs in the original, and the
    rewrite cannot broadcast.  Unless m provably has x's shape, the fix is only offered as unsafe."""
    original, fixed, _ = fixed_pair(INDEX_OF_ANOTHER_TENSOR[form], expect=UNSAFE, code="DYN102")
    x, y = torch.ones(2, 2), torch.tensor([[1.0, -1.0], [-1.0, -1.0]])  # 4 mask entries, 2 rows
    assert original(x, y) == 2.0
    assert _outcome(fixed, x, y)[1] is RuntimeError
    x1, y1 = torch.arange(4.0), torch.tensor([[1.0, -1.0], [-1.0, 1.0]])  # same length: equal
    assert_same(original(x1, y1), fixed(x1, y1))


# A span is rewritten only when every use of the dynamic value lies inside it.  Each case has a
# twin that differs in that one respect and does get the span fix (so the negative is not vacuous).
NOT_SPANS = {
    "returned": ("picked = x[x > 0]\n    total = picked.sum()\n    return total, picked",
                 "picked = x[x > 0]\n    total = picked.sum()\n    return total, x"),
    "stored": ("picked = x[x > 0]\n    total = picked.sum()\n    self.kept = picked\n    return total",
               "picked = x[x > 0]\n    total = picked.sum()\n    self.kept = x\n    return total"),
    "used_twice": ("picked = x[x > 0]\n    return picked.sum() + picked.max()",
                   "picked = x[x > 0]\n    return picked.sum() + x.max()"),
    "in_a_lambda": ("g = lambda: picked\n    picked = x[x > 0]\n    return picked.sum() + g()",
                    "g = lambda: x\n    picked = x[x > 0]\n    return picked.sum() + g()"),
    "call_between": ("picked = x[x > 0]\n    self.log(x)\n    return picked.sum()",
                     "picked = x[x > 0]\n    n = x.abs()\n    return picked.sum()"),
    "operand_rebound_between": ("picked = x[x > 0]\n    x = x * 2\n    return picked.sum()",
                                "picked = x[x > 0]\n    z = x * 2\n    return picked.sum()"),
    "across_the_loop": ("picked = x\n    t = 0\n    for r in x:\n        t = t + picked.sum()\n"
                        "        picked = r[r > 0]\n    return t",
                        "t = 0\n    for r in x:\n        picked = r[r > 0]\n        t = t + picked.sum()\n"
                        "    return t"),
    "after_the_branch": ("if x.dim():\n        picked = x[x > 0]\n        t = picked.sum()\n    return picked",
                         "if x.dim():\n        picked = x[x > 0]\n        t = picked.sum()\n    return t"),
    "augmented": ("picked = x[x > 0]\n    picked += 1\n    return picked.sum()",
                  "picked = x[x > 0]\n    picked = picked + 1\n    return picked.sum()"),
    "comment_inside": ("picked = x[\n        x > 0  # positive\n    ]\n    return picked.sum()",
                       "picked = x[\n        x > 0\n    ]\n    return picked.sum()"),
}


def _span_fixes(body: str):
    source = "import torch\n\n\ndef f(self, x: torch.Tensor):\n    " + body + "\n"
    return [f for f in check_source(source) if f.code == "DYN101" and f.fix is not None and len(f.fix.edits) > 1]


@pytest.mark.parametrize("name", sorted(NOT_SPANS))
def test_a_dynamic_value_used_outside_the_span_gets_no_span_fix(name):
    negative, twin = NOT_SPANS[name]
    assert _span_fixes(negative) == []
    assert _span_fixes(twin), f"the twin of {name} should get a span fix"


# --------------------------------------------------------------------------- rows, wrappers, products
ROW_SUM = """
def f(x: torch.Tensor, labels: torch.Tensor):
    keep = labels.view(-1) > 0
    return x[keep].sum(0)
"""
SAME_SHAPE_DIM0 = """
def f(x: torch.Tensor, labels: torch.Tensor):
    return x[x != 0].sum(dim=0)
"""
LINEAR = """
def f(x: torch.Tensor, y: torch.Tensor):
    m = y > 0
    return (x[m].float() * 2 - 1).sum() + (-x[m].double() / 4).sum()
"""
PRODUCT3 = """
def f(a: torch.Tensor, y: torch.Tensor):
    k = y > 0
    b = a * 3
    c = a.float()
    return (a[k] * b[k] * c[k]).sum()
"""
SUMS3 = """
def f(a: torch.Tensor, y: torch.Tensor):
    k = y > 0
    b = a * 2
    return (b[k] - a[k] + 2 * a[k]).sum()
"""
NANSUM = """
def f(x: torch.Tensor, y: torch.Tensor):
    m = y > 0
    return x[m].nansum()
"""
TERMS = {"row_sum": ROW_SUM, "same_shape_dim0": SAME_SHAPE_DIM0, "linear": LINEAR, "product3": PRODUCT3,
         "sums3": SUMS3, "nansum": NANSUM}
_TERMS = {name: _Pair(body, SAFE, "DYN101") for name, body in TERMS.items()}


@EXAMPLES
@given(st.sampled_from(sorted(TERMS)), matrix_and_mask())
@example("row_sum", ROW_MASK_CASE)
@example("linear", (torch.tensor([float("inf"), 1.0]), torch.tensor([-1.0, 1.0])))
@example("product3", (torch.tensor([float("nan"), 2.0]), torch.tensor([-1.0, 1.0])))
def test_row_sums_linear_wrappers_products_and_sums_are_exact(name, case):
    original, fixed, _ = _TERMS[name]
    x, y = case
    if name in ("row_sum", "nansum", "linear", "product3", "sums3"):
        y = y.reshape(-1) if name == "row_sum" else y
    want, error = _outcome(original, x, y)
    if error is not None:
        got_error = _outcome(fixed, x, y)[1]
        assert error is IndexError or got_error is not None, (name, error)
        return
    assert_same(want, fixed(x, y))
    compare_with_grad(lambda *a: original(*a).sum(), lambda *a: fixed(*a).sum(), x, y)


def test_row_sum_keeps_the_other_dims():
    original, fixed, source = _TERMS["row_sum"]
    assert has_statement(source, "return torch.where(keep.reshape(-1, *(1,) * (x.ndim - 1)), x, 0).sum(0)")
    x = torch.arange(9.0).reshape(3, 3)
    labels = torch.tensor([1, 0, 1])
    assert torch.equal(original(x, labels), fixed(x, labels))
    assert torch.equal(fixed(x, labels), torch.tensor([6.0, 8.0, 10.0]))


SORT_INDICES_MASK = """
def f(cls_loss: torch.Tensor, num_negative: torch.Tensor):
    negative_loss = cls_loss.clone()
    values, idx = negative_loss.sort(1, descending=True)
    background_idxs = idx.sort(1)[1] < num_negative
    return cls_loss[background_idxs].sum()
"""


@EXAMPLES
@given(st.integers(0, 4), st.integers(1, 4), st.data())
def test_mask_of_sort_indices_is_plain_and_exact(n, anchors, data):
    """torchvision SSD's hard negative mining: `values, idx = x.sort(1)` makes idx of x's shape,
    so the mask reads plainly (no rank-generic reshape) and the fix is exact."""
    original, fixed, source = fixed_pair(SORT_INDICES_MASK, expect=SAFE, code="DYN101")
    assert has_statement(source, "return torch.where(background_idxs, cls_loss, 0).sum()")
    loss = data.draw(tensors((n, anchors), dtypes=FLOATS))
    counts = torch.tensor(data.draw(st.lists(st.integers(0, anchors), min_size=n, max_size=n)),
                          dtype=torch.long).reshape(n, 1)
    assert_same(original(loss, counts), fixed(loss, counts))
    compare_with_grad(original, fixed, loss, counts)


MEAN_OF_FULL_PRECISION = {
    # ProphetNet's label smoothing (transformers): log_softmax(dtype=torch.float32), a span ending in mean
    "prophetnet_span": """
def f(logits: torch.Tensor, targets: torch.Tensor):
    lprobs = torch.nn.functional.log_softmax(logits.view(-1, logits.size(-1)), dim=-1, dtype=torch.float32)
    smooth_loss = -lprobs.sum(dim=-1, keepdim=True)
    non_masked_tokens = targets.ne(-100).view(-1)
    smooth_loss = smooth_loss[non_masked_tokens]
    smooth_loss = smooth_loss.mean()
    return smooth_loss
""",
    # the same inside a branch: the names bound before the span in its block give the facts
    "span_in_branch": """
def f(logits: torch.Tensor, targets: torch.Tensor):
    eps = 0.1
    lprobs = torch.nn.functional.log_softmax(logits.view(-1, logits.size(-1)), dim=-1, dtype=torch.float32)
    if eps > 0.0:
        smooth_loss = -lprobs.sum(dim=-1, keepdim=True)
        non_masked_tokens = targets.ne(-100).view(-1)
        smooth_loss = smooth_loss[non_masked_tokens]
        smooth_loss = smooth_loss.mean()
        return smooth_loss
    return lprobs.sum()
""",
    "cast": """
def f(logits: torch.Tensor, targets: torch.Tensor):
    m = targets >= 0
    return logits[m].double().mean()
""",
    "to_float32": """
def f(logits: torch.Tensor, targets: torch.Tensor):
    x = logits.to(torch.float32)
    keep = targets >= 0
    return (x[keep] * 2).mean()
""",
}
_MEANS = {name: _Pair(body, SAFE, "DYN101") for name, body in MEAN_OF_FULL_PRECISION.items()}


@st.composite
def logits_and_targets(draw):
    """logits (N, 3) of any float dtype with NaN/inf anywhere, integer targets with -100 pads;
    every mask: none, all, some."""
    n = draw(st.integers(0, 4))
    logits = draw(tensors((n, 3), dtypes=FLOATS))
    targets = torch.tensor(draw(st.lists(st.sampled_from([-100, 0, 2]), min_size=n, max_size=n)), dtype=torch.long)
    return logits, targets


@EXAMPLES
@given(st.sampled_from(sorted(MEAN_OF_FULL_PRECISION)), logits_and_targets())
@example("prophetnet_span", (torch.tensor([[float("nan"), 1.0, 2.0], [0.0, 1.0, 2.0]]), torch.tensor([-100, 1])))
@example("cast", (torch.tensor([[1.0, 2.0, 3.0]], dtype=torch.float16), torch.tensor([-100])))
def test_mean_of_a_proven_float32_or_float64_value_is_safe_and_exact(name, case):
    """x[m].mean() -> where(M, x, 0).sum() / count is exact when the selected values are float32
    or float64 (an empty mask gives NaN in both): proven by a cast or a dtype= argument."""
    original, fixed, source = _MEANS[name]
    assert ".mean()" not in source.split("def f", 1)[1] and "torch.where(" in source
    logits, targets = case
    want, error = _outcome(original, logits, targets)
    assert error is None
    assert_same(want, fixed(logits, targets))
    compare_with_grad(original, fixed, logits, targets)


def test_mean_of_a_value_of_unknown_or_half_precision_stays_unsafe():
    """float16 sums round (and overflow past 65504) before the division, integers raise in the
    original: without a proof of float32/float64 the mean fix stays unsafe."""
    for body in ("""
def f(x: torch.Tensor, y: torch.Tensor):
    m = y > 0
    return x[m].mean()
""", """
def f(x: torch.Tensor, y: torch.Tensor):
    h = x.float()
    return h.half()[h > 0].mean()
""", """
def f(x: torch.Tensor, y: torch.Tensor):
    m = y > 0
    return x[m].half().mean()
"""):
        fixed_pair(body, expect=UNSAFE, code="DYN101")
    x = torch.full((3,), 30000.0, dtype=torch.float16)
    assert torch.isinf(torch.where(x > 0, x, 0).sum() / 3) and x.mean() == 30000.0


BOOL_IN_A_TRIPLE_PRODUCT = """
def f(h: torch.Tensor, y: torch.Tensor):
    m = h != 0
    return (h[m] * h.bool()[m] * h[m]).sum()
"""


@pytest.mark.parametrize("dtype", [torch.uint8, torch.int32, torch.int64, torch.bool, torch.float16])
def test_three_factors_keep_each_factors_dtype(dtype):
    """Found by the fix fuzzer: with a where per factor, the bool factor became int64 and the
    uint8 product 255 * True * 255 no longer wrapped (65025 instead of 1)."""
    original, fixed, source = fixed_pair(BOOL_IN_A_TRIPLE_PRODUCT, expect=SAFE, code="DYN101")
    assert "torch.where" not in source.split("def f", 1)[1]
    big = {torch.uint8: 255, torch.int32: 2**20, torch.int64: 2**40, torch.bool: 1, torch.float16: 300}[dtype]
    h = torch.tensor([big, 0, big], dtype=dtype)
    assert_same(original(h, h), fixed(h, h))


# --------------------------------------------------------------------------- counts
COUNT_FORMS = {"len": "len(x[m])", "shape": "x[m].shape[0]", "size": "x[m].size(0)"}


@pytest.mark.parametrize("form", sorted(COUNT_FORMS))
def test_count_of_a_selection_is_the_masks_count_as_a_0d_tensor(form):
    original, fixed, source = fixed_pair(f"""
        def f(x: torch.Tensor, y: torch.Tensor):
            m = y > 0
            return {COUNT_FORMS[form]}
        """, expect=UNSAFE, code="DYN101")
    assert "torch.count_nonzero(m)" in source
    for dtype in ALL_DTYPES:
        for x, y in ((torch.zeros(3, 3, dtype=dtype), torch.tensor([1.0, -1.0, 1.0])),  # a row mask
                     (torch.ones(2, 3, dtype=dtype), torch.ones(2, 3)),
                     (torch.ones(4, dtype=dtype), -torch.ones(4))):
            want, got = original(x, y), fixed(x, y)
            assert isinstance(want, int) and isinstance(got, torch.Tensor) and got.dim() == 0
            assert got.item() == want


@EXAMPLES
@given(tensors((3, 2)))
def test_count_of_a_selection_in_a_true_division_is_safe(x):
    original, fixed, source = fixed_pair("""
        def f(x: torch.Tensor):
            m = x > 0
            return x.sum() / len(x[m])
        """, expect=SAFE, code="DYN101")
    assert has_statement(source, "return x.sum() / torch.count_nonzero(m)")
    assert_same(original(x), fixed(x))


# --------------------------------------------------------------------------- x[m] = y[m]
MASKED_COPY = """
def f(x: torch.Tensor, y: torch.Tensor, z: torch.Tensor):
    m = z > 0
    x[m] = y[m]
    return x
"""
_MASKED_COPY = _Pair(MASKED_COPY, UNSAFE, "DYN101")


@EXAMPLES
@given(matrix_and_mask(), st.data())
@example(ROW_MASK_CASE, None)
def test_masked_copy_is_exact_in_place_for_one_dtype_and_shape(case, data):
    original, fixed, source = _MASKED_COPY
    assert has_statement(source, "x.copy_(torch.where(m.reshape(m.shape + (1,) * (x.ndim - m.ndim)), y, x))")
    x, z = case
    y = data.draw(tensors(tuple(x.shape), dtypes=[x.dtype])) if data is not None else torch.full_like(x, -5)
    results = []
    for fn in (original, fixed):
        target = x.clone()
        alias = target.view(-1)  # an alias of x sees the in-place change in both
        outcome, error = _outcome(fn, target, y, z)
        results.append((error, None if error else (outcome.clone(), alias.clone())))
    assert results[0][0] == results[1][0] or results[0][0] is IndexError
    if results[0][0] is None:
        assert_same(results[0][1][0], results[1][1][0])
        assert_same(results[0][1][1], results[1][1][1])


def test_masked_copy_is_unsafe_because_a_dtype_mismatch_no_longer_raises():
    original, fixed, _ = _MASKED_COPY
    x, y, z = torch.zeros(3), torch.ones(3, dtype=torch.float64), torch.tensor([1.0, -1.0, 1.0])
    with pytest.raises(RuntimeError):
        original(x.clone(), y, z)
    assert torch.equal(fixed(x.clone(), y, z), torch.tensor([1.0, 0.0, 1.0]))


MASKED_LINEAR_WRITE = """
def f(res: torch.Tensor, freq: torch.Tensor, low: float, scale: float):
    below = freq < low
    res[below] = low + scale * (freq[below] - low)
    return res
"""
_MASKED_LINEAR_WRITE = _Pair(MASKED_LINEAR_WRITE, UNSAFE, "DYN101")


@EXAMPLES
@given(st.integers(0, 5), st.sampled_from(FLOATS), st.data())
def test_masked_write_of_a_linear_function_is_exact_where_the_original_runs(n, dtype, data):
    """torchaudio's vtln_warp_freq: res[m] = a + s * (freq[m] - a) -> res.copy_(torch.where(m, a + s *
    (freq - a), res)): the same values in place (aliases see them) and gradients, NaN/inf
    anywhere, every float dtype, for finite numbers."""
    original, fixed, source = _MASKED_LINEAR_WRITE
    assert "res.copy_(" in source and "low + scale * (freq - low)" in source
    freq = data.draw(tensors((n,), dtypes=[dtype]))
    res = data.draw(tensors((n,), dtypes=[dtype]))
    low = data.draw(st.floats(-10, 10))
    scale = data.draw(st.floats(-4, 4))
    outcomes = []
    for fn in (original, fixed):
        target = res.clone()
        alias = target.view(-1)
        leaf = freq.clone().requires_grad_(dtype.is_floating_point)
        out = fn(target, leaf, low, scale)
        grad = torch.autograd.grad(out.sum(), leaf)[0] if n else None
        outcomes.append((out.detach(), alias.detach().clone(), grad))
    assert_same(outcomes[0][0], outcomes[1][0])
    assert_same(outcomes[0][1], outcomes[1][1])
    if n:
        torch.testing.assert_close(outcomes[1][2], outcomes[0][2], equal_nan=True)


def test_masked_write_is_unsafe_because_an_inf_variable_gives_nan_gradients():
    original, fixed, _ = _MASKED_LINEAR_WRITE
    freq = torch.tensor([1.0, 5.0])
    grads = []
    for fn in (original, fixed):
        leaf = freq.clone().requires_grad_(True)
        grads.append(torch.autograd.grad(fn(torch.zeros(2), leaf, 2.0, float("inf")).sum(), leaf)[0])
    assert grads[0][1] == 0 and torch.isnan(grads[1][1])  # 5.0 is outside the mask: 0 * inf


def test_masked_write_of_selections_of_unknown_shapes_gets_no_fix():
    body = "def f(x: torch.Tensor, y: torch.Tensor, z: torch.Tensor):\n    m = z > 0\n    x[m] = y[m] - z[m]\n"
    source = "import torch\n\n" + body
    assert all(f.fix is None for f in check_source(source) if f.code == "DYN101")


# --------------------------------------------------------------------------- masks over the same operands
SAME_OPERANDS = """
def f(a: torch.Tensor, b: torch.Tensor, c: torch.Tensor):
    up = (a - b) / (c - b)
    inside = (a > b) & (a <= c)
    return up[inside].sum()
"""
_SAME_OPERANDS = _Pair(SAME_OPERANDS, SAFE, "DYN101")
BROADCASTS = [((3,), (3,), (3,)), ((3, 1), (1, 4), (3, 4)), ((2, 1), (2, 3), (1, 1)), ((0, 2), (1,), (2,)),
              ((3, 3), (3, 1), (3,)), ((2, 1, 3), (4, 1), (3,))]


@EXAMPLES
@given(st.sampled_from(BROADCASTS), st.sampled_from(FLOATS + INTS), st.data())
def test_a_mask_over_the_operands_of_the_tensor_is_plain_and_exact(shapes, dtype, data):
    """Both broadcast a, b and c, so they have one shape: the plain torch.where(inside, up, 0)."""
    original, fixed, source = _SAME_OPERANDS
    assert has_statement(source, "return torch.where(inside, up, 0).sum()")
    a, b, c = (data.draw(tensors(shape, dtypes=[dtype])) for shape in shapes)
    compare_with_grad(original, fixed, a, b, c)


# --------------------------------------------------------------------------- validation branches
RAISE_BRANCH = """
def f(h: torch.Tensor):
    if not torch.isfinite(h).all():
        raise ValueError("activations are not finite")
    return h * 2
"""


def test_validation_branch_becomes_a_device_assert_raising_another_type():
    original, fixed, source = fixed_pair(RAISE_BRANCH, expect=UNSAFE, code="DYN202")
    assert has_statement(source, 'torch._assert_async(torch.isfinite(h).all(), "activations are not finite")')
    good = torch.tensor([1.0, 2.0])
    assert_same(original(good), fixed(good))
    bad = torch.tensor([1.0, float("nan")])
    with pytest.raises(ValueError, match="not finite"):
        original(bad)
    with pytest.raises(RuntimeError, match="not finite"):  # the documented difference
        fixed(bad)


RAISE_FORMS = {
    "bool": """
def f(h: torch.Tensor):
    if not bool(torch.isfinite(h).all()):
        raise ValueError("activations are not finite")
    return h * 2
""",
    "item": """
def f(h: torch.Tensor):
    if torch.isnan(h).any().item():
        raise ValueError("activations are not finite")
    return h * 2
""",
    "or": """
def f(h: torch.Tensor):
    if h.min() < -1e30 or torch.isnan(h).any():
        raise ValueError("activations are not finite")
    return h * 2
""",
    "and": """
def f(h: torch.Tensor):
    if not (torch.isfinite(h).all() and (h.abs() < 1e30).all()):
        raise ValueError("activations are not finite")
    return h * 2
""",
}


@pytest.mark.parametrize("form", sorted(RAISE_FORMS))
def test_validation_branch_forms_become_a_device_assert(form):
    """bool(t), t.item(), and `or`/`and` of tensor tests: the same truth, checked on the device."""
    original, fixed, source = fixed_pair(RAISE_FORMS[form], expect=UNSAFE, code="DYN202")
    assert "_assert_async(" in source and "raise" not in source.split("def f", 1)[1]
    for good in (torch.tensor([1.0, 2.0]), torch.tensor([-3.0])):
        assert_same(original(good), fixed(good))
    raised = 0
    for bad in (torch.tensor([1.0, float("nan")]), torch.tensor([float("-inf")]), torch.tensor(float("nan"))):
        try:
            original(bad)
        except ValueError as exc:
            assert "not finite" in str(exc)
            raised += 1
            with pytest.raises(RuntimeError, match="not finite"):  # the documented difference
                fixed(bad)
        else:
            assert_same(original(bad), fixed(bad))
    assert raised >= 2


# --------------------------------------------------------------------------- compilation
def _compile_args(name):
    x = torch.tensor([[1.5, -2.0, 3.0], [0.5, 4.0, float("nan")], [2.0, 2.0, -1.0]])
    y = torch.tensor([1.0, -1.0, 1.0])
    labels = torch.tensor([1, 0, 2])
    return {
        "gaudi_a": (GAUDI_A, SAFE, (x[:, :1], labels)),
        "gaudi_a_known": (GAUDI_A_KNOWN_RANKS, SAFE, (torch.randn(3, 7), labels)),
        "gaudi_b": (GAUDI_B, UNSAFE, (y, y * 2, torch.tensor([0, -1, 2]))),
        "gaudi_b_proven": (GAUDI_B_PROVEN, SAFE, (x,)),
        "span_cast": (SPAN_CAST, SAFE, (x, y)),
        "span_quiet": (SPAN_QUIET, SAFE, (x, y)),
        "span_loop": (SPAN_LOOP, SAFE, (x, y)),
        "span_masked_select": (SPAN_MASKED_SELECT, SAFE, (x, x)),
        "span_indices": (SPAN_INDICES, SAFE, (x, y)),
        "row_sum": (ROW_SUM, SAFE, (x, labels)),
        "same_shape_dim0": (SAME_SHAPE_DIM0, SAFE, (x, labels)),
        "linear": (LINEAR, SAFE, (x, y)),
        "product3": (PRODUCT3, SAFE, (x, y)),
        "sums3": (SUMS3, SAFE, (x, y)),
        "nansum": (NANSUM, SAFE, (x, y)),
        "masked_copy": (MASKED_COPY, UNSAFE, (x.clone(), x * 2, y)),
        "count": ("def f(x: torch.Tensor, y: torch.Tensor):\n    m = y > 0\n    return x.sum() / len(x[m])\n",
                  SAFE, (x, y)),
        "raise_branch": (RAISE_BRANCH, UNSAFE, (y,)),
        "mean_float32_span": (MEAN_OF_FULL_PRECISION["prophetnet_span"], SAFE, (x, torch.tensor([-100, 1, 2]))),
        "sort_indices_mask": (SORT_INDICES_MASK, SAFE, (x.nan_to_num(), torch.tensor([[1], [0], [2]]))),
        **{f"raise_{form}": (body, UNSAFE, (y,)) for form, body in RAISE_FORMS.items()},
    }[name]


COMPILED = ["gaudi_a", "gaudi_a_known", "gaudi_b", "gaudi_b_proven", "span_cast", "span_quiet", "span_loop",
            "span_masked_select", "span_indices", "row_sum", "same_shape_dim0", "linear", "product3", "sums3",
            "nansum", "masked_copy", "count", "raise_branch", "mean_float32_span", "sort_indices_mask",
            *(f"raise_{form}" for form in sorted(RAISE_FORMS))]


@pytest.mark.parametrize("name", COMPILED)
def test_fixed_snippet_compiles_without_graph_break_and_original_breaks(name):
    body, expect, args = _compile_args(name)
    original, fixed, _ = fixed_pair(body, expect=expect)
    torch._dynamo.reset()
    with torch._dynamo.error_on_graph_break(True):
        result = torch.compile(fixed, backend="eager")(*[a.clone() for a in args])
    assert_same(fixed(*[a.clone() for a in args]), result)
    torch._dynamo.reset()
    with pytest.raises(torch._dynamo.exc.Unsupported):
        with torch._dynamo.error_on_graph_break(True):
            torch.compile(original, backend="eager")(*[a.clone() for a in args])
    torch._dynamo.reset()


def test_source_of_each_snippet_is_dedented():
    for body in (GAUDI_A, GAUDI_B, SPAN_CAST, ROW_SUM, MASKED_COPY, RAISE_BRANCH):
        assert textwrap.dedent(body) == body
