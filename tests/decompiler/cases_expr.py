"""Round-trip cases for statement- and expression-level constructs (asserts, assignments, names)."""
from typing import List

from tests.decompiler.cases import Case

CASES: List[Case] = [
    Case("expr_assert_false_message", "def f(x):\n    if x:\n        return 1\n    assert False, 'bad %s' % x",
         ["(1,)", "(0,)"]),
    Case("expr_assert_false_bare", "def f(x):\n    for y in x:\n        if y:\n            return y\n    assert False",
         ["([0, 2],)", "([0],)"]),
    Case("expr_assert_after_shared_raise", "def f(s):\n    assert isinstance(s, int)\n    assert 0 <= s < 24\n"
         "    return s", ["(3,)", "(30,)", "('a',)"]),
    Case("expr_unpack_then_chain", "def f(g):\n    i, j, k = x = g()\n    return i, j, k, x", ["(lambda: (1, 2, 3),)"]),
    Case("expr_chain_then_unpack", "def f(h):\n    y = z = (m, *n) = h\n    p = (q, r) = h[:2]\n"
         "    return y, z, m, n, p, q, r", ["([1, 2, 3],)", "((4, 5),)"]),
]
