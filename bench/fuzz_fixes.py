"""Long differential fuzzing run of the safe fixes (the property of tests/test_fix_fuzz.py).

    python bench/fuzz_fixes.py                      # 2,000 examples per family, random seed
    python bench/fuzz_fixes.py --examples 500 --seed 1 --family bool_product

For each family of generated programs (tests/fixfuzz.py) it runs hypothesis
with the given number of examples and prints, per family, how many examples
ran, how many of them had a safe fix applied, how many of those differed in a
float result only by the order of a float sum (equal when both programs are
computed in float64: ``fixfuzz.rounding_only``), and either "clean" or the first
(shrunk) counterexample: the original program, the fixed one, and the inputs on
which they disagree.  Exit status 1 when any family found a mismatch.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))
if os.environ.get("PYTHONPATH") is None:
    sys.path.insert(0, str(ROOT))

import dynlint  # noqa: E402
import fixfuzz  # noqa: E402
from hypothesis import HealthCheck, given, seed as hypothesis_seed, settings  # noqa: E402


def run_family(family: str, examples: int, seed: int | None) -> tuple[int, int, list[str]]:
    counts = {"examples": 0, "fixed": 0}
    fixfuzz.ROUNDING_ONLY.clear()

    @settings(max_examples=examples, deadline=None, database=None, print_blob=False,
              suppress_health_check=list(HealthCheck))
    @given(program=fixfuzz.programs(family), args=fixfuzz.inputs(family))
    def run(program, args):
        counts["examples"] += 1
        if fixfuzz.check_program(program, args):
            counts["fixed"] += 1

    if seed is not None:
        run = hypothesis_seed(seed)(run)
    try:
        run()
    except fixfuzz.Mismatch as exc:
        return counts["examples"], counts["fixed"], [str(exc)]
    except ExceptionGroup as group:  # hypothesis found several distinct failures
        return counts["examples"], counts["fixed"], [str(e) for e in group.exceptions]
    return counts["examples"], counts["fixed"], []


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--examples", type=int, default=2000, help="examples per family (default 2000)")
    parser.add_argument("--seed", type=int, default=None, help="hypothesis seed (default: random)")
    parser.add_argument("--show-rounding", action="store_true",
                        help="print the first example per family whose float result differed only by the order of "
                             "a float sum")
    parser.add_argument("--family", action="append", choices=sorted(fixfuzz.FAMILIES),
                        help="only these families (repeatable; default: all)")
    args = parser.parse_args(argv)
    families = args.family or list(fixfuzz.FAMILIES)
    print(f"dynlint from {Path(dynlint.__file__).parent}; {args.examples} examples per family; "
          f"seed {args.seed if args.seed is not None else 'random'}")
    failed = 0
    for family in families:
        start = time.perf_counter()
        ran, fixed, failures = run_family(family, args.examples, args.seed)
        took = time.perf_counter() - start
        verdict = f"{len(failures)} MISMATCH" if failures else "clean"
        rounding = len(fixfuzz.ROUNDING_ONLY)
        print(f"{family:22s} {ran:6d} examples  {fixed:6d} with a safe fix applied  {rounding:3d} float-sum "
              f"order only  {took:7.1f} s  {verdict}")
        if rounding and args.show_rounding:
            source, inputs = fixfuzz.ROUNDING_ONLY[0]
            print("    first float-sum-order difference (equal in float64):\n    "
                  + (source + inputs).replace("\n", "\n    "))
        for failure in failures:
            failed += 1
            print("    " + failure.replace("\n", "\n    "))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
