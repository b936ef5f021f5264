"""Protected regions: ``try`` (except clauses, ``else``, ``finally``) and ``with`` statements.

A block covered by an exception handler that belongs to a statement (see `handlers.py`)
starts that statement; its body is walked as a region that ends where the covered
blocks end.  Except clauses are read from the handler's code; a ``finally`` body from
the handler, its copies on the normal paths being skipped (`normalize.py` marks them).
"""
import ast
from typing import TYPE_CHECKING, List, Optional, Tuple

from framescope.decompiler.frontend import versions
from framescope.decompiler.frontend.instructions import Handler, Instr
from framescope.decompiler.graph.cfg import Block, natural_loop, postdominators
from framescope.decompiler.graph.handlers import TRY, WITH, HandlerMap
from framescope.decompiler.graph.copies import same_run
from framescope.decompiler.graph.traversal import follow_jumps, jump_chain, reachable
from framescope.decompiler.simulate import values as v
from framescope.decompiler.simulate.sametree import same_tree
from framescope.decompiler.simulate.state import State
from framescope.decompiler.structure.arms import ends_control
from framescope.decompiler.structure.clauses import TRY_NODES, leaving_by, strip_name_cleanup, strip_reraise, without_pass
from framescope.decompiler.structure.region_exits import RegionExits
from framescope.decompiler.structure.starclauses import StarClauseBuilder, code_after, is_star_handler
from framescope.decompiler.structure.try_exits import (
    breaks_out, continues_through_finally, copy_source, ends_like, leaves_clause, leaves_through_finally_copy,
    left_try_first, normal_with_exit, outside_with, pops_iterator_after_finally, pops_iterators)
from framescope.decompiler.structure.unreached import UnreachedCode

if TYPE_CHECKING:  # pragma: no cover
    from framescope.decompiler.structure.context import StructureContext
    from framescope.decompiler.structure.loops import LoopBuilder
    from framescope.decompiler.structure.statements import Structurer

class Region:
    """A protected region: the blocks an exception in which reaches ``handler``."""

    def __init__(self, handler: Handler, hmap: HandlerMap, depth: int) -> None:  # noqa: D107
        self.handler = handler
        self.hmap = hmap
        #: Stack depth on normal exit; more values on the way out mean a return in progress.
        self.depth = depth

    def contains(self, block: Block) -> bool:
        return self.hmap.covers(block, self.handler)


class ProtectedBuilder:
    """Builds ``try`` and ``with`` statements from protected regions, for the walker."""

    def __init__(self, ctx: "StructureContext", walker: "Structurer", loop_builder: "LoopBuilder",
                 exits: RegionExits) -> None:
        self.ctx = ctx
        #: Walks bodies and clauses.
        self.walker = walker
        #: Tells a jump that leaves a loop (``break``, ``continue``) from one that leaves the region.
        self.loop_builder = loop_builder
        #: The ways out of the regions being built.
        self.exits = exits
        self.star_builder = StarClauseBuilder(ctx, self)
        #: Where 3.8-3.9 go on after code no path reaches.
        self.unreached = UnreachedCode(ctx, loop_builder)

    def repeats_after(self, instrs: List[Instr], state: State) -> bool:
        """Whether ``instrs`` repeat the code after the try statement whose clause is being built.

        Only 3.10+ copies it into the clauses: before, a clause that ends like the
        function (``return``) wrote that statement itself.
        """
        if not versions.COPIES_EXITS or self.keeps_value(state) \
                or breaks_out(instrs, state.stack, self.ctx.loops):
            return False
        return bool(self.ctx.after_try) and copy_source(self.ctx.after_try[-1], instrs) is not None

    def follows_try(self, instrs: List[Instr], state: State) -> bool:
        """Whether ``instrs``, right after a clause's ``POP_EXCEPT``, are the code after a try
        statement whose body (else clause included) never gets there (3.10+ lays that code
        out right after the clause): not a return of a constant or a jump, the only ways a clause leaves after
        ``POP_EXCEPT`` (a return of another value loads it first), and no ``with`` or
        ``finally`` around whose clean-up could come first."""
        if not versions.COPIES_EXITS or not self.ctx.after_try or self.body_reaches(instrs):
            return False
        if self.keeps_value(state):
            return False
        if self.ctx.regions or self.ctx.cfg.finally_copies:
            return False
        return bool(instrs) and not leaves_clause(instrs)

    def keeps_value(self, state: State) -> bool:
        """Whether the clause that just ended keeps a value on the stack: a return leaving the
        clause (and loops, whose iterators it pops next), never the start of a statement."""
        return bool(self.ctx.clause_depths) and len(state.stack) > self.ctx.clause_depths[-1]

    def body_reaches(self, instrs: List[Instr]) -> bool:
        """Whether the body of the try whose clause is being built (its else clause included)
        may get to code ending like ``instrs``: then these are a copy of it. A body that never
        completes, or an else clause that always returns or raises (``try: ... except E: pass
        else: raise ...``), leaves the code after the statement to the clauses alone."""
        start = self.ctx.after_try[-1]
        return start is not None and any(ends_like(b, instrs) for b in reachable([start]))

    # -- try, with --------------------------------------------------------------------------------
    def loop_encloses(self, header: Block, handler: Handler) -> bool:
        """Whether the loop headed by ``header`` contains the statement protected by ``handler``.

        It does when the handler code loops back, or when every protected block is in
        the loop; a protected block after the loop means the try contains the loop.
        """
        if not versions.EXCEPTION_TABLE and any(latch.handler is not None and self.ctx.hmap.covers(latch, handler)
                                for latch in self.ctx.back_edges[header]):
            # Up to 3.10 the jump back of a loop around the try comes after its POP_BLOCK.
            return False
        loop = natural_loop(header, self.ctx.back_edges[header], self.ctx.cfg.blocks)
        hblock = self.ctx.hmap.block(handler)
        if hblock in loop or continues_through_finally(self.ctx.cfg, hblock, header):
            return True
        if versions.EXCEPTION_TABLE and all(self.ctx.hmap.covers(b, handler) for b in loop):
            # The whole loop is protected, back edges included: a try around a loop left
            # only by ``break`` (3.14 jumps straight to the finally code after it). Up to
            # 3.10 a jump back outside any block (after ``POP_BLOCK``) is outside the try.
            return False
        return all(b in loop for b in self.ctx.cfg.blocks if b.handler is not None and self.ctx.hmap.covers(b, handler))

    def protected(self, block: Block, handler: Handler, state: State) -> Optional[Block]:
        kind = self.ctx.hmap.kind(handler)
        if kind == WITH:
            return self.with_stmt(block, handler, state)
        if kind == TRY:
            return self.try_stmt(block, handler, state)
        raise self.ctx.error("unsupported protected region (%s)" % kind, block)

    def region_body(self, block: Block, handler: Handler, state: State, depth: int) -> Optional[Block]:
        self.ctx.regions.append(Region(handler, self.ctx.hmap, depth))
        try:
            return self.walker.walk(block, None, state, entering=True)
        finally:
            self.ctx.regions.pop()

    def with_stmt(self, block: Block, handler: Handler, state: State) -> Optional[Block]:
        entered = state.stack[-1] if state.stack else None
        if not isinstance(entered, v.Entered):
            raise self.ctx.error("with body without its context manager", block)
        body_state = State(state.stack)
        end = self.region_body(block, handler, body_state, len(state.stack) - 1)
        suppressed = self.suppressed_end(self.ctx.hmap.block(handler))
        if suppressed is not None and end is not None and end is not suppressed:
            # A body that ends with ``return CONSTANT`` (or a jump) leaves the region before
            # that statement: it follows the call of ``__exit__`` on the normal path.
            rest = State(body_state.stack)
            after = self.walker.walk(end, suppressed, rest)
            if (after is not None and not self.exits.same_place(follow_jumps(after), follow_jumps(suppressed)) and self.ctx.regions
                    and not self.ctx.regions[-1].contains(after)):
                # The statement leaves an enclosing with or try too.
                path = self.exits.exit_path(after)
                if path is not None:
                    after = self.exits.finish_exit(path, rest)
            if after is None and rest.stmts and (versions.FINALLY_SUBROUTINES  # its own clean-up copy
                                                 or not self.repeats_suppressed(rest.stmts, suppressed, state)):
                body_state.stmts.extend(rest.stmts)
                end = None
        if end is None and suppressed is not None:
            # The body always leaves, but ``__exit__`` may swallow its exception: the code
            # after the statement is reached from the handler only.
            end = suppressed
            body_state.stack[:] = outside_with(state.stack)
        item = ast.withitem(context_expr=entered.manager, optional_vars=entered.target)
        body = body_state.stmts
        items = [item]
        cls = ast.AsyncWith if entered.is_async else ast.With
        if len(body) == 1 and type(body[0]) is cls:
            items += body[0].items
            body = body[0].body
        state.stmts.append(cls(items=items, body=body or [ast.Pass()], type_comment=None))
        state.stack[:] = body_state.stack
        return end

    def repeats_suppressed(self, stmts: List[ast.stmt], suppressed: Block, state: State) -> bool:
        """Whether ``stmts`` are what the code after the with statement does (3.12+ copies it)."""
        path = self.exits.exit_path(suppressed)
        if path is None:
            return False
        after = State(outside_with(state.stack))
        self.exits.finish_exit(path, after)
        return len(after.stmts) == len(stmts) and all(same_tree(a, b) for a, b in zip(after.stmts, stmts))

    def suppressed_end(self, hblock: Block) -> Optional[Block]:
        """Where a with statement goes on once its ``__exit__`` swallowed an exception."""
        ops = [ins.op for ins in hblock.instrs]
        if "WITH_EXCEPT_START" not in ops:
            return None
        if hblock.last.is_end_finally():
            # 3.8: ``END_FINALLY`` goes on with the next instruction when nothing is to be re-raised.
            nxt = hblock.index + 1
            return self.ctx.cfg.blocks[nxt] if nxt < len(self.ctx.cfg.blocks) else None
        test = ops[ops.index("WITH_EXCEPT_START") + 1:]
        if test[:3] == ["GET_AWAITABLE", "LOAD_CONST", "YIELD_FROM"]:
            test = test[3:]  # ``async with`` awaits the result first
        if hblock.last.op != "POP_JUMP_IF_TRUE" or len(test) != 1:
            return None
        block, seen, released = hblock.jump, 0, False
        while block is not None and seen < 10:
            seen += 1
            i = 0
            while i < len(block.instrs) and block.instrs[i].op in ("POP_TOP", "POP_EXCEPT", "NOP"):
                if block.instrs[i].op == "POP_EXCEPT":
                    if released:
                        break  # the end of an except clause the with statement ends
                    released = True
                i += 1  # drop the exception, its state and the context manager's exit
            if i < len(block.instrs) and block.instrs[i].op != "JUMP":
                if i:
                    block = self.ctx.cfg.split(block, i)
                    self.ctx.ipdom = postdominators(self.ctx.cfg)
                return block
            block = block.jump if i < len(block.instrs) else block.fall
        return None

    def try_stmt(self, block: Block, handler: Handler, state: State) -> Optional[Block]:
        body_state = State(state.stack)
        body_end = self.try_body(block, handler, body_state, len(state.stack))
        hblock = self.ctx.hmap.block(handler)
        entry, first = self.handler_entry(hblock, handler, state)
        final = self.finally_start(hblock, first, entry)
        if final is not None:
            return self.finally_stmt(body_state, body_end, hblock, entry, handler, state, *final)
        body_end = self.body_leaves(body_end, body_state)
        star = is_star_handler(hblock, first)
        self.ctx.after_try.append(follow_jumps(body_end))
        try:
            if star:
                handlers, ends, states = self.star_builder.clauses(hblock, first, entry, handler.depth)
            else:
                handlers, ends, states = self.except_clauses(hblock, first, entry, handler.depth)
        finally:
            self.ctx.after_try.pop()
        body_end = self.body_leaves_through_finally(body_end, hblock, ends, body_state)
        if not star:  # no except* clause can leave the statement
            ends = self.clause_exits(body_end, handlers, ends, states)
        after = self.clauses_end(hblock, ends)
        passed = jump_chain(body_end)
        body_end = passed[-1] if passed else None
        # No code after the statement belongs to one except* clause: it runs after them all.
        after = self.clause_tails(after, body_end, [] if star else handlers, ends, states)
        written = self.written_loop_exit(hblock, body_end, after, body_state, state)
        if written is not None:
            after, orelse = written
        else:
            after, orelse = self.else_clause(hblock, body_end, passed, after, state,
                                             all(ends_control(node.body) for node in handlers))
        if (not orelse and len(body_state.stmts) > 1 and isinstance(body_state.stmts[-1], ast.Break)
                and self.unreached.dead_else_break(hblock)):
            orelse = [body_state.stmts.pop()]
        node = (ast.TryStar if star else ast.Try)(body=body_state.stmts or [ast.Pass()], handlers=handlers,
                                                  orelse=orelse, finalbody=[])
        state.stmts.append(node)
        if star:
            state.stmts.extend(code_after(states[0]))
        return after

    def try_body(self, block: Block, handler: Handler, body_state: State, depth: int) -> Optional[Block]:
        """Walk the try body into ``body_state``; where it goes on (None when it cannot complete)."""
        body_end = self.region_body(block, handler, body_state, depth)
        blocks = self.unreached.returns_constant(body_end, handler)
        if blocks and len(body_state.stack) == depth and pops_iterators(blocks, body_state.stack):
            # ``return <constant>`` ends the body: the compiler leaves the block first (the
            # constant cannot raise), so the return follows the region, before the handler.
            for one in blocks:
                for ins in one.instrs:
                    self.ctx.sim.step(ins, body_state)
            body_end = None
        return body_end

    def body_leaves(self, body_end: Optional[Block], body_state: State) -> Optional[Block]:
        """3.8: a body that ends by a statement leaving through an enclosing finally body (its
        call of that body, ``CALL_FINALLY``) ends with that statement; None then."""
        if body_end is None or body_end not in self.ctx.cfg.called_finally:
            return body_end
        return None if self.finish_leaving(body_end, body_state) else body_end

    def body_leaves_through_finally(self, body_end: Optional[Block], hblock: Block, ends: List[Optional[Block]],
                                    body_state: State) -> Optional[Block]:
        """3.9+: a body that ends by a return, break or continue leaving an enclosing finally
        body (`leaves_through_finally_copy`) ends with that statement; None then."""
        if not leaves_through_finally_copy(self.ctx.cfg, body_end, hblock, ends, self.exits.same_place):
            return body_end
        return None if self.finish_leaving(body_end, body_state) else body_end

    def leaves_loop_in_body(self, body_end: Block, hblock: Block, body_state: State) -> bool:
        """Whether a ``break`` or ``return`` ends the body, through the copy of the finally body
        at ``body_end`` (`pops_iterator_after_finally`); the body then ends with it."""
        return pops_iterator_after_finally(self.ctx, body_end, hblock, body_state.stack) \
            and self.finish_leaving(body_end, body_state)

    def finish_leaving(self, body_end: Block, body_state: State) -> bool:
        """Emit the statement by which the try body leaves at ``body_end``, after the finally
        body; False when no straight way out starts there."""
        path = self.exits.exit_path(body_end)
        if path is None:
            return False
        self.exits.finish_exit(path, body_state)
        return True

    def handler_entry(self, hblock: Block, handler: Handler, state: State) -> Tuple[State, int]:
        """The stack the handler starts with, and its first instruction after taking the exception."""
        entry = State(state.stack[:handler.depth] + v.handler_entry_values(handler.lasti))
        first = 0
        if hblock.instrs[0].op == "PUSH_EXC_INFO":
            self.ctx.sim.step(hblock.instrs[0], entry)
            first = 1
        return entry, first

    def finally_start(self, hblock: Block, first: int, entry: State) -> Optional[Tuple[Block, int]]:
        """Where the finally body starts when the handler is one (block, first instruction)."""
        if first == len(hblock.instrs) and hblock.fall is not None:
            # A handler whose code starts with a nested try: that try's range starts a new block.
            return (hblock.fall, 0) if self.is_finally(hblock.fall, 0, entry) else None
        return (hblock, first) if self.is_finally(hblock, first, entry) else None

    def clause_exits(self, body_end: Optional[Block], handlers: List[ast.ExceptHandler], ends: List[Optional[Block]],
                     states: List[State]) -> List[Optional[Block]]:
        """End the clauses that leave through an enclosing finally body with the statement that leaves.

        A ``return``, ``break`` or ``continue`` in a clause runs its own copy of the finally
        body first, one that the body (and its else clause) never gets to.
        """
        copies = self.ctx.cfg.finally_copies
        if not any(end in copies for end in ends):
            return ends
        after_body = reachable([follow_jumps(body_end)]) if body_end is not None else set()
        out = []
        for node, end, st in zip(handlers, ends, states):
            path = None
            # 3.8 tells them apart: a statement that leaves calls the finally body (CALL_FINALLY).
            if end in self.ctx.cfg.called_finally or (
                    not versions.FINALLY_SUBROUTINES and end in copies and body_end is not None
                    and end not in after_body and not any(b in copies and self.exits.same_place(end, b) for b in after_body)):
                path = self.exits.exit_path(end)
            if path is not None:
                rest = State(st.stack)
                self.exits.finish_exit(path, rest)
                node.body = leaving_by(node.body, rest.stmts)
                end = None
            out.append(end)
        return out

    def clauses_end(self, hblock: Block, ends: List[Optional[Block]]) -> Optional[Block]:
        """Where the except clauses that complete go on: one place for all of them."""
        reached = [e for e in ends if e is not None]
        after = reached[0] if reached else None
        if any(not self.exits.same_place(e, after) for e in reached):
            raise self.ctx.error("except clauses end in different places", hblock)
        return after

    def clause_tails(self, after: Optional[Block], body_end: Optional[Block], handlers: List[ast.ExceptHandler],
                     ends: List[Optional[Block]], states: List[State]) -> Optional[Block]:
        """End each clause with the statements only it runs; where the try statement goes on."""
        if self.leaves_region(after, body_end):
            # The clauses go on out of an enclosing with or try (``return CONSTANT``, or
            # ``break``, run after its clean-up): that statement ends each of them.
            path = self.exits.exit_path(after)
            for handler_node, end, st in zip(handlers, ends, states):
                if end is not None:
                    rest = State(st.stack)
                    self.exits.finish_exit(path, rest)
                    handler_node.body = leaving_by(handler_node.body, rest.stmts)
            after = None
        tails = [st.tail for st in states if st.tail is not None]
        if after is None and tails:
            after = self.shared_tail(body_end, tails[0])
        # Where the walk resumes the code after the try: the first clause's tail when it is
        # that code itself (laid out after the clause, which falls into it), not only a copy.
        shared = after.instrs[self.ctx.resume.get(after, 0):] if after is not None else []
        for handler_node, st in zip(handlers, states):
            if st.tail is not None and after is not st.tail[0] and (
                    after is None or not same_run(shared, st.tail[0].instrs[st.tail[1]:])):
                # Not the code after the try: the clause's own last statements.
                rest = State(st.stack)
                self.walker.walk(st.tail[0], None, rest, st.tail[1])
                handler_node.body = without_pass(handler_node.body) + rest.stmts
        return after

    def else_clause(self, hblock: Block, body_end: Optional[Block], passed: List[Block], after: Optional[Block],
                    state: State, clauses_leave: bool = False) -> Tuple[Optional[Block], List[ast.stmt]]:
        """Where the try statement goes on, and its else clause: what the body runs before it
        gets there. ``clauses_leave``: each except clause ends in a return, raise, break or continue."""
        if after is None and clauses_leave and self.else_laid_out(hblock, body_end):
            else_state = State(state.stack)
            return self.walker.walk(body_end, None, else_state), else_state.stmts
        if after is None and body_end is not None and not versions.COPIES_EXITS:
            after = self.unreached.dead_clause_exit(hblock, body_end)
        if after is None:
            # Where the body stopped, not where its jumps lead: the walk around may stop on the way.
            return (passed[0] if passed else self.unreached.unmatched_exit(hblock)), []
        if body_end is None:
            return after, self.unreached_else(hblock, after, state)
        if after in passed or self.exits.same_place(body_end, after):
            return after, []  # no else clause (the body jumps on through where the clauses go on)
        else_state = State(state.stack)
        end = self.walker.walk(body_end, after, else_state)
        if end is not None and not self.exits.same_place(follow_jumps(end), follow_jumps(after)):
            raise self.ctx.error("else clause ends elsewhere", body_end)
        return after, else_state.stmts

    def written_loop_exit(self, hblock: Block, body_end: Optional[Block], after: Optional[Block],
                          body_state: State, state: State) -> Optional[Tuple[Optional[Block], List[ast.stmt]]]:
        """3.8: where a try statement whose body ends with ``continue`` or ``break`` (added to
        ``body_state``) goes on, and its else clause; None when the body does not end so.
        ``after``: where its except clauses go on (None when they all leave too).

        The handler's ``END_FINALLY`` falls into the code laid out after it: the else clause
        (which no path reaches when the body leaves), else the code after the statement.
        So a body that jumps elsewhere than there wrote its jump, even one to where the
        clauses go on (the end of the loop body)."""
        if not versions.HANDLER_END_FALLS_THROUGH or body_end is None:
            return None
        leave = self.loop_builder.loop_control(follow_jumps(body_end), None)
        dead = self.unreached.unmatched_exit(hblock)
        if leave is None or dead is None:
            return None
        if after is None:
            after = body_end  # the clauses leave too: the else clause goes on as the body does
        if self.exits.same_place(dead, after):
            orelse: List[ast.stmt] = []
            if self.exits.same_place(body_end, after):
                return None  # the body runs off its end
        else:
            orelse = self.unreached_else(hblock, after, state)
            if not orelse:
                return None
        body_state.stmts.append(leave)
        return after, orelse

    def unreached_else(self, hblock: Block, after: Block, state: State) -> List[ast.stmt]:
        """3.8: the else clause of a try statement whose body always leaves. No path reaches
        it, but the compiler still lays it out after the handler's ``END_FINALLY``, which
        falls into it, before the code after the statement where the clauses go on."""
        dead = self.unreached.unmatched_exit(hblock)
        if dead is None or any(p in self.ctx.cfg.dom for p in dead.preds) or self.exits.same_place(dead, after):
            return []
        else_state = State(state.stack)
        end = self.walker.walk(dead, after, else_state)
        if end is not None and not self.exits.same_place(follow_jumps(end), follow_jumps(after)):
            return []  # not an else clause: code of its own that no path reaches
        return else_state.stmts

    def else_laid_out(self, hblock: Block, body_end: Optional[Block]) -> bool:
        """Whether the body of a try statement whose clauses all leave goes on to code laid out
        before them, which is then its else clause (the code after the statement would follow
        the clauses). Not inside an except clause, where 3.12+ copies the code after the
        enclosing statement. 3.14 tells the two apart by the loads of locals (`versions.BORROWED_LOADS`)."""
        if versions.BORROWED_LOADS and body_end is not None and not self.ctx.after_try:
            # Both are laid out right after the body; only the else clause's loads are borrowed.
            # (Code that other paths reach too is after the statement.)
            return len(body_end.preds) == 1 and any(ins.is_borrowed_load() for ins in body_end.instrs)
        return (versions.ELSE_BEFORE_CLAUSES and body_end is not None and body_end.index < hblock.index
                and not (len(body_end.instrs) == 1 and body_end.jump is not None) and not self.ctx.after_try)

    def leaves_region(self, after: Optional[Block], body_end: Optional[Block]) -> bool:
        """Whether except clauses that go on at ``after`` leave the enclosing with by a way of
        their own (a return, break or continue after the with's clean-up), the body not."""
        if after is None or not self.ctx.regions or (body_end is not None and self.exits.same_place(after, body_end)):
            return False
        if normal_with_exit(after):
            return False  # 3.8: the with's normal exit; a statement leaving it has a clean-up of its own
        region = self.ctx.regions[-1]
        if region.contains(after) or (self.ctx.hmap.kind(region.handler) != WITH and not left_try_first(after)):
            return False  # leaving a try needs no code on 3.11+: no sign of a statement there
        if body_end is None:
            # 3.8: a body that returns a constant after the with's clean-up (see `try_body`);
            # the clauses leave by their own statement unless they go on to the with's normal
            # exit, the clean-up that jumps past the with's exception handler.
            return versions.UNMATCHED_FALLS_THROUGH and self.exits.exit_path(after) is not None
        seen, work = set(), [body_end] if region.contains(body_end) else []
        while work:  # an else clause that goes on where the clauses go: they fall off the try
            block = work.pop()
            if block in seen:
                continue
            if self.exits.same_place(block, after):
                return False
            seen.add(block)
            work.extend(block.succs())
        # A body that leaves the with too (the try ends the with body) leaves it by its
        # normal exit: the clauses' own exit is then theirs alone.
        return self.exits.exit_path(after) is not None

    def shared_tail(self, start: Optional[Block], tail) -> Optional[Block]:
        """The block on the normal path that the clauses' copied tails repeat, cut out if needed."""
        copied = tail[0].instrs[tail[1]:]
        block = copy_source(start, copied)
        if block is not None:
            n = len(block.instrs)
            if n > len(copied):
                block = self.ctx.cfg.split(block, n - len(copied))
                self.ctx.ipdom = postdominators(self.ctx.cfg)
            return block
        if tail is not None:
            self.ctx.resume[tail[0]] = tail[1]
            return tail[0]
        return None

    def is_finally(self, block: Block, first: int, entry: State) -> bool:
        """A handler that keeps the exception to re-raise it after its code is a ``finally``."""
        rest = block.instrs[first:]
        if any(ins.op in ("CHECK_EXC_MATCH", "EXC_MATCH", "CHECK_EG_MATCH") for ins in rest):
            return False
        return not (rest and rest[0].op == "POP_TOP")

    def except_clauses(self, block: Block, first: int, entry: State, depth: int):
        handlers: List[ast.ExceptHandler] = []
        ends: List[Optional[Block]] = []
        states: List[State] = []
        while True:
            rest = block.instrs[first:]
            if [ins.op for ins in rest] == ["RERAISE"] or (not rest):
                return handlers, ends, states  # no clause matched: re-raise
            last = block.last
            typed = last.op == "POP_JUMP_IF_FALSE" and any(
                ins.op in ("CHECK_EXC_MATCH", "EXC_MATCH") for ins in rest)
            clause = State([v.Exc(x.kind) if isinstance(x, v.Exc) else x for x in entry.stack])
            if typed:
                for ins in rest[:-1]:
                    self.ctx.sim.step(ins, clause)
                match = clause.pop()
                if not isinstance(match, v.ExcMatch):
                    raise self.ctx.error("except clause without a type test", block)
                exc_type = match.type
                start, start_first = block.fall, 0
            else:
                exc_type = None
                start, start_first = block, first
            markers = [x for x in clause.stack if isinstance(x, v.Exc)]
            self.ctx.clause_depths.append(depth)
            try:
                end = self.walker.walk(start, None, clause, start_first)
            finally:
                self.ctx.clause_depths.pop()
            names = [m.target.id for m in markers if isinstance(m.target, ast.Name)]
            body = strip_name_cleanup(clause.stmts, names[0] if names else None)
            handlers.append(ast.ExceptHandler(type=exc_type, name=names[0] if names else None,
                                              body=body or [ast.Pass()]))
            ends.append(end)
            states.append(clause)
            if not typed:
                return handlers, ends, states
            if block.jump is None:
                raise self.ctx.error("except clause whose type test jumps nowhere", block)
            self.unreached.keep_written_continue(handlers[-1].body, block.jump)
            block, first = block.jump, 0

    def finally_stmt(self, body_state: State, body_end: Optional[Block], hblock: Block, entry: State,
                     handler: Handler, state: State, start: Block, first: int) -> Optional[Block]:
        """The ``finally`` whose handler is ``hblock``; its code starts at ``start`` (``first`` on)."""
        final_state = State(entry.stack)
        # A finally body that leaves (``break``, ``continue``, ``return``) releases the
        # exception first; the values below it then are the try statement's own.
        self.ctx.clause_depths.append(handler.depth)
        try:
            out = self.walker.walk(start, None, final_state, first)
        finally:
            self.ctx.clause_depths.pop()
        # A return in the finally body releases the exception first: no statement of the source.
        cleaned = strip_name_cleanup(final_state.stmts, None)
        final = strip_reraise(cleaned)
        swallowed = final is None and self.swallows(final_state, out, handler, body_end)
        if swallowed:
            final = cleaned + [ast.Break()]
        if final is None:
            raise self.ctx.error("finally block does not re-raise", hblock)
        after = self.unreached.left_finally_exit(hblock) if body_end is None else None
        if swallowed:
            after = out
        elif body_end is not None:
            copy = self.ctx.cfg.finally_copies.get(body_end)
            if copy is None or copy is not hblock:
                raise self.ctx.error("finally block not repeated on the normal path", body_end)
            after = follow_jumps(self.ctx.cfg.finally_after.get(body_end))
            if body_end in self.ctx.cfg.called_finally and self.finish_leaving(body_end, body_state):
                # 3.8: the body leaves by a statement that runs the finally body first
                after = self.unreached.unreached_finally_exit(hblock) or self.unreached.left_finally_exit(hblock)
            elif self.leaves_loop_in_body(body_end, hblock, body_state):
                after = None
        body = body_state.stmts
        if len(body) == 1 and isinstance(body[0], TRY_NODES) and not body[0].finalbody:
            node = body[0]
            node.finalbody = final or [ast.Pass()]
        else:
            node = ast.Try(body=body or [ast.Pass()], handlers=[], orelse=[], finalbody=final or [ast.Pass()])
        if swallowed:
            node = ast.While(test=ast.Constant(value=True), body=[node], orelse=[])
            if versions.FINALLY_EXIT_PLACEHOLDER:
                del state.stack[len(final_state.stack):]  # the break popped the placeholder too
        state.stmts.append(node)
        return after

    def swallows(self, final_state: State, out: Optional[Block], handler: Handler, body_end: Optional[Block]) -> bool:
        """Whether the finally body just walked drops its exception and goes on at ``out``,
        as does its copy on the normal path: a ``break`` out of a loop that never loops back
        (``while True:`` around the try statement), which leaves no loop in the code. The
        statement is then written inside a ``while True:`` of its own that it breaks out of."""
        kept = handler.depth - (1 if versions.FINALLY_EXIT_PLACEHOLDER else 0)  # the break popped it
        if out is None or not final_state.ended or len(final_state.stack) != kept:
            return False
        if body_end is None:
            return True
        return (self.ctx.cfg.finally_copies.get(body_end) is self.ctx.hmap.block(handler)
                and self.ctx.cfg.finally_after.get(body_end) is None)

