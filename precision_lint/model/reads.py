"""Which names a statement may read. A loop's second pass (interpreter.py) can only
differ from its first through the bindings the first changed, and only where the
loop reads them: a name that is only ever bound there (`out = model(x)`) is not read,
and one that each pass binds before it reads it (`out = model(x); total += out`) is
read only as that pass bound it."""
from __future__ import annotations

import libcst as cst

from .walk import code_children, walk


def loop_reads(statement: cst.CSTNode, into: dict[int, frozenset[str]]) -> None:
    """What each loop in `statement` (itself too) may read, by id() of the loop, in
    one walk: every name but those only bound (targets of `=`, `for`, `with ... as`,
    `:=` and comprehensions, unless the value names them: _mark_bound) and attribute
    names (`x.attr`). The rest over-approximates the reads: keyword names, parameters
    and the like count."""
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
        elif kind is cst.For or kind is cst.CompFor:
            _bound(node.target, not_read)
        else:
            _mark_bound(node, not_read)
        if kind is cst.For or kind is cst.While:
            pending.append((node, len(names)))
        children = code_children(node)
        children.reverse()
        pending.extend(children)


def exposed_reads(loop: cst.For | cst.While) -> frozenset[str]:
    """The names a pass of `loop` may read before it binds them itself: the only ones
    through which it reads what the pass before left. Within a pass, as the model
    runs it, a name is bound for what follows in the same block by a plain assignment
    (`a = ...`, `a, b = ...`, `a: T = ...`), whose value is read first, in a `with`
    block, or in both branches of an `if ... else`; for the body of a `for` or a
    comprehension, by its target. A rebinding drops the name's string-keyed items too
    (`a['k']`, interpreter.py). A binding in one branch, a `try` or an inner loop binds
    nothing after it: the model joins it with the old value."""
    exposed: set[str] = set()
    if type(loop) is cst.While:
        _reads(loop.test, frozenset(), exposed)
        _suite(loop.body, frozenset(), exposed)
    else:
        _suite(loop.body, frozenset(_target(loop.target, frozenset(), exposed)), exposed)
    return frozenset(exposed)


def _suite(body: cst.BaseSuite, bound: frozenset[str], exposed: set[str]) -> None:
    for part in _parts(body):
        _reads(part, bound, exposed)
        assigned = _assigned_names(part)
        if assigned:
            bound = bound | frozenset(assigned)


def _parts(body: cst.BaseSuite) -> list[cst.CSTNode]:
    """A block's statements in order, each line's small statements one by one."""
    if type(body) is cst.SimpleStatementSuite:
        return list(body.body)
    parts: list[cst.CSTNode] = []
    for statement in body.body:
        parts.extend(statement.body if type(statement) is cst.SimpleStatementLine else [statement])
    return parts


def _reads(node: cst.CSTNode, bound: frozenset[str], exposed: set[str]) -> None:
    """Add to `exposed` the names `node` may read that are not in `bound`."""
    not_read: set[int] = set()
    pending: list = [node]
    while pending:
        node = pending.pop()
        kind = type(node)
        if kind is cst.Name:
            if id(node) not in not_read and node.value not in bound:
                exposed.add(node.value)
            continue
        if kind is cst.IndentedBlock or kind is cst.SimpleStatementSuite:
            _suite(node, bound, exposed)
            continue
        if kind is cst.For:
            _reads(node.iter, bound, exposed)
            _suite(node.body, bound | frozenset(_target(node.target, bound, exposed)), exposed)
            if node.orelse is not None:
                _suite(node.orelse.body, bound, exposed)
            continue
        if kind in _COMPREHENSIONS:
            _comprehension(node, bound, exposed)
            continue
        if kind is cst.FunctionDef or kind is cst.ClassDef:
            # the model runs neither here, but looks up every name in it (a closure's
            # captures, interpreter.py)
            exposed.update(inner.value for inner in walk(node) if type(inner) is cst.Name and inner.value not in bound)
            continue
        if kind is cst.Call:  # `f(key=...)` names a parameter, and reads no `key`
            not_read.update(id(arg.keyword) for arg in node.args if arg.keyword is not None)
        elif kind is cst.Attribute:
            not_read.add(id(node.attr))
        else:
            _mark_bound(node, not_read)
        children = code_children(node)
        children.reverse()
        pending.extend(children)


_COMPREHENSIONS = (cst.ListComp, cst.SetComp, cst.GeneratorExp, cst.DictComp)


def _comprehension(node: cst.BaseComp, bound: frozenset[str], exposed: set[str]) -> None:
    """Each clause's iterable, then its target bound for the clauses and element after
    it (containers.py runs a comprehension so, in a scope of its own)."""
    clause: cst.CompFor | None = node.for_in
    while clause is not None:
        _reads(clause.iter, bound, exposed)
        bound = bound | frozenset(_target(clause.target, bound, exposed))
        for condition in clause.ifs:
            _reads(condition.test, bound, exposed)
        clause = clause.inner_for_in
    for part in (node.key, node.value) if type(node) is cst.DictComp else (node.elt,):
        _reads(part, bound, exposed)


def _target(target: cst.BaseExpression, bound: frozenset[str], exposed: set[str]) -> list[str]:
    """The plain names a target binds; the rest of it (`x[i]`, `x.a`) is read."""
    names: list[str] = []
    pending = [target]
    while pending:
        node = pending.pop()
        kind = type(node)
        if kind is cst.Name:
            names.append(node.value)
        elif kind in (cst.Tuple, cst.List):
            pending.extend(element.value for element in node.elements)
        elif kind is cst.StarredElement:
            pending.append(node.value)
        else:
            _reads(node, bound, exposed)
    return names


def _assigned_names(part: cst.CSTNode) -> set[str]:
    """The plain names a statement always binds: an assignment's, those its body binds
    for a `with`, and those both branches bind for an `if ... else` (the model joins
    the two, not the old value)."""
    if type(part) is cst.If:
        return _branch_names(part)
    if type(part) is cst.With:  # its body runs where it stands
        return _block_names(part.body)
    if type(part) is cst.Assign:
        targets = [target.target for target in part.targets]
    elif type(part) is cst.AnnAssign and part.value is not None:
        targets = [part.target]
    else:
        return set()
    ignored: set[str] = set()  # what a target reads (`x[i] = ...`) was read before this
    return {name for target in targets for name in _target(target, frozenset(), ignored)}


def _branch_names(statement: cst.If) -> set[str]:
    orelse = statement.orelse
    if orelse is None:
        return set()
    other = _branch_names(orelse) if type(orelse) is cst.If else _block_names(orelse.body)
    return _block_names(statement.body) & other if other else set()


def _block_names(body: cst.BaseSuite) -> set[str]:
    names: set[str] = set()
    for part in _parts(body):
        names |= _assigned_names(part)
    return names


def _mark_bound(node: cst.CSTNode, not_read: set[int]) -> None:
    """Mark the names an assignment, `:=` or `with ... as` binds. A name its value
    mentions in any way, `a = f(a=x)` or `a = b + obj.a` included, stays a read: the
    model looks up the old value of a target its value names (a rebinding through
    float arithmetic, interpreter.py)."""
    kind = type(node)
    if kind is cst.Assign or kind is cst.AnnAssign:
        targets = [target.target for target in node.targets] if kind is cst.Assign else [node.target]
        names = {target.value for target in targets if type(target) is cst.Name}
        if names and node.value is not None:
            mentioned = _mentioned(node.value, names)
            targets = [target for target in targets if not (type(target) is cst.Name and target.value in mentioned)]
        for target in targets:
            _bound(target, not_read)
    elif kind is cst.NamedExpr:
        _bound(node.target, not_read)
    elif kind is cst.WithItem and node.asname is not None:
        _bound(node.asname.name, not_read)


def _mentioned(value: cst.CSTNode, names: set[str]) -> set[str]:
    """Which of `names` appear anywhere in `value` as a name."""
    found: set[str] = set()
    pending = [value]
    while pending:
        node = pending.pop()
        if type(node) is cst.Name:
            if node.value in names:
                found.add(node.value)
        else:
            pending.extend(code_children(node))
    return found


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
