"""Honest output (issue 11, item 6, F6 and F8): "All checks passed!" only when every
file was read, parsed and checked; unreadable and undecodable files are diagnostics
with file and position; a NUL byte is reported where it is; stdin errors are one line."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from conftest import HAZARD, run_cli
from precision_lint.commands import _only_changed
from precision_lint.diagnostics import Location
from precision_lint.failures import IO_ERROR, failure
from precision_lint.runner import Job, run_jobs

CLEAN = "import torch\nx = torch.zeros(1, dtype=torch.int64)\n"


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def test_an_undecodable_file_is_a_finding_with_its_position_and_never_all_checks_passed(tmp_path):
    write(tmp_path / "clean.py", CLEAN)
    (tmp_path / "bad.py").write_bytes(b"import torch\nx = 1\ny = '\xff'\n")
    result = run_cli("check", "--no-cache", "--output-format", "concise", ".", cwd=tmp_path)
    assert result.returncode == 2
    assert "All checks passed!" not in result.stdout
    assert result.stdout.splitlines()[0] == (
        "bad.py:3:6: PH901 error Cannot decode the file: 'utf-8' codec can't decode byte 0xff in position 24: invalid start byte"
    )
    assert "1 file was not fully checked or fixed (PH9xx above)." in result.stdout


def test_an_unknown_coding_cookie_is_reported_on_its_line(tmp_path):
    (tmp_path / "a.py").write_bytes(b"#!/usr/bin/env python\n# -*- coding: no-such-codec -*-\nimport torch\n")
    result = run_cli("check", "--no-cache", "--output-format", "concise", "a.py", cwd=tmp_path)
    assert result.returncode == 2
    assert result.stdout.startswith("a.py:2:1: PH901 error Cannot decode the file: unknown encoding")


def test_an_unreadable_file_is_a_finding(tmp_path):
    missing = tmp_path / "gone.py"  # listed, then deleted before it was read
    (report,) = run_jobs([Job(str(missing), frozenset({"PH001"}))])
    (problem,) = report.diagnostics
    assert (problem.code, problem.name, problem.location) == ("PH901", "io-error", Location(1, 1))
    assert problem.message == "Cannot read the file: No such file or directory"
    assert report.failed


def test_a_nul_byte_is_reported_where_it_is(tmp_path):
    # F8: it was reported at 1:1
    (tmp_path / "a.py").write_bytes(b"import torch\nx = 1\ny = \x00 2\n")
    result = run_cli("check", "--no-cache", "--output-format", "concise", "a.py", cwd=tmp_path)
    assert result.returncode == 1
    assert result.stdout.splitlines()[0] == "a.py:3:5: SyntaxError: source code cannot contain a NUL byte"


def test_exit_zero_still_exits_2_when_a_file_was_not_checked(tmp_path):
    (tmp_path / "bad.py").write_bytes(b"import torch\n'\xff'\n")
    result = run_cli("check", "--no-cache", "--exit-zero", "bad.py", cwd=tmp_path)
    assert result.returncode == 2


def test_machine_formats_carry_the_failure(tmp_path):
    (tmp_path / "bad.py").write_bytes(b"import torch\n'\xff'\n")
    result = run_cli("check", "--no-cache", "--output-format", "json", "bad.py", cwd=tmp_path)
    (entry,) = json.loads(result.stdout)
    assert (entry["code"], entry["name"], entry["location"]) == ("PH901", "io-error", {"row": 2, "column": 2})
    sarif = run_cli("check", "--no-cache", "--output-format", "sarif", "bad.py", cwd=tmp_path)
    assert sarif.returncode == 2 and '"ruleId": "PH901"' in sarif.stdout


def test_diff_mode_prints_failures_on_stderr(tmp_path):
    (tmp_path / "bad.py").write_bytes(b"import torch\n'\xff'\n")
    write(tmp_path / "a.py", HAZARD)
    result = run_cli("check", "--no-cache", "--diff", ".", cwd=tmp_path)
    assert result.returncode == 2
    assert "+acc = torch.zeros(1, dtype=torch.int64)" in result.stdout
    assert "precision-lint: error: bad.py:2:2: PH901 Cannot decode the file" in result.stderr


def test_diff_base_never_filters_out_a_failure():
    problem = failure(IO_ERROR, "/nowhere/a.py", "Cannot read the file: Permission denied")
    assert _only_changed([problem], {}) == [problem]


def test_undecodable_stdin_is_one_clear_line(tmp_path):
    # F6: a traceback
    result = subprocess.run(
        [sys.executable, "-m", "precision_lint", "check", "-"], input=b"import torch\nx = '\xff'\n", capture_output=True, cwd=tmp_path
    )
    assert result.returncode == 2
    assert result.stdout == b""
    assert result.stderr.decode().splitlines() == [
        "precision-lint: error: cannot decode standard input (line 2, column 6): 'utf-8' codec can't decode byte 0xff in position 18: invalid start byte"
    ]


def test_closed_stdin_is_one_clear_line(tmp_path):
    result = subprocess.run(
        ["bash", "-c", f"'{sys.executable}' -m precision_lint check - <&-"], capture_output=True, text=True, cwd=tmp_path
    )
    assert result.returncode == 2
    assert result.stderr.splitlines() == ["precision-lint: error: cannot read standard input: it is closed"]


def test_stdin_in_its_own_encoding_and_newlines_round_trips_through_fix(tmp_path):
    source = ("# -*- coding: latin-1 -*-\n# caf\u00e9\n" + HAZARD).replace("\n", "\r\n").encode("latin-1")
    result = subprocess.run(
        [sys.executable, "-m", "precision_lint", "check", "--fix", "-"], input=source, capture_output=True, cwd=tmp_path
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout == source.replace(b"torch.zeros(1)", b"torch.zeros(1, dtype=torch.int64)")


def test_stdin_over_a_limit_is_reported(tmp_path):
    write(tmp_path / "pyproject.toml", "[tool.precision-lint]\nmax-file-size = 10\n")
    result = run_cli("check", "--stdin-filename", "a.py", "-", cwd=tmp_path, stdin=HAZARD)
    assert result.returncode == 2
    assert f"a.py:1:1: PH902 error The file is {len(HAZARD.encode())} bytes, over the limit of 10" in result.stdout


def test_a_folder_that_cannot_be_listed_is_a_finding(tmp_path, monkeypatch):
    # root reads everything, so the refusal is made on purpose
    import os

    from precision_lint import discovery
    from precision_lint.config import Settings

    write(tmp_path / "a.py", HAZARD)
    locked = tmp_path / "locked"
    locked.mkdir()
    real = os.scandir

    def scandir(path="."):
        if Path(path) == locked:
            raise PermissionError(13, "Permission denied", str(locked))
        return real(path)

    monkeypatch.setattr(os, "scandir", scandir)
    unreadable = []
    files = discovery.discover([tmp_path], Settings(root=tmp_path), unreadable=unreadable)
    assert files == [tmp_path / "a.py"]
    assert [(folder, error.strerror) for folder, error in unreadable] == [(locked, "Permission denied")]


def test_a_folder_that_cannot_be_listed_fails_the_run(tmp_path):
    from conftest import run_patched_cli

    write(tmp_path / "a.py", CLEAN)
    (tmp_path / "locked").mkdir()
    patch = """
import os
real = os.scandir
def scandir(path="."):
    if str(path).endswith("locked"):
        raise PermissionError(13, "Permission denied", str(path))
    return real(path)
os.scandir = scandir
"""
    result = run_patched_cli(patch, "check", "--no-cache", "--output-format", "concise", ".", cwd=tmp_path)
    assert result.returncode == 2
    assert "All checks passed!" not in result.stdout
    assert "locked:1:1: PH901 error Cannot list the folder: Permission denied; the files in it were not checked" in result.stdout


def test_a_nul_byte_inside_a_string_is_a_syntax_error_not_a_crash():
    # found by benchmarks/fuzz.py: libcst parses it, the model's literal_eval did not
    from precision_lint.engine import check_source

    source = 'import torch\nclass M(torch.nn.Module):\n    def f(self):\n        self.register_buffer("inv\0_freq", x)\n'
    (found,) = check_source(source, "a.py", frozenset({"PH001", "PH004"}))
    assert (found.code, found.location, found.message) == (None, Location(4, 34), "SyntaxError: source code cannot contain a NUL byte")
