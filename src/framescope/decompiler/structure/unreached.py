"""Code 3.8 and 3.9 lay out around a try statement that no path reaches.

Before 3.10 the compiler keeps the jumps and re-raises that end a statement's parts even
where every path left before them, and the peephole optimizer threads live jumps past
them: where such code goes tells the structurer what the source said after a clause or
body that always leaves. `protected.ProtectedBuilder` asks these.
"""
import ast
from typing import TYPE_CHECKING, List, Optional

from framescope.decompiler.frontend import versions
from framescope.decompiler.frontend.instructions import Handler, Instr
from framescope.decompiler.graph.cfg import Block
from framescope.decompiler.graph.traversal import follow_jumps, reachable
from framescope.decompiler.simulate import marks

if TYPE_CHECKING:  # pragma: no cover
    from framescope.decompiler.structure.context import StructureContext
    from framescope.decompiler.structure.loops import LoopBuilder


class UnreachedCode:
    """Reads the unreached code after a try statement's parts, for `protected.ProtectedBuilder`."""

    def __init__(self, ctx: "StructureContext", loop_builder: "LoopBuilder") -> None:
        self.ctx = ctx
        #: Tells a ``break`` target.
        self.loop_builder = loop_builder

    def returns_constant(self, end: Optional[Block], handler: Handler) -> Optional[List[Block]]:
        """The blocks of a ``return <constant>`` only the try body reaches, laid out before its
        handler (after popping the iterators of the loops around the try, if it returns from
        them, and, on 3.8, after calling ``__exit__`` of the with statements around it, each
        with's protected range ending a block, and releasing the exceptions of the except
        clauses around it); None when ``end`` is not one. Several ways of the body may meet
        there (an ``if`` holding a loop: the test's jump and the loop's exit)."""
        if not versions.CONSTANT_RETURN_BEFORE_HANDLER:
            return None
        hblock = self.ctx.hmap.block(handler)
        blocks: List[Block] = []
        while end is not None and end.index < hblock.index and len(blocks) < 20 and (
                len(end.preds) == 1 or (not blocks and all(self.ctx.hmap.covers(p, handler) for p in end.preds))):
            blocks.append(end)
            n = leaving(end.instrs)
            if n == len(end.instrs) and is_exit_call(end.last) and end.fall is not None and end.jump is None:
                end = end.fall  # 3.8: the exit of a with statement the return leaves ends the block
                continue
            return blocks if [ins.op for ins in end.instrs[n:]] == ["LOAD_CONST", "RETURN_VALUE"] else None
        return None

    def dead_clause_exit(self, hblock: Block, body_end: Block) -> Optional[Block]:
        """Where the clauses would go on, when none can reach its end (3.8-3.9 keep that code).

        Every clause raises or returns, but the compiler still lays out each one's
        ``POP_EXCEPT`` and jump to the code after the statement: when that is not where
        the body goes, the body goes to an ``else`` clause first.
        """
        last = self.no_match(hblock)
        if last is None:
            return None
        targets = set()
        for block in self.ctx.cfg.blocks[hblock.index + 1:last.index]:
            if block in self.ctx.cfg.dom:
                continue
            ops = [ins.op for ins in block.instrs]
            if ops == ["POP_EXCEPT", "JUMP"]:
                targets.add(block.jump)
            elif ops == ["POP_EXCEPT"] and block.fall is not None and block.fall.is_lone_jump():
                targets.add(block.fall)  # the jump a block of its own (where a finally copy starts)
        if len(targets) != 1:
            return None
        target = targets.pop()
        if target is None or follow_jumps(target) is follow_jumps(body_end):
            return None
        return target

    def keep_written_continue(self, body: List[ast.stmt], following: Block) -> None:
        """Mark the ``continue`` that ends an except clause (laid out up to ``following``, the
        next clause's test) as written when the clause's own unreached exit comes after it.

        Running off a clause at the end of a loop body jumps back to the loop too, but
        then that ``POP_EXCEPT`` and jump are the live end of the clause."""
        if not (versions.KEEPS_UNREACHED_CLAUSE_EXIT and body and isinstance(body[-1], ast.Continue)):
            return
        jump = self.ctx.cfg.blocks[following.index - 1]
        ops = [ins.op for ins in jump.instrs]
        if ops == ["JUMP"] and jump.index > 0:  # the jump a block of its own
            ops = [ins.op for ins in self.ctx.cfg.blocks[jump.index - 1].instrs] + ops
        if ops == ["POP_EXCEPT", "JUMP"] and jump not in self.ctx.cfg.dom:
            marks.mark(body[-1], marks.WRITTEN_CONTINUE)

    def no_match(self, hblock: Block) -> Optional[Block]:
        """The block that re-raises when no except clause matched."""
        block, seen = hblock, 0
        while block is not None and block.last.op == "POP_JUMP_IF_FALSE" and seen < 100:
            if not any(ins.op in ("CHECK_EXC_MATCH", "EXC_MATCH") for ins in block.instrs):
                return None
            block, seen = block.jump, seen + 1
        if block is None or len(block.instrs) != 1 or block.last.op != "RERAISE":
            return None
        return block

    def unmatched_exit(self, hblock: Block) -> Optional[Block]:
        """Where 3.8 goes on after a try statement whose body and clauses all leave.

        Its ``END_FINALLY`` (re-raise when no clause matched) falls through to the code
        after the statement; later versions end the handler with ``RERAISE``.
        """
        block = self.no_match(hblock)
        if block is None or not block.last.is_end_finally():
            return None
        return self.after_end_finally(block)

    def left_finally_exit(self, hblock: Block) -> Optional[Block]:
        """Where 3.8 goes on after a try statement whose body always leaves (``return``,
        ``break``...) and runs its finally body, at ``hblock``, on the way.

        The finally body's ``END_FINALLY`` falls through to the code after the statement.
        """
        if not versions.HANDLER_END_FALLS_THROUGH:
            return None
        ends = [b for b in reachable([hblock]) if b.index >= hblock.index and b.handler == hblock.handler
                and b.last.is_end_finally()]
        # Only the finally body's own END_FINALLY is reached without an exception: those of
        # the statements inside it end their handlers.
        return self.after_end_finally(ends[0]) if len(ends) == 1 else None

    def after_end_finally(self, block: Block) -> Optional[Block]:
        """The code after a handler's ``END_FINALLY`` (``block``'s last), when it is code after
        the statement."""
        after = self.ctx.cfg.laid_out_after(block)
        if after is None:
            return None
        if after.last.op == "JUMP" and (len(after.instrs) == 1 or after.last.raw == "BEGIN_FINALLY"):
            return None  # a jump on, or the copy of an enclosing finally body: nothing follows in the body
        return after

    def unreached_finally_exit(self, hblock: Block) -> Optional[Block]:
        """Where 3.8 goes on after a try statement whose body always leaves through its finally body.

        The ``BEGIN_FINALLY`` at the end of the body is still laid out before the finally body's
        code (here a copy of it no path reaches), then the code after the statement.
        """
        block = self.ctx.cfg.blocks[hblock.index - 1] if hblock.index else None
        if block is None or block.preds or block.last.op != "JUMP" or block.last.raw != "BEGIN_FINALLY":
            return None
        return block.jump

    def dead_else_break(self, hblock: Block) -> bool:
        """3.8: whether a ``break`` that ended the else clause was left after the handler.

        The peephole optimizer threads the body's jump to the else clause straight to the
        ``break`` target, but keeps the clause's own jump after the handler's ``END_FINALLY``,
        unreached; where the jump needs an ``EXTENDED_ARG`` it threads nothing, and only the
        body reaches the clause.
        """
        block, seen = hblock, 0
        while block is not None and block.last.op == "POP_JUMP_IF_FALSE" and seen < 50:
            block, seen = block.jump, seen + 1  # the next except clause's type test
        if block is None or not block.last.is_end_finally():
            return False
        dead = self.ctx.cfg.laid_out_after(block)  # (reached from no path, or from the body alone)
        if dead is None:
            return False
        return (all(p.index < hblock.index for p in dead.preds) and dead.is_lone_jump()
                and any(isinstance(self.loop_builder.loop_control(b, None), ast.Break) for b in (dead.jump, dead)))


def code_after_handler(blocks: List[Block], first: Block, other: Block) -> Optional[Block]:
    """Where an arm of an ``if`` laid out from ``first`` on, up to ``other`` (the other arm),
    goes on when it ends with a try statement that always leaves (3.8): None if it does not.

    The handler's ``END_FINALLY`` (see `versions.HANDLER_END_FALLS_THROUGH`) falls into
    ``other`` itself (an ``if`` without ``else``), or into the arm's jump past the
    ``else`` that no path reaches.
    """
    if not versions.HANDLER_END_FALLS_THROUGH or other.index <= first.index + 1:
        return None
    after, before = other, blocks[other.index - 1]
    if not before.preds and before.is_lone_jump() and before.index > first.index:
        after, before = before.jump, blocks[before.index - 1]
        if after is None or after.index <= other.index:
            return None
    return after if before.last.is_end_finally() else None


def is_exit_call(ins: Instr) -> bool:
    """Whether ``ins`` is part of the call of a with statement's ``__exit__`` that 3.8's
    ``BEGIN_FINALLY`` became (see `finally38.exit_call`), its jump past the handler aside."""
    return ins.raw == "BEGIN_FINALLY" and ins.op != "JUMP"


def leaving(instrs: List[Instr]) -> int:
    """How many of ``instrs`` leave the loops (``POP_TOP`` of their iterators) and, on 3.8, the
    with statements and except clauses (with ``except E as name``'s reset of ``name``) that a
    return goes out of, before it loads its value."""
    n = 0
    while n < len(instrs):
        ins = instrs[n]
        if ins.op == "POP_TOP" or is_exit_call(ins):
            n += 1
        elif ins.op == "POP_EXCEPT" and versions.UNMATCHED_FALLS_THROUGH:
            n += 1
            ops = [x.op for x in instrs[n:n + 3]]
            if len(ops) == 3 and ops[0] == "LOAD_CONST" and instrs[n].arg is None and ops[1].startswith("STORE_") \
                    and ops[2].startswith("DELETE_") and instrs[n + 1].arg == instrs[n + 2].arg:
                n += 3
        else:
            break
    return n
