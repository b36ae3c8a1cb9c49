"""The order of the first round: a module after the project modules it imports, so
that most modules are checked with their imports' summaries known (project/learned.py).

The imports are read off the source text with a pattern, not parsed: the order only
decides how soon an answer is known, never what it is, so an import the pattern misses
(or one it makes up from a docstring) costs at most a file checked again."""
from __future__ import annotations

import re
from pathlib import Path

from .circles import imports_first
from .modules import absolute_module, identify, spellings_under

_IMPORT = re.compile(
    rb"^[ \t]*(?:from[ \t]+(\.*)([\w.]*)[ \t]+import[ \t]*(\([^)]*\)|[^\n#;]*)|import[ \t]+([^\n#;]+))",
    re.MULTILINE,
)
_NAME = re.compile(rb"[A-Za-z_][\w.]*")
_BLANKS = re.compile(rb"[ \t]*")
_REEXPORT_HOPS = 3  # `pkg` -> `pkg.sub` -> `pkg.sub.mod`


def import_order(paths: list[str], reexports: dict[str, dict[str, str]] | None = None) -> tuple[list[int], list[list[int]]]:
    """Indices into `paths`, every file after the files it imports but where the
    imports go round in a circle (project/circles.py), walked from the largest files
    (a large file that nothing imports then starts early, not at the end of the run);
    and for each file, the indices of those it imports. `reexports`: what packages re-export
    (module -> {name: where it comes from}); a name imported through its package
    then also ties the file to the module that defines the name."""
    identities = [identify(path) for path in paths]
    number = {identity.name: i for i, identity in enumerate(identities)}
    reexports = dict(reexports or {})
    for i, identity in enumerate(identities):  # `megatron.core.utils` is `core.utils` (modules.py)
        for spelling in spellings_under(identity.name, identity.root):
            number.setdefault(spelling, i)
            if identity.name in reexports:
                reexports.setdefault(spelling, reexports[identity.name])
    imports: list[list[int]] = []
    sizes: list[int] = []
    for i, (path, identity) in enumerate(zip(paths, identities)):
        text = _read(path)
        names = _imported(text, identity.package)
        found = (number[name] for name in (_through_reexports(names, reexports) if reexports else names) if name in number)
        imports.append([j for j in dict.fromkeys(found) if j != i and not _inside(identity.name, identities[j].name, paths[j])])
        sizes.append(len(text))
    order = imports_first(imports, sorted(range(len(paths)), key=lambda i: -sizes[i]))
    return order, imports


def imported_through_reexports(paths: list[str], reexports: dict[str, dict[str, str]]) -> set[str]:
    """Every module (or name in one) the files import, with where the packages'
    re-exports lead each name."""
    found: set[str] = set()
    for path in paths:
        found.update(_through_reexports(_imported(_read(path), identify(path).package), reexports))
    return found


def _through_reexports(names: list[str], reexports: dict[str, dict[str, str]]):
    """The names, each followed by where its package's re-exports lead it (`pkg.count`
    from `pkg/__init__.py`'s `from pkg.core import count`: `pkg.core.count`, and its
    module `pkg.core`), a few packages deep."""
    for name in names:
        yield name
        for _ in range(_REEXPORT_HOPS):
            package, _, last = name.rpartition(".")
            target = reexports.get(package, {}).get(last)
            if target is None:
                break
            name = target
            yield name  # a module, or a name in one
            yield name.rpartition(".")[0]


def _inside(module: str, imported: str, path: str) -> bool:
    """Whether `module` imports from a package that holds it (`from pkg import log`
    in pkg/util/prints.py): the package's `__init__.py` imports its modules in turn,
    so the import closes a circle, and the package's own modules go first."""
    return path.endswith("__init__.py") and module.startswith(imported + ".")


def imported_names(path: str, package: str) -> list[str]:
    """The modules (and names in them) a file imports at its top level."""
    return _imported(_read(path), package)


def _read(path: str) -> bytes:
    try:
        return Path(path).read_bytes()
    except OSError:
        return b""  # the check reports it


def _imported(text: bytes, package: str) -> list[str]:
    """The modules a file may import: `from a.b import c` may name module `a.b` or
    `a.b.c`; relative imports start from the file's package."""
    names: list[str] = []
    for match in _import_lines(text):
        if _in_function(text, match.start()):
            continue  # run when called, not on import: it would tie modules in circles
        dots, module, imported, plain = match.groups()
        if plain is not None:
            names.extend(name.decode() for name in _NAME.findall(plain) if name != b"as")
            continue
        base = absolute_module(module.decode(), len(dots), package)
        if base is None:
            continue
        if base:
            names.append(base)
        prefix = f"{base}." if base else ""
        names.extend(prefix + name.decode() for name in _NAME.findall(imported) if name != b"as")
    return names


def _import_lines(text: bytes):
    """The import statements' matches, found from the word `import` (a pattern tried
    at every line start costs ten times as much)."""
    at = text.find(b"import")
    while at != -1:
        match = _IMPORT.match(text, text.rfind(b"\n", 0, at) + 1)
        if match is not None and match.end() > at:
            yield match
            at = text.find(b"import", match.end())
        else:
            at = text.find(b"import", at + 6)


def _in_function(text: bytes, start: int) -> bool:
    """Whether the line at `start` is inside a `def`: the nearest lines above it that
    are indented less, one per level, include a `def` (an import under `if` or `try`
    at the top level runs on import)."""
    indent = _indent(text, start)
    while indent > 0 and start > 0:
        start = text.rfind(b"\n", 0, start - 1) + 1
        level = _indent(text, start)
        line = text[start + level : start + level + 10].partition(b"\n")[0]
        if level < indent and line.strip() and not line.startswith(b"#"):
            if line.startswith((b"def ", b"async def")):
                return True
            indent = level
    return False


def _indent(text: bytes, start: int) -> int:
    return _BLANKS.match(text, start).end() - start
