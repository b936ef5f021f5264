"""depyf's ``depyf.code_transform.fix_irregular_code``: source for a function's code object
made to compile to code with the same variables, so that it can replace the original's.

framescope's decompiled source already compiles to the original's bytecode; what a lone
``def`` cannot say is where its free variables come from. The source is put inside an
enclosing function that defines them, so that they are read from a closure, as in the
original, and not as globals. Local and cell variables the source lacks (source from
elsewhere) are added by a loop over nothing.
"""
from __future__ import annotations

import ast
import io
import tokenize
from types import CodeType
from typing import List, Optional, Set, Tuple

from framescope.depyf.utils import collect_all_code_objects

__all__ = ["add_indentation", "fix_irregular_code", "remove_indentation"]


def fix_irregular_code(old_bytecode: CodeType, src_code: str, add_local_variables: Optional[List[str]] = None,
                       add_cellvars: Optional[List[str]] = None) -> str:
    """``src_code`` (the source of a function ``old_bytecode.co_name``) changed so that the
    function it defines has ``old_bytecode``'s free variables read from a closure, and at
    least its local and cell variables."""
    name = old_bytecode.co_name
    locals_, cells = lacking(src_code, name, old_bytecode)
    locals_ = sorted(set(add_local_variables or ()) | set(add_cellvars or ()) | locals_ | cells)
    cells = sorted(set(add_cellvars or ()) | cells)
    source = declare(src_code, name, locals_, cells) if locals_ else src_code
    if old_bytecode.co_freevars:
        source = enclose(source, old_bytecode.co_freevars)
    return source


def lacking(source: str, name: str, code: CodeType) -> Tuple[Set[str], Set[str]]:
    """The local and the cell variables of ``code`` that function ``name`` in ``source`` lacks."""
    try:
        compiled = compile(source, code.co_filename, "exec", dont_inherit=True)
    except SyntaxError:
        return set(), set()
    found = [c for c in collect_all_code_objects(compiled) if c.co_name == name]
    if not found:
        return set(), set()
    have = set(found[0].co_varnames) | set(found[0].co_cellvars) | set(found[0].co_freevars)
    return set(code.co_varnames) - have, set(code.co_cellvars) - set(found[0].co_cellvars)


def declare(source: str, name: str, names: List[str], cells: List[str]) -> str:
    """``source`` with, first in function ``name`` (after its docstring), ``for a, b in ():
    pass``, a loop that never runs and makes the names its variables, and for ``cells`` a
    function that never runs and reads them, which makes them cell variables."""
    tree = ast.parse(source)
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name == name:
            first = node.body[0]
            docstring = isinstance(first, ast.Expr) and isinstance(getattr(first, "value", None), ast.Constant) \
                and isinstance(first.value.value, str)
            line = first.end_lineno if docstring else first.lineno - 1
            padding = " " * first.col_offset
            added = "%sfor %s, in ():\n%s    pass\n" % (padding, ", ".join(names), padding)
            if cells:
                added += "%sdef __framescope_cells():\n%s    return %s,\n" % (padding, padding, ", ".join(cells))
            lines = source.splitlines(keepends=True)
            if line and not lines[line - 1].endswith("\n"):
                lines[line - 1] += "\n"
            return "".join(lines[:line] + [added] + lines[line:])
    return source


def enclose(source: str, freevars: tuple) -> str:
    """``source`` inside ``def __framescope_closure():`` that defines ``freevars``."""
    head = ["def __framescope_closure():\n"] + ["    %s = None\n" % var for var in freevars]
    return "".join(head) + add_indentation(source, 4)


def add_indentation(code: str, indentation: int = 4) -> str:
    """Each line of ``code`` indented by ``indentation`` spaces, except lines that continue a
    multi-line string (their text is the string's)."""
    inside = string_continuations(code)
    return "".join(line if number in inside or not line.strip() else " " * indentation + line
                   for number, line in enumerate(code.splitlines(keepends=True), 1))


def remove_indentation(code: str, indentation: int = 4) -> str:
    """``add_indentation`` undone: up to ``indentation`` leading spaces off each line."""
    inside = string_continuations(code)
    out = []
    for number, line in enumerate(code.splitlines(keepends=True), 1):
        strip = 0 if number in inside else min(indentation, len(line) - len(line.lstrip(" ")))
        out.append(line[strip:])
    return "".join(out)


def string_continuations(code: str) -> Set[int]:
    """Numbers of the lines that begin inside a multi-line string."""
    lines: Set[int] = set()
    try:
        for token in tokenize.generate_tokens(io.StringIO(code).readline):
            if token.type == tokenize.STRING and token.end[0] > token.start[0]:
                lines.update(range(token.start[0] + 1, token.end[0] + 1))
    except (tokenize.TokenError, IndentationError, SyntaxError):
        pass
    return lines
