"""What a call to a function of the project gives: its summary (what it returns,
how its parameters are bound), from this module's own interpretation or from the
project index for other modules. Calls to anything else stay unknown."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Protocol, Sequence

from .values import UNKNOWN, Kind, Value, join

if TYPE_CHECKING:  # the project index reads summaries without libcst
    import libcst as cst


@dataclass(frozen=True)
class FunctionSummary:
    qualified: str
    params: tuple[str, ...]  # positional ones first
    positional: int
    receives_self: bool
    returns: Value
    # literal defaults (`reduce=True`, `n=0`): what an omitted argument is
    defaults: tuple[tuple[str, Value], ...] = ()
    # where it is defined, for messages: "count_helpers.py:9" (other modules only)
    where: str | None = None


class ExternalSummaries(Protocol):
    """The project index as one module's model sees it (project/index.py)."""

    def function(self, qualified: str) -> FunctionSummary | None: ...

    def class_bases(self, qualified: str) -> tuple[str, ...] | None:
        """The bases of a project class (None: not a project class)."""

    def param_values(self, qualified: str) -> dict[str, Value]:
        """What the project's other modules pass to this module's function."""

    def facts(self) -> "ProjectFacts": ...


@dataclass(frozen=True)
class Evidence:
    """A line that shows how the project runs its model (`model.bfloat16()`)."""

    kind: str  # "half" (a whole-model cast or half settings), "autocast", "default-dtype"
    text: str
    where: str  # "train.py:40"


@dataclass
class ProjectFacts:
    evidence: list[Evidence] = field(default_factory=list)

    def first(self, kind: str) -> Evidence | None:
        return next((e for e in self.evidence if e.kind == kind), None)


class NoProject:
    """A module checked on its own: every other module is unknown."""

    def __init__(self) -> None:
        self._facts = ProjectFacts()

    def function(self, qualified: str) -> FunctionSummary | None:
        return None

    def class_bases(self, qualified: str) -> tuple[str, ...] | None:
        return None

    def param_values(self, qualified: str) -> dict[str, Value]:
        return {}

    def facts(self) -> ProjectFacts:
        return self._facts


def bind_arguments(summary: FunctionSummary, call: cst.Call, values: Sequence[Value], bound: bool) -> dict[str, Value] | None:
    """Parameter -> the value a call passes (omitted ones take their literal
    default); None when `*args`/`**kwargs` hide which is which. `bound`: the
    instance is already the first parameter (`self.update(x)`)."""
    if any(arg.star for arg in call.args):
        return None
    positional = [value for arg, value in zip(call.args, values) if arg.keyword is None]
    keywords = {arg.keyword.value: value for arg, value in zip(call.args, values) if arg.keyword is not None}
    return bind_arguments_from(summary, positional, keywords, bound)


def bind_arguments_from(
    summary: FunctionSummary, positional: Sequence[Value], keywords: dict[str, Value], bound: bool = False
) -> dict[str, Value]:
    offset = 1 if bound and summary.receives_self else 0
    names = summary.params[offset : summary.positional]
    bindings: dict[str, Value] = dict(zip(names, positional))
    for name, value in keywords.items():
        if name in summary.params:
            bindings[name] = value
    defaults = dict(summary.defaults)
    for name in summary.params[offset:]:
        if name not in bindings:
            bindings[name] = defaults.get(name, UNKNOWN)
    return bindings


def join_bindings(sites: list[dict[str, Value]]) -> dict[str, Value]:
    """What each parameter holds over every call site seen."""
    joined: dict[str, Value] = {}
    for site in sites:
        for name, value in site.items():
            joined[name] = join(joined[name], value) if name in joined else value
    return joined


def literal_default(node: cst.BaseExpression) -> Value:
    import libcst as cst

    if type(node) is cst.Integer:
        return Value.py_int()
    if type(node) is cst.Float:
        return Value(Kind.PY_FLOAT)
    if type(node) is cst.Name and node.value in ("True", "False"):
        return Value(Kind.PY_BOOL)
    if type(node) is cst.Name and node.value == "None":
        return Value(Kind.NONE)
    if type(node) in (cst.SimpleString, cst.ConcatenatedString):
        return Value(Kind.STR)
    return UNKNOWN
