"""The semantic model of one module: imports, definitions, and every scope
interpreted, with calls into the module's own functions (and, through the project
index, into other modules') resolved to what those functions return."""
from __future__ import annotations

from dataclasses import dataclass, field
from functools import partial
from typing import Callable

import libcst as cst

from .accumulators import Accumulator, AccumulatorLog
from .autocast import AutocastUse
from .definitions import (
    ClassInfo,
    Definitions,
    FunctionInfo,
    block_of,
    collect_definitions,
    function_info,
    top_level_definitions,
)
from .expressions import Env
from .imports import ImportMap, collect_imports
from .interpreter import ScopeInterpreter, join
from .summaries import (
    ExternalSummaries,
    FunctionSummary,
    NoProject,
    ProjectFacts,
    bind_arguments,
    join_bindings,
    literal_default,
)
from .accumulators import Fate
from .lifecycle import construction_methods, restored_attributes
from .replay import Run, attributes_read, state_read_unchanged
from .runtime_dtype import names_mask, names_positions
from .values import UNKNOWN, CallFact, Creation, Kind, Value
from .. import speedups

# Functions whose call sites pass something the rules can use (a count, an
# accumulator, a dtype) are interpreted again with it, after the module's pass; a
# second round of that rarely pays.
MAX_PARAMETER_ROUNDS = 1


@dataclass
class SemanticModel:
    module: cst.Module
    imports: ImportMap
    accumulators: list[Accumulator]
    # abstract value of each evaluated expression, by id(node)
    values: dict[int, Value] = field(default_factory=dict)
    # every call interpreted, in source order
    calls: list[CallFact] = field(default_factory=list)
    module_name: str = ""
    definitions: Definitions = field(default_factory=Definitions)
    # what each function and method of the module returns, by qualified name
    summaries: dict[str, FunctionSummary] = field(default_factory=dict)
    # calls to functions that may be other modules': callee as written -> the
    # (positional, keyword) arguments of each call that passed something informative
    external_calls: dict[str, list[tuple[list[Value], dict[str, Value]]]] = field(default_factory=dict)
    # callees called (at least once) with nothing informative, or with `*args`
    opaque_calls: set[str] = field(default_factory=set)
    # what the project shows about the dtype its model runs in
    facts: ProjectFacts = field(default_factory=ProjectFacts)
    # matmul-like ops that take floating positions (autocast casts them)
    autocast_uses: list[AutocastUse] = field(default_factory=list)
    # every tensor creation seen, by id() of the node that makes it
    creations: dict[int, Creation] = field(default_factory=dict)

    def value_of(self, node: cst.CSTNode) -> Value:
        return self.values.get(id(node), UNKNOWN)

    def creation_at(self, node: cst.CSTNode) -> Creation | None:
        return self.creations.get(id(node))

    def tally_fate(self, tallies) -> tuple[Fate, cst.CSTNode | None]:
        """Where the counts of float tallies (a histogram, a buffer counted into with
        ones) go, followed through what keeps them (`h1 + h2`, `h.tolist()`): the worst
        fate, with the node of the use that decides it (None: made at module level, a
        global)."""
        children: dict[int, list[Creation]] = {}
        uses: dict[int, list] = {}
        for accumulator in self.accumulators:
            uses[id(accumulator.creation)] = accumulator.uses
            for parent in accumulator.creation.parents:
                children.setdefault(id(parent), []).append(accumulator.creation)
        worst, where = Fate.LOCAL, None
        pending, seen = list(tallies), set()
        while pending:
            creation = pending.pop()
            if id(creation) in seen:
                continue
            seen.add(id(creation))
            if creation.scope == "<module>" and not creation.parents:
                return Fate.KEPT, None
            for use in uses.get(id(creation), ()):
                fate = use.counts_go
                if fate.value > worst.value:
                    worst, where = fate, use.node
            pending.extend(children.get(id(creation), ()))
        return worst, where

    def creation_callees(self, value: Value) -> set[str]:
        """What the calls that created `value` call: `torch.ones`, `new_ones`, ..."""
        by_node = {id(fact.node): fact for fact in self.calls}
        names = set()
        for creation in value.origins:
            fact = by_node.get(id(creation.node))
            if fact is not None:
                names.add(fact.qualified or fact.method or "")
        return names


class _Interpretation:
    """The state of interpreting the module: its facts, values, summaries and call
    sites, and the parameter values its functions were given."""

    def __init__(self, params: dict[str, dict[str, Value]]) -> None:
        self.params = params
        self.log = AccumulatorLog()
        self.values: dict[int, Value] = {}
        self.calls: dict[int, CallFact] = {}
        self.summaries: dict[str, FunctionSummary] = {}
        self.sites: dict[str, list[dict[str, Value]]] = {}
        self.external_calls: dict[str, list[tuple[list[Value], dict[str, Value]]]] = {}
        self.opaque_calls: set[str] = set()
        self.autocast_uses: list[AutocastUse] = []
        self.done: set[str] = set()  # functions and classes interpreted with facts recorded
        self.in_progress: set[str] = set()
        self.class_states: dict[str, Env] = {}
        self.module_env: Env = {}


class _ModelBuilder:
    """Builds the model; answers the interpreter's questions about callees."""

    def __init__(
        self,
        module: cst.Module,
        module_name: str,
        project: ExternalSummaries,
        package: str | None = None,
        attributes_named: Callable[[cst.FunctionDef], frozenset[tuple[str, str]] | None] | None = None,
    ) -> None:
        self.module = module
        self.attributes_named = attributes_named
        self.module_name = module_name
        self.project = project
        self.imports = collect_imports(module, package if package is not None else module_name.rpartition(".")[0])
        self.definitions = collect_definitions(module, module_name, self.imports)
        self.creations: dict[int, Creation] = {}
        self.current: _Interpretation = _Interpretation({})
        self._construction: frozenset[str] | None = None  # methods run only while building
        self._restored: dict[str, frozenset[str]] = {}  # class -> `self.x` it makes float32 again
        self.loop_reads: dict[int, frozenset[str]] = {}  # what each loop reads (reads.py)
        self.loop_exposed: dict[int, frozenset[str]] = {}  # what a pass reads before it binds it
        self._runs: list[Run] = []  # the interpretations under way, innermost last
        self._attributes: dict[str, frozenset[str]] = {}  # method -> the `self.x` it names

    # -- the module, then the functions its call sites give more to -----------------
    def build(self) -> SemanticModel:
        external = {q: self.project.param_values(q) for q in self.definitions.functions}
        params = {q: values for q, values in external.items() if values}
        self.current = _Interpretation(params)
        self._run_module()
        for _ in range(MAX_PARAMETER_ROUNDS):
            given = self._given_by_call_sites(external)
            if not given:
                break
            self._interpret_again(given)
        run = self.current
        return SemanticModel(
            self.module,
            self.imports,
            run.log.accumulators(),
            run.values,
            list(run.calls.values()),
            self.module_name,
            self.definitions,
            run.summaries,
            run.external_calls,
            run.opaque_calls,
            self.project.facts(),
            run.autocast_uses,
            self.creations,
        )

    def _run_module(self) -> None:
        run = self.current
        top_level = [s for s in self.module.body if type(s) not in (cst.FunctionDef, cst.ClassDef)]
        run.module_env = self._interpreter("<module>").run(top_level, {})
        for statement in top_level_definitions(self.module.body):
            qualified = f"{self.module_name}.{statement.name.value}"
            if type(statement) is cst.FunctionDef:
                self._ensure_function(self.definitions.functions[qualified])
            else:
                self._ensure_class(self.definitions.classes[qualified])

    def _given_by_call_sites(self, external: dict[str, dict[str, Value]]) -> dict[str, dict[str, Value]]:
        """What the module's own call sites (with the project's, where there are any)
        pass to its functions, for those where it says something the rules can use
        that the function was not interpreted with."""
        run = self.current
        given = {}
        for qualified, sites in run.sites.items():
            info = self.definitions.functions.get(qualified)
            if info is None or not _takes_call_site_values(info):
                continue
            bindings = join_bindings(sites + ([external[qualified]] if external.get(qualified) else []))
            before = run.params.get(qualified, {})
            if any(v.passes_facts and before.get(name) != v for name, v in bindings.items()):
                given[qualified] = bindings
        return given

    def _interpret_again(self, given: dict[str, dict[str, Value]]) -> None:
        """Each function in `given` once more with those parameters, its own facts
        replaced (the rest of the module's stand)."""
        run = self.current
        run.params.update(given)
        recording, run.log.recording = run.log.recording, True
        try:
            for qualified in given:
                info = self.definitions.functions[qualified]
                run.log.forget(info.qualified[len(self.module_name) + 1 :])
                state = run.class_states.get(info.owner, {}) if info.owner is not None else {}
                self._interpret(info, dict(state), info.params[0] if info.receives_self else None)
        finally:
            run.log.recording = recording

    # -- interpreting definitions ----------------------------------------------------
    def _interpreter(self, scope: str, self_name: str | None = None, owner: str | None = None) -> ScopeInterpreter:
        run = self.current
        interpreter = ScopeInterpreter(
            self.imports, run.log, self.creations, run.values, scope, self_name,
            run.module_env, run.calls,
        )  # fmt: skip
        interpreter.callees = self
        interpreter.owner = owner
        interpreter.in_module = owner is not None and self._is_torch_module(owner)
        interpreter.autocast_uses = run.autocast_uses
        interpreter.used_under_autocast = self._used_under_autocast  # type: ignore[method-assign]
        interpreter.loop_reads = self.loop_reads
        interpreter.loop_exposed = self.loop_exposed
        return interpreter

    def _ensure_function(self, info: FunctionInfo) -> None:
        """Interpret a top-level function once, facts recorded."""
        run = self.current
        if info.qualified in run.done or info.qualified in run.in_progress:
            return
        recording, run.log.recording = run.log.recording, True
        try:
            self._interpret(info, {}, None)
            run.done.add(info.qualified)
        finally:
            run.log.recording = recording

    def _interpret(self, info: FunctionInfo, state: Env, self_name: str | None) -> Env:
        return self._interpret_run(info, state, self_name, self._new_run(state))[0]

    def _new_run(self, state: Env) -> Run:
        log = self.current.log
        return Run(state, log.changes, effects=None if log.recording else [])

    def _interpret_run(self, info: FunctionInfo, state: Env, self_name: str | None, record: Run) -> tuple[Env, Run]:
        run = self.current
        run.in_progress.add(info.qualified)
        self._runs.append(record)
        missed, run.log.missed = run.log.missed, record.effects
        try:
            env = dict(state)
            given = run.params.get(info.qualified, {})
            for name in info.params:
                # with no call site seen, a literal default tells the kind (`decay=0.5`)
                default = info.defaults.get(name)
                assumed = literal_default(default) if default is not None else _by_name(name)
                env[name] = given.get(name, assumed)
            for star in (info.node.params.star_arg, info.node.params.star_kwarg):
                if type(star) is cst.Param:
                    env[star.name.value] = UNKNOWN
            if self_name is not None:
                env[self_name] = Value(Kind.SELF)
            scope = info.qualified[len(self.module_name) + 1 :]
            interpreter = self._interpreter(scope, self_name, info.owner)
            if info.owner is not None and self_name is not None:
                owner, qualified = info.owner, info.qualified
                interpreter.at_construction = lambda: qualified in self._construction_methods()  # type: ignore[method-assign]
                interpreter.restored = lambda: self._restored_in(owner)  # type: ignore[method-assign]
            outer_scope, run.log.scope = run.log.scope, scope
            if self_name is not None:
                interpreter.on_bind = self._attribute_collector(info.owner)  # type: ignore[method-assign]
            try:
                result = interpreter.run(info.node.body, env)
            finally:
                run.log.scope = outer_scope
            returns = UNKNOWN if interpreter.yields or info.node.asynchronous is not None else (
                interpreter.returned if interpreter.returned is not None else Value(Kind.NONE)
            )  # fmt: skip
            run.summaries[info.qualified] = _summary(info, returns)
            if run.log.recording:
                self._nested(info)
            return result, record
        finally:
            run.log.missed = missed
            self._runs.pop()
            run.in_progress.discard(info.qualified)

    def _construction_methods(self) -> frozenset[str]:
        if self._construction is None:
            self._construction = construction_methods(self.module, self.module_name, self.definitions)
        return self._construction

    def _restored_in(self, owner: str) -> frozenset[str]:
        if owner not in self._restored:
            info = self.definitions.classes.get(owner)
            self._restored[owner] = restored_attributes(info, self.imports) if info is not None else frozenset()
        return self._restored[owner]

    def _nested(self, info: FunctionInfo) -> None:
        """Functions and classes defined inside a function: interpreted on their own."""
        prefix = f"{info.qualified[len(self.module_name) + 1 :]}.<locals>."
        for statement in top_level_definitions(block_of(info.node)):
            self._local_definition(statement, prefix)

    def _local_definition(self, statement, prefix: str) -> None:
        name = f"{prefix}{statement.name.value}"
        if type(statement) is cst.FunctionDef:
            self._interpret(function_info(statement, f"{self.module_name}.{name}", None), {}, None)
        else:
            qualified = f"{self.module_name}.{name}"
            info = ClassInfo(qualified, statement, ())
            for inner in top_level_definitions(block_of(statement)):
                if type(inner) is cst.FunctionDef:
                    info.methods[inner.name.value] = function_info(inner, f"{qualified}.{inner.name.value}", qualified)
            self._analyze_class(info)

    def _ensure_class(self, info: ClassInfo) -> None:
        run = self.current
        if info.qualified in run.done or info.qualified in run.in_progress:
            return
        recording = run.log.recording
        try:
            self._analyze_class(info)
            run.done.add(info.qualified)
        finally:
            run.log.recording = recording

    def _analyze_class(self, info: ClassInfo) -> None:
        """`self.x` state is shared by the methods of a class: a first pass (not
        recorded) learns what each attribute is bound to anywhere, a second pass
        interprets each method starting from that state."""
        run = self.current
        run.in_progress.add(info.qualified)
        try:
            state = run.class_states.setdefault(info.qualified, {})
            methods = list(info.methods.values())
            run.log.recording = False
            first = [self._method(method, state) for method in methods]
            run.log.recording = True
            for method, record in zip(methods, first):
                if self._would_repeat(method, record, state):
                    self._replay(method, record)
                else:
                    self._method(method, state)
                run.done.add(method.qualified)
        finally:
            run.in_progress.discard(info.qualified)
        for inner in top_level_definitions(block_of(info.node)):
            if type(inner) is cst.ClassDef:
                inner_info = self.definitions.classes.get(f"{info.qualified}.{inner.name.value}")
                if inner_info is not None:
                    self._ensure_class(inner_info)
                else:
                    self._local_definition(inner, f"{info.qualified[len(self.module_name) + 1 :]}.")

    def _method(self, method: FunctionInfo, state: Env) -> Run:
        self_name = method.params[0] if method.receives_self else None
        started = dict(state)
        return self._interpret_run(method, started, self_name, self._new_run(started))[1]

    def _would_repeat(self, method: FunctionInfo, record: Run, state: Env) -> bool:
        """Whether running `method` again would do just what its first run did (replay.py)."""
        if not speedups.enabled("replay") or record.effects is None or record.changes != self.current.log.changes:
            return False
        if not state_read_unchanged(record, state, lambda: self._attributes_of(method)):
            return False
        return all(self._same_answer(callee, answer) for callee, answer in record.asked)

    def _attributes_of(self, method: FunctionInfo) -> frozenset[str]:
        if method.qualified not in self._attributes:
            named = self.attributes_named(method.node) if self.attributes_named is not None else None
            self._attributes[method.qualified] = attributes_read(method, named)
        return self._attributes[method.qualified]

    def _same_answer(self, qualified: str, answer: FunctionSummary | None) -> bool:
        """Whether `function(qualified)` would answer `answer` now, doing nothing else."""
        run = self.current
        if qualified not in self.definitions.functions:
            return True  # the project's: its answers do not change while a module is built
        if qualified in run.summaries:
            return run.summaries[qualified] == answer
        return qualified in run.in_progress and answer is None

    def _replay(self, method: FunctionInfo, record: Run) -> None:
        """Do what a recorded run of `method` would: its first run's effects, then its
        nested definitions (which a recorded run interprets at its end)."""
        run = self.current
        run.in_progress.add(method.qualified)
        self._runs.append(Run({}, 0))  # what the replay does is no run's own
        try:
            record.replay()
            self._nested(method)
        finally:
            self._runs.pop()
            run.in_progress.discard(method.qualified)

    def _attribute_collector(self, owner: str | None):
        return partial(self._collect, self.current.class_states.setdefault(owner or "", {}))

    def _collect(self, state: Env, key: str, value: Value, accumulated: bool) -> Value:
        # An accumulation keeps the attribute's creations; only rebinding widens it.
        if key.startswith("self.") and not accumulated:
            previous = state.get(key)
            state[key] = value if previous is None else join(previous, value)
            self._runs[-1].note(self._collect, state, key, value, accumulated)
        return value

    def _is_torch_module(self, cls: str) -> bool:
        """Whether `cls` derives from a torch.nn class (through project bases too)."""
        pending, seen = [cls], set()
        while pending and len(seen) < 8:
            current = pending.pop()
            if current in seen:
                continue
            seen.add(current)
            for base in self.class_bases(current) or ():
                if base.startswith("torch.nn."):
                    return True
                pending.append(base)
        return False

    # -- what the interpreter asks (project_calls.Callees) ----------------------------
    def function(self, qualified: str) -> FunctionSummary | None:
        answer = self._function(qualified)
        if self._runs and self._runs[-1].effects is not None and qualified in self.definitions.functions:
            self._runs[-1].asked.append((qualified, answer))  # only a run not recorded may be replayed
        return answer

    def _function(self, qualified: str) -> FunctionSummary | None:
        run = self.current
        info = self.definitions.functions.get(qualified)
        if info is None:
            return self.project.function(qualified)
        if qualified not in run.summaries and qualified not in run.in_progress:
            if info.owner is None:
                self._ensure_function(info)
            elif info.owner not in run.in_progress:
                owner = self.definitions.classes.get(info.owner)
                if owner is not None:
                    self._ensure_class(owner)
            else:  # a method of the class being analyzed: with the state so far
                self._method(info, run.class_states.get(info.owner, {}))
        return run.summaries.get(qualified)

    def class_bases(self, qualified: str) -> tuple[str, ...] | None:
        info = self.definitions.classes.get(qualified)
        if info is not None:
            return info.bases
        return self.project.class_bases(qualified)

    def record_site(self, qualified: str, bindings: dict[str, Value]) -> None:
        self.current.sites.setdefault(qualified, []).append(bindings)
        if self._runs:
            self._runs[-1].note(self.record_site, qualified, bindings)

    def record_call(self, qualified: str, node: cst.Call, values) -> None:
        if qualified in self.definitions.functions or qualified.startswith(f"{self.module_name}."):
            return  # this module's own: bound by record_site
        if self._runs:
            self._runs[-1].note(self.record_call, qualified, node, values)
        run = self.current
        # a mask guessed from a parameter's name tells another module nothing it could
        # not guess itself; passed on, it would only check that module again
        values = [UNKNOWN if v.mask and v == _MASK_BY_NAME else v for v in values]
        if any(arg.star for arg in node.args) or not any(v.passes_facts for v in values):
            run.opaque_calls.add(qualified)
            return
        positional = [v.without_origins() for a, v in zip(node.args, values) if a.keyword is None]
        keywords = {a.keyword.value: v.without_origins() for a, v in zip(node.args, values) if a.keyword is not None}
        run.external_calls.setdefault(qualified, []).append((positional, keywords))

    def _used_under_autocast(self, use: AutocastUse) -> None:
        self.current.autocast_uses.append(use)
        if self._runs:
            self._runs[-1].note(self._used_under_autocast, use)

    def follows(self, qualified: str) -> bool:
        return qualified in self.current.params


_MASK_BY_NAME = Value(Kind.UNKNOWN, mask=True)


def _by_name(param: str) -> Value:
    """What a parameter nothing is known of holds, as far as its name says."""
    if names_positions(param):
        return Value(positions=True)
    return _MASK_BY_NAME if names_mask(param) else UNKNOWN


def _summary(info: FunctionInfo, returns: Value) -> FunctionSummary:
    defaults = tuple((name, literal_default(node)) for name, node in info.defaults.items())
    return FunctionSummary(info.qualified, info.params, info.positional, info.receives_self, returns, defaults)


def _takes_call_site_values(info: FunctionInfo) -> bool:
    """Functions, static methods (called by their class's name) and private
    methods: a public method is also called through receivers we cannot name (other
    modules, users), so what this module passes it is not all it gets."""
    if info.owner is None or not info.receives_self:
        return True
    return info.name.startswith("_") and not info.name.startswith("__")


def build_model(
    module: cst.Module,
    module_name: str = "__main__",
    project: ExternalSummaries | None = None,
    package: str | None = None,
    attributes_named: Callable[[cst.FunctionDef], frozenset[tuple[str, str]] | None] | None = None,
) -> SemanticModel:
    """`module_name` qualifies the module's own definitions; `package` is what a
    relative import starts from (the module's parent, or itself for `__init__.py`);
    `attributes_named` tells the `name.attribute` pairs of a def where the tree knows
    them (quick_tree.py), which saves walking it."""
    return _ModelBuilder(module, module_name, project or NoProject(), package, attributes_named).build()


__all__ = ["SemanticModel", "build_model", "bind_arguments"]
