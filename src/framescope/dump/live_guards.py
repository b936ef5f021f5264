"""torch's own checks of the guards a dump writes, for the checks Python cannot spell.

A guard function in a full-code file makes each of torch's checks of its entry. Those with
no Python spelling (a tensor's dispatch keys, torch's global state) call
``___torch_leaf(entry, path, value)``, which asks torch to make that one check, with the
guard tree of the entry still in this process. Anywhere else (the file read back in
another process, an entry torch dropped) it raises LookupError: a check framescope cannot
make never passes. A check is named by its number among the entry's checks, in the order
the dump read the tree (torch reorders the tree as guards fail; the checks stay the same).
"""
from __future__ import annotations

import os
import threading
import weakref
from typing import Any, Dict, List, Sequence, Tuple

_lock = threading.Lock()
# Entry key -> (the entry's guard manager, weakly where it can be: torch owns it; the leaf
# guard objects of its tree, in the dump's order).
_entries: Dict[str, Tuple[Any, List[Any]]] = {}


def entry_key(folder: "os.PathLike[str] | str", frame_id: str, index: int) -> str:
    """The key a full-code file names an entry by: its dump folder, frame and index."""
    return "%s::%s::%d" % (os.fspath(folder), frame_id, index)


def register(key: str, manager: Any, leaves: Sequence[Any]) -> None:
    """Remember the guard manager of the entry ``key`` and its leaf guards, in order (as
    long as torch keeps the entry)."""
    try:
        held: Any = weakref.ref(manager)
    except TypeError:
        held = lambda: manager  # noqa: E731  (a manager that takes no weak reference)
    with _lock:
        _entries[key] = (held, list(leaves))


def _entry(key: str) -> Tuple[Any, List[Any]]:
    with _lock:
        held, leaves = _entries.get(key, (None, []))
    manager = held() if held is not None else None
    if manager is None:
        raise LookupError("torch's guard of %s is not in this process (the check needs the process "
                          "that compiled the entry)" % key)
    return manager, leaves


def check_leaf(key: str, number: int, value: Any) -> bool:
    """torch's own verdict of check ``number`` of the entry ``key`` on ``value``."""
    return bool(_entry(key)[1][number](value))


def check_entry(key: str, frame_locals: Dict[str, Any]) -> bool:
    """torch's own verdict of the whole guard of the entry ``key`` on the frame's locals."""
    return bool(_entry(key)[0].check(frame_locals))
