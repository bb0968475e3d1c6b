"""`dynlint check` / `dynlint clean` end to end, as a user runs them (subprocesses)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap

import pytest

NONZERO_SRC = "import torch\ndef f(x: torch.Tensor):\n    return torch.nonzero(x)\n"
SYNTAX_ERROR_SRC = "def f(:\n    pass\n"
CLEAN_SRC = "import torch\n\ndef f(x: torch.Tensor):\n    return x + 1\n"


def dynlint(*args, cwd, stdin=None, module=False, timeout=60, env_extra=None):
    command = [sys.executable, "-m", "dynlint"] if module else ["dynlint"]
    env = {**os.environ, **env_extra} if env_extra else None
    return subprocess.run([*command, *args], cwd=cwd, input=stdin, capture_output=True, text=True,
                          timeout=timeout, env=env)


def assert_usage_error(proc, *needles):
    assert proc.returncode == 2, proc
    assert proc.stdout == ""
    lines = proc.stderr.strip().splitlines()
    assert lines[-1].startswith("dynlint: error: ")
    assert "Traceback" not in proc.stderr
    for needle in needles:
        assert needle in lines[-1]


@pytest.fixture
def project(tmp_path):
    (tmp_path / "pyproject.toml").write_text("[tool.dynlint]\n")
    return tmp_path


def write(path, text):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def test_clean_project_exits_zero(project):
    write(project / "m.py", CLEAN_SRC)
    proc = dynlint("check", cwd=project)
    assert (proc.returncode, proc.stdout, proc.stderr) == (0, "All checks passed!\n", "")


def test_findings_exit_one_in_ruff_style(project):
    write(project / "pkg" / "m.py", NONZERO_SRC)
    proc = dynlint("check", "--output-format", "concise", cwd=project)
    assert proc.returncode == 1
    lines = proc.stdout.splitlines()
    assert lines[0].startswith("pkg/m.py:3:12: DYN102 ")
    assert lines[-1] == "Found 1 finding in 1 file."


def test_default_full_format_shows_the_source_line(project):
    write(project / "m.py", NONZERO_SRC)
    proc = dynlint("check", "m.py", cwd=project)
    assert proc.returncode == 1
    assert "3 |     return torch.nonzero(x)\n  |            ^^^^^^^^^^^^^^^^ DYN102\n" in proc.stdout


def test_parse_error_is_reported_and_other_files_still_checked(project):
    write(project / "a_broken.py", SYNTAX_ERROR_SRC)
    write(project / "b_model.py", NONZERO_SRC)
    proc = dynlint("check", "--output-format", "concise", cwd=project)
    assert proc.returncode == 1
    codes = [line.split()[1] for line in proc.stdout.splitlines()[:-1]]
    assert codes == ["DYN000", "DYN102"]
    assert proc.stdout.startswith("a_broken.py:1:7: DYN000 cannot check this file: syntax error")


@pytest.mark.parametrize("source", [
    SYNTAX_ERROR_SRC,                          # def f(:  -> CPython points at the colon
    "x = 1\nprint 'x'\n",                      # a span: the whole call
    "é = 'ü' + (:\n",                          # columns count characters, not UTF-8 bytes
    "if x\n    pass\n",
    "x = (1,\n",
])
def test_syntax_error_position_is_cpythons(project, source):
    """DYN000 for a syntax error sits where CPython puts it (line, 1-based column, span)."""
    write(project / "bad.py", source)
    try:
        compile(source, "bad.py", "exec")
    except SyntaxError as exc:
        expected = exc
    proc = dynlint("check", "--no-cache", "--output-format", "json", "bad.py", cwd=project)
    [finding] = json.loads(proc.stdout)
    assert finding["code"] == "DYN000"
    assert finding["location"] == {"row": expected.lineno, "column": expected.offset}
    if expected.end_lineno == expected.lineno and expected.end_offset > expected.offset:
        assert finding["end_location"] == {"row": expected.lineno, "column": expected.end_offset}
    else:
        assert finding["end_location"] == finding["location"]
    assert expected.msg in finding["message"]


def test_compiler_warnings_about_checked_code_are_not_printed(project):
    """`1if x` and "\\d" make CPython warn while parsing; a linter must not echo that on stderr."""
    write(project / "m.py", "import torch\nx = 1if True else 2\ny = '\\d'\nz = 1(2)\n")
    proc = dynlint("check", "--no-cache", "m.py", cwd=project, env_extra={"PYTHONWARNINGS": "default"})
    assert (proc.returncode, proc.stdout, proc.stderr) == (0, "All checks passed!\n", "")


def test_directory_without_python_files_warns_instead_of_passing(project):
    (project / "notes").mkdir()
    write(project / "notes" / "README.md", "# notes\n")
    proc = dynlint("check", "notes", cwd=project)
    assert proc.returncode == 0
    assert proc.stdout == ""
    assert proc.stderr == "dynlint: warning: no Python files found under the given path(s)\n"
    proc = dynlint("check", "--output-format", "json", "notes", cwd=project)
    assert (proc.returncode, proc.stdout) == (0, "[]\n")
    assert "no Python files found" in proc.stderr


def test_dangling_symlink_and_non_utf8_file_give_dyn000(project):
    os.symlink(project / "missing.py", project / "dangling.py")
    (project / "latin.py").write_bytes(b"# caf\xe9\nx = 1\n")
    write(project / "ok.py", CLEAN_SRC)
    proc = dynlint("check", "--output-format", "concise", "-q", cwd=project)
    assert proc.returncode == 1
    lines = proc.stdout.splitlines()
    assert len(lines) == 2
    assert lines[0].startswith("dangling.py:1:1: DYN000 cannot check this file: cannot read")
    assert lines[1].startswith("latin.py:1:1: DYN000 cannot check this file: ")
    assert "encoding" in lines[1] or "decode" in lines[1]


def test_exit_zero(project):
    write(project / "m.py", SYNTAX_ERROR_SRC)
    proc = dynlint("check", "--exit-zero", cwd=project)
    assert proc.returncode == 0
    assert "DYN000" in proc.stdout


def test_quiet_prints_findings_only(project):
    write(project / "m.py", SYNTAX_ERROR_SRC)
    proc = dynlint("check", "-q", "--output-format", "concise", cwd=project)
    assert proc.stdout.count("\n") == 1
    assert "Found" not in proc.stdout
    assert dynlint("check", "-q", "nothing_here_but", cwd=project).returncode == 2


def test_select_and_ignore_flags(project):
    write(project / "m.py", NONZERO_SRC)
    assert dynlint("check", "--ignore", "DYN102", cwd=project).returncode == 0
    assert dynlint("check", "--select", "DYN3,DYN5", cwd=project).returncode == 0
    assert dynlint("check", "--select", "DYN3", "--extend-select", "DYN10", cwd=project).returncode == 1
    assert dynlint("check", "--select", "DYN1", cwd=project).returncode == 1


def test_config_per_file_ignores_and_exclude(project):
    (project / "pyproject.toml").write_text(textwrap.dedent("""
        [tool.dynlint]
        exclude = ["generated"]
        [tool.dynlint.per-file-ignores]
        "tests/*" = ["DYN102"]
    """))
    write(project / "tests" / "test_m.py", NONZERO_SRC)
    write(project / "generated" / "broken.py", SYNTAX_ERROR_SRC)
    write(project / "src" / "m.py", NONZERO_SRC)
    proc = dynlint("check", "--output-format", "concise", "-q", cwd=project)
    assert [line.split(":")[0] for line in proc.stdout.splitlines()] == ["src/m.py"]
    # per-file-ignores globs are relative to the pyproject.toml, wherever dynlint runs from.
    proc = dynlint("check", "--output-format", "concise", "-q", ".", cwd=project / "tests")
    assert proc.returncode == 0, proc.stdout


def test_cli_exclude_flag(project):
    write(project / "vendor" / "broken.py", SYNTAX_ERROR_SRC)
    write(project / "ok.py", CLEAN_SRC)
    assert dynlint("check", cwd=project).returncode == 1
    assert dynlint("check", "--exclude", "vendor", cwd=project).returncode == 0


def test_config_flag(project, tmp_path):
    write(project / "m.py", NONZERO_SRC)
    other = write(tmp_path / "elsewhere" / "lint.toml", "ignore = ['DYN1']\n")
    assert dynlint("check", "--config", str(other), "m.py", cwd=project).returncode == 0


@pytest.mark.parametrize("args, needles", [
    (["check", "missing_dir"], ["path does not exist: missing_dir"]),
    (["check", "--select", "DYN999"], ["'DYN999'"]),
    (["check", "--ignore", "E501"], ["'E501'"]),
    (["check", "--config", "nope.toml"], ["config file not found: nope.toml"]),
    (["check", "-j", "-3"], ["-j/--jobs"]),
    (["check", "--output-format", "xml"], ["--output-format"]),
    (["clean", "missing_dir"], ["not a directory: missing_dir"]),
])
def test_usage_errors_exit_two_with_one_line(project, args, needles):
    assert_usage_error(dynlint(*args, cwd=project), *needles)


@pytest.mark.parametrize("pyproject, needles", [
    ("[tool.dynlint]\nselect = [\n", ["invalid TOML"]),
    ("[tool.dynlint]\nunknown-option = 1\n", ["unknown key", "'unknown-option'"]),
    ("[tool.dynlint]\nselect = ['DYN777']\n", ["'DYN777'"]),
    ("[tool.dynlint]\nexclude = 'build'\n", ["exclude", "list of strings"]),
])
def test_bad_config_exits_two_with_one_line(project, pyproject, needles):
    (project / "pyproject.toml").write_text(pyproject)
    write(project / "m.py", CLEAN_SRC)
    assert_usage_error(dynlint("check", cwd=project), *needles)


def test_json_output_is_only_the_document(project):
    write(project / "m.py", NONZERO_SRC)
    proc = dynlint("check", "--output-format", "json", cwd=project)
    assert proc.returncode == 1
    data = json.loads(proc.stdout)
    assert [(d["code"], d["filename"], d["location"]) for d in data] == [("DYN102", "m.py", {"row": 3, "column": 12})]


def test_sarif_and_github_outputs(project):
    write(project / "pkg" / "m.py", SYNTAX_ERROR_SRC)
    proc = dynlint("check", "--output-format", "sarif", cwd=project / "pkg")
    doc = json.loads(proc.stdout)
    location = doc["runs"][0]["results"][0]["locations"][0]["physicalLocation"]["artifactLocation"]
    assert location == {"uri": "pkg/m.py", "uriBaseId": "%SRCROOT%"}   # relative to the project root
    proc = dynlint("check", "--output-format", "github", cwd=project)
    assert proc.stdout.startswith("::error title=dynlint (DYN000),file=pkg/m.py,line=1,col=7,")
    assert proc.stdout.count("\n") == 1


def test_statistics(project):
    write(project / "a.py", NONZERO_SRC)
    write(project / "b.py", NONZERO_SRC + "y = torch.nonzero(torch.ones(3, device=\"cuda\"))\n")
    proc = dynlint("check", "--statistics", cwd=project)
    assert proc.returncode == 1
    assert proc.stdout.splitlines() == ["3  DYN102  nonzero", "Found 3 findings in 2 files."]


@pytest.mark.parametrize("fmt", ["github", "sarif"])
def test_statistics_refuses_formats_without_a_table(project, fmt):
    write(project / "a.py", NONZERO_SRC)
    assert_usage_error(dynlint("check", "--statistics", "--output-format", fmt, cwd=project),
                       "--statistics", fmt)
    assert_usage_error(dynlint("fix", "--statistics", "--output-format", fmt, cwd=project), "--statistics")
    assert (project / "a.py").read_text() == NONZERO_SRC


def test_output_file(project):
    write(project / "m.py", SYNTAX_ERROR_SRC)
    proc = dynlint("check", "--output-format", "json", "-o", "report.json", "m.py", cwd=project)
    assert proc.returncode == 1
    assert proc.stdout == ""
    assert json.loads((project / "report.json").read_text())[0]["code"] == "DYN000"


def test_stdin(project):
    (project / "pyproject.toml").write_text("[tool.dynlint.per-file-ignores]\n'tests/*' = ['DYN102']\n")
    proc = dynlint("check", "-", "--output-format", "concise", cwd=project, stdin=NONZERO_SRC)
    assert proc.returncode == 1
    assert proc.stdout.startswith("-:3:12: DYN102 ")
    proc = dynlint("check", "-", "--stdin-filename", "src/m.py", "--output-format", "concise", cwd=project,
                   stdin=NONZERO_SRC)
    assert proc.stdout.startswith("src/m.py:3:12: DYN102 ")
    proc = dynlint("check", "-", "--stdin-filename", "tests/t.py", cwd=project, stdin=NONZERO_SRC)
    assert proc.returncode == 0


def test_parallel_jobs_give_the_same_output_in_the_same_order(project):
    for i in range(12):
        write(project / f"pkg{i % 3}" / f"m{i}.py", NONZERO_SRC if i % 2 else SYNTAX_ERROR_SRC)
    serial = dynlint("check", "--output-format", "concise", cwd=project)
    parallel = dynlint("check", "--output-format", "concise", "-j", "3", cwd=project)
    automatic = dynlint("check", "--output-format", "concise", "-j", "0", cwd=project)
    assert serial.returncode == parallel.returncode == automatic.returncode == 1
    assert serial.stdout == parallel.stdout == automatic.stdout
    assert "Found 12 findings in 12 files." in serial.stdout


def test_symlink_loop_does_not_hang(project):
    write(project / "pkg" / "m.py", SYNTAX_ERROR_SRC)
    os.symlink(project, project / "pkg" / "loop")
    proc = dynlint("check", "--output-format", "concise", "-q", cwd=project, timeout=30)
    assert proc.stdout.count("DYN000") == 1


def test_python_dash_m_behaves_like_the_script(project):
    write(project / "m.py", NONZERO_SRC)
    write(project / "bad.py", SYNTAX_ERROR_SRC)
    script = dynlint("check", "--output-format", "json", cwd=project)
    module = dynlint("check", "--output-format", "json", cwd=project, module=True)
    assert (module.returncode, module.stdout, module.stderr) == (script.returncode, script.stdout, script.stderr)
    assert module.returncode == 1
    assert_usage_error(dynlint("check", "nope", cwd=project, module=True), "path does not exist: nope")


def test_check_path_never_imports_torch_or_libcst(project):
    write(project / "m.py", NONZERO_SRC)
    code = textwrap.dedent("""
        import sys
        from dynlint.cli import main
        for fmt in ("full", "json", "sarif"):
            assert main(["check", "--output-format", fmt, "m.py"]) == 1
        heavy = sorted(m for m in sys.modules if m.split(".")[0] in ("torch", "libcst", "numpy"))
        assert not heavy, heavy
    """)
    proc = subprocess.run([sys.executable, "-c", code], cwd=project, capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert "DYN102" in proc.stdout


def test_a_warm_cache_check_imports_neither_the_fix_machinery_nor_other_commands(project):
    # a warm check is mostly start-up: findings come from the cache, so the fix builders (dynlint.fixes),
    # the TOML parser (no [tool.dynlint] table) and the other commands' modules stay unimported
    write(project / "m.py", NONZERO_SRC)
    write(project / "pyproject.toml", '[project]\nname = "m"\n')
    assert dynlint("check", "m.py", cwd=project).returncode == 1  # fills the cache
    code = textwrap.dedent("""
        import sys
        from dynlint.cli import main
        assert main(["check", "m.py"]) == 1
        loaded = sorted(m for m in sys.modules if m in ("dynlint.fixes", "tomllib", "dynlint.commands.buckets",
                                                        "dynlint.commands.confirm", "dynlint.commands.rule"))
        assert not loaded, loaded
    """)
    proc = subprocess.run([sys.executable, "-c", code], cwd=project, capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert "DYN102" in proc.stdout


def test_clean_removes_cache_directories_only(project):
    write(project / ".dynlint_cache" / "0.1.0" / "entry", "x")
    write(project / "sub" / ".dynlint_cache" / "CACHEDIR.TAG", "x")
    write(project / "sub" / "keep.py", CLEAN_SRC)
    write(project / ".venv" / ".dynlint_cache" / "x", "not walked: virtualenvs hold no caches of ours")
    proc = dynlint("clean", cwd=project)
    assert proc.returncode == 0
    assert proc.stdout.splitlines() == ["Removed .dynlint_cache", "Removed sub/.dynlint_cache"]
    assert not (project / ".dynlint_cache").exists()
    assert not (project / "sub" / ".dynlint_cache").exists()
    assert (project / "sub" / "keep.py").exists()
    assert dynlint("clean", cwd=project).stdout == ""
