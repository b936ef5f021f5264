"""Bytecode that no compiler wrote, found before anything reads it the way CPython does.

CPython trusts a code object's bytecode. Its own readers of it (``co_code``, and through it
``dis``; the quickening of 3.12+) walk it by each opcode's inline caches and write as they
go, and ``dis`` looks every argument up in the code object's tables: bytecode with an opcode
changed or an argument byte flipped makes one of them write past its end, or fail deep
inside the decompiler. `malformed` checks a code object's code units first, without those
readers:

* the layout: known opcodes, each followed by its inline caches inside the bytecode;
* the arguments: constant, name and variable indices inside the code object's tables,
  jump targets on an instruction of the bytecode, the operator tables ``dis`` reads
  (comparisons, binary operators, intrinsics), the stack depths that copies, swaps and
  displays reach down to, and no ``EXTENDED_ARG`` left without its instruction;
* the exception table (3.11+): each range and handler on instructions of the bytecode.

On 3.11+ the code units come from the adaptive code (`versions.ADAPTIVE_CODE`), with its
specialised and instrumented opcodes put back to their base forms here.
"""
import dis
import functools
import sys
from types import CodeType
from typing import Dict, List, Optional, Set, Tuple

from framescope.decompiler.frontend import versions
from framescope.decompiler.frontend.bytecode import inline_caches, jump_target, name_shift

__all__ = ["base_opcode", "code_units", "malformed", "malformed_layout", "optimizer_running", "refuse_malformed"]

#: Every opcode's name, the specialised ones too (3.11+).
_OPNAME: List[str] = list(getattr(dis, "_all_opname", dis.opname))[:256]
_EXTENDED_ARG = dis.opmap["EXTENDED_ARG"]
#: Opcodes that stand for an instruction the interpreter keeps elsewhere: their inline
#: caches, and so the layout after them, cannot be read from the adaptive code.
_HIDDEN = frozenset(op for op in range(256) if (
    (versions.MONITORING_HIDES_OPCODES and _OPNAME[op] in ("INSTRUMENTED_LINE", "INSTRUMENTED_INSTRUCTION"))
    or (versions.EXECUTORS and _OPNAME[op] == "ENTER_EXECUTOR")))


def _base_table() -> bytes:
    """For each opcode byte of the adaptive code, its base opcode: a specialised form's
    family, ``INSTRUMENTED_X``'s ``X``; hidden opcodes stay as they are."""
    table = list(range(256))
    allmap: Dict[str, int] = getattr(dis, "_all_opmap", dis.opmap)
    for specialised, base in getattr(dis, "deoptmap", {}).items():
        if allmap.get(specialised, 256) < 256:
            table[allmap[specialised]] = dis.opmap[base]
    for op, name in enumerate(_OPNAME):
        plain = name[len("INSTRUMENTED_"):]
        if name.startswith("INSTRUMENTED_") and plain in dis.opmap:
            table[op] = dis.opmap[plain]
    return bytes(table)


_BASE = _base_table()


def base_opcode(op: int) -> int:
    """The base form of opcode ``op`` as the adaptive code holds it (itself for most)."""
    return _BASE[op]


def _known(op: int) -> bool:
    name = dis.opname[op]
    return not name.startswith("<") and name != "ENTER_EXECUTOR" and not name.startswith("INSTRUMENTED_")


#: Opcodes a compiler writes: those ``dis`` names, less the interpreter's own.
_KNOWN = [_known(op) for op in range(256)]


def refuse_malformed(code: CodeType) -> None:
    """DecompilationError for malformed bytecode (see `malformed`) in ``code`` or a code
    object nested in it."""
    from framescope.decompiler.origin import nested_codes
    from framescope.errors import DecompilationError

    for current in nested_codes(code):
        why = malformed(current)
        if why is not None:
            raise DecompilationError("malformed bytecode: %s" % why, code_name=current.co_name)


def malformed(code: CodeType) -> Optional[str]:
    """Why ``code``'s bytecode is none a compiler wrote, in a way that would make CPython's
    readers of it or the decompiler fail (see the module's docstring), or None."""
    units = code_units(code)
    if isinstance(units, str):
        return units
    why = malformed_layout(units)
    if why is not None:
        return why
    starts, why = ArgumentCheck(code).run(units)
    return why if why is not None else bad_exception_table(code, len(units), starts)


def code_units(code: CodeType):
    """``code``'s bytecode with base opcodes, read without ``co_code`` where reading it
    may write (`versions.ADAPTIVE_CODE`); a str (why not) for an opcode only a running
    interpreter writes that this one cannot have written."""
    if not versions.ADAPTIVE_CODE:
        return code.co_code
    adaptive = code._co_code_adaptive  # type: ignore[attr-defined]
    units = bytearray(adaptive)
    units[0::2] = adaptive[0::2].translate(_BASE)
    unit = 0
    while unit < len(units) // 2:
        op = units[2 * unit]
        if op in _HIDDEN:
            return hidden(code, op, 2 * unit)
        unit += 1 + inline_caches(op)
    return bytes(units)


def hidden(code: CodeType, op: int, offset: int):
    """The bytecode of ``code``, whose adaptive code holds ``op`` at ``offset`` in place of
    an instruction the interpreter keeps elsewhere: ``co_code``, where the interpreter itself
    wrote ``op`` (it ran the code: no code object is made with it otherwise, see
    `versions.MONITORING_HIDES_OPCODES`, unless it is ``ENTER_EXECUTOR`` and no optimizer
    runs, see `versions.EXECUTORS`); else why the code is refused."""
    if _OPNAME[op] == "ENTER_EXECUTOR" and not optimizer_running():
        return "ENTER_EXECUTOR at offset %d, with no optimizer running that writes it" % offset
    return code.co_code


@functools.lru_cache(maxsize=None)
def optimizer_running() -> bool:
    """Whether this interpreter runs the tier-2 optimizer, which writes ``ENTER_EXECUTOR``
    (the experimental JIT: 3.14+ say so, 3.13 builds with it run it unless built off)."""
    jit = getattr(sys, "_jit", None)
    if jit is not None:
        return bool(jit.is_enabled())
    import sysconfig

    config = str(sysconfig.get_config_var("CONFIG_ARGS"))
    return "--enable-experimental-jit" in config and not any(
        "--enable-experimental-jit=" + off in config for off in ("no", "yes-off", "interpreter-off"))


def malformed_layout(raw: bytes) -> Optional[str]:
    """Why the code units ``raw`` (base opcodes) are laid out as no compiler lays them out:
    an odd length, an opcode it never writes, or inline caches (3.11+) past the last unit."""
    if len(raw) % 2:
        return "an odd number of bytes"
    units, unit = len(raw) // 2, 0
    while unit < units:
        op = raw[2 * unit]
        if not _KNOWN[op]:
            name = dis.opname[op]
            what = "unknown opcode %d" % op if name.startswith("<") else name
            return "%s at offset %d" % (what, 2 * unit)
        caches = inline_caches(op)
        if unit + 1 + caches > units:
            return "%s at offset %d has inline caches past the end" % (dis.opname[op], 2 * unit)
        unit += 1 + caches
    return None


# What an opcode's argument indexes, decided once per opcode.
_NONE, _CONST, _NAME, _LOCAL, _CELL, _PAIR, _JUMP, _TABLE, _RANGE, _FLAG = range(10)

#: 3.13+ superinstructions: two locals in one argument, four bits each.
_PAIRS = frozenset(["LOAD_FAST_LOAD_FAST", "STORE_FAST_LOAD_FAST", "STORE_FAST_STORE_FAST",
                    "LOAD_FAST_BORROW_LOAD_FAST_BORROW"])

#: Arguments in a range, as (least, most): the stack depths that copies, swaps and displays
#: reach down to (the decompiler's own stack has them), and ``CONVERT_VALUE``'s conversion.
_RANGES = {
    "COPY": (1, None), "SWAP": (1, None), "BUILD_SLICE": (2, 3), "LIST_APPEND": (1, None),
    "SET_ADD": (1, None), "MAP_ADD": (1, None), "LIST_EXTEND": (1, None), "SET_UPDATE": (1, None),
    "DICT_UPDATE": (1, None), "DICT_MERGE": (1, None), "CONVERT_VALUE": (1, 3), "ROT_N": (1, None),
}
#: Arguments that are one flag of a table ``dis`` names (``SET_FUNCTION_ATTRIBUTE``, 3.13+:
#: which attribute of the function it sets).
_FLAGS = {"SET_FUNCTION_ATTRIBUTE": frozenset(1 << i for i in range(len(getattr(dis, "FUNCTION_ATTR_FLAGS", ()))))}


def _tables() -> Dict[str, Tuple[int, int]]:
    """Operands that ``dis`` looks up in a table of its own: opname → (table size, shift)."""
    import opcode

    # 3.8's table ends in "BAD", which no compiler writes.
    found = {"COMPARE_OP": (len([c for c in dis.cmp_op if c != "BAD"]), versions.COMPARE_OP_SHIFT)}
    for name, table in (("BINARY_OP", "_nb_ops"), ("CALL_INTRINSIC_1", "_intrinsic_1_descs"),
                        ("CALL_INTRINSIC_2", "_intrinsic_2_descs"), ("LOAD_COMMON_CONSTANT", "_common_constants"),
                        ("LOAD_SPECIAL", "_special_method_names")):
        values = getattr(dis, table, None) or getattr(opcode, table, None)
        if name in dis.opmap and values is not None:
            found[name] = (len(values), 0)
    return found


_TABLES = _tables()
_HAS_ARG = frozenset(dis.hasarg) if versions.LISTS_ARG_OPCODES else frozenset(range(dis.HAVE_ARGUMENT, 256))


def _kind(op: int) -> int:
    name = dis.opname[op]
    if op not in _HAS_ARG or op == _EXTENDED_ARG:
        return _NONE
    if op in dis.hasconst:
        return _CONST
    if op in dis.hasname:
        return _NAME
    if jump_target(op, 0, 0) is not None:
        return _JUMP
    if name in _PAIRS:
        return _PAIR
    if op in dis.haslocal or (op in dis.hasfree and versions.LOCALS_PLUS):
        return _LOCAL
    if op in dis.hasfree:
        return _CELL
    if name in _TABLES:
        return _TABLE
    if name in _FLAGS:
        return _FLAG
    return _RANGE if name in _RANGES else _NONE


_KIND = [_kind(op) for op in range(256)]


class ArgumentCheck:
    """The arguments of one code object's instructions, each against what it indexes."""

    def __init__(self, code: CodeType) -> None:
        self.consts = len(code.co_consts)
        self.names = len(code.co_names)
        cells, free = len(code.co_cellvars), len(code.co_freevars)
        if versions.LOCALS_PLUS:  # an argument that is also a cell is one variable
            shared = len(set(code.co_varnames) & set(code.co_cellvars))
            self.locals = len(code.co_varnames) + cells + free - shared
        else:
            self.locals = len(code.co_varnames)
        self.cells = cells + free

    def run(self, raw: bytes) -> Tuple[Set[int], Optional[str]]:
        """(the offsets of the instructions, why an argument is out of range or None)."""
        starts: Set[int] = set()
        jumps: List[Tuple[int, int]] = []
        extended = offset = 0
        op = -1
        while offset < len(raw):
            op = raw[offset]
            starts.add(offset)
            if op in _HAS_ARG:
                arg = raw[offset + 1] | extended
                extended = arg << 8 if op == _EXTENDED_ARG else 0
                why = self.check(op, arg, offset, jumps)
                if why is not None:
                    return starts, "%s at offset %d" % (why, offset)
            elif versions.NO_ARG_ENDS_EXTENDED_ARG:
                extended = 0
            offset += 2 + 2 * inline_caches(op)
        if op == _EXTENDED_ARG:
            return starts, "EXTENDED_ARG at offset %d ends the bytecode" % max(starts)
        for offset, target in jumps:
            if target not in starts:
                return starts, "%s at offset %d jumps to %d, %s" % (
                    dis.opname[raw[offset]], offset, target,
                    "outside the bytecode" if not 0 <= target < len(raw) else "inside an instruction")
        return starts, None

    def check(self, op: int, arg: int, offset: int, jumps: List[Tuple[int, int]]) -> Optional[str]:
        kind = _KIND[op]
        if kind == _NONE:
            return None
        if kind == _JUMP:
            jumps.append((offset, jump_target(op, offset, arg)))  # type: ignore[arg-type]
            return None
        name = dis.opname[op]
        if kind == _CONST:
            return out_of_range("constant index", arg, self.consts)
        if kind == _NAME:
            return out_of_range("name index", arg >> name_shift(op), self.names)
        if kind == _LOCAL:
            return out_of_range("variable index", arg, self.locals)
        if kind == _CELL:
            return out_of_range("cell index", arg, self.cells)
        if kind == _PAIR:
            return out_of_range("variable index", max(arg >> 4, arg & 15), self.locals)
        if kind == _TABLE:
            size, shift = _TABLES[name]
            return out_of_range("%s operand" % name, arg >> shift, size)
        if kind == _FLAG:
            return None if arg in _FLAGS[name] else "%s with argument %d" % (name, arg)
        least, most = _RANGES[name]
        if arg < least or (most is not None and arg > most):
            return "%s with argument %d" % (name, arg)
        return None


def out_of_range(what: str, index: int, size: int) -> Optional[str]:
    if 0 <= index < size:
        return None
    return "%s %d out of range (%d)" % (what, index, size)


def bad_exception_table(code: CodeType, size: int, starts: Set[int]) -> Optional[str]:
    """Why ``code``'s exception table (3.11+) does not fit its bytecode of ``size`` bytes
    whose instructions start at ``starts``: a range or handler off its instructions, or an
    entry cut short; None if it fits."""
    if not versions.EXCEPTION_TABLE:
        return None
    table = code.co_exceptiontable
    at = 0
    while at < len(table):
        entry = []
        for _ in range(4):
            if at >= len(table):
                return "the exception table ends inside an entry"
            value, at = varint(table, at)
            entry.append(value)
        start, end, target = 2 * entry[0], 2 * (entry[0] + entry[1]), 2 * entry[2]
        if start not in starts or (end not in starts and end != size) or end <= start:
            return "an exception table range %d-%d off the instructions" % (start, end)
        if target not in starts:
            return "an exception handler at %d off the instructions" % target
    return None


def varint(table: bytes, at: int) -> Tuple[int, int]:
    """(value, next position) of the exception table's variable-length number at ``at``:
    six bits a byte, most significant first, bit 6 set on all but the last byte."""
    byte = table[at]
    value = byte & 63
    at += 1
    while byte & 64 and at < len(table):
        byte = table[at]
        value = (value << 6) | (byte & 63)
        at += 1
    return value, at
