"""Round-trip cases for loops and irregular control flow."""
from typing import List

from tests.decompiler.cases import Case

CASES: List[Case] = [
    # A for loop whose body always returns never jumps back to its header.
    Case("loops_for_always_returns",
         "def f(d):\n    for key in list(d):\n        value = d[key]\n        del d[key]\n        return key, value\n"
         "    raise KeyError",
         ["({1: 2, 3: 4},)", "({},)"]),
    Case("loops_for_always_breaks",
         "def f(xs):\n    r = None\n    for x in xs:\n        r = x * 2\n        break\n    else:\n        r = -1\n"
         "    return r",
         ["([3, 4],)", "([],)"]),
    Case("loops_for_returns_or_raises",
         "def f(xs):\n    for x in xs:\n        if x:\n            return x\n        raise ValueError(x)\n    return 'empty'",
         ["([1],)", "([0],)", "([],)"]),
    # ``break`` after statements, to code after the loop that returns.
    Case("loops_break_to_returning_tail",
         "def f(xs):\n    r = None\n    for x in xs:\n        if x:\n            r = x * 2\n            break\n"
         "    else:\n        r = -1\n    return r",
         ["([0, 3],)", "([0],)", "([],)"]),
    # The values of ``a, b = x, y`` unpacked again: the swap keeps both on the stack.
    Case("loops_nested_parallel_unpack",
         "def f(x, y, z):\n    (a, b), (c, d) = x, y\n    e, (g, h) = z, x\n    (i, j), k = y, z\n"
         "    return a, b, c, d, e, g, h, i, j, k",
         ["((1, 2), (3, 4), 5)"]),
    # 3.10+ rotate ``while a or b:``: the test is repeated at the end of the body.
    Case("loops_while_compound_test",
         "def f(a, b):\n    r = []\n    while a or b:\n        if a:\n            x = a.pop()\n        else:\n"
         "            x = b.pop()\n        r.append(x)\n    return r",
         ["([1, 2], [3])", "([], [])"]),
    Case("loops_while_compound_test_in_for",
         "def f(rows):\n    r = []\n    for xs, ys in rows:\n        if xs is None:\n            r.append(ys)\n"
         "            continue\n        while xs and ys or not r:\n            r.append((xs.pop() if xs else 0, ys.pop()))\n"
         "    return r",
         ["([([1, 2], [3, 4, 5]), (None, 7)],)", "([([], [1])],)"]),
    # A rotated test whose operands branch too (``x[:n or None]``); a test part-way
    # through it must not be taken for the loop's.
    Case("loops_while_test_with_operand_branch",
         "def f(a, b):\n    post = 0\n    while a[:post or None] and b[:post or None] and a[post-1] == b[post-1]:\n"
         "        post -= 1\n    return post",
         ["('abc', 'xbc')", "('abc', 'abc')", "('', 'a')"]),
]
