"""Undo control-flow rewrites of the compiler's optimiser before structuring (`normalize`).

* **Loop rotation** (3.10+) and the tails that copied exits leave after loops: `rotation`.
* **Finally bodies** (3.9+): a copy of each on every normal way out of the ``try``, and one
  in the handler that re-raises (or, for a body that leaves, drops the exception and goes
  on). The copies are matched against the handler's instruction by instruction and marked
  (`mark_finally_copies`), so the structurer reads one ``finally`` body. 3.8 runs the body
  as a subroutine: the jump back after its ``END_FINALLY`` is found here (`dead_jump_back`).
"""
from typing import Any, List, Optional, Set, Tuple

from framescope.decompiler.frontend import versions
from framescope.decompiler.graph.cfg import CFG, Block
from framescope.decompiler.graph.copies import OPPOSITE, TERMINAL, same
from framescope.decompiler.graph.handlers import TRY, HandlerMap
from framescope.decompiler.graph.rotation import (split_loop_tails, split_shared_headers, unrotate_compound_loop,
                                                  unrotate_loops)


def normalize(cfg: CFG) -> None:
    changed = False
    while unrotate_compound_loop(cfg):
        changed = True
    changed = unrotate_loops(cfg) or changed
    if changed:
        cfg.renumber()
    changed = split_shared_headers(cfg) or changed
    changed = split_loop_tails(cfg) or changed
    changed = mark_finally_copies(cfg) or changed
    if changed:
        cfg.renumber()



def mark_finally_copies(cfg: CFG) -> bool:
    """Find the copy of each ``finally`` body on the normal exits of its ``try`` (3.9+).

    The copy is matched instruction by instruction against the handler's body (which
    ends with ``RERAISE``), following branches in both.  Where the copy ends its block
    is cut; ``cfg.finally_copies`` maps the copy's first block to the handler block and
    ``cfg.finally_after`` to the block where the normal path goes on.
    """
    hmap = HandlerMap(cfg)
    changed = False
    handlers = {b.handler for b in cfg.blocks if b.handler is not None}
    for handler in sorted(handlers, key=lambda h: h.target):
        hblock = hmap.block(handler)
        if hmap.kind(handler) != TRY:
            continue
        first = 1 if hblock.instrs[0].op == "PUSH_EXC_INFO" else 0
        start = hblock
        if first == len(hblock.instrs) and hblock.fall is not None:
            start, first = hblock.fall, 0  # the finally body starts with a nested try: a block of its own
        rest = [ins.op for ins in start.instrs[first:]]
        if rest and rest[0] == "POP_TOP":
            continue  # a bare except clause
        if any(op in ("CHECK_EXC_MATCH", "CHECK_EG_MATCH", "EXC_MATCH") for op in rest) \
                or not finally_releases_only(rest):
            continue
        for block in list(cfg.blocks):
            if not hmap.covers(block, handler) and not dead_clause_end(block):
                continue
            for exit in block.succs() + end_finally_next(cfg, block):
                if hmap.covers(exit, handler) or exit in cfg.finally_copies:
                    continue
                end = match_copy(start, first, exit)
                if end is None:
                    continue
                if exit.instrs[0].called_finally:
                    cfg.called_finally.add(exit)
                after_block, index = end
                if after_block is None:
                    after = None
                elif 0 < index < len(after_block.instrs):
                    after = cfg.split(after_block, index)
                    changed = True
                elif index == 0:
                    after = after_block
                else:
                    after = after_block.fall
                cfg.finally_copies[exit] = hblock
                cfg.finally_after[exit] = after
    return changed


def finally_releases_only(ops: List[str]) -> bool:
    """Whether each ``POP_EXCEPT`` among ``ops`` ends the release of a way out of a finally
    body (`versions.FINALLY_EXIT_RELEASES`), not an except clause."""
    for i, op in enumerate(ops):
        if op == "POP_EXCEPT" and not any(tuple(ops[i + 1 - len(run):i + 1]) == run
                                          for run in versions.FINALLY_EXIT_RELEASES):
            return False
    return True


def dead_clause_end(block: Block) -> bool:
    """The ``POP_EXCEPT; JUMP`` 3.8-3.10 lay out after an except clause that always leaves: no
    path reaches it, so no handler covers it, yet it jumps to the copy of an enclosing finally
    body on the normal path, the place where that try statement's body ends."""
    return (not versions.EXCEPTION_TABLE and not block.preds and block.handler is None and block.index > 0
            and [ins.op for ins in block.instrs] == ["POP_EXCEPT", "JUMP"])


def end_finally_next(cfg: CFG, block: Block) -> List[Block]:
    """3.8: the block after ``block``'s ``END_FINALLY`` (now ``RERAISE``), where it goes on when
    there is nothing to re-raise: after a try statement whose body and clauses all leave, the
    copy of an enclosing finally body that no other path reaches."""
    after = after_end_finally(cfg, block)
    return [after] if after is not None and not after.preds else []


def unreached_after_end_finally(cfg: CFG, block: Block) -> Optional[Block]:
    """3.8: the block after ``block``'s ``END_FINALLY`` when no edge reaches it from code that
    runs (the unreached end of a body that always leaves may still jump there)."""
    after = after_end_finally(cfg, block)
    return None if after is None or any(p in cfg.dom for p in after.preds) else after


def after_end_finally(cfg: CFG, block: Block) -> Optional[Block]:
    """3.8: the block laid out after ``block`` when ``block`` ends in ``END_FINALLY``, which
    falls into it when there is nothing to re-raise; None otherwise."""
    if not (versions.HANDLER_END_FALLS_THROUGH and block.last.is_end_finally()):
        return None
    return cfg.laid_out_after(block)


def dead_jump_back(cfg: CFG, block: Block) -> Optional[Block]:
    """3.8: the loop header that the unreached jump after ``block``'s ``END_FINALLY`` goes back to.

    A loop whose body is a try statement that always leaves (``while True: try: return x
    finally: ...``) keeps its jump back after the handler's ``END_FINALLY``, where only the
    end of the try body (``BEGIN_FINALLY``) would go on, the code after the statement (no
    path reaches it either) before it. No edge reaches the jump, yet the loop is there: the
    handler, which its header dominates, counts as jumping back.
    None when ``block`` is no such handler end.
    """
    after = unreached_after_end_finally(cfg, block)
    if after is None or after.last.op != "JUMP" or after.fall is not None or block not in cfg.dom:
        return None
    header = after.jump
    if header is None or header.index > block.index or not cfg.dom.dominates(header, block):
        return None
    if header.instrs[0].op == "FOR_ITER":
        return None  # a for loop is one without its jump back (see `back_edges`)
    return header


def advance(block: Optional[Block], index: int):
    """The position after ``block.instrs[index]`` when control falls through."""
    if block is None:
        return None, 0
    if index + 1 < len(block.instrs):
        return block, index + 1
    return block.fall, 0


def match_copy(hblock: Block, first: int, start: Block):
    """Where the copy of a finally body that starts at ``start`` ends: (block, index), or None.

    A finally body that ends by leaving (``break``, ``continue``, ``return``) drops the
    exception first on the exception path, before code its normal copy may start the same
    way (the ``POP_TOP`` of a loop's iterator): when matching instruction by instruction
    fails, the copy is matched again with that release skipped wherever it can be."""
    found = match_copy_walk(hblock, first, start, False)
    return found if found is not None else match_copy_walk(hblock, first, start, True)


def match_copy_walk(hblock: Block, first: int, start: Block, release_first: bool):
    """`match_copy` with the exception's release skipped first (``release_first``) or only
    where the instructions differ."""
    walk = CopyWalk(release_first)
    walk.todo.append((hblock, first, start, 0))
    while walk.todo:
        if not walk.follow(*walk.todo.pop()):
            return None
    if walk.steps > CopyWalk.MAX_STEPS:
        return None
    if not walk.ends:
        return None, 0  # a finally body that never completes (it raises or returns)
    if len(walk.ends) != 1:  # copies of one terminal tail (3.11+ duplicates them) count as one end
        return None
    return walk.end


class CopyWalk:
    """Walks a finally body (``h``: handler side) and its copy on the normal path (``n``) in step."""

    MAX_STEPS = 5000
    #: `step`'s answer when this path of the walk is over.
    STOP = "stop"

    def __init__(self, release_first: bool = False) -> None:
        #: Whether the release of the exception before a way out is skipped before matching.
        self.release_first = release_first
        #: Pairs of positions still to walk from: (handler block, index, copy block, index).
        self.todo: List[Tuple[Block, int, Block, int]] = []
        self.seen: Set[Tuple[int, int, int, int]] = set()
        #: Where the copy ends, each told by its code (or place when it goes on).
        self.ends: Set[Any] = set()
        #: The last end found: (block, index).
        self.end: Optional[Tuple[Block, int]] = None
        self.steps = 0

    def follow(self, hb: Optional[Block], hi: int, nb: Optional[Block], ni: int) -> bool:
        """Walk one path of both from the given positions; False when they differ."""
        while hb is not None and nb is not None:
            self.steps += 1
            key = (id(hb), hi, id(nb), ni)
            if key in self.seen or self.steps > self.MAX_STEPS:
                return True
            self.seen.add(key)
            moved = self.step(hb, hi, nb, ni)
            if moved is None:
                return False
            if moved is self.STOP:
                return True
            hb, hi, nb, ni = moved
        return hb is None and nb is None

    def step(self, hb: Block, hi: int, nb: Block, ni: int):
        """The next pair of positions after one instruction each; `STOP`, or None when they differ."""
        h_ins = hb.instrs[hi]
        if h_ins.op == "RERAISE" and hi == len(hb.instrs) - 1 and h_ins.arg == 0:
            self.finish(nb, ni)
            return self.STOP
        n_ins = nb.instrs[ni]
        if self.release_first:
            skip = finally_exit_release(hb, hi)
            if skip is not None:
                return skip[0], skip[1], nb, ni
        if (h_ins.op == "JUMP") != (n_ins.op == "JUMP"):
            # One side jumps where the other falls through (the layouts differ): look through it.
            if h_ins.op == "JUMP" and hb.jump is not None and hi == len(hb.instrs) - 1:
                return hb.jump, 0, nb, ni
            if n_ins.op == "JUMP" and nb.jump is not None and ni == len(nb.instrs) - 1:
                return hb, hi, nb.jump, 0
        if n_ins.op == OPPOSITE.get(h_ins.op) and hi == len(hb.instrs) - 1 and ni == len(nb.instrs) - 1:
            # The normal copy tests the other way round (3.12+ lays out an arm that leaves
            # the loop as the jump): the arms swap.
            if hb.jump is None or nb.jump is None or hb.fall is None or nb.fall is None:
                return None
            self.todo.append((hb.jump, 0, nb.fall, 0))
            return hb.fall, 0, nb.jump, 0
        if not same(h_ins, n_ins):
            skip = release_run(hb, hi)
            if skip is None or not same(skip[0].instrs[skip[1]], n_ins):
                return None
            return skip[0], skip[1], nb, ni  # a return in the finally body releases the exception first
        if h_ins.op in TERMINAL:
            return self.STOP
        if h_ins.op == "JUMP":
            if hi != len(hb.instrs) - 1 or ni != len(nb.instrs) - 1:
                return None
            return hb.jump, 0, nb.jump, 0
        if hi == len(hb.instrs) - 1 and hb.jump is not None:
            if ni != len(nb.instrs) - 1 or nb.jump is None:
                return None
            self.todo.append((hb.jump, 0, nb.jump, 0))
        return advance(hb, hi) + advance(nb, ni)

    def finish(self, nb: Block, ni: int) -> None:
        """The finally body re-raises here: the copy ends at ``nb``'s instruction ``ni``."""
        while ni == len(nb.instrs) - 1 and nb.last.op == "JUMP" and nb.jump is not None:
            nb, ni = nb.jump, 0  # the copy ends with a jump to where it goes on
        self.ends.add(tuple((i.op, repr(i.arg)) for i in nb.instrs[ni:]) if not nb.succs() else (id(nb), ni))
        self.end = (nb, ni)


def release_run(block: Block, index: int):
    """Where the code goes on, (block, index), after it drops the handled exception from ``index`` on.

    A ``return`` in a ``finally`` body pops the exception and ``POP_EXCEPT``s (with ``SWAP``s
    around a return value) before returning; its copy on the normal path has none of that.
    None when the code at ``index`` does something else.
    """
    start = (block, index)
    seen = 0
    while block is not None and block.instrs[index].op in ("SWAP", "POP_TOP") and seen < 10:
        block, index = advance(block, index)
        seen += 1
    if block is None or (block, index) == start or block.instrs[index].op != "POP_EXCEPT":
        return None
    block, index = advance(block, index)
    return (block, index) if block is not None else None


def finally_exit_release(block: Block, index: int):
    """Where the code goes on, (block, index), after the exact run that drops the handled
    exception for a way out of a finally body from ``index`` on (`versions.FINALLY_EXIT_RELEASES`);
    None when the code there is no such run."""
    for run in versions.FINALLY_EXIT_RELEASES:
        at: Optional[Block] = block
        i = index
        for op in run:
            if at is None or at.instrs[i].op != op:
                break
            at, i = advance(at, i)
        else:
            if at is not None:
                return at, i
    return None

