"""Abstract evaluation of expressions: what value each one has, and how an
accumulator is used when it appears inside one. The torch half of calls lives in
torch_calls, what operations do to values in operations."""
from __future__ import annotations

from dataclasses import replace
from typing import Any, Callable, Sequence

import libcst as cst

from . import torch_api as api
from .accumulators import Add, AccumulatorLog, AddendKind, Effect, Fate, Use
from .dtypes import FLOAT32, DType, dtype_from_qualified_name, holds_counts_exactly
from .imports import ImportMap
from .operations import arithmetic, per_row_mask
from .syntax import find_arg, int_literal, public_attribute, same_place, target_key
from .autocast import AutocastUse, casts_positions
from .containers import ANY_KEY, ContainerEvaluation
from .project_calls import Callees, NoCallees, ProjectCalls
from .runtime_dtype import dtype_of
from .torch_calls import TorchCalls
from .values import UNKNOWN, CallFact, Creation, Kind, Value, join
from .walk import code_children, concrete_types

Env = dict[str, Value]

# qualified names that are never the project's own functions
_NOT_PROJECT = ("torch.", "builtins.", "numpy.", "math.", "logging.")
_EXPRESSIONS = concrete_types(cst.BaseExpression)  # `type(x) in`: isinstance asks the ABC


class ExpressionEvaluator(TorchCalls, ContainerEvaluation, ProjectCalls):
    """Shared state of one scope's interpretation (see interpreter.ScopeInterpreter)."""

    loop_depth = 0  # loops around the expression (the scope interpreter counts them)

    def __init__(
        self,
        imports: ImportMap,
        log: AccumulatorLog,
        creations: dict[int, Creation],
        values: dict[int, Value],
        scope: str,
        self_name: str | None = None,
        global_env: Env | None = None,
        calls: dict[int, CallFact] | None = None,
    ) -> None:
        self.imports = imports
        self.log = log
        self.creations = creations
        self.values = values
        self.calls = {} if calls is None else calls
        self.scope = scope
        self.self_name = self_name
        self.global_env = global_env or {}
        self.yields = False  # a generator: what it returns is not what a call gives
        self.callees: Callees = NoCallees()
        self.owner: str | None = None
        self.in_module = False  # a method of an nn.Module subclass (its input is floating data)
        self.autocast_regions: list[bool] = []  # the `with torch.autocast` regions we are in
        self.autocast_uses: list[AutocastUse] = []  # shared by a model's interpreters
        self.loop_stack: list[int] = []  # id() of the loops around what is evaluated, innermost last
        # asked when a method reads a buffer (computed once per module, and only then):
        # whether the method runs only while the module is built (`__init__`, private
        # helpers only it calls), and the buffers its class converts back to float32
        self.at_construction: Callable[[], bool] = _never
        self.restored: Callable[[], frozenset[str]] = frozenset

    # -- bookkeeping -----------------------------------------------------------
    def consume(self, value: Value, node: cst.CSTNode, effect: Effect, reason: str, fate: Fate | None = None) -> None:
        for creation in value.origins:
            self.log.record_use(creation, Use(node, effect, reason, fate))

    def on_bind(self, key: str, value: Value, accumulated: bool) -> Value:
        """Hook for class analysis, which collects what each `self.x` is bound to."""
        return value

    def creation(self, node: cst.CSTNode, dtype: DType | None, dtype_source: str | None = None, **facts: Any) -> Creation:
        """The tensor made at `node` (one per node, whichever pass makes it first), with
        `facts` (its fields: `scalar=True`) set; `parents` are added to those it has."""
        existing = self.creations.get(id(node))
        if existing is None:
            existing = self.creations[id(node)] = Creation(
                node, dtype, self.scope, dtype_source, loops=tuple(self.loop_stack), **facts
            )
        elif facts:
            if "parents" in facts:
                facts["parents"] = existing.parents | facts["parents"]
            self.mark(existing, **facts)
        return existing

    def mark(self, creation: Creation, **facts: Any) -> None:
        """Set facts of a creation that exists already. A change is counted
        (`log.changes`): a run under way, or done, may have seen it without them
        (semantic.py replays a method's run only where none changed since it began)."""
        for name, value in facts.items():
            if getattr(creation, name) != value:
                setattr(creation, name, value)
                self.log.changes += 1

    def used_under_autocast(self, use: AutocastUse) -> None:
        """Hook: a matmul-like op that takes positions runs under autocast."""
        self.autocast_uses.append(use)

    def outlives_here(self, creation: Creation) -> bool:
        """Whether a tensor lasts longer than one pass through the code here: module
        state, a global, one made by another function (state it keeps, a caller's), or
        one made outside a loop we are in."""
        if creation.module_state or creation.scope != self.scope or creation.scope == "<module>":
            return True
        return any(loop not in creation.loops for loop in self.loop_stack)

    def derived_tally(self, node: cst.CSTNode, value: Value, parents: frozenset[Creation]) -> Value:
        """`value`, made at `node` from the counts of the tallies `parents` (`h1 + h2`,
        `h.tolist()`): a tally of its own, so where it goes is where their counts go."""
        if not parents:
            return value
        creation = self.creation(node, value.dtype if value.is_tensor else None, tally=True, parents=parents)
        return value.with_origins(value.origins | {creation})

    def qualified_name(self, node: cst.BaseExpression, env: Env) -> str | None:
        if type(node) is cst.Name:
            if node.value in env or node.value in self.global_env:
                return None
            return self.imports.qualify_name(node.value)
        if type(node) is cst.Attribute:
            base = self.qualified_name(node.value, env)
            return None if base is None else f"{base}.{node.attr.value}"
        return None

    def lookup(self, key: str, env: Env) -> Value:
        if key in env:
            return env[key]
        return self.global_env.get(key, UNKNOWN)

    # -- evaluation ------------------------------------------------------------
    def eval(self, node: cst.BaseExpression, env: Env) -> Value:
        # one dict lookup by the node's type: isinstance on libcst's ABC-based node
        # classes, tried in a chain, cost the model a third of its time (and this
        # is the model's most frequent call: half a million on megatron/core)
        handler = _HANDLERS.get(type(node))
        value = handler(self, node, env) if handler is not None else self._opaque(node, env)
        self.values[id(node)] = value
        return value

    def _integer(self, node: cst.Integer, env: Env) -> Value:
        try:
            return Value.py_int(number=int(node.value, 0))
        except ValueError:
            return Value.py_int()

    def _float(self, node: cst.Float, env: Env) -> Value:
        try:
            return Value(Kind.PY_FLOAT, number=float(node.value))
        except ValueError:
            return Value(Kind.PY_FLOAT)

    def _binary_operation(self, node: cst.BinaryOperation, env: Env) -> Value:
        left = self.eval(node.left, env)
        right = self.eval(node.right, env)
        return self.binary(node, node.operator, left, right)

    def _if_expression(self, node: cst.IfExp, env: Env) -> Value:
        self.eval(node.test, env)
        return join(self.eval(node.body, env), self.eval(node.orelse, env))

    def _boolean_operation(self, node: cst.BooleanOperation, env: Env) -> Value:
        for side in (node.left, node.right):
            self.consume(self.eval(side, env), side, Effect.SAFE, "tested for truth")
        return UNKNOWN

    def _formatted_string(self, node: cst.FormattedString, env: Env) -> Value:
        for part in node.parts:
            if type(part) is cst.FormattedStringExpression:
                self.consume(self.eval(part.expression, env), part, Effect.SAFE, "formatted")
        return Value(Kind.STR)

    def _string(self, node: cst.BaseString, env: Env) -> Value:
        return Value(Kind.STR)

    def _yield(self, node: cst.Yield, env: Env) -> Value:
        self.yields = True
        if type(node.value) in _EXPRESSIONS:
            self.consume(self.eval(node.value, env), node, Effect.ESCAPES, "yielded")
        return UNKNOWN

    def _await(self, node: cst.Await, env: Env) -> Value:
        self.consume(self.eval(node.expression, env), node, Effect.ESCAPES, "awaited")
        return UNKNOWN

    def _named_expression(self, node: cst.NamedExpr, env: Env) -> Value:
        value = self.eval(node.value, env)
        key = target_key(node.target, self.self_name)
        if key is not None:
            env[key] = value
        return value

    def _opaque(self, node: cst.CSTNode, env: Env) -> Value:
        """Anything we do not model (containers, comprehensions, lambdas): evaluate
        what is inside so counts are still seen, and treat accumulators in it as escaping."""
        for child in code_children(node):
            if type(child) in _EXPRESSIONS:
                self.consume(self.eval(child, env), child, Effect.ESCAPES, "stored in a container or closure")
            else:
                self._opaque(child, env)
        return UNKNOWN

    def float_literal_creation(self, node: cst.BaseExpression) -> Value | None:
        """`total = 0.0`: a Python float that becomes a tensor once a tensor is added."""
        if type(node) is not cst.Float:
            return None
        try:
            whole = float(node.value).is_integer()
        except ValueError:
            return None
        if not whole:
            return None
        creation = self.creation(node, None, from_default=True, scalar=True)  # `0.0 + counts`: the default dtype
        return Value(Kind.PY_FLOAT, origins=frozenset({creation}))

    def _name(self, node: cst.Name, env: Env) -> Value:
        if node.value in ("True", "False") and node.value not in env:
            return Value(Kind.PY_BOOL)
        if node.value == "None" and node.value not in env:
            return Value(Kind.NONE)
        if node.value in env or node.value in self.global_env:
            return self.lookup(node.value, env)
        dtype = dtype_from_qualified_name(self.imports.qualify_name(node.value))
        if dtype is not None:
            return Value(Kind.DTYPE, dtype)
        return UNKNOWN

    def _attribute(self, node: cst.Attribute, env: Env) -> Value:
        key = target_key(node, self.self_name)
        if key is not None:
            return self._state_read(key, self.lookup(key, env))
        qualified = self.qualified_name(node, env)
        if qualified is not None:
            dtype = dtype_from_qualified_name(qualified)
            return Value(Kind.DTYPE, dtype) if dtype is not None else UNKNOWN
        base = self.eval(node.value, env)
        attr = node.attr.value
        if attr in api.ALIAS_ATTRIBUTES:
            return base
        if attr == "shape":
            result = Value(Kind.SHAPE, flat=base.flat)
        elif attr == "dtype":
            # a buffer's dtype is whatever the module was cast to: keep that known;
            # the dtype of the model's data is the model's run-time dtype
            result = dtype_of(node.value, base, self.in_module) or (
                Value(Kind.DTYPE, base.dtype, buffer=base.buffer) if base.is_tensor or base.buffer else UNKNOWN
            )
        else:
            result = UNKNOWN
        if attr in api.READING_ATTRIBUTES:
            self.consume(base, node, Effect.SAFE, f"read through .{attr}")
        else:
            self.consume(base, node, Effect.ESCAPES, f"read through .{attr}")
        return result

    def _state_read(self, key: str, value: Value) -> Value:
        """`self.x` as read here. A buffer the class converts back to float32 itself
        (`self.inv_freq = self.inv_freq.float()`) is float32 where the class reads it;
        while the module is being built, a buffer has the dtype it was made with (no
        `model.to(...)` can have cast it yet)."""
        if not value.buffer:
            return value
        if key in self.restored() and value.kind in (Kind.TENSOR, Kind.UNKNOWN):
            return replace(value, kind=Kind.TENSOR, dtype=FLOAT32, buffer=False, dtype_source=None)
        if self.at_construction():
            return replace(value, buffer=False)
        return value

    def _subscript(self, node: cst.Subscript, env: Env) -> Value:
        base = self.eval(node.value, env)
        masked = False
        for element in node.slice:
            inner = element.slice
            parts = [inner.value] if type(inner) is cst.Index else [
                part for part in (inner.lower, inner.upper, inner.step) if part is not None
            ]
            for part in parts:
                index = self.eval(part, env)
                masked = masked or index.mask
                self.consume(index, part, Effect.SAFE, "used as an index")
        if base.kind is Kind.SHAPE:
            return Value.py_int(count=True, length=not base.flat)
        place = target_key(node, self.self_name)
        if place is not None and (place in env or place in self.global_env):
            return self.lookup(place, env)  # `state["step"]`: a place of its own
        if base.is_container:
            return _item(base, node)
        if base.is_tensor or base.origins or base.count or base.mask or base.positions or masked:
            return Value(
                Kind.TENSOR if masked else base.kind, base.dtype, None, base.count, base.mask, base.origins,
                base.positions, base.buffer, length=base.length and not masked,
                flat=masked,  # `x[mask]`: one row per selected element
            )  # fmt: skip
        return UNKNOWN

    def _unary(self, node: cst.UnaryOperation, env: Env) -> Value:
        operand = self.eval(node.expression, env)
        self.consume(operand, node, Effect.SAFE, "read by an arithmetic expression")
        if type(node.operator) is cst.Not:
            return Value(Kind.PY_BOOL)
        if type(node.operator) is cst.BitInvert and operand.mask:
            return Value(operand.kind, operand.dtype, operand.zero_dim, mask=True)
        if type(node.operator) is cst.Minus and operand.number is not None:
            return Value(operand.kind, number=-operand.number)
        if type(node.operator) is cst.Plus and operand.number is not None:
            return Value(operand.kind, number=operand.number)
        return Value(operand.kind, operand.dtype, operand.zero_dim)

    def _comparison(self, node: cst.Comparison, env: Env) -> Value:
        operands = [self.eval(node.left, env)]
        identity = False
        for target in node.comparisons:
            operands.append(self.eval(target.comparator, env))
            if type(target.operator) in (cst.Is, cst.IsNot, cst.In, cst.NotIn):
                identity = True
        for operand in operands:
            self.consume(operand, node, Effect.SAFE, "compared")
        if identity or all(o.kind in (Kind.PY_INT, Kind.PY_FLOAT, Kind.PY_BOOL) for o in operands):
            return Value(Kind.PY_BOOL)
        return per_row_mask(Value.mask_value(any(o.is_tensor for o in operands)), operands)

    # -- arithmetic ------------------------------------------------------------
    def binary(
        self, node: cst.CSTNode, operator: cst.BaseBinaryOp, left: Value, right: Value
    ) -> Value:
        for operand in (left, right):
            self.consume(operand, node, Effect.SAFE, "read by an arithmetic expression")
        if type(operator) is cst.MatrixMultiply:
            self.matmul_like(node, (left, right))
        result = arithmetic(operator, left, right)
        return self.derived_tally(node, result, _counts_kept(operator, left, right))

    def matmul_like(self, node: cst.CSTNode, operands: Sequence[Value]) -> None:
        """A matmul, linear or contracting einsum: autocast runs it in low precision."""
        if not casts_positions(operands):
            return
        region = self.autocast_regions[-1] if self.autocast_regions else None
        # in no region here, it runs under autocast when its caller does: a layer's
        # forward does, a test's or a script's own function is no layer's
        if region is True or (region is None and self.in_module):
            self.used_under_autocast(AutocastUse(node, region))

    # -- calls -----------------------------------------------------------------
    def call(self, node: cst.Call, env: Env) -> Value:
        qualified = self.qualified_name(node.func, env)
        method = node.func.attr.value if qualified is None and type(node.func) is cst.Attribute else None
        self.calls[id(node)] = CallFact(node, qualified, method)
        if qualified is not None:
            if not qualified.startswith(_NOT_PROJECT):
                result = self.project_function_call(qualified, node, env)
                if result is not None:
                    return result
                result = self._function_call(qualified, node, env)
                self.callees.record_call(qualified, node, [self.values.get(id(a.value), UNKNOWN) for a in node.args])
                return result
            return self._function_call(qualified, node, env)
        if type(node.func) is cst.Attribute:
            return self._method_call(node, node.func, env)
        callee = self.eval(node.func, env)
        values = self._eval_args(node, env)
        result = self.call_instance(node, callee, values)
        if result is not None:
            return result
        self._consume_args(node, values, Effect.ESCAPES, "passed to a function we cannot see")
        return UNKNOWN

    def _eval_args(self, node: cst.Call, env: Env) -> list[Value]:
        return [self.eval(arg.value, env) for arg in node.args]

    def _consume_args(self, node: cst.Call, values: Sequence[Value], effect: Effect, reason: str, skip: tuple[cst.Arg | None, ...] = ()) -> None:
        for arg, value in zip(node.args, values):
            if any(arg is skipped for skipped in skip):
                continue
            self.consume(value, arg, effect, reason)

    def arg_value(self, node: cst.Call, values: Sequence[Value], arg: cst.Arg | None) -> Value | None:
        if arg is None:
            return None
        for candidate, value in zip(node.args, values):
            if candidate is arg:
                return value
        return None

    # -- accumulation ----------------------------------------------------------
    def accumulate(
        self,
        statement: cst.CSTNode,
        target: Value,
        addend_node: cst.BaseExpression,
        addend: Value,
        in_place: bool,
        subtract: bool = False,
    ) -> Value:
        """`target += addend` (in place) or `target = target + addend`: the new value,
        with an Add recorded for every creation the target may come from."""
        operator = cst.Subtract() if subtract else cst.Add()
        if target.is_tensor and in_place:
            count = target.count and addend.count
            result = Value.tensor(target.dtype, target.zero_dim, count=count, length=count and target.length and addend.length)
            result = replace(result, buffer=target.buffer, dtype_source=target.dtype_source)
        else:
            result = arithmetic(operator, target, addend)
        result = result.with_origins(target.origins)
        if target.origins:
            kind = AddendKind.UNKNOWN
            if addend.count or addend.float_count:  # a count made float is still a count
                kind = AddendKind.COUNT
            elif addend.is_integral:
                kind = AddendKind.INTEGRAL
            elif addend.is_floating:
                kind = AddendKind.FLOATING
            for creation in target.origins:
                dtype_after = result.dtype if result.is_tensor and result.dtype is not None else (
                    _dtype_after(creation, target, addend, operator, in_place)
                )
                repeated = self.loop_depth > 0 or not _local_name_target(statement)
                self.log.record_add(
                    creation, Add(statement, addend_node, kind, dtype_after, addend.length, _is_step(addend_node), repeated)
                )
        self.consume(addend, addend_node, Effect.ESCAPES, "added into another tensor", self._fate_of_add(statement, target, result))
        return result

    def _fate_of_add(self, statement: cst.CSTNode, target: Value, result: Value) -> Fate | None:
        """Where counts added into `target` go: nowhere further when it holds them
        exactly from there on (float64, an integer tensor), kept when it outlives the
        call (state, a tensor carried across loop iterations), else local to the call."""
        if not target.origins:
            return None  # a place we cannot follow
        dtypes = [result.dtype if result.is_tensor and result.dtype is not None else c.dtype for c in target.origins]
        if all(holds_counts_exactly(d) for d in dtypes):
            return Fate.LOCAL
        if _names_a_kept_place(statement) or any(self.outlives_here(c) for c in target.origins):
            return Fate.KEPT
        return Fate.LOCAL


_HANDLERS = {
    cst.Integer: ExpressionEvaluator._integer,
    cst.Float: ExpressionEvaluator._float,
    cst.Name: ExpressionEvaluator._name,
    cst.Attribute: ExpressionEvaluator._attribute,
    cst.Subscript: ExpressionEvaluator._subscript,
    cst.BinaryOperation: ExpressionEvaluator._binary_operation,
    cst.UnaryOperation: ExpressionEvaluator._unary,
    cst.Comparison: ExpressionEvaluator._comparison,
    cst.Call: ExpressionEvaluator.call,
    cst.IfExp: ExpressionEvaluator._if_expression,
    cst.BooleanOperation: ExpressionEvaluator._boolean_operation,
    cst.FormattedString: ExpressionEvaluator._formatted_string,
    cst.SimpleString: ExpressionEvaluator._string,
    cst.ConcatenatedString: ExpressionEvaluator._string,
    cst.Tuple: ExpressionEvaluator.tuple_literal,
    cst.List: ExpressionEvaluator.list_literal,
    cst.Set: ExpressionEvaluator.list_literal,
    cst.Dict: ExpressionEvaluator.dict_literal,
    cst.ListComp: ExpressionEvaluator.comprehension,
    cst.SetComp: ExpressionEvaluator.comprehension,
    cst.GeneratorExp: ExpressionEvaluator.comprehension,
    cst.DictComp: ExpressionEvaluator.comprehension,
    cst.Yield: ExpressionEvaluator._yield,
    cst.Await: ExpressionEvaluator._await,
    cst.NamedExpr: ExpressionEvaluator._named_expression,
}


def _dtype_after(creation: Creation, target: Value, addend: Value, operator, in_place: bool) -> DType | None:
    """The accumulator's dtype after an add when the value reaching it is no longer
    known as a tensor (state joined over a rebinding elsewhere): judged from the
    tensor it was created as. In place, `+=` keeps that dtype."""
    if creation.dtype is None or target.kind not in (Kind.UNKNOWN, Kind.TENSOR):
        return None
    if in_place or target.kind is Kind.UNKNOWN:
        made = Value.tensor(creation.dtype)
        return creation.dtype if in_place else arithmetic(operator, made, addend).dtype
    return None


def _local_name_target(statement: cst.CSTNode) -> bool:
    """`n += 1` or `n = n + 1`: an add into a plain local name."""
    if type(statement) is cst.AugAssign:
        return type(statement.target) is cst.Name
    if type(statement) is cst.Assign:
        return all(type(t.target) is cst.Name for t in statement.targets)
    return False


def _never() -> bool:
    return False


def _names_a_kept_place(statement: cst.CSTNode) -> bool:
    """`self.total += h`, `self.stats["n"] += h`, `obj.n = obj.n + h`: an add into a
    place held by an object, which outlives the call (`acc += h`, `acc[i] += h` do not
    say: where `acc` was made does)."""
    targets = []
    if type(statement) is cst.AugAssign:
        targets = [statement.target]
    elif type(statement) is cst.Assign:
        targets = [t.target for t in statement.targets]
    for target in targets:
        while type(target) is cst.Subscript:
            target = target.value
        if type(target) is cst.Attribute:
            return True
    return False


def _counts_kept(operator: cst.BaseBinaryOp, left: Value, right: Value) -> frozenset[Creation]:
    """The tallies whose counts `left <op> right` still holds: a sum or difference of
    counts (`area_a + area_b - both`), counts times a whole number (`2 * h`); not a
    ratio, not counts scaled by anything else (`h * weight`: a weighted total), not a
    comparison."""
    if type(operator) in (cst.Add, cst.Subtract):
        return left.tallies | right.tallies
    if type(operator) is cst.Multiply:
        kept: frozenset[Creation] = frozenset()
        for counts, other in ((left, right), (right, left)):
            if counts.tallies and (other.is_integral or other.tallies):
                kept |= counts.tallies
        return kept
    return frozenset()


def _is_step(node: cst.BaseExpression) -> bool:
    """`+= 1`: a literal whole number, what a step counter adds."""
    if type(node) is cst.Integer:
        return True
    try:
        return type(node) is cst.Float and float(node.value).is_integer()
    except ValueError:
        return False


def _item(container: Value, node: cst.Subscript) -> Value:
    """`pair[0]`, `counts[i]`, `stats["tokens"]`, `pairs[1:]` of a known container."""
    if len(node.slice) != 1 or type(node.slice[0].slice) is not cst.Index:
        return container if container.kind is not Kind.DICT else UNKNOWN  # a slice: the same kind of list
    index = node.slice[0].slice.value
    if container.kind is Kind.DICT:
        key = index.evaluated_value if type(index) is cst.SimpleString else None
        found = container.item(key) if isinstance(key, str) else None
        return found or container.item(ANY_KEY) or UNKNOWN
    if container.kind is Kind.TUPLE:
        position = int_literal(index)
        if position is not None and -len(container.elements) <= position < len(container.elements):
            return container.elements[position]
    return container.element


__all__ = ["ExpressionEvaluator", "Env", "arithmetic", "find_arg", "public_attribute", "same_place", "target_key"]
