"""torch's API as the interpreter meets it in calls: factories, reductions,
conversions, collectives, module state and the uses of an accumulator. The names
are data in torch_api; this is what each kind of call does to values."""
from __future__ import annotations

import math
from dataclasses import replace
from typing import Sequence

import libcst as cst

from . import torch_api as api
from .accumulators import Effect, Fate
from .dtypes import BOOL, CONVERSION_METHODS, DEFAULT_FLOAT, FLOAT32, FLOAT64, INT32, INT64, LEGACY_TENSOR_TYPES, NUMPY_DTYPES, RUNTIME_FLOAT, DType, holds_counts_exactly
from .operations import (
    all_lengths,
    literal_size,
    cumulative,
    one_element,
    arithmetic,
    convert,
    converts_like_a_tensor,
    data_dtype,
    per_row_mask,
    reduce_sum,
    reshaped,
    scaled_by_alpha,
    shape_is_empty,
)
from .autocast import contracts
from .runtime_dtype import dtype_of, model_data, names_floating_data
from .syntax import find_arg, int_literal, public_attribute, same_place
from .values import UNKNOWN, Kind, Value

Env = dict[str, Value]

# the dtype_source of `torch.get_default_dtype()`: what `torch.set_default_dtype` decides
DEFAULT_DTYPE = "the default dtype"


def _zero_or_one(node: cst.BaseExpression) -> bool:
    if type(node) is cst.Float:
        try:
            return float(node.value) in (0.0, 1.0)
        except ValueError:
            return False
    return int_literal(node) in (0, 1)


def _wraps_counts(elements: Sequence[Value], dtype: DType | None) -> bool:
    """Whether data of counts (a count, or a count made a Python float) goes into a
    floating tensor."""
    return dtype is not None and dtype.is_floating and any(v.count or v.float_count for v in elements)


class TorchCalls:
    """Mixed into ExpressionEvaluator: the torch half of evaluating a call."""

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
            source = self._dtype_source(node, values)
            if not present:
                dtype, source = self._template_dtype(node.args[0].value if node.args else None, template)
            creation = self.creation(node, dtype, source)
            made = Value.tensor(dtype, template.zero_dim, mask=dtype == BOOL or qualified in api.ONES, origins=frozenset({creation}))
            return made.with_source(source)
        if module in api.LEGACY_CONSTRUCTOR_MODULES and attr in LEGACY_TENSOR_TYPES:
            return self._legacy_constructor(node, attr, values)
        if qualified in api.AUTOCAST_FUNCTIONS and (qualified != "torch.einsum" or contracts(node)):
            self.matmul_like(node, values)
        if qualified == "torch.meshgrid":  # a grid of each range: positions stay positions
            self._consume_args(node, values, Effect.SAFE, "read by torch.meshgrid()")
            ranges = [v for arg, v in zip(node.args, values) if arg.keyword is None and not arg.star]
            grids = [replace(Value.tensor(v.dtype, False), positions=v.positions) for v in ranges if v.is_tensor]
            return Value.tuple_of(grids) if grids and len(grids) == len(ranges) else Value.tensor(None)
        if qualified in api.CUMULATIVE_FUNCTIONS:
            self._consume_args(node, values, Effect.SAFE, f"read by {qualified}()")
            return cumulative(values[0] if values else UNKNOWN, id(node), *self._dtype_arg(node, values))
        if qualified in ("torch.nonzero", "torch.argwhere", "torch.masked_select", "torch.flatten"):
            self._consume_args(node, values, Effect.SAFE, f"read by {qualified}()")
            dtype = values[0].dtype if qualified.endswith(("masked_select", "flatten")) and values else INT64
            return Value.tensor(dtype, False, flat=True)
        if module == "numpy" and (qualified in api.NUMPY_FACTORIES or attr in NUMPY_DTYPES):
            return self._numpy_creation(qualified, attr, node, values)
        if qualified == "torch.get_default_dtype":
            return Value(Kind.DTYPE, DEFAULT_FLOAT, dtype_source=DEFAULT_DTYPE)
        if qualified in api.INDICATOR_FUNCTIONS:
            self._consume_args(node, values, Effect.SAFE, f"read by {qualified}()")
            return Value.tensor(INT64, False, mask=True)
        if qualified in api.MASK_FUNCTIONS:
            self._consume_args(node, values, Effect.SAFE, "compared")
            return Value.tensor(BOOL, mask=True)
        if qualified == "torch.histc":
            self._consume_args(node, values, Effect.SAFE, "counted by torch.histc()")
            return self.tally_root(node, FLOAT32)
        if qualified in api.COUNT_FUNCTIONS:
            self._consume_args(node, values, Effect.SAFE, "counted")
            weights = self.arg_value(node, values, find_arg(node, "weights", 1))
            if weights is not None:
                if self.adds_ones(weights):  # counts by adding float ones: a tally
                    return self.tally_root(node, weights.dtype if weights.is_floating else None)
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
            made = Value.tensor(dtype, False, positions=not _exponent_range(node))
            span = range_numbers(node, values)
            return replace(made, size=_range_length(*span)) if span is not None else made
        if qualified in api.REDUCING_COLLECTIVES:
            return self._collective(node, values, env)
        if qualified in ("torch.cat", "torch.stack", "torch.concat", "torch.concatenate"):
            self._consume_args(node, values, Effect.ESCAPES, f"packed by {qualified}()")
            return self._packed(node, node.args[0].value if node.args else None)
        if module == "builtins":
            contained = self.container_builtin(attr, node, values)
            if contained is not None:
                self._consume_args(node, values, Effect.SAFE, f"read by {attr}()")
                return contained
        if qualified == "builtins.int":
            self._consume_args(node, values, Effect.SAFE, "converted with int()")
            return Value.py_int(count=bool(values) and values[0].count, length=bool(values) and values[0].length)
        if qualified == "builtins.float":
            self._consume_args(node, values, Effect.SAFE, "converted with float()")
            # a count as a Python float: exact (float64), until it is wrapped into a
            # float32 tensor or added into one
            counted = bool(values) and (values[0].count or bool(values[0].float_count))
            return Value(Kind.PY_FLOAT, float_count=id(node) if counted else 0, length=counted and values[0].length)
        if qualified in api.READING_BUILTINS or qualified.startswith("logging."):
            self._consume_args(node, values, Effect.SAFE, f"read by {attr}()")
            return UNKNOWN
        if qualified in api.SAFE_COLLECTIVES or qualified in api.READING_TORCH_FUNCTIONS:
            self._consume_args(node, values, Effect.SAFE, f"read by {qualified}()")
            return Value.tensor(None)
        if qualified in api.BREAKING_TORCH_FUNCTIONS:
            self._consume_args(node, values, Effect.BREAKS, f"passed to {qualified}(), which fails on integer tensors")
            return Value.tensor(None)
        if qualified in api.NN_PARAMETER:
            self._consume_args(node, values, Effect.ESCAPES, "made a parameter")
            return model_data("a parameter of the model")
        if qualified.startswith(api.NN_LAYER_MODULES) and attr[:1].isupper():
            self._consume_args(node, values, Effect.SAFE, f"configures {attr}")
            return Value(Kind.INSTANCE, cls=qualified)  # `nn.Linear(d, e)`: a layer
        self._consume_args(node, values, Effect.ESCAPES, f"passed to {qualified}()")
        if qualified in api.FLOAT_OUTPUT_FUNCTIONS:
            present, dtype = self._dtype_arg(node, values)
            if present:  # `F.log_softmax(logits, -1, dtype=torch.float)`: computed in that dtype
                return Value.tensor(dtype)
            if values and values[0].dtype is RUNTIME_FLOAT:
                return model_data(values[0].dtype_source or f"the output of `{attr}`")
        if module == "math":
            return Value.py_int() if attr in api.MATH_INT_FUNCTIONS else Value(Kind.PY_FLOAT)
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
                zero_dim = type(data_arg.value) not in (cst.List, cst.Tuple)
                mixed, packed_dtype = self.packing(data_arg.value)
                if mixed and not present:  # `torch.tensor([loss_sum, n])`: the count goes float
                    dtype, float_count = packed_dtype or DEFAULT_FLOAT, id(node)
                elements = self._elements(data_arg.value, data)
                length = all_lengths(elements)
                if elements and all(v.count or v.kind is Kind.PY_INT for v in elements) and any(v.count for v in elements):
                    count = dtype is None or not dtype.is_floating  # `torch.tensor([n])` of a len()
                    dtype = dtype if present else INT64
                if not count and not float_count and _wraps_counts(elements, dtype):
                    float_count = id(node)  # `torch.tensor(n, dtype=torch.float)`, `torch.tensor([float(n)])`
        else:
            zero_dim = shape_is_empty(node, qualified)
            if qualified == "torch.full" and data is not None and _wraps_counts([data], dtype):
                float_count = id(node)  # `torch.full((k,), float(n))`
            elif qualified == "torch.full" and data is not None and data.count and not (dtype and dtype.is_floating):
                count = True
        source = self._dtype_source(node, values)
        creation = self.creation(
            node, dtype, source,
            from_default=(not present and dtype == DEFAULT_FLOAT) or source == DEFAULT_DTYPE,
            scalar=one_element(node, qualified),
        )  # fmt: skip
        return Value(
            Kind.TENSOR, dtype, zero_dim, count=count, mask=dtype == BOOL or qualified in api.ONES,
            origins=frozenset({creation}), float_count=float_count,
            length=length and (count or bool(float_count)), dtype_source=source,
            size=literal_size(node, qualified, [self.values.get(id(a.value)) for a in node.args]),
        )  # fmt: skip

    # -- counting with float ones (PH006) -------------------------------------------------
    def tally_root(self, node: cst.Call, dtype: DType | None) -> Value:
        """The result of counting with float ones (`torch.histc(x)`): a tally."""
        creation = self.creation(node, dtype, tally=True)
        return Value.tensor(dtype, False, origins=frozenset({creation}))

    def adds_ones(self, value: Value) -> bool:
        """Ones made to count with (`torch.ones(...)`, `x.new_ones(...)`) or a float mask."""
        for creation in value.origins:
            fact = self.calls.get(id(creation.node))
            if fact is not None and (fact.qualified or fact.method) in api.ONES:
                return True
        return value.mask and value.is_floating

    def _scatter_of_ones(self, node: cst.Call, func: cst.Attribute, receiver: Value, method: str, values: Sequence[Value]) -> Fate | None:
        """`buf.scatter_add_(dim, index, torch.ones(...))`: the buffer counts, a tally.
        Its counts outlive the call when the buffer does (state, a global, a tensor made
        outside the loop that counts into it). None: not a scatter of ones."""
        if method not in api.SCATTER_ADD_METHODS:
            return None
        keyword, position = api.SCATTER_ADD_METHODS[method]
        if method == "index_put_":
            accumulate = find_arg(node, "accumulate", 2)
            if accumulate is None or not (type(accumulate.value) is cst.Name and accumulate.value.value == "True"):
                return None
        source = self.arg_value(node, values, find_arg(node, keyword, position))
        if source is None or not self.adds_ones(source):
            return None
        for creation in receiver.origins:
            self.mark(creation, tally=True)
        return Fate.KEPT if any(self.outlives_here(c) for c in receiver.origins) else Fate.LOCAL

    def _template_dtype(self, node: cst.BaseExpression | None, template: Value) -> tuple[DType | None, str | None]:
        """The dtype a tensor made or converted like `template` gets (`zeros_like(x)`,
        `x.new_ones(n)`, `c.type_as(x)`), and why it is the model's when it is."""
        if template.dtype is not None:
            return template.dtype, template.dtype_source
        model = dtype_of(node, template, self.in_module) if node is not None else None
        return (model.dtype, model.dtype_source) if model is not None else (None, None)

    def _dtype_source(self, node: cst.Call, values: Sequence[Value]) -> str | None:
        value = self.arg_value(node, values, find_arg(node, "dtype"))
        return value.dtype_source if value is not None else None

    def _converted_at_creation(
        self, node: cst.Call, func: cst.Attribute, receiver: Value, method: str, values: Sequence[Value]
    ) -> Value | None:
        """`torch.zeros(1).half()`: a tensor converted where it is made is the
        accumulator, in the converted dtype (the fix rewrites the conversion)."""
        if not any(creation.node is func.value for creation in receiver.origins):
            return None
        if method in CONVERSION_METHODS:
            dtype = CONVERSION_METHODS[method]
        elif method in ("to", "type"):
            dtypes = [v.dtype for v in values if v.kind is Kind.DTYPE]
            if len(dtypes) != 1 or dtypes[0] is None:
                return None
            dtype = dtypes[0]
        else:
            return None
        self._consume_args(node, values, Effect.SAFE, f"argument of .{method}()")
        scalar = any(creation.scalar for creation in receiver.origins)
        if receiver.tallies and dtype.is_floating and dtype is not FLOAT64:  # `torch.histc(x).half()`
            made = self.creation(node, dtype, scalar=scalar, tally=True, parents=receiver.tallies)
        else:
            made = self.creation(node, dtype, scalar=scalar)
        return replace(convert(receiver, dtype), origins=frozenset({made}))

    def _numpy_creation(self, qualified: str, attr: str, node: cst.Call, values: Sequence[Value]) -> Value:
        """`np.int32(0)`, `np.zeros(k, dtype=np.int32)`, `np.array([0], dtype="int32")`:
        an integer array made with a known dtype is an accumulator candidate."""
        self._consume_args(node, values, Effect.SAFE, "shapes a new array")
        if attr in NUMPY_DTYPES:
            dtype, zero_dim = NUMPY_DTYPES[attr], True
        else:
            arg = find_arg(node, "dtype")
            text = arg.value.evaluated_value if arg is not None and type(arg.value) is cst.SimpleString else None
            value = self.arg_value(node, values, arg)
            dtype = NUMPY_DTYPES.get(text) if isinstance(text, str) else (value.dtype if value is not None and value.kind is Kind.DTYPE else None)
            zero_dim = False
        if dtype is None or dtype.is_floating:
            return Value.tensor(dtype, zero_dim)  # floats: NumPy sums float64 by default
        return Value.tensor(dtype, zero_dim, origins=frozenset({self.creation(node, dtype)}))

    def _legacy_constructor(self, node: cst.Call, name: str, values: Sequence[Value]) -> Value:
        """`torch.cuda.FloatTensor([0])`, `get_accelerator().FloatTensor([float(n)])`."""
        self._consume_args(node, values, Effect.SAFE, "shapes a new tensor")
        dtype = LEGACY_TENSOR_TYPES[name]
        # `FloatTensor([float(n)])` wraps data; `HalfTensor(b, c, t)` only takes a shape
        data = node.args[0].value if node.args and type(node.args[0].value) in (cst.List, cst.Tuple) else None
        wrapped = data is not None and _wraps_counts(self._elements(data, values[0]), dtype)
        self.creation(node, dtype, scalar=one_element(node, "torch.tensor"))
        return Value.tensor(dtype, False, origins=frozenset({self.creation(node, dtype)})).with_float_count(
            id(node) if wrapped else 0
        )

    def _elements(self, data: cst.BaseExpression | None, value: Value | None) -> list[Value]:
        """The values of a literal list/tuple's elements, of a list or tuple value
        (`torch.tensor(per_class)`), or the data's own value."""
        if type(data) in (cst.List, cst.Tuple):
            return [v for e in data.elements if (v := self.values.get(id(e.value))) is not None]
        if value is not None and value.kind in (Kind.LIST, Kind.TUPLE):
            return list(value.elements)
        return [value] if value is not None else []

    def packing(self, container: cst.BaseExpression | None) -> tuple[bool, DType | None]:
        """Whether a list/tuple literal mixes a count with floats, and the float dtype."""
        if type(container) not in (cst.List, cst.Tuple):
            return False, None
        elements = [v for e in container.elements if (v := self.values.get(id(e.value))) is not None]
        # counts, and int32/int64 tensors that are neither positions (they fail later as
        # an index), masks nor bit patterns (uint8, int16 views)
        has_count = any(v.count or (v.is_tensor and v.dtype in (INT32, INT64) and not (v.positions or v.mask)) for v in elements)
        floats = [v for v in elements if v.is_floating and not v.count]
        if not (has_count and floats):
            return False, None
        dtypes = {v.dtype for v in floats if v.is_tensor and v.dtype is not None}
        return True, (dtypes.pop() if len(dtypes) == 1 else (DEFAULT_FLOAT if not dtypes else None))

    def _packed(self, node: cst.Call, container: cst.BaseExpression | None) -> Value:
        """`torch.cat` / `torch.stack` of tensors: counts stay counts, a count packed
        with floats becomes a float (`float_count`)."""
        mixed, dtype = self.packing(container)
        elements = self._elements(container, self.values.get(id(container)) if container is not None else None)
        if mixed:
            return Value(Kind.TENSOR, dtype, False, float_count=id(node), length=all_lengths(elements))
        tensors = [v for v in elements if v.is_tensor]
        dtypes = {v.dtype for v in tensors}
        if not tensors or len(dtypes) != 1 or len(tensors) != len(elements):
            return Value.tensor(None)
        (dtype,) = dtypes
        counted = all(v.count for v in tensors)
        return Value.tensor(
            dtype, False, count=counted, mask=all(v.mask for v in tensors), length=counted and all_lengths(elements),
            positions=all(v.positions for v in tensors),
        ).with_float_count(next((v.float_count for v in tensors if v.float_count), 0))

    def _torch_add(self, node: cst.Call, values: Sequence[Value], env: Env, subtract: bool) -> Value:
        out = find_arg(node, "out")
        first, second = find_arg(node, "input", 0), find_arg(node, "other", 1)
        if out is not None and first is not None and second is not None:
            for target, addend in ((first, second), (second, first)):
                if same_place(out.value, target.value) and not (subtract and target is second):
                    target_value = self.arg_value(node, values, target) or UNKNOWN
                    addend_value = scaled_by_alpha(node, values, self.arg_value(node, values, addend) or UNKNOWN)
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
            self.consume(tensor_value, tensor_arg, effect, reason, Fate.KEPT)  # summed across ranks
        self._consume_args(node, values, Effect.SAFE, "collective argument", skip=(tensor_arg,))
        return UNKNOWN

    def _method_call(self, node: cst.Call, func: cst.Attribute, env: Env) -> Value:
        receiver = self.eval(func.value, env)
        method = func.attr.value
        values = self._eval_args(node, env)
        if receiver.kind is Kind.SELF and method in (api.REGISTER_BUFFER, api.ADD_STATE):
            return self._register_state(node, method, values, env)
        if method == "histc" and receiver.kind in (Kind.TENSOR, Kind.UNKNOWN):
            self.consume(receiver, func, Effect.SAFE, "counted by .histc()")
            self._consume_args(node, values, Effect.SAFE, "argument of .histc()")
            return self.tally_root(node, FLOAT32)
        if receiver.is_container:
            contained = self.grow_list(func, receiver, method, values, env) or self.container_method(receiver, method)
            if contained is not None:
                return contained
        project = self.project_method_call(node, receiver, method, values)
        if project is None and receiver.kind is Kind.SELF:
            # `self.metric(x)`: an attribute holding an instance of a project class
            project = self.call_instance(node, self.lookup(f"self.{method}", env), values)
        if project is not None:
            return project
        if receiver.origins:
            return self._accumulator_method(node, func, receiver, method, values)
        return self._value_method(node, receiver, method, values)

    def _register_state(self, node: cst.Call, method: str, values: Sequence[Value], env: Env) -> Value:
        name_arg = find_arg(node, "name", 0)
        tensor_arg = find_arg(node, "tensor" if method == api.REGISTER_BUFFER else "default", 1)
        tensor = self.arg_value(node, values, tensor_arg)
        self._consume_args(node, values, Effect.SAFE, "state option", skip=(tensor_arg,))
        if name_arg is None or type(name_arg.value) is not cst.SimpleString or tensor is None or tensor_arg is None:
            if tensor is not None and tensor_arg is not None:
                self.consume(tensor, tensor_arg, Effect.ESCAPES, f"registered with {method}()")
            return UNKNOWN
        key = f"self.{name_arg.value.evaluated_value}"
        for creation in tensor.origins:
            self.mark(creation, module_state=True)  # `model.half()` casts it with the module
        if tensor.tallies:
            self.consume(tensor, tensor_arg, Effect.SAFE, f"made module state with {method}()", Fate.KEPT)
        if method == api.REGISTER_BUFFER:
            self.consume(tensor, tensor_arg, Effect.ESCAPES, "registered as a buffer (saved in state_dict)")
            tensor = replace(tensor, buffer=True)
        else:
            reduce_arg = find_arg(node, "dist_reduce_fx", 2)
            reduce_fx = reduce_arg.value.evaluated_value if reduce_arg and type(reduce_arg.value) is cst.SimpleString else None
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
            addend = scaled_by_alpha(node, values, first)
            return self.accumulate(node, receiver, node.args[0].value, addend, in_place=True)
        converted = self._converted_at_creation(node, func, receiver, method, values)
        if converted is not None:
            return converted
        effect, reason = Effect.ESCAPES, f"used with .{method}()"
        fate = self._scatter_of_ones(node, func, receiver, method, values)
        if method in api.COPY_METHODS and node.args:
            # `state.copy_(h)`: h's values now live in the receiver
            kept = any(self.outlives_here(c) for c in receiver.origins)
            self.consume(values[0], node.args[0], Effect.SAFE, f"copied into a tensor with .{method}()", Fate.KEPT if kept else Fate.ESCAPES)
        result = UNKNOWN
        if method in api.INPLACE_SCALE_METHODS or method in api.FILL_METHODS:
            literal = node.args[0].value if node.args else None
            whole_literal = type(literal) is cst.Float and float(literal.value).is_integer()
            if first.is_integral or whole_literal:  # `fill_(0.0)` is fine on int64, `mul_(0.5)` is not
                effect, reason = Effect.SAFE, f"updated with .{method}() and a whole number"
            elif first.is_floating:
                effect, reason = Effect.BREAKS, f"updated with .{method}() and a float, which fails on int64"
            result = receiver
        elif method in api.ALIAS_METHODS:
            effect, reason, result = Effect.SAFE, f"moved or viewed with .{method}()", receiver
        elif method in api.BREAKING_METHODS:
            effect, reason = Effect.BREAKS, f"used with .{method}(), which fails on int64"
        elif method == "to" and not any(v.kind is Kind.DTYPE or converts_like_a_tensor(node, v) for v in values):
            effect, reason, result = Effect.SAFE, "moved with .to()", receiver
        elif method in api.READING_METHODS or method in api.NEW_METHODS:
            effect, reason = Effect.SAFE, f"read by .{method}()"
            if method.endswith("_"):
                result = receiver  # `acc.zero_()` is still the accumulator
            else:
                result = self._value_method(node, receiver.without_origins(), method, values, consume_args=False)
        if result is UNKNOWN and method.endswith("_"):
            result = receiver  # an in-place method returns its own tensor
        elif method in api.TALLY_KEEPING_METHODS and receiver.tallies and not _exact_from_here(method, values):
            result = self.derived_tally(node, result, receiver.tallies)  # `h.tolist()`: the same counts
        self.consume(receiver, func, effect, reason, fate)
        self._consume_args(node, values, Effect.SAFE, f"argument of .{method}()")
        return result

    def _value_method(
        self, node: cst.Call, receiver: Value, method: str, values: Sequence[Value], consume_args: bool = True
    ) -> Value:
        if method in api.AUTOCAST_METHODS:
            self.matmul_like(node, [receiver, *values])
        if method in api.LOGGING_METHODS:
            self._consume_args(node, values, Effect.SAFE, f"logged with .{method}()")
            return UNKNOWN
        if method in LEGACY_TENSOR_TYPES and method != "Tensor" and not receiver.is_tensor:
            return self._legacy_constructor(node, method, values)
        if consume_args:
            self._consume_args(node, values, Effect.ESCAPES, f"passed to .{method}()")
        if method in api.NEW_METHODS:
            present, dtype = self._dtype_arg(node, values)
            source = self._dtype_source(node, values)
            if not present:
                dtype, source = self._template_dtype(node.func.value, receiver)
            creation = self.creation(node, dtype, source, scalar=one_element(node, "torch.zeros"))
            made = Value.tensor(dtype, None, mask=method in api.ONES, origins=frozenset({creation}))
            return made.with_source(source)
        if method in api.CUMULATIVE_METHODS:
            return cumulative(receiver, id(node), *self._dtype_arg(node, values))
        if method in ("masked_fill", "where") and receiver.mask and node.args and _zero_or_one(node.args[-1].value):
            return receiver  # 0/1 values filled with 0 or 1 stay 0/1: still counted by a sum
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
            return per_row_mask(Value.tensor(BOOL, receiver.zero_dim, mask=True), [receiver, *values])
        if method in CONVERSION_METHODS:
            return convert(receiver, CONVERSION_METHODS[method], site=id(node))
        if method in ("to", "type"):
            for arg, value in zip(node.args, values):
                if value.kind is Kind.DTYPE:
                    if value.dtype is None:
                        return Value.tensor(None)
                    return convert(receiver, value.dtype, site=id(node), dtype_source=value.dtype_source)
                if method == "to" and converts_like_a_tensor(node, value):
                    dtype, source = self._template_dtype(arg.value, value)  # `x.to(other)`: other's dtype
                    return convert(receiver, dtype, site=id(node), dtype_source=source)
            return receiver
        if method == "type_as":
            template = values[0] if values else UNKNOWN
            dtype, source = self._template_dtype(node.args[0].value if node.args else None, template)
            if dtype is None and not template.is_tensor:
                return Value.tensor(None)
            return convert(receiver, dtype, site=id(node), dtype_source=source)
        if method in api.ALIAS_METHODS or (method.endswith("_") and not method.startswith("_")):
            return reshaped(receiver, method, node)  # in-place methods (`scatter_`) return their tensor
        if method == "item":
            if receiver.is_integral:
                return Value.py_int(count=receiver.count, length=receiver.length)
            floating = receiver.is_floating or (receiver.kind is Kind.UNKNOWN and names_floating_data(node.func.value, self.in_module))
            return Value(Kind.PY_FLOAT) if floating else UNKNOWN  # `out.loss.item()`: a Python float
        if method in ("nonzero", "argwhere"):
            return Value.tensor(INT64, False, flat=True)
        if method == "masked_select":
            return Value.tensor(receiver.dtype, False, flat=True)
        if method in ("add", "sub") and values:
            return arithmetic(cst.Add() if method == "add" else cst.Subtract(), receiver, values[0])
        if method == "mean" and receiver.is_floating:
            return Value.tensor(receiver.dtype)
        if method in api.FLOAT_OUTPUT_METHODS and receiver.is_tensor:
            present, dtype = self._dtype_arg(node, values)
            if present:  # `logits.softmax(-1, dtype=torch.float32)`
                return Value.tensor(dtype)
            if receiver.dtype is RUNTIME_FLOAT:
                return model_data(receiver.dtype_source or f"the output of `.{method}()`")
        if method in api.DTYPE_KEEPING_METHODS and receiver.is_tensor and receiver.dtype is not None:
            # its dtype is known: asked for it later (`mask.type_as(scores)`), it is not
            # guessed from the name it is given
            return Value.tensor(receiver.dtype).with_source(receiver.dtype_source)
        return UNKNOWN

    def _reduces_rows(self, node: cst.Call) -> bool:
        """`x.reshape(n, -1).sum(-1)` (or `.view`, `dim=1`) with `n` a length: one
        value per sample."""
        dim = find_arg(node, "dim", 0)
        rows = node.func.value if type(node.func) is cst.Attribute else None
        if dim is None or int_literal(dim.value) not in (-1, 1):
            return False
        if not (type(rows) is cst.Call and type(rows.func) is cst.Attribute):
            return False
        if rows.func.attr.value not in ("reshape", "view") or len(rows.args) != 2:
            return False
        first = self.values.get(id(rows.args[0].value))
        return first is not None and first.length and int_literal(rows.args[1].value) == -1


def _exact_from_here(method: str, values: Sequence[Value]) -> bool:
    """`h.to(torch.float64)`, `h.type(torch.long)`: counts converted where they are exact."""
    if method not in ("to", "type"):
        return False
    dtypes = [v.dtype for v in values if v.kind is Kind.DTYPE]
    return bool(dtypes) and all(holds_counts_exactly(d) for d in dtypes)


def range_numbers(arange: cst.Call, values: Sequence[Value]) -> tuple[float, float, float] | None:
    """(start, end, step) of `torch.arange(...)` when they are all known numbers."""
    if any(a.star for a in arange.args):
        return None
    positional = [v for a, v in zip(arange.args, values) if a.keyword is None]
    named = {a.keyword.value: v for a, v in zip(arange.args, values) if a.keyword is not None}
    zero, one = Value.py_int(number=0), Value.py_int(number=1)
    if len(positional) == 1 and "end" not in named:
        start, end, step = zero, positional[0], named.get("step", one)
    elif len(positional) >= 2:
        start, end = positional[0], positional[1]
        step = positional[2] if len(positional) > 2 else named.get("step", one)
    else:
        start = positional[0] if positional else named.get("start", zero)
        end, step = named.get("end"), named.get("step", one)
    if end is None or len(positional) > 3:
        return None
    numbers = [v.number for v in (start, end, step)]
    if any(n is None for n in numbers) or numbers[2] == 0:
        return None
    return numbers[0], numbers[1], numbers[2]  # type: ignore[return-value]


def _range_length(start: float, end: float, step: float) -> int:
    return max(0, math.ceil((end - start) / step))


def _exponent_range(arange: cst.Call) -> bool:
    """`torch.arange(0, dim, 2)`: the even indices below a head dimension, the
    exponents of rotary frequencies, not positions along a sequence."""
    bounds = [int_literal(a.value) for a in arange.args if a.keyword is None]
    return len(bounds) == 3 and bounds[0] == 0 and bounds[2] is not None and bounds[2] >= 2
