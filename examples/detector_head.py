"""A small detection-style model with the dynamic-shape hazards people write every day.

`dynlint check examples/` flags each of them; `dynlint fix --diff examples/` shows
the fixes that keep results exactly equal.
"""

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, Dataset


class Boxes(Dataset):
    """Host-side code: dynamic shapes here are fine (runs in data workers)."""

    def __init__(self, n: int = 64):
        self.scores = torch.rand(n, 16)

    def __len__(self):
        return len(self.scores)

    def __getitem__(self, i):
        s = self.scores[i]
        return s[s > 0.1]            # not flagged: host-side


def pad_collate(batch):
    return nn.utils.rnn.pad_sequence(batch, batch_first=True)


class DetectorHead(nn.Module):
    def __init__(self, dim: int = 16, num_classes: int = 4):
        super().__init__()
        self.proj = nn.Linear(dim, dim)
        self.cls = nn.Linear(dim, num_classes)

    def forward(self, feats, labels):
        x = self.proj(feats)
        keep = x > 0
        positive_sum = x[keep].sum()                 # DYN101: boolean-mask read
        picked = torch.nonzero(labels)               # DYN102: nonzero
        classes = labels.unique()                    # DYN103: unique
        if x.shape[0] > 32:                          # DYN201: branch on a size
            x = x[:32]
        if x.sum() > 0:                              # DYN202: branch on values
            x = x * 2
        count = int(keep.sum())                      # DYN301: host sync
        slots = torch.zeros(count)                   # DYN302: data-dependent size
        onehot = F.one_hot(labels)                   # DYN105: one_hot without num_classes
        logits = self.cls(x)
        return logits, positive_sum, picked, classes, slots, onehot


def make_loader():
    # DYN401 (short last batch) and DYN402 (pad to longest)
    return DataLoader(Boxes(), batch_size=8, shuffle=True, collate_fn=pad_collate)


compiled = torch.compile(DetectorHead(), dynamic=True)   # DYN501 (opt-in: --extend-select DYN501)
