"""What a round's project index takes over from the round before's.

After the first round, each round checks a few files again and builds a new index
from every summary; the stale check then asks it every answer every file depends on
(Megatron-LM: 24,000 a round, 13,000 of them about what a function is passed). A file
checked again mostly reports other return values and other arguments passed, with
the same names defined, exported and imported. Then every name resolves as before,
and an answer can differ only where it reads a summary that changed:

- "f:" a function's own data, in the module that defines it;
- "c:" a class's bases and its methods' returns, in the module that defines it;
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


def resolves_alike(index: "ProjectIndex", previous: "ProjectIndex") -> bool:
    """Whether every project name resolves to the same module and spelling in `index`
    as in `previous`: the same modules, and in each the same names defined (with the
    same bases), exported and star-imported."""
    # (a module name that two files claim is left out of both, so the keys tell that too)
    if index.modules.keys() != previous.modules.keys():
        return False
    return all(
        data is previous.modules[name] or _resolution_of(data) == _resolution_of(previous.modules[name])
        for name, data in index.modules.items()
    )  # fmt: skip


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
            if kind == "p" and owner[1] in passed:
                continue
        answers[key] = answer
        if key in previous._fingerprints:
            fingerprints[key] = previous._fingerprints[key]
    return answers, fingerprints


def _passed_differently(index: "ProjectIndex", previous: "ProjectIndex", changed: set[str]) -> set[str]:
    """The functions (canonical names) whose "p:" answer may differ: a changed module
    calls them with other arguments, calls them opaquely or no longer does, or they
    take their arguments differently."""
    callees: set[str] = set()
    for name in changed:
        new, old = index.modules[name], previous.modules[name]
        new_calls, old_calls = new.get("calls", {}), old.get("calls", {})
        if list(new_calls) != list(old_calls):
            # the sites are joined in this order, and a join keeps the first's `via`
            callees.update(new_calls.keys() | old_calls.keys())
        else:
            callees.update(c for c in new_calls if new_calls[c] != old_calls[c])
        callees.update(set(new.get("opaque_calls", ())) ^ set(old.get("opaque_calls", ())))
    passed = set()
    for callee in callees:
        located = index.locate(callee)
        if located is not None:
            passed.add(located[1])
    for name in changed:
        new_functions, old_functions = index.modules[name]["functions"], previous.modules[name]["functions"]
        passed.update(q for q, data in new_functions.items() if _binding(data) != _binding(old_functions[q]))
    return passed


def _binding(function: dict[str, Any]) -> tuple:
    return tuple(function[field] for field in _BINDING_FIELDS)


def _resolution_of(summary: dict[str, Any]) -> tuple:
    """What resolving a name reads of a module's summary (ProjectNames._find_owner,
    and a class's bases for "c:")."""
    return summary["functions"].keys(), summary["classes"], summary["exports"], summary.get("star_imports")
