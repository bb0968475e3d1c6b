"""The fixing CLI: --fix, --unsafe-fixes, --diff, --show-fixes, --exit-non-zero-on-fix,
--add-noqa and `dynlint fix`, through ``run_fix`` and (when wired) the real command."""

from __future__ import annotations

import argparse
import io
import json
import subprocess
import sys

import pytest

from dynlint.api import check_source
from dynlint.errors import UsageError
from dynlint.config import Settings
from dynlint.commands.fix import add_fix_arguments, run_fix

SAFE_ONLY = "import torch\n\ndef f(x: torch.Tensor):\n    return x[x > 0].sum()\n"
SAFE_ONLY_FIXED = "import torch\n\ndef f(x: torch.Tensor):\n    return torch.where(x > 0, x, 0).sum()\n"
WITH_UNSAFE = SAFE_ONLY + "\ng = torch.compile(f, dynamic=True)\n"
# DYN501 (opt-in) carries the unsafe fix of these tests
SETTINGS = Settings(select=Settings().select | {"DYN501"})


def parse(*flags: str) -> argparse.Namespace:
    parser = argparse.ArgumentParser()
    parser.add_argument("--output-format", default="full")
    parser.add_argument("--statistics", action="store_true")
    parser.add_argument("--exit-zero", action="store_true")
    parser.add_argument("-q", "--quiet", action="store_true")
    parser.add_argument("--stdin-filename")
    add_fix_arguments(parser)
    return parser.parse_args(list(flags))


def run(tmp_path, text: str, *flags: str, name: str = "m.py"):
    path = tmp_path / name
    path.write_text(text)
    out = io.StringIO()
    code = run_fix(parse(*flags), [(str(path), name)], SETTINGS, stream=out)
    return code, out.getvalue(), path.read_text()


def test_fix_writes_safe_fixes_and_exits_zero_when_clean(tmp_path):
    code, out, written = run(tmp_path, SAFE_ONLY, "--fix")
    assert written == SAFE_ONLY_FIXED and code == 0
    assert "Fixed 1 finding in 1 file (0 remaining)." in out


def test_fix_reports_what_remains_and_exits_one(tmp_path):
    code, out, written = run(tmp_path, WITH_UNSAFE, "--fix")
    assert code == 1 and "torch.where(x > 0, x, 0)" in written and "dynamic=True" in written
    assert "DYN501" in out and "1 more with `--unsafe-fixes`" in out


def test_unsafe_fixes_apply_unsafe_ones_too(tmp_path):
    code, out, written = run(tmp_path, WITH_UNSAFE, "--fix", "--unsafe-fixes")
    assert code == 0 and "dynamic=True" not in written and "torch.compile(f)" in written


def test_diff_prints_and_never_writes(tmp_path):
    code, out, written = run(tmp_path, SAFE_ONLY, "--diff")
    assert code == 1 and written == SAFE_ONLY
    assert "--- a/" in out and "-    return x[x > 0].sum()\n" in out
    assert "+    return torch.where(x > 0, x, 0).sum()\n" in out
    code, out, _ = run(tmp_path, SAFE_ONLY_FIXED, "--diff")
    assert code == 0 and out == ""


def test_diff_with_unsafe_fixes(tmp_path):
    code, out, written = run(tmp_path, WITH_UNSAFE, "--diff", "--unsafe-fixes")
    assert code == 1 and written == WITH_UNSAFE and "+g = torch.compile(f)\n" in out


def test_show_fixes_lists_them(tmp_path):
    _, out, _ = run(tmp_path, SAFE_ONLY, "--fix", "--show-fixes")
    assert "1 × DYN101 (boolean-mask-index)" in out


def test_exit_non_zero_on_fix(tmp_path):
    code, _, written = run(tmp_path, SAFE_ONLY, "--fix", "--exit-non-zero-on-fix")
    assert code == 1 and written == SAFE_ONLY_FIXED
    code, _, _ = run(tmp_path, SAFE_ONLY_FIXED, "--fix", "--exit-non-zero-on-fix")
    assert code == 0


def test_json_output_stays_a_single_document(tmp_path, capsys):
    code, out, _ = run(tmp_path, WITH_UNSAFE, "--fix", "--output-format", "json")
    document = json.loads(out)
    assert [item["code"] for item in document] == ["DYN501"]
    assert document[0]["fix"]["applicability"] == "unsafe"
    assert "Fixed 1 finding" in capsys.readouterr().err


def test_add_noqa(tmp_path, capsys):
    code, _, written = run(tmp_path, WITH_UNSAFE, "--add-noqa")
    assert code == 0 and "# noqa: DYN101" in written and "# noqa: DYN501" in written
    assert check_source(written) == []
    assert "Added 2 noqa directives." in capsys.readouterr().err


def test_add_noqa_cannot_be_combined_with_fix(tmp_path):
    with pytest.raises(UsageError):
        run(tmp_path, SAFE_ONLY, "--add-noqa", "--fix")


def test_unparsable_file_is_reported_and_untouched(tmp_path):
    code, out, written = run(tmp_path, "def f(:\n", "--fix")
    assert code == 1 and written == "def f(:\n" and "DYN000" in out


def test_stdin_prints_fixed_source(monkeypatch, capsys):
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(WITH_UNSAFE.encode())))
    out = io.StringIO()
    code = run_fix(parse("--fix"), [("-", "-")], SETTINGS, stream=out)
    assert out.getvalue() == SAFE_ONLY_FIXED + "\ng = torch.compile(f, dynamic=True)\n"
    assert code == 1 and "DYN501" in capsys.readouterr().err


def _wired() -> bool:
    from dynlint.cli import build_parser

    try:
        build_parser().parse_args(["fix", "x.py"])
    except SystemExit:
        return False
    return True


@pytest.mark.skipif(not _wired(), reason="`dynlint fix` is not wired into dynlint check yet")
@pytest.mark.parametrize("command", [["check", "--fix"], ["fix"]])
def test_real_command(tmp_path, command):
    path = tmp_path / "m.py"
    path.write_text(SAFE_ONLY)
    done = subprocess.run([sys.executable, "-m", "dynlint", *command, "--no-cache", str(path)],
                          capture_output=True, text=True, cwd=tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr
    assert path.read_text() == SAFE_ONLY_FIXED
    path.write_text(SAFE_ONLY)
    plain = subprocess.run([sys.executable, "-m", "dynlint", "check", "--no-cache", str(path)],
                           capture_output=True, text=True, cwd=tmp_path)
    assert plain.returncode == 1 and path.read_text() == SAFE_ONLY  # plain check never fixes
    assert "[*]" in plain.stdout and "1 fixable with `dynlint fix`" in plain.stdout
    path.write_text(SAFE_ONLY_FIXED)
    diff = subprocess.run([sys.executable, "-m", "dynlint", "check", "--diff", "--no-cache", str(path)],
                          capture_output=True, text=True, cwd=tmp_path)
    assert diff.returncode == 0 and diff.stdout == ""


def test_pre_commit_fix_hook_is_declared():
    yaml = pytest.importorskip("yaml")
    from pathlib import Path

    hooks = yaml.safe_load((Path(__file__).resolve().parents[1] / ".pre-commit-hooks.yaml").read_text())
    fix_hook = next(h for h in hooks if h["id"] == "dynlint-fix")
    assert fix_hook["entry"] == "dynlint check --fix" and fix_hook["language"] == "python"
    assert fix_hook["types_or"] == ["python", "pyi", "jupyter"] and fix_hook["require_serial"] is True


def test_fix_help_has_every_check_option_but_fix(capsys):
    """`dynlint fix` implies --fix: its help does not offer the flag; `check` still does."""
    from dynlint.cli import main

    with pytest.raises(SystemExit) as exit_info:
        main(["fix", "--help"])
    assert exit_info.value.code == 0
    fix_help = capsys.readouterr().out
    with pytest.raises(SystemExit):
        main(["check", "--help"])
    check_help = capsys.readouterr().out
    assert "  --fix " in check_help and "[--fix]" in check_help
    assert "  --fix " not in fix_help and "[--fix]" not in fix_help
    for option in ("--unsafe-fixes", "--diff", "--select", "--output-format", "--statistics", "--jobs"):
        assert option in fix_help and option in check_help
    with pytest.raises(SystemExit) as exit_info:
        main(["fix", "--fix", "x.py"])
    assert exit_info.value.code == 2  # an unknown option there, as the help says
    capsys.readouterr()


TWO_FIXES = "import torch\n\ndef f(x: torch.Tensor):\n    a = x[x > 0].sum()\n    b = x[x < 0].sum()\n    return a + b\n"


@pytest.fixture
def first_fix_unplaceable(monkeypatch):
    """The fix on line 4 rewrites into code that cannot parse; the one on line 5 is fine."""
    from dynlint.checks import load_all
    from dynlint.diagnostics import Edit, Fix

    rule = load_all()["DYN101"]
    real = rule.fix_builder()

    def build(node, ancestors, ctx):
        fix = real(node, ancestors, ctx)
        if fix is not None and node.lineno == 4:
            edit = fix.edits[0]
            return Fix(fix.applicability, fix.message, (Edit(edit.line, edit.col, edit.end_line, edit.end_col, "x[("),))
        return fix

    monkeypatch.setattr(rule, "fix", build)


@pytest.mark.parametrize("mode", ["--fix", "--diff"])
def test_a_fix_that_cannot_be_placed_is_dropped_alone_with_a_warning(tmp_path, capsys, first_fix_unplaceable, mode):
    code, out, written = run(tmp_path, TWO_FIXES, mode)
    err = capsys.readouterr().err
    warning = [line for line in err.splitlines() if "warning:" in line]
    assert len(warning) == 1 and warning[0].startswith(str(tmp_path / "m.py") + ":4:9: warning: DYN101 fix not applied")
    changed = written if mode == "--fix" else out
    assert "torch.where(x < 0, x, 0).sum()" in changed and "x[x > 0].sum()" in (written if mode == "--fix" else TWO_FIXES)
    summary = out if mode == "--fix" else err
    assert "1 fix could not be applied" in summary
    if mode == "--diff":
        assert written == TWO_FIXES and "Would fix 1 finding in 1 file; 1 fix could not be applied" in err
    else:
        assert "DYN101" in out  # the finding whose fix was dropped remains
