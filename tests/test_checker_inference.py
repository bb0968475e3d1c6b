"""Regression cases for the analyzer's tensor-kind inference, taken from false alarms
and misses seen on real code (torchvision, timm, transformers)."""

import textwrap

import pytest

from dynlint.api import check_source


def codes(source: str) -> list[tuple[int, str]]:
    return [(f.line, f.code) for f in check_source(textwrap.dedent(source))]


@pytest.mark.parametrize(
    "source",
    [
        # torch.version.cuda is a string: its .split() is not a tensor op
        """
        import torch
        from torch.version import cuda
        major = int(cuda.split(".")[0])
        """,
        # private torch APIs promise nothing: torch._foreach_mul returns a list
        """
        import torch
        def step(exp_avgs, grads):
            masks = torch._foreach_mul(exp_avgs, grads)
            return [(m > 0).to(g.dtype) for m, g in zip(masks, grads)]
        """,
        # an annotated forward parameter of an unknown type is not assumed to be a tensor
        """
        import torch
        from torch import nn
        Size_ = tuple
        class Pos(nn.Module):
            def forward(self, x, size: Size_):
                B, N, C = x.shape
                return x.transpose(1, 2).view(B, C, *size)
        """,
        # self.expand(x) calls a submodule, not Tensor.expand
        """
        import torch
        from torch import nn
        class Stem(nn.Module):
            def forward(self, x):
                x = self.expand(x)
                return self.repeat(x)
        """,
        # len(x.size()) is the rank
        """
        import torch
        def loss(start_positions: torch.Tensor):
            if len(start_positions.size()) > 1:
                start_positions = start_positions.squeeze(-1)
            return start_positions
        """,
        # forward parameters used as plain values: sizes, flags, lists
        """
        import torch
        from torch import nn
        class Head(nn.Module):
            def forward(self, hidden, height, width, targets, use_cache=None):
                if use_cache:
                    pass
                if height > 1:
                    pass
                ids = torch.cat([t["labels"] for t in targets])
                return hidden.view(height * 2, width, -1), ids
        """,
        # a module's output may be a tuple or a ModelOutput
        """
        import torch
        from torch import nn
        class Wrap(nn.Module):
            def __init__(self):
                super().__init__()
                self.encoder = nn.LSTM(4, 4)
            def forward(self, x):
                outputs = self.encoder(x)
                return outputs[0] if len(outputs) > 1 else outputs
        """,
        # bound to a list on one path and a tensor on another: unknown afterwards
        """
        import torch
        def prep(audio, batched: bool):
            if batched:
                audio = [a for a in audio]
            else:
                audio = torch.tensor(audio)
            return [a.float() for a in audio]
        """,
        # torch.nn helpers outside torch.nn.functional return Python values, not tensors
        """
        import torch
        from torch.nn.parameter import is_lazy
        def init(x: torch.Tensor, module):
            if torch.nn.parameter.is_lazy(x) or is_lazy(module.weight):
                return None
            with torch.nn.attention.sdpa_kernel([]):
                pass
            return x
        """,
        # numpy arrays are host data
        """
        import numpy as np
        import torch
        def f():
            a = np.arange(10)
            b = a[a > 3]
            n = int(a.sum())
            return b, np.zeros(n)
        """,
    ],
)
def test_no_false_alarm(source):
    assert codes(source) == []


@pytest.mark.parametrize(
    "source, expected",
    [
        # a closure sees the enclosing function's tensors
        (
            """
            import torch
            def outer(x: torch.Tensor):
                m = x > 0
                def inner():
                    return x[m].sum()
                return inner
            """,
            [(6, "DYN101")],
        ),
        # a tensor method confirms an assumed forward parameter
        (
            """
            import torch
            from torch import nn
            class Gate(nn.Module):
                def forward(self, scores):
                    if scores.sum() > 0:
                        scores = scores * 2
                    return scores
            """,
            [(6, "DYN202")],
        ),
        # submodule outputs are tensors for what derives from them
        (
            """
            import torch
            from torch import nn
            class Net(nn.Module):
                def __init__(self):
                    super().__init__()
                    self.fc = nn.Linear(4, 4)
                def forward(self, x):
                    y = self.fc(x)
                    return y[y > 0].sum()
            """,
            [(10, "DYN101")],
        ),
        # a 0-d reduction used as a slice bound
        (
            """
            import torch
            def cut(seq: torch.Tensor, mask: torch.Tensor):
                longest = mask.sum(-1).max()
                return seq[:, :longest]
            """,
            [(5, "DYN302")],
        ),
        # aliases resolve: torch as T, from-imports
        (
            """
            import torch as T
            from torch import nonzero
            from torchvision.ops import nms
            def f(x: T.Tensor, boxes, scores):
                return nonzero(x), nms(boxes, scores, 0.5), T.unique(x)
            """,
            [(6, "DYN102"), (6, "DYN103"), (6, "DYN105")],
        ),
        # torch.nn.grad functions do return tensors
        (
            """
            import torch
            def f(x: torch.Tensor, w, g):
                gi = torch.nn.grad.conv2d_input(x.shape, w, g)
                if gi.sum() > 0:
                    return gi
            """,
            [(5, "DYN202")],
        ),
        # a .item() inside a data-dependent branch test is DYN202 only
        (
            """
            import torch
            def f(t: torch.Tensor):
                if t.max().item() > 5:
                    return t
                return -t
            """,
            [(4, "DYN202")],
        ),
    ],
)
def test_finds(source, expected):
    assert sorted(codes(source)) == sorted(expected)


def test_host_side_code_is_exempt_but_input_rules_apply():
    source = """
    import torch
    from torch.utils.data import DataLoader, Dataset

    class Crops(Dataset):
        def __getitem__(self, i):
            t = torch.rand(8)
            return t[t > 0.5]

    def collate(batch):
        t = torch.stack(batch)
        if t.sum() > 0:
            return torch.nn.utils.rnn.pad_sequence(list(t[t > 0]))
        return t

    loader = DataLoader(Crops(), batch_size=4, collate_fn=collate)
    """
    assert codes(source) == [(13, "DYN402"), (16, "DYN401")]


def test_long_operator_chain_that_cpython_parses_is_analyzed():
    # 2,000 terms nest ~2,000 BinOps deep: above Python's default recursion limit
    source = "import torch\nx = " + " + ".join(["torch.ones(1)"] * 2000) + "\ny = x[x > 0]\n"
    assert codes(source) == [(3, "DYN101")]
