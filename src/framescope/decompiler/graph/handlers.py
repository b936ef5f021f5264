"""What an exception handler is for, read from its first instructions.

Besides the handlers of ``try`` statements, the compiler protects code with handlers
the source never spells: they restore the exception state (3.11+), delete the name
bound by ``except E as name``, keep what an ``except*`` clause raised (3.11+), turn
``StopIteration`` into ``RuntimeError`` in generators (3.12+), restore locals hidden by
an inlined comprehension (3.12+) and run ``__exit__`` for ``with``.  The structurer looks through the first kinds and
builds a ``with`` statement from the last.
"""
from typing import List

from framescope.decompiler.frontend.instructions import Handler, Instr
from framescope.decompiler.graph.cfg import Block

TRY = "try"
WITH = "with"
IMPLICIT = "implicit"
LOOP = "loop"  # async for / await cleanup: part of the statement that set it up


def ops(instrs: List[Instr]) -> List[str]:
    return [ins.op for ins in instrs]


def kind(block: Block) -> str:
    """Classify the handler whose first block is ``block``."""
    instrs = block.instrs
    names = ops(instrs)
    first = names[0]
    if names[:3] == ["COPY", "POP_EXCEPT", "RERAISE"]:
        return IMPLICIT  # 3.11+: restore the previous exception and re-raise
    if first == "CALL_INTRINSIC_1" and instrs[0].arg == "INTRINSIC_STOPITERATION_ERROR":
        return IMPLICIT
    if is_name_cleanup(instrs) or keeps_star_raise(instrs):
        return IMPLICIT
    if names[-1] == "RERAISE" and set(names[:-1]) <= {"SWAP", "POP_TOP", "STORE_FAST"} and len(names) > 1:
        return IMPLICIT  # 3.12+: an inlined comprehension restores the locals it hid
    if first in ("CLEANUP_THROW", "END_ASYNC_FOR"):
        return LOOP
    body = names[1:] if first == "PUSH_EXC_INFO" else names
    if body and body[0] == "WITH_EXCEPT_START":
        return WITH
    return TRY


def is_name_cleanup(instrs: List[Instr]) -> bool:
    """``name = None; del name; raise``: the end of an ``except E as name`` clause."""
    names = ops(instrs)
    return (len(names) == 4 and names[0] == "LOAD_CONST" and instrs[0].arg is None
            and names[1] in ("STORE_FAST", "STORE_NAME", "STORE_DEREF", "STORE_GLOBAL")
            and names[2] in ("DELETE_FAST", "DELETE_NAME", "DELETE_DEREF", "DELETE_GLOBAL")
            and names[3] == "RERAISE")


def keeps_star_raise(instrs: List[Instr]) -> bool:
    """``LIST_APPEND 3; POP_TOP``: an ``except*`` body's handler keeps what it raised (3.11+).

    The exceptions go on a list that ``PREP_RERAISE_STAR`` raises after the last clause;
    an ``except* E as name`` clause clears the name first.
    """
    if len(instrs) > 3 and is_name_cleanup(instrs[:3] + [Instr("RERAISE")]):
        instrs = instrs[3:]
    return (len(instrs) >= 2 and instrs[0].op == "LIST_APPEND" and instrs[0].arg == 3
            and instrs[1].op == "POP_TOP")


class HandlerMap:
    """Handler kinds and chains for one control-flow graph."""

    def __init__(self, cfg) -> None:
        self.cfg = cfg
        self.kinds = {}

    def block(self, handler: Handler) -> Block:
        return self.cfg.by_offset[handler.target]

    def kind(self, handler: Handler) -> str:
        if handler not in self.kinds:
            self.kinds[handler] = kind(self.block(handler))
        return self.kinds[handler]

    def covers(self, block: Block, handler: Handler) -> bool:
        """Whether an exception in ``block`` reaches ``handler`` through handlers of inner statements."""
        hops = 0
        while block.handler is None and block.last.op == "JUMP" and len(block.instrs) == 1 and hops < 10:
            # A lone jump cannot raise, so the exception table may leave it out of a range.
            if block.jump is None:
                return False
            block, hops = block.jump, hops + 1
        current = block.handler
        seen = 0
        while current is not None and seen < 100:
            if current == handler:
                return True
            current = self.block(current).handler
            seen += 1
        return False
