"""The semantic model of one module: imports, and every scope interpreted once."""
from __future__ import annotations

from dataclasses import dataclass, field

import libcst as cst

from .accumulators import Accumulator, AccumulatorLog
from .expressions import Env
from .imports import ImportMap, collect_imports
from .interpreter import ScopeInterpreter, join
from .values import UNKNOWN, CallFact, Creation, Kind, Value


@dataclass
class SemanticModel:
    module: cst.Module
    imports: ImportMap
    accumulators: list[Accumulator]
    # abstract value of each evaluated expression, by id(node)
    values: dict[int, Value] = field(default_factory=dict)
    # every call interpreted, in source order
    calls: list[CallFact] = field(default_factory=list)

    def value_of(self, node: cst.CSTNode) -> Value:
        return self.values.get(id(node), UNKNOWN)

    def creation_callees(self, value: Value) -> set[str]:
        """What the calls that created `value` call: `torch.ones`, `new_ones`, ..."""
        by_node = {id(fact.node): fact for fact in self.calls}
        names = set()
        for creation in value.origins:
            fact = by_node.get(id(creation.node))
            if fact is not None:
                names.add(fact.qualified or fact.method or "")
        return names


class _ModelBuilder:
    def __init__(self, module: cst.Module) -> None:
        self.module = module
        self.imports = collect_imports(module)
        self.log = AccumulatorLog()
        self.creations: dict[int, Creation] = {}
        self.values: dict[int, Value] = {}
        self.calls: dict[int, CallFact] = {}
        self.module_env: Env = {}

    def interpreter(self, scope: str, self_name: str | None = None, global_env: Env | None = None) -> ScopeInterpreter:
        return ScopeInterpreter(
            self.imports, self.log, self.creations, self.values, scope, self_name, global_env, self.calls
        )

    def build(self) -> SemanticModel:
        top_level = [s for s in self.module.body if not isinstance(s, (cst.FunctionDef, cst.ClassDef))]
        self.module_env = self.interpreter("<module>").run(top_level, {})
        self._definitions(self.module.body, prefix="")
        return SemanticModel(self.module, self.imports, self.log.accumulators(), self.values, list(self.calls.values()))

    def _definitions(self, statements, prefix: str) -> None:
        """Interpret every function and class defined in `statements`, at any depth."""
        for statement in _walk_definitions(statements):
            if isinstance(statement, cst.FunctionDef):
                name = f"{prefix}{statement.name.value}"
                self._function(statement, name, None, {})
                self._definitions(_body(statement), prefix=f"{name}.<locals>.")
            elif isinstance(statement, cst.ClassDef):
                self._class(statement, f"{prefix}{statement.name.value}")

    def _function(self, function: cst.FunctionDef, scope: str, self_name: str | None, env: Env) -> Env:
        env = dict(env)
        for param in _parameters(function):
            env[param.name.value] = UNKNOWN
        if self_name is not None:
            env[self_name] = Value(Kind.SELF)
        interpreter = self.interpreter(scope, self_name, self.module_env)
        if self_name is not None:
            interpreter.on_bind = self._attribute_collector  # type: ignore[method-assign]
        return interpreter.run(function.body, env)

    def _class(self, cls: cst.ClassDef, scope: str) -> None:
        """`self.x` state is shared by the methods of a class: a first pass (not
        recorded) learns what each attribute is bound to anywhere, a second pass
        interprets each method starting from that state."""
        methods = [s for s in _body(cls) if isinstance(s, cst.FunctionDef)]
        self._attribute_state: Env = {}
        self.log.recording = False
        for method in methods:
            self_name = _self_name(method)
            if self_name is not None:
                self._function(method, f"{scope}.{method.name.value}", self_name, {})
        self.log.recording = True
        state = self._attribute_state
        for method in methods:
            name = f"{scope}.{method.name.value}"
            self._function(method, name, _self_name(method), state)
            self._definitions(_body(method), prefix=f"{name}.<locals>.")
        nested = [s for s in _body(cls) if isinstance(s, cst.ClassDef)]
        for inner in nested:
            self._class(inner, f"{scope}.{inner.name.value}")

    def _attribute_collector(self, key: str, value: Value, accumulated: bool) -> Value:
        # An accumulation keeps the attribute's creations; only rebinding widens it.
        if key.startswith("self.") and not accumulated:
            previous = self._attribute_state.get(key)
            self._attribute_state[key] = value if previous is None else join(previous, value)
        return value


def _walk_definitions(statements):
    """Function and class definitions directly in `statements` or nested in their
    compound statements (an `if` at module level, a `try` around a def)."""
    for statement in statements:
        if isinstance(statement, (cst.FunctionDef, cst.ClassDef)):
            yield statement
        elif isinstance(statement, (cst.If, cst.For, cst.While, cst.With, cst.Try)):
            for block in _blocks(statement):
                yield from _walk_definitions(block)


def _blocks(statement):
    body = getattr(statement, "body", None)
    if isinstance(body, cst.IndentedBlock):
        yield body.body
    orelse = getattr(statement, "orelse", None)
    if isinstance(orelse, cst.If):
        yield [orelse]
    elif orelse is not None and isinstance(orelse.body, cst.IndentedBlock):
        yield orelse.body.body
    for handler in getattr(statement, "handlers", ()):
        if isinstance(handler.body, cst.IndentedBlock):
            yield handler.body.body
    final = getattr(statement, "finalbody", None)
    if final is not None and isinstance(final.body, cst.IndentedBlock):
        yield final.body.body


def _body(definition: cst.FunctionDef | cst.ClassDef) -> list:
    body = definition.body
    return list(body.body) if isinstance(body, cst.IndentedBlock) else []


def _parameters(function: cst.FunctionDef) -> list[cst.Param]:
    params = function.params
    result = list(params.posonly_params) + list(params.params) + list(params.kwonly_params)
    for star in (params.star_arg, params.star_kwarg):
        if isinstance(star, cst.Param):
            result.append(star)
    return result


def _self_name(method: cst.FunctionDef) -> str | None:
    for decorator in method.decorators:
        if isinstance(decorator.decorator, cst.Name) and decorator.decorator.value in ("staticmethod", "classmethod"):
            return None
    params = list(method.params.posonly_params) + list(method.params.params)
    return params[0].name.value if params else None


def build_model(module: cst.Module) -> SemanticModel:
    return _ModelBuilder(module).build()
