"""How safe it is to make an accumulator int64: one policy for every rule whose fix
is an int64 accumulator (PH001 from a float, PH005 from int32).

- no fix when a use breaks on int64 (`acc /= n`, `acc.mean()`, `ReduceOp.AVG`);
- unsafe when a value of unknown type is added (int64 raises on `+= 0.5`) or the
  tensor escapes where we cannot see (returned, a public attribute, a buffer);
- safe otherwise.
"""
from __future__ import annotations

from typing import NamedTuple

import libcst as cst

from ..diagnostics import Applicability, Severity
from ..model.accumulators import Accumulator, AddendKind, Effect
from ..model.semantic import SemanticModel
from ..model.syntax import string_key
from ..rule import Finding, NodeFix
from .int64 import NoRewrite, int64_rewrite


class FixDecision(NamedTuple):
    fix: NodeFix | None
    note: str | None  # why the fix is unsafe or missing
    related: tuple[cst.CSTNode, str] | None  # the use or add that decided it


def int64_fix(accumulator: Accumulator, model: SemanticModel, name: str) -> FixDecision:
    if accumulator.creation.remote is not None:
        return FixDecision(None, f"No fix here: `{name}` is made by {accumulator.creation.remote}; make it int64 there.", None)
    try:
        rewrite = int64_rewrite(accumulator.creation.node, model.module, model.imports, model.module_name)
    except NoRewrite as reason:
        return FixDecision(None, f"No fix: {reason}.", None)
    floated = next((a for a in accumulator.adds if a.kind is AddendKind.COUNT and model.value_of(a.addend).is_floating), None)
    if floated is not None:
        reason = "counts are added as floats (`.float()`, `float(n)`): an int64 accumulator rejects them"
        return FixDecision(None, f"No fix: {reason}; keep the counts integer first.", (floated.statement, reason))
    worst = accumulator.worst_use()
    if worst is not None and worst.effect is Effect.BREAKS:
        return FixDecision(
            None, f"No fix: `{name}` is {worst.reason}.", (worst.node, f"blocks the int64 fix: {worst.reason}")
        )
    unsafe = NodeFix(Applicability.UNSAFE, rewrite.description, rewrite.edits)
    unknown_add = next((a for a in accumulator.adds if a.kind is AddendKind.UNKNOWN), None)
    if unknown_add is not None:
        reason = "a value of unknown type is added (int64 raises if it is a float)"
        return FixDecision(unsafe, f"Unsafe fix: {reason}.", (unknown_add.statement, reason))
    if worst is not None and worst.effect is Effect.ESCAPES:
        return FixDecision(unsafe, f"Unsafe fix: `{name}` is {worst.reason}.", (worst.node, f"escapes: {worst.reason}"))
    return FixDecision(NodeFix(Applicability.SAFE, rewrite.description, rewrite.edits), None, None)


def accumulator_finding(
    accumulator: Accumulator, model: SemanticModel, hazards: list, message: str, severity: Severity
) -> Finding:
    """The finding an int64-fixable accumulator gets: at its creation, with the adds
    (and the use that decided the fix's safety) as related locations. `message` may
    use `{name}`."""
    name = accumulator_name(hazards[0].statement, model.module)
    related = [(add.statement, "counts added here") for add in hazards]
    fix, note, blocker = int64_fix(accumulator, model, name)
    if blocker is not None:
        related.append(blocker)
    message = message.format(name=name) + counts_source(model, [add.addend for add in hazards])
    return Finding(accumulator.creation.node, message, severity, fix, tuple(related), note)


def counts_source(model: SemanticModel, nodes) -> str:
    """"; counts from `counting.nonpad()` (pkg/counting.py:4)" when the counts were
    made in another module (empty otherwise: the related adds show where)."""
    for node in nodes:
        via = model.value_of(node).via
        if via is not None:
            return f"; counts from {via}"
    return ""


def accumulator_name(statement: cst.CSTNode, module: cst.Module) -> str:
    """How an add statement spells its accumulator: `total`, `self.n` (for `n[i] += c`, `n`)."""
    target: cst.CSTNode | None = None
    if isinstance(statement, (cst.AugAssign, cst.Assign)):
        target = statement.target if isinstance(statement, cst.AugAssign) else statement.targets[0].target
    elif isinstance(statement, cst.Call):
        out = next((a for a in statement.args if a.keyword and a.keyword.value == "out"), None)
        if out is not None:
            target = out.value
        elif isinstance(statement.func, cst.Attribute):
            target = statement.func.value
    elif isinstance(statement, cst.AnnAssign):
        target = statement.target
    while isinstance(target, cst.Subscript) and string_key(target) is None:
        target = target.value  # `n[i] += c` names `n`; `state["step"]` is its own place
    return module.code_for_node(target) if target is not None else "accumulator"
