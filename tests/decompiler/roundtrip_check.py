"""The round trip of one generated program: decompile each of its functions, recompile, compare.

Shared by the property test (`test_property.py`, a few hundred programs in CI) and
`benchmarks/fuzz_roundtrip.py` (tens of thousands). Needs only framescope and the standard
library, so that a saved corpus of programs can be checked on any interpreter.
"""
from __future__ import annotations

import warnings
from types import CodeType
from typing import Iterator, List, NamedTuple

from framescope import DecompilationError, decompile
from framescope.decompiler.verify.equivalence import compare_code, recompile_function

#: What became of one function: its decompilation recompiles to equivalent bytecode; the
#: decompiler refused it with a one-line DecompilationError; it failed inside (a
#: DecompilationError that relabels an exception it did not expect: a defect); anything else.
OUTCOMES = ("equivalent", "refused", "internal", "wrong")


class Outcome(NamedTuple):
    """The round trip of one code object of a generated program."""

    #: The code object's qualified name (``<module>`` for the program itself).
    name: str
    #: One of OUTCOMES.
    outcome: str
    #: Why it was refused or wrong (empty when equivalent); for wrong ones, with the source.
    detail: str


def code_objects(code: CodeType) -> Iterator[CodeType]:
    yield code
    for const in code.co_consts:
        if isinstance(const, CodeType):
            yield from code_objects(const)


def compiles(source: str) -> bool:
    """Whether this interpreter accepts ``source`` (a generator may write what it rejects)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            compile(source, "<generated>", "exec")
        except (SyntaxError, ValueError, RecursionError, MemoryError, OverflowError):
            return False
    return True


def round_trip(source: str) -> List[Outcome]:
    """One Outcome per checked code object of ``source``; [] when this interpreter rejects it.

    Functions and the module itself are checked; class bodies are covered by their module,
    comprehensions and lambdas by the function holding them.
    """
    if not compiles(source):
        return []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        module = compile(source, "<generated>", "exec")
        return [one_round_trip(code) for code in code_objects(module) if is_checked(code)]


def is_checked(code: CodeType) -> bool:
    if code.co_name == "<module>":
        return True
    return not code.co_name.startswith("<") and bool(code.co_flags & 0x02)  # CO_NEWLOCALS: a function


def one_round_trip(code: CodeType) -> Outcome:
    name = getattr(code, "co_qualname", code.co_name)
    try:
        text = decompile(code, machine=False)
    except DecompilationError as err:
        message = str(err)
        if "\n" in message:
            return Outcome(name, "wrong", "refusal of more than one line: %r" % message)
        return Outcome(name, "internal" if err.internal else "refused", message)
    except Exception as err:  # a decompiler bug, never the program's fault
        return Outcome(name, "wrong", "%s: %s" % (type(err).__name__, err))
    try:
        if code.co_name == "<module>":
            rebuilt = compile(text, "<decompiled>", "exec")
        else:
            rebuilt = recompile_function(text, code)
    except Exception as err:
        return Outcome(name, "wrong", "the decompiled source does not recompile (%s: %s)\n%s"
                       % (type(err).__name__, err, text))
    difference = compare_code(code, rebuilt)
    if difference is not None:
        return Outcome(name, "wrong", "%s\n%s" % (difference, text))
    return Outcome(name, "equivalent", "")
