"""data_dynamicity and const_shape_dataloader on real torch DataLoaders and plain iterables."""

from __future__ import annotations

import dataclasses
import io
import subprocess
import sys
import warnings
from collections import UserDict

import numpy as np
import pytest

torch = pytest.importorskip("torch")
from torch.utils.data import DataLoader, IterableDataset, TensorDataset  # noqa: E402

from dynlint.runtime import const_shape_dataloader, data_dynamicity, pad_last_batch  # noqa: E402
from dynlint.runtime.data import dynamicity_level  # noqa: E402


def run_report(loader, **kwargs):
    out = io.StringIO()
    histogram = data_dynamicity(loader, file=out, **kwargs)
    return histogram, out.getvalue().splitlines()


def loader_with_lengths(lengths):
    """One batch per length: a (2, length) tensor."""
    return [torch.zeros(2, n) for n in lengths]


@pytest.mark.parametrize(
    "unique, words",
    [(1, "no"), (2, "a little"), (5, "a little"), (6, "some"), (20, "some"), (21, "a lot of"), (40, "a lot of")],
)
def test_gaudi_summary_lines_and_thresholds(unique, words):
    lengths = [3 + i for i in range(unique)] + [3]  # length 3 twice so it is the most common
    histogram, lines = run_report(loader_with_lengths(lengths))
    assert len(histogram) == unique
    assert f"Number of unique shapes: {unique}" in lines
    assert f"There is {words} dynamicity in input data shapes" in lines
    # the Gaudi lines come right after the table
    assert lines.index(f"Number of unique shapes: {unique}") == 2 + unique


def test_level_boundaries_match_gaudi():
    assert [dynamicity_level(n) for n in (1, 2, 5, 6, 20, 21)] == [
        "no", "a little", "a little", "some", "some", "a lot of"]


def test_mnist_like_last_partial_batch_gives_two_shapes():
    images = torch.randn(59, 1, 28, 28)  # 8 batches of 7 and one of 3
    labels = torch.randint(0, 10, (59,))
    # the short last batch is the point of this test
    histogram, lines = run_report(DataLoader(TensorDataset(images, labels), batch_size=7))  # noqa: DYN401
    assert list(histogram.values()) == [8, 1]
    assert histogram.batches == 9
    assert lines[0].split("|")[0].strip() == "Shape" and lines[0].split("|")[1].strip() == "Count"
    rows = [line.split("|") for line in lines[2:4]]
    assert [r[0].strip() for r in rows] == ["[[7, 1, 28, 28], [7]]", "[[3, 1, 28, 28], [3]]"]
    assert [int(r[1]) for r in rows] == [8, 1]
    assert "Number of unique shapes: 2" in lines
    assert "There is a little dynamicity in input data shapes" in lines


def test_drop_last_gives_one_shape():
    dataset = TensorDataset(torch.randn(59, 4), torch.randint(0, 10, (59,)))
    histogram, lines = run_report(DataLoader(dataset, batch_size=7, drop_last=True))
    assert len(histogram) == 1 and histogram.batches == 8
    assert "There is no dynamicity in input data shapes" in lines


def test_table_sorted_by_count_then_first_seen():
    lengths = [5, 9, 9, 7, 9, 7]  # 9 x3, 7 x2, 5 x1
    histogram, lines = run_report(loader_with_lengths(lengths))
    assert list(histogram.values()) == [3, 2, 1]
    assert [line.split("|")[0].strip() for line in lines[2:5]] == ["[2, 9]", "[2, 7]", "[2, 5]"]


def test_max_batches_stops_early_and_says_so():
    fetched = []

    def batches():
        for n in range(100):
            fetched.append(n)
            yield torch.zeros(n + 1)

    histogram, lines = run_report(batches(), max_batches=4)
    assert histogram.batches == 4 and len(histogram) == 4
    assert fetched == [0, 1, 2, 3]  # no batch fetched beyond the limit
    assert not histogram.complete
    assert "(stopped after max_batches=4 batches)" in lines


def test_max_batches_equal_to_length_is_complete():
    histogram, lines = run_report(loader_with_lengths([1, 2, 3]), max_batches=3)
    assert histogram.complete and not any("stopped" in line for line in lines)


@pytest.mark.parametrize("bad", [0, -1, 2.5, True])
def test_max_batches_must_be_positive_int(bad):
    with pytest.raises(ValueError, match="max_batches"):
        data_dynamicity([], max_batches=bad, file=io.StringIO())


class VariableStream(IterableDataset):
    def __iter__(self):
        for n in (4, 4, 6, 4):
            yield torch.arange(n)


def test_iterable_dataset_without_length():
    histogram, lines = run_report(DataLoader(VariableStream(), batch_size=None))
    assert dict((h[1], c) for h, c in histogram.items()) == {(4,): 3, (6,): 1}
    assert "Number of unique shapes: 2" in lines


@dataclasses.dataclass
class Batch:
    input_ids: object
    attention_mask: object


class FakeBatchEncoding(UserDict):
    """Stands in for transformers.BatchEncoding (a UserDict subclass)."""


def test_dataclass_batches_and_padding_waste():
    mask = torch.tensor([[1, 1, 1, 0], [1, 1, 0, 0]])  # 3 of 8 positions are padding
    batches = [Batch(torch.zeros(2, 4, dtype=torch.long), mask)] * 2
    histogram, lines = run_report(batches)
    assert len(histogram) == 1
    assert histogram.padding_waste == pytest.approx(3 / 8)
    assert histogram.mask_key == "attention_mask"
    assert "Padding waste: 37.5% of attention_mask positions are padding" in lines


def test_batch_encoding_like_mapping_and_padding_waste_over_all_batches():
    first = FakeBatchEncoding(input_ids=torch.zeros(1, 4), attention_mask=torch.tensor([[1, 0, 0, 0]]))
    second = FakeBatchEncoding(input_ids=torch.zeros(1, 2), attention_mask=torch.tensor([[1, 1]]))
    histogram, _ = run_report([first, second])
    assert len(histogram) == 2
    assert histogram.padding_waste == pytest.approx(3 / 6)


def test_padding_mask_counts_nonzero_as_padding():
    # fairseq / nn.MultiheadAttention convention: True marks padding
    batch = {"tokens": np.zeros((2, 5)), "padding_mask": np.array([[0, 0, 0, 1, 1], [0, 0, 0, 0, 0]], dtype=bool)}
    histogram, _ = run_report([batch])
    assert histogram.padding_waste == pytest.approx(2 / 10)
    assert histogram.mask_key == "padding_mask"


def test_no_mask_no_padding_line():
    histogram, lines = run_report(loader_with_lengths([2, 3]))
    assert histogram.padding_waste is None
    assert not any(line.startswith("Padding waste") for line in lines)


def test_explicit_mask_key_for_nested_batch():
    batch = (torch.zeros(2, 3), {"valid": torch.tensor([[1, 1, 0], [1, 0, 0]])})
    histogram, lines = run_report([batch], mask_key="valid")
    assert histogram.padding_waste == pytest.approx(3 / 6)
    assert "Padding waste: 50.0% of valid positions are padding" in lines


def test_non_tensor_leaves_hashed_by_value_with_one_warning():
    batches = [{"x": torch.zeros(2), "lang": "en"}, {"x": torch.zeros(2), "lang": "de"},
               {"x": torch.zeros(2), "lang": "en"}]
    with pytest.warns(UserWarning, match="type str; they are counted by value") as record:
        histogram, lines = run_report(batches)
    assert len([w for w in record if "data_dynamicity" in str(w.message)]) == 1
    assert len(histogram) == 2 and list(histogram.values()) == [2, 1]
    with pytest.warns(UserWarning, match="counted by type"):
        histogram, _ = run_report(batches, scalars_by_value=False)
    assert len(histogram) == 1


def test_same_printed_shape_different_dtype_is_disambiguated():
    histogram, lines = run_report([torch.zeros(3), torch.zeros(3, dtype=torch.int64)])
    assert len(histogram) == 2
    labels = [line.split("|")[0].strip() for line in lines[2:4]]
    assert labels[0] != labels[1] and "torch.int64" in " ".join(labels)


def test_progress_bar_only_when_forced_or_tty(capsys):
    data_dynamicity(loader_with_lengths([1, 2]), file=io.StringIO())
    assert capsys.readouterr().err == ""  # pytest's stderr is not a terminal
    data_dynamicity(loader_with_lengths([1, 2]), file=io.StringIO(), progress=True)
    err = capsys.readouterr().err
    assert "data_dynamicity [" in err and "/2 batches" in err
    data_dynamicity(loader_with_lengths([1, 2]), file=io.StringIO(), progress=False)
    assert capsys.readouterr().err == ""


def test_report_goes_to_stdout_by_default(capsys):
    data_dynamicity(loader_with_lengths([1]))
    assert "Number of unique shapes: 1" in capsys.readouterr().out


def test_const_shape_dataloader_keeps_the_first_shape_each_epoch():
    dataset = TensorDataset(torch.randn(59, 3), torch.arange(59))
    wrapped = const_shape_dataloader(DataLoader(dataset, batch_size=7))  # noqa: DYN401
    for _ in range(2):
        with pytest.warns(UserWarning, match="dropped 1 of 9 batches"):
            kept = list(wrapped)
        assert len(kept) == 8 and all(b[0].shape == (7, 3) for b in kept)
        assert (wrapped.kept, wrapped.dropped) == (8, 1)
    assert wrapped.batch_size == 7  # attributes fall through to the loader
    histogram, _ = run_report(const_shape_dataloader(DataLoader(dataset, batch_size=7), warn=False))  # noqa: DYN401
    assert len(histogram) == 1


def test_const_shape_dataloader_with_reference_batch():
    loader = loader_with_lengths([2, 5, 5, 3])
    wrapped = const_shape_dataloader(loader, reference=torch.ones(2, 5))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        kept = list(wrapped)
    assert [b.shape[1] for b in kept] == [5, 5]
    assert wrapped.dropped == 2


def test_pad_last_batch_keeps_every_sample_at_one_shape():
    x = torch.randn(10, 3)
    loader = DataLoader(TensorDataset(x, torch.arange(10)), batch_size=4)  # noqa: DYN401
    batches = list(pad_last_batch(loader))
    assert [n for _, n in batches] == [4, 4, 2]
    assert all(b[0].shape == (4, 3) and b[1].shape == (4,) for b, _ in batches)
    last, n = batches[-1]
    assert torch.equal(last[0][:n], x[8:]) and torch.equal(last[0][n:], x[9:].expand(2, 3))
    assert last[1].tolist() == [8, 9, 9, 9]
    # what a model computes on the real rows is what it computed on the short batch
    outputs = torch.cat([(b[0] * 2)[:n] for b, n in pad_last_batch(loader)])
    assert torch.equal(outputs, x * 2)
    assert len(pad_last_batch(loader)) == 3 and pad_last_batch(loader).dataset is loader.dataset


def test_pad_last_batch_pads_nested_batches_and_leaves_the_rest():
    @dataclasses.dataclass
    class Batch:
        ids: object
        names: list
        scale: float

    def collate(samples):
        return {"inputs": Batch(torch.stack([s[0] for s in samples]), [s[1] for s in samples], 0.5),
                "array": np.stack([s[2] for s in samples]), "shared": torch.ones(7)}

    samples = [(torch.full((2,), i), f"s{i}", np.full(3, i)) for i in range(5)]
    loader = DataLoader(samples, batch_size=3, collate_fn=collate)  # noqa: DYN401
    (first, n1), (last, n2) = list(pad_last_batch(loader))
    assert (n1, n2) == (3, 2)
    assert last["inputs"].ids[:, 0].tolist() == [3, 4, 4] and last["inputs"].names == ["s3", "s4", "s4"]
    assert last["array"][:, 0].tolist() == [3, 4, 4] and isinstance(last["array"], np.ndarray)
    assert last["inputs"].scale == 0.5 and last["shared"].shape == (7,)
    assert first["inputs"].names == ["s0", "s1", "s2"]


def test_pad_last_batch_needs_a_batch_size_and_a_batched_leaf():
    with pytest.raises(TypeError, match="batch_size"):
        pad_last_batch([torch.zeros(2, 3)])
    with pytest.raises(TypeError, match="no tensor"):
        list(pad_last_batch([{"a": 1}], batch_size=2))
    assert [n for _, n in pad_last_batch([torch.zeros(5, 1)], batch_size=4)] == [5]  # larger: unchanged


def test_import_does_not_load_torch():
    code = ("import sys; import dynlint.runtime.data, dynlint.runtime.buckets; "
            "print('torch' in sys.modules)")
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert result.stdout.strip() == "False"
