"""Tests whose operand holds a conditional value of its own: ``if a or g(x or ()):``.

The operand of the second test starts with its own branch (``x or ()``), whose arms meet
again before the test's jump. Folding the two tests into one condition needs that value
first: its branch is read here, its arms run on a probe, and the test is the block where
they meet. Arms that make statements or branch again are not such a value.
"""
from typing import TYPE_CHECKING, Optional, Set, Tuple

from framescope.decompiler.graph.cfg import Block
from framescope.decompiler.simulate.state import State
from framescope.decompiler.structure.arm_values import ArmValues
from framescope.decompiler.structure.conditions import Cond, simple_condition
from framescope.errors import DecompilationError

if TYPE_CHECKING:  # pragma: no cover
    from framescope.decompiler.structure.context import StructureContext

#: Conditional values nested in one operand that are read before giving up.
MAX_VALUES = 4


def operand_test(ctx: "StructureContext", block: Block, probe: State,
                 base: int) -> Optional[Tuple[Block, State, Set[Block]]]:
    """When ``block`` (its instructions but the jump already run on ``probe``) computes the
    start of a test's operand and its jump is a conditional value inside that operand:
    (the block that ends in the test, the state once its other instructions ran, the blocks
    on the way there). ``base`` is the depth of the stack before the operand; the test
    must push one value on it. None otherwise."""
    passed: Set[Block] = set()
    for _ in range(MAX_VALUES):
        met = met_value(ctx, block, probe, passed)
        if met is None:
            return None
        block, probe = met
        passed.add(block)
        try:
            for ins in block.instrs[:-1]:
                ctx.sim.step(ins, probe)
        except DecompilationError:
            return None
        if probe.stmts or not block.last.is_cond_jump() or len(probe.stack) < base + 1:
            return None
        if len(probe.stack) == base + 1:
            return block, probe, passed
    return None


def met_value(ctx: "StructureContext", block: Block, probe: State,
              passed: Set[Block]) -> Optional[Tuple[Block, State]]:
    """The block where the arms of the conditional value ending ``block`` meet, and the
    state there with the value on top; None unless each arm is straight code into it."""
    try:
        cond = simple_condition(ctx, block, State(probe.stack))
    except DecompilationError:
        return None
    met = run_arms(ctx, cond, block)
    if met is None:
        return None
    join, true_state, false_state = met
    depth = len(true_state.stack)
    if depth != len(false_state.stack) or not depth \
            or not all(a is b for a, b in zip(true_state.stack[:-1], false_state.stack[:-1])):
        return None
    passed.update(b for b in (block, cond.true_block, cond.false_block) if b is not join)
    if any(pred not in passed for pred in join.preds):
        return None  # other code goes there too: a statement, not part of one value
    value = ArmValues(ctx).value_join(cond, true_state.stack[-1], false_state.stack[-1])
    return join, State(true_state.stack[:-1] + [value])


def value_arms_meet(ctx: "StructureContext", cond: Cond, join: Optional[Block]) -> bool:
    """Whether both arms of ``cond`` are straight code that pushes one value each and goes
    to ``join``: a conditional value, even where ``join`` lies outside the try or with
    statement around the test (``with m: return x if c else y`` meets at the exit's
    clean-up, which the statement does not cover)."""
    met = run_arms(ctx, cond, cond.last_test()) if join is not None else None
    if met is None or met[0] is not join:
        return False
    _, true_state, false_state = met
    return len(true_state.stack) == len(false_state.stack) == len(cond.true_state.stack) + (0 if cond.true_kept else 1)


def run_arms(ctx: "StructureContext", cond: Cond, test: Block) -> Optional[Tuple[Block, State, State]]:
    """Where both arms of ``cond`` (tested at the end of ``test``) go when each is straight
    code (see `run_arm`) into one block, and each arm's state there; None otherwise."""
    true_arm = run_arm(ctx, cond.true_block, cond.true_state, cond.true_kept, test)
    false_arm = run_arm(ctx, cond.false_block, cond.false_state, cond.false_kept, test)
    if true_arm is None or false_arm is None or true_arm[0] is not false_arm[0]:
        return None
    return true_arm[0], true_arm[1], false_arm[1]


def run_arm(ctx: "StructureContext", target: Optional[Block], state: State, kept: bool,
            test: Block) -> Optional[Tuple[Block, State]]:
    """Where an arm of the conditional value tested at the end of ``test`` goes, and its
    state there: the kept value's arm goes straight on; the other runs one straight block
    (reached from the test alone, in its protected region) that leaves its value."""
    if target is None:
        return None
    if kept and not drops_spare_operand(target, test):
        return target, State(state.stack)
    if len(target.preds) != 1 or target.preds[0] is not test or target.last.is_cond_jump() \
            or target.handler != test.handler:
        return None
    probe = State(state.stack)
    body = target.before_jump()
    try:
        for ins in body:
            ctx.sim.step(ins, probe)
    except DecompilationError:
        return None
    after = target.jump if target.last.op == "JUMP" else target.fall
    return None if probe.stmts or after is None else (after, probe)


def drops_spare_operand(block: Block, test: Block) -> bool:
    """Whether ``block``, reached from ``test`` alone, only drops the value under the top and
    goes on: where a chained comparison that failed early (``a <= x <= b``) keeps its result
    and pops the middle operand it had copied for the next comparison."""
    return [(ins.op, ins.arg) for ins in block.before_jump()] == [("SWAP", 2), ("POP_TOP", None)] \
        and block.preds == [test] and block.handler == test.handler
