"""Which files `dynlint check` reads, in which order."""

from __future__ import annotations

import os

import pytest

from dynlint.errors import UsageError
from dynlint.config import Settings
from dynlint.discovery import iter_source_files


def touch(path, text="x = 1\n"):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def found(paths, root, **settings_kwargs):
    settings = Settings(root=str(root), **settings_kwargs)
    return [(f.path, f.relpath) for f in iter_source_files([str(p) for p in paths], settings, warn=lambda m: None)]


def relpaths(paths, root, **kw):
    return [rel for _, rel in found(paths, root, **kw)]


def test_walks_sorted_and_picks_python_files_only(tmp_path):
    for name in ["b.py", "a.pyi", "c.txt", "pkg/z.py", "pkg/a.py", "pkg/data.json", "A.py", "setup.cfg"]:
        touch(tmp_path / name)
    assert relpaths([tmp_path], tmp_path) == ["A.py", "a.pyi", "b.py", "pkg/a.py", "pkg/z.py"]


@pytest.mark.parametrize("skipped", [
    ".git", ".hg", ".venv", "venv", "__pycache__", "build", "dist", ".tox", ".nox", ".mypy_cache",
    ".dynlint_cache", "node_modules", "site-packages", "mypkg.egg-info",
])
def test_skips_tool_and_build_directories(tmp_path, skipped):
    touch(tmp_path / skipped / "hidden.py")
    touch(tmp_path / "kept.py")
    assert relpaths([tmp_path], tmp_path) == ["kept.py"]


def test_skips_any_virtualenv_but_not_a_package_named_env(tmp_path):
    touch(tmp_path / "env" / "pyvenv.cfg", "home = /usr\n")
    touch(tmp_path / "env" / "lib" / "x.py")
    touch(tmp_path / "myvenv" / "pyvenv.cfg", "home = /usr\n")
    touch(tmp_path / "myvenv" / "y.py")
    touch(tmp_path / "src" / "env" / "config.py")
    assert relpaths([tmp_path], tmp_path) == ["src/env/config.py"]


def test_exclude_globs_apply_to_directories_and_files(tmp_path):
    touch(tmp_path / "gen" / "a.py")
    touch(tmp_path / "src" / "api_pb2.py")
    touch(tmp_path / "src" / "model.py")
    touch(tmp_path / "src" / "legacy" / "old.py")
    excluded = relpaths([tmp_path], tmp_path, exclude=("gen", "*_pb2.py", "src/legacy"))
    assert excluded == ["src/model.py"]


def test_explicit_files_are_always_checked(tmp_path):
    script = touch(tmp_path / "tool" / "run_me")          # no .py extension
    generated = touch(tmp_path / "gen" / "a.py")           # matches an exclude glob
    assert relpaths([script, generated], tmp_path, exclude=("gen",)) == ["tool/run_me", "gen/a.py"]


def test_explicitly_named_skipped_directory_is_walked(tmp_path):
    touch(tmp_path / "build" / "gen.py")
    assert relpaths([tmp_path / "build"], tmp_path) == ["build/gen.py"]


def test_missing_path_is_a_usage_error_before_anything_is_yielded(tmp_path):
    touch(tmp_path / "a.py")
    with pytest.raises(UsageError, match="path does not exist: .*nope"):
        iter_source_files([str(tmp_path / "a.py"), str(tmp_path / "nope")], Settings(root=str(tmp_path)))


def test_directory_named_like_a_python_file_is_recursed(tmp_path):
    touch(tmp_path / "x.py" / "inner.py")
    assert relpaths([tmp_path], tmp_path) == ["x.py/inner.py"]


def test_symlink_loop_terminates_and_files_are_not_repeated(tmp_path):
    touch(tmp_path / "pkg" / "a.py")
    os.symlink(tmp_path / "pkg", tmp_path / "pkg" / "loop")
    os.symlink(tmp_path, tmp_path / "pkg" / "up")
    os.symlink(tmp_path / "pkg" / "a.py", tmp_path / "alias.py")
    assert relpaths([tmp_path, tmp_path / "pkg"], tmp_path) == ["alias.py"]


def test_symlinked_directory_is_followed(tmp_path):
    touch(tmp_path / "real" / "m.py")
    project = tmp_path / "project"
    project.mkdir()
    os.symlink(tmp_path / "real", project / "linked")
    assert relpaths([project], project) == ["linked/m.py"]


def test_dangling_symlink_is_yielded_for_the_checker_to_report(tmp_path):
    os.symlink(tmp_path / "gone.py", tmp_path / "broken.py")
    assert relpaths([tmp_path], tmp_path) == ["broken.py"]


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs POSIX FIFOs")
def test_fifo_named_py_is_not_read(tmp_path):
    os.mkfifo(tmp_path / "pipe.py")
    touch(tmp_path / "a.py")
    assert relpaths([tmp_path], tmp_path) == ["a.py"]


def test_paths_keep_the_form_they_were_given_in(tmp_path, monkeypatch):
    touch(tmp_path / "pkg" / "m.py")
    monkeypatch.chdir(tmp_path)
    assert found(["."], tmp_path) == [("pkg/m.py", "pkg/m.py")]
    assert found(["pkg"], tmp_path) == [("pkg/m.py", "pkg/m.py")]
    assert found([str(tmp_path / "pkg")], tmp_path) == [(str(tmp_path / "pkg" / "m.py"), "pkg/m.py")]


def test_relpath_is_relative_to_the_settings_root(tmp_path, monkeypatch):
    touch(tmp_path / "repo" / "src" / "m.py")
    monkeypatch.chdir(tmp_path / "repo" / "src")
    assert found(["m.py"], tmp_path / "repo") == [("m.py", "src/m.py")]


def test_same_file_twice_is_checked_once(tmp_path):
    touch(tmp_path / "a.py")
    assert relpaths([tmp_path / "a.py", tmp_path, tmp_path / "a.py"], tmp_path) == ["a.py"]


def test_unreadable_directory_warns_and_continues(tmp_path, monkeypatch):
    touch(tmp_path / "a" / "x.py")
    touch(tmp_path / "b" / "y.py")
    real_scandir = os.scandir

    def scandir(path):
        if os.path.basename(str(path)) == "a":
            raise PermissionError(13, "Permission denied")
        return real_scandir(path)

    monkeypatch.setattr(os, "scandir", scandir)
    warnings = []
    files = iter_source_files([str(tmp_path)], Settings(root=str(tmp_path)), warn=warnings.append)
    assert [f.relpath for f in files] == ["b/y.py"]
    assert warnings == [f"cannot read directory {tmp_path / 'a'}: Permission denied"]
