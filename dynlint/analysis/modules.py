"""Module names for the files of a run: the first step of the project index.

A file's module name follows its package: ``pkg/sub/mod.py`` is ``pkg.sub.mod``
when ``pkg/`` and ``pkg/sub/`` hold an ``__init__.py``; ``__init__.py`` names
the package itself; a file outside any package is named by its stem (a script,
or a module run from its own directory).  Imports between project modules are
resolved against these names (``dynlint.analysis.facts``), and, for a name no module of
the run has, against the dotted forms of the files' paths (``path_aliases``): a directory
without ``__init__.py`` (a namespace package, ``from pkg.helpers import f`` run from the
project root, also above a regular package: ``from megatron.core.transformer import m`` for
``megatron/core/transformer/__init__.py``) or a script directory put on ``sys.path``
(``from helpers import f`` for ``src/pkg/helpers.py``).  Only a name that one file alone can have is used.
"""

from __future__ import annotations

import os
import sys
from functools import lru_cache


@lru_cache(maxsize=4096)
def _is_package(directory: str) -> bool:
    return os.path.isfile(os.path.join(directory, "__init__.py"))


def module_name(path: str) -> str:
    """The dotted module name of the Python file at ``path`` (see the module docstring)."""
    absolute = os.path.abspath(path)
    directory, filename = os.path.split(absolute)
    stem = filename[:-3] if filename.endswith(".py") else filename[:-4] if filename.endswith(".pyi") else filename
    parts = list(_package_parts(directory))
    if stem != "__init__":
        parts.append(stem)
    return ".".join(p for p in parts if p) or stem


@lru_cache(maxsize=4096)
def _package_parts(directory: str) -> tuple[str, ...]:
    """The package names from the outermost package down to ``directory`` (empty when it is no
    package): shared by every file of the directory."""
    if not directory or not _is_package(directory):
        return ()
    parent, package = os.path.split(directory)
    if not package:
        return ()
    return (*_package_parts(parent), package)


@lru_cache(maxsize=65536)
def path_aliases(relpath: str, module: str) -> tuple[str, ...]:
    """The other dotted names the file at ``relpath`` may be imported by: its module name prefixed
    with the directories above its outermost regular package (or above the file, outside every
    package), nearest first, up to the first directory that is not an identifier.  Such a
    directory is a namespace package (PEP 420) or a directory put on ``sys.path``:
    ``a/pkg/helpers.py`` outside every package is also ``pkg.helpers`` and ``a.pkg.helpers``;
    ``megatron/core/transformer/module.py``, whose ``core/`` holds an ``__init__.py`` and
    ``megatron/`` none, is also ``megatron.core.transformer.module``.  A name whose first part is
    a standard-library or well-known third-party module is never one (a ``numpy/`` directory
    must not capture ``numpy``); a module named apart from its path (two files of one name,
    told apart by ``make_units``) has none."""
    stem, extension = os.path.splitext(relpath.replace("\\", "/"))
    if extension not in (".py", ".pyi"):
        return ()
    parts = [part for part in stem.split("/") if part not in ("", ".")]
    if parts and parts[-1] == "__init__":
        parts.pop()
    own = module.split(".")
    if parts[-len(own):] != own:
        return ()
    names = []
    for start in range(len(parts) - len(own) - 1, -1, -1):
        if not parts[start].isidentifier() or parts[start] in _EXTERNAL_ROOTS:
            break
        names.append(".".join(parts[start:]))
    return tuple(names)


_EXTERNAL_ROOTS = frozenset(sys.stdlib_module_names) | {
    "torch", "torchvision", "torchaudio", "numpy", "scipy", "pandas", "transformers", "timm", "jax",
    "tensorflow", "sklearn", "lightning", "pytorch_lightning", "functorch", "triton", "cv2", "PIL"}


def unique_aliases(module_of: dict[str, str]) -> dict[str, str]:
    """alias -> module for every path alias (``path_aliases``) that no module of the run is
    named and that exactly one file can have."""
    modules = set(module_of.values())
    seen: dict[str, str | None] = {}
    for relpath, module in module_of.items():
        for alias in path_aliases(relpath, module):
            if alias not in modules:
                seen[alias] = None if alias in seen else relpath
    return {alias: module_of[relpath] for alias, relpath in seen.items() if relpath is not None}


def is_package_init(path: str) -> bool:
    return os.path.basename(path) in ("__init__.py", "__init__.pyi")


def resolve_relative(module: str, is_package: bool, level: int, target: str | None) -> str | None:
    """The absolute module named by ``from <level dots><target> import ...`` inside ``module``."""
    parts = module.split(".") if module else []
    if not is_package:
        parts = parts[:-1]
    if level > 1:
        if level - 1 > len(parts):
            return None
        parts = parts[: len(parts) - (level - 1)]
    if target:
        parts.extend(target.split("."))
    return ".".join(parts) or None


# --- the import graph ----------------------------------------------------------------------
import re  # noqa: E402 - only the graph needs it

_FROM_IMPORT_RE = re.compile(rb"^[ \t]*from[ \t]+(\.*)([\w.]*)[ \t]+import[ \t]+(\([^)]*\)|[^\r\n#]*)", re.M)
_IMPORT_RE = re.compile(rb"^[ \t]*import[ \t]+([\w. \t,]+)", re.M)
_NAME_RE = re.compile(rb"[A-Za-z_]\w*")


def imported_modules(data: bytes, module: str, is_package: bool, known: set[str]) -> set[str]:
    """The project modules a file imports (read from its text, before it is parsed: a superset
    is fine, this only orders the first round of walks).  Only the module named (the longest
    known prefix of the name): its parent packages' ``__init__`` run too, but what the file
    uses is defined in, or re-exported by, the module it names; counting the parents would
    tie most of a package into one import cycle."""
    found: set[str] = set()

    def add(name: str) -> None:
        parts = name.split(".")
        for cut in range(len(parts), 0, -1):
            prefix = ".".join(parts[:cut])
            if prefix in known:
                found.add(prefix)
                return

    for match in _FROM_IMPORT_RE.finditer(data):
        dots, target, names = match.group(1), match.group(2).decode("ascii", "replace"), match.group(3)
        base = resolve_relative(module, is_package, len(dots), target or None) if dots else target
        if not base:
            continue
        add(base)
        for name in _NAME_RE.findall(names):
            if name != b"as":
                candidate = f"{base}.{name.decode('ascii', 'replace')}"
                if candidate in known:
                    found.add(candidate)
    for match in _IMPORT_RE.finditer(data):
        for item in match.group(1).split(b","):
            words = item.split()
            if words:
                add(words[0].decode("ascii", "replace"))
    found.discard(module)
    return found


def levels(dependencies: list[set[int]]) -> list[list[int]]:
    """Files in levels, dependencies first: every file comes after the files it imports,
    except within an import cycle (a cycle shares one level).  Deterministic."""
    count = len(dependencies)
    index = [0] * count
    low = [0] * count
    on_stack = [False] * count
    visited = [False] * count
    stack: list[int] = []
    component = [-1] * count
    components: list[list[int]] = []
    counter = 0
    for start in range(count):
        if visited[start]:
            continue
        # iterative Tarjan
        work = [(start, iter(sorted(dependencies[start])))]
        visited[start] = on_stack[start] = True
        index[start] = low[start] = counter
        counter += 1
        stack.append(start)
        while work:
            node, children = work[-1]
            advanced = False
            for child in children:
                if not visited[child]:
                    visited[child] = on_stack[child] = True
                    index[child] = low[child] = counter
                    counter += 1
                    stack.append(child)
                    work.append((child, iter(sorted(dependencies[child]))))
                    advanced = True
                    break
                if on_stack[child]:
                    low[node] = min(low[node], index[child])
            if advanced:
                continue
            work.pop()
            if work:
                parent = work[-1][0]
                low[parent] = min(low[parent], low[node])
            if low[node] == index[node]:
                members = []
                while True:
                    member = stack.pop()
                    on_stack[member] = False
                    component[member] = len(components)
                    members.append(member)
                    if member == node:
                        break
                components.append(sorted(members))
    # components come out dependencies first; a component's level is one above its deepest dependency
    level_of = [0] * len(components)
    for number, members in enumerate(components):
        deps = {component[d] for m in members for d in dependencies[m]} - {number}
        level_of[number] = 1 + max((level_of[d] for d in deps), default=-1)
    result: list[list[int]] = [[] for _ in range(max(level_of, default=-1) + 1)]
    for number, members in enumerate(components):
        result[level_of[number]].extend(members)
    return [sorted(level) for level in result]
