"""Shared by the dynamic-output-op units (DYN102–DYN105): ops listed in ``dynlint.ops``."""

from __future__ import annotations

from dynlint import ops
from dynlint.analysis.kinds import TENSORISH
from dynlint.analysis.placement import made_on_cpu


def functions_of(code: str) -> frozenset[str]:
    return frozenset(name for name, (c, _) in ops.DYNAMIC_FUNCTIONS.items() if c == code)


def methods_of(code: str) -> frozenset[str]:
    return frozenset(name for name, (c, _, _) in ops.DYNAMIC_METHODS.items() if c == code)


def report_function(a, rule, node, qual: str) -> None:
    if qual in ops.THIRD_PARTY_DYNAMIC and a.is_project(qual):
        return  # the project's own multiclass_nms (or unpad_input): its body is checked, and says where the shape goes dynamic
    _, advice = ops.DYNAMIC_FUNCTIONS[qual]
    short = qual.replace("torch.nn.functional.", "F.")
    # `torch.unique(cpu_labels)`: a CPU tensor's shape is read on the host, no device sync
    cpu = bool(node.args) and made_on_cpu(a, node.args[0])
    if qual in ops.DYNAMO_SKIPPED:
        a.report(rule, node, f"`{short}` is never traced by dynamo: a graph break whatever its sizes; {advice}",
                 cpu_value=cpu)
    else:
        a.report(rule, node, f"`{short}` has a data-dependent output shape; {advice}", cpu_value=cpu)


def report_method(a, rule, node, method: str, receiver) -> None:
    _, advice, tensor_specific = ops.DYNAMIC_METHODS[method]
    # a keyword only torch's spelling takes (`x.nonzero(as_tuple=True)`, `x.unique(return_counts=True)`:
    # numpy's and pandas' have none) says the receiver is a tensor
    torch_keywords = any(k.arg in ops.TORCH_ONLY_KEYWORDS.get(method, ()) for k in node.keywords)
    if receiver in TENSORISH or tensor_specific or (receiver is None and torch_keywords):
        a.report(rule, node, f"`.{method}()` has a data-dependent output shape; {advice}",
                 cpu_value=made_on_cpu(a, node.func.value))
