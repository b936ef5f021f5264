"""Pass 3: basic blocks → structured statements (if/else, loops, try, with).

The structurer walks the control-flow graph from the entry, running each block's
straight-line instructions through the simulator, and decides at every branch what
source construct produced it:

* a conditional jump is an ``if`` (statement) or a conditional/boolean expression when
  both arms only push one value each; chains of conditional jumps sharing a target are
  folded into ``and``/``or`` first (`conditions.py`);
* a block that is the target of a back edge heads a loop: ``for`` when it starts with
  ``FOR_ITER``, ``while cond`` when it only tests a condition that leaves the loop, else
  ``while True``; jumps to the loop's exit or header inside it are ``break``/``continue``;
* arms meet again at the branch's immediate post-dominator (restricted to the region
  being built); an arm that never reaches it (return, raise, break, continue) ends early.
"""
import ast
from types import CodeType
from typing import Dict, List, Optional, Set, Tuple

from framescope.decompiler import values as v
from framescope.decompiler.cfg import CFG, Block
from framescope.decompiler.normalize import same_run
from framescope.decompiler.conditions import Cond, boolop, collect_condition, negate
from framescope.decompiler.cleanup import build as build_comprehension
from framescope.decompiler.cleanup import collect as collect_generators
from framescope.decompiler.handlers import IMPLICIT, TRY, WITH, HandlerMap
from framescope.decompiler.instructions import JUMPS, OR_POP_JUMPS, POP_JUMPS, Handler, Instr
from framescope.decompiler.opcodes import handler_entry_values
from framescope.decompiler.simulate import CompAppend, ExceptEnd, Simulator, State
from framescope.errors import DecompilationError



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


class Structurer:
    """Build the statement list of one code object."""

    def __init__(self, code: CodeType, cfg: CFG, sim: Simulator) -> None:
        self.code = code
        self.cfg = cfg
        self.sim = sim
        self.loops: List[Loop] = []
        #: Innermost last: protected regions (try and with bodies) being built.
        self.regions: List["Region"] = []
        self.hmap = HandlerMap(cfg)
        #: Blocks to be entered part-way: block → index of the first instruction to run.
        self.resume: Dict[Block, int] = {}
        #: For the try statements whose clauses are being built: where their body goes on.
        self.after_try: List[Optional[Block]] = []
        #: For the except clauses being built: the stack depth once a clause released its exception.
        self.clause_depths: List[int] = []
        self.steps = 0
        #: Bound on blocks visited: structuring visits each block a few times at most.
        self.max_steps = 50 * len(cfg.blocks) + 1000
        self.ipdom = postdominators(cfg)
        self.back_edges: Dict[Block, List[Block]] = {}
        for block in cfg.blocks:
            for succ in block.succs():
                if succ in cfg.dom.get(block, ()):
                    self.back_edges.setdefault(succ, []).append(block)

    def error(self, reason: str, block: Optional[Block] = None) -> DecompilationError:
        ins = block.last if block is not None else None
        return DecompilationError(reason, code_name=self.code.co_name,
                                  offset=ins.offset if ins else None, opname=(ins.raw or ins.op) if ins else None)

    # -- entry point -------------------------------------------------------------------------------
    def body(self, state: Optional[State] = None) -> List[ast.stmt]:
        state = state or State()
        self.walk(self.cfg.entry, None, state)
        return state.stmts

    # -- sequences ---------------------------------------------------------------------------------
    def walk(self, block: Optional[Block], stop: Optional[Block], state: State, first: int = 0,
             entering: bool = False) -> Optional[Block]:
        """Emit from ``block`` until ``stop`` or the end of control; return the block reached.

        The block reached is ``stop``, or the first block outside the innermost
        protected region (a try or with body); ``None`` when control ended (return,
        raise, break, continue).  ``first`` skips instructions of the first block;
        ``entering`` starts at the header of the loop being built (``stop``).
        """
        while block is not None and (block is not stop or entering):
            self.steps += 1
            if self.steps > self.max_steps:
                raise self.error("control flow too irregular", block)
            if state.ended:  # an except clause ended (POP_EXCEPT): what follows is after the try
                depth = self.clause_depths[-1] if self.clause_depths else 0
                if len(state.stack) > depth:  # a return leaving the clause
                    return self.finish_return(block, state, depth)
                loop_jump = self.loop_control(block, None)
                if loop_jump is not None:
                    state.stmts.append(loop_jump)
                    return None
                if block.instrs[0].op == "POP_EXCEPT" and block.last.op in ("RETURN_VALUE", "RAISE_VARARGS"):
                    # A return from nested except clauses releases each one's exception in turn.
                    for ins in block.instrs:
                        self.sim.step(ins, state)
                    return None
                return block
            loop_jump = None if entering else self.loop_control(block, stop)
            entering = False
            if loop_jump is not None:
                state.stmts.append(loop_jump)
                return None
            if self.regions and not self.regions[-1].contains(block):
                if len(state.stack) > self.regions[-1].depth:
                    return self.finish_return(block, state, self.regions[-1].depth)
                return block
            if not first:
                outer = self.new_handler(block)
                is_header = block in self.back_edges and not any(loop.header is block for loop in self.loops)
                if outer is not None and not (is_header and self.loop_encloses(block, outer)):
                    block = self.protected(block, outer, state)
                    continue
                if is_header:
                    block = self.loop(block, state)
                    continue
            instrs = block.instrs
            i = first or self.resume.pop(block, 0)
            first = 0
            while i < len(instrs) - 1:
                if instrs[i].op == "POP_TOP" and self.is_break_copy(block, i, state):
                    state.stmts.append(ast.Break())
                    return None
                self.sim.step(instrs[i], state)
                i += 1
                if state.ended and state.tail is None:
                    i = self.name_cleanup(instrs, i, state)
                    if i < len(instrs) - 1 and self.repeats_after(instrs[i:]):
                        # The clause is over but the block goes on with a copy of the code
                        # after the try statement.
                        state.tail = (block, i)
                        return None
            last = block.last
            if last.op in ("POP_JUMP_IF_FALSE", "POP_JUMP_IF_TRUE", "POP_JUMP_IF_NONE", "POP_JUMP_IF_NOT_NONE",
                           "JUMP_IF_FALSE_OR_POP", "JUMP_IF_TRUE_OR_POP"):
                block = self.branch(block, stop, state)
            elif last.op == "JUMP":
                block = block.jump
            elif last.op == "FOR_ITER":
                raise self.error("for loop without a back edge", block)
            elif last.op in ("RETURN_VALUE", "RAISE_VARARGS", "RERAISE"):
                self.sim.step(last, state)
                return None
            else:
                self.sim.step(last, state)
                block = block.fall
                if block is None:
                    return None
        return block

    def repeats_after(self, instrs: List[Instr]) -> bool:
        """Whether ``instrs`` repeat the code after the try statement whose clause is being built."""
        if not self.after_try or self.after_try[-1] is None:
            return False
        block, seen = self.after_try[-1], 0
        while block is not None and seen < 50:
            n = len(block.instrs)
            if n >= len(instrs) and same_run(block.instrs[n - len(instrs):], instrs):
                return True
            if block.last.op in POP_JUMPS or block.last.op in OR_POP_JUMPS:
                return False  # only straight-line code after the try is what the clause repeats
            block = block.fall if block.fall is not None else block.jump
            seen += 1
        return False

    def is_break_copy(self, block: Block, i: int, state: State) -> bool:
        """Whether popping the loop's iterator here is a ``break`` whose jump was replaced by a copy."""
        if not self.loops or not state.stack:
            return False
        loop = self.loops[-1]
        if not isinstance(state.stack[-1], v.Iterator) or loop.exit is None or block.succs():
            return False
        if state.stack[-1] is not loop.iterator or len(state.stack) != loop.depth:
            return False  # e.g. ``return x`` in a loop: the iterator was swapped above the value
        target = copied_tail(block.instrs[i + 1:], loop.exit)
        return target is not None and (target is loop.brk or target is loop.exit)

    def name_cleanup(self, instrs, i: int, state: State) -> int:
        """Run ``name = None; del name`` after ``POP_EXCEPT``, if present; return the next index."""
        run = [ins.op for ins in instrs[i:i + 3]]
        if (len(run) == 3 and run[0] == "LOAD_CONST" and instrs[i].arg is None and run[1].startswith("STORE_")
                and run[2].startswith("DELETE_") and i + 2 < len(instrs)):
            for ins in instrs[i:i + 3]:
                self.sim.step(ins, state)
            return i + 3
        return i

    def loop_control(self, block: Block, stop: Optional[Block]) -> Optional[ast.stmt]:
        """``break``/``continue`` when ``block`` is the target of one, seen from inside a loop."""
        if not self.loops or block is stop:
            return None
        loop = self.loops[-1]
        if block is loop.header:
            return ast.Continue()
        if block is loop.brk or (block is loop.exit and loop.brk is loop.exit) or block in loop.break_blocks:
            return ast.Break()
        return None

    # -- conditionals ------------------------------------------------------------------------------
    def branch(self, block: Block, stop: Optional[Block], state: State) -> Optional[Block]:
        cond = collect_condition(self, block, state)
        join = self.join(cond, stop)
        if is_builtin_check(cond.expr):
            # 3.14 inlines ``all``/``any``/``tuple`` of a generator expression when the name is
            # the builtin; the other arm is the plain call the source wrote.
            end = self.walk(cond.false_block, join, cond.false_state)
            state.stack[:] = cond.false_state.stack
            state.stmts.extend(cond.false_state.stmts)
            return end
        true_state, false_state = cond.true_state, cond.false_state
        true_end = self.walk(cond.true_block, join, true_state)
        false_end = self.walk(cond.false_block, join, false_state)
        base = len(state.stack)
        depth = len(true_state.stack)
        if (true_end is join and false_end is join and not true_state.stmts and not false_state.stmts
                and depth == len(false_state.stack) and depth >= 1
                and all(a is b for a, b in zip(true_state.stack[:-1], false_state.stack[:-1]))
                and (depth == base + 1 or true_state.stack[-1] is not false_state.stack[-1])):
            # Both arms only computed one value: a conditional or boolean expression.
            state.stack[:] = true_state.stack[:-1]
            state.stack.append(self.value_join(cond, true_state.stack[-1], false_state.stack[-1]))
            return join
        if true_end is not None and false_end is not None and len(true_state.stack) != len(false_state.stack):
            raise self.error("branches leave different stacks", block)
        if true_end is not None and false_end is not None and self.same_place(true_end, false_end):
            false_end = true_end  # two copies of one block (3.10+ copies small exits)
        if true_end is not None and false_end is not None and true_end is not false_end:
            # Leaving a protected region: an arm that goes straight on to a return, raise,
            # break or continue is that statement, run after the region's clean-up code.
            if self.is_exit_path(true_end):
                true_end = self.finish_exit(true_end, true_state)
            elif self.is_exit_path(false_end):
                false_end = self.finish_exit(false_end, false_state)
            if true_end is not None and false_end is not None and true_end is not false_end:
                raise self.error("branches end in different places", block)
        test = cond.expr
        body, orelse = true_state.stmts, false_state.stmts
        ended = true_state.ended or false_state.ended
        state.tail = state.tail or true_state.tail or false_state.tail
        returned = self.returned_value(cond, body, orelse)
        if returned is not None:
            state.stmts.append(ast.Return(value=returned))
            return None
        if body and orelse and laid_out_first(cond.false_block, cond.true_block):
            # The arm the compiler placed first is the one the source wrote first.
            test, body, orelse = negate(test), orelse, body
            true_state, false_state = false_state, true_state
            true_end, false_end = false_end, true_end
            cond = cond.negated()
        if true_end is None and false_end is None:
            shared = common_tail(body, orelse)
            if shared:
                # 3.11+ copies the code after an if/else into both arms when it is short.
                body, orelse = body[:len(body) - len(shared)], orelse[:len(orelse) - len(shared)]
                if not body:
                    test, body, orelse = negate(test), orelse, []
                if body:
                    state.stmts.append(ast.If(test=test, body=body, orelse=orelse))
                state.stmts.extend(shared)
                return None
        if true_end is None and false_end is None and body and orelse:
            # Both arms leave: the one laid out first is the ``if`` body, the other follows it.
            first_is_true = cond.true_block is not None and (
                cond.false_block is None or cond.true_block.index < cond.false_block.index)
            if not first_is_true:
                test, body, orelse = negate(test), orelse, body
            if ends_control(body):
                state.stmts.append(ast.If(test=test, body=body, orelse=[]))
                state.stmts.extend(orelse)
                return None
        if true_end is None and false_end is not None:
            state.stmts.append(ast.If(test=test, body=body or [ast.Pass()], orelse=[]))
            state.stmts.extend(orelse)
            state.stack[:] = false_state.stack
            state.ended = state.ended or false_state.ended
            return false_end
        if false_end is None and true_end is not None:
            if not orelse:
                orelse = [ast.Pass()]
            state.stmts.append(ast.If(test=negate(test), body=orelse, orelse=[]))
            state.stmts.extend(body)
            state.stack[:] = true_state.stack
            state.ended = state.ended or true_state.ended
            return true_end
        if (self.loops and true_end is self.loops[-1].header and false_end is true_end
                and bool(body) != bool(orelse) and is_substantial(body or orelse)):
            # One arm goes straight back to the loop: a guard clause reads better.
            guard = test if not body else negate(test)
            state.stmts.append(ast.If(test=guard, body=[ast.Continue()], orelse=[]))
            state.stmts.extend(body or orelse)
            state.stack[:] = true_state.stack
            return true_end
        if not body:
            test, body, orelse = negate(test), orelse, []
        state.stmts.append(ast.If(test=test, body=body or [ast.Pass()], orelse=orelse))
        if true_end is None and false_end is None:
            return None
        state.stack[:] = true_state.stack
        state.ended = state.ended or ended
        return true_end

    def returned_value(self, cond: Cond, body: List[ast.stmt], orelse: List[ast.stmt]) -> Optional[ast.expr]:
        """``return a or b`` (or ``return a < b < c``) whose ``return`` the compiler copied into each arm."""
        if not (len(body) == 1 and len(orelse) == 1 and isinstance(body[0], ast.Return)
                and isinstance(orelse[0], ast.Return)):
            return None
        true_value, false_value = body[0].value, orelse[0].value
        if isinstance(cond.expr, ast.Constant) or (cond.true_kept and true_value is cond.expr) or \
                (cond.false_kept and false_value is cond.expr):
            # A constant test survives only in an expression: the compiler drops ``if 0:``.
            return self.value_join(cond, true_value, false_value)
        return None

    def value_join(self, cond: Cond, true_value, false_value) -> ast.expr:
        """The single value two arms push: ``a or b``, ``a and b`` or ``x if c else y``."""
        sim = self.sim
        if cond.true_kept and true_value is cond.expr:
            return merge_boolop(ast.Or(), cond.expr, sim.expr(false_value))
        if cond.false_kept and false_value is cond.expr:
            return merge_boolop(ast.And(), cond.expr, sim.expr(true_value))
        return ast.IfExp(test=cond.expr, body=sim.expr(true_value), orelse=sim.expr(false_value))

    def join(self, cond: Cond, stop: Optional[Block]) -> Optional[Block]:
        """Where the two arms of a branch meet, within the current region."""
        join = self.ipdom.get(cond.head)
        if join is None:
            return stop
        if self.loops and join not in self.loops[-1].body:
            return stop
        if self.regions and not self.regions[-1].contains(join):
            return stop
        if stop is not None and join.index > stop.index and join is not stop and stop.index > cond.head.index:
            return stop
        return join

    # -- try, with --------------------------------------------------------------------------------
    def new_handler(self, block: Block) -> Optional[Handler]:
        """The outermost statement handler covering ``block`` whose statement is not being built."""
        chain = []
        current = block.handler
        while current is not None and len(chain) < 100:
            if self.hmap.kind(current) != IMPLICIT:
                chain.append(current)
            current = self.hmap.block(current).handler
        active = {region.handler for region in self.regions}
        fresh = [h for h in chain if h not in active]
        return fresh[-1] if fresh else None

    def loop_encloses(self, header: Block, handler: Handler) -> bool:
        """Whether the loop headed by ``header`` contains the statement protected by ``handler``.

        It does when the handler code loops back, or when every protected block is in
        the loop; a protected block after the loop means the try contains the loop.
        """
        loop = natural_loop(header, self.back_edges[header])
        if self.hmap.block(handler) in loop:
            return True
        return all(b in loop for b in self.cfg.blocks if b.handler is not None and self.hmap.covers(b, handler))

    def protected(self, block: Block, handler: Handler, state: State) -> Optional[Block]:
        kind = self.hmap.kind(handler)
        if kind == WITH:
            return self.with_stmt(block, handler, state)
        if kind == TRY:
            return self.try_stmt(block, handler, state)
        raise self.error("unsupported protected region (%s)" % kind, block)

    def region_body(self, block: Block, handler: Handler, state: State, depth: int) -> Optional[Block]:
        self.regions.append(Region(handler, self.hmap, depth))
        try:
            return self.walk(block, None, state, entering=True)
        finally:
            self.regions.pop()

    def with_stmt(self, block: Block, handler: Handler, state: State) -> Optional[Block]:
        entered = state.stack[-1] if state.stack else None
        if not isinstance(entered, v.Entered):
            raise self.error("with body without its context manager", block)
        body_state = State(state.stack)
        end = self.region_body(block, handler, body_state, len(state.stack) - 1)
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

    def try_stmt(self, block: Block, handler: Handler, state: State) -> Optional[Block]:
        body_state = State(state.stack)
        body_end = self.region_body(block, handler, body_state, len(state.stack))
        hblock = self.hmap.block(handler)
        entry = State(state.stack[:handler.depth] + handler_entry_values(handler.lasti))
        first = 0
        if hblock.instrs[0].op == "PUSH_EXC_INFO":
            self.sim.step(hblock.instrs[0], entry)
            first = 1
        if self.is_finally(hblock, first, entry):
            return self.finally_stmt(body_state, body_end, hblock, first, entry, handler, state)
        self.after_try.append(follow_jumps(body_end))
        try:
            handlers, ends, states = self.except_clauses(hblock, first, entry, handler.depth)
        finally:
            self.after_try.pop()
        reached = [e for e in ends if e is not None]
        after = reached[0] if reached else None
        if any(not self.same_place(e, after) for e in reached):
            raise self.error("except clauses end in different places", hblock)
        orelse: List[ast.stmt] = []
        body_end = follow_jumps(body_end)
        tails = [st.tail for st in states if st.tail is not None]
        if after is None and tails:
            after = self.shared_tail(body_end, tails[0])
        for handler_node, st in zip(handlers, states):
            if st.tail is not None and (after is None or not same_run(after.instrs, st.tail[0].instrs[st.tail[1]:])):
                # Not the code after the try: the clause's own last statements.
                rest = State(st.stack)
                self.walk(st.tail[0], None, rest, st.tail[1])
                handler_node.body = [s for s in handler_node.body if not isinstance(s, ast.Pass)] + rest.stmts
        if after is None:
            after = body_end
        elif body_end is not None and not self.same_place(body_end, after):
            else_state = State(state.stack)
            end = self.walk(body_end, after, else_state)
            if end is not after and end is not None:
                raise self.error("else clause ends elsewhere", body_end)
            orelse = else_state.stmts
        node = ast.Try(body=body_state.stmts or [ast.Pass()], handlers=handlers, orelse=orelse, finalbody=[])
        state.stmts.append(node)
        return after

    def is_exit_path(self, block: Optional[Block]) -> bool:
        """Whether straight-line code from ``block`` ends in a return, raise, break or continue."""
        seen = 0
        while block is not None and seen < 10:
            seen += 1
            if block in self.cfg.finally_copies:
                block = self.cfg.finally_after[block]
                continue
            if self.loops and self.loop_control(block, None) is not None:
                return True
            last = block.last
            if last.op in ("RETURN_VALUE", "RAISE_VARARGS", "RERAISE"):
                return True
            if last.op == "JUMP":
                block = block.jump
            elif last.op in JUMPS:
                return False
            else:
                block = block.fall
        return False

    def finish_exit(self, block: Optional[Block], state: State) -> None:
        """Emit the straight-line code of an exit path (see `is_exit_path`)."""
        seen = 0
        while block is not None and seen < 10:
            seen += 1
            if block in self.cfg.finally_copies:
                block = self.cfg.finally_after[block]
                continue
            control = self.loop_control(block, None) if self.loops else None
            if control is not None:
                state.stmts.append(control)
                return None
            for ins in block.instrs[:-1]:
                self.sim.step(ins, state)
            last = block.last
            if last.op == "JUMP":
                block = block.jump
                continue
            self.sim.step(last, state)
            if last.op in ("RETURN_VALUE", "RAISE_VARARGS", "RERAISE"):
                return None
            block = block.fall
        raise self.error("exit path too long", block)

    def finish_return(self, end: Optional[Block], state: State, depth: int) -> Optional[Block]:
        """Finish a ``return`` whose value was computed inside a protected region.

        ``RETURN_VALUE`` cannot raise, so the compiler leaves it (and, for ``with``, the
        call of ``__exit__`` before it) out of the region: the region then ends with the
        value still on the stack.
        """
        seen = 0
        while end is not None and len(state.stack) > depth and seen < 10:
            seen += 1
            if end in self.cfg.finally_copies:  # the finally body runs before the return: skip it
                end = self.cfg.finally_after[end]
                continue
            for ins in end.instrs[:-1]:
                self.sim.step(ins, state)
            last = end.last
            if last.op in ("RETURN_VALUE", "RAISE_VARARGS", "RERAISE"):
                self.sim.step(last, state)
                return None
            if last.op == "JUMP":
                end = end.jump
            elif last.op in JUMPS:
                raise self.error("protected region ends in a branch with values on the stack", end)
            else:
                self.sim.step(last, state)
                end = end.fall
        if end is not None and len(state.stack) != depth:
            raise self.error("protected region leaves the stack changed", end)
        return end

    def same_place(self, a: Optional[Block], b: Optional[Block]) -> bool:
        """Whether two blocks continue alike: the same block, or copies of one finally body."""
        if a is b:
            return True
        if a is not None and b is not None and a.succs() == b.succs() and same_run(a.instrs, b.instrs):
            return True  # 3.12+ copies small blocks (``POP_EXCEPT; JUMP``) into each predecessor
        copies = self.cfg.finally_copies
        return a in copies and b in copies and copies[a] is copies[b]

    def shared_tail(self, start: Optional[Block], tail) -> Optional[Block]:
        """The block on the normal path that the clauses' copied tails repeat, cut out if needed."""
        copied = tail[0].instrs[tail[1]:]
        block, seen = start, 0
        while block is not None and seen < 50:
            n = len(block.instrs)
            if n >= len(copied) and same_run(block.instrs[n - len(copied):], copied):
                if n > len(copied):
                    block = self.cfg.split(block, n - len(copied))
                    self.ipdom = postdominators(self.cfg)
                return block
            if block.last.op in POP_JUMPS or block.last.op in OR_POP_JUMPS:
                break
            block = block.fall if block.fall is not None else block.jump
            seen += 1
        if tail is not None:
            self.resume[tail[0]] = tail[1]
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
                    self.sim.step(ins, clause)
                match = clause.pop()
                if not isinstance(match, v.ExcMatch):
                    raise self.error("except clause without a type test", block)
                exc_type = match.type
                start, start_first = block.fall, 0
            else:
                exc_type = None
                start, start_first = block, first
            markers = [x for x in clause.stack if isinstance(x, v.Exc)]
            self.clause_depths.append(depth)
            try:
                end = self.walk(start, None, clause, start_first)
            finally:
                self.clause_depths.pop()
            names = [m.target.id for m in markers if isinstance(m.target, ast.Name)]
            body = strip_name_cleanup(clause.stmts, names[0] if names else None)
            handlers.append(ast.ExceptHandler(type=exc_type, name=names[0] if names else None,
                                              body=body or [ast.Pass()]))
            ends.append(end)
            states.append(clause)
            if not typed:
                return handlers, ends, states
            block, first = block.jump, 0

    def finally_stmt(self, body_state: State, body_end: Optional[Block], hblock: Block, first: int,
                     entry: State, handler: Handler, state: State) -> Optional[Block]:
        final_state = State(entry.stack)
        self.walk(hblock, None, final_state, first)
        final = strip_reraise(final_state.stmts)
        if final is None:
            raise self.error("finally block does not re-raise", hblock)
        after = None
        if body_end is not None:
            copy = self.cfg.finally_copies.get(body_end)
            if copy is None or copy is not hblock:
                raise self.error("finally block not repeated on the normal path", body_end)
            after = follow_jumps(self.cfg.finally_after.get(body_end))
        body = body_state.stmts
        if len(body) == 1 and isinstance(body[0], ast.Try) and not body[0].finalbody:
            node = body[0]
            node.finalbody = final or [ast.Pass()]
        else:
            node = ast.Try(body=body or [ast.Pass()], handlers=[], orelse=[], finalbody=final or [ast.Pass()])
        state.stmts.append(node)
        return after

    # -- loops -------------------------------------------------------------------------------------
    def loop(self, header: Block, state: State) -> Optional[Block]:
        body = natural_loop(header, self.back_edges[header])
        first = header.instrs[0]
        if first.op == "FOR_ITER" and len(header.instrs) == 1:
            return self.for_loop(header, body, state)
        return self.while_loop(header, body, state)

    def exits(self, body: Set[Block], exit: Optional[Block], is_for: bool = False) -> Tuple[Optional[Block], Set[Block]]:
        """The ``break`` target and the blocks that lead to it.

        The target is the exit other than ``exit`` that most jumps leave by, looking
        through blocks that only pop the loop's iterator and jump on; exits that end
        in a return or raise are not breaks.
        """
        counts: Dict[Block, int] = {}
        via: Dict[Block, Set[Block]] = {}
        for block in body:
            target = trampoline_target(block)
            if target is not None and target not in body and block.instrs[0].op == "POP_TOP":
                if target is not exit:
                    counts[target] = counts.get(target, 0) + 1
                via.setdefault(target, set()).add(block)
                continue
            if is_for and exit is not None and not block.succs():
                index = break_copy(block, exit)
                if index is not None:  # ``break`` followed by a copy of the code after the loop
                    tail = copied_tail(block.instrs[index + 1:], exit)
                    if tail is not exit:
                        counts[tail] = counts.get(tail, 0) + 1
                    if index == 0:
                        via.setdefault(tail, set()).add(block)
                    continue
            for succ in block.succs():
                if succ in body or succ is exit:
                    continue
                target = trampoline_target(succ)
                if target is None and is_for and succ.instrs[0].op == "POP_TOP" and exit is not None:
                    # ``break`` whose jump to the code after the loop was replaced by a copy of it.
                    target = copied_tail(succ.instrs[1:], exit) or exit
                    if target is not exit:
                        counts[target] = counts.get(target, 0) + 1
                    via.setdefault(target, set()).add(succ)
                    continue
                if target is None:
                    if succ.last.op in ("RETURN_VALUE", "RAISE_VARARGS", "RERAISE"):
                        continue
                    target = succ
                if target is exit:
                    via.setdefault(target, set()).add(succ)
                    continue
                counts[target] = counts.get(target, 0) + 1
                via.setdefault(target, set()).add(succ)
        if not counts:
            return exit, via.get(exit, set()) if exit is not None else set()
        brk = max(counts, key=lambda b: (counts[b], -b.index))
        return brk, via.get(brk, set())

    def extend_body(self, header: Block, body: Set[Block], exit: Optional[Block]) -> Set[Block]:
        """The loop's blocks: its natural loop plus the arms inside it that leave it some other way.

        An ``if`` arm that ends with ``return`` (or with ``break`` and a copy of the code after
        the loop) never gets back to the header; it still belongs to the loop if the header
        dominates it and it cannot be reached from the loop's exit.
        """
        if exit is None:
            return body
        after: Set[Block] = set()
        work = [exit]
        while work:
            block = work.pop()
            if block in after or block is header:
                continue
            after.add(block)
            work.extend(block.succs())
            if block.catch is not None:
                work.append(block.catch)
        dom = self.cfg.dom
        return body | {b for b in self.cfg.blocks if b not in after and header in dom.get(b, ())}

    def for_loop(self, header: Block, body: Set[Block], state: State) -> Optional[Block]:
        iterator = state.stack[-1] if state.stack else None
        if isinstance(iterator, ast.Name) and iterator.id == ".0":  # a comprehension's argument
            iterator = state.stack[-1] = v.Iterator(iterator)
        if not isinstance(iterator, v.Iterator):
            raise self.error("for loop over a non-iterator", header)
        exit = header.jump
        body = self.extend_body(header, body, exit)
        brk, break_blocks = self.exits(body, exit, is_for=True)
        item = v.LoopItem()
        body_state = State(state.stack + [item])
        loop = Loop(header, body, exit, brk, break_blocks)
        loop.iterator, loop.depth = iterator, len(state.stack)
        self.loops.append(loop)
        try:
            end = self.walk(header.fall, header, body_state)
        finally:
            self.loops.pop()
        if end is not None and len(body_state.stack) != len(state.stack):
            raise self.error("for loop body leaves the stack changed", header)
        if item.target is None:
            raise self.error("for loop without a target", header)
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
        return self.loop_else(node, exit, brk, state)

    def loop_else(self, node: ast.stmt, exit: Optional[Block], brk: Optional[Block], state: State) -> Optional[Block]:
        if brk is not None and brk is not exit and exit is not None:
            else_state = State(state.stack)
            end = self.walk(exit, brk, else_state)
            node.orelse = else_state.stmts
            state.stmts.append(node)
            return brk if end is brk else (brk if end is not None else brk)
        state.stmts.append(node)
        return exit if exit is not None else brk

    def while_loop(self, header: Block, body: Set[Block], state: State) -> Optional[Block]:
        cond = None
        if header.last.op in ("POP_JUMP_IF_FALSE", "POP_JUMP_IF_TRUE", "POP_JUMP_IF_NONE", "POP_JUMP_IF_NOT_NONE"):
            probe = State(state.stack)
            try:
                for ins in header.instrs[:-1]:
                    self.sim.step(ins, probe)
                clean = not probe.stmts
            except DecompilationError:
                clean = False
            if clean:
                self.loops.append(Loop(header, body, None, None))
                try:
                    cond = collect_condition(self, header, probe)
                finally:
                    self.loops.pop()
                inside = cond.true_block in body, cond.false_block in body
                if inside == (True, False):
                    pass
                elif inside == (False, True):
                    cond = cond.negated()
                else:
                    cond = None
        if cond is None:
            brk, break_blocks = self.exits(body, None)
            loop = Loop(header, body, None, brk, break_blocks)
            body_state = State(state.stack)
            self.loops.append(loop)
            try:
                self.walk_body(header, body_state)
            finally:
                self.loops.pop()
            node = ast.While(test=ast.Constant(value=True), body=body_state.stmts or [ast.Pass()], orelse=[])
            state.stmts.append(node)
            return brk
        exit = cond.false_block
        body = self.extend_body(header, body, exit)
        brk, break_blocks = self.exits(body, exit)
        loop = Loop(header, body, exit, brk, break_blocks)
        body_state = cond.true_state
        self.loops.append(loop)
        try:
            self.walk(cond.true_block, header, body_state)
        finally:
            self.loops.pop()
        node = ast.While(test=cond.expr, body=body_state.stmts or [ast.Pass()], orelse=[])
        return self.loop_else(node, exit, brk, state)

    def walk_body(self, header: Block, state: State) -> None:
        """Walk a ``while True`` body, which starts at its header."""
        self.walk(header, header, state, entering=True)


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


def break_copy(block: Block, exit: Block) -> Optional[int]:
    """Index of the ``POP_TOP`` after which ``block`` repeats the code after its loop, if any."""
    for index, ins in enumerate(block.instrs[:-1]):
        if index and block.instrs[index - 1].op in ("SWAP", "ROT"):
            continue  # ``return value`` inside the loop pops the iterator from under the value
        if ins.op == "POP_TOP" and copied_tail(block.instrs[index + 1:], exit) is not None:
            return index
    return None


def copied_tail(tail: List[Instr], exit: Block) -> Optional[Block]:
    """The block from ``exit`` on whose code is ``tail`` (a copy made after popping the iterator)."""
    seen = 0
    current: Optional[Block] = exit
    while current is not None and seen < 50:
        if same_run(current.instrs, tail):
            return current
        current = current.fall if current.fall is not None else current.jump
        seen += 1
    return None


def trampoline_target(block: Block) -> Optional[Block]:
    """Where a block that only pops values and jumps on leads, if it is such a block."""
    if block.last.op == "JUMP" and all(ins.op == "POP_TOP" for ins in block.instrs[:-1]):
        return block.jump
    return None


class Region:
    """A protected region: the blocks an exception in which reaches ``handler``."""

    def __init__(self, handler: Handler, hmap: HandlerMap, depth: int) -> None:  # noqa: D107
        self.handler = handler
        self.hmap = hmap
        #: Stack depth on normal exit; more values on the way out mean a return in progress.
        self.depth = depth

    def contains(self, block: Block) -> bool:
        return self.hmap.covers(block, self.handler)


def is_builtin_check(test: ast.expr) -> bool:
    return (isinstance(test, ast.Compare) and len(test.ops) == 1 and isinstance(test.ops[0], ast.Is)
            and getattr(test.comparators[0], "_framescope_builtin", False))


def strip_reraise(body: List[ast.stmt]) -> Optional[List[ast.stmt]]:
    """A finally body without the re-raise that ends each of its paths (None: some path lacks it)."""
    if not body:
        return None
    last = body[-1]
    if isinstance(last, ast.Raise) and last.exc is None:
        body = body[:-1]
        if body and isinstance(body[-1], ast.If):  # an arm that re-raised before the shared end
            inner = strip_reraise(body[-1].body)
            if inner is not None and not body[-1].orelse:
                body[-1].body = inner or [ast.Pass()]
        return body
    if isinstance(last, ast.If):
        inner = strip_reraise(last.body)
        rest = strip_reraise(last.orelse) if last.orelse else None
        if inner is None or (last.orelse and rest is None):
            return None
        last.body = inner or [ast.Pass()]
        last.orelse = rest or []
        return body
    return None


def laid_out_first(a: Optional[Block], b: Optional[Block]) -> bool:
    return a is not None and b is not None and a.index < b.index


def common_tail(a: List[ast.stmt], b: List[ast.stmt]) -> List[ast.stmt]:
    """The statements both lists end with, when those end in a return or raise."""
    n = 0
    while n < min(len(a), len(b)) and ast.dump(a[-1 - n]) == ast.dump(b[-1 - n]):
        n += 1
    if not n or not isinstance(a[-1], (ast.Return, ast.Raise)):
        return []
    return a[len(a) - n:]


def is_substantial(body: List[ast.stmt]) -> bool:
    """Whether an arm is worth un-nesting: several statements, or a compound one."""
    return len(body) > 1 or any(isinstance(s, (ast.If, ast.For, ast.While, ast.Try, ast.With, ast.AsyncFor,
                                                 ast.AsyncWith)) for s in body)


def ends_control(body: List[ast.stmt]) -> bool:
    """Whether a statement list always leaves (its last statement returns, raises, breaks...)."""
    if not body:
        return False
    last = body[-1]
    if isinstance(last, (ast.Return, ast.Raise, ast.Break, ast.Continue)):
        return True
    if isinstance(last, ast.If):
        return ends_control(last.body) and ends_control(last.orelse)
    return False


def follow_jumps(block: Optional[Block]) -> Optional[Block]:
    seen = 0
    while block is not None and len(block.instrs) == 1 and block.last.op == "JUMP" and seen < 20:
        block = block.jump
        seen += 1
    return block


def strip_name_cleanup(body: List[ast.stmt], name: Optional[str]) -> List[ast.stmt]:
    """Drop the ``POP_EXCEPT`` markers and the ``name = None; del name`` after each, at any depth."""
    out: List[ast.stmt] = []
    skip = 0
    for stmt in body:
        if isinstance(stmt, (ast.If, ast.For, ast.While, ast.With)):
            stmt.body = strip_name_cleanup(stmt.body, name) or [ast.Pass()]
            if getattr(stmt, "orelse", None):
                stmt.orelse = strip_name_cleanup(stmt.orelse, name)
        if isinstance(stmt, ExceptEnd):
            skip = 2 if name else 0
            if name and len(out) >= 2 and is_name_reset(out[-2], name, 2) and is_name_reset(out[-1], name, 1):
                del out[-2:]  # 3.8 resets the name before releasing the exception
                skip = 0
            continue
        if skip and name and is_name_reset(stmt, name, skip):
            skip -= 1
            continue
        skip = 0
        out.append(stmt)
    return out


def is_name_reset(stmt: ast.stmt, name: str, step: int) -> bool:
    if step == 2:
        return (isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name)
                and stmt.targets[0].id == name and isinstance(stmt.value, ast.Constant) and stmt.value.value is None)
    return (isinstance(stmt, ast.Delete) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name)
            and stmt.targets[0].id == name)


merge_boolop = boolop


def natural_loop(header: Block, latches: List[Block]) -> Set[Block]:
    body = {header}
    work = [b for b in latches if b is not header]
    while work:
        block = work.pop()
        if block in body:
            continue
        body.add(block)
        work.extend(block.preds)
    return body


def postdominators(cfg: CFG) -> Dict[Block, Optional[Block]]:
    """Immediate post-dominator of each block over normal edges (None: the function's exit)."""
    blocks = cfg.blocks
    exit_node = None
    pdom: Dict[Block, Set] = {}
    everything = set(blocks) | {exit_node}
    for block in blocks:
        pdom[block] = set(everything)
    changed = True
    order = list(reversed(blocks))
    while changed:
        changed = False
        for block in order:
            succs = block.succs()
            if not succs:
                new = {block, exit_node}
            else:
                new = set.intersection(*[pdom[s] for s in succs]) | {block}
            if new != pdom[block]:
                pdom[block] = new
                changed = True
    ipdom: Dict[Block, Optional[Block]] = {}
    for block in blocks:
        strict = pdom[block] - {block}
        # The immediate post-dominator is the strict post-dominator post-dominated by all others.
        best = None
        for cand in strict:
            if cand is None:
                continue
            if all(other is None or other is cand or other in pdom[cand] for other in strict):
                best = cand
                break
        ipdom[block] = best
    return ipdom
