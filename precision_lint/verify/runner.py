"""Finds what to verify, runs each replay in its own child process (with a time and
memory limit, so one crash never takes down the others) and turns the numbers into
a verdict."""
from __future__ import annotations

import json
import os
import resource
import subprocess
import sys
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path

import libcst as cst

from ..engine import check_source
from ..model.semantic import build_model
from ..source import read_source
from .harness import NoHarness, SourceIndex, build_harness

# Rules whose findings verify can replay.
VERIFIABLE = frozenset({"PH001", "PH201"})
CONFIRMED, NOT_REPRODUCED = "confirmed", "not-reproduced"
FIX_CHANGED, FIX_FAILED, SKIPPED, ERROR = "fix-changed-results", "fix-failed", "skipped", "error"
# Verdicts that let `check --fix --verify` write the fix.
PASSING = frozenset({CONFIRMED, NOT_REPRODUCED})


@dataclass
class Options:
    device: str = "auto"
    world_size: int = 2
    seed: int = 0
    scale: float = 1.0
    timeout: float = 120.0
    memory_limit_gb: float = 8.0


@dataclass
class Result:
    code: str
    path: str
    line: int
    column: int
    function: str = ""
    dtype_before: str = ""
    dtype_after: str = "int64"
    exact: int | None = None
    before: int | None = None
    after: int | None = None
    abs_error_before: int | None = None
    abs_error_after: int | None = None
    device: str = ""
    world_size: int = 1
    scale: int | None = None
    seconds: float = 0.0
    verdict: str = SKIPPED
    detail: str = ""
    left_out: list[str] = field(default_factory=list)
    trace_before: list = field(default_factory=list)
    trace_after: list = field(default_factory=list)

    def as_json(self, with_trace: bool = False) -> dict:
        data = asdict(self)
        if not with_trace:
            data.pop("trace_before")
            data.pop("trace_after")
        return data


def verify_file(path: Path, codes: frozenset[str], options: Options) -> list[Result]:
    try:
        source = read_source(path)
    except (OSError, UnicodeDecodeError, SyntaxError) as error:
        return [Result("", str(path), 0, 0, verdict=SKIPPED, detail=f"cannot read the file: {error}")]
    found = [d for d in check_source(source.text, str(path), codes) if d.fix is not None and d.code]
    results = [
        Result(d.code or "", str(path), d.location.row, d.location.column, verdict=SKIPPED,
               detail=f"no replay for {d.code} yet: only {', '.join(sorted(VERIFIABLE))} findings are replayed")
        for d in found if d.code not in VERIFIABLE
    ]  # fmt: skip
    diagnostics = [d for d in found if d.code in VERIFIABLE]
    if not diagnostics:
        return results
    model = build_model(cst.parse_module(source.text))
    index = SourceIndex(model, source.text)
    by_location = {}
    for accumulator in model.accumulators:
        span = index.positions[accumulator.creation.node]
        by_location[(span.start.line, span.start.column + 1)] = accumulator
    for diagnostic in diagnostics:
        result = Result(diagnostic.code or "", str(path), diagnostic.location.row, diagnostic.location.column)
        accumulator = by_location.get((diagnostic.location.row, diagnostic.location.column))
        try:
            if accumulator is None:
                raise NoHarness("the finding's accumulator was not found again")
            harness = build_harness(index, model, accumulator, diagnostic)
        except NoHarness as reason:
            result.detail = str(reason)
            results.append(result)
            continue
        result.function, result.dtype_before, result.left_out = harness.function, harness.dtype, harness.left_out
        _run(harness.to_json(), result, options)
        results.append(result)
    return results


def _limit_memory(gigabytes: float):
    def apply() -> None:
        limit = int(gigabytes * 2**30)
        resource.setrlimit(resource.RLIMIT_AS, (limit, limit))

    return apply


def _run(harness: dict, result: Result, options: Options) -> None:
    job = {
        "harness": harness,
        "device": options.device,
        "world_size": options.world_size,
        "seed": options.seed,
        "scale": options.scale,
    }
    started = time.perf_counter()
    # CUDA reserves far more address space than it uses: no RLIMIT_AS there.
    limit = None if options.device == "cuda" else _limit_memory(options.memory_limit_gb)
    try:
        completed = subprocess.run(
            [sys.executable, "-m", "precision_lint.verify.child"],
            input=json.dumps(job),
            capture_output=True,
            text=True,
            timeout=options.timeout,
            preexec_fn=limit,
            env={**os.environ, "PYTHONWARNINGS": "ignore"},
        )
    except subprocess.TimeoutExpired:
        result.verdict, result.detail = ERROR, f"the replay ran past --timeout {options.timeout:g} s and was stopped"
        result.seconds = time.perf_counter() - started
        return
    result.seconds = time.perf_counter() - started
    if completed.returncode != 0 or not completed.stdout.strip():
        tail = (completed.stderr or "").strip().splitlines()[-3:]
        result.verdict, result.detail = ERROR, f"the replay process died (exit {completed.returncode}): {' / '.join(tail)}"
        return
    _judge(json.loads(completed.stdout), harness, result)


def _judge(output: dict, harness: dict, result: Result) -> None:
    if "harness_error" in output:
        result.verdict, result.detail = ERROR, output["harness_error"].strip().splitlines()[-1]
        return
    result.device, result.world_size = output["device"], output["world_size"]
    before, after = output["before"], output["after"]
    if "error" in before:
        result.verdict = ERROR
        result.detail = f"the original code could not be replayed: {before['error']}"
        return
    result.exact, result.before = before["exact"], before["total"]
    result.abs_error_before = abs(result.before - result.exact)
    result.trace_before = before.get("trace", [])
    result.scale = result.exact
    if "error" in after:
        result.verdict, result.detail = FIX_FAILED, f"the fixed code raised {after['error']}"
        return
    result.after, result.trace_after = after["total"], after.get("trace", [])
    result.abs_error_after = abs(result.after - after["exact"])
    if after.get("post_error") and not before.get("post_error"):
        result.verdict = FIX_FAILED
        result.detail = f"after the adds, the fixed code raised {after['post_error']}"
    elif after["exact"] != result.exact or result.after != result.exact:
        result.verdict = FIX_CHANGED
        result.detail = f"the fixed code gives {result.after:,}, off by {result.abs_error_after:,} from the exact count"
    elif result.before != result.exact:
        result.verdict = CONFIRMED
        result.detail = f"{harness['dtype']} lost {result.abs_error_before} at a total of {result.exact:,}"
    else:
        result.verdict = NOT_REPRODUCED
        if harness["dtype"] == "float64":
            result.detail = "float64 is exact up to 2^53; not driven there"
        else:
            result.detail = f"both exact at a total of {result.exact:,}"
    if before.get("post_error"):
        result.left_out.append(f"statements after the adds (they fail in the replay: {before['post_error']})")
