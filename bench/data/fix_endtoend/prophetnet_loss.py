# Excerpt: transformers 5.23.0 (wheel), transformers/models/prophetnet/modeling_prophetnet.py,
# lines 1617-1643: ProphetNetForConditionalGeneration._compute_loss (label smoothing over n-gram
# streams).  Apache-2.0, Copyright 2020 The Microsoft Authors and The HuggingFace Inc. team.
# Verbatim; the model around it is a stand-in holding the config fields it reads.
# Used by bench/fix_endtoend.py (not imported by dynlint).
from types import SimpleNamespace

import torch
from torch import nn

SOURCE = "transformers 5.23.0 models/prophetnet/modeling_prophetnet.py:1617-1643"


class ProphetNetLoss(nn.Module):
    def __init__(self, ngram=2, eps=0.1, disable_ngram_loss=False):
        super().__init__()
        self.config = SimpleNamespace(ngram=ngram, eps=eps)
        self.disable_ngram_loss = disable_ngram_loss

    def forward(self, logits, labels):
        return self._compute_loss(logits, labels)

    def _compute_loss(self, logits, labels, ignore_index=-100):
        expend_targets = labels.new_zeros(self.config.ngram, labels.size(0), labels.size(1)).fill_(ignore_index)

        for i in range(self.config.ngram):
            if i > 0 and self.disable_ngram_loss:
                break
            expend_targets[i, :, :] = labels

        logits = logits.transpose(0, 1).contiguous()
        lprobs = nn.functional.log_softmax(
            logits.view(-1, logits.size(-1)),
            dim=-1,
            dtype=torch.float32,
        )

        loss = nn.functional.nll_loss(lprobs, expend_targets.view(-1), reduction="mean")

        if self.config.eps > 0.0:
            smooth_loss = -lprobs.sum(dim=-1, keepdim=True)
            non_masked_tokens = expend_targets.ne(ignore_index).view(-1)
            smooth_loss = smooth_loss[non_masked_tokens]
            smooth_loss = smooth_loss.mean()

            eps_i = self.config.eps / lprobs.size(-1)
            loss = (1.0 - self.config.eps) * loss + eps_i * smooth_loss

        return loss


# --------------------------------------------------------------------------- bench harness
def build():
    return ProphetNetLoss()


GRAD = (0,)  # logits


def inputs(generator, masks):
    """logits (batch 3, ngram 2, 7 tokens, vocab 11), labels with -100 (ignored) by ``masks``; the
    logits of ignored tokens hold NaN and +-inf."""
    batch, ngram, tokens, vocab = 3, 2, 7, 11
    keep = _mask((batch, tokens), masks, generator)
    labels = torch.where(keep, torch.randint(0, vocab, (batch, tokens), generator=generator), -100)
    logits = torch.randn(batch, ngram, tokens, vocab, generator=generator)
    junk = torch.tensor([float("nan"), float("inf"), -float("inf")])[
        torch.randint(0, 3, logits.shape, generator=generator)]
    logits = torch.where(keep[:, None, :, None], logits, junk)
    return logits, labels


def _mask(shape, masks, generator):
    if masks == "empty":
        return torch.zeros(shape, dtype=torch.bool)
    if masks == "full":
        return torch.ones(shape, dtype=torch.bool)
    if masks == "single":
        return torch.arange(torch.Size(shape).numel()).reshape(shape) == 3
    return torch.rand(shape, generator=generator) < 0.6
