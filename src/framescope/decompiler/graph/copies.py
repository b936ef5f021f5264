"""Copies of code the compiler lays out more than once, told apart or matched instruction by
instruction: exits that end the function (3.11+ copies small ones into each jump there),
finally bodies (one copy per way out), loop tests (3.10+ rotates loops).
"""
from typing import List, Optional

from framescope.decompiler.frontend import versions
from framescope.decompiler.frontend.instructions import Instr
from framescope.decompiler.graph.cfg import Block


OPPOSITE = {"POP_JUMP_IF_FALSE": "POP_JUMP_IF_TRUE", "POP_JUMP_IF_TRUE": "POP_JUMP_IF_FALSE",
            "POP_JUMP_IF_NONE": "POP_JUMP_IF_NOT_NONE", "POP_JUMP_IF_NOT_NONE": "POP_JUMP_IF_NONE"}
TERMINAL = ("RETURN_VALUE", "RAISE_VARARGS", "RERAISE")


def same(a: Instr, b: Instr) -> bool:
    return a.op == b.op and type(a.arg) is type(b.arg) and a.arg == b.arg


def same_run(a: List[Instr], b: List[Instr]) -> bool:
    return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b))


#: Operations that cannot raise: where they run, the covering exception handler does not matter.
NO_RAISE = frozenset({"LOAD_CONST", "RETURN_VALUE", "POP_TOP", "NOP", "JUMP"})


def same_handling(a: Block, b: Block) -> bool:
    """Whether an exception raised in ``a`` goes where one raised at the same place in ``b`` goes.

    A ``raise`` inside a try body and its look-alike after the statement are not copies of one block.
    """
    if a.handler == b.handler:
        return True
    return all(ins.op in NO_RAISE for ins in a.instrs)


def same_exit(a: Optional[Block], b: Optional[Block]) -> bool:
    """The same block, or two copies of one block that ends the function (3.11+ copies those)."""
    if a is b:
        return True
    return (a is not None and b is not None and not a.succs() and not b.succs() and same_run(a.instrs, b.instrs)
            and same_handling(a, b) and is_copied_constant_return(a) == is_copied_constant_return(b))


def is_copied_constant_return(block: Block) -> bool:
    """Whether ``block`` ends by returning a value the way the copy of a returned
    conditional value's return does, with the iterators of the loops it leaves popped in
    between: a constant by ``LOAD_CONST; RETURN_VALUE``, not one ``RETURN_CONST`` (3.12-3.13),
    or a local whose load is not borrowed, though the test before it was (3.14: the value
    was left on the stack at the end of its arm)."""
    instrs = block.instrs
    k = len(instrs) - 2
    while k >= 2 and instrs[k].op == "POP_TOP" and instrs[k - 1].op == "SWAP":
        k -= 2
    if k < 0 or instrs[-1].raw != "RETURN_VALUE":
        return False
    if versions.COPIED_CONSTANT_RETURN_UNFOLDED:
        return instrs[k].raw == "LOAD_CONST"
    if versions.BORROWED_LOADS and instrs[k].raw == "LOAD_FAST" and instrs[k].op == "LOAD_FAST":
        return any(pred.last.is_cond_jump() and any(ins.is_borrowed_load() for ins in pred.instrs)
                   for pred in block.preds)
    return False

