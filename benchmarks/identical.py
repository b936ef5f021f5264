"""Whether two code objects are the same instructions, one for one: the round trip's *identical*.

Stricter than ``framescope``'s equivalence check (a bisimulation of instruction graphs
that forgives what the compiler lays out differently): here the two instruction lists
must match in order, with

* ``NOP``, ``EXTENDED_ARG`` and ``CACHE`` dropped (line-number padding and encoding);
* 3.13+ superinstructions (``LOAD_FAST_LOAD_FAST``, ``STORE_FAST_LOAD_FAST``,
  ``STORE_FAST_STORE_FAST``, 3.14's ``LOAD_FAST_BORROW_LOAD_FAST_BORROW``) split into
  their two parts, since the compiler fuses only neighbours on one line;
* jump targets and exception-table ranges as instruction indexes, not byte offsets;
* names, locals and free variables by name, constants by type and value, nested code
  objects compared the same way (recursively);
* line numbers, positions, ``co_qualname``, ``co_firstlineno``, 3.14's ``CO_METHOD`` flag, and the qualname and
  first-line constants stored by ``MAKE_FUNCTION`` (3.8-3.10) and class bodies ignored.

The first difference is told as a short *kind* for counting (the two opnames ``A/B``,
``A (argument)``, ``A (target)`` for a jump, ``exception table`` or an attribute name) and a one-line detail.
Only the standard library's ``dis`` is used, not the decompiler's own reading of bytecode.
"""
from __future__ import annotations

import dis
import math
import sys
from types import CodeType
from typing import Dict, Iterator, List, NamedTuple, Optional, Tuple

__all__ = ["Difference", "first_difference", "listing"]

_DROP = frozenset(["NOP", "EXTENDED_ARG", "CACHE"])
_SPLIT = {
    "LOAD_FAST_LOAD_FAST": ("LOAD_FAST", "LOAD_FAST"),
    "LOAD_FAST_BORROW_LOAD_FAST_BORROW": ("LOAD_FAST_BORROW", "LOAD_FAST_BORROW"),
    "STORE_FAST_LOAD_FAST": ("STORE_FAST", "LOAD_FAST"),
    "STORE_FAST_STORE_FAST": ("STORE_FAST", "STORE_FAST"),
}
_JUMPS = frozenset(getattr(dis, "hasjump", [])) | frozenset(dis.hasjrel) | frozenset(dis.hasjabs)
_CONSTS = frozenset(dis.hasconst) | frozenset(
    dis.opmap[name] for name in ("KW_NAMES", "RETURN_CONST") if name in dis.opmap)
# Shown by name; argrepr keeps the bits dis folds into the name ("NULL + x", "NULL|self + y").
_NAMED = frozenset(dis.hasname) | frozenset(dis.haslocal) | frozenset(dis.hasfree)
# Stored by class bodies (and MAKE_FUNCTION before 3.11) from the layout or the nesting.
_BOOKKEEPING_STORES = frozenset(["__qualname__", "__firstlineno__"])
_PLAIN_LOADS = frozenset(["LOAD_FAST", "LOAD_FAST_BORROW", "LOAD_DEREF", "LOAD_NAME", "LOAD_GLOBAL"])
# 3.13+ push the NULL of a call after the callable, not before.
_NULL_AFTER = sys.version_info >= (3, 13)
_ATTRIBUTES = ("co_name", "co_argcount", "co_posonlyargcount", "co_kwonlyargcount",
               "co_varnames", "co_cellvars", "co_freevars")
# 3.14 marks a function defined in a class body; the decompiled one is compiled alone.
_CO_METHOD = 0x8000000


class Instruction(NamedTuple):
    op: str
    #: A comparable key of the argument: ("jump", index), ("const", key), ("code", code), a name, an int.
    arg: object
    #: How it reads in a message.
    shown: str


class Listing(NamedTuple):
    instructions: List[Instruction]
    #: (first index, end index, handler index, depth, lasti), adjacent equal handlers merged.
    exception_table: List[Tuple[int, int, int, int, bool]]


class Difference(NamedTuple):
    #: For counting: "A/B", "A (argument)", "exception table", an attribute.
    kind: str
    #: Where (dotted co_name path) and what, on one line.
    detail: str


class _Wildcard:
    def __eq__(self, other: object) -> bool:
        return True

    def __hash__(self) -> int:
        return 0

    def __repr__(self) -> str:
        return "<any>"


_ANY = _Wildcard()


def _const_key(value: object) -> object:
    """Equal exactly for constants of one type and value: 0, 0.0, -0.0 and False differ, nan is nan."""
    kind = type(value)
    if kind in (float, complex):
        parts = (value.real, value.imag) if kind is complex else (value,)  # type: ignore[attr-defined]
        return (kind,) + tuple("nan" if math.isnan(p) else (p, math.copysign(1.0, p)) for p in parts)
    if kind in (tuple, frozenset):
        items = [_const_key(item) for item in value]  # type: ignore[attr-defined]
        return (kind, tuple(items) if kind is tuple else frozenset(items))
    if kind is slice:
        return (kind, _const_key(value.start), _const_key(value.stop), _const_key(value.step))  # type: ignore
    if kind is CodeType:
        return ("code", value)
    return (kind, value)


def _argument(code: CodeType, instr: dis.Instruction, index_of: Dict[int, int]) -> object:
    if instr.opcode in _JUMPS:
        return ("jump", index_of[instr.argval])
    if instr.opcode in _CONSTS:
        # 3.11's dis leaves KW_NAMES' argval unknown: read the constant itself.
        return _const_key(code.co_consts[instr.arg] if instr.opname == "KW_NAMES" else instr.argval)
    if instr.opname == "LOAD_SMALL_INT":
        return _const_key(instr.argval)
    if instr.opcode in _NAMED:
        return instr.argrepr
    if instr.opname == "COMPARE_OP":
        return instr.argrepr  # the low bits of 3.12+ arguments are a cache detail; 3.13 adds "bool(...)"
    return instr.arg


class _Item:
    """An instruction on its way into a listing: a dis instruction, one part of one, or a rewritten one."""

    __slots__ = ("op", "instr", "name", "offset")

    def __init__(self, op: str, instr: Optional[dis.Instruction], name: Optional[str], offset: int) -> None:
        self.op, self.instr, self.name, self.offset = op, instr, name, offset


def _items(code: CodeType) -> List[_Item]:
    items = []
    for instr in dis.get_instructions(code):
        if instr.opname in _DROP:
            continue
        if instr.opname in _SPLIT:
            for op, name in zip(_SPLIT[instr.opname], instr.argval):
                items.append(_Item(op, None, name, instr.offset))
        else:
            items.append(_Item(instr.opname, instr, None, instr.offset))
    return items


def _has_null(item: _Item) -> bool:
    return item.instr is not None and "NULL" in item.instr.argrepr


def _plain_load(item: _Item) -> bool:
    return item.op in _PLAIN_LOADS and not _has_null(item)


def _name(item: _Item) -> Optional[str]:
    return item.name if item.instr is None else item.instr.argval


def _method_calls(items: List[_Item]) -> List[_Item]:
    """Spell every call of an attribute ``x.y(...)`` as a plain load of x and a method load of y.

    3.11-3.13 compile ``x.y(...)`` as a plain attribute load plus a NULL when ``x`` is
    imported at module level (``LOAD_GLOBAL NULL + x; LOAD_ATTR y``), else as a method
    load: the reference is compiled inside its module, the decompiled function alone, so
    this depends on where the code is compiled. The NULL of ``LOAD_GLOBAL NULL + x`` is
    a ``PUSH_NULL`` of its own first, as the compiler folds the two when they meet; a
    receiver's ``LOAD_FAST_BORROW`` is a ``LOAD_FAST``.
    """
    out: List[_Item] = []
    for item in _unfold_nulls(items):
        if item.op == "LOAD_ATTR" and _has_null(item):
            out.append(_method(item))
        elif _plain_attribute(item) and len(out) >= 2 and not _NULL_AFTER and out[-2].op == "PUSH_NULL" \
                and _plain_load(out[-1]):
            load = out.pop()
            out[-1] = _Item(load.op, None, _name(load), out[-1].offset)  # where the NULL was, if jumped to
            out.append(_method(item))
        elif item.op == "PUSH_NULL" and _NULL_AFTER and len(out) >= 2 and _plain_attribute(out[-1]) \
                and _plain_load(out[-2]):
            out[-1] = _method(out[-1])
        else:
            out.append(item)
            continue
        # 3.14 borrows the receiver of a method load, not of the plain attribute load.
        if len(out) >= 2 and out[-2].op == "LOAD_FAST_BORROW":
            out[-2] = _Item("LOAD_FAST", None, _name(out[-2]), out[-2].offset)
    return out


def _unfold_nulls(items: List[_Item]) -> Iterator[_Item]:
    """``LOAD_GLOBAL NULL + x`` as ``PUSH_NULL`` and ``LOAD_GLOBAL x`` (3.13+: the NULL after)."""
    for item in items:
        if item.op == "LOAD_GLOBAL" and _has_null(item):
            assert item.instr is not None
            load = _Item(item.op, None, item.instr.argval, item.offset)
            null = _Item("PUSH_NULL", None, None, item.offset)
            yield from (load, null) if _NULL_AFTER else (null, load)
        else:
            yield item


def _plain_attribute(item: _Item) -> bool:
    return item.op == "LOAD_ATTR" and not _has_null(item)


def _method(attribute: _Item) -> _Item:
    """The method load a LOAD_ATTR stands for."""
    return _Item("LOAD_METHOD", None, _name(attribute), attribute.offset)


def listing(code: CodeType) -> Listing:
    """The instructions of ``code`` (not of the code objects it holds) in the comparable form."""
    items = _method_calls(_items(code))
    index_of: Dict[int, int] = {}
    for position, item in enumerate(items):
        index_of.setdefault(item.offset, position)
    # A jump or table edge to a dropped (or absorbed) instruction lands on the next one kept.
    following = len(items)
    for offset in range(len(code.co_code), -1, -1):
        if offset in index_of:
            following = index_of[offset]
        else:
            index_of[offset] = following
    instructions: List[Instruction] = []
    for item in items:
        if item.instr is None:
            shown = item.op if item.name is None else "%s %s" % (item.op, item.name)
            instructions.append(Instruction(item.op, item.name, shown))
            continue
        arg = _argument(code, item.instr, index_of)
        shown = item.op
        if isinstance(arg, tuple) and arg[:1] == ("jump",):
            shown += " to #%d" % arg[1]
        elif item.instr.argrepr:
            shown += " " + item.instr.argrepr
        instructions.append(Instruction(item.op, arg, shown))
    _mask_bookkeeping(instructions)
    return Listing(instructions, _exception_table(code, index_of))


def _mask_bookkeeping(instructions: List[Instruction]) -> None:
    """Match any value for the qualname and first-line constants, which depend on where code sits.

    3.14 loads a first line below 256 with ``LOAD_SMALL_INT``, others with ``LOAD_CONST``.
    """
    for index in range(len(instructions) - 1):
        load, user = instructions[index], instructions[index + 1]
        if load.op not in ("LOAD_CONST", "LOAD_SMALL_INT"):
            continue
        qualname = user.op == "MAKE_FUNCTION" and isinstance(load.arg, tuple) and load.arg[0] is str
        stored = user.op == "STORE_NAME" and user.arg in _BOOKKEEPING_STORES
        if qualname or stored:
            instructions[index] = Instruction("LOAD_CONST", _ANY, "LOAD_CONST <%s>" % (
                "qualname" if qualname else user.arg))


def _exception_table(code: CodeType, index_of: Dict[int, int]) -> List[Tuple[int, int, int, int, bool]]:
    entries = getattr(dis.Bytecode(code), "exception_entries", None) or []
    table: List[Tuple[int, int, int, int, bool]] = []
    for entry in entries:
        start, end = index_of[entry.start], index_of[entry.end]
        if start >= end:
            continue  # covered only dropped instructions
        row = (start, end, index_of[entry.target], entry.depth, bool(entry.lasti))
        if table and table[-1][1] == start and table[-1][2:] == row[2:]:
            table[-1] = (table[-1][0], end) + row[2:]
        else:
            table.append(row)
    return table


def first_difference(a: CodeType, b: CodeType) -> Optional[Difference]:
    """None when ``a`` and ``b`` are identical instruction for instruction, else the first difference."""
    return _compare(a, b, a.co_name, {})


def _compare(a: CodeType, b: CodeType, where: str, memo: Dict[Tuple[int, int], Optional[Difference]]
             ) -> Optional[Difference]:
    key = (id(a), id(b))
    if key not in memo:
        memo[key] = _compare_code(a, b, where, memo)
    return memo[key]


def _compare_code(a: CodeType, b: CodeType, where: str, memo: dict) -> Optional[Difference]:
    for attribute in _ATTRIBUTES:
        left, right = getattr(a, attribute), getattr(b, attribute)
        if left != right:
            return Difference(attribute, "%s: %s %r vs %r" % (where, attribute, left, right))
    if a.co_flags & ~_CO_METHOD != b.co_flags & ~_CO_METHOD:
        return Difference("co_flags", "%s: co_flags %#x vs %#x" % (where, a.co_flags, b.co_flags))
    la, lb = listing(a), listing(b)
    for index, (x, y) in enumerate(zip(la.instructions, lb.instructions)):
        if x.op != y.op:
            return Difference("%s/%s" % (x.op, y.op), "%s: #%d %s vs %s" % (where, index, x.shown, y.shown))
        if isinstance(x.arg, tuple) and x.arg[:1] == ("code",) and isinstance(y.arg, tuple) \
                and y.arg[:1] == ("code",):
            nested = _compare(x.arg[1], y.arg[1], where + "." + x.arg[1].co_name, memo)
            if nested is not None:
                return nested
        elif x.arg != y.arg:
            jump = isinstance(x.arg, tuple) and x.arg[:1] == ("jump",)
            return Difference("%s (%s)" % (x.op, "target" if jump else "argument"), "%s: #%d %s vs %s" % (where, index, x.shown, y.shown))
    na, nb = len(la.instructions), len(lb.instructions)
    if na != nb:
        left = la.instructions[nb].op if na > nb else "END"
        right = lb.instructions[na].op if nb > na else "END"
        return Difference("%s/%s" % (left, right), "%s: %d vs %d instructions" % (where, na, nb))
    if la.exception_table != lb.exception_table:
        return Difference("exception table", "%s: %s vs %s" % (where, _short(la.exception_table),
                                                             _short(lb.exception_table)))
    return None


def _short(value: object, width: int = 60) -> str:
    text = repr(value)
    return text if len(text) <= width else text[:width - 3] + "..."
