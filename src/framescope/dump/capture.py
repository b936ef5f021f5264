"""The hooks a dump installs into torch.compile, and what they do on each compile.

torch calls :meth:`Capture.on_bytecode` once per successful frame compile (recompiles and
resume functions included) with the original code and Dynamo's new code. framescope writes
the entry's file, and returns the code compiled from it, which torch puts into the cache
entry. The entry's guard is built by torch after the hook, so it is read from the cache
entry list later: when the next compile starts, and when the dump ends.

Nothing raised in here may reach the user's program: every hook turns its exceptions into
dump warnings.
"""
from __future__ import annotations

import importlib
import marshal
import types
import weakref
from pathlib import Path
from typing import Any, Dict, List, Optional, Set, Tuple

from framescope import debugging, torch_internals, torch_text
from framescope.dump import calls, fullcode, live_guards, naming, transformed
from framescope.dump.folder import NotWritten
from framescope.dump.session import DumpSession, FrameState
from framescope.dump.source_cache import SourceCache

# The code of every cache entry a dump of this process has written (the code compiled from
# its file, or Dynamo's): a later dump does not take those entries as made before it, since
# the earlier dump's folder has them.
_DUMPED: "weakref.WeakSet[types.CodeType]" = weakref.WeakSet()

# Modules of the dump package that capture more (graphs, events): each has start(session)
# and stop(session), called if present.
_PARTS = ("framescope.dump.graphs", "framescope.dump.events")


class Capture:
    """The hooks of one session and the entries whose guards are not read yet."""

    def __init__(self, session: DumpSession) -> None:
        #: The session files and records go to.
        self.session = session
        #: What to remove from torch when the dump ends.
        self.handles: List[torch_internals.Removable] = []
        #: Entries whose guard is not known yet: (frame, entry record, code the entry runs).
        self.pending: List[Tuple[FrameState, Dict[str, Any], types.CodeType]] = []
        #: id(resume code) -> (resume code, [(frame, entry record) of entries that call it]).
        self.resume_callers: Dict[int, Tuple[types.CodeType, List[Tuple[FrameState, Dict[str, Any]]]]] = {}
        #: The optional parts started (modules with start/stop).
        self.parts: List[Any] = []
        #: Counts the calls each entry serves and the calls that miss every entry.
        self.counter = calls.CallCounter()

    # ------------------------------------------------------------------ torch's hooks

    def on_bytecode(self, code: types.CodeType, new_code: types.CodeType) -> Optional[types.CodeType]:
        hide_debugger(self.session)
        try:
            with self.session.lock, transformed.collector_paused():
                self.read_guards()
                return self.add_entry(code, new_code)
        except Exception as exc:
            self.session.warn(
                "internal error while dumping %s: %s: %s" % (code.co_name, type(exc).__name__, exc)
            )
            return None

    def on_aot_compiled(self, parts: torch_internals.AotCompiled) -> None:
        """A function ``torch.compile(...).aot_compile(...)`` compiled: it makes no cache entry,
        so it is dumped here as a frame with one entry, whose code then runs from its file."""
        from framescope.dump import graphs

        try:
            with self.session.lock:
                compile_id = graphs.compile_id_of(self.session, parts.backend_id)
                code = self.record_entry(parts.original_code, parts.dynamo_code, compile_id,
                                         parts.function.__globals__, before=False, manager=parts.guard_manager,
                                         cache_entry=False)
                if code is not None:
                    parts.function.__code__ = code
        except Exception as exc:
            self.session.warn("internal error while dumping the aot_compile of %s: %s: %s"
                              % (parts.original_code.co_name, type(exc).__name__, exc))

    def on_precompiled(self, function: Any, python_code: str, backend: Optional[str]) -> None:
        """torch.compiler.precompile traced a call of ``function``: keep its artefact."""
        try:
            self.session.record_precompiled(function, python_code, backend)
            self.save()
        except Exception as exc:
            self.session.warn("could not keep the precompile artefact of %s: %s: %s"
                              % (getattr(function, "__qualname__", function), type(exc).__name__, exc))

    def on_start(self) -> None:
        hide_debugger(self.session)
        try:
            with self.session.lock:
                self.read_guards()
                self.note_arguments()
        except Exception as exc:
            self.session.warn("internal error while reading guards: %s: %s" % (type(exc).__name__, exc))

    def on_end(self) -> None:
        """A compile ended: where entries are counted through their guards, count the new
        entry's from its first lookup on (torch makes the entry after this callback)."""
        try:
            found = torch_internals.finished_compile()
            if found is not None:
                self.counter.watch_guard(found[0], found[1], served=1)
        except Exception as exc:
            self.session.warn("internal error while counting calls: %s: %s" % (type(exc).__name__, exc))

    def note_arguments(self) -> None:
        """What the frame being compiled was called with, on the entry the compile makes: a
        recompile's report shows the values its failed guard checked."""
        compile_id = torch_internals.current_compile_id()
        frame_locals = torch_internals.compiling_locals()
        if compile_id is not None and frame_locals is not None:
            self.session.update_entry(compile_id, arguments=naming.describe_values(frame_locals))

    # ------------------------------------------------------------------ one compile

    def add_entry(self, code: types.CodeType, new_code: types.CodeType) -> Optional[types.CodeType]:
        return self.record_entry(code, new_code, torch_internals.current_compile_id(),
                                 torch_internals.compiling_globals(), before=False)

    def adopt_existing(self) -> None:
        """Dump the cache entries torch.compile made before the dump began: every code object
        torch's frame hook has seen that holds cache entries (torch's own list of them), its
        entries in compile order. Their files are there to read and their guards are torch's;
        they keep running torch's code (a cache entry's code cannot be replaced). Entries an
        earlier dump of this process wrote are in its folder, not again in this one."""
        reachable: Dict[int, Set[int]] = {}
        resumes = []
        for code in torch_internals.codes_seen():
            if torch_text.resume_line(code.co_name) is not None:
                resumes.append(code)  # adopted below, when an entry adopted calls it
                continue
            module_globals = torch_internals.module_globals_of(code)
            # A function that is gone (a module run before, a function redefined) stays out.
            if module_globals is not None and _can_run(code, module_globals, reachable):
                self.adopt_frame(code, module_globals)
        adopted = True
        while adopted:  # a resume function's entries may call resume functions in turn
            adopted = False
            for code in resumes:
                if id(code) in self.resume_callers and self.session.frame_id(code) is None:
                    adopted = self.adopt_frame(code, torch_internals.module_globals_of(code)) or adopted

    def adopt_frame(self, code: types.CodeType, module_globals: Optional[Dict[str, object]]) -> bool:
        """Dump the entries torch holds for ``code``, in compile order; return whether it had any."""
        entries = [raw for raw in torch_internals.raw_entries(code, torch_internals.DUMP)
                   if raw.payload is None and raw.code not in _DUMPED]
        if not entries or self.session.frame_id(code) is not None:
            return False
        for raw in sorted(entries, key=lambda raw: torch_text.compile_order(raw.compile_id)):
            self.record_entry(code, raw.code, raw.compile_id, module_globals, before=True, manager=raw.manager)
        return True

    def adopt_graphs(self, new_code: types.CodeType, module_globals: Dict[str, object],
                     compile_id: Optional[str], code: types.CodeType) -> None:
        """The graphs an entry compiled before the dump calls, from the globals it calls."""
        from framescope.dump import graphs

        for name in new_code.co_names:
            if torch_text.is_graph_name(name) and name in module_globals:
                try:
                    graphs.adopt(self.session, name, module_globals[name], compile_id, code)
                except Exception as exc:
                    self.session.warn("could not dump the graph %s compiled before the dump: %s: %s"
                                      % (name, type(exc).__name__, exc))

    def record_entry(
        self,
        code: types.CodeType,
        new_code: types.CodeType,
        compile_id: Optional[str],
        module_globals: Optional[Dict[str, object]],
        before: bool,
        manager: object = None,
        cache_entry: bool = True,
    ) -> Optional[types.CodeType]:
        """Dump one cache entry of ``code`` whose code is Dynamo's ``new_code``; return the
        code compiled from its file (None: keep Dynamo's). ``before``: torch made the entry
        before the dump began, and it keeps running Dynamo's code. ``manager``: the entry's
        guard manager, where it is known now (else it is read from torch's cache entry
        once torch has made it). ``cache_entry``: False for a function aot_compile made,
        which torch holds outside any frame's cache entries."""
        session = self.session
        state = session.frame_state(code)
        frame = state.record
        index = len(frame["entries"])
        name = naming.transformed_file(index, frame["id"])
        path = str(session.path_of(name))
        header = _header(state, index, compile_id, before)
        result = transformed.make(code, new_code, path, header, session.graph_name, module_globals,
                                  session.graph_inputs, session.sources)
        unwritten = None
        try:
            session.write(name, result.text)
        except NotWritten as exc:
            # No file to run from, set breakpoints in or read: Dynamo's own code runs.
            unwritten = str(exc)
            result = transformed.Result(result.text, None, None, unwritten, {})
        if result.code is not None and module_globals is not None and not before:
            transformed.install_aliases(result, module_globals)
        entry = {
            "index": index,
            "compile_id": compile_id,
            "file": name,
            "decompiled": result.code is not None,
            "fallback_reason": result.reason,
            "guard_function": naming.guard_function(index, frame["id"]),
            "guard": [],
            "graphs": [session.graph_name(n) for n in new_code.co_names if torch_text.is_graph_name(n)],
            "calls_resume": [],
            "compile_time_s": None,
            "recompile_reason": None,
            "bytecode_files": write_bytecode(session, name, (code, new_code, result.code)),
            "compiled_before_dump": before,
        }
        session.add_entry(state, entry)
        if before and module_globals is not None:
            self.adopt_graphs(new_code, module_globals, compile_id, code)
        runs = new_code if result.code is None or before else result.code
        if not before:
            _DUMPED.add(runs)
        self.counter.watch(runs)
        state.entry_codes.append(runs)
        state.entry_sources.append(result.source)
        if manager is None:
            self.pending.append((state, entry, runs))
        else:
            entry["guard"] = list(getattr(manager, "code_parts", None) or ())
            self.read_guard_tree(state, entry, manager, runs if cache_entry else None)
        self.link_resumes(state, entry, new_code, module_globals)
        if unwritten is not None:
            session.warn("cache entry %d of %s runs Dynamo's own code: %s" % (index, frame["qualname"], unwritten))
        elif result.reason is not None:
            session.warn(
                "could not decompile cache entry %d of %s (%s); Dynamo's own code runs for it"
                % (index, frame["qualname"], result.reason)
            )
        # The full-code file waits for the entry's guard, which torch builds after this hook.
        self.save()
        session.emit(
            {
                "event": "compile",
                "frame": frame["id"],
                "entry": index,
                "compile_id": compile_id,
                "file": name,
                "decompiled": result.code is not None,
                "compiled_before_dump": before,
            }
        )
        return None if before else result.code

    def link_resumes(
        self,
        state: FrameState,
        entry: Dict[str, Any],
        new_code: types.CodeType,
        module_globals: Optional[Dict[str, object]],
    ) -> None:
        """Connect an entry with the resume functions its code calls after a graph break, and
        a resume frame with the frame it continues."""
        own = self.resume_callers.get(id(state.code))
        if own is not None and state.record["resume_of"] is None and own[1]:
            state.record["resume_of"] = own[1][0][0].record["id"]
            state.record["resume_line"] = torch_text.resume_line(state.code.co_name)
        if len(state.record["entries"]) == 1 and own is not None:
            for _caller, caller_entry in own[1]:
                caller_entry["calls_resume"].append(state.record["id"])
        for resume in self.resumes_called(state, new_code, module_globals):
            callers = self.resume_callers.setdefault(id(resume), (resume, []))[1]
            callers.append((state, entry))
            known = self.session.frame_id(resume)
            if known is not None:
                entry["calls_resume"].append(known)

    @staticmethod
    def resumes_called(
        state: FrameState, new_code: types.CodeType, module_globals: Optional[Dict[str, object]]
    ) -> List[types.CodeType]:
        """The code of each resume function Dynamo's code calls: held by a global (torch
        2.13+), or a code constant it makes the function from in place (torch 2.10-2.12)."""
        found = []
        for name in new_code.co_names:
            if torch_text.is_resume_global(name) and module_globals is not None:
                resume = transformed.resume_code(module_globals.get(name))
                if resume is not None:
                    state.resume_globals[name] = resume
                    found.append(resume)
        found += [const for const in new_code.co_consts
                  if isinstance(const, types.CodeType) and torch_text.resume_line(const.co_name) is not None]
        return found

    def read_guards(self) -> None:
        """Fill in the guards of entries whose cache entry torch has made since."""
        still: List[Tuple[FrameState, Dict[str, Any], types.CodeType]] = []
        changed: Dict[int, FrameState] = {}
        for state, entry, runs in self.pending:
            found = torch_internals.entry_guard(state.code, runs)
            if found is None:
                still.append((state, entry, runs))
                continue
            entry["guard"] = list(found.code_parts)
            if entry["compile_id"] is None:
                entry["compile_id"] = found.compile_id
            self.read_guard_tree(state, entry, found.manager, runs)
            changed[id(state.code)] = state
        self.pending = still
        for state in changed.values():
            self.write_full_code(state)
        if changed:
            self.save()

    def read_guard_tree(self, state: FrameState, entry: Dict[str, Any], manager: object,
                        runs: Optional[types.CodeType]) -> None:
        """Every leaf of the entry's guard tree, for its guard function; and the guard
        manager, for the checks of it that only torch can make (live_guards) and for counting
        the calls of the entry (``runs``: the code it runs) where no per-code event can. An
        aot_compile'd function's guard is checked more than once per call (by the module's
        dispatch, then by the function), so its passes are no count of calls: ``runs`` None."""
        try:
            found = torch_internals.leaves(manager)
        except Exception as exc:
            self.session.warn("could not read the guard tree of entry %d of %s: %s: %s"
                              % (entry["index"], state.record["qualname"], type(exc).__name__, exc))
            return
        state.guard_leaves[entry["index"]] = found
        entry["guard_count"] = len(found)
        if runs is not None:
            self.counter.watch_guard(runs, manager)
        live_guards.register(live_guards.entry_key(self.session.root, state.record["id"], entry["index"]), manager,
                             [leaf.guard for leaf in found])

    def write_full_code(self, state: FrameState) -> None:
        """(Re)write a frame's full-code file; a failure is a warning, not the end of the entry."""
        try:
            fullcode.write(self.session, state)
        except Exception as exc:
            self.session.warn(
                "could not write %s: %s: %s" % (state.record["full_code"], type(exc).__name__, exc)
            )

    def count_calls(self) -> None:
        """Put the calls counted so far into the entries' records and the session's."""
        counter = self.counter
        with self.session.lock:
            for state in self.session.states.values():
                for entry, code in zip(state.record["entries"], state.entry_codes):
                    entry["calls"] = counter.calls(code)
            self.session.calls_missed = counter.missed

    def save(self, final: bool = False) -> None:
        """Write the index; a failure is a warning."""
        try:
            with transformed.collector_paused():
                self.count_calls()
                self.session.save(final)
        except NotWritten as exc:
            self.session.warn(str(exc))
        except Exception as exc:
            self.session.warn("could not write index.json: %s: %s" % (type(exc).__name__, exc))


def _can_run(code: types.CodeType, module_globals: Dict[str, object], reachable: Dict[int, Set[int]]) -> bool:
    """Whether a function of ``code`` can still be called: ``code`` is the code of a function
    (or a function nested in one, a method, a compiled function's original, a resume
    function) that the module's globals hold. ``reachable`` caches each module's codes."""
    key = id(module_globals)
    if key not in reachable:
        reachable[key] = _codes_of(module_globals)
    return id(code) in reachable[key]


def _codes_of(module_globals: Dict[str, object]) -> Set[int]:
    found: Set[int] = set()
    pending: List[types.CodeType] = []
    for name, value in list(module_globals.items()):
        if torch_text.is_resume_global(name):
            continue  # torch keeps these after their function is gone; reached through callers
        objects = [value] + torch_internals.compiled_inner(value)
        if isinstance(value, type):
            objects += list(vars(value).values())
        for obj in objects:
            obj = getattr(obj, "__func__", obj)
            code = getattr(obj, "__code__", None)
            if isinstance(code, types.CodeType):
                pending.append(code)
    while pending:
        code = pending.pop()
        if id(code) not in found:
            found.add(id(code))
            pending.extend(const for const in code.co_consts if isinstance(const, types.CodeType))
    return found


def write_bytecode(
    session: DumpSession, name: str, codes: Tuple[types.CodeType, types.CodeType, Optional[types.CodeType]]
) -> List[str]:
    """With ``log_bytecode``, write the entry's original code, Dynamo's code and the code
    compiled from the file ``name`` (None where decompiling failed), each marshalled, next to
    the file; return the names written."""
    if not session.log_bytecode:
        return []
    written = []
    for kind, code in zip(naming.BYTECODE_KINDS, codes):
        if code is None:
            continue
        file = naming.bytecode_file(name, kind)
        try:
            session.write(file, marshal.dumps(code))
        except ValueError as exc:  # a constant marshal cannot write (Dynamo's code may hold one)
            session.warn("could not write %s: %s" % (file, exc))
            continue
        written.append(file)
    return written


def hide_debugger(session: DumpSession) -> None:
    """Keep a running debugger's code out of torch.compile (framescope.debugging).

    A debugger that traces or stops in transformed code runs its own functions with
    torch.compile's frame hook installed: torch.compile would compile them into the dump
    and give later graphs other numbers than a run without a debugger. Called when the
    dump starts and whenever a compile starts, for debuggers started or attached since;
    without a debugger it only looks at sys.modules.
    """
    try:
        debugging.hide_debugger()
    except Exception as exc:
        session.warn("could not keep the debugger out of torch.compile: %s: %s" % (type(exc).__name__, exc))


def _header(state: FrameState, index: int, compile_id: Optional[str], before: bool = False) -> List[str]:
    frame = state.record
    lines = [
        "# torch.compile's code for %s (%s:%d): cache entry %d, compile %s."
        % (frame["qualname"], frame["filename"], frame["firstlineno"], index, compile_id),
        "# It runs in place of %s when the entry's guard passes; the guard is" % frame["name"],
        "# %s in %s." % (naming.guard_function(index, frame["id"]), frame["full_code"]),
    ]
    if before:
        lines.append("# Compiled before the dump began: the entry runs torch's copy of this code, so")
        lines.append("# breakpoints in this file do not stop there.")
    return lines


# ---------------------------------------------------------------------- start and stop


def start(session: DumpSession) -> Capture:
    """Install the hooks of a session (raises UnsupportedTorchError on an unknown torch)."""
    torch_internals.require(torch_internals.DUMP)
    capture = Capture(session)
    if session.caches and not torch_internals.missing(torch_internals.SOURCE_CACHE):
        session.sources = SourceCache(Path(torch_internals.compile_cache_folder()) / "framescope" / "sources")
    capture.handles.append(torch_internals.register_bytecode_hook(capture.on_bytecode))
    try:
        capture.counter.start()
        capture.handles.append(torch_internals.Removable(capture.counter.stop))
        if not torch_internals.missing(torch_internals.AOT_COMPILE):
            capture.handles.append(torch_internals.hook_aot_compile(capture.on_aot_compiled))
        if not torch_internals.missing(torch_internals.PRECOMPILE):
            capture.handles.append(torch_internals.hook_precompile(capture.on_precompiled))
        capture.handles.append(torch_internals.on_compile_start(capture.on_start))
        if capture.counter.needs_guards:
            capture.handles.append(torch_internals.on_compile_end(capture.on_end))
        for module_name in _PARTS:
            try:
                module = importlib.import_module(module_name)
            except ImportError:
                continue
            begin = getattr(module, "start", None)
            if begin is not None:
                _guarded(session, begin, module_name)
                capture.parts.append(module)
        with session.lock:
            try:
                capture.adopt_existing()
            except Exception as exc:
                session.warn("could not dump the entries compiled before the dump began: %s: %s"
                             % (type(exc).__name__, exc))
    except BaseException:
        stop(capture, session)
        raise
    return capture


def stop(capture: Capture, session: DumpSession) -> None:
    """Remove the hooks, read the last guards and write the final files and index."""
    for handle in reversed(capture.handles):
        try:
            handle.remove()
        except Exception as exc:  # leaving the block must not fail because of framescope
            session.warn("could not remove a hook from torch: %s: %s" % (type(exc).__name__, exc))
    capture.handles = []
    # The counter stopped with the handles: the last counts go into the final index.
    for module in reversed(capture.parts):
        end = getattr(module, "stop", None)
        if end is not None:
            _guarded(session, end, module.__name__)
    capture.parts = []
    with session.lock:
        try:
            capture.read_guards()
        except Exception as exc:
            session.warn("could not read the last guards: %s: %s" % (type(exc).__name__, exc))
        for state, entry, _runs in capture.pending:
            session.warn(
                "torch holds no cache entry for entry %d of %s any more, so its guard is unknown"
                % (entry["index"], state.record["qualname"])
            )
        capture.pending = []
        # Also frames whose files were written before: their resume frames and graph files
        # may have been added since.
        for state in list(session.states.values()):
            capture.write_full_code(state)
        session.finished = True
        capture.save(final=True)


def _guarded(session: DumpSession, function: Any, module_name: str) -> None:
    try:
        function(session)
    except Exception as exc:
        session.warn("%s failed: %s: %s" % (module_name, type(exc).__name__, exc))
