"""One line model everywhere: `\n`, `\r\n` and a lone `\r` end a line for the
suppressions, the noqa writer and the fixer alike (a fix must never cut code)."""
import pytest

from precision_lint.engine import check_source
from precision_lint.fixer import fix_source
from precision_lint.suppression import noqa_by_line

SELECTED = frozenset({"PH001", "PH100"})
BODY = ["import torch", "n = torch.zeros(1, dtype=torch.int64)  # noqa: PH001", "m = 1", "print(n, m)"]


@pytest.mark.parametrize("newline", ["\n", "\r\n", "\r"])
def test_unused_noqa_fix_removes_only_the_comment(newline):
    source = newline.join(BODY) + newline
    result = fix_source(source, "a.py", SELECTED)
    expected = newline.join([BODY[0], "n = torch.zeros(1, dtype=torch.int64)", *BODY[2:]]) + newline
    assert result.source == expected


@pytest.mark.parametrize("newline", ["\n", "\r\n", "\r"])
def test_noqa_rows_follow_every_line_break(newline):
    source = newline.join(["x = 1", "y = 2  # noqa: PH001", "z = 3  # noqa"]) + newline
    directives = noqa_by_line(source)
    assert sorted(directives) == [2, 3]
    assert directives[2].codes == ("PH001",) and directives[3].codes is None


def test_mixed_line_breaks_and_a_form_feed():
    source = "import torch\r\nacc = torch.zeros(1)\r\x0c\nfor x in xs:\n    acc += (x == 0).sum()  # noqa: PH001\rprint(acc)\n"
    found = [(d.code, d.location.row) for d in check_source(source, "a.py", SELECTED)]
    # the finding sits on the creation (row 2); the add's noqa on row 5 suppresses nothing
    assert found == [("PH001", 2), ("PH100", 5)]
