"""What dynlint knows about PyTorch ops, kept as data.

Every table here is keyed by *qualified* names (after import/alias
resolution) or by tensor method names.  The checker reads these tables; adding
knowledge about an op should mean editing a table, not the visitor.
"""

from __future__ import annotations

import builtins
import re

# --- ops whose output shape depends on tensor values ------------------------

_NONZERO_ADVICE = "use torch.nonzero_static(x, size=...) or keep the mask and use torch.where/masked reductions"
_UNIQUE_ADVICE = "move it out of the compiled region (CPU fallback), or use a fixed-size formulation (sort + mask, one_hot(num_classes=...))"
_UNIQUE_CONSECUTIVE_ADVICE = "move it out of the compiled region (CPU fallback), or use a fixed-size formulation (diff + mask)"
_MASKED_SELECT_ADVICE = "use torch.where(mask, x, 0) with a masked reduction"
_BINCOUNT_ADVICE = "use torch.histc, or scatter_add_ into a tensor of fixed length (minlength does not make it static)"
_NMS_ADVICE = "run NMS outside the compiled region, or use a fixed-size variant (pad to a maximum number of boxes)"
_BOX_FILTER_ADVICE = ("keep every box and mask out the small ones (a validity mask or zero weight), or filter outside "
                      "the compiled region")
_PACK_ADVICE = ("run the RNN on the padded batch and mask the padded steps (dynamo does not trace packing at all: "
                "a graph break even with Python lengths)")

#: qualified function -> (code, what to do instead); re-exported spellings are listed too,
#: because a written-out attribute chain (torch.functional.unique) is not canonicalized
DYNAMIC_FUNCTIONS: dict[str, tuple[str, str]] = {
    "torch.nonzero": ("DYN102", _NONZERO_ADVICE),
    "torch.argwhere": ("DYN102", _NONZERO_ADVICE),
    "torch.unique": ("DYN103", _UNIQUE_ADVICE),
    "torch.functional.unique": ("DYN103", _UNIQUE_ADVICE),
    "torch.unique_consecutive": ("DYN103", _UNIQUE_CONSECUTIVE_ADVICE),
    "torch.functional.unique_consecutive": ("DYN103", _UNIQUE_CONSECUTIVE_ADVICE),
    "torch.masked_select": ("DYN104", _MASKED_SELECT_ADVICE),
    "torch.bincount": ("DYN105", _BINCOUNT_ADVICE),
    "torchvision.ops.nms": ("DYN105", _NMS_ADVICE),
    "torchvision.ops.batched_nms": ("DYN105", _NMS_ADVICE),
    "torchvision.ops.boxes.nms": ("DYN105", _NMS_ADVICE),
    "torchvision.ops.boxes.batched_nms": ("DYN105", _NMS_ADVICE),
    "torch.ops.torchvision.nms": ("DYN105", _NMS_ADVICE),
    # the indices of the boxes kept (torch.where(keep)[0]): as many as the data has
    "torchvision.ops.remove_small_boxes": ("DYN105", _BOX_FILTER_ADVICE),
    "torchvision.ops.boxes.remove_small_boxes": ("DYN105", _BOX_FILTER_ADVICE),
    "torch.nn.utils.rnn.pack_padded_sequence": ("DYN105", _PACK_ADVICE),
    "torch.nn.utils.rnn.pack_sequence": ("DYN105", _PACK_ADVICE),
    # and back: skipped by dynamo too (a second break after the RNN), its length the longest sequence's
    "torch.nn.utils.rnn.pad_packed_sequence": ("DYN105", _PACK_ADVICE),
    # FBGEMM's unique over a jagged tensor (torchrec's managed-collision modules): as many rows as distinct ids
    "torch.ops.fbgemm.jagged_unique_indices": ("DYN103", _UNIQUE_ADVICE),
}
#: functions dynamo refuses to trace ("Attempted to call function marked as skipped", measured on torch 2.13):
#: the packing functions above, a graph break whatever their sizes, so their finding says that rather than a
#: data-dependent shape
DYNAMO_SKIPPED = frozenset(qual for qual, (_, advice) in DYNAMIC_FUNCTIONS.items() if advice is _PACK_ADVICE)
#: NMS of the detection toolkits (custom ops, or torchvision's under them): as torchvision's. A project that
#: defines one of these names itself is checked inside it instead (``checks._dynamic_ops``).
THIRD_PARTY_NMS = frozenset(
    [f"mmcv.ops.{name}" for name in (
        "nms", "batched_nms", "soft_nms", "nms_match", "nms_rotated", "nms_quadri", "nms_bev", "nms_normal_bev",
        "nms3d", "nms3d_normal", "nms.nms", "nms.batched_nms", "nms.soft_nms", "nms.nms_match", "nms.nms_rotated",
        "nms.nms_quadri", "iou3d.nms_bev", "iou3d.nms_normal_bev", "iou3d.nms3d", "iou3d.nms3d_normal")]
    + [f"mmdet.{path}.multiclass_nms" for path in (
        "core", "core.post_processing", "core.post_processing.bbox_nms", "models.layers", "models.layers.bbox_nms")]
    + [f"mmrotate.{path}.multiclass_nms_rotated" for path in (
        "core", "core.post_processing", "core.post_processing.bbox_nms_rotated")]
    + [f"mmdet3d.{path}.box3d_multiclass_nms" for path in (
        "core", "core.post_processing", "core.post_processing.box3d_nms", "models.layers", "models.layers.box3d_nms")]
    + [f"detectron2.layers.{name}" for name in ("nms", "batched_nms", "nms_rotated", "batched_nms_rotated")]
)
DYNAMIC_FUNCTIONS.update({name: ("DYN105", _NMS_ADVICE) for name in THIRD_PARTY_NMS})
#: flash-attn's unpadding helpers: ``nonzero`` on the flattened mask, then ``.item()`` on the longest length
#: (measured on torch 2.13 with the same body: two graph breaks, "Dynamic shape operator" and "Tensor.item()")
_UNPAD_ADVICE = ("keep the padded batch and pass the mask to the attention kernel (SDPA attn_mask), or unpad "
                 "outside the compiled region")
THIRD_PARTY_UNPAD = frozenset(
    f"flash_attn.bert_padding.{name}" for name in ("unpad_input", "unpad_input_for_concatenated_sequences"))
DYNAMIC_FUNCTIONS.update({name: ("DYN105", _UNPAD_ADVICE) for name in THIRD_PARTY_UNPAD})
#: PyTorch Geometric's graph utilities (``torch_geometric.utils``, read in 2.8.1's source) whose output size comes
#: from the data: they select edges or nodes with a boolean mask, call ``nonzero``, or read ``int(x.max())``
#: to size their output. Measured on torch 2.13 with torch_geometric 2.8.1 (``torch._dynamo.explain``):
#: "Dynamic shape operator" (remove_self_loops, dense_to_sparse, subgraph) or "Tensor.item()" (to_dense_adj, even
#: with every size given: it still tests ``idx.max() >= max_num_nodes``; coalesce). Each listed under
#: ``torch_geometric.utils`` and its defining module.
_PYG_ADVICE = ("prepare the graph outside the compiled region (in the dataset or before the compiled call) and "
               "pass the result in")
_PYG_MODULES: dict[str, tuple[str, ...]] = {
    "loop": ("remove_self_loops", "segregate_self_loops", "contains_self_loops", "add_remaining_self_loops"),
    "sparse": ("dense_to_sparse",),
    "_to_dense_adj": ("to_dense_adj",),
    "_subgraph": ("subgraph", "bipartite_subgraph", "k_hop_subgraph"),
    "dropout": ("dropout_edge", "dropout_node", "dropout_adj"),
    "isolated": ("remove_isolated_nodes", "contains_isolated_nodes"),
    "_coalesce": ("coalesce",),
    "undirected": ("to_undirected", "is_undirected"),
    "_unbatch": ("unbatch", "unbatch_edge_index"),
    "laplacian": ("get_laplacian",),
}


def _pyg_spellings(module: str, function: str) -> tuple[str, str]:
    return f"torch_geometric.utils.{function}", f"torch_geometric.utils.{module}.{function}"


THIRD_PARTY_GRAPH = frozenset(
    name for module, functions in _PYG_MODULES.items() for function in functions
    for name in _pyg_spellings(module, function)
)
DYNAMIC_FUNCTIONS.update({name: ("DYN105", _PYG_ADVICE) for name in THIRD_PARTY_GRAPH})
#: torch_sparse's diagonal and selection helpers (read in torch_sparse 0.6.18's source, ``diag.py`` and
#: ``masked_select.py``): each selects the stored entries through a boolean mask (``row[row != col]``), so how
#: many entries the result holds comes from the graph (tsl's GAT and GRIN layers call them in forward)
_TORCH_SPARSE_ADVICE = ("build the adjacency (self-loops removed or added) outside the compiled region, or keep a "
                        "dense adjacency and mask it with torch.where")
THIRD_PARTY_SPARSE = frozenset(
    f"torch_sparse.{module}{function}"
    for module, functions in (("diag.", ("remove_diag", "set_diag", "fill_diag", "get_diag")),
                              ("masked_select.", ("masked_select", "masked_select_nnz")))
    for function in functions for module in (module, ""))
DYNAMIC_FUNCTIONS.update({name: ("DYN105", _TORCH_SPARSE_ADVICE) for name in THIRD_PARTY_SPARSE})
#: DGL's graph traversals (``dgl.traversal``, re-exported as ``dgl.*``; read in dgl 2.1.0's source): a C call on
#: the graph's host index returns every visited node or edge and the frontier sizes, then ``F.split`` cuts them
#: into one tensor per frontier: how many frontiers, and how long each, comes from the graph's structure
#: (dgllife's junction-tree VAE walks each batch's trees with them in its forward)
_DGL_TRAVERSAL_ADVICE = ("traverse the graphs outside the compiled region (in the dataset or collate function) "
                         "and pass the frontiers in")
THIRD_PARTY_TRAVERSAL = frozenset(
    f"dgl.{module}{function}"
    for function in ("bfs_nodes_generator", "bfs_edges_generator", "topological_nodes_generator",
                     "dfs_edges_generator", "dfs_labeled_edges_generator")
    for module in ("", "traversal."))
DYNAMIC_FUNCTIONS.update({name: ("DYN105", _DGL_TRAVERSAL_ADVICE) for name in THIRD_PARTY_TRAVERSAL})
#: PyTorch Geometric utilities that read ``int(index.max()) + 1`` (``maybe_num_nodes``) or the largest batch
#: only when a size is not given: qualified name -> the arguments (keyword, position) that, all given, make the
#: output static (measured as above: ``degree(index)`` breaks, ``degree(index, n)`` compiles into one graph)
SIZED_UNLESS_GIVEN: dict[str, tuple[tuple[str, int], ...]] = {
    name: sizes
    for function, module, sizes in (
        ("degree", "_degree", (("num_nodes", 1),)),
        ("add_self_loops", "loop", (("num_nodes", 3),)),
        ("to_dense_batch", "_to_dense_batch", (("max_num_nodes", 3), ("batch_size", 4))),
        ("maybe_num_nodes", "num_nodes", (("num_nodes", 1),)),
        # scatter(src, index, dim=0, dim_size=None, reduce='sum'): `int(index.max()) + 1` when no dim_size
        ("scatter", "_scatter", (("dim_size", 3),)),
    )
    for name in _pyg_spellings(module, function)
}
#: PyTorch Geometric's global pooling (``torch_geometric.nn.pool.glob``, read in 2.8.1's source): a scatter
#: over ``batch`` into ``size`` rows, ``int(batch.max()) + 1`` of them when no size is given (matgl's readouts)
SIZED_UNLESS_GIVEN.update({
    f"torch_geometric.nn.{module}{function}": (("size", 2),)
    for function in ("global_add_pool", "global_mean_pool", "global_max_pool")
    for module in ("", "pool.", "pool.glob.")
})
#: torch_scatter's reductions (``scatter(src, index, dim=-1, out=None, dim_size=None, ...)``): the output has
#: ``int(index.max()) + 1`` rows unless ``dim_size`` or ``out`` fixes them (torchdrug, e3nn)
SIZED_UNLESS_GIVEN.update({
    f"torch_scatter.{module}{function}": (("dim_size", 4),)
    for function in ("scatter", "scatter_sum", "scatter_add", "scatter_mean", "scatter_mul", "scatter_max",
                     "scatter_min", "scatter_std", "scatter_logsumexp")
    for module in ("", "scatter.")
})
#: arguments that, given instead of the sizes, make the output static too: an ``out`` tensor to reduce into;
#: a ``batch`` of None (one graph: a plain sum over the nodes)
SIZE_ALTERNATIVES: dict[str, tuple[str, int]] = {
    name: ("out", 3) for name in SIZED_UNLESS_GIVEN if name.startswith("torch_scatter.")}
STATIC_WHEN_NONE: dict[str, tuple[str, int]] = {
    name: ("batch", 1) for name in SIZED_UNLESS_GIVEN if name.rsplit(".", 1)[1].startswith("global_")}

#: third-party functions a project may define (or vendor) itself: then its own body is checked instead
THIRD_PARTY_DYNAMIC = (THIRD_PARTY_NMS | THIRD_PARTY_UNPAD | THIRD_PARTY_GRAPH | THIRD_PARTY_SPARSE
                       | frozenset(SIZED_UNLESS_GIVEN))

#: tensor method -> (code, what to do instead, tensor_specific)
#: ``tensor_specific``: no common non-tensor type has this method, so an
#: unknown receiver is reported too; otherwise the receiver must be a known tensor
#: (numpy arrays have ``nonzero``, pandas objects have ``unique``).
DYNAMIC_METHODS: dict[str, tuple[str, str, bool]] = {
    "nonzero": ("DYN102", _NONZERO_ADVICE, False),
    "argwhere": ("DYN102", _NONZERO_ADVICE, True),
    "unique": ("DYN103", "move it out of the compiled region (CPU fallback), or use a fixed-size formulation", False),
    "unique_consecutive": ("DYN103", "move it out of the compiled region (CPU fallback), or use a fixed-size formulation", True),
    "masked_select": ("DYN104", _MASKED_SELECT_ADVICE, True),
    "bincount": ("DYN105", "use torch.histc, or scatter_add_ into a tensor of fixed length", True),
    # a sparse tensor holds as many values as the input has nonzeros (measured on torch 2.13: "Attempted to
    # wrap sparse Tensor with VariableTracker", a graph break)
    "to_sparse": ("DYN105", "keep the dense tensor (mask it with torch.where) in the compiled region", True),
    "to_sparse_coo": ("DYN105", "keep the dense tensor (mask it with torch.where) in the compiled region", True),
    "to_sparse_csr": ("DYN105", "keep the dense tensor (mask it with torch.where) in the compiled region", True),
    # a sparse tensor's duplicate indices summed: as many values as distinct indices (and sparse tensors break
    # the graph, as above); torch_sparse's SparseTensor.coalesce likewise
    "coalesce": ("DYN105", "keep a dense tensor and sum duplicates with index_add_/scatter_add_ into a fixed size", True),
    # torch_sparse's SparseTensor methods (see THIRD_PARTY_SPARSE; no other common type has these names)
    "remove_diag": ("DYN105", _TORCH_SPARSE_ADVICE, True),
    "set_diag": ("DYN105", _TORCH_SPARSE_ADVICE, True),
    "fill_diag": ("DYN105", _TORCH_SPARSE_ADVICE, True),
}

#: keywords of a dynamic method that only torch's spelling takes (numpy's ``nonzero()`` and pandas'
#: ``unique()`` take none of them): a call passing one is a call on a tensor
TORCH_ONLY_KEYWORDS: dict[str, frozenset[str]] = {
    "nonzero": frozenset({"as_tuple"}),
    "unique": frozenset({"sorted", "return_inverse", "return_counts", "dim"}),
}

#: qualified functions whose output shape is data-dependent only in some call forms
REPEAT_INTERLEAVE = "torch.repeat_interleave"
ONE_HOT = "torch.nn.functional.one_hot"
WHERE = "torch.where"

# --- type inference ---------------------------------------------------------

#: qualified torch functions returning a boolean tensor
MASK_FUNCTIONS = frozenset(
    "torch." + n
    for n in (
        "isnan isinf isfinite isposinf isneginf isreal isin isclose signbit "
        "logical_and logical_or logical_not logical_xor "
        "eq ne gt lt ge le greater less greater_equal less_equal not_equal"
    ).split()
)

#: tensor methods returning a boolean tensor
MASK_METHODS = frozenset(
    (
        "bool isnan isinf isfinite isposinf isneginf isreal isin isclose signbit "
        "logical_and logical_or logical_not logical_xor "
        "eq ne gt lt ge le greater less greater_equal less_equal not_equal"
    ).split()
)

#: tensor methods that keep a boolean tensor boolean (layout/device moves)
MASK_PRESERVING_METHODS = frozenset(
    (
        "clone detach contiguous view reshape flatten squeeze unsqueeze expand expand_as "
        "permute transpose t T mT cpu cuda to_dense unbind_copy repeat flip roll "
        "repeat_interleave tile narrow movedim broadcast_to "
        "logical_not any all"
    ).split()
)

#: reductions that give a 0-d tensor when called with no dim
FULL_REDUCTIONS = frozenset(
    "sum mean max min amax amin prod std var norm argmax argmin median nanmedian nansum nanmean "
    "logsumexp count_nonzero all any".split()
)

#: tensor methods/attributes that are static metadata (Python values known at trace time)
SIZE_METHODS = frozenset("size numel nelement".split())     # data-independent sizes
RANK_METHODS = frozenset("dim ndimension".split())           # rank: static even with dynamic shapes
META_METHODS = frozenset(
    "is_contiguous is_floating_point is_complex is_signed element_size get_device data_ptr "
    "stride storage_offset type is_pinned is_shared is_set_to is_inference is_coalesced is_conj is_neg "
    "_nnz".split()  # _nnz: a sparse tensor's count; is_inference: made under inference_mode (a flag)
)
META_ATTRIBUTES = frozenset(
    "dtype device ndim is_cuda is_cpu is_sparse is_quantized is_meta requires_grad layout names "
    "is_leaf grad_fn itemsize nbytes".split()
)
#: (``values``/``indices``: of the named tuples max/min/median/mode/sort/topk/kthvalue return)
TENSOR_ATTRIBUTES = frozenset("T mT H mH data real imag grad values indices".split())

#: array frameworks other than torch: a file that imports one of them and not torch works on its arrays (skrl's
#: JAX and Warp agents beside its torch ones, whose ``loss.item()``/``x.numpy()`` read JAX and Warp values)
FOREIGN_ARRAY_MODULES = frozenset({"jax", "jaxlib", "flax", "tensorflow", "keras", "warp", "mlx", "paddle",
                                   "mindspore", "oneflow", "cupy"})


def foreign_array_module(qualified: str) -> bool:
    """``mlx.core``, ``jax.numpy``: a module (or a name in one) of another array framework."""
    return qualified.split(".", 1)[0] in FOREIGN_ARRAY_MODULES


#: tensor methods that copy a value to the host
HOST_SYNC_METHODS: dict[str, bool] = {  # name -> tensor_specific
    "item": False,
    "tolist": False,
    "numpy": True,
}
HOST_SYNC_BUILTINS = frozenset({"int", "float", "bool", "complex"})
#: torch functions that read a tensor's value on the host (measured: torch._check_tensor_all breaks the
#: graph with "Tensor.item()")
HOST_SYNC_FUNCTIONS = frozenset({"torch._check_tensor_all", "torch._check_tensor_all_with"})
#: factories whose fill value is a Python number (a ``Scalar``), with its position: a tensor passed there is
#: read on the host (measured on torch 2.13, a 0-d tensor: ``full_like`` and ``new_full`` make dynamo read it
#: with ``.item()``; ``torch.full`` compiles, but every one copies the value to the host in eager and lazy mode)
SCALAR_FILL_FUNCTIONS = {"torch.full": 1, "torch.full_like": 1}
SCALAR_FILL_METHODS = {"new_full": 1}
#: math-module functions that turn a tensor argument into a Python number (measured on torch 2.13, a 0-d
#: tensor under torch.compile: each breaks the graph with "Data dependent operator", like float(t);
#: math.radians does not, math.trunc rejects tensors)
MATH_SCALAR_FUNCTIONS = frozenset(f"math.{name}" for name in (
    "cos sin tan acos asin atan atan2 cosh sinh tanh exp expm1 log log1p log2 log10 sqrt pow fabs floor ceil "
    "isnan isinf isfinite isclose erf gamma lgamma degrees copysign fmod hypot").split())
#: builtins that format their arguments as text: a tensor among them is read on the host (measured
#: on torch 2.13: str(t), print(t), f"{t:.2f}", "%.5f" % t, "{:.3f}".format(t) all break the graph)
FORMATTING_BUILTINS = frozenset({"str", "repr", "print"})
#: builtins that make a slice from their arguments (``slice(start, start + n)``): bounds read as Python numbers
SLICE_BUILTINS = frozenset({"slice"})

#: tensor methods comparing whole tensors into a Python bool (``x.equal(y)``, ``x.allclose(y)``)
DATA_COMPARISON_METHODS = frozenset({"equal", "allclose"})
#: tensor methods that return Python data computed from values (not tensors)
DATA_METHODS = frozenset({"item", "tolist"}) | DATA_COMPARISON_METHODS

#: namespaces whose functions return tensors (unless listed as non-tensor below)
TENSOR_NAMESPACES = frozenset({"torch", "torch.nn.functional", "torch.linalg", "torch.fft", "torch.special",
                               "torch.nested", "torch.sparse", "torch.masked", "torch.nn.grad"})

#: qualified torch names that do NOT return a tensor.  Prefixes end with ".".
NON_TENSOR_TORCH_PREFIXES = (
    "torch.cuda.", "torch.backends.", "torch.distributed.", "torch.jit.", "torch.compiler.",
    "torch._dynamo.", "torch.utils.", "torch.optim.", "torch.autograd.", "torch.profiler.",
    "torch.multiprocessing.", "torch.hub.", "torch.onnx.", "torch.fx.", "torch.export.",
    "torch.library.", "torch.testing.", "torch.xpu.", "torch.mps.", "torch.amp.", "torch.cpu.",
    "torch.overrides.", "torch.package.", "torch.serialization.", "torch.random.", "torch.types.",
    "torch.ops.load_library",
)
#: torch namespaces whose functions take a function (or a module: ``functional_call``) first, not a tensor: no
#: evidence about the name passed (laplace's ``torch.func.jacrev(model_fn, has_aux=True)``); what they return
#: is left as for the rest of torch
FUNCTION_FIRST_TORCH_PREFIXES = ("torch.func.",)
NON_TENSOR_TORCH = frozenset(
    "torch." + n
    for n in (
        "is_tensor is_storage is_floating_point is_complex is_nonzero is_grad_enabled "
        "is_inference_mode_enabled are_deterministic_algorithms_enabled get_default_dtype "
        "get_default_device set_default_dtype set_default_device manual_seed seed initial_seed "
        "set_grad_enabled no_grad enable_grad inference_mode device dtype finfo iinfo Size "
        "compile save load set_printoptions get_num_threads set_num_threads "
        "use_deterministic_algorithms autocast typename numel get_rng_state set_rng_state "
        "cond vmap func broadcast_shapes result_type promote_types can_cast "
        "set_float32_matmul_precision get_float32_matmul_precision is_autocast_enabled "
        "Generator Stream Event"
    ).split()
)
#: torch functions named for global settings (``torch.get_autocast_dtype(device_type)``,
#: ``torch.set_default_dtype``): their arguments are devices, dtypes and flags, not tensors
NON_TENSOR_TORCH_NAME_PREFIXES = ("get_", "set_", "use_", "is_autocast")
#: ...except these, which take a tensor
TENSOR_TORCH_SETTING_NAMES = frozenset({"get_device"})
#: torch's dtype names (``torch.bfloat16``...): a value compared with one is a dtype, not a tensor
TORCH_DTYPES = frozenset(
    "float32 float float64 double float16 half bfloat16 complex32 complex64 cfloat complex128 cdouble uint8 uint16 "
    "uint32 uint64 int8 int16 short int32 int int64 long bool float8_e4m3fn float8_e5m2 float8_e4m3fnuz "
    "float8_e5m2fnuz quint8 qint8 qint32 quint4x2".split()
)
#: torch functions returning Python data computed from tensor values
DATA_TORCH_FUNCTIONS = frozenset({"torch.equal", "torch.allclose", "torch.is_nonzero"})
#: torch functions outside the tensor namespaces that return a tensor: the KL divergence (pfrl's ACER: ``kl =
#: torch.distributions.kl_divergence(p, q)``, then ``float(kl)``) and the gradient norm ``clip_grad_norm_``
#: returns (unsloth's ``float(torch.nn.utils.clip_grad_norm_(params, 1.0))`` logs it each step: a host sync)
TENSOR_TORCH_FUNCTIONS = frozenset({
    "torch.distributions.kl_divergence", "torch.distributions.kl.kl_divergence",
    "torch.nn.utils.clip_grad_norm_", "torch.nn.utils.clip_grad_norm", "torch.nn.utils.clip_grad.clip_grad_norm_",
    "torch.nn.utils.get_total_norm", "torch.nn.utils.clip_grad.get_total_norm",
    "torch.nn.utils.parameters_to_vector", "torch.nn.utils.convert_parameters.parameters_to_vector",
})

#: base classes that make a class an nn.Module (last component, after resolution)
MODULE_BASE_QUALNAMES = frozenset({
    "torch.nn.Module", "torch.nn.modules.module.Module", "torch.nn.Sequential",
    "torch.nn.ModuleList", "torch.nn.ModuleDict",
    # MMEngine's model base (a BaseModule): every OpenMMLab detector, segmentor, editor (not pydantic's BaseModel)
    "mmengine.model.BaseModel", "mmengine.model.base_model.BaseModel", "mmengine.model.base_model.base_model.BaseModel",
})
MODULE_BASE_SUFFIXES = ("PreTrainedModel", "LightningModule", "BaseModule", "ModelMixin")

#: nn.Module methods that return the module itself (moves, casts, mode switches)
MODULE_SELF_METHODS = frozenset({
    "to", "cpu", "cuda", "xpu", "float", "half", "double", "bfloat16", "type", "train", "eval", "requires_grad_",
    "apply", "to_empty", "share_memory", "zero_grad_",
})

#: base classes of custom autograd functions: ``F.apply(x)`` runs ``F.forward(ctx, x)`` where it is called, and
#: ``F.backward(ctx, grad)`` in the same step's backward pass
AUTOGRAD_FUNCTION_BASES = frozenset({
    "torch.autograd.Function", "torch.autograd.function.Function", "torch.autograd.function.InplaceFunction",
})
#: attributes holding a sequence of tensors: ``x, w = ctx.saved_tensors`` in a custom backward
TENSOR_SEQUENCE_ATTRIBUTES = frozenset({"saved_tensors", "saved_variables"})

_NORM_TENSORS = ("weight", "bias", "running_mean", "running_var", "num_batches_tracked")
_AFFINE_TENSORS = ("weight", "bias")
#: parameters and buffers that a torch.nn layer's constructor registers, by the layer class's name: a project
#: subclass reads them as ``self.<name>`` without ever storing them (``float(self.num_batches_tracked)`` in a
#: ``_NormBase`` subclass).  Each may be None (``bias=False``, ``track_running_stats=False``): maybe tensors.
TORCH_LAYER_TENSOR_ATTRIBUTES = {
    **{name: _NORM_TENSORS for name in (
        "_NormBase", "_BatchNorm", "BatchNorm1d", "BatchNorm2d", "BatchNorm3d", "SyncBatchNorm",
        "_InstanceNorm", "InstanceNorm1d", "InstanceNorm2d", "InstanceNorm3d")},
    **{name: _AFFINE_TENSORS for name in (
        "Linear", "Bilinear", "_ConvNd", "Conv1d", "Conv2d", "Conv3d", "_ConvTransposeNd", "ConvTranspose1d",
        "ConvTranspose2d", "ConvTranspose3d", "LayerNorm", "GroupNorm", "RMSNorm")},
    "Embedding": ("weight",),
}

#: base classes whose every method runs on the host: __getitem__/__iter__ in data workers, construction and
#: caching helpers in the data pipeline
DATASET_BASE_QUALNAMES = frozenset({
    "torch.utils.data.Dataset", "torch.utils.data.IterableDataset",
    "torch.utils.data.dataset.Dataset", "torch.utils.data.dataset.IterableDataset",
    "torch.utils.data.TensorDataset", "torch.utils.data.IterDataPipe", "torch.utils.data.MapDataPipe",
})
#: iterable-style datasets: a loader over one yields what its iterator yields (an RL experience source,
#: an endless stream): no dataset length, so no fixed short last batch to drop
ITERABLE_DATASET_BASES = frozenset({
    "torch.utils.data.IterableDataset", "torch.utils.data.dataset.IterableDataset", "torch.utils.data.IterDataPipe",
})
#: base classes (by name) whose every method runs on the host: Lightning data modules, Lightning/transformers
#: callbacks
HOST_CLASS_SUFFIXES = ("DataModule", "Callback")
#: ...and what feeds a DataLoader, in its workers or its main loop: subclasses of its samplers
#: (trl's RepeatSampler.__iter__) and classes (no nn.Module) whose own name says they are collators
#: (trl's DataCollatorForLanguageModeling.torch_call).  A class merely named *Sampler is not one:
#: mmdet's box samplers run inside a head's loss.
HOST_CLASS_BASES = frozenset({
    "torch.utils.data.Sampler", "torch.utils.data.BatchSampler", "torch.utils.data.sampler.Sampler",
    "torch.utils.data.sampler.BatchSampler", "torch.utils.data.DistributedSampler",
    "torch.utils.data.distributed.DistributedSampler",
})
HOST_CLASS_NAME_WORDS = ("Collator", "Collate")
#: OpenMMLab registries (``@TASK_UTILS.register_module()``) of the task utilities a head builds from its
#: config (``self.assigner = TASK_UTILS.build(cfg)``) and runs inside its loss: box assigners, samplers,
#: coders, IoU calculators, match costs, prior generators. The call graph cannot follow a registry build,
#: so their public methods are where the compiled step runs (mmyolo's ``PoseSimOTAAssigner.assign``)
STEP_REGISTRIES = frozenset({
    "TASK_UTILS", "BBOX_ASSIGNERS", "BBOX_SAMPLERS", "BBOX_CODERS", "IOU_CALCULATORS", "MATCH_COST",
    "PRIOR_GENERATORS", "ANCHOR_GENERATORS", "ROTATED_BBOX_ASSIGNERS", "ROTATED_BBOX_SAMPLERS",
    "ROTATED_BBOX_CODERS", "ROTATED_IOU_CALCULATORS", "ROTATED_ANCHOR_GENERATORS", "ROTATED_PRIOR_GENERATORS",
})
#: ...except the tracking utilities registered there too (mmdet's ``task_modules/tracking``: Kalman filters,
#: tracklet interpolation, camera motion compensation), which a tracker runs at inference, after the model
TRACKING_MODULE_PART = "tracking"
HOST_CALLBACK_KEYWORDS = frozenset({"collate_fn", "worker_init_fn"})
#: module methods registering a hook run when a state dict is saved or loaded (bitsandbytes'
#: ``self._register_load_state_dict_pre_hook(maybe_rearrange_weight)``): the function given first runs on the host,
#: at checkpoint time
STATE_DICT_HOOK_REGISTRARS = frozenset({
    "register_load_state_dict_pre_hook", "_register_load_state_dict_pre_hook", "register_load_state_dict_post_hook",
    "register_state_dict_pre_hook", "_register_state_dict_hook", "register_state_dict_post_hook",
})

#: calls (torch functions and tensor methods, by their last name) whose result is an integer index tensor,
#: never a boolean mask: a name its author called ``valid``/``keep`` but bound to one of these gathers
#: (nerfstudio's ``valid = det.nonzero()``, tsai's ``isp = torch.randint(...)``); DYN101 trusts the name only
#: when its value could be a mask
INDEX_RESULT_CALLS = frozenset({
    "nonzero", "argwhere", "randint", "randperm", "arange", "argsort", "argmax", "argmin", "multinomial",
    "searchsorted", "bucketize", "long", "int",
})
#: annotations of mappings whose values are tensors, or maybe nested mappings of them: a TensorDict's
#: ``td.get(key)``, ``td.pop(key)`` and ``td[key]`` read a tensor (torchrl's ``tensordict.pop("_step")``)
TENSOR_MAPPING_ANNOTATIONS = frozenset({
    "tensordict.TensorDict", "tensordict.TensorDictBase", "tensordict.base.TensorDictBase",
    "tensordict._td.TensorDict", "tensordict.LazyStackedTensorDict", "tensordict.TensorDictParams",
})
#: annotations that mean "a tensor" / "not a tensor"
TENSOR_ANNOTATIONS = frozenset({"torch.Tensor", "torch.FloatTensor", "torch.LongTensor", "torch.BoolTensor",
                                "torch.DoubleTensor", "torch.HalfTensor", "torch.BFloat16Tensor", "torch.IntTensor",
                                "torch.ShortTensor", "torch.ByteTensor", "torch.CharTensor",
                                "torch.cuda.FloatTensor", "torch.cuda.LongTensor", "torch.cuda.BoolTensor",
                                "torch.nn.Parameter", "torch.nn.parameter.Parameter",
                                # the pre-0.4 wrapper, still in annotations of old code (pytorch-crf)
                                "torch.autograd.Variable", "torch.autograd.variable.Variable"})
#: names written as an annotation that mean a tensor although they are no type: ``torch.tensor``, the
#: constructor, in ``-> Tuple[torch.tensor, torch.tensor]`` (pix2tex, super-gradients, peft: 74 files of the
#: corpus); only annotations read them so
MISTAKEN_TENSOR_ANNOTATIONS = frozenset({"torch.tensor"})
#: annotations that mean a boolean tensor (a mask), and the names of project type aliases of a tensor type
#: that say so (``BoolTensor: TypeAlias = torch.Tensor``)
MASK_ANNOTATIONS = frozenset({"torch.BoolTensor", "torch.cuda.BoolTensor"})
#: shape-and-dtype annotations: jaxtyping's ``Float[Tensor, "b n"]`` (a tensor when the array type is one),
#: and a project's own shorthand for them, ``Float["b n"]`` (alphafold3-pytorch's ``TorchTyping(Float)``);
#: ``Bool[...]`` is a mask
SHAPE_DTYPE_ANNOTATIONS = frozenset(
    "Float Int Bool Shaped Num Real Integer Inexact Complex UInt Float16 Float32 Float64 BFloat16 "
    "Int8 Int16 Int32 Int64 UInt8 UInt16 UInt32 UInt64 Complex64 Complex128".split()
)
#: torch.fx graphs: a function taking one is a graph pass, run while a model is compiled (on the host)
FX_GRAPH_ANNOTATIONS = frozenset({
    "torch.fx.Graph", "torch.fx.GraphModule", "torch.fx.Node", "torch.fx.graph.Graph",
    "torch.fx.graph_module.GraphModule", "torch.fx.node.Node",
})
#: torchtyping's ``TensorType["batch", "channels"]``
TENSOR_SUBSCRIPT_ANNOTATIONS = frozenset({"torchtyping.TensorType"})
#: a project function named as a predicate (``is_non_dominated``, ``has_overlap``) that returns a tensor
#: returns a boolean one: a mask
PREDICATE_PREFIXES = ("is_", "has_", "_is_", "_has_")
MASK_ALIAS_NAMES = frozenset({"BoolTensor", "MaskTensor", "BoolMask"})
PY_ANNOTATIONS = frozenset({"int", "float", "bool", "str", "bytes", "list", "dict", "tuple", "set",
                            "List", "Dict", "Tuple", "Set", "Sequence", "Callable",
                            "typing.List", "typing.Dict", "typing.Tuple", "typing.Sequence", "typing.Callable",
                            "pathlib.Path", "pathlib.PurePath", "os.PathLike",
                            "torch.Size"})  # a tuple of ints (its .numel() is no tensor's)

# --- sizes (DYN302) -----------------------------------------------------------

ALL_POSITIONAL = -1

#: qualified function -> (positional indexes that are sizes (ALL_POSITIONAL = all), size keywords)
SIZE_ARGUMENT_FUNCTIONS: dict[str, tuple[tuple[int, ...], frozenset[str]]] = {
    "torch.arange": ((ALL_POSITIONAL,), frozenset({"start", "end", "step"})),
    "torch.zeros": ((ALL_POSITIONAL,), frozenset({"size"})),
    "torch.ones": ((ALL_POSITIONAL,), frozenset({"size"})),
    "torch.empty": ((ALL_POSITIONAL,), frozenset({"size"})),
    "torch.rand": ((ALL_POSITIONAL,), frozenset({"size"})),
    "torch.randn": ((ALL_POSITIONAL,), frozenset({"size"})),
    "torch.full": ((0,), frozenset({"size"})),
    "torch.randint": ((), frozenset({"size"})),
    "torch.randperm": ((0,), frozenset({"n"})),
    "torch.eye": ((0, 1), frozenset({"n", "m"})),
    "torch.linspace": ((2,), frozenset({"steps"})),
    "torch.logspace": ((2,), frozenset({"steps"})),
    "torch.narrow": ((2, 3), frozenset({"start", "length"})),
    "torch.split": ((1,), frozenset({"split_size_or_sections"})),
    "torch.tensor_split": ((1,), frozenset({"indices_or_sections", "sections", "indices"})),
    "torch.topk": ((1,), frozenset({"k"})),
    "torch.reshape": ((1,), frozenset({"shape"})),
    "torch.nn.functional.pad": ((1,), frozenset({"pad"})),
    "torch.nn.functional.interpolate": ((1,), frozenset({"size"})),
    # measured (torch 2.13, a length computed from tensor data): "Could not extract specialized integer
    # from data-dependent expression" for each of these
    "torch.istft": ((), frozenset({"length"})),
    "torch.functional.istft": ((), frozenset({"length"})),
    "torch.nn.functional.one_hot": ((1,), frozenset({"num_classes"})),
    "torch.nn.functional.adaptive_avg_pool1d": ((1,), frozenset({"output_size"})),
    "torch.nn.functional.adaptive_avg_pool2d": ((1,), frozenset({"output_size"})),
    "torch.nn.functional.adaptive_max_pool1d": ((1,), frozenset({"output_size"})),
    "torch.nn.functional.adaptive_max_pool2d": ((1,), frozenset({"output_size"})),
    "range": ((ALL_POSITIONAL,), frozenset()),
    # measured (torch 2.13): torch.Size([3, n, 2]) with a tensor n fails under torch.compile
    # (InternalTorchDynamoError: "torch.Size() takes an iterable of 'int' (item 1 is 'FakeTensor')"); eager
    # code reads n on the host (torchdyn's systems: `dist.sample(torch.Size([dim, n_harmonics, 2]))`)
    "torch.Size": ((0,), frozenset()),
    # a sparse tensor's dense size (sparse tensors break the graph anyway, measured on torch 2.13: "Attempted
    # to wrap sparse Tensor"; a size from data is read on the host besides)
    "torch.sparse_coo_tensor": ((2,), frozenset({"size"})),
    # PyTorch Geometric's scatter(src, index, dim, dim_size, reduce): the output's rows
    "torch_geometric.utils.scatter": ((3,), frozenset({"dim_size"})),
}
#: torch_scatter's reductions (src, index, dim, out, dim_size, ...): dim_size is the output's rows, given to
#: ``torch.zeros``/``new_zeros`` inside (torchdrug's ``scatter_add(..., dim_size=graph.num_node)`` of a 0-d tensor)
SIZE_ARGUMENT_FUNCTIONS.update({
    f"torch_scatter.{name}": ((4,), frozenset({"dim_size"}))
    for name in ("scatter", "scatter_add", "scatter_sum", "scatter_mean", "scatter_mul", "scatter_min",
                 "scatter_max", "scatter_std", "scatter_logsumexp")
})

#: qualified function -> (positional indexes that may be value bounds, bound keywords): arguments the
#: op needs as Python numbers (measured: torch.randint(0, t - 2, (1,)) breaks the graph, "Data dependent
#: operator").  A positional tuple/list among them is the size.
BOUND_ARGUMENT_FUNCTIONS: dict[str, tuple[tuple[int, ...], frozenset[str]]] = {
    "torch.randint": ((0, 1, 2), frozenset({"low", "high"})),
    # measured (torch 2.13): with int bounds dynamo traces them; with a 0-d tensor bound, "Attempted to call
    # function marked as skipped" (Random.randrange / Random.randint), and the bound is read on the host
    "random.randrange": ((0, 1, 2), frozenset({"start", "stop", "step"})),
    "random.randint": ((0, 1), frozenset({"a", "b"})),
}

#: methods of torch.distributions objects that return tensors
DISTRIBUTION_TENSOR_METHODS = frozenset("sample rsample sample_n log_prob cdf icdf entropy perplexity".split())

#: legacy typed constructors: ``torch.Tensor([a, b])`` of 0-d tensors reads each on the host, and fails
#: under torch.compile (measured: "RuntimeError when making fake tensor call")
LEGACY_TENSOR_CONSTRUCTORS = frozenset(
    "torch." + n for n in "Tensor FloatTensor DoubleTensor HalfTensor BFloat16Tensor LongTensor IntTensor "
                         "ShortTensor ByteTensor CharTensor BoolTensor".split()
)

#: ``torch.tensor([a.sum(), b.sum()])`` of tensor elements: each is read on the host in eager and in lazy
#: XLA/HPU mode (torch.compile traces it without a break, measured on torch 2.13)
VALUE_TENSOR_CONSTRUCTORS = frozenset({"torch.tensor", "torch.as_tensor"})

#: constructors that make a tensor of a value: ``x = torch.tensor(x)`` says x was no tensor before
SELF_CONVERTING_CONSTRUCTORS = LEGACY_TENSOR_CONSTRUCTORS | VALUE_TENSOR_CONSTRUCTORS

#: torch factories that make a tensor on the CPU unless given a ``device`` (``torch.randint(0, n, (1,))``,
#: ``torch.normal(0.0, std, size=(1,))``, ``torch.from_numpy(a)``): a value read from one is no device sync,
#: so outside the compiled step (a training loop's bookkeeping) the read is host work (DYN301 reports it in
#: host code). ``torch.tensor``/``as_tensor`` count only when given Python or numpy data (given a tensor they
#: keep its device). Code that calls ``torch.set_default_device`` is not told apart.
CPU_FACTORY_FUNCTIONS = frozenset(
    "torch." + n for n in "randint rand randn randperm normal zeros ones empty full arange linspace logspace "
                         "from_numpy tensor as_tensor Tensor LongTensor FloatTensor IntTensor BoolTensor".split()
)
CPU_FROM_DATA_FUNCTIONS = frozenset(
    "torch." + n for n in "tensor as_tensor Tensor LongTensor FloatTensor IntTensor BoolTensor".split())
#: the typed legacy constructors that are among those factories: each makes a tensor of its CPU type whatever
#: it is given (measured on torch 2.13: ``torch.FloatTensor(t)`` of a tensor of another dtype or device raises
#: "expected TensorOptions(... device=cpu ...)"; ``torch.Tensor(t)`` keeps ``t``'s device, so it is not one)
CPU_TYPED_CONSTRUCTORS = CPU_FROM_DATA_FUNCTIONS & LEGACY_TENSOR_CONSTRUCTORS - {"torch.Tensor"}
#: torch arithmetic that, given sizes and Python numbers only, computes a tensor dynamo takes as a size in the
#: size arguments of factories and views (``torch.div(n, k, rounding_mode="trunc")``: a 0-d CPU tensor in eager;
#: ``int()`` of it and a slice bound with it still break: see ``Analyzer.size_tensor``)
SIZE_ARITHMETIC_FUNCTIONS = frozenset(
    "torch." + n for n in "div floor_divide true_divide mul multiply add sub subtract remainder fmod".split())
#: names of Python's builtins: a call of one runs no project helper (``evidence.helper_calls`` skips them)
BUILTIN_CALLS_NOT_HELPERS = frozenset(name for name in dir(builtins) if not name.startswith("_"))
#: methods that read a tensor's (or a numpy array's) values into Python numbers or lists
VALUE_READING_METHODS = frozenset({"item", "tolist"})
#: tensor methods whose result may leave the receiver's device
DEVICE_MOVING_METHODS = frozenset({"to", "cuda", "type", "xpu", "mps", "pin_memory", "copy_"})

#: methods of Python lists that take an index: with a tensor index, torch.compile fails (measured:
#: InternalTorchDynamoError for list.pop(t) and list.insert(t, v)) and eager code reads it on the host
LIST_INDEX_METHODS = frozenset({"pop", "insert"})

#: tensor method -> (positional indexes that are sizes, size keywords)
SIZE_ARGUMENT_METHODS: dict[str, tuple[tuple[int, ...], frozenset[str]]] = {
    "view": ((ALL_POSITIONAL,), frozenset({"size"})),
    "reshape": ((ALL_POSITIONAL,), frozenset({"shape"})),
    "expand": ((ALL_POSITIONAL,), frozenset({"size"})),
    "repeat": ((ALL_POSITIONAL,), frozenset({"repeats"})),
    "new_zeros": ((0,), frozenset({"size"})),
    "new_ones": ((0,), frozenset({"size"})),
    "new_empty": ((0,), frozenset({"size"})),
    "new_full": ((0,), frozenset({"size"})),
    "narrow": ((1, 2), frozenset({"start", "length"})),
    "split": ((0,), frozenset({"split_size", "split_size_or_sections"})),
    "tensor_split": ((0,), frozenset({"indices_or_sections", "sections", "indices"})),
    "topk": ((0,), frozenset({"k"})),
    "unflatten": ((1,), frozenset({"sizes"})),
}

# --- branches (DYN202) -----------------------------------------------------------

#: builtins that compare their arguments' values in Python: name -> ((advice over one tensor,
#: advice with several arguments), what they do over one tensor under torch.compile, measured on
#: torch 2.13: sorted/any/all break the graph, min/max unroll once per length)
COMPARING_BUILTINS: dict[str, tuple[tuple[str, str], str]] = {
    "min": (("t.min() or t.amin()", "torch.minimum / t.clamp(max=...)"),
            "a host sync per comparison; torch.compile unrolls it and recompiles for every new length"),
    "max": (("t.max() or t.amax()", "torch.maximum / t.clamp(min=...)"),
            "a host sync per comparison; torch.compile unrolls it and recompiles for every new length"),
    "sorted": (("torch.sort(t)", "torch.sort"), "a graph break under torch.compile"),
    "any": (("t.any()", "torch.any"), "a graph break under torch.compile"),
    "all": (("t.all()", "torch.all"), "a graph break under torch.compile"),
}

# --- loops (DYN203) -------------------------------------------------------------

#: methods/functions whose result, when iterated, unrolls over a tensor dimension
TENSOR_ITERATION_METHODS = frozenset({"unbind", "split", "tensor_split"})
TENSOR_ITERATION_FUNCTIONS = frozenset({"torch.unbind", "torch.split", "torch.tensor_split"})
ITERATION_WRAPPERS = frozenset({"enumerate", "zip", "reversed"})
#: calls that wrap a loop's iterable, their first argument (``enumerate(self._iter_batches())``,
#: ``tqdm(loader)``): what the loop really iterates is inside (the training step's generator, regions)
ITERABLE_WRAPPERS = frozenset({"enumerate", "tqdm", "iter", "zip"})
#: builtins (and tqdm) that make a loop's iterable: a call of one is not a project generator
BUILTIN_ITERABLES = frozenset({"range", "enumerate", "zip", "iter", "list", "tuple", "sorted", "reversed", "map",
                               "filter", "tqdm", "len", "dict", "set"})
#: builtins that iterate a tensor argument's rows in Python (one compile per length, measured)
ITERATING_BUILTINS = frozenset({"sum", "list", "tuple"})

# --- inputs (DYN4xx) and compile (DYN5xx) -------------------------------------------

DATALOADERS = frozenset({"torch.utils.data.DataLoader", "torch.utils.data.dataloader.DataLoader"})
#: DataLoader(dataset, batch_size, shuffle, sampler, batch_sampler, num_workers, collate_fn, pin_memory, drop_last)
#: samplers that visit the dataset in order (an evaluation or prediction pass; by qualified-name suffix)
SEQUENTIAL_SAMPLERS = ("data.SequentialSampler", "sampler.SequentialSampler", "InferenceSampler")
DATALOADER_POSITIONS = {"dataset": 0, "batch_size": 1, "shuffle": 2, "sampler": 3, "batch_sampler": 4, "collate_fn": 6, "drop_last": 8}
#: whole words of a class's or module's name that say the code evaluates, tests or benchmarks a model (not
#: substrings: ``retrieval`` and ``interval`` hold no ``val``)
EVALUATION_NAME_WORDS = frozenset({
    "val", "valid", "validation", "validate", "validator", "eval", "evaluate", "evaluation", "evaluator",
    "evaluators", "test", "tests", "testing", "predict", "prediction", "predictor", "infer", "inference",
    "benchmark", "benchmarks", "bench", "metric", "metrics", "pipeline", "pipelines",
    # post-training quantization's calibration: forward passes over a sample, like an evaluation (brevitas's
    # `calibration_loader`, `create_calibration_dataloader`)
    "calib", "calibration", "calibrate",
})
#: words of a function's name that say it runs an evaluation (``_run_evaluators``, ``validate``,
#: ``eval_epoch``): a training loop calls it every so many steps, not as part of the step
EVALUATION_RUN_WORDS = frozenset({
    "val", "valid", "validation", "validate", "eval", "evaluate", "evaluation", "evaluator", "evaluators",
})
#: ... unless the name says it computes a loss (``eval_loss``, ``val_loss_fn``) or trains too (darts'
#: ``_train_val_step``, the body of both Lightning steps)
NOT_EVALUATION_RUN_WORDS = frozenset({"loss", "losses", "criterion", "train", "training"})


_NAME_WORD_RE = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|[0-9]+")


def name_words(name: str) -> list[str]:
    """The lower-case words of a snake_case or CamelCase name (``ValDataSampler`` -> val, data, sampler)."""
    return [word.lower() for word in _NAME_WORD_RE.findall(name)]


PAD_SEQUENCE = frozenset({"torch.nn.utils.rnn.pad_sequence"})
#: datasets made of whole tensors (``TensorDataset(all_input_ids, all_labels)``): each batch is a slice of
#: rows, so a tensor padded once before it is built gives every batch the same length
TENSOR_DATASETS = frozenset({"torch.utils.data.TensorDataset", "torch.utils.data.dataset.TensorDataset"})
#: padding by explicit amounts (``F.pad(x, (0, n - x.shape[1]))``)
FUNCTIONAL_PAD = frozenset({"torch.nn.functional.pad"})
PADDING_COLLATORS = frozenset({
    "transformers.DataCollatorWithPadding",
    "transformers.DataCollatorForTokenClassification",
    "transformers.DataCollatorForSeq2Seq",
    "transformers.data.data_collator.DataCollatorWithPadding",
    "transformers.data.data_collator.DataCollatorForTokenClassification",
    "transformers.data.data_collator.DataCollatorForSeq2Seq",
})
PAD_TO_LONGEST_VALUES = (True, "longest")

COMPILE_FUNCTIONS = frozenset({"torch.compile", "torch._dynamo.optimize"})

#: a call of a distinctive method name on a receiver of unknown type resolves to the project's methods
#: of that name when there are at most this many (regions follow all; parameters take what is passed
#: only when there is one)
NAMED_CALL_CANDIDATES = 3
#: method names too common to say which class defines them (framework hooks, container and config API)
GENERIC_METHOD_NAMES = frozenset({
    "state_dict", "load_state_dict", "named_parameters", "named_modules", "named_children", "named_buffers",
    "register_buffer", "register_parameter", "zero_grad", "get_config", "from_config", "to_dict", "from_dict",
    "from_pretrained", "save_pretrained", "get_output", "get_input", "reset_parameters", "init_weights",
    "extra_repr", "set_epoch", "get_lr", "get_last_lr", "add_module", "train_step", "val_step", "test_step",
    "training_step", "validation_step", "predict_step", "log_dict", "get_logger", "set_attributes",
})

#: string keys of a batch (or model output) dict whose entries are tensors by convention (Hugging Face's
#: model inputs and outputs): ``batch["input_ids"]`` of a dict the analysis knows nothing of is a maybe-tensor
TENSOR_ITEM_KEYS = frozenset({
    "input_ids", "attention_mask", "labels", "token_type_ids", "position_ids", "pixel_values",
    "decoder_input_ids", "decoder_attention_mask", "input_features", "input_values", "inputs_embeds",
    "logits", "loss", "pixel_mask",
})

#: functions of other libraries that give back a tensor of what they are given: qualname -> how.
#: ``"same"``: the kind of the first argument (a mask stays a mask: ``rearrange(mask, 'b n -> (b n)')``;
#: a list of tensors is stacked into one); ``"reduce"``: a tensor when the first argument is one;
#: ``"pack"``: ``(tensor, shapes)``; ``"unpack"``: a list of tensors; ``"any"``: a tensor when any
#: positional argument is one (einx takes its pattern first)
TENSOR_PASSING_FUNCTIONS = {
    "einops.rearrange": "same", "einops.repeat": "same", "einops.reduce": "reduce",
    "einops.pack": "pack", "einops.unpack": "unpack", "einops.einsum": "any",
}
#: torchvision's box operators give back a tensor when given tensors (nms: the indices kept; box_iou: a matrix),
#: under ``torchvision.ops`` and their defining module
TENSOR_PASSING_FUNCTIONS.update({
    f"torchvision.ops.{module}{name}": "any"
    for name in ("nms", "batched_nms", "box_iou", "box_area", "box_convert", "generalized_box_iou",
                 "distance_box_iou", "complete_box_iou", "clip_boxes_to_image", "remove_small_boxes",
                 "masks_to_boxes")
    for module in ("", "boxes.")
})
#: methods that give back what they are given, wrapped or unwrapped (accelerate's ``unwrap_model(model)``):
#: the kind of their one argument, whatever the receiver
UNWRAPPING_METHODS = frozenset({"unwrap_model"})
#: methods of an accelerator (a receiver named so: ``self.accelerator.prepare(model, optimizer, loader)``) that
#: give back what they are given, one value per argument (a tuple for several)
ACCELERATOR_PREPARE_METHODS = frozenset({"prepare"})
#: progress bars that yield what the iterable they wrap yields (``for n, step in tqdm(zip(counts, steps))``)
PROGRESS_WRAPPERS = frozenset({"tqdm.tqdm", "tqdm.auto.tqdm", "tqdm.std.tqdm", "tqdm.notebook.tqdm",
                               "tqdm.rich.tqdm", "tqdm.autonotebook.tqdm"})
#: namespaces whose every function works like ``"any"`` above
TENSOR_PASSING_NAMESPACES = ("einx.",)

#: modules that count as "this file uses torch"
TORCH_MODULE_ROOTS = frozenset({"torch", "torchvision", "torchaudio", "torchtext", "functorch"})

# --- evidence: how a reader knows a name holds a tensor ----------------------------------

#: methods only tensors have (not numpy arrays, not nn.Modules, not str/list/dict): calling one on a name
#: is evidence that the name holds a tensor (``numel`` is a torch.Size's too, measured: not on a name that
#: says a shape, ``SHAPE_NAME_WORDS``)
TENSOR_ONLY_METHODS = frozenset((
    "detach detach_ backward long int bool short byte char "
    "new_zeros new_ones new_full new_empty new_tensor "
    "clamp clamp_ clamp_min clamp_max clamp_min_ clamp_max_ masked_fill masked_fill_ masked_scatter masked_scatter_ "
    "masked_select index_select index_fill index_fill_ index_add index_add_ index_copy index_copy_ index_put index_put_ "
    "scatter scatter_ scatter_add scatter_add_ scatter_reduce gather unsqueeze unsqueeze_ permute contiguous "
    "expand expand_as view_as reshape_as type_as repeat_interleave softmax log_softmax sigmoid sigmoid_ relu relu_ "
    "tanh tanh_ exp exp_ log log_ log1p sqrt sqrt_ rsqrt pow_ abs_ neg_ numel nelement dim ndimension element_size "
    "is_floating_point is_complex topk norm matmul bmm mm chunk unbind narrow flip logsumexp amax amin argmax argmin "
    "add_ sub_ mul_ div_ copy_ zero_ fill_ normal_ uniform_ bernoulli_ exponential_ random_ "
    "float_power fmod remainder lerp addmm addcmul addcdiv baddbmm einsum softplus logit "
    "unfold fold nan_to_num isnan isinf isfinite logical_not logical_and logical_or "
    "eq ne gt ge lt le sign floor_divide cummax cummin cumprod logcumsumexp tril triu diag_embed "
    "pin_memory record_stream data_ptr storage untyped_storage get_device is_contiguous stride storage_offset "
    "requires_grad_ retain_grad register_hook type "
    # elementwise math numpy arrays and Python numbers have no method for (torchdiffeq's `norm(y0 / scale).abs()`)
    "abs reciprocal erf erfc erfinv expm1 log2 log10 sin cos sinh cosh square"
).split())

#: what only a tensor (or a module, which has no ``.item()``/``.tolist()``) is moved or detached with
TENSOR_MOVE_METHODS = frozenset({"cpu", "cuda", "detach"})
#: tensor methods that may copy a tensor from a device to the host (``x.to(device)``: any ``to`` may name the CPU)
DEVICE_COPY_METHODS = frozenset({"cpu", "to"})

#: ``torch.fx.experimental.symbolic_shapes``' helpers that evaluate a size test (without a guard where the
#: size is unbacked): whether a branch on one specializes is what the test inside says (DYN201)
SYMBOLIC_SIZE_GUARDS = frozenset(f"torch.fx.experimental.symbolic_shapes.{name}" for name in (
    "guard_or_false", "guard_or_true", "statically_known_true", "statically_known_false",
    "definitely_true", "definitely_false"))

#: words of a name that says it holds a shape (``new_shape.numel()`` of a torch.Size: tensordict's
#: ``_check_is_flatten``)
SHAPE_NAME_WORDS = frozenset({"shape", "shapes", "size", "sizes"})

#: tensor-only methods that take no positional argument (casts, elementwise math): ``env.bool("TYPECHECK", False)``
#: (environs) or ``config.int("n", 3)`` called with one is no tensor cast, and ``logger.log({...})`` (torchdyn's
#: root finder's logger) no logarithm
NO_ARGUMENT_TENSOR_METHODS = frozenset("long int bool short byte char detach log log_ log1p exp exp_ sqrt sqrt_ rsqrt "
                                       "sigmoid sigmoid_ tanh tanh_ relu relu_ isnan isinf isfinite logical_not".split())

#: methods tensors share with dicts (sparse ``t.values()``): on a value only maybe a tensor, the
#: result is only maybe one too
CONTAINER_SHARED_METHODS = frozenset({"values"})

#: methods of any object that take the loss tensor first: ``accelerator.backward(loss)``,
#: ``self.manual_backward(loss)`` (Lightning), ``loss.backward(gradient)``, a custom autograd function's
#: ``ctx.save_for_backward(x, ...)``; and GradScaler's
#: ``scaler.scale(loss).backward()`` (``scale`` alone is too common a name to count)
TENSOR_ARGUMENT_METHODS = frozenset({"backward", "manual_backward", "save_for_backward"})
SCALED_BACKWARD_METHODS = frozenset({"scale", "scale_loss"})

#: attributes only tensors have
TENSOR_ONLY_ATTRIBUTES = frozenset("device is_cuda grad_fn is_leaf requires_grad mT mH".split())

#: torch functions whose first argument is not a tensor (sizes, data, any object) or whose
#: arguments are sequences of tensors: no evidence about a name passed first
NOT_TENSOR_FIRST_FUNCTIONS = frozenset(
    "torch." + n
    for n in (
        "tensor as_tensor asarray from_numpy from_file frombuffer from_dlpack is_tensor is_storage "
        "zeros ones empty full rand randn randint randperm arange range eye linspace logspace "
        "zeros_like ones_like empty_like full_like rand_like randn_like randint_like "
        "cat concat concatenate stack hstack vstack dstack column_stack row_stack broadcast_tensors "
        "block_diag cartesian_prod meshgrid einsum atleast_1d atleast_2d atleast_3d "
        "manual_seed seed save load set_grad_enabled no_grad enable_grad inference_mode "
        "device dtype finfo iinfo Size compile cond vmap func broadcast_shapes result_type promote_types "
        "can_cast get_default_dtype set_default_dtype numel typename sym_int sym_float sym_max sym_min "
        "split_with_sizes nested.nested_tensor nested.as_nested_tensor"
    ).split()
)
#: functions taking a sequence of tensors first (torch.cat([a, b])): the elements are tensors
TENSOR_SEQUENCE_FUNCTIONS = frozenset(
    "torch." + n for n in "cat concat concatenate stack hstack vstack dstack column_stack row_stack "
                         "broadcast_tensors block_diag cartesian_prod".split()
)
#: torch.nn.functional functions whose first two arguments are tensors (input, target)
TWO_TENSOR_FUNCTIONS = frozenset(
    "torch.nn.functional." + n
    for n in (
        "cross_entropy nll_loss mse_loss l1_loss smooth_l1_loss huber_loss binary_cross_entropy "
        "binary_cross_entropy_with_logits kl_div poisson_nll_loss gaussian_nll_loss cosine_similarity "
        "pairwise_distance margin_ranking_loss soft_margin_loss multilabel_soft_margin_loss "
        "multilabel_margin_loss multi_margin_loss hinge_embedding_loss linear bilinear conv1d conv2d conv3d "
        "conv_transpose1d conv_transpose2d conv_transpose3d embedding grid_sample scaled_dot_product_attention"
    ).split()
)

# --- where code runs -----------------------------------------------------------------------

#: calls that mean "this is a training step" when a loop's body makes them
#: (mmengine's `optim_wrapper.update_params(loss)` is the backward and the optimizer step in one call)
TRAINING_STEP_METHODS = frozenset({"backward", "step", "update_params"})  # loss.backward(), optimizer.step(), scaler.step(opt)
#: text one of those calls always holds: a loop's source is searched for these before its tree is
TRAINING_STEP_WORDS = ("backward", ".step(", "update_params")
#: words in the iterable of a loop that belongs to one training step rather than looping over steps
#: (``for optimizer in self.optimizers: optimizer.step()``, ``for micro in microbatches``, gradient
#: accumulation); such loops, and ``while True:`` retries, do not hide a step from the loop around them
INNER_STEP_LOOP_WORDS = ("optim", "micro", "accum", "scaler")
#: decorators/wrappers: the function is compiled / runs eagerly / is a GPU kernel, not PyTorch code
COMPILE_DECORATORS = frozenset({"torch.compile", "torch._dynamo.optimize", "torch.jit.script"})
COMPILED_WRAPPERS = frozenset({
    "torch.compile", "torch._dynamo.optimize",
    "torch.utils.checkpoint.checkpoint", "torch.utils.checkpoint.checkpoint_sequential",
    "torch.vmap", "torch.func.vmap", "torch.func.grad", "torch.func.jacrev", "torch.func.jacfwd",
    "torch.func.functional_call", "torch.cond", "torch.export.export",
})
#: wrappers that call the function they are given with the rest of their arguments:
#: qualname -> (index of the function, index of its first argument, the wrapper's own keywords)
FORWARDING_WRAPPERS = {
    "torch.utils.checkpoint.checkpoint": (0, 1, frozenset({
        "use_reentrant", "context_fn", "determinism_check", "debug", "preserve_rng_state"})),
}
#: (not ``torch.jit.ignore``/``torch.jit.unused``: they are TorchScript's; measured on torch 2.13, dynamo traces
#: into such a function and breaks the graph at the line inside it).  The body of a custom operator
#: (``@torch.library.custom_op("ns::op", mutates_args=())``, a kernel registered with ``torch.library.impl`` or
#: ``register_kernel``) runs eagerly too: compiled code calls the operator as one opaque node
DISABLE_DECORATORS = frozenset({
    "torch.compiler.disable", "torch._dynamo.disable", "torch._disable_dynamo",
    "torch.library.custom_op", "torch._library.custom_ops.custom_op", "torch.library.impl",
    "torch.library.register_kernel",
})
#: decorators that turn autograd off for a whole function: on a module-level function, sampling,
#: decoding, evaluation helpers (on a method they also mark target assignment and optimizer steps)
NO_GRAD_DECORATORS = frozenset({"torch.no_grad", "torch.inference_mode"})
KERNEL_DECORATOR_PREFIXES = ("triton.", "numba.", "numba", "cupy.", "taichi.", "warp.", "jax.")
KERNEL_DECORATOR_NAMES = frozenset({"jit", "njit", "autotune", "heuristics", "kernel", "vectorize", "guvectorize",
                                    "cfunc", "stencil"})
#: functions answering "is dynamo (or another tracer) running?": code guarded by their negation
#: never runs in the compiled graph
IS_COMPILING_FUNCTIONS = frozenset({
    "torch.compiler.is_compiling", "torch.compiler.is_dynamo_compiling", "torch._dynamo.is_compiling",
    "torch._utils.is_compiling", "torch._dynamo.external_utils.is_compiling",
})
IS_COMPILING_NAMES = frozenset({"is_compiling", "is_dynamo_compiling", "is_torchdynamo_compiling",
                                "is_torch_compiling"})
#: true only when TorchScript (not dynamo) runs the code: a guarded body never runs under dynamo
IS_SCRIPTING_FUNCTIONS = frozenset({"torch.jit.is_scripting", "torch.jit.is_tracing", "torch._C._get_tracing_state",
                                    "torch.fx._symbolic_trace.is_fx_tracing", "torch.onnx.is_in_onnx_export",
                                    # torchvision's `_get_tracing_state()` test (DETR's ONNX nested-tensor path)
                                    "torchvision._is_tracing"})
IS_SCRIPTING_NAMES = frozenset({"is_scripting", "is_fx_tracing", "is_in_onnx_export"})
# a project's own `is_tracing()` (transformers': dynamo or fx is tracing) is true under torch.compile
IS_COMPILING_NAMES = IS_COMPILING_NAMES | {"is_tracing"}

#: methods of nn.Module subclasses that run once, at construction, on the host
CONSTRUCTION_METHODS = frozenset({"__init__", "_init_weights", "init_weights", "reset_parameters",
                                  "_reset_parameters", "extra_repr", "__repr__", "_initialize_weights"})
#: LightningModule-style step methods: the framework calls them as the training step (a Hugging Face
#: ``Trainer`` subclass's ``compute_loss`` too: its base class's training_step calls it each step)...
STEP_METHODS = frozenset({"training_step", "compute_loss"})
#: methods a Hugging Face ``Trainer`` calls from its own training step, every step (trl's GRPO/distillation
#: trainers generate completions there): training code in a subclass of ``transformers.Trainer``
TRAINER_STEP_HOOKS = frozenset({"_prepare_inputs"})
#: Lightning hooks (of a ``Callback`` or the ``LightningModule``) the fit loop calls inside every training step,
#: between the backward and the optimizer step: a sync there stalls the step as one in ``training_step`` does
#: (nequip's ``TrainingStatsMonitor.on_after_backward`` logging gradient statistics)
TRAINING_STEP_HOOKS = frozenset({"on_before_backward", "on_after_backward", "on_before_optimizer_step",
                                 "on_before_zero_grad"})
#: ...and the hooks it calls before and after each step, whatever class defines them: logging, checkpointing,
#: spike detection and LR-finder bookkeeping on the finished step's outputs, on the host (judged so: Lightning's
#: ``ModelCheckpoint``, ``SpikeDetection``, ``_LRCallback``)
BATCH_BOUNDARY_HOOKS = frozenset({"on_train_batch_start", "on_train_batch_end"})
#: ...and as evaluation steps, eagerly, outside the training step (shared helpers they call that the
#: training step calls too are training code through it)
EVAL_STEP_METHODS = frozenset({"validation_step", "test_step", "predict_step", "val_step"})  # val_step: MMEngine's
#: framework event hooks of modules and callbacks (Lightning ``on_train_epoch_end``, ``on_validation_batch_end``,
#: ``validation_epoch_end``...): called between steps, eagerly, on the host
HOOK_PREFIXES = ("on_",)
HOOK_SUFFIXES = ("_epoch_end", "_epoch_start")
#: evaluation methods of modules (``Node2Vec.test``, ``model.evaluate(loader)``): they run the model eagerly
EVAL_METHODS = frozenset({"test", "evaluate", "generate", "inference", "infer"})  # generate: the decoding loop that calls forward
#: methods of any class (a module or not) named as decoding loops (fairseq's
#: ``IterativeRefinementGenerator.generate``); not ``_generate_targets``-style helpers of losses
GENERATE_METHODS = frozenset({"generate", "_generate"})
#: words of a method's name that, with ``@torch.no_grad()``/``@torch.inference_mode()`` on it, say an inference
#: loop (denoising-diffusion's ``ddim_sample``/``p_sample``): host code unless compiled or training code reaches it
#: (a ``@torch.no_grad()`` method alone may be a step's EMA or queue update).  Not ``search``: allennlp's T5
#: forward runs its ``BeamSearch._search`` in evaluation
NO_GRAD_HOST_METHOD_WORDS = frozenset({"sample", "sampling", "decode", "decoding", "generate"})
#: module methods the step never runs unless its forward calls them: text and input pre-processing
#: (``Transformer.tokenize``/``preprocess``).  Not ``predict``/``postprocess``: OpenMMLab's
#: ``forward(mode="predict")`` runs a head's ``predict`` and its post-processing inside the forward
INFERENCE_METHODS = frozenset({"preprocess", "tokenize"})
#: module methods that edit the module's own weights once, outside any step: merging or fusing adapters,
#: branches or batch norms into a layer (``LoraLayer.merge``/``unmerge``, ``fuse_conv_bn``,
#: ``switch_to_deploy``), pruning units (pykan's ``prune_node``/``prune_input``) and loading state;
#: ``merge*``/``unmerge*``/``fuse*``/``prune*`` name them, with or without ``_``
WEIGHT_EDIT_PREFIXES = ("merge", "unmerge", "fuse", "prune", "_merge", "_unmerge", "_fuse", "_prune")
WEIGHT_EDIT_METHODS = frozenset({"switch_to_deploy", "load_state_dict", "_load_from_state_dict", "state_dict"})
#: methods of encoders, normalizers, clusterers fitted on data (sklearn-style): run once, on the host
FIT_METHODS = frozenset({"fit", "fit_transform", "partial_fit"})
#: methods that describe an object as text (printing a model, a result): they run on the host
REPR_METHODS = frozenset({"__repr__", "__str__", "__format__", "extra_repr", "__nice__", "__rich_repr__"})
#: methods that compare or hash whole objects (``basis == other`` when caching bases, a representation used as
#: a dict key): they run on the host, at construction, not on a model's data
IDENTITY_METHODS = frozenset({"__eq__", "__ne__", "__hash__", "__lt__", "__le__", "__gt__", "__ge__"})
#: functions and methods that plot or visualise (``plot_prediction``, ``visualize_attention``)
HOST_FUNCTION_PREFIXES = ("plot", "visualize", "visualise", "_plot", "_visualize", "_visualise")
#: words of a function's name (between underscores) that say export, saving or loading code, run once, eagerly
#: (``cif_v1_export``, ``export_onnx``, ``to_onnx``, schnetpack's ``System.load_molecules``, ``save_imgs``), or
#: colour maps for images (nerfstudio's ``apply_depth_colormap``), or debugging output (deepspeed's
#: ``dump_pre_step_gradients``, ``_format_payload_debug``, ``_print_scheduler_debug``), or a codec's bitstream coding
#: (compressai's ``compress``/``decompress``): host code unless compiled or
#: training code reaches it.  Not ``metrics``: nerfstudio's training step runs its models' ``get_metrics_dict`` (and
#: losses in it)
HOST_FUNCTION_WORDS = frozenset({"export", "onnx", "load", "save", "serialize", "deserialize", "colormap", "colormaps",
                                 "dump", "debug", "print",
                                 # entropy coding of a learned codec to and from a bitstream (compressai's
                                 # `compress`/`_decompress_ar`): inference on the host, after the model
                                 "compress", "decompress"})  # serialize: kraken's layers' CoreML export
#: the words of HOST_FUNCTION_WORDS that name saving or exporting: a training loop that calls such a function does
#: so at a few chosen steps (a checkpoint every N steps), so the step does not reach through it
SAVING_FUNCTION_WORDS = frozenset({"export", "onnx", "save", "serialize"})
#: name endings of classes (not nn.Modules) that run a model for inference: every method is host code
#: unless compiled or training code reaches it (chronos' ``BaseChronosPipeline``, whisper's
#: ``BeamSearchDecoder``, a ``*Predictor``); ``*Search`` is not one (allennlp's T5 forward runs its ``BeamSearch``),
#: nor ``*Generator`` (mmdet's ``AnchorGenerator``, a plain class, makes priors inside a head's forward)
INFERENCE_CLASS_SUFFIXES = ("Pipeline", "Predictor", "Inferencer", "Decoder", "Player")  # Player: an RL policy played
#: an nn.Module named so whose forward is under @torch.no_grad()/@torch.inference_mode() is an inference
#: wrapper (doctr's OCRPredictor), not a model: its forward is host code (not torchvision's FastRCNNPredictor,
#: a head with a plain forward)
PREDICTOR_MODULE_SUFFIXES = ("Pipeline", "Predictor", "Inferencer")
#: bases that say nothing of what a class is (the last part of the base's name)
PLAIN_BASES = frozenset({"object", "ABC", "Generic", "Protocol", "NamedTuple"})

#: receivers whose ``.step()`` is an optimizer step (optimizer, opt, scaler...), met anywhere in the
#: receiver's text (its chain's root, a dot, its last attribute: ``self.optimizer``, ``opt.``)
OPTIMIZER_NAME_HINTS = ("optim", "opt.", "scaler", "opt_")
#: ... or at its end (stylegan2's ``self.GAN.D_opt``, ``self.opt``)
OPTIMIZER_NAME_ENDINGS = ("_opt", ".opt")

#: torch functions/methods returning a tuple or list of tensors
SEQUENCE_RESULT_FUNCTIONS = frozenset(
    "torch." + n for n in "split tensor_split chunk unbind meshgrid broadcast_tensors hsplit vsplit dsplit".split()
)
SEQUENCE_RESULT_METHODS = frozenset("split tensor_split chunk unbind hsplit vsplit dsplit".split())

#: torch functions whose result has their first argument's dtype (a mask in, a mask out)
DTYPE_PRESERVING_FUNCTIONS = frozenset(
    "torch." + n for n in "ones_like zeros_like empty_like full_like clone flip roll "
                         # layout ops: unimol-tools' `torch.repeat_interleave(tokens.ne(pad), counts, dim=0)` is
                         # a mask, repeated (its one-argument form gives indices: see walker)
                         "repeat_interleave tile flatten reshape squeeze unsqueeze transpose permute t narrow "
                         "movedim broadcast_to".split()
)

#: a `padding=` keyword pads to the longest item only on callables named like these (tokenizers,
#: processors, feature extractors, collators); elsewhere `padding` means something else
TOKENIZER_NAME_HINTS = ("tokeniz", "processor", "feature_extractor", "extractor", "collat", "encode_plus")

# --- fixes (dynlint.fixes, dynlint.rebinding) --------------------------------------
# Tensor methods free of side effects: no mutation, no random numbers, no host copy, the
# same result whenever they run.  A fix may move such a call (``x.mul(w)[m].sum()`` ->
# ``torch.where(m, x.mul(w), 0).sum()`` evaluates the mask first); it may not move one
# that draws random numbers (dropout, bernoulli) or writes (anything ending in ``_``).
PURE_TENSOR_METHODS = frozenset("""
    add sub subtract mul multiply div divide true_divide floor_divide remainder fmod pow float_power neg negative
    abs absolute reciprocal sqrt rsqrt square exp exp2 expm1 log log2 log10 log1p sigmoid logit tanh sin cos tan
    asin acos atan atan2 arctan2 sinh cosh asinh acosh atanh relu clamp clip clamp_min clamp_max sign sgn signbit
    floor ceil round trunc frac lerp addcmul addcdiv maximum minimum fmax fmin hypot logaddexp erf erfc erfinv
    lgamma digamma xlogy nan_to_num softmax log_softmax matmul mm bmm dot outer
    eq ne gt lt ge le greater less greater_equal less_equal not_equal logical_and logical_or logical_xor
    logical_not bitwise_and bitwise_or bitwise_xor bitwise_not isnan isinf isfinite isneginf isposinf isreal
    float double half bfloat16 int long short bool type_as to detach clone contiguous
    view view_as reshape reshape_as flatten squeeze unsqueeze transpose permute t expand expand_as narrow select
    flip roll repeat tile movedim diagonal tril triu
    sum mean prod amax amin std var norm logsumexp nansum nanmean all any cumsum cumprod
    masked_fill where gather index_select
""".split())

# Tensor methods that change the shape of the tensor they are called on, in place (measured on
# torch 2.13: every public in-place method tried on a 2x3 tensor, plus those that need a size-1
# dimension or a tensor argument to show it), and attributes whose assignment does (``x.data = y``).
INPLACE_SHAPE_METHODS = frozenset({
    "unsqueeze_", "squeeze_", "resize_", "resize_as_", "t_", "transpose_", "swapaxes_", "swapdims_",
    "as_strided_", "set_", "sparse_resize_", "sparse_resize_and_clear_",
})
INPLACE_SHAPE_ATTRIBUTES = frozenset({"data"})

#: numpy in the compiled step: dynamo traces numpy as tensors, so numpy's RNG and a numpy value
#: turned into a Python number are data-dependent operators (measured: np.random.rand(1).item(),
#: np.random.choice, float(np.zeros(3).sum()) each break the graph)
NUMPY_RANDOM_PREFIX = "numpy.random."
#: libraries built on numpy, whose functions take and return arrays, never tensors: what such a function (its
#: name lowercase: not a class, `cv2.VideoCapture(...)`) returns is a numpy array (or a Python value), whatever
#: tensor-like methods the code calls on it (f5-tts' silence slicer: `rms_list = librosa.feature.rms(...).squeeze(0)`,
#: then `.argmin()` indices compared with builtin max/min).  Not sklearn: `clone(self)` gives back an estimator
#: of the project (tabpfn's `worker = clone(self)`, whose methods the call graph follows)
NUMPY_LIBRARY_ROOTS = frozenset({"librosa", "scipy", "skimage", "cv2"})

#: names of values that hold a model (``model(x)``, ``self.unet(...)``, ``net.forward(x)``): code calling
#: them from outside a forward drives the model (a pipeline, a predictor, an evaluation loop)
MODEL_NAMES = frozenset((
    "model model_ ema_model teacher student net network module backbone detector classifier unet "
    "transformer text_encoder vae encoder decoder generator discriminator"
).split())
MODEL_NAME_SUFFIXES = ("_model",)  # det_model, teacher_model, ema_model
#: attributes of ``self`` that hold the model a class was given as a callable (captum's attribution methods
#: keep it as ``self.forward_func``): calling one runs the model from outside its forward; only as an
#: attribute of ``self`` (a local ``forward_func`` is as often a kernel: deepspeed's CUDA transformer op)
MODEL_ATTRIBUTE_NAMES = frozenset({"forward_func"})
MODEL_ENTRY_METHODS = frozenset({"forward", "__call__"})
#: ...and the entry points named by a prefix: ``model.encode_query(...)``, ``model.predict_proba(...)``
MODEL_ENTRY_PREFIXES = ("generate", "predict", "encode", "decode")

#: names that say "a boolean mask" (``valid_mask``, ``is_fg``, mmdet's ``inside_flags``/``valid_flags``;
#: not ``keep``, which as often holds NMS indices, nor a singular ``flag``, often a Python bool): a
#: tensor indexed by one is boolean-mask indexing, whatever the analysis could prove about the value
#: (the camelCase form, ``isValid``/``hasBox``, is case-sensitive: ``hashed_3``, ``island`` are no masks)
MASK_NAME_RE = re.compile(r"(?i:(?:^|_)(?:mask|masks|valid|is|has|flags)(?:$|_))|^(?:is|Is|has|Has)[A-Z]")
#: names that say "an index" even next to a mask word (``mask_idx``, ``valid_inds``, ``mask_ids``): integer
#: indexing, not a mask
INDEX_NAME_RE = re.compile(r"(?:^|_)(?:idx|idxs|index|indexes|indices|ind|inds|id|ids)(?:$|_)", re.IGNORECASE)


#: names that say "a key of a dict" (``edge_vec_field``, ``mask_key``, nequip's ``EDGE_INDEX_KEY``, ``self.in_field``):
#: ``data[KEY]`` reads a container, ``KEY in data`` looks a key up
KEY_NAME_RE = re.compile(r"(?i:(?:^|_)(?:name|names|key|keys|str|type|field)(?:$|_))")


def named_as_key(identifier: str) -> bool:
    """``edge_vec_field``, ``CELL_KEY``, ``norm_key``: a name that says a key of a dict."""
    return KEY_NAME_RE.search(identifier) is not None


def named_as_mask(identifier: str) -> bool:
    """``valid_mask``, ``inside_flags``, ``isValid``; not ``mask_idx``: a name that says a boolean mask."""
    return MASK_NAME_RE.search(identifier) is not None and INDEX_NAME_RE.search(identifier) is None

#: tensor methods that move data to the host on purpose: a function calling them on tensors (outside an
#: nn.Module) is host code (metrics, plots, export), unless a compiled or training path reaches it
TO_HOST_METHODS = frozenset({"cpu", "numpy"})
#: module-path components of a test suite: a ``tests``/``test``/``testing`` package, a ``test_*``/``*_test`` file
TEST_MODULE_PARTS = frozenset({"test", "tests", "testing"})


def is_test_module_part(part: str) -> bool:
    """One dotted component of a module's name says the module belongs to a test suite."""
    return part in TEST_MODULE_PARTS or part.startswith("test_") or part.endswith("_test")


def is_test_module(module: str) -> bool:
    """A module of a test suite: a component of its dotted name says so."""
    return any(is_test_module_part(part) for part in module.split("."))


#: module-path components of code that runs a backward pass to check or analyse, not to train (benchmarks
#: comparing gradients, transformer-lens' tools/analysis/ fitting a probe with one LBFGS solve): a function
#: there calling backward() or stepping an optimizer outside any loop is no step function, so neither it nor
#: a loop calling it is a training step (a loop there that itself calls backward() still is). Not ``tools``:
#: mace's tools/train.py holds its LBFGS training step
CHECKING_MODULE_PARTS = frozenset({"benchmarks", "benchmark", "analysis"})


def is_checking_module(module: str) -> bool:
    return not CHECKING_MODULE_PARTS.isdisjoint(module.split("."))


#: module-path components of code that runs on the host: tests, metrics, plotting, datasets/data
#: pipelines, export (an unknown function there is host code; reached from a forward it is compiled)
HOST_MODULE_PARTS = frozenset({
    "test", "tests", "testing", "metrics", "metric", "meters", "meter", "visualization", "visualize", "visualizer", "viz",
    "plot", "plots", "plotting", "data", "datasets", "dataset", "dataio", "datamodules", "export", "exporters",
    "benchmarks", "benchmark", "scripts", "tools", "examples",
    # data loading and sampling, dataset transforms, checkpoint/weight loaders (dgl's dataloading/)
    "loader", "loaders", "sampler", "samplers", "transforms", "dataloading", "dataloader", "dataloaders",
    # inference pipelines and their schedulers, framework callbacks, inference APIs (OpenMMLab's apis/inferencers)
    "pipelines", "pipeline", "inference", "schedulers", "callbacks", "apis", "inferencer", "inferencers",
    # evaluation code: evaluators run a model over a dataset and score it (sentence-transformers'
    # evaluation/, OpenMMLab's evaluation/ metrics, open-flamingo's and litgpt's eval/)
    "evaluation", "evaluator", "evaluators", "eval",
    # decoding loops (whisper's decoding.py, gliner's decoding/; not beam_search.py: allennlp's T5 forward
    # runs its beam search), model-hub wrappers, data processors (gliner's data_processing/, fairseq's processors/)
    "decoding", "hub", "processors", "processor", "processing", "preprocessing",
    # profiling and benchmarking helpers (they time steps and summarise the timings afterwards), loggers
    # (they turn values into text or histograms for a logging backend)
    "profile", "profiler", "profilers", "profiling", "logger", "loggers",
})
#: module-path components that name transforms: data transforms, host code, unless the class is an invertible
#: transform of a normalizing flow (``FLOW_TRANSFORM_*`` below)
TRANSFORM_MODULE_PARTS = frozenset({"transforms", "transform"})
#: bases that make a class a bijection of a normalizing flow (zuko's, pyro's transforms): its ``_call``,
#: ``_inverse`` and ``log_abs_det_jacobian`` compute a model's log-likelihood, in the step
FLOW_TRANSFORM_BASE_PREFIXES = ("torch.distributions.", "pyro.distributions.")
FLOW_TRANSFORM_BASE_SUFFIXES = ("Transform", "TransformModule")
#: methods an ``nn.Module`` of a transforms module defines (itself or through a base) when it is such a
#: bijection (nflows' ``Tanh``, ``PiecewiseRationalQuadraticCDF``): data transforms have no inverse
FLOW_TRANSFORM_METHODS = ("inverse", "_inverse", "log_abs_det_jacobian")
#: module-path components of the data pipeline and of metrics: an ``nn.Module`` defined there (a transform:
#: torchvision v2's, pytorchvideo's, schnetpack's, nequip's; a metric module) runs in the loader or after the
#: step, not in the compiled step, unless a model's forward calls it
HOST_FORWARD_MODULE_PARTS = frozenset({"transforms", "transform", "data", "datasets", "dataset", "dataio",
                                        "datamodules", "loader", "loaders", "metrics", "metric"})
#: nn.Modules named as post-processing (a DETR's ``PostProcess``, kornia's ``DETRPostProcessor``): run on the
#: model's outputs after its forward, for inference; host code unless a model's forward calls them
POSTPROCESS_MODULE_SUFFIXES = ("PostProcess", "Postprocess", "PostProcessor", "Postprocessor")
#: words of a module's name (``export_utils``, ``modular_pipelines``, ``metric_stats``, ``tu_dataset``)
#: that say host code as well (not ``data``: ``data_parallel``)
HOST_MODULE_WORDS = frozenset({
    "profiler", "profilers", "profiling",  # ignite's handlers/time_profilers.py
    "logger", "loggers",  # ignite's handlers/tensorboard_logger.py
    "test", "tests", "testing", "metric", "metrics", "visualization", "visualize", "visualizer", "viz",
    "plot", "plots", "plotting", "dataset", "datasets", "export", "exporters", "benchmark", "benchmarks",
    "loader", "loaders", "sampler", "samplers", "transforms", "pipeline", "pipelines", "inference", "callbacks",
    "inferencer", "inferencers", "evaluation", "evaluator", "evaluators",
    "hub", "decoding", "processing", "processor", "processors", "preprocessing",
})
#: the plotting and evaluation ones among them: a plot made or an evaluation run from a training loop is made
#: at a few chosen steps, not as part of the step (a training loop reaching it does not make it training code:
#: sentence-transformers' evaluators, run every N steps)
PLOT_MODULE_PARTS = frozenset({
    "visualization", "visualize", "visualizer", "viz", "plot", "plots", "plotting",
    "evaluation", "evaluator", "evaluators", "eval",
})
#: path parts or words of modules holding command-line programs and inference pipelines: a class there
#: that is no nn.Module (``Text2Speech``, ``Speech2Text``) runs eagerly even when a module's forward calls it
#: (a serving wrapper); its methods are not compiled through that call
ENTRY_MODULE_WORDS = frozenset({"bin", "scripts", "tools", "inference", "pipeline", "pipelines"})
#: words that make a module path part with a host or entry word in it name a kind of model parallelism, not
#: an inference pipeline (megatron's ``pipeline_parallel`` package: its schedules and communicators run in the
#: training step)
PARALLELISM_WORDS = frozenset({"parallel", "parallelism"})
