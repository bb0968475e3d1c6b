"""Effective settings for a check run.

``Settings`` is what the engine consumes; ``load_settings`` builds it from
``[tool.dynlint]`` in the nearest pyproject.toml (or ``--config FILE``) and the
CLI flags, which override the file.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Iterable, Mapping, Sequence

from dynlint.codes import DEFAULT_CODES, OPT_IN_CODES, expand_selector
from dynlint.errors import UsageError

# The results cache's directory name in the project root (also never walked by discovery).
CACHE_DIR_NAME = ".dynlint_cache"

# Rules enabled when the user selects nothing: every rule but the opt-in ones (DYN204, DYN205, DYN501).
DEFAULT_SELECT = frozenset(DEFAULT_CODES)

# Keys accepted in [tool.dynlint]; snake_case spellings are accepted as aliases.
LIST_KEYS = ("select", "ignore", "extend-select", "exclude", "extend-exclude", "extend-dynamic-ops")
TABLE_KEYS = ("per-file-ignores", "extend-per-file-ignores")
BOOL_KEYS = ("include-host",)
KNOWN_KEYS = LIST_KEYS + TABLE_KEYS + BOOL_KEYS

_QUALIFIED_NAME_RE = re.compile(r"[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)+")


@dataclass(frozen=True)
class Settings:
    select: frozenset[str] = DEFAULT_SELECT
    per_file_ignores: tuple[tuple[str, frozenset[str]], ...] = ()
    exclude: tuple[str, ...] = ()
    extend_dynamic_ops: tuple[str, ...] = ()   # fully qualified names, reported as DYN105
    include_host: bool = False                 # also report device hazards in host-only code
    root: str = "."                            # directory that globs are relative to
    source: str | None = field(default=None, compare=False)  # the pyproject.toml used, if any

    def enabled_codes(self, relpath: str | None = None) -> frozenset[str]:
        """Codes active for a file (``relpath`` relative to ``root``, '/'-separated)."""
        codes = self.select
        if relpath is not None:
            for pattern, ignored in self.per_file_ignores:
                if _glob_match(relpath, pattern):
                    codes = codes - ignored
        # An unreadable/unparsable file is always reported, like ruff's syntax
        # errors; `exclude` is the way to skip such files.
        return frozenset(codes | {"DYN000"})

    def is_excluded(self, relpath: str) -> bool:
        """Whether a discovered file or directory matches an ``exclude`` glob."""
        return any(_glob_match(relpath, pattern) for pattern in self.exclude)

    def fingerprint(self) -> str:
        """A stable string of everything that changes findings (for the cache key)."""
        return repr((sorted(self.select), self.per_file_ignores, self.extend_dynamic_ops))


# --- globs -------------------------------------------------------------------

@lru_cache(maxsize=512)
def _glob_regex(pattern: str) -> re.Pattern:
    """Translate a glob like ruff's/flake8's: ``*`` may cross '/', ``**/`` also matches no directory."""
    out = []
    i, n = 0, len(pattern)
    while i < n:
        char = pattern[i]
        if pattern.startswith("**/", i):
            out.append("(?:.*/)?")
            i += 3
            continue
        if char == "*":
            out.append(".*")
        elif char == "?":
            out.append("[^/]")
        elif char == "[":
            close = pattern.find("]", i + 2)
            if close == -1:
                out.append(re.escape(char))
            else:
                body = pattern[i + 1:close]
                if body.startswith("!"):
                    body = "^" + body[1:]
                out.append("[" + body.replace("\\", "\\\\") + "]")
                i = close
        else:
            out.append(re.escape(char))
        i += 1
    return re.compile("".join(out), re.DOTALL)


def _glob_match(relpath: str, pattern: str) -> bool:
    """Whether ``pattern`` matches ``relpath`` or one of its parent directories.

    A pattern without '/' also matches any single path component (``build``,
    ``__init__.py``, ``*_pb2.py``), like ruff's ``exclude`` and flake8's globs.
    """
    pattern = pattern.strip()
    if pattern.startswith("./"):
        pattern = pattern[2:]
    pattern = pattern.rstrip("/") or pattern
    regex = _glob_regex(pattern)
    parts = relpath.split("/")
    if "/" not in pattern:
        return any(regex.fullmatch(part) for part in parts)
    return any(regex.fullmatch("/".join(parts[:i])) for i in range(len(parts), 0, -1))


# --- rule selection ----------------------------------------------------------

def _expand(selector: str, where: str) -> list[str]:
    codes = expand_selector(selector)
    if not selector.strip() or not codes:
        raise UsageError(f"unknown rule selector {selector.strip()!r} in {where}")
    return codes


def _specificity(selector: str) -> int:
    selector = selector.strip().upper()
    return 0 if selector == "ALL" else len(selector)


def resolve_selection(layers: Iterable[tuple[list[str] | None, list[str], list[str], str]]) -> frozenset[str]:
    """Ruff's resolution: each layer (config, then CLI) is (select, extend_select, ignore, where).

    A layer with ``select`` starts from nothing, otherwise from the previous
    result; within a layer the more specific selector wins (``select = ["DYN"]``,
    ``ignore = ["DYN1"]``, ``extend-select = ["DYN101"]`` keeps DYN101), and at
    equal specificity ``ignore`` wins.  Opt-in rules are enabled only by their
    full code (``extend-select = ["DYN204"]``).
    """
    enabled = set(DEFAULT_SELECT)
    for select, extend_select, ignore, where in layers:
        if select is not None:
            enabled = set()
        actions = [(sel, True, f"{where} select") for sel in (select or [])]
        actions += [(sel, True, f"{where} extend-select") for sel in extend_select]
        actions += [(sel, False, f"{where} ignore") for sel in ignore]
        # Sort: less specific first; at a tie, enabling before ignoring so ignoring wins.
        actions.sort(key=lambda a: (_specificity(a[0]), not a[1]))
        for selector, enable, label in actions:
            codes = _expand(selector, label)
            if enable:
                # an opt-in rule (DYN204, DYN205, DYN501) is enabled only by its own code, never by a prefix or ALL
                codes = [c for c in codes if c not in OPT_IN_CODES or c == selector.strip().upper()]
                enabled.update(codes)
            else:
                enabled.difference_update(codes)
    return frozenset(enabled)


# --- pyproject.toml ------------------------------------------------------------

def _read_toml(path: str, *, searching: bool = False) -> dict:
    """The TOML at ``path``.  ``searching``: a pyproject.toml met while looking for the project's
    config; one that never says ``dynlint`` holds no ``[tool.dynlint]`` table and is not parsed
    (nor the TOML module imported: a warm-cache check is mostly start-up)."""
    try:
        with open(path, "rb") as handle:
            data = handle.read()
    except OSError as exc:
        raise UsageError(f"cannot read config {path}: {exc.strerror or exc}") from None
    if searching and not _may_hold_dynlint_table(data):
        return {}
    try:
        import tomllib
    except ModuleNotFoundError:  # Python < 3.11
        import tomli as tomllib
    import io

    try:
        return tomllib.load(io.BytesIO(data))
    except tomllib.TOMLDecodeError as exc:
        raise UsageError(f"invalid TOML in {path}: {exc}") from None


_TABLE_HINTS = (
    re.compile(rb"""(?m)^[ \t]*\[\[?[ \t]*tool[ \t]*\.[ \t]*["']?dynlint\b"""),  # [tool.dynlint], [tool."dynlint".x]
    re.compile(rb"""(?m)^[ \t]*tool[ \t]*\.[ \t]*["']?dynlint\b"""),  # tool.dynlint.select = [...] (dotted keys)
    re.compile(rb"""(?m)^[ \t]*tool[ \t]*="""),  # tool = { dynlint = {...} }
)
_TOOL_HEADER = re.compile(rb"""(?m)^[ \t]*\[[ \t]*tool[ \t]*\]""")
_DYNLINT_KEY = re.compile(rb"""(?m)^[ \t]*["']?dynlint["']?[ \t]*[.=]""")


def _may_hold_dynlint_table(data: bytes) -> bool:
    """Whether a pyproject.toml's text may hold a ``[tool.dynlint]`` table, in any TOML spelling
    (a header, dotted keys, a ``[tool]`` table with a ``dynlint`` key, an inline ``tool`` table).
    Never false for a file that holds one; true for some that do not (they are then parsed)."""
    if b"dynlint" not in data:
        return False
    if any(hint.search(data) for hint in _TABLE_HINTS):
        return True
    return bool(_TOOL_HEADER.search(data) and _DYNLINT_KEY.search(data))


def _tool_section(data: dict) -> dict | None:
    tool = data.get("tool")
    if not isinstance(tool, dict):
        return None
    section = tool.get("dynlint")
    return section


def find_pyproject(start: str) -> tuple[str, dict] | None:
    """The nearest pyproject.toml with a ``[tool.dynlint]`` table, from ``start`` upward."""
    directory = os.path.abspath(start)
    if not os.path.isdir(directory):
        directory = os.path.dirname(directory)
    while True:
        candidate = os.path.join(directory, "pyproject.toml")
        if os.path.isfile(candidate):
            section = _tool_section(_read_toml(candidate, searching=True))
            if section is not None:
                return candidate, section
        parent = os.path.dirname(directory)
        if parent == directory:
            return None
        directory = parent


def _string_list(value, where: str) -> list[str]:
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise UsageError(f"{where} must be a list of strings, got {_describe(value)}")
    return list(value)


def _describe(value) -> str:
    return f"{type(value).__name__} {value!r}" if not isinstance(value, (dict, list)) else type(value).__name__


def _normalise_section(section, path: str) -> dict:
    where = f"[tool.dynlint] in {path}"
    if not isinstance(section, dict):
        raise UsageError(f"{where} must be a table")
    normalised = {}
    unknown = []
    for key, value in section.items():
        canonical = key.replace("_", "-")
        if canonical not in KNOWN_KEYS:
            unknown.append(key)
            continue
        if canonical in LIST_KEYS:
            normalised[canonical] = _string_list(value, f"{canonical} {where}")
        elif canonical in BOOL_KEYS:
            if not isinstance(value, bool):
                raise UsageError(f"{canonical} {where} must be true or false, got {_describe(value)}")
            normalised[canonical] = value
        else:
            if not isinstance(value, dict):
                raise UsageError(f"{canonical} {where} must be a table of glob = [codes], got {_describe(value)}")
            normalised[canonical] = {
                glob: _string_list(codes, f"{canonical}.{glob!r} {where}") for glob, codes in value.items()
            }
    if unknown:
        raise UsageError(f"unknown key{'s' if len(unknown) > 1 else ''} {', '.join(map(repr, unknown))} in {where}"
                           f" (known: {', '.join(KNOWN_KEYS)})")
    return normalised


def split_codes(values: Sequence[str] | str | None) -> list[str] | None:
    """CLI values: repeated flags and/or comma-separated lists; None when not given."""
    if values is None:
        return None
    if isinstance(values, str):
        values = [values]
    return [item.strip() for value in values for item in value.split(",") if item.strip()]


def load_settings(paths: Sequence[str] = (), cli_overrides: Mapping | None = None) -> Settings:
    """Settings from the nearest ``[tool.dynlint]`` (or ``config``) with CLI overrides applied.

    ``cli_overrides`` keys (all optional; lists or comma-separated strings):
    ``select``, ``ignore``, ``extend_select``, ``exclude``, ``extend_exclude``,
    ``include_host`` (True to turn it on; None/False leaves the config's value)
    and ``config`` (a path to a pyproject.toml or a file holding a bare
    ``[tool.dynlint]``-style table).  Raises ``UsageError`` on any bad input.
    """
    cli = dict(cli_overrides or {})
    config_path = cli.get("config")
    if config_path:
        if not os.path.isfile(config_path):
            raise UsageError(f"config file not found: {config_path}")
        data = _read_toml(config_path)
        section = _tool_section(data)
        if section is None:
            # A pyproject.toml without the table means defaults; any other file
            # (e.g. dynlint.toml) holds the keys at top level.
            section = {} if os.path.basename(config_path) == "pyproject.toml" else data
        source = os.path.abspath(config_path)
    else:
        found = find_pyproject(paths[0] if paths and paths[0] != "-" else os.getcwd())
        source, section = found if found else (None, {})
    config = _normalise_section(section, source) if source else {}
    root = os.path.dirname(source) if source else os.getcwd()

    file_where = f"[tool.dynlint] of {source}"
    select = resolve_selection([
        (config.get("select"), config.get("extend-select", []), config.get("ignore", []), file_where),
        (split_codes(cli.get("select")), split_codes(cli.get("extend_select")) or [],
         split_codes(cli.get("ignore")) or [], "the command line"),
    ])

    per_file_ignores = []
    for key in TABLE_KEYS:
        for glob, selectors in config.get(key, {}).items():
            codes = frozenset(c for sel in selectors for c in _expand(sel, f"{key} {glob!r} of {source}"))
            per_file_ignores.append((glob, codes))

    cli_exclude = split_codes(cli.get("exclude"))
    exclude = cli_exclude if cli_exclude is not None else config.get("exclude", [])
    exclude = [*exclude, *config.get("extend-exclude", []), *(split_codes(cli.get("extend_exclude")) or [])]

    ops = config.get("extend-dynamic-ops", [])
    bad_ops = [op for op in ops if not _QUALIFIED_NAME_RE.fullmatch(op)]
    if bad_ops:
        raise UsageError(f"extend-dynamic-ops in {file_where} needs fully qualified names like 'mypkg.ops.my_op',"
                           f" got {', '.join(map(repr, bad_ops))}")

    return Settings(
        select=select,
        per_file_ignores=tuple(per_file_ignores),
        exclude=tuple(exclude),
        extend_dynamic_ops=tuple(ops),
        include_host=bool(cli.get("include_host")) or config.get("include-host", False),
        root=root,
        source=source,
    )
