"""One verdict vocabulary for every mode (replay, pytest, call), and how a replay's
runs become a verdict. No torch here.

- confirmed: past the limit, the original lost counts (or positions, or angles)
  and the fixed code was exact every time;
- not-reproduced: past the limit, both were exact;
- not-driven: the run never added anything past the limit (never
  `not-reproduced`, which would claim more than was seen);
- fix-changed-results: the fixed code was not exact, or its accumulator was
  floating again at an add;
- fix-failed: the fixed code raised where the original did not;
- skipped: nothing to replay (the reason says why); error: the original could
  not be run; not-reached (pytest): no test executed the site.
"""
from __future__ import annotations

from dataclasses import asdict, dataclass, field

CONFIRMED, NOT_REPRODUCED, NOT_DRIVEN = "confirmed", "not-reproduced", "not-driven"
FIX_CHANGED, FIX_FAILED, SKIPPED, ERROR, NOT_REACHED = "fix-changed-results", "fix-failed", "skipped", "error", "not-reached"
# Verdicts that let `check --fix --verify` write the fix.
PASSING = frozenset({CONFIRMED, NOT_REPRODUCED})
# Verdicts that make `verify` exit 1.
UNTRUSTED = frozenset({FIX_FAILED, FIX_CHANGED, ERROR})
# How scenarios combine: the first verdict in this order that any scenario has.
PRECEDENCE = (FIX_FAILED, FIX_CHANGED, ERROR, CONFIRMED, NOT_REPRODUCED, NOT_DRIVEN, NOT_REACHED, SKIPPED)
ANGLE_TOLERANCE = 2.0**-20  # of the largest angle: float32 rounding is far below, bf16 far above


@dataclass
class Result:
    code: str
    path: str
    line: int
    column: int
    mode: str = "replay"
    function: str = ""
    dtype_before: str = ""
    dtype_after: str = "int64"
    exact: int | float | None = None
    before: int | float | None = None
    after: int | float | None = None
    abs_error_before: int | float | None = None
    abs_error_after: int | float | None = None
    reached: bool = False  # the site ran (an add, or the value), in this mode's runs
    max_seen: int | float | None = None  # the largest exact value it held (compare with `limit`)
    limit: int | None = None
    device: str = ""
    world_size: int = 1
    rank: int = 0
    inputs: str = ""
    seconds: float = 0.0
    verdict: str = SKIPPED
    detail: str = ""
    scenarios: list[dict] = field(default_factory=list)
    left_out: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    trace_before: list = field(default_factory=list)
    trace_after: list = field(default_factory=list)

    def as_json(self, with_trace: bool = False) -> dict:
        data = asdict(self)
        if not with_trace:
            data.pop("trace_before")
            data.pop("trace_after")
        return data


def combine(verdicts: list[str]) -> str:
    for verdict in PRECEDENCE:
        if verdict in verdicts:
            return verdict
    return SKIPPED


def _where(record: dict, harness: dict, variant: str) -> str:
    error = record.get("error") or record.get("post_error") or {}
    if error.get("source_line"):
        return f" at line {error['source_line']}"
    line = error.get("line")
    table = harness.get("line_maps", {}).get(variant, {})
    mapped = (table.get(line) or table.get(str(line))) if line is not None else None
    program = harness["programs"][variant].splitlines()
    text = program[line - 1].strip() if line is not None and 0 < line <= len(program) else ""
    if mapped and mapped[0]:
        return f" at line {mapped[0]} (`{_short(text)}`)"
    return f" (`{_short(text)}`)" if text else ""


def _plain(number) -> str:
    """A number as a reviewer reads it: whole numbers without `.0`."""
    if isinstance(number, float) and number.is_integer():
        number = int(number)
    return f"{number:,}" if isinstance(number, int) else (f"{number:,.6g}" if isinstance(number, float) else str(number))


def _short(text: str, limit: int = 60) -> str:
    return text if len(text) <= limit else text[: limit - 3] + "..."


def judge_scenario(scenario: dict, harness: dict) -> dict:
    """The verdict of one scenario from its runs (start offsets, large counts)."""
    runs = scenario["runs"]
    for run in runs:
        if "error" in run["before"]:
            return {"verdict": ERROR, "detail": f"the original code raised {run['before']['error']['error']}{_where(run['before'], harness, 'before')}", "run": run}
    for run in runs:
        if "error" in run["after"]:
            message = run["after"]["error"]["error"]
            why = " (a value of unknown type is added; the replay made it a float, on which int64 raises)" if "can't be cast to the desired output type Long" in message else ""
            return {"verdict": FIX_FAILED, "detail": f"the fixed code raised {message}{_where(run['after'], harness, 'after')}{why}", "run": run}
        if run["after"].get("post_error") and not run["before"].get("post_error"):
            error = run["after"]["post_error"]
            return {"verdict": FIX_FAILED, "detail": f"after the adds, the fixed code raised {error['error']}{_where(run['after'], harness, 'after')}", "run": run}
    if harness["kind"] == "value":
        return _judge_value(runs, harness)
    return _judge_accumulator(runs, harness)


def _judge_accumulator(runs: list[dict], harness: dict) -> dict:
    driven = [r for r in runs if r["before"]["driven"]]
    decisive = next((r for r in reversed(driven) if r["before"]["lost"]), driven[-1] if driven else runs[-1])
    if not driven:
        before = runs[-1]["before"]
        if not any(r["before"]["adds"] for r in runs):
            reason = "no add ran in this scenario"
        elif not any(r["before"]["nonzero_adds"] for r in runs):
            reason = "every count added was 0 on the synthesized inputs"
        elif before.get("limit") is None:
            reason = f"the accumulator is {before.get('start_dtype')}, which has no limit to drive past"
        else:
            reason = f"the total never passed {before['limit']:,}"
        return {"verdict": NOT_DRIVEN, "detail": reason, "run": decisive}
    changed = [r for r in runs if r["after"]["lost"]]
    if changed:
        run = max(changed, key=lambda r: r["after"].get("max_error", 0))
        exact, value = run["after"].get("final") or (0, 0)
        floating = "; it is floating again at an add: a later statement undoes the fix" if run["after"]["floating_at_add"] else ""
        return {
            "verdict": FIX_CHANGED,
            "detail": f"the fixed code was off by up to {run['after'].get('max_error', 0):,} (it ended at {value:,} where the exact total is {exact:,}){floating}",
            "run": run,
        }
    floating = [r for r in runs if r["after"]["floating_at_add"]]
    if harness.get("integral_fix") and floating:
        return {"verdict": FIX_CHANGED, "detail": "the fixed accumulator is floating again at an add: a later statement undoes the fix", "run": floating[-1]}
    if any(r["before"]["lost"] for r in driven):
        before = decisive["before"]
        exact, value = before["final"]
        start = before.get("start", before.get("offset") or 0)
        where = f" (started at {start:,})" if before.get("offset") else ""
        return {
            "verdict": CONFIRMED,
            "detail": f"{before.get('start_dtype') or harness.get('dtype')} was off by up to {before['max_error']:,} past {before['limit']:,}{where}; "
            f"it ended at {value:,} where the exact total is {exact:,}; int64 exact",
            "run": decisive,
        }
    return {"verdict": NOT_REPRODUCED, "detail": f"both exact past the limit, up to {max(r['before']['max_seen'] for r in driven):,}", "run": decisive}


def _judge_value(runs: list[dict], harness: dict) -> dict:
    records = [(run, v) for run in runs for v in run["before"]["values"]]
    after_records = [(run, v) for run in runs for v in run["after"]["values"]]
    if not records:
        return {"verdict": NOT_DRIVEN, "detail": "the expression was never evaluated in this scenario", "run": runs[-1]}
    # angles say something once there are a few positions
    angles_before = [a for run in runs for a in run["before"]["angles"] if a["positions"] >= 16]
    angles_after = [a for run in runs for a in run["after"]["angles"] if a["positions"] >= 16]
    positions = harness["code"] == "PH004"

    def past_limit(record) -> bool:
        limit = record.get("limit")
        return limit is not None and record.get("max_exact", 0) > limit

    driven = [(run, v) for run, v in records if past_limit(v)]
    angle_bad = [a for a in angles_before if a["max_error"] > ANGLE_TOLERANCE * max(1.0, a["max_angle"])]
    angle_bad_after = [a for a in angles_after if a["max_error"] > ANGLE_TOLERANCE * max(1.0, a["max_angle"])]
    wrong_after = [(run, v) for run, v in after_records if not v.get("equal")]
    if wrong_after:
        run, record = wrong_after[0]
        return {
            "verdict": FIX_CHANGED,
            "detail": f"the fixed code gives {_plain(record.get('value'))} where the exact value is {_plain(record.get('exact'))} (off by up to {_plain(record.get('max_error'))})",
            "run": run,
        }
    if angle_bad_after:
        worst = max(a["max_error"] for a in angle_bad_after)
        return {"verdict": FIX_CHANGED, "detail": f"with the fix the angles are still {worst:.3g} rad off", "run": runs[-1]}
    lost = [(run, v) for run, v in driven if not v.get("equal")]
    if lost:
        run, record = lost[-1]
        what = "positions are" if positions else "count is"
        return {
            "verdict": CONFIRMED,
            "detail": f"the {record['dtype']} {what} off by up to {record['max_error']:,.0f} (exact values up to {record['max_exact']:,.0f}); the fixed code is exact",
            "run": run,
        }
    if angle_bad:
        worst = max(angle_bad, key=lambda a: a["max_error"])
        after = max((a["max_error"] for a in angles_after), default=0.0)
        return {
            "verdict": CONFIRMED,
            "detail": f"angles from {worst['positions']} {worst['dtype']} positions off by {worst['max_error']:.3g} rad; {after:.2g} rad with the fix",
            "run": runs[-1],
        }
    if not driven and not angles_before:
        top = max((v.get("max_exact", 0) for _, v in records), default=0)
        limit = next((v.get("limit") for _, v in records if v.get("limit")), None)
        if limit is None:
            return {"verdict": NOT_DRIVEN, "detail": f"the value is {records[0][1].get('dtype')}: no limit to drive past", "run": runs[-1]}
        reason = f"the exact value never passed {limit:,} (largest {top:,.0f})"
        if limit >= 2**53:
            reason = "float64 holds counts exactly to 2^53; a single count that large cannot be made"
        return {"verdict": NOT_DRIVEN, "detail": reason, "run": runs[-1]}
    return {"verdict": NOT_REPRODUCED, "detail": "both exact past the limit", "run": runs[-1]}


def judge_replay(output: dict, harness: dict, result: Result) -> None:
    if "harness_error" in output:
        result.verdict = ERROR
        result.detail = "the replay harness failed: " + output["harness_error"].strip().splitlines()[-1]
        return
    result.device = output.get("device", "")
    result.world_size = output.get("world_size", 1)
    judged = []
    for scenario in output["scenarios"]:
        verdict = judge_scenario(scenario, harness)
        judged.append((scenario, verdict))
        result.scenarios.append({"name": scenario["name"] or "as written", "verdict": verdict["verdict"], "detail": verdict["detail"]})
    result.verdict = combine([v["verdict"] for _, v in judged])
    scenario, decisive = next((s, v) for s, v in judged if v["verdict"] == result.verdict)
    result.detail = decisive["detail"]
    if len(judged) > 1 and scenario["name"]:
        result.detail += f" (scenario: {scenario['name']})"
    _numbers(result, harness, scenario, decisive["run"])
    for s, _ in judged:
        for run in s["runs"]:
            if run["before"].get("post_error"):
                error = run["before"]["post_error"]
                where = f" at line {error['source_line']}" if error.get("source_line") else ""
                result.left_out.append(f"a statement after the adds{where} (the original raised {error['error']} on synthetic inputs)")
                break
            if run["before"].get("approximate_at"):
                result.notes.append(f"the exact total is approximate after line {run['before']['approximate_at']} (not whole numbers)")
                break
    result.left_out = list(dict.fromkeys(result.left_out))
    result.notes = list(dict.fromkeys(result.notes))


def _numbers(result: Result, harness: dict, scenario: dict, run: dict) -> None:
    before, after = run["before"], run["after"]
    if harness["kind"] == "value":
        record = before["values"][-1] if before["values"] else {}
        fixed = after["values"][-1] if after["values"] else {}
        result.exact, result.before, result.after = record.get("exact"), record.get("value"), fixed.get("value")
        result.dtype_before = record.get("dtype", result.dtype_before)
        result.dtype_after = fixed.get("dtype", result.dtype_after)
        result.max_seen = max((v.get("max_exact", 0) for r in scenario["runs"] for v in r["before"]["values"]), default=None)
        result.limit = record.get("limit")
        result.reached = bool(record)  # the expression ran
        if result.exact is not None and result.before is not None:
            result.abs_error_before = record.get("max_error")
            result.abs_error_after = fixed.get("max_error")
        angles = [a for r in scenario["runs"] for a in r["before"]["angles"]]
        if angles:
            worst = max(angles, key=lambda a: a["max_error"])
            after_angles = [a for r in scenario["runs"] for a in r["after"]["angles"]]
            result.notes.append(
                f"angle error: {worst['max_error']:.3g} rad before, {max((a['max_error'] for a in after_angles), default=0.0):.2g} rad after ({worst['positions']} positions)"
            )
        return
    if before.get("final"):
        result.exact, result.before = before["final"]
        result.abs_error_before = abs(result.before - result.exact)
    if after.get("final"):
        result.after = after["final"][1]
        result.abs_error_after = abs(after["final"][1] - after["final"][0])
    result.dtype_before = before.get("start_dtype") or result.dtype_before
    result.dtype_after = after.get("start_dtype") or result.dtype_after
    result.limit = before.get("limit")
    result.max_seen = max(r["before"]["max_seen"] for r in scenario["runs"])
    result.reached = any(r["before"]["adds"] for r in scenario["runs"])  # an add ran (max_seen vs limit: how far)
    result.trace_before = [p for r in scenario["runs"] for p in r["before"]["points"]]
    result.trace_after = [p for r in scenario["runs"] for p in r["after"]["points"]]


def judge_real(result: Result, info: dict, passes: dict[str, dict | None], errors: dict[str, list[dict]]) -> None:
    """A site of a real run (pytest or --call) from its three passes: observe (as
    written, from zero), stress (started near the limit) and stress of the fixed code."""
    observe, before, after = passes.get("observe"), passes.get("stress"), passes.get("fixed")
    result.function = info.get("function", "")
    result.dtype_before = info.get("dtype") or ""
    result.dtype_after = "int64" if info.get("integral_fix", True) else "float32"
    if info.get("skipped"):
        result.verdict, result.detail = SKIPPED, info["skipped"]
        return
    if observe is None or not observe.get("executed"):
        result.verdict, result.detail = NOT_REACHED, "no test executed this site" if result.mode == "pytest" else "the call did not execute this site"
        return
    result.reached = True
    result.device = observe.get("device", "")
    kind = info.get("kind")
    result.max_seen = observe["max_seen"] if kind != "value" else max((v.get("max_exact", 0) for v in observe["values"]), default=None)
    result.limit = observe.get("limit") or info.get("limit")
    seen = "the tests" if result.mode == "pytest" else "the call"
    if kind != "value" and result.limit:
        state = "and lost counts" if observe["lost"] else "exact"
        result.notes.append(f"as written, {seen} took it to {observe['max_seen']:,} (limit {result.limit:,}), {state}")
    first, last = info.get("first_line", 0), info.get("last_line", 0)

    def inside(error) -> bool:
        return error["path"] == info["path"] and (first <= error["line"] <= last or not first)

    failed_before = {(e["line"], e["error"]) for e in errors.get("stress", []) if inside(e)}
    for error in errors.get("fixed", []):
        if inside(error) and (error["line"], error["error"]) not in failed_before:
            result.verdict = FIX_FAILED
            result.detail = f"the fixed code raised {error['error']} at line {error['line']}" + (f" (in {error['test']})" if error.get("test") else "")
            return
    if before is None or after is None:
        result.verdict, result.detail = ERROR, "the stress passes did not finish"
        return
    if kind == "value":
        records = [v for v in before["values"]]
        fixed = [v for v in after["values"]]
        driven = [v for v in records if v.get("limit") is not None and v.get("max_exact", 0) > v["limit"]]
        if fixed and any(not v.get("equal") for v in fixed):
            bad = next(v for v in fixed if not v.get("equal"))
            result.verdict, result.detail = FIX_CHANGED, f"the fixed code gives {bad.get('value')} where the exact value is {bad.get('exact')}"
        elif any(not v.get("equal") for v in driven):
            bad = next(v for v in driven if not v.get("equal"))
            result.verdict, result.detail = CONFIRMED, f"{bad['dtype']} off by up to {bad['max_error']:,.0f} at {bad['max_exact']:,.0f}"
        elif driven:
            result.verdict, result.detail = NOT_REPRODUCED, "both exact past the limit"
        else:
            result.verdict, result.detail = NOT_DRIVEN, f"the values {seen} make stay within the limit (largest {result.max_seen:,.0f})" if result.max_seen is not None else "no value recorded"
        if records:
            result.exact, result.before = records[-1].get("exact"), records[-1].get("value")
        if fixed:
            result.after = fixed[-1].get("value")
        return
    result.trace_before, result.trace_after = before["points"], after["points"]
    if before.get("final"):
        result.exact, result.before = before["final"]
        result.abs_error_before = abs(result.before - result.exact)
    if after.get("final"):
        result.after = after["final"][1]
        result.abs_error_after = abs(after["final"][1] - after["final"][0])
    if not before["driven"]:
        if not before["adds"]:
            reason = "no add ran"
        elif not before["nonzero_adds"]:
            reason = f"every count {seen} added was 0"
        else:
            reason = "the total never passed the limit, even started near it"
        result.verdict, result.detail = NOT_DRIVEN, reason
        return
    if after["lost"]:
        exact, value = after["final"]
        result.verdict, result.detail = FIX_CHANGED, f"the fixed code gives {value:,} where the exact total is {exact:,}"
    elif info.get("integral_fix", True) and after["floating_at_add"]:
        result.verdict, result.detail = FIX_CHANGED, "the fixed accumulator is floating again at an add: a later statement undoes the fix"
    elif before["lost"]:
        result.verdict = CONFIRMED
        result.detail = (
            f"{before.get('start_dtype')} was off by up to {before.get('max_error', 0):,} past {before.get('limit') or result.limit:,} "
            f"(started at {before.get('start', before.get('offset') or 0):,}); it ended at {result.before:,} where the exact total is {result.exact:,}; int64 exact"
        )
    else:
        result.verdict, result.detail = NOT_REPRODUCED, f"both exact past the limit, up to {before['max_seen']:,}"
