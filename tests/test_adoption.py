"""Changed-lines mode (--diff-base), --add-noqa and PH100 (unused noqa), end to end."""
import subprocess
from pathlib import Path

import pytest

from conftest import run_cli

OLD = "import torch\nacc = torch.zeros(1)\nfor x in xs:\n    acc += (x == 0).sum()\nprint(acc.item())\n"
NEW = "import torch\nn = torch.tensor(0.0)\nfor x in xs:\n    n += x.numel()\nprint(n.item())\n"


def git(cwd: Path, *args: str) -> None:
    subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True)


@pytest.fixture
def repo(tmp_path):
    git(tmp_path, "init", "-q")
    git(tmp_path, "config", "user.email", "test@example.com")
    git(tmp_path, "config", "user.name", "test")
    (tmp_path / "legacy.py").write_text(OLD)
    git(tmp_path, "add", ".")
    git(tmp_path, "commit", "-qm", "old hazard")
    git(tmp_path, "tag", "base")
    return tmp_path


def rows(stdout: str) -> list[str]:
    return [line.split(": PH")[0] for line in stdout.splitlines() if ": PH" in line]


def test_diff_base_reports_only_the_new_hazard(repo):
    (repo / "added.py").write_text(NEW)  # untracked: wholly new
    git(repo, "add", "added.py")
    git(repo, "commit", "-qm", "new hazard")
    everything = run_cli("check", "--no-cache", "--output-format", "concise", ".", cwd=repo)
    assert rows(everything.stdout) == ["added.py:2:5", "legacy.py:2:7"]
    changed = run_cli("check", "--no-cache", "--output-format", "concise", "--diff-base", "base", ".", cwd=repo)
    assert changed.returncode == 1
    assert rows(changed.stdout) == ["added.py:2:5"]


def test_diff_base_counts_an_edited_line_of_an_old_file(repo):
    # a new count added into the old accumulator: its related line is new
    (repo / "legacy.py").write_text(OLD.replace("print(acc.item())", "acc += len(xs)\nprint(acc.item())"))
    result = run_cli("check", "--no-cache", "--output-format", "concise", "--diff-base", "base", ".", cwd=repo)
    assert rows(result.stdout) == ["legacy.py:2:7"]
    # untouched legacy code stays quiet
    git(repo, "checkout", "--", "legacy.py")
    quiet = run_cli("check", "--no-cache", "--diff-base", "base", ".", cwd=repo)
    assert quiet.returncode == 0 and "All checks passed!" in quiet.stdout


def test_diff_base_errors_are_clear(repo, tmp_path_factory):
    bad_ref = run_cli("check", "--diff-base", "no-such-ref", ".", cwd=repo)
    assert bad_ref.returncode == 2 and "`no-such-ref` is not a commit" in bad_ref.stderr
    outside = tmp_path_factory.mktemp("not-a-repo")
    (outside / "a.py").write_text(OLD)
    no_repo = run_cli("check", "--diff-base", "HEAD", ".", cwd=outside)
    assert no_repo.returncode == 2 and "needs a git work tree" in no_repo.stderr


def test_add_noqa_then_only_new_hazards_fail(tmp_path):
    (tmp_path / "a.py").write_text(OLD.replace("acc = torch.zeros(1)", "acc = torch.zeros(1)  # noqa: E501"))
    (tmp_path / "b.py").write_text(NEW)
    added = run_cli("check", "--no-cache", "--add-noqa", ".", cwd=tmp_path)
    assert added.returncode == 0 and "Added 2 noqa directives." in added.stdout
    assert "acc = torch.zeros(1)  # noqa: E501, PH001\n" in (tmp_path / "a.py").read_text()
    assert "n = torch.tensor(0.0)  # noqa: PH001\n" in (tmp_path / "b.py").read_text()
    clean = run_cli("check", "--no-cache", ".", cwd=tmp_path)
    assert clean.returncode == 0
    (tmp_path / "c.py").write_text(NEW)
    new = run_cli("check", "--no-cache", "--output-format", "concise", ".", cwd=tmp_path)
    assert new.returncode == 1 and rows(new.stdout) == ["c.py:2:5"]


def test_unused_noqa_is_reported_only_when_selected_and_fixed(tmp_path):
    fixed_code = OLD.replace("torch.zeros(1)", "torch.zeros(1, dtype=torch.int64)  # noqa: PH001")
    (tmp_path / "a.py").write_text(fixed_code)
    default = run_cli("check", "--no-cache", ".", cwd=tmp_path)
    assert default.returncode == 0  # PH100 is off by default
    selected = run_cli("check", "--no-cache", "--extend-select", "PH100", "--output-format", "concise", ".", cwd=tmp_path)
    assert selected.returncode == 1
    assert "a.py:2:42: PH100 warning [*] Unused `noqa` directive (unused: PH001)" in selected.stdout
    fixed = run_cli("check", "--no-cache", "--extend-select", "PH100", "--fix", ".", cwd=tmp_path)
    assert fixed.returncode == 0
    assert (tmp_path / "a.py").read_text() == OLD.replace("torch.zeros(1)", "torch.zeros(1, dtype=torch.int64)")
