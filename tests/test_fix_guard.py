"""The fix guard (issue 11, item 1): a fix that changes the module outside the statements
its edits touch is refused and reported as an internal error naming its rule; one line
model (\\n, \\r\\n, \\r) for positions, edits, the noqa writer and diffs."""
from __future__ import annotations

from dataclasses import replace

import libcst as cst
import pytest

from conftest import HAZARD, HAZARD_FIXED
from precision_lint import fixer
from precision_lint.diagnostics import Applicability, Diagnostic, Edit, Fix, Location, Severity
from precision_lint.fix_guard import check_edits
from precision_lint.fixer import fix_source
from precision_lint.noqa_writer import add_noqa
from precision_lint.runner import unified_diff
from precision_lint.source import split_lines_keeping_ends

PH001 = frozenset({"PH001"})


def guard(source: str, pieces: list[tuple[int, int, str]]) -> str | None:
    new = "".join(_splice(source, pieces))
    return check_edits(source, cst.parse_module(source), cst.parse_module(new), pieces)


def _splice(source, pieces):
    position = 0
    for start, end, content in sorted(pieces):
        yield source[position:start] + content
        position = end
    yield source[position:]


def test_a_span_that_cuts_statements_is_refused():
    # F1's shape: the span of a noqa removal runs from the comment over the next lines
    source = "import torch\nn = 1  # noqa: PH001\nm = 2\nprint(n, m)\n"
    start = source.index("  # noqa")
    end = source.index("print")
    assert guard(source, [(start, end, "\n")]) == "the Assign statement on line 3 is gone or changed"


def test_an_edit_that_swallows_the_next_lines_into_a_string_is_refused():
    source = "x = 1\ny = 2\nz = 3\n"
    one, three = source.index("1"), source.index("3")
    problem = guard(source, [(one, one + 1, '"""'), (three, three + 1, '"""')])
    assert problem == "the Assign statement on line 2 is gone or changed although no edit touches it"


def test_a_touched_statement_may_change_but_not_its_kind_or_place():
    source = "x = (1,\n     2)\ny = 3\n"
    end_of_tuple = source.index(")")
    assert guard(source, [(end_of_tuple, end_of_tuple + 1, ",\n     3)")]) is None
    assert guard(source, [(source.index("3"), source.index("3") + 1, "4")]) is None
    # wrapping it in an `if` moves it one level down: refused
    assert guard(source, [(0, 1, "if x:\n    x")]) == "the Assign statement on line 1 is gone or changed"


def test_the_int64_fix_an_added_import_and_a_removed_comment_pass():
    start = HAZARD.index("torch.zeros(1)") + len("torch.zeros(1")
    assert guard(HAZARD, [(start, start, ", dtype=torch.int64")]) is None
    assert guard(HAZARD, [(0, 0, "import torch\n")]) is None
    source = "import torch\nn = torch.zeros(1)  # noqa: PH001\n"
    assert guard(source, [(source.index("  #"), source.index("\n", 20), "")]) is None


def test_a_statement_added_by_a_fix_is_refused_unless_it_is_an_import():
    assert guard("x = 1\n", [(0, 0, "y = 2\n")]) == "it adds a statement (Assign)"
    assert guard("x = 1\n", [(6, 6, "y = 2\n")]) == "it adds a statement (Assign)"
    assert guard("x = 1\n", [(6, 6, "import os\n")]) is None


def with_extra_finding(monkeypatch, extra):
    """The fixer's checks, plus the findings `extra(source, filename)` makes: how a
    rule with a broken fix is made on purpose."""
    real_first, real_next = fixer.check_module, fixer.check_parsed

    def first(source, filename, codes, *args, **kwargs):
        result = real_first(source, filename, codes, *args, **kwargs)
        return replace(result, diagnostics=result.diagnostics + extra(source, filename))

    def next_round(source, module, filename, codes, *args, **kwargs):
        result = real_next(source, module, filename, codes, *args, **kwargs)
        return replace(result, diagnostics=result.diagnostics + extra(source, filename))

    monkeypatch.setattr(fixer, "check_module", first)
    monkeypatch.setattr(fixer, "check_parsed", next_round)


def cut_after_it(source, filename):
    """A PH001 finding whose fix cuts the line after it: the bug F1 had, on purpose."""
    if "m = 2" not in source:
        return []
    row = source[: source.index("m = 2")].count("\n")
    bad = Fix(Applicability.SAFE, "Remove it", (Edit("", Location(row, 1), Location(row + 2, 1)),))
    return [Diagnostic("PH001", "float-count-accumulator", "bad", Severity.ERROR, filename, Location(row, 1), Location(row, 2), fix=bad)]


def test_a_refused_fix_is_an_internal_error_naming_its_rule_and_the_rest_still_apply(monkeypatch):
    with_extra_finding(monkeypatch, cut_after_it)
    source = HAZARD + "n = 1\nm = 2\nprint(n, m)\n"
    outcome = fix_source(source, "a.py", PH001)
    assert outcome.source == HAZARD_FIXED + "n = 1\nm = 2\nprint(n, m)\n"  # the good fix applied, nothing lost
    (refusal,) = [d for d in outcome.remaining if d.code == "PH900"]
    assert refusal.message.startswith("Internal error in rule PH001 (float-count-accumulator): its fix was refused, it changes code outside its edits")
    assert "please report it" in refusal.note
    assert any(d.code == "PH001" and d.message == "bad" for d in outcome.remaining)  # reported unfixed
    assert outcome.error == refusal.message


def test_a_fix_that_does_not_parse_names_its_rule(monkeypatch):
    def opens_a_bracket(source, filename):
        broken = Fix(Applicability.SAFE, "Break it", (Edit("(", Location(1, 1), Location(1, 1)),))
        return [Diagnostic("PH006", "float-histogram", "x", Severity.ERROR, filename, Location(1, 1), Location(1, 2), fix=broken)]

    with_extra_finding(monkeypatch, opens_a_bracket)
    outcome = fix_source(HAZARD, "a.py", PH001)
    assert outcome.source == HAZARD_FIXED
    (refusal,) = [d for d in outcome.remaining if d.code == "PH900"]
    assert "rule PH006 (float-histogram)" in refusal.message and "does not parse" in refusal.message


def test_a_fix_on_a_line_that_starts_with_a_form_feed():
    # libcst drops that form feed from its code, so its columns are one short there
    source = HAZARD.replace("acc = torch.zeros(1)", "\x0cacc = torch.zeros(1)")
    outcome = fix_source(source, "a.py", PH001)
    assert outcome.error is None
    assert outcome.source == HAZARD_FIXED.replace("acc = torch", "\x0cacc = torch")


@pytest.mark.parametrize("newline", ["\n", "\r\n", "\r"], ids=["lf", "crlf", "cr"])
def test_add_noqa_writes_on_the_reported_line_in_every_line_model(newline):
    source = HAZARD.replace("\n", newline)
    finding = fix_source(source, "a.py", PH001).initial[0]
    text, count = add_noqa(source, [finding])
    assert count == 1
    assert text == source.replace("torch.zeros(1)", "torch.zeros(1)  # noqa: PH001")


def test_add_noqa_on_mixed_line_breaks():
    source = "import torch\r\nacc = torch.zeros(1)\rfor x in xs:\n    acc += (x == 0).sum()\r\nprint(acc)\n"
    finding = fix_source(source, "a.py", PH001).initial[0]
    text, count = add_noqa(source, [finding])
    assert (count, text) == (1, source.replace("torch.zeros(1)", "torch.zeros(1)  # noqa: PH001"))


def test_add_noqa_never_writes_inside_a_string():
    # the finding's line ends inside a string: a "comment" there would change the string
    source = 'import torch\nacc = torch.zeros(1); s = """\nmore"""\nfor x in xs:\n    acc += (x == 0).sum()\n'
    (finding,) = fix_source(source, "a.py", PH001).initial
    assert finding.location.row == 2
    assert add_noqa(source, [finding]) == (source, 0)


def test_diffs_count_lines_as_the_fixer_does():
    # a form feed and U+2028 inside a line are not line breaks (str.splitlines says they are)
    before = "x = '\u2028'\x0c\r" + HAZARD
    after = "x = '\u2028'\x0c\r" + HAZARD_FIXED
    diff = unified_diff(before, after, "a.py")
    lines = split_lines_keeping_ends(diff)
    assert "@@ -1,6 +1,6 @@\n" in lines
    assert " x = '\u2028'\x0c\r" in lines
