"""Hostile input to ``framescope decompile`` and ``framescope.decompile``: mutated ``.pyc``
files and code objects with mutated bytecode, for a fixed time. Prints one table.

    python3 benchmarks/fuzz_input.py --seconds 600          # this interpreter, seed 0
    python3 benchmarks/fuzz_input.py --count 200 --seed 3

Inputs come from the standard library of the running interpreter (its small modules,
compiled here): a ``.pyc`` with bytes flipped, cut short, inserted or repeated (the header
too, one time in ten), and each code object of those modules with its bytecode so mutated.
Each must give, for the command line, exit 0 or 1 with output, or exit 2 with one line on
stderr; for ``framescope.decompile``, text or DecompilationError (TypeError only as the
documented refusal of an object that holds no bytecode). A reason that is an internal
error (an exception inside framescope, turned into DecompilationError) is counted apart:
the input found a gap in the checks, not a reason to refuse. Anything else is a failure:
an exception out of the command (a traceback), no answer within ``--timeout`` seconds (a
hang), or the interpreter dying (a crash). Inputs run in a worker process that is started
again after a crash; the input it was on is the crash's.

``--in-process`` mutates code objects and decompiles them in this one process instead,
with their layout broken too (an opcode replaced by one with other inline caches), as far
as CPython itself can make such a code object: run under ``PYTHONMALLOC=debug``, a write
past the end of the bytecode while framescope reads it aborts the interpreter.

    PYTHONMALLOC=debug python3 -X dev benchmarks/fuzz_input.py --in-process --count 300 --seed 7

tests/test_fuzz_input.py runs a small count of both loops on every interpreter.
"""
from __future__ import annotations

import argparse
import contextlib
import dis
import functools
import importlib.util
import io
import json
import marshal
import os
import random
import signal
import subprocess
import sys
import tempfile
import time
import types
from pathlib import Path
from typing import Dict, Iterator, List, Optional, Tuple

REPO = Path(__file__).resolve().parent.parent

#: The kinds of input tried: mutated .pyc files, mutated code objects (FUZZ_KINDS=pyc or
#: code restricts them to one).
KINDS = tuple(os.environ.get("FUZZ_KINDS", "pyc,code").split(","))

#: Outcomes that are fine; anything else but INTERNAL is a failure.
GOOD = ("decompiled", "partial", "refused")
#: A refusal whose reason is an exception inside framescope ("internal error (IndexError: ...)").
INTERNAL = "internal error"
#: How such a reason reads, on the command line's stderr or in DecompilationError.
INTERNAL_MARK = "internal error ("
#: How the one documented TypeError of ``framescope.decompile`` starts (an object without bytecode).
TYPE_ERROR_REFUSAL = "framescope.decompile()"


def corpus(limit_bytes: int = 12000) -> List[Tuple[str, bytes]]:
    """(name, .pyc bytes) of the standard library's small modules, compiled here, sorted."""
    stdlib = Path(os.path.dirname(os.__file__))
    found = []
    for path in sorted(stdlib.glob("*.py")):
        try:
            source = path.read_bytes()
            if len(source) > limit_bytes:
                continue
            code = compile(source, str(path), "exec", dont_inherit=True)
        except (SyntaxError, ValueError, OSError):
            continue
        header = importlib.util.MAGIC_NUMBER + b"\x00" * 12
        found.append((path.name, header + marshal.dumps(code)))
    return found


def mutate(data: bytes, rng: random.Random) -> bytes:
    """One mutation of a .pyc: its header kept nine times in ten."""
    start = 0 if rng.random() < 0.1 else 16
    out = bytearray(data)
    kind = rng.choice(("flip", "flip", "cut", "insert", "repeat"))
    if len(out) <= start + 1:
        return bytes(out)
    if kind == "flip":
        for _ in range(rng.randint(1, 8)):
            out[rng.randrange(start, len(out))] ^= 1 << rng.randrange(8)
    elif kind == "cut":
        del out[rng.randrange(start, len(out)):]
    elif kind == "insert":
        at = rng.randrange(start, len(out))
        out[at:at] = bytes(rng.randrange(256) for _ in range(rng.randint(1, 16)))
    else:
        at = rng.randrange(start, len(out))
        out[at:at] = out[at:at + rng.randint(1, 64)] * rng.randint(2, 4)
    return bytes(out)


def code_objects(code: types.CodeType) -> Iterator[types.CodeType]:
    yield code
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            yield from code_objects(const)


def mutated_code(code: types.CodeType, rng: random.Random, attempts: int = 20) -> types.CodeType:
    """``code`` with some opcodes and arguments replaced. An opcode is only replaced by a
    known one with as many inline caches (3.11+): CPython trusts a code object's layout
    and writes past it when creating one that breaks it (3.12+), before framescope could
    look. Corrupt layouts are what the .pyc inputs bring, which framescope checks before
    CPython reads them."""
    from framescope.decompiler.frontend.bytecode import inline_caches

    raw = bytearray(code.co_code)
    starts = instruction_starts(bytes(raw))
    for _ in range(rng.randint(1, 4)):
        if not starts:
            break
        at = rng.choice(starts)
        if rng.random() < 0.5:
            raw[at + 1] = rng.randrange(256)
        else:
            same = [op for op in replacement_opcodes() if inline_caches(op) == inline_caches(raw[at])]
            raw[at] = rng.choice(same)
    try:
        return code.replace(co_code=bytes(raw))
    except ValueError:  # CPython itself refuses it (3.13+: an argument out of range): try again
        return mutated_code(code, rng, attempts - 1) if attempts > 1 else code


def replacement_opcodes() -> List[int]:
    """The opcodes a mutation may put in place of another: any up to 3.10; from 3.11 (inline
    caches) the opcodes ``dis`` knows, but for those only the running interpreter writes
    (``ENTER_EXECUTOR``, ``INSTRUMENTED_*``), whose tables a mutated code object lacks."""
    if sys.version_info < (3, 11):
        return list(range(256))
    return [op for op in range(256) if not dis.opname[op].startswith("<")
            and dis.opname[op] != "ENTER_EXECUTOR" and not dis.opname[op].startswith("INSTRUMENTED_")]


def instruction_starts(raw: bytes) -> List[int]:
    """The offsets of the instructions (not their inline caches) of well-formed bytecode."""
    from framescope.decompiler.frontend.bytecode import inline_caches

    starts, at = [], 0
    while at < len(raw):
        starts.append(at)
        at += 2 * (1 + inline_caches(raw[at]))
    return starts


@functools.lru_cache(maxsize=None)
def makeable_opcodes() -> Tuple[int, ...]:
    """Every opcode but those CPython crashes on while it makes a code object holding them
    (3.12+: they stand for instructions kept in monitoring tables a new code object lacks),
    and ``ENTER_EXECUTOR`` where an optimizer runs that may have written it (framescope
    then takes it for the interpreter's own, see frontend/wellformed.py)."""
    from framescope.decompiler.frontend.wellformed import optimizer_running

    names = getattr(dis, "_all_opname", dis.opname)[:256]
    unmakeable = ["INSTRUMENTED_LINE", "INSTRUMENTED_INSTRUCTION"]
    if sys.version_info >= (3, 13) and optimizer_running():
        unmakeable.append("ENTER_EXECUTOR")
    return tuple(op for op, name in enumerate(names) if name not in unmakeable)


def first_cache_past_end(raw: bytes) -> bool:
    """Whether an instruction's first inline cache lies past the end of ``raw``: making a
    code object of it, CPython 3.12+ writes that cache (its specialisation counter) past
    the end of the object, before framescope could look."""
    from framescope.decompiler.frontend.bytecode import inline_caches
    from framescope.decompiler.frontend.wellformed import base_opcode

    at = 0
    while at < len(raw):
        caches = inline_caches(base_opcode(raw[at]))
        if caches and at + 2 >= len(raw):
            return True
        at += 2 * (1 + caches)
    return False


def mutated_here(code: types.CodeType, rng: random.Random) -> Optional[types.CodeType]:
    """``code`` with one to three opcodes or argument bytes replaced, by any opcode CPython
    can make a code object of; None when it cannot (see `first_cache_past_end`) or refuses."""
    raw = bytearray(code.co_code)
    starts = instruction_starts(bytes(raw))
    for _ in range(rng.randint(1, 3)):
        at = rng.choice(starts)
        if rng.random() < 0.5:
            raw[at + 1] = rng.randrange(256)
        else:
            raw[at] = rng.choice(makeable_opcodes())
    if sys.version_info >= (3, 12) and first_cache_past_end(bytes(raw)):
        return None
    try:
        return code.replace(co_code=bytes(raw))
    except ValueError:  # CPython itself refuses it (3.13+: an argument out of range)
        return None


def in_process(seed: int, count: int) -> List[Dict[str, object]]:
    """``count`` code objects of the corpus, each mutated and decompiled in this process:
    one record per input, as `worker` prints them."""
    import warnings

    sys.path.insert(0, str(REPO / "src"))
    rng = random.Random(seed)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the standard library's own invalid escapes
        codes = [c for _, data in corpus() for c in code_objects(marshal.loads(data[16:]))]
        results: List[Dict[str, object]] = []
        while len(results) < count:
            code = codes[rng.randrange(len(codes))]
            mutated = mutated_here(code, rng)
            if mutated is None:
                continue
            outcome, detail = try_code(mutated, 60.0)
            results.append({"number": len(results), "kind": "code", "input": code.co_name,
                            "outcome": outcome, "detail": detail})
    return results


class Timeout(Exception):
    pass


@contextlib.contextmanager
def time_limit(seconds: float) -> Iterator[None]:
    def expired(signum: int, frame: object) -> None:
        raise Timeout()

    previous = signal.signal(signal.SIGALRM, expired)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


def try_pyc(path: str, timeout: float) -> Tuple[str, str]:
    """(outcome, detail) of ``framescope decompile path``, run in this process."""
    from framescope import cli

    out, err = io.StringIO(), io.StringIO()
    try:
        with time_limit(timeout), contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            status = cli.main(["decompile", path])
    except Timeout:
        return "hang", ""
    except RecursionError as exc:
        return "traceback", "RecursionError: %s" % exc
    except BaseException as exc:  # what a user would see as a traceback
        return "traceback", "%s: %s" % (type(exc).__name__, str(exc)[:300])
    lines = err.getvalue().splitlines()
    if status in (0, 1, 2) and INTERNAL_MARK in err.getvalue():
        return INTERNAL, next(line.strip() for line in lines if INTERNAL_MARK in line)[:300]
    if status in (0, 1):
        return ("decompiled" if status == 0 else "partial"), ""
    if status == 2 and len(lines) == 1 and lines[0].startswith("framescope: error: "):
        return "refused", ""
    return "bad exit", "exit %r, stderr %r" % (status, err.getvalue()[-300:])


def try_code(code: types.CodeType, timeout: float) -> Tuple[str, str]:
    """(outcome, detail) of ``framescope.decompile(code)``."""
    import framescope
    from framescope.errors import DecompilationError

    try:
        with time_limit(timeout):
            text = framescope.decompile(code)
    except Timeout:
        return "hang", ""
    except DecompilationError as exc:
        if INTERNAL_MARK in str(exc):
            return INTERNAL, str(exc)[:300]
        return "refused", ""
    except TypeError as exc:
        if str(exc).startswith(TYPE_ERROR_REFUSAL):
            return "refused", ""
        return "traceback", "TypeError: %s" % str(exc)[:300]
    except BaseException as exc:
        return "traceback", "%s: %s" % (type(exc).__name__, str(exc)[:300])
    return ("decompiled", "") if isinstance(text, str) else ("bad result", repr(type(text)))


def case(seed: int, number: int, inputs: List[Tuple[str, bytes]]) -> Tuple[str, object, str]:
    """The input ``number`` of ``seed``: ("pyc", bytes, name) or ("code", code, name)."""
    rng = random.Random(seed * 1_000_003 + number)
    name, data = inputs[rng.randrange(len(inputs))]
    if KINDS == ("pyc",) or (KINDS != ("code",) and number % 2 == 0):
        return "pyc", mutate(data, rng), name
    codes = list(code_objects(marshal.loads(data[16:])))
    code = codes[rng.randrange(len(codes))]
    return "code", mutated_code(code, rng), "%s:%s" % (name, code.co_name)


def worker(seed: int, first: int, last: int, timeout: float, progress: str) -> None:
    """Run inputs first..last-1, one JSON line per input on stdout; ``progress`` holds the
    number of the input under way (for the parent, if this process dies)."""
    sys.path.insert(0, str(REPO / "src"))
    inputs = corpus()
    folder = tempfile.mkdtemp(prefix="fuzz-input-")
    path = os.path.join(folder, "input.pyc")
    for number in range(first, last):
        with open(progress, "w") as handle:
            handle.write(str(number))
        kind, value, name = case(seed, number, inputs)
        if kind == "pyc":
            with open(path, "wb") as handle:
                handle.write(value)  # type: ignore[arg-type]
            outcome, detail = try_pyc(path, timeout)
        else:
            outcome, detail = try_code(value, timeout)  # type: ignore[arg-type]
        print(json.dumps({"number": number, "kind": kind, "input": name, "outcome": outcome, "detail": detail}),
              flush=True)


def fuzz(seed: int, count: Optional[int], seconds: Optional[float], timeout: float) -> List[Dict[str, object]]:
    """Run inputs from 0 in worker processes until ``count`` inputs or ``seconds`` passed."""
    results: List[Dict[str, object]] = []
    deadline = time.monotonic() + seconds if seconds else None
    number, batch = 0, 200
    progress = tempfile.mktemp(prefix="fuzz-progress-")
    while (count is None or number < count) and (deadline is None or time.monotonic() < deadline):
        last = number + batch if count is None else min(count, number + batch)
        process = subprocess.Popen(
            [sys.executable, __file__, "--worker", str(seed), str(number), str(last), str(timeout), progress],
            stdout=subprocess.PIPE, universal_newlines=True)
        assert process.stdout is not None
        for line in process.stdout:
            record = json.loads(line)
            results.append(record)
            number = int(record["number"]) + 1
            if deadline is not None and time.monotonic() > deadline:
                process.kill()
                break
        process.wait()
        if process.returncode not in (0, -signal.SIGKILL) and number < last:
            with open(progress) as handle:
                died_on = int(handle.read() or number)
            results.append({"number": died_on, "kind": "?", "input": "?", "outcome": "crash",
                            "detail": "worker exit %d" % process.returncode})
            number = died_on + 1
    return results


def main(argv: List[str]) -> int:
    if argv and argv[0] == "--worker":
        seed, first, last, timeout, progress = argv[1:]
        worker(int(seed), int(first), int(last), float(timeout), progress)
        return 0
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, help="stop after this long")
    parser.add_argument("--count", type=int, help="stop after this many inputs")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--timeout", type=float, default=30.0, help="seconds one input may take")
    parser.add_argument("--in-process", action="store_true",
                        help="mutate code objects and decompile them in this process (see above)")
    args = parser.parse_args(argv)
    if args.seconds is None and args.count is None:
        args.count = 1000
    start = time.monotonic()
    if args.in_process:
        results = in_process(args.seed, args.count or 1000)
    else:
        results = fuzz(args.seed, args.count, args.seconds, args.timeout)
    counts: Dict[Tuple[str, str], int] = {}
    for record in results:
        key = (str(record["kind"]), str(record["outcome"]))
        counts[key] = counts.get(key, 0) + 1
    print("| python | input | decompiled | partial | refused | internal errors | failures |")
    print("|---|---|---|---|---|---|---|")
    for kind in [kind for kind in ("pyc", "code") if any(k == kind for k, _ in counts)]:
        print("| %s | %s | %d | %d | %d | %d | %d |" % (
            sys.version.split()[0], "mutated .pyc (command line)" if kind == "pyc" else "mutated code object",
            counts.get((kind, "decompiled"), 0), counts.get((kind, "partial"), 0), counts.get((kind, "refused"), 0),
            counts.get((kind, INTERNAL), 0),
            sum(n for (k, outcome), n in counts.items() if k == kind and outcome not in GOOD + (INTERNAL,))))
    internal = [r for r in results if r["outcome"] == INTERNAL]
    failures = [r for r in results if r["outcome"] not in GOOD + (INTERNAL,)]
    print("\n%d inputs in %.1f s, seed %d; %d internal errors, %d failures" % (
        len(results), time.monotonic() - start, args.seed, len(internal), len(failures)))
    for record in (failures + internal)[:20]:
        print("  #%(number)s %(kind)s %(input)s: %(outcome)s %(detail)s" % record)
    return 1 if failures or internal else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
