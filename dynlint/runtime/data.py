"""Input-shape report for data loaders, a loader wrapper that keeps one shape, and one that
pads the short last batch to the batch size.

``data_dynamicity(loader)`` follows Gaudi's tool of the same name: it iterates
the loader, takes the shape signature of every batch (tensors, arrays, lists,
tuples, dicts, dataclasses, ``BatchEncoding``-like mappings), prints a
``Shape | Count`` table sorted by count with the lines
``Number of unique shapes: N`` and
``There is {no|a little|some|a lot of} dynamicity in input data shapes``,
and returns the histogram.  On top of that: ``max_batches=``, iterable
datasets (no ``len``), a progress bar when stderr is a terminal, and the share
of padding when batches carry an attention or padding mask.

``pad_last_batch(loader)`` keeps every sample and every batch at the batch
size: a short batch is padded with copies of its last row, and each batch
comes with the number of its real rows.

Nothing here imports torch at import time: batches are inspected through
:mod:`dynlint.runtime.signature` and the masks through their own methods
(``pad_last_batch`` imports torch or numpy only to pad a batch of theirs).
"""

from __future__ import annotations

import dataclasses
import sys
import time
import warnings
from collections import Counter
from collections.abc import Mapping

from dynlint.runtime.signature import format_signature, iter_leaves, shape_key, signature

__all__ = ["data_dynamicity", "const_shape_dataloader", "pad_last_batch", "ShapeHistogram", "dynamicity_level"]

# Masks where non-zero marks a real token (Hugging Face) ...
TOKEN_MASK_KEYS = ("attention_mask", "input_mask")
# ... and masks where non-zero marks padding (fairseq, nn.MultiheadAttention).
PADDING_MASK_KEYS = ("padding_mask", "key_padding_mask", "src_key_padding_mask")

_PROGRESS_DELAY_S = 1.0  # no bar for loaders that finish quickly
_PROGRESS_EVERY_S = 0.1


def dynamicity_level(unique_shapes: int) -> str:
    """Gaudi's wording: 1 -> "no", > 1 -> "a little", > 5 -> "some", > 20 -> "a lot of"."""
    if unique_shapes > 20:
        return "a lot of"
    if unique_shapes > 5:
        return "some"
    if unique_shapes > 1:
        return "a little"
    return "no"


class ShapeHistogram(Counter):
    """Batch shape signature -> number of batches, most common first.

    Keys are the hashable signatures of :func:`dynlint.runtime.signature.signature`;
    :meth:`describe` turns one into the text shown in the table.  As with Gaudi's
    result, a histogram can also be looked up (``[]``, ``in``, ``get``) and compared
    (``==`` with a plain dict) by shape tuple: ``hist[(4, 3, 30, 30)]``,
    ``hist[((7, 1, 28, 28), (7,))]``; :meth:`shapes` gives that dict (signatures
    that differ only in dtype or device add up under one shape).

    Attributes: ``batches`` (batches seen), ``complete`` (False when
    ``max_batches`` stopped the pass early), ``padding_waste`` (fraction of
    mask positions that are padding, or None without a mask) and
    ``mask_key`` (the mask it was measured on).
    """

    batches: int = 0
    complete: bool = True
    padding_waste: float | None = None
    mask_key: str | None = None

    @staticmethod
    def describe(sig) -> str:
        return format_signature(sig)

    def shapes(self) -> dict:
        """{shape tuple: count}, keyed as Gaudi's ``data_dynamicity`` result is."""
        by_shape: dict = {}
        for sig, count in self.items():
            key = shape_key(sig)
            by_shape[key] = by_shape.get(key, 0) + count
        return by_shape

    def __missing__(self, key):
        return self.shapes().get(key, 0) if _hashable(key) else 0

    def __contains__(self, key):
        return super().__contains__(key) or (_hashable(key) and key in self.shapes())

    def get(self, key, default=None):
        if super().__contains__(key):
            return super().__getitem__(key)
        shapes = self.shapes()
        return shapes[key] if _hashable(key) and key in shapes else default

    def __eq__(self, other):
        if isinstance(other, Mapping) and not isinstance(other, Counter):
            return dict(self) == dict(other) or self.shapes() == dict(other)
        return super().__eq__(other)

    def __ne__(self, other):
        result = self.__eq__(other)
        return result if result is NotImplemented else not result

    __hash__ = None

    @property
    def unique_shapes(self) -> int:
        return len(self)

    @property
    def level(self) -> str:
        return dynamicity_level(len(self))

    def report(self) -> str:
        """The printed report: the table, the Gaudi summary lines, then the extras."""
        labels = _unambiguous_labels(list(self))
        shape_width = max([len("Shape")] + [len(label) for label in labels.values()])
        count_width = max([len("Count")] + [len(str(count)) for count in self.values()])
        lines = [
            f"{'Shape':<{shape_width}} | {'Count':>{count_width}}",
            f"{'-' * shape_width}-+-{'-' * count_width}",
        ]
        for sig, count in self.items():
            lines.append(f"{labels[sig]:<{shape_width}} | {count:>{count_width}}")
        lines.append(f"Number of unique shapes: {len(self)}")
        if self:
            lines.append(f"There is {self.level} dynamicity in input data shapes")
        else:   # Gaudi's wording for a loader that yielded nothing
            lines.append("Dataset looks empty")
        if not self.complete:
            lines.append(f"(stopped after max_batches={self.batches} batches)")
        if self.padding_waste is not None:
            lines.append(f"Padding waste: {100 * self.padding_waste:.1f}% of {self.mask_key} positions are padding")
        return "\n".join(lines)


def data_dynamicity(
    dataloader,
    *,
    max_batches: int | None = None,
    progress: bool | None = None,
    file=None,
    scalars_by_value: bool = True,
    mask_key: str | None = None,
) -> ShapeHistogram:
    """Iterate ``dataloader``, print how many distinct input shapes it yields, return the histogram.

    ``max_batches``: stop after that many batches (the report says so).
    ``progress``: None draws a bar on stderr only when it is a terminal and the
    pass takes more than a second; True/False force it on/off.
    ``file``: where the report goes (default stdout).
    ``scalars_by_value``: as Gaudi, non-tensor leaves (Python numbers,
    strings) count by value, with a warning naming their type; False counts
    them by type.
    ``mask_key``: the batch key of the attention/padding mask used for the
    padding-waste figure; default the first of ``attention_mask``,
    ``input_mask`` (zeros are padding), ``padding_mask``, ``key_padding_mask``,
    ``src_key_padding_mask`` (non-zeros are padding) found in the batch.
    """
    if max_batches is not None and (isinstance(max_batches, bool) or not isinstance(max_batches, int)
                                    or max_batches < 1):
        raise ValueError(f"max_batches must be a positive integer, got {max_batches!r}")
    total = _length(dataloader)
    if max_batches is not None:
        total = max_batches if total is None else min(total, max_batches)
    bar = _ProgressBar(total, enabled=progress)

    counts: Counter = Counter()
    first_seen: dict = {}
    warned_types: set = set()
    padding_positions = 0
    mask_positions = 0
    used_mask_key = None
    batches = 0
    complete = True
    try:
        for batch in dataloader:
            sig = signature(batch, scalars_by_value=scalars_by_value)
            _warn_non_tensor_leaves(sig, warned_types, scalars_by_value)
            counts[sig] += 1
            first_seen.setdefault(sig, batches)
            found = _find_mask(batch, mask_key)
            if found is not None:
                key, mask = found
                padding, positions = _mask_padding(mask, key)
                padding_positions += padding
                mask_positions += positions
                used_mask_key = used_mask_key or key
            batches += 1
            bar.update(batches)
            if max_batches is not None and batches >= max_batches:
                # stop without fetching another batch; only a known length proves nothing was left
                length = _length(dataloader)
                complete = length is not None and length <= batches
                break
    finally:
        bar.close()

    histogram = ShapeHistogram()
    # most common first; ties keep the order the shapes first appeared in
    for sig in sorted(counts, key=lambda s: (-counts[s], first_seen[s])):
        histogram[sig] = counts[sig]
    histogram.batches = batches
    histogram.complete = complete
    if used_mask_key is not None:
        histogram.mask_key = used_mask_key
        histogram.padding_waste = padding_positions / mask_positions if mask_positions else 0.0
    print(histogram.report(), file=file if file is not None else sys.stdout)
    return histogram


class const_shape_dataloader:  # noqa: N801 -- lower case to match Gaudi's public name
    """Batches of one shape only, in two modes.

    ``const_shape_dataloader(loader, maxlen)`` -- Gaudi's call and meaning: read
    the loader until ``maxlen`` batches of one shape have been seen (or it ends)
    and keep those ``maxlen`` batches (or, at the end, the most common shape's
    batches).  The result is a sized, re-iterable loader over the kept batches,
    for checking a model for dynamic ops with the input shape held fixed.  An
    empty loader raises ``ValueError`` (the dataset looks empty).

    ``const_shape_dataloader(loader)`` -- a lazy filter (ours): each pass
    iterates the loader and yields only batches whose shape signature equals
    ``reference`` (an example batch) or, by default, the first batch's.
    Dropped batches are counted in ``dropped`` (per pass) and reported by one
    warning at the end of each pass that dropped any.

    In both modes ``reference=`` picks the shape to keep, and attribute access
    falls through to the wrapped loader (``dataset``, ``batch_size``, ...).
    Dropping is the blunt fix; ``drop_last=True`` on the DataLoader or
    :mod:`dynlint.runtime.buckets` keep the data.
    """

    def __init__(self, dataloader, maxlen=None, *, reference=None, scalars_by_value: bool = True,
                 warn: bool = True):
        if maxlen is not None and (isinstance(maxlen, bool) or not isinstance(maxlen, int) or maxlen < 1):
            hint = " (pass an example batch as reference=...)" if hasattr(maxlen, "shape") else ""
            raise TypeError(f"const_shape_dataloader: maxlen must be a positive int, got {maxlen!r:.60}{hint}")
        self.dataloader = dataloader
        self.maxlen = maxlen
        self.scalars_by_value = scalars_by_value
        self.warn = warn
        self.reference = None if reference is None else signature(reference, scalars_by_value)
        self.kept = 0
        self.dropped = 0
        self.batches = None
        if maxlen is not None:
            self.batches = self._collect(maxlen)
            self.kept = len(self.batches)

    def _collect(self, maxlen: int) -> list:
        groups: dict = {}
        for batch in self.dataloader:
            sig = signature(batch, self.scalars_by_value)
            if self.reference is not None and sig != self.reference:
                continue
            group = groups.setdefault(sig, [])
            group.append(batch)
            if len(group) == maxlen:   # stop reading: Gaudi returns the first full group
                self.reference = sig
                return group
        if not groups:
            what = "a batch of the reference shape" if self.reference is not None else "any batch"
            raise ValueError(f"const_shape_dataloader: the loader yielded no {what}; the dataset looks empty")
        sig = max(groups, key=lambda key: len(groups[key]))   # most batches; ties: first seen
        self.reference = sig
        return groups[sig]

    def __len__(self):
        if self.batches is None:
            raise TypeError("a lazily filtered const_shape_dataloader has no length; pass maxlen for a fixed one")
        return len(self.batches)

    def __iter__(self):
        if self.batches is not None:
            yield from self.batches
            return
        self.kept = 0
        self.dropped = 0
        for batch in self.dataloader:
            sig = signature(batch, self.scalars_by_value)
            if self.reference is None:
                self.reference = sig
            if sig == self.reference:
                self.kept += 1
                yield batch
            else:
                self.dropped += 1
        if self.dropped and self.warn:
            warnings.warn(
                f"const_shape_dataloader dropped {self.dropped} of {self.kept + self.dropped} batches "
                f"whose shape differs from {format_signature(self.reference)}",
                stacklevel=2,
            )

    def __getattr__(self, name):
        if name == "dataloader":  # not set yet (e.g. while unpickling): avoid recursion
            raise AttributeError(name)
        return getattr(self.dataloader, name)


class pad_last_batch:  # noqa: N801 -- a loader wrapper, named like const_shape_dataloader
    """Every batch at the full batch size, with the count of its real rows: yields ``(batch, n)``.

    For loaders that must see every sample (evaluation, inference, prediction:
    DYN401 offers no ``drop_last=True`` there) but whose short last batch is one
    more input shape to compile.  A batch with ``n < batch_size`` rows is padded
    along dim 0 to ``batch_size`` by repeating its last row, in every batched
    leaf: tensors, numpy arrays, and lists of strings whose length is the
    batch's row count, inside lists, tuples (named ones too), dicts (and
    ``BatchEncoding``-like mappings) and dataclasses.  Repeating a real row keeps
    the padding valid input (token ids in range, no NaN, no empty sequence).
    Leaves of another length (a batch-wide tensor) and Python numbers are left
    as they are.  Use the count to drop what the padded rows produced::

        for batch, n in pad_last_batch(loader):
            predictions.append(model(batch)[:n])

    ``batch_size`` defaults to the loader's own (give it for a loader built with
    a ``batch_sampler``).  Batches larger than ``batch_size`` pass unchanged; a
    batch without a batched leaf raises ``TypeError``.  ``len()`` and attribute
    access fall through to the wrapped loader.
    """

    def __init__(self, dataloader, batch_size=None):
        if batch_size is None:
            batch_size = getattr(dataloader, "batch_size", None)
        if isinstance(batch_size, bool) or not isinstance(batch_size, int) or batch_size < 1:
            raise TypeError(f"pad_last_batch: batch_size must be a positive int (the loader's own by default), "
                            f"got {batch_size!r:.60}")
        self.dataloader = dataloader
        self.batch_size = batch_size

    def __len__(self):
        return len(self.dataloader)

    def __iter__(self):
        for batch in self.dataloader:
            rows = _batch_rows(batch)
            if rows is None:
                raise TypeError(f"pad_last_batch: no tensor, array or list of strings in the batch "
                                f"{format_signature(signature(batch))}")
            if 0 < rows < self.batch_size:
                batch = _pad_rows(batch, rows, self.batch_size)
            yield batch, rows

    def __getattr__(self, name):
        if name == "dataloader":  # not set yet (e.g. while unpickling): avoid recursion
            raise AttributeError(name)
        return getattr(self.dataloader, name)


def _is_string_list(value) -> bool:
    return isinstance(value, (list, tuple)) and bool(value) and all(isinstance(v, (str, bytes)) for v in value)


def _batch_rows(batch, _depth: int = 0):
    """The row count of a batch: dim 0 of its first tensor or array (or the length of its first
    list of strings), depth first; None when it has neither."""
    if _depth > 32:
        return None
    shape = getattr(batch, "shape", None)
    if shape is not None and not isinstance(batch, type):
        return int(shape[0]) if len(shape) else None
    if _is_string_list(batch):
        return len(batch)
    for item in _children(batch):
        rows = _batch_rows(item, _depth + 1)
        if rows is not None:
            return rows
    return None


def _children(value):
    if isinstance(value, Mapping):
        return list(value.values())
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return [getattr(value, f.name) for f in dataclasses.fields(value)]
    if isinstance(value, (list, tuple)):
        return list(value)
    return []


def _pad_rows(value, rows: int, size: int, _depth: int = 0):
    """``value`` with every leaf of ``rows`` rows padded to ``size`` by repeating its last row."""
    if _depth > 32:
        return value
    pad = lambda item: _pad_rows(item, rows, size, _depth + 1)  # noqa: E731
    shape = getattr(value, "shape", None)
    if shape is not None and not isinstance(value, type):
        if not len(shape) or shape[0] != rows:
            return value
        extra = size - rows
        if type(value).__module__.startswith("numpy"):
            import numpy as np  # noqa: PLC0415

            return np.concatenate([value, np.repeat(value[-1:], extra, axis=0)], axis=0)
        import torch  # noqa: PLC0415

        return torch.cat([value, value[-1:].expand(extra, *value.shape[1:])], dim=0)
    if _is_string_list(value):
        if len(value) != rows:
            return value
        return type(value)([*value, *[value[-1]] * (size - rows)])
    if isinstance(value, Mapping):
        padded = {key: pad(item) for key, item in value.items()}
        try:
            return type(value)(padded)
        except TypeError:
            return padded
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return dataclasses.replace(value, **{f.name: pad(getattr(value, f.name))
                                             for f in dataclasses.fields(value) if f.init})
    if isinstance(value, tuple) and hasattr(value, "_fields"):
        return type(value)(*[pad(item) for item in value])
    if isinstance(value, (list, tuple)):
        return type(value)(pad(item) for item in value)
    return value


# ------------------------------------------------------------------------- helpers


def _hashable(key) -> bool:
    try:
        hash(key)
    except TypeError:
        return False
    return True


def _length(dataloader):
    try:
        return len(dataloader)
    except (TypeError, NotImplementedError, AttributeError):  # iterable datasets have no length
        return None


def _warn_non_tensor_leaves(sig, warned_types: set, by_value: bool) -> None:
    for leaf in iter_leaves(sig):
        head = leaf[0]
        if head == "scalar":
            type_name = type(leaf[1]).__name__ if by_value else leaf[1]
        elif head == "object":
            type_name = leaf[1]
        else:
            continue
        if type_name in warned_types or type_name == "NoneType":
            continue
        warned_types.add(type_name)
        how = "by value" if by_value and head == "scalar" else "by type"
        warnings.warn(
            f"data_dynamicity: batches contain non-tensor values of type {type_name}; they are counted {how}",
            stacklevel=3,
        )


def _unambiguous_labels(sigs) -> dict:
    """Compact labels; signatures that print alike (they differ in dtype or device) get the full form."""
    labels = {sig: format_signature(sig) for sig in sigs}
    seen = Counter(labels.values())
    for sig, label in labels.items():
        if seen[label] > 1:
            labels[sig] = label + "  " + _dtype_suffix(sig)
    return labels


def _dtype_suffix(sig) -> str:
    parts = []
    for leaf in iter_leaves(sig):
        if leaf[0] == "tensor":
            parts.append(f"{leaf[2]}@{leaf[3]}")
        elif leaf[0] == "ndarray":
            parts.append(leaf[2])
    return "(" + ", ".join(parts) + ")"


def _find_mask(batch, wanted, depth=0):
    """First (key, mask) in the batch, searching mappings, dataclasses, lists and tuples."""
    if depth > 8:
        return None
    keys = (wanted,) if wanted is not None else TOKEN_MASK_KEYS + PADDING_MASK_KEYS
    fields = None
    if isinstance(batch, Mapping):
        fields = batch
    elif dataclasses.is_dataclass(batch) and not isinstance(batch, type):
        fields = {f.name: getattr(batch, f.name) for f in dataclasses.fields(batch)}
    if fields is not None:
        for key in keys:
            if key in fields and hasattr(fields[key], "shape"):
                return key, fields[key]
        children = fields.values()
    elif isinstance(batch, (list, tuple)):
        children = batch
    else:
        return None
    for child in children:
        found = _find_mask(child, wanted, depth + 1)
        if found is not None:
            return found
    return None


def _mask_padding(mask, key):
    """(padding positions, all positions) of a torch or numpy mask."""
    if type(mask).__module__.startswith("torch"):
        positions = int(mask.numel())
        nonzero = int(mask.count_nonzero())
    else:
        import numpy as np

        positions = int(np.size(mask))
        nonzero = int(np.count_nonzero(mask))
    padding = nonzero if key in PADDING_MASK_KEYS else positions - nonzero
    return padding, positions


class _ProgressBar:
    """A one-line bar on stderr, drawn only on a terminal (or when forced) and after a short delay."""

    def __init__(self, total, enabled):
        stream = sys.stderr
        if enabled is None:
            enabled = bool(getattr(stream, "isatty", lambda: False)())
            delay = _PROGRESS_DELAY_S
        else:
            delay = 0.0
        self.stream = stream
        self.enabled = enabled
        self.total = total
        self.start = time.monotonic()
        self.show_after = self.start + delay
        self.last_draw = 0.0
        self.drawn = False

    def update(self, done: int) -> None:
        if not self.enabled:
            return
        now = time.monotonic()
        if now < self.show_after or (self.drawn and now - self.last_draw < _PROGRESS_EVERY_S):
            return
        self.last_draw = now
        self.drawn = True
        rate = done / max(now - self.start, 1e-9)
        if self.total:
            width = 30
            filled = min(width, int(width * done / self.total))
            line = f"data_dynamicity [{'#' * filled}{'.' * (width - filled)}] {done}/{self.total} batches"
        else:
            line = f"data_dynamicity {done} batches"
        self.stream.write(f"\r{line} ({rate:.0f}/s)")
        self.stream.flush()

    def close(self) -> None:
        if self.drawn:
            self.stream.write("\r\033[K")  # erase the bar so the report starts on a clean line
            self.stream.flush()
