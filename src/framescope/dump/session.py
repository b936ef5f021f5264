"""A dump session: the folder, the lock, the names, and everything that goes into index.json.

One :class:`DumpSession` lives for one ``with framescope.dump(DIR):`` block. framescope's
hooks on torch.compile call it from whatever thread compiles; every method takes the
session's lock, so records and files never interleave.

Records are plain dicts shaped like the entries of index.json (see index.py). Code that
records something before framescope knows the frame or the cache entry it belongs to may
put ``"code"`` (the original code object) or ``"compile_id"`` (torch's id, "0/1") in the
dict instead of ``"frame"`` / ``"entry"``: the session fills those in as soon as the frame
or entry exists. ``"code"`` never reaches index.json.
"""
from __future__ import annotations

import linecache
import os
import sys
import threading
import types
import warnings
from pathlib import Path
from typing import Any, Callable, Dict, List, Optional, Tuple

from framescope import torch_text
from framescope.dump import index as _index
from framescope.dump import naming
from framescope.dump.folder import DumpFolder, FolderLock, NotWritten, remove_stale
from framescope.dump.naming import FrameIds, full_code_file, graph_name
from framescope.dump.source_cache import SourceCache


class DumpWarning(UserWarning):
    """framescope.dump could not do something (decompile an entry, write a file, ...).

    The program goes on unchanged; details are in the dump's index.json under ``warnings``.
    """


Event = Dict[str, Any]


class FrameState:
    """What the session keeps about one compiled code object besides its index.json record."""

    def __init__(self, code: types.CodeType, record: Dict[str, Any]) -> None:
        #: The original code object (a user function, or a resume function torch made).
        self.code = code
        #: The frame's record in index.json ``frames``.
        self.record = record
        #: Per entry, in compile order: the code torch's cache entry runs (the code compiled
        #: from the dumped file, or Dynamo's own when that failed).
        self.entry_codes: List[types.CodeType] = []
        #: Per entry: the decompiled ``def`` source, or None where decompiling failed.
        self.entry_sources: List[Optional[str]] = []
        #: Global name -> code of each resume function the entries call after a graph break.
        self.resume_globals: Dict[str, types.CodeType] = {}
        #: The original function's source for the full-code file (None until looked up,
        #: and where there is none).
        self.original_source: Optional[str] = None
        #: Entry index -> the leaves of torch's guard tree for it (torch_internals.GuardLeaf),
        #: once torch has built the entry.
        self.guard_leaves: Dict[int, List[Any]] = {}
        #: What the full-code file showed when last written (fullcode.write), or None.
        self.full_code_shown: Optional[tuple] = None


class DumpSession:
    """The state of one dump: where files go and what index.json says."""

    def __init__(
        self,
        root: "os.PathLike[str] | str",
        on_event: Optional[Callable[[Event], None]] = None,
        log_bytecode: bool = False,
        caches: bool = True,
    ) -> None:
        #: The folder the user named, absolute. Under torch.distributed with more than one
        #: process, each rank writes into ``root/rank_<r>/``.
        self.root = Path(os.path.abspath(os.fspath(root)))
        #: Taken by every method; re-entrant so that recording code may call back.
        self.lock = threading.RLock()
        #: Called with a small dict after each compile (see DumpSession.emit); None for none.
        self.on_event = on_event
        #: Whether each entry's code objects are also written, marshalled (see dump()).
        self.log_bytecode = log_bytecode
        #: Whether torch.compile's compile caches stay on (see dump()).
        self.caches = caches
        #: index.json ``frames``: one record per compiled code object, in compile order.
        self.frames: List[Dict[str, Any]] = []
        #: index.json ``graphs``.
        self.graphs: List[Dict[str, Any]] = []
        #: index.json ``graph_breaks``.
        self.graph_breaks: List[Dict[str, Any]] = []
        #: index.json ``recompiles``.
        self.recompiles: List[Dict[str, Any]] = []
        #: index.json ``warnings``.
        self.warnings: List[str] = []
        #: index.json ``finished``: the dump has ended (its last index is written).
        self.finished = False
        #: index.json ``failures``: compiles torch.compile gave up on.
        self.failures: List[Dict[str, Any]] = []
        #: index.json ``calls_missed``: calls that missed every cache entry of their frame.
        self.calls_missed: Optional[int] = None
        #: Decompiled transformed code kept between runs (source_cache), while the compile
        #: caches are on; None: decompile every entry.
        self.sources: Optional[SourceCache] = None
        #: index.json ``precompiled``, each with ``code``: the captured function's code, for
        #: the frame it names once the index is written.
        self.precompiled: List[Dict[str, Any]] = []
        #: sys.argv when the session started.
        self.argv: List[str] = list(sys.argv)
        #: id(original code) -> its FrameState. The code objects are kept alive by the
        #: states, so ids are never reused while the session lives.
        self.states: Dict[int, FrameState] = {}
        #: torch's name of each graph seen (``__compiled_fn_<n>_<uuid>``) -> this dump's name
        #: for it (``__compiled_fn_<k>``), in the order first seen.
        self.graph_names: Dict[str, str] = {}
        #: torch's name of each graph seen -> the names its listing gives its inputs (``l_x_``,
        #: ``l_self_modules_fc1_parameters_weight_``): what the transformed code calls them.
        self.graph_inputs: Dict[str, List[str]] = {}
        self._graph_count = 0
        self._ids = FrameIds()
        self._folder: Optional[DumpFolder] = None
        self._lock: Optional[FolderLock] = None
        self._warned = False
        # compile id -> (frame record, entry record) of each cache entry made so far.
        self._by_compile_id: Dict[str, Tuple[Dict[str, Any], Dict[str, Any]]] = {}
        # compile id -> fields to set on its entry once it exists (update_entry came first).
        self._early_fields: Dict[str, Dict[str, Any]] = {}

    # ------------------------------------------------------------------ the folder

    @property
    def directory(self) -> Path:
        """The folder files go into (created on first use).

        Decided on first use: ``root/rank_<r>`` when torch.distributed runs with more than
        one process (from the initialised process group, else the RANK / WORLD_SIZE
        variables that launchers set; ``root`` itself when it is named ``rank_<r>`` already),
        ``root`` otherwise; ``process_<pid>`` inside it while another program dumps there.
        Files an earlier dump left there (names a dump writes, nothing else) are removed
        then, so that the folder shows this run only.
        """
        return self.folder.path

    @property
    def folder(self) -> DumpFolder:
        """The DumpFolder of :attr:`directory` (opened on first use)."""
        with self.lock:
            if self._folder is None:
                self._folder = self._open_folder()
            return self._folder

    @property
    def opened_folder(self) -> Optional[Path]:
        """The folder files went into, or None while nothing was written (none was made)."""
        with self.lock:
            return None if self._folder is None else self._folder.path

    def _open_folder(self) -> DumpFolder:
        rank = _distributed_rank()
        path = self.root
        if rank is not None and self.root.name != naming.rank_folder(rank):  # not named per rank already
            path = self.root / naming.rank_folder(rank)
        folder = DumpFolder(path)
        folder.open()
        if folder.stopped is not None:
            self._warn_not_written(folder, folder.stopped)
            return folder
        self._lock = FolderLock.take(path)
        if self._lock is None:
            # Another program dumps into this folder now: keep out of its files.
            holder = FolderLock.holder(path)
            folder = DumpFolder(path / ("process_%d" % os.getpid()))
            folder.open()
            self._lock = FolderLock.take(folder.path)
            self.warn("another program%s is dumping into %s; this one writes into %s"
                      % (" (pid %s)" % holder if holder else "", path, folder.path))
        remove_stale(folder.path)
        return folder

    def release(self) -> None:
        """Let other programs use the folder (at the end of the dump)."""
        with self.lock:
            lock, self._lock = self._lock, None
        if lock is not None:
            lock.release()

    def write(self, name: str, text: "str | bytes", retry: bool = False) -> Path:
        """Write ``text`` (or bytes) to the file ``name`` of the dump folder, atomically; return
        its path.

        ``name`` is relative to the folder (``a/b.py`` makes ``a/``). Readers never see a
        half-written file (see DumpFolder). A file the disk refuses raises NotWritten; the
        first refusal of a folder that stops taking files warns, once.
        """
        parts = Path(name).parts
        if not parts or Path(name).is_absolute() or ".." in parts:
            raise ValueError("a dump file name must be relative and stay inside the dump: %r" % name)
        with self.lock:
            folder = self.folder
            try:
                path = folder.write(name, text, retry=retry)
            except NotWritten as exc:
                if exc.first and folder.stopped is not None:
                    self._warn_not_written(folder, str(exc))
                raise
        # pdb and tracebacks read files through linecache: a debugger that read this file's
        # earlier text (a breakpoint set before this run) must show the new one.
        linecache.checkcache(str(path))
        return path

    def _warn_not_written(self, folder: DumpFolder, why: str) -> None:
        """The one warning that the dump folder stopped taking files."""
        message = "framescope.dump: cannot write into %s (%s); the dump stops writing there and the " \
            "program goes on unchanged" % (folder.path, why)
        with self.lock:
            self.warnings.append(message[len("framescope.dump: "):])
            self._warned = True  # the callers' own warnings about this failure stay quiet
        warnings.warn(message, DumpWarning, stacklevel=_user_stacklevel())

    def path_of(self, name: str) -> Path:
        """Where the dump file ``name`` is (or will be)."""
        return self.directory / name

    # ------------------------------------------------------------------ graph names

    def graph_name(self, torch_name: Optional[str]) -> str:
        """This dump's name for the graph torch named ``torch_name``.

        torch numbers graphs with a counter of the whole process (and adds a uuid), so a
        second dump in one process (pdb restarting the program, a notebook) would get other
        names than a fresh run. The dump numbers graphs itself instead, from 1, in the order
        it first sees them: ``__compiled_fn_1``, ``__compiled_fn_2``, ... None (a graph
        torch gave no name) gets the next number.
        """
        with self.lock:
            known = self.graph_names.get(torch_name) if torch_name is not None else None
            if known is not None:
                return known
            self._graph_count += 1
            name = graph_name(self._graph_count)
            if torch_name is not None:
                self.graph_names[torch_name] = name
            return name

    # ------------------------------------------------------------------ frames and entries

    def frame_id(self, code: types.CodeType) -> Optional[str]:
        """The ``<fn>`` id of an original code object, or None if it has not been compiled."""
        with self.lock:
            state = self.states.get(id(code))
            return None if state is None else state.record["id"]

    def frame_state(self, code: types.CodeType) -> FrameState:
        """The FrameState of an original code object, made (with a fresh id) on first use."""
        with self.lock:
            state = self.states.get(id(code))
            if state is None:
                frame_id = self._ids.new(code.co_name)
                record = {
                    "id": frame_id,
                    "name": code.co_name,
                    "qualname": naming.qualname(code),
                    "filename": code.co_filename,
                    "firstlineno": code.co_firstlineno,
                    "resume_of": None,
                    "resume_line": None,
                    "full_code": full_code_file(frame_id),
                    "entries": [],
                }
                state = self.states[id(code)] = FrameState(code, record)
                self.frames.append(record)
            return state

    def add_entry(self, state: FrameState, entry: Dict[str, Any]) -> None:
        """Append a cache entry record to a frame; apply fields recorded early for its compile."""
        with self.lock:
            state.record["entries"].append(entry)
            compile_id = entry.get("compile_id")
            if compile_id is not None:
                self._by_compile_id[compile_id] = (state.record, entry)
                entry.update(self._early_fields.pop(compile_id, {}))

    def entry_for_compile_id(self, compile_id: str) -> Optional[Dict[str, Any]]:
        """``{"frame": <id>, "entry": <index>, "file": ...}`` for torch's compile id, or None.

        None until the compile has made its cache entry: torch compiles a frame's graphs
        before framescope sees the frame's bytecode.
        """
        with self.lock:
            found = self._by_compile_id.get(str(compile_id))
            if found is None:
                return None
            frame, entry = found
            return {"frame": frame["id"], "entry": entry["index"], "file": entry["file"]}

    def update_entry(self, compile_id: str, **fields: Any) -> None:
        """Set fields of the cache entry made by a compile (``compile_time_s``,
        ``recompile_reason``, ...); kept until that entry exists if it does not yet."""
        with self.lock:
            found = self._by_compile_id.get(str(compile_id))
            if found is None:
                self._early_fields.setdefault(str(compile_id), {}).update(fields)
            else:
                found[1].update(fields)

    # ------------------------------------------------------------------ other records

    def record_graph(self, info: Dict[str, Any]) -> None:
        """Add a graph to index.json ``graphs``, or update the one with the same ``name``."""
        with self.lock:
            name = info.get("name")
            for graph in self.graphs:
                if name is not None and graph.get("name") == name:
                    files = dict(graph.get("files") or {})
                    files.update(info.get("files") or {})
                    graph.update(info)
                    if files:
                        graph["files"] = files
                    return
            self.graphs.append(dict(info))

    def record_graph_break(self, info: Dict[str, Any]) -> None:
        """Add a graph break to index.json ``graph_breaks``."""
        with self.lock:
            self.graph_breaks.append(dict(info))

    def record_failure(self, info: Dict[str, Any]) -> None:
        """Add a compile torch.compile gave up on to index.json ``failures``."""
        with self.lock:
            self.failures.append(dict(info))

    def record_recompile(self, info: Dict[str, Any]) -> None:
        """Add a recompile to index.json ``recompiles``."""
        with self.lock:
            self.recompiles.append(dict(info))

    def record_precompiled(self, function: Any, python_code: str, backend: Optional[str]) -> None:
        """Write the Python artefact ``torch.compiler.precompile`` made of ``function`` and
        add it to index.json ``precompiled``."""
        with self.lock:
            code = getattr(function, "__code__", None)
            name = getattr(function, "__qualname__", None) or getattr(code, "co_name", None) or "function"
            file = naming.precompiled_file(len(self.precompiled) + 1, name.rpartition(".")[2])
            self.write(file, python_code)
            self.precompiled.append({
                "function": name,
                "filename": getattr(code, "co_filename", None),
                "lineno": getattr(code, "co_firstlineno", None),
                "file": file,
                "backend": backend,
                "code": code,
            })

    def warn(self, message: str) -> None:
        """Record something framescope could not do; the first one also becomes a DumpWarning."""
        message = " ".join(str(message).split())
        with self.lock:
            if message in self.warnings:
                return  # the same problem met again (each save of an index that cannot be written)
            self.warnings.append(message)
            first, self._warned = not self._warned, True
        if first:
            folder = self._folder
            listed = "" if folder is not None and (folder.stopped or "index.json" in folder.refused) else \
                "; every such problem is listed in %s" % ((folder.path if folder else self.root) / "index.json")
            warnings.warn(
                "framescope.dump: %s (the program is not affected%s)" % (message, listed),
                DumpWarning,
                stacklevel=_user_stacklevel(),
            )

    # ------------------------------------------------------------------ output

    def resolve(self, record: Dict[str, Any]) -> Dict[str, Any]:
        """``record`` with ``frame``/``entry`` filled in from ``code``/``compile_id`` where known."""
        with self.lock:
            out = dict(record)
            code = out.pop("code", None)
            if out.get("frame") is None and isinstance(code, types.CodeType):
                out["frame"] = self.frame_id(code)
            compile_id = out.get("compile_id")
            if compile_id is not None and (out.get("frame") is None or out.get("entry") is None):
                found = self._by_compile_id.get(str(compile_id))
                if found is not None:
                    if out.get("frame") is None:
                        out["frame"] = found[0]["id"]
                    if out.get("entry") is None:
                        out["entry"] = found[1]["index"]
                else:
                    self._resolve_without_entry(out, str(compile_id))
            return out

    def _resolve_without_entry(self, out: Dict[str, Any], compile_id: str) -> None:
        """A compile that made no cache entry (refused at the recompile limit, or nothing
        to compile): its frame is the one torch's other compiles of that frame number made,
        and what the frame was called with is kept with the record."""
        if out.get("frame") is None:
            number = torch_text.compile_frame(compile_id)
            for other, (frame, _entry) in self._by_compile_id.items():
                if torch_text.compile_frame(other) == number:
                    out["frame"] = frame["id"]
                    break
        arguments = self._early_fields.get(compile_id, {}).get("arguments")
        if arguments is not None and "arguments" not in out:
            out["arguments"] = arguments

    def save(self, final: bool = False) -> None:
        """Write index.json and index.md (each atomically); ``final`` (at the end of the dump)
        tries a folder that stopped for want of space once more."""
        with self.lock:
            data = _index.build(self)
            try:
                self.write("index.json", _index.to_json(data), retry=final)
            finally:  # the page for people is worth having without the index, too
                self.write("index.md", _index.to_markdown(data))

    def emit(self, event: Event) -> None:
        """Pass an event to ``on_event``; its exceptions become dump warnings."""
        if self.on_event is None:
            return
        try:
            self.on_event(dict(event))
        except Exception as exc:  # a progress printer must not break the program
            self.warn("the on_event callback raised %s: %s" % (type(exc).__name__, exc))


def _user_stacklevel() -> int:
    """The warnings stacklevel of the innermost frame outside framescope and torch, seen from
    DumpSession.warn: the user's line that led to the compile."""
    # framescope, torch and the standard library (contextlib's ``with`` machinery).
    inside = [os.path.dirname(os.path.dirname(os.path.abspath(__file__))), os.path.dirname(os.__file__)]
    torch = sys.modules.get("torch")
    if getattr(torch, "__file__", None):
        inside.append(os.path.dirname(os.path.abspath(torch.__file__)))
    prefixes = tuple(path + os.sep for path in inside)
    frame = sys._getframe(2)  # the caller of warn
    level = 2
    while frame is not None:
        if not os.path.abspath(frame.f_code.co_filename).startswith(prefixes):
            return level
        frame = frame.f_back
        level += 1
    return 2


def _distributed_rank() -> Optional[int]:
    """This process's rank when torch.distributed runs more than one process, else None."""
    dist = sys.modules.get("torch.distributed")
    try:
        if dist is not None and dist.is_available() and dist.is_initialized():
            if dist.get_world_size() > 1:
                return int(dist.get_rank())
            return None
    except Exception:  # a half-torn-down process group: fall back to the environment
        pass
    try:
        if int(os.environ.get("WORLD_SIZE", "1")) > 1:
            return int(os.environ["RANK"])
    except (KeyError, ValueError):
        pass
    return None
