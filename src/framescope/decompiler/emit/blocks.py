"""The statement lists inside a statement that belong to its own scope."""
import ast
from typing import Callable, Iterator, List

_SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)


def inner_blocks(stmt: ast.stmt) -> Iterator[List[ast.stmt]]:
    """The non-empty statement lists of ``stmt`` run in its scope: bodies, ``else`` and
    ``finally`` clauses, except clauses and match cases (not a nested function's or class's)."""
    if not isinstance(stmt, _SCOPES):
        for field in ("body", "orelse", "finalbody"):
            inner = getattr(stmt, field, None)
            if isinstance(inner, list) and inner:
                yield inner
    for clause in list(getattr(stmt, "handlers", ())) + list(getattr(stmt, "cases", ())):
        yield clause.body


def rewrite_blocks(stmt: ast.stmt, rewrite: Callable[[List[ast.stmt]], List[ast.stmt]]) -> None:
    """Replace, in place, each of ``stmt``'s `inner_blocks` by ``rewrite`` of it."""
    for inner in inner_blocks(stmt):
        inner[:] = rewrite(inner)
