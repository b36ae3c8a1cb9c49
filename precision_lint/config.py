"""`[tool.precision-lint]` in pyproject.toml, found by walking up from the checked
paths, merged with command-line options."""
from __future__ import annotations

import fnmatch
import sys
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

from .limits import InputLimits
from .selection import UnknownSelector, enabled_codes, matching_codes, validate

DEFAULT_SELECT = ("PH0",)
DEFAULT_EXCLUDE = (
    ".bzr", ".direnv", ".eggs", ".git", ".git-rewrite", ".hg", ".mypy_cache", ".nox",
    ".pants.d", ".pytype", ".ruff_cache", ".svn", ".tox", ".venv", "__pypackages__",
    "_build", "buck-out", "build", "dist", "node_modules", "site-packages", "venv",
    ".precision-lint-cache", "__pycache__",
)  # fmt: skip
KNOWN_KEYS = {
    "select", "ignore", "extend-select", "exclude", "extend-exclude",
    "per-file-ignores", "unfixable", "cache-dir", "max-file-size", "max-nesting",
}  # fmt: skip


class ConfigError(Exception):
    pass


@dataclass
class Settings:
    root: Path
    config_file: Path | None = None
    select: list[str] = field(default_factory=lambda: list(DEFAULT_SELECT))
    extend_select: list[str] = field(default_factory=list)
    ignore: list[str] = field(default_factory=list)
    exclude: list[str] = field(default_factory=lambda: list(DEFAULT_EXCLUDE))
    extend_exclude: list[str] = field(default_factory=list)
    per_file_ignores: dict[str, list[str]] = field(default_factory=dict)
    unfixable: list[str] = field(default_factory=list)
    cache_dir: Path | None = None
    limits: InputLimits = field(default_factory=InputLimits)

    def enabled_codes(self) -> frozenset[str]:
        return enabled_codes(self.select, self.extend_select, self.ignore)

    def codes_for(self, path: str, enabled: frozenset[str]) -> frozenset[str]:
        """The rules enabled for one file, after per-file-ignores."""
        relative = self.relative(path)
        ignored: list[str] = []
        for pattern, selectors in self.per_file_ignores.items():
            if _matches(pattern, relative):
                ignored.extend(selectors)
        return enabled - matching_codes(ignored) if ignored else enabled

    def unfixable_codes(self) -> frozenset[str]:
        return matching_codes(self.unfixable)

    def is_excluded(self, path: str, base: Path | None = None) -> bool:
        """Whether `path` matches an exclude pattern: as a whole (relative to the config's
        root) or by one of its folders, counting only folders below `base` (the path
        given on the command line) and below the root, never above."""
        relative = self.relative(path)
        parts = _parts_below(Path(path).absolute(), [self.root, *([base.absolute()] if base else [])])
        given = self.relative(str(base)) if base is not None else None
        for pattern in [*self.exclude, *self.extend_exclude]:
            if given is not None and _matches(pattern, given):
                continue  # the user named this folder (or one inside an excluded one) explicitly
            if _matches(pattern, relative) or any(fnmatch.fnmatchcase(part, pattern) for part in parts):
                return True
        return False

    def relative(self, path: str) -> str:
        absolute = Path(path).absolute()
        try:
            return absolute.relative_to(self.root).as_posix()
        except ValueError:
            return absolute.as_posix()


def _parts_below(path: Path, anchors: list[Path]) -> tuple[str, ...]:
    """The components of `path` below the deepest anchor that contains it."""
    best: tuple[str, ...] | None = None
    for anchor in anchors:
        try:
            parts = path.relative_to(anchor).parts
        except ValueError:
            continue
        if best is None or len(parts) < len(best):
            best = parts
    return best if best is not None else (path.name,)


def _matches(pattern: str, relative: str) -> bool:
    pattern = pattern.rstrip("/")
    return (
        fnmatch.fnmatchcase(relative, pattern)
        or fnmatch.fnmatchcase(relative, f"{pattern}/*")
        or fnmatch.fnmatchcase(PurePosixPath(relative).name, pattern)
    )


def find_config(start: Path) -> Path | None:
    """The nearest pyproject.toml with a [tool.precision-lint] table, walking up."""
    directory = start if start.is_dir() else start.parent
    for candidate in [directory, *directory.parents]:
        pyproject = candidate / "pyproject.toml"
        if pyproject.is_file():
            try:
                data = tomllib.loads(pyproject.read_text(encoding="utf-8"))
            except (OSError, tomllib.TOMLDecodeError, UnicodeDecodeError) as error:
                raise ConfigError(f"{pyproject}: cannot read: {error}") from error
            if "precision-lint" in data.get("tool", {}):
                return pyproject
    return None


def load_settings(config_file: Path | None, cwd: Path) -> Settings:
    if config_file is None:
        return Settings(root=cwd.absolute())
    try:
        data = tomllib.loads(config_file.read_text(encoding="utf-8"))
    except (OSError, tomllib.TOMLDecodeError, UnicodeDecodeError) as error:
        raise ConfigError(f"{config_file}: cannot read: {error}") from error
    table = data.get("tool", {}).get("precision-lint", {})
    unknown = set(table) - KNOWN_KEYS
    if unknown:
        raise ConfigError(f"{config_file}: unknown key(s) in [tool.precision-lint]: {', '.join(sorted(unknown))}")
    settings = Settings(root=config_file.parent.absolute(), config_file=config_file)
    try:
        for key in ("select", "ignore", "extend-select", "unfixable"):
            if key in table:
                setattr(settings, key.replace("-", "_"), validate(_string_list(table, key, config_file)))
        for key in ("exclude", "extend-exclude"):
            if key in table:
                setattr(settings, key.replace("-", "_"), _string_list(table, key, config_file))
        if "per-file-ignores" in table:
            value = table["per-file-ignores"]
            if not isinstance(value, dict):
                raise ConfigError(f"{config_file}: per-file-ignores must be a table of pattern = [codes]")
            settings.per_file_ignores = {
                pattern: validate(_string_list(value, pattern, config_file)) for pattern in value
            }
        if "cache-dir" in table:
            settings.cache_dir = settings.root / str(table["cache-dir"])
        settings.limits = InputLimits(
            max_file_size=_positive_int(table, "max-file-size", config_file, settings.limits.max_file_size),
            max_nesting=_positive_int(table, "max-nesting", config_file, settings.limits.max_nesting),
        )
    except UnknownSelector as error:
        raise ConfigError(f"{config_file}: {error}") from error
    return settings


def _string_list(table: dict, key: str, config_file: Path) -> list[str]:
    value = table[key]
    if not isinstance(value, list) or not all(isinstance(item, str) for item in value):
        raise ConfigError(f"{config_file}: `{key}` must be a list of strings")
    return value


def _positive_int(table: dict, key: str, config_file: Path, default: int) -> int:
    value = table.get(key, default)
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ConfigError(f"{config_file}: `{key}` must be a positive integer")
    return value
