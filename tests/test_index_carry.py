"""A round's project index takes over the round before's resolved names and answers
where they cannot differ (project/carry.py): every answer it gives must be the one a
fresh index gives, and it must take over what it can."""
import copy
from dataclasses import replace

import pytest

from precision_lint.model.values import Kind, Value
from precision_lint.project.index import ProjectIndex
from precision_lint.project.portable import value_to_data

COUNT = value_to_data(Value.py_int(count=True))
FLOAT = value_to_data(Value(Kind.PY_FLOAT))
VIA_A = value_to_data(replace(Value.py_int(count=True), via="pkg.a"))
VIA_B = value_to_data(replace(Value.py_int(count=True), via="pkg.b"))


def _module(name, functions=None, classes=None, exports=None, calls=None, opaque=()):
    return {
        "module": name, "path": name.replace(".", "/") + ".py", "functions": functions or {},
        "classes": classes or {}, "exports": exports or {}, "calls": calls or {}, "opaque_calls": list(opaque),
        "evidence": [], "star_imports": [],
    }  # fmt: skip


def _function(params, returns=None, defaults=(), receives_self=False):
    return {
        "params": params, "positional": len(params), "self": receives_self, "returns": returns,
        "defaults": [list(d) for d in defaults], "where": None,
    }  # fmt: skip


def _project():
    return {
        "pkg": _module("pkg", exports={"count": "pkg.core.count", "Meter": "pkg.meters.Meter", "Base": "pkg.base.Base"}),
        "pkg.core": _module("pkg.core", functions={
            "pkg.core.count": _function(["x"], COUNT),
            "pkg.core.scale": _function(["n", "factor"], FLOAT),
            "pkg.core.other": _function([], None),
        }),
        "pkg.meters": _module("pkg.meters", classes={"pkg.meters.Meter": ["pkg.Base"]}, functions={
            "pkg.meters.Meter.total": _function(["self"], COUNT, receives_self=True),
        }),
        "pkg.base": _module("pkg.base", classes={"pkg.base.Base": []}),
        "pkg.train": _module("pkg.train", calls={
            "pkg.count": [[[VIA_A], {}]], "pkg.core.count": [[[VIA_B], {}]], "pkg.core.scale": [[[COUNT], {}]],
        }),
        "pkg.all": {**_module("pkg.all"), "star_imports": ["pkg.core"]},
        "pkg.eval": _module("pkg.eval", calls={
            "pkg.core.scale": [[[COUNT], {}]],  # `factor` defaulted
            "pkg.late.f": [[[COUNT], {}]],  # a module read only for its imports so far
        }),
        "pkg.late": {**_module("pkg.late"), "modeled": False},
    }  # fmt: skip


KEYS = [
    f"{kind}:{name}"
    for kind in "fcp"
    for name in (
        "pkg.count", "pkg.core.count", "pkg.core.scale", "pkg.core.other", "pkg.Meter", "pkg.meters.Meter",
        "pkg.meters.Meter.total", "pkg.base.Base", "pkg.Base", "pkg.all.count", "pkg.core.fresh", "pkg.missing", "elsewhere.f",
        "pkg.late.f",
    )
]  # fmt: skip


def _own(modules, name):
    """A checked-again module's summary: a new object (the others stay the same)."""
    modules[name] = copy.deepcopy(modules[name])
    return modules[name]


def _changed_returns(modules):
    _own(modules, "pkg.core")["functions"]["pkg.core.count"]["returns"] = FLOAT


def _changed_method_returns(modules):
    _own(modules, "pkg.meters")["functions"]["pkg.meters.Meter.total"]["returns"] = None


def _changed_call_site(modules):
    _own(modules, "pkg.train")["calls"]["pkg.count"] = [[[FLOAT], {}]]


def _dropped_call_site(modules):
    del _own(modules, "pkg.eval")["calls"]["pkg.core.scale"]


def _added_opaque_call(modules):
    _own(modules, "pkg.eval")["opaque_calls"] = ["pkg.count"]


def _reordered_calls(modules):
    # the same sites under two spellings, met in the other order: a join keeps the
    # first site's `via`, so what the function is passed may read differently
    train = _own(modules, "pkg.train")
    train["calls"] = {"pkg.core.count": [[[VIA_B], {}]], "pkg.count": [[[VIA_A], {}]], **train["calls"]}


def _changed_default(modules):
    _own(modules, "pkg.core")["functions"]["pkg.core.scale"]["defaults"] = [["factor", COUNT]]


def _nothing_but_copies(modules):
    for name in modules:  # every summary a new object with the same content
        _own(modules, name)


def _callee_modeled(modules):
    # a module that was read only for its imports is modeled (a callee): the unchanged
    # module that calls it now passes it something
    late = _own(modules, "pkg.late")
    late["functions"]["pkg.late.f"] = _function(["n"])
    late["modeled"] = True


def _changed_export(modules):
    _own(modules, "pkg")["exports"]["count"] = "pkg.core.other"


def _changed_base(modules):
    _own(modules, "pkg.meters")["classes"]["pkg.meters.Meter"] = []


def _added_function(modules):
    _own(modules, "pkg.core")["functions"]["pkg.core.fresh"] = _function([], COUNT)


def _removed_base_class(modules):
    # Meter's base, written `pkg.Base`, no longer resolves to a class: Meter's answer
    # changes though its own module did not
    del _own(modules, "pkg.base")["classes"]["pkg.base.Base"]


def _dropped_star_import(modules):
    _own(modules, "pkg.all")["star_imports"] = []


def _added_module(modules):
    modules["pkg.extra"] = _module("pkg.extra", calls={"pkg.core.scale": [[[FLOAT], {}]]})


# a module defining new names (a callee modeled for the first time) or new bases: the
# names asked about resolve where they did, so what no changed summary feeds is kept
CARRIED = [_changed_returns, _changed_method_returns, _changed_call_site, _dropped_call_site,
           _added_opaque_call, _reordered_calls, _changed_default, _nothing_but_copies,
           _changed_base, _added_function, _removed_base_class, _callee_modeled]  # fmt: skip
NOT_CARRIED = [_changed_export, _dropped_star_import, _added_module]


def _next_round(change):
    """(the round before's index, every key asked; the next round's summaries)"""
    before = _project()
    previous = ProjectIndex(before.values())
    for key in KEYS:
        previous.fingerprint(key)
    after = dict(before)
    change(after)
    return previous, list(after.values())


@pytest.mark.parametrize("change", CARRIED + NOT_CARRIED, ids=lambda change: change.__name__.lstrip("_"))
def test_every_answer_is_a_fresh_index_answer(change):
    previous, summaries = _next_round(change)
    carried, fresh = ProjectIndex(summaries, previous=previous), ProjectIndex(summaries)
    for key in KEYS:
        assert carried.answer(key) == fresh.answer(key), key
        assert carried.fingerprint(key) == fresh.fingerprint(key), key


@pytest.mark.parametrize("change", CARRIED, ids=lambda change: change.__name__.lstrip("_"))
def test_an_answer_no_changed_summary_feeds_is_taken_over(change):
    previous, summaries = _next_round(change)
    carried = ProjectIndex(summaries, previous=previous)
    assert "f:elsewhere.f" in carried._answers and "p:pkg.missing" in carried._answers
    if change not in (_nothing_but_copies, _removed_base_class):  # pkg.base's summary is the same object
        assert carried._answers["c:pkg.base.Base"] is previous._answers["c:pkg.base.Base"]


def test_what_a_change_feeds_is_asked_again():
    previous, summaries = _next_round(_changed_returns)
    carried = ProjectIndex(summaries, previous=previous)
    assert "f:pkg.count" not in carried._answers and "f:pkg.core.other" not in carried._answers
    previous, summaries = _next_round(_changed_call_site)
    carried = ProjectIndex(summaries, previous=previous)
    assert "p:pkg.core.count" not in carried._answers and "p:pkg.count" not in carried._answers
    assert "p:pkg.core.scale" in carried._answers  # its call sites are the same


def test_a_new_function_and_a_changed_base_are_asked_again():
    previous, summaries = _next_round(_added_function)
    carried = ProjectIndex(summaries, previous=previous)
    assert previous.answer("f:pkg.core.fresh") is None and carried.answer("f:pkg.core.fresh") is not None
    assert "p:pkg.core.fresh" not in carried._answers  # it has parameters to be passed now
    assert "p:pkg.base.Base" in carried._answers
    previous, summaries = _next_round(_removed_base_class)
    carried = ProjectIndex(summaries, previous=previous)
    assert "c:pkg.meters.Meter" not in carried._answers and "c:pkg.Meter" not in carried._answers
    assert carried.answer("c:pkg.Meter") != previous.answer("c:pkg.Meter")  # the base is as written now


@pytest.mark.parametrize("change", NOT_CARRIED, ids=lambda change: change.__name__.lstrip("_"))
def test_nothing_is_taken_over_where_a_name_may_resolve_elsewhere(change):
    previous, summaries = _next_round(change)
    assert not ProjectIndex(summaries, previous=previous)._answers


def test_an_unchanged_modules_bound_call_sites_are_taken_over():
    previous, summaries = _next_round(_changed_call_site)
    carried = ProjectIndex(summaries, previous=previous)
    carried.answer("p:pkg.core.count")  # binds every call site
    assert carried._bound["pkg.eval"] is previous._bound["pkg.eval"]
    assert carried._bound["pkg.train"] is not previous._bound["pkg.train"]  # its sites changed


def test_a_call_site_is_bound_again_where_its_callee_is_new():
    previous, summaries = _next_round(_callee_modeled)
    carried = ProjectIndex(summaries, previous=previous)
    assert previous.param_values("pkg.late.f") == {}
    assert carried.param_values("pkg.late.f") == {"n": Value.py_int(count=True)}
    assert carried._bound["pkg.eval"] is not previous._bound["pkg.eval"]
    assert carried._bound["pkg.train"] is previous._bound["pkg.train"]


def test_a_name_resolves_anew_where_a_module_its_resolution_read_changed():
    # `pkg.all.fresh` fell back to `pkg.all` (its star import found nothing); once
    # `pkg.core` defines `fresh`, it resolves there: nothing is taken over
    before = _project()
    previous = ProjectIndex(before.values())
    for key in [*KEYS, "f:pkg.all.fresh"]:
        previous.fingerprint(key)
    after = dict(before)
    _added_function(after)
    carried, fresh = ProjectIndex(after.values(), previous=previous), ProjectIndex(after.values())
    assert not carried._answers
    assert carried.answer("f:pkg.all.fresh") == fresh.answer("f:pkg.all.fresh") is not None
