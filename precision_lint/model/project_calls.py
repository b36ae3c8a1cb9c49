"""Calls into the project's own code: a function or method of this module, or of
another module through the project index. The callee's summary gives the value of
the call; the arguments are remembered per call site, so parameters can be given
what the project passes them."""
from __future__ import annotations

from dataclasses import replace
from typing import Protocol, Sequence

import libcst as cst

from .accumulators import Effect
from .runtime_dtype import model_data
from .summaries import FunctionSummary, bind_arguments
from .torch_api import NN_LAYER_MODULES
from .values import Kind, Value

Env = dict[str, Value]

# how far to look up base classes for a method (a cycle in bad code ends here)
_MAX_BASES = 8


class Callees(Protocol):
    """What the model builder answers for the interpreter (semantic._ModelBuilder)."""

    def function(self, qualified: str) -> FunctionSummary | None: ...

    def class_bases(self, qualified: str) -> tuple[str, ...] | None: ...

    def record_site(self, qualified: str, bindings: dict[str, Value]) -> None: ...

    def record_call(self, qualified: str, node: cst.Call, values: Sequence[Value]) -> None:
        """A call to a function that may be another module's, arguments unbound: the
        project index binds them once it knows the callee's parameters."""

    def follows(self, qualified: str) -> bool:
        """Whether the callee is interpreted with the arguments bound, so the uses of
        an accumulator passed to it are seen there."""


class NoCallees:
    """An interpreter run outside a model builder: nothing is the project's."""

    def function(self, qualified: str) -> FunctionSummary | None:
        return None

    def class_bases(self, qualified: str) -> tuple[str, ...] | None:
        return None

    def record_site(self, qualified: str, bindings: dict[str, Value]) -> None:
        pass

    def record_call(self, qualified: str, node: cst.Call, values: Sequence[Value]) -> None:
        pass

    def follows(self, qualified: str) -> bool:
        return False


class ProjectCalls:
    """Mixed into ExpressionEvaluator."""

    callees: Callees
    owner: str | None  # the class whose method is being interpreted

    def project_function_call(self, qualified: str, node: cst.Call, env: Env) -> Value | None:
        """`helper(x)`, `mod.helper(x)`, `Metric(...)`, `Metric.static(x)`; None when
        `qualified` is not the project's."""
        if self.callees.class_bases(qualified) is not None:
            values = self._eval_args(node, env)
            init = self.find_method(qualified, "__init__")
            if init is not None:
                self._apply(init, node, values, bound=True)
            else:
                self._consume_args(node, values, Effect.ESCAPES, f"passed to {_short(qualified)}()")
            return Value(Kind.INSTANCE, cls=qualified)
        summary = self.callees.function(qualified)
        if summary is None:
            return None
        values = self._eval_args(node, env)
        self.callees.record_call(summary.qualified, node, values)
        return self._apply(summary, node, values, bound=False)

    def project_method_call(self, node: cst.Call, receiver: Value, method: str, values: Sequence[Value]) -> Value | None:
        """`self.helper(x)` or `metric.update(x)` for an instance of a project class."""
        if receiver.kind is Kind.SELF:
            cls = self.owner
        elif receiver.kind is Kind.INSTANCE:
            cls = receiver.cls
        else:
            return None
        summary = self.find_method(cls, method) if cls is not None else None
        if summary is None:
            return None
        return self._apply(summary, node, values, bound=True)

    def call_instance(self, node: cst.Call, receiver: Value, values: Sequence[Value]) -> Value | None:
        """`self.metric(x)` / `model(x)` for an instance of a project class: its
        `forward` (nn.Module) or `__call__`."""
        if receiver.kind is not Kind.INSTANCE or receiver.cls is None:
            return None
        if receiver.cls.startswith(NN_LAYER_MODULES):
            # a torch.nn layer: floating data in the model's dtype
            self._consume_args(node, values, Effect.SAFE, f"passed to {receiver.cls.rpartition('.')[2]}")
            if receiver.cls.endswith("Linear"):
                self.matmul_like(node, values)
            return model_data(f"the output of a `{receiver.cls.rpartition('.')[2]}`")
        for method in ("forward", "__call__"):
            summary = self.find_method(receiver.cls, method)
            if summary is not None:
                return self._apply(summary, node, values, bound=True)
        return None

    def find_method(self, cls: str, name: str) -> FunctionSummary | None:
        """The method `name` of `cls` or of the first base that defines it."""
        pending, seen = [cls], set()
        while pending and len(seen) < _MAX_BASES:
            current = pending.pop(0)
            if current in seen:
                continue
            seen.add(current)
            summary = self.callees.function(f"{current}.{name}")
            if summary is not None:
                return summary
            pending.extend(self.callees.class_bases(current) or ())
        return None

    def _apply(self, summary: FunctionSummary, node: cst.Call, values: Sequence[Value], bound: bool) -> Value:
        bindings = bind_arguments(summary, node, values, bound)
        if bindings is not None:
            self.callees.record_site(summary.qualified, bindings)
        name = _short(summary.qualified)
        if bindings is not None and self.callees.follows(summary.qualified):
            self._consume_args(node, values, Effect.SAFE, f"passed to {name}(), which is followed")
        else:
            self._consume_args(node, values, Effect.ESCAPES, f"passed to {name}()")
        returns = summary.returns
        if summary.where is not None and returns.informative:
            via = f"`{name}()` ({summary.where})"
            returns = _with_via(returns, via)
            if returns.is_tensor and returns.dtype is not None and not returns.origins:
                # a tensor another module makes and hands over: an accumulator here
                made = self.creation(node, returns.dtype, returns.dtype_source, remote=via)
                returns = returns.with_origins(frozenset({made}))
        return returns


def _with_via(value: Value, via: str) -> Value:
    """The value, and what it holds (`a, b = f()`), marked as made by `via`."""
    if not value.informative:
        return value
    return replace(
        value,
        via=via,
        elements=tuple(_with_via(v, via) for v in value.elements),
        items=tuple((key, _with_via(v, via)) for key, v in value.items),
    )


def _short(qualified: str) -> str:
    """`pkg.metrics.Accuracy.update` -> `Accuracy.update`, `pkg.helpers.count` -> `helpers.count`."""
    parts = qualified.split(".")
    if len(parts) >= 2 and parts[-2][:1].isupper():
        return ".".join(parts[-2:])
    return ".".join(parts[-2:]) if len(parts) >= 2 else qualified
