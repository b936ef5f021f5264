"""The match statement: `case_reader.Reader`'s cases, their bodies walked, as `ast.Match`."""
import ast
from typing import TYPE_CHECKING, List, Optional

from framescope.decompiler.graph.cfg import Block
from framescope.decompiler.simulate import values as v
from framescope.decompiler.simulate.state import State
from framescope.decompiler.structure.case_reader import Reader
from framescope.decompiler.structure.conditions import Cond, negate
from framescope.decompiler.structure.patterns import (
    Case, Next, NotAPattern, Pos, after, is_wildcard, like_assignment, same_stack,
    wildcard,
)
from framescope.errors import DecompilationError
from framescope.decompiler.graph.traversal import follow_jumps

if TYPE_CHECKING:
    from framescope.decompiler.structure.context import StructureContext
    from framescope.decompiler.structure.statements import Structurer


class MatchBuilder:
    """Builds ``match`` statements from the cases a `Reader` finds, for the walker."""

    def __init__(self, ctx: "StructureContext", walker: "Structurer") -> None:
        self.ctx = ctx
        #: Walks the case bodies.
        self.walker = walker

    def match_statement(self, block: Block, index: int, state: State, stop: Optional[Block]) -> Next:
        """Build the match statement starting at ``block.instrs[index]``, if one does."""
        ins = block.instrs[index]
        depth = 3 if ins.op == "MATCH_CLASS" else 1
        if (ins.op == "COPY" and ins.arg != 1) or len(state.stack) < depth:
            return None
        try:
            subject = self.ctx.sim.expr(state.stack[-depth])
        except DecompilationError:
            return None
        outer = state.stack[:len(state.stack) - depth]
        reader = Reader(self.walker, outer, subject, state.stack[len(state.stack) - depth + 1:])
        cases = reader.cases((block, index))
        if not cases or (len(cases) == 1 and not cases[0].refutable and like_assignment(cases[0].pattern)):
            return None  # ``a = b = x`` compiles alike and reads better
        return self.build_match(block, reader, cases, state, stop)

    def guarded_match(self, cond: Cond, state: State, stop: Optional[Block]) -> Next:
        """A match statement whose first case is ``case _ if guard:`` (``cond``), if one is there.

        That case compiles to its guard alone, with the subject left on the stack: the
        guard's arm that pops it runs the body, the other goes on with the next case (the
        true arm, when the guard's jump is the negation's: ``case _ if not ok:``).
        """
        if not state.stack or not isinstance(state.stack[-1], (ast.expr, v.Chain)) or cond.true_kept \
                or cond.false_kept or cond.true_block is None or cond.false_block is None:
            return None
        arms = ((cond.expr, cond.true_block, cond.true_state, cond.false_block, cond.false_state),
                (negate(cond.expr), cond.false_block, cond.false_state, cond.true_block, cond.true_state))
        for guard, body_block, body_state, next_block, next_state in arms:
            if not same_stack(next_state.stack, state.stack):
                continue
            popped = same_stack(body_state.stack, state.stack[:-1])  # a body that only jumps, looked through
            if not popped and not (same_stack(body_state.stack, state.stack) and body_block.instrs[0].op == "POP_TOP"):
                continue
            subject = self.ctx.sim.expr(state.stack[-1])  # ``match (x := v):`` is a stored value
            reader = Reader(self.walker, state.stack[:-1], subject, [])
            try:
                body = (body_block, 0) if popped else after((body_block, 0))
                rest = reader.cases((next_block, 0), first=False)
            except NotAPattern:
                continue
            if rest is None:
                continue
            first = Case(wildcard(), guard, (cond.head, len(cond.head.instrs) - 1), body, (next_block, 0), True)
            return self.build_match(cond.head, reader, [first] + rest, state, stop)
        return None

    def build_match(self, block: Block, reader: Reader, cases: List[Case], state: State,
                    stop: Optional[Block]) -> Next:
        """Emit the match statement of ``cases`` (starting in ``block``); return where the code goes on."""
        subject, outer = reader.subject, reader.outer
        fail = cases[-1].fail
        inside = [case.body[0] for case in cases if case.body is not None] + reader.fail_blocks
        # After other cases, a last ``case _ if guard`` is followed by a ``case _``: a last
        # wildcard compiles to no pattern code, so the case read is the one before it.
        default = fail is not None and len(cases) > 1 and is_wildcard(cases[-1].pattern)
        end = self.match_end(block, inside, fail, default, cases[-1].body[0], stop)
        inner = end if end is not None else stop
        node = ast.Match(subject=subject, cases=[])
        ends = []
        for case in cases:
            body = State(outer)
            if case.body is not None:
                ends.append(self.walker.walk(case.body[0], inner, body, first=case.body[1]))
            node.cases.append(ast.match_case(pattern=case.pattern, guard=case.guard, body=body.stmts or [ast.Pass()]))
        if fail is not None and (default or (end is not None and (fail[0] is not end or fail[1]))):
            body = State(outer)  # ``case _:``, whose code follows the failure code of the last case
            ends.append(self.walker.walk(fail[0], inner, body, first=fail[1]))
            node.cases.append(ast.match_case(pattern=wildcard(), guard=None, body=body.stmts or [ast.Pass()]))
            fail = None
        if any(e is not None and e is not inner for e in ends):
            raise self.ctx.error("a case of a match statement ends elsewhere", block)
        state.stack[:] = outer
        state.stmts.append(node)
        if end is not None:
            return (end,)
        if fail is not None:
            self.ctx.resume[fail[0]] = fail[1]
            return (fail[0],)
        return (inner if any(e is not None for e in ends) else None,)

    def match_end(self, head: Block, inside: List[Block], fail: Optional[Pos], default: bool, last: Block,
                  stop: Optional[Block]) -> Optional[Block]:
        """The block after a match statement, None if control never gets there.

        The code of the statement is laid out from ``head`` on, holding the ``inside``
        blocks (the first block of each body, the failure code), and the statement ends
        at the first block where that code leaves only to it (or by loop control).  The
        last case's failure target ``fail`` is that end unless a ``case _`` follows there
        (certainly so with ``default``).  Nothing marks where the last body of the
        statement ends (the ``case _``'s, else the ``last`` case's if no failure code
        follows it): the end is where code before that body goes too.  A statement that
        ends a loop's body ends where the walk stops (the loop's header).
        """
        blocks = self.ctx.cfg.blocks
        escapes = set()
        for loop in self.ctx.loops:
            escapes.update(b for b in (loop.header, loop.exit, loop.brk) if b is not None)
            escapes.update(loop.break_blocks)
        low = head.index
        succs = {b: [follow_jumps(s) for s in b.succs()] for b in blocks[low:]}

        def closed(e: int) -> bool:
            return all(low <= s.index <= e or s in escapes for b in blocks[low:e] for s in succs[b])

        def reached(end: Block, before: int) -> bool:
            return any(end in succs[b] for b in blocks[low:before])

        need = max([low + 1] + [b.index + 1 for b in inside])
        tail = last
        if fail is not None and fail[0].index > last.index:
            tail = fail[0]
            if not default and not fail[1] and need <= tail.index and closed(tail.index):
                return tail
        if fail is not None and low <= fail[0].index:
            need = max(need, fail[0].index + 1)
        for e in range(need, len(blocks) + 1):
            if not closed(e):
                continue
            for end in (blocks[e] if e < len(blocks) and blocks[e] not in escapes else None, stop):
                if end is not None and reached(end, tail.index):
                    return end
            if e == len(blocks) or not reached(blocks[e], e):
                return None  # the code never leaves: every case returns, raises or jumps out of a loop
        return None
