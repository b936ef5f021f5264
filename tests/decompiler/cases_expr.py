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
]
