"""Branch conditions, with short-circuit chains folded into ``and``/``or``.

``if a and b:`` compiles to two conditional jumps that share their false target;
``if a or b:`` to two that share their true target.  Starting from a block that ends
in a conditional jump, `collect_condition` absorbs successor blocks that only test a
condition and share a target with what was collected so far, innermost first:

====================  =============================  ===========================
second test reached    shared target                  folded condition
====================  =============================  ===========================
when the first holds   its false target               ``a and b``
when the first holds   its true target = first false  ``a and not b``
when the first fails   its true target                ``a or b``
when the first fails   its false target = first true  ``a or not b``
====================  =============================  ===========================

A path "keeps" the tested value when the jump leaves it on the stack
(``JUMP_IF_TRUE_OR_POP``, or 3.12+'s ``COPY 1`` before the jump): that is how ``x = a
or b`` computes its value.
"""
import ast
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Dict, List, Optional, Set

from framescope.decompiler.frontend import versions
from framescope.decompiler.graph.cfg import Block
from framescope.decompiler.graph.copies import same_exit as copies_of_one_exit
from framescope.decompiler.graph.copies import same_handling, same_run
from framescope.decompiler.graph.rotation import keeps_chain_operand
from framescope.decompiler.graph.traversal import follow_jumps, reachable
from framescope.decompiler.simulate import marks
from framescope.decompiler.simulate import values as v
from framescope.decompiler.simulate.expressions import is_pinned, negate, negate_last
from framescope.decompiler.simulate.state import State
from framescope.decompiler.structure.try_exits import ends_like
from framescope.errors import DecompilationError

if TYPE_CHECKING:
    from framescope.decompiler.structure.context import StructureContext



#: Operations that only build new values from what they pop, reading no flag on them: a
#: block of these runs the same in a probe as in the walk, and changes nothing it did not push.
PURE = frozenset({
    "LOAD_CONST", "LOAD_COMMON_CONSTANT", "LOAD_ASSERTION_ERROR", "LOAD_FAST", "LOAD_NAME", "LOAD_GLOBAL",
    "LOAD_DEREF", "LOAD_CLOSURE", "PUSH_NULL", "LOAD_ATTR", "LOAD_METHOD", "BINARY_SUBSCR", "BINARY_SLICE", "BUILD_SLICE",
    "BINARY_OP", "UNARY_OP", "COMPARE_OP", "IS_OP", "CONTAINS_OP", "BUILD_TUPLE", "BUILD_LIST", "BUILD_SET",
    "BUILD_MAP", "BUILD_CONST_KEY_MAP", "BUILD_STRING", "FORMAT_VALUE", "CONVERT_VALUE", "CALL", "CALL_KW",
})


OTHER = {"true": "false", "false": "true"}


class Popped(v.Marker):
    """A kept copy of a tested value on the path that discards it (3.12+ ``COPY``/``POP_TOP``)."""


@dataclass(eq=False)
class Cond:
    """A (possibly compound) branch condition and where each outcome goes."""

    #: The condition as an expression.
    expr: ast.expr
    #: First block of the chain (its post-dominator is where the arms meet).
    head: Block
    true_block: Optional[Block]
    false_block: Optional[Block]
    #: Stack (and an empty statement list) for each arm.
    true_state: State
    false_state: State
    #: Whether the arm has the tested value left on top of its stack.
    true_kept: bool = False
    false_kept: bool = False
    #: The lone jump an arm went through to its block ("true"/"false" -> block), see `resolve_pops`.
    via: Dict[str, Block] = field(default_factory=dict)
    #: The test of the chain laid out last (None: ``head`` is the only test).
    last: Optional[Block] = None

    def negated(self) -> "Cond":
        via = {OTHER[side]: block for side, block in self.via.items()}
        return Cond(negate(self.expr), self.head, self.false_block, self.true_block, self.false_state,
                    self.true_state, self.false_kept, self.true_kept, via, self.last)

    def last_test(self) -> Block:
        return self.last or self.head


@dataclass(eq=False)
class Probe:
    """The condition of a test block, found by probing it from the test before it.

    Each link of an ``if``/``elif`` chain probes the rest of the chain, so walking the
    chain link by link would simulate it over and over (quadratic in its length).  The
    walk takes the probe's result instead, when it enters the block with the very
    values the probe started from (see `reusable`).
    """

    #: The stack the probe entered the block with (compared by identity).
    entry: List[Any]
    #: The stack once the block ran and its jump popped the tested value.
    stack: List[Any]
    #: The block's condition, with the tests it chains to folded in.
    cond: Cond

    def fits(self, stack: List[Any]) -> bool:
        return len(stack) == len(self.entry) and all(a is b for a, b in zip(stack, self.entry))


def reusable(block: Block, stack: List[Any]) -> bool:
    """Whether probing ``block`` on ``stack`` gives what the walk would find there later.

    Its operations must only build new values, from expressions (markers such as a
    chained store change as the walk goes on).
    """
    return (all(ins.op in PURE for ins in block.instrs[:-1])
            and all(isinstance(x, ast.expr) or x is v.NULL for x in stack))


def simple_condition(ctx: "StructureContext", block: Block, state: State) -> Cond:
    """The condition of ``block``'s final jump; its other instructions already ran on ``state``."""
    last = block.last
    op = last.op
    sim = ctx.sim
    if op in ("JUMP_IF_FALSE_OR_POP", "JUMP_IF_TRUE_OR_POP"):
        value = sim.expr(state.stack[-1]) if state.stack else None
        if value is None:
            raise ctx.error("condition on an empty stack", block)
        kept = State(state.stack)
        kept.stack[-1] = value
        state.pop()
        popped = State(state.stack)
        if op == "JUMP_IF_TRUE_OR_POP":
            return Cond(value, block, block.jump, block.fall, kept, popped, true_kept=True)
        return Cond(value, block, block.fall, block.jump, popped, kept, false_kept=True)
    raw = state.pop()
    value = sim.expr(raw)
    copied = bool(state.stack) and state.stack[-1] is raw
    if op in ("POP_JUMP_IF_NONE", "POP_JUMP_IF_NOT_NONE"):
        test = ast.Is() if op == "POP_JUMP_IF_NONE" else ast.IsNot()
        value = ast.Compare(left=value, ops=[test], comparators=[ast.Constant(value=None)])
    jump_state = State(state.stack)
    fall_state = State(state.stack)
    if copied:
        state.pop()
        jump_state.stack[-1] = value
        fall_state.stack[-1] = Popped()
    if op in ("POP_JUMP_IF_FALSE",):
        return Cond(value, block, block.fall, block.jump, fall_state, jump_state, false_kept=copied)
    return Cond(value, block, block.jump, block.fall, jump_state, fall_state, true_kept=copied)


def resolve_pops(cond: Cond) -> Cond:
    """Look through arms that only pop values and jump on (the clean-up of a chained comparison)."""
    for side in ("true", "false"):
        block = getattr(cond, side + "_block")
        arm = getattr(cond, side + "_state")
        if block is None or getattr(cond, side + "_kept"):
            continue
        if block.last.op == "JUMP":
            pops, dest = block.instrs[:-1], block.jump
        else:
            pops, dest = block.instrs, block.fall
        if dest is None or any(ins.op != "POP_TOP" for ins in pops) or len(arm.stack) < len(pops):
            continue
        if not pops and block.last.op != "JUMP":
            continue
        if any(isinstance(x, v.Iterator) for x in arm.stack[len(arm.stack) - len(pops):]):
            continue  # popping a ``for`` loop's iterator and jumping on is a ``break``
        if not pops:
            cond.via[side] = block
        setattr(cond, side + "_block", dest)
        setattr(cond, side + "_state", State(arm.stack[:len(arm.stack) - len(pops)]))
    return cond


def collect_condition(ctx: "StructureContext", block: Block, state: State, pops: bool = True,
                      consumed: Optional[Set[Block]] = None) -> Cond:
    """The condition of ``block``'s final jump, with the tests it chains to folded in.

    With ``pops``, an arm that only pops values and jumps on is looked through. The blocks of
    the tests folded in go into ``consumed``, given.
    """
    cond = simple_condition(ctx, block, state)
    if pops:
        cond = resolve_pops(cond)
    consumed = set() if consumed is None else consumed
    consumed.add(block)
    while True:
        merged = None
        for side in ("true", "false"):
            target = getattr(cond, side + "_block")
            if target is None or not is_test_block(ctx, target, consumed):
                continue
            arm_state = getattr(cond, side + "_state")
            if getattr(cond, side + "_kept"):
                continue
            probe = State(arm_state.stack)
            try:
                for ins in target.instrs[:-1]:
                    ctx.sim.step(ins, probe)
                    if probe.stmts:
                        break  # a statement: not a test of the chain (stop before simulating the rest)
            except DecompilationError:
                continue
            if probe.stmts:
                continue
            pushed = len(probe.stack) - len(arm_state.stack)
            test, passed = target, set()
            if pushed > 2 or (pushed == 2 and probe.stack[-1] is not probe.stack[-2]):
                # More than the tested value (and a kept copy): an operand holding a
                # conditional value of its own, or the start of a match statement.
                from framescope.decompiler.structure.operands import operand_test  # (it builds on this module)

                found = operand_test(ctx, target, probe, len(arm_state.stack))
                if found is not None:
                    test, probe, passed = found
                elif not chain_start(target, probe):
                    continue
            folded: Set[Block] = set()
            inner = collect_condition(ctx, test, probe, pops, folded)
            merged = fold(cond, side, inner)
            if merged is not None and (len(merged.true_state.stack) != len(inner.true_state.stack)
                                       or len(merged.false_state.stack) != len(inner.false_state.stack)):
                merged = None
            if merged is not None:
                consumed.add(target)
                consumed.update(passed)
                if isinstance(inner.expr, ast.Compare) and len(inner.expr.ops) > 1:
                    consumed.update(folded)  # a chained comparison's tests: its clean-ups come from them
                break
            if pops and test is target and reusable(target, arm_state.stack):
                ctx.probed[target] = Probe(list(arm_state.stack), probe.stack, inner)
        if merged is None:
            return cond
        cond = merged


def chain_start(block: Block, probe: State) -> bool:
    """Whether ``block`` starts a chained comparison (``a < x < b``) as a test: it compares the
    first two operands, keeping a copy of the middle one under the result
    for the next comparison; each arm drops the copy again on its way."""
    return keeps_chain_operand(block.instrs) and block.last.is_pop_jump() and len(probe.stack) >= 2 \
        and isinstance(probe.stack[-2], ast.expr)


def is_test_block(ctx: "StructureContext", block: Block, consumed) -> bool:
    if not block.last.is_cond_jump():
        return False
    if any(p not in consumed and not chain_clean_up(ctx, p, block, consumed) for p in block.preds):
        return False
    if any(p.handler != block.handler for p in block.preds):
        return False  # the test starts (or ends) a protected region: a statement of its own
    if block in ctx.back_edges:
        return False
    if any(b.handler != block.handler for b in consumed):
        return False  # a try statement starts between the two tests: ``if a:`` then ``try: if b:``
    return not tests_assert_false(block)


def chain_clean_up(ctx: "StructureContext", pred: Block, block: Block, consumed) -> bool:
    """Whether ``pred``, reached only from the tests in ``consumed``, is on the way of a
    chained comparison to the next test ``block``: the clean-up that pops the middle operand
    kept for a comparison that did not run (``a < x < b or c``), or the jump over it."""
    if any(p not in consumed for p in pred.preds):
        return False
    if pred.is_lone_jump() and pred.jump is block:
        return jumps_over_clean_up(ctx, pred)
    return pred.fall is block and pops_on(pred)


def jumps_over_clean_up(ctx: "StructureContext", block: Block) -> bool:
    """Whether ``block`` is a lone jump over the clean-up of a chained comparison laid out
    right after it (where the comparison that did not run is dropped)."""
    after = ctx.cfg.laid_out_after(block)
    return block.is_lone_jump() and after is not None and (pops_on(after) or chain_failure(after))


def chain_failure(block: Block) -> bool:
    """Whether ``block`` is where a chained comparison goes when a comparison before the last
    fails: it pops the middle operand first (3.12+ copies the code after into it)."""
    return block.instrs[0].op == "POP_TOP" and any(keeps_chain_operand(p.instrs) for p in block.preds)


def pops_on(block: Block) -> bool:
    """Whether ``block`` only pops values, then falls or jumps on."""
    body = block.before_jump()
    return bool(body) and all(ins.op == "POP_TOP" for ins in body) and not block.last.is_cond_jump()


def tests_assert_false(block: Block) -> bool:
    """Whether ``block`` is the test of ``assert False, msg`` that 3.8-3.9 keep (see
    `versions.ASSERT_FALSE_UNTESTED`): a constant, jumped on when true over the raise of
    ``AssertionError``. An assert is a statement of its own, never a test of an enclosing
    ``if`` (``if a and not False:`` would fold the constant)."""
    if versions.ASSERT_FALSE_UNTESTED or len(block.instrs) != 2 or block.fall is None:
        return False
    first, last, raised = block.instrs[0], block.last, block.fall.instrs[0]
    return first.op == "LOAD_CONST" and last.op == "POP_JUMP_IF_TRUE" and (
        raised.op == "LOAD_ASSERTION_ERROR"
        or (versions.ASSERT_LOADS_GLOBAL and raised.op == "LOAD_GLOBAL" and raised.arg == "AssertionError"))


def same_exit_after_pops(a: Optional[Block], a_state: State, b: Optional[Block]) -> bool:
    """Whether arm ``a`` goes where ``b`` goes: the same block, or pops then a copy of ``b``.

    3.12+ copies small exit blocks into their predecessors, so the clean-up of a
    chained comparison (pop the spare operand, jump on) can end in a copy of its target.
    """
    if a is b:
        return True
    if a is None or b is None:
        return False
    if versions.COPIES_EXITS and copies_of_one_exit(a, b):
        return True  # (before 3.10 two blocks alike are two statements the source wrote)
    if follow_jumps(a) is b or follow_jumps(b) is a:
        return True  # one jumps straight there, the other's clean-up through the loop's jump back
    if not versions.COPIES_EXITS:
        return False
    pops = 0
    while pops < len(a.instrs) and a.instrs[pops].op == "POP_TOP":
        pops += 1
    if not pops or pops > len(a_state.stack) or b.succs() or a.succs():
        return False
    return same_run(a.instrs[pops:], b.instrs) and same_handling(a, b)


def fold(outer: Cond, side: str, inner: Cond) -> Optional[Cond]:
    """Fold ``inner`` (reached on ``side`` of ``outer``) into one condition, if they share a target."""
    a, b = outer.expr, inner.expr
    if exit_between(outer.false_block if side == "true" else outer.true_block, outer, inner):
        return None
    shared = OTHER[side]  # the arm of ``outer`` that does not go on to ``inner``
    outer_block, outer_state, outer_kept = arm(outer, shared)
    op = ast.And() if side == "true" else ast.Or()
    for inner_side, negated in ((shared, False), (side, True)):
        inner_block, inner_state, inner_kept = arm(inner, inner_side)
        if not shares_exit(outer_block, outer_state, inner_block, inner, outer.via.get(shared)) \
                or separate_jumps(outer, shared, inner, inner_side):
            continue
        if negated and (inner_kept or outer_kept):
            continue
        if not negated and not same_keeping(outer_kept, inner_kept, inner_block, inner_state):
            continue
        cond = inner.negated() if negated else inner
        via = dict(cond.via)
        if shared in outer.via:
            via[shared] = outer.via[shared]
        expr = boolop_not(op, a, b) if negated else boolop(op, a, b)
        return rebuild(expr, outer, inner, cond.true_block, cond.true_state, cond.true_kept,
                       cond.false_block, cond.false_state, cond.false_kept, via)
    return None


def arm(cond: Cond, side: str):
    return getattr(cond, side + "_block"), getattr(cond, side + "_state"), getattr(cond, side + "_kept")


def separate_jumps(outer: Cond, outer_side: str, inner: Cond, inner_side: str) -> bool:
    """Whether two arms reach one block each through a lone jump of its own: two statements
    (``if a: continue`` then ``if b: continue``); the short-circuit jumps of ``a or b`` share one.
    3.12+ jumps back only from a jump of its own, one per test: no sign of a statement there,
    unless only ``outer``'s is such a jump and ``inner``'s a jump that a test jumps to (``if a:``
    ending the body, around ``if not b or c: continue``); but a short-circuit jump forward
    goes straight on (two jumps forward are ``if a: pass`` then ``elif b: pass``)."""
    a, b = outer.via.get(outer_side), inner.via.get(inner_side)
    if a is not None and b is None and not versions.FORWARD_CONDITIONAL_JUMPS:
        # A short-circuit test never falls into a jump: a test that does is ``if a: continue``
        # (or ``break``, or a ``pass`` arm) before ``if b:``.
        return a is jump_laid_out_after(outer.head)
    if a is None or b is None or a is b:
        return False
    if versions.FORWARD_CONDITIONAL_JUMPS:
        if a.jump.index > a.index and b.jump.index > b.index:
            return True
        return a is jump_laid_out_after(outer.head) and any(p.jump is b for p in b.preds)
    return True


def jump_laid_out_after(test: Block) -> Optional[Block]:
    """The block ``test`` falls into when it is a lone jump laid out right after it (a jump
    statement of the source's, or the ``pass`` arm's way past an ``else``), else None."""
    fall = test.fall
    if fall is not None and fall.index == test.index + 1 and fall.is_lone_jump():
        return fall
    return None


def passing_jump(cond: Cond, blocks: List[Block]) -> Optional[Block]:
    """The lone jump the last test of ``cond`` falls into, laid out right after it: the way
    past an ``else`` of an arm that is only ``pass`` (None where there is none, where each
    test has a jump of its own, see `jumps_per_test`, or where it jumps over the clean-up of
    a chained comparison, ``POP_TOP``, which no statement starts with)."""
    last = cond.last_test()
    if not last.last.is_cond_jump() or jumps_per_test(cond):
        return None
    fall = jump_laid_out_after(last)
    if fall is None or fall.index + 1 >= len(blocks) or blocks[fall.index + 1].instrs[0].op == "POP_TOP" \
            or moved_jump_back(cond, fall):
        return None
    return fall


def moved_jump_back(cond: Cond, fall: Block) -> bool:
    """Whether ``fall``, the jump after a test, is the test's own jump back to its loop that
    3.12+ moved out of the conditional jump (no conditional jump goes backward): such a jump
    is outside every exception-table range, a ``pass`` or ``continue`` jump is inside the
    test's."""
    return fall.handler is None and cond.head.handler is not None and fall.jump is not None \
        and fall.jump.index <= cond.head.index


def jump_past_leaving_arm(cond: Cond, blocks: List[Block], stop: Optional[Block]) -> Optional[Block]:
    """Where an ``if``/``else`` whose arm laid out second returns or raises goes on: the arm
    laid out first ends in a jump, placed right before the other arm, over it to the code
    after the statement (code the source wrote inside the first arm would follow it there
    instead). None when the arms are not laid out so."""
    t, f = cond.true_block, cond.false_block
    if t is None or f is None or t is f:
        return None
    first, second = (t, f) if t.index < f.index else (f, t)
    before = blocks[second.index - 1]
    after = before.jump if before.last.op == "JUMP" else None
    if after is None or after.index <= second.index or before.index < first.index:
        return None
    second_arm = reachable([second], stop=stop)
    if before not in reachable([first], stop=stop) or after in second_arm:
        return None
    if any(ends_in_copy(block, after) for block in second_arm):
        return None  # both go on to one exit, the second arm through a copy of it
    return after


def ends_in_copy(block: Block, exit: Block) -> bool:
    """Whether ``block`` ends with a copy of ``exit``, a block that ends the function (3.10+
    copies a short exit, as the end of a returned expression or the clean-up of an except
    clause before a return, into the ways there)."""
    return not exit.succs() and ends_like(block, exit.instrs)


def continue_jumped_to(cond: Cond, header: Block) -> bool:
    """Whether ``cond`` goes back to the loop at ``header`` through a lone jump that a test
    jumps to: a ``continue`` (3.12+ gives a test that ends the body a jump back of its own
    that the test falls into, never one shared by several)."""
    return any(via.jump is header and any(pred.jump is via for pred in via.preds) for via in cond.via.values())


def pass_arm_jump(cond: Cond, end: Optional[Block]) -> bool:
    """Whether the true arm of ``cond`` is only a forward jump to ``end``, where the arms meet,
    laid out right after the last test: a ``pass`` arm's way past the else arm (the negated
    test would jump there itself)."""
    jump = cond.via.get("true")
    return jump is not None and jump is jump_laid_out_after(cond.last_test()) and jump.jump is end \
        and end.index > jump.index


def jumps_per_test(cond: Cond) -> bool:
    """Whether the first test of a chain falls into a lone jump laid out before the chain's
    later tests: each test of ``if a and b:`` that ends a loop's body jumps back by a jump of
    its own (3.12+), where the jump of a ``continue`` or of a ``pass`` arm follows the last test."""
    fall = jump_laid_out_after(cond.head)
    return fall is not None and cond.last_test().index > fall.index


def shares_exit(outer_block: Optional[Block], outer_state: State, inner_block: Optional[Block], inner: Cond,
                outer_via: Optional[Block] = None) -> bool:
    """Whether the arm of ``outer`` and the arm of ``inner`` go one place, the way the two
    tests of an ``and``/``or`` do.

    Not when ``inner``'s arm is a jump back of its own laid out right after it (``if b:
    continue`` inside ``if a:``): the short-circuit jumps of ``a and b`` go straight on,
    unless ``outer``'s arm jumps to that very jump, maybe looked through as ``outer_via``
    (``if not a or b: continue``).
    """
    fall = jump_laid_out_after(inner.head)
    if (not versions.FORWARD_CONDITIONAL_JUMPS  # 3.12+ jumps back only that way: no sign of a statement
            and inner_block is not None and fall is not None and fall.jump.index <= inner.head.index
            and inner_block in (fall, follow_jumps(fall)) and fall not in (outer_block, outer_via)):
        return False  # a jump back to a loop's start: ``continue``
    return same_exit_after_pops(outer_block, outer_state, inner_block)


def exit_between(block: Optional[Block], outer: Cond, inner: Cond) -> bool:
    """Whether ``block``, where ``outer`` goes when it does not go on to ``inner``, is an exit
    laid out between the two tests: the source's guard clause (``if not a: return x`` then
    ``if b: ...``), whose ``return x`` the compiler copied to the end too, not ``a and b``
    (whose short-circuit jumps past the second test)."""
    return block is not None and not block.succs() and outer.head.index < block.index < inner.head.index


def same_keeping(outer_kept: bool, inner_kept: bool, block: Optional[Block], inner_state: State) -> bool:
    """Whether two arms reaching one block leave the same kind of value on the stack.

    3.14 threads the jump of ``a`` in ``a and b or c`` (and ``(a or b) and c``): the
    kept ``a`` fails the next test for sure, so its jump goes straight to where that
    test's arm pops the value and computes ``c``.  Where the block pops the value
    first, a kept copy and a popped one are the same.
    """
    if outer_kept == inner_kept:
        return True
    return (outer_kept and block is not None and block.instrs[0].op == "POP_TOP"
            and bool(inner_state.stack) and isinstance(inner_state.stack[-1], Popped))


def rebuild(expr, outer: Cond, inner: Cond, true_block, true_state, true_kept, false_block, false_state,
            false_kept, via: Dict[str, Block]) -> Cond:
    true_state, false_state = State(true_state.stack), State(false_state.stack)
    if true_kept:
        true_state.stack[-1] = expr
    if false_kept:
        false_state.stack[-1] = expr
    last = max(outer.last_test(), inner.last_test(), key=lambda block: block.index)
    return Cond(expr, outer.head, true_block, false_block, true_state, false_state, true_kept, false_kept, via,
                last)


def boolop(op: ast.boolop, left: ast.expr, right: ast.expr) -> ast.expr:
    """``left <op> right``, flattened, with ``a < b and b < c`` on one shared ``b`` fused to ``a < b < c``."""
    if isinstance(op, ast.And):
        last = left.values[-1] if isinstance(left, ast.BoolOp) and isinstance(left.op, ast.And) else left
        # The right side may already hold the tests after the chain (folded innermost first).
        rest = right.values[1:] if isinstance(right, ast.BoolOp) and isinstance(right.op, ast.And) else []
        first = right.values[0] if rest else right
        if isinstance(last, ast.Compare) and isinstance(first, ast.Compare) and first.left is last.comparators[-1]:
            fused = ast.Compare(left=last.left, ops=last.ops + first.ops,
                                comparators=last.comparators + first.comparators)
            values = ([fused] if last is left else left.values[:-1] + [fused]) + rest
            return values[0] if len(values) == 1 else ast.BoolOp(op=op, values=values)
    values = list(left.values) if isinstance(left, ast.BoolOp) and type(left.op) is type(op) else [left]
    more = list(right.values) if isinstance(right, ast.BoolOp) and type(right.op) is type(op) else [right]
    return ast.BoolOp(op=op, values=values + more)


def boolop_not(op: ast.boolop, left: ast.expr, right: ast.expr) -> ast.expr:
    """``left <op> not right``, with a pinned ``right`` kept as it is (see `negate_last`)."""
    if is_pinned(right):
        values = list(left.values) if isinstance(left, ast.BoolOp) and type(left.op) is type(op) else [left]
        return negate_last(op, values, right)
    return boolop(op, left, negate(right))


def is_builtin_check(test: ast.expr) -> bool:
    """Whether ``test`` is ``f is <builtin>``: 3.14's check before it inlines ``all``/``any``."""
    return (isinstance(test, ast.Compare) and len(test.ops) == 1 and isinstance(test.ops[0], ast.Is)
            and marks.marked(test.comparators[0], marks.BUILTIN))
