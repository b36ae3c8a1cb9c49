import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent


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
