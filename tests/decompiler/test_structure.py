"""The structure pass alone: the statements recovered from a function's graph, before clean-up."""
import ast

from framescope.decompiler.function import body_of


def kinds(source: str):
    """The statement kinds of a function's raw body (its trailing ``return None`` included)."""
    code = compile(source, "<t>", "exec").co_consts[0]
    return [type(stmt).__name__ for stmt in body_of(code)]


def test_branches_become_if_statements():
    body = kinds("def f(a):\n    if a:\n        a = 1\n    elif a is None:\n        a = 2\n    else:\n        a = 3\n"
                 "    return a\n")
    assert body == ["If", "Return"]


def test_loops_keep_their_kind():
    assert kinds("def f(a):\n    for x in a:\n        a = x\n    return a\n") == ["For", "Return"]
    assert kinds("def f(a):\n    while a:\n        a = a.b\n    return a\n") == ["While", "Return"]


def test_protected_code_becomes_try_and_with():
    assert kinds("def f(a):\n    try:\n        a()\n    except E:\n        pass\n")[0] == "Try"
    assert kinds("def f(a):\n    with a:\n        a()\n")[0] == "With"


def test_an_elif_chain_nests_in_orelse():
    code = compile("def f(a):\n    if a == 1:\n        b = 1\n    elif a == 2:\n        b = 2\n    return b\n",
                   "<t>", "exec").co_consts[0]
    first = body_of(code)[0]
    assert isinstance(first, ast.If) and len(first.orelse) == 1 and isinstance(first.orelse[0], ast.If)
