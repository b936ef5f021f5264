"""How the compiler lays out a loop's ways out, read off blocks.

A ``break`` may be a jump to the loop's exit, a copy of the code after the loop (3.10+
copy short exits), or pops and a jump; a ``return`` from inside a loop pops the iterators
first. `loops.LoopBuilder` decides with these predicates which block is the loop's exit,
which jumps are breaks and which blocks are copies of the code after the loop.
"""
from typing import Dict, List, Optional, Set, Tuple

from framescope.decompiler.frontend import versions
from framescope.decompiler.frontend.instructions import Handler, Instr
from framescope.decompiler.graph.cfg import CFG, Block
from framescope.decompiler.graph.copies import same_run
from framescope.decompiler.graph.rotation import STATEMENT_ENDS
from framescope.decompiler.graph.traversal import reachable


def returns_after_statements(instrs: List[Instr]) -> bool:
    """Whether ``instrs`` run statements and then return or raise without touching a loop iterator.

    A lone ``return <constant>`` (also out of an except clause) is left as it is: inside
    the loop it compiles the same.
    """
    if not instrs or instrs[-1].op not in ("RETURN_VALUE", "RAISE_VARARGS") or instrs[0].op == "POP_TOP":
        return False  # a statement never starts by popping: that is a return from nested loops
    ops = [ins.op for ins in instrs]
    while ops and ops[0] == "POP_EXCEPT":
        ops = ops[1:]  # leaving an except clause on the way
    if ops == ["LOAD_CONST", "RETURN_VALUE"]:
        return False
    return not any(ins.op == "POP_TOP" and instrs[i - 1].op in ("SWAP", "ROT")
                   for i, ins in enumerate(instrs) if i)


def straight_run(block: Block) -> Tuple[Block, List[Instr]]:
    """The last of ``block`` and the blocks only it falls into, and their instructions.

    One run of code may span blocks: ``POP_EXCEPT`` of an enclosing clause starts a new one,
    and so does the end of a handler's range (a ``RETURN_VALUE``, which cannot raise, is left
    out of the try body around it).
    """
    instrs, seen = block.instrs, 0
    while block.fall is not None and block.jump is None and block.fall.preds == [block] and seen < 10:
        block, seen = block.fall, seen + 1
        instrs = instrs + block.instrs
    return block, instrs


def break_copy(instrs: List[Instr], exit: Block, enclosing: Optional[Set[Handler]] = None) -> Optional[int]:
    """Index of the ``POP_TOP`` after which ``instrs`` repeat the code after their loop, if any
    (``enclosing``: see `copied_tail`)."""
    for index, ins in enumerate(instrs[:-1]):
        if index and instrs[index - 1].op in ("SWAP", "ROT"):
            continue  # ``return value`` inside the loop pops the iterator from under the value
        if index and instrs[index - 1].op == "CALL":
            continue  # the result of a call (a with statement's ``__exit__``), not the iterator
        if ins.op == "POP_TOP" and copied_tail(instrs[index + 1:], exit, enclosing) is not None:
            return index
    return None


def copied_tail(tail: List[Instr], exit: Block, enclosing: Optional[Set[Handler]] = None) -> Optional[Block]:
    """The block from ``exit`` on whose code is ``tail`` (a copy made after popping the iterator).

    ``enclosing``: the handlers of the try and with statements around the loop; code that
    another handler covers is in a statement after the loop, which no copy goes into.
    """
    seen = 0
    current: Optional[Block] = exit
    while current is not None and seen < 50:
        if enters_statement(current, enclosing):
            return None
        if same_run(current.instrs, tail):
            return current
        if len(current.instrs) < len(tail) and same_run(straight_run(current)[1], tail):
            return current  # the end of a try body's range splits the code after the loop
        if current.fall is not None and current.jump is not None:
            return None  # a branch (or the header of a loop around this one): no copy made it this far
        current = current.fall if current.fall is not None else current.jump
        seen += 1
    return None


def enters_statement(block: Block, enclosing: Optional[Set[Handler]]) -> bool:
    """Whether ``block`` is inside a try or with statement that does not enclose the loop."""
    return enclosing is not None and block.handler is not None and block.handler not in enclosing


def after_breaks(blocks: Set[Block], natural: Set[Block], header: Block) -> Set[Block]:
    """The blocks among ``blocks``, outside the ``natural`` loop, that only ``break`` reaches.

    That is the code after a ``for`` loop: a break pops the iterator and jumps on, and where
    the loop's ``else`` never gets there (it raises or returns), the header still dominates
    it.  A target that some other block in the loop also jumps to is an ``if``'s (the
    clean-up of a chained comparison pops a value too).
    """
    starts = []
    for block in blocks:
        target = trampoline_target(block)
        if target is None or target not in blocks or target in natural or block.instrs[0].op != "POP_TOP":
            continue
        if all(p not in blocks or pops_and_jumps(p, target) for p in target.preds):
            starts.append(target)
    found: Set[Block] = set()
    while starts:
        block = starts.pop()
        if block in found or block not in blocks or block in natural:
            continue
        found.add(block)
        starts.extend(block.succs())
        if block.catch is not None:
            starts.append(block.catch)
    return found


def pops_then_jumps(block: Block) -> bool:
    """Whether ``block`` ends by popping a value and jumping (a ``break`` pops the loop's iterator).

    3.8's with statement ends the same way, popping its ``__exit__`` call's result and jumping
    past the exit code it shares with the exception path: no ``break``.
    """
    instrs = block.instrs
    return (len(instrs) >= 2 and instrs[-1].op == "JUMP" and instrs[-2].op == "POP_TOP"
            and instrs[-2].raw != "BEGIN_FINALLY"
            and (len(instrs) < 3 or instrs[-3].op not in ("SWAP", "ROT")))


def pops_and_jumps(block: Block, succ: Block) -> bool:
    """Whether ``block`` pops the loop's iterator and jumps to ``succ``: a ``break`` after some statements.

    The code after the loop may end in a return, but only ``break`` pops the iterator
    before jumping there (``return`` in a loop swaps its value above the iterator first).
    """
    instrs = block.instrs
    if block.jump is not succ or instrs[-1].op != "JUMP":
        return False
    if len(instrs) == 1:  # 3.11+: the break jumps to a lone jump on
        return bool(block.preds) and all(len(p.instrs) > 1 and pops_and_jumps(p, block) for p in block.preds)
    return pops_then_jumps(block)


def returns_from_loops(target: Block, exit: Optional[Block]) -> bool:
    """Whether a jump that pops a ``for`` loop's iterator to ``target`` is a return from
    loops around it too: ``target`` pops another iterator and returns (the compiler shares
    one copy of ``return CONSTANT`` between the loops), and the loop's exit is elsewhere."""
    return target is not exit and target.instrs[0].op == "POP_TOP" and leaves_function(target) \
        and not falls_into(exit, target)


def lifts_value(block: Block) -> bool:
    """Whether ``block`` ends by popping the loop's iterator from under a value: a ``return``
    from the loop on its way to a ``RETURN_VALUE`` it shares with the code after the loop."""
    instrs = block.instrs
    return len(instrs) >= 2 and instrs[-1].op == "POP_TOP" and instrs[-2].op == "SWAP" and instrs[-2].arg == 2


def falls_into(start: Optional[Block], target: Block) -> bool:
    """Whether straight-line code from ``start`` (a loop's exit: its else clause) reaches ``target``.

    Then a jump to ``target`` from inside the loop is a ``break`` past the else clause, even
    when ``target`` returns (the end of an enclosing with statement and of the function).
    A short walk: an else clause that long is no straight line worth following.
    """
    steps = 0
    while start is not None and steps < 20:
        if start is target:
            return True
        if start.jump is not None and start.last.op != "JUMP":
            return False
        start, steps = (start.fall if start.fall is not None else start.jump), steps + 1
    return False


def same_to_end(copy: Block, original: Block) -> bool:
    """Whether ``copy`` and what follows it repeat ``original`` and what follows it up to a
    return or raise (a ``return`` from a with body calls ``__exit__`` like the normal exit, then
    goes elsewhere)."""
    a: Optional[Block] = copy
    b: Optional[Block] = original
    seen = 0
    while a is not None and b is not None and seen < 20:
        if not same_run(a.instrs, b.instrs) or (a.jump is None) != (b.jump is None):
            return False
        if a.last.op in ("RETURN_VALUE", "RAISE_VARARGS", "RERAISE"):
            return True
        if a.jump is not None and a.last.op != "JUMP":
            return False  # a branch: not a short copied tail
        a, b = a.jump or a.fall, b.jump or b.fall
        seen += 1
    return False


def leaves_function(block: Block) -> bool:
    """Whether straight-line code from ``block`` ends in a return or raise (not a break).

    An except clause that returns may span blocks: ``POP_EXCEPT`` starts a new one.
    """
    seen = 0
    while block.jump is None and block.fall is not None and block.last.op != "JUMP" and seen < 10:
        block, seen = block.fall, seen + 1
    return block.last.op in ("RETURN_VALUE", "RAISE_VARARGS", "RERAISE")


def break_exit(block: Block) -> Optional[Block]:
    """Where ``block`` goes after popping the loop's iterator, when it ends that way (a ``break``).

    3.13+ lets a ``break`` out of an except clause fall into the clause's end when that
    is laid out next (a pop right after a statement pops no value of its own); the pops
    right after a handler's test (``except E:``, a ``with`` swallowing the exception) are
    not one.
    """
    if pops_then_jumps(block):
        return block.jump
    instrs = block.instrs
    if (instrs[-1].op == "POP_TOP" and (len(instrs) == 1 or instrs[-2].op in STATEMENT_ENDS)
            and block.jump is None and block.fall is not None
            and block.fall.instrs[0].op == "POP_EXCEPT"
            and not any(p.instrs[0].op == "PUSH_EXC_INFO" for p in block.preds)):
        return block.fall
    return None


def leaves_try_to(block: Block, exit: Block) -> bool:
    """Whether ``block`` only jumps to ``exit`` (a ``while`` loop's), right after a try body.

    That is a ``break`` ending the body (3.8-3.9 lay it out as ``POP_BLOCK`` and the jump):
    the body's normal end goes on after the try statement, which in a loop jumps back to its
    start, and an arm of an ``if`` jumps from inside the body.
    """
    return (block.jump is exit and block.is_lone_jump() and bool(block.preds)
            and all(p.handler is not None and p.handler != block.handler for p in block.preds))


def trampoline_target(block: Block) -> Optional[Block]:
    """Where a block that only pops values and jumps on leads, if it is such a block."""
    if block.last.op == "JUMP" and all(ins.op == "POP_TOP" for ins in block.instrs[:-1]):
        return block.jump
    return None


def with_exit_target(block: Block) -> Optional[Block]:
    """Where a ``break`` that leaves with statements goes once their ``__exit__`` calls ran,
    if ``block`` starts such a way out: blocks that each only call ``__exit__`` with three
    Nones (pushed as constants or copies; the bound method is already on the stack), drop the
    result and fall or jump into the next, the last one jumping on. A natural loop without an
    exit of its own (``while True``) does not hold them, unlike the arm that jumps there."""
    seen = 0
    while block is not None and seen < 10:
        ends = exit_call_end(block)
        if ends is None:
            return None
        seen += 1
        if ends == "JUMP":
            return block.jump
        block = block.fall
    return None


def exit_call_end(block: Block) -> Optional[str]:
    """For a block that is only a with statement's ``__exit__(None, None, None)``, how it goes
    on (``JUMP`` or falling through: ``""``); None for any other block."""
    ops = [ins for ins in block.instrs if ins.op != "NOP"]
    nones = 0
    while nones < len(ops) and (ops[nones].op == "LOAD_CONST" and ops[nones].arg is None
                                or nones and ops[nones].op == "COPY" and ops[nones].arg == 1):
        nones += 1
    rest = [ins.op for ins in ops[nones:]]
    if nones < 3 or rest[:2] != ["CALL", "POP_TOP"] or rest[2:] not in ([], ["JUMP"]):
        return None
    return "".join(rest[2:])


class ExitTally:
    """The ways out of a loop's body, by where they go; the loop's own exit is not counted."""

    def __init__(self, exit: Optional[Block], enclosing: Set[Handler]) -> None:
        self.exit = exit
        #: The handlers around the loop (see `copied_tail`).
        self.enclosing = enclosing
        #: Target → how many ways out go there.
        self.counts: Dict[Block, int] = {}
        #: Target → the blocks that jump there.
        self.via: Dict[Block, Set[Block]] = {}

    def count(self, target: Block) -> None:
        if target is not self.exit:
            self.counts[target] = self.counts.get(target, 0) + 1

    def note(self, target: Block, block: Block) -> None:
        """One more way out to ``target``, from ``block``."""
        self.count(target)
        self.via.setdefault(target, set()).add(block)

    def break_copy(self, block: Block) -> bool:
        """Count a ``break`` followed by a copy of the code after the loop; whether ``block`` is one."""
        last, run = straight_run(block)
        index = break_copy(run, self.exit, self.enclosing) if not last.succs() else None
        if index is None:
            return False
        tail = copied_tail(run[index + 1:], self.exit, self.enclosing)
        if index == 0:
            self.note(tail, block)
        else:
            self.count(tail)
        return True


def jumps_on_after_copy(copy: Block, after: Block) -> bool:
    """Whether the copy of a finally body that ``CALL_FINALLY`` ran from ``copy`` on (3.8) gets to
    ``after`` by a jump of the code that called it (``break``, ``continue``), not by going on
    into the rest of a ``return``."""
    return any(p.jump is after and p.last.op == "JUMP" and not p.last.called_finally and p.instrs[0].called_finally
               for p in reachable([copy], stop=after) if p is not after)


def else_clause_break(cfg: CFG, brk: Block, loop: Set[Block]) -> Optional[Block]:
    """3.8: where the else clause of a try statement in a ``while True`` loop (``loop``: its
    blocks) breaks to, when ``brk``, the one way out found, is that clause; None when it is not.

    A handler's ``END_FINALLY`` falls into the code laid out after it, so code there
    belongs to the statement, not to the code after the loop, which follows the loop's
    jump back."""
    if not versions.HANDLER_END_FALLS_THROUGH or brk.index == 0 or brk.fall is not None:
        return None
    before = cfg.blocks[brk.index - 1]
    if before not in loop or not before.last.is_end_finally() or brk.last.op != "JUMP":
        return None
    target = brk.jump
    if target is None or target in loop or target.index < max(b.index for b in loop):
        return None
    return target
