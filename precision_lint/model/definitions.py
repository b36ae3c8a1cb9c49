"""The functions and classes a module defines, by qualified name, with what a call
needs to bind its arguments: a cheap pass over the module's statements that never
enters expressions."""
from __future__ import annotations

from dataclasses import dataclass, field

import libcst as cst

from .imports import ImportMap, dotted_name


@dataclass
class FunctionInfo:
    qualified: str  # "pkg.mod.helper", "pkg.mod.Metric.update"
    node: cst.FunctionDef
    owner: str | None  # the qualified class of a method
    receives_self: bool  # a method whose first parameter is the instance
    params: tuple[str, ...]  # every parameter name, positional ones first
    positional: int  # how many of them a call may pass by position
    defaults: dict[str, cst.BaseExpression] = field(default_factory=dict)

    @property
    def name(self) -> str:
        return self.node.name.value


@dataclass
class ClassInfo:
    qualified: str
    node: cst.ClassDef
    bases: tuple[str, ...]  # qualified names of the bases we can name
    methods: dict[str, FunctionInfo] = field(default_factory=dict)


@dataclass
class Definitions:
    functions: dict[str, FunctionInfo] = field(default_factory=dict)
    classes: dict[str, ClassInfo] = field(default_factory=dict)


def collect_definitions(module: cst.Module, module_name: str, imports: ImportMap) -> Definitions:
    """Top-level functions and classes (also those under a module-level `if`/`try`),
    their methods and nested classes. Their names are bound in `imports`, so a call
    to one resolves to its qualified name like an imported function does."""
    found = Definitions()
    for statement in top_level_definitions(module.body):
        name = statement.name.value
        imports.names[name] = f"{module_name}.{name}"
        _collect(statement, f"{module_name}.{name}", None, imports, found)
    return found


def _collect(statement, qualified: str, owner: str | None, imports: ImportMap, found: Definitions) -> None:
    if type(statement) is cst.FunctionDef:
        found.functions[qualified] = function_info(statement, qualified, owner)
        return
    bases = tuple(
        base for arg in statement.bases if arg.keyword is None
        if (base := imports.qualify_dotted(dotted_name(arg.value))) is not None
    )  # fmt: skip
    info = found.classes[qualified] = ClassInfo(qualified, statement, bases)
    for inner in top_level_definitions(block_of(statement)):
        inner_qualified = f"{qualified}.{inner.name.value}"
        _collect(inner, inner_qualified, qualified, imports, found)
        if type(inner) is cst.FunctionDef:
            info.methods[inner.name.value] = found.functions[inner_qualified]


def function_info(function: cst.FunctionDef, qualified: str, owner: str | None) -> FunctionInfo:
    params = function.params
    positional = list(params.posonly_params) + list(params.params)
    keyword_only = list(params.kwonly_params)
    defaults = {p.name.value: p.default for p in positional + keyword_only if p.default is not None}
    receives_self = owner is not None and bool(positional) and not _decorated(function, "staticmethod")
    return FunctionInfo(
        qualified,
        function,
        owner,
        receives_self,
        tuple(p.name.value for p in positional + keyword_only),
        len(positional),
        defaults,
    )


def _decorated(function: cst.FunctionDef, name: str) -> bool:
    return any(dotted_name(d.decorator) == name for d in function.decorators)


def is_classmethod(function: cst.FunctionDef) -> bool:
    return _decorated(function, "classmethod")


def top_level_definitions(statements):
    """Function and class definitions directly in `statements` or nested in their
    compound statements (an `if` at module level, a `try` around a def)."""
    for statement in statements:
        if type(statement) in (cst.FunctionDef, cst.ClassDef):
            yield statement
        elif type(statement) in (cst.If, cst.For, cst.While, cst.With, cst.Try):
            for block in _blocks(statement):
                yield from top_level_definitions(block)


def _blocks(statement):
    body = getattr(statement, "body", None)
    if type(body) is cst.IndentedBlock:
        yield body.body
    orelse = getattr(statement, "orelse", None)
    if type(orelse) is cst.If:
        yield [orelse]
    elif orelse is not None and type(orelse.body) is cst.IndentedBlock:
        yield orelse.body.body
    for handler in getattr(statement, "handlers", ()):
        if type(handler.body) is cst.IndentedBlock:
            yield handler.body.body
    final = getattr(statement, "finalbody", None)
    if final is not None and type(final.body) is cst.IndentedBlock:
        yield final.body.body


def block_of(definition: cst.FunctionDef | cst.ClassDef) -> list:
    body = definition.body
    return list(body.body) if type(body) is cst.IndentedBlock else []
