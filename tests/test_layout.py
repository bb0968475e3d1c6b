"""Wrapping rewritten code to the file's line length (dynlint.layout) never changes what it means."""

from __future__ import annotations

import ast

from hypothesis import given, settings, strategies as st

from dynlint import layout

REPLACEMENTS = [
    "torch.where(x > 0, x, 0).sum()",
    "torch.where(pos_inds.reshape(pos_inds.shape + (1,) * (cls_score_classes.ndim - pos_inds.ndim)), "
    "cls_score_classes, 0).sum()",
    "(torch.where(k.reshape(k.shape + (1,) * (a.ndim - k.ndim)), a, 0) * torch.where(k.reshape(k.shape + (1,) * "
    "(b.ndim - k.ndim)), b, 0)).sum()",
    "torch.where(k, a - (b - c) * -d, 0).sum()",
    "x.masked_fill(~m, -torch.inf if x.is_floating_point() else (torch.iinfo(x.dtype).min if x.dtype != "
    "torch.bool else False)).max()",
    "torch.where(m, x, 0).sum() / m.expand_as(x).sum()",
    "torch.where(spectrogram_mask, l1_loss.mul(out_weights, alpha=2), 0).sum()",
    "f(a[1:2, ::3], {'k': [1, 2]}, *args, key=lambda q, r: q + r, **kw)",
    "torch.count_nonzero(x)",
    "g(x)[0]",
    "torch.where(match.reshape(match.shape + (1,) * (loss.ndim - match.ndim)), loss, 0).sum() / "
    "match.reshape(match.shape + (1,) * (loss.ndim - match.ndim)).expand_as(loss).sum()",
    "a - b - c * d ** -e / f % g @ h | i & j ^ k + (l if m else n) - (lambda p: p)(o)",
    "-x.sum() + ~y * +z",
    "sorted(items, key=lambda x, y=torch.where(mask_value_long_name, tensor_value, 0).sum(): x + y, reverse=True)",
    "f(lambda a, b: a + b, c)",
]


def _as_statement(prefix: str, content: str, suffix: str) -> str:
    return prefix + content + suffix + "\n"


@settings(max_examples=600, deadline=None)
@given(st.sampled_from(REPLACEMENTS), st.integers(20, 130), st.sampled_from([
    ("    total = ", ""), ("        return ", "  # note"), ("x = (", ") / N"), ("\ty = ", ""),
    ("    losses['loss_bbox'] = ", ""), ("    a = b + ", " * c")]))
def test_wrapping_keeps_the_code_and_fits_where_it_can(content, limit, context):
    prefix, suffix = context
    wrapped = layout.fit(content, prefix, suffix, limit)
    before = ast.dump(ast.parse(_as_statement(prefix.lstrip(), content, suffix)))
    after = ast.dump(ast.parse(_as_statement(prefix.lstrip(), wrapped, suffix)))
    assert after == before  # the same program, only laid out differently
    if len(prefix) + len(content) + len(suffix) <= limit:
        assert wrapped == content
    lines = (prefix + wrapped + suffix).splitlines()
    indent = prefix[:len(prefix) - len(prefix.lstrip())]
    assert all(line.startswith(indent) for line in lines)


def test_wrapping_is_black_like():
    content = REPLACEMENTS[1]
    assert layout.fit(content, "            loss = ", "", 79) == (
        "torch.where(\n"
        "                pos_inds.reshape(\n"
        "                    pos_inds.shape\n"
        "                    + (1,) * (cls_score_classes.ndim - pos_inds.ndim)\n"
        "                ),\n"
        "                cls_score_classes,\n"
        "                0,\n"
        "            ).sum()")
    assert layout.fit("torch.where(m, x, 0).sum()", "    y = ", "", 30) == "torch.where(\n        m, x, 0\n    ).sum()"
    assert layout.fit("torch.count_nonzero(x)", "    n = ", "", 10) == "torch.count_nonzero(\n        x\n    )"


def test_a_layout_that_would_change_the_code_is_never_written():
    # the splitter cuts at top-level commas; a lambda's own commas once became call arguments
    content = "sorted(items, key=lambda x, y=torch.where(mask_long_name, tensor, 0).sum(): x + y, reverse=True)"
    wrapped = layout.fit(content, "    value = ", "", 60)
    assert ast.dump(ast.parse("value = " + wrapped)) == ast.dump(ast.parse("value = " + content))


def test_single_items_never_become_tuples():
    assert layout.fit("xxxxxxxx[(a + b)]", "", "", 12) == "xxxxxxxx[\n    (a + b)\n]"
    wrapped = layout.fit("g((aaaaaaaa + bbbbbbbb))", "", "", 10)
    assert ast.dump(ast.parse(wrapped)) == ast.dump(ast.parse("g((aaaaaaaa + bbbbbbbb))"))


def test_the_limit_is_the_files_longest_line_between_79_and_120():
    assert layout.line_length("x = 1\n") == 79
    assert layout.line_length("x = 1\n" + "y" * 100 + "\n") == 100
    assert layout.line_length("# " + "u" * 300 + "\n") == 120


def test_configured_limits_are_read_from_the_projects_tools(tmp_path):
    layout._configured.cache_clear()
    project = tmp_path / "p"
    (project / "pkg").mkdir(parents=True)
    target = project / "pkg" / "m.py"
    target.write_text("x = 1\n")
    (project / "setup.cfg").write_text("[flake8]\nmax-line-length = 99\n")
    (tmp_path / "pyproject.toml").write_text("[tool.ruff]\nline-length = 150\n")  # above the project root
    (project / ".git").mkdir()
    assert layout.line_length("x = 1\n", str(target)) == 99
    layout._configured.cache_clear()
    (project / "pyproject.toml").write_text("[tool.black]\nline-length = 88\n")
    assert layout.line_length("x = 1\n", str(target)) == 88
    layout._configured.cache_clear()
    (project / "pyproject.toml").write_text("not toml [\n")
    assert layout.line_length("x = 1\n", str(target)) == 99  # a broken file of another tool is skipped
    layout._configured.cache_clear()


def test_two_fixes_on_one_line_keep_the_line_within_the_limit():
    """Each fix used to be fitted against the *original* rest of its line, so two rewrites that
    fit alone but not together (torchvision's SSD loss: ``(cls_loss[fg].sum() +
    cls_loss[bg].sum()) / N``) made a 136-column line in a 120-column file."""
    from dynlint.api import check_source  # noqa: PLC0415
    from dynlint.fixer import fix_source  # noqa: PLC0415

    source = (
        "import torch\n\n\n"
        "class Head:\n"
        "    def f(self, cls_loss: torch.Tensor, N: int):\n"
        "        foreground_idxs = cls_loss > 0\n"
        "        background_idxs = cls_loss < 0\n"
        "        # " + "-" * 110 + "\n"
        "        return {\n"
        '            "classification": (cls_loss[foreground_idxs].sum() + cls_loss[background_idxs].sum()) / N,\n'
        "        }\n"
    )
    fixed, applied = fix_source(source, check_source(source), unsafe=False)
    assert len(applied) == 2
    assert max(len(line) for line in fixed.splitlines()) <= 120, fixed
    assert '"classification": (torch.where(foreground_idxs, cls_loss, 0).sum() + torch.where(' in fixed
    namespace: dict = {}
    exec(compile(fixed, "fixed", "exec"), namespace)  # noqa: S102
    import torch  # noqa: PLC0415

    x = torch.tensor([1.0, -2.0, 0.0, 3.0])
    assert namespace["Head"]().f(x, 1)["classification"] == 2.0
