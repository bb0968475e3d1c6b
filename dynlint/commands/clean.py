"""`dynlint clean [PATH ...]`: remove the `.dynlint_cache` directories under the paths."""

from __future__ import annotations

import os
import shutil
import sys

CACHE_DIR_NAME = ".dynlint_cache"


def register(subparsers) -> None:
    parser = subparsers.add_parser("clean", help=f"remove {CACHE_DIR_NAME} directories",
                                   description=f"Remove every {CACHE_DIR_NAME} directory under the paths.")
    parser.add_argument("paths", nargs="*", metavar="PATH", help="directories to clean (default: .)")
    parser.add_argument("-q", "--quiet", action="store_true", help="do not list what was removed")
    parser.add_argument("--cache-dir", metavar="DIR", action="append", default=[],
                        help="also remove this cache directory (one given to `dynlint check --cache-dir`)")
    parser.set_defaults(func=run)


def find_cache_dirs(top: str) -> list[str]:
    """Cache directories under ``top`` (symlinks are not followed, so nothing outside is touched)."""
    from dynlint.discovery import SKIPPED_DIR_NAMES

    # Virtualenvs and VCS metadata hold no caches of ours and can be huge.
    not_walked = SKIPPED_DIR_NAMES - {CACHE_DIR_NAME}
    found = []
    if os.path.basename(os.path.abspath(top)) == CACHE_DIR_NAME:
        return [top]
    for directory, subdirs, _ in os.walk(top):
        subdirs.sort()
        if CACHE_DIR_NAME in subdirs:
            found.append(os.path.normpath(os.path.join(directory, CACHE_DIR_NAME)))
        subdirs[:] = [d for d in subdirs if d != CACHE_DIR_NAME and d not in not_walked]
    return found


def run(args) -> int:
    from dynlint.cache import is_dynlint_cache
    from dynlint.errors import UsageError

    paths = args.paths or (["."] if not args.cache_dir else [])
    missing = [p for p in paths if not os.path.isdir(p)]
    if missing:
        raise UsageError(f"not a directory: {', '.join(missing)}")
    # Only a directory our cache tagged is removed: a mistyped --cache-dir must not delete user data.
    foreign = [d for d in args.cache_dir if os.path.isdir(d) and not is_dynlint_cache(d)]
    if foreign:
        raise UsageError(f"not a dynlint cache (no dynlint CACHEDIR.TAG): {', '.join(foreign)}")
    caches = [d for d in args.cache_dir if os.path.isdir(d)]
    failed = False
    for cache in caches + [c for top in paths for c in find_cache_dirs(top)]:
        try:
            if os.path.islink(cache):
                os.unlink(cache)
            else:
                shutil.rmtree(cache)
        except OSError as exc:
            print(f"dynlint: warning: cannot remove {cache}: {exc.strerror or exc}", file=sys.stderr)
            failed = True
            continue
        if not args.quiet:
            print(f"Removed {cache}")
    return 1 if failed else 0
