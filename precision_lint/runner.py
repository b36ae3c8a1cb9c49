"""Runs the check (or the fixer) over many files, in parallel processes."""
from __future__ import annotations

import difflib
import os
import traceback
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

from .diagnostics import Diagnostic
from .engine import check_module
from .fixer import fix_source
from .source import read_source, write_atomically

# Below this many files a process pool costs more than it saves.
PARALLEL_THRESHOLD = 16


@dataclass(frozen=True)
class Job:
    path: str
    codes: frozenset[str]
    # "check", "fix" (write), "diff" (show, do not write), or "summary" (only the
    # module's summary, for a module the run imports but did not list)
    mode: str = "check"
    unsafe: bool = False
    unfixable: frozenset[str] = frozenset()
    # `check --fix --verify`: the findings whose fix may be written (None: all)
    allowed: frozenset[tuple[str, int, int]] | None = None
    # the slice of the project index the file may ask (project/index.py)
    project: dict | None = None


@dataclass
class FileReport:
    path: str
    diagnostics: list[Diagnostic] = field(default_factory=list)
    fixed: list[Diagnostic] = field(default_factory=list)
    diff: str = ""
    error: str | None = None
    # for the project index: the module's summary and what it asked of the index
    summary: dict | None = None
    dependencies: dict[str, str] = field(default_factory=dict)


def run_job(job: Job) -> FileReport:
    """Check or fix one file. A crash in one file is reported for that file; the
    others are still checked (and the run exits 2)."""
    try:
        return _run_job(job)
    except Exception:
        return FileReport(job.path, error=f"internal error, please report it:\n{traceback.format_exc()}")


def _run_job(job: Job) -> FileReport:
    path = Path(job.path)
    try:
        source = read_source(path)
    except (OSError, UnicodeDecodeError, SyntaxError) as error:
        return FileReport(job.path, error=f"cannot read: {error}")
    if job.mode in ("check", "summary"):
        result = check_module(source.text, job.path, job.codes, project=job.project, summary_only=job.mode == "summary")
        return FileReport(job.path, result.diagnostics, summary=result.summary, dependencies=result.dependencies)
    outcome = fix_source(source.text, job.path, job.codes, job.unsafe, job.unfixable, job.allowed, project=job.project)
    report = FileReport(job.path, outcome.remaining, outcome.fixed, error=outcome.error)
    if outcome.source != source.text:
        if job.mode == "diff":
            report.diff = unified_diff(source.text, outcome.source, job.path)
        else:
            try:
                write_atomically(path, outcome.source, source.encoding)
            except OSError as error:
                return FileReport(job.path, outcome.remaining, error=f"cannot write the fixed file: {error}")
    return report


def unified_diff(before: str, after: str, path: str) -> str:
    return "".join(
        difflib.unified_diff(
            before.splitlines(keepends=True), after.splitlines(keepends=True), fromfile=path, tofile=path
        )
    )


def run_jobs(jobs: list[Job]) -> list[FileReport]:
    workers = min(os.cpu_count() or 1, len(jobs))
    if len(jobs) < PARALLEL_THRESHOLD or workers < 2:
        return [run_job(job) for job in jobs]
    # Largest files first, in small chunks, so no worker is left with a long tail.
    order = sorted(range(len(jobs)), key=lambda i: -_size(jobs[i].path))
    reports: list[FileReport | None] = [None] * len(jobs)
    with ProcessPoolExecutor(max_workers=workers) as pool:
        for index, report in zip(order, pool.map(run_job, [jobs[i] for i in order], chunksize=4)):
            reports[index] = report
    return [report for report in reports if report is not None]


def _size(path: str) -> int:
    try:
        return os.stat(path).st_size
    except OSError:
        return 0
