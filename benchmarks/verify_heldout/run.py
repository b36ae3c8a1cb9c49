"""Runs `precision-lint verify` on each held-out accumulation here and compares the
verdict with expected.json (written before verify was changed).

    python benchmarks/verify_heldout/run.py --precision-lint .venv/bin/precision-lint
"""
from __future__ import annotations

import argparse
import json
import shlex
import subprocess
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--precision-lint", default="precision-lint", help="the command to measure (`python -m precision_lint` works too)")
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--timeout", type=float, default=300.0)
    args = parser.parse_args()
    expected = {k: v for k, v in json.loads((HERE / "expected.json").read_text()).items() if not k.startswith("_")}
    command = shlex.split(args.precision_lint)
    if Path(command[0]).exists():
        command[0] = str(Path(command[0]).resolve())  # the cases run from this folder
    right = no_fix = 0
    rows = []
    for name, want in sorted(expected.items()):
        started = time.perf_counter()
        completed = subprocess.run(
            [*command, "verify", name, "--select", want["code"], "--device", args.device,
             "--world-size", "1", "--output-format", "json"],
            cwd=HERE, capture_output=True, text=True, timeout=args.timeout,
        )  # fmt: skip
        try:
            findings = [f for f in json.loads(completed.stdout) if f.get("code") == want["code"]]
        except json.JSONDecodeError:
            findings = []
        got = findings[0]["verdict"] if findings else f"(no result, exit {completed.returncode})"
        detail = findings[0].get("detail", "") if findings else completed.stderr.strip()[-120:]
        if not findings:
            # a finding the linter offers no fix for has nothing to verify: say why
            listed = subprocess.run([*command, "check", name, "--select", want["code"], "--no-cache", "--output-format", "json", "--exit-zero"], cwd=HERE, capture_output=True, text=True, timeout=args.timeout)
            unfixed = [f for f in json.loads(listed.stdout or "[]") if f.get("code") == want["code"] and not f.get("fix")]
            if unfixed:
                got, detail = "(no fix offered)", unfixed[0].get("note") or ""
                no_fix += 1
        ok = got == want["verdict"]
        right += ok
        rows.append((name, want["code"], want["verdict"], got, "yes" if ok else "NO", f"{time.perf_counter() - started:.1f}", detail[:110]))
    print("| case | rule | expected | got | right | s | detail |\n|---|---|---|---|---|---|---|")
    for row in rows:
        print("| " + " | ".join(str(c).replace("|", "\\|") for c in row) + " |")
    print(f"\n{right} of {len(rows)} right" + (f"; {no_fix} with no fix offered by the linter (nothing to confirm)" if no_fix else ""))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
