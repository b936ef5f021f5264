"""Rewrites of expressions that several passes share."""
from __future__ import annotations

import ast

#: Tests whose negation is the opposite operator: the compiler turns ``not (a in b)``
#: into ``a not in b`` and jumps on either the same way (the reversed jump is equivalent).
FLIPPED = {ast.Is: ast.IsNot, ast.IsNot: ast.Is, ast.In: ast.NotIn, ast.NotIn: ast.In}


def negate(node: ast.expr) -> ast.expr:
    """The negation of a condition tested by a jump, with as few ``not`` as possible."""
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
        return node.operand
    if isinstance(node, ast.Compare) and len(node.ops) == 1 and type(node.ops[0]) in FLIPPED:
        flipped = ast.Compare(left=node.left, ops=[FLIPPED[type(node.ops[0])]()], comparators=node.comparators)
        return flipped
    if isinstance(node, ast.BoolOp):
        # De Morgan, when it spells fewer ``not``: ``not (x is None or y)`` → ``x is not None and not y``.
        before = 1 + sum(1 for v in node.values if isinstance(v, ast.UnaryOp) and isinstance(v.op, ast.Not))
        after = sum(0 if is_negation(v) or flips(v) else 1 for v in node.values)
        if after <= before:
            dual = ast.And() if isinstance(node.op, ast.Or) else ast.Or()
            return ast.BoolOp(op=dual, values=[negate(v) for v in node.values])
    return ast.UnaryOp(op=ast.Not(), operand=node)


def flips(node: ast.expr) -> bool:
    return isinstance(node, ast.Compare) and len(node.ops) == 1 and type(node.ops[0]) in FLIPPED


def is_negation(node: ast.expr) -> bool:
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
        return True
    return isinstance(node, ast.Compare) and len(node.ops) == 1 and isinstance(node.ops[0], (ast.IsNot, ast.NotIn))
