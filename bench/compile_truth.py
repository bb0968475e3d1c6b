"""Ground truth for real-model recall: where do real models break the graph, and does dynlint flag those lines?

Two modes.

``--collect`` (slow; needs a Python with torch, torchvision, transformers and timm, by default
/work/venv-models/bin/python): runs real models with random weights and tiny configs (nothing is
downloaded) under ``torch.compile(backend="eager")``, in eval and in train (with the model's loss and a
backward pass), at 2-3 input sizes each. Every model runs in its own subprocess with a timeout, so a
hang or a crash loses that model only (it is listed as skipped, with why). Graph breaks are captured
from dynamo's ``graph_breaks`` log artifact with ``dynlint.runtime.dynamo_events`` (set_logs then a
handler on ``torch._dynamo``; ``fullgraph=True`` is not an oracle, see ../shared/pytorch-facts.md).
A break is *truth* when its reason is data-dependent (the DATA_DEPENDENT_REASONS table below) and its
line is in library code (torchvision / transformers / timm). When dynamo names a torch-internal line
(a Python-level torch function called by the library), the innermost library frame of the break's
user traceback is taken instead and the torch line is kept as ``via``. The result, with the exact
package versions and the site-packages directory, goes to bench/data/compile_truth.json; library
breaks with other reasons are kept there too, under ``excluded_breaks``.

``--score`` (fast, the default): runs this checkout's ``dynlint check --output-format json --no-cache``
(``python -m dynlint`` with PYTHONPATH = the checkout that holds this bench/) over the library as a
user would check it -- the whole torchvision/ and timm/ packages, and for transformers the
directories of the models involved plus every transformers file outside models/ (``--whole-packages``
checks all of transformers) -- and prints recall per family and overall, every miss, and the findings
that cover each hit. The classification table is applied again at scoring time, so editing it needs no
new collection.

Matching rule (``statement_span`` and ``covers``): a break line counts as *flagged* when a finding whose
code starts with DYN1, DYN2 or DYN3 lies in the same file and its line range [row, end_row] intersects
the line range of the innermost statement containing the break line. For a compound statement
(if/for/while/with/def/try/except ...) whose header holds the break line, the range is the header only
(from its first line to the line before its first body statement), never its whole body. Recall counts
distinct (file, line) pairs: "distinct break lines flagged / total", per family and overall (a line
seen in two families counts once in each, once overall).

Commands:
    python bench/compile_truth.py --collect                 # all models, ~1 h on 2 cores
    python bench/compile_truth.py --collect --only 'mixtral|detr'   # rerun some, merge into the json
    python bench/compile_truth.py --score                   # seconds
    python bench/compile_truth.py --score --site-packages DIR --dynlint-args=--include-host
"""

from __future__ import annotations

import argparse
import ast
import datetime as _dt
import json
import os
import re
import shlex
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field

HERE = os.path.dirname(os.path.abspath(__file__))
CHECKOUT = os.path.dirname(HERE)
DEFAULT_TRUTH = os.path.join(HERE, "data", "compile_truth.json")
DEFAULT_PYTHON = "/work/venv-models/bin/python"
SCHEMA = 1

# ---------------------------------------------------------------------------------------------------
# Data tables
# ---------------------------------------------------------------------------------------------------

#: Library packages whose lines count as truth (top-level directories under site-packages).
LIBRARIES = ("torchvision", "transformers", "timm")

#: Data-dependent graph-break reasons: (regex searched in dynamo's gb_type, category). First match wins.
#: gb_types as named in torch/_dynamo/graph_break_registry.json (torch 2.14).
DATA_DEPENDENT_REASONS = (
    (r"^Dynamic shape operator", "dynamic-shape operator"),            # nonzero, x[mask], unique, nms ...
    (r"^Data-dependent branching", "data-dependent branching"),        # if t.any(): / tensor __bool__
    (r"^Data-dependent assertion", "data-dependent assertion"),
    (r"^Data dependent operator", "data-dependent operator"),          # arange(t.max()), x[t.argmax()]
    (r"Tensor\.item\(\)", "Tensor.item()"),                            # .item(), int(t), float(t), tolist on ints
    (r"Tensor\.tolist\(\)", "Tensor.tolist()"),
    (r"^Dynamic slicing with Tensor arguments", "data-dependent slicing"),
    (r"one_hot` with data-dependent output shape", "one_hot without num_classes"),
    (r"unbacked SymInt", "data-dependent size (unbacked SymInt)"),
)

#: Finding codes that count for recall (prefixes).
COUNTED_CODES = ("DYN1", "DYN2", "DYN3")

FAMILIES = ("detection", "moe", "detr", "audio", "vision-language", "timm",
            # models added after the analysis was tuned (2026-11-25), scored before any change made for them
            "moe-new", "audio-new")


def classify(reason: str) -> str | None:
    """The data-dependent category of a graph-break reason (dynamo's gb_type), or None."""
    for pattern, category in DATA_DEPENDENT_REASONS:
        if re.search(pattern, reason or ""):
            return category
    return None


def library_relpath(path: str) -> str | None:
    """'torchvision/ops/boxes.py' for '/.../site-packages/torchvision/ops/boxes.py'; None outside LIBRARIES."""
    normalized = path.replace("\\", "/")
    for marker in ("/site-packages/", "/dist-packages/"):
        index = normalized.rfind(marker)
        if index >= 0:
            rel = normalized[index + len(marker):]
            return rel if rel.split("/", 1)[0] in LIBRARIES and rel.endswith(".py") else None
    return None


# ---------------------------------------------------------------------------------------------------
# Matching
# ---------------------------------------------------------------------------------------------------

def _child_statements(node) -> list:
    children = []
    for name in ("body", "orelse", "finalbody", "handlers"):
        for child in getattr(node, name, None) or ():
            if isinstance(child, (ast.stmt, ast.ExceptHandler)):
                children.append(child)
    for case in getattr(node, "cases", None) or ():   # match statements: match_case has no position
        children.extend(case.body)
    return children


def _span_in(node, line: int) -> tuple[int, int]:
    children = _child_statements(node)
    if not children:
        return node.lineno, node.end_lineno
    first = min(child.lineno for child in children)
    if line < first:        # the header of a compound statement, not its body
        return node.lineno, max(node.lineno, first - 1)
    for child in children:
        if child.lineno <= line <= child.end_lineno:
            return _span_in(child, line)
    return line, line       # an `else:` / `finally:` line or a comment between statements


def statement_span(tree: ast.Module, line: int) -> tuple[int, int]:
    """Line range of the innermost statement containing ``line`` (a compound statement's header only)."""
    for node in tree.body:
        if node.lineno <= line <= node.end_lineno:
            return _span_in(node, line)
    return line, line


def covers(finding: dict, span: tuple[int, int]) -> bool:
    """Whether a dynlint JSON finding counts for a break whose statement spans ``span`` (same file assumed)."""
    if not str(finding.get("code", "")).startswith(COUNTED_CODES):
        return False
    start = finding["location"]["row"]
    end = (finding.get("end_location") or finding["location"])["row"]
    return start <= span[1] and end >= span[0]


# ---------------------------------------------------------------------------------------------------
# Parsing dynamo's graph-break messages (the header is parsed by dynlint.runtime.dynamo_events)
# ---------------------------------------------------------------------------------------------------

_FRAME_RE = re.compile(r'^\s*File "(?P<file>[^"]+)", line (?P<line>\d+), in (?P<func>.+?)\s*$', re.MULTILINE)
_TRACEBACK_MARKERS = ("User code traceback:", "The graph break occurred in the following user code:")


def traceback_frames(message: str) -> list[tuple[str, int]]:
    """(file, line) of each frame of the user traceback in a graph-break message, outermost first."""
    for marker in _TRACEBACK_MARKERS:
        index = message.find(marker)
        if index >= 0:
            return [(m.group("file"), int(m.group("line"))) for m in _FRAME_RE.finditer(message[index:])]
    return []


def attribute(header: tuple[str, int] | None, frames: list[tuple[str, int]]):
    """(library relpath, line, via) for a break: the header line if it is library code, otherwise the
    innermost library frame of the traceback (``via`` then names the non-library line); None if none."""
    if header is not None:
        rel = library_relpath(header[0])
        if rel is not None:
            return rel, header[1], ""
    for path, line in reversed(frames):
        rel = library_relpath(path)
        if rel is not None:
            via = ""
            if header is not None:
                via = f"{_short(header[0])}:{header[1]}"
            return rel, line, via
    return None


def _short(path: str) -> str:
    normalized = path.replace("\\", "/")
    for marker in ("/site-packages/", "/dist-packages/"):
        index = normalized.rfind(marker)
        if index >= 0:
            return normalized[index + len(marker):]
    return normalized


# ---------------------------------------------------------------------------------------------------
# Model cases (run by the worker, in the models venv; torch is imported only there)
# ---------------------------------------------------------------------------------------------------

@dataclass
class Case:
    family: str
    name: str
    build: object          # build(mode) -> (model, make_inputs(size, mode) -> (args, kwargs), loss(out))
    sizes: tuple
    modes: tuple = ("eval", "train")
    notes: str = ""
    size_label: object = field(default=None)
    dynamic: bool | None = None    # torch.compile(dynamic=...): None = automatic dynamic shapes (the default)

    def label(self, size) -> str:
        return self.size_label(size) if self.size_label else "x".join(str(s) for s in size)


def _rand_boxes(torch, n, h, w):
    x1 = torch.rand(n) * (w * 0.5)
    y1 = torch.rand(n) * (h * 0.5)
    x2 = torch.minimum(x1 + 8 + torch.rand(n) * (w * 0.4), torch.tensor(float(w - 1)))
    y2 = torch.minimum(y1 + 8 + torch.rand(n) * (h * 0.4), torch.tensor(float(h - 1)))
    return torch.stack([x1, y1, x2, y2], dim=1)


def _tv_detection(builder, kind="boxes", **kwargs):
    def build(mode):
        import torch
        import torchvision.models.detection as detection

        model = getattr(detection, builder)(weights=None, weights_backbone=None, num_classes=3, **kwargs)

        def make_inputs(size, mode):
            images = [torch.rand(3, h, w) for h, w in size]
            if mode == "eval":
                return (images,), {}
            targets = []
            for h, w in size:
                n = 3
                boxes = _rand_boxes(torch, n, h, w)
                target = {"boxes": boxes, "labels": torch.randint(1, 3, (n,))}
                if kind == "masks":
                    masks = torch.zeros(n, h, w, dtype=torch.uint8)
                    for i, (x1, y1, x2, y2) in enumerate(boxes.int().tolist()):
                        masks[i, y1:y2, x1:x2] = 1
                    target["masks"] = masks
                if kind == "keypoints":
                    k = kwargs.get("num_keypoints", 17)
                    fx, fy = torch.rand(n, k), torch.rand(n, k)
                    xs = boxes[:, 0:1] + fx * (boxes[:, 2:3] - boxes[:, 0:1])
                    ys = boxes[:, 1:2] + fy * (boxes[:, 3:4] - boxes[:, 1:2])
                    target["keypoints"] = torch.stack([xs, ys, torch.ones(n, k)], dim=2)
                targets.append(target)
            return (images, targets), {}

        return model, make_inputs, lambda out: sum(out.values())
    return build


_RCNN = dict(min_size=64, max_size=96, box_detections_per_img=8, rpn_pre_nms_top_n_test=200,
             rpn_post_nms_top_n_test=50, rpn_pre_nms_top_n_train=200, rpn_post_nms_top_n_train=50,
             box_batch_size_per_image=32)
_ONE_STAGE = dict(min_size=64, max_size=96, detections_per_img=8, topk_candidates=50)
_DET_SIZES = (((64, 80),), ((80, 64), (72, 96)), ((96, 72),))
# Static recompiles for the detectors: with automatic dynamic shapes one recompile of a ResNet-50/MobileNet
# backbone took 3 minutes on the 2-core machine (symbolic shape reasoning), 10 s static.
_DET_NOTE = "compiled with dynamic=False (automatic dynamic shapes: ~3 min per backbone recompile here)"


def _det_label(size):
    return f"{len(size)}@" + "+".join(f"{h}x{w}" for h, w in size)


_TINY_TEXT = dict(vocab_size=128, hidden_size=32, intermediate_size=64, num_hidden_layers=2,
                  num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=64,
                  pad_token_id=0, bos_token_id=1, eos_token_id=2)
# (batch, sequence length, right-padding of the last row)
_TEXT_SIZES = ((2, 8, 0), (2, 12, 3), (1, 16, 0))


def _text_label(size):
    b, s, pad = size
    return f"{b}x{s}" + (f" pad{pad}" if pad else "")


def _text_batch(torch, size, vocab, mode):
    b, s, pad = size
    ids = torch.randint(3, vocab, (b, s))
    mask = torch.ones(b, s, dtype=torch.long)
    if pad:
        mask[-1, s - pad:] = 0
        ids[-1, s - pad:] = 0
    kwargs = {"input_ids": ids, "attention_mask": mask}
    if mode == "train":
        kwargs["labels"] = ids.masked_fill(mask == 0, -100)
    return kwargs


def _hf_moe(config_name, model_name, **config):
    def build(mode):
        import torch
        import transformers

        cfg = getattr(transformers, config_name)(**{**_TINY_TEXT, **config}, experts_implementation="eager")
        model = getattr(transformers, model_name)(cfg)

        def make_inputs(size, mode):
            kwargs = _text_batch(torch, size, cfg.vocab_size, mode)
            if mode == "train":
                kwargs["output_router_logits"] = True
            return (), kwargs

        return model, make_inputs, lambda out: out.loss
    return build


def _resnet_backbone(transformers, stages=("stage4",)):
    return transformers.ResNetConfig(embedding_size=8, hidden_sizes=[8, 16, 16, 32], depths=[1, 1, 1, 1],
                                     out_features=list(stages))


_DETR_SIZES = ((2, 64, 80), (1, 96, 64), (2, 80, 80))


def _detr_batch(torch, size, mode, num_labels=3):
    b, h, w = size
    pixel_values = torch.rand(b, 3, h, w)
    pixel_mask = torch.ones(b, h, w, dtype=torch.long)
    if b > 1:               # the image processor pads a batch to its largest image
        pixel_mask[-1, :, w - w // 4:] = 0
        pixel_values[-1, :, :, w - w // 4:] = 0
    kwargs = {"pixel_values": pixel_values, "pixel_mask": pixel_mask}
    if mode == "train":
        labels = []
        for i in range(b):
            n = 2 + i
            centers = torch.rand(n, 2) * 0.5 + 0.25
            sizes = torch.rand(n, 2) * 0.3 + 0.1
            labels.append({"class_labels": torch.randint(0, num_labels, (n,)),
                           "boxes": torch.cat([centers, sizes], dim=1)})
        kwargs["labels"] = labels
    return kwargs


def _hf_detr(kind):
    def build(mode):
        import torch
        import transformers

        common = dict(use_pretrained_backbone=False, use_timm_backbone=False, d_model=32, encoder_layers=1,
                      decoder_layers=1, encoder_attention_heads=2, decoder_attention_heads=2,
                      encoder_ffn_dim=32, decoder_ffn_dim=32, num_queries=8, num_labels=3)
        if kind == "detr":
            cfg = transformers.DetrConfig(backbone_config=_resnet_backbone(transformers), **common)
            model = transformers.DetrForObjectDetection(cfg)
        elif kind == "conditional_detr":
            cfg = transformers.ConditionalDetrConfig(backbone_config=_resnet_backbone(transformers), **common)
            model = transformers.ConditionalDetrForObjectDetection(cfg)
        elif kind == "deformable_detr":
            cfg = transformers.DeformableDetrConfig(
                backbone_config=_resnet_backbone(transformers, ("stage2", "stage3", "stage4")),
                num_feature_levels=3, encoder_n_points=2, decoder_n_points=2,
                **dict(common, decoder_layers=2))     # one decoder layer leaves its weight-tying regex unmatched
            model = transformers.DeformableDetrForObjectDetection(cfg)
        elif kind == "rt_detr":
            backbone = transformers.RTDetrResNetConfig(embedding_size=8, hidden_sizes=[8, 16, 16, 32],
                                                       depths=[1, 1, 1, 1], out_features=["stage2", "stage3", "stage4"])
            cfg = transformers.RTDetrConfig(
                backbone_config=backbone, use_pretrained_backbone=False, use_timm_backbone=False,
                encoder_in_channels=[16, 16, 32], encoder_hidden_dim=16, encoder_ffn_dim=32, d_model=16,
                hidden_expansion=0.5, decoder_layers=1, decoder_ffn_dim=32, decoder_attention_heads=2,
                encoder_attention_heads=2, num_queries=8, num_labels=3, num_denoising=4,
                decoder_in_channels=[16, 16, 16], decoder_n_points=2, anchor_image_size=None)
            model = transformers.RTDetrForObjectDetection(cfg)
        else:
            raise ValueError(kind)

        def make_inputs(size, mode):
            kwargs = _detr_batch(torch, size, mode)
            if kind == "rt_detr":
                kwargs.pop("pixel_mask")
            return (), kwargs

        return model, make_inputs, lambda out: out.loss
    return build


_AUDIO_SIZES = ((2, 1600, 400), (1, 2400, 0), (2, 3200, 800))    # (batch, samples, padding of the last row)


def _audio_label(size):
    b, n, pad = size
    return f"{b}x{n}" + (f" pad{pad}" if pad else "")


def _hf_ctc(config_name, model_name, **extra):
    def build(mode):
        import torch
        import transformers

        cfg = getattr(transformers, config_name)(
            hidden_size=32, num_hidden_layers=2, num_attention_heads=2, intermediate_size=64,
            conv_dim=(16, 16, 16), conv_stride=(5, 2, 2), conv_kernel=(10, 3, 3), conv_bias=True,
            num_conv_pos_embeddings=16, num_conv_pos_embedding_groups=2, vocab_size=16, pad_token_id=0,
            mask_time_prob=0.3, mask_time_length=2, mask_feature_prob=0.2, mask_feature_length=2,
            feat_extract_norm="layer", do_stable_layer_norm=True, ctc_loss_reduction="mean", **extra)
        model = getattr(transformers, model_name)(cfg)

        def make_inputs(size, mode):
            b, n, pad = size
            values = torch.randn(b, n)
            mask = torch.ones(b, n, dtype=torch.long)
            if pad:
                mask[-1, n - pad:] = 0
                values[-1, n - pad:] = 0
            kwargs = {"input_values": values, "attention_mask": mask}
            if mode == "train":
                labels = torch.randint(1, 16, (b, 6))
                if b > 1:
                    labels[-1, 4:] = -100
                kwargs["labels"] = labels
            return (), kwargs

        return model, make_inputs, lambda out: out.loss
    return build


def _hf_audio_classifier(config_name, model_name):
    def build(mode):
        import torch
        import transformers

        cfg = getattr(transformers, config_name)(
            hidden_size=32, num_hidden_layers=2, num_attention_heads=2, intermediate_size=64,
            conv_dim=(16, 16, 16), conv_stride=(5, 2, 2), conv_kernel=(10, 3, 3),
            num_conv_pos_embeddings=16, num_conv_pos_embedding_groups=2, num_labels=4,
            mask_time_prob=0.3, mask_time_length=2, feat_extract_norm="layer", do_stable_layer_norm=True,
            use_weighted_layer_sum=True, classifier_proj_size=16,
            layerdrop=0.0)      # a dropped layer leaves the weighted layer sum one hidden state short
        model = getattr(transformers, model_name)(cfg)

        def make_inputs(size, mode):
            b, n, pad = size
            values = torch.randn(b, n)
            mask = torch.ones(b, n, dtype=torch.long)
            if pad:
                mask[-1, n - pad:] = 0
            kwargs = {"input_values": values, "attention_mask": mask}
            if mode == "train":
                kwargs["labels"] = torch.randint(0, 4, (b,))
            return (), kwargs

        return model, make_inputs, lambda out: out.loss
    return build


def _hf_whisper(mode):
    import torch
    import transformers

    cfg = transformers.WhisperConfig(
        vocab_size=64, num_mel_bins=16, d_model=32, encoder_layers=1, decoder_layers=1,
        encoder_attention_heads=2, decoder_attention_heads=2, encoder_ffn_dim=32, decoder_ffn_dim=32,
        max_source_positions=16, max_target_positions=32, pad_token_id=0, bos_token_id=1, eos_token_id=2,
        decoder_start_token_id=3, suppress_tokens=None, begin_suppress_tokens=None,
        mask_time_prob=0.3, mask_time_length=2, apply_spec_augment=True)
    model = transformers.WhisperForConditionalGeneration(cfg)

    def make_inputs(size, mode):
        b, t, pad = size
        features = torch.randn(b, 16, 32)
        ids = torch.randint(4, 64, (b, t))
        kwargs = {"input_features": features}
        if mode == "train":
            labels = ids.clone()
            if pad:
                labels[-1, t - pad:] = -100
            kwargs["labels"] = labels
        else:
            kwargs["decoder_input_ids"] = ids
        return (), kwargs

    return model, make_inputs, lambda out: out.loss


def _clip_vision(transformers, **extra):
    return transformers.CLIPVisionConfig(hidden_size=32, intermediate_size=64, num_hidden_layers=2,
                                         num_attention_heads=2, image_size=32, patch_size=8, **extra)


def _hf_llava(mode):
    import torch
    import transformers

    image_token = 127
    cfg = transformers.LlavaConfig(vision_config=_clip_vision(transformers),
                                   text_config=transformers.LlamaConfig(**_TINY_TEXT),
                                   image_token_id=image_token, projector_hidden_act="gelu",
                                   vision_feature_select_strategy="default", vision_feature_layer=-1)
    model = transformers.LlavaForConditionalGeneration(cfg)

    def make_inputs(size, mode):
        b, text, pad = size
        n_image = 16                                      # (32 / 8) ** 2 patches, CLS dropped
        ids = torch.randint(3, 120, (b, 1 + n_image + text))
        ids[:, 0] = 1
        ids[:, 1:1 + n_image] = image_token
        mask = torch.ones_like(ids)
        if pad:
            mask[-1, -pad:] = 0
        kwargs = {"input_ids": ids, "attention_mask": mask, "pixel_values": torch.rand(b, 3, 32, 32)}
        if mode == "train":
            labels = ids.masked_fill(ids == image_token, -100).masked_fill(mask == 0, -100)
            kwargs["labels"] = labels
        return (), kwargs

    return model, make_inputs, lambda out: out.loss


def _hf_qwen_vl(version):
    def build(mode):
        import torch
        import transformers

        text = dict(_TINY_TEXT, vocab_size=160, num_attention_heads=4, num_key_value_heads=2, hidden_size=32,
                    rope_parameters={"rope_type": "default", "rope_theta": 10000.0, "mrope_section": [1, 1, 2]})
        vision = dict(depth=1, num_heads=2, patch_size=4, spatial_merge_size=2, temporal_patch_size=2,
                      in_channels=3)
        if version == 2:
            vision.update(embed_dim=32, hidden_size=32, mlp_ratio=2)
            cfg_cls, model_cls = transformers.Qwen2VLConfig, transformers.Qwen2VLForConditionalGeneration
        else:
            vision.update(hidden_size=32, out_hidden_size=32, intermediate_size=64, window_size=16,
                          fullatt_block_indexes=[0])
            cfg_cls, model_cls = transformers.Qwen2_5_VLConfig, transformers.Qwen2_5_VLForConditionalGeneration
        cfg = cfg_cls(text_config=text, vision_config=vision, image_token_id=150, video_token_id=151,
                      vision_start_token_id=152, vision_end_token_id=153)
        model = model_cls(cfg)

        def make_inputs(size, mode):
            b, grid_h, grid_w, text_len = size
            n_patches = grid_h * grid_w                     # temporal grid 1 (an image is doubled in time)
            n_tokens = n_patches // 4                       # spatial merge 2x2
            rows = []
            for _ in range(b):
                row = [1, 152] + [150] * n_tokens + [153] + torch.randint(3, 140, (text_len,)).tolist()
                rows.append(row)
            ids = torch.tensor(rows)
            pixel_values = torch.rand(b * n_patches, 3 * 2 * 4 * 4)
            grid = torch.tensor([[1, grid_h, grid_w]] * b)
            kwargs = {"input_ids": ids, "attention_mask": torch.ones_like(ids), "pixel_values": pixel_values,
                      "image_grid_thw": grid, "mm_token_type_ids": (ids == 150).int()}   # as the processor returns
            if mode == "train":
                kwargs["labels"] = ids.masked_fill(ids >= 150, -100)
            return (), kwargs

        return model, make_inputs, lambda out: out.loss
    return build


def _hf_clip(mode):
    import torch
    import transformers

    cfg = transformers.CLIPConfig(
        text_config=dict(vocab_size=64, hidden_size=32, intermediate_size=64, num_hidden_layers=2,
                         num_attention_heads=2, max_position_embeddings=32, eos_token_id=2),
        vision_config=dict(hidden_size=32, intermediate_size=64, num_hidden_layers=2, num_attention_heads=2,
                           image_size=32, patch_size=8), projection_dim=16)
    model = transformers.CLIPModel(cfg)

    def make_inputs(size, mode):
        b, t, _ = size
        ids = torch.randint(3, 64, (b, t))
        ids[:, -1] = 2
        kwargs = {"input_ids": ids, "attention_mask": torch.ones_like(ids), "pixel_values": torch.rand(b, 3, 32, 32)}
        if mode == "train":
            kwargs["return_loss"] = True
        return (), kwargs

    return model, make_inputs, lambda out: out.loss


_TIMM_SIZES = ((2, 64, 64), (1, 96, 96), (2, 64, 96))


def _timm(name, **kwargs):
    def build(mode):
        import timm
        import torch
        import torch.nn.functional as F

        model = timm.create_model(name, pretrained=False, num_classes=10, **kwargs)

        def make_inputs(size, mode):
            b, h, w = size
            return (torch.rand(b, 3, h, w),), {}

        def loss(out):
            return F.cross_entropy(out, torch.zeros(out.shape[0], dtype=torch.long))

        return model, make_inputs, loss
    return build


def _timm_volo_mix_token(mode):
    import torch
    import torch.nn.functional as F
    from timm.models.volo import VOLO

    class ForwardTrain(torch.nn.Module):
        """What a token-labeling train script compiles: VOLO.forward_train (mix-token in training)."""

        def __init__(self, inner):
            super().__init__()
            self.inner = inner

        def forward(self, x):
            return self.inner.forward_train(x)

    inner = VOLO(num_classes=10, img_size=64, use_mix_token=True, layers=(1, 1, 1, 1),
                 embed_dims=(32, 64, 64, 64), num_heads=(1, 2, 2, 2), drop_path_rate=0.1)

    def make_inputs(size, mode):
        b, h, w = size
        return (torch.rand(b, 3, h, w),), {}

    def loss(out):
        logits = out[0] if isinstance(out, tuple) else out
        return F.cross_entropy(logits, torch.zeros(logits.shape[0], dtype=torch.long))

    return ForwardTrain(inner), make_inputs, loss


def _timm_naflex(mode):
    import timm
    import torch
    import torch.nn.functional as F

    model = timm.create_model("naflexvit_base_patch16_gap", pretrained=False, num_classes=10, embed_dim=32,
                              depth=2, num_heads=2)

    def make_inputs(size, mode):
        # What timm's NaFlex collator yields: per-image patch grids padded to one sequence length.
        grids, length = size
        b = len(grids)
        coord = torch.zeros(b, length, 2, dtype=torch.long)
        valid = torch.zeros(b, length, dtype=torch.bool)
        for i, (h, w) in enumerate(grids):
            ys, xs = torch.meshgrid(torch.arange(h), torch.arange(w), indexing="ij")
            coord[i, :h * w, 0] = ys.flatten()
            coord[i, :h * w, 1] = xs.flatten()
            valid[i, :h * w] = True
        return ({"patches": torch.rand(b, length, 16 * 16 * 3), "patch_coord": coord, "patch_valid": valid},), {}

    def loss(out):
        return F.cross_entropy(out, torch.zeros(out.shape[0], dtype=torch.long))

    return model, make_inputs, loss


def _naflex_label(size):
    grids, length = size
    return "+".join(f"{h}x{w}" for h, w in grids) + f" in {length}"


CASES = [
    # torchvision detection
    Case("detection", "fasterrcnn_mobilenet_v3_large_fpn", _tv_detection("fasterrcnn_mobilenet_v3_large_fpn", **_RCNN),
         _DET_SIZES, size_label=_det_label, dynamic=False, notes=_DET_NOTE),
    Case("detection", "maskrcnn_resnet50_fpn", _tv_detection("maskrcnn_resnet50_fpn", kind="masks", **_RCNN),
         _DET_SIZES, size_label=_det_label, dynamic=False, notes=_DET_NOTE),
    Case("detection", "keypointrcnn_resnet50_fpn",
         _tv_detection("keypointrcnn_resnet50_fpn", kind="keypoints", num_keypoints=5, **_RCNN),
         _DET_SIZES, size_label=_det_label, dynamic=False, notes=_DET_NOTE),
    Case("detection", "retinanet_resnet50_fpn", _tv_detection("retinanet_resnet50_fpn", **_ONE_STAGE),
         _DET_SIZES, size_label=_det_label, dynamic=False, notes=_DET_NOTE),
    Case("detection", "fcos_resnet50_fpn", _tv_detection("fcos_resnet50_fpn", **_ONE_STAGE),
         _DET_SIZES, size_label=_det_label, dynamic=False, notes=_DET_NOTE),
    Case("detection", "ssdlite320_mobilenet_v3_large",
         _tv_detection("ssdlite320_mobilenet_v3_large", detections_per_img=8, topk_candidates=50),
         (((64, 80), (80, 64)), ((96, 72), (72, 96), (64, 64))), size_label=_det_label, dynamic=False,
         notes="resizes every image to 320x320; batches of 2+ (its extra layers reach 1x1, and batch norm in "
               "training needs more than one value per channel); " + _DET_NOTE),
    # transformers mixture-of-experts (eager experts)
    Case("moe", "mixtral", _hf_moe("MixtralConfig", "MixtralForCausalLM", num_local_experts=4, num_experts_per_tok=2),
         _TEXT_SIZES, size_label=_text_label),
    Case("moe", "qwen2_moe", _hf_moe("Qwen2MoeConfig", "Qwen2MoeForCausalLM", num_experts=4, num_experts_per_tok=2,
                                     moe_intermediate_size=32, shared_expert_intermediate_size=32),
         _TEXT_SIZES, size_label=_text_label),
    Case("moe", "qwen3_moe", _hf_moe("Qwen3MoeConfig", "Qwen3MoeForCausalLM", num_experts=4, num_experts_per_tok=2,
                                     moe_intermediate_size=32, head_dim=8),
         _TEXT_SIZES, size_label=_text_label),
    Case("moe", "olmoe", _hf_moe("OlmoeConfig", "OlmoeForCausalLM", num_experts=4, num_experts_per_tok=2),
         _TEXT_SIZES, size_label=_text_label),
    Case("moe", "deepseek_v3", _hf_moe("DeepseekV3Config", "DeepseekV3ForCausalLM", n_routed_experts=4,
                                       n_shared_experts=1, num_experts_per_tok=2, moe_intermediate_size=32,
                                       n_group=2, topk_group=1, first_k_dense_replace=1, kv_lora_rank=16,
                                       q_lora_rank=16, qk_rope_head_dim=4, v_head_dim=8, qk_nope_head_dim=4,
                                       num_key_value_heads=4),
         _TEXT_SIZES, size_label=_text_label),
    Case("moe", "granitemoe", _hf_moe("GraniteMoeConfig", "GraniteMoeForCausalLM", num_local_experts=4,
                                      num_experts_per_tok=2),
         _TEXT_SIZES, size_label=_text_label),
    Case("moe", "phimoe", _hf_moe("PhimoeConfig", "PhimoeForCausalLM", num_local_experts=4, num_experts_per_tok=2),
         _TEXT_SIZES, size_label=_text_label),
    # DETR-like detectors
    Case("detr", "detr", _hf_detr("detr"), _DETR_SIZES),
    Case("detr", "conditional_detr", _hf_detr("conditional_detr"), _DETR_SIZES),
    Case("detr", "deformable_detr", _hf_detr("deformable_detr"), _DETR_SIZES),
    Case("detr", "rt_detr", _hf_detr("rt_detr"), ((2, 64, 96), (1, 96, 64), (2, 64, 64)),
         notes="sizes are multiples of 32, as its hybrid encoder needs"),
    # audio
    Case("audio", "wav2vec2_ctc", _hf_ctc("Wav2Vec2Config", "Wav2Vec2ForCTC"), _AUDIO_SIZES, size_label=_audio_label),
    Case("audio", "hubert_ctc", _hf_ctc("HubertConfig", "HubertForCTC"), _AUDIO_SIZES, size_label=_audio_label),
    Case("audio", "wavlm_ctc", _hf_ctc("WavLMConfig", "WavLMForCTC", num_buckets=16, max_bucket_distance=32,
                                       mask_feature_min_masks=0),     # WavLMConfig lacks it, its masking reads it
         _AUDIO_SIZES, size_label=_audio_label),
    Case("audio", "wav2vec2_classifier", _hf_audio_classifier("Wav2Vec2Config", "Wav2Vec2ForSequenceClassification"),
         _AUDIO_SIZES, size_label=_audio_label, notes="layerdrop=0 (the CTC models keep the default 0.1)"),
    Case("audio", "whisper", _hf_whisper, ((2, 6, 0), (2, 10, 3), (1, 14, 0)), size_label=_text_label),
    # vision-language
    Case("vision-language", "llava", _hf_llava, ((2, 6, 0), (2, 10, 3), (1, 14, 0)), size_label=_text_label),
    Case("vision-language", "qwen2_vl", _hf_qwen_vl(2), ((1, 4, 4, 6), (2, 4, 8, 6), (1, 8, 8, 10))),
    Case("vision-language", "qwen2_5_vl", _hf_qwen_vl(25), ((1, 4, 4, 6), (2, 4, 8, 6), (1, 8, 8, 10))),
    Case("vision-language", "clip", _hf_clip, ((2, 8, 0), (3, 12, 0)), size_label=_text_label),
    # timm
    Case("timm", "vit_tiny_patch16_224", _timm("vit_tiny_patch16_224", img_size=64, dynamic_img_size=True,
                                               drop_path_rate=0.1, patch_drop_rate=0.1), _TIMM_SIZES),
    Case("timm", "convnext_atto", _timm("convnext_atto", drop_path_rate=0.1), _TIMM_SIZES),
    Case("timm", "efficientnet_b0", _timm("efficientnet_b0", drop_path_rate=0.1), _TIMM_SIZES),
    Case("timm", "swin_tiny_patch4_window7_224", _timm("swin_tiny_patch4_window7_224", img_size=64, window_size=4,
                                                       strict_img_size=False, drop_path_rate=0.1), _TIMM_SIZES),
    Case("timm", "eva02_tiny_patch14_224", _timm("eva02_tiny_patch14_224", img_size=56, dynamic_img_size=True,
                                                 drop_path_rate=0.1), ((2, 56, 56), (1, 84, 84), (2, 56, 84))),
    Case("timm", "resnet18_dropblock", _timm("resnet18", drop_block_rate=0.1, drop_path_rate=0.1), _TIMM_SIZES),
    Case("timm", "volo_mix_token", _timm_volo_mix_token, ((2, 64, 64), (1, 64, 64), (3, 64, 64)),
         modes=("train",), notes="VOLO.forward_train compiled (token-labeling training; in eval it fails eagerly "
                                 "too); fixed 64x64 position embedding"),
    # Added on 2026-11-25 and scored before any change to dynlint was made because of them: MoE and audio
    # models of files dynlint was never run on while its analysis was tuned (each model's own modeling_*.py)
    Case("moe-new", "jetmoe", _hf_moe("JetMoeConfig", "JetMoeForCausalLM", num_local_experts=4, num_experts_per_tok=2,
                                      kv_channels=8, num_key_value_heads=2), _TEXT_SIZES, size_label=_text_label),
    Case("moe-new", "dbrx", _hf_moe("DbrxConfig", "DbrxForCausalLM", d_model=32, n_heads=4, n_layers=2,
                                    max_seq_len=64, ffn_config={"moe_num_experts": 4, "moe_top_k": 2,
                                                                "ffn_hidden_size": 32},
                                    attn_config={"kv_n_heads": 2, "rope_theta": 10000.0, "clip_qkv": 8.0}), _TEXT_SIZES, size_label=_text_label),
    Case("moe-new", "gpt_oss", _hf_moe("GptOssConfig", "GptOssForCausalLM", num_local_experts=4,
                                       num_experts_per_tok=2, head_dim=8, sliding_window=8), _TEXT_SIZES,
         size_label=_text_label),
    Case("moe-new", "glm4_moe", _hf_moe("Glm4MoeConfig", "Glm4MoeForCausalLM", n_routed_experts=4,
                                        num_experts_per_tok=2, moe_intermediate_size=16, first_k_dense_replace=0,
                                        n_group=1, topk_group=1, head_dim=8), _TEXT_SIZES, size_label=_text_label),
    Case("moe-new", "ernie4_5_moe", _hf_moe("Ernie4_5_MoeConfig", "Ernie4_5_MoeForCausalLM", moe_num_experts=4,
                                            moe_k=2, moe_intermediate_size=16, moe_layer_start_index=0),
         _TEXT_SIZES, size_label=_text_label),
    Case("moe-new", "hunyuan_v1_moe", _hf_moe("HunYuanMoEV1Config", "HunYuanMoEV1ForCausalLM", num_experts=4,
                                              moe_topk=2, head_dim=8), _TEXT_SIZES, size_label=_text_label),
    Case("moe-new", "dots1", _hf_moe("Dots1Config", "Dots1ForCausalLM", n_routed_experts=4, num_experts_per_tok=2,
                                     moe_intermediate_size=16, n_shared_experts=1, first_k_dense_replace=0, n_group=1, topk_group=1,
                                     head_dim=8), _TEXT_SIZES, size_label=_text_label),
    Case("moe-new", "flex_olmo", _hf_moe("FlexOlmoConfig", "FlexOlmoForCausalLM", num_experts=4,
                                         num_experts_per_tok=2), _TEXT_SIZES, size_label=_text_label),
    Case("audio-new", "sew_ctc", _hf_ctc("SEWConfig", "SEWForCTC", squeeze_factor=2), _AUDIO_SIZES,
         size_label=_audio_label),
    Case("audio-new", "unispeech_sat_ctc", _hf_ctc("UniSpeechSatConfig", "UniSpeechSatForCTC"), _AUDIO_SIZES,
         size_label=_audio_label),
    Case("audio-new", "data2vec_audio_ctc", _hf_ctc("Data2VecAudioConfig", "Data2VecAudioForCTC",
                                                    conv_pos_kernel_size=5),
         _AUDIO_SIZES, size_label=_audio_label),
    Case("audio-new", "wav2vec2_conformer_ctc", _hf_ctc("Wav2Vec2ConformerConfig", "Wav2Vec2ConformerForCTC",
                                                        conformer_conv_dropout=0.0, conv_depthwise_kernel_size=3),
         _AUDIO_SIZES, size_label=_audio_label),
    Case("timm", "naflexvit", _timm_naflex, ((((4, 5), (3, 4)), 20), ((((2, 6),), 12)), (((5, 5), (4, 4), (2, 3)), 25)),
         size_label=_naflex_label, notes="NaFlex inputs: variable patch grids padded to a sequence length"),
]
CASES_BY_NAME = {case.name: case for case in CASES}


# ---------------------------------------------------------------------------------------------------
# Worker: one model, in the models venv
# ---------------------------------------------------------------------------------------------------

def _one_line(exc: BaseException) -> str:
    """The error in one line; dynamo's own errors name the real cause on their "Explanation:" line."""
    lines = [line.strip() for line in f"{type(exc).__name__}: {exc}".strip().splitlines()]
    text = lines[0] if lines else type(exc).__name__
    explanation = next((line for line in lines[1:] if line.startswith("Explanation:")), "")
    if explanation:
        text += " -- " + explanation[len("Explanation:"):].strip()
    return text[:400]


def _seed(torch, seed: int) -> None:
    import random

    import numpy

    random.seed(seed)
    numpy.random.seed(seed)      # wav2vec2-style span masking draws with numpy
    torch.manual_seed(seed)


def run_worker(name: str, events_path: str) -> int:
    import logging

    import torch

    from dynlint.runtime.dynamo_events import DynamoCapture, parse_graph_break

    torch.set_num_threads(1)
    case = CASES_BY_NAME[name]
    out = open(events_path, "a", encoding="utf-8")

    def emit(**record):
        out.write(json.dumps(record) + "\n")
        out.flush()

    context = {"mode": None, "size": None}
    header_cache: dict = {}      # dynamo header (file, line) -> attribution, for messages without a traceback

    class Recorder(logging.Handler):
        def emit(self, record):
            if not record.name.endswith("__graph_breaks") or context["mode"] is None:
                return
            try:
                message = record.getMessage()
                parsed = parse_graph_break(message)
                reason = parsed.reason if parsed else ""
                detail = parsed.detail if parsed else ""
                exc = record.exc_info[1] if record.exc_info else None
                if exc is not None and getattr(exc, "gb_type", None) and not parsed:
                    reason = exc.gb_type
                    detail = (getattr(exc, "msg", "") or "").strip().splitlines()[0:1]
                    detail = detail[0] if detail else ""
                frames = traceback_frames(message)
                header = (parsed.filename, parsed.line) if parsed else (frames[-1] if frames else None)
                if header is None:
                    return
                where = attribute(header, frames)
                if where is None and not frames:
                    where = header_cache.get(header)
                if where is not None and frames:
                    header_cache[header] = where
                emit(kind="break", mode=context["mode"], size=context["size"],
                     file=where[0] if where else None, line=where[1] if where else None,
                     via=where[2] if where else "", where=f"{_short(header[0])}:{header[1]}",
                     reason=reason or "graph break", detail=detail)
            except Exception as error:   # never lose the run over bookkeeping
                emit(kind="note", text=f"unparsed graph-break record: {_one_line(error)}")

    capture = DynamoCapture(quiet=True).start()
    recorder = Recorder(logging.DEBUG)
    logging.getLogger("torch._dynamo").addHandler(recorder)
    try:
        for mode in case.modes:
            torch._dynamo.reset()
            _seed(torch, 0)
            started = time.monotonic()
            try:
                model, make_inputs, loss_fn = case.build(mode)
                model.train(mode == "train")
                compiled = torch.compile(model, backend="eager", dynamic=case.dynamic)
            except Exception as error:
                emit(kind="run", mode=mode, size=None, status="error", seconds=round(time.monotonic() - started, 2),
                     error="build: " + _one_line(error))
                continue
            for size in case.sizes:
                label = case.label(size)
                context.update(mode=mode, size=label)
                started = time.monotonic()
                try:
                    _seed(torch, 1)
                    args, kwargs = make_inputs(size, mode)
                    if mode == "train":
                        loss = loss_fn(compiled(*args, **kwargs))
                        loss.backward()
                        model.zero_grad(set_to_none=True)
                    else:
                        with torch.no_grad():
                            compiled(*args, **kwargs)
                    emit(kind="run", mode=mode, size=label, status="ok", seconds=round(time.monotonic() - started, 2))
                except Exception as error:
                    emit(kind="run", mode=mode, size=label, status="error",
                         seconds=round(time.monotonic() - started, 2), error=_one_line(error))
                finally:
                    context.update(mode=None, size=None)
    finally:
        logging.getLogger("torch._dynamo").removeHandler(recorder)
        capture.stop()
        out.close()
    return 0


_PROBE = r"""
import json, os, sys
import torch, torchvision, transformers, timm
print(json.dumps({"python": sys.version.split()[0], "torch": torch.__version__,
                  "torchvision": torchvision.__version__, "transformers": transformers.__version__,
                  "timm": timm.__version__,
                  "site_packages": os.path.dirname(os.path.dirname(os.path.abspath(torchvision.__file__)))}))
"""


# ---------------------------------------------------------------------------------------------------
# Collect: orchestrate the workers
# ---------------------------------------------------------------------------------------------------

def _worker_env() -> dict:
    env = dict(os.environ)
    env["PYTHONPATH"] = CHECKOUT + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    env.update(OMP_NUM_THREADS="1", MKL_NUM_THREADS="1", TOKENIZERS_PARALLELISM="false",
               HF_HUB_OFFLINE="1", TRANSFORMERS_OFFLINE="1", CUDA_VISIBLE_DEVICES="",
               TRANSFORMERS_VERBOSITY="error", PYTHONWARNINGS="ignore")
    env.pop("TORCH_LOGS", None)
    return env


def _run_case(python: str, case: Case, timeout: float) -> dict:
    """Run one case in a subprocess; returns its case record with its runs and break records."""
    with tempfile.TemporaryDirectory(prefix="compile_truth_") as tmp:
        events = os.path.join(tmp, "events.jsonl")
        log = os.path.join(tmp, "stderr.log")
        started = time.monotonic()
        with open(log, "wb") as err:
            proc = subprocess.Popen([python, os.path.abspath(__file__), "--worker", case.name, "--events", events],
                                    stdout=subprocess.DEVNULL, stderr=err, env=_worker_env(), cwd=tmp,
                                    start_new_session=True)
            timed_out = False
            try:
                rc = proc.wait(timeout=timeout)
            except subprocess.TimeoutExpired:
                timed_out = True
                os.killpg(proc.pid, signal.SIGKILL)
                rc = proc.wait()
        seconds = round(time.monotonic() - started, 1)
        records = []
        if os.path.exists(events):
            with open(events, encoding="utf-8") as handle:
                records = [json.loads(line) for line in handle if line.strip()]
        with open(log, encoding="utf-8", errors="replace") as handle:
            tail = [ln for ln in handle.read().splitlines() if ln.strip()][-1:]
    runs = [r for r in records if r["kind"] == "run"]
    breaks = [r for r in records if r["kind"] == "break"]
    ok = [r for r in runs if r["status"] == "ok"]
    why = ""
    if timed_out:
        why = f"timed out after {timeout:.0f} s"
    elif rc != 0:
        why = f"worker exited with {rc}" + (f": {tail[0][:200]}" if tail else "")
    if not ok:
        errors = [r["error"] for r in runs if r.get("error")]
        status, why = "skipped", why or (errors[0] if errors else "no run finished")
    elif len(ok) < len(runs) or why:
        status = "partial"
        why = why or "; ".join(sorted({f"{r['mode']}: {r['error']}" for r in runs if r["status"] != "ok"}))
    else:
        status = "ok"
    return {"family": case.family, "model": case.name, "status": status, "why": why, "seconds": seconds,
            "collected": _now(),
            "notes": case.notes, "runs": [{k: r.get(k) for k in ("mode", "size", "status", "seconds", "error")
                                           if r.get(k) is not None} for r in runs],
            "_breaks": breaks}


def _now() -> str:
    return _dt.datetime.now(_dt.timezone.utc).replace(microsecond=0).isoformat()


def _break_record(case_record: dict, raw: dict) -> dict:
    return {"family": case_record["family"], "model": case_record["model"], "mode": raw["mode"],
            "size": raw["size"], "file": raw["file"], "line": raw["line"], "reason": raw["reason"],
            "detail": raw.get("detail", ""), "via": raw.get("via", "")}


def collect(args) -> int:
    python = args.python
    if not os.path.exists(python):
        return _fail(f"models Python not found: {python} (give --python)")
    probe = subprocess.run([python, "-c", _PROBE], capture_output=True, text=True, env=_worker_env())
    if probe.returncode != 0:
        last = (probe.stderr.strip().splitlines() or ["?"])[-1]
        return _fail(f"{python} cannot import torch/torchvision/transformers/timm: {last}")
    env = json.loads(probe.stdout.strip().splitlines()[-1])
    site_packages = env.pop("site_packages")
    selected = [c for c in CASES if not args.only or re.search(args.only, f"{c.family}/{c.name}")]
    if not selected:
        return _fail(f"no model matches --only {args.only!r}")
    previous = None
    if args.only and os.path.exists(args.truth):
        previous = _load_truth(args.truth)
        if previous["versions"] != env:
            return _fail("--only would merge into a truth file collected with other versions; collect everything")
    print(f"collecting with {python}: torch {env['torch']}, torchvision {env['torchvision']}, "
          f"transformers {env['transformers']}, timm {env['timm']}", flush=True)
    cases, breaks, excluded, unattributed = [], [], [], {}
    for case in selected:
        record = _run_case(python, case, args.timeout)
        raw_breaks = record.pop("_breaks")
        seen = set()
        for raw in raw_breaks:
            if raw["file"] is None:
                key = (raw["where"], raw["reason"])
                unattributed[key] = unattributed.get(key, 0) + 1
                continue
            item = _break_record(record, raw)
            key = tuple(item[k] for k in ("mode", "size", "file", "line", "reason"))
            if key in seen:
                continue
            seen.add(key)
            (breaks if classify(item["reason"]) else excluded).append(item)
        cases.append(record)
        n_dd = len({(b["file"], b["line"]) for b in breaks if b["model"] == case.name})
        print(f"  {case.family:16} {case.name:34} {record['status']:8} {record['seconds']:7.1f} s  "
              f"data-dependent library lines: {n_dd}" + (f"  ({record['why']})" if record["why"] else ""), flush=True)
    if previous is not None:
        names = {c.name for c in selected}
        cases = [c for c in previous["cases"] if c["model"] not in names] + cases
        breaks = [b for b in previous["breaks"] if b["model"] not in names] + breaks
        excluded = [b for b in previous["excluded_breaks"] if b["model"] not in names] + excluded
    order = {c.name: i for i, c in enumerate(CASES)}
    cases.sort(key=lambda c: order.get(c["model"], len(order)))

    def sort_key(b):
        return order.get(b["model"], len(order)), b["mode"], b["size"] or "", b["file"], b["line"]
    truth = {
        "schema": SCHEMA,
        "collected": _now(),     # the latest write; each case has its own time (--only merges)
        "command": "python bench/compile_truth.py " + " ".join(shlex.quote(a) for a in sys.argv[1:]),
        "versions": env,
        "site_packages": site_packages,
        "classification": [list(row) for row in DATA_DEPENDENT_REASONS],
        "cases": cases,
        "breaks": sorted(breaks, key=sort_key),
        "excluded_breaks": sorted(excluded, key=sort_key),
    }
    os.makedirs(os.path.dirname(os.path.abspath(args.truth)), exist_ok=True)
    with open(args.truth, "w", encoding="utf-8") as handle:
        handle.write(dump_truth(truth))
    print(f"wrote {os.path.relpath(args.truth)}")
    if unattributed:
        print(f"graph breaks with no library frame (not truth): {sum(unattributed.values())}")
    print()
    print_collect_summary(truth)
    return 0


def dump_truth(truth: dict) -> str:
    """JSON with one case or break per line, so that a new collection diffs line by line."""
    parts = []
    for key, value in truth.items():
        if isinstance(value, list) and value:
            items = ",\n  ".join(json.dumps(item) for item in value)
            parts.append(f" {json.dumps(key)}: [\n  {items}\n ]")
        else:
            parts.append(f" {json.dumps(key)}: {json.dumps(value)}")
    return "{\n" + ",\n".join(parts) + "\n}\n"


def print_collect_summary(truth: dict) -> None:
    versions = truth["versions"]
    print(f"truth collected {truth['collected']}: torch {versions['torch']}, torchvision {versions['torchvision']}, "
          f"transformers {versions['transformers']}, timm {versions['timm']} (Python {versions['python']})")
    print(f"{'family':16} {'models':>6} {'ran':>4} {'runs ok':>8} {'breaks':>7} {'lines':>6}   "
          f"{'excluded (other reasons)':>24}")
    for family in FAMILIES:
        cases = [c for c in truth["cases"] if c["family"] == family]
        if not cases:
            continue
        ran = [c for c in cases if c["status"] != "skipped"]
        runs = [r for c in cases for r in c["runs"]]
        ok = [r for r in runs if r["status"] == "ok"]
        fam = [b for b in truth["breaks"] if b["family"] == family and classify(b["reason"])]
        other = [b for b in truth["excluded_breaks"] if b["family"] == family]
        print(f"{family:16} {len(cases):6} {len(ran):4} {len(ok):4}/{len(runs):<3} {len(fam):7} "
              f"{len({(b['file'], b['line']) for b in fam}):6}   {len({(b['file'], b['line']) for b in other}):24}")
    reasons: dict = {}
    for b in truth["breaks"]:
        category = classify(b["reason"])
        if category:
            reasons.setdefault(category, set()).add((b["file"], b["line"]))
    print("distinct lines by category: " + ", ".join(f"{k} {len(v)}" for k, v in sorted(reasons.items())))
    skipped = [c for c in truth["cases"] if c["status"] != "ok"]
    if skipped:
        print("models not fully run:")
        for c in skipped:
            print(f"  {c['status']:8} {c['family']}/{c['model']}: {c['why']}")


# ---------------------------------------------------------------------------------------------------
# Score
# ---------------------------------------------------------------------------------------------------

class ScoreError(Exception):
    """A clear one-line reason why scoring cannot run."""


def _fail(message: str) -> int:
    print(f"compile_truth: error: {message}", file=sys.stderr)
    return 2


def _load_truth(path: str) -> dict:
    try:
        with open(path, encoding="utf-8") as handle:
            truth = json.load(handle)
    except FileNotFoundError:
        raise ScoreError(f"no truth file at {path}; run --collect first") from None
    except (OSError, ValueError) as error:
        raise ScoreError(f"cannot read truth file {path}: {error}") from None
    if not isinstance(truth, dict) or truth.get("schema") != SCHEMA:
        raise ScoreError(f"{path} is not a compile_truth file of schema {SCHEMA}")
    return truth


def installed_version(site_packages: str, package: str) -> str | None:
    """Version of ``package`` from its *.dist-info directory in site_packages, or None."""
    prefix = package.replace("-", "_").lower() + "-"
    try:
        names = os.listdir(site_packages)
    except OSError:
        return None
    for name in names:
        if name.lower().startswith(prefix) and name.endswith(".dist-info"):
            return name[len(prefix):-len(".dist-info")]
    return None


def _same_version(a: str, b: str) -> bool:
    return a.split("+")[0] == b.split("+")[0]


def truth_lines(truth: dict) -> dict:
    """{(file, line): [break records]} for the breaks the current table classifies as data-dependent."""
    lines: dict = {}
    for item in truth["breaks"] + truth.get("excluded_breaks", []):
        if classify(item["reason"]):
            lines.setdefault((item["file"], item["line"]), []).append(item)
    return lines


def check_targets(files: set, site_packages: str, whole: bool) -> list[str]:
    """What dynlint checks: torchvision/ and timm/ whole; for transformers the involved model directories
    plus every file outside transformers/models (all of it with ``whole``)."""
    targets = set()
    for rel in files:
        parts = rel.split("/")
        if parts[0] == "transformers" and not whole:
            targets.add("transformers/*core*")
            if len(parts) > 3 and parts[1] == "models":
                targets.add("/".join(parts[:3]))
        else:
            targets.add(parts[0])
    paths = []
    for target in sorted(targets):
        if target == "transformers/*core*":
            root = os.path.join(site_packages, "transformers")
            for entry in sorted(os.listdir(root)):
                if entry != "models" and (entry.endswith(".py") or os.path.isdir(os.path.join(root, entry))) \
                        and entry != "__pycache__":
                    paths.append(os.path.join(root, entry))
            paths.append(os.path.join(root, "models", "__init__.py"))
        else:
            paths.append(os.path.join(site_packages, target))
    return paths


def run_dynlint(paths: list[str], extra_args: list[str]) -> tuple[list[dict], float]:
    env = dict(os.environ)
    env["PYTHONPATH"] = CHECKOUT + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    command = [sys.executable, "-m", "dynlint", "check", "--output-format", "json", "--no-cache", "--exit-zero",
               *extra_args, *paths]
    started = time.monotonic()
    proc = subprocess.run(command, capture_output=True, text=True, env=env, cwd=CHECKOUT)
    seconds = time.monotonic() - started
    if proc.returncode != 0:
        last = (proc.stderr.strip().splitlines() or ["(no message)"])[-1]
        raise ScoreError(f"dynlint check exited with {proc.returncode}: {last}")
    try:
        return json.loads(proc.stdout or "[]"), seconds
    except ValueError:
        raise ScoreError("dynlint check --output-format json printed something that is not JSON") from None


def _git_describe() -> str:
    """Which dynlint was scored: the checkout's commit and the last commit that changed dynlint/."""
    def git(*args):
        return subprocess.run(["git", "-C", CHECKOUT, *args], capture_output=True, text=True,
                              check=True).stdout.strip()
    try:
        head = git("rev-parse", "--short", "HEAD")
        package = git("log", "-1", "--format=%h", "--", "dynlint")
        dirty = git("status", "--porcelain", "--untracked-files=no", "--", "dynlint")
        return f"checkout {head}, dynlint/ as of {package}" + (" + uncommitted changes" if dirty else "")
    except (OSError, subprocess.CalledProcessError):
        return "(not a git checkout)"


def score(args) -> int:
    truth = _load_truth(args.truth)
    site_packages = args.site_packages or truth["site_packages"]
    if not os.path.isdir(site_packages):
        raise ScoreError(f"site-packages directory not found: {site_packages} (give --site-packages DIR: "
                         f"the one holding torchvision {truth['versions']['torchvision']}, transformers "
                         f"{truth['versions']['transformers']}, timm {truth['versions']['timm']})")
    lines = truth_lines(truth)
    if not lines:
        raise ScoreError(f"{args.truth} holds no data-dependent break lines")
    for package in sorted({f.split("/", 1)[0] for f, _ in lines}):
        found, wanted = installed_version(site_packages, package), truth["versions"].get(package, "?")
        if found is None:
            raise ScoreError(f"{package} is not installed in {site_packages} (the truth needs {package} {wanted})")
        if not _same_version(found, wanted) and not args.allow_version_mismatch:
            raise ScoreError(f"{package} {found} in {site_packages}, but the truth was collected on {wanted}: "
                             f"line numbers would not match (--allow-version-mismatch to score anyway)")
    files = {f for f, _ in lines}
    missing = sorted(f for f in files if not os.path.isfile(os.path.join(site_packages, f)))
    if missing:
        raise ScoreError(f"{missing[0]} is not in {site_packages}")
    paths = check_targets(files, site_packages, args.whole_packages)
    findings, seconds = run_dynlint(paths, shlex.split(args.dynlint_args or ""))

    by_file: dict = {}
    n_checked = set()
    for finding in findings:
        rel = os.path.relpath(os.path.abspath(os.path.join(CHECKOUT, finding["filename"])), site_packages)
        rel = rel.replace(os.sep, "/")
        n_checked.add(rel)
        by_file.setdefault(rel, []).append(finding)

    results = {}       # (file, line) -> (span, [covering findings], source line)
    for rel in sorted(files):
        with open(os.path.join(site_packages, rel), encoding="utf-8") as handle:
            source = handle.read()
        tree = ast.parse(source)
        source_lines = source.splitlines()
        for (f, line) in sorted(k for k in lines if k[0] == rel):
            span = statement_span(tree, line)
            hits = [x for x in by_file.get(rel, []) if covers(x, span)]
            text = source_lines[line - 1].strip() if 0 < line <= len(source_lines) else ""
            results[(f, line)] = (span, hits, text)

    versions = truth["versions"]
    counted = sum(1 for x in findings if str(x.get("code", "")).startswith(COUNTED_CODES))
    print(f"truth: {os.path.relpath(args.truth)} (collected {truth['collected']}; "
          f"torchvision {versions['torchvision']}, "
          f"transformers {versions['transformers']}, timm {versions['timm']}, on torch {versions['torch']})")
    print(f"dynlint: {_git_describe()}; checked {len(paths)} paths in {seconds:.1f} s: {len(findings)} findings, "
          f"{counted} of them DYN1xx/DYN2xx/DYN3xx" + (f" (args: {args.dynlint_args})" if args.dynlint_args else ""))
    print()
    print(f"{'family':16} {'flagged':>7} / {'lines':<5}  recall")
    summary = {}
    for family in FAMILIES + ("overall",):
        keys = [k for k, items in lines.items() if family == "overall" or any(i["family"] == family for i in items)]
        if not keys:
            continue
        flagged = sum(1 for k in keys if results[k][1])
        summary[family] = (flagged, len(keys))
        print(f"{family:16} {flagged:7} / {len(keys):<5}  {100.0 * flagged / len(keys):5.1f}%")

    def describe(key):
        items = lines[key]
        categories = sorted({classify(i["reason"]) for i in items})
        models = sorted({f"{i['model']}" for i in items})
        modes = "/".join(sorted({i["mode"] for i in items}))
        via = sorted({i["via"] for i in items if i.get("via")})
        return ", ".join(categories), ", ".join(models), modes, via

    misses = [k for k in sorted(results) if not results[k][1]]
    print()
    print(f"misses ({len(misses)}):")
    for key in misses:
        span, _, text = results[key]
        categories, models, modes, via = describe(key)
        print(f"  {key[0]}:{key[1]}  [{categories}]  ({models}; {modes})" + (f"  via {', '.join(via)}" if via else ""))
        print(f"      {text}")
    hits = [k for k in sorted(results) if results[k][1]]
    print()
    print(f"hits ({len(hits)}):")
    for key in hits:
        span, found, text = results[key]
        categories, models, modes, _ = describe(key)
        labels: dict = {}
        for x in found:
            end = (x.get("end_location") or x["location"])["row"]
            label = f"{x['code']}@{x['location']['row']}" + (f"-{end}" if end != x["location"]["row"] else "")
            labels[label] = labels.get(label, 0) + 1
        codes = ", ".join(label + (f" x{count}" if count > 1 else "") for label, count in labels.items())
        print(f"  {key[0]}:{key[1]}  [{categories}]  <- {codes}")
        print(f"      {text}")
    if args.json_out:
        data = {"dynlint": _git_describe(),
                "summary": {k: {"flagged": v[0], "lines": v[1]} for k, v in summary.items()},
                "lines": [{"file": k[0], "line": k[1], "span": list(results[k][0]), "flagged": bool(results[k][1]),
                           "findings": [{"code": x["code"], "row": x["location"]["row"]} for x in results[k][1]],
                           "categories": describe(k)[0], "models": describe(k)[1], "source": results[k][2]}
                          for k in sorted(results)]}
        with open(args.json_out, "w", encoding="utf-8") as handle:
            json.dump(data, handle, indent=1)
    return 0


# ---------------------------------------------------------------------------------------------------

def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="compile_truth.py", description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--collect", action="store_true", help="run the models and write the truth file (slow)")
    parser.add_argument("--score", action="store_true", help="score this checkout's dynlint (the default)")
    parser.add_argument("--truth", default=DEFAULT_TRUTH, help="truth file (default: bench/data/compile_truth.json)")
    parser.add_argument("--python", default=DEFAULT_PYTHON, help=f"Python with the models (default: {DEFAULT_PYTHON})")
    parser.add_argument("--only", metavar="REGEX",
                        help="collect only FAMILY/MODEL matching this; merged into the truth file")
    parser.add_argument("--timeout", type=float, default=900, help="seconds per model (default 900)")
    parser.add_argument("--site-packages", metavar="DIR", help="where the libraries are (default: as collected)")
    parser.add_argument("--whole-packages", action="store_true",
                        help="check all of transformers, not just its core and the models involved")
    parser.add_argument("--dynlint-args", metavar="ARGS", default="", help="extra arguments for dynlint check")
    parser.add_argument("--allow-version-mismatch", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--json-out", metavar="FILE", help="also write the per-line score as JSON")
    parser.add_argument("--list", action="store_true", help="list the model cases and exit")
    parser.add_argument("--summary", action="store_true", help="print the collect summary of the truth file and exit")
    parser.add_argument("--worker", help=argparse.SUPPRESS)
    parser.add_argument("--events", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.worker:
        return run_worker(args.worker, args.events)
    if args.list:
        for case in CASES:
            print(f"{case.family:16} {case.name:34} modes {'/'.join(case.modes)}; sizes "
                  + ", ".join(case.label(s) for s in case.sizes))
        return 0
    try:
        if args.summary:
            print_collect_summary(_load_truth(args.truth))
            return 0
        status = 0
        if args.collect:
            status = collect(args)
        if status == 0 and (args.score or not args.collect):
            status = score(args)
        return status
    except ScoreError as error:
        return _fail(str(error))
    except KeyboardInterrupt:
        return _fail("interrupted")


if __name__ == "__main__":
    sys.exit(main())
