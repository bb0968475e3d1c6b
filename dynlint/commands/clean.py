"""`dynlint clean` (placeholder until implemented)."""


def register(subparsers):
    p = subparsers.add_parser("clean", help="(not implemented yet)")
    p.set_defaults(func=lambda args: print("dynlint clean: not implemented yet") or 2)
