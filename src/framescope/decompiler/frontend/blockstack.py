"""Exception ranges of 3.8-3.10 bytecode, computed from its block stack.

Before 3.11 a ``try`` is entered by ``SETUP_FINALLY`` (``SETUP_WITH``,
``SETUP_ASYNC_WITH``) which pushes a block naming the handler, and left by ``POP_BLOCK``.
Walking the control-flow graph with the block stack gives, for every instruction, the
handler an exception raised there would reach: the same information 3.11+ stores in its
exception table, so later passes treat both alike.  On entry to a handler the
interpreter pushes six values (the previous and the current exception as type, value,
traceback triples) on top of the block's stack level.
"""
import dis
from typing import Dict, List, Optional, Tuple

from framescope.decompiler.frontend.instructions import BLOCK_SETUPS, Handler

UNCONDITIONAL = frozenset({"JUMP_FORWARD", "JUMP_ABSOLUTE", "RETURN_VALUE", "RAISE_VARARGS", "RERAISE"})

#: A pushed block: (handler offset, stack level); the offset None marks an EXCEPT_HANDLER block,
#: and then the second item is the offset of the handler that pushed it.
Block = Tuple[Optional[int], int]


def legacy_handlers(code, raw) -> Dict[int, Handler]:
    index = {ins.offset: i for i, ins in enumerate(raw)}
    seen: Dict[int, Tuple[Tuple[Block, ...], int]] = {}
    work: List[Tuple[int, Tuple[Block, ...], int]] = [(0, (), 0)]
    handlers: Dict[int, Handler] = {}
    #: Handler offset → the END_FINALLY that ends it (see `handler_end`), found once.
    ends: Dict[int, Optional[int]] = {}

    while work:
        i, blocks, depth = work.pop()
        # A with statement's exit entered with an exception: when ``__exit__`` swallows it,
        # WITH_CLEANUP_FINISH pops the EXCEPT_HANDLER block before the code after the statement.
        exiting_with = bool(blocks) and blocks[-1][0] is None and 0 <= i < len(raw) \
            and raw[i].opname == "WITH_CLEANUP_START"
        while 0 <= i < len(raw):
            ins = raw[i]
            if ins.offset in seen:
                break
            seen[ins.offset] = (blocks, depth)
            finally_blocks = [b for b in blocks if b[0] is not None]
            if finally_blocks:
                target, level = finally_blocks[-1]
                handlers[ins.offset] = Handler(target, level, False)
            name = ins.opname
            if name in BLOCK_SETUPS:
                level = depth if name != "SETUP_ASYNC_WITH" else depth - 1
                handler_blocks = blocks + ((None, ins.argval),)
                work.append((index[ins.argval], handler_blocks, level + 6))
                blocks = blocks + ((ins.argval, level),)
            elif name == "POP_BLOCK" and blocks:
                blocks = blocks[:-1]
            elif name in ("POP_EXCEPT", "END_ASYNC_FOR") and blocks:
                # END_ASYNC_FOR releases the StopAsyncIteration that ended the loop, as POP_EXCEPT does.
                blocks = blocks[:-1]
            elif name == "WITH_CLEANUP_FINISH" and exiting_with:
                blocks = blocks[:-1]
                exiting_with = False
            elif name == "END_FINALLY" and blocks and blocks[-1][0] is None and \
                    handler_end(raw, index, blocks[-1][1], ends) == ins.offset:
                # The handler's own END_FINALLY re-raises its exception. Code after it is reached
                # only the normal way (if at all: a try whose body and clauses all leave): with
                # the handler's block released, as after the clause that completes.
                blocks = blocks[:-1]
            try:
                effect = dis.stack_effect(ins.opcode, ins.arg, jump=False)
            except ValueError:
                effect = 0
            if name in BLOCK_SETUPS:
                effect = dis.stack_effect(ins.opcode, ins.arg, jump=False)
            if ins.opcode in dis.hasjrel or ins.opcode in dis.hasjabs:
                if name not in BLOCK_SETUPS:
                    jump_effect = dis.stack_effect(ins.opcode, ins.arg, jump=True)
                    work.append((index.get(ins.argval, -1), blocks, depth + jump_effect))
            if name in UNCONDITIONAL:
                break
            depth = max(0, depth + effect)  # GEN_START pops a value the walk never pushed
            i += 1
    return handlers


def handler_end(raw, index: Dict[int, int], handler: int, ends: Dict[int, Optional[int]]) -> Optional[int]:
    """Offset of the ``END_FINALLY`` that ends the handler at ``handler`` (3.8), at its own nesting level."""
    if handler not in ends:
        ends[handler] = None
        level = 0
        for ins in raw[index[handler]:]:
            if ins.opname in BLOCK_SETUPS:
                level += 1
            elif ins.opname in ("END_FINALLY", "END_ASYNC_FOR"):
                if level == 0:
                    ends[handler] = ins.offset if ins.opname == "END_FINALLY" else None
                    break
                level -= 1
    return ends[handler]
