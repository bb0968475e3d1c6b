"""DYN402 pad-to-longest: padding each batch to its longest item gives one shape per batch."""

from __future__ import annotations

import ast

from dynlint import ops
from dynlint.analysis.syntax import innermost_function, is_constant, keyword, keyword_node
from dynlint.checks import Scope, rule

RULE = rule("DYN402", "pad-to-longest", "Padding to the longest item gives one shape per batch",
            scope=Scope.ANYWHERE, fix="fix_padding")


@RULE.on_call(functions=ops.PAD_SEQUENCE)
def check_pad_sequence(a, node, qual, method, receiver) -> None:
    if _padded_to_fixed_later(a, node) or _never_read(a, node) or _builds_a_tensor_dataset(a, node):
        return
    a.report(RULE, node, "`pad_sequence` pads to the longest item, so every batch can have a new shape; "
             "pad to fixed buckets (dynlint.runtime.buckets) or a fixed max length")


@RULE.on_call(functions=ops.PADDING_COLLATORS)
def check_collator(a, node: ast.Call, qual, method, receiver) -> None:
    multiple = keyword(node, "pad_to_multiple_of")
    padding = keyword(node, "padding")
    if multiple is not None and not is_constant(multiple, None):
        return
    if padding is not None and not (isinstance(padding, ast.Constant) and padding.value in ops.PAD_TO_LONGEST_VALUES):
        return
    name = qual.rsplit(".", 1)[-1]
    a.report(RULE, node, f"`{name}` pads each batch to its longest item, one shape per batch; pass "
             "pad_to_multiple_of=<n> or padding=\"max_length\" (see dynlint.runtime.buckets)")


@RULE.on_call(keywords={"padding"})
def check_padding_keyword(a, node: ast.Call, qual, method, receiver) -> None:
    padding_keyword = keyword_node(node, "padding")
    padding = padding_keyword.value
    if not isinstance(padding, ast.Constant) or not (padding.value is True or padding.value == "longest"):
        return
    if qual is not None and (qual.startswith("torch.") or qual in ops.PADDING_COLLATORS):
        return
    if not _tokenizer_like(node.func) or _only_feeds_a_warning(a, node) or _pads_no_text(node) \
            or _pads_fixed_text(a, node) or _never_read(a, node) or _builds_a_tensor_dataset(a, node):
        return
    from dynlint import fixes  # the fix machinery, imported only when a check reaches a call like this

    if fixes.pads_to_a_fixed_length(node):
        advice = 'use padding="max_length"'
    elif keyword(node, "max_length") is not None and not is_constant(keyword(node, "max_length"), None):
        advice = 'use padding="max_length" with truncation=True (without it longer items stay longer)'
    else:
        advice = 'pass padding="max_length" with max_length=<n> and truncation=True, or pad_to_multiple_of=<n>'
    a.report(RULE, padding_keyword, f"padding={padding.value!r} pads to the longest item, one shape per batch; "
             f"{advice}", fix_node=node)


def _padded_to_fixed_later(a, node: ast.Call) -> bool:
    """``ids = pad_sequence(items, ...)``, then ``ids = F.pad(ids, (0, seq_len - ids.shape[1]))`` or
    ``ids, labels = pad_seq_len(ids, labels, self.seq_len + 1)`` (torchtitan's multimodal collator): the longest
    item's length is only an intermediate shape; a later binding of the same name pads it again to a length that
    is not its own (a helper named for padding given another length, or ``F.pad`` by a target minus its size)."""
    target = _assigned_name(a, node)
    function = innermost_function(a.stack)
    if target is None or function is None:
        return False
    for statement in ast.walk(function):
        if not isinstance(statement, ast.Assign) or statement.lineno <= node.end_lineno:
            continue
        names = [t for target_node in statement.targets for t in ast.walk(target_node) if isinstance(t, ast.Name)]
        if not any(n.id == target for n in names) or not isinstance(statement.value, ast.Call):
            continue
        if _pads_to_other_length(a, statement.value, target):
            return True
    return False


def _never_read(a, node: ast.Call) -> bool:
    """``model_inputs = tokenizer(texts, padding=True)`` and nothing in the function reads ``model_inputs``
    (simpletransformers' ONNX prediction branch, which feeds batches of another dataset): the padded batch
    reaches nothing.  Only a local name of a function that declares it neither global nor nonlocal."""
    target = _assigned_name(a, node)
    function = innermost_function(a.stack)
    if target is None or function is None:
        return False
    for sub in ast.walk(function):
        if isinstance(sub, ast.Name) and sub.id == target and not isinstance(sub.ctx, ast.Store):
            return False
        if isinstance(sub, (ast.Global, ast.Nonlocal)) and target in sub.names:
            return False
    return True


def _builds_a_tensor_dataset(a, node: ast.Call) -> bool:
    """``all_input_ids = pad_sequence([...], batch_first=True)``, then ``TensorDataset(all_input_ids, ...)``
    in the same function (simpletransformers' ``load_and_cache_examples``): the whole dataset is padded once to
    its longest item, and every batch the loader slices from it has that one length."""
    target = _assigned_name(a, node)
    function = innermost_function(a.stack)
    if target is None or function is None:
        return False
    for sub in ast.walk(function):
        if isinstance(sub, ast.Call) and sub.lineno > node.lineno and a.qualname(sub.func) in ops.TENSOR_DATASETS \
                and any(isinstance(arg, ast.Name) and arg.id == target for arg in sub.args):
            return True
    return False


def _assigned_name(a, node: ast.Call) -> str | None:
    """``name`` of ``name = <node>``, or None."""
    statement = next((p for p in reversed(a.stack) if isinstance(p, ast.stmt)), None)
    if isinstance(statement, ast.Assign) and statement.value is node and len(statement.targets) == 1 \
            and isinstance(statement.targets[0], ast.Name):
        return statement.targets[0].id
    return None


def _pads_to_other_length(a, call: ast.Call, name: str) -> bool:
    func = call.func
    called = func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else ""
    if "pad" not in called.lower() or not any(isinstance(arg, ast.Name) and arg.id == name for arg in call.args):
        return False
    if a.qualname(func) in ops.FUNCTIONAL_PAD:
        # F.pad(x, (0, n - x.shape[1])): padded up to n
        amounts = call.args[1] if len(call.args) > 1 else None
        return amounts is not None and any(
            isinstance(n, ast.BinOp) and isinstance(n.op, ast.Sub) and _reads_size_of(n.right, name)
            for n in ast.walk(amounts))
    # a helper named for padding, given a length besides the values: padding to that length
    return any(not isinstance(arg, ast.Name) and not _reads_size_of(arg, name) and not is_constant(arg, None)
               for arg in call.args[1:])


def _reads_size_of(node: ast.expr, name: str) -> bool:
    for sub in ast.walk(node):
        owner = sub.value if isinstance(sub, ast.Attribute) and sub.attr == "shape" else \
            sub.func.value if isinstance(sub, ast.Call) and isinstance(sub.func, ast.Attribute) \
            and sub.func.attr == "size" else None
        if isinstance(owner, ast.Name) and owner.id == name:
            return True
    return False


def _pads_no_text(node: ast.Call) -> bool:
    """``AutoTokenizer.from_pretrained(name, padding=True)`` stores a setting and pads nothing;
    ``processor(images=..., padding=True, return_tensors="pt")`` with no text: padding applies to text only
    (torchmetrics' CLIP scores run the image branch so)."""
    func = node.func
    if isinstance(func, ast.Attribute) and func.attr == "from_pretrained":
        return True
    keywords = {k.arg for k in node.keywords}
    return not node.args and None not in keywords and bool(keywords & _IMAGE_KEYWORDS) \
        and not keywords & _TEXT_KEYWORDS


def _pads_fixed_text(a, node: ast.Call) -> bool:
    """``tokenizer(self.prompts, padding=True)`` (Composer's Generate callback), ``tokenizer(CLASS_NAMES, ...)``,
    ``tokenizer(["a photo"], ...)``: the same texts every call, so one padded length per configuration.  A
    configured attribute (not set in the calling function), a module constant, or a display of strings."""
    texts = node.args[0] if node.args else next(
        (k.value for k in node.keywords if k.arg in _TEXT_KEYWORDS), None)
    if texts is None:
        return False
    if isinstance(texts, (ast.List, ast.Tuple)):
        return bool(texts.elts) and all(isinstance(e, ast.Constant) and isinstance(e.value, str) for e in texts.elts)
    if isinstance(texts, ast.Name):
        if _repeated_item(a.bound_value(texts.id)):
            return True  # `prompt = [self.prompt] * B` (mmpretrain's BlipCaption): B copies of one text
        return texts.id.isupper() and len(texts.id) > 1  # CLASS_NAMES: a constant, by convention
    if _repeated_item(texts):
        return True
    if isinstance(texts, ast.Attribute) and isinstance(texts.value, ast.Name) and texts.value.id == "self":
        function = innermost_function(a.stack)
        return function is not None and not any(
            isinstance(n, ast.Attribute) and isinstance(n.ctx, ast.Store) and n.attr == texts.attr
            and isinstance(n.value, ast.Name) and n.value.id == "self" for n in ast.walk(function))
    return False


def _repeated_item(value) -> bool:
    """``[text] * n`` or ``n * [text]``: one item repeated, every copy as long as the others."""
    if not isinstance(value, ast.BinOp) or not isinstance(value.op, ast.Mult):
        return False
    return any(isinstance(side, (ast.List, ast.Tuple)) and len(side.elts) == 1
               and not isinstance(side.elts[0], ast.Starred) for side in (value.left, value.right))


_IMAGE_KEYWORDS = frozenset({"images", "image", "audio", "audios", "videos", "raw_speech"})
_TEXT_KEYWORDS = frozenset({"text", "texts", "text_pair", "text_target", "input_ids", "encoded_inputs"})


def _tokenizer_like(func: ast.expr) -> bool:
    """``tokenizer(...)``, ``self.processor(...)``, ``tokenizer.pad(...)``: a name in the chain says so."""
    names = []
    while isinstance(func, (ast.Attribute, ast.Call, ast.Subscript)):
        if isinstance(func, ast.Attribute):
            names.append(func.attr)
            func = func.value
        else:
            func = func.func if isinstance(func, ast.Call) else func.value
    if isinstance(func, ast.Name):
        names.append(func.id)
    return any(hint in name.lower() for name in names for hint in ops.TOKENIZER_NAME_HINTS)


def _only_feeds_a_warning(a, node: ast.Call) -> bool:
    """``untruncated = tokenizer(..., padding="longest").input_ids`` read only to warn about
    truncation: it never reaches the model."""
    target = None
    for parent in reversed(a.stack):
        if isinstance(parent, ast.Assign):
            if len(parent.targets) == 1 and isinstance(parent.targets[0], ast.Name):
                target = parent.targets[0].id
            break
        if isinstance(parent, ast.stmt):
            return False
    function = innermost_function(a.stack)
    if target is None or function is None:
        return False
    uses = 0
    for statement in ast.walk(function):
        if not isinstance(statement, ast.If):
            continue
        if not any(isinstance(n, ast.Name) and n.id == target for n in ast.walk(statement.test)):
            continue
        warns = any(isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and n.func.attr in
                    ("warning", "warn", "warning_once", "info") for b in statement.body for n in ast.walk(b))
        if not warns:
            return False
        uses += sum(1 for n in ast.walk(statement) if isinstance(n, ast.Name) and n.id == target)
    total = sum(1 for n in ast.walk(function) if isinstance(n, ast.Name) and n.id == target
                and isinstance(n.ctx, ast.Load))
    return uses > 0 and uses == total
