"""DYN205 unknown-size-loop (opt-in): a loop over a tensor size not known to vary.

DYN203's check, for the sizes the code does not show to vary (``range(x.shape[1])``,
``x.split(1, dim=-1)``, iterating a transpose): often a count fixed by the model's
configuration (keypoints, sources, feature levels), sometimes a length that does
vary.  Reported only when selected by its code.
"""

from __future__ import annotations

from dynlint import ops
from dynlint.analysis.variation import UNKNOWN
from dynlint.checks import Scope, rule
from dynlint.checks.dyn203_size_loop import builtin_loop, builtin_message, size_loop

RULE = rule("DYN205", "unknown-size-loop", "A loop over a tensor size that may vary between steps",
            scope=Scope.STEP, opt_in=True)

_NOTE = " (a dimension the code does not show to vary)"


@RULE.on_loop
def check(a, iterable) -> None:
    found = size_loop(a, iterable)
    if found is not None and found[0] == UNKNOWN:
        a.report(RULE, iterable, found[1] + _NOTE)


@RULE.on_call(functions=ops.ITERATING_BUILTINS)
def check_builtin(a, node, qual, method, receiver) -> None:
    if builtin_loop(a, node) == UNKNOWN:
        a.report(RULE, node, builtin_message(qual) + _NOTE)
