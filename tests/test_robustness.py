"""Real code and hostile files: no crash, a clear DYN000 or a skip with a message, the rest still checked."""

from __future__ import annotations

import ast
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from dynlint import api
from dynlint.config import Settings
from dynlint.runner import iter_results

NONZERO_SRC = "import torch\ndef f(x: torch.Tensor):\n    return torch.nonzero(x)\n"
TORCH_SLICE_DIRS = ("nn", "distributions", "optim")
SLICE_STEP = 2  # every 2nd file of each directory (sorted): ~100 files, ~1 MB of real PyTorch code


def torch_source_slice() -> list[Path]:
    """A deterministic sample of the installed torch package's own source (real, varied, big)."""
    spec = __import__("importlib.util").util.find_spec("torch")
    if spec is None or not spec.submodule_search_locations:
        pytest.skip("torch is not installed")
    root = Path(list(spec.submodule_search_locations)[0])
    files = []
    for name in TORCH_SLICE_DIRS:
        files += sorted((root / name).rglob("*.py"))[::SLICE_STEP]
    return files


def dynlint(*args, cwd, timeout=120):
    return subprocess.run([sys.executable, "-m", "dynlint", *args], cwd=cwd, capture_output=True, text=True,
                          timeout=timeout)


def test_real_pytorch_source_checks_without_crash_or_dyn000():
    files = torch_source_slice()
    assert len(files) >= 80
    pairs = [(str(path), path.name) for path in files]
    results = list(iter_results(pairs, Settings(), jobs=1))
    assert [r.path for r in results] == [p for p, _ in pairs]
    parses = {str(p) for p in files if _cpython_parses(p.read_bytes())}
    dyn000 = {r.path: r.findings[0].message for r in results if any(f.code == "DYN000" for f in r.findings)}
    assert not {path: message for path, message in dyn000.items() if path in parses}
    assert sum(len(r.findings) for r in results) > 0  # the slice does exercise the rules


def _cpython_parses(data: bytes) -> bool:
    try:
        ast.parse(data)
    except (SyntaxError, ValueError):
        return False
    return True


@pytest.fixture(scope="module")
def hostile(tmp_path_factory):
    """One project holding every kind of awkward file, plus a normal file with a finding."""
    root = tmp_path_factory.mktemp("hostile")
    (root / "pyproject.toml").write_text("[tool.dynlint]\n")
    files = {
        "good.py": NONZERO_SRC.encode(),
        "not_utf8.py": b"import torch\nname = '\xff\xfe caf\xe9'\n",
        "latin1_cookie.py": b"# -*- coding: latin-1 -*-\nimport torch\ns = '\xe9'\ny = torch.nonzero(x)\n",
        "bom.py": b"\xef\xbb\xbf" + NONZERO_SRC.encode(),
        "crlf.py": NONZERO_SRC.replace("\n", "\r\n").encode(),
        "mixed_endings.py": b"import torch\r\ndef f(x: torch.Tensor):\r    y = 1\n    return torch.nonzero(x)\r\n",
        "form_feed.py": b"import torch\n\x0c\ndef f(x: torch.Tensor):\n\x0c    return torch.nonzero(x)\n",
        "tabs.py": b"import torch\ndef f(x: torch.Tensor):\n\tif True:\n\t\treturn torch.nonzero(x)\n",
        "empty.py": b"",
        "null_byte.py": b"import torch\nx = 1\x00\n",
        "syntax_error.py": b"import torch\ndef f(:\n    pass\n",
        "deep_parens.py": b"import torch\nx = " + b"(" * 300 + b"1" + b")" * 300 + b"\n",
        "deep_unary.py": b"import torch\nx = " + b"-" * 100_000 + b"1\n",
        "long_chain.py": b"import torch\nx = " + b" + ".join([b"torch.ones(1)"] * 2000) + b"\n",
    }
    for name, data in files.items():
        (root / name).write_bytes(data)
    (root / "dir_named.py").mkdir()
    (root / "dir_named.py" / "inside.py").write_text(NONZERO_SRC)
    os.symlink("loop_b.py", root / "loop_a.py")
    os.symlink("loop_a.py", root / "loop_b.py")
    os.symlink("missing_target.py", root / "dangling.py")
    (root / "pkg").mkdir()
    os.symlink("..", root / "pkg" / "up")  # a directory loop
    locked = root / "locked.py"
    locked.write_text(NONZERO_SRC)
    locked.chmod(0)
    if hasattr(os, "mkfifo"):
        os.mkfifo(root / "pipe.py")
    return root


@pytest.fixture(scope="module")
def hostile_report(hostile):
    proc = dynlint("check", "--output-format", "json", "--no-cache", cwd=hostile, timeout=180)
    assert "Traceback" not in proc.stderr
    assert proc.returncode == 1  # findings: never 2, that is for usage errors
    by_file: dict[str, list[dict]] = {}
    for finding in json.loads(proc.stdout):
        name = os.path.relpath(finding["filename"], hostile) if os.path.isabs(finding["filename"]) \
            else finding["filename"]
        by_file.setdefault(name, []).append(finding)
    return by_file, proc.stderr


def codes(report, name):
    return [(f["code"], f["location"]["row"], f["location"]["column"]) for f in report[0].get(name, [])]


def only_dyn000(report, name) -> str:
    findings = report[0].get(name, [])
    assert [f["code"] for f in findings] == ["DYN000"], (name, findings)
    return findings[0]["message"]


def test_ordinary_file_is_still_checked(hostile_report):
    assert codes(hostile_report, "good.py") == [("DYN102", 3, 12)]


@pytest.mark.parametrize("name", ["bom.py", "crlf.py"])
def test_bom_and_crlf_give_the_same_positions(hostile_report, name):
    assert codes(hostile_report, name) == [("DYN102", 3, 12)]


def test_mixed_line_endings_form_feeds_and_tabs(hostile_report):
    assert codes(hostile_report, "mixed_endings.py") == [("DYN102", 4, 12)]  # a lone \r ends a line too
    assert codes(hostile_report, "form_feed.py") == [("DYN102", 4, 13)]  # the \f counts as a column
    assert codes(hostile_report, "tabs.py") == [("DYN102", 4, 10)]


def test_encodings(hostile_report):
    assert "cannot decode as utf-8" in only_dyn000(hostile_report, "not_utf8.py")
    assert codes(hostile_report, "latin1_cookie.py") == [("DYN102", 4, 5)]


def test_unparsable_files_get_exactly_one_dyn000(hostile_report):
    assert "syntax error" in only_dyn000(hostile_report, "syntax_error.py")
    assert [row for _, row, _ in codes(hostile_report, "syntax_error.py")] == [2]
    only_dyn000(hostile_report, "null_byte.py")
    assert "nested" in only_dyn000(hostile_report, "deep_parens.py")  # CPython: too many nested parentheses
    only_dyn000(hostile_report, "deep_unary.py")  # CPython runs out of parser stack


def test_a_deep_expression_cpython_parses_does_not_escape_as_recursion_error(hostile_report):
    # CPython parses it; the analyzer may give up on it, but only as one DYN000.
    assert codes(hostile_report, "long_chain.py") in ([], [("DYN000", 1, 1)])


def test_empty_file_and_directory_named_like_a_module(hostile_report):
    assert "empty.py" not in hostile_report[0]
    assert codes(hostile_report, "dir_named.py/inside.py") == [("DYN102", 3, 12)]


def test_symlink_loops_and_dangling_links_are_unreadable_files(hostile_report):
    for name in ("loop_a.py", "loop_b.py"):
        assert "cannot read" in only_dyn000(hostile_report, name)
    assert "cannot read" in only_dyn000(hostile_report, "dangling.py")
    assert not any(name.startswith("pkg/up") for name in hostile_report[0])  # the directory loop is not walked


def test_unreadable_file(hostile_report):
    if os.geteuid() == 0:
        # root reads a mode-000 file: it is simply checked.
        assert codes(hostile_report, "locked.py") == [("DYN102", 3, 12)]
    else:
        assert "Permission denied" in only_dyn000(hostile_report, "locked.py")


def test_fifo_is_skipped_not_waited_on(hostile_report):
    assert "pipe.py" not in hostile_report[0]


def test_a_dangling_link_named_on_the_command_line_is_a_missing_path(tmp_path):
    os.symlink("nowhere.py", tmp_path / "gone.py")
    (tmp_path / "ok.py").write_text(NONZERO_SRC)
    proc = dynlint("check", "--no-cache", "gone.py", "ok.py", cwd=tmp_path)
    assert (proc.returncode, proc.stdout) == (2, "")
    assert proc.stderr == "dynlint: error: path does not exist: gone.py\n"


def test_a_5_mb_file(tmp_path):
    block = "def f{i}(x, y):\n    z = [x, y] * 2\n    return {{'z': z, 'n': len(z)}}\n\n"
    text = "import torch\n\n" + "".join(block.format(i=i) for i in range(72_000)) + NONZERO_SRC
    assert len(text) > 5_000_000
    (tmp_path / "big.py").write_text(text)
    proc = dynlint("check", "--output-format", "concise", "--no-cache", "big.py", cwd=tmp_path, timeout=300)
    assert (proc.returncode, proc.stderr) == (1, "")
    last_line = text.count("\n")
    assert proc.stdout.startswith(f"big.py:{last_line}:12: DYN102 ")


def test_check_source_never_raises_on_deep_nesting():
    nested_ifs = "".join("    " * i + f"if x{i}:\n" for i in range(120)) + "    " * 120 + "pass\n"
    for source in ["x = " + "[" * 5000 + "]" * 5000, "x = " + "not " * 50_000 + "y", "import torch\n" + nested_ifs]:
        findings = api.check_source(source)
        assert all(f.code == "DYN000" for f in findings)
