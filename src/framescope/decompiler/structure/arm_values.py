"""The value both arms of a branch compute: ``a or b``, ``a and b``, ``x if c else y``.

A branch whose arms only push one value each is part of an expression. Since 3.11 the
compiler also copies a short exit (``return``, the rest of a call or tuple) into each arm of
the conditional expression before it: then the arms end alike, and the test belongs inside
the one statement or expression they repeat.
"""
import ast
from typing import TYPE_CHECKING, Dict, List, Optional

from framescope.decompiler.graph.cfg import Block
from framescope.decompiler.graph.copies import same_run
from framescope.decompiler.simulate import marks
from framescope.decompiler.simulate import values as v
from framescope.decompiler.simulate.expressions import negate
from framescope.decompiler.simulate.sametree import same_tree
from framescope.decompiler.simulate.state import State
from framescope.decompiler.structure.arms import laid_out_first, merge_difference, uses_earlier
from framescope.decompiler.structure.conditions import Cond, boolop
from framescope.errors import DecompilationError

if TYPE_CHECKING:  # pragma: no cover
    from framescope.decompiler.structure.context import StructureContext


class ArmValues:
    """Reads the values the arms of branches push, for the walker."""

    def __init__(self, ctx: "StructureContext") -> None:
        self.ctx = ctx

    def arms_value(self, cond: Cond, state: State) -> bool:
        """When both arms only computed one value (a conditional or boolean expression): push
        it and say so."""
        true_state, false_state = cond.true_state, cond.false_state
        base = len(state.stack)
        depth = len(true_state.stack)
        if not (not true_state.stmts and not false_state.stmts
                and depth == len(false_state.stack) and depth >= 1
                and all(a is b for a, b in zip(true_state.stack[:-1], false_state.stack[:-1]))
                and (depth == base + 1 or true_state.stack[-1] is not false_state.stack[-1])):
            return False
        true_value, false_value = true_state.stack[-1], false_state.stack[-1]
        value = None
        if depth < base + 1 and uses_earlier(true_value, false_value, state.stack[depth - 1:]):
            # The arms used values from under the test (3.11+ copied the rest of the
            # expression into both): the test sits inside that expression.
            value = merge_difference(true_value, false_value, lambda a, b: self.value_join(cond, a, b))
        state.stack[:] = true_state.stack[:-1]
        state.stack.append(value or self.value_join(cond, true_value, false_value))
        return True

    def shared_exit(self, cond: Cond, base: int):
        """A conditional value whose arms each end in a copy of the code that uses it.

        3.11+ copies a short exit (``BUILD_TUPLE; RETURN_VALUE``) into the arms of the
        conditional expression before it, so ``return a, (b if c else d)`` has two
        returns; ``a``, on the stack before the test, shows that one expression holds
        both arms.  Returns (block, index where its copy of the exit starts, the two
        values), or None.
        """
        t, f = cond.true_block, cond.false_block
        if base == 0 or t is None or f is None or t is f or t.succs() or f.succs() or t.handler != f.handler:
            return None
        if t.last.op not in ("RETURN_VALUE", "RAISE_VARARGS") or \
                not all(isinstance(x, (ast.expr, v.Null)) for x in cond.true_state.stack[:base]):
            return None
        true_splits, false_splits = self.value_splits(t, cond.true_state, base), self.value_splits(f, cond.false_state, base)
        k, found = 1, None
        while k <= min(len(t.instrs), len(f.instrs)) and same_run(t.instrs[-k:], f.instrs[-k:]):
            i, j = len(t.instrs) - k, len(f.instrs) - k
            if i in true_splits and j in false_splits:
                true_stack, false_stack = true_splits[i], false_splits[j]
                if all(a is b for a, b in zip(true_stack[:-1], false_stack[:-1])):
                    # The longest copy: ``f'{a if c else b}'`` copies the formatting too.
                    found = t, i, true_stack[-1], false_stack[-1]
            k += 1
        return found

    def value_splits(self, block: Block, arm: State, base: int) -> Dict[int, list]:
        """Stacks of ``block`` at each index where it pushed one value on ``base`` and made no statement."""
        probe = State(arm.stack)
        found = {0: list(probe.stack)} if len(probe.stack) == base + 1 else {}
        try:
            for index, ins in enumerate(block.instrs[:-1]):
                self.ctx.sim.step(ins, probe)
                if probe.stmts or len(probe.stack) < base:
                    break
                if len(probe.stack) == base + 1:
                    found[index + 1] = list(probe.stack)
        except DecompilationError:
            pass
        return found

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
        if marks.marked(body[0], marks.RETURN_COPY) or marks.marked(orelse[0], marks.RETURN_COPY):
            return self.value_join(cond, true_value, false_value)
        return None

    def merged_arms(self, cond: Cond, body: List[ast.stmt], orelse: List[ast.stmt],
                    below: list) -> Optional[List[ast.stmt]]:
        """One statement with the test inside it, whose end (3.11+) the compiler copied into both arms.

        ``below`` is the stack under the test: when both arms' first statements use a
        value computed before the test, the test sits inside that statement
        (``return a, (b if c else d)``, ``f(b if c else d)`` at the end of a function).
        """
        if not body or len(body) != len(orelse) or type(body[0]) is not type(orelse[0]):
            return None
        if not all(same_tree(a, b) for a, b in zip(body[1:], orelse[1:])):
            return None
        if not uses_earlier(body[0], orelse[0], below):
            return None
        first = merge_difference(body[0], orelse[0], lambda a, b: self.value_join(cond, a, b))
        return None if first is None else [first] + body[1:]

    def value_join(self, cond: Cond, true_value, false_value) -> ast.expr:
        """The single value two arms push: ``a or b``, ``a and b`` or ``x if c else y``."""
        sim = self.ctx.sim
        if cond.true_kept and true_value is cond.expr:
            return boolop(ast.Or(), cond.expr, sim.expr(false_value))
        if cond.false_kept and false_value is cond.expr:
            return boolop(ast.And(), cond.expr, sim.expr(true_value))
        if laid_out_first(cond.false_block, cond.true_block):
            # The value the compiler placed first is the one the source wrote first.
            return ast.IfExp(test=negate(cond.expr), body=sim.expr(false_value), orelse=sim.expr(true_value))
        return ast.IfExp(test=cond.expr, body=sim.expr(true_value), orelse=sim.expr(false_value))
