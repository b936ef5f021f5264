"""A module's (or class body's) source with a stub for each function that cannot be decompiled.

``framescope.decompile(code, partial=True)``: each function defined in the module, and each
method of its classes, is decompiled and checked on its own; one that fails is written as a
stub of the same signature that raises ``NotImplementedError``, with the reason and its
disassembly in a comment above it. The rest of the module is then checked as a whole,
the stubs standing for the functions they replace; a function that passed its own check
but differs there is made a stub too, and the module rebuilt.
"""
import ast
import dis
import inspect
from types import CodeType
from typing import Any, List, NamedTuple, Optional, Tuple

from framescope.decompiler.emit.cleanup import class_body
from framescope.decompiler.function import body_of, def_header, nested
from framescope.decompiler.simulate import values as v
from framescope.errors import DecompilationError

#: The first line of the comment above a stub.
STUB_COMMENT = "# framescope: cannot decompile %s: %s"

#: Marks a stub's body in the printed text, where its comment goes (never left in the output).
PLACEHOLDER = "__framescope_stub_%d__"


class Refusal(NamedTuple):
    """A function written as a stub: its code object, qualified name and why it was refused."""

    code: CodeType
    qualname: str
    reason: str


class Stubs:
    """Builds the definitions of one module or class body, a stub for each it cannot decompile."""

    def __init__(self, indent: int, forced: Optional[List[Refusal]] = None) -> None:
        self.indent = indent
        #: Functions to stub whatever their own check says (they differ in the whole).
        self.forced = forced or []
        self.refused: List[Refusal] = []
        #: The classes whose bodies are being built, outermost first.
        self.classes: List[str] = []

    def build(self, func: v.Function, target: Any = None, iterator: Optional[v.Iterator] = None) -> Any:
        """`function.nested`, a definition it refuses (or whose check fails) a stub."""
        if target == "class":  # a class's methods get stubs too
            self.classes.append(func.code.co_name)
            try:
                return nested(func, target, iterator, build=self.build)
            finally:
                self.classes.pop()
        if not is_function_definition(func, target):
            return nested(func, target, iterator)
        forced = next((refusal for refusal in self.forced if refusal.code == func.code), None)
        if forced is not None:
            return self.stub(func, forced.reason)
        try:
            node = nested(func, target, iterator)
            check_alone(node, func.code, self.indent)
            return node
        except DecompilationError as refused:
            return self.stub(func, refused.reason)

    def stub(self, func: v.Function, reason: str) -> ast.stmt:
        code = func.code
        node = def_header(code, func, code.co_name)
        message = "framescope could not decompile %s: %s" % (code.co_name, " ".join(reason.split()))
        node.body = [ast.Expr(value=ast.Constant(value=PLACEHOLDER % len(self.refused))),
                     ast.Raise(exc=ast.Call(func=ast.Name(id="NotImplementedError", ctx=ast.Load()),
                                            args=[ast.Constant(value=message)], keywords=[]), cause=None)]
        if "__class__" in code.co_freevars:  # keep the class cell that zero-argument super() needs
            node.body.insert(1, ast.Expr(value=ast.Name(id="__class__", ctx=ast.Load())))
        self.refused.append(Refusal(code, ".".join(self.classes + [code.co_name]), reason))
        return node

    def comment(self, index: int) -> List[str]:
        """The comment lines above the stub ``index``: the reason, then the disassembly."""
        code, qualname, reason = self.refused[index]
        lines = [STUB_COMMENT % (qualname, " ".join(reason.split()))]
        lines += ["#     " + line if line.strip() else "#" for line in dis.Bytecode(code).dis().splitlines()]
        return lines


def is_function_definition(func: v.Function, target: Any) -> bool:
    """A ``def`` the build names (not a lambda, comprehension or a 3.12+ generic scope's function)."""
    code = func.code
    return (isinstance(target, ast.Name) and target.id == code.co_name and code.co_name.isidentifier()
            and bool(code.co_flags & inspect.CO_NEWLOCALS))


def check_alone(node: ast.stmt, code: CodeType, indent: int) -> None:
    """DecompilationError unless the definition ``node`` alone recompiles to ``code``."""
    from framescope.decompiler.api import check, layout

    check(layout(ast.Module(body=[node], type_ignores=[]), indent), code)


def partial_tree(code: CodeType, stubs: Stubs, module: bool) -> ast.Module:
    """The module (or class statement, for a class body) with the stubs in it."""
    from framescope.decompiler.api import module_tree

    if module:
        return module_tree(code, stubs.build)
    node = ast.ClassDef(name=code.co_name, bases=[], keywords=[],
                        body=class_body(code, body_of(code, build=stubs.build)), decorator_list=[])
    if hasattr(ast, "TypeAlias"):
        node.type_params = []
    return ast.Module(body=[node], type_ignores=[])


#: How many times a module is rebuilt with one more stub, for functions that pass their
#: own check but differ in the whole (the compiler lays some code out by line numbers).
MAX_REBUILDS = 8


def partial_source(code: CodeType, indent: int, verify: bool, module: bool) -> Tuple[str, List[Refusal]]:
    """The source of a module (or class body) code object, the functions refused as stubs,
    and the refusals; DecompilationError when the rest cannot be decompiled."""
    from framescope.decompiler.api import first_difference, layout

    forced: List[Refusal] = []
    while True:
        stubs = Stubs(indent, forced)
        text = layout(partial_tree(code, stubs, module), indent)
        difference = first_difference(text, code, [r.code for r in stubs.refused]) if verify else None
        if difference is None:
            return with_comments(text, stubs), stubs.refused
        culprit = defined_function(code, difference.where)
        if culprit is None or len(forced) == MAX_REBUILDS or any(r.code == culprit.code for r in forced):
            raise DecompilationError("recompiled code differs: %s" % difference.message, code_name=code.co_name)
        forced.append(culprit._replace(reason="recompiled code differs: %s" % difference.message))


def defined_function(code: CodeType, where: str) -> Optional[Refusal]:
    """The function defined in ``code`` or in its classes (a stub can stand for it) that holds
    the code object at the dotted path ``where`` (`equivalence.Difference.where`), with its
    qualified name."""
    names = where.split(".")[1:]
    for depth, name in enumerate(names):
        code = next((c for c in code.co_consts if isinstance(c, CodeType) and c.co_name == name), None)
        if code is None or not name.isidentifier():
            return None
        if code.co_flags & inspect.CO_NEWLOCALS:
            return Refusal(code, ".".join(names[:depth + 1]), "")
    return None


def with_comments(text: str, stubs: Stubs) -> str:
    """``text`` with each stub's placeholder line gone and its comment above its definition
    (above the decorators)."""
    lines = text.split("\n")
    for index in range(len(stubs.refused)):
        at = next(i for i, line in enumerate(lines) if PLACEHOLDER % index in line)
        head = at - 1
        while not lines[head].lstrip().startswith(("def ", "async def ")):
            head -= 1
        pad = lines[head][:len(lines[head]) - len(lines[head].lstrip())]
        while head > 0 and lines[head - 1].startswith(pad + "@"):
            head -= 1
        del lines[at]
        lines[head:head] = [pad + line for line in stubs.comment(index)]
    return "\n".join(lines)
