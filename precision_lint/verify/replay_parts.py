"""Where a replay comes from: the function the site lives in, the methods and
base classes its state on `self` comes from, the creation, the angles PH004 compares.
No torch here."""
from __future__ import annotations

from dataclasses import dataclass, field

import libcst as cst

from .code_helpers import NOT_LITERAL, is_product, literal_value, parameters_of, plain_operand, product_operands
from .names import REGISTRATIONS, defined_names
from .sites import ACCUMULATOR, NoReplay
from .source_view import all_nodes



@dataclass
class Part:
    """One function of the replay: a method or function of the source, and what of it is kept."""

    scope: cst.CSTNode  # a FunctionDef, or the module
    role: str  # "init" (once, first), "called" (from an init part), "call" (per call), "main" (once), "post" (once, last)
    self_name: str | None
    keep: set[int] = field(default_factory=set)
    core: set[int] = field(default_factory=set)  # what the site itself needs; the rest only reads it afterwards
    opaque: set[int] = field(default_factory=set)  # kept definitions whose value is synthesized
    dropped_calls: dict[int, list[cst.Call]] = field(default_factory=dict)


@dataclass
class Branch:
    """An `if` the replay keeps: each arm is a scenario when it touches the accumulator."""

    node: cst.If
    arms: list[cst.CSTNode]  # the If of each test, then the else block (or None)
    tests: list[str]
    varied: bool
    default: int
    runnable: bool


class Locator:
    """Finds the parts of a replay (methods of `ReplayBuilder`)."""

    def _scope_of(self, node: cst.CSTNode) -> cst.CSTNode:
        return self.source.enclosing(node, (cst.FunctionDef,)) or self.model.module

    def _class_of(self, scope: cst.CSTNode) -> cst.ClassDef | None:
        parent = self.source.parent(self.source.parent(scope)) if isinstance(scope, cst.FunctionDef) else None
        return parent if isinstance(parent, cst.ClassDef) else None

    def _self_name(self, scope: cst.CSTNode) -> str | None:
        if not isinstance(scope, cst.FunctionDef) or self._class_of(scope) is None:
            return None
        for decorator in scope.decorators:
            if isinstance(decorator.decorator, cst.Name) and decorator.decorator.value in ("staticmethod", "classmethod"):
                return None
        params = list(scope.params.posonly_params) + list(scope.params.params)
        return params[0].name.value if params else None

    def _locate(self) -> None:
        site = self.site
        anchor_scope = self._scope_of(site.anchor)
        if any(isinstance(a, cst.Yield) for a in all_nodes(anchor_scope)) and isinstance(anchor_scope, cst.FunctionDef):
            raise NoReplay("the function is a generator")
        for add in site.adds:
            self.add_statements[id(add.statement)] = len(self.add_statements)
        if site.kind == ACCUMULATOR:
            self._creation()
            creation_scope = self._scope_of(site.creation)
            add_scopes = []
            for add in site.adds:
                scope = self._scope_of(add.statement)
                if scope not in add_scopes:
                    add_scopes.append(scope)
            if add_scopes == [creation_scope]:
                self._parts_for_one_function(creation_scope)
                return
            cls = self._class_of(creation_scope)
            if cls is None or any(self._class_of(s) is not cls or self._self_name(s) is None for s in add_scopes):
                raise NoReplay("the accumulator is created in one function and added to in another, not methods of one class")
            if not self.target.startswith(f"{self._self_name(creation_scope)}."):
                raise NoReplay("the accumulator passed between methods is not an attribute of the instance")
            init = self._method(cls, "__init__")
            if init is not None and init is not creation_scope:
                self.parts.append(Part(init, "init", self._self_name(init)))
            self.parts.append(Part(creation_scope, "init", self._self_name(creation_scope)))
            for scope in add_scopes:
                self.parts.append(Part(scope, "call", self._self_name(scope)))
            attribute = self.target.split(".", 1)[1]
            for method in self._methods(cls):
                if any(method is p.scope for p in self.parts) or self._self_name(method) is None:
                    continue
                if any(isinstance(n, cst.Attribute) and n.attr.value == attribute for n in all_nodes(method)):
                    self.parts.append(Part(method, "post", self._self_name(method)))
        else:
            self.value_statement = self._statement_of(site.value)
            self._parts_for_one_function(anchor_scope)
            self._find_angle()
        self._inline_init_calls()

    def _inline_init_calls(self) -> None:
        """`self.rope_init()` in `__init__`: the method it calls runs in the replay
        too (what it sets on `self`, a registered buffer, is state the site reads)."""
        queue = [p for p in self.parts if p.role == "init" and p.self_name]
        anchor = self._class_of(self._scope_of(self.site.anchor))
        while queue:
            part = queue.pop(0)
            cls = anchor or self._class_of(part.scope)  # `self.m()` is looked up on the instance's class
            for small in self._smalls(part.scope):
                call = small.value if isinstance(small, cst.Expr) and isinstance(small.value, cst.Call) else None
                if call is None or not isinstance(call.func, cst.Attribute):
                    continue
                receiver = call.func.value
                if isinstance(receiver, cst.Call) and isinstance(receiver.func, cst.Name) and receiver.func.value == "super":
                    # `super().__init__(...)`: a base class of this module
                    owner = self.source.enclosing(part.scope, (cst.ClassDef,))
                    method = next((self._method(base, call.func.attr.value) for base in self._bases(owner)), None) if owner else None
                elif isinstance(receiver, cst.Name) and receiver.value == part.self_name:
                    method = self._method(cls, call.func.attr.value)
                else:
                    continue
                if method is None or self._self_name(method) is None or any(p.scope is method for p in self.parts):
                    continue
                called = Part(method, "called", self._self_name(method))
                self.parts.insert(self.parts.index(part) + 1, called)
                self.inlined[id(small)] = called
                queue.append(called)

    def _parts_for_one_function(self, scope: cst.CSTNode) -> None:
        cls = self._class_of(scope) if isinstance(scope, cst.FunctionDef) else None
        self_name = self._self_name(scope)
        if cls is not None and self_name is not None:
            init = self._method(cls, "__init__")
            if init is not None and init is not scope:
                self.parts.append(Part(init, "init", self._self_name(init)))
        self.parts.append(Part(scope, "main", self_name))

    def _method(self, cls: cst.ClassDef, name: str, depth: int = 0) -> cst.FunctionDef | None:
        """`name` on `cls` or, as Python looks it up, on its base classes in this module."""
        found = next((m for m in self._methods(cls) if m.name.value == name), None)
        if found is None and depth < 8:
            for base in self._bases(cls):
                found = self._method(base, name, depth + 1)
                if found is not None:
                    break
        return found

    def _bases(self, cls: cst.ClassDef) -> list[cst.ClassDef]:
        classes = {s.name.value: s for s in self.model.module.body if isinstance(s, cst.ClassDef)}
        return [classes[b.value.value] for b in cls.bases if isinstance(b.value, cst.Name) and b.value.value in classes and classes[b.value.value] is not cls]

    @staticmethod
    def _methods(cls: cst.ClassDef) -> list[cst.FunctionDef]:
        body = cls.body.body if isinstance(cls.body, cst.IndentedBlock) else []
        return [s for s in body if isinstance(s, cst.FunctionDef)]

    def _statement_of(self, node: cst.CSTNode) -> cst.CSTNode:
        statement = self.source.small_statement(node)
        if statement is None:
            raise NoReplay("the site is not inside a simple statement")
        return statement

    def _creation(self) -> None:
        """The statement that creates the accumulator, and how the replay names it."""
        node = self.site.creation
        current = node
        parent = self.source.parent(current)
        # `torch.zeros(1).cuda()`: the alias calls around the creation
        while isinstance(parent, cst.Attribute) and parent.value is current:
            call = self.source.parent(parent)
            if not (isinstance(call, cst.Call) and call.func is parent):
                break
            current, parent = call, self.source.parent(call)
        if isinstance(parent, cst.Arg):
            call = self.source.parent(parent)
            if isinstance(call, cst.Call) and isinstance(call.func, cst.Attribute) and call.func.attr.value in REGISTRATIONS:
                name = call.args[0].value if call.args else None
                if not isinstance(name, cst.SimpleString) or not isinstance(call.func.value, cst.Name):
                    raise NoReplay("the registered state's name is not a literal")
                self.target = f"{call.func.value.value}.{name.evaluated_value}"
                self.owner = call.func.value.value
                self.registration = call
                self.creation_statement = self._statement_of(call)
                return
        if isinstance(parent, cst.DictElement) and parent.value is current and isinstance(parent.key, cst.SimpleString):
            # `self._stats = {"dropped": torch.zeros(1)}`: the accumulator is the item
            container = self.source.parent(parent)
            assign = self.source.parent(container)
            if isinstance(container, cst.Dict) and isinstance(assign, (cst.Assign, cst.AnnAssign)) and assign.value is container:
                target = assign.targets[0].target if isinstance(assign, cst.Assign) and len(assign.targets) == 1 else getattr(assign, "target", None)
                if isinstance(target, (cst.Name, cst.Attribute)):
                    self.owner = self.source.raw(target)
                    self.target = f"{self.source.raw(target)}[{parent.key.value}]"
                    self.creation_statement = assign
                    return
        if isinstance(parent, (cst.Assign, cst.AnnAssign)) and parent.value is current:
            if isinstance(parent, cst.Assign) and len(parent.targets) != 1:
                raise NoReplay("the accumulator is created in a chained assignment")
            target = parent.targets[0].target if isinstance(parent, cst.Assign) else parent.target
            if isinstance(target, cst.Name):
                self.owner = "None"
            elif isinstance(target, cst.Attribute):
                self.owner = self.source.raw(target.value)
            elif isinstance(target, cst.Subscript):
                self.owner = self.source.raw(target.value)
            else:
                raise NoReplay("the accumulator is unpacked from a tuple")
            self.target = self.source.raw(target)
            self.creation_statement = parent
            return
        raise NoReplay("the accumulator is not created by an assignment")

    def _find_angle(self) -> None:
        """PH004: the first product of the positions with frequencies (`torch.outer(t,
        inv_freq)`, `t[:, None] * inv_freq`, einsum, matmul) in the same function."""
        if not self.site.angles:
            return
        statement = self.value_statement
        name = None
        if isinstance(statement, cst.Assign) and len(statement.targets) == 1 and isinstance(statement.targets[0].target, cst.Name):
            name = statement.targets[0].target.value
        candidates: list[tuple[cst.CSTNode, cst.CSTNode]] = []
        scope = self._scope_of(self.site.value)
        start = self.source.offsets(statement)[0]
        for node in all_nodes(scope):
            if not is_product(node, self.imports) or not all(plain_operand(o, self.site.value) for o in product_operands(node)):
                continue
            if self.source.offsets(node)[0] < start:
                continue
            uses_value = any(n is self.site.value for n in all_nodes(node))
            uses_name = name is not None and any(isinstance(n, cst.Name) and n.value == name for n in all_nodes(node))
            if uses_value or uses_name:
                holder = self.source.small_statement(node)
                if holder is not None and not self._inside_nested(holder, scope):
                    candidates.append((holder, node))
        if not candidates:
            return
        holder, expression = min(candidates, key=lambda c: self.source.offsets(c[1])[0])
        if holder is not statement and name is not None and self._rebound_between(scope, name, statement, holder):
            return
        self.angle = (holder, expression, name or "")

    def _rebound_between(self, scope, name, first, second) -> bool:
        low, high = self.source.offsets(first)[1], self.source.offsets(second)[0]
        for small in self._smalls(scope):
            start = self.source.offsets(small)[0]
            if low <= start < high and name in defined_names(small):
                return True
        return False

    # -- constants: what code compares with ----------------------------------------------

    def _constants(self) -> None:
        for statement in self.model.module.body:
            if isinstance(statement, cst.SimpleStatementLine):
                for small in statement.body:
                    if isinstance(small, cst.Assign) and len(small.targets) == 1 and isinstance(small.targets[0].target, cst.Name):
                        value = literal_value(small.value)
                        if value is not NOT_LITERAL:
                            name = small.targets[0].target.value
                            self.constants[name] = value
                            self.module_lines.append(f"{name} = {self.source.raw(small.value)}")
        for part in self.parts:
            scope = part.scope
            if not isinstance(scope, cst.FunctionDef):
                continue
            defaults = {p.name.value: literal_value(p.default) for p in parameters_of(scope) if p.default is not None}
            for name, value in defaults.items():
                if value is not NOT_LITERAL:
                    self.constants.setdefault(name, value)
            if part.self_name and scope.name.value == "__init__":
                for small in self._smalls(scope):
                    if isinstance(small, cst.Assign) and len(small.targets) == 1:
                        target = small.targets[0].target
                        if isinstance(target, cst.Attribute) and isinstance(target.value, cst.Name) and target.value.value == part.self_name:
                            value = literal_value(small.value)
                            if value is NOT_LITERAL and isinstance(small.value, cst.Name):
                                value = defaults.get(small.value.value, NOT_LITERAL)
                            if value is not NOT_LITERAL:
                                self.constants[f"self.{target.attr.value}"] = value

    # -- the device and the calls the replay maps itself ----------------------------------

    def _function_name(self) -> str:
        names = []
        for ancestor in self.source.ancestors(self.site.anchor):
            if isinstance(ancestor, (cst.FunctionDef, cst.ClassDef)):
                names.append(ancestor.name.value)
        return ".".join(reversed(names)) or "<module>"


# -- helpers ----------------------------------------------------------------------------
