"""PH006 float-histogram."""
from __future__ import annotations

from typing import Iterable

import libcst as cst

from precision_lint.diagnostics import Applicability, Severity
from precision_lint.fixes.int64 import NoRewrite, int64_rewrite
from precision_lint.fixes.arguments import drop_arg
from precision_lint.model.accumulators import Effect, Fate
from precision_lint.conditions import RUNTIME
from precision_lint.model.dtypes import FLOAT32, FLOAT64, RUNTIME_FLOAT
from precision_lint.model.expressions import find_arg
from precision_lint.model.semantic import SemanticModel
from precision_lint.model.values import CallFact, Value
from precision_lint.rule import Finding, FixAvailability, Invalid, NodeFix, Rule

ONES = frozenset({"torch.ones", "torch.ones_like", "new_ones"})
# method -> (keyword, position) of the values it adds into the receiver
SCATTERS = {"scatter_add_": ("src", 2), "index_add_": ("source", 2), "index_put_": ("values", 1)}


class FloatHistogram(Rule):
    """
    ## What it does
    Checks for counting by adding float ones: `torch.histc` (whose counts are
    float32), `buf.scatter_add_(dim, index, torch.ones(...))`, `index_add_` and
    `index_put_(..., accumulate=True)` of ones or of a float mask into a float
    buffer, and `torch.bincount(x, weights=torch.ones(...))`.

    A float32 (or float64) count is reported where its counts outlive the call that
    makes them: added into state or into a tensor carried across a loop's iterations,
    copied into a buffer, summed across ranks, made at module level, or returned or
    passed on (unless what is counted is small: a literal range, one element). Counts
    made and used within one call (turned into a fraction, added into a float64 total)
    are exact there up to 2^24 and are not. In bfloat16, float16 or the model's dtype
    they always are: one call passes 256 or 2,048.

    ## Why is this bad?
    A float32 slot stops growing at 2^24 = 16,777,216: adding 1 to it changes
    nothing (bfloat16 stops at 256, float16 at 2,048). `scatter_add_` and
    `index_add_` of 16,778,216 ones into one float32 slot give 16,777,216; CPU
    `histc` stalls at 2^24 per thread, so its result even depends on the thread
    count (pytorch/pytorch#96613, #124783, #32305).

    ## Example
    ```python
    counts = torch.zeros(num_classes)
    counts.scatter_add_(0, labels, torch.ones_like(labels, dtype=torch.float))
    ```

    Use instead:
    ```python
    counts = torch.bincount(labels, minlength=num_classes)  # int64
    ```

    ## Fix safety
    For `scatter_add_` / `index_add_` / `index_put_` of ones, the fix makes both the
    buffer and the ones `torch.int64` when both are created by calls it can rewrite.
    It is unsafe: the buffer's dtype changes for every later use. For
    `torch.bincount(x, weights=<ones>)` the fix drops the weights, which gives the
    same counts as int64; it is unsafe because the result's dtype changes.
    `torch.histc` has no fix: `torch.bincount` counts integers, not value ranges.
    """

    code = "PH006"
    name = "float-histogram"
    summary = "Counting by adding float ones (histc, scatter_add_ of ones)"
    fix_availability = FixAvailability.SOMETIMES

    VALID = [
        # int64 buffer and ones
        "import torch\nc = torch.zeros(4, dtype=torch.int64)\nc.scatter_add_(0, idx, torch.ones_like(idx))\n",
        # float values, not ones: a weighted sum
        "import torch\nc = torch.zeros(4)\nc.scatter_add_(0, idx, probs)\nc.index_add_(0, idx, losses)\n",
        # bincount without weights is int64
        "import torch\nc = torch.bincount(labels, minlength=10)\n",
        # bincount with real weights is a weighted sum
        "import torch\nc = torch.bincount(labels, weights=scores)\n",
        # index_put_ without accumulate overwrites
        "import torch\nc = torch.zeros(4)\nc.index_put_((idx,), torch.ones(3))\n",
        # counts made and used within one call, in float32: turned into a fraction here
        "import torch\ndef expert_share(expert_idx, n):\n    load = torch.zeros(n)\n"
        "    load.scatter_add_(0, expert_idx, torch.ones(expert_idx.numel()))\n    return load / expert_idx.numel()\n",
        # one item's histogram per call, kept across calls only in a float64 total
        "import torch\nclass Areas:\n    def __init__(self, n):\n        self.n = n\n"
        "        self.total = torch.zeros(n, dtype=torch.float64)\n"
        "    def update(self, masks):\n        for mask in masks:\n"
        "            self.total += torch.histc(mask.float(), bins=self.n, min=0, max=self.n - 1)\n",
        # what is counted is small: a literal range, one element (compared in an `if`)
        "import torch\ndef show(plot):\n    plot(torch.histc(torch.arange(100.0), bins=10, min=0, max=100))\n",
        "import torch\ndef spike(lo, hi, bins):\n    if lo == hi:\n        return torch.histc(lo, bins=bins, min=0, max=1)\n",
    ]
    INVALID = [
        Invalid(
            "import torch\nc = torch.zeros(4)\nc.scatter_add_(0, idx, torch.ones(3))\n",
            fixed="import torch\nc = torch.zeros(4, dtype=torch.int64)\nc.scatter_add_(0, idx, torch.ones(3, dtype=torch.int64))\n",
            applicability=Applicability.UNSAFE,
        ),
        Invalid(
            "import torch\nhits = torch.zeros(8, dtype=torch.bfloat16)\nones = torch.ones_like(idx, dtype=torch.bfloat16)\nhits.index_add_(0, idx, ones)\n",
            fixed="import torch\nhits = torch.zeros(8, dtype=torch.int64)\nones = torch.ones_like(idx, dtype=torch.int64)\nhits.index_add_(0, idx, ones)\n",
            applicability=Applicability.UNSAFE,
        ),
        Invalid(
            "import torch\nc = torch.zeros(4)\nc.index_put_((idx,), torch.ones(3), accumulate=True)\n",
            fixed="import torch\nc = torch.zeros(4, dtype=torch.int64)\nc.index_put_((idx,), torch.ones(3, dtype=torch.int64), accumulate=True)\n",
            applicability=Applicability.UNSAFE,
        ),
        # a buffer divided in place afterwards cannot be int64: no fix
        Invalid("import torch\nc = torch.zeros(4)\nc.scatter_add_(0, idx, torch.ones(3))\nc.div_(3)\n", fixed=None),
        # a float mask is ones too; the buffer comes from elsewhere: no fix
        Invalid(
            "import torch\ndef f(base, idx, x):\n    buf = base.float()\n    buf.scatter_add_(0, idx, (x > 0).float())\n",
            fixed=None,
        ),
        Invalid(
            "import torch\nc = torch.bincount(labels, weights=torch.ones(labels.numel()), minlength=5)\n",
            fixed="import torch\nc = torch.bincount(labels, minlength=5)\n",
            applicability=Applicability.UNSAFE,
        ),
        Invalid("import torch\nh = torch.histc(x, bins=10, min=0, max=1)\n", fixed=None),
        # a histogram added into a float32 buffer on every call
        Invalid(
            "import torch\nclass Calibration(torch.nn.Module):\n    def __init__(self, bins):\n        super().__init__()\n"
            "        self.register_buffer('hist', torch.zeros(bins))\n"
            "    def forward(self, x):\n        self.hist += torch.histc(x, bins=self.hist.numel())\n        return x\n",
            fixed=None,
        ),
        # summed across ranks
        Invalid(
            "import torch\nimport torch.distributed as dist\ndef global_histogram(x, bins):\n"
            "    h = torch.histc(x, bins=bins)\n    dist.all_reduce(h)\n    return h\n",
            fixed=None,
        ),
        # a local buffer counted into across the iterations of a loop
        Invalid(
            "import torch\ndef label_counts(batches, n):\n    counts = torch.zeros(n)\n    for labels in batches:\n"
            "        counts.scatter_add_(0, labels, torch.ones(labels.numel()))\n    return counts\n",
            fixed="import torch\ndef label_counts(batches, n):\n    counts = torch.zeros(n, dtype=torch.int64)\n    for labels in batches:\n"
            "        counts.scatter_add_(0, labels, torch.ones(labels.numel(), dtype=torch.int64))\n    return counts\n",
            applicability=Applicability.UNSAFE,
        ),
        Invalid("import torch as th\nh = x.histc(bins=4)\n", fixed=None),
        # a scatter buffer in the dtype of the model's data: a warning
        Invalid(
            "import torch\ndef load(probs, idx, n):\n    counts = torch.zeros(n, dtype=probs.dtype)\n"
            "    counts.scatter_add_(0, idx, torch.ones_like(idx, dtype=probs.dtype))\n    return counts\n",
            fixed="import torch\ndef load(probs, idx, n):\n    counts = torch.zeros(n, dtype=torch.int64)\n"
            "    counts.scatter_add_(0, idx, torch.ones_like(idx, dtype=torch.int64))\n    return counts\n",
            applicability=Applicability.UNSAFE,
            severity=Severity.WARNING,
        ),
    ]

    def check(self, model: SemanticModel) -> Iterable[Finding]:
        for fact in model.calls:
            finding = self._check_call(fact, model)
            if finding is not None:
                yield finding

    def _check_call(self, fact: CallFact, model: SemanticModel) -> Finding | None:
        node = fact.node
        if fact.qualified == "torch.histc" or fact.method == "histc":
            # histc's counts are float32 whatever its input (a warning: how many values
            # land in a bin is not visible here)
            counted = find_arg(node, "input", 0) if fact.qualified else None
            counted_value = model.value_of(counted.value if counted is not None else node.func.value)  # type: ignore[union-attr]
            tally = model.creation_at(node)
            if tally is not None and not _counts_outlive(model, [tally], counted_value):
                return None
            return Finding(
                node,
                "`histc` counts in float32, which stops growing at 2^24 = 16,777,216 per bin",
                Severity.WARNING,
                note="No fix: for integer data, `torch.bincount` counts in int64.",
            )
        if fact.qualified == "torch.bincount":
            weights = find_arg(node, "weights", 1)
            if weights is not None and _counts_ones(model.value_of(weights.value), model):
                dtype = model.value_of(weights.value).dtype
                counted = find_arg(node, "input", 0)
                tally = model.creation_at(node)
                full = dtype is not None and dtype.exact_integer_limit >= FLOAT32.exact_integer_limit
                if full and tally is not None and counted is not None and not _counts_outlive(model, [tally], model.value_of(counted.value)):
                    return None
                fix = NodeFix(Applicability.UNSAFE, "Drop the ones weights: the counts come back as int64", drop_arg(node, weights))
                return Finding(node, "`bincount` with ones as weights counts in float", Severity.ERROR, fix)
        if fact.method in SCATTERS:
            keyword, position = SCATTERS[fact.method]
            if fact.method == "index_put_":
                accumulate = find_arg(node, "accumulate", 2)
                if accumulate is None or not (type(accumulate.value) is cst.Name and accumulate.value.value == "True"):
                    return None
            source = find_arg(node, keyword, position)
            buffer = model.value_of(node.func.value)
            # a tensor buffer: a Python float has no scatter methods (the call would raise)
            if source is None or not (buffer.is_tensor and buffer.is_floating):
                return None
            ones = model.value_of(source.value)
            if not _counts_ones(ones, model):
                return None
            dtype = buffer.dtype
            if dtype in (FLOAT32, FLOAT64) and buffer.origins and not _counts_outlive(model, buffer.origins, ones):
                return None  # counts made and used within one call, exact there
            message = (
                f"`{fact.method}` of ones counts in {dtype.label}, which stops growing at "
                f"{dtype.exact_integer_limit_text} per slot"
            )
            severity = Severity.WARNING if dtype in (FLOAT64, RUNTIME_FLOAT) else Severity.ERROR
            fix, note = _int64_pair(buffer, ones, model)
            return Finding(node, message, severity, fix, note=note, conditions=(RUNTIME,) if dtype is RUNTIME_FLOAT else ())
        return None


def _counts_outlive(model: SemanticModel, tallies, counted: Value) -> bool:
    """Whether float32 (or float64) counts are a hazard: kept past the call (added into
    state or a tensor carried across loop iterations, copied into a buffer, summed
    across ranks, made at module level), or gone where we cannot follow (returned,
    passed on) unless what is counted is small enough that one call stays exact
    (`torch.histc` of one element, of `torch.arange(100.0)`). Counts made and used
    within one call (divided into a fraction, added into a float64 total) are exact to
    2^24 there: not reported."""
    fate, _ = model.tally_fate(tallies)
    if fate is Fate.KEPT:
        return True
    bound = counted.elements_bound
    if bound is not None and bound <= FLOAT32.exact_integer_limit:
        return False
    return fate is Fate.ESCAPES


def _counts_ones(value: Value, model: SemanticModel) -> bool:
    """Ones made to count with (`torch.ones(...)`, `x.new_ones(...)`) or a float mask."""
    return bool(model.creation_callees(value) & ONES) or (value.mask and value.is_floating)


def _int64_pair(buffer: Value, ones: Value, model: SemanticModel):
    if len(buffer.origins) != 1 or len(ones.origins) != 1:
        return None, "No fix: the buffer or the ones are not created here."
    (creation,) = buffer.origins
    facts = next((a for a in model.accumulators if a.creation is creation), None)
    worst = facts.worst_use() if facts is not None else None
    if worst is not None and worst.effect is Effect.BREAKS:
        return None, f"No fix: the buffer is {worst.reason}."
    edits = []
    try:
        for value in (buffer, ones):
            (creation,) = value.origins
            edits.extend(int64_rewrite(creation.node, model.module, model.imports).edits)
    except NoRewrite as reason:
        return None, f"No fix: {reason}."
    unique = tuple(dict.fromkeys(edits))
    return NodeFix(Applicability.UNSAFE, "Count in int64: make the buffer and the ones `torch.int64`", unique), (
        "Unsafe fix: the buffer's dtype changes for every later use."
    )

