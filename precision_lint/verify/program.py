"""Builds the replay of one site from the source: a faithful slice of the function
(or of the class's methods) it lives in, instrumented, as Python source for the
child process. No torch here.

Faithful means: statements stay in their order and inside their loops; an `if`
whose arms touch the accumulator is replayed once per arm (a *scenario*, named in
the report); the inputs are bound before anything reads them; a statement the
replay cannot run (a helper of the user's code, another library) is left out and
its result synthesized, and the report lists it. Around the site:

- the creation is followed by `__h.start(...)`, which starts the accumulator (and
  its exact shadow) near the dtype's limit;
- each add evaluates its count once, runs as written, and is mirrored on the
  shadow in exact integers (`__h.exact`);
- any other statement that changes the accumulator is mirrored on the shadow in
  float64, so a reset or a rebinding keeps the shadow right;
- a value site is wrapped as `__h.value(k, <as written>, <exact version>)`.
"""
from __future__ import annotations

import libcst as cst

from ..model.dtypes import ALL_DTYPES
from ..model.imports import dotted_name
from ..model.semantic import SemanticModel
from . import sandbox
from .code_helpers import (
    NOT_LITERAL,
    SCOPES,
    imported_names,
    indent_lines,
    is_filter,
    literal_value,
    names_read_before_bound,
    operands,
    parameters_of,
    plain_targets,
    registration_of,
    short,
    suite_lines,
    target_spec,
)
from .device_map import DeviceMapping
from .names import is_replay_library_name, unrunnable_calls
from .numpy_inputs import resolve
from .replay_parts import Branch, Locator, Part
from .site_code import SiteCode
from .sites import NoReplay, Site
from .slicing import Slicer
from .source_view import Edit, Rewriter, SourceIndex, all_nodes
from .usage import UsageAnalysis

MAX_SCENARIOS = 8
COLLECTIVE_WORDS = ("all_reduce", "reduce", "all_reduce_coalesced")


class ReplayBuilder(Locator, DeviceMapping, Slicer, SiteCode):
    def __init__(self, source: SourceIndex, model: SemanticModel, site: Site, number: int = 0, hook: str = "__h", temp: str = "__") -> None:
        # how the instrumentation names things: `__h` and `__a0` in a replay, names
        # no module can clash with (and Python does not mangle in a class) in real runs
        self.k, self.hook, self.temp = number, hook, temp
        self.source = source
        self.model = model
        self.imports = model.imports
        self.site = site
        self.left_out: list[str] = []
        self.parts: list[Part] = []
        self.branches: dict[int, Branch] = {}
        self.opaque_specs: list[dict] = []
        self.opaque_ids: dict[int, int] = {}
        self.mapped_calls: set[int] = set()
        self.target = ""  # the accumulator as the source spells it
        self.owner = "None"
        self.creation_statement: cst.CSTNode | None = None
        self.registration: cst.Call | None = None
        self.add_statements: dict[int, int] = {}  # id -> index into site.adds
        self.value_statement: cst.CSTNode | None = None
        self.angle: tuple[cst.CSTNode, cst.CSTNode, str] | None = None  # (statement, expression, positions name)
        self.constants: dict[str, object] = {}
        self.module_lines: list[str] = []
        self.inlined: dict[int, Part] = {}  # `self.m(...)` statements of init parts -> m's part
        self.opaque_loops: list[cst.For] = []

    # -- entry ------------------------------------------------------------------------

    def build(self) -> dict:
        self._locate()
        self._constants()
        self._mappings()
        self._slice()
        analysis = self._usage()
        programs, line_maps = {}, {}
        for variant in ("before", "after"):
            rewriter = Rewriter(self.source, self.mapping_edits + (self.site.fix_edits if variant == "after" else []))
            programs[variant], line_maps[variant] = self._emit(rewriter, analysis)
        for variant, program in programs.items():
            found = sandbox.problems(program)
            if found:
                raise NoReplay(f"the {variant} replay would run what a replay may not: {found[0]}")
        scenarios = self._scenarios()
        # which inputs are NumPy arrays: where the code hands them to NumPy, and by default
        # in the replay of a NumPy total
        numpy_total = self.site.library == "numpy"
        self.inputs = {name: resolve(spec, numpy_total) for name, spec in self.inputs.items()}
        self.opaque_specs = [resolve(spec, numpy_total) for spec in self.opaque_specs]
        return {
            "code": self.site.code,
            "kind": self.site.kind,
            "library": self.site.library,
            "function": self._function_name(),
            "target": self.target,
            "dtype": self._dtype_name(),
            "limit": self._limit(),
            # the dtype the child runs a floating accumulator (and floating inputs) in,
            # when it is not the one written: see findings.run_dtype
            "run_dtype": self.site.run_dtype[0] if self.site.run_dtype is not None else None,
            "integral_fix": self.site.integral_fix,
            "programs": programs,
            "line_maps": line_maps,
            "inputs": self.inputs,
            "opaque": self.opaque_specs,
            "branches": [
                {"tests": b.tests, "varied": b.varied, "default": b.default, "line": self.source.line(b.node)}
                for b in self.branches.values()
            ],
            "scenarios": scenarios,
            "collectives": self.collectives,
            "angles": self.angle is not None,
            "module_cast": self.site.module_cast,
            "calls": any(p.role == "call" for p in self.parts) and any(p.role == "init" for p in self.parts),
            "left_out": list(dict.fromkeys(self.left_out)),
        }

    def _dtype_name(self) -> str | None:
        if self.site.run_dtype is not None:
            return self.site.run_dtype[0]
        return self.site.dtype.name if self.site.dtype is not None else None

    def _limit(self) -> int | None:
        name = self._dtype_name()
        known = {d.name: d.exact_integer_limit for d in ALL_DTYPES}
        if name in known:
            return known[name]
        return self.site.dtype.exact_integer_limit if self.site.dtype is not None else None

    # -- where things are -------------------------------------------------------------

    def _usage(self) -> UsageAnalysis:
        buffer_size = 2
        if self.site.creation is not None and isinstance(self.site.creation, cst.Call):
            sizes = [a.value for a in self.site.creation.args if a.keyword is None]
            if sizes and isinstance(sizes[0], cst.Integer):
                buffer_size = max(1, int(sizes[0].value, 0))
            elif sizes and isinstance(sizes[0], cst.Name) and isinstance(self.constants.get(sizes[0].value), int):
                buffer_size = max(1, self.constants[sizes[0].value])
            elif sizes:
                buffer_size = 4  # a size input: the child makes it 4
        analysis = UsageAnalysis(self.imports, self.constants, buffer_size)
        for part in self.parts:
            analysis.analyse(part.scope, self.source.parents)
        analysis.finish()
        for spec in self.opaque_specs:
            if "index" in spec.get("roles", []) and spec.get("index_range") is None:
                spec["index_range"] = buffer_size  # a synthesized index stays inside the buffer
        for loop in self.opaque_loops:
            self.opaque_specs[self.opaque_ids[id(loop.iter)]] = {"roles": [], "elem": target_spec(loop.target, analysis)}
        if self.angle is not None:
            # what the positions are multiplied with: rotary frequencies, not counts
            for node in operands(self.angle[1], self.imports):
                path = analysis.path_of(node) if not (isinstance(node, cst.Name) and node.value == self.angle[2]) else None
                if path is not None:
                    analysis.mark(path, "frequencies")
        for add in self.site.adds:
            path = analysis.path_of(add.addend) if add.whole and isinstance(add.addend, (cst.Name, cst.Attribute, cst.Subscript)) else None
            if path is not None:
                # a count from a helper the replay leaves out is an integer, not a float
                # (and into an integer accumulator: a float added in place would raise)
                integer_site = self.site.dtype is not None and self.site.dtype.is_integer
                analysis.mark(path, "count" if add.counts or integer_site else "scalar")
        self.analysis = analysis
        return analysis

    # -- emission -------------------------------------------------------------------------

    def _emit(self, rewriter: Rewriter, analysis: UsageAnalysis) -> tuple[str, dict]:
        self.rewriter = rewriter
        lines: list[tuple[str, int, str]] = []  # (text, source line, kind)
        self.inputs = {}
        self.collectives = False
        imports = ["import torch"] + [line for line in self._library_imports() if line != "import torch"]
        head = [(line, 0, "setup") for line in imports + self.module_lines]
        head.append(("__device = __h.device()", 0, "setup"))
        has_self = any(p.self_name for p in self.parts)
        if has_self:
            head.append(("self = __h.self_object()", 0, "setup"))
            self.inputs["self"] = analysis.spec(next(p.self_name for p in self.parts if p.self_name))
        functions = []
        for number, part in enumerate(self.parts):
            body = self._block(self._body(part.scope), part, 1)
            bindings = self._bindings(part, body, analysis, set(imports) | {"self"})
            name = f"__m{number}"
            params = "self" if part.self_name else ""
            if part.role == "called":
                params = ", ".join(["self"] + self._parameters(part.scope))
            functions.append((name, part))
            lines.append((f"def {name}({params}):", self.source.line(part.scope) if isinstance(part.scope, cst.FunctionDef) else 0, "header"))
            lines.extend(("    " + text, 0, "input") for text in bindings)
            lines.extend(("    " + text, line, kind) for text, line, kind in body)
            if not bindings and not body:
                lines.append(("    pass", 0, "setup"))
        roles = {role: "[" + ", ".join(n for n, p in functions if p.role == role) + "]" for role in ("init", "call", "post", "main")}
        runner = f"__h.run({roles['init']}, {roles['call'] if roles['call'] != '[]' else roles['main']}, {roles['post']}, {'self' if has_self else 'None'})"
        program = ["def __replay(__h):"]
        line_map: dict[int, list] = {}
        for text, line, kind in head + lines + [(runner, 0, "setup")]:
            program.append("    " + text)
            line_map[len(program)] = [line, kind]
        return "\n".join(program) + "\n", line_map

    def _parameters(self, function: cst.FunctionDef) -> list[str]:
        """A called method's parameters without `self` and annotations (defaults kept)."""
        out = []
        params = function.params
        for param in list(params.posonly_params) + list(params.params)[1:]:
            default = f"={self.rewriter.render(param.default)}" if param.default is not None else ""
            out.append(param.name.value + default)
        if isinstance(params.star_arg, cst.Param):
            out.append("*" + params.star_arg.name.value)
        for param in params.kwonly_params:
            default = f"={self.rewriter.render(param.default)}" if param.default is not None else "=None"
            out.append(param.name.value + default)
        if params.star_kwarg is not None:
            out.append("**" + params.star_kwarg.name.value)
        return out

    def _body(self, scope: cst.CSTNode) -> list:
        if isinstance(scope, cst.FunctionDef):
            return list(scope.body.body) if isinstance(scope.body, cst.IndentedBlock) else [scope.body]
        return [s for s in scope.body if not isinstance(s, (cst.FunctionDef, cst.ClassDef))]

    def _library_imports(self) -> list[str]:
        """The module's imports of torch and NumPy (what a replay may import)."""
        lines = []
        for statement in self.model.module.body:
            if not isinstance(statement, cst.SimpleStatementLine):
                continue
            for small in statement.body:
                if isinstance(small, cst.Import):
                    names = [dotted_name(a.name) or "" for a in small.names]
                    if all(is_replay_library_name(n) for n in names) and not sandbox.problems(self.source.raw(small), generated=False):
                        lines.append(self.source.raw(small))
                elif isinstance(small, cst.ImportFrom) and small.module is not None and not small.relative and not isinstance(small.names, cst.ImportStar):
                    if is_replay_library_name(dotted_name(small.module)) and not sandbox.problems(self.source.raw(small), generated=False):
                        lines.append(self.source.raw(small))
        return lines

    def _bindings(self, part: Part, body: list, analysis: UsageAnalysis, outer: set[str]) -> list[str]:
        """Inputs bound at the top of the part, before anything (the creation too)
        reads them: parameters with a literal default get it, everything else the
        code reads before binding it is synthesized."""
        text = "\n".join(t for t, _, _ in body)
        inputs = names_read_before_bound(text)
        defined_outside = {line.split(" = ")[0] for line in self.module_lines} | imported_names(outer) | {"__device", "__h", "self"}
        defaults = {}
        if isinstance(part.scope, cst.FunctionDef):
            for param in parameters_of(part.scope):
                if param.default is not None and literal_value(param.default) is not NOT_LITERAL:
                    if "positions" in analysis.spec(param.name.value).get("roles", []) and part.role in ("main", "call"):
                        # a length of positions: the callers choose it, the replay drives it long
                        self.left_out.append(f"the default `{param.name.value}={self.source.raw(param.default)}` (a length of positions: synthesized)")
                        continue
                    defaults[param.name.value] = self.source.raw(param.default)
        bindings = []
        if part.role == "called":
            defined_outside |= {p.name.value for p in parameters_of(part.scope)}
        for name in inputs:
            if name in defined_outside or name in sandbox.SAFE_BUILTINS or name == part.self_name or sandbox.GENERATED_NAME.match(name):
                continue
            if name in defaults:
                bindings.append(f"{name} = {defaults[name]}")
            else:
                bindings.append(f"{name} = __h.input({name!r})")
                self.inputs[name] = analysis.spec(name)
        return bindings

    def _block(self, statements, part: Part, depth: int) -> list[tuple[str, int, str]]:
        out: list[tuple[str, int, str]] = []
        for statement in statements:
            if isinstance(statement, (cst.SimpleStatementLine, cst.SimpleStatementSuite)):
                for small in statement.body:
                    if id(small) in part.keep:
                        out.extend(self._small(small, part))
            elif isinstance(statement, SCOPES):
                continue
            elif not self._contains_kept(statement, part):
                if isinstance(statement, cst.If) and is_filter(statement) and self._loops_of(statement, part.scope):
                    self.left_out.append(f"filter `if {short(self.source.raw(statement.test))}:` (not replayed: every step adds)")
                continue
            elif isinstance(statement, cst.If):
                out.extend(self._if(statement, part, depth))
            elif isinstance(statement, cst.For):
                body = self._block(suite_lines(statement.body), part, depth + 1)
                if body:
                    iterable = self.rewriter.render(statement.iter)
                    header = f"for {self.rewriter.render(statement.target)} in __h.bounded({iterable}):"
                    if id(statement.iter) in self.opaque_ids:
                        header = f"for {self.rewriter.render(statement.target)} in __h.bounded(__h.opaque({self.opaque_ids[id(statement.iter)]})):"
                    out.append((header, self.source.line(statement), "loop"))
                    out.extend(indent_lines(body))
                    if statement.orelse is not None:
                        self.left_out.append(f"the `else:` of the loop at line {self.source.line(statement)}")
            elif isinstance(statement, cst.While):
                body = self._block(suite_lines(statement.body), part, depth + 1)
                if body:
                    number = len(self.branches) + 1000 * depth + self.source.line(statement)
                    out.append((f"while __h.loop({number}):", self.source.line(statement), "loop"))
                    out.extend(indent_lines(body))
                    self.left_out.append(f"`while {short(self.source.raw(statement.test))}:` runs a fixed number of times")
            elif isinstance(statement, cst.With):
                body = self._block(suite_lines(statement.body), part, depth + 1)
                items = ", ".join(self.rewriter.render(item) for item in statement.items)
                runnable = not any(unrunnable_calls(item, self.imports, part.self_name, self.mapped_calls) for item in statement.items)
                if runnable and not sandbox.problems(f"with {items}:\n    pass\n"):
                    out.append((f"with {items}:", self.source.line(statement), "with"))
                    out.extend(indent_lines(body) or [("    pass", 0, "setup")])
                else:
                    self.left_out.append(f"`with {short(items)}:` (its body runs without it)")
                    out.extend(body)
            elif isinstance(statement, (cst.Try, getattr(cst, "TryStar", cst.Try))):
                out.extend(self._block(suite_lines(statement.body), part, depth))
                if any(self._contains_kept(h, part) for h in statement.handlers):
                    self.left_out.append(f"the `except` blocks of the `try` at line {self.source.line(statement)}")
                for block in (statement.orelse, statement.finalbody):
                    if block is not None:
                        out.extend(self._block(suite_lines(block.body), part, depth))
            else:
                self.left_out.append(f"the `{type(statement).__name__.lower()}` statement at line {self.source.line(statement)}")
        return out

    def _branch(self, node: cst.If, part: Part, cache: bool = True) -> Branch | None:
        if cache and id(node) in self.branches:
            return self.branches[id(node)]
        arms: list[cst.CSTNode] = []
        tests: list[cst.BaseExpression] = []
        current: cst.BaseSuite | cst.If | cst.Else | None = node
        while isinstance(current, cst.If):
            arms.append(current.body)
            tests.append(current.test)
            current = current.orelse
        arms.append(current.body if isinstance(current, cst.Else) else None)
        kept = [arm is not None and self._contains_kept(arm, part) for arm in arms]
        site_arms = [arm is not None and any(self._is_site_statement(n) for n in all_nodes(arm) if id(n) in part.keep) for arm in arms]
        varied = any(site_arms)
        default = site_arms.index(True) if varied else (kept.index(True) if any(kept) else len(arms) - 1)
        runnable = all(not unrunnable_calls(t, self.imports, part.self_name, self.mapped_calls) for t in tests) and not any(
            sandbox.problems(Rewriter(self.source, self.mapping_edits).render(t)) for t in tests
        )
        branch = Branch(node, arms, [short(self.source.raw(t)) for t in tests], varied, default, runnable)
        if cache:
            self.branches[id(node)] = branch
        return branch

    def _if(self, node: cst.If, part: Part, depth: int) -> list[tuple[str, int, str]]:
        branch = self._branch(node, part)
        number = list(self.branches).index(id(node))
        out: list[tuple[str, int, str]] = []
        evaluated = branch.runnable and not branch.varied
        if not evaluated and not branch.varied:
            taken = "the first arm" if branch.default == 0 else ("the `else:` arm" if branch.default == len(branch.arms) - 1 else f"arm {branch.default + 1}")
            self.left_out.append(f"`if {branch.tests[0]}:` is not evaluated on synthetic inputs; the replay takes {taken}")
        current: cst.CSTNode | None = node
        index = 0
        while isinstance(current, cst.If):
            keyword = "if" if index == 0 else "elif"
            test = f"__h.test({number}, {index}, lambda: {self.rewriter.render(current.test)})" if evaluated else f"__h.arm({number}, {index})"
            body = self._block(suite_lines(current.body), part, depth + 1)
            out.append((f"{keyword} {test}:", self.source.line(current), "branch"))
            out.extend(indent_lines(body) or [("    pass", 0, "setup")])
            current = current.orelse
            index += 1
        if isinstance(current, cst.Else):
            body = self._block(suite_lines(current.body), part, depth + 1)
            if body:
                out.append(("else:", self.source.line(current), "branch"))
                out.extend(indent_lines(body))
        return out

    def _small(self, small: cst.CSTNode, part: Part) -> list[tuple[str, int, str]]:
        line = self.source.line(small)
        r = self.rewriter
        extra = [Edit(*self.source.offsets(c), f"__h.opaque({self.opaque_ids[id(c)]})", None, 1) for c in part.dropped_calls.get(id(small), [])]
        render = Rewriter(self.source, r.edits + extra)
        callee = self.inlined.get(id(small))
        if callee is not None:
            call = small.value
            number = self.parts.index(callee)
            arguments = ", ".join(["self"] + [render.render(a) for a in call.args])
            return [(f"__m{number}({arguments})", line, "slice")]
        if id(small) in part.opaque:
            names = sorted(plain_targets(small))
            for name in names:
                self.inputs.setdefault(name, self.analysis.spec(name))
            return [(f"{name} = __h.input({name!r})", line, "opaque") for name in names]
        if small is self.creation_statement and id(small) in self.add_statements and self.registration is None:
            return self._chained_lines(small, render, line)
        if small is self.creation_statement:
            text = self._register_text(small, render) if self.registration is not None else render.render(small)
            return self._creation_lines(text, line)
        registered = registration_of(small)
        if registered is not None and part.self_name:
            name, value = registered
            return [(f"{part.self_name}.{name} = __h.module_cast({render.render(value)})", line, "slice")]
        if id(small) in self.add_statements:
            return self._add_lines(small, render, line)
        if small is self.value_statement or (self.angle is not None and small is self.angle[0]):
            return [(self._value_text(small, render), line, "value")]
        if self._writes_target(small):
            return self._mirror_lines(small, render, line)
        text = render.render(small)
        if isinstance(small, cst.Expr) and any(w in text for w in COLLECTIVE_WORDS) and self._collective(small):
            self.collectives = True
        if (id(small) not in part.core or part.role in ("init", "called")) and not isinstance(small, cst.Return) and self.hook == "__h":
            # only reads the accumulator afterwards, or builds the instance (what it fails to
            # set on `self` is synthesized when read): an error is reported, the run goes on
            body = text.replace("\n", "\n    ")
            return [("try:", line, "post"), ("    " + body, line, "post"), ("except Exception as __e:", line, "post"), (f"    __h.failed({line}, __e)", line, "post")]
        return [(text, line, "slice")]

    def _scenarios(self) -> list[dict]:
        varied = []
        base = {str(number): b.default for number, b in enumerate(self.branches.values())}
        for number, branch in enumerate(self.branches.values()):
            if not branch.varied:
                continue
            creating = self._creating_arm(branch)
            if creating is None:
                varied.append((number, branch))
                continue
            # `if on: self._hits = torch.zeros(n) else: self._hits = None`: only the arm
            # that creates the accumulator has one to replay
            base[str(number)] = creating
            self.left_out.append(f"the other arms of `if {branch.tests[0]}:` (the accumulator is created only in {'the first arm' if creating == 0 else f'arm {creating + 1}'})")
        scenarios = [{"name": self._scenario_name(base, varied), "arms": base}]
        for number, branch in varied:
            for arm in range(len(branch.arms)):
                if arm == branch.default:
                    continue
                arms = dict(base)
                arms[str(number)] = arm
                scenarios.append({"name": self._scenario_name(arms, varied), "arms": arms})
        if self.site.module_cast:
            scenarios = [
                {**s, "name": f"{s['name']}{'; ' if s['name'] else ''}module cast to {cast}", "cast": cast}
                for s in scenarios for cast in ("bfloat16", "float16")
            ] + [{**s, "name": f"{s['name']}{'; ' if s['name'] else ''}module as built"} for s in scenarios]  # fmt: skip
        if len(scenarios) > MAX_SCENARIOS:
            self.left_out.append(f"{len(scenarios) - MAX_SCENARIOS} more combinations of branches")
            scenarios = scenarios[:MAX_SCENARIOS]
        return scenarios

    def _creating_arm(self, branch) -> int | None:
        if self.creation_statement is None:
            return None
        for number, arm in enumerate(branch.arms):
            if arm is not None and any(n is self.creation_statement for n in all_nodes(arm)):
                return number
        return None

    def _scenario_name(self, arms: dict, varied) -> str:
        names = []
        for number, branch in varied:
            arm = arms[str(number)]
            if arm < len(branch.tests):
                names.append(f"`if {branch.tests[arm]}` taken")
            else:
                names.append(f"`if {branch.tests[0]}` not taken")
        return "; ".join(names)
