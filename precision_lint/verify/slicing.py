"""Which statements a replay keeps (a backward slice that keeps loops and order),
and what it does with those it cannot run or the allow-list refuses. No torch here."""
from __future__ import annotations

from typing import TYPE_CHECKING

import libcst as cst

from ..model.imports import dotted_name
from ..model.torch_api import REDUCING_COLLECTIVES
from . import sandbox
from .code_helpers import SCOPES, plain_targets, short, user_dunder
from .names import REGISTRATIONS, defined_names, free_names, unrunnable_calls
from .sites import NoReplay
from .source_view import Rewriter, all_nodes
from .usage import ALIAS_METHODS, INDEX_FUNCTIONS, INDEX_METHODS, SIZE_CALLS

if TYPE_CHECKING:
    from .replay_parts import Part


class Slicer:
    """The slice (methods of `ReplayBuilder`)."""

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
            for node in all_nodes(part.scope):
                # `for b in tqdm.tqdm(loader)`: a loop over what the replay cannot run
                # iterates synthesized values of what the loop variable is used as
                if isinstance(node, cst.For) and self._contains_kept(node, part) and not self._inside_nested(node, part.scope):
                    calls = unrunnable_calls(node.iter, self.imports, part.self_name, self.mapped_calls)
                    if calls or sandbox.problems(Rewriter(self.source, self.mapping_edits).render(node.iter)):
                        self.opaque_ids[id(node.iter)] = len(self.opaque_specs)
                        self.opaque_specs.append({"roles": []})
                        self.opaque_loops.append(node)
                        self.left_out.append(f"`{short(self.source.raw(node.iter))}` (a loop over it iterates synthesized values)")
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
                        raise NoReplay(f"`{short(text)}` is refused: {problems[0]}")
                    part.keep.discard(id(small))
                    self.left_out.append(f"`{short(text)}` (refused: {problems[0]})")
                    continue
                if not calls:
                    continue
                names = ", ".join(f"`{short(self.source.raw(c.func))}`" for c in calls)
                if site_statement:
                    part.dropped_calls[id(small)] = calls
                    for call in calls:
                        self._opaque_call(call, part)
                    self.left_out.append(f"the result of {names} in `{short(text)}` (not replayed: synthesized)")
                elif isinstance(small, (cst.Assign, cst.AnnAssign)) and plain_targets(small):
                    part.opaque.add(id(small))
                    self.left_out.append(f"`{short(text)}` (calls {names}); its result is synthesized")
                elif isinstance(small, cst.Return):
                    part.keep.discard(id(small))
                else:
                    part.keep.discard(id(small))
                    self.left_out.append(f"`{short(text)}` (calls {names})")

    def _problems(self, small: cst.CSTNode) -> list[str]:
        if user_dunder(small):
            return ["names starting with `__` are not allowed"]
        rewriter = Rewriter(self.source, self.mapping_edits)
        if small is self.creation_statement and self.registration is not None:
            text = self._register_text(small, rewriter)
        else:
            text = rewriter.render(small)
        return sandbox.problems("def __f():\n    " + text.replace("\n", "\n    ") + "\n", generated=True)

    def _opaque_call(self, call: cst.Call, part: Part) -> None:
        # `torch.bincount(helper(x).flatten(), ...)`: what the result is used as,
        # through the methods that give back the same data
        used = call
        parent = self.source.parent(used)
        while isinstance(parent, cst.Attribute) and parent.value is used and parent.attr.value in ALIAS_METHODS:
            outer_call = self.source.parent(parent)
            if not (isinstance(outer_call, cst.Call) and outer_call.func is parent):
                break
            used, parent = outer_call, self.source.parent(outer_call)
        spec: dict = {"roles": []}
        if any(call is a.addend or (isinstance(a.addend, cst.Call) and a.addend is call) for a in self.site.adds):
            spec = {"roles": ["count"]}
        elif isinstance(parent, cst.Arg):
            outer = self.source.parent(parent)
            last = (dotted_name(outer.func) or (outer.func.attr.value if isinstance(outer.func, cst.Attribute) else "")).rsplit(".", 1)[-1] if isinstance(outer, cst.Call) else ""
            positional = [a for a in outer.args if a.keyword is None] if isinstance(outer, cst.Call) else []
            position = positional.index(parent) if parent in positional else None
            keyword = parent.keyword.value if parent.keyword is not None else None
            if last in SIZE_CALLS:
                spec = {"roles": ["size"]}
            elif (last in INDEX_FUNCTIONS and position == INDEX_FUNCTIONS[last]) or keyword == "index" or (
                isinstance(outer.func, cst.Attribute) and last in INDEX_METHODS and position == INDEX_METHODS[last]
            ):
                spec = {"roles": ["index"]}  # its range: the buffer's size (usage)
        self.opaque_ids[id(call)] = len(self.opaque_specs)
        self.opaque_specs.append(spec)

    # -- usage of inputs ----------------------------------------------------------------

    def _collective(self, small: cst.CSTNode) -> bool:
        if isinstance(small, cst.Expr) and isinstance(small.value, cst.Call):
            qualified = self.imports.qualify_dotted(dotted_name(small.value.func))
            return qualified in REDUCING_COLLECTIVES or qualified == "torch.distributed.broadcast"
        return False
