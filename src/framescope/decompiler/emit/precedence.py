"""How tightly each kind of expression binds, and the operators' texts: precedence as data."""
from __future__ import annotations

import ast
from typing import Dict, Tuple



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

BINOPS: Dict[type, Tuple[str, int]] = {
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

UNARYOPS: Dict[type, Tuple[str, int]] = {
    ast.Invert: ("~", P.FACTOR),
    ast.UAdd: ("+", P.FACTOR),
    ast.USub: ("-", P.FACTOR),
    ast.Not: ("not ", P.NOT),
}

BOOLOPS: Dict[type, Tuple[str, int]] = {
    ast.And: (" and ", P.AND),
    ast.Or: (" or ", P.OR),
}

CMPOPS: Dict[type, str] = {
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
