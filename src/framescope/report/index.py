"""Reading a dump folder's ``index.json`` into typed records.

The file is written by ``framescope.dump`` (format ``framescope-dump/1``, described in
docs/report.md). Unknown fields are ignored, so that newer dumps still load; a missing
optional field takes its default; a field of the wrong type, broken JSON or a folder that
is no dump raises :class:`DumpError` with one line that says which.
"""
from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from typing import Any, Dict, List, Optional, Tuple

from framescope.dump.naming import piece_number, split_stage

FORMAT = "framescope-dump/1"

#: The stages a graph can have a file for, in the order the compiler goes through them
#: (Inductor's pre-grad passes run on Dynamo's graph, before AOT Autograd).
STAGES = ("dynamo", "pre_grad", "aot_joint", "aot_forward", "aot_backward", "post_grad", "inductor")


class DumpError(Exception):
    """The folder is not a readable framescope dump; the message is one line."""


@dataclass
class Entry:
    """One cache entry of a compiled frame: a guard and the bytecode that runs when it holds."""

    #: Position among the frame's entries, in order of compilation (0 is the first compile).
    index: int
    #: torch's id for the compile that made it, e.g. "0/1".
    compile_id: Optional[str] = None
    #: The dump file with the transformed code (``__transformed_code_<i>_for_<fn>.py``).
    file: Optional[str] = None
    #: False when ``file`` holds Dynamo's disassembly rather than decompiled source.
    decompiled: bool = True
    #: Why the transformed code could not be decompiled (when ``decompiled`` is False).
    fallback_reason: Optional[str] = None
    #: Name of the guard function defined in the frame's full-code file.
    guard_function: Optional[str] = None
    #: torch's own text of each part of the guard.
    guard: List[str] = field(default_factory=list)
    #: Names of the graphs this entry calls (keys into :attr:`Dump.graphs`).
    graphs: List[str] = field(default_factory=list)
    #: Ids of the resume frames this entry calls after a graph break.
    calls_resume: List[str] = field(default_factory=list)
    #: Seconds torch spent compiling this entry.
    compile_time_s: Optional[float] = None
    #: For entries after the first: why the earlier entries' guards failed, as torch states it.
    recompile_reason: Optional[str] = None
    #: What the frame was called with when this entry was compiled: name -> {"type", "value"}
    #: (a tensor's value is its dtype and shape, ``f32[4, 8]``; other objects' is their type).
    arguments: Dict[str, Dict[str, str]] = field(default_factory=dict)
    #: Compile seconds by phase: "dynamo", "aot", "inductor", "codegen" (those torch timed).
    phases_s: Dict[str, float] = field(default_factory=dict)
    #: Compile-cache hits and misses: "inductor_fx_hits", "inductor_fx_misses", ...
    caches: Dict[str, int] = field(default_factory=dict)


@dataclass
class Frame:
    """A code object that torch.compile compiled, with its cache entries."""

    #: File stem of its dump files, unique in the dump.
    id: str
    #: The code object's ``co_name``.
    name: str = ""
    #: Qualified name, e.g. "Model.forward".
    qualname: str = ""
    #: The source file of the original code.
    filename: Optional[str] = None
    #: Line of the ``def`` in ``filename``.
    firstlineno: Optional[int] = None
    #: For a resume function after a graph break: the id of the frame it continues.
    resume_of: Optional[str] = None
    #: ... and the user line where it resumes.
    resume_line: Optional[int] = None
    #: The dump file with guards, compiled-function stubs and code of this frame.
    full_code: Optional[str] = None
    #: Cache entries in order of compilation.
    entries: List[Entry] = field(default_factory=list)


@dataclass
class Graph:
    """An FX graph that Dynamo captured and a backend compiled."""

    #: ``__compiled_fn_<n>``.
    name: str
    #: Id of the frame whose entry calls it.
    frame: Optional[str] = None
    #: Index of that entry.
    entry: Optional[int] = None
    #: The backend that compiled it, e.g. "inductor" or "eager".
    backend: Optional[str] = None
    #: FX nodes in the Dynamo graph.
    nodes: Optional[int] = None
    #: Of those, the ``call_*`` nodes (the operations).
    ops: Optional[int] = None
    #: Shapes and dtypes of the example inputs, e.g. "f32[4]".
    inputs: List[str] = field(default_factory=list)
    #: Dump file per stage: keys from :data:`STAGES` in that order, other stages of the graph,
    #: then each piece's (``piece_<k>.<stage>``) of a graph a backend split, piece by piece.
    files: Dict[str, str] = field(default_factory=dict)
    #: Of a graph a backend split: "piece_<k>" -> its module in the split graph ("submod_0").
    pieces: Dict[str, str] = field(default_factory=dict)
    #: Inductor's kernels with the user lines each computes (torch's provenance tracking).
    kernels: List["Kernel"] = field(default_factory=list)


@dataclass
class Kernel:
    """One kernel of Inductor's output code and the user lines it computes."""

    #: The stage whose output code defines it: "inductor", "inductor_backward", "piece_2.inductor".
    stage: str
    #: Its name there: ``cpp_fused_add_sin_0``, ``extern_kernels.mm``.
    name: str
    #: (file, line) of each user line whose operations it computes.
    lines: List[Tuple[str, int]] = field(default_factory=list)


@dataclass
class GraphBreak:
    """A place where Dynamo stopped a graph and fell back to Python."""

    #: Id of the frame being compiled when it broke.
    frame: Optional[str] = None
    #: torch's explanation.
    reason: str = ""
    #: torch's graph-break code ("GB0059"; torch 2.8+), None where torch gave none.
    gb_code: Optional[str] = None
    #: The page of torch's documentation for that code.
    docs: Optional[str] = None
    #: torch's hints on how to avoid the break, in its words.
    hints: List[str] = field(default_factory=list)
    #: The user's file and line of the break.
    filename: Optional[str] = None
    lineno: Optional[int] = None
    #: The text of that line.
    source_line: Optional[str] = None
    #: Id of the resume frame that carries on after the break.
    resume: Optional[str] = None
    #: Dynamo gave up on the whole function at this break: no compile of it made a cache
    #: entry, so every call runs without torch.compile.
    skipped: bool = False


@dataclass
class Recompile:
    """A compile caused by guards of the existing entries failing."""

    #: Id of the recompiled frame.
    frame: Optional[str] = None
    #: Index of the entry the recompile made.
    entry: Optional[int] = None
    #: The failed guard, as torch states it.
    reason: str = ""
    #: The user's line where the guarded value comes from (else the ``def`` line).
    filename: Optional[str] = None
    lineno: Optional[int] = None
    source_line: Optional[str] = None
    #: torch's id of the compile.
    compile_id: Optional[str] = None
    #: For a compile that made no cache entry: what the frame was called with (as
    #: :attr:`Entry.arguments`).
    arguments: Dict[str, Dict[str, str]] = field(default_factory=dict)
    #: Set when torch refused the recompile because the frame reached its limit on cache
    #: entries: the limit's config name ("recompile_limit") and value (None if not given).
    limit_name: Optional[str] = None
    limit_value: Optional[int] = None


@dataclass
class Dump:
    """A whole dump folder."""

    #: The folder (as given, made absolute).
    path: str
    #: Versions and command line of the run that wrote it.
    torch: Optional[str] = None
    python: Optional[str] = None
    argv: List[str] = field(default_factory=list)
    frames: List[Frame] = field(default_factory=list)
    graphs: List[Graph] = field(default_factory=list)
    graph_breaks: List[GraphBreak] = field(default_factory=list)
    recompiles: List[Recompile] = field(default_factory=list)
    #: What the dump could not do, e.g. an entry that could not be decompiled.
    warnings: List[str] = field(default_factory=list)

    def fallbacks(self) -> List[str]:
        """``"qualname entry N: reason"`` for each cache entry that runs Dynamo's bytecode."""
        return [
            "%s entry %d: %s" % (frame.qualname, entry.index, entry.fallback_reason)
            for frame in self.frames
            for entry in frame.entries
            if not entry.decompiled
        ]

    def frame(self, frame_id: Optional[str]) -> Optional[Frame]:
        for frame in self.frames:
            if frame.id == frame_id:
                return frame
        return None

    def graph(self, name: Optional[str]) -> Optional[Graph]:
        for graph in self.graphs:
            if graph.name == name:
                return graph
        return None

    def file(self, name: Optional[str]) -> Optional[str]:
        """The absolute path of a dump file named in the index, if it is in the folder."""
        if not name or os.path.isabs(name) or os.pardir in name.replace("\\", "/").split("/"):
            return None  # the index may not point outside the folder
        path = os.path.join(self.path, name)
        return path if os.path.isfile(path) else None


def dumps_under(folder: str) -> List[Dump]:
    """Every dump folder at or below ``folder`` (each holds an index.json that loads), sorted."""
    found = []
    for parent, _dirs, files in sorted(os.walk(folder)):
        if "index.json" in files:
            try:
                found.append(load_dump(parent))
            except DumpError:
                continue  # an index.json of something else, or a broken dump
    return found


def load_dump(path: str) -> Dump:
    """Read ``path/index.json``; raise :class:`DumpError` (one line) if that fails. A folder
    of dump files without index.json loads from the files' names (see recover)."""
    if not os.path.exists(path):
        raise DumpError("%s does not exist" % path)
    if not os.path.isdir(path):
        raise DumpError("%s is not a folder" % path)
    # recover reads these records too: imported here, not at the top.
    from framescope.report import recover

    index = os.path.join(path, "index.json")
    if not os.path.isfile(index):
        names = recover.dump_files(path)
        if names:
            return recover.from_files(path, names)
        raise DumpError("%s has no index.json: not a framescope dump folder" % path)
    try:
        with open(index, encoding="utf-8") as handle:
            data = json.load(handle)
    except OSError as err:
        raise DumpError("cannot read %s: %s" % (index, err.strerror or err))
    except UnicodeDecodeError as err:
        raise DumpError("%s is not UTF-8: %s" % (index, err.reason))
    except ValueError as err:  # json.JSONDecodeError
        raise DumpError("%s is not valid JSON: %s" % (index, err))
    if not isinstance(data, dict):
        raise DumpError("%s: expected a JSON object, found %s" % (index, _json_type(data)))
    if data.get("format") != FORMAT:
        raise DumpError("%s: format is %r, this framescope reads %r" % (index, data.get("format"), FORMAT))
    reader = _Reader(index)
    dump = Dump(
        path=os.path.abspath(path),
        torch=reader.get(data, "torch", str, None),
        python=reader.get(data, "python", str, None),
        argv=reader.strings(data, "argv"),
        frames=[reader.frame(item, "frames[%d]" % i) for i, item in enumerate(reader.objects(data, "frames"))],
        graphs=[reader.graph(item, "graphs[%d]" % i) for i, item in enumerate(reader.objects(data, "graphs"))],
        graph_breaks=[reader.graph_break(item, "graph_breaks[%d]" % i)
                      for i, item in enumerate(reader.objects(data, "graph_breaks"))],
        recompiles=[reader.recompile(item, "recompiles[%d]" % i)
                    for i, item in enumerate(reader.objects(data, "recompiles"))],
        warnings=reader.strings(data, "warnings"),
    )
    missing = recover.missing_files(dump)
    if missing:
        dump.warnings.append(
            "index.json names %d files that are not in the folder (the program was killed, or the "
            "disk refused them): %s" % (len(missing), ", ".join(missing)))
    return dump


def _json_type(value: Any) -> str:
    names = {dict: "an object", list: "a list", str: "a string", bool: "a boolean", int: "a number",
             float: "a number", type(None): "null"}
    return names.get(type(value), type(value).__name__)


class _Reader:
    """Typed access to the JSON, with errors that name the offending field."""

    def __init__(self, index: str) -> None:
        #: Path of the index file, for messages.
        self.index = index

    def fail(self, where: str, key: str, wanted: str, value: Any) -> DumpError:
        return DumpError("%s: %s%s should be %s, found %s" % (
            self.index, where + "." if where else "", key, wanted, _json_type(value)))

    def get(self, obj: Dict[str, Any], key: str, kind: type, default: Any, where: str = "") -> Any:
        value = obj.get(key)
        if value is None:
            return default
        # bool is an int subclass; JSON true is no line number.
        if kind is int and (isinstance(value, bool) or not isinstance(value, int)):
            raise self.fail(where, key, "an integer", value)
        if kind is float and (isinstance(value, bool) or not isinstance(value, (int, float))):
            raise self.fail(where, key, "a number", value)
        if kind in (str, bool, dict) and not isinstance(value, kind):
            raise self.fail(where, key, {str: "a string", bool: "true or false", dict: "an object"}[kind], value)
        return float(value) if kind is float else value

    def strings(self, obj: Dict[str, Any], key: str, where: str = "") -> List[str]:
        value = obj.get(key)
        if value is None:
            return []
        if not isinstance(value, list) or not all(isinstance(item, str) for item in value):
            raise self.fail(where, key, "a list of strings", value)
        return list(value)

    def objects(self, obj: Dict[str, Any], key: str, where: str = "") -> List[Dict[str, Any]]:
        value = obj.get(key)
        if value is None:
            return []
        if not isinstance(value, list) or not all(isinstance(item, dict) for item in value):
            raise self.fail(where, key, "a list of objects", value)
        return value

    def frame(self, obj: Dict[str, Any], where: str) -> Frame:
        frame_id = self.get(obj, "id", str, None, where)
        if not frame_id:
            raise DumpError("%s: %s has no id" % (self.index, where))
        return Frame(
            id=frame_id,
            name=self.get(obj, "name", str, frame_id, where),
            qualname=self.get(obj, "qualname", str, "", where) or self.get(obj, "name", str, frame_id, where),
            filename=self.get(obj, "filename", str, None, where),
            firstlineno=self.get(obj, "firstlineno", int, None, where),
            resume_of=self.get(obj, "resume_of", str, None, where),
            resume_line=self.get(obj, "resume_line", int, None, where),
            full_code=self.get(obj, "full_code", str, None, where),
            entries=[self.entry(item, "%s.entries[%d]" % (where, i), i)
                     for i, item in enumerate(self.objects(obj, "entries", where))],
        )

    def entry(self, obj: Dict[str, Any], where: str, position: int) -> Entry:
        return Entry(
            index=self.get(obj, "index", int, position, where),
            compile_id=self.get(obj, "compile_id", str, None, where),
            file=self.get(obj, "file", str, None, where),
            decompiled=self.get(obj, "decompiled", bool, True, where),
            fallback_reason=self.get(obj, "fallback_reason", str, None, where),
            guard_function=self.get(obj, "guard_function", str, None, where),
            guard=self.strings(obj, "guard", where),
            graphs=self.strings(obj, "graphs", where),
            calls_resume=self.strings(obj, "calls_resume", where),
            compile_time_s=self.get(obj, "compile_time_s", float, None, where),
            recompile_reason=self.get(obj, "recompile_reason", str, None, where),
            arguments=self.arguments(obj, where),
            phases_s={str(k): float(v) for k, v in self.get(obj, "phases_s", dict, {}, where).items()
                      if isinstance(v, (int, float)) and not isinstance(v, bool)},
            caches={str(k): v for k, v in self.get(obj, "caches", dict, {}, where).items()
                    if isinstance(v, int) and not isinstance(v, bool)},
        )

    def arguments(self, obj: Dict[str, Any], where: str) -> Dict[str, Dict[str, str]]:
        found = self.get(obj, "arguments", dict, {}, where)
        return {str(name): {"type": str(value.get("type", "")), "value": str(value.get("value", ""))}
                for name, value in found.items() if isinstance(value, dict)}

    def graph(self, obj: Dict[str, Any], where: str) -> Graph:
        name = self.get(obj, "name", str, None, where)
        if not name:
            raise DumpError("%s: %s has no name" % (self.index, where))
        files = self.get(obj, "files", dict, {}, where)
        if not all(isinstance(value, str) for value in files.values()):
            raise self.fail(where, "files", "an object of file names", files)
        return Graph(
            name=name,
            frame=self.get(obj, "frame", str, None, where),
            entry=self.get(obj, "entry", int, None, where),
            backend=self.get(obj, "backend", str, None, where),
            nodes=self.get(obj, "nodes", int, None, where),
            ops=self.get(obj, "ops", int, None, where),
            inputs=self.strings(obj, "inputs", where),
            files=in_stage_order(files),
            pieces={piece["piece"]: piece["module"] for piece in self.objects(obj, "pieces", where)
                    if isinstance(piece.get("piece"), str) and isinstance(piece.get("module"), str)},
            kernels=[self.kernel(item) for item in self.objects(obj, "kernels", where)
                     if isinstance(item.get("stage"), str) and isinstance(item.get("kernel"), str)],
        )

    @staticmethod
    def kernel(obj: Dict[str, Any]) -> Kernel:
        lines = [(str(place[0]), place[1]) for place in obj.get("lines") or []
                 if isinstance(place, list) and len(place) == 2 and isinstance(place[1], int)]
        return Kernel(stage=obj["stage"], name=obj["kernel"], lines=lines)

    def graph_break(self, obj: Dict[str, Any], where: str) -> GraphBreak:
        return GraphBreak(
            frame=self.get(obj, "frame", str, None, where),
            reason=self.get(obj, "reason", str, "", where),
            gb_code=self.get(obj, "gb_code", str, None, where),
            docs=self.get(obj, "docs", str, None, where),
            hints=self.strings(obj, "hints", where),
            filename=self.get(obj, "filename", str, None, where),
            lineno=self.get(obj, "lineno", int, None, where),
            source_line=self.get(obj, "source_line", str, None, where),
            resume=self.get(obj, "resume", str, None, where),
            skipped=self.get(obj, "skipped", bool, False, where),
        )

    def recompile(self, obj: Dict[str, Any], where: str) -> Recompile:
        limit = self.get(obj, "limit", dict, {}, where)
        value = limit.get("value")
        return Recompile(
            frame=self.get(obj, "frame", str, None, where),
            entry=self.get(obj, "entry", int, None, where),
            reason=self.get(obj, "reason", str, "", where),
            filename=self.get(obj, "filename", str, None, where),
            lineno=self.get(obj, "lineno", int, None, where),
            source_line=self.get(obj, "source_line", str, None, where),
            compile_id=self.get(obj, "compile_id", str, None, where),
            arguments=self.arguments(obj, where),
            limit_name=(str(limit.get("name") or "recompile_limit")) if limit else None,
            limit_value=value if isinstance(value, int) and not isinstance(value, bool) else None,
        )


def in_stage_order(files: Dict[str, str]) -> Dict[str, str]:
    def key(item: Tuple[int, str]) -> Tuple[int, int, int]:
        position, stage = item
        piece, base = split_stage(stage)
        number = piece_number(piece)
        order = STAGES.index(base) if base in STAGES else len(STAGES)
        return number, order, position

    ordered = sorted(enumerate(files), key=key)
    return {stage: files[stage] for _position, stage in ordered}
