"""Gaudi's dynamicity example, on any device: which module recompiles, and why.

python examples/gaudi_recompile.py
"""

import torch
import torch.nn as nn

from dynlint.runtime import detect_recompilation_auto_model


class InnerNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(1, 8, 3, 3)

    def forward(self, x):
        x = torch.flatten(self.conv(x), 1)
        x = x[x > 0]  # data-dependent shape: a new graph whenever the count of positives changes
        return x.sum()


torch.manual_seed(0)
net = detect_recompilation_auto_model(nn.Sequential(nn.ReLU(), InnerNet()), csv_out=None)
for batch_size in (4, 4, 4, 6):
    net(torch.randn(batch_size, 1, 9, 9))
net.analyse_dynamicity()
net.remove_hooks()
