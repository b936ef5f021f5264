"""Tidying: a temporary read once, by the next statement, put back in its place; the scratch
locals of the code's maker treated the same; consecutive ``del`` statements joined."""
import ast
import copy
from typing import AbstractSet, Dict, Iterator, List, Optional, Set, Tuple

from framescope.decompiler.machine.values import is_pure


#: Expressions whose evaluation has no effect of its own (their operands may have some).
INERT = (ast.Name, ast.Constant, ast.Tuple, ast.List, ast.Slice, ast.Load)

#: Expressions whose evaluation order `evaluation` knows.
ORDERED = INERT + (ast.Call, ast.keyword, ast.Attribute, ast.Subscript, ast.Starred, ast.BinOp, ast.UnaryOp,
                   ast.Compare, ast.operator, ast.unaryop, ast.cmpop)


def evaluation(node: ast.AST) -> Iterator[ast.AST]:
    """``node`` and its sub-expressions in the order Python finishes evaluating them."""
    if isinstance(node, ast.Call):
        children: List[ast.AST] = [node.func] + list(node.args) + [k.value for k in node.keywords]
    else:
        children = list(ast.iter_child_nodes(node))
    for child in children:
        yield from evaluation(child)
    yield node


def statement_parts(stmt: ast.stmt) -> Optional[List[ast.AST]]:
    """The expressions a simple statement evaluates, in order; None for other statements."""
    if isinstance(stmt, (ast.Return, ast.Expr)):
        return [stmt.value] if stmt.value is not None else []
    if isinstance(stmt, ast.If):
        return [stmt.test]
    if isinstance(stmt, (ast.Assign, ast.Delete)):
        parts: List[ast.AST] = [stmt.value] if isinstance(stmt, ast.Assign) else []
        for target in stmt.targets:
            if isinstance(target, ast.Attribute):
                parts.append(target.value)
            elif isinstance(target, ast.Subscript):
                parts.extend([target.value, target.slice])
            elif not isinstance(target, ast.Name):
                return None
        return parts
    return None


def first_effect_reads(stmt: ast.stmt, ident: str, modules: AbstractSet[str] = frozenset()) -> bool:
    """Whether ``stmt`` reads ``ident`` before anything it evaluates has an effect. An
    attribute of a global in ``modules`` (names bound to modules) counts as inert: like
    globals, module attributes are assumed not to be rebound by the calls in between."""
    parts = statement_parts(stmt)
    if parts is None:
        return False
    for part in parts:
        for node in evaluation(part):
            if not isinstance(node, ORDERED):
                return False
            if isinstance(node, ast.Name) and node.id == ident and isinstance(node.ctx, ast.Load):
                return True
            if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id in modules:
                continue
            if not isinstance(node, INERT) and not isinstance(node, (ast.operator, ast.unaryop, ast.cmpop)):
                return False
    return False


class Substitute(ast.NodeTransformer):
    """Put an expression where a temporary is read (``*t`` of a ``t = [*x]`` becomes ``*x``)."""

    def __init__(self, ident: str, value: ast.expr) -> None:
        self.ident = ident
        self.value = value

    def visit_Name(self, node: ast.Name) -> ast.AST:
        # Only the read: a ``del`` of a scratch local taken in is dropped by the caller.
        return self.value if node.id == self.ident and isinstance(node.ctx, ast.Load) else node

    def visit_Starred(self, node: ast.Starred) -> ast.AST:
        value = self.value
        if (isinstance(node.value, ast.Name) and node.value.id == self.ident and isinstance(value, ast.List)
                and len(value.elts) == 1 and isinstance(value.elts[0], ast.Starred)):
            return value.elts[0]
        self.generic_visit(node)
        return node


def inline_temporaries(body: List[ast.stmt], temps: Set[str], frozen: AbstractSet[str] = frozenset(),
                       scratch: AbstractSet[str] = frozenset(), shown: AbstractSet[str] = frozenset(),
                       modules: AbstractSet[str] = frozenset()) -> List[ast.stmt]:
    """Drop ``t = value`` where the temporary ``t`` is read once, by the next statement, before
    that statement does anything else: the value is evaluated there instead, at the same point.
    A temporary never read keeps only its value's evaluation.

    ``scratch`` names locals of the code that nothing outside it looks at (the names its maker
    invented): one stored once is treated as a temporary (unless it is to be ``shown``), and once
    its store is gone so are its ``del`` statements; a ``del`` of scratch locals just before a
    ``return`` of a name or a constant goes too (nothing runs between them). Consecutive ``del``
    statements become one. ``modules``: see `first_effect_reads`."""
    stores = name_counts(body, ast.Store)
    movable = set(temps) | {ident for ident in scratch if stores.get(ident) == 1 and ident not in shown}
    body, copies = propagate_copies(body, movable & set(scratch), movable, stores, name_counts(body, ast.Del))
    reads = name_counts(body, ast.Load)
    #: Scratch names whose store is gone: their ``del`` statements go too.
    gone: Set[str] = set(copies)

    def tidy(stmts: List[ast.stmt]) -> List[ast.stmt]:
        out: List[ast.stmt] = []
        for stmt in stmts:
            if isinstance(stmt, ast.Delete) and gone:
                stmt = ast.Delete(targets=[target for target in stmt.targets
                                           if not (isinstance(target, ast.Name) and target.id in gone)])
                if not stmt.targets:
                    continue
            if isinstance(stmt, ast.Return) and out and isinstance(out[-1], ast.Delete) and \
                    isinstance(stmt.value, (ast.Name, ast.Constant, type(None))):
                kept = [target for target in out.pop().targets
                        if not (isinstance(target, ast.Name) and target.id in scratch)]
                if kept:
                    out.append(ast.Delete(targets=kept))
            while out and is_temporary(out[-1], movable) and reads.get(out[-1].targets[0].id) == 1:
                previous = out[-1]
                ident = previous.targets[0].id
                if not first_effect_reads(stmt, ident, modules):
                    break
                stmt = Substitute(ident, previous.value).visit(stmt)
                out.pop()
                gone.add(ident)
            # The arms after the test: a del there of a name the test took in goes too.
            for field in ("body", "orelse", "finalbody"):
                if isinstance(getattr(stmt, field, None), list):
                    setattr(stmt, field, tidy(getattr(stmt, field)))
            for handler in getattr(stmt, "handlers", []):
                handler.body = tidy(handler.body)
            if is_temporary(stmt, movable) and not reads.get(stmt.targets[0].id):
                # Never read: only the evaluation is left, if it does anything.
                gone.add(stmt.targets[0].id)
                if is_pure(stmt.value, frozen):
                    continue
                stmt = ast.Expr(value=stmt.value)
            if isinstance(stmt, ast.Delete) and out and isinstance(out[-1], ast.Delete):
                out[-1] = ast.Delete(targets=out[-1].targets + stmt.targets)
                continue
            out.append(stmt)
        return out

    return tidy(body)


def propagate_copies(body: List[ast.stmt], candidates: Set[str], once: Set[str], stores: Dict[str, int],
                     deletes: Dict[str, int]) -> Tuple[List[ast.stmt], Set[str]]:
    """Read a constant, or a name that keeps its value, in place of a scratch local that only
    copies it (``tmp_17 = 2``, ``tmp_23 = kwargs``); the copies' stores go. A name keeps its
    value when nothing binds it here (an argument, a global) or when it is one of ``once``,
    names bound only by their one store (never at entry), and nothing deletes it. Returns the
    body and the names it no longer binds."""

    def keeps_value(ident: str) -> bool:
        bound = stores.get(ident, 0)
        return not deletes.get(ident) and (bound == 0 or (bound == 1 and ident in once))

    assigned = {node.targets[0].id: node.value for node in ast.walk(ast.Module(body=body, type_ignores=[]))
                if is_temporary(node, candidates) and isinstance(node.value, (ast.Constant, ast.Name))}
    copies: Dict[str, ast.expr] = {}
    changed = True
    while changed:  # a copy of a copy (even of one whose del goes) reads the first one's value
        changed = False
        for ident, value in assigned.items():
            if ident in copies:
                continue
            if isinstance(value, ast.Name) and value.id in copies:
                copies[ident] = value = copies[value.id]
            elif isinstance(value, ast.Constant) or (value.id != ident and keeps_value(value.id)):
                copies[ident] = value
            else:
                continue
            changed = True
    for ident in copies:
        for _ in range(len(copies)):  # a copy recorded before the one it reads was known
            value = copies[ident]
            if not (isinstance(value, ast.Name) and value.id in copies):
                break
            copies[ident] = copies[value.id]
    if not copies:
        return body, set()
    replace = ReadCopies(copies)
    kept = [replace.visit(stmt) for stmt in body]
    return without_stores(kept, set(copies)), set(copies)


class ReadCopies(ast.NodeTransformer):
    """Each read of a copy becomes a read of what it copies."""

    def __init__(self, copies: Dict[str, ast.expr]) -> None:
        self.copies = copies

    def visit_Name(self, node: ast.Name) -> ast.AST:
        if isinstance(node.ctx, ast.Load) and node.id in self.copies:
            return copy.copy(self.copies[node.id])
        return node


def without_stores(stmts: List[ast.stmt], names: Set[str]) -> List[ast.stmt]:
    """The statements without ``name = ...`` for the given names, at every depth."""
    out = []
    for stmt in stmts:
        if is_temporary(stmt, names):
            continue
        for field in ("body", "orelse", "finalbody"):
            old = getattr(stmt, field, None)
            if isinstance(old, list) and old:
                # An emptied else goes; any other emptied block keeps a pass.
                setattr(stmt, field, without_stores(old, names) or ([] if field == "orelse" else [ast.Pass()]))
        for handler in getattr(stmt, "handlers", []):
            handler.body = without_stores(handler.body, names) or [ast.Pass()]
        out.append(stmt)
    return out


def name_counts(body: List[ast.stmt], context: type) -> Dict[str, int]:
    """How often each name is used in ``context`` (ast.Load, ast.Store) in ``body``."""
    counts: Dict[str, int] = {}
    for node in ast.walk(ast.Module(body=body, type_ignores=[])):
        if isinstance(node, ast.Name) and isinstance(node.ctx, context):
            counts[node.id] = counts.get(node.id, 0) + 1
    return counts


def is_temporary(stmt: ast.stmt, temps: Set[str]) -> bool:
    return (isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name)
            and stmt.targets[0].id in temps)
