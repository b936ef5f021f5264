"""The control-flow graph pass alone: blocks, dominators and post-dominators."""
from framescope.decompiler.graph.cfg import CFG, immediate_dominators, postdominators
from framescope.decompiler.frontend.opcodes import canonical_instructions


def graph_of(source: str) -> CFG:
    code = compile(source, "<t>", "exec").co_consts[0]
    return CFG(canonical_instructions(code))


def test_immediate_dominators_of_a_diamond_with_a_loop():
    # 0 -> 1, 2; 1 -> 3; 2 -> 3; 3 -> 4, 0 (back); 4 -> end
    succs = {0: [1, 2], 1: [3], 2: [3], 3: [4, 0], 4: []}
    preds = {n: [m for m in succs if n in succs[m]] for n in succs}
    assert immediate_dominators(0, succs.__getitem__, preds.__getitem__) == {0: 0, 1: 0, 2: 0, 3: 0, 4: 3}


def test_immediate_post_dominators_are_dominators_of_the_reversed_graph():
    succs = {0: [1, 2], 1: [3], 2: [3], 3: [4, 0], 4: []}
    preds = {n: [m for m in succs if n in succs[m]] for n in succs}
    # Reversed, from the exit block 4: both arms meet again at 3, which 4 follows.
    assert immediate_dominators(4, preds.__getitem__, succs.__getitem__) == {4: 4, 3: 4, 1: 3, 2: 3, 0: 3}


def test_the_entry_dominates_every_block_and_each_block_itself():
    cfg = graph_of("def f(a):\n    for x in a:\n        if x:\n            a = 1\n        else:\n            a = 2\n    return a\n")
    entry = cfg.blocks[0]
    for block in cfg.blocks:
        if block in cfg.dom:
            assert cfg.dom.dominates(entry, block) and cfg.dom.dominates(block, block)
            assert cfg.dom.chain(block)[0] is block and cfg.dom.chain(block)[-1] is entry
            assert all(cfg.dom.dominates(d, block) for d in cfg.dom.chain(block))


def test_every_block_has_a_post_dominator_or_the_exit():
    cfg = graph_of("def f(a):\n    while True:\n        if a():\n            a = 1\n        else:\n            a = 2\n")
    ipdom = postdominators(cfg)
    assert set(ipdom) == set(cfg.blocks)
    assert all(after is None or after in cfg.blocks for after in ipdom.values())
