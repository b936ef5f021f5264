"""index.json and index.md: what a dump folder holds, for programs and for people.

index.json is the records of :mod:`framescope.dump.records` (format ``framescope-dump/1``),
built here from the session's working state; index.md says the same for reading.
"""
from __future__ import annotations

import json
import platform
import sys
from typing import TYPE_CHECKING, Any, Dict, List

from framescope.dump import records
from framescope.dump.records import (Entry, Failure, Frame, Graph, GraphBreak, Kernel, Limit, Piece, Precompiled,
                                     Recompile, record)

if TYPE_CHECKING:
    from framescope.dump.session import DumpSession


def build(session: "DumpSession") -> Dict[str, Any]:
    """The index of a session as JSON-ready data."""
    torch = sys.modules.get("torch")
    left_out: List[str] = []
    dump = records.Dump(
        torch=getattr(torch, "__version__", None),
        python=platform.python_version(),
        argv=list(session.argv),
        frames=[_frame(frame, left_out) for frame in session.frames],
        graphs=[_graph(session.resolve(graph), left_out) for graph in session.graphs],
        graph_breaks=[_graph_break(session.resolve(item), left_out) for item in session.graph_breaks],
        recompiles=[_recompile(session.resolve(item), left_out) for item in session.recompiles],
        warnings=list(session.warnings),
        calls_missed=session.calls_missed,
        precompiled=[_precompiled(session, item, left_out) for item in session.precompiled],
        failures=[record(Failure, session.resolve(item), left_out) for item in session.failures],
        finished=session.finished,
    )
    if left_out:
        session.warn("index.json leaves out what its format does not declare: %s"
                     % ", ".join(sorted(set(left_out))))
        dump.warnings = list(session.warnings)
    return records.to_data(dump)


def _precompiled(session: "DumpSession", values: Dict[str, Any], left_out: List[str]) -> Precompiled:
    code = values.get("code")
    frame = session.frame_id(code) if code is not None else None
    values = {key: value for key, value in values.items() if key != "code"}
    return record(Precompiled, dict(values, frame=frame), left_out)


def _frame(values: Dict[str, Any], left_out: List[str]) -> Frame:
    entries = [record(Entry, entry, left_out) for entry in values.get("entries", [])]
    return record(Frame, dict(values, entries=entries), left_out)


def _graph(values: Dict[str, Any], left_out: List[str]) -> Graph:
    pieces = [record(Piece, piece, left_out) for piece in values.get("pieces", [])]
    kernels = [record(Kernel, kernel, left_out) for kernel in values.get("kernels", [])]
    values = {key: value for key, value in values.items() if key != "arguments"}  # a graph has none
    return record(Graph, dict(values, pieces=pieces, kernels=kernels), left_out)


def _graph_break(values: Dict[str, Any], left_out: List[str]) -> GraphBreak:
    """A graph break with ``skipped``: no compile of its frame made a cache entry, so Dynamo
    gave up on the whole function and it runs without torch.compile."""
    skipped = values.get("frame") is None and values.get("compile_id") is not None
    return record(GraphBreak, dict(values, skipped=skipped), left_out)


def _recompile(values: Dict[str, Any], left_out: List[str]) -> Recompile:
    limit = values.get("limit")
    return record(Recompile, dict(values, limit=record(Limit, limit, left_out) if limit else None), left_out)


def cache_text(graph: Dict[str, Any]) -> str:
    """What the compile caches did for a graph, in a line: ``aot_autograd hit (saved 1.9 s),
    fx_graph hit; no files for pre_grad, aot_forward (torch skips them on a hit)``."""
    values = records.record(Graph, graph, [])
    return cache_summary(values)


def cache_summary(graph: Graph) -> str:
    """:func:`cache_text` of a Graph record."""
    parts = []
    for cache, result in graph.caches.items():
        text = "%s %s" % (cache, result)
        if cache in graph.cache_saved_s:
            text += " (saved %.2g s)" % graph.cache_saved_s[cache]
        if cache in graph.cache_reasons:
            text += " (%s)" % graph.cache_reasons[cache]
        parts.append(text)
    if not parts:
        return ""
    hits = [result == "hit" for result in graph.caches.values()]
    how = ("served from the compile cache" if graph.served_from_cache() else
           "partly from the compile cache" if any(hits) else "compiled cold")
    text = how + ": " + ", ".join(parts)
    lacking = graph.lacks()
    if lacking:
        text += "; no files for %s (torch skips those stages on a hit)" % ", ".join(lacking)
    return text


def entry_use(entry: Entry) -> str:
    """How an entry was used while the dump was on: ``12 calls``, ``never used after
    compiling``, ``compiled before the dump began``; "" when nothing is known."""
    parts = []
    if entry.calls is not None:
        parts.append("never used after compiling" if entry.calls == 0 else
                     "%d call%s" % (entry.calls, "" if entry.calls == 1 else "s"))
    if entry.compiled_before_dump:
        parts.append("compiled before the dump began")
    return ", ".join(parts)


def guard_size(entry: Entry) -> str:
    """How big the entry's guard is: ``612 checks, 38 us to check them once`` (the time as
    torch measured it after compiling); "" when nothing is known."""
    parts = []
    if entry.guard_count is not None:
        parts.append("%d check%s" % (entry.guard_count, "" if entry.guard_count == 1 else "s"))
    if entry.guard_latency_us is not None:
        parts.append("%s us to check %s once" % (_short_number(entry.guard_latency_us),
                                                 "them" if entry.guard_count != 1 else "it"))
    return ", ".join(parts)


def _short_number(value: float) -> str:
    return "%.0f" % value if value >= 10 else "%.1f" % value


def _failure_lines(items: List[Dict[str, Any]]) -> List[str]:
    """index.md's lines on the compiles torch.compile gave up on."""
    if not items:
        return []
    lines = ["## Failed compiles", ""]
    for item in items:
        first = (item.get("reason") or "").strip().splitlines()[:1]
        lines.append("- `%s` (compile %s) failed at %s:%s: %s%s: %s" % (
            item.get("function"), item.get("compile_id"), item.get("filename"), item.get("lineno"), item.get("kind"),
            " [%s]" % item["gb_code"] if item.get("gb_code") else "", first[0] if first else ""))
    return lines + [""]


def _precompiled_lines(items: List[Dict[str, Any]]) -> List[str]:
    """index.md's lines on the functions torch.compiler.precompile captured."""
    lines = []
    for item in items:
        where = "%s:%s" % (item["filename"], item["lineno"]) if item.get("filename") else "defined where unknown"
        frame = "; its frame: `%s`" % item["frame"] if item.get("frame") else ""
        lines.append("- `%s` (%s), captured by torch.compiler.precompile (backend %s): %s%s"
                     % (item["function"], where, item.get("backend") or "unknown", _link(item["file"]), frame))
    return ["Functions captured by torch.compiler.precompile (their Python artefact):", ""] + lines + [""] if lines else []


def to_json(data: Dict[str, Any]) -> str:
    """index.json's text."""
    return json.dumps(data, indent=2, ensure_ascii=False) + "\n"


def to_markdown(data: Dict[str, Any]) -> str:
    """index.md's text: the same content, for reading."""
    lines: List[str] = [
        "# torch.compile dump",
        "",
        "torch %s, Python %s, `%s`" % (data["torch"], data["python"], " ".join(data["argv"])),
        "",
    ]
    if data.get("calls_missed") is not None:
        lines += ["Calls that missed every cache entry of their frame: %d." % data["calls_missed"], ""]
    lines += [
        "## Frames",
        "",
    ]
    if not data["frames"]:
        lines += ["No frame was compiled.", ""]
    lines += _precompiled_lines(data.get("precompiled") or [])
    for frame in data["frames"]:
        where = "%s:%s" % (frame["filename"], frame["firstlineno"])
        lines.append("### `%s` (%s)" % (frame["qualname"], where))
        lines.append("")
        if frame["resume_of"]:
            lines.append(
                "Resumes `%s` after a graph break, at line %s." % (frame["resume_of"], frame["resume_line"])
            )
            lines.append("")
        lines.append("All in one file: %s" % _link(frame["full_code"]))
        lines.append("")
        for entry in frame["entries"]:
            lines.append(_entry_line(entry))
        lines.append("")
    if data["graphs"]:
        lines += ["## Graphs", ""]
        for graph in data["graphs"]:
            files = ", ".join(
                "[%s](%s)" % (stage, name) for stage, name in sorted((graph.get("files") or {}).items())
            )
            size = "" if graph.get("nodes") is None else " %s nodes, %s ops" % (graph["nodes"], graph.get("ops"))
            lines.append(
                "- `%s` of `%s` entry %s:%s %s"
                % tuple([graph.get(key) for key in ("name", "frame", "entry")] + [size, files])
            )
            caches = cache_text(graph)
            if caches:
                lines.append("  - " + caches)
        lines.append("")
    lines += _failure_lines(data.get("failures") or [])
    if data["graph_breaks"]:
        lines += ["## Graph breaks", ""]
        for item in data["graph_breaks"]:
            who = "`%s`" % item["frame"] if item.get("frame") else "compile %s" % item.get("compile_id")
            lines.append("- %s at %s:%s: %s" % (who, item.get("filename"), item.get("lineno"), item.get("reason")))
        lines.append("")
    if data["recompiles"]:
        lines += ["## Recompiles", ""]
        for item in data["recompiles"]:
            lines.append(
                "- `%s` entry %s: %s (%s:%s)"
                % tuple(item.get(key) for key in ("frame", "entry", "reason", "filename", "lineno"))
            )
        lines.append("")
    if data["warnings"]:
        lines += ["## Warnings", ""] + ["- %s" % text for text in data["warnings"]] + [""]
    return "\n".join(lines)


def _link(name: str) -> str:
    # In backticks: the underscores of dump file names would otherwise read as emphasis.
    return "[`%s`](%s)" % (name, name)


def _entry_line(entry: Dict[str, Any]) -> str:
    how = "decompiled" if entry["decompiled"] else "not decompiled: %s" % entry["fallback_reason"]
    parts = [
        "- entry %d (compile %s): %s, %s" % (entry["index"], entry["compile_id"], _link(entry["file"]), how)
    ]
    if entry.get("graphs"):
        parts.append("graphs %s" % ", ".join("`%s`" % name for name in entry["graphs"]))
    if entry.get("calls_resume"):
        parts.append("continues in %s" % ", ".join("`%s`" % name for name in entry["calls_resume"]))
    if entry.get("recompile_reason"):
        parts.append("recompiled because `%s`" % entry["recompile_reason"])
    read = record(Entry, entry, [])
    size = guard_size(read)
    if size:
        parts.append("guard: %s" % size)
    use = entry_use(read)
    if use:
        parts.append(use)
    return "; ".join(parts)
