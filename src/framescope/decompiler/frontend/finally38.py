"""3.8's shared ``finally`` code, rewritten into the copies later versions compile.

In 3.8 a ``finally`` body (and a with statement's exit, and the clean-up of
``except E as name``) exists once: the normal path enters it with ``BEGIN_FINALLY``
(or ``CALL_FINALLY`` before a ``return``/``break``) and ``END_FINALLY`` either carries
on, jumps back or re-raises.  From 3.9 the compiler copies the body onto each
normal path and ends the exceptional one with ``RERAISE``.  This pass does the same
to canonical instructions, so the structurer sees one shape:

* ``BEGIN_FINALLY`` → a copy of the ``finally`` body, then a jump past its ``END_FINALLY``;
  for a with statement, the call of ``__exit__(None, None, None)``;
* ``CALL_FINALLY`` → a copy of the body, then the next instruction;
* ``POP_FINALLY`` (a ``break``, ``continue`` or ``return`` leaving the body) → nothing in a
  copy (the copied body left nothing to pop); on the exceptional path, the release 3.9+ write
  there (``POP_TOP`` ×3, ``POP_EXCEPT``; around a kept return value, ``ROT 4`` before each
  half), so that the finally copies match the handler as later versions' do.  Where one way
  out leaves several finally bodies at once, each of its ``POP_FINALLY``s → nothing;
* the placeholder ``LOAD_CONST None`` before the ``SETUP_FINALLY`` of a try statement whose
  finally body leaves (`versions.FINALLY_EXIT_PLACEHOLDER`) → ``PUSH_NULL``;
* ``END_FINALLY`` → ``RERAISE`` (only the exceptional path reaches it after this pass).

Copies get offsets past the end of the code, unique per copy.
"""
from typing import List, Optional

from framescope.decompiler.frontend import versions
from framescope.decompiler.frontend.instructions import BLOCK_SETUPS, Handler, Instr



def inline_finally(instrs: List[Instr], code_size: int, copies: Optional[List[int]] = None,
                   follow: Optional[int] = None) -> List[Instr]:
    """``instrs`` with 3.8's shared finally code copied onto each normal path.

    ``copies`` counts the copies made so far (copies of copies included), so that
    each gets offsets of its own; ``follow`` is where control goes after the last
    instruction (for a copy: the code after it).
    """
    copies = copies if copies is not None else [0]
    index = {ins.offset: i for i, ins in reversed(list(enumerate(instrs)))}
    handler_targets = {ins.handler.target for ins in instrs if ins.handler is not None}
    out: List[Instr] = []
    i = 0
    while i < len(instrs):
        ins = instrs[i]
        i += 1
        if ins.op == "BEGIN_FINALLY" and i < len(instrs) and instrs[i].raw == "WITH_CLEANUP_START":
            out.extend(exit_call(ins))
            after = skip_with_cleanup(instrs, i)
            if instrs[i].offset in handler_targets:  # the with's shared exit code follows: jump past it
                past = instrs[after].offset if after is not None else follow
                if past is not None:
                    out.append(Instr("JUMP", None, ins.offset, past, ins.line, ins.handler, "BEGIN_FINALLY"))
            elif after is not None:  # its own copy (before a return): consumed here
                i = after
            continue
        if ins.op in ("BEGIN_FINALLY", "CALL_FINALLY"):
            start = i if ins.op == "BEGIN_FINALLY" else index.get(ins.target)
            end = matching_end(instrs, start) if start is not None else None
            if end is None:
                out.append(ins)
                continue
            copies[0] += 1
            if ins.op == "BEGIN_FINALLY":
                after = instrs[end + 1].offset if end + 1 < len(instrs) else follow
            else:
                after = instrs[i].offset if i < len(instrs) else follow
            body = copy(instrs[start:end], copies[0] * (code_size + 2), code_size + 2, ins.handler,
                        instrs[end].offset, after, ins.op == "CALL_FINALLY")
            out.extend(inline_finally(body, code_size, copies, after))  # a with or finally inside it
            if ins.op == "BEGIN_FINALLY" and after is not None:
                out.append(Instr("JUMP", None, ins.offset, after, ins.line, ins.handler, "BEGIN_FINALLY"))
            continue
        if ins.op == "LOAD_CONST" and ins.arg is None and i < len(instrs) and instrs[i].raw == "SETUP_FINALLY":
            # The placeholder below a try statement whose finally body leaves: no value of the
            # source, so a slot the ways out pop without a statement (a NULL, as 3.11+ push).
            out.append(Instr("PUSH_NULL", None, ins.offset, None, ins.line, ins.handler, ins.raw))
            continue
        if ins.op == "POP_FINALLY":
            if lone_exit(instrs, i - 1):
                out.extend(exit_release(ins))
            continue
        if ins.raw == "WITH_CLEANUP_START":
            # The handler of a with statement: make it look like 3.9's.
            out.append(Instr("WITH_EXCEPT_START", None, ins.offset, None, ins.line, ins.handler, ins.raw))
            continue
        if ins.op == "END_FINALLY":
            out.append(Instr("RERAISE", 0, ins.offset, None, ins.line, ins.handler, ins.raw))
            continue
        out.append(ins)
    return out


def exit_call(at: Instr) -> List[Instr]:
    """``__exit__(None, None, None)``, with ``__exit__`` on top of the stack, its result popped."""
    def make(op, arg=None):
        return Instr(op, arg, at.offset, None, at.line, at.handler, "BEGIN_FINALLY")

    return [make("LOAD_CONST", None), make("COPY", 1), make("COPY", 1), make("CALL", (3, None, 1)),
            make("POP_TOP")]


#: Raw instructions a ``break``, ``continue`` or ``return`` runs to leave the blocks around it
#: (an async with statement awaits its exit), before its jump or ``RETURN_VALUE``.
UNWINDING = frozenset({"POP_FINALLY", "POP_TOP", "ROT_TWO", "ROT_FOUR", "POP_BLOCK", "POP_EXCEPT",
                       "CALL_FINALLY", "BEGIN_FINALLY", "WITH_CLEANUP_START", "WITH_CLEANUP_FINISH",
                       "GET_AWAITABLE", "LOAD_CONST", "YIELD_FROM"})


def lone_exit(instrs: List[Instr], at: int) -> bool:
    """Whether the ``POP_FINALLY`` at ``at`` is the only way out of a finally body among the
    instructions that leave blocks with it: the statement leaves one finally body, whose
    exception the ``POP_FINALLY`` drops on the exceptional path.  A ``POP_FINALLY`` after
    ``WITH_CLEANUP_FINISH`` ends a with statement's exit instead.  False where the statement
    also leaves an async with statement: its copied exit is not awaited (`exit_call`), and the
    release would not make the copies match."""
    start, end = at, at + 1
    while start > 0 and instrs[start - 1].raw in UNWINDING:
        start -= 1
    while end < len(instrs) and instrs[end].raw in UNWINDING:
        end += 1
    if any(instrs[i].raw == "YIELD_FROM" for i in range(start, end)):
        return False
    return sum(1 for i in range(start, end)
               if instrs[i].op == "POP_FINALLY" and not (i > 0 and instrs[i - 1].raw == "WITH_CLEANUP_FINISH")) == 1


def exit_release(at: Instr) -> List[Instr]:
    """What a finally body that leaves runs on the exceptional path to drop the exception it
    was entered with, as 3.9+ compile it (`versions.FINALLY_EXIT_RELEASES`): the exception's
    three values, then the saved ones with ``POP_EXCEPT``; a return value kept on top
    (``POP_FINALLY 1``) is rotated below each three."""
    plain, kept = versions.FINALLY_EXIT_RELEASES
    return [Instr(op, RELEASE_ARGS.get(op), at.offset, None, at.line, at.handler, "POP_FINALLY")
            for op in (kept if at.arg else plain)]


#: The arguments of the release's instructions: ``ROT 4`` moves the kept return value below
#: the exception's three values; ``POP_EXCEPT`` restores the three saved ones.
RELEASE_ARGS = {"ROT": 4, "POP_EXCEPT": 3}


def own_exits(body: List[Instr]) -> List[int]:
    """Indices of the ``POP_FINALLY``s in a finally body that leave it (not one of the finally
    bodies nested in it) alone: in a copy on the normal path they have nothing to drop."""
    nested = set()
    for k, ins in enumerate(body):
        if ins.op == "BEGIN_FINALLY" and k + 1 < len(body) and body[k + 1].raw != "WITH_CLEANUP_START":
            end = matching_end(body, k + 1)
            nested.update(range(k + 1, end if end is not None else len(body)))
    return [k for k, ins in enumerate(body)
            if ins.op == "POP_FINALLY" and k not in nested and lone_exit(body, k)]


def skip_with_cleanup(instrs: List[Instr], start: int) -> Optional[int]:
    """Index after ``WITH_CLEANUP_START; [await;] WITH_CLEANUP_FINISH; END_FINALLY``/``POP_FINALLY``."""
    i = start
    while i < len(instrs) and instrs[i].raw != "WITH_CLEANUP_FINISH":  # async: the exit is awaited
        i += 1
    i += 1
    if i < len(instrs) and instrs[i].op in ("END_FINALLY", "POP_FINALLY"):
        i += 1
    return i if i < len(instrs) else None


def matching_end(instrs: List[Instr], start: int) -> Optional[int]:
    """Index of the ``END_FINALLY`` that ends the ``finally`` body starting at ``start``."""
    level = 0
    for i in range(start, len(instrs)):
        op = instrs[i].op
        if op in BLOCK_SETUPS or instrs[i].raw in BLOCK_SETUPS:
            level += 1
        elif op == "END_ASYNC_FOR":
            level -= 1  # the end of an async for, whose SETUP_FINALLY counted above
        elif op == "END_FINALLY":
            if level == 0:
                return i
            level -= 1
    return None


def copy(body: List[Instr], base: int, span: int, handler: Optional[Handler], end: int,
         after: Optional[int], called: bool) -> List[Instr]:
    """A copy of a finally body at offsets from ``base`` on; jumps to its ``END_FINALLY`` go to ``after``.

    Offsets are taken modulo ``span`` first: a copy of a copy gets offsets as unique as the first.
    ``called``: the copy is ``CALL_FINALLY``'s (see `Instr.called_finally`).
    """
    inside = {ins.offset for ins in body}
    dropped = set(own_exits(body))

    def moved(offset: int) -> int:
        return offset % span + base

    out = []
    for k, ins in enumerate(body):
        if k in dropped:
            continue
        target = moved(ins.target) if ins.target in inside else ins.target
        if ins.target == end and after is not None:
            target = after
        own = ins.handler
        if own is not None and own.target in inside:
            own = Handler(moved(own.target), own.depth, own.lasti)
        elif own is None or handler is None or own != handler:
            own = handler
        out.append(Instr(ins.op, ins.arg, moved(ins.offset), target, ins.line, own, ins.raw, called))
    return out


__all__: List[str] = ["inline_finally"]
