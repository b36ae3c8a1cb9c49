"""The GPU facts of ../shared/hazards.md section 4.3, measured on a device:

- float sums of bool masks past 2^24 (single reductions: output rounding only?)
- float32 scatter_add_ / index_add_ / histc counting past 2^24 (do they stall, and do
  they vary between runs?)
- cumsum of float32 ones past 2^24
- all_reduce of an int64 SUM past 2^53 (a one-rank NCCL or gloo group)

    python benchmarks/gpu_facts.py --device cuda --output gpu_facts.json

Runs on the CPU too (--device cpu), for comparison. Prints and writes JSON.
"""
from __future__ import annotations

import argparse
import json
import os
import tempfile
import time

import torch

LIMIT = 2**24


def mask_sums(device: str) -> list[dict]:
    rows = []
    for n in (LIMIT + 1, 2**25 + 1, 3 * LIMIT + 1):
        mask = torch.ones(n, dtype=torch.bool, device=device)
        rows.append(
            {
                "n": n,
                "bool.sum()": int(mask.sum().item()),
                "bool.float().sum()": int(mask.float().sum().item()),
                "bool.sum(dtype=float32)": int(mask.sum(dtype=torch.float32).item()),
                "float32(n)": int(torch.tensor(n, dtype=torch.float32).item()),
            }
        )
    return rows


def counting_kernels(device: str, runs: int = 3) -> dict:
    n = LIMIT + 1000
    results: dict[str, list[int]] = {"scatter_add_": [], "index_add_": [], "histc": [], "bincount": [], "scatter_add_ int64": []}
    for _ in range(runs):
        index = torch.zeros(n, dtype=torch.int64, device=device)
        ones = torch.ones(n, device=device)
        results["scatter_add_"].append(int(torch.zeros(1, device=device).scatter_add_(0, index, ones).item()))
        results["index_add_"].append(int(torch.zeros(1, device=device).index_add_(0, index, ones).item()))
        results["histc"].append(int(torch.histc(torch.zeros(n, device=device), bins=1, min=-1, max=1).item()))
        results["bincount"].append(int(torch.bincount(index).item()))
        results["scatter_add_ int64"].append(
            int(torch.zeros(1, dtype=torch.int64, device=device).scatter_add_(0, index, torch.ones(n, dtype=torch.int64, device=device)).item())
        )
    return {"n": n, **results}


def cumsum(device: str) -> dict:
    n = LIMIT + 1001
    return {"n": n, "float32 cumsum[-1]": int(torch.ones(n, device=device).cumsum(0)[-1].item())}


def int64_all_reduce(device: str) -> dict:
    import torch.distributed as dist

    backend = "nccl" if device.startswith("cuda") else "gloo"
    with tempfile.TemporaryDirectory() as scratch:
        dist.init_process_group(backend, init_method=f"file://{os.path.join(scratch, 'init')}", rank=0, world_size=1)
        try:
            value = 2**60 + 3
            tensor = torch.tensor([value], dtype=torch.int64, device=device)
            dist.all_reduce(tensor, op=dist.ReduceOp.SUM)
            return {"backend": backend, "sent": value, "received": int(tensor.item()), "exact": int(tensor.item()) == value}
        finally:
            dist.destroy_process_group()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    parser.add_argument("--output", default="gpu_facts.json")
    args = parser.parse_args()
    started = time.perf_counter()
    facts = {
        "device": args.device,
        "device_name": torch.cuda.get_device_name() if args.device.startswith("cuda") else "cpu",
        "torch": torch.__version__,
        "mask_sums": mask_sums(args.device),
        "counting_kernels": counting_kernels(args.device),
        "cumsum": cumsum(args.device),
        "int64_all_reduce": int64_all_reduce(args.device),
    }
    facts["seconds"] = round(time.perf_counter() - started, 2)
    with open(args.output, "w") as stream:
        json.dump(facts, stream, indent=2)
    print(json.dumps(facts, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
