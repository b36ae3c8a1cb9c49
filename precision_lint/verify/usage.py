"""What the synthesized inputs must look like, read from how the code uses them.

An input is reached through an access path: a name, then attributes and string keys
(`batch["labels"]`, `self.num_classes`, `param.grad`). For each path this records
what the code does with it: compares it with -100 or NaN (so the values carry
those), reduces it along dim=1 (2-D), uses it as an index (int64 in range), as a
size (a small int), as a device, splits it (a string), iterates it (a sequence of
what the loop variable is used as), calls it. The child process turns the facts
into values with torch's knowledge of which attributes a tensor has.

No torch here.
"""
from __future__ import annotations

import math
import re
from dataclasses import dataclass, field

import libcst as cst

from ..model.imports import ImportMap, dotted_name
from .source_view import all_nodes

STRING_METHODS = frozenset(
    {
        "lower", "upper", "strip", "lstrip", "rstrip", "startswith", "endswith", "replace",
        "splitlines", "encode", "isdigit", "isalpha", "isspace", "casefold", "title", "find",
        "rsplit", "partition", "rpartition", "zfill", "isalnum", "islower", "isupper",
    }
)  # fmt: skip
# calls whose positional arguments are sizes
SIZE_CALLS = frozenset(
    {
        "zeros", "ones", "empty", "full", "rand", "randn", "eye", "arange", "range", "new_zeros",
        "new_ones", "new_empty", "new_full", "view", "reshape", "expand", "repeat", "Size",
        "linspace", "tensor_split", "randperm", "FloatTensor", "LongTensor", "IntTensor",
        "HalfTensor", "BFloat16Tensor", "DoubleTensor", "Tensor",
        # layers built from sizes (`nn.Linear(hidden_size, num_experts)`)
        "Linear", "Embedding", "EmbeddingBag", "LayerNorm", "RMSNorm", "GroupNorm", "Bilinear",
        "Conv1d", "Conv2d", "Conv3d", "BatchNorm1d", "BatchNorm2d",
    }
)  # fmt: skip
SIZE_KEYWORDS = frozenset({"minlength", "num_classes", "bins", "size", "steps", "end", "out_features", "num_embeddings"})
# method -> position of its index argument (0-based, after the receiver)
INDEX_METHODS = {
    "scatter_add_": 1, "scatter_add": 1, "scatter_": 1, "scatter": 1, "scatter_reduce_": 1,
    "scatter_reduce": 1, "index_add_": 1, "index_add": 1, "index_copy_": 1, "index_fill_": 1,
    "index_select": 1, "gather": 1, "take": 0, "index_reduce_": 1,
}  # fmt: skip
INDEX_FUNCTIONS = {"bincount": 0, "one_hot": 0, "embedding": 0, "index_select": 2, "gather": 2}
NAN_PREDICATES = {"isnan": ("nan",), "isinf": ("inf", "-inf"), "isposinf": ("inf",), "isneginf": ("-inf",),
                  "isfinite": ("nan", "inf", "-inf"), "nan_to_num": ("nan", "inf", "-inf")}  # fmt: skip
COMPARISON_METHODS = frozenset({"eq", "ne", "lt", "le", "gt", "ge", "greater", "less", "not_equal", "greater_equal", "less_equal"})
REDUCTIONS = frozenset(
    {"sum", "argmax", "argmin", "max", "min", "amax", "amin", "any", "all", "mean", "count_nonzero", "softmax", "log_softmax", "topk", "nansum", "prod", "cumsum", "logsumexp"}
)  # fmt: skip
BIT_OPERATORS = (cst.BitAnd, cst.BitOr, cst.BitXor)
ARITHMETIC = (cst.Add, cst.Subtract, cst.Multiply, cst.FloorDivide)
SETTING_VALUE = 7  # what an unset setting compared with data holds (the data carries it too)
# methods that give back the same data: `x = batch["labels"].to(device)` is still batch["labels"]
ALIAS_METHODS = frozenset({"to", "cuda", "cpu", "detach", "clone", "contiguous", "view", "reshape", "flatten", "long", "float", "int", "bool", "squeeze", "unsqueeze", "double", "half", "bfloat16"})


# names of data that holds integers (token ids, labels): synthesized as int64, so
# `torch.ones_like(ids).sum()` is a count as it is in the code's real runs
INTEGER_NAME = re.compile(r"(^|_)(ids|idx|indices|labels?|tokens?)$")


@dataclass
class PathFacts:
    roles: set[str] = field(default_factory=set)
    specials: set = field(default_factory=set)
    dims: int = 1
    index_range: int | None = None
    long_dim: int | None = None  # a dimension used as a length of positions
    length: int | None = None  # an index scattered with a source of this literal length
    attrs: dict[str, "PathFacts"] = field(default_factory=dict)
    called_attrs: dict[str, "PathFacts"] = field(default_factory=dict)  # `x.parameters()` -> the result
    items: dict[str, "PathFacts"] = field(default_factory=dict)
    elem: "PathFacts | None" = None
    result: "PathFacts | None" = None  # the path itself called

    def child(self, table: str, key: str) -> "PathFacts":
        children = getattr(self, table)
        if key not in children:
            children[key] = PathFacts()
        return children[key]

    def element(self) -> "PathFacts":
        if self.elem is None:
            self.elem = PathFacts()
        return self.elem

    def call_result(self) -> "PathFacts":
        if self.result is None:
            self.result = PathFacts()
        return self.result

    def to_spec(self, depth: int = 0) -> dict:
        if depth > 6:
            return {"roles": []}
        spec: dict = {"roles": sorted(self.roles)}
        if self.specials:
            spec["specials"] = sorted(self.specials, key=repr)
        if self.dims > 1:
            spec["dims"] = self.dims
        if self.index_range is not None:
            spec["index_range"] = self.index_range
        if self.long_dim is not None:
            spec["long_dim"] = self.long_dim
        if self.length is not None:
            spec["length"] = self.length
        for table in ("attrs", "called_attrs", "items"):
            children = getattr(self, table)
            if children:
                spec[table] = {k: v.to_spec(depth + 1) for k, v in sorted(children.items())}
        if self.elem is not None:
            spec["elem"] = self.elem.to_spec(depth + 1)
        if self.result is not None:
            spec["result"] = self.result.to_spec(depth + 1)
        return spec


class UsageAnalysis:
    """Facts about every access path rooted at a name, over some scopes (a function,
    the methods of a class). `constants` gives the values of names and paths the
    code compares with (`self.ignore_index` -> -100, `PAD = 0` at module level)."""

    def __init__(self, imports: ImportMap, constants: dict[str, object] | None = None, buffer_size: int = 2) -> None:
        self.imports = imports
        self.constants = constants or {}
        self.buffer_size = buffer_size
        self.roots: dict[str, PathFacts] = {}
        self.aliases: dict[str, tuple[str, tuple]] = {}  # local name -> (root, accessors)
        self.derived: list[tuple[tuple, list]] = []

    # -- paths ------------------------------------------------------------------
    def path_of(self, node: cst.BaseExpression) -> tuple[str, tuple] | None:
        """`batch["labels"].x` -> ("batch", (("items", "labels"), ("attrs", "x")))."""
        accessors: list[tuple[str, str]] = []
        current = node
        while True:
            if isinstance(current, cst.Name):
                root, prefix = current.value, ()
                if root in self.aliases:
                    root, prefix = self.aliases[root]
                return root, tuple(prefix) + tuple(reversed(accessors))
            if isinstance(current, cst.Attribute):
                accessors.append(("attrs", current.attr.value))
                current = current.value
            elif isinstance(current, cst.Subscript) and len(current.slice) == 1 and isinstance(current.slice[0].slice, cst.Index):
                key = current.slice[0].slice.value
                if isinstance(key, cst.SimpleString):
                    accessors.append(("items", str(key.evaluated_value)))
                    current = current.value
                else:
                    return None
            else:
                return None

    def facts(self, path: tuple[str, tuple]) -> PathFacts:
        root, accessors = path
        node = self.roots.setdefault(root, PathFacts())
        name = root
        for table, key in accessors:
            if table == "elem":
                node = node.element()
            elif table == "result":
                node = node.call_result()
                name = ""
            else:
                node = node.child(table, key)
                name = key
        if INTEGER_NAME.search(name):
            node.roles.add("integer")
        return node

    def facts_of(self, node: cst.BaseExpression) -> PathFacts | None:
        path = self.path_of(node)
        return None if path is None else self.facts(path)

    # -- the walk -----------------------------------------------------------------
    def analyse(self, scope: cst.CSTNode, parents: dict[int, cst.CSTNode]) -> None:
        self._parents = parents
        nodes = list(all_nodes(scope))
        self._aliases(nodes)
        self._derived_sizes(nodes)
        # loop variables first: a comprehension's element is read before its `for`
        for node in nodes:
            if isinstance(node, (cst.For, cst.CompFor)):
                self._iteration(node.target, node.iter)
        for node in nodes:
            if isinstance(node, (cst.Name, cst.Attribute, cst.Subscript)):
                facts = self.facts_of(node) if self._is_outermost_path(node, parents) else None
                if facts is not None:
                    self._context(node, facts, parents)

    def _is_outermost_path(self, node, parents) -> bool:
        """A method's callee (`x.item` in `x.item()`) is recorded from its receiver."""
        parent = parents.get(id(node))
        return not (isinstance(node, cst.Attribute) and isinstance(parent, cst.Call) and parent.func is node)

    def _aliases(self, nodes) -> None:
        """`x = batch["labels"].to(device)`: what is learnt about x is about the path;
        `self.dim = dim` in `__init__`: what is learnt about `self.dim` is about `dim`."""
        for node in nodes:
            if isinstance(node, cst.Assign) and len(node.targets) == 1 and isinstance(node.targets[0].target, cst.Attribute) and isinstance(node.value, cst.Name):
                target = self.path_of(node.targets[0].target)
                if target is not None and target[0] != node.value.value and node.value.value not in self.aliases:
                    self.aliases[node.value.value] = target
            if isinstance(node, cst.Assign) and len(node.targets) == 1 and isinstance(node.targets[0].target, cst.Name):
                name = node.targets[0].target.value
                value = node.value
                while isinstance(value, cst.Call) and isinstance(value.func, cst.Attribute) and value.func.attr.value in ALIAS_METHODS:
                    value = value.func.value
                path = self.path_of(value) if isinstance(value, (cst.Attribute, cst.Subscript)) else None
                if path is not None and path[0] != name:
                    self.aliases[name] = path

    def _derived_sizes(self, nodes) -> None:
        """`total = seq_len + past`, `grid = tile // patch`: sizes made from sizes."""
        for node in nodes:
            if isinstance(node, cst.Assign) and len(node.targets) == 1 and isinstance(node.value, cst.BinaryOperation):
                target = self.path_of(node.targets[0].target) if isinstance(node.targets[0].target, (cst.Name, cst.Attribute)) else None
                leaves = _arithmetic_leaves(node.value)
                if target is not None and leaves:
                    self.derived.append((target, leaves))

    def finish(self) -> None:
        """Once every scope is read: what derived sizes are used as, their parts are too
        (the first part of a sum or product takes the length of a range of positions)."""
        for _ in range(4):
            for target, leaves in self.derived:
                roles = self.facts(target).roles & {"size", "positions"}
                for number, leaf in enumerate(leaves):
                    path = self.path_of(leaf)
                    if path is None or not roles:
                        continue
                    facts = self.facts(path)
                    facts.roles.add("size")
                    if "positions" in roles and number == 0:
                        facts.roles.add("positions")

    def _iteration(self, target: cst.BaseExpression, iterable: cst.BaseExpression) -> None:
        """`for x in xs`, `for a, b in zip(xs, ys)`, `for i, x in enumerate(xs)`,
        `for k, v in d.items()`, `for p in model.parameters()`."""
        pairs: list[tuple[cst.BaseExpression, tuple | None]] = []
        call_name = dotted_name(iterable.func) if isinstance(iterable, cst.Call) else None
        if isinstance(iterable, cst.Call) and call_name in ("zip", "enumerate") and isinstance(target, (cst.Tuple, cst.List)):
            elements = [e.value for e in target.elements]
            sources = [a.value for a in iterable.args]
            if call_name == "enumerate":
                elements, sources = elements[1:2], sources[:1]
            for element, source in zip(elements, sources):
                path = self.path_of(source)
                if path is not None:
                    pairs.append((element, (path[0], path[1] + (("elem", ""),))))
        elif isinstance(iterable, cst.Call) and isinstance(iterable.func, cst.Attribute) and iterable.func.attr.value in ("items", "values"):
            path = self.path_of(iterable.func.value)
            if path is not None:
                self.facts(path).roles.add("mapping")
                value_target = target.elements[-1].value if isinstance(target, (cst.Tuple, cst.List)) and iterable.func.attr.value == "items" else target
                pairs.append((value_target, (path[0], path[1] + (("items", "*"),))))
        elif isinstance(iterable, cst.Call) and isinstance(iterable.func, cst.Attribute):
            path = self.path_of(iterable.func.value)
            if path is not None and self.imports.qualify_name(path[0]) is None:
                pairs.append((target, (path[0], path[1] + (("called_attrs", iterable.func.attr.value), ("elem", "")))))
        else:
            path = self.path_of(iterable)
            if path is not None:
                pairs.append((target, (path[0], path[1] + (("elem", ""),))))
        for element, path in pairs:
            if isinstance(element, cst.Name) and path is not None:
                facts = self.facts(path)  # make sure it exists even if the loop variable is unused
                self.aliases[element.value] = path
                if INTEGER_NAME.search(element.value):
                    facts.roles.add("integer")  # `for ids in batches`
            elif isinstance(element, (cst.Tuple, cst.List)) and path is not None:
                self.facts(path).roles.add("tuple")
                for position, inner in enumerate(element.elements):
                    if isinstance(inner.value, cst.Name):
                        self.aliases[inner.value.value] = (path[0], path[1] + (("items", str(position)),))
                        if INTEGER_NAME.search(inner.value.value):
                            self.facts(self.aliases[inner.value.value]).roles.add("integer")

    def _context(self, node: cst.BaseExpression, facts: PathFacts, parents: dict[int, cst.CSTNode]) -> None:
        parent = parents.get(id(node))
        if isinstance(parent, cst.Attribute) and parent.value is node:
            attribute = parent.attr.value
            grand = parents.get(id(parent))
            if isinstance(grand, cst.Call) and grand.func is parent:
                self._method(facts, attribute, grand)
            else:
                facts.child("attrs", attribute)
                if attribute == "shape":
                    self._shape_index(facts, grand)
                    if isinstance(grand, cst.Subscript):
                        self._positions_dimension(facts, grand, grand.slice[0].slice.value if isinstance(grand.slice[0].slice, cst.Index) else None, parents)
            if "device" in attribute.lower() and not (isinstance(grand, cst.Call) and grand.func is parent):
                facts.child("attrs", attribute).roles.add("device")
            return
        if (isinstance(parent, cst.BinaryOperation) and isinstance(parent.operator, ARITHMETIC)) or (
            isinstance(parent, cst.Arg) and _is_number_call(parents.get(id(parent)))
        ):
            # `torch.empty(dim // 2)`, `range(n - 1)`, `torch.arange(min(n, 200))`:
            # arithmetic on a size is a size
            top = parent if isinstance(parent, cst.BinaryOperation) else parents.get(id(parent))
            while isinstance(parents.get(id(top)), cst.BinaryOperation) or (
                isinstance(parents.get(id(top)), cst.Arg) and _is_number_call(parents.get(id(parents.get(id(top)))))
            ):
                top = parents.get(id(top)) if isinstance(parents.get(id(top)), cst.BinaryOperation) else parents.get(id(parents.get(id(top))))
            arg = parents.get(id(top))
            call = parents.get(id(arg)) if isinstance(arg, cst.Arg) else None
            if isinstance(call, cst.Call) and isinstance(arg, cst.Arg):
                name = dotted_name(call.func) or (call.func.attr.value if isinstance(call.func, cst.Attribute) else "")
                if (arg.keyword is None and name.rsplit(".", 1)[-1] in SIZE_CALLS and _is_call_of_torch_or_method(call, self.imports)) or (
                    arg.keyword is not None and arg.keyword.value in SIZE_KEYWORDS
                ):
                    self._argument(facts, arg, call, parents)
                    return
        if isinstance(parent, cst.Arg):
            call = parents.get(id(parent))
            if isinstance(call, cst.Call):
                self._argument(facts, parent, call, parents)
            return
        if isinstance(parent, cst.Comparison) or isinstance(parent, cst.ComparisonTarget):
            comparison = parent if isinstance(parent, cst.Comparison) else parents.get(id(parent))
            if isinstance(comparison, cst.Comparison):
                self._comparison(facts, node, comparison)
            return
        if isinstance(parent, cst.BinaryOperation) and isinstance(parent.operator, BIT_OPERATORS):
            facts.roles.add("bool")
            return
        if isinstance(parent, cst.UnaryOperation) and isinstance(parent.operator, cst.BitInvert):
            facts.roles.add("bool")
            return
        if isinstance(parent, cst.BinaryOperation) and isinstance(parent.operator, cst.Add):
            other = parent.right if parent.left is node else parent.left
            if isinstance(other, (cst.SimpleString, cst.FormattedString, cst.ConcatenatedString)):
                facts.roles.add("string")
            return
        if isinstance(parent, cst.AugAssign) and parent.value is node and isinstance(parent.operator, (cst.AddAssign, cst.SubtractAssign)):
            facts.roles.add("scalar")  # `total += loss`: a value added whole
            return
        if isinstance(parent, cst.Index):
            subscript = parents.get(id(parents.get(id(parent))))
            if isinstance(subscript, cst.Subscript) and subscript.value is not node:
                facts.roles.add("index")
                facts.index_range = _smaller(facts.index_range, self.buffer_size)
            return
        if isinstance(parent, cst.Subscript) and parent.value is node:
            real = [e for e in parent.slice if not (isinstance(e.slice, cst.Index) and isinstance(e.slice.value, cst.Name) and e.slice.value.value == "None")]
            if len(real) >= 2:
                facts.dims = max(facts.dims, len(real))
            return
        if isinstance(parent, cst.Element):
            # `buf.index_put_((idx,), ...)`: an index inside the tuple of indices
            container = parents.get(id(parent))
            arg = parents.get(id(container)) if isinstance(container, (cst.Tuple, cst.List)) else None
            call = parents.get(id(arg)) if isinstance(arg, cst.Arg) else None
            if isinstance(call, cst.Call) and isinstance(call.func, cst.Attribute) and call.func.attr.value in ("index_put_", "index_put") and call.args and call.args[0] is arg:
                facts.roles.add("index")
                facts.index_range = _smaller(facts.index_range, self.buffer_size)
                facts.length = _source_length(call, "values", 1)
            return
        if isinstance(parent, cst.Call) and parent.func is node:
            facts.call_result()

    def _method(self, facts: PathFacts, name: str, call: cst.Call) -> None:
        args = [a for a in call.args if a.keyword is None]
        if name == "split" and (not args or isinstance(args[0].value, cst.SimpleString)):
            facts.roles.add("string")
        elif name == "join" and not args:
            facts.roles.add("string")
        elif name in STRING_METHODS:
            facts.roles.add("string")
        elif name in NAN_PREDICATES:
            facts.specials.update(NAN_PREDICATES[name])
        elif name in COMPARISON_METHODS and args:
            self._compared_with(facts, args[0].value)
        elif name in ("size",) and args and isinstance(self._constant(args[0].value), int):
            facts.dims = max(facts.dims, _dim_needed(self._constant(args[0].value)))
            self._positions_dimension(facts, call, args[0].value, self._parents)
        if name in REDUCTIONS:
            dim = _dim_argument(call, resolve=self._constant)
            if dim is not None:
                facts.dims = max(facts.dims, _dim_needed(dim))
        # `x.parameters()` on a value that is not a tensor: the child decides
        facts.child("called_attrs", name)

    def _argument(self, facts: PathFacts, arg: cst.Arg, call: cst.Call, parents) -> None:
        name = dotted_name(call.func) or ""
        last = name.rsplit(".", 1)[-1] if name else (call.func.attr.value if isinstance(call.func, cst.Attribute) else "")
        keyword = arg.keyword.value if arg.keyword is not None else None
        positional = [a for a in call.args if a.keyword is None]
        position = positional.index(arg) if arg in positional else None
        if keyword == "device":
            facts.roles.add("device")
            return
        if keyword == "dtype":
            facts.roles.add("dtype")  # `torch.arange(n, dtype=dtype)`: a dtype, not data
            return
        if _is_numpy_call(call, self.imports) and keyword not in SIZE_KEYWORDS:
            facts.roles.add("numpy")  # `np.bincount(ids)`: data NumPy is handed (an array; numpy_inputs)
        if keyword in SIZE_KEYWORDS or (keyword is None and last in SIZE_CALLS and _is_call_of_torch_or_method(call, self.imports)):
            facts.roles.add("size")
            if last == "arange" and (keyword == "end" or (keyword is None and position == (0 if len(positional) == 1 else 1))):
                facts.roles.add("positions")  # the end of a range of positions
            return
        if keyword is None and last in NAN_PREDICATES and position == 0:
            facts.specials.update(NAN_PREDICATES[last])
            return
        if keyword is None and last in COMPARISON_METHODS and position is not None and len(positional) == 2:
            self._compared_with(facts, positional[1 - position].value)
            return
        if isinstance(call.func, cst.Attribute) and last in INDEX_METHODS and position == INDEX_METHODS[last] or keyword == "index":
            facts.roles.add("index")
            facts.index_range = _smaller(facts.index_range, self.buffer_size)
            if last in SCATTER_SOURCES:
                facts.length = _source_length(call, *SCATTER_SOURCES[last])
            return
        if last in INDEX_FUNCTIONS and position == INDEX_FUNCTIONS[last]:
            facts.roles.add("index")
            minlength = next((a.value for a in call.args if a.keyword is not None and a.keyword.value in ("minlength", "num_classes")), None)
            bound = int(minlength.value) if isinstance(minlength, cst.Integer) else self.buffer_size
            facts.index_range = _smaller(facts.index_range, bound)
            return
        if isinstance(call.func, cst.Name) and call.func.value in ("max", "min", "int", "float", "round", "abs", "bool") and len(positional) <= 2 and keyword is None:
            facts.roles.add("number")  # `max(0, res["ans_valid"])`: one number
            return
        if last in REDUCTIONS and position == 0:
            dim = _dim_argument(call, skip_first=True, resolve=self._constant)
            if dim is not None:
                facts.dims = max(facts.dims, _dim_needed(dim))
        if name in ("range", "builtins.range"):
            facts.roles.add("size")

    def _comparison(self, facts: PathFacts, node, comparison: cst.Comparison) -> None:
        operands = [comparison.left] + [t.comparator for t in comparison.comparisons]
        for target in comparison.comparisons:
            if isinstance(target.operator, (cst.In, cst.NotIn)):
                if isinstance(target.comparator, (cst.SimpleString, cst.ConcatenatedString)):
                    facts.roles.add("string")
                return
        path = self.path_of(node)
        for other in operands:
            if other is node:
                continue
            if path is not None and isinstance(other, (cst.Name, cst.Attribute, cst.Subscript)) and self.path_of(other) == path:
                facts.specials.add("nan")  # `x != x` finds NaN
            self._compared_with(facts, other)

    def _compared_with(self, facts: PathFacts, other: cst.BaseExpression) -> None:
        value = self._constant(other)
        setting = self.path_of(other) if value is None and isinstance(other, cst.Attribute) else None
        if setting is not None and setting[0] == "self":
            # `labels != self.loss_fn.ignore_index`: a setting of the instance, not data;
            # it is a number the data carries
            self.facts(setting).roles.add("setting")
            facts.specials.add(SETTING_VALUE)
            return
        if isinstance(value, str):
            facts.roles.add("string")
        elif isinstance(value, bool) or value is None:
            return
        elif isinstance(value, (int, float)):
            if isinstance(value, float) and math.isnan(value):
                facts.specials.add("nan")
            elif isinstance(value, float) and math.isinf(value):
                facts.specials.add("inf" if value > 0 else "-inf")
            else:
                facts.specials.add(value)
                if value == 0:
                    facts.specials.add(-1)  # `x < 0` must find negatives

    def _constant(self, node: cst.BaseExpression):
        if isinstance(node, cst.Integer):
            return int(node.value, 0)
        if isinstance(node, cst.Float):
            return float(node.value)
        if isinstance(node, cst.UnaryOperation) and isinstance(node.operator, cst.Minus):
            inner = self._constant(node.expression)
            return -inner if isinstance(inner, (int, float)) and not isinstance(inner, bool) else None
        if isinstance(node, cst.SimpleString):
            return node.evaluated_value
        name = dotted_name(node) if isinstance(node, (cst.Name, cst.Attribute)) else None
        if name is not None:
            if name in self.constants:
                return self.constants[name]
            qualified = self.imports.qualify_dotted(name)
            if qualified in ("math.nan", "torch.nan", "numpy.nan"):
                return float("nan")
            if qualified in ("math.inf", "torch.inf", "numpy.inf"):
                return float("inf")
        if isinstance(node, cst.Call) and dotted_name(node.func) in ("float",) and node.args:
            literal = node.args[0].value
            if isinstance(literal, cst.SimpleString):
                try:
                    return float(literal.evaluated_value)
                except ValueError:
                    return None
        return None

    def _positions_dimension(self, facts: PathFacts, expression, index, parents) -> None:
        """`torch.arange(x.shape[1])`, `torch.arange(x.size(1))`: that dimension of x is a
        length of positions (long in the runs that drive positions)."""
        dim = self._constant(index) if index is not None else None
        arg = parents.get(id(expression))
        call = parents.get(id(arg)) if isinstance(arg, cst.Arg) else None
        if not isinstance(dim, int) or isinstance(dim, bool) or not isinstance(call, cst.Call):
            return
        name = dotted_name(call.func) or ""
        positional = [a for a in call.args if a.keyword is None]
        if name.rsplit(".", 1)[-1] == "arange" and arg.keyword is None and positional.index(arg) == (0 if len(positional) == 1 else 1):
            facts.long_dim = dim

    def _shape_index(self, facts: PathFacts, subscript) -> None:
        if isinstance(subscript, cst.Subscript) and len(subscript.slice) == 1 and isinstance(subscript.slice[0].slice, cst.Index):
            index = self._constant(subscript.slice[0].slice.value)
            if isinstance(index, int) and not isinstance(index, bool):
                facts.dims = max(facts.dims, _dim_needed(index))

    # -- results --------------------------------------------------------------------
    def mark(self, path: tuple[str, tuple], role: str) -> None:
        self.facts(path).roles.add(role)

    def spec(self, name: str) -> dict:
        if name in self.aliases:
            return self.path_spec(self.aliases[name])
        facts = self.roots.get(name, PathFacts())
        if INTEGER_NAME.search(name):
            facts.roles.add("integer")
        return facts.to_spec()

    def path_spec(self, path: tuple[str, tuple]) -> dict:
        return self.facts(path).to_spec()


SCATTER_SOURCES = {"scatter_add_": ("src", 2), "scatter_add": ("src", 2), "index_add_": ("source", 2), "index_add": ("source", 2)}


def _source_length(call: cst.Call, keyword: str, position: int) -> int | None:
    """`buf.scatter_add_(0, idx, torch.ones(3))`: the index must have 3 elements."""
    positional = [a for a in call.args if a.keyword is None]
    source = next((a.value for a in call.args if a.keyword is not None and a.keyword.value == keyword), None)
    if source is None and len(positional) > position:
        source = positional[position].value
    if not isinstance(source, cst.Call) or len(source.args) != 1 or source.args[0].keyword is not None:
        return None
    name = (dotted_name(source.func) or "").rsplit(".", 1)[-1]
    size = source.args[0].value
    if name in ("ones", "zeros", "rand", "randn", "empty") and isinstance(size, cst.Integer):
        return int(size.value, 0)
    return None


def _is_number_call(node) -> bool:
    return isinstance(node, cst.Call) and isinstance(node.func, cst.Name) and node.func.value in ("min", "max", "int", "abs", "round")


def _arithmetic_leaves(node: cst.BaseExpression) -> list[cst.BaseExpression]:
    """The names of `a + b * c` (left to right), or [] when anything else is in it."""
    if isinstance(node, cst.BinaryOperation) and isinstance(node.operator, ARITHMETIC + (cst.Power,)):
        left, right = _arithmetic_leaves(node.left), _arithmetic_leaves(node.right)
        if isinstance(node.operator, cst.Power):
            right = [] if isinstance(node.right, cst.Integer) else right
        return left + right if left or right else []
    if isinstance(node, (cst.Name, cst.Attribute)):
        return [node]
    return []


def _dim_argument(call: cst.Call, skip_first: bool = False, resolve=None) -> int | None:
    def value(node):
        literal = _int_literal(node)
        if literal is None and resolve is not None:
            constant = resolve(node)
            literal = constant if isinstance(constant, int) and not isinstance(constant, bool) else None
        return literal

    for arg in call.args:
        if arg.keyword is not None and arg.keyword.value in ("dim", "axis"):
            return value(arg.value)
    positional = [a for a in call.args if a.keyword is None]
    if skip_first:
        positional = positional[1:]
    return value(positional[0].value) if positional else None


def _int_literal(node) -> int | None:
    if isinstance(node, cst.Integer):
        return int(node.value, 0)
    if isinstance(node, cst.UnaryOperation) and isinstance(node.operator, cst.Minus) and isinstance(node.expression, cst.Integer):
        return -int(node.expression.value, 0)
    return None


def _dim_needed(dim: int) -> int:
    """dims a tensor needs for `dim` to reduce something: dim=1 -> 2-D; dim=-1 is
    read as rows of classes (`logits.argmax(dim=-1)`), so 2-D as well."""
    return dim + 1 if dim >= 0 else max(2, -dim)


def _smaller(current: int | None, bound: int) -> int:
    return bound if current is None else min(current, bound)


def _is_call_of_torch_or_method(call: cst.Call, imports: ImportMap) -> bool:
    """torch's, NumPy's (`np.zeros(n)`: n is a size too), a method's, `range`."""
    if isinstance(call.func, cst.Attribute):
        name = dotted_name(call.func)
        if name is None:
            return True  # a method on a computed value
        qualified = imports.qualify_dotted(name)
        return qualified is None or qualified.split(".")[0] in ("torch", "numpy", "builtins")
    name = dotted_name(call.func)
    qualified = imports.qualify_dotted(name) if name else None
    return qualified is not None and (qualified.startswith(("torch.", "numpy.")) or qualified == "builtins.range")


def _is_numpy_call(call: cst.Call, imports: ImportMap) -> bool:
    name = dotted_name(call.func)
    qualified = imports.qualify_dotted(name) if name else None
    return qualified is not None and qualified.startswith("numpy.")
