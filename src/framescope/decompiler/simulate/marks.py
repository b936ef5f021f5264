"""Facts a pass leaves on an AST node for a later pass: the one declared side channel.

A node built by the simulator sometimes carries something its fields cannot say: that it
is a copy another instruction still holds, that it is one of values shuffled before
their stores, ... Each such fact is declared here, with who writes and who reads it, and
is read and written only through `mark` and `marked`. The marks live in the node's one
``_framescope_marks`` attribute, so a deep copy of a node keeps them (as a copy of its
fields would); `mark` replaces that dictionary rather than changing it, so a shallow copy
never shares a later mark with its original.
"""
import ast
from typing import Any

_ATTRIBUTE = "_framescope_marks"
#: The marks of a node that has none (shared: `mark` never changes a node's dictionary).
_NO_MARKS: dict = {}

#: Written by the simulator on a value ``COPY`` duplicated; popping such a value is clean-up,
#: not an expression statement, and its store is not part of a shuffled tuple assignment.
COPIED = "copied"
#: Written by the simulator on values ``SWAP``/``ROT`` shuffled (value: their `TupleGroup`);
#: once each is stored, the stores are one tuple assignment ``a, b = x, y``.
GROUP = "group"
#: Written by the simulator on ``LOAD_COMMON_CONSTANT``'s name: 3.14 tests ``f is all``
#: before inlining ``all(genexpr)``; the structurer drops that test.
BUILTIN = "builtin"
#: Written by the simulator on ``RERAISE``'s ``raise``: the end of a finally body, not a
#: ``raise`` of the source (read by the try-statement builder).
RERAISE = "reraise"
#: Written by `function.py` on an async comprehension's call: its await belongs to the
#: comprehension (read by the simulator's ``GET_AWAITABLE``/``YIELD_FROM``).
ASYNC = "async"
#: Written by emit/cleanup on an ``assert False, msg`` whose test the compiler dropped.
UNTESTED = "untested"
#: Written by the structurer on a ``return`` the compiler copied into an arm of a returned
#: conditional value (3.12-3.13 ``LOAD_CONST; RETURN_VALUE``); read when it joins the arms.
RETURN_COPY = "return copy"
#: Written by the structurer on an ``if`` whose body always leaves and whose ``else`` the
#: unreached jump after that body shows (3.8-3.9): a ``continue`` ending that body is the
#: source's, not the loop's own way round (read by emit/cleanup, which keeps it).
WRITTEN_ELSE = "written else"
#: Written by the structurer on a ``continue`` ending an except clause that the clause's unreached
#: ``POP_EXCEPT`` and jump follow (3.8-3.9, `versions.KEEPS_UNREACHED_CLAUSE_EXIT`): the
#: source's, not the loop's own way round (read by emit/cleanup, which keeps it).
WRITTEN_CONTINUE = "written continue"
#: Written by the structurer on a ``return None`` whose block is only that return and more
#: than one way reaches (3.10+, `versions.COPIES_EXITS`): the compiler copies its own final
#: return into each way there, so this one is the source's (read by emit/cleanup, which keeps it;
#: value: the block's index, which tells two arms' returns of that one block from copies).
WRITTEN_RETURN = "written return"
#: Written by the machine decompiler on ``*t`` of a temporary nobody changes.
FIXED = "fixed"
#: Written by the simulator on an ``is``/``in`` test whose operator is its instruction's
#: argument (``IS_OP``/``CONTAINS_OP``): the compiler folds ``not (a in b)`` into ``a not in b``,
#: so the flipped operator recompiles to the other argument (value: the operator's class;
#: read by `expressions.negate`).
PINNED = "pinned"


def mark(node: ast.AST, name: str, value: Any = True) -> None:
    """Leave the fact ``name`` (one of this module's constants) on ``node``."""
    marks = dict(getattr(node, _ATTRIBUTE, _NO_MARKS))
    marks[name] = value
    setattr(node, _ATTRIBUTE, marks)


def marked(node: Any, name: str, default: Any = False) -> Any:
    """The fact ``name`` left on ``node`` (``default`` when none was; ``node`` may be any value)."""
    return getattr(node, _ATTRIBUTE, _NO_MARKS).get(name, default)
