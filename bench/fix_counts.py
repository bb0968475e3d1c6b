"""How many fixes `dynlint fix` applies on real code, safe and --unsafe-fixes, against a baseline commit.

    python bench/fix_counts.py /work/corpus --baseline bcdc2f0
    python bench/fix_counts.py DIR [DIR ...] [--baseline REV] [--list safe|unsafe|all]

For the working tree and (optionally) ``--baseline`` (a commit whose
``dynlint/`` is exported with ``git archive`` into a temporary directory), it
runs ``dynlint.fixer.fix_file(..., write=False)`` on every ``.py`` file under
the given directories, in a separate process per tree and mode, and prints:
fixes applied, files changed, fixes that could not be placed (warnings),
files left unchanged with DYN000, and the per-file comparisons the fixer
promises: safe mode applies no fewer fixes than the baseline in any file, and
--unsafe-fixes no fewer than safe mode in any file.  ``--list safe`` (or
``unsafe``, ``all``) also prints, for the working tree, every fix applied in
that mode (file, line, code; safe fixes are those of safe mode, unsafe ones
those only --unsafe-fixes applies) and a count per rule.  Nothing is written.
Exit status 1 when a promise is broken.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tarfile
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

# Runs in a child process with PYTHONPATH at one tree; prints one JSON object.
_CHILD = r"""
import json, os, sys
from dynlint.fixer import fix_file
roots, unsafe = sys.argv[1:-1], sys.argv[-1] == "unsafe"
out = {}
for root in roots:
    for directory, dirs, files in os.walk(root):
        dirs.sort()
        for name in sorted(files):
            if not name.endswith(".py"):
                continue
            path = os.path.join(directory, name)
            result = fix_file(path, unsafe=unsafe, write=False)
            applied = [[f.code, f.line] for f in result.applied]
            skipped = len(getattr(result, "skipped", []))
            dyn000 = any(f.code == "DYN000" and "cannot fix" in f.message for f in result.remaining)
            if applied or skipped or dyn000:
                out[path] = {"applied": applied, "skipped": skipped, "dyn000": dyn000}
print(json.dumps(out))
"""


def export(revision: str, into: str) -> str:
    archive = subprocess.run(["git", "-C", str(ROOT), "archive", revision, "dynlint"], check=True,
                             capture_output=True).stdout
    target = os.path.join(into, revision)
    os.makedirs(target)
    with tarfile.open(fileobj=__import__("io").BytesIO(archive)) as tar:
        tar.extractall(target)
    return target


def measure(tree: str, roots: list[str], unsafe: bool) -> tuple[dict, float]:
    env = {**os.environ, "PYTHONPATH": tree}
    start = time.perf_counter()
    proc = subprocess.run([sys.executable, "-c", _CHILD, *roots, "unsafe" if unsafe else "safe"],
                          capture_output=True, text=True, env=env, cwd=tempfile.gettempdir())
    if proc.returncode:
        raise SystemExit(f"fix run failed for {tree}:\n{proc.stderr[-3000:]}")
    return json.loads(proc.stdout), time.perf_counter() - start


def summary(results: dict) -> tuple[int, int, int, int]:
    applied = sum(len(r["applied"]) for r in results.values())
    files = sum(1 for r in results.values() if r["applied"])
    skipped = sum(r["skipped"] for r in results.values())
    dyn000 = sum(1 for r in results.values() if r["dyn000"])
    return applied, files, skipped, dyn000


def fewer(a: dict, b: dict) -> list[str]:
    """Files where b applies fewer fixes than a."""
    return sorted(p for p in set(a) | set(b)
                  if len(b.get(p, {"applied": []})["applied"]) < len(a.get(p, {"applied": []})["applied"]))


def listed(safe: dict, unsafe: dict, which: str) -> list[tuple[str, int, str, str]]:
    """(path, line, code, "safe"/"unsafe") of the fixes to list: safe mode's, and those only
    --unsafe-fixes applies (per file and code, the applications beyond safe mode's)."""
    rows = []
    for path in sorted(set(safe) | set(unsafe)):
        safe_fixes = [tuple(f) for f in safe.get(path, {"applied": []})["applied"]]
        if which in ("safe", "all"):
            rows.extend((path, line, code, "safe") for code, line in safe_fixes)
        if which in ("unsafe", "all"):
            remaining = list(safe_fixes)
            for code, line in (tuple(f) for f in unsafe.get(path, {"applied": []})["applied"]):
                if (code, line) in remaining:
                    remaining.remove((code, line))
                else:
                    rows.append((path, line, code, "unsafe"))
    return sorted(rows, key=lambda r: (r[0], r[1], r[2], r[3]))


def print_list(safe: dict, unsafe: dict, which: str, roots: list[str]) -> None:
    rows = listed(safe, unsafe, which)
    counts: dict[tuple[str, str], int] = {}
    for path, line, code, kind in rows:
        shown = next((os.path.relpath(path, os.path.dirname(r)) for r in roots if path.startswith(r + os.sep)), path)
        print(f"  {kind:6s} {code} {shown}:{line}")
        counts[(code, kind)] = counts.get((code, kind), 0) + 1
    print("per rule: " + ", ".join(f"{code} {kind} {n}" for (code, kind), n in sorted(counts.items())))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("roots", nargs="+", help="directories of real code (e.g. unzipped wheels)")
    parser.add_argument("--baseline", help="git revision to compare with (its dynlint/ is exported)")
    parser.add_argument("--list", choices=("safe", "unsafe", "all"),
                        help="print the working tree's fixes of that mode, one per line, and a count per rule")
    args = parser.parse_args(argv)
    roots = [os.path.abspath(r) for r in args.roots]
    files = sum(1 for r in roots for _, _, names in os.walk(r) for n in names if n.endswith(".py"))
    head = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "--short", "HEAD"], capture_output=True,
                          text=True).stdout.strip()
    names = [n for r in roots for n in (sorted(d for d in os.listdir(r) if not d.startswith(("_", ".")))
                                         if len(roots) == 1 else [os.path.basename(r)])]
    print(f"corpus: {', '.join(names)}: {files} files")
    with tempfile.TemporaryDirectory() as scratch:
        trees = [(f"working tree ({head})", str(ROOT))]
        if args.baseline:
            trees.insert(0, (f"baseline {args.baseline}", export(args.baseline, scratch)))
        runs: dict[tuple[str, str], dict] = {}
        print(f"{'':28s} {'mode':7s} {'applied':>8s} {'files':>6s} {'not placed':>11s} {'DYN000':>7s} {'time':>7s}")
        for label, tree in trees:
            for mode in ("safe", "unsafe"):
                results, took = measure(tree, roots, mode == "unsafe")
                runs[(label, mode)] = results
                applied, changed, skipped, dyn000 = summary(results)
                print(f"{label:28s} {mode:7s} {applied:8d} {changed:6d} {skipped:11d} {dyn000:7d} {took:6.1f}s")
    broken = 0
    current = trees[-1][0]
    if args.list:
        print_list(runs[(current, "safe")], runs[(current, "unsafe")], args.list, roots)
    checks = [(f"{current}: --unsafe-fixes applies fewer than safe mode", runs[(current, "safe")],
               runs[(current, "unsafe")])]
    if args.baseline:
        base = trees[0][0]
        checks.append((f"{current}: safe mode applies fewer than {base}", runs[(base, "safe")],
                       runs[(current, "safe")]))
    for title, a, b in checks:
        worse = fewer(a, b)
        print(f"{title}: {len(worse)} files" + "".join(f"\n    {p}" for p in worse))
        broken += bool(worse)
    return 1 if broken else 0


if __name__ == "__main__":
    sys.exit(main())
