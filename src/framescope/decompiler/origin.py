"""Whether a code object came from source that still compiles to it.

The machine-code decompiler answers for bytecode that no source has (torch.compile's
transformed code). Code compiled from a file is not that: when the source decompiler
refuses it, the refusal stands, rather than an unchecked reading under a header that
would claim no source has it.
"""
import functools
import linecache
from types import CodeType
from typing import FrozenSet, Iterator, Tuple


def nested_codes(code: CodeType) -> Iterator[CodeType]:
    """``code`` and every code object nested in its constants, each before the ones nested in
    it, in the order of the constants (without recursion: hand-made code may nest deeply)."""
    pending = [code]
    while pending:
        current = pending.pop()
        yield current
        pending += reversed([const for const in current.co_consts if isinstance(const, CodeType)])


def compiled_from_source(code: CodeType) -> bool:
    """True when the source lines Python has for ``code``'s file (``linecache``: files,
    notebook cells) compile to a code object with ``code``'s name, first line and bytecode."""
    lines = linecache.getlines(code.co_filename)
    if not lines:
        return False
    return (code.co_name, code.co_firstlineno, code.co_code) in source_codes(code.co_filename, "".join(lines))


@functools.lru_cache(maxsize=8)
def source_codes(filename: str, source: str) -> FrozenSet[Tuple[str, int, bytes]]:
    """(name, first line, bytecode) of every code object ``source`` compiles to; kept for
    the last few files, since a bytecode hook asks again on every compile of a frame."""
    try:
        module = compile(source, filename, "exec", dont_inherit=True)
    except (SyntaxError, ValueError, MemoryError, RecursionError):
        return frozenset()
    return frozenset((c.co_name, c.co_firstlineno, c.co_code) for c in nested_codes(module))
