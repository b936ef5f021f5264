"""Undo control-flow rewrites of the compiler's optimiser before structuring.

* **Loop rotation** (3.10+): ``while cond: body`` is compiled as a test before the
  loop and a copy of the test at the end of the body that jumps back to the body.
  When the copy matches the first test instruction for instruction, the copy is
  replaced by a jump back to the first test, which is the shape every version
  compiles from, and which recompiles to the same rotated code.
* **Duplicated exits** (3.11+): a small block that ends the function (``return x``)
  is copied into each place that jumps to it, e.g. into a ``break``.  When the code
  after a ``for`` loop ends with the same instructions as such a copy, it is split
  there, so that the loop's ``else`` clause and the code after it are separate blocks.
"""
from typing import List, Optional

from framescope.decompiler.cfg import CFG, Block
from framescope.decompiler.instructions import Instr

TESTS = ("POP_JUMP_IF_FALSE", "POP_JUMP_IF_TRUE", "POP_JUMP_IF_NONE", "POP_JUMP_IF_NOT_NONE")
OPPOSITE = {"POP_JUMP_IF_FALSE": "POP_JUMP_IF_TRUE", "POP_JUMP_IF_TRUE": "POP_JUMP_IF_FALSE",
            "POP_JUMP_IF_NONE": "POP_JUMP_IF_NOT_NONE", "POP_JUMP_IF_NOT_NONE": "POP_JUMP_IF_NONE"}
TERMINAL = ("RETURN_VALUE", "RAISE_VARARGS", "RERAISE")


def same(a: Instr, b: Instr) -> bool:
    return a.op == b.op and type(a.arg) is type(b.arg) and a.arg == b.arg


def same_run(a: List[Instr], b: List[Instr]) -> bool:
    return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b))


def normalize(cfg: CFG) -> None:
    changed = unrotate_loops(cfg)
    changed = split_loop_tails(cfg) or changed
    changed = mark_finally_copies(cfg) or changed
    if changed:
        cfg.renumber()


def mark_finally_copies(cfg: CFG) -> bool:
    """Find the copy of each ``finally`` body on the normal exit of its ``try`` (3.9+).

    The copy is cut into a block of its own and recorded in ``cfg.finally_copies``
    (copy block → handler block), so the structurer can skip it.
    """
    from framescope.decompiler.handlers import HandlerMap, TRY

    hmap = HandlerMap(cfg)
    changed = False
    handlers = {b.handler for b in cfg.blocks if b.handler is not None}
    for handler in handlers:
        hblock = hmap.block(handler)
        if hmap.kind(handler) != TRY or hblock.last.op != "RERAISE":
            continue
        first = 1 if hblock.instrs[0].op == "PUSH_EXC_INFO" else 0
        final = hblock.instrs[first:-1]
        if final and final[0].op == "POP_TOP":
            continue  # a bare except clause
        if any(ins.op in ("CHECK_EXC_MATCH", "EXC_MATCH", "POP_EXCEPT") for ins in final):
            continue
        for block in list(cfg.blocks):
            if not hmap.covers(block, handler):
                continue
            for exit in block.succs():
                if hmap.covers(exit, handler) or exit in cfg.finally_copies:
                    continue
                if not final:
                    cfg.finally_copies[exit] = hblock
                    continue
                if len(exit.instrs) >= len(final) and same_run(exit.instrs[:len(final)], final):
                    if len(exit.instrs) > len(final):
                        cfg.split(exit, len(final))
                        changed = True
                    cfg.finally_copies[exit] = hblock
    return changed


def unrotate_loops(cfg: CFG) -> bool:
    changed = False
    for head in list(cfg.blocks):
        if head.last.op not in TESTS or head.fall is None or head.jump is None:
            continue
        test = head.instrs[:-1]
        if any(ins.op.startswith("STORE") or ins.op in ("CALL", "CALL_KW") for ins in test):
            continue  # keep it to pure tests: side effects would make the copy observable
        body, exit = head.fall, head.jump
        for latch in list(body.preds):
            if latch is head:
                continue
            tail = rotated_copy(latch, test, head, body, exit)
            if tail is None:
                continue
            # Replace the copied test by a jump back to the original one.
            start = len(latch.instrs) - len(test) - 1
            jump = Instr("JUMP", None, latch.instrs[start].offset if start < len(latch.instrs) else latch.last.offset,
                         head.start, latch.last.line, latch.handler, "JUMP")
            for succ in latch.succs():
                succ.preds = [p for p in succ.preds if p is not latch]
            latch.instrs = latch.instrs[:start] + [jump]
            latch.fall, latch.jump = None, head
            head.preds.append(latch)
            if tail is not latch:  # the now unreachable jump back
                tail.preds = []
                body.preds = [p for p in body.preds if p is not tail]
            changed = True
    return changed


def rotated_copy(latch: Block, test: List[Instr], head: Block, body: Block, exit: Block) -> Optional[Block]:
    """``latch`` if it ends with a copy of ``head``'s test that loops back to ``body``."""
    if len(latch.instrs) < len(test) + 1:
        return None
    copy = latch.instrs[len(latch.instrs) - len(test) - 1:-1]
    if not same_run(copy, test):
        return None
    last = latch.last
    if last.op == OPPOSITE.get(head.last.op) and latch.jump is body and latch.fall is exit:
        return latch
    # 3.12+: the copy keeps the test's sense and falls into a block that jumps back.
    if last.op == head.last.op and latch.jump is exit and latch.fall is not None:
        back = latch.fall
        if len(back.instrs) == 1 and back.last.op == "JUMP" and back.jump is body and back.preds == [latch]:
            return back
    return None


def split_loop_tails(cfg: CFG) -> bool:
    changed = False
    for header in list(cfg.blocks):
        if header.instrs[0].op != "FOR_ITER" or header.jump is None:
            continue
        exit = header.jump
        if exit.last.op not in TERMINAL:
            continue
        for block in list(cfg.blocks):
            if block is exit or block.last.op not in TERMINAL:
                continue
            for index, ins in enumerate(block.instrs[:-1]):
                if ins.op != "POP_TOP":
                    continue
                tail = block.instrs[index + 1:]
                n = len(exit.instrs)
                if n > len(tail) and same_run(exit.instrs[n - len(tail):], tail):
                    cfg.split(exit, n - len(tail))
                    return True
    return changed
