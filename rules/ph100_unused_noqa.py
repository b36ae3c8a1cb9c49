"""PH100 unused-noqa."""
from __future__ import annotations

from typing import Iterable

from precision_lint.diagnostics import Applicability, Diagnostic, Edit, Fix, Location, Severity
from precision_lint.rule import FixAvailability, Invalid, Rule
from precision_lint.source import LineIndex
from precision_lint.suppression import Noqa, directive_text


class UnusedNoqa(Rule):
    """
    ## What it does
    Checks for `# noqa: PHxxx` directives that suppress nothing: the line has no
    finding of that code (any more), or the rule is not enabled.

    Codes of other tools (`# noqa: E501`) and bare `# noqa` comments are left alone.
    This rule is off by default; turn it on with `--extend-select PH100`.

    ## Why is this bad?
    A stale suppression hides the next real hazard on that line. After
    `--add-noqa` adopted the tool on a legacy codebase, this rule shows which
    suppressions the fixes made obsolete.

    ## Example
    ```python
    n = torch.zeros(1, dtype=torch.int64)  # noqa: PH001
    ```

    Use instead:
    ```python
    n = torch.zeros(1, dtype=torch.int64)
    ```

    ## Fix safety
    The fix removes the unused codes, or the whole comment when no code is left. It
    is safe: a directive that suppresses nothing changes no result.
    """

    code = "PH100"
    name = "unused-noqa"
    summary = "Unused `noqa` directive"
    fix_availability = FixAvailability.ALWAYS
    default_severity = Severity.WARNING
    checks_suppressions = True
    example_codes = ("PH001",)

    VALID = [
        # a used suppression
        "import torch\nacc = torch.zeros(1)  # noqa: PH001\nfor x in xs:\n    acc += (x == 0).sum()\nprint(acc)\n",
        # other tools' codes and bare noqa are not ours to judge
        "import torch\nx = torch.zeros(1)  # noqa: E501\ny = 1  # noqa\n",
        # a `# noqa` inside a string is not a directive
        "import torch\nMSG = 'write # noqa: PH001 to silence it'\n",
    ]
    INVALID = [
        Invalid(
            "import torch\nn = torch.zeros(1, dtype=torch.int64)  # noqa: PH001\n",
            fixed="import torch\nn = torch.zeros(1, dtype=torch.int64)\n",
            applicability=Applicability.SAFE,
        ),
        Invalid(
            "import torch\nn = torch.zeros(1, dtype=torch.int64)  # noqa: E501, PH001\n",
            fixed="import torch\nn = torch.zeros(1, dtype=torch.int64)  # noqa: E501\n",
            applicability=Applicability.SAFE,
        ),
        # text after the directive stays a comment
        Invalid(
            "import torch\nn = torch.zeros(1, dtype=torch.int64)  # noqa: PH001 counts are small\n",
            fixed="import torch\nn = torch.zeros(1, dtype=torch.int64)  # counts are small\n",
            applicability=Applicability.SAFE,
        ),
    ]

    def check(self, model) -> Iterable:
        return ()  # works on suppressions, see check_suppressions

    @classmethod
    def check_suppressions(
        cls, source: str, filename: str, directives: dict[int, Noqa], used: dict[int, set[str]]
    ) -> list[Diagnostic]:
        """`used`: row -> the codes whose findings a directive on that row suppressed."""
        index: LineIndex | None = None  # made for the first unused directive: most files have none
        diagnostics = []
        for row, directive in directives.items():
            unused = [code for code in directive.ours() if code not in used.get(row, set())]
            if not unused:
                continue
            index = index or LineIndex(source)
            kept = tuple(code for code in directive.codes or () if code not in unused)
            line = index.line(row)
            start, end = directive.start, directive.end
            if kept:
                replacement = directive_text(kept)
            elif directive.trailing_text:
                replacement = "#"  # keep the rest of the comment a comment
            else:
                replacement = ""
                start = len(line[:start].rstrip())  # drop the spaces before the comment too
            location = Location(row, directive.start + 1)
            end_location = Location(row, directive.end + 1)
            edit = Edit(replacement, Location(row, start + 1), Location(row, end + 1))
            diagnostics.append(
                Diagnostic(
                    code=cls.code,
                    name=cls.name,
                    message=f"Unused `noqa` directive (unused: {', '.join(unused)})",
                    severity=Severity.WARNING,
                    filename=filename,
                    location=location,
                    end_location=end_location,
                    fix=Fix(Applicability.SAFE, "Remove unused `noqa` codes", (edit,)),
                )
            )
        return diagnostics
