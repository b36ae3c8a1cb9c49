"""A cache that cannot execute code (issue 11, item 4, F7): JSON with a schema version,
undecodable entries dropped, atomic writes merged across runs, markers repaired."""
from __future__ import annotations

import json
import pickle
from pathlib import Path

from conftest import HAZARD, run_cli
from precision_lint.cache import CACHEDIR_TAG, GITIGNORE, SCHEMA, JsonStore, ResultCache

CACHE = ".precision-lint-cache"


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def cache_file(directory: Path) -> Path:
    (found,) = (directory / CACHE).glob("v*/results-*.json")
    return found


def test_the_cache_is_json_with_a_schema_version(tmp_path):
    write(tmp_path / "a.py", HAZARD)
    assert run_cli("check", "a.py", cwd=tmp_path).returncode == 1
    data = json.loads(cache_file(tmp_path).read_text())
    assert data["schema"] == SCHEMA
    (entry,) = data["entries"].values()
    assert entry["diagnostics"][0]["code"] == "PH001"
    assert not list((tmp_path / CACHE).rglob("*.pickle"))


class _Payload:
    """Unpickling this runs code: it writes a marker file."""

    def __init__(self, marker: str) -> None:
        self.marker = marker

    def __reduce__(self):
        return (Path.write_text, (Path(self.marker), "pwned"))


def test_a_crafted_cache_entry_runs_no_code(tmp_path):
    # F7: the cache was pickle, so a crafted cache file ran code on every run
    write(tmp_path / "a.py", HAZARD)
    first = run_cli("check", "--output-format", "concise", "a.py", cwd=tmp_path)
    marker = tmp_path / "marker"
    cache_file(tmp_path).write_bytes(pickle.dumps({str((tmp_path / "a.py").absolute()): _Payload(str(marker))}))
    second = run_cli("check", "--output-format", "concise", "a.py", cwd=tmp_path)
    assert not marker.exists()
    assert (second.returncode, second.stdout) == (first.returncode, first.stdout)


def test_an_undecodable_entry_is_dropped_and_the_file_checked_again(tmp_path):
    # F7: a corrupt entry was an internal error on every run until deleted
    write(tmp_path / "a.py", HAZARD)
    first = run_cli("check", "--output-format", "concise", "a.py", cwd=tmp_path)
    path = cache_file(tmp_path)
    data = json.loads(path.read_text())
    (key,) = data["entries"]
    data["entries"][key]["diagnostics"] = [{"code": 5, "location": "nowhere"}]
    path.write_text(json.dumps(data))
    second = run_cli("check", "--output-format", "concise", "a.py", cwd=tmp_path)
    assert (second.returncode, second.stdout, second.stderr) == (first.returncode, first.stdout, first.stderr)
    repaired = json.loads(path.read_text())["entries"][key]["diagnostics"]
    assert repaired[0]["code"] == "PH001"


def test_a_truncated_cache_file_and_another_schema_are_ignored(tmp_path):
    write(tmp_path / "a.py", HAZARD)
    first = run_cli("check", "--output-format", "concise", "a.py", cwd=tmp_path)
    path = cache_file(tmp_path)
    path.write_text(path.read_text()[:40])
    assert run_cli("check", "--output-format", "concise", "a.py", cwd=tmp_path).stdout == first.stdout
    data = json.loads(path.read_text())
    data["schema"] = SCHEMA + 1
    path.write_text(json.dumps(data))
    assert ResultCache(tmp_path / CACHE).store.entries == {}


def test_an_empty_or_missing_gitignore_and_cachedir_tag_are_repaired(tmp_path):
    # F7: a full disk once left an empty .gitignore that was never written again
    write(tmp_path / "a.py", HAZARD)
    run_cli("check", "a.py", cwd=tmp_path)
    ignore, tag = tmp_path / CACHE / ".gitignore", tmp_path / CACHE / "CACHEDIR.TAG"
    assert (ignore.read_text(), tag.read_text()) == (GITIGNORE, CACHEDIR_TAG)
    ignore.write_text("")
    tag.unlink()
    write(tmp_path / "a.py", HAZARD + "\n")  # new content: the cache is written again
    run_cli("check", "a.py", cwd=tmp_path)
    assert (ignore.read_text(), tag.read_text()) == (GITIGNORE, CACHEDIR_TAG)


def test_a_custom_gitignore_is_left_alone(tmp_path):
    write(tmp_path / CACHE / ".gitignore", "# mine\n*\n")
    write(tmp_path / "a.py", HAZARD)
    run_cli("check", "a.py", cwd=tmp_path)
    assert (tmp_path / CACHE / ".gitignore").read_text() == "# mine\n*\n"


def test_two_runs_saving_at_once_keep_each_others_entries(tmp_path):
    first, second = JsonStore(tmp_path, "results"), JsonStore(tmp_path, "results")  # both read an empty cache
    first.put("a.py", {"n": 1})
    second.put("b.py", {"n": 2})
    first.save()
    second.save()
    merged = JsonStore(tmp_path, "results")
    assert (merged.get("a.py"), merged.get("b.py")) == ({"n": 1}, {"n": 2})
    leftovers = [p.name for p in tmp_path.rglob("*") if p.name.endswith(".tmp")]
    assert leftovers == []


def test_a_failure_is_never_cached(tmp_path):
    (tmp_path / "bad.py").write_bytes(b"import torch\nx = '\xff'\n")
    write(tmp_path / "a.py", HAZARD)
    first = run_cli("check", "--output-format", "concise", ".", cwd=tmp_path)
    assert first.returncode == 2 and "bad.py:2:6: PH901" in first.stdout
    entries = json.loads(cache_file(tmp_path).read_text())["entries"]
    assert [Path(key).name for key in entries] == ["a.py"]


def test_results_are_cached_under_the_contents_that_were_checked(tmp_path):
    # the file may change between the lookup's hash and the worker's read: the entry
    # must be keyed on what the worker read
    import hashlib

    from conftest import run_patched_cli

    target = write(tmp_path / "a.py", HAZARD)
    patch = """
import precision_lint.cli as cli
cli.content_hash = lambda path: "hashed-before-an-edit"
"""
    assert run_patched_cli(patch, "check", "a.py", cwd=tmp_path).returncode == 1
    (entry,) = json.loads(cache_file(tmp_path).read_text())["entries"].values()
    assert entry["digest"] == hashlib.sha256(target.read_bytes()).hexdigest()
