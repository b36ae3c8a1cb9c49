"""Score precision-lint's ecosystem output against hand labels.

    python benchmarks/ecosystem/score.py OUT_DIR --trees-root TREES [--labels labels.jsonl]
                    [--verdicts verdicts.jsonl ...]

OUT_DIR holds one `<repo>.json` per tree: the CLI's `--output-format json` output, run from
the tree's root (`benchmarks/ecosystem.py TREES... --json-dir OUT_DIR`), and TREES/<repo> is
that tree, named as trees.tsv names it (a link will do): a finding outside it stops the
score. The trees of trees.tsv whose `set` is `held-out` were added before the rules were
run on them. A labelled hazard is found when any finding, of any code,
sits in its path on one of its `lines`; a look-alike is flagged the same way. Labels whose
`source` is "finding" were drawn from the baseline's findings; rates over the "reading"
labels alone are printed too. Findings on no
labelled line are listed so they can be judged; `--verdicts` (files of earlier judgements,
one JSON object per line with repo, path, line, code, verdict) marks the ones already judged.

Only repositories with a JSON file in OUT_DIR are scored; labels of the others are counted
as "not run". Results are printed three times: held-out trees (those in --held-out), the
other trees, and all together.

`--previous EARLIER_OUT_DIR` adds the findings lost and gained since that run (trees in
both), each with its verdict where one is known: a change that looks like a pure gain in
precision can lose true findings that no label covers.
"""
from __future__ import annotations

import argparse
import json
from collections import Counter, defaultdict
from pathlib import Path

HERE = Path(__file__).resolve().parent


def load_labels(path: Path) -> list[dict]:
    labels = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
    for label in labels:
        label["lines"] = [int(n) for n in label["lines"]]
    return labels


def load_findings(out_dir: Path, trees: Path) -> dict[str, list[dict]]:
    """repo -> findings with `path` relative to the tree root and `line`."""
    per_repo = {}
    for file in sorted(out_dir.glob("*.json")):
        repo = file.stem
        root = (trees / repo).resolve()
        rows = []
        for d in json.loads(file.read_text() or "[]"):
            if not d.get("code"):
                continue  # syntax errors carry no code
            path = relative(d["filename"], repo, root)
            if path is None:
                raise SystemExit(
                    f"{file}: {d['filename']} is not in {trees / repo}: no label or verdict of {repo} could "
                    f"match it. Name the tree's folder as trees.tsv does (a link will do)."
                )
            rows.append({"path": path, "line": d["location"]["row"],
                         "code": d["code"], "message": d.get("message", "")})
        per_repo[repo] = rows
    return per_repo


def relative(filename: str, repo: str, root: Path) -> str | None:
    """`filename` from the tree's root, or None where it lies outside it: the JSON
    gives absolute paths, and a tree checked in a folder named otherwise than trees.tsv
    names it would match no label and no verdict (megatron-head's did, unnoticed)."""
    path = Path(filename)
    if not path.is_absolute():
        return path.as_posix()
    try:
        return path.resolve().relative_to(root).as_posix()
    except ValueError:
        parts = path.parts  # run from a copy of the tree elsewhere: cut at the repo's folder
        if repo in parts:
            return Path(*parts[len(parts) - parts[::-1].index(repo):]).as_posix()
        return None


def held_out_names(tsv: Path | None) -> set[str]:
    """The trees of trees.tsv marked `held-out` (name first, set last)."""
    if tsv is None or not tsv.exists():
        return set()
    rows = [line.split("\t") for line in tsv.read_text().splitlines()[1:] if line.strip()]
    return {row[0] for row in rows if row[-1] == "held-out"}


def load_verdicts(paths: list[Path]) -> dict[tuple, str]:
    verdicts = {}
    for path in paths:
        if not path.exists():
            continue
        for line in path.read_text().splitlines():
            if line.strip():
                v = json.loads(line)
                verdicts[(v["repo"], v["path"], int(v["line"]), v["code"])] = v["verdict"]
    return verdicts


def score(labels: list[dict], findings: dict[str, list[dict]], verdicts: dict[tuple, str]) -> dict:
    at = defaultdict(list)  # (repo, path, line) -> findings
    for repo, rows in findings.items():
        for f in rows:
            at[(repo, f["path"], f["line"])].append(f)
    labelled_lines = set()
    results = []
    for label in labels:
        keys = [(label["repo"], label["path"], n) for n in label["lines"]]
        labelled_lines.update(keys)
        hits = [f for k in keys for f in at.get(k, [])]
        results.append({**label, "run": label["repo"] in findings, "hits": hits})
    unlabelled = []
    for (repo, path, line), rows in sorted(at.items()):
        if (repo, path, line) not in labelled_lines:
            for f in rows:
                unlabelled.append({"repo": repo, **f, "verdict": verdicts.get((repo, path, line, f["code"]), "unjudged")})
    return {"labels": results, "unlabelled": unlabelled,
            "findings": sum(len(rows) for rows in findings.values())}


def hits_text(label: dict) -> str:
    return ", ".join(sorted({f"{f['code']}@{f['line']}" for f in label["hits"]}))


def pct(a: int, b: int) -> str:
    return f"{a}/{b} ({100 * a / b:.0f}%)" if b else f"{a}/0"


def report(title: str, result: dict, findings: dict[str, list[dict]]) -> list[str]:
    labels = [r for r in result["labels"] if r["run"]]
    not_run = [r for r in result["labels"] if not r["run"]]
    hazards = [r for r in labels if r["hazard"]]
    looks = [r for r in labels if not r["hazard"]]
    out = [f"## {title}", ""]
    out.append(f"trees scored: {len(findings)}; findings: {sum(len(v) for v in findings.values())}; "
               f"labels scored: {len(labels)} ({len(hazards)} hazards, {len(looks)} look-alikes); "
               f"labels in trees not run: {len(not_run)}")
    out.append(f"recall floor (hazards found): {pct(sum(bool(r['hits']) for r in hazards), len(hazards))}")
    out.append(f"look-alikes flagged (false-alarm rate): {pct(sum(bool(r['hits']) for r in looks), len(looks))}")
    # Labels with source "finding" were drawn from the baseline's own findings, so they bias both
    # rates; the "reading" labels were found by reading code and are the fair measure.
    read_h = [r for r in hazards if r.get("source") != "finding"]
    read_l = [r for r in looks if r.get("source") != "finding"]
    out.append(f"  labels found by reading only: hazards found {pct(sum(bool(r['hits']) for r in read_h), len(read_h))}, "
               f"look-alikes flagged {pct(sum(bool(r['hits']) for r in read_l), len(read_l))}")
    out += ["", "| category | hazards | found | missed | look-alikes | flagged |", "|---|---|---|---|---|---|"]
    cats = sorted({r["category"] for r in labels}, key=lambda c: (c == "existing", c))
    for cat in cats:
        h = [r for r in hazards if r["category"] == cat]
        lk = [r for r in looks if r["category"] == cat]
        found = sum(bool(r["hits"]) for r in h)
        out.append(f"| {cat} | {len(h)} | {found} | {len(h) - found} | {len(lk)} | {sum(bool(r['hits']) for r in lk)} |")
    codes = sorted({f["code"] for rows in findings.values() for f in rows}
                   | {f["code"] for r in labels for f in r["hits"]})
    unl = [u for u in result["unlabelled"] if u["repo"] in findings]
    out += ["", "| rule | findings | on hazards (labels found) | on look-alikes (labels flagged) | unlabelled findings |",
            "|---|---|---|---|---|"]
    for code in codes:
        n = sum(f["code"] == code for rows in findings.values() for f in rows)
        hz = sum(any(f["code"] == code for f in r["hits"]) for r in hazards)
        lk = sum(any(f["code"] == code for f in r["hits"]) for r in looks)
        out.append(f"| {code} | {n} | {hz} | {lk} | {sum(u['code'] == code for u in unl)} |")
    out += ["", "missed hazards:"]
    out += [f"  [{r['category']}] {r['repo']}/{r['path']}:{','.join(map(str, r['lines']))}  {r['why']}"
            for r in hazards if not r["hits"]] or ["  (none)"]
    out += ["", "found hazards:"]
    out += [f"  [{r['category']}] {r['repo']}/{r['path']}:{','.join(map(str, r['lines']))}  by "
            + hits_text(r) for r in hazards if r["hits"]] or ["  (none)"]
    out += ["", "flagged look-alikes:"]
    out += [f"  [{r['category']}] {r['repo']}/{r['path']}:{','.join(map(str, r['lines']))}  by "
            + hits_text(r) + f"  ({r['why']})"
            for r in looks if r["hits"]] or ["  (none)"]
    counts = Counter(u["verdict"] for u in unl)
    out += ["", f"findings on unlabelled lines ({len(unl)}; " + ", ".join(f"{k} {v}" for k, v in sorted(counts.items())) + "):"]
    out += [f"  {u['repo']}/{u['path']}:{u['line']}: {u['code']} [{u['verdict']}] {u['message'][:140]}" for u in unl] or ["  (none)"]
    return out + [""]


def changes_since(before: dict[str, list[dict]], now: dict[str, list[dict]], verdicts: dict[tuple, str]) -> list[str]:
    """The findings (repo, path, line, code) in one run and not the other, for the trees
    both runs checked."""
    def keys(rows_by_repo: dict[str, list[dict]], repo: str) -> set[tuple]:
        return {(repo, r["path"], r["line"], r["code"]) for r in rows_by_repo[repo]}

    lines = ["", "## findings lost and gained since the previous run", ""]
    for title, pick in (("lost", lambda old, new: old - new), ("gained", lambda old, new: new - old)):
        changed = sorted(k for repo in sorted(set(before) & set(now)) for k in pick(keys(before, repo), keys(now, repo)))
        lines.append(f"{title} ({len(changed)}):")
        lines += [f"  {repo}/{path}:{line}: {code} [{verdicts.get((repo, path, line, code), 'not judged')}]"
                  for repo, path, line, code in changed]  # fmt: skip
    return lines


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("out_dir", type=Path)
    parser.add_argument("--labels", type=Path, default=HERE / "labels.jsonl")
    parser.add_argument("--trees-root", dest="trees", type=Path, required=True, help="folder holding the trees by name")
    parser.add_argument("--held-out", type=Path, default=HERE / "trees.tsv")
    parser.add_argument("--verdicts", type=Path, nargs="*", default=[HERE / "verdicts.jsonl"])
    parser.add_argument("--previous", type=Path, help="an earlier run's OUT_DIR: list the findings lost and gained since")
    args = parser.parse_args(argv)
    labels = load_labels(args.labels)
    findings = load_findings(args.out_dir, args.trees)
    if not findings:
        parser.error(f"no <repo>.json files in {args.out_dir}")
    verdicts = load_verdicts(args.verdicts)
    held = held_out_names(args.held_out)
    lines = []
    for title, keep in (("held-out trees", lambda repo: repo in held),
                        ("other trees (the existing ecosystem run)", lambda repo: repo not in held),
                        ("all trees", lambda repo: True)):
        sub_findings = {repo: rows for repo, rows in findings.items() if keep(repo)}
        sub_labels = [label for label in labels if keep(label["repo"])]
        lines += report(title, score(sub_labels, sub_findings, verdicts), sub_findings)
    if args.previous is not None:
        lines += changes_since(load_findings(args.previous, args.trees), findings, verdicts)
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
