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
]
