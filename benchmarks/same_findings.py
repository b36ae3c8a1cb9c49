"""Shows that the speed-ups change no finding: checks real trees with every
speed-up on, with all of them off, and with each one off on its own (the
PRECISION_LINT_WITHOUT switch, precision_lint/speedups.py), and optionally with
another checkout of the tool (`--reference`, e.g. the commit before the speed-ups),
and compares the JSON findings exactly (position, message, fix, related, note).

    python benchmarks/same_findings.py TREE [TREE ...] [--reference SRC] [--store DIR]
        [--variants all-on,all-off,each-off,pieces-everywhere,without-NAME] [--select ALL]
    python benchmarks/same_findings.py TREE [TREE ...] --parse-check 50

`pieces-everywhere` parses every file of 50 lines or more in pieces of 50 lines (long
modules only are, in a normal run: precision_lint/parsing.py), so the join is used on
real code. `--parse-check N` compares, for every Python file of the trees, the module
joined from pieces of N lines with libcst's whole parse, node for node.

Every variant runs `check --no-cache --exit-zero --output-format json` in the tree,
as ecosystem.py does. Outputs are kept under --store (a reference run takes long, so
a stored one is reused unless --fresh). Exits 1 when any variant differs. This is
a check to run by hand or in CI, not a unit test: it needs the real trees.
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
from precision_lint.speedups import SPEEDUPS  # noqa: E402


def run_variant(tree: Path, env_extra: dict[str, str], select: str, pythonpath: str | None) -> tuple[list[dict], float, str]:
    env = dict(os.environ, **env_extra)
    if pythonpath is not None:
        env["PYTHONPATH"] = pythonpath
    command = [sys.executable, "-m", "precision_lint", "check", "--no-cache", "--exit-zero", "--output-format", "json", "--select", select, "."]
    start = time.perf_counter()
    result = subprocess.run(command, cwd=tree, capture_output=True, text=True, env=env)
    seconds = time.perf_counter() - start
    if result.returncode != 0:
        return [], seconds, f"exit {result.returncode}: {result.stderr[-1500:]}"
    return json.loads(result.stdout), seconds, ""


def canonical(findings: list[dict]) -> list[str]:
    return sorted(json.dumps(d, sort_keys=True) for d in findings)


def differences(a: list[dict], b: list[dict], limit: int = 6) -> list[str]:
    left, right = set(canonical(a)), set(canonical(b))
    out = [f"  only in the first:  {line[:300]}" for line in sorted(left - right)[:limit]]
    out += [f"  only in the second: {line[:300]}" for line in sorted(right - left)[:limit]]
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("trees", nargs="+", type=Path)
    parser.add_argument("--reference", help="source folder of another checkout (its precision_lint/ and rules/) to compare with")
    parser.add_argument("--store", type=Path, default=Path(tempfile.gettempdir()) / "precision-lint-same-findings")
    parser.add_argument("--fresh", action="store_true", help="re-run the reference even when a stored run exists")
    parser.add_argument(
        "--variants", default="all-on,all-off,each-off",
        help="which of all-on, all-off, each-off, pieces-everywhere and without-NAME (one speed-up off) to run",
    )  # fmt: skip
    parser.add_argument("--select", default="ALL", help="the rule selection (default ALL: every rule)")
    parser.add_argument("--parse-check", type=int, metavar="N", help="only compare parses in pieces of N lines with whole parses")
    args = parser.parse_args(argv)
    if args.parse_check:
        return parse_check(args.trees, args.parse_check)
    wanted = set(args.variants.split(","))
    args.store.mkdir(parents=True, exist_ok=True)
    variants: list[tuple[str, dict[str, str]]] = []
    if "all-on" in wanted:
        variants.append(("all speed-ups", {"PRECISION_LINT_WITHOUT": ""}))
    if "all-off" in wanted:
        variants.append(("no speed-up", {"PRECISION_LINT_WITHOUT": ",".join(SPEEDUPS)}))
    if "each-off" in wanted:
        variants += [(f"without {name}", {"PRECISION_LINT_WITHOUT": name}) for name in SPEEDUPS]
    variants += [
        (f"without {name}", {"PRECISION_LINT_WITHOUT": name})
        for name in SPEEDUPS if f"without-{name}" in wanted and "each-off" not in wanted
    ]  # fmt: skip
    if "pieces-everywhere" in wanted:
        variants.append(("pieces everywhere", {"PRECISION_LINT_WITHOUT": "", "PRECISION_LINT_PIECES_FROM": "50"}))
    failed = False
    totals: dict[str, float] = {}
    for tree in args.trees:
        tree = tree.resolve()
        runs: list[tuple[str, list[dict]]] = []
        if args.reference:
            stored = args.store / f"reference-{tree.name}-{args.select}.json"
            if stored.exists() and not args.fresh:
                findings = json.loads(stored.read_text())
            else:
                findings, seconds, error = run_variant(tree, {}, args.select, args.reference)
                if error:
                    print(f"{tree.name}: reference failed: {error}")
                    failed = True
                    continue
                stored.write_text(json.dumps(findings))
                totals["reference"] = totals.get("reference", 0.0) + seconds
            runs.append(("reference", findings))
        for name, env in variants:
            findings, seconds, error = run_variant(tree, env, args.select, None)
            totals[name] = totals.get(name, 0.0) + seconds
            if error:
                print(f"{tree.name}: {name} failed: {error}")
                failed = True
                continue
            runs.append((name, findings))
        if not runs:
            continue
        first_name, first = runs[0]
        line = f"{tree.name}: {len(first)} findings ({first_name})"
        for name, findings in runs[1:]:
            same = canonical(findings) == canonical(first)
            line += f"; {name}: {'same' if same else 'DIFFERENT'}"
            if not same:
                failed = True
                line += "\n" + "\n".join(differences(first, findings))
        print(line, flush=True)
    print("\nseconds per variant, all trees: " + ", ".join(f"{name} {seconds:.1f}" for name, seconds in totals.items()))
    print("RESULT: " + ("DIFFERENT" if failed else "identical findings in every variant"))
    return 1 if failed else 0


def parse_check(trees: list[Path], piece_lines: int) -> int:
    """Every file's module joined from pieces against libcst's whole parse."""
    import gc

    import libcst as cst

    from precision_lint.parsing import forget_starts, parse_in_pieces, piece_starts

    gc.disable()  # as the workers parse: collections would only slow this down
    failed = False
    for tree in trees:
        counts = {"joined, same tree": 0, "parsed whole (no exact join)": 0, "one piece": 0, "not parsed by libcst": 0}
        different: list[str] = []
        for path in sorted(tree.resolve().rglob("*.py")):
            if ".git" in path.parts or not path.is_file():
                continue
            try:
                source = path.read_bytes().decode("utf-8")
                whole = cst.parse_module(source)
            except Exception:
                counts["not parsed by libcst"] += 1
                continue
            cut = piece_starts(source, piece_lines) is not None
            joined = parse_in_pieces(source, piece_lines)
            forget_starts()
            if not cut:
                counts["one piece"] += 1
            elif joined is None:
                counts["parsed whole (no exact join)"] += 1
            elif joined.deep_equals(whole):
                counts["joined, same tree"] += 1
            else:
                different.append(str(path))
            del whole, joined
            gc.collect()
        failed = failed or bool(different)
        print(f"{tree.name}: " + ", ".join(f"{name} {count}" for name, count in counts.items()) + f", DIFFERENT {len(different)}", flush=True)
        for path in different[:10]:
            print(f"  different: {path}")
    print("RESULT: " + ("DIFFERENT" if failed else "every joined module is the whole parse"))
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
