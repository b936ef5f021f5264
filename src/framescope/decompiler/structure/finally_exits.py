"""Ways out of a loop through the finally bodies of the try statements they leave.

3.9+ copies a finally body onto each ``return``, ``break`` and ``continue`` that leaves
the try statement (3.8 calls it as a subroutine); what follows the copies tells them
apart. A ``return`` loads its value before the copies (a constant after them) and falls
into its ``RETURN_VALUE``; a ``break`` or ``continue`` jumps on, or (3.12+, where the code
after the loop has no other way in) goes on into the code after the loop laid out in place.
"""
import ast
from typing import TYPE_CHECKING, List, Optional, Set, Tuple

from framescope.decompiler.frontend import versions
from framescope.decompiler.frontend.instructions import Handler, Instr
from framescope.decompiler.graph.cfg import CFG, Block
from framescope.decompiler.graph.traversal import reachable
from framescope.decompiler.structure.loop_exits import (
    jumps_on_after_copy, leaves_function, returns_after_statements, straight_run)

if TYPE_CHECKING:  # pragma: no cover
    from framescope.decompiler.structure.conditions import Cond
    from framescope.decompiler.structure.context import StructureContext
    from framescope.decompiler.structure.loops import Loop


def returns_through_finally(cfg: CFG, block: Block) -> bool:
    """Whether ``block`` starts copies of finally bodies that go on to return or raise."""
    last, end = past_finally(cfg, block)
    if last is None or end is None or jumps_on(last, end):
        return False  # a finally body that never completes: nothing tells a return from a break
    return leaves_function(end) and (versions.FINALLY_SUBROUTINES or not fresh_exit(straight_run(end)[1]))


def break_through_finally(ctx: "StructureContext", block: Block, enclosing: Set[Handler]) -> Optional[Block]:
    """Where a ``break`` that starts at ``block`` with copies of finally bodies goes on after
    them: where it jumps (3.8: where ``CALL_FINALLY``'s caller jumps), or its copy of the
    code after the loop; the copy itself when it ends the body of a try statement around the
    loop (``enclosing``: their handlers). None when ``block`` is no such copy."""
    cfg = ctx.cfg
    if versions.FINALLY_SUBROUTINES:
        after = cfg.finally_after.get(block)
        if block not in cfg.called_finally or after is None or not jumps_on_after_copy(block, after):
            return None
        return after
    last, end = past_finally(cfg, block)
    if last is None or end is None:
        return None
    if any(cfg.finally_copies[block] is ctx.hmap.block(handler) for handler in enclosing):
        return block  # the loop ends that try body: the statement's own way out
    if jumps_on(last, end) or (leaves_function(end) and fresh_exit(straight_run(end)[1])):
        return end
    return None


def past_finally(cfg: CFG, block: Block) -> Tuple[Optional[Block], Optional[Block]]:
    """The last of the copies of finally bodies that a way out starting at ``block`` runs in a
    row, and where it goes on after them; None for the copy when ``block`` is none."""
    last, seen = None, 0
    current: Optional[Block] = block
    while current in cfg.finally_copies and seen < 10:
        after = cfg.finally_after[current]
        last, seen = current, seen + 1
        if after is None or jumps_on(current, after):
            return last, after
        current = after
    return last, current


def jumps_on(copy: Block, after: Block) -> bool:
    """Whether the copy of a finally body from ``copy`` on ends by jumping to ``after``, as
    ``break`` and ``continue`` do, not by falling into the rest of a ``return``."""
    if versions.FINALLY_SUBROUTINES:
        return jumps_on_after_copy(copy, after)
    return jumps_after_copy(copy, after)


def jumps_after_copy(copy: Block, after: Block) -> bool:
    """Whether the copy of a finally body from ``copy`` on (3.9+) gets to ``after`` only by
    jumps; an ``if`` ending the finally body has an arm that falls into where it goes on."""
    ends = [p for p in reachable([copy], stop=after) if p is not after and after in p.succs()]
    return bool(ends) and all(p.jump is after and p.fall is None and p.last.op == "JUMP" for p in ends)


def fresh_exit(instrs: List[Instr]) -> bool:
    """Whether ``instrs``, after the copies of finally bodies on a way out of a try statement,
    start statements of their own and return or raise: a ``break``'s copy of the code after
    the loop. A ``return`` loads its value before the copies, but for a constant, and leaving
    the statements around it on the way moves the value up first (``SWAP``) or pops."""
    if not instrs or instrs[0].op in ("RETURN_VALUE", "SWAP", "ROT", "POP_TOP", "POP_EXCEPT"):
        return False
    return returns_after_statements(instrs)


def continue_through_finally(ctx: "StructureContext", cond: "Cond", true_end: Optional[Block],
                             false_end: Optional[Block]) -> Tuple[Optional[Block], Optional[Block]]:
    """3.8: the arm ends of ``cond`` once an arm that calls a finally body on its way back
    to the loop (``CALL_FINALLY``: the clean-up of ``except E as name``, say) is written as
    ``continue``.

    Both arms get to the loop's start when the statement around them ends the loop
    body, but only a written ``continue`` calls the clean-up; running off the end of
    the statement enters it with ``BEGIN_FINALLY``."""
    if not versions.FINALLY_SUBROUTINES or not ctx.loops:
        return true_end, false_end
    loop = ctx.loops[-1]
    if true_end is not loop.header or false_end is not loop.header:
        return true_end, false_end
    arms = ((cond.true_state, cond.true_block), (cond.false_state, cond.false_block))
    called = [arm is not None and calls_finally_back(arm, loop) for _, arm in arms]
    if called[0] == called[1]:
        return true_end, false_end
    arms[called.index(True)][0].stmts.append(ast.Continue())
    return (None, false_end) if called[0] else (true_end, None)


def calls_finally_back(arm: Block, loop: "Loop") -> bool:
    """Whether the arm from ``arm`` jumps back to ``loop``'s start after a called finally body."""
    return any(b.jump is loop.header and any(ins.called_finally for ins in b.instrs)
               for b in reachable([arm], exclude=loop.header, inside=loop.body))
