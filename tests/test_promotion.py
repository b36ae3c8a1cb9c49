"""The promotion table and the model's inferred dtypes agree with real torch."""
import itertools

import libcst as cst
import pytest

torch = pytest.importorskip("torch", reason="the promotion check compares against real torch (test extra)")

from precision_lint.model.dtypes import ALL_DTYPES, FLOAT32, INT64, DType  # noqa: E402
from precision_lint.model.promotion import Operand, Tier, promote_types, result_type  # noqa: E402
from precision_lint.model.semantic import build_model  # noqa: E402

SCALARS = {"int": 3, "float": 1.5, "bool": True}
SCALAR_DTYPES = {"int": INT64, "float": FLOAT32, "bool": ALL_DTYPES[0]}


def _torch_dtype(dtype: DType):
    return getattr(torch, dtype.name)


def _tensor(dtype: DType, tier: Tier):
    shape = (2,) if tier is Tier.DIMENSIONED else ()
    return torch.ones(shape, dtype=_torch_dtype(dtype))


@pytest.mark.parametrize("a, b", list(itertools.product(ALL_DTYPES, repeat=2)), ids=repr)
def test_promote_types_matches_torch(a, b):
    assert _torch_dtype(promote_types(a, b)) == torch.promote_types(_torch_dtype(a), _torch_dtype(b))


def _tensor_operand_pairs():
    tiers = (Tier.DIMENSIONED, Tier.ZERO_DIM)
    for a, b in itertools.product(ALL_DTYPES, repeat=2):
        for tier_a, tier_b in itertools.product(tiers, repeat=2):
            yield a, tier_a, b, tier_b


def test_result_type_matches_torch_for_every_tensor_pair():
    checked = 0
    for a, tier_a, b, tier_b in _tensor_operand_pairs():
        expected = torch.result_type(_tensor(a, tier_a), _tensor(b, tier_b))
        assert _torch_dtype(result_type(Operand(a, tier_a), Operand(b, tier_b))) == expected, (a, tier_a, b, tier_b)
        checked += 1
    assert checked == len(ALL_DTYPES) ** 2 * 4


@pytest.mark.parametrize("scalar", sorted(SCALARS))
@pytest.mark.parametrize("tier", [Tier.DIMENSIONED, Tier.ZERO_DIM])
def test_result_type_matches_torch_for_tensor_and_python_scalar(scalar, tier):
    for dtype in ALL_DTYPES:
        tensor = _tensor(dtype, tier)
        ours = result_type(Operand(dtype, tier), Operand(SCALAR_DTYPES[scalar], Tier.SCALAR))
        assert _torch_dtype(ours) == torch.result_type(tensor, SCALARS[scalar]), (dtype, tier, scalar)
        ours_reversed = result_type(Operand(SCALAR_DTYPES[scalar], Tier.SCALAR), Operand(dtype, tier))
        assert ours_reversed == ours


def test_unknown_dimensionality_is_unknown_only_when_it_matters():
    # float32 + int64: float32 whatever the dims
    assert result_type(Operand(FLOAT32, None), Operand(INT64, None)) == FLOAT32
    # int32 + int64 depends on which one is 0-dim
    int32 = next(d for d in ALL_DTYPES if d.name == "int32")
    assert result_type(Operand(int32, None), Operand(INT64, None)) is None


# -- the model's inferred dtype for real expressions --------------------------------

CREATIONS = [
    "torch.zeros(1, dtype=torch.{d})",
    "torch.zeros((), dtype=torch.{d})",
    "torch.ones(1, dtype=torch.{d})",
    "torch.tensor(0, dtype=torch.{d})",
    "torch.full((1,), 1, dtype=torch.{d})",
]
PLAIN_CREATIONS = [
    "torch.zeros(1)", "torch.tensor(0.0)", "torch.tensor([0.0])", "torch.tensor(0)",
    "torch.tensor([1])", "torch.full((1,), 0)", "torch.full((1,), 0.0)", "torch.zeros(1, dtype=float)",
    "torch.zeros(1, dtype=int)", "torch.FloatTensor([0])", "torch.LongTensor([0])", "torch.DoubleTensor([0])",
    "torch.zeros_like(base)", "base.new_zeros(1)", "torch.ones(1, dtype=torch.half).new_zeros(1)",
]  # fmt: skip
COUNTS = [
    "(x == 0).sum()", "torch.count_nonzero(x)", "x.numel()", "len(x)", "x.shape[0]", "x.size(0)",
    "(x > 0).sum(dim=0)", "x.eq(0).sum()", "torch.isfinite(x).sum()", "((x > 0) & (x < 3)).sum()",
    "x.numel() - torch.count_nonzero(x)", "torch.bincount(x.long())", "x.nonzero().size(0)",
    "(x != 0).long().sum()", "(x == 0).float().sum()", "(x == 0).sum(dtype=torch.float16)",
    "mask.sum()", "0.0", "3", "2 * (x == 0).sum()",
]  # fmt: skip
OPERATORS = ["+", "-", "*", "/"]
DTYPE_NAMES = ["float32", "float16", "bfloat16", "float64", "int64", "int32", "float", "half", "long", "int", "double"]


def _expressions():
    creations = [c.format(d=d) for c in CREATIONS for d in DTYPE_NAMES] + PLAIN_CREATIONS
    for creation in creations:
        for count in COUNTS:
            for op in OPERATORS:
                yield f"{creation} {op} {count}"
                yield f"{count} {op} {creation}"
        yield creation


PRELUDE = "import torch\nx = torch.tensor([0.0, 1.0, 0.0, 2.0])\nbase = torch.zeros(1, dtype=torch.bfloat16)\nmask = x == 0\n"


def test_model_dtype_matches_torch_on_generated_expressions():
    expressions = list(_expressions())
    source = PRELUDE + "".join(f"r{i} = {e}\n" for i, e in enumerate(expressions))
    module = cst.parse_module(source)
    model = build_model(module)
    assigned = {
        statement.body[0].targets[0].target.value: statement.body[0].value
        for statement in module.body
        if isinstance(statement, cst.SimpleStatementLine) and isinstance(statement.body[0], cst.Assign)
    }
    namespace: dict = {}
    exec(PRELUDE, namespace)
    compared = unknown = 0
    for i, expression in enumerate(expressions):
        value = model.value_of(assigned[f"r{i}"])
        actual = eval(expression, namespace)
        if not isinstance(actual, torch.Tensor):
            continue
        if value.dtype is None:
            unknown += 1
            continue
        assert _torch_dtype(value.dtype) == actual.dtype, expression
        compared += 1
    # The model must know the dtype of nearly everything here, not dodge it.
    assert compared > 0.95 * (compared + unknown), (compared, unknown)
    assert compared > 2000


def test_in_place_accumulation_keeps_the_accumulator_dtype():
    source = PRELUDE + (
        "a = torch.zeros(1, dtype=torch.bfloat16)\na += (x == 0).sum()\n"
        "b = torch.zeros(1)\nb += x.numel()\n"
        "c = torch.zeros(1, dtype=torch.int32)\nc += torch.count_nonzero(x)\n"
        "d = 0.0\nd += (x == 0).sum()\n"
    )
    model = build_model(cst.parse_module(source))
    namespace: dict = {}
    exec(source, namespace)
    by_name = {}
    for accumulator in model.accumulators:
        for add in accumulator.adds:
            by_name[add.statement.target.value] = add.dtype_after
    for name in "abcd":
        assert _torch_dtype(by_name[name]) == namespace[name].dtype, name
