"""What a round's project index takes over from the round before's.

After the first round, each round checks a few files again and builds a new index
from every summary; the stale check then asks it every answer every file depends on
(Megatron-LM: 24,000 a round, 13,000 of them about what a function is passed). A file
checked again mostly reports other return values and other arguments passed, with
the same names defined, exported and imported. A module modeled for the first time
(a callee, read before only for its imports) now defines names, but the names asked
about mostly resolve where they did: `mod.f` was `mod`'s before it was defined there.
Where every name the round before resolved resolves as before, an answer can differ
only where it reads a summary that changed:

- "f:" a function's own data, in the module that defines it;
- "c:" a class's methods' returns, in the module that defines it, and its bases,
  in the modules that define them;
- "p:" the call sites that pass the function something, in every module, and the
  function's own parameters.

Everything else is taken over as it was, answer and fingerprint.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .index import ProjectIndex

# a function's data that binding its call sites reads ("returns" and "where" do not)
_BINDING_FIELDS = ("params", "positional", "self", "defaults")


def resolves_alike(index: "ProjectIndex", previous: "ProjectIndex") -> dict[str, Any] | None:
    """The names `previous` resolved, resolved in `index` (its `_owners`), where every
    one resolves to the same module and spelling; None where one does not, or the
    modules differ."""
    # (a module name that two files claim is left out of both, so the keys tell that too)
    if index.modules.keys() != previous.modules.keys() or index._spelled != previous._spelled:
        return None
    moved = {
        name for name, data in index.modules.items()
        if data is not previous.modules[name] and _resolution_of(data) != _resolution_of(previous.modules[name])
    }  # fmt: skip
    index._consulted = previous._consulted
    # a name resolves anew only where its resolution read a module that changed
    for name, owner in previous._owners.items():
        consulted = previous._consulted.get(name)
        if (consulted is None or not moved.isdisjoint(consulted)) and index.resolve_owner(name) != owner:
            index._consulted = {}
            return None
    return previous._owners


def carried_answers(index: "ProjectIndex", previous: "ProjectIndex") -> tuple[dict[str, Any], dict[str, str]]:
    """The answers (and their fingerprints) of `previous` that `index` gives alike,
    given that names resolve alike (resolves_alike). A summary that is the same object
    is unchanged; the others are compared where an answer reads them."""
    changed = {name for name, data in index.modules.items() if data is not previous.modules[name]}
    passed = _passed_differently(index, previous, changed)
    answers: dict[str, Any] = {}
    fingerprints: dict[str, str] = {}
    for key, answer in previous._answers.items():
        kind, _, name = key.partition(":")
        if name not in index._owners:  # never happens: answering a key resolves its name
            continue
        owner = index._owners[name]
        if owner is not None:
            if kind in ("f", "c") and owner[0] in changed:  # a class's methods are in its module
                continue
            if kind == "c" and _bases_changed(index, owner, changed):
                continue
            if kind == "p" and owner[1] in passed:
                continue
        answers[key] = answer
        if key in previous._fingerprints:
            fingerprints[key] = previous._fingerprints[key]
    return answers, fingerprints


def carried_bindings(index: "ProjectIndex", previous: "ProjectIndex") -> dict[str, Any]:
    """The bound call sites of `previous` (by module) that `index` binds alike, given
    that names resolve alike: an unchanged module's, where none of the functions it
    calls takes its arguments differently, is new or is gone."""
    changed = {name for name, data in index.modules.items() if data is not previous.modules[name]}
    rebound = _bound_differently(index, previous, changed)

    def binds_alike(name: str) -> bool:
        for callee in index.modules[name].get("calls", {}):
            owner = index._owners.get(callee, False)
            if owner is False or (owner is not None and owner[1] in rebound):
                return False
        return True

    return {name: bound for name, bound in previous._bound.items() if name not in changed and binds_alike(name)}


def _passed_differently(index: "ProjectIndex", previous: "ProjectIndex", changed: set[str]) -> set[str]:
    """The functions (canonical names) whose "p:" answer may differ: a changed module
    passes them other arguments (its sites for the function, in the order they are
    joined: a join keeps the first's `via`), calls them opaquely or no longer does,
    or they take their arguments differently."""
    passed: set[str] = set()
    for name in changed:
        new, old = index.modules[name], previous.modules[name]
        new_sites, old_sites = _sites_by_function(index, new), _sites_by_function(index, old)
        passed.update(f for f in new_sites.keys() | old_sites.keys() if new_sites.get(f) != old_sites.get(f))
        for callee in set(new.get("opaque_calls", ())) ^ set(old.get("opaque_calls", ())):
            located = index.locate(callee)
            if located is not None:
                passed.add(located[1])
    return passed | _bound_differently(index, previous, changed)


def _sites_by_function(index: "ProjectIndex", summary: dict[str, Any]) -> dict[str, list]:
    """A module's call sites by what they call (its canonical name, however the
    module spells it), in the order the index binds them."""
    grouped: dict[str, list] = {}
    for callee, sites in summary.get("calls", {}).items():
        located = index.locate(callee)
        if located is not None:
            grouped.setdefault(located[1], []).extend(sites)
    return grouped


def _bound_differently(index: "ProjectIndex", previous: "ProjectIndex", changed: set[str]) -> set[str]:
    """The functions of the changed modules that take their arguments differently,
    are new, or are gone."""
    differ: set[str] = set()
    for name in changed:
        new_functions, old_functions = index.modules[name]["functions"], previous.modules[name]["functions"]
        differ.update(q for q, data in new_functions.items() if q not in old_functions or _binding(data) != _binding(old_functions[q]))
        differ.update(old_functions.keys() - new_functions.keys())
    return differ


def _bases_changed(index: "ProjectIndex", owner: tuple[str, str], changed: set[str]) -> bool:
    """Whether a base of the class is defined in a changed module: a base that module
    now defines is answered by its canonical name, not as it was written."""
    bases = index.modules[owner[0]]["classes"].get(owner[1], ())
    return any((found := index._owners.get(base)) is not None and found[0] in changed for base in bases)


def _binding(function: dict[str, Any]) -> tuple:
    return tuple(function[field] for field in _BINDING_FIELDS)


def _resolution_of(summary: dict[str, Any]) -> tuple:
    """What resolving a name reads of a module's summary (ProjectNames._find_owner,
    and a class's bases for "c:")."""
    return summary["functions"].keys(), summary["classes"], summary["exports"], summary.get("star_imports")
