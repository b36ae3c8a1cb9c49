"""The texts the server checks: open documents as the editor has them, other files
as they are on disk. One store for the whole workspace, so that project-wide
analysis can read a helper module's unsaved text as well as the file being checked."""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from urllib.parse import unquote, urlparse

from ..project.workspace import WorkspaceProject
from ..source import read_source
from .positions import UTF16, PositionMap


@dataclass(frozen=True)
class Document:
    uri: str
    text: str
    version: int | None


@dataclass(frozen=True)
class TextChange:
    """One content change of didChange: a whole new text (range None) or a
    replacement of the range given in LSP positions."""

    text: str
    start: tuple[int, int] | None = None  # (line, character)
    end: tuple[int, int] | None = None


def uri_to_path(uri: str) -> Path | None:
    """The file a `file:` URI names; None for other schemes (`untitled:`)."""
    parsed = urlparse(uri)
    if parsed.scheme != "file":
        return None
    path = unquote(parsed.path)
    if parsed.netloc:  # a UNC path
        path = f"//{parsed.netloc}{path}"
    if len(path) >= 3 and path[0] == "/" and path[2] == ":":  # /C:/x on Windows
        path = path[1:]
    return Path(path)


def filename_for(uri: str) -> str:
    """What diagnostics and per-file-ignores call the document."""
    path = uri_to_path(uri)
    return str(path) if path is not None else uri


def apply_change(text: str, change: TextChange, encoding: str = UTF16) -> str:
    if change.start is None or change.end is None:
        return change.text
    positions = PositionMap(text, encoding)
    start = positions.offset(*change.start)
    end = max(positions.offset(*change.end), start)
    return text[:start] + change.text + text[end:]


class DocumentStore:
    def __init__(self, encoding: str = UTF16) -> None:
        self.encoding = encoding
        self._open: dict[str, Document] = {}
        # the project modules a document imports, summarized from this store's texts
        self.project = WorkspaceProject(self.text_of)

    def open(self, uri: str, text: str, version: int | None) -> Document:
        document = Document(uri, text, version)
        self._open[uri] = document
        return document

    def change(self, uri: str, version: int | None, changes: list[TextChange]) -> Document:
        current = self._open.get(uri)
        text = current.text if current is not None else ""
        for change in changes:  # applied in order: each range refers to the text after the previous
            text = apply_change(text, change, self.encoding)
        document = Document(uri, text, version)
        self._open[uri] = document
        return document

    def close(self, uri: str) -> None:
        self._open.pop(uri, None)

    def get(self, uri: str) -> Document | None:
        return self._open.get(uri)

    def open_uris(self) -> list[str]:
        return list(self._open)

    def text_of(self, path: Path) -> str | None:
        """A module's text as the editor has it when it is open, else from disk."""
        for document in self._open.values():
            if uri_to_path(document.uri) == path:
                return document.text
        try:
            return read_source(path).text
        except (OSError, UnicodeDecodeError, SyntaxError):
            return None

    def dependents_of(self, uri: str) -> list[str]:
        """Open documents whose diagnostics may change when `uri` changes. Without a
        project index every other open document may import it; the index (issue 9)
        can narrow this to the modules that do."""
        return [other for other in self._open if other != uri]
