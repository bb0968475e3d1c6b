"""The static analyzer: one stdlib-``ast`` pass per file feeding every rule.

The pass resolves imports and aliases, infers what each expression is (a
tensor, a boolean mask, a static size, data copied from a tensor, a numpy
array, a plain Python value, or unknown) in source order, knows which code runs
on the host (Dataset ``__getitem__``/``__iter__``, ``collate_fn`` callbacks),
and reports hazards.  Knowledge about ops lives in ``dynlint.ops``.
"""

from __future__ import annotations

import ast
import functools
import os
import sys

from dynlint import checks, ops
from dynlint.analysis.syntax import argument, has_keyword, is_constant, keyword, keyword_node, only_raises, size_elements  # noqa: F401
from dynlint.diagnostics import Finding

from dynlint.analysis.kinds import (  # noqa: F401 - the kind names are part of this module's vocabulary
    is_not_tensor, DATA, DATA_DERIVED, MASK, MODULE, NDARRAY, NOT_TENSOR, PY, SCALAR_TENSOR, SIZE, TENSOR, TENSORISH,
    combine_binop as _combine_binop,
)

_STRICT = bool(os.environ.get("DYNLINT_STRICT"))  # tests: let fix-builder errors surface



class _Scope:
    """Names of one function (or the module) and what they hold."""

    __slots__ = ("kinds", "bindings", "host", "name", "assumed", "bound_at")

    def __init__(self, name: str, host: bool):
        self.name = name
        self.kinds: dict[str, str | None] = {}
        # forward() parameters taken to be tensors without proof: good enough to type what is
        # derived from them (x.sum(), x > 0), not to judge the bare name itself (a flag, a size, a list)
        self.assumed: set[str] = set()
        self.bound_at: dict[str, int] = {}  # name -> stamp of its latest (re)binding
        self.bindings: dict[str, tuple[ast.expr, int] | None] = {}  # name -> (value, stamp when bound)
        self.host = host


class _ClassInfo:
    __slots__ = ("name", "is_module", "is_dataset", "attr_kinds")

    def __init__(self, name: str, is_module: bool, is_dataset: bool):
        self.name = name
        self.is_module = is_module
        self.is_dataset = is_dataset
        self.attr_kinds: dict[str, str | None] = {}


class Analyzer:
    def __init__(self, lines: list[str], dynamic_ops=()):
        self.lines = lines
        self.rules = checks.load_all()
        self.dispatch = _dispatch(tuple(dynamic_ops))
        self.aliases: dict[str, str] = {}      # local name -> qualified name of a module or object
        self.imports_torch = False
        self.torch_alias: str | None = None
        self.module_scope = _Scope("<module>", host=False)
        self.scopes: list[_Scope] = [self.module_scope]
        self.classes: list[_ClassInfo] = []
        self.local_classes: dict[str, _ClassInfo] = {}
        self.stack: list[ast.AST] = []          # ancestors of the node being visited
        self.control_depth = 0                  # >0 inside if/for/while/try bodies of the current scope
        self.host_callbacks: set[str] = set()   # names of functions passed as collate_fn/worker_init_fn
        self.findings: list[tuple[Finding, tuple[str, ...], bool]] = []  # finding, enclosing functions, host
        self.seen: set[tuple[str, int, int]] = set()
        self.silenced_syncs: set[int] = set()   # id() of host-sync nodes already covered by DYN202/DYN302
        self._kind_cache: dict[int, str | None] = {}
        self.stamp = 0                          # counts bindings, to tell which came later

    # ------------------------------------------------------------------ driver
    def run(self, tree: ast.AST) -> list[Finding]:
        self.visit(tree)
        results = []
        for finding, functions, host in self.findings:
            device_rule = self.rules[finding.code].scope == checks.Scope.DEVICE
            if device_rule and (not self.imports_torch or host or self.host_callbacks.intersection(functions)):
                continue
            results.append(finding)
        return results

    def visit(self, node: ast.AST) -> None:
        node_type = type(node)
        if node_type in _LEAVES:
            return
        method = _DISPATCH.get(node_type)
        self.stack.append(node)
        try:
            if method is None:
                self.generic_visit(node)
            else:
                method(self, node)
        finally:
            self.stack.pop()

    def generic_visit(self, node: ast.AST) -> None:
        node_type = type(node)
        fields = _CHILD_FIELDS.get(node_type)
        if fields is None:
            fields = _CHILD_FIELDS[node_type] = tuple(f for f in node._fields if f not in _NON_CHILD_FIELDS)
        for field in fields:
            value = getattr(node, field, None)
            if type(value) is list:
                for item in value:
                    if isinstance(item, ast.AST):
                        self.visit(item)
            elif isinstance(value, ast.AST):
                self.visit(value)

    def visit_all(self, nodes) -> None:
        for node in nodes:
            self.visit(node)

    # ------------------------------------------------------------------ reporting
    @property
    def scope(self) -> _Scope:
        return self.scopes[-1]

    def report(self, rule: checks.Rule, node: ast.AST, message: str, fix_node: ast.AST | None = None) -> None:
        code = rule.code
        line, col, end_line, end_col = self.position(node)
        key = (code, line, col)
        if key in self.seen:
            return
        self.seen.add(key)
        fix = None
        if rule.fix is not None:
            target = fix_node or node
            ancestors = self.stack[: self.stack.index(target)] if target in self.stack else list(self.stack)
            try:
                fix = rule.fix(target, ancestors, self)
            except Exception:
                if _STRICT:
                    raise
                fix = None
        functions = tuple(s.name for s in self.scopes[1:])
        host = any(s.host for s in self.scopes)
        self.findings.append((Finding(code, message, line, col, end_line, end_col, fix), functions, host))

    def position(self, node: ast.AST) -> tuple[int, int, int, int]:
        line = node.lineno
        end_line = getattr(node, "end_lineno", None) or line
        col = self._char_col(line, node.col_offset)
        end_col = self._char_col(end_line, getattr(node, "end_col_offset", None) or node.col_offset)
        return line, col, end_line, end_col

    def _char_col(self, line: int, byte_col: int) -> int:
        if 0 < line <= len(self.lines):
            text = self.lines[line - 1]
            if not text.isascii():
                return len(text.encode("utf-8")[:byte_col].decode("utf-8", errors="replace"))
        return byte_col

    # FixContext -----------------------------------------------------------------
    def segment(self, node: ast.AST) -> str:
        line, col, end_line, end_col = self.position(node)
        if line == end_line:
            return self.lines[line - 1][col:end_col]
        parts = [self.lines[line - 1][col:]]
        parts.extend(self.lines[line:end_line - 1])
        parts.append(self.lines[end_line - 1][:end_col])
        return "\n".join(parts)

    def binding(self, name: str) -> ast.expr | None:
        entry = self.scope.bindings.get(name)
        if entry is None:
            return None
        value, stamp = entry
        # after ``m = x > 0; x = x[:, 1:]`` m no longer describes the current x: checked here,
        # lazily, because fix builders ask rarely and assignments are many
        bound_at = self.scope.bound_at
        for sub in ast.walk(value):
            if type(sub) is ast.Name and bound_at.get(sub.id, 0) > stamp:
                return None
        return value

    # ------------------------------------------------------------------ names
    def qualname(self, node: ast.AST) -> str | None:
        """Fully qualified name of a Name/Attribute chain rooted at an import, else None."""
        if isinstance(node, ast.Name):
            if node.id in self.aliases and not self._shadowed(node.id):
                return self.aliases[node.id]
            if node.id in _BUILTIN_NAMES and not self._shadowed(node.id):
                return node.id
            return None
        if isinstance(node, ast.Attribute):
            base = self.qualname(node.value)
            return f"{base}.{node.attr}" if base else None
        return None

    def _shadowed(self, name: str) -> bool:
        """A local binding hides the import or builtin of the same name."""
        for scope in reversed(self.scopes):
            if name in scope.kinds:
                return True
        return False

    def lookup(self, name: str) -> str | None:
        for scope in reversed(self.scopes):  # closures see their enclosing functions' names
            if name in scope.kinds:
                return scope.kinds[name]
        return None

    def _rebound(self, name: str) -> None:
        """``name`` gets a new value (see ``binding``)."""
        self.stamp += 1
        self.scope.bound_at[name] = self.stamp

    def bind(self, target: ast.AST, kind: str | None, value: ast.expr | None = None) -> None:
        if isinstance(target, ast.Name):
            previous = self.scope.kinds.get(target.id, kind)
            if self.control_depth and previous != kind:
                kind = None  # bound differently on different paths: unknown after the branch
            self.scope.kinds[target.id] = kind
            if value is not None and (self._is_module_call(value) or self.uncertain(value)):
                self.scope.assumed.add(target.id)  # often a tensor, but also tuples and ModelOutputs
            else:
                self.scope.assumed.discard(target.id)
            self._rebound(target.id)
            if value is not None and self.control_depth == 0 and target.id not in self.scope.bindings \
                    and self._is_plain_assignment():
                self.scope.bindings[target.id] = (value, self.stamp)
            else:  # rebound, or bound under a branch/loop: the value at a later point is not known
                self.scope.bindings[target.id] = None
        elif isinstance(target, (ast.Tuple, ast.List)):
            element = _unpacked_kind(kind)
            if value is not None and self._is_module_call(value):
                element = None  # out, (h, c) = self.lstm(x): the parts' types are unknown
            for item in target.elts:
                self.bind(item.value if isinstance(item, ast.Starred) else item,
                          element if not isinstance(item, ast.Starred) else None)
        elif isinstance(target, ast.Attribute) and isinstance(target.value, ast.Name) and target.value.id == "self":
            # Only submodules and tensors are worth remembering: other attributes set in __init__ are
            # configuration, constant by the time forward runs.
            if self.classes:
                self.classes[-1].attr_kinds[target.attr] = (
                    kind if kind == MODULE else TENSOR if kind in TENSORISH else None if kind is None else PY)

    # ------------------------------------------------------------------ kinds
    def kind(self, node: ast.AST) -> str | None:
        key = id(node)
        cache = self._kind_cache
        if key in cache:
            return cache[key]
        result = self._infer(node)
        cache[key] = result
        return result

    def _is_module_call(self, node: ast.AST) -> bool:
        return type(node) is ast.Call and self.qualname(node.func) is None and self.kind(node.func) == MODULE

    def value_kind(self, node: ast.AST) -> str | None:
        """Kind of an expression judged as a value in its own right (a branch test, a size, an
        iterable): what derives from an assumed tensor without confirming it counts as unknown."""
        if self.uncertain(node):
            return None
        return self.kind(node)

    def uncertain(self, node: ast.AST) -> bool:
        """True when the expression's tensor-ness rests only on an assumption (a forward() parameter,
        a module call's result).  Calling a tensor method or reading .shape confirms it; indexing,
        arithmetic and int()/len() do not (``window_size[0] * 2`` is fine for a tuple too)."""
        t = type(node)
        if t is ast.Name:
            return node.id in self.scope.assumed
        if t is ast.Subscript:
            return self.uncertain(node.value)
        if t is ast.BinOp:
            return self.uncertain(node.left) or self.uncertain(node.right)
        if t is ast.UnaryOp:
            return self.uncertain(node.operand)
        if t is ast.Call and type(node.func) is ast.Name and node.func.id in _VALUE_BUILTINS:
            return any(self.uncertain(a) for a in node.args)
        return False

    def _infer(self, node: ast.AST) -> str | None:
        t = type(node)
        if t is ast.Name:
            return self.lookup(node.id)
        if t is ast.Constant or t in _PY_DISPLAYS:
            return PY
        if t is ast.Attribute:
            return self._infer_attribute(node)
        if t is ast.Call:
            return self._infer_call(node)
        if t is ast.Subscript:
            base = self.kind(node.value)
            if base in (MASK, SCALAR_TENSOR):
                return MASK if base == MASK else SCALAR_TENSOR
            if base == TENSOR:
                return TENSOR
            if base in (SIZE, DATA, NDARRAY):
                return base
            return None
        if t is ast.BinOp:
            return _combine_binop(self.kind(node.left), self.kind(node.right), node.op)
        if t is ast.UnaryOp:
            operand = self.kind(node.operand)
            if isinstance(node.op, ast.Not):
                return DATA if operand in TENSORISH or operand == DATA else (PY if operand else None)
            if isinstance(node.op, ast.Invert) and operand == MASK:
                return MASK
            return operand
        if t is ast.Compare:
            if all(isinstance(op, (ast.Is, ast.IsNot, ast.In, ast.NotIn)) for op in node.ops):
                return PY
            kinds = [self.kind(node.left)] + [self.kind(c) for c in node.comparators]
            if any(k in TENSORISH for k in kinds):
                return SCALAR_TENSOR if all(k in (SCALAR_TENSOR, PY, SIZE, DATA) for k in kinds) else MASK
            if DATA in kinds:
                return DATA
            if NDARRAY in kinds:
                return NDARRAY
            if all(k in (PY, SIZE) for k in kinds):
                return PY
            return None
        if t is ast.BoolOp:
            kinds = {self.kind(v) for v in node.values}
            return kinds.pop() if len(kinds) == 1 else None
        if t is ast.IfExp:
            body, orelse = self.kind(node.body), self.kind(node.orelse)
            return body if body == orelse else None
        if t is ast.NamedExpr:
            return self.kind(node.value)
        return None

    def _infer_attribute(self, node: ast.Attribute) -> str | None:
        attr = node.attr
        value = node.value
        if isinstance(value, ast.Name) and value.id == "self" and self.classes:
            return self.classes[-1].attr_kinds.get(attr)
        if self.qualname(node) is not None:  # torch.float32, np.pi, module attributes
            return PY if not self.qualname(node).startswith(("torch.nn.", "numpy.")) else None
        base = self.kind(value)
        if base in TENSORISH:
            if attr == "shape":
                return SIZE
            if attr in ops.META_ATTRIBUTES:
                return PY
            if attr in ops.TENSOR_ATTRIBUTES:
                return MASK if base == MASK and attr in ("T", "mT") else TENSOR
            return None
        if base == NDARRAY:
            return PY if attr in ("shape", "ndim", "dtype", "size") else NDARRAY if attr in ("T", "real", "imag") else None
        if base == SIZE:
            return SIZE
        return None

    def _infer_call(self, node: ast.Call) -> str | None:
        func = node.func
        qual = self.qualname(func)
        if qual is not None:
            return self._infer_qualified_call(qual, node)
        if self.kind(func) == MODULE:
            return TENSOR  # calling an nn.Module instance runs its forward
        if isinstance(func, ast.Attribute):
            receiver = self.kind(func.value)
            method = func.attr
            if receiver in TENSORISH:
                return _tensor_method_kind(receiver, method, node)
            if receiver == NDARRAY:
                return PY if method in ("item", "tolist") else NDARRAY
            if receiver == MODULE:
                return TENSOR if method in ("forward", "__call__") else None
            if receiver == SIZE:
                return SIZE if method in ("numel", "index", "count") else None
            if receiver is None and method in ops.SIZE_METHODS and node.args:
                return SIZE  # x.size(0) on an unknown receiver: size() with an argument is tensor-specific
            return None
        if isinstance(func, ast.Name) and func.id in self.local_classes and self.local_classes[func.id].is_module:
            return MODULE
        return None

    def _infer_qualified_call(self, qual: str, node: ast.Call) -> str | None:
        args = node.args
        if qual in _BUILTIN_NAMES:
            return self._infer_builtin(qual, args)
        root = qual.split(".", 1)[0]
        if root == "numpy":
            return NDARRAY
        if root != "torch":
            return None
        if "._" in qual:
            return None  # private APIs (torch._foreach_*, torch._custom_ops.*): no promise about what they return
        if qual in ops.MASK_FUNCTIONS:
            return MASK
        if qual in ops.DATA_TORCH_FUNCTIONS:
            return DATA
        if qual in ops.NON_TENSOR_TORCH or qual.startswith(ops.NON_TENSOR_TORCH_PREFIXES):
            return PY
        namespace, _, last = qual.rpartition(".")
        if qual.startswith("torch.nn.") and not qual.startswith("torch.nn.functional."):
            if qual in ("torch.nn.Parameter", "torch.nn.parameter.Parameter", "torch.nn.Buffer"):
                return TENSOR
            if last[:1].isupper():
                return MODULE
            # Functions outside torch.nn.functional are helpers (torch.nn.parameter.is_lazy,
            # torch.nn.attention.sdpa_kernel, hook registration) unless their namespace is listed.
            return TENSOR if namespace in ops.TENSOR_NAMESPACES else None
        if namespace not in ops.TENSOR_NAMESPACES:
            return None  # torch.version.cuda.split(...), torch.ops.* and the like
        if last[:1].isupper() and qual not in ("torch.Tensor",):
            return None  # classes: torch.Generator(...), torch.Size(...) handled above
        if last in ops.FULL_REDUCTIONS and len(args) <= 1 and not has_keyword(node, "dim", "axis"):
            return SCALAR_TENSOR
        return TENSOR

    def _infer_builtin(self, name: str, args: list[ast.expr]) -> str | None:
        kinds = [self.kind(a) for a in args]
        if name == "len":
            if kinds and (kinds[0] in TENSORISH):
                return SIZE
            if kinds and kinds[0] == DATA:
                return SIZE  # len(t.tolist()) is a tensor size
            if kinds and kinds[0] == SIZE:
                return PY  # len(x.shape) is the rank
            return PY
        if name in ops.HOST_SYNC_BUILTINS:
            if not kinds:
                return PY
            if kinds[0] in TENSORISH or kinds[0] == DATA:
                return DATA
            if kinds[0] == SIZE:
                return SIZE
            return PY if kinds[0] in (PY, NDARRAY) else None
        if name in ("max", "min", "abs", "round", "sum"):
            if DATA in kinds or any(k in TENSORISH for k in kinds):
                return DATA if name != "sum" else None
            if SIZE in kinds:
                return SIZE
            return PY if kinds and all(k == PY for k in kinds) else None
        if name in ("range", "list", "tuple", "dict", "set", "str", "sorted", "repr", "isinstance",
                    "hasattr", "getattr", "type", "id", "print", "enumerate", "zip", "map", "filter"):
            return PY if name not in ("getattr", "list", "tuple", "sorted") else (
                DATA if kinds and kinds[0] == DATA else (SIZE if kinds and kinds[0] == SIZE and name == "tuple" else None))
        return None

    # ------------------------------------------------------------------ scopes & statements
    def visit_Import(self, node: ast.Import) -> None:
        for alias in node.names:
            root = alias.name.split(".", 1)[0]
            if root in ops.TORCH_MODULE_ROOTS:
                self.imports_torch = True
            if alias.asname:
                self._set_alias(alias.asname, alias.name)
            else:
                self._set_alias(root, root)

    def visit_ImportFrom(self, node: ast.ImportFrom) -> None:
        if node.level or not node.module:
            return
        root = node.module.split(".", 1)[0]
        if root in ops.TORCH_MODULE_ROOTS:
            self.imports_torch = True
        for alias in node.names:
            if alias.name == "*":
                continue
            self._set_alias(alias.asname or alias.name, f"{node.module}.{alias.name}")

    def _set_alias(self, local: str, qualified: str) -> None:
        self.aliases[local] = _canonical(qualified)
        for scope in self.scopes:
            scope.kinds.pop(local, None)
        if qualified == "torch" and self.scope is self.module_scope:
            self.torch_alias = local

    def visit_FunctionDef(self, node) -> None:
        self.visit_all(node.decorator_list)
        self._visit_defaults(node.args)
        if node.returns is not None:
            self.visit(node.returns)
        cls = self.classes[-1] if self.classes and self._directly_in_class() else None
        host = bool(cls and cls.is_dataset and node.name in ops.HOST_METHODS)
        scope = _Scope(node.name, host)
        self._bind_parameters(node, scope, cls)
        self.bind_name_in_parent(node.name)
        outer_depth = self.control_depth
        self.scopes.append(scope)
        self.control_depth = 0
        try:
            self.visit_all(node.body)
        finally:
            self.scopes.pop()
            self.control_depth = outer_depth

    visit_AsyncFunctionDef = visit_FunctionDef

    def _is_plain_assignment(self) -> bool:
        """The statement being visited is ``name = value`` with a single target."""
        for node in reversed(self.stack):
            if isinstance(node, ast.Assign):
                return len(node.targets) == 1 and isinstance(node.targets[0], ast.Name)
            if isinstance(node, ast.AnnAssign):
                return isinstance(node.target, ast.Name)
            if isinstance(node, ast.stmt):
                return False
        return False

    def bind_name_in_parent(self, name: str) -> None:
        scope = self.scope
        scope.kinds[name] = None
        scope.bindings[name] = None

    def _directly_in_class(self) -> bool:
        # the enclosing node (below the FunctionDef itself) is the ClassDef
        return len(self.stack) >= 2 and isinstance(self.stack[-2], ast.ClassDef)

    def _visit_defaults(self, args: ast.arguments) -> None:
        self.visit_all(args.defaults)
        self.visit_all(d for d in args.kw_defaults if d is not None)

    def _bind_parameters(self, node, scope: _Scope, cls: _ClassInfo | None) -> None:
        args = node.args
        positional = args.posonlyargs + args.args
        is_forward = bool(cls and cls.is_module and node.name == "forward")
        defaults = [None] * (len(positional) - len(args.defaults)) + list(args.defaults)
        params = list(zip(positional, defaults)) + list(zip(args.kwonlyargs, args.kw_defaults))
        for index, (arg, default) in enumerate(params):
            if cls is not None and index == 0 and arg in positional and not _is_staticmethod(node):
                scope.kinds[arg.arg] = None  # self / cls
                scope.bindings[arg.arg] = None
                continue
            kind = self._annotation_kind(arg.annotation)
            if kind is None and is_forward and arg.annotation is None:
                if default is None:
                    kind = TENSOR
                    scope.assumed.add(arg.arg)
                elif isinstance(default, ast.Constant) and default.value is not None:
                    kind = PY
            scope.kinds[arg.arg] = kind
            scope.bindings[arg.arg] = None
        for extra in (args.vararg, args.kwarg):
            if extra is not None:
                scope.kinds[extra.arg] = None
                scope.bindings[extra.arg] = None

    def _annotation_kind(self, annotation: ast.expr | None) -> str | None:
        if annotation is None:
            return None
        if isinstance(annotation, ast.Constant) and isinstance(annotation.value, str):
            try:
                annotation = ast.parse(annotation.value, mode="eval").body
            except SyntaxError:
                return None
        # Optional[Tensor], Tensor | None
        if isinstance(annotation, ast.Subscript) and self.qualname(annotation.value) in ("typing.Optional",):
            annotation = annotation.slice
        if isinstance(annotation, ast.BinOp) and isinstance(annotation.op, ast.BitOr):
            sides = [annotation.left, annotation.right]
            sides = [s for s in sides if not (isinstance(s, ast.Constant) and s.value is None)]
            if len(sides) != 1:
                return None
            annotation = sides[0]
        qual = self.qualname(annotation)
        if qual is None and isinstance(annotation, ast.Subscript):
            qual = self.qualname(annotation.value)
        if qual is None:
            return None
        if qual in ops.TENSOR_ANNOTATIONS or qual == "torch.Tensor":
            return TENSOR
        if qual in ops.PY_ANNOTATIONS:
            return PY
        if qual in ("numpy.ndarray", "numpy.typing.NDArray"):
            return NDARRAY
        return None

    def visit_Lambda(self, node: ast.Lambda) -> None:
        self._visit_defaults(node.args)
        scope = _Scope("<lambda>", host=False)
        for arg in node.args.posonlyargs + node.args.args + node.args.kwonlyargs:
            scope.kinds[arg.arg] = None
        self.scopes.append(scope)
        try:
            self.visit(node.body)
        finally:
            self.scopes.pop()

    def visit_ClassDef(self, node: ast.ClassDef) -> None:
        self.visit_all(node.decorator_list)
        self.visit_all(node.bases)
        self.visit_all(node.keywords)
        is_module = is_dataset = False
        for base in node.bases:
            qual = self.qualname(base)
            name = qual or (base.id if isinstance(base, ast.Name) else base.attr if isinstance(base, ast.Attribute) else "")
            local = self.local_classes.get(base.id) if isinstance(base, ast.Name) else None
            if qual in ops.MODULE_BASE_QUALNAMES or (qual and qual.startswith("torch.nn.") and qual.rsplit(".", 1)[-1][:1].isupper()
                                                    and qual not in ops.DATASET_BASE_QUALNAMES) \
                    or name.endswith(ops.MODULE_BASE_SUFFIXES) or (local and local.is_module):
                is_module = True
            if qual in ops.DATASET_BASE_QUALNAMES or (local and local.is_dataset):
                is_dataset = True
        info = _ClassInfo(node.name, is_module, is_dataset)
        self.local_classes[node.name] = info
        self.bind_name_in_parent(node.name)
        self.classes.append(info)
        class_scope = _Scope(node.name, host=False)
        # class bodies see module names but their own names are not visible in methods
        outer_depth = self.control_depth
        self.scopes.append(class_scope)
        try:
            for stmt in node.body:
                if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)):
                    # methods resolve names in the enclosing (module/function) scope, not the class
                    self.scopes.pop()
                    try:
                        self.visit(stmt)
                    finally:
                        self.scopes.append(class_scope)
                else:
                    self.visit(stmt)
        finally:
            self.scopes.pop()
            self.classes.pop()
            self.control_depth = outer_depth

    def visit_Assign(self, node: ast.Assign) -> None:
        self.visit(node.value)
        kind = self.kind(node.value)
        for target in node.targets:
            self.visit_target(target)
            self.bind(target, kind, node.value)

    def visit_AnnAssign(self, node: ast.AnnAssign) -> None:
        if node.value is not None:
            self.visit(node.value)
        kind = self._annotation_kind(node.annotation)
        if kind is None and node.value is not None:
            kind = self.kind(node.value)
        self.visit_target(node.target)
        if node.value is not None or isinstance(node.target, ast.Name):
            self.bind(node.target, kind, node.value)

    def visit_AugAssign(self, node: ast.AugAssign) -> None:
        self.visit(node.value)
        target = node.target
        if isinstance(target, ast.Subscript):
            # x[m] += v reads x[m] first: the read is a dynamic-shape op
            self.check_subscript_read(target)
            self.visit(target.value)
            self.visit(target.slice)
        elif isinstance(target, ast.Name):
            combined = _combine_binop(self.lookup(target.id), self.kind(node.value), node.op)
            self.scope.kinds[target.id] = combined
            self.scope.bindings[target.id] = None
            self._rebound(target.id)
        else:
            self.visit(target)

    def visit_target(self, target: ast.AST) -> None:
        """Visit the sub-expressions of an assignment target (indexes, attribute bases)."""
        if isinstance(target, ast.Subscript):
            self.stack.append(target)
            try:
                self.visit(target.value)
                self.visit(target.slice)
            finally:
                self.stack.pop()
        elif isinstance(target, ast.Attribute):
            self.visit(target.value)
        elif isinstance(target, (ast.Tuple, ast.List)):
            for item in target.elts:
                self.visit_target(item)
        elif isinstance(target, ast.Starred):
            self.visit_target(target.value)

    def visit_Expr(self, node: ast.Expr) -> None:
        value = node.value
        # self.register_buffer("name", tensor) makes self.name a tensor
        if (isinstance(value, ast.Call) and isinstance(value.func, ast.Attribute)
                and value.func.attr in ("register_buffer", "register_parameter")
                and isinstance(value.func.value, ast.Name) and value.func.value.id == "self"
                and value.args and isinstance(value.args[0], ast.Constant) and isinstance(value.args[0].value, str)
                and self.classes):
            self.classes[-1].attr_kinds[value.args[0].value] = TENSOR
        self.visit(value)

    def visit_For(self, node) -> None:
        self.visit(node.iter)
        self.check_loop_iterable(node.iter)
        self.visit_target(node.target)
        self.bind(node.target, _iteration_kind(self.kind(node.iter)))
        self._visit_branches(node.body, node.orelse)

    visit_AsyncFor = visit_For

    def _visit_branches(self, *blocks) -> None:
        """Statements that may or may not run: names bound there are path-dependent."""
        self.control_depth += 1
        try:
            for block in blocks:
                self.visit_all(block)
        finally:
            self.control_depth -= 1

    def visit_comprehension(self, node: ast.comprehension) -> None:
        self.visit(node.iter)
        self.check_loop_iterable(node.iter)
        self.bind(node.target, _iteration_kind(self.kind(node.iter)))
        self.visit_all(node.ifs)

    def _visit_comprehension_expr(self, node) -> None:
        for generator in node.generators:
            self.stack.append(generator)
            try:
                self.visit_comprehension(generator)
            finally:
                self.stack.pop()
        if isinstance(node, ast.DictComp):
            self.visit(node.key)
            self.visit(node.value)
        else:
            self.visit(node.elt)

    visit_ListComp = visit_SetComp = visit_GeneratorExp = visit_DictComp = _visit_comprehension_expr

    def visit_If(self, node) -> None:  # also While: the same shape (test, body, orelse)
        self.check_branch_test(node.test, node.body)
        self.visit(node.test)
        self._visit_branches(node.body, node.orelse)

    visit_While = visit_If

    def visit_IfExp(self, node: ast.IfExp) -> None:
        self.check_branch_test(node.test, None)
        self.generic_visit(node)

    def _visit_in_control(self, node) -> None:
        self.control_depth += 1
        try:
            self.generic_visit(node)
        finally:
            self.control_depth -= 1

    visit_Try = visit_TryStar = visit_Match = _visit_in_control

    def visit_Assert(self, node: ast.Assert) -> None:
        # assert is input validation: no branch rule; host syncs inside are still syncs
        self.generic_visit(node)

    def visit_With(self, node) -> None:
        for item in node.items:
            self.visit(item.context_expr)
            if item.optional_vars is not None:
                self.visit_target(item.optional_vars)
                self.bind(item.optional_vars, None)
        self.visit_all(node.body)

    visit_AsyncWith = visit_With

    def visit_NamedExpr(self, node: ast.NamedExpr) -> None:
        self.visit(node.value)
        self.scope.kinds[node.target.id] = self.kind(node.value)
        self.scope.bindings[node.target.id] = None
        self._rebound(node.target.id)

    def visit_Global(self, node) -> None:
        for name in node.names:
            self.scope.kinds.pop(name, None)

    # ------------------------------------------------------------------ expressions
    def visit_Subscript(self, node: ast.Subscript) -> None:
        if isinstance(node.ctx, ast.Load):
            self.check_subscript_read(node)
        self.generic_visit(node)

    def visit_Call(self, node: ast.Call) -> None:
        self.check_call(node)
        self.visit(node.func)
        self.visit_all(node.args)
        for keyword in node.keywords:
            if keyword.arg in ops.HOST_CALLBACK_KEYWORDS:
                self._note_host_callback(keyword.value)
                if isinstance(keyword.value, ast.Lambda):
                    self.stack.append(keyword)
                    host_scope = _Scope("<host lambda>", host=True)
                    self.scopes.append(host_scope)
                    try:
                        self.visit(keyword.value)
                    finally:
                        self.scopes.pop()
                        self.stack.pop()
                    continue
            self.visit(keyword)

    def _note_host_callback(self, value: ast.expr) -> None:
        if isinstance(value, ast.Call) and value.args and self.qualname(value.func) == "functools.partial":
            value = value.args[0]
        if isinstance(value, ast.Name):
            self.host_callbacks.add(value.id)
        elif isinstance(value, ast.Attribute):
            self.host_callbacks.add(value.attr)

    # ------------------------------------------------------------------ rule events
    def check_subscript_read(self, node: ast.Subscript) -> None:
        for handler in self.dispatch.subscript:
            handler(self, node)

    def check_branch_test(self, test: ast.expr, body: list[ast.stmt] | None) -> None:
        for handler in self.dispatch.branch:
            handler(self, test, body)

    def check_loop_iterable(self, iterable: ast.expr) -> None:
        for handler in self.dispatch.loop:
            handler(self, iterable)

    def check_call(self, node: ast.Call) -> None:
        dispatch = self.dispatch
        func = node.func
        qual = self.qualname(func)
        method = receiver = None
        handlers: list = []
        if qual is not None:
            handlers.extend(dispatch.by_function.get(qual, ()))
        elif type(func) is ast.Attribute and not (type(func.value) is ast.Name and func.value.id in ("self", "cls")):
            # not the class's own methods and submodules, and not on a value known to be no tensor
            found = dispatch.by_method.get(func.attr)
            if found:
                receiver = self.kind(func.value)
                if not is_not_tensor(receiver):
                    method = func.attr
                    handlers.extend(found)
        if dispatch.by_keyword and node.keywords:
            for keyword in node.keywords:
                if keyword.arg is not None:
                    handlers.extend(dispatch.by_keyword.get(keyword.arg, ()))
        if not handlers:
            return
        seen = set()
        for handler in handlers:
            if handler not in seen:
                seen.add(handler)
                handler(self, node, qual, method, receiver)

    # ------------------------------------------------------------------ helpers for rules
    def silence_syncs(self, expr: ast.AST) -> None:
        """A host sync inside an expression already reported as DYN202/DYN302 is not reported again."""
        for sub in ast.walk(expr):
            if isinstance(sub, ast.Call):
                self.silenced_syncs.add(id(sub))

    def is_silenced(self, node: ast.AST) -> bool:
        return id(node) in self.silenced_syncs

    def reads_tensor_size(self, test: ast.expr) -> bool:
        """Whether the expression reads a tensor's size (``.shape``, ``.size()``, ``len(t)``...)."""
        pending = [test]
        while pending:
            sub = pending.pop()
            t = type(sub)
            if t is ast.Call and isinstance(sub.func, ast.Name) and sub.func.id == "len" and sub.args \
                    and self.kind(sub.args[0]) == SIZE:
                continue  # len(x.size()) / len(x.shape) is the rank: static
            pending.extend(ast.iter_child_nodes(sub))
            if t is ast.Attribute and sub.attr == "shape" and self.kind(sub.value) in TENSORISH:
                return True
            if t is ast.Call:
                func = sub.func
                if isinstance(func, ast.Attribute) and func.attr in ops.SIZE_METHODS:
                    receiver = self.kind(func.value)
                    if receiver in TENSORISH or (receiver is None and (func.attr != "size" or sub.args)):
                        return True
                elif isinstance(func, ast.Name) and func.id == "len" and sub.args and self.qualname(func) == "len":
                    if self.value_kind(sub.args[0]) in TENSORISH:
                        return True
            elif t is ast.Name and self.lookup(sub.id) == SIZE:
                return True
        return False

    def depends_on_values(self, test: ast.expr) -> bool:
        """Whether a branch test's outcome depends on tensor values."""
        t = type(test)
        if t is ast.BoolOp:
            return any(self.depends_on_values(v) for v in test.values)
        if t is ast.UnaryOp and isinstance(test.op, ast.Not):
            return self.depends_on_values(test.operand)
        if t is ast.Compare:
            if all(isinstance(op, (ast.Is, ast.IsNot, ast.In, ast.NotIn)) for op in test.ops):
                return False
            return any(self.value_kind(v) in TENSORISH or self.value_kind(v) == DATA
                       for v in [test.left, *test.comparators])
        return self.value_kind(test) in TENSORISH or self.value_kind(test) == DATA


# ---------------------------------------------------------------------- helpers
_PY_DISPLAYS = frozenset({ast.List, ast.Tuple, ast.Set, ast.Dict, ast.ListComp, ast.SetComp, ast.DictComp,
                          ast.JoinedStr, ast.GeneratorExp})
_VALUE_BUILTINS = frozenset({"int", "float", "bool", "len", "max", "min", "abs", "round"})
_BUILTIN_NAMES = frozenset({"len", "int", "float", "bool", "complex", "range", "max", "min", "abs", "round", "sum",
                            "list", "tuple", "dict", "set", "str", "sorted", "repr", "isinstance", "hasattr",
                            "getattr", "type", "id", "print", "enumerate", "zip", "map", "filter", "reversed"})


def _canonical(qualified: str) -> str:
    """Map re-exports to one spelling (torch.functional.unique -> torch.unique)."""
    if qualified.startswith("torch.functional."):
        return "torch." + qualified[len("torch.functional."):]
    if qualified.startswith("torch.utils.data.dataloader."):
        return "torch.utils.data." + qualified[len("torch.utils.data.dataloader."):]
    if qualified.startswith("torchvision.ops.boxes."):
        return "torchvision.ops." + qualified[len("torchvision.ops.boxes."):]
    return qualified


def _tensor_method_kind(receiver: str, method: str, node: ast.Call) -> str | None:
    if method in ops.SIZE_METHODS:
        return SIZE
    if method in ops.RANK_METHODS or method in ops.META_METHODS:
        return PY
    if method in ops.DATA_METHODS:
        return DATA
    if method == "numpy":
        return NDARRAY
    if method in ops.MASK_METHODS:
        return MASK
    if method in ("any", "all"):
        return MASK if node.args or node.keywords else SCALAR_TENSOR
    if method in ops.FULL_REDUCTIONS and not node.args and not has_keyword(node, "dim", "axis"):
        return SCALAR_TENSOR
    if receiver == MASK and method in ops.MASK_PRESERVING_METHODS:
        return MASK
    if receiver == SCALAR_TENSOR and method in ops.MASK_PRESERVING_METHODS:
        return SCALAR_TENSOR
    if method in ("float", "double", "half", "bfloat16", "long", "int", "to", "type_as", "abs", "neg",
                  "exp", "log", "sqrt", "sigmoid", "relu", "clamp", "detach", "clone", "cpu", "cuda"):
        return SCALAR_TENSOR if receiver == SCALAR_TENSOR else TENSOR
    return TENSOR


def _unpacked_kind(kind: str | None) -> str | None:
    if kind in TENSORISH:
        return TENSOR
    if kind in (SIZE, DATA, NDARRAY):
        return kind
    return None


def _iteration_kind(kind: str | None) -> str | None:
    if kind in TENSORISH:
        return TENSOR
    if kind in (SIZE, DATA):
        return kind
    return None
















def _is_staticmethod(node) -> bool:
    return any(isinstance(d, ast.Name) and d.id == "staticmethod" for d in node.decorator_list)


# The single hot loop: nodes with nothing to check below them are not visited at all, and
# fields that only hold operators or load/store markers are not walked.
_LEAVES = frozenset({ast.Name, ast.Constant, ast.Pass, ast.Break, ast.Continue, ast.Nonlocal,
                     ast.Load, ast.Store, ast.Del})
_NON_CHILD_FIELDS = frozenset({"ctx", "op", "ops", "type_comment", "id", "attr", "arg", "name", "level",
                               "conversion", "is_async", "kind"})
_CHILD_FIELDS: dict[type, tuple[str, ...]] = {}

_DISPATCH = {
    getattr(ast, name[len("visit_"):]): function
    for name, function in vars(Analyzer).items()
    if name.startswith("visit_") and name != "visit_all" and name != "visit_target"
    and hasattr(ast, name[len("visit_"):])
}


@functools.lru_cache(maxsize=8)
def _dispatch(dynamic_ops: tuple[str, ...]) -> checks.Dispatch:
    return checks.Dispatch(checks.load_all().values(), {"extend_dynamic_ops": dynamic_ops})


# Long operator chains (a + b + ... with thousands of terms) nest as deep as CPython's parser
# allows; walking them recursively needs more than the default 1000 frames.  Python-to-Python
# calls do not grow the C stack on 3.11+, so a higher limit is safe here.
_RECURSION_LIMIT = 20_000


def analyze(tree: ast.AST, lines: list[str], dynamic_ops=()) -> list[Finding]:
    """All findings for a parsed module (unsorted, no noqa/selection applied)."""
    limit = sys.getrecursionlimit()
    if limit < _RECURSION_LIMIT and sys.version_info >= (3, 11):
        sys.setrecursionlimit(_RECURSION_LIMIT)
    try:
        return Analyzer(lines, dynamic_ops).run(tree)
    finally:
        sys.setrecursionlimit(limit)
