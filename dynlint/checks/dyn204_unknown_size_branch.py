"""DYN204 unknown-size-branch (opt-in): a branch on a tensor size not known to vary.

DYN201's check, for the sizes the code does not show to vary (``x.shape[1]``,
``x.size(-1)``, a name bound to one): often fixed by the model's configuration
(channels, classes, keypoints), sometimes a length that does vary.  Reported
only when selected by its code.
"""

from __future__ import annotations

from dynlint.analysis.variation import UNKNOWN
from dynlint.checks import Scope, rule
from dynlint.checks.dyn201_size_branch import size_branch

RULE = rule("DYN204", "unknown-size-branch", "A branch on a tensor size that may vary between steps",
            scope=Scope.STEP, opt_in=True)


@RULE.on_branch
def check(a, test, body) -> None:
    if size_branch(a, test, body) == UNKNOWN:
        a.report(RULE, test, "branch on a tensor's size (a dimension the code does not show to vary): one more "
                 "compile each time the size crosses the condition, if it varies between steps")
