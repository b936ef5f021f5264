"""Checks that code compiled from a dumped file can run in place of Dynamo's bytecode.

torch copies a frame's arguments, cells and free variables into the cache entry's code by
position, so the layout must match exactly (evalframe.check_replacement). Beyond that,
framescope cannot prove that decompiled code behaves like Dynamo's, but it rejects kinds of
mistakes that would break the program at once: code that uses other global names than
Dynamo's (a lost or misnamed graph call), that passes other cells (closures for resume
functions), or that may read a local variable before it is assigned where Dynamo's code
never does.
"""
from __future__ import annotations

import builtins
import dis
import types
from typing import AbstractSet, Callable, Dict, FrozenSet, List, Mapping, Optional, Set

from framescope.decompiler.frontend import versions
from framescope.decompiler.frontend.instructions import BLOCK_SETUPS
from framescope.evalframe import check_replacement

_BUILTINS = frozenset(dir(builtins))


def check(
    dynamo: types.CodeType,
    mine: types.CodeType,
    rename: Callable[[str], str] = lambda name: name,
    constants: Mapping[str, object] = {},
) -> None:
    """Raise ValueError/TypeError unless ``mine`` may replace ``dynamo``.

    ``rename`` maps each of Dynamo's global names to the one ``mine`` uses for it;
    ``constants`` are the globals ``mine`` reads in place of Dynamo's unspellable constants,
    with their values. A code object among them is not part of ``mine``: the globals its code
    uses are not asked of ``mine``.
    """
    check_replacement(dynamo, mine)
    bound = {id(value) for value in constants.values() if isinstance(value, types.CodeType)}
    want = {rename(name) for name in global_names(dynamo, bound)}
    got = global_names(mine)
    missing = sorted(want - got - _BUILTINS)
    extra = sorted(got - want - _BUILTINS - set(constants))
    if missing or extra:
        raise ValueError(
            "the decompiled code uses other globals than Dynamo's: missing %s, extra %s"
            % (", ".join(missing) or "none", ", ".join(extra) or "none")
        )
    cells, my_cells = cell_loads(dynamo), cell_loads(mine)
    if cells != my_cells:
        raise ValueError(
            "the decompiled code passes other cells than Dynamo's: %s instead of %s"
            % (", ".join(sorted(my_cells)) or "none", ", ".join(sorted(cells)) or "none")
        )
    unsafe = sorted(unbound_reads(mine) - unbound_reads(dynamo))
    if unsafe:
        raise ValueError("the decompiled code may read %s before assigning it" % ", ".join(unsafe))


def global_names(code: types.CodeType, skip: AbstractSet[int] = frozenset()) -> Set[str]:
    """Names loaded as globals by ``code`` and the code objects nested in it (but those whose
    ``id`` is in ``skip``)."""
    found: Set[str] = set()
    for instr in dis.get_instructions(code):
        if instr.opname in ("LOAD_GLOBAL", "LOAD_NAME"):
            found.add(str(instr.argval).replace(" + NULL", "").replace("NULL + ", ""))
    for const in code.co_consts:
        if isinstance(const, types.CodeType) and id(const) not in skip:
            found |= global_names(const, skip)
    return found


def cell_loads(code: types.CodeType) -> Set[str]:
    """Cell and free variables whose cell object (not its value) ``code`` loads.

    That is what makes a closure: Dynamo passes cells to the functions that build resume
    functions, and a decompiler that reads the value instead breaks the call. 3.13+ spell
    LOAD_CLOSURE as LOAD_FAST of a cell variable.
    """
    cells = set(code.co_cellvars) | set(code.co_freevars)
    found: Set[str] = set()
    for instr in dis.get_instructions(code):
        if instr.opname == "LOAD_CLOSURE" or (instr.opname.startswith("LOAD_FAST") and instr.argval in cells):
            found.add(instr.argval)
    return found


# Instructions after which execution does not go on to the next one.
_NO_FALL_THROUGH = frozenset(
    [
        "RETURN_VALUE",
        "RETURN_CONST",
        "RAISE_VARARGS",
        "RERAISE",
        "JUMP_FORWARD",
        "JUMP_BACKWARD",
        "JUMP_ABSOLUTE",
        "JUMP",
        "JUMP_NO_INTERRUPT",
        "JUMP_BACKWARD_NO_INTERRUPT",
    ]
)
_JUMPS = frozenset(dis.hasjrel + dis.hasjabs)


def unbound_reads(code: types.CodeType) -> FrozenSet[str]:
    """Local variables that ``code`` may read on some path before assigning them.

    A forward "definitely assigned" analysis over the instruction graph, exception edges
    included; reads of cell variables are not tracked.
    """
    instrs = [i for i in dis.get_instructions(code) if i.opname not in ("CACHE", "EXTENDED_ARG")]
    if not instrs:
        return frozenset()
    at = {instr.offset: n for n, instr in enumerate(instrs)}
    edges = _edges(code, instrs, at)
    count = code.co_argcount + code.co_kwonlyargcount
    count += bool(code.co_flags & 0x04) + bool(code.co_flags & 0x08)
    # Sets of assigned names as bits of an int: code with hundreds of locals would otherwise
    # copy a set of hundreds of names at every store.
    bits = _NameBits()
    start = 0
    for ident in code.co_varnames[:count]:
        start |= bits[ident]
    state: List[Optional[int]] = [None] * len(instrs)
    state[0] = start
    work = [0]
    unsafe: Set[str] = set()
    while work:
        n = work.pop()
        before = state[n]
        assert before is not None
        after = _step(instrs[n], before, unsafe, bits)
        for succ, with_state in edges[n]:
            incoming = before if with_state == "before" else after
            old = state[succ]
            new = incoming if old is None else old & incoming
            if new != old:
                state[succ] = new
                work.append(succ)
    # Reads were checked against states that may still have shrunk: check again at the end.
    unsafe.clear()
    for n, instr in enumerate(instrs):
        if state[n] is not None:
            _step(instr, state[n], unsafe, bits)  # type: ignore[arg-type]
    # 3.13+ load a cell object for a closure with LOAD_FAST: that is not a read of a local.
    return frozenset(unsafe - set(code.co_cellvars) - set(code.co_freevars))


class _NameBits(dict):  # type: ignore[type-arg]
    """name -> its bit in the ints that stand for sets of assigned names."""

    def __missing__(self, ident: str) -> int:
        bit = self[ident] = 1 << len(self)
        return bit


def _step(instr: dis.Instruction, assigned: int, unsafe: Set[str], bits: _NameBits) -> int:
    """The assigned names after ``instr``; reads of unassigned names go into ``unsafe``."""
    op = instr.opname
    if op in ("LOAD_FAST", "LOAD_FAST_CHECK", "LOAD_FAST_BORROW", "DELETE_FAST"):
        bit = bits[instr.argval]
        if not assigned & bit:
            unsafe.add(instr.argval)
        return assigned & ~bit if op == "DELETE_FAST" else assigned
    if op in ("LOAD_FAST_LOAD_FAST", "LOAD_FAST_BORROW_LOAD_FAST_BORROW"):
        unsafe.update(ident for ident in instr.argval if not assigned & bits[ident])
        return assigned
    if op == "STORE_FAST":
        return assigned | bits[instr.argval]
    if op == "STORE_FAST_STORE_FAST":
        return assigned | bits[instr.argval[0]] | bits[instr.argval[1]]
    if op == "STORE_FAST_LOAD_FAST":
        stored, loaded = instr.argval
        assigned |= bits[stored]
        if not assigned & bits[loaded]:
            unsafe.add(loaded)
        return assigned
    return assigned


def _edges(code: types.CodeType, instrs: List[dis.Instruction], at: Dict[int, int]) -> List[List[tuple]]:
    """Per instruction: (successor index, "before"/"after") pairs; exception edges carry the
    state before the instruction that raises."""
    edges: List[List[tuple]] = [[] for _ in instrs]
    for n, instr in enumerate(instrs):
        if instr.opname not in _NO_FALL_THROUGH and n + 1 < len(instrs):
            edges[n].append((n + 1, "after"))
        if instr.opcode in _JUMPS and instr.argval in at:
            # A 3.8-3.10 SETUP_* jumps to its handler from anywhere in the block; the state
            # at the SETUP is what is surely assigned there (a rough but safe choice).
            edges[n].append((at[instr.argval], "before" if instr.opname in BLOCK_SETUPS else "after"))
    if versions.EXCEPTION_TABLE:
        for entry in dis.Bytecode(code).exception_entries:
            if entry.target not in at:
                continue
            for n, instr in enumerate(instrs):
                if entry.start <= instr.offset <= entry.end:
                    edges[n].append((at[entry.target], "before"))
    return edges
