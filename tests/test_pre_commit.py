"""The hooks in .pre-commit-hooks.yaml, run through real pre-commit and real git on a
temporary repository: the check hook fails and prints the finding; the fix hook
rewrites the file and fails (files changed); a second run passes."""
import os
import subprocess
import sys
from pathlib import Path

import pytest

HAZARD = "import torch\nacc = torch.zeros(1)\nfor x in xs:\n    acc += (x == 0).sum()\nprint(acc.item())\n"
UNFIXABLE = "import torch\nacc = torch.zeros(1)\nfor x in xs:\n    acc += (x == 0).sum()\nacc /= 2\n"

@pytest.fixture(scope="module")
def pre_commit_home(tmp_path_factory):
    # One hook environment for the module: pre-commit installs precision-lint into it once.
    return tmp_path_factory.mktemp("pre-commit-home")


@pytest.fixture
def project(tmp_path):
    subprocess.run(["git", "init", "-q"], cwd=tmp_path, check=True)
    subprocess.run(["git", "config", "user.email", "test@example.com"], cwd=tmp_path, check=True)
    subprocess.run(["git", "config", "user.name", "test"], cwd=tmp_path, check=True)
    return tmp_path


def try_repo(project: Path, home: Path, repo_root: Path, hook: str, *files: str):
    env = {**os.environ, "PRE_COMMIT_HOME": str(home)}
    args = [sys.executable, "-m", "pre_commit", "try-repo", str(repo_root), hook, "--verbose"]
    args += ["--files", *files] if files else ["--all-files"]
    return subprocess.run(args, cwd=project, env=env, capture_output=True, text=True, timeout=600)


def test_check_hook_fails_and_prints_the_finding(project, pre_commit_home, repo_root):
    (project / "train.py").write_text(HAZARD)
    subprocess.run(["git", "add", "train.py"], cwd=project, check=True)
    result = try_repo(project, pre_commit_home, repo_root, "precision-lint", "train.py")
    assert result.returncode == 1, result.stdout + result.stderr
    assert "train.py:2:7: PH001" in result.stdout
    assert (project / "train.py").read_text() == HAZARD  # the check hook writes nothing


def test_fix_hook_rewrites_then_passes(project, pre_commit_home, repo_root):
    (project / "train.py").write_text(HAZARD)
    subprocess.run(["git", "add", "train.py"], cwd=project, check=True)
    first = try_repo(project, pre_commit_home, repo_root, "precision-lint-fix", "train.py")
    assert first.returncode == 1, first.stdout + first.stderr
    assert "files were modified by this hook" in first.stdout
    assert "torch.zeros(1, dtype=torch.int64)" in (project / "train.py").read_text()
    subprocess.run(["git", "add", "train.py"], cwd=project, check=True)
    second = try_repo(project, pre_commit_home, repo_root, "precision-lint-fix", "train.py")
    assert second.returncode == 0, second.stdout + second.stderr


def test_fix_hook_fails_when_unfixable_findings_remain(project, pre_commit_home, repo_root):
    (project / "train.py").write_text(UNFIXABLE)
    subprocess.run(["git", "add", "train.py"], cwd=project, check=True)
    result = try_repo(project, pre_commit_home, repo_root, "precision-lint-fix", "train.py")
    assert result.returncode == 1, result.stdout + result.stderr
    assert "PH001" in result.stdout and "No fix" in result.stdout
    assert (project / "train.py").read_text() == UNFIXABLE


def test_hook_with_no_python_files_is_skipped_and_passes(project, pre_commit_home, repo_root):
    (project / "notes.txt").write_text("not python\n")
    subprocess.run(["git", "add", "notes.txt"], cwd=project, check=True)
    result = try_repo(project, pre_commit_home, repo_root, "precision-lint", "notes.txt")
    assert result.returncode == 0, result.stdout + result.stderr
    assert "Skipped" in result.stdout


def test_hook_honours_config_excludes_for_passed_files(project, pre_commit_home, repo_root):
    (project / "pyproject.toml").write_text('[tool.precision-lint]\nextend-exclude = ["legacy"]\n')
    (project / "legacy").mkdir()
    (project / "legacy" / "old.py").write_text(HAZARD)
    subprocess.run(["git", "add", "."], cwd=project, check=True)
    result = try_repo(project, pre_commit_home, repo_root, "precision-lint", "legacy/old.py")
    assert result.returncode == 0, result.stdout + result.stderr
