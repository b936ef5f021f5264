"""The clean-up pass alone: compiler shapes in a recovered tree turned back into statements."""
import ast

from framescope.decompiler.emit.cleanup import clean_body, strip_return_none
from framescope.decompiler.emit.unparse import unparse
from framescope.decompiler.simulate.state import AssertionErrorName


def text(body):
    return unparse(ast.Module(body=body, type_ignores=[]))


def statements(source: str):
    return ast.parse(source).body


def test_the_implicit_return_none_is_dropped():
    body = statements("x = 1\nreturn None\n")
    assert text(strip_return_none(body)) == "x = 1"
    assert text(strip_return_none(statements("return 1\n"))) == "return 1"


def test_a_raise_of_the_compilers_assertion_error_is_an_assert():
    # The simulator marks the AssertionError an assert loads (not a global of that name).
    raise_ = ast.Raise(exc=ast.Call(func=AssertionErrorName(id="AssertionError", ctx=ast.Load()),
                                    args=[ast.Constant(value="m")], keywords=[]), cause=None)
    guard = ast.If(test=ast.UnaryOp(op=ast.Not(), operand=ast.Name(id="x", ctx=ast.Load())),
                   body=[raise_], orelse=[])
    assert text(clean_body([guard])) == "assert x, 'm'"


def test_a_users_own_raise_stays_a_raise():
    body = statements("if not x:\n    raise AssertionError('m')\n")
    assert text(clean_body(body)) == "if not x:\n    raise AssertionError('m')"


def test_a_trailing_continue_of_a_loop_is_dropped_inside_nested_blocks():
    body = statements("for a in b:\n    if a:\n        f(a)\n    continue\n")
    assert text(clean_body(body)) == "for a in b:\n    if a:\n        f(a)"
