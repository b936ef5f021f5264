"""Pass 1 alone: raw bytecode of the running interpreter -> canonical instructions."""
from __future__ import annotations

from framescope.decompiler.frontend.opcodes import canonical_instructions


def _loads(code):
    return [(ins.op, ins.arg) for ins in canonical_instructions(code) if ins.op.startswith("LOAD_")]


def test_a_closure_tuple_loads_cells_on_every_version():
    # 3.13+ compile LOAD_CLOSURE to LOAD_FAST (fused into LOAD_FAST_LOAD_FAST for two cells);
    # pass 1 gives every version the one spelling, so the cell is never read as its value.
    def outer():
        k, j = 1, 2

        def inner(g):
            return g(lambda: k + j), k

        return inner

    loads = _loads(outer().__code__)
    assert ("LOAD_CLOSURE", "k") in loads and ("LOAD_CLOSURE", "j") in loads
    assert ("LOAD_DEREF", "k") in loads  # the value of k, returned beside the call
    assert ("LOAD_FAST", "k") not in loads and ("LOAD_FAST", "j") not in loads


def test_a_cell_argument_is_made_a_cell_before_its_cell_is_loaded():
    def outer(x):
        return lambda: x

    loads = _loads(outer.__code__)
    assert loads[0] == ("LOAD_CLOSURE", "x")
    assert ("LOAD_FAST", "x") not in loads
