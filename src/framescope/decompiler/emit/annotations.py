"""Annotated assignments of class and module bodies (``x: int``, ``y: str = 'a'``).

Up to 3.13 a body with annotations starts with ``SETUP_ANNOTATIONS`` and stores each one
in ``__annotations__`` after the assignment it goes with: the statements read
``y = 'a'`` then ``__annotations__['y'] = str``. 3.14 leaves the annotations out of the
body: an ``__annotate__`` function returns them (``if format > 2: raise
NotImplementedError`` then the dict), stored as the class's ``__annotate_func__`` or a
function's ``__annotate__``. An annotation under a condition in a class body adds its
number to the set ``__conditional_annotations__`` there, and ``__annotate__`` stores it
only ``if <number> in __conditional_annotations__``.
"""
import __future__
import ast
from types import CodeType
from typing import Dict, List, Optional, Tuple

from framescope.decompiler.emit.blocks import rewrite_blocks
from framescope.decompiler.simulate.state import CompAppend
from framescope.errors import DecompilationError

#: The name a 3.14 class body stores its annotation function under.
CLASS_ANNOTATE = "__annotate_func__"
#: The set of the numbers of the annotations under a condition that a 3.14 class body ran.
CONDITIONAL = "__conditional_annotations__"

#: (name, annotation) in source order.
Annotations = List[Tuple[str, ast.expr]]


def stringified(code: CodeType) -> bool:
    """Whether ``from __future__ import annotations`` is in force: annotations are kept as
    the text of their expressions."""
    return bool(code.co_flags & __future__.annotations.compiler_flag)


def as_written(annotation: ast.expr) -> ast.expr:
    """The expression a stringified annotation holds the text of (itself when none)."""
    if not (isinstance(annotation, ast.Constant) and isinstance(annotation.value, str)):
        return annotation
    try:
        return ast.parse(annotation.value, mode="eval").body
    except (SyntaxError, ValueError):
        return annotation


def written_annotations(code: CodeType, annotations: Dict[str, ast.expr]) -> Dict[str, ast.expr]:
    """A function's annotations as the source wrote them."""
    if not stringified(code):
        return annotations
    return {key: as_written(value) for key, value in annotations.items()}


class ClassAnnotations(ast.stmt):
    """A 3.14 class body's annotations, where it stores ``__annotate_func__``; `class_annotations`
    turns them back into annotated assignments."""

    _fields = ("items", "conditional")


# --------------------------------------------------------------------------- up to 3.13

def stored_annotations(body: List[ast.stmt], strings: bool = False) -> List[ast.stmt]:
    """``x: int`` for each ``__annotations__['x'] = int``, with the assignment just before
    it when that stores ``x`` (``x: int = 0``); recursively in compound statements.
    ``strings``: the annotations are stringified (see `stringified`)."""
    out: List[ast.stmt] = []
    for stmt in body:
        rewrite_blocks(stmt, lambda inner: stored_annotations(inner, strings))
        key = annotation_key(stmt)
        if key is None:
            out.append(stmt)
            continue
        value = None
        if out and assigned_name(out[-1]) == key:
            value = out.pop().value  # type: ignore[attr-defined]
        annotation = as_written(stmt.value) if strings else stmt.value  # type: ignore[attr-defined]
        out.append(annotated(key, annotation, value))
    return out


def annotation_key(stmt: ast.stmt) -> Optional[str]:
    """``'x'`` for ``__annotations__['x'] = ...``, else None."""
    if not (isinstance(stmt, ast.Assign) and len(stmt.targets) == 1):
        return None
    target = stmt.targets[0]
    if not (isinstance(target, ast.Subscript) and isinstance(target.value, ast.Name)
            and target.value.id == "__annotations__"):
        return None
    key = target.slice.value if isinstance(target.slice, ast.Index) else target.slice  # type: ignore[attr-defined]
    if isinstance(key, ast.Constant) and isinstance(key.value, str) and key.value.isidentifier():
        return key.value
    return None


def assigned_name(stmt: ast.stmt) -> Optional[str]:
    """The name a plain one-target assignment stores, else None."""
    if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name):
        return stmt.targets[0].id
    return None


def annotated(key: str, annotation: ast.expr, value: Optional[ast.expr]) -> ast.AnnAssign:
    return ast.AnnAssign(target=ast.Name(id=key, ctx=ast.Store()), annotation=annotation, value=value, simple=1)


# --------------------------------------------------------------------------- 3.14

def annotate_items(body: List[ast.stmt],
                   conditional: Optional[Dict[int, Tuple[str, ast.expr]]] = None) -> Annotations:
    """The annotations an ``__annotate__`` function's body returns, in order.

    Its statements read ``if format > 2: raise NotImplementedError``, then either
    ``return {'x': int, ...}`` (a function's) or ``{}['x'] = int`` ... ``return {}``,
    stores into the one dict returned (a class's). A class's stores under ``if <number>
    in __conditional_annotations__`` go to ``conditional`` by number instead.
    """
    if not body or not is_format_check(body[0]) or not isinstance(body[-1], ast.Return):
        raise DecompilationError("annotation function of an unknown shape")
    returned = body[-1].value
    stores = body[1:-1]
    if not isinstance(returned, ast.Dict) or (stores and returned.keys):
        raise DecompilationError("annotation function of an unknown shape")
    if not stores:
        keys = [k.value if isinstance(k, ast.Constant) and isinstance(k.value, str) else None for k in returned.keys]
        if None in keys:
            raise DecompilationError("annotation function of an unknown shape")
        return list(zip(keys, returned.values))  # type: ignore[arg-type]
    items: Annotations = []
    for stmt in stores:
        number = conditional_number(stmt) if conditional is not None else None
        if number is not None:
            stmt = stmt.body[0]  # type: ignore[attr-defined]
        key = stored_key(stmt, returned)
        if key is None:  # a conditional annotation of a function, or anything else
            raise DecompilationError("annotation function of an unknown shape")
        if number is not None:
            conditional[number] = (key, stmt.value)  # type: ignore[index, attr-defined]
        else:
            items.append((key, stmt.value))  # type: ignore[attr-defined]
    return items


def conditional_number(stmt: ast.stmt) -> Optional[int]:
    """``n`` for ``if n in __conditional_annotations__: <one statement>``, else None."""
    if not (isinstance(stmt, ast.If) and not stmt.orelse and len(stmt.body) == 1):
        return None
    test = stmt.test
    if not (isinstance(test, ast.Compare) and len(test.ops) == 1 and isinstance(test.ops[0], ast.In)):
        return None
    number, place = test.left, test.comparators[0]
    if not (isinstance(place, ast.Name) and place.id == CONDITIONAL and isinstance(number, ast.Constant)):
        return None
    return number.value if type(number.value) is int else None


def is_format_check(stmt: ast.stmt) -> bool:
    return (isinstance(stmt, ast.If) and isinstance(stmt.test, ast.Compare) and not stmt.orelse
            and isinstance(stmt.test.left, ast.Name) and stmt.test.left.id in ("format", ".format")
            and len(stmt.body) == 1 and isinstance(stmt.body[0], ast.Raise))


def stored_key(stmt: ast.stmt, returned: ast.Dict) -> Optional[str]:
    """``'x'`` for the store ``returned['x'] = ...`` into the returned dict itself, else None."""
    if not (isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Subscript)):
        return None
    target = stmt.targets[0]
    key = target.slice
    if target.value is not returned or not (isinstance(key, ast.Constant) and isinstance(key.value, str)):
        return None
    return key.value if key.value.isidentifier() else None


def class_annotations(body: List[ast.stmt], strings: bool = False) -> List[ast.stmt]:
    """Put a 3.14 class body's annotations back as annotated assignments.

    Where an annotation with no value stood does not show in the bytecode; each one
    takes the value of the first assignment to its name after the previous annotation,
    or stands alone right after the previous one when none follows.
    """
    found = [i for i, stmt in enumerate(body) if isinstance(stmt, ClassAnnotations)]
    if not found:
        return body
    if len(found) > 1:
        raise DecompilationError("class body with two annotation functions")
    items = body[found[0]].items  # type: ignore[attr-defined]
    rest = conditional_annotations(body[:found[0]] + body[found[0] + 1:], body[found[0]].conditional, strings)
    out: List[ast.stmt] = []
    position = 0
    for key, annotation in items:
        annotation = as_written(annotation) if strings else annotation
        match = next((i for i in range(position, len(rest)) if assigned_name(rest[i]) == key), None)
        if match is None:
            out.append(annotated(key, annotation, None))
            continue
        out += rest[position:match]
        out.append(annotated(key, annotation, rest[match].value))  # type: ignore[attr-defined]
        position = match + 1
    return out + rest[position:]


def conditional_annotations(body: List[ast.stmt], conditional: Dict[int, Tuple[str, ast.expr]],
                            strings: bool) -> List[ast.stmt]:
    """Put back, recursively, each annotation under a condition where the class body adds its
    number to ``__conditional_annotations__`` (``CompAppend`` then the pop of the set), with
    the assignment just before it when that stores its name."""
    out: List[ast.stmt] = []
    for stmt in body:
        rewrite_blocks(stmt, lambda inner: conditional_annotations(inner, conditional, strings))
        if is_set_pop(stmt) and out and isinstance(out[-1], CompAppend) and out[-1].depth == 1:
            number = out.pop().value  # type: ignore[attr-defined]
            if not (isinstance(number, ast.Constant) and number.value in conditional):
                raise DecompilationError("conditional annotation without its annotation")
            key, annotation = conditional[number.value]
            value = out.pop().value if out and assigned_name(out[-1]) == key else None  # type: ignore[attr-defined]
            out.append(annotated(key, as_written(annotation) if strings else annotation, value))
            continue
        out.append(stmt)
    return out


def is_set_pop(stmt: ast.stmt) -> bool:
    """Whether ``stmt`` pops the set of the annotations under a condition (after adding to it)."""
    return isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Name) and stmt.value.id == CONDITIONAL
