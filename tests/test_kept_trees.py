"""A worker keeps the trees of the files it checked (kept_trees.py), and a file checked
again in a later round goes back to the worker that checked it (runner._next_held):
the check starts from the kept tree, with the findings a new parse gives."""
from collections import deque

import pytest

from precision_lint import engine, runner
from precision_lint.kept_trees import KeptTrees
from precision_lint.registry import all_rules
from precision_lint.runner import Job, Workers, run_jobs

CODES = frozenset(rule.code for rule in all_rules())
QUIET = "import torch\n\ndef scale(x):\n    return x * 2\n"
HAZARD = "import torch\n\ndef run(masks):\n    total = torch.zeros(1)\n    for mask in masks:\n        total += (mask != 0).sum()\n    return total\n"


def test_a_tree_is_kept_for_its_own_source_only():
    kept = KeptTrees()
    kept.keep("a.py", QUIET, "quick", "tree")
    assert kept.get("a.py", QUIET) == ("quick", "tree")
    assert kept.get("a.py", QUIET + "\n") is None  # the file changed
    assert kept.get("b.py", QUIET) is None


def test_the_oldest_trees_go_first_past_the_limit():
    kept = KeptTrees(max_source=2 * len(QUIET))
    for name in ("a.py", "b.py", "c.py"):
        kept.keep(name, QUIET, "quick", name)
    assert kept.get("a.py", QUIET) is None
    assert kept.get("b.py", QUIET) == ("quick", "b.py") and kept.get("c.py", QUIET) == ("quick", "c.py")
    kept.keep("huge.py", QUIET * 3, "quick", "huge")  # larger than the whole store: not kept
    assert kept.get("huge.py", QUIET * 3) is None and kept.get("c.py", QUIET) is not None


def _refuse(*args, **kwargs):
    raise AssertionError("parsed again")


def test_a_file_without_findings_is_checked_again_on_its_quick_tree(monkeypatch):
    kept = KeptTrees()
    first = engine.check_module(QUIET, "quiet.py", CODES, kept=kept)
    kind, tree = kept.get("quiet.py", QUIET)
    assert kind == "quick" and tree is not None
    monkeypatch.setattr(engine, "quick_module", _refuse)
    monkeypatch.setattr(engine, "parse_module", _refuse)
    again = engine.check_module(QUIET, "quiet.py", CODES, kept=kept)
    assert again.diagnostics == first.diagnostics == [] and again.summary == first.summary


@pytest.mark.parametrize("try_quick", [True, False])
def test_a_file_with_findings_is_checked_again_on_libcsts_tree(monkeypatch, try_quick):
    kept = KeptTrees()
    first = engine.check_module(HAZARD, "hazard.py", CODES, kept=kept)
    assert [d.code for d in first.diagnostics] == ["PH001"]
    kind, module = kept.get("hazard.py", HAZARD)
    assert kind == "concrete" and module is first.module
    monkeypatch.setattr(engine, "quick_module", _refuse)
    monkeypatch.setattr(engine, "parse_module", _refuse)
    again = engine.check_module(HAZARD, "hazard.py", CODES, try_quick=try_quick, kept=kept)
    assert again.diagnostics == first.diagnostics and again.module is module


class _Held:
    def __init__(self, *paths):
        self.held = set(paths)


def test_a_worker_takes_its_own_files_first_then_the_others_smallest():
    jobs = [Job(path, CODES) for path in ("big.py", "mine.py", "new.py", "small.py")]
    mine, other = _Held("mine.py"), _Held("big.py", "small.py")
    order = deque(range(4))
    assert runner._next_held(order, jobs, mine, [mine, other]) == 1
    assert runner._next_held(order, jobs, mine, [mine, other]) == 2  # no worker checked it
    assert runner._next_held(order, jobs, mine, [mine, other]) == 3  # the other's, smallest first
    assert runner._next_held(order, jobs, other, [mine, other]) == 0 and not order


def test_a_file_checked_again_goes_to_the_worker_that_checked_it(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    names = [f"m{i}.py" for i in range(20)]
    for name in names:
        (tmp_path / name).write_text(QUIET)
    with Workers() as workers:
        run_jobs([Job(name, CODES) for name in names], workers=workers)
        first, second = workers._pool.workers
        assert first.held and second.held and not first.held & second.held
        picked = sorted(first.held)[:2]
        run_jobs([Job(name, CODES) for name in picked], workers=workers)  # few files: one worker
        assert workers._pool.workers == [first, second]
        assert set(picked) <= first.held and not set(picked) & second.held


class _Connection:
    """A worker's end of the pipe: one job, then the end of the run."""

    def __init__(self, job):
        self.messages, self.sent = [(job, [], True), None], []

    def recv(self):
        return self.messages.pop(0)

    def send(self, report):
        self.sent.append(report)


def test_a_worker_leaves_its_kept_trees_to_no_collection(tmp_path, monkeypatch):
    # a kept tree lives for the run: the cyclic collector walking it after every job
    # cost more than keeping it saved
    import gc

    monkeypatch.chdir(tmp_path)
    (tmp_path / "quiet.py").write_text(QUIET)
    frozen = gc.get_freeze_count()
    connection = _Connection(Job("quiet.py", CODES))
    try:
        runner._serve(connection)
        (kind, tree) = runner._kept_trees.get("quiet.py", QUIET)
        assert kind == "quick" and [report.path for report in connection.sent] == ["quiet.py"]
        assert gc.get_freeze_count() > frozen
        assert not any(obj is tree for obj in gc.get_objects())  # frozen objects are not tracked by generation
    finally:
        runner._kept_trees = None
        if frozen == 0:
            gc.unfreeze()


@pytest.mark.parametrize("source, kind", [(QUIET, "quick"), (HAZARD, "concrete")])
def test_a_tree_leaves_the_collector_before_it_is_modeled(tmp_path, monkeypatch, source, kind):
    # the collection after each job walked the new tree again (Megatron-LM: 0.16 s a
    # worker); the model's own garbage is still collected after the job
    import gc

    monkeypatch.chdir(tmp_path)
    (tmp_path / "a.py").write_text(source)
    frozen = gc.get_freeze_count()
    real = engine.check_parsed
    tracked_when_modeled = []

    def noting(source, module, *args, **kwargs):
        tracked_when_modeled.append(any(obj is module for obj in gc.get_objects()))
        return real(source, module, *args, **kwargs)

    monkeypatch.setattr(engine, "check_parsed", noting)
    runner._kept_trees = KeptTrees()
    try:
        report = runner.run_job(Job("a.py", CODES))
        assert runner._kept_trees.get("a.py", source)[0] == kind
        assert [d.code for d in report.diagnostics] == ([] if kind == "quick" else ["PH001"])
        assert tracked_when_modeled and not tracked_when_modeled[-1]
    finally:
        runner._kept_trees = None
        if frozen == 0:
            gc.unfreeze()


def test_what_the_quick_pass_left_is_collected_not_frozen_with_the_concrete_tree(tmp_path, monkeypatch):
    # a file whose quick pass had something to report is parsed by libcst and settled
    # again: a cycle the quick pass's model left must not be frozen for the run
    import gc
    import weakref

    monkeypatch.chdir(tmp_path)
    (tmp_path / "a.py").write_text(HAZARD)
    frozen = gc.get_freeze_count()
    real = engine.check_parsed
    left: list[weakref.ref] = []

    class Cycle:
        pass

    def leaving_a_cycle(source, module, *args, **kwargs):
        if not left:  # the quick pass
            cycle = Cycle()
            cycle.itself = cycle
            left.append(weakref.ref(cycle))
        return real(source, module, *args, **kwargs)

    monkeypatch.setattr(engine, "check_parsed", leaving_a_cycle)
    runner._kept_trees = KeptTrees()
    try:
        report = runner.run_job(Job("a.py", CODES))
        assert runner._kept_trees.get("a.py", HAZARD)[0] == "concrete"
        assert [d.code for d in report.diagnostics] == ["PH001"]
        assert left[0]() is None
    finally:
        runner._kept_trees = None
        if frozen == 0:
            gc.unfreeze()
