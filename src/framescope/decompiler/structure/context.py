"""What the parts of statement recovery share while they build one code object.

`statements.Structurer` walks the blocks; `loops.LoopBuilder`, `protected.ProtectedBuilder`
and `matches.MatchBuilder` build the statements it hands them. They share nothing but
this context (the pass's inputs, the facts derived from them once, and the stacks of the
constructs being built) and the walker itself.
"""
from types import CodeType
from typing import TYPE_CHECKING, Dict, List, Optional

from framescope.decompiler.graph.cfg import CFG, Block, postdominators
from framescope.decompiler.graph.handlers import HandlerMap
from framescope.decompiler.graph.normalize import dead_jump_back
from framescope.decompiler.simulate.simulator import Simulator
from framescope.errors import DecompilationError

if TYPE_CHECKING:  # pragma: no cover
    from framescope.decompiler.structure.conditions import Probe
    from framescope.decompiler.structure.loops import Loop
    from framescope.decompiler.structure.protected import Region


class StructureContext:
    """The inputs and shared state of statement recovery for one code object."""

    def __init__(self, code: CodeType, cfg: CFG, sim: Simulator) -> None:
        #: The code object being decompiled (its name goes into errors).
        self.code = code
        #: Pass 2's control-flow graph of ``code``.
        self.cfg = cfg
        #: Runs straight-line instructions on a walk state.
        self.sim = sim
        #: Innermost last: the loops being built.
        self.loops: List["Loop"] = []
        #: Innermost last: protected regions (try and with bodies) being built.
        self.regions: List["Region"] = []
        #: Which handler protects which block.
        self.hmap = HandlerMap(cfg)
        #: Blocks to be entered part-way: block → index of the first instruction to run.
        self.resume: Dict[Block, int] = {}
        #: Test blocks already probed from the test before them (`conditions.Probe`).
        self.probed: Dict[Block, "Probe"] = {}
        #: For the try statements whose clauses are being built: where their body goes on.
        self.after_try: List[Optional[Block]] = []
        #: For the except clauses being built: the stack depth once a clause released its exception.
        self.clause_depths: List[int] = []
        #: Immediate post-dominators of the blocks.
        self.ipdom = postdominators(cfg)
        #: Loop headers → the blocks that jump back to them.
        self.back_edges = back_edges(cfg)

    def error(self, reason: str, block: Optional[Block] = None) -> DecompilationError:
        """A refusal to decompile, at ``block``'s last instruction when given."""
        ins = block.last if block is not None else None
        return DecompilationError(reason, code_name=self.code.co_name,
                                  offset=ins.offset if ins else None, opname=(ins.raw or ins.op) if ins else None)


def back_edges(cfg: CFG) -> Dict[Block, List[Block]]:
    """Each loop header with the blocks that jump back to it."""
    edges: Dict[Block, List[Block]] = {}
    for block in cfg.blocks:
        for succ in block.succs():
            if cfg.dom.dominates(succ, block):
                edges.setdefault(succ, []).append(block)
        header = dead_jump_back(cfg, block)
        if header is not None:  # 3.8: the loop's jump back follows the handler, unreached
            edges.setdefault(header, []).append(block)
    for block in cfg.blocks:
        if block.instrs[0].op == "FOR_ITER" and len(block.instrs) == 1 and block not in edges:
            # A ``for`` whose body always returns or breaks never loops back; it is a loop all the same.
            edges[block] = []
    return edges
