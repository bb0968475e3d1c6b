# Excerpt: torchvision 0.29.1 (wheel), torchvision/models/detection/ssd.py, lines 304-324: the end of
# SSDHead... SSD.compute_loss (hard negative mining and the classification loss).  BSD-3-Clause,
# Copyright (c) Soumith Chintala 2016.  The lines are verbatim; what comes before them (matching
# anchors to boxes, the per-image box losses) is replaced by the forward's arguments.
# Used by bench/fix_endtoend.py (not imported by dynlint).
import torch
import torch.nn.functional as F
from torch import nn

SOURCE = "torchvision 0.29.1 models/detection/ssd.py:304-324"


class SSDClassificationLoss(nn.Module):
    def __init__(self, positive_fraction: float = 0.25):
        super().__init__()
        self.neg_to_pos_ratio = (1.0 - positive_fraction) / positive_fraction  # ssd.py:241

    def forward(self, cls_logits, cls_targets, bbox_loss, num_foreground: int):
        # Calculate classification loss
        num_classes = cls_logits.size(-1)
        cls_loss = F.cross_entropy(cls_logits.view(-1, num_classes), cls_targets.view(-1), reduction="none").view(
            cls_targets.size()
        )

        # Hard Negative Sampling
        foreground_idxs = cls_targets > 0
        num_negative = self.neg_to_pos_ratio * foreground_idxs.sum(1, keepdim=True)
        # num_negative[num_negative < self.neg_to_pos_ratio] = self.neg_to_pos_ratio
        negative_loss = cls_loss.clone()
        negative_loss[foreground_idxs] = -float("inf")  # use -inf to detect positive values that creeped in the sample
        values, idx = negative_loss.sort(1, descending=True)
        # background_idxs = torch.logical_and(idx.sort(1)[1] < num_negative, torch.isfinite(values))
        background_idxs = idx.sort(1)[1] < num_negative

        N = max(1, num_foreground)
        return {
            "bbox_regression": bbox_loss.sum() / N,
            "classification": (cls_loss[foreground_idxs].sum() + cls_loss[background_idxs].sum()) / N,
        }


# --------------------------------------------------------------------------- bench harness
def build():
    return SSDClassificationLoss()


GRAD = (0,)  # cls_logits


def inputs(generator, masks):
    """8 images x 12 anchors x 5 classes; foreground anchors (label > 0) by ``masks``; logits of
    anchors that are neither foreground nor among the hard negatives are not known in advance, so
    +-inf is put into the logits of non-target classes (finite or infinite losses, no NaN)."""
    images, anchors, classes = 8, 12, 5
    logits = torch.randn(images, anchors, classes, generator=generator)
    spikes = torch.rand(logits.shape, generator=generator) < 0.05
    logits = torch.where(spikes, torch.where(torch.rand(logits.shape, generator=generator) < 0.5, -1, 1) * torch.inf,
                         logits)
    labels = torch.randint(1, classes, (images, anchors), generator=generator)
    keep = _mask((images, anchors), masks, generator)
    targets = torch.where(keep, labels, 0)
    return logits, targets, torch.rand(images, generator=generator), int(keep.sum())


def _mask(shape, masks, generator):
    if masks == "empty":
        return torch.zeros(shape, dtype=torch.bool)
    if masks == "full":
        return torch.ones(shape, dtype=torch.bool)
    if masks == "single":
        return torch.arange(torch.Size(shape).numel()).reshape(shape) == 3
    return torch.rand(shape, generator=generator) < 0.3
