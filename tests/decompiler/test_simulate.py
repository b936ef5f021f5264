"""The simulate pass alone: canonical instructions run on symbols give expressions and statements."""
import ast

import pytest

from framescope import DecompilationError
from framescope.decompiler.emit.unparse import unparse
from framescope.decompiler.frontend import versions
from framescope.decompiler.frontend.instructions import Instr
from framescope.decompiler.frontend.opcodes import canonical_instructions
from framescope.decompiler.simulate.expressions import negate
from framescope.decompiler.simulate.simulator import Simulator
from framescope.decompiler.simulate.state import State
from framescope.decompiler.simulate.values import handler_entry_values


def run(source: str) -> State:
    """The state after simulating a one-block function's instructions (its return left out)."""
    code = compile(source, "<t>", "exec").co_consts[0]
    sim = Simulator(code, nested=lambda func, *rest: None)
    state = State()
    for ins in canonical_instructions(code):
        if ins.op == "RETURN_VALUE":
            break
        sim.step(ins, state)
    return state


def test_straight_line_code_becomes_statements():
    state = run("def f(a, b):\n    a.x = b[1] + 2\n    del a[b]\n    return None\n")
    text = unparse(ast.Module(body=state.stmts, type_ignores=[]))
    assert text == "a.x = b[1] + 2\ndel a[b]"


def test_an_expression_is_left_on_the_stack():
    state = run("def f(a, b):\n    return a * (b - 1)\n")
    assert not state.stmts and len(state.stack) == 1
    value = state.stack[0]
    assert isinstance(value, ast.BinOp) and isinstance(value.op, ast.Mult)
    assert isinstance(value.right, ast.BinOp) and isinstance(value.right.op, ast.Sub)


def test_an_unknown_operation_is_refused_with_its_offset():
    code = compile("def f():\n    pass\n", "<t>", "exec").co_consts[0]
    sim = Simulator(code, nested=lambda func, *rest: None)
    with pytest.raises(DecompilationError) as refused:
        sim.step(Instr("NOT_AN_OPERATION", offset=6, raw="NOT_AN_OPERATION"), State())
    err = refused.value
    assert (err.reason, err.code_name, err.offset, err.opname) == ("unsupported instruction", "f", 6, "NOT_AN_OPERATION")


def test_negation_spells_the_fewest_nots():
    x, y = ast.Name(id="x", ctx=ast.Load()), ast.Name(id="y", ctx=ast.Load())
    assert negate(ast.UnaryOp(op=ast.Not(), operand=x)) is x
    flipped = negate(ast.Compare(left=x, ops=[ast.Is()], comparators=[ast.Constant(value=None)]))
    assert isinstance(flipped.ops[0], ast.IsNot)
    either = negate(ast.BoolOp(op=ast.Or(), values=[ast.UnaryOp(op=ast.Not(), operand=x), y]))
    assert isinstance(either, ast.BoolOp) and isinstance(either.op, ast.And)  # not (not x or y) -> x and not y
    assert either.values[0] is x and isinstance(either.values[1], ast.UnaryOp)


def test_a_handler_is_entered_with_what_the_interpreter_pushes():
    values = handler_entry_values(lasti=True)
    assert len(values) == (2 if versions.EXCEPTION_TABLE else 6)


def test_no_expression_deeper_than_the_bound_is_built():
    # -(-(...x)): each UNARY_NEGATIVE pushes one level more. The pass stops within
    # CHECK_EVERY pushes of MAX_DEPTH, long before the 5,000 levels asked for.
    import pytest

    from framescope.decompiler.simulate.state import CHECK_EVERY, MAX_DEPTH, deeper_than
    from framescope.errors import DecompilationError

    sim = Simulator(compile("def f(x): return x", "<t>", "exec").co_consts[0], nested=lambda *a: None)
    state = State()
    state.push(ast.Name(id="x", ctx=ast.Load()))
    negate_one = next(i for i in canonical_instructions(compile("-x", "<t>", "eval"))
                      if i.op.startswith("UNARY"))
    levels = 1
    with pytest.raises(DecompilationError, match="too deeply nested"):
        for levels in range(2, 5001):
            sim.step(negate_one, state)
    assert MAX_DEPTH < levels <= MAX_DEPTH + CHECK_EVERY
    # Its levels: the negations, the name and the name's context.
    assert deeper_than(state.stack[-1], levels) and not deeper_than(state.stack[-1], levels + 1)
