"""The events of a dump: graph breaks, recompiles and what each compile cost.

Everything here comes from torch's structured trace (see torch_internals.add_trace_listener):

* ``dynamo_graph_break_reason`` artifacts: one per graph break Dynamo hits, with torch's
  reason and the user code traceback. A recompile of the same frame hits the same break
  again; the dump lists each break once.
* ``compilation_metrics``: one per frame compile, at its end, with the compile's id, code,
  time, op count and, for a recompile, the guard failure that caused it.

The records go to the session: ``record_graph_break``, ``record_recompile`` and, per cache
entry, ``update_entry(compile_id, compile_time_s=..., recompile_reason=..., op_count=...)``.
Records carry torch's compile id; the session turns it into the frame and cache entry.
"""
from __future__ import annotations

import linecache
import re
from typing import Any, Dict, List, Optional, Set, Tuple

from framescope import torch_internals

__all__ = ["start", "stop", "parse_graph_break", "parse_recompile_reason"]

_BREAK_AT = re.compile(r"^Graph break in user code at (.+):(\d+)$", re.M)
_TRACE_FILE = re.compile(r'^\s*File "(.+)", line (\d+), in (\S+)', re.M)
_COMPILE_ID_PREFIX = re.compile(r"^\s*\S*\d+/\d+\S*: ")
# torch puts "  # <source line>  # <file>:<line> in <fn>" after a failed guard's text.
_GUARD_COMMENT = re.compile(r"\s{2,}# .*?(?=; |$)", re.M)
# ... whose last part names where the guarded value is used: "# prog.py:31 in f".
_GUARD_PLACE = re.compile(r"#\s*([^#;\n]+?):(\d+) in [^\s;]+")
_RESUME_NAME = re.compile(r"^torch_dynamo_resume_in_(.+)_at_\d+$")
# torch 2.8+ ends a break's reason with the page of its graph-break code: ".../gb/gb0059.html".
_BREAK_CODE = re.compile(r"(https?://\S+)?/gb/gb(\d{4})\.html")
_HINT = re.compile(r"^\s*Hint: (.+)$", re.M)
# A compile refused because the frame has too many entries (torch's fail_reason).
_LIMIT_HIT = re.compile(r"recompile[_ ]limit|cache[_ ]size[_ ]limit|accumulated_recompile_limit", re.I)
_LIMIT_NAME = re.compile(r"Limit type: (\w+)")
_LIMIT_VALUE = re.compile(r"currently set to (\d+)")
_LIMIT_REACHED = re.compile(r"\b(\w*recompile_limit|cache_size_limit) reached")


def parse_graph_break(text: str) -> Dict[str, Any]:
    """reason, filename, lineno of a ``dynamo_graph_break_reason`` payload (torch's text)."""
    body = text.split("\nTraceback (most recent call last):", 1)[0]
    user, _, traceback_text = body.partition("User code traceback:")
    filename: Optional[str] = None
    lineno: Optional[int] = None
    match = _BREAK_AT.search(user)
    if match:
        filename, lineno = match.group(1), int(match.group(2))
    else:
        frames = _TRACE_FILE.findall(traceback_text or body)
        if frames:
            filename, lineno = frames[-1][0], int(frames[-1][1])
    code = _BREAK_CODE.search(user)
    return {
        "reason": _break_reason(user),
        "filename": filename,
        "lineno": lineno,
        "gb_code": "GB" + code.group(2) if code else None,
        "docs": code.group(0) if code and code.group(1) else None,
        "hints": [hint.strip() for hint in _HINT.findall(user)],
    }


def _break_reason(text: str) -> str:
    """The graph-break kind and torch's explanation: ``Failed to trace builtin operator:
    Dynamo does not know how to trace builtin operator `print` ...``."""
    reason = text.split("Graph Break Reason:", 1)[1] if "Graph Break Reason:" in text else text
    lines = [line.rstrip() for line in reason.strip().splitlines()]
    # The first paragraph says what Dynamo was doing ("Encountered graph break when
    # attempting to trace CALL ..."); the next one starts with the kind of break.
    paragraphs = "\n".join(lines).split("\n\n")
    head = paragraphs[1] if len(paragraphs) > 1 and paragraphs[0].startswith("Encountered") else paragraphs[0]
    head_lines = head.strip().splitlines()
    if not head_lines:
        return lines[0] if lines else ""
    kind = head_lines[0].strip()
    explanation = next(
        (line.strip()[len("Explanation:"):].strip() for line in head_lines if line.strip().startswith("Explanation:")),
        None,
    )
    return "%s: %s" % (kind, explanation) if explanation else kind


def parse_recompile_reason(text: str) -> Dict[str, Any]:
    """reason (the failed guard as torch prints it), filename and lineno (where the guarded
    value comes from, when torch knows) of a recompile reason."""
    head, _, stack = text.partition("\nUser stack trace:")
    head = _COMPILE_ID_PREFIX.sub("", head.strip(), count=1)
    reason = _GUARD_COMMENT.sub("", head).strip()
    frames = _TRACE_FILE.findall(stack)
    filename, lineno = (frames[-1][0], int(frames[-1][1])) if frames else (None, None)
    if filename is None:
        # torch 2.10-2.12 give no stack, only the guard's own comment; its first failed guard.
        place = _GUARD_PLACE.search(head.splitlines()[0] if head else "")
        if place:
            filename, lineno = place.group(1).strip(), int(place.group(2))
    return {"reason": reason, "filename": filename, "lineno": lineno}


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
    reached torch's limit on cache entries (the value None where torch does not say it);
    None for any other outcome."""
    if not fail_reason or not _LIMIT_HIT.search(fail_reason):
        return None
    named = _LIMIT_NAME.search(fail_reason) or _LIMIT_REACHED.search(fail_reason)
    name = named.group(1) if named else "recompile_limit"
    value = _LIMIT_VALUE.search(fail_reason)
    if value:
        return {"name": name, "value": int(value.group(1))}
    # torch 2.10 says only "recompile_limit reached": the limit is the setting's value now.
    return {"name": name, "value": torch_internals.dynamo_limit(name)}


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
        found = parse_graph_break(record.payload)
        torch_frame = torch_internals.compile_frame(record.compile_id)
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
        phases = compile_phases(metrics)
        if phases:
            fields["phases_s"] = phases
        caches = cache_counts(metrics)
        if caches:
            fields["caches"] = caches
        reason_text = metrics.get("recompile_reason")
        limit = recompile_limit(metrics.get("fail_reason"))
        if reason_text:
            found = parse_recompile_reason(reason_text)
            if found["filename"] and code[1] and code[1] != found["filename"] and code[1].endswith(found["filename"]):
                # torch 2.10-2.12 cut a long path from the left: the frame's own file, whole.
                found["filename"] = code[1]
            if found["filename"] is None:
                # torch names no line for this guard (a tensor's shape, say): the value came
                # in as an argument, so point at the function's def line.
                found["filename"], found["lineno"] = code[1], code[2]
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
                }
            )
        if fields:
            self.session.update_entry(compile_id, **fields)
        self._link_resumes()

    def _frame_code(self, compile_id: str) -> Optional[Tuple[Optional[str], Optional[str], Optional[int]]]:
        """The code of an earlier compile of the same frame ("5/0" for "5/4"), if one ended."""
        frame = torch_internals.compile_frame(compile_id)
        for other, code in self.compiles.items():
            if torch_internals.compile_frame(other) == frame and code[1] is not None:
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
        outer = _RESUME_NAME.match(name)
        return "torch_dynamo_resume_in_%s_at_%d" % (outer.group(1) if outer else name, lineno)

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
