"""Which rules apply to a document: resolved as `precision-lint check` resolves
them (resolver.py: the nearest config file, pyproject.toml with a
[tool.precision-lint] table or a precision-lint.toml, with what it extends), plus
the editor's own options (unsafe fixes). `resolve_settings` is the one place here
that reads the configuration; everything else asks it."""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from ..config import ConfigError, Settings
from ..resolver import SettingsResolver


@dataclass(frozen=True)
class EditorOptions:
    """What the client may set (initializationOptions, workspace/didChangeConfiguration)
    or the command line (`precision-lint server --unsafe-fixes`)."""

    unsafe_fixes: bool = False
    # seconds to wait after a change before checking; more changes within it restart
    # it. Short: it only gathers the bursts an editor sends for one edit (auto-closed
    # brackets, multi-cursor typing); slower typing is gathered by the rule that a
    # document has one check at a time and the newest version goes next.
    debounce: float = 0.025


@dataclass(frozen=True)
class FileSettings:
    codes: frozenset[str]
    unfixable: frozenset[str]
    unsafe_fixes: bool
    excluded: bool
    config_file: Path | None
    # every config file read for it (the governing one and what it extends)
    sources: tuple[Path, ...] = ()


def resolve_settings(path: Path | None, workspace_root: Path, options: EditorOptions) -> FileSettings:
    """The settings for one file, as `check --stdin-filename PATH` run from the
    workspace root would use them: the same config file, selection, per-file-ignores
    and unfixable rules. Excluded files are not checked (like `--force-exclude`: the
    editor names every file it opens). A document without a path (untitled) gets the
    settings of the workspace root."""
    filename = str(path) if path is not None else str(workspace_root / "untitled.py")
    settings: Settings = SettingsResolver(workspace_root).settings_for(filename)
    return FileSettings(
        codes=settings.codes_for(filename, settings.enabled_codes()),
        unfixable=settings.unfixable_codes(),
        unsafe_fixes=options.unsafe_fixes,
        excluded=path is not None and settings.is_excluded(str(path)),
        config_file=settings.config_file,
        sources=settings.sources,
    )


def _stamp(sources: tuple[Path, ...]) -> tuple | None:
    """When any config file read for the settings changes, they are read again."""
    stamps = []
    for config_file in sources:
        try:
            status = config_file.stat()
        except OSError:
            return None
        stamps.append((status.st_mtime_ns, status.st_size))
    return tuple(stamps)


class SettingsCache:
    """Resolved settings per file. Dropped whenever the editor reports a changed
    configuration file; an edited config file is also noticed at the next check
    without that (editors that cannot watch files: Neovim on Linux, for one)."""

    def __init__(self, workspace_root: Path, options: EditorOptions) -> None:
        self.workspace_root = workspace_root
        self.options = options
        self._cache: dict[Path | None, tuple[FileSettings, tuple | None]] = {}

    def for_path(self, path: Path | None) -> FileSettings:
        """Raises ConfigError for a config file that cannot be used."""
        cached = self._cache.get(path)
        if cached is not None and _stamp(cached[0].sources) == cached[1]:
            return cached[0]
        settings = resolve_settings(path, self.workspace_root, self.options)
        self._cache[path] = (settings, _stamp(settings.sources))
        return settings

    def reload(self, options: EditorOptions | None = None) -> None:
        if options is not None:
            self.options = options
        self._cache.clear()


__all__ = ["ConfigError", "EditorOptions", "FileSettings", "SettingsCache", "resolve_settings"]
