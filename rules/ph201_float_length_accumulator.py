"""PH201 float-length-accumulator (off by default)."""
from __future__ import annotations

from typing import Iterable

from precision_lint.diagnostics import Applicability, Severity
from precision_lint.fixes.safety import accumulator_finding
from precision_lint.model.accumulators import Accumulator, narrowest_dtype, only_lengths
from precision_lint.model.dtypes import FLOAT64
from precision_lint.model.semantic import SemanticModel
from precision_lint.rule import Finding, FixAvailability, Invalid, Rule


class FloatLengthAccumulator(Rule):
    """
    ## What it does
    Checks for lengths (`len(batch)`, `x.shape[0]`, `x.size(0)`, sums of those)
    added up in a float32 tensor: sample, sequence or word totals (float64 holds them
    exactly up to 2^53).

    This rule is off by default; turn it on with `--extend-select PH201` (or `PH2`).
    PH001 reports the same shape when the counts are element counts (`numel()`,
    `mask.sum()`, `count_nonzero`), or when the accumulator is float16 or bfloat16,
    where even a batch-size total passes the limit (2,048 or 256) within minutes.

    ## Why is this bad?
    float32 holds every integer only up to 2^24 = 16,777,216. A total of lengths
    grows by a batch size per step, so it rounds only after 16.7M samples (or
    sequences, or words) between resets: a consumed-samples counter of a long run, a
    word count over a large evaluation corpus. An eval loop over 50,000 images never
    gets there, which is why this rule is not on by default.

    ## Example
    ```python
    consumed = torch.zeros(1, device="cuda")
    for batch in loader:
        consumed += batch["input_ids"].shape[0]
    ```

    Use instead:
    ```python
    consumed = torch.zeros(1, dtype=torch.int64, device="cuda")
    for batch in loader:
        consumed += batch["input_ids"].shape[0]
    ```

    ## Fix safety
    The same as PH001: the fix makes the accumulator `torch.int64`; it is safe when
    every use we can see stays valid and exact on int64, unsafe when the tensor
    escapes or a value of unknown type is added, and missing when a use breaks on
    int64 (dividing in place, adding a float, `ReduceOp.AVG`).
    """

    code = "PH201"
    name = "float-length-accumulator"
    summary = "Lengths (batch sizes, `len()`) accumulated in a float32 tensor"
    fix_availability = FixAvailability.SOMETIMES
    default_severity = Severity.WARNING

    VALID = [
        # element counts are PH001's
        "import torch\nn = torch.zeros(1)\nfor g in gs:\n    n += g.numel()\nprint(n)\n",
        # counting a mask over the whole `(n, -1)` view counts elements
        "import torch\nn = torch.zeros(())\nfor m in masks:\n    n += (m.reshape(m.shape[0], -1) > 0).sum()\nprint(n)\n",
        "import torch\nn = torch.zeros(())\nfor m in masks:\n    n += m.view(m.size(0), -1).sum(1).sum()\nprint(n)\n",
        # a product of two lengths is an element count
        "import torch\nn = torch.zeros(1)\nfor b in bs:\n    n += b.shape[0] * b.shape[1]\nprint(n)\n",
        # in bfloat16 a batch-size total is PH001's: it rounds past 256
        "import torch\nn = torch.zeros(1, dtype=torch.bfloat16)\nfor b in bs:\n    n += len(b)\nprint(n)\n",
        # float64 holds 2^53 samples exactly
        "import torch\nn = torch.zeros(1, dtype=torch.float64)\nfor b in bs:\n    n += len(b)\nprint(n)\n",
        # an int64 accumulator of lengths
        "import torch\nn = torch.zeros(1, dtype=torch.int64)\nfor b in bs:\n    n += len(b)\nprint(n)\n",
    ]
    INVALID = [
        Invalid(
            "import torch\nseen = torch.zeros(1)\nfor b in bs:\n    seen += b.shape[0]\nprint(seen.item())\n",
            fixed="import torch\nseen = torch.zeros(1, dtype=torch.int64)\nfor b in bs:\n    seen += b.shape[0]\nprint(seen.item())\n",
            applicability=Applicability.SAFE,
        ),
        # a sum of lengths is a length; torch.tensor(0.0) with acc.add
        Invalid(
            "import torch\nacc = torch.tensor(0.0)\nfor a, b in pairs:\n    acc = acc.add(len(a) + b.size(0))\nprint(int(acc))\n",
            fixed="import torch\nacc = torch.tensor(0, dtype=torch.int64)\nfor a, b in pairs:\n    acc = acc.add(len(a) + b.size(0))\nprint(int(acc))\n",
            applicability=Applicability.SAFE,
        ),
        # counting a per-sample mask counts samples: `reshape(n, -1)` reduced over its last dim
        Invalid(
            "import torch\nn = torch.zeros(())\nfor m in masks:\n    n += (m.reshape(m.shape[0], -1).sum(dim=-1) > 0).sum()\nprint(n)\n",
            fixed="import torch\nn = torch.zeros((), dtype=torch.int64)\nfor m in masks:\n    n += (m.reshape(m.shape[0], -1).sum(dim=-1) > 0).sum()\nprint(n)\n",
            applicability=Applicability.SAFE,
        ),
        # metric state: escapes through a public attribute
        Invalid(
            "import torch\nclass M:\n    def __init__(self):\n        self.total = torch.tensor(0.0)\n"
            "    def update(self, preds):\n        self.total += preds.shape[0]\n",
            fixed="import torch\nclass M:\n    def __init__(self):\n        self.total = torch.tensor(0, dtype=torch.int64)\n"
            "    def update(self, preds):\n        self.total += preds.shape[0]\n",
            applicability=Applicability.UNSAFE,
        ),
    ]

    def check(self, model: SemanticModel) -> Iterable[Finding]:
        for accumulator in model.accumulators:
            finding = self._check_accumulator(accumulator, model)
            if finding is not None:
                yield finding

    def _check_accumulator(self, accumulator: Accumulator, model: SemanticModel) -> Finding | None:
        hazards = accumulator.float_count_adds()
        if not hazards:
            return None
        dtype = narrowest_dtype(hazards)
        if not only_lengths((add.length for add in hazards), dtype):
            return None  # PH001's
        if dtype == FLOAT64:
            return None  # 2^53 samples: never
        message = (
            f"`{{name}}` adds up sample counts (batch sizes, `len()`) in {dtype.name}, exact only up to "
            f"{dtype.exact_integer_limit_text}"
        )
        return accumulator_finding(accumulator, model, hazards, message, Severity.WARNING)
