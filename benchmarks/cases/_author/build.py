"""Writes benchmarks/cases/cases/ from the case definitions in cases_*.py.

Each case gives its files as source text and its hazards as anchors: a substring that must
occur on exactly one line of the named file. The builder turns anchors into line numbers,
checks that every file parses, and writes expect.json. Run: python build.py
"""
import ast
import importlib
import json
import shutil
import sys
import textwrap
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

HERE = Path(__file__).resolve().parent
CASES_DIR = HERE.parent / "cases"
from registry import REGISTRY  # noqa: E402  (cases_*.py fill it)


def _line_of(src, anchor, where):
    hits = [i for i, line in enumerate(src.splitlines(), 1) if anchor in line]
    if len(hits) != 1:
        raise SystemExit(f"{where}: anchor {anchor!r} matches lines {hits}")
    return hits[0]


def build():
    for part in sorted(HERE.glob("cases_*.py")):
        importlib.import_module(part.stem)
    names = [c["name"] for c in REGISTRY]
    dupes = {n for n in names if names.count(n) > 1}
    if dupes:
        raise SystemExit(f"duplicate case names: {sorted(dupes)}")
    if CASES_DIR.exists():
        shutil.rmtree(CASES_DIR)
    for c in REGISTRY:
        folder = CASES_DIR / c["name"]
        sources = {}
        for rel, text in c["files"].items():
            text = textwrap.dedent(text).lstrip("\n")
            try:
                ast.parse(text, filename=rel)
            except SyntaxError as exc:
                raise SystemExit(f"{c['name']}/{rel}: {exc}")
            sources[rel] = text
            path = folder / rel
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text)
        if c["lookalike"] and c["hazards"]:
            raise SystemExit(f"{c['name']}: a look-alike lists hazards")
        if not c["lookalike"] and not c["hazards"]:
            raise SystemExit(f"{c['name']}: a hazard case lists no hazard")
        expect = {"shape": c["shape"], "hazards": [], "lookalike": c["lookalike"]}
        for h in c["hazards"]:
            if h["path"] not in sources:
                raise SystemExit(f"{c['name']}: no file {h['path']}")
            where = f"{c['name']}/{h['path']}"
            lines = sorted({_line_of(sources[h["path"]], a, where) for a in h["anchors"]})
            entry = {"path": h["path"], "lines": lines, "why": h["why"]}
            if "fix" in h:
                entry["fix"] = h["fix"]
            expect["hazards"].append(entry)
        if c["note"]:
            expect["note"] = c["note"]
        (folder / "expect.json").write_text(json.dumps(expect, indent=2) + "\n")
    print(f"wrote {len(REGISTRY)} cases to {CASES_DIR}")


if __name__ == "__main__":
    build()
