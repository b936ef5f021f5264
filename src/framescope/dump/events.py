"""The events of a dump: graph breaks, recompiles and what each compile cost.

Everything here comes from torch's structured trace (see torch_internals.add_trace_listener):

* ``dynamo_graph_break_reason`` artifacts: one per graph break Dynamo hits, with torch's
  reason and the user code traceback. A recompile of the same frame hits the same break
  again; the dump lists each break once.
* ``compilation_metrics``: one per frame compile, at its end, with the compile's id, code,
  time, op count, the time torch took to check the new entry's guard once, for a
  recompile, the guard failure that caused it, and for a compile torch gave up on, its
  kind of failure, reason and the user's line.

The records go to the session: ``record_graph_break``, ``record_recompile``,
``record_failure`` and, per cache
entry, ``update_entry(compile_id, compile_time_s=..., recompile_reason=..., op_count=...)``.
Records carry torch's compile id; the session turns it into the frame and cache entry.
"""
from __future__ import annotations

import linecache
from typing import Any, Dict, List, Optional, Set, Tuple

from framescope import torch_internals, torch_text

__all__ = ["start", "stop"]


def compile_phases(metrics: Dict[str, Any]) -> Dict[str, float]:
    """Seconds of one frame compile by phase, from torch's compilation metrics: ``dynamo``
    (tracing the bytecode), ``aot`` (AOTAutograd), ``inductor`` (lowering) and ``codegen``
    (Inductor's code generation and kernel compiles); each nested time counts once. Phases
    torch does not time are left out."""
    def seconds(key: str) -> Optional[float]:
        value = metrics.get(key)
        return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else None

    total, backend = seconds("entire_frame_compile_time_s"), seconds("backend_compile_time_s")
    inductor, codegen = seconds("inductor_compile_time_s"), seconds("code_gen_time_s")
    phases: Dict[str, float] = {}
    if total is not None:
        phases["dynamo"] = total - (backend or 0.0)
    if backend is not None:
        phases["aot"] = backend - (inductor or 0.0)
    if inductor is not None:
        phases["inductor"] = inductor - (codegen or 0.0)
    if codegen is not None:
        phases["codegen"] = codegen
    return {name: round(max(value, 0.0), 6) for name, value in phases.items()}


# torch's cache counters in compilation metrics, by the dump's name for them.
_CACHE_COUNTS = {
    "inductor_fx_hits": "inductor_fx_local_cache_hit_count",
    "inductor_fx_misses": "inductor_fx_local_cache_miss_count",
    "aotautograd_hits": "aotautograd_local_cache_hit_count",
    "aotautograd_misses": "aotautograd_local_cache_miss_count",
}


def cache_counts(metrics: Dict[str, Any]) -> Dict[str, int]:
    """Inductor's FX-graph cache and AOTAutograd's cache: hits and misses of one compile."""
    found = {}
    for name, key in _CACHE_COUNTS.items():
        value = metrics.get(key)
        if isinstance(value, int) and not isinstance(value, bool):
            found[name] = value
    return found


def recompile_limit(fail_reason: Optional[str]) -> Optional[Dict[str, Any]]:
    """``{"name": "recompile_limit", "value": 8}`` when a compile failed because its frame
    reached torch's limit on cache entries; None for any other outcome."""
    reached = torch_text.limit_reached(fail_reason)
    if reached is None:
        return None
    name, value = reached
    # torch 2.10 says only "recompile_limit reached": the limit is the setting's value now.
    return {"name": name, "value": value if value is not None else torch_internals.dynamo_limit(name)}


def _def_line(filename: Optional[str], firstlineno: Optional[int]) -> Optional[int]:
    """The ``def`` line of a function whose code starts at ``firstlineno``: its first
    decorator's line when it has decorators (a decorator may span lines)."""
    if not filename or not firstlineno:
        return firstlineno
    for lineno in range(firstlineno, firstlineno + 40):
        text = linecache.getline(filename, lineno).lstrip()
        if not text:
            break
        if text.startswith(("def ", "async def ")):
            return lineno
    return firstlineno


def _source_line(filename: Optional[str], lineno: Optional[int]) -> Optional[str]:
    if not filename or not lineno:
        return None
    line = linecache.getline(filename, lineno)
    return line.rstrip("\r\n") if line else None


class EventRecorder:
    """Turns one dump session's trace records into its events; installed by :func:`start`."""

    def __init__(self, session: Any) -> None:
        #: The DumpSession.
        self.session = session
        #: compile id -> (code name, filename, first line) from its compilation metrics.
        self.compiles: Dict[str, Tuple[Optional[str], Optional[str], Optional[int]]] = {}
        #: (torch frame number, filename, line, reason) of each graph break recorded.
        self._seen: Set[Tuple[Any, ...]] = set()
        self._listener: Optional[Any] = None

    def start(self) -> None:
        self._listener = torch_internals.add_trace_listener(self._trace)

    def stop(self) -> None:
        if self._listener is not None:
            self._listener.remove()
            self._listener = None
        self._link_resumes()

    # ------------------------------------------------------------------ trace records

    def _trace(self, record: Any) -> None:
        try:
            if record.kind == "artifact" and record.name == "dynamo_graph_break_reason":
                self._graph_break(record)
            elif record.kind == "compilation_metrics":
                self._compile_ended(record)
        except Exception as exc:  # never let a parsing problem reach torch's compile
            self._warn("could not read torch's %s record: %s" % (record.name or record.kind, exc))

    def _graph_break(self, record: Any) -> None:
        if record.payload is None or record.compile_id is None:
            return
        found = torch_text.parse_graph_break(record.payload)
        torch_frame = torch_text.compile_frame(record.compile_id)
        key = (torch_frame, found["filename"], found["lineno"], found["reason"])
        if key in self._seen:
            return  # the same break, met again by a recompile or a restarted trace
        self._seen.add(key)
        self.session.record_graph_break(
            {
                "frame": None,
                "compile_id": record.compile_id,
                "reason": found["reason"],
                "gb_code": found["gb_code"],
                "docs": found["docs"],
                "hints": found["hints"],
                "filename": found["filename"],
                "lineno": found["lineno"],
                "source_line": _source_line(found["filename"], found["lineno"]),
                "resume": None,
            }
        )

    def _compile_ended(self, record: Any) -> None:
        metrics = record.metadata
        compile_id = metrics.get("compile_id") or record.compile_id
        if compile_id is None:
            return
        compile_id = str(compile_id)
        code = (metrics.get("co_name"), metrics.get("co_filename"), metrics.get("co_firstlineno"))
        if code[1] is None:
            # torch 2.10 names no code in the metrics of a compile refused at the limit.
            code = self._frame_code(compile_id) or code
        self.compiles[compile_id] = code
        fields: Dict[str, Any] = {}
        if metrics.get("entire_frame_compile_time_s") is not None:
            fields["compile_time_s"] = round(float(metrics["entire_frame_compile_time_s"]), 6)
        if metrics.get("graph_op_count") is not None:
            fields["op_count"] = metrics["graph_op_count"]
        latency = metrics.get("guard_latency_us")
        if isinstance(latency, (int, float)) and not isinstance(latency, bool):
            fields["guard_latency_us"] = float(latency)
        phases = compile_phases(metrics)
        if phases:
            fields["phases_s"] = phases
        caches = cache_counts(metrics)
        if caches:
            fields["caches"] = caches
        reason_text = metrics.get("recompile_reason")
        limit = recompile_limit(metrics.get("fail_reason"))
        if reason_text:
            found = torch_text.parse_recompile_reason(reason_text)
            if found["filename"] and code[1] and code[1] != found["filename"] and code[1].endswith(found["filename"]):
                # torch 2.10-2.12 cut a long path from the left: the frame's own file, whole.
                found["filename"] = code[1]
            if found["filename"] is None:
                # torch names no line for this guard (a tensor's shape, say): the value came
                # in as an argument, so point at the function's def line.
                found["filename"], found["lineno"] = code[1], _def_line(code[1], code[2])
            fields["recompile_reason"] = found["reason"]
            self.session.record_recompile(
                {
                    "frame": None,
                    "entry": None,
                    "compile_id": compile_id,
                    "reason": found["reason"],
                    "filename": found["filename"],
                    "lineno": found["lineno"],
                    "source_line": _source_line(found["filename"], found["lineno"]),
                    # The recompile was refused: the frame hit torch's limit on entries.
                    "limit": limit,
                    "hints": torch_text.recompile_hints(reason_text),
                }
            )
        if metrics.get("fail_type") and not limit:  # a compile refused at the limit is told as that
            self._failed(compile_id, code, metrics)
        if fields:
            self.session.update_entry(compile_id, **fields)
        self._link_resumes()

    def _failed(self, compile_id: str, code: Tuple[Any, Any, Any], metrics: Dict[str, Any]) -> None:
        """A compile torch gave up on: its kind, torch's whole reason and the user's line."""
        reason_text = str(metrics.get("fail_reason") or "")
        found = torch_text.parse_graph_break(reason_text)
        filename, lineno = metrics.get("fail_user_frame_filename"), metrics.get("fail_user_frame_lineno")
        if not isinstance(lineno, int):
            filename, lineno = code[1], _def_line(code[1], code[2])
        self.session.record_failure({
            "frame": None,
            "compile_id": compile_id,
            "function": code[0] or "",
            "function_filename": code[1],
            "function_lineno": code[2],
            "kind": str(metrics.get("fail_type")),
            "reason": reason_text.strip(),
            "gb_code": found["gb_code"],
            "docs": found["docs"],
            "hints": found["hints"],
            "filename": filename,
            "lineno": lineno,
            "source_line": _source_line(filename, lineno),
        })

    def _frame_code(self, compile_id: str) -> Optional[Tuple[Optional[str], Optional[str], Optional[int]]]:
        """The code of an earlier compile of the same frame ("5/0" for "5/4"), if one ended."""
        frame = torch_text.compile_frame(compile_id)
        for other, code in self.compiles.items():
            if torch_text.compile_frame(other) == frame and code[1] is not None:
                return code
        return None

    # ------------------------------------------------------------------ resume functions

    def _link_resumes(self) -> None:
        """Name the resume function after each graph break, as far as known by now.

        A resume function is compiled (and so gets its id in the dump) only when it first
        runs, after the compile that broke has ended; until then a break names it by torch's
        name for it, which is also its id unless two frames share the name.
        """
        with self.session.lock:
            for info in self.session.graph_breaks:
                compile_id = info.get("compile_id")
                if compile_id is not None and compile_id in self.compiles:
                    info["resume"] = self._resume(str(compile_id), info.get("lineno")) or info.get("resume")

    def _resume(self, compile_id: str, lineno: Optional[int]) -> Optional[str]:
        """The id of the resume function that continues after a break in this compile."""
        entry = self.session.entry_for_compile_id(compile_id)
        candidates: List[str] = []
        if entry is not None:
            record = self._entry_record(entry["frame"], entry["entry"])
            candidates = list((record or {}).get("calls_resume") or [])
        if len(candidates) > 1 and lineno is not None:
            lines = {frame.get("id"): frame.get("resume_line") for frame in self.session.frames}
            candidates = [c for c in candidates if lines.get(c) == lineno] or candidates
        if candidates:
            return candidates[-1]
        name, filename, _first = self.compiles.get(compile_id, (None, None, None))
        if name is None or lineno is None or filename is None:
            return None
        return torch_text.resume_name(name, lineno)

    def _entry_record(self, frame_id: str, index: int) -> Optional[Dict[str, Any]]:
        for frame in self.session.frames:
            if frame.get("id") == frame_id:
                for entry in frame.get("entries", []):
                    if entry.get("index") == index:
                        return entry
        return None

    def _warn(self, message: str) -> None:
        try:
            self.session.warn(message)
        except Exception:
            pass


_recorders: Dict[int, EventRecorder] = {}


def start(session: Any) -> None:
    """Start recording graph breaks, recompiles and compile times into ``session``."""
    recorder = EventRecorder(session)
    recorder.start()
    _recorders[id(session)] = recorder


def stop(session: Any) -> None:
    """Stop recording; graph breaks still waiting for their cache entry are recorded now."""
    recorder = _recorders.pop(id(session), None)
    if recorder is not None:
        recorder.stop()
