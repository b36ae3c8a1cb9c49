"""The command line's manners: grouped --help with every option explained, "did you
mean" for commands, rule codes and config keys, --statistics as JSON, --fix-only,
--add-noqa=REASON, and `precision-lint clean`."""
from __future__ import annotations

import argparse
import json
from pathlib import Path

from conftest import HAZARD, UNSAFE, run_cli

from precision_lint.arguments import build_parser

GROUPS = ("Fixing:", "Rule selection:", "File selection:", "Configuration:", "Output:", "Suppression:", "Verify (with --verify, and for `verify`):")


def _parsers(parser: argparse.ArgumentParser):
    yield parser
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for sub in action.choices.values():
                yield from _parsers(sub)


def test_every_option_of_every_command_is_explained():
    unexplained = [
        f"{parser.prog} {'/'.join(action.option_strings) or action.dest}"
        for parser in _parsers(build_parser())
        for action in parser._actions
        if not isinstance(action, argparse._SubParsersAction) and not action.help
    ]
    assert unexplained == []


def test_check_help_is_grouped(tmp_path):
    result = run_cli("check", "--help", cwd=tmp_path)
    assert result.returncode == 0
    positions = [result.stdout.index(f"\n{group}\n") for group in GROUPS]
    assert positions == sorted(positions)
    top = run_cli("--help", cwd=tmp_path)
    assert "clean" in top.stdout and "check" in top.stdout


def test_a_mistyped_command_is_named_as_one(tmp_path):
    result = run_cli("chek", "src", cwd=tmp_path)
    assert result.returncode == 2
    assert result.stderr == "precision-lint: error: unknown command 'chek'; did you mean 'check'?\n"
    (tmp_path / "chek").mkdir()  # a folder of that name is a path to check
    (tmp_path / "chek" / "a.py").write_text(HAZARD)
    as_path = run_cli("chek", "--no-cache", cwd=tmp_path)
    assert as_path.returncode == 1 and "chek/a.py:2:7: PH001" in as_path.stdout
    missing = run_cli("nothing-like-a-command.py", cwd=tmp_path)
    assert missing.returncode == 2 and "No such file or directory" in missing.stderr


def test_unknown_rule_codes_suggest_the_closest(tmp_path):
    (tmp_path / "a.py").write_text(HAZARD)
    select = run_cli("check", "--select", "PH01", "a.py", cwd=tmp_path)
    assert select.returncode == 2 and "Unknown rule selector: `PH01`; did you mean `PH001`?" in select.stderr
    by_name = run_cli("check", "--ignore", "float-count-accumulator", "a.py", cwd=tmp_path)
    assert by_name.returncode == 2 and "did you mean `PH001` (float-count-accumulator)?" in by_name.stderr
    (tmp_path / "pyproject.toml").write_text("[tool.precision-lint]\nselect = ['PH0001']\n")
    config = run_cli("check", "a.py", cwd=tmp_path)
    assert config.returncode == 2 and "did you mean `PH001`?" in config.stderr
    rule = run_cli("rule", "PH01", cwd=tmp_path)
    assert rule.returncode == 2 and "unknown rule `PH01`; did you mean `PH001`?" in rule.stderr


def test_statistics_as_json(tmp_path):
    (tmp_path / "a.py").write_text(HAZARD)
    (tmp_path / "b.py").write_text(UNSAFE)
    result = run_cli("check", "--no-cache", "--statistics", "--output-format", "json", ".", cwd=tmp_path)
    assert result.returncode == 1
    assert json.loads(result.stdout) == [
        {"code": "PH001", "name": "float-count-accumulator", "count": 2, "fixable": True, "fixable_count": 1}
    ]
    text = run_cli("check", "--no-cache", "--statistics", ".", cwd=tmp_path)
    assert text.stdout == "2\tPH001\t[*] float-count-accumulator\n"


def test_fix_only_fixes_and_does_not_report_the_rest(tmp_path):
    (tmp_path / "a.py").write_text(HAZARD)
    (tmp_path / "b.py").write_text(UNSAFE)  # its fix is unsafe: it stays
    result = run_cli("check", "--no-cache", "--fix-only", ".", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert result.stdout == "Fixed 1 error.\n"
    assert "dtype=torch.int64" in (tmp_path / "a.py").read_text()
    assert (tmp_path / "b.py").read_text() == UNSAFE
    nothing = run_cli("check", "--no-cache", "--fix-only", "--exit-non-zero-on-fix", ".", cwd=tmp_path)
    assert nothing.returncode == 0 and nothing.stdout == "No errors fixed.\n"
    (tmp_path / "a.py").write_text(HAZARD)
    fixed = run_cli("check", "--no-cache", "--fix-only", "--exit-non-zero-on-fix", ".", cwd=tmp_path)
    assert fixed.returncode == 1


def test_add_noqa_with_a_reason(tmp_path):
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "a.py").write_text(HAZARD)
    result = run_cli("check", "--no-cache", "--add-noqa=counts stay below 2^24", "src", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert "acc = torch.zeros(1)  # noqa: PH001 counts stay below 2^24\n" in (tmp_path / "src" / "a.py").read_text()
    assert run_cli("check", "--no-cache", "src", cwd=tmp_path).returncode == 0
    (tmp_path / "src" / "b.py").write_text(HAZARD)
    # without `=`, what follows is a path, not a reason
    plain = run_cli("check", "--no-cache", "--add-noqa", "src", cwd=tmp_path)
    assert plain.returncode == 0 and plain.stdout == "Added 1 noqa directive.\n"
    assert "acc = torch.zeros(1)  # noqa: PH001\n" in (tmp_path / "src" / "b.py").read_text()


def test_clean_removes_the_caches_and_nothing_else(tmp_path):
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "a.py").write_text(HAZARD)
    assert run_cli("check", "sub", cwd=tmp_path).returncode == 1
    assert run_cli("check", ".", cwd=tmp_path / "sub").returncode == 1
    caches = sorted(p.relative_to(tmp_path) for p in tmp_path.rglob(".precision-lint-cache"))
    assert caches == [Path(".precision-lint-cache"), Path("sub/.precision-lint-cache")]
    impostor = tmp_path / "data" / ".precision-lint-cache"
    impostor.mkdir(parents=True)
    (impostor / "keep.txt").write_text("not a cache")
    result = run_cli("clean", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert sorted(result.stdout.splitlines()) == ["Removed .precision-lint-cache", "Removed sub/.precision-lint-cache"]
    assert sorted(p.relative_to(tmp_path) for p in tmp_path.rglob(".precision-lint-cache")) == [Path("data/.precision-lint-cache")]
    assert (impostor / "keep.txt").exists()
    again = run_cli("clean", "--cache-dir", "data/.precision-lint-cache", cwd=tmp_path)
    assert again.stdout == "No cache to remove.\n" and "is not a precision-lint cache" in again.stderr


def test_a_cache_folder_that_holds_the_project_is_never_the_cache_nor_removed(tmp_path):
    # the fault campaign: `cache-dir = ""` made the project root the cache (a `.gitignore`
    # of `*` hid it from git), and `clean` then removed the whole project
    (tmp_path / "a.py").write_text(HAZARD)
    config = tmp_path / "pyproject.toml"
    for value in ('""', "5", "true", '["a"]'):
        config.write_text(f"[tool.precision-lint]\ncache-dir = {value}\n")
        result = run_cli("check", "a.py", cwd=tmp_path)
        assert result.returncode == 2 and "`cache-dir` must name a folder" in result.stderr, value
    empty = run_cli("check", "--cache-dir", "", "a.py", cwd=tmp_path)
    assert empty.returncode == 2 and "a folder's name cannot be empty" in empty.stderr
    config.write_text('[tool.precision-lint]\ncache-dir = "."\n')
    result = run_cli("check", "a.py", cwd=tmp_path)
    assert result.returncode == 1 and "holds the project's files (such as a.py)" in result.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.py", "pyproject.toml"]
    # a root an older run made a cache of: only the cache's own entries go
    from precision_lint.cache import CACHEDIR_TAG, GITIGNORE

    (tmp_path / "CACHEDIR.TAG").write_text(CACHEDIR_TAG)
    (tmp_path / ".gitignore").write_text(GITIGNORE)
    (tmp_path / "v0.1.0-s3").mkdir()
    (tmp_path / "v0.1.0-s3" / "results-0123.json").write_text("{}")
    (tmp_path / "v2-s1").mkdir()  # the project's, though named like a version's entries
    (tmp_path / "v2-s1" / "config.json").write_text("{}")
    cleaned = run_cli("clean", cwd=tmp_path)
    assert cleaned.returncode == 0, cleaned.stderr
    assert cleaned.stdout == "Removed the cache's own files from . (the folder holds other files too: it stays)\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.py", "pyproject.toml", "v2-s1"]


def test_a_stray_file_or_an_earlier_layout_in_the_cache_folder_keeps_the_cache(tmp_path):
    # the review: any file the cache did not write turned the cache off for good
    (tmp_path / "a.py").write_text(HAZARD)
    assert run_cli("check", "a.py", cwd=tmp_path).returncode == 1
    cache = tmp_path / ".precision-lint-cache"
    (cache / ".DS_Store").write_bytes(b"\0")
    (cache / "v0.1.0-f2").mkdir()
    (cache / "v0.1.0-f2" / "results-abc.pickle").write_bytes(b"")
    again = run_cli("check", "a.py", cwd=tmp_path)
    assert again.returncode == 1 and again.stderr == ""
    # a link to a cache elsewhere is left alone (removing through it crashed)
    (tmp_path / "elsewhere").mkdir()
    (tmp_path / "elsewhere" / "link").symlink_to(cache)
    refused = run_cli("clean", "--cache-dir", "link", cwd=tmp_path / "elsewhere")
    assert refused.returncode == 0 and "Traceback" not in refused.stderr
    assert "link is a symbolic link (name the folder itself): left alone" in refused.stderr and cache.exists()
