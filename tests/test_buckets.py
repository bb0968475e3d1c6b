"""Bucket boundaries, padding evaluation, bucket_collate and BucketBatchSampler."""

from __future__ import annotations

import itertools
from collections import UserDict

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dynlint.runtime.buckets import (
    BucketBatchSampler,
    bucket_collate,
    bucketed_sizes,
    max_bucket,
    multiple_buckets,
    optimal_buckets,
    padding_waste,
    percentile_buckets,
)


def total_padding(sizes, buckets):
    """Independent of the module: each size padded to the smallest boundary >= it."""
    boundaries = sorted(set(int(b) for b in buckets))
    padded = 0
    for s in sizes:
        padded += min(b for b in boundaries if b >= s) - s
    return padded


def brute_force_padding(sizes, k):
    """Least padding over every choice of <= k boundaries among the distinct sizes (max included)."""
    distinct = sorted(set(int(s) for s in sizes))
    top = distinct[-1]
    best = None
    for r in range(min(k, len(distinct))):
        for chosen in itertools.combinations(distinct[:-1], r):
            cost = total_padding(sizes, list(chosen) + [top])
            best = cost if best is None else min(best, cost)
    return best


# ------------------------------------------------------------------ percentile


def fairseq_get_buckets(sizes, num_buckets):
    # fairseq/data/data_utils.py get_buckets, with numpy's renamed keyword
    return np.unique(np.percentile(sizes, np.linspace(0, 100, num_buckets + 1), method="lower")[1:])


@pytest.mark.parametrize("seed", range(5))
@pytest.mark.parametrize("k", [1, 2, 3, 5, 8, 10, 64])
def test_percentile_reproduces_fairseq(seed, k):
    rng = np.random.default_rng(seed)
    sizes = np.clip(rng.lognormal(4, 1, 1000).astype(np.int64), 1, None)
    got = percentile_buckets(sizes, k)
    np.testing.assert_array_equal(got, fairseq_get_buckets(sizes, k))
    assert got[-1] == sizes.max()


def test_percentile_small_known_case():
    # 10 sizes, 2 buckets: lower 50th percentile of 1..10 is 5, the 100th is 10
    np.testing.assert_array_equal(percentile_buckets(list(range(1, 11)), 2), [5, 10])
    # repeated sizes collapse to fewer buckets
    np.testing.assert_array_equal(percentile_buckets([7] * 20 + [9], 4), [7, 9])


# --------------------------------------------------------------------- optimal


@settings(max_examples=150, deadline=None)
@given(st.lists(st.integers(0, 40), min_size=1, max_size=14), st.integers(1, 6))
def test_optimal_matches_brute_force(sizes, k):
    buckets = optimal_buckets(sizes, k)
    assert len(buckets) <= k
    assert list(buckets) == sorted(set(buckets))
    assert buckets[-1] == max(sizes)
    assert total_padding(sizes, buckets) == brute_force_padding(sizes, k)


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("k", [2, 3, 5, 10])
def test_optimal_never_worse_than_percentile(seed, k):
    rng = np.random.default_rng(seed)
    sizes = np.clip(rng.lognormal(5, 0.9, 5000).astype(np.int64), 1, 4096)
    optimal = optimal_buckets(sizes, k)
    percentile = percentile_buckets(sizes, k)
    assert len(optimal) <= k
    assert total_padding(sizes, optimal) <= total_padding(sizes, percentile)


def test_optimal_matches_quadratic_dp_on_many_distinct_sizes():
    # many distinct values exercise the divide-and-conquer layers; compare with a plain O(k U^2) DP
    rng = np.random.default_rng(7)
    sizes = rng.integers(1, 250, 3000)
    values, counts = np.unique(sizes, return_counts=True)
    k = 6
    n = len(values)
    cost = np.full((k + 1, n + 1), np.inf)
    cost[0, 0] = 0
    for b in range(1, k + 1):
        for j in range(1, n + 1):
            for i in range(j):
                group = (values[j - 1] - values[i:j]) @ counts[i:j]
                cost[b, j] = min(cost[b, j], cost[b - 1, i] + group)
    assert total_padding(sizes, optimal_buckets(sizes, k)) == cost[k, n]


def test_optimal_known_case():
    # two clusters: 1-3 (x100) and 100 (x1); with 2 buckets the cut is at 3
    sizes = [1] * 100 + [2] * 100 + [3] * 100 + [100]
    np.testing.assert_array_equal(optimal_buckets(sizes, 2), [3, 100])


def test_optimal_with_enough_buckets_has_no_padding():
    sizes = [5, 3, 3, 9, 1]
    np.testing.assert_array_equal(optimal_buckets(sizes, 4), [1, 3, 5, 9])
    np.testing.assert_array_equal(optimal_buckets(sizes, 100), [1, 3, 5, 9])
    assert padding_waste(sizes, optimal_buckets(sizes, 4)) == 0.0


def test_optimal_float_sizes():
    sizes = [0.5, 0.5, 1.25, 4.0, 4.0, 4.5]
    buckets = optimal_buckets(sizes, 2)
    assert buckets.dtype == np.float64
    np.testing.assert_array_equal(buckets, [1.25, 4.5])


def test_optimal_handles_a_million_sizes():
    rng = np.random.default_rng(0)
    sizes = np.clip(rng.lognormal(5, 0.8, 1_000_000).astype(np.int64), 1, 8192)
    buckets = optimal_buckets(sizes, 10)
    assert len(buckets) == 10 and buckets[-1] == sizes.max()
    assert padding_waste(sizes, buckets) < padding_waste(sizes, percentile_buckets(sizes, 10))


@pytest.mark.parametrize("bad_sizes, message", [
    ([], "empty"),
    ([1, -2], "non-negative"),
    ([1.0, float("nan")], "NaN"),
    (["a", "b"], "numbers"),
    ([[1, 2], [3, 4]], "one-dimensional"),
])
def test_bad_sizes_are_value_errors(bad_sizes, message):
    with pytest.raises(ValueError, match=message):
        optimal_buckets(bad_sizes, 2)


@pytest.mark.parametrize("k", [0, -1, 2.0, True])
def test_bad_num_buckets(k):
    with pytest.raises(ValueError, match="num_buckets"):
        percentile_buckets([1, 2], k)
    with pytest.raises(ValueError, match="num_buckets"):
        optimal_buckets([1, 2], k)


# ---------------------------------------------------------- multiple, max, waste


def test_multiple_and_max_buckets():
    sizes = [1, 7, 8, 9, 30]
    np.testing.assert_array_equal(multiple_buckets(sizes, 8), [8, 16, 32])
    np.testing.assert_array_equal(max_bucket(sizes), [30])
    with pytest.raises(ValueError, match="multiple"):
        multiple_buckets(sizes, 0)


def test_bucketed_sizes_and_waste():
    sizes = [1, 4, 5, 10]
    np.testing.assert_array_equal(bucketed_sizes(sizes, [5, 10]), [5, 5, 5, 10])
    # padded total 25, real 20
    assert padding_waste(sizes, [5, 10]) == pytest.approx(5 / 25)
    with pytest.raises(ValueError, match="size 10 is longer than the largest bucket 5"):
        bucketed_sizes(sizes, [5])


# --------------------------------------------------------------------- collate

try:
    import torch
except ImportError:  # the numpy-only tests above still run
    torch = None

requires_torch = pytest.mark.skipif(torch is None, reason="torch is not installed")


@requires_torch
def test_collate_pads_to_smallest_fitting_bucket_and_keeps_values():
    collate = bucket_collate([4, 8, 16], pad_value=-1)
    items = [torch.arange(1, 4), torch.arange(10, 16)]
    out = collate(items)
    assert out.shape == (2, 8)
    assert out[0, :3].tolist() == [1, 2, 3] and out[0, 3:].tolist() == [-1] * 5
    assert out[1, :6].tolist() == list(range(10, 16)) and out[1, 6:].tolist() == [-1, -1]
    assert collate([torch.arange(4)]).shape == (1, 4)  # exact fit stays


@requires_torch
@settings(max_examples=60, deadline=None)
@given(st.lists(st.lists(st.integers(1, 99), min_size=1, max_size=20), min_size=1, max_size=6),
       st.sampled_from(["right", "left"]))
def test_collate_outputs_only_bucket_shapes_and_original_values(rows, side):
    buckets = [3, 7, 12, 20]
    batch = collate_dicts(rows, buckets, side)
    longest = max(len(r) for r in rows)
    assert batch["input_ids"].shape == (len(rows), min(b for b in buckets if b >= longest))
    width = batch["input_ids"].shape[1]
    for index, row in enumerate(rows):
        ids = batch["input_ids"][index].tolist()
        mask = batch["attention_mask"][index].tolist()
        pad = width - len(row)
        if side == "right":
            assert ids[:len(row)] == row and ids[len(row):] == [0] * pad
            assert mask == [1] * len(row) + [0] * pad
        else:
            assert ids[pad:] == row and ids[:pad] == [0] * pad
            assert mask == [0] * pad + [1] * len(row)


def collate_dicts(rows, buckets, side):
    items = [{"input_ids": row, "attention_mask": [1] * len(row)} for row in rows]
    return bucket_collate(buckets, padding_side=side)(items)


@requires_torch
def test_collate_per_key_pad_values_and_plain_keys():
    items = [
        {"input_ids": [5, 6], "token_type_ids": [1, 1], "labels": [3, 4], "label": 1, "id": "a"},
        {"input_ids": [7, 8, 9], "token_type_ids": [1, 1, 1], "labels": [2, 2, 2], "label": 0, "id": "b"},
    ]
    out = bucket_collate([4], pad_value={"input_ids": 99})(items)
    assert out["input_ids"].tolist() == [[5, 6, 99, 99], [7, 8, 9, 99]]
    assert out["token_type_ids"].tolist() == [[1, 1, 0, 0], [1, 1, 1, 0]]
    assert out["labels"].tolist() == [[3, 4, -100, -100], [2, 2, 2, -100]]
    assert out["label"].tolist() == [1, 0]
    assert out["id"] == ["a", "b"]


@requires_torch
def test_collate_only_listed_keys_are_padded():
    items = [{"input_ids": [1], "boxes": [[0, 0], [1, 1]]}, {"input_ids": [1, 2], "boxes": [[0, 0], [1, 1]]}]
    out = bucket_collate([2, 4], keys=["input_ids"])(items)
    assert out["input_ids"].shape == (2, 2)
    assert out["boxes"].shape == (2, 2, 2)


@requires_torch
def test_collate_nd_items_pad_the_first_dimension():
    frames = [torch.ones(3, 5), torch.ones(6, 5)]
    out = bucket_collate([4, 8], pad_value=0.0)(frames)
    assert out.shape == (2, 8, 5) and out.dtype == torch.float32
    assert out[0, :3].eq(1).all() and out[0, 3:].eq(0).all()


@requires_torch
def test_collate_keeps_mapping_type():
    class Encoding(UserDict):
        pass

    out = bucket_collate([4])([Encoding(input_ids=[1, 2])])
    assert isinstance(out, Encoding) and out["input_ids"].shape == (1, 4)


@requires_torch
def test_collate_too_long_raises_unless_truncate():
    with pytest.raises(ValueError, match="length 5 is longer than the largest bucket 4; .*truncate=True"):
        bucket_collate([2, 4])([[1, 2, 3, 4, 5]])
    out = bucket_collate([2, 4], truncate=True)([[1, 2, 3, 4, 5], [1]])
    assert out.tolist() == [[1, 2, 3, 4], [1, 0, 0, 0]]


def test_collate_numpy_output_and_argument_errors():
    out = bucket_collate([4], return_tensors="np")([[1, 2]])
    assert isinstance(out, np.ndarray) and out.tolist() == [[1, 2, 0, 0]]
    with pytest.raises(ValueError, match="padding_side"):
        bucket_collate([4], padding_side="middle")
    with pytest.raises(ValueError, match="same keys"):
        bucket_collate([4])([{"a": [1]}, {"b": [1]}])


@requires_torch
def test_collate_in_a_dataloader_gives_only_bucket_shapes():
    from torch.utils.data import DataLoader

    rng = np.random.default_rng(3)
    lengths = rng.integers(1, 60, 200)
    data = [{"input_ids": list(range(1, n + 1)), "attention_mask": [1] * int(n)} for n in lengths]
    buckets = optimal_buckets(lengths, 4)
    # the short last batch is part of the test
    loader = DataLoader(data, batch_size=16, collate_fn=bucket_collate(buckets))  # noqa: DYN401
    widths = {batch["input_ids"].shape[1] for batch in loader}
    assert widths <= set(int(b) for b in buckets)


# --------------------------------------------------------------------- sampler


def test_sampler_groups_by_bucket_with_token_budget():
    lengths = [3] * 10 + [8] * 10 + [16] * 5
    sampler = BucketBatchSampler(lengths, [4, 8, 16], max_tokens=32, shuffle=False)
    batches = list(sampler)
    # batch size per bucket: 32 // 4 = 8, 32 // 8 = 4, 32 // 16 = 2
    assert sampler.batch_sizes == {0: 8, 1: 4, 2: 2}
    assert [len(b) for b in batches] == [8, 2, 4, 4, 2, 2, 2, 1]
    assert sorted(i for b in batches for i in b) == list(range(25))
    for batch in batches:
        assert len({lengths[i] for i in batch}) == 1  # one bucket per batch
        assert len(batch) * max(lengths[i] for i in batch) <= 32
    assert len(sampler) == len(batches)


def test_sampler_drop_last_gives_constant_shapes_and_shuffles_by_epoch():
    lengths = [3] * 10 + [8] * 10
    sampler = BucketBatchSampler(lengths, [4, 8], batch_size=4, drop_last=True, seed=1)
    first = list(sampler)
    assert all(len(b) == 4 for b in first) and len(first) == len(sampler) == 4
    assert list(sampler) == first  # same epoch, same order
    sampler.set_epoch(1)
    assert list(sampler) != first


def test_sampler_batch_size_multiple_and_errors():
    sampler = BucketBatchSampler([1, 2, 3], [4], max_tokens=30, batch_size_multiple=4, shuffle=False)
    assert sampler.batch_sizes == {0: 4}  # 30 // 4 = 7, rounded down to 4
    with pytest.raises(ValueError, match="max_tokens, batch_size"):
        BucketBatchSampler([1], [4])
    with pytest.raises(ValueError, match="not even one item fits"):
        BucketBatchSampler([1, 9], [4, 16], max_tokens=8)
    with pytest.raises(ValueError, match="longer than the largest bucket"):
        BucketBatchSampler([1, 20], [4, 16], batch_size=2)


@requires_torch
def test_sampler_with_dataloader_and_collate():
    from torch.utils.data import DataLoader

    rng = np.random.default_rng(5)
    lengths = rng.integers(1, 100, 300)
    data = [list(range(int(n))) for n in lengths]
    buckets = optimal_buckets(lengths, 5)
    sampler = BucketBatchSampler(lengths, buckets, max_tokens=512, drop_last=True)
    loader = DataLoader(data, batch_sampler=sampler, collate_fn=bucket_collate(buckets, pad_value=-1))
    shapes = {tuple(batch.shape) for batch in loader}
    assert len(shapes) <= len(buckets)
    assert all(rows * width <= 512 for rows, width in shapes)
