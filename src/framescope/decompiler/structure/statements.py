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

`Structurer` is the walker. Loops are built by `loops.LoopBuilder`, try and with
statements by `protected.ProtectedBuilder`, match statements by `matches.MatchBuilder`,
the values of branches that are expressions by `arm_values.ArmValues`:
parts that share only the walker and a `context.StructureContext` (the pass's inputs,
what is derived from them once, and the stacks of the constructs being built).
"""
import ast
from types import CodeType
from typing import List, Optional, Tuple

from framescope.decompiler.frontend import versions
from framescope.decompiler.graph.cfg import CFG, Block
from framescope.decompiler.graph.copies import is_copied_constant_return
from framescope.decompiler.simulate import marks
from framescope.decompiler.simulate.simulator import Simulator
from framescope.decompiler.simulate.state import ExceptEnd, State, is_none_return
from framescope.decompiler.structure.arm_values import ArmValues
from framescope.decompiler.structure.conditions import (
    Cond, collect_condition, continue_jumped_to, is_builtin_check, jump_past_leaving_arm, jumps_per_test,
    negate, pass_arm_jump,
)
from framescope.decompiler.structure.context import StructureContext
from framescope.decompiler.structure.finally_exits import continue_through_finally
from framescope.decompiler.structure.loops import LoopBuilder
from framescope.decompiler.structure.matches import MatchBuilder
from framescope.decompiler.structure.patterns import MATCH_STARTS
from framescope.decompiler.structure.operands import value_arms_meet
from framescope.decompiler.structure.arms import (
    both_arms_leave, if_else, mark_line, is_bare_raise, is_substantial, laid_out_first, passed_arm,
    passed_then_else, path_leaves_function, releases, threaded_break, unreached_else_jump, written_else_end,
)
from framescope.decompiler.structure.protected import ProtectedBuilder
from framescope.decompiler.structure.region_exits import RegionExits, written_exit
from framescope.decompiler.structure.try_exits import normal_with_exit
from framescope.decompiler.structure.unreached import code_after_handler
from framescope.decompiler.graph.traversal import follow_jumps, jump_chain, reachable


class Structurer:
    """Build the statement list of one code object: the walk over its blocks."""

    def __init__(self, code: CodeType, cfg: CFG, sim: Simulator) -> None:
        self.ctx = StructureContext(code, cfg, sim)
        self.loop_builder = LoopBuilder(self.ctx, self)
        #: Reads the branches that are parts of expressions.
        self.values = ArmValues(self.ctx)
        #: The ways out of try and with statements, for this walker and both builders.
        self.exits = RegionExits(self.ctx, self.loop_builder)
        self.protected_builder = ProtectedBuilder(self.ctx, self, self.loop_builder, self.exits)
        self.match_builder = MatchBuilder(self.ctx, self)
        self.steps = 0
        #: Bound on blocks visited: structuring visits each block a few times at most.
        self.max_steps = 50 * len(cfg.blocks) + 1000

    # -- entry point -------------------------------------------------------------------------------
    def body(self, state: Optional[State] = None) -> List[ast.stmt]:
        state = state or State()
        self.walk(self.ctx.cfg.entry, None, state)
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
                raise self.ctx.error("control flow too irregular", block)
            if state.ended:  # an except clause ended (POP_EXCEPT): what follows is after the try
                return self.after_clause(block, state)
            if not entering:
                loop_jump = self.loop_builder.loop_control(block, stop)
                if loop_jump is not None:
                    state.stmts.append(loop_jump)
                    return None
            entering = False
            left = self.left_construct(block, state)
            if left is not None:
                return left[0]
            if not first:
                built = self.construct(block, state)
                if built is not None:
                    block = built[0]
                    continue
            block = self.step_block(block, first, stop, state)
            first = 0
        return block

    def left_construct(self, block: Block, state: State) -> Optional[Tuple[Optional[Block]]]:
        """``(where the walk ends,)`` when ``block`` is outside the region being built; None to go on."""
        if any(loop.header is block for loop in self.ctx.loops[:-1]):
            # No statement jumps from an inner loop to the start of an outer one: the
            # inner loop's exits were misread, and walking on would go round forever.
            raise self.ctx.error("jump out of a loop to an outer loop's start", block)
        if self.ctx.regions and not self.ctx.regions[-1].contains(block):
            if len(state.stack) > self.ctx.regions[-1].depth:
                return (self.exits.finish_return(block, state, self.ctx.regions[-1].depth),)
            return (block,)
        return None

    def construct(self, block: Block, state: State) -> Optional[Tuple[Optional[Block]]]:
        """Build the try, with or loop statement ``block`` starts: ``(where it goes on,)``; None if none."""
        outer = self.exits.new_handler(block)
        is_header = block in self.ctx.back_edges and not any(loop.header is block for loop in self.ctx.loops)
        if outer is not None and not (is_header and self.protected_builder.loop_encloses(block, outer)):
            return (self.protected_builder.protected(block, outer, state),)
        if is_header:
            return (self.loop_builder.loop(block, state),)
        return None

    def step_block(self, block: Block, first: int, stop: Optional[Block], state: State) -> Optional[Block]:
        """Run ``block`` from instruction ``first`` (or where it is to be resumed); the block the
        walk goes on at, None when control ended."""
        i = first or self.ctx.resume.pop(block, 0)
        probed = self.ctx.probed.pop(block, None) if not i and self.ctx.probed else None
        if probed is not None and probed.fits(state.stack):
            # A test of a chain the condition before it already probed: take what it found.
            state.stack[:] = probed.stack
            return self.branch(block, stop, state, probed.cond)
        end, matched = self.straight_line(block, i, stop, state)
        if end is None:
            return None
        if matched is not None:  # a match statement: go on after it
            return matched[0]
        if end == len(block.instrs) and block.fall is not None and block.jump is None:
            return block.fall  # the clause's name clean-up ran to the end of the block
        return self.block_end(block, end, stop, state)

    def straight_line(self, block: Block, i: int, stop: Optional[Block], state: State):
        """Run ``block``'s instructions before its last from ``i`` on: (where they stopped, the
        match statement found there or None); (None, None) when control ended."""
        instrs = block.instrs
        while i < len(instrs) - 1:
            if instrs[i].op == "POP_TOP" and self.loop_builder.is_break_copy(block, i, state):
                state.stmts.append(ast.Break())
                return None, None
            if instrs[i].op in MATCH_STARTS:
                matched = self.match_builder.match_statement(block, i, state, stop)
                if matched is not None:
                    return i, matched
            self.ctx.sim.step(instrs[i], state)
            i += 1
            if state.ended and state.tail is None:
                i = self.exits.name_cleanup(instrs, i, state)
                if ((i < len(instrs) - 1 or is_bare_raise(instrs[i:]))
                        and (self.protected_builder.repeats_after(instrs[i:], state)
                             or self.protected_builder.follows_try(instrs[i:], state))):
                    # The clause is over but the block goes on with a copy of the code
                    # after the try statement.
                    state.tail = (block, i)
                    return None, None
        return i, None

    def block_end(self, block: Block, i: int, stop: Optional[Block], state: State) -> Optional[Block]:
        """Run a block's last instruction (``i``: where its others stopped); the block the
        walk goes on at, None when control ended."""
        last = block.last
        if last.op == "POP_TOP" and self.loop_builder.is_break_copy(block, len(block.instrs) - 1, state):
            state.stmts.append(ast.Break())
            return None
        if last.is_cond_jump():
            return self.branch(block, stop, state)
        if last.op == "JUMP":
            return block.jump
        if last.op == "FOR_ITER":
            raise self.ctx.error("for loop without a back edge", block)
        if last.op in ("RETURN_VALUE", "RAISE_VARARGS", "RERAISE"):
            self.ctx.sim.step(last, state)
            if state.stmts and isinstance(state.stmts[-1], ast.Return):
                mark_line(state.stmts[-1], last.line)
                if is_copied_constant_return(block):
                    marks.mark(state.stmts[-1], marks.RETURN_COPY)
                if is_none_return(state.stmts[-1]) and written_exit(block):
                    marks.mark(state.stmts[-1], marks.WRITTEN_RETURN, block.index)
            return None
        if i < len(block.instrs):  # not already run as the end of an except clause's clean-up
            self.ctx.sim.step(last, state)
        return block.fall

    def after_clause(self, block: Block, state: State) -> Optional[Block]:
        """Where the walk goes once an except clause ended (its POP_EXCEPT ran): what follows
        is after the try statement, unless the clause leaves by return, break or continue."""
        depth = self.ctx.clause_depths[-1] if self.ctx.clause_depths else 0
        if len(state.stack) > depth:  # a return leaving the clause
            return self.exits.finish_return(block, state, depth)
        loop_jump = self.loop_builder.loop_control(block, None)
        if loop_jump is not None and not self.released_after_reset(state):
            state.stmts.append(loop_jump)
            return None
        if block.instrs[0].op == "POP_EXCEPT" and block.last.op == "JUMP" and releases(block.instrs[:-1]):
            # ``continue``/``break`` from nested except clauses releases the outer one too.
            loop_jump = self.loop_builder.loop_control(block.jump, None)
            if loop_jump is not None:
                state.stmts.append(loop_jump)
                return None
        if (block.instrs[0].op == "POP_EXCEPT" and block.last.op in ("RETURN_VALUE", "RAISE_VARARGS")
                and not (self.ctx.after_try and self.exits.same_place(block, self.ctx.after_try[-1]))):
            # A return from nested except clauses releases each one's exception in turn.
            for ins in block.instrs:
                self.ctx.sim.step(ins, state)
            return None
        return block

    def released_after_reset(self, state: State) -> bool:
        """Whether an ``except E as name`` clause just ran off its end the 3.8 way.

        3.8 resets the name before ``POP_EXCEPT`` only at the clause's end; a ``break``,
        ``continue`` or ``return`` leaving the clause releases the exception first.
        """
        stmts = state.stmts
        if len(stmts) < 3 or not isinstance(stmts[-1], ExceptEnd):
            return False
        reset, delete = stmts[-3], stmts[-2]
        return (isinstance(reset, ast.Assign) and len(reset.targets) == 1 and isinstance(reset.targets[0], ast.Name)
                and isinstance(reset.value, ast.Constant) and reset.value.value is None
                and isinstance(delete, ast.Delete) and len(delete.targets) == 1
                and isinstance(delete.targets[0], ast.Name) and delete.targets[0].id == reset.targets[0].id)

    # -- conditionals ------------------------------------------------------------------------------
    def branch(self, block: Block, stop: Optional[Block], state: State,
               cond: Optional[Cond] = None) -> Optional[Block]:
        if cond is None:
            cond = collect_condition(self.ctx, block, state)
        matched = self.match_builder.guarded_match(cond, state, stop) if MATCH_STARTS else None
        if matched is not None:
            return matched[0]
        join = self.join(cond, stop)
        if join is not None and join.is_lone_jump():
            # An arm that only jumps on was looked through (`resolve_pops`), past where the arms meet.
            if cond.true_block is join.jump and not cond.true_kept:
                cond.true_block = join
            if cond.false_block is join.jump and not cond.false_kept:
                cond.false_block = join
        if is_builtin_check(cond.expr):
            # 3.14 inlines ``all``/``any``/``tuple`` of a generator expression when the name is
            # the builtin; the other arm is the plain call the source wrote.
            end = self.walk(cond.false_block, join, cond.false_state)
            state.stack[:] = cond.false_state.stack
            state.stmts.extend(cond.false_state.stmts)
            return end
        shared = self.values.shared_exit(cond, len(state.stack))
        if shared is not None:
            block, index, true_value, false_value = shared
            state.stack.append(self.values.value_join(cond, true_value, false_value))
            self.ctx.resume[block] = index
            return block
        true_state, false_state = cond.true_state, cond.false_state
        true_end = self.walk(cond.true_block, join, true_state)
        false_end = self.walk(cond.false_block, join, false_state)
        if true_end is None and join is not None and join is self.after_true_arm_try(cond):
            true_end = join  # it falls out of its try's handler there (past the else, if any)
        true_end = self.threaded_return(true_state, true_end, false_state, false_end, join, len(state.stack))
        false_end = self.threaded_return(false_state, false_end, true_state, true_end, join, len(state.stack))
        if true_end is join and false_end is join and self.values.arms_value(cond, state):
            return join
        true_end, false_end = self.arm_ends(block, true_state, false_state, true_end, false_end)
        true_end, false_end = self.loop_builder.guard_through_finally(cond, true_end, false_end)
        true_end, false_end = continue_through_finally(self.ctx, cond, true_end, false_end)
        return self.if_statement(cond, state, true_end, false_end)

    def threaded_return(self, arm: State, end: Optional[Block], other: State, other_end: Optional[Block],
                        join: Optional[Block], base: int) -> Optional[Block]:
        """Where an arm goes on, once a ``return`` that stands for its value's jump to ``join`` is undone.

        When the other arm takes a value to ``join``, a lone ``RETURN_VALUE``, an arm that only
        returns a value is the jump there that the peephole optimizer replaced (3.8-3.9). Its
        value goes where the other arm's is: on the branch's stack, or one lower in a chained
        comparison, whose arms both drop the operand kept for the next comparison. 3.10+ copies
        the ``RETURN_VALUE`` into the arm instead: undone only in a chained comparison, where
        no statement could end the arm.
        """
        chained = len(arm.stack) == base - 1
        if (end is not None or join is None or other_end is not join or len(join.instrs) != 1
                or join.last.op != "RETURN_VALUE" or len(other.stack) != len(arm.stack) + 1
                or not (chained or (versions.RETURN_JUMPS_THREADED and len(arm.stack) == base))
                or any(a is not b for a, b in zip(arm.stack, other.stack))
                or len(arm.stmts) != 1 or not isinstance(arm.stmts[0], ast.Return) or arm.stmts[0].value is None):
            return end
        arm.stack.append(arm.stmts.pop().value)
        return join

    def arm_ends(self, block: Block, true_state: State, false_state: State, true_end: Optional[Block],
                 false_end: Optional[Block]) -> "tuple[Optional[Block], Optional[Block]]":
        """Where each arm goes on, once arms that reach one place by other ways are seen to."""
        true_end, false_end = self.uneven_stacks(block, true_state, false_state, true_end, false_end)
        true_end, false_end = self.one_place(true_end, false_end)
        return self.region_exits(block, true_state, false_state, true_end, false_end)

    def uneven_stacks(self, block: Block, true_state: State, false_state: State, true_end: Optional[Block],
                      false_end: Optional[Block]) -> "tuple[Optional[Block], Optional[Block]]":
        if true_end is not None and false_end is not None and len(true_state.stack) != len(false_state.stack):
            # An arm that popped its loop's iterator before leaving a protected region goes on to
            # a return: the rest of the return runs after the region's end.
            true_path, false_path = self.exits.exit_path(true_end), self.exits.exit_path(false_end)
            if self.ctx.regions and len(true_state.stack) < len(false_state.stack) and path_leaves_function(true_path):
                true_end = self.exits.finish_exit(true_path, true_state)
            elif self.ctx.regions and len(false_state.stack) < len(true_state.stack) and path_leaves_function(false_path):
                false_end = self.exits.finish_exit(false_path, false_state)
            else:
                raise self.ctx.error("branches leave different stacks", block)
        return true_end, false_end

    def one_place(self, true_end: Optional[Block],
                  false_end: Optional[Block]) -> "tuple[Optional[Block], Optional[Block]]":
        """Arm ends that are one place reached by other ways: a lone jump, a copy, the region's exit."""
        if true_end is not None and false_end is not None and true_end is not false_end:
            # An arm may stop at a block that only jumps on to where the other arm stopped.
            if false_end in jump_chain(true_end):
                true_end = false_end
            elif true_end in jump_chain(false_end):
                false_end = true_end
        if true_end is not None and false_end is not None and self.exits.same_place(true_end, false_end):
            false_end = true_end  # two copies of one block (3.10+ copies small exits)
        if (true_end is not None and false_end is not None and true_end is not false_end and self.ctx.regions
                and not self.ctx.regions[-1].contains(true_end) and not self.ctx.regions[-1].contains(false_end)
                and follow_jumps(true_end) is follow_jumps(false_end)):
            # Both leave the protected region for one place, one through a lone jump.
            true_end = false_end = follow_jumps(true_end)
        return true_end, false_end

    def region_exits(self, block: Block, true_state: State, false_state: State, true_end: Optional[Block],
                     false_end: Optional[Block]) -> "tuple[Optional[Block], Optional[Block]]":
        if true_end is not None and false_end is not None and true_end is not false_end:
            # Leaving a protected region: an arm that goes straight on to a return, raise,
            # break or continue is that statement, run after the region's clean-up code.
            true_path, false_path = self.exits.exit_path(true_end), self.exits.exit_path(false_end)
            if true_path is not None and false_path is not None and self.ctx.regions \
                    and self.ctx.regions[-1].contains(true_end) and not self.ctx.regions[-1].contains(false_end):
                true_path = None  # only the other arm leaves the region: that one is the exit
            elif true_path is not None and false_path is not None and normal_with_exit(true_end):
                true_path = None  # 3.8: the with's normal exit; the other arm has a clean-up of its own
            if true_path is not None:
                true_end = self.exits.finish_exit(true_path, true_state)
            elif false_path is not None:
                false_end = self.exits.finish_exit(false_path, false_state)
            if true_end is not None and false_end is not None and true_end is not false_end:
                raise self.ctx.error("branches end in different places", block)
        return true_end, false_end

    def if_statement(self, cond: Cond, state: State, true_end: Optional[Block],
                     false_end: Optional[Block]) -> Optional[Block]:
        """The ``if`` statement of a branch whose arms go on to ``true_end``/``false_end`` (None:
        the arm leaves); where the walk goes on."""
        true_state, false_state = cond.true_state, cond.false_state
        test = cond.expr
        body, orelse = true_state.stmts, false_state.stmts
        ended = true_state.ended or false_state.ended
        state.tail = state.tail or true_state.tail or false_state.tail
        returned = self.values.returned_value(cond, body, orelse)
        if returned is not None:
            state.stmts.append(ast.Return(value=returned))
            return None
        merged = self.values.merged_arms(cond, body, orelse, state.stack) if true_end is None and false_end is None else None
        if merged is not None:
            state.stmts.extend(merged)
            return None
        passed = passed_arm(self.ctx.cfg.blocks, cond, true_end, false_end, body, orelse)
        if passed is not None:  # ``if test: pass`` then ``else:`` an arm that leaves
            test, leaving, after, end, arm_state = passed
            state.stmts.append(ast.If(test=test, body=[ast.Pass()], orelse=leaving))
            state.stmts.extend(after)
            state.stack[:] = arm_state.stack
            state.ended = state.ended or arm_state.ended
            return end
        true_block, false_block = cond.true_block, cond.false_block
        if body and orelse and laid_out_first(false_block, true_block):
            # The arm the compiler placed first is the one the source wrote first.
            test, body, orelse = negate(test), orelse, body
            true_state, false_state = false_state, true_state
            true_end, false_end = false_end, true_end
            true_block, false_block = false_block, true_block
        if true_end is None and false_end is None:
            # An unreached jump between the arms (3.8-3.9): the source wrote the ``else``.
            written_else = unreached_else_jump(self.ctx.cfg.blocks, cond.last_test(), false_block)
            state.stmts.extend([ast.If(test=test, body=body, orelse=orelse)] if written_else and body and orelse
                               else both_arms_leave(test, body, orelse))
            return None
        if true_end is None:
            return self.one_arm_leaves(test, body, orelse, false_state, false_end, state,
                                       unreached_else_jump(self.ctx.cfg.blocks, cond.last_test(), false_block))
        if false_end is None:
            if body and orelse and laid_out_first(true_block, false_block) \
                    and not threaded_break(orelse, false_block):
                # The arm that goes on comes first: ``if test: body else: <leaves>``.
                state.stmts.append(ast.If(test=test, body=body, orelse=orelse))
                state.stack[:] = true_state.stack
                state.ended = state.ended or true_state.ended
                return true_end
            return self.one_arm_leaves(negate(test), orelse, body, true_state, true_end, state,
                                       unreached_else_jump(self.ctx.cfg.blocks, cond.last_test(), true_block))
        if (self.ctx.loops and true_end is self.ctx.loops[-1].header and false_end is true_end
                and bool(body) != bool(orelse) and self.continue_laid_out_first(cond, bool(body))
                and not jumps_per_test(cond)
                and (not versions.FORWARD_CONDITIONAL_JUMPS or is_substantial(body or orelse)
                     or continue_jumped_to(cond, true_end))):
            # One arm goes straight back to the loop, by a jump placed before the other arm:
            # the source wrote a guard clause. (3.12+ places it there for any ``if`` that ends
            # the body too: there, only a long other arm makes a guard clause likelier.)
            staying = cond.true_block if body else cond.false_block
            return self.one_arm_leaves(test if not body else negate(test), [ast.Continue()], body or orelse,
                                       true_state, true_end, state,
                                       unreached_else_jump(self.ctx.cfg.blocks, cond.last_test(), staying))
        state.stmts.append(passed_then_else(self.ctx.cfg.blocks, cond, body, orelse)
                           or if_else(test, body, orelse, passed=bool(orelse) and pass_arm_jump(cond, true_end)))
        state.stack[:] = true_state.stack
        state.ended = state.ended or ended
        return true_end

    def continue_laid_out_first(self, cond: Cond, true_arm_stays: bool) -> bool:
        """Whether the arm of ``cond`` that goes straight back to the loop's header is a jump of
        its own laid out before the other arm (``if not ok: continue``), not the loop's own
        jump back after an ``if`` that ends the body."""
        other = cond.true_block if true_arm_stays else cond.false_block
        header = self.ctx.loops[-1].header
        if other is None:
            return False
        if versions.FORWARD_CONDITIONAL_JUMPS and true_arm_stays and isinstance(cond.expr, ast.Compare):
            # The jump back comes first either way; a comparison's operator shows which
            # way the test was written (``if k not in d: ...``, not ``if k in d: continue``).
            return False
        return any(len(pred.instrs) == 1 and pred.jump is header and cond.head.index < pred.index < other.index
                   for pred in header.preds)

    def one_arm_leaves(self, test: ast.expr, leaving: List[ast.stmt], staying: List[ast.stmt],
                       staying_state: State, end: Block, state: State, written_else: bool = False) -> Block:
        """``if test: <leaving>`` then the other arm's statements, which go on to ``end`` (as
        its ``else`` when ``written_else``)."""
        node = ast.If(test=test, body=leaving or [ast.Pass()], orelse=staying if written_else else [])
        if written_else:
            marks.mark(node, marks.WRITTEN_ELSE)
        state.stmts.append(node)
        state.stmts.extend([] if written_else else staying)
        state.stack[:] = staying_state.stack
        state.ended = state.ended or staying_state.ended
        return end

    def join(self, cond: Cond, stop: Optional[Block]) -> Optional[Block]:
        """Where the two arms of a branch meet, within the current region."""
        join = self.ctx.ipdom.get(cond.head)
        if self.ctx.loops and (join is None or join is self.ctx.loops[-1].header):
            join = self.meeting_in_loop(cond, stop) or join
        elif self.ctx.loops and self.round_the_loop(cond, join):
            # Where the arms first both get to inside the loop; a way out of it is no meeting.
            join = self.meeting_in_loop(cond, stop) or (None if self.leaves_loop(join) else join)
        if join is None and not self.ctx.loops and not self.ctx.regions:
            join = self.meeting(cond, stop)
        if join is None or (self.ctx.loops and join is stop):
            join = jump_past_leaving_arm(cond, self.ctx.cfg.blocks, stop) or join
        if join is None:
            join = self.after_true_arm_try(cond)
        if join is None:
            join = written_else_end(self.ctx.cfg.blocks, cond, stop)
        if join is None:
            return stop
        if ((self.ctx.loops and join not in self.ctx.loops[-1].body)
                or (self.ctx.regions and not self.ctx.regions[-1].contains(join))) \
                and not value_arms_meet(self.ctx, cond, join):
            return stop
        if stop is not None and join.index > stop.index and join is not stop and stop.index > cond.head.index:
            return stop
        return join

    def round_the_loop(self, cond: Cond, join: Block) -> bool:
        """Whether an arm of ``cond`` gets to ``join``, the branch's immediate post-dominator,
        only by going round the loop again. A loop left only from inside its body makes what
        lies on every way out post-dominate its blocks through the jump back: the code after an
        ``if`` that holds the only ``break`` (``while True: ... if not n: break``), or an arm
        that leaves a loop nothing else leaves (``while True`` without ``break``: a ``return``)."""
        loop = self.ctx.loops[-1]
        arms = (cond.true_block, cond.false_block)
        if join in arms and self.leaves_loop(join):
            others = [arm for arm in arms if arm is not join]
        elif join in loop.body:  # (an arm that is a jump back is a ``continue``: the meeting stays)
            others = [arm for arm in arms if arm is not join and arm is not loop.header]
        else:
            return False
        return any(arm is not None and join not in reachable([arm], exclude=loop.header) for arm in others)

    def leaves_loop(self, block: Block) -> bool:
        """Whether ``block`` never gets back to the start of the loop being built."""
        return self.ctx.loops[-1].header not in reachable([block])

    def after_true_arm_try(self, cond: Cond) -> Optional[Block]:
        """Where the true arm goes on when it ends with a try statement that always leaves,
        falling out of its handler's ``END_FINALLY`` (3.8), which no edge of the graph says."""
        if cond.true_block is None or cond.false_block is None:
            return None
        return code_after_handler(self.ctx.cfg.blocks, cond.true_block, cond.false_block)

    def meeting(self, cond: Cond, stop: Optional[Block]) -> Optional[Block]:
        """Where the arms of a branch meet when one of them can end the function.

        A ``return`` or ``raise`` in one arm leaves the branch without a post-dominator,
        yet the code after the ``if`` starts at the first block both arms reach: stopping
        there walks it once instead of once per arm (and again for each enclosing ``if``).
        """
        t, f = cond.true_block, cond.false_block
        if t is None or f is None or t is f:
            return None
        common = reachable([t], stop=stop) & reachable([f], stop=stop)
        common.discard(stop)
        return min(common, key=lambda b: b.index) if common else None

    def meeting_in_loop(self, cond: Cond, stop: Optional[Block]) -> Optional[Block]:
        """Where the arms of a branch meet before going round their loop again, if they do.

        Every path from the branch leads back to the loop's start or out of the function,
        so nothing post-dominates it; but arms that end in ``continue``, ``raise`` or
        ``return`` only on some paths still meet where the code after the ``if`` starts:
        the first block both reach.  Inside an arm, ``stop`` is where that arm ends.
        """
        loop = self.ctx.loops[-1]
        inner = stop if stop is not None and stop is not loop.header and stop in loop.body else None
        if cond.true_block is not None and cond.false_block is not None:
            common = (reachable([cond.true_block], stop=inner, exclude=loop.header, inside=loop.body)
                      & reachable([cond.false_block], stop=inner, exclude=loop.header, inside=loop.body))
            if common:
                return min(common, key=lambda b: b.index)
        return inner

