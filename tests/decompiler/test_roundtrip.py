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


#: Cases every call of which raises on purpose, from inside the body of ``f``; every other
#: case returns normally on at least one call, so that its results are compared.
RAISING = {
    "raise_from", "expr_call_bytes_key_dict", "loop_try_nested_for_then_raise",
    "blockstack_while_true_try_else_guarded_raise", "exc_star_finally_only_clause_reraises",
    "exc_star_name_in_closure",
}


def load(source: str) -> dict:
    namespace: dict = {"__name__": "roundtrip_case"}
    exec(compile(source, "<case>", "exec"), namespace)
    return namespace


def arguments(*args, **kwargs):
    return args, kwargs


def outcome(func, call: str, namespace: dict) -> tuple:
    """("value", result), or ("raises", exception type, whether it came from inside the body
    of ``func`` rather than from binding the arguments)."""
    args, kwargs = eval("_arguments" + call, namespace, {"_arguments": arguments})
    try:
        return ("value", func(*args, **kwargs))
    except Exception as err:  # the same exception type counts as the same outcome
        return ("raises", type(err), ran_in(func, err.__traceback__))


def ran_in(func, traceback) -> bool:
    while traceback is not None:
        if traceback.tb_frame.f_code is func.__code__:
            return True
        traceback = traceback.tb_next
    return False


def check_original(case: Case, outcomes: list) -> None:
    """Each call got into the body of ``f``; one returned, unless the case raises by design."""
    for call, result in zip(case.calls, outcomes):
        assert result[0] == "value" or result[2], "%s raised %s before its body ran" % (call, result[1].__name__)
    if case.name not in RAISING:
        assert any(result[0] == "value" for result in outcomes), "every call raised: %s" % outcomes


@pytest.mark.parametrize(
    "case", [pytest.param(c, id=c.name, marks=expected_failure(c)) for c in all_cases() if PY >= c.since])
def test_round_trip(case: Case) -> None:
    original = load(case.source)
    source = decompile(original["f"], machine=False)  # raises DecompilationError unless equivalent
    compile(source, "<decompiled>", "exec")
    rebuilt = dict(original)
    exec(compile(source, "<decompiled>", "exec"), rebuilt)
    assert rebuilt["f"] is not original["f"]
    outcomes = []
    for call in case.calls:  # fresh arguments for each run: functions may mutate them
        outcomes.append(outcome(original["f"], call, original))
        assert outcome(rebuilt["f"], call, rebuilt) == outcomes[-1], call
    check_original(case, outcomes)


def test_the_cases_that_raise_by_design_exist() -> None:
    assert RAISING <= {case.name for case in all_cases()}


def test_decompiled_source_is_a_def_with_the_signature() -> None:
    ns = load("def f(a, /, b=2, *args, c, d=4, **kw):\n    return a\n")
    assert decompile(ns["f"]).splitlines()[0] == "def f(a, /, b=2, *args, c, d=4, **kw):"
