"""Checks a set of files as one project, like a type checker's binder and checker:

1. every file is checked (or served from the cache), in the order of its imports: a
   module after the modules it imports, answered from the summaries of the files
   finished before it and the cache's summaries of those it imports (project/order.py,
   project/learned.py); each gives its diagnostics, its module summary, and what it
   asked and what each answer was worth;
2. the index is built from the summaries (plus those of project modules the run
   did not list but its files import, such as pre-commit's staged files' imports);
3. a module the prefilter skipped (read only for its imports) is modeled once a file
   asks about one of its functions or classes;
4. a file whose answers changed (a helper it calls now returns counts, its function
   is now passed counts) is checked again with the new answers, until none changes
   (at most MAX_ROUNDS);
5. under --fix, the first round writes its fixes and a file checked again is fixed
   again from there; the diagnostics are settled by the project's evidence last.
"""
from __future__ import annotations

import os
from dataclasses import replace
from itertools import chain
from pathlib import Path
from typing import Callable

from .. import speedups
from ..conditions import resolve
from ..runner import FileReport, Job, collector_paused, run_jobs
from ..source import read_source
from .exports import exports_summary
from .index import ProjectIndex
from .modules import identify, modules_to_read, namespace_spellings
from .order import import_order, imported_names, imported_through_reexports
from .staleness import StaleCheck

# Each round checks again only the files whose answers changed, and a chain of helpers
# across modules takes a round per link (Megatron-LM needs six): stopping short would
# leave a cold run's findings different from the next run's, which goes on from its cache.
MAX_ROUNDS = 10
# modules outside the run read for their summaries, at most (a pre-commit run
# hands over a few files; their imports are resolved, not the whole tree)
MAX_IMPORTED_MODULES = 64
_REEXPORT_DEPTH = 3
# runs of at most this many files read their imports' summaries with the first round
_EARLY_IMPORTS_UP_TO = 64
_CACHED_MODES = ("check", "summary", "callee")  # a fix's report depends on what it wrote
# The modes whose reports are checked again when an answer they got changes: what they
# learn in the first round (project/learned.py) is never the last word. A summary of a
# module outside the run is never checked again, and a fix is written at once.
_LEARNING_MODES = ("check", "callee")
# runs a batch of jobs; `known=`: summaries the first round's jobs are answered from
# before any is finished (runner.run_jobs)
Runner = Callable[..., list[FileReport]]


def run_project(jobs: list[Job], cache=None, runner: Runner = run_jobs) -> list[FileReport]:
    try:
        reports, index = _settle([replace(job, project=None) for job in jobs], cache, runner)
    finally:
        if cache is not None:
            cache.save()  # what was checked before an interruption stays cached
    return [_settled(report, index) for report in reports]


def _settled(report: FileReport, index: ProjectIndex) -> FileReport:
    """The report with its findings settled by the evidence that concerns its file
    (only findings with conditions ask; most files have none)."""
    if not any(diagnostic.conditions for diagnostic in report.diagnostics):
        return report
    return replace(report, diagnostics=resolve(report.diagnostics, index.facts_for(report.path)))


def check_unsettled(jobs: list[Job], runner: Runner = run_jobs) -> tuple[list[FileReport], ProjectIndex]:
    """Like run_project (no cache, no fixes), but the diagnostics are left unsettled
    and the index is returned: `verify` settles each finding itself, keeps what it
    depended on (its conditions, the project's evidence) and builds each module's
    model again with the same slice of the index."""
    return _settle([replace(job, project=None) for job in jobs], None, runner)


# no collection walks the reports and summaries, alive until the end, again and again
# (Megatron-LM: 0.2 s of this process's time, where cycles left 751 objects)
@collector_paused()
def _settle(jobs: list[Job], cache, runner) -> tuple[list[FileReport], ProjectIndex]:
    """Every file checked (or fixed), again where the answers it got changed, until
    they hold. A file fixed again starts from what the first round wrote. Modules the
    prefilter skipped are modeled once the project's code calls their functions; they
    take part in the rounds, but their reports are not the run's."""
    listed = len(jobs)
    jobs = list(jobs)
    early = _early_summary_jobs(jobs, cache) if speedups.enabled("ordered") else []
    reports = _first_round(jobs + early, cache, runner)
    read_early = {report.path: report for report in reports[listed:]}
    reports = reports[:listed]
    extra = _imported_summaries(jobs, reports, cache, runner, read_early)

    index: ProjectIndex | None = None
    staleness = StaleCheck()
    examined: set[str] = set()  # the questions _callees has looked up

    def index_now() -> ProjectIndex:  # a callee's full summary after the imports-only one
        built = ProjectIndex(_summaries(reports[:listed] + extra + reports[listed:]), previous=index)
        staleness.follow(built)
        return built

    index = index_now()
    for _ in range(MAX_ROUNDS - 1):
        # the callees first, and the callees they ask about in turn: cheap, since only
        # modules that were asked about are modeled
        while callees := _callees(reports + extra, index, {job.path for job in jobs[listed:]}, jobs[0] if jobs else None, examined):
            jobs += callees
            reports += _first_round(callees, cache, runner)
            index = index_now()
        stale = staleness.stale(reports, index)
        if not stale:
            break
        again = runner([_checked_again(jobs[i], reports[i], index) for i in stale])
        for i, report in zip(stale, again):
            if jobs[i].mode == "fix":  # the first round's fixes are written: keep them listed
                report = replace(report, fixed=reports[i].fixed + report.fixed)
            if report.summary is not None and report.summary == reports[i].summary:
                # the same summary, as the same object: the next index carries what
                # reads it (project/carry.py)
                report = replace(report, summary=reports[i].summary)
            reports[i] = report
            _remember(cache, jobs[i], report)
        index = index_now()
    return reports[:listed], index


def _checked_again(job: Job, report: FileReport, index: ProjectIndex) -> Job:
    """The job that checks a file again with the index's answers. A file the prefilter
    skips that the first round modeled for its summary (other files import it:
    Job.imported, which the first round's own copy of the job carried) is modeled
    again: read only for its imports, its summary would lose what it defines, and the
    questions about it, looked up once, would not make it a callee (_callees)."""
    modeled = report.summary is not None and report.summary.get("modeled", True)
    return replace(
        job, project=index.slice_for(report.dependencies), concrete=bool(report.diagnostics),
        imported=job.mode == "check" and modeled,
    )  # fmt: skip


def _callees(reports: list[FileReport], index: ProjectIndex, modeled: set[str], template: Job | None, examined: set[str]) -> list[Job]:
    """Jobs that model the modules read only for their imports whose functions or
    classes some file asked about (a helper module without torch that forwards a
    count): what they answer may change the asking file's findings. `examined`: the
    questions looked up before, which gains these; while the index resolves every
    name as the one before (its answers carried, project/carry.py), a question looked
    up before names no module left to model (it named none, or one modeled since)."""
    if template is None:
        return []
    if index.carried_fingerprints is None:  # names may resolve otherwise now
        examined.clear()
    wanted: dict[str, None] = {}
    for key in _asked(reports):
        if key in examined:
            continue
        examined.add(key)
        kind, _, name = key.partition(":")
        path = index.unmodeled_path(name) if kind in ("f", "c") else None
        if path is not None and path not in modeled:
            wanted[path] = None
    return [Job(path, template.codes, mode="callee", limits=template.limits) for path in wanted]


def _asked(reports: list[FileReport]) -> list[str]:
    """Every question the reports' files asked the index, each once, in the order
    first asked (Megatron-LM's files ask 38,000 questions, 24,000 of them different)."""
    return list(dict.fromkeys(chain.from_iterable(report.dependencies for report in reports)))


def _first_round(checks: list[Job], cache, runner) -> list[FileReport]:
    reports: list[FileReport | None] = [None] * len(checks)
    pending: list[int] = []
    for i, job in enumerate(checks):
        cached = cache.get_report(job) if cache is not None and job.mode in _CACHED_MODES else None
        if cached is not None:
            reports[i] = cached
        else:
            pending.append(i)
    hinted = {
        i: replace(checks[i], concrete=True) if cache is not None and _had_findings(cache, checks[i]) else checks[i]
        for i in pending
    }  # fmt: skip
    known: list[dict] = []  # what the packages re-export, before they are checked
    if speedups.enabled("ordered"):  # imports first, each answered from those before it
        if speedups.enabled("reexports"):
            known = _reexport_stubs([checks[i] for i in pending])
        paths = [checks[i].path for i in pending]
        known += _cached_imports(paths, [report for report in reports if report is not None], known)
        order, imports = import_order(paths, {stub["module"]: stub["exports"] for stub in known})
        imported = {j for k in order for j in imports[k]}
        hinted = {
            pending[k]: replace(
                hinted[pending[k]], learns=hinted[pending[k]].mode in _LEARNING_MODES,
                waits_for=frozenset(paths[j] for j in imports[k]), imported=k in imported,
            )
            for k in order
        }  # fmt: skip
        pending = [pending[k] for k in order]
    for i, report in zip(pending, runner([hinted[i] for i in pending], known=known) if pending else []):
        reports[i] = report
        _remember(cache, checks[i], report)
    return [report for report in reports if report is not None]


def _cached_imports(paths: list[str], cached: list[FileReport], stubs: list[dict]) -> list[dict]:
    """The cached summaries of the modules the files import: a file changed since the
    last run (pre-commit's staged file) is then answered at once by the unchanged
    modules it imports, instead of being checked again once the index has them. Only
    those imported: a whole tree's summaries would cost more to send than they save."""
    summaries = [report.summary for report in cached if report.summary is not None]
    if not summaries or not paths:
        return []
    reexports = {summary["module"]: summary["exports"] for summary in summaries + stubs}
    wanted = imported_through_reexports(paths, reexports)
    return [
        summary for summary in summaries
        if summary["module"] in wanted or not wanted.isdisjoint(namespace_spellings(summary["module"], summary["path"]))
    ]  # fmt: skip


def _reexport_stubs(checks: list[Job]) -> list[dict]:
    """What the packages' `__init__.py` files among `checks` import, read before the
    round: a module importing a name through its package (`from torchmetrics import
    Metric`) then comes after the module that defines it, and is answered at once,
    though the package imports every module in turn and is checked last (torchmetrics:
    19 files checked again for it). The package's own summary replaces its stub once
    it is checked."""
    stubs = []
    for job in checks:
        if job.mode not in _LEARNING_MODES or job.data is not None or os.path.basename(job.path) != "__init__.py":
            continue
        try:
            text = read_source(Path(job.path)).text
        except (OSError, ValueError, SyntaxError):  # unreadable or undecodable: the check reports it
            continue
        identity = identify(job.path)
        stub = exports_summary(text, identity.name, identity.package, job.path)
        if stub is not None and (stub["exports"] or stub["star_imports"]):
            stubs.append(stub)
    return stubs


def _had_findings(cache, job: Job) -> bool:
    """A changed file whose earlier version had findings (pre-commit's staged file, the
    one being edited) goes to libcst at once: see Job.concrete."""
    return job.mode == "check" and cache.had_findings(job)


def _remember(cache, job: Job, report: FileReport) -> None:
    if cache is not None and job.mode in _CACHED_MODES:
        cache.put_report(job, report)


def _summaries(reports: list[FileReport]) -> list[dict]:
    return [report.summary for report in reports if report.summary is not None]


def _imported_summaries(checks: list[Job], reports: list[FileReport], cache, runner, read_early: dict[str, FileReport]) -> list[FileReport]:
    """Summaries of project modules that the checked files import but the run did not
    list (pre-commit hands over only the staged files): found under the checked
    files' package roots, following re-exports a few modules deep. Those read with
    the first round (`read_early`) are not read again; the others read early are
    left out, so the index holds the same modules either way."""
    names = [key.partition(":")[2] for key in _asked(reports)]
    if not checks:
        return []
    extra: list[FileReport] = []
    known: set[str] = set()
    for _ in range(_REEXPORT_DEPTH):
        room = MAX_IMPORTED_MODULES - len(extra)
        jobs = _summary_jobs(checks, names, known, room)
        if not jobs:
            break
        late = _first_round([job for job in jobs if job.path not in read_early], cache, runner)
        found = [read_early[job.path] for job in jobs if job.path in read_early] + late
        extra.extend(found)
        # a re-export (`pkg/__init__.py`: `from .core import f`) names the next module
        names = [target for report in found if report.summary for target in report.summary["exports"].values()]
    return extra


def _summary_jobs(checks: list[Job], names: list[str], known: set[str] | None = None, room: int = MAX_IMPORTED_MODULES) -> list[Job]:
    """Summary jobs for the files of the project modules that hold `names`, under the
    checked files' package roots, leaving out the run's own modules and those in
    `known` (which gains every module found, read or not: there was no room)."""
    if not checks or room <= 0 or not names:  # a whole tree's run names none to read early
        return []
    identities = [identify(job.path) for job in checks]
    roots = list(dict.fromkeys(identity.root for identity in identities))
    known = known if known is not None else set()
    wanted = modules_to_read(names, roots, known | {identity.name for identity in identities})
    known |= set(wanted)
    codes, limits = checks[0].codes, checks[0].limits
    return [Job(os.path.relpath(path), codes, mode="summary", limits=limits) for path in list(wanted.values())[:room]]


def _early_summary_jobs(checks: list[Job], cache) -> list[Job]:
    """The summaries a short run reads with its first round: the modules its files
    import, and where the cached ones among them re-export names from (their targets'
    summaries are then in the cache too, and the files are answered from them at once:
    pre-commit's staged file changed since the last run)."""
    known: set[str] = set()
    names = _imports_of(checks)
    early = batch = _summary_jobs(checks, names, known)
    reexports: dict[str, dict[str, str]] = {}
    for _ in range(_REEXPORT_DEPTH - 1):
        if cache is None or not batch:
            break
        for report in (cache.get_report(job) for job in batch):
            if report is not None and report.summary is not None:
                reexports[report.summary["module"]] = report.summary["exports"]
        # `from pkg import count` through `pkg`'s `from pkg.core import count`: `pkg.core.count`
        names = [target for package, _, last in (name.rpartition(".") for name in names) if (target := reexports.get(package, {}).get(last))]
        batch = _summary_jobs(checks, names, known, MAX_IMPORTED_MODULES - len(early))
        early = early + batch
    return early


def _imports_of(checks: list[Job]) -> list[str]:
    """What the files of a short run (pre-commit's staged files) import, read off their
    text: the modules outside the run that _imported_summaries would read first are
    then read alongside them, so the files are answered from their summaries in the
    first round instead of being checked again. A whole tree imports its own modules."""
    if len(checks) > _EARLY_IMPORTS_UP_TO:
        return []
    return [name for job in checks if job.data is None for name in imported_names(job.path, identify(job.path).package)]
