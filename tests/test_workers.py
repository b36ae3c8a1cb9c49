"""Worker processes kept for every round of a run (runner.Workers): the same
processes serve each round, and what a worker learned in one round (the summaries of
the jobs before, project/learned.py) does not answer the next."""
from precision_lint.project.index import NOTHING
from precision_lint.registry import all_rules
from precision_lint.runner import Job, Workers, run_jobs

CODES = frozenset(rule.code for rule in all_rules())
HELPER = "import torch\n\ndef count(mask):\n    return (mask != 0).sum()\n"
USER = (
    "import torch\nfrom helper import count\n\ndef run(masks):\n    total = torch.zeros(1)\n"
    "    for mask in masks:\n        total += count(mask)\n    return total\n"
)


def _files(tmp_path, monkeypatch) -> tuple[str, str]:
    (tmp_path / "helper.py").write_text(HELPER)
    (tmp_path / "user.py").write_text(USER)
    monkeypatch.chdir(tmp_path)
    return "helper.py", "user.py"


def _pids(workers: Workers) -> list[int]:
    return [worker.process.pid for worker in workers._pool.workers]


def test_every_round_is_served_by_the_same_processes(tmp_path, monkeypatch):
    helper, user = _files(tmp_path, monkeypatch)
    many = [Job(helper, CODES)] * 20  # enough files for two workers
    with Workers() as workers:
        first = run_jobs(many, workers=workers)
        pids = _pids(workers)
        assert len(pids) == 2 and all(worker.process.is_alive() for worker in workers._pool.workers)
        again = run_jobs([Job(user, CODES)], workers=workers)  # one file: one of them
        assert _pids(workers) == pids
        kept = workers._pool.workers
    assert not any(worker.process.is_alive() for worker in kept)  # stopped with the run
    assert [r.diagnostics for r in first] == [run_jobs([Job(helper, CODES)])[0].diagnostics] * 20
    assert again[0].path == user


def test_what_a_worker_learned_in_one_round_does_not_answer_the_next(tmp_path, monkeypatch):
    helper, user = _files(tmp_path, monkeypatch)
    with Workers() as workers:
        one_round = run_jobs([Job(helper, CODES, learns=True), Job(user, CODES, learns=True)], workers=workers)
        assert one_round[1].dependencies["f:helper.count"] != NOTHING  # learned in its round
        # the next round: the worker that learned helper.py's summary starts afresh
        next_round = run_jobs([Job(user, CODES, learns=True)], workers=workers)
    assert next_round[0].dependencies["f:helper.count"] == NOTHING and not next_round[0].diagnostics


def test_a_worker_that_died_between_rounds_is_replaced(tmp_path, monkeypatch):
    helper, user = _files(tmp_path, monkeypatch)
    (tmp_path / "alone.py").write_text(USER.replace("from helper import count\n", "").replace("count(mask)", "(mask != 0).sum()"))
    with Workers() as workers:
        run_jobs([Job(helper, CODES)], workers=workers)
        (dead,) = workers._pool.workers
        dead.process.kill()
        dead.process.join()
        (report,) = run_jobs([Job("alone.py", CODES)], workers=workers)
        assert [d.code for d in report.diagnostics] == ["PH001"]
        assert dead not in workers._pool.workers


def test_waiting_returns_what_is_ready_a_closed_pipe_included():
    """runner._wait polls the pipes and sentinels itself: a connection with a report
    is ready, one whose other end closed (a worker that died) is ready, and one that
    holds nothing yet is not."""
    import multiprocessing

    from precision_lint.runner import _wait

    quiet_reader, quiet_writer = multiprocessing.Pipe(duplex=False)
    full_reader, full_writer = multiprocessing.Pipe(duplex=False)
    dead_reader, dead_writer = multiprocessing.Pipe(duplex=False)
    full_writer.send("report")
    dead_writer.close()
    ready = _wait([quiet_reader, full_reader, dead_reader])
    assert full_reader in ready and dead_reader in ready and quiet_reader not in ready
    assert full_reader.recv() == "report"
    for connection in (quiet_reader, quiet_writer, full_reader, full_writer, dead_reader):
        connection.close()


def test_workers_started_before_the_first_round_serve_it(tmp_path, monkeypatch):
    import os

    from precision_lint.runner import worker_memory

    helper, user = _files(tmp_path, monkeypatch)
    with Workers() as workers:
        workers.start(worker_memory(1024))
        started = _pids(workers)
        assert len(started) == (os.cpu_count() or 1)
        reports = run_jobs([Job(helper, CODES)] * 20 + [Job(user, CODES)], workers=workers)
        assert _pids(workers) == started
    assert [d.code for d in reports[0].diagnostics] == [] and reports[-1].path == user


def test_a_worker_checks_every_job_on_one_deep_stack_thread(tmp_path, monkeypatch):
    # a thread started for each job cost about 10 context switches a job (torchmetrics'
    # cold run: 0.3 s of 2.25); the jobs still run on a deep stack, off the main thread
    import sys
    import threading

    from precision_lint import runner

    helper, _ = _files(tmp_path, monkeypatch)
    real = runner._run_job

    def noting_the_thread(job):  # the forked worker has it
        report = real(job)
        report.diff = f"{threading.get_native_id()} {threading.current_thread() is threading.main_thread()} {sys.getrecursionlimit()}"
        return report

    monkeypatch.setattr(runner, "_run_job", noting_the_thread)
    with Workers() as workers:
        reports = run_jobs([Job(helper, CODES)] * 3, workers=workers)
        assert len(workers._pool.workers) == 1  # a few small files: one worker
    threads = {report.diff for report in reports}
    assert len(threads) == 1
    _, on_main, limit = threads.pop().split()
    assert on_main == "False" and int(limit) >= runner.RECURSION_LIMIT


def _noting_what_each_worker_had_in_flight(monkeypatch) -> list[int]:
    """How many jobs the worker held when each job was sent (1: sent behind another)."""
    from precision_lint import runner

    in_flight: list[int] = []
    real = runner._Worker.give

    def give(self, number, jobs, learned, most=None):
        before = len(self.jobs)
        sent = real(self, number, jobs, learned, most)
        if sent:
            in_flight.append(before)
        return sent

    monkeypatch.setattr(runner._Worker, "give", give)
    return in_flight


def test_a_busy_worker_is_sent_its_next_job_before_it_reports_and_the_reports_are_the_same(tmp_path, monkeypatch):
    helper, user = _files(tmp_path, monkeypatch)
    jobs = [Job(helper, CODES), Job(user, CODES)] * 15
    in_flight = _noting_what_each_worker_had_in_flight(monkeypatch)
    queued = run_jobs(jobs)
    assert len(in_flight) == 30 and in_flight.count(1) > 0 and set(in_flight) <= {0, 1}
    from precision_lint import speedups

    monkeypatch.setattr(speedups, "_OFF", frozenset({"queued"}))  # the workers forked next have it too
    in_flight.clear()
    one_at_a_time = run_jobs(jobs)
    assert in_flight == [0] * 30
    assert [(r.path, r.diagnostics) for r in queued] == [(r.path, r.diagnostics) for r in one_at_a_time]


def test_a_worker_that_dies_with_a_job_sent_behind_its_own_costs_only_its_own(tmp_path, monkeypatch):
    import os
    import time

    from precision_lint import runner

    _files(tmp_path, monkeypatch)
    # the largest file goes first, so a worker is checking it when its next job is sent
    (tmp_path / "crash.py").write_text(HELPER + "#" * 5000 + "\n")
    real = runner._run_job

    def dying_on_crash_py(job):
        if job.path == "crash.py":
            time.sleep(0.5)  # the parent sends the next job meanwhile
            os._exit(3)
        return real(job)

    monkeypatch.setattr(runner, "_run_job", dying_on_crash_py)
    in_flight = _noting_what_each_worker_had_in_flight(monkeypatch)
    alone = USER.replace("from helper import count\n", "").replace("count(mask)", "(mask != 0).sum()")
    (tmp_path / "alone.py").write_text(alone)
    jobs = [Job("crash.py", CODES)] + [Job("alone.py", CODES)] * 20
    reports = run_jobs(jobs)
    assert in_flight[:2] == [0, 0] and 1 in in_flight[2:4]  # both busy, then one sent behind each
    assert [r.path for r in reports] == ["crash.py"] + ["alone.py"] * 20
    (crash,) = reports[0].diagnostics
    assert crash.code == "PH903"
    assert crash.message == "The checker process exited with status 3 while checking this file: it was not checked"
    # the job sent behind crash.py's went back to the order and was checked
    assert all(r.diagnostics == reports[1].diagnostics for r in reports[1:])
    assert [d.code for d in reports[1].diagnostics] == ["PH001"]


def test_a_job_is_sent_behind_another_only_when_the_pipe_holds_its_message_unread():
    import multiprocessing
    import os
    import socket

    from precision_lint.runner import QUEUED_MESSAGE_BYTES, _Worker

    parent, child = multiprocessing.Pipe()
    worker = _Worker(None, parent, "")
    jobs = [Job("a.py", CODES, learns=True)]
    assert not worker.give(0, jobs, [{"module": "m", "text": "x" * 2000}], most=1000)  # longer: refused
    assert not worker.jobs and worker.told == 0 and not child.poll()
    assert worker.give(0, jobs, [{"module": "m"}], most=1000)
    assert list(worker.jobs) == [0] and worker.told == 1
    assert child.recv() == (jobs[0], [{"module": "m"}], True)
    # the longest message sent behind a job goes into the pipe whole while nobody reads it
    room = worker.room_unread()
    assert room <= QUEUED_MESSAGE_BYTES
    with socket.socket(fileno=os.dup(parent.fileno())) as sock:
        sock.setblocking(False)
        assert sock.send(b"x" * room) == room
    # a pipe that is not a socket (its room unknown): nothing is sent behind a job
    reader, writer = multiprocessing.Pipe(duplex=False)
    assert _Worker(None, writer, "").room_unread() == 0
    for connection in (parent, child, reader, writer):
        connection.close()
