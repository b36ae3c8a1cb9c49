"""The GitHub Action's check step (action/check.sh), run as the runner would: a pull
request branch cloned from an origin with a base branch, $GITHUB_STEP_SUMMARY set."""
import json
import os
import subprocess
import sys
from pathlib import Path

OLD = "import torch\nacc = torch.zeros(1)\nfor x in xs:\n    acc += (x == 0).sum()\nprint(acc.item())\n"
NEW = "import torch\nn = torch.tensor(0.0)\nfor x in xs:\n    n += x.numel()\nprint(n.item())\n"


def git(cwd: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True, text=True).stdout


def pull_request(tmp_path: Path) -> Path:
    origin = tmp_path / "origin"
    origin.mkdir()
    git(origin, "init", "-q", "-b", "main")
    git(origin, "config", "user.email", "t@example.com")
    git(origin, "config", "user.name", "t")
    (origin / "legacy.py").write_text(OLD)
    git(origin, "add", ".")
    git(origin, "commit", "-qm", "base")
    work = tmp_path / "work"
    git(tmp_path, "clone", "-q", str(origin), str(work))
    git(work, "config", "user.email", "t@example.com")
    git(work, "config", "user.name", "t")
    git(work, "checkout", "-q", "-b", "feature")
    (work / "added.py").write_text(NEW)
    git(work, "add", ".")
    git(work, "commit", "-qm", "feature")
    return work


def run_action(work: Path, tmp_path: Path, repo_root: Path, **inputs: str):
    summary = tmp_path / "summary.md"
    env = {
        **os.environ,
        "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}",
        "GITHUB_STEP_SUMMARY": str(summary),
        "PRECISION_LINT_BASE_REF": "main",
        **inputs,
    }
    result = subprocess.run(
        ["bash", str(repo_root / "action" / "check.sh")], cwd=work, env=env, capture_output=True, text=True, timeout=120
    )
    return result, summary


def test_action_annotates_only_the_pull_requests_lines(tmp_path, repo_root):
    work = pull_request(tmp_path)
    result, summary = run_action(work, tmp_path, repo_root)
    assert result.returncode == 1, result.stderr
    annotations = [line for line in result.stdout.splitlines() if line.startswith("::")]
    assert len(annotations) == 1
    assert annotations[0].startswith("::error title=precision-lint (PH001),file=added.py,line=2,")
    text = summary.read_text()
    assert text.startswith("## precision-lint") and "added.py" in text and "legacy.py" not in text


def test_action_measures_from_the_merge_base_when_the_base_branch_moved_on(tmp_path, repo_root):
    work = pull_request(tmp_path)
    origin = tmp_path / "origin"
    # main moves on after the branch: legacy.py is rewritten there, not in the PR
    (origin / "legacy.py").write_text("# moved\n" + OLD.replace("acc", "total"))
    git(origin, "commit", "-qam", "main moves on")
    result, _ = run_action(work, tmp_path, repo_root)
    assert result.returncode == 1, result.stderr
    annotations = [line for line in result.stdout.splitlines() if line.startswith("::")]
    assert [a.split(",")[1] for a in annotations] == ["file=added.py"]


def test_action_writes_sarif_with_every_finding(tmp_path, repo_root):
    work = pull_request(tmp_path)
    sarif_path = tmp_path / "out" / "precision-lint.sarif"
    result, _ = run_action(work, tmp_path, repo_root, PRECISION_LINT_SARIF=str(sarif_path))
    assert result.returncode == 1, result.stderr
    log = json.loads(sarif_path.read_text())
    uris = sorted(r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] for r in log["runs"][0]["results"])
    assert uris == ["added.py", "legacy.py"]


def test_action_without_changed_lines_mode_reports_everything(tmp_path, repo_root):
    work = pull_request(tmp_path)
    result, _ = run_action(work, tmp_path, repo_root, PRECISION_LINT_CHANGED_ONLY="false")
    annotations = [line for line in result.stdout.splitlines() if line.startswith("::error")]
    assert len(annotations) == 2 and result.returncode == 1


def test_action_passes_a_clean_pull_request(tmp_path, repo_root):
    work = pull_request(tmp_path)
    (work / "added.py").write_text(NEW.replace("torch.tensor(0.0)", "torch.tensor(0)"))
    git(work, "commit", "-qam", "fixed")
    result, summary = run_action(work, tmp_path, repo_root)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "No findings." in summary.read_text()
