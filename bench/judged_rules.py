"""Every judgment on file, against this checkout's default report: what each rule still reports.

    python bench/judged_rules.py                 # every package with judgments (about 1 minute)
    python bench/judged_rules.py --package mmdet # one package
    python bench/judged_rules.py --show-gone hazard  # also list the judged hazards no longer reported
    python bench/judged_rules.py --show false-alarm  # also list the judged false alarms still reported
    python bench/judged_rules.py --show host-only --region unknown  # ...only those in one region

``precision_sample.py`` measures a sample of the held-out packages' reports;
this script asks the other question a change to the analysis raises: of all the
findings ever judged by hand (``bench/data/precision_judgments.json``, every
package of the corpus), which ones does this checkout still report by default
(no ``--include-host``: compiled, training and unknown regions), and what were
they judged to be?  A judgment matches a finding by package, path, code, the
stripped source line and the enclosing function's hash (as in
``precision_sample.py``), so it holds across edits elsewhere in the file.

It prints, per rule and in total, the verdicts of the judged findings still
reported (and how many judged ones are no longer reported, by verdict), so a
change that removes false alarms shows the real hazards it took with them.
It does not measure precision on new code (the judged findings were once in a
report; findings a change adds are not judged): that is ``precision_sample.py``'s job.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections import Counter, defaultdict

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import corpus  # noqa: E402
import corpus_findings as cf  # noqa: E402
from precision_sample import VERDICTS, key_of, load_judgments  # noqa: E402


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--package", action="append", help="only this package (repeatable)")
    parser.add_argument("--dest", default=corpus.DEFAULT_DEST, help="the corpus directory")
    parser.add_argument("--show-gone", action="append", choices=VERDICTS, metavar="VERDICT",
                        help="list the judged findings of this verdict no longer reported (repeatable)")
    parser.add_argument("--show", action="append", choices=VERDICTS, metavar="VERDICT",
                        help="list the judged findings of this verdict still reported (repeatable)")
    parser.add_argument("--region", choices=("compiled", "training", "unknown"),
                        help="with --show: only the findings reported in this region")
    args = parser.parse_args(argv)
    judgments = load_judgments()
    by_package: dict[str, list[tuple[str, dict]]] = defaultdict(list)
    for key, item in judgments.items():
        by_package[item["package"]].append((key, item))
    chosen = [p for p in corpus.packages() if p.name in by_package and (not args.package or p.name in args.package)]
    print(f"dynlint: {cf.dynlint_version()} (this checkout); judgments on file: {len(judgments)}; "
          f"packages: {len(chosen)}")
    still: dict[str, Counter] = defaultdict(Counter)
    gone: dict[str, Counter] = defaultdict(Counter)
    gone_items: list[dict] = []
    still_items: list[dict] = []
    for package in chosen:
        tally(package.name, corpus.ensure(package, args.dest), by_package[package.name], still, gone, gone_items,
              still_items)
    print("\njudged findings still in the default report (and judged ones no longer reported), per rule")
    print(f"  {'rule':8} {'hazard':>7} {'host-only':>10} {'false-alarm':>12} {'false %':>8}   "
          f"{'gone: hazard':>12} {'host-only':>10} {'false-alarm':>12}")
    totals, gone_totals = Counter(), Counter()
    for code in sorted(set(still) | set(gone)):
        row, left = still[code], gone[code]
        totals.update(row)
        gone_totals.update(left)
        print(_row(code, row, left))
    print(_row("total", totals, gone_totals))
    by_region: dict[str, Counter] = defaultdict(Counter)
    for item in still_items:
        by_region[item.get("region") or "?"][item["verdict"]] += 1
    print("\nthe same findings by the region they are reported in now")
    print(f"  {'region':9} {'hazard':>7} {'host-only':>10} {'false-alarm':>12}")
    for region in sorted(by_region):
        row = by_region[region]
        print(f"  {region:9} {row['hazard']:7d} {row['host-only']:10d} {row['false-alarm']:12d}")
    listings = [(verdict, gone_items, "no longer reported") for verdict in args.show_gone or ()]
    listings += [(verdict, still_items, "still reported") for verdict in args.show or ()]
    for verdict, items, state in listings:
        shown = [item for item in items if item["verdict"] == verdict
                 and (state != "still reported" or not args.region or item.get("region") == args.region)]
        print(f"\njudged {verdict} findings {state} by default ({len(shown)})")
        for item in shown:
            print(f"  {item['package']}: {item['relpath']}:{item['line']}  {item['code']}  "
                  f"{item['line_text'][:70]}  -- {item.get('note', '')[:100]}")
    return 0


def tally(package: str, directory: str, items: list[tuple[str, dict]], still: dict, gone: dict,
          gone_items: list[dict] | None = None, still_items: list[dict] | None = None) -> None:
    """Count the judged ``items`` (key, judgment) of one package into ``still`` (reported by default
    now) or ``gone``, per rule and verdict; the judgments themselves go to ``still_items``/``gone_items``."""
    findings, _ = cf.run_dynlint(directory, include_host=False)
    reported = Counter()
    regions: dict[str, str] = {}
    for finding in findings:
        path = os.path.join(directory, finding.relpath)
        key = key_of(package, finding.relpath, finding.code, cf.source_line(path, finding.line),
                     cf.function_hash(path, finding.line))
        reported[key] += 1
        regions.setdefault(key, finding.region or "")
    for key, item in items:
        base, _, occurrence = key.partition("|#")
        count = int(occurrence) if occurrence else 1
        target = still if reported[base] >= count else gone
        target.setdefault(item["code"], Counter())[item["verdict"]] += 1
        listed = gone_items if target is gone else still_items
        if listed is not None:
            listed.append(dict(item, region=regions.get(base, "")) if target is still else item)


def _row(label: str, row: Counter, left: Counter) -> str:
    n = sum(row[v] for v in VERDICTS)
    share = f"{100 * row['false-alarm'] / n:7.1f}%" if n else "       -"
    return (f"  {label:8} {row['hazard']:7d} {row['host-only']:10d} {row['false-alarm']:12d} {share}   "
            f"{left['hazard']:12d} {left['host-only']:10d} {left['false-alarm']:12d}")


if __name__ == "__main__":
    raise SystemExit(main())
