"""Tidying: a temporary read once, by the next statement, put back in its place."""
import ast
from typing import Dict, Iterator, List, Optional, Set

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


def first_effect_reads(stmt: ast.stmt, ident: str) -> bool:
    """Whether ``stmt`` reads ``ident`` before anything it evaluates has an effect."""
    parts = statement_parts(stmt)
    if parts is None:
        return False
    for part in parts:
        for node in evaluation(part):
            if not isinstance(node, ORDERED):
                return False
            if isinstance(node, ast.Name) and node.id == ident and isinstance(node.ctx, ast.Load):
                return True
            if not isinstance(node, INERT) and not isinstance(node, (ast.operator, ast.unaryop, ast.cmpop)):
                return False
    return False


class Substitute(ast.NodeTransformer):
    """Put an expression where a temporary is read (``*t`` of a ``t = [*x]`` becomes ``*x``)."""

    def __init__(self, ident: str, value: ast.expr) -> None:
        self.ident = ident
        self.value = value

    def visit_Name(self, node: ast.Name) -> ast.AST:
        return self.value if node.id == self.ident else node

    def visit_Starred(self, node: ast.Starred) -> ast.AST:
        value = self.value
        if (isinstance(node.value, ast.Name) and node.value.id == self.ident and isinstance(value, ast.List)
                and len(value.elts) == 1 and isinstance(value.elts[0], ast.Starred)):
            return value.elts[0]
        self.generic_visit(node)
        return node


def inline_temporaries(body: List[ast.stmt], temps: Set[str], frozen: Set[str] = frozenset()) -> List[ast.stmt]:
    """Drop ``t = value`` where the temporary ``t`` is read once, by the next statement, before
    that statement does anything else: the value is evaluated there instead, at the same point.
    A temporary never read keeps only its value's evaluation."""
    reads: Dict[str, int] = {}
    for node in ast.walk(ast.Module(body=body, type_ignores=[])):
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load) and node.id in temps:
            reads[node.id] = reads.get(node.id, 0) + 1

    def tidy(stmts: List[ast.stmt]) -> List[ast.stmt]:
        out: List[ast.stmt] = []
        for stmt in stmts:
            for field in ("body", "orelse", "finalbody"):
                if isinstance(getattr(stmt, field, None), list):
                    setattr(stmt, field, tidy(getattr(stmt, field)))
            for handler in getattr(stmt, "handlers", []):
                handler.body = tidy(handler.body)
            while out and is_temporary(out[-1], temps) and reads.get(out[-1].targets[0].id) == 1:
                previous = out[-1]
                ident = previous.targets[0].id
                if not first_effect_reads(stmt, ident):
                    break
                stmt = Substitute(ident, previous.value).visit(stmt)
                out.pop()
            if is_temporary(stmt, temps) and not reads.get(stmt.targets[0].id):
                # Never read: only the evaluation is left, if it does anything.
                if is_pure(stmt.value, frozen):
                    continue
                stmt = ast.Expr(value=stmt.value)
            out.append(stmt)
        return out

    return tidy(body)


def is_temporary(stmt: ast.stmt, temps: Set[str]) -> bool:
    return (isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name)
            and stmt.targets[0].id in temps)
