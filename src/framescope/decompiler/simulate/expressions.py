"""Rewrites of expressions that several passes share."""
from __future__ import annotations

import ast

from framescope.decompiler.simulate import marks

#: Tests whose negation is the opposite operator: the compiler turns ``not (a in b)``
#: into ``a not in b`` and jumps on either the same way (the reversed jump is equivalent).
FLIPPED = {ast.Is: ast.IsNot, ast.IsNot: ast.Is, ast.In: ast.NotIn, ast.NotIn: ast.In}


def pinned_compare(left: ast.expr, op: ast.cmpop, right: ast.expr) -> ast.Compare:
    """``left op right`` for an ``is``/``in`` instruction whose argument is ``op``."""
    node = ast.Compare(left=left, ops=[op], comparators=[right])
    marks.mark(node, marks.PINNED, type(op))
    return node


def negate(node: ast.expr) -> ast.expr:
    """The negation of a condition tested by a jump, with as few ``not`` as possible.

    Jumps do not care how a test is negated (``not (a or b)`` and ``not a and not b``
    jump alike), but an ``is``/``in`` test read from its instruction (`is_pinned`) keeps
    its operator where it can: the flipped one recompiles to the other argument.
    """
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
        return node.operand
    if flips(node):
        # A pinned test flips only here, as a last resort: no ``not`` can stay on it.  The
        # flipped one remembers its instruction, so that negating it again puts that back.
        flipped = ast.Compare(left=node.left, ops=[FLIPPED[type(node.ops[0])]()], comparators=node.comparators)
        pinned = marks.marked(node, marks.PINNED, None)
        if pinned is not None:
            marks.mark(flipped, marks.PINNED, pinned)
        return flipped
    if isinstance(node, ast.BoolOp) and not any(is_pinned(v) for v in node.values):
        # De Morgan, when it spells fewer ``not``: ``not (x is None or y)`` → ``x is not None and not y``.
        before = 1 + sum(1 for v in node.values if isinstance(v, ast.UnaryOp) and isinstance(v.op, ast.Not))
        after = sum(0 if is_negation(v) or flips(v) else 1 for v in node.values)
        if after <= before or any(is_misflipped(v) for v in node.values):
            dual = ast.And() if isinstance(node.op, ast.Or) else ast.Or()
            return ast.BoolOp(op=dual, values=[negate(v) for v in node.values])
    return ast.UnaryOp(op=ast.Not(), operand=node)


def negate_last(op: ast.boolop, values: list, last: ast.expr) -> ast.expr:
    """``values <op> not last`` (``a or not b``) for jumps, keeping a pinned ``last`` as it is:
    ``not (not a and b)`` jumps as ``a or not b`` does."""
    if not is_pinned(last) or any(is_pinned(v) for v in values):
        return ast.BoolOp(op=op, values=list(values) + [negate(last)])
    dual = ast.And() if isinstance(op, ast.Or) else ast.Or()
    return ast.UnaryOp(op=ast.Not(), operand=ast.BoolOp(op=dual, values=[negate(v) for v in values] + [last]))


def is_pinned(node: ast.expr) -> bool:
    """Whether ``node`` is an ``is``/``in`` test with its instruction's operator, which
    negating it would flip (a ``not`` next to it folds into the other operator)."""
    return flips(node) and marks.marked(node, marks.PINNED, None) is type(node.ops[0])


def is_misflipped(node: ast.expr) -> bool:
    """Whether ``node`` is a pinned test that was flipped: negating it puts its operator back."""
    pinned = marks.marked(node, marks.PINNED, None)
    return pinned is not None and flips(node) and pinned is not type(node.ops[0])


def flips(node: ast.expr) -> bool:
    return isinstance(node, ast.Compare) and len(node.ops) == 1 and type(node.ops[0]) in FLIPPED


def is_negation(node: ast.expr) -> bool:
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
        return True
    return isinstance(node, ast.Compare) and len(node.ops) == 1 and isinstance(node.ops[0], (ast.IsNot, ast.NotIn))
