"""Leaving protected regions: the straight code from a region's end to a return, raise,
``break`` or ``continue``, the end of a return whose value a region computed, and whether
two ways out go on alike (copies of one finally body).

Shared by the walker, the loop builder and the protected-region builder: each meets code
that leaves the ``try`` and ``with`` statements around it.
"""
import ast
from typing import TYPE_CHECKING, List, Optional

from framescope.decompiler.frontend import versions
from framescope.decompiler.frontend.instructions import JUMPS, Handler
from framescope.decompiler.graph.cfg import Block
from framescope.decompiler.graph.handlers import IMPLICIT
from framescope.decompiler.graph.copies import same_exit, same_handling, same_run
from framescope.decompiler.simulate import values as v
from framescope.decompiler.simulate.state import State

if TYPE_CHECKING:  # pragma: no cover
    from framescope.decompiler.structure.context import StructureContext
    from framescope.decompiler.structure.loops import LoopBuilder


def exit_pending(state: State) -> bool:
    """Whether an ``__exit__`` call's result is still to be popped (awaited first by ``async with``).

    3.14 keeps two values for a with statement (the bound ``__exit__`` and its
    ``self``), so after the call the stack is as deep as on leaving the region.
    """
    return bool(state.stack) and isinstance(state.stack[-1], v.ExitResult)


class RegionExits:
    """The ways out of the protected regions being built, for the walker and the builders."""

    def __init__(self, ctx: "StructureContext", loop_builder: "LoopBuilder") -> None:
        self.ctx = ctx
        #: Tells a jump that leaves a loop (``break``, ``continue``) from one that leaves the region.
        self.loop_builder = loop_builder

    def name_cleanup(self, instrs, i: int, state: State) -> int:
        """Run ``name = None; del name`` after ``POP_EXCEPT``, if present; return the next index."""
        run = [ins.op for ins in instrs[i:i + 3]]
        if (len(run) == 3 and run[0] == "LOAD_CONST" and instrs[i].arg is None and run[1].startswith("STORE_")
                and run[2].startswith("DELETE_") and i + 2 < len(instrs)):
            return i + 3  # the clause's own clean-up: nothing the source says
        return i

    def new_handler(self, block: Block) -> Optional[Handler]:
        """The outermost statement handler covering ``block`` whose statement is not being built."""
        chain, current = [], block.handler
        while current is not None and len(chain) < 100:
            if self.ctx.hmap.kind(current) != IMPLICIT:
                chain.append(current)
            outer = self.ctx.hmap.block(current).handler
            if outer is not None and not versions.EXCEPTION_TABLE and outer.depth > current.depth:
                break  # a try statement the handler's code starts with, above its exception: not around it
            current = outer
        active = {region.handler for region in self.ctx.regions}
        fresh = [h for h in chain if h not in active]
        return fresh[-1] if fresh else None

    def exit_path(self, block: Optional[Block]) -> Optional[List[Block]]:
        """The blocks of straight-line code from ``block`` to a return, raise, break or continue.

        None when the code branches or enters another try or with statement first.  Copies
        of ``finally`` bodies are skipped.
        """
        path: List[Block] = []
        steps = 0
        while block is not None and steps < 20:
            steps += 1
            if block in self.ctx.cfg.finally_copies:
                block = self.ctx.cfg.finally_after[block]
                continue
            if self.new_handler(block) is not None:
                return None  # the code goes on into another try or with statement
            path.append(block)
            if self.ctx.loops and self.loop_builder.loop_control(block, None) is not None:
                return path
            last = block.last
            if last.op in ("RETURN_VALUE", "RAISE_VARARGS", "RERAISE"):
                return path
            if last.op == "JUMP":
                block = block.jump
            elif last.op in JUMPS:
                return None
            else:
                block = block.fall
        return None

    def finish_exit(self, path: List[Block], state: State) -> None:
        """Emit the code of an exit path (see `exit_path`)."""
        for block in path:
            control = self.loop_builder.loop_control(block, None) if self.ctx.loops else None
            if control is not None:
                state.stmts.append(control)
                return None
            if block.instrs[0].op == "POP_TOP" and self.loop_builder.is_break_copy(block, 0, state):
                state.stmts.append(ast.Break())  # 3.12+ copies the code after the loop for a break
                return None
            for ins in block.instrs[:-1]:
                self.ctx.sim.step(ins, state)
            if block.last.op != "JUMP":
                self.ctx.sim.step(block.last, state)
        return None

    def finish_return(self, end: Optional[Block], state: State, depth: int) -> Optional[Block]:
        """Finish a ``return`` whose value was computed inside a protected region.

        ``RETURN_VALUE`` cannot raise, so the compiler leaves it (and, for ``with``, the
        call of ``__exit__`` before it) out of the region: the region then ends with the
        value still on the stack.
        """
        seen = 0
        value = state.stack[-1] if len(state.stack) > depth else None
        # Leaving a ``with`` on the way also pops its context manager from below the value, and
        # leaving a loop in an except clause swaps the value under the saved exception: the return
        # goes on while the value is on the stack, whatever the depth.
        while end is not None and (len(state.stack) > depth or exit_pending(state)
                                   or (value is not None and any(x is value for x in state.stack))) \
                and seen < 10:
            seen += 1
            if end in self.ctx.cfg.finally_copies:  # the finally body runs before the return: skip it
                end = self.ctx.cfg.finally_after[end]
                continue
            i = 0
            while i < len(end.instrs) - 1:
                self.ctx.sim.step(end.instrs[i], state)
                i += 1
                if end.instrs[i - 1].op == "POP_EXCEPT":  # leaving ``except E as name``: its clean-up
                    i = self.name_cleanup(end.instrs, i, state)
            last = end.last
            if last.op in ("RETURN_VALUE", "RAISE_VARARGS", "RERAISE"):
                self.ctx.sim.step(last, state)
                return None
            if last.op == "JUMP":
                end = end.jump
            elif last.op in JUMPS:
                raise self.ctx.error("protected region ends in a branch with values on the stack", end)
            else:
                self.ctx.sim.step(last, state)
                end = end.fall
        if end is not None and len(state.stack) != depth:
            raise self.ctx.error("protected region leaves the stack changed", end)
        return end

    def same_place(self, a: Optional[Block], b: Optional[Block]) -> bool:
        """Whether two blocks continue alike: the same block, or copies of one finally body."""
        if a is b:
            return True
        if a is not None and b is not None and a.succs() == b.succs() and same_run(a.instrs, b.instrs) \
                and same_handling(a, b) and not (written_exit(a) or written_exit(b)):
            return True  # 3.12+ copies small blocks (``POP_EXCEPT; JUMP``) into each predecessor
        copies = self.ctx.cfg.finally_copies
        if not (a in copies and b in copies and copies[a] is copies[b]):
            return False
        if (a in self.ctx.cfg.called_finally) != (b in self.ctx.cfg.called_finally):
            return False  # 3.8: a statement that leaves the try is not the end of its body
        # Copies of one finally body on two paths that go on differently (``return True``
        # after one) are not one place.
        after_a, after_b = self.ctx.cfg.finally_after[a], self.ctx.cfg.finally_after[b]
        return after_a is after_b or same_exit(after_a, after_b)


def written_exit(block: Block) -> bool:
    """Whether ``block`` is only a ``return <constant>`` that more than one way reaches
    (3.10+): a statement of the source's, never one of the copies the compiler makes of an
    exit without a line of its own, which each have one predecessor."""
    return (versions.COPIES_EXITS and len(block.preds) > 1 and len(block.instrs) == 2
            and block.instrs[0].op == "LOAD_CONST" and block.last.op == "RETURN_VALUE")
