"""The speed-ups inside the model ("loops": a loop's second pass left out where the
first changed nothing it reads; "replay": a method's second run replayed from its
first where it would start from the same) change nothing the model holds: every
value, call, creation, accumulator fact and summary is the same with and without
them. benchmarks/same_model.py holds real trees to the same comparison."""
from __future__ import annotations

import sys

import libcst as cst
import pytest

from conftest import REPO, STATEFUL
from precision_lint.model import semantic
from precision_lint.model.interpreter import ScopeInterpreter
from precision_lint.quick_tree import quick_module

sys.path.insert(0, str(REPO / "benchmarks"))
from same_model import MODEL_SPEEDUPS, built, first_difference  # noqa: E402

ALL = frozenset(MODEL_SPEEDUPS)
NONE: frozenset[str] = frozenset()


@pytest.fixture(autouse=True)
def _switches_restored(monkeypatch):
    """built() sets the speed-up switches for the whole process: put them back."""
    from precision_lint import speedups

    monkeypatch.setattr(speedups, "_OFF", speedups._OFF)

LOOPS = """import torch


def f(batches):
    tokens = torch.zeros(1)
    names = []
    for batch in batches:
        out = batch.view(-1)
        names.append(out.shape)
        for row in out:
            print(row)
    for batch in batches:
        tokens += (batch != 0).sum()
    return tokens, names
"""

# loops whose passes bind what they read, in the ways the second pass must still see
BOUND_BEFORE_READ = """import torch


def f(batches, key):
    total = torch.zeros(1)
    kept = torch.zeros(1, dtype=torch.float16)
    for batch in batches:
        out = batch.view(-1)  # bound, then read
        n = (out != 0).sum()
        print(n)
    for batch in batches:
        if batch.any():
            chosen = batch.sum()
        else:
            chosen = None  # bound in both branches
        with torch.no_grad():
            scaled = batch * 2  # a `with` block runs where it stands
        print(chosen, scaled)
    for batch in batches:
        n = (batch != 0).sum()
        total += n  # read, and changed by the pass
    for batch in batches:
        if batch.any():
            picked = batch.sum()  # bound in a branch only: the old one may be read
        kept = kept + picked
    for batch in batches:
        print(later)  # read before it is bound
        later = (batch > 0).sum()
    for batch in batches:
        parts = [row.sum() for row in batch]  # a comprehension's own target
        for key in parts:  # an inner loop's target
            print(key)
        print(key)  # after the inner loop: the old one may be read
    for batch in batches:
        again = dict(key=batch.sum())  # a keyword names no variable
        def inner():
            return again + key
        key = inner
    step = 0
    while step < 10:
        step = step + 1
    return total, kept, step
"""

# a later statement of a pass changes a creation's facts (the buffer a pass rebinds
# becomes a tally through `scatter_add_` of ones), or the value of an assignment names
# its target as a keyword or an attribute (the model looks for a rebinding there)
LATER_FACTS = """import torch


def histograms(batches, n, flag):
    for idx in batches:
        with torch.no_grad():
            counts = torch.zeros(n)
        seen = counts.item()
        counts.scatter_add_(0, idx, torch.ones_like(idx, dtype=torch.float))
        yield seen


def histograms_in_branches(batches, n, flag):
    for idx in batches:
        if flag:
            counts = torch.zeros(n)
        else:
            counts = torch.zeros(n, device="cpu")
        seen = counts - 0
        counts.index_add_(0, idx, torch.ones_like(idx, dtype=torch.float))
        yield seen


def histograms_while(batches, n):
    while batches:
        idx = batches.pop()
        counts = torch.zeros(n)
        seen = counts.tolist()
        counts.scatter_add_(0, idx, torch.ones_like(idx, dtype=torch.float))
        yield seen


def histogram_made_before(batches, idx):
    counts = torch.zeros(10)
    for batch in batches:
        shifted = counts + 1
        counts.scatter_add_(0, idx, torch.ones(10))


def named_as_keyword(xs, f, obj):
    for x in xs:
        a = torch.histc(x) + f(a=x)
        b = torch.histc(x) + obj.b
"""


def _sources() -> list[tuple[str, str]]:
    found = [("stateful", STATEFUL), ("loops", LOOPS), ("bound before read", BOUND_BEFORE_READ), ("later facts", LATER_FACTS)]
    for path in sorted((REPO / "tests").glob("fixtures/**/*.py")) + sorted((REPO / "tests").glob("projects/**/*.py")):
        found.append((str(path.relative_to(REPO)), path.read_text()))
    return found


def _trees(source: str) -> list[cst.Module]:
    quick = quick_module(source)
    return [cst.parse_module(source)] + ([quick.module] if quick is not None else [])


@pytest.mark.parametrize("name,source", _sources(), ids=[name for name, _ in _sources()])
def test_the_model_holds_the_same_with_and_without_its_speedups(name, source):
    for module in _trees(source):
        assert first_difference(built(module, "m", NONE), built(module, "m", ALL)) is None


def test_the_comparison_sees_a_difference():
    module = cst.parse_module(LOOPS)
    same = built(module, "m", ALL)
    assert first_difference(same, built(module, "m", ALL)) is None
    changed = built(module, "m", ALL)
    changed["values"][next(iter(changed["values"]))] = ("another value",)
    assert first_difference(same, changed).startswith("values: 1 differ")
    changed = built(module, "m", ALL)
    changed["summaries"] = {}
    assert first_difference(same, changed).startswith("summaries:")
    changed = built(module, "m", ALL)
    changed["calls"] = changed["calls"][1:]
    assert first_difference(same, changed).startswith("calls: from item 0")


def _count(monkeypatch, owner, name) -> list:
    calls: list = []
    real = getattr(owner, name)

    def counted(self, *args, **kwargs):
        calls.append(args)
        return real(self, *args, **kwargs)

    monkeypatch.setattr(owner, name, counted)
    return calls


def test_a_loop_whose_pass_changes_nothing_it_reads_runs_once(monkeypatch):
    module = cst.parse_module(LOOPS)
    outer, _ = [s for s in module.body[1].body.body if type(s) is cst.For]
    inner = outer.body.body[2]
    runs = _count(monkeypatch, ScopeInterpreter, "run")
    built(module, "m", ALL)
    fast = [id(body) for body, _ in runs]
    runs.clear()
    built(module, "m", NONE)
    slow = [id(body) for body, _ in runs]
    # `for row in out: print(row)` binds nothing it reads: one pass, each time round
    assert slow.count(id(inner.body)) == 2 * fast.count(id(inner.body))
    # the counting loop reads what it changes: twice either way
    counting = module.body[1].body.body[3]
    assert fast.count(id(counting.body)) == slow.count(id(counting.body)) == 2


def _loop(source: str, number: int, within: int = 1) -> cst.For | cst.While:
    body = cst.parse_module(source).body[within].body.body
    return [s for s in body if type(s) in (cst.For, cst.While)][number]


@pytest.mark.parametrize(
    "number,exposed",
    [
        (0, {"print"}),  # `out` and `n` are bound before they are read
        (1, {"torch", "print", "None"}),  # libcst spells `None` as a name
        (2, {"total"}),
        (3, {"kept", "picked"}),  # `picked` is bound in a branch only
        (4, {"print", "later"}),  # `later` is read before it is bound
        (5, {"print", "key"}),  # `row` and the inner `key` are bound first; the last `key` is not
        # `key=` is no read, but the def reads `key`; a def binds its name only after it
        (6, {"dict", "key", "inner"}),
        (7, {"step"}),  # a while loop's test is read at every pass
    ],
)
def test_a_pass_reads_only_what_it_reads_before_binding_it(number, exposed):
    from precision_lint.model.reads import exposed_reads

    assert exposed_reads(_loop(BOUND_BEFORE_READ, number)) == exposed


def test_a_loop_that_binds_what_it_reads_before_reading_it_runs_once(monkeypatch):
    module = cst.parse_module(BOUND_BEFORE_READ)
    loops = [s for s in module.body[1].body.body if type(s) in (cst.For, cst.While)]
    runs = _count(monkeypatch, ScopeInterpreter, "run")
    built(module, "m", ALL)
    # `out` and `n`, `chosen` and `scaled` are new after the first pass and read in it,
    # but each pass binds them before it reads them. The others read what the pass
    # before changed.
    assert [[id(body) for body, _ in runs].count(id(loop.body)) for loop in loops] == [1, 1, 2, 2, 2, 2, 2, 2]
    runs.clear()
    built(module, "m", NONE)
    assert [[id(body) for body, _ in runs].count(id(loop.body)) for loop in loops] == [2] * 8


def test_a_loop_whose_pass_makes_a_tally_of_what_it_rebinds_is_still_found(monkeypatch):
    from precision_lint import speedups
    from precision_lint.engine import check_source

    monkeypatch.setattr(speedups, "_OFF", frozenset())  # every speed-up on (built() sets it)
    lines = LATER_FACTS.splitlines()
    found = [lines[d.location.row - 1].strip() for d in check_source(LATER_FACTS, "m.py", frozenset({"PH006"}))]
    # each histogram in float32, in every shape of loop: a pass left out would have
    # missed the first three (the tally is made after the rebinding was read)
    assert found == [
        "counts.scatter_add_(0, idx, torch.ones_like(idx, dtype=torch.float))",
        "counts.index_add_(0, idx, torch.ones_like(idx, dtype=torch.float))",
        "counts.scatter_add_(0, idx, torch.ones_like(idx, dtype=torch.float))",
        "counts.scatter_add_(0, idx, torch.ones(10))",
    ]


def _replayed(monkeypatch, source: str) -> set[str]:
    replayed = _count(monkeypatch, semantic._ModelBuilder, "_replay")
    built(cst.parse_module(source), "m", ALL)
    names = {method.name for method, _ in replayed}
    replayed.clear()
    built(cst.parse_module(source), "m", NONE)
    assert replayed == []  # the switch turns it off
    return names


def test_a_method_that_reads_only_what_the_first_pass_bound_alike_is_replayed(monkeypatch):
    names = _replayed(monkeypatch, STATEFUL)
    # report reads self.total and self.seen, bound by __init__ before report first
    # ran (late's rebinding joins to what was there); __init__ first ran on no state
    assert "report" in names and "late" in names
    assert "__init__" not in names


def test_a_method_runs_again_where_a_later_one_changed_what_it_reads(monkeypatch):
    source = STATEFUL.replace("self.total = self.total + 1.0", "self.total = torch.zeros(1, dtype=torch.float16)")
    assert "report" not in _replayed(monkeypatch, source)  # self.total may now be float16 too


def test_a_method_runs_again_where_a_creation_changed_after_it_started(monkeypatch):
    # forward's first run asked about count_into, whose run made self.hist a tally
    # (counted into with ones): a creation forward may have seen before it changed
    assert "forward" not in _replayed(monkeypatch, STATEFUL)
    assert "forward" in _replayed(monkeypatch, STATEFUL.replace("torch.ones_like(idx, dtype=torch.float)", "idx"))


@pytest.mark.parametrize("base", [cst.BaseExpression, cst.BaseStatement, cst.BaseSmallStatement, cst.BaseSuite, cst.CSTNode])
def test_node_classes_found_by_their_bases_are_those_issubclass_finds(base):
    # concrete_types reads each class's MRO instead of asking the ABCs (their subclass
    # hooks took 20 ms of each process's start): the same classes while libcst
    # registers no virtual subclasses
    from precision_lint.model.walk import _NODE_TYPES, concrete_types

    assert concrete_types(base) == frozenset(kind for kind in _NODE_TYPES if issubclass(kind, base))
    assert concrete_types(base)
