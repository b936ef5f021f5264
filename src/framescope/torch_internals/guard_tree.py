"""torch's guard tree for one cache entry, leaf by leaf, in plain Python terms.

A cache entry's guard is a tree of C++ guard managers (``GuardManagerWrapper.root``): each
manager reaches a value from its parent's (a frame local, an attribute, a dict item) and
holds leaf guards that check that value; the root's value is the frame's locals. torch
checks a manager's leaves, then its children, and after them the root's epilogue guards
(the shape guards of dynamic dimensions). Each leaf is a callable: ``leaf(value) -> bool``.
torch reorders the children and leaves of a manager as they fail, so a leaf is known by
its object, not by its place.
"""
from __future__ import annotations

import ast
import functools
from typing import Any, Callable, List, NamedTuple, Optional, Tuple

#: The first step of the path of an epilogue guard (checked after every other guard).
EPILOGUE = -1

#: The text of the epilogue guard framescope adds to count an entry's calls (count_passes):
#: it checks nothing, so it is left out of the entry's leaves.
COUNTING_TEXT = "framescope: count a call this cache entry serves (always passes)"


class GuardLeaf(NamedTuple):
    """One leaf guard of an entry's guard tree."""

    #: Where it is: the child-manager indices from the root, then the leaf's index among its
    #: manager's leaves; an epilogue guard's path is (EPILOGUE, index).
    path: Tuple[int, ...]
    #: torch's kind of check, its class name: "EQUALS_MATCH", "TENSOR_MATCH", "LAMBDA_GUARD".
    kind: str
    #: The value it checks, as torch writes it (``L['n']``); None for the root's own leaves,
    #: which check the frame's locals (``L``) or torch's global state.
    source: Optional[str]
    #: The name of the class of the value when the entry was compiled (``int``), if known.
    value_type: Optional[str]
    #: torch's text of the check, one string per part, without its trailing comment.
    parts: Tuple[str, ...]
    #: The leaf guard object itself: ``guard(value) -> bool``. torch reorders a tree's
    #: managers and leaves as guards fail (to fail fast), so a path holds only until then;
    #: the object stays the same.
    guard: Any = None


def leaves(guard_manager: Any) -> List[GuardLeaf]:
    """Every leaf of the guard tree of a cache entry's guard manager, in the order torch
    checks them."""
    root = guard_manager.root
    found: List[GuardLeaf] = []
    _walk(root, (), None, None, found)
    for index, leaf in enumerate(root.get_epilogue_lambda_guards()):
        if _parts(leaf) == (COUNTING_TEXT,):
            continue
        found.append(GuardLeaf((EPILOGUE, index), type(leaf).__name__, None, None, _parts(leaf), leaf))
    return found


def count_passes(guard_manager: Any, callback: Callable[[], None]) -> None:
    """Call ``callback()`` each time the whole guard of a cache entry passes, so each time the
    entry serves a call: an epilogue guard that always passes, checked by torch after every
    other guard of the entry. torch has no way to take a guard out of a tree, so the check
    stays for the life of the entry (``callback`` can stop counting)."""

    def passed(_locals: object) -> bool:
        callback()
        return True

    from framescope.torch_internals.frames import keep_out_of_dynamo

    keep_out_of_dynamo(passed)
    keep_out_of_dynamo(callback)
    root = guard_manager.root
    # torch 2.13+ take the user's stack as a third argument (None: none), torch 2.10-2.12
    # take the check and its text only; pybind11 says TypeError before calling anything.
    try:
        root.add_epilogue_lambda_guard(passed, [COUNTING_TEXT], None)
    except TypeError:
        root.add_epilogue_lambda_guard(passed, [COUNTING_TEXT])


def _walk(manager: Any, path: Tuple[int, ...], source: Optional[str], value_type: Optional[str],
          found: List[GuardLeaf]) -> None:
    for index, leaf in enumerate(manager.get_leaf_guards()):
        found.append(GuardLeaf(path + (index,), type(leaf).__name__, source, value_type, _parts(leaf), leaf))
    for index, child in enumerate(manager.get_child_managers()):
        _walk(child, path + (index,), _source(child), _type_name(child), found)


def _source(manager: Any) -> Optional[str]:
    try:
        source = manager.get_source()
    except Exception:  # a manager kind that cannot say
        return None
    return source if isinstance(source, str) and source else None


def _type_name(manager: Any) -> Optional[str]:
    try:
        kind = manager.get_type_of_guarded_value()
    except Exception:
        return None
    if not isinstance(kind, type):
        return None
    module = kind.__module__
    return kind.__qualname__ if module == "builtins" else "%s.%s" % (module, kind.__qualname__)


def _parts(leaf: Any) -> Tuple[str, ...]:
    try:
        parts = leaf.verbose_code_parts()
    except Exception:
        return ()
    return tuple(_without_comment(part) for part in parts if isinstance(part, str))


@functools.lru_cache(maxsize=8192)
def _without_comment(part: str) -> str:
    """torch's verbose text without the ``# user line`` comment it appends."""
    head, sep, _tail = part.partition("  # ")
    head = head.rstrip()
    if not sep:
        return part.strip()
    try:
        ast.parse(head, mode="eval")
    except SyntaxError:
        try:
            ast.parse(part, mode="eval")
        except SyntaxError:
            return head
        return part.strip()
    return head
