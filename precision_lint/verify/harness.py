"""Builds a replay of one flagged accumulation from the source (no torch here).

From the function (or class) the accumulator lives in it takes: the creation, the
statements that compute the counts (a backward slice inside the function), the
statements that add them, and what is done with the total afterwards. Calls it
cannot run (helpers such as `param_is_not_shared(p)`), and the filters around the
adds, are left out and listed. Names the slice does not define become inputs the
child process makes: tensors with known values, on the target device.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field

import libcst as cst
from libcst.metadata import MetadataWrapper, PositionProvider

from ..diagnostics import Diagnostic
from ..model.accumulators import Accumulator, AddendKind, narrowest_dtype
from ..model.imports import ImportMap, dotted_name
from ..model.semantic import SemanticModel
from ..model.torch_api import REDUCING_COLLECTIVES
from ..model.walk import iter_children, walk
from ..source import LineIndex, splice

_DEVICE_STRING = re.compile(r"^cuda(:\d+)?$")
_RUNNABLE_BUILTINS = frozenset(
    {"len", "int", "float", "bool", "sum", "min", "max", "abs", "round", "range", "zip", "enumerate", "list", "tuple", "print", "isinstance", "getattr", "hasattr"}
)
_IGNORED_NAMES = frozenset({"self", "True", "False", "None", "__device"})


class NoHarness(Exception):
    """No replay can be built; the message says why (verdict `skipped`)."""


@dataclass
class Harness:
    """A replay, as source fragments the child process assembles and runs."""

    function: str  # where the accumulator lives, for the report
    accumulator: str  # the expression that names it, e.g. `total` or `self._n`
    dtype: str  # its floating dtype before the fix, e.g. "float32"
    limit: int  # its exact-integer limit
    imports: list[str]
    setup: list[str]  # `self.x = <literal>` from __init__, for methods that read them
    before_creation: list[str]  # slice statements the creation itself needs (`device = ...`)
    creation_before: str
    creation_after: str
    slice: list[str]
    adds: list[dict]  # {"statement": str, "addend": str, "sign": +1 or -1}
    collectives: list[str]
    post: list[str]
    inputs: dict[str, dict]  # free name -> {"attributes": [...], "string_index": bool, "device": bool}
    left_out: list[str] = field(default_factory=list)

    def to_json(self) -> dict:
        return dict(vars(self))


class SourceIndex:
    """Positions, parents and text of nodes in one module."""

    def __init__(self, model: SemanticModel, text: str) -> None:
        self.module = model.module
        self.text = text
        self.index = LineIndex(text)
        self.positions = MetadataWrapper(model.module, unsafe_skip_copy=True).resolve(PositionProvider)
        self.parents: dict[int, cst.CSTNode] = {}
        self._by_id: dict[int, cst.CSTNode] = {}
        for node in _all_nodes(model.module):
            self._by_id[id(node)] = node
            for child in iter_children(node):
                self.parents[id(child)] = node

    def offsets(self, node: cst.CSTNode) -> tuple[int, int]:
        span = self.positions[node]
        return (
            self.index.offset(span.start.line, span.start.column + 1),
            self.index.offset(span.end.line, span.end.column + 1),
        )

    def code(self, node: cst.CSTNode, replace: dict[int, str] | None = None) -> str:
        """The node's source, with some inner nodes' text replaced."""
        start, end = self.offsets(node)
        pieces = []
        for inner_id, text in (replace or {}).items():
            inner = self._by_id.get(inner_id)
            if inner is not None:
                inner_start, inner_end = self.offsets(inner)
                if start <= inner_start and inner_end <= end:
                    pieces.append((inner_start, inner_end, text))
        return splice(self.text[start:end], [(s - start, e - start, text) for s, e, text in pieces])

    def parent(self, node: cst.CSTNode) -> cst.CSTNode | None:
        return self.parents.get(id(node))

    def enclosing(self, node: cst.CSTNode, kinds) -> cst.CSTNode | None:
        current = self.parent(node)
        while current is not None and not isinstance(current, kinds):
            current = self.parent(current)
        return current

    def statement(self, node: cst.CSTNode) -> cst.CSTNode:
        """The small statement (or compound statement) that holds `node`."""
        current = node
        while current is not None and not isinstance(current, (cst.BaseSmallStatement, cst.BaseCompoundStatement)):
            current = self.parent(current)
        if current is None:
            raise NoHarness("the accumulation is not inside a statement")
        return current


def _all_nodes(root: cst.CSTNode):
    yield root
    yield from walk(root)


def build_harness(source: SourceIndex, model: SemanticModel, accumulator: Accumulator, diagnostic: Diagnostic) -> Harness:
    hazards = [add for add in accumulator.adds if add.adds_count_to_float]
    if not hazards or diagnostic.fix is None:
        raise NoHarness("the finding has no fix to compare")
    dtype = narrowest_dtype(hazards)
    scope_node = source.enclosing(hazards[0].statement, (cst.FunctionDef,)) or model.module
    function = _function_name(source, hazards[0].statement)
    creation = accumulator.creation.node
    creation_before, creation_after, target = _creation(source, creation, diagnostic)
    device_strings = _device_strings(source, scope_node)

    adds, add_nodes = [], []
    for add in accumulator.adds:
        if add.kind is AddendKind.FLOATING:
            raise NoHarness("a float is added to the accumulator")
        statement = add.statement
        sign = -1 if _subtracts(statement) else 1
        adds.append(
            {
                "statement": source.code(statement, device_strings),
                "addend": source.code(add.addend, device_strings),
                "sign": sign,
            }
        )
        add_nodes.append(statement)
    left_out = _filters(source, add_nodes, scope_node)
    needed = set(_free_names(creation))  # `torch.zeros(n, device=device)` needs n and device
    for add in accumulator.adds:
        needed |= _free_names(add.addend)
    slice_nodes, slice_left_out, inputs_needed = _backward_slice(
        source, scope_node, add_nodes, needed, model.imports, device_strings
    )
    creation_start = source.offsets(creation)[0]
    before_creation = [source.code(s, device_strings) for s in slice_nodes if source.offsets(s)[1] <= creation_start]
    slice_statements = [source.code(s, device_strings) for s in slice_nodes if source.offsets(s)[1] > creation_start]
    left_out += slice_left_out
    last_add = max(source.offsets(node)[1] for node in add_nodes)
    collectives, post, post_left_out = _after(source, scope_node, target, last_add, model.imports, device_strings)
    left_out += post_left_out
    inputs = {name: _usage(scope_node, name) for name in sorted(inputs_needed)}
    for name in _size_names(creation):
        if name in inputs:
            inputs[name]["size"] = True
    for add in accumulator.adds:
        if isinstance(add.addend, cst.Name) and add.addend.value in inputs:
            inputs[add.addend.value]["scalar"] = True  # added as a whole: one value per step
    return Harness(
        function=function,
        accumulator=target,
        dtype=dtype.name,
        limit=dtype.exact_integer_limit,
        imports=_torch_imports(source, model.module),
        setup=_instance_constants(source, creation, target),
        before_creation=before_creation,
        creation_before=creation_before,
        creation_after=creation_after,
        slice=slice_statements,
        adds=adds,
        collectives=collectives,
        post=post,
        inputs=inputs,
        left_out=left_out,
    )


def _function_name(source: SourceIndex, node: cst.CSTNode) -> str:
    names = []
    current = source.parent(node)
    while current is not None:
        if isinstance(current, (cst.FunctionDef, cst.ClassDef)):
            names.append(current.name.value)
        current = source.parent(current)
    return ".".join(reversed(names)) or "<module>"


def _creation(source: SourceIndex, creation: cst.CSTNode, diagnostic: Diagnostic) -> tuple[str, str, str]:
    """(statement before the fix, after the fix, the accumulator expression)."""
    after_text = _apply_fix_inside(source, creation, diagnostic)
    devices = _device_strings(source, creation)
    before_text = source.code(creation, devices)
    after_text = _replace_devices(after_text)
    parent = source.parent(creation)
    if isinstance(parent, cst.Arg):
        call = source.parent(parent)
        if isinstance(call, cst.Call) and isinstance(call.func, cst.Attribute) and call.func.attr.value in ("register_buffer", "add_state"):
            name = call.args[0].value
            if not isinstance(name, cst.SimpleString):
                raise NoHarness("the registered state's name is not a literal")
            target = f"self.{name.evaluated_value}"
            return f"{target} = {before_text}", f"{target} = {after_text}", target
    if isinstance(parent, (cst.Assign, cst.AnnAssign)):
        target_node = parent.targets[0].target if isinstance(parent, cst.Assign) else parent.target
        target = source.code(target_node)
        return f"{target} = {before_text}", f"{target} = {after_text}", target
    raise NoHarness("the accumulator is not created by an assignment")


def _apply_fix_inside(source: SourceIndex, node: cst.CSTNode, diagnostic: Diagnostic) -> str:
    """The creation's text with the fix's edits that fall inside it applied."""
    start, end = source.offsets(node)
    text = source.text[start:end]
    edits = []
    for edit in diagnostic.fix.edits:
        edit_start = source.index.offset(edit.location.row, edit.location.column)
        edit_end = source.index.offset(edit.end_location.row, edit.end_location.column)
        if start <= edit_start and edit_end <= end:
            edits.append((edit_start - start, edit_end - start, edit.content))
    return splice(text, edits)


def _replace_devices(text: str) -> str:
    return re.sub(r"""(['"])cuda(:\d+)?\1""", "__device", text)


def _device_strings(source: SourceIndex, root: cst.CSTNode) -> dict[int, str]:
    """`'cuda'` / `"cuda:0"` literals inside `root`, to be replaced by the target device."""
    found = {}
    for node in _all_nodes(root):
        if isinstance(node, cst.SimpleString):
            try:
                value = node.evaluated_value
            except Exception:  # noqa: BLE001 - an odd literal is simply not a device
                continue
            if isinstance(value, str) and _DEVICE_STRING.match(value):
                found[id(node)] = "__device"
    return found


def _subtracts(statement: cst.CSTNode) -> bool:
    if isinstance(statement, cst.AugAssign):
        return isinstance(statement.operator, cst.SubtractAssign)
    if isinstance(statement, cst.Assign) and isinstance(statement.value, cst.BinaryOperation):
        return isinstance(statement.value.operator, cst.Subtract)
    if isinstance(statement, cst.Call) and isinstance(statement.func, cst.Attribute):
        return statement.func.attr.value in ("sub_", "sub")
    return False


def _free_names(node: cst.CSTNode) -> set[str]:
    """Names read as variables in an expression (not attribute or keyword names)."""
    not_variables = set()
    for child in _all_nodes(node):
        if isinstance(child, cst.Attribute):
            not_variables.add(id(child.attr))
        elif isinstance(child, cst.Arg) and child.keyword is not None:
            not_variables.add(id(child.keyword))
    names = {c.value for c in _all_nodes(node) if isinstance(c, cst.Name) and id(c) not in not_variables}
    return names - _IGNORED_NAMES


def _assigned_names(statement: cst.CSTNode) -> set[str]:
    targets = []
    if isinstance(statement, cst.Assign):
        targets = [t.target for t in statement.targets]
    elif isinstance(statement, (cst.AnnAssign, cst.AugAssign)):
        targets = [statement.target]
    names = set()
    for target in targets:
        if isinstance(target, cst.Name):
            names.add(target.value)
        elif isinstance(target, (cst.Tuple, cst.List)):
            names |= {e.value.value for e in target.elements if isinstance(e.value, cst.Name)}
    return names


def _unrunnable_call(node: cst.CSTNode, imports: ImportMap) -> str | None:
    """The first call in `node` to something we cannot run, or None."""
    for child in _all_nodes(node):
        if not isinstance(child, cst.Call):
            continue
        name = dotted_name(child.func)
        if isinstance(child.func, cst.Attribute) and (name is None or imports.qualify_name(name.split(".")[0]) is None):
            continue  # a method call on a value: the child process will see
        if name is None:
            return "a computed callee"
        head = name.split(".")[0]
        qualified = imports.qualify_name(head)
        if qualified is not None and (qualified.startswith("torch") or qualified in (f"builtins.{n}" for n in _RUNNABLE_BUILTINS)):
            continue
        return name
    return None


def _simple_statements(scope: cst.CSTNode):
    """Small statements of a function body at any depth, not inside nested defs."""
    for node in _all_nodes(scope):
        if isinstance(node, cst.SimpleStatementLine):
            yield from node.body


def _backward_slice(source, scope, add_nodes, needed: set[str], imports, devices):
    first_add = min(source.offsets(node)[0] for node in add_nodes)
    candidates = [
        s for s in _simple_statements(scope)
        if isinstance(s, (cst.Assign, cst.AnnAssign)) and source.offsets(s)[1] <= first_add
        and not _inside_nested_def(source, s, scope)
    ]  # fmt: skip
    chosen: list[cst.CSTNode] = []
    left_out: list[str] = []
    inputs: set[str] = set()
    pending = sorted(needed)
    seen: set[str] = set()
    while pending:
        name = pending.pop()
        if name in seen:
            continue
        seen.add(name)
        if imports.qualify_name(name) is not None and not name.startswith("_"):
            if imports.names.get(name) or imports.qualify_name(name).startswith("builtins."):
                continue  # torch, an alias, a builtin
        defining = [s for s in candidates if name in _assigned_names(s)]
        if not defining:
            inputs.add(name)
            continue
        statement = defining[-1]
        blocker = _unrunnable_call(statement, imports)
        if blocker is not None:
            left_out.append(f"`{source.code(statement)}` (calls {blocker}); `{name}` is made by the harness")
            inputs.add(name)
            continue
        if statement not in chosen:
            chosen.append(statement)
        value = statement.value
        if value is not None:
            reads = _free_names(value)
            if name in reads:
                inputs.add(name)  # `mask = mask.to(...)`: the input comes in, then is converted
            pending.extend(sorted(reads - seen))
    chosen.sort(key=lambda s: source.offsets(s)[0])
    return chosen, left_out, inputs


def _inside_nested_def(source: SourceIndex, node: cst.CSTNode, scope: cst.CSTNode) -> bool:
    current = source.parent(node)
    while current is not None and current is not scope:
        if isinstance(current, (cst.FunctionDef, cst.Lambda, cst.ClassDef)):
            return True
        current = source.parent(current)
    return False


def _filters(source: SourceIndex, add_nodes, scope) -> list[str]:
    """The `if` tests around the adds, and those earlier in their loops (a `continue`
    filter): not replayed, every step adds."""
    tests = []

    def note(test: cst.CSTNode) -> None:
        text = f"filter `{source.code(test)}`"
        if text not in tests:
            tests.append(text)

    for node in add_nodes:
        add_start = source.offsets(node)[0]
        current = source.parent(node)
        while current is not None and current is not scope:
            if isinstance(current, (cst.If, cst.While)):
                note(current.test)
            if isinstance(current, (cst.For, cst.While)):
                for inner in _all_nodes(current.body):
                    if isinstance(inner, cst.If) and source.offsets(inner)[1] <= add_start:
                        note(inner.test)
            current = source.parent(current)
    return tests


def _after(source, scope, target: str, after: int, imports, devices):
    """Statements after the last add that use the accumulator: collectives first,
    then the rest (a `return x` becomes an expression)."""
    collectives, post, left_out = [], [], []
    head = target.split("[")[0]
    for statement in _simple_statements(scope):
        if source.offsets(statement)[0] < after or _inside_nested_def(source, statement, scope):
            continue
        if not _mentions(statement, head, source):
            continue
        value = statement.value if isinstance(statement, (cst.Expr, cst.Return)) else None
        if isinstance(value, cst.Call):
            if imports.qualify_dotted(dotted_name(value.func)) in REDUCING_COLLECTIVES:
                call = value.with_changes(args=[a for a in value.args if not (a.keyword and a.keyword.value == "group")])
                collectives.append(source.module.code_for_node(call))
                continue
        blocker = _unrunnable_call(statement, imports)
        if blocker is not None:
            left_out.append(f"`{source.code(statement)}` after the adds (calls {blocker})")
            continue
        if isinstance(statement, cst.Return):
            if statement.value is not None:
                post.append(source.code(statement.value, devices))
            continue
        post.append(source.code(statement, devices))
    return collectives, post, left_out


def _mentions(statement: cst.CSTNode, head: str, source: SourceIndex) -> bool:
    return head in source.code(statement)


def _size_names(creation: cst.CSTNode) -> set[str]:
    """Names passed positionally to the creating call (`torch.zeros(num_classes)`):
    sizes or fill values, which the child binds to a small whole number."""
    if not isinstance(creation, cst.Call):
        return set()
    names = set()
    for arg in creation.args:
        if arg.keyword is None:
            names |= {n.value for n in _all_nodes(arg.value) if isinstance(n, cst.Name)}
    return names


def _usage(scope: cst.CSTNode, name: str) -> dict:
    """How a free name is used, so the child can make a fitting input for it."""
    attributes, string_index, device = set(), False, name == "device"
    for node in _all_nodes(scope):
        if isinstance(node, cst.Attribute) and isinstance(node.value, cst.Name) and node.value.value == name:
            attributes.add(node.attr.value)
        elif isinstance(node, cst.Subscript) and isinstance(node.value, cst.Name) and node.value.value == name:
            string_index |= any(
                isinstance(e.slice, cst.Index) and isinstance(e.slice.value, cst.SimpleString) for e in node.slice
            )
        elif isinstance(node, cst.Arg) and node.keyword is not None and node.keyword.value == "device":
            device |= isinstance(node.value, cst.Name) and node.value.value == name
    return {"attributes": sorted(attributes), "string_index": string_index, "device": device, "scalar": False}


_LITERALS = (cst.Integer, cst.Float, cst.SimpleString)


def _literal(node: cst.BaseExpression | None) -> bool:
    if isinstance(node, cst.UnaryOperation):
        return _literal(node.expression)
    return isinstance(node, _LITERALS) or (isinstance(node, cst.Name) and node.value in ("True", "False", "None"))


def _instance_constants(source: SourceIndex, creation: cst.CSTNode, target: str) -> list[str]:
    """`self.ignore_index = ignore_index` in `__init__`, with the parameter's literal
    default (or a literal right-hand side): what other methods read as settings."""
    cls = source.enclosing(creation, (cst.ClassDef,))
    if cls is None or not isinstance(cls.body, cst.IndentedBlock):
        return []
    init = next((s for s in cls.body.body if isinstance(s, cst.FunctionDef) and s.name.value == "__init__"), None)
    if init is None:
        return []
    defaults = {p.name.value: p.default for p in init.params.params if p.default is not None}
    lines = []
    for statement in _simple_statements(init):
        if not (isinstance(statement, cst.Assign) and len(statement.targets) == 1):
            continue
        attribute = statement.targets[0].target
        if not (isinstance(attribute, cst.Attribute) and isinstance(attribute.value, cst.Name) and attribute.value.value == "self"):
            continue
        name = f"self.{attribute.attr.value}"
        value = statement.value
        if name == target:
            continue
        if _literal(value):
            lines.append(f"{name} = {source.code(value)}")
        elif isinstance(value, cst.Name) and _literal(defaults.get(value.value)):
            lines.append(f"{name} = {source.code(defaults[value.value])}")
    return lines


def _torch_imports(source: SourceIndex, module: cst.Module) -> list[str]:
    lines = []
    for statement in module.body:
        if not isinstance(statement, cst.SimpleStatementLine):
            continue
        for small in statement.body:
            if isinstance(small, cst.Import) and all((dotted_name(a.name) or "").split(".")[0] == "torch" for a in small.names):
                lines.append(source.code(small))
            elif isinstance(small, cst.ImportFrom) and small.module is not None and not small.relative:
                if (dotted_name(small.module) or "").split(".")[0] == "torch":
                    lines.append(source.code(small))
    return lines
