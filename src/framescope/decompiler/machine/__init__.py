"""Decompiling machine-made bytecode: code that no source produced, such as torch.compile's.

The source decompiler (`api.py`) recognises what a compiler makes of statements and checks its
result by recompiling it. Code written by a program (Dynamo's transformed code, its resume
functions) follows no source shape: values are shuffled on the stack (``SWAP``, ``COPY``), lists
are built and sliced to pass values around, and side effects happen while other values wait on
the stack. Recompiling cannot check such code, so this decompiler is correct by construction:

* every value on the symbolic stack stays an expression until something uses it, as in
  `simulate.py`, but before a statement runs, any waiting value that the statement could affect
  or that has effects of its own (a call, an attribute, an operator) is first stored in a
  temporary (*spilled*), so the printed code evaluates everything once and in bytecode order
  (`MachineSimulator` states the invariant this rests on);
* a list that the code builds itself (``BUILD_LIST``) and that nothing else has seen yet is kept
  as a Python list of stack values (`NewList`): indexing, slicing, extending and slice-assigning
  it with constants is done at decompile time, so Dynamo's list juggling disappears from the
  output instead of turning into ``[[()][0]]``-style noise; the list becomes a real list
  expression only when an instruction uses it as a value, under a name if it waits elsewhere too;
* control flow may only go forward (straight-line code with ``if`` branches). Where the two
  arms of a branch meet again with the same values waiting on the stack (names, constants),
  the code after the join is printed once, after the ``if``; elsewhere it is printed in both
  arms. Loops are refused, and so are exception handlers except the
  ``try: ... except BaseException: ...; raise`` that Dynamo puts around a call in a ``with``;
* last, a temporary read once, by the next statement, before anything else there has an
  effect, is put back in its place (`inline_temporaries`); so is a local the caller names as
  scratch (one nothing outside the code reads) that is stored once, and its ``del`` goes;
  then, across statements (`sinking`), a value that nothing can change moves to its one use,
  a temporary that only hands its value to a local takes the local's name, and ``x = x`` goes.

Anything else raises DecompilationError; callers keep the original bytecode then.
tests/decompiler/test_machine.py checks the result by running it against the bytecode on
random programs.
"""
import ast
import inspect
from types import CodeType
from typing import AbstractSet, Callable, Optional, Sequence

from framescope.decompiler.emit.unparse import NestedTooDeeply, unparse
from framescope.decompiler.frontend.wellformed import refuse_malformed
from framescope.decompiler.function import guarded
from framescope.decompiler.machine.walk import MachineDecompiler, Unmergeable, name_after_parameters
from framescope.errors import DecompilationError


#: Where a statement ending in a call breaks its arguments onto lines of their own (a graph
#: call with hundreds of inputs).
WIDTH = 120

_SUSPENDABLE = inspect.CO_GENERATOR | inspect.CO_COROUTINE | inspect.CO_ASYNC_GENERATOR


def decompile_transformed(
    code: CodeType,
    *,
    indent: int = 4,
    constant_name: Optional[Callable[[object], str]] = None,
    parameters: Optional[Callable[[str], Optional[Sequence[str]]]] = None,
    scratch: AbstractSet[str] = frozenset(),
    shown: AbstractSet[str] = frozenset(),
    modules: AbstractSet[str] = frozenset(),
) -> str:
    """Source of a ``def`` that does what ``code`` does; DecompilationError when there is none.

    ``code`` is machine-made bytecode, e.g. a torch.compile cache entry's transformed code.
    Such code may hold constants no literal spells (a ``torch.dtype``, a module's globals):
    ``constant_name(value)`` gives the name of a global the caller binds to that very object,
    and the source reads that name. Without it such code is refused. ``parameters(name)``
    gives the parameter names of the function a global ``name`` holds, when known: a
    temporary passed to it is named after its parameter (a resume function's ``y``).
    ``scratch`` names locals that nothing but the code itself reads (those its maker invented,
    such as Dynamo's ``tmp_3`` and ``graph_out_0``): one stored once and read once, by the next
    statement before anything else happens there, is put in its place, and its ``del`` goes;
    those also in ``shown`` keep their name (a graph's outputs, for a debugger to show).
    ``modules`` names globals bound to modules: reading their attributes is taken to have no
    effect, so a call's result may be put in an argument after such an attribute
    (``utils.exit(utils.enter())``).
    """
    if not isinstance(code, CodeType):
        raise TypeError("decompile_transformed() needs a code object, not %s" % type(code).__name__)
    if code.co_flags & _SUSPENDABLE:
        raise DecompilationError("generators and coroutines are not machine-decompiled", code_name=code.co_name)
    refuse_malformed(code)
    source = guarded(_machine_source, code, constant_name, parameters, indent, scratch, shown, modules)
    try:
        compile(source, code.co_filename, "exec")
    except SyntaxError as err:
        raise DecompilationError("produced invalid source (%s)" % err.msg, code_name=code.co_name) from None
    return source


def _machine_source(code: CodeType, constant_name: Optional[Callable[[object], str]],
                    parameters: Optional[Callable[[str], Optional[Sequence[str]]]], indent: int,
                    scratch: AbstractSet[str], shown: AbstractSet[str], modules: AbstractSet[str]) -> str:
    try:
        decompiler = MachineDecompiler(code, constant_name)
        node = decompiler.function(scratch, shown, modules)
    except Unmergeable:
        # Arms that meet with different waiting values: print each join in every arm.
        decompiler = MachineDecompiler(code, constant_name, merge=False)
        node = decompiler.function(scratch, shown, modules)
    if parameters is not None:
        name_after_parameters(node, decompiler.renamable, parameters, code)
    try:
        return unparse(ast.Module(body=[node], type_ignores=[]), indent=indent, width=WIDTH)
    except NestedTooDeeply:
        raise
    except ValueError as err:  # a value the walk left where a node belongs: no source to print
        raise DecompilationError("cannot print the result (%s)" % err, code_name=code.co_name) from None
