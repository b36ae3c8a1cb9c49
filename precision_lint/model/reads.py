"""Which names a statement may read. A loop's second pass (interpreter.py) can only
differ from its first through the bindings the first changed, and only where the
loop reads them: a name that is only ever bound there (`out = model(x)`) is not read."""
from __future__ import annotations

import libcst as cst

from .walk import code_children


def loop_reads(statement: cst.CSTNode, into: dict[int, frozenset[str]]) -> None:
    """What each loop in `statement` (itself too) may read, by id() of the loop, in
    one walk: every name but those only bound (targets of `=`, `for`, `with ... as`,
    `:=` and comprehensions) and attribute names (`x.attr`). The rest over-approximates
    the reads: keyword names, parameters and the like count."""
    names: list[str] = []
    not_read: set[int] = set()
    pending: list = [statement]
    while pending:
        node = pending.pop()
        if type(node) is tuple:  # the end of a loop: all of it walked
            loop, first = node
            into[id(loop)] = frozenset(names[first:])
            continue
        kind = type(node)
        if kind is cst.Name:
            if id(node) not in not_read:
                names.append(node.value)
            continue
        if kind is cst.Attribute:
            not_read.add(id(node.attr))
        elif kind is cst.Assign:
            for target in node.targets:
                _bound(target.target, not_read)
        elif kind in (cst.AnnAssign, cst.For, cst.CompFor, cst.NamedExpr):
            _bound(node.target, not_read)
        elif kind is cst.WithItem and node.asname is not None:
            _bound(node.asname.name, not_read)
        if kind is cst.For or kind is cst.While:
            pending.append((node, len(names)))
        children = code_children(node)
        children.reverse()
        pending.extend(children)


def _bound(target: cst.BaseExpression, not_read: set[int]) -> None:
    """Mark the names `target` binds (`a`, `a, *b`); `x.a` and `x[i]` read `x`."""
    kind = type(target)
    if kind is cst.Name:
        not_read.add(id(target))
    elif kind in (cst.Tuple, cst.List):
        for element in target.elements:
            _bound(element.value, not_read)
    elif kind is cst.StarredElement:
        _bound(target.value, not_read)


def root_name(key: str, self_name: str | None) -> str:
    """The name a binding's key starts from: `acc`, `state['step']` -> `state`; a key
    on the receiver (`self.x`) starts from the method's first parameter."""
    if key.startswith("self.") and self_name is not None:
        return self_name
    return key.split(".", 1)[0].split("[", 1)[0]
