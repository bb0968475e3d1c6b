"""`dynlint rule` (placeholder until implemented)."""


def register(subparsers):
    p = subparsers.add_parser("rule", help="(not implemented yet)")
    p.set_defaults(func=lambda args: print("dynlint rule: not implemented yet") or 2)
