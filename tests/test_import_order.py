"""The first round in import order (project/order.py): each file checked with the
summaries of the files before it (project/learned.py, handed over by runner.py), so a
chain of helpers across modules is answered in one round, with the same findings."""
from collections import deque

import pytest

from precision_lint import runner, speedups
from precision_lint.model.values import Value
from precision_lint.project.analysis import check_unsettled, run_project
from precision_lint.project.index import NOTHING, ProjectIndex
from precision_lint.project.learned import LearnedSummaries
from precision_lint.project.order import import_order
from precision_lint.project.portable import value_to_data
from precision_lint.registry import all_rules
from precision_lint.runner import Job, run_jobs

CODES = frozenset(rule.code for rule in all_rules())
COUNT = value_to_data(Value.py_int(count=True))


def _write(root, files: dict[str, str]) -> list[str]:
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)
    return [str(root / name) for name in files]


def test_a_module_comes_after_the_modules_it_imports(tmp_path):
    paths = _write(tmp_path, {
        "train.py": "from pkg.metrics.acc import Acc\nfrom pkg import (\n    util,  # helpers\n    base,\n)\n",
        "pkg/__init__.py": "from .base import f\nlog = None\n",
        "pkg/metrics/__init__.py": "from .acc import Acc\n",
        "pkg/metrics/acc.py": "from ..base import Metric\nimport pkg.util as u\n",
        "pkg/base.py": "if TYPE_CHECKING:\n    import pkg.util\n\ndef f():\n    'doc'\n\n    import train\n",
        # a docstring's `import train` reads as an import: a circle, which costs at
        # most a file checked again, never a different answer
        "pkg/util.py": '"""Nothing here.\nimport train\n"""\nfrom pkg import log  # import train\n',
    })  # fmt: skip
    order, imports = import_order(paths)
    assert sorted(order) == list(range(len(paths)))
    at = {path: k for k, path in enumerate(paths[i] for i in order)}
    train, init, metrics_init, acc, base, util = paths
    assert at[base] < at[acc] < at[train] and at[util] < at[acc]  # relative, absolute, aliased, nested
    assert at[acc] < at[metrics_init]
    assert sorted(imports[paths.index(acc)]) == [paths.index(base), paths.index(util)]
    # under `if` at the top it runs on import; inside a function, only when called
    assert imports[paths.index(base)] == [paths.index(util)]
    # a module importing from the package that holds it closes a circle: left out
    assert imports[paths.index(util)] == [paths.index(train)]  # the docstring's
    assert imports[paths.index(init)] == [paths.index(base)]


def test_a_file_that_names_itself_does_not_wait_for_itself(tmp_path):
    paths = _write(tmp_path, {"train.py": '"""Run as\nimport train\n"""\nimport helper\n', "helper.py": ""})
    assert import_order(paths) == ([1, 0], [[1], []])


def test_a_worker_takes_the_next_job_whose_imports_are_finished():
    jobs = [Job("a.py", CODES), Job("b.py", CODES, waits_for=frozenset({"a.py"})), Job("c.py", CODES)]
    order, unfinished = deque([0, 1, 2]), {"a.py", "b.py", "c.py"}
    assert runner._next_ready(order, jobs, unfinished) == 0
    assert runner._next_ready(order, jobs, unfinished) == 2  # b.py waits for a.py, still being checked
    assert runner._next_ready(order, jobs, unfinished) == 1  # none is ready: the next in the order
    order = deque([1])
    unfinished.discard("a.py")
    assert runner._next_ready(order, jobs, unfinished) == 1 and not order


def test_modules_that_import_each_other_are_all_placed(tmp_path):
    paths = _write(tmp_path, {"a.py": "import b\n", "b.py": "import c\n", "c.py": "import a\n", "gone.py": ""})
    (tmp_path / "gone.py").unlink()  # unreadable: placed, and reported by the check
    order, imports = import_order(paths)
    assert sorted(order) == [0, 1, 2, 3]
    assert imports == [[1], [2], [0], []]


def test_a_module_many_import_goes_first_in_their_circle(tmp_path):
    # a registry imported at the top of a helpers module, importing the workers that
    # import the helpers: a walk from the largest worker would place the helpers
    # after two of their three importers
    paths = _write(tmp_path, {
        "w1.py": "import helpers\n" + "x = 1\n" * 100, "w2.py": "import helpers\n", "w3.py": "import helpers\n",
        "helpers.py": "import registry\n", "registry.py": "import w1, w2, w3\n",
    })  # fmt: skip
    order, imports = import_order(paths)
    at = {i: k for k, i in enumerate(order)}
    assert all(at[3] < at[w] for w in (0, 1, 2))
    assert [(i, j) for i, imported in enumerate(imports) for j in imported if at[j] > at[i]] == [(3, 4)]


def test_the_largest_file_nothing_imports_starts_first(tmp_path):
    paths = _write(tmp_path, {"small.py": "x = 1\n", "large.py": "import helper\n" + "y = 2\n" * 500, "helper.py": ""})
    order = [paths[i].rpartition("/")[2] for i in import_order(paths)[0]]
    assert order == ["helper.py", "large.py", "small.py"]


def _summary(name: str, functions=None, classes=None, exports=None, path=None) -> dict:
    return {
        "module": name, "path": path or name.replace(".", "/") + ".py", "functions": functions or {},
        "classes": classes or {}, "exports": exports or {}, "calls": {}, "opaque_calls": [], "evidence": [],
    }  # fmt: skip


def _function(params, returns=None) -> dict:
    return {"params": params, "positional": len(params), "self": False, "returns": returns, "defaults": [], "where": None}


def test_learned_summaries_answer_names_as_the_index_does():
    summaries = [
        _summary("pkg", exports={"count": "pkg.core.count", "Base": "pkg.core.Base"}),
        _summary("pkg.core", functions={"pkg.core.count": _function(["x"], COUNT), "pkg.core.Base.n": _function(["self"], COUNT)},
                 classes={"pkg.core.Base": ["torch.nn.Module"]}),
        _summary("pkg.sync", functions={"pkg.sync.reduce": _function(["n"])}),
    ]  # fmt: skip
    learned, index = LearnedSummaries(), ProjectIndex(summaries)
    learned.add(summaries)
    for key in ("f:pkg.count", "c:pkg.Base", "f:pkg.core.Base.n", "f:pkg.missing", "c:pkg.count", "f:elsewhere.f"):
        assert learned.answer(key) == index.answer(key), key
    assert index.fingerprint("f:pkg.count") != NOTHING
    assert learned.answer("p:pkg.sync.reduce") is None  # what callers pass waits for the whole index


def test_a_module_learned_later_answers_a_name_asked_before():
    learned = LearnedSummaries()
    learned.add([_summary("pkg")])
    assert learned.answer("f:pkg.core.count") is None
    learned.add([_summary("pkg.core", functions={"pkg.core.count": _function(["x"], COUNT)})])
    assert learned.answer("f:pkg.core.count")[0] == "pkg.core.count"


def test_a_module_name_two_files_claim_answers_nothing():
    learned = LearnedSummaries()
    one = _summary("train", functions={"train.f": _function([], COUNT)}, path="a/train.py")
    learned.add([one])
    assert learned.answer("f:train.f") is not None
    learned.add([dict(one, path="b/train.py")])
    assert learned.answer("f:train.f") is None
    learned.add([one])  # and goes on answering nothing
    assert learned.answer("f:train.f") is None


HELPER = "import torch\n\ndef count(mask):\n    return (mask != 0).sum()\n"
USER = (
    "import torch\nfrom helper import count\n\ndef run(masks):\n    total = torch.zeros(1)\n"
    "    for mask in masks:\n        total += count(mask)\n    return total\n"
)


@pytest.mark.parametrize("workers", ["pool", "in-process"])
def test_a_job_that_learns_is_answered_from_the_jobs_before_it(tmp_path, monkeypatch, workers):
    if workers == "in-process":  # no worker can be started: the same, in this process
        monkeypatch.setattr(runner._Pool, "_start", lambda self: (_ for _ in ()).throw(runner._NoWorkers("test")))
    helper, user = _write(tmp_path, {"helper.py": HELPER, "user.py": USER})
    monkeypatch.chdir(tmp_path)
    reports = run_jobs([Job(helper, CODES, learns=True), Job(user, CODES, learns=True)])
    assert reports[1].dependencies["f:helper.count"] != NOTHING
    assert [d.code for d in reports[1].diagnostics] == ["PH001"]
    alone = run_jobs([Job(user, CODES)])  # without learning: no answer yet
    assert alone[0].dependencies["f:helper.count"] == NOTHING and not alone[0].diagnostics


def _chain(root, links: int) -> list[str]:
    files = {"c0.py": HELPER.replace("def count", "def count0")}
    for number in range(1, links):
        files[f"c{number}.py"] = (
            f"import torch\nfrom c{number - 1} import count{number - 1}\n\n"
            f"def count{number}(mask):\n    return count{number - 1}(mask)\n"
        )
    files["train.py"] = USER.replace("from helper import count", f"from c{links - 1} import count{links - 1} as count")
    return _write(root, dict(reversed(list(files.items()))))  # listed callers first


@pytest.mark.parametrize("ordered", [True, False], ids=["ordered", "unordered"])
def test_a_chain_of_helpers_is_answered_in_the_first_round(tmp_path, monkeypatch, ordered):
    monkeypatch.setattr(speedups, "_OFF", frozenset() if ordered else frozenset({"ordered"}))
    monkeypatch.chdir(tmp_path)
    batches: list[int] = []

    def counting(jobs, **options):
        batches.append(len(jobs))
        return run_jobs(jobs, **options)

    reports = run_project([Job(path, CODES) for path in _chain(tmp_path, 5)], runner=counting)
    found = {(r.path.rpartition("/")[2], d.location.row, d.code) for r in reports for d in r.diagnostics}
    assert found == {("train.py", 5, "PH001")}
    # in import order every link is known when its caller is checked: no file again;
    # otherwise (callers listed first) each link takes a round of its own
    assert batches == ([6] if ordered else [6, 1, 1, 1, 1, 1])


@pytest.mark.parametrize("mode", ["check", "fix"])
def test_only_reports_that_are_checked_again_learn(tmp_path, monkeypatch, mode):
    # a summary of a module outside the run is never checked again, and a fix is
    # written at once: neither may rest on the first round's partial answers
    helper, user = _write(tmp_path, {"helper.py": HELPER, "user.py": USER})
    monkeypatch.chdir(tmp_path)
    seen: list[tuple[str, bool]] = []

    def recording(jobs, **options):
        seen.extend((job.mode, job.learns) for job in jobs)
        return run_jobs(jobs, **options)

    run_project([Job(user, CODES, mode=mode)], runner=recording)
    assert ("summary", False) in seen  # helper.py, read for its summary
    assert (mode, mode == "check") in seen
    assert not any(learns for job_mode, learns in seen if job_mode not in ("check", "callee"))


@pytest.mark.parametrize("ordered", [True, False], ids=["ordered", "unordered"])
def test_a_staged_files_imports_are_read_with_it(tmp_path, monkeypatch, ordered):
    # pre-commit hands over user.py alone: helper.py is read for its summary alongside
    # it, so user.py is answered at once; the index holds the same modules either way
    monkeypatch.setattr(speedups, "_OFF", frozenset() if ordered else frozenset({"ordered"}))
    _, user, _ = _write(tmp_path, {"helper.py": HELPER, "user.py": USER, "other.py": HELPER})
    monkeypatch.chdir(tmp_path)
    batches: list[list[tuple[str, str]]] = []

    def recording(jobs, **options):
        batches.append([(job.mode, job.path.rpartition("/")[2]) for job in jobs])
        return run_jobs(jobs, **options)

    reports, index = check_unsettled([Job(user, CODES)], runner=recording)
    assert [(d.location.row, d.code) for d in reports[0].diagnostics] == [(5, "PH001")]
    assert sorted(index.modules) == ["helper", "user"]  # other.py is not imported
    if ordered:
        assert batches == [[("summary", "helper.py"), ("check", "user.py")]]
    else:
        assert batches == [[("check", "user.py")], [("summary", "helper.py")], [("check", "user.py")]]


# A package that imports every module in turn and re-exports a helper: the module
# importing the helper through the package closes a circle, so the package comes after
# it in the order (torchmetrics: `from torchmetrics import Metric`).
PACKAGE = {
    "pkg/__init__.py": "import torch\nfrom pkg.core import count\nfrom pkg.user import run\n",
    "pkg/core.py": HELPER,
    "pkg/user.py": USER.replace("from helper import count", "from pkg import count"),
}


@pytest.mark.parametrize("reexports", [True, False], ids=["stubs", "no-stubs"])
def test_a_name_imported_through_its_package_is_answered_in_the_first_round(tmp_path, monkeypatch, reexports):
    monkeypatch.setattr(speedups, "_OFF", frozenset() if reexports else frozenset({"reexports"}))
    paths = _write(tmp_path, PACKAGE)
    monkeypatch.chdir(tmp_path)
    batches: list[list[str]] = []

    def recording(jobs, **options):
        batches.append([job.path.rpartition("/")[2] for job in jobs])
        return run_jobs(jobs, **options)

    reports = run_project([Job(path, CODES) for path in paths], runner=recording)
    user = reports[2]
    assert [(d.location.row, d.code) for d in user.diagnostics] == [(5, "PH001")]
    assert user.dependencies["f:pkg.count"] != NOTHING
    # the package's imports, read before the round, put user.py after core.py and
    # answer it at once; without them it is checked again once the package is indexed
    if reexports:
        assert batches == [["core.py", "user.py", "__init__.py"]]
    else:
        assert batches == [["user.py", "core.py", "__init__.py"], ["user.py"]]


def test_a_stub_holds_only_what_a_package_imports_and_is_left_out_of_the_index(tmp_path, monkeypatch):
    from precision_lint.project.analysis import _reexport_stubs

    paths = _write(tmp_path, {**PACKAGE, "pkg/empty/__init__.py": "", "pkg/broken/__init__.py": "from . import (\n"})
    monkeypatch.chdir(tmp_path)
    stubs = _reexport_stubs([Job(path, CODES) for path in paths] + [Job(paths[0], CODES, mode="summary")])
    # a package that imports nothing, or does not parse, has none; a summary job learns nothing
    assert [(stub["module"], stub["exports"], stub["modeled"]) for stub in stubs] == [
        ("pkg", {"count": "pkg.core.count", "run": "pkg.user.run"}, False)
    ]
    reports, index = check_unsettled([Job(path, CODES) for path in paths])
    assert index.modules["pkg"].get("modeled", True)  # the package's own summary, not its stub


def test_a_name_imported_through_a_package_ties_the_file_to_its_module(tmp_path):
    paths = _write(tmp_path, {
        "app.py": "from pkg import Thing, other\n",
        "pkg/__init__.py": "",
        "pkg/sub/__init__.py": "",
        "pkg/sub/thing.py": "",
        "pkg/other.py": "",
    })
    reexports = {"pkg": {"Thing": "pkg.sub.Thing"}, "pkg.sub": {"Thing": "pkg.sub.thing.Thing"}}
    _, imports = import_order(paths, reexports)
    # through two packages to pkg/sub/thing.py; `other` is a module of its own
    tied = sorted(paths[j][len(str(tmp_path)) + 1 :] for j in imports[0])
    assert tied == ["pkg/__init__.py", "pkg/other.py", "pkg/sub/__init__.py", "pkg/sub/thing.py"]
    assert import_order(paths)[1][0] == [1, 4]  # without them: the package and the module only


def _edited_run(tmp_path, files: dict[str, str], staged: str) -> tuple[list, list[list[str]], list[str]]:
    """Checks `staged` once with a cache, edits it, and checks it again: the second
    run's reports, its batches, and the modules of the summaries its jobs were sent."""
    from precision_lint.cache import ResultCache

    paths = dict(zip(files, _write(tmp_path, files)))
    staged_path = paths[staged]
    run_project([Job(staged_path, CODES)], cache=ResultCache(tmp_path / "cache"))
    with open(staged_path, "a") as handle:
        handle.write("# edited\n")
    batches: list[list[str]] = []
    sent: list[str] = []

    def recording(jobs, **options):
        batches.append([job.path.rpartition("/")[2] for job in jobs])
        sent.extend(summary["module"] for summary in options.get("known", ()))
        return run_jobs(jobs, **options)

    reports = run_project([Job(staged_path, CODES)], cache=ResultCache(tmp_path / "cache"), runner=recording)
    return reports, batches, sent


def test_a_staged_file_changed_since_the_last_run_is_answered_from_the_cache(tmp_path, monkeypatch):
    # pre-commit's staged file, edited: its imports' summaries come from the cache, and
    # are sent with it, so it is checked once, not again once the index holds them
    monkeypatch.chdir(tmp_path)
    files = {"helper.py": HELPER, "user.py": USER, "other.py": HELPER.replace("count", "tally")}
    reports, batches, sent = _edited_run(tmp_path, files, "user.py")
    assert [(d.location.row, d.code) for d in reports[0].diagnostics] == [(5, "PH001")]
    assert batches == [["user.py"]]
    assert sent == ["helper"]


def test_a_cached_module_reached_through_its_package_is_sent_with_the_staged_file(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    files = {
        "pkg/__init__.py": "from pkg.core import count\n",
        "pkg/core.py": HELPER,
        "pkg/other.py": HELPER.replace("count", "tally"),
        "user.py": USER.replace("from helper import count", "from pkg import count"),
    }
    reports, batches, sent = _edited_run(tmp_path, files, "user.py")
    assert [(d.location.row, d.code) for d in reports[0].diagnostics] == [(5, "PH001")]
    assert batches == [["user.py"]]
    assert sorted(sent) == ["pkg", "pkg.core"]
