"""Jupyter notebooks: check, fix, diff, every output format, stdin, noqa, cache.

The fixtures in tests/fixtures/notebooks mimic real tutorials (the CIFAR-10 training loop with
`loss.item()` logging, a detection post-process cell, a notebook full of magics with markdown
and raw cells), written the way Jupyter writes files (nbformat: indent 1, sorted keys, outputs,
images, cell ids).  Expected positions are computed here from the notebook JSON itself: the
code cell holding a snippet, and the line and column of the snippet in that cell.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from dynlint.notebook import Notebook

FIXTURES = Path(__file__).resolve().parent / "fixtures" / "notebooks"
NOTEBOOKS = sorted(p.name for p in FIXTURES.glob("*.ipynb"))

# (notebook, snippet, code): every finding the fixtures must produce, and no other.
EXPECTED = [
    ("cifar10_training.ipynb", "torch.utils.data.DataLoader(trainset", "DYN401"),
    # the unshuffled test loader is an evaluation loader: not reported (every sample counts)
    # imshow moves its image to numpy on purpose (a plot): host code, reported with --include-host only
    ("cifar10_training.ipynb", "loss.item()", "DYN301"),
    ("cifar10_training.ipynb", "(predicted == labels).sum().item()", "DYN301"),
    ("detection_postprocess.ipynb", "boxes[keep], scores", "DYN101"),
    ("detection_postprocess.ipynb", "scores[keep], labels", "DYN101"),
    ("detection_postprocess.ipynb", "labels[keep]\n", "DYN101"),
    ("detection_postprocess.ipynb", "batched_nms(boxes, scores, labels, nms_thresh)", "DYN105"),
    ("detection_postprocess.ipynb", "scores[scores > 0.5]", "DYN101"),
    ("magics_and_markdown.ipynb", "x[x > 0]\ntemplate", "DYN101"),   # y = x[x > 0], after `!echo`
    ("magics_and_markdown.ipynb", "x[x > 0].sum()", "DYN101"),
    ("magics_and_markdown.ipynb", "torch.nonzero(x)", "DYN102"),
]


def dynlint(*args, cwd, stdin=None):
    return subprocess.run([sys.executable, "-m", "dynlint", *args], cwd=cwd, input=stdin, capture_output=True,
                          text=True, timeout=120)


def cells(path: Path) -> list[dict]:
    return json.loads(path.read_text(encoding="utf-8"))["cells"]


def cell_text(cell: dict) -> str:
    return cell["source"] if isinstance(cell["source"], str) else "".join(cell["source"])


def where(path: Path, snippet: str) -> tuple[int, int, int]:
    """(1-based cell number among all cells, line in the cell, 1-based column) of the first code
    cell occurrence of ``snippet``."""
    for number, cell in enumerate(cells(path), start=1):
        text = cell_text(cell)
        if cell["cell_type"] == "code" and snippet in text:
            offset = text.index(snippet)
            row = text.count("\n", 0, offset) + 1
            col = offset - (text.rfind("\n", 0, offset) + 1) + 1
            return number, row, col
    raise AssertionError(f"{snippet!r} is in no code cell of {path.name}")


@pytest.fixture
def project(tmp_path):
    (tmp_path / "pyproject.toml").write_text("[tool.dynlint]\n")
    shutil.copytree(FIXTURES, tmp_path / "nb")
    return tmp_path


def test_fixtures_are_what_they_claim():
    """Markdown and raw cells, a cell magic, an automagic, line magics and shell escapes, outputs."""
    kinds = {name: [c["cell_type"] for c in cells(FIXTURES / name)] for name in NOTEBOOKS}
    assert NOTEBOOKS == ["cifar10_training.ipynb", "detection_postprocess.ipynb", "magics_and_markdown.ipynb"]
    assert all("markdown" in k for k in kinds.values()) and "raw" in kinds["magics_and_markdown.ipynb"]
    magic = "".join(cell_text(c) for c in cells(FIXTURES / "magics_and_markdown.ipynb"))
    for needle in ("%%time", "!pip", "%load_ext", "files = !ls", "    !echo", "torch.nonzero?", "pip install "):
        assert needle in magic
    assert any(o.get("output_type") == "display_data" for c in cells(FIXTURES / "cifar10_training.ipynb")
               for o in c.get("outputs", []))


def test_check_locates_every_finding_by_cell_and_line(project):
    proc = dynlint("check", "--no-cache", "--output-format", "concise", "-q", "nb", cwd=project)
    assert proc.returncode == 1, proc.stderr
    assert proc.stderr == ""
    expected = set()
    for name, snippet, code in EXPECTED:
        cell, row, col = where(FIXTURES / name, snippet)
        expected.add(f"nb/{name}:cell {cell}:{row}:{col}: {code}")
    found = {re.match(r"(.*?:cell \d+:\d+:\d+: DYN\d+) ", line).group(1) for line in proc.stdout.splitlines()}
    assert found == expected


def test_the_plotting_helpers_numpy_of_a_cpu_batch_is_not_flagged_even_with_include_host(project):
    # the tutorial's `imshow(img)`: `img.numpy()` of a tensor never moved to a device (a loader's CPU batch;
    # `Tensor.numpy()` refuses a device tensor) copies nothing, and the helper is host code anyway
    proc = dynlint("check", "--no-cache", "--include-host", "--output-format", "json", "nb/cifar10_training.ipynb",
                   cwd=project)
    cell, row, col = where(FIXTURES / "cifar10_training.ipynb", "img.numpy()")
    findings = json.loads(proc.stdout)
    assert findings  # the notebook's other findings are there
    assert [f for f in findings if f["cell"] == cell and f["location"]["row"] == row] == []


def test_full_output_shows_the_cell_line(project):
    proc = dynlint("check", "--no-cache", "nb/cifar10_training.ipynb", cwd=project)
    cell, row, col = where(FIXTURES / "cifar10_training.ipynb", "loss.item()")
    assert f"nb/cifar10_training.ipynb:cell {cell}:{row}:{col}: DYN301 " in proc.stdout
    assert f"{row} |         running_loss += loss.item()\n" in proc.stdout
    assert proc.stdout.endswith("Found 3 findings in 1 file.\nNo safe fixes available (1 more with `--unsafe-fixes`).\n")


def test_json_has_the_cell_and_cell_relative_rows_as_ruff(project):
    proc = dynlint("check", "--no-cache", "--output-format", "json", "nb/detection_postprocess.ipynb", cwd=project)
    findings = json.loads(proc.stdout)
    [masked] = [f for f in findings if f["fix"] and f["fix"]["applicability"] == "safe"]
    cell, row, col = where(FIXTURES / "detection_postprocess.ipynb", "scores[scores > 0.5].sum()")
    assert masked["cell"] == cell and masked["noqa_row"] == row
    assert masked["location"] == {"row": row, "column": col}
    assert masked["end_location"] == {"row": row, "column": col + len("scores[scores > 0.5]")}
    [edit] = masked["fix"]["edits"]
    assert edit["location"] == {"row": row, "column": col}
    assert edit["end_location"] == {"row": row, "column": col + len("scores[scores > 0.5].sum()")}
    assert edit["content"] == "torch.where(scores > 0.5, scores, 0).sum()"


def test_json_cell_is_null_for_python_files(project):
    (project / "m.py").write_text("import torch\ndef f(x: torch.Tensor):\n    return torch.nonzero(x)\n")
    [finding] = json.loads(dynlint("check", "--no-cache", "--output-format", "json", "m.py", cwd=project).stdout)
    assert finding["cell"] is None and finding["location"] == {"row": 3, "column": 12}


def test_github_and_sarif_say_which_cell(project):
    cell, row, col = where(FIXTURES / "detection_postprocess.ipynb", "scores[scores > 0.5]")
    github = dynlint("check", "--no-cache", "--output-format", "github", "nb/detection_postprocess.ipynb",
                     cwd=project).stdout.splitlines()
    assert (f"::error title=dynlint (DYN101),file=nb/detection_postprocess.ipynb::cell {cell}:{row}:{col}: "
            f"DYN101 ") in "\n".join(github)
    assert all("line=" not in line.split("::")[1] for line in github)  # JSON lines are not code lines
    sarif = json.loads(dynlint("check", "--no-cache", "--output-format", "sarif", "nb/detection_postprocess.ipynb",
                               cwd=project).stdout)
    results = sarif["runs"][0]["results"]
    assert len(results) == 5
    [masked] = [r for r in results if r["properties"]["cell"] == cell]
    assert masked["properties"]["cellRegion"]["startLine"] == row
    assert masked["properties"]["cellRegion"]["startColumn"] == col
    assert masked["message"]["text"].startswith(f"cell {cell}:{row}:{col}: ")
    assert "region" not in masked["locations"][0]["physicalLocation"] and "fixes" not in masked


def test_statistics_count_notebook_findings(project):
    proc = dynlint("check", "--no-cache", "--statistics", "nb", cwd=project)
    assert proc.stdout.splitlines()[:4] == ["6  DYN101  [*] boolean-mask-index", "2  DYN301  [ ] host-sync",
                                            "1  DYN102  [ ] nonzero", "1  DYN105  [ ] dynamic-output-op"]


def encoded_line(text: str) -> str:
    return json.dumps(text, ensure_ascii=False)


def test_fix_writes_the_right_cell_and_keeps_every_other_byte(project):
    """Only the fixed line's JSON string changes: outputs, ids, metadata, formatting and the magics
    (restored from their placeholders) are byte-identical."""
    targets = {
        "detection_postprocess.ipynb": ("    return scores[scores > 0.5].sum()",
                                        "    return torch.where(scores > 0.5, scores, 0).sum()"),
        "magics_and_markdown.ipynb": ("total = x[x > 0].sum()\n", "total = torch.where(x > 0, x, 0).sum()\n"),
    }
    originals = {name: (FIXTURES / name).read_bytes() for name in NOTEBOOKS}
    proc = dynlint("fix", "--no-cache", "nb", cwd=project)
    assert proc.returncode == 1, proc.stdout + proc.stderr  # unfixable findings remain
    assert "Fixed 2 findings in 2 files" in proc.stdout
    for name in NOTEBOOKS:
        written = (project / "nb" / name).read_bytes()
        if name in targets:
            old, new = targets[name]
            text = originals[name].decode("utf-8")
            assert text.count(encoded_line(old)) == 1
            assert written == text.replace(encoded_line(old), encoded_line(new)).encode("utf-8")
        else:
            assert written == originals[name]
    again = dynlint("fix", "--no-cache", "nb", cwd=project)
    assert "Fixed" not in again.stdout  # idempotent
    proc = dynlint("check", "--no-cache", "--output-format", "concise", "-q", "nb", cwd=project)
    assert len(proc.stdout.splitlines()) == len(EXPECTED) - 2


def test_unsafe_fix_in_a_notebook_with_outputs_and_images(project):
    path = project / "nb" / "cifar10_training.ipynb"
    original = path.read_text(encoding="utf-8")
    proc = dynlint("fix", "--unsafe-fixes", "--no-cache", str(path.relative_to(project)), cwd=project)
    assert "Fixed 1 finding in 1 file" in proc.stdout, proc.stdout + proc.stderr
    expected = original
    # only the shuffled training loader: drop_last on the test loader would drop predictions
    for loader in ("trainloader = torch.utils.data.DataLoader(trainset, batch_size=batch_size, shuffle=True, "
                   "num_workers=2)\n",):
        fixed = loader.replace("num_workers=2)", "num_workers=2, drop_last=True)")
        assert expected.count(encoded_line(loader)) == 1
        expected = expected.replace(encoded_line(loader), encoded_line(fixed))
    assert path.read_text(encoding="utf-8") == expected


def test_diff_is_per_cell_and_writes_nothing(project):
    before = {name: (project / "nb" / name).read_bytes() for name in NOTEBOOKS}
    proc = dynlint("check", "--diff", "--no-cache", "nb", cwd=project)
    assert proc.returncode == 1
    cell, _, _ = where(FIXTURES / "detection_postprocess.ipynb", "scores[scores > 0.5]")
    assert f"--- a/nb/detection_postprocess.ipynb:cell {cell}\n+++ b/nb/detection_postprocess.ipynb:cell {cell}\n" \
        in proc.stdout
    assert "-    return scores[scores > 0.5].sum()\n" in proc.stdout
    assert "+    return torch.where(scores > 0.5, scores, 0).sum()\n" in proc.stdout
    cell, _, _ = where(FIXTURES / "magics_and_markdown.ipynb", "x[x > 0].sum()")
    assert f"+++ b/nb/magics_and_markdown.ipynb:cell {cell}\n" in proc.stdout
    assert " torch.nonzero?\n" in proc.stdout  # context lines show the magic as written, not a placeholder
    assert "Would fix 2 findings in 2 files." in proc.stderr
    assert {name: (project / "nb" / name).read_bytes() for name in NOTEBOOKS} == before


def test_reading_and_writing_back_unchanged_is_byte_identical():
    for name in NOTEBOOKS:
        data = (FIXTURES / name).read_bytes()
        notebook = Notebook.from_bytes(data)
        assert notebook.encode(notebook.text) == data


def test_magics_become_placeholders_but_strings_stay_python():
    notebook = Notebook.from_bytes((FIXTURES / "magics_and_markdown.ipynb").read_bytes())
    text = notebook.text
    assert "!pip" not in text and "%load_ext" not in text and "!ls" not in text and "nonzero?" not in text
    assert "%d items\n!not a shell line\n" in text  # inside a triple-quoted string: code, not magic
    assert "small = x[x < 0]" not in text and "pip install torchvision" not in text  # %%time, automagic
    assert "raw cell" not in text and "Exploring masks" not in text
    compile(text, "magics.ipynb", "exec")
    [(start, cell)] = [(s, c) for s, c in notebook.cells if c == where(FIXTURES / "magics_and_markdown.ipynb",
                                                                          "files = !ls")[0]]
    assert text.splitlines()[start - 1] == "x = torch.randn(8, device=\"cuda\")"


def test_one_string_sources_and_empty_cells_round_trip():
    document = {"cells": [
        {"cell_type": "code", "execution_count": None, "metadata": {}, "outputs": [],
         "source": "import torch\ndef f(x: torch.Tensor):\n    return x[x > 0].sum()"},
        {"cell_type": "code", "execution_count": None, "metadata": {}, "outputs": [], "source": []},
        {"cell_type": "code", "execution_count": None, "metadata": {}, "outputs": [], "source": ["é = 'dynlint-nb'"]},
    ], "metadata": {}, "nbformat": 4, "nbformat_minor": 5}
    data = json.dumps(document, indent=2).encode()  # another writer's style: indent 2, \\u escapes
    notebook = Notebook.from_bytes(data)
    assert notebook.encode(notebook.text) == data
    fixed = notebook.text.replace("x[x > 0].sum()", "torch.where(x > 0, x, 0).sum()")
    written = notebook.encode(fixed)
    assert written == data.replace(b"x[x > 0].sum()", b"torch.where(x > 0, x, 0).sum()")
    assert json.loads(written)["cells"][0]["source"].endswith("torch.where(x > 0, x, 0).sum()")


def test_invalid_and_foreign_notebooks(project):
    broken = '{\n "cells": [\n  {"cell_type": "code", "source": [],}\n ]\n}\n'
    (project / "broken.ipynb").write_text(broken)
    try:
        json.loads(broken)
    except ValueError as exc:
        json_error = exc
    (project / "old.ipynb").write_text('{"nbformat": 3, "worksheets": []}')
    r_notebook = {"cells": [{"cell_type": "code", "metadata": {}, "outputs": [], "source": ["y <- x[x > 0]"]}],
                  "metadata": {"kernelspec": {"language": "R", "name": "ir"}}, "nbformat": 4, "nbformat_minor": 5}
    (project / "r.ipynb").write_text(json.dumps(r_notebook))
    broken_cell = {"cells": [
        {"cell_type": "code", "metadata": {}, "outputs": [], "source": ["import torch\n", "x = torch.ones(3)\n"]},
        {"cell_type": "markdown", "metadata": {}, "source": ["notes"]},
        {"cell_type": "code", "metadata": {}, "outputs": [], "source": ["def f(:\n", "    pass\n"]},
    ], "metadata": {}, "nbformat": 4, "nbformat_minor": 5}
    (project / "syntax.ipynb").write_text(json.dumps(broken_cell, indent=1))
    proc = dynlint("check", "--no-cache", "--output-format", "concise", "-q", "broken.ipynb", "old.ipynb",
                   "r.ipynb", "syntax.ipynb", "nb/detection_postprocess.ipynb", cwd=project)
    assert proc.returncode == 1 and "Traceback" not in proc.stderr
    lines = proc.stdout.splitlines()
    assert lines[0] == (f"broken.ipynb:{json_error.lineno}:{json_error.colno}: DYN000 cannot check this file: "
                        f"not a valid notebook: invalid JSON ({json_error.msg} at line {json_error.lineno} "
                        f"column {json_error.colno})")
    assert lines[1].startswith("old.ipynb:1:1: DYN000 cannot check this file: not a valid notebook: nbformat 3")
    assert lines[2] == "syntax.ipynb:cell 3:1:7: DYN000 cannot check this file: syntax error: invalid syntax"
    assert not any(line.startswith("r.ipynb") for line in lines)  # an R notebook has no Python to check
    assert sum(line.startswith("nb/detection_postprocess.ipynb") for line in lines) == 5  # others still checked
    diff = dynlint("fix", "--no-cache", "broken.ipynb", cwd=project)
    assert diff.returncode == 1 and (project / "broken.ipynb").read_text().endswith(",}\n ]\n}\n")


def test_directories_pick_up_notebooks_but_not_checkpoints(project):
    checkpoints = project / "nb" / ".ipynb_checkpoints"
    checkpoints.mkdir()
    shutil.copy(FIXTURES / "detection_postprocess.ipynb", checkpoints / "detection_postprocess-checkpoint.ipynb")
    proc = dynlint("check", "--no-cache", "--output-format", "concise", "-q", cwd=project)
    files = {line.split(":")[0] for line in proc.stdout.splitlines()}
    assert files == {f"nb/{name}" for name in NOTEBOOKS}


def test_cached_results_keep_the_cells(project):
    first = dynlint("check", "--output-format", "json", "nb", cwd=project)
    assert (project / ".dynlint_cache").is_dir()
    second = dynlint("check", "--output-format", "json", "nb", cwd=project)
    assert first.stdout == second.stdout and all(f["cell"] for f in json.loads(second.stdout))
    full = dynlint("check", "nb/cifar10_training.ipynb", cwd=project)
    cell, row, _ = where(FIXTURES / "cifar10_training.ipynb", "loss.item()")
    assert f"cell {cell}:{row}:" in full.stdout and f"{row} |         running_loss += loss.item()" in full.stdout


def test_stdin_notebook(project):
    data = (FIXTURES / "detection_postprocess.ipynb").read_text(encoding="utf-8")
    proc = dynlint("check", "-", "--stdin-filename", "post.ipynb", "--output-format", "concise", cwd=project,
                   stdin=data)
    cell, row, col = where(FIXTURES / "detection_postprocess.ipynb", "scores[scores > 0.5]")
    assert f"post.ipynb:cell {cell}:{row}:{col}: DYN101 " in proc.stdout
    fixed = dynlint("fix", "-", "--stdin-filename", "post.ipynb", cwd=project, stdin=data)
    assert fixed.stdout == data.replace(encoded_line("    return scores[scores > 0.5].sum()"),
                                        encoded_line("    return torch.where(scores > 0.5, scores, 0).sum()"))
    cell, row, col = where(FIXTURES / "detection_postprocess.ipynb", "scores[keep], labels")
    assert f"post.ipynb:cell {cell}:{row}:{col}: DYN101 " in fixed.stderr  # what remains, by cell


def test_noqa_in_a_cell_and_add_noqa(project):
    path = project / "nb" / "cifar10_training.ipynb"
    proc = dynlint("check", "--add-noqa", "--no-cache", str(path.relative_to(project)), cwd=project)
    assert proc.returncode == 0 and "Added 3 noqa directives." in proc.stderr
    text = path.read_text(encoding="utf-8")
    assert encoded_line("        running_loss += loss.item()  # noqa: DYN301\n") in text
    assert json.loads(text)["cells"][3]["outputs"] == cells(FIXTURES / "cifar10_training.ipynb")[3]["outputs"]
    clean = dynlint("check", "--no-cache", str(path.relative_to(project)), cwd=project)
    assert (clean.returncode, clean.stdout) == (0, "All checks passed!\n")


def test_fix_and_check_agree_when_a_cell_has_no_trailing_newline(tmp_path):
    """The last line of a cell has no line break in the JSON; a fix there keeps it that way."""
    source = ["import torch\n", "def f(x: torch.Tensor):\n", "    return x[x > 0].sum()"]
    document = {"cells": [{"cell_type": "code", "execution_count": 1, "id": "c1", "metadata": {}, "outputs": [],
                           "source": source}], "metadata": {}, "nbformat": 4, "nbformat_minor": 5}
    path = tmp_path / "one.ipynb"
    path.write_text(json.dumps(document, indent=1, sort_keys=True) + "\n")
    proc = dynlint("fix", "--no-cache", "one.ipynb", cwd=tmp_path)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert json.loads(path.read_text())["cells"][0]["source"] == source[:2] + [
        "    return torch.where(x > 0, x, 0).sum()"]


def test_fix_keeps_the_notebook_file_mode(project):
    path = project / "nb" / "detection_postprocess.ipynb"
    path.chmod(0o640)
    dynlint("fix", "--no-cache", str(path.relative_to(project)), cwd=project)
    assert (path.stat().st_mode & 0o777) == 0o640


def test_every_python_line_break_counts_inside_cells(tmp_path):
    """Lone \\r and \\r\\n line breaks in a cell count as Python counts them, so later cells stay aligned."""
    document = {"cells": [
        {"cell_type": "code", "execution_count": None, "metadata": {}, "outputs": [],
         "source": ["import torch\r", "x = torch.ones(3, device=\"cuda\")\r", "a = 1\n"]},
        {"cell_type": "code", "execution_count": None, "metadata": {}, "outputs": [],
         "source": ["y = 2\r\n", "z = x.nonzero()\n", "w = x[x > 0].sum()"]},
    ], "metadata": {}, "nbformat": 4, "nbformat_minor": 5}
    path = tmp_path / "breaks.ipynb"
    path.write_text(json.dumps(document, indent=1))
    proc = dynlint("check", "--no-cache", "--output-format", "concise", "-q", "breaks.ipynb", cwd=tmp_path)
    assert len(proc.stdout.splitlines()) == 2
    assert "breaks.ipynb:cell 2:2:5: DYN102" in proc.stdout and "breaks.ipynb:cell 2:3:5: DYN101" in proc.stdout
    dynlint("fix", "--no-cache", "breaks.ipynb", cwd=tmp_path)
    assert json.loads(path.read_text())["cells"][1]["source"] == [
        "y = 2\r\n", "z = x.nonzero()\n", "w = torch.where(x > 0, x, 0).sum()"]
    assert json.loads(path.read_text())["cells"][0] == document["cells"][0]


# ---------------------------------------------------------------------- generated notebooks
from hypothesis import HealthCheck, given, settings as hypothesis_settings, strategies as st  # noqa: E402

from dynlint.api import check_bytes  # noqa: E402
from dynlint.config import Settings  # noqa: E402

_SEED_DIR = Path(__file__).resolve().parent / "fixtures"
# Realistic cell bodies: the top-level blocks of the rule fixtures (imports, functions, classes).
CHUNKS = [chunk.strip("\n") for path in sorted(_SEED_DIR.glob("DYN*.py"))
          for chunk in path.read_text(encoding="utf-8").split("\n\n\n") if chunk.strip()] + [
    "def masked_total(x: torch.Tensor):\n    return x[x > 0].sum()",     # safe fixes
    "scores = torch.rand(10)\nkept = scores.masked_select(scores > 0.5).sum()",
    "loader = DataLoader(range(10), batch_size=4)",                     # unsafe fixes
    "model = torch.compile(nn.Linear(2, 2), dynamic=True)",
]
MAGICS = ["%matplotlib inline", "!pip install -q timm", "files = !ls", "torch.where?", "%time y = 1",
          "%%time", "pip install torch", "!echo {x} \\", "?torch"]
LINE_BREAKS = ["\n", "\n", "\n", "\r\n"]


@st.composite
def notebooks(draw):
    cells = [{"cell_type": "code", "execution_count": 1, "metadata": {}, "outputs": [],
              "source": ["import torch\n", "import torch.nn as nn\n", "import torch.nn.functional as F\n",
                         "from torch.utils.data import DataLoader\n", "import torchvision"]}]
    for _ in range(draw(st.integers(1, 6))):
        kind = draw(st.sampled_from(["code", "code", "code", "markdown", "raw"]))
        if kind != "code":
            cells.append({"cell_type": kind, "metadata": {}, "source": draw(st.sampled_from(
                ["# Notes\n", "x[x > 0] in prose", "", "%%bash\nls\n"]))})
            continue
        lines = "\n".join(draw(st.lists(st.sampled_from(CHUNKS), min_size=0, max_size=2))).split("\n")
        for _ in range(draw(st.integers(0, 3))):
            at = draw(st.integers(0, len(lines)))
            neighbour = lines[at] if at < len(lines) else ""
            indent = neighbour[:len(neighbour) - len(neighbour.lstrip())]
            lines.insert(at, indent + draw(st.sampled_from(MAGICS)))
        breaks = draw(st.sampled_from(LINE_BREAKS))
        text = breaks.join(lines) + draw(st.sampled_from(["", breaks]))
        source = text if draw(st.booleans()) else text.splitlines(True)
        cells.append({"cell_type": "code", "execution_count": None, "metadata": {}, "outputs": [], "source": source})
    document = {"cells": cells, "metadata": {"language_info": {"name": "python"}}, "nbformat": 4,
                "nbformat_minor": 5}
    indent = draw(st.sampled_from([1, 2, None]))
    return json.dumps(document, indent=indent, ensure_ascii=draw(st.booleans())).encode("utf-8")


def python_lines(text: str) -> list[str]:
    return re.findall(r"[^\r\n]*(?:\r\n|\r|\n)|[^\r\n]+", text)


@hypothesis_settings(max_examples=80, deadline=None, derandomize=True,
                     suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(notebooks())
def test_generated_notebooks_map_back_to_their_cells_and_fix_cleanly(data):
    notebook = Notebook.from_bytes(data)
    assert notebook.encode(notebook.text) == data  # nothing changed: every byte kept
    result = check_bytes(data, "gen.ipynb", "gen.ipynb", Settings())  # never raises
    raw_cells = json.loads(data)["cells"]
    for finding in result.findings:
        if finding.code == "DYN000":
            continue
        cell, row = result.locate(finding.line)
        original = raw_cells[cell - 1]
        assert original["cell_type"] == "code"
        assert python_lines(cell_text(original))[row - 1].rstrip("\r\n") == result.lines[finding.line]
    fixer = pytest.importorskip("dynlint.fixer")
    if any(f.code == "DYN000" for f in result.findings) or not any(fixer.is_applicable(f, True)
                                                                    for f in result.findings):
        return
    try:
        fixed, _ = fixer.fix_source(notebook.text, result.findings, unsafe=True)
    except fixer.FixError:
        return
    written = notebook.encode(fixed)
    assert Notebook.from_bytes(written).text == fixed  # what was written reads back as the fixed code
    new_cells = json.loads(written)["cells"]
    assert [c for c in new_cells if c["cell_type"] != "code"] == [c for c in raw_cells if c["cell_type"] != "code"]
    assert all(isinstance(new["source"], type(old["source"])) for new, old in zip(new_cells, raw_cells))
