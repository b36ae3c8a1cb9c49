"""PH003 float-count-collective."""
from __future__ import annotations

import re
from typing import Iterable

import libcst as cst

from precision_lint.conditions import RUNTIME
from precision_lint.diagnostics import Severity
from precision_lint.model.dtypes import RUNTIME_FLOAT
from precision_lint.model.accumulators import Accumulator, narrowest_dtype, only_lengths
from precision_lint.model.expressions import find_arg
from precision_lint.model.semantic import SemanticModel
from precision_lint.model.torch_api import COLLECTIVE_METHODS, COLLECTIVES
from precision_lint.model.values import FLOAT_COUNT_ELSEWHERE
from precision_lint.model.walk import walk
from precision_lint.rule import Finding, FixAvailability, Invalid, Rule



class FloatCountCollective(Rule):
    """
    ## What it does
    Checks for `torch.distributed` collectives (`all_reduce`, `reduce`,
    `all_gather`, `reduce_scatter` and their `_tensor`/`_into_tensor` variants, through
    any alias such as `dist`) of a floating tensor that holds integer counts: an
    accumulator of counts (PH001), a count converted to float or summed in float
    (PH002), a `[loss, count]` tensor packed into one float tensor, or a Python count
    wrapped into one (`torch.tensor(n, dtype=torch.float)`, `FloatTensor([float(n)])`).
    DeepSpeed's `deepspeed.comm`, `torch.distributed`'s functional and autograd
    collectives, and framework helpers (`accelerator.reduce(t)`, `self.all_gather(t)`,
    `strategy.reduce(t)`) are collectives too; so are counts made float in a helper
    or another module. A parameter named a mask (`loss_mask`, `attention_mask`) holds
    0/1 values: its sum is a count, whatever dtype the caller gave it. A collective
    over the context-parallel group (`group=cp_group`, `mpu.get_context_parallel_group()`)
    sums the shards of one micro-batch, and is not reported.

    ## Why is this bad?
    Each rank's count may be small; their sum over thousands of ranks is not. A float32
    all-reduce of per-rank counts of 600,000,001 and 600,000,002 gives 1,200,000,000;
    in int64 it gives 1,200,000,003. Megatron-LM all-reduced its zero-gradient count in
    float32 until the accumulator became int64.

    ## Example
    ```python
    tokens = (labels != -100).sum().float()
    dist.all_reduce(tokens)
    ```

    Use instead:
    ```python
    tokens = (labels != -100).sum()  # int64
    dist.all_reduce(tokens)
    ```

    ## Fix safety
    None here: the fix is the one of the line that made the tensor floating (PH001 or
    PH002), which the diagnostic names as a related location.
    """

    code = "PH003"
    name = "float-count-collective"
    summary = "A collective over a floating tensor that holds counts"
    fix_availability = FixAvailability.NONE

    VALID = [
        # summed over the context-parallel ranks: the shards of one micro-batch's tokens
        "import torch\nimport torch.distributed as dist\ndef loss(losses, loss_mask, cp_group):\n"
        "    both = torch.cat([(losses * loss_mask).sum().view(1), loss_mask.sum().float().view(1)])\n"
        "    dist.all_reduce(both, group=cp_group)\n    return both[0] / both[1]\n",
        "import torch\nimport torch.distributed as dist\nn = (labels != -100).sum().float()\n"
        "dist.all_reduce(n, group=mpu.get_context_parallel_group())\n",
        # batch sizes summed over ranks in float32: exact up to 16.7M samples (PH201's)
        "import torch.distributed as dist\nimport torch\nn = len(batch)\npacked = torch.cat([loss.float().view(1), torch.tensor([n]).view(1)])\ndist.all_reduce(packed)\n",
        "import torch.distributed as dist\nimport torch\nseen = torch.zeros(1)\nfor b in bs:\n    seen += b.size(0)\ndist.all_reduce(seen)\n",
        "import torch.distributed as dist\nimport torch\nn = (labels != -100).sum()\ndist.all_reduce(n)\n",
        "import torch.distributed as dist\nimport torch\nloss = model(x).loss.detach()\ndist.all_reduce(loss)\n",
        "import torch.distributed as dist\nimport torch\nn = torch.zeros(1, dtype=torch.int64)\nfor b in bs:\n    n += b.numel()\ndist.all_reduce(n)\n",
        # a float loss through a framework's reduce helper
        "import torch\ndef log_loss(accelerator, loss):\n    return accelerator.reduce(loss.detach(), reduction='mean')\n",
        # an int64 count through DeepSpeed's comm module
        "import torch\nimport deepspeed.comm as ds_dist\nn = (labels != -100).sum()\nds_dist.all_reduce(n)\n",
    ]
    INVALID = [
        # a parameter named a mask holds 0/1 values: its sum is a count
        Invalid(
            "import torch\nimport torch.distributed as dist\ndef divisor(loss_mask, group):\n"
            "    n = loss_mask.sum().to(torch.float32)\n    dist.all_reduce(n, group=group)\n    return n\n"
        ),
        Invalid("import torch.distributed as dist\nimport torch\nn = (labels != -100).sum().float()\ndist.all_reduce(n)\n"),
        # data parallel with context parallel spans the data-parallel ranks
        Invalid(
            "import torch\nimport torch.distributed as dist\nn = (labels != -100).sum().float()\n"
            "dist.all_reduce(n, group=mpu.get_data_parallel_group(with_context_parallel=True))\n"
        ),
        Invalid(
            "import torch\nfrom torch import distributed as dist\nacc = torch.zeros(1)\nfor b in bs:\n    acc += (b == 0).sum()\n"
            "dist.all_reduce(acc, op=dist.ReduceOp.SUM)\n"
        ),
        Invalid(
            "import torch\nimport torch.distributed as dist\nn = (labels != -100).sum()\npacked = torch.cat([loss.float().view(1), n.view(1)])\n"
            "dist.all_reduce(packed)\n"
        ),
        Invalid("import torch\nimport torch.distributed as dist\nc = (p == y).float().sum()\nout = [torch.zeros_like(c), torch.zeros_like(c)]\ndist.all_gather(out, c)\n"),
        # a Python count wrapped into a float32 tensor, then all-reduced
        Invalid("import torch\nimport torch.distributed as dist\nn = sum(len(b) * b.shape[1] for b in batches)\nt = torch.tensor(n, dtype=torch.float32, device='cuda')\ndist.all_reduce(t)\n"),
        Invalid("import torch\nimport torch.distributed as dist\nn = (labels != -100).sum().item()\nt = torch.cuda.FloatTensor([float(n)])\ndist.all_reduce(t)\n"),
        # DeepSpeed's comm module is torch.distributed by another name
        Invalid("import torch\nimport deepspeed.comm as ds_dist\nn = (labels != -100).sum().float()\nds_dist.all_reduce(n)\n"),
        # a framework's reduce helper of a float count
        Invalid("import torch\ndef log_tokens(accelerator, labels):\n    n = (labels != -100).sum().to(torch.float32)\n    return accelerator.reduce(n, reduction='sum')\n"),
        # the counts become float in a helper of another function
        Invalid(
            "import torch\nimport torch.distributed as dist\ndef tokens(labels):\n    return (labels != -100).sum().float()\n"
            "def sync(labels):\n    n = tokens(labels)\n    dist.all_reduce(n)\n    return n\n"
        ),
    ]

    def check(self, model: SemanticModel) -> Iterable[Finding]:
        calls = {id(fact.node): fact for fact in model.calls}
        accumulators = {id(a.creation): a for a in model.accumulators}
        for fact in model.calls:
            arg = _reduced_argument(fact, model)
            if arg is None:
                continue
            value = model.value_of(arg.value)
            if not value.is_floating or (value.float_count and only_lengths([value.length], value.dtype)):
                continue
            if _over_shards_of_one_batch(fact):
                continue
            related, where = (), ""
            if value.float_count in calls:
                related = ((calls[value.float_count].node, "where the counts became floating"),)
            elif value.float_count == FLOAT_COUNT_ELSEWHERE:
                where = f"; counts from {value.via}" if value.via else ""
            else:
                counting = [accumulators[id(c)] for c in value.origins if id(c) in accumulators]
                counting = [a for a in counting if _holds_counts(a)]
                if not counting:
                    continue
                related = ((counting[0].creation.node, "the float accumulator of counts"),)
            name = (fact.qualified or fact.method or "").rpartition(".")[2]
            message = f"`{name}` of counts held in {value.dtype.label if value.dtype else 'a float dtype'}: the sum over ranks is rounded{where}"
            runtime = value.dtype is RUNTIME_FLOAT
            yield Finding(
                fact.node, message, Severity.WARNING if runtime else Severity.ERROR, related=related,
                note="No fix here: fix the line that makes the counts floating (PH001 / PH002) so they stay int64.",
                conditions=(RUNTIME,) if runtime else (),
            )  # fmt: skip


# Context-parallel ranks hold shards of one micro-batch's sequence: a sum over them
# counts one micro-batch's tokens, far below float32's 2^24. (Tensor-parallel sums are
# not exempt: they add up per-shard parameter counts, which reach billions.)
_ONE_BATCH_GROUP = re.compile(r"context_parallel|\bcp_group\b")


def _over_shards_of_one_batch(fact) -> bool:
    """`all_reduce(t, group=mpu.get_context_parallel_group())`, `group=cp_group`; not
    `group=get_data_parallel_group(with_context_parallel=True)`, which spans data parallel."""
    group = find_arg(fact.node, "group")
    if group is None:
        return False
    nodes = (group.value, *walk(group.value))
    keywords = {id(node.keyword) for node in nodes if type(node) is cst.Arg and node.keyword is not None}
    names = [node.value for node in nodes if type(node) is cst.Name and id(node) not in keywords]
    return bool(_ONE_BATCH_GROUP.search(" ".join(names)))


def _reduced_argument(fact, model: SemanticModel):
    """The tensor a collective reduces or gathers: `dist.all_reduce(t)`, or a framework
    helper's first argument (`accelerator.reduce(t, "sum")`, `self.all_gather(t)`)."""
    if fact.qualified in COLLECTIVES:
        keyword, position = COLLECTIVES[fact.qualified]
        return find_arg(fact.node, keyword, position)
    if fact.method in COLLECTIVE_METHODS and fact.node.args:
        receiver = model.value_of(fact.node.func.value)
        if not receiver.is_tensor and not receiver.is_container:
            return fact.node.args[0] if fact.node.args[0].keyword is None else None
    return None


def _holds_counts(accumulator: Accumulator) -> bool:
    """Whether it holds counts that the sum over ranks can push past the dtype's limit."""
    adds = [add for add in accumulator.adds if add.adds_count_to_float]
    if not adds:
        return False
    return not only_lengths((add.length for add in adds), narrowest_dtype(adds))
