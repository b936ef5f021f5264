"""``except*`` clauses (PEP 654, 3.11+): a handler that splits an exception group.

The handler keeps the group it caught and a list of what the clauses raise, and tests
each clause on what the clauses before it left of the group::

    PUSH_EXC_INFO; <the group, an empty list, the group>      prev, group, [], rest
    <type>; CHECK_EG_MATCH; COPY 1; POP_JUMP_IF_NONE no_match prev, group, [], rest, match
        STORE_FAST name (or POP_TOP)
        <body>             its handler keeps what it raises: LIST_APPEND 3; POP_TOP; JUMP next
        [name = None; del name]; JUMP next
    no_match: POP_TOP
    next: the next clause's test, or
    LIST_APPEND 1; PREP_RERAISE_STAR; COPY 1; POP_JUMP_IF_NOT_NONE re-raise
        POP_TOP; POP_EXCEPT; <the code after the try statement>

Each clause goes on to the next: none can leave the statement (``return``, ``break`` and
``continue`` are not allowed in one), and the code after the statement runs once, after
the last clause, whichever matched. 3.13+ moves the ``LIST_APPEND 1`` to the end of each
way into the last block.
"""
import ast
from typing import TYPE_CHECKING, List, Optional, Tuple

from framescope.decompiler.frontend.instructions import Handler, Instr
from framescope.decompiler.graph.cfg import Block
from framescope.decompiler.graph.handlers import is_name_cleanup, keeps_star_raise
from framescope.decompiler.simulate import values as v
from framescope.decompiler.simulate.state import ExceptEnd, State

if TYPE_CHECKING:  # pragma: no cover
    from framescope.decompiler.structure.context import StructureContext
    from framescope.decompiler.structure.protected import ProtectedBuilder

def is_star_handler(block: Block, first: int) -> bool:
    """Whether the handler code from ``block.instrs[first]`` on tests ``except*`` clauses."""
    return any(ins.op == "CHECK_EG_MATCH" for ins in block.instrs[first:])


def is_last_block(block: Block) -> bool:
    """The block after the last clause: it re-raises what the clauses did not handle."""
    return any(ins.op == "PREP_RERAISE_STAR" for ins in block.instrs)


def passes_on(instrs: List[Instr], name: Optional[str]) -> bool:
    """Whether ``instrs`` only clear the clause's name (if it has one) and go on to the next."""
    if name is not None and is_name_cleanup(instrs[:3] + [Instr("RERAISE")]) and instrs[1].arg == name:
        instrs = instrs[3:]
    # Besides the jumps, 3.13+ appends what is left of the group on the ways out of the last clause.
    return all(ins.op == "JUMP" or (ins.op == "LIST_APPEND" and ins.arg == 1) for ins in instrs)


def bound_name(bind: Instr) -> Optional[str]:
    """The name ``except* E as name`` binds (None: the clause drops the match)."""
    return bind.arg if bind.op in ("STORE_FAST", "STORE_NAME", "STORE_DEREF", "STORE_GLOBAL") else None


def code_after(after: State) -> List[ast.stmt]:
    """The statements after the try statement that the walk on from the last block ran.

    When the try body cannot complete, the code after the statement is reached from the
    clauses only, and follows the ``POP_EXCEPT`` in its block.
    """
    ends = [i for i, stmt in enumerate(after.stmts) if isinstance(stmt, ExceptEnd)]
    return after.stmts[ends[0] + 1:] if ends else []


class StarClauseBuilder:
    """Builds the clauses of a ``try`` statement whose handler `is_star_handler`."""

    def __init__(self, ctx: "StructureContext", protected: "ProtectedBuilder") -> None:
        self.ctx = ctx
        #: Walks a clause's body as a protected region.
        self.protected = protected

    def clauses(self, block: Block, first: int, entry: State,
                depth: int) -> Tuple[List[ast.ExceptHandler], List[Optional[Block]], List[State]]:
        """The clauses from the first test (``block``, ``first`` on), where the statement goes
        on (one place for all clauses) and the state that got there."""
        handlers: List[ast.ExceptHandler] = []
        stack = entry.stack
        seen = 0
        while not is_last_block(block):
            seen += 1
            if seen > 100:
                raise self.ctx.error("except* clauses do not end", block)
            handler, stack, block = self.clause(block, first, stack)
            handlers.append(handler)
            first = 0
        end, after = self.last_block(block, entry, depth)
        return handlers, [end], [after]

    def clause(self, test: Block, first: int, stack: list) -> Tuple[ast.ExceptHandler, list, Block]:
        """One clause from its type test: the clause, the stack the next test starts with, that test."""
        probe = State(stack)
        for ins in test.instrs[first:-1]:
            self.ctx.sim.step(ins, probe)
        match = probe.pop() if probe.stack else None
        if (test.last.op != "POP_JUMP_IF_NONE" or not isinstance(match, v.ExcGroupMatch) or probe.stmts
                or probe.stack[-1] is not match or test.fall is None):
            raise self.ctx.error("except* clause without a type test", test)
        following = self.after_no_match(test.jump)
        body = State(probe.stack)
        name = bound_name(test.fall.instrs[0])
        end = self.body(test.fall, body, name)
        if end is not None and not self.goes_on_to(end, following, name):
            raise self.ctx.error("except* clause does not go on to the next", end)
        handler = ast.ExceptHandler(type=match.type, name=name, body=body.stmts or [ast.Pass()])
        return handler, probe.stack[:-1], following

    def after_no_match(self, block: Optional[Block]) -> Block:
        """The next test (or the last block), reached when a clause's type matched nothing."""
        if block is None or block.instrs[0].op != "POP_TOP" or not passes_on(block.instrs[1:], None):
            raise self.ctx.error("except* clause without a way past it", block)
        following = block.jump if block.last.op == "JUMP" else block.fall
        if following is None:
            raise self.ctx.error("except* clause without a way past it", block)
        return following

    def body(self, bind: Block, state: State, name: Optional[str]) -> Optional[Block]:
        """Walk a clause's body from its binding of the match; where it goes on (None: it raises)."""
        self.ctx.sim.step(bind.instrs[0], state)  # ``as name``, or the match dropped
        if len(bind.instrs) > 1:
            if bind.last.op != "JUMP" or not passes_on(bind.instrs[1:], name):
                raise self.ctx.error("except* clause body not protected", bind)
            return bind.jump  # an empty body (``pass``)
        start = bind.fall
        keeper = self.raise_keeper(start)
        if keeper is None:
            raise self.ctx.error("except* clause body not protected", bind)
        return self.protected.region_body(start, keeper, state, len(state.stack))

    def raise_keeper(self, block: Optional[Block]) -> Optional[Handler]:
        """The handler that keeps what the clause body starting at ``block`` raises.

        A body that starts with a try statement is covered by that statement's handler first.
        """
        current = block.handler if block is not None else None
        seen = 0
        while current is not None and seen < 100:
            if keeps_star_raise(self.ctx.hmap.block(current).instrs):
                return current
            current = self.ctx.hmap.block(current).handler
            seen += 1
        return None

    def goes_on_to(self, block: Block, target: Block, name: Optional[str]) -> bool:
        """Whether ``block`` only clears the clause's name and jumps on to ``target``."""
        seen = 0
        while block is not target and seen < 10:
            seen += 1
            nxt = block.jump if block.last.op == "JUMP" else block.fall
            if nxt is None or not passes_on(block.instrs, name):
                return False
            block = nxt
        return block is target

    def last_block(self, block: Block, entry: State, depth: int) -> Tuple[Optional[Block], State]:
        """Run the block after the last clause: where the statement goes on, and the state there."""
        ops = [ins.op for ins in block.instrs if ins.op != "LIST_APPEND"]
        reraise = block.jump
        if (ops != ["PREP_RERAISE_STAR", "COPY", "POP_JUMP_IF_NOT_NONE"] or block.fall is None or reraise is None
                or [ins.op for ins in reraise.instrs] != ["SWAP", "POP_EXCEPT", "RERAISE"]):
            raise self.ctx.error("except* clauses without their re-raise", block)
        after = State(entry.stack)  # the result of PREP_RERAISE_STAR stands where the group was
        self.ctx.clause_depths.append(depth)
        try:
            end = self.protected.walker.walk(block.fall, None, after)
        finally:
            self.ctx.clause_depths.pop()
        return end, after
