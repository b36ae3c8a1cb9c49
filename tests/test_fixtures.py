"""Fixture files in real-world shapes (written for this project): each line marked
`# expect: CODE` is flagged and no other; `NAME.fixed.py` is the file after
`--fix --unsafe-fixes`, which re-parses, converges and is idempotent."""
import re
from pathlib import Path

import libcst as cst
import pytest

from precision_lint.engine import check_source
from precision_lint.fixer import fix_source
from precision_lint.registry import all_rules

FIXTURES = Path(__file__).parent / "fixtures"
ALL_CODES = frozenset(rule.code for rule in all_rules())
CASES = sorted(p for p in FIXTURES.glob("*/*.py") if not p.name.endswith(".fixed.py"))
EXPECT = re.compile(r"#\s*expect:\s*(?P<codes>[A-Z0-9, ]+)")


def _expected(source: str) -> set[tuple[int, str]]:
    expected = set()
    for row, line in enumerate(source.splitlines(), start=1):
        match = EXPECT.search(line)
        if match:
            expected |= {(row, code.strip()) for code in match.group("codes").split(",")}
    return expected


@pytest.mark.parametrize("path", CASES, ids=lambda p: f"{p.parent.name}/{p.stem}")
def test_fixture_findings(path: Path):
    source = path.read_text()
    found = {(d.location.row, d.code) for d in check_source(source, str(path), ALL_CODES)}
    assert found == _expected(source)


@pytest.mark.parametrize("path", CASES, ids=lambda p: f"{p.parent.name}/{p.stem}")
def test_fixture_fix(path: Path):
    source = path.read_text()
    outcome = fix_source(source, str(path), ALL_CODES, unsafe=True)
    assert outcome.error is None
    expected_path = path.with_name(f"{path.stem}.fixed.py")
    if not _expected(source) or all(d.fix is None for d in check_source(source, str(path), ALL_CODES)):
        assert outcome.source == source and not expected_path.exists()
        return
    assert outcome.source == expected_path.read_text()
    cst.parse_module(outcome.source)
    compile(outcome.source, str(expected_path), "exec")
    again = fix_source(outcome.source, str(path), ALL_CODES, unsafe=True)
    assert again.source == outcome.source and again.fixed == []
