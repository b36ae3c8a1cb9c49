"""`precision-lint server` driven over stdio by a real LSP client (pytest-lsp, with
the capabilities that VS Code and Neovim send)."""
from __future__ import annotations

import asyncio
import sys
from pathlib import Path

import pytest
import pytest_lsp
from lsprotocol import types
from pytest_lsp import ClientServerConfig, LanguageClient, client_capabilities, make_test_lsp_client

from conftest import HAZARD, HAZARD_FIXED, UNSAFE

PUBLISH = types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS
# Push diagnostics, UTF-16, versioned workspace edits, code action resolve.
VS_CODE = "visual-studio-code@v1.65.2"
# Pull diagnostics (textDocument/diagnostic) and UTF-8 positions.
NEOVIM = "neovim@v0.11.0"
TWO_FUNCTIONS = (
    "import torch\n"
    "\n"
    "def losses(xs):\n"
    "    total = torch.zeros(1)\n"
    "    for x in xs:\n"
    "        total += x.float().mean()\n"
    "    return total\n"
    "\n"
    "def counts(xs):\n"
    "    return len(xs)\n"
)


def editor_client() -> LanguageClient:
    """pytest-lsp's client, plus what editors answer: client/registerCapability."""
    client = make_test_lsp_client()
    client.registrations = []

    @client.feature(types.CLIENT_REGISTER_CAPABILITY)
    def register(params: types.RegistrationParams) -> None:
        client.registrations.extend(params.registrations)

    return client


@pytest_lsp.fixture(
    config=ClientServerConfig(
        server_command=[sys.executable, "-m", "precision_lint", "server"], client_factory=editor_client
    )
)
async def client(lsp_client: LanguageClient):
    yield
    if not lsp_client.stopped:  # test_shutdown_and_exit has already shut it down
        await lsp_client.shutdown_session()


async def start(client: LanguageClient, root: Path, spec: str = VS_CODE, **options) -> types.InitializeResult:
    return await client.initialize_session(
        types.InitializeParams(
            capabilities=client_capabilities(spec),
            root_uri=root.as_uri(),
            workspace_folders=[types.WorkspaceFolder(uri=root.as_uri(), name=root.name)],
            initialization_options=options or None,
        )
    )


async def published(client: LanguageClient, uri: str, version: int | None = None, timeout: float = 60):
    """The next diagnostics pushed for `uri` (at `version`, when given)."""

    async def next_one():
        while True:
            params = await client.wait_for_notification(PUBLISH)
            if params.uri == uri and (version is None or params.version == version):
                return params

    return await asyncio.wait_for(next_one(), timeout)  # (asyncio.timeout is Python 3.11's)


def open_document(client: LanguageClient, path: Path, text: str, version: int = 1) -> str:
    uri = path.as_uri()
    client.text_document_did_open(
        types.DidOpenTextDocumentParams(
            text_document=types.TextDocumentItem(uri=uri, language_id="python", version=version, text=text)
        )
    )
    return uri


def replace_all(client: LanguageClient, uri: str, text: str, version: int) -> None:
    client.text_document_did_change(
        types.DidChangeTextDocumentParams(
            text_document=types.VersionedTextDocumentIdentifier(uri=uri, version=version),
            content_changes=[types.TextDocumentContentChangeWholeDocument(text=text)],
        )
    )


def apply_edits(text: str, edits: list[types.TextEdit]) -> str:
    """What an editor does with a TextEdit list (ASCII text, `\\n` lines)."""
    lines = text.split("\n")
    starts = [0]
    for line in lines[:-1]:
        starts.append(starts[-1] + len(line) + 1)

    def offset(position: types.Position) -> int:
        return starts[position.line] + position.character

    for edit in sorted(edits, key=lambda e: (e.range.start.line, e.range.start.character), reverse=True):
        text = text[: offset(edit.range.start)] + edit.new_text + text[offset(edit.range.end) :]
    return text


def edits_of(action: types.CodeAction, uri: str) -> list[types.TextEdit]:
    edit = action.edit
    assert edit is not None, action
    if edit.document_changes:
        (change,) = edit.document_changes
        assert change.text_document.uri == uri
        return list(change.edits)
    return list(edit.changes[uri])


async def code_actions(client, uri, area: types.Range, only=None, diagnostics=()) -> list[types.CodeAction]:
    result = await client.text_document_code_action_async(
        types.CodeActionParams(
            text_document=types.TextDocumentIdentifier(uri=uri),
            range=area,
            context=types.CodeActionContext(diagnostics=list(diagnostics), only=only),
        )
    )
    return list(result or [])


def at(line: int, character: int) -> types.Range:
    return types.Range(start=types.Position(line=line, character=character), end=types.Position(line=line, character=character))


@pytest.mark.asyncio
async def test_initialize_advertises_what_the_server_does(client: LanguageClient, tmp_path):
    result = await start(client, tmp_path)
    capabilities = result.capabilities
    assert result.server_info.name == "precision-lint"
    assert capabilities.text_document_sync.change == types.TextDocumentSyncKind.Incremental
    assert capabilities.text_document_sync.save
    assert capabilities.hover_provider
    assert set(capabilities.code_action_provider.code_action_kinds) == {"quickfix", "source.fixAll.precision-lint"}
    assert capabilities.code_action_provider.resolve_provider
    assert capabilities.diagnostic_provider.inter_file_dependencies


@pytest.mark.asyncio
async def test_hazard_quick_fix_and_cleared_diagnostics(client: LanguageClient, tmp_path):
    await start(client, tmp_path)
    uri = open_document(client, tmp_path / "train.py", HAZARD)
    report = await published(client, uri, version=1)
    (diagnostic,) = report.diagnostics
    assert diagnostic.code == "PH001"
    assert diagnostic.source == "precision-lint"
    assert diagnostic.severity == types.DiagnosticSeverity.Error
    # `acc = torch.zeros(1)`: the range is the creation, 0-based
    assert diagnostic.range == types.Range(start=types.Position(line=1, character=6), end=types.Position(line=1, character=20))
    (related,) = diagnostic.related_information
    assert related.message == "counts added here"
    assert related.location.uri == uri and related.location.range.start.line == 3
    # no [project.urls] in pyproject.toml: no made-up link to a rule page
    assert diagnostic.code_description is None

    actions = await code_actions(client, uri, at(1, 8), diagnostics=[diagnostic])
    (fix,) = [a for a in actions if a.is_preferred]
    assert fix.kind == "quickfix" and "torch.int64" in fix.title
    fixed = apply_edits(HAZARD, edits_of(fix, uri))
    assert fixed == HAZARD_FIXED

    # the editor applies it and tells the server
    (edit,) = edits_of(fix, uri)
    client.text_document_did_change(
        types.DidChangeTextDocumentParams(
            text_document=types.VersionedTextDocumentIdentifier(uri=uri, version=2),
            content_changes=[types.TextDocumentContentChangePartial(range=edit.range, text=edit.new_text)],
        )
    )
    cleared = await published(client, uri, version=2)
    assert list(cleared.diagnostics) == []


@pytest.mark.asyncio
async def test_noqa_action_silences_the_line(client: LanguageClient, tmp_path):
    await start(client, tmp_path)
    uri = open_document(client, tmp_path / "train.py", HAZARD)
    (diagnostic,) = (await published(client, uri)).diagnostics
    actions = await code_actions(client, uri, diagnostic.range)
    (noqa,) = [a for a in actions if "noqa" in a.title]
    assert noqa.title == "PH001: Add `# noqa: PH001`" and not noqa.is_preferred
    silenced = apply_edits(HAZARD, edits_of(noqa, uri))
    assert silenced.splitlines()[1] == "acc = torch.zeros(1)  # noqa: PH001"
    replace_all(client, uri, silenced, 2)
    assert list((await published(client, uri, version=2)).diagnostics) == []


@pytest.mark.asyncio
async def test_unsafe_fix_is_not_offered_by_default(client: LanguageClient, tmp_path):
    await start(client, tmp_path)
    uri = open_document(client, tmp_path / "metrics.py", UNSAFE)
    (diagnostic,) = (await published(client, uri)).diagnostics
    actions = await code_actions(client, uri, diagnostic.range)
    assert [a.title for a in actions] == ["PH001: Add `# noqa: PH001`"]


@pytest.mark.asyncio
async def test_unsafe_fix_is_labelled_when_the_settings_allow_it(client: LanguageClient, tmp_path):
    await start(client, tmp_path, unsafeFixes=True)
    uri = open_document(client, tmp_path / "metrics.py", UNSAFE)
    (diagnostic,) = (await published(client, uri)).diagnostics
    actions = await code_actions(client, uri, diagnostic.range)
    (fix,) = [a for a in actions if "noqa" not in a.title]
    assert fix.title.endswith("(unsafe fix)") and not fix.is_preferred
    assert "dtype=torch.int64" in apply_edits(UNSAFE, edits_of(fix, uri))


@pytest.mark.asyncio
async def test_fix_all_applies_every_safe_fix_and_no_unsafe_one(client: LanguageClient, tmp_path):
    await start(client, tmp_path)
    text = HAZARD + "\n" + UNSAFE.replace("import torch\n", "")
    uri = open_document(client, tmp_path / "both.py", text)
    assert [d.code for d in (await published(client, uri)).diagnostics] == ["PH001", "PH001"]
    actions = await code_actions(client, uri, at(0, 0), only=["source.fixAll.precision-lint"])
    (fix_all,) = actions
    assert fix_all.kind == "source.fixAll.precision-lint"
    fixed = apply_edits(text, edits_of(fix_all, uri))
    assert fixed.startswith(HAZARD_FIXED)
    assert fixed.endswith(UNSAFE.replace("import torch\n", ""))  # unsafe: left as it was


@pytest.mark.asyncio
async def test_fix_all_in_a_light_bulb_is_resolved_when_chosen(client: LanguageClient, tmp_path):
    await start(client, tmp_path)
    uri = open_document(client, tmp_path / "train.py", HAZARD)
    await published(client, uri)
    (fix_all,) = [a for a in await code_actions(client, uri, at(0, 0)) if a.kind == "source.fixAll.precision-lint"]
    assert fix_all.edit is None  # computed only when the user picks it
    resolved = await client.code_action_resolve_async(fix_all)
    assert apply_edits(HAZARD, edits_of(resolved, uri)) == HAZARD_FIXED


BLOCKED = (
    "import torch\n"
    "import torch.distributed as dist\n"
    "def mean_zeros(xs):\n"
    "    acc = torch.zeros(1)\n"
    "    for x in xs:\n"
    "        acc += (x == 0).sum()\n"
    "    dist.all_reduce(acc)\n"
    "    acc /= len(xs)\n"
    "    return acc\n"
)


@pytest.mark.asyncio
async def test_related_places_name_the_adds_the_collective_and_the_use_that_blocks_the_fix(client, tmp_path):
    await start(client, tmp_path)
    uri = open_document(client, tmp_path / "mean.py", BLOCKED)
    accumulator, collective = (await published(client, uri)).diagnostics
    assert (accumulator.code, collective.code) == ("PH001", "PH003")
    related = {(r.message.split(":")[0], r.location.range.start.line) for r in accumulator.related_information}
    assert related == {("counts added here", 5), ("blocks the int64 fix", 7)}
    assert "divided in place" in accumulator.message  # the note: why there is no fix
    assert [(r.message, r.location.range.start.line) for r in collective.related_information] == [
        ("the float accumulator of counts", 3)
    ]
    actions = await code_actions(client, uri, accumulator.range)
    assert [a.title for a in actions] == ["PH001: Add `# noqa: PH001`"]  # no fix to offer


@pytest.mark.asyncio
async def test_saving_checks_again(client: LanguageClient, tmp_path):
    await start(client, tmp_path)
    path = tmp_path / "train.py"
    path.write_text(HAZARD, encoding="utf-8")
    uri = open_document(client, path, HAZARD)
    await published(client, uri, version=1)
    client.text_document_did_save(types.DidSaveTextDocumentParams(text_document=types.TextDocumentIdentifier(uri=uri)))
    assert [d.code for d in (await published(client, uri, version=1)).diagnostics] == ["PH001"]


@pytest.mark.asyncio
async def test_syntax_error_is_a_diagnostic(client: LanguageClient, tmp_path):
    await start(client, tmp_path)
    uri = open_document(client, tmp_path / "broken.py", "import torch\nacc = torch.zeros(1\n")
    (diagnostic,) = (await published(client, uri)).diagnostics
    assert diagnostic.code == "syntax-error"
    assert diagnostic.message.startswith("SyntaxError")
    assert diagnostic.severity == types.DiagnosticSeverity.Error
    assert diagnostic.range.start.line == 1


@pytest.mark.asyncio
async def test_hazard_introduced_in_another_function(client: LanguageClient, tmp_path):
    await start(client, tmp_path)
    uri = open_document(client, tmp_path / "loop.py", TWO_FUNCTIONS)
    assert list((await published(client, uri, version=1)).diagnostics) == []
    # the user turns `counts` into a float counter, typing into the second function only
    start_line = TWO_FUNCTIONS.splitlines().index("def counts(xs):")
    body = "    seen = torch.zeros(1)\n    for x in xs:\n        seen += (x == 0).sum()\n    return seen.item()\n"
    client.text_document_did_change(
        types.DidChangeTextDocumentParams(
            text_document=types.VersionedTextDocumentIdentifier(uri=uri, version=2),
            content_changes=[
                types.TextDocumentContentChangePartial(
                    range=types.Range(
                        start=types.Position(line=start_line + 1, character=0),
                        end=types.Position(line=start_line + 2, character=0),
                    ),
                    text=body,
                )
            ],
        )
    )
    (diagnostic,) = (await published(client, uri, version=2)).diagnostics
    assert diagnostic.code == "PH001"
    assert diagnostic.range.start == types.Position(line=start_line + 1, character=11)


@pytest.mark.asyncio
async def test_a_form_feed_does_not_end_a_line(client: LanguageClient, tmp_path):
    # Python and LSP end lines at \n, \r\n and \r only; str.splitlines also splits at
    # a form feed (page breaks in older modules), which would put edits on the wrong line.
    await start(client, tmp_path)
    text = "import torch\n\x0c# counting\nacc = torch.zeros(1, dtype=torch.int64)\nfor x in xs:\n    acc += (x == 0).sum()\n"
    uri = open_document(client, tmp_path / "paged.py", text)
    assert list((await published(client, uri, version=1)).diagnostics) == []
    start_character = len("acc = torch.zeros(1")
    client.text_document_did_change(
        types.DidChangeTextDocumentParams(
            text_document=types.VersionedTextDocumentIdentifier(uri=uri, version=2),
            content_changes=[
                types.TextDocumentContentChangePartial(
                    range=types.Range(
                        start=types.Position(line=2, character=start_character),
                        end=types.Position(line=2, character=start_character + len(", dtype=torch.int64")),
                    ),
                    text="",
                )
            ],
        )
    )
    (diagnostic,) = (await published(client, uri, version=2)).diagnostics
    assert diagnostic.code == "PH001" and diagnostic.range.start == types.Position(line=2, character=6)


@pytest.mark.asyncio
async def test_hover_shows_the_rule_page(client: LanguageClient, tmp_path):
    await start(client, tmp_path)
    uri = open_document(client, tmp_path / "train.py", HAZARD)
    await published(client, uri)
    shown = await client.text_document_hover_async(
        types.HoverParams(text_document=types.TextDocumentIdentifier(uri=uri), position=types.Position(line=1, character=10))
    )
    assert shown.contents.kind == types.MarkupKind.Markdown
    assert "float-count-accumulator" in shown.contents.value and "## Fix safety" in shown.contents.value
    elsewhere = await client.text_document_hover_async(
        types.HoverParams(text_document=types.TextDocumentIdentifier(uri=uri), position=types.Position(line=0, character=2))
    )
    assert elsewhere is None


@pytest.mark.asyncio
async def test_config_change_reloads_settings(client: LanguageClient, tmp_path):
    await start(client, tmp_path)
    uri = open_document(client, tmp_path / "train.py", HAZARD)
    assert [d.code for d in (await published(client, uri)).diagnostics] == ["PH001"]
    # the server asked the editor to watch config files (VS Code registers watchers dynamically)
    async def registered():
        while not client.registrations:
            await asyncio.sleep(0.05)

    await asyncio.wait_for(registered(), 30)
    (registration,) = client.registrations
    assert registration.method == types.WORKSPACE_DID_CHANGE_WATCHED_FILES
    # the client sees the options as the JSON it received
    assert "**/pyproject.toml" in [w["globPattern"] for w in registration.register_options["watchers"]]
    config = tmp_path / "pyproject.toml"
    config.write_text('[tool.precision-lint]\nignore = ["PH001"]\n', encoding="utf-8")
    client.workspace_did_change_watched_files(
        types.DidChangeWatchedFilesParams(changes=[types.FileEvent(uri=config.as_uri(), type=types.FileChangeType.Created)])
    )
    assert list((await published(client, uri)).diagnostics) == []


@pytest.mark.asyncio
async def test_per_file_ignores_apply_as_in_the_cli(client: LanguageClient, tmp_path):
    (tmp_path / "pyproject.toml").write_text(
        '[tool.precision-lint]\nper-file-ignores = { "legacy/*" = ["PH001"] }\n', encoding="utf-8"
    )
    await start(client, tmp_path)
    legacy = open_document(client, tmp_path / "legacy" / "old.py", HAZARD)
    assert list((await published(client, legacy)).diagnostics) == []
    current = open_document(client, tmp_path / "new.py", HAZARD)
    assert [d.code for d in (await published(client, current)).diagnostics] == ["PH001"]


@pytest.mark.asyncio
async def test_broken_config_is_shown_not_crashed_on(client: LanguageClient, tmp_path):
    (tmp_path / "pyproject.toml").write_text("[tool.precision-lint]\nselekt = []\n", encoding="utf-8")
    await start(client, tmp_path)
    uri = open_document(client, tmp_path / "train.py", HAZARD)
    message, report = await asyncio.gather(client.wait_for_notification(types.WINDOW_SHOW_MESSAGE), published(client, uri))
    assert message.type == types.MessageType.Error and "selekt" in message.message
    assert list(report.diagnostics) == []


@pytest.mark.asyncio
async def test_superseded_versions_are_never_published(client: LanguageClient, tmp_path):
    await start(client, tmp_path, debounceMs=300)
    uri = open_document(client, tmp_path / "train.py", HAZARD)
    await published(client, uri, version=1)
    versions: list[int] = []
    handle = client.protocol._handle_notification

    def record(method, params):  # every push, however close together they come
        if method == PUBLISH:
            versions.append(params.version)
        return handle(method, params)

    client.protocol._handle_notification = record
    for version in range(2, 12):  # ten keystrokes, faster than the debounce
        replace_all(client, uri, HAZARD + "#" * version + "\n", version)
    assert (await published(client, uri, version=11)).diagnostics[0].code == "PH001"
    await asyncio.sleep(0.5)
    assert versions == [11]


@pytest.mark.asyncio
async def test_pull_diagnostics_in_utf8(client: LanguageClient, tmp_path):
    await start(client, tmp_path, NEOVIM)
    text = HAZARD.replace("acc = torch.zeros(1)", "é = 1; acc = torch.zeros(1)")
    uri = open_document(client, tmp_path / "train.py", text)
    report = await client.text_document_diagnostic_async(
        types.DocumentDiagnosticParams(text_document=types.TextDocumentIdentifier(uri=uri))
    )
    (diagnostic,) = report.items
    assert diagnostic.code == "PH001"
    # `é` is 2 bytes in UTF-8: the creation starts at byte 14, code point 13
    assert diagnostic.range.start == types.Position(line=1, character=14)
    again = await client.text_document_diagnostic_async(
        types.DocumentDiagnosticParams(text_document=types.TextDocumentIdentifier(uri=uri), previous_result_id=report.result_id)
    )
    assert again.kind == "unchanged"
    assert uri not in client.diagnostics  # pulled, so never pushed as well


@pytest.mark.asyncio
async def test_requests_are_answered_while_a_large_file_is_checked(client: LanguageClient, tmp_path):
    await start(client, tmp_path)
    small = open_document(client, tmp_path / "small.py", HAZARD)
    await published(client, small)
    body = "".join(f"def f{i}(xs):\n    acc = torch.zeros(1)\n    for x in xs:\n        acc += (x == 0).sum()\n    return acc.item()\n\n" for i in range(1500))
    large = open_document(client, tmp_path / "large.py", "import torch\n" + body)
    large_done = asyncio.ensure_future(published(client, large))
    shown = await client.text_document_hover_async(
        types.HoverParams(text_document=types.TextDocumentIdentifier(uri=small), position=types.Position(line=1, character=10))
    )
    assert shown is not None and not large_done.done()
    assert len((await large_done).diagnostics) == 1500


@pytest.mark.asyncio
async def test_helper_module_change_changes_a_callers_diagnostics(client: LanguageClient, tmp_path):
    await start(client, tmp_path, NEOVIM)
    helper_text = "import torch\n\ndef new_counter():\n    return torch.zeros(1, dtype=torch.int64)\n"
    caller_text = (
        "from helpers import new_counter\n\n"
        "def count_zeros(xs):\n"
        "    seen = new_counter()\n"
        "    for x in xs:\n"
        "        seen += (x == 0).sum()\n"
        "    return seen.item()\n"
    )
    (tmp_path / "helpers.py").write_text(helper_text, encoding="utf-8")
    (tmp_path / "caller.py").write_text(caller_text, encoding="utf-8")
    helper = open_document(client, tmp_path / "helpers.py", helper_text)
    caller = open_document(client, tmp_path / "caller.py", caller_text)

    def pull(uri):
        return client.text_document_diagnostic_async(
            types.DocumentDiagnosticParams(text_document=types.TextDocumentIdentifier(uri=uri))
        )

    assert list((await pull(caller)).items) == []
    # the helper's counter becomes float32: the caller's accumulator is now a hazard
    replace_all(client, helper, helper_text.replace(", dtype=torch.int64", ""), 2)
    client.text_document_did_save(types.DidSaveTextDocumentParams(text_document=types.TextDocumentIdentifier(uri=helper)))
    assert [d.code for d in (await pull(caller)).items] == ["PH001"]


@pytest.mark.asyncio
async def test_shutdown_and_exit(client: LanguageClient, tmp_path):
    await start(client, tmp_path)
    uri = open_document(client, tmp_path / "train.py", HAZARD)
    await published(client, uri)
    await client.shutdown_session()
    assert client._server.returncode == 0
