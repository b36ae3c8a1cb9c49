"""libcst's tree for a module, built from the standard parser's tree.

libcst's parse was most of a cold run (Megatron-LM's kept files: 23 s of CPU, 6x all
of ruff), nearly all of it for files that end with nothing to report. The standard
parser reads them 11x faster (4 µs a line against 48 on megatron/core), and turning
its tree into libcst's nodes brings that to 12 µs a line. This module builds the nodes
the model reads (the same node types and fields, in the same shape) without the
whitespace, comments and parentheses, which the model never reads. The engine models
a module on this tree first and parses it with libcst only when that first pass has
something to report, since findings are placed, and fixes edit, in the concrete tree
(engine.py).

A construct whose libcst shape cannot be read off the standard tree exactly (a lone
carriage return, a suite after a backslash, identifiers that the standard parser
NFKC-normalizes) leaves the whole module to libcst. String literals and their
implicit concatenations are sliced from the source, and an f-string on one line is
read off it around its fields; an f-string across lines or with `{x=}` or a field in
its spec, a parenthesized subscript tuple, and a `match` statement are parsed by
libcst on their own. tests/test_quick_tree.py holds the tree to
libcst's, node for node and field for field, on every construct and on generated
programs; benchmarks/same_findings.py holds the findings to a run without it.
"""
from __future__ import annotations

import ast
import dataclasses
import io
import sys
import tokenize
import unicodedata
from functools import lru_cache
from typing import Any, Callable

import libcst as cst

from .model.walk import concrete_types
from .source import standard_tree


class Unconvertible(Exception):
    """The module's libcst shape cannot be read off the standard parser's tree."""


class QuickTree:
    """A module's quick tree, and the source of its calls."""

    def __init__(self, module: cst.Module, builder: "_Builder") -> None:
        self.module = module
        self._builder = builder

    def code_of_call(self, node: cst.Call) -> str | None:
        """`node`'s code as libcst's `code_for_node` gives it in the concrete tree (with
        the parentheses of its own around it), or None where that cannot be read off
        the source: where the call may stand in two pairs of parentheses, which of them
        are its own is not read, nor are a statement's own (a class's bases, `with
        (f()):`), nor code across a line that holds a quote. A call across lines inside
        a block keeps the block's indentation on its later lines, which libcst's leaves
        out; evidence, its one reader, joins the code's whitespace."""
        span = self._builder.calls.get(node)
        return None if span is None else self._builder.code_of(node, span)

    def attributes_named(self, function: cst.FunctionDef) -> frozenset[tuple[str, str]] | None:
        """Each `name.attribute` in a def of this tree (its nested code too)."""
        return self._builder.attributes.get(function)


def quick_module(source: str) -> QuickTree | None:
    """The module's tree, or None where libcst must parse it (the standard parser
    refuses it, or it holds a construct listed above)."""
    if source.count("\r") != source.count("\r\n"):  # lone CRs: the parsers number lines apart
        return None
    if not _identifiers_as_written(source):
        return None
    try:
        tree = standard_tree(source)
    except (SyntaxError, ValueError, RecursionError, MemoryError, OverflowError):
        return None
    builder = _Builder(source)
    try:
        return QuickTree(builder.module(tree), builder)
    except Exception:  # Unconvertible, too deep, or a misread: libcst's parse answers, only slower
        return None


@lru_cache(maxsize=None)
def _maker(cls: type) -> Callable[..., Any]:
    """A constructor for `cls` that skips libcst's validation (the standard parser
    has validated the code) and shares each default: the fields left at their
    defaults are whitespace and punctuation, which nothing reads. libcst's own
    constructor costs several times more."""
    names = [field.name for field in dataclasses.fields(cls)]
    namespace: dict[str, Any] = {"_new": object.__new__, "_cls": cls}
    for field in dataclasses.fields(cls):
        if field.default is not dataclasses.MISSING:
            namespace[f"_d_{field.name}"] = field.default
        elif field.default_factory is not dataclasses.MISSING:
            namespace[f"_d_{field.name}"] = field.default_factory()
        else:
            namespace[f"_d_{field.name}"] = None
        # each field is a slot: its descriptor sets it past the frozen dataclass's
        # __setattr__, a third faster than object.__setattr__ by name
        namespace[f"_s_{field.name}"] = getattr(cls, field.name).__set__
    parameters = ", ".join(f"{name}=_d_{name}" for name in names)
    settings = "".join(f"    _s_{name}(node, {name})\n" for name in names)
    exec(f"def make({parameters}):\n    node = _new(_cls)\n{settings}    return node\n", namespace)
    return namespace["make"]


def make(cls: type, **fields: Any) -> Any:
    return _maker(cls)(**fields)


class _Makers:
    """`N.Call(func=..., args=...)`: the constructor of each node class, made on first use."""

    def __getattr__(self, name: str) -> Callable[..., Any]:
        maker = _maker(getattr(cst, name))
        setattr(self, name, maker)
        return maker


N = _Makers()


_BINARY = {
    ast.Add: cst.Add, ast.Sub: cst.Subtract, ast.Mult: cst.Multiply, ast.Div: cst.Divide,
    ast.FloorDiv: cst.FloorDivide, ast.Mod: cst.Modulo, ast.Pow: cst.Power, ast.LShift: cst.LeftShift,
    ast.RShift: cst.RightShift, ast.BitOr: cst.BitOr, ast.BitAnd: cst.BitAnd, ast.BitXor: cst.BitXor,
    ast.MatMult: cst.MatrixMultiply,
}  # fmt: skip
_AUGMENTED = {
    ast.Add: cst.AddAssign, ast.Sub: cst.SubtractAssign, ast.Mult: cst.MultiplyAssign,
    ast.Div: cst.DivideAssign, ast.FloorDiv: cst.FloorDivideAssign, ast.Mod: cst.ModuloAssign,
    ast.Pow: cst.PowerAssign, ast.LShift: cst.LeftShiftAssign, ast.RShift: cst.RightShiftAssign,
    ast.BitOr: cst.BitOrAssign, ast.BitAnd: cst.BitAndAssign, ast.BitXor: cst.BitXorAssign,
    ast.MatMult: cst.MatrixMultiplyAssign,
}  # fmt: skip
_UNARY = {ast.UAdd: cst.Plus, ast.USub: cst.Minus, ast.Invert: cst.BitInvert, ast.Not: cst.Not}
_BOOLEAN = {ast.And: cst.And, ast.Or: cst.Or}
_COMPARE = {
    ast.Eq: cst.Equal, ast.NotEq: cst.NotEqual, ast.Lt: cst.LessThan, ast.LtE: cst.LessThanEqual,
    ast.Gt: cst.GreaterThan, ast.GtE: cst.GreaterThanEqual, ast.In: cst.In, ast.NotIn: cst.NotIn,
    ast.Is: cst.Is, ast.IsNot: cst.IsNot,
}  # fmt: skip
_CONSTANT_NAMES = {True: "True", False: "False", None: "None"}
_SMALL_STATEMENTS = concrete_types(cst.BaseSmallStatement)  # `type(x) in`: isinstance asks the ABC


class _Builder:
    def __init__(self, source: str) -> None:
        self.lines = source.encode("utf-8").split(b"\n")  # ast's offsets count UTF-8 bytes
        # where each call is, for its source (evidence); spans, so the standard tree can go
        self.calls: dict[cst.Call, tuple[int, int, int, int]] = {}
        self.bare: set[cst.Call] = set()  # calls standing in no parentheses (`model.half()` alone)
        # a call that is its caller's first argument: where the caller's function ends
        # (0-based row, byte column), after which its own `(` is the nearest code
        self.callers_function_end: dict[cst.Call, tuple[int, int]] = {}
        # calls directly in a statement's own parentheses (a class's bases, `with (f()):`),
        # which libcst gives the statement (`except (E()):`'s and `with (f()) as x:`'s it
        # gives the call)
        self.in_syntax_parentheses: set[cst.Call] = set()
        # each def's `name.attribute` pairs, nested code included (for replay.py), and
        # those of the defs being built, innermost last
        self.attributes: dict[cst.FunctionDef, frozenset[tuple[str, str]]] = {}
        self._named: list[set[tuple[str, str]]] = []

    # -- the source --------------------------------------------------------------

    def code_of(self, node: cst.Call, span: tuple[int, int, int, int]) -> str | None:
        """code_of_call for the call `node` at `span`. The nearest code before and after
        it (comments, blank lines and line continuations between) tell whether it stands
        in parentheses: where both are a parenthesis, the code is given with that pair
        if it is the only one and no statement's own."""
        if node in self.bare or self._opens_caller(node, span):
            return self.text_of(span)
        before = self._code_before(span[0] - 1, span[1])
        if before is not None and before[2] != b"(":
            return self.text_of(span)
        after = self._code_after(span[2] - 1, span[3])
        if before is not None and after is not None and after[2] != b")":
            return self.text_of(span)
        if before is None or after is None or node in self.in_syntax_parentheses:
            return None  # a quote read past, nothing near, or `class A(Base(...)):`
        outer = self._code_before(before[0], before[1]), self._code_after(after[0], after[1] + 1)
        if outer[0] is None or outer[1] is None or (outer[0][2] == b"(" and outer[1][2] == b")"):
            return None  # `f((x()))`: which pair is the call's own is not read here
        return self.text_of((before[0] + 1, before[1], after[0] + 1, after[1] + 1))

    def _opens_caller(self, node: cst.Call, span: tuple[int, int, int, int]) -> bool:
        """Whether `node` is the first argument of a call whose own `(` is all the code
        between them (`wrap(model.half())`, across lines too): read from the function's
        end, past blanks, comments and line continuations, where no string can stand."""
        function_end = self.callers_function_end.get(node)
        if function_end is None:
            return False
        opening = self._code_after(*function_end)
        if opening is None or opening[2] != b"(":
            return False
        first = self._code_after(opening[0], opening[1] + 1)
        return first is not None and first[:2] == (span[0] - 1, span[1])

    # lines read past the code's own for the nearest code around it, at most
    _NEAREST_WITHIN = 20

    def _code_before(self, row: int, column: int) -> tuple[int, int, bytes] | None:
        """(0-based row, byte column, character) of the last code before (row, column);
        None where a line read holds a quote, or none is found within _NEAREST_WITHIN
        lines."""
        text = self.lines[row][:column].rstrip()  # code before it on its line: no comment
        for earlier in range(row - 1, max(row - 1 - self._NEAREST_WITHIN, -1), -1):
            if text:
                return row, len(text) - 1, text[-1:]
            row, line = earlier, self.lines[earlier]
            if b'"' in line or b"'" in line:
                return None
            text = line.partition(b"#")[0].rstrip()
            if text.endswith(b"\\"):
                text = text[:-1].rstrip()
        return (row, len(text) - 1, text[-1:]) if text else None

    def _code_after(self, row: int, column: int) -> tuple[int, int, bytes] | None:
        """(0-based row, byte column, character) of the first code after (row, column);
        None where none is found within _NEAREST_WITHIN lines."""
        line = self.lines[row][column:]
        text = line.lstrip()
        for later in range(row + 1, min(row + 1 + self._NEAREST_WITHIN, len(self.lines) + 1)):
            if text and not text.startswith(b"#") and text.rstrip() != b"\\":
                return row, column + len(line) - len(text), text[:1]
            if later < len(self.lines):
                row, column, line = later, 0, self.lines[later]
                text = line.lstrip()
        return None

    def text(self, node: ast.AST) -> str:
        """The source of `node` (without the parentheses around it)."""
        return self.text_of((node.lineno, node.col_offset, node.end_lineno, node.end_col_offset))

    def text_of(self, span: tuple[int, int, int, int]) -> str:
        """The source from (line, byte column) to (end line, end byte column)."""
        first, start, last, end = span[0] - 1, span[1], span[2] - 1, span[3]
        if first == last:
            return self.lines[first][start:end].decode("utf-8")
        return b"\n".join([self.lines[first][start:], *self.lines[first + 1 : last], self.lines[last][:end]]).decode("utf-8")

    def _fragment(self, node: ast.expr) -> cst.BaseExpression:
        """libcst's own node for one expression, parsed from its source (inside
        parentheses, which may span lines)."""
        self._note_attributes(node)
        return cst.parse_expression(f"({self.text(node)})")

    def _note_attributes(self, node: ast.AST) -> None:
        """The `name.attribute` pairs in code libcst parses for the tree, for the defs
        being built (their attributes_named)."""
        if self._named:
            self._named[-1].update(
                (inner.value.id, inner.attr)
                for inner in ast.walk(node)
                if type(inner) is ast.Attribute and type(inner.value) is ast.Name
            )  # fmt: skip

    def _match(self, node: ast.stmt) -> cst.Match:
        """libcst's own node for a `match` statement (its patterns have no quick
        conversion), parsed from its lines with the indentation of its first taken
        off; where a line is indented less, or a string may span lines (a triple
        quote, a line continuation: its text would change), the module is left to
        libcst."""
        lines = self.lines[node.lineno - 1 : node.end_lineno]
        indent = lines[0][: node.col_offset]
        if any(b'"""' in line or b"'''" in line or line.rstrip().endswith(b"\\") for line in lines):
            raise Unconvertible("match")
        if any(line.strip() and not line.startswith(indent) for line in lines):
            raise Unconvertible("match indented less")
        text = b"\n".join(line[len(indent) :] if line.startswith(indent) else b"" for line in lines)
        parsed = cst.parse_module(text.decode("utf-8") + "\n")
        if len(parsed.body) != 1 or type(parsed.body[0]) is not cst.Match:
            raise Unconvertible("match")
        self._note_attributes(node)
        return parsed.body[0]

    # -- statements --------------------------------------------------------------

    def module(self, tree: ast.Module) -> cst.Module:
        return N.Module(body=self._block(tree.body))

    def _block(self, statements: list[ast.stmt]) -> list[cst.BaseStatement]:
        """Statements one to a line; simple statements joined by `;` share a line."""
        body: list[cst.BaseStatement] = []
        line: list[cst.BaseSmallStatement] = []
        previous: ast.stmt | None = None
        for statement in statements:
            convert = _STATEMENTS.get(type(statement))
            if convert is None:
                raise Unconvertible(type(statement).__name__)
            node = convert(self, statement)
            if type(node) in _SMALL_STATEMENTS:
                if line and previous is not None and previous.end_lineno == statement.lineno:
                    line.append(node)
                else:
                    line = [node]
                    body.append(N.SimpleStatementLine(body=line))
            else:
                line = []
                body.append(node)
            previous = statement
        return body

    def _suite(self, statements: list[ast.stmt]) -> cst.BaseSuite:
        """An indented block, or the simple statements after a header's colon on its
        line (`if done: return`)."""
        first = statements[0]
        before = self.lines[first.lineno - 1][: first.col_offset]
        if before.strip():
            small = [_STATEMENTS[type(s)](self, s) for s in statements]
            if not all(type(s) in _SMALL_STATEMENTS for s in small):
                raise Unconvertible("compound statement in a one-line suite")
            return N.SimpleStatementSuite(body=small)
        if first.lineno >= 2 and self.lines[first.lineno - 2].rstrip().endswith(b"\\"):
            raise Unconvertible("a suite after a line continuation")
        return N.IndentedBlock(body=self._block(statements))

    def _else(self, statements: list[ast.stmt]) -> cst.Else | None:
        return N.Else(body=self._suite(statements)) if statements else None

    def _expression_statement(self, node: ast.Expr) -> cst.Expr:
        value = self.expr(node.value)
        if isinstance(node.value, ast.Call) and node.value.col_offset == node.col_offset:
            self.bare.add(value)  # `model.half()` alone on its line: the code before may hold a quote
        return N.Expr(value=value)

    def _if(self, node: ast.If) -> cst.If:
        orelse: cst.If | cst.Else | None = None
        if node.orelse:
            first = node.orelse[0]
            is_elif = (
                len(node.orelse) == 1 and isinstance(first, ast.If)
                and self.lines[first.lineno - 1][first.col_offset :].startswith(b"elif")
            )  # fmt: skip
            orelse = self._if(first) if is_elif else self._else(node.orelse)
        return N.If(test=self.expr(node.test), body=self._suite(node.body), orelse=orelse)

    def _for(self, node: ast.For | ast.AsyncFor, asynchronous: cst.Asynchronous | None) -> cst.For:
        return N.For(
            target=self.expr(node.target), iter=self.expr(node.iter), body=self._suite(node.body),
            orelse=self._else(node.orelse), asynchronous=asynchronous,
        )  # fmt: skip

    def _with(self, node: ast.With | ast.AsyncWith, asynchronous: cst.Asynchronous | None) -> cst.With:
        items = [
            N.WithItem(item=self.expr(item.context_expr),
                 asname=None if item.optional_vars is None else N.AsName(name=self.expr(item.optional_vars)))
            for item in node.items
        ]  # fmt: skip
        if len(items) == 1 and items[0].asname is None:  # `with (f()):`, whose parentheses libcst gives the statement
            self._in_syntax_parentheses(items[0].item)
        return N.With(items=items, body=self._suite(node.body), asynchronous=asynchronous)

    def _try(self, node: ast.Try, kind: type, handler_kind: type) -> cst.BaseCompoundStatement:
        handlers = [
            make(handler_kind, body=self._suite(h.body), type=None if h.type is None else self.expr(h.type),
                 name=None if h.name is None else N.AsName(name=N.Name(value=h.name)))
            for h in node.handlers
        ]  # fmt: skip
        final = N.Finally(body=self._suite(node.finalbody)) if node.finalbody else None
        return make(kind, body=self._suite(node.body), handlers=handlers, orelse=self._else(node.orelse), finalbody=final)

    def _function(self, node: ast.FunctionDef | ast.AsyncFunctionDef, asynchronous: cst.Asynchronous | None) -> cst.FunctionDef:
        self._named.append(set())
        made = N.FunctionDef(
            name=N.Name(value=node.name), params=self._parameters(node.args),
            body=self._suite(node.body), decorators=self._decorators(node.decorator_list),
            returns=None if node.returns is None else self._annotation(node.returns), asynchronous=asynchronous,
        )  # fmt: skip
        named = self._named.pop()
        self.attributes[made] = frozenset(named)
        if self._named:
            self._named[-1] |= named
        return made

    def _attribute(self, node: ast.Attribute) -> cst.Attribute:
        if self._named and type(node.value) is ast.Name:
            self._named[-1].add((node.value.id, node.attr))
        return N.Attribute(value=self.expr(node.value), attr=N.Name(value=node.attr))

    def _class(self, node: ast.ClassDef) -> cst.ClassDef:
        bases = [self._argument(b) for b in node.bases]
        keywords = [self._keyword(k) for k in node.keywords]
        for argument in bases + keywords:
            self._in_syntax_parentheses(argument.value)
        return N.ClassDef(
            name=N.Name(value=node.name), body=self._suite(node.body), bases=bases,
            keywords=keywords, decorators=self._decorators(node.decorator_list),
        )  # fmt: skip

    def _in_syntax_parentheses(self, value: cst.BaseExpression) -> cst.BaseExpression:
        if type(value) is cst.Call:
            self.in_syntax_parentheses.add(value)
        return value

    def _decorators(self, decorators: list[ast.expr]) -> list[cst.Decorator]:
        return [N.Decorator(decorator=self.expr(d)) for d in decorators]

    def _annotation(self, node: ast.expr) -> cst.Annotation:
        return N.Annotation(annotation=self.expr(node))

    def _delete(self, node: ast.Delete) -> cst.Del:
        targets = [self.expr(t) for t in node.targets]
        if len(targets) == 1:
            return N.Del(target=targets[0])
        return N.Del(target=N.Tuple(elements=[N.Element(value=t) for t in targets]))

    def _alias(self, alias: ast.alias) -> cst.ImportAlias:
        asname = None if alias.asname is None else N.AsName(name=N.Name(value=alias.asname))
        return N.ImportAlias(name=_dotted(alias.name), asname=asname)

    def _import_from(self, node: ast.ImportFrom) -> cst.ImportFrom:
        if len(node.names) == 1 and node.names[0].name == "*":
            names: Any = N.ImportStar()
        else:
            names = [self._alias(a) for a in node.names]
        module = None if node.module is None else _dotted(node.module)
        return N.ImportFrom(module=module, names=names, relative=[N.Dot() for _ in range(node.level)])

    # -- expressions -------------------------------------------------------------

    def expr(self, node: ast.expr) -> Any:
        convert = _EXPRESSIONS.get(type(node))
        if convert is None:
            raise Unconvertible(type(node).__name__)
        return convert(self, node)

    def _constant(self, node: ast.Constant) -> cst.BaseExpression:
        value = node.value
        if value is None or value is True or value is False:
            return N.Name(value=_CONSTANT_NAMES[value])
        if value is Ellipsis:
            return N.Ellipsis()
        if isinstance(value, (str, bytes)):
            text = self.text(node)
            return N.SimpleString(value=text) if _one_string(text) else self._strings(node, text)
        kind = cst.Integer if isinstance(value, int) else cst.Float if isinstance(value, float) else cst.Imaginary
        return make(kind, value=self.text(node))

    def _formatted_string(self, node: ast.JoinedStr) -> cst.BaseExpression:
        return self._strings(node, self.text(node)) if _FIELDS_PLACED else self._fragment(node)

    def _strings(self, node: ast.Constant | ast.JoinedStr, text: str) -> cst.BaseExpression:
        """A string, an f-string or an implicit concatenation of them (`"a" f"{b}"`,
        across lines), read off the source: each literal's text as written, an
        f-string's fields' expressions from the standard tree (see _fields). An
        f-string across lines, or one that does not read as the standard tree says,
        leaves the whole expression to libcst."""
        spans = _pieces(text)
        fields = [v for v in node.values if type(v) is not ast.Constant] if type(node) is ast.JoinedStr else []
        if spans is None or (type(node) is ast.JoinedStr and not text.isascii()):
            return self._fragment(node)  # the fields' byte columns are read as characters below
        pieces: list[cst.BaseString] = []
        claimed = 0
        for start, end in spans:
            piece = text[start:end]
            if "f" not in piece[: len(piece) - len(piece.lstrip(_PREFIX_LETTERS))].lower():
                pieces.append(N.SimpleString(value=piece))
                continue
            line = node.lineno + text.count("\n", 0, start)
            column = start - (text.rfind("\n", 0, start) + 1) + (node.col_offset if line == node.lineno else 0)
            mine = [
                v for v in fields
                if v.value.lineno == line and column <= v.value.col_offset < column + len(piece)
            ]  # fmt: skip
            parts = None if "\n" in piece else _fields(piece, column, mine)
            if parts is None:
                return self._fragment(node)
            claimed += len(mine)
            pieces.append(self._formatted(piece, parts))
        if claimed != len(fields):
            return self._fragment(node)
        built = pieces[-1]
        for piece in reversed(pieces[:-1]):  # libcst nests to the right: "a" ("b" "c")
            built = N.ConcatenatedString(left=piece, right=built)
        return built

    def _formatted(self, text: str, parts: list[Any]) -> cst.FormattedString:
        quote = _closing_quote(text)
        built = [
            N.FormattedStringText(value=part) if isinstance(part, str)
            else N.FormattedStringExpression(
                expression=self.expr(part[0]), conversion=part[1],
                format_spec=None if part[2] is None else [N.FormattedStringText(value=part[2])] if part[2] else [],
            )
            for part in parts
        ]  # fmt: skip
        return N.FormattedString(parts=built, start=text[: text.index(quote) + len(quote)], end=quote)

    def _call(self, node: ast.Call) -> cst.Call:
        args = [(a.lineno, a.col_offset, self._argument(a)) for a in node.args]
        first = args[0][2].value if args and type(node.args[0]) is ast.Call else None
        args += [(k.lineno, k.col_offset, self._keyword(k)) for k in node.keywords]
        if node.keywords and node.args:
            args.sort(key=lambda entry: (entry[0], entry[1]))  # `f(x=1, *rest)` keeps its order
        made = N.Call(func=self.expr(node.func), args=[a for _, _, a in args])
        self.calls[made] = (node.lineno, node.col_offset, node.end_lineno, node.end_col_offset)
        if first is not None:  # read by code_of, for the few calls whose code is read
            self.callers_function_end[first] = (node.func.end_lineno - 1, node.func.end_col_offset)
        return made

    def _argument(self, node: ast.expr) -> cst.Arg:
        if isinstance(node, ast.Starred):
            return N.Arg(value=self.expr(node.value), star="*")
        return N.Arg(value=self.expr(node), star="")

    def _keyword(self, node: ast.keyword) -> cst.Arg:
        if node.arg is None:
            return N.Arg(value=self.expr(node.value), star="**")
        return N.Arg(value=self.expr(node.value), keyword=N.Name(value=node.arg), star="")

    def _subscript(self, node: ast.Subscript) -> cst.BaseExpression:
        index = node.slice
        if isinstance(index, ast.Tuple):
            if self.text(index).startswith("("):  # `x[(a, b)]` is one element; `x[(a), b]` two
                return self._fragment(node)
            parts = [self._slice_part(e) for e in index.elts]
        else:
            parts = [self._slice_part(index)]
        return N.Subscript(value=self.expr(node.value), slice=[N.SubscriptElement(slice=p) for p in parts])

    def _slice_part(self, node: ast.expr) -> cst.BaseSlice:
        if isinstance(node, ast.Slice):
            return N.Slice(
                lower=None if node.lower is None else self.expr(node.lower),
                upper=None if node.upper is None else self.expr(node.upper),
                step=None if node.step is None else self.expr(node.step),
            )  # fmt: skip
        if isinstance(node, ast.Starred):
            raise Unconvertible("a starred subscript")
        return N.Index(value=self.expr(node))

    def _boolean(self, node: ast.BoolOp) -> cst.BooleanOperation:
        operator = _op(_BOOLEAN, node.op)
        left = self.expr(node.values[0])
        for value in node.values[1:]:  # `a and b and c` is ((a and b) and c)
            left = N.BooleanOperation(left=left, operator=operator, right=self.expr(value))
        return left

    def _compare(self, node: ast.Compare) -> cst.Comparison:
        targets = [
            N.ComparisonTarget(operator=_op(_COMPARE, op), comparator=self.expr(c))
            for op, c in zip(node.ops, node.comparators)
        ]  # fmt: skip
        return N.Comparison(left=self.expr(node.left), comparisons=targets)

    def _elements(self, nodes: list[ast.expr]) -> list[cst.BaseElement]:
        return [self.expr(n) if isinstance(n, ast.Starred) else N.Element(value=self.expr(n)) for n in nodes]

    def _dict(self, node: ast.Dict) -> cst.Dict:
        elements = [
            N.StarredDictElement(value=self.expr(v)) if k is None
            else N.DictElement(key=self.expr(k), value=self.expr(v))
            for k, v in zip(node.keys, node.values)
        ]  # fmt: skip
        return N.Dict(elements=elements)

    def _for_in(self, generators: list[ast.comprehension]) -> cst.CompFor:
        inner = None
        for generator in reversed(generators):
            inner = N.CompFor(
                target=self.expr(generator.target), iter=self.expr(generator.iter),
                ifs=[N.CompIf(test=self.expr(t)) for t in generator.ifs], inner_for_in=inner,
                asynchronous=N.Asynchronous() if generator.is_async else None,
            )  # fmt: skip
        return inner

    def _parameters(self, arguments: ast.arguments) -> cst.Parameters:
        positional = arguments.posonlyargs + arguments.args
        defaults = [None] * (len(positional) - len(arguments.defaults)) + list(arguments.defaults)
        made = [self._param(a, d, "") for a, d in zip(positional, defaults)]
        split = len(arguments.posonlyargs)
        if arguments.vararg is not None:
            star_arg: Any = self._param(arguments.vararg, None, "*")
        elif arguments.kwonlyargs:
            star_arg = N.ParamStar()
        else:
            star_arg = cst.MaybeSentinel.DEFAULT
        return N.Parameters(
            params=made[split:], posonly_params=made[:split],
            posonly_ind=N.ParamSlash() if split else cst.MaybeSentinel.DEFAULT, star_arg=star_arg,
            kwonly_params=[self._param(a, d, "") for a, d in zip(arguments.kwonlyargs, arguments.kw_defaults)],
            star_kwarg=None if arguments.kwarg is None else self._param(arguments.kwarg, None, "**"),
        )  # fmt: skip

    def _param(self, argument: ast.arg, default: ast.expr | None, star: str) -> cst.Param:
        return N.Param(
            name=N.Name(value=argument.arg), star=star,
            annotation=None if argument.annotation is None else self._annotation(argument.annotation),
            default=None if default is None else self.expr(default),
        )  # fmt: skip


# How each standard node becomes libcst's, by type. Functions of the builder and the
# node, not closures over one: a builder that its own tables referred to would be a
# cycle, and the tree it keeps would wait for the cyclic collector.
_EXPRESSIONS: dict[type, Callable[[_Builder, Any], Any]] = {
    ast.Name: lambda b, n: N.Name(value=n.id),
    ast.Attribute: _Builder._attribute,
    ast.Call: _Builder._call,
    ast.Constant: _Builder._constant,
    ast.Subscript: _Builder._subscript,
    ast.BinOp: lambda b, n: N.BinaryOperation(
        left=b.expr(n.left), operator=_op(_BINARY, n.op), right=b.expr(n.right)
    ),
    ast.UnaryOp: lambda b, n: N.UnaryOperation(operator=_op(_UNARY, n.op), expression=b.expr(n.operand)),
    ast.BoolOp: _Builder._boolean,
    ast.Compare: _Builder._compare,
    ast.Tuple: lambda b, n: N.Tuple(elements=b._elements(n.elts)),
    ast.List: lambda b, n: N.List(elements=b._elements(n.elts)),
    ast.Set: lambda b, n: N.Set(elements=b._elements(n.elts)),
    ast.Dict: _Builder._dict,
    ast.IfExp: lambda b, n: N.IfExp(test=b.expr(n.test), body=b.expr(n.body), orelse=b.expr(n.orelse)),
    ast.Lambda: lambda b, n: N.Lambda(params=b._parameters(n.args), body=b.expr(n.body)),
    ast.NamedExpr: lambda b, n: N.NamedExpr(target=b.expr(n.target), value=b.expr(n.value)),
    ast.Await: lambda b, n: N.Await(expression=b.expr(n.value)),
    ast.Yield: lambda b, n: N.Yield(value=None if n.value is None else b.expr(n.value)),
    ast.YieldFrom: lambda b, n: N.Yield(value=N.From(item=b.expr(n.value))),
    ast.ListComp: lambda b, n: N.ListComp(elt=b.expr(n.elt), for_in=b._for_in(n.generators)),
    ast.SetComp: lambda b, n: N.SetComp(elt=b.expr(n.elt), for_in=b._for_in(n.generators)),
    ast.GeneratorExp: lambda b, n: N.GeneratorExp(elt=b.expr(n.elt), for_in=b._for_in(n.generators)),
    ast.DictComp: lambda b, n: N.DictComp(
        key=b.expr(n.key), value=b.expr(n.value), for_in=b._for_in(n.generators)
    ),
    ast.JoinedStr: _Builder._formatted_string,
    ast.Starred: lambda b, n: N.StarredElement(value=b.expr(n.value)),
}
_STATEMENTS: dict[type, Callable[[_Builder, Any], Any]] = {
    ast.Expr: _Builder._expression_statement,
    ast.Assign: lambda b, n: N.Assign(
        targets=[N.AssignTarget(target=b.expr(t)) for t in n.targets], value=b.expr(n.value)
    ),
    ast.AugAssign: lambda b, n: N.AugAssign(
        target=b.expr(n.target), operator=_op(_AUGMENTED, n.op), value=b.expr(n.value)
    ),
    ast.AnnAssign: lambda b, n: N.AnnAssign(
        target=b.expr(n.target), annotation=b._annotation(n.annotation),
        value=None if n.value is None else b.expr(n.value),
    ),  # fmt: skip
    ast.Return: lambda b, n: N.Return(value=None if n.value is None else b.expr(n.value)),
    ast.Pass: lambda b, n: N.Pass(),
    ast.Break: lambda b, n: N.Break(),
    ast.Continue: lambda b, n: N.Continue(),
    ast.Raise: lambda b, n: N.Raise(
        exc=None if n.exc is None else b.expr(n.exc),
        cause=None if n.cause is None else N.From(item=b.expr(n.cause)),
    ),  # fmt: skip
    ast.Assert: lambda b, n: N.Assert(test=b.expr(n.test), msg=None if n.msg is None else b.expr(n.msg)),
    ast.Delete: _Builder._delete,
    ast.Global: lambda b, n: N.Global(names=[N.NameItem(name=N.Name(value=x)) for x in n.names]),
    ast.Nonlocal: lambda b, n: N.Nonlocal(
        names=[N.NameItem(name=N.Name(value=x)) for x in n.names]
    ),
    ast.Import: lambda b, n: N.Import(names=[b._alias(a) for a in n.names]),
    ast.ImportFrom: _Builder._import_from,
    ast.If: _Builder._if,
    ast.For: lambda b, n: b._for(n, None),
    ast.AsyncFor: lambda b, n: b._for(n, N.Asynchronous()),
    ast.While: lambda b, n: N.While(
        test=b.expr(n.test), body=b._suite(n.body), orelse=b._else(n.orelse)
    ),
    ast.With: lambda b, n: b._with(n, None),
    ast.AsyncWith: lambda b, n: b._with(n, N.Asynchronous()),
    ast.Try: lambda b, n: b._try(n, cst.Try, cst.ExceptHandler),
    ast.FunctionDef: lambda b, n: b._function(n, None),
    ast.AsyncFunctionDef: lambda b, n: b._function(n, N.Asynchronous()),
    ast.ClassDef: _Builder._class,
}
if sys.version_info >= (3, 11):  # `except*`: the standard parser of 3.10 has no TryStar
    _STATEMENTS[ast.TryStar] = lambda b, n: b._try(n, cst.TryStar, cst.ExceptStarHandler)
if sys.version_info >= (3, 10):
    _STATEMENTS[ast.Match] = lambda b, n: b._match(n)


def _identifiers_as_written(source: str) -> bool:
    """Whether the standard parser spells every identifier as written: it
    NFKC-normalizes them (`Ĳ` reads as `IJ`), libcst keeps them. Only a module that
    is not NFKC-normalized can differ; its names are read off its tokens (rare, and
    slower)."""
    if source.isascii() or unicodedata.is_normalized("NFKC", source):
        return True
    try:
        tokens = list(tokenize.generate_tokens(io.StringIO(source).readline))
    except (tokenize.TokenError, SyntaxError):
        return False
    return all(unicodedata.is_normalized("NFKC", t.string) for t in tokens if t.type == tokenize.NAME)


def _op(table: dict[type, type], op: ast.AST) -> Any:
    return make(table[type(op)])


def _dotted(name: str) -> cst.Name | cst.Attribute:
    parts = name.split(".")
    node: Any = N.Name(value=parts[0])
    for part in parts[1:]:
        node = N.Attribute(value=node, attr=N.Name(value=part))
    return node


# Before Python 3.12 the standard parser places an f-string field's expression
# exactly (a tuple and a generator aside, which take the braces as their
# parentheses). From 3.12 f-strings are tokens of their own: this reading has not
# been held to libcst's there, so libcst parses them.
_FIELDS_PLACED = sys.version_info < (3, 12)
_CONVERSIONS = {-1: None, ord("r"): "r", ord("s"): "s", ord("a"): "a"}


def _fields(text: str, start: int, values: list[ast.expr]) -> list[Any] | None:
    """An f-string's parts in libcst's order: the text between fields as written (a
    str) and each field as (expression, conversion, spec text or None). None where
    the source does not read as the standard tree says: libcst parses it then.
    `start` is the string's column, `values` the standard tree's parts."""
    quote = _closing_quote(text)
    at = text.index(quote) + len(quote)  # past the prefix and the opening quote
    close = len(text) - len(quote)
    parts: list[Any] = []
    for value in values:
        if type(value) is ast.Constant:
            continue  # its text is what lies between the fields
        if type(value) is not ast.FormattedValue:
            return None
        expression = value.value
        if type(expression) in (ast.Tuple, ast.GeneratorExp):
            return None
        if any(type(inner) is ast.JoinedStr for inner in ast.walk(expression)):
            return None  # a nested f-string's own fields are placed apart
        opening = expression.col_offset - start
        while opening > at and text[opening - 1] in " \t(":
            opening -= 1
        if opening <= at or text[opening - 1] != "{" or not _plain(text[at : opening - 1]):
            return None
        if opening - 1 > at:
            parts.append(text[at : opening - 1])
        after = expression.end_col_offset - start
        while after < close and text[after] in " \t)":
            after += 1
        conversion = None
        if text.startswith("!", after):
            conversion = text[after + 1 : after + 2]
            after += 2
        if conversion != _CONVERSIONS.get(value.conversion, "?"):
            return None  # the standard tree read again off the source: a misplaced field shows
        spec = None
        if text.startswith(":", after):
            end = text.find("}", after)
            spec = text[after + 1 : end]
            held = value.format_spec
            if end < 0 or "{" in spec or held is None or any(type(v) is not ast.Constant for v in held.values):
                return None
            after = end
        elif value.format_spec is not None:
            return None
        if not text.startswith("}", after):
            return None
        parts.append((expression, conversion, spec))
        at = after + 1
    if not _plain(text[at:close]):
        return None
    if close > at:
        parts.append(text[at:close])
    return parts


def _closing_quote(text: str) -> str:
    return text[-3:] if text.endswith(("'''", '"""')) else text[-1]


def _plain(text: str) -> bool:
    """Whether an f-string's text between fields holds no brace but doubled ones."""
    return "{" not in text.replace("{{", "") and "}" not in text.replace("}}", "")


_PREFIX_LETTERS = "rRbBuUfF"


def _one_string(text: str) -> bool:
    """Whether `text` is one string literal (not `"a" "b"`, which libcst keeps as a
    concatenation of two)."""
    spans = _pieces(text)
    return spans is not None and len(spans) == 1


def _pieces(text: str) -> list[tuple[int, int]] | None:
    """Where each string literal of an implicit concatenation (or the only one)
    starts and ends in its source; between them stand only blanks, comments and
    backslash continuations. None where the text does not read so."""
    spans: list[tuple[int, int]] = []
    at = 0
    while True:
        start = at
        while at < len(text) and text[at] in _PREFIX_LETTERS:
            at += 1
        if at - start > 2 or text[at : at + 1] not in ("'", '"'):
            return None
        quote = text[at : at + 3] if text[at : at + 3] in ('"""', "'''") else text[at]
        end = _string_end(text, at + len(quote), quote)
        if end is None:
            return None
        spans.append((start, end))
        at = _past_gap(text, end)
        if at == len(text):
            return spans


def _string_end(text: str, at: int, quote: str) -> int | None:
    """Where the literal whose body starts at `at` ends: past its first closing quote
    that no backslash escapes (a raw string's backslash keeps its quote too)."""
    body = at
    while True:
        end = text.find(quote, at)
        if end < 0:
            return None
        backslashes = 0
        while end - 1 - backslashes >= body and text[end - 1 - backslashes] == "\\":
            backslashes += 1
        if backslashes % 2 == 0:
            return end + len(quote)
        at = end + 1


def _past_gap(text: str, at: int) -> int:
    """Past the blanks, comments and backslash continuations from `at`."""
    while at < len(text):
        if text[at] in " \t\r\n\f":
            at += 1
        elif text[at] == "#":
            newline = text.find("\n", at)
            at = len(text) if newline < 0 else newline
        elif text.startswith(("\\\n", "\\\r\n"), at):
            at = text.index("\n", at) + 1
        else:
            break
    return at
