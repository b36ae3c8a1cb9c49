"""Whether a replay runs under autocast, and in which dtype. No torch here.

Autocast rounds positions that enter a matmul-like op (`@`, `torch.matmul`,
`F.linear`, an `nn.Linear`, a contracting einsum) to bfloat16/float16, even float32
ones. `check` reports that (PH004) inside `with torch.autocast(...)` of the same
function, and in a layer's method when the project's evidence shows autocast where the
layer runs (its caller's `torch.autocast(dtype=torch.bfloat16)`, a GradScaler, `bf16=True`).
A replay of such a site without autocast shows numbers the code never produces, so the
replay's calls run under `torch.autocast(device_type, dtype)`: before and after alike
(the fix is judged on what runs; making the positions float32 does not stop autocast).

Decided from the finding's own conditions (`needs:autocast`, settled by the project's
evidence) or, for a PH004 fix, from the fixed code as `check` models it: the positions
the fix makes float32 enter an op the model records as run under autocast, in the
site's own function. (Why the fixed code: autocast rounds the original's positions
the same way, but the model records an op only for positions whose floating dtype it
knows, and the dtype of `type_as(self.inv_freq)` is not known until the module is cast.)
"""
from __future__ import annotations

from typing import NamedTuple

import libcst as cst

from ..model.autocast import region_of
from ..model.evidence import AUTOCAST
from ..model.imports import dotted_name
from ..model.summaries import Evidence
from ..model.values import Kind
from .code_helpers import short
from .findings import FileFindings, Finding
from .sites import Site
from .source_view import Rewriter, SourceIndex, all_nodes

_NEEDS_AUTOCAST = "needs:" + AUTOCAST
_HALF = ("bfloat16", "float16")


class Autocast(NamedTuple):
    dtype: str  # "bfloat16" or "float16"
    why: str
    # the op autocast casts, as the fixed code spells it, and its line (None: not known)
    op: str | None = None
    line: int | None = None


def replay_autocast(found: FileFindings, item: Finding, source: SourceIndex, site: Site) -> Autocast | None:
    """How the site runs under autocast; None when it does not."""
    evidence = found.facts.first(AUTOCAST)
    if _NEEDS_AUTOCAST in item.conditions:
        return Autocast(_evidence_dtype(evidence), f"the project runs it under autocast ({_shown(evidence)})") if evidence is not None else None
    if site.code != "PH004" or not site.fix_edits:
        return None
    fixed_text = Rewriter(source, site.fix_edits).render_range(0, len(source.text))
    try:
        model = found.model(cst.parse_module(fixed_text))
    except cst.ParserSyntaxError:
        return None
    fixed = SourceIndex(model, fixed_text)
    # the fix edits inside the finding's expression: it still starts where the finding does
    at = fixed.index.offset(item.diagnostic.location.row, item.diagnostic.location.column)
    node = next((f.node for f in model.calls if fixed.offsets(f.node)[0] == at), None)
    if node is None:
        return None
    scope = fixed.enclosing(node, (cst.FunctionDef,))
    statement = fixed.small_statement(node)
    name = _bound_name(statement)
    for use in model.autocast_uses:
        if fixed.enclosing(use.node, (cst.FunctionDef,)) is not scope or not _reads(fixed, use.node, at, name, statement):
            continue
        op, line = short(fixed.raw(use.node)), fixed.line(use.node)
        if use.region:
            region = _region(fixed, model, use.node)
            if region is not None:
                return Autocast(*region, op, line)
        elif evidence is not None:  # a layer's method: under its caller's autocast, as the project shows
            why = f"positions enter a matmul in a layer whose callers the project runs under autocast ({_shown(evidence)})"
            return Autocast(_evidence_dtype(evidence), why, op, line)
    return None


def _bound_name(statement: cst.CSTNode | None) -> str | None:
    if isinstance(statement, cst.Assign) and len(statement.targets) == 1 and isinstance(statement.targets[0].target, cst.Name):
        return statement.targets[0].target.value
    return None


def _reads(source: SourceIndex, op: cst.CSTNode, at: int, name: str | None, statement) -> bool:
    """Whether the op takes the site's positions: they are inside it, or it reads the
    name they are bound to (after they are)."""
    start, end = source.offsets(op)
    if start <= at < end:
        return True
    if name is None or statement is None or start < source.offsets(statement)[1]:
        return False
    return any(isinstance(n, cst.Name) and n.value == name for n in all_nodes(op))


def _region(source: SourceIndex, model, op: cst.CSTNode) -> tuple[str, str] | None:
    """The `with torch.autocast(...)` around the op, and the dtype it runs in."""
    for ancestor in source.ancestors(op):
        if not isinstance(ancestor, cst.With):
            continue
        for item in ancestor.items:
            call = item.item
            if not isinstance(call, cst.Call):
                continue
            qualified = model.imports.qualify_dotted(dotted_name(call.func))
            if region_of(call, qualified, lambda arg: _dtype(model, arg)):
                return _with_dtype(model, call, qualified, source.raw(call)), f"inside `{source.raw(call)}` at line {source.line(call)}"
    return None


def _dtype(model, node: cst.BaseExpression):
    value = model.value_of(node)
    return value.dtype if value.kind is Kind.DTYPE else None


def _with_dtype(model, call: cst.Call, qualified: str | None, text: str) -> str:
    """The dtype an autocast region runs matmuls in: the one it names, else the
    device's default (float16 on CUDA, bfloat16 on the CPU)."""
    for arg in call.args:
        if arg.keyword is None or arg.keyword.value == "dtype":
            dtype = _dtype(model, arg.value)
            if dtype is not None and dtype.name in _HALF:
                return dtype.name
    return _text_dtype(text, qualified == "torch.cpu.amp.autocast")


def _evidence_dtype(evidence: Evidence) -> str:
    return _text_dtype(evidence.text, False)


def _text_dtype(text: str, on_cpu: bool) -> str:
    """The autocast dtype a line names (`dtype=torch.bfloat16`, `bf16=True`,
    `precision="16-mixed"`, a GradScaler: float16); unnamed, the device's default."""
    low = text.lower()
    if "bfloat16" in low or "bf16" in low:
        return "bfloat16"
    if "float16" in low or "fp16" in low or "half" in low or "16-mixed" in low or "gradscaler" in low:
        return "float16"
    if "dtype" in low:
        return "bfloat16"  # a dtype not written out: the narrowest common training dtype
    return "bfloat16" if on_cpu or "'cpu'" in low or '"cpu"' in low else "float16"


def _shown(evidence: Evidence) -> str:
    return f"`{evidence.text}` at {evidence.where}"

