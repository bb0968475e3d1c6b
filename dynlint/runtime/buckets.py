"""Bucketing: cut variable lengths into a few static shapes with least padding.

Every distinct input length is a distinct shape, and graph compilers (Gaudi,
XLA, ``torch.compile`` without dynamic shapes) compile once per shape.  Padding
each item up to one of ``k`` bucket boundaries bounds the number of shapes at
``k``; the choice of boundaries decides how much padding that costs.

Boundary strategies (all return a sorted 1-D ``numpy`` array whose last value
is ``max(sizes)``, so every item fits):

* :func:`percentile_buckets` -- fairseq's equal-frequency boundaries.
* :func:`optimal_buckets` -- the boundaries that minimise total padding exactly.
* :func:`multiple_buckets` -- Hugging Face's ``pad_to_multiple_of``.

Then :func:`bucketed_sizes` / :func:`padding_waste` evaluate a choice,
:func:`bucket_collate` pads batches to the chosen shapes and
:class:`BucketBatchSampler` groups items by bucket with a ``max_tokens``
budget (larger batches for shorter items).

This module needs only numpy; torch is imported inside the collate function,
and only when it is asked to return torch tensors.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

import numpy as np

__all__ = [
    "percentile_buckets",
    "optimal_buckets",
    "multiple_buckets",
    "max_bucket",
    "bucketed_sizes",
    "padding_waste",
    "bucket_collate",
    "BucketBatchSampler",
]

# Hugging Face conventions for keys whose padding is not the token pad value.
DEFAULT_KEY_PAD_VALUES = {
    "attention_mask": 0,
    "token_type_ids": 0,
    "special_tokens_mask": 1,
    "labels": -100,
}


# --------------------------------------------------------------------------- sizes


def as_sizes(sizes) -> np.ndarray:
    """Validate ``sizes`` (any 1-D sequence of non-negative numbers) as a numpy array.

    Integer inputs stay integer (int64); float inputs stay float64.
    """
    array = np.asarray(sizes)
    if array.ndim == 2 and 1 in array.shape:  # a single row or column
        array = array.reshape(-1)
    if array.ndim != 1:
        raise ValueError(f"sizes must be one-dimensional, got shape {tuple(np.shape(sizes))}")
    if array.size == 0:
        raise ValueError("sizes is empty")
    numeric = np.issubdtype(array.dtype, np.integer) or np.issubdtype(array.dtype, np.floating)
    if array.dtype == bool or not numeric:
        raise ValueError(f"sizes must be numbers, got dtype {array.dtype}")
    if np.issubdtype(array.dtype, np.floating):
        if not np.all(np.isfinite(array)):
            raise ValueError("sizes contain NaN or infinity")
        array = array.astype(np.float64, copy=False)
    else:
        array = array.astype(np.int64, copy=False)
    if array.min() < 0:
        raise ValueError(f"sizes must be non-negative, got {array.min()}")
    return array


def _check_num_buckets(num_buckets) -> int:
    if isinstance(num_buckets, bool) or not isinstance(num_buckets, (int, np.integer)) or num_buckets < 1:
        raise ValueError(f"num_buckets must be a positive integer, got {num_buckets!r}")
    return int(num_buckets)


# ------------------------------------------------------------------ boundary choice


def percentile_buckets(sizes, num_buckets: int) -> np.ndarray:
    """fairseq's equal-frequency bucket boundaries.

    The ``num_buckets`` upper percentiles of ``sizes`` (``method="lower"``, so
    every boundary is an observed size), duplicates removed: identical to
    ``fairseq.data.data_utils.get_buckets``.  Heavily repeated sizes give fewer
    than ``num_buckets`` boundaries.
    """
    array = as_sizes(sizes)
    num_buckets = _check_num_buckets(num_buckets)
    quantiles = np.linspace(0, 100, num_buckets + 1)
    return np.unique(np.percentile(array, quantiles, method="lower")[1:])


def multiple_buckets(sizes, multiple: int) -> np.ndarray:
    """Boundaries of Hugging Face's ``pad_to_multiple_of``: each size rounded up to a multiple.

    Only the multiples that some size actually rounds to are returned, so the
    length of the result is the number of shapes this padding produces.  (The
    largest boundary is then a multiple of ``multiple`` >= ``max(sizes)``.)
    """
    array = as_sizes(sizes)
    if isinstance(multiple, bool) or not isinstance(multiple, (int, np.integer)) or multiple < 1:
        raise ValueError(f"multiple must be a positive integer, got {multiple!r}")
    rounded = np.ceil(array / multiple).astype(np.int64) * int(multiple)
    return np.unique(rounded)


def max_bucket(sizes) -> np.ndarray:
    """Pad-to-max (``padding="max_length"`` with the data's maximum): one shape."""
    array = as_sizes(sizes)
    return np.array([array.max()], dtype=array.dtype)


def optimal_buckets(sizes, num_buckets: int) -> np.ndarray:
    """The at most ``num_buckets`` boundaries that minimise total padding, exactly.

    Padding item ``s`` up to the smallest boundary ``b >= s`` costs ``b - s``;
    the result minimises the sum over all items.  The largest boundary is
    always ``max(sizes)`` and every boundary is an observed size (moving a
    boundary down to the largest size it serves never adds padding).

    Method: a 1-D dynamic program over the ``U`` distinct sizes (the histogram,
    so the number of items only costs one ``np.unique``).  The cost of serving
    the distinct sizes ``u[i:j]`` with boundary ``u[j-1]`` satisfies the
    quadrangle (Monge) inequality, so each of the ``k`` DP layers is solved by
    divide-and-conquer optimisation in ``O(U log U)`` -- vectorised one
    recursion level at a time -- instead of ``O(U^2)``.  Total
    ``O(n log n + k U log U)``; exact, no solver.
    """
    array = as_sizes(sizes)
    num_buckets = _check_num_buckets(num_buckets)
    values, counts = np.unique(array, return_counts=True)
    if num_buckets >= len(values):
        return values
    bounds, _ = _optimal_boundaries(values.astype(np.float64), counts.astype(np.float64), num_buckets)
    return values[bounds]


def _optimal_boundaries(values: np.ndarray, counts: np.ndarray, num_buckets: int):
    """Indices into ``values`` of the optimal boundaries, and the minimal total padding.

    ``values`` sorted and distinct, ``num_buckets < len(values)``.
    ``cost[b][j]``: least padding for the first ``j`` distinct values with ``b``
    buckets, the last boundary being ``values[j-1]``;
    ``cost[b][j] = min_{b-1 <= i < j} cost[b-1][i] + w(i, j)`` with
    ``w(i, j) = values[j-1] * (C[j] - C[i]) - (S[j] - S[i])`` (``C``, ``S``
    prefix sums of counts and of count * value).  ``w`` is Monge because
    ``w(a, c) - w(b, c) - w(a, d) + w(b, d) = -(v[d-1] - v[c-1]) (C[b] - C[a]) <= 0``,
    so the leftmost argmin over ``i`` is non-decreasing in ``j``.
    """
    n = len(values)
    prefix_count = np.concatenate([[0.0], np.cumsum(counts)])
    prefix_sum = np.concatenate([[0.0], np.cumsum(counts * values)])
    top = np.concatenate([[0.0], values])  # top[j] = values[j-1], the boundary that closes j

    def interval_cost(i, j):
        return top[j] * (prefix_count[j] - prefix_count[i]) - (prefix_sum[j] - prefix_sum[i])

    previous = np.full(n + 1, np.inf)
    all_j = np.arange(1, n + 1)
    previous[1:] = interval_cost(np.zeros(n, dtype=np.int64), all_j)
    choices = []  # choices[b-2][j]: split point of the last bucket in layer b
    for layer in range(2, num_buckets + 1):
        current = np.full(n + 1, np.inf)
        choice = np.zeros(n + 1, dtype=np.int64)
        _solve_layer(previous, current, choice, interval_cost, layer, n)
        choices.append(choice)
        previous = current

    bounds = [n - 1]
    j = n
    for choice in reversed(choices):
        j = int(choice[j])
        bounds.append(j - 1)
    return np.array(bounds[::-1], dtype=np.int64), float(previous[n])


def _solve_layer(previous, current, choice, interval_cost, layer, n):
    """Fill ``current[j]`` for ``j`` in ``[layer, n]`` by level-synchronous divide and conquer.

    Every pending sub-problem is a range of ``j`` with a range of allowed split
    points ``i``; one pass evaluates the middle ``j`` of all of them at once.
    """
    j_lo = np.array([layer])
    j_hi = np.array([n])
    opt_lo = np.array([layer - 1])
    opt_hi = np.array([n - 1])
    while len(j_lo):
        mid = (j_lo + j_hi) // 2
        cand_hi = np.minimum(mid - 1, opt_hi)
        lengths = cand_hi - opt_lo + 1
        starts = np.concatenate([[0], np.cumsum(lengths)[:-1]])
        total = int(lengths.sum())
        offsets = np.arange(total) - np.repeat(starts, lengths)
        i = np.repeat(opt_lo, lengths) + offsets
        j = np.repeat(mid, lengths)
        value = previous[i] + interval_cost(i, j)
        best_value = np.minimum.reduceat(value, starts)
        is_best = value == np.repeat(best_value, lengths)
        first = np.minimum.reduceat(np.where(is_best, np.arange(total), total), starts)
        best_i = i[first]
        current[mid] = best_value
        choice[mid] = best_i
        left = j_lo <= mid - 1
        right = mid + 1 <= j_hi
        j_lo, j_hi, opt_lo, opt_hi = (
            np.concatenate([j_lo[left], mid[right] + 1]),
            np.concatenate([mid[left] - 1, j_hi[right]]),
            np.concatenate([opt_lo[left], best_i[right]]),
            np.concatenate([best_i[left], opt_hi[right]]),
        )


# ---------------------------------------------------------------------- evaluation


def _as_boundaries(buckets) -> np.ndarray:
    boundaries = np.asarray(buckets)
    if boundaries.ndim != 1 or boundaries.size == 0:
        raise ValueError("buckets must be a non-empty 1-D sequence of boundaries")
    if not np.issubdtype(boundaries.dtype, np.number) or boundaries.dtype == bool:
        raise ValueError(f"buckets must be numbers, got dtype {boundaries.dtype}")
    return np.unique(boundaries)


def bucketed_sizes(sizes, buckets) -> np.ndarray:
    """Each size rounded up to the smallest boundary that fits (fairseq's ``get_bucketed_sizes``).

    Raises ``ValueError`` if a size exceeds the largest boundary.
    """
    array = as_sizes(sizes)
    boundaries = _as_boundaries(buckets)
    index = np.searchsorted(boundaries, array, side="left")
    too_long = index == len(boundaries)
    if too_long.any():
        worst = array[too_long].max()
        raise ValueError(f"size {worst} is longer than the largest bucket {boundaries[-1]}")
    return boundaries[index]


def padding_waste(sizes, buckets) -> float:
    """Fraction of padded positions that are padding: ``1 - sum(sizes) / sum(bucketed sizes)``.

    The same figure as the share of zeros in the resulting attention masks.
    """
    padded = bucketed_sizes(sizes, buckets)
    total = float(np.sum(padded, dtype=np.float64))
    if total == 0:
        return 0.0
    return 1.0 - float(np.sum(as_sizes(sizes), dtype=np.float64)) / total


# ------------------------------------------------------------------------- collate


def bucket_collate(
    buckets,
    pad_value=0,
    keys=None,
    *,
    padding_side: str = "right",
    truncate: bool = False,
    return_tensors: str = "pt",
):
    """Build a ``collate_fn`` that pads each batch's length up to the smallest bucket that fits.

    ``buckets``: boundaries, e.g. from :func:`optimal_buckets`.  Items are
    sequences (lists, 1-D or N-D tensors/arrays padded along their first
    dimension) or mappings of them (``input_ids``, ``attention_mask``,
    ``token_type_ids``, ...).  One length is chosen per batch from the longest
    padded field, so all padded keys of a batch share the bucket.

    ``pad_value``: a number for every padded key, or a dict ``{key: value}``;
    keys missing from the dict use the Hugging Face defaults
    (``attention_mask``/``token_type_ids`` 0, ``special_tokens_mask`` 1,
    ``labels`` -100) and then ``pad_value[None]`` or 0.
    ``keys``: the mapping keys to pad; default every key whose values are
    sequences.  Other keys are stacked as they are (numbers) or kept as lists.
    ``padding_side``: ``"right"`` (default) or ``"left"`` (decoder-only generation).
    ``truncate``: cut items longer than the largest bucket to it (keeping the
    start) instead of raising ``ValueError``.
    ``return_tensors``: ``"pt"`` (torch) or ``"np"`` (numpy).
    """
    boundaries = _as_boundaries(buckets)
    if padding_side not in ("right", "left"):
        raise ValueError(f"padding_side must be 'right' or 'left', got {padding_side!r}")
    if return_tensors not in ("pt", "np"):
        raise ValueError(f"return_tensors must be 'pt' or 'np', got {return_tensors!r}")
    pad_keys = None if keys is None else tuple(keys)
    largest = int(boundaries[-1])

    def pad_value_for(key):
        if isinstance(pad_value, Mapping):
            if key in pad_value:
                return pad_value[key]
            if key in DEFAULT_KEY_PAD_VALUES:
                return DEFAULT_KEY_PAD_VALUES[key]
            return pad_value.get(None, 0)
        if key in DEFAULT_KEY_PAD_VALUES:
            return DEFAULT_KEY_PAD_VALUES[key]
        return pad_value

    def target_length(longest):
        if longest > largest:
            if not truncate:
                raise ValueError(
                    f"item of length {longest} is longer than the largest bucket {largest}; "
                    "add a larger bucket or pass truncate=True"
                )
            return largest
        return int(boundaries[np.searchsorted(boundaries, longest, side="left")])

    def collate(batch):
        if not isinstance(batch, Sequence) or isinstance(batch, (str, bytes)) or len(batch) == 0:
            raise ValueError("bucket_collate expects a non-empty list of items")
        first = batch[0]
        if isinstance(first, Mapping):
            names = list(first)
            for item in batch:
                if not isinstance(item, Mapping) or list(item) != names:
                    raise ValueError("all items of a batch must be mappings with the same keys")
            padded = [k for k in names if (k in pad_keys if pad_keys is not None else _is_sequence(first[k]))]
            if pad_keys is not None:
                missing = [k for k in pad_keys if k not in names]
                if missing:
                    raise ValueError(f"keys {missing} are not in the batch items (keys: {names})")
            columns = {k: [_to_numpy(item[k]) for item in batch] for k in padded}
            longest = max((len(v) for col in columns.values() for v in col), default=0)
            length = target_length(longest)
            out = {}
            for k in names:
                if k in columns:
                    out[k] = _finish(_pad_stack(columns[k], length, pad_value_for(k), padding_side), return_tensors)
                else:
                    out[k] = _stack_plain([item[k] for item in batch], return_tensors)
            return _rewrap(first, out)
        rows = [_to_numpy(item) for item in batch]
        length = target_length(max(len(r) for r in rows))
        return _finish(_pad_stack(rows, length, pad_value_for(None), padding_side), return_tensors)

    collate.buckets = boundaries
    return collate


def _is_sequence(value) -> bool:
    if isinstance(value, (str, bytes)):
        return False
    shape = getattr(value, "shape", None)
    if shape is not None:
        return len(shape) >= 1
    return isinstance(value, Sequence)


def _to_numpy(value) -> np.ndarray:
    if type(value).__module__.startswith("torch"):
        # the collate function runs in the data pipeline, never inside a compiled region
        value = value.detach().cpu().numpy()  # noqa: DYN301
    array = np.asarray(value)
    if array.ndim == 0:
        raise ValueError("cannot pad a scalar item; items must be sequences")
    return array


def _pad_stack(rows, length, fill, side) -> np.ndarray:
    """Stack 1-D/N-D rows padded (or cut) to ``length`` along their first dimension."""
    trailing = rows[0].shape[1:]
    dtype = np.result_type(*[r.dtype for r in rows])
    if any(r.shape[1:] != trailing for r in rows):
        raise ValueError("items differ in a dimension other than the first; only the first is padded")
    out = np.full((len(rows), length) + trailing, fill, dtype=dtype)
    for row_index, row in enumerate(rows):
        row = row[:length]
        if side == "right":
            out[row_index, : len(row)] = row
        else:
            out[row_index, length - len(row):] = row
    return out


def _finish(array, return_tensors):
    if return_tensors == "np":
        return array
    import torch  # lazy: the numpy-only parts of this module never need it

    return torch.from_numpy(array)


def _stack_plain(values, return_tensors):
    """Numbers and same-shaped arrays are stacked; anything else (strings, ids) stays a list."""
    try:
        array = np.asarray([_to_numpy(v) if hasattr(v, "shape") else v for v in values])
    except (ValueError, TypeError):
        return list(values)
    if array.dtype == object or not (np.issubdtype(array.dtype, np.number) or array.dtype == bool):
        return list(values)
    return _finish(array, return_tensors)


def _rewrap(first, out: dict):
    """Return the same mapping type as the items when it can be built from a dict (e.g. BatchEncoding)."""
    if type(first) is dict:
        return out
    try:
        return type(first)(out)
    except Exception:  # a mapping type we cannot construct: a plain dict is the honest fallback
        return out


# ------------------------------------------------------------------------- sampler


class BucketBatchSampler:
    """Batches of item indices grouped by bucket, with a token budget (fairseq ``max_tokens`` style).

    Each item goes to the smallest bucket that fits its length; every batch
    holds items of one bucket only, so after :func:`bucket_collate` a batch's
    shape is ``(batch size of that bucket, bucket)``.  With ``max_tokens`` a
    bucket's batch size is ``max_tokens // bucket`` (larger batches for shorter
    items), rounded down to a multiple of ``batch_size_multiple``; with
    ``batch_size`` it is fixed; with both, the smaller.  The last, short batch
    of each bucket is dropped when ``drop_last=True`` (then every shape is
    constant) and kept otherwise.

    An item longer than the largest bucket raises ``ValueError``, unless
    ``truncate=True`` puts it in the largest bucket (pair it with
    ``bucket_collate(..., truncate=True)``).

    Pass it to ``DataLoader(dataset, batch_sampler=sampler, collate_fn=...)``.
    ``shuffle`` reorders items within buckets and batches across buckets, from
    ``seed`` and the epoch set by :meth:`set_epoch` (as ``DistributedSampler``).
    """

    def __init__(
        self,
        lengths,
        buckets,
        *,
        max_tokens: int | None = None,
        batch_size: int | None = None,
        batch_size_multiple: int = 1,
        shuffle: bool = True,
        drop_last: bool = False,
        seed: int = 0,
        truncate: bool = False,
    ):
        if max_tokens is None and batch_size is None:
            raise ValueError("give max_tokens, batch_size or both")
        for name, value in (("max_tokens", max_tokens), ("batch_size", batch_size)):
            if value is not None and (isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 1):
                raise ValueError(f"{name} must be a positive integer, got {value!r}")
        if isinstance(batch_size_multiple, bool) or not isinstance(batch_size_multiple, (int, np.integer)) \
                or batch_size_multiple < 1:
            raise ValueError(f"batch_size_multiple must be a positive integer, got {batch_size_multiple!r}")
        self.lengths = as_sizes(lengths)
        self.buckets = _as_boundaries(buckets)
        if truncate:
            index = np.minimum(np.searchsorted(self.buckets, self.lengths, side="left"), len(self.buckets) - 1)
        else:
            bucketed = bucketed_sizes(self.lengths, self.buckets)
            index = np.searchsorted(self.buckets, bucketed, side="left")
        self.bucket_of_item = index
        self.batch_sizes = {}
        for position, bound in enumerate(self.buckets):
            size = batch_size if batch_size is not None else math.inf
            if max_tokens is not None:
                size = min(size, max_tokens // max(int(math.ceil(bound)), 1))
            if size >= batch_size_multiple:
                size = (size // batch_size_multiple) * batch_size_multiple
            if size < 1:
                raise ValueError(
                    f"max_tokens={max_tokens} is smaller than bucket {bound}: not even one item fits"
                )
            self.batch_sizes[position] = int(size)
        self.shuffle = shuffle
        self.drop_last = drop_last
        self.seed = seed
        self.epoch = 0

    def set_epoch(self, epoch: int) -> None:
        self.epoch = int(epoch)

    def _batches(self):
        rng = np.random.default_rng([self.seed, self.epoch]) if self.shuffle else None
        batches = []
        for position in range(len(self.buckets)):
            members = np.flatnonzero(self.bucket_of_item == position)
            if rng is not None:
                members = rng.permutation(members)
            size = self.batch_sizes[position]
            for start in range(0, len(members), size):
                chunk = members[start:start + size]
                if len(chunk) < size and self.drop_last:
                    continue
                batches.append(chunk.tolist())
        if rng is not None:
            order = rng.permutation(len(batches))
            batches = [batches[i] for i in order]
        return batches

    def __iter__(self):
        return iter(self._batches())

    def __len__(self) -> int:
        total = 0
        for position in range(len(self.buckets)):
            members = int(np.count_nonzero(self.bucket_of_item == position))
            size = self.batch_sizes[position]
            total += members // size if self.drop_last else -(-members // size)
        return total
