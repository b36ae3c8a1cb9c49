"""Python containers as the interpreter meets them: tuples packed and unpacked, lists
of counts built with `append` or a comprehension, dicts of counters, and the builtins
that read them (`sum`, `len`, `zip`, `enumerate`, `range`). A container's value keeps
the values of what it holds, so `a, b = f(x)` and `torch.tensor(per_class)` see counts."""
from __future__ import annotations

from typing import Sequence

import libcst as cst

from .accumulators import Effect
from .dtypes import DEFAULT_FLOAT, INT64
from .syntax import target_key
from .values import UNKNOWN, Kind, Value, join

Env = dict[str, Value]

# the item of a dict made by a comprehension, which holds the same kind of value at
# every key
ANY_KEY = "<every key>"

# list methods that add their argument's items (`extend`) or the argument itself
_GROWING = {"append": False, "insert": False, "extend": True}


class ContainerEvaluation:
    """Mixed into ExpressionEvaluator: literals, comprehensions and the builtins of
    containers."""

    # -- literals ----------------------------------------------------------------
    def tuple_literal(self, node: cst.Tuple, env: Env) -> Value:
        elements = []
        for element in node.elements:
            value = self.eval(element.value, env)
            if type(element) is cst.StarredElement:
                self.consume(value, element, Effect.ESCAPES, "unpacked into a tuple")
                return UNKNOWN  # positions after a `*rest` are not known
            elements.append(value)
        return Value.tuple_of(elements)

    def list_literal(self, node: cst.List | cst.Set, env: Env) -> Value:
        covered: Value | None = None
        for element in node.elements:
            value = self.eval(element.value, env)
            if type(element) is cst.StarredElement:
                value = element_of(value)
            covered = value if covered is None else join(covered, value)
        return Value.list_of(covered)

    def dict_literal(self, node: cst.Dict, env: Env) -> Value:
        items = []
        for element in node.elements:
            if type(element) is cst.DictElement and type(element.key) is cst.SimpleString:
                key = element.key.evaluated_value
                value = self.eval(element.value, env)
                if isinstance(key, str):
                    items.append((key, value))
                    continue
                self.consume(value, element, Effect.ESCAPES, "stored under a key we cannot read")
                continue
            for part in (getattr(element, "key", None), element.value):
                if part is not None:
                    self.consume(self.eval(part, env), element, Effect.ESCAPES, "stored in a dict")
        return Value.dict_of(items)

    def comprehension(self, node: cst.BaseComp, env: Env) -> Value:
        """`[f(x) for x in xs if p(x)]`: a list of what `f(x)` is for an item of `xs`.
        The loop variables live in their own scope."""
        inner = dict(env)
        clause: cst.CompFor | None = node.for_in
        while clause is not None:
            iterated = self.eval(clause.iter, inner)
            self.consume(iterated, clause.iter, Effect.SAFE, "iterated over")
            self.bind(clause.target, element_of(iterated), inner, clause)
            for condition in clause.ifs:
                self.eval(condition.test, inner)
            clause = clause.inner_for_in
        if type(node) is cst.DictComp:
            self.eval(node.key, inner)
            return Value.dict_of([(ANY_KEY, self.eval(node.value, inner))])  # `{k: torch.zeros(1) for k in splits}`
        return Value.list_of(self.eval(node.elt, inner))

    # -- methods and builtins ------------------------------------------------------
    def grow_list(self, func: cst.Attribute, receiver: Value, method: str, values: Sequence[Value], env: Env) -> Value | None:
        """`counts.append(n)`: the list bound to `counts` now covers `n` too."""
        if receiver.kind is not Kind.LIST or method not in _GROWING or not values:
            return None
        added = element_of(values[-1]) if _GROWING[method] else values[-1]
        grown = Value.list_of(added if not receiver.elements else join(receiver.element, added))
        key = target_key(func.value, self.self_name)
        if key is not None:
            env[key] = self.on_bind(key, grown, accumulated=False)
        return Value(Kind.NONE)

    def container_method(self, receiver: Value, method: str) -> Value | None:
        """`stats.items()`, `stats.values()`, `stats.get("tokens")`, `pairs.copy()`."""
        if receiver.kind is Kind.DICT:
            values = Value.list_of(_covering(v for _, v in receiver.items))
            if method == "values":
                return values
            if method == "items":
                return Value.list_of(Value.tuple_of([Value(Kind.STR), values.element]))
            if method == "keys":
                return Value.list_of(Value(Kind.STR))
            if method == "copy":
                return receiver
        elif method == "copy":
            return receiver
        return None

    def container_builtin(self, name: str, node: cst.Call, values: Sequence[Value]) -> Value | None:
        """What `sum`, `len`, `list`, `zip`, `enumerate`, `range`, ... give; None for
        builtins that are not about containers."""
        first = values[0] if values else UNKNOWN
        if name == "sum" and values:
            return _sum_of(element_of(first), values[1] if len(values) > 1 else None, id(node))
        if name == "len":
            if first.kind is Kind.STR:
                return Value.py_int(count=True)  # characters: elements, not samples
            return Value.py_int(count=True, length=not first.flat)
        if name in ("list", "tuple", "sorted", "reversed", "set", "frozenset"):
            return Value.list_of(element_of(first)) if values else Value.list_of(None)
        if name == "range":
            return Value.list_of(Value.py_int())
        if name == "enumerate" and values:
            return Value.list_of(Value.tuple_of([Value.py_int(), element_of(first)]))
        if name == "zip" and values and not any(arg.star for arg in node.args):
            return Value.list_of(Value.tuple_of([element_of(v) for v in values]))
        if name in ("str", "repr", "format"):
            return Value(Kind.STR)
        if name in ("max", "min") and len(values) >= 2:
            covered = values[0]
            for value in values[1:]:
                covered = join(covered, value)
            return covered.without_origins()
        return None


def _covering(values) -> Value | None:
    covered = None
    for value in values:
        covered = value if covered is None else join(covered, value)
    return covered


def element_of(value: Value) -> Value:
    """One item of an iterable: of a list or tuple, what it holds; of a dict, a key."""
    if value.kind in (Kind.LIST, Kind.TUPLE):
        return value.element
    if value.kind is Kind.DICT or value.kind is Kind.STR:
        return Value(Kind.STR)
    return UNKNOWN


def _sum_of(item: Value, start: Value | None, site: int) -> Value:
    """`sum(counts)`: a count when the items are counts (a tensor once one is)."""
    if start is not None and start.kind is Kind.PY_FLOAT and item.count:
        if item.is_tensor:  # `0.0 + count_tensor`: a tensor in the default float dtype
            return Value.tensor(DEFAULT_FLOAT, item.zero_dim).with_float_count(site)
        return Value(Kind.PY_FLOAT, float_count=site, length=item.length)
    if item.count:
        if item.is_tensor:
            return Value.tensor(item.dtype or INT64, item.zero_dim, count=True, length=item.length)
        return Value.py_int(count=True, length=item.length)
    if item.float_count:
        return Value(item.kind, item.dtype, item.zero_dim, float_count=item.float_count, length=item.length)
    if item.kind is Kind.PY_INT:
        return Value.py_int()
    return UNKNOWN
