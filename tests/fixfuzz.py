"""Differential fuzzing of ``dynlint fix``: generated programs, run before and after their safe fixes.

A program is a small function ``f(h, g, y, w, flag)`` built from choices that
stress the same-shape proofs behind the safe fixes:

* how the mask is written: a local name bound to a mask of another tensor
  (``m = y > 0``), a local name derived from ``h`` itself (``m = h != 0``, also
  through another local), inline (``h[h != 0]``), or rebound under a branch;
* where ``h`` changes shape relative to the masked reduction: before it, after
  it, after it inside a loop (the back-edge), under a branch, inside a closure
  that rebinds it with ``nonlocal``; and how: rebinding (``h = h[..., None] * w``,
  ``h = h.unsqueeze(-1)``), in-place (``unsqueeze_``, ``resize_``, ``t_``,
  ``h.data = ...``), or values only (``h = h * 2``);
* which reduction the fix rewrites: ``h[m].sum()``, ``torch.sum(h[m])``,
  ``masked_select`` (method and function, also after ``.mul(g)``), the
  product/sum form ``(h[m] OP g[m]).sum()`` with ``+``, ``-``, ``*`` (also with
  three terms), indexing by ``torch.where(m)`` / ``m.nonzero(as_tuple=True)``, a
  nonzero count in a true division; and (issue 11) ``h[m].sum(0)``, linear
  wrappers (``(h[m].float() * 2 - 1).sum()``), ``nansum``, a count of the
  selection in a true division, row indices (``h[torch.where(m)[0]]``,
  ``index_select(0, m.nonzero().squeeze(1))``) of a mask of known rank 1
  (``m = y.view(-1) > 0``), and dynamic spans: the selection bound to a name,
  transformed, rebound, and reduced in a later statement; means of values cast
  to float32/float64 (``h[m].float().mean()``, also through a span);
* inputs: every dtype (bool, uint8, int32/64, float16/32/64, bfloat16), ranks 1
  and 2 (square matrices, columns), broadcasting partners ``g`` of shape
  ``(N,)``, ``(N, 1)``, ``(N, N)``, NaN/±inf and integer extremes, empty, full,
  single-element and random masks.

``check_program`` applies dynlint's **safe** fixes and runs original and fixed
code on the same inputs: both must give equal results (dtype, shape, values;
NaN equal to NaN) and equal gradients for floating-point inputs, or the fixed
file must be unchanged.  Float results are equal up to the order of a float sum:
a difference that the float64 versions of both programs (inputs and casts
widened) do not show is rounding (``rounding_only``; int32 extremes cast to
float32 cancel: 1 vs 0), accepted and recorded in ``ROUNDING_ONLY``.  An input on which the original raises ``IndexError``
(a mask whose shape does not match the indexed tensor) is an invalid program
run and is skipped; any other error of the original must also be an error of
the fixed code (``bool - bool`` raises, and must keep raising).

Used by tests/test_fix_fuzz.py (bounded, derandomized, in the default test run)
and bench/fuzz_fixes.py (longer random runs).
"""

from __future__ import annotations

import textwrap
from dataclasses import dataclass
from functools import lru_cache

import torch
from hypothesis import strategies as st

from dynlint.api import check_source
from dynlint.fixer import fix_source

FLOATS = (torch.float16, torch.bfloat16, torch.float32, torch.float64)
INTS = (torch.uint8, torch.int32, torch.int64)
DTYPES = FLOATS + INTS + (torch.bool,)
SPECIALS = (float("nan"), float("inf"), float("-inf"))

# mask name -> (prelude lines, mask expression at the use)
MASKS = {
    "param": (["m = y > 0"], "m"),
    "derived": (["m = h != 0"], "m"),
    "derived_or_nan": (["m = (h > 0) | torch.isnan(h)"], "m"),
    "derived_chain": (["d = h * 2", "m = d != 0"], "m"),
    "inline_derived": ([], "h != 0"),
    "inline_param": ([], "y > 0"),
    "rebound": (["m = y > 0"], "m"),  # plus `if flag: m = h != 0` before the use
    "flat": (["m = y.view(-1) > 0"], "m"),  # rank 1, known: a row mask of h (or the wrong size)
    "derived_flat": (["h = h.reshape(-1)", "m = h != 0"], "m"),  # rank 1 and h's shape, both known
}

MUTATIONS = {
    "index_none": "h = h[..., None] * w",
    "unsqueeze": "h = h.unsqueeze(-1)",
    "unsqueeze_": "h.unsqueeze_(-1)",
    "resize_": "h.resize_(h.numel(), 1)",
    "t_": "h.t_()",
    "data": "h.data = h.data.unsqueeze(-1)",
    "values": "h = h * 2",
}

SIGNATURE = "h: torch.Tensor, g: torch.Tensor, y: torch.Tensor, w: torch.Tensor, flag: bool"
PLACEMENTS = ("none", "before", "after", "loop_after", "loop_before", "while_after", "branch_before",
              "closure_before", "closure_loop")

USES = {
    "sum": "acc = acc + h[{m}].sum()",
    "torch_sum": "acc = acc + torch.sum(h[{m}])",
    "masked_select": "acc = acc + h.masked_select({m}).sum()",
    "torch_masked_select": "acc = acc + torch.masked_select(h, {m}).sum()",
    "mul_masked_select": "acc = acc + h.mul({partner}).masked_select({m}).sum()",
    "product": "acc = acc + (h[{m}] {op} {partner}[{m}]).sum()",
    "index_where": "acc = acc + h[torch.where({m})].sum()",
    "index_nonzero": "acc = acc + h[({m}).nonzero(as_tuple=True)].sum()",
    "count_division": "acc = acc + h.float().sum() / len(h.nonzero())",
    # issue 11: reductions over dim 0, linear wrappers, trees of terms, nansum, counts of selections
    "sum0": "acc = acc + h[{m}].sum(0).sum()",
    "linear": "acc = acc + (h[{m}].float() * 2 - 1).sum()",
    "neg_div": "acc = acc + (-h[{m}].double() / 4).sum()",
    "tree": "acc = acc + (h[{m}] {op} {partner}[{m}] {op} h[{m}]).sum()",
    "nansum": "acc = acc + h[{m}].nansum()",
    "count_selection": "acc = acc + h.float().sum() / len(h[{m}])",
    "row_index": "acc = acc + h[torch.where({m})[0]].sum()",
    "index_select": "acc = acc + h.index_select(0, ({m}).nonzero().squeeze(1)).sum()",
    # issue 11: dynamic spans (several statements, inlined and removed by the fix)
    "span": "s = h[{m}]\nt = s * 2\nacc = acc + t.sum()",
    "span_rebind": "s = h[{m}]\ns = s.float()\nacc = acc + s.sum()",
    "span_indices": "idx = torch.where({m})\nacc = acc + h[idx].sum()",
    "span_product": "fa = h[{m}]\nfb = {partner}[{m}]\nacc = acc + (fa {op} fb).sum()",
    # means of values proven float32/float64 (safe since the mean fix learned dtypes)
    "mean_float": "acc = acc + h[{m}].float().mean()",
    "mean_double": "acc = acc + (h[{m}].double() * 2).mean()",
    "span_mean": "s = h.float()[{m}]\nacc = acc + s.mean()",
}
SPAN_USES = ("span", "span_rebind", "span_indices", "span_product")
MEAN_USES = ("mean_float", "mean_double", "span_mean")
ROW_USES = ("sum0", "row_index", "index_select", "sum", "span")

# the second operand of the product form and of .mul(): another tensor, or one computed from h
PARTNERS = {
    "g": ([], "g"),
    "same": ([], "h"),
    "scaled": ([], "(h * 2)"),
    "cast": ([], "h.bool()"),
    "bound": (["p = h.bool()"], "p"),
}

_REBINDING = ("index_none", "unsqueeze", "data")
_IN_PLACE = ("unsqueeze_", "resize_", "t_")
_ALL = dict(masks=tuple(MASKS), uses=tuple(USES), placements=PLACEMENTS, mutations=tuple(MUTATIONS),
            ops=("+", "-", "*"), partners=tuple(PARTNERS), dtypes=DTYPES, partner_shape="any")

# name -> what the family draws from (everything not named: as in "mixed")
FAMILIES = {
    "mixed": _ALL,
    # a mask reused across a loop back-edge after its tensor changed shape
    "loop_back_edge": {**_ALL, "uses": ("sum", "torch_sum", "index_where", "index_nonzero", "product"),
                       "placements": ("loop_after", "while_after", "closure_loop"),
                       "mutations": _REBINDING + _IN_PLACE, "ops": ("*",)},
    # the tensor rebound by a closure (nonlocal) or reshaped in place before the use
    "closure_and_in_place": {**_ALL, "uses": ("sum", "torch_sum", "index_where", "index_nonzero"),
                             "placements": ("before", "branch_before", "closure_before"),
                             "mutations": _REBINDING + _IN_PLACE},
    # the product/sum form with bool operands (same shapes; bool - bool raising: "mixed")
    "bool_product": {**_ALL, "masks": ("param", "inline_param"), "uses": ("product",), "placements": ("none",),
                     "mutations": ("values",), "ops": ("+", "*"), "dtypes": (torch.bool,), "partner_shape": "same"},
    # the product/sum form with broadcasting factors (non-bool): mostly another tensor g, whose
    # shape no fix can know; partners computed from h have h's shape
    "broadcast_product": {**_ALL, "masks": ("param", "inline_param"), "uses": ("product", "tree", "span_product"),
                          "placements": ("none",), "mutations": ("values",), "dtypes": FLOATS + INTS,
                          "partners": ("g", "g", "g", "scaled", "cast"), "partner_shape": "broadcast"},
    # issue 11: spans across every placement and shape change (the inlined operands move to the end)
    "spans": {**_ALL, "uses": SPAN_USES},
    # issue 11: means of float32/float64 values (a sum over the mask divided by its count)
    "means": {**_ALL, "uses": MEAN_USES},
    # issue 11: row masks of a known rank (sum over dim 0, row indices, index_select)
    "rows": {**_ALL, "masks": ("flat", "flat", "derived_flat", "derived_flat", "param", "derived"), "uses": ROW_USES},
}


@dataclass(frozen=True)
class Program:
    mask: str
    placement: str
    mutation: str
    use: str
    op: str
    partner: str = "g"

    def source(self) -> str:
        prelude, m = MASKS[self.mask]
        partner_prelude, partner = PARTNERS[self.partner]
        if "{partner}" in USES[self.use]:
            prelude = prelude + partner_prelude
        use = USES[self.use].format(m=m, op=self.op, partner=partner).split("\n")
        indented = [f"    {line}" for line in use]
        mutate = MUTATIONS[self.mutation]
        body: list[str] = []
        if self.mask == "rebound":
            body += ["if flag:", "    m = h != 0"]
        placement = self.placement
        if placement == "none":
            body += use
        elif placement == "before":
            body += [mutate, *use]
        elif placement == "after":
            body += [*use, mutate]
        elif placement == "loop_after":
            body += ["for _ in range(2):", *indented, f"    {mutate}"]
        elif placement == "loop_before":
            body += ["for _ in range(2):", f"    {mutate}", *indented]
        elif placement == "while_after":
            body += ["i = 0", "while i < 2:", *indented, f"    {mutate}", "    i += 1"]
        elif placement == "branch_before":
            body += ["if flag:", f"    {mutate}", *use]
        elif placement == "closure_before":
            body += _closure(mutate) + ["step()", *use]
        elif placement == "closure_loop":
            body += _closure(mutate) + ["for _ in range(2):", *indented, "    step()"]
        else:  # pragma: no cover - a new placement without a rendering
            raise ValueError(placement)
        lines = ["import torch", "", "", f"def f({SIGNATURE}):"]
        lines += [f"    {line}" for line in prelude + ["acc = 0"] + body + ["return acc"]]
        return "\n".join(lines) + "\n"


def _closure(mutate: str) -> list[str]:
    return ["def step():", "    nonlocal h", f"    {mutate}"]


@dataclass
class Inputs:
    h: torch.Tensor
    g: torch.Tensor
    y: torch.Tensor
    w: torch.Tensor
    flag: bool

    def __repr__(self) -> str:
        def show(t):
            return f"tensor({t.tolist()}, dtype={t.dtype})"
        return f"Inputs(h={show(self.h)}, g={show(self.g)}, y={show(self.y)}, w={show(self.w)}, flag={self.flag})"


# --------------------------------------------------------------------------- strategies
def programs(family: str = "mixed"):
    spec = FAMILIES[family]
    return st.builds(Program, mask=st.sampled_from(spec["masks"]), placement=st.sampled_from(spec["placements"]),
                     mutation=st.sampled_from(spec["mutations"]), use=st.sampled_from(spec["uses"]),
                     op=st.sampled_from(spec["ops"]), partner=st.sampled_from(spec["partners"]))


@st.composite
def tensors(draw, shape, dtype):
    numel = 1
    for size in shape:
        numel *= size
    if dtype == torch.bool:
        values = draw(st.lists(st.booleans(), min_size=numel, max_size=numel))
        return torch.tensor(values, dtype=torch.bool).reshape(shape)
    if dtype.is_floating_point:
        element = st.one_of(st.integers(-3, 3).map(float), st.floats(-50, 50, allow_nan=False, width=16),
                            st.sampled_from(SPECIALS))
        values = draw(st.lists(element, min_size=numel, max_size=numel))
        return torch.tensor(values, dtype=torch.float64).reshape(shape).to(dtype)
    info = torch.iinfo(dtype)
    element = st.one_of(st.integers(max(info.min, -3), 3), st.sampled_from([info.min, info.max]))
    values = draw(st.lists(element, min_size=numel, max_size=numel))
    return torch.tensor(values, dtype=dtype).reshape(shape)


@st.composite
def masks(draw, shape):
    numel = 1
    for size in shape:
        numel *= size
    style = draw(st.sampled_from(["random", "empty", "full", "single"]))
    if style == "random":
        values = draw(st.lists(st.booleans(), min_size=numel, max_size=numel))
    else:
        values = [style == "full"] * numel
        if style == "single" and numel:
            values[draw(st.integers(0, numel - 1))] = True
    return torch.tensor(values, dtype=torch.bool).reshape(shape)


@st.composite
def inputs(draw, family: str = "mixed"):
    spec = FAMILIES[family]
    dtypes = spec["dtypes"]
    n = draw(st.integers(0, 4))
    h_dtype = draw(st.sampled_from(dtypes))
    g_dtype = draw(st.sampled_from([h_dtype, h_dtype, *dtypes]))
    shapes = [(n,), (n, 1), (n, n)]
    h_shape = draw(st.sampled_from(shapes))
    if spec["partner_shape"] == "same":
        g_shape = h_shape
    elif spec["partner_shape"] == "broadcast":
        g_shape = draw(st.sampled_from([s for s in shapes if s != h_shape]))
    else:
        g_shape = draw(st.sampled_from([h_shape, *shapes]))
    h = draw(tensors(h_shape, h_dtype))
    g = draw(tensors(g_shape, g_dtype))
    y_shape = draw(st.sampled_from([h_shape, h_shape[:1]]))
    y = torch.where(draw(masks(y_shape)), 1.0, -1.0)
    w = draw(tensors((1,), h_dtype))
    return Inputs(h, g, y, w, draw(st.booleans()))


# --------------------------------------------------------------------------- the property
BACKWARD_FAILED = "backward failed"


class Mismatch(AssertionError):
    """The fixed program disagrees with the original."""


@lru_cache(maxsize=4096)
def fix_program(program: Program) -> str | None:
    """The program after its safe fixes, or None when no fix applies."""
    source = program.source()
    fixed, applied = fix_source(source, check_source(source), unsafe=False)
    return fixed if applied and fixed != source else None


def _load(source: str):
    namespace: dict = {}
    exec(compile(source, "<fuzzed>", "exec"), namespace)
    return namespace["f"]


def _run(fn, args: Inputs, grad: bool):
    h, g = args.h.clone(), args.g.clone()
    leaves = []
    if grad:
        h, g = (t.requires_grad_(True) if t.is_floating_point() else t for t in (h, g))
        leaves = [t for t in (h, g) if t.requires_grad]
        call = [t * 1 if t.requires_grad else t for t in (h, g)]  # in-place ops need non-leaves
    else:
        call = [h, g]
    try:
        result = fn(*call, args.y.clone(), args.w.clone(), args.flag)
    except Exception as exc:  # noqa: BLE001 - any error is an outcome to compare
        return None, exc, None
    if not grad:
        return result, None, None
    if not (isinstance(result, torch.Tensor) and result.requires_grad):
        return result, None, [None] * len(leaves)
    try:
        result.backward()
    except RuntimeError:
        return result, None, BACKWARD_FAILED
    return result, None, [leaf.grad for leaf in leaves]


def _same(expected, actual, what: str) -> None:
    if isinstance(expected, torch.Tensor) != isinstance(actual, torch.Tensor):
        raise Mismatch(f"{what}: {expected!r} vs {actual!r}")
    if not isinstance(expected, torch.Tensor):
        if expected != actual:
            raise Mismatch(f"{what}: {expected!r} vs {actual!r}")
        return
    if expected.dtype != actual.dtype or expected.shape != actual.shape:
        raise Mismatch(f"{what}: {expected.dtype} {tuple(expected.shape)} vs {actual.dtype} {tuple(actual.shape)}")
    if expected.dtype in (torch.float16, torch.bfloat16):
        tolerance = dict(rtol=2e-2, atol=2e-1)
    elif expected.dtype.is_floating_point:
        tolerance = dict(rtol=1e-5, atol=1e-4)
    else:
        tolerance = dict(rtol=0, atol=0)
    try:
        torch.testing.assert_close(actual.detach(), expected.detach(), equal_nan=True, **tolerance)
    except AssertionError as exc:
        raise Mismatch(f"{what}: {expected!r} vs {actual!r}\n{exc}") from None


def compare(original, fixed, args: Inputs) -> None:
    """Raise Mismatch when the fixed function disagrees with the original on ``args``."""
    for grad in (False, True):
        if grad and not (args.h.is_floating_point() or args.g.is_floating_point()):
            return
        want, want_error, want_grads = _run(original, args, grad)
        got, got_error, got_grads = _run(fixed, args, grad)
        mode = "gradient run" if grad else "value"
        if want_error is not None:
            if isinstance(want_error, IndexError):
                return  # the original indexes with a mask of the wrong shape: not a valid run
            if got_error is None:
                raise Mismatch(f"{mode}: the original raises {type(want_error).__name__}: {want_error}; "
                               f"the fixed code returns {got!r}")
            continue
        if got_error is not None:
            raise Mismatch(f"{mode}: the original returns {want!r}; the fixed code raises "
                           f"{type(got_error).__name__}: {got_error}")
        _same(want, got, mode)
        if not grad or want_grads is BACKWARD_FAILED:
            continue  # autograd refused the original (e.g. after `h.data = ...`): no gradient to compare
        if got_grads is BACKWARD_FAILED:
            raise Mismatch("gradient run: the original backpropagates, the fixed code's backward raises")
        for index, (a, b) in enumerate(zip(want_grads, got_grads)):
            if a is None and b is None:
                continue
            if a is None or b is None:
                raise Mismatch(f"gradient {index}: {a!r} vs {b!r}")
            _same(a, b, f"gradient {index}")


# Examples whose float results differed only by the order of a float sum (see ``rounding_only``):
# (original source, inputs) of each, for the bench to count.
ROUNDING_ONLY: list[tuple[str, str]] = []

# float64 versions of a program: every cast to a narrower float type becomes a cast to float64
_WIDENED = ((".float()", ".double()"), (".half()", ".double()"), (".bfloat16()", ".double()"),
            ("torch.float32", "torch.float64"), ("torch.float16", "torch.float64"))


def _widened(source: str) -> str:
    for narrow, wide in _WIDENED:
        source = source.replace(narrow, wide)
    return source


def rounding_only(original_source: str, fixed_source: str, args: Inputs) -> bool:
    """Whether original and fixed programs that disagree on ``args`` differ only by the rounding of
    a float sum taken in another order: ``where(m, x, 0).sum()`` adds the selected values in
    another grouping than ``x[m].sum()``, which under cancellation of large values (int32
    extremes cast to float32) changes more than the last bits of the result.  True when the
    original returns a floating-point tensor, no input is bool (float64 would change what bool
    arithmetic means), and the float64 versions of both programs (inputs and casts widened)
    agree, values and gradients."""
    if args.h.dtype == torch.bool or args.g.dtype == torch.bool:
        return False
    value, error, _ = _run(_load(original_source), args, False)
    if error is not None or not (isinstance(value, torch.Tensor) and value.is_floating_point()):
        return False
    wide = Inputs(args.h.double(), args.g.double(), args.y.double(), args.w, args.flag)
    try:
        compare(_load(_widened(original_source)), _load(_widened(fixed_source)), wide)
    except Mismatch:
        return False
    return True


def check_program(program: Program, args: Inputs) -> bool:
    """Raise Mismatch (with both sources) when the safe-fixed program disagrees; True when a fix
    applied.  A float difference that the float64 versions of both programs do not show is the
    order of a float sum (``rounding_only``): accepted, and recorded in ``ROUNDING_ONLY``."""
    fixed_source = fix_program(program)
    if fixed_source is None:
        return False
    original_source = program.source()
    try:
        compare(_load(original_source), _load(fixed_source), args)
    except Mismatch as exc:
        if rounding_only(original_source, fixed_source, args):
            ROUNDING_ONLY.append((original_source, repr(args)))
            return True
        raise Mismatch(f"{exc}\n--- original\n{original_source}--- fixed\n{fixed_source}--- inputs\n{args!r}") \
            from None
    return True


def describe(program: Program) -> str:
    return textwrap.indent(program.source(), "    ")
