"""What the model knows about torch's API, kept as data.

Each table answers one question the interpreter asks; nothing here runs torch.
"""
from __future__ import annotations

# NumPy: arrays behave as tensors do for these rules (NumPy 2 keeps an int32 total
# int32 when a Python int is added, as torch does, and it wraps). A scalar
# constructor (`np.int32(0)`) makes a 0-dim value; factories take `dtype=`.
NUMPY_FACTORIES = frozenset({"numpy.zeros", "numpy.ones", "numpy.empty", "numpy.full", "numpy.array", "numpy.asarray"})

# Factories whose dtype comes from `dtype=` or, without it, the default dtype
# (`torch.tensor`/`torch.full` infer it from the data instead).
FACTORY_FUNCTIONS = frozenset(
    {"torch.zeros", "torch.ones", "torch.empty", "torch.full", "torch.tensor", "torch.as_tensor"}
)
# Factories whose dtype comes from the data when `dtype=` is absent.
DATA_FACTORIES = frozenset({"torch.tensor", "torch.as_tensor", "torch.full"})
# `torch.zeros_like(x)`: x's dtype unless `dtype=` says otherwise.
LIKE_FACTORIES = frozenset(
    {"torch.zeros_like", "torch.ones_like", "torch.empty_like", "torch.full_like"}
)
# `x.new_zeros(...)`: x's dtype unless `dtype=` says otherwise.
NEW_METHODS = frozenset({"new_zeros", "new_ones", "new_empty", "new_full"})
# Tensors of ones: what counting with weights starts from (`ones_like(v).sum()`)
ONES = frozenset({"torch.ones", "torch.ones_like", "new_ones"})
# 0/1 indicator tensors in int64 (`F.one_hot(expert_idx, n)`): counted by a sum
INDICATOR_FUNCTIONS = frozenset({"torch.nn.functional.one_hot"})
# Running sums: of a mask they are running counts (`attention_mask.cumsum(-1)`)
CUMULATIVE_METHODS = frozenset({"cumsum", "cumsum_"})
CUMULATIVE_FUNCTIONS = frozenset({"torch.cumsum"})
# Modules whose `<Type>Tensor` attributes are legacy typed constructors.
LEGACY_CONSTRUCTOR_MODULES = frozenset({"torch", "torch.cuda"})

# Elementwise predicates: their result is a boolean mask.
MASK_FUNCTIONS = frozenset(
    {
        "torch.eq", "torch.ne", "torch.gt", "torch.ge", "torch.lt", "torch.le",
        "torch.greater", "torch.greater_equal", "torch.less", "torch.less_equal",
        "torch.not_equal", "torch.isfinite", "torch.isnan", "torch.isinf",
        "torch.isposinf", "torch.isneginf", "torch.isclose", "torch.isin",
        "torch.logical_and", "torch.logical_or", "torch.logical_not", "torch.logical_xor",
        "torch.signbit", "torch.isreal",
    }
)  # fmt: skip
MASK_METHODS = frozenset(
    {
        "eq", "ne", "gt", "ge", "lt", "le", "greater", "greater_equal", "less",
        "less_equal", "not_equal", "isfinite", "isnan", "isinf", "isposinf", "isneginf",
        "isclose", "isin", "logical_and", "logical_or", "logical_not", "logical_xor",
        "signbit", "bool",
    }
)  # fmt: skip

# Calls that return an int64 tensor of counts.
COUNT_FUNCTIONS = frozenset({"torch.count_nonzero", "torch.bincount", "numpy.bincount", "numpy.count_nonzero"})
COUNT_METHODS = frozenset({"count_nonzero", "bincount"})
# Methods that return a Python int count.
PY_COUNT_METHODS = frozenset({"numel", "nelement"})
SUM_FUNCTIONS = frozenset({"torch.sum", "torch.nansum"})
SUM_METHODS = frozenset({"sum", "nansum"})

# Methods that give back the same values (another device, view or copy): an
# accumulator seen through them is still the accumulator.
ALIAS_METHODS = frozenset(
    {
        "cuda", "cpu", "detach", "clone", "contiguous", "view", "reshape", "flatten",
        "squeeze", "unsqueeze", "expand", "view_as", "reshape_as", "requires_grad_",
        "pin_memory", "detach_", "squeeze_", "unsqueeze_",
    }
)  # fmt: skip
# The aliases that keep the shape too: a per-sample tensor stays one through them.
SAME_SHAPE_METHODS = frozenset({"cuda", "cpu", "detach", "clone", "contiguous", "requires_grad_", "pin_memory", "detach_"})
ALIAS_ATTRIBUTES = frozenset({"data"})

# Uses of an accumulator that read it and stay valid and exact on int64.
READING_METHODS = frozenset(
    {
        "item", "tolist", "numpy", "sum", "nansum", "max", "min", "amax", "amin",
        "argmax", "argmin", "numel", "size", "dim", "nelement", "any", "all", "nonzero",
        "count_nonzero", "abs", "clamp", "clip", "element_size", "is_floating_point",
        "float", "double", "half", "bfloat16", "long", "int", "short", "bool", "type_as",
        "eq", "ne", "gt", "ge", "lt", "le", "isnan", "isfinite", "isinf", "tolist",
        "__format__", "__str__", "__repr__", "div", "true_divide", "floor_divide",
        "cumsum", "add", "sub", "to", "zero_", "equal", "allclose", "unbind", "split",
        "chunk", "diag", "diagonal", "t", "transpose", "permute", "index_select", "gather",
        "topk", "sort", "argsort", "masked_select", "masked_fill", "where", "tril", "triu",
        "trace", "prod", "cumprod", "flip", "roll", "repeat", "narrow", "select", "unique",
        "numpy", "get_device", "is_nonzero", "clamp_min", "clamp_max", "bincount",
    }
)  # fmt: skip
# Methods whose result has the receiver's dtype (another part, order or bound of its
# values), and that the model does not follow otherwise.
DTYPE_KEEPING_METHODS = frozenset(
    {
        "gather", "index_select", "narrow", "select", "t", "transpose", "permute", "flip",
        "roll", "repeat", "tril", "triu", "diag", "diagonal", "masked_fill", "clamp", "clip",
        "clamp_min", "clamp_max", "abs", "neg", "expand_as", "repeat_interleave", "movedim",
    }
)  # fmt: skip
# Read-only attributes of a tensor.
READING_ATTRIBUTES = frozenset({"device", "dtype", "shape", "is_cuda", "ndim", "T"})
# Uses that raise or silently change results on an int64 tensor.
BREAKING_METHODS = frozenset(
    {
        "mean", "std", "var", "norm", "div_", "true_divide_", "sqrt_", "exp_", "log_",
        "pow_", "reciprocal_", "sigmoid_", "tanh_", "softmax", "log_softmax", "nanmean",
        "lerp_", "addcdiv_", "addcmul_", "std_mean", "var_mean",
    }
)  # fmt: skip
# In-place ops whose argument decides whether int64 still works.
INPLACE_ADD_METHODS = frozenset({"add_", "sub_"})
INPLACE_SCALE_METHODS = frozenset({"mul_", "multiply_"})
FILL_METHODS = frozenset({"fill_"})

# Collectives that sum (or gather) a tensor across ranks: qualified name -> (keyword,
# position) of the tensor. torch.distributed, its functional and autograd forms,
# DeepSpeed's comm module (a drop-in for torch.distributed) and the helpers of
# accelerate, Lightning and torchmetrics.
COLLECTIVES = {
    "torch.distributed.all_reduce": ("tensor", 0),
    "torch.distributed.reduce": ("tensor", 0),
    "torch.distributed.all_reduce_coalesced": ("tensors", 0),
    "torch.distributed.all_gather": ("tensor", 1),
    "torch.distributed.all_gather_into_tensor": ("input_tensor", 1),
    "torch.distributed.reduce_scatter": ("input_list", 1),
    "torch.distributed.reduce_scatter_tensor": ("input", 1),
    "torch.distributed.nn.all_reduce": ("tensor", 0),
    "torch.distributed.nn.functional.all_reduce": ("tensor", 0),
    "torch.distributed._functional_collectives.all_reduce": ("self", 0),
    "torch.distributed._functional_collectives.all_gather_tensor": ("self", 0),
    "torch.distributed._functional_collectives.reduce_scatter_tensor": ("self", 0),
    "deepspeed.comm.all_reduce": ("tensor", 0),
    "deepspeed.comm.inference_all_reduce": ("tensor", 0),
    "deepspeed.comm.reduce": ("tensor", 0),
    "deepspeed.comm.all_gather": ("tensor", 1),
    "deepspeed.comm.all_gather_into_tensor": ("input_tensor", 1),
    "deepspeed.comm.reduce_scatter_tensor": ("input", 1),
    "accelerate.utils.reduce": ("tensor", 0),
    "accelerate.utils.gather": ("tensor", 0),
    "torchmetrics.utilities.distributed.gather_all_tensors": ("result", 0),
}
# The collectives that add up across ranks (gathers only collect)
SUMMING_COLLECTIVES = frozenset(
    name for name in COLLECTIVES if name.rpartition(".")[2] in ("all_reduce", "reduce", "all_reduce_coalesced", "reduce_scatter", "reduce_scatter_tensor", "inference_all_reduce")
)
# The same as methods of a framework object whose type we cannot see, for the ones
# that sum: `accelerator.reduce(t, "sum")`, `trainer.strategy.reduce(t)`,
# `fabric.all_reduce(t)` (a gather only concatenates).
COLLECTIVE_METHODS = frozenset({"reduce", "all_reduce"})

# torch.distributed collectives.
REDUCING_COLLECTIVES = frozenset(
    {"torch.distributed.all_reduce", "torch.distributed.reduce", "torch.distributed.all_reduce_coalesced"}
)
SAFE_COLLECTIVES = frozenset({"torch.distributed.broadcast"})
# ReduceOp members that are exact on int64; AVG raises on int64 with gloo.
EXACT_REDUCE_OPS = frozenset({"SUM", "MAX", "MIN", "PRODUCT", "BAND", "BOR", "BXOR"})
BREAKING_REDUCE_OPS = frozenset({"AVG"})

# Builtins that only read their argument.
READING_BUILTINS = frozenset(
    {
        "builtins.print", "builtins.int", "builtins.float", "builtins.bool", "builtins.str",
        "builtins.repr", "builtins.format", "builtins.abs", "builtins.round",
        "builtins.isinstance", "builtins.min", "builtins.max", "builtins.len", "builtins.id",
        "builtins.type", "builtins.hasattr", "builtins.getattr",
    }
)  # fmt: skip
# Functions of torch that read a tensor and give a new one (valid on int64).
READING_TORCH_FUNCTIONS = frozenset(
    {
        "torch.isnan", "torch.isfinite", "torch.isinf", "torch.eq", "torch.ne", "torch.gt",
        "torch.ge", "torch.lt", "torch.le", "torch.equal", "torch.div", "torch.true_divide",
        "torch.floor_divide", "torch.clamp", "torch.abs", "torch.max", "torch.min",
        "torch.sum", "torch.is_tensor", "torch.numel", "torch.allclose", "torch.isclose",
    }
)  # fmt: skip
BREAKING_TORCH_FUNCTIONS = frozenset({"torch.mean", "torch.std", "torch.var", "torch.norm"})
# Logging calls: `logger.info(...)` and friends read their arguments.
LOGGING_METHODS = frozenset({"debug", "info", "warning", "warn", "error", "critical", "exception"})

# Module state registration: `self.register_buffer(name, tensor)` and torchmetrics'
# `self.add_state(name, default=tensor, dist_reduce_fx=...)`.
REGISTER_BUFFER = "register_buffer"
ADD_STATE = "add_state"

# -- the dtype the model runs in ---------------------------------------------------
# Names of data whose dtype is the model's (bfloat16/float16/float32 as the run
# decides): asked for its dtype (`hidden_states.dtype`, `type_as(logits)`,
# `x.new_ones(n)`), such a value gives RUNTIME_FLOAT. Matched on the parts of a
# snake_case name; a name with an integer part (`token_ids`, `mask`) is not data.
FLOATING_DATA_WORDS = frozenset(
    {
        "hidden", "hiddens", "logit", "logits", "feature", "features", "feat",
        "feats", "embed", "embeds", "embedding", "embeddings", "emb", "score", "scores",
        "prob", "probs", "probabilities", "activation", "activations", "act", "query",
        "queries", "q", "k", "v", "weight", "param", "params", "parameter",
        "latent", "latents", "pixel", "pixels", "image", "images", "img", "audio",
        "waveform", "mel", "gate", "gates", "router", "expert", "experts", "attn", "loss",
        "losses", "norm", "freq", "freqs", "frequency", "frequencies", "scale",
    }
)  # fmt: skip
# In a method of an nn.Module, its input: `forward(self, x)` is the layer's activations.
MODULE_INPUT_WORDS = frozenset({"x", "h", "input", "inputs"})
INTEGER_DATA_WORDS = frozenset(
    {
        "id", "ids", "idx", "index", "indices", "mask", "masks", "label", "labels",
        "target", "targets", "length", "lengths", "len", "lens", "count", "counts",
        "pos", "position", "positions", "token", "tokens", "step", "steps", "num",
        "offset", "offsets", "seq", "rank", "ranks", "bool", "int", "long",
    }
)  # fmt: skip
# Calls whose result is floating data in the input's dtype: of the model's data, it
# is the model's data too.
FLOAT_OUTPUT_FUNCTIONS = frozenset(
    {
        "torch.softmax", "torch.log_softmax", "torch.sigmoid", "torch.tanh", "torch.exp",
        "torch.nn.functional.softmax", "torch.nn.functional.log_softmax",
        "torch.nn.functional.linear", "torch.nn.functional.gelu", "torch.nn.functional.silu",
        "torch.nn.functional.layer_norm", "torch.nn.functional.normalize",
        "torch.nn.functional.sigmoid", "torch.nn.functional.dropout",
    }
)  # fmt: skip
# math: every function gives a float but these, which give ints
MATH_INT_FUNCTIONS = frozenset({"floor", "ceil", "trunc", "comb", "perm", "factorial", "gcd", "lcm", "isqrt", "prod"})
FLOAT_OUTPUT_METHODS = frozenset({"softmax", "log_softmax", "sigmoid", "tanh", "exp", "rsqrt", "sqrt"})
# torch.nn layers: an instance called on data gives floating data in the model's
# dtype, and its `.weight` is a parameter.
NN_LAYER_MODULES = ("torch.nn.",)
NN_PARAMETER = frozenset({"torch.nn.Parameter", "torch.nn.parameter.Parameter"})

# Receivers of `.half()` / `.bfloat16()` / `.to(dtype)` that are whole models, by name.
MODULE_WORDS = (
    "model", "module", "net", "encoder", "decoder", "backbone", "transformer", "policy",
    "actor", "critic", "teacher", "student", "ema", "layer", "block", "head", "unet", "vae",
)  # fmt: skip

# -- autocast ---------------------------------------------------------------------
# Context managers that run matmul-like ops in bfloat16/float16.
AUTOCAST_CONTEXTS = frozenset(
    {"torch.autocast", "torch.amp.autocast", "torch.cuda.amp.autocast", "torch.cpu.amp.autocast"}
)
# Ops autocast casts to the low dtype (checked on CPU, torch 2.13): an einsum only
# when it contracts an index (it then runs a bmm); elementwise products and
# `torch.outer` stay float32.
AUTOCAST_FUNCTIONS = frozenset(
    {
        "torch.matmul", "torch.mm", "torch.bmm", "torch.mv", "torch.addmm", "torch.baddbmm",
        "torch.nn.functional.linear", "torch.einsum",
    }
)  # fmt: skip
AUTOCAST_METHODS = frozenset({"matmul", "mm", "bmm", "mv"})

# -- counting with float ones (PH006) ----------------------------------------------
# Methods that add a source into the receiver at indices: method -> (keyword,
# position) of the source. `index_put_` adds only with `accumulate=True`.
SCATTER_ADD_METHODS = {"scatter_add_": ("src", 2), "index_add_": ("source", 2), "index_put_": ("values", 1)}
# Methods whose result still holds the counts of a float histogram: the same counts
# in another form, a part of them, or them bounded (`clamp`); not a reduction.
# (Conversions to float64 or an integer dtype are not here: the counts are exact there.)
TALLY_KEEPING_METHODS = frozenset(
    {
        "item", "tolist", "numpy", "float", "half", "bfloat16", "to", "type", "type_as",
        "add", "sub", "index_select", "gather", "masked_select", "repeat", "flip", "roll",
        "narrow", "select", "t", "transpose", "permute", "clamp", "clip", "clamp_min",
        "clamp_max", "masked_fill", "where", "cumsum", "unbind", "split", "chunk", "diag",
        "diagonal", "tril", "triu",
    }
)  # fmt: skip
# In-place writes of an argument's values into the receiver.
COPY_METHODS = frozenset({"copy_", "set_"})
