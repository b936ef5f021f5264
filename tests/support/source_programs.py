"""Random Python programs with functions, classes and control flow, from a seed.

The property test's second source of programs, next to hypothesmith's syntax trees: each
program is a module of a few functions and a class, their bodies nests of ``if``/``elif``,
``for`` and ``while`` loops with ``break``, ``continue`` and ``else``, ``try`` with
``except``/``else``/``finally``, ``with``, closures, comprehensions, boolean and chained
comparisons, calls with starred and keyword arguments, f-strings, lambdas, ``yield`` and
``return``. Every program compiles on CPython 3.8 and later; ``match`` statements are drawn
only where the interpreter has them. Needs only the standard library.
"""
from __future__ import annotations

import random
import sys
from typing import List

NAMES = ["a", "b", "c", "x", "y", "total", "item", "key"]
ATTRS = ["count", "value", "items", "append", "get"]
BINARY = ["+", "-", "*", "//", "%", "|", "&", "<<"]
COMPARE = ["<", "<=", "==", "!=", ">", "is", "is not", "in", "not in"]


class Program:
    """Draws one program; ``depth`` bounds how deep statements nest."""

    def __init__(self, seed: int, depth: int = 3) -> None:
        self.random = random.Random(seed)
        self.depth = depth
        self.match = sys.version_info >= (3, 10)

    # ------------------------------------------------------------------ expressions

    def name(self) -> str:
        return self.random.choice(NAMES)

    def atom(self) -> str:
        pick = self.random.randrange(8)
        if pick == 0:
            return repr(self.random.choice([0, 1, -2, 3.5, "s", b"b", None, True, (1, 2)]))
        if pick == 1:
            return "%s.%s" % (self.name(), self.random.choice(ATTRS))
        if pick == 2:
            return "%s[%s]" % (self.name(), self.random.choice(["0", "1:", "::2", self.name()]))
        return self.name()

    def expr(self, depth: int = 2) -> str:
        if depth <= 0:
            return self.atom()
        pick = self.random.randrange(11)
        inner = lambda: self.expr(depth - 1)  # noqa: E731
        if pick == 0:
            return "(%s %s %s)" % (inner(), self.random.choice(BINARY), inner())
        if pick == 1:
            return "(%s %s %s)" % (inner(), self.random.choice(["and", "or"]), inner())
        if pick == 2:
            return "(%s %s %s %s %s)" % (inner(), self.random.choice(COMPARE), inner(),
                                         self.random.choice(COMPARE[:5]), inner())
        if pick == 3:
            return "(not %s)" % inner()
        if pick == 4:
            return "%s(%s, *%s, k=%s)" % (self.name(), inner(), self.name(), inner())
        if pick == 5:
            return "[%s for %s in %s if %s]" % (inner(), self.name(), inner(), inner())
        if pick == 6:
            return "{%s: %s for %s, %s in %s}" % (self.name(), inner(), self.name(), self.name(), inner())
        if pick == 7:
            return "(%s if %s else %s)" % (inner(), inner(), inner())
        if pick == 8:
            return "f'{%s!r:>4} and {%s}'" % (self.name(), self.name())
        if pick == 9:
            return "(lambda %s, *rest: %s)" % (self.name(), inner())
        return self.atom()

    # ------------------------------------------------------------------ statements

    def block(self, indent: int, depth: int, loop: bool = False) -> List[str]:
        return [line for _ in range(self.random.randint(1, 3)) for line in self.statement(indent, depth, loop)]

    def statement(self, indent: int, depth: int, loop: bool) -> List[str]:
        pad = " " * indent
        simple = self.simple(pad, loop)
        if depth <= 0 or self.random.random() < 0.35:
            return [simple]
        compound = [self.if_, self.for_, self.while_, self.try_, self.with_, self.closure]
        if self.match:
            compound.append(self.match_)
        return self.random.choice(compound)(indent, depth - 1, loop)

    def simple(self, pad: str, loop: bool) -> str:
        choices = ["%s = %s" % (self.name(), self.expr()), "%s += %s" % (self.name(), self.expr(1)),
                   "%s, *%s = %s" % (self.name(), self.name(), self.expr(1)), "%s(%s)" % (self.name(), self.expr()),
                   "%s.%s = %s" % (self.name(), self.random.choice(ATTRS), self.expr(1)),
                   "del %s[0]" % self.name(), "assert %s, %s" % (self.expr(1), self.name()),
                   "return %s" % self.expr(), "yield %s" % self.expr(1)]
        if loop:
            choices += ["break", "continue"]
        return pad + self.random.choice(choices)

    def if_(self, indent: int, depth: int, loop: bool) -> List[str]:
        pad = " " * indent
        lines = [pad + "if %s:" % self.expr()] + self.block(indent + 4, depth, loop)
        if self.random.random() < 0.5:
            lines += [pad + "elif %s:" % self.expr()] + self.block(indent + 4, depth, loop)
        if self.random.random() < 0.5:
            lines += [pad + "else:"] + self.block(indent + 4, depth, loop)
        return lines

    def for_(self, indent: int, depth: int, loop: bool) -> List[str]:
        pad = " " * indent
        lines = [pad + "for %s in %s:" % (self.name(), self.expr())] + self.block(indent + 4, depth, True)
        if self.random.random() < 0.3:
            lines += [pad + "else:"] + self.block(indent + 4, depth, loop)
        return lines

    def while_(self, indent: int, depth: int, loop: bool) -> List[str]:
        pad = " " * indent
        return [pad + "while %s:" % self.expr()] + self.block(indent + 4, depth, True)

    def try_(self, indent: int, depth: int, loop: bool) -> List[str]:
        pad = " " * indent
        lines = [pad + "try:"] + self.block(indent + 4, depth, loop)
        lines += [pad + "except (ValueError, KeyError) as err:"] + self.block(indent + 4, depth, loop)
        if self.random.random() < 0.4:
            lines += [pad + "else:"] + self.block(indent + 4, depth, loop)
        if self.random.random() < 0.4:
            lines += [pad + "finally:"] + self.block(indent + 4, depth, False)
        return lines

    def with_(self, indent: int, depth: int, loop: bool) -> List[str]:
        pad = " " * indent
        return [pad + "with %s as %s, %s:" % (self.name(), self.name(), self.name())] + \
            self.block(indent + 4, depth, loop)

    def closure(self, indent: int, depth: int, loop: bool) -> List[str]:
        pad = " " * indent
        inner = self.random.choice(["inner", "helper"])
        return [pad + "def %s(p, *, k=1):" % inner, pad + "    nonlocal total"] + \
            self.block(indent + 4, depth, False) + [pad + "total = %s(%s)" % (inner, self.expr(1))]

    def match_(self, indent: int, depth: int, loop: bool) -> List[str]:
        pad = " " * indent
        cases = ["[%s, *rest]" % self.name(), "{'k': %s}" % self.name(), "int() | str()", "(1 | 2) as n", "_"]
        lines = [pad + "match %s:" % self.expr(1)]
        for case in self.random.sample(cases[:-1], 2) + cases[-1:]:
            guard = " if %s" % self.expr(1) if self.random.random() < 0.3 else ""
            lines += [pad + "    case %s%s:" % (case, guard)] + self.block(indent + 8, depth, loop)
        return lines

    # ------------------------------------------------------------------ the module

    def function(self, name: str, indent: int = 0) -> List[str]:
        pad = " " * indent
        return [pad + "def %s(a, b=2, *args, c=None, **kw):" % name, pad + "    total = 0"] + \
            self.block(indent + 4, self.depth, False) + [pad + "    return total"]

    def source(self) -> str:
        lines: List[str] = []
        for number in range(self.random.randint(1, 3)):
            lines += self.function("f%d" % number) + ["", ""]
        lines += ["class C%d(Base):" % self.random.randrange(10), "    unit = %s" % self.atom()]
        lines += self.function("method", 4)
        return "\n".join(lines) + "\n"


def program(seed: int, depth: int = 3) -> str:
    """The source of program ``seed``."""
    return Program(seed, depth).source()
