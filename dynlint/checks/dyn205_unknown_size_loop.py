"""DYN205 unknown-size-loop (opt-in): a loop over a tensor size not known to vary.

DYN203's check, for the sizes the code does not show to vary (``range(x.shape[1])``,
``x.split(1, dim=-1)``, iterating a transpose): often a count fixed by the model's
configuration (keypoints, sources, feature levels), sometimes a length that does
vary.  Reported only when selected by its code.

DYN203's unit reports it (``dyn203_size_loop.check``): the two rules split one
judgement, made once per loop.
"""

from __future__ import annotations

from dynlint.checks import Scope, rule

RULE = rule("DYN205", "unknown-size-loop", "A loop over a tensor size that may vary between steps",
            scope=Scope.STEP, opt_in=True, reported_by="DYN203")

NOTE = " (a dimension the code does not show to vary)"
