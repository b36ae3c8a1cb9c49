"""The project index: every checked module's summary, with names resolved across
modules (absolute and relative imports, `import pkg.mod as m`, re-exports in
`__init__.py`) and the arguments the project passes to each function.

A module's model sees the index through a ModuleContext, which answers from a slice
of precomputed answers and records what was asked and what the answer was worth
(a fingerprint): when a later round's answer differs, the module is checked again."""
from __future__ import annotations

import hashlib
import json
from collections import deque
from typing import Any, Iterable

from .. import speedups
from ..model.summaries import Evidence, FunctionSummary, ProjectFacts, bind_arguments_from, join_bindings
from ..model.values import UNKNOWN, Value
from .carry import carried_answers, carried_bindings, resolves_alike
from .imports import ImportGraph
from .modules import top_package_spellings, without_namespace
from .portable import summary_from_data, value_from_data, value_to_data

# how many re-exports a name may pass through (`pkg/__init__.py` -> `pkg/core.py` ...)
_MAX_HOPS = 6
NOTHING = "-"  # the fingerprint of an answer that tells nothing


class ProjectNames:
    """Project names resolved over module summaries: which module holds a function or
    class, through re-exports and star imports (the index's part that a worker's
    store of the run's summaries so far shares: project/learned.py)."""

    def __init__(self) -> None:
        self.modules: dict[str, dict[str, Any]] = {}
        self._ambiguous: set[str] = set()
        # _owner's answers, by module name: a later round's index may take them over
        # with other summaries of the same modules (project/carry.py)
        self._owners: dict[str, tuple[str, str] | None] = {}
        self._modules_of: dict[str, str | None] = {}  # module_of's
        # the modules each resolved name's resolution read (resolves_alike reads it)
        self._consulted: dict[str, tuple[str, ...]] = {}
        self._consulting: list[str] | None = None
        # `megatron.core`: a top package as a namespace package's name spells it
        # (modules.namespace_prefixes); `megatron.core.utils.f` is `core.utils.f`
        self._spelled: set[str] = set()

    def _add(self, summary: dict[str, Any]) -> None:
        """A module's summary; a module name two files claim (two scripts called
        train.py) resolves to neither."""
        name = summary["module"]
        self._spelled.update(top_package_spellings(name, summary["path"]))
        if name in self._ambiguous:
            return
        if name in self.modules and self.modules[name]["path"] != summary["path"]:
            self._ambiguous.add(name)
            del self.modules[name]
            return
        self.modules[name] = summary

    def locate(self, qualified: str) -> tuple[str, str, Any] | None:
        """("function" | "class", canonical name, its data) for a project name."""
        found = self._owner(qualified)
        if found is None:
            return None
        data, canonical = found
        if canonical in data["functions"]:
            return "function", canonical, data["functions"][canonical]
        if canonical in data["classes"]:
            return "class", canonical, data["classes"][canonical]
        return None

    def unmodeled_path(self, qualified: str) -> str | None:
        """The file of the module that holds `qualified` when that module was read
        only for its imports (the prefilter skipped it): modeling it would answer."""
        found = self._owner(qualified)
        if found is None or found[0].get("modeled", True):
            return None
        return found[0]["path"]

    def _owner(self, qualified: str) -> tuple[dict[str, Any], str] | None:
        """The summary of the module that holds a project name, following re-exports
        and star imports, and the name's canonical spelling there."""
        if qualified not in self._owners:
            self._owners[qualified] = self.resolve_owner(qualified)
        owner = self._owners[qualified]
        return None if owner is None else (self.modules[owner[0]], owner[1])

    def resolve_owner(self, qualified: str) -> tuple[str, str] | None:
        """(module name, canonical spelling) of a project name, resolved anew."""
        self._consulting = consulted = []
        try:
            found = self._find_owner(qualified, 0, stars=True)
        finally:
            self._consulting = None
        self._consulted[qualified] = tuple(consulted)
        return None if found is None else (found[0]["module"], found[1])

    def _find_owner(self, qualified: str, hops: int, stars: bool) -> tuple[dict[str, Any], str] | None:
        parts = qualified.split(".")
        for cut in range(len(parts) - 1, 0, -1):
            data = self.modules.get(".".join(parts[:cut]))
            if data is None:
                continue
            if self._consulting is not None:
                self._consulting.append(data["module"])
            if qualified in data["functions"] or qualified in data["classes"]:
                return data, qualified
            target = data["exports"].get(parts[cut])
            if target is not None and hops < _MAX_HOPS:
                return self._find_owner(".".join([target, *parts[cut + 1 :]]), hops + 1, stars)
            if stars and hops < _MAX_HOPS and data.get("star_imports"):  # `from .core import *`
                found = self._through_stars(data["star_imports"], parts[cut:], hops + 1)
                if found is not None:
                    return found
            return data, qualified
        canonical = without_namespace(qualified, self._spelled)
        return None if canonical is None else self._find_owner(canonical, hops, stars)

    def _through_stars(self, stars: list[str], rest: list[str], hops: int) -> tuple[dict[str, Any], str] | None:
        """The module that a chain of star imports brings `rest` from: the nearest
        that defines it, breadth first, each module once (packages that star-import
        one another made a depth-first search exponential: 5.8 million calls for
        fairseq's 12,806 names)."""
        queue = deque((star, hops) for star in stars)
        seen = set(stars)
        while queue:
            module, depth = queue.popleft()
            found = self._find_owner(".".join([module, *rest]), depth, stars=False)
            if found is not None and (found[1] in found[0]["functions"] or found[1] in found[0]["classes"]):
                return found
            data = self.modules.get(self.module_named(module) or "")
            if data is not None and self._consulting is not None:
                self._consulting.append(data["module"])
            if data is not None and depth < _MAX_HOPS:
                for star in data.get("star_imports", ()):
                    if star not in seen:
                        seen.add(star)
                        queue.append((star, depth + 1))
        return None

    def module_named(self, name: str) -> str | None:
        """The project module `name` spells, through a namespace prefix too."""
        if name in self.modules:
            return name
        spelled = without_namespace(name, self._spelled)
        return spelled if spelled in self.modules else None

    def module_of(self, canonical: str) -> str | None:
        if canonical not in self._modules_of:
            self._modules_of[canonical] = self._module_of(canonical)
        return self._modules_of[canonical]

    def _module_of(self, canonical: str) -> str | None:
        parts = canonical.split(".")
        for cut in range(len(parts) - 1, 0, -1):
            if ".".join(parts[:cut]) in self.modules:
                return ".".join(parts[:cut])
        spelled = without_namespace(canonical, self._spelled)
        return None if spelled is None else self._module_of(spelled)

    def name_answer(self, kind: str, name: str) -> Any:
        """The answer about a function ("f") or a class ("c") of the project."""
        located = self.locate(name)
        if located is None:
            return None
        if kind == "f":
            return [located[1], located[2]] if located[0] == "function" else None
        if kind == "c":
            return [located[1], self._class_answer(located[1], located[2])] if located[0] == "class" else None
        return None

    def _class_answer(self, canonical: str, bases: list[str]) -> dict[str, Any]:
        """A class's bases, resolved, and what its methods return (for the fingerprint)."""
        module = self.module_of(canonical) or ""
        methods = {
            q: f["returns"] for q, f in self.modules.get(module, {}).get("functions", {}).items()
            if q.startswith(canonical + ".") and f["returns"] is not None
        }  # fmt: skip
        resolved = []
        for base in bases:
            located = self.locate(base)
            resolved.append(located[1] if located is not None and located[0] == "class" else base)
        return {"bases": resolved, "methods": methods}


class ProjectIndex(ProjectNames):
    def __init__(self, summaries: Iterable[dict[str, Any]], previous: "ProjectIndex | None" = None) -> None:
        """`previous`: the index of the round before, whose resolved names and answers
        this one takes over where they cannot differ (project/carry.py)."""
        super().__init__()
        everything = list(summaries)
        for summary in everything:
            self._add(summary)
        evidence = [Evidence(*item) for summary in everything for item in summary.get("evidence", ())]
        self.facts = ProjectFacts(sorted(evidence, key=lambda e: (e.kind, e.where)))
        self._evidence_paths = {_path_of(e) for e in self.facts.evidence}  # asked once each per file
        self._evidence_data: list[list[str]] | None = None  # slice_for's
        self._everything = everything
        self._imports: ImportGraph | None = None  # built when evidence is settled, not each round
        self._params: dict[str, list[dict[str, Value]]] | None = None
        self._opaque: set[str] = set()
        # each module's call sites, bound: (callee, bindings) and the callees it calls
        # opaquely; the round before's, for the modules whose sites bind alike
        self._bound: dict[str, tuple[list[tuple[str, dict[str, Value]]], list[str]]] = {}
        self._bound_before: dict[str, tuple[list[tuple[str, dict[str, Value]]], list[str]]] = {}
        # many files ask about the same names, each round: each answered (and weighed) once
        self._answers: dict[str, Any] = {}
        self._fingerprints: dict[str, str] = {}
        # the questions whose answers (and fingerprints) it took over from `previous`,
        # unchanged (None: names may not resolve as in `previous`, so it took over
        # nothing); project/staleness.py and analysis._callees read it
        self.carried_fingerprints: frozenset[str] | None = None
        owners = resolves_alike(self, previous) if previous is not None and speedups.enabled("carry") else None
        if owners is not None:
            # each round's new index was asked every answer every file depends on again
            # (the stale check): Megatron-LM's files ask 24,000 a round
            self._owners, self._modules_of = owners, previous._modules_of
            self._answers, self._fingerprints = carried_answers(self, previous)
            self._bound_before = carried_bindings(self, previous)
            self.carried_fingerprints = frozenset(self._fingerprints)

    def facts_for(self, path: str) -> ProjectFacts:
        """The evidence that can concern one file: what a module shows about running
        the model reaches only the code run alongside it (see ImportGraph)."""
        reaching = {where for where in self._evidence_paths if self.imports.run_together(where, path)}
        return ProjectFacts([e for e in self.facts.evidence if _path_of(e) in reaching])

    @property
    def imports(self) -> ImportGraph:
        if self._imports is None:
            self._imports = ImportGraph(self._everything, self.modules, self.module_named, self.module_of)
        return self._imports

    # -- arguments -----------------------------------------------------------------------
    def param_values(self, canonical: str) -> dict[str, Value]:
        """What the project's calls pass to a module-level function: the join over
        every call site; every parameter unknown once one call passes nothing known
        (or `*args`). Methods are called through receivers we cannot always name, so
        they get nothing from other modules; static methods are called by name."""
        if self._params is None:
            self._bind_all_calls()
        assert self._params is not None
        located = self.locate(canonical)
        if located is None or located[0] != "function":
            return {}
        if self._is_method(canonical) and located[2]["self"]:
            return {}  # a static method is called by its class's name: its sites are seen
        if canonical in self._opaque:
            return {name: UNKNOWN for name in located[2]["params"]}
        sites = self._params.get(canonical)
        return join_bindings(sites) if sites else {}

    def _is_method(self, canonical: str) -> bool:
        module = self.module_of(canonical)
        return module is not None and "." in canonical[len(module) + 1 :]

    def _bind_all_calls(self) -> None:
        self._params = {}
        for name, data in self.modules.items():
            bound, opaque = self._bound[name] = self._bound_before.get(name) or self._bind_sites(data)
            self._opaque.update(opaque)
            for callee, bindings in bound:
                self._params.setdefault(callee, []).append(bindings)
        self._bound_before = {}

    def _bind_sites(self, data: dict[str, Any]) -> tuple[list[tuple[str, dict[str, Value]]], list[str]]:
        """One module's call sites bound to their callees' parameters, in order, and
        the callees it calls opaquely."""
        opaque = [located[1] for callee in data.get("opaque_calls", ()) if (located := self.locate(callee)) is not None]
        bound = []
        for callee, sites in data.get("calls", {}).items():
            located = self.locate(callee)
            if located is None or located[0] != "function":
                continue
            summary = summary_from_data(located[1], located[2])
            for positional, keywords in sites:
                bindings = bind_arguments_from(
                    summary, [value_from_data(v) for v in positional], {k: value_from_data(v) for k, v in keywords.items()}
                )
                bound.append((located[1], bindings))
        return bound, opaque

    # -- answers for one module ------------------------------------------------------------
    def answer(self, key: str) -> Any:
        """The answer to a question a module's model asks ("f:name", "c:name", "p:name")."""
        if key not in self._answers:
            self._answers[key] = self._answer(key)
        return self._answers[key]

    def _answer(self, key: str) -> Any:
        kind, _, name = key.partition(":")
        if kind == "p":
            values = self.param_values(name)
            return {param: value_to_data(value) for param, value in values.items()}
        return self.name_answer(kind, name)

    def slice_for(self, keys: Iterable[str]) -> dict[str, Any]:
        """The answers a module asked for last time: what a worker needs to check it."""
        if self._evidence_data is None:  # the same for every slice: each file checked again takes it
            self._evidence_data = [list(e.__dict__.values()) for e in self.facts.evidence]
        return {"answers": {key: self.answer(key) for key in keys}, "evidence": self._evidence_data}

    def fingerprint(self, key: str) -> str:
        if key not in self._fingerprints:
            self._fingerprints[key] = fingerprint(key, self.answer(key))
        return self._fingerprints[key]


def _path_of(evidence: Evidence) -> str:
    return evidence.where.rpartition(":")[0]


def fingerprint(key: str, answer: Any) -> str:
    """What an answer is worth to the rules: NOTHING when it tells nothing."""
    if answer is None:
        return NOTHING
    kind = key.partition(":")[0]
    if kind == "f":
        returns = value_from_data(answer[1]["returns"])
        if not returns.informative:
            return NOTHING
        answer = answer[1]["returns"]
    elif kind == "p":
        if not any(value_from_data(v).informative for v in answer.values()):
            return NOTHING
    elif kind == "c":
        if not any(value_from_data(r).informative for r in answer[1]["methods"].values()):
            return NOTHING
    text = json.dumps(answer, sort_keys=True)
    return hashlib.sha256(text.encode()).hexdigest()[:16]


class ModuleContext:
    """The index as one module's model asks it (model.summaries.ExternalSummaries)."""

    def __init__(self, project_slice: dict[str, Any] | None = None) -> None:
        project_slice = project_slice or {}
        self.answers: dict[str, Any] = project_slice.get("answers", {})
        self._facts = ProjectFacts([Evidence(*item) for item in project_slice.get("evidence", ())])
        # the first round's summaries so far, which answer what the slice does not
        # hold (project/learned.py); added by the worker, never pickled
        self._learned = project_slice.get("learned")
        self.asked: dict[str, str] = {}  # key -> fingerprint of the answer used
        # a model asks for the same function many times (torchmetrics: 6,300 times for
        # 2,850 names): each answer is turned into a summary once
        self._functions: dict[str, FunctionSummary | None] = {}

    def _ask(self, key: str) -> Any:
        if key in self.answers:
            answer = self.answers[key]
        else:
            answer = self._learned.answer(key) if self._learned is not None else None
        if key not in self.asked:  # a model asks the same name many times
            self.asked[key] = fingerprint(key, answer)
        return answer

    def function(self, qualified: str) -> FunctionSummary | None:
        if qualified not in self._functions:
            answer = self._ask(f"f:{qualified}")
            self._functions[qualified] = summary_from_data(answer[0], answer[1]) if answer else None
        return self._functions[qualified]

    def class_bases(self, qualified: str) -> tuple[str, ...] | None:
        answer = self._ask(f"c:{qualified}")
        return tuple(answer[1]["bases"]) if answer else None

    def param_values(self, qualified: str) -> dict[str, Value]:
        answer = self._ask(f"p:{qualified}") or {}
        return {name: value_from_data(value) for name, value in answer.items()}

    def facts(self) -> ProjectFacts:
        return self._facts
