"""DYN301 host-sync: ``.item()``, ``.tolist()``, ``.numpy()``, ``int(t)`` copy a value to the host."""

from __future__ import annotations

import ast

from dynlint import ops
from dynlint.analysis.kinds import MASK, MODULE, NDARRAY, PY, SCALAR_TENSOR, SEQ, TENSOR, TENSORISH, TUPLE
from dynlint.analysis.placement import made_on_cpu
from dynlint.analysis.syntax import (accumulated_values, appended_values, argument, assigned_once_from,
                                     assigned_values, host_read_names, innermost_function, keyword, parameters)
from dynlint.checks import Scope, rule
from dynlint.checks._weak_evidence import maybe_numpy

RULE = rule("DYN301", "host-sync", "Copying a tensor value to the host syncs and breaks the graph", scope=Scope.DEVICE)


@RULE.on_call(functions=ops.HOST_SYNC_BUILTINS)
def check_builtin(a, node, qual, method, receiver) -> None:
    if not node.args or a.is_silenced(node):
        return
    value = node.args[0]
    strong = a.value_kind(value) in TENSORISH or a.on_some_path(value) or \
        (qual != "bool" and a.none_or_tensor(value))
    if strong or _reduced_unknown(a, value):
        a.report(RULE, node, f"`{qual}()` of a tensor copies its value to the host (a sync and a graph "
                 "break); keep the value as a tensor", step_only=not strong, cpu_value=made_on_cpu(a, value))


def _reduced_unknown(a, value: ast.expr) -> bool:
    """``int(graph_batch.num_atoms.sum())``, ``int(model.stride.max())``: a full reduction of a value the
    analysis cannot type. Python's lists and numbers have no ``.sum()``/``.max()``: it is an array's, a
    tensor's in the step (``step_only``), unless the code says the value is numpy."""
    return type(value) is ast.Call and not value.args and not value.keywords \
        and type(value.func) is ast.Attribute and value.func.attr in ops.FULL_REDUCTIONS \
        and type(value.func.value) in (ast.Name, ast.Attribute, ast.Subscript) \
        and a.kind(value.func.value) is None and a.kind(value) is None and not maybe_numpy(a, value.func.value)


@RULE.on_call(functions=ops.MATH_SCALAR_FUNCTIONS)
def check_math(a, node, qual, method, receiver) -> None:
    """``math.cos(t)``: the math module converts its tensor arguments with ``__float__`` (measured on torch 2.13:
    "Data dependent operator", like ``float(t)``)."""
    if a.is_silenced(node):
        return
    for value in node.args:
        if not isinstance(value, ast.Starred) and (a.value_kind(value) in TENSORISH or a.on_some_path(value)):
            torch_name = "torch." + qual.rpartition(".")[2]
            a.report(RULE, node, f"`{qual}()` of a tensor converts it to a Python number (a sync and a graph "
                     f"break); keep it a tensor (`{torch_name}` or tensor arithmetic)",
                     cpu_value=made_on_cpu(a, value))
            return


_FORMAT = ("formatting a tensor as text reads its value on the host (a sync in eager and lazy XLA/HPU mode; "
           "`%` formatting also breaks the graph); log it outside the step, or keep it as a tensor and "
           "format it later")


@RULE.on_format
def check_format(a, value) -> None:
    """``f"{loss:.3f}"``, ``"%.5f" % loss`` (measured on torch 2.13: ``%`` breaks the graph, "Data dependent
    operator"; torch.compile traces an f-string field and formats the value after the graph; in eager and
    lazy modes both copy the value to the host)."""
    if not a.is_silenced(value) and _evident_tensor(a, value):
        a.report(RULE, value, _FORMAT)


def _computed(value: ast.expr) -> bool:
    return not isinstance(value, (ast.Name, ast.Attribute, ast.Constant))


def _number(value: ast.expr) -> bool:
    """``0``, ``0.``: a Python number written out (not a bool)."""
    return type(value) is ast.Constant and type(value.value) in (int, float)


def _number_accumulator(a, value: ast.expr) -> bool:
    """``recon_loss = 0.``, then ``recon_loss += loss / n``: a name started from Python numbers and added to,
    that the code reads with ``.item()``/``.tolist()``, which Python numbers do not have: what was added made
    it a tensor (magvit2's validation of an accelerator-unwrapped model), unless the code says numpy."""
    if type(value) is not ast.Name:
        return False
    accumulated = accumulated_values(a.stack, value.id)
    return accumulated is not None and bool(accumulated[0]) and all(_number(v) for v in accumulated[0]) \
        and not maybe_numpy(a, value)


def _evident_tensor(a, value, depth: int = 0) -> bool:
    """A formatted value that is a tensor by what this function does: a torch call or a tensor
    method made it (``f"{x.max()}"``, ``f"{(a - b).abs().mean()}"``), or a name computed once, here
    (``loss = criterion(out, y)``, a tensor by its kind: ``loss.backward()``...).  Text is formatted from many values whose
    kind rests on weaker evidence (an unannotated parameter, a loop variable, an attribute of an
    unknown object: layer indices, names, keys), so this rule asks for more than the others."""
    if isinstance(value, ast.Name) and a.value_kind(value) is None and _number_accumulator(a, value) \
            and value.id in host_read_names(a.stack):
        return True  # `total = 0.`, `total += loss / n`, then `total.item()` and `f"{total:.3f}"`
    if a.value_kind(value) not in TENSORISH or depth > 3:
        return False
    if isinstance(value, ast.Name):
        # computed here (not a parameter, a loop variable, or a copy of another name or attribute): its
        # kind is this function's; once (`loss = criterion(out, y)`), or by every plain assignment of
        # the name (`sigmas = self.schedule(n)`, then `sigmas = repeat(sigmas, ...)`)
        bound = assigned_once_from(a.stack, value.id)
        if bound is not None:
            return _computed(bound)
        every = assigned_values(a.stack, value.id)
        if every is not None:
            return all(_computed(v) for v in every)
        # an accumulator started from numbers or computed values, and summed from a computed tensor here
        # (`total = 0.`, then `total += loss` with `loss = criterion(out, y)`)
        accumulated = accumulated_values(a.stack, value.id)
        if accumulated is not None:
            return all(_number(v) or _computed(v) for v in accumulated[0]) \
                and any(_evident_tensor(a, v, depth + 1) for v in accumulated[1])
        return _annotated_parameter(a, value.id)
    if isinstance(value, ast.BinOp):
        return _evident_tensor(a, value.left, depth + 1) or _evident_tensor(a, value.right, depth + 1)
    if isinstance(value, ast.Call):
        func = value.func
        if (a.qualname(func) or "").startswith("torch."):
            return True
        return isinstance(func, ast.Attribute) and (func.attr in ops.TENSOR_ONLY_METHODS or
                                                     func.attr in ops.FULL_REDUCTIONS or
                                                     _evident_tensor(a, func.value, depth + 1))
    if isinstance(value, ast.Subscript):
        return _evident_tensor(a, value.value, depth + 1)
    return False


def _annotated_parameter(a, name: str) -> bool:
    """``name`` is a parameter of the function, annotated (a tensor by its kind: ``sigmas: Tensor``) and
    never bound again in it (audio-diffusion-pytorch's ``f"{sigmas[i + 1, 0, 0, 0]:.2f}"``)."""
    function = innermost_function(a.stack)
    if function is None:
        return False
    if not any(arg.arg == name and arg.annotation is not None for arg in parameters(function.args)):
        return False
    return not any(type(node) is ast.Name and node.id == name and type(node.ctx) is not ast.Load
                   for node in ast.walk(function))


@RULE.on_call(functions=ops.FORMATTING_BUILTINS, methods=("format",), any_receiver=True)
def check_formatting_call(a, node, qual, method, receiver) -> None:
    """``str(t)``, ``repr(t)``, ``print(t)``, ``"{:.3f}".format(t)``: the tensor is formatted as text."""
    if method is not None and not (isinstance(node.func.value, ast.Constant) and isinstance(node.func.value.value, str)):
        return  # only the str method: other objects' .format() take anything
    for value in [*node.args, *(k.value for k in node.keywords if method is not None)]:
        if isinstance(value, ast.Starred) or a.is_silenced(value):
            continue
        if _evident_tensor(a, value):
            a.report(RULE, value, _FORMAT)


@RULE.on_call(methods=ops.HOST_SYNC_METHODS)
def check_method(a, node, qual, method, receiver) -> None:
    if node.args or a.is_silenced(node):
        return
    if method == "numpy" and not keyword(node, "force") and not _copied_from_device(a, node.func.value) \
            and not _read_into_python(a, node):
        # `t.numpy()` of a tensor never moved: it is on the CPU (a device tensor raises), nothing to copy, and
        # torch.compile traces it; `t.numpy().tolist()` still breaks the graph (measured on torch 2.13)
        return
    strong = receiver in TENSORISH or ops.HOST_SYNC_METHODS[method] or (
        receiver is None and (_unknown_in_step(a, node) or _moved_tensor(node.func.value)
                              or _number_accumulator(a, node.func.value)))
    if strong or (receiver is None and _unknown_receiver(node) and not maybe_numpy(a, node.func.value)):
        a.report(RULE, node, f"`.{method}()` copies tensor data to the host (a sync and a graph "
                 "break); keep the value as a tensor, or move this out of the compiled region", step_only=not strong,
                 cpu_value=made_on_cpu(a, node.func.value))


@RULE.on_call(functions=ops.DATA_TORCH_FUNCTIONS, methods=ops.DATA_COMPARISON_METHODS)
def check_comparison(a, node, qual, method, receiver) -> None:
    """``same = torch.equal(query, key)``, ``torch.allclose(a, b)``, ``x.equal(y)``: a Python bool read from
    tensor data (measured on torch 2.13: "Data dependent operator" at ``aten.equal``).  In a test DYN202 reports
    as a branch on values the branch is its finding (it silences the reads in it); elsewhere (assigned, returned,
    asserted, or in a test DYN202 does not see as one: ``all(torch.equal(s, first) for s in shards)``) the read
    is here."""
    if a.is_silenced(node):
        return
    if method is not None:
        tensor = receiver in TENSORISH and not a.uncertain(node.func.value)
        value = node.func.value
    else:
        values = [v for v in node.args if type(v) is not ast.Starred and a.value_kind(v) in TENSORISH]
        tensor, value = bool(values), (values[0] if values else None)
    if tensor:
        name = f"torch.{qual.rpartition('.')[2]}" if qual is not None else f".{method}"
        a.report(RULE, node, f"`{name}()` reads tensor values into a Python bool (a sync and a graph break); "
                 "keep the answer as a tensor (`(a == b).all()`, `torch.isclose(a, b).all()`, `t != 0`) and use it with "
                 "torch.where, or compare outside the compiled region", cpu_value=made_on_cpu(a, value))


@RULE.on_call(functions=ops.HOST_SYNC_FUNCTIONS)
def check_function(a, node, qual, method, receiver) -> None:
    if node.args and not a.is_silenced(node):
        a.report(RULE, node, f"`{qual}` reads the tensor's value on the host (a sync and a graph break, like "
                 "Tensor.item()); use torch._assert_async, or check outside the compiled region")


@RULE.on_call(functions=ops.SCALAR_FILL_FUNCTIONS, methods=ops.SCALAR_FILL_METHODS)
def check_fill_value(a, node, qual, method, receiver) -> None:
    """``torch.full((n,), sigma)``, ``x.new_full(shape, t)`` with a tensor ``sigma``/``t``: the fill value is a
    Python number parameter, so the tensor is read on the host."""
    if a.is_silenced(node) or (method is not None and receiver not in TENSORISH):
        return
    position = ops.SCALAR_FILL_FUNCTIONS[qual] if method is None else ops.SCALAR_FILL_METHODS[method]
    value = argument(node, position, "fill_value")
    if value is None or a.value_kind(value) not in TENSORISH or a.uncertain(value):
        return
    name = qual if method is None else f".{method}"
    a.report(RULE, value, f"a tensor as the fill value of `{name}()` is read on the host (a sync in eager and lazy "
             "XLA/HPU mode; `full_like`/`new_full` also break the graph); broadcast the tensor instead "
             "(`t.expand(shape).clone()`, or `torch.ones(shape) * t`)", cpu_value=made_on_cpu(a, value))


@RULE.on_subscript
@RULE.on_subscript_store
def check_numpy_index(a, node: ast.Subscript) -> None:
    """``array[t]``, ``memmap[i, t:t + n]``: a numpy array indexed by a tensor reads the tensor's value on the
    host (numpy asks it for ``__index__``; q-transformer's replay memory indexed by rows of an index tensor)."""
    if a.kind(node.value) != NDARRAY:
        return
    index = node.slice
    for element in index.elts if type(index) is ast.Tuple else (index,):
        values = (element.lower, element.upper, element.step) if type(element) is ast.Slice else (element,)
        for value in values:
            # not a mask: `logits[~mask]` with a mask of unknown origin is as often a numpy array's
            if value is not None and a.value_kind(value) in (TENSOR, SCALAR_TENSOR) and not a.is_silenced(value):
                a.report(RULE, value, "indexing a numpy array with a tensor reads the tensor's value on the host "
                         "(a sync); index with Python ints, or keep the data in a tensor",
                         cpu_value=made_on_cpu(a, value))
                return


@RULE.on_subscript_store
def check_numpy_store(a, target) -> None:
    """``array[i] = t`` copies a tensor into a numpy array: to the host."""
    statement = a.stack[-1] if a.stack else None
    if not isinstance(statement, ast.Assign) or a.kind(target.value) != NDARRAY:
        return
    if _object_array(a, target.value):
        return  # np.empty(n, dtype=object) holds references to the tensors: nothing is copied
    if a.value_kind(statement.value) in TENSORISH and not a.is_silenced(statement.value):
        a.report(RULE, statement.value, "storing a tensor into a numpy array copies it to the host (a sync); "
                 "keep the values in a tensor, and convert once outside the step")


def _object_array(a, array: ast.expr) -> bool:
    """``new_b = np.empty(channels, dtype=object)``: an array of Python objects (torchcde's tridiagonal solve)."""
    if type(array) is not ast.Name:
        return False
    value = a.bound_value(array.id)
    if type(value) is not ast.Call:
        return False
    dtype = next((k.value for k in value.keywords if k.arg == "dtype"), None)
    return (type(dtype) is ast.Name and dtype.id == "object") or a.qualname(dtype) in ("numpy.object_", "builtins.object")


@RULE.on_subscript
@RULE.on_subscript_store
def check_python_index(a, node: ast.Subscript) -> None:
    """``parts[c]``, ``self.resamplers[idx]`` with a tensor ``c``: a Python sequence indexed by a tensor calls
    ``__index__``, which reads the value on the host (measured: a graph break, Tensor.item())."""
    index = node.slice
    if type(index) is ast.Slice:
        _check_python_slice(a, node, index)
        return
    if type(index) is ast.Tuple or a.is_silenced(index):
        return
    if not _python_sequence(a, node.value):
        return
    if _read_as_an_int(a, index):
        a.report(RULE, index, "a tensor used as the index of a Python list/tuple/ModuleList is read on the host "
                 "(`__index__`: a sync and a graph break); index a tensor instead (torch.stack the items, then "
                 "gather), or keep the index a Python int")


def _read_as_an_int(a, node: ast.expr) -> bool:
    """A tensor a Python sequence is indexed or sliced by (``__index__`` reads it); not a mask."""
    kind = a.value_kind(node)
    return kind in TENSORISH and kind != MASK


def _check_python_slice(a, node: ast.Subscript, index: ast.Slice) -> None:
    """``history[:seq_ends[i]]`` (pytorch-crf's Viterbi backtrace): a tensor bound of a Python list's slice
    calls ``__index__`` too (measured on torch 2.13: a graph break, Tensor.item())."""
    bounds = [b for b in (index.lower, index.upper, index.step) if b is not None and not a.is_silenced(b)]
    if not bounds or not _python_sequence(a, node.value):
        return
    for bound in bounds:
        if _read_as_an_int(a, bound):
            a.report(RULE, bound, "a tensor used as a slice bound of a Python list/tuple is read on the host "
                     "(`__index__`: a sync and a graph break); slice with a Python int, or keep the items in a "
                     "tensor and mask them")


@RULE.on_repeat
def check_repeat_count(a, count: ast.expr) -> None:
    """``states += [hidden[b]] * n`` with ``n`` a tensor (lavis' VQA heads repeat each question by its answer
    count): the count is read with ``__index__`` (measured on torch 2.13: a graph break, "Data dependent
    operator")."""
    if a.is_silenced(count) or not _read_as_an_int(a, count):
        return
    a.report(RULE, count, "a tensor used as the count of a repeated Python list/tuple is read on the host "
             "(`__index__`: a sync and a graph break); repeat with a Python int, or keep the items in a tensor "
             "(`x.repeat_interleave(counts, dim=0)` has a data-dependent size too)")


@RULE.on_call(methods=ops.LIST_INDEX_METHODS, any_receiver=True)
def check_list_method(a, node, qual, method, receiver) -> None:
    """``parts.pop(c)`` / ``parts.insert(c, v)`` with a tensor ``c``."""
    if not node.args or a.is_silenced(node.args[0]) or not _python_sequence(a, node.func.value):
        return
    if _read_as_an_int(a, node.args[0]):
        a.report(RULE, node.args[0], f"`list.{method}()` with a tensor index reads it on the host (a sync); "
                 "torch.compile fails on it (an internal error, measured); pass a Python int or keep the items "
                 "in a tensor")


@RULE.on_call(functions=ops.LEGACY_TENSOR_CONSTRUCTORS)
def check_legacy_constructor(a, node, qual, method, receiver) -> None:
    """``torch.Tensor([[out[0], out[1]]])``, or a list extended with tensors (neuraloperator's
    ``strength_vector.append(torch.norm(...))``, then ``torch.Tensor(strength_vector)``): each 0-d tensor element
    is read on the host."""
    if len(node.args) != 1 or a.is_silenced(node):
        return
    data = node.args[0]
    if (type(data) is ast.Name and _accumulates_tensors(a, data.id)) or (
            isinstance(data, (ast.List, ast.Tuple))
            and any(a.value_kind(element) in TENSORISH for element in _display_leaves(data))):
        a.report(RULE, node, f"`{qual}([...])` of tensor elements reads each one on the host (a sync), and "
                 "fails under torch.compile (measured); use torch.stack / torch.cat of the tensors")


@RULE.on_call(functions=ops.VALUE_TENSOR_CONSTRUCTORS)
def check_value_constructor(a, node, qual, method, receiver) -> None:
    """``torch.tensor([p.norm() ** 2 for p in params])``, ``mat = [[cos, -sin], [sin, cos]]; torch.tensor(mat)``:
    a tensor built from tensor elements reads each one on the host in eager and lazy XLA/HPU mode."""
    if not node.args or a.is_silenced(node):
        return
    data = node.args[0]
    if type(data) is ast.Name:
        if _accumulates_tensors(a, data.id):
            a.report(RULE, node, f"`{qual}(...)` of a list of tensors reads each one on the host (a sync in eager "
                     "and lazy XLA/HPU mode); use torch.stack / torch.cat of the tensors")
            return
        bound = a.bound_value(data.id)
        data = bound if type(bound) in (ast.List, ast.Tuple, ast.ListComp) else data
    if _tensor_elements(a, data):
        a.report(RULE, node, f"`{qual}(...)` of tensor elements reads each one on the host (a sync in eager and "
                 "lazy XLA/HPU mode); use torch.stack / torch.cat of the tensors")


def _accumulates_tensors(a, name: str) -> bool:
    """``basis = [1]``, then ``basis += [basis[-1] * s2 - basis[-2]]`` in a loop (torchdyn's Chebyshev basis),
    ``norms = []; norms.append(p.grad.norm())``, ``targets.extend(target)`` of a tensor (dgllife's stop targets):
    a list, every plain binding of it a list display, that the function extends with tensors computed right
    there, or with names proven to hold tensors, or with the elements of such a tensor."""
    accumulated = accumulated_values(a.stack, name)
    plain = accumulated[0] if accumulated is not None else assigned_values(a.stack, name)
    if plain:
        # `stop_targets = torch.Tensor(stop_targets).to(device)`: the statement being checked rebinds the name
        # (its value reads the list)
        within = {id(node) for node in a.stack}
        plain = [value for value in plain if id(value) not in within]
    if not plain or any(type(value) is not ast.List for value in plain):
        return False
    return any(_adds_tensors(a, value) for value in appended_values(a.stack, name))


def _adds_tensors(a, value: ast.expr) -> bool:
    """An element added to a list is a tensor computed right there or a name proven to hold one; ``*v``
    (``list.extend(v)``): ``v`` is such a tensor, whose rows (0-d tensors for a vector) are the elements."""
    if type(value) is ast.Starred:
        value = value.value
    return _computed_tensor(a, value) or (type(value) is ast.Name and a.value_kind(value) in TENSORISH
                                          and not a.uncertain(value))


def _tensor_elements(a, data: ast.expr) -> bool:
    """A list/tuple display (nested too) with an element computed as a tensor right there (``p.norm() ** 2``,
    ``torch.cos(a)``, ``x.sum()``), or a list comprehension of such.  A bare name is left alone: code that
    builds ``torch.tensor([item])`` usually has an int in it (an ``isinstance(item, int)`` branch)."""
    if type(data) is ast.ListComp:
        return _computed_tensor(a, data.elt)
    if type(data) not in (ast.List, ast.Tuple):
        return False
    return any(_computed_tensor(a, element) for element in _display_leaves(data))


def _display_leaves(display: ast.expr):
    """The elements of a list/tuple display, nested displays opened (``[[a, b], [c, d]]``: a, b, c, d)."""
    pending = list(display.elts)
    while pending:
        element = pending.pop()
        if isinstance(element, (ast.List, ast.Tuple)):
            pending.extend(element.elts)
        else:
            yield element


def _computed_tensor(a, element: ast.expr) -> bool:
    return type(element) in (ast.Call, ast.BinOp, ast.UnaryOp) and a.value_kind(element) in TENSORISH


def _unknown_in_step(a, node: ast.Call) -> bool:
    """``loss.item()``, ``x.tolist()`` in a model's step or a training loop on a value the analysis cannot
    type (a sub-model's or a project helper's result unpacked from a tuple): only tensors and numpy values
    have ``.item()``/``.tolist()``, and numpy is rare there."""
    return _unknown_receiver(node) and a.in_model_step()


def _unknown_receiver(node: ast.Call) -> bool:
    """``.item()``/``.tolist()`` on a value the analysis cannot type (arithmetic on such values included:
    ``(rand_mask_prob * seq_len).item()``): elsewhere than a model's own methods
    (a trainer's helper, a loss function) it counts only where the call graph puts it in the compiled or
    the training step (``step_only``)."""
    return node.func.attr in ops.VALUE_READING_METHODS and \
        type(node.func.value) in (ast.Name, ast.Attribute, ast.Subscript, ast.Call, ast.BinOp)


def _copied_from_device(a, value: ast.expr, depth: int = 0) -> bool:
    """The value ``.numpy()`` is called on was copied to the host in this expression (``x.detach().cpu()``,
    ``x.to("cpu")``, ``x.to(device)``) or in the one a name was bound to (``y = x.cpu()``; ``y.numpy()``).
    ``Tensor.numpy()`` refuses a tensor on another device (CUDA, XLA, HPU: "Use Tensor.cpu()"), so a tensor
    never moved is a CPU tensor already: its ``.numpy()`` waits for no device, and torch.compile traces it
    (measured on torch 2.13: no graph break).  Of 70 judged findings on such lines, 69 were host code."""
    if depth > 6:
        return True  # too far to follow: keep the finding
    t = type(value)
    if t is ast.Call and type(value.func) is ast.Attribute:
        if value.func.attr in ops.DEVICE_COPY_METHODS:
            return True
        return _copied_from_device(a, value.func.value, depth + 1)  # .detach(), .float(), .squeeze(0)...
    if t is ast.Attribute or t is ast.Subscript:
        return _copied_from_device(a, value.value, depth + 1)  # .data, .T, x[0]
    if t is ast.BinOp:
        return _copied_from_device(a, value.left, depth + 1) or _copied_from_device(a, value.right, depth + 1)
    if t is ast.UnaryOp:
        return _copied_from_device(a, value.operand, depth + 1)
    if t is ast.Name:
        bound = a.bound_value(value.id) or assigned_once_from(a.stack, value.id)
        return bound is not None and _copied_from_device(a, bound, depth + 1)
    return False


def _read_into_python(a, node: ast.Call) -> bool:
    """``node`` is read into Python values at once: the receiver of ``.tolist()``/``.item()``
    (``t.numpy().tolist()``), or the argument of ``list()``/``int()``... (deepspeed's
    ``item.view(list(size.numpy()))``; measured on torch 2.13: a break, "Data dependent operator")."""
    parent = a.stack[-2] if len(a.stack) > 1 else None  # the walker checks a call with the call atop its stack
    if type(parent) is ast.Call:
        return node in parent.args and type(parent.func) is ast.Name and parent.func.id in _PYTHON_READERS
    return type(parent) is ast.Attribute and parent.value is node and parent.attr in ops.DATA_METHODS


#: builtins that turn an array's values into Python values
_PYTHON_READERS = frozenset({"list", "tuple", "set", "sorted", "int", "float", "bool"})


def _moved_tensor(value: ast.expr) -> bool:
    """``model(images).cpu().tolist()``, ``out.detach().item()``: a value moved or detached first is a
    tensor (numpy arrays have neither method; a module's ``.cpu()`` gives a module, which has no ``.tolist()``)."""
    return type(value) is ast.Call and type(value.func) is ast.Attribute and value.func.attr in ops.TENSOR_MOVE_METHODS


def _python_sequence(a, value: ast.expr) -> bool:
    """A list, tuple or ModuleList (not a dict: a tensor key is hashed, not read); a value of unknown kind
    named as a list (espnet's ``self.token_list[x]``, lavis' ``answer_list[max_id]``)."""
    kind = a.kind(value)
    if kind == MODULE:
        return True
    if type(kind) is tuple:
        return kind[0] in (SEQ, TUPLE)
    if kind is None or (kind in TENSORISH and a.uncertain(value)):
        name = value.id if type(value) is ast.Name else value.attr if type(value) is ast.Attribute else ""
        if name.lower().endswith("list"):
            return True
    if kind != PY:
        return False
    if isinstance(value, (ast.List, ast.Tuple, ast.ListComp)):
        return True
    return isinstance(value, ast.Name) and a.bound_to_sequence(value.id)
