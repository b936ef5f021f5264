"""The statements of except and finally clauses: the compiler's clean-up taken out.

A clause's code ends with what the compiler adds around the source's statements: the
re-raise that ends a finally body, ``name = None; del name`` after an ``except ... as
name``, the ``pass`` that stood for an empty body. `protected.ProtectedBuilder` builds
the clauses; these take the additions out of the statements it built.
"""
import ast
from typing import List, Optional

from framescope.decompiler.frontend import versions
from framescope.decompiler.simulate import marks
from framescope.decompiler.simulate.expressions import negate
from framescope.decompiler.simulate.state import ExceptEnd
from framescope.decompiler.structure.arms import ends_control

#: The try statements: ``except`` clauses, and ``except*`` ones where the grammar has them.
TRY_NODES = (ast.Try, ast.TryStar) if versions.EXCEPT_STAR else (ast.Try,)


def strip_reraise(body: List[ast.stmt]) -> Optional[List[ast.stmt]]:
    """A finally body without the re-raise that ends each of its paths (None: some path lacks it)."""
    if not body:
        return None
    last = body[-1]
    if isinstance(last, (ast.Raise, ast.Return, ast.Break, ast.Continue)) and not marks.marked(last, marks.RERAISE):
        return guarded_exit(body)  # the finally body never completes (its re-raise is unreachable)
    if isinstance(last, ast.Raise) and last.exc is None:
        body = body[:-1]
        if body and isinstance(body[-1], ast.If):  # an arm that re-raised before the shared end
            inner = strip_reraise(body[-1].body)
            if inner is not None and not body[-1].orelse:
                body[-1].body = inner or [ast.Pass()]
        return body
    if isinstance(last, ast.If):
        inner = strip_reraise(last.body)
        rest = strip_reraise(last.orelse) if last.orelse else None
        if inner is None or (last.orelse and rest is None):
            return None
        last.body = inner or [ast.Pass()]
        last.orelse = rest or []
        return body
    return None


def guarded_exit(body: List[ast.stmt]) -> List[ast.stmt]:
    """A finally body whose way out is behind an if, from the exception path's code (3.8:
    the one copy): there the arm that does not leave re-raises, ``if not c: raise`` before
    the exit; written as the source did, ``if c:`` around the exit."""
    if len(body) < 2 or not isinstance(body[-2], ast.If) or body[-2].orelse:
        return body
    test, arm = body[-2].test, body[-2].body
    if not arm or not isinstance(arm[-1], ast.Raise) or not marks.marked(arm[-1], marks.RERAISE):
        return body
    if len(arm) == 1:
        return body[:-2] + [ast.If(test=negate(test), body=[body[-1]], orelse=[])]
    return body[:-2] + [ast.If(test=test, body=arm[:-1], orelse=[body[-1]])]


def strip_name_cleanup(body: List[ast.stmt], name: Optional[str]) -> List[ast.stmt]:
    """Drop the ``POP_EXCEPT`` markers and the ``name = None; del name`` after each, at any depth."""
    out: List[ast.stmt] = []
    skip = 0
    for stmt in body:
        if isinstance(stmt, (ast.If, ast.For, ast.While, ast.With)):
            stmt.body = strip_name_cleanup(stmt.body, name) or [ast.Pass()]
            if getattr(stmt, "orelse", None):
                stmt.orelse = strip_name_cleanup(stmt.orelse, name)
        if isinstance(stmt, TRY_NODES):  # a return inside a nested try releases this clause's exception
            stmt.body = strip_name_cleanup(stmt.body, name) or [ast.Pass()]
            for handler in stmt.handlers:
                handler.body = strip_name_cleanup(handler.body, name) or [ast.Pass()]
            stmt.orelse = strip_name_cleanup(stmt.orelse, name)
            stmt.finalbody = strip_name_cleanup(stmt.finalbody, name)
        if isinstance(stmt, ExceptEnd):
            skip = 2 if name else 0
            if name and len(out) >= 2 and is_name_reset(out[-2], name, 2) and is_name_reset(out[-1], name, 1):
                del out[-2:]  # 3.8 resets the name before releasing the exception
                skip = 0
            continue
        if skip and name and is_name_reset(stmt, name, skip):
            skip -= 1
            continue
        skip = 0
        out.append(stmt)
    return out


def is_name_reset(stmt: ast.stmt, name: str, step: int) -> bool:
    if step == 2:
        return (isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name)
                and stmt.targets[0].id == name and isinstance(stmt.value, ast.Constant) and stmt.value.value is None)
    return (isinstance(stmt, ast.Delete) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name)
            and stmt.targets[0].id == name)


def without_pass(body: List[ast.stmt]) -> List[ast.stmt]:
    """A clause's statements without the ``pass`` that stood for an empty body."""
    return [s for s in body if not isinstance(s, ast.Pass)]


def leaving_by(body: List[ast.stmt], exit: List[ast.stmt]) -> List[ast.stmt]:
    """A clause's statements followed by ``exit``, the statement it leaves the try by.

    Where the clause ends with an ``if`` whose body goes on and whose ``else`` leaves, only
    the body gets there: the source wrote ``if ok: continue`` then ``raise``.
    """
    body = without_pass(body)
    last = body[-1] if body else None
    if (len(exit) == 1 and isinstance(exit[0], (ast.Return, ast.Break, ast.Continue)) and isinstance(last, ast.If)
            and ends_control(last.orelse) and not ends_control(last.body)):
        last.body = leaving_by(last.body, exit)
        return body
    return body + exit

