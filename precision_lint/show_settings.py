"""`check --show-settings PATH`: the settings one file is checked with, and where
each comes from (a config file, `--config`, the command line, or the default)."""
from __future__ import annotations

import json
from typing import TextIO

from .config import DEFAULT, DEFAULT_EXCLUDE, Settings
from .patterns import Pattern


def _toml(value) -> str:
    return json.dumps(value, ensure_ascii=False)


def _patterns(patterns: list[Pattern]) -> str:
    return _toml([p.text for p in patterns])


def write_settings(path: str, settings: Settings, codes: frozenset[str], out: TextIO) -> None:
    out.write(f"Settings for {path}\n")
    if settings.config_file is None:
        out.write("config file: none (defaults, paths relative to the current folder)\n")
    else:
        out.write(f"config file: {settings.config_file}\n")
        for extended in settings.sources[1:]:
            out.write(f"  extends: {extended}\n")
    out.write(f"rules checked in this file: {', '.join(sorted(codes)) or 'none'}\n\n")
    out.write("# rule selection, in order (a `select` starts afresh)\n")
    for step in settings.selection_steps():
        parts = [f"select = {_toml(list(step.select))}"] if step.select is not None else []
        parts += [f"extend-select = {_toml(list(step.extend_select))}"] if step.extend_select else []
        parts += [f"ignore = {_toml(list(step.ignore))}"] if step.ignore else []
        if parts:
            out.write(f"{'; '.join(parts)}  # {step.origin or DEFAULT}\n")
    origin = settings.origins
    exclude = settings.exclude or []
    default_exclude = [p.text for p in exclude] == list(DEFAULT_EXCLUDE)
    out.write("\n# files\n")
    out.write(f"exclude = {_patterns(exclude)}  # {origin.get('exclude', DEFAULT if default_exclude else '')}\n")
    out.write(f"extend-exclude = {_patterns(settings.extend_exclude)}  # {origin.get('extend-exclude', DEFAULT)}\n")
    ignores = ", ".join(f"{_toml(p.text)} = {_toml(codes)}" for p, codes in settings.per_file_ignores)
    out.write(f"per-file-ignores = {{{ignores}}}  # {origin.get('per-file-ignores', origin.get('extend-per-file-ignores', DEFAULT))}\n")
    extensions = ", ".join(f"{k} = {_toml(v)}" for k, v in settings.extension.items())
    out.write(f"extension = {{{extensions}}}  # {origin.get('extension', DEFAULT)} (py, pyi and ipynb are always checked)\n")
    out.write("\n# fixing and limits\n")
    out.write(f"unfixable = {_toml(settings.unfixable)}  # {origin.get('unfixable', DEFAULT)}\n")
    cache = settings.cache_dir or settings.root / ".precision-lint-cache"
    out.write(f"cache-dir = {_toml(str(cache))}  # {origin.get('cache-dir', DEFAULT)}\n")
    out.write(f"max-file-size = {settings.limits.max_file_size}  # {origin.get('max-file-size', DEFAULT)}\n")
    out.write(f"max-nesting = {settings.limits.max_nesting}  # {origin.get('max-nesting', DEFAULT)}\n")
    out.write(f"\n# patterns are relative to the folder of the file that sets them; here: {settings.root}\n")
