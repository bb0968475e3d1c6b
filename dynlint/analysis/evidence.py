"""Evidence from use: names a function uses the way only tensors are used.

A reader who sees ``x.detach()``, ``x.new_zeros(n)``, ``x.device`` or
``torch.sigmoid(x)`` knows ``x`` holds a tensor, whatever its annotation or
its callers say.  ``tensor_names`` collects such names in one function's text;
the walker takes a name bound to an unknown value there as a proven tensor.
What counts as evidence is data in ``dynlint.ops`` (``TENSOR_ONLY_METHODS``,
``TENSOR_ONLY_ATTRIBUTES``, which torch functions take a tensor first).

The search runs on the function's source text with regular expressions rather
than on its tree: it is needed for almost every function, and a second walk
over every tree cost as much as the analysis itself (measured on timm).  Text
inside the function's nested functions counts too (their names rarely clash),
its docstring does not, nor do comments.
"""

from __future__ import annotations

import re
from typing import Callable

from dynlint import ops

_NAME = r"[A-Za-z_]\w*"
_NOT_AFTER = r"(?<![\w.])"   # a name, not an attribute of something else
# name.attr, and whether it is called: one scan for tensor-only methods and attributes (an
# alternation of ~150 method names made the regex engine ten times slower than this)
_MEMBER_RE = re.compile(_NOT_AFTER + rf"({_NAME})\s*\.\s*({_NAME})(\s*\(\s*\)?|\s*=(?!=))?")
_CALL_RE = re.compile(_NOT_AFTER + rf"({_NAME}(?:\.{_NAME})*)\s*\(\s*({_NAME})\s*(?:,\s*({_NAME})\s*)?[,)]")
# torch.log(x[...]): the first argument indexes a name that torch then takes as a tensor (with the start of the
# index: a string or a name that says a key makes the name a dict of tensors instead)
_INDEXED_CALL_RE = re.compile(_NOT_AFTER + rf"({_NAME}(?:\.{_NAME})*)\s*\(\s*({_NAME})\s*\["
                              rf"\s*(['\"]|{_NAME}(?:\.{_NAME})*)?")
# torch.bmm(feats["atom_to_token"], ...), torch.index_select(data[POS_KEY], ...): the whole argument a dict's
# entry (a cast of it allowed)
_KEYED_CALL_RE = re.compile(_NOT_AFTER + rf"{_NAME}(?:\.{_NAME})*\s*\(\s*{_NAME}\s*\[\s*(?:'[^'\n]*'|\"[^\"\n]*\"|"
                            rf"{_NAME}(?:\.{_NAME})*)\s*\]"
                            rf"(?:\s*\.\s*(?:float|long|int|bool|half|double)\s*\(\s*\))?\s*[,)]")
# a comment: a whole line of one (whatever it holds: `# custom's kernel (~N=4096)`), or the end of a line
# when no quote follows the `#` (a `#` inside a string is left alone)
_COMMENT_RE = re.compile(r"^[ \t]*#.*$|#[^\n'\"]*$", re.M)
# torch.cat([a, b]) / torch.stack((a, b), dim=0): the elements
_SEQUENCE_CALL_RE = re.compile(_NOT_AFTER + rf"({_NAME}(?:\.{_NAME})*)\s*\(\s*[\[(]([^\[\]()]*)[\])]")
_TORCH_FUNCTION_NAMESPACES = ("torch.", "torch.nn.functional.", "torch.linalg.", "torch.special.", "torch.fft.")
_NOT_NAMES = frozenset({"self", "cls", "None", "True", "False"})
_INVERT_RE = re.compile(rf"~\s*({_NAME})\b(?!\s*[.(\[])")
_MASK_ARGUMENT_RE = re.compile(rf"\.\s*(?:masked_fill_?|masked_scatter_?|masked_select)\s*\(\s*(?:mask\s*=\s*)?({_NAME})\s*[,)]")
_WHERE_RE = re.compile(_NOT_AFTER + rf"({_NAME}(?:\.{_NAME})*)\s*\(\s*({_NAME})\s*,[^,()]*,")
_IDENTIFIER_RE = re.compile(_NAME)
# x.size(0), x.size(-1), x.size(dim=1): a size asked for one dimension (numpy's and pandas' size is an
# attribute; other classes' size() takes no dimension)
_DIMENSION_SIZE_RE = re.compile(_NOT_AFTER + rf"({_NAME})\s*\.\s*size\s*\(\s*(?:-?\s*\d+\s*\)|dim\s*=)")
# accelerator.backward(loss) / scaler.scale(loss).backward(): a method taking the loss tensor
_ARGUMENT_METHOD_RE = re.compile(rf"\.\s*({_NAME})\s*\(\s*({_NAME})\s*(\)\s*\.\s*backward\s*\(|[,)])")


def mask_names(text: str, aliases: dict[str, str], is_local: Callable[[str], bool]) -> frozenset[str]:
    """Names used as boolean masks in ``text``: inverted (``~keep``), the mask of
    ``masked_fill``/``masked_select``, the condition of a three-argument ``torch.where``."""
    if "~" not in text and "mask" not in text and "where" not in text:
        return frozenset()
    text = _COMMENT_RE.sub("", text) if "#" in text else text
    found = set(_INVERT_RE.findall(text))
    found.update(_MASK_ARGUMENT_RE.findall(text))
    for callee, condition in _WHERE_RE.findall(text):
        if _qualify(callee, aliases, is_local) == "torch.where":
            found.add(condition)
    return frozenset(n for n in found if n not in _NOT_NAMES and (n not in aliases or is_local(n)))


# x.view(B, H, W, C), x.reshape(b, n, -1): the sizes given to a shape method, as written
_SHAPE_CALL_RE = re.compile(r"\.\s*(?:view|reshape|expand|new_zeros|new_ones|new_empty)\s*\(([^()\[\]]*)\)")


def size_names(text: str) -> frozenset[str]:
    """Names given as sizes to a tensor's shape methods (``x.view(B, H, W, C)``): among several sizes
    written one by one, each is a number (swin's ``forward(self, x, H, W)``)."""
    if "view" not in text and "reshape" not in text and "expand" not in text and "new_" not in text:
        return frozenset()
    found = set()
    for arguments in _SHAPE_CALL_RE.findall(_COMMENT_RE.sub("", text) if "#" in text else text):
        parts = [part.strip() for part in arguments.split(",")]
        if len(parts) < 2 or any("=" in part for part in parts):
            continue  # one argument may be a shape tuple or a dtype; keywords say something else
        found.update(part for part in parts if _IDENTIFIER_RE.fullmatch(part))
    return frozenset(found - _NOT_NAMES)


_NUMPY_USE_RE = re.compile(_NOT_AFTER + rf"({_NAME})\s*\.\s*(?:astype\s*\(|tobytes\s*\(|size\b(?!\s*\())")


def numpy_names(text: str) -> frozenset[str]:
    """Names used the way only numpy arrays are: ``x.astype(...)``, ``x.tobytes()``, ``x.size`` read
    as an attribute (a tensor's ``size`` is a method)."""
    if "astype" not in text and "size" not in text and "tobytes" not in text:
        return frozenset()
    return frozenset(_NUMPY_USE_RE.findall(_COMMENT_RE.sub("", text) if "#" in text else text))


def _names_a_shape(name: str) -> bool:
    """``new_shape``, ``batch_size``: a name for a shape (a torch.Size has ``.numel()`` too)."""
    return not ops.SHAPE_NAME_WORDS.isdisjoint(name.lower().split("_"))


def tensor_names(text: str, aliases: dict[str, str], is_local: Callable[[str], bool]) -> frozenset[str]:
    """Names used as tensors in ``text`` (and, marked with ``DICT_MARK``, names of dicts whose entries
    are).  ``aliases`` maps local names to what they import
    (``F`` -> ``torch.nn.functional``); ``is_local(name)`` tells a local binding that hides one."""
    if "." not in text and "(" not in text:
        return frozenset()
    text = _COMMENT_RE.sub("", text) if "#" in text else text
    methods, attributes = ops.TENSOR_ONLY_METHODS, ops.TENSOR_ONLY_ATTRIBUTES
    found = set()
    for name, member, after in _MEMBER_RE.findall(text):
        if after:
            if after[-1] == ")":  # x.long(): a call without arguments
                if member in methods and not (member == "numel" and _names_a_shape(name)):
                    found.add(name)
            elif after[-1] == "(" and member in methods and member not in ops.NO_ARGUMENT_TENSOR_METHODS:
                found.add(name)  # env.bool("X", False) is no tensor cast
        elif member in attributes:
            found.add(name)
    if "size" in text:
        found.update(_DIMENSION_SIZE_RE.findall(text))
    if "backward" in text:
        for member, name, after in _ARGUMENT_METHOD_RE.findall(text):
            if member in ops.TENSOR_ARGUMENT_METHODS or (member in ops.SCALED_BACKWARD_METHODS and len(after) > 1):
                found.add(name)
    # Calls count only when the callee is a torch function (its first name imports torch or one of
    # its modules), so the call patterns are tried only where such a name starts: the same matches
    # a scan of the whole text finds (no match can start inside another one), at a fraction of
    # the cost.
    starts = _torch_name_starts(text, aliases, is_local)
    sequences = "[" in text or "((" in text
    indexed = "[" in text
    for start in starts:
        if sequences:
            match = _SEQUENCE_CALL_RE.match(text, start)
            if match is not None:
                callee, elements = match.groups()
                if _qualify(callee, aliases, is_local) in ops.TENSOR_SEQUENCE_FUNCTIONS:
                    found.update(e.strip() for e in elements.split(",") if _IDENTIFIER_RE.fullmatch(e.strip()))
        if indexed:
            match = _INDEXED_CALL_RE.match(text, start)
            if match is not None:
                callee, first, key = match.groups()
                qual = _qualify(callee, aliases, is_local)
                # torch.index_select(data[EDGE_TYPE_KEY], ...), torch.bmm(feats["atom_to_token"], ...): the
                # entry of a dict is the tensor, not the dict; the dict is one of tensors (``first + "[]"``)
                if qual is not None and _takes_tensor_first(qual):
                    if not _a_key(key):
                        found.add(first)
                    elif _KEYED_CALL_RE.match(text, start):  # not `biject_to(site["fn"].support)`
                        found.add(first + DICT_MARK)
        match = _CALL_RE.match(text, start)
        if match is not None:
            callee, first, second = match.groups()
            qual = _qualify(callee, aliases, is_local)
            if qual is None or not _takes_tensor_first(qual):
                continue
            found.add(first)
            if second and qual in ops.TWO_TENSOR_FUNCTIONS:
                found.add(second)
    if found and "=" in text:
        # `bound = torch.Tensor([bound])`: the name is made a tensor from its own value here, so what the text
        # does with it as a tensor is done to the new binding (nflows' get_temperature(max_value, bound=1 - 1e-3));
        # so is a list joined into one (laplace's `Js = torch.cat(Js, dim=-1)`, then `Js.detach()`)
        for name, callee in _CONVERTED_RE.findall(text):
            qual = _qualify(callee, aliases, is_local)
            if name in found and (qual in ops.SELF_CONVERTING_CONSTRUCTORS or qual in ops.TENSOR_SEQUENCE_FUNCTIONS):
                found.discard(name)
    # `torch.sigmoid(...)` is a module's function, not a method of a name called torch
    return frozenset(n for n in found if n not in _NOT_NAMES and (n not in aliases or is_local(n)))


# `x = torch.tensor(x, ...)`, `bound = torch.Tensor([bound])`, `js = torch.cat(js)`: a name converted to a tensor
# from itself
_CONVERTED_RE = re.compile(rf"^[ \t]*({_NAME})[ \t]*=[ \t]*({_NAME}(?:\.{_NAME})*)[ \t]*\([ \t]*\[?[ \t]*\1\b(?![ \t]*[.\[(])",
                           re.M)


#: appended to a name in ``tensor_names``'s answer: the name holds a dict whose entries (looked up by key)
#: are passed to torch as tensors
DICT_MARK = "[]"


def _a_key(index: str | None) -> bool:
    """The start of an index that looks a key up: a string, or a name that says a key (``CELL_KEY``,
    ``self.in_field``)."""
    return bool(index) and (index[0] in "'\"" or ops.named_as_key(index.rpartition(".")[2]))


def _torch_name_starts(text: str, aliases: dict[str, str], is_local: Callable[[str], bool]) -> list[int]:
    """Where in ``text`` a name that imports torch or one of its modules (and is not hidden by a
    local binding) occurs: every place a call of a torch function can start (a superset: the
    call patterns decide)."""
    starts = set()
    for head, target in aliases.items():
        if (target == "torch" or target.startswith("torch.")) and not is_local(head):
            position = text.find(head)
            while position != -1:
                starts.add(position)
                position = text.find(head, position + 1)
    return sorted(starts)


def _qualify(callee: str, aliases: dict[str, str], is_local: Callable[[str], bool]) -> str | None:
    head, _, rest = callee.partition(".")
    target = aliases.get(head)
    if target is None or is_local(head):
        return None
    return f"{target}.{rest}" if rest else target


def _takes_tensor_first(qual: str) -> bool:
    """``torch.f(x, ...)``: x is a tensor for most torch functions (not the creation ops, not
    the ones taking sizes, data, sequences or any object)."""
    if not qual.startswith(_TORCH_FUNCTION_NAMESPACES) or "._" in qual:
        return False
    if qual in ops.NOT_TENSOR_FIRST_FUNCTIONS or qual in ops.NON_TENSOR_TORCH \
            or qual.startswith(ops.NON_TENSOR_TORCH_PREFIXES) or qual.startswith(ops.FUNCTION_FIRST_TORCH_PREFIXES):
        return False
    if qual.startswith("torch.nn.") and not qual.startswith("torch.nn.functional."):
        return False
    last = qual.rsplit(".", 1)[-1]
    if last.startswith(ops.NON_TENSOR_TORCH_NAME_PREFIXES) and last not in ops.TENSOR_TORCH_SETTING_NAMES:
        return False  # torch.get_autocast_dtype(device_type)
    return not last[:1].isupper()  # classes


# Google style "x (torch.Tensor): ...", "x (Tensor, optional): ..."; numpydoc "x : torch.Tensor";
# Sphinx ":param torch.Tensor x:" and ":type x: torch.Tensor"
_GOOGLE_RE = re.compile(rf"^\s*\**({_NAME})\s*\(([^)\n]{{1,120}})\)\s*:", re.M)
_NUMPY_RE = re.compile(rf"^\s*({_NAME})\s+:\s+([^\n]{{1,120}})$", re.M)
_SPHINX_TYPE_RE = re.compile(rf":type\s+({_NAME})\s*:\s*([^\n]{{1,120}})")
_SPHINX_PARAM_RE = re.compile(rf":param\s+([^:\n]{{1,80}}?)\s+({_NAME})\s*:")
_TENSOR_WORD_RE = re.compile(r"\b(?:torch\.)?(?:Float|Long|Bool|Int|Byte|Half|Double)?[Tt]ensor\b")
_NOT_A_SINGLE_TENSOR_RE = re.compile(r"\b(?:list|List|tuple|Tuple|dict|Dict|Sequence|Iterable|ndarray|np\.|numpy|"
                                     r"array|str|int|float|bool|Module)\b|\[|\bor\b(?!\s*None)")


def documented_types(docstring: str) -> dict[str, str]:
    """Parameters a docstring documents as tensors: ``{name: "tensor"}`` (or ``"mask"`` for a
    boolean tensor).  A type that could be something else too (``Tensor or ndarray``,
    ``list[Tensor]``, ``Tensor | int``) does not count; ``Tensor, optional`` does.  A parameter
    documented as a plain Python number, flag or string and nothing else (``trunc_size (int)``,
    ``scale (float, optional)``) is ``"py"``."""
    if not docstring or ("ensor" not in docstring and not _SCALAR_TYPE_HINT_RE.search(docstring)):
        return {}
    found: dict[str, str] = {}
    pairs = _GOOGLE_RE.findall(docstring) + _NUMPY_RE.findall(docstring) + _SPHINX_TYPE_RE.findall(docstring)
    pairs += [(name, text) for text, name in _SPHINX_PARAM_RE.findall(docstring)]
    for name, text in pairs:
        text = text.replace(", optional", "").replace(" or None", "").replace("Optional", "").strip()
        if _TENSOR_WORD_RE.search(text) and not _NOT_A_SINGLE_TENSOR_RE.search(text):
            found.setdefault(name, "mask" if "BoolTensor" in text or "bool" in text.lower().split() else "tensor")
        elif _SCALAR_TYPE_RE.fullmatch(text):
            found.setdefault(name, "py")
    return found


#: a whole documented type that is one plain Python scalar: ``int``, ``float``, ``bool``, ``str``, ``[int]``,
#: or a list or tuple of them (``list of int``, dgllife's ``batch_num_candidate_products : list of int``;
#: ``list[int]``, ``tuple of ints``)
_SCALAR_TYPE_RE = re.compile(r"\[?(?:int|float|bool|str|integer|number)\]?"
                             r"|(?:list|tuple|List|Tuple) of (?:int|float|bool|str|integer)s?"
                             r"|(?:list|tuple|List|Tuple)\[(?:int|float|bool|str)(?:, ?\.\.\.)?\]")
_SCALAR_TYPE_HINT_RE = re.compile(r"\((?:int|float|bool|str)\b|:\s*(?:int|float|bool|str)\s*$"
                                  r"|(?:list|tuple|List|Tuple)(?: of |\[)(?:int|float|bool|str)", re.M)


# helper(a, b, key=c) / self.helper(...): a call of a plain name or of a method on self, its arguments without
# nested brackets (the names among them are what ``helper_calls`` reports)
_HELPER_CALL_RE = re.compile(_NOT_AFTER + rf"((?:self\s*\.\s*)?{_NAME})\s*\(([^()\[\]{{}}]*)\)")
_KEYWORD_ARGUMENT_RE = re.compile(rf"^({_NAME})\s*=\s*({_NAME})$")


def helper_calls(text: str) -> list[tuple[str, tuple, tuple]]:
    """Calls in a function's text that may run a project helper: ``(callee, positional, keywords)`` with the
    callee ``name`` or ``self.name``, ``positional`` the arguments in order (a plain name, or None for any
    other expression) and ``keywords`` the ``(keyword, name)`` pairs passing a plain name.  A call with
    ``*args``/``**kwargs`` keeps only what comes before them."""
    found = []
    for match in _HELPER_CALL_RE.finditer(_COMMENT_RE.sub("", text)):
        callee = re.sub(r"\s+", "", match.group(1))
        if callee in _NOT_NAMES or callee in ops.BUILTIN_CALLS_NOT_HELPERS:
            continue
        positional, keywords = [], []
        for part in match.group(2).split(","):
            part = part.strip()
            if not part:
                continue
            if part.startswith("*"):
                break
            keyword = _KEYWORD_ARGUMENT_RE.match(part)
            if keyword:
                keywords.append((keyword.group(1), keyword.group(2)))
            elif "=" in part and "==" not in part:
                continue  # a keyword given another expression
            elif keywords:
                break  # not Python
            else:
                positional.append(part if _IDENTIFIER_RE.fullmatch(part) and part not in _NOT_NAMES else None)
        if any(positional) or keywords:
            found.append((callee, tuple(positional), tuple(keywords)))
    return found

