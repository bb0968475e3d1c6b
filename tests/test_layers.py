"""The package's layers: the engine never imports the command line, and the check path
never imports torch or libcst.

Read from the source (every ``import`` statement, wherever it stands, including
function-local ones), so a lazy import cannot hide a wrong dependency.
"""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parent.parent / "dynlint"

# The command-line layer: argument parsing, commands, presentation of results.
CLI_MODULES = {"dynlint.cli", "dynlint.__main__", "dynlint.output", "dynlint.ruledocs"}
CLI_PACKAGES = ("dynlint.commands",)
# Heavy dependencies, and the only modules that may import them: the runtime package, the fixer,
# and (inside functions, so `dynlint --help` stays fast) the commands that run them.
HEAVY = {
    "torch": ("dynlint.runtime", "dynlint.commands"),
    "numpy": ("dynlint.runtime", "dynlint.commands"),
    "libcst": ("dynlint.fixer",),
}


def module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imported_modules(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    names: set[str] = set()
    package = module_name(path).rsplit(".", 1)[0]
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.rsplit(".", node.level - 1)[0] if node.level > 1 else package
                module = f"{base}.{node.module}" if node.module else base
            else:
                module = node.module or ""
            names.add(module)
            names.update(f"{module}.{alias.name}" for alias in node.names)
    return names


def is_cli(name: str) -> bool:
    return name in CLI_MODULES or name.startswith(tuple(p + "." for p in CLI_PACKAGES)) or name in CLI_PACKAGES


def all_modules():
    return sorted((module_name(p), p) for p in PACKAGE.rglob("*.py"))


def test_the_engine_never_imports_the_command_line_layer():
    offenders = []
    for name, path in all_modules():
        if is_cli(name):
            continue
        for imported in imported_modules(path):
            if is_cli(imported):
                offenders.append(f"{name} imports {imported}")
    assert offenders == []


def test_heavy_dependencies_stay_where_they_belong():
    offenders = []
    for name, path in all_modules():
        for imported in imported_modules(path):
            root = imported.split(".", 1)[0]
            owners = HEAVY.get(root)
            if owners is not None and not any(name == o or name.startswith(o + ".") for o in owners):
                offenders.append(f"{name} imports {imported}")
    assert offenders == []


def test_commands_import_heavy_dependencies_only_inside_functions():
    offenders = []
    for name, path in all_modules():
        if not name.startswith("dynlint.commands"):
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in tree.body:  # module level only
            if isinstance(node, (ast.Import, ast.ImportFrom)):
                roots = {a.name.split(".")[0] for a in node.names} if isinstance(node, ast.Import) else {
                    (node.module or "").split(".")[0]}
                offenders.extend(f"{name}: {r}" for r in roots if r in HEAVY)
    assert offenders == []


def test_the_check_path_imports_neither_torch_nor_libcst(tmp_path):
    import subprocess
    import sys

    (tmp_path / "m.py").write_text("import torch\n\ndef f(x: torch.Tensor):\n    return x[x > 0].sum()\n")
    code = (
        "import sys, dynlint.api as api\n"
        f"print([f.code for f in api.check_file({str(tmp_path / 'm.py')!r})])\n"
        "print(sorted(m for m in ('torch', 'libcst', 'numpy') if m in sys.modules))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.split("\n")
    assert out[0] == "['DYN101']"
    assert out[1] == "[]"
