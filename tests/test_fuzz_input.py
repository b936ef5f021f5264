"""Hostile input at a small count: mutated .pyc files and code objects.

`benchmarks/fuzz_input.py` runs the same loop for minutes; here a few dozen inputs of a fixed
seed go through it on every interpreter, so that a crash, a hang or a traceback on corrupt
input shows in CI.
"""
import importlib.util
import sys
from pathlib import Path

import pytest

if sys.platform == "emscripten":
    pytest.skip("the fuzz loop runs its inputs in worker processes, which Pyodide cannot start",
                allow_module_level=True)

FUZZER = Path(__file__).resolve().parent.parent / "benchmarks" / "fuzz_input.py"

#: Inputs per run: half mutated .pyc files for the command line, half mutated code objects.
COUNT = 80


def load_fuzzer():
    spec = importlib.util.spec_from_file_location("fuzz_input", str(FUZZER))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_mutated_inputs_are_decompiled_or_refused():
    fuzzer = load_fuzzer()
    results = fuzzer.fuzz(seed=1, count=COUNT, seconds=None, timeout=60.0)
    failures = [record for record in results if record["outcome"] not in fuzzer.GOOD]
    assert not failures, failures[:5]
    assert len(results) == COUNT
    outcomes = [record["outcome"] for record in results]
    # Both ways out are exercised: some inputs are refused, some still decompile.
    assert "refused" in outcomes and ("decompiled" in outcomes or "partial" in outcomes), outcomes
