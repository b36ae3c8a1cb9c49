import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent

# A float32 accumulator of counts: PH001 with a safe fix.
HAZARD = "import torch\nacc = torch.zeros(1)\nfor x in xs:\n    acc += (x == 0).sum()\nprint(acc.item())\n"
HAZARD_FIXED = HAZARD.replace("torch.zeros(1)", "torch.zeros(1, dtype=torch.int64)")
# The accumulator is returned: the fix is unsafe, plain --fix leaves it alone.
UNSAFE = "import torch\ndef f(xs):\n    acc = torch.zeros(1)\n    for x in xs:\n        acc += (x == 0).sum()\n    return acc\n"


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
