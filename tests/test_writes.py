"""Writes that keep the file (issue 11, item 5, F9): in place, so owner, group, mode and
hard links stay; an encoding that cannot be kept is refused; a file changed since it
was read is skipped; SIGINT stops cleanly and says what was fixed so far."""
from __future__ import annotations

import os
import signal
import stat
from pathlib import Path

import pytest

from conftest import HAZARD, HAZARD_FIXED, run_cli, run_patched_cli
from precision_lint import runner
from precision_lint.runner import Job, run_jobs
from precision_lint.source import signals_deferred

PH001 = frozenset({"PH001"})


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


@pytest.mark.skipif(not hasattr(os, "geteuid") or os.geteuid() != 0, reason="giving a file to another user needs root")
def test_fix_as_root_keeps_another_users_file_theirs(tmp_path):
    target = write(tmp_path / "a.py", HAZARD)
    os.chown(target, 12345, 23456)
    result = run_cli("check", "--fix", "a.py", cwd=tmp_path)
    assert result.returncode == 0, result.stdout + result.stderr
    info = target.stat()
    assert (info.st_uid, info.st_gid) == (12345, 23456)
    assert target.read_text() == HAZARD_FIXED


def test_fix_keeps_hard_links_and_the_inode(tmp_path):
    target = write(tmp_path / "a.py", HAZARD)
    os.chmod(target, 0o640)
    (tmp_path / "other").mkdir()
    twin = tmp_path / "other" / "same.py"
    os.link(target, twin)
    inode = target.stat().st_ino
    result = run_cli("check", "--fix", "a.py", cwd=tmp_path)
    assert result.returncode == 0, result.stdout + result.stderr
    assert target.stat().st_ino == inode and twin.stat().st_ino == inode
    assert target.stat().st_nlink == 2
    assert twin.read_text() == HAZARD_FIXED
    assert stat.S_IMODE(target.stat().st_mode) == 0o640


def test_an_encoding_that_does_not_round_trip_is_refused(tmp_path):
    # cp932 decodes b"\x87\x90" and b"\x81\xe0" to the same character and writes back the
    # second: writing the fix would silently change a byte the fix never touched
    target = tmp_path / "a.py"
    original = b"# -*- coding: cp932 -*-\n# \x87\x90\n" + HAZARD.encode()
    target.write_bytes(original)
    result = run_cli("check", "--fix", "--no-cache", "--output-format", "concise", "a.py", cwd=tmp_path)
    assert result.returncode == 2
    assert target.read_bytes() == original
    assert "a.py:1:1: PH901 error The fixes were not written: its cp932 text does not re-encode to the same bytes" in result.stdout
    assert "a.py:4:7: PH001" in result.stdout  # the finding stands


def test_a_file_edited_while_it_is_fixed_keeps_the_edit(tmp_path, monkeypatch):
    # F9: an edit saved while --fix ran on a large file was lost
    target = write(tmp_path / "a.py", HAZARD)
    edited = HAZARD + "print('saved by the editor meanwhile')\n"
    real = runner.fix_source

    def fix_while_the_user_saves(*args, **kwargs):
        outcome = real(*args, **kwargs)
        target.write_text(edited)
        return outcome

    monkeypatch.setattr(runner, "fix_source", fix_while_the_user_saves)  # the forked worker has it
    (report,) = run_jobs([Job(str(target), PH001, "fix")])
    assert target.read_text() == edited
    assert report.fixed == []
    codes = [(d.code, d.message) for d in report.diagnostics]
    assert ("PH901", "The file changed since it was read: the fixes were not written; run again") in codes
    assert "PH001" in [code for code, _ in codes]


def test_a_fixed_file_that_cannot_be_written_keeps_its_finding(tmp_path, monkeypatch):
    # F8: the finding was dropped from the report
    target = write(tmp_path / "a.py", HAZARD)

    def refuse(path, data, digest):
        raise PermissionError(13, "Permission denied")

    monkeypatch.setattr(runner, "write_in_place", refuse)
    (report,) = run_jobs([Job(str(target), PH001, "fix")])
    assert target.read_text() == HAZARD
    assert report.fixed == []
    assert [(d.code, d.location.row) for d in report.diagnostics] == [("PH001", 2), ("PH901", 1)]
    assert report.diagnostics[1].message == "Cannot write the fixed file: Permission denied"


@pytest.mark.skipif(not hasattr(os, "posix_fallocate"), reason="the file-size limit is met by fallocate on Linux")
def test_a_write_past_the_file_size_limit_leaves_the_file_whole(tmp_path):
    # the fault campaign: the write stopped at the limit and left a truncated file
    # that no longer parsed, reported as "0 fixed"
    text = HAZARD + "#" * (1023 - len(HAZARD)) + "\n"  # 1,024 bytes: the fix makes it longer
    target = write(tmp_path / "a.py", text)
    patch = """
import resource
resource.setrlimit(resource.RLIMIT_FSIZE, (1024, resource.getrlimit(resource.RLIMIT_FSIZE)[1]))
"""
    result = run_patched_cli(patch, "check", "--fix", "--no-cache", "--output-format", "concise", "a.py", cwd=tmp_path)
    assert result.returncode == 2, result.stdout + result.stderr
    assert "a.py:1:1: PH901 error Cannot write the fixed file: File too large" in result.stdout
    assert target.read_text() == text


def test_a_write_that_fails_part_way_puts_the_old_contents_back(tmp_path, monkeypatch):
    import precision_lint.source as source

    target = write(tmp_path / "a.py", HAZARD + "# a longer tail than the fix adds\n" * 3)
    before = target.read_bytes()
    real_fsync, calls = os.fsync, []

    def failing_once(descriptor):
        calls.append(descriptor)
        if len(calls) == 1:  # the new contents are written, not yet on the disk
            raise OSError(5, "Input/output error")
        real_fsync(descriptor)

    monkeypatch.setattr(source.os, "fsync", failing_once)
    with pytest.raises(OSError, match="Input/output error"):
        source.write_in_place(target, b"x = 1\n", source.content_digest(before))
    assert target.read_bytes() == before and len(calls) == 2


def test_cannot_write_through_the_command_line(tmp_path):
    write(tmp_path / "a.py", HAZARD)
    patch = """
import precision_lint.runner as runner
def refuse(path, data, digest):
    raise PermissionError(13, "Permission denied")
runner.write_in_place = refuse
"""
    result = run_patched_cli(patch, "check", "--fix", "--output-format", "concise", "a.py", cwd=tmp_path)
    assert result.returncode == 2
    assert "a.py:2:7: PH001 error [*]" in result.stdout and "a.py:1:1: PH901 error Cannot write the fixed file" in result.stdout
    assert "Found 2 errors (0 fixed, 2 remaining)." in result.stdout


def test_sigint_during_fix_stops_cleanly_and_lists_what_was_written(tmp_path):
    # F9: SIGINT printed a traceback and no list of what changed
    for number in range(20):
        write(tmp_path / f"m{number:02d}.py", HAZARD)
    # a test run's worker may ignore SIGINT (pytest-xdist does), and the child would
    # inherit that: Python's own handler, as in a terminal
    patch = """
import os, signal
signal.signal(signal.SIGINT, signal.default_int_handler)
import precision_lint.runner as runner
real, done = runner.commit, []
def commit(report):
    report = real(report)
    done.append(report.path)
    if len(done) == 3:
        os.kill(os.getpid(), signal.SIGINT)
    return report
runner.commit = commit
"""
    result = run_patched_cli(patch, "check", "--fix", ".", cwd=tmp_path)
    assert result.returncode == 130, result.stderr
    assert "Traceback" not in result.stderr
    assert "precision-lint: interrupted after 3 files" in result.stderr
    assert "Fixed 3 errors:" in result.stderr
    listed = sorted(line[2:-1] for line in result.stderr.splitlines() if line.startswith("- "))
    written = sorted(p.name for p in tmp_path.glob("*.py") if p.read_text() == HAZARD_FIXED)
    assert listed == written and len(written) == 3
    assert all(p.read_text() in (HAZARD, HAZARD_FIXED) for p in tmp_path.glob("*.py"))


def test_sigint_waits_until_a_write_is_complete():
    # with another thread alive, as in a test run: blocking the signal in this thread
    # alone would let that thread take it
    import threading

    received = []
    stop = threading.Event()
    other = threading.Thread(target=stop.wait)
    other.start()
    previous = signal.signal(signal.SIGINT, lambda *args: received.append("SIGINT"))
    try:
        with signals_deferred():
            os.kill(os.getpid(), signal.SIGINT)
            for _ in range(1000):  # bytecodes run: a pending handler would run here
                pass
            assert received == []  # held while the file is being written
        assert received == ["SIGINT"]
    finally:
        signal.signal(signal.SIGINT, previous)
        stop.set()
        other.join()
