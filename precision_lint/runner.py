"""Runs the check (or the fixer) over many files, each in a worker process.

A file costs at most itself: a Python exception becomes an internal-error diagnostic
for that file (engine.py), and a worker that dies (libcst's native parser can segfault
or abort on pathological input) is reported by the file it held and replaced by a fresh
one, while the other files go on. Workers never write: under --fix they hand the fixed
text back and this process writes it, so a fix is never written without being reported.
"""
from __future__ import annotations

import gc
import os
import select
import signal
import sys
from collections import deque
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Callable, Sequence

from . import speedups
from .deep_stack import RECURSION_LIMIT, call_with_deep_stack
from .diagnostics import Diagnostic, Location
from .failures import CHECKER_CRASH, IO_ERROR, REPORT_HINT, failure, internal_error, is_failure
from .limits import InputLimits, check_limits
from .source import (
    BadCodingCookie, EncodingNotKept, SourceChanged, SourceFile, UndecodableSource, decode, encode_like,
    signals_deferred, split_lines_keeping_ends, write_in_place,
)  # fmt: skip

if TYPE_CHECKING:
    from multiprocessing.connection import Connection

# Below this many files, and this much source, one worker does the work: more cost
# more than they save. A few large files (pre-commit's staged files) are worth two.
PARALLEL_THRESHOLD = 16
PARALLEL_BYTES = 64 * 1024
# A worker's address space: libcst needs about 600 bytes per byte of source, so the
# limit follows max-file-size, with room for the interpreter and the deep stack.
MIN_WORKER_MEMORY = 4 * 1024**3
MEMORY_PER_SOURCE_BYTE = 1200


@dataclass(frozen=True)
class Job:
    path: str
    codes: frozenset[str]
    # "check", "fix" (write), "diff" (show, do not write), "summary" (only the
    # module's summary, for a module the run imports but did not list) or "callee"
    # (the summary of a module the prefilter skipped whose functions are called)
    mode: str = "check"
    unsafe: bool = False
    unfixable: frozenset[str] = frozenset()
    # `check --fix --verify`: the findings whose fix may be written (None: all)
    allowed: frozenset[tuple[str, int, int]] | None = None
    limits: InputLimits = InputLimits()
    # stdin: its bytes (`path` is the name it stands for); None reads the file
    data: bytes | None = None
    # the slice of the project index the file may ask (project/index.py)
    project: dict | None = None
    # a file expected to have findings (it had some in the last round, or in its last
    # cached version): parsed with libcst straight away, since the quick tree's first
    # pass would only find them again (engine.py)
    concrete: bool = False
    # the first round, in import order: what the project slice does not answer is
    # answered from the summaries of the jobs finished before it (project/learned.py)
    learns: bool = False
    # the run's files it imports: a worker takes a job whose imports are all finished
    # before one further up the order whose imports are still being checked
    waits_for: frozenset[str] = frozenset()
    # other files of the run import it: where the prefilter would only read its
    # imports, it is modeled for its summary too (no rule runs), as a callee would be
    # after the round, so the files that import it are answered in this round
    imported: bool = False


@dataclass(frozen=True)
class PendingWrite:
    """Fixed bytes to write over a file whose contents had `digest` when read."""

    data: bytes
    digest: str
    # what stands when the write does not happen: the findings of the file as it is
    unwritten: list[Diagnostic]


@dataclass
class FileReport:
    path: str
    diagnostics: list[Diagnostic] = field(default_factory=list)
    fixed: list[Diagnostic] = field(default_factory=list)
    diff: str = ""
    write: PendingWrite | None = None
    # the fixed text (stdin --fix prints it); None when nothing changed
    fixed_text: str | None = None
    encoding: str = "utf-8"
    # the hash of the contents that were checked (what the cache may key them on)
    digest: str | None = None
    # for the project index: the module's summary and what it asked of the index.
    # A check's diagnostics are not yet settled by the project's evidence
    # (conditions.py); project/analysis.py settles them once every module is in.
    summary: dict | None = None
    dependencies: dict[str, str] = field(default_factory=dict)

    @property
    def failed(self) -> bool:
        """The file was not fully read, parsed, checked or written."""
        return any(is_failure(d) for d in self.diagnostics)


class Interrupted(Exception):
    """SIGINT during the run; `reports` are the files finished (and written) so far."""

    def __init__(self, reports: list[FileReport]) -> None:
        super().__init__("interrupted")
        self.reports = reports


def run_job(job: Job) -> FileReport:
    """Check or fix one file. Anything that escapes the engine's own guards is still
    only this file's internal error."""
    try:
        with collector_paused():
            return _run_job(job)
    except Exception as error:  # MemoryError and RecursionError included
        return FileReport(job.path, [internal_error(job.path, "the checker", error)])


@contextmanager
def collector_paused():
    """No cyclic garbage collection while one file is parsed and modeled: the tree is
    alive until the file is done, and each collection walks all of it again (a third
    of the time at 100k lines, quadratic in the file's size). The tree is freed by
    reference counting; what cycles are left are collected once, after the file.
    The run's own process pauses it for the whole analysis too (project/analysis.py):
    its reports and summaries live until the end."""
    if not speedups.enabled("gc"):
        yield
        return
    pausing = gc.isenabled()  # (a file checked in the run's process: paused already)
    gc.disable()
    try:
        yield
    finally:
        if pausing:
            gc.enable()
        gc.collect(0)  # everything made since the pause is still in the youngest generation


# The engine and the fixer are imported when a file is checked, not with this module: a
# run served from the cache checks none, and importing them imports libcst and the model.
def check_module(*args, **kwargs):
    from .engine import check_module as check

    return check(*args, **kwargs)


def needs_parse(*args, **kwargs) -> bool:
    from .engine import needs_parse as needs

    return needs(*args, **kwargs)


def fix_source(*args, **kwargs):
    from .fixer import fix_source as fix

    return fix(*args, **kwargs)


def forget_positions() -> None:
    from .positions import forget_positions as forget

    forget()


def _run_job(job: Job) -> FileReport:
    loaded = _load(job)
    if isinstance(loaded, Diagnostic):
        return FileReport(job.path, [loaded])
    source, size = loaded
    summary_only, called = job.mode in ("summary", "callee"), job.mode == "callee"
    # nothing to report, as the prefilter says (not a syntax error either); the summary in full
    eager = job.mode == "check" and job.imported and not needs_parse(source.text, job.codes)
    if eager:
        summary_only = called = True
    if needs_parse(source.text, job.codes, summary_only, called):
        over = check_limits(source.text, size, job.path, job.limits)
        if over is not None and not eager:
            return FileReport(job.path, [over])
        if over is not None:  # too large to model: read for its imports, as the prefilter would
            summary_only = called = False
    if job.mode in ("check", "summary", "callee"):
        result = check_module(
            source.text, job.path, job.codes, project=job.project, summary_only=summary_only, called=called,
            try_quick=not job.concrete, kept=_kept_trees if job.mode in _CHECKED_AGAIN else None,
        )  # fmt: skip
        forget_positions()
        return FileReport(
            job.path, [] if eager else result.diagnostics, digest=source.digest, summary=result.summary, dependencies=result.dependencies
        )  # fmt: skip
    outcome = fix_source(source.text, job.path, job.codes, job.unsafe, job.unfixable, job.allowed, job.project)
    report = FileReport(
        job.path, outcome.remaining, outcome.fixed, encoding=source.encoding,
        summary=outcome.summary, dependencies=outcome.dependencies,
    )  # fmt: skip
    if outcome.source == source.text:
        return report
    report.fixed_text = outcome.source
    failures = [d for d in outcome.remaining if is_failure(d)]
    if job.mode == "diff":
        report.diff = unified_diff(source.text, outcome.source, job.path)
        return report
    try:
        data = encode_like(source, outcome.source)
    except EncodingNotKept as error:
        problem = failure(IO_ERROR, job.path, f"The fixes were not written: {error}")
        return FileReport(job.path, [*outcome.initial, *failures, problem])
    if job.data is None:
        report.write = PendingWrite(data, source.digest, [*outcome.initial, *failures])
    return report


# A worker's trees of the files it checked (kept_trees.py), for the modes whose files
# a later round may check again; None outside a worker
_kept_trees = None
_CHECKED_AGAIN = ("check", "callee")


def _load(job: Job) -> tuple[SourceFile, int] | Diagnostic:
    try:
        raw = Path(job.path).read_bytes() if job.data is None else job.data
    except OSError as error:
        return failure(IO_ERROR, job.path, f"Cannot read the file: {error.strerror or error}")
    try:
        text, encoding = decode(raw)
    except UndecodableSource as error:
        return failure(IO_ERROR, job.path, f"Cannot decode the file: {error}", Location(error.row, error.column))
    except BadCodingCookie as error:
        return failure(IO_ERROR, job.path, f"Cannot decode the file: {error.msg}", Location(error.lineno or 1, 1))
    return SourceFile(Path(job.path), text, encoding, raw), len(raw)


def commit(report: FileReport) -> FileReport:
    """Write a fixed file (in this process, so the report always says what was
    written). A file that changed since it was read, or that cannot be written, keeps
    its findings in the report, with the reason."""
    pending = report.write
    if pending is None:
        return report
    report.write = None
    try:
        write_in_place(Path(report.path), pending.data, pending.digest)
    except SourceChanged:
        problem = failure(IO_ERROR, report.path, "The file changed since it was read: the fixes were not written; run again")
    except OSError as error:
        problem = failure(IO_ERROR, report.path, f"Cannot write the fixed file: {error.strerror or error}")
    else:
        return report
    return FileReport(report.path, [*pending.unwritten, problem], encoding=report.encoding)


def unified_diff(before: str, after: str, path: str) -> str:
    import difflib

    return "".join(
        difflib.unified_diff(split_lines_keeping_ends(before), split_lines_keeping_ends(after), fromfile=path, tofile=path)
    )


# -- workers ------------------------------------------------------------------------
def run_jobs(
    jobs: list[Job],
    on_report: Callable[[FileReport], None] | None = None,
    workers: "Workers | None" = None,
    known: Sequence[dict] = (),
) -> list[FileReport]:
    """One report per job, in the order of `jobs`; fixed files are written as their
    reports arrive (`on_report` hears of each: the progress line). Raises
    Interrupted (with what is done) on SIGINT. `workers`: processes kept from one
    call to the next (a project's rounds); without it, this call starts its own.
    `known`: summaries a job that learns is answered from before the jobs' own
    (a package's re-exports, project/analysis.py)."""
    if not jobs:
        return []
    few = len(jobs) < PARALLEL_THRESHOLD and sum(_size(job) for job in jobs) < PARALLEL_BYTES
    count = 1 if few else max(1, min(os.cpu_count() or 1, len(jobs)))
    memory = worker_memory(max(job.limits.max_file_size for job in jobs))
    kept = workers is not None and speedups.enabled("workers")
    pool = workers.pool(memory) if kept else _Pool(memory)
    reports: list[FileReport | None] = [None] * len(jobs)

    def finish(number: int, report: FileReport) -> None:
        if report.write is None:  # nothing to write (every check)
            reports[number] = report
        else:
            with signals_deferred():  # a written file is always recorded as written
                reports[number] = commit(report)
        if on_report is not None:
            on_report(reports[number])

    if any(job.learns for job in jobs):  # in the caller's order: imports first
        order = deque(range(len(jobs)))
    else:  # largest files first, so no worker is left with a long tail
        order = deque(sorted(range(len(jobs)), key=lambda i: -_size(jobs[i])))
    try:
        pool.run(jobs, order, finish, count, known)
    except KeyboardInterrupt:
        pool.stop(now=True)
        raise Interrupted([r for r in reports if r is not None]) from None
    except _NoWorkers:
        # No worker process can be started here (a sandbox without fork): check in
        # this process, on a deep stack; a crash is then no longer contained.
        pool.stop(now=True)
        learned = _new_learned()
        learned.add(known)
        try:
            for number in range(len(jobs)):
                if reports[number] is None:
                    finish(number, call_with_deep_stack(run_job, _learning(jobs[number], learned)))
                learned.add(_summaries_of([reports[number]]))
        except KeyboardInterrupt:
            raise Interrupted([r for r in reports if r is not None]) from None
    if not kept:
        pool.stop()
    return [report for report in reports if report is not None]


def worker_memory(max_file_size: int) -> int:
    """The memory limit of a worker that may be handed files of up to `max_file_size` bytes."""
    return max(MIN_WORKER_MEMORY, MEMORY_PER_SOURCE_BYTE * max_file_size)


class Workers:
    """Worker processes kept for every round of one run (Megatron-LM's has nine), so
    no round forks its own and copies again what its workers touch of this process's
    memory. A context manager: its workers stop when the run ends."""

    def __init__(self) -> None:
        self._pool: _Pool | None = None

    def pool(self, memory: int) -> "_Pool":
        """The pool for a round: the one kept, unless its workers' memory limit is
        lower than the round needs."""
        if self._pool is not None and self._pool.memory < memory:
            self._pool.stop()
            self._pool = None
        if self._pool is None:
            self._pool = _Pool(memory)
        return self._pool

    def start(self, memory: int) -> None:
        """Start a worker per core now: each imports the checker while this process
        finds the files and reads their imports (a run that will check every file
        anew). Where none can start, the first round finds out and checks here."""
        try:
            self.pool(memory).start(os.cpu_count() or 1)
        except _NoWorkers:
            pass

    def __enter__(self) -> "Workers":
        return self

    def __exit__(self, *exc_info) -> None:
        if self._pool is not None:
            self._pool.stop(now=exc_info[0] is not None)
            self._pool = None


class _NoWorkers(Exception):
    pass


def _wait(objects):
    """The connections and process sentinels that are ready, waiting for one."""
    if not hasattr(select, "poll"):  # Windows
        from multiprocessing.connection import wait

        return wait(objects)
    # polled here: multiprocessing's wait builds a selector for every call, and the
    # parent waits once per file, while the worker that finished waits for its next job
    poller = select.poll()
    by_fd = {}
    for item in objects:
        fd = item if isinstance(item, int) else item.fileno()
        by_fd[fd] = item
        poller.register(fd, select.POLLIN)
    return [by_fd[fd] for fd, _ in poller.poll()]  # a closed pipe or dead worker: POLLHUP


def _preload_checker() -> None:
    """Import the engine (libcst, the model, the rules) and the fixer: a worker does
    so as it starts, before its first job, while the run's own process (which never
    needs them) finds the files and reads their imports (a quarter of a second)."""
    from . import engine, fixer  # noqa: F401
    from .registry import all_rules

    all_rules()


class _Pool:
    """Worker processes that each check one job at a time, with at most one more sent
    behind it (_queue_next). A worker that dies is known by the job it was checking;
    the one behind it goes back to the order, the worker is replaced and the run goes
    on."""

    def __init__(self, memory: int) -> None:
        self.memory = memory
        import multiprocessing  # a run served from the cache starts no worker

        method = "fork" if sys.platform.startswith("linux") else "spawn"
        self.context = multiprocessing.get_context(method)
        self.workers: list[_Worker] = []
        self.early_deaths = 0

    def run(
        self, jobs: list[Job], order: deque[int], finish: Callable[[int, FileReport], None], size: int, known: Sequence[dict] = ()
    ) -> None:
        self.early_deaths = 0
        paths = {jobs[number].path for number in order}
        # a round that learns goes in import order; the others go to the workers that
        # checked their files, which kept the trees (kept_trees.py)
        by_trees = not any(jobs[number].learns for number in order) and any(w.held for w in self.workers)
        # a round of a few files takes one worker, unless workers that are running hold them
        holding = sum(1 for w in self.workers if not paths.isdisjoint(w.held)) if by_trees else 0
        wanted = min(max(size, holding), len(order))
        kept = sorted(self.workers, key=lambda w: -len(paths & w.held)) if by_trees else self.workers
        idle = kept[:wanted] + [self._start() for _ in range(wanted - len(self.workers))]
        for worker in idle:
            worker.told = 0  # a new round: what it learned in the last one is forgotten
        busy: list[_Worker] = []
        learned: list[dict] = list(known)  # and the summaries of the jobs finished so far (Job.learns)
        unfinished = {jobs[number].path for number in order}
        while order or busy:
            while idle and order:
                worker = idle.pop()
                number = _next_held(order, jobs, worker, self.workers) if by_trees else _next_ready(order, jobs, unfinished)
                if worker.give(number, jobs, learned):
                    busy.append(worker)
                else:  # it died before taking the job: the job is not to blame
                    order.appendleft(number)
                    self._retire(worker)
                    self.early_deaths += 1
                    if self.early_deaths > 3:
                        raise _NoWorkers("worker processes die before they take a job")
                    idle.append(self._start())
            for worker in busy:
                self._queue_next(worker, order, jobs, learned, unfinished, by_trees, len(busy))
            ready = set(_wait([w.connection for w in busy] + [w.process.sentinel for w in busy]))
            for worker in [w for w in busy if w.connection in ready or w.process.sentinel in ready]:
                number, report = worker.jobs.popleft(), worker.collect(readable=worker.connection in ready)
                if report is None:  # it died with the job; the one sent behind it goes back
                    busy.remove(worker)
                    finish(number, _crash_report(jobs[number], worker.process.exitcode, worker.last_words()))
                    order.extendleft(reversed(worker.jobs))
                    self._retire(worker)
                    if order:
                        idle.append(self._start())
                else:
                    finish(number, report)
                    learned.extend(_summaries_of([report]))
                    if not worker.jobs:
                        busy.remove(worker)
                        idle.append(worker)
                unfinished.discard(jobs[number].path)

    def _queue_next(
        self, worker: "_Worker", order: deque[int], jobs: list[Job], learned: list[dict], unfinished: set[str],
        by_trees: bool, busy: int,
    ) -> None:
        """Send a busy worker its next job now, while many are left: it starts it as
        soon as it sends its report, instead of waiting for this process to read the
        report and answer. Only a job whose imports are all finished (it misses no
        summary it waits for), and only a message the pipe holds unread: the worker
        reads it after sending its report."""
        if not speedups.enabled("queued") or len(worker.jobs) != 1 or len(order) < QUEUE_WHILE_LEFT * busy:
            return
        if worker.room_unread() == 0:  # nothing fits: no job is taken and pickled for nothing
            return
        number = _next_held(order, jobs, worker, self.workers) if by_trees else _next_ready(order, jobs, unfinished, strictly=True)
        if number is None:
            return
        if not worker.give(number, jobs, learned, most=worker.room_unread()):
            order.appendleft(number)

    def start(self, count: int) -> None:
        while len(self.workers) < count:
            self._start()

    def _start(self) -> _Worker:
        import tempfile

        try:
            handle, log = tempfile.mkstemp(prefix="precision-lint-worker-", suffix=".log")
            os.close(handle)
            parent, child = self.context.Pipe()
            process = self.context.Process(target=_worker_main, args=(child, self.memory, log), daemon=True)
            process.start()
        except OSError as error:
            raise _NoWorkers(str(error)) from error
        child.close()
        worker = _Worker(process, parent, log)
        self.workers.append(worker)
        return worker

    def _retire(self, worker: _Worker) -> None:
        worker.close(now=True)
        self.workers.remove(worker)

    def stop(self, now: bool = False) -> None:
        for worker in self.workers:
            worker.close(now)
        self.workers = []


class _Worker:
    def __init__(self, process, connection: Connection, log: str) -> None:
        self.process, self.connection, self.log = process, connection, log
        self.jobs: deque[int] = deque()  # the job it checks, and the one sent behind it
        self.told = 0  # how many of the round's summaries it was sent
        self.held: set[str] = set()  # the files whose trees it may have kept
        self._room: int | None = None

    def room_unread(self) -> int:
        """The longest message that may be sent behind a job: one the pipe holds unread,
        so sending it never waits on a worker that is itself waiting to send its
        report. A Unix socket holds its send buffer (212,992 bytes on Linux) less the
        kernel's overhead; 0 (nothing is sent behind) where that cannot be read."""
        if self._room is None:
            import socket

            try:
                with socket.socket(fileno=os.dup(self.connection.fileno())) as sock:
                    buffer = sock.getsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF)
            except (OSError, ValueError, AttributeError):  # Windows' pipes are not sockets
                buffer = 0
            self._room = max(0, min(QUEUED_MESSAGE_BYTES, buffer - KERNEL_OVERHEAD_BYTES))
        return self._room

    def give(self, number: int, jobs: list[Job], learned: list[dict], most: int | None = None) -> bool:
        """Send a job, with the summaries finished since its last job when it learns
        (since the round started, for its first job of a round). `most`: send nothing
        (False) when the message would be longer."""
        from multiprocessing.reduction import ForkingPickler  # as Connection.send pickles

        news = learned[self.told :] if jobs[number].learns else []
        # told nothing yet this round: the worker forgets what it learned before
        message = ForkingPickler.dumps((jobs[number], news, self.told == 0))
        if most is not None and len(message) > most:
            return False
        try:
            self.connection.send_bytes(message)
        except (OSError, ValueError):
            return False
        self.jobs.append(number)
        self.told += len(news)
        if jobs[number].mode in _CHECKED_AGAIN:
            self.held.add(jobs[number].path)
        return True

    def collect(self, readable: bool = False) -> FileReport | None:
        """The report, or None when the worker died before sending it. `readable`: the
        connection is known to hold its report or its end (no second poll)."""
        try:
            if readable or self.connection.poll():
                return self.connection.recv()
        except (EOFError, OSError):
            pass
        self.process.join(timeout=5)
        return None

    def close(self, now: bool = False) -> None:
        if not now:
            try:
                self.connection.send(None)
            except (OSError, ValueError):
                pass
            self.process.join(timeout=1)
        self.connection.close()
        if self.process.is_alive():
            self.process.kill()
        self.process.join()
        try:
            os.unlink(self.log)
        except OSError:
            pass

    def last_words(self) -> str:
        """The end of what the worker wrote to stderr (a native crash's message)."""
        try:
            with open(self.log, "rb") as stream:
                lines = stream.read()[-4000:].decode("utf-8", "replace").strip().splitlines()
        except OSError:
            return ""
        return lines[0].strip() if lines else ""


def _worker_main(connection: Connection, memory: int, log: str) -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the parent stops the run, and us
    # A native crash writes to stderr; it goes to the log, and into the file's report.
    with open(log, "ab") as stream:
        os.dup2(stream.fileno(), 2)
    _limit_memory(memory)
    sys.setrecursionlimit(RECURSION_LIMIT)
    gc.enable()  # forked while the run's process had paused it (collector_paused)
    _preload_checker()
    if speedups.enabled("gc"):
        gc.freeze()  # what the worker imported is never garbage: no collection walks it
    # every job on one deep-stack thread: a thread started for each job (its stack
    # mapped anew, the main thread waiting on it) took about 10 context switches a job and
    # 0.3 s of torchmetrics' 2.25 s cold run
    call_with_deep_stack(_serve, connection)


def _serve(connection: Connection) -> None:
    global _kept_trees
    if speedups.enabled("trees"):
        from .kept_trees import KeptTrees

        _kept_trees = KeptTrees()
    learned = _new_learned()
    while True:
        try:
            message = connection.recv()
        except (EOFError, OSError):
            return
        if message is None:
            return
        job, news, afresh = message
        if afresh:  # nothing told yet this round (a kept worker serves every round: Workers)
            learned = _new_learned()
        learned.add(news)
        report = run_job(_learning(job, learned))
        if _kept_trees is not None:
            # the trees kept so far are alive for the run: no collection walks them
            # again (Megatron-LM: 3 s of collections without this, more than keeping
            # them saves); they hold no cycles, so reference counting frees them
            gc.freeze()
        connection.send(report)


# how far down the order a worker looks for a job whose imports are all finished
READY_LOOKAHEAD = 64
# a busy worker is sent its next job while this many are left per busy worker (fewer:
# one sent behind a long job would wait while another worker has nothing to do)
QUEUE_WHILE_LEFT = 4
# the longest message sent behind a job (16 KB gained nothing on Megatron-LM: most
# messages carry the summaries finished since the worker's last job), and what a
# socket's send buffer is taken to lose to the kernel's own accounting
QUEUED_MESSAGE_BYTES = 128 * 1024
KERNEL_OVERHEAD_BYTES = 64 * 1024


def _next_ready(order: deque[int], jobs: list[Job], unfinished: set[str], strictly: bool = False) -> int | None:
    """The next job in the order that waits for no file still being checked (in
    import order, the file right after a module is often one that imports it); the
    next in the order when none of the nearest is ready, or None if `strictly`."""
    for position in range(min(READY_LOOKAHEAD, len(order))):
        number = order[position]
        if jobs[number].waits_for.isdisjoint(unfinished):
            del order[position]
            return number
    return None if strictly else order.popleft()


def _next_held(order: deque[int], jobs: list[Job], worker: "_Worker", workers: list["_Worker"]) -> int:
    """The next job in the order whose file `worker` checked before; else the next
    that no other worker checked; else the last. Each worker takes its own files,
    largest first, then helps with the others' smallest, which it parses anew."""
    others = [w.held for w in workers if w is not worker]
    free = None
    for position in range(min(READY_LOOKAHEAD * 4, len(order))):
        path = jobs[order[position]].path
        if path in worker.held:
            number = order[position]
            del order[position]
            return number
        if free is None and not any(path in held for held in others):
            free = position
    if free is None:
        return order.pop()
    number = order[free]
    del order[free]
    return number


def _new_learned():
    from .project.learned import LearnedSummaries  # with the checker, not at start-up

    return LearnedSummaries()


def _learning(job: Job, learned) -> Job:
    """The job with the run's summaries so far to answer from, when it learns."""
    if not job.learns:
        return job
    return replace(job, project={**(job.project or {}), "learned": learned})


def _summaries_of(reports: list[FileReport]) -> list[dict]:
    return [report.summary for report in reports if report.summary is not None]


def _limit_memory(limit: int) -> None:
    """Runaway allocation ends this worker (reported by its file), not the machine."""
    try:
        import resource

        soft, hard = resource.getrlimit(resource.RLIMIT_AS)
        if hard == resource.RLIM_INFINITY or hard > limit:
            resource.setrlimit(resource.RLIMIT_AS, (limit, hard))
    except (ImportError, ValueError, OSError):
        pass


def _crash_report(job: Job, exitcode: int | None, last_words: str = "") -> FileReport:
    if exitcode is not None and exitcode < 0:
        try:
            how = f"was killed by {signal.Signals(-exitcode).name}"
        except ValueError:
            how = f"was killed by signal {-exitcode}"
    else:
        how = f"exited with status {exitcode}"
    if exitcode in (-signal.SIGABRT, -signal.SIGKILL):
        how += " (it may have run out of memory)"
    message = f"The checker process {how} while checking this file: it was not checked"
    said = f"It said: {last_words[:200]!r}. " if last_words else ""
    note = f"{said}libcst's parser can crash on deeply nested input. {REPORT_HINT}"
    return FileReport(job.path, [failure(CHECKER_CRASH, job.path, message, note=note)])


def _size(job: Job) -> int:
    if job.data is not None:
        return len(job.data)
    try:
        return os.stat(job.path).st_size
    except OSError:
        return 0
