"""Round-trip cases for constructs whose bytecode 3.14 lays out its own way."""
from typing import List

from tests.decompiler.cases import Case

CASES: List[Case] = [
    # 3.14 threads the jump of the first operand straight to the last one.
    Case("py314_and_or_value", "def f(d, m):\n    return d[m and 'a' or 'b']",
         ["({'a': 1, 'b': 2}, 1)", "({'a': 1, 'b': 2}, 0)", "({'': 1, 'a': 3, 'b': 2}, '')"]),
    Case("py314_or_and_value", "def f(m, n):\n    x = (m or n) and 'b'\n    return x",
         ["(1, 0)", "(0, 0)", "(0, 2)", "('', [])"]),
]
