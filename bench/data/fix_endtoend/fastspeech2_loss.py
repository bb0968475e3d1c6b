# Excerpt: transformers 5.23.0 (wheel), transformers/models/fastspeech2_conformer/
# modeling_fastspeech2_conformer.py, lines 870-977: FastSpeech2ConformerLoss (its long docstring
# left out).  Apache-2.0, Copyright 2023 The Espnet authors, IMS Toucan authors, and the HuggingFace
# Inc. team.  Verbatim otherwise; the config is a stand-in with the two flags it reads.
# Used by bench/fix_endtoend.py (not imported by dynlint).
from types import SimpleNamespace

import torch
from torch import nn

SOURCE = "transformers 5.23.0 models/fastspeech2_conformer/modeling_fastspeech2_conformer.py:870-977"
FastSpeech2ConformerConfig = SimpleNamespace


class FastSpeech2ConformerLoss(nn.Module):
    def __init__(self, config: FastSpeech2ConformerConfig):
        super().__init__()

        use_masking = config.use_masking
        use_weighted_masking = config.use_weighted_masking

        if use_masking and use_weighted_masking:
            raise ValueError("Either use_masking or use_weighted_masking can be True, but not both.")

        self.use_masking = use_masking
        self.use_weighted_masking = use_weighted_masking

        # define criterions
        reduction = "none" if self.use_weighted_masking else "mean"
        self.l1_criterion = nn.L1Loss(reduction=reduction)
        self.mse_criterion = nn.MSELoss(reduction=reduction)
        self.duration_criterion = nn.MSELoss(reduction=reduction)
        self.log_domain_offset = 1.0

    def forward(
        self,
        outputs_after_postnet,
        outputs_before_postnet,
        duration_outputs,
        pitch_outputs,
        energy_outputs,
        spectrogram_labels,
        duration_labels,
        pitch_labels,
        energy_labels,
        duration_mask,
        spectrogram_mask,
    ):
        pitch_and_energy_masks = duration_mask.unsqueeze(-1)

        # apply mask to remove padded part
        if self.use_masking:
            outputs_before_postnet = outputs_before_postnet.masked_select(spectrogram_mask)
            if outputs_after_postnet is not None:
                outputs_after_postnet = outputs_after_postnet.masked_select(spectrogram_mask)
            spectrogram_labels = spectrogram_labels.masked_select(spectrogram_mask)
            duration_outputs = duration_outputs.masked_select(duration_mask)
            duration_labels = duration_labels.masked_select(duration_mask)
            pitch_outputs = pitch_outputs.masked_select(pitch_and_energy_masks)
            energy_outputs = energy_outputs.masked_select(pitch_and_energy_masks)
            pitch_labels = pitch_labels.masked_select(pitch_and_energy_masks)
            energy_labels = energy_labels.masked_select(pitch_and_energy_masks)

        # calculate loss
        l1_loss = self.l1_criterion(outputs_before_postnet, spectrogram_labels)
        if outputs_after_postnet is not None:
            l1_loss = l1_loss + self.l1_criterion(outputs_after_postnet, spectrogram_labels)
        duration_labels = torch.log(duration_labels.float() + self.log_domain_offset)
        duration_loss = self.duration_criterion(duration_outputs, duration_labels)
        pitch_loss = self.mse_criterion(pitch_outputs, pitch_labels)
        energy_loss = self.mse_criterion(energy_outputs, energy_labels)

        # make weighted mask and apply it
        if self.use_weighted_masking:
            spectrogram_mask = nn.functional.pad(
                spectrogram_mask.transpose(1, 2),
                [0, spectrogram_labels.size(1) - spectrogram_mask.size(1), 0, 0, 0, 0],
                value=False,
            ).transpose(1, 2)

            out_weights = spectrogram_mask.float() / spectrogram_mask.sum(dim=1, keepdim=True).float()
            out_weights /= spectrogram_labels.size(0) * spectrogram_labels.size(2)
            duration_weights = duration_mask.float() / duration_mask.sum(dim=1, keepdim=True).float()
            duration_weights /= duration_labels.size(0)

            # apply weight
            l1_loss = l1_loss.mul(out_weights).masked_select(spectrogram_mask).sum()
            duration_loss = duration_loss.mul(duration_weights).masked_select(duration_mask).sum()
            pitch_weights = duration_weights.unsqueeze(-1)
            pitch_loss = pitch_loss.mul(pitch_weights).masked_select(pitch_and_energy_masks).sum()
            energy_loss = energy_loss.mul(pitch_weights).masked_select(pitch_and_energy_masks).sum()

        return l1_loss + duration_loss + pitch_loss + energy_loss


# --------------------------------------------------------------------------- bench harness
def build():
    return FastSpeech2ConformerLoss(FastSpeech2ConformerConfig(use_masking=False, use_weighted_masking=True))


GRAD = (0, 1, 2, 3, 4)  # the model's outputs


def inputs(generator, masks):
    """3 utterances, 6 text tokens, 10 frames, 4 mel bins; the padding masks by ``masks``; NaN and
    +-inf in every output and label outside its mask."""
    batch, tokens, frames, mels = 3, 6, 10, 4
    duration_mask = _mask((batch, tokens), masks, generator)
    spectrogram_mask = _mask((batch, frames), masks, generator).unsqueeze(-1)
    pitch_mask = duration_mask.unsqueeze(-1)

    def value(shape, mask):
        x = torch.randn(shape, generator=generator)
        junk = torch.tensor([float("nan"), float("inf"), -float("inf")])[
            torch.randint(0, 3, shape, generator=generator)]
        return torch.where(mask.expand(shape), x, junk)

    return (
        value((batch, frames, mels), spectrogram_mask),
        value((batch, frames, mels), spectrogram_mask),
        value((batch, tokens), duration_mask),
        value((batch, tokens, 1), pitch_mask),
        value((batch, tokens, 1), pitch_mask),
        value((batch, frames, mels), spectrogram_mask),
        torch.where(duration_mask, torch.randint(1, 5, (batch, tokens), generator=generator), 0),
        value((batch, tokens, 1), pitch_mask),
        value((batch, tokens, 1), pitch_mask),
        duration_mask,
        spectrogram_mask,
    )


def _mask(shape, masks, generator):
    if masks == "empty":
        return torch.zeros(shape, dtype=torch.bool)
    if masks == "full":
        return torch.ones(shape, dtype=torch.bool)
    if masks == "single":
        return torch.arange(torch.Size(shape).numel()).reshape(shape) == 3
    return torch.rand(shape, generator=generator) < 0.6
