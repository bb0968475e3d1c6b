"""DYN204 unknown-size-branch (opt-in): a branch on a tensor size not known to vary.

DYN201's check, for the sizes the code does not show to vary (``x.shape[1]``,
``x.size(-1)``, a name bound to one): often fixed by the model's configuration
(channels, classes, keypoints), sometimes a length that does vary.  Reported
only when selected by its code.

DYN201's unit reports it (``dyn201_size_branch.check``): the two rules split one
judgement, made once per branch.
"""

from __future__ import annotations

from dynlint.checks import Scope, rule

RULE = rule("DYN204", "unknown-size-branch", "A branch on a tensor size that may vary between steps",
            scope=Scope.STEP, opt_in=True, reported_by="DYN201")

MESSAGE = ("branch on a tensor's size (a dimension the code does not show to vary): one more compile each time "
           "the size crosses the condition, if it varies between steps")
