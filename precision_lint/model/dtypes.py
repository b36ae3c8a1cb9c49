"""The dtypes the model reasons about, and how source code spells them.

Kept as data: one table of dtypes, one table of spellings. Nothing here imports torch.
"""
from __future__ import annotations

from dataclasses import dataclass
from enum import Enum


class Category(Enum):
    BOOL = 0
    INTEGER = 1
    FLOATING = 2


@dataclass(frozen=True)
class DType:
    name: str  # torch's name, e.g. "float32"
    category: Category
    bits: int
    # Largest N such that every integer 0..N is exactly representable.
    exact_integer_limit: int
    exact_integer_limit_text: str

    @property
    def is_floating(self) -> bool:
        return self.category is Category.FLOATING

    @property
    def is_integer(self) -> bool:
        return self.category is Category.INTEGER

    @property
    def label(self) -> str:
        """How messages name it: torch's name, or what the run-time dtype is."""
        return "the model's floating dtype" if self is RUNTIME_FLOAT else self.name

    def __repr__(self) -> str:
        return f"torch.{self.name}"


BOOL = DType("bool", Category.BOOL, 8, 1, "1")
UINT8 = DType("uint8", Category.INTEGER, 8, 2**8 - 1, "255")
INT8 = DType("int8", Category.INTEGER, 8, 2**7 - 1, "127")
INT16 = DType("int16", Category.INTEGER, 16, 2**15 - 1, "2^15-1")
INT32 = DType("int32", Category.INTEGER, 32, 2**31 - 1, "2^31-1")
INT64 = DType("int64", Category.INTEGER, 64, 2**63 - 1, "2^63-1")
FLOAT16 = DType("float16", Category.FLOATING, 16, 2**11, "2^11 = 2,048")
BFLOAT16 = DType("bfloat16", Category.FLOATING, 16, 2**8, "2^8 = 256")
FLOAT32 = DType("float32", Category.FLOATING, 32, 2**24, "2^24 = 16,777,216")
FLOAT64 = DType("float64", Category.FLOATING, 64, 2**53, "2^53")
# Floating, with the width chosen at run time: the dtype of the data, parameters,
# buffers and metric states of a model, which `model.bfloat16()`, Float16Module,
# FSDP/DeepSpeed mixed precision or `torch_dtype=` decide. Neither float32 nor
# unknown: its exact range is judged by the narrowest width it commonly takes.
RUNTIME_FLOAT = DType(
    "floating", Category.FLOATING, 0, 2**8, "2^8 = 256 under bfloat16 (2^11 = 2,048 under float16)"
)

ALL_DTYPES = (BOOL, UINT8, INT8, INT16, INT32, INT64, FLOAT16, BFLOAT16, FLOAT32, FLOAT64)

# torch's default floating dtype (torch.get_default_dtype()); a Python float
# promoted against an integer tensor becomes this.
DEFAULT_FLOAT = FLOAT32

# Attribute names of the `torch` module that denote a dtype.
TORCH_DTYPE_ATTRIBUTES: dict[str, DType] = {
    "bool": BOOL,
    "uint8": UINT8,
    "int8": INT8,
    "int16": INT16,
    "short": INT16,
    "int32": INT32,
    "int": INT32,  # torch.int is int32, never int64
    "int64": INT64,
    "long": INT64,
    "float16": FLOAT16,
    "half": FLOAT16,
    "bfloat16": BFLOAT16,
    "float32": FLOAT32,
    "float": FLOAT32,
    "float64": FLOAT64,
    "double": FLOAT64,
}

# Python builtins accepted as `dtype=`: `float` means float64, `int` int64.
BUILTIN_DTYPES: dict[str, DType] = {"float": FLOAT64, "int": INT64, "bool": BOOL}

# Tensor methods that convert to a fixed dtype: `x.float()`, `x.long()`, ...
CONVERSION_METHODS: dict[str, DType] = {
    "bool": BOOL,
    "byte": UINT8,
    "char": INT8,
    "short": INT16,
    "int": INT32,
    "long": INT64,
    "half": FLOAT16,
    "bfloat16": BFLOAT16,
    "float": FLOAT32,
    "double": FLOAT64,
}

# Legacy typed constructors: `torch.FloatTensor(...)`, `torch.cuda.HalfTensor(...)`.
LEGACY_TENSOR_TYPES: dict[str, DType] = {
    "Tensor": FLOAT32,
    "FloatTensor": FLOAT32,
    "DoubleTensor": FLOAT64,
    "HalfTensor": FLOAT16,
    "BFloat16Tensor": BFLOAT16,
    "ByteTensor": UINT8,
    "CharTensor": INT8,
    "ShortTensor": INT16,
    "IntTensor": INT32,
    "LongTensor": INT64,
    "BoolTensor": BOOL,
}


# NumPy's dtype names (`np.int32`, `np.float16`) and the strings it takes ("int32").
NUMPY_DTYPES: dict[str, DType] = {
    "bool_": BOOL, "uint8": UINT8, "int8": INT8, "int16": INT16, "int32": INT32, "intc": INT32,
    "int64": INT64, "int_": INT64, "float16": FLOAT16, "half": FLOAT16, "float32": FLOAT32,
    "single": FLOAT32, "float64": FLOAT64, "double": FLOAT64,
}  # fmt: skip


def holds_counts_exactly(dtype: DType | None) -> bool:
    """Whether a tally kept in `dtype` stays exact from there on: float64 (exact to
    2^53, beyond any count a run makes) or an integer or bool dtype."""
    return dtype is not None and (dtype is FLOAT64 or not dtype.is_floating)


def dtype_from_qualified_name(qualified_name: str | None) -> DType | None:
    """`torch.float32` -> FLOAT32, `builtins.float` -> FLOAT64, `numpy.int32` ->
    INT32, otherwise None."""
    if qualified_name is None:
        return None
    if qualified_name.startswith("torch."):
        return TORCH_DTYPE_ATTRIBUTES.get(qualified_name[len("torch.") :])
    if qualified_name.startswith("numpy."):
        return NUMPY_DTYPES.get(qualified_name[len("numpy.") :])
    if qualified_name.startswith("builtins."):
        return BUILTIN_DTYPES.get(qualified_name[len("builtins.") :])
    return None
