"""Abstract evaluation of expressions: what value each one has, and how an
accumulator is used when it appears inside one."""
from __future__ import annotations

from dataclasses import replace
from typing import Sequence

import libcst as cst

from . import torch_api as api
from .accumulators import Add, AccumulatorLog, AddendKind, Effect, Use
from .dtypes import (
    BOOL,
    CONVERSION_METHODS,
    DEFAULT_FLOAT,
    INT64,
    LEGACY_TENSOR_TYPES,
    DType,
    dtype_from_qualified_name,
)
from .imports import ImportMap, dotted_name
from .promotion import result_type
from .values import UNKNOWN, CallFact, Creation, Kind, Value, join
from .walk import iter_children

Env = dict[str, Value]

_ADDITIVE = (cst.Add, cst.Subtract)
_BITWISE = (cst.BitAnd, cst.BitOr, cst.BitXor)


def target_key(node: cst.BaseExpression, self_name: str | None) -> str | None:
    """The binding a target stands for: `acc` -> "acc", `self.acc` -> "self.acc"."""
    if isinstance(node, cst.Name):
        return node.value
    if (
        isinstance(node, cst.Attribute)
        and self_name is not None
        and isinstance(node.value, cst.Name)
        and node.value.value == self_name
    ):
        return f"self.{node.attr.value}"
    return None


def same_place(a: cst.BaseExpression, b: cst.BaseExpression) -> bool:
    """Whether two expressions name the same storage: `acc`, `self.acc`, `acc[i]`."""
    return _place_text(a) is not None and _place_text(a) == _place_text(b)


def _place_text(node: cst.BaseExpression) -> str | None:
    if isinstance(node, cst.Name):
        return node.value
    if isinstance(node, cst.Integer):
        return node.value
    if isinstance(node, cst.Attribute):
        base = _place_text(node.value)
        return None if base is None else f"{base}.{node.attr.value}"
    if isinstance(node, cst.Subscript):
        base = _place_text(node.value)
        parts = []
        for element in node.slice:
            if not isinstance(element.slice, cst.Index):
                return None
            part = _place_text(element.slice.value)
            if part is None:
                return None
            parts.append(part)
        return None if base is None else f"{base}[{','.join(parts)}]"
    return None


def find_arg(call: cst.Call, keyword: str, position: int | None = None) -> cst.Arg | None:
    """The argument passed as `keyword=` or at `position` (unknown after a `*args`)."""
    positional: int | None = 0
    for arg in call.args:
        if arg.keyword is not None:
            if arg.keyword.value == keyword:
                return arg
        elif arg.star == "*":
            positional = None
        elif not arg.star and positional is not None:
            if positional == position:
                return arg
            positional += 1
    return None


def public_attribute(key: str) -> bool:
    name = key.split(".", 1)[1]
    return not name.startswith("_") or (name.startswith("__") and name.endswith("__"))


class ExpressionEvaluator:
    """Shared state of one scope's interpretation (see interpreter.ScopeInterpreter)."""

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

    # -- bookkeeping -----------------------------------------------------------
    def consume(self, value: Value, node: cst.CSTNode, effect: Effect, reason: str) -> None:
        for creation in value.origins:
            self.log.record_use(creation, Use(node, effect, reason))

    def on_bind(self, key: str, value: Value, accumulated: bool) -> Value:
        """Hook for class analysis, which collects what each `self.x` is bound to."""
        return value

    def creation(self, node: cst.CSTNode, dtype: DType | None) -> Creation:
        existing = self.creations.get(id(node))
        if existing is None:
            existing = self.creations[id(node)] = Creation(node, dtype, self.scope)
        return existing

    def qualified_name(self, node: cst.BaseExpression, env: Env) -> str | None:
        if isinstance(node, cst.Name):
            if node.value in env or node.value in self.global_env:
                return None
            return self.imports.qualify_name(node.value)
        if isinstance(node, cst.Attribute):
            base = self.qualified_name(node.value, env)
            return None if base is None else f"{base}.{node.attr.value}"
        return None

    def lookup(self, key: str, env: Env) -> Value:
        if key in env:
            return env[key]
        return self.global_env.get(key, UNKNOWN)

    # -- evaluation ------------------------------------------------------------
    def eval(self, node: cst.BaseExpression, env: Env) -> Value:
        value = self._eval(node, env)
        self.values[id(node)] = value
        return value

    def _eval(self, node: cst.BaseExpression, env: Env) -> Value:
        if isinstance(node, cst.Integer):
            return Value.py_int()
        if isinstance(node, cst.Float):
            return Value(Kind.PY_FLOAT)
        if isinstance(node, cst.Name):
            return self._name(node, env)
        if isinstance(node, cst.Attribute):
            return self._attribute(node, env)
        if isinstance(node, cst.Subscript):
            return self._subscript(node, env)
        if isinstance(node, cst.BinaryOperation):
            left = self.eval(node.left, env)
            right = self.eval(node.right, env)
            return self.binary(node, node.operator, left, right)
        if isinstance(node, cst.UnaryOperation):
            return self._unary(node, env)
        if isinstance(node, cst.Comparison):
            return self._comparison(node, env)
        if isinstance(node, cst.Call):
            return self.call(node, env)
        if isinstance(node, cst.IfExp):
            self.eval(node.test, env)
            return join(self.eval(node.body, env), self.eval(node.orelse, env))
        if isinstance(node, cst.BooleanOperation):
            for side in (node.left, node.right):
                self.consume(self.eval(side, env), side, Effect.SAFE, "tested for truth")
            return UNKNOWN
        if isinstance(node, cst.FormattedString):
            for part in node.parts:
                if isinstance(part, cst.FormattedStringExpression):
                    self.consume(self.eval(part.expression, env), part, Effect.SAFE, "formatted")
            return UNKNOWN
        if isinstance(node, (cst.SimpleString, cst.ConcatenatedString)):
            return UNKNOWN
        if isinstance(node, cst.NamedExpr):
            value = self.eval(node.value, env)
            key = target_key(node.target, self.self_name)
            if key is not None:
                env[key] = value
            return value
        return self._opaque(node, env)

    def _opaque(self, node: cst.CSTNode, env: Env) -> Value:
        """Anything we do not model (containers, comprehensions, lambdas): evaluate
        what is inside so counts are still seen, and treat accumulators in it as escaping."""
        for child in iter_children(node):
            if isinstance(child, cst.BaseExpression):
                self.consume(self.eval(child, env), child, Effect.ESCAPES, "stored in a container or closure")
            else:
                self._opaque(child, env)
        return UNKNOWN

    def float_literal_creation(self, node: cst.BaseExpression) -> Value | None:
        """`total = 0.0`: a Python float that becomes a tensor once a tensor is added."""
        if not isinstance(node, cst.Float):
            return None
        try:
            whole = float(node.value).is_integer()
        except ValueError:
            return None
        return Value(Kind.PY_FLOAT, origins=frozenset({self.creation(node, None)})) if whole else None

    def _name(self, node: cst.Name, env: Env) -> Value:
        if node.value in ("True", "False") and node.value not in env:
            return Value(Kind.PY_BOOL)
        if node.value in env or node.value in self.global_env:
            return self.lookup(node.value, env)
        dtype = dtype_from_qualified_name(self.imports.qualify_name(node.value))
        if dtype is not None:
            return Value(Kind.DTYPE, dtype)
        return UNKNOWN

    def _attribute(self, node: cst.Attribute, env: Env) -> Value:
        key = target_key(node, self.self_name)
        if key is not None:
            return self.lookup(key, env)
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
            # a buffer's dtype is whatever the module was cast to: keep that known
            result = Value(Kind.DTYPE, base.dtype, buffer=base.buffer) if base.is_tensor or base.buffer else UNKNOWN
        else:
            result = UNKNOWN
        if attr in api.READING_ATTRIBUTES:
            self.consume(base, node, Effect.SAFE, f"read through .{attr}")
        else:
            self.consume(base, node, Effect.ESCAPES, f"read through .{attr}")
        return result

    def _subscript(self, node: cst.Subscript, env: Env) -> Value:
        base = self.eval(node.value, env)
        masked = False
        for element in node.slice:
            inner = element.slice
            parts = [inner.value] if isinstance(inner, cst.Index) else [
                part for part in (inner.lower, inner.upper, inner.step) if part is not None
            ]
            for part in parts:
                index = self.eval(part, env)
                masked = masked or index.mask
                self.consume(index, part, Effect.SAFE, "used as an index")
        if base.kind is Kind.SHAPE:
            return Value.py_int(count=True, length=not base.flat)
        if base.is_tensor or base.origins or base.count or base.mask or masked:
            return Value(
                Kind.TENSOR if masked else base.kind, base.dtype, None, base.count, base.mask, base.origins,
                base.positions, base.buffer, length=base.length and not masked,
                flat=masked,  # `x[mask]`: one row per selected element
            )  # fmt: skip
        return UNKNOWN

    def _unary(self, node: cst.UnaryOperation, env: Env) -> Value:
        operand = self.eval(node.expression, env)
        self.consume(operand, node, Effect.SAFE, "read by an arithmetic expression")
        if isinstance(node.operator, cst.Not):
            return Value(Kind.PY_BOOL)
        if isinstance(node.operator, cst.BitInvert) and operand.mask:
            return Value(operand.kind, operand.dtype, operand.zero_dim, mask=True)
        return Value(operand.kind, operand.dtype, operand.zero_dim)

    def _comparison(self, node: cst.Comparison, env: Env) -> Value:
        operands = [self.eval(node.left, env)]
        identity = False
        for target in node.comparisons:
            operands.append(self.eval(target.comparator, env))
            if isinstance(target.operator, (cst.Is, cst.IsNot, cst.In, cst.NotIn)):
                identity = True
        for operand in operands:
            self.consume(operand, node, Effect.SAFE, "compared")
        if identity or all(o.kind in (Kind.PY_INT, Kind.PY_FLOAT, Kind.PY_BOOL) for o in operands):
            return Value(Kind.PY_BOOL)
        return _per_row_mask(Value.mask_value(any(o.is_tensor for o in operands)), operands)

    # -- arithmetic ------------------------------------------------------------
    def binary(
        self, node: cst.CSTNode, operator: cst.BaseBinaryOp, left: Value, right: Value
    ) -> Value:
        for operand in (left, right):
            self.consume(operand, node, Effect.SAFE, "read by an arithmetic expression")
        return arithmetic(operator, left, right)

    # -- calls -----------------------------------------------------------------
    def call(self, node: cst.Call, env: Env) -> Value:
        qualified = self.qualified_name(node.func, env)
        method = node.func.attr.value if qualified is None and isinstance(node.func, cst.Attribute) else None
        self.calls[id(node)] = CallFact(node, qualified, method)
        if qualified is not None:
            return self._function_call(qualified, node, env)
        if isinstance(node.func, cst.Attribute):
            return self._method_call(node, node.func, env)
        self.eval(node.func, env)
        self._consume_args(node, self._eval_args(node, env), Effect.ESCAPES, "passed to a function we cannot see")
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

    def _dtype_arg(self, node: cst.Call, values: Sequence[Value]) -> tuple[bool, DType | None]:
        """(present, dtype) of a `dtype=` argument."""
        value = self.arg_value(node, values, find_arg(node, "dtype"))
        if value is None:
            if any(arg.star == "**" for arg in node.args):
                return True, None  # `**options` may carry a dtype: unknown
            return False, None
        return True, value.dtype if value.kind is Kind.DTYPE else None

    def _function_call(self, qualified: str, node: cst.Call, env: Env) -> Value:
        values = self._eval_args(node, env)
        module, _, attr = qualified.rpartition(".")
        if qualified in api.FACTORY_FUNCTIONS:
            self._consume_args(node, values, Effect.SAFE, "shapes a new tensor")
            return self._factory(qualified, node, values)
        if qualified in api.LIKE_FACTORIES:
            self._consume_args(node, values, Effect.SAFE, "used as a template")
            template = values[0] if values else UNKNOWN
            present, dtype = self._dtype_arg(node, values)
            dtype = dtype if present else template.dtype
            creation = self.creation(node, dtype)
            return Value.tensor(dtype, template.zero_dim, mask=dtype == BOOL, origins=frozenset({creation}))
        if module in api.LEGACY_CONSTRUCTOR_MODULES and attr in LEGACY_TENSOR_TYPES:
            self._consume_args(node, values, Effect.SAFE, "shapes a new tensor")
            dtype = LEGACY_TENSOR_TYPES[attr]
            return Value.tensor(dtype, False, origins=frozenset({self.creation(node, dtype)}))
        if qualified in ("torch.nonzero", "torch.argwhere", "torch.masked_select", "torch.flatten"):
            self._consume_args(node, values, Effect.SAFE, f"read by {qualified}()")
            dtype = values[0].dtype if qualified.endswith(("masked_select", "flatten")) and values else INT64
            return Value.tensor(dtype, False, flat=True)
        if qualified in api.MASK_FUNCTIONS:
            self._consume_args(node, values, Effect.SAFE, "compared")
            return Value.tensor(BOOL, mask=True)
        if qualified in api.COUNT_FUNCTIONS:
            self._consume_args(node, values, Effect.SAFE, "counted")
            if find_arg(node, "weights", 1) is not None:
                return Value.tensor(None)
            has_dim = find_arg(node, "dim", 1) is not None or qualified == "torch.bincount"
            return Value.tensor(INT64, True if not has_dim else None, count=True)
        if qualified in api.SUM_FUNCTIONS:
            self._consume_args(node, values, Effect.SAFE, "summed")
            source = values[0] if values else UNKNOWN
            present, dtype = self._dtype_arg(node, values)
            has_dim = find_arg(node, "dim", 1) is not None
            return reduce_sum(source, present, dtype, has_dim, site=id(node))
        if qualified in ("torch.add", "torch.sub"):
            return self._torch_add(node, values, env, subtract=qualified == "torch.sub")
        if qualified == "torch.arange":
            self._consume_args(node, values, Effect.SAFE, "bounds a range")
            present, dtype = self._dtype_arg(node, values)
            if not present:
                floats = any(v.kind is Kind.PY_FLOAT or v.is_floating for a, v in zip(node.args, values) if a.keyword is None)
                dtype = DEFAULT_FLOAT if floats else INT64
            return Value.tensor(dtype, False, positions=True)
        if qualified in api.REDUCING_COLLECTIVES:
            return self._collective(node, values, env)
        if qualified in ("torch.cat", "torch.stack", "torch.concat", "torch.concatenate"):
            self._consume_args(node, values, Effect.ESCAPES, f"packed by {qualified}()")
            return self._packed(node, node.args[0].value if node.args else None)
        if qualified == "builtins.len":
            self._consume_args(node, values, Effect.SAFE, "measured with len()")
            return Value.py_int(count=True, length=not (values and values[0].flat))
        if qualified == "builtins.int":
            self._consume_args(node, values, Effect.SAFE, "converted with int()")
            return Value.py_int(count=bool(values) and values[0].count, length=bool(values) and values[0].length)
        if qualified == "builtins.float":
            self._consume_args(node, values, Effect.SAFE, "converted with float()")
            return Value(Kind.PY_FLOAT)
        if qualified in api.READING_BUILTINS or qualified.startswith("logging."):
            self._consume_args(node, values, Effect.SAFE, f"read by {attr}()")
            return UNKNOWN
        if qualified in api.SAFE_COLLECTIVES or qualified in api.READING_TORCH_FUNCTIONS:
            self._consume_args(node, values, Effect.SAFE, f"read by {qualified}()")
            return Value.tensor(None)
        if qualified in api.BREAKING_TORCH_FUNCTIONS:
            self._consume_args(node, values, Effect.BREAKS, f"passed to {qualified}(), which fails on integer tensors")
            return Value.tensor(None)
        self._consume_args(node, values, Effect.ESCAPES, f"passed to {qualified}()")
        return Value.tensor(None) if qualified.startswith("torch.") else UNKNOWN

    def _factory(self, qualified: str, node: cst.Call, values: Sequence[Value]) -> Value:
        present, dtype = self._dtype_arg(node, values)
        data_position = 1 if qualified == "torch.full" else 0
        data_arg = find_arg(node, "fill_value" if qualified == "torch.full" else "data", data_position)
        data = self.arg_value(node, values, data_arg)
        if not present:
            if qualified in api.DATA_FACTORIES:
                dtype = data_dtype(data_arg.value if data_arg else None, data)
            else:
                dtype = DEFAULT_FLOAT
        float_count, count, length = 0, False, False
        if qualified in ("torch.tensor", "torch.as_tensor"):
            zero_dim = None
            if data_arg is not None:
                zero_dim = not isinstance(data_arg.value, (cst.List, cst.Tuple))
                mixed, packed_dtype = self.packing(data_arg.value)
                if mixed and not present:  # `torch.tensor([loss_sum, n])`: the count goes float
                    dtype, float_count = packed_dtype or DEFAULT_FLOAT, id(node)
                elements = self._elements(data_arg.value, data)
                length = _all_lengths(elements)
                if elements and all(v.count or v.kind is Kind.PY_INT for v in elements) and any(v.count for v in elements):
                    count = dtype is None or not dtype.is_floating  # `torch.tensor([n])` of a len()
                    dtype = dtype if present else INT64
        else:
            zero_dim = _shape_is_empty(node, qualified)
        return Value(
            Kind.TENSOR, dtype, zero_dim, count=count, mask=dtype == BOOL,
            origins=frozenset({self.creation(node, dtype)}), float_count=float_count,
            length=length and (count or bool(float_count)),
        )  # fmt: skip

    def _elements(self, data: cst.BaseExpression, value: Value | None) -> list[Value]:
        """The values of a literal list/tuple's elements, or the data's own value."""
        if isinstance(data, (cst.List, cst.Tuple)):
            return [v for e in data.elements if (v := self.values.get(id(e.value))) is not None]
        return [value] if value is not None else []

    def packing(self, container: cst.BaseExpression | None) -> tuple[bool, DType | None]:
        """Whether a list/tuple literal mixes a count with floats, and the float dtype."""
        if not isinstance(container, (cst.List, cst.Tuple)):
            return False, None
        elements = [v for e in container.elements if (v := self.values.get(id(e.value))) is not None]
        # positions packed with a float are not counts (and fail later as an index)
        has_count = any(v.count or (v.is_integral and v.is_tensor and not v.positions) for v in elements)
        floats = [v for v in elements if v.is_floating and not v.count]
        if not (has_count and floats):
            return False, None
        dtypes = {v.dtype for v in floats if v.is_tensor and v.dtype is not None}
        return True, (dtypes.pop() if len(dtypes) == 1 else (DEFAULT_FLOAT if not dtypes else None))

    def _packed(self, node: cst.Call, container: cst.BaseExpression | None) -> Value:
        mixed, dtype = self.packing(container)
        if not mixed:
            return Value.tensor(None)
        elements = self._elements(container, None)
        return Value(Kind.TENSOR, dtype, False, float_count=id(node), length=_all_lengths(elements))

    def _torch_add(self, node: cst.Call, values: Sequence[Value], env: Env, subtract: bool) -> Value:
        out = find_arg(node, "out")
        first, second = find_arg(node, "input", 0), find_arg(node, "other", 1)
        if out is not None and first is not None and second is not None:
            for target, addend in ((first, second), (second, first)):
                if same_place(out.value, target.value) and not (subtract and target is second):
                    target_value = self.arg_value(node, values, target) or UNKNOWN
                    addend_value = _scaled_by_alpha(node, values, self.arg_value(node, values, addend) or UNKNOWN)
                    return self.accumulate(node, target_value, addend.value, addend_value, in_place=True)
        self._consume_args(node, values, Effect.SAFE, "read by torch.add()")
        if len(values) >= 2:
            return arithmetic(cst.Subtract() if subtract else cst.Add(), values[0], values[1])
        return Value.tensor(None)

    def _collective(self, node: cst.Call, values: Sequence[Value], env: Env) -> Value:
        tensor_arg = find_arg(node, "tensor", 0)
        op_arg = find_arg(node, "op", 1)
        effect, reason = Effect.SAFE, "all-reduced with SUM"
        if op_arg is not None:
            op = self.qualified_name(op_arg.value, env) or ""
            op_name = op.rpartition(".")[2]
            if op_name in api.BREAKING_REDUCE_OPS:
                effect, reason = Effect.BREAKS, f"reduced with ReduceOp.{op_name}, which fails on int64"
            elif op_name in api.EXACT_REDUCE_OPS:
                reason = f"reduced with ReduceOp.{op_name}"
            else:
                effect, reason = Effect.ESCAPES, "reduced with an op we cannot resolve"
        tensor_value = self.arg_value(node, values, tensor_arg)
        if tensor_value is not None and tensor_arg is not None:
            self.consume(tensor_value, tensor_arg, effect, reason)
        self._consume_args(node, values, Effect.SAFE, "collective argument", skip=(tensor_arg,))
        return UNKNOWN

    def _method_call(self, node: cst.Call, func: cst.Attribute, env: Env) -> Value:
        receiver = self.eval(func.value, env)
        method = func.attr.value
        values = self._eval_args(node, env)
        if receiver.kind is Kind.SELF and method in (api.REGISTER_BUFFER, api.ADD_STATE):
            return self._register_state(node, method, values, env)
        if receiver.origins:
            return self._accumulator_method(node, func, receiver, method, values)
        return self._value_method(node, receiver, method, values)

    def _register_state(self, node: cst.Call, method: str, values: Sequence[Value], env: Env) -> Value:
        name_arg = find_arg(node, "name", 0)
        tensor_arg = find_arg(node, "tensor" if method == api.REGISTER_BUFFER else "default", 1)
        tensor = self.arg_value(node, values, tensor_arg)
        self._consume_args(node, values, Effect.SAFE, "state option", skip=(tensor_arg,))
        if name_arg is None or not isinstance(name_arg.value, cst.SimpleString) or tensor is None or tensor_arg is None:
            if tensor is not None and tensor_arg is not None:
                self.consume(tensor, tensor_arg, Effect.ESCAPES, f"registered with {method}()")
            return UNKNOWN
        key = f"self.{name_arg.value.evaluated_value}"
        if method == api.REGISTER_BUFFER:
            self.consume(tensor, tensor_arg, Effect.ESCAPES, "registered as a buffer (saved in state_dict)")
            tensor = replace(tensor, buffer=True)
        else:
            reduce_arg = find_arg(node, "dist_reduce_fx", 2)
            reduce_fx = reduce_arg.value.evaluated_value if reduce_arg and isinstance(reduce_arg.value, cst.SimpleString) else None
            if reduce_fx == "mean":
                self.consume(tensor, tensor_arg, Effect.BREAKS, 'synced with dist_reduce_fx="mean"')
            elif public_attribute(key):
                self.consume(tensor, tensor_arg, Effect.ESCAPES, f"a public metric state ({key})")
        env[key] = self.on_bind(key, tensor, accumulated=False)
        return UNKNOWN

    def _accumulator_method(
        self, node: cst.Call, func: cst.Attribute, receiver: Value, method: str, values: Sequence[Value]
    ) -> Value:
        first = values[0] if values else UNKNOWN
        if method in api.INPLACE_ADD_METHODS and node.args:
            addend = _scaled_by_alpha(node, values, first)
            return self.accumulate(node, receiver, node.args[0].value, addend, in_place=True)
        effect, reason = Effect.ESCAPES, f"used with .{method}()"
        result = UNKNOWN
        if method in api.INPLACE_SCALE_METHODS or method in api.FILL_METHODS:
            literal = node.args[0].value if node.args else None
            whole_literal = isinstance(literal, cst.Float) and float(literal.value).is_integer()
            if first.is_integral or whole_literal:  # `fill_(0.0)` is fine on int64, `mul_(0.5)` is not
                effect, reason = Effect.SAFE, f"updated with .{method}() and a whole number"
            elif first.is_floating:
                effect, reason = Effect.BREAKS, f"updated with .{method}() and a float, which fails on int64"
            result = receiver
        elif method in api.ALIAS_METHODS:
            effect, reason, result = Effect.SAFE, f"moved or viewed with .{method}()", receiver
        elif method in api.BREAKING_METHODS:
            effect, reason = Effect.BREAKS, f"used with .{method}(), which fails on int64"
        elif method == "to" and not any(v.kind is Kind.DTYPE or _converts_like_a_tensor(node, v) for v in values):
            effect, reason, result = Effect.SAFE, "moved with .to()", receiver
        elif method in api.READING_METHODS or method in api.NEW_METHODS:
            effect, reason = Effect.SAFE, f"read by .{method}()"
            if method.endswith("_"):
                result = receiver  # `acc.zero_()` is still the accumulator
            else:
                result = self._value_method(node, receiver.without_origins(), method, values, consume_args=False)
        if result is UNKNOWN and method.endswith("_"):
            result = receiver  # an in-place method returns its own tensor
        self.consume(receiver, func, effect, reason)
        self._consume_args(node, values, Effect.SAFE, f"argument of .{method}()")
        return result

    def _value_method(
        self, node: cst.Call, receiver: Value, method: str, values: Sequence[Value], consume_args: bool = True
    ) -> Value:
        if method in api.LOGGING_METHODS:
            self._consume_args(node, values, Effect.SAFE, f"logged with .{method}()")
            return UNKNOWN
        if consume_args:
            self._consume_args(node, values, Effect.ESCAPES, f"passed to .{method}()")
        if method in api.NEW_METHODS:
            present, dtype = self._dtype_arg(node, values)
            dtype = dtype if present else receiver.dtype
            return Value.tensor(dtype, None, origins=frozenset({self.creation(node, dtype)}))
        if method in api.SUM_METHODS:
            present, dtype = self._dtype_arg(node, values)
            has_dim = find_arg(node, "dim", 0) is not None
            result = reduce_sum(receiver, present, dtype, has_dim, site=id(node))
            return replace(result, per_row=True) if self._reduces_rows(node) else result
        if method in ("any", "all"):
            has_dim = find_arg(node, "dim", 0) is not None
            return Value.tensor(BOOL, not has_dim, mask=True, per_row=self._reduces_rows(node))
        if method in api.COUNT_METHODS:
            return Value.tensor(INT64, True if find_arg(node, "dim", 0) is None else None, count=True)
        if method in api.PY_COUNT_METHODS:
            return Value.py_int(count=True)
        if method == "size":
            return Value.py_int(count=True, length=not receiver.flat) if node.args else Value(Kind.SHAPE, flat=receiver.flat)
        if method in api.MASK_METHODS:
            return _per_row_mask(Value.tensor(BOOL, receiver.zero_dim, mask=True), [receiver, *values])
        if method in CONVERSION_METHODS:
            return convert(receiver, CONVERSION_METHODS[method], site=id(node))
        if method in ("to", "type"):
            for value in values:
                if value.kind is Kind.DTYPE:
                    return convert(receiver, value.dtype, site=id(node)) if value.dtype else Value.tensor(None)
                if method == "to" and _converts_like_a_tensor(node, value):
                    return convert(receiver, value.dtype, site=id(node))  # `x.to(other)`: other's dtype
            return receiver
        if method == "type_as":
            template = values[0] if values else UNKNOWN
            return convert(receiver, template.dtype, site=id(node)) if template.is_tensor else Value.tensor(None)
        if method in api.ALIAS_METHODS or (method.endswith("_") and not method.startswith("_")):
            return _reshaped(receiver, method, node)  # in-place methods (`scatter_`) return their tensor
        if method == "item":
            if receiver.is_integral:
                return Value.py_int(count=receiver.count, length=receiver.length)
            return Value(Kind.PY_FLOAT) if receiver.is_floating else UNKNOWN
        if method in ("nonzero", "argwhere"):
            return Value.tensor(INT64, False, flat=True)
        if method == "masked_select":
            return Value.tensor(receiver.dtype, False, flat=True)
        if method in ("add", "sub") and values:
            return arithmetic(cst.Add() if method == "add" else cst.Subtract(), receiver, values[0])
        if method == "mean" and receiver.is_floating:
            return Value.tensor(receiver.dtype)
        return UNKNOWN

    def _reduces_rows(self, node: cst.Call) -> bool:
        """`x.reshape(n, -1).sum(-1)` (or `.view`, `dim=1`) with `n` a length: one
        value per sample."""
        dim = find_arg(node, "dim", 0)
        rows = node.func.value if isinstance(node.func, cst.Attribute) else None
        if dim is None or _int_literal(dim.value) not in (-1, 1):
            return False
        if not (isinstance(rows, cst.Call) and isinstance(rows.func, cst.Attribute)):
            return False
        if rows.func.attr.value not in ("reshape", "view") or len(rows.args) != 2:
            return False
        first = self.values.get(id(rows.args[0].value))
        return first is not None and first.length and _int_literal(rows.args[1].value) == -1

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
        else:
            result = arithmetic(operator, target, addend)
        result = result.with_origins(target.origins)
        if target.origins:
            kind = AddendKind.UNKNOWN
            if addend.count:
                kind = AddendKind.COUNT
            elif addend.is_integral:
                kind = AddendKind.INTEGRAL
            elif addend.is_floating:
                kind = AddendKind.FLOATING
            dtype_after = result.dtype if result.is_tensor else None
            for creation in target.origins:
                self.log.record_add(creation, Add(statement, addend_node, kind, dtype_after, addend.length))
        self.consume(addend, addend_node, Effect.ESCAPES, "added into another tensor")
        return result


_DEVICE_WORDS = ("device", "cuda", "cpu", "gpu", "rank", "dev", "mps", "xpu")


def _reshaped(receiver: Value, method: str, node: cst.Call) -> Value:
    """The receiver seen through a view or copy: `view(-1)`, `reshape(-1, d)` and
    `flatten()` give one row per element; a per-sample tensor stays one only through
    same-shape copies."""
    # `view(-1)`, `reshape(-1, d)`: the leading dimension gathers every element (or token)
    if method == "flatten" or (method in ("view", "reshape") and node.args and _int_literal(node.args[0].value) == -1):
        return replace(receiver, flat=True, per_row=False)
    if receiver.per_row and method not in api.SAME_SHAPE_METHODS:
        return replace(receiver, per_row=False)
    return receiver


def _int_literal(node: cst.BaseExpression) -> int | None:
    """The value of an integer literal, negative ones (`-1`) included."""
    if isinstance(node, cst.Integer):
        return int(node.value, 0)
    if isinstance(node, cst.UnaryOperation) and isinstance(node.operator, cst.Minus) and isinstance(node.expression, cst.Integer):
        return -int(node.expression.value, 0)
    return None


def _per_row_mask(mask: Value, operands: Sequence[Value]) -> Value:
    """A comparison of a per-sample tensor with scalars is a per-sample mask."""
    python = (Kind.PY_INT, Kind.PY_FLOAT, Kind.PY_BOOL)
    if any(o.per_row for o in operands) and all(o.per_row or o.kind in python for o in operands):
        return replace(mask, per_row=True)
    return mask


def _all_lengths(elements: Sequence[Value]) -> bool:
    """Whether the counts among packed values are all lengths (and there is one)."""
    counts = [v for v in elements if v.count or v.float_count or (v.is_integral and v.is_tensor)]
    return bool(counts) and all(v.length for v in counts)


def _converts_like_a_tensor(call: cst.Call, value: Value) -> bool:
    """Whether `x.to(arg)` takes arg's dtype: arg is a tensor, or a name that does not
    look like a device (`torch.zeros(n).to(lprobs)`), whose dtype we then do not know."""
    if value.is_tensor:
        return True
    if value.kind is not Kind.UNKNOWN or not call.args or call.args[0].keyword is not None:
        return False
    name = dotted_name(call.args[0].value)
    return name is not None and not any(word in name.lower() for word in _DEVICE_WORDS)


def _scaled_by_alpha(call: cst.Call, values: Sequence[Value], addend: Value) -> Value:
    """`add_(n, alpha=a)` adds `a * n`: a count only while `a` is a whole number."""
    alpha = find_arg(call, "alpha")
    if alpha is None:
        return addend
    for arg, value in zip(call.args, values):
        if arg is alpha:
            return arithmetic(cst.Multiply(), addend, value)
    return UNKNOWN


def arithmetic(operator: cst.BaseBinaryOp, left: Value, right: Value) -> Value:
    """The value of `left <op> right` (no origins: it is a new object)."""
    python = (Kind.PY_INT, Kind.PY_FLOAT, Kind.PY_BOOL)
    additive = isinstance(operator, _ADDITIVE)
    multiply = isinstance(operator, cst.Multiply)
    floor = isinstance(operator, cst.FloorDivide)
    count = False
    # a sum of lengths is a length; a product of two is an element count
    length = all(v.length for v in (left, right) if v.count)
    if additive:
        count = left.is_integral and right.is_integral and (left.count or right.count)
    elif multiply:
        count = (left.count and right.is_integral) or (right.count and left.is_integral)
        length = False  # `x.size(0) * seq_len` counts tokens
    elif floor:
        count = left.count and right.is_integral
    mask = False
    if isinstance(operator, _BITWISE) or multiply:
        mask = (left.mask and right.mask) or (isinstance(operator, (cst.BitAnd, cst.BitOr)) and (left.mask or right.mask))
    if left.kind in python and right.kind in python:
        if isinstance(operator, cst.Divide) or Kind.PY_FLOAT in (left.kind, right.kind):
            return Value(Kind.PY_FLOAT)
        return Value.py_int(count=count, length=length)
    if not (left.is_tensor or right.is_tensor):
        return Value(count=False, mask=mask)
    left_operand, right_operand = left.operand(), right.operand()
    dtype = None
    if left_operand is not None and right_operand is not None:
        dtype = result_type(left_operand, right_operand)
        if isinstance(operator, cst.Divide) and dtype is not None and not dtype.is_floating:
            dtype = DEFAULT_FLOAT
    if mask and dtype is None:
        dtype = BOOL
    zero_dims = [v.zero_dim for v in (left, right) if v.is_tensor]
    zero_dim = None
    if any(z is False for z in zero_dims):
        zero_dim = False
    elif all(z is True for z in zero_dims):
        zero_dim = True
    if dtype is not None and dtype.is_floating:
        count = False
    # index arithmetic on positions (`rows * width + cols`) gives positions; float
    # results (`positions * inv_freq`) are angles, not positions
    positions = (
        (left.positions or right.positions) and (additive or multiply)
        and not (left.is_floating or right.is_floating or (dtype is not None and dtype.is_floating))
    )  # fmt: skip
    return Value.tensor(dtype, zero_dim, count=count, mask=mask, positions=positions, length=count and length)


def reduce_sum(source: Value, dtype_given: bool, dtype: DType | None, has_dim: bool, site: int = 0) -> Value:
    zero_dim = True if not has_dim else None  # reducing over `dim` keeps the other dims
    counting = source.mask or source.count
    # summing a per-sample mask counts samples; summing lengths gives a length
    length = not has_dim and ((source.mask and source.per_row) or (source.count and source.length))
    if dtype_given:
        integral = dtype is not None and not dtype.is_floating
        float_count = site if counting and not integral and dtype is not None else 0
        return Value(Kind.TENSOR, dtype, zero_dim, count=counting and integral, float_count=float_count, length=length)
    if source.is_floating:  # `mask.float().sum()`: a float total, even of 0/1 values
        float_count = site if counting else source.float_count
        return Value(Kind.TENSOR, source.dtype, zero_dim, float_count=float_count, length=length or source.length)
    if counting or (source.is_tensor and source.dtype is not None):
        return Value.tensor(INT64, zero_dim, count=counting, length=counting and length)
    return Value.tensor(None, zero_dim)


def convert(source: Value, dtype: DType | None, site: int = 0) -> Value:
    """`x.long()`, `x.to(torch.float32)`: a new tensor of `dtype` (None: unknown). A
    count converted to a float dtype remembers where (`float_count`)."""
    if dtype is None:
        return Value.tensor(None, source.zero_dim)
    integral = not dtype.is_floating
    float_count = site if (source.count and not integral) else (source.float_count if not integral else 0)
    if not integral and source.float_count:
        float_count = source.float_count
    return Value(
        Kind.TENSOR,
        dtype,
        source.zero_dim,
        count=source.count and integral,
        mask=source.mask,
        positions=source.positions,
        float_count=float_count,
        length=source.length,
        per_row=source.per_row,
    )


def data_dtype(node: cst.BaseExpression | None, value: Value | None) -> DType | None:
    """The dtype `torch.tensor(data)` infers from literal data or a known value."""
    if node is None:
        return None
    if isinstance(node, (cst.List, cst.Tuple)):
        dtypes = {data_dtype(element.value, None) for element in node.elements}
        if None in dtypes or not dtypes:
            return None
        if any(d.is_floating for d in dtypes):
            return DEFAULT_FLOAT
        return INT64 if INT64 in dtypes else BOOL
    if isinstance(node, cst.Float):
        return DEFAULT_FLOAT
    if isinstance(node, cst.Integer):
        return INT64
    if isinstance(node, cst.UnaryOperation) and isinstance(node.operator, cst.Minus):
        return data_dtype(node.expression, None)
    if isinstance(node, cst.Name) and node.value in ("True", "False"):
        return BOOL
    if value is None:
        return None
    if value.kind is Kind.PY_FLOAT:
        return DEFAULT_FLOAT
    if value.kind is Kind.PY_INT:
        return INT64
    if value.is_tensor:
        return value.dtype
    return None


def _shape_is_empty(node: cst.Call, qualified: str) -> bool | None:
    """Whether a factory's size is `()` / `[]` (a 0-dim tensor)."""
    size_args = [arg for arg in node.args if arg.keyword is None]
    if qualified == "torch.full":
        size_args = size_args[:1]
    if any(arg.star for arg in size_args):
        return None
    if len(size_args) == 1 and isinstance(size_args[0].value, (cst.Tuple, cst.List)):
        return len(size_args[0].value.elements) == 0
    if not size_args:
        size = find_arg(node, "size")
        if size is not None and isinstance(size.value, (cst.Tuple, cst.List)):
            return len(size.value.elements) == 0
        return None
    return False


__all__ = ["ExpressionEvaluator", "Env", "arithmetic", "same_place", "target_key"]
