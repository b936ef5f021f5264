"""Print an ``ast`` tree as Python source.

``ast.unparse`` does not exist on Python 3.8 and its output changes from one version to
the next, so framescope prints the trees its decompiler builds with this module on every
version from 3.8 to 3.14. The output parses back to the same tree on the running
interpreter, with as few parentheses as that allows.

Expression visitors return ``(text, precedence)``; the caller adds parentheses when the
precedence is weaker than the place needs. Statement visitors write lines. Visitors of the
other nodes (arguments, keywords, patterns, ...) return their text.
"""

from __future__ import annotations

import ast
from typing import Any, Optional, Sequence

from framescope.decompiler.emit.expression_printer import ExpressionPrinter, is_tuple, starred_tuple
from framescope.decompiler.emit.literals import docstring_text
from framescope.decompiler.emit.precedence import BINOPS, P, Precedence
from framescope.decompiler.frontend import versions

__all__ = ["Precedence", "unparse"]


#: Statements that PEP 8 sets apart with blank lines.
DEFINITIONS = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)

#: Blank lines around a definition: at the top of a module, in a class body.
MODULE_SPACING = 2
CLASS_SPACING = 1


def is_docstring(node: ast.stmt) -> bool:
    return (
        isinstance(node, ast.Expr)
        and isinstance(node.value, ast.Constant)
        and isinstance(node.value.value, str)
    )


class Unparser(ExpressionPrinter):
    """Prints modules and statements, line by line."""

    #: Lines longer than this (indentation included) that end in a call with two or more
    #: arguments print one argument a line; None: no limit (the default).
    width = None

    def line(self, text: str) -> None:
        self._lines.append(self._pad + text)

    def call_line(self, prefix: str, value: ast.expr, text: str) -> None:
        """``prefix + text``, where ``text`` is ``value`` printed: on one line, or, for a call
        past the width, with its arguments one per line."""
        arguments = len(value.args) + len(value.keywords) if isinstance(value, ast.Call) else 0
        if self.width is None or arguments < 2 or len(self._pad) + len(prefix) + len(text) <= self.width:
            self.line(prefix + text)
            return
        self.line(prefix + self.expr(value.func, P.ATOM) + "(")
        inner = self._pad + self._unit
        parts = [self.named(arg) for arg in value.args] + [self.visit(keyword) for keyword in value.keywords]
        self._lines.extend(inner + part + "," for part in parts)
        self.line(")")

    def suite(self, body: Sequence[ast.stmt], docstring: bool = False, spacing: int = 0) -> None:
        outer = self._pad
        self._pad = outer + self._unit
        if not body:
            self.line("pass")
        self.statements(body, docstring, spacing)
        self._pad = outer

    def statements(self, body: Sequence[ast.stmt], docstring: bool, spacing: int) -> None:
        """``body``'s lines, ``spacing`` blank lines on either side of each definition."""
        for index, stmt in enumerate(body):
            if index and spacing and (isinstance(stmt, DEFINITIONS) or isinstance(body[index - 1], DEFINITIONS)):
                self._lines.extend([""] * spacing)
            if index == 0 and docstring and is_docstring(stmt):
                self.docstring(stmt.value)
            else:
                self.visit(stmt)

    def block(self, header: str, body: Sequence[ast.stmt], docstring: bool = False, spacing: int = 0) -> None:
        self.line(header + ":")
        self.suite(body, docstring, spacing)

    def docstring(self, node: ast.Constant) -> None:
        prefix = "u" if getattr(node, "kind", None) == "u" else ""
        text = docstring_text(node.value, prefix)
        self.line(text if text is not None else prefix + repr(node.value))

    def decorators(self, node: Any) -> None:
        for decorator in node.decorator_list:
            self.line("@" + self.expr(decorator, P.TEST))

    def run(self, node: ast.AST) -> str:
        result = self.visit(node)
        if isinstance(result, tuple):
            # A lone expression: as `ast.parse(..., mode="eval")` reads it.
            return result[0] if result[1] >= P.TUPLE else "(" + result[0] + ")"
        if isinstance(result, str):
            return result
        return "\n".join(self._lines)

    # ------------------------------------------------------------------ modules

    def visit_Module(self, node: ast.Module) -> None:
        self.statements(node.body, True, MODULE_SPACING)

    def visit_Interactive(self, node: ast.Interactive) -> None:
        for stmt in node.body:
            self.visit(stmt)

    def visit_Expression(self, node: ast.Expression) -> str:
        return self.expr(node.body, P.TUPLE)

    def visit_FunctionType(self, node: Any) -> str:
        args = ", ".join(self.expr(arg, P.TEST) for arg in node.argtypes)
        return "(" + args + ") -> " + self.expr(node.returns, P.TEST)

    # ------------------------------------------------------------------ statements

    def visit_FunctionDef(self, node: ast.FunctionDef) -> None:
        self.function(node, "def ")

    def visit_AsyncFunctionDef(self, node: ast.AsyncFunctionDef) -> None:
        self.function(node, "async def ")

    def function(self, node: Any, keyword: str) -> None:
        self.decorators(node)
        header = keyword + node.name + self.type_params(node)
        header += "(" + self.visit(node.args) + ")"
        if node.returns is not None:
            header += " -> " + self.expr(node.returns, P.TEST)
        self.block(header, node.body, docstring=True)

    def visit_ClassDef(self, node: ast.ClassDef) -> None:
        self.decorators(node)
        parts = [self.expr(base, P.TEST) for base in node.bases]
        parts.extend(self.visit(keyword) for keyword in node.keywords)
        header = "class " + node.name + self.type_params(node)
        if parts:
            header += "(" + ", ".join(parts) + ")"
        self.block(header, node.body, docstring=True, spacing=CLASS_SPACING)

    def visit_Return(self, node: ast.Return) -> None:
        if node.value is None:
            self.line("return")
        else:
            self.call_line("return ", node.value, self.star_exprs(node.value))

    def visit_Delete(self, node: ast.Delete) -> None:
        self.line("del " + ", ".join(self.expr(target, P.TEST) for target in node.targets))

    def visit_Assign(self, node: ast.Assign) -> None:
        targets = "".join(self.expr(target, P.TUPLE) + " = " for target in node.targets)
        self.call_line(targets, node.value, self.rhs(node.value))

    def visit_TypeAlias(self, node: Any) -> None:
        name = self.expr(node.name, P.ATOM) + self.type_params(node)
        self.line("type " + name + " = " + self.expr(node.value, P.TEST))

    def visit_AugAssign(self, node: ast.AugAssign) -> None:
        op = BINOPS[type(node.op)][0]
        value = node.value
        if not versions.STAR_TUPLE_ANYWHERE and starred_tuple(value):
            text = self.expr(value, P.ATOM)
        else:
            text = self.rhs(value)
        self.line(self.expr(node.target, P.TEST) + " " + op + "= " + text)

    def visit_AnnAssign(self, node: ast.AnnAssign) -> None:
        target = node.target
        if isinstance(target, ast.Name) and not node.simple:
            # `(x): int` does not make x a local annotation; keep the parentheses.
            text = "(" + target.id + ")"
        else:
            text = self.expr(target, P.TEST)
        text += ": " + self.expr(node.annotation, P.TEST)
        if node.value is not None:
            text += " = " + self.rhs(node.value)
        self.line(text)

    def visit_For(self, node: ast.For) -> None:
        self.loop(node, "for ")

    def visit_AsyncFor(self, node: ast.AsyncFor) -> None:
        self.loop(node, "async for ")

    def loop(self, node: Any, keyword: str) -> None:
        iterable = node.iter
        if not versions.STAR_TUPLE_ANYWHERE and starred_tuple(iterable):
            text = self.expr(iterable, P.ATOM)
        else:
            text = self.star_exprs(iterable)
        header = keyword + self.expr(node.target, P.TUPLE) + " in " + text
        self.block(header, node.body)
        if node.orelse:
            self.block("else", node.orelse)

    def visit_While(self, node: ast.While) -> None:
        self.block("while " + self.named(node.test), node.body)
        if node.orelse:
            self.block("else", node.orelse)

    def visit_If(self, node: ast.If) -> None:
        self.block("if " + self.named(node.test), node.body)
        orelse = node.orelse
        # An else holding only an if is what `elif` parses to.
        while len(orelse) == 1 and isinstance(orelse[0], ast.If):
            node = orelse[0]
            self.block("elif " + self.named(node.test), node.body)
            orelse = node.orelse
        if orelse:
            self.block("else", orelse)

    def visit_With(self, node: ast.With) -> None:
        self.block("with " + self.withitems(node.items), node.body)

    def visit_AsyncWith(self, node: ast.AsyncWith) -> None:
        self.block("async with " + self.withitems(node.items), node.body)

    def withitems(self, items: Sequence[ast.withitem]) -> str:
        text = ", ".join(self.visit(item) for item in items)
        if len(items) == 1 and items[0].optional_vars is None and is_tuple(items[0].context_expr):
            # Since 3.9 `with (a, b):` means two context managers; a tuple needs `((a, b))`.
            return "(" + text + ")"
        return text

    def visit_withitem(self, node: ast.withitem) -> str:
        text = self.expr(node.context_expr, P.TEST)
        if node.optional_vars is not None:
            text += " as " + self.expr(node.optional_vars, P.TEST)
        return text

    def visit_Match(self, node: Any) -> None:
        subject = node.subject
        if isinstance(subject, ast.Tuple) and subject.elts:
            text = self.expr(subject, P.TUPLE)
        else:
            text = self.named(subject)
        self.line("match " + text + ":")
        outer = self._pad
        self._pad = outer + self._unit
        for case in node.cases:
            self.visit(case)
        self._pad = outer

    def visit_match_case(self, node: Any) -> None:
        header = "case " + self.pattern(node.pattern, 0)
        if node.guard is not None:
            header += " if " + self.named(node.guard)
        self.block(header, node.body)

    def visit_Raise(self, node: ast.Raise) -> None:
        text = "raise"
        if node.exc is not None:
            text += " " + self.expr(node.exc, P.TEST)
            if node.cause is not None:
                text += " from " + self.expr(node.cause, P.TEST)
        self.line(text)

    def visit_Try(self, node: ast.Try) -> None:
        self.try_statement(node, "except")

    def visit_TryStar(self, node: Any) -> None:
        self.try_statement(node, "except*")

    def try_statement(self, node: Any, keyword: str) -> None:
        self.block("try", node.body)
        for handler in node.handlers:
            self.handler(handler, keyword)
        if node.orelse:
            self.block("else", node.orelse)
        if node.finalbody:
            self.block("finally", node.finalbody)

    def visit_ExceptHandler(self, node: ast.ExceptHandler) -> None:
        self.handler(node, "except")

    def handler(self, node: ast.ExceptHandler, keyword: str) -> None:
        header = keyword
        if node.type is not None:
            header += " " + self.expr(node.type, P.TEST)
            if node.name:
                header += " as " + node.name
        self.block(header, node.body)

    def visit_Assert(self, node: ast.Assert) -> None:
        text = "assert " + self.expr(node.test, P.TEST)
        if node.msg is not None:
            text += ", " + self.expr(node.msg, P.TEST)
        self.line(text)

    def visit_Import(self, node: ast.Import) -> None:
        self.line("import " + ", ".join(self.visit(alias) for alias in node.names))

    def visit_ImportFrom(self, node: ast.ImportFrom) -> None:
        source = "." * (node.level or 0) + (node.module or "")
        names = ", ".join(self.visit(alias) for alias in node.names)
        self.line("from " + source + " import " + names)

    def visit_alias(self, node: ast.alias) -> str:
        return node.name if not node.asname else node.name + " as " + node.asname

    def visit_Global(self, node: ast.Global) -> None:
        self.line("global " + ", ".join(node.names))

    def visit_Nonlocal(self, node: ast.Nonlocal) -> None:
        self.line("nonlocal " + ", ".join(node.names))

    def visit_Expr(self, node: ast.Expr) -> None:
        self.call_line("", node.value, self.rhs(node.value))

    def visit_Pass(self, node: ast.Pass) -> None:
        self.line("pass")

    def visit_Break(self, node: ast.Break) -> None:
        self.line("break")

    def visit_Continue(self, node: ast.Continue) -> None:
        self.line("continue")


class NestedTooDeeply(ValueError):
    """The tree nests deeper than the printer's recursion can follow."""


def unparse(node: ast.AST, indent: int = 4, width: Optional[int] = None) -> str:
    """Python source for ``node``: a module, statement, expression or other AST node.

    The text parses back to an equal tree on the running interpreter (3.8-3.14). Modules
    and statements give lines without a final newline; ``indent`` is the number of spaces
    per block level. With a ``width``, a statement that ends in a call and runs past it
    prints the call's arguments one per line. Raises ``ValueError`` for trees that no source can produce.
    """
    if not isinstance(node, ast.AST):
        raise TypeError("unparse() needs an ast.AST node, not %s" % type(node).__name__)
    if not isinstance(indent, int) or indent < 1:
        raise ValueError("indent must be a positive number of spaces, not %r" % (indent,))
    try:
        printer = Unparser(indent)
        printer.width = width
        return printer.run(node)
    except (AttributeError, KeyError, TypeError) as error:
        # A node missing a field or holding the wrong kind of value.
        raise ValueError("malformed AST: %s: %s" % (type(error).__name__, error)) from None
    except RecursionError:
        raise NestedTooDeeply("AST nested too deeply to print") from None
