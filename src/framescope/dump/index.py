"""index.json and index.md: what a dump folder holds, for programs and for people.

index.json (``"format": "framescope-dump/1"``)::

    {"format", "torch", "python", "argv",
     "frames": [{"id", "name", "qualname", "filename", "firstlineno", "resume_of",
                 "resume_line", "full_code",
                 "entries": [{"index", "compile_id", "file", "decompiled", "fallback_reason",
                              "guard_function", "guard", "graphs", "calls_resume",
                              "compile_time_s", "recompile_reason", "bytecode_files",
                              "arguments", "phases_s", "caches"}]}],
     "graphs": [{"name", "torch_name", "frame", "entry", "compile_id", "backend", "nodes",
                 "ops", "inputs", "files", "runs_from_file", "pieces"}],
     "graph_breaks": [{"frame", "reason", "gb_code", "docs", "hints", "filename", "lineno", "source_line",
                       "resume", "skipped"}],
     "recompiles": [{"frame", "entry", "compile_id", "reason", "filename", "lineno", "source_line",
                     "limit", "arguments"}],
     "warnings": [str]}

Readers must ignore fields they do not know; fields may be added.
"""
from __future__ import annotations

import json
import platform
import sys
from typing import TYPE_CHECKING, Any, Dict, List

if TYPE_CHECKING:
    from framescope.dump.session import DumpSession

FORMAT = "framescope-dump/1"


def build(session: "DumpSession") -> Dict[str, Any]:
    """The index of a session as plain JSON-ready data."""
    torch = sys.modules.get("torch")
    return {
        "format": FORMAT,
        "torch": getattr(torch, "__version__", None),
        "python": platform.python_version(),
        "argv": list(session.argv),
        "frames": [_plain(frame) for frame in session.frames],
        "graphs": [_plain(session.resolve(graph)) for graph in session.graphs],
        "graph_breaks": [_plain(_graph_break(session.resolve(item))) for item in session.graph_breaks],
        "recompiles": [_plain(session.resolve(item)) for item in session.recompiles],
        "warnings": list(session.warnings),
    }


def _graph_break(info: Dict[str, Any]) -> Dict[str, Any]:
    """A graph break with ``skipped``: no compile of its frame made a cache entry, so Dynamo
    gave up on the whole function and it runs without torch.compile."""
    info["skipped"] = info.get("frame") is None and info.get("compile_id") is not None
    return info


def _plain(value: Any) -> Any:
    """A JSON-ready copy: dicts, lists, str, numbers, bool, None; anything else as its str."""
    if isinstance(value, dict):
        return {str(key): _plain(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(item) for item in value]
    if value is None or isinstance(value, (str, bool, int, float)):
        return value
    return str(value)


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
        "## Frames",
        "",
    ]
    if not data["frames"]:
        lines += ["No frame was compiled.", ""]
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
            lines.append(
                "- `%s` of `%s` entry %s: %s nodes, %s ops %s"
                % tuple([graph.get(key) for key in ("name", "frame", "entry", "nodes", "ops")] + [files])
            )
        lines.append("")
    if data["graph_breaks"]:
        lines += ["## Graph breaks", ""]
        for item in data["graph_breaks"]:
            lines.append(
                "- `%s` at %s:%s: %s" % tuple(item.get(key) for key in ("frame", "filename", "lineno", "reason"))
            )
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
    return "; ".join(parts)
