"""`dynlint buckets` (placeholder until implemented)."""


def register(subparsers):
    p = subparsers.add_parser("buckets", help="(not implemented yet)")
    p.set_defaults(func=lambda args: print("dynlint buckets: not implemented yet") or 2)
