"""Differential fuzzing of the safe fixes (see tests/fixfuzz.py): generated programs must give the
same results and gradients after ``dynlint fix`` as before, or be left unchanged.

Bounded and derandomized here; bench/fuzz_fixes.py runs the same property longer with random seeds.
"""

from __future__ import annotations

import pytest

pytest.importorskip("torch")
from hypothesis import HealthCheck, given, settings  # noqa: E402

import fixfuzz  # noqa: E402

BOUNDED = settings(max_examples=150, deadline=None, derandomize=True, database=None,
                   suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])


@pytest.mark.parametrize("family", sorted(fixfuzz.FAMILIES))
def test_safe_fixes_keep_results_on_generated_programs(family):
    @BOUNDED
    @given(program=fixfuzz.programs(family), args=fixfuzz.inputs(family))
    def run(program, args):
        fixfuzz.check_program(program, args)

    run()


def test_the_generator_reaches_the_fixes_it_is_meant_to_test():
    """Not vacuous: every use form, with every operator, gets a safe fix in a plain program."""
    for use in fixfuzz.USES:
        for op in ("+", "-", "*") if use == "product" else ("*",):
            programs = [fixfuzz.Program(mask=mask, placement="none", mutation="values", use=use, op=op,
                                        partner="scaled") for mask in ("param", "derived", "flat", "derived_flat")]
            assert any(fixfuzz.fix_program(p) is not None for p in programs), programs[0].source()


_CANCELLING = dict(
    h=[[0, 0, 0, 0], [0, 0, 0, 0], [0, 0, 0, -2147483648], [-2147483648, 2147483647, 1, 2147483647]],
    g=[[0] * 4] * 4, y=[[-1.0] * 4] * 4, w=[0])


def _inputs(h, g, y, w, dtype=None):
    import torch  # noqa: PLC0415

    return fixfuzz.Inputs(torch.tensor(h, dtype=dtype or torch.int32), torch.tensor(g, dtype=dtype or torch.int32),
                          torch.tensor(y), torch.tensor(w, dtype=torch.int32), False)


def test_a_float_difference_of_summation_order_alone_is_accepted_and_counted():
    """Found by bench/fuzz_fixes.py (family 'means', seed 11): int32 extremes cast to float32
    cancel, and the 5 selected values sum to 1 while the 16 values of where(m, h, 0) sum to 0
    (h[m].float().mean() 0.2, the rewrite 0.0).  Computed in float64 both give 0.2: the rewrite
    is exact up to the order of a float sum, as the rule documents say; the fuzzer accepts such a
    difference only when the float64 versions of both programs agree, and counts it."""
    for use in ("mean_float", "linear"):
        program = fixfuzz.Program(mask="derived", placement="none", mutation="values", use=use, op="*")
        before = len(fixfuzz.ROUNDING_ONLY)
        assert fixfuzz.check_program(program, _inputs(**_CANCELLING))
        assert len(fixfuzz.ROUNDING_ONLY) == before + 1, use


def test_a_wrong_result_is_still_a_mismatch_when_float64_disagrees_too():
    import pytest as _pytest  # noqa: PLC0415
    import torch  # noqa: PLC0415

    program = fixfuzz.Program(mask="param", placement="none", mutation="values", use="mean_float", op="*")
    original = fixfuzz._load(program.source())
    wrong = fixfuzz._load(program.source().replace("h[m].float().mean()", "(h.float() * m).sum() / m.sum()"))
    args = _inputs([[1.0, float("nan")], [2.0, 0.0]], [[0.0] * 2] * 2, [[1.0, -1.0], [1.0, 1.0]], [0],
                   dtype=torch.float32)  # NaN outside the mask: (x * m) is NaN, the mean is 1.0
    with _pytest.raises(fixfuzz.Mismatch):
        fixfuzz.compare(original, wrong, args)
    assert not fixfuzz.rounding_only(program.source(), program.source().replace(
        "h[m].float().mean()", "(h.float() * m).sum() / m.sum()"), args)
