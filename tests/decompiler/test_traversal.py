"""The graph walks alone: reachable blocks and chains of lone jumps, on small graphs."""
from framescope.decompiler.graph.traversal import follow_jumps, jump_chain, predecessors, reachable


class Node:
    """A stand-in block: the walks read only these fields."""

    def __init__(self, name, ops=("NOP", "POP_TOP")):
        self.name = name
        self.instrs = [Op(op) for op in ops]
        self.jump = None
        self.fall = None
        self.preds = []
        self.catch = None

    @property
    def last(self):
        return self.instrs[-1]

    def succs(self):
        return [b for b in (self.fall, self.jump) if b is not None]

    def __repr__(self):
        return self.name


class Op:
    def __init__(self, op):
        self.op = op


def link(a, b, jump=False):
    if jump:
        a.jump = b
    else:
        a.fall = b
    b.preds.append(a)


def diamond_loop():
    # entry -> left, right; left, right -> join; join -> entry (back), out
    names = ["entry", "left", "right", "join", "out"]
    entry, left, right, join, out = (Node(n) for n in names)
    link(entry, left)
    link(entry, right, jump=True)
    link(left, join)
    link(right, join)
    link(join, entry, jump=True)
    link(join, out)
    return entry, left, right, join, out


def test_reachable_goes_round_loops_once():
    entry, left, right, join, out = diamond_loop()
    assert reachable([left]) == {entry, left, right, join, out}


def test_reachable_stops_at_stop_which_it_reaches():
    entry, left, right, join, out = diamond_loop()
    assert reachable([left], stop=join) == {left, join}


def test_reachable_never_enters_the_excluded_block_nor_leaves_the_region():
    entry, left, right, join, out = diamond_loop()
    assert reachable([left], exclude=entry) == {left, join, out}
    assert reachable([left], inside={left, join, entry}) == {left, join, entry}


def test_reachable_backwards_along_predecessors():
    entry, left, right, join, out = diamond_loop()
    # The natural loop of ``entry`` from its latch ``join``.
    assert reachable([join], predecessors, exclude=entry) | {entry} == {entry, left, right, join}


def test_jump_chain_follows_lone_jumps_to_the_block_that_does_more():
    start, hop1, hop2, work = Node("start", ["JUMP"]), Node("hop1", ["JUMP"]), Node("hop2", ["JUMP"]), Node("work")
    link(start, hop1, jump=True)
    link(hop1, hop2, jump=True)
    link(hop2, work, jump=True)
    assert jump_chain(start) == [start, hop1, hop2, work]
    assert follow_jumps(start) is work
    assert follow_jumps(work) is work
    assert follow_jumps(None) is None


def test_jump_chain_is_bounded():
    # A cycle of lone jumps (only machine-made code has one) ends after ``limit`` jumps.
    a, b = Node("a", ["JUMP"]), Node("b", ["JUMP"])
    link(a, b, jump=True)
    link(b, a, jump=True)
    assert len(jump_chain(a, limit=5)) == 6
    assert follow_jumps(a, limit=4) is a
