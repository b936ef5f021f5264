"""Comprehensions recovered from the loop that computes them.

A comprehension runs as a loop (in a code object of its own up to 3.11, inlined in the
function from 3.12) whose body appends one element; :func:`collect` walks the recovered
``for``/``if`` nest down to that element, :func:`build` makes the comprehension.
"""
from __future__ import annotations

import ast
from typing import List, Optional

from framescope.decompiler.simulate.expressions import negate
from framescope.decompiler.simulate.sametree import same_tree
from framescope.decompiler.simulate.state import CompAppend
from framescope.errors import DecompilationError


def build(kind: str, element: CompAppend, generators: List[ast.comprehension]) -> ast.expr:
    if kind == "<listcomp>":
        return ast.ListComp(elt=element.value, generators=generators)
    if kind == "<setcomp>":
        return ast.SetComp(elt=element.value, generators=generators)
    if kind == "<dictcomp>":
        return ast.DictComp(key=element.key, value=element.value, generators=generators)
    # ``yield None`` reads back as a bare ``yield`` (no value); a generator's element is None then.
    value = element.value if element.value is not None else ast.Constant(value=None)
    return ast.GeneratorExp(elt=value, generators=generators)


def continue_guard(stmts: List[ast.stmt]) -> Optional[ast.expr]:
    """The condition for going on past ``stmts`` when they only ``continue`` (or not).

    ``if t: continue`` gives ``not t``; ``if c: (if x: continue) else: (if y: continue)``,
    how ``if (x if c else y)`` compiles in a comprehension, gives ``not x if c else not y``.
    """
    if len(stmts) != 1 or not isinstance(stmts[0], ast.If):
        return None
    stmt = stmts[0]
    if len(stmt.body) == 1 and isinstance(stmt.body[0], ast.Continue) and not stmt.orelse:
        return negate(stmt.test)
    body, orelse = continue_guard(stmt.body), continue_guard(stmt.orelse)
    if body is None or orelse is None:
        return None
    return ast.IfExp(test=stmt.test, body=body, orelse=orelse)


def conditional_test(stmt: ast.stmt) -> ast.stmt:
    """``if c: (if x: s) else: (if y: s)`` is how ``if (x if c else y): s`` compiles: fold it back.

    A comprehension's single element cannot be written twice, so its condition must be
    the conditional expression.
    """
    if not (isinstance(stmt, ast.If) and len(stmt.body) == 1 and len(stmt.orelse) == 1):
        return stmt
    a, b = conditional_test(stmt.body[0]), conditional_test(stmt.orelse[0])
    if not (isinstance(a, ast.If) and isinstance(b, ast.If) and not a.orelse and not b.orelse):
        return stmt
    if len(a.body) != len(b.body) or not all(same_tree(x, y) for x, y in zip(a.body, b.body)):
        return stmt
    return ast.If(test=ast.IfExp(test=stmt.test, body=a.test, orelse=b.test), body=a.body, orelse=[])


def collect(stmts: List[ast.stmt], generators: List[ast.comprehension], kind: str) -> CompAppend:
    """Walk the ``for``/``if`` nest down to the single element statement."""
    ifs: Optional[List[ast.expr]] = None
    while True:
        guard = continue_guard(stmts[:1])
        if guard is not None:
            if ifs is None:
                raise DecompilationError("condition outside a comprehension loop", code_name=kind)
            ifs.append(guard)
            stmts = stmts[1:]
            continue
        if len(stmts) != 1:
            raise DecompilationError("comprehension body is not a single element", code_name=kind)
        stmt = conditional_test(stmts[0])
        if isinstance(stmt, (ast.For, ast.AsyncFor)) and not stmt.orelse:
            gen = ast.comprehension(target=stmt.target, iter=stmt.iter, ifs=[],
                                    is_async=int(isinstance(stmt, ast.AsyncFor)))
            generators.append(gen)
            ifs = gen.ifs
            stmts = stmt.body
            continue
        if isinstance(stmt, ast.If) and not stmt.orelse and ifs is not None:
            ifs.append(stmt.test)
            stmts = stmt.body
            continue
        if isinstance(stmt, CompAppend):
            return stmt
        if kind == "<genexpr>" and isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Yield):
            return CompAppend(value=stmt.value.value, key=None, depth=0)
        raise DecompilationError("unexpected statement in a comprehension", code_name=kind)
