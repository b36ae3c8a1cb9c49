"""The stale check between rounds (project/staleness.py): a report found fresh is
weighed again only through a question some index since did not take over, and every
report a full check finds stale is found."""
from precision_lint.project.index import ProjectIndex
from precision_lint.project.staleness import StaleCheck, is_stale
from precision_lint.runner import FileReport


class Index:
    """An index's two faces the check reads: fingerprints, and what it took over."""

    def __init__(self, fingerprints: dict[str, str], carried: frozenset[str] | None) -> None:
        self.fingerprints = fingerprints
        self.carried_fingerprints = carried
        self.weighed: list[str] = []

    def fingerprint(self, key: str) -> str:
        self.weighed.append(key)
        return self.fingerprints[key]


def _report(path: str, **dependencies: str) -> FileReport:
    return FileReport(path, dependencies={f"f:{key}": value for key, value in dependencies.items()})


def _checked(check: StaleCheck, reports: list[FileReport], index: Index) -> list[int]:
    check.follow(index)
    return check.stale(reports, index)


def test_the_first_check_weighs_every_report():
    reports = [_report("a.py", x="1"), _report("b.py", y="1")]
    index = Index({"f:x": "1", "f:y": "2"}, None)
    assert _checked(StaleCheck(), reports, index) == [1]
    assert sorted(index.weighed) == ["f:x", "f:y"]


def test_a_fresh_report_is_weighed_again_only_through_a_question_not_taken_over():
    check = StaleCheck()
    reports = [_report("a.py", x="1"), _report("b.py", y="1"), _report("c.py", x="1", z="1")]
    assert _checked(check, reports, Index({"f:x": "1", "f:y": "1", "f:z": "1"}, None)) == []
    # the next index took over x and y: only c.py, which asked z, is weighed
    later = Index({"f:x": "1", "f:y": "1", "f:z": "2"}, frozenset({"f:x", "f:y"}))
    assert _checked(check, reports, later) == [2]
    assert "f:y" not in later.weighed and "f:z" in later.weighed


def test_a_report_checked_again_is_weighed_and_a_stale_one_until_it_is():
    check = StaleCheck()
    reports = [_report("a.py", x="1"), _report("b.py", y="1")]
    assert _checked(check, reports, Index({"f:x": "1", "f:y": "2"}, None)) == [1]
    everything = frozenset({"f:x", "f:y"})
    # b.py is stale and not yet checked again: weighed again, still stale
    assert _checked(check, reports, Index({"f:x": "1", "f:y": "2"}, everything)) == [1]
    reports[1] = _report("b.py", y="2")  # checked again with the new answer
    again = Index({"f:x": "1", "f:y": "2"}, everything)
    assert _checked(check, reports, again) == [] and again.weighed == ["f:y"]


def test_every_index_since_the_last_check_counts_and_one_that_took_over_nothing_weighs_all():
    check = StaleCheck()
    reports = [_report("a.py", x="1"), _report("b.py", y="1")]
    assert _checked(check, reports, Index({"f:x": "1", "f:y": "1"}, None)) == []
    check.follow(Index({}, frozenset({"f:y"})))  # an index between: it did not take over x
    last = Index({"f:x": "2", "f:y": "1"}, frozenset({"f:x", "f:y"}))
    assert _checked(check, reports, last) == [0] and last.weighed == ["f:x"]
    check.follow(Index({}, None))
    alone = Index({"f:x": "2", "f:y": "3"}, frozenset({"f:x", "f:y"}))
    assert _checked(check, reports, alone) == [0, 1]
    # the same index asked again, none built since: only what changed is weighed
    reports[0] = _report("a.py", x="2")
    assert check.stale(reports, alone) == [1] and alone.weighed[-2:] == ["f:x", "f:y"]


def test_an_index_names_the_fingerprints_it_took_over_and_they_are_its_own():
    summary = {
        "module": "m", "path": "m.py", "functions": {"m.f": {"params": [], "positional": 0, "self": False, "returns": None, "defaults": [], "where": None}},
        "classes": {}, "exports": {}, "calls": {}, "opaque_calls": [], "evidence": [], "star_imports": [],
    }  # fmt: skip
    first = ProjectIndex([summary])
    assert first.carried_fingerprints is None
    report = _report("user.py", **{"m.f": first.fingerprint("f:m.f")})
    second = ProjectIndex([summary], previous=first)
    assert second.carried_fingerprints == frozenset({"f:m.f"})
    assert not is_stale(report, second) and second.fingerprint("f:m.f") == first.fingerprint("f:m.f")


def test_the_callees_search_looks_up_each_question_once_while_names_resolve_alike():
    from precision_lint.project.analysis import _callees
    from precision_lint.runner import Job

    class Names:
        def __init__(self, carried):
            self.carried_fingerprints = carried
            self.looked_up: list[str] = []

        def unmodeled_path(self, name):
            self.looked_up.append(name)
            return {"helper.f": "helper.py", "other.g": "other.py"}.get(name)

    template = Job("a.py", frozenset({"PH001"}))
    examined: set[str] = set()
    first = Names(None)
    reports = [_report("a.py", **{"helper.f": "-", "torch.x": "-"})]
    assert [job.path for job in _callees(reports, first, set(), template, examined)] == ["helper.py"]
    assert first.looked_up == ["helper.f", "torch.x"]
    # helper.py is modeled now; a new report asks about other.g as well
    reports.append(_report("b.py", **{"helper.f": "-", "other.g": "-"}))
    carried = Names(frozenset())
    assert [job.path for job in _callees(reports, carried, {"helper.py"}, template, examined)] == ["other.py"]
    assert carried.looked_up == ["other.g"]
    # an index that resolves anew: every question is looked up again
    anew = Names(None)
    assert _callees(reports, anew, {"helper.py", "other.py"}, template, examined) == []
    assert sorted(anew.looked_up) == ["helper.f", "other.g", "torch.x"]


def test_a_file_modeled_for_its_summary_is_modeled_when_checked_again():
    """A file the prefilter skips that the first round modeled because others import it
    (Job.imported, set on the first round's own copy of the job) keeps its model when
    it is checked again: read only for its imports, its summary would lose what it
    defines (a cold run then ended on answers the next run did not give)."""
    from precision_lint.project.analysis import _checked_again
    from precision_lint.runner import Job

    class Slices:
        def slice_for(self, keys):
            return {"answers": dict.fromkeys(keys), "evidence": []}

    job = Job("helper.py", frozenset({"PH001"}))
    modeled = FileReport("helper.py", summary={"module": "helper", "functions": {}}, dependencies={"f:x.y": "-"})
    read_for_imports = FileReport("helper.py", summary={"module": "helper", "functions": {}, "modeled": False})
    again = _checked_again(job, modeled, Slices())
    assert again.imported and again.project == {"answers": {"f:x.y": None}, "evidence": []} and not again.concrete
    assert not _checked_again(job, read_for_imports, Slices()).imported
    assert not _checked_again(Job("helper.py", frozenset({"PH001"}), mode="callee"), modeled, Slices()).imported
