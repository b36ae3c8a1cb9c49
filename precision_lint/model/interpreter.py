"""Abstract interpretation of statements: bindings flow through assignments,
branches, loops, `with` and `try`; accumulations are recognised where they happen."""
from __future__ import annotations

from dataclasses import replace

import libcst as cst

from .. import speedups
from .accumulators import Effect, Fate
from .autocast import region_of
from .containers import element_of
from .dtypes import CONVERSION_METHODS
from .expressions import Env, ExpressionEvaluator, find_arg, public_attribute, same_place, target_key
from .reads import exposed_reads, loop_reads, root_name
from .syntax import item_key
from .values import UNKNOWN, Kind, Value, join
from .walk import walk

_ADD_OPS = (cst.AddAssign, cst.SubtractAssign)


def join_env(a: Env, b: Env) -> Env:
    merged = dict(a)
    for key, value in b.items():
        known = merged.get(key)
        if known is not value:  # most names are bound to the same value on both paths
            merged[key] = value if known is None else join(known, value)
    return merged


class ScopeInterpreter(ExpressionEvaluator):
    """Runs one function body (or the module body) over abstract values."""

    # Loops run twice: the second pass sees what the first bound, which is
    # enough for accumulators (they only ever widen).
    LOOP_PASSES = 2

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.loop_depth = 0
        self.returned: Value | None = None  # what the body returns (joined), None if it never does
        self.loop_reads: dict[int, frozenset[str]] = {}  # by id() of the loop; a model's interpreters share it
        self.loop_exposed: dict[int, frozenset[str]] = {}  # the same, read before a pass binds them

    def run(self, body: cst.BaseSuite | list[cst.BaseStatement] | tuple, env: Env) -> Env:
        return self.exec_block(_statements(body), env)

    def exec_block(self, statements, env: Env) -> Env:
        for statement in statements:
            env = self.exec_statement(statement, env)
        return env

    def exec_statement(self, statement: cst.CSTNode, env: Env) -> Env:
        if type(statement) is cst.SimpleStatementLine:
            for small in statement.body:
                self.exec_small(small, env)
            return env
        if type(statement) is cst.If:
            self.eval(statement.test, env)
            self._tested_alone(statement.test, env)
            taken = self.run(statement.body, dict(env))
            orelse = statement.orelse
            if orelse is None:
                other = env
            elif type(orelse) is cst.If:
                other = self.exec_statement(orelse, dict(env))
            else:
                other = self.run(orelse.body, dict(env))
            return join_env(taken, other)
        if type(statement) in (cst.For, cst.While):
            return self._loop(statement, env)
        if type(statement) is cst.With:
            regions = []
            for item in statement.items:
                value = self.eval(item.item, env)
                if type(item.item) is cst.Call:
                    region = region_of(item.item, self.qualified_name(item.item.func, env), self._dtype_of_node)
                    if region is not None:
                        regions.append(region)
                if item.asname is not None:
                    self.bind(item.asname.name, UNKNOWN, env, item)
                    self.consume(value, item, Effect.ESCAPES, "used as a context manager")
            self.autocast_regions.extend(regions)
            try:
                return self.run(statement.body, env)
            finally:
                del self.autocast_regions[len(self.autocast_regions) - len(regions) :]
        if type(statement) is cst.Try or isinstance(statement, getattr(cst, "TryStar", ())):
            after_body = self.run(statement.body, dict(env))
            merged = join_env(env, after_body)
            for handler in statement.handlers:
                merged = join_env(merged, self.run(handler.body, dict(merged)))
            if statement.orelse is not None:
                merged = join_env(merged, self.run(statement.orelse.body, dict(after_body)))
            if statement.finalbody is not None:
                merged = self.run(statement.finalbody.body, merged)
            return merged
        if type(statement) is cst.Match:
            self.eval(statement.subject, env)
            merged = env
            for case in statement.cases:
                merged = join_env(merged, self.run(case.body, dict(env)))
            return merged
        if type(statement) in (cst.FunctionDef, cst.ClassDef):
            self._closure_captures(statement, env)
            env[statement.name.value] = UNKNOWN
            return env
        return env

    def _loop(self, statement: cst.For | cst.While, env: Env) -> Env:
        item = UNKNOWN
        if type(statement) is cst.For:
            iterated = self.eval(statement.iter, env)
            self.consume(iterated, statement.iter, Effect.SAFE, "iterated over")
            item = element_of(iterated).without_origins()
        current = env
        self.loop_depth += 1
        self.loop_stack.append(id(statement))
        try:
            for number in range(self.LOOP_PASSES):
                if type(statement) is cst.For:
                    current = dict(current)
                    self.bind(statement.target, item, current, statement)
                else:
                    self.eval(statement.test, current)
                started, changes = current, self.log.changes
                current = join_env(started, self.run(statement.body, dict(started)))
                # the next pass would see what this one saw, and record the same, unless
                # this one changed a binding it reads first or a creation's facts (a
                # `scatter_add_` of ones makes a tally of the buffer a rebinding reuses)
                if number == 0 and speedups.enabled("loops") and self.log.changes == changes:
                    if not self._reads_changed(statement, started, current):
                        break
        finally:
            self.loop_stack.pop()
            self.loop_depth -= 1
        if statement.orelse is not None:
            current = self.run(statement.orelse.body, current)
        return current

    def _reads_changed(self, loop: cst.For | cst.While, before: Env, after: Env) -> bool:
        """Whether the next pass would read a binding this one changed (or made):
        one the loop reads before a pass binds it (reads.py)."""
        changed = [key for key, value in after.items() if before.get(key) is not value]
        if not changed:
            return False
        if id(loop) not in self.loop_reads:
            loop_reads(loop, self.loop_reads)
        reads = self.loop_reads[id(loop)]
        read = {root_name(key, self.self_name) for key in changed} & reads
        if not read:
            return False
        if self.self_name in read:  # `self.x`: rebinding the receiver would not drop it
            return True
        exposed = self.loop_exposed.get(id(loop))
        if exposed is None:  # only where a pass changed what the loop reads somewhere
            exposed = self.loop_exposed[id(loop)] = exposed_reads(loop)
        return not read.isdisjoint(exposed)

    def _tested_alone(self, test: cst.BaseExpression, env: Env) -> None:
        """`if lo == hi:` takes the truth of the comparison, which a tensor has only
        with one element: a tensor compared there has one (a Python value is not a
        tensor at all). Only what the test always evaluates counts: the left side of an
        `and` / `or`, what `not` negates."""
        while True:
            if type(test) is cst.UnaryOperation and type(test.operator) is cst.Not:
                test = test.expression
            elif type(test) is cst.BooleanOperation:
                test = test.left
            else:
                break
        if type(test) is not cst.Comparison:
            return
        if any(type(c.operator) in (cst.Is, cst.IsNot, cst.In, cst.NotIn) for c in test.comparisons):
            return
        for operand in [test.left] + [c.comparator for c in test.comparisons]:
            key = target_key(operand, self.self_name)
            value = self.lookup(key, env) if key is not None else None
            if value is not None and value.kind in (Kind.TENSOR, Kind.UNKNOWN) and key in env:
                env[key] = replace(value, size=1)

    def _closure_captures(self, definition: cst.CSTNode, env: Env) -> None:
        """A nested function that reads an accumulator makes it escape our view."""
        tracked = {key: value for key, value in env.items() if value.origins}
        if not tracked:  # nothing it could capture: the definition is not walked
            return
        for name in _names_in(definition):
            value = tracked.get(name.value)
            if value is not None:
                self.consume(value, name, Effect.ESCAPES, "captured by a nested function")

    # -- simple statements -----------------------------------------------------
    def exec_small(self, small: cst.BaseSmallStatement, env: Env) -> None:
        if type(small) is cst.Assign:
            self._assign(small, env)
        elif type(small) is cst.AnnAssign:
            if small.value is not None:
                self._assign_one(small, small.target, small.value, env)
        elif type(small) is cst.AugAssign:
            self._augmented(small, env)
        elif type(small) is cst.Expr:
            self.eval(small.value, env)
        elif type(small) is cst.Return:
            returned = Value(Kind.NONE) if small.value is None else self.eval(small.value, env)
            self.consume(returned, small, Effect.ESCAPES, "returned")
            self.returned = returned if self.returned is None else join(self.returned, returned)
        else:
            self._opaque(small, env)

    def _assign(self, node: cst.Assign, env: Env) -> None:
        if len(node.targets) == 1:
            self._assign_one(node, node.targets[0].target, node.value, env)
            return
        value = self.eval(node.value, env)
        for target in node.targets:
            self.bind(target.target, value, env, node)

    def _assign_one(self, statement: cst.CSTNode, target: cst.BaseExpression, value_node: cst.BaseExpression, env: Env) -> None:
        pattern = self._accumulation_pattern(target, value_node, env)
        if pattern is None:
            value = self.float_literal_creation(value_node) or self.eval(value_node, env)
            self._rebinding(statement, target, value_node, env)
            self.bind(target, value, env, statement)
            return
        addend_node, subtract = pattern
        current = self.eval(target, env)
        addend = self.eval(addend_node, env)
        result = self.accumulate(statement, current, addend_node, addend, in_place=False, subtract=subtract)
        self.values[id(value_node)] = result
        if not self._is_element(target):
            self.bind(target, result, env, statement, accumulated=True)

    def _accumulation_pattern(self, target, value, env: Env) -> tuple[cst.BaseExpression, bool] | None:
        """`t = t + e`, `t = e + t`, `t = t - e`, `t = t.add(e)`, `t = torch.add(t, e)`:
        (the addend e, whether it is subtracted)."""
        if type(value) is cst.BinaryOperation and type(value.operator) in (cst.Add, cst.Subtract):
            subtract = type(value.operator) is cst.Subtract
            if same_place(value.left, target):
                return value.right, subtract
            if not subtract and same_place(value.right, target):
                return value.left, False
            return None
        if type(value) is not cst.Call or not value.args:
            return None
        func = value.func
        if type(func) is cst.Attribute and func.attr.value in ("add", "sub") and same_place(func.value, target):
            if self.qualified_name(func, env) is None and value.args[0].keyword is None:
                return value.args[0].value, func.attr.value == "sub"
        qualified = self.qualified_name(func, env)
        if qualified in ("torch.add", "torch.sub"):
            first, second = find_arg(value, "input", 0), find_arg(value, "other", 1)
            if first is not None and second is not None and find_arg(value, "out") is None:
                if same_place(first.value, target):
                    return second.value, qualified == "torch.sub"
                if qualified == "torch.add" and same_place(second.value, target):
                    return first.value, False
        return None

    def _augmented(self, node: cst.AugAssign, env: Env) -> None:
        current = self.eval(node.target, env)
        operand = self.eval(node.value, env)
        if isinstance(node.operator, _ADD_OPS):
            # `+=` on a tensor (or on what was created as one) adds in place
            made_as_tensor = bool(current.origins) and all(c.dtype is not None for c in current.origins)
            in_place = current.is_tensor or self._is_element(node.target) or (current.kind is Kind.UNKNOWN and made_as_tensor)
            result = self.accumulate(
                node, current, node.value, operand, in_place=in_place,
                subtract=type(node.operator) is cst.SubtractAssign,
            )
        else:
            self._scale_in_place(node, current, operand)
            result = self.binary(node, _binary_operator(node.operator), current, operand)
            if current.is_tensor:
                result = Value.tensor(current.dtype, current.zero_dim)
            result = result.with_origins(current.origins)
        self.values[id(node)] = result
        if not self._is_element(node.target):
            self.bind(node.target, result, env, node, accumulated=True)

    def _dtype_of_node(self, node: cst.BaseExpression):
        value = self.values.get(id(node))
        return value.dtype if value is not None and value.kind is Kind.DTYPE else None

    def _is_element(self, target: cst.BaseExpression) -> bool:
        """`acc[i]`: an element of a tensor, not a place of its own like `state["step"]`."""
        return type(target) is cst.Subscript and target_key(target, self.self_name) is None

    def _rebinding(self, statement: cst.CSTNode, target: cst.BaseExpression, value: cst.BaseExpression, env: Env) -> None:
        """`acc = acc * 0.5 + acc * 0.5`: rebinding an accumulator through float
        arithmetic makes an int64 accumulator float again, inside a loop (or on state
        that every call updates), so the int64 fix would not hold."""
        key = target_key(target, self.self_name)
        current = self.lookup(key, env) if key is not None else UNKNOWN
        if not current.origins or not (self.loop_depth or key.startswith("self.")):
            return
        if not any(same_place(node, target) for node in walk(value)):
            return
        mixed = _mixes_floats(value, target, self.values)
        if mixed is True:
            self.consume(current, statement, Effect.BREAKS, "rebound through float arithmetic, which makes an int64 accumulator float again")
        elif mixed is None:
            self.consume(current, statement, Effect.ESCAPES, "rebound through arithmetic with a value of unknown type")

    def _scale_in_place(self, node: cst.AugAssign, current: Value, operand: Value) -> None:
        operator = node.operator
        if isinstance(operator, (cst.DivideAssign,)):
            effect, reason = Effect.BREAKS, "divided in place (/=), which fails on int64"
        elif type(operator) is cst.MultiplyAssign:
            if operand.is_integral:
                effect, reason = Effect.SAFE, "multiplied in place by a whole number"
            elif operand.is_floating:
                effect, reason = Effect.BREAKS, "multiplied in place by a float, which fails on int64"
            else:
                effect, reason = Effect.ESCAPES, "multiplied in place by a value of unknown type"
        elif type(operator) is cst.FloorDivideAssign:
            effect, reason = Effect.SAFE, "floor-divided in place"
        else:
            effect, reason = Effect.ESCAPES, "updated in place by an operator we do not model"
        self.consume(current, node, effect, reason)

    # -- binding -----------------------------------------------------------------
    def bind(
        self,
        target: cst.BaseExpression,
        value: Value,
        env: Env,
        statement: cst.CSTNode,
        accumulated: bool = False,
    ) -> None:
        key = target_key(target, self.self_name)
        if key is not None:
            if key.startswith("self.") and value.origins and public_attribute(key) and not accumulated:
                self.consume(value, target, Effect.ESCAPES, f"stored on public attribute {key}")
            elif key.startswith("self.") and value.tallies and not accumulated:
                self.consume(value, target, Effect.SAFE, f"stored on {key}", Fate.ESCAPES)  # kept by the object
            self._bind_place(key, value, env, accumulated)
            return
        if type(target) in (cst.Tuple, cst.List):
            parts = _unpacked(value, len(target.elements))
            if parts is None or any(type(e) is cst.StarredElement for e in target.elements):
                parts = [UNKNOWN] * len(target.elements)
                self.consume(value, target, Effect.ESCAPES, "unpacked")
            for element, part in zip(target.elements, parts):
                self.bind(element.value, part, env, statement)
            return
        if type(target) is cst.Subscript:
            base = self.eval(target.value, env)
            for element in target.slice:
                if type(element.slice) is cst.Index:
                    self.eval(element.slice.value, env)
            if base.origins:
                if value.is_integral:
                    effect, reason = Effect.SAFE, "given a whole-number element"
                elif value.is_floating:
                    effect, reason = Effect.BREAKS, "given a float element, which int64 truncates"
                else:
                    effect, reason = Effect.ESCAPES, "given an element of unknown type"
                self.consume(base, target, effect, reason)
            self.consume(value, target, Effect.ESCAPES, "stored in a container")
            return
        if type(target) is cst.Attribute:
            self.eval(target.value, env)
            self.consume(value, target, Effect.ESCAPES, "stored on an object's attribute")
            return
        if type(target) is cst.StarredElement:
            self.bind(target.value, UNKNOWN, env, statement)

    def _bind_place(self, key: str, value: Value, env: Env, accumulated: bool) -> None:
        """Bind `key`; a dict's string keys become places of their own
        (`state = {"step": t}` binds `state['step']`), and rebinding drops old ones."""
        if not accumulated and "\n" + key + "[" in "\n" + "\n".join(env):  # one scan, in C
            items = key + "["
            for stale in [k for k in env if k.startswith(items)]:
                del env[stale]
        env[key] = self.on_bind(key, value, accumulated)
        if value.kind is Kind.DICT:
            for name, item in value.items:
                self._bind_place(item_key(key, name), item, env, accumulated)


def _unpacked(value: Value, count: int) -> list[Value] | None:
    """The values `a, b = value` gives, or None when they are not known."""
    if value.kind is Kind.TUPLE and len(value.elements) == count:
        return list(value.elements)
    if value.kind is Kind.LIST:
        return [value.element] * count
    return None


def _mixes_floats(value: cst.BaseExpression, target: cst.BaseExpression, values: dict[int, Value]) -> bool | None:
    """Whether an arithmetic expression that reads `target` also brings in a float: a
    float literal, a true division, or an operand known to be floating other than the
    accumulator. None: an operand of unknown type might."""
    if type(value) is cst.BinaryOperation:
        if type(value.operator) is cst.Divide:
            return True
        sides = [_mixes_floats(side, target, values) for side in (value.left, value.right)]
        return True if True in sides else (None if None in sides else False)
    if type(value) is cst.UnaryOperation:
        return _mixes_floats(value.expression, target, values)
    if type(value) is cst.Float:
        return True
    if type(value) is cst.Call and type(value.func) is cst.Attribute and same_place(value.func.value, target):
        converted = CONVERSION_METHODS.get(value.func.attr.value)
        return converted is not None and converted.is_floating  # `acc = acc.float()`
    if same_place(value, target) or any(same_place(inner, target) for inner in walk(value)):
        return False  # the accumulator itself, or something made from it
    seen = values.get(id(value))
    if seen is not None and seen.is_floating and not seen.count:
        return True
    return False if seen is not None and (seen.is_integral or seen.kind is Kind.NONE) else None


def _binary_operator(operator: cst.BaseAugOp) -> cst.BaseBinaryOp:
    name = type(operator).__name__.removesuffix("Assign")
    return getattr(cst, name)()


def _statements(body) -> list:
    if type(body) is cst.IndentedBlock:
        return list(body.body)
    if type(body) is cst.SimpleStatementSuite:
        return [cst.SimpleStatementLine(body=body.body)]
    return list(body)


def _names_in(node: cst.CSTNode) -> list[cst.Name]:
    return [child for child in walk(node) if type(child) is cst.Name]
