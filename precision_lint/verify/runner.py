"""Finds what to verify in a file, builds each replay (no torch here), runs it in a
child process of its own (time and memory limits, its whole process group killed
on timeout) and judges the numbers."""
from __future__ import annotations

import json
import os
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

from ..registry import all_rules
from .findings import FileFindings, project_findings, run_dtype
from .isolation import run_isolated
from .program import ReplayBuilder
from .sites import VERIFIABLE, NoReplay, find_site
from .source_view import SourceIndex
from .synth_description import describe_inputs
from .under_autocast import replay_autocast
from .verdicts import ERROR, SKIPPED, Result, judge_replay


@dataclass
class Options:
    device: str = "auto"
    world_size: int = 2
    seed: int = 0
    scale: float = 1.0
    timeout: float = 120.0
    memory_limit_gb: float = 8.0

    def memory(self) -> float | None:
        # CUDA reserves far more address space than it uses: no RLIMIT_AS there
        return None if self.device == "cuda" else self.memory_limit_gb


def _precision_codes() -> frozenset[str]:
    return frozenset(rule.code for rule in all_rules() if not rule.checks_suppressions)


def verify_file(path: Path, codes: frozenset[str], options: Options) -> list[Result]:
    """One file checked on its own (as a project of one module)."""
    found, unreadable = project_findings([path], lambda _: codes)
    return [_unreadable(p, why) for p, why in unreadable] + [r for f in found for r in verify_findings(f, options)]


def _unreadable(path: Path, why: str) -> Result:
    return Result("", str(path), 0, 0, verdict=SKIPPED, detail=f"cannot read or check the file: {why}")


def verify_findings(found: FileFindings, options: Options) -> list[Result]:
    path = found.path
    precision = _precision_codes()
    items = [f for f in found.findings if f.diagnostic.code in precision]
    results = [
        Result(f.diagnostic.code or "", str(path), f.diagnostic.location.row, f.diagnostic.location.column, verdict=SKIPPED, detail=f"no replay for {f.diagnostic.code}")
        for f in items if f.diagnostic.code not in VERIFIABLE
    ]  # fmt: skip
    items = [f for f in items if f.diagnostic.code in VERIFIABLE]
    if not items:
        return results
    model = found.model()
    index = SourceIndex(model, found.text)
    for item in items:
        diagnostic = item.diagnostic
        result = Result(diagnostic.code or "", str(path), diagnostic.location.row, diagnostic.location.column)
        try:
            site = find_site(index, model, diagnostic)
            site.run_dtype = run_dtype(site.dtype, item.conditions, found.facts)
            builder = ReplayBuilder(index, model, site)
            harness = builder.build()
            # what the project runs the site under: the child runs the calls in it
            autocast = replay_autocast(found, item, index, site)
            harness["autocast"] = autocast.dtype if autocast is not None else None
        except NoReplay as reason:
            result.detail = str(reason)
            results.append(result)
            continue
        result.function, result.left_out = harness["function"], list(harness["left_out"])
        result.dtype_before = harness.get("dtype") or ""
        result.dtype_after = "int64" if harness["integral_fix"] else "float32"
        result.inputs = describe_inputs(harness)
        if site.run_dtype is not None:
            result.notes.append(f"dtype: {site.run_dtype[1]}")
        run_replay(harness, result, options)
        if autocast is not None:
            at = 1 if site.run_dtype is not None else 0  # next to the other dtype: note, before the run's own
            result.notes[at:at] = _autocast_notes(autocast, builder, index, result, options)
        results.append(result)
    return results


def _autocast_notes(autocast, builder: ReplayBuilder, index: SourceIndex, result: Result, options: Options) -> list[str]:
    """The `dtype:` note of a replay under autocast, and what autocast rounds that the
    replay does not compare (it compares the positions and the angle product, not what
    a layer call such as `self.proj(t)` makes of them)."""
    device = (result.device or options.device).split(":")[0]
    notes = [f"dtype: {autocast.why}: replayed under `torch.autocast({device!r}, dtype=torch.{autocast.dtype})`, before and after"]
    compared = builder.angle is not None and index.line(builder.angle[1]) == autocast.line
    if autocast.op is not None and not compared:
        notes.append(f"autocast runs `{autocast.op}` (line {autocast.line}) in {autocast.dtype}: the replay compares the positions it takes, not what it makes of them")
    return notes


def run_replay(harness: dict, result: Result, options: Options) -> None:
    job = {**harness, "device": options.device, "world_size": options.world_size, "seed": options.seed, "scale": options.scale}
    # a scratch folder of its own: not the user's folder (`python -m` would import from
    # it first), and whatever a replay leaves there goes with it
    with tempfile.TemporaryDirectory(prefix="precision-lint-replay-") as scratch:
        outcome = run_isolated(
            [sys.executable, "-m", "precision_lint.verify.child"],
            json.dumps(job),
            options.timeout,
            options.memory(),
            env={**os.environ, "PYTHONWARNINGS": "ignore"},
            cwd=scratch,
        )
    result.seconds = outcome.seconds
    if outcome.timed_out:
        result.verdict = ERROR
        result.detail = f"the replay ran past --timeout {options.timeout:g} s and was stopped (process group {outcome.pgid}, every rank, killed)"
        return
    if outcome.returncode != 0 or not outcome.stdout.strip():
        why = "it tried to write a file, which replays may not" if outcome.returncode == -25 else outcome.last_lines()
        result.verdict, result.detail = ERROR, f"the replay process died (exit {outcome.returncode}): {why}"
        return
    judge_replay(json.loads(outcome.stdout), harness, result)

