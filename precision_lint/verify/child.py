"""Runs one replay in a child process: `python -m precision_lint.verify.child` reads
a job (JSON) on stdin and writes the results (JSON) on stdout.

The replay programs were checked against the allow-list in the parent; they are
checked again here, compiled, and run with only safe builtins, with file writes
blocked (RLIMIT_FSIZE) while they run. Every scenario (branch arm) is run for every
start offset, the original and the fixed code on the same inputs.
"""
from __future__ import annotations

import json
import os
import resource
import sys
import tempfile
import time
import traceback

from . import sandbox

RUNS_FLOAT = ("zero", "below", "high")
RUNS_INTEGER = ("zero", "below")
RUNS_VALUE = ("small", "large:uniform", "large:distinct", "large:special")


def _safe_builtins() -> dict:
    import builtins

    table = {name: getattr(builtins, name) for name in sandbox.SAFE_BUILTINS if hasattr(builtins, name)}

    def getattr_(obj, name, *default):
        if not sandbox.safe_attribute_name(name):
            raise AttributeError(f"{name!r} is not readable in a replay")
        return getattr(obj, name, *default)

    def hasattr_(obj, name):
        return sandbox.safe_attribute_name(name) and hasattr(obj, name)

    def import_(name, globals=None, locals=None, fromlist=(), level=0):
        # Replay code imports only through `import` statements the allow-list
        # checked (torch and numpy only); this also serves their own imports from C.
        if level or not (name.split(".")[0] in ("torch", "numpy") or name in sys.modules):
            raise ImportError(f"importing {name!r} is not allowed in a replay")
        return __import__(name, globals, locals, fromlist, level)

    table.update(getattr=getattr_, hasattr=hasattr_, print=lambda *a, **k: None, __import__=import_)
    return table


def _block_file_writes() -> tuple[int, int]:
    previous = resource.getrlimit(resource.RLIMIT_FSIZE)
    resource.setrlimit(resource.RLIMIT_FSIZE, (0, previous[1]))
    return previous


def _restore_file_writes(previous: tuple[int, int]) -> None:
    resource.setrlimit(resource.RLIMIT_FSIZE, previous)


def runs_for(job: dict) -> tuple[str, ...]:
    if job.get("code") == "PH004":
        return ("small", "large:positions")  # long positions; the other inputs stay small
    if job["kind"] == "value":
        limit = job.get("limit") or 0
        return RUNS_VALUE if limit < 2**53 else RUNS_VALUE[:1]
    limit = job.get("limit") or 2**24
    dtype = job.get("dtype") or ""
    runs = RUNS_INTEGER if dtype.startswith("int") else RUNS_FLOAT
    if not dtype.startswith("int") and limit <= 2**11:
        runs = runs + ("large:uniform",)  # one large count: the count's own rounding (bf16(1) + 257 is 256)
    return runs


def run_all(job: dict, device: str, rank: int) -> dict:
    from .hooks import ReplayHooks

    namespaces = {}
    for variant, program in job["programs"].items():
        problems = sandbox.problems(program)
        if problems:
            raise RuntimeError(f"the replay was refused: {problems[0]}")
        namespace = {"__builtins__": _safe_builtins()}
        exec(compile(program, f"<replay {variant}>", "exec"), namespace)  # checked against the allow-list above
        namespaces[variant] = namespace["__replay"]
    seed = job.get("seed", 0) + 1000 * rank
    scenarios = []
    for scenario in job["scenarios"]:
        runs = []
        for run in runs_for(job):
            offset = None
            record = {"run": run}
            for variant in ("before", "after"):
                hooks = ReplayHooks(job, scenario, run, variant, device, offset, seed)
                started = time.perf_counter()
                record[variant] = _execute(namespaces[variant], hooks)
                record[variant]["seconds"] = time.perf_counter() - started
                offset = hooks.offset
            runs.append(record)
        scenarios.append({"name": scenario["name"], "runs": runs})
    return {"scenarios": scenarios}


def _execute(replay, hooks) -> dict:
    from .hooks import _replay_line

    previous = _block_file_writes()
    try:
        replay(hooks)
        error = None
    except Exception as exc:  # noqa: BLE001 - reported as this variant's error
        error = {"error": f"{type(exc).__name__}: {exc}"[:300], "line": _replay_line(sys.exc_info()[2])}
    finally:
        _restore_file_writes(previous)
    summary = hooks.summary()
    if error is not None:
        summary["error"] = error
    if hooks.post_error is not None:
        summary["post_error"] = hooks.post_error
    return summary


def _device(requested: str) -> str:
    import torch

    if requested == "auto":
        return "cuda" if torch.cuda.is_available() else "cpu"
    if requested == "cuda" and not torch.cuda.is_available():
        raise RuntimeError("--device cuda was asked for, but torch sees no CUDA device")
    return requested


def _run_rank(rank: int, job: dict, device: str, world_size: int, init_file: str, queue) -> None:
    import torch
    import torch.distributed as dist

    use_nccl = device.startswith("cuda") and torch.cuda.device_count() >= world_size
    if use_nccl:
        torch.cuda.set_device(rank)
    dist.init_process_group("nccl" if use_nccl else "gloo", init_method=f"file://{init_file}", rank=rank, world_size=world_size)
    try:
        results = run_all(job, device, rank)
        dist.barrier()
        if rank == 0:
            queue.put(json.dumps({**results, "backend": "nccl" if use_nccl else "gloo"}))
    except Exception:  # noqa: BLE001 - the harness itself failed on this rank
        if rank == 0:
            queue.put(json.dumps({"harness_error": traceback.format_exc(limit=3)}))
        raise
    finally:
        dist.destroy_process_group()


def _one_rank(job: dict, device: str) -> dict:
    """A replay that all-reduces, on one rank: a process group of one, in this process."""
    import torch.distributed as dist

    with tempfile.TemporaryDirectory() as scratch:
        dist.init_process_group("gloo", init_method=f"file://{os.path.join(scratch, 'init')}", rank=0, world_size=1)
        try:
            return {**run_all(job, device, 0), "backend": "gloo"}
        finally:
            dist.destroy_process_group()


def main() -> int:
    job = json.load(sys.stdin)
    started = time.perf_counter()
    import torch

    torch.set_num_threads(max(1, min(4, torch.get_num_threads())))
    world_size = 1
    try:
        device = _device(job.get("device", "auto"))
        if job.get("collectives") and max(1, job.get("world_size", 1)) == 1:
            results = _one_rank(job, device)
        elif job.get("collectives"):
            import torch.multiprocessing as mp

            world_size = job["world_size"]
            context = mp.get_context("spawn")
            queue = context.SimpleQueue()
            with tempfile.TemporaryDirectory() as scratch:
                ranks = mp.start_processes(
                    _run_rank, args=(job, device, world_size, os.path.join(scratch, "init"), queue),
                    nprocs=world_size, start_method="spawn", join=False,
                )  # fmt: skip
                payload = None
                while payload is None:  # rank 0 sends its results before the ranks exit
                    if not queue.empty():
                        payload = queue.get()
                    elif ranks.join(timeout=0.2):
                        payload = queue.get() if not queue.empty() else json.dumps({"harness_error": "the ranks ended without results"})
                while not ranks.join():
                    pass
                results = json.loads(payload)
        else:
            results = run_all(job, device, 0)
    except Exception:  # noqa: BLE001 - the harness itself failed
        json.dump({"harness_error": traceback.format_exc(limit=3)}, sys.stdout)
        return 0
    results.update(device=device, world_size=world_size, seconds=time.perf_counter() - started, torch=torch.__version__)
    if device.startswith("cuda"):
        results["gpu"] = torch.cuda.get_device_name()
    json.dump(results, sys.stdout)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
