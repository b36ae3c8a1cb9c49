"""What the command line's fault campaign of 2026-12-03 found, each held to what a user
of Ruff or pre-commit expects: stdin excluded as its file would be, no input dropped
without a word, user errors without a traceback, machine formats that stay documents,
numbers that must be above zero refused, the cache keyed by the input limits."""
from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from conftest import HAZARD, HAZARD_FIXED, run_cli


def _project(tmp_path: Path, config: str = "") -> Path:
    (tmp_path / "gen").mkdir()
    (tmp_path / "gen" / "m.py").write_text(HAZARD)
    (tmp_path / "a.py").write_text(HAZARD)
    (tmp_path / "pyproject.toml").write_text(f"[tool.precision-lint]\n{config}")
    return tmp_path


def test_force_exclude_leaves_out_standard_input_as_it_would_its_file(tmp_path):
    root = _project(tmp_path, 'extend-exclude = ["gen/"]\n')
    named = run_cli("check", "--no-cache", "--force-exclude", "gen/m.py", cwd=root)
    assert named.returncode == 0
    check = run_cli("check", "--no-cache", "--force-exclude", "--output-format", "json", "--stdin-filename", "gen/m.py", cwd=root, stdin=HAZARD)
    assert check.returncode == 0 and json.loads(check.stdout) == []
    fix = run_cli("check", "--no-cache", "--force-exclude", "--fix", "--stdin-filename", "gen/m.py", cwd=root, stdin=HAZARD)
    assert fix.returncode == 0 and fix.stdout == HAZARD  # given back as it came
    # without --force-exclude, or for a file it does not exclude, stdin is checked
    plain = run_cli("check", "--no-cache", "--stdin-filename", "gen/m.py", cwd=root, stdin=HAZARD)
    assert plain.returncode == 1 and "PH001" in plain.stdout
    kept = run_cli("check", "--no-cache", "--force-exclude", "--fix", "--stdin-filename", "a.py", cwd=root, stdin=HAZARD)
    assert kept.stdout == HAZARD_FIXED


def test_paths_beside_standard_input_are_not_dropped_without_a_word(tmp_path):
    root = _project(tmp_path)
    both = run_cli("check", "--no-cache", "-", "a.py", cwd=root, stdin="x = 1\n")
    assert "warning: ignoring a.py: standard input (`-`) is checked instead" in both.stderr
    named = run_cli("check", "--no-cache", "--stdin-filename", "x.py", "a.py", cwd=root, stdin="x = 1\n")
    assert named.returncode == 1 and "--stdin-filename is ignored" in named.stderr


def test_an_output_file_that_cannot_be_written_is_a_one_line_error(tmp_path):
    root = _project(tmp_path)
    target = root / "a.py" / "report.txt"  # a file's "folder": it cannot be made
    stdin = run_cli("check", "--no-cache", "-", "-o", str(target), cwd=root, stdin=HAZARD)
    assert stdin.returncode == 2 and "Traceback" not in stdin.stderr
    assert f"precision-lint: error: cannot write {target}" in stdin.stderr
    verify = run_cli("verify", "a.py", "--device", "cpu", "-o", str(target), cwd=root)
    assert verify.returncode == 2 and "Traceback" not in verify.stderr and "cannot write" in verify.stderr
    plot = run_cli("verify", "a.py", "--device", "cpu", "--plot", str(target), cwd=root)
    assert plot.returncode == 2 and "Traceback" not in plot.stderr and "cannot write" in plot.stderr


def test_fix_only_keeps_a_machine_format_a_document(tmp_path):
    root = _project(tmp_path)
    result = run_cli("check", "--no-cache", "--fix-only", "--output-format", "json", "a.py", cwd=root)
    assert result.returncode == 0 and json.loads(result.stdout) == []
    assert "Fixed 1 error." in result.stderr
    assert (root / "a.py").read_text() == HAZARD_FIXED


def test_verify_refuses_numbers_that_must_be_above_zero(tmp_path):
    root = _project(tmp_path)
    for option, value in (("--world-size", "0"), ("--timeout", "-1"), ("--memory-limit", "0"), ("--scale", "nan"), ("--timeout", "inf")):
        result = run_cli("verify", "a.py", option, value, cwd=root)
        assert result.returncode == 2 and f"argument {option}: must be a finite number above 0" in result.stderr, option
    huge = run_cli("verify", "a.py", "--memory-limit", "1e12", cwd=root)
    assert huge.returncode == 2 and "must be at most 1e+06" in huge.stderr
    whole = run_cli("verify", "a.py", "--world-size", "1.5", cwd=root)
    assert whole.returncode == 2 and "invalid int value: '1.5'" in whole.stderr
    inputs = run_cli("verify", "a.py", "--inputs", "factories:make", cwd=root)
    assert inputs.returncode == 2 and "it needs --call" in inputs.stderr


def test_a_new_input_limit_is_not_answered_from_the_cache(tmp_path):
    root = _project(tmp_path)
    assert run_cli("check", "a.py", cwd=root).returncode == 1  # cached
    (root / "pyproject.toml").write_text("[tool.precision-lint]\nmax-file-size = 10\n")
    limited = run_cli("check", "--output-format", "concise", "a.py", cwd=root)
    assert limited.returncode == 2 and "PH902" in limited.stdout


def test_extend_on_the_command_line_is_refused_not_dropped(tmp_path):
    root = _project(tmp_path)
    (root / "ext.toml").write_text('ignore = ["PH001"]\n')
    result = run_cli("check", "--no-cache", "--config", "extend = 'ext.toml'", "a.py", cwd=root)
    assert result.returncode == 2 and "`extend` cannot be set on the command line" in result.stderr


def test_a_failure_code_given_as_a_rule_is_explained_not_corrected(tmp_path):
    root = _project(tmp_path)
    ignored = run_cli("check", "--no-cache", "--ignore", "PH901", "a.py", cwd=root)
    assert ignored.returncode == 2 and "PH9xx codes report a file that could not be fully checked" in ignored.stderr
    assert "did you mean" not in ignored.stderr
    rule = run_cli("rule", "PH902", cwd=root)
    assert rule.returncode == 2 and "`PH902` is not a rule" in rule.stderr


def test_verify_says_which_file_does_not_parse(tmp_path):
    (tmp_path / "bad.py").write_text("import torch\ndef f(:\n")
    result = run_cli("verify", "--device", "cpu", "bad.py", cwd=tmp_path)
    assert "Nothing to verify" not in result.stdout
    assert "bad.py:0: skipped: cannot read or check the file: SyntaxError: invalid syntax" in result.stdout


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs on this system")
def test_a_named_fifo_is_said_to_be_no_file(tmp_path):
    os.mkfifo(tmp_path / "pipe.py")
    result = run_cli("check", "--no-cache", "--output-format", "concise", "pipe.py", cwd=tmp_path)
    assert result.returncode == 2
    assert "pipe.py:1:1: PH901 error Not a regular file (nor a folder): it was not read" in result.stdout


def test_a_pattern_that_is_none_and_a_settings_table_that_is_none_are_refused(tmp_path):
    root = _project(tmp_path, 'extend-exclude = ["gen[/"]\n')
    config = run_cli("check", "--no-cache", "a.py", cwd=root)
    assert config.returncode == 2 and "`extend-exclude`: `gen[/`: a `[` that no `]` closes" in config.stderr
    (root / "pyproject.toml").write_text('[tool.precision-lint]\nextend-exclude = ["[]x]", "g[!e]n", "\\\\[a"]\n')
    assert run_cli("check", "--no-cache", "a.py", cwd=root).returncode == 1  # each a pattern
    option = run_cli("check", "--no-cache", "--exclude", "[", "a.py", cwd=root)
    assert option.returncode == 2 and "--exclude: `[`: a `[` that no `]` closes" in option.stderr
    (root / "pyproject.toml").write_text("[tool]\nprecision-lint = 3\n")
    table = run_cli("check", "--no-cache", "a.py", cwd=root)
    assert table.returncode == 2 and "`tool.precision-lint` must be a table of settings" in table.stderr
