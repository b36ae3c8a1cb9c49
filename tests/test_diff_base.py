"""`--diff-base REF` measures from the merge base of REF and HEAD, so a branch is not
charged with what its base branch did after it branched; `A...B` says the same with
both ends named. The GitHub Action runs the same code (test_github_action.py)."""
from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from conftest import run_cli

OLD = "import torch\nacc = torch.zeros(1)\nfor x in xs:\n    acc += (x == 0).sum()\nprint(acc.item())\n"
NEW = "import torch\nn = torch.tensor(0.0)\nfor x in xs:\n    n += x.numel()\nprint(n.item())\n"


def git(cwd: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True, text=True).stdout


def rows(stdout: str) -> list[str]:
    return [line.split(": PH")[0] for line in stdout.splitlines() if ": PH" in line]


@pytest.fixture
def moved_base(tmp_path) -> Path:
    """main: legacy.py (a hazard). feature branches off, adds added.py. Then main
    moves on: it rewrites legacy.py (the hazard now on another line)."""
    repo = tmp_path / "repo"
    repo.mkdir()
    git(repo, "init", "-q", "-b", "main")
    git(repo, "config", "user.email", "t@example.com")
    git(repo, "config", "user.name", "t")
    (repo / "legacy.py").write_text(OLD)
    git(repo, "add", ".")
    git(repo, "commit", "-qm", "base")
    git(repo, "checkout", "-q", "-b", "feature")
    (repo / "added.py").write_text(NEW)
    git(repo, "add", ".")
    git(repo, "commit", "-qm", "feature")
    git(repo, "checkout", "-q", "main")
    (repo / "legacy.py").write_text("# moved\n" + OLD.replace("acc", "total"))
    git(repo, "commit", "-qam", "main moves on")
    git(repo, "checkout", "-q", "feature")
    return repo


def check(repo: Path, *args: str):
    return run_cli("check", "--no-cache", "--output-format", "concise", *args, ".", cwd=repo)


def test_a_moved_base_branch_does_not_count_as_the_branchs_change(moved_base):
    # against main's tip, legacy.py differs (main rewrote it): its hazard would count as new
    tip_diff = git(moved_base, "diff", "--stat", "main", "--", "legacy.py")
    assert "legacy.py" in tip_diff
    result = check(moved_base, "--diff-base", "main")
    assert result.returncode == 1, result.stderr
    assert rows(result.stdout) == ["added.py:2:5"]


@pytest.mark.parametrize("spec", ["main...HEAD", "main...", "main...feature"])
def test_three_dot_ranges_are_accepted(moved_base, spec):
    result = check(moved_base, "--diff-base", spec)
    assert result.returncode == 1, result.stderr
    assert rows(result.stdout) == ["added.py:2:5"]


def test_ranges_that_cannot_describe_the_work_tree_are_refused(moved_base):
    two_dots = check(moved_base, "--diff-base", "main..HEAD")
    assert two_dots.returncode == 2 and "A...B" in two_dots.stderr
    other_tip = check(moved_base, "--diff-base", "feature...main")
    assert other_tip.returncode == 2 and "`main` is not HEAD" in other_tip.stderr


def test_a_shallow_clone_without_a_merge_base_says_how_to_fix_it(moved_base, tmp_path):
    clone = tmp_path / "clone"
    git(tmp_path, "clone", "-q", "--depth", "1", "--branch", "feature", f"file://{moved_base}", str(clone))
    git(clone, "fetch", "-q", "--depth", "1", "origin", "+refs/heads/main:refs/remotes/origin/main")
    result = check(clone, "--diff-base", "origin/main")
    assert result.returncode == 2
    assert "no common ancestor" in result.stderr and "fetch-depth: 0" in result.stderr
