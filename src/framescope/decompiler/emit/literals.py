"""Spelling literals: numbers, strings and bytes, quotes free inside f-string fields, docstrings."""
from __future__ import annotations

import ast
import math
from typing import Dict, List, Optional, Sequence, Tuple



# Decimal text of ints this long is refused by int-to-str limits (3.11+), and is unreadable.
HEX_INT_BITS = 4096

# f-string replacement fields before 3.12 may not contain a backslash or the quote that
# delimits the f-string, so strings inside them pick a quote from those still free.
QUOTES = ("'", '"', "'''", '"""')


def escape_table(quote: str, braces: bool) -> Dict[int, str]:
    table = {ord("\\"): "\\\\", ord("\n"): "\\n", ord("\r"): "\\r", ord("\t"): "\\t"}
    table[ord(quote)] = "\\" + quote
    if braces:
        table[ord("{")] = "{{"
        table[ord("}")] = "}}"
    return table


# (quote char, doubled braces) -> str.translate table for f-string literal text
LITERAL_ESCAPES = {
    (quote, braces): escape_table(quote, braces) for quote in "'\"" for braces in (True, False)
}


def conflicts(outer: str, inner: str) -> bool:
    """Whether a string quoted with ``inner`` would end an f-string quoted with ``outer``."""
    return outer[0] == inner[0] and (len(outer) == 1 or len(inner) == 3)


_FREE_QUOTES: Dict[Tuple[str, ...], Tuple[str, ...]] = {}


def free_quotes(enclosing: Tuple[str, ...]) -> Tuple[str, ...]:
    """The quotes a string may use inside f-strings delimited by ``enclosing``."""
    free = _FREE_QUOTES.get(enclosing)
    if free is None:
        free = tuple(q for q in QUOTES if not any(conflicts(d, q) for d in enclosing))
        _FREE_QUOTES[enclosing] = free
    return free


class NoFit(Exception):
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


def escape_unprintable(text: str) -> str:
    if text.isprintable():
        return text
    return "".join(c if c.isprintable() else c.encode("unicode_escape").decode("ascii") for c in text)


def float_text(value: float) -> str:
    if math.isinf(value):
        # 1e309 overflows to inf when parsed; there is no inf literal.
        return "1e309" if value > 0 else "-1e309"
    if math.isnan(value):
        return "(1e309 - 1e309)"
    return repr(value)


def imaginary_text(value: float) -> str:
    if math.isnan(value):
        return "(1e309j - 1e309j)"
    if math.isinf(value):
        return "1e309j"
    return repr(complex(0.0, value))  # 1j, 2.5j, 1e+20j


def docstring_text(value: str, prefix: str) -> Optional[str]:
    """``value`` as a triple-quoted literal, or None if that would need escapes."""
    if "\\" in value or not value.replace("\n", "").replace("\t", "").isprintable():
        return None
    for quote in ('"""', "'''"):
        if quote not in value and not value.endswith(quote[0]):
            return prefix + quote + value + quote
    return None
