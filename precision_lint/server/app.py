"""`precision-lint server`: the Language Server Protocol over stdio, on pygls.

The protocol thread only records texts and schedules work; checks and the fix-all
loop run in worker threads (scheduler.py). Diagnostics are pushed
(textDocument/publishDiagnostics) unless the client pulls them
(textDocument/diagnostic), never both, so an editor does not show them twice.
"""
from __future__ import annotations

import asyncio
import logging
from concurrent.futures import ThreadPoolExecutor
from dataclasses import replace
from pathlib import Path

from lsprotocol import types
from pygls.lsp.server import LanguageServer
from pygls.protocol import LanguageServerProtocol
from pygls.protocol.language_server import lsp_method

from .. import __version__
from ..config import CONFIG_NAMES, ConfigError
from ..fixer import applicable
from .actions import FIX_ALL, QUICK_FIX, Target, fix_all_action, fix_all_edit, kind_requested, quick_fixes
from .checking import CheckRequest, CheckResult, check_document
from .documents import DocumentStore, TextChange, uri_to_path
from .hover import hover
from .lsp_diagnostics import SOURCE, to_lsp
from .positions import UTF16, PositionMap
from .scheduler import CheckScheduler
from .settings import EditorOptions, SettingsCache

log = logging.getLogger(__name__)
CONFIG_FILES = CONFIG_NAMES  # pyproject.toml, precision-lint.toml, .precision-lint.toml
# checks run here, never on the protocol thread; two so one slow file holds up no other
CHECK_WORKERS = 2


class _OwnTextsProtocol(LanguageServerProtocol):
    """pygls keeps a copy of every open document, split with str.splitlines (which
    also breaks lines at a form feed or U+2028), and clamps the ranges of didChange
    params to that copy in place, so a change after a form feed reached our handler
    at the wrong column. The server keeps the texts itself (documents.py): these
    notifications go straight to its handlers."""

    @lsp_method(types.TEXT_DOCUMENT_DID_OPEN)
    def lsp_text_document__did_open(self, params: types.DidOpenTextDocumentParams):
        yield from self._to_handler(types.TEXT_DOCUMENT_DID_OPEN, params)

    @lsp_method(types.TEXT_DOCUMENT_DID_CHANGE)
    def lsp_text_document__did_change(self, params: types.DidChangeTextDocumentParams):
        yield from self._to_handler(types.TEXT_DOCUMENT_DID_CHANGE, params)

    @lsp_method(types.TEXT_DOCUMENT_DID_CLOSE)
    def lsp_text_document__did_close(self, params: types.DidCloseTextDocumentParams):
        yield from self._to_handler(types.TEXT_DOCUMENT_DID_CLOSE, params)

    def _to_handler(self, method: str, params):
        if (handler := self.fm.features.get(method)) is not None:
            yield handler, (params,), None


class PrecisionLintServer(LanguageServer):
    def __init__(self, options: EditorOptions) -> None:
        super().__init__(SOURCE, __version__, protocol_cls=_OwnTextsProtocol)
        self.options = options
        self.store = DocumentStore()
        self.settings = SettingsCache(Path.cwd(), options)
        self.executor = ThreadPoolExecutor(max_workers=CHECK_WORKERS, thread_name_prefix="precision-lint-check")
        self.scheduler = CheckScheduler(
            self.executor,
            run=lambda request: check_document(request, self.store),
            snapshot=self.snapshot,
            on_result=self.on_result,
            on_failure=self.on_failure,
            version_of=self.version_of,
        )
        self.pull = False  # the client asks for diagnostics (textDocument/diagnostic)
        self.refresh_support = False
        self.related_support = True
        self.versioned_edits = False
        self.resolve_edits = False
        self.encoding = UTF16
        self.reported_errors: set[str] = set()

    # -- the scheduler's callbacks (event loop thread) ----------------------------------
    def version_of(self, uri: str) -> int | None:
        document = self.store.get(uri)
        return document.version if document is not None else None

    def snapshot(self, uri: str, generation: int) -> CheckRequest | None:
        document = self.store.get(uri)
        if document is None:
            return None
        try:
            settings = self.settings.for_path(uri_to_path(uri))
        except ConfigError as error:
            return CheckRequest(uri, document.version, document.text, None, generation, str(error))
        return CheckRequest(uri, document.version, document.text, settings, generation)

    def on_result(self, result: CheckResult) -> None:
        if result.error:
            self.show_error(result.error)
        if not self.pull:
            self.publish(result)

    def on_failure(self, uri: str, error: BaseException) -> None:
        log.error("checking %s failed", uri, exc_info=error)
        self.show_error(f"precision-lint could not check {uri}: {type(error).__name__}: {error}")

    def show_error(self, message: str) -> None:
        if message in self.reported_errors:
            return
        self.reported_errors.add(message)
        self.window_show_message(types.ShowMessageParams(type=types.MessageType.Error, message=message))

    def publish(self, result: CheckResult) -> None:
        request = result.request
        self.text_document_publish_diagnostics(
            types.PublishDiagnosticsParams(
                uri=request.uri, version=request.version, diagnostics=self.lsp_diagnostics(result)
            )
        )

    def lsp_diagnostics(self, result: CheckResult) -> list[types.Diagnostic]:
        positions = PositionMap(result.request.text, self.encoding)
        return [to_lsp(d, result.request.uri, positions, self.related_support) for d in result.diagnostics]

    # -- what changes trigger --------------------------------------------------------
    def recheck_all(self) -> None:
        self.reported_errors.clear()
        for uri in self.store.open_uris():
            self.scheduler.invalidate(uri)
        self.ask_client_to_pull()

    def recheck_dependents(self, uri: str) -> None:
        dependents = self.store.dependents_of(uri)
        for other in dependents:
            self.scheduler.invalidate(other, self.options.debounce)
        if dependents:
            self.ask_client_to_pull()

    def ask_client_to_pull(self) -> None:
        if self.pull and self.refresh_support:
            self.workspace_diagnostic_refresh(None)

    def target(self, uri: str, result: CheckResult) -> Target:
        request = result.request
        return Target(uri, request.version, request.text, self.versioned_edits)


def _capability(value, *names):
    for name in names:
        value = getattr(value, name, None)
        if value is None:
            return None
    return value


def _options_from(raw: object, base: EditorOptions) -> EditorOptions:
    """{"unsafeFixes": bool, "debounceMs": int}, also nested under "precision-lint"."""
    if not isinstance(raw, dict):
        return base
    raw = raw.get(SOURCE, raw) if isinstance(raw.get(SOURCE), dict) else raw
    options = base
    if isinstance(raw.get("unsafeFixes"), bool):
        options = replace(options, unsafe_fixes=raw["unsafeFixes"])
    if isinstance(raw.get("debounceMs"), (int, float)) and raw["debounceMs"] >= 0:
        options = replace(options, debounce=raw["debounceMs"] / 1000)
    return options


def _changes(params: types.DidChangeTextDocumentParams) -> list[TextChange]:
    changes = []
    for change in params.content_changes:
        area = getattr(change, "range", None)
        if area is None:
            changes.append(TextChange(change.text))
        else:
            changes.append(
                TextChange(change.text, (area.start.line, area.start.character), (area.end.line, area.end.character))
            )
    return changes


def build_server(options: EditorOptions | None = None) -> PrecisionLintServer:
    server = PrecisionLintServer(options or EditorOptions())

    @server.feature(types.INITIALIZE)
    def initialize(ls: PrecisionLintServer, params: types.InitializeParams) -> None:
        capabilities = params.capabilities
        ls.options = _options_from(params.initialization_options, ls.options)
        root = uri_to_path(params.root_uri) if params.root_uri else None
        if root is None and params.workspace_folders:
            root = uri_to_path(params.workspace_folders[0].uri)
        ls.settings = SettingsCache(root or Path.cwd(), ls.options)
        ls.encoding = str(getattr(ls.workspace.position_encoding, "value", ls.workspace.position_encoding) or UTF16)
        ls.store.encoding = ls.encoding
        ls.pull = _capability(capabilities, "text_document", "diagnostic") is not None
        ls.refresh_support = bool(_capability(capabilities, "workspace", "diagnostics", "refresh_support"))
        # pulled reports have no such flag in LSP 3.17: clients that pull show them
        related = _capability(capabilities, "text_document", "publish_diagnostics", "related_information")
        ls.related_support = ls.pull or bool(related)
        ls.versioned_edits = bool(_capability(capabilities, "workspace", "workspace_edit", "document_changes"))
        resolvable = _capability(capabilities, "text_document", "code_action", "resolve_support", "properties") or []
        ls.resolve_edits = "edit" in resolvable

    @server.feature(types.INITIALIZED)
    async def initialized(ls: PrecisionLintServer, params: types.InitializedParams) -> None:
        watch = _capability(ls.client_capabilities, "workspace", "did_change_watched_files", "dynamic_registration")
        if not watch:
            return  # the editor's own config must send them (see docs/editors.md), or none come
        watchers = [types.FileSystemWatcher(glob_pattern=f"**/{name}") for name in CONFIG_FILES]
        watchers.append(types.FileSystemWatcher(glob_pattern="**/*.py"))
        registration = types.Registration(
            id=f"{SOURCE}-watched-files",
            method=types.WORKSPACE_DID_CHANGE_WATCHED_FILES,
            register_options=types.DidChangeWatchedFilesRegistrationOptions(watchers=watchers),
        )
        try:
            await ls.client_register_capability_async(types.RegistrationParams(registrations=[registration]))
        except Exception as error:  # the editor refused: settings then reload on save only
            log.warning("could not register for file changes: %s", error)

    @server.feature(types.TEXT_DOCUMENT_DID_OPEN)
    def did_open(ls: PrecisionLintServer, params: types.DidOpenTextDocumentParams) -> None:
        document = params.text_document
        ls.store.open(document.uri, document.text, document.version)
        ls.scheduler.schedule(document.uri)

    @server.feature(types.TEXT_DOCUMENT_DID_CHANGE)
    def did_change(ls: PrecisionLintServer, params: types.DidChangeTextDocumentParams) -> None:
        uri = params.text_document.uri
        ls.store.change(uri, params.text_document.version, _changes(params))
        ls.scheduler.schedule(uri, ls.options.debounce)

    @server.feature(types.TEXT_DOCUMENT_DID_SAVE)
    def did_save(ls: PrecisionLintServer, params: types.DidSaveTextDocumentParams) -> None:
        uri = params.text_document.uri
        path = uri_to_path(uri)
        if path is not None and path.name in CONFIG_FILES:
            ls.settings.reload()
            ls.recheck_all()
            return
        if ls.store.get(uri) is not None:
            ls.scheduler.invalidate(uri)
        ls.recheck_dependents(uri)

    @server.feature(types.TEXT_DOCUMENT_DID_CLOSE)
    def did_close(ls: PrecisionLintServer, params: types.DidCloseTextDocumentParams) -> None:
        uri = params.text_document.uri
        ls.store.close(uri)
        ls.scheduler.close(uri)
        if not ls.pull:
            ls.text_document_publish_diagnostics(types.PublishDiagnosticsParams(uri=uri, diagnostics=[]))

    @server.feature(types.WORKSPACE_DID_CHANGE_WATCHED_FILES)
    def did_change_watched_files(ls: PrecisionLintServer, params: types.DidChangeWatchedFilesParams) -> None:
        paths = [uri_to_path(change.uri) for change in params.changes]
        if any(path is not None and path.name in CONFIG_FILES for path in paths):
            ls.settings.reload()
            ls.recheck_all()
            return
        for change in params.changes:
            if change.uri.endswith(".py"):
                ls.recheck_dependents(change.uri)

    @server.feature(types.WORKSPACE_DID_CHANGE_CONFIGURATION)
    def did_change_configuration(ls: PrecisionLintServer, params: types.DidChangeConfigurationParams) -> None:
        ls.options = _options_from(params.settings, ls.options)
        ls.settings.reload(ls.options)
        ls.recheck_all()

    @server.feature(
        types.TEXT_DOCUMENT_DIAGNOSTIC,
        types.DiagnosticOptions(identifier=SOURCE, inter_file_dependencies=True, workspace_diagnostics=False),
    )
    async def document_diagnostic(ls: PrecisionLintServer, params: types.DocumentDiagnosticParams):
        result = await ls.scheduler.current(params.text_document.uri)
        if result is None:
            return types.RelatedFullDocumentDiagnosticReport(items=[])
        result_id = f"{result.request.version}:{result.request.generation}"
        if params.previous_result_id == result_id:
            return types.RelatedUnchangedDocumentDiagnosticReport(result_id=result_id)
        return types.RelatedFullDocumentDiagnosticReport(items=ls.lsp_diagnostics(result), result_id=result_id)

    @server.feature(
        types.TEXT_DOCUMENT_CODE_ACTION,
        types.CodeActionOptions(code_action_kinds=[QUICK_FIX, FIX_ALL], resolve_provider=True),
    )
    async def code_action(ls: PrecisionLintServer, params: types.CodeActionParams):
        uri = params.text_document.uri
        result = await ls.scheduler.current(uri)
        if result is None or result.request.settings is None:
            return None
        only = list(params.context.only) if params.context.only else None
        target = ls.target(uri, result)
        settings = result.request.settings
        actions = quick_fixes(
            target, result.diagnostics, ls.lsp_diagnostics(result), params.range, settings, only, ls.encoding
        )
        if kind_requested(FIX_ALL, only) and _has_safe_fix(result):
            if only is None and ls.resolve_edits:
                # a light bulb asks on every cursor move: compute the edit when it is chosen
                actions.append(fix_all_action(None, {"uri": uri, "version": target.version}))
            else:
                loop = asyncio.get_running_loop()
                edit = await loop.run_in_executor(ls.executor, fix_all_edit, target, settings, ls.encoding)
                if edit is not None:
                    actions.append(fix_all_action(edit))
        return actions or None

    @server.feature(types.CODE_ACTION_RESOLVE)
    async def resolve_code_action(ls: PrecisionLintServer, action: types.CodeAction) -> types.CodeAction:
        data = action.data if isinstance(action.data, dict) else {}
        uri = data.get("uri")
        if action.kind != FIX_ALL or not isinstance(uri, str):
            return action
        result = await ls.scheduler.current(uri)
        if result is None or result.request.settings is None:
            return action
        loop = asyncio.get_running_loop()
        target = ls.target(uri, result)
        action.edit = await loop.run_in_executor(
            ls.executor, fix_all_edit, target, result.request.settings, ls.encoding
        )
        return action

    @server.feature(types.TEXT_DOCUMENT_HOVER)
    async def on_hover(ls: PrecisionLintServer, params: types.HoverParams):
        result = await ls.scheduler.current(params.text_document.uri)
        if result is None:
            return None
        return hover(result.diagnostics, params.position, PositionMap(result.request.text, ls.encoding))

    @server.feature(types.SHUTDOWN)
    def shutdown(ls: PrecisionLintServer, params: None) -> None:
        ls.scheduler.close_all()
        ls.executor.shutdown(wait=False, cancel_futures=True)

    return server


def _has_safe_fix(result: CheckResult) -> bool:
    unfixable = result.request.settings.unfixable
    return any(applicable(d, False, unfixable) for d in result.diagnostics)
