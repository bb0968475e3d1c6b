"""Precision of the default report on packages nobody here tuned on, from a judged sample.

    python bench/precision_sample.py                    # sample, write the sheet, print the table
    python bench/precision_sample.py --per-package 30   # a bigger sample (earlier judgments still count)
    python bench/precision_sample.py --sheet FILE       # where the judging sheet goes

Runs this checkout's default ``dynlint check`` (``--output-format json --no-cache``,
no ``--include-host``) on every held-out package of ``bench/corpus.py`` and draws a
reproducible sample of its findings, the same number from each package: each
finding gets a priority from a hash of the seed and its judgment key, and the
lowest priorities are taken. A finding keeps its priority when the analysis
changes, so a re-run after a change samples mostly findings judged before plus the
new ones.

Judgments live in ``bench/data/precision_judgments.json``, keyed by package, path,
code, the stripped source line and a hash of the enclosing function's text, so
they survive line shifts elsewhere in the file; a judgment is asked for again only
when that function changes. Verdicts:

* ``hazard``: a real tensor hazard in code that runs in the compiled step or a
  training step (or could: a library function with no caller, judged by what it is),
* ``host-only``: the hazard is real but the code only runs on the host (dataset,
  metrics, plotting, export, inference post-processing outside forward),
* ``false-alarm``: the value is not a tensor, or the line is not a hazard.

The sheet (Markdown) lists the unjudged findings first, each with its context, the
finding's message and a JSON stub to paste into the judgments file. The table
counts each verdict per package and in total, lists every false alarm, and gives
the host-only share weighted by each package's share of the default report.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import sys
from collections import Counter

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import corpus  # noqa: E402
import corpus_findings as cf  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
JUDGMENTS = os.path.join(HERE, "data", "precision_judgments.json")
DEFAULT_SHEET = os.path.join(HERE, ".precision", "sheet.md")
SEED = 9
VERDICTS = ("hazard", "host-only", "false-alarm")
CONTEXT = 4


def key_of(package: str, relpath: str, code: str, line_text: str, function_hash: str) -> str:
    return "|".join((package, relpath, code, line_text, function_hash))


def sample_findings(package: corpus.Package, directory: str, per_package: int, seed: int = SEED) -> tuple[list[dict], int]:
    """The sampled findings of one package (as dicts with their key) and the report size."""
    findings, _ = cf.run_dynlint(directory, include_host=False)
    rows = []
    seen = Counter()
    for finding in findings:
        path = os.path.join(directory, finding.relpath)
        text = cf.source_line(path, finding.line)
        fhash = cf.function_hash(path, finding.line)
        key = key_of(package.name, finding.relpath, finding.code, text, fhash)
        seen[key] += 1  # the same code twice on identical lines of one function: keep them apart
        unique_key = key if seen[key] == 1 else f"{key}|#{seen[key]}"
        priority = hashlib.sha1(f"{seed}|{unique_key}".encode()).hexdigest()
        rows.append({"package": package.name, "group": package.group, "relpath": finding.relpath,
                     "line": finding.line, "end_line": finding.end_line, "code": finding.code,
                     "message": finding.message, "region": finding.region, "line_text": text,
                     "function_hash": fhash, "function": cf.enclosing_function_name(path, finding.line),
                     "key": unique_key, "priority": priority})
    rows.sort(key=lambda row: row["priority"])
    return rows[:per_package], len(findings)


def load_judgments(path: str = JUDGMENTS) -> dict[str, dict]:
    if not os.path.isfile(path):
        return {}
    with open(path, encoding="utf-8") as handle:
        items = json.load(handle)["judgments"]
    out = {}
    for item in items:
        key = key_of(item["package"], item["relpath"], item["code"], item["line_text"], item["function_hash"])
        if item.get("occurrence", 1) > 1:
            key = f"{key}|#{item['occurrence']}"
        if item["verdict"] not in VERDICTS:
            raise SystemExit(f"precision_sample: unknown verdict {item['verdict']!r} in {path} ({key})")
        out[key] = item
    return out


def stub(row: dict) -> dict:
    item = {"package": row["package"], "relpath": row["relpath"], "code": row["code"],
            "line_text": row["line_text"], "function_hash": row["function_hash"]}
    if "|#" in row["key"]:
        item["occurrence"] = int(row["key"].rsplit("|#", 1)[1])
    item.update({"line": row["line"], "verdict": "?", "note": ""})
    return item


def write_sheet(path: str, rows: list[dict], judgments: dict[str, dict], directory_of: dict[str, str]) -> None:
    sheet = os.path.abspath(path)
    if sheet.endswith(".py") or any(sheet.startswith(os.path.abspath(d) + os.sep) for d in directory_of.values()):
        raise SystemExit(f"precision_sample: refusing to write the sheet to {path} (a source file or inside the corpus)")
    os.makedirs(os.path.dirname(sheet), exist_ok=True)
    unjudged = [r for r in rows if r["key"] not in judgments]
    judged = [r for r in rows if r["key"] in judgments]
    out = [f"# Precision sample: {len(rows)} findings, {len(unjudged)} unjudged\n",
           f"dynlint {cf.dynlint_version()}; verdicts: {', '.join(VERDICTS)} "
           f"(see bench/precision_sample.py). Paste the stubs into {os.path.relpath(JUDGMENTS, os.getcwd())}.\n"]
    for title, block in (("Unjudged", unjudged), ("Judged", judged)):
        out.append(f"\n## {title} ({len(block)})\n")
        for index, row in enumerate(block, 1):
            source_path = os.path.join(directory_of[row["package"]], row["relpath"])
            lines = cf.read_source(source_path).splitlines()
            lo, hi = max(1, row["line"] - CONTEXT), min(len(lines), row["end_line"] + CONTEXT)
            region = f", region {row['region']}" if row["region"] else ""
            out.append(f"\n### {index}. {row['package']} {row['relpath']}:{row['line']} {row['code']} "
                       f"in {row['function']}{region}\n")
            out.append(f"{row['message']}\n")
            out.append("```python")
            for number in range(lo, hi + 1):
                mark = ">>" if row["line"] <= number <= row["end_line"] else "  "
                out.append(f"{mark}{number:5d}  {lines[number - 1]}")
            out.append("```")
            if row["key"] in judgments:
                item = judgments[row["key"]]
                out.append(f"verdict: **{item['verdict']}**: {item.get('note', '')}")
            else:
                out.append("```json\n" + json.dumps(stub(row), ensure_ascii=False) + ",\n```")
    with open(sheet, "w", encoding="utf-8") as handle:
        handle.write("\n".join(out) + "\n")


def print_table(rows: list[dict], judgments: dict[str, dict], report_sizes: dict[str, int]) -> None:
    packages = sorted({r["package"] for r in rows}, key=lambda name: [p.name for p in corpus.PACKAGES].index(name))
    print("judged sample of the default report (held-out packages)")
    print(f"  {'package':22} {'report':>6} {'sample':>6} {'hazard':>7} {'host-only':>9} {'false-alarm':>11} "
          f"{'unjudged':>8}")
    totals = Counter()
    weighted_host = weighted_false = weight_sum = 0.0
    for name in packages:
        mine = [r for r in rows if r["package"] == name]
        counts = Counter(judgments[r["key"]]["verdict"] if r["key"] in judgments else "unjudged" for r in mine)
        totals.update(counts)
        totals["sample"] += len(mine)
        totals["report"] += report_sizes[name]
        judged = sum(counts[v] for v in VERDICTS)
        if judged:
            weight = report_sizes[name]
            weighted_host += weight * counts["host-only"] / judged
            weighted_false += weight * counts["false-alarm"] / judged
            weight_sum += weight
        print(f"  {name:22} {report_sizes[name]:6d} {len(mine):6d} {counts['hazard']:7d} {counts['host-only']:9d} "
              f"{counts['false-alarm']:11d} {counts['unjudged']:8d}")
    judged = sum(totals[v] for v in VERDICTS)
    print(f"  {'total':22} {totals['report']:6d} {totals['sample']:6d} {totals['hazard']:7d} "
          f"{totals['host-only']:9d} {totals['false-alarm']:11d} {totals['unjudged']:8d}")
    if judged:
        print(f"  share of judged ({judged}): hazard {100 * totals['hazard'] / judged:.1f}%, "
              f"host-only {100 * totals['host-only'] / judged:.1f}%, "
              f"false alarm {100 * totals['false-alarm'] / judged:.1f}%")
        print(f"  weighted by each package's share of the default report: host-only "
              f"{100 * weighted_host / weight_sum:.1f}%, false alarm {100 * weighted_false / weight_sum:.1f}%")
    false = [r for r in rows if r["key"] in judgments and judgments[r["key"]]["verdict"] == "false-alarm"]
    print(f"false alarms ({len(false)}):")
    for row in false:
        print(f"  {row['package']}: {row['relpath']}:{row['line']} {row['code']}  {row['line_text'][:70]}"
              f"  -- {judgments[row['key']].get('note', '')}")
    host = [r for r in rows if r["key"] in judgments and judgments[r["key"]]["verdict"] == "host-only"]
    print(f"host-only ({len(host)}):")
    for row in host:
        print(f"  {row['package']}: {row['relpath']}:{row['line']} {row['code']}  {row['line_text'][:70]}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--dest", default=corpus.DEFAULT_DEST, help="corpus directory (see bench/corpus.py)")
    parser.add_argument("--per-package", type=int, default=20, help="findings drawn per package (default 20)")
    parser.add_argument("--sheet", default=DEFAULT_SHEET, help=f"judging sheet to write (default {DEFAULT_SHEET})")
    parser.add_argument("--judgments", default=JUDGMENTS, help="judgments file (default bench/data/...)")
    args = parser.parse_args(argv)
    judgments = load_judgments(args.judgments)
    rows, sizes, directory_of = [], {}, {}
    for package in corpus.packages("held-out"):
        directory = corpus.ensure(package, args.dest)
        directory_of[package.name] = directory
        sample, sizes[package.name] = sample_findings(package, directory, args.per_package)
        rows.extend(sample)
    print(f"dynlint: {cf.dynlint_version()} (this checkout); {len(rows)} findings sampled from "
          f"{len(sizes)} held-out packages; judgments: {len(judgments)} on file")
    write_sheet(args.sheet, rows, judgments, directory_of)
    print(f"sheet: {args.sheet} ({sum(1 for r in rows if r['key'] not in judgments)} unjudged first)")
    print()
    print_table(rows, judgments, sizes)
    return 0


if __name__ == "__main__":
    sys.exit(main())
