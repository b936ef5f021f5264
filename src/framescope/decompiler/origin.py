"""Whether a code object came from source that still compiles to it.

The machine-code decompiler answers for bytecode that no source has (torch.compile's
transformed code). Code compiled from a file is not that: when the source decompiler
refuses it, the refusal stands, rather than an unchecked reading under a header that
would claim no source has it.
"""
import linecache
from types import CodeType
from typing import Iterator


def nested_codes(code: CodeType) -> Iterator[CodeType]:
    """``code`` and every code object nested in its constants."""
    pending = [code]
    while pending:
        current = pending.pop()
        yield current
        pending += [const for const in current.co_consts if isinstance(const, CodeType)]


def compiled_from_source(code: CodeType) -> bool:
    """True when the source lines Python has for ``code``'s file (``linecache``: files,
    notebook cells) compile to a code object with ``code``'s name, first line and bytecode."""
    lines = linecache.getlines(code.co_filename)
    if not lines:
        return False
    try:
        module = compile("".join(lines), code.co_filename, "exec", dont_inherit=True)
    except (SyntaxError, ValueError, MemoryError, RecursionError):
        return False
    return any(candidate.co_name == code.co_name and candidate.co_firstlineno == code.co_firstlineno
               and candidate.co_code == code.co_code for candidate in nested_codes(module))
