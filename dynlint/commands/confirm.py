"""`dynlint confirm SCRIPT [-- ARGS]`: run a script under instrumentation, match runtime events with findings.

Import-light on purpose: torch is imported only when the script is run.
Exit codes: 0 the script ran (whatever was found), 1 the script raised or exited
non-zero (the report then says the run failed and clears nothing), 2 usage errors
(missing script, no torch, a bad [tool.dynlint] table).
"""

from __future__ import annotations

import argparse
import os
import sys


def register(subparsers) -> None:
    parser = subparsers.add_parser(
        "confirm", help="run a script and confirm findings with real graph breaks and recompiles",
        description="Run SCRIPT with torch.compile instrumentation, then list static findings confirmed at runtime, "
                    "findings not observed, and runtime events the static rules missed.",
    )
    parser.add_argument("script", metavar="SCRIPT", help="the Python script to run")
    parser.add_argument("script_args", nargs="*", metavar="ARGS",
                        help="arguments for the script; put them after '--' (dynlint confirm train.py -- --epochs 1)")
    parser.add_argument("--compile", action="store_true",
                        help="wrap the script's top-level nn.Module calls in torch.compile(backend='eager')")
    parser.add_argument("--output-format", choices=("text", "json"), default="text", help="report format")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from dynlint.errors import UsageError

    script = args.script
    if not os.path.isfile(script):
        raise UsageError(f"no such script: {script}")
    script_args = list(args.script_args)
    try:
        import torch  # noqa: F401
    except ImportError:
        raise UsageError("dynlint confirm needs torch (pip install dynlint[runtime])") from None
    import runpy

    from dynlint.config import load_settings
    from dynlint.runtime.confirm_session import confirm

    script_path = os.path.abspath(script)
    settings = load_settings([script_path])     # the project's [tool.dynlint]; a bad one is a usage error
    saved_argv, saved_path = sys.argv[:], sys.path[:]
    sys.argv = [script] + script_args
    sys.path.insert(0, os.path.dirname(script_path))
    failure = None
    # The report goes to stdout; the script's own prints would mix into JSON, so send them to stderr then.
    saved_stdout = sys.stdout
    if args.output_format == "json":
        sys.stdout = sys.stderr
    try:
        with confirm(paths=[script_path], compile_modules=args.compile, settings=settings) as session:
            try:
                runpy.run_path(script_path, run_name="__main__")
            except SystemExit as exc:
                if exc.code not in (None, 0):
                    failure = f"script exited with status {exc.code}"
            except KeyboardInterrupt:
                raise
            except BaseException as exc:  # the user's script failing is reported, not re-raised
                failure = f"script raised {type(exc).__name__}: {_one_line(exc)}"
            if failure:
                session.mark_failed(failure)
    finally:
        sys.stdout = saved_stdout
        sys.argv, sys.path[:] = saved_argv, saved_path
    session.report(output_format=args.output_format)
    if failure:
        print(f"dynlint: {failure}", file=sys.stderr)
        return 1
    return 0


def _one_line(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return text[0] if text else ""
