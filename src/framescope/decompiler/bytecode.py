"""A code object's instructions, decoded the way ``dis`` decodes them, only faster.

``dis.get_instructions`` builds a named tuple per instruction with its line,
source positions, jump labels and a printable argument; the equivalence check
needs none of that and decodes both sides of every comparison, so it uses
`instructions` instead.  Each instruction is ``(offset, opcode, opname, arg,
argval)``, with ``offset``, ``arg`` and ``argval`` as ``dis`` gives them where
the argument is a name, a local or a jump target; any other ``argval`` is the
plain ``arg`` (callers read constants from ``co_consts`` themselves).
Inline ``CACHE`` entries are skipped, as ``dis`` does by default.
"""
import dis
import sys
from types import CodeType
from typing import List, Optional, Tuple

__all__ = ["Instruction", "instructions"]

_PY = sys.version_info[:2]

#: (offset, opcode, opname, arg, argval).
Instruction = Tuple[int, int, str, Optional[int], object]

_OPNAME = dis.opname
_EXTENDED_ARG = dis.opmap["EXTENDED_ARG"]

# Opcodes that take an argument: 3.12+ list them, older versions number them from HAVE_ARGUMENT.
_HAS_ARG = frozenset(dis.hasarg) if _PY >= (3, 12) else frozenset(range(dis.HAVE_ARGUMENT, 256))

# Inline cache entries after each opcode (3.11+).
_CACHES = [0] * 256
if _PY >= (3, 11):
    _entries = dis._inline_cache_entries  # type: ignore[attr-defined]
    for _op in range(256):
        if isinstance(_entries, dict):  # 3.13+: by name
            _CACHES[_op] = _entries.get(_OPNAME[_op], 0)
        elif _op < len(_entries):
            _CACHES[_op] = _entries[_op]

_CONSTS = frozenset(dis.hasconst)
_NAMES = frozenset(dis.hasname)
_RELATIVE = frozenset(dis.hasjrel)
_ABSOLUTE = frozenset(dis.hasjabs)
_LOCALS = frozenset(dis.haslocal) | frozenset(dis.hasfree)
_VARNAMES = frozenset(dis.haslocal)  # up to 3.10 free and cell variables are numbered apart
_BACKWARD = frozenset(op for op, name in enumerate(_OPNAME) if "JUMP_BACKWARD" in name)
# 3.13+ superinstructions: two locals packed in one argument, four bits each.
_PAIRS = frozenset(dis.opmap[name] for name in (
    "LOAD_FAST_LOAD_FAST", "STORE_FAST_LOAD_FAST", "STORE_FAST_STORE_FAST", "LOAD_FAST_BORROW_LOAD_FAST_BORROW",
) if name in dis.opmap)
# Name arguments with flags in their low bits: how many bits (3.11+ LOAD_GLOBAL, 3.12+ attributes).
_NAME_SHIFT = {}
if _PY >= (3, 11):
    _NAME_SHIFT[dis.opmap["LOAD_GLOBAL"]] = 1
if _PY >= (3, 12):
    _NAME_SHIFT[dis.opmap["LOAD_ATTR"]] = 1
    _NAME_SHIFT[dis.opmap["LOAD_SUPER_ATTR"]] = 2
# Jump arguments count bytes up to 3.9, instructions after.
_UNIT = 1 if _PY < (3, 10) else 2
_INT_OVERFLOW = 2 ** 31


def instructions(code: CodeType) -> List[Instruction]:
    """Every instruction of ``code`` (without its inline caches), in order."""
    raw = code.co_code
    names = code.co_names
    if _PY >= (3, 11):
        local = code._varname_from_oparg  # type: ignore[attr-defined]
    else:
        varnames, cells = code.co_varnames, code.co_cellvars + code.co_freevars
    result = []
    extended = 0
    offset = 0
    size = len(raw)
    while offset < size:
        op = raw[offset]
        arg = None
        argval = None
        if op in _HAS_ARG:
            arg = raw[offset + 1] | extended
            extended = (arg << 8) if op == _EXTENDED_ARG else 0
            if _PY >= (3, 11) and extended >= _INT_OVERFLOW:
                extended -= 2 * _INT_OVERFLOW
            argval = arg
            if op in _CONSTS:
                pass
            elif op in _NAMES:
                argval = names[arg >> _NAME_SHIFT.get(op, 0)]
            elif op in _RELATIVE:
                step = -arg if op in _BACKWARD else arg
                argval = offset + 2 + step * _UNIT
                if _PY >= (3, 12):
                    argval += 2 * _CACHES[op]
            elif op in _ABSOLUTE:
                argval = arg * _UNIT
            elif op in _PAIRS:
                argval = (local(arg >> 4), local(arg & 15))
            elif op in _LOCALS:
                if _PY >= (3, 11):
                    argval = local(arg)
                elif op in _VARNAMES:
                    argval = varnames[arg]
                else:
                    argval = cells[arg]
        elif _PY >= (3, 10):
            extended = 0
        result.append((offset, op, _OPNAME[op], arg, argval))
        offset += 2 + 2 * _CACHES[op]
    return result
