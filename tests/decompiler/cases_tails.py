"""Round-trip cases for code after an ``if`` with an arm that returns or raises (walked once)."""
from typing import List

from tests.decompiler.cases import Case

CASES: List[Case] = [
    Case("tail_elif_return_then_tail",
         "def f(a, other):\n    if isinstance(other, int):\n        other = other + 1\n"
         "    elif isinstance(other, str) and a:\n        pass\n    else:\n        return None\n"
         "    value = len(str(other))\n    return value, other",
         ["(1, 3)", "(1, 'ab')", "(0, 'ab')", "(1, 2.5)"]),
    Case("tail_nested_guard_raise_then_tail",
         "def f(a, b):\n    if a is None:\n        a = 0\n    else:\n        if b < 0:\n"
         "            raise ValueError(b)\n        a = a * b\n    r = [a]\n    if b == 2:\n        r.append(b)\n"
         "    return r",
         ["(None, 1)", "(3, 2)", "(3, -1)", "(None, 2)"]),
    Case("tail_chain_of_guards",
         "def f(a, b):\n    r = []\n    if a == 0:\n        r.append(0)\n    elif b == 0:\n        return -1\n"
         "    else:\n        r.append(b)\n    if a == 1:\n        r.append(1)\n    elif b == 1:\n"
         "        raise KeyError(b)\n    else:\n        r.append(b)\n    x = len(r)\n    return x, r",
         ["(0, 0)", "(1, 0)", "(2, 0)", "(0, 1)", "(1, 1)", "(2, 3)"]),
    # 3.11+ gives each arm of the last test its own copy of the implicit ``return None``.
    Case("tail_guard_return_ends_nested_if",
         "def f(s, log):\n    if not s:\n        assert log is not None\n        if log.append(1) is None:\n"
         "            return",
         ["(0, [])", "(1, [])", "(0, None)"]),
]
