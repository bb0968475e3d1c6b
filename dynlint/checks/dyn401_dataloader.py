"""DYN401 dataloader-partial-batch: a DataLoader that keeps the short last batch."""

from __future__ import annotations

import ast

from dynlint import ops
from dynlint.analysis.kinds import obj_class
from dynlint.analysis.syntax import argument, is_constant
from dynlint.checks import Scope, rule

RULE = rule("DYN401", "dataloader-partial-batch", "DataLoader keeps a short last batch",
            scope=Scope.ANYWHERE, fix="fix_dataloader")


@RULE.on_call(functions=ops.DATALOADERS)
def check(a, node: ast.Call, qual, method, receiver) -> None:
    if any(k.arg is None for k in node.keywords) or any(isinstance(arg, ast.Starred) for arg in node.args):
        return  # **kwargs / *args: cannot tell
    positions = ops.DATALOADER_POSITIONS
    batch_sampler = argument(node, positions["batch_sampler"], "batch_sampler")
    if batch_sampler is not None and not is_constant(batch_sampler, None):
        return
    batch_size = argument(node, positions["batch_size"], "batch_size")
    if batch_size is None or is_constant(batch_size, 1) or is_constant(batch_size, None) or _one_by_constant(a, batch_size):
        return
    drop_last = argument(node, positions["drop_last"], "drop_last")
    if drop_last is not None and not is_constant(drop_last, False):
        return
    if ops.is_test_module(a.module):
        return  # a test's loader feeds a test, not a compiled training run
    if _iterable_dataset(a, argument(node, positions["dataset"], "dataset")):
        return  # batches of what an iterator yields (an experience source, a stream): no last batch to drop
    purpose = _purpose(a, node)
    if purpose is None and drop_last is not None:
        # `drop_last=False` written out on a loader that neither shuffles nor samples: every sample, in
        # order, on purpose (torch-fidelity's feature extraction for its metrics)
        purpose = "evaluation"
    if purpose == "evaluation":
        return  # evaluation/inference: every sample counts, and the last batch compiles once
    if purpose == "training" and not _built_for_evaluation(a, node):
        a.report(RULE, node, "DataLoader keeps the short last batch, one more input shape to compile; "
                 "pass drop_last=True (or pad the last batch: dynlint.runtime.pad_last_batch)")
    else:
        # not known to be a training loader: dropping the last batch could drop predictions
        a.report(RULE, node, "DataLoader keeps the short last batch, one more input shape to compile; pad "
                 "the last batch to the batch size and drop the padded rows' outputs "
                 "(dynlint.runtime.pad_last_batch), or pass drop_last=True if this loader only feeds "
                 "training", with_fix=False)


def _one_by_constant(a, value: ast.expr) -> bool:
    """``batch_size=META_BATCH_SIZE`` or ``batch_size=self.meta_batch_size`` where the file fixes it to 1
    (``META_BATCH_SIZE = 1`` at module level; ``self.meta_batch_size = META_BATCH_SIZE``, the attribute's only
    assignment in the class): batches of one, never a short one (tabpfn's fine-tuning loader)."""
    if type(value) is ast.Attribute and type(value.value) is ast.Name and value.value.id == "self" and a.classes:
        node = a.classes[-1].node
        assigned = [sub.value for sub in ast.walk(node) if type(sub) is ast.Assign and len(sub.targets) == 1
                    and type(sub.targets[0]) is ast.Attribute and sub.targets[0].attr == value.attr
                    and type(sub.targets[0].value) is ast.Name and sub.targets[0].value.id == "self"] \
            if node is not None else []
        if len(assigned) != 1:
            return False
        value = assigned[0]
    if is_constant(value, 1):
        return True
    if type(value) is not ast.Name or a.tree is None:
        return False
    module_values = [stmt.value for stmt in getattr(a.tree, "body", ()) if type(stmt) is ast.Assign
                     and len(stmt.targets) == 1 and type(stmt.targets[0]) is ast.Name and stmt.targets[0].id == value.id]
    return len(module_values) == 1 and is_constant(module_values[0], 1)


def _iterable_dataset(a, dataset) -> bool:
    """The dataset is an instance of a project subclass of ``IterableDataset``."""
    owner = obj_class(a.kind(dataset)) if dataset is not None else None
    if owner is None:
        return False
    bases = a.ask(("bases", owner))
    return bool(bases) and not ops.ITERABLE_DATASET_BASES.isdisjoint(bases)


_EVALUATION_WORDS = ("val", "eval", "test", "predict", "infer", "inference", "pipeline")


def _purpose(a, node: ast.Call) -> str | None:
    """"training" (shuffled or sampled), "evaluation" (explicitly unshuffled, or named for
    evaluation) or None (cannot tell)."""
    shuffle = argument(node, ops.DATALOADER_POSITIONS["shuffle"], "shuffle")
    sampler = argument(node, ops.DATALOADER_POSITIONS["sampler"], "sampler")
    if type(sampler) is ast.Call and (a.qualname(sampler.func) or "").endswith(ops.SEQUENTIAL_SAMPLERS):
        return "evaluation"  # in order, once: rfdetr's predict loader over the validation set
    names = [a.scope.name]
    targets = _assigned_names(a)
    if any(_named_for_evaluation(name) for name in targets):
        return "evaluation"  # `val_loader = DataLoader(..., shuffle=True)` (chgnet): it feeds validation all the same
    if shuffle is not None and not is_constant(shuffle, True) and _named_for_evaluation(a.scope.name or ""):
        # Lightning's `def test_dataloader(self): return DataLoader(..., shuffle=self.test_shuffle)` (terratorch):
        # shuffled only if configured so, it feeds evaluation all the same
        return "evaluation"
    if shuffle is not None and not is_constant(shuffle, False):
        return "training"
    names.extend(targets)
    if any(word in name.lower() for name in names if name for word in _EVALUATION_WORDS) \
            or _evaluation_code(a, names):
        # also with a sampler: a metric's index subset, a DistributedSampler that splits the validation set
        return "evaluation"
    if sampler is not None and not is_constant(sampler, None):
        return "training"
    return "evaluation" if shuffle is not None else None


def _named_for_evaluation(name: str) -> bool:
    """A name with a word for evaluation and none for training (``val_loader``, ``test_dl``; not
    ``train_val_loader``)."""
    words = ops.name_words(name)
    return "train" not in words and not ops.EVALUATION_NAME_WORDS.isdisjoint(words)


def _evaluation_code(a, names: list) -> bool:
    """The loader is built in a function, class or module, or assigned to a name, with a word for evaluation
    in its name (mmagic's ``evaluation/metrics/base_gen_metric.py``, ``class ValDataSampler``,
    ``metric_dataloader``, a ``benchmark.py`` script)."""
    parts = [name for name in names if name] + [info.name for info in a.classes if info.name] + a.module.split(".")
    return any(word in ops.EVALUATION_NAME_WORDS for part in parts for word in ops.name_words(part))


def _built_for_evaluation(a, node: ast.Call) -> bool:
    """A shuffled or sampled loader built in code whose function, class, assigned name or module
    says evaluation, inference, prediction, a pipeline or a test: dropping its last batch could
    drop predictions, so it gets no ``drop_last=True`` fix (it is still reported)."""
    names = [a.scope.name, a.module.rsplit(".", 1)[-1]]
    names.extend(info.name for info in a.classes)
    names.extend(_assigned_names(a))
    return any(word in name.lower() for name in names if name for word in _EVALUATION_WORDS)


def _assigned_names(a) -> list[str]:
    """The names the statement being visited assigns the loader to (``val_loader = DataLoader(...)``)."""
    for parent in reversed(a.stack):
        if isinstance(parent, ast.Assign):
            return [_target_name(target) for target in parent.targets]
        if isinstance(parent, ast.stmt):
            break
    return []


def _target_name(target) -> str:
    if isinstance(target, ast.Name):
        return target.id
    if isinstance(target, ast.Attribute):
        return target.attr
    return ""
