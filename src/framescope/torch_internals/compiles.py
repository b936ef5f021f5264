"""Where framescope.dump (and framescope.debug) meet torch.compile: the bytecode hook, the
compile ids and the frame being compiled, the structured trace, the backend and AOTAutograd
compiler calls, Inductor's settings."""
from __future__ import annotations

import os
import sys
import types
from typing import Any, Callable, Dict, Iterator, List, NamedTuple, Optional, Tuple

from framescope.torch_internals.frames import framescope_side, keep_out_of_dynamo, program_side, raw_entries
from framescope.torch_internals.probes import (AOT_COMPILE, AOT_GRAPHS, DEBUG, DEPYF_INSTALL, DUMP, GRAPHS, PRECOMPILE,
                                               PROVENANCE, SOURCE_CACHE, TRACE, require)


# --------------------------------------------------------------------------- framescope.dump
#
# torch.compile's bytecode hook (``register_bytecode_hook(hook)``, ``hook(code, new_code)``)
# runs once per successful frame compile, after Dynamo made the new bytecode and before it
# builds the guards; what the hook returns goes into the cache entry instead. The entry and
# its guard only exist once the compile returned to torch's C code, so framescope reads the
# guard later from the cache entry list.


class Removable:
    """Something installed into torch that ``remove()`` takes out again (once)."""

    def __init__(self, remove: Callable[[], None]) -> None:
        self._remove: Optional[Callable[[], None]] = remove

    def remove(self) -> None:
        """Undo the installation; later calls do nothing."""
        remove, self._remove = self._remove, None
        if remove is not None:
            remove()


def register_bytecode_hook(
    hook: Callable[[types.CodeType, types.CodeType], Optional[types.CodeType]], feature: str = DUMP
) -> Removable:
    """Call ``hook(original_code, dynamo_code)`` after each frame compile; its result (a code
    object, or None to keep Dynamo's) is what the new cache entry runs. Hooks run in the
    order registered, each given the code the hooks before it returned."""
    require(feature)
    from torch._dynamo import convert_frame

    def bytecode_hook(code: types.CodeType, new_code: types.CodeType) -> Optional[types.CodeType]:
        return hook(code, new_code)

    keep_out_of_dynamo(bytecode_hook)
    return Removable(convert_frame.register_bytecode_hook(bytecode_hook).remove)


class AotCompiled(NamedTuple):
    """What ``torch.compile(fn, fullgraph=True).aot_compile(...)`` made, in plain terms."""

    #: The compiled function's own code.
    original_code: types.CodeType
    #: Dynamo's code for it (what a cache entry would run).
    dynamo_code: types.CodeType
    #: The function that runs Dynamo's code when the artifact is called (its globals hold
    #: the graph under ``backend_id``).
    function: types.FunctionType
    #: The guard manager the artifact checks before each call.
    guard_manager: Any
    #: torch's name of the graph the code calls (``__compiled_fn_<n>_<uuid>``).
    backend_id: str


def hook_aot_compile(callback: Callable[[AotCompiled], None]) -> Removable:
    """Call ``callback(parts)`` with each function ``torch.compile(...).aot_compile(...)``
    compiles from now on, after torch made it and before the program gets it."""
    require(AOT_COMPILE)
    from torch._dynamo import aot_compile as module

    original = module.aot_compile_fullgraph
    compile_as_torch_does = program_side(original)

    def hooked(*args: Any, **kwargs: Any) -> Any:
        compiled = compile_as_torch_does(*args, **kwargs)
        artifacts = getattr(compiled, "_artifacts", None)
        function = getattr(compiled, "fn", None)
        if artifacts is not None and isinstance(function, types.FunctionType):
            callback(AotCompiled(artifacts.original_code, artifacts.runtime_env.bytecode, function,
                                 artifacts.guard_manager, artifacts.backend_id))
        return compiled

    return _replace(module, "aot_compile_fullgraph", original, hooked)


def compile_cache_folder() -> str:
    """The folder of torch's compile caches: ``TORCHINDUCTOR_CACHE_DIR``, or torch's default."""
    require(SOURCE_CACHE)
    from torch._inductor.runtime.cache_dir_utils import cache_dir

    return str(cache_dir())


def hook_precompile(callback: Callable[[Any, str, Optional[str]], None]) -> Removable:
    """Call ``callback(fn, python_code, backend)`` each time a ``torch.compiler.precompile``
    capture has traced its call of ``fn``: ``python_code`` is the self-contained artefact
    torch writes to the capture's ``artifact_path`` (a prototype API of torch 2.15; its
    make_fx capture, ``_MakeFxCapture``, holds it as ``_rendered[0]`` once traced)."""
    require(PRECOMPILE)
    from torch import _precompile as module

    capture_class = module._MakeFxCapture
    original = capture_class.__call__
    call_as_torch_does = program_side(original)

    def hooked(self: Any, *args: Any, **kwargs: Any) -> Any:
        fresh = getattr(self, "_rendered", None) is None
        result = call_as_torch_does(self, *args, **kwargs)
        rendered = getattr(self, "_rendered", None)
        precompiled = getattr(self, "_module", None)
        if fresh and isinstance(rendered, tuple) and rendered and isinstance(rendered[0], str):
            backend = getattr(precompiled, "_backend", None)
            callback(getattr(precompiled, "_fn", None), rendered[0], backend if isinstance(backend, str) else None)
        return result

    return _replace(capture_class, "__call__", original, hooked)


def _replace(owner: Any, name: str, original: Callable[..., Any], hooked: Callable[..., Any]) -> Removable:
    """Put ``hooked`` (framescope's code, which calls torch's ``original`` through
    program_side) in place of ``owner.name``; the Removable puts ``original`` back, unless
    something replaced framescope's function since."""
    replacement = framescope_side(hooked)
    replacement.__wrapped__ = original  # type: ignore[attr-defined]
    setattr(owner, name, replacement)

    def remove() -> None:
        if getattr(owner, name, None) is replacement:
            setattr(owner, name, original)

    return Removable(remove)


def on_compile_start(callback: Callable[[], None]) -> Removable:
    """Call ``callback()`` when torch.compile starts compiling a frame (outermost compiles only)."""
    require(DUMP)
    from torch._dynamo.callback import callback_handler

    def start(args: object) -> None:
        callback()

    keep_out_of_dynamo(start)
    callback_handler.register_start_callback(start)
    return Removable(lambda: callback_handler.remove_start_callback(start))


def current_compile_id(feature: str = DUMP) -> Optional[str]:
    """torch's id ("0/1": frame 0, its second compile) of the compile running now, or None."""
    require(feature)
    from torch._guards import CompileContext

    compile_id = CompileContext.current_compile_id()
    return None if compile_id is None else str(compile_id)


def compiling_globals() -> Optional[Dict[str, object]]:
    """The globals of the frame being compiled, from inside a bytecode hook; None if not found."""
    require(DUMP)
    return _compiling_argument("globals")


def compiling_locals(feature: str = DUMP) -> Optional[Dict[str, object]]:
    """The local variables of the frame being compiled, as the frame started, from inside a
    bytecode hook or a compile-start callback; None if not found."""
    require(feature)
    return _compiling_argument("locals")


def _compiling_argument(name: str) -> Optional[Dict[str, object]]:
    # A bytecode hook is not given the frame; torch's ``_compile`` (which calls the hook
    # through its inner function) holds its globals and locals in arguments of these names.
    return next((found for found in _compile_locals(("_compile_inner", "_compile"), name) if isinstance(found, dict)),
                None)


def _compile_locals(functions: Tuple[str, ...], name: str) -> Iterator[object]:
    """The local ``name`` of each frame of torch's ``convert_frame`` functions ``functions`` on
    the stack, innermost first (None where it has none)."""
    from torch._dynamo import convert_frame

    frame = sys._getframe(1)
    while frame is not None:
        code = frame.f_code
        if code.co_filename == convert_frame.__file__ and code.co_name in functions:
            yield frame.f_locals.get(name)
        frame = frame.f_back


def codes_seen() -> List[types.CodeType]:
    """Every code object torch.compile's frame hook has been given so far and still alive, in
    the order first seen: torch's own record (``convert_frame.input_codes``) of the frames it
    compiled or looked at."""
    require(DUMP)
    from torch._dynamo import convert_frame

    found = []
    for ref in list(convert_frame.input_codes.seen):
        code = ref()
        if isinstance(code, types.CodeType):
            found.append(code)
    return found


def module_globals_of(code: types.CodeType) -> Optional[Dict[str, object]]:
    """The globals of the module that defined ``code``: an imported module or ``__main__``,
    found by file name, else ``__main__``'s (a notebook's cells each have a file of their
    own and share its globals); None when there is no ``__main__``."""
    for module in list(sys.modules.values()):
        if getattr(module, "__file__", None) == code.co_filename:
            return vars(module)
    main = sys.modules.get("__main__")
    return None if main is None else vars(main)


def dynamo_limit(name: str) -> Optional[int]:
    """The value of Dynamo's config setting *name* (``recompile_limit``,
    ``accumulated_recompile_limit``) now; None when torch has no such integer setting."""
    require(DUMP)
    import torch._dynamo.config as config

    value = getattr(config, name, None)
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def bytecode_logger() -> Any:
    """The logger behind ``TORCH_LOGS="+bytecode"`` (torch's "bytecode" artifact)."""
    require(DEPYF_INSTALL)
    import torch._logging

    return torch._logging.getArtifactLogger("torch._dynamo.convert_frame", "bytecode")


def entry_guard(code: types.CodeType, entry_code: types.CodeType) -> Optional[Any]:
    """The RawEntry of the cache entry of ``code`` that runs ``entry_code`` (its compile id,
    guard code parts and guard manager); None while there is no such entry."""
    for raw in raw_entries(code, DUMP):
        if raw.code is entry_code:
            return raw
    return None


def finished_compile() -> Optional[Tuple[types.CodeType, Any]]:
    """At the end of a compile (an end callback): the code and the guard manager of the cache
    entry torch is about to make, or None. torch makes the entry after the compile callbacks
    have run, so it is not in the frame's entry list yet: its code and guard are what torch's
    ``compile_inner`` (inside ``_compile``) is returning, a ConvertFrameReturn."""
    result = next(_compile_locals(("compile_inner",), "result"), None)
    first = result[0] if isinstance(result, tuple) and result else result
    guarded = getattr(first, "guarded_code", None)
    entry_code = getattr(guarded, "code", None)
    manager = getattr(guarded, "guard_manager", None)
    if isinstance(entry_code, types.CodeType) and manager is not None:
        return entry_code, manager
    return None


# --------------------------------------------------------------------------- framescope.dump: graphs and events
#
# Where framescope.dump meets torch.compile's graph pipeline (checked on torch 2.10 to 2.15):
#
# * Every graph Dynamo captures reaches the backend through ``OutputGraph.call_user_compiler
#   (gm, example_inputs)``, whatever backend object torch.compile was given and whenever it
#   was given: wrapping that one method sees every graph with its backend.
# * Every aot_autograd-based backend (aot_eager, inductor, ``aot_autograd(...)`` backends)
#   hands its forward / backward / inference compilers to ``aot_module_simplified`` through
#   ``torch._dynamo.backends.common``; wrapping that name sees each compiler call, including
#   the backward compile that AOTAutograd runs lazily on the first backward.
# * The structured trace (``torch._logging.trace_structured``) goes to the logger
#   ``torch.__trace``; a handler there receives each record's metadata dict and payload.


class TraceRecord(NamedTuple):
    """One record of torch's structured trace, in plain terms."""

    #: The record's kind: "artifact", "dynamo_output_graph", "compilation_metrics", ...
    kind: str
    #: For "artifact" records, the artifact's name; else None.
    name: Optional[str]
    #: The kind's metadata dict (for "artifact": name and encoding).
    metadata: Dict[str, Any]
    #: torch's compile id ("0/1") of the compile the record belongs to, or None.
    compile_id: Optional[str]
    #: The payload (text; JSON text for JSON payloads), or None.
    payload: Optional[str]


def add_trace_listener(listener: Callable[[TraceRecord], None]) -> Removable:
    """Call ``listener(record)`` for every structured-trace record torch emits from now on.

    torch builds a record only while its trace logger has a handler, so this turns the trace
    on (without writing it anywhere). ``torch._logging.set_logs()`` drops every handler of
    that logger, this one included.
    """
    require(TRACE)
    import logging

    from torch._logging._internal import trace_log

    class Handler(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            metadata = getattr(record, "metadata", None)
            if not isinstance(metadata, dict):
                return
            kind = next((k for k in metadata if k not in _TRACE_CONTEXT_KEYS), None)
            if kind is None:
                return
            body = metadata[kind]
            body = body if isinstance(body, dict) else {}
            name = body.get("name") if kind == "artifact" else None
            frame, attempt = metadata.get("frame_id"), metadata.get("frame_compile_id")
            compile_id = None if frame is None or attempt is None else "%s/%s" % (frame, attempt)
            payload = getattr(record, "payload", None)
            listener(TraceRecord(kind, name, body, compile_id, payload if isinstance(payload, str) else None))

        def handleError(self, record: logging.LogRecord) -> None:
            # A listener that fails must not print logging's traceback into the program's
            # output; the listeners catch and record their own errors.
            pass

    keep_out_of_dynamo(Handler.emit)
    handler = Handler(logging.DEBUG)
    old_level = trace_log.level
    if trace_log.level == logging.NOTSET or trace_log.level > logging.DEBUG:
        trace_log.setLevel(logging.DEBUG)
    trace_log.addHandler(handler)

    def remove() -> None:
        trace_log.removeHandler(handler)
        if not trace_log.handlers:
            trace_log.setLevel(old_level)

    return Removable(remove)


# Keys torch adds to every trace record besides the one naming its kind.
_TRACE_CONTEXT_KEYS = frozenset(
    (
        "rank", "compiled_autograd_id", "frame_id", "frame_compile_id", "attempt", "severity",
        "timestamp", "pathname", "thread", "subgraph_name", "has_payload", "stack",
    )
)


def hook_backend_calls(
    hook: Callable[[Any, List[Any], Callable[..., Any], Optional[types.CodeType], Callable[[], Any]], Any]
) -> Removable:
    """Route every Dynamo backend call through ``hook(gm, example_inputs, backend, code, call)``.

    ``code`` is the code object of the frame being compiled (None if unknown); ``call()``
    runs the backend as torch would and returns the compiled function; the hook returns what
    Dynamo gets (usually ``call()``'s result).
    """
    require(GRAPHS)
    from torch._dynamo.output_graph import OutputGraph

    original = OutputGraph.__dict__["call_user_compiler"]

    compile_as_torch_does = program_side(original)

    def hooked(self: Any, gm: Any, example_inputs: List[Any]) -> Any:
        code = getattr(getattr(self, "root_tx", None), "f_code", None)
        return hook(
            gm,
            example_inputs,
            self.compiler_fn,
            code if isinstance(code, types.CodeType) else None,
            lambda: compile_as_torch_does(self, gm, example_inputs),
        )

    return _replace(OutputGraph, "call_user_compiler", original, hooked)


#: The compiler arguments of aot_module_simplified, each ``compiler(graph_module, inputs)``.
AOT_COMPILERS = ("fw_compiler", "bw_compiler", "inference_compiler")


def hook_aot_compilers(
    wrap: Callable[[str, Callable[..., Any], Any], Callable[..., Any]],
    around: Callable[[Any, Callable[[], Any]], Any],
) -> Removable:
    """Replace each compiler an aot_autograd backend passes to AOTAutograd by
    ``wrap(kind, compiler, module)``, kind one of AOT_COMPILERS, ``module`` the GraphModule
    being compiled (Dynamo's graph, or a piece of it that a backend compiles on its own);
    and run AOTAutograd's whole compile of ``module`` as ``around(module, call)``."""
    require(AOT_GRAPHS)
    from torch._dynamo.backends import common

    original = common.aot_module_simplified
    compile_as_torch_does = program_side(original)

    def hooked(mod: Any, args: Any, *rest: Any, **kwargs: Any) -> Any:
        if rest:  # positional compilers: only fw_compiler (then bw_compiler) come first
            rest_list = list(rest)
            for i, kind in enumerate(AOT_COMPILERS[:2]):
                if i < len(rest_list) and callable(rest_list[i]):
                    rest_list[i] = _wrap_aot_compiler(wrap, kind, rest_list[i], mod)
            rest = tuple(rest_list)
        for kind in AOT_COMPILERS:
            if callable(kwargs.get(kind)):
                kwargs[kind] = _wrap_aot_compiler(wrap, kind, kwargs[kind], mod)
        return around(mod, lambda: compile_as_torch_does(mod, args, *rest, **kwargs))

    return _replace(common, "aot_module_simplified", original, hooked)


def _wrap_aot_compiler(
    wrap: Callable[[str, Callable[..., Any], Any], Callable[..., Any]], kind: str, compiler: Any, mod: Any
) -> Any:
    # Inductor's compilers are SerializableAOTDispatchCompiler objects, and AOTAutograd
    # treats those differently from plain functions (it may cache their results): a copy
    # with the inner function wrapped keeps the type.
    if hasattr(compiler, "output_code_ty") and callable(getattr(compiler, "compiler_fn", None)):
        import copy

        clone = copy.copy(compiler)
        clone.compiler_fn = framescope_side(wrap(kind, program_side(compiler.compiler_fn), mod))
        return clone
    # AOTAutograd compiles a backward lazily, on the first backward call: from the
    # program's code, where torch.compile's frame hook may be on.
    return framescope_side(wrap(kind, program_side(compiler), mod))


def backend_name(backend: object) -> str:
    """A short name for a torch.compile backend: "inductor", "eager", a function's name."""
    seen = 0
    while seen < 10:  # torch wraps backends a few levels deep
        seen += 1
        name = getattr(backend, "compiler_name", None)
        if isinstance(name, str):
            return name
        inner = getattr(backend, "_torchdynamo_orig_backend", None)
        if inner is None or inner is backend:
            break
        backend = inner
    name = getattr(backend, "__name__", None)
    return name if isinstance(name, str) else type(backend).__name__


def graph_identity(gm: Any) -> Tuple[Optional[str], Optional[str]]:
    """(Dynamo's name for a graph, ``__compiled_fn_<n>_<uuid>``; its compile id) or Nones."""
    meta = getattr(gm, "meta", None) or {}
    name = meta.get("backend_id")
    compile_id = meta.get("dynamo_compile_id")
    return (
        name if isinstance(name, str) else None,
        None if compile_id is None else str(compile_id),
    )


def graph_input_source(node: Any) -> Optional[str]:
    """Where a Dynamo graph's placeholder comes from, as torch writes it (``L['x']``)."""
    source = getattr(node, "_dynamo_source", None)
    if source is None:
        grapharg = node.meta.get("grapharg")
        source = getattr(grapharg, "source", None)
    if source is None:
        return None
    name = source.name
    try:
        name = name() if callable(name) else name
    except Exception:  # a source kind that cannot name itself
        return None
    return name if isinstance(name, str) else None


def is_generated_function(fn: object) -> bool:
    """Whether ``fn`` is a GraphModule forward that torch.fx generated (not yet replaced)."""
    code = getattr(fn, "__code__", None)
    return code is not None and code.co_filename.startswith("<eval_with_key>")


def output_code_callable(compiled: object) -> Optional[Callable[..., Any]]:
    """The Python function an Inductor compile result calls (its wrapper module's ``call``)."""
    return getattr(compiled, "current_callable", None)


def compiled_graph_parts(compiled: object) -> Tuple[Any, Optional[Callable[..., Any]]]:
    """(Dynamo's GraphModule, Inductor's output ``call``) behind the global a cache entry calls
    for a graph, where they are there (Nones otherwise): torch wraps what the backend returned
    a few levels deep (``__wrapped__``), down to the GraphModule's bound ``forward`` (eager) or
    to Inductor's compiled graph (``current_callable``)."""
    import torch

    seen = 0
    while compiled is not None and seen < 12:
        seen += 1
        owner = getattr(compiled, "__self__", None)
        if isinstance(owner, torch.fx.GraphModule):
            return owner, None
        if isinstance(compiled, torch.fx.GraphModule):
            return compiled, None
        if type(compiled).__name__ == "CompiledFxGraph":
            call = getattr(compiled, "current_callable", None)
            code = getattr(getattr(call, "__func__", call), "__code__", None)
            return None, call if code is not None and os.path.isfile(code.co_filename) else None
        compiled = getattr(compiled, "__wrapped__", None) or getattr(compiled, "_torchdynamo_orig_callable", None)
    return None, None


def output_code_module(path: str) -> Optional[types.ModuleType]:
    """The Python module Inductor loaded from the output code file ``path`` (from its cache
    folder), or None: torch keeps every output module it loads in ``PyCodeCache.modules``."""
    require(AOT_GRAPHS)
    from torch._inductor.codecache import PyCodeCache

    for module in reversed(PyCodeCache.modules):
        if getattr(module, "__file__", None) == path:
            return module
    return None


def no_compile_caches() -> Any:
    """A context manager that turns off Inductor's and AOTAutograd's compile caches inside.

    On a cache hit torch skips the compile steps whose output a dump shows (and the
    compiler calls framescope follows), so a dump compiles everything afresh.
    """
    require(AOT_GRAPHS)
    import contextlib

    import torch._functorch.config as functorch_config
    import torch._inductor.config as inductor_config

    @contextlib.contextmanager
    def patched() -> Any:
        with inductor_config.patch(fx_graph_cache=False, fx_graph_remote_cache=False):
            with functorch_config.patch(
                enable_autograd_cache=False, enable_remote_autograd_cache=False
            ):
                yield

    return patched()


def provenance_tracking() -> Any:
    """A context manager inside which Inductor records, in the structured trace, the FX nodes
    and the user's stack traces behind each kernel (artifacts
    ``inductor_provenance_tracking_node_mappings`` and ``..._kernel_stack_traces``)."""
    require(PROVENANCE)
    import torch._inductor.config as inductor_config

    return inductor_config.patch({"trace.provenance_tracking_level": 1})


def on_compile_end(callback: Callable[[], None]) -> Removable:
    """Call ``callback()`` when torch.compile has finished compiling a frame (outermost
    compiles only): after its bytecode hooks ran, before the new code first runs."""
    require(DEBUG)
    from torch._dynamo.callback import callback_handler

    def end(args: object) -> None:
        callback()

    keep_out_of_dynamo(end)
    callback_handler.register_end_callback(end)
    return Removable(lambda: callback_handler.remove_end_callback(end))
