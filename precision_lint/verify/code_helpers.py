"""Small helpers the replay builder shares: literals, parameters, suites, what a
product reads, which names a block reads before binding them. No torch here."""
from __future__ import annotations

import ast
from typing import TYPE_CHECKING

import libcst as cst

from ..model.imports import dotted_name
from .names import REGISTRATIONS, is_torch_name
from .source_view import all_nodes

if TYPE_CHECKING:
    from .usage import UsageAnalysis

SCOPES = (cst.FunctionDef, cst.ClassDef, cst.Lambda)


NOT_LITERAL = object()


def literal_value(node):
    if isinstance(node, cst.Integer):
        return int(node.value, 0)
    if isinstance(node, cst.Float):
        return float(node.value)
    if isinstance(node, cst.SimpleString):
        return node.evaluated_value
    if isinstance(node, cst.Name) and node.value in ("True", "False", "None"):
        return {"True": True, "False": False, "None": None}[node.value]
    if isinstance(node, cst.UnaryOperation) and isinstance(node.operator, cst.Minus):
        inner = literal_value(node.expression)
        return -inner if isinstance(inner, (int, float)) and not isinstance(inner, bool) else NOT_LITERAL
    return NOT_LITERAL


def parameters_of(function: cst.FunctionDef) -> list[cst.Param]:
    params = function.params
    result = list(params.posonly_params) + list(params.params) + list(params.kwonly_params)
    for star in (params.star_arg, params.star_kwarg):
        if isinstance(star, cst.Param):
            result.append(star)
    return result


def suite_lines(suite) -> list:
    if isinstance(suite, cst.IndentedBlock):
        return list(suite.body)
    if isinstance(suite, cst.SimpleStatementSuite):
        return [suite]  # a one-line body: its small statements, as a line's
    return []


def indent_lines(lines):
    return [("    " + text, line, kind) for text, line, kind in lines]


def short(text: str, limit: int = 70) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 3] + "..."


def plain_targets(small: cst.CSTNode) -> set[str]:
    targets = [t.target for t in small.targets] if isinstance(small, cst.Assign) else [small.target]
    names: set[str] = set()
    for target in targets:
        if isinstance(target, cst.Name):
            names.add(target.value)
        elif isinstance(target, (cst.Tuple, cst.List)) and all(isinstance(e.value, cst.Name) for e in target.elements):
            names |= {e.value.value for e in target.elements}
        else:
            return set()
    return names


def user_dunder(small: cst.CSTNode) -> bool:
    return any(isinstance(n, cst.Name) and n.value.startswith("__") for n in all_nodes(small))


def is_product(node: cst.CSTNode, imports) -> bool:
    if isinstance(node, cst.BinaryOperation) and isinstance(node.operator, (cst.Multiply, cst.MatrixMultiply)):
        return True
    if isinstance(node, cst.Call):
        name = dotted_name(node.func) or ""
        last = name.rsplit(".", 1)[-1] if name else (node.func.attr.value if isinstance(node.func, cst.Attribute) else "")
        return last in ("outer", "einsum", "matmul", "ger", "mul", "mm", "bmm")
    return False


VIEW_METHODS = frozenset({"unsqueeze", "view", "reshape", "float", "double", "to", "type_as", "expand", "t", "transpose", "squeeze", "flatten", "half", "bfloat16", "contiguous"})


def product_operands(node: cst.CSTNode) -> list[cst.CSTNode]:
    if isinstance(node, cst.BinaryOperation):
        return [node.left, node.right]
    args = [a.value for a in node.args if a.keyword is None]
    if args and isinstance(args[0], cst.SimpleString):  # einsum's equation
        args = args[1:]
    if isinstance(node.func, cst.Attribute) and (dotted_name(node.func) or "").split(".")[0] not in ("torch", "th"):
        args = [node.func.value] + args  # `t.outer(f)`
    return args


def plain_operand(node: cst.CSTNode, value: cst.CSTNode) -> bool:
    """A product's operand the exact version can recompute: the positions or a name,
    seen through views (`t[:, None]`, `f.unsqueeze(0)`, `.float()`); never a call that
    makes new values (`torch.randn(...)` would draw other numbers)."""
    current = node
    while True:
        if current is value or isinstance(current, (cst.Name, cst.Integer, cst.Float)):
            return True
        if isinstance(current, cst.Attribute):
            current = current.value
        elif isinstance(current, cst.Subscript):
            current = current.value
        elif isinstance(current, cst.Call) and isinstance(current.func, cst.Attribute) and current.func.attr.value in VIEW_METHODS:
            current = current.func.value
        else:
            return False


def operands(expression: cst.CSTNode, imports) -> list[cst.CSTNode]:
    """The values a product reads (maximal names and attribute chains): not torch's
    own names (`torch.outer`), nor a method's name, but the value it is called on."""
    found: list[cst.CSTNode] = []
    covered: set[int] = set()
    methods = {id(n.func) for n in all_nodes(expression) if isinstance(n, cst.Call) and isinstance(n.func, cst.Attribute)}
    functions = {id(n.func) for n in all_nodes(expression) if isinstance(n, cst.Call) and isinstance(n.func, cst.Name)}
    keywords = {id(n.keyword) for n in all_nodes(expression) if isinstance(n, cst.Arg) and n.keyword is not None}
    for node in all_nodes(expression):
        if id(node) in covered or id(node) in keywords or not isinstance(node, (cst.Name, cst.Attribute)):
            continue
        name = dotted_name(node)
        if id(node) in functions or (name is not None and is_torch_name(imports.qualify_dotted(name))):
            covered |= {id(n) for n in all_nodes(node)}
            continue
        if id(node) in methods:
            covered.add(id(node.attr))  # look at what the method is called on
            continue
        if isinstance(node, cst.Attribute) and name is None:
            continue  # `x.sum().t`: look inside
        found.append(node)
        covered |= {id(n) for n in all_nodes(node)}
    return found


def imported_names(import_lines: set[str]) -> set[str]:
    names = set()
    for line in import_lines:
        try:
            tree = ast.parse(line)
        except SyntaxError:
            continue
        for node in ast.walk(tree):
            if isinstance(node, ast.alias):
                names.add((node.asname or node.name).split(".")[0])
    return names


def names_read_before_bound(text: str) -> list[str]:
    """Names a block reads before it binds them (in evaluation order), or never binds."""
    try:
        tree = ast.parse(text or "pass")
    except SyntaxError:
        return []
    bound: set[str] = set()
    reads: list[str] = []

    def read(name: str) -> None:
        if name not in bound and name not in reads:
            reads.append(name)

    def expression(node, local: frozenset = frozenset()) -> None:
        if isinstance(node, ast.Name):
            if isinstance(node.ctx, ast.Load) and node.id not in local:
                read(node.id)
            return
        if isinstance(node, (ast.ListComp, ast.SetComp, ast.GeneratorExp, ast.DictComp)):
            inner = set(local)
            for generator in node.generators:
                expression(generator.iter, frozenset(inner))
                inner |= {n.id for n in ast.walk(generator.target) if isinstance(n, ast.Name)}
                for condition in generator.ifs:
                    expression(condition, frozenset(inner))
            for part in ([node.key, node.value] if isinstance(node, ast.DictComp) else [node.elt]):
                expression(part, frozenset(inner))
            return
        if isinstance(node, ast.Lambda):
            args = {a.arg for a in node.args.args + node.args.kwonlyargs}
            expression(node.body, local | args)
            return
        for child in ast.iter_child_nodes(node):
            expression(child, local)

    def store(target) -> None:
        for node in ast.walk(target):
            if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
                bound.add(node.id)
            elif isinstance(node, ast.Name):
                expression(node)
            elif isinstance(node, (ast.Subscript, ast.Attribute)):
                expression(node.value)
                if isinstance(node, ast.Subscript):
                    expression(node.slice)

    def statements(body) -> None:
        for node in body:
            if isinstance(node, ast.Assign):
                expression(node.value)
                for target in node.targets:
                    store(target)
            elif isinstance(node, ast.AugAssign):
                expression(node.target if not isinstance(node.target, ast.Name) else ast.Name(node.target.id, ast.Load()))
                expression(node.value)
                store(node.target)
            elif isinstance(node, ast.AnnAssign):
                if node.value is not None:
                    expression(node.value)
                store(node.target)
            elif isinstance(node, ast.For):
                expression(node.iter)
                store(node.target)
                statements(node.body)
                statements(node.orelse)
            elif isinstance(node, (ast.If, ast.While)):
                expression(node.test)
                statements(node.body)
                statements(node.orelse)
            elif isinstance(node, ast.With):
                for item in node.items:
                    expression(item.context_expr)
                    if item.optional_vars is not None:
                        store(item.optional_vars)
                statements(node.body)
            elif isinstance(node, ast.Try):
                statements(node.body)
                for handler in node.handlers:
                    if handler.name:
                        bound.add(handler.name)
                    statements(handler.body)
                statements(node.orelse)
                statements(node.finalbody)
            elif isinstance(node, ast.FunctionDef):
                bound.add(node.name)
            else:
                for child in ast.iter_child_nodes(node):
                    expression(child)

    statements(tree.body)
    return reads


def registration_of(small: cst.CSTNode) -> tuple[str, cst.BaseExpression] | None:
    """`self.register_buffer("name", value)` / `self.add_state("name", default=value)`."""
    if not (isinstance(small, cst.Expr) and isinstance(small.value, cst.Call) and isinstance(small.value.func, cst.Attribute)):
        return None
    call = small.value
    if call.func.attr.value not in REGISTRATIONS or not call.args or not isinstance(call.args[0].value, cst.SimpleString):
        return None
    value = call.args[1].value if len(call.args) > 1 and call.args[1].keyword is None else None
    if value is None:
        value = next((a.value for a in call.args if a.keyword is not None and a.keyword.value in ("tensor", "default")), None)
    return (str(call.args[0].value.evaluated_value), value) if value is not None else None


def is_filter(node: cst.If) -> bool:
    """`if cond: continue` (or break / return): an `if` that only skips."""
    if node.orelse is not None:
        return False
    lines = suite_lines(node.body)
    if not all(isinstance(line, (cst.SimpleStatementLine, cst.SimpleStatementSuite)) for line in lines):
        return False
    smalls = [small for line in lines for small in line.body]
    return bool(smalls) and all(isinstance(small, (cst.Continue, cst.Break, cst.Return)) for small in smalls)


def target_spec(target: cst.BaseExpression, analysis: UsageAnalysis) -> dict:
    if isinstance(target, cst.Name):
        return analysis.spec(target.value)
    if isinstance(target, (cst.Tuple, cst.List)):
        return {"roles": ["tuple"], "items": {str(i): target_spec(e.value, analysis) for i, e in enumerate(target.elements)}}
    return {"roles": []}
