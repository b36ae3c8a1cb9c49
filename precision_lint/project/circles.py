"""An order of modules with each after the modules it imports, where imports go round
in circles (project/order.py reads the imports).

A plain depth-first order breaks a circle wherever the walk happens to enter it, and
one module that dozens import may then come after all of them (Megatron-LM's
`core/utils.py`, in a circle of 127 modules: 83 of its importers were placed before
it, each checked without its summary and checked again). The circles are found as
strongly connected components (Tarjan), which come out imports first; inside each,
the modules that more import than they import go first (Eades, Lin and Smyth's
greedy order), so few modules come before what they import."""
from __future__ import annotations


def imports_first(imports: list[list[int]], starts: list[int]) -> list[int]:
    """Every node, each after the nodes it imports (`imports[i]`) but where they
    import each other; walked from `starts` in turn, so an early start's imports
    come early."""
    number = [-1] * len(imports)  # the order the walk meets the nodes in
    low = [0] * len(imports)  # the earliest node still open that a node reaches
    open_nodes: list[int] = []
    is_open = [False] * len(imports)
    order: list[int] = []
    met = 0
    for start in starts:
        if number[start] >= 0:
            continue
        number[start] = low[start] = met
        met += 1
        open_nodes.append(start)
        is_open[start] = True
        walk = [(start, iter(imports[start]))]
        while walk:
            node, pending = walk[-1]
            for other in pending:
                if number[other] < 0:
                    number[other] = low[other] = met
                    met += 1
                    open_nodes.append(other)
                    is_open[other] = True
                    walk.append((other, iter(imports[other])))
                    break
                if is_open[other]:
                    low[node] = min(low[node], number[other])
            else:
                walk.pop()
                if walk:
                    parent = walk[-1][0]
                    low[parent] = min(low[parent], low[node])
                if low[node] == number[node]:  # `node` closes a component
                    members: list[int] = []
                    while not members or members[-1] != node:
                        members.append(open_nodes.pop())
                        is_open[members[-1]] = False
                    order.extend(members if len(members) == 1 else _break_circle(members[::-1], imports))
    return order


def _break_circle(members: list[int], imports: list[list[int]]) -> list[int]:
    """The members of one component, few of them before a member they import: a
    member importing none of the rest goes next at the front, one none of the rest
    import next at the back, and else the member most imported and least importing."""
    inside = set(members)
    imports_left = {m: {j for j in imports[m] if j in inside and j != m} for m in members}
    importers_left: dict[int, set[int]] = {m: set() for m in members}
    for m in members:
        for j in imports_left[m]:
            importers_left[j].add(m)
    rest = dict.fromkeys(members)  # in the walk's order: ties go to the earlier
    front: list[int] = []
    back: list[int] = []

    def take(member: int, into: list[int]) -> None:
        into.append(member)
        del rest[member]
        for importer in importers_left.pop(member):
            imports_left[importer].discard(member)
        for imported in imports_left.pop(member):
            importers_left[imported].discard(member)

    while rest:
        ready = [m for m in rest if not imports_left[m]]
        last = [m for m in rest if not importers_left[m]]
        if ready or last:
            for m in ready:
                take(m, front)
            for m in last:
                if m in rest:
                    take(m, back)
        else:
            take(max(rest, key=lambda m: len(importers_left[m]) - len(imports_left[m])), front)
    return front + back[::-1]
