"""The instruction graph that `equivalence` compares: one node per operation.

Each instruction becomes a node with a normalised name, an argument compared by value
(never by index into ``co_consts`` or ``co_names``) and its successors: the next node
unless it cannot fall through, its jump target, and on 3.11+ its exception handler (with
stack depth and ``lasti``). Bookkeeping that the compiler lays out differently for the
same program (``NOP``, superinstructions, the order of a run of stores, method-call
spellings) is folded here, so that the comparison only has to walk two graphs.
"""
from __future__ import annotations

import dis
from types import CodeType
from typing import Dict, List, Optional, Tuple

from framescope.decompiler.frontend import versions
from framescope.decompiler.frontend.bytecode import argrepr, instructions

# Instructions that carry no behaviour: padding, line markers, branch hints.
_DROP = frozenset(["CACHE", "EXTENDED_ARG", "NOP", "NOT_TAKEN", "RESUME"])

# Different spellings of the same operation.
_RENAME = {
    "JUMP_FORWARD": "JUMP",
    "JUMP_BACKWARD": "JUMP",
    "JUMP_ABSOLUTE": "JUMP",
    "JUMP_BACKWARD_NO_INTERRUPT": "JUMP",
    "POP_JUMP_FORWARD_IF_FALSE": "POP_JUMP_IF_FALSE",
    "POP_JUMP_BACKWARD_IF_FALSE": "POP_JUMP_IF_FALSE",
    "POP_JUMP_FORWARD_IF_TRUE": "POP_JUMP_IF_TRUE",
    "POP_JUMP_BACKWARD_IF_TRUE": "POP_JUMP_IF_TRUE",
    "POP_JUMP_FORWARD_IF_NONE": "POP_JUMP_IF_NONE",
    "POP_JUMP_BACKWARD_IF_NONE": "POP_JUMP_IF_NONE",
    "POP_JUMP_FORWARD_IF_NOT_NONE": "POP_JUMP_IF_NOT_NONE",
    "POP_JUMP_BACKWARD_IF_NOT_NONE": "POP_JUMP_IF_NOT_NONE",
    "LOAD_FAST_CHECK": "LOAD_FAST",
    "LOAD_FAST_BORROW": "LOAD_FAST",
    "LOAD_SMALL_INT": "LOAD_CONST",
}

# Superinstructions (and RETURN_CONST) split into the plain instructions they fuse.
_SPLIT = {
    "LOAD_FAST_LOAD_FAST": ("LOAD_FAST", "LOAD_FAST"),
    "LOAD_FAST_BORROW_LOAD_FAST_BORROW": ("LOAD_FAST", "LOAD_FAST"),
    "STORE_FAST_LOAD_FAST": ("STORE_FAST", "LOAD_FAST"),
    "STORE_FAST_STORE_FAST": ("STORE_FAST", "STORE_FAST"),
    "RETURN_CONST": ("LOAD_CONST", "RETURN_VALUE"),
}

# A conditional jump is "go to A when the test holds, else to B": jumping on
# true to X is jumping on false to the next instruction, with the successors
# swapped.  3.12+ picks either spelling depending on where the blocks landed.
_SWAPPED = {"POP_JUMP_IF_TRUE": "POP_JUMP_IF_FALSE", "POP_JUMP_IF_NOT_NONE": "POP_JUMP_IF_NONE"}

# Jumps that keep the tested value when they jump and pop it otherwise: whether they jump on true.
_OR_POP = {"JUMP_IF_FALSE_OR_POP": False, "JUMP_IF_TRUE_OR_POP": True}

# Instructions that cannot raise: their exception handler, if any, is never used.  A
# conditional jump calls ``__bool__`` up to 3.12; from 3.13 ``TO_BOOL`` does that first.
CANNOT_RAISE = frozenset(["JUMP", "POP_JUMP_IF_NONE", "NOP"] + (["POP_JUMP_IF_FALSE"] if versions.TO_BOOL else []))

# After these (normalised) instructions control never reaches the next one.
_NO_FALLTHROUGH = frozenset(["JUMP", "RETURN_VALUE", "RAISE_VARARGS", "RERAISE", "INTERPRETER_EXIT"])

# 3.14's END_ASYNC_FOR names the loop it ends for monitoring only ("from L6"): no edge.
_NOT_AN_EDGE = frozenset(["END_ASYNC_FOR"])

# 3.13+ list every jump in hasjump; older versions split them into relative and absolute.
_JUMPS = frozenset(getattr(dis, "hasjump", [])) | frozenset(dis.hasjrel) | frozenset(dis.hasjabs)
_CONSTS = frozenset(dis.hasconst) | frozenset(
    dis.opmap[name] for name in ("LOAD_SMALL_INT", "RETURN_CONST") if name in dis.opmap
)
_NAMES = frozenset(dis.hasname) | frozenset(dis.haslocal) | frozenset(dis.hasfree)

# Low bits of the argument that dis folds away from argval but that change
# behaviour: "load a method" (3.12+ LOAD_ATTR), "method / two-argument super"
# (3.12+ LOAD_SUPER_ATTR).  3.11+ LOAD_GLOBAL's "push NULL too" bit becomes a
# PUSH_NULL node.
_ARG_BITS: Dict[str, int] = {}
if versions.LOAD_ATTR_METHOD_BIT:
    _ARG_BITS["LOAD_ATTR"] = 1
    _ARG_BITS["LOAD_SUPER_ATTR"] = 3

# Loads of one name, without a NULL.
_PLAIN_LOADS = frozenset(["LOAD_FAST", "LOAD_DEREF", "LOAD_NAME", "LOAD_GLOBAL"])

# Instructions that only move values from the stack to locals or drop them.
_STACK_STORES = frozenset(["SWAP", "STORE_FAST", "POP_TOP"])

# Node indices that are not instructions.
END = -1  # control runs off the end of the bytecode
_SPIN = -2  # a cycle of unconditional jumps: an empty infinite loop


def _constant(code: CodeType, name: str, arg: int) -> object:
    """The constant an instruction loads (3.11's dis leaves KW_NAMES' argval unknown)."""
    if name == "LOAD_SMALL_INT":
        return arg
    return code.co_consts[arg]


def _row(name: str, shown: str, arg: object, is_const: bool, offset: int, plain: bool) -> tuple:
    """One node's row for `NodeGraph`: (shown, swapped, op, arg, is_const, offset, plain)."""
    return (shown, name in _SWAPPED, _SWAPPED.get(name, name), arg, is_const, offset, plain)


class _Any:
    """An argument that is layout- or name-dependent bookkeeping (a qualname, a line number)."""

    def __repr__(self) -> str:
        return "<any>"


_ANY = _Any()


class _HandlerCursor:
    """The exception table entry covering each offset, asked in increasing order."""

    def __init__(self, entries: list) -> None:
        self.entries = entries
        self.index = 0

    def entry(self, at: int):
        entries, count = self.entries, len(self.entries)
        if self.index >= count:
            return None
        while self.index < count and entries[self.index].end <= at:
            self.index += 1
        if self.index < count and entries[self.index].start <= at:
            return entries[self.index]
        return None


def _node_rows(code: CodeType, rows: List[tuple], at: int, opcode: int, name: str, number, argval) -> bool:
    """Append the nodes of one instruction to ``rows``; whether it is an edge to ``argval``."""
    if name in _SPLIT:
        if name == "RETURN_CONST":
            values = (_constant(code, name, number), None)  # type: ignore[arg-type]
        else:
            values = argval
        for part, value in zip(_SPLIT[name], values):
            rows.append(_row(part, name, value, part == "LOAD_CONST", at, False))
        return False
    shown = name
    name = _RENAME.get(name, name)
    is_const = opcode in _CONSTS
    edge = False
    if opcode in _JUMPS:
        arg = None
        edge = name not in _NOT_AN_EDGE
    elif is_const:
        arg = _constant(code, shown, number)  # type: ignore[arg-type]
    elif opcode in _NAMES:
        bits = _ARG_BITS.get(name)
        arg = argval if bits is None else (argval, number & bits)  # type: ignore[operator]
    else:
        arg = number
    if name == "LOAD_GLOBAL" and versions.LOAD_GLOBAL_NULL_BIT and number & 1:  # type: ignore[operator]
        # "NULL + name" is PUSH_NULL and the load (3.13+: the load, then PUSH_NULL);
        # 3.12 folds the PUSH_NULL of an enclosing call into it too.
        pair = [("PUSH_NULL", None), (name, argval)]
        if versions.NULL_AFTER_CALLABLE:
            pair.reverse()
        for part, value in pair:
            rows.append(_row(part, shown, value, False, at, False))
    elif name in _SWAPPED:
        rows.append((shown, True, _SWAPPED[name], arg, is_const, at, arg is number))
    else:
        rows.append((shown, False, name, arg, is_const, at, arg is number))
    return edge


class NodeGraph:
    """The instruction graph of one code object (nested code objects stay as constants)."""

    def __init__(self, code: CodeType) -> None:
        #: Normalised opname of each node.
        self.ops: List[str] = []
        #: Opname as dis spells it, for messages.
        self.names: List[str] = []
        #: Whether the node's successors are (jump target, next) instead of (next, jump target).
        self.swapped: List[bool] = []
        #: Argument of each node, compared by value; None when the opcode takes none or it is a jump.
        self.args: List[object] = []
        #: Whether the argument is a constant (compared by _const_key, or recursively for code).
        self.is_const: List[bool] = []
        #: Offset of the instruction each node came from, for messages.
        self.offsets: List[int] = []
        #: Whether the node's argument is the instruction's plain number, which dis explains ("<=", "+"...).
        self.plain: List[bool] = []
        #: The code object, to ask dis what a plain argument means when a message shows it.
        self.code = code
        #: Jump target node of each node, or None.
        self.jumps: List[Optional[int]] = []
        #: (handler node, stack depth, lasti) of each node's exception handler, or None.
        self.handlers: List[Optional[Tuple[int, int, bool]]] = []
        self._build(code)

    def _build(self, code: CodeType) -> None:
        entries = sorted(dis.Bytecode(code).exception_entries, key=lambda e: e.start) if versions.EXCEPTION_TABLE else []
        node_at: Dict[int, int] = {}
        pending: List[int] = []  # offsets of dropped instructions waiting for the next node
        raw_targets: List[Tuple[int, int]] = []  # (node, target offset)
        raw_handlers: List[Tuple[int, int, object]] = []  # (first node, end node, exception table entry)
        # One row per node, (shown, swapped, op, arg, is_const, offset, plain): turned into the columns at the end.
        rows: List[tuple] = []
        handler_at = _HandlerCursor(entries)
        for at, opcode, name, number, argval in instructions(code):
            if name in _DROP:
                pending.append(at)
                continue
            first = len(rows)
            if pending:
                for offset in pending:
                    node_at[offset] = first
                pending = []
            node_at[at] = first
            handler = handler_at.entry(at)
            if _node_rows(code, rows, at, opcode, name, number, argval):
                raw_targets.append((first, argval))  # type: ignore[arg-type]
            if handler is not None:
                raw_handlers.append((first, len(rows), handler))
        for offset in pending:
            node_at[offset] = END
        if rows:
            columns = [list(column) for column in zip(*rows)]
            self.names, self.swapped, self.ops, self.args, self.is_const, self.offsets, self.plain = columns

        self.jumps = [None] * len(self.ops)
        for node, target in raw_targets:
            self.jumps[node] = node_at.get(target, END)
        self.handlers = [None] * len(self.ops)
        for first, end, entry in raw_handlers:
            handler = (node_at.get(entry.target, END), entry.depth, bool(entry.lasti))  # type: ignore[attr-defined]
            for node in range(first, end):
                self.handlers[node] = handler
        self._mark_bookkeeping()
        if versions.PEEPHOLE_SKIPS_LONG_LINES:
            self._fold_constant_tuples()
        self._fold_negated_tests()
        if versions.LOAD_GLOBAL_NULL_BIT:
            self._canonical_method_calls()
        if versions.SWAPS_FOLDED_INTO_STORES:
            self._canonical_store_runs()
        if versions.OR_POP_JUMPS:
            self._thread_or_pop_jumps()

    def _fold_constant_tuples(self) -> None:
        """Spell a tuple built from constants loaded just before as the tuple constant.

        The peephole optimizer (3.8-3.9) folds ``LOAD_CONST a; LOAD_CONST b; BUILD_TUPLE 2``
        into ``LOAD_CONST (a, b)``, unless the code's line table has a step of 255 bytes
        or more (a statement written on one long line): the same source folds or not
        depending on its layout.  Only a run no jump lands inside is folded, as the
        optimizer does.
        """
        targets = {t for t in self.jumps if t is not None}
        ops, args = self.ops, self.args
        for i in range(len(ops)):
            count = args[i]
            if ops[i] != "BUILD_TUPLE" or not isinstance(count, int) or not 0 < count <= i:
                continue
            run = range(i - count, i)
            if any(ops[j] != "LOAD_CONST" or args[j] is _ANY or isinstance(args[j], CodeType) for j in run):
                continue
            if any(j in targets for j in range(i - count + 1, i + 1)):
                continue
            ops[i], self.is_const[i], self.plain[i] = "LOAD_CONST", True, False
            args[i] = tuple(args[j] for j in run)
            for j in run:
                self._skip(j)

    def _fold_negated_tests(self) -> None:
        """Spell ``not in``/``is not`` tested by a conditional jump as ``in``/``is`` with the jump reversed.

        ``if a not in b`` and ``if not (a in b)``, laid out with the arms the other
        way round, compile to ``CONTAINS_OP 1`` jumping one way or ``CONTAINS_OP 0``
        jumping the other: the same test.  Only a test whose result nothing but the
        jump right after it consumes is rewritten, and no other jump may land on that jump.
        """
        targets = {t for t in self.jumps if t is not None}
        ops, args = self.ops, self.args
        positive = {("CONTAINS_OP", 1): 0, ("IS_OP", 1): 0}
        if not versions.CONTAINS_OP:  # COMPARE_OP 7 is ``not in``, 9 ``is not``
            positive.update({("COMPARE_OP", 7): 6, ("COMPARE_OP", 9): 8})
        for i in range(len(ops) - 1):
            key = (ops[i], args[i])
            if key in positive and ops[i + 1] == "POP_JUMP_IF_FALSE" and i + 1 not in targets:
                args[i] = positive[key]
                self.swapped[i + 1] = not self.swapped[i + 1]

    def _mark_bookkeeping(self) -> None:
        """Blank out constants that only record where the code was written.

        A class body stores its ``__qualname__`` (and on 3.13+ its
        ``__firstlineno__``), and 3.8-3.10 pass a function's qualname to
        ``MAKE_FUNCTION``; both depend on the enclosing scopes and lines, not
        on what the code does.
        """
        ops, args = self.ops, self.args
        for i in range(1, len(ops)):
            if ops[i - 1] != "LOAD_CONST":
                continue
            if ops[i] == "STORE_NAME" and args[i] in ("__qualname__", "__firstlineno__"):
                args[i - 1] = _ANY
            elif (
                ops[i] == "MAKE_FUNCTION"
                and versions.MAKE_FUNCTION_QUALNAME
                and i >= 2
                and ops[i - 2] == "LOAD_CONST"
                and isinstance(args[i - 2], CodeType)
                and isinstance(args[i - 1], str)
            ):
                args[i - 1] = _ANY

    def _canonical_method_calls(self) -> None:
        """Spell every call of ``obj.attr(...)`` as a method call.

        3.11+ compile ``name.attr(...)`` as a plain attribute load plus a NULL
        instead of the method-call form when ``name`` is imported at module
        level (in any scope: the check looks at the module's names only), so
        the same call compiles differently inside and outside its module.
        Both push the same callable: ``PUSH_NULL; LOAD x; LOAD_ATTR a``
        (3.11-3.12) and ``LOAD_ATTR a; PUSH_NULL`` (3.13+) become ``LOAD x;
        LOAD_METHOD a`` (3.12+: ``LOAD_ATTR`` with the method bit).  No other
        code puts a plain attribute load right after the NULL's load
        (3.11-3.12) or right before a PUSH_NULL (3.13+), so nothing else is
        rewritten.  A dropped PUSH_NULL turns into a jump to the next node,
        which the walk passes through.
        """
        ops, args = self.ops, self.args
        for i in range(len(ops) - 1):
            if ops[i] != "LOAD_ATTR" or (versions.LOAD_ATTR_METHOD_BIT and args[i][1] != 0):  # type: ignore[index]
                continue
            if versions.NULL_AFTER_CALLABLE:
                if ops[i + 1] == "PUSH_NULL":
                    self._method(i)
                    self._skip(i + 1)
            elif i >= 2 and ops[i - 2] == "PUSH_NULL" and ops[i - 1] in _PLAIN_LOADS:
                self._method(i)
                self._skip(i - 2)

    def _method(self, node: int) -> None:
        if versions.LOAD_ATTR_METHOD_BIT:
            self.args[node] = (self.args[node][0], 1)  # type: ignore[index]
        else:
            self.ops[node] = "LOAD_METHOD"

    def _canonical_store_runs(self) -> None:
        """Replace each straight run of ``SWAP``, ``STORE_FAST`` and ``POP_TOP`` by its effect.

        3.11+ resolve swaps at compile time by reordering the stores
        that follow them, but only where the stores share a line, so the same
        unpacking or ``match`` capture compiles to different runs.  A run
        (at least two instructions, entered only at its start, under one
        exception handler) becomes one ``STORE_RUN`` node whose argument says
        which local ends up with which stack value, which values are
        dropped, and how the rest of the stack is permuted.
        """
        ops, args, handlers = self.ops, self.args, self.handlers
        entered = {target for target in self.jumps if target is not None}
        entered.update(handler[0] for handler in handlers if handler is not None)
        start = 0
        count = len(ops)
        while start < count:
            if ops[start] not in _STACK_STORES:
                start += 1
                continue
            end = start + 1
            while (end < count and ops[end] in _STACK_STORES and end not in entered
                   and handlers[end] == handlers[start]):
                end += 1
            if end - start >= 2:
                args[start] = _store_effect(ops[start:end], args[start:end])
                ops[start] = "STORE_RUN"
                for node in range(start + 1, end):
                    self._skip(node)
            start = end

    def _thread_or_pop_jumps(self) -> None:
        """Thread ``JUMP_IF_FALSE_OR_POP``/``JUMP_IF_TRUE_OR_POP`` into the test they jump to.

        Such a jump keeps the value it tested and lands on another test of the
        same value, whose outcome is therefore known: ``x or y and z``'s jump
        to a ``JUMP_IF_TRUE_OR_POP`` after a false ``x`` pops and falls
        through.  The peephole optimiser (3.8-3.11) does this only where both
        instructions share a line, so rewrite it here: the jump becomes the
        popping jump to where the value finally goes, or a jump to the second
        test's own target.
        """
        ops, jumps = self.ops, self.jumps
        for node in range(len(ops)):
            for _ in range(len(ops)):
                sense = _OR_POP.get(ops[node])
                if sense is None:
                    break
                target = self.follow(jumps[node])  # type: ignore[arg-type]
                if target < 0:
                    break
                if ops[target] in _OR_POP:
                    keeps, follows = True, _OR_POP[ops[target]] == sense
                elif ops[target] == "POP_JUMP_IF_FALSE":
                    keeps, follows = False, self.swapped[target] == sense
                else:
                    break
                if follows:
                    destination = jumps[target]
                else:
                    destination = target + 1 if target + 1 < len(ops) else END
                if not keeps or not follows:
                    # The value is popped on the way: a plain popping jump on the same outcome.
                    ops[node] = "POP_JUMP_IF_FALSE"
                    self.swapped[node] = sense
                jumps[node] = destination

    def _skip(self, node: int) -> None:
        self.ops[node] = "JUMP"
        self.jumps[node] = node + 1

    def follow(self, node: int) -> int:
        """The first node reached from ``node`` that is not an unconditional jump."""
        steps = 0
        ops, jumps = self.ops, self.jumps
        while node >= 0 and ops[node] == "JUMP":
            node = jumps[node]  # type: ignore[assignment]
            steps += 1
            if steps > len(ops):
                return _SPIN
        return node

    def edges(self) -> List[Tuple[List[int], Optional[int]]]:
        """For each node: `successors` and its handler's node, with unconditional jumps followed."""
        ops, jumps, swapped, handlers = self.ops, self.jumps, self.swapped, self.handlers
        ahead = [self.follow(node) for node in range(len(ops))] + [END]  # past the last node: the end

        def reach(node: Optional[int]) -> Optional[int]:
            return node if node is None or node < 0 else ahead[node]

        result = []
        for node, op in enumerate(ops):
            found = [] if op in _NO_FALLTHROUGH else [ahead[node + 1]]
            if jumps[node] is not None:
                found.append(reach(jumps[node]))  # type: ignore[arg-type]
            if swapped[node]:
                found.reverse()
            handler = handlers[node]
            result.append((found, None if handler is None else reach(handler[0])))
        return result

    def show(self, node: int) -> str:
        """One instruction for a message."""
        if node == END:
            return "<end of code>"
        if node == _SPIN:
            return "<empty infinite loop>"
        arg = self.args[node]
        text = "offset %d %s" % (self.offsets[node], self.names[node])
        if arg is not None or self.is_const[node]:
            if isinstance(arg, CodeType):
                arg = "<code %s>" % arg.co_name
            shown = repr(arg)
            if len(shown) > 60:
                shown = shown[:57] + "..."
            text += " " + shown
            meaning = self.meaning(node)
            if meaning and meaning != shown:
                text += " (%s)" % meaning
        return text

    def meaning(self, node: int) -> str:
        """What dis says the node's plain numeric argument means ("<=", "+"...), or ""."""
        if not self.plain[node]:
            return ""
        return argrepr(self.code, self.offsets[node])


def _store_effect(ops: List[str], args: List[object]) -> tuple:
    """What a run of SWAP / STORE_FAST / POP_TOP does, independent of how it is spelled.

    Stack values are numbered by their depth when the run starts (1 is the
    top).  The result is (the local each stored value ends in, sorted; the
    values dropped, overwritten ones included; the stack left behind, bottom
    first, without the values the run never moved).
    """
    depth = sum(1 for op in ops if op != "SWAP") + max([a for op, a in zip(ops, args) if op == "SWAP"] + [1])
    stack = list(range(depth, 0, -1))
    stored: Dict[str, int] = {}
    dropped = []
    for op, arg in zip(ops, args):
        if op == "SWAP":
            stack[-1], stack[-arg] = stack[-arg], stack[-1]  # type: ignore[index,operator]
        elif op == "POP_TOP":
            dropped.append(stack.pop())
        else:
            if arg in stored:
                dropped.append(stored[arg])  # type: ignore[index]
            stored[arg] = stack.pop()  # type: ignore[index]
    untouched = 0
    while untouched < len(stack) and stack[untouched] == depth - untouched:
        untouched += 1
    return (tuple(sorted(stored.items())), tuple(sorted(dropped)), tuple(stack[untouched:]))
