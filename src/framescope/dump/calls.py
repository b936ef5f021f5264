"""How many calls each cache entry served while a dump was on, and how many calls missed
every entry of their frame.

Calls of an entry are counted on CPython 3.12 and later through ``sys.monitoring`` (a
PY_START event on the code each entry runs, and on nothing else). Older interpreters have
no such per-code event; there each entry's guard gets one more check at its very end, an
epilogue guard that always passes: torch reaches it only when every other check of the
entry passed, that is when the entry serves the call. Either way a count costs one call of
a small Python function per call of the compiled function. torch cannot take a guard out
again, so on 3.10 and 3.11 the added check stays with the entry after the dump ends (it
then counts nothing); it is not one of the entry's guards in the dump. A function made by
``torch.compile(...).aot_compile`` is no cache entry, and its guard may be checked twice per
call (by a module's dispatch, then by the function): its calls are counted on 3.12+ only.

Calls that missed every entry are counted on every version through torch's guard
completion hook, which torch calls once per call of a frame with cache entries, with
whether one of its guards passed. A miss then compiled a new entry, or, past the recompile
limit, ran the function uncompiled.
"""
from __future__ import annotations

import sys
import types
from typing import Dict, List, Optional

from framescope import torch_internals

#: Whether this interpreter can count the calls of single code objects.
PER_ENTRY = hasattr(sys, "monitoring")

# The sys.monitoring tool ids framescope may take, in order of preference: the ids CPython
# leaves free (0 debugger, 1 coverage, 2 profiler and 5 optimizer are spoken for).
_TOOL_IDS = (3, 4)


class CallCounter:
    """Counts the calls of the entries it watches and the calls that missed every entry."""

    def __init__(self) -> None:
        #: id(code an entry runs) -> calls so far.
        self.counts: Dict[int, int] = {}
        #: The watched code objects, kept alive with their counts.
        self.codes: List[types.CodeType] = []
        #: Calls whose frame had entries and none of whose guards passed.
        self.missed = 0
        #: Whether counting is on (the guards that count stay after it stops).
        self.on = False
        self._tool: Optional[int] = None
        self._hook: Optional[torch_internals.Removable] = None

    # ------------------------------------------------------------------ start and stop

    def start(self) -> None:
        self.on = True
        self._hook = torch_internals.on_guards_checked(self._guards_checked)
        if PER_ENTRY:
            self._tool = _take_tool_id()
            if self._tool is not None:
                monitoring = sys.monitoring  # type: ignore[attr-defined]
                monitoring.register_callback(self._tool, monitoring.events.PY_START, self._started)

    def stop(self) -> None:
        self.on = False
        hook, self._hook = self._hook, None
        if hook is not None:
            hook.remove()
        tool, self._tool = self._tool, None
        if tool is not None:
            monitoring = sys.monitoring  # type: ignore[attr-defined]
            for code in self.codes:
                monitoring.set_local_events(tool, code, 0)
            monitoring.register_callback(tool, monitoring.events.PY_START, None)
            monitoring.free_tool_id(tool)

    def watch(self, code: types.CodeType) -> None:
        """Count the calls of ``code`` (the code a cache entry runs) from now on."""
        if self._tool is None or id(code) in self.counts:
            return
        self.counts[id(code)] = 0
        self.codes.append(code)
        monitoring = sys.monitoring  # type: ignore[attr-defined]
        monitoring.set_local_events(self._tool, code, monitoring.events.PY_START)

    @property
    def needs_guards(self) -> bool:
        """Whether entries are counted through their guards (watch_guard), not their code."""
        return self.on and self._tool is None

    def watch_guard(self, code: types.CodeType, guard_manager: object, served: int = 0) -> None:
        """Where ``sys.monitoring`` does not count (before CPython 3.12, or no tool id left):
        count the calls of the entry that runs ``code`` through its guard manager. ``served``:
        the calls it served before its guard could count (1 for the call that compiled it,
        which runs the new code without checking its guard)."""
        if not self.needs_guards or id(code) in self.counts or torch_internals.missing(torch_internals.ENTRY_CALLS):
            return
        key = id(code)
        counts = self.counts

        def one_more() -> None:
            if self.on:
                counts[key] += 1

        try:
            torch_internals.count_passes(guard_manager, one_more)
        except Exception:  # a guard manager of another shape: its calls stay unknown
            return
        counts[key] = served
        self.codes.append(code)

    def calls(self, code: types.CodeType) -> Optional[int]:
        """The calls of ``code`` counted so far; None where they are not counted."""
        return self.counts.get(id(code))

    # ------------------------------------------------------------------ the callbacks

    def _started(self, code: types.CodeType, offset: int) -> None:
        key = id(code)
        if key in self.counts:
            self.counts[key] += 1

    def _guards_checked(self, hit: bool) -> None:
        if not hit:
            self.missed += 1


def _take_tool_id() -> Optional[int]:
    monitoring = sys.monitoring  # type: ignore[attr-defined]
    for tool in _TOOL_IDS:
        if monitoring.get_tool(tool) is None:
            monitoring.use_tool_id(tool, "framescope")
            return tool
    return None
