"""The normalize pass alone: the compiler's loop layout undone on the graph."""
from framescope.decompiler.frontend.opcodes import canonical_instructions
from framescope.decompiler.graph.cfg import CFG
from framescope.decompiler.graph.normalize import normalize


def graph(source: str) -> CFG:
    code = compile(source, "<t>", "exec").co_consts[0]
    return CFG(canonical_instructions(code))


def back_edges(cfg: CFG):
    return [(block, succ) for block in cfg.blocks for succ in (block.fall, block.jump)
            if succ is not None and succ in cfg.dom and cfg.dom.dominates(succ, block)]


def test_a_while_loop_has_one_header_after_normalizing():
    # 3.8-3.11 rotate a while loop (its test copied to the end); afterwards one block tests
    # the condition, and every back edge goes to it.
    cfg = graph("def f(a):\n    while a:\n        a = a.next\n    return a\n")
    normalize(cfg)
    headers = {succ for _block, succ in back_edges(cfg)}
    assert len(headers) == 1
    (header,) = headers
    assert header.last.is_pop_jump()


def test_straight_code_is_left_alone():
    cfg = graph("def f(a):\n    a.x = 1\n    return a\n")
    before = [[ins.op for ins in block.instrs] for block in cfg.blocks]
    normalize(cfg)
    assert [[ins.op for ins in block.instrs] for block in cfg.blocks] == before
