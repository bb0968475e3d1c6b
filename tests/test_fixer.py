"""The fixer: applying fixes to text and files without ever corrupting them."""

from __future__ import annotations

import ast
import os
import random
import stat
import textwrap

import libcst
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from dynlint import fixer
from dynlint.api import check_source
from dynlint.config import Settings
from dynlint.diagnostics import Applicability, Edit, Finding, Fix
from dynlint.fixer import FixError, add_noqa, fix_file, fix_source


def src(text: str) -> str:
    return textwrap.dedent(text).lstrip("\n")


# the opt-in DYN501 on too: its fix is one of those checked here
SETTINGS = Settings(select=Settings().select | {"DYN501"})


def fix(text: str, *, unsafe: bool = False) -> tuple[str, list[Finding]]:
    return fix_source(text, check_source(text, settings=SETTINGS), unsafe=unsafe)


MODEL = src("""
    import torch
    from torch.utils.data import DataLoader


    # A comment that must survive.
    def loss(x: torch.Tensor, y: torch.Tensor):
        valid = y > 0   # odd   spacing kept
        total = x[x > 0].sum()  # trailing comment
        count = len(x.nonzero())
        peak = x[valid].max()
        return total + peak / count


    loader = DataLoader(
        list(range(10)),
        shuffle=True,
        batch_size=4,  # per device
    )
    compiled = torch.compile(loss, dynamic=True)
    """)


# --------------------------------------------------------------------------- fix_source
def test_safe_fixes_only_without_unsafe_flag():
    fixed, applied = fix(MODEL)
    assert [f.code for f in applied] == ["DYN101"]
    assert "total = torch.where(x > 0, x, 0).sum()  # trailing comment" in fixed
    assert "len(x.nonzero())" in fixed and "dynamic=True" in fixed and "drop_last" not in fixed


def test_unsafe_fixes_and_formatting_outside_edits_preserved():
    fixed, applied = fix(MODEL, unsafe=True)
    assert sorted(f.code for f in applied) == ["DYN101", "DYN101", "DYN102", "DYN401", "DYN501"]
    assert "    count = torch.count_nonzero(x)\n" in fixed
    assert "compiled = torch.compile(loss)\n" in fixed
    assert "    batch_size=4,  # per device\n    drop_last=True,\n)\n" in fixed
    untouched = [line for line in MODEL.splitlines() if "x[" not in line and "nonzero" not in line
                 and "dynamic" not in line]
    for line in untouched:
        assert line in fixed.splitlines(), line
    ast.parse(fixed)


def test_fixing_is_idempotent():
    once, _ = fix(MODEL, unsafe=True)
    twice, applied = fix(once, unsafe=True)
    assert twice == once and applied == []


def test_several_fixes_in_one_statement():
    text = src("""
        import torch

        def f(x: torch.Tensor, z: torch.Tensor):
            return x[x > 0].sum() + z[z < 0].sum() * x.masked_select(x != 1).sum()
        """)
    fixed, applied = fix(text)
    assert len(applied) == 3
    assert "".join(("return torch.where(x > 0, x, 0).sum() + torch.where(z < 0, z, 0).sum() * "
                    "torch.where(x != 1, x, 0).sum()").split()) in "".join(fixed.split())
    assert max(len(line) for line in fixed.splitlines()) <= 79  # the file's lines are shorter: PEP 8's


def test_product_reported_twice_is_applied_once():
    text = src("""
        import torch

        def f(a: torch.Tensor):
            b = a * 2
            k = a > b
            return (a[k] * b[k]).sum()
        """)
    fixed, applied = fix(text)
    assert [f.code for f in applied] == ["DYN101", "DYN101"]
    assert fixed.count("torch.where(") == 2 and "a[k]" not in fixed


def test_overlapping_candidates_resolve_over_rounds():
    torch = pytest.importorskip("torch")
    text = src("""
        import torch

        def f(w: torch.Tensor):
            return w[w[w > 0].sum() > w].sum()
        """)
    findings = check_source(text)
    assert len([f for f in findings if f.fix]) == 2
    fixed, applied = fix(text)
    assert len(applied) == 2
    assert "return torch.where(torch.where(w > 0, w, 0).sum() > w, w, 0).sum()" in fixed
    namespace_a, namespace_b = {}, {}
    exec(text, namespace_a)
    exec(fixed, namespace_b)
    w = torch.tensor([[1.0, -2.0], [3.0, 0.5]])
    assert namespace_a["f"](w) == namespace_b["f"](w)


def test_overlapping_synthetic_edits_skip_the_inner_one():
    text = "y = f(g(a), b)\n"
    outer = _finding(Edit(1, 4, 1, 14, "h(a, b)"))
    inner = _finding(Edit(1, 6, 1, 10, "a"))
    fixed, applied = fix_source(text, [inner, outer], unsafe=False)
    assert fixed == "y = h(a, b)\n" and applied == [outer]


def test_insertion_into_a_call_and_parenthesized_nodes():
    text = "y = (  f(a, b)  ) * 2\n"
    fixed, _ = fix_source(text, [_finding(Edit(1, 13, 1, 13, ", c=1"))], unsafe=False)
    assert fixed == "y = (  f(a, b, c=1)  ) * 2\n"


def test_a_fix_that_would_break_the_file_is_skipped_alone_and_reported():
    text = "y = f(a)\nz = g(b)\n"
    # `outside` spans the line break between the two statements: no expression or statement holds it
    broken, outside, good = (_finding(Edit(1, 4, 1, 8, "f(a")), _finding(Edit(1, 8, 2, 0, "; ")),
                             _finding(Edit(2, 4, 2, 8, "h(b)")))
    outcome = fixer.fix_text(text, [broken, outside, good], unsafe=False)
    assert outcome.text == "y = f(a)\nz = h(b)\n" and outcome.applied == [good]
    assert sorted((s.finding.col, s.reason) for s in outcome.skipped) == [
        (4, "the rewritten expression would not parse"), (8, "its edits do not lie inside one expression or statement")]
    assert fix_source(text, [broken], unsafe=False) == (text, [])
    with pytest.raises(FixError):  # the file itself cannot be fixed: everything is refused
        fix_source("y = (\n", [good], unsafe=False)


def _finding(edit: Edit, applicability=Applicability.SAFE) -> Finding:
    return Finding("DYN101", "test", edit.line, edit.col, edit.end_line, edit.end_col,
                   Fix(applicability, "test", (edit,)))


SAMPLE = src("""
    import torch

    def f(x: torch.Tensor, m):  # comment (with, commas)
        '''doc
        string'''
        y = [x[i] for i in range(3)] + {"k": (x,
                                              m)}["k"]
        return f"{x!r:>10}" if m else lambda q=x: q ** -1
    """)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.data())
def test_output_always_parses_whatever_the_edits(data):
    """Random edits (garbage included) either apply to give parsable code or raise
    FixError; the fixer never returns broken code."""
    lines = SAMPLE.splitlines()
    findings = []
    for _ in range(data.draw(st.integers(1, 3))):
        line = data.draw(st.integers(1, len(lines)))
        col = data.draw(st.integers(0, len(lines[line - 1])))
        end_line = data.draw(st.integers(line, min(line + 1, len(lines))))
        end_col = data.draw(st.integers(col if end_line == line else 0, len(lines[end_line - 1])))
        content = data.draw(st.sampled_from(["", "x", ")", "(", ", z", "torch.where(m, x, 0)", "a\nb", "#", "'", "1 +"]))
        findings.append(_finding(Edit(line, col, end_line, end_col, content)))
    try:
        fixed, _ = fix_source(SAMPLE, findings, unsafe=False)
    except FixError:
        return
    ast.parse(fixed)
    libcst.parse_module(fixed)


def test_output_always_parses_seeded_sweep():
    """The same property over a fixed random sweep (it found an import-alias case)."""
    rng = random.Random(1)
    lines = SAMPLE.splitlines()
    applied = 0
    for _ in range(400):
        line = rng.randint(1, len(lines))
        col = rng.randint(0, len(lines[line - 1]))
        end_col = rng.randint(col, len(lines[line - 1]))
        content = rng.choice(["", "x", ")", "(", ", z", "1 +", "f(x)", "[x]"])
        try:
            fixed, used = fix_source(SAMPLE, [_finding(Edit(line, col, line, end_col, content))], unsafe=False)
        except FixError:
            continue
        applied += bool(used)
        ast.parse(fixed)
        libcst.parse_module(fixed)
    assert applied > 20  # the sweep exercises successful edits, not only refusals


# --------------------------------------------------------------------------- builders through the pipeline
@pytest.mark.parametrize("before, after", [
    ("DataLoader(ds, shuffle=True, batch_size=4)", "DataLoader(ds, shuffle=True, batch_size=4, drop_last=True)"),
    ("DataLoader(ds, shuffle=True, batch_size=4,)", "DataLoader(ds, shuffle=True, batch_size=4, drop_last=True,)"),
    ("DataLoader(ds, shuffle=True, batch_size=4, drop_last=False)", "DataLoader(ds, shuffle=True, batch_size=4, drop_last=True)"),
    ("DataLoader(\n    ds,\n    shuffle=True,\n    batch_size=4,\n)", "DataLoader(\n    ds,\n    shuffle=True,\n    batch_size=4,\n    drop_last=True,\n)"),
    ("DataLoader(\n    ds,\n    shuffle=True,\n    batch_size=4\n)", "DataLoader(\n    ds,\n    shuffle=True,\n    batch_size=4,\n    drop_last=True\n)"),
    ("DataLoader(\n    ds,\n    shuffle=True,\n    batch_size=4,  # a, b\n    # end\n)",
     "DataLoader(\n    ds,\n    shuffle=True,\n    batch_size=4,  # a, b\n    drop_last=True,\n    # end\n)"),
    ("DataLoader(ds, shuffle=True, batch_size=4\n)", "DataLoader(ds, shuffle=True, batch_size=4, drop_last=True\n)"),
])
def test_drop_last_insertion_keeps_layout(before, after):
    text = f"import torch\nfrom torch.utils.data import DataLoader\nloader = {before}\n"
    fixed, applied = fix(text, unsafe=True)
    assert [f.code for f in applied] == ["DYN401"]
    assert fixed == f"import torch\nfrom torch.utils.data import DataLoader\nloader = {after}\n"


@pytest.mark.parametrize("before, after", [
    ("torch.compile(m, dynamic=True)", "torch.compile(m)"),
    ("torch.compile(m, dynamic=True, mode='reduce-overhead')", "torch.compile(m, mode='reduce-overhead')"),
    ("torch.compile(dynamic=True)", "torch.compile()"),
    ("torch.compile(dynamic=True,)", "torch.compile()"),
    ("torch.compile(\n    m,\n    dynamic=True,\n    fullgraph=True,\n)", "torch.compile(\n    m,\n    fullgraph=True,\n)"),
    ("torch.compile(\n    m,\n    dynamic=True,\n)", "torch.compile(\n    m,\n)"),
    ("torch.compile(\n    m,\n    dynamic=True\n)", "torch.compile(\n    m,\n)"),
    ("torch.compile(m, fullgraph=True,\n              dynamic=True)", "torch.compile(m, fullgraph=True)"),
])
def test_dynamic_true_removal_keeps_the_call_well_formed(before, after):
    text = f"import torch\nf = {before}\n"
    fixed, applied = fix(text, unsafe=True)
    assert [f.code for f in applied] == ["DYN501"]
    assert fixed == f"import torch\nf = {after}\n"


def test_dynamic_true_with_a_comment_in_the_way_gets_no_fix():
    text = "import torch\nf = torch.compile(m,  # model\n    dynamic=True)\n"
    assert [f.fix for f in check_source(text, settings=SETTINGS) if f.code == "DYN501"] == [None]


def test_padding_fix_only_with_max_length_and_truncation_and_keeps_quote_style():
    """padding="max_length" leaves items longer than max_length longer unless truncation is on:
    the batch is then ragged and return_tensors raises (measured, transformers 5.23).  A
    collator pads features tokenized elsewhere: it has no truncation, so no fix."""
    text = src("""
        from transformers import DataCollatorWithPadding
        a = tokenizer(texts, padding='longest', max_length=64, truncation=True)
        b = tokenizer(texts, padding='longest', max_length=64)
        c = DataCollatorWithPadding(tok, padding='longest', max_length=64)
        d = DataCollatorWithPadding(tok, padding=True)
        """)
    findings = [f for f in check_source(text) if f.code == "DYN402"]
    assert len(findings) == 4 and [f.fix is not None for f in findings] == [True, False, False, False]
    assert findings[0].fix.applicability == Applicability.UNSAFE
    fixed, _ = fix(text, unsafe=True)
    assert "tokenizer(texts, padding='max_length', max_length=64, truncation=True)" in fixed
    assert fixed.count("'longest'") == 2


def test_fix_uses_the_files_torch_alias_and_needs_one():
    aliased = "import torch as T\n\ndef f(x: T.Tensor):\n    return x[x > 0].sum()\n"
    fixed, _ = fix(aliased)
    assert "return T.where(x > 0, x, 0).sum()" in fixed
    no_module = ("from torch import masked_select, Tensor\n\n"
                 "def f(x: Tensor):\n    return masked_select(x, x > 0).sum()\n")
    findings = check_source(no_module)
    assert [f.code for f in findings] == ["DYN104"] and findings[0].fix is None


def test_fixed_code_never_imports_dynlint():
    fixed, _ = fix(MODEL, unsafe=True)
    assert "dynlint" not in fixed


def test_mean_fix_is_parenthesized_under_an_operator():
    text = "import torch\n\ndef f(x: torch.Tensor):\n    return 2 / x[x > 0].mean()\n"
    fixed, _ = fix(text, unsafe=True)
    assert "return 2 / (torch.where(x > 0, x, 0).sum() / (x > 0).sum())" in fixed


def test_comment_inside_the_replaced_expression_blocks_the_fix():
    text = "import torch\n\ndef f(x: torch.Tensor):\n    return x[\n        x > 0  # positive\n    ].sum()\n"
    assert all(f.fix is None for f in check_source(text))


# --------------------------------------------------------------------------- files
def write(tmp_path, name: str, data: bytes, mode: int = 0o644):
    path = tmp_path / name
    path.write_bytes(data)
    os.chmod(path, mode)
    return path


SIMPLE = "import torch\n\ndef f(x: torch.Tensor):\n    return x[x > 0].sum()  # note\n"
SIMPLE_FIXED = "import torch\n\ndef f(x: torch.Tensor):\n    return torch.where(x > 0, x, 0).sum()  # note\n"


def test_fix_file_writes_and_reports_remaining(tmp_path):
    path = write(tmp_path, "m.py", (SIMPLE + "n = torch.arange(3, device=\"cuda\").unique()\n").encode())
    result = fix_file(str(path))
    assert result.written and [f.code for f in result.applied] == ["DYN101"]
    assert path.read_text() == SIMPLE_FIXED + "n = torch.arange(3, device=\"cuda\").unique()\n"
    assert [f.code for f in result.remaining] == ["DYN103"]


def test_crlf_line_endings_kept(tmp_path):
    data = (SIMPLE.replace("\n", "\r\n") + "loader = DataLoader(\r\n    ds,\r\n    shuffle=True,\r\n    batch_size=2,\r\n)\r\n")
    data = data.replace("import torch\r\n", "import torch\r\nfrom torch.utils.data import DataLoader\r\n")
    path = write(tmp_path, "crlf.py", data.encode())
    fix_file(str(path), unsafe=True)
    out = path.read_bytes()
    assert b"torch.where(x > 0, x, 0)" in out and b"    drop_last=True,\r\n" in out
    assert out.count(b"\n") == out.count(b"\r\n")


def test_mixed_line_endings_keep_each_lines_ending(tmp_path):
    data = b"import torch\r\n\ndef f(x: torch.Tensor):\r\n    return x[x > 0].sum()\n\r\ny = 1\r\n"
    path = write(tmp_path, "mixed.py", data)
    fix_file(str(path))
    assert path.read_bytes() == data.replace(b"x[x > 0].sum()", b"torch.where(x > 0, x, 0).sum()")


def test_bom_and_coding_cookie_kept(tmp_path):
    bom = write(tmp_path, "bom.py", b"\xef\xbb\xbf" + SIMPLE.encode())
    fix_file(str(bom))
    assert bom.read_bytes() == b"\xef\xbb\xbf" + SIMPLE_FIXED.encode()
    latin = "# -*- coding: latin-1 -*-\n# caf\xe9\n" + SIMPLE
    cookie = write(tmp_path, "latin.py", latin.encode("latin-1"))
    fix_file(str(cookie))
    assert cookie.read_bytes() == ("# -*- coding: latin-1 -*-\n# caf\xe9\n" + SIMPLE_FIXED).encode("latin-1")


def test_non_ascii_columns(tmp_path):
    text = "import torch\n\ndef f(x: torch.Tensor):\n    s = 'é✓'; return x[x > 0].sum()\n"
    path = write(tmp_path, "u.py", text.encode())
    fix_file(str(path))
    assert path.read_text(encoding="utf-8").endswith("s = 'é✓'; return torch.where(x > 0, x, 0).sum()\n")


def test_permissions_kept(tmp_path):
    path = write(tmp_path, "p.py", SIMPLE.encode(), mode=0o751)
    fix_file(str(path))
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o751 and path.read_text() == SIMPLE_FIXED
    assert sorted(os.listdir(tmp_path)) == ["p.py"]  # no temporary file left behind


def test_symlink_target_rewritten_link_kept(tmp_path):
    target = write(tmp_path, "real.py", SIMPLE.encode())
    link = tmp_path / "link.py"
    link.symlink_to(target)
    fix_file(str(link))
    assert link.is_symlink() and target.read_text() == SIMPLE_FIXED


def test_unparsable_file_untouched_with_dyn000(tmp_path):
    data = b"import torch\ndef f(x:\n    return x[x > 0].sum()\n"
    path = write(tmp_path, "bad.py", data)
    result = fix_file(str(path), unsafe=True)
    assert path.read_bytes() == data and not result.written
    assert [f.code for f in result.remaining] == ["DYN000"]


def test_a_fix_that_cannot_be_placed_leaves_the_file_untouched_and_is_reported(tmp_path, monkeypatch):
    from dynlint.checks import load_all

    def broken_fix(node, ancestors, ctx):
        line, col, end_line, end_col = ctx.position(node)
        return Fix(Applicability.SAFE, "broken", (Edit(line, col, end_line, end_col, "x[("),))

    monkeypatch.setattr(load_all()["DYN101"], "fix", broken_fix)
    path = write(tmp_path, "m.py", SIMPLE.encode())
    result = fix_file(str(path))
    assert path.read_bytes() == SIMPLE.encode() and not result.written and result.applied == []
    assert [f.code for f in result.remaining] == ["DYN101"]
    assert [s.finding.code for s in result.skipped] == ["DYN101"]
    finding = result.skipped[0].finding
    assert (finding.line, finding.col) == (4, 11)
    assert result.skipped[0].describe("m.py:4:12").startswith("m.py:4:12: warning: DYN101 fix not applied (")


def test_a_file_libcst_cannot_parse_is_left_unchanged_with_dyn000(tmp_path, monkeypatch):
    monkeypatch.setattr(fixer.cst, "parse_module", lambda *a, **k: (_ for _ in ()).throw(ValueError("no")))
    path = write(tmp_path, "m.py", SIMPLE.encode())
    result = fix_file(str(path))
    assert path.read_bytes() == SIMPLE.encode() and not result.written and result.applied == []
    assert result.remaining[0].code == "DYN000" and "left unchanged" in result.remaining[0].message
    assert [f.code for f in result.remaining[1:]] == ["DYN101"]


def test_write_false_never_writes(tmp_path):
    path = write(tmp_path, "m.py", SIMPLE.encode())
    before = os.stat(path).st_mtime_ns
    result = fix_file(str(path), write=False)
    assert result.changed and result.fixed == SIMPLE_FIXED and not result.written
    assert path.read_bytes() == SIMPLE.encode() and os.stat(path).st_mtime_ns == before


def test_libcst_parses_only_files_with_applicable_fixes(tmp_path, monkeypatch):
    calls = []
    real = fixer.cst.parse_module
    monkeypatch.setattr(fixer.cst, "parse_module", lambda *a, **k: calls.append(1) or real(*a, **k))
    clean = write(tmp_path, "clean.py", b"import torch\nx = torch.zeros(3)\n")
    unsafe_only = write(tmp_path, "u.py", b"import torch\nf = torch.compile(m, dynamic=True)\n")
    fix_file(str(clean))
    fix_file(str(unsafe_only))
    assert calls == []
    fix_file(str(write(tmp_path, "s.py", SIMPLE.encode())))
    assert calls


def test_unreadable_path_reports_dyn000(tmp_path):
    result = fix_file(str(tmp_path / "missing.py"))
    assert [f.code for f in result.remaining] == ["DYN000"] and not result.written


# --------------------------------------------------------------------------- add_noqa
def test_add_noqa_silences_every_finding():
    text = src("""
        import torch

        def f(x: torch.Tensor):
            a = x.unique()
            b = x[x > 0]  # existing comment
            c = x.nonzero()  # noqa: E501
            d = x.unique()  # noqa
            return a, b, c, d
        """)
    assert check_source(text)
    out = add_noqa(text, check_source(text))
    assert check_source(out) == []
    assert "    a = x.unique()  # noqa: DYN103\n" in out
    assert "    b = x[x > 0]  # existing comment  # noqa: DYN101\n" in out
    assert "    c = x.nonzero()  # noqa: E501, DYN102\n" in out
    assert "    d = x.unique()  # noqa\n" in out
    assert add_noqa(out, check_source(out)) == out


def test_add_noqa_skips_lines_that_cannot_take_a_comment_and_keeps_crlf():
    text = "import torch\r\n\r\ndef f(x: torch.Tensor):\r\n    y = x.unique(); s = '''a\r\nb'''\r\n    return y\r\n"
    findings = check_source(text)
    assert [f.code for f in findings] == ["DYN103"]
    assert add_noqa(text, findings) == text  # line 4 ends inside a string
    text2 = "import torch\r\n\r\ndef f(x: torch.Tensor):\r\n    return x.unique()\r\n"
    assert add_noqa(text2, check_source(text2)) == text2.replace("x.unique()", "x.unique()  # noqa: DYN103")


# --------------------------------------------------------------------------- issue 13: edits in multi-line nodes
MULTI_LINE = src("""
    import torch
    from torch.utils.data import DataLoader


    class Model(torch.nn.Module):
        def forward(self, x: torch.Tensor, w: torch.Tensor):
            a = x[x > 0].sum()
            b = (
                x.masked_select(x > 1)
                .sum()
            )
            c = torch.stack(
                [
                    w[w != 0].sum(),
                    a,
                ],
                dim=0,
            )
            return a + b + c


    loader = DataLoader(
        list(range(10)),
        shuffle=True,
        batch_size=4,
    )
    """)


def test_fixes_inside_multi_line_expressions_and_calls_are_all_applied():
    """Every edit lands where it belongs, whatever the indentation of the lines a node spans
    (before: any fix inside a multi-line parenthesised expression or call cost the file all
    its fixes)."""
    fixed, applied = fix(MULTI_LINE)
    assert sorted(f.code for f in applied) == ["DYN101", "DYN101", "DYN104"]
    assert fixed == MULTI_LINE.replace("x[x > 0].sum()", "torch.where(x > 0, x, 0).sum()").replace(
        "x.masked_select(x > 1)\n            .sum()", "torch.where(x > 1, x, 0).sum()").replace(
        "w[w != 0].sum()", "torch.where(w != 0, w, 0).sum()")
    unsafe_fixed, unsafe_applied = fix(MULTI_LINE, unsafe=True)
    assert len(unsafe_applied) == 4 and "        batch_size=4,\n    drop_last=True,\n)" not in unsafe_fixed
    assert unsafe_fixed == fixed.replace("    batch_size=4,\n)", "    batch_size=4,\n    drop_last=True,\n)")


def test_unsafe_mode_never_applies_fewer_fixes_than_safe_mode():
    for text in (MULTI_LINE, MODEL):
        _, safe = fix(text)
        _, unsafe = fix(text, unsafe=True)
        assert {id(f) for f in safe} and len(unsafe) >= len(safe)
        assert {(f.code, f.line) for f in safe} <= {(f.code, f.line) for f in unsafe}


def test_long_rewritten_lines_are_wrapped_inside_their_brackets(tmp_path):
    """A line the fix makes longer than the file's evident limit is wrapped inside the
    replacement's own brackets (the file's longest line here: 79, PEP 8's default)."""
    text = src("""
        import torch


        def f(cls_score_classes: torch.Tensor, labels: torch.Tensor):
            pos_inds = labels > 0
            loss_cls_classes = cls_score_classes[pos_inds].sum()
            return loss_cls_classes
        """)
    fixed, applied = fix(text)
    assert applied and max(len(line) for line in fixed.splitlines()) <= 79
    assert "    loss_cls_classes = torch.where(\n        pos_inds.reshape(" in fixed
    assert "\n    ).sum()\n" in fixed
    ast.parse(fixed)
    assert fix(fixed) == (fixed, [])  # stable


def test_configured_line_length_wins_over_the_files(tmp_path):
    (tmp_path / "pyproject.toml").write_text("[tool.ruff]\nline-length = 200\n")
    path = tmp_path / "m.py"
    path.write_text("import torch\n\ndef f(cls_score_classes: torch.Tensor, labels: torch.Tensor):\n"
                    "    pos_inds = labels > 0\n    return cls_score_classes[pos_inds].sum()\n")
    result = fix_file(str(path))
    assert result.applied and len(path.read_text().splitlines()) == 5  # fits in 200: not wrapped
    (tmp_path / "pyproject.toml").write_text("[tool.black]\nline-length = 60\n")
    fixer.layout._configured.cache_clear()
    path.write_text("import torch\n\ndef f(x: torch.Tensor, y: torch.Tensor):\n    m = y > 0\n"
                    "    return x[m].sum()\n")
    assert fix_file(str(path)).applied
    assert max(len(line) for line in path.read_text().splitlines()) <= 60


WRAPPED = src("""
    import torch


    def f(loss: torch.Tensor, assigned_gt_inds: torch.Tensor, labels_seq, y: torch.Tensor):
        losses_ = loss.new_zeros(len(labels_seq))
        for i, l in enumerate(labels_seq):
            match = assigned_gt_inds == l
            losses_[i] = loss[match].mean()
            losses_[i] = losses_[i] * loss[match].mean() + y.masked_select(y > 0).sum() * 2
        return losses_
    """)


@pytest.mark.parametrize("unsafe", [False, True])
def test_wrapped_fixes_mean_the_same_code_as_unwrapped_ones(monkeypatch, unsafe):
    """Wrapping is layout only: the fixed file's syntax tree is the one of the same fixes unwrapped."""
    wrapped, applied = fix(WRAPPED, unsafe=unsafe)
    assert applied and max(len(line) for line in wrapped.splitlines()) <= fixer.layout.line_length(WRAPPED) == 87
    monkeypatch.setattr(fixer.layout, "fit", lambda content, prefix, suffix, limit: content)
    plain, plain_applied = fix(WRAPPED, unsafe=unsafe)
    assert len(plain_applied) == len(applied) and plain != wrapped
    assert ast.dump(ast.parse(wrapped)) == ast.dump(ast.parse(plain))


# --------------------------------------------------------------------------- DYN401 suggestions
def test_dyn401_suggests_a_runtime_helper_that_pads_and_exists():
    """A loader that is not known to feed training gets no drop_last fix; its message suggests
    padding the last batch with a dynlint.runtime helper that exists and keeps every sample
    (const_shape_dataloader drops batches: the harm the message is there to avoid)."""
    import re  # noqa: PLC0415

    import dynlint.runtime  # noqa: PLC0415

    source = textwrap.dedent("""\
        import torch
        from torch.utils.data import DataLoader


        def predict(model, dataset):
            return [model(b) for b in DataLoader(dataset, batch_size=64, shuffle=True)]


        def build(dataset):
            return DataLoader(dataset, batch_size=64, shuffle=True)
        """)
    from dynlint.config import Settings  # noqa: PLC0415

    findings = [f for f in check_source(source, "loaders.py", Settings(include_host=True)) if f.code == "DYN401"]
    assert [(f.line, f.fix is not None) for f in findings] == [(6, False), (10, True)]
    for finding in findings:
        named = re.findall(r"dynlint\.runtime\.(\w+)", finding.message)
        assert named == ["pad_last_batch"], finding.message
        assert all(hasattr(dynlint.runtime, name) for name in named)
