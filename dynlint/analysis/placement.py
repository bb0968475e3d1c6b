"""Where a tensor lives: values the code shows to be on the CPU.

A read of a CPU tensor (``.item()``, a branch on it, ``nonzero``) syncs no device: outside the compiled step it
is host work, whatever function it sits in.  Two kinds of evidence say a value is on the CPU:

* it was made here by a torch factory without a ``device`` (``torch.randint(0, n, (1,))``,
  ``torch.tensor([i, j])`` of Python values, ``torch.from_numpy(a)``), then indexed, combined with numbers or
  other such tensors, or passed through methods and torch functions that keep the device;
* the function moves it to the device later (``labels = labels.to(device_id)`` after the lines that read it,
  open-flamingo's label masking of a CPU batch): code moves a tensor only when it is not there yet.
"""

from __future__ import annotations

import ast

from dynlint import ops
from dynlint.analysis.kinds import DATA, NDARRAY, PY, SIZE, TENSORISH
from dynlint.analysis.syntax import accumulated_values, assigned_once_from, assigned_values, innermost_function

#: kinds of plain Python numbers (a flag, a value read from a tensor, a size)
_NUMBERS = frozenset({PY, DATA, SIZE})
#: host conversions whose operand is the tensor a test reads (``t.item() > 0``, ``float(t) < eps``)
_READ_METHODS = frozenset({"item", "tolist"})
_READ_BUILTINS = frozenset({"int", "float", "bool"})
#: builtins of one number that keep where it was read (``round(t.item())``)
_NUMBER_BUILTINS = _READ_BUILTINS | {"round", "abs"}
#: words of a name that say it holds a device (``device``, ``device_id``, ``self.dev``, ``local_rank``)
_DEVICE_WORDS = frozenset({"device", "dev", "gpu", "cuda", "rank"})
_DEVICE_STRINGS = ("cuda", "xpu", "hpu", "mps", "xla", "npu")


def made_on_cpu(a, value: ast.expr, depth: int = 0) -> bool:
    """The value is a tensor on the CPU by the evidence above, through names, indexing, arithmetic and
    comparisons with numbers, and methods and torch functions that keep the device (``x.sum()``, ``x[0]``,
    ``torch.where(x == k)``; not ``x.to(...)``/``x.cuda()``)."""
    if depth > 8:
        return False
    t = type(value)
    if t is ast.Name:
        if a.kind(value) in TENSORISH and moved_to_device_later(a, value.id):
            return True
        bound = a.bound_value(value.id) or assigned_once_from(a.stack, value.id)
        accumulated = accumulated_values(a.stack, value.id) if bound is None else None
        if accumulated is not None:
            # `token_idx = endofchunk_idx + 1`, then `token_idx += 1`: every value a CPU tensor or a number
            plain, augmented = accumulated
            return _all_on_cpu(a, plain + augmented, depth)
        every = assigned_values(a.stack, value.id) if bound is None else None
        if every and len(every) > 1 and depth < 4:
            # `visible = torch.zeros(n, dtype=torch.bool)`, then under a branch `visible = torch.roll(visible...)`:
            # every binding a CPU tensor, those made from the name itself by ops that do not move it
            fresh = [v for v in every if not any(type(n) is ast.Name and n.id == value.id for n in ast.walk(v))]
            moved = any(type(n) is ast.Call and type(n.func) is ast.Attribute and n.func.attr in ops.DEVICE_MOVING_METHODS
                        for v in every for n in ast.walk(v))
            return bool(fresh) and not moved and all(made_on_cpu(a, v, depth + 1) for v in fresh)
        if bound is None:
            # `for endofchunk_idx in endofchunk_idxs:` over a CPU tensor: each row is on the CPU
            loop = next((n for n in reversed(a.stack) if type(n) in (ast.For, ast.AsyncFor)
                         and type(n.target) is ast.Name and n.target.id == value.id), None)
            return loop is not None and a.kind(loop.iter) in TENSORISH and made_on_cpu(a, loop.iter, depth + 1)
        return made_on_cpu(a, bound, depth + 1)
    if t is ast.Subscript:
        return made_on_cpu(a, value.value, depth + 1)
    if t is ast.UnaryOp:
        return made_on_cpu(a, value.operand, depth + 1)
    if t is ast.BinOp:
        # `height_ratio * top`: the Python numbers in it move nothing; every other operand must be a CPU tensor
        return _all_on_cpu(a, (value.left, value.right), depth)
    if t is ast.Compare:
        return _all_on_cpu(a, (value.left, *value.comparators), depth)  # `labels[i] == eos_id`
    if t is not ast.Call:
        return False
    func = value.func
    qual = a.qualname(func)
    if qual in ops.CPU_FACTORY_FUNCTIONS:
        if any(k.arg == "device" for k in value.keywords) or any(type(arg) is ast.Starred for arg in value.args):
            return False
        if any(k.arg is None for k in value.keywords):
            return False  # **kwargs may carry a device
        if qual in ops.CPU_TYPED_CONSTRUCTORS:
            return True  # torch.FloatTensor(values): a CPU type, whatever it is given (a tensor elsewhere fails)
        if qual in ops.CPU_FROM_DATA_FUNCTIONS:
            data = value.args[0] if value.args else None
            return data is not None and (type(data) in (ast.List, ast.Tuple, ast.Constant) or
                                         a.kind(data) in (PY, NDARRAY))
        return True
    if type(func) is ast.Attribute and qual is None and func.attr not in ops.DEVICE_MOVING_METHODS:
        return a.kind(func.value) in TENSORISH and made_on_cpu(a, func.value, depth + 1)
    if qual is not None and qual.startswith("torch.") and not any(k.arg in ("device", None) for k in value.keywords):
        # `torch.prod(torch.Tensor(k))`: a torch function of CPU tensors (and Python values) keeps them there
        # every argument a Python number or a CPU tensor, at least one of them a tensor (a `*args` is neither)
        numbers = [type(arg) is ast.Constant or a.kind(arg) in _NUMBERS for arg in value.args]
        return not all(numbers) and all(
            number or (type(arg) is not ast.Starred and a.kind(arg) in TENSORISH and made_on_cpu(a, arg, depth + 1))
            for arg, number in zip(value.args, numbers))
    return False


def _all_on_cpu(a, operands, depth: int) -> bool:
    """Every operand a Python number or a CPU tensor, and at least one of them a tensor.  An operand only
    presumed a tensor (``media_token_id`` read from a tokenizer's output) does not count either way: a CPU
    tensor that is not 0-d meets no device tensor in one operation."""
    sides = [s for s in operands if type(s) is not ast.Constant and a.kind(s) not in _NUMBERS
             and not (a.kind(s) in TENSORISH and a.uncertain(s))]
    return bool(sides) and all(made_on_cpu(a, s, depth + 1) for s in sides)


def test_reads_cpu(a, test: ast.expr) -> bool:
    """Every tensor a branch test reads is on the CPU (``if labels[i][j] != media_token_id`` before the
    labels move to the device; ``if dim == -1`` with ``dim = torch.tensor(d)``)."""
    operands: list[ast.expr] = []
    _test_operands(a, test, operands)
    operands = [operand for operand in operands if not a.uncertain(operand)]
    return bool(operands) and all(made_on_cpu(a, operand) for operand in operands)


def _test_operands(a, node: ast.expr, out: list) -> None:
    t = type(node)
    if t is ast.BoolOp:
        for value in node.values:
            _test_operands(a, value, out)
    elif t is ast.UnaryOp:
        _test_operands(a, node.operand, out)
    elif t is ast.Compare:
        for side in (node.left, *node.comparators):
            _test_operands(a, side, out)
    elif t is ast.Call and type(node.func) is ast.Attribute and node.func.attr in _READ_METHODS and not node.args:
        out.append(node.func.value)
    elif t is ast.Call and type(node.func) is ast.Name and node.func.id in _READ_BUILTINS and len(node.args) == 1:
        _test_operands(a, node.args[0], out)
    elif t is not ast.Constant and a.kind(node) in TENSORISH:
        out.append(node)


def moved_to_device_later(a, name: str) -> bool:
    """``name`` is bound in a block, read, and then moved to the device in the same block by
    ``name = name.to(device)`` / ``name = name.cuda()``, with no other binding of it in between, and the
    statement being checked lies between the binding and the move: until the move the value is not on the
    device (open-flamingo's ``labels = input_ids.clone()``, masking loops over ``labels``, then
    ``labels = labels.to(device_id)``)."""
    function = innermost_function(a.stack)
    statement = next((n for n in reversed(a.stack) if isinstance(n, ast.stmt)), None)
    if function is None or statement is None:
        return False
    line = statement.lineno
    for owner, block in _blocks(function):
        # a loop's target binds the name before each pass over the body (`for images, labels in loader:`)
        bound_at = owner.lineno if type(owner) in (ast.For, ast.AsyncFor) and any(
            type(n) is ast.Name and n.id == name for n in ast.walk(owner.target)) else None
        move = None
        for child in block:
            if child.lineno > line:
                if bound_at is not None and _moves_to_device(child, name):
                    move = child
                    break
            elif child.end_lineno < line and _binds_plainly(child, name):
                bound_at = child.end_lineno
        if move is None or bound_at is None:
            continue
        if not any(type(n) is ast.Name and n.id == name and type(n.ctx) is not ast.Load
                   and bound_at < n.lineno < move.lineno for n in ast.walk(function)):
            return True
    return False


def _blocks(function):
    """(owner, statement list) of ``function``'s body and every nested block (not nested functions')."""
    pending = [(function, function.body)]
    while pending:
        owner, block = pending.pop()
        yield owner, block
        for child in block:
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                continue
            for field in ("body", "orelse", "finalbody"):
                inner = getattr(child, field, None)
                if inner and isinstance(inner, list) and isinstance(inner[0], ast.stmt):
                    pending.append((child, inner))
            for handler in getattr(child, "handlers", ()):
                pending.append((handler, handler.body))


def _binds_plainly(statement: ast.stmt, name: str) -> bool:
    """``name = value`` (one target) at this statement's top."""
    return type(statement) is ast.Assign and len(statement.targets) == 1 \
        and type(statement.targets[0]) is ast.Name and statement.targets[0].id == name


def _moves_to_device(statement: ast.stmt, name: str) -> bool:
    """``name = name.to(<device>)`` or ``name = name.cuda()`` (chained casts before it kept)."""
    if not _binds_plainly(statement, name):
        return False
    call = statement.value
    if type(call) is not ast.Call or type(call.func) is not ast.Attribute:
        return False
    receiver = call.func.value
    while type(receiver) is ast.Call and type(receiver.func) is ast.Attribute:
        receiver = receiver.func.value
    if type(receiver) is not ast.Name or receiver.id != name:
        return False
    method = call.func.attr
    if method == "cuda":
        return True
    if method != "to":
        return False
    target = call.args[0] if call.args else next((k.value for k in call.keywords if k.arg == "device"), None)
    return target is not None and _names_a_device(target)


def _names_a_device(node: ast.expr) -> bool:
    if type(node) is ast.Constant:
        return type(node.value) is str and node.value.startswith(_DEVICE_STRINGS)
    if type(node) is ast.Call:
        return type(node.func) is ast.Attribute and node.func.attr == "device"  # torch.device("cuda", rank)
    last = node.attr if type(node) is ast.Attribute else node.id if type(node) is ast.Name else None
    if last is None:
        return False
    return not _DEVICE_WORDS.isdisjoint(last.lower().strip("_").split("_"))


def loop_on_cpu(a, iterable: ast.expr) -> bool:
    """The tensors a loop's trip count comes from are on the CPU: the sizes in ``range(labels.shape[0])``,
    ``range(len(x))``, the rows of ``for row in x`` and of ``zip(x, y)``, the pieces of ``x.split(n)``."""
    tensors: list[ast.expr] = []
    if type(iterable) is ast.Call and a.qualname(iterable.func) == "range":
        # the tensors whose sizes the rule read (the walker's `size_reads`); a name holding a size says nothing
        # of where its tensor lives
        for arg in iterable.args:
            for read in a.size_reads(arg):
                owner = _size_owner(read)
                if owner is None:
                    return False
                tensors.append(owner)
    elif type(iterable) is ast.Call and type(iterable.func) is ast.Attribute and a.kind(iterable.func.value) in TENSORISH:
        tensors.append(iterable.func.value)  # x.split(n), x.unbind(0)
    elif type(iterable) is ast.Call:
        tensors.extend(arg for arg in iterable.args if a.kind(arg) in TENSORISH)  # zip(x, y), enumerate(x)
    else:
        tensors.append(iterable)
    tensors = [t for t in tensors if a.kind(t) in TENSORISH and not a.uncertain(t)]
    return bool(tensors) and all(made_on_cpu(a, t) for t in tensors)


def _size_owner(read: ast.expr) -> ast.expr | None:
    """The tensor of a size read as ``size_reads`` yields it (``x.shape[k]``, ``x.size(k)``, ``x.size()[k]``,
    ``x.numel()``, ``len(x)``); None for a name holding a size."""
    if type(read) is ast.Subscript:
        read = read.value
    if type(read) is ast.Attribute:
        return read.value  # x.shape
    if type(read) is ast.Call:
        return read.args[0] if type(read.func) is ast.Name else read.func.value  # len(x); x.size(k)
    return None


def data_from_cpu(a, value: ast.expr) -> bool:
    """A size or bound computed from tensor data read off CPU tensors only (``top = torch.randint(0, h,
    (1,)).item()``, then ``grid[top:top + n]``: lightly's block masks): the read synced no device."""
    found = _cpu_data(a, value, 0, {})
    return found is True


def _cpu_data(a, node: ast.expr, depth: int, memo: dict):
    """True: data read from CPU tensors; None: no data at all (numbers, sizes); False: anything else.  ``memo``:
    the answer for each node already asked about (a chain of names may share operands)."""
    if depth > 24:
        return False
    key = id(node)
    if key not in memo:
        memo[key] = False  # a cycle through a name answers False
        memo[key] = _cpu_data_of(a, node, depth, memo)
    return memo[key]


def _cpu_data_of(a, node: ast.expr, depth: int, memo: dict):
    t = type(node)
    if t is ast.Constant:
        return None
    kind = a.kind(node)
    if kind in TENSORISH:
        return made_on_cpu(a, node) or False
    if t is ast.Name:
        bound = a.bound_value(node.id) or assigned_once_from(a.stack, node.id)
        if bound is None:
            # a number, a size, or a value of unknown kind (`num_visible`, `height` unpacked from a tuple): no
            # data the analysis knows of is read here (the finding rests on the data read elsewhere in the value)
            return None if kind in (PY, SIZE, None) else False
        return _cpu_data(a, bound, depth + 1, memo)
    if t is ast.Call:
        func = node.func
        if type(func) is ast.Attribute and func.attr in _READ_METHODS and not node.args:
            return made_on_cpu(a, func.value) or False  # t.item(), t.tolist()
        if type(func) is ast.Name and func.id in _NUMBER_BUILTINS and len(node.args) == 1:
            return _cpu_data(a, node.args[0], depth + 1, memo)
        qual = a.qualname(func)
        if (type(func) is ast.Name and func.id in ("min", "max") or (qual or "").startswith("math.")) and node.args:
            # min(height, math.ceil(math.sqrt(n * aspect))): Python arithmetic on the values read
            return _combine(_cpu_data(a, arg, depth + 1, memo) for arg in node.args)
        return None if kind in (PY, SIZE) else False
    if t is ast.BinOp:
        return _combine((_cpu_data(a, node.left, depth + 1, memo), _cpu_data(a, node.right, depth + 1, memo)))
    if t is ast.UnaryOp:
        return _cpu_data(a, node.operand, depth + 1, memo)
    if t is ast.Subscript:
        if type(node.value) is ast.Attribute and node.value.attr == "shape":
            return None
        return _cpu_data(a, node.value, depth + 1, memo)  # sizes[0] of sizes = t.tolist()
    return None if kind in (PY, SIZE) else False


def _combine(parts) -> bool | None:
    result = None
    for part in parts:
        if part is False:
            return False
        if part is True:
            result = True
    return result

