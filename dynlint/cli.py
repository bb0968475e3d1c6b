"""Command-line entry point: ``dynlint <command> ...`` and ``python -m dynlint``.

Each command lives in ``dynlint/commands/<name>.py`` and exposes
``register(subparsers)`` (adds its parser, setting ``func``).  Command modules
must stay import-light (no torch, no libcst at import time).
"""

from __future__ import annotations

import argparse
import importlib
import sys

from dynlint import __version__
from dynlint.errors import UsageError  # noqa: F401 - re-exported for callers of the old location

#: command -> the module of ``dynlint/commands`` that registers it (``fix`` is registered by ``check``)
_MODULE_OF = {"check": "check", "fix": "check", "rule": "rule", "clean": "clean", "buckets": "buckets",
              "confirm": "confirm"}
COMMAND_MODULES = tuple(dict.fromkeys(_MODULE_OF.values()))


class _Parser(argparse.ArgumentParser):
    def error(self, message):  # argparse exits 2 too; keep its one-line style
        self.print_usage(sys.stderr)
        self.exit(2, f"dynlint: error: {message}\n")


def build_parser(command: str | None = None) -> argparse.ArgumentParser:
    """The parser of every command, or (``command``: the one the command line names) only of the
    module that registers it: a warm-cache check should not import the others."""
    parser = _Parser(prog="dynlint", description="Find, fix and confirm dynamic shapes in PyTorch code.")
    parser.add_argument("--version", action="version", version=f"dynlint {__version__}")
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    names = (_MODULE_OF[command],) if command in _MODULE_OF else COMMAND_MODULES
    for name in names:
        importlib.import_module(f"dynlint.commands.{name}").register(subparsers)
    return parser


def main(argv: list[str] | None = None) -> int:
    words = sys.argv[1:] if argv is None else argv
    parser = build_parser(words[0] if words else None)
    args = parser.parse_args(argv)
    if not getattr(args, "func", None):
        parser.print_help(sys.stderr)
        return 2
    try:
        return int(args.func(args) or 0)
    except UsageError as exc:
        print(f"dynlint: error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("dynlint: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        return 1


def console_main() -> None:
    """The ``dynlint`` command (and ``python -m dynlint``): ``main()``, then, after a check, the
    output flushed and the process ended with ``os._exit``.  The check's parsed trees are garbage
    by then; freeing them object by object (as interpreter exit does) took about 5% of a check
    (timm, -j 1).  Commands that imported torch or left child processes exit normally (their
    exit handlers must run)."""
    import os

    from dynlint import runner

    runner.KEEP_UNTIL_EXIT = []
    code = main()
    processes = sys.modules.get("multiprocessing")
    if not runner.KEEP_UNTIL_EXIT or "torch" in sys.modules or (processes and processes.active_children()):
        sys.exit(code)
    try:
        sys.stdout.flush()
        sys.stderr.flush()
    except (BrokenPipeError, OSError):
        code = code or 1
    os._exit(code)


if __name__ == "__main__":
    console_main()
