"""Give back the ``else`` that ended a function on 3.8-3.9, which the bytecode still shows.

Up to 3.9 the compiler adds ``return None`` after a function body whose last statement is
not a ``return``, even where nothing reaches it. So a function that ends
``... return x`` followed by that unreached ``return None`` was written with its last
``return`` inside a compound statement: most often the ``else`` of an ``if`` whose arms
all return (``if a: return 1 / elif b: return 2 / else: ... return 3``), less often the
``else`` of a loop without ``break`` or of a ``try`` whose clauses all return. Both
spellings run alike; only this one recompiles to the same instructions.

Only arms that end in ``return`` qualify: a ``return`` takes its block's unreached jump to
the end of the statement with it (the peephole optimizer drops it), while any other way
out would leave that jump in the instructions and show there.
"""
import ast
from types import CodeType
from typing import List, Optional

from framescope.decompiler.frontend import versions
from framescope.decompiler.frontend.bytecode import instructions, is_jump

_NO_FALL_THROUGH = frozenset(["RETURN_VALUE", "RAISE_VARARGS", "RERAISE", "JUMP_ABSOLUTE", "JUMP_FORWARD"])
_LOOPS = (ast.For, ast.AsyncFor, ast.While)


def restore_final_else(code: CodeType, body: List[ast.stmt]) -> List[ast.stmt]:
    """``body`` with the statements after its last eligible compound statement moved into
    that statement's ``else``, when ``code`` ends in an unreached ``return None``."""
    if not (versions.KEEPS_UNREACHED_FINAL_RETURN and body and ends_in_unreached_return(code)):
        return body
    if takes_else_if(body[-1]):
        # Every arm returns, and so did the ``else``: a written ``return None``, which the
        # implicit one's clean-up took away.
        body = body + [ast.Return(value=ast.Constant(value=None))]
    elif not isinstance(body[-1], ast.Return):
        return body
    index = first_found(body, (takes_else_if, takes_else_loop, takes_else_try))
    if index is None:
        return body
    last_open_else(body[index]).orelse = body[index + 1:]
    body = body[:index + 1]
    while isinstance(body[-1], ast.If) and len(body) >= 2 and takes_else_if(body[-2]):
        # ``if a: return 1`` then ``if b: return 2 / else: ...``: one chain, as written.
        chained = body.pop()
        last_open_else(body[-1]).orelse = [chained]
    return body


def first_found(body: List[ast.stmt], kinds) -> Optional[int]:
    """Where the last statement before ``body``'s last one that the first kind that has
    one accepts is."""
    for eligible in kinds:
        for index in range(len(body) - 2, -1, -1):
            if eligible(body[index]):
                return index
    return None


def ends_in_unreached_return(code: CodeType) -> bool:
    """Whether ``code`` ends in ``LOAD_CONST None; RETURN_VALUE`` that no instruction reaches."""
    instrs = instructions(code)
    if len(instrs) < 3:
        return False
    (_, _, before, _, _), (load_at, _, load, arg, _), (_, _, ret, _, _) = instrs[-3:]
    if ret != "RETURN_VALUE" or load != "LOAD_CONST" or code.co_consts[arg] is not None:
        return False
    targets = {argval for _, op, _, _, argval in instrs if is_jump(op)}
    return before in _NO_FALL_THROUGH and load_at not in targets


def takes_else_if(stmt: ast.stmt) -> bool:
    """An ``if``/``elif`` chain without a final ``else`` whose every arm ends in ``return``."""
    while isinstance(stmt, ast.If):
        if not ends_in_return(stmt.body):
            return False
        if not stmt.orelse:
            return True
        if len(stmt.orelse) != 1:
            return False
        stmt = stmt.orelse[0]
    return False


def takes_else_loop(stmt: ast.stmt) -> bool:
    """A loop without ``else`` or ``break``, that can end (not ``while True``)."""
    if not isinstance(stmt, _LOOPS) or stmt.orelse or breaks(stmt.body):
        return False
    return not (isinstance(stmt, ast.While) and isinstance(stmt.test, ast.Constant) and stmt.test.value)


def takes_else_try(stmt: ast.stmt) -> bool:
    """A ``try`` with except clauses that all end in ``return``, and no ``else`` or ``finally``."""
    return (isinstance(stmt, ast.Try) and bool(stmt.handlers) and not stmt.orelse and not stmt.finalbody
            and all(ends_in_return(handler.body) for handler in stmt.handlers))


def ends_in_return(body: List[ast.stmt]) -> bool:
    return bool(body) and isinstance(body[-1], ast.Return)


def last_open_else(stmt: ast.stmt) -> ast.stmt:
    """The statement of an ``if``/``elif`` chain whose ``else`` is empty (``stmt`` itself otherwise)."""
    while isinstance(stmt, ast.If) and stmt.orelse:
        stmt = stmt.orelse[0]
    return stmt


def breaks(body: List[ast.stmt]) -> bool:
    """Whether ``body`` holds a ``break`` of the loop around it (not of a nested loop)."""
    todo = list(body)
    while todo:
        node = todo.pop()
        if isinstance(node, ast.Break):
            return True
        if isinstance(node, _LOOPS):
            todo.extend(node.orelse)  # a nested loop's else belongs to the outer one's body
            continue
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)):
            continue
        todo.extend(child for child in ast.iter_child_nodes(node) if not isinstance(child, ast.expr))
    return False
