"""DYN201 size-dependent-branch: ``if x.shape[0] > 16`` specializes the graph on the size."""

from __future__ import annotations

import ast

from dynlint import ops
from dynlint.analysis.kinds import SIZE
from dynlint.analysis.syntax import innermost_function, only_raises, parameters, single_assignment, store_count
from dynlint.analysis.variation import UNKNOWN, VARIES, data_dependent, variation
from dynlint.checks import Scope, dyn204_unknown_size_branch as unknown_size_branch, rule

RULE = rule("DYN201", "size-dependent-branch", "A branch on a tensor's size specializes the graph", scope=Scope.STEP)


MESSAGE = ("branch on a tensor's size specializes the graph: one more compile each time the size crosses the "
           "condition; make the code shape-agnostic or mark the dimension static")


@RULE.on_branch
def check(a, test, body) -> None:
    """Also reports DYN204 (opt-in): one computation for both, whatever is selected."""
    found = size_branch(a, test, body)
    if found == VARIES:
        a.report(RULE, test, MESSAGE)
    elif found == UNKNOWN:
        a.report(unknown_size_branch.RULE, test, unknown_size_branch.MESSAGE)


def size_branch(a, test, body) -> str | None:
    """How the sizes a branch test specializes on vary (``variation.VARIES``: the batch, a
    data-dependent count, a length; ``UNKNOWN``: other dimensions, DYN204), or None when the test
    is no size hazard."""
    if body is not None and only_raises(body):
        return None  # size checks that only raise are input validation
    if a.depends_on_values(test):
        return None  # `while mask[..., right, :]` tests values (DYN202), whatever indexes it
    if _identity_only(test):
        return None  # `if max_len is None:` with max_len = y.size(1): an identity test never reads the size
    if _against_configuration(test):
        return None  # `x.size(-1) == self.hidden_size`: a model's fixed sizes checked against its settings
    if _agreement(a, test):
        return None  # `labels.shape == (batch_size,)`, `x.shape[0] != skip.shape[0]`: which layout, not how big
    if _storage_test(test):
        return None  # `p._full_param_padded.storage().size() != p_size.numel()`: whether a buffer is allocated
    if not a.reads_tensor_size(test):
        return None  # (first: most tests read no size, and the next test follows names through the function)
    if _decided_by_specialization(a, test):
        return None  # `x.numel() == 0`, `len(x) > 1`: sizes 0 and 1 are specialized anyway
    return variation(a, test) or UNKNOWN


def _identity_only(test: ast.expr) -> bool:
    """``x is None``, ``a is not None and b is None``, ``not (x is None)``: only identity tests."""
    if isinstance(test, ast.Compare):
        return all(isinstance(op, (ast.Is, ast.IsNot)) for op in test.ops)
    if isinstance(test, ast.BoolOp):
        return all(_identity_only(value) for value in test.values)
    if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        return _identity_only(test.operand)
    return False


def _comparisons(test: ast.expr) -> list[ast.Compare]:
    """The comparisons of a test: itself, or those joined by its ``and``/``or``."""
    if isinstance(test, ast.Compare):
        return [test]
    return [v for v in test.values if isinstance(v, ast.Compare)] if isinstance(test, ast.BoolOp) else []


def _against_configuration(test: ast.expr) -> bool:
    """An equality check of a size against the model's configuration (``x.size(-1) ==
    self.hidden_size``, ``len(self.vocab)``, ``self.config.dim``): the sizes it checks are fixed for
    a model.  Bounds (``x.size(1) > self.max_len``) are not: the size varies, the bound does not."""
    comparisons = _comparisons(test)
    for comparison in comparisons:
        if not all(isinstance(op, (ast.Eq, ast.NotEq)) for op in comparison.ops):
            continue  # `x.size(1) > self.max_len`: a varying size against a bound
        for side in [comparison.left, *comparison.comparators]:
            inner = side.args[0] if isinstance(side, ast.Call) and isinstance(side.func, ast.Name) and \
                side.func.id == "len" and len(side.args) == 1 else side
            root = inner
            while isinstance(root, (ast.Attribute, ast.Subscript)):
                root = root.value
            if isinstance(inner, ast.Attribute) and isinstance(root, ast.Name) and root.id in ("self", "config", "cfg"):
                return True
    return False


def _agreement(a, test: ast.expr) -> bool:
    """Only equality tests (``and``/``or`` of them too) of whole shapes (``x.shape``, ``x.size()``, a slice
    ``x.shape[2:]``) against each other or a tuple, or of one dimension of different tensors
    (``x.shape[0] != skip.shape[0]``: gigagan's skip connections, kornia's ``applied.shape[0] ==
    to_apply.shape[0]``): a check of which layout the caller passed (1-D or 2-D labels, pixel or patch masks)
    or that two tensors agree; both sides follow the same inputs, so the outcome does not flip as sizes vary
    (measured: no more compiles than without the test).  Not a dimension of a data-dependent result
    (``x[mask].shape[0] == x.shape[0]`` asks whether every row was kept)."""
    comparisons = _comparisons(test)
    if not comparisons or (isinstance(test, ast.BoolOp) and len(comparisons) != len(test.values)):
        return False
    for comparison in comparisons:
        if not all(isinstance(op, (ast.Eq, ast.NotEq)) for op in comparison.ops):
            return False
        sides = [comparison.left, *comparison.comparators]
        if any(_is_shape(side) for side in sides) and \
                all(_is_shape(side) or isinstance(side, (ast.Tuple, ast.List)) for side in sides):
            continue
        tensors = [_is_dimension(side) for side in sides]
        if any(t is None for t in tensors) or len({ast.dump(t) for t in tensors}) != len(tensors) \
                or any(data_dependent(a, t) for t in tensors):
            return False
    return True


def _storage_test(test: ast.expr) -> bool:
    """A comparison with the size of a tensor's storage (``x.storage().size()``, ``x.untyped_storage().nbytes()``):
    memory management (fairscale's FSDP frees and reallocates parameter buffers and tests whether one is
    allocated), not a shape the step specializes on."""
    comparisons = _comparisons(test)
    return any(isinstance(side, ast.Call) and isinstance(side.func, ast.Attribute)
               and side.func.attr in ("size", "nbytes") and isinstance(side.func.value, ast.Call)
               and isinstance(side.func.value.func, ast.Attribute)
               and side.func.value.func.attr in ("storage", "untyped_storage")
               for comparison in comparisons for side in (comparison.left, *comparison.comparators))


def _is_dimension(value: ast.expr) -> ast.expr | None:
    """The tensor of ``x.shape[i]``/``x.size(i)`` (a constant ``i``, ``-1`` too), else None."""
    if isinstance(value, ast.Subscript) and isinstance(value.value, ast.Attribute) and value.value.attr == "shape" \
            and _constant_index(value.slice):
        return value.value.value
    if isinstance(value, ast.Call) and isinstance(value.func, ast.Attribute) and value.func.attr == "size" \
            and len(value.args) == 1 and _constant_index(value.args[0]) and not value.keywords:
        return value.func.value
    return None


def _constant_index(index: ast.expr) -> bool:
    """``0``, ``-1``: a dimension named by an integer constant."""
    if isinstance(index, ast.UnaryOp) and isinstance(index.op, ast.USub):
        index = index.operand
    return isinstance(index, ast.Constant) and type(index.value) is int


# (operator, constant) pairs whose outcome is the same for every size >= 2: torch.compile specializes
# sizes 0 and 1 and traces dynamic sizes as >= 2, so such a test adds no compile (measured on torch
# 2.13: `x.numel() == 0`, `len(x) > 1`, `x.shape[0] < 2` compile exactly as often as no test)
_DECIDED = {ast.Eq: (0, 1), ast.NotEq: (0, 1), ast.Gt: (0, 1), ast.LtE: (0, 1), ast.GtE: (0, 1, 2),
            ast.Lt: (0, 1, 2)}
_FLIPPED = {ast.Eq: ast.Eq, ast.NotEq: ast.NotEq, ast.Gt: ast.Lt, ast.Lt: ast.Gt, ast.GtE: ast.LtE,
            ast.LtE: ast.GtE}


def _decided_by_specialization(a, test: ast.expr) -> bool:
    """Every size the test reads is read directly (``x.size(0)``, ``x.shape[1]``, ``len(x)``,
    ``x.numel()``, or a name bound to one) and compared with 0 or 1 (``== 0``, ``> 0``, ``!= 1``,
    ``< 2``...) or tested for truth (``if x.numel():``), through ``and``/``or``/``not``: the outcome
    is the same for every size a dynamic dimension takes.  A difference of sizes (``trim =
    a.size(2) - b.size(2); if trim > 0``) is a real guard."""
    return _decided(a, test) is True


def _decided(a, node: ast.expr):
    """True: decided and reads a size; None: reads no size; False: a size test that specializes."""
    if isinstance(node, ast.BoolOp):
        results = [_decided(a, value) for value in node.values]
        return False if False in results else True if True in results else None
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
        return _decided(a, node.operand)
    if isinstance(node, ast.Call) and len(node.args) == 1 and not node.keywords \
            and a.qualname(node.func) in ops.SYMBOLIC_SIZE_GUARDS:
        return _decided(a, node.args[0])  # guard_or_false(positions.size(0) == 1): the test inside decides
    if _direct_size(a, node):
        return not _data_dependent_size(a, node)
    if isinstance(node, ast.Compare) and len(node.ops) == 1:
        left, op, right = node.left, type(node.ops[0]), node.comparators[0]
        if _direct_size_product(a, right):
            left, right, op = right, left, _FLIPPED.get(op)
        if _direct_size_product(a, left):
            if _data_dependent_size(a, left):
                return False  # `if nr_blocks > 0:` with nr_blocks = x.nonzero().shape[0]: a guard on data
            if _negative_int(right):
                return True  # `x.shape[0] == -1`: a size is never negative, the outcome never changes
            return isinstance(right, ast.Constant) and type(right.value) is int and right.value in _DECIDED.get(op, ())
    return False if a.reads_tensor_size(node) else None


def _data_dependent_size(a, node: ast.expr, follow: bool = True) -> bool:
    """A size read directly (see ``_direct_size``), or a product of them, of a data-dependent result
    (``nonzero``, ``x[mask]``...: learn2learn's ``nr_blocks = non_zero_idxs.shape[0]``, advertorch's
    ``x[indexes].size(0) == 0``): its value is the data's, not one that torch.compile specializes (an
    unbacked size: testing it is a data-dependent guard; on XLA and HPU, a sync)."""
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Mult):
        return _data_dependent_size(a, node.left, follow) or _data_dependent_size(a, node.right, follow)
    if isinstance(node, ast.Name):
        if not follow:
            return False
        value = _bound_once(a, node.id)
        return value is not None and _data_dependent_size(a, value, follow=False)
    if _converted_number(node):
        return _data_dependent_size(a, node.args[0], follow)
    tensor = _measured_tensor(a, node)
    return tensor is not None and data_dependent(a, tensor)


def _direct_size_product(a, node: ast.expr, follow: bool = True) -> bool:
    """A size read directly, or a product of them and positive integer constants (``batch_size *
    num_channels * num_samples == 0``, an empty-input guard: a product is 0 or 1 exactly when its factors
    are, and each is specialized; every size a dynamic dimension takes makes it at least 2), also through a
    name bound once to such a product (liger-kernel's ``T, K = topk_indices.shape; TK = T * K; if TK > 0:``)."""
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Mult):
        factors = (node.left, node.right)
        if any(isinstance(f, ast.Constant) and type(f.value) is int and f.value >= 1 for f in factors):
            size = node.right if isinstance(node.left, ast.Constant) else node.left
            return _direct_size_product(a, size, follow)
        return _direct_size_product(a, node.left, follow) and _direct_size_product(a, node.right, follow)
    if follow and isinstance(node, ast.Name) and not _direct_size(a, node):
        value = _product_binding(a, node.id)
        return value is not None and _direct_size_product(a, value, follow=False)
    return _direct_size(a, node)


def _bound_once(a, name: str) -> ast.expr | None:
    """The value ``name`` was bound to once: at the function's top level (the walker's binding), or by the
    function's only assignment of it wherever it sits; None otherwise."""
    entry = a.scope.bindings.get(name)
    return entry[0] if entry is not None else single_assignment(a.stack, name)


def _product_binding(a, name: str) -> ast.expr | None:
    """The product ``name`` was bound to once in the function (``TK = T * K``), else None."""
    value = _bound_once(a, name)
    return value if isinstance(value, ast.BinOp) and isinstance(value.op, ast.Mult) else None


def _negative_int(node: ast.expr) -> bool:
    return isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub) and isinstance(node.operand, ast.Constant) \
        and type(node.operand.value) is int and node.operand.value > 0


def _direct_size(a, node: ast.expr, follow: bool = True) -> bool:
    """``x.size(k)``, ``x.size()[k]``, ``x.shape[k]``, ``x.numel()``, ``len(x)``, ``int()``/``float()`` of one,
    or a name bound to one (``n_channels = x.shape[1]``: the same size)."""
    if isinstance(node, ast.Name):
        if not follow:
            return False
        # the value the name was bound to once, at the function's top level (None when rebound): a
        # size read then is that size, whatever its tensor's name is bound to later
        entry = a.scope.bindings.get(node.id)
        if entry is not None:
            return _direct_size(a, entry[0], follow=False)
        return _unpacked_size(a, node.id) or _only_store_is_size(a, node.id) or _size_parameter(a, node.id)
    if _converted_number(node):
        # `n_labels = float(len(labels))` (imitation's discriminator statistics): the same size, as a number
        return _direct_size(a, node.args[0], follow)
    return _measured_tensor(a, node) is not None


def _converted_number(node: ast.expr) -> bool:
    """``int(v)`` or ``float(v)``."""
    return isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in ("int", "float") \
        and len(node.args) == 1 and not node.keywords


def _measured_tensor(a, node: ast.expr) -> ast.expr | None:
    """The tensor whose size ``node`` reads: ``x.size(k)``, ``x.size()[k]``, ``x.shape[k]``, ``x.numel()``,
    ``torch.numel(x)``, ``len(x)``; None for anything else."""
    if isinstance(node, ast.Subscript):
        value = node.value
        if isinstance(value, ast.Attribute) and value.attr == "shape":
            return value.value
        if isinstance(value, ast.Call) and isinstance(value.func, ast.Attribute) and value.func.attr == "size" \
                and not value.args:
            return value.func.value
        return None
    if isinstance(node, ast.Call):
        func = node.func
        if isinstance(func, ast.Attribute):
            if func.attr == "numel" and len(node.args) == 1 and a.qualname(func) == "torch.numel":
                return node.args[0]
            if (func.attr == "size" and len(node.args) == 1) or (func.attr in ("numel", "nelement") and not node.args):
                return func.value
            return None
        if isinstance(func, ast.Name) and func.id == "len" and len(node.args) == 1:
            return node.args[0]
    return None


def _only_store_is_size(a, name: str) -> bool:
    """``len_pd = len(positive_dists)`` inside an ``if``/``with`` block, the function's only binding of
    ``len_pd``: whatever tensor it measured, the name holds a size read directly."""
    if a.lookup(name) != SIZE:
        return False  # only a name holding a size can hold one read directly
    value = single_assignment(a.stack, name)
    return value is not None and _direct_size(a, value, follow=False)


def _size_parameter(a, name: str) -> bool:
    """``def _upad_input(self, ..., query_length)`` called with ``q_len`` (a tensor's size), the parameter
    never rebound: it holds the size its callers read (``query_length == 1`` is decided by the 0/1
    specialization as the size itself would be)."""
    if a.lookup(name) != SIZE:
        return False
    function = innermost_function(a.stack)
    if function is None or not any(arg.arg == name for arg in parameters(function.args)):
        return False
    return store_count(a.stack, name) == 1  # the parameter itself, never rebound


def _unpacked_size(a, name: str) -> bool:
    """``b, c, h, w = x.shape`` (also ``x.shape[:2]``, ``x.size()``) at the enclosing function's top
    level, the only binding of ``name`` in it: the name is one of the tensor's sizes."""
    function = innermost_function(a.stack)
    if function is None:
        return False
    found = False
    for statement in function.body:
        if isinstance(statement, ast.Assign) and len(statement.targets) == 1 \
                and isinstance(statement.targets[0], (ast.Tuple, ast.List)) and _is_shape(statement.value) \
                and any(isinstance(e, ast.Name) and e.id == name for e in statement.targets[0].elts):
            found = True
            break
    return found and store_count(a.stack, name) == 1


def _is_shape(value: ast.expr) -> bool:
    """``x.shape``, ``x.shape[a:b]``, ``x.size()``."""
    if isinstance(value, ast.Subscript) and isinstance(value.slice, ast.Slice):
        value = value.value
    if isinstance(value, ast.Attribute):
        return value.attr == "shape"
    return isinstance(value, ast.Call) and isinstance(value.func, ast.Attribute) and value.func.attr == "size" \
        and not value.args and not value.keywords
