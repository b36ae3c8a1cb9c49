"""`precision-lint verify` on real findings: verifies each tree as one project (as
`check` finds its findings: across modules, settled by the project's evidence) and
prints each finding's verdict and the totals.

    python benchmarks/verify_real.py TREE [TREE ...] --precision-lint .venv/bin/precision-lint

Trees are checked out separately (never committed) and only read: verify writes
nothing into them (no cache; replays run in scratch folders). The default selection
plus PH201 is verified.
"""
from __future__ import annotations

import argparse
import collections
import json
import subprocess
import tempfile
import time
from pathlib import Path

SELECTION = "PH001,PH002,PH003,PH004,PH005,PH006,PH201"


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("trees", nargs="+", type=Path)
    parser.add_argument("--precision-lint", default="precision-lint", help="the executable to measure (a path)")
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--world-size", default="2")
    parser.add_argument("--timeout", default="180")
    parser.add_argument("--json-dir", type=Path, help="also keep each tree's verify JSON here")
    args = parser.parse_args()
    rows, verdicts, per_tree = [], collections.Counter(), {}
    # not from a checkout: `python -m` would import the precision_lint in the current folder
    neutral = tempfile.gettempdir()
    started = time.perf_counter()
    for tree in [t.resolve() for t in args.trees]:
        began = time.perf_counter()
        completed = subprocess.run(
            [args.precision_lint, "verify", str(tree), "--select", SELECTION, "--device", args.device,
             "--world-size", args.world_size, "--timeout", args.timeout, "--output-format", "json"],
            capture_output=True, text=True, cwd=neutral,
        )  # fmt: skip
        try:
            results = json.loads(completed.stdout)
        except json.JSONDecodeError:
            results = [{"code": "", "path": str(tree), "line": 0, "verdict": f"(no result, exit {completed.returncode})", "detail": completed.stderr[-200:]}]
        if args.json_dir is not None:
            args.json_dir.mkdir(parents=True, exist_ok=True)
            (args.json_dir / f"{tree.name}.json").write_text(json.dumps(results, indent=1))
        counted = collections.Counter(r["verdict"] for r in results)
        per_tree[tree.name] = (counted, time.perf_counter() - began)
        for result in results:
            verdicts[result["verdict"]] += 1
            shown = result["path"].replace(str(tree), tree.name)
            rows.append((f"{shown}:{result['line']}", result["code"], result["verdict"], (result.get("detail") or "")[:120]))
    print("| finding | rule | verdict | detail |\n|---|---|---|---|")
    for row in rows:
        print("| " + " | ".join(str(c).replace("|", "\\|") for c in row) + " |")
    print()
    for name, (counted, seconds) in per_tree.items():
        print(f"{name}: {sum(counted.values())} findings, " + ", ".join(f"{v} {n}" for v, n in counted.most_common()) + f" ({seconds:.0f} s)")
    print("\n" + ", ".join(f"{v}: {n}" for v, n in verdicts.most_common()) + f" ({len(rows)} findings, {time.perf_counter() - started:.0f} s)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
