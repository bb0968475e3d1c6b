"""Bucketing benchmark: padding waste and shape count per strategy, and optimal_buckets' speed.

    python bench/buckets.py [--items 100000] [--seed 0]

Part 1: a skewed, realistic token-length distribution (log-normal, median
about 110 tokens, truncated at 2048) -- padding waste and number of distinct
shapes for each strategy, side by side with pad-to-max (the one-shape
baseline) and no bucketing (zero padding, one shape per length).
Part 2: wall time of optimal_buckets on 1M sizes, next to percentile_buckets
(fairseq) and a plain O(k U^2) dynamic program over the same histogram.
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from dynlint.runtime.buckets import (
    max_bucket,
    multiple_buckets,
    optimal_buckets,
    padding_waste,
    percentile_buckets,
)


def token_lengths(items: int, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    return np.clip(rng.lognormal(mean=4.7, sigma=0.75, size=items).astype(np.int64), 1, 2048)


def best_time(fn, repeat=3):
    best = float("inf")
    for _ in range(repeat):
        start = time.perf_counter()
        result = fn()
        best = min(best, time.perf_counter() - start)
    return best, result


def quadratic_dp(sizes, k):
    """Reference exact DP without the divide-and-conquer speed-up (vectorised over split points)."""
    values, counts = np.unique(sizes, return_counts=True)
    values = values.astype(np.float64)
    counts = counts.astype(np.float64)
    n = len(values)
    prefix_count = np.concatenate([[0.0], np.cumsum(counts)])
    prefix_sum = np.concatenate([[0.0], np.cumsum(counts * values)])
    previous = np.full(n + 1, np.inf)
    previous[0] = 0.0
    for _ in range(min(k, n)):
        current = np.full(n + 1, np.inf)
        for j in range(1, n + 1):
            i = np.arange(j)
            cost = values[j - 1] * (prefix_count[j] - prefix_count[i]) - (prefix_sum[j] - prefix_sum[i])
            current[j] = np.min(previous[:j] + cost)
        previous = np.minimum(previous, current)  # "at most k" buckets
    return previous[n]


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--items", type=int, default=100_000)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()

    sizes = token_lengths(args.items, args.seed)
    print(f"Part 1: {len(sizes):,} log-normal token lengths (seed {args.seed}): "
          f"median {np.median(sizes):.0f}, p99 {np.percentile(sizes, 99):.0f}, max {sizes.max()}, "
          f"{len(np.unique(sizes)):,} distinct")
    rows = [("no bucketing (baseline: 0% padding)", np.unique(sizes)),
            ("pad to max (baseline: 1 shape)", max_bucket(sizes)),
            ("pad_to_multiple_of 8", multiple_buckets(sizes, 8)),
            ("pad_to_multiple_of 64", multiple_buckets(sizes, 64))]
    for k in (3, 5, 10, 16):
        rows.append((f"percentile k={k} (fairseq)", percentile_buckets(sizes, k)))
        rows.append((f"optimal    k={k} (dynlint)", optimal_buckets(sizes, k)))
    print(f"{'strategy':<38} {'shapes':>6} {'padding waste':>14}")
    for label, boundaries in rows:
        print(f"{label:<38} {len(boundaries):>6} {100 * padding_waste(sizes, boundaries):>13.1f}%")

    print()
    million = token_lengths(1_000_000, args.seed + 1)
    distinct = len(np.unique(million))
    print(f"Part 2: 1,000,000 log-normal token lengths, {distinct:,} distinct; best of 3 wall times")
    print(f"{'k':>3} {'percentile_buckets':>19} {'optimal_buckets':>16} {'O(kU^2) DP':>11}  same optimum")
    for k in (5, 10, 32):
        t_percentile, _ = best_time(lambda: percentile_buckets(million, k))
        t_optimal, boundaries = best_time(lambda: optimal_buckets(million, k))
        t_quadratic, reference = best_time(lambda: quadratic_dp(million, k), repeat=1)
        ours = float(np.sum(np.sort(boundaries)[np.searchsorted(boundaries, million)] - million))
        print(f"{k:>3} {t_percentile:>18.3f}s {t_optimal:>15.3f}s {t_quadratic:>10.2f}s  {ours == reference}")

    wide = np.random.default_rng(args.seed + 2).integers(0, 200_000, 1_000_000)
    wide_distinct = len(np.unique(wide))
    t_optimal, _ = best_time(lambda: optimal_buckets(wide, 10))
    t_percentile, _ = best_time(lambda: percentile_buckets(wide, 10))
    print(f"worst case, 1,000,000 uniform sizes with {wide_distinct:,} distinct, k=10: "
          f"optimal_buckets {t_optimal:.3f}s, percentile_buckets {t_percentile:.3f}s "
          f"(O(kU^2) DP not run: ~{10 * wide_distinct ** 2 / 2:.1e} cost evaluations)")


if __name__ == "__main__":
    main()
