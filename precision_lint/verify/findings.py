"""The findings verify works on: the project's, as `check` reports them.

The files are checked as one project (project/analysis.py), so a count that comes
from another module's function, or a dtype another module decides (`model.bfloat16()`
in train.py), is found as `check` finds it. Each finding is settled by the project's
evidence like `check` settles it, and verify keeps what it depended on: its
conditions and that evidence decide the dtype a replay runs it in (`run_dtype`) and
whether it runs under autocast (under_autocast.py).
Each module's model is built again with the slice of the project index it was
checked with, so the site is found on the same facts. No torch here.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

import libcst as cst

from ..conditions import CAST, DEFAULT, RUNTIME, resolve
from ..diagnostics import Diagnostic
from ..model.dtypes import RUNTIME_FLOAT, DType
from ..model.evidence import DEFAULT_HALF, HALF
from ..model.semantic import SemanticModel, build_model
from ..model.summaries import Evidence, ProjectFacts
from ..project.index import ModuleContext
from ..project.modules import identify
from ..source import read_source

NARROWEST = "bfloat16"  # the narrowest common training dtype: 256 is its exact limit
_NEEDS = "needs:"


@dataclass
class Finding:
    diagnostic: Diagnostic  # settled, as `check` reports it
    conditions: tuple[str, ...] = ()  # what it depended on before it was settled


@dataclass
class FileFindings:
    path: Path
    text: str
    findings: list[Finding]
    facts: ProjectFacts = field(default_factory=ProjectFacts)
    project: dict | None = None  # the slice of the project index the file was checked with

    def model(self, module: cst.Module | None = None) -> SemanticModel:
        identity = identify(self.path)
        module = module if module is not None else cst.parse_module(self.text)
        return build_model(module, identity.name, ModuleContext(self.project), identity.package)


def project_findings(
    files: list[Path], codes_for: Callable[[str], frozenset[str]], limits_for: Callable[[str], object] | None = None
) -> tuple[list[FileFindings], list[tuple[Path, str]]]:
    """Per file, its fixable findings (files without one are left out), and the files
    that could not be read or checked, with why. `codes_for` and `limits_for` answer
    per file (each file's own config, as `check` reads it)."""
    from ..failures import is_failure
    from ..project.analysis import check_unsettled
    from ..runner import Job, Workers, run_jobs

    jobs = [Job(str(path), codes_for(str(path)), **({"limits": limits_for(str(path))} if limits_for is not None else {})) for path in files]
    if not jobs:
        return [], []
    with Workers() as workers:  # one set of worker processes for every round
        reports, index = check_unsettled(jobs, lambda batch, **options: run_jobs(batch, workers=workers, **options))
    out, unreadable = [], []
    for path, report in zip(files, reports):
        # a file that does not parse is said too, not passed over as one with nothing to replay
        failures = [d for d in report.diagnostics if is_failure(d) or d.name == "syntax-error"]
        if failures:
            unreadable.append((path, failures[0].message))
        fixable = [d for d in report.diagnostics if d.fix is not None and not is_failure(d)]
        if not fixable:
            continue
        facts = index.facts_for(report.path)  # the evidence `check` settles this file with
        findings = []
        for diagnostic in fixable:
            settled = resolve([diagnostic], facts)
            if settled:  # the project's evidence can drop a finding (a float64 default)
                findings.append(Finding(settled[0], tuple(diagnostic.conditions)))
        if not findings:
            continue
        try:
            text = read_source(path).text
        except (OSError, UnicodeDecodeError, SyntaxError) as error:
            unreadable.append((path, str(error)))
            continue
        out.append(FileFindings(path, text, findings, facts, index.slice_for(report.dependencies)))
    return out, unreadable


def file_findings(path: Path, text: str, diagnostics: list[Diagnostic], project: dict | None = None) -> FileFindings:
    """One module's findings, already settled (a real run instruments one module at a time)."""
    return FileFindings(path, text, [Finding(d) for d in diagnostics], project=project)


def run_dtype(dtype: DType | None, conditions: tuple[str, ...], facts: ProjectFacts) -> tuple[str, str] | None:
    """The dtype a replay runs the site in when it is not the one written, and why:
    the model's floating dtype (decided at run time) is replayed as bfloat16, the
    narrowest common training dtype (or float16 when the project casts to that);
    a float32 buffer that the project casts to half precision, or a tensor made in a
    default dtype the project sets to half, is replayed in that half dtype. None:
    the dtype as written."""
    half = facts.first(HALF) or facts.first(DEFAULT_HALF)
    if dtype is RUNTIME_FLOAT or RUNTIME in conditions:
        if half is not None:
            chosen = _half_of(half)
            return chosen, f"the model's floating dtype, decided at run time: replayed as {chosen}, as the project runs it ({_shown(half)})"
        return NARROWEST, f"the model's floating dtype, decided at run time: replayed as {NARROWEST}, the narrowest common training dtype"
    if CAST in conditions and facts.first(HALF) is not None:
        chosen = _half_of(facts.first(HALF))
        return chosen, f"a float32 buffer the project casts to half precision ({_shown(facts.first(HALF))}): replayed as {chosen}"
    if DEFAULT in conditions and facts.first(DEFAULT_HALF) is not None:
        chosen = _half_of(facts.first(DEFAULT_HALF))
        return chosen, f"made in the default dtype, which the project sets to half precision ({_shown(facts.first(DEFAULT_HALF))}): replayed as {chosen}"
    for condition in conditions:
        if condition.startswith(_NEEDS) and condition[len(_NEEDS) :] in (HALF, DEFAULT_HALF):
            kind = condition[len(_NEEDS) :]
            seen = facts.first(kind)
            if seen is not None:
                chosen = _half_of(seen)
                what = "made in the default dtype, which the project sets to half precision" if kind == DEFAULT_HALF else "a float32 buffer the project casts to half precision"
                return chosen, f"{what} ({_shown(seen)}): replayed as {chosen}"
    return None


def _half_of(evidence: Evidence) -> str:
    text = evidence.text.lower()
    if "bfloat16" in text or "bf16" in text:
        return "bfloat16"
    if "float16" in text or "half" in text or "fp16" in text:
        return "float16"
    return NARROWEST


def _shown(evidence: Evidence) -> str:
    return f"`{evidence.text}` at {evidence.where}"
