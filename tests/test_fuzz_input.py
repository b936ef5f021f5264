"""Hostile input at a small count: mutated .pyc files and code objects.

`benchmarks/fuzz_input.py` runs the same loops for minutes; here a few hundred inputs of a
fixed seed go through them on every interpreter, so that a crash, a hang, a traceback or an
internal error on corrupt input shows in CI.
"""
import importlib.util
import os
import subprocess
import sys
from pathlib import Path

import pytest

if sys.platform == "emscripten":
    pytest.skip("the fuzz loop runs its inputs in worker processes, which Pyodide cannot start",
                allow_module_level=True)

FUZZER = Path(__file__).resolve().parent.parent / "benchmarks" / "fuzz_input.py"

#: Inputs per run: half mutated .pyc files for the command line, half mutated code objects.
COUNT = 80
#: Internal errors allowed: none. Each one is an exception inside framescope that it turned
#: into a reason ("internal error (IndexError: ...)"), where the input deserves a reason of
#: its own ("malformed bytecode: constant index 40 out of range (12) at offset 8").
MAX_INTERNAL_ERRORS = 0
#: Code objects mutated and decompiled in one process, and the seed they are drawn with.
IN_PROCESS_COUNT = 1000
IN_PROCESS_SEED = 7


def load_fuzzer():
    spec = importlib.util.spec_from_file_location("fuzz_input", str(FUZZER))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_mutated_inputs_are_decompiled_or_refused():
    fuzzer = load_fuzzer()
    results = fuzzer.fuzz(seed=1, count=COUNT, seconds=None, timeout=60.0)
    failures = [record for record in results if record["outcome"] not in fuzzer.GOOD + (fuzzer.INTERNAL,)]
    assert not failures, failures[:5]
    internal = [record for record in results if record["outcome"] == fuzzer.INTERNAL]
    assert len(internal) <= MAX_INTERNAL_ERRORS, internal[:5]
    assert len(results) == COUNT
    outcomes = [record["outcome"] for record in results]
    # Both ways out are exercised: some inputs are refused, some still decompile.
    assert "refused" in outcomes and ("decompiled" in outcomes or "partial" in outcomes), outcomes


def test_code_objects_mutated_in_the_same_process_are_decompiled_or_refused():
    """Code objects whose opcodes and argument bytes were changed here, their layout broken
    too as far as CPython makes such an object at all, decompiled by the process that made
    them: text or DecompilationError, never another exception, never a crash. Under
    ``PYTHONMALLOC=debug`` a write past the end of a buffer (CPython's ``co_code`` putting
    back bytecode whose inline caches run past its end) aborts the process instead of
    passing unseen."""
    env = dict(os.environ, PYTHONMALLOC="debug")
    command = [sys.executable, "-X", "dev", str(FUZZER), "--in-process", "--count", str(IN_PROCESS_COUNT),
               "--seed", str(IN_PROCESS_SEED)]
    done = subprocess.run(command, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                          universal_newlines=True, timeout=600)
    output = "stdout:\n%s\nstderr:\n%s" % (done.stdout[-4000:], done.stderr[-4000:])
    assert done.returncode >= 0, "the interpreter died (signal %d)\n%s" % (-done.returncode, output)
    assert done.returncode == 0, output  # 1: an input gave a traceback or an internal error
    assert "%d inputs" % IN_PROCESS_COUNT in done.stdout, output
