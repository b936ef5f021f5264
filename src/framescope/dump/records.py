"""index.json's records: declared once, written by ``framescope.dump``, read by ``framescope report``.

Each record is a dataclass whose fields are the keys of its JSON object, in the order they
are written (docs/dump.md says what each holds). :func:`to_data` turns a record into JSON-ready
data; :func:`from_data` reads the JSON back into records, checking each field's type. Readers
ignore fields they do not know, and take a missing optional field's default, so that dumps
written by other framescope versions of the same format still load.
"""
from __future__ import annotations

import dataclasses
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
    #: How many checks (leaves of its guard tree) torch makes for this entry; the guard
    #: function in the full-code file makes each of them.
    guard_count: Optional[int] = None
    #: Microseconds torch took to check this entry's guard once, as it measured right after
    #: compiling it (torch's ``guard_latency_us``; one check, caches flushed first).
    guard_latency_us: Optional[float] = None
    #: Names of the graphs this entry calls (keys into :attr:`Dump.graphs`).
    graphs: List[str] = field(default_factory=list)
    #: Ids of the resume frames this entry calls after a graph break.
    calls_resume: List[str] = field(default_factory=list)
    #: Seconds torch spent compiling this entry.
    compile_time_s: Optional[float] = None
    #: For entries after the first: why the earlier entries' guards failed, as torch states it.
    recompile_reason: Optional[str] = None
    #: With ``log_bytecode``: the files with the entry's code objects, marshalled.
    bytecode_files: List[str] = field(default_factory=list)
    #: FX operations in the graphs of this compile, as torch counts them.
    op_count: Optional[int] = None
    #: What the frame was called with when this entry was compiled: name -> {"type", "value"}
    #: (a tensor's value is its dtype and shape, ``f32[4, 8]``; other objects' is their type).
    arguments: Dict[str, Dict[str, str]] = field(default_factory=dict)
    #: Compile seconds by phase: "dynamo", "aot", "inductor", "codegen" (those torch timed).
    phases_s: Dict[str, float] = field(default_factory=dict)
    #: Compile-cache hits and misses: "inductor_fx_hits", "inductor_fx_misses", ...
    caches: Dict[str, int] = field(default_factory=dict)
    #: torch made this entry before the dump began: its file is there to read and its guard
    #: is torch's, but the entry runs torch's copy of the code (breakpoints in the file do
    #: not stop).
    compiled_before_dump: bool = False
    #: Calls this entry served while the dump was on (its guard passed); None where the
    #: interpreter cannot count them (CPython before 3.12).
    calls: Optional[int] = None


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
class Piece:
    """One piece of a graph a backend split (``split_module``)."""

    #: The dump's name for it: "piece_<k>", numbered in the order the pieces are compiled.
    piece: str
    #: Its module in the split graph ("submod_0"), when known.
    module: Optional[str] = None


@dataclass
class Kernel:
    """One kernel of Inductor's output code and the user lines it computes."""

    #: The stage whose output code defines it: "inductor", "inductor_backward", "piece_2.inductor".
    stage: str
    #: Its name there: ``cpp_fused_add_sin_0``, ``extern_kernels.mm``.
    kernel: str
    #: (file, line) of each user line whose operations it computes.
    lines: List[Tuple[str, int]] = field(default_factory=list)
    #: The FX nodes it computes, in the graph after Inductor's pre-grad passes (the names of
    #: Dynamo's graph) and after its post-grad passes; empty when torch gave no node mappings.
    pre_grad_nodes: List[str] = field(default_factory=list)
    post_grad_nodes: List[str] = field(default_factory=list)


@dataclass
class Graph:
    """An FX graph that Dynamo captured and a backend compiled."""

    #: The dump's name, ``__compiled_fn_<k>`` (numbered from 1 in the order the dump sees them).
    name: str
    #: torch's name for it (``__compiled_fn_<n>_<uuid>``, the global the code calls).
    torch_name: Optional[str] = None
    #: torch's id of the compile that captured it.
    compile_id: Optional[str] = None
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
    #: The stages whose file the program runs from.
    runs_from_file: List[str] = field(default_factory=list)
    #: Of a graph a backend split: its pieces.
    pieces: List[Piece] = field(default_factory=list)
    #: Inductor's kernels with the user lines each computes (torch's provenance tracking).
    kernels: List[Kernel] = field(default_factory=list)
    #: What each compile cache did for it: "aot_autograd", "fx_graph" (the forward or the
    #: inference graph), "fx_graph_backward" (a piece's with a "piece_<k>." prefix) ->
    #: "hit", "miss" or "bypass". Empty when no cache was asked (a backend without one,
    #: caches off).
    caches: Dict[str, str] = field(default_factory=dict)
    #: Why a cache missed or was bypassed, where torch says, by the keys of ``caches``.
    cache_reasons: Dict[str, str] = field(default_factory=dict)
    #: The compile seconds each hit saved, as torch measured them when it compiled cold.
    cache_saved_s: Dict[str, float] = field(default_factory=dict)
    #: Id of the frame whose entry calls it.
    frame: Optional[str] = None
    #: Index of that entry.
    entry: Optional[int] = None

    def served_from_cache(self) -> bool:
        """Whether torch took this graph's compiled code from a compile cache (every cache it
        asked hit, or AOTAutograd's did)."""
        results = set(self.caches.values())
        return self.caches.get("aot_autograd") == "hit" or (bool(results) and results == {"hit"})

    def lacks(self) -> List[str]:
        """The stages a cache hit left without a file: torch did not run them."""
        if self.caches.get("aot_autograd") != "hit":
            return []
        training = "fx_graph_backward" in self.caches or any("backward" in stage for stage in self.files)
        stages = ("pre_grad", "aot_joint", "aot_forward", "aot_backward") if training else ("pre_grad", "aot_forward")
        return [stage for stage in stages if stage not in self.files]

    def piece_module(self, piece: str) -> Optional[str]:
        """The split graph's module of a piece ("submod_0"), if known."""
        return next((item.module for item in self.pieces if item.piece == piece), None)


@dataclass
class GraphBreak:
    """A place where Dynamo stopped a graph and fell back to Python."""

    #: Id of the frame being compiled when it broke.
    frame: Optional[str] = None
    #: Index of the cache entry that compile made, once it has made one.
    entry: Optional[int] = None
    #: torch's id of that compile.
    compile_id: Optional[str] = None
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
    #: For a break in a compile that made no cache entry: what the frame was called with
    #: (as :attr:`Entry.arguments`).
    arguments: Dict[str, Dict[str, str]] = field(default_factory=dict)


@dataclass
class Failure:
    """A frame compile torch.compile gave up on: it made no cache entry. With
    ``fullgraph=True`` the error reached the program; otherwise the function ran without
    torch.compile (a skipped frame: see also the graph break there)."""

    #: Id of the frame, where the dump has one for its code (another compile of it made an
    #: entry); None otherwise.
    frame: Optional[str] = None
    #: torch's id of the compile that failed.
    compile_id: Optional[str] = None
    #: The function torch tried to compile: its name, file and ``def`` line.
    function: str = ""
    function_filename: Optional[str] = None
    function_lineno: Optional[int] = None
    #: torch's kind of failure, the exception's class name ("Unsupported",
    #: "BackendCompilerFailed", ...).
    kind: str = ""
    #: torch's whole explanation.
    reason: str = ""
    #: torch's graph-break code of the failure ("GB0170"), its documentation page, its hints.
    gb_code: Optional[str] = None
    docs: Optional[str] = None
    hints: List[str] = field(default_factory=list)
    #: The user's file and line where it failed, and the line's text.
    filename: Optional[str] = None
    lineno: Optional[int] = None
    source_line: Optional[str] = None
    #: What the frame was called with (as :attr:`Entry.arguments`).
    arguments: Dict[str, Dict[str, str]] = field(default_factory=dict)


@dataclass
class Limit:
    """torch's limit on a frame's cache entries, reached."""

    #: The limit's config name: "recompile_limit", "cache_size_limit", ...
    name: str = "recompile_limit"
    #: Its value, when known.
    value: Optional[int] = None


@dataclass
class Recompile:
    """A compile caused by guards of the existing entries failing."""

    #: Id of the recompiled frame.
    frame: Optional[str] = None
    #: Index of the entry the recompile made.
    entry: Optional[int] = None
    #: torch's id of the compile.
    compile_id: Optional[str] = None
    #: The failed guard, as torch states it.
    reason: str = ""
    #: The user's line where the guarded value comes from (else the ``def`` line).
    filename: Optional[str] = None
    lineno: Optional[int] = None
    source_line: Optional[str] = None
    #: Set when torch refused the recompile because the frame reached its limit on cache
    #: entries.
    limit: Optional[Limit] = None
    #: For a compile that made no cache entry: what the frame was called with (as
    #: :attr:`Entry.arguments`).
    arguments: Dict[str, Dict[str, str]] = field(default_factory=dict)
    #: torch's hints on the failed guards, in its words (the "HINT:" of a guard's comment).
    hints: List[str] = field(default_factory=list)


@dataclass
class Precompiled:
    """A function ``torch.compiler.precompile`` captured while the dump was on: the
    self-contained Python artefact torch made of it (the one it writes to ``artifact_path``)."""

    #: The qualified name of the captured function.
    function: str = ""
    #: Where the function is defined: its file and ``def`` line.
    filename: Optional[str] = None
    lineno: Optional[int] = None
    #: The dump file holding the artefact's Python source.
    file: Optional[str] = None
    #: The backend the artefact was lowered with ("inductor", "eager").
    backend: Optional[str] = None
    #: The id of the function's frame in this dump, when torch.compile compiled it too.
    frame: Optional[str] = None


@dataclass
class Dump:
    """A whole dump folder: its index.json (``path`` is not written there)."""

    #: The folder (as given, made absolute).
    path: str = field(default="", metadata={"json": False})
    format: str = FORMAT
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
    #: Calls, while the dump was on, that missed every cache entry of their frame (each
    #: then compiled a new entry, or ran uncompiled past the recompile limit); None where
    #: torch gives no way to count them.
    calls_missed: Optional[int] = None
    #: Functions torch.compiler.precompile captured while the dump was on.
    precompiled: List[Precompiled] = field(default_factory=list)
    #: Frame compiles torch.compile gave up on.
    failures: List[Failure] = field(default_factory=list)
    #: Whether the dump had ended when this index was written: False while the program
    #: runs (the index is rewritten after each compile), and for a program killed or hung.
    finished: bool = False

    def fallbacks(self) -> List[str]:
        """``"qualname entry N: reason"`` for each cache entry that runs Dynamo's bytecode."""
        return [
            "%s entry %d: %s" % (frame.qualname, entry.index, entry.fallback_reason)
            for frame in self.frames
            for entry in frame.entries
            if not entry.decompiled
        ]

    def frame(self, frame_id: Optional[str]) -> Optional[Frame]:
        return next((frame for frame in self.frames if frame.id == frame_id), None)

    def graph(self, name: Optional[str]) -> Optional[Graph]:
        return next((graph for graph in self.graphs if graph.name == name), None)

    def file(self, name: Optional[str]) -> Optional[str]:
        """The absolute path of a dump file named in the index, if it is in the folder."""
        if not name or os.path.isabs(name) or os.pardir in name.replace("\\", "/").split("/"):
            return None  # the index may not point outside the folder
        path = os.path.join(self.path, name)
        return path if os.path.isfile(path) else None


# --------------------------------------------------------------------------- writing

def to_data(value: Any) -> Any:
    """JSON-ready data of a record (its fields in declared order), recursively; a value that
    is not JSON (an object torch handed over) becomes its str."""
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {item.name: to_data(getattr(value, item.name))
                for item in dataclasses.fields(value) if item.metadata.get("json", True)}
    if isinstance(value, dict):
        return {str(key): to_data(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [to_data(item) for item in value]
    if value is None or isinstance(value, (str, bool, int, float)):
        return value
    return str(value)


def record(kind: type, values: Dict[str, Any], left_out: List[str]) -> Any:
    """A record of ``kind`` from the writer's working dict. A key the record does not declare
    is a slip in framescope, not in the program: it is left out of the record and named in
    ``left_out`` ("Kind.key"), so that the writer can say so and still write the rest."""
    names = {item.name for item in dataclasses.fields(kind)}
    left_out.extend("%s.%s" % (kind.__name__, key) for key in sorted(set(values) - names))
    return kind(**{key: value for key, value in values.items() if key in names})


# --------------------------------------------------------------------------- reading

def from_data(data: Any, path: str, index: str) -> Dump:
    """The Dump of index.json's parsed JSON (``index`` is the file, for messages); raise
    :class:`DumpError` (one line) for anything that is not this format."""
    if not isinstance(data, dict):
        raise DumpError("%s: expected a JSON object, found %s" % (index, _json_type(data)))
    if data.get("format") != FORMAT:
        raise DumpError("%s: format is %r, this framescope reads %r" % (index, data.get("format"), FORMAT))
    reader = _Reader(index)
    return Dump(
        path=path,
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
        calls_missed=reader.get(data, "calls_missed", int, None),
        precompiled=[reader.precompiled(item, "precompiled[%d]" % i)
                     for i, item in enumerate(reader.objects(data, "precompiled"))],
        failures=[reader.failure(item, "failures[%d]" % i) for i, item in enumerate(reader.objects(data, "failures"))],
        finished=reader.get(data, "finished", bool, False),
    )


def _json_type(value: Any) -> str:
    names = {dict: "an object", list: "a list", str: "a string", bool: "a boolean", int: "a number",
             float: "a number", type(None): "null"}
    return names.get(type(value), type(value).__name__)


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)  # JSON true is no number


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
        if kind is int and not _is_int(value):
            raise self.fail(where, key, "an integer", value)
        if kind is float and not (_is_int(value) or isinstance(value, float)):
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
            guard_count=self.get(obj, "guard_count", int, None, where),
            guard_latency_us=self.get(obj, "guard_latency_us", float, None, where),
            graphs=self.strings(obj, "graphs", where),
            calls_resume=self.strings(obj, "calls_resume", where),
            compile_time_s=self.get(obj, "compile_time_s", float, None, where),
            recompile_reason=self.get(obj, "recompile_reason", str, None, where),
            bytecode_files=self.strings(obj, "bytecode_files", where),
            op_count=self.get(obj, "op_count", int, None, where),
            arguments=self.arguments(obj, where),
            phases_s={str(k): float(v) for k, v in self.get(obj, "phases_s", dict, {}, where).items()
                      if _is_int(v) or isinstance(v, float)},
            caches={str(k): v for k, v in self.get(obj, "caches", dict, {}, where).items() if _is_int(v)},
            compiled_before_dump=self.get(obj, "compiled_before_dump", bool, False, where),
            calls=self.get(obj, "calls", int, None, where),
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
            torch_name=self.get(obj, "torch_name", str, None, where),
            compile_id=self.get(obj, "compile_id", str, None, where),
            backend=self.get(obj, "backend", str, None, where),
            nodes=self.get(obj, "nodes", int, None, where),
            ops=self.get(obj, "ops", int, None, where),
            inputs=self.strings(obj, "inputs", where),
            files=in_stage_order(files),
            runs_from_file=self.strings(obj, "runs_from_file", where),
            pieces=[Piece(item["piece"], item.get("module") if isinstance(item.get("module"), str) else None)
                    for item in self.objects(obj, "pieces", where) if isinstance(item.get("piece"), str)],
            kernels=[self.kernel(item, where) for item in self.objects(obj, "kernels", where)
                     if isinstance(item.get("stage"), str) and isinstance(item.get("kernel"), str)],
            caches=self.string_map(obj, "caches", where),
            cache_reasons=self.string_map(obj, "cache_reasons", where),
            cache_saved_s={key: float(value) for key, value in self.get(obj, "cache_saved_s", dict, {}, where).items()
                           if isinstance(value, (int, float)) and not isinstance(value, bool)},
            frame=self.get(obj, "frame", str, None, where),
            entry=self.get(obj, "entry", int, None, where),
        )

    def string_map(self, obj: Dict[str, Any], key: str, where: str) -> Dict[str, str]:
        found = self.get(obj, key, dict, {}, where)
        if not all(isinstance(value, str) for value in found.values()):
            raise self.fail(where, key, "an object of strings", found)
        return dict(found)

    def kernel(self, obj: Dict[str, Any], where: str) -> Kernel:
        lines = [(str(place[0]), place[1]) for place in obj.get("lines") or []
                 if isinstance(place, list) and len(place) == 2 and _is_int(place[1])]
        return Kernel(stage=obj["stage"], kernel=obj["kernel"], lines=lines,
                      pre_grad_nodes=self.strings(obj, "pre_grad_nodes", where),
                      post_grad_nodes=self.strings(obj, "post_grad_nodes", where))

    def graph_break(self, obj: Dict[str, Any], where: str) -> GraphBreak:
        return GraphBreak(
            frame=self.get(obj, "frame", str, None, where),
            compile_id=self.get(obj, "compile_id", str, None, where),
            entry=self.get(obj, "entry", int, None, where),
            reason=self.get(obj, "reason", str, "", where),
            gb_code=self.get(obj, "gb_code", str, None, where),
            docs=self.get(obj, "docs", str, None, where),
            hints=self.strings(obj, "hints", where),
            filename=self.get(obj, "filename", str, None, where),
            lineno=self.get(obj, "lineno", int, None, where),
            source_line=self.get(obj, "source_line", str, None, where),
            resume=self.get(obj, "resume", str, None, where),
            skipped=self.get(obj, "skipped", bool, False, where),
            arguments=self.arguments(obj, where),
        )

    def recompile(self, obj: Dict[str, Any], where: str) -> Recompile:
        limit = self.get(obj, "limit", dict, {}, where)
        value = limit.get("value")
        return Recompile(
            frame=self.get(obj, "frame", str, None, where),
            entry=self.get(obj, "entry", int, None, where),
            compile_id=self.get(obj, "compile_id", str, None, where),
            reason=self.get(obj, "reason", str, "", where),
            filename=self.get(obj, "filename", str, None, where),
            lineno=self.get(obj, "lineno", int, None, where),
            source_line=self.get(obj, "source_line", str, None, where),
            limit=Limit(str(limit.get("name") or "recompile_limit"), value if _is_int(value) else None)
            if limit else None,
            arguments=self.arguments(obj, where),
            hints=self.strings(obj, "hints", where),
        )

    def failure(self, obj: Dict[str, Any], where: str) -> Failure:
        return Failure(
            frame=self.get(obj, "frame", str, None, where),
            compile_id=self.get(obj, "compile_id", str, None, where),
            function=self.get(obj, "function", str, "", where),
            function_filename=self.get(obj, "function_filename", str, None, where),
            function_lineno=self.get(obj, "function_lineno", int, None, where),
            kind=self.get(obj, "kind", str, "", where),
            reason=self.get(obj, "reason", str, "", where),
            gb_code=self.get(obj, "gb_code", str, None, where),
            docs=self.get(obj, "docs", str, None, where),
            hints=self.strings(obj, "hints", where),
            filename=self.get(obj, "filename", str, None, where),
            lineno=self.get(obj, "lineno", int, None, where),
            source_line=self.get(obj, "source_line", str, None, where),
            arguments=self.arguments(obj, where),
        )

    def precompiled(self, obj: Dict[str, Any], where: str) -> Precompiled:
        return Precompiled(
            function=self.get(obj, "function", str, "", where),
            filename=self.get(obj, "filename", str, None, where),
            lineno=self.get(obj, "lineno", int, None, where),
            file=self.get(obj, "file", str, None, where),
            backend=self.get(obj, "backend", str, None, where),
            frame=self.get(obj, "frame", str, None, where),
        )


def in_stage_order(files: Dict[str, str]) -> Dict[str, str]:
    """A graph's files by stage: the whole graph's in :data:`STAGES` order, then each piece's."""
    def key(item: Tuple[int, str]) -> Tuple[int, int, int]:
        position, stage = item
        piece, base = split_stage(stage)
        number = piece_number(piece)
        order = STAGES.index(base) if base in STAGES else len(STAGES)
        return number, order, position

    ordered = sorted(enumerate(files), key=key)
    return {stage: files[stage] for _position, stage in ordered}
