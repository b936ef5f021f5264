"""Chained comparisons inside ``and``/``or``: every combination, decompiled and compared.

Builds boolean expressions from a few operands (a name, ``x is None``, chains of two and three
comparisons, a chain of calls) joined by ``and``/``or``/``not`` two levels deep, and puts each
in six places: a returned value, an assigned value, an ``if`` test, a ``while`` test, a
comprehension's filter and a conditional expression's test. A fixed-seed sample of the
expressions is decompiled, recompiled, compared instruction for instruction with its own
source (`identical.first_difference`) and run on a few argument sets.

    PYTHONPATH=src:. python benchmarks/chained_comparisons.py [--show=refused|equivalent|wrong]

Prints one line: the interpreter, then how many functions were identical, equivalent,
refused and wrong (run under Pyodide with benchmarks/pyodide_run.mjs for 3.14).
"""
import itertools
import os
import random
import sys
import warnings

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import identical  # noqa: E402
from framescope import DecompilationError, decompile  # noqa: E402

OPERANDS = ["y", "a <= x <= b", "x is None", "a < x < b < c", "g(x) == 1 != c"]
PLACES = [
    "    return {e}",
    "    v = {e}\n    return v",
    "    if {e}:\n        return 1\n    return 2",
    "    n = 0\n    while {e}:\n        x = x + 3\n        n += 1\n        if n > 5:\n            return n\n    return x",
    "    return [z for z in [x, a, b] if {e}]",
    "    return 1 if {e} else 2",
]
CALLS = ["(1, 0, 5, 9, 0)", "(7, 0, 5, 9, None)", "(None, 0, 5, 9, 1)", "(3, 3, 2, 1, [])", "(4, 1, 8, 9, 'y')"]
SAMPLE = 150


def expressions(depth: int):
    if depth == 0:
        return list(OPERANDS)
    smaller = expressions(depth - 1)
    found = list(smaller)
    for left, right in itertools.product(smaller[:6], smaller[:6]):
        found += ["(%s or %s)" % (left, right), "(%s and %s)" % (left, right)]
    return found + ["(not %s)" % e for e in smaller[:4]]


def outcome(func, call):
    try:
        return "value", func(*eval(call))
    except Exception as err:  # the same exception type counts as the same outcome
        return "raises", type(err)


def judge(source: str):
    """identical / equivalent / refused / wrong, and the decompiled text or the reason."""
    namespace = {"g": lambda v: v}
    exec(compile(source, "<case>", "exec"), namespace)
    try:
        text = decompile(namespace["f"], machine=False)
    except DecompilationError as err:
        return ("internal" if err.internal else "refused"), str(err)
    rebuilt = {"g": namespace["g"]}
    exec(compile(text, "<decompiled>", "exec"), rebuilt)
    if any(outcome(namespace["f"], c) != outcome(rebuilt["f"], c) for c in CALLS):
        return "wrong", text
    same = identical.first_difference(namespace["f"].__code__, rebuilt["f"].__code__) is None
    return ("identical" if same else "equivalent"), text


def main() -> None:
    warnings.simplefilter("ignore")
    show = next((a.split("=", 1)[1] for a in sys.argv[1:] if a.startswith("--show=")), None)
    random.seed(0)
    pool = expressions(2)
    random.shuffle(pool)
    counts = dict.fromkeys(("identical", "equivalent", "refused", "internal", "wrong"), 0)
    for expr in pool[:SAMPLE]:
        for place in PLACES:
            source = "def f(x, a, b, c, y):\n" + place.format(e=expr)
            verdict, detail = judge(source)
            counts[verdict] += 1
            if verdict == show:
                print("====", verdict, "\n" + source, "\n-> " + detail.strip())
    print(sys.version.split()[0], "functions=%d" % sum(counts.values()),
          " ".join("%s=%d" % item for item in counts.items()))


if __name__ == "__main__":
    main()
