"""How many calls each cache entry served while a dump was on, and how many calls missed
every entry of their frame.

Calls of an entry are counted where the interpreter can watch one code object cheaply:
CPython 3.12 and later, through ``sys.monitoring`` (a PY_START event on the code each
entry runs, and on nothing else). Each count costs one call of a small Python function
per call of the compiled function. Older interpreters have no such per-code event, so
their entries' ``calls`` stay unknown (None).

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
        self._tool: Optional[int] = None
        self._hook: Optional[torch_internals.Removable] = None

    # ------------------------------------------------------------------ start and stop

    def start(self) -> None:
        self._hook = torch_internals.on_guards_checked(self._guards_checked)
        if PER_ENTRY:
            self._tool = _take_tool_id()
            if self._tool is not None:
                monitoring = sys.monitoring  # type: ignore[attr-defined]
                monitoring.register_callback(self._tool, monitoring.events.PY_START, self._started)

    def stop(self) -> None:
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

    def calls(self, code: types.CodeType) -> Optional[int]:
        """The calls of ``code`` counted so far; None where entries are not counted."""
        return self.counts.get(id(code)) if self._tool is not None or self.counts else None

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
