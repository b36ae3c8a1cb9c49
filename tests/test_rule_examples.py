"""Every rule's VALID and INVALID examples are tests (Fixit style), and every fix
re-parses, converges and is idempotent (Ruff's harness checks)."""
import libcst as cst
import pytest

from precision_lint.engine import check_source
from precision_lint.fixer import fix_source
from precision_lint.registry import all_rules
from precision_lint.rule import FixAvailability

VALID = [(rule, index, code) for rule in all_rules() for index, code in enumerate(rule.VALID)]
INVALID = [(rule, index, case) for rule in all_rules() for index, case in enumerate(rule.INVALID)]


def _ids(params):
    return [f"{rule.code}-{index}" for rule, index, _ in params]


def _codes(rule) -> frozenset[str]:
    return frozenset({rule.code, *rule.example_codes})


def _own(diagnostics, rule):
    return [d for d in diagnostics if d.code == rule.code]


@pytest.mark.parametrize("rule, index, code", VALID, ids=_ids(VALID))
def test_valid_example_is_quiet(rule, index, code):
    diagnostics = check_source(code, "example.py", _codes(rule))
    assert _own(diagnostics, rule) == []


@pytest.mark.parametrize("rule, index, case", INVALID, ids=_ids(INVALID))
def test_invalid_example_is_flagged_and_fixed(rule, index, case):
    diagnostics = _own(check_source(case.code, "example.py", _codes(rule)), rule)
    assert [d.code for d in diagnostics] == [rule.code]
    if case.severity is not None:
        assert diagnostics[0].severity is case.severity, diagnostics[0].message
    fix = diagnostics[0].fix
    if case.fixed is None:
        assert fix is None
        assert diagnostics[0].note and diagnostics[0].note.startswith("No fix")
        return
    assert fix is not None
    assert fix.applicability is case.applicability
    outcome = fix_source(case.code, "example.py", _codes(rule), unsafe=True)
    assert outcome.error is None
    assert outcome.source == case.fixed
    cst.parse_module(outcome.source)  # re-parses
    compile(outcome.source, "<fixed>", "exec")  # and Python compiles it
    again = fix_source(outcome.source, "example.py", _codes(rule), unsafe=True)
    assert again.source == outcome.source and again.fixed == []  # idempotent
    assert _own(again.remaining, rule) == []  # the hazard is gone


@pytest.mark.parametrize("rule", all_rules(), ids=lambda r: r.code)
def test_rule_metadata(rule):
    assert rule.code.startswith("PH") and len(rule.code) == 5
    assert rule.name == rule.name.lower() and " " not in rule.name
    doc = rule.documentation()
    for section in ("## What it does", "## Why is this bad?", "## Example", "Use instead:", "## Fix safety"):
        assert section in doc
    has_fixes = any(case.fixed is not None for case in rule.INVALID)
    assert has_fixes == (rule.fix_availability is not FixAvailability.NONE)
    assert rule.VALID and rule.INVALID
