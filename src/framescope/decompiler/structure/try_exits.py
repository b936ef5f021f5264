"""The code on the ways out of a try statement, read from its instructions.

A clause often ends with a copy of the code after the statement (3.10+ copies short exits,
3.8-3.9 a ``return CONSTANT``); these find the original a copy repeats. A return from inside
loops starts by popping their iterators (and, on 3.8, calling the ``__exit__`` of the with
statements and releasing the exceptions of the except clauses it leaves).
"""
from typing import TYPE_CHECKING, List, Optional

from framescope.decompiler.frontend import versions
from framescope.decompiler.frontend.instructions import JUMPS, OR_POP_JUMPS, POP_JUMPS, Instr
from framescope.decompiler.graph.cfg import CFG, Block
from framescope.decompiler.graph.copies import same_run
from framescope.decompiler.graph.traversal import reachable
from framescope.decompiler.simulate import values as v
from framescope.decompiler.structure.unreached import is_exit_call

if TYPE_CHECKING:  # pragma: no cover
    from framescope.decompiler.structure.context import StructureContext


def leaves_clause(instrs: List[Instr]) -> bool:
    """Whether ``instrs``, right after a clause's ``POP_EXCEPT``, may be the clause's own way
    out: a jump, or a return of a constant (a return of another value loads it first)."""
    ops = [ins.op for ins in instrs]
    # A statement never starts by popping: that is a return from loops around the clause, or
    # the release of an enclosing clause's exception by a return, break or continue.
    return not ops or ops[0] in JUMPS or ops[0] in ("POP_TOP", "POP_EXCEPT") \
        or ops in (["LOAD_CONST", "RETURN_VALUE"], ["RETURN_CONST"])


def breaks_out(instrs: List[Instr], stack: list, loops: list) -> bool:
    """Whether ``instrs``, right after a clause's ``POP_EXCEPT``, pop the innermost of the
    ``loops``' iterator off ``stack`` and jump: the clause's own ``break``.  The compiler
    copies only exits (returns, raises) into a clause, never a ``break`` after the try
    statement, so one that looks alike is no copy of it."""
    return (bool(loops) and [ins.op for ins in instrs] == ["POP_TOP", "JUMP"] and bool(stack)
            and stack[-1] is loops[-1].iterator)


def ends_like(block: Block, instrs: List[Instr]) -> bool:
    """Whether ``block`` ends with ``instrs`` (a copy of its end goes on where it does)."""
    n = len(block.instrs)
    return (n >= len(instrs) and same_run(block.instrs[n - len(instrs):], instrs)
            and (not instrs or instrs[-1].op not in JUMPS or instrs[-1].target == block.last.target))


def copy_source(start: Optional[Block], instrs: List[Instr]) -> Optional[Block]:
    """The block that ``instrs``, a clause's tail, copy from the code after the try whose body
    goes on at ``start``: the one on the straight path from there, else the one block reached
    that ends like them (an else clause that branches to the code after the statement), unless
    they may be the clause's own return; where several do, the one at the copy's lines (3.12+
    copies keep them). None if none or unclear."""
    block = repeated_tail(start, instrs)
    if block is not None or start is None or leaves_clause(instrs):
        return block
    found = [b for b in reachable([start]) if ends_like(b, instrs)]
    if len(found) > 1:
        lines = [ins.line for ins in instrs]
        found = [b for b in found if [ins.line for ins in b.instrs[len(b.instrs) - len(instrs):]] == lines]
    return found[0] if len(found) == 1 else None


def repeated_tail(start: Optional[Block], instrs: List[Instr]) -> Optional[Block]:
    """The block on the straight path from ``start`` that ends with ``instrs``, if any."""
    block, seen = start, 0
    while block is not None and seen < 50:
        if ends_like(block, instrs):
            return block  # a copy goes on where the original does
        if block.last.op in POP_JUMPS or block.last.op in OR_POP_JUMPS:
            return None  # only straight-line code after the try is what a clause repeats
        block = block.fall if block.fall is not None else block.jump
        seen += 1
    return None


def pops_iterators(blocks: List[Block], stack: list) -> bool:
    """Whether the values the ``POP_TOP`` instructions ``blocks`` start with pop off ``stack``
    are loops' iterators (a return from inside the loops); on 3.8 the calls of ``__exit__``
    between them take the with statements' exits off the stack, and ``POP_EXCEPT`` the
    exception state of the except clauses the return leaves."""
    i = len(stack)
    for block in blocks:
        for ins in block.instrs:
            if is_exit_call(ins):
                if ins.op == "CALL":  # the call takes ``__exit__``
                    i -= 1
                    if i < 0 or not isinstance(stack[i], v.WithExit):
                        return False
            elif ins.op == "POP_TOP":
                i -= 1
                if i < 0 or not isinstance(stack[i], v.Iterator):
                    return False
            elif ins.op == "POP_EXCEPT":
                i -= ins.arg
                if i < 0 or not all(isinstance(x, v.Exc) for x in stack[i:i + ins.arg]):
                    return False
            elif ins.op in ("LOAD_CONST", "RETURN_VALUE"):
                return True
    return True


def normal_with_exit(block: Block) -> bool:
    """3.8: whether ``block`` is the call of ``__exit__`` that ends a with body normally (see
    finally38.py); a statement that leaves the body has a clean-up copy of its own, with no
    jump after it."""
    return versions.FINALLY_SUBROUTINES and block.last.op == "JUMP" and block.last.raw == "BEGIN_FINALLY"


def left_try_first(block: Block) -> bool:
    """Whether ``block`` is a ``return CONSTANT`` that leaves an enclosing try first (the
    constant, which cannot raise, is loaded outside the protected range), so a statement of its
    own (see `versions.CONSTANT_RETURN_LEAVES_TRY`)."""
    return versions.CONSTANT_RETURN_LEAVES_TRY and [ins.op for ins in block.instrs] == ["LOAD_CONST", "RETURN_VALUE"]


def outside_with(stack: list) -> list:
    """The stack around a with statement, from the one its body starts with."""
    stack = stack[:-1]
    if len(stack) >= 2 and isinstance(stack[-1], v.Null) and isinstance(stack[-2], v.WithExit):
        return stack[:-2]  # 3.14: ``__exit__`` and the slot of its ``self`` below the entered value
    if stack and isinstance(stack[-1], v.WithExit):
        stack = stack[:-1]  # ``__exit__`` was pushed below the entered value
    return stack


def continues_through_finally(cfg: CFG, hblock: Block, header: Block) -> bool:
    """Whether a copy of the finally body at ``hblock`` goes on at the loop ``header`` that the
    statement's body starts at: a ``continue`` leaving the try statement (its body may return
    otherwise, and no other way gets back), so the loop contains the statement."""
    return any(handler is hblock and cfg.finally_after.get(copy) is header
               for copy, handler in cfg.finally_copies.items())


def leaves_through_finally_copy(cfg: CFG, body_end: Optional[Block], hblock: Block, ends: List[Optional[Block]],
                                same_place) -> bool:
    """3.9+: whether the try body ends by a return, break or continue through the copy of the
    finally body at ``body_end``: it is laid out before the except clauses (at ``hblock``),
    and the clauses (ending at ``ends``) jump to another copy that goes on elsewhere, the one
    on the normal path, where the body would meet them. A clause's own statement falls from
    its ``POP_EXCEPT`` into its copy. 3.8 calls the finally body instead."""
    copies = cfg.finally_copies
    if versions.FINALLY_SUBROUTINES or body_end not in copies or body_end.index > hblock.index:
        return False
    reached = [end for end in ends if end is not None]
    return bool(reached) and all(end in copies and copies[end] is copies[body_end] and end.preds
                                 and not any(pred.fall is end for pred in end.preds)
                                 and not same_place(end, body_end) for end in reached)


def pops_iterator_after_finally(ctx: "StructureContext", body_end: Block, hblock: Block, stack: list) -> bool:
    """Whether the copy of the finally body at ``body_end`` falls into code laid out before the
    handler at ``hblock`` that pops the innermost for loop's iterator, on top of ``stack``
    (`versions.AFTER_FINALLY_FOLLOWS_HANDLER`): the way of a ``break`` or ``return``."""
    start = ctx.cfg.finally_after.get(body_end)
    if (not versions.AFTER_FINALLY_FOLLOWS_HANDLER or start is None
            or not body_end.index < start.index < hblock.index or start.instrs[0].op != "POP_TOP"):
        return False
    return bool(ctx.loops) and bool(stack) and stack[-1] is ctx.loops[-1].iterator
