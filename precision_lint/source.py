"""Reading and writing Python source exactly: encoding, newlines, permissions."""
from __future__ import annotations

import io
import os
import re
import tempfile
import tokenize
from dataclasses import dataclass
from pathlib import Path

_LINE_BREAK = re.compile(r"\r\n|\r|\n")


@dataclass(frozen=True)
class SourceFile:
    path: Path
    text: str
    encoding: str
    raw: bytes


def decode(raw: bytes) -> tuple[str, str]:
    """(text, encoding) honouring a PEP 263 coding cookie or BOM; newlines kept."""
    encoding, _ = tokenize.detect_encoding(io.BytesIO(raw).readline)
    return raw.decode(encoding), encoding


def read_source(path: Path) -> SourceFile:
    raw = path.read_bytes()
    text, encoding = decode(raw)
    return SourceFile(path, text, encoding, raw)


def write_atomically(path: Path, text: str, encoding: str) -> None:
    """Replace `path` in one step, keeping its permissions: a reader never sees a
    half-written file and a crash never leaves one."""
    path = Path(os.path.realpath(path))  # write through a symlink, keep the link
    data = text.encode(encoding)
    mode = os.stat(path).st_mode & 0o7777
    handle, temporary = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(handle, "wb") as stream:
            stream.write(data)
            stream.flush()
            os.fsync(stream.fileno())
        os.chmod(temporary, mode)
        os.replace(temporary, path)
    except BaseException:
        if os.path.exists(temporary):
            os.unlink(temporary)
        raise


def splice(text: str, pieces: list[tuple[int, int, str]]) -> str:
    """`text` with each (start, end, content) piece replacing text[start:end]; the
    pieces must not overlap. Applied from the end so earlier offsets stay valid."""
    for start, end, content in sorted(pieces, key=lambda p: (p[0], p[1]), reverse=True):
        text = text[:start] + content + text[end:]
    return text


class LineIndex:
    """Converts 1-based (row, column) positions to string offsets and back."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.starts = [0] + [match.end() for match in _LINE_BREAK.finditer(text)]

    def offset(self, row: int, column: int) -> int:
        return self.starts[row - 1] + column - 1

    def line(self, row: int) -> str:
        start = self.starts[row - 1]
        end = self.starts[row] if row < len(self.starts) else len(self.text)
        return _LINE_BREAK.sub("", self.text[start:end])

    @property
    def line_count(self) -> int:
        return len(self.starts)
