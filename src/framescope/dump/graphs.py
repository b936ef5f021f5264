"""The graphs of a dump: every graph torch.compile builds, one Python file per stage.

Graphs are named ``__compiled_fn_<k>``, numbered from 1 in the order the dump sees them (torch's
own name, ``__compiled_fn_<n>_<uuid>`` from a counter of the whole process, is in index.json
as ``torch_name``); the dump gets ``__compiled_fn_<k>.<stage>.py`` for each stage the backend
went through:

========================  =================================================================
``dynamo``                the FX graph Dynamo captured (every backend)
``pre_grad``              that graph after Inductor's pre-grad passes
``aot_joint``             AOTAutograd's joint forward + backward graph (training)
``aot_forward``           AOTAutograd's forward graph (the inference graph without autograd)
``aot_backward``          AOTAutograd's backward graph
``post_grad``             the forward graph after Inductor's post-grad passes
``inductor``              Inductor's output code for the forward: the Python wrapper module
``post_grad_backward``    the same two for the backward, once it is compiled
``inductor_backward``
========================  =================================================================

A backend that splits Dynamo's graph and compiles each piece on its own (as vLLM's piecewise
backend does with ``split_module``) gets the pieces' stages as ``piece_<k>.<stage>`` —
``__compiled_fn_<n>.piece_<k>.inductor.py`` — numbered in the order they are compiled, and
the graph it returns, which calls the pieces, as ``split``.

The code that runs is the code from these files where the graph runs as Python: the
``forward`` of the GraphModule each backend finally calls (``dynamo`` for the eager backend
and for backends that call the graph they were given, ``aot_forward`` / ``aot_backward`` for
aot_eager) and the ``call`` of Inductor's wrapper module (``inductor``,
``inductor_backward``). framescope compiles the dumped file and gives the function torch
made the code object from that file, so behaviour is unchanged and a debugger stops at
breakpoints in the file. The other stages are there to read.

Where the pieces come from (see torch_internals): the backend call of every graph, the
compilers aot_autograd-based backends pass to AOTAutograd, and torch's structured trace for
the stages that never pass through a hook (joint graph, pre/post-grad graphs, output code).
The compile caches stay as the program has them. On an FX graph cache hit torch still
gives the post-grad graph and Inductor's code (from the cached artefact), and the Inductor
code runs from its dumped file as on a miss; on an AOTAutograd cache hit torch skips the
pre-grad, joint, forward and backward graphs, so the graph has no files for those stages.
Each graph's record says what each cache did (``caches``). ``framescope.dump(...,
caches=False)`` turns both caches off, so that every stage is compiled and written.
"""
from __future__ import annotations

import threading
import types
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple

from framescope import torch_internals, torch_text
from framescope.dump import naming
from framescope.dump.graph_files import (
    code_tree, graph_modules, graph_signature, listing, module_source,
    placeholder_inputs, swap_code,
)
from framescope.dump.naming import shape_text
from framescope.dump.transformed import collector_paused
from framescope.dump.graph_state import CACHE_ARTIFACTS, GraphState
from framescope.dump.output_code import OutputModules

__all__ = ["start", "stop", "graph_file", "shape_text"]

# Abbreviations torch itself uses for dtypes in graph listings ("f32[4, 8]").
# Stage of each structured-trace artifact framescope writes, by (forward?, name).
_TRACE_STAGES = {
    "aot_joint_graph": "aot_joint",
    "aot_forward_graph": "aot_forward",
    "aot_inference_graph": "aot_forward",
    "aot_backward_graph": "aot_backward",
    "after_pre_grad_graph": "pre_grad",
    "inductor_post_grad_graph": "post_grad",
    "inductor_output_code": "inductor",
}
# Inductor's provenance artifacts: the user's stack traces of each kernel, and the FX nodes
# each kernel computes (see torch_text's provenance section).
_KERNEL_LINES = "inductor_provenance_tracking_kernel_stack_traces"
_KERNEL_NODES = "inductor_provenance_tracking_node_mappings"

# Stages that also exist once more for the backward.
_BACKWARD_STAGES = {"post_grad": "post_grad_backward", "inductor": "inductor_backward"}

# What each stage's file says it holds, after the graph's name.
_STAGE_TITLES = {
    "dynamo": "the FX graph Dynamo captured",
    "pre_grad": "the graph after Inductor's pre-grad passes",
    "aot_joint": "AOTAutograd's joint forward and backward graph",
    "aot_forward": "AOTAutograd's forward graph",
    "aot_backward": "AOTAutograd's backward graph",
    "post_grad": "the forward graph after Inductor's post-grad passes",
    "post_grad_backward": "the backward graph after Inductor's post-grad passes",
    "inductor": "Inductor's output code for the forward (the Python wrapper module)",
    "inductor_backward": "Inductor's output code for the backward (the Python wrapper module)",
    "split": "the graph the backend returned, which calls the pieces it compiled (piece_<k> files)",
}


def graph_file(name: str, stage: str) -> str:
    """The dump file of one stage of a graph: ``__compiled_fn_1.dynamo.py``."""
    return "%s.%s.py" % (name, stage)


class _Context(threading.local):
    """What the current thread is compiling: a stack of (graph, phase, stage prefix: "" or
    "piece_<k>."); phase None in the backend call, "aot" in AOTAutograd's compile of a
    module, "forward"/"backward" in the compiler it calls for each."""

    def __init__(self) -> None:
        self.stack: List[Tuple[GraphState, Optional[str], str]] = []
        #: Inductor's pre-grad graph, held until AOTAutograd's call says which module it is.
        self.pre_grad: Optional[str] = None
        #: The stages and caches AOTAutograd's compile of the current module has met outside
        #: any compiler call: on an AOTAutograd cache hit torch loads the forward's, then the
        #: backward's, Inductor code and post-grad graph from the FX graph cache.
        self.loaded: set = set()


class GraphDumper:
    """Writes the graphs of one dump session; installed by :func:`start`."""

    def __init__(self, session: Any) -> None:
        #: The DumpSession: ``write``, ``record_graph``, ``graph_name``, ``warn``, ``lock``.
        self.session = session
        #: Graphs by the dump's name.
        self.graphs: Dict[str, GraphState] = {}
        #: True between start and stop; compilers wrapped earlier pass through afterwards.
        self.active = False
        self._context = _Context()
        self._installed: List[Any] = []
        #: Inductor's output modules written, to run from their dumped files.
        self.outputs = OutputModules(session, self._warn)

    # ------------------------------------------------------------------ install

    def start(self) -> None:
        self._installed = []
        if not self.session.caches:
            caches = torch_internals.no_compile_caches()
            caches.__enter__()
            self._installed.append(torch_internals.Removable(lambda: caches.__exit__(None, None, None)))
        # Provenance tracking changes Inductor's output code and so its cache keys: only
        # where the caches are off anyway.
        if not self.session.caches and not torch_internals.missing(torch_internals.PROVENANCE):
            provenance = torch_internals.provenance_tracking()
            provenance.__enter__()
            self._installed.append(torch_internals.Removable(lambda: provenance.__exit__(None, None, None)))
        self._installed += [
            torch_internals.hook_backend_calls(self._backend_call),
            torch_internals.hook_aot_compilers(self._wrap_compiler, self._aot_call),
            torch_internals.add_trace_listener(self._trace),
        ]
        self.active = True

    def stop(self) -> None:
        self.active = False
        installed, self._installed = self._installed, []
        for item in reversed(installed):
            item.remove()

    # ------------------------------------------------------------------ Dynamo's graph

    def _backend_call(
        self,
        gm: Any,
        example_inputs: List[Any],
        backend: object,
        code: Optional[types.CodeType],
        call: Callable[[], Any],
    ) -> Any:
        if not self.active:
            return call()
        graph = None
        try:
            graph = self._new_graph(gm, example_inputs, backend)
            if code is not None:
                graph.source = "%s (%s:%d)" % (code.co_name, code.co_filename, code.co_firstlineno)
            # Every backend but Inductor gets Dynamo's graph running from its file (a backend
            # that calls it while it compiles stops in the file). Inductor never runs it, and
            # its compile caches hash the module as torch made it.
            self._write_module(graph, "dynamo", gm, example_inputs, run=graph.backend != "inductor")
        except Exception as exc:  # framescope's own failure must not stop the compile
            self._warn("could not dump the graph %s: %s" % (getattr(graph, "name", "?"), exc))
        if graph is None:
            return call()
        self._context.stack.append((graph, None, ""))
        self._context.pre_grad = None
        try:
            compiled = call()
        finally:
            self._context.stack.pop()
            self._flush_pre_grad(graph, "")
            self._save(graph)
        try:
            self._backend_result(graph, gm, example_inputs, compiled)
        except Exception as exc:
            self._warn("could not dump the graph %s returned for %s: %s" % (graph.backend, graph.name, exc))
        return compiled

    def _backend_result(self, graph: GraphState, gm: Any, example_inputs: List[Any], compiled: object) -> None:
        """A backend that returns a GraphModule of its own (one that calls the pieces it
        compiled): dump it as ``split``, running from its file, and learn its pieces' names."""
        import torch

        if not isinstance(compiled, torch.fx.GraphModule) or compiled is gm:
            return
        for name, child in compiled.named_children():
            if isinstance(child, torch.fx.GraphModule):
                graph.piece_names[graph.stage_prefix(child).rstrip(".")] = name
        self._retitle_pieces(graph)
        self._write_module(graph, "split", compiled, (), run=True)
        if "dynamo" in graph.runs:  # the backend's graph runs, not Dynamo's
            graph.runs.remove("dynamo")
        self._save(graph)

    def _new_graph(self, gm: Any, example_inputs: Sequence[Any], backend: object) -> GraphState:
        full_name, compile_id = torch_internals.graph_identity(gm)
        name = self.session.graph_name(full_name)
        graph = GraphState(name, full_name, compile_id, torch_internals.backend_name(backend))
        nodes = graph.measure(gm)
        graph.inputs = [shape for _name, shape, _source in placeholder_inputs(gm, example_inputs, False)]
        with self.session.lock:
            self.graphs[name] = graph
            if full_name is not None:
                self.session.graph_inputs[full_name] = [node.name for node in nodes if node.op == "placeholder"]
        return graph

    # ------------------------------------------------------------------ AOTAutograd's graphs

    def _aot_call(self, module: Any, call: Callable[[], Any]) -> Any:
        """AOTAutograd's compile of ``module``: the graphs it traces belong to the graph or
        piece the module is."""
        target = self._compiling(module) if self.active else None
        if target is None:
            self._context.pre_grad = None
            return call()
        graph, prefix = target
        self._flush_pre_grad(graph, prefix)
        self._context.stack.append((graph, "aot", prefix))
        self._context.loaded = set()
        try:
            return call()
        finally:
            self._context.stack.pop()
            try:
                if graph.caches.get(prefix + "aot_autograd") == "hit" and "dynamo" in graph.runs:
                    graph.runs.remove("dynamo")  # AOTAutograd's cached code runs instead
                self.outputs.run_cached(graph)
            except Exception as exc:
                self._warn("could not run %s's cached output code from the dump: %s" % (graph.name, exc))
            self._save(graph)

    def _wrap_compiler(self, kind: str, compiler: Callable[..., Any], module: Any) -> Callable[..., Any]:
        target = self._compiling(module)
        if not self.active or target is None:
            return compiler
        graph, prefix = target
        phase = "backward" if kind == "bw_compiler" else "forward"
        stage = prefix + ("aot_backward" if phase == "backward" else "aot_forward")
        dumper = self

        def compile_graph(gm: Any, example_inputs: Any, *args: Any, **kwargs: Any) -> Any:
            if not dumper.active:
                return compiler(gm, example_inputs, *args, **kwargs)
            before = None
            try:
                before = graph_signature(gm)
                dumper._write_module(graph, stage, gm, example_inputs, run=False)
            except Exception as exc:
                dumper._warn("could not dump %s of %s: %s" % (stage, graph.name, exc))
            dumper._context.stack.append((graph, phase, prefix))
            try:
                result = compiler(gm, example_inputs, *args, **kwargs)
            finally:
                dumper._context.stack.pop()
            try:
                # From here on the AOT graphs run, not Dynamo's.
                if "dynamo" in graph.runs:
                    graph.runs.remove("dynamo")
                if dumper.outputs.run_compiled(result):
                    pass  # Inductor: its wrapper module runs, not the FX graph
                elif before is not None and graph_signature(gm) == before:
                    # A compiler that kept the graph as it was (aot_eager's) runs its
                    # forward: dump it again with the code generator the compiler chose
                    # (a boxed signature) and run that.
                    dumper._write_module(graph, stage, gm, example_inputs, run=True)
            except Exception as exc:
                dumper._warn("could not dump %s of %s: %s" % (stage, graph.name, exc))
            dumper._save(graph)
            return result

        compile_graph.__name__ = getattr(compiler, "__name__", kind)
        compile_graph.__qualname__ = compile_graph.__name__
        return compile_graph

    def _retitle_pieces(self, graph: GraphState) -> None:
        """Name each piece in the first line of its files, now that the split graph says
        which of its modules it is (the line count stays, and with it every line number)."""
        for stage, file in graph.files.items():
            if "." not in stage:
                continue
            path = self.session.path_of(file)
            lines = path.read_text(encoding="utf-8").split("\n")
            title = "# %s: %s." % (graph.name, self._stage_title(graph, stage))
            if lines and lines[0] != title:
                self.session.write(file, "\n".join([title] + lines[1:]))

    def _kernel_stage(self) -> Tuple[GraphState, str]:
        """The graph being compiled and the stage whose output code defines its kernels."""
        graph, phase, prefix = self._context.stack[-1]
        return graph, prefix + ("inductor_backward" if phase == "backward" else "inductor")

    def _kernel_lines(self, payload: str) -> None:
        """Inductor's stack traces per kernel (provenance tracking): the user lines each kernel
        of the graph (or piece) being compiled computes."""
        graph, stage = self._kernel_stage()
        for key, lines in torch_text.kernel_stack_lines(payload).items():
            graph.kernel(stage, key)["lines"] = sorted([list(line) for line in lines])
        self._save(graph)

    def _kernel_nodes(self, payload: str) -> None:
        """Inductor's node mappings (provenance tracking): the FX nodes each kernel computes."""
        graph, stage = self._kernel_stage()
        for key, nodes in torch_text.kernel_nodes(payload).items():
            item = graph.kernel(stage, key)
            item["pre_grad_nodes"], item["post_grad_nodes"] = nodes.pre_grad, nodes.post_grad
        self._save(graph)

    def _compiling(self, module: Any) -> Optional[Tuple[GraphState, str]]:
        """(graph, stage prefix) that an AOTAutograd compile of ``module`` belongs to: the
        graph whose backend call runs now, or the graph a piece compiled later came from."""
        stack = self._context.stack
        if stack:
            graph = stack[-1][0]
            return graph, graph.stage_prefix(module)
        with self.session.lock:
            for graph in self.graphs.values():
                for ref, piece in graph.pieces:
                    if ref() is module:
                        return graph, piece + "."
        return None

    def _flush_pre_grad(self, graph: GraphState, prefix: str) -> None:
        text, self._context.pre_grad = self._context.pre_grad, None
        if text is not None:
            try:
                self._write(graph, prefix + "pre_grad", self._header(graph, prefix + "pre_grad", None) + listing(text))
            except Exception as exc:
                self._warn("could not dump %spre_grad of %s: %s" % (prefix, graph.name, exc))

    # ------------------------------------------------------------------ structured trace

    def _trace(self, record: Any) -> None:
        with collector_paused():
            self._traced(record)

    def _traced(self, record: Any) -> None:
        if not self.active:
            return
        key = record.name if record.kind == "artifact" else record.kind
        if key in (_KERNEL_LINES, _KERNEL_NODES) and record.payload and self._context.stack:
            (self._kernel_lines if key == _KERNEL_LINES else self._kernel_nodes)(record.payload)
            return
        if key in CACHE_ARTIFACTS and record.payload:
            self._cache_result(key, record)
            return
        stage = _TRACE_STAGES.get(key)
        if stage is None or record.payload is None:
            return
        if stage == "pre_grad" and (not self._context.stack or self._context.stack[-1][1] is None):
            # Inductor's pre-grad passes may run before AOTAutograd is called with the
            # module: which graph or piece it is becomes known then.
            self._context.pre_grad = record.payload
            return
        if not self._context.stack:
            return
        graph, phase, prefix = self._context.stack[-1]
        if phase == "aot" and stage in _BACKWARD_STAGES:
            # Loaded from the FX graph cache on an AOTAutograd cache hit: forward, then backward.
            phase = "backward" if stage in self._context.loaded else "aot"
            self._context.loaded.add(stage)
        if phase == "backward":
            stage = _BACKWARD_STAGES.get(stage, stage)
        elif stage in ("aot_forward", "aot_backward") and prefix + stage in graph.files:
            return  # already written from the module itself
        stage = prefix + stage
        try:
            text = record.payload
            if naming.split_stage(stage)[1].startswith("inductor"):
                path = record.metadata.get("file_path") or record.metadata.get("filename")
                header = self._header(graph, stage, None)
                self._write(graph, stage, header + text)
                if path:
                    self.outputs.written(str(path), graph, stage, graph_file(graph.name, stage), header + text)
            else:
                self._write(graph, stage, self._header(graph, stage, None) + listing(text))
            self._save(graph)
        except Exception as exc:
            self._warn("could not dump %s of %s: %s" % (stage, graph.name, exc))

    def _cache_result(self, key: str, record: Any) -> None:
        """What torch's FX graph cache or AOTAutograd cache did for the graph being compiled."""
        graph = self._graph_of(record.compile_id)
        if graph is None:
            return
        phase, prefix = "", ""
        if self._context.stack and self._context.stack[-1][0] is graph:
            _graph, phase, prefix = self._context.stack[-1]
        kind, result = CACHE_ARTIFACTS[key]
        graph.note_cache(kind, result, record.payload, phase or "", prefix, self._context.loaded)
        self._save(graph)

    def _graph_of(self, compile_id: Optional[str]) -> Optional[GraphState]:
        """The graph being compiled on this thread, else the last graph of ``compile_id``."""
        if self._context.stack:
            return self._context.stack[-1][0]
        with self.session.lock:
            found = [graph for graph in self.graphs.values() if compile_id and graph.compile_id == compile_id]
        return found[-1] if found else None

    # ------------------------------------------------------------------ files

    def _write_module(
        self, graph: GraphState, stage: str, gm: Any, example_inputs: Sequence[Any], run: bool
    ) -> None:
        """Write a GraphModule's code (with its submodules') and, if ``run``, make the
        module's forward run the code compiled from that file."""
        import torch

        modules = graph_modules(gm)
        if run:
            for _qualname, module in modules:  # parents first: they reset their children
                if not torch_internals.is_generated_function(vars(type(module)).get("forward")):
                    # A lazily compiled GraphModule has no generated forward yet.
                    torch.fx.GraphModule.recompile(module)
        inputs = placeholder_inputs(gm, example_inputs, stage == "dynamo")
        text = self._header(graph, stage, inputs) + module_source(gm)
        path = self._write(graph, stage, text)
        if not run:
            return
        code = compile(text, str(path), "exec", dont_inherit=True)
        functions = code_tree(code)
        swapped = 0
        for qualname, module in modules:
            new = functions.get(qualname + "forward")
            forward = vars(type(module)).get("forward")
            # Only a forward torch.fx generated for this very module: a lazy module's
            # placeholder forward is one function shared by every such module.
            if new is not None and torch_internals.is_generated_function(forward) and swap_code(forward, new):
                swapped += 1
        if swapped:
            if stage not in graph.runs:
                graph.runs.append(stage)
        else:
            self._warn("%s of %s runs torch's own copy of the code, not the dumped file" % (stage, graph.name))

    def _header(self, graph: GraphState, stage: str, inputs: Optional[List[Tuple[str, str, Optional[str]]]]) -> str:
        lines = [
            "# %s: %s." % (graph.name, self._stage_title(graph, stage)),
            "# Backend %s; compile %s of %s." % (graph.backend, graph.compile_id or "?", graph.source or "?"),
        ]
        if inputs:
            # The user's name for each input where Dynamo knows it, then the graph's own.
            lines.append("# Inputs:")
            shown = [(source or name, shape, name if source else "") for name, shape, source in inputs]
            width = max(len(label) for label, _, _ in shown)
            for label, shape, name in shown:
                lines.append(("#   %s: %s" % (label.ljust(width), shape.ljust(12) + "  " + name)).rstrip())
        return "\n".join(lines) + "\n\n"

    @staticmethod
    def _stage_title(graph: GraphState, stage: str) -> str:
        piece, base = naming.split_stage(stage)
        title = _STAGE_TITLES.get(base, base)
        if not piece:
            return title
        name = graph.piece_names.get(piece)
        return "%s of the split graph%s: %s" % (piece.replace("_", " "), " (%s)" % name if name else "", title)

    def _write(self, graph: GraphState, stage: str, text: str) -> Any:
        name = graph_file(graph.name, stage)
        if not text.endswith("\n"):
            text += "\n"
        path = self.session.write(name, text)
        graph.files[stage] = name
        return path

    def _save(self, graph: GraphState) -> None:
        try:
            self.session.record_graph(graph.record())
        except Exception as exc:
            self._warn("could not record the graph %s: %s" % (graph.name, exc))

    def _warn(self, message: str) -> None:
        try:
            self.session.warn(message)
        except Exception:  # a session torn down under us: nothing left to tell
            pass

    # ------------------------------------------------------------------ graphs compiled before

    def adopt(self, torch_name: str, compiled: object, compile_id: Optional[str], code: types.CodeType) -> None:
        """Dump a graph torch compiled before the dump began, from what its cache entry calls
        (``compiled``, the global ``torch_name``): Dynamo's graph where the backend kept the
        GraphModule (eager), Inductor's output code where it made one (it runs from the
        dumped file from then on). torch keeps no other stage of an earlier compile."""
        with self.session.lock:
            name = self.session.graph_name(torch_name)
            if name in self.graphs:
                return
        module, output = torch_internals.compiled_graph_parts(compiled)
        graph = GraphState(name, torch_name, compile_id, "inductor" if output is not None else "?")
        graph.nodes = graph.ops = None  # type: ignore[assignment]  # no graph module: unknown
        graph.source = "%s (%s:%d)" % (code.co_name, code.co_filename, code.co_firstlineno)
        if module is not None:
            graph.backend = "eager"
            graph.measure(module)
            self._write_module(graph, "dynamo", module, (), run=False)
        with self.session.lock:
            self.graphs[name] = graph
        if output is not None:
            function = getattr(output, "__func__", output)
            path = function.__code__.co_filename
            with open(path, encoding="utf-8") as source:
                text = self._header(graph, "inductor", None) + source.read()
            self._write(graph, "inductor", text)
            self.outputs.written(path, graph, "inductor", graph_file(graph.name, "inductor"), text)
            self.outputs.swap(function.__globals__, path)
        self._save(graph)


# --------------------------------------------------------------------------- the core's calls

_dumpers: Dict[int, GraphDumper] = {}


def start(session: Any) -> None:
    """Start dumping graphs into ``session`` (a DumpSession)."""
    dumper = GraphDumper(session)
    dumper.start()
    _dumpers[id(session)] = dumper


def adopt(session: Any, torch_name: str, compiled: object, compile_id: Optional[str], code: types.CodeType) -> None:
    """Dump a graph compiled before the dump of ``session`` began (see GraphDumper.adopt)."""
    dumper = _dumpers.get(id(session))
    if dumper is not None:
        dumper.adopt(torch_name, compiled, compile_id, code)


def compile_id_of(session: Any, torch_name: str) -> Optional[str]:
    """torch's compile id of the graph torch named ``torch_name`` in the dump of ``session``."""
    dumper = _dumpers.get(id(session))
    if dumper is None:
        return None
    with session.lock:
        for graph in dumper.graphs.values():
            if graph.torch_name == torch_name:
                return graph.compile_id
    return None


def stop(session: Any) -> None:
    """Stop dumping graphs into ``session``; code already compiled keeps running from the
    dumped files."""
    dumper = _dumpers.pop(id(session), None)
    if dumper is not None:
        dumper.stop()
