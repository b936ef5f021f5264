"""Walks over the blocks of a control-flow graph: the one home of the graph's worklists.

Every pass that asks "which blocks can control reach from here?" or "where does this
chain of lone jumps lead?" asks it here, so that the bounds and the edges followed are
stated once.
"""
from typing import TYPE_CHECKING, Callable, Iterable, List, Optional, Set

if TYPE_CHECKING:  # pragma: no cover
    from framescope.decompiler.graph.cfg import Block

#: Lone jumps followed at most in a row (3.13+ keeps such blocks for line numbers; a longer
#: chain is a loop of jumps, which only machine-made code has).
MAX_JUMP_CHAIN = 20


def successors(block: "Block") -> List["Block"]:
    """The blocks control goes to from ``block`` on normal edges."""
    return block.succs()


def successors_and_handler(block: "Block") -> List["Block"]:
    """The blocks control goes to from ``block``, its exception handler included."""
    succs = block.succs()
    if block.catch is not None:
        succs.append(block.catch)
    return succs


def predecessors(block: "Block") -> List["Block"]:
    return block.preds


def reachable(starts: Iterable["Block"], edges: Callable[["Block"], Iterable["Block"]] = successors,
              stop: Optional["Block"] = None, exclude: Optional["Block"] = None,
              inside: Optional[Set["Block"]] = None) -> Set["Block"]:
    """The blocks reached from ``starts`` along ``edges``: not going on from ``stop`` (which
    is reached), never entering ``exclude`` nor leaving ``inside`` (when given)."""
    seen: Set["Block"] = set()
    work = list(starts)
    while work:
        block = work.pop()
        if block in seen or block is exclude or (inside is not None and block not in inside):
            continue
        seen.add(block)
        if block is not stop:
            work.extend(edges(block))
    return seen


def jump_chain(block: Optional["Block"], limit: int = MAX_JUMP_CHAIN) -> List["Block"]:
    """``block`` and the blocks it reaches through blocks that only jump (at most ``limit``
    of them), the last one doing more."""
    chain: List["Block"] = []
    while block is not None and len(chain) <= limit:
        chain.append(block)
        if len(block.instrs) != 1 or block.last.op != "JUMP":
            break
        block = block.jump
    return chain


def follow_jumps(block: Optional["Block"], limit: int = MAX_JUMP_CHAIN) -> Optional["Block"]:
    """Where ``block`` leads through blocks that only jump: the last of its `jump_chain`."""
    chain = jump_chain(block, limit)
    return chain[-1] if chain else None
