"""The trees a worker keeps from one round of a project's check to the next.

A file checked again in a later round (an answer it got changed) is the same text:
its tree is too. Parsing is about half of checking a file (the standard parser and
the quick tree, or libcst's parse for one with findings), and a Megatron-LM run
checks 110 files again. A worker keeps, for each file it checked, the tree its next
check will start from: the quick tree, or libcst's tree where the file had something
to report (its next check goes to libcst at once, runner.Job.concrete). The parent
hands a file checked again to the worker that checked it (runner._Pool).

Trees are nodes that nothing changes (libcst's nodes are frozen), and each model
keeps its own tables, so a kept tree is as good as a new one. A quick tree takes
about 15 bytes per byte of source, libcst's about 25: the store holds at most
MAX_SOURCE characters of source, the oldest going first.
"""
from __future__ import annotations

import gc
from collections import OrderedDict
from typing import Any

from . import speedups

MAX_SOURCE = 12_000_000


class KeptTrees:
    def __init__(self, max_source: int = MAX_SOURCE) -> None:
        self.max_source = max_source
        self._trees: OrderedDict[str, tuple[str, str, Any]] = OrderedDict()  # path -> (source, kind, tree)
        self._held = 0  # characters of source held

    def get(self, path: str, source: str) -> tuple[str, Any] | None:
        """("quick", QuickTree) or ("concrete", cst.Module) kept for `path` when its
        source is `source`: libcst's tree where the quick tree had something to
        report or cannot be built."""
        entry = self._trees.get(path)
        if entry is None or (entry[0] is not source and entry[0] != source):
            return None
        return entry[1], entry[2]

    def keep(self, path: str, source: str, kind: str, tree: Any) -> None:
        self._forget(path)
        if len(source) > self.max_source:
            return
        self._trees[path] = (source, kind, tree)
        self._held += len(source)
        while self._held > self.max_source:
            self._forget(next(iter(self._trees)))

    def settle(self) -> None:
        """Called once a file's tree is built, before it is modeled: all the worker
        holds, the new tree with it, leaves the cyclic collector now, so the collection
        after the job (runner.collector_paused) walks what the model made and not the
        tree (Megatron-LM: 0.16 s a worker). A tree holds no cycles: one that is not
        kept is freed by reference counting all the same."""
        if speedups.enabled("gc") and not gc.isenabled():
            gc.freeze()

    def drop_garbage(self) -> None:
        """Called where a model of the file ran before its next tree is built (the quick
        pass had something to report): what that model left is collected now, while
        it is all the collector holds, so the next settle freezes none of its cycles."""
        if speedups.enabled("gc") and not gc.isenabled():
            gc.collect(0)

    def _forget(self, path: str) -> None:
        entry = self._trees.pop(path, None)
        if entry is not None:
            self._held -= len(entry[0])
