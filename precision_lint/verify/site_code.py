"""The code that watches a site: the start offset after the creation, each add
run once and mirrored on the exact shadow, other changes mirrored in float64, value
sites next to their exact version. Used by replays and by real runs (`--pytest`).
No torch here."""
from __future__ import annotations

import libcst as cst

from .code_helpers import operands
from .sites import NoReplay
from .source_view import Edit, Rewriter, all_nodes


class SiteCode:
    """The instrumentation of site statements (methods of `ReplayBuilder`)."""

    def _register_text(self, small: cst.CSTNode, rewriter: Rewriter) -> str:
        call = self.registration
        value_arg = call.args[1] if len(call.args) > 1 and call.args[1].keyword is None else next(
            (a for a in call.args if a.keyword is not None and a.keyword.value in ("tensor", "default")), None
        )
        if value_arg is None:
            raise NoReplay("the registered state has no value")
        return f"{self.target} = {rewriter.render(value_arg.value)}"

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

    def _chained_lines(self, small: cst.CSTNode, render: Rewriter, line: int) -> list[tuple[str, int, str]]:
        """`count = torch.zeros(g).index_add_(0, idx, ones)`: created and added to in one
        statement. The creation is started first, then the add runs on it."""
        index = self.add_statements[id(small)]
        add = self.site.adds[index]
        created, temp = f"{self.temp}s{self.k}", f"{self.temp}a{index}" if self.temp == "__" else f"{self.temp}a{self.k}_{index}"
        call = self._add_call(add)
        if call is None:
            raise NoReplay("the accumulator is created and added to in one expression the replay cannot split")
        creation = self.site.creation
        as_written = Rewriter(self.source, render.edits + [Edit(*self.source.offsets(creation), created, None, -1), Edit(*self.source.offsets(add.addend), temp, None, -1)]).render(small)
        mirror = Rewriter(self.source, render.edits + [
            Edit(*self.source.extent(call.func.value), self._box(), None, -1), Edit(*self.source.offsets(add.addend), f"{self.hook}.exact({temp})", None, -1),
        ]).render(call)  # fmt: skip
        h, k = self.hook, self.k
        return [
            (f"{created} = {render.render(creation)}", line, "creation"),
            (f"{created} = {h}.start({k}, {created}, {self.owner})", line, "creation"),
            (f"{h}.trace({k}, {created}, {self.owner}, {line}, 'start')", line, "creation"),
            (f"{temp} = {render.render(add.addend)}", line, "add"),
            (as_written, line, "add"),
            (mirror, line, "shadow"),
            (self._trace(line, "add"), line, "shadow"),
        ]

    def _add_call(self, add) -> cst.Call | None:
        """The call that adds (`buf.index_add_(...)`): the addend's argument's call."""
        arg = self.source.parent(add.addend)
        call = self.source.parent(arg) if isinstance(arg, cst.Arg) else None
        return call if isinstance(call, cst.Call) and isinstance(call.func, cst.Attribute) else None

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
            for node in operands(expression, self.imports):
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
