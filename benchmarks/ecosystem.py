"""Ecosystem check: run precision-lint over real repositories and print findings per
rule and per repository (as Ruff's ecosystem job does). With `--fix-check`, also
apply every fix (safe and unsafe) to a copy of each tree and check that the fixed
files compile, and that a second `--fix` changes nothing.

    python benchmarks/ecosystem.py /path/to/Megatron-LM /path/to/torchmetrics [--fix-check]
    python benchmarks/ecosystem.py TREES... --extend-select PH201 --json-dir out/
    python benchmarks/ecosystem/score.py out/ --trees-root /path/to/trees

Bring the repositories onto the machine yourself (they are never committed here);
benchmarks/ecosystem/trees.tsv lists the trees of the latest run with their commits.
`--json-dir` keeps each tree's JSON findings (`<tree>.json`), which
benchmarks/ecosystem/score.py scores against the hand labels there.
"""
from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import tempfile
from collections import Counter
from pathlib import Path

LINT = [sys.executable, "-m", "precision_lint", "check", "--no-cache", "--exit-zero"]


def findings(tree: Path, extra: list[str]) -> list[dict]:
    result = subprocess.run(LINT + extra + ["--output-format", "json", "."], cwd=tree, capture_output=True, text=True)
    if result.returncode != 0:
        raise RuntimeError(f"{tree}: precision-lint exited {result.returncode}: {result.stderr[-2000:]}")
    return json.loads(result.stdout)


def python_files(tree: Path) -> dict[Path, bytes]:
    return {p: p.read_bytes() for p in tree.rglob("*.py") if ".git" not in p.parts}


def fix_check(tree: Path, extra: list[str]) -> dict:
    """Fix a copy of `tree`; report what changed and whether it converged."""
    with tempfile.TemporaryDirectory(prefix="precision-lint-eco-") as scratch:
        copy = Path(scratch) / tree.name
        shutil.copytree(tree, copy, symlinks=True, ignore=shutil.ignore_patterns(".git"))
        before = python_files(copy)
        fix = LINT + extra + ["--fix", "--unsafe-fixes", "-q", "--output-format", "concise", "."]
        first = subprocess.run(fix, cwd=copy, capture_output=True, text=True)
        after = python_files(copy)
        changed = [p for p in after if after[p] != before.get(p)]
        broken = []
        for path in changed:
            try:
                compile(after[path], str(path), "exec", dont_inherit=True)
            except SyntaxError as error:
                broken.append(f"{path.relative_to(copy)}: {error}")
        second = subprocess.run(fix, cwd=copy, capture_output=True, text=True)
        changed_again = [p for p, data in python_files(copy).items() if data != after.get(p)]
        return {
            "files_changed": len(changed),
            "broken": broken,
            "changed_by_second_fix": [str(p.relative_to(copy)) for p in changed_again],
            "first_exit": first.returncode,
            "second_exit": second.returncode,
            "errors": (first.stderr + second.stderr).strip()[-2000:],
        }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("trees", nargs="+", type=Path)
    parser.add_argument("--fix-check", action="store_true")
    parser.add_argument("--list", action="store_true", help="list every finding")
    parser.add_argument("--extend-select", help="rules to add to the default selection, e.g. PH201")
    parser.add_argument("--json-dir", type=Path, help="write each tree's findings to DIR/<tree>.json")
    args = parser.parse_args(argv)
    not_folders = [str(tree) for tree in args.trees if not tree.is_dir()]
    if not_folders:
        parser.error(f"not a folder: {', '.join(not_folders)}")
    extra = ["--extend-select", args.extend_select] if args.extend_select else []
    failed = False
    per_repo: dict[str, Counter] = {}
    listing: list[str] = []
    fixes: dict[str, dict] = {}
    for tree in args.trees:
        tree = tree.resolve()
        results = findings(tree, extra)
        if args.json_dir is not None:
            args.json_dir.mkdir(parents=True, exist_ok=True)
            (args.json_dir / f"{tree.name}.json").write_text(json.dumps(results))
        counts = Counter(d["code"] or "syntax-error" for d in results)
        counts.update(f"{d['code']} fix={(d['fix'] or {}).get('applicability', 'none')}" for d in results if d["code"])
        per_repo[tree.name] = counts
        for d in results:
            where = Path(d["filename"]).relative_to(tree)
            fix = (d["fix"] or {}).get("applicability", "none")
            listing.append(f"{tree.name}/{where}:{d['location']['row']}: {d['code']} [{fix}] {d['message']}")
        if args.fix_check:
            fixes[tree.name] = report = fix_check(tree, extra)
            failed |= bool(report["broken"] or report["changed_by_second_fix"])
    keys = sorted({key for counts in per_repo.values() for key in counts})
    print("| repository | " + " | ".join(keys) + " |")
    print("|---|" + "---|" * len(keys))
    for name, counts in per_repo.items():
        print(f"| {name} | " + " | ".join(str(counts.get(key, 0)) for key in keys) + " |")
    if args.list:
        print()
        print("\n".join(listing))
    for name, report in fixes.items():
        print(
            f"\n{name}: --fix --unsafe-fixes changed {report['files_changed']} files; "
            f"{len(report['broken'])} do not compile; a second --fix changed "
            f"{len(report['changed_by_second_fix'])}; exits {report['first_exit']}, {report['second_exit']}"
        )
        for line in report["broken"] + report["changed_by_second_fix"]:
            print(f"  {line}")
        if report["errors"]:
            print(f"  stderr: {report['errors']}")
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
