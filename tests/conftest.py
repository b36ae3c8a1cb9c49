import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent

# A float32 accumulator of counts: PH001 with a safe fix.
HAZARD = "import torch\nacc = torch.zeros(1)\nfor x in xs:\n    acc += (x == 0).sum()\nprint(acc.item())\n"
HAZARD_FIXED = HAZARD.replace("torch.zeros(1)", "torch.zeros(1, dtype=torch.int64)")
# The accumulator is returned: the fix is unsafe, plain --fix leaves it alone.
UNSAFE = "import torch\ndef f(xs):\n    acc = torch.zeros(1)\n    for x in xs:\n        acc += (x == 0).sum()\n    return acc\n"

# A module's state: bound in __init__ and read in report (replayed); forward counts
# in a loop and asks about count_into, whose run makes self.hist a tally after it
# was stored (a creation changed: forward runs again); late rebinds self.total.
STATEFUL = """import torch


class Counter(torch.nn.Module):
    def __init__(self, n):
        super().__init__()
        self.register_buffer("seen", torch.zeros(n))
        self.total = torch.zeros(1)
        self.hist = torch.zeros(n)

    def forward(self, xs, idx):
        for x in xs:
            self.total += (x == 0).sum()
            self.count_into(idx)
        return self.report()

    def count_into(self, idx):
        kept = self.hist
        self.last = kept
        self.hist.index_add_(0, idx, torch.ones_like(idx, dtype=torch.float))

    def report(self):
        out = {"total": self.total.item(), "n": len(self.seen)}
        for key in out:
            print(key)
        return out

    def late(self):
        self.total = self.total + 1.0
"""


@pytest.fixture(scope="session")
def repo_root() -> Path:
    return REPO


def run_cli(*args: str, cwd: Path | None = None, stdin: str | None = None):
    """Run the installed console entry point in a child process."""
    import subprocess

    return subprocess.run(
        [sys.executable, "-m", "precision_lint", *args],
        cwd=cwd,
        input=stdin,
        capture_output=True,
        text=True,
        timeout=120,
    )


def run_patched_cli(patch: str, *args: str, cwd: Path):
    """The CLI in a child process after `patch` ran in it (its worker processes are
    forked from it and share the patch): how a crash or a failed write is made on
    purpose."""
    import subprocess
    import textwrap

    script = f"import sys\n{textwrap.dedent(patch)}\nfrom precision_lint.cli import main\nsys.exit(main({list(args)!r}))\n"
    return subprocess.run([sys.executable, "-c", script], cwd=cwd, capture_output=True, text=True, timeout=120)
