"""`dynlint buckets LENGTHS_FILE`: inputs, figures, JSON, and one-line errors with exit 2."""

from __future__ import annotations

import json
import subprocess
import sys

import numpy as np
import pytest

from dynlint.cli import main

# 1..8 once each plus 100: small enough to check every figure by hand.
LENGTHS = [1, 2, 3, 4, 5, 6, 7, 8, 100]


def run_cli(capsys, *argv):
    code = main(["buckets", *map(str, argv)])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


@pytest.fixture
def lengths_txt(tmp_path):
    path = tmp_path / "lengths.txt"
    path.write_text("".join(f"{n}\n" for n in LENGTHS))
    return path


def strategies_by_name(output):
    return {row["name"]: row for row in json.loads(output)["strategies"]}


def test_json_figures_checked_by_hand(capsys, lengths_txt):
    code, out, err = run_cli(capsys, lengths_txt, "--num-buckets", 2, "--multiple", 4, "--output-format", "json")
    assert code == 0 and err == ""
    summary = json.loads(out)
    assert (summary["lengths"], summary["distinct_lengths"], summary["min"], summary["max"]) == (9, 9, 1, 100)
    rows = strategies_by_name(out)
    real = sum(LENGTHS)  # 136
    # optimal, 2 buckets: 1..8 padded to 8 (64 positions, 28 of them padding), 100 alone: 64 + 100 = 164
    assert rows["optimal"]["boundaries"] == [8, 100]
    assert rows["optimal"]["padding_waste_percent"] == pytest.approx(100 * (1 - real / 164), abs=1e-3)
    # percentile, 2 buckets: lower median of 9 values is 5 -> [5, 100]; 5*5 + 3*100 + 100 = 425
    assert rows["percentile"]["boundaries"] == [5, 100]
    assert rows["percentile"]["padding_waste_percent"] == pytest.approx(100 * (1 - real / 425), abs=1e-3)
    # multiple of 4: 4 4 4 4 8 8 8 8 100 = 148
    assert rows["pad_to_multiple_of"]["boundaries"] == [4, 8, 100]
    assert rows["pad_to_multiple_of"]["shapes"] == 3
    assert rows["pad_to_multiple_of"]["padding_waste_percent"] == pytest.approx(100 * (1 - real / 148), abs=1e-3)
    assert rows["pad_to_max"]["boundaries"] == [100]
    assert rows["pad_to_max"]["padding_waste_percent"] == pytest.approx(100 * (1 - real / 900), abs=1e-3)
    assert rows["none"]["shapes"] == 9 and rows["none"]["padding_waste_percent"] == 0


def test_text_table(capsys, lengths_txt):
    code, out, _ = run_cli(capsys, lengths_txt, "-k", 2, "--multiple", 4)
    assert code == 0
    lines = out.splitlines()
    assert lines[0] == f"{lengths_txt}: 9 lengths, 9 distinct, min 1, median 5, max 100"
    table = {line.split("  ")[0]: line.split() for line in lines[4:]}
    assert table["optimal (k=2)"][-4:] == ["2", f"{100 * (1 - 136 / 164):.1f}%", "8,", "100"]
    assert table["percentile (k=2)"][-4:] == ["2", f"{100 * (1 - 136 / 425):.1f}%", "5,", "100"]
    assert table["pad to max"][-3:] == ["1", f"{100 * (1 - 136 / 900):.1f}%", "100"]
    assert "pad_to_multiple_of 4" in table


def test_long_boundary_lists_are_elided_in_text_only(capsys, tmp_path):
    path = tmp_path / "many.txt"
    path.write_text("\n".join(str(n) for n in range(1, 201)))
    _, out, _ = run_cli(capsys, path, "--multiple", 8)
    line = next(line for line in out.splitlines() if line.startswith("pad_to_multiple_of"))
    assert line.endswith("..., 192, 200 (25 values)")
    _, out, _ = run_cli(capsys, path, "--multiple", 8, "--output-format", "json")
    assert strategies_by_name(out)["pad_to_multiple_of"]["boundaries"] == list(range(8, 201, 8))


def test_optimal_not_worse_than_percentile_on_skewed_lengths(capsys, tmp_path):
    rng = np.random.default_rng(1)
    path = tmp_path / "skewed.npy"
    np.save(path, np.clip(rng.lognormal(4, 1, 20000).astype(np.int64), 1, 4096))
    code, out, _ = run_cli(capsys, path, "-k", 6, "--output-format", "json")
    rows = strategies_by_name(out)
    assert code == 0
    assert rows["optimal"]["padding_waste_percent"] <= rows["percentile"]["padding_waste_percent"]
    assert rows["optimal"]["shapes"] == 6


def test_npy_npz_csv_tsv_and_stdin_inputs_agree(capsys, tmp_path, monkeypatch):
    expected = None
    np.save(tmp_path / "a.npy", np.array(LENGTHS, dtype=np.int32))
    np.savez(tmp_path / "b.npz", lengths=np.array(LENGTHS), other=np.arange(3))
    (tmp_path / "c.csv").write_text("id,num_tokens\n" + "".join(f"{i},{n}\n" for i, n in enumerate(LENGTHS)))
    (tmp_path / "d.tsv").write_text("".join(f"x{i}\t{n}\n" for i, n in enumerate(LENGTHS)))
    (tmp_path / "e.txt").write_text("# lengths\n" + " ".join(map(str, LENGTHS)).replace(" ", "\n") + "\n\n")
    cases = [
        (tmp_path / "a.npy",),
        (tmp_path / "b.npz", "--column", "lengths"),
        (tmp_path / "c.csv", "--column", "num_tokens"),
        (tmp_path / "c.csv", "--column", "1"),
        (tmp_path / "d.tsv", "--column", "1"),
        (tmp_path / "e.txt",),
    ]
    for case in cases:
        code, out, err = run_cli(capsys, *case, "-k", 3, "--output-format", "json")
        assert code == 0, (case, err)
        rows = strategies_by_name(out)
        expected = expected or rows
        assert rows == expected, case
    monkeypatch.setattr(sys, "stdin", __import__("io").StringIO("\n".join(map(str, LENGTHS))))
    code, out, _ = run_cli(capsys, "-", "-k", 3, "--output-format", "json")
    assert code == 0 and strategies_by_name(out) == expected
    assert json.loads(out)["file"] == "<stdin>"


@pytest.mark.parametrize("name, content, message", [
    ("missing.txt", None, "missing.txt: no such file"),
    ("empty.txt", "", "empty.txt: no lengths found"),
    ("words.txt", "3\n4\nabc\n", "words.txt:3: 'abc' is not a length"),
    ("neg.txt", "3\n-4\n", "neg.txt:2: negative length -4"),
    ("frac.txt", "3\n4.5\n", "frac.txt:2: 4.5 is not a whole number"),
    ("nan.txt", "3\nnan\n", "nan.txt:2: nan is not a length"),
    ("two.csv", "a,b\n1,2\n", "two.csv: has 2 columns (a, b); pick one with --column"),
    ("ragged.txt", "1 2\n3\n", "pick one with --column"),
    ("bin.txt", b"\x00\x01\xff\xfe", "bin.txt: not a text file"),
    ("bad.npy", b"not numpy at all", "bad.npy: not a .npy or .npz file"),
])
def test_bad_files_give_one_line_and_exit_2(capsys, tmp_path, name, content, message):
    path = tmp_path / name
    if isinstance(content, bytes):
        path.write_bytes(content)
    elif content is not None:
        path.write_text(content)
    code, out, err = run_cli(capsys, path)
    assert code == 2 and out == ""
    assert err.count("\n") == 1 and err.startswith("dynlint: error: ")
    assert message in err


def test_bad_arrays_and_columns(capsys, tmp_path):
    np.save(tmp_path / "objects.npy", np.array(["a", None], dtype=object), allow_pickle=True)
    np.save(tmp_path / "matrix.npy", np.ones((3, 3)))
    np.savez(tmp_path / "two.npz", a=np.arange(3), b=np.arange(2))
    (tmp_path / "c.csv").write_text("id,len\n1,2\n")
    cases = [
        ((tmp_path / "objects.npy",), "not a readable numpy file"),
        ((tmp_path / "matrix.npy",), "expected a 1-D array of lengths, got shape (3, 3)"),
        ((tmp_path / "two.npz",), "holds arrays ['a', 'b']; pick one with --column"),
        ((tmp_path / "two.npz", "--column", "z"), "no array named 'z'"),
        ((tmp_path / "c.csv", "--column", "tokens"), "no column 'tokens' (columns: id, len)"),
        ((tmp_path,), "is a directory"),
    ]
    for argv, message in cases:
        code, out, err = run_cli(capsys, *argv)
        assert code == 2 and message in err and err.count("\n") == 1, (argv, err)


@pytest.mark.parametrize("flag", [["-k", "0"], ["--num-buckets", "x"], ["--multiple", "-8"],
                                  ["--output-format", "xml"]])
def test_bad_options_exit_2(capsys, lengths_txt, flag):
    with pytest.raises(SystemExit) as info:
        main(["buckets", str(lengths_txt), *flag])
    assert info.value.code == 2
    assert "dynlint: error:" in capsys.readouterr().err


def test_command_runs_without_importing_torch(tmp_path):
    path = tmp_path / "l.txt"
    path.write_text("1\n5\n9\n")
    code = (
        "import sys\n"
        "from dynlint.cli import main\n"
        f"rc = main(['buckets', {str(path)!r}, '-k', '2'])\n"
        "print('torch loaded' if 'torch' in sys.modules else 'no torch')\n"
        "sys.exit(rc)\n"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip().endswith("no torch")


def test_without_numpy_one_line_error_and_exit_2(capsys, monkeypatch, lengths_txt, tmp_path):
    """A plain `pip install dynlint` has no numpy: a usage error, never a traceback."""
    monkeypatch.setitem(sys.modules, "numpy", None)  # `import numpy` now raises ImportError
    code, out, err = run_cli(capsys, lengths_txt)
    assert (code, out) == (2, "")
    assert err == "dynlint: error: dynlint buckets needs numpy (pip install numpy)\n"
    # A missing file is reported as such, numpy or not.
    code, out, err = run_cli(capsys, tmp_path / "nope.txt")
    assert (code, out) == (2, "")
    assert err == f"dynlint: error: {tmp_path / 'nope.txt'}: no such file\n"


def test_without_numpy_in_a_fresh_interpreter(lengths_txt):
    """The console entry point too (nothing imported numpy before the command ran)."""
    code = ("import sys\nsys.modules['numpy'] = None\nfrom dynlint.cli import main\n"
            f"sys.exit(main(['buckets', {str(lengths_txt)!r}]))\n")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert proc.returncode == 2, proc.stderr
    assert proc.stderr == "dynlint: error: dynlint buckets needs numpy (pip install numpy)\n"
    assert "Traceback" not in proc.stderr and proc.stdout == ""
