"""Which module a file is: its dotted name from the package folders above it (the
folders that hold an `__init__.py`), and the package its relative imports start from.

A folder above the top package that has no `__init__.py` may still be imported by
name: Python makes it a namespace package (PEP 420). Megatron-LM's `megatron/` is one,
so its code imports `megatron.core.utils`, the module named here `core.utils`: each
module also answers to its name behind the folders above its root (namespace_prefixes)."""
from __future__ import annotations

import keyword
import os
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path


@dataclass(frozen=True)
class ModuleIdentity:
    name: str  # "pkg.sub.mod"; a script outside any package is its file's stem
    package: str  # where `from . import x` starts: "pkg.sub" (for pkg/sub/__init__.py too)
    root: str  # the folder that holds the top package (where `import pkg` is found)


def identify(path: str | Path) -> ModuleIdentity:
    return _identify(os.path.abspath(path))


@lru_cache(maxsize=16384)
def _identify(absolute_path: str) -> ModuleIdentity:
    """identify's answer for an absolute path, kept: a run asks for each of its files
    several times (the import order, each round's summaries, the worker's check), and
    the answer reads only the `__init__.py` files above it, which _packages_above
    already keeps."""
    path = Path(absolute_path)
    is_init = path.name == "__init__.py"
    packages = _packages_above(str(path.parent))
    stem = path.name.rsplit(".", 1)[0]
    parts = list(packages) + ([] if is_init else [stem])
    name = ".".join(parts) if parts else stem
    package = ".".join(packages) if is_init else ".".join(parts[:-1])
    root = path.parent
    for _ in packages:
        root = root.parent
    return ModuleIdentity(name, package, str(root))


@lru_cache(maxsize=4096)
def _packages_above(directory: str) -> tuple[str, ...]:
    """The package names from the top package down to `directory` (empty when
    `directory` holds no `__init__.py`)."""
    if not os.path.isfile(os.path.join(directory, "__init__.py")):
        return ()
    parent = os.path.dirname(directory)
    if parent == directory:
        return ()
    return _packages_above(parent) + (os.path.basename(directory),)


# how many folders above a top package may make a namespace package's name
# (`megatron.core`; `src.company.pkg` would be three)
NAMESPACE_DEPTH = 3


@lru_cache(maxsize=4096)
def namespace_prefixes(root: str) -> tuple[str, ...]:
    """The names the folders above a top package give it as namespace packages, the
    nearest first: ("megatron", "lm.megatron") for /code/lm/megatron. A folder whose
    name is no identifier (`Megatron-LM`) cannot be imported, and ends the chain."""
    prefixes: list[str] = []
    folder = os.path.abspath(root)
    names: list[str] = []
    for _ in range(NAMESPACE_DEPTH):
        name = os.path.basename(folder)
        if not name.isidentifier() or keyword.iskeyword(name):
            break
        names.insert(0, name)
        prefixes.append(".".join(names))
        parent = os.path.dirname(folder)
        if parent == folder:
            break
        folder = parent
    return tuple(prefixes)


def root_of(module: str, path: str) -> str:
    """The folder that holds a module's top package, from its name and its file (as
    identify counts it: one folder per package, the file's own for `__init__.py`)."""
    folder = os.path.dirname(os.path.abspath(path))
    levels = module.count(".") + (1 if os.path.basename(path) == "__init__.py" else 0)
    for _ in range(levels):
        folder = os.path.dirname(folder)
    return folder


def spellings_under(name: str, root: str) -> list[str]:
    """The names a module (or top package) of `root` is imported by behind the
    namespace packages above it: `megatron.core.utils` for `core.utils`."""
    return [f"{prefix}.{name}" for prefix in namespace_prefixes(root)]


def top_package_spellings(module: str, path: str) -> tuple[str, ...]:
    """The names a module's top package is imported by behind namespace packages
    (`megatron.core` for core/utils.py), as spellings_under gives them."""
    return _top_package_spellings(os.getcwd(), module, path)


@lru_cache(maxsize=16384)
def _top_package_spellings(cwd: str, module: str, path: str) -> tuple[str, ...]:
    # each round's index adds every summary again (Megatron-LM: 9,500 times a run),
    # and a worker each summary it learns; `cwd`: what a relative path means
    return tuple(spellings_under(module.partition(".")[0], root_of(module, os.path.join(cwd, path))))


def namespace_spellings(module: str, path: str) -> list[str]:
    """The other names a module is imported by: `megatron.core.utils` for `core.utils`
    in megatron/core/utils.py, where `megatron/` has no `__init__.py`."""
    return spellings_under(module, root_of(module, path))


def find_module_file(name: str, roots: list[str]) -> Path | None:
    """The file of module `name` under one of `roots` (for a module the run did not
    list, such as the imports of files pre-commit hands over)."""
    # joined as text: a run looks for thousands of modules between its rounds (2,000
    # on Megatron-LM), and pathlib's joins took five times as long
    relative = os.path.join(*name.split("."))
    for root in roots:
        for candidate in (os.path.join(root, relative + ".py"), os.path.join(root, relative, "__init__.py")):
            if os.path.isfile(candidate):
                return Path(candidate)
    return None


def modules_to_read(names, roots: list[str], known: set[str]) -> dict[str, Path]:
    """Files of the project modules that the qualified `names` (what a model asked
    the index about) live in, found under `roots`, leaving out modules in `known`.
    Only names whose top package sits in a root are looked for: `torch.x` and
    `transformers.y` cost one set lookup, not a walk over the disk."""
    tops: dict[str, list[str]] = {}
    spelled: set[str] = set()  # `megatron.core`: a top package behind a namespace prefix
    for root in roots:
        for top in _top_level_names(root):
            tops.setdefault(top, []).append(root)
            spelled.update(spellings_under(top, root))
    wanted: dict[str, Path] = {}
    found: set[str] = set()  # the names found so far, as spelled
    missing: set[str] = set()
    for name in names:
        parts = name.split(".")
        if parts[0] not in tops:
            parts = _without_namespace(parts, spelled)
            if parts is None:
                continue
        for cut in range(len(parts) - 1, 0, -1):
            module = ".".join(parts[:cut])
            if module in known or module in wanted or module in found:
                break
            if module in missing:
                continue
            path = find_module_file(module, tops[parts[0]])
            if path is not None:
                # by the name the run knows it by: `megatron.core.utils` found from a
                # script beside `megatron/` is `core.utils`, which may be in the run
                found.add(module)
                canonical = identify(path).name
                if canonical not in known:
                    wanted.setdefault(canonical, path)
                break
            missing.add(module)
    return wanted


def _without_namespace(parts: list[str], spelled: set[str]) -> list[str] | None:
    """`megatron.core.utils` as `core.utils` where `megatron.core` is in `spelled` (a
    top package behind its namespace prefix); None where no prefix is."""
    for cut in range(1, min(len(parts), NAMESPACE_DEPTH + 1)):
        if ".".join(parts[: cut + 1]) in spelled:
            return parts[cut:]
    return None


def without_namespace(qualified: str, spelled: set[str]) -> str | None:
    """without_namespace's parts for a dotted name, joined."""
    parts = _without_namespace(qualified.split("."), spelled)
    return None if parts is None else ".".join(parts)


@lru_cache(maxsize=1024)
def _top_level_names(root: str) -> tuple[str, ...]:
    """The modules and packages importable from `root` (`train`, `megatron`), folders
    without an `__init__.py` included: they are namespace packages."""
    try:
        entries = os.listdir(root)
    except OSError:
        return ()
    names = []
    for entry in entries:
        if entry.endswith(".py"):
            names.append(entry[:-3])
        elif entry.isidentifier() and os.path.isdir(os.path.join(root, entry)):
            names.append(entry)
    return tuple(names)


def absolute_module(module: str, dots: int, package: str) -> str | None:
    """`from ..util import f` in package `pkg.sub`: `pkg.util`. None above the top;
    an absolute import (no dots) is itself."""
    if dots == 0:
        return module
    parts = package.split(".") if package else []
    if dots - 1 > len(parts) or (not parts and dots > 0 and not module):
        return None
    base = parts[: len(parts) - (dots - 1)]
    return ".".join(base + ([module] if module else []))
