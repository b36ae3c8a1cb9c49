"""When a module's methods run, as far as it shows: the methods that run only while
the module is being built, and the attributes a class converts back to float32
itself. A cheap pass over each class's methods, before they are interpreted."""
from __future__ import annotations

import libcst as cst

from .definitions import ClassInfo, Definitions
from .dtypes import CONVERSION_METHODS, FLOAT32, FLOAT64, dtype_from_qualified_name
from .imports import ImportMap, dotted_name
from .walk import child_statements, code_children

CONSTRUCTORS = frozenset({"__init__"})
# a site of a call that is no method of a class (module code, a nested function, a
# lambda: a hook defined in `__init__` runs later)
_ELSEWHERE = ("", "")


def construction_methods(module: cst.Module, module_name: str, definitions: Definitions) -> frozenset[str]:
    """Qualified names of the methods that run only while an instance is built:
    `__init__`, and private methods (`_name`) every call of which, anywhere in the
    module, is made by such a method through `self`. A method nothing here calls may
    be called from anywhere (a base class, another module), so it is not one."""
    private = {info.name for info in definitions.functions.values() if info.owner is not None and _private(info.name)}
    if not private:
        return frozenset(q for q, info in definitions.functions.items() if info.owner is not None and info.name in CONSTRUCTORS)
    sites: dict[str, set[tuple[str, str]]] = {}  # method name -> (class, method) of its calls
    _collect_sites(module, _ELSEWHERE, None, private, sites, module_name)
    methods = {(info.owner, info.name): q for q, info in definitions.functions.items() if info.owner is not None}
    building = {key for key in methods if key[1] in CONSTRUCTORS}
    changed = True
    while changed:
        changed = False
        for key in methods:
            owner, name = key
            if key in building or name not in private:
                continue
            # a call through `self` in a class reaches this method when the classes
            # are the same or one derives from the other
            reaching = [site for site in sites.get(name, ()) if site == _ELSEWHERE or _related(site[0], owner, definitions)]
            if reaching and all(site in building for site in reaching):
                building.add(key)
                changed = True
    return frozenset(methods[key] for key in building)


def _related(a: str, b: str, definitions: Definitions) -> bool:
    return a == b or b in _ancestors(a, definitions) or a in _ancestors(b, definitions)


def _ancestors(cls: str, definitions: Definitions) -> set[str]:
    found, pending = set(), [cls]
    while pending and len(found) < 32:
        info = definitions.classes.get(pending.pop())
        for base in info.bases if info is not None else ():
            if base not in found:
                found.add(base)
                pending.append(base)
    return found


def _private(name: str) -> bool:
    return name.startswith("_") and not name.startswith("__")


# statements of a class body that hold its methods (an `if` or `try` around a def)
_CLASS_BODY = frozenset({cst.IndentedBlock, cst.SimpleStatementLine, cst.If, cst.Try, cst.With, cst.Else, cst.Finally, cst.ExceptHandler})


def _collect_sites(node: cst.CSTNode, where: tuple[str, str], self_name: str | None, names: set[str], sites, module_name: str) -> None:
    """Calls `x.name(...)` of the given names, with the (qualified class, method) they
    are made in when made through that method's `self`, else `_ELSEWHERE`. (Node
    types are compared with `type(...) is`: isinstance on libcst's classes is slow.)"""
    stack: list = [(node, where, self_name, module_name)]
    while stack:
        current, where, self_name, owner = stack.pop()
        kind = type(current)
        if kind is cst.ClassDef:
            inner_owner = f"{owner}.{current.name.value}" if isinstance(owner, str) else None
            stack.extend((child, _ELSEWHERE, None, ("class", inner_owner)) for child in code_children(current))
            continue
        if kind is cst.FunctionDef:
            # a method: a def directly in a class body (owner is ("class", name))
            params = list(current.params.posonly_params) + list(current.params.params)
            if type(owner) is tuple and owner[1] is not None and params:
                inner_where, inner_self = (owner[1], current.name.value), params[0].name.value
            else:
                inner_where, inner_self = _ELSEWHERE, None
            stack.extend((child, inner_where, inner_self, None) for child in code_children(current))
            continue
        if kind is cst.Lambda:
            stack.extend((child, _ELSEWHERE, None, None) for child in code_children(current))
            continue
        if type(owner) is tuple and kind not in _CLASS_BODY:
            owner = None  # an expression in a class body: nested defs there are no methods
        if kind is cst.Call and type(current.func) is cst.Attribute and current.func.attr.value in names:
            receiver = current.func.value
            through_self = type(receiver) is cst.Name and self_name is not None and receiver.value == self_name
            sites.setdefault(current.func.attr.value, set()).add(where if through_self else _ELSEWHERE)
        stack.extend((child, where, self_name, owner) for child in code_children(current))


def restored_attributes(info: ClassInfo, imports: ImportMap) -> frozenset[str]:
    """`self.x` that a method of the class converts back to float32 (or float64)
    itself: `self.inv_freq = self.inv_freq.to(torch.float)`, `self.x = self.x.float()`.
    The class undoes a module-wide cast of it, so where it reads it, it is float32."""
    found = set()
    for method in info.methods.values():
        if not method.receives_self or not method.params:
            continue
        self_name = method.params[0]
        pending = list(child_statements(method.node))
        while pending:
            statement = pending.pop()
            if type(statement) in (cst.FunctionDef, cst.ClassDef):
                continue
            if type(statement) is not cst.SimpleStatementLine:
                pending.extend(child_statements(statement))
                continue
            for small in statement.body:
                if type(small) is cst.Assign and len(small.targets) == 1:
                    key = _self_attribute(small.targets[0].target, self_name)
                    if key is not None and _converts_to_full_float(small.value, key, self_name, imports):
                        found.add(f"self.{key}")
    return frozenset(found)


def _self_attribute(node: cst.BaseExpression, self_name: str) -> str | None:
    if type(node) is cst.Attribute and type(node.value) is cst.Name and node.value.value == self_name:
        return node.attr.value
    return None


def _converts_to_full_float(value: cst.BaseExpression, key: str, self_name: str, imports: ImportMap) -> bool:
    if not (type(value) is cst.Call and type(value.func) is cst.Attribute):
        return False
    if _self_attribute(value.func.value, self_name) != key:
        return False
    method = value.func.attr.value
    if method in CONVERSION_METHODS:
        return CONVERSION_METHODS[method] in (FLOAT32, FLOAT64)
    if method not in ("to", "type"):
        return False
    dtypes = []
    for arg in value.args:
        if arg.keyword is not None and arg.keyword.value != "dtype":
            continue
        dtype = dtype_from_qualified_name(imports.qualify_dotted(dotted_name(arg.value)))
        if dtype is not None:
            dtypes.append(dtype)
    return bool(dtypes) and all(d in (FLOAT32, FLOAT64) for d in dtypes)
