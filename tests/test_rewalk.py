"""Walking a function again alone (a later round of the project pass) gives what a whole walk gives."""

from __future__ import annotations

import json
import subprocess
import sys


def test_a_function_walked_again_keeps_the_roots_it_notes(tmp_path):
    """A host function (it calls .numpy()) whose parameter's kind is only known in the second round
    is walked again alone; it must still note itself as host code, as a whole walk does."""
    (tmp_path / "pyproject.toml").write_text("[tool.dynlint]\n")
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "__init__.py").write_text("")
    (tmp_path / "pkg" / "helpers.py").write_text("import torch\n\n\ndef to_numpy(x):\n"
                                                 "    return x.detach().cpu().numpy()\n")
    (tmp_path / "pkg" / "evaluate.py").write_text("import torch\n\nfrom pkg.helpers import to_numpy\n\n\n"
                                                  "def evaluate(batch: torch.Tensor):\n    out = batch * 2\n"
                                                  "    return to_numpy(out)\n")
    found = set()
    for jobs in ("1", "2"):
        proc = subprocess.run([sys.executable, "-m", "dynlint", "check", "--no-cache", "--include-host", "-j", jobs,
                               "--output-format", "json"], cwd=tmp_path, capture_output=True, text=True, timeout=120)
        found |= {(f["filename"], f["location"]["row"], f["code"], f["region"]) for f in json.loads(proc.stdout)}
    assert found == {("pkg/helpers.py", 5, "DYN301", "host")}
