"""Which settings govern which file: the nearest config file at or above it, as
Ruff and Fixit find theirs (so the order of the paths on the command line, or of
the files pre-commit hands over, changes nothing); `--config FILE` names one file
for every path instead, and `--isolated` reads none. The command line's options
lie on top. The CLI and the language server both resolve settings here.
"""
from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .config import ConfigError, Settings, apply_table, check_keys, config_in, load_settings, patterns
from .patterns import Pattern, absolute
from .selection import SelectionStep, validate

COMMAND_LINE = "command line"


@dataclass
class Overrides:
    """What the command line says about the settings."""

    select: list[str] | None = None
    extend_select: list[str] = field(default_factory=list)
    ignore: list[str] = field(default_factory=list)
    unfixable: list[str] = field(default_factory=list)
    exclude: list[str] | None = None
    extend_exclude: list[str] = field(default_factory=list)
    per_file_ignores: dict[str, list[str]] | None = None
    extend_per_file_ignores: dict[str, list[str]] = field(default_factory=dict)
    extension: dict[str, str] = field(default_factory=dict)
    cache_dir: Path | None = None
    # `--config "key = value"`: TOML tables laid over every config file
    inline: list[dict[str, Any]] = field(default_factory=list)


class SettingsResolver:
    def __init__(
        self, cwd: Path, config_file: Path | None = None, isolated: bool = False, overrides: Overrides | None = None
    ) -> None:
        self.cwd = absolute(cwd)
        self.config_file = absolute(config_file) if config_file is not None else None
        self.isolated = isolated
        self.overrides = overrides or Overrides()
        for table in self.overrides.inline:
            check_keys(table, "--config")
        self._config_of_folder: dict[Path, Path | None] = {}
        self._settings: dict[Path | None, Settings] = {}
        self._of_folder: dict[str, Settings] = {}  # absolute folder -> its files' settings

    def settings_for(self, path: str | Path) -> Settings:
        """The settings for a file (or, for a folder, the files directly in it). A
        path that does not exist (stdin's name, an unsaved buffer) is placed by its
        folder like any other."""
        target = os.path.abspath(path)  # text: a Path for each file cost more than the rest
        folder = target if os.path.isdir(target) else os.path.dirname(target)
        if folder not in self._of_folder:
            self._of_folder[folder] = self._settings_of_folder(Path(folder))
        return self._of_folder[folder]

    def _settings_of_folder(self, folder: Path) -> Settings:
        if self.isolated:
            config = None
        elif self.config_file is not None:
            config = self.config_file
        else:
            config = self._nearest(folder)
        if config not in self._settings:
            self._settings[config] = self._with_overrides(load_settings(config, self.cwd))
        return self._settings[config]

    def _nearest(self, folder: Path) -> Path | None:
        if folder in self._config_of_folder:  # every file of a folder after its first
            return self._config_of_folder[folder]
        walked = []
        found: Path | None = None
        for candidate in [folder, *folder.parents]:
            if candidate in self._config_of_folder:
                found = self._config_of_folder[candidate]
                break
            walked.append(candidate)
            found = config_in(candidate)
            if found is not None:
                break
        for candidate in walked:
            self._config_of_folder[candidate] = found
        return found

    def _with_overrides(self, settings: Settings) -> Settings:
        given = self.overrides
        settings = settings.copy()
        for table in given.inline:
            _new_step(settings, "--config")
            apply_table(settings, table, "--config", self.cwd)
        _new_step(settings, COMMAND_LINE)
        if given.select is not None:
            settings.select = validate(given.select)
            settings.origins["select"] = COMMAND_LINE
        settings.extend_select = validate(given.extend_select)
        settings.ignore = validate(given.ignore)
        for key, value in (("extend-select", given.extend_select), ("ignore", given.ignore)):
            if value:
                settings.origins[key] = COMMAND_LINE
        if given.unfixable:
            settings.unfixable = [*settings.unfixable, *validate(given.unfixable)]
            settings.origins["unfixable"] = COMMAND_LINE
        if given.exclude is not None:
            settings.exclude = patterns(given.exclude, self.cwd, "--exclude")
            settings.origins["exclude"] = COMMAND_LINE
        if given.extend_exclude:
            settings.extend_exclude = [*settings.extend_exclude, *patterns(given.extend_exclude, self.cwd, "--extend-exclude")]
            settings.origins["extend-exclude"] = COMMAND_LINE
        if given.per_file_ignores is not None:
            settings.per_file_ignores = _ignores(given.per_file_ignores, self.cwd)
            settings.origins["per-file-ignores"] = COMMAND_LINE
        if given.extend_per_file_ignores:
            settings.per_file_ignores = [*settings.per_file_ignores, *_ignores(given.extend_per_file_ignores, self.cwd)]
            settings.origins["extend-per-file-ignores"] = COMMAND_LINE
        if given.extension:
            settings.extension = {**settings.extension, **given.extension}
            settings.origins["extension"] = COMMAND_LINE
        if given.cache_dir is not None:
            settings.cache_dir = absolute(given.cache_dir)
            settings.origins["cache-dir"] = COMMAND_LINE
        return settings


class FileCodes:
    """What the CLI asks per file (the rules that apply, the unfixable ones, the
    settings), each config file's enabled rules worked out once. discover() asks it
    for each file's settings too; `check` and `verify` share it."""

    def __init__(self, resolver: SettingsResolver) -> None:
        self.resolver = resolver
        self._enabled: dict[int, frozenset[str]] = {}

    def settings(self, path: str | Path) -> Settings:
        return self.resolver.settings_for(path)

    def enabled(self, settings: Settings) -> frozenset[str]:
        if id(settings) not in self._enabled:
            self._enabled[id(settings)] = settings.enabled_codes()
        return self._enabled[id(settings)]

    def for_file(self, path: str | Path) -> tuple[frozenset[str], frozenset[str], Settings]:
        """(codes, unfixable codes, settings) for one file."""
        settings = self.settings(path)
        return settings.codes_for(str(path), self.enabled(settings)), settings.unfixable_codes(), settings

    def codes_for(self, path: str, enabled: frozenset[str] | None = None) -> frozenset[str]:
        """The codes that apply to this file (of `enabled`, when given)."""
        codes, _, _ = self.for_file(path)
        return codes if enabled is None else codes & enabled

    settings_for = settings  # what discover() asks


def _new_step(settings: Settings, origin: str) -> None:
    """What the settings selected so far becomes a step; the next layer starts one."""
    settings.inherited = [*settings.inherited, settings.selection_steps()[-1]]
    settings.select, settings.extend_select, settings.ignore = None, [], []
    settings.selection_origin = origin


def _ignores(table: dict[str, list[str]], base: Path) -> list[tuple[Pattern, list[str]]]:
    patterns(list(table), base, "--per-file-ignores")
    return [(Pattern(pattern, base), validate(codes)) for pattern, codes in table.items()]


def parse_per_file_ignore(value: str) -> tuple[str, list[str]]:
    """`--per-file-ignores 'tests/*:PH001,PH002'`: the last `:` ends the pattern."""
    pattern, colon, codes = value.rpartition(":")
    if not colon or not pattern.strip() or not codes.strip():
        raise ConfigError(f"--per-file-ignores {value!r}: write PATTERN:CODES, e.g. 'tests/*:PH001,PH002'")
    return pattern.strip(), [code.strip() for code in codes.split(",") if code.strip()]


__all__ = ["COMMAND_LINE", "ConfigError", "FileCodes", "Overrides", "SettingsResolver", "SelectionStep", "parse_per_file_ignore"]
