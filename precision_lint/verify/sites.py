"""What a replay of one finding watches: a *site*.

- an accumulator site (PH001, PH005, PH201, PH006's scatter buffers; a torch tensor
  or a NumPy total): where it is created, and every statement that adds to it (one
  per source statement);
- a value site (PH002's float sum of a mask, PH004's positions, PH006's
  `bincount(weights=ones)`): one expression, with the edits that make an exact
  (float64) version of it to compare with.

No torch (nor NumPy) here.
"""
from __future__ import annotations

import importlib.util
from dataclasses import dataclass, field

import libcst as cst

from ..diagnostics import Diagnostic
from ..model.accumulators import AddendKind, narrowest_dtype
from ..model.dtypes import INT32, DType
from ..model.expressions import find_arg
from ..model.imports import dotted_name
from ..model.semantic import SemanticModel
from ..model.values import CallFact
from .source_view import FIX, Edit, SourceIndex

ACCUMULATOR, VALUE = "accumulator", "value"
# rules whose findings verify replays (every rule with a fix)
VERIFIABLE = frozenset({"PH001", "PH002", "PH004", "PH005", "PH006", "PH201"})
SCATTERS = {"scatter_add_": ("src", 2), "index_add_": ("source", 2), "index_put_": ("values", 1)}
CASTS = frozenset({"float", "half", "bfloat16", "double", "to", "type", "type_as"})


class NoReplay(Exception):
    """No replay can be built; the message says why (verdict `skipped`)."""


@dataclass
class AddSite:
    statement: cst.CSTNode
    addend: cst.CSTNode
    sign: int = 1
    whole: bool = True  # the addend is added as a whole (`acc += n`), not scattered by an index
    counts: bool = False  # the model knows the addend is a whole number (a count, an integer)


@dataclass
class Site:
    code: str
    kind: str
    diagnostic: Diagnostic
    dtype: DType | None  # what the finding says; the child reads the real one
    creation: cst.CSTNode | None = None
    adds: list[AddSite] = field(default_factory=list)
    value: cst.Call | None = None
    exact_edits: list[Edit] = field(default_factory=list)
    fix_edits: list[Edit] = field(default_factory=list)
    angles: bool = False  # PH004: also compare the angles the positions make
    module_cast: bool = False  # PH004 on a buffer: replay the module cast to bf16 / fp16
    # the fixed accumulator must hold whole numbers at every add (int64 fixes)
    integral_fix: bool = True
    # (dtype, why): the dtype the replay runs the site in when it is not the one
    # written (the model's floating dtype, a project's half-precision cast); findings.py
    run_dtype: tuple[str, str] | None = None
    # what the accumulator is: a torch tensor, or a NumPy array or scalar (`np.int32(0)`),
    # whose replay runs NumPy and makes the inputs NumPy arrays by default
    library: str = "torch"

    @property
    def anchor(self) -> cst.CSTNode:
        return self.adds[0].statement if self.adds else self.value


def fix_edits(source: SourceIndex, diagnostic: Diagnostic) -> list[Edit]:
    edits = []
    for edit in diagnostic.fix.edits:
        start = source.index.offset(edit.location.row, edit.location.column)
        end = source.index.offset(edit.end_location.row, edit.end_location.column)
        edits.append(Edit(start, end, edit.content, None, FIX))
    return edits


def find_site(source: SourceIndex, model: SemanticModel, diagnostic: Diagnostic) -> Site:
    if diagnostic.fix is None:
        raise NoReplay("the finding has no fix to compare")
    code = diagnostic.code or ""
    located = (diagnostic.location.row, diagnostic.location.column)
    edits = fix_edits(source, diagnostic)
    if code in ("PH001", "PH005", "PH201"):
        return _accumulator_site(source, model, diagnostic, located, edits)
    end = (diagnostic.end_location.row, diagnostic.end_location.column)
    fact = _fact_at(source, model, located, end)
    if fact is None:
        raise NoReplay("the finding's call was not found again")
    if code == "PH006":
        return _histogram_site(source, model, diagnostic, fact, edits)
    if code == "PH002":
        return _mask_sum_site(source, model, diagnostic, fact, edits)
    if code == "PH004":
        return _positions_site(source, model, diagnostic, fact, edits)
    raise NoReplay(f"no replay for {code}")


def _start(source: SourceIndex, node: cst.CSTNode) -> tuple[int, int]:
    span = source.positions[node]
    return (span.start.line, span.start.column + 1)


def _accumulator_site(source, model, diagnostic, located, edits) -> Site:
    accumulator = next((a for a in model.accumulators if _start(source, a.creation.node) == located), None)
    if accumulator is None:
        raise NoReplay("the finding's accumulator was not found again")
    library = "numpy" if _is_numpy(accumulator.creation.node, model) else "torch"
    if library == "numpy" and importlib.util.find_spec("numpy") is None:
        raise NoReplay("NumPy is not installed here, so its totals cannot be replayed")
    counted = [a for a in accumulator.adds if a.kind is AddendKind.COUNT and a.dtype_after is not None]
    # a step counter (`step += 1` into a floating tensor) adds literal ones
    steps = accumulator.step_adds() if diagnostic.code == "PH001" else []
    if not counted and not steps:
        raise NoReplay("the finding has no count added")
    if diagnostic.code == "PH005":
        dtype = INT32
    else:
        dtype = narrowest_dtype([a for a in counted if a.adds_count_to_float] or counted or steps)
    adds = _adds(source, accumulator.adds)
    return Site(diagnostic.code or "", ACCUMULATOR, diagnostic, dtype, accumulator.creation.node, adds, fix_edits=edits, library=library)


def _is_numpy(node: cst.CSTNode, model: SemanticModel) -> bool:
    if not isinstance(node, cst.Call):
        return False
    qualified = model.imports.qualify_dotted(dotted_name(node.func))
    return qualified is not None and (qualified == "numpy" or qualified.startswith("numpy."))


def _adds(source: SourceIndex, adds) -> list[AddSite]:
    """One per source statement: the model records an add once per dtype it saw
    (and a method add, `n.add_(c)`, by its call)."""
    seen, result = set(), []
    for add in adds:
        statement = add.statement if isinstance(add.statement, cst.BaseSmallStatement) else source.small_statement(add.statement)
        if statement is None or id(statement) in seen:
            continue
        seen.add(id(statement))
        whole_number = add.kind in (AddendKind.COUNT, AddendKind.INTEGRAL)
        result.append(AddSite(statement, add.addend, -1 if _subtracts(add.statement) else 1, counts=whole_number))
    return result


def _subtracts(statement: cst.CSTNode) -> bool:
    if isinstance(statement, cst.AugAssign):
        return isinstance(statement.operator, cst.SubtractAssign)
    if isinstance(statement, cst.Assign) and isinstance(statement.value, cst.BinaryOperation):
        return isinstance(statement.value.operator, cst.Subtract)
    call = statement.value if isinstance(statement, cst.Expr) else statement
    if isinstance(call, cst.Call) and isinstance(call.func, cst.Attribute):
        return call.func.attr.value in ("sub_", "sub", "subtract_")
    return False


def _fact_at(source, model, located, end) -> CallFact | None:
    """The call the finding is on: `x.type_as(b).reshape(n)` starts where its inner
    call starts, so the end decides."""
    starting = [f for f in model.calls if _start(source, f.node) == located]
    for fact in starting:
        span = source.positions[fact.node]
        if (span.end.line, span.end.column + 1) == end:
            return fact
    return starting[-1] if starting else None


def _histogram_site(source, model, diagnostic, fact: CallFact, edits) -> Site:
    node = fact.node
    if fact.qualified == "torch.bincount":
        weights = find_arg(node, "weights", 1)
        if weights is None:
            raise NoReplay("bincount without weights")
        start, end = source.offsets(weights.value)
        exact = [Edit(start, start, "(", None, 0), Edit(end, end, ").double()", None, 0)]
        return Site("PH006", VALUE, diagnostic, None, value=node, exact_edits=exact, fix_edits=edits)
    if fact.method not in SCATTERS:
        raise NoReplay("only scatter_add_, index_add_, index_put_ and bincount are replayed")
    buffer = model.value_of(node.func.value)
    if len(buffer.origins) != 1:
        raise NoReplay("the buffer is not created in this module")
    (creation,) = buffer.origins
    adds: list[AddSite] = []
    for other in model.calls:
        if other.method not in SCATTERS or not isinstance(other.node.func, cst.Attribute):
            continue
        if creation not in model.value_of(other.node.func.value).origins:
            continue
        keyword, position = SCATTERS[other.method]
        src = find_arg(other.node, keyword, position)
        statement = source.small_statement(other.node)
        if src is not None and statement is not None:
            adds.append(AddSite(statement, src.value, whole=False))
    facts = next((a for a in model.accumulators if a.creation is creation), None)
    if facts is not None:
        adds.extend(a for a in _adds(source, facts.adds) if all(a.statement is not b.statement for b in adds))
    adds.sort(key=lambda a: source.offsets(a.statement)[0])
    return Site("PH006", ACCUMULATOR, diagnostic, buffer.dtype, creation.node, adds, fix_edits=edits)


def _mask_sum_site(source, model, diagnostic, fact: CallFact, edits) -> Site:
    """`mask.float().sum()` / `torch.sum(m, dtype=torch.float16)`: the exact value
    is the same sum in float64 (exact far past any count a replay makes)."""
    node = fact.node
    dtype_arg = find_arg(node, "dtype")
    exact: list[Edit] = []
    if dtype_arg is not None:
        start, end = source.offsets(dtype_arg.value)
        exact.append(Edit(start, end, "torch.float64", None, 0))
    else:
        receiver = node.func.value if isinstance(node.func, cst.Attribute) else (node.args[0].value if node.args else None)
        if not (isinstance(receiver, cst.Call) and isinstance(receiver.func, cst.Attribute) and receiver.func.attr.value in CASTS):
            raise NoReplay("the cast to float was not found again")
        inner_end = source.extent(receiver.func.value)[1]
        exact.append(Edit(inner_end, source.extent(receiver)[1], ".double()", None, 0))
    return Site("PH002", VALUE, diagnostic, model.value_of(node).dtype, value=node, exact_edits=exact, fix_edits=edits, integral_fix=False)


def _positions_site(source, model, diagnostic, fact: CallFact, edits) -> Site:
    """Positions in bf16/fp16: the fix's own edits with float64 for float32 give
    the exact positions."""
    exact = []
    for edit in edits:
        text = edit.text.replace("float32", "float64")
        if text == "float":
            text = "double"
        exact.append(Edit(edit.start, edit.end, text, None, 0))
    node = fact.node
    buffer = any(model.value_of(a.value).buffer for a in node.args)
    return Site(
        "PH004", VALUE, diagnostic, model.value_of(node).dtype, value=node, exact_edits=exact, fix_edits=edits,
        angles=True, module_cast=buffer, integral_fix=False,
    )  # fmt: skip
