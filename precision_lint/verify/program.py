"""Builds the replay of one site from the source: a faithful slice of the function
(or of the class's methods) it lives in, instrumented, as Python source for the
child process. No torch here.

Faithful means: statements stay in their order and inside their loops; an `if`
whose arms touch the accumulator is replayed once per arm (a *scenario*, named in
the report); the inputs are bound before anything reads them; a statement the
replay cannot run (a helper of the user's code, another library) is left out and
its result synthesized, and the report lists it. Around the site:

- the creation is followed by `__h.start(...)`, which starts the accumulator (and
  its exact shadow) near the dtype's limit;
- each add evaluates its count once, runs as written, and is mirrored on the
  shadow in exact integers (`__h.exact`);
- any other statement that changes the accumulator is mirrored on the shadow in
  float64, so a reset or a rebinding keeps the shadow right;
- a value site is wrapped as `__h.value(k, <as written>, <exact version>)`.
"""
from __future__ import annotations

import ast
from dataclasses import dataclass, field

import libcst as cst

from ..model.imports import dotted_name
from ..model.semantic import SemanticModel
from ..model.torch_api import REDUCING_COLLECTIVES
from . import sandbox
from .names import (
    REGISTRATIONS,
    defined_names,
    free_names,
    is_torch_cuda_name,
    is_torch_name,
    root_name,
    unrunnable_calls,
)
from .sites import ACCUMULATOR, NoReplay, Site
from .source_view import MAPPING, Edit, Rewriter, SourceIndex, all_nodes
from .usage import SIZE_CALLS, UsageAnalysis

LEGACY_TYPES = frozenset(
    {"FloatTensor", "DoubleTensor", "HalfTensor", "BFloat16Tensor", "ByteTensor", "CharTensor", "ShortTensor", "IntTensor", "LongTensor", "BoolTensor"}
)  # fmt: skip
JUMPS = (cst.Continue, cst.Break, cst.Return, cst.Raise, cst.Pass)
SCOPES = (cst.FunctionDef, cst.ClassDef, cst.Lambda)
MAX_SCENARIOS = 8
COLLECTIVE_WORDS = ("all_reduce", "reduce", "all_reduce_coalesced")


@dataclass
class Part:
    scope: cst.CSTNode  # a FunctionDef, or the module
    role: str  # "init" (runs once first), "call" (runs per call), "post" (once at the end)
    self_name: str | None
    keep: set[int] = field(default_factory=set)
    core: set[int] = field(default_factory=set)  # what the site itself needs; the rest only reads it afterwards
    opaque: set[int] = field(default_factory=set)  # kept definitions whose value is synthesized
    dropped_calls: dict[int, list[cst.Call]] = field(default_factory=dict)


@dataclass
class Branch:
    node: cst.If
    arms: list[cst.CSTNode]  # the If of each test, then the else block (or None)
    tests: list[str]
    varied: bool
    default: int
    runnable: bool


class ReplayBuilder:
    def __init__(self, source: SourceIndex, model: SemanticModel, site: Site, number: int = 0, hook: str = "__h", temp: str = "__") -> None:
        # how the instrumentation names things: `__h` and `__a0` in a replay, names
        # no module can clash with (and Python does not mangle in a class) in real runs
        self.k, self.hook, self.temp = number, hook, temp
        self.source = source
        self.model = model
        self.imports = model.imports
        self.site = site
        self.left_out: list[str] = []
        self.parts: list[Part] = []
        self.branches: dict[int, Branch] = {}
        self.opaque_specs: list[dict] = []
        self.opaque_ids: dict[int, int] = {}
        self.mapped_calls: set[int] = set()
        self.target = ""  # the accumulator as the source spells it
        self.owner = "None"
        self.creation_statement: cst.CSTNode | None = None
        self.registration: cst.Call | None = None
        self.add_statements: dict[int, int] = {}  # id -> index into site.adds
        self.value_statement: cst.CSTNode | None = None
        self.angle: tuple[cst.CSTNode, cst.CSTNode, str] | None = None  # (statement, expression, positions name)
        self.constants: dict[str, object] = {}
        self.module_lines: list[str] = []
        self.inlined: dict[int, Part] = {}  # `self.m(...)` statements of init parts -> m's part

    # -- entry ------------------------------------------------------------------------
    def build(self) -> dict:
        self._locate()
        self._constants()
        self._mappings()
        self._slice()
        analysis = self._usage()
        programs, line_maps = {}, {}
        for variant in ("before", "after"):
            rewriter = Rewriter(self.source, self.mapping_edits + (self.site.fix_edits if variant == "after" else []))
            programs[variant], line_maps[variant] = self._emit(rewriter, analysis)
        for variant, program in programs.items():
            found = sandbox.problems(program)
            if found:
                raise NoReplay(f"the {variant} replay would run what a replay may not: {found[0]}")
        scenarios = self._scenarios()
        return {
            "code": self.site.code,
            "kind": self.site.kind,
            "function": self._function_name(),
            "target": self.target,
            "dtype": self.site.dtype.name if self.site.dtype is not None else None,
            "limit": self.site.dtype.exact_integer_limit if self.site.dtype is not None else None,
            "integral_fix": self.site.integral_fix,
            "programs": programs,
            "line_maps": line_maps,
            "inputs": self.inputs,
            "opaque": self.opaque_specs,
            "branches": [
                {"tests": b.tests, "varied": b.varied, "default": b.default, "line": self.source.line(b.node)}
                for b in self.branches.values()
            ],
            "scenarios": scenarios,
            "collectives": self.collectives,
            "angles": self.angle is not None,
            "module_cast": self.site.module_cast,
            "calls": any(p.role == "call" for p in self.parts) and any(p.role == "init" for p in self.parts),
            "left_out": list(dict.fromkeys(self.left_out)),
        }

    # -- where things are -------------------------------------------------------------
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
            if not _is_product(node, self.imports) or not all(_plain_operand(o, self.site.value) for o in _product_operands(node)):
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
                        value = _literal_value(small.value)
                        if value is not _NOT_LITERAL:
                            name = small.targets[0].target.value
                            self.constants[name] = value
                            self.module_lines.append(f"{name} = {self.source.raw(small.value)}")
        for part in self.parts:
            scope = part.scope
            if not isinstance(scope, cst.FunctionDef):
                continue
            defaults = {p.name.value: _literal_value(p.default) for p in _params(scope) if p.default is not None}
            for name, value in defaults.items():
                if value is not _NOT_LITERAL:
                    self.constants.setdefault(name, value)
            if part.self_name and scope.name.value == "__init__":
                for small in self._smalls(scope):
                    if isinstance(small, cst.Assign) and len(small.targets) == 1:
                        target = small.targets[0].target
                        if isinstance(target, cst.Attribute) and isinstance(target.value, cst.Name) and target.value.value == part.self_name:
                            value = _literal_value(small.value)
                            if value is _NOT_LITERAL and isinstance(small.value, cst.Name):
                                value = defaults.get(small.value.value, _NOT_LITERAL)
                            if value is not _NOT_LITERAL:
                                self.constants[f"self.{target.attr.value}"] = value

    # -- the device and the calls the replay maps itself ----------------------------------
    def _mappings(self) -> None:
        edits: list[Edit] = []
        for part in self.parts:
            for node in all_nodes(part.scope):
                edits.extend(self._mapping(node))
        seen, unique = set(), []
        for edit in edits:
            key = (edit.start, edit.end, edit.text, edit.transform is None)
            if key not in seen:
                seen.add(key)
                unique.append(edit)
        self.mapping_edits = unique

    def _mapping(self, node: cst.CSTNode) -> list[Edit]:
        offsets = self.source.offsets
        if isinstance(node, cst.Arg) and node.keyword is not None and node.keyword.value == "device":
            start, end = offsets(node.value)
            return [Edit(start, end, "__device", None, MAPPING)]
        if isinstance(node, cst.SimpleString):
            try:
                value = node.evaluated_value
            except Exception:  # noqa: BLE001 - an odd literal is simply not a device
                return []
            if isinstance(value, str) and (value == "cuda" or value.startswith("cuda:")):
                start, end = offsets(node)
                return [Edit(start, end, "__device", None, MAPPING)]
            return []
        if isinstance(node, cst.FormattedString) and self.source.raw(node).lstrip("rfRF").lstrip("'\"").startswith("cuda"):
            start, end = offsets(node)
            return [Edit(start, end, "__device", None, MAPPING)]
        if not isinstance(node, cst.Call):
            return []
        name = dotted_name(node.func)
        qualified = self.imports.qualify_dotted(name) if name else None
        func = node.func
        if isinstance(func, cst.Attribute) and func.attr.value == "cuda" and not is_torch_name(qualified):
            # `x.cuda()` is `x.to(<target device>)`
            self.mapped_calls.add(id(node))
            return [Edit(self.source.extent(func.value)[1], offsets(node)[1], ".to(__device)", None, MAPPING)]
        if qualified in ("torch.cuda.current_device", "torch.device"):
            self.mapped_calls.add(id(node))
            start, end = offsets(node)
            return [Edit(start, end, "__h.device()" if qualified == "torch.device" else "__device", None, MAPPING)]
        if qualified is not None and qualified.rsplit(".", 1)[-1] in LEGACY_TYPES and qualified.rsplit(".", 1)[0] in ("torch", "torch.cuda"):
            self.mapped_calls.add(id(node))
            start, end = offsets(func)
            return [Edit(start, end, "", lambda inner: f"__h.legacy({inner.rsplit('.', 1)[-1].strip()!r})", MAPPING)]
        if is_torch_cuda_name(qualified):
            self.mapped_calls.add(id(node))
            start, end = offsets(func)
            rest = qualified[len("torch.cuda.") :]
            return [Edit(start, end, f"__h.cuda({rest!r})", None, MAPPING)]
        if qualified in REDUCING_COLLECTIVES or qualified == "torch.distributed.broadcast":
            group = next((a for a in node.args if a.keyword is not None and a.keyword.value == "group"), None)
            if group is not None:
                start, end = offsets(group.value)
                return [Edit(start, end, "None", None, MAPPING)]  # the replay's own ranks
        return []

    # -- the slice -------------------------------------------------------------------------
    def _smalls(self, scope: cst.CSTNode):
        """Small statements of a body at any depth (one-line suites too), in source
        order, not inside nested defs or classes."""
        from ..model.walk import iter_children

        stack = [scope.body] if isinstance(scope, cst.FunctionDef) else list(reversed(self._body(scope)))
        while stack:
            node = stack.pop()
            if isinstance(node, (cst.SimpleStatementLine, cst.SimpleStatementSuite)):
                yield from node.body
                continue
            if isinstance(node, SCOPES) or isinstance(node, cst.BaseExpression):
                continue
            stack.extend(reversed(list(iter_children(node))))

    def _inside_nested(self, node: cst.CSTNode, scope: cst.CSTNode) -> bool:
        for ancestor in self.source.ancestors(node):
            if ancestor is scope:
                return False
            if isinstance(ancestor, SCOPES):
                return True
        return False

    def _mentions_target(self, node: cst.CSTNode) -> bool:
        return bool(self.target) and bool(self._target_nodes(node))

    def _target_nodes(self, node: cst.CSTNode) -> list[cst.CSTNode]:
        skip = set()
        for child in all_nodes(node):
            if isinstance(child, cst.Attribute):
                skip.add(id(child.attr))
            elif isinstance(child, cst.Arg) and child.keyword is not None:
                skip.add(id(child.keyword))
        found = []
        for child in all_nodes(node):
            if id(child) in skip or not isinstance(child, (cst.Name, cst.Attribute, cst.Subscript)):
                continue
            if self.source.raw(child) == self.target and not any(id(f) in {id(c) for c in all_nodes(child)} and f is not child for f in found):
                found.append(child)
        # the outermost matches only
        outer = []
        for candidate in found:
            if not any(candidate is not other and any(n is candidate for n in all_nodes(other)) for other in found):
                outer.append(candidate)
        return outer

    def _writes_target(self, small: cst.CSTNode) -> bool:
        if not self.target:
            return False
        root = self.target
        if isinstance(small, (cst.Assign, cst.AugAssign, cst.AnnAssign)):
            targets = [t.target for t in small.targets] if isinstance(small, cst.Assign) else [small.target]
            return any(self._target_root(t) == root for t in targets)
        if isinstance(small, cst.Expr) and isinstance(small.value, cst.Call):
            call = small.value
            if isinstance(call.func, cst.Attribute) and (call.func.attr.value.endswith("_") or call.func.attr.value in ("copy_", "fill_")):
                return self._target_root(call.func.value) == root
            qualified = self.imports.qualify_dotted(dotted_name(call.func))
            if qualified in REDUCING_COLLECTIVES or qualified == "torch.distributed.broadcast":
                return bool(call.args) and self._target_root(call.args[0].value) == root
            out = next((a for a in call.args if a.keyword is not None and a.keyword.value == "out"), None)
            return out is not None and self._target_root(out.value) == root
        return False

    def _target_root(self, node: cst.CSTNode) -> str | None:
        current = node
        while True:
            if self.source.raw(current) == self.target:
                return self.target
            if isinstance(current, cst.Subscript):
                current = current.value
            else:
                return None

    def _slice(self) -> None:
        """Which statements each part keeps. First the core: the site's own statements
        (the creation, the adds, whatever else changes the accumulator, the value)
        and, backwards to a fixed point, what defines the names they read. Then what
        only reads the accumulator afterwards (`print(acc.item())`, `return acc / n`)
        and what only that needs: replayed too, but an error there is reported
        beside the verdict instead of ending the run."""
        creation_start = self.source.offsets(self.creation_statement)[0] if self.creation_statement is not None else -1
        reads: dict[int, list[cst.CSTNode]] = {}
        for part in self.parts:
            for small in self._smalls(part.scope):
                if self._is_site_statement(small):
                    part.keep.add(id(small))
                elif self.target and self._mentions_target(small):
                    same_scope = self.creation_statement is not None and self._scope_of(self.creation_statement) is part.scope
                    if not same_scope or self.source.offsets(small)[0] > creation_start:
                        reads.setdefault(id(part), []).append(small)
        self._fixed_point()
        for part in self.parts:
            part.core = set(part.keep)
            part.keep |= {id(small) for small in reads.get(id(part), [])}
        self._fixed_point()
        self._runnable()

    def _fixed_point(self) -> None:
        needed_self: set[str] = set()
        changed = True
        while changed:
            changed = False
            for part in self.parts:
                if self._close(part, needed_self):
                    changed = True
            for part in self.parts:
                if part.role in ("init", "called") and needed_self:
                    for small in self._smalls(part.scope):
                        if id(small) not in part.keep and self._defines_self(small, part) & needed_self:
                            part.keep.add(id(small))
                            changed = True

    def _defines_self(self, small: cst.CSTNode, part: Part, depth: int = 0) -> set[str]:
        names = defined_names(small, part.self_name)
        callee = self.inlined.get(id(small))
        if callee is not None and depth < 5:
            for inner in self._smalls(callee.scope):
                names |= self._defines_self(inner, callee, depth + 1)
        return names

    def _close(self, part: Part, needed_self: set[str]) -> bool:
        """One pass of the backward slice over `part`. Returns whether it grew."""
        smalls = list(self._smalls(part.scope))
        kept = [s for s in smalls if id(s) in part.keep]
        uses: dict[str, int] = {}
        loops: dict[str, set[int]] = {}
        for small in kept + self._kept_headers(part):
            if id(small) in part.opaque:
                continue
            reads = self._reads(small, part)
            end = self.source.offsets(small)[1]
            for name in reads:
                uses[name] = max(uses.get(name, -1), end)
                loops.setdefault(name, set()).update(self._loops_of(small, part.scope))
        grew = False
        for name, last_use in uses.items():
            if part.self_name and name.startswith(f"{part.self_name}."):
                key = "self." + name.split(".", 1)[1]
                if key not in needed_self and not any(
                    name in defined_names(s, part.self_name) for s in smalls if self.source.offsets(s)[0] < last_use
                ):
                    needed_self.add(name)
                    grew = True
            for small in smalls:
                if id(small) in part.keep or name not in defined_names(small, part.self_name):
                    continue
                before = self.source.offsets(small)[0] < last_use
                shares_loop = bool(self._loops_of(small, part.scope) & loops.get(name, set()))
                if before or shares_loop:
                    part.keep.add(id(small))
                    grew = True
        return grew

    def _reads(self, small: cst.CSTNode, part: Part) -> set[str]:
        if isinstance(small, cst.For):
            return free_names(small.iter, part.self_name)
        if isinstance(small, cst.With):
            names: set[str] = set()
            for item in small.items:
                names |= free_names(item.item, part.self_name)
            return names
        if isinstance(small, cst.If):
            return free_names(small.test, part.self_name)
        if isinstance(small, cst.Assign):
            names = free_names(small.value, part.self_name)
            for target in small.targets:
                if isinstance(target.target, (cst.Subscript, cst.Attribute)):
                    names |= free_names(target.target, part.self_name)
            return names
        return free_names(small, part.self_name)

    def _kept_headers(self, part: Part) -> list[cst.CSTNode]:
        """The loops, `with` blocks and evaluated `if` tests around kept statements:
        what they read is needed too."""
        headers = []
        for node in all_nodes(part.scope.body if isinstance(part.scope, cst.FunctionDef) else part.scope):
            if isinstance(node, (cst.For, cst.With)) and self._contains_kept(node, part):
                headers.append(node)
            elif isinstance(node, cst.If) and self._contains_kept(node, part):
                branch = self._branch(node, part, cache=False)
                if branch is not None and branch.runnable and not branch.varied:
                    headers.append(node)
        return headers

    def _contains_kept(self, node: cst.CSTNode, part: Part) -> bool:
        return any(id(n) in part.keep for n in all_nodes(node))

    def _loops_of(self, node: cst.CSTNode, scope: cst.CSTNode) -> set[int]:
        loops = set()
        for ancestor in self.source.ancestors(node):
            if ancestor is scope:
                break
            if isinstance(ancestor, (cst.For, cst.While)):
                loops.add(id(ancestor))
        return loops

    def _is_site_statement(self, small: cst.CSTNode) -> bool:
        return (
            small is self.creation_statement or id(small) in self.add_statements
            or small is self.value_statement or (self.angle is not None and small is self.angle[0])
            or self._writes_target(small)
        )  # fmt: skip

    def _runnable(self) -> None:
        """Statements that call what a replay cannot run: a definition gets its value
        synthesized, a site statement gets the call's result synthesized, anything
        else is left out. Statements the allow-list refuses are left out too (or the
        replay is refused, when the site itself needs them)."""
        for part in self.parts:
            for small in list(self._smalls(part.scope)):
                if id(small) not in part.keep or id(small) in self.inlined:
                    continue
                text = self.source.raw(small)
                calls = unrunnable_calls(small, self.imports, part.self_name, self.mapped_calls)
                if self.registration is not None and small is self.creation_statement:
                    calls = [c for c in calls if c is not self.registration]
                if isinstance(small, cst.Expr) and isinstance(small.value, cst.Call) and small.value.func.__class__ is cst.Attribute:
                    method = small.value.func.attr.value
                    if method in REGISTRATIONS and part.self_name and small is not self.creation_statement:
                        calls = [c for c in calls if c is not small.value]
                site_statement = self._is_site_statement(small)
                problems = self._problems(small)
                if problems:
                    if site_statement:
                        raise NoReplay(f"`{_short(text)}` is refused: {problems[0]}")
                    part.keep.discard(id(small))
                    self.left_out.append(f"`{_short(text)}` (refused: {problems[0]})")
                    continue
                if not calls:
                    continue
                names = ", ".join(f"`{_short(self.source.raw(c.func))}`" for c in calls)
                if site_statement:
                    part.dropped_calls[id(small)] = calls
                    for call in calls:
                        self._opaque_call(call, part)
                    self.left_out.append(f"the result of {names} in `{_short(text)}` (not replayed: synthesized)")
                elif isinstance(small, (cst.Assign, cst.AnnAssign)) and _plain_targets(small):
                    part.opaque.add(id(small))
                    self.left_out.append(f"`{_short(text)}` (calls {names}); its result is synthesized")
                elif isinstance(small, cst.Return):
                    part.keep.discard(id(small))
                else:
                    part.keep.discard(id(small))
                    self.left_out.append(f"`{_short(text)}` (calls {names})")

    def _problems(self, small: cst.CSTNode) -> list[str]:
        if _user_dunder(small):
            return ["names starting with `__` are not allowed"]
        rewriter = Rewriter(self.source, self.mapping_edits)
        if small is self.creation_statement and self.registration is not None:
            text = self._register_text(small, rewriter)
        else:
            text = rewriter.render(small)
        return sandbox.problems("def __f():\n    " + text.replace("\n", "\n    ") + "\n", generated=True)

    def _opaque_call(self, call: cst.Call, part: Part) -> None:
        parent = self.source.parent(call)
        spec: dict = {"roles": []}
        if any(call is a.addend or (isinstance(a.addend, cst.Call) and a.addend is call) for a in self.site.adds):
            spec = {"roles": ["count"]}
        elif isinstance(parent, cst.Arg):
            outer = self.source.parent(parent)
            if isinstance(outer, cst.Call) and (dotted_name(outer.func) or "").rsplit(".", 1)[-1] in SIZE_CALLS:
                spec = {"roles": ["size"]}
        self.opaque_ids[id(call)] = len(self.opaque_specs)
        self.opaque_specs.append(spec)

    # -- usage of inputs ----------------------------------------------------------------
    def _usage(self) -> UsageAnalysis:
        buffer_size = 2
        if self.site.creation is not None and isinstance(self.site.creation, cst.Call):
            sizes = [a.value for a in self.site.creation.args if a.keyword is None]
            if sizes and isinstance(sizes[0], cst.Integer):
                buffer_size = max(1, int(sizes[0].value, 0))
            elif sizes and isinstance(sizes[0], cst.Name) and isinstance(self.constants.get(sizes[0].value), int):
                buffer_size = max(1, self.constants[sizes[0].value])
            elif sizes:
                buffer_size = 4  # a size input: the child makes it 4
        analysis = UsageAnalysis(self.imports, self.constants, buffer_size)
        for part in self.parts:
            analysis.analyse(part.scope, self.source.parents)
        analysis.finish()
        if self.angle is not None:
            # what the positions are multiplied with: rotary frequencies, not counts
            for node in _operands(self.angle[1], self.imports):
                path = analysis.path_of(node) if not (isinstance(node, cst.Name) and node.value == self.angle[2]) else None
                if path is not None:
                    analysis.mark(path, "frequencies")
        for add in self.site.adds:
            path = analysis.path_of(add.addend) if add.whole and isinstance(add.addend, (cst.Name, cst.Attribute, cst.Subscript)) else None
            if path is not None:
                analysis.mark(path, "scalar")
        self.analysis = analysis
        return analysis

    # -- emission -------------------------------------------------------------------------
    def _emit(self, rewriter: Rewriter, analysis: UsageAnalysis) -> tuple[str, dict]:
        self.rewriter = rewriter
        lines: list[tuple[str, int, str]] = []  # (text, source line, kind)
        self.inputs = {}
        self.collectives = False
        torch_imports = ["import torch"] + [line for line in self._torch_imports() if line != "import torch"]
        head = [(line, 0, "setup") for line in torch_imports + self.module_lines]
        head.append(("__device = __h.device()", 0, "setup"))
        has_self = any(p.self_name for p in self.parts)
        if has_self:
            head.append(("self = __h.self_object()", 0, "setup"))
            self.inputs["self"] = analysis.spec(next(p.self_name for p in self.parts if p.self_name))
        functions = []
        for number, part in enumerate(self.parts):
            body = self._block(self._body(part.scope), part, 1)
            bindings = self._bindings(part, body, analysis, set(torch_imports) | {"self"})
            name = f"__m{number}"
            params = "self" if part.self_name else ""
            if part.role == "called":
                params = ", ".join(["self"] + self._parameters(part.scope))
            functions.append((name, part))
            lines.append((f"def {name}({params}):", self.source.line(part.scope) if isinstance(part.scope, cst.FunctionDef) else 0, "header"))
            lines.extend(("    " + text, 0, "input") for text in bindings)
            lines.extend(("    " + text, line, kind) for text, line, kind in body)
            if not bindings and not body:
                lines.append(("    pass", 0, "setup"))
        roles = {role: "[" + ", ".join(n for n, p in functions if p.role == role) + "]" for role in ("init", "call", "post", "main")}
        runner = f"__h.run({roles['init']}, {roles['call'] if roles['call'] != '[]' else roles['main']}, {roles['post']}, {'self' if has_self else 'None'})"
        program = ["def __replay(__h):"]
        line_map: dict[int, list] = {}
        for text, line, kind in head + lines + [(runner, 0, "setup")]:
            program.append("    " + text)
            line_map[len(program)] = [line, kind]
        return "\n".join(program) + "\n", line_map

    def _parameters(self, function: cst.FunctionDef) -> list[str]:
        """A called method's parameters without `self` and annotations (defaults kept)."""
        out = []
        params = function.params
        for param in list(params.posonly_params) + list(params.params)[1:]:
            default = f"={self.rewriter.render(param.default)}" if param.default is not None else ""
            out.append(param.name.value + default)
        if isinstance(params.star_arg, cst.Param):
            out.append("*" + params.star_arg.name.value)
        for param in params.kwonly_params:
            default = f"={self.rewriter.render(param.default)}" if param.default is not None else "=None"
            out.append(param.name.value + default)
        if params.star_kwarg is not None:
            out.append("**" + params.star_kwarg.name.value)
        return out

    def _body(self, scope: cst.CSTNode) -> list:
        if isinstance(scope, cst.FunctionDef):
            return list(scope.body.body) if isinstance(scope.body, cst.IndentedBlock) else [scope.body]
        return [s for s in scope.body if not isinstance(s, (cst.FunctionDef, cst.ClassDef))]

    def _torch_imports(self) -> list[str]:
        lines = []
        for statement in self.model.module.body:
            if not isinstance(statement, cst.SimpleStatementLine):
                continue
            for small in statement.body:
                if isinstance(small, cst.Import):
                    names = [dotted_name(a.name) or "" for a in small.names]
                    if all(is_torch_name(n) for n in names) and not sandbox.problems(self.source.raw(small), generated=False):
                        lines.append(self.source.raw(small))
                elif isinstance(small, cst.ImportFrom) and small.module is not None and not small.relative:
                    if is_torch_name(dotted_name(small.module)) and not sandbox.problems(self.source.raw(small), generated=False):
                        lines.append(self.source.raw(small))
        return lines

    def _bindings(self, part: Part, body: list, analysis: UsageAnalysis, outer: set[str]) -> list[str]:
        """Inputs bound at the top of the part, before anything (the creation too)
        reads them: parameters with a literal default get it, everything else the
        code reads before binding it is synthesized."""
        text = "\n".join(t for t, _, _ in body)
        inputs = _names_read_before_bound(text)
        defined_outside = {line.split(" = ")[0] for line in self.module_lines} | _imported_names(outer) | {"__device", "__h", "self"}
        defaults = {}
        if isinstance(part.scope, cst.FunctionDef):
            for param in _params(part.scope):
                if param.default is not None and _literal_value(param.default) is not _NOT_LITERAL:
                    if "positions" in analysis.spec(param.name.value).get("roles", []) and part.role in ("main", "call"):
                        # a length of positions: the callers choose it, the replay drives it long
                        self.left_out.append(f"the default `{param.name.value}={self.source.raw(param.default)}` (a length of positions: synthesized)")
                        continue
                    defaults[param.name.value] = self.source.raw(param.default)
        bindings = []
        if part.role == "called":
            defined_outside |= {p.name.value for p in _params(part.scope)}
        for name in inputs:
            if name in defined_outside or name in sandbox.SAFE_BUILTINS or name == part.self_name or sandbox.GENERATED_NAME.match(name):
                continue
            if name in defaults:
                bindings.append(f"{name} = {defaults[name]}")
            else:
                bindings.append(f"{name} = __h.input({name!r})")
                self.inputs[name] = analysis.spec(name)
        return bindings

    def _block(self, statements, part: Part, depth: int) -> list[tuple[str, int, str]]:
        out: list[tuple[str, int, str]] = []
        for statement in statements:
            if isinstance(statement, (cst.SimpleStatementLine, cst.SimpleStatementSuite)):
                for small in statement.body:
                    if id(small) in part.keep:
                        out.extend(self._small(small, part))
            elif isinstance(statement, SCOPES):
                continue
            elif not self._contains_kept(statement, part):
                if isinstance(statement, cst.If) and _is_filter(statement) and self._loops_of(statement, part.scope):
                    self.left_out.append(f"filter `if {_short(self.source.raw(statement.test))}:` (not replayed: every step adds)")
                continue
            elif isinstance(statement, cst.If):
                out.extend(self._if(statement, part, depth))
            elif isinstance(statement, cst.For):
                body = self._block(_suite(statement.body), part, depth + 1)
                if body:
                    iterable = self.rewriter.render(statement.iter)
                    header = f"for {self.rewriter.render(statement.target)} in __h.bounded({iterable}):"
                    if id(statement.iter) in self.opaque_ids:
                        header = f"for {self.rewriter.render(statement.target)} in __h.bounded(__h.opaque({self.opaque_ids[id(statement.iter)]})):"
                    out.append((header, self.source.line(statement), "loop"))
                    out.extend(_indent(body))
                    if statement.orelse is not None:
                        self.left_out.append(f"the `else:` of the loop at line {self.source.line(statement)}")
            elif isinstance(statement, cst.While):
                body = self._block(_suite(statement.body), part, depth + 1)
                if body:
                    number = len(self.branches) + 1000 * depth + self.source.line(statement)
                    out.append((f"while __h.loop({number}):", self.source.line(statement), "loop"))
                    out.extend(_indent(body))
                    self.left_out.append(f"`while {_short(self.source.raw(statement.test))}:` runs a fixed number of times")
            elif isinstance(statement, cst.With):
                body = self._block(_suite(statement.body), part, depth + 1)
                items = ", ".join(self.rewriter.render(item) for item in statement.items)
                runnable = not any(unrunnable_calls(item, self.imports, part.self_name, self.mapped_calls) for item in statement.items)
                if runnable and not sandbox.problems(f"with {items}:\n    pass\n"):
                    out.append((f"with {items}:", self.source.line(statement), "with"))
                    out.extend(_indent(body) or [("    pass", 0, "setup")])
                else:
                    self.left_out.append(f"`with {_short(items)}:` (its body runs without it)")
                    out.extend(body)
            elif isinstance(statement, (cst.Try, getattr(cst, "TryStar", cst.Try))):
                out.extend(self._block(_suite(statement.body), part, depth))
                if any(self._contains_kept(h, part) for h in statement.handlers):
                    self.left_out.append(f"the `except` blocks of the `try` at line {self.source.line(statement)}")
                for block in (statement.orelse, statement.finalbody):
                    if block is not None:
                        out.extend(self._block(_suite(block.body), part, depth))
            else:
                self.left_out.append(f"the `{type(statement).__name__.lower()}` statement at line {self.source.line(statement)}")
        return out

    def _branch(self, node: cst.If, part: Part, cache: bool = True) -> Branch | None:
        if cache and id(node) in self.branches:
            return self.branches[id(node)]
        arms: list[cst.CSTNode] = []
        tests: list[cst.BaseExpression] = []
        current: cst.BaseSuite | cst.If | cst.Else | None = node
        while isinstance(current, cst.If):
            arms.append(current.body)
            tests.append(current.test)
            current = current.orelse
        arms.append(current.body if isinstance(current, cst.Else) else None)
        kept = [arm is not None and self._contains_kept(arm, part) for arm in arms]
        site_arms = [arm is not None and any(self._is_site_statement(n) for n in all_nodes(arm) if id(n) in part.keep) for arm in arms]
        varied = any(site_arms)
        default = site_arms.index(True) if varied else (kept.index(True) if any(kept) else len(arms) - 1)
        runnable = all(not unrunnable_calls(t, self.imports, part.self_name, self.mapped_calls) for t in tests) and not any(
            sandbox.problems(Rewriter(self.source, self.mapping_edits).render(t)) for t in tests
        )
        branch = Branch(node, arms, [_short(self.source.raw(t)) for t in tests], varied, default, runnable)
        if cache:
            self.branches[id(node)] = branch
        return branch

    def _if(self, node: cst.If, part: Part, depth: int) -> list[tuple[str, int, str]]:
        branch = self._branch(node, part)
        number = list(self.branches).index(id(node))
        out: list[tuple[str, int, str]] = []
        evaluated = branch.runnable and not branch.varied
        if not evaluated and not branch.varied:
            taken = "the first arm" if branch.default == 0 else ("the `else:` arm" if branch.default == len(branch.arms) - 1 else f"arm {branch.default + 1}")
            self.left_out.append(f"`if {branch.tests[0]}:` is not evaluated on synthetic inputs; the replay takes {taken}")
        current: cst.CSTNode | None = node
        index = 0
        while isinstance(current, cst.If):
            keyword = "if" if index == 0 else "elif"
            test = f"__h.test({number}, {index}, lambda: {self.rewriter.render(current.test)})" if evaluated else f"__h.arm({number}, {index})"
            body = self._block(_suite(current.body), part, depth + 1)
            out.append((f"{keyword} {test}:", self.source.line(current), "branch"))
            out.extend(_indent(body) or [("    pass", 0, "setup")])
            current = current.orelse
            index += 1
        if isinstance(current, cst.Else):
            body = self._block(_suite(current.body), part, depth + 1)
            if body:
                out.append(("else:", self.source.line(current), "branch"))
                out.extend(_indent(body))
        return out

    def _register_text(self, small: cst.CSTNode, rewriter: Rewriter) -> str:
        call = self.registration
        value_arg = call.args[1] if len(call.args) > 1 and call.args[1].keyword is None else next(
            (a for a in call.args if a.keyword is not None and a.keyword.value in ("tensor", "default")), None
        )
        if value_arg is None:
            raise NoReplay("the registered state has no value")
        return f"{self.target} = {rewriter.render(value_arg.value)}"

    def _small(self, small: cst.CSTNode, part: Part) -> list[tuple[str, int, str]]:
        line = self.source.line(small)
        r = self.rewriter
        extra = [Edit(*self.source.offsets(c), f"__h.opaque({self.opaque_ids[id(c)]})", None, 1) for c in part.dropped_calls.get(id(small), [])]
        render = Rewriter(self.source, r.edits + extra)
        callee = self.inlined.get(id(small))
        if callee is not None:
            call = small.value
            number = self.parts.index(callee)
            arguments = ", ".join(["self"] + [render.render(a) for a in call.args])
            return [(f"__m{number}({arguments})", line, "slice")]
        if id(small) in part.opaque:
            names = sorted(_plain_targets(small))
            for name in names:
                self.inputs.setdefault(name, self.analysis.spec(name))
            return [(f"{name} = __h.input({name!r})", line, "opaque") for name in names]
        if small is self.creation_statement:
            text = self._register_text(small, render) if self.registration is not None else render.render(small)
            return self._creation_lines(text, line)
        registered = _registration(small)
        if registered is not None and part.self_name:
            name, value = registered
            return [(f"{part.self_name}.{name} = __h.module_cast({render.render(value)})", line, "slice")]
        if id(small) in self.add_statements:
            return self._add_lines(small, render, line)
        if small is self.value_statement or (self.angle is not None and small is self.angle[0]):
            return [(self._value_text(small, render), line, "value")]
        if self._writes_target(small):
            return self._mirror_lines(small, render, line)
        text = render.render(small)
        if isinstance(small, cst.Expr) and any(w in text for w in COLLECTIVE_WORDS) and self._collective(small):
            self.collectives = True
        if id(small) not in part.core and not isinstance(small, cst.Return) and self.hook == "__h":
            # only reads the accumulator afterwards: an error here is reported, the run goes on
            body = text.replace("\n", "\n    ")
            return [("try:", line, "post"), ("    " + body, line, "post"), ("except Exception as __e:", line, "post"), (f"    __h.failed({line}, __e)", line, "post")]
        return [(text, line, "slice")]

    def _creation_lines(self, text: str, line: int) -> list[tuple[str, int, str]]:
        h, k = self.hook, self.k
        return [
            (text, line, "creation"),
            (f"{self.target} = {h}.start({k}, {self.target}, {self.owner})", line, "creation"),
            (f"{h}.trace({k}, {self.target}, {self.owner}, {line}, 'start')", line, "creation"),
        ]

    def _box(self) -> str:
        return f"{self.hook}.box({self.k}, {self.owner}).v"

    def _trace(self, line: int, kind: str) -> str:
        return f"{self.hook}.trace({self.k}, {self.target}, {self.owner}, {line}, {kind!r})"

    def _add_lines(self, small: cst.CSTNode, render: Rewriter, line: int) -> list[tuple[str, int, str]]:
        index = self.add_statements[id(small)]
        add = self.site.adds[index]
        temp = f"{self.temp}a{index}" if self.temp == "__" else f"{self.temp}a{self.k}_{index}"
        count = render.render(add.addend)
        start, end = self.source.offsets(add.addend)
        as_written = Rewriter(self.source, render.edits + [Edit(start, end, temp, None, -1)]).render(small)
        mirror_edits = [Edit(start, end, f"{self.hook}.exact({temp})", None, -1)]
        for node in self._target_nodes(small):
            if any(node is n for n in all_nodes(add.addend)):
                continue
            mirror_edits.append(Edit(*self.source.offsets(node), self._box(), None, -1))
        mirror = Rewriter(self.source, render.edits + mirror_edits).render(small)
        return [
            (f"{temp} = {count}", line, "add"),
            (as_written, line, "add"),
            (mirror, line, "shadow"),
            (self._trace(line, "add"), line, "shadow"),
        ]

    def _mirror_lines(self, small: cst.CSTNode, render: Rewriter, line: int) -> list[tuple[str, int, str]]:
        """A statement that changes the accumulator other than by an add: run it,
        then run it on the shadow (in float64 for arithmetic, exactly for collectives)."""
        text = render.render(small)
        shadow = f"{self.temp}s{self.k}"
        edits = [Edit(*self.source.offsets(node), shadow, None, -1) for node in self._target_nodes(small)]
        mirrored = Rewriter(self.source, render.edits + edits).render(small)
        if self._collective(small):
            self.collectives = True
            return [
                (text, line, "collective"),
                (f"{shadow} = {self._box()}", line, "shadow"),
                (mirrored, line, "shadow"),
                (self._trace(line, "collective"), line, "shadow"),
            ]
        return [
            (text, line, "write"),
            (f"{shadow} = {self.hook}.f64({self._box()})", line, "shadow"),
            (mirrored, line, "shadow"),
            (f"{self._box()} = {self.hook}.settle({self.k}, {shadow}, {line})", line, "shadow"),
            (self._trace(line, "write"), line, "shadow"),
        ]

    def _collective(self, small: cst.CSTNode) -> bool:
        if isinstance(small, cst.Expr) and isinstance(small.value, cst.Call):
            qualified = self.imports.qualify_dotted(dotted_name(small.value.func))
            return qualified in REDUCING_COLLECTIVES or qualified == "torch.distributed.broadcast"
        return False

    def _value_text(self, small: cst.CSTNode, render: Rewriter) -> str:
        """`__h.value(0, <value as written>, <its exact version>)`, and for PH004 the
        angles: `__h.angle(0, <as written>, <from exact positions, in float64>)`."""
        before_edits = Rewriter(self.source, self.mapping_edits)
        edits = list(render.edits)
        if small is self.value_statement:
            value = self.site.value
            exact = Rewriter(self.source, before_edits.edits + self.site.exact_edits).render(value)
            edits.append(Edit(*self.source.offsets(value), "", lambda inner, exact=exact, h=self.hook, k=self.k: f"{h}.value({k}, {inner}, {exact})", -2))
        if self.angle is not None and small is self.angle[0]:
            _, expression, name = self.angle
            exact_edits = list(before_edits.edits)
            for node in _operands(expression, self.imports):
                if node is self.site.value or (isinstance(node, cst.Name) and node.value == name):
                    exact_edits.append(Edit(*self.source.offsets(node), f"{self.hook}.exact_of({self.k})", None, -3))
                elif not any(node is n for n in all_nodes(self.site.value)):
                    exact_edits.append(Edit(*self.source.offsets(node), "", lambda inner, h=self.hook: f"{h}.f64({inner})", -3))
            if any(n is self.site.value for n in all_nodes(expression)):
                exact_edits.append(Edit(*self.source.offsets(self.site.value), f"{self.hook}.exact_of({self.k})", None, -4))
            exact = Rewriter(self.source, exact_edits).render(expression)
            edits.append(Edit(*self.source.offsets(expression), "", lambda inner, exact=exact, h=self.hook, k=self.k: f"{h}.angle({k}, {inner}, {exact})", -3))
        return Rewriter(self.source, edits).render(small)

    # -- scenarios ------------------------------------------------------------------------
    def _scenarios(self) -> list[dict]:
        varied = [(number, b) for number, b in enumerate(self.branches.values()) if b.varied]
        base = {str(number): b.default for number, b in enumerate(self.branches.values())}
        scenarios = [{"name": self._scenario_name(base, varied), "arms": base}]
        for number, branch in varied:
            for arm in range(len(branch.arms)):
                if arm == branch.default:
                    continue
                arms = dict(base)
                arms[str(number)] = arm
                scenarios.append({"name": self._scenario_name(arms, varied), "arms": arms})
        if self.site.module_cast:
            scenarios = [
                {**s, "name": f"{s['name']}{'; ' if s['name'] else ''}module cast to {cast}", "cast": cast}
                for s in scenarios for cast in ("bfloat16", "float16")
            ] + [{**s, "name": f"{s['name']}{'; ' if s['name'] else ''}module as built"} for s in scenarios]  # fmt: skip
        if len(scenarios) > MAX_SCENARIOS:
            self.left_out.append(f"{len(scenarios) - MAX_SCENARIOS} more combinations of branches")
            scenarios = scenarios[:MAX_SCENARIOS]
        return scenarios

    def _scenario_name(self, arms: dict, varied) -> str:
        names = []
        for number, branch in varied:
            arm = arms[str(number)]
            if arm < len(branch.tests):
                names.append(f"`if {branch.tests[arm]}` taken")
            else:
                names.append(f"`if {branch.tests[0]}` not taken")
        return "; ".join(names)

    def _function_name(self) -> str:
        names = []
        for ancestor in self.source.ancestors(self.site.anchor):
            if isinstance(ancestor, (cst.FunctionDef, cst.ClassDef)):
                names.append(ancestor.name.value)
        return ".".join(reversed(names)) or "<module>"


# -- helpers ----------------------------------------------------------------------------
_NOT_LITERAL = object()


def _literal_value(node):
    if isinstance(node, cst.Integer):
        return int(node.value, 0)
    if isinstance(node, cst.Float):
        return float(node.value)
    if isinstance(node, cst.SimpleString):
        return node.evaluated_value
    if isinstance(node, cst.Name) and node.value in ("True", "False", "None"):
        return {"True": True, "False": False, "None": None}[node.value]
    if isinstance(node, cst.UnaryOperation) and isinstance(node.operator, cst.Minus):
        inner = _literal_value(node.expression)
        return -inner if isinstance(inner, (int, float)) and not isinstance(inner, bool) else _NOT_LITERAL
    return _NOT_LITERAL


def _params(function: cst.FunctionDef) -> list[cst.Param]:
    params = function.params
    result = list(params.posonly_params) + list(params.params) + list(params.kwonly_params)
    for star in (params.star_arg, params.star_kwarg):
        if isinstance(star, cst.Param):
            result.append(star)
    return result


def _suite(suite) -> list:
    if isinstance(suite, cst.IndentedBlock):
        return list(suite.body)
    if isinstance(suite, cst.SimpleStatementSuite):
        return [suite]  # a one-line body: its small statements, as a line's
    return []


def _indent(lines):
    return [("    " + text, line, kind) for text, line, kind in lines]


def _short(text: str, limit: int = 70) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _plain_targets(small: cst.CSTNode) -> set[str]:
    targets = [t.target for t in small.targets] if isinstance(small, cst.Assign) else [small.target]
    names: set[str] = set()
    for target in targets:
        if isinstance(target, cst.Name):
            names.add(target.value)
        elif isinstance(target, (cst.Tuple, cst.List)) and all(isinstance(e.value, cst.Name) for e in target.elements):
            names |= {e.value.value for e in target.elements}
        else:
            return set()
    return names


def _user_dunder(small: cst.CSTNode) -> bool:
    return any(isinstance(n, cst.Name) and n.value.startswith("__") for n in all_nodes(small))


def _is_product(node: cst.CSTNode, imports) -> bool:
    if isinstance(node, cst.BinaryOperation) and isinstance(node.operator, (cst.Multiply, cst.MatrixMultiply)):
        return True
    if isinstance(node, cst.Call):
        name = dotted_name(node.func) or ""
        last = name.rsplit(".", 1)[-1] if name else (node.func.attr.value if isinstance(node.func, cst.Attribute) else "")
        return last in ("outer", "einsum", "matmul", "ger", "mul", "mm", "bmm")
    return False


VIEW_METHODS = frozenset({"unsqueeze", "view", "reshape", "float", "double", "to", "type_as", "expand", "t", "transpose", "squeeze", "flatten", "half", "bfloat16", "contiguous"})


def _product_operands(node: cst.CSTNode) -> list[cst.CSTNode]:
    if isinstance(node, cst.BinaryOperation):
        return [node.left, node.right]
    args = [a.value for a in node.args if a.keyword is None]
    if args and isinstance(args[0], cst.SimpleString):  # einsum's equation
        args = args[1:]
    if isinstance(node.func, cst.Attribute) and (dotted_name(node.func) or "").split(".")[0] not in ("torch", "th"):
        args = [node.func.value] + args  # `t.outer(f)`
    return args


def _plain_operand(node: cst.CSTNode, value: cst.CSTNode) -> bool:
    """A product's operand the exact version can recompute: the positions or a name,
    seen through views (`t[:, None]`, `f.unsqueeze(0)`, `.float()`); never a call that
    makes new values (`torch.randn(...)` would draw other numbers)."""
    current = node
    while True:
        if current is value or isinstance(current, (cst.Name, cst.Integer, cst.Float)):
            return True
        if isinstance(current, cst.Attribute):
            current = current.value
        elif isinstance(current, cst.Subscript):
            current = current.value
        elif isinstance(current, cst.Call) and isinstance(current.func, cst.Attribute) and current.func.attr.value in VIEW_METHODS:
            current = current.func.value
        else:
            return False


def _operands(expression: cst.CSTNode, imports) -> list[cst.CSTNode]:
    """The values a product reads (maximal names and attribute chains): not torch's
    own names (`torch.outer`), nor a method's name, but the value it is called on."""
    found: list[cst.CSTNode] = []
    covered: set[int] = set()
    methods = {id(n.func) for n in all_nodes(expression) if isinstance(n, cst.Call) and isinstance(n.func, cst.Attribute)}
    functions = {id(n.func) for n in all_nodes(expression) if isinstance(n, cst.Call) and isinstance(n.func, cst.Name)}
    keywords = {id(n.keyword) for n in all_nodes(expression) if isinstance(n, cst.Arg) and n.keyword is not None}
    for node in all_nodes(expression):
        if id(node) in covered or id(node) in keywords or not isinstance(node, (cst.Name, cst.Attribute)):
            continue
        name = dotted_name(node)
        if id(node) in functions or (name is not None and is_torch_name(imports.qualify_dotted(name))):
            covered |= {id(n) for n in all_nodes(node)}
            continue
        if id(node) in methods:
            covered.add(id(node.attr))  # look at what the method is called on
            continue
        if isinstance(node, cst.Attribute) and name is None:
            continue  # `x.sum().t`: look inside
        found.append(node)
        covered |= {id(n) for n in all_nodes(node)}
    return found


def _imported_names(import_lines: set[str]) -> set[str]:
    names = set()
    for line in import_lines:
        try:
            tree = ast.parse(line)
        except SyntaxError:
            continue
        for node in ast.walk(tree):
            if isinstance(node, ast.alias):
                names.add((node.asname or node.name).split(".")[0])
    return names


def _names_read_before_bound(text: str) -> list[str]:
    """Names a block reads before it binds them (in evaluation order), or never binds."""
    try:
        tree = ast.parse(text or "pass")
    except SyntaxError:
        return []
    bound: set[str] = set()
    reads: list[str] = []

    def read(name: str) -> None:
        if name not in bound and name not in reads:
            reads.append(name)

    def expression(node, local: frozenset = frozenset()) -> None:
        if isinstance(node, ast.Name):
            if isinstance(node.ctx, ast.Load) and node.id not in local:
                read(node.id)
            return
        if isinstance(node, (ast.ListComp, ast.SetComp, ast.GeneratorExp, ast.DictComp)):
            inner = set(local)
            for generator in node.generators:
                expression(generator.iter, frozenset(inner))
                inner |= {n.id for n in ast.walk(generator.target) if isinstance(n, ast.Name)}
                for condition in generator.ifs:
                    expression(condition, frozenset(inner))
            for part in ([node.key, node.value] if isinstance(node, ast.DictComp) else [node.elt]):
                expression(part, frozenset(inner))
            return
        if isinstance(node, ast.Lambda):
            args = {a.arg for a in node.args.args + node.args.kwonlyargs}
            expression(node.body, local | args)
            return
        for child in ast.iter_child_nodes(node):
            expression(child, local)

    def store(target) -> None:
        for node in ast.walk(target):
            if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
                bound.add(node.id)
            elif isinstance(node, ast.Name):
                expression(node)
            elif isinstance(node, (ast.Subscript, ast.Attribute)):
                expression(node.value)
                if isinstance(node, ast.Subscript):
                    expression(node.slice)

    def statements(body) -> None:
        for node in body:
            if isinstance(node, ast.Assign):
                expression(node.value)
                for target in node.targets:
                    store(target)
            elif isinstance(node, ast.AugAssign):
                expression(node.target if not isinstance(node.target, ast.Name) else ast.Name(node.target.id, ast.Load()))
                expression(node.value)
                store(node.target)
            elif isinstance(node, ast.AnnAssign):
                if node.value is not None:
                    expression(node.value)
                store(node.target)
            elif isinstance(node, ast.For):
                expression(node.iter)
                store(node.target)
                statements(node.body)
                statements(node.orelse)
            elif isinstance(node, (ast.If, ast.While)):
                expression(node.test)
                statements(node.body)
                statements(node.orelse)
            elif isinstance(node, ast.With):
                for item in node.items:
                    expression(item.context_expr)
                    if item.optional_vars is not None:
                        store(item.optional_vars)
                statements(node.body)
            elif isinstance(node, ast.Try):
                statements(node.body)
                for handler in node.handlers:
                    if handler.name:
                        bound.add(handler.name)
                    statements(handler.body)
                statements(node.orelse)
                statements(node.finalbody)
            elif isinstance(node, ast.FunctionDef):
                bound.add(node.name)
            else:
                for child in ast.iter_child_nodes(node):
                    expression(child)

    statements(tree.body)
    return reads


def _registration(small: cst.CSTNode) -> tuple[str, cst.BaseExpression] | None:
    """`self.register_buffer("name", value)` / `self.add_state("name", default=value)`."""
    if not (isinstance(small, cst.Expr) and isinstance(small.value, cst.Call) and isinstance(small.value.func, cst.Attribute)):
        return None
    call = small.value
    if call.func.attr.value not in REGISTRATIONS or not call.args or not isinstance(call.args[0].value, cst.SimpleString):
        return None
    value = call.args[1].value if len(call.args) > 1 and call.args[1].keyword is None else None
    if value is None:
        value = next((a.value for a in call.args if a.keyword is not None and a.keyword.value in ("tensor", "default")), None)
    return (str(call.args[0].value.evaluated_value), value) if value is not None else None


def _is_filter(node: cst.If) -> bool:
    """`if cond: continue` (or break / return): an `if` that only skips."""
    if node.orelse is not None:
        return False
    lines = _suite(node.body)
    if not all(isinstance(line, (cst.SimpleStatementLine, cst.SimpleStatementSuite)) for line in lines):
        return False
    smalls = [small for line in lines for small in line.body]
    return bool(smalls) and all(isinstance(small, (cst.Continue, cst.Break, cst.Return)) for small in smalls)
