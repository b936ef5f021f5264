"""Pass 2: canonical instructions → basic blocks, with dominators and loops.

A block starts at the function entry, at every jump target and exception-handler
target, after every jump or terminator, and wherever the covering exception handler
changes, so that one handler covers a whole block.
"""
from dataclasses import dataclass, field
from typing import Callable, Dict, Hashable, List, Optional, Set, Tuple

from framescope.decompiler.frontend.instructions import JUMPS, Handler, Instr
from framescope.decompiler.graph.traversal import predecessors, reachable, successors_and_handler


@dataclass(eq=False)
class Block:
    """A maximal straight-line run of instructions."""

    #: Position in `CFG.blocks` (layout order of the original bytecode).
    index: int
    #: The instructions, in order; the last one decides where control goes next.
    instrs: List[Instr]
    #: Block reached by falling off the end, if control can fall through.
    fall: Optional["Block"] = None
    #: Block reached through the last instruction's jump target, if any.
    jump: Optional["Block"] = None
    #: Exception handler covering the block's instructions.
    handler: Optional[Handler] = None
    #: First block of that handler.
    catch: Optional["Block"] = None
    #: Blocks that reach this one by fall-through or jump (not through exceptions).
    preds: List["Block"] = field(default_factory=list)

    @property
    def start(self) -> int:
        return self.instrs[0].offset

    @property
    def last(self) -> Instr:
        return self.instrs[-1]

    def succs(self) -> List["Block"]:
        return [b for b in (self.fall, self.jump) if b is not None]

    def is_lone_jump(self) -> bool:
        """The block is one unconditional jump and nothing else."""
        return len(self.instrs) == 1 and self.last.op == "JUMP"

    def before_jump(self) -> List[Instr]:
        """The instructions but a final plain jump, which only says where the block goes on."""
        return self.instrs[:-1] if self.last.op == "JUMP" else self.instrs

    def __post_init__(self) -> None:
        # Blocks are compared by identity but hashed by where they start, so that sets of
        # blocks iterate in the same order in every run: the output must not depend on
        # memory addresses.  (A block's start never changes; its index does.)
        self._hash = self.instrs[0].offset if self.instrs else -1

    def __hash__(self) -> int:
        return self._hash

    def __repr__(self) -> str:
        return "<Block %d @%d>" % (self.index, self.start)


class CFG:
    """Basic blocks of one code object, in bytecode layout order."""

    def __init__(self, instrs: List[Instr]) -> None:
        self.instrs = instrs
        self.blocks: List[Block] = []
        self.by_offset: Dict[int, Block] = {}
        self._split()
        self._link()
        self.entry = self.blocks[0]
        self.dom = dominators(self.entry, self.blocks)
        #: Blocks that repeat a ``finally`` body on a normal exit → that finally's handler block.
        self.finally_copies: Dict[Block, Block] = {}
        #: The same blocks → where the normal path goes on after the copy.
        self.finally_after: Dict[Block, Optional[Block]] = {}
        #: 3.8: the copies that ``CALL_FINALLY`` ran (a return, break or continue leaving the try
        #: statement), not the ``BEGIN_FINALLY`` at the end of its body.
        self.called_finally: Set[Block] = set()
        #: Tests of 3.10+ rotated ``while`` loops whose copy was replaced by a jump back → the loop's exit.
        self.loop_tests: Dict[Block, Block] = {}

    def _split(self) -> None:
        starts: Set[int] = {0}
        for i, ins in enumerate(self.instrs):
            if ins.target is not None:
                starts.add(ins.target)
            if ins.handler is not None:
                starts.add(ins.handler.target)
            if ins.op == "FOR_ITER":  # a loop header, even when its body never loops back
                starts.add(ins.offset)
            if ins.op in JUMPS or ins.is_final():
                if i + 1 < len(self.instrs):
                    starts.add(self.instrs[i + 1].offset)
            if i and self.instrs[i - 1].handler != ins.handler:
                starts.add(ins.offset)
        current: List[Instr] = []
        for i, ins in enumerate(self.instrs):
            first_of_offset = i == 0 or self.instrs[i - 1].offset != ins.offset
            if current and first_of_offset and ins.offset in starts:
                self._add(current)
                current = []
            current.append(ins)
        if current:
            self._add(current)

    def _add(self, instrs: List[Instr]) -> None:
        block = Block(len(self.blocks), instrs, handler=instrs[0].handler)
        self.blocks.append(block)
        self.by_offset[block.start] = block

    def _link(self) -> None:
        for i, block in enumerate(self.blocks):
            last = block.last
            if not last.is_final() and i + 1 < len(self.blocks):
                block.fall = self.blocks[i + 1]
            if last.target is not None and last.op not in ("SETUP_FINALLY", "SETUP_WITH", "SETUP_ASYNC_WITH"):
                block.jump = self.by_offset.get(last.target)
            if block.handler is not None:
                block.catch = self.by_offset[block.handler.target]
            for succ in block.succs():
                if block not in succ.preds:
                    succ.preds.append(block)

    def split(self, block: Block, at: int) -> Block:
        """Cut ``block`` before its instruction ``at``; return the new second half."""
        tail = Block(0, block.instrs[at:], fall=block.fall, jump=block.jump, handler=block.handler,
                     catch=block.catch)
        block.instrs = block.instrs[:at]
        block.fall, block.jump = tail, None
        for succ in tail.succs():
            succ.preds = [tail if p is block else p for p in succ.preds]
        tail.preds = [block]
        self.blocks.insert(self.blocks.index(block) + 1, tail)
        self.renumber()
        return tail

    def laid_out_after(self, block: Block) -> Optional[Block]:
        """The block laid out right after ``block`` (None at the end), whether or not it falls there."""
        return self.blocks[block.index + 1] if block.index + 1 < len(self.blocks) else None

    def renumber(self) -> None:
        for i, block in enumerate(self.blocks):
            block.index = i
        self.by_offset = {}
        for block in self.blocks:
            self.by_offset.setdefault(block.start, block)
        self.entry = self.blocks[0]
        self.dom = dominators(self.entry, self.blocks)


class DominatorTree:
    """Who dominates whom: the immediate-dominator tree, numbered for constant-time queries."""

    def __init__(self, root: Hashable, idom: Dict[Hashable, Hashable]) -> None:
        #: Each node reachable from the root → its immediate dominator (the root → itself).
        self.idom = idom
        children: Dict[Hashable, List[Hashable]] = {}
        for node, parent in idom.items():
            if node is not root:
                children.setdefault(parent, []).append(node)
        #: Node → (first, last) preorder numbers of its subtree; a dominates b when b's first
        #: number lies within a's range.
        self.span: Dict[Hashable, Tuple[int, int]] = {}
        counter = 0
        stack: List[Tuple[Hashable, bool]] = [(root, False)]
        first: Dict[Hashable, int] = {}
        while stack:
            node, done = stack.pop()
            if done:
                self.span[node] = (first[node], counter - 1)
                continue
            first[node] = counter
            counter += 1
            stack.append((node, True))
            stack.extend((child, False) for child in reversed(children.get(node, ())))

    def __contains__(self, node: Hashable) -> bool:
        """Whether ``node`` is reachable from the root."""
        return node in self.span

    def dominates(self, a: Hashable, b: Hashable) -> bool:
        """Every path from the root to ``b`` goes through ``a`` (a node dominates itself)."""
        if a not in self.span or b not in self.span:
            return False
        low, high = self.span[a]
        return low <= self.span[b][0] <= high

    def chain(self, node: Hashable) -> List[Hashable]:
        """The dominators of ``node``, from itself up to the root ([] when unreachable)."""
        if node not in self.idom:
            return []
        found = [node]
        while self.idom[found[-1]] is not found[-1]:
            found.append(self.idom[found[-1]])
        return found


def immediate_dominators(root: Hashable, succs: Callable[[Hashable], List[Hashable]],
                         preds: Callable[[Hashable], List[Hashable]]) -> Dict[Hashable, Hashable]:
    """Immediate dominators of the nodes reachable from ``root`` (Cooper, Harvey and Kennedy's
    iteration over reverse postorder: near-linear, where dominator sets are quadratic)."""
    order = postorder(root, succs)
    number = {node: i for i, node in enumerate(order)}
    order.reverse()
    idom: Dict[Hashable, Hashable] = {root: root}
    changed = True
    while changed:
        changed = False
        for node in order[1:]:
            best = None
            for pred in preds(node):
                if pred in idom:
                    best = pred if best is None else common_dominator(pred, best, idom, number)
            if best is not None and idom.get(node) is not best:
                idom[node] = best
                changed = True
    return idom


def common_dominator(a: Hashable, b: Hashable, idom: Dict[Hashable, Hashable], number: Dict[Hashable, int]) -> Hashable:
    while a is not b:
        while number[a] < number[b]:
            a = idom[a]
        while number[b] < number[a]:
            b = idom[b]
    return a


def postorder(root: Hashable, succs: Callable[[Hashable], List[Hashable]]) -> List[Hashable]:
    seen: Set[int] = {id(root)}
    order: List[Hashable] = []
    stack = [(root, iter(succs(root)))]
    while stack:
        node, it = stack[-1]
        for succ in it:
            if id(succ) not in seen:
                seen.add(id(succ))
                stack.append((succ, iter(succs(succ))))
                break
        else:
            stack.pop()
            order.append(node)
    return order


def predecessors_and_range(blocks: List[Block]) -> Callable[[Block], List[Block]]:
    """A block's predecessors over normal and exception edges: a handler's are also the
    blocks of the range it protects."""
    protected: Dict[Block, List[Block]] = {}
    for block in blocks:
        if block.catch is not None:
            protected.setdefault(block.catch, []).append(block)
    return lambda b: b.preds + protected.get(b, [])


def dominators(entry: Block, blocks: List[Block]) -> DominatorTree:
    """Dominance over normal and exception edges (a handler is dominated by its range)."""
    idom = immediate_dominators(entry, successors_and_handler, predecessors_and_range(blocks))
    return DominatorTree(entry, idom)


def natural_loop(header: Block, latches: List[Block], blocks: List[Block]) -> Set[Block]:
    """The blocks of the loop ``header`` heads: those that reach a latch without passing it.

    Exception edges count, as they do for dominance: a try statement in the loop whose
    body only leaves by ``return`` (a ``for`` loop then ``return``) gets back to the latch
    through its handler alone, and its body is in the loop all the same.
    """
    return reachable(latches, predecessors_and_range(blocks), exclude=header) | {header}


def postdominators(cfg: CFG) -> Dict[Block, Optional[Block]]:
    """Immediate post-dominator of each block over normal edges (None: the function's exit)."""
    blocks = cfg.blocks
    # A loop that never ends (``while True`` left only by return or raise inside a nested
    # statement) never reaches the exit: its jumps back count as leaving too, so that
    # the branches inside it still have the place where they meet.
    reaches = reachable([b for b in blocks if not b.succs()], predecessors)
    endless = {b for b in blocks if b not in reaches and any(s.index <= b.index for s in b.succs())}
    exit_node = Exit()
    leaving = [b for b in reversed(blocks) if not b.succs() or b in endless]

    def onward(node: Hashable) -> List[Hashable]:  # successors, with the leaving blocks' cut
        return [exit_node] if node in endless or not node.succs() else node.succs()

    def backward(node: Hashable) -> List[Hashable]:
        if node is exit_node:
            return leaving
        return [p for p in node.preds if p not in endless]

    idom = immediate_dominators(exit_node, backward, onward)
    return {block: (None if idom.get(block, exit_node) is exit_node else idom[block]) for block in blocks}


class Exit:
    """The function's exit, after every block that returns, raises or loops forever."""
