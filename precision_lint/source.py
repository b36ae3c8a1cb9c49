"""Reading and writing Python source exactly: encoding, newlines, the file itself.

One line model for the whole tool: `\\n`, `\\r\\n` and a lone `\\r` end a line, nothing
else does (not a form feed, not U+2028): the suppressions, the noqa writer, the
fixer's edits, positions and diffs all count lines this way, as Python and libcst do.
"""
from __future__ import annotations

import ast
import errno
import hashlib
import io
import os
import re
import signal
import threading
import tokenize
import warnings
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Iterator

LINE_BREAK = re.compile(r"\r\n|\r|\n")
_LINE_WITH_END = re.compile(r"[^\r\n]*(?:\r\n|\r|\n)|[^\r\n]+$")


def standard_tree(source: str) -> ast.Module:
    """`ast.parse(source)` without its warnings: Python 3.12 warns of an invalid
    escape (`"\\d"`) in the code it reads, which is not the linter's to print."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return ast.parse(source)


@dataclass(frozen=True)
class SourceFile:
    path: Path
    text: str
    encoding: str
    raw: bytes

    @property
    def digest(self) -> str:
        return content_digest(self.raw)


class UndecodableSource(UnicodeDecodeError):
    """The bytes are not text in the file's declared encoding; `row` and `column`
    (1-based) say where the first bad byte is."""

    def __init__(self, error: UnicodeDecodeError, row: int, column: int) -> None:
        super().__init__(error.encoding, error.object, error.start, error.end, error.reason)
        self.row, self.column = row, column


class BadCodingCookie(SyntaxError):
    """An unknown codec in the coding cookie, or a cookie that contradicts the BOM;
    `lineno` is the cookie's line."""


def content_digest(raw: bytes) -> str:
    return hashlib.sha256(raw).hexdigest()


def decode(raw: bytes) -> tuple[str, str]:
    """(text, encoding) honouring a PEP 263 coding cookie or BOM; newlines kept.
    Raises UndecodableSource (where the first bad byte is) or BadCodingCookie."""
    try:
        encoding, _ = tokenize.detect_encoding(io.BytesIO(raw).readline)
    except SyntaxError as error:
        if _cookie_row(raw) is None:
            encoding = "utf-8"  # not a cookie: bad UTF-8 in the first two lines, found below
        else:
            problem = BadCodingCookie(str(error.msg if error.msg else error))
            problem.lineno = _cookie_row(raw)
            raise problem from None
    try:
        return raw.decode(encoding), encoding
    except UnicodeDecodeError as error:
        row, column = _position_of_byte(raw, error.start, encoding)
        raise UndecodableSource(error, row, column) from None


def _cookie_row(raw: bytes) -> int | None:
    """The line (1 or 2) of a coding cookie, or None when there is none."""
    for number, line in enumerate(raw.splitlines()[:2], start=1):
        if b"coding" in line and line.removeprefix(b"\xef\xbb\xbf").lstrip().startswith(b"#"):
            return number
    return None


def _position_of_byte(raw: bytes, offset: int, encoding: str) -> tuple[int, int]:
    """1-based row and character column of byte `offset` (the text before it decodes)."""
    before = raw[:offset].decode(encoding, errors="replace")
    starts = [0] + [match.end() for match in LINE_BREAK.finditer(before)]
    return len(starts), len(before) - starts[-1] + 1


def read_source(path: Path) -> SourceFile:
    raw = path.read_bytes()
    text, encoding = decode(raw)
    return SourceFile(path, text, encoding, raw)


class SourceChanged(OSError):
    """The file on disk is not what the fixes were computed from."""


class EncodingNotKept(ValueError):
    """The fixed text cannot be written back in the file's own encoding."""


def encode_like(original: SourceFile, text: str) -> bytes:
    """`text` in `original`'s encoding; refused when that would not keep the encoding
    (a codec that does not round-trip the original, a character it cannot hold)."""
    if original.text.encode(original.encoding) != original.raw:
        raise EncodingNotKept(f"its {original.encoding} text does not re-encode to the same bytes")
    try:
        return text.encode(original.encoding)
    except UnicodeEncodeError as error:
        raise EncodingNotKept(f"the fixed text has characters {original.encoding} cannot hold ({error.reason})") from None


def write_in_place(path: Path, data: bytes, expected_digest: str) -> None:
    """Overwrite the file's contents through the file itself, as Ruff does: the inode
    stays, so owner, group, mode, hard links, ACLs and extended attributes are kept
    (a symlink is followed, not replaced). Raises SourceChanged, writing nothing, when
    the file's contents are no longer those with `expected_digest` (an edit saved while
    the fixes were computed). SIGINT waits until the write is complete.

    A write that fails (a full disk, a file-size limit, an I/O error) leaves the
    file as it was: the room the new contents need is taken before a byte changes,
    and the old contents are put back if the write fails all the same."""
    with signals_deferred(), open(path, "r+b") as stream:
        original = stream.read()
        if content_digest(original) != expected_digest:
            raise SourceChanged(f"{path} changed since it was read")
        _reserve(stream, len(original), len(data))
        try:
            _overwrite(stream, data)
        except OSError as error:
            try:
                _overwrite(stream, original)
            except OSError:
                raise OSError(error.errno, f"{error.strerror or error}; the file could not be restored and may be damaged") from error
            raise


def _reserve(stream, size: int, needed: int) -> None:
    """Room for `needed` bytes in a file of `size`, before anything is written: where
    it cannot be had, the file is left at its size, its contents untouched."""
    if needed <= size:
        return
    stream.flush()
    descriptor = stream.fileno()
    try:
        try:
            os.posix_fallocate(descriptor, size, needed - size)
        except (AttributeError, OSError) as error:  # no fallocate here (macOS, some file systems)
            if isinstance(error, OSError) and error.errno not in _NO_FALLOCATE:
                raise
            os.ftruncate(descriptor, needed)  # the size at least: a full disk then fails the write, undone
    except OSError:
        os.ftruncate(descriptor, size)
        raise


_NO_FALLOCATE = (errno.EOPNOTSUPP, errno.EINVAL, errno.ENOSYS)


def _overwrite(stream, data: bytes) -> None:
    stream.seek(0)
    stream.write(data)
    stream.truncate(len(data))
    stream.flush()
    os.fsync(stream.fileno())


def why_not_written(error: OSError) -> str:
    """An OSError from making a file (its folders first), said for a user: a file
    where a folder of the path should be is named as such."""
    if isinstance(error, (FileExistsError, NotADirectoryError)) and error.filename:
        return f"{error.filename} is a file, not a folder"
    return error.strerror or str(error)


def write_text_in_place(path: Path, original: SourceFile, text: str) -> None:
    write_in_place(path, encode_like(original, text), original.digest)


@contextmanager
def signals_deferred() -> Iterator[None]:
    """Hold SIGINT and SIGTERM for the duration: a half-written source file, or one
    written and not reported, would be worse than either. Their handlers are swapped
    for a note (blocking the signal would not do: another thread could take it), and
    what arrived is raised again when the block ends."""
    if threading.current_thread() is not threading.main_thread():
        yield  # only the main thread handles signals in Python
        return
    arrived: list[int] = []
    previous = {}
    for number in (signal.SIGINT, signal.SIGTERM):
        handler = signal.getsignal(number)
        if handler is None:  # installed outside Python: cannot be put back, left alone
            continue
        previous[number] = handler
        signal.signal(number, lambda received, frame: arrived.append(received))
    try:
        yield
    finally:
        for number, handler in previous.items():
            signal.signal(number, handler)
        for number in dict.fromkeys(arrived):
            signal.raise_signal(number)


def split_lines(text: str) -> list[str]:
    """The lines of `text` without their endings, in the one line model."""
    return [LINE_BREAK.sub("", line) for line in split_lines_keeping_ends(text)]


def split_lines_keeping_ends(text: str) -> list[str]:
    return _LINE_WITH_END.findall(text)


def splice(text: str, pieces: list[tuple[int, int, str]]) -> str:
    """`text` with each (start, end, content) piece replacing text[start:end]; the
    pieces must not overlap. Built in one pass, in order of position."""
    parts: list[str] = []
    position = 0
    for start, end, content in sorted(pieces, key=lambda p: (p[0], p[1])):
        parts.append(text[position:start])
        parts.append(content)
        position = max(position, end)
    parts.append(text[position:])
    return "".join(parts)


class LineIndex:
    """Converts 1-based (row, column) positions to string offsets and back."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.starts = [0] + [match.end() for match in LINE_BREAK.finditer(text)]

    def offset(self, row: int, column: int) -> int:
        return self.starts[row - 1] + column - 1

    def row_of(self, offset: int) -> int:
        """The 1-based row holding string offset `offset`."""
        low, high = 0, len(self.starts) - 1
        while low < high:
            middle = (low + high + 1) // 2
            if self.starts[middle] <= offset:
                low = middle
            else:
                high = middle - 1
        return low + 1

    def line(self, row: int) -> str:
        start = self.starts[row - 1]
        end = self.starts[row] if row < len(self.starts) else len(self.text)
        return LINE_BREAK.sub("", self.text[start:end])

    @property
    def line_count(self) -> int:
        return len(self.starts)


__all__ = [
    "BadCodingCookie", "EncodingNotKept", "LineIndex", "SourceChanged", "SourceFile", "UndecodableSource",
    "content_digest", "decode", "encode_like", "read_source", "splice", "split_lines",
    "signals_deferred", "split_lines_keeping_ends", "write_in_place", "write_text_in_place",
]  # fmt: skip
