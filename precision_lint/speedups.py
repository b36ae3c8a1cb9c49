"""The speed-ups that could change a finding if they were wrong, each with a name,
so benchmarks/same_findings.py can turn them off one at a time and show that the
findings stay the same: `PRECISION_LINT_WITHOUT=positions,gc` runs without those.
Nothing else should set it; the default is every speed-up on."""
from __future__ import annotations

import os

SPEEDUPS = (
    "positions",  # place findings from their statement alone, not a pass over the module
    "gc",  # no cyclic garbage collection while a file is parsed and modeled
    "pieces",  # a long module parsed in pieces of whole top-level statements, joined
    "quick",  # modeled first on the tree quick_tree.py builds from the standard parser's
    "ordered",  # the first round in import order, answered from the summaries before it
    "loops",  # a loop's second pass left out where the first changed nothing it reads
    "replay",  # a method's second run replayed from its first where it would start the same
    "carry",  # a round's index takes over the names and answers of the round before's that hold
    "workers",  # one set of worker processes for every round of a run (runner.Workers)
    "reexports",  # the first round answered through its packages' re-exports, read before it
    "trees",  # a worker keeps the trees of the files it checked; a file checked again goes back to it
    "queued",  # a busy worker is sent its next job before it reports the one it checks
)

_OFF = frozenset(part.strip() for part in os.environ.get("PRECISION_LINT_WITHOUT", "").split(",") if part.strip())


def enabled(name: str) -> bool:
    return name not in _OFF
