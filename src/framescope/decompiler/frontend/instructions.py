"""The canonical instruction: one spelling of every operation, whatever the Python version.

`opcodes.py` turns a code object's raw bytecode into a list of `Instr`; every later
pass of the decompiler reads only this representation.
"""
from dataclasses import dataclass
from typing import Any, Optional


@dataclass(frozen=True)
class Handler:
    """Where an exception raised by an instruction goes (one exception-table range)."""

    #: Offset of the handler's first instruction.
    target: int
    #: Stack depth the handler starts from (values above it are popped on entry).
    depth: int
    #: Whether the offset of the raising instruction is pushed too (3.11+ cleanup handlers).
    lasti: bool


@dataclass
class Instr:
    """One canonical instruction."""

    #: Canonical operation name, e.g. ``"LOAD_FAST"``, ``"BINARY_OP"``, ``"JUMP"``.
    op: str
    #: Decoded argument: a name, a constant, a count, an operator symbol...
    arg: Any = None
    #: Offset of the raw instruction this came from (several may share one).
    offset: int = 0
    #: Offset jumped to, for jumps and instructions with a jump target.
    target: Optional[int] = None
    #: Source line, when the bytecode records one.
    line: Optional[int] = None
    #: Exception handler covering this instruction, if any.
    handler: Optional[Handler] = None
    #: Raw opcode name, kept for error messages.
    raw: str = ""
    #: 3.8: part of the copy of a finally body that ``CALL_FINALLY`` ran before a return, break
    #: or continue left the try statement (`finally38`); the end of its body runs another copy.
    called_finally: bool = False

    def is_pop_jump(self) -> bool:
        """A conditional jump that pops its condition (``POP_JUMP_IF_*``)."""
        return self.op in POP_JUMPS

    def is_cond_jump(self) -> bool:
        """Any conditional jump: a pop jump, or a ``JUMP_IF_*_OR_POP`` (up to 3.11)."""
        return self.op in CONDITIONAL_JUMPS

    def is_borrowed_load(self) -> bool:
        """A load of a local the compiler made borrowed (``LOAD_FAST_BORROW``, 3.14+)."""
        return self.raw in BORROWING_LOADS

    def is_end_finally(self) -> bool:
        """3.8's ``END_FINALLY`` (canonically ``RERAISE``, see `finally38`): it ends a handler,
        and goes on with the code laid out after it when nothing is to be re-raised
        (`versions.HANDLER_END_FALLS_THROUGH`)."""
        return self.raw == "END_FINALLY"

    def is_final(self) -> bool:
        """Control never falls through to the next instruction."""
        return self.op in TERMINATORS

    def __repr__(self) -> str:
        text = "%d %s" % (self.offset, self.op)
        if self.arg is not None:
            text += " %r" % (self.arg,)
        if self.target is not None:
            text += " ->%d" % self.target
        if self.handler is not None:
            text += " !%d/%d%s" % (self.handler.target, self.handler.depth, "L" if self.handler.lasti else "")
        return text


#: Operations after which control never falls through to the next instruction.
TERMINATORS = frozenset({"JUMP", "RETURN_VALUE", "RAISE_VARARGS", "RERAISE"})
#: 3.14 loads of locals whose value is borrowed from the frame.
BORROWING_LOADS = frozenset({"LOAD_FAST_BORROW", "LOAD_FAST_BORROW_LOAD_FAST_BORROW"})

#: Conditional jumps that pop their condition.
POP_JUMPS = frozenset({"POP_JUMP_IF_FALSE", "POP_JUMP_IF_TRUE", "POP_JUMP_IF_NONE", "POP_JUMP_IF_NOT_NONE"})

#: Conditional jumps that keep the value on the jumping path and pop it otherwise (up to 3.11).
OR_POP_JUMPS = frozenset({"JUMP_IF_FALSE_OR_POP", "JUMP_IF_TRUE_OR_POP"})

#: Raw opcodes of 3.8-3.10 that push a block whose handler an exception inside reaches.
BLOCK_SETUPS = frozenset({"SETUP_FINALLY", "SETUP_WITH", "SETUP_ASYNC_WITH"})

#: Every conditional jump.
CONDITIONAL_JUMPS = POP_JUMPS | OR_POP_JUMPS

#: Every instruction that may transfer control to ``target``.
JUMPS = frozenset({"JUMP", "FOR_ITER", "SEND", "SETUP_FINALLY", "SETUP_WITH", "JUMP_IF_NOT_EXC_MATCH"}) | POP_JUMPS | OR_POP_JUMPS
