"""Honest summaries: a run that found no file says so; the summary counts errors and
warnings apart, full and concise lines show each finding's severity, and every
output format counts the same run the same way."""
from __future__ import annotations

import json
import re
import xml.etree.ElementTree as ET
from pathlib import Path

from conftest import run_cli

FLOAT32 = "import torch\nacc = torch.zeros(1)\nfor x in xs:\n    acc += (x == 0).sum()\nprint(acc.item())\n"
FLOAT64 = "import torch\nacc = torch.zeros(1, dtype=torch.float64)\nfor x in xs:\n    acc += (x == 0).sum()\nprint(acc.item())\n"


def mixed(tmp_path: Path) -> Path:
    (tmp_path / "a.py").write_text(FLOAT32)
    (tmp_path / "b.py").write_text(FLOAT32.replace("acc", "seen"))
    (tmp_path / "c.py").write_text(FLOAT64)
    return tmp_path


def test_no_python_files_is_a_warning_not_a_pass(tmp_path):
    (tmp_path / "empty").mkdir()
    (tmp_path / "empty" / "notes.txt").write_text("torch.zeros(1)")
    result = run_cli("check", "--no-cache", "empty", cwd=tmp_path)
    assert result.returncode == 0
    assert result.stdout == ""  # never "All checks passed!" over nothing
    assert result.stderr == "precision-lint: warning: No Python files found under the given path(s)\n"
    as_json = run_cli("check", "--no-cache", "--output-format", "json", "empty", cwd=tmp_path)
    assert as_json.returncode == 0 and json.loads(as_json.stdout) == []


def test_summary_counts_errors_and_warnings(tmp_path):
    mixed(tmp_path)
    result = run_cli("check", "--no-cache", ".", cwd=tmp_path)
    assert result.returncode == 1
    assert "\nFound 2 errors and 1 warning.\n" in result.stdout
    single = run_cli("check", "--no-cache", "c.py", cwd=tmp_path)
    assert "\nFound 1 warning.\n" in single.stdout


def test_full_and_concise_lines_show_the_severity(tmp_path):
    mixed(tmp_path)
    concise = run_cli("check", "--no-cache", "--output-format", "concise", ".", cwd=tmp_path).stdout.splitlines()
    assert concise[0].startswith("a.py:2:7: PH001 error [*] `acc`")
    assert concise[2].startswith("c.py:2:7: PH001 warning [*] `acc` accumulates integer counts in float64")
    full = run_cli("check", "--no-cache", "c.py", cwd=tmp_path).stdout
    assert full.startswith("c.py:2:7: PH001 warning [*] ")


def test_every_format_counts_the_same(tmp_path):
    mixed(tmp_path)

    def run(fmt: str) -> str:
        result = run_cli("check", "--no-cache", "--output-format", fmt, ".", cwd=tmp_path)
        assert result.returncode == 1, result.stderr
        return result.stdout

    counts = {}
    found = re.search(r"Found (\d+) errors and (\d+) warning", run("concise"))
    counts["text"] = (int(found.group(1)), int(found.group(2)))
    severities = [d["severity"] for d in json.loads(run("json"))]
    counts["json"] = (severities.count("error"), severities.count("warning"))
    levels = [r["level"] for r in json.loads(run("sarif"))["runs"][0]["results"]]
    counts["sarif"] = (levels.count("error"), levels.count("warning"))
    github = run("github").splitlines()
    counts["github"] = (sum(a.startswith("::error ") for a in github), sum(a.startswith("::warning ") for a in github))
    found = re.search(r"Found \*\*(\d+) errors and (\d+) warning", run("markdown"))
    counts["markdown"] = (int(found.group(1)), int(found.group(2)))
    gitlab = [issue["severity"] for issue in json.loads(run("gitlab"))]
    counts["gitlab"] = (gitlab.count("major"), gitlab.count("minor"))
    junit = ET.fromstring(run("junit"))
    assert int(junit.get("failures")) == 3
    assert set(counts.values()) == {(2, 1)}, counts
