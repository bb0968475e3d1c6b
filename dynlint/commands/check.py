"""`dynlint check [PATH ...]`: find dynamic-shape hazards and report them.

The engine (``dynlint.runner`` over ``dynlint.api``) does the checking; this
module parses the command line and reports results file by file as they
arrive rather than collected.  Exit codes: 0 clean, 1 findings, 2 usage or
configuration error.
"""

from __future__ import annotations

import argparse
import sys
from typing import Iterable

from dynlint.config import Settings
from dynlint.diagnostics import FileResult
from dynlint.output import FORMATS, STATISTICS_FORMATS
from dynlint.discovery import STDIN



def _jobs(value: str) -> int:
    try:
        jobs = int(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number of worker processes, got {value!r}") from None
    if jobs < 0:
        raise argparse.ArgumentTypeError(f"must be 0 (one per CPU) or more, got {jobs}")
    return jobs


def add_selection_arguments(parser: argparse.ArgumentParser) -> None:
    """The config-overriding flags (shared with commands that check files)."""
    group = parser.add_argument_group("rule selection and files (override [tool.dynlint])")
    group.add_argument("--select", action="append", metavar="CODES",
                       help="only these rules (comma-separated codes or prefixes: DYN101, DYN1, ALL)")
    group.add_argument("--extend-select", action="append", metavar="CODES", help="add rules to the selection")
    group.add_argument("--ignore", action="append", metavar="CODES", help="disable rules")
    group.add_argument("--exclude", action="append", metavar="GLOBS",
                       help="globs of files/directories to skip (replaces the config's exclude)")
    group.add_argument("--extend-exclude", action="append", metavar="GLOBS", help="globs to skip, in addition")
    group.add_argument("--include-host", action="store_true", default=None,
                       help="also report device hazards in code that only runs on the host (datasets, collate "
                            "functions, module construction, eager-only code); see the README's 'Regions'")
    group.add_argument("--config", metavar="FILE",
                       help="use this pyproject.toml (or a file with the [tool.dynlint] keys at top level)")


def selection_overrides(args: argparse.Namespace) -> dict:
    return {key: getattr(args, key, None)
            for key in ("select", "extend_select", "ignore", "exclude", "extend_exclude", "config", "include_host")}


def register(subparsers) -> None:
    parser = subparsers.add_parser(
        "check", help="find dynamic shapes (exit 1 when findings remain)",
        description="Find code that gives tensors data-dependent shapes or makes graph compilers recompile.",
    )
    add_check_arguments(parser)
    parser.set_defaults(func=run)
    from dynlint.commands.fix import register_fix_command  # import-light (no libcst)

    register_fix_command(subparsers, add_check_arguments, run)


def add_check_arguments(parser: argparse.ArgumentParser, *, fix_flag: bool = True) -> None:
    """Every option of ``dynlint check`` (``dynlint fix`` has them all but ``--fix``, which it implies)."""
    from dynlint.commands.fix import add_fix_arguments

    parser.add_argument("paths", nargs="*", metavar="PATH",
                        help="files or directories to check (default: .); '-' reads stdin")
    add_selection_arguments(parser)
    parser.add_argument("--output-format", choices=FORMATS, default="full",
                        help="how to print findings (default: full)")
    parser.add_argument("-o", "--output-file", metavar="FILE", help="write the report to FILE instead of stdout")
    parser.add_argument("--statistics", action="store_true",
                        help="print the number of findings per rule (output formats full, concise, json)")
    parser.add_argument("--exit-zero", action="store_true", help="exit 0 even when findings remain")
    parser.add_argument("-q", "--quiet", action="store_true", help="print findings only, no summary line")
    parser.add_argument("--stdin-filename", metavar="NAME",
                        help="the name of the file read from stdin (for output and per-file-ignores)")
    parser.add_argument("-j", "--jobs", type=_jobs, default=0, metavar="N",
                        help="worker processes (default 0: one per CPU; few files are checked in-process)")
    parser.add_argument("--no-cache", action="store_true", help="neither read nor write the results cache")
    parser.add_argument("--cache-dir", metavar="DIR",
                        help="where to keep the results cache (default: .dynlint_cache in the project root)")
    add_fix_arguments(parser, fix_flag=fix_flag)


def _discover(paths: list[str], settings: Settings) -> list[tuple[str, str]]:
    """(path, relpath) of every file to check; warns (as ruff does) when there is none."""
    from dynlint.discovery import iter_source_files, warn

    files = [(f.path, f.relpath) for f in iter_source_files(paths, settings)]
    if not files:
        warn("no Python files found under the given path(s)")
    return files


def run(args: argparse.Namespace) -> int:
    from dynlint.errors import UsageError
    from dynlint.config import load_settings
    from dynlint.discovery import relative_to_root
    from dynlint.output import make_reporter
    from dynlint.api import check_bytes
    from dynlint.cache import open_cache
    from dynlint.runner import Progress

    paths = args.paths or ["."]
    if args.statistics and args.output_format not in STATISTICS_FORMATS:
        raise UsageError(f"--statistics prints a table: use --output-format {', '.join(STATISTICS_FORMATS)}, "
                         f"not {args.output_format}")
    if STDIN in paths and len(paths) > 1:
        raise UsageError("'-' (stdin) cannot be combined with other paths")
    config_anchor = [args.stdin_filename] if paths == [STDIN] and args.stdin_filename else paths
    settings = load_settings(config_anchor, selection_overrides(args))
    from dynlint.commands.fix import run_fix, wants_fix

    if wants_fix(args):  # --fix / --diff / --add-noqa, and `dynlint fix`
        if paths == [STDIN]:
            relpath = relative_to_root(args.stdin_filename, settings.root) if args.stdin_filename else STDIN
            return run_fix(args, [(STDIN, relpath)], settings)
        return run_fix(args, _discover(paths, settings), settings)

    progress = None
    if paths == [STDIN]:
        name = args.stdin_filename or STDIN
        relpath = relative_to_root(name, settings.root) if args.stdin_filename else STDIN
        results: Iterable[FileResult] = (check_bytes(sys.stdin.buffer.read(), name, relpath, settings) for _ in [0])
    else:
        # Validates every path before any output is written.
        from dynlint.runner import iter_results as run_files

        files = _discover(paths, settings)
        progress = Progress.for_run(len(files))
        results = run_files(files, settings, args.jobs, open_cache(args.cache_dir, settings, enabled=not args.no_cache),
                            progress=progress)

    stream = sys.stdout
    if args.output_file:
        try:
            stream = open(args.output_file, "w", encoding="utf-8")
        except OSError as exc:
            raise UsageError(f"cannot write {args.output_file}: {exc.strerror or exc}") from None
    elif hasattr(sys.stdout, "reconfigure"):
        # Source lines may hold characters the terminal's encoding lacks.
        sys.stdout.reconfigure(errors="backslashreplace")

    try:
        reporter = make_reporter(args.output_format, stream, settings, statistics=args.statistics, quiet=args.quiet,
                                 unsafe_fixes=args.unsafe_fixes)
        reporter.start()
        for result in results:
            if progress is not None:
                progress.clear()
            reporter.add(result)
        if progress is not None:
            progress.clear()
        reporter.finish()
    finally:
        if stream is not sys.stdout:
            stream.close()
    return 0 if args.exit_zero or reporter.total == 0 else 1
