"""The expression printer: expressions, signatures, literals in place, f-strings, patterns.

Expression visitors return ``(text, precedence)``; the caller adds parentheses when the
precedence is weaker than the place needs. Visitors of the other nodes (arguments,
keywords, patterns, ...) return their text. `unparse.Unparser` adds the statements.
"""
from __future__ import annotations

import ast
import math
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple

from framescope.decompiler.emit.literals import (
    HEX_INT_BITS, LITERAL_ESCAPES, NoFit, QUOTES, escape_unprintable, float_text, free_quotes,
    imaginary_text,
)
from framescope.decompiler.emit.precedence import BINOPS, BOOLOPS, CMPOPS, P, UNARYOPS
from framescope.decompiler.frontend import versions


def ends_in_lambda(node: ast.expr) -> bool:
    # The colon of a trailing lambda would start a format spec inside an f-string field.
    while isinstance(node, ast.IfExp):
        node = node.orelse
    return isinstance(node, ast.Lambda)


class ExpressionPrinter:
    """Prints expressions and the nodes inside them."""

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


    #: Node type → its visitor, filled in as node types are met (one table per printer class).
    _dispatch: Dict[type, Callable[[Any, Any], Any]] = {}

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        cls._dispatch = {}

    def visit(self, node: Any) -> Any:
        method = self._dispatch.get(type(node))
        if method is None:
            method = self._visitor(type(node))
        return method(self, node)

    @classmethod
    def _visitor(cls, node_type: type) -> Callable[[Any, Any], Any]:
        if not issubclass(node_type, ast.AST):
            raise ValueError("malformed AST: %s where a node belongs" % node_type.__name__)
        for base in node_type.__mro__:
            method = getattr(cls, "visit_" + base.__name__, None)
            if method is not None:
                cls._dispatch[node_type] = method
                return method
        raise ValueError("cannot print ast.%s nodes" % node_type.__name__)

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

    def type_params(self, node: Any) -> str:
        params = getattr(node, "type_params", None)
        if not params:
            return ""
        return "[" + ", ".join(self.visit(param) for param in params) + "]"

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
        op, prec = BOOLOPS[type(node.op)]
        # A nested BoolOp of the same kind must keep its parentheses: `(a or b) or c`.
        return op.join(self.expr(value, prec + 1) for value in node.values), prec

    def visit_NamedExpr(self, node: Any) -> Tuple[str, int]:
        return self.expr(node.target, P.ATOM) + " := " + self.expr(node.value, P.TEST), P.NAMED_EXPR

    def visit_BinOp(self, node: ast.BinOp) -> Tuple[str, int]:
        op, prec = BINOPS[type(node.op)]
        if prec == P.POWER:
            # Right-associative, and its right side may be a unary: `2 ** -1`, `(-2) ** 2`.
            left, right = self.expr(node.left, P.AWAIT), self.expr(node.right, P.FACTOR)
        else:
            left, right = self.expr(node.left, prec), self.expr(node.right, prec + 1)
        return left + " " + op + " " + right, prec

    def visit_UnaryOp(self, node: ast.UnaryOp) -> Tuple[str, int]:
        op, prec = UNARYOPS[type(node.op)]
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
            parts.append(CMPOPS[type(op)])
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
            text = hex(value) if value.bit_length() > HEX_INT_BITS else repr(value)
            return text, P.FACTOR if value < 0 else P.ATOM
        if isinstance(value, float):
            text = float_text(float(value))
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
        imag_text = imaginary_text(abs(imag))
        if real == 0 and math.copysign(1.0, real) > 0 and math.copysign(1.0, imag) > 0:
            return imag_text, P.ATOM
        # `(0.0 - 1j)` keeps the real part's sign, where `-1j` is complex(-0.0, -1.0).
        sign = " - " if math.copysign(1.0, imag) < 0 else " + "
        return "(" + float_text(real) + sign + imag_text + ")", P.ATOM

    def string(self, value: str, prefix: str) -> str:
        enclosing = self._enclosing
        if enclosing is None:
            return prefix + repr(value)
        if "\\" not in value and value.isprintable() and not any(d in value for d in enclosing):
            for quote in free_quotes(enclosing):
                if quote not in value and not (len(quote) == 3 and value.endswith(quote[0])):
                    return prefix + quote + value + quote
        raise NoFit

    def bytes(self, value: bytes) -> str:
        if self._enclosing is None:
            return repr(value)
        try:
            text = value.decode("ascii")
        except UnicodeDecodeError:
            raise NoFit from None
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
            for quote in free_quotes(enclosing):
                try:
                    return self.template_with(prefix, values, quote, enclosing + (quote,))
                except NoFit:
                    continue
            raise NoFit
        # The portable form, which also parses before 3.12, whenever one exists.
        literal = literal_text(values)
        order = ('"', "'", '"""', "'''") if "'" in literal and '"' not in literal else QUOTES
        for quote in order:
            try:
                return self.template_with(prefix, values, quote, (quote,))
            except NoFit:
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
        """The f-string delimited by ``quote``; raises NoFit if it cannot be.

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
                raise NoFit
            return text.replace("{", "{{").replace("}", "}}") if braces else text
        return escape_unprintable(text.translate(LITERAL_ESCAPES[quote[0], braces]))

    def field(self, node: Any, quote: str, outer: Optional[Tuple[str, ...]]) -> str:
        """One ``{expr!c:spec}`` replacement field (FormattedValue or Interpolation)."""
        text = None
        source = getattr(node, "str", None)
        if isinstance(source, str) and source.strip():
            # A t-string keeps the field's source text; print it as written.
            if self._enclosing is not None and any(c in source for c in "'\"\\\n#"):
                raise NoFit
            text = source + "\n" if "#" in source else source
        if text is None:
            value = node.value
            text, prec = self.visit(value)
            # A colon of a lambda or walrus would start the format spec.
            if prec < P.TEST or (prec == P.TEST and ends_in_lambda(value)):
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


def literal_text(values: Sequence[Any]) -> str:
    """The literal text of an f-string's parts, format specs included."""
    parts = []
    for value in values:
        if isinstance(value, ast.Constant) and isinstance(value.value, str):
            parts.append(value.value)
        elif isinstance(getattr(value, "format_spec", None), ast.JoinedStr):
            parts.append(literal_text(value.format_spec.values))
    return "".join(parts)


def is_tuple(node: ast.expr) -> bool:
    return isinstance(node, ast.Tuple) or (isinstance(node, ast.Constant) and isinstance(node.value, tuple))


def starred_tuple(node: ast.expr) -> bool:
    return isinstance(node, ast.Tuple) and any(isinstance(elt, ast.Starred) for elt in node.elts)
