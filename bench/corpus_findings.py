"""Shared by ``handpicked_recall.py`` and ``precision_sample.py``: run the current
checkout's ``dynlint check`` on a corpus package and relate its findings to source lines.

Nothing here imports dynlint: it runs ``python -m dynlint`` in a subprocess with
this checkout first on ``PYTHONPATH``, so the figures are those of the working tree
the script lives in, whatever dynlint is installed.
"""

from __future__ import annotations

import ast
import hashlib
import json
import os
import re
import subprocess
import sys
from dataclasses import dataclass
from functools import lru_cache

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# The rules about dynamic shapes and syncs (DYN1xx, DYN2xx, DYN3xx); DYN4xx/5xx are about
# inputs and configuration, DYN000 about unreadable files.
HAZARD_CODE = re.compile(r"^DYN[123]\d\d$")


@dataclass(frozen=True)
class Finding:
    relpath: str  # relative to the package directory, "/"-separated
    line: int
    end_line: int
    code: str
    message: str
    region: str | None  # the finding's region when dynlint reports one, else None


def _env() -> dict:
    env = dict(os.environ)
    env["PYTHONPATH"] = REPO + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    return env


def dynlint_version() -> str:
    """``git describe`` of this checkout (the dynlint whose figures are printed)."""
    proc = subprocess.run(["git", "-C", REPO, "describe", "--always", "--dirty"], capture_output=True, text=True)
    return proc.stdout.strip() or "unknown"


@lru_cache(maxsize=1)
def supports_include_host() -> bool:
    proc = subprocess.run([sys.executable, "-m", "dynlint", "check", "--help"], capture_output=True, text=True,
                          env=_env(), cwd=REPO)
    return "--include-host" in proc.stdout


def run_dynlint(package_dir: str, include_host: bool) -> tuple[list[Finding], bool]:
    """Findings of ``dynlint check --output-format json --no-cache`` on one package.

    Returns the findings and whether ``--include-host`` was in effect (False when
    asked for but this checkout has no such flag: then the default report is all
    there is, and the caller says so).
    """
    used_include_host = include_host and supports_include_host()
    command = [sys.executable, "-m", "dynlint", "check", "--output-format", "json", "--no-cache",
               "--exit-zero", "-q"]
    if used_include_host:
        command.append("--include-host")
    command.append(package_dir)
    proc = subprocess.run(command, capture_output=True, text=True, env=_env(), cwd=package_dir)
    if proc.returncode != 0:
        tail = (proc.stderr.strip().splitlines() or ["(no message)"])[-1]
        raise SystemExit(f"dynlint check failed on {package_dir} (exit {proc.returncode}): {tail}")
    try:
        items = json.loads(proc.stdout or "[]")
    except json.JSONDecodeError as error:
        raise SystemExit(f"dynlint check on {package_dir} printed no JSON document: {error}") from None
    return [_finding(item, package_dir) for item in items], used_include_host


def _finding(item: dict, package_dir: str) -> Finding:
    filename = item["filename"]
    if not os.path.isabs(filename):
        filename = os.path.join(package_dir, filename)
    relpath = os.path.relpath(filename, package_dir).replace(os.sep, "/")
    line = item["location"]["row"]
    end = (item.get("end_location") or {}).get("row") or line
    region = item.get("region")
    if region is None and isinstance(item.get("properties"), dict):
        region = item["properties"].get("region")
    return Finding(relpath, line, max(line, end), item["code"], item.get("message", ""), region)


# ------------------------------------------------------------------ source helpers
@lru_cache(maxsize=256)
def read_source(path: str) -> str:
    with open(path, encoding="utf-8", errors="replace") as handle:
        return handle.read()


@lru_cache(maxsize=256)
def parse(path: str) -> ast.Module | None:
    try:
        return ast.parse(read_source(path))
    except (SyntaxError, ValueError):
        return None


def _block_children(node: ast.AST) -> list[ast.AST]:
    children = []
    for name in ("body", "orelse", "finalbody", "handlers", "cases"):
        for child in getattr(node, name, None) or []:
            if isinstance(child, (ast.stmt, ast.excepthandler, ast.match_case)):
                children.append(child)
    return children


def _extent(node: ast.AST) -> tuple[int, int] | None:
    if isinstance(node, ast.match_case):
        return node.pattern.lineno, node.body[-1].end_lineno
    start, end = getattr(node, "lineno", None), getattr(node, "end_lineno", None)
    if start is None or end is None:
        return None
    decorators = getattr(node, "decorator_list", None) or []
    return min([start] + [d.lineno for d in decorators]), end


def statement_range(tree: ast.Module, line: int) -> tuple[int, int]:
    """Line range of the innermost statement holding ``line``.

    A simple statement gives its whole extent (a call spread over several lines);
    a line in the header of a compound statement (the ``if``/``while``/``for``/
    ``with``/``def`` line with its decorators, an ``elif`` test, an ``except``
    clause) gives that header only, not the block under it. A line that no
    statement holds (blank, comment, ``else:``) gives itself.
    """
    found = (line, line)
    nodes: list[ast.AST] = list(tree.body)
    while nodes:
        node = nodes.pop()
        extent = _extent(node)
        if extent is None or not extent[0] <= line <= extent[1]:
            continue
        children = _block_children(node)
        if not children:
            found = extent
            continue
        body = getattr(node, "body", None) or []
        header_end = max(extent[0], body[0].lineno - 1) if body else extent[0]
        if line <= header_end:
            found = (extent[0], header_end)
            continue
        found = (line, line)
        nodes.extend(children)
    return found


def flagged_by(findings: list[Finding], start: int, end: int) -> list[Finding]:
    """Hazard-rule findings (DYN1xx/2xx/3xx) whose line range meets [start, end]."""
    return [f for f in findings if HAZARD_CODE.match(f.code) and f.line <= end and f.end_line >= start]


def enclosing_function(tree: ast.Module, line: int) -> ast.AST | None:
    best = None
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
            if node.lineno <= line <= node.end_lineno:
                if best is None or node.lineno >= best.lineno:
                    best = node
    return best


def function_hash(path: str, line: int) -> str:
    """A short hash of the text of the function around ``line`` (the module when none).

    Used to key judgments so they survive edits elsewhere in the file: when the
    function itself changes, the judgment is asked for again.
    """
    source = read_source(path)
    tree = parse(path)
    lines = source.splitlines()
    node = enclosing_function(tree, line) if tree is not None else None
    if node is None:
        text = source
    else:
        first = min([node.lineno] + [d.lineno for d in getattr(node, "decorator_list", [])])
        text = "\n".join(lines[first - 1:node.end_lineno])
    normalized = "\n".join(part.rstrip() for part in text.splitlines())
    return hashlib.sha1(normalized.encode("utf-8")).hexdigest()[:12]


def enclosing_function_name(path: str, line: int) -> str:
    tree = parse(path)
    if tree is None:
        return "?"
    names = []
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and \
                node.lineno <= line <= node.end_lineno:
            names.append((node.lineno, node.name))
    return ".".join(name for _, name in sorted(names)) or "<module>"


def source_line(path: str, line: int) -> str:
    lines = read_source(path).splitlines()
    return lines[line - 1].strip() if 0 < line <= len(lines) else ""
