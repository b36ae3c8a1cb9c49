"""The language server's parts on their own: positions in every encoding, edits,
settings as the CLI resolves them, rule links, and the check scheduler."""
from __future__ import annotations

import asyncio
import json
import sys
import threading
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from conftest import HAZARD, run_cli
from precision_lint.diagnostics import Location
from precision_lint.server.actions import kind_requested, minimal_edit
from precision_lint.server.checking import CheckRequest, CheckResult
from precision_lint.server.documents import DocumentStore, TextChange, apply_change, uri_to_path
from precision_lint.server.lsp_diagnostics import rule_page_url
from precision_lint.server.positions import UTF8, UTF16, UTF32, PositionMap
from precision_lint.server.scheduler import CheckScheduler
from precision_lint.server.settings import EditorOptions, resolve_settings


# -- positions -----------------------------------------------------------------
@pytest.mark.parametrize(("encoding", "character"), [(UTF8, 9), (UTF16, 6), (UTF32, 5)])
def test_columns_count_the_encodings_units(encoding, character):
    # "é" is 2 UTF-8 bytes and 1 UTF-16 unit; the emoji 4 bytes and 2 UTF-16 units
    positions = PositionMap("x\n\u00e9a\U0001f600bx = 1\n", encoding)
    lsp = positions.to_lsp(Location(2, 6))  # before "x", the 5th code point
    assert (lsp.line, lsp.character) == (1, character)
    assert positions.to_engine(1, character) == Location(2, 6)


def test_a_position_inside_a_surrogate_pair_counts_as_before_it():
    positions = PositionMap("\U0001f600x\n", UTF16)
    assert positions.to_engine(0, 1) == Location(1, 1)


def test_lines_end_as_lsp_says_and_a_form_feed_does_not_end_one():
    text = "a\r\nb\rc\x0cd\ne"
    positions = PositionMap(text, UTF16)
    assert positions.offset(1, 0) == text.index("b")
    assert positions.offset(2, 2) == text.index("d")  # "c\x0cd" is one line
    assert positions.offset(3, 0) == text.index("e")


def test_positions_past_the_end_clamp():
    positions = PositionMap("ab\ncd", UTF16)
    assert positions.offset(0, 99) == 2  # end of the line, not into the next
    assert positions.offset(7, 0) == 5
    end = positions.to_lsp(Location(9, 1))
    assert (end.line, end.character) == (1, 2)


# -- document changes ------------------------------------------------------------
def test_incremental_changes_apply_in_order_on_crlf_text():
    store = DocumentStore(UTF16)
    store.open("file:///x.py", "import torch\r\nacc = 0.0\r\n", 1)
    document = store.change(
        "file:///x.py",
        2,
        [TextChange("1", (1, 6), (1, 9)), TextChange("\r\nprint(acc)", (1, 7), (1, 7))],
    )
    assert document.text == "import torch\r\nacc = 1\r\nprint(acc)\r\n"
    assert document.version == 2


def test_a_whole_text_change_replaces_everything():
    assert apply_change("old", TextChange("new")) == "new"


def test_an_open_document_is_read_from_the_store_and_a_closed_one_from_disk(tmp_path):
    path = tmp_path / "helpers.py"
    path.write_text("on disk\n", encoding="utf-8")
    store = DocumentStore()
    assert store.text_of(path) == "on disk\n"
    store.open(path.as_uri(), "in the editor\n", 1)
    assert store.text_of(path) == "in the editor\n"
    assert store.dependents_of(path.as_uri()) == []


def test_uri_to_path():
    assert uri_to_path("file:///home/me/a%20b.py") == Path("/home/me/a b.py")
    assert uri_to_path("untitled:Untitled-1") is None


# -- edits ------------------------------------------------------------------------
def test_minimal_edit_trims_to_the_change():
    assert minimal_edit("a = torch.zeros(1)\n", "a = torch.zeros(1, dtype=torch.int64)\n") == (
        17,
        17,
        ", dtype=torch.int64",
    )


def test_minimal_edit_never_splits_a_crlf():
    old, new = "a\r\nb", "a\r\r\nb"
    start, end, content = minimal_edit(old, new)
    assert old[start:end] in ("\r\n", "a\r\n") and old[:start] + content + old[end:] == new
    assert old[start - 1 : start + 1] != "\r\n"


def test_kind_requested_follows_lsp_prefixes():
    assert kind_requested("source.fixAll.precision-lint", ["source"])
    assert kind_requested("source.fixAll.precision-lint", ["source.fixAll"])
    assert kind_requested("quickfix", None)
    assert not kind_requested("quickfix", ["source.fixAll"])
    assert not kind_requested("source.fixAllx", ["source.fixAll"])


# -- settings -------------------------------------------------------------------
def test_settings_match_what_the_cli_reports(tmp_path):
    (tmp_path / "pyproject.toml").write_text(
        '[tool.precision-lint]\nextend-select = ["PH2"]\nper-file-ignores = { "legacy/*" = ["PH001"] }\nunfixable = ["PH005"]\n',
        encoding="utf-8",
    )
    for relative in ("train.py", "legacy/old.py"):
        path = tmp_path / relative
        path.parent.mkdir(exist_ok=True)
        path.write_text(HAZARD, encoding="utf-8")
        settings = resolve_settings(path, tmp_path, EditorOptions())
        cli = run_cli("check", "--output-format", "json", "--no-cache", str(path), cwd=tmp_path)
        reported = {d["code"] for d in json.loads(cli.stdout)}
        assert ("PH001" in settings.codes) == ("PH001" in reported), relative
        assert "PH201" in settings.codes and settings.unfixable == frozenset({"PH005"})


def test_settings_follow_each_files_nearest_config_as_the_cli_does(tmp_path):
    (tmp_path / "pyproject.toml").write_text("[tool.precision-lint]\nextend-select = ['PH201']\n", encoding="utf-8")
    (tmp_path / "tests").mkdir()
    nested = tmp_path / "tests" / "precision-lint.toml"
    nested.write_text("extend = '../pyproject.toml'\nignore = ['PH001']\n", encoding="utf-8")
    in_tests = resolve_settings(tmp_path / "tests" / "t.py", tmp_path, EditorOptions())
    assert "PH001" not in in_tests.codes and "PH201" in in_tests.codes
    assert in_tests.sources == (nested, tmp_path / "pyproject.toml")
    assert "PH001" in resolve_settings(tmp_path / "src" / "a.py", tmp_path, EditorOptions()).codes


def test_an_edit_to_an_extended_config_is_noticed(tmp_path):
    from precision_lint.server.settings import SettingsCache

    base = tmp_path / "pyproject.toml"
    base.write_text("[tool.precision-lint]\nignore = []\n", encoding="utf-8")
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "precision-lint.toml").write_text("extend = '../pyproject.toml'\n", encoding="utf-8")
    cache = SettingsCache(tmp_path, EditorOptions())
    assert "PH001" in cache.for_path(tmp_path / "sub" / "train.py").codes
    base.write_text("[tool.precision-lint]\nignore = ['PH001', 'PH002']\n", encoding="utf-8")
    assert "PH001" not in cache.for_path(tmp_path / "sub" / "train.py").codes


def test_excluded_files_are_not_checked(tmp_path):
    (tmp_path / "pyproject.toml").write_text('[tool.precision-lint]\nextend-exclude = ["generated"]\n', encoding="utf-8")
    assert resolve_settings(tmp_path / "generated" / "x.py", tmp_path, EditorOptions()).excluded
    assert not resolve_settings(tmp_path / "src" / "x.py", tmp_path, EditorOptions()).excluded


# -- rule links -------------------------------------------------------------------
def test_rule_page_link_comes_from_the_project_urls():
    urls = ("Homepage, https://example.org/home", "Repository, https://github.com/acme/precision-lint/")
    assert rule_page_url("PH001", urls) == "https://github.com/acme/precision-lint/blob/main/docs/rules/PH001.md"


def test_no_project_urls_no_link():
    assert rule_page_url("PH001", ()) is None
    assert rule_page_url("PH001", ("Changelog, https://example.org/changes",)) is None


# -- the scheduler ------------------------------------------------------------------
class _Harness:
    """A scheduler whose checks block until the test lets them finish."""

    def __init__(self) -> None:
        self.versions = {"u": 1}
        self.started: list[int] = []
        self.results: list[int] = []
        self.failures: list[str] = []
        self.gates: dict[int, threading.Event] = {}
        self.fail: set[int] = set()
        self.executor = ThreadPoolExecutor(max_workers=2)
        self.scheduler = CheckScheduler(
            self.executor,
            run=self.run,
            snapshot=lambda uri, generation: CheckRequest(uri, self.versions[uri], "", None, generation)
            if uri in self.versions
            else None,
            on_result=lambda result: self.results.append(result.request.version),
            on_failure=lambda uri, error: self.failures.append(str(error)),
            version_of=lambda uri: self.versions.get(uri),
        )

    def gate(self, version: int) -> threading.Event:
        return self.gates.setdefault(version, threading.Event())

    def run(self, request: CheckRequest) -> CheckResult:
        self.started.append(request.version)
        self.gate(request.version).wait(10)
        if request.version in self.fail:
            raise RuntimeError(f"boom {request.version}")
        return CheckResult(request, [])


async def _until(condition, timeout: float = 10) -> None:
    async def holds():
        while not condition():
            await asyncio.sleep(0.01)

    await asyncio.wait_for(holds(), timeout)  # (asyncio.timeout is Python 3.11's)


def test_versions_typed_during_a_check_are_skipped_and_its_result_dropped():
    async def scenario():
        harness = _Harness()
        harness.scheduler.schedule("u")
        await _until(lambda: harness.started == [1])
        for version in (2, 3, 4):  # typed while version 1 is being checked
            harness.versions["u"] = version
            harness.scheduler.schedule("u", 0.0)
        await asyncio.sleep(0.05)
        assert harness.started == [1]  # one check at a time per document
        harness.gate(1).set()
        harness.gate(4).set()
        result = await harness.scheduler.current("u")
        assert result.request.version == 4
        assert harness.started == [1, 4] and harness.results == [4]

    asyncio.run(scenario())


def test_debounce_restarts_on_every_change():
    async def scenario():
        harness = _Harness()
        harness.gate(3).set()
        for version in (1, 2, 3):
            harness.versions["u"] = version
            harness.scheduler.schedule("u", 0.2)
            await asyncio.sleep(0.05)
        await _until(lambda: harness.results == [3])
        assert harness.started == [3]

    asyncio.run(scenario())


def test_invalidate_rechecks_the_same_version():
    async def scenario():
        harness = _Harness()
        harness.gate(1).set()
        first = await harness.scheduler.current("u")
        harness.scheduler.invalidate("u")
        second = await harness.scheduler.current("u")
        assert (first.request.generation, second.request.generation) == (0, 1)
        assert harness.started == [1, 1]

    asyncio.run(scenario())


def test_a_failed_check_is_reported_and_waiters_released():
    async def scenario():
        harness = _Harness()
        harness.fail.add(1)
        harness.gate(1).set()
        assert await harness.scheduler.current("u") is None
        assert harness.failures == ["boom 1"] and harness.results == []

    asyncio.run(scenario())


def test_closing_drops_a_running_checks_result():
    async def scenario():
        harness = _Harness()
        harness.scheduler.schedule("u")
        await _until(lambda: harness.started == [1])
        del harness.versions["u"]
        harness.scheduler.close("u")
        harness.gate(1).set()
        await asyncio.sleep(0.1)
        assert harness.results == []

    asyncio.run(scenario())


# -- the command --------------------------------------------------------------------
def test_server_without_pygls_says_what_to_install():
    code = "import sys; sys.modules['pygls'] = None; from precision_lint.cli import main; sys.exit(main(['server']))"
    import subprocess

    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert result.returncode == 2
    assert "precision-lint[server]" in result.stderr


def test_server_is_a_listed_command():
    result = run_cli("server", "--help")
    assert result.returncode == 0 and "--unsafe-fixes" in result.stdout


# -- LSP diagnostics ------------------------------------------------------------------
def _ph001():
    from precision_lint.config import Settings
    from precision_lint.engine import check_source

    (diagnostic,) = check_source(HAZARD, "x.py", Settings(root=Path(".")).enabled_codes())
    return diagnostic


def test_related_lines_go_into_the_message_when_the_client_cannot_show_them():
    from precision_lint.server.lsp_diagnostics import to_lsp

    diagnostic = _ph001()
    shown = to_lsp(diagnostic, "file:///x.py", PositionMap(HAZARD), related_support=False)
    assert shown.related_information is None
    assert shown.message.endswith("\ncounts added here: line 4")
    full = to_lsp(diagnostic, "file:///x.py", PositionMap(HAZARD), related_support=True)
    assert full.message == diagnostic.message and len(full.related_information) == 1


def test_a_rule_link_is_set_when_the_package_names_its_repository(monkeypatch):
    from precision_lint.server import lsp_diagnostics

    monkeypatch.setattr(lsp_diagnostics, "_installed_project_urls", lambda: ("Source, https://git.example/pl",))
    shown = lsp_diagnostics.to_lsp(_ph001(), "file:///x.py", PositionMap(HAZARD))
    assert shown.code_description.href == "https://git.example/pl/blob/main/docs/rules/PH001.md"


def test_an_edited_config_file_is_noticed_without_a_watcher(tmp_path):
    from precision_lint.server.settings import SettingsCache

    config = tmp_path / "pyproject.toml"
    config.write_text('[tool.precision-lint]\nignore = []\n', encoding="utf-8")
    cache = SettingsCache(tmp_path, EditorOptions())
    assert "PH001" in cache.for_path(tmp_path / "train.py").codes
    config.write_text('[tool.precision-lint]\nignore = ["PH001"]\n', encoding="utf-8")
    assert "PH001" not in cache.for_path(tmp_path / "train.py").codes


# -- editor options ---------------------------------------------------------------------
def test_editor_options_from_initialization_options_and_settings():
    from precision_lint.server.app import _options_from

    base = EditorOptions()
    assert _options_from({"unsafeFixes": True, "debounceMs": 100}, base) == EditorOptions(True, 0.1)
    # workspace/didChangeConfiguration often nests them under the server's name
    assert _options_from({"precision-lint": {"unsafeFixes": True}}, base).unsafe_fixes
    assert _options_from({"unsafeFixes": "yes", "debounceMs": -1}, base) == base
    assert _options_from(None, base) == base


def test_every_option_in_the_editor_docs_is_understood(repo_root):
    import re

    from precision_lint.server.app import _options_from

    table = (repo_root / "docs" / "editors.md").read_text(encoding="utf-8").split("| option |")[1].split("\n\n")[0]
    documented = re.findall(r"^\| `(\w+)` \| `([^`]+)` \|", table, re.MULTILINE)
    assert {name for name, _ in documented} == {"unsafeFixes", "debounceMs"}
    defaults = EditorOptions()
    assert defaults.unsafe_fixes is (dict(documented)["unsafeFixes"] == "true")
    assert defaults.debounce * 1000 == float(dict(documented)["debounceMs"])
    for name, _ in documented:
        value = True if name == "unsafeFixes" else 500
        assert _options_from({name: value}, defaults) != defaults, name
