"""``same_tree(a, b)``: whether two syntax trees print alike under ``ast.dump``.

The structurer compares whole statements (the tails of two arms, two store
targets).  ``ast.dump(a) == ast.dump(b)`` formats both trees completely before
comparing; walking them side by side gives the same answer and stops at the
first difference, which is where most comparisons end.
"""
import ast

from framescope.decompiler.frontend import versions

__all__ = ["same_tree"]

# Where ``ast.dump`` leaves out fields that are None or empty lists
# (versions.AST_DUMP_OMITS_EMPTY), a missing field, None and [] print alike, except
# a Constant's or MatchSingleton's value.
_KEEPS_NONE = (ast.Constant, ast.MatchSingleton) if hasattr(ast, "MatchSingleton") else (ast.Constant,)

# Field values whose repr is equal exactly when the values are (of one of these types).
_PLAIN = (str, int, bytes, type(None))

_MISSING = object()


def same_tree(a: ast.AST, b: ast.AST) -> bool:
    """``ast.dump(a) == ast.dump(b)``, without building the strings."""
    if not isinstance(a, ast.AST) or not isinstance(b, ast.AST):
        raise TypeError("expected AST, got %r" % (a if not isinstance(a, ast.AST) else b).__class__.__name__)
    return _same(a, b)


def _same(a: object, b: object) -> bool:
    if isinstance(a, ast.AST):
        if type(a) is not type(b):
            # Another class can still print alike (a subclass of the same name): ask ast.dump.
            return isinstance(b, ast.AST) and a.__class__.__name__ == b.__class__.__name__ \
                and ast.dump(a) == ast.dump(b)
        keeps_empty = not versions.AST_DUMP_OMITS_EMPTY or isinstance(a, _KEEPS_NONE)
        for field in a._fields:
            x = getattr(a, field, _MISSING)
            y = getattr(b, field, _MISSING)
            if x is y:
                continue
            left, right = _omitted(a, field, x, keeps_empty), _omitted(b, field, y, keeps_empty)
            if left or right:
                if left != right:
                    return False
                continue
            if not _same(x, y):
                return False
        return True
    if isinstance(a, list):
        if not isinstance(b, list) or len(a) != len(b):
            return False
        for x, y in zip(a, b):
            if x is not y and not _same(x, y):
                return False
        return True
    if isinstance(b, (ast.AST, list)):
        return False
    if type(a) is type(b) and isinstance(a, _PLAIN):
        return a == b
    return repr(a) == repr(b)


def _omitted(node: ast.AST, field: str, value: object, keeps_empty: bool) -> bool:
    """Whether ``ast.dump`` leaves the field out."""
    if value is _MISSING:
        return True
    if not versions.AST_DUMP_OMITS_EMPTY:
        return False
    if value is None and getattr(type(node), field, ...) is None:
        return True
    return not keeps_empty and (value is None or value == [])
