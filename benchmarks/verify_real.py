"""`precision-lint verify` on real findings: runs verify on every file of a tree that
has a finding with a fix, and prints each finding's verdict and the totals.

    python benchmarks/verify_real.py TREE [TREE ...] --precision-lint .venv/bin/precision-lint

Trees are checked out separately (never committed). The default selection plus
PH201 is verified.
"""
from __future__ import annotations

import argparse
import collections
import json
import subprocess
import tempfile
import time
from pathlib import Path


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("trees", nargs="+", type=Path)
    parser.add_argument("--precision-lint", default="precision-lint", help="the executable to measure (a path)")
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--world-size", default="2")
    parser.add_argument("--timeout", default="180")
    args = parser.parse_args()
    rows, verdicts = [], collections.Counter()
    # not from a checkout: `python -m` would import the precision_lint in the current folder
    neutral = tempfile.gettempdir()
    args.trees = [tree.resolve() for tree in args.trees]
    started = time.perf_counter()
    for tree in args.trees:
        listed = subprocess.run(
            [args.precision_lint, "check", str(tree), "--extend-select", "PH201", "--no-cache", "--output-format", "json", "--exit-zero"],
            capture_output=True, text=True, cwd=neutral,
        )  # fmt: skip
        findings = [f for f in json.loads(listed.stdout or "[]") if f.get("fix") and f.get("code") != "PH100"]
        for path in sorted({f["filename"] for f in findings}):
            codes = sorted({f["code"] for f in findings if f["filename"] == path})
            completed = subprocess.run(
                [args.precision_lint, "verify", path, "--select", ",".join(codes), "--device", args.device,
                 "--world-size", args.world_size, "--timeout", args.timeout, "--output-format", "json"],
                capture_output=True, text=True, cwd=neutral,
            )  # fmt: skip
            try:
                results = json.loads(completed.stdout)
            except json.JSONDecodeError:
                results = [{"code": c, "line": 0, "verdict": f"(no result, exit {completed.returncode})", "detail": completed.stderr[-200:]} for c in codes]
            for result in results:
                verdicts[result["verdict"]] += 1
                shown = path.replace(str(tree), tree.name) if str(tree) in path else path
                rows.append((f"{shown}:{result['line']}", result["code"], result["verdict"], (result.get("detail") or "")[:120]))
    print("| finding | rule | verdict | detail |\n|---|---|---|---|")
    for row in rows:
        print("| " + " | ".join(str(c).replace("|", "\\|") for c in row) + " |")
    print("\n" + ", ".join(f"{v}: {n}" for v, n in verdicts.most_common()) + f" ({len(rows)} findings, {time.perf_counter() - started:.0f} s)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
