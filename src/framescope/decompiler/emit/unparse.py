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
import math
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple

from framescope.decompiler.frontend import versions

__all__ = ["Precedence", "unparse"]


class Precedence:
    """How tightly each expression form binds, weakest first.

    An expression printed where a tighter form is required is put in parentheses. The
    order follows the grammar, except that ``yield`` sits below a bare tuple: a tuple may
    stand unparenthesised after ``return`` or ``for ... in``, a yield may not.
    """

    NAMED_EXPR = 1  # x := y
    YIELD = 2  # yield x, yield from x
    TUPLE = 3  # a, b
    TEST = 4  # lambda, a if b else c
    OR = 5
    AND = 6
    NOT = 7
    CMP = 8  # comparisons, in, not in, is, is not
    BOR = 9  # |
    BXOR = 10  # ^
    BAND = 11  # &
    SHIFT = 12  # << >>
    ARITH = 13  # + -
    TERM = 14  # * @ / // %
    FACTOR = 15  # unary + - ~
    POWER = 16  # **
    AWAIT = 17  # await x
    ATOM = 18  # names, literals, displays, calls, subscripts, attribute access


P = Precedence

_BINOPS: Dict[type, Tuple[str, int]] = {
    ast.BitOr: ("|", P.BOR),
    ast.BitXor: ("^", P.BXOR),
    ast.BitAnd: ("&", P.BAND),
    ast.LShift: ("<<", P.SHIFT),
    ast.RShift: (">>", P.SHIFT),
    ast.Add: ("+", P.ARITH),
    ast.Sub: ("-", P.ARITH),
    ast.Mult: ("*", P.TERM),
    ast.MatMult: ("@", P.TERM),
    ast.Div: ("/", P.TERM),
    ast.FloorDiv: ("//", P.TERM),
    ast.Mod: ("%", P.TERM),
    ast.Pow: ("**", P.POWER),
}

_UNARYOPS: Dict[type, Tuple[str, int]] = {
    ast.Invert: ("~", P.FACTOR),
    ast.UAdd: ("+", P.FACTOR),
    ast.USub: ("-", P.FACTOR),
    ast.Not: ("not ", P.NOT),
}

_BOOLOPS: Dict[type, Tuple[str, int]] = {
    ast.And: (" and ", P.AND),
    ast.Or: (" or ", P.OR),
}

_CMPOPS: Dict[type, str] = {
    ast.Eq: " == ",
    ast.NotEq: " != ",
    ast.Lt: " < ",
    ast.LtE: " <= ",
    ast.Gt: " > ",
    ast.GtE: " >= ",
    ast.Is: " is ",
    ast.IsNot: " is not ",
    ast.In: " in ",
    ast.NotIn: " not in ",
}

# Decimal text of ints this long is refused by int-to-str limits (3.11+), and is unreadable.
_HEX_INT_BITS = 4096

# f-string replacement fields before 3.12 may not contain a backslash or the quote that
# delimits the f-string, so strings inside them pick a quote from those still free.
_QUOTES = ("'", '"', "'''", '"""')


def _escape_table(quote: str, braces: bool) -> Dict[int, str]:
    table = {ord("\\"): "\\\\", ord("\n"): "\\n", ord("\r"): "\\r", ord("\t"): "\\t"}
    table[ord(quote)] = "\\" + quote
    if braces:
        table[ord("{")] = "{{"
        table[ord("}")] = "}}"
    return table


# (quote char, doubled braces) -> str.translate table for f-string literal text
_LITERAL_ESCAPES = {
    (quote, braces): _escape_table(quote, braces) for quote in "'\"" for braces in (True, False)
}


def _conflicts(outer: str, inner: str) -> bool:
    """Whether a string quoted with ``inner`` would end an f-string quoted with ``outer``."""
    return outer[0] == inner[0] and (len(outer) == 1 or len(inner) == 3)


_FREE_QUOTES: Dict[Tuple[str, ...], Tuple[str, ...]] = {}


def _free_quotes(enclosing: Tuple[str, ...]) -> Tuple[str, ...]:
    """The quotes a string may use inside f-strings delimited by ``enclosing``."""
    free = _FREE_QUOTES.get(enclosing)
    if free is None:
        free = tuple(q for q in _QUOTES if not any(_conflicts(d, q) for d in enclosing))
        _FREE_QUOTES[enclosing] = free
    return free


class _NoFit(Exception):
    """The f-string being printed cannot use the quote being tried."""


def percent_format(values: Sequence[ast.expr]) -> Optional[ast.expr]:
    """``'%r: %s' % (a, b)`` for an f-string's parts, or None if they are not such a format.

    3.11+ compiles ``%`` with a literal format and a tuple like an f-string; before 3.12
    this is the way to print one whose fields hold a backslash.
    """
    text: List[str] = []
    args: List[ast.expr] = []
    for value in values:
        if isinstance(value, ast.Constant) and isinstance(value.value, str):
            text.append(value.value.replace("%", "%%"))
        elif (isinstance(value, ast.FormattedValue) and value.conversion in (ord("s"), ord("r"), ord("a"))
              and value.format_spec is None):
            text.append("%" + chr(value.conversion))
            args.append(value.value)
        else:
            return None
    return ast.BinOp(left=ast.Constant(value="".join(text)), op=ast.Mod(), right=ast.Tuple(elts=args, ctx=ast.Load()))


def _escape_unprintable(text: str) -> str:
    if text.isprintable():
        return text
    return "".join(c if c.isprintable() else c.encode("unicode_escape").decode("ascii") for c in text)


def _float_text(value: float) -> str:
    if math.isinf(value):
        # 1e309 overflows to inf when parsed; there is no inf literal.
        return "1e309" if value > 0 else "-1e309"
    if math.isnan(value):
        return "(1e309 - 1e309)"
    return repr(value)


def _imag_text(value: float) -> str:
    if math.isnan(value):
        return "(1e309j - 1e309j)"
    if math.isinf(value):
        return "1e309j"
    return repr(complex(0.0, value))  # 1j, 2.5j, 1e+20j


def _docstring_text(value: str, prefix: str) -> Optional[str]:
    """``value`` as a triple-quoted literal, or None if that would need escapes."""
    if "\\" in value or not value.replace("\n", "").replace("\t", "").isprintable():
        return None
    for quote in ('"""', "'''"):
        if quote not in value and not value.endswith(quote[0]):
            return prefix + quote + value + quote
    return None


def _is_docstring(node: ast.stmt) -> bool:
    return (
        isinstance(node, ast.Expr)
        and isinstance(node.value, ast.Constant)
        and isinstance(node.value.value, str)
    )


def _ends_in_lambda(node: ast.expr) -> bool:
    # The colon of a trailing lambda would start a format spec inside an f-string field.
    while isinstance(node, ast.IfExp):
        node = node.orelse
    return isinstance(node, ast.Lambda)


_Visitor = Callable[["_Unparser", Any], Any]
_DISPATCH: Dict[type, _Visitor] = {}


def _visitor(cls: type) -> _Visitor:
    if not issubclass(cls, ast.AST):
        raise ValueError("malformed AST: %s where a node belongs" % cls.__name__)
    for base in cls.__mro__:
        method = getattr(_Unparser, "visit_" + base.__name__, None)
        if method is not None:
            _DISPATCH[cls] = method
            return method
    raise ValueError("cannot print ast.%s nodes" % cls.__name__)


class _Unparser:
    def __init__(self, indent: int) -> None:
        #: Spaces added per block level.
        self._unit = " " * indent
        #: Indentation of the lines being written.
        self._pad = ""
        #: Output lines; a docstring line may contain newlines.
        self._lines: List[str] = []
        #: While printing a replacement field of an f-string in the portable style: the
        #: delimiters of the enclosing f-strings, which nothing inside may contain (nor a
        #: backslash). None elsewhere.
        self._enclosing: Optional[Tuple[str, ...]] = None

    # ------------------------------------------------------------------ plumbing

    def visit(self, node: Any) -> Any:
        method = _DISPATCH.get(type(node))
        if method is None:
            method = _visitor(type(node))
        return method(self, node)

    def expr(self, node: ast.expr, need: int) -> str:
        """``node`` as text, parenthesised if it binds less tightly than ``need``."""
        text, prec = self.visit(node)
        return "(" + text + ")" if prec < need else text

    def named(self, node: ast.expr) -> str:
        """Text for a place that accepts an unparenthesised ``x := y`` (if, while, call args)."""
        if isinstance(node, ast.NamedExpr):
            return self.visit(node)[0]
        return self.expr(node, P.TEST)

    def rhs(self, node: ast.expr) -> str:
        """Text for the right of ``=`` or an expression statement: yield and tuples bare."""
        return self.expr(node, P.YIELD)

    def star_exprs(self, node: ast.expr) -> str:
        """Text for ``return`` and ``for ... in``: bare tuples, yield parenthesised."""
        return self.expr(node, P.TUPLE)

    def line(self, text: str) -> None:
        self._lines.append(self._pad + text)

    def suite(self, body: Sequence[ast.stmt], docstring: bool = False) -> None:
        outer = self._pad
        self._pad = outer + self._unit
        if not body:
            self.line("pass")
        for index, stmt in enumerate(body):
            if index == 0 and docstring and _is_docstring(stmt):
                self.docstring(stmt.value)
            else:
                self.visit(stmt)
        self._pad = outer

    def block(self, header: str, body: Sequence[ast.stmt], docstring: bool = False) -> None:
        self.line(header + ":")
        self.suite(body, docstring)

    def docstring(self, node: ast.Constant) -> None:
        prefix = "u" if getattr(node, "kind", None) == "u" else ""
        text = _docstring_text(node.value, prefix)
        self.line(text if text is not None else prefix + repr(node.value))

    def decorators(self, node: Any) -> None:
        for decorator in node.decorator_list:
            self.line("@" + self.expr(decorator, P.TEST))

    def type_params(self, node: Any) -> str:
        params = getattr(node, "type_params", None)
        if not params:
            return ""
        return "[" + ", ".join(self.visit(param) for param in params) + "]"

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
        for index, stmt in enumerate(node.body):
            if index == 0 and _is_docstring(stmt):
                self.docstring(stmt.value)
            else:
                self.visit(stmt)

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
        self.block(header, node.body, docstring=True)

    def visit_Return(self, node: ast.Return) -> None:
        self.line("return" if node.value is None else "return " + self.star_exprs(node.value))

    def visit_Delete(self, node: ast.Delete) -> None:
        self.line("del " + ", ".join(self.expr(target, P.TEST) for target in node.targets))

    def visit_Assign(self, node: ast.Assign) -> None:
        targets = "".join(self.expr(target, P.TUPLE) + " = " for target in node.targets)
        self.line(targets + self.rhs(node.value))

    def visit_TypeAlias(self, node: Any) -> None:
        name = self.expr(node.name, P.ATOM) + self.type_params(node)
        self.line("type " + name + " = " + self.expr(node.value, P.TEST))

    def visit_AugAssign(self, node: ast.AugAssign) -> None:
        op = _BINOPS[type(node.op)][0]
        value = node.value
        if not versions.STAR_TUPLE_ANYWHERE and _starred_tuple(value):
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
        if not versions.STAR_TUPLE_ANYWHERE and _starred_tuple(iterable):
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
        if len(items) == 1 and items[0].optional_vars is None and _is_tuple(items[0].context_expr):
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
        self.line(self.rhs(node.value))

    def visit_Pass(self, node: ast.Pass) -> None:
        self.line("pass")

    def visit_Break(self, node: ast.Break) -> None:
        self.line("break")

    def visit_Continue(self, node: ast.Continue) -> None:
        self.line("continue")

    # ------------------------------------------------------------------ function signatures

    def visit_arguments(self, node: ast.arguments) -> str:
        posonly = getattr(node, "posonlyargs", None) or []
        positional = posonly + node.args
        defaults = [None] * (len(positional) - len(node.defaults)) + list(node.defaults)
        parts = []
        for index, (arg, default) in enumerate(zip(positional, defaults)):
            parts.append(self.parameter(arg, default))
            if index + 1 == len(posonly):
                parts.append("/")
        if node.vararg is not None:
            parts.append("*" + self.visit(node.vararg))
        elif node.kwonlyargs:
            parts.append("*")
        for arg, default in zip(node.kwonlyargs, node.kw_defaults):
            parts.append(self.parameter(arg, default))
        if node.kwarg is not None:
            parts.append("**" + self.visit(node.kwarg))
        return ", ".join(parts)

    def parameter(self, arg: ast.arg, default: Optional[ast.expr]) -> str:
        text = self.visit(arg)
        if default is not None:
            equals = " = " if arg.annotation is not None else "="
            text += equals + self.expr(default, P.TEST)
        return text

    def visit_arg(self, node: ast.arg) -> str:
        if node.annotation is None:
            return node.arg
        return node.arg + ": " + self.expr(node.annotation, P.TEST)

    def visit_keyword(self, node: ast.keyword) -> str:
        if node.arg is None:
            # `**a or b` parses, as `**(a or b)`, but reads wrongly.
            return "**" + self.expr(node.value, P.BOR)
        return node.arg + "=" + self.expr(node.value, P.TEST)

    def visit_TypeVar(self, node: Any) -> str:
        text = node.name
        if node.bound is not None:
            text += ": " + self.expr(node.bound, P.TEST)
        return text + self.type_default(node)

    def visit_ParamSpec(self, node: Any) -> str:
        return "**" + node.name + self.type_default(node)

    def visit_TypeVarTuple(self, node: Any) -> str:
        return "*" + node.name + self.type_default(node)

    def type_default(self, node: Any) -> str:
        default = getattr(node, "default_value", None)
        return "" if default is None else " = " + self.expr(default, P.TEST)

    # ------------------------------------------------------------------ expressions

    def visit_BoolOp(self, node: ast.BoolOp) -> Tuple[str, int]:
        op, prec = _BOOLOPS[type(node.op)]
        # A nested BoolOp of the same kind must keep its parentheses: `(a or b) or c`.
        return op.join(self.expr(value, prec + 1) for value in node.values), prec

    def visit_NamedExpr(self, node: Any) -> Tuple[str, int]:
        return self.expr(node.target, P.ATOM) + " := " + self.expr(node.value, P.TEST), P.NAMED_EXPR

    def visit_BinOp(self, node: ast.BinOp) -> Tuple[str, int]:
        op, prec = _BINOPS[type(node.op)]
        if prec == P.POWER:
            # Right-associative, and its right side may be a unary: `2 ** -1`, `(-2) ** 2`.
            left, right = self.expr(node.left, P.AWAIT), self.expr(node.right, P.FACTOR)
        else:
            left, right = self.expr(node.left, prec), self.expr(node.right, prec + 1)
        return left + " " + op + " " + right, prec

    def visit_UnaryOp(self, node: ast.UnaryOp) -> Tuple[str, int]:
        op, prec = _UNARYOPS[type(node.op)]
        if prec == P.NOT:
            return op + self.expr(node.operand, P.NOT), prec
        # `-(-x)` rather than `--x`, which reads like a decrement.
        return op + self.expr(node.operand, P.POWER), prec

    def visit_Lambda(self, node: ast.Lambda) -> Tuple[str, int]:
        args = self.visit(node.args)
        head = "lambda " + args if args else "lambda"
        return head + ": " + self.expr(node.body, P.TEST), P.TEST

    def visit_IfExp(self, node: ast.IfExp) -> Tuple[str, int]:
        body = self.expr(node.body, P.OR)
        test = self.expr(node.test, P.OR)
        return body + " if " + test + " else " + self.expr(node.orelse, P.TEST), P.TEST

    def key(self, node: ast.expr) -> str:
        # A lambda key or slice bound parses, but its colon is hard to read.
        return self.expr(node, P.OR if isinstance(node, ast.Lambda) else P.TEST)

    def visit_Dict(self, node: ast.Dict) -> Tuple[str, int]:
        items = []
        for key, value in zip(node.keys, node.values):
            if key is None:
                items.append("**" + self.expr(value, P.BOR))
            else:
                items.append(self.key(key) + ": " + self.expr(value, P.TEST))
        return "{" + ", ".join(items) + "}", P.ATOM

    def visit_Set(self, node: ast.Set) -> Tuple[str, int]:
        if not node.elts:
            return "{*()}", P.ATOM  # `{}` is a dict
        return "{" + self.elements(node.elts) + "}", P.ATOM

    def elements(self, elts: Sequence[ast.expr]) -> str:
        return ", ".join(self.expr(elt, P.TEST) for elt in elts)

    def visit_ListComp(self, node: ast.ListComp) -> Tuple[str, int]:
        return "[" + self.expr(node.elt, P.TEST) + self.comprehensions(node.generators) + "]", P.ATOM

    def visit_SetComp(self, node: ast.SetComp) -> Tuple[str, int]:
        return "{" + self.expr(node.elt, P.TEST) + self.comprehensions(node.generators) + "}", P.ATOM

    def visit_GeneratorExp(self, node: ast.GeneratorExp) -> Tuple[str, int]:
        return "(" + self.expr(node.elt, P.TEST) + self.comprehensions(node.generators) + ")", P.ATOM

    def visit_DictComp(self, node: ast.DictComp) -> Tuple[str, int]:
        item = self.key(node.key) + ": " + self.expr(node.value, P.TEST)
        return "{" + item + self.comprehensions(node.generators) + "}", P.ATOM

    def comprehensions(self, generators: Sequence[ast.comprehension]) -> str:
        return "".join(self.visit(generator) for generator in generators)

    def visit_comprehension(self, node: ast.comprehension) -> str:
        text = " async for " if node.is_async else " for "
        text += self.expr(node.target, P.TUPLE) + " in " + self.expr(node.iter, P.OR)
        return text + "".join(" if " + self.expr(test, P.OR) for test in node.ifs)

    def visit_Await(self, node: ast.Await) -> Tuple[str, int]:
        return "await " + self.expr(node.value, P.ATOM), P.AWAIT

    def visit_Yield(self, node: ast.Yield) -> Tuple[str, int]:
        if node.value is None:
            return "yield", P.YIELD
        return "yield " + self.expr(node.value, P.TUPLE), P.YIELD

    def visit_YieldFrom(self, node: ast.YieldFrom) -> Tuple[str, int]:
        return "yield from " + self.expr(node.value, P.TEST), P.YIELD

    def visit_Compare(self, node: ast.Compare) -> Tuple[str, int]:
        parts = [self.expr(node.left, P.BOR)]
        for op, comparator in zip(node.ops, node.comparators):
            parts.append(_CMPOPS[type(op)])
            parts.append(self.expr(comparator, P.BOR))
        return "".join(parts), P.CMP

    def visit_Call(self, node: ast.Call) -> Tuple[str, int]:
        func = self.expr(node.func, P.ATOM)
        args, keywords = node.args, node.keywords
        if len(args) == 1 and not keywords and isinstance(args[0], ast.GeneratorExp):
            return func + self.visit(args[0])[0], P.ATOM  # f(x for x in y)
        parts = [self.named(arg) for arg in args]
        parts.extend(self.visit(keyword) for keyword in keywords)
        return func + "(" + ", ".join(parts) + ")", P.ATOM

    def visit_Attribute(self, node: ast.Attribute) -> Tuple[str, int]:
        value = node.value
        if isinstance(value, ast.Constant) and type(value.value) is int:
            # `1.real` would read as a float literal followed by a name.
            return "(" + self.visit(value)[0] + ")." + node.attr, P.ATOM
        return self.expr(value, P.ATOM) + "." + node.attr, P.ATOM

    def visit_Subscript(self, node: ast.Subscript) -> Tuple[str, int]:
        return self.expr(node.value, P.ATOM) + "[" + self.index(node.slice) + "]", P.ATOM

    def index(self, node: Any) -> str:
        """The text between the brackets of a subscript."""
        if isinstance(node, ast.Slice):
            return self.visit(node)[0]
        if isinstance(node, ast.Tuple) and node.elts:
            starred = any(isinstance(elt, ast.Starred) for elt in node.elts)
            if versions.STAR_SUBSCRIPT or not starred:
                # A tuple index takes no parentheses, and may not have them if it holds a slice.
                return self.dimensions(node.elts, trailing_comma=not starred)
        if type(node).__name__ == "Index":  # Python 3.8
            return self.index(node.value)
        if type(node).__name__ == "ExtSlice":  # Python 3.8
            return self.dimensions(node.dims, trailing_comma=True)
        return self.expr(node, P.TEST)

    def dimensions(self, dims: Sequence[Any], trailing_comma: bool) -> str:
        text = ", ".join(self.dimension(dim) for dim in dims)
        # `d[a,]` indexes with a 1-tuple; `d[*a]` already does.
        return text + "," if len(dims) == 1 and trailing_comma else text

    def dimension(self, node: Any) -> str:
        """One comma-separated item of a subscript."""
        if isinstance(node, ast.Slice):
            return self.visit(node)[0]
        if type(node).__name__ == "Index":  # Python 3.8
            node = node.value
        return self.expr(node, P.TEST)

    def visit_Slice(self, node: ast.Slice) -> Tuple[str, int]:
        text = "" if node.lower is None else self.key(node.lower)
        text += ":"
        if node.upper is not None:
            text += self.key(node.upper)
        if node.step is not None:
            text += ":" + self.key(node.step)
        return text, P.ATOM

    def visit_Index(self, node: Any) -> Tuple[str, int]:
        return self.visit(node.value)

    def visit_ExtSlice(self, node: Any) -> Tuple[str, int]:
        return self.dimensions(node.dims, trailing_comma=True), P.TUPLE

    def visit_Starred(self, node: ast.Starred) -> Tuple[str, int]:
        # Never parenthesised itself: `(*a)` is not an expression.
        return "*" + self.expr(node.value, P.BOR), P.ATOM

    def visit_Name(self, node: ast.Name) -> Tuple[str, int]:
        return node.id, P.ATOM

    def visit_List(self, node: ast.List) -> Tuple[str, int]:
        return "[" + self.elements(node.elts) + "]", P.ATOM

    def visit_Tuple(self, node: ast.Tuple) -> Tuple[str, int]:
        elts = node.elts
        if not elts:
            return "()", P.ATOM
        if len(elts) == 1:
            # `x = a,` is valid but easy to misread; `(a,)` is the same tuple.
            return "(" + self.expr(elts[0], P.TEST) + ",)", P.ATOM
        return self.elements(elts), P.TUPLE

    # ------------------------------------------------------------------ constants

    def visit_Constant(self, node: ast.Constant) -> Tuple[str, int]:
        value = node.value
        if isinstance(value, str):
            return self.string(value, "u" if getattr(node, "kind", None) == "u" else ""), P.ATOM
        return self.constant(value)

    def constant(self, value: Any) -> Tuple[str, int]:
        if value is None or value is True or value is False:
            return repr(value), P.ATOM
        if value is Ellipsis:
            return "...", P.ATOM
        if isinstance(value, int):
            value = int(value)
            text = hex(value) if value.bit_length() > _HEX_INT_BITS else repr(value)
            return text, P.FACTOR if value < 0 else P.ATOM
        if isinstance(value, float):
            text = _float_text(float(value))
            return text, P.FACTOR if text.startswith("-") else P.ATOM
        if isinstance(value, complex):
            return self.complex(value)
        if isinstance(value, str):
            return self.string(value, ""), P.ATOM
        if isinstance(value, bytes):
            return self.bytes(value), P.ATOM
        if isinstance(value, tuple):
            items = [self.constant_item(item) for item in value]
            if len(items) == 1:
                return "(" + items[0] + ",)", P.ATOM
            return "(" + ", ".join(items) + ")", P.ATOM
        if isinstance(value, frozenset):
            if not value:
                return "frozenset()", P.ATOM
            # Sorted so that the text does not depend on hash randomisation.
            items = sorted(self.constant_item(item) for item in value)
            return "frozenset({" + ", ".join(items) + "})", P.ATOM
        raise ValueError("cannot print a constant of type %s" % type(value).__name__)

    def constant_item(self, value: Any) -> str:
        text, prec = self.constant(value)
        return text if prec >= P.TEST else "(" + text + ")"

    def complex(self, value: complex) -> Tuple[str, int]:
        real, imag = value.real, value.imag
        imag_text = _imag_text(abs(imag))
        if real == 0 and math.copysign(1.0, real) > 0 and math.copysign(1.0, imag) > 0:
            return imag_text, P.ATOM
        # `(0.0 - 1j)` keeps the real part's sign, where `-1j` is complex(-0.0, -1.0).
        sign = " - " if math.copysign(1.0, imag) < 0 else " + "
        return "(" + _float_text(real) + sign + imag_text + ")", P.ATOM

    def string(self, value: str, prefix: str) -> str:
        enclosing = self._enclosing
        if enclosing is None:
            return prefix + repr(value)
        if "\\" not in value and value.isprintable() and not any(d in value for d in enclosing):
            for quote in _free_quotes(enclosing):
                if quote not in value and not (len(quote) == 3 and value.endswith(quote[0])):
                    return prefix + quote + value + quote
        raise _NoFit

    def bytes(self, value: bytes) -> str:
        if self._enclosing is None:
            return repr(value)
        try:
            text = value.decode("ascii")
        except UnicodeDecodeError:
            raise _NoFit from None
        return self.string(text, "b")

    # ------------------------------------------------------------------ f-strings and t-strings

    def visit_JoinedStr(self, node: ast.JoinedStr) -> Tuple[str, int]:
        return self.template("f", node.values), P.ATOM

    def visit_TemplateStr(self, node: Any) -> Tuple[str, int]:
        return self.template("t", node.values), P.ATOM

    def visit_FormattedValue(self, node: ast.FormattedValue) -> Tuple[str, int]:
        return self.template("f", [node]), P.ATOM

    def visit_Interpolation(self, node: Any) -> Tuple[str, int]:
        return self.template("t", [node]), P.ATOM

    def template(self, prefix: str, values: Sequence[ast.expr]) -> str:
        """An f-string (or t-string) holding ``values``: literal text and fields."""
        enclosing = self._enclosing
        if enclosing is not None:
            # Inside a portable field: only the quotes left free, and no backslashes.
            for quote in _free_quotes(enclosing):
                try:
                    return self.template_with(prefix, values, quote, enclosing + (quote,))
                except _NoFit:
                    continue
            raise _NoFit
        # The portable form, which also parses before 3.12, whenever one exists.
        literal = _literal_text(values)
        order = ('"', "'", '"""', "'''") if "'" in literal and '"' not in literal else _QUOTES
        for quote in order:
            try:
                return self.template_with(prefix, values, quote, (quote,))
            except _NoFit:
                continue
        if not versions.PEP701_FSTRINGS:
            raise ValueError(
                "cannot write this f-string for Python %d.%d: a replacement field needs a "
                "backslash or every kind of quote" % versions.PY
            )
        # 3.12+: fields may reuse the quote and hold backslashes.
        return self.template_with(prefix, values, order[0], None)

    def template_with(
        self, prefix: str, values: Sequence[ast.expr], quote: str, inner: Optional[Tuple[str, ...]]
    ) -> str:
        """The f-string delimited by ``quote``; raises _NoFit if it cannot be.

        ``inner`` holds the delimiters of this and the enclosing f-strings, which nothing in
        the fields may contain, or is None when the fields may hold anything (3.12+).
        """
        outer = self._enclosing
        parts = [prefix, quote]
        self._enclosing = inner
        try:
            for value in values:
                if isinstance(value, ast.Constant) and isinstance(value.value, str):
                    parts.append(self.literal(value.value, quote, outer, True))
                else:
                    parts.append(self.field(value, quote, outer))
        finally:
            self._enclosing = outer
        parts.append(quote)
        return "".join(parts)

    def literal(self, text: str, quote: str, outer: Optional[Tuple[str, ...]], braces: bool) -> str:
        """Literal text of an f-string delimited by ``quote``, escaped as needed.

        ``outer`` holds the delimiters of enclosing f-strings when this one sits in a
        portable field, where no backslash may appear.
        """
        if outer is not None:
            if "\\" in text or quote[0] in text or not text.isprintable() or any(d in text for d in outer):
                raise _NoFit
            return text.replace("{", "{{").replace("}", "}}") if braces else text
        return _escape_unprintable(text.translate(_LITERAL_ESCAPES[quote[0], braces]))

    def field(self, node: Any, quote: str, outer: Optional[Tuple[str, ...]]) -> str:
        """One ``{expr!c:spec}`` replacement field (FormattedValue or Interpolation)."""
        text = None
        source = getattr(node, "str", None)
        if isinstance(source, str) and source.strip():
            # A t-string keeps the field's source text; print it as written.
            if self._enclosing is not None and any(c in source for c in "'\"\\\n#"):
                raise _NoFit
            text = source + "\n" if "#" in source else source
        if text is None:
            value = node.value
            text, prec = self.visit(value)
            # A colon of a lambda or walrus would start the format spec.
            if prec < P.TEST or (prec == P.TEST and _ends_in_lambda(value)):
                text = "(" + text + ")"
        if text.startswith("{"):
            text = " " + text + " "  # `{{` would be a literal brace
        if node.conversion not in (-1, None):
            text += "!" + chr(node.conversion)
        spec = node.format_spec
        if spec is not None:
            text += ":" + self.format_spec(spec, quote, outer)
        return "{" + text + "}"

    def format_spec(self, spec: Any, quote: str, outer: Optional[Tuple[str, ...]]) -> str:
        values = spec.values if isinstance(spec, ast.JoinedStr) else [spec]
        parts = []
        for value in values:
            if not (isinstance(value, ast.Constant) and isinstance(value.value, str)):
                parts.append(self.field(value, quote, outer))
                continue
            text = value.value
            if "{" not in text and "}" not in text:
                parts.append(self.literal(text, quote, outer, False))
                continue
            # Braces cannot be escaped in a format spec; put them in fields of their own.
            for char in text:
                if char in "{}":
                    parts.append("{" + self.string(char, "") + "}")
                else:
                    parts.append(self.literal(char, quote, outer, False))
        return "".join(parts)

    # ------------------------------------------------------------------ match patterns

    def pattern(self, node: Any, level: int) -> str:
        """Pattern text; ``level`` 1 is the subject of `as`, 2 an alternative of `|`."""
        text = self.visit(node)
        if level >= 1 and type(node).__name__ == "MatchAs" and node.pattern is not None:
            return "(" + text + ")"
        if level >= 2 and type(node).__name__ == "MatchOr":
            return "(" + text + ")"
        return text

    def visit_MatchValue(self, node: Any) -> str:
        return self.expr(node.value, P.TEST)

    def visit_MatchSingleton(self, node: Any) -> str:
        return repr(node.value)

    def visit_MatchSequence(self, node: Any) -> str:
        return "[" + ", ".join(self.pattern(p, 0) for p in node.patterns) + "]"

    def visit_MatchMapping(self, node: Any) -> str:
        items = [self.expr(k, P.TEST) + ": " + self.pattern(p, 0) for k, p in zip(node.keys, node.patterns)]
        if node.rest is not None:
            items.append("**" + node.rest)
        return "{" + ", ".join(items) + "}"

    def visit_MatchClass(self, node: Any) -> str:
        args = [self.pattern(p, 0) for p in node.patterns]
        args.extend(k + "=" + self.pattern(p, 0) for k, p in zip(node.kwd_attrs, node.kwd_patterns))
        return self.expr(node.cls, P.ATOM) + "(" + ", ".join(args) + ")"

    def visit_MatchStar(self, node: Any) -> str:
        return "*" + (node.name or "_")

    def visit_MatchAs(self, node: Any) -> str:
        if node.pattern is None:
            return node.name or "_"
        return self.pattern(node.pattern, 1) + " as " + node.name

    def visit_MatchOr(self, node: Any) -> str:
        return " | ".join(self.pattern(p, 2) for p in node.patterns)


def _literal_text(values: Sequence[Any]) -> str:
    """The literal text of an f-string's parts, format specs included."""
    parts = []
    for value in values:
        if isinstance(value, ast.Constant) and isinstance(value.value, str):
            parts.append(value.value)
        elif isinstance(getattr(value, "format_spec", None), ast.JoinedStr):
            parts.append(_literal_text(value.format_spec.values))
    return "".join(parts)


def _is_tuple(node: ast.expr) -> bool:
    return isinstance(node, ast.Tuple) or (isinstance(node, ast.Constant) and isinstance(node.value, tuple))


def _starred_tuple(node: ast.expr) -> bool:
    return isinstance(node, ast.Tuple) and any(isinstance(elt, ast.Starred) for elt in node.elts)


class NestedTooDeeply(ValueError):
    """The tree nests deeper than the printer's recursion can follow."""


def unparse(node: ast.AST, indent: int = 4) -> str:
    """Python source for ``node``: a module, statement, expression or other AST node.

    The text parses back to an equal tree on the running interpreter (3.8-3.14). Modules
    and statements give lines without a final newline; ``indent`` is the number of spaces
    per block level. Raises ``ValueError`` for trees that no source can produce.
    """
    if not isinstance(node, ast.AST):
        raise TypeError("unparse() needs an ast.AST node, not %s" % type(node).__name__)
    if not isinstance(indent, int) or indent < 1:
        raise ValueError("indent must be a positive number of spaces, not %r" % (indent,))
    try:
        return _Unparser(indent).run(node)
    except (AttributeError, KeyError, TypeError) as error:
        # A node missing a field or holding the wrong kind of value.
        raise ValueError("malformed AST: %s: %s" % (type(error).__name__, error)) from None
    except RecursionError:
        raise NestedTooDeeply("AST nested too deeply to print") from None
