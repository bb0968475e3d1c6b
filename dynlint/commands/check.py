"""`dynlint check` (placeholder until implemented)."""


def register(subparsers):
    p = subparsers.add_parser("check", help="(not implemented yet)")
    p.set_defaults(func=lambda args: print("dynlint check: not implemented yet") or 2)
