"""The results cache across files (issue 9, "What to build" 5): a file's findings depend on
other files' facts, so editing, removing or renaming one file re-checks the files that
used what it said, and a warm run never serves a stale result.

Everything goes through the CLI with a real cache directory; at every step the
cached run must print exactly what ``--no-cache`` prints (stdout, stderr, exit status).
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

PYPROJECT = "[tool.dynlint]\n"

MODEL = """\
import torch
from torch import nn

from pkg.helpers import count, scale


class Model(nn.Module):
    def forward(self, x: torch.Tensor):
        n = count(x)
        if n > 0:
            x = x / 2
        return x * scale({argument})
"""

HELPERS = """\
import torch


def count(x):
    return {returned}


def scale(v):
    return int(v) + 1
"""

TENSOR_RETURN = "x.sum()"
INT_RETURN = "0"


def dynlint(*args, cwd, timeout=120):
    return subprocess.run([sys.executable, "-m", "dynlint", *args], cwd=cwd, capture_output=True, text=True,
                          timeout=timeout)


def checked(project: Path, *extra: str) -> list[tuple]:
    """One cached run, compared with an uncached one; the findings as (file, line, code, region)."""
    cache_dir = project.parent / f"{project.name}-cache"
    args = ("check", "--output-format", "json", *extra)
    warm = dynlint(*args, "--cache-dir", str(cache_dir), cwd=project)
    cold = dynlint(*args, "--no-cache", cwd=project)
    assert (warm.returncode, warm.stdout, warm.stderr) == (cold.returncode, cold.stdout, cold.stderr)
    assert warm.returncode in (0, 1), warm.stderr
    return sorted((Path(f["filename"]).as_posix(), f["location"]["row"], f["code"], f["region"])
                  for f in json.loads(warm.stdout))


def cache_entries(project: Path) -> int:
    entries = project.parent / f"{project.name}-cache" / "entries"
    return sum(1 for p in entries.rglob("*") if p.is_file()) if entries.exists() else 0


@pytest.fixture
def project(tmp_path):
    root = tmp_path / "proj"
    (root / "pkg").mkdir(parents=True)
    (root / "pyproject.toml").write_text(PYPROJECT)
    (root / "pkg" / "__init__.py").write_text("")
    (root / "pkg" / "model.py").write_text(MODEL.format(argument="3"))
    (root / "pkg" / "helpers.py").write_text(HELPERS.format(returned=TENSOR_RETURN))
    return root


def test_editing_a_helpers_return_rechecks_its_caller_in_another_file(project):
    model_text = (project / "pkg" / "model.py").read_text()
    branch = ("pkg/model.py", 10, "DYN202", "compiled")
    assert branch in checked(project)  # the helper returns a tensor: a data-dependent branch
    entries = cache_entries(project)
    assert entries >= 3
    (project / "pkg" / "helpers.py").write_text(HELPERS.format(returned=INT_RETURN))
    assert branch not in checked(project)  # an int now: no branch on tensor data
    (project / "pkg" / "helpers.py").write_text(HELPERS.format(returned=TENSOR_RETURN))
    assert branch in checked(project)  # and back
    assert (project / "pkg" / "model.py").read_text() == model_text  # the caller itself never changed


def test_editing_a_caller_to_pass_a_tensor_changes_the_callees_findings(project):
    sync = ("pkg/helpers.py", 9, "DYN301", "compiled")
    assert sync not in checked(project)  # scale(3): int(v) of an int
    (project / "pkg" / "model.py").write_text(MODEL.format(argument="x.sum()"))
    assert sync in checked(project)  # scale(x.sum()): int(v) of a tensor
    (project / "pkg" / "model.py").write_text(MODEL.format(argument="3"))
    assert sync not in checked(project)


def test_a_new_caller_moves_a_helper_into_the_compiled_region(project):
    (project / "pkg" / "extra.py").write_text("import torch\n\ndef unused(x: torch.Tensor):\n    return x.nonzero()\n")
    assert ("pkg/extra.py", 4, "DYN102", "unknown") in checked(project)
    model = MODEL.format(argument="3").replace("from pkg.helpers", "from pkg.extra import unused\nfrom pkg.helpers")
    model = model.replace("        return x * scale", "        unused(x)\n        return x * scale")
    (project / "pkg" / "model.py").write_text(model)
    assert ("pkg/extra.py", 4, "DYN102", "compiled") in checked(project)


def test_editing_a_helpers_parameter_annotation_rechecks_its_caller(project):
    (project / "pkg" / "stats.py").write_text(
        "import torch\n\n\ndef mean_of(values: torch.Tensor):\n    return values.mean()\n")
    (project / "pkg" / "step.py").write_text(
        "import torch\n\nfrom pkg.stats import mean_of\n\n\ndef summarize(batch):\n    scores = batch[\"scores\"]\n"
        "    mean_of(scores)\n    return scores.sum().item()\n")
    sync = ("pkg/step.py", 9, "DYN301", "unknown")
    assert sync in checked(project)  # passed to a Tensor parameter: scores is a tensor from then on
    (project / "pkg" / "stats.py").write_text(
        "import torch\n\n\ndef mean_of(values: list):\n    return sum(values) / len(values)\n")
    assert sync not in checked(project)  # a list parameter now: nothing says scores is a tensor


def test_removing_a_helper_file(project):
    before = checked(project)
    assert ("pkg/model.py", 10, "DYN202", "compiled") in before
    (project / "pkg" / "helpers.py").unlink()
    after = checked(project)
    assert not [f for f in after if f[0] == "pkg/helpers.py"]
    assert ("pkg/model.py", 10, "DYN202", "compiled") not in after  # count() is unknown now


def test_renaming_a_module(project):
    before = checked(project)
    (project / "pkg" / "helpers.py").rename(project / "pkg" / "utils.py")
    # the import still names the old module: nothing resolves
    dangling = checked(project)
    assert ("pkg/model.py", 10, "DYN202", "compiled") not in dangling
    assert ("pkg/utils.py", 9, "DYN301", "unknown") not in dangling
    # the import follows the rename: the same findings as before, under the new name
    model = (project / "pkg" / "model.py").read_text().replace("pkg.helpers", "pkg.utils")
    (project / "pkg" / "model.py").write_text(model)
    renamed = checked(project)
    assert renamed == sorted((path.replace("helpers", "utils"), *rest) for path, *rest in before)
    # and a relative import of the renamed module reads the same
    (project / "pkg" / "model.py").write_text(model.replace("from pkg.utils", "from .utils"))
    assert checked(project) == renamed


def test_a_module_importing_a_package_re_export(project):
    (project / "pkg" / "__init__.py").write_text("from .helpers import count\n")
    (project / "train.py").write_text(
        "import torch\nfrom pkg import count\n\n\ndef step(x: torch.Tensor):\n    if count(x) > 1:\n"
        "        return x\n    return -x\n")
    assert ("train.py", 6, "DYN202", "unknown") in checked(project)
    (project / "pkg" / "helpers.py").write_text(HELPERS.format(returned=INT_RETURN))
    assert ("train.py", 6, "DYN202", "unknown") not in checked(project)
    (project / "pkg" / "__init__.py").write_text("")  # the re-export goes away: count unknown
    (project / "pkg" / "helpers.py").write_text(HELPERS.format(returned=TENSOR_RETURN))
    assert ("train.py", 6, "DYN202", "unknown") not in checked(project)


def test_a_star_import_chain_that_stops_bringing_torch(project):
    """fastai's layout: torch reaches a model module only through ``from .basics import *``; when the
    module at the chain's end stops importing torch, the model module is checked again."""
    (project / "pkg" / "imports.py").write_text("import torch\n")
    (project / "pkg" / "basics.py").write_text("from .imports import *\n")
    (project / "pkg" / "net.py").write_text(
        "from .basics import *\n\n\ndef head(x):\n    return torch.nonzero(x)\n")
    assert ("pkg/net.py", 5, "DYN102", "unknown") in checked(project)
    (project / "pkg" / "imports.py").write_text("import numpy as torch\n")
    assert ("pkg/net.py", 5, "DYN102", "unknown") not in checked(project)
    (project / "pkg" / "imports.py").write_text("import torch\n")
    assert ("pkg/net.py", 5, "DYN102", "unknown") in checked(project)


# -- parallel walks give the serial result --

def _chain_project(root: Path, modules: int = 36, filler: int = 220) -> None:
    """A package large enough that ``-j 2`` really walks it in worker processes (more than
    ``runner.IN_PROCESS_MAX_BYTES``), where each module's findings depend on its neighbour's:
    ``m{i}.step`` branches on what ``m{i-1}.step`` returns (a tensor, from ``m0`` up)."""
    (root / "chain").mkdir(parents=True)
    (root / "pyproject.toml").write_text(PYPROJECT)
    (root / "chain" / "__init__.py").write_text("from .m0 import step as first_step\n")
    padding = "".join(f"\n\ndef filler_{j}(a, b):\n    c = a + b * {j}\n    return c - {j}\n" for j in range(filler))
    for i in range(modules):
        if i == 0:
            body = "def step(x):\n    return torch.ones(3) + len(x)\n"
        else:
            body = (f"from .m{i - 1} import step as previous\n\n\ndef step(x):\n    y = previous(x)\n"
                    "    if y.max() > 1:\n        y = y / 2\n    return y.nonzero()\n")
        (root / "chain" / f"m{i}.py").write_text(f"import torch\n\n{body}{padding}")
    last = modules - 1
    (root / "model.py").write_text(
        f"import torch\nfrom torch import nn\n\nfrom chain.m{last} import step\n\n\n"
        "class Top(nn.Module):\n    def forward(self, x: torch.Tensor):\n        return step(x)\n")


@pytest.fixture(scope="module")
def chain(tmp_path_factory):
    from dynlint.runner import IN_PROCESS_MAX_BYTES

    root = tmp_path_factory.mktemp("chain") / "chain-project"
    _chain_project(root)
    assert sum(p.stat().st_size for p in root.rglob("*.py")) > IN_PROCESS_MAX_BYTES  # -j 2 uses the pool
    one = dynlint("check", "--output-format", "json", "--no-cache", "-j", "1", cwd=root)
    found = {(Path(f["filename"]).as_posix(), f["location"]["row"], f["code"], f["region"])
             for f in json.loads(one.stdout)}
    # the facts crossed every file: each module's branch is on what the module below returns
    for i in range(1, 36):
        assert (f"chain/m{i}.py", 8, "DYN202", "compiled") in found, i
    return root, one


def test_two_jobs_with_a_cache_give_the_one_job_output_on_a_multi_file_project(chain, tmp_path):
    root, one = chain
    cache = str(tmp_path / "chain-cache")
    for _ in range(2):  # cold, then warm
        cached = dynlint("check", "--output-format", "json", "-j", "2", "--cache-dir", cache, cwd=root)
        assert (cached.returncode, cached.stdout, cached.stderr) == (one.returncode, one.stdout, one.stderr)


def test_one_and_two_jobs_give_identical_output_on_a_multi_file_project(chain):
    root, one = chain
    two = dynlint("check", "--output-format", "json", "--no-cache", "-j", "2", cwd=root)
    assert (one.returncode, one.stdout, one.stderr) == (two.returncode, two.stdout, two.stderr)
