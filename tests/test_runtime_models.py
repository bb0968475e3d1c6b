"""dynlint.runtime on real models (slow; not in the default run).

Mask R-CNN from torchvision (random weights, small images) and tiny transformers MoE models
(Mixtral and Qwen2-MoE: one layer, hidden 32, 4 experts, eager experts), on the trace and compile
backends, plus a static resnet18 and a train/eval loop.  They need torchvision with its C ops
(torchvision 0.29 with torch 2.14, or 0.28 with a CUDA build of torch 2.13; both run on the CPU)
and transformers:

    python -m pytest -m slow tests/test_runtime_models.py
"""

from __future__ import annotations

import os
import re
import warnings

import pytest

from dynlint.runtime.report import COMMENT_MODE_SWITCH, COMMENT_NEW_INPUT

pytestmark = pytest.mark.slow
IMAGE = (3, 128, 160)
torch = torchvision = transformers = detect_recompilation_auto_model = None


@pytest.fixture(autouse=True)
def _fresh():
    # Imported here, not at collection: the default run deselects this module without importing torch.
    global torch, torchvision, transformers, detect_recompilation_auto_model
    torch = pytest.importorskip("torch")
    torchvision = pytest.importorskip("torchvision")
    transformers = pytest.importorskip("transformers")
    from dynlint.runtime import detect_recompilation_auto_model
    torch._dynamo.reset()
    torch.manual_seed(0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        yield
    torch._dynamo.reset()


def mask_rcnn():
    model = torchvision.models.detection.maskrcnn_resnet50_fpn(weights=None, weights_backbone=None,
                                                               min_size=IMAGE[1], max_size=IMAGE[2])
    return model.eval()


def images(count, seed=0):
    gen = torch.Generator().manual_seed(seed)
    return [[torch.rand(*IMAGE, generator=gen)] for _ in range(count)]


def detect(model, inputs, **kwargs):
    model = detect_recompilation_auto_model(model, csv_out=None, **kwargs)
    outputs = []
    with torch.no_grad():
        for x in inputs:
            outputs.append(model(**x) if isinstance(x, dict) else model(x))
    report = model.analyse_dynamicity(print_tables=False)
    model.remove_hooks()
    return report, outputs


def short(path: str) -> str:
    return path.split("/", 1)[1] if "/" in path else ""


def cause_files(cause: str) -> set:
    """Files a cause names: the op's line and the call site in the module's own code."""
    return {os.path.basename(m) for m in re.findall(r"([\w/.-]+\.py):\d+", cause)}


# -- Mask R-CNN --------------------------------------------------------------------------------------------

def test_mask_rcnn_trace_blames_rpn_and_the_roi_pooler_with_the_nonzero_lines():
    model = mask_rcnn()
    inputs = images(5)
    with torch.no_grad():
        plain = [model(x) for x in inputs]
    report, outputs = detect(model, inputs)
    dynamic = {short(p) for p in report.dynamic_modules()}
    assert "rpn" in dynamic
    assert dynamic <= {"", "rpn", "roi_heads", "roi_heads/box_roi_pool", "roi_heads/mask_roi_pool"}
    rpn = [e.cause for e in report.events if short(e.path) == "rpn" and e.root]
    assert rpn and all("aten.nonzero at torchvision/ops/boxes.py:" in c and "(from torchvision/models/detection/rpn.py:"
                       in c for c in rpn)
    # The RoI poolers: a root cause when their input (the boxes) repeats and the boxes fall on other
    # feature levels, else input-driven rows (the box count comes from the RPN) that still name their
    # own nonzero line.
    pools = [e for e in report.events if short(e.path) in ("roi_heads/box_roi_pool", "roi_heads/mask_roi_pool")]
    assert pools and all("aten.nonzero at torchvision/ops/poolers.py:" in e.cause for e in pools)
    # The model's own data-dependent op, paste_masks_in_image (via transform.postprocess), is its own cause.
    own = [e.cause for e in report.events if e.path == report.modules[0].path and e.root]
    assert all("(from torchvision/models/detection/generalized_rcnn.py:" in c for c in own)
    # Step 0 is the compile: the RPN head runs once per FPN level, with five shapes, and is not a recompile.
    assert not any(e.step == 0 for e in report.events)
    assert not any(short(e.path).startswith("rpn/head") for e in report.events)
    top = report.recompile_counts()[0][0]
    assert top in report.dynamic_modules()
    # Outputs are bitwise equal with and without the detector.
    for a, b in zip(plain, outputs):
        assert a[0].keys() == b[0].keys() and all(torch.equal(a[0][k], b[0][k]) for k in a[0])


def test_mask_rcnn_compile_gives_each_break_to_the_module_that_ran_it():
    report, _ = detect(torch.compile(mask_rcnn(), backend="eager"), images(3))
    assert report.backend == "compile"
    breaks = [e for e in report.events if e.comment.startswith("Graph break") and e.dynamic]
    assert breaks
    by_module = {m.path: m for m in report.modules}
    right = 0
    for event in breaks:
        # The module's own forward file is where the break is, or the call site the cause names.
        forward_file = os.path.basename(by_module[event.path].location.rsplit(":", 1)[0])
        right += forward_file in cause_files(event.cause)
    assert right >= 0.9 * len(breaks), [(e.path, e.cause) for e in breaks]
    paths = {short(e.path) for e in breaks}
    assert "rpn" in paths and {"roi_heads/box_roi_pool", "roi_heads/mask_roi_pool"} & paths
    # The root gets only breaks in its own code (paste_masks_in_image, via its transform's postprocess).
    for event in breaks:
        if event.path == report.modules[0].path:
            assert "(from torchvision/models/detection/generalized_rcnn.py:" in event.cause, event.cause
    # roi_heads' own postprocess_detections break is its own cause, beside its dynamic poolers.
    assert any(short(e.path) == "roi_heads" and e.root and "roi_heads.py:" in e.cause for e in breaks)
    assert not any(e.comment == COMMENT_NEW_INPUT for e in report.events)      # one image size throughout


# -- MoE (transformers) -------------------------------------------------------------------------------------

def moe(kind: str):
    common = dict(vocab_size=64, hidden_size=32, num_hidden_layers=1, num_attention_heads=4, num_key_value_heads=2,
                  max_position_embeddings=64, num_experts_per_tok=2)
    if kind == "mixtral":
        config = transformers.MixtralConfig(intermediate_size=64, num_local_experts=4, **common)
        cls = transformers.MixtralForCausalLM
    else:
        config = transformers.Qwen2MoeConfig(intermediate_size=64, moe_intermediate_size=32,
                                             shared_expert_intermediate_size=32, num_experts=4, **common)
        cls = transformers.Qwen2MoeForCausalLM
    config._experts_implementation = "eager"
    return cls(config).eval()


def token_batches(lengths, seed=0):
    gen = torch.Generator().manual_seed(seed)
    return [{"input_ids": torch.randint(0, 64, (2, n), generator=gen), "use_cache": False} for n in lengths]


@pytest.mark.parametrize("kind", ["mixtral", "qwen2_moe"])
def test_moe_trace_blames_the_experts_with_the_nonzero_line(kind):
    report, _ = detect(moe(kind), token_batches((16, 16, 16, 24, 24)))
    assert [short(p) for p in report.dynamic_modules()] == ["model/layers/0/mlp/experts"]
    causes = [e.cause for e in report.events if e.root]
    assert causes and all(re.match(r"aten\.nonzero at transformers/models/\w+/modeling_\w+\.py:\d+", c) for c in causes)
    assert short(report.recompile_counts()[0][0]) == "model/layers/0/mlp/experts"   # above experts/act_fn
    location = report.module(report.modules[0].path).location
    assert "utils/generic.py" not in location and "modeling_" in location          # unwrapped forward


def test_mixtral_compile_blames_the_experts_and_reads_keyword_input_guards():
    report, _ = detect(torch.compile(moe("mixtral"), backend="eager"), token_batches((16, 16, 24, 24)))
    assert [short(p) for p in report.dynamic_modules()] == ["model/layers/0/mlp/experts"]
    breaks = [e for e in report.events if e.comment.startswith("Graph break") and e.dynamic]
    assert breaks and all(short(e.path) == "model/layers/0/mlp/experts" for e in breaks)
    # The new sequence length (step 2) is a new input shape everywhere, including the kwargs guard.
    step2 = [e for e in report.events if e.step == 2 and not e.comment.startswith("Graph break")]
    assert step2 and all(e.comment == COMMENT_NEW_INPUT and not e.dynamic for e in step2)
    assert any("kwargs['input_ids']" in e.cause for e in step2)


# -- static and mode-switching models ------------------------------------------------------------------------

def test_static_resnet18_at_a_fixed_size_is_clean():
    model = torchvision.models.resnet18(weights=None).eval()
    gen = torch.Generator().manual_seed(0)
    report, _ = detect(model, [torch.rand(2, 3, 64, 64, generator=gen) for _ in range(3)])
    assert report.events == [] and report.dynamic_modules() == []


@pytest.mark.parametrize("backend", ["trace", "compile"])
def test_resnet18_with_periodic_validation_has_no_root_cause(backend):
    model = torchvision.models.resnet18(weights=None, num_classes=4)
    if backend == "compile":
        model = torch.compile(model, backend="eager")
    model = detect_recompilation_auto_model(model, csv_out=None)
    gen = torch.Generator().manual_seed(0)
    x = torch.rand(2, 3, 64, 64, generator=gen)
    for _ in range(2):
        model.train()
        model(x).sum().backward()
        model.eval()
        with torch.no_grad():
            model(x)
    report = model.analyse_dynamicity(print_tables=False)
    model.remove_hooks()
    assert report.dynamic_modules() == []
    switches = [e for e in report.events if e.comment == COMMENT_MODE_SWITCH]
    assert switches and len({e.step for e in switches}) == len(switches)   # one row per switch, not per layer
