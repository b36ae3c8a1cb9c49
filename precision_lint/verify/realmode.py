"""`verify --pytest` and `verify --call`: the user's own code on real inputs, three
passes each (observe, stress, stress of the fixed code), each in a child process
of its own under the same limits as replays. No torch here."""
from __future__ import annotations

import json
import os
import sys
import tempfile
from pathlib import Path
from typing import Callable

from .findings import project_findings
from .isolation import run_isolated
from .sites import VERIFIABLE
from .verdicts import ERROR, Result, judge_real

PASSES = (("observe", "observe", "before"), ("stress", "stress", "before"), ("fixed", "stress", "after"))


def flagged_files(files: list[Path], codes_for: Callable[[str], frozenset[str]]) -> tuple[list[str], dict[str, dict | None], dict[str, list[str]]]:
    """The files with at least one finding verify can check (checked as one
    project, as `check` does), the slice of the project index each was checked
    with, and the codes each file's own config enables (the child instruments it
    with the same)."""
    found, _ = project_findings(files, codes_for)
    flagged, projects, file_codes = [], {}, {}
    for file in found:
        if any(f.diagnostic.code in VERIFIABLE for f in file.findings):
            path = str(file.path.resolve())
            flagged.append(path)
            projects[path] = file.project
            file_codes[path] = sorted(codes_for(str(file.path)) & VERIFIABLE)
    return flagged, projects, file_codes


def _job(flagged: list[str], projects: dict, file_codes: dict[str, list[str]]) -> dict:
    union = sorted({code for codes in file_codes.values() for code in codes})
    return {"files": flagged, "codes": union, "file_codes": file_codes, "projects": projects}


def run_passes(make_argv, job_base: dict, options, cwd: str, mode: str, progress=None) -> tuple[dict, list[Result] | None, list[str]]:
    """Runs the three passes; returns per pass the child's payload, or results that
    say why it could not run."""
    payloads: dict[str, dict] = {}
    notes: list[str] = []
    offsets: dict[str, int] = {}
    with tempfile.TemporaryDirectory() as scratch:
        for number, (name, run_mode, variant) in enumerate(PASSES, start=1):
            if progress is not None:
                progress(f"verify --{mode}: pass {number}/{len(PASSES)} ({name})")
            out = os.path.join(scratch, f"{name}.json")
            job = {**job_base, "mode": run_mode, "variant": variant, "offsets": offsets if name == "fixed" else {}, "out": out, "scale": options.scale}
            job_file = os.path.join(scratch, f"{name}-job.json")
            Path(job_file).write_text(json.dumps(job))
            env = {**os.environ, "PRECISION_LINT_SANITIZER": job_file, "PYTHONWARNINGS": "ignore"}
            outcome = run_isolated(make_argv(job_file), json.dumps(job), options.timeout, options.memory(), env=env, cwd=cwd)
            if outcome.timed_out:
                return payloads, [Result("", p, 0, 0, mode=mode, verdict=ERROR, detail=f"the {name} pass ran past --timeout {options.timeout:g} s and was stopped") for p in job_base["files"]], notes
            if not os.path.exists(out):
                why = outcome.last_lines() or f"exit {outcome.returncode}"
                return payloads, [Result("", p, 0, 0, mode=mode, verdict=ERROR, detail=f"the {name} pass did not run: {why}") for p in job_base["files"]], notes
            payloads[name] = json.loads(Path(out).read_text())
            if name == "stress":
                offsets = {f"{s['path']}:{s['number']}": s["offset"] for s in payloads[name]["sites"] if s.get("offset") is not None}
    return payloads, None, notes


def results_from(payloads: dict, mode: str, inputs: str) -> list[Result]:
    by_pass = {name: {(s["path"], s["number"]): s for s in payload["sites"]} for name, payload in payloads.items()}
    errors = {name: payload.get("errors", []) for name, payload in payloads.items()}
    results = []
    for key, info in sorted(by_pass.get("observe", {}).items(), key=lambda item: (item[0][0], item[1]["line"])):
        result = Result(info["code"], info["path"], info["line"], info["column"], mode=mode, inputs=inputs)
        judge_real(result, info, {name: table.get(key) for name, table in by_pass.items()}, errors)
        results.append(result)
    return results


def verify_pytest(files: list[Path], pytest_args: list[str], codes_for: Callable[[str], frozenset[str]], options, progress=None) -> list[Result]:
    flagged, projects, file_codes = flagged_files(files, codes_for)
    if not flagged:
        return []
    job = _job(flagged, projects, file_codes)

    def argv(job_file: str) -> list[str]:
        return [sys.executable, "-m", "pytest", "-p", "precision_lint.verify.sanitizer", "-p", "no:cacheprovider", "-q", *pytest_args]

    payloads, failure, _ = run_passes(argv, job, options, os.getcwd(), "pytest", progress)
    if failure is not None:
        return failure
    results = results_from(payloads, "pytest", "real: the tests' own")
    stress_tests = payloads["stress"].get("tests", {})
    failed = sum(1 for outcome in stress_tests.values() if outcome == "failed")
    observed = payloads["observe"].get("tests", {})
    for result in results:
        result.notes.append(f"{len(observed)} tests ran as written ({sum(1 for o in observed.values() if o == 'failed')} failed)")
        if failed:
            result.notes.append(f"with the accumulators started near their limits {failed} of {len(stress_tests)} tests failed; the tests' own pass/fail is ignored in stress passes")
    return results


def verify_call(module_file: str, call: str, inputs: str, codes_for: Callable[[str], frozenset[str]], options, progress=None) -> list[Result]:
    _, projects, _ = flagged_files([Path(module_file)], codes_for)
    codes = {module_file: sorted(codes_for(module_file) & VERIFIABLE)}
    job = {**_job([module_file], projects, codes), "call": call, "inputs": inputs, "device": options.device}

    def argv(job_file: str) -> list[str]:
        return [sys.executable, "-m", "precision_lint.verify.call"]

    payloads, failure, _ = run_passes(argv, job, options, os.getcwd(), "call", progress)
    if failure is not None:
        return failure
    results = results_from(payloads, "call", f"real: {inputs}")
    for name, payload in payloads.items():
        if payload.get("call_error"):
            for result in results:
                result.notes.append(f"the {name} call raised {payload['call_error']}")
    return results
