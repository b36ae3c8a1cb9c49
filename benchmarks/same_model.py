"""Holds the semantic model to itself with and without the speed-ups inside it (a
loop's second pass left out, a method's second run replayed: "loops" and "replay" in
precision_lint/speedups.py): for every Python file of the trees, the model is built
on one tree twice, and everything it holds is compared, value for value: the value
of every expression, every call, every creation with its facts, every accumulator's
adds and uses in order, the summaries, the calls into other modules and the uses
under autocast. Any difference is printed, and the exit status is 1.

    python benchmarks/same_model.py TREE [TREE ...] [--limit N] [--only loops|replay]

Each module is modeled on its own (no project index), on the quick tree where there
is one (libcst's otherwise). This is stronger than same_findings.py (which compares
what the rules report) and weaker in one way: it does not ask the project.
"""
from __future__ import annotations

import argparse
import dataclasses
import enum
import sys
import time
from pathlib import Path

import libcst as cst

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
from precision_lint import speedups  # noqa: E402
from precision_lint.model.semantic import build_model  # noqa: E402
from precision_lint.model.values import Creation  # noqa: E402
from precision_lint.quick_tree import quick_module  # noqa: E402
from precision_lint.source import read_source  # noqa: E402


def canon(thing: object) -> object:
    """A comparable form of what the model holds: nodes by identity (both models are
    built on the same tree), creations by their node."""
    if isinstance(thing, Creation):
        return ("creation", id(thing.node))
    if isinstance(thing, cst.CSTNode):
        return ("node", id(thing))
    if isinstance(thing, enum.Enum) or thing is None or isinstance(thing, (str, int, float, bool)):
        return thing
    if dataclasses.is_dataclass(thing):
        return (type(thing).__name__, *(canon(getattr(thing, f.name)) for f in dataclasses.fields(thing)))
    if isinstance(thing, (frozenset, set)):
        return frozenset(canon(item) for item in thing)
    if isinstance(thing, (list, tuple)):
        return tuple(canon(item) for item in thing)
    if isinstance(thing, dict):
        return tuple(sorted(((key, canon(value)) for key, value in thing.items()), key=repr))
    return repr(thing)


def creation_facts(creation: Creation) -> object:
    return tuple(
        canon(getattr(creation, f.name)) if f.name != "node" else id(creation.node)
        for f in dataclasses.fields(creation)
    )


def snapshot(model) -> dict[str, object]:
    return {
        "values": {key: canon(value) for key, value in model.values.items()},
        "calls": [canon(fact) for fact in model.calls],
        "creations": {key: creation_facts(creation) for key, creation in model.creations.items()},
        # by creation: their order follows the iteration of frozensets of creations,
        # which is by address, different in every process
        "accumulators": {
            id(a.creation.node): ([canon(add) for add in a.adds], [canon(use) for use in a.uses])
            for a in model.accumulators
        },
        "summaries": {name: canon(summary) for name, summary in model.summaries.items()},
        # the sites of each callee as a set: a loop's second pass sees them again, and
        # what they pass is joined (project/index.py)
        "external_calls": {callee: frozenset(canon(sites)) for callee, sites in model.external_calls.items()},
        "opaque_calls": sorted(model.opaque_calls),
        "autocast_uses": list(dict.fromkeys(canon(use) for use in model.autocast_uses)),
    }


MODEL_SPEEDUPS = ("loops", "replay")


def built(module: cst.Module, name: str, on: frozenset[str]) -> dict[str, object]:
    speedups._OFF = frozenset(MODEL_SPEEDUPS) - on
    return snapshot(build_model(module, name))


def first_difference(a: dict, b: dict) -> str | None:
    for part in a:
        if a[part] != b[part]:
            left, right = a[part], b[part]
            if isinstance(left, dict):
                keys = [k for k in left.keys() | right.keys() if left.get(k) != right.get(k)]
                return f"{part}: {len(keys)} differ, e.g. {left.get(keys[0])!r:.300} / {right.get(keys[0])!r:.300}"
            index = next((i for i, (x, y) in enumerate(zip(left, right)) if x != y), min(len(left), len(right)))
            return f"{part}: from item {index} of {len(left)} / {len(right)}"
    return None


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("trees", nargs="+", type=Path)
    parser.add_argument("--limit", type=int, default=0, help="at most this many files per tree")
    parser.add_argument("--only", choices=MODEL_SPEEDUPS, help="compare with this speed-up alone on")
    args = parser.parse_args()
    sys.setrecursionlimit(20_000)
    compared = differing = 0
    started = time.perf_counter()
    for tree in args.trees:
        files = sorted(p for p in tree.rglob("*.py") if ".git" not in p.parts)
        for path in files[: args.limit or None]:
            try:
                text = read_source(path).text
                quick = quick_module(text)
                module = quick.module if quick is not None else cst.parse_module(text)
            except Exception:  # unreadable or unparsable: nothing to model
                continue
            name = ".".join(path.relative_to(tree).with_suffix("").parts)
            try:
                on = frozenset({args.only} if args.only else MODEL_SPEEDUPS)
                fast, slow = built(module, name, on), built(module, name, frozenset())
            except RecursionError:
                continue
            compared += 1
            difference = first_difference(slow, fast)
            if difference is not None:
                differing += 1
                print(f"{path}: {difference}")
    print(f"{compared} modules compared, {differing} differing, {time.perf_counter() - started:.0f} s")
    return 1 if differing else 0


if __name__ == "__main__":
    sys.exit(main())
