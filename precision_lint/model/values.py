"""The abstract value the interpreter gives each expression."""
from __future__ import annotations

from dataclasses import MISSING, dataclass, field, fields
from enum import Enum
from typing import TYPE_CHECKING

from .dtypes import BOOL, FLOAT16, FLOAT64, INT64, RUNTIME_FLOAT, DType
from .promotion import Operand, Tier

if TYPE_CHECKING:  # only annotations: the project index reads values without libcst
    import libcst as cst


class Kind(Enum):
    UNKNOWN = "unknown"
    PY_INT = "int"
    PY_FLOAT = "float"
    PY_BOOL = "bool"
    TENSOR = "tensor"
    SHAPE = "shape"  # `x.shape` / `x.size()`: indexing it gives a count
    DTYPE = "dtype"  # a dtype object, e.g. `torch.float32` or `x.dtype`
    SELF = "self"  # the instance in a method
    NONE = "none"  # `None`: joined with a value, the value wins (`else: self.buf = None`)
    STR = "str"  # a string: `len()` of it counts characters, not samples
    TUPLE = "tuple"  # `elements`: one value per position
    LIST = "list"  # `elements`: one value that covers every item (empty: nothing yet)
    DICT = "dict"  # `items`: a value per string key
    INSTANCE = "instance"  # an object of class `cls` (a project class or a torch.nn layer)


@dataclass(eq=False)
class Creation:
    """Where a tensor (or a Python float that will become one) is made: an
    accumulator candidate. Identity is the node."""

    node: cst.CSTNode
    # dtype at creation; None for a Python float literal (it becomes the default
    # float dtype once a tensor is added to it) or when not known.
    dtype: DType | None
    # qualified name of the function or class where it is made
    scope: str = ""
    # why its dtype is the model's run-time one ("the dtype of `hidden_states`")
    dtype_source: str | None = None
    # made in the default dtype (no `dtype=`; a Python `0.0`): what
    # `torch.set_default_dtype` decides
    from_default: bool = False
    # registered as a buffer or metric state: a whole-model cast (`.half()`) casts it
    module_state: bool = False
    # one element (`torch.zeros(())`, `torch.zeros(1)`, `torch.tensor(0.0)`, `0.0`): a
    # counter, where `+= 1` counts steps (a map's `+= 1` counts overlaps)
    scalar: bool = False
    # made by a function of another module, which returns it (`seen = new_counter()`):
    # where that is, for a finding whose fix belongs there
    remote: str | None = None
    # holds counts made by adding float ones (a tally): `torch.histc`'s result, a
    # buffer that `scatter_add_` / `index_add_` of ones count into, or what keeps
    # those counts (`h1 + h2`, `h.tolist()`): PH006 follows a tally to where it goes
    tally: bool = False
    # the tallies a derived tally was made from (empty for one made by counting)
    parents: frozenset["Creation"] = frozenset()
    # id() of the loops around the place it is made (innermost last): a tensor made
    # outside a loop that counts into it inside the loop carries counts across
    # iterations
    loops: tuple[int, ...] = ()


@dataclass(frozen=True)
class Value:
    kind: Kind = Kind.UNKNOWN
    dtype: DType | None = None  # for TENSOR and DTYPE
    zero_dim: bool | None = None  # for TENSOR: True 0-dim, False has dims, None unknown
    count: bool = False  # integer-valued count (len, numel, mask.sum(), ...)
    mask: bool = False  # elementwise boolean (or 0/1 from one), if it is a tensor
    origins: frozenset[Creation] = field(default_factory=frozenset)
    positions: bool = False  # an index sequence (`torch.arange`), whatever its dtype
    # a module buffer (`register_buffer`), or the dtype of one: `model.to(torch.bfloat16)`
    # and `.half()` cast it, so code that follows its dtype follows the cast
    buffer: bool = False
    # id() of the call where integer counts became a float tensor (`mask.float().sum()`,
    # `count.half()`, `torch.cat([loss, count])`); 0 when they did not
    float_count: int = 0
    # the count is a length: `len(x)` or one dimension (`x.shape[0]`, `x.size(1)`), or a
    # sum of lengths. It grows by a batch size per step, not by a tensor's element count,
    # so in float32 it needs 16.7M samples (or words) before it rounds.
    length: bool = False
    # one element per sample: `x.reshape(n, -1).sum(-1)` with `n` a length. Counting
    # a mask of it counts samples, so that count is a length.
    per_row: bool = False
    # one row per element (`x.nonzero()`, `x.flatten()`, `x.view(-1)`, `x[mask]`), or
    # the shape of such a tensor: its length counts elements, not samples
    flat: bool = False
    # TUPLE/LIST elements, DICT items (key, value), INSTANCE class
    elements: tuple["Value", ...] = ()
    items: tuple[tuple[str, "Value"], ...] = ()
    cls: str | None = None
    # where the value came from when that was another function or module, for
    # messages: "`count_helpers.nonpad()` (count_helpers.py:9)"
    via: str | None = None
    # why a RUNTIME_FLOAT dtype is the model's: "the dtype of `hidden_states`"
    dtype_source: str | None = None
    # TENSOR: at most this many elements, when literals say so (`torch.arange(100.0)`,
    # `torch.ones(3)`) or the code does (a tensor compared in an `if` test has one)
    size: int | None = None
    # PY_INT / PY_FLOAT: the number, when literals give it (`n = 9`, `n + 1`)
    number: int | float | None = None

    # -- construction helpers -------------------------------------------------
    @staticmethod
    def tensor(
        dtype: DType | None,
        zero_dim: bool | None = None,
        *,
        count: bool = False,
        mask: bool = False,
        origins: frozenset[Creation] = frozenset(),
        positions: bool = False,
        flat: bool = False,
        length: bool = False,
        per_row: bool = False,
    ) -> "Value":
        return Value(
            Kind.TENSOR, dtype, zero_dim, count, mask, origins, positions,
            length=length, per_row=per_row, flat=flat,
        )  # fmt: skip

    @staticmethod
    def py_int(count: bool = False, length: bool = False, number: int | None = None) -> "Value":
        return Value(Kind.PY_INT, count=count, length=count and length, number=number)

    @staticmethod
    def mask_value(known_tensor: bool) -> "Value":
        if known_tensor:
            return Value.tensor(BOOL, mask=True)
        return Value(Kind.UNKNOWN, mask=True)

    @staticmethod
    def tuple_of(elements) -> "Value":
        elements = tuple(elements)
        return Value(Kind.TUPLE, elements=elements, origins=_all_origins(elements))

    @staticmethod
    def list_of(element: "Value | None") -> "Value":
        """A list whose items are all covered by `element` (None: an empty list)."""
        elements = () if element is None else (element,)
        return Value(Kind.LIST, elements=elements, origins=_all_origins(elements))

    @staticmethod
    def dict_of(items) -> "Value":
        items = tuple(items)
        return Value(Kind.DICT, items=items, origins=_all_origins(value for _, value in items))

    @property
    def element(self) -> "Value":
        """What one item of a LIST (or any position of a TUPLE) holds."""
        if not self.elements:
            return UNKNOWN
        covered = self.elements[0]
        for other in self.elements[1:]:
            covered = join(covered, other)
        return covered

    def item(self, key: str) -> "Value | None":
        return next((value for name, value in self.items if name == key), None)

    def with_origins(self, origins: frozenset[Creation]) -> "Value":
        return _changed(self, origins=origins)

    def with_source(self, dtype_source: str | None) -> "Value":
        return _changed(self, dtype_source=dtype_source) if dtype_source != self.dtype_source else self

    def with_float_count(self, site: int) -> "Value":
        return _changed(self, float_count=site) if site != self.float_count else self

    def without_origins(self) -> "Value":
        return _changed(self, origins=frozenset()) if self.origins else self

    # -- questions ------------------------------------------------------------
    @property
    def is_tensor(self) -> bool:
        return self.kind is Kind.TENSOR

    @property
    def elements_bound(self) -> int | None:
        """At most how many elements the tensor has, when known (a 0-dim one has one)."""
        if self.zero_dim is True:
            return 1
        return self.size

    @property
    def tallies(self) -> frozenset[Creation]:
        """The tallies (float counts) this value is or holds."""
        return frozenset(c for c in self.origins if c.tally)

    @property
    def is_container(self) -> bool:
        return self.kind in (Kind.TUPLE, Kind.LIST, Kind.DICT)

    @property
    def passes_facts(self) -> bool:
        """Whether, given to a parameter, it can change what the rules find there: a
        count, a mask, counts made float, positions, an accumulator, a dtype (or a
        container of one). Narrower than `informative`: a module is interpreted a
        second time only for these."""
        if self.count or self.mask or self.float_count or self.positions or self.origins:
            return True
        if self.kind is Kind.DTYPE:
            return self.dtype is not None
        if self.is_container:
            return any(v.passes_facts for v in self.elements) or any(v.passes_facts for _, v in self.items)
        return False

    @property
    def informative(self) -> bool:
        """Whether it says more than UNKNOWN about what matters to the rules: worth
        passing into another function's parameters or across modules."""
        if self.count or self.mask or self.float_count or self.positions or self.origins or self.buffer:
            return True
        if self.kind is Kind.TENSOR:
            return self.dtype is not None
        if self.kind in (Kind.INSTANCE, Kind.DTYPE):
            return self.kind is Kind.INSTANCE or self.dtype is not None
        if self.is_container:
            return any(v.informative for v in self.elements) or any(v.informative for _, v in self.items)
        return False

    @property
    def is_floating(self) -> bool:
        """Known to hold floating values (a float tensor or a Python float)."""
        if self.kind is Kind.PY_FLOAT:
            return True
        return self.kind is Kind.TENSOR and self.dtype is not None and self.dtype.is_floating

    @property
    def is_integral(self) -> bool:
        """Known to hold whole numbers: a count, a Python int, an integer or bool tensor."""
        if self.count or self.kind in (Kind.PY_INT, Kind.PY_BOOL):
            return True
        return self.kind is Kind.TENSOR and self.dtype is not None and not self.dtype.is_floating

    def operand(self) -> Operand | None:
        """This value as a promotion operand, if its dtype is known."""
        if self.kind is Kind.PY_INT:
            return Operand(INT64, Tier.SCALAR)
        if self.kind is Kind.PY_FLOAT:
            return Operand(FLOAT64, Tier.SCALAR)
        if self.kind is Kind.PY_BOOL:
            return Operand(BOOL, Tier.SCALAR)
        if self.kind is Kind.TENSOR and self.dtype is not None:
            tier = None
            if self.zero_dim is True:
                tier = Tier.ZERO_DIM
            elif self.zero_dim is False:
                tier = Tier.DIMENSIONED
            return Operand(self.dtype, tier)
        return None


def _direct_init(cls: type) -> None:
    """Give a frozen dataclass an `__init__` that fills the instance's `__dict__` at
    once: the generated one sets each field through `object.__setattr__`, and Value has
    21 of them. The model makes ~90,000 Values on torchmetrics, where this halves their
    cost. Same fields, same defaults; equality, hashing and `replace` are the
    dataclass's own."""
    namespace: dict[str, object] = {}
    parameters = []
    for item in fields(cls):
        default = item.default if item.default is not MISSING else item.default_factory()  # type: ignore[misc]
        namespace[f"_default_{item.name}"] = default  # an immutable default: shared
        parameters.append(f"{item.name}=_default_{item.name}")
    names = ", ".join(f"{item.name!r}: {item.name}" for item in fields(cls))
    exec(f"def __init__(self, {', '.join(parameters)}):\n    self.__dict__.update({{{names}}})\n", namespace)
    cls.__init__ = namespace["__init__"]  # type: ignore[misc]


_direct_init(Value)
UNKNOWN = Value()


def _changed(value: Value, **changes) -> Value:
    """`dataclasses.replace` for a Value without its per-field checks: the model makes
    one at nearly every join and every new origin."""
    new = object.__new__(Value)
    new.__dict__.update(value.__dict__, **changes)
    return new

# `float_count` of a value whose counts became float in another module: the call
# that did it is not a node of this one
FLOAT_COUNT_ELSEWHERE = -1


@dataclass(frozen=True)
class CallFact:
    """A call the interpreter saw: `torch.histc(...)` (qualified) or `buf.scatter_add_(...)`
    (method on a value). Argument and receiver values are in the model's `values`."""

    node: cst.Call
    qualified: str | None
    method: str | None


def _all_origins(values) -> frozenset[Creation]:
    origins: frozenset[Creation] = frozenset()
    for value in values:
        origins |= value.origins
    return origins


def join(a: Value, b: Value) -> Value:
    """The value that covers both branches of a control-flow merge."""
    if a is b or a == b:
        return a
    if a.kind is Kind.NONE or b.kind is Kind.NONE:
        # `self.buf = None` on one path: where the value is used, it is the other one
        kept, other = (b, a) if a.kind is Kind.NONE else (a, b)
        return _changed(kept, origins=kept.origins | other.origins)
    origins = a.origins | b.origins
    if a.kind is b.kind and a.kind in (Kind.TUPLE, Kind.LIST, Kind.DICT, Kind.INSTANCE):
        return _join_containers(a, b, origins)
    if a.kind is b.kind and a.kind in (Kind.TENSOR, Kind.DTYPE) and a.dtype != b.dtype and _both_floating(a, b):
        # `torch.bfloat16 if cfg.bf16 else torch.float16`: a width chosen at run time
        dtype = _run_time_width(a.dtype, b.dtype)
        return _changed(join(_changed(a, dtype=dtype), _changed(b, dtype=dtype)), dtype_source=a.dtype_source or b.dtype_source)
    if a.kind is b.kind and a.dtype == b.dtype:
        # a Python int that is a count on one path and a literal on another (`n = 0`
        # before the loop that adds counts to it) holds counts
        count = (a.count or b.count) if a.kind is Kind.PY_INT else (a.count and b.count)
        return Value(
            a.kind,
            a.dtype,
            a.zero_dim if a.zero_dim == b.zero_dim else None,
            count,
            a.mask and b.mask,
            origins,
            a.positions and b.positions,
            a.buffer or b.buffer,
            a.float_count or b.float_count,
            (a.length or not a.count) and (b.length or not b.count) and count,
            a.per_row and b.per_row,
            a.flat or b.flat,
            via=a.via or b.via,
            dtype_source=a.dtype_source or b.dtype_source,
            size=max(a.size, b.size) if a.size is not None and b.size is not None else None,
            number=a.number if a.number == b.number else None,
        )
    # a count is a count whether it is a Python int or a tensor (`n` from `len()` on
    # one path, `mask.sum()` on another)
    return Value(
        count=a.count and b.count, mask=a.mask and b.mask, origins=origins, buffer=a.buffer or b.buffer,
        float_count=a.float_count or b.float_count, length=a.length and b.length, flat=a.flat or b.flat,
    )  # fmt: skip


def _both_floating(a: Value, b: Value) -> bool:
    return a.dtype is not None and b.dtype is not None and a.dtype.is_floating and b.dtype.is_floating


def _run_time_width(a: DType, b: DType) -> DType:
    """One of two float dtypes, decided at run time: of two half types or of
    float32 and float64, the narrower (what a count must survive); of a half type and
    a full one, the model's run-time dtype."""
    half = [d.exact_integer_limit <= FLOAT16.exact_integer_limit for d in (a, b)]
    if all(half) or not any(half):  # both half, or both float32/float64: the narrower
        return min(a, b, key=lambda d: d.exact_integer_limit)
    return RUNTIME_FLOAT


def _join_containers(a: Value, b: Value, origins: frozenset[Creation]) -> Value:
    if a.kind is Kind.INSTANCE:
        return a if a.cls == b.cls else Value(origins=origins)
    if a.kind is Kind.LIST:
        if not a.elements or not b.elements:
            return _changed(a if a.elements else b, origins=origins)
        return _changed(Value.list_of(join(a.element, b.element)), origins=origins)
    if a.kind is Kind.TUPLE:
        if len(a.elements) != len(b.elements):
            return Value(origins=origins)
        return _changed(Value.tuple_of(join(x, y) for x, y in zip(a.elements, b.elements)), origins=origins)
    keys = dict.fromkeys([k for k, _ in a.items] + [k for k, _ in b.items])
    items = []
    for key in keys:
        left, right = a.item(key), b.item(key)
        items.append((key, join(left, right) if left is not None and right is not None else (left or right)))
    return _changed(Value.dict_of(items), origins=origins)
