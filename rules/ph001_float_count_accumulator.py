"""PH001 float-count-accumulator."""
from __future__ import annotations

from dataclasses import replace
from typing import Iterable

from precision_lint.conditions import CAST, DEFAULT, RUNTIME, needs
from precision_lint.diagnostics import Applicability, Severity
from precision_lint.fixes.safety import accumulator_finding
from precision_lint.model.accumulators import Accumulator, narrowest_dtype, only_lengths
from precision_lint.model.dtypes import FLOAT32, FLOAT64, RUNTIME_FLOAT
from precision_lint.model.evidence import DEFAULT_HALF, HALF
from precision_lint.model.semantic import SemanticModel
from precision_lint.rule import Finding, FixAvailability, Invalid, Rule


class FloatCountAccumulator(Rule):
    """
    ## What it does
    Checks for integer counts (`(x == 0).sum()`, `torch.count_nonzero(x)`,
    `x.numel()`, `len(batch)`, ...) added up in a floating-point tensor.

    ## Why is this bad?
    A float holds every integer only up to a limit: 2^24 = 16,777,216 for float32,
    2^11 = 2,048 for float16, 2^8 = 256 for bfloat16 (2^53 for float64). Past it the
    running total is rounded at every step, or stops growing: at 1e9 the float32
    spacing is 64, so adding a count of 32 or less changes nothing. The total then
    depends on the order of the additions. Megatron-LM's zero-gradient count, summed
    into `torch.zeros(1, dtype=torch.float)`, changed with the bucket layout until
    the accumulator became int64; torchmetrics' confusion matrices had the same bug.

    A Python `0.0` is no better: adding an int64 tensor to it gives a float32 tensor.

    ## Example
    ```python
    total_zeros = torch.zeros(1, dtype=torch.float, device="cuda")
    for grad in grads:
        total_zeros += grad.numel() - torch.count_nonzero(grad)
    ```

    Use instead:
    ```python
    total_zeros = torch.zeros(1, dtype=torch.int64, device="cuda")
    for grad in grads:
        total_zeros += grad.numel() - torch.count_nonzero(grad)
    ```

    ## Fix safety
    The fix makes the accumulator `torch.int64` (never `torch.int`, which is int32).
    It is safe when every use of the accumulator we can see stays valid and exact on
    int64: adding counts, `all_reduce` with SUM, `.item()`, `int()`, dividing into a
    new tensor, comparing, printing. `.item()` then returns an `int` instead of a
    `float`.

    It is unsafe when the tensor escapes where we cannot see (returned, stored on a
    public attribute or a registered buffer, passed to another function), or when a
    value of unknown type is added to it: an int64 tensor raises on `+= 0.5`.

    There is no fix when a use breaks on int64: dividing or scaling by a float in
    place (`acc /= n`, `acc.div_(n)`, `acc.mul_(0.5)`), adding a float (`acc += loss`),
    `acc.mean()`, or `all_reduce` with `ReduceOp.AVG`.
    """

    code = "PH001"
    name = "float-count-accumulator"
    summary = "Integer counts accumulated in a floating-point tensor"
    fix_availability = FixAvailability.SOMETIMES

    VALID = [
        # lengths (batch sizes, `len()`) in float32 need 16.7M samples: PH201's, off by default
        "import torch\nseen = torch.zeros(1)\nfor b in bs:\n    seen += b.shape[0]\n    seen += len(b)\nprint(seen)\n",
        # whole-number literals are not counts: `+= 1` into a float tensor is not
        # flagged (a known false negative; see the README), test data stays quiet
        "import torch\ndata = torch.zeros(8)\nfor i in idx:\n    data[i] += 1\n",
        # an int64 accumulator
        "import torch\nn = torch.zeros(1, dtype=torch.int64)\nfor g in gs:\n    n += (g == 0).sum()\n",
        # torch.long is int64 too; int dtype builtin is int64
        "import torch\nn = torch.zeros((), dtype=torch.long)\nm = torch.zeros(1, dtype=int)\nfor g in gs:\n    n += g.numel()\n    m += len(g)\n",
        # floating values into a floating accumulator
        "import torch\nloss_sum = torch.zeros(1)\nfor b in batches:\n    loss_sum += model(b).loss\n",
        # a fraction is not a count
        "import torch\nacc = torch.tensor(0.0)\nfor p, y in data:\n    acc += (p == y).float().mean()\n",
        "import torch\nacc = torch.tensor(0.0)\nfor m in masks:\n    acc += m.mean()\n",
        # a count times a float or unknown weight is not a count
        "import torch\nacc = torch.zeros(1)\nfor m, w in items:\n    acc += m.sum() * 0.5\n    acc += (m > 0).sum() * w\n",
        # Python int accumulator
        "total = 0\nfor b in batches:\n    total += (b == 0).sum()\n",
        # Python floats accumulating .item() numbers stay Python floats (float64)
        "total = 0.0\nfor b in batches:\n    total += (b == 0).sum().item()\n    total += len(b)\n",
        # converted to an integer dtype before counts are added
        "import torch\nacc = torch.zeros(1)\nacc = acc.long()\nfor g in gs:\n    acc += torch.count_nonzero(g)\n",
        # rebound to an integer tensor before counts are added
        "import torch\nacc = torch.zeros(1)\nacc = torch.zeros(1, dtype=torch.int64)\nfor g in gs:\n    acc += torch.count_nonzero(g)\n",
        # unknown dtype stays quiet
        "import torch\nacc = torch.zeros(1, dtype=dtype)\nfor g in gs:\n    acc += torch.count_nonzero(g)\n",
        "import torch\nacc = torch.zeros_like(x)\nfor g in gs:\n    acc += torch.count_nonzero(g)\n",
        # unknown addends stay quiet
        "import torch\nacc = torch.zeros(1)\nfor g in gs:\n    acc += g\n",
        # a name shadowing torch is not torch
        "import torch\ndef f(torch, gs):\n    acc = torch.zeros(1)\n    for g in gs:\n        acc += (g == 0).sum()\n",
        # a float accumulator that also takes a loss is not a counter
        "import torch\nacc = torch.zeros(1)\nfor b in bs:\n    acc += (b == 0).sum()\n    acc += b.loss.float()\n",
        # a conversion to a tensor's dtype we cannot know is not a crash, nor a finding
        "import torch\ndef f(x, d):\n    t = torch.zeros(3, dtype=d)\n    return x.type_as(t)\n",
        # int64 counts into an int64 all-reduce
        "import torch\nimport torch.distributed as dist\nn = torch.tensor(0, device='cuda')\nfor b in bs:\n    n += b.ne(-100).sum()\ndist.all_reduce(n, op=dist.ReduceOp.SUM)\n",
    ]

    INVALID = [
        # Megatron's count_zeros_fp32 shape: safe fix
        Invalid(
            "import torch\n"
            "def count_zeros(params, group):\n"
            "    total = torch.zeros(1, dtype=torch.float, device='cuda')\n"
            "    for p in params:\n"
            "        grad = p.grad.detach()\n"
            "        num_zeros = grad.numel() - torch.count_nonzero(grad)\n"
            "        total = num_zeros + total\n"
            "    torch.distributed.all_reduce(total, op=torch.distributed.ReduceOp.SUM, group=group)\n"
            "    total = total.item()\n"
            "    return total\n",
            fixed="import torch\n"
            "def count_zeros(params, group):\n"
            "    total = torch.zeros(1, dtype=torch.int64, device='cuda')\n"
            "    for p in params:\n"
            "        grad = p.grad.detach()\n"
            "        num_zeros = grad.numel() - torch.count_nonzero(grad)\n"
            "        total = num_zeros + total\n"
            "    torch.distributed.all_reduce(total, op=torch.distributed.ReduceOp.SUM, group=group)\n"
            "    total = total.item()\n"
            "    return total\n",
            applicability=Applicability.SAFE,
        ),
        # no dtype: default float32; acc.add_
        Invalid(
            "import torch\nacc = torch.zeros(1)\nfor x in xs:\n    acc.add_((x > 0).sum())\nprint(acc.item())\n",
            fixed="import torch\nacc = torch.zeros(1, dtype=torch.int64)\nfor x in xs:\n    acc.add_((x > 0).sum())\nprint(acc.item())\n",
            applicability=Applicability.SAFE,
        ),
        # torch.tensor(0.0) and acc = acc.add(n)
        Invalid(
            "import torch\nacc = torch.tensor(0.0)\nfor b in bs:\n    acc = acc.add(b.numel())\nprint(int(acc))\n",
            fixed="import torch\nacc = torch.tensor(0, dtype=torch.int64)\nfor b in bs:\n    acc = acc.add(b.numel())\nprint(int(acc))\n",
            applicability=Applicability.SAFE,
        ),
        # torch.tensor([0.0, 0.0]) with subscripted adds
        Invalid(
            "import torch\nc = torch.tensor([0.0, 0.0])\nfor p, y in data:\n    c[0] += (p == y).sum()\n    c[1] = c[1] + y.size(0)\nprint(c.tolist())\n",
            fixed="import torch\nc = torch.tensor([0, 0], dtype=torch.int64)\nfor p, y in data:\n    c[0] += (p == y).sum()\n    c[1] = c[1] + y.size(0)\nprint(c.tolist())\n",
            applicability=Applicability.SAFE,
        ),
        # aliases and bfloat16
        Invalid(
            "import torch as th\nacc = th.zeros(1, dtype=th.bfloat16)\nfor b in bs:\n    acc = th.add(acc, b.shape[0])\nprint(acc)\n",
            fixed="import torch as th\nacc = th.zeros(1, dtype=th.int64)\nfor b in bs:\n    acc = th.add(acc, b.shape[0])\nprint(acc)\n",
            applicability=Applicability.SAFE,
        ),
        # from-imports with aliases; no torch module name: the fix adds the import
        Invalid(
            "from torch import zeros as z, float32 as f32, count_nonzero\nacc = z(1, dtype=f32)\nfor g in gs:\n    acc += count_nonzero(g)\nprint(acc)\n",
            fixed="import torch\nfrom torch import zeros as z, float32 as f32, count_nonzero\nacc = z(1, dtype=torch.int64)\nfor g in gs:\n    acc += count_nonzero(g)\nprint(acc)\n",
            applicability=Applicability.SAFE,
        ),
        # a Python 0.0 that becomes float32 once a count tensor is added
        Invalid(
            "total = 0.0\nfor p, y in data:\n    total += (p == y).sum()\nprint(total)\n",
            fixed="total = 0\nfor p, y in data:\n    total += (p == y).sum()\nprint(total)\n",
            applicability=Applicability.SAFE,
        ),
        # legacy constructor; returned: unsafe
        Invalid(
            "import torch\ndef f(xs):\n    n = torch.cuda.FloatTensor([0])\n    for x in xs:\n        n += x.eq(0).sum()\n    return n\n",
            fixed="import torch\ndef f(xs):\n    n = torch.cuda.LongTensor([0])\n    for x in xs:\n        n += x.eq(0).sum()\n    return n\n",
            applicability=Applicability.UNSAFE,
        ),
        # torch.add(..., out=acc); builtin float dtype is float64 (a warning)
        Invalid(
            "import torch\nacc = torch.zeros(1, dtype=float)\nfor x in xs:\n    torch.add(acc, torch.isfinite(x).sum(), out=acc)\nprint(acc)\n",
            fixed="import torch\nacc = torch.zeros(1, dtype=torch.int64)\nfor x in xs:\n    torch.add(acc, torch.isfinite(x).sum(), out=acc)\nprint(acc)\n",
            applicability=Applicability.SAFE,
        ),
        # new_zeros of a known float tensor; divided in place: no fix
        Invalid(
            "import torch\nbase = torch.zeros(4, dtype=torch.half)\nacc = base.new_zeros(1)\nfor m in ms:\n    acc += m.bool().sum()\nacc /= len(ms)\n",
            fixed=None,
        ),
        # reset with fill_(0.0): still safe on int64
        Invalid(
            "import torch\nn = torch.zeros(1)\nfor x in xs:\n    n += x.numel()\nprint(n.item())\nn.fill_(0.0)\n",
            fixed="import torch\nn = torch.zeros(1, dtype=torch.int64)\nfor x in xs:\n    n += x.numel()\nprint(n.item())\nn.fill_(0.0)\n",
            applicability=Applicability.SAFE,
        ),
        # scaled by a float in place: no fix
        Invalid("import torch\nn = torch.zeros(1)\nfor x in xs:\n    n += x.numel()\nn.mul_(0.5)\n", fixed=None),
        # self state across methods: private attribute used only in the class
        Invalid(
            "import torch\nclass Acc:\n    def __init__(self):\n        self._correct = torch.tensor(0.0)\n"
            "    def update(self, p, y):\n        self._correct += (p == y).sum()\n"
            "    def compute(self, n):\n        return self._correct.item() / n\n",
            fixed="import torch\nclass Acc:\n    def __init__(self):\n        self._correct = torch.tensor(0, dtype=torch.int64)\n"
            "    def update(self, p, y):\n        self._correct += (p == y).sum()\n"
            "    def compute(self, n):\n        return self._correct.item() / n\n",
            applicability=Applicability.SAFE,
        ),
        # a registered buffer is saved in state_dict: unsafe
        Invalid(
            "import torch\nclass Counter(torch.nn.Module):\n    def __init__(self):\n        super().__init__()\n"
            "        self.register_buffer('seen', torch.zeros(1))\n"
            "    def forward(self, x):\n        self.seen += x.numel()\n        return x\n",
            fixed="import torch\nclass Counter(torch.nn.Module):\n    def __init__(self):\n        super().__init__()\n"
            "        self.register_buffer('seen', torch.zeros(1, dtype=torch.int64))\n"
            "    def forward(self, x):\n        self.seen += x.numel()\n        return x\n",
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
            return self._step_counter(accumulator, model)
        dtype = narrowest_dtype(hazards)
        if only_lengths((add.length for add in hazards), dtype):
            return None  # sample counts in float32: PH201's, off by default
        message = (
            f"`{{name}}` accumulates integer counts in {_dtype_text(dtype, accumulator)}, which is exact only up to "
            f"{dtype.exact_integer_limit_text}"
        )
        severity = Severity.WARNING if dtype in (FLOAT64, RUNTIME_FLOAT) else Severity.ERROR
        finding = accumulator_finding(accumulator, model, hazards, message, severity)
        return replace(finding, conditions=_conditions(dtype, accumulator))

    def _step_counter(self, accumulator: Accumulator, model: SemanticModel) -> Finding | None:
        """`step += 1` into bfloat16/float16 stops at 256/2,048; into a float32 buffer
        or default-dtype tensor only once the project runs it in half precision."""
        steps = accumulator.step_adds()
        if not steps:
            return None
        dtype = narrowest_dtype(steps)
        creation = accumulator.creation
        conditions: tuple[str, ...] = ()
        if dtype == FLOAT32:
            if creation.module_state:
                conditions = (needs(HALF),)
            elif creation.from_default:
                conditions = (needs(DEFAULT_HALF),)
            else:
                return None  # a float32 step counter needs 16.7M steps
            what = "a float32 buffer that a half-precision model casts" if creation.module_state else "the default dtype"
        else:
            what = _dtype_text(dtype, accumulator)
        message = f"`{{name}}` counts steps in {what}, which stops growing at {dtype.exact_integer_limit_text}"
        severity = Severity.WARNING if dtype is RUNTIME_FLOAT else Severity.ERROR
        finding = accumulator_finding(accumulator, model, steps, message, severity)
        return replace(finding, conditions=conditions or _conditions(dtype, accumulator))


def _dtype_text(dtype, accumulator: Accumulator) -> str:
    source = accumulator.creation.dtype_source
    return f"{dtype.label} ({source})" if dtype is RUNTIME_FLOAT and source else dtype.label


def _conditions(dtype, accumulator: Accumulator) -> tuple[str, ...]:
    if dtype is RUNTIME_FLOAT:
        return (RUNTIME,)
    conditions = []
    if accumulator.creation.module_state and dtype == FLOAT32:
        conditions.append(CAST)
    if accumulator.creation.from_default and dtype == FLOAT32:
        conditions.append(DEFAULT)
    return tuple(conditions)
