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
