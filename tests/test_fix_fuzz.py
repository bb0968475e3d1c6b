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
