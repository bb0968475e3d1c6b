# Excerpt: timm 1.0.31 (wheel), timm/loss/two_way_loss.py, lines 9-56: TwoWayLoss (docstrings
# shortened).  Apache-2.0, Copyright Ross Wightman.  Verbatim otherwise.
# Used by bench/fix_endtoend.py (not imported by dynlint).
import torch
import torch.nn as nn
import torch.nn.functional as F

SOURCE = "timm 1.0.31 loss/two_way_loss.py:9-56"

# Finite fill for masked logits, a row / column without any valid entry must not produce inf - inf in backward.
_MASK_VALUE = -1e4


class TwoWayLoss(nn.Module):
    """Two-way multi-label loss."""

    def __init__(self, tp: float = 4., tn: float = 1.):
        super().__init__()
        assert tp > 0 and tn > 0
        self.tp = tp
        self.tn = tn

    def forward(self, x: torch.Tensor, target: torch.Tensor) -> torch.Tensor:
        """
        Args:
            x: Input logits (batch_size, num_classes).
            target: Dense binary targets (batch_size, num_classes).
        """
        x = x.float()
        pos = target > 0.5
        pos_logits = (-x / self.tp).masked_fill(~pos, _MASK_VALUE)
        neg_logits = (x / self.tn).masked_fill(pos, _MASK_VALUE)

        loss = x.new_zeros(())
        for dim in (0, 1):  # 0: over the samples of each class, 1: over the classes of each sample
            valid = pos.any(dim=dim)
            hard_pos = torch.logsumexp(pos_logits, dim=dim) * self.tp
            hard_neg = torch.logsumexp(neg_logits, dim=dim) * self.tn
            # mean over valid entries, zero (but still attached to the graph) if there are none
            loss = loss + F.softplus(hard_neg + hard_pos)[valid].sum() / valid.sum().clamp(min=1)
        return loss


# --------------------------------------------------------------------------- bench harness
def build():
    return TwoWayLoss()


GRAD = (0,)  # x


def inputs(generator, masks):
    """logits (6 samples, 9 classes), binary targets by ``masks`` (rows and columns with no
    positive are the entries outside ``valid``)."""
    x = torch.randn(6, 9, generator=generator) * 3
    if masks == "empty":
        target = torch.zeros(6, 9)
    elif masks == "full":
        target = torch.ones(6, 9)
    elif masks == "single":
        target = (torch.arange(54).reshape(6, 9) == 3).float()
    else:
        target = (torch.rand(6, 9, generator=generator) < 0.15).float()
    return x, target
