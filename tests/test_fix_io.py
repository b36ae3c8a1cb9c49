"""`--fix` rewrites files exactly: newlines, BOM, coding cookie, permissions, no
temporary files left behind, and the same results on the parallel path."""
from __future__ import annotations

import os
import stat
import subprocess
from pathlib import Path

import pytest

from conftest import HAZARD, HAZARD_FIXED, UNSAFE, run_cli
from precision_lint.runner import PARALLEL_THRESHOLD

# No name binds the torch module: the fix adds `import torch` as a new line.
FROM_IMPORT = (
    "from torch import zeros as z, float32 as f32, count_nonzero\n"
    "acc = z(1, dtype=f32)\n"
    "for g in gs:\n"
    "    acc += count_nonzero(g)\n"
    "print(acc)\n"
)
FROM_IMPORT_FIXED = "import torch\n" + FROM_IMPORT.replace("dtype=f32", "dtype=torch.int64")


def cli(cwd: Path, *args: str) -> subprocess.CompletedProcess:
    return run_cli(*args, cwd=cwd)


def snapshot(directory: Path) -> set[str]:
    return {str(p.relative_to(directory)) for p in directory.rglob("*")}


@pytest.mark.parametrize("newline", ["\r\n", "\r"], ids=["crlf", "cr"])
def test_fix_keeps_newlines(tmp_path, newline):
    target = tmp_path / "a.py"
    target.write_bytes(HAZARD.replace("\n", newline).encode())
    result = cli(tmp_path, "check", "--fix", "a.py")
    assert result.returncode == 0, result.stdout + result.stderr
    assert target.read_bytes() == HAZARD_FIXED.replace("\n", newline).encode()


@pytest.mark.parametrize("newline", ["\r\n", "\r"], ids=["crlf", "cr"])
def test_fix_keeps_newlines_in_an_added_line(tmp_path, newline):
    target = tmp_path / "a.py"
    target.write_bytes(FROM_IMPORT.replace("\n", newline).encode())
    result = cli(tmp_path, "check", "--fix", "a.py")
    assert result.returncode == 0, result.stdout + result.stderr
    assert target.read_bytes() == FROM_IMPORT_FIXED.replace("\n", newline).encode()


def test_fix_keeps_utf8_bom(tmp_path):
    target = tmp_path / "a.py"
    header = "# Gr\u00fc\u00dfe, \u6570\u5b57\n"
    target.write_bytes(b"\xef\xbb\xbf" + (header + HAZARD).encode("utf-8"))
    result = cli(tmp_path, "check", "--fix", "a.py")
    assert result.returncode == 0, result.stdout + result.stderr
    assert target.read_bytes() == b"\xef\xbb\xbf" + (header + HAZARD_FIXED).encode("utf-8")


def test_check_positions_in_bom_file(tmp_path):
    target = tmp_path / "a.py"
    target.write_bytes(b"\xef\xbb\xbf" + HAZARD.encode("utf-8"))
    result = cli(tmp_path, "check", "--no-cache", "--output-format", "concise", "a.py")
    assert result.returncode == 1
    assert "a.py:2:7: PH001 error [*]" in result.stdout


def test_fix_keeps_latin1_coding_cookie_encoding(tmp_path):
    target = tmp_path / "a.py"
    header = "# -*- coding: latin-1 -*-\n# caf\u00e9 \u00b5s \u00bd\n"
    comment_line = "acc = torch.zeros(1)  # \u00e9t\u00e9\n"
    source = header + HAZARD.replace("acc = torch.zeros(1)\n", comment_line)
    target.write_bytes(source.encode("latin-1"))
    result = cli(tmp_path, "check", "--fix", "a.py")
    assert result.returncode == 0, result.stdout + result.stderr
    expected = source.replace("torch.zeros(1)", "torch.zeros(1, dtype=torch.int64)")
    raw = target.read_bytes()
    assert raw == expected.encode("latin-1")
    with pytest.raises(UnicodeDecodeError):
        raw.decode("utf-8")  # still latin-1, not re-encoded as UTF-8


@pytest.mark.parametrize("mode", [0o754, 0o600])
def test_fix_keeps_permission_bits(tmp_path, mode):
    target = tmp_path / "a.py"
    target.write_text(HAZARD)
    os.chmod(target, mode)
    result = cli(tmp_path, "check", "--fix", "a.py")
    assert result.returncode == 0, result.stdout + result.stderr
    assert target.read_text() == HAZARD_FIXED
    assert stat.S_IMODE(target.stat().st_mode) == mode


def test_fix_leaves_no_temporary_files(tmp_path):
    (tmp_path / "a.py").write_text(HAZARD)
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "b.py").write_text(HAZARD)
    (tmp_path / "pkg" / "u.py").write_text(UNSAFE)
    before = snapshot(tmp_path)
    result = cli(tmp_path, "check", "--fix", "--unsafe-fixes", ".")
    assert result.returncode == 0, result.stdout + result.stderr
    assert (tmp_path / "pkg" / "b.py").read_text() == HAZARD_FIXED
    assert snapshot(tmp_path) == before


def test_fix_writes_through_a_symlink(tmp_path):
    real = tmp_path / "real" / "a.py"
    real.parent.mkdir()
    real.write_text(HAZARD)
    link = tmp_path / "view" / "a.py"
    link.parent.mkdir()
    link.symlink_to(Path("..") / "real" / "a.py")
    result = cli(tmp_path, "check", "--fix", "view/a.py")
    assert result.returncode == 0, result.stdout + result.stderr
    assert link.is_symlink(), "the symlink was replaced by a regular file"
    assert real.read_text() == HAZARD_FIXED


def test_diff_and_failed_fix_leave_no_temporary_files(tmp_path):
    (tmp_path / "a.py").write_text(HAZARD)
    (tmp_path / "bad.py").write_text("import torch\nx = = 1\n" + HAZARD)
    before = snapshot(tmp_path)
    diff = cli(tmp_path, "check", "--diff", ".")
    assert diff.returncode == 1
    assert snapshot(tmp_path) == before
    assert (tmp_path / "a.py").read_text() == HAZARD


# -- the parallel path -------------------------------------------------------------
COUNT = PARALLEL_THRESHOLD + 8


def _tree(root: Path) -> dict[str, str]:
    """COUNT files in nested folders: most with a safe fix, some unsafe, some clean."""
    files = {}
    for i in range(COUNT):
        name = f"pkg{i % 3}/mod_{i:02d}.py"
        files[name] = UNSAFE if i % 7 == 3 else (HAZARD_FIXED if i % 7 == 5 else HAZARD)
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)
    return files


def test_many_files_checked(tmp_path):
    files = _tree(tmp_path)
    assert len(files) >= PARALLEL_THRESHOLD + 4
    result = cli(tmp_path, "check", "--no-cache", "--output-format", "concise", ".")
    assert result.returncode == 1
    lines = [line for line in result.stdout.splitlines() if ": PH001 " in line]
    expected = sorted(
        f"{name}:3:11: PH001 error `acc`" if text == UNSAFE else f"{name}:2:7: PH001 error [*] `acc`"
        for name, text in files.items()
        if text != HAZARD_FIXED
    )
    assert [line.split(" accumulates")[0] for line in lines] == expected
    assert f"Found {len(expected)} errors." in result.stdout


def test_many_files_fixed(tmp_path):
    files = _tree(tmp_path)
    before = snapshot(tmp_path)
    unsafe = [name for name, text in files.items() if text == UNSAFE]
    safe = [name for name, text in files.items() if text == HAZARD]
    result = cli(tmp_path, "check", "--fix", "--show-fixes", ".")
    assert result.returncode == 1
    assert f"Found {len(safe) + len(unsafe)} errors ({len(safe)} fixed, {len(unsafe)} remaining)." in result.stdout
    assert f"Fixed {len(safe)} errors:" in result.stdout
    for name, text in files.items():
        expected = HAZARD_FIXED if text in (HAZARD, HAZARD_FIXED) else UNSAFE
        assert (tmp_path / name).read_text() == expected, name
    assert snapshot(tmp_path) == before

    again = cli(tmp_path, "check", "--no-cache", "--output-format", "concise", ".")
    lines = [line.split(":")[0] for line in again.stdout.splitlines() if ": PH001 " in line]
    assert lines == sorted(unsafe)

    unsafe_run = cli(tmp_path, "check", "--fix", "--unsafe-fixes", ".")
    assert unsafe_run.returncode == 0
    assert all("dtype=torch.int64" in (tmp_path / name).read_text() for name in files)


def test_many_files_diff(tmp_path):
    files = _tree(tmp_path)
    result = cli(tmp_path, "check", "--diff", ".")
    assert result.returncode == 1
    safe = sorted(name for name, text in files.items() if text == HAZARD)
    headers = [line[4:] for line in result.stdout.splitlines() if line.startswith("--- ")]
    assert sorted(headers) == safe
    for name, text in files.items():
        assert (tmp_path / name).read_text() == text


def test_many_files_keep_their_encodings(tmp_path):
    variants = {
        "crlf": (HAZARD.replace("\n", "\r\n").encode(), HAZARD_FIXED.replace("\n", "\r\n").encode()),
        "bom": (b"\xef\xbb\xbf" + HAZARD.encode(), b"\xef\xbb\xbf" + HAZARD_FIXED.encode()),
        "latin1": (
            ("# coding: latin-1\n# \u00e9\n" + HAZARD).encode("latin-1"),
            ("# coding: latin-1\n# \u00e9\n" + HAZARD_FIXED).encode("latin-1"),
        ),
    }
    expected = {}
    for i in range(COUNT):
        kind = list(variants)[i % len(variants)]
        path = tmp_path / f"{kind}_{i:02d}.py"
        path.write_bytes(variants[kind][0])
        os.chmod(path, 0o640 if i % 2 else 0o755)
        expected[path] = (variants[kind][1], 0o640 if i % 2 else 0o755)
    result = cli(tmp_path, "check", "--fix", ".")
    assert result.returncode == 0, result.stdout + result.stderr
    for path, (raw, mode) in expected.items():
        assert path.read_bytes() == raw, path.name
        assert stat.S_IMODE(path.stat().st_mode) == mode, path.name
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(p.name for p in expected)
