"""DYN401 dataloader-partial-batch: a DataLoader that keeps the short last batch."""

from __future__ import annotations

import ast

from dynlint import fixes, ops
from dynlint.analysis.syntax import argument, is_constant
from dynlint.checks import Scope, rule

RULE = rule("DYN401", "dataloader-partial-batch", "DataLoader keeps a short last batch",
            scope=Scope.ANYWHERE, fix=fixes.fix_dataloader)


@RULE.on_call(functions=ops.DATALOADERS)
def check(a, node: ast.Call, qual, method, receiver) -> None:
    if any(k.arg is None for k in node.keywords) or any(isinstance(arg, ast.Starred) for arg in node.args):
        return  # **kwargs / *args: cannot tell
    positions = ops.DATALOADER_POSITIONS
    batch_sampler = argument(node, positions["batch_sampler"], "batch_sampler")
    if batch_sampler is not None and not is_constant(batch_sampler, None):
        return
    batch_size = argument(node, positions["batch_size"], "batch_size")
    if batch_size is None or is_constant(batch_size, 1) or is_constant(batch_size, None):
        return
    drop_last = argument(node, positions["drop_last"], "drop_last")
    if drop_last is not None and not is_constant(drop_last, False):
        return
    a.report(RULE, node, "DataLoader keeps the short last batch, one more input shape to compile; "
             "pass drop_last=True (or pad the last batch, see dynlint.runtime.buckets)")
