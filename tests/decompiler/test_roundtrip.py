"""Round trips: decompile, recompile to equivalent bytecode, run both and compare results."""
import sys

import pytest

from framescope import DecompilationError, decompile
from tests.decompiler.cases import Case, all_cases

PY = sys.version_info[:2]

#: Cases the decompiler does not handle yet on some versions: name → (versions, reason).
KNOWN_FAILURES = {
    # 3.14: the code after a with statement left by returns from two nested loops.
    "exits_returns_from_with_round_nested_loops": ([(3, 14)], "returns from a with statement round two loops"),
    # 3.14: a test that keeps its value (x or ...) before a chained comparison, as an operand of and.
    "expr_chained_comparisons_in_and_of_ors": ([(3, 14)], "a chained comparison after a kept test, in and"),
    "expr_chained_comparison_in_or_operand_of_and": ([(3, 14)], "a chained comparison after a kept test, in and"),
}


def expected_failure(case: Case):
    versions, reason = KNOWN_FAILURES.get(case.name, ((), ""))
    if PY in versions:
        return pytest.mark.xfail(strict=True, reason=reason, raises=DecompilationError)
    return []


def load(source: str) -> dict:
    namespace: dict = {"__name__": "roundtrip_case"}
    exec(compile(source, "<case>", "exec"), namespace)
    return namespace


def outcome(func, args):
    try:
        return ("value", func(*args))
    except Exception as err:  # the same exception type counts as the same outcome
        return ("raises", type(err))


@pytest.mark.parametrize(
    "case", [pytest.param(c, id=c.name, marks=expected_failure(c)) for c in all_cases() if PY >= c.since])
def test_round_trip(case: Case) -> None:
    original = load(case.source)
    source = decompile(original["f"], machine=False)  # raises DecompilationError unless equivalent
    compile(source, "<decompiled>", "exec")
    rebuilt = dict(original)
    exec(compile(source, "<decompiled>", "exec"), rebuilt)
    assert rebuilt["f"] is not original["f"]
    for call in case.calls:  # fresh arguments for each run: functions may mutate them
        expected = outcome(original["f"], eval(call, original))
        assert outcome(rebuilt["f"], eval(call, rebuilt)) == expected, call


def test_decompiled_source_is_a_def_with_the_signature() -> None:
    ns = load("def f(a, /, b=2, *args, c, d=4, **kw):\n    return a\n")
    assert decompile(ns["f"]).splitlines()[0] == "def f(a, /, b=2, *args, c, d=4, **kw):"
