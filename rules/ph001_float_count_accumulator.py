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

    The counts are followed where the code sends them: returned by a helper (of this
    module or another one, a tuple's count included), passed as an argument at every
    call site, kept in a dict item (`state["tokens"]`) or built into a list. The
    accumulator may be in the dtype the model runs in (`dtype=hidden_states.dtype`,
    `h.new_zeros(n)`): a warning, since the run decides the width, and an error when
    the project casts its model to half precision (`model.bfloat16()`,
    `Float16Module`, FSDP `MixedPrecision`, `torch_dtype=torch.bfloat16`), which the
    message names. A float32 buffer or metric state counts as float32, and the
    message names such a cast too: it makes the buffer float16 or bfloat16.

    Step counters (`step += 1`) are flagged in bfloat16 and float16, where they stop
    at 256 and 2,048 (an Adam step counter in a bfloat16 default dtype did), and in a
    float32 buffer or default-dtype tensor when the project casts the model or sets a
    half default dtype. A float32 step counter otherwise needs 16.7M steps.

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
    adding counts made float (`+= bincount(x).float()`), rebinding it through float
    arithmetic in a loop or on state (`acc = acc * 0.5 + ...`), `acc.mean()`, or
    `all_reduce` with `ReduceOp.AVG`; nor here when another module makes the tensor
    (the message names where to fix it).
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
        # a helper that returns a loss, not a count: a float total stays quiet
        "import torch\ndef step_loss(logits, y):\n    return torch.nn.functional.cross_entropy(logits, y)\n"
        "def run(batches):\n    total = torch.zeros(1)\n    for b in batches:\n        total += step_loss(b.logits, b.y)\n    print(total)\n",
        # a tuple's float half added, the count half kept in an int64 total
        "import torch\ndef stats(logits, y):\n    return logits.sum(), (y != -100).sum()\n"
        "def run(batches):\n    loss_sum = torch.zeros(1)\n    tokens = torch.zeros(1, dtype=torch.int64)\n"
        "    for b in batches:\n        loss, n = stats(b.logits, b.y)\n        loss_sum += loss\n        tokens += n\n    print(loss_sum, tokens)\n",
        # a private helper called with a float at one site: its parameter is not a count
        "import torch\nclass Meter:\n    def __init__(self):\n        self._total = torch.zeros(1)\n"
        "    def _add(self, amount):\n        self._total += amount\n"
        "    def update(self, mask, loss):\n        self._add(mask.bool().sum())\n        self._add(loss)\n",
        # dict items that hold floats
        "import torch\nstats = {'loss': torch.zeros(1), 'tokens': torch.zeros(1, dtype=torch.int64)}\n"
        "for b in batches:\n    stats['loss'] += b.loss\n    stats['tokens'] += (b.y != -100).sum()\nprint(stats)\n",
        # the dtype of something integer-named is not the model's: `lengths.dtype`
        "import torch\ndef f(lengths, masks):\n    total = torch.zeros(1, dtype=lengths.dtype)\n    for m in masks:\n        total += m.bool().sum()\n    print(total)\n",
        # a 0/1 flag set once per call, not a step counter, even in a bfloat16 default dtype
        "import torch\ntorch.set_default_dtype(torch.bfloat16)\ndef reward(text, answer):\n    correct = torch.tensor(0.0)\n"
        "    if text.strip() == answer:\n        correct += 1\n    return correct\n",
        # a float32 step counter needs 16.7M steps
        "import torch\nstep = torch.zeros((), dtype=torch.float32)\nfor b in batches:\n    step += 1\nprint(step)\n",
        # a float32 step counter in a buffer of a project that never casts the model
        "import torch\nclass Ema(torch.nn.Module):\n    def __init__(self):\n        super().__init__()\n"
        "        self.register_buffer('updates', torch.zeros(()))\n    def forward(self, x):\n        self.updates += 1\n        return x\n",
        # the project's default dtype is float64: `torch.zeros(1)` holds counts to 2^53
        "import torch\ntorch.set_default_dtype(torch.float64)\nhits = torch.zeros(1)\nfor b in batches:\n    hits += (b.pred == b.y).sum()\nprint(hits)\n",
    ]

    INVALID = [
        # a static method is called by its class's name: what its call sites pass is all it gets
        Invalid(
            "import torch\nclass Logging:\n    tracker = {}\n    @staticmethod\n    def save(correct, n_layers, layer):\n"
            "        tracker = Logging.tracker\n        tracker['correct'] = torch.zeros(n_layers)\n        tracker['correct'][layer] += correct.detach()\n"
            "def step(preds, labels):\n    Logging.save((preds == labels).sum().float(), 4, 0)\n"
        ),
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
        # counts returned by a helper of the module
        Invalid(
            "import torch\ndef nonpad(labels):\n    return (labels != -100).sum()\n"
            "def run(batches):\n    tokens = torch.zeros(1)\n    for b in batches:\n        tokens += nonpad(b.labels)\n    print(tokens.item())\n",
            fixed="import torch\ndef nonpad(labels):\n    return (labels != -100).sum()\n"
            "def run(batches):\n    tokens = torch.zeros(1, dtype=torch.int64)\n    for b in batches:\n        tokens += nonpad(b.labels)\n    print(tokens.item())\n",
            applicability=Applicability.SAFE,
        ),
        # the count half of a returned tuple, unpacked
        Invalid(
            "import torch\ndef loss_and_tokens(logits, y):\n    return logits.sum(), (y != -100).sum()\n"
            "def run(batches):\n    seen = torch.tensor(0.0)\n    for b in batches:\n        _, n = loss_and_tokens(b.logits, b.y)\n        seen = seen + n\n    print(int(seen))\n",
            fixed="import torch\ndef loss_and_tokens(logits, y):\n    return logits.sum(), (y != -100).sum()\n"
            "def run(batches):\n    seen = torch.tensor(0, dtype=torch.int64)\n    for b in batches:\n        _, n = loss_and_tokens(b.logits, b.y)\n        seen = seen + n\n    print(int(seen))\n",
            applicability=Applicability.SAFE,
        ),
        # a private method's parameter, given counts at every call site
        Invalid(
            "import torch\nclass Meter:\n    def __init__(self):\n        self._seen = torch.zeros(1)\n"
            "    def _add(self, n):\n        self._seen += n\n"
            "    def update(self, mask):\n        self._add(mask.bool().sum())\n        self._add(mask.numel())\n"
            "    def report(self):\n        print(self._seen.item())\n",
            fixed="import torch\nclass Meter:\n    def __init__(self):\n        self._seen = torch.zeros(1, dtype=torch.int64)\n"
            "    def _add(self, n):\n        self._seen += n\n"
            "    def update(self, mask):\n        self._add(mask.bool().sum())\n        self._add(mask.numel())\n"
            "    def report(self):\n        print(self._seen.item())\n",
            applicability=Applicability.SAFE,
        ),
        # a string-keyed item is a place of its own: `state["tokens"]`
        Invalid(
            "import torch\nstate = {'tokens': torch.zeros(1)}\nfor b in batches:\n    state['tokens'] += (b.y != -100).sum()\nprint(state['tokens'].item())\n",
            fixed="import torch\nstate = {'tokens': torch.zeros(1, dtype=torch.int64)}\nfor b in batches:\n    state['tokens'] += (b.y != -100).sum()\nprint(state['tokens'].item())\n",
            applicability=Applicability.SAFE,
        ),
        # per-class counts stacked from a comprehension
        Invalid(
            "import torch\ndef confusion(batches, k):\n    per_class = torch.zeros(k)\n    for p in batches:\n"
            "        per_class += torch.stack([(p == c).sum() for c in range(k)])\n    print(per_class)\n",
            fixed="import torch\ndef confusion(batches, k):\n    per_class = torch.zeros(k, dtype=torch.int64)\n    for p in batches:\n"
            "        per_class += torch.stack([(p == c).sum() for c in range(k)])\n    print(per_class)\n",
            applicability=Applicability.SAFE,
        ),
        # `else: self.buf = None` does not wipe the buffer's dtype
        Invalid(
            "import torch\nclass Hist:\n    def __init__(self, n, on):\n        if on:\n            self._hits = torch.zeros(n)\n"
            "        else:\n            self._hits = None\n    def update(self, x):\n        self._hits += torch.bincount(x, minlength=4)\n",
            fixed="import torch\nclass Hist:\n    def __init__(self, n, on):\n        if on:\n            self._hits = torch.zeros(n, dtype=torch.int64)\n"
            "        else:\n            self._hits = None\n    def update(self, x):\n        self._hits += torch.bincount(x, minlength=4)\n",
            applicability=Applicability.SAFE,
        ),
        # counts made float before they are added: no fix (int64 rejects the floats)
        Invalid("import torch\nusage = torch.zeros(8)\nfor codes in batches:\n    usage += torch.bincount(codes, minlength=8).float()\nprint(usage)\n"),
        # rebound through float arithmetic in the loop: the int64 fix would not hold
        Invalid("import torch\nacc = torch.zeros(1)\nfor x in xs:\n    acc += (x > 0).sum()\n    acc = acc * 0.5 + acc * 0.5\nprint(acc)\n"),
        # ...or on state every call updates
        Invalid(
            "import torch\nclass Load:\n    def __init__(self, decay=0.9):\n        self._decay = decay\n        self._load = torch.zeros(8)\n"
            "    def observe(self, idx):\n        self._load += torch.bincount(idx, minlength=8)\n"
            "    def end_window(self):\n        self._load = self._load * self._decay\n"
        ),
        # ones as weights: their sum counts
        Invalid(
            "import torch\ntotal = torch.zeros(())\nfor ids in batches:\n    total += torch.ones_like(ids).masked_fill(ids == 0, 0).sum()\nprint(total.item())\n",
            fixed="import torch\ntotal = torch.zeros((), dtype=torch.int64)\nfor ids in batches:\n    total += torch.ones_like(ids).masked_fill(ids == 0, 0).sum()\nprint(total.item())\n",
            applicability=Applicability.SAFE,
        ),
        # counts in the dtype of the model's data: a warning, the width is the run's
        Invalid(
            "import torch\ndef route(hidden_states, expert_ids, n):\n    load = torch.zeros(n, dtype=hidden_states.dtype)\n"
            "    for ids in expert_ids:\n        load += torch.bincount(ids, minlength=n)\n    print(load)\n",
            fixed="import torch\ndef route(hidden_states, expert_ids, n):\n    load = torch.zeros(n, dtype=torch.int64)\n"
            "    for ids in expert_ids:\n        load += torch.bincount(ids, minlength=n)\n    print(load)\n",
            applicability=Applicability.SAFE,
            severity=Severity.WARNING,
        ),
        # ... an error once the project casts the model to half precision
        Invalid(
            "import torch\ndef route(hidden_states, expert_ids, n):\n    load = hidden_states.new_zeros(n)\n"
            "    for ids in expert_ids:\n        load += torch.bincount(ids, minlength=n)\n    print(load)\n"
            "def build(model):\n    return model.bfloat16()\n",
            fixed="import torch\ndef route(hidden_states, expert_ids, n):\n    load = hidden_states.new_zeros(n, dtype=torch.int64)\n"
            "    for ids in expert_ids:\n        load += torch.bincount(ids, minlength=n)\n    print(load)\n"
            "def build(model):\n    return model.bfloat16()\n",
            applicability=Applicability.SAFE,
            severity=Severity.ERROR,
        ),
        # a bfloat16 step counter stops at 256
        Invalid(
            "import torch\nstep = torch.zeros((), dtype=torch.bfloat16)\nfor b in batches:\n    step += 1\nprint(step.item())\n",
            fixed="import torch\nstep = torch.zeros((), dtype=torch.int64)\nfor b in batches:\n    step += 1\nprint(step.item())\n",
            applicability=Applicability.SAFE,
        ),
        # a float32 step counter in the default dtype, which the project makes bfloat16
        Invalid(
            "import torch\ntorch.set_default_dtype(torch.bfloat16)\nclass Adam:\n    def __init__(self):\n        self._step = torch.tensor(0.0)\n"
            "    def step(self):\n        self._step += 1\n        return self._step.item()\n",
            fixed="import torch\ntorch.set_default_dtype(torch.bfloat16)\nclass Adam:\n    def __init__(self):\n        self._step = torch.tensor(0, dtype=torch.int64)\n"
            "    def step(self):\n        self._step += 1\n        return self._step.item()\n",
            applicability=Applicability.SAFE,
            severity=Severity.ERROR,
        ),
        # a float32 buffer counting steps, in a project that casts the model with `.half()`
        Invalid(
            "import torch\nclass Ema(torch.nn.Module):\n    def __init__(self):\n        super().__init__()\n"
            "        self.register_buffer('updates', torch.zeros(()))\n    def forward(self, x):\n        self.updates += 1\n        return x\n"
            "model = Ema().half()\n",
            fixed="import torch\nclass Ema(torch.nn.Module):\n    def __init__(self):\n        super().__init__()\n"
            "        self.register_buffer('updates', torch.zeros((), dtype=torch.int64))\n    def forward(self, x):\n        self.updates += 1\n        return x\n"
            "model = Ema().half()\n",
            applicability=Applicability.UNSAFE,
            severity=Severity.ERROR,
        ),
        # state joined over a rescaling elsewhere still adds counts into float32 (and the
        # rescaling blocks the fix)
        Invalid(
            "import torch\nclass Tokens:\n    def __init__(self):\n        self._n = torch.zeros(())\n"
            "    def update(self, labels):\n        self._n += (labels != -100).sum()\n"
            "    def rescale(self, old, new):\n        self._n = self._n * (new / old)\n"
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
            limit = "256 in bfloat16 (2,048 in float16)"
        else:
            what, limit = _dtype_text(dtype, accumulator), dtype.exact_integer_limit_text
        message = f"`{{name}}` counts steps in {what}, which stops growing at {limit}"
        severity = Severity.WARNING if dtype is RUNTIME_FLOAT else Severity.ERROR
        finding = accumulator_finding(accumulator, model, steps, message, severity)
        return replace(finding, conditions=conditions or _conditions(dtype, accumulator))


def _dtype_text(dtype, accumulator: Accumulator) -> str:
    source = accumulator.creation.dtype_source
    if dtype is RUNTIME_FLOAT and source:
        return f"{dtype.label} ({source})"
    if dtype == FLOAT32 and accumulator.creation.from_default:
        return "float32 (the default dtype)"
    return dtype.label


def _conditions(dtype, accumulator: Accumulator) -> tuple[str, ...]:
    if dtype is RUNTIME_FLOAT:
        return (RUNTIME,)
    conditions = []
    if accumulator.creation.module_state and dtype == FLOAT32:
        conditions.append(CAST)
    if accumulator.creation.from_default and dtype == FLOAT32:
        conditions.append(DEFAULT)
    return tuple(conditions)
