"""Differential tests of the fixes: run the ORIGINAL and the FIXED snippet under torch.

Each snippet goes through the real pipeline (dynlint.api.check_source finds it,
dynlint.fixer.fix_source rewrites it); both versions are executed on generated
inputs covering float16/32/64, bfloat16, int32/64, uint8 and bool, NaN/±inf
inside and outside the mask, empty/full/single-element masks, row masks on
square matrices and gradients.  Safe fixes must agree everywhere; unsafe fixes
must show the documented difference that earns the label.  Every fixed snippet
must compile with no graph break (and every original must break).
"""

from __future__ import annotations

import textwrap

import pytest

torch = pytest.importorskip("torch")
from hypothesis import HealthCheck, example, given, settings, strategies as st  # noqa: E402

from dynlint.api import check_source  # noqa: E402
from dynlint.config import Settings  # noqa: E402
from dynlint.diagnostics import Applicability  # noqa: E402
from dynlint.fixer import fix_source  # noqa: E402

FLOATS = [torch.float16, torch.bfloat16, torch.float32, torch.float64]
INTS = [torch.int32, torch.int64, torch.uint8]
ALL_DTYPES = FLOATS + INTS + [torch.bool]
SPECIAL = [float("nan"), float("inf"), float("-inf")]
# A row mask on a square matrix: the case a plain torch.where(m, x, 0) gets wrong.
ROW_MASK_CASE = (torch.arange(9.0).reshape(3, 3), torch.tensor([1.0, -1.0, 1.0]))
EXAMPLES = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])


# --------------------------------------------------------------------------- pipeline helpers
def fixed_pair(body: str, *, expect: Applicability, code: str | None = None):
    """(original function, fixed function, fixed source) for a snippet defining ``f``."""
    source = "import torch\n\n" + textwrap.dedent(body)
    findings = check_source(source)
    fixable = [f for f in findings if f.fix is not None]
    assert fixable, f"no fix offered for:\n{source}\nfindings: {findings}"
    assert {f.fix.applicability for f in fixable} == {expect}, [(f.code, f.fix) for f in fixable]
    if code is not None:
        assert {f.code for f in fixable} == {code}
    new_source, applied = fix_source(source, findings, unsafe=True)
    assert applied and new_source != source
    remaining = [f.code for f in check_source(new_source) if f.code.startswith("DYN1")]
    assert remaining == [], f"fixed code still dynamic: {remaining}\n{new_source}"
    return _load(source), _load(new_source), new_source


def _load(source: str):
    namespace: dict = {}
    exec(compile(source, "<snippet>", "exec"), namespace)
    return namespace["f"]


def _outcome(fn, *args):
    try:
        return fn(*args), None
    except (RuntimeError, IndexError) as exc:
        return None, type(exc)


def assert_same(expected, actual):
    if isinstance(expected, torch.Tensor):
        assert isinstance(actual, torch.Tensor), (expected, actual)
        assert actual.dtype == expected.dtype and actual.shape == expected.shape, (expected, actual)
        if expected.dtype in (torch.float16, torch.bfloat16):
            tolerance = dict(rtol=2e-2, atol=2e-1)
        elif expected.dtype.is_floating_point:
            tolerance = dict(rtol=1e-5, atol=1e-4)
        else:
            tolerance = dict(rtol=0, atol=0)
        torch.testing.assert_close(actual, expected, equal_nan=True, **tolerance)
    else:
        assert type(actual) is type(expected) and actual == expected, (expected, actual)


def compare_with_grad(original, fixed, x, *others):
    """Values must match; for float inputs the gradient with respect to x too."""
    expected, expected_error = _outcome(original, x, *others)
    actual, actual_error = _outcome(fixed, x, *others)
    assert expected_error is None and actual_error is None, (expected_error, actual_error)
    assert_same(expected, actual)
    if x.dtype.is_floating_point:
        grads = []
        for fn in (original, fixed):
            leaf = x.detach().clone().requires_grad_(True)
            fn(leaf, *others).backward()
            grads.append(leaf.grad)
        torch.testing.assert_close(grads[1], grads[0], equal_nan=True)


# --------------------------------------------------------------------------- input generation
@st.composite
def tensors(draw, shape, dtypes=ALL_DTYPES, specials=True):
    dtype = draw(st.sampled_from(dtypes))
    numel = 1
    for size in shape:
        numel *= size
    if dtype == torch.bool:
        values = draw(st.lists(st.booleans(), min_size=numel, max_size=numel))
        return torch.tensor(values, dtype=torch.bool).reshape(shape)
    if dtype.is_floating_point:
        element = st.floats(-50, 50, allow_nan=False, width=16)
        if specials:
            element = st.one_of(element, element, st.sampled_from(SPECIAL))
        values = draw(st.lists(element, min_size=numel, max_size=numel))
        return torch.tensor(values, dtype=torch.float64).reshape(shape).to(dtype)
    low, high = (0, 255) if dtype == torch.uint8 else (-100, 100)
    values = draw(st.lists(st.integers(low, high), min_size=numel, max_size=numel))
    return torch.tensor(values, dtype=dtype).reshape(shape)


@st.composite
def masks(draw, shape):
    """Boolean masks: random, empty, full, or a single element."""
    numel = 1
    for size in shape:
        numel *= size
    style = draw(st.sampled_from(["random", "empty", "full", "single"]))
    if style == "random":
        values = draw(st.lists(st.booleans(), min_size=numel, max_size=numel))
    elif style in ("empty", "full"):
        values = [style == "full"] * numel
    else:
        values = [False] * numel
        if numel:
            values[draw(st.integers(0, numel - 1))] = True
    return torch.tensor(values, dtype=torch.bool).reshape(shape)


@st.composite
def matrix_and_mask(draw, dtypes=ALL_DTYPES, specials=True):
    """x of rank 1-3 (square when rank 2: the row-mask trap) and a mask over its
    leading dims (rank 0 up to x's rank), given as a float tensor y with m = y > 0."""
    n = draw(st.integers(0, 4))
    rank = draw(st.integers(1, 3))
    shape = (n,) * rank
    x = draw(tensors(shape, dtypes, specials))
    mask_rank = draw(st.integers(0, rank))
    m = draw(masks(shape[:mask_rank]))
    return x, torch.where(m, 1.0, -1.0)


SAME_SHAPE_SUM = """
def f(x: torch.Tensor):
    return x[(x > 1) | torch.isnan(x)].sum()
"""

ANY_MASK_SUM = """
def f(x: torch.Tensor, y: torch.Tensor):
    m = y > 0
    return x[m].sum()
"""

TORCH_SUM_OF_MASK = """
def f(x: torch.Tensor, y: torch.Tensor):
    m = y > 0
    return torch.sum(x[m])
"""

MASKED_SELECT_SUM = """
def f(x: torch.Tensor, y: torch.Tensor):
    return torch.masked_select(x, y > 0).sum()
"""

METHOD_MASKED_SELECT_SUM = """
def f(x: torch.Tensor):
    return x.masked_select(~(x > 1)).sum()
"""

PRODUCT_SUM = """
def f(a: torch.Tensor, y: torch.Tensor):
    k = y > 0
    b = a * 3
    return (a[k] * b[k]).sum()
"""

PRODUCT_ADD = """
def f(a: torch.Tensor, y: torch.Tensor):
    k = y > 0
    return (a[k] + a.bool()[k]).sum()
"""

PRODUCT_SUB = """
def f(a: torch.Tensor, y: torch.Tensor):
    k = y > 0
    b = a * 2
    return (b[k] - a[k]).sum()
"""

INDEX_BY_WHERE_SUM = """
def f(x: torch.Tensor):
    return x[torch.where(x > 1)].sum()
"""

INDEX_BY_NONZERO_SUM = """
def f(x: torch.Tensor):
    return x[(x > 1).nonzero(as_tuple=True)].sum()
"""


# --------------------------------------------------------------------------- safe fixes
@EXAMPLES
@given(st.integers(0, 4).flatmap(lambda n: tensors((n, n))))
def test_same_shape_mask_sum_is_exact(x):
    original, fixed, source = _SAME_SHAPE
    assert "torch.where((x > 1) | torch.isnan(x), x, 0).sum()" in source
    compare_with_grad(original, fixed, x)


@EXAMPLES
@given(matrix_and_mask())
@example(ROW_MASK_CASE)
def test_any_rank_mask_sum_is_exact(case):
    original, fixed, _ = _ANY_MASK
    compare_with_grad(original, fixed, *case)


@EXAMPLES
@given(matrix_and_mask())
@example(ROW_MASK_CASE)
def test_torch_sum_of_mask_is_exact(case):
    original, fixed, _ = _TORCH_SUM
    compare_with_grad(original, fixed, *case)


@st.composite
def broadcastable_pair(draw):
    """masked_select broadcasts input and mask together (either may be the smaller one)."""
    n = draw(st.integers(0, 4))
    shapes = [(n, n), (n,), (1, n), (n, 1), ()]
    x = draw(tensors(draw(st.sampled_from(shapes))))
    y = draw(tensors(draw(st.sampled_from(shapes)), dtypes=[torch.float32], specials=False))
    return x, y


@EXAMPLES
@given(broadcastable_pair())
def test_masked_select_sum_is_exact(case):
    original, fixed, _ = _MASKED_SELECT
    compare_with_grad(original, fixed, *case)


PURE_METHOD_MASKED_SELECT = """
def f(loss: torch.Tensor, w: torch.Tensor, y: torch.Tensor):
    m = y > 0
    return loss.mul(w).masked_select(m).sum()
"""


@EXAMPLES
@given(broadcastable_pair(), st.sampled_from([(), (1,), (3,)]))
def test_masked_select_after_a_pure_method_is_exact(case, w_shape):
    """issue 13: `.mul` has no side effects (ops.PURE_TENSOR_METHODS), so evaluating the mask
    first changes nothing: the fix is safe."""
    original, fixed, source = _PURE_METHOD
    assert "torch.where(m, loss.mul(w), 0).sum()" in source
    x, y = case
    w = torch.full(w_shape, 3, dtype=x.dtype) if x.dtype != torch.bool else torch.ones(w_shape, dtype=torch.bool)
    if x.dim() < len(w_shape) or (x.dim() and w_shape and x.shape[-1] not in (1, 3)):
        return
    want, error = _outcome(original, x, w, y)
    if error is not None:
        return  # shapes that do not broadcast
    compare_with_grad(lambda a, b: original(a, w, b), lambda a, b: fixed(a, w, b), x, y)


@pytest.mark.parametrize("call", ["loss.add_(w)", "loss.bernoulli()", "helper(loss)", "loss.mul(w, out=w)"])
def test_masked_select_after_a_call_with_effects_is_unsafe(call):
    _, _, source = fixed_pair(f"""
        def helper(t):
            return t

        def f(loss: torch.Tensor, w: torch.Tensor, y: torch.Tensor):
            m = y > 0
            return {call}.masked_select(m).sum()
        """, expect=Applicability.UNSAFE, code="DYN104")


@EXAMPLES
@given(tensors((3, 3)))
def test_method_masked_select_sum_is_exact(x):
    original, fixed, _ = _METHOD_MASKED_SELECT
    compare_with_grad(original, fixed, x)


@EXAMPLES
@given(matrix_and_mask())
@example(ROW_MASK_CASE)
@example((torch.tensor([True, True, False]), torch.tensor([1.0, 1.0, -1.0])))
def test_product_forms_with_factors_of_one_shape_are_exact(case):
    for pair in (_PRODUCT, _PRODUCT_ADD, _PRODUCT_SUB):
        original, fixed, _ = pair
        x, y = case
        want, want_error = _outcome(original, x, y)
        if want_error is not None:  # bool - bool raises: so must the fixed code
            assert _outcome(fixed, x, y)[1] is not None
            continue
        compare_with_grad(original, fixed, x, y)


def test_product_forms_keep_each_operator_on_the_operands_own_dtypes():
    """+ and - are rewritten with one where around the operation: bool + bool is a logical
    or, bool - bool raises; a where per factor would promote bools to int64 first."""
    _, _, add_source = _PRODUCT_ADD
    assert "torch.where(k.reshape(k.shape+(1,)*(a.ndim-k.ndim)),a+a.bool(),0).sum()" in "".join(add_source.split())
    _, _, product_source = _PRODUCT
    assert product_source.count("torch.where(") == 2


def test_product_fix_keeps_gradients_finite_where_single_where_does_not():
    """The measured reason for one where per factor under `*`: inf outside the mask."""
    _, fixed, _ = _PRODUCT
    a = torch.tensor([1.0, float("inf")], requires_grad=True)
    y = torch.tensor([1.0, -1.0])
    fixed(a, y).backward()
    assert torch.equal(a.grad, torch.tensor([6.0, 0.0]))
    a2 = a.detach().clone().requires_grad_(True)
    torch.where(y > 0, a2 * (a2 * 3), 0).sum().backward()
    assert torch.isnan(a2.grad).any()


# ---- issue 13: product forms whose rewrite changed results
BOOL_SUM_OF_SELF = """
def f(p: torch.Tensor, y: torch.Tensor):
    sel = y > 0
    return (p[sel] + p[sel]).sum()
"""

BOOL_DIFFERENCE_OF_SELF = """
def f(p: torch.Tensor, y: torch.Tensor):
    sel = y > 0
    return (p[sel] - p[sel]).sum()
"""


def test_bool_operands_of_the_sum_form_keep_the_logical_or():
    """(p[sel] + q[sel]).sum() with bool operands counts the ORs; a where per factor
    (bool -> int64) added integers instead."""
    original, fixed, _ = fixed_pair(BOOL_SUM_OF_SELF, expect=Applicability.SAFE, code="DYN101")
    p = torch.tensor([True, True, False, True])
    y = torch.tensor([1.0, 1.0, 1.0, -1.0])
    assert original(p, y) == 2
    assert_same(original(p, y), fixed(p, y))


def test_bool_operands_of_the_difference_form_keep_raising():
    original, fixed, _ = fixed_pair(BOOL_DIFFERENCE_OF_SELF, expect=Applicability.SAFE, code="DYN101")
    p = torch.tensor([True, False])
    y = torch.tensor([1.0, 1.0])
    with pytest.raises(RuntimeError):
        original(p, y)
    with pytest.raises(RuntimeError):
        fixed(p, y)
    x = torch.tensor([1.5, 2.0])
    assert_same(original(x, y), fixed(x, y))


BROADCAST_FACTORS = {
    "+": "def f(a: torch.Tensor, b: torch.Tensor, y: torch.Tensor):\n    k = y > 0\n    return (a[k] + b[k]).sum()\n",
    "-": "def f(a: torch.Tensor, b: torch.Tensor, y: torch.Tensor):\n    k = y > 0\n    return (a[k] - b[k]).sum()\n",
    "*": "def f(a: torch.Tensor, b: torch.Tensor, y: torch.Tensor):\n    k = y > 0\n    return (a[k] * b[k]).sum()\n",
}


@pytest.mark.parametrize("operator", sorted(BROADCAST_FACTORS))
def test_factors_of_unknown_shapes_make_the_product_form_unsafe(operator):
    """An (N, 1) and an (N,) factor: the selections broadcast to (K, K), the rewrite to
    (N, N).  Off by N/K for + and -; for * a zero outside the mask meets an inf inside it
    (NaN instead of inf).  Offered, but only as unsafe."""
    original, fixed, _ = fixed_pair(BROADCAST_FACTORS[operator], expect=Applicability.UNSAFE, code="DYN101")
    a = torch.tensor([[1.0], [2.0], [4.0]])
    b = torch.tensor([float("inf") if operator == "*" else 10.0, 20.0, 40.0])  # inf inside the mask
    y = torch.tensor([1.0, -1.0, 1.0])
    want, got = original(a, b, y), fixed(a, b, y)
    assert not torch.equal(want, got), (want, got)
    same_shape = torch.tensor([1.0, 2.0, 4.0])
    assert_same(original(same_shape, b, y), fixed(same_shape, b, y))  # equal when the shapes agree


@EXAMPLES
@given(tensors((3, 3)))
def test_index_by_where_and_nonzero_sum_are_exact(x):
    for pair in (_INDEX_BY_WHERE, _INDEX_BY_NONZERO):
        original, fixed, _ = pair
        compare_with_grad(original, fixed, x)


# ---- issue 13: a mask bound from the tensor, used after the tensor may have changed shape
_LOOP = """
def f(h: torch.Tensor, w: torch.Tensor):
    valid = h != 0
    acc = 0
    for _ in range(2):
        acc = acc + h[valid].sum()
        {change}
    return acc
"""
_WHILE = """
def f(h: torch.Tensor, w: torch.Tensor):
    valid = h != 0
    acc = 0
    i = 0
    while i < 2:
        acc = acc + h[valid].sum()
        {change}
        i += 1
    return acc
"""
_CLOSURE = """
def f(h: torch.Tensor, w: torch.Tensor):
    valid = h != 0

    def grow():
        nonlocal h
        {change}

    grow()
    return h[valid].sum()
"""
_STRAIGHT = """
def f(h: torch.Tensor, w: torch.Tensor):
    valid = h != 0
    {change}
    return h[valid].sum()
"""
STALE_MASKS = {
    "loop_back_edge": _LOOP.format(change="h = h[..., None] * w"),
    "while_back_edge": _WHILE.format(change="h = h[..., None] * w"),
    "loop_unsqueeze_": _LOOP.format(change="h.unsqueeze_(-1)"),
    "closure_nonlocal": _CLOSURE.format(change="h = h[..., None] * w"),
    "unsqueeze_": _STRAIGHT.format(change="h.unsqueeze_(-1)"),
    "resize_": _STRAIGHT.format(change="h.resize_(h.numel(), 1)"),
    "t_": _STRAIGHT.format(change="h.t_()"),
    "data": _STRAIGHT.format(change="h.data = h.data.unsqueeze(-1)"),
    "alias_unsqueeze_": _STRAIGHT.format(change="g = h\n    g.unsqueeze_(-1)"),
}


@pytest.mark.parametrize("name", sorted(STALE_MASKS))
def test_a_mask_bound_before_a_shape_change_is_not_taken_for_the_tensors_shape(name):
    """The same-shape proof must hold on every path to the use: loop back-edges, closures
    rebinding the tensor, in-place shape changes (through any alias) all break it.  The fix
    then aligns the mask explicitly (exact for every valid mask rank) instead of trusting it."""
    original, fixed, source = fixed_pair(STALE_MASKS[name], expect=Applicability.SAFE, code="DYN101")
    assert "torch.where(valid, h, 0)" not in source
    w = torch.tensor([2.0])
    for h in (torch.tensor([1.0, 0.0, 2.0]), torch.tensor([[1.0, 0.0], [3.0, -1.0]]), torch.tensor([0, 5, 0, 7])):
        if name == "t_" and h.dim() != 2:
            continue
        want, want_error = _outcome(original, h.clone(), w)
        got, got_error = _outcome(fixed, h.clone(), w)
        assert (want_error is None) == (got_error is None), (want_error, got_error)
        if want_error is None:
            assert_same(want, got)
        if h.is_floating_point() and name not in ("resize_", "data"):  # autograd refuses the original
            grads = []
            for fn in (original, fixed):
                leaf = h.clone().requires_grad_(True)
                fn(leaf * 1, w).backward()
                grads.append(leaf.grad)
            torch.testing.assert_close(grads[1], grads[0])


KEPT_MASKS = {
    "loop_without_change": _LOOP.format(change="acc = acc * 2"),
    "change_after_the_use": """
def f(h: torch.Tensor, w: torch.Tensor):
    valid = h != 0
    total = h[valid].sum()
    h = h[..., None] * w
    return total + h.sum()
""",
    "rebound_by_the_use_itself": """
def f(h: torch.Tensor, w: torch.Tensor):
    valid = h != 0
    h = h[valid].sum()
    return h
""",
    "values_change_in_the_loop": _LOOP.format(change="h = h * w"),
}


@pytest.mark.parametrize("name", sorted(KEPT_MASKS))
def test_a_mask_still_valid_at_the_use_is_used_as_is(name):
    """No loss of precision where the proof does hold: ``valid`` is passed through unchanged."""
    original, fixed, source = fixed_pair(KEPT_MASKS[name], expect=Applicability.SAFE, code="DYN101")
    if name == "values_change_in_the_loop":  # h is rebound (same shape, but not provably)
        assert "valid.reshape(" in source
    else:
        assert "torch.where(valid, h, 0).sum()" in source
    h = torch.tensor([[1.0, 0.0], [3.0, float("nan")]])
    compare_with_grad(original, fixed, h, torch.tensor([2.0]))


def test_nan_and_inf_outside_the_mask_do_not_leak():
    original, fixed, _ = _ANY_MASK
    x = torch.tensor([[1.0, float("nan")], [float("inf"), 2.0]])
    y = torch.tensor([[1.0, -1.0], [-1.0, 1.0]])
    assert original(x, y) == fixed(x, y) == 3.0


def test_row_mask_on_square_matrix():
    """x[m] with a row mask selects rows; a plain torch.where(m, x, 0) would broadcast
    m over columns and silently give another answer.  The fix must not."""
    original, fixed, _ = _ANY_MASK
    x = torch.arange(9.0).reshape(3, 3)
    y = torch.tensor([1.0, -1.0, -1.0])
    assert original(x, y) == fixed(x, y) == 3.0  # row 0: 0 + 1 + 2
    assert torch.where(y > 0, x, 0).sum() == 9.0  # column 0: the trap the fix avoids


def test_integer_sum_keeps_integer_dtype():
    original, fixed, source = _SAME_SHAPE
    assert ", 0)" in source and "0.0" not in source
    x = torch.tensor([3, -2, 5], dtype=torch.int32)
    assert original(x).dtype == fixed(x).dtype == torch.int64
    assert original(x) == fixed(x) == 8


# --------------------------------------------------------------------------- unsafe fixes
MEAN = """
def f(x: torch.Tensor, y: torch.Tensor):
    m = y > 0
    return x[m].mean()
"""

SAME_SHAPE_MEAN = """
def f(x: torch.Tensor):
    return x[x > 1].mean()
"""


@EXAMPLES
@given(matrix_and_mask(dtypes=FLOATS))
@example(ROW_MASK_CASE)
def test_mean_fix_matches_for_float_inputs(case):
    original, fixed, source = _MEAN
    compare_with_grad(original, fixed, *case)


@EXAMPLES
@given(tensors((3, 3), dtypes=FLOATS))
def test_same_shape_mean_fix_matches_for_float_inputs(x):
    original, fixed, source = _SAME_SHAPE_MEAN
    assert source.rstrip().endswith("/ (x > 1).sum()")
    compare_with_grad(original, fixed, x)


def test_mean_fix_is_unsafe_because_integer_inputs_no_longer_raise():
    original, fixed, _ = _MEAN
    x = torch.tensor([1, 2, 4])
    y = torch.tensor([1.0, 1.0, -1.0])
    with pytest.raises(RuntimeError):
        original(x, y)
    assert fixed(x, y) == 1.5


@pytest.mark.parametrize("reduction", ["max", "min", "amax", "amin"])
def test_extreme_fix_matches_for_nonempty_masks_and_differs_for_empty(reduction):
    original, fixed, source = fixed_pair(f"""
        def f(x: torch.Tensor, y: torch.Tensor):
            m = y > 0
            return x[m].{reduction}()
        """, expect=Applicability.UNSAFE, code="DYN101")
    for dtype in ALL_DTYPES:
        for x in _extreme_inputs(dtype):
            for y in (torch.tensor([1.0, -1.0, -1.0]), torch.tensor([-1.0, 1.0, 1.0]), torch.ones(3)):
                assert_same(original(x, y), fixed(x, y))
            empty = -torch.ones(3)
            expected, error = _outcome(original, x, empty)
            assert error is not None, f"{dtype}: empty selection should raise in the original"
            assert fixed(x, empty).dtype == x.dtype  # the fill value: the documented difference


def _extreme_inputs(dtype):
    if dtype == torch.bool:
        return [torch.tensor([[True, False], [False, False], [True, True]])]
    if dtype.is_floating_point:
        base = torch.tensor([[1.0, -2.0], [float("-inf"), float("-inf")], [float("inf"), float("nan")]])
        return [base.to(dtype), torch.full((3, 2), float("-inf"), dtype=dtype),
                torch.full((3, 2), float("inf"), dtype=dtype)]
    info = torch.iinfo(dtype)
    return [torch.tensor([[info.min, info.max], [0, 1], [info.max, info.min]], dtype=dtype)]


def test_extreme_fix_gradients_match_without_ties():
    original, fixed, _ = fixed_pair("""
        def f(x: torch.Tensor, y: torch.Tensor):
            m = y > 0
            return x[m].max()
        """, expect=Applicability.UNSAFE)
    x = torch.tensor([[1.0, 5.0], [7.0, float("nan")], [2.0, 3.0]])
    y = torch.tensor([1.0, -1.0, 1.0])
    compare_with_grad(original, fixed, x, y)


COUNTS = {
    "len": "len(x.nonzero())",
    "shape": "x.nonzero().shape[0]",
    "size": "torch.nonzero(x).size(0)",
    "argwhere": "len(torch.argwhere(x))",
}


@pytest.mark.parametrize("form", sorted(COUNTS))
def test_count_fix_gives_the_value_as_a_0d_tensor(form):
    original, fixed, source = fixed_pair(f"""
        def f(x: torch.Tensor):
            return {COUNTS[form]}
        """, expect=Applicability.UNSAFE, code="DYN102")
    assert "torch.count_nonzero(x)" in source
    for dtype in ALL_DTYPES:
        for x in (torch.zeros(3, 3, dtype=dtype), torch.ones(2, 3, dtype=dtype), torch.tensor(1).to(dtype)):
            want, got = original(x), fixed(x)
            assert isinstance(want, int) and isinstance(got, torch.Tensor) and got.dim() == 0
            assert got.item() == want


DIVIDED_COUNT = """
def f(x: torch.Tensor):
    return x.sum() / x.nonzero().shape[0]
"""


@EXAMPLES
@given(tensors((3, 2)))
def test_count_in_true_division_with_a_tensor_of_x_is_safe(x):
    original, fixed, source = _DIVIDED_COUNT
    assert "x.sum() / torch.count_nonzero(x)" in source
    assert_same(original(x), fixed(x))


# --------------------------------------------------------------------------- DYN401 / DYN501
def test_drop_last_fix_drops_the_partial_batch():
    source = textwrap.dedent("""
        import torch
        from torch.utils.data import DataLoader

        loader = DataLoader(list(range(10)), batch_size=4, shuffle=True)
        """)
    findings = check_source(source)
    assert [f.fix.applicability for f in findings if f.code == "DYN401"] == [Applicability.UNSAFE]
    fixed_source, _ = fix_source(source, findings, unsafe=True)
    assert "DataLoader(list(range(10)), batch_size=4, shuffle=True, drop_last=True)" in fixed_source
    batches = {}
    for name, text in (("original", source), ("fixed", fixed_source)):
        namespace: dict = {}
        exec(text, namespace)
        batches[name] = [len(b) for b in namespace["loader"]]
    assert batches == {"original": [4, 4, 2], "fixed": [4, 4]}


def test_dynamic_true_removal_keeps_results():
    source = textwrap.dedent("""
        import torch

        def g(x):
            return (x * 2).sum()

        f = torch.compile(g, backend="eager", dynamic=True)
        """)
    findings = check_source(source, settings=Settings(select=Settings().select | {"DYN501"}))  # opt-in
    assert [f.fix.applicability for f in findings if f.code == "DYN501"] == [Applicability.UNSAFE]
    fixed_source, _ = fix_source(source, findings, unsafe=True)
    assert 'torch.compile(g, backend="eager")' in fixed_source
    torch._dynamo.reset()
    original, fixed = _load(source), _load(fixed_source)
    for n in (3, 5):
        x = torch.arange(float(n))
        assert original(x) == fixed(x)
    torch._dynamo.reset()


# --------------------------------------------------------------------------- compilation
def _compile_inputs():
    x = torch.tensor([[1.5, -2.0, 3.0], [0.5, 4.0, float("nan")], [2.0, 2.0, -1.0]])
    y = torch.tensor([1.0, -1.0, 1.0])
    return x, y


COMPILE_CASES = {
    "same_shape_sum": (SAME_SHAPE_SUM, Applicability.SAFE, lambda x, y: (x,)),
    "any_mask_sum": (ANY_MASK_SUM, Applicability.SAFE, lambda x, y: (x, y)),
    "torch_sum": (TORCH_SUM_OF_MASK, Applicability.SAFE, lambda x, y: (x, y)),
    "masked_select": (MASKED_SELECT_SUM, Applicability.SAFE, lambda x, y: (x, y)),
    "method_masked_select": (METHOD_MASKED_SELECT_SUM, Applicability.SAFE, lambda x, y: (x,)),
    "pure_method_masked_select": (PURE_METHOD_MASKED_SELECT, Applicability.SAFE, lambda x, y: (x, y + 2, y)),
    "product": (PRODUCT_SUM, Applicability.SAFE, lambda x, y: (x, y)),
    "product_add": (PRODUCT_ADD, Applicability.SAFE, lambda x, y: (x, y)),
    "product_sub": (PRODUCT_SUB, Applicability.SAFE, lambda x, y: (x, y)),
    "index_where": (INDEX_BY_WHERE_SUM, Applicability.SAFE, lambda x, y: (x,)),
    "index_nonzero": (INDEX_BY_NONZERO_SUM, Applicability.SAFE, lambda x, y: (x,)),
    "mean": (MEAN, Applicability.UNSAFE, lambda x, y: (x, y)),
    "same_shape_mean": (SAME_SHAPE_MEAN, Applicability.UNSAFE, lambda x, y: (x,)),
    "max": ("def f(x: torch.Tensor, y: torch.Tensor):\n    m = y > 0\n    return x[m].max()\n", Applicability.UNSAFE, lambda x, y: (x, y)),
    "amin": ("def f(x: torch.Tensor, y: torch.Tensor):\n    m = y > 0\n    return x[m].amin()\n", Applicability.UNSAFE, lambda x, y: (x, y)),
    "count": ("def f(x: torch.Tensor):\n    return len(x.nonzero())\n", Applicability.UNSAFE, lambda x, y: (x,)),
    "divided_count": (DIVIDED_COUNT, Applicability.SAFE, lambda x, y: (x,)),
}


@pytest.mark.parametrize("name", sorted(COMPILE_CASES))
def test_fixed_snippet_compiles_without_graph_break_and_original_breaks(name):
    body, expect, arguments = COMPILE_CASES[name]
    original, fixed, _ = fixed_pair(body, expect=expect)
    args = arguments(*_compile_inputs())
    torch._dynamo.reset()
    with torch._dynamo.error_on_graph_break(True):
        result = torch.compile(fixed, backend="eager")(*args)
    want = fixed(*args)
    assert_same(want, result) if isinstance(want, torch.Tensor) else None
    torch._dynamo.reset()
    with pytest.raises(torch._dynamo.exc.Unsupported):
        with torch._dynamo.error_on_graph_break(True):
            torch.compile(original, backend="eager")(*args)
    torch._dynamo.reset()


class _Pair:
    """fixed_pair(...) built on first use (once), so one failing snippet fails its own tests only."""

    def __init__(self, body: str, *, expect: Applicability, code: str):
        self.arguments = (body, expect, code)
        self.value = None

    def __iter__(self):
        if self.value is None:
            body, expect, code = self.arguments
            self.value = fixed_pair(body, expect=expect, code=code)
        return iter(self.value)


_SAME_SHAPE = _Pair(SAME_SHAPE_SUM, expect=Applicability.SAFE, code="DYN101")
_ANY_MASK = _Pair(ANY_MASK_SUM, expect=Applicability.SAFE, code="DYN101")
_TORCH_SUM = _Pair(TORCH_SUM_OF_MASK, expect=Applicability.SAFE, code="DYN101")
_MASKED_SELECT = _Pair(MASKED_SELECT_SUM, expect=Applicability.SAFE, code="DYN104")
_METHOD_MASKED_SELECT = _Pair(METHOD_MASKED_SELECT_SUM, expect=Applicability.SAFE, code="DYN104")
_PURE_METHOD = _Pair(PURE_METHOD_MASKED_SELECT, expect=Applicability.SAFE, code="DYN104")
_PRODUCT = _Pair(PRODUCT_SUM, expect=Applicability.SAFE, code="DYN101")
_PRODUCT_ADD = _Pair(PRODUCT_ADD, expect=Applicability.SAFE, code="DYN101")
_PRODUCT_SUB = _Pair(PRODUCT_SUB, expect=Applicability.SAFE, code="DYN101")
_INDEX_BY_WHERE = _Pair(INDEX_BY_WHERE_SUM, expect=Applicability.SAFE, code="DYN102")
_INDEX_BY_NONZERO = _Pair(INDEX_BY_NONZERO_SUM, expect=Applicability.SAFE, code="DYN102")
_MEAN = _Pair(MEAN, expect=Applicability.UNSAFE, code="DYN101")
_SAME_SHAPE_MEAN = _Pair(SAME_SHAPE_MEAN, expect=Applicability.UNSAFE, code="DYN101")
_DIVIDED_COUNT = _Pair(DIVIDED_COUNT, expect=Applicability.SAFE, code="DYN102")
