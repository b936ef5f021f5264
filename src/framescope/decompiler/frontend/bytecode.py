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
from types import CodeType
from typing import List, Optional, Tuple

from framescope.decompiler.frontend import versions

__all__ = ["Instruction", "instructions", "inline_caches", "jump_target", "name_shift"]

#: (offset, opcode, opname, arg, argval).
Instruction = Tuple[int, int, str, Optional[int], object]

_OPNAME = dis.opname
_EXTENDED_ARG = dis.opmap["EXTENDED_ARG"]

# Opcodes that take an argument: 3.12+ list them, older versions number them from HAVE_ARGUMENT.
_HAS_ARG = frozenset(dis.hasarg) if versions.LISTS_ARG_OPCODES else frozenset(range(dis.HAVE_ARGUMENT, 256))

# Inline cache entries after each opcode (3.11+).
_CACHES = [0] * 256
if versions.INLINE_CACHES:
    _entries = dis._inline_cache_entries  # type: ignore[attr-defined]
    for _op in range(256):
        if isinstance(_entries, dict):  # 3.13+: by name
            _CACHES[_op] = _entries.get(_OPNAME[_op], 0)
        elif _op < len(_entries):
            _CACHES[_op] = _entries[_op]

def inline_caches(op: int) -> int:
    """How many inline cache entries follow opcode ``op`` (0 before 3.11)."""
    return _CACHES[op]


# What an opcode's argument is, decided once per opcode in the order dis tries them.
_NO_ARG, _PLAIN, _NAME, _FORWARD, _BACKWARD, _ABSOLUTE, _PAIR, _LOCAL, _CELL = range(9)
# 3.13+ superinstructions: two locals packed in one argument, four bits each.
_PAIRS = frozenset(["LOAD_FAST_LOAD_FAST", "STORE_FAST_LOAD_FAST", "STORE_FAST_STORE_FAST",
                    "LOAD_FAST_BORROW_LOAD_FAST_BORROW"])


def _kind(op: int) -> int:
    if op not in _HAS_ARG:
        return _NO_ARG
    if op in dis.hasconst:
        return _PLAIN
    if op in dis.hasname:
        return _NAME
    if op in dis.hasjrel:
        backward = "JUMP_BACKWARD" in _OPNAME[op] or (
            _OPNAME[op] == "END_ASYNC_FOR" and versions.END_ASYNC_FOR_JUMPS_BACK)
        return _BACKWARD if backward else _FORWARD
    if op in dis.hasjabs:
        return _ABSOLUTE
    if _OPNAME[op] in _PAIRS:
        return _PAIR
    if op in dis.haslocal or (op in dis.hasfree and versions.LOCALS_PLUS):
        return _LOCAL
    if op in dis.hasfree:
        return _CELL  # up to 3.10 cell and free variables are numbered apart from the locals
    return _PLAIN


_KIND = [_kind(op) for op in range(256)]


def is_jump(op: int) -> bool:
    """Whether opcode ``op`` has a jump target (its argval in `instructions`)."""
    return _KIND[op] in (_FORWARD, _BACKWARD, _ABSOLUTE)


# Bytes from an instruction to the next: itself and its caches.
_SIZE = [2 + 2 * caches for caches in _CACHES]
# Name arguments with flags in their low bits: how many bits (3.11+ LOAD_GLOBAL, 3.12+ attributes).
_NAME_SHIFT = [0] * 256
if versions.LOAD_GLOBAL_NULL_BIT:
    _NAME_SHIFT[dis.opmap["LOAD_GLOBAL"]] = 1
if versions.LOAD_ATTR_METHOD_BIT:
    _NAME_SHIFT[dis.opmap["LOAD_ATTR"]] = 1
    _NAME_SHIFT[dis.opmap["LOAD_SUPER_ATTR"]] = 2
# Jump arguments count bytes up to 3.9, instructions after; 3.12+ count from after the caches.
_UNIT = 2 if versions.JUMPS_COUNT_UNITS else 1
_JUMP_BASE = [2 + 2 * caches if versions.JUMPS_FROM_AFTER_CACHES else 2 for caches in _CACHES]
_INT_OVERFLOW = 2 ** 31


def jump_target(op: int, offset: int, arg: int) -> Optional[int]:
    """Where the instruction ``op`` at ``offset`` with argument ``arg`` jumps (as ``dis``
    reads it), or None for an opcode that does not jump."""
    kind = _KIND[op]
    if kind == _FORWARD:
        return offset + _JUMP_BASE[op] + arg * _UNIT
    if kind == _BACKWARD:
        return offset + _JUMP_BASE[op] - arg * _UNIT
    if kind == _ABSOLUTE:
        return arg * _UNIT
    return None


def name_shift(op: int) -> int:
    """How many flag bits sit below the name index in opcode ``op``'s argument."""
    return _NAME_SHIFT[op]


def instructions(code: CodeType) -> List[Instruction]:
    """Every instruction of ``code`` (without its inline caches), in order."""
    raw = code.co_code
    names = code.co_names
    if versions.LOCALS_PLUS:
        local = code._varname_from_oparg  # type: ignore[attr-defined]
    else:
        local = code.co_varnames.__getitem__
        cell = (code.co_cellvars + code.co_freevars).__getitem__
    result = []
    append = result.append
    extended = 0
    offset = 0
    size = len(raw)
    while offset < size:
        op = raw[offset]
        kind = _KIND[op]
        if kind == _NO_ARG:
            arg = argval = None
            if versions.NO_ARG_ENDS_EXTENDED_ARG:
                extended = 0
        else:
            arg = argval = raw[offset + 1] | extended
            extended = (arg << 8) if op == _EXTENDED_ARG else 0
            if versions.SIGNED_ARGUMENTS and extended >= _INT_OVERFLOW:
                extended -= 2 * _INT_OVERFLOW
            if kind == _PLAIN:
                pass
            elif kind == _NAME:
                argval = names[arg >> _NAME_SHIFT[op]]
            elif kind == _FORWARD:
                argval = offset + _JUMP_BASE[op] + arg * _UNIT
            elif kind == _BACKWARD:
                argval = offset + _JUMP_BASE[op] - arg * _UNIT
            elif kind == _ABSOLUTE:
                argval = arg * _UNIT
            elif kind == _LOCAL:
                argval = local(arg)
            elif kind == _PAIR:
                argval = (local(arg >> 4), local(arg & 15))
            else:
                argval = cell(arg)
        append((offset, op, _OPNAME[op], arg, argval))
        offset += _SIZE[op]
    return result


def argrepr(code: CodeType, offset: int) -> str:
    """What ``dis`` prints for the argument of the instruction at ``offset`` ("<=", "+"...).

    Only that instruction (with its ``EXTENDED_ARG`` prefix and caches) is handed to
    ``dis``: decoding the whole code for one message would cost as much as the check.
    """
    raw = code.co_code
    start = offset
    while start >= 2 and raw[start - 2] == _EXTENDED_ARG:
        start -= 2
    try:
        piece = code.replace(co_code=raw[start:offset + _SIZE[raw[offset]]])
        return list(dis.get_instructions(piece))[-1].argrepr
    except Exception:  # a code object dis cannot take apart piecewise: read it all
        return next((i.argrepr for i in dis.get_instructions(code) if i.offset == offset), "")
