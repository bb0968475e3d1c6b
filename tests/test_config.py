"""Loading [tool.dynlint] and CLI overrides into Settings."""

from __future__ import annotations

import textwrap

import pytest

from dynlint.errors import UsageError
from dynlint.codes import ALL_CODES, DEFAULT_CODES, OPT_IN_CODES
from dynlint.config import Settings, load_settings


def write_pyproject(directory, body: str):
    path = directory / "pyproject.toml"
    path.write_text(textwrap.dedent(body))
    return path


@pytest.fixture
def project(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    return tmp_path


def test_defaults_without_config(project):
    settings = load_settings([str(project)], {})
    assert settings.select == frozenset(ALL_CODES) - frozenset(OPT_IN_CODES) == frozenset(DEFAULT_CODES)
    assert settings.source is None
    assert settings.root == str(project)
    assert settings.exclude == ()
    assert settings.per_file_ignores == ()


def test_nearest_pyproject_with_table_wins_and_sets_root(project):
    write_pyproject(project, """
        [tool.dynlint]
        select = ["DYN1"]
    """)
    sub = project / "pkg" / "sub"
    sub.mkdir(parents=True)
    # A pyproject.toml without [tool.dynlint] in between is skipped.
    write_pyproject(project / "pkg", "[project]\nname = 'x'\n")
    settings = load_settings([str(sub)], {})
    assert settings.source == str(project / "pyproject.toml")
    assert settings.root == str(project)
    assert settings.select == {"DYN101", "DYN102", "DYN103", "DYN104", "DYN105"}


def test_search_starts_from_a_file_argument(project):
    inner = project / "inner"
    inner.mkdir()
    write_pyproject(inner, "[tool.dynlint]\nignore = ['DYN4']\n")
    (inner / "m.py").write_text("")
    settings = load_settings([str(inner / "m.py")], {})
    assert settings.source == str(inner / "pyproject.toml")
    assert "DYN401" not in settings.select and "DYN301" in settings.select


def test_no_paths_searches_from_cwd(project):
    write_pyproject(project, "[tool.dynlint]\nignore = ['DYN402']\n")
    assert "DYN402" not in load_settings([], {}).select and "DYN401" in load_settings([], {}).select


def test_select_ignore_extend_select_prefixes(project):
    write_pyproject(project, """
        [tool.dynlint]
        select = ["DYN1", "DYN3"]
        ignore = ["DYN10"]
        extend-select = ["DYN501", "DYN102"]
    """)
    # DYN102 is more specific than the ignored DYN10, so it stays (ruff's rule).
    assert load_settings([], {}).select == {"DYN102", "DYN301", "DYN302", "DYN303", "DYN501"}


def test_all_selector_and_equal_specificity_ignore_wins(project):
    write_pyproject(project, """
        [tool.dynlint]
        select = ["ALL"]
        ignore = ["DYN202"]
        extend-select = ["DYN202"]
    """)
    assert load_settings([], {}).select == frozenset(DEFAULT_CODES) - {"DYN202"}


def test_cli_select_replaces_config_select_and_cli_ignore_adds(project):
    write_pyproject(project, """
        [tool.dynlint]
        select = ["DYN1"]
        ignore = ["DYN101"]
    """)
    assert load_settings([], {"select": ["DYN2,DYN301"]}).select == {"DYN201", "DYN202", "DYN203", "DYN301"}
    assert load_settings([], {"ignore": ["DYN102", "DYN103"]}).select == {"DYN104", "DYN105"}
    assert load_settings([], {"extend_select": "DYN501"}).select == {"DYN102", "DYN103", "DYN104", "DYN105",
                                                                     "DYN501"}


def test_selectors_are_case_insensitive(project):
    assert load_settings([], {"select": ["dyn101"]}).select == {"DYN101"}


def test_dyn000_cannot_be_deselected(project):
    settings = load_settings([], {"select": ["DYN101"]})
    assert settings.enabled_codes("a.py") == {"DYN000", "DYN101"}


def test_per_file_ignores_globs(project):
    write_pyproject(project, """
        [tool.dynlint]
        [tool.dynlint.per-file-ignores]
        "__init__.py" = ["DYN1"]
        "tests/**/*.py" = ["DYN301"]
        "scripts/*" = ["ALL"]
    """)
    settings = load_settings([], {})
    assert settings.enabled_codes("pkg/__init__.py") == frozenset(DEFAULT_CODES) - {
        "DYN101", "DYN102", "DYN103", "DYN104", "DYN105"}
    assert "DYN301" not in settings.enabled_codes("tests/test_a.py")       # ** matches no directory too
    assert "DYN301" not in settings.enabled_codes("tests/unit/deep/test_b.py")
    assert "DYN301" in settings.enabled_codes("src/tests_like.py")
    assert settings.enabled_codes("scripts/nested/run.py") == {"DYN000"}   # like flake8/ruff, * crosses '/'
    assert settings.enabled_codes("pkg/model.py") == frozenset(DEFAULT_CODES)


def test_exclude_and_extend_exclude(project):
    write_pyproject(project, """
        [tool.dynlint]
        exclude = ["generated"]
        extend-exclude = ["*_pb2.py"]
    """)
    settings = load_settings([], {})
    assert settings.exclude == ("generated", "*_pb2.py")
    assert settings.is_excluded("src/generated")
    assert settings.is_excluded("src/generated/x.py")
    assert settings.is_excluded("api_pb2.py")
    assert not settings.is_excluded("src/model.py")
    # --exclude replaces the configured exclude; extend-exclude always adds.
    replaced = load_settings([], {"exclude": ["vendor/*"], "extend_exclude": ["old"]})
    assert replaced.exclude == ("vendor/*", "*_pb2.py", "old")


def test_extend_dynamic_ops(project):
    write_pyproject(project, """
        [tool.dynlint]
        extend-dynamic-ops = ["mypkg.ops.compact", "detectron2.layers.nms"]
    """)
    assert load_settings([], {}).extend_dynamic_ops == ("mypkg.ops.compact", "detectron2.layers.nms")


def test_snake_case_keys_are_accepted(project):
    write_pyproject(project, "[tool.dynlint]\nextend_select = ['DYN501']\nselect = ['DYN101']\n")
    assert load_settings([], {}).select == {"DYN101", "DYN501"}


def test_config_flag_overrides_discovery(project):
    write_pyproject(project, "[tool.dynlint]\nselect = ['DYN1']\n")
    other = project / "ci"
    other.mkdir()
    config = other / "dynlint.toml"
    config.write_text("select = ['DYN3']\nexclude = ['x']\n")
    settings = load_settings([], {"config": str(config)})
    assert settings.select == {"DYN301", "DYN302", "DYN303"}
    assert settings.root == str(other)
    assert settings.source == str(config)
    # A pyproject.toml given with --config uses its [tool.dynlint] table.
    write_pyproject(other, "[tool.dynlint]\nselect = ['DYN4']\n")
    assert load_settings([], {"config": str(other / "pyproject.toml")}).select == {"DYN401", "DYN402"}


@pytest.mark.parametrize("body, needles", [
    ("[tool.dynlint]\nselct = ['DYN1']\n", ["unknown key", "'selct'"]),
    ("[tool.dynlint]\nselect = ['DYN999']\n", ["unknown rule selector", "'DYN999'", "select"]),
    ("[tool.dynlint]\nignore = ['E501']\n", ["'E501'", "ignore"]),
    ("[tool.dynlint]\nselect = 'DYN101'\n", ["select", "must be a list of strings"]),
    ("[tool.dynlint]\nselect = [1, 2]\n", ["select", "must be a list of strings"]),
    ("[tool.dynlint]\nper-file-ignores = ['a']\n", ["per-file-ignores", "table"]),
    ("[tool.dynlint.per-file-ignores]\n'tests/*' = ['NOPE1']\n", ["'NOPE1'", "tests/*"]),
    ("[tool.dynlint]\nextend-dynamic-ops = ['compact']\n", ["extend-dynamic-ops", "'compact'"]),
    ("[tool.dynlint]\nselect = [\n", ["invalid TOML", "pyproject.toml"]),
    ("[tool]\ndynlint = 3\n", ["must be a table"]),
])
def test_bad_config_raises_usage_error_naming_the_problem(project, body, needles):
    (project / "pyproject.toml").write_text(body)
    with pytest.raises(UsageError) as info:
        load_settings([], {})
    message = str(info.value)
    assert "\n" not in message
    for needle in needles:
        assert needle in message


def test_unknown_cli_selector_names_the_flag(project):
    with pytest.raises(UsageError, match=r"'DYNX' in the command line ignore"):
        load_settings([], {"ignore": ["DYN101,DYNX"]})


def test_missing_config_file(project):
    with pytest.raises(UsageError, match="config file not found: nope.toml"):
        load_settings([], {"config": "nope.toml"})


def test_settings_stays_a_hashable_value():
    # Other modules (cache keys, process pools) rely on Settings being a frozen value.
    assert hash(Settings()) == hash(Settings())
    assert Settings().fingerprint() == Settings().fingerprint()
    assert Settings(select=frozenset({"DYN101"})).fingerprint() != Settings().fingerprint()


def test_opt_in_rules_are_enabled_only_by_their_full_code(project):
    # DYN204/DYN205/DYN501 are off by default and a prefix or ALL does not turn them on (flake8-bugbear's B9)
    write_pyproject(project, """
        [tool.dynlint]
        select = ["DYN2", "ALL"]
    """)
    assert not load_settings([], {}).select & frozenset(OPT_IN_CODES)
    write_pyproject(project, """
        [tool.dynlint]
        extend-select = ["DYN204"]
        ignore = ["DYN2"]
    """)
    # the full code is more specific than the ignored prefix: DYN204 stays, DYN201-203 go
    assert load_settings([], {}).select & {"DYN201", "DYN202", "DYN203", "DYN204", "DYN205"} == {"DYN204"}
    assert load_settings([], {"extend_select": "DYN205"}).select & frozenset(OPT_IN_CODES) == {"DYN204", "DYN205"}
    write_pyproject(project, """
        [tool.dynlint]
        select = ["DYN205"]
    """)
    assert load_settings([], {}).select == {"DYN205"}


@pytest.mark.parametrize("body", [
    '[tool.dynlint]\nselect = ["DYN1"]\n',
    '[ tool . "dynlint" ]\nselect = ["DYN1"]\n',
    'tool.dynlint.select = ["DYN1"]\n',
    '[tool]\ndynlint = { select = ["DYN1"] }\n',
    '[tool]\ndynlint.select = ["DYN1"]\n',
    'tool = { dynlint = { select = ["DYN1"] } }\n',
])
def test_every_toml_spelling_of_the_table_is_found(project, body):
    # a pyproject.toml whose text cannot hold the table is not parsed while searching; every spelling
    # of the table must still be read
    write_pyproject(project, body)
    settings = load_settings([str(project)], {})
    assert settings.source == str(project / "pyproject.toml")
    assert settings.select == {"DYN101", "DYN102", "DYN103", "DYN104", "DYN105"}


def test_a_pyproject_naming_the_package_dynlint_is_no_config(project):
    # the project's own pyproject (name and script called dynlint, no table) is skipped, like any without one
    write_pyproject(project, '[project]\nname = "dynlint"\n[project.scripts]\ndynlint = "dynlint.cli:main"\n'
                             '[tool.hatch.version]\npath = "dynlint/__init__.py"\n')
    settings = load_settings([str(project)], {})
    assert settings.source is None


def test_a_broken_pyproject_without_the_table_is_skipped_while_searching(project):
    # nothing in it can be dynlint's config: it is not parsed (a broken one with the table is an error)
    write_pyproject(project, "[project\nname = 'x'\n")
    assert load_settings([str(project)], {}).source is None
