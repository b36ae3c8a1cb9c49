"""What a config file says: `[tool.precision-lint]` in a pyproject.toml, or the top
level of a `precision-lint.toml` (or `.precision-lint.toml`), after the file named
by its `extend` key. Which file governs which path is resolver.py's business.

As in Ruff, paths and patterns are relative to the folder of the file that writes
them; `extend-*` keys add to what the extended file says, other keys replace it,
and rule selections apply in order (a `select` starts afresh).
"""
from __future__ import annotations

import os
import sys
from dataclasses import dataclass, field, replace
from functools import lru_cache
from pathlib import Path
from typing import Any

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

from .limits import InputLimits
from .patterns import Groups, Pattern, absolute, grouped, matches, matches_grouped, matches_one, pattern_problem
from .selection import SelectionStep, UnknownSelector, matching_codes, resolve_steps, validate
from .suggest import did_you_mean

DEFAULT_SELECT = ("PH0",)
DEFAULT_EXCLUDE = (
    ".bzr", ".direnv", ".eggs", ".git", ".git-rewrite", ".hg", ".ipynb_checkpoints", ".mypy_cache", ".nox",
    ".pants.d", ".pytype", ".ruff_cache", ".svn", ".tox", ".venv", "__pypackages__",
    "_build", "buck-out", "build", "dist", "node_modules", "site-packages", "venv",
    ".precision-lint-cache", "__pycache__",
)  # fmt: skip
# Within one folder the first of these that exists is its config (Ruff's order); a
# pyproject.toml counts only when it has a [tool.precision-lint] table.
CONFIG_NAMES = (".precision-lint.toml", "precision-lint.toml", "pyproject.toml")
KNOWN_KEYS = (
    "select", "ignore", "extend-select", "exclude", "extend-exclude", "per-file-ignores",
    "extend-per-file-ignores", "unfixable", "cache-dir", "max-file-size", "max-nesting", "extend", "extension",
)  # fmt: skip
LANGUAGES = ("python", "pyi", "ipynb")
DEFAULT_EXTENSIONS = {"py": "python", "pyi": "pyi", "ipynb": "ipynb"}
DEFAULT = "default"


class ConfigError(Exception):
    pass


@dataclass
class Settings:
    """The settings for the files one config file governs."""

    root: Path
    config_file: Path | None = None
    # every file these settings were read from, the governing one first, then what it extends
    sources: tuple[Path, ...] = ()
    # this layer's selection (None: keep the one before); `inherited`: the extended files'
    select: list[str] | None = None
    extend_select: list[str] = field(default_factory=list)
    ignore: list[str] = field(default_factory=list)
    inherited: list[SelectionStep] = field(default_factory=list)
    selection_origin: str = ""  # where this layer's select/extend-select/ignore come from
    exclude: list[Pattern] | None = None  # None: the defaults, relative to `root`
    extend_exclude: list[Pattern] = field(default_factory=list)
    per_file_ignores: list[tuple[Pattern, list[str]]] = field(default_factory=list)
    unfixable: list[str] = field(default_factory=list)
    cache_dir: Path | None = None
    limits: InputLimits = field(default_factory=InputLimits)
    extension: dict[str, str] = field(default_factory=dict)  # more suffixes: "ipy" -> "ipynb"
    # where each key's value came from: a file, "--config", "command line" (absent: the default)
    origins: dict[str, str] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if self.exclude is None:
            self.exclude = [Pattern(name, self.root) for name in DEFAULT_EXCLUDE]

    def copy(self) -> Settings:
        return replace(
            self, inherited=list(self.inherited), exclude=list(self.exclude or []), extend_exclude=list(self.extend_exclude),
            per_file_ignores=list(self.per_file_ignores), unfixable=list(self.unfixable), extend_select=list(self.extend_select),
            ignore=list(self.ignore), select=None if self.select is None else list(self.select),
            extension=dict(self.extension), origins=dict(self.origins),
        )  # fmt: skip

    def selection_steps(self) -> list[SelectionStep]:
        own = SelectionStep(
            None if self.select is None else tuple(self.select), tuple(self.extend_select), tuple(self.ignore), self.selection_origin
        )
        return [SelectionStep(DEFAULT_SELECT, origin=DEFAULT), *self.inherited, own]

    def enabled_codes(self) -> frozenset[str]:
        return resolve_steps(self.selection_steps())

    def codes_for(self, path: str, enabled: frozenset[str]) -> frozenset[str]:
        """The rules enabled for one file, after per-file-ignores."""
        target = absolute(path)
        ignored = [code for pattern, codes in self.per_file_ignores if matches_one(pattern, target) for code in codes]
        return enabled - matching_codes(ignored) if ignored else enabled

    def unfixable_codes(self) -> frozenset[str]:
        return matching_codes(self.unfixable)

    def language(self, path: str | Path) -> str | None:
        """"python", "pyi" or "ipynb" for a file to check by its suffix, else None."""
        suffix = os.path.splitext(os.path.basename(path))[1].lstrip(".")  # Path(path).suffix, without a Path
        return self.extension.get(suffix) or DEFAULT_EXTENSIONS.get(suffix)

    def is_excluded(self, path: str | Path, base: Path | None = None, is_dir: bool = False) -> bool:
        """Whether `path` matches an exclude pattern, relative to the folder of the
        file that wrote the pattern. `base`: the path named on the command line;
        a pattern that matches it is skipped (the user asked for it by name)."""
        walk = absolute(base) if base is not None else None
        target = os.path.abspath(path) if isinstance(path, str) else str(absolute(path))
        return matches_grouped(self.exclusions(walk), target, is_dir, None if walk is None else str(walk))

    def exclusions(self, walk: Path | None) -> Groups:
        """The exclude patterns that apply under `walk` (absolute; None: no folder
        named), grouped for matches_grouped: a walk asks once per settings."""
        return grouped(_not_naming((*(self.exclude or []), *self.extend_exclude), walk))

    def settings_for(self, path: str | Path) -> Settings:
        """One Settings for every path (a resolver has one per config file)."""
        return self


@lru_cache(maxsize=256)
def _not_naming(patterns: tuple[Pattern, ...], walk: Path | None) -> tuple[Pattern, ...]:
    """The patterns that do not match the path named on the command line."""
    if walk is None:
        return patterns
    return tuple(p for p in patterns if not matches([p], walk, is_dir=walk.is_dir()))


# -- reading -------------------------------------------------------------------------
def read_toml(path: Path) -> dict:
    try:
        return tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, tomllib.TOMLDecodeError, UnicodeDecodeError) as error:
        raise ConfigError(f"{path}: cannot read: {error}") from error


def table_of(path: Path, data: dict) -> dict | None:
    """The precision-lint table of a parsed config file (None: it has none)."""
    if path.name == "pyproject.toml":
        tool = data.get("tool", {})
        table = tool.get("precision-lint") if isinstance(tool, dict) else None
        if table is not None and not isinstance(table, dict):  # `[tool] precision-lint = 3`
            raise ConfigError(f"{path}: `tool.precision-lint` must be a table of settings")
        return table
    return data


def config_in(directory: Path) -> Path | None:
    """The config file of this folder itself, if it has one."""
    folder = str(directory)
    for name in CONFIG_NAMES:
        if os.path.isfile(os.path.join(folder, name)):  # text: asked of every folder of a tree
            candidate = directory / name
            if name != "pyproject.toml" or table_of(candidate, read_toml(candidate)) is not None:
                return candidate
    return None


def load_settings(config_file: Path | None, cwd: Path) -> Settings:
    """The settings a config file gives (with what it extends); without one, the
    defaults, relative to `cwd`."""
    if config_file is None:
        return Settings(root=cwd.absolute())
    return _load(absolute(config_file), ())


def _load(path: Path, chain: tuple[Path, ...]) -> Settings:
    if path in chain:
        raise ConfigError(f"{path}: `extend` makes a cycle: {' -> '.join(str(p) for p in (*chain, path))}")
    table = table_of(path, read_toml(path))
    if table is None:
        raise ConfigError(f"{path}: has no [tool.precision-lint] table")
    check_keys(table, str(path))
    root = path.parent
    if "extend" in table:
        target = table["extend"]
        if not isinstance(target, str):
            raise ConfigError(f"{path}: `extend` must be the path of another config file")
        base_file = absolute(root / Path(target).expanduser())
        if not base_file.is_file():
            raise ConfigError(f"{path}: `extend = {target!r}`: {base_file} does not exist")
        base = _load(base_file, (*chain, path))
        settings = base.copy()
        settings.inherited = [*base.inherited, base.selection_steps()[-1]]
        settings.select, settings.extend_select, settings.ignore = None, [], []
        settings.root, settings.config_file, settings.sources = root, path, (path, *base.sources)
    else:
        settings = Settings(root=root, config_file=path, sources=(path,))
    settings.selection_origin = str(path)
    apply_table(settings, table, str(path), root)
    return settings


def check_keys(table: dict, where: str) -> None:
    for key in table:
        if key not in KNOWN_KEYS:
            raise ConfigError(f"{where}: unknown key `{key}`{did_you_mean(key, KNOWN_KEYS, quote='`')}")


def apply_table(settings: Settings, table: dict[str, Any], origin: str, base: Path) -> None:
    """Lay `table` over `settings`; its paths and patterns are relative to `base`."""
    try:
        for key in ("select", "extend-select", "ignore"):
            if key in table:
                setattr(settings, key.replace("-", "_"), validate(_string_list(table, key, origin)))
        if "unfixable" in table:
            settings.unfixable = [*settings.unfixable, *validate(_string_list(table, "unfixable", origin))]
        if "exclude" in table:
            settings.exclude = patterns(_string_list(table, "exclude", origin), base, f"{origin}: `exclude`")
        if "extend-exclude" in table:
            settings.extend_exclude = [*settings.extend_exclude, *patterns(_string_list(table, "extend-exclude", origin), base, f"{origin}: `extend-exclude`")]
        if "per-file-ignores" in table:
            settings.per_file_ignores = _per_file_ignores(table, "per-file-ignores", origin, base)
        if "extend-per-file-ignores" in table:
            settings.per_file_ignores = [*settings.per_file_ignores, *_per_file_ignores(table, "extend-per-file-ignores", origin, base)]
    except UnknownSelector as error:
        raise ConfigError(f"{origin}: {error}") from error
    if "cache-dir" in table:
        folder = table["cache-dir"]
        if not isinstance(folder, str) or not folder.strip():
            raise ConfigError(f"{origin}: `cache-dir` must name a folder (a string that is not empty)")
        settings.cache_dir = base / Path(folder).expanduser()
    if "extension" in table:
        settings.extension = {**settings.extension, **_extensions(table["extension"], origin)}
    settings.limits = InputLimits(
        max_file_size=_positive_int(table, "max-file-size", origin, settings.limits.max_file_size),
        max_nesting=_positive_int(table, "max-nesting", origin, settings.limits.max_nesting),
    )
    for key in table:
        if key != "extend":
            settings.origins[key] = origin


def _per_file_ignores(table: dict, key: str, origin: str, base: Path) -> list[tuple[Pattern, list[str]]]:
    value = table[key]
    if not isinstance(value, dict):
        raise ConfigError(f"{origin}: `{key}` must be a table of pattern = [codes]")
    patterns(list(value), base, f"{origin}: `{key}`")
    return [(Pattern(pattern, base), validate(_string_list(value, pattern, origin))) for pattern in value]


def patterns(texts: list[str], base: Path, where: str) -> list[Pattern]:
    """Patterns as written at `where` (a config file's key, an option), refused with
    what is wrong when one is not a pattern."""
    for text in texts:
        problem = pattern_problem(text)
        if problem:
            raise ConfigError(f"{where}: {problem}")
    return [Pattern(text, base) for text in texts]


def _extensions(value: Any, origin: str) -> dict[str, str]:
    if not isinstance(value, dict) or not all(isinstance(v, str) for v in value.values()):
        raise ConfigError(f"{origin}: `extension` must be a table of suffix = language, e.g. {{ ipy = \"ipynb\" }}")
    for suffix, language in value.items():
        if language not in LANGUAGES:
            raise ConfigError(f"{origin}: `extension`: unknown language `{language}` for `{suffix}` (one of {', '.join(LANGUAGES)})")
    return {suffix.lstrip("."): language for suffix, language in value.items()}


def parse_extension_option(value: str) -> dict[str, str]:
    """`--extension ipy:ipynb` (comma-separated pairs)."""
    pairs = {}
    for item in (part.strip() for part in value.split(",")):
        suffix, colon, language = item.partition(":")
        if not colon or not suffix:
            raise ConfigError(f"--extension {value!r}: write SUFFIX:LANGUAGE, e.g. ipy:ipynb")
        pairs[suffix] = language
    return _extensions(pairs, "--extension")


def _string_list(table: dict, key: str, origin: str) -> list[str]:
    value = table[key]
    if not isinstance(value, list) or not all(isinstance(item, str) for item in value):
        raise ConfigError(f"{origin}: `{key}` must be a list of strings")
    return value


def _positive_int(table: dict, key: str, origin: str, default: int) -> int:
    value = table.get(key, default)
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ConfigError(f"{origin}: `{key}` must be a positive integer")
    return value
