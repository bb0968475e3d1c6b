"""`dynlint confirm` (placeholder until implemented)."""


def register(subparsers):
    p = subparsers.add_parser("confirm", help="(not implemented yet)")
    p.set_defaults(func=lambda args: print("dynlint confirm: not implemented yet") or 2)
