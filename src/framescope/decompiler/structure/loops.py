"""Loops: ``for``, ``while cond`` and ``while True``, with ``else``, ``break`` and ``continue``.

A block that is the target of a back edge heads a loop: ``for`` when it is a lone
``FOR_ITER``, ``while cond`` when it only tests a condition that leaves the loop,
else ``while True``.  The loop's blocks are its natural loop plus the arms that leave
it by ``return``; jumps to its exit or header from inside are ``break``/``continue``.
A loop that fills the empty collection below its iterator is a 3.12+ inlined
comprehension and becomes an expression.
"""
import ast
from typing import TYPE_CHECKING, Dict, List, Optional, Set, Tuple

from framescope.decompiler.frontend import versions
from framescope.decompiler.frontend.instructions import Handler
from framescope.decompiler.graph.cfg import Block, natural_loop
from framescope.decompiler.graph.handlers import IMPLICIT, TRY
from framescope.decompiler.graph.copies import same_run
from framescope.decompiler.graph.traversal import reachable, successors_and_handler
from framescope.decompiler.simulate import values as v
from framescope.decompiler.simulate.state import CompAppend, State
from framescope.decompiler.structure.arms import path_leaves_function
from framescope.decompiler.structure.comprehensions import build as build_comprehension
from framescope.decompiler.structure.comprehensions import collect as collect_generators
from framescope.decompiler.structure.conditions import collect_condition
from framescope.decompiler.structure.loop_exits import (
    after_breaks, break_exit, copied_tail, else_clause_break, enters_statement, ExitTally, falls_into, leaves_function,
    leaves_try_to, lifts_value, pops_and_jumps, returns_after_statements, returns_from_loops, same_to_end, straight_run,
    trampoline_target, with_exit_target)
from framescope.decompiler.structure.finally_exits import break_through_finally, returns_through_finally
from framescope.errors import DecompilationError

if TYPE_CHECKING:  # pragma: no cover
    from framescope.decompiler.structure.conditions import Cond
    from framescope.decompiler.structure.context import StructureContext
    from framescope.decompiler.structure.statements import Structurer


class Loop:
    """A loop being built: where ``continue`` and ``break`` jump to."""

    def __init__(self, header: Block, body: Set[Block], exit: Optional[Block], brk: Optional[Block],
                 break_blocks: Optional[Set[Block]] = None) -> None:
        #: First block of the loop (the ``FOR_ITER`` or the condition test).
        self.header = header
        #: Blocks inside the loop.
        self.body = body
        #: Where the loop goes when its condition fails or its iterator is exhausted.
        self.exit = exit
        #: Where ``break`` jumps (the exit, or past the ``else`` clause).
        self.brk = brk
        #: Blocks outside the loop that only pop the iterator and jump to ``brk``.
        self.break_blocks = break_blocks or set()
        #: For ``for`` loops: the iterator, and the stack depth with it on top.
        self.iterator = None
        self.depth = 0
        #: Block and instruction index where a ``break`` goes on with the only copy of the code
        #: after the loop, when the ``break`` pops the iterator and runs that code in place.
        self.tail: Optional[Tuple[Block, int]] = None


class LoopBuilder:
    """Builds ``for`` and ``while`` loops and tells ``break``/``continue`` jumps, for the walker."""

    def __init__(self, ctx: "StructureContext", walker: "Structurer") -> None:
        self.ctx = ctx
        #: Walks the loop's body.
        self.walker = walker

    def is_break_copy(self, block: Block, i: int, state: State) -> bool:
        """Whether popping the loop's iterator here is a ``break`` whose jump was replaced by a copy."""
        if not self.ctx.loops or not state.stack:
            return False
        loop = self.ctx.loops[-1]
        if not isinstance(state.stack[-1], v.Iterator) or loop.exit is None:
            return False
        if state.stack[-1] is not loop.iterator or len(state.stack) != loop.depth:
            return False  # e.g. ``return x`` in a loop: the iterator was swapped above the value
        first = block
        block, run = straight_run(block)
        tail = run[i + 1:]
        if block.succs():
            return False
        target = copied_tail(tail, loop.exit, self.enclosing())
        if target is None and loop.tail is None and first is block and returns_after_statements(tail):
            # 3.12+ copied the code after the loop in place of the jump to it, and the loop's
            # ``else`` never gets there: this is the only copy of that code.
            loop.tail = (block, i + 1)
            return True
        return target is not None and (target is loop.brk or target is loop.exit)

    def loop_control(self, block: Block, stop: Optional[Block]) -> Optional[ast.stmt]:
        """``break``/``continue`` when ``block`` is the target of one, seen from inside a loop."""
        if not self.ctx.loops or block is stop:
            return None
        loop = self.ctx.loops[-1]
        if block is loop.header:
            return ast.Continue()
        if block is loop.brk or (block is loop.exit and loop.brk is loop.exit) or block in loop.break_blocks:
            return ast.Break()
        return None

    # -- loops -------------------------------------------------------------------------------------
    def loop(self, header: Block, state: State) -> Optional[Block]:
        body = natural_loop(header, self.ctx.back_edges[header], self.ctx.cfg.blocks)
        first = header.instrs[0]
        if first.op == "FOR_ITER" and len(header.instrs) == 1:
            return self.for_loop(header, body, state)
        return self.while_loop(header, body, state)

    def exits(self, body: Set[Block], exit: Optional[Block], is_for: bool = False,
              depth: Optional[int] = None, header: Optional[Block] = None) -> Tuple[Optional[Block], Set[Block]]:
        """The ``break`` target and the blocks that lead to it.

        The target is the exit other than ``exit`` that most jumps leave by, looking
        through blocks that only pop the loop's iterator and jump on; exits that end
        in a return or raise are not breaks, nor (given the loop's stack ``depth``)
        blocks that run on a deeper stack, like an except clause of a try in the loop.
        Given the ``header`` of a ``while True``, the except clauses of the try statements
        in it count too (`clause_exits`).
        """
        tally = ExitTally(exit, self.enclosing())
        clauses, ways = self.clause_exits(header, body) if header is not None else (set(), [])
        for block in body:
            target = trampoline_target(block)
            if target is not None and target not in body and block.instrs[0].op == "POP_TOP":
                if not (is_for and returns_from_loops(target, exit)):
                    tally.note(target, block)
                continue
            if is_for and exit is not None and tally.break_copy(block):
                continue
            if not is_for and exit is not None and leaves_try_to(block, exit):
                tally.via.setdefault(exit, set()).add(block)  # a ``break``, the loop's own exit
                continue
            for succ in block.succs():
                if succ not in body and succ is not exit and succ not in clauses:
                    self.succ_exit(body, block, succ, exit, is_for, depth, tally)
        for succ in ways:
            self.clause_exit(succ, depth, tally)
        counts, via = tally.counts, tally.via
        if not counts:
            return exit, via.get(exit, set()) if exit is not None else set()
        brk = max(counts, key=lambda b: (counts[b], -b.index))
        meeting = self.meeting_point(counts, body, exit)
        if meeting is not None:
            brk = meeting
        if exit is None and header is not None:
            else_break = else_clause_break(self.ctx.cfg, brk, body | clauses)
            if else_break is not None:
                return else_break, via.get(else_break, set())
        return brk, via.get(brk, set())

    def succ_exit(self, body: Set[Block], block: Block, succ: Block, exit: Optional[Block], is_for: bool,
                  depth: Optional[int], tally: "ExitTally") -> None:
        """Count the way out of the loop from ``block`` to ``succ``, outside the body."""
        target = trampoline_target(succ) or with_exit_target(succ)
        if target is None and is_for and succ.instrs[0].op == "POP_TOP" and exit is not None:
            # ``break`` whose jump to the code after the loop was replaced by a copy of it.
            copy = copied_tail(succ.instrs[1:], exit, self.enclosing())
            if copy is None and leaves_function(succ) and not falls_into(succ, exit):
                return  # pops the iterators of loops around this one too, then returns
            tally.note(copy or exit, succ)
            return
        if target is None and returns_through_finally(self.ctx.cfg, succ):
            return  # a ``return`` that runs the finally body of a try around the loop first
        after = break_through_finally(self.ctx, succ, self.enclosing())
        if target is None and after is not None:
            tally.note(after, succ)  # a ``break`` that runs the finally body first
            return
        if target is None:
            breaks = is_for and (break_exit(block) is succ or pops_and_jumps(block, succ))
            if breaks and block.jump is None and succ.last.op == "RETURN_VALUE" and not falls_into(exit, succ):
                breaks = False  # falls into a return the loop's own exit does not get to: ``return``
            if leaves_function(succ) and not breaks and not falls_into(exit, succ):
                original = None if lifts_value(block) else self.left_region_copy(body, succ, exit)
                if original is not None:  # ``break`` to a copy of the code after the loop
                    tally.note(original, succ)
                return
            target = succ
        if (target is not exit and depth is not None and target.handler is not None
                and target.handler.depth > depth):
            return  # runs on a deeper stack than the loop's: inside an except clause, not after the loop
        tally.note(target, succ)

    def guard_through_finally(self, cond: "Cond", true_end: Optional[Block],
                              false_end: Optional[Block]) -> Tuple[Optional[Block], Optional[Block]]:
        """The arm ends of ``cond`` in a try body, once an arm that is a ``continue`` or ``break``
        through the finally body is written as one (``if t: continue`` then ``return x``).

        That arm runs a copy of the finally body, laid out before the other arm, which leaves
        in place; the copy on the body's own way out would come after its last statement."""
        ends = [true_end, false_end]
        arms = ((cond.true_state, cond.false_block), (cond.false_state, cond.true_block))
        for i, (state, other) in enumerate(arms):
            end = ends[i]
            if end is None or ends[1 - i] is not None or other is None or not self.ctx.loops \
                    or end not in self.ctx.cfg.finally_copies or not cond.head.index < end.index < other.index:
                continue
            path = self.walker.exits.exit_path(end)
            if path and self.loop_control(path[-1], None) is not None:
                ends[i] = self.walker.exits.finish_exit(path, state)
        return ends[0], ends[1]

    def clause_exits(self, header: Block, body: Set[Block]) -> Tuple[Set[Block], List[Block]]:
        """The blocks of the except clauses of the try statements in a ``while True`` loop that
        are not in its natural loop, and where those clauses jump out of the loop.

        Only exception edges lead to a clause, so one that leaves the loop (``break``) is no
        part of the natural loop, and a ``while True`` has no exit to grow its body from
        (`extend_body`). Without them a loop left only from a clause has no ``break``
        target, and the code after it (inside a with: the with's exit and what follows)
        would be read as the clause's own. A clause ends where it releases its exception
        (``POP_EXCEPT``); the jump from there leaves the clause, and the loop unless it gets
        back to the header, if only through another clause (the next try statement's body
        returns, its clause goes on). A clause that goes back to the loop (``continue``) is
        in the natural loop, its other ways out are not.
        """
        looped = self.through_clauses(header, body)
        found: List[Block] = []
        seen: Set[Block] = set()
        for entry in [self.ctx.hmap.block(h) for h in self.clause_handlers(body, header)]:
            work = [entry]
            while work:
                block = work.pop()
                if block in seen:
                    continue
                seen.add(block)
                released = any(ins.op == "POP_EXCEPT" for ins in block.instrs)
                for succ in block.succs():
                    if released and succ not in looped:
                        if block not in body:  # else counted with the natural loop's ways out
                            found.append(succ)
                    elif not released and self.ctx.cfg.dom.dominates(entry, succ):
                        work.append(succ)  # not the code after the try, which its body reaches too
        return seen - body, found

    def clause_exit(self, succ: Block, depth: Optional[int], tally: "ExitTally") -> None:
        """Count the jump from an except clause of a ``while True`` to ``succ``, outside the loop.

        A clause returns or raises in place, so a jump out of the loop from one is a
        ``break``, even to code that returns (the code after the loop, or 3.12+'s copy
        of the with statement's exit and the code after it).
        """
        if returns_through_finally(self.ctx.cfg, succ):
            return  # a ``return`` (or a break to one, alike) that runs the finally body first
        target = break_through_finally(self.ctx, succ, self.enclosing()) or trampoline_target(succ) or succ
        if depth is not None and target.handler is not None and target.handler.depth > depth:
            return  # runs on a deeper stack than the loop's: inside an enclosing except clause
        tally.note(target, succ)

    def clause_handlers(self, body: Set[Block], header: Block) -> List[Handler]:
        """The handlers of try statements inside the loop: they cover blocks of it, not its jumps back.

        A try around the loop covers those jumps; one inside ends before them (its body
        leaves the range first), and the header may well be its first protected block.
        """
        around = set()
        for latch in self.ctx.back_edges[header]:
            around.update(self.handler_chain(latch.handler))
        handlers: List[Handler] = []
        for block in body:
            for handler in self.handler_chain(block.handler):
                if handler in around:
                    break  # this statement and those around it contain the loop
                if handler not in handlers and self.ctx.hmap.kind(handler) == TRY:
                    handlers.append(handler)
        return handlers

    def handler_chain(self, handler: Optional[Handler]) -> List[Handler]:
        """``handler`` and the handlers around it, innermost first."""
        chain: List[Handler] = []
        while handler is not None and len(chain) < 100:
            chain.append(handler)
            handler = self.ctx.hmap.block(handler).handler
        return chain

    def meeting_point(self, counts: Dict[Block, int], body: Set[Block], exit: Optional[Block]) -> Optional[Block]:
        """Where several ways out of a loop meet, when more of them meet there than at any one target.

        ``if a: x(); break`` and ``elif b: y(); break`` leave the loop at their arms; the
        arms run on to the code after the loop, the real ``break`` target.  Each target is
        followed along its chain of post-dominators outside the loop.
        """
        if len(counts) < 2:
            return None
        reached: Dict[Block, int] = {}
        distance: Dict[Block, int] = {}
        for target, count in counts.items():
            block: Optional[Block] = target
            steps = 0
            while block is not None and block not in body and steps < 50:
                reached[block] = reached.get(block, 0) + count
                distance[block] = max(distance.get(block, 0), steps)
                if block is exit:
                    break
                block = self.ctx.ipdom.get(block)
                steps += 1
        best = max(reached, key=lambda b: (reached[b], -distance[b], -b.index))
        return best if reached[best] > max(counts.values()) else None

    def extend_body(self, header: Block, body: Set[Block], exit: Optional[Block], is_for: bool = False) -> Set[Block]:
        """The loop's blocks: its natural loop plus the arms inside it that leave it some other way.

        An ``if`` arm that ends with ``return`` (or with ``break`` and a copy of the code after
        the loop) never gets back to the header; it still belongs to the loop if the header
        dominates it and it cannot be reached from the loop's exit.
        """
        if exit is None:
            return body
        starts = [exit]
        if header.instrs[0].op == "FOR_ITER":
            starts.extend(self.break_targets(header, body))
        after = reachable(starts, successors_and_handler, exclude=header)
        dom = self.ctx.cfg.dom
        extra = {b for b in self.ctx.cfg.blocks if b not in after and dom.dominates(header, b)
                 and not self.ends_clause(header, b)}
        if self.ctx.regions and self.ctx.regions[-1].contains(header):
            # A loop inside a try or with body ends with it: what follows the region (a copy of
            # the code after the statement that a break goes to, 3.10+) is not in the loop.
            extra = {b for b in extra if self.ctx.regions[-1].contains(b)}
        extended = body | extra
        if is_for:
            extended -= after_breaks(extended, body, header)
        return extended

    def enclosing(self) -> Set[Handler]:
        """The handlers of the try and with statements being built around the loop."""
        return {region.handler for region in self.ctx.regions}

    def left_region_copy(self, body: Set[Block], block: Block, exit: Optional[Block]) -> Optional[Block]:
        """The block after the loop that ``block``, outside the region the loop is in, copies.

        3.10+ copies the code after a with statement (its ``__exit__`` call and a short
        ``return``) into the ``break`` that leaves the statement's body with the loop. That code
        follows the loop's exit; a return further round an outer loop is another statement.
        """
        region = self.ctx.regions[-1] if self.ctx.regions else None
        if not versions.COPIES_EXITS or region is None or exit is None or region.contains(block) \
                or not any(region.contains(b) for b in body):
            return None
        current, seen, enclosing = exit, 0, self.enclosing()
        headers = {loop.header for loop in self.ctx.loops}
        while current is not None and seen < 20 and not enters_statement(current, enclosing):
            if current in headers:
                return None  # the loop's exit goes round an outer loop: a ``continue``, not code after it
            if current is not block and same_run(current.instrs, block.instrs) and same_to_end(block, current):
                return current
            current = current.fall if current.fall is not None else current.jump
            seen += 1
        return None

    def ends_clause(self, header: Block, block: Block) -> bool:
        """``POP_EXCEPT`` then a jump on, ending an except clause that contains the loop.

        Such a block belongs to the clause, not to the loop.  The clause is the innermost
        handler dominating the block; a ``break`` out of an except clause inside the loop
        ends a clause that does not dominate the loop's header.
        """
        if block.instrs[0].op != "POP_EXCEPT" or block.last.op != "JUMP":
            return False
        dom = self.ctx.cfg.dom
        entries = [b for b in dom.chain(block) if b is not block and not b.preds and b is not self.ctx.cfg.entry]
        if not entries:
            return False
        clause = entries[0]  # the innermost: the nearest up the chain of dominators
        return dom.dominates(clause, header)

    def break_targets(self, header: Block, body: Set[Block]) -> List[Block]:
        """Where the ``break`` statements of the ``for`` loop at ``header`` jump (code after the loop).

        A ``break`` pops the iterator and jumps (or, 3.13+, falls into the code after the loop
        when that starts a new block); when the loop's exit raises or returns, this is the only
        way to the code after the loop.  Pops inside a nested ``for`` may be its breaks, so only
        blocks no other loop header dominates count, and none inside a nested loop: 3.11 ends a
        statement in a ``while True`` left only from an except clause (so that no header
        dominates the code after it) with a pop and a jump to a lone jump back.
        """
        dom = self.ctx.cfg.dom
        inner = [b for b in self.ctx.cfg.blocks if b is not header and b.instrs[0].op == "FOR_ITER"
                 and dom.dominates(header, b)]
        nested = self.nested_loops(header)
        targets = []
        for block in self.ctx.cfg.blocks:
            if block is header or block in nested or not dom.dominates(header, block) \
                    or any(dom.dominates(b, block) for b in inner):
                continue
            target = None if self.releases_finally_exception(header, block) else break_exit(block)
            # A jump back pops a statement's value; a chained comparison pops its spare operand
            # before jumping to where the test's other failures go too.
            if target is not None and target.index > block.index and all(
                    p is header or break_exit(p) is target for p in target.preds):
                targets.append(target)
        return targets

    def releases_finally_exception(self, header: Block, block: Block) -> bool:
        """Whether ``block`` is the exception path of a finally body in the loop at ``header``:
        its pop before ``POP_EXCEPT`` drops the exception for a way out of the finally body
        (``break``, ``continue``, ``return``), not the loop's iterator."""
        dom = self.ctx.cfg.dom
        handlers = set(self.ctx.cfg.finally_copies.values())
        return any(b in handlers and dom.dominates(header, b) for b in dom.chain(block))

    def return_past_region(self, end: Optional[Block], state: State, depth: int) -> Optional[Block]:
        """Finish a return from the loop's body that a protected region's end cut short.

        The body popped the iterator (below ``depth``) inside a try body, whose region stops
        before the returned value is loaded: the rest of the return runs after the region's
        end, ``end``.  A loop that loops back does this in a branch (`uneven_stacks`).
        """
        if end is None or not self.ctx.regions or len(state.stack) >= depth:
            return end
        path = self.walker.exits.exit_path(end)
        if not path_leaves_function(path):
            return end
        return self.walker.exits.finish_exit(path, state)

    def nested_loops(self, header: Block) -> Set[Block]:
        """The blocks of the loops that the loop at ``header`` dominates, its own aside."""
        dom = self.ctx.cfg.dom
        blocks: Set[Block] = set()
        for inner, latches in self.ctx.back_edges.items():
            if inner is not header and dom.dominates(header, inner):
                blocks |= natural_loop(inner, latches, self.ctx.cfg.blocks)
        return blocks

    def for_loop(self, header: Block, body: Set[Block], state: State) -> Optional[Block]:
        iterator = state.stack[-1] if state.stack else None
        if isinstance(iterator, ast.Name) and iterator.id == ".0":  # a comprehension's argument
            iterator = state.stack[-1] = v.Iterator(iterator)
        if not isinstance(iterator, v.Iterator):
            raise self.ctx.error("for loop over a non-iterator", header)
        exit = header.jump
        body = self.extend_body(header, body, exit, is_for=True)
        brk, break_blocks = self.exits(body, exit, is_for=True)
        item = v.LoopItem()
        body_state = State(state.stack + [item])
        loop = Loop(header, body, exit, brk, break_blocks)
        loop.iterator, loop.depth = iterator, len(state.stack)
        self.ctx.loops.append(loop)
        try:
            end = self.walker.walk(header.fall, header, body_state)
            end = self.return_past_region(end, body_state, len(state.stack))
        finally:
            self.ctx.loops.pop()
        if end is not None and len(body_state.stack) != len(state.stack):
            raise self.ctx.error("for loop body leaves the stack changed", header)
        if item.target is None:
            raise self.ctx.error("for loop without a target", header)
        if loop.tail is not None:
            if brk is not exit:
                raise self.ctx.error("for loop breaks to two places", header)
            brk = loop.tail[0]
            self.ctx.resume[brk] = loop.tail[1]
        stmts = body_state.stmts
        state.stack.pop()
        is_async = iterator.is_async or header.instrs[0].arg == "async"
        loop_stmt_cls = ast.AsyncFor if is_async else ast.For
        node = loop_stmt_cls(target=item.target, iter=iterator.source, body=stmts or [ast.Pass()], orelse=[],
                             type_comment=None)
        kind = comprehension_kind(state.stack[-1]) if state.stack else None
        if kind is not None and has_append(stmts):
            # The loop fills the empty collection below it: a comprehension.
            generators: List[ast.comprehension] = []
            element = collect_generators([node], generators, kind)
            state.stack[-1] = build_comprehension(kind, element, generators)
            return exit
        return self.loop_else(node, exit, brk, state, ends=loop.tail is not None)

    def loop_else(self, node: ast.stmt, exit: Optional[Block], brk: Optional[Block], state: State,
                  ends: bool = False) -> Optional[Block]:
        """Attach the ``else`` clause (from ``exit`` to ``brk``); with ``ends``, it must not reach past ``brk``."""
        if brk is not None and brk is not exit and exit is not None:
            else_state = State(state.stack)
            end = self.walker.walk(exit, brk, else_state)
            if ends and end is not None and end is not brk:
                raise self.ctx.error("for loop else clause goes on elsewhere", exit)
            node.orelse = else_state.stmts
            state.stmts.append(node)
            return brk if end is brk else (brk if end is not None else brk)
        state.stmts.append(node)
        return exit if exit is not None else brk

    def while_loop(self, header: Block, body: Set[Block], state: State) -> Optional[Block]:
        cond = None
        if header.last.is_pop_jump() and not self.starts_try_body(header):
            probe = State(state.stack)
            try:
                for ins in header.instrs[:-1]:
                    self.ctx.sim.step(ins, probe)
                clean = not probe.stmts
            except DecompilationError:
                clean = False
            if clean:
                self.ctx.loops.append(Loop(header, body, None, None))
                try:
                    cond = collect_condition(self.ctx, header, probe)
                finally:
                    self.ctx.loops.pop()
                looped = self.through_clauses(header, body)
                inside = cond.true_block in looped, cond.false_block in looped
                if inside == (True, False):
                    pass
                elif inside == (False, True):
                    cond = cond.negated()
                else:
                    cond = None
        if cond is None:
            brk, break_blocks = self.exits(body, None, depth=len(state.stack), header=header)
            loop = Loop(header, body, None, brk, break_blocks)
            body_state = State(state.stack)
            self.ctx.loops.append(loop)
            try:
                self.walk_body(header, body_state)
            finally:
                self.ctx.loops.pop()
            node = ast.While(test=ast.Constant(value=True), body=body_state.stmts or [ast.Pass()], orelse=[])
            state.stmts.append(node)
            return brk
        exit = cond.false_block
        body = self.extend_body(header, body, exit)
        brk, break_blocks = self.exits(body, exit, depth=len(state.stack))
        loop = Loop(header, body, exit, brk, break_blocks)
        body_state = cond.true_state
        self.ctx.loops.append(loop)
        try:
            self.walker.walk(cond.true_block, header, body_state)
        finally:
            self.ctx.loops.pop()
        node = ast.While(test=cond.expr, body=body_state.stmts or [ast.Pass()], orelse=[])
        return self.loop_else(node, exit, brk, state)

    def starts_try_body(self, header: Block) -> bool:
        """Whether ``header`` starts the body of a try statement in its loop: the header is
        protected, but a jump back, after the statement's body, is not. The loop jumps back
        to the statement's start, so the header's test is an ``if`` of the try body (``while
        True: try: if t: break``), not a ``while`` test, which no handler covers. Handlers that
        belong to no statement (a 3.12+ generator's, an except clause's clean-up) do not count."""
        if header.handler is None or self.ctx.hmap.kind(header.handler) == IMPLICIT:
            return False
        for latch in self.ctx.back_edges[header]:
            current, seen = latch.handler, 0
            while current is not None and current != header.handler and seen < 100:
                current, seen = self.ctx.hmap.block(current).handler, seen + 1
            if current != header.handler:
                return True
        return False

    def through_clauses(self, header: Block, body: Set[Block]) -> Set[Block]:
        """``body`` and the blocks that get back to ``header`` only through an except clause.

        A loop nested in this one and left only from an except clause (``while True: try:
        ... except E: break``) never reaches the jump back on a normal edge: the natural
        loop misses it and the code from the test to it, though the test goes there.
        """
        covering: Dict[Block, List[Block]] = {}
        for block in self.ctx.cfg.blocks:
            if block.catch is not None:
                covering.setdefault(block.catch, []).append(block)
        return body | reachable(body, lambda b: b.preds + covering.get(b, []), exclude=header)

    def walk_body(self, header: Block, state: State) -> None:
        """Walk a ``while True`` body, which starts at its header."""
        self.walker.walk(header, header, state, entering=True)


def comprehension_kind(value) -> Optional[str]:
    """Which comprehension fills ``value``, if it is the empty collection one starts from."""
    if isinstance(value, ast.List) and not value.elts:
        return "<listcomp>"
    if isinstance(value, ast.Set) and not value.elts:
        return "<setcomp>"
    if isinstance(value, ast.Dict) and not value.keys:
        return "<dictcomp>"
    if isinstance(value, ast.Call) and isinstance(value.func, ast.Name) and value.func.id == "set" and not value.args:
        return "<setcomp>"
    return None


def has_append(stmts: List[ast.stmt]) -> bool:
    for stmt in stmts:
        if isinstance(stmt, CompAppend):
            return True
        if isinstance(stmt, (ast.If, ast.For, ast.AsyncFor)) and has_append(stmt.body):
            return True
    return False
