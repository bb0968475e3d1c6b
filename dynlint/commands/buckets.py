"""`dynlint buckets LENGTHS_FILE`: compare padding strategies on a file of item lengths.

For percentile (fairseq), optimal (least total padding), pad_to_multiple_of
and pad-to-max it prints the bucket boundaries, the number of distinct shapes
they produce and the padding waste (the share of padded positions that are
padding).  numpy only; never imports torch.
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import re
import sys

DEFAULT_NUM_BUCKETS = 5
DEFAULT_MULTIPLE = 8
_SHOWN_BOUNDARIES = 12  # longer boundary lists are elided in text output (JSON has them all)


def register(subparsers):
    p = subparsers.add_parser(
        "buckets",
        help="choose bucket boundaries for variable-length inputs and show the padding each strategy costs",
        description=(
            "Read item lengths (one per item) and compare percentile buckets (fairseq), optimal buckets "
            "(least total padding), pad_to_multiple_of and pad-to-max: boundaries, number of distinct "
            "shapes, padding waste."
        ),
    )
    p.add_argument(
        "lengths_file", metavar="LENGTHS_FILE",
        help="lengths, one per item: a text file (one number per line), a CSV/TSV file, or a .npy/.npz "
             "array; '-' reads text from stdin",
    )
    p.add_argument("-k", "--num-buckets", type=_positive_int, default=DEFAULT_NUM_BUCKETS, metavar="K",
                   help=f"number of buckets for percentile and optimal (default {DEFAULT_NUM_BUCKETS})")
    p.add_argument("--multiple", type=_positive_int, default=DEFAULT_MULTIPLE, metavar="M",
                   help=f"the pad_to_multiple_of value to compare (default {DEFAULT_MULTIPLE})")
    p.add_argument("--column", metavar="COLUMN",
                   help="for a file with several columns: the column's header name or 0-based index "
                        "(for .npz: the array name)")
    p.add_argument("--output-format", choices=("text", "json"), default="text",
                   help="text table (default) or JSON")
    p.set_defaults(func=run)


def _positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got {text!r}")
    return value


def run(args) -> int:
    check_lengths_path(args.lengths_file)
    np = _numpy()
    from dynlint.runtime import buckets as bk

    lengths = load_lengths(args.lengths_file, args.column)
    summary = compare_strategies(lengths, args.num_buckets, args.multiple, np, bk)
    summary = {"file": "<stdin>" if args.lengths_file == "-" else args.lengths_file, **summary}
    if args.output_format == "json":
        print(json.dumps(summary, indent=2))
    else:
        print(format_text(summary))
    return 0


# --------------------------------------------------------------------- analysis


def compare_strategies(lengths, num_buckets: int, multiple: int, np, bk) -> dict:
    """Boundaries, shape count and padding waste of each strategy, as plain JSON-able data."""
    strategies = [
        ("percentile", f"percentile (k={num_buckets})", bk.percentile_buckets(lengths, num_buckets)),
        ("optimal", f"optimal (k={num_buckets})", bk.optimal_buckets(lengths, num_buckets)),
        ("pad_to_multiple_of", f"pad_to_multiple_of {multiple}", bk.multiple_buckets(lengths, multiple)),
        ("pad_to_max", "pad to max", bk.max_bucket(lengths)),
    ]
    distinct = np.unique(lengths)
    rows = []
    for name, label, boundaries in strategies:
        rows.append({
            "name": name,
            "label": label,
            "shapes": int(len(boundaries)),
            "padding_waste_percent": round(100.0 * bk.padding_waste(lengths, boundaries), 4),
            "boundaries": [int(b) for b in boundaries],
        })
    rows.append({
        "name": "none",
        "label": "no bucketing",
        "shapes": int(len(distinct)),
        "padding_waste_percent": 0.0,
        "boundaries": None,  # one shape per distinct length: nothing to list
    })
    return {
        "lengths": int(len(lengths)),
        "distinct_lengths": int(len(distinct)),
        "min": int(lengths.min()),
        "median": float(np.median(lengths)),
        "max": int(lengths.max()),
        "num_buckets": num_buckets,
        "multiple": multiple,
        "strategies": rows,
    }


def format_text(summary: dict) -> str:
    median = summary["median"]
    median_text = f"{int(median):,}" if median == int(median) else f"{median:,.1f}"
    lines = [
        f"{summary['file']}: {summary['lengths']:,} lengths, {summary['distinct_lengths']:,} distinct, "
        f"min {summary['min']:,}, median {median_text}, max {summary['max']:,}",
        "",
    ]
    label_width = max(len("strategy"), *(len(r["label"]) for r in summary["strategies"]))
    header = f"{'strategy':<{label_width}}  {'shapes':>6}  {'padding waste':>13}  boundaries"
    lines.append(header)
    lines.append("-" * len(header))
    for row in summary["strategies"]:
        boundaries = ("(one shape per distinct length)" if row["boundaries"] is None
                      else _elide(row["boundaries"]))
        lines.append(f"{row['label']:<{label_width}}  {row['shapes']:>6}  "
                     f"{row['padding_waste_percent']:>12.1f}%  {boundaries}")
    return "\n".join(lines)


def _elide(values) -> str:
    if len(values) <= _SHOWN_BOUNDARIES:
        return ", ".join(str(v) for v in values)
    head = ", ".join(str(v) for v in values[:_SHOWN_BOUNDARIES - 3])
    tail = ", ".join(str(v) for v in values[-2:])
    return f"{head}, ..., {tail} ({len(values)} values)"


# ---------------------------------------------------------------------- loading


def _numpy():
    """numpy, or a one-line usage error (exit 2) when it is not installed."""
    from dynlint.errors import UsageError

    try:
        import numpy
    except ImportError:
        raise UsageError("dynlint buckets needs numpy (pip install numpy)") from None
    return numpy


def check_lengths_path(path: str) -> None:
    """A missing path or a directory is a usage error (checked before numpy is needed)."""
    from dynlint.errors import UsageError

    if path != "-":
        if not os.path.exists(path):
            raise UsageError(f"{path}: no such file")
        if os.path.isdir(path):
            raise UsageError(f"{path}: is a directory, expected a file of lengths")


def load_lengths(path: str, column: str | None):
    """Lengths as a 1-D int64 array; any problem raises UsageError with one line."""
    from dynlint.errors import UsageError

    check_lengths_path(path)
    np = _numpy()
    lowered = path.lower()
    if lowered.endswith(".npy") or lowered.endswith(".npz"):
        values = _load_numpy(path, column, np, UsageError)
        where = None
    else:
        values, where = _load_text(path, column, UsageError)
        values = np.array(values, dtype=np.float64)
    if values.size == 0:
        raise UsageError(f"{path}: no lengths found")
    return _validate(values, path, where, np, UsageError)


def _load_numpy(path, column, np, UsageError):
    try:
        with open(path, "rb") as handle:
            magic = handle.read(6)
    except OSError as exc:
        raise UsageError(f"{path}: cannot read ({exc.strerror or exc})") from None
    if magic != b"\x93NUMPY" and not magic.startswith(b"PK"):  # .npy header / .npz (zip) header
        raise UsageError(f"{path}: not a .npy or .npz file")
    try:
        loaded = np.load(path, allow_pickle=False)
    except (OSError, ValueError, EOFError) as exc:
        raise UsageError(f"{path}: not a readable numpy file ({_first_line(exc)})") from None
    if isinstance(loaded, np.lib.npyio.NpzFile):
        with loaded:
            names = list(loaded.files)
            if column is None:
                if len(names) != 1:
                    raise UsageError(f"{path}: holds arrays {names}; pick one with --column")
                column = names[0]
            if column not in names:
                raise UsageError(f"{path}: no array named {column!r} (arrays: {names})")
            try:
                loaded = loaded[column]
            except (OSError, ValueError) as exc:
                raise UsageError(f"{path}: array {column!r} is not readable ({_first_line(exc)})") from None
    elif column is not None:
        raise UsageError("--column applies to CSV/TSV/text and .npz files, not to .npy")
    array = np.asarray(loaded)
    if array.ndim == 2 and 1 in array.shape:
        array = array.reshape(-1)
    if array.ndim != 1:
        raise UsageError(f"{path}: expected a 1-D array of lengths, got shape {array.shape}")
    if array.dtype == bool or not (np.issubdtype(array.dtype, np.integer) or np.issubdtype(array.dtype, np.floating)):
        raise UsageError(f"{path}: expected numbers, got an array of dtype {array.dtype}")
    return array.astype(np.float64)


_SPLIT = re.compile(r"[\s,;]+")


def _load_text(path, column, UsageError):
    """(values, line numbers) from a text/CSV/TSV file; a non-numeric first row is a header."""
    try:
        if path == "-":
            text = sys.stdin.read()
        else:
            with open(path, encoding="utf-8-sig") as handle:
                text = handle.read()
    except UnicodeDecodeError:
        raise UsageError(f"{path}: not a text file (use .npy for binary arrays)") from None
    except OSError as exc:
        raise UsageError(f"{path}: cannot read ({exc.strerror or exc})") from None
    if "\0" in text:
        raise UsageError(f"{path}: not a text file (use .npy for binary arrays)")
    lowered = path.lower()
    if lowered.endswith(".csv") or lowered.endswith(".tsv"):
        delimiter = "\t" if lowered.endswith(".tsv") else ","
        rows = [(n, [f.strip() for f in fields])
                for n, fields in enumerate(csv.reader(text.splitlines(), delimiter=delimiter), 1)]
    else:
        rows = [(n, _SPLIT.split(line.strip())) for n, line in enumerate(text.splitlines(), 1)]
    rows = [(n, fields) for n, fields in rows if any(fields) and not fields[0].startswith("#")]
    if not rows:
        return [], []
    header = None
    if _looks_like_header(rows[0][1], rows[1][1] if len(rows) > 1 else None):
        header = rows[0][1]
        rows = rows[1:]
    width = len(header) if header is not None else len(rows[0][1]) if rows else 1
    index = _column_index(column, header, width, path, UsageError)
    values, where = [], []
    for line_number, fields in rows:
        if index >= len(fields):
            raise UsageError(f"{path}:{line_number}: has {len(fields)} fields, column {index} is missing")
        field = fields[index]
        if not _is_number(field):
            raise UsageError(f"{path}:{line_number}: {field!r} is not a length")
        values.append(float(field))
        where.append(line_number)
    return values, where


def _looks_like_header(first, second) -> bool:
    """A first row is a header when it has a word where the next row has a number.

    (A column of ids such as ``x0, x1`` is words in every row: data, not a header.)
    """
    words = [i for i, field in enumerate(first) if not _is_number(field)]
    if not words:
        return False
    if second is None:
        return len(words) == len(first)
    return any(i < len(second) and _is_number(second[i]) for i in words)


def _column_index(column, header, width, path, UsageError) -> int:
    if column is None:
        if width == 1:
            return 0
        names = ", ".join(header) if header is not None else f"{width} unnamed columns"
        raise UsageError(f"{path}: has {width} columns ({names}); pick one with --column")
    if header is not None and column in header:
        return header.index(column)
    if column.isdigit() and int(column) < width:
        return int(column)
    known = f" (columns: {', '.join(header)})" if header is not None else f" (0 to {width - 1})"
    raise UsageError(f"{path}: no column {column!r}{known}")


def _validate(values, path, where, np, UsageError):
    def locate(position):
        return f"{path}:{where[position]}" if where else f"{path}[{position}]"

    bad = np.flatnonzero(~np.isfinite(values))
    if bad.size:
        raise UsageError(f"{locate(bad[0])}: {values[bad[0]]} is not a length")
    bad = np.flatnonzero(values < 0)
    if bad.size:
        raise UsageError(f"{locate(bad[0])}: negative length {values[bad[0]]:g}")
    bad = np.flatnonzero(values != np.floor(values))
    if bad.size:
        raise UsageError(f"{locate(bad[0])}: {values[bad[0]]:g} is not a whole number")
    if values.max() >= 2 ** 53:
        raise UsageError(f"{path}: length {values.max():g} is too large")
    return values.astype(np.int64)


def _is_number(text: str) -> bool:
    try:
        float(text)  # "nan"/"inf" count as numbers here and are rejected later with their line
    except ValueError:
        return False
    return True


def _first_line(exc) -> str:
    return str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
