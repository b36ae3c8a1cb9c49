"""Names a statement reads and writes, and which calls a replay can run. No torch here."""
from __future__ import annotations

import libcst as cst

from ..model.imports import ImportMap, dotted_name
from .sandbox import SAFE_BUILTINS
from .source_view import all_nodes

# Methods that change their receiver in place (besides every `*_` torch method).
MUTATING_METHODS = frozenset({"append", "extend", "insert", "update", "setdefault", "pop", "clear", "remove", "add"})
# Module state registration, turned into plain attribute assignments in replays.
REGISTRATIONS = frozenset({"register_buffer", "add_state"})


def is_torch_name(qualified: str | None) -> bool:
    """`torch` or `torch.*` exactly: `torchmetrics.x` is not torch."""
    return qualified is not None and (qualified == "torch" or qualified.startswith("torch."))


def is_numpy_name(qualified: str | None) -> bool:
    """`numpy` or `numpy.*` exactly (`numpyro` is not NumPy)."""
    return qualified is not None and (qualified == "numpy" or qualified.startswith("numpy."))


def is_replay_library_name(qualified: str | None) -> bool:
    """The libraries a replay runs: torch, and NumPy for the totals kept in it."""
    return is_torch_name(qualified) or is_numpy_name(qualified)


def is_torch_cuda_name(qualified: str | None) -> bool:
    return qualified is not None and (qualified == "torch.cuda" or qualified.startswith("torch.cuda."))


def _bound_inside(node: cst.CSTNode) -> set[int]:
    """ids of Name nodes that are not reads: attribute names, keyword names, names
    bound by lambdas and comprehensions (and their reads inside them)."""
    skip: set[int] = set()
    for child in all_nodes(node):
        if isinstance(child, cst.Attribute):
            skip.add(id(child.attr))
        elif isinstance(child, cst.Arg) and child.keyword is not None:
            skip.add(id(child.keyword))
        elif isinstance(child, (cst.Lambda, cst.ListComp, cst.SetComp, cst.DictComp, cst.GeneratorExp)):
            local = set()
            if isinstance(child, cst.Lambda):
                local = {p.name.value for p in child.params.params}
            else:
                comp = child.for_in
                while comp is not None:
                    local |= {n.value for n in all_nodes(comp.target) if isinstance(n, cst.Name)}
                    comp = comp.inner_for_in
            for inner in all_nodes(child):
                if isinstance(inner, cst.Name) and inner.value in local:
                    skip.add(id(inner))
        elif isinstance(child, cst.Param):
            skip.add(id(child.name))
    return skip


def free_names(node: cst.CSTNode, self_name: str | None = None) -> set[str]:
    """Names read as variables in `node`, and `self.x` paths read on the instance."""
    skip = _bound_inside(node)
    names = set()
    for child in all_nodes(node):
        if isinstance(child, cst.Name) and id(child) not in skip:
            names.add(child.value)
        elif self_name and isinstance(child, cst.Attribute) and isinstance(child.value, cst.Name) and child.value.value == self_name:
            names.add(f"{self_name}.{child.attr.value}")
    return names - {"True", "False", "None"}


def target_names(target: cst.BaseExpression, self_name: str | None = None) -> set[str]:
    """What an assignment target binds: `a`, `a, (b, c)`, `*rest`, `self.x`."""
    if isinstance(target, cst.Name):
        return {target.value}
    if isinstance(target, (cst.Tuple, cst.List)):
        names = set()
        for element in target.elements:
            names |= target_names(element.value, self_name)
        return names
    if isinstance(target, cst.StarredElement):
        return target_names(target.value, self_name)
    if self_name and isinstance(target, cst.Attribute) and isinstance(target.value, cst.Name) and target.value.value == self_name:
        return {f"{self_name}.{target.attr.value}"}
    return set()


def root_name(node: cst.BaseExpression, self_name: str | None = None) -> str | None:
    """The variable a subscript, attribute or method chain starts from (`self.x` kept whole)."""
    current = node
    while True:
        if self_name and isinstance(current, cst.Attribute) and isinstance(current.value, cst.Name) and current.value.value == self_name:
            return f"{self_name}.{current.attr.value}"
        if isinstance(current, cst.Name):
            return current.value
        if isinstance(current, (cst.Attribute, cst.Subscript)):
            current = current.value
        elif isinstance(current, cst.Call):
            current = current.func
        else:
            return None


def defined_names(statement: cst.CSTNode, self_name: str | None = None) -> set[str]:
    """Names (and `self.x` paths) a small statement binds or changes in place."""
    if isinstance(statement, cst.Assign):
        names = set()
        for target in statement.targets:
            names |= target_names(target.target, self_name)
            if isinstance(target.target, (cst.Subscript, cst.Attribute)) and not target_names(target.target, self_name):
                root = root_name(target.target, self_name)
                if root:
                    names.add(root)
        return names
    if isinstance(statement, (cst.AnnAssign, cst.AugAssign)):
        names = target_names(statement.target, self_name)
        if not names:
            root = root_name(statement.target, self_name)
            names = {root} if root else set()
        return names
    if isinstance(statement, cst.Expr) and isinstance(statement.value, cst.Call):
        call = statement.value
        if isinstance(call.func, cst.Attribute):
            method = call.func.attr.value
            if method in REGISTRATIONS and self_name and call.args and isinstance(call.args[0].value, cst.SimpleString):
                return {f"{self_name}.{call.args[0].value.evaluated_value}"}
            if method.endswith("_") or method in MUTATING_METHODS:
                root = root_name(call.func.value, self_name)
                return {root} if root else set()
        out = next((a for a in call.args if a.keyword is not None and a.keyword.value == "out"), None)
        if out is not None:
            root = root_name(out.value, self_name)
            return {root} if root else set()
    return set()


def callee_name(call: cst.Call, imports: ImportMap) -> str | None:
    name = dotted_name(call.func)
    return imports.qualify_dotted(name) if name else None


def unrunnable_calls(node: cst.CSTNode, imports: ImportMap, self_name: str | None, skip: set[int]) -> list[cst.Call]:
    """The outermost calls in `node` a replay cannot run: helpers of the user's code,
    other libraries (`torchmetrics.*`), methods of `self`. `skip`: ids of calls the
    replay maps itself (`.cuda()`, `torch.cuda.*`, `torch.device(...)`)."""
    found: list[cst.Call] = []
    inside: set[int] = set()
    for child in all_nodes(node):
        if id(child) in inside:
            continue
        if not isinstance(child, cst.Call) or id(child) in skip:
            continue
        if not runnable_call(child, imports, self_name):
            found.append(child)
            inside |= {id(n) for n in all_nodes(child)}
    return found


def _replayable(qualified: str | None) -> bool:
    """torch or NumPy, but not the parts a replay may not reach
    (`torch.utils.data.DataLoader`, `np.memmap`, `np.lib.format.open_memmap`)."""
    from .sandbox import DENIED_ATTRIBUTES

    return is_replay_library_name(qualified) and not any(part in DENIED_ATTRIBUTES or part.startswith("_") for part in qualified.split(".")[1:])


def runnable_call(call: cst.Call, imports: ImportMap, self_name: str | None) -> bool:
    func = call.func
    name = dotted_name(func)
    if isinstance(func, cst.Name):
        qualified = imports.qualify_name(func.value)
        if is_replay_library_name(qualified):
            return _replayable(qualified)
        if func.value in imports.names:
            return False  # imported from another library
        return qualified is not None and qualified.startswith("builtins.") and func.value in SAFE_BUILTINS
    if isinstance(func, cst.Attribute):
        if name is not None:
            head = name.split(".")[0]
            if self_name and head == self_name and name.count(".") == 1:
                return func.attr.value in REGISTRATIONS  # other methods of the class are not replayed
            qualified = imports.qualify_dotted(name)
            if head in imports.names:
                return _replayable(qualified)
            if qualified is not None and qualified.startswith("builtins."):
                return False  # `print.__self__`-like reads of builtins: never
        if isinstance(func.value, cst.Call) and isinstance(func.value.func, cst.Name) and func.value.func.value == "super":
            return False
        return True  # a method of a value: the child has the value
    return False
