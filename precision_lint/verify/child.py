"""Runs one replay in a child process: `python -m precision_lint.verify.child` reads
a job (JSON) on stdin and writes the result (JSON) on stdout. This is the only module
that imports torch."""
from __future__ import annotations

import contextlib
import json
import os
import sys
import tempfile
import textwrap
import time
import traceback
import zlib

import torch

STEPS = 64  # small steps after the big one: enough to show rounding at the limit
# Ways to fill the first, large input. The count expression is unknown to us, so
# the replay tries each until the first step takes the total past the limit.
FIRST_STEP_PATTERNS = ("alternating", "zeros", "ones")
# Tensor attributes that do not give data on a fresh tensor: an input used through
# them (`param.grad`) is an object holding tensors, not a tensor.
HOLDER_ATTRIBUTES = frozenset({"grad", "main_grad", "decoupled_grad", "data"})
TRACE_POINTS = 200


def as_int(value) -> int:
    """An exact Python int for a count or an accumulator (summed over its elements)."""
    if isinstance(value, _Lenient):
        value = value.as_subclass(torch.Tensor)
    if isinstance(value, torch.Tensor):
        if value.is_floating_point():
            return int(round(value.detach().double().sum().item()))
        return int(value.detach().to(torch.int64).sum().item())
    return int(value)


class _Lenient(torch.Tensor):
    """The inputs' tensor type: an attribute a plain tensor lacks (`grad._local_tensor`,
    `x.main_grad`) gives the tensor itself, so wrappers around data replay as data."""

    def __getattr__(self, name):
        if name.startswith("__"):
            raise AttributeError(name)
        return self


class _Proxy:
    """An input used only through attributes (`param.grad`) or string keys
    (`batch["labels"]`): every such access gives the step's tensor."""

    def __init__(self, tensor):
        self._tensor = tensor

    def __getattr__(self, name):
        return self._tensor

    def __getitem__(self, key):
        return self._tensor


class _Self:
    """`self` in a replayed method: attributes that are set behave as set; any other
    attribute read gives the step's tensor."""

    def __init__(self, env):
        object.__setattr__(self, "_env", env)

    def __getattr__(self, name):
        return self._env.tensor(self._env.step, name)


class Env:
    def __init__(self, job: dict, device: str, rank: int, distributed: bool) -> None:
        harness = job["harness"]
        self.limit = harness["limit"]
        self.drive = harness["dtype"] != "float64"  # float64 is exact to 2^53: not driven there
        self.inputs = harness["inputs"]
        self.device = device
        self.steps = 1 + STEPS
        self.scale = max(job.get("scale", 1.0), 1.0)
        self.seed = job.get("seed", 0) + 1000 * rank
        self.pattern = job.get("pattern", FIRST_STEP_PATTERNS[0])
        self.distributed = distributed
        self.exact = 0
        self.total = None
        self.post_error = None
        self.trace_points: list[tuple[int, int]] = []
        self.step = 0
        self.self_object = _Self(self)
        self._tensors: dict[tuple[int, str], torch.Tensor] = {}

    def tensor(self, step: int, name: str) -> torch.Tensor:
        """The step's input tensor for `name`: the first step is large enough to take
        the total past the dtype's exact-integer limit, the others add small counts."""
        key = (step, name)
        if key not in self._tensors:
            if step == 0 and self.drive:
                size = int(self.scale * (2 * self.limit + 2))
                if self.pattern == "alternating":
                    values = torch.arange(size, device=self.device) % 2
                else:
                    values = torch.full((size,), 0 if self.pattern == "zeros" else 1, device=self.device)
            else:
                generator = torch.Generator().manual_seed(self.seed * 7919 + step * 31 + zlib.crc32(name.encode()))
                values = torch.randint(0, 2, (1 + step % 3,), generator=generator).to(self.device)
            self._tensors = {k: v for k, v in self._tensors.items() if k[0] == step}
            self._tensors[key] = values.to(torch.float32).as_subclass(_Lenient)
        return self._tensors[key]

    def input(self, name: str, step: int):
        self.step = step
        usage = self.inputs[name]
        if usage["device"]:
            return self.device
        if usage.get("size"):
            return 2  # a size or count the creation needs: any small whole number
        if usage.get("scalar"):
            # a value of unknown kind added as a whole: a float tensor holding 1.0
            return torch.ones((), device=self.device)
        tensor = self.tensor(step, name)
        attributes = [a for a in usage["attributes"] if a in HOLDER_ATTRIBUTES or not hasattr(torch.Tensor, a)]
        if usage["string_index"] or attributes:
            return _Proxy(tensor)
        return tensor

    def reduce_exact(self, op) -> None:
        if op == "sum":
            import torch.distributed as dist

            total = torch.tensor([self.exact], dtype=torch.int64, device=self.device)
            dist.all_reduce(total)
            self.exact = int(total.item())

    def exact_add(self, value, sign: int) -> None:
        self.exact += sign * as_int(value)

    def trace(self, accumulator) -> None:
        self.trace_points.append((self.exact, as_int(accumulator)))

    def set_total(self, accumulator) -> None:
        self.total = as_int(accumulator)


def replay_source(harness: dict, variant: str) -> str:
    creation = harness[f"creation_{variant}"]
    loop = [f"{name} = __env.input({name!r}, __step)" for name in harness["inputs"]]
    loop += harness["slice"]
    for add in harness["adds"]:
        loop.append(f"__env.exact_add(({add['addend']}), {add['sign']})")
        loop.append(add["statement"])
    loop.append(f"__env.trace({harness['accumulator']})")
    body = [
        *harness["imports"], "self = __env.self_object", "__device = __env.device",
        *harness["setup"], *harness["before_creation"], creation,
    ]  # fmt: skip
    body.append("for __step in range(__env.steps):")
    body.append(textwrap.indent("\n".join(loop), "    "))
    for collective in harness["collectives"]:
        # the exact total takes the same reductions as the accumulator
        exact_op = "None" if any(op in collective for op in ("MAX", "MIN", "PRODUCT")) else "'sum'"
        body.append(f"if __env.distributed:\n    {collective}\n    __env.reduce_exact({exact_op})")
    body.append(f"__env.set_total({harness['accumulator']})")
    if harness["post"]:
        body.append("try:")
        body.append(textwrap.indent("\n".join(harness["post"]), "    "))
        body.append("except Exception as __error:\n    __env.post_error = f'{type(__error).__name__}: {__error}'")
    return "def __replay(__env):\n" + textwrap.indent("\n".join(body), "    ") + "\n"


def run_variant(job: dict, variant: str, device: str, rank: int, distributed: bool) -> dict:
    env = Env(job, device, rank, distributed)
    namespace: dict = {"torch": torch}
    try:
        exec(compile(replay_source(job["harness"], variant), f"<replay {variant}>", "exec"), namespace)
        # the replayed code may print: keep stdout for the result
        with contextlib.redirect_stdout(sys.stderr):
            namespace["__replay"](env)
    except Exception as error:  # noqa: BLE001 - reported as the variant's error
        return {"error": f"{type(error).__name__}: {error}", "exact": env.exact}
    return {
        "total": env.total,
        "exact": env.exact,
        "post_error": env.post_error,
        "trace": _thin(env.trace_points),
        "driven": env.trace_points[0][0] >= env.limit if env.trace_points else False,
        "pattern": env.pattern,
    }


def run_both(job: dict, device: str, rank: int, distributed: bool) -> dict:
    """Before and after on the same inputs, with the first first-step pattern that
    drives the original past the limit (the last one tried otherwise)."""
    results: dict = {}
    for pattern in FIRST_STEP_PATTERNS:
        trial = {**job, "pattern": pattern}
        results = {variant: run_variant(trial, variant, device, rank, distributed) for variant in ("before", "after")}
        if results["before"].get("driven") or "error" in results["before"]:
            break
    return results


def _thin(points: list[tuple[int, int]]) -> list[tuple[int, int]]:
    step = max(1, len(points) // TRACE_POINTS)
    return points[::step]


def _device(requested: str) -> str:
    if requested == "auto":
        return "cuda" if torch.cuda.is_available() else "cpu"
    if requested == "cuda" and not torch.cuda.is_available():
        raise RuntimeError("--device cuda was asked for, but torch sees no CUDA device")
    return requested


def _run_rank(rank: int, job: dict, device: str, world_size: int, init_file: str, out_file: str) -> None:
    import torch.distributed as dist

    use_nccl = device.startswith("cuda") and torch.cuda.device_count() >= world_size
    if use_nccl:
        device = f"cuda:{rank}"
        torch.cuda.set_device(rank)
    dist.init_process_group("nccl" if use_nccl else "gloo", init_method=f"file://{init_file}", rank=rank, world_size=world_size)
    try:
        results = run_both(job, device, rank, True)
        if rank == 0:
            with open(out_file, "w") as stream:
                json.dump({**results, "backend": "nccl" if use_nccl else "gloo"}, stream)
    finally:
        dist.destroy_process_group()


def main() -> int:
    job = json.load(sys.stdin)
    started = time.perf_counter()
    try:
        device = _device(job.get("device", "auto"))
        world_size = job.get("world_size", 1) if job["harness"]["collectives"] else 1
        if world_size > 1:
            import torch.multiprocessing as mp

            with tempfile.TemporaryDirectory() as scratch:
                out_file = os.path.join(scratch, "result.json")
                mp.spawn(_run_rank, args=(job, device, world_size, os.path.join(scratch, "init"), out_file), nprocs=world_size)
                with open(out_file) as stream:
                    results = json.load(stream)
        else:
            results = run_both(job, device, 0, False)
    except Exception:  # noqa: BLE001 - the harness itself failed
        json.dump({"harness_error": traceback.format_exc(limit=3)}, sys.stdout)
        return 0
    results.update(device=device, world_size=world_size, seconds=time.perf_counter() - started, torch=torch.__version__)
    json.dump(results, sys.stdout)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
