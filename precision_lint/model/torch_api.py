"""What the model knows about torch's API, kept as data.

Each table answers one question the interpreter asks; nothing here runs torch.
"""
from __future__ import annotations

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
COUNT_FUNCTIONS = frozenset({"torch.count_nonzero", "torch.bincount"})
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
