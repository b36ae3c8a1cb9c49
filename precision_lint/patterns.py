"""Path patterns for `exclude` and `per-file-ignores`, with .gitignore's rules: `*`
stays inside one folder, `**` crosses folders, a pattern with a `/` is anchored to
the folder of the config that holds it, one without matches a name at any depth,
a trailing `/` matches folders only, `!` re-includes, and what matches a folder
matches everything in it. Matching is pathspec's (the library black uses for
.gitignore), imported only when a pattern needs more than a plain name.
"""
from __future__ import annotations

import os
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

_GLOB_CHARACTERS = frozenset("*?[]\\!/")


@dataclass(frozen=True)
class Pattern:
    """A pattern as written, and the folder it is relative to (the folder of the
    config file that holds it, or the current directory for the command line)."""

    text: str
    base: Path

    def normalized(self) -> str:
        return _normalized(self.text, self.base)


@lru_cache(maxsize=4096)
def _normalized(text: str, base: Path) -> str:
    """`./src/x.py` is `/src/x.py` (anchored, as the user meant); an absolute path
    inside the base becomes one relative to it."""
    text = text.strip()
    if text.startswith("./"):
        return "/" + text[2:]
    path = Path(text)
    if path.is_absolute():
        try:
            return "/" + path.relative_to(base).as_posix()
        except ValueError:
            return text
    return text


def pattern_problem(text: str) -> str | None:
    """Why `text` is not a pattern (an unclosed `[`, which would match nothing), as
    Ruff refuses it; None when it is one."""
    at = 0
    while at < len(text):
        if text[at] == "\\":
            at += 2
            continue
        if text[at] == "[":
            start = at + 1
            start += text[start : start + 1] in ("!", "^")
            start += text[start : start + 1] == "]"  # `[]a]`: a `]` first is a member
            close = text.find("]", start)
            if close == -1:
                return f"`{text}`: a `[` that no `]` closes"
            at = close
        at += 1
    return None


def is_plain_name(text: str) -> bool:
    """A bare name (`build`, `.venv`): it matches a path one of whose parts is it."""
    return bool(text) and not (_GLOB_CHARACTERS & set(text))


@lru_cache(maxsize=1024)
def _spec(lines: tuple[str, ...]):
    import pathspec  # only for patterns with more than a name: it costs start-up time

    return pathspec.GitIgnoreSpec.from_lines(lines)


# (base folder, its patterns' lines, their names when all are plain names), by base
Groups = tuple[tuple[str, tuple[str, ...], "frozenset[str] | None"], ...]


@lru_cache(maxsize=1024)
def _groups(patterns: tuple[Pattern, ...]) -> Groups:
    """The patterns by base folder: (base, lines, the names when all are plain)."""
    by_base: dict[str, list[str]] = {}
    for pattern in patterns:
        by_base.setdefault(str(pattern.base), []).append(pattern.normalized())
    return tuple(
        (base, tuple(lines), frozenset(lines) if all(is_plain_name(line) for line in lines) else None)
        for base, lines in by_base.items()
    )


def _relative(path: str, base: str) -> str | None:
    if path == base:
        return ""
    prefix = base if base.endswith(os.sep) else base + os.sep
    return path[len(prefix) :].replace(os.sep, "/") if path.startswith(prefix) else None


def matches(patterns: list[Pattern] | tuple[Pattern, ...], path: Path | str, is_dir: bool = False, walk_base: Path | None = None) -> bool:
    """Whether `path` (absolute) matches the patterns, taken together as one
    .gitignore is (a later `!pattern` re-includes one of the same config). Each
    pattern is matched relative to its own base; for a path outside that base,
    relative to `walk_base` (the folder named on the command line) when the path is
    inside it, else by its name alone, so a folder above the project that happens to
    be called `build` never excludes it."""
    walk = str(walk_base) if walk_base is not None else None
    return matches_grouped(grouped(patterns), str(path), is_dir, walk)


def grouped(patterns: list[Pattern] | tuple[Pattern, ...]) -> Groups:
    """The patterns as matches_grouped takes them: a walk that matches every file
    against the same patterns groups them once (hashing them costs more than a match)."""
    return _groups(tuple(patterns))


def matches_grouped(groups: Groups, target: str, is_dir: bool = False, walk: str | None = None) -> bool:
    """matches() for patterns already grouped, `target` and `walk` as text."""
    for base, lines, names in groups:
        relative = _relative(target, base)
        if relative is None and walk is not None:
            relative = _relative(target, walk)
        if relative is None:
            relative = os.path.basename(target)
        if not relative:
            continue
        if names is not None:
            if not names.isdisjoint(relative.split("/")):
                return True
            continue
        if _spec(lines).match_file(relative + ("/" if is_dir else "")):
            return True
    return False


def matches_one(pattern: Pattern, path: Path, walk_base: Path | None = None) -> bool:
    """For per-file-ignores, where each pattern stands alone. As in Ruff, a leading
    `!` inverts it: the codes are ignored in every file the rest does not match."""
    text = pattern.text.strip()
    if text.startswith("!"):
        return not matches([Pattern(text[1:], pattern.base)], path, walk_base=walk_base)
    return matches([pattern], path, walk_base=walk_base)


def absolute(path: str | Path) -> Path:
    if isinstance(path, Path) and path.is_absolute() and ".." not in path.parts:
        return path  # already what abspath gives (pathlib drops `.` and doubled `/`)
    return Path(os.path.abspath(path))
