# Excerpt: torchaudio 2.11.0 (wheel), torchaudio/functional/functional.py, lines 806-810
# (_get_mask_param) and 885-956 (mask_along_axis, SpecAugment masking; its docstring left out).
# BSD-2-Clause, Copyright (c) 2017 Facebook Inc. (Soumith Chintala).  Verbatim otherwise.
# Used by bench/fix_endtoend.py (not imported by dynlint).
import torch
from torch import Tensor

SOURCE = "torchaudio 2.11.0 functional/functional.py:885-956"


def _get_mask_param(mask_param: int, p: float, axis_length: int) -> int:
    if p == 1.0:
        return mask_param
    else:
        return min(mask_param, int(axis_length * p))


def mask_along_axis(
    specgram: Tensor,
    mask_param: int,
    mask_value: float,
    axis: int,
    p: float = 1.0,
) -> Tensor:
    dim = specgram.dim()

    if dim < 2:
        raise ValueError(f"Spectrogram must have at least two dimensions (time and frequency) ({dim} given).")

    if axis not in [dim - 2, dim - 1]:
        raise ValueError(
            "Only Frequency and Time masking are supported"
            f" (axis {dim - 2} and axis {dim - 1} supported; {axis} given)."
        )

    if not 0.0 <= p <= 1.0:
        raise ValueError(f"The value of p must be between 0.0 and 1.0 ({p} given).")

    mask_param = _get_mask_param(mask_param, p, specgram.shape[axis])
    if mask_param < 1:
        return specgram

    # pack batch
    shape = specgram.size()
    specgram = specgram.reshape([-1] + list(shape[-2:]))
    # After packing, specgram is a 3D tensor, and the axis corresponding to the to-be-masked dimension
    # is now (axis - dim + 3), e.g. a tensor of shape (10, 2, 50, 10, 2) becomes a tensor of shape (1000, 10, 2).
    value = torch.rand(1) * mask_param
    min_value = torch.rand(1) * (specgram.size(axis - dim + 3) - value)

    mask_start = (min_value.long()).squeeze()
    mask_end = (min_value.long() + value.long()).squeeze()
    mask = torch.arange(0, specgram.shape[axis - dim + 3], device=specgram.device, dtype=specgram.dtype)
    mask = (mask >= mask_start) & (mask < mask_end)
    # unsqueeze the mask if the axis is frequency
    if axis == dim - 2:
        mask = mask.unsqueeze(-1)

    if mask_end - mask_start >= mask_param:
        raise ValueError("Number of columns to be masked should be less than mask_param")

    specgram = specgram.masked_fill(mask, mask_value)

    # unpack batch
    specgram = specgram.reshape(shape[:-2] + specgram.shape[-2:])


# --------------------------------------------------------------------------- bench harness
def build():
    return mask_along_axis


GRAD = (0,)  # specgram
RANDOM = True  # draws torch.rand: every run starts from one seed


def inputs(generator, masks):
    """A (2, 3, 16, 20) batch of spectrograms with NaN and +-inf here and there, masked along time
    (axis 3) or frequency (axis 2) with mask_param 6."""
    specgram = torch.randn(2, 3, 16, 20, generator=generator)
    junk = torch.rand(specgram.shape, generator=generator) < 0.05
    specgram = torch.where(junk, torch.tensor(float("nan")), specgram)
    axis = 2 if masks in ("empty", "single") else 3
    return specgram, 6, 0.0, axis
