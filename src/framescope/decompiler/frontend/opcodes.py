"""Pass 1: raw bytecode of the running interpreter → canonical instructions.

This is the one place that knows how CPython 3.8-3.14 spell the same operation.
Everything after it sees one spelling:

* jumps: ``JUMP`` (forward, backward, absolute, no-interrupt), ``POP_JUMP_IF_*`` (the
  3.11 forward/backward forms merged), ``FOR_ITER`` whose target is the first
  instruction after the loop's cleanup (``END_FOR``/``POP_ITER`` removed);
* binary and in-place operators: ``BINARY_OP`` with the operator symbol (``"+"``, ``"+="``);
  comparisons: ``COMPARE_OP`` with the symbol, ``IS_OP``/``CONTAINS_OP`` with the
  inversion flag, ``EXC_MATCH`` for the pre-3.11 exception-match comparison;
  ``PREP_RERAISE_STAR`` (the end of ``except*`` clauses), an intrinsic call on 3.12+;
* calls: ``CALL`` with the argument count, the keyword names (or ``None``) and how many
  callable slots it pops (1: the callable; 2: callable and self-or-NULL), and
  ``CALL_KW`` when the keyword names are on the stack;
* loads: superinstructions split, ``LOAD_FAST_*`` variants → ``LOAD_FAST``,
  ``LOAD_SMALL_INT`` → ``LOAD_CONST``, ``RETURN_CONST`` → ``LOAD_CONST`` + ``RETURN_VALUE``,
  ``LOAD_GLOBAL``/``LOAD_ATTR`` with the NULL/method bit → an extra ``PUSH_NULL`` /
  ``LOAD_METHOD``;
* pattern matching: ``MATCH_CLASS`` and ``MATCH_KEYS`` push their result (a tuple, or
  None for no match), which a ``POP_JUMP_IF_NONE`` tests on a copy (3.10's success flag
  becomes that copy and test);
* no-ops dropped: ``CACHE``, ``EXTENDED_ARG``, ``NOP``, ``RESUME``, ``TO_BOOL``,
  ``NOT_TAKEN``, ``PRECALL``, ``KW_NAMES`` (folded into the following ``CALL``), and the
  prologue's ``MAKE_CELL`` and ``COPY_FREE_VARS``.

Exception ranges come from the exception table on 3.11+ and from the block stack
(``SETUP_FINALLY``/``SETUP_WITH``/``POP_BLOCK``) on 3.8-3.10, see `blockstack.py`.
"""
import dis
import functools
import inspect
from types import CodeType
from typing import Callable, Dict, List, Optional, Set

from framescope.decompiler.frontend import versions
from framescope.decompiler.frontend import bytecode
from framescope.decompiler.frontend.instructions import JUMPS, POP_JUMPS, Handler, Instr

#: Binary operators as the ``BINARY_*``/``INPLACE_*`` opcodes of 3.8-3.10 name them.
LEGACY_BINARY = {
    "ADD": "+", "SUBTRACT": "-", "MULTIPLY": "*", "TRUE_DIVIDE": "/", "FLOOR_DIVIDE": "//",
    "MODULO": "%", "POWER": "**", "MATRIX_MULTIPLY": "@", "LSHIFT": "<<", "RSHIFT": ">>",
    "AND": "&", "OR": "|", "XOR": "^",
}

#: Unary operators by opname (3.12+ spells ``+x`` as an intrinsic, see ``op_CALL_INTRINSIC_1``).
UNARY = {"UNARY_POSITIVE": "+", "UNARY_NEGATIVE": "-", "UNARY_INVERT": "~", "UNARY_NOT": "not"}

#: Renamed operations whose behaviour is the same.
SAME_AS = {
    "JUMP_FORWARD": "JUMP", "JUMP_ABSOLUTE": "JUMP", "JUMP_BACKWARD": "JUMP",
    "JUMP_BACKWARD_NO_INTERRUPT": "JUMP", "JUMP_NO_INTERRUPT": "JUMP",
    "POP_JUMP_FORWARD_IF_FALSE": "POP_JUMP_IF_FALSE", "POP_JUMP_BACKWARD_IF_FALSE": "POP_JUMP_IF_FALSE",
    "POP_JUMP_FORWARD_IF_TRUE": "POP_JUMP_IF_TRUE", "POP_JUMP_BACKWARD_IF_TRUE": "POP_JUMP_IF_TRUE",
    "POP_JUMP_FORWARD_IF_NONE": "POP_JUMP_IF_NONE", "POP_JUMP_BACKWARD_IF_NONE": "POP_JUMP_IF_NONE",
    "POP_JUMP_FORWARD_IF_NOT_NONE": "POP_JUMP_IF_NOT_NONE",
    "POP_JUMP_BACKWARD_IF_NOT_NONE": "POP_JUMP_IF_NOT_NONE",
    "LOAD_CONST_IMMORTAL": "LOAD_CONST", "LOAD_CONST_MORTAL": "LOAD_CONST", "LOAD_SMALL_INT": "LOAD_CONST",
    "POP_ITER": "POP_TOP", "LOAD_CLASSDEREF": "LOAD_DEREF",
}

#: Operations with no effect on what the source says.
DROPPED = frozenset({
    "CACHE", "EXTENDED_ARG", "NOP", "RESUME", "TO_BOOL", "NOT_TAKEN", "PRECALL", "KW_NAMES",
    # The prologue of a function with cells (3.11+): in the block of the first statement it
    # would hide a loop test that starts the function from the loop's copy of it.
    "MAKE_CELL", "COPY_FREE_VARS",
})

#: Loads whose argument names the constant/local directly through ``argval``.
SIMPLE_ARG = frozenset({
    "LOAD_CONST", "LOAD_FAST", "STORE_FAST", "DELETE_FAST", "LOAD_DEREF", "STORE_DEREF", "DELETE_DEREF",
    "LOAD_CLOSURE", "LOAD_NAME", "STORE_NAME", "DELETE_NAME", "STORE_GLOBAL", "DELETE_GLOBAL",
    "LOAD_FROM_DICT_OR_DEREF", "LOAD_FROM_DICT_OR_GLOBALS", "STORE_ATTR", "DELETE_ATTR",
    "IMPORT_NAME", "IMPORT_FROM", "LOAD_FAST_AND_CLEAR", "MAKE_CELL", "COPY_FREE_VARS",
})


def malformed(code: CodeType) -> Optional[str]:
    """Why ``code``'s bytecode is none a compiler wrote, in a way that would make CPython's
    own readers of it (``co_code``, ``dis``) or the decompiler fail, or None (see
    `wellformed`, which reads it without those readers)."""
    from framescope.decompiler.frontend.wellformed import malformed as check

    return check(code)


def malformed_bytecode(raw: bytes) -> Optional[str]:
    """Why the bytecode string ``raw`` is not one CPython could have written, in the ways that
    make CPython itself read or write past its end: an unknown opcode, or an instruction
    whose inline caches (3.11+) run past the last code unit; None if it is not. Such code
    comes from corrupt ``.pyc`` files or hand-made code objects, never from a compiler."""
    if not versions.INLINE_CACHES:
        return None  # dis reads these in Python and fails cleanly
    from framescope.decompiler.frontend.wellformed import malformed_layout

    return malformed_layout(raw)


def jumps_and_loops(code: CodeType) -> tuple:
    """(jump instructions, jumps back) in ``code``'s bytecode, read from its bytes alone.

    Cheap where decoding is not: ``dis`` on 3.8 takes quadratic time on large functions.
    """
    raw = code.co_code
    jumps = back = arg = 0
    for offset in range(0, len(raw) - 1, 2):
        op, arg = raw[offset], arg << 8 | raw[offset + 1]
        name = dis.opname[op]
        if name == "EXTENDED_ARG":
            continue
        if op in dis.hasjrel or op in dis.hasjabs:
            jumps += 1
            if "BACKWARD" in name or (name == "JUMP_ABSOLUTE" and arg * (2 if versions.JUMPS_COUNT_UNITS else 1) <= offset):
                back += 1
        arg = 0
    return jumps, back


class Translator:
    """Translate one code object's raw instructions; one method per raw opcode family."""

    def __init__(self, code: CodeType) -> None:
        self.code = code
        self.out: List[Instr] = []
        self.kwnames = None  # 3.11-3.12 KW_NAMES argument waiting for its CALL
        self.raw = list(dis.get_instructions(code))
        self.handlers = exception_handlers(code, self.raw)
        self.line: Optional[int] = None
        self.none_test = False  # 3.10: the next POP_JUMP_IF_FALSE tests a match result for None

    def run(self) -> List[Instr]:
        for ins in self.raw:
            line = starts_line(ins)
            if line is not None:
                self.line = line
            method: Optional[Callable] = getattr(self, "op_" + ins.opname, None)
            family, _, operator = ins.opname.partition("_")
            if method is None and family in ("BINARY", "INPLACE") and operator in LEGACY_BINARY:
                symbol = LEGACY_BINARY[operator] + ("=" if family == "INPLACE" else "")
                self.emit(ins, "BINARY_OP", symbol)
            elif method is None and ins.opname in UNARY:
                self.emit(ins, "UNARY_OP", UNARY[ins.opname])
            elif method is not None:
                method(ins)
            elif ins.opname in DROPPED:
                continue
            elif ins.opname in SAME_AS:
                self.emit(ins, SAME_AS[ins.opname], ins.argval)
            else:
                self.emit(ins, ins.opname, ins.argval if ins.opname in SIMPLE_ARG else ins.arg)
        instrs = drop_loop_cleanup(self.out)
        if versions.FINALLY_SUBROUTINES:
            from framescope.decompiler.frontend.finally38 import inline_finally

            # First point jumps at dropped instructions (an ``EXTENDED_ARG`` prefix) to the kept
            # ones: a copied finally body moves only the offsets it holds.
            instrs = inline_finally(retarget(instrs), len(self.code.co_code))
        return cover_jumps(retarget(fold_async_for(fold_send_loops(drop_block_setup(instrs)))))

    def emit(self, ins, op: str, arg=None, target: Optional[int] = None) -> Instr:
        if self.none_test:
            self.none_test = False
            if op == "POP_JUMP_IF_FALSE":
                op = "POP_JUMP_IF_NONE"
        if target is None and (op in JUMPS or op == "CALL_FINALLY"):
            target = ins.argval
            arg = None
        instr = Instr(op, arg, ins.offset, target, self.line, self.handlers.get(ins.offset), ins.opname)
        self.out.append(instr)
        return instr

    # -- operators ---------------------------------------------------------------------------------
    def op_BINARY_OP(self, ins) -> None:
        if ins.argrepr == "[]":  # 3.14 spells subscription as a binary operator
            self.emit(ins, "BINARY_SUBSCR")
        else:
            self.emit(ins, "BINARY_OP", ins.argrepr)

    def op_COMPARE_OP(self, ins) -> None:
        symbol = ins.argval
        if symbol in ("in", "not in"):
            self.emit(ins, "CONTAINS_OP", int(symbol == "not in"))
        elif symbol in ("is", "is not"):
            self.emit(ins, "IS_OP", int(symbol == "is not"))
        elif symbol == "exception match":
            self.emit(ins, "EXC_MATCH")
        else:
            self.emit(ins, "COMPARE_OP", symbol)

    def op_CALL_INTRINSIC_1(self, ins) -> None:
        name = ins.argrepr
        if name == "INTRINSIC_UNARY_POSITIVE":
            self.emit(ins, "UNARY_OP", "+")
        elif name == "INTRINSIC_IMPORT_STAR":
            self.emit(ins, "IMPORT_STAR", True)  # (its result is popped)
        elif name == "INTRINSIC_TYPEALIAS" and self.out and self.out[-1].op == "BUILD_TUPLE" \
                and self.out[-1].arg == 3:
            self.out.pop()  # the alias's (name, type parameters, lazy value)
            self.emit(ins, "TYPE_ALIAS")
        elif name == "INTRINSIC_LIST_TO_TUPLE":
            self.emit(ins, "LIST_TO_TUPLE")
        elif name == "INTRINSIC_PRINT":
            self.emit(ins, "PRINT_EXPR")
        elif name == "INTRINSIC_ASYNC_GEN_WRAP":
            pass  # 3.12+: wraps what an async generator yields; the source does not say it
        else:
            self.emit(ins, "CALL_INTRINSIC_1", name)

    def op_CALL_INTRINSIC_2(self, ins) -> None:
        if ins.argrepr == "INTRINSIC_PREP_RERAISE_STAR":
            self.emit(ins, "PREP_RERAISE_STAR")  # 3.11 has an opcode of its own
        else:
            self.emit(ins, "CALL_INTRINSIC_2", ins.argrepr)

    # -- loads and stores --------------------------------------------------------------------------
    def op_LOAD_GLOBAL(self, ins) -> None:
        if versions.LOAD_GLOBAL_NULL_BIT and ins.arg & 1:
            self.emit(ins, "PUSH_NULL")
        if versions.ASSERT_LOADS_GLOBAL and ins.argval == "AssertionError" \
                and not self.code.co_flags & inspect.CO_NEWLOCALS:
            self.emit(ins, "LOAD_ASSERTION_ERROR")
            return
        self.emit(ins, "LOAD_GLOBAL", ins.argval)

    def op_LOAD_ATTR(self, ins) -> None:
        if versions.LOAD_ATTR_METHOD_BIT and ins.arg & 1:
            self.emit(ins, "LOAD_METHOD", ins.argval)
        else:
            self.emit(ins, "LOAD_ATTR", ins.argval)

    def op_LOAD_METHOD(self, ins) -> None:
        self.emit(ins, "LOAD_METHOD", ins.argval)

    def op_LOAD_SUPER_ATTR(self, ins) -> None:
        # arg bit 0: method load; bit 1: the two-argument form super(cls, self).
        self.emit(ins, "LOAD_SUPER_ATTR", (ins.argval, bool(ins.arg & 1), bool(ins.arg & 2)))

    def op_RETURN_CONST(self, ins) -> None:
        self.emit(ins, "LOAD_CONST", ins.argval)
        self.emit(ins, "RETURN_VALUE")

    def _pair(self, ins, first: str, second: str) -> None:
        a, b = ins.argval
        self.emit(ins, self.load_kind(first, a), a)
        self.emit(ins, self.load_kind(second, b), b)

    def load_kind(self, op: str, name: str) -> str:
        """3.13+ compile ``LOAD_CLOSURE`` (push a variable's cell object) to ``LOAD_FAST``:
        a ``LOAD_FAST`` of a cell or free variable is that; its value is ``LOAD_DEREF``."""
        if op == "LOAD_FAST" and versions.CELLS_LOADED_BY_LOAD_FAST and (name in self.code.co_cellvars or name in self.code.co_freevars):
            return "LOAD_CLOSURE"
        return op

    def op_LOAD_FAST(self, ins) -> None:
        self.emit(ins, self.load_kind("LOAD_FAST", ins.argval), ins.argval)

    op_LOAD_FAST_CHECK = op_LOAD_FAST_BORROW = op_LOAD_FAST

    def op_LOAD_FAST_LOAD_FAST(self, ins) -> None:
        self._pair(ins, "LOAD_FAST", "LOAD_FAST")

    op_LOAD_FAST_BORROW_LOAD_FAST_BORROW = op_LOAD_FAST_LOAD_FAST

    def op_STORE_FAST_LOAD_FAST(self, ins) -> None:
        self._pair(ins, "STORE_FAST", "LOAD_FAST")

    def op_STORE_FAST_STORE_FAST(self, ins) -> None:
        self._pair(ins, "STORE_FAST", "STORE_FAST")

    def op_LOAD_COMMON_CONSTANT(self, ins) -> None:
        value = ins.argval
        if value is AssertionError or ins.argrepr == "AssertionError":
            self.emit(ins, "LOAD_ASSERTION_ERROR")
        else:
            self.emit(ins, "LOAD_COMMON_CONSTANT", getattr(value, "__name__", None) or ins.argrepr)

    def op_LOAD_SPECIAL(self, ins) -> None:
        self.emit(ins, "LOAD_SPECIAL", ins.argrepr)

    # -- calls -------------------------------------------------------------------------------------
    def op_KW_NAMES(self, ins) -> None:  # 3.11-3.12: names for the next CALL
        self.kwnames = self.code.co_consts[ins.arg]

    def op_CALL(self, ins) -> None:
        self.emit(ins, "CALL", (ins.arg, self.kwnames, 2))
        self.kwnames = None

    def op_CALL_KW(self, ins) -> None:  # 3.13+: names tuple on top of the stack
        self.emit(ins, "CALL_KW", (ins.arg, 2))

    def op_CALL_FUNCTION(self, ins) -> None:
        self.emit(ins, "CALL", (ins.arg, None, 1))

    def op_CALL_METHOD(self, ins) -> None:
        self.emit(ins, "CALL", (ins.arg, None, 2))

    def op_CALL_FUNCTION_KW(self, ins) -> None:
        self.emit(ins, "CALL_KW", (ins.arg, 1))

    def op_CALL_FUNCTION_EX(self, ins) -> None:
        # slots: 1 when only the callable is below the arguments (3.8-3.10), 2 with a NULL slot.
        if versions.CALL_EX_KWARGS_SLOT:
            self.emit(ins, "CALL_FUNCTION_EX", (None, 2))  # kwargs slot always present, maybe NULL
        else:
            self.emit(ins, "CALL_FUNCTION_EX", (bool(ins.arg & 1), 2 if versions.CALL_EX_NULL_SLOT else 1))

    def op_MAKE_FUNCTION(self, ins) -> None:
        # (flags, whether the qualified name is on the stack)
        self.emit(ins, "MAKE_FUNCTION", (ins.arg or 0, versions.MAKE_FUNCTION_QUALNAME))

    def op_SET_FUNCTION_ATTRIBUTE(self, ins) -> None:
        self.emit(ins, "SET_FUNCTION_ATTRIBUTE", ins.arg)

    # -- f-strings ---------------------------------------------------------------------------------
    def op_FORMAT_VALUE(self, ins) -> None:
        flags = ins.arg
        conversion = {0: -1, 1: 115, 2: 114, 3: 97}[flags & 3]
        self.emit(ins, "FORMAT_VALUE", (conversion, bool(flags & 4)))

    def op_CONVERT_VALUE(self, ins) -> None:
        self.emit(ins, "CONVERT_VALUE", {1: 115, 2: 114, 3: 97}[ins.arg])

    def op_FORMAT_SIMPLE(self, ins) -> None:
        self.emit(ins, "FORMAT_VALUE", (-1, False))

    def op_FORMAT_WITH_SPEC(self, ins) -> None:
        self.emit(ins, "FORMAT_VALUE", (-1, True))

    # -- pattern matching --------------------------------------------------------------------------
    def op_MATCH_CLASS(self, ins) -> None:
        self.emit(ins, "MATCH_CLASS", ins.arg)
        self.match_result(ins)

    def op_MATCH_KEYS(self, ins) -> None:
        self.emit(ins, "MATCH_KEYS")
        self.match_result(ins)

    def match_result(self, ins) -> None:
        """3.10 pushes a success flag over the result; 3.11+ tests a copy of the result for None."""
        if versions.MATCH_SUCCESS_FLAG:
            self.emit(ins, "COPY", 1)
            self.none_test = True

    # -- stack shuffles ----------------------------------------------------------------------------
    def op_DUP_TOP(self, ins) -> None:
        self.emit(ins, "COPY", 1)

    def op_DUP_TOP_TWO(self, ins) -> None:
        self.emit(ins, "COPY", 2)
        self.emit(ins, "COPY", 2)

    def op_ROT_TWO(self, ins) -> None:
        self.emit(ins, "SWAP", 2)

    def op_ROT_THREE(self, ins) -> None:
        self.emit(ins, "ROT", 3)

    def op_ROT_FOUR(self, ins) -> None:
        self.emit(ins, "ROT", 4)

    def op_ROT_N(self, ins) -> None:
        self.emit(ins, "ROT", ins.arg)

    # -- legacy collection building (3.8) ----------------------------------------------------------
    def op_BUILD_TUPLE_UNPACK(self, ins) -> None:
        self.emit(ins, "BUILD_UNPACK", ("tuple", ins.arg))

    def op_BUILD_TUPLE_UNPACK_WITH_CALL(self, ins) -> None:
        self.emit(ins, "BUILD_UNPACK", ("tuple", ins.arg))

    def op_BUILD_LIST_UNPACK(self, ins) -> None:
        self.emit(ins, "BUILD_UNPACK", ("list", ins.arg))

    def op_BUILD_SET_UNPACK(self, ins) -> None:
        self.emit(ins, "BUILD_UNPACK", ("set", ins.arg))

    def op_BUILD_MAP_UNPACK(self, ins) -> None:
        self.emit(ins, "BUILD_UNPACK", ("dict", ins.arg))

    def op_BUILD_MAP_UNPACK_WITH_CALL(self, ins) -> None:
        self.emit(ins, "BUILD_UNPACK", ("dict", ins.arg & 0xFF))

    # -- generators --------------------------------------------------------------------------------
    def op_YIELD_VALUE(self, ins) -> None:
        self.emit(ins, "YIELD_VALUE")

    def op_RERAISE(self, ins) -> None:
        self.emit(ins, "RERAISE", ins.arg or 0)

    # -- exceptions --------------------------------------------------------------------------------
    def op_JUMP_IF_NOT_EXC_MATCH(self, ins) -> None:  # 3.9-3.10
        self.emit(ins, "EXC_MATCH")
        self.emit(ins, "POP_JUMP_IF_FALSE", target=ins.argval)

    def op_POP_EXCEPT(self, ins) -> None:
        # Values released: the saved exception (3.11+) or its type/value/traceback triple.
        self.emit(ins, "POP_EXCEPT", 1 if versions.EXCEPTION_TABLE else 3)

    def op_SETUP_WITH(self, ins) -> None:
        self.emit(ins, "BEFORE_WITH")

    def op_SETUP_FINALLY(self, ins) -> None:
        self.emit(ins, "SETUP_FINALLY", target=ins.argval)


def starts_line(ins) -> Optional[int]:
    """The source line an instruction starts, if it starts one (3.13 renamed the field)."""
    if versions.LINE_NUMBER_FIELD:
        return ins.line_number if ins.starts_line else None
    return ins.starts_line


def exception_handlers(code: CodeType, raw) -> Dict[int, Handler]:
    """Offset → handler for every instruction inside an exception range."""
    if versions.EXCEPTION_TABLE:
        result = {}
        for entry in dis.Bytecode(code).exception_entries:
            handler = Handler(entry.target, entry.depth, entry.lasti)
            for ins in raw:
                if entry.start <= ins.offset < entry.end:
                    result[ins.offset] = handler
        return result
    from framescope.decompiler.frontend.blockstack import legacy_handlers

    return legacy_handlers(code, raw)


def drop_loop_cleanup(instrs: List[Instr]) -> List[Instr]:
    """Remove ``END_FOR`` (and 3.13+'s following iterator pop) and retarget ``FOR_ITER`` past it.

    From 3.12 a ``FOR_ITER`` jumps to an ``END_FOR`` that pops the exhausted iterator;
    before 3.12 it jumped straight past the loop.  Canonical ``FOR_ITER`` always does
    the latter.
    """
    if not versions.FOR_ITER_TO_END_FOR:
        return instrs
    removed = {}
    keep: List[Instr] = []
    i = 0
    while i < len(instrs):
        ins = instrs[i]
        if ins.op == "END_FOR":
            skip = 2 if versions.END_FOR_THEN_POP_TOP and i + 1 < len(instrs) and instrs[i + 1].op == "POP_TOP" else 1
            nxt = instrs[i + skip].offset if i + skip < len(instrs) else None
            for dead in instrs[i:i + skip]:
                removed[dead.offset] = nxt
            i += skip
            continue
        keep.append(ins)
        i += 1
    for ins in keep:
        while ins.target in removed and ins.target is not None:
            ins.target = removed[ins.target]
    return keep


def fold_send_loops(instrs: List[Instr]) -> List[Instr]:
    """Fold 3.11+'s ``SEND``/``YIELD_VALUE``/``JUMP`` loop (and 3.12+'s ``END_SEND``) into ``YIELD_FROM``.

    ``yield from x`` and ``await x`` compile to that loop from 3.11; up to 3.10 it is
    one ``YIELD_FROM`` instruction, the canonical spelling.
    """
    if not versions.SEND_LOOPS:
        return instrs
    out: List[Instr] = []
    end_sends = set()
    i = 0
    while i < len(instrs):
        ins = instrs[i]
        if (ins.op == "SEND" and i + 2 < len(instrs) and instrs[i + 1].op == "YIELD_VALUE"
                and instrs[i + 2].op == "JUMP" and instrs[i + 2].target == ins.offset):
            handler = out[-1].handler if out else None
            out.append(Instr("YIELD_FROM", None, ins.offset, None, ins.line, handler, "SEND"))
            end_sends.add(ins.target)
            i += 3
            if i < len(instrs) and instrs[i].op == "CLEANUP_THROW":
                i += 1  # 3.14 places the loop's throw() handler right after it
            continue
        out.append(ins)
        i += 1
    if versions.END_SEND:
        out = [ins for ins in out if not (ins.op == "END_SEND" and ins.offset in end_sends)]
    return out


def fold_async_for(instrs: List[Instr]) -> List[Instr]:
    """``GET_ANEXT; LOAD_CONST None; YIELD_FROM`` guarded by ``END_ASYNC_FOR`` → ``FOR_ITER "async"``.

    An ``async for`` gets its next item by awaiting ``__anext__`` and leaves the loop
    when that raises ``StopAsyncIteration``, which ``END_ASYNC_FOR`` catches.
    """
    ends = {ins.offset: i for i, ins in enumerate(instrs) if ins.op == "END_ASYNC_FOR"}
    if not ends:
        return instrs
    out: List[Instr] = []
    used = set()
    i = 0
    while i < len(instrs):
        ins = instrs[i]
        handler = ins.handler
        if (ins.op == "GET_ANEXT" and i + 2 < len(instrs) and instrs[i + 1].op == "LOAD_CONST"
                and instrs[i + 2].op == "YIELD_FROM" and handler is not None and handler.target in ends):
            end = ends[handler.target]
            exit = instrs[end + 1].offset if end + 1 < len(instrs) else None
            out.append(Instr("FOR_ITER", "async", ins.offset, exit, ins.line, instrs[end].handler, ins.raw))
            used.add(handler.target)
            i += 3
            continue
        out.append(ins)
        i += 1
    return [ins for ins in out if not (ins.op == "END_ASYNC_FOR" and ins.offset in used)]


def drop_block_setup(instrs: List[Instr]) -> List[Instr]:
    """Remove 3.8-3.10's ``SETUP_FINALLY``/``POP_BLOCK``: their ranges are already in ``handler``."""
    if versions.EXCEPTION_TABLE:
        return instrs
    keep: List[Instr] = []
    removed: Dict[int, Optional[int]] = {}
    pending: List[int] = []
    previous: Optional[Instr] = None
    for ins in instrs:
        empty_range = ins.op == "POP_BLOCK" and previous is not None and previous.op == "SETUP_FINALLY"
        previous = ins
        if empty_range:
            keep_empty_range(ins)
        elif ins.op in ("SETUP_FINALLY", "POP_BLOCK", "SETUP_ASYNC_WITH"):
            pending.append(ins.offset)
            continue
        for offset in pending:
            removed[offset] = ins.offset
        pending = []
        keep.append(ins)
    for ins in keep:
        seen = 0
        while ins.target in removed and seen < 100:
            ins.target = removed[ins.target]
            seen += 1
    return keep


def keep_empty_range(pop_block: Instr) -> None:
    """Turn the ``POP_BLOCK`` right after its ``SETUP_FINALLY`` into a ``NOP`` its handler covers.

    A try body that only ends the statement (``return <constant>``, ``pass``, ``break``)
    puts nothing between the two: dropping both would leave no instruction in the range,
    and the handler unreached; the ``NOP`` keeps the try statement. (3.11+ drops such a
    handler with the range, so there the try leaves no trace.)
    """
    pop_block.op = "NOP"


def retarget(instrs: List[Instr]) -> List[Instr]:
    """Point jumps at dropped instructions (``TO_BOOL``, ``NOP``...) to the next kept one."""
    import bisect

    offsets = sorted({ins.offset for ins in instrs})
    present = set(offsets)
    for ins in instrs:
        if ins.target is not None and ins.target not in present:
            i = bisect.bisect_left(offsets, ins.target)
            ins.target = offsets[i] if i < len(offsets) else None
        if ins.handler is not None and ins.handler.target not in present:
            i = bisect.bisect_left(offsets, ins.handler.target)
            if i < len(offsets):
                ins.handler = Handler(offsets[i], ins.handler.depth, ins.handler.lasti)
    return instrs


def cover_jumps(instrs: List[Instr]) -> List[Instr]:
    """Give a jump that tests a value computed in a try or with body that body's handler.

    Jumps cannot raise, so the exception table may leave them out of the range
    around them (3.12+ does); the structurer needs the statement's blocks whole.
    """
    for prev, ins in zip(instrs, instrs[1:]):
        if ins.handler is None and prev.handler is not None and ins.op in POP_JUMPS:
            ins.handler = prev.handler
    return instrs


def canonical_instructions(code: CodeType) -> List[Instr]:
    """The canonical instruction list of ``code`` (pass 1 of the decompiler)."""
    try:
        return list(_canonical(code))
    except TypeError:  # unhashable constants (machine-made code can hold a dict): no cache
        return Translator(code).run()


@functools.lru_cache(maxsize=64)
def _canonical(code: CodeType) -> tuple:
    return tuple(Translator(code).run())


def docstring(code: CodeType) -> Optional[str]:
    """The docstring stored in a function's code object, if it has one.

    Up to 3.13 a function's first constant is its docstring or ``None`` (lambdas and
    comprehensions store no slot); 3.14 has a flag for it instead.
    """
    if code.co_name in ("<lambda>", "<listcomp>", "<setcomp>", "<dictcomp>", "<genexpr>", "<module>"):
        return None
    if versions.DOCSTRING_FLAG:
        has_doc = code.co_flags & 0x4000000
        return code.co_consts[0] if has_doc and code.co_consts else None
    first = code.co_consts[0] if code.co_consts else None
    return first if isinstance(first, str) else None


def sets_up_annotations(code: CodeType) -> bool:
    """Whether a class or module body makes its ``__annotations__`` dict (up to 3.13: it
    has annotated assignments)."""
    return any(ins.op == "SETUP_ANNOTATIONS" for ins in canonical_instructions(code))


def used_locals(code: CodeType) -> Set[str]:
    """The parameters of ``code`` and every local its instructions load, store or delete."""
    used = set(code.co_varnames[:code.co_argcount + code.co_kwonlyargcount
                                + bool(code.co_flags & inspect.CO_VARARGS)
                                + bool(code.co_flags & inspect.CO_VARKEYWORDS)])
    for _, op, opname, _, argval in bytecode.instructions(code):
        if op in _HAS_LOCAL or opname.startswith(("LOAD_FAST", "STORE_FAST")):
            used.update(argval if isinstance(argval, tuple) else (argval,))
    return used


_HAS_LOCAL = frozenset(dis.haslocal)
