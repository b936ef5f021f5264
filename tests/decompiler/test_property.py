"""Property: any valid program either round-trips equivalently or raises DecompilationError.

Programs come from hypothesmith (random syntax trees and random grammar derivations);
`benchmarks/fuzz_roundtrip.py` runs the same check on tens of thousands of them.
"""
import sys
from collections import Counter

import pytest

if sys.platform == "emscripten":  # hypothesmith needs libcst, which has no WebAssembly build
    pytest.skip("hypothesmith cannot be installed under Pyodide", allow_module_level=True)

import hypothesmith  # noqa: E402
from hypothesis import HealthCheck, Phase, given, settings  # noqa: E402

from framescope.decompiler.verify.equivalence import compare_code, recompile_function  # noqa: E402
from tests.decompiler.roundtrip_check import one_round_trip, round_trip  # noqa: E402

# Generated programs are full of `1()` and `"a" is 1`, which CPython warns about.
pytestmark = pytest.mark.filterwarnings("ignore::SyntaxWarning")

#: Programs drawn from each strategy in one test run.
PROGRAMS = 100


def checked_outcomes(strategy) -> Counter:
    """Draw PROGRAMS programs; fail on any wrong round trip; return the outcomes' counts."""
    outcomes: Counter = Counter()

    # No target phase: hypothesmith's targets make hypothesis hill-climb towards ever larger
    # programs, which on some interpreters runs for tens of minutes.
    @settings(max_examples=PROGRAMS, suppress_health_check=list(HealthCheck), deadline=None,
              database=None, phases=(Phase.generate, Phase.shrink))
    @given(strategy)
    def one_program(source):
        for result in round_trip(source):
            assert result.outcome != "wrong", "%s: %s" % (result.name, result.detail)
            outcomes[result.outcome] += 1
        outcomes["programs"] += 1

    one_program()
    return outcomes


def test_syntax_tree_programs_round_trip_or_refuse():
    outcomes = checked_outcomes(hypothesmith.from_node())
    # Hypothesis stops drawing early when too many draws fail its own checks (it happens
    # on 3.8 now and then): most of them must have been programs.
    assert outcomes["programs"] >= PROGRAMS // 2, outcomes
    # Not vacuous: a good share round-trips (3.8 refuses about half of these module bodies).
    assert outcomes["equivalent"] >= PROGRAMS // 4, outcomes


def test_grammar_programs_round_trip_or_refuse():
    outcomes = checked_outcomes(hypothesmith.from_grammar())
    assert outcomes["programs"] >= PROGRAMS // 2, outcomes
    assert outcomes["equivalent"] >= PROGRAMS // 4, outcomes


def test_the_check_can_fail():
    """The round trip's check rejects a wrong result: a decompiler that drops a statement."""
    source = "def f(a):\n    a.x()\n    return a\n"
    code = compile(source, "<t>", "exec").co_consts[0]
    wrong = "def f(a):\n    return a\n"
    assert compare_code(code, recompile_function(wrong, code)) is not None
    assert one_round_trip(code).outcome == "equivalent"


def test_a_wrong_decompilation_is_reported(monkeypatch):
    import tests.decompiler.roundtrip_check as check

    code = compile("def f(a):\n    a.x()\n    return a\n", "<t>", "exec").co_consts[0]
    monkeypatch.setattr(check, "decompile", lambda code, machine: "def f(a):\n    return a")
    result = check.one_round_trip(code)
    assert result.outcome == "wrong" and "return a" in result.detail
