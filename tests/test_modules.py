"""Module names and the other names a file may be imported by (dynlint.analysis.modules)."""

from __future__ import annotations

from dynlint.analysis.modules import path_aliases, unique_aliases
from dynlint.api import Settings
from dynlint.runner import check_units, make_units


def test_path_aliases_are_the_dotted_suffixes_of_the_path():
    assert path_aliases("src/pkg/helpers.py", "helpers") == ("pkg.helpers", "src.pkg.helpers")
    assert path_aliases("pkg/sub/__init__.py", "sub") == ("pkg.sub",)
    # a directory that is not an identifier ends the names
    assert path_aliases("my-repo/pkg/helpers.py", "helpers") == ("pkg.helpers",)
    assert path_aliases("notes.txt", "notes") == ()


def test_a_regular_package_under_namespace_directories_is_also_named_through_them():
    # megatron/ has no __init__.py, megatron/core/ has one: the module is core.models.x, imported as
    # megatron.core.models.x
    assert path_aliases("megatron/core/models/x.py", "core.models.x") == ("megatron.core.models.x",)
    assert path_aliases("megatron/core/__init__.py", "core") == ("megatron.core",)
    assert path_aliases("src/ns/pkg/helpers.py", "pkg.helpers") == ("ns.pkg.helpers", "src.ns.pkg.helpers")


def test_files_of_top_level_packages_renamed_modules_and_well_known_modules_get_no_alias():
    assert path_aliases("pkg/helpers.py", "pkg.helpers") == ()  # pkg/ has an __init__.py, at the root
    assert path_aliases("a/b/train.py", "a.b.train") == ()  # named by its path (make_units: two train.py)
    assert path_aliases("scripts/train.py", "scripts.train_2") == ()  # a name that is not its path's
    assert path_aliases("torch/nn/mod.py", "nn.mod") == ()  # never "torch.nn.mod"
    assert path_aliases("vendor/numpy/random.py", "random") == ()  # never "numpy.random"
    assert path_aliases("lib/torch/ops.py", "ops") == ()


def test_an_alias_two_files_could_have_is_not_used():
    aliases = unique_aliases({"a/utils.py": "utils", "a/model.py": "model", "b/c/x.py": "x", "d/c/x.py": "x"})
    assert aliases["a.utils"] == "utils" and aliases["a.model"] == "model"
    assert "c.x" not in aliases  # two files could be c.x
    assert aliases["b.c.x"] == "x" and aliases["d.c.x"] == "x"


def test_a_model_whose_base_class_is_imported_through_a_namespace_directory_is_a_module(tmp_path):
    # megatron-core's layout: megatron/ (no __init__.py) holds the regular package core/; its models import
    # their nn.Module base as megatron.core.module: their forwards are the compiled step, found by default
    core = tmp_path / "ns" / "core"
    core.mkdir(parents=True)
    (core / "__init__.py").write_text("")
    (core / "module.py").write_text("import torch\n\n\nclass Base(torch.nn.Module):\n    pass\n")
    (core / "model.py").write_text(
        "from ns.core.module import Base\n\n\n"
        "class Model(Base):\n    def forward(self, x, counts):\n        return x.split(counts.tolist())\n")
    units = make_units([(str(core / name), f"ns/core/{name}") for name in ("__init__.py", "module.py", "model.py")])
    results = check_units(units, Settings(), jobs=1)
    found = {(r.relpath, f.code, f.line): f.region for r in results for f in r.findings}
    assert found.get(("ns/core/model.py", "DYN302", 6)) == "compiled"


def test_a_namespace_package_imported_from_the_project_root_is_one_project(tmp_path):
    (tmp_path / "ns").mkdir()  # no __init__.py: a namespace package
    (tmp_path / "ns" / "helpers.py").write_text("def count(v):\n    return int(v.sum())\n")
    (tmp_path / "ns" / "model.py").write_text(
        "from torch import nn\nfrom ns.helpers import count\n\n\n"
        "class M(nn.Module):\n    def forward(self, x):\n        return count(x > 0)\n")
    units = make_units([(str(tmp_path / "ns" / name), f"ns/{name}") for name in ("helpers.py", "model.py")])
    results = check_units(units, Settings(), jobs=1)
    codes = {(r.relpath, f.code, f.line) for r in results for f in r.findings}
    assert ("ns/helpers.py", "DYN301", 2) in codes


def test_star_imports_of_modules_outside_the_run_do_not_blow_up(tmp_path, monkeypatch):
    # transformers' models/__init__.py star-imports ~400 model packages; a checked file that names
    # pkg.models.auto.x.f (auto not in the run) once made the resolver follow every star module, each
    # falling back to pkg.models with a longer name: 400^12 paths (minutes on transformers).
    from dynlint.analysis import facts

    models = tmp_path / "pkg" / "models"
    models.mkdir(parents=True)
    (tmp_path / "pkg" / "__init__.py").write_text("")
    (models / "__init__.py").write_text("".join(f"from .m{i} import *\n" for i in range(40)))
    (models / "m0.py").write_text("def helper(v):\n    return v\n")
    (tmp_path / "pkg" / "use.py").write_text(
        "import torch\nimport pkg.models\n\n\n"
        "def g(x: torch.Tensor):\n    n = pkg.models.auto.config.Auto.make(x)\n    h = pkg.models.helper(x)\n"
        "    return int(h.sum()) + n\n")
    calls = []
    original = facts.ProjectFacts.resolve

    def counting(self, qualname, depth=0):
        calls.append(qualname)
        if len(calls) > 20_000:
            raise AssertionError("resolve explodes: " + qualname)
        return original(self, qualname, depth)

    monkeypatch.setattr(facts.ProjectFacts, "resolve", counting)
    files = ["pkg/__init__.py", "pkg/models/__init__.py", "pkg/models/m0.py", "pkg/use.py"]
    results = check_units(make_units([(str(tmp_path / rel), rel) for rel in files]), Settings(), jobs=1)
    assert len(calls) < 2_000
    codes = {(r.relpath, f.code, f.line) for r in results for f in r.findings}
    assert ("pkg/use.py", "DYN301", 8) in codes  # a star import of a module in the run still resolves
