"""Tidying across statements: a value that nothing can change put where it is read, a
temporary that only hands its value to a name given that name, ``x = x`` dropped.

`inline_temporaries` only puts a value back into the very next statement, where nothing
happens in between. These passes move further, under one rule each:

* *sinking*: ``t = value``, read once, later in the same block, moves to its reading when
  evaluating ``value`` there gives the same result and cannot fail or act: ``value`` is built
  only of constants, names of this code that no statement in between binds, and displays
  (tuples, lists, dicts with constant keys, sets of constants) of those; a closure cell read
  as ``(lambda: x).__closure__[0]`` counts as a name. Calls, attributes, subscripts and
  operators never move (each may act, or see what happens in between).
* *coalescing*: ``t = value`` ... ``name = t``, where ``t`` is read nowhere after and ``name``
  is neither read nor bound in between, becomes ``name = value`` with ``name`` read in place
  of ``t`` in between. The only difference is when ``name`` takes its new value, and nothing
  reads it in between; outside a ``try`` no handler of this code can see it either (a
  traceback's frame still can).
* ``x = x`` of a parameter that is never deleted does nothing, and goes.

Cell and free variables never take part: another function may read or bind them in between.
"""
import ast
from typing import AbstractSet, Callable, Dict, List, Optional, Set

from framescope.decompiler.machine.inline import Substitute, is_temporary, name_counts, statement_parts


def tidy_across(body: List[ast.stmt], movable: AbstractSet[str], parameters: AbstractSet[str],
                cells: AbstractSet[str]) -> List[ast.stmt]:
    """``body`` with the three passes above applied; ``movable`` are the temporaries (and the
    scratch locals stored once) the passes may remove or rename."""
    whole = ast.Module(body=body, type_ignores=[])
    deleted = name_counts(body, ast.Del)
    reads = name_counts(body, ast.Load)
    stores = name_counts(body, ast.Store)
    once = {ident for ident in movable if stores.get(ident) == 1 and not deleted.get(ident) and ident not in cells}
    lists = _statement_lists(whole)
    for stmts, protected in lists:
        _sink(stmts, {ident for ident in once if reads.get(ident) == 1}, cells)
    for stmts, protected in lists:
        if not protected:
            _coalesce(stmts, once, cells, lambda: name_counts(body, ast.Load))
    bound = {ident for ident in parameters if not deleted.get(ident) and ident not in cells}
    for stmts, _ in lists:
        kept = [stmt for stmt in stmts if not _self_assignment(stmt, bound)]
        if len(kept) < len(stmts):
            stmts[:] = kept or [ast.Pass()]
    return body


# --------------------------------------------------------------------------- the blocks


def _statement_lists(node: ast.AST, protected: bool = False) -> List[tuple]:
    """Every statement list under ``node``, with whether it runs under a ``try``."""
    found = []
    for field in ("body", "orelse", "finalbody"):
        stmts = getattr(node, field, None)
        if isinstance(stmts, list) and stmts and isinstance(stmts[0], ast.stmt):
            inner = protected or isinstance(node, ast.Try)
            found.append((stmts, inner))
            for stmt in stmts:
                found.extend(_statement_lists(stmt, inner))
    for handler in getattr(node, "handlers", []):
        found.append((handler.body, True))
        for stmt in handler.body:
            found.extend(_statement_lists(stmt, True))
    return found


def _names(node: ast.AST, context: type) -> Set[str]:
    return {n.id for n in ast.walk(node) if isinstance(n, ast.Name) and isinstance(n.ctx, context)}


def _binds(stmts: List[ast.stmt]) -> Set[str]:
    """Names the statements bind or unbind, at any depth."""
    found: Set[str] = set()
    for stmt in stmts:
        found |= _names(stmt, ast.Store) | _names(stmt, ast.Del)
    return found


# --------------------------------------------------------------------------- sinking


def _settled(node: ast.AST, cells: AbstractSet[str]) -> bool:
    """Whether evaluating ``node`` later gives the same value, and cannot fail or act."""
    if isinstance(node, ast.Constant):
        return True
    if isinstance(node, ast.Name):
        return node.id not in cells
    if isinstance(node, (ast.Tuple, ast.List)):
        return all(_settled(x, cells) for x in node.elts)
    if isinstance(node, ast.Set):
        return all(isinstance(x, ast.Constant) for x in node.elts)
    if isinstance(node, ast.Dict):
        # A ``**x`` entry (key None) calls x's methods; any other key must hash without running code.
        return all(isinstance(k, ast.Constant) for k in node.keys) and all(_settled(x, cells) for x in node.values)
    return _is_cell_spelling(node)


def _is_cell_spelling(node: ast.AST) -> bool:
    """``(lambda: x).__closure__[0]``: the cell of ``x`` itself (see `MachineSimulator.expr`)."""
    return (isinstance(node, ast.Subscript) and isinstance(node.value, ast.Attribute)
            and node.value.attr == "__closure__" and isinstance(node.value.value, ast.Lambda)
            and isinstance(node.value.value.body, ast.Name))


def _sink(stmts: List[ast.stmt], read_once: Set[str], cells: AbstractSet[str]) -> None:
    i = 0
    while i < len(stmts):
        stmt = stmts[i]
        if is_temporary(stmt, read_once) and _settled(stmt.value, cells):
            target = _reader(stmts, i, stmt.targets[0].id)
            if target is not None and not (_names(stmt.value, ast.Load) & _binds_before(stmts, i, target)):
                stmts[target] = Substitute(stmt.targets[0].id, stmt.value).visit(stmts[target])
                del stmts[i]
                continue
        i += 1


def _binds_before(stmts: List[ast.stmt], start: int, target: int) -> Set[str]:
    """Names bound between ``start`` and the reading of ``stmts[start]``'s temporary in
    ``stmts[target]``: an assignment binds after its value, a ``del`` of several targets
    unbinds each before the next is evaluated."""
    bound = _binds(stmts[start + 1:target])
    reading = stmts[target]
    ident = stmts[start].targets[0].id
    if not (isinstance(reading, ast.Assign) and ident in _names(reading.value, ast.Load)):
        bound |= _binds([reading])
    return bound


def _reader(stmts: List[ast.stmt], start: int, ident: str) -> Optional[int]:
    """The index of the statement after ``start`` that reads ``ident`` among the expressions
    it evaluates itself (not in a body of its own); None if another one reads it first."""
    for index in range(start + 1, len(stmts)):
        stmt = stmts[index]
        if ident not in _names(stmt, ast.Load):
            continue
        parts = statement_parts(stmt)
        if parts is None or not any(ident in _names(part, ast.Load) for part in parts):
            return None
        return index
    return None


# --------------------------------------------------------------------------- coalescing


def _coalesce(stmts: List[ast.stmt], once: Set[str], cells: AbstractSet[str],
              counted: Callable[[], Dict[str, int]]) -> None:
    reads = counted()
    defined = {stmt.targets[0].id: index for index, stmt in enumerate(stmts) if is_temporary(stmt, once)}
    index = 0
    while index < len(stmts):
        alias = _alias(stmts[index])
        start = defined.get(alias[1]) if alias else None
        if alias is None or start is None or start >= index or not _can_take(stmts, start, index, alias, cells,
                                                                              reads):
            index += 1
            continue
        name, temp = alias
        stmts[start].targets[0] = ast.Name(id=name, ctx=ast.Store())
        for k in range(start + 1, index):
            stmts[k] = _Rename(temp, name).visit(stmts[k])
        del stmts[index]
        reads = counted()
        defined = {stmt.targets[0].id: k for k, stmt in enumerate(stmts) if is_temporary(stmt, once)}


def _alias(stmt: ast.stmt) -> Optional[tuple]:
    if (isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name)
            and isinstance(stmt.value, ast.Name) and stmt.targets[0].id != stmt.value.id):
        return stmt.targets[0].id, stmt.value.id
    return None


def _can_take(stmts: List[ast.stmt], start: int, end: int, alias: tuple, cells: AbstractSet[str],
              reads: Dict[str, int]) -> bool:
    """Whether ``name`` may hold ``temp``'s value from ``start`` on: nothing between touches
    ``name``, and ``temp`` is read only between (its last read is the alias)."""
    name, temp = alias
    if name in cells:
        return False
    between = stmts[start + 1:end]
    touched = set()
    for stmt in between:
        touched |= _names(stmt, ast.Load) | _names(stmt, ast.Store) | _names(stmt, ast.Del)
    if name in touched:
        return False
    inside = sum(1 for stmt in between for n in ast.walk(stmt)
                 if isinstance(n, ast.Name) and n.id == temp and isinstance(n.ctx, ast.Load))
    return inside + 1 == reads.get(temp, 0)


class _Rename(ast.NodeTransformer):
    def __init__(self, old: str, new: str) -> None:
        self.old = old
        self.new = new

    def visit_Name(self, node: ast.Name) -> ast.AST:
        if node.id == self.old:
            return ast.Name(id=self.new, ctx=node.ctx)
        return node


# --------------------------------------------------------------------------- x = x


def _self_assignment(stmt: ast.stmt, bound: AbstractSet[str]) -> bool:
    return (isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name)
            and isinstance(stmt.value, ast.Name) and stmt.targets[0].id == stmt.value.id
            and stmt.value.id in bound)
