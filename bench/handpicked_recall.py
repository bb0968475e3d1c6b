"""Recall of the current checkout on tensor hazards picked by hand in code nobody here wrote.

    python bench/handpicked_recall.py                  # every package of the corpus
    python bench/handpicked_recall.py --group held-out # the figures issue 9's target is judged on
    python bench/handpicked_recall.py --package monai  # one package
    python bench/handpicked_recall.py --draw monai     # the files of a package in the order they were read

The hazards are in ``bench/data/handpicked_hazards.json``: lines that break the
graph or sync under torch.compile / XLA / Gaudi because of tensor data, found by
reading randomly drawn model, loss and post-processing files of the packages of
``bench/corpus.py`` without looking at dynlint's output (the file says how). This
script runs ``dynlint check --output-format json --no-cache --include-host`` of
this checkout on each package directory (without ``--include-host`` when the
checkout has no such flag, and says so) and counts a hazard as flagged when a
DYN1xx/DYN2xx/DYN3xx finding's line range meets the line range of the innermost
statement holding the hazard line (for a compound statement: its header only).

It prints recall per package and per group (pooled over hazards, and the mean of
the packages' recalls), per category, for the compiled step and training step
against host-only code, and lists every miss. Last, the size of the default report
(no ``--include-host``) per package, by region when dynlint reports regions.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import re
import sys
from collections import Counter, defaultdict

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import corpus  # noqa: E402
import corpus_findings as cf  # noqa: E402

sys.path.insert(0, cf.REPO)
from dynlint.discovery import SKIPPED_DIR_NAMES  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
HAZARDS = os.path.join(HERE, "data", "handpicked_hazards.json")

SEED = 9  # issue 9
SKIP_DIRS = {"tests", "test", "testing", "docs", "examples", "extension_templates", ".mim", "benchmarks", "scripts"}
# and what dynlint itself never walks into (build output: botorch's wheel ships build/lib/ copies of its modules)
SKIP_DIRS |= SKIPPED_DIR_NAMES
CANDIDATE_PATH = re.compile(r"loss|post_?process|nms|decod|assign|train|infer|predict|head")

CATEGORIES = {
    "mask-index": "a boolean-mask read: x[m], x[m] op= v, x[m] = y[m], a mask inside an index",
    "nonzero": "nonzero, argwhere, one-argument torch.where",
    "dynamic-op": "another op with a data-dependent output size: unique, masked_select, bincount, nms, ...",
    "item": "Tensor.item()",
    "tolist": "Tensor.tolist()",
    "python-scalar": "int()/float()/bool() of a tensor, a tensor used as a Python index or built into a tensor from 0-d tensors",
    "tensor-branch": "if/while/and/or/not/in/ternary (or builtin min/max/sorted) deciding on tensor values",
    "data-size": "a size, count, range or slice bound taken from tensor values",
    "interpolate-size": "F.interpolate / F.pad with tensor sizes",
}
REGIONS = ("compiled", "training-step", "host")


# ------------------------------------------------------------------ the draw
def candidate_files(package_dir: str) -> list[str]:
    """Model, loss, post-processing and training files of a package (sorted relpaths)."""
    out = []
    for root, dirs, names in os.walk(package_dir):
        dirs[:] = sorted(d for d in dirs if d not in SKIP_DIRS)
        for name in sorted(names):
            if not name.endswith(".py") or name.startswith("test_"):
                continue
            path = os.path.join(root, name)
            relpath = os.path.relpath(path, package_dir).replace(os.sep, "/")
            with open(path, encoding="utf-8", errors="replace") as handle:
                text = handle.read()
            if "torch" not in text:
                continue
            if "def forward(" in text or CANDIDATE_PATH.search(relpath.lower()):
                out.append(relpath)
    return out


def draw_files(package: corpus.Package, dest: str = corpus.DEFAULT_DEST, seed: int = SEED) -> list[str]:
    files = candidate_files(corpus.package_dir(package, dest))
    random.Random(f"{seed}:{package.name}").shuffle(files)
    return files


# ------------------------------------------------------------------ recall
def load_hazards(path: str = HAZARDS) -> list[dict]:
    with open(path, encoding="utf-8") as handle:
        return json.load(handle)["hazards"]


def hazard_range(package_dir: str, hazard: dict) -> tuple[int, int]:
    path = os.path.join(package_dir, hazard["path"])
    tree = cf.parse(path)
    if tree is None:
        return hazard["line"], hazard["line"]
    return cf.statement_range(tree, hazard["line"])


def check_snippet(package_dir: str, hazard: dict) -> str | None:
    """A warning when the pinned source no longer has the snippet at that line."""
    path = os.path.join(package_dir, hazard["path"])
    if not os.path.isfile(path):
        return f"missing file {hazard['path']}"
    if cf.source_line(path, hazard["line"]) != hazard["snippet"]:
        return f"{hazard['path']}:{hazard['line']} no longer reads {hazard['snippet']!r}"
    return None


def _pct(hit: int, total: int) -> str:
    return f"{hit:3d}/{total:<3d} {100 * hit / total:5.1f}%" if total else "   -/0        "


def report(packages: list[corpus.Package], dest: str) -> int:
    hazards = load_hazards()
    chosen = {p.name for p in packages}
    hazards = [h for h in hazards if h["package"] in chosen]
    print(f"dynlint: {cf.dynlint_version()} (this checkout); hazards: {len(hazards)} in "
          f"{len({h['package'] for h in hazards})} packages")
    results = []  # (hazard, flagged findings)
    default_counts: dict[str, Counter] = {}
    include_host_used = True
    for package in packages:
        directory = corpus.ensure(package, dest)
        mine = [h for h in hazards if h["package"] == package.name]
        findings, used = cf.run_dynlint(directory, include_host=True)
        include_host_used &= used
        by_file = defaultdict(list)
        for finding in findings:
            by_file[finding.relpath].append(finding)
        for hazard in mine:
            warning = check_snippet(directory, hazard)
            if warning:
                print(f"warning: {package.name}: {warning}")
            start, end = hazard_range(directory, hazard)
            results.append((hazard, cf.flagged_by(by_file[hazard["path"]], start, end)))
        default, _ = cf.run_dynlint(directory, include_host=False)
        default_counts[package.name] = Counter(f.region or "(no region)" for f in default)
        default_counts[package.name]["DYN1-3xx"] = sum(1 for f in default if cf.HAZARD_CODE.match(f.code))
    if not include_host_used:
        print("note: this checkout's `dynlint check` has no --include-host; the default report was used")
    print()
    _print_recall(results, packages)
    _print_misses(results)
    _print_hidden(results)
    _print_default(default_counts, packages)
    return 0


def _print_recall(results, packages) -> None:
    def tally(rows):
        return sum(1 for _, found in rows if found), len(rows)

    print("recall per package (a hazard is flagged when a DYN1xx/2xx/3xx finding meets its statement)")
    print(f"  {'package':22} {'group':9} {'all':>15}  {'compiled+training':>17}  {'host':>15}")
    by_group = defaultdict(list)
    for package in packages:
        rows = [r for r in results if r[0]["package"] == package.name]
        if not rows:
            continue
        by_group[package.group].append(rows)
        device = [r for r in rows if r[0]["region"] != "host"]
        host = [r for r in rows if r[0]["region"] == "host"]
        print(f"  {package.name:22} {package.group:9} {_pct(*tally(rows)):>15}  {_pct(*tally(device)):>17}  "
              f"{_pct(*tally(host)):>15}")
    print()
    print("recall per group (pooled over hazards; macro = mean of the packages' recalls)")
    for group in corpus.GROUPS:
        package_rows = by_group.get(group)
        if not package_rows:
            continue
        rows = [r for block in package_rows for r in block]
        device = [r for r in rows if r[0]["region"] != "host"]
        host = [r for r in rows if r[0]["region"] == "host"]
        macro = sum(tally(block)[0] / tally(block)[1] for block in package_rows) / len(package_rows)
        print(f"  {group:9} all {_pct(*tally(rows))}   compiled+training {_pct(*tally(device))}   "
              f"host {_pct(*tally(host))}   macro {100 * macro:5.1f}%")
    print()
    print("recall per category and region (all packages shown above)")
    for key, label in (("category", "category"), ("region", "region")):
        groups = defaultdict(list)
        for row in results:
            groups[row[0][key]].append(row)
        for name in sorted(groups):
            held = [r for r in groups[name] if r[0]["group"] == "held-out"]
            dev = [r for r in groups[name] if r[0]["group"] == "dev"]
            print(f"  {label} {name:16} held-out {_pct(*tally(held))}   dev {_pct(*tally(dev))}")
    print()


def _print_misses(results) -> None:
    misses = [hazard for hazard, found in results if not found]
    print(f"misses ({len(misses)}):")
    for hazard in sorted(misses, key=lambda h: (h["group"] != "held-out", h["package"], h["path"], h["line"])):
        print(f"  [{hazard['group']}] {hazard['package']}: {hazard['path']}:{hazard['line']}  "
              f"{hazard['category']} ({hazard['region']})  {hazard['snippet'][:90]}")
    print()


def hidden_device_hazards(results) -> list[tuple[dict, list]]:
    """Hazards picked as compiled or training-step code whose findings all say ``host``: the default
    report would hide them (a region rule moved device code to the host)."""
    return [(hazard, found) for hazard, found in results
            if hazard["region"] != "host" and found and all(f.region == "host" for f in found)]


def _print_hidden(results) -> None:
    hidden = hidden_device_hazards(results)
    print(f"compiled/training-step hazards flagged only in host code (hidden by default): {len(hidden)}")
    for hazard, found in hidden:
        print(f"  [{hazard['group']}] {hazard['package']}: {hazard['path']}:{hazard['line']}  "
              f"({hazard['region']})  {hazard['snippet'][:90]}")
    print()


def _print_default(default_counts: dict[str, Counter], packages) -> None:
    print("default report (dynlint check, no --include-host): findings per package")
    regions = sorted({r for counts in default_counts.values() for r in counts} - {"DYN1-3xx"})
    print(f"  {'package':22} {'group':9} {'total':>6} {'DYN1-3xx':>9}  " + "  ".join(f"{r:>14}" for r in regions))
    for package in packages:
        counts = default_counts.get(package.name)
        if counts is None:
            continue
        total = sum(counts[r] for r in regions)
        print(f"  {package.name:22} {package.group:9} {total:6d} {counts['DYN1-3xx']:9d}  "
              + "  ".join(f"{counts.get(r, 0):14d}" for r in regions))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--dest", default=corpus.DEFAULT_DEST, help="corpus directory (see bench/corpus.py)")
    parser.add_argument("--group", default="all", choices=("all",) + corpus.GROUPS)
    parser.add_argument("--package", help="only this package (its PyPI name)")
    parser.add_argument("--draw", metavar="PACKAGE", help="print the drawn file order of PACKAGE and exit")
    args = parser.parse_args(argv)
    if args.draw:
        package = corpus.by_name(args.draw)
        corpus.ensure(package, args.dest)
        for index, relpath in enumerate(draw_files(package, args.dest), 1):
            print(f"{index:4d} {relpath}")
        return 0
    packages = corpus.packages(args.group)
    if args.package:
        packages = [p for p in packages if p.name == args.package]
        if not packages:
            parser.error(f"unknown package {args.package!r} (see python bench/corpus.py --list)")
    return report(packages, args.dest)


if __name__ == "__main__":
    sys.exit(main())
