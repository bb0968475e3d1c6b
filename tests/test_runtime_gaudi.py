"""Gaudi drop-in: the snippets of Gaudi's documentation run with only the import and the device changed.

Sources: docs.habana.ai "Handling Dynamic Shapes" (data_dynamicity on MNIST and Food101,
detect_recompilation_auto_model on InnerNet), Habana's Gaudi2-Workshop "Dynamic_Shapes"
notebook (the same tools, the static rewrite), and the calls of Gaudi's own tests
(mdlname=, waittime=, raw_logs(), const_shape_dataloader(dl, maxlen), lookups by shape
tuple).  Datasets that the snippets download are replaced by stand-ins of the same shapes
(no network here); everything else is the documented text.
"""

from __future__ import annotations

import csv
import random
import sys
import textwrap
import types

import pytest

torch = pytest.importorskip("torch")
from torch.utils.data import DataLoader, Dataset  # noqa: E402

from dynlint.runtime import const_shape_dataloader, data_dynamicity, detect_recompilation_auto_model  # noqa: E402

GAUDI_IMPORT = "from habana_frameworks.torch.utils.experimental import"


def run_snippet(code: str, namespace: dict | None = None) -> dict:
    """Run a documented snippet with Gaudi's import and device swapped for ours."""
    code = textwrap.dedent(code).replace(GAUDI_IMPORT, "from dynlint.runtime import")
    code = code.replace("'hpu'", "'cpu'").replace('"hpu"', '"cpu"')
    assert "habana" not in code
    namespace = dict(namespace or {}, __name__="__gaudi_snippet__")
    exec(compile(code, "<gaudi-snippet>", "exec"), namespace)
    return namespace


@pytest.fixture(autouse=True)
def _in_tmp(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)        # the snippets write out_1.csv / out_2.csv to the working directory
    torch._dynamo.reset()
    yield


def read_csv(name):
    with open(name, newline="") as handle:
        return list(csv.reader(handle))


# -- detect_recompilation_auto_model ---------------------------------------------------------------------

DOCS_DYNAMIC_OPS = """
    from habana_frameworks.torch.utils.experimental import detect_recompilation_auto_model
    import torch

    class InnerNet(torch.nn.Module):
       def  __init__ (self):
          super(InnerNet, self). __init__ ()
          self.conv = torch.nn.Conv2d(1, 8, 3, 3)

       def forward(self, x):
          x = torch.flatten(self.conv(x), 1)
          x = x[x>0] # This is dynamic
          return x.sum()

    net = torch.nn.Sequential(torch.nn.ReLU(), InnerNet())
    net = detect_recompilation_auto_model(net)

    for bs in [20,20,20,30,30]: #Input shape changes at 4th step
       inp = torch.rand(bs, 1, 50, 50).to('hpu')
       print(net(inp))
    net.analyse_dynamicity() # Call this after a few steps to generate the dynamicity report
"""


def test_docs_dynamic_ops_snippet_blames_innernet_at_steps_1_2_4(capsys):
    torch.manual_seed(0)
    run_snippet(DOCS_DYNAMIC_OPS)
    printed = capsys.readouterr().out
    assert "Step" in printed and "Recompile count" in printed
    rows = read_csv("out_1.csv")
    assert rows[0][:7] == ["Step", "Recompiling modules", "New in", "New out", "Class", "Location", "Comment"]
    maybe_dyn = [(int(r[0]), r[1]) for r in rows[1:] if r[6] == "Already processed input shape still recompiled. Maybe dyn ops"]
    assert maybe_dyn == [(1, "Sequential/1"), (2, "Sequential/1"), (4, "Sequential/1")]
    # Its parent recompiled with it, flagged as such; step 3 is the new batch size for everyone.
    parent = [(int(r[0]), r[6]) for r in rows[1:] if r[1] == "Sequential"]
    assert parent == [(1, "Already processed input shape still recompiled. Maybe dyn ops. Could be due to dynamic child"),
                      (2, "Already processed input shape still recompiled. Maybe dyn ops. Could be due to dynamic child"),
                      (3, "Recompiled due to new input shape"),
                      (4, "Already processed input shape still recompiled. Maybe dyn ops. Could be due to dynamic child")]
    assert {r[1] for r in rows[1:] if int(r[0]) == 3} == {"Sequential", "Sequential/0", "Sequential/1",
                                                           "Sequential/1/conv"}
    summary = read_csv("out_2.csv")
    assert summary[0][:2] == ["Module name", "Recompile count"]
    assert ["Sequential/1", "4"] in [row[:2] for row in summary[1:]]


NOTEBOOK_STATIC = """
    from habana_frameworks.torch.utils.experimental import detect_recompilation_auto_model
    import torch


    class InnerNet(torch.nn.Module):
       def __init__(self):
          super(InnerNet, self).__init__()
          self.conv = torch.nn.Conv2d(1, 8, 3, 3)

       def forward(self, x):
          x = torch.flatten(self.conv(x), 1)
          #x = x[x>0] # This is dynamic, replacing in next line with static implementation
          x = torch.where(x>0, x, torch.zeros_like(x))
          return x.sum()

    net = torch.nn.Sequential(torch.nn.ReLU(), InnerNet()).to('hpu')
    net = detect_recompilation_auto_model(net)

    for bs in [20,20,30,30]: #Input shape changes at 4th step
       inp = torch.rand(bs, 1, 50, 50).to('hpu')
       print(net(inp))
    net.analyse_dynamicity() # Call this after a few steps to generate the dynamicity report
"""


def test_notebook_static_rewrite_shows_only_the_new_input_step():
    run_snippet(NOTEBOOK_STATIC)
    rows = read_csv("out_1.csv")[1:]
    assert rows and {int(r[0]) for r in rows} == {2}
    assert {r[6] for r in rows} == {"Recompiled due to new input shape"}


GAUDI_TEST_TRAIN = """
    import numpy as np
    import torch
    import torch.nn as nn
    from habana_frameworks.torch.utils.experimental import detect_recompilation_auto_model


    class InnerNet(nn.Module):
        def __init__(self):
            super().__init__()
            self.conv1 = nn.Conv2d(1, 8, 3, 3)
            self.idx = 1

        def forward(self, x):
            x = torch.flatten(self.conv1(x), 1)
            mask = torch.tensor([True] * self.idx + [False] * (x.shape[0] - self.idx)).to(x.device)
            self.idx += 1
            return torch.cat([torch.sum(x[mask, :] * 3, dim=[-1]), torch.sum(x[~mask, :] * 2, dim=[-1])])


    class Net(nn.Module):
        def __init__(self, wrap_inner):
            super().__init__()
            innernet = InnerNet()
            if wrap_inner:
                self.innernet = detect_recompilation_auto_model(innernet, mdlname="InnerNet", waittime=0.25)
            else:
                self.innernet = innernet

        def forward(self, x):
            return 2 * self.innernet(x)


    def train(wrap_inner):
        device = "hpu"
        net = Net(wrap_inner).to(device)
        if not wrap_inner:
            net = detect_recompilation_auto_model(net, mdlname="Net", waittime=0.2)
        optimizer = torch.optim.Adam(net.parameters(), lr=0.005)
        loss_func = torch.nn.MSELoss()
        for bs in [10] * 3 + [20] * 2:
            inp_np = np.random.random((bs, 1, 50, 50)).astype(np.float32)
            inputs = torch.tensor(inp_np).to(device)
            outputs = torch.tensor(np.trace(inp_np, axis1=2, axis2=3)).squeeze().to(device)
            prediction = net(inputs)
            loss = loss_func(prediction, outputs)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        if wrap_inner:
            return "\\n".join(net.innernet.raw_logs()), net.innernet
        else:
            return "\\n".join(net.raw_logs()), net
"""


@pytest.mark.parametrize("wrap_inner", [False, True])
def test_gaudi_calls_mdlname_waittime_and_raw_logs(wrap_inner):
    import numpy as np

    np.random.seed(0)
    namespace = run_snippet(GAUDI_TEST_TRAIN)
    logs, model = namespace["train"](wrap_inner)
    root = "InnerNet" if wrap_inner else "Net"
    inner = "InnerNet" if wrap_inner else "Net/innernet"
    lines = logs.splitlines()
    # One registration line per module, named from mdlname, with Gaudi's tag and wording.
    registered = [ln.split("Registering hooks for ")[1].split(" of type ")[0] for ln in lines if "Registering hooks" in ln]
    assert registered == ([root, f"{root}/conv1"] if wrap_inner else [root, inner, f"{inner}/conv1"])
    assert all(ln.lstrip().startswith("[DETECT_RECOMPILE_AUTO]") for ln in lines)
    step_lines = [ln for ln in lines if f"[DETECT_RECOMPILE_AUTO][{root}]step:" in ln]
    assert [int(ln.split("step:")[1].split()[0]) for ln in step_lines] == [0, 1, 2, 3, 4]
    # The mask changes every step: the inner module recompiles on an input shape it has seen.
    recompiled = [ln for ln in lines if "Recompilation!" in ln and f"[{inner}]" in ln]
    assert len(recompiled) == 4
    report = model.analyse_dynamicity(print_tables=False, csv_out=None)
    assert report.dynamic_modules() == [inner]
    assert report.modules[0].path == root
    model.remove_hooks()
    assert not hasattr(model, "raw_logs")


def test_gaudi_positional_order_is_mdlname_then_waittime():
    net = torch.nn.Sequential(torch.nn.ReLU())
    model = detect_recompilation_auto_model(net, "MyNet", 0.1, None)
    model(torch.ones(2))
    assert model.analyse_dynamicity(print_tables=False).modules[0].path == "MyNet"
    model.remove_hooks()
    with pytest.raises(TypeError, match="mdlname must be a string"):
        detect_recompilation_auto_model(net, 0.3)


# -- data_dynamicity and const_shape_dataloader -----------------------------------------------------------

class FakeMNIST(Dataset):
    """MNIST's item shapes (1x28x28 images and an int label) without the download; 600 items instead of
    60000 (the real size takes ~10 s through two workers here), 600 % 7 = 5 still leaves a short last batch."""

    def __init__(self, root, download=False, transform=None, train=True):
        self.image = torch.zeros(1, 28, 28)

    def __len__(self):
        return 600

    def __getitem__(self, index):
        return self.image, index % 10


class FakeFood101(Dataset):
    """Images of varied sizes as Food101 has (3 x H x W, H and W at most 512)."""

    def __init__(self, root, download=False, transform=None):
        gen = random.Random(101)
        self.sizes = [(gen.choice([384, 512]), gen.randrange(300, 513)) for _ in range(280)]

    def __len__(self):
        return len(self.sizes)

    def __getitem__(self, index):
        return torch.zeros(3, *self.sizes[index]), index % 101


@pytest.fixture
def fake_torchvision(monkeypatch):
    stub = types.ModuleType("torchvision")
    stub.datasets = types.SimpleNamespace(MNIST=FakeMNIST, Food101=FakeFood101)
    stub.transforms = types.SimpleNamespace(ToTensor=lambda: None)
    monkeypatch.setitem(sys.modules, "torchvision", stub)
    return stub


DOCS_MNIST = """
    from habana_frameworks.torch.utils.experimental import data_dynamicity
    import torchvision
    from torch.utils.data import DataLoader

    # Creating a sample MNIST dataloader
    mnist_ds = torchvision.datasets.MNIST('mnist', download=True, transform=torchvision.transforms.ToTensor())
    mnist_dl = DataLoader(mnist_ds, batch_size=7, num_workers=2)

    data_dynamicity(mnist_dl)
"""


def test_docs_mnist_snippet(fake_torchvision, capsys):
    namespace = run_snippet(DOCS_MNIST.replace("data_dynamicity(mnist_dl)", "res = data_dynamicity(mnist_dl)"))
    out = capsys.readouterr().out
    assert "Number of unique shapes: 2" in out
    assert "There is a little dynamicity in input data shapes" in out
    res = namespace["res"]
    # Looked up by shape tuple, as Gaudi's result is (its notebook shows ((7, 1, 28, 28), (7,)): 8571).
    assert res[((7, 1, 28, 28), (7,))] == 85 and res[((5, 1, 28, 28), (5,))] == 1
    assert res == {((7, 1, 28, 28), (7,)): 85, ((5, 1, 28, 28), (5,)): 1}
    assert ((5, 1, 28, 28), (5,)) in res and res.get(((3, 1, 28, 28), (3,))) is None


DOCS_FOOD101 = """
    from habana_frameworks.torch.utils.experimental import data_dynamicity
    import torchvision
    from torch.utils.data import DataLoader
    import torch

    def collate(batch):
       dim1 = min([k[0].shape[1] for k in batch])
       dim2 = min([k[0].shape[2] for k in batch])
       images = torch.stack([k[0][:,:dim1,:dim2] for k in batch])
       labels = torch.tensor([k[1] for k in batch])
       return (images,labels)

    food101_ds = torchvision.datasets.Food101('food101', download=True, transform=torchvision.transforms.ToTensor())
    food101_dl = DataLoader(food101_ds, batch_size=7, num_workers=2, collate_fn=collate)
    data_dynamicity(food101_dl)
"""


def test_docs_food101_snippet(fake_torchvision, capsys):
    run_snippet(DOCS_FOOD101)
    out = capsys.readouterr().out
    unique = int(out.split("Number of unique shapes: ")[1].split()[0])
    assert unique > 20
    assert "There is a lot of dynamicity in input data shapes" in out


class SampleDataset(Dataset):
    """Gaudi's own test dataset: random tensors of a few shapes."""

    def __init__(self, shapes, num, seed=42):
        self.shapes, self.num = shapes, num
        self.gen = random.Random(seed)

    def __len__(self):
        return self.num

    def __getitem__(self, idx):
        return torch.rand(*self.gen.choice(self.shapes))


def test_gaudi_dataloader_calls_and_maxlen():
    dataloader = DataLoader(SampleDataset([[3, 10, 10], [3, 20, 20], [3, 30, 30]], 60), batch_size=None)
    report = data_dynamicity(dataloader)
    expected = dict(report.shapes())
    assert set(expected) == {(3, 10, 10), (3, 20, 20), (3, 30, 30)} and sum(expected.values()) == 60
    assert report == expected
    const_shape_dl = const_shape_dataloader(dataloader, 2)
    assert len(const_shape_dl) == 2
    shapes = [tuple(k.shape) for k in const_shape_dl]
    assert len(shapes) == 2 and shapes[0] == shapes[1] and shapes[0] in expected
    assert [tuple(k.shape) for k in const_shape_dl] == shapes         # re-iterable
    # Gaudi's meaning of maxlen: at most that many; a short loader gives its most common shape.
    small = [torch.zeros(2), torch.zeros(3), torch.zeros(3)]
    assert [tuple(b.shape) for b in const_shape_dataloader(small, 5)] == [(3,), (3,)]


def test_empty_loader_says_the_dataset_looks_empty(capsys):
    histogram = data_dynamicity([])
    out = capsys.readouterr().out
    assert "Number of unique shapes: 0" in out and "Dataset looks empty" in out
    assert "There is no dynamicity" not in out and len(histogram) == 0
    with pytest.raises(ValueError, match="looks empty"):
        const_shape_dataloader([], 5)


def test_const_shape_dataloader_rejects_a_batch_as_maxlen():
    with pytest.raises(TypeError, match="reference="):
        const_shape_dataloader([torch.zeros(2)], torch.zeros(2))
