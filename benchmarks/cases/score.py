#!/usr/bin/env python3
"""Score precision-lint on the held-out cases of issue 9.

    python score.py --python /path/to/venv/bin/python [--select PATTERN ...] [--json OUT.json]

For every case folder under cases/ it runs, with the case folder as the working directory,

    <python> -m precision_lint check --no-cache --exit-zero [--isolated | --config lint-config/pyproject.toml]
        --output-format json --extend-select PH2 .

and compares the findings with the case's expect.json:

- a hazard is *found* when any finding sits on one of its listed lines of its path (any rule code);
- a finding is a *false alarm* when it sits on no listed line of its case; every finding in a
  look-alike case is a false alarm;
- a hazard marked "fix": "none" is a *fix violation* when a finding on its lines offers a fix.

`--isolated` is passed only when the linter's `check --help` lists it; otherwise an empty
configuration is passed with `--config`, so no pyproject.toml above the cases changes the selection.
Only the standard library is used; the linter runs in the interpreter given by --python.
"""
import argparse
import collections
import concurrent.futures
import fnmatch
import json
import os
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
DEFAULT_CASES = HERE / "cases"
EMPTY_CONFIG = HERE / "lint-config" / "pyproject.toml"


def parse_args(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--python", required=True, help="interpreter that has precision_lint installed")
    p.add_argument("--select", action="append", default=[],
                   help="only cases whose name or shape matches (glob or prefix; comma-separated or repeated)")
    p.add_argument("--cases", default=str(DEFAULT_CASES), help="folder of case folders")
    p.add_argument("--json", default=str(HERE / "score-summary.json"), help="where to write the JSON summary")
    p.add_argument("--jobs", type=int, default=2, help="cases checked at once")
    p.add_argument("--timeout", type=float, default=300.0, help="seconds per case")
    p.add_argument("--lint-arg", action="append", default=[], help="extra argument for `check` (repeatable)")
    p.add_argument("--quiet", action="store_true", help="print the tables only, not every miss and false alarm")
    return p.parse_args(argv)


def shape_key(shape):
    head = shape.split("-", 1)[0]
    return (int(head) if head.isdigit() else 99, shape)


def selected(name, shape, patterns):
    if not patterns:
        return True
    for pat in patterns:
        for target in (name, shape):
            if fnmatch.fnmatch(target, pat) or target.startswith(pat):
                return True
    return False


def load_cases(folder, patterns):
    cases = []
    for expect_path in sorted(Path(folder).glob("*/expect.json")):
        expect = json.loads(expect_path.read_text())
        name = expect_path.parent.name
        if selected(name, expect["shape"], patterns):
            cases.append((name, expect_path.parent, expect))
    return cases


def isolation_args(python):
    """`--isolated` where the linter has it, else an explicit empty configuration."""
    try:
        out = subprocess.run([python, "-m", "precision_lint", "check", "--help"],
                             capture_output=True, text=True, timeout=120)
        if "--isolated" in out.stdout:
            return ["--isolated"]
    except (OSError, subprocess.TimeoutExpired):
        pass
    return ["--config", str(EMPTY_CONFIG)]


def run_linter(python, folder, extra, timeout):
    cmd = [python, "-m", "precision_lint", "check", "--no-cache", "--exit-zero", *extra,
           "--output-format", "json", "--extend-select", "PH2", "."]
    start = time.monotonic()
    try:
        proc = subprocess.run(cmd, cwd=folder, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return None, f"timed out after {timeout:.0f}s", time.monotonic() - start
    elapsed = time.monotonic() - start
    if proc.returncode != 0:
        tail = (proc.stderr or proc.stdout).strip().splitlines()[-3:]
        return None, f"exit {proc.returncode}: {' | '.join(tail)}", elapsed
    try:
        findings = json.loads(proc.stdout or "[]")
    except json.JSONDecodeError as exc:
        return None, f"output is not JSON ({exc})", elapsed
    return findings, None, elapsed


def relative(filename, folder):
    path = Path(filename)
    if not path.is_absolute():
        path = folder / path
    try:
        return Path(os.path.realpath(path)).relative_to(os.path.realpath(folder)).as_posix()
    except ValueError:
        return path.as_posix()


def judge(name, folder, expect, findings):
    """Compare one case's findings with its expect.json."""
    rows = []
    for f in findings:
        loc = f.get("location") or {}
        rows.append({
            "path": relative(f.get("filename", ""), folder),
            "line": loc.get("row"),
            "code": f.get("code"),
            "message": f.get("message", ""),
            "fix": (f.get("fix") or {}).get("applicability") if f.get("fix") else None,
        })
    listed = {(h["path"], line) for h in expect["hazards"] for line in h["lines"]}
    hazards = []
    for h in expect["hazards"]:
        hits = [r for r in rows if r["path"] == h["path"] and r["line"] in h["lines"]]
        entry = {"path": h["path"], "lines": h["lines"], "found": bool(hits),
                 "codes": sorted({r["code"] for r in hits}), "why": h["why"]}
        if h.get("fix") == "none":
            offered = sorted({r["fix"] for r in hits if r["fix"]})
            entry["fix_expected"] = "none"
            entry["fix_violation"] = offered or None
        hazards.append(entry)
    if expect["lookalike"]:
        false_alarms = rows
    else:
        false_alarms = [r for r in rows if (r["path"], r["line"]) not in listed]
    return {"case": name, "shape": expect["shape"], "lookalike": expect["lookalike"],
            "hazards": hazards, "false_alarms": false_alarms, "findings": rows}


def tabulate(headers, rows):
    widths = [max(len(str(x)) for x in col) for col in zip(headers, *rows)]
    line = lambda r: "  ".join(str(x).ljust(w) if i == 0 else str(x).rjust(w) for i, (x, w) in enumerate(zip(r, widths)))
    out = [line(headers), "  ".join("-" * w for w in widths)]
    out += [line(r) for r in rows]
    return "\n".join(out)


def summarise(results):
    per_shape = collections.OrderedDict()
    for r in sorted(results, key=lambda r: shape_key(r["shape"])):
        s = per_shape.setdefault(r["shape"], collections.Counter())
        s["hazard_cases" if not r["lookalike"] else "lookalike_cases"] += 1
        s["errors"] += 1 if r.get("error") else 0
        for h in r["hazards"]:
            s["hazards"] += 1
            s["found" if h["found"] else "missed"] += 1
            if h.get("fix_violation"):
                s["fix_violations"] += 1
        s["false_alarms"] += len(r["false_alarms"])
        if r["lookalike"] and r["false_alarms"]:
            s["lookalikes_flagged"] += 1
    total = collections.Counter()
    for s in per_shape.values():
        total.update(s)
    by_code = collections.Counter(fa["code"] for r in results for fa in r["false_alarms"])
    found_by_code = collections.Counter(c for r in results for h in r["hazards"] for c in h["codes"])
    return per_shape, total, by_code, found_by_code


def report(results, per_shape, total, by_code, found_by_code, quiet):
    cols = ["hazard_cases", "lookalike_cases", "hazards", "found", "missed", "false_alarms",
            "lookalikes_flagged", "fix_violations", "errors"]
    heads = ["shape", "H cases", "L cases", "hazards", "found", "missed", "false alarms",
             "L flagged", "fix viol.", "errors"]
    rows = [[shape] + [s[c] for c in cols] for shape, s in per_shape.items()]
    rows.append(["TOTAL"] + [total[c] for c in cols])
    print(tabulate(heads, rows))
    n = total["hazards"]
    print()
    print(f"hazards found: {total['found']}/{n} ({100.0 * total['found'] / n if n else 0:.1f}%); "
          f"false alarms: {total['false_alarms']} findings, "
          f"{total['lookalikes_flagged']}/{total['lookalike_cases']} look-alikes flagged; "
          f"fix violations: {total['fix_violations']}; errors: {total['errors']}")
    if found_by_code:
        print("rule codes on found hazards: " + ", ".join(f"{c} {k}" for c, k in sorted(found_by_code.items())))
    if by_code:
        print("false alarms by rule code:   " + ", ".join(f"{c} {k}" for c, k in sorted(by_code.items())))
    if quiet:
        return
    errors = [r for r in results if r.get("error")]
    if errors:
        print("\nerrors:")
        for r in errors:
            print(f"  {r['case']}: {r['error']}")
    print("\nmissed hazards:")
    for r in results:
        for h in r["hazards"]:
            if not h["found"]:
                print(f"  {r['case']}  {h['path']}:{','.join(map(str, h['lines']))}  [{r['shape']}]")
    print("\nfalse alarms:")
    for r in results:
        for fa in r["false_alarms"]:
            kind = "look-alike" if r["lookalike"] else "unlisted line"
            print(f"  {r['case']}  {fa['path']}:{fa['line']}  {fa['code']}  ({kind}) {fa['message'][:110]}")
    violations = [(r, h) for r in results for h in r["hazards"] if h.get("fix_violation")]
    if violations:
        print("\nfix violations (a fix offered where none is safe):")
        for r, h in violations:
            print(f"  {r['case']}  {h['path']}:{','.join(map(str, h['lines']))}  offered {h['fix_violation']}")


def linter_identity(python):
    code = ("import precision_lint, os, sys; "
            "print(getattr(precision_lint, '__version__', '?')); print(os.path.dirname(precision_lint.__file__))")
    try:
        out = subprocess.run([python, "-c", code], capture_output=True, text=True, timeout=60)
        lines = out.stdout.strip().splitlines()
        return {"version": lines[0] if lines else None, "package": lines[1] if len(lines) > 1 else None}
    except (OSError, subprocess.TimeoutExpired):
        return {"version": None, "package": None}


def main(argv=None):
    args = parse_args(argv)
    patterns = [p for item in args.select for p in item.split(",") if p]
    cases = load_cases(args.cases, patterns)
    if not cases:
        print("no case matches", file=sys.stderr)
        return 2
    extra = isolation_args(args.python) + list(args.lint_arg)
    print(f"{len(cases)} cases; linter: {args.python} -m precision_lint check {' '.join(extra)} ...", flush=True)

    def one(item):
        name, folder, expect = item
        findings, error, elapsed = run_linter(args.python, folder, extra, args.timeout)
        result = judge(name, folder, expect, findings or [])
        result["seconds"] = round(elapsed, 2)
        if error:
            result["error"] = error
        return result

    started = time.monotonic()
    with concurrent.futures.ThreadPoolExecutor(max_workers=max(1, args.jobs)) as pool:
        results = list(pool.map(one, cases))
    per_shape, total, by_code, found_by_code = summarise(results)
    report(results, per_shape, total, by_code, found_by_code, args.quiet)
    summary = {
        "python": args.python,
        "linter": linter_identity(args.python),
        "command_extra": extra,
        "select": patterns,
        "seconds": round(time.monotonic() - started, 1),
        "totals": dict(total),
        "per_shape": {k: dict(v) for k, v in per_shape.items()},
        "false_alarms_by_code": dict(by_code),
        "found_by_code": dict(found_by_code),
        "cases": results,
    }
    Path(args.json).write_text(json.dumps(summary, indent=2) + "\n")
    print(f"\nJSON summary: {args.json}")
    return 1 if total["errors"] else 0


if __name__ == "__main__":
    sys.exit(main())
