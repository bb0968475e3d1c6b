"""`dynlint rule CODE|NAME` prints a rule's document; `dynlint rule --all` lists the catalogue."""

from __future__ import annotations

import json
import sys


def register(subparsers):
    p = subparsers.add_parser(
        "rule",
        help="explain a rule (code or name), or list all rules",
        description="Print a rule's document (e.g. `dynlint rule DYN101` or `dynlint rule boolean-mask-index`), "
                    "or list every rule with --all.",
    )
    p.add_argument("rule", nargs="?", metavar="CODE", help="rule code (any case) or rule name")
    p.add_argument("--all", action="store_true", help="list every rule: code, name and one-line summary")
    p.add_argument("--output-format", choices=("text", "json"), default="text", help="output format (default: text)")
    p.set_defaults(func=run)


def _record(info, doc_text: str | None) -> dict:
    return {
        "code": info.code,
        "name": info.name,
        "summary": info.summary,
        "scope": info.scope,
        "default": not info.opt_in,  # false: opt-in, reported only when selected by its code
        "url": info.url,
        "explanation": doc_text,
    }


def run(args) -> int:
    from dynlint.errors import UsageError
    from dynlint.codes import RULES
    from dynlint.ruledocs import RuleDocError, doc_text, resolve_code

    if args.all and args.rule:
        raise UsageError("give either a rule code or --all, not both")
    if args.all:
        infos = list(RULES.values())
        if args.output_format == "json":
            records = []
            for info in infos:
                try:
                    text = doc_text(info.code)
                except RuleDocError:
                    text = None
                records.append(_record(info, text))
            print(json.dumps(records, indent=2))
            return 0
        code_width = max(len(i.code) for i in infos)
        name_width = max(len(i.name) for i in infos)
        for info in infos:
            suffix = "  (opt-in)" if info.opt_in else ""
            print(f"{info.code:<{code_width}}  {info.name:<{name_width}}  {info.summary}{suffix}")
        return 0

    if not args.rule:
        raise UsageError("give a rule code (e.g. DYN101) or a rule name, or --all")
    info = resolve_code(args.rule)
    if info is None:
        raise UsageError(f"unknown rule {args.rule!r} (see `dynlint rule --all`)")
    try:
        text = doc_text(info.code)
    except RuleDocError as exc:
        print(f"dynlint: error: {exc}", file=sys.stderr)
        return 1
    if args.output_format == "json":
        print(json.dumps(_record(info, text), indent=2))
    else:
        sys.stdout.write(text if text.endswith("\n") else text + "\n")
    return 0
