"""PH005 int32-counter."""
from __future__ import annotations

from typing import Iterable

from precision_lint.diagnostics import Applicability, Severity
from precision_lint.fixes.safety import accumulator_finding
from precision_lint.model.accumulators import Accumulator, AddendKind
from precision_lint.model.dtypes import INT32
from precision_lint.model.expressions import find_arg
from precision_lint.model.semantic import SemanticModel
from precision_lint.model.torch_api import COLLECTIVES, SUMMING_COLLECTIVES
from precision_lint.rule import Finding, FixAvailability, Invalid, Rule


class Int32Counter(Rule):
    """
    ## What it does
    Checks for integer counts (`len(batch)`, `x.numel()`, `labels.size(0)`,
    `(labels != -100).sum()`, ...) added up in an int32 tensor:
    `torch.zeros(..., dtype=torch.int32)`, `dtype=torch.int`, `torch.IntTensor(...)`,
    `torch.cuda.IntTensor(...)`, and NumPy totals (`np.int32(0)`,
    `np.zeros(k, dtype=np.int32)`). Also `all_reduce` of int32 counts, whose sum
    over ranks can pass 2^31 when each rank's count does not.

    ## Why is this bad?
    int32 holds at most 2^31-1 = 2,147,483,647. One more and an in-place add wraps
    silently to -2,147,483,648; storing a larger Python int into an int32 tensor
    raises instead. Two billion samples or tokens is days of training, not years:
    700K iterations at a global batch of 3,072 is 2.15 billion samples, which broke
    Megatron-Bridge's checkpoint save until its counters became int64. NumPy 2 keeps
    `np.int32 + int` in int32 and wraps with only a warning: llm.c reported 1.66B
    tokens for 10.25B. `torch.int`
    reads like Python's `int` but is int32; and adding an int64 count to an int32
    tensor in place keeps it int32.

    ## Example
    ```python
    consumed_tokens = torch.zeros([], dtype=torch.int, device="cuda")
    for batch in microbatches:
        consumed_tokens += (batch["labels"] != -100).sum()
    ```

    Use instead:
    ```python
    consumed_tokens = torch.zeros([], dtype=torch.int64, device="cuda")
    for batch in microbatches:
        consumed_tokens += (batch["labels"] != -100).sum()
    ```

    ## Fix safety
    The fix makes the accumulator `torch.int64` (never `torch.int`, which is int32);
    a legacy `torch.cuda.IntTensor` becomes `torch.cuda.LongTensor`. It is safe when
    every use of the accumulator we can see stays valid and exact on int64: adding
    counts, `all_reduce` with SUM, `.item()`, `int()`, dividing into a new tensor,
    comparing, printing.

    It is unsafe when the tensor escapes where we cannot see (returned, stored on a
    public attribute or a registered buffer, passed to another function: a kernel
    may require int32, and a checkpoint stores the dtype), or when a value of unknown
    type is added to it (the policy PH001 follows too).

    There is no fix when a use breaks on int64, such as `acc.mean()` or `all_reduce`
    with `ReduceOp.AVG`.

    int32 tensors used for small fixed things (overflow flags, offsets, a step
    incremented by 1) are not flagged: only counts added up are.
    """

    code = "PH005"
    name = "int32-counter"
    summary = "Integer counts accumulated in an int32 tensor"
    fix_availability = FixAvailability.SOMETIMES

    VALID = [
        # a sample count summed over ranks in int32 needs 2.1 billion samples
        "import torch\nimport torch.distributed as dist\nn = torch.tensor(len(dataset), dtype=torch.int32)\ndist.all_reduce(n)\n",
        # int32 counts gathered, not summed
        "import torch\nimport torch.distributed as dist\nn = (labels != -100).sum().int()\nout = [torch.zeros_like(n) for _ in range(4)]\ndist.all_gather(out, n)\n",
        # a NumPy int64 total
        "import numpy as np\ntotal = np.int64(0)\nfor shard in shards:\n    total += len(shard)\nprint(total)\n",
        # an int64 accumulator
        "import torch\nn = torch.zeros(1, dtype=torch.int64)\nfor b in bs:\n    n += (b != -100).sum()\n",
        # an int32 overflow flag filled by a kernel and read, never added to
        "import torch\nflag = torch.cuda.IntTensor([0])\napply_kernel(flag, grads)\nif flag.item():\n    skip_step()\n",
        # a step counter incremented by a literal 1 is not a count of samples
        "import torch\nstep = torch.zeros(1, dtype=torch.int32)\nfor b in bs:\n    step += 1\n",
        # int32 counts added into an int64 accumulator
        "import torch\nn = torch.zeros(1, dtype=torch.int64)\nfor m in ms:\n    n += (m > 0).sum().int()\n",
        # a float accumulator of counts is PH001's, not this rule's
        "import torch\nn = torch.zeros(1)\nfor b in bs:\n    n += b.numel()\n",
        # `t = t + count` with a 0-dim int32 t gives a new int64 tensor (0-dim int64 wins)
        "import torch\nt = torch.zeros([], dtype=torch.int)\nfor b in bs:\n    t = t + (b != -100).sum()\n",
        # unknown dtype, unknown addends: quiet
        "import torch\nn = torch.zeros(1, dtype=dtype)\nfor b in bs:\n    n += len(b)\n",
        "import torch\noffsets = torch.zeros(8, dtype=torch.int32)\nfor lengths in batches:\n    offsets += lengths\n",
        # converted to int64 before counts arrive
        "import torch\nn = torch.zeros(1, dtype=torch.int32)\nn = n.long()\nfor b in bs:\n    n += len(b)\n",
        # a Python int plus int64 counts becomes an int64 tensor
        "total = 0\nfor b in bs:\n    total += (b != -100).sum()\n",
    ]

    INVALID = [
        # a per-rank count made int32, then summed over thousands of ranks
        Invalid("import torch\nimport torch.distributed as dist\nn = (labels != -100).sum().int()\ndist.all_reduce(n)\n"),
        # NumPy 2 keeps an int32 total int32 when a Python int is added: it wraps
        Invalid(
            "import numpy as np\ntotal = np.int32(0)\nfor shard in shards:\n    total += len(shard)\nprint(total)\n",
            fixed="import numpy as np\ntotal = np.int64(0)\nfor shard in shards:\n    total += len(shard)\nprint(total)\n",
            applicability=Applicability.SAFE,
        ),
        Invalid(
            "import numpy as np\nhist = np.zeros(8, dtype='int32')\nfor tokens in docs:\n    hist[0] += len(tokens)\nprint(hist)\n",
            fixed="import numpy as np\nhist = np.zeros(8, dtype='int64')\nfor tokens in docs:\n    hist[0] += len(tokens)\nprint(hist)\n",
            applicability=Applicability.SAFE,
        ),
        # Megatron's per-step token total: `torch.int` is int32
        Invalid(
            "import torch\ntotal = torch.zeros([], dtype=torch.int, device='cuda')\nfor b in bs:\n"
            "    total += (b != -100).sum()\nprint(total.item())\n",
            fixed="import torch\ntotal = torch.zeros([], dtype=torch.int64, device='cuda')\nfor b in bs:\n"
            "    total += (b != -100).sum()\nprint(total.item())\n",
            applicability=Applicability.SAFE,
        ),
        # `acc = acc + n` on a dimensioned int32 tensor stays int32
        Invalid(
            "import torch\nseen = torch.zeros(1, dtype=torch.int32)\nfor b in bs:\n    seen = seen + len(b)\nprint(int(seen))\n",
            fixed="import torch\nseen = torch.zeros(1, dtype=torch.int64)\nfor b in bs:\n    seen = seen + len(b)\nprint(int(seen))\n",
            applicability=Applicability.SAFE,
        ),
        # legacy constructor, add_; returned: unsafe
        Invalid(
            "import torch\ndef count(xs):\n    n = torch.cuda.IntTensor([0])\n    for x in xs:\n"
            "        n.add_(x.eq(0).sum())\n    return n\n",
            fixed="import torch\ndef count(xs):\n    n = torch.cuda.LongTensor([0])\n    for x in xs:\n"
            "        n.add_(x.eq(0).sum())\n    return n\n",
            applicability=Applicability.UNSAFE,
        ),
        # from-imports with aliases; a pair of counters filled by subscript
        Invalid(
            "import torch\nfrom torch import int32 as i32\nc = torch.tensor([0, 0], dtype=i32)\nfor p, y in data:\n"
            "    c[0] += (p == y).sum()\n    c[1] = c[1] + y.size(0)\nprint(c.tolist())\n",
            fixed="import torch\nfrom torch import int32 as i32\nc = torch.tensor([0, 0], dtype=torch.int64)\nfor p, y in data:\n"
            "    c[0] += (p == y).sum()\n    c[1] = c[1] + y.size(0)\nprint(c.tolist())\n",
            applicability=Applicability.SAFE,
        ),
        # new_zeros with dtype=torch.int; torch.add(..., out=n)
        Invalid(
            "import torch\nn = x.new_zeros(1, dtype=torch.int)\nfor y in ys:\n    torch.add(n, y.count_nonzero(), out=n)\nprint(n)\n",
            fixed="import torch\nn = x.new_zeros(1, dtype=torch.int64)\nfor y in ys:\n    torch.add(n, y.count_nonzero(), out=n)\nprint(n)\n",
            applicability=Applicability.SAFE,
        ),
        # private state across methods: safe
        Invalid(
            "import torch\nclass Progress:\n    def __init__(self):\n        self._samples = torch.zeros(1, dtype=torch.int32)\n"
            "    def update(self, batch):\n        self._samples += batch.size(0)\n"
            "    def log(self):\n        print(int(self._samples))\n",
            fixed="import torch\nclass Progress:\n    def __init__(self):\n        self._samples = torch.zeros(1, dtype=torch.int64)\n"
            "    def update(self, batch):\n        self._samples += batch.size(0)\n"
            "    def log(self):\n        print(int(self._samples))\n",
            applicability=Applicability.SAFE,
        ),
        # a registered buffer is saved in state_dict with its dtype: unsafe
        Invalid(
            "import torch\nclass Seen(torch.nn.Module):\n    def __init__(self):\n        super().__init__()\n"
            "        self.register_buffer('tokens', torch.zeros(1, dtype=torch.int32))\n"
            "    def forward(self, x):\n        self.tokens += x.numel()\n        return x\n",
            fixed="import torch\nclass Seen(torch.nn.Module):\n    def __init__(self):\n        super().__init__()\n"
            "        self.register_buffer('tokens', torch.zeros(1, dtype=torch.int64))\n"
            "    def forward(self, x):\n        self.tokens += x.numel()\n        return x\n",
            applicability=Applicability.UNSAFE,
        ),
        # a value of unknown type added next to the counts: unsafe
        Invalid(
            "import torch\nn = torch.IntTensor([0])\nfor b in bs:\n    n += len(b)\n    n += b.extra\nprint(n)\n",
            fixed="import torch\nn = torch.LongTensor([0])\nfor b in bs:\n    n += len(b)\n    n += b.extra\nprint(n)\n",
            applicability=Applicability.UNSAFE,
        ),
        # averaged across ranks: no fix
        Invalid(
            "import torch\nimport torch.distributed as dist\nn = torch.zeros(1, dtype=torch.int32, device='cuda')\n"
            "for b in bs:\n    n += b.size(0)\ndist.all_reduce(n, op=dist.ReduceOp.AVG)\n",
            fixed=None,
        ),
        # NumPy's bincount counts
        Invalid(
            "import numpy as np\ncounts = np.zeros(50257, dtype=np.int32)\nfor ids in shards:\n    counts += np.bincount(ids, minlength=50257)\nprint(counts)\n",
            fixed="import numpy as np\ncounts = np.zeros(50257, dtype=np.int64)\nfor ids in shards:\n    counts += np.bincount(ids, minlength=50257)\nprint(counts)\n",
            applicability=Applicability.SAFE,
        ),
    ]

    def check(self, model: SemanticModel) -> Iterable[Finding]:
        for accumulator in model.accumulators:
            finding = self._check_accumulator(accumulator, model)
            if finding is not None:
                yield finding
        yield from self._int32_reductions(model)

    def _int32_reductions(self, model: SemanticModel) -> Iterable[Finding]:
        """`all_reduce` of int32 counts: each rank's count fits, their sum may not."""
        for fact in model.calls:
            if fact.qualified not in SUMMING_COLLECTIVES:
                continue
            keyword, position = COLLECTIVES[fact.qualified]
            arg = find_arg(fact.node, keyword, position)
            value = model.value_of(arg.value) if arg is not None else None
            # a length (samples, `len(dataset)`) needs 2.1 billion of them: PH201's domain
            if value is not None and value.is_tensor and value.dtype == INT32 and value.count and not value.length:
                yield Finding(
                    fact.node,
                    f"`{fact.qualified.rpartition('.')[2]}` sums int32 counts over ranks, which wraps past 2^31-1 = 2,147,483,647",
                    Severity.ERROR,
                    note="No fix here: keep the count int64 where it is converted to int32 (`.int()`, `dtype=torch.int`).",
                )

    def _check_accumulator(self, accumulator: Accumulator, model: SemanticModel) -> Finding | None:
        hazards = [add for add in accumulator.adds if add.kind is AddendKind.COUNT and add.dtype_after == INT32]
        if not hazards:
            return None
        message = "`{name}` accumulates integer counts in int32, which wraps around past 2^31-1 = 2,147,483,647"
        return accumulator_finding(accumulator, model, hazards, message, Severity.ERROR)
