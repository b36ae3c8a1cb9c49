"""A class's methods are interpreted twice (semantic.py): a first pass, not
recorded, learns the `self.x` state, and a second, recorded, runs each method on
it. A method whose second run would start from what its first did (the state it
reads, the answers it got about callees, no creation changed since) would do just
what the first did: instead of running it again, what the first run did is replayed.

A `Run` keeps what one interpretation started from, what it asked, and, for a run
that is not recorded, each effect a recorded run has (a fact logged, an attribute
bound, a call site seen) as a call to make again."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable

import libcst as cst

from .definitions import FunctionInfo
from .summaries import FunctionSummary
from .values import Value
from .walk import code_children


@dataclass
class Run:
    started: dict[str, Value]  # the class state it started from
    changes: int  # the log's count of creation changes when it started
    # (callee, what it answered): the functions of the module it asked about
    asked: list[tuple[str, FunctionSummary | None]] = field(default_factory=list)
    # what a recorded run would have done: None for a run that is recorded
    effects: list[tuple[Callable[..., None], tuple]] | None = None

    def note(self, effect: Callable[..., None], *args) -> None:
        if self.effects is not None:
            self.effects.append((effect, args))

    def replay(self) -> None:
        for effect, args in self.effects or ():
            effect(*args)


def attributes_read(method: FunctionInfo, named: frozenset[tuple[str, str]] | None = None) -> frozenset[str]:
    """The attributes `self.x` a method names anywhere in its body (its first
    parameter's: a key of the class state is `self.<x>` or `self.<x>[...]`).
    `named`: the def's `name.attribute` pairs where the tree has them (the quick
    tree does); otherwise its nodes are walked, layout left out."""
    if not method.receives_self or not method.params:
        return frozenset()
    receiver = method.params[0]
    if named is not None:
        return frozenset(attribute for name, attribute in named if name == receiver)
    found = set()
    pending: list[cst.CSTNode] = [method.node]
    while pending:
        node = pending.pop()
        if type(node) is cst.Attribute and type(node.value) is cst.Name and node.value.value == receiver:
            found.add(node.attr.value)
        pending.extend(code_children(node))
    return frozenset(found)


def state_read_unchanged(run: Run, state: dict[str, Value], attributes: Callable[[], frozenset[str]]) -> bool:
    """Whether every key of the state the method can read is bound to what it was
    when `run` started (by identity: a join that changes nothing keeps the value)."""
    before = run.started
    changed = [key for key in before.keys() | state.keys() if before.get(key) is not state.get(key)]
    if not changed:
        return True
    names = attributes()
    return not any(key[len("self.") :].split("[", 1)[0] in names for key in changed)
