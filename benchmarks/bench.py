"""Time a cold and a warm `precision-lint check` of a real repository side by side
with `ruff check --select ALL` and TorchFix, and print the ratios.

    python benchmarks/bench.py PATH/TO/REPO [--ruff ruff] [--torchfix torchfix] [--runs 2]

Each tool runs on the same tree in the same invocation; the best of `--runs` wall
times is reported. Tools that are not installed are listed as such, not guessed.
This is a benchmark, not a test: nothing here asserts a time.
"""
from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path


def best_time(command: list[str], cwd: Path, runs: int, prepare=None) -> float:
    times = []
    for _ in range(runs):
        if prepare is not None:
            prepare()
        start = time.perf_counter()
        subprocess.run(command, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)
        times.append(time.perf_counter() - start)
    return min(times)


def count_python(repo: Path) -> tuple[int, int]:
    files = [p for p in repo.rglob("*.py") if ".git" not in p.parts]
    lines = sum(p.read_bytes().count(b"\n") for p in files)
    return len(files), lines


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("repo", type=Path)
    parser.add_argument("--ruff", default="ruff", help="ruff executable")
    parser.add_argument("--torchfix", default="torchfix", help="torchfix executable")
    parser.add_argument("--runs", type=int, default=2)
    parser.add_argument("--skip-torchfix", action="store_true", help="TorchFix takes minutes on a large tree")
    args = parser.parse_args(argv)
    repo = args.repo.resolve()
    cache = Path(tempfile.mkdtemp(prefix="precision-lint-bench-"))
    ours = [sys.executable, "-m", "precision_lint", "check", ".", "--exit-zero", "-q", "--output-format", "concise"]

    def clear_cache() -> None:
        shutil.rmtree(cache, ignore_errors=True)

    results: dict[str, float | None] = {}
    results["precision-lint (cold, no cache)"] = best_time(ours + ["--no-cache"], repo, args.runs)
    results["precision-lint (cold cache)"] = best_time(ours + ["--cache-dir", str(cache)], repo, args.runs, clear_cache)
    best_time(ours + ["--cache-dir", str(cache)], repo, 1)  # fill the cache
    results["precision-lint (warm cache)"] = best_time(ours + ["--cache-dir", str(cache)], repo, args.runs)
    clear_cache()
    ruff = shutil.which(args.ruff)
    results["ruff check --select ALL --no-cache"] = (
        best_time([ruff, "check", "--select", "ALL", "--no-cache", "--exit-zero", "-q", "--isolated", "."], repo, args.runs)
        if ruff
        else None
    )
    torchfix = shutil.which(args.torchfix)
    results["torchfix"] = (
        best_time([torchfix, "."], repo, 1) if torchfix and not args.skip_torchfix else None
    )

    files, lines = count_python(repo)
    print(f"## {repo.name}: {files} Python files, {lines:,} lines (best of {args.runs} runs)\n")
    print("| tool | wall s | x ruff | x precision-lint cold |")
    print("|---|---|---|---|")
    ruff_time = results["ruff check --select ALL --no-cache"]
    cold = results["precision-lint (cold, no cache)"]
    for name, seconds in results.items():
        if seconds is None:
            print(f"| {name} | not run / not installed | | |")
            continue
        vs_ruff = f"{seconds / ruff_time:.1f}" if ruff_time else ""
        vs_cold = f"{seconds / cold:.2f}" if cold else ""
        print(f"| {name} | {seconds:.2f} | {vs_ruff} | {vs_cold} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
