"""The one module where framescope touches torch's private Dynamo internals.

Everything here is built on ``torch._C._dynamo.eval_frame`` (the C-level PEP 523 hook that
torch.compile installs) and on a few Python types and hooks of ``torch._dynamo``. These are
private and change between torch releases, so every use is gathered here and listed in
:data:`INTERNALS`, each with the framescope features that need it. Before a feature first
touches torch, the internals it needs are probed once (they exist and have the expected
fields or parameters): a torch that has them all is used, whatever its version (one
``UserWarning`` for a version outside the tested range); a missing one raises
:class:`UnsupportedTorchError` naming the internal and the feature. Features that do not
need it keep working, and the decompiler and ``framescope report`` never need torch.

torch is imported on first use only, never when this module is imported.

Facts this module relies on (checked on torch 2.10 to 2.15):

* ``set_eval_frame(callback)`` installs ``callback(frame, first_cache_entry, frame_state)``
  for the current thread and returns the previous one; ``None`` means plain evaluation.
* The callback must return a ``ConvertFrameReturn``: its ``frame_exec_strategy`` decides what
  happens to this frame (and, with ``apply_to_code``, to every later frame of the same code),
  its ``guarded_code`` (a ``GuardedCode``) becomes a new cache entry that runs at once.
* A cache entry's guard must be a ``GuardManagerWrapper``; a Python predicate becomes one
  through ``root.add_lambda_guard``. An exception raised by such a predicate is swallowed by
  torch and counts as a failed guard.
* Cache entries remember the backend that made them (the callback object itself unless it
  has ``_torchdynamo_orig_backend``) and are only tried while a callback with the same
  backend is installed, so entries made by framescope and by torch.compile never mix.
"""
from __future__ import annotations

import importlib
import inspect
import re
import sys
import types
import warnings
from typing import Any, Callable, Dict, List, NamedTuple, Optional, Tuple

from framescope.errors import UnsupportedTorchError  # noqa: F401  (raised here, also exported here)

#: The oldest and the newest torch release (major, minor) framescope is tested on.
TESTED_TORCH = ((2, 10), (2, 15))

# Shown in the guard-failure reasons torch.compile logs for entries it does not own.
FOREIGN_ENTRY_REASON = "entry installed by a framescope.evalframe hook"

# The features of framescope that use torch's internals, as a user knows them.
EVALFRAME = "framescope.evalframe"
DUMP = "framescope.dump"
GRAPHS = "framescope.dump (graph files)"
AOT_GRAPHS = "framescope.dump (AOTAutograd and Inductor graph files)"
TRACE = "framescope.dump (graph breaks and recompile reasons)"
DEBUG = "framescope.debug"
PROVENANCE = "framescope.dump (the user lines of Inductor's kernels)"
DEPYF_INSTALL = "framescope.depyf.install"
DEPYF_DISPATCH = "framescope.depyf.optimization.TorchCompileWrapperWithCustomDispatcher"

#: What works without torch at all, for messages about a torch framescope cannot use.
WORKS_WITHOUT_TORCH = "framescope decompile and framescope report do not need torch"


class Internal(NamedTuple):
    """One private piece of torch that framescope uses, and how to tell it is there."""

    #: ``module:attribute.path``, e.g. ``torch._dynamo.types:ConvertFrameReturn``.
    path: str
    #: The framescope features that cannot work without it.
    features: Tuple[str, ...]
    #: Attributes the object must have (fields of a class, methods, enum members).
    attrs: Tuple[str, ...] = ()
    #: Parameter names its signature must have (for functions and classes).
    params: Tuple[str, ...] = ()

    @property
    def name(self) -> str:
        return self.path.replace(":", ".")


_HOOK = (EVALFRAME, DUMP, DEBUG)
_EVAL_FRAME = "torch._C._dynamo.eval_frame:"

#: Every private internal framescope touches, with the features that need it.
INTERNALS = (
    Internal(_EVAL_FRAME + "set_eval_frame", (EVALFRAME,)),
    Internal(_EVAL_FRAME + "get_eval_frame_callback", (EVALFRAME,)),
    Internal(_EVAL_FRAME + "set_code_exec_strategy", _HOOK),
    Internal(_EVAL_FRAME + "reset_code", (EVALFRAME,)),
    Internal(_EVAL_FRAME + "_debug_get_cache_entry_list", (EVALFRAME, DUMP, DEPYF_DISPATCH)),
    Internal(
        _EVAL_FRAME + "_CacheEntry",
        (EVALFRAME, DUMP, DEPYF_DISPATCH),
        attrs=("code", "guard_manager", "backend", "compile_id"),
    ),
    Internal("torch._C._dynamo.guards:RootGuardManager", (EVALFRAME,), attrs=("add_lambda_guard",)),
    Internal(
        "torch._dynamo.types:ConvertFrameReturn",
        _HOOK,
        params=("frame_exec_strategy", "apply_to_code", "guarded_code"),
    ),
    Internal("torch._dynamo.types:GuardedCode", (EVALFRAME,), params=("code", "guard_manager", "compile_id")),
    Internal("torch._dynamo.types:FrameExecStrategy", _HOOK, attrs=("cur_action", "recursive_action")),
    Internal("torch._dynamo.types:FrameAction", _HOOK, attrs=("DEFAULT", "SKIP", "RUN_ONLY")),
    Internal(
        "torch._dynamo.guards:DeletedGuardManagerWrapper",
        (EVALFRAME,),
        attrs=("populate_code_parts_for_debugging",),
    ),
    Internal(
        "torch._dynamo.convert_frame:register_bytecode_hook", (DUMP, DEPYF_INSTALL, DEPYF_DISPATCH), params=("hook",)
    ),
    Internal("torch._dynamo.convert_frame:_compile", (DUMP, DEPYF_DISPATCH), params=("globals", "locals")),
    # The logger of TORCH_LOGS="+bytecode", where depyf's install() logs decompiled source.
    Internal("torch._logging:getArtifactLogger", (DEPYF_INSTALL,), params=("module_qname", "artifact_name")),
    Internal(
        "torch._dynamo.callback:callback_handler",
        (DUMP, DEBUG),
        attrs=(
            "register_start_callback", "remove_start_callback",
            "register_end_callback", "remove_end_callback",
        ),
    ),
    Internal("torch._guards:CompileContext.current_compile_id", (DUMP, DEPYF_DISPATCH)),
    Internal(
        "torch._dynamo.output_graph:OutputGraph.call_user_compiler",
        (GRAPHS,),
        params=("gm", "example_inputs"),
    ),
    Internal(
        "torch._dynamo.backends.common:aot_module_simplified",
        (AOT_GRAPHS,),
        params=("mod", "args", "fw_compiler", "bw_compiler", "inference_compiler"),
    ),
    Internal("torch._inductor.config:fx_graph_cache", (AOT_GRAPHS,)),
    Internal("torch._inductor.config:fx_graph_remote_cache", (AOT_GRAPHS,)),
    Internal("torch._functorch.config:enable_autograd_cache", (AOT_GRAPHS,)),
    Internal("torch._functorch.config:enable_remote_autograd_cache", (AOT_GRAPHS,)),
    # Inductor's provenance tracking: which FX nodes and user lines each kernel computes.
    Internal("torch._inductor.config:trace", (PROVENANCE,), attrs=("provenance_tracking_level",)),
    Internal("torch._logging:trace_structured", (TRACE,)),
    # The structured trace's logger (``torch.__trace``).
    Internal("torch._logging._internal:trace_log", (TRACE,), attrs=("handlers",)),
)


class RawEntry(NamedTuple):
    """One cache entry of a code object, as torch stores it, in plain Python terms."""

    #: The code object that runs when the guard passes.
    code: types.CodeType
    #: The object the entry was made for: a framescope hook, or torch.compile's backend.
    owner: object
    #: What framescope attached to an entry it made itself; None for torch.compile's.
    payload: object
    #: ``check(f_locals) -> bool``: runs the entry's guard on a dict of local variables.
    check: Callable[[Dict[str, object]], bool]
    #: The guard as torch prints it, one string per check (often not valid Python).
    code_parts: Tuple[str, ...]
    #: torch.compile's id for the compile that made the entry ("0/1"), or None.
    compile_id: Optional[str]


class _Torch:
    """The torch objects framescope uses, resolved once after probing them."""

    def __init__(self) -> None:
        from torch._C._dynamo import eval_frame as c_eval_frame
        from torch._dynamo import guards, types as dynamo_types

        #: torch._C._dynamo.eval_frame: set_eval_frame, set_code_exec_strategy, ...
        self.c = c_eval_frame
        #: Class of the object a callback returns.
        self.ConvertFrameReturn = dynamo_types.ConvertFrameReturn
        #: Class of a new cache entry (code plus guard manager).
        self.GuardedCode = dynamo_types.GuardedCode
        #: Class of a frame strategy: (action for this frame, action for its callees).
        self.Strategy = dynamo_types.FrameExecStrategy
        #: DEFAULT / SKIP / RUN_ONLY.
        self.Action = dynamo_types.FrameAction
        #: Guard manager class for framescope's entries, see _hook_guard_class.
        self.HookGuard = _hook_guard_class(guards)

        action = self.Action
        # The results a framescope callback hands back to torch, made once: torch only reads
        # their fields. DEFAULT as the action for callees keeps the hook on in called code.
        self.skip = self.ConvertFrameReturn(
            frame_exec_strategy=self.Strategy(action.SKIP, action.DEFAULT), apply_to_code=True
        )
        self.skip_all = self.ConvertFrameReturn(
            frame_exec_strategy=self.Strategy(action.SKIP, action.SKIP), apply_to_code=True
        )
        self.run_original = self.ConvertFrameReturn(
            frame_exec_strategy=self.Strategy(action.DEFAULT, action.DEFAULT), apply_to_code=False
        )
        self.default_strategy = self.Strategy(action.DEFAULT, action.DEFAULT)
        self.skip_strategy = self.Strategy(action.SKIP, action.DEFAULT)


def _hook_guard_class(guards: Any) -> type:
    # torch.compile walks every cache entry of a code object when it recompiles, to log why
    # each guard failed, and that walk needs fields only its own guard managers have. It
    # stops early for a DeletedGuardManagerWrapper and just prints its reason, so
    # framescope's guards subclass that: torch.compile then treats them as foreign entries.
    class HookGuardManager(guards.DeletedGuardManagerWrapper):
        def __init__(self, payload: object) -> None:
            super().__init__(FOREIGN_ENTRY_REASON)
            #: What framescope wants back when it lists this entry.
            self.framescope_payload = payload

    return HookGuardManager


_torch: Optional[_Torch] = None
#: Internal path -> what torch lacks of it (None: nothing), for each internal probed so far.
_probed: Dict[str, Optional[str]] = {}
_warned_version = False


def parse_version(text: str) -> Tuple[int, int]:
    """(major, minor) of a torch version string such as ``2.13.0+cpu``."""
    match = re.match(r"(\d+)\.(\d+)", text)
    if match is None:
        raise UnsupportedTorchError("cannot read the torch version %r" % text)
    return int(match.group(1)), int(match.group(2))


def tested_range() -> str:
    """The tested torch releases as text: ``2.10 to 2.15``."""
    return "%d.%d to %d.%d" % (TESTED_TORCH[0] + TESTED_TORCH[1])


def version_warning(text: str) -> Optional[str]:
    """Why torch ``text`` deserves a warning (it is outside the tested range), or None."""
    version = parse_version(text)
    if TESTED_TORCH[0] <= version <= TESTED_TORCH[1]:
        return None
    return "framescope is tested with torch %s, not %s; torch %s has every internal framescope uses, so it is used" % (
        tested_range(), text, text
    )


def probe(internal: Internal) -> Optional[str]:
    """What the installed torch lacks of ``internal`` (a noun phrase), or None when it is there."""
    module_name, _, attribute = internal.path.partition(":")
    try:
        found: Any = importlib.import_module(module_name)
    except Exception as exc:  # ImportError, or a module that fails while importing
        return "the module %s (%s)" % (module_name, type(exc).__name__)
    for part in attribute.split("."):
        try:
            found = getattr(found, part)
        except AttributeError:
            return internal.name
    lacking = [name for name in internal.attrs if not hasattr(found, name)]
    if internal.params:
        try:
            parameters = inspect.signature(found).parameters
        except (TypeError, ValueError):  # a builtin without a signature: nothing to compare
            parameters = None
        if parameters is not None:
            lacking += [name for name in internal.params if name not in parameters]
    if lacking:
        return "%s of %s" % ("/".join(lacking), internal.name)
    return None


def missing(feature: str) -> List[str]:
    """What the installed torch lacks of the internals ``feature`` needs (each probed once)."""
    lacking = []
    for internal in INTERNALS:
        if feature in internal.features:
            if internal.path not in _probed:
                _probed[internal.path] = probe(internal)
            if _probed[internal.path] is not None:
                lacking.append(_probed[internal.path])
    return lacking


def require(feature: str) -> None:
    """Import torch and make sure it has every internal ``feature`` needs.

    Raises UnsupportedTorchError (one line: what is missing, for which feature) otherwise.
    A torch outside the tested range that passes gets one UserWarning per process.
    """
    global _warned_version
    try:
        import torch
    except ImportError:
        raise UnsupportedTorchError(
            "%s needs torch (tested with %s), which is not installed; %s"
            % (feature, tested_range(), WORKS_WITHOUT_TORCH)
        ) from None
    lacking = missing(feature)
    if lacking:
        raise UnsupportedTorchError(
            "torch %s lacks %s, which %s needs; %s"
            % (torch.__version__, ", ".join(lacking), feature, WORKS_WITHOUT_TORCH)
        )
    if not _warned_version:
        _warned_version = True
        message = version_warning(str(torch.__version__))
        if message is not None:
            warnings.warn(message, UserWarning, stacklevel=3)


def load() -> _Torch:
    """torch's frame-evaluation internals, resolved once after probing them."""
    global _torch
    if _torch is None:
        require(EVALFRAME)
        _torch = _Torch()
    return _torch


# --------------------------------------------------------------------------- the hook


def set_eval_frame(callback: object) -> object:
    """Install ``callback`` as this thread's frame-evaluation callback; return the old one."""
    return load().c.set_eval_frame(callback)


def current_callback() -> object:
    """This thread's frame-evaluation callback (None when there is none)."""
    return load().c.get_eval_frame_callback()


def skip_result() -> object:
    """Callback result: run this frame normally and never call back for its code again."""
    return load().skip


def skip_all_result() -> object:
    """Callback result: like skip_result, and the frames it calls never reach the callback.

    Not for code that installs a callback itself: torch puts the callback that was active
    back when such a frame returns, undoing what the frame installed.
    """
    return load().skip_all


def run_original_result() -> object:
    """Callback result: run this frame normally, call back again next time."""
    return load().run_original


def guarded_result(
    code: types.CodeType, predicate: Callable[[Dict[str, object]], bool], text: str, payload: object
) -> object:
    """Callback result: add a cache entry (``code`` guarded by ``predicate``) and run it now.

    ``payload`` comes back in :attr:`RawEntry.payload` when the entry is listed.
    """
    t = load()
    guard = t.HookGuard(payload)
    _add_lambda_guard(guard.root, predicate, text)
    guard.populate_code_parts_for_debugging()
    entry = t.GuardedCode(code, guard, None)
    return t.ConvertFrameReturn(
        frame_exec_strategy=t.default_strategy, apply_to_code=False, guarded_code=entry
    )


def _add_lambda_guard(root: Any, predicate: Callable[[Dict[str, object]], bool], text: str) -> None:
    # torch 2.13+ take the user's stack as a third argument (None: none), torch 2.10-2.12
    # take the predicate and its text only. pybind11 checks the arguments before the call
    # and says TypeError; the predicate does not run here.
    try:
        root.add_lambda_guard(predicate, [text], None)
    except TypeError:
        root.add_lambda_guard(predicate, [text])


def mark_default(code: types.CodeType) -> None:
    """Undo a skip mark: frames of ``code`` reach the callback again."""
    t = load()
    t.c.set_code_exec_strategy(code, t.default_strategy)


def mark_skip(code: types.CodeType) -> None:
    """Put back a skip mark that mark_default took away."""
    t = load()
    t.c.set_code_exec_strategy(code, t.skip_strategy)


def reset_code(code: types.CodeType) -> None:
    """Drop every cache entry, mark and frame state torch keeps on ``code``."""
    load().c.reset_code(code)


# --------------------------------------------------------------------------- cache entries


def raw_entries(code: types.CodeType, feature: str = EVALFRAME) -> List[RawEntry]:
    """The cache entries of ``code`` in the order torch tries them (most recently used first);
    ``feature`` is the framescope feature that asks, for the message when torch lacks them."""
    require(feature)
    from torch._C._dynamo import eval_frame as c_eval_frame

    result = []
    for entry in c_eval_frame._debug_get_cache_entry_list(code):
        guard = entry.guard_manager
        compile_id = entry.compile_id
        result.append(
            RawEntry(
                code=entry.code,
                owner=entry.backend,
                payload=getattr(guard, "framescope_payload", None),
                check=guard.check,
                code_parts=tuple(guard.code_parts or ()),
                compile_id=None if compile_id is None else str(compile_id),
            )
        )
    return result


# --------------------------------------------------------------------------- torch.compile


def compile_function(fn: Callable[..., Any], options: Dict[str, Any]) -> Callable[..., Any]:
    """``torch.compile(fn, **options)``, after probing the hook's internals."""
    load()
    import torch

    return torch.compile(fn, **options)


def compiled_inner(obj: object) -> List[object]:
    """What a torch.compile wrapper wraps, one level down; [] for anything else."""
    inner = []
    orig = getattr(obj, "_torchdynamo_orig_callable", None)
    if orig is not None:
        inner.append(orig)
    if getattr(obj, "_orig_mod", None) is not None:
        # torch.compile(module) gives an OptimizedModule; for torch's own module classes it
        # compiles a wrapper frame around the module, reachable through its forward.
        inner.append(obj.forward)  # type: ignore[attr-defined]
    return inner


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

    return Removable(convert_frame.register_bytecode_hook(hook).remove)


def on_compile_start(callback: Callable[[], None]) -> Removable:
    """Call ``callback()`` when torch.compile starts compiling a frame (outermost compiles only)."""
    require(DUMP)
    from torch._dynamo.callback import callback_handler

    def start(args: object) -> None:
        callback()

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
    from torch._dynamo import convert_frame

    frame = sys._getframe(2)
    while frame is not None:
        code = frame.f_code
        if code.co_filename == convert_frame.__file__ and code.co_name in ("_compile_inner", "_compile"):
            found = frame.f_locals.get(name)
            if isinstance(found, dict):
                return found
        frame = frame.f_back
    return None


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


def entry_guard(
    code: types.CodeType, entry_code: types.CodeType
) -> Optional[Tuple[Optional[str], Tuple[str, ...]]]:
    """(compile id, guard code parts) of the cache entry of ``code`` that runs ``entry_code``;
    None while there is no such entry."""
    for raw in raw_entries(code, DUMP):
        if raw.code is entry_code:
            return raw.compile_id, raw.code_parts
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

    def call_user_compiler(self: Any, gm: Any, example_inputs: List[Any]) -> Any:
        code = getattr(getattr(self, "root_tx", None), "f_code", None)
        return hook(
            gm,
            example_inputs,
            self.compiler_fn,
            code if isinstance(code, types.CodeType) else None,
            lambda: original(self, gm, example_inputs),
        )

    call_user_compiler.__wrapped__ = original  # type: ignore[attr-defined]
    OutputGraph.call_user_compiler = call_user_compiler

    def remove() -> None:
        if OutputGraph.__dict__.get("call_user_compiler") is call_user_compiler:
            OutputGraph.call_user_compiler = original

    return Removable(remove)


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

    def aot_module_simplified(mod: Any, args: Any, *rest: Any, **kwargs: Any) -> Any:
        if rest:  # positional compilers: only fw_compiler (then bw_compiler) come first
            rest_list = list(rest)
            for i, kind in enumerate(AOT_COMPILERS[:2]):
                if i < len(rest_list) and callable(rest_list[i]):
                    rest_list[i] = _wrap_aot_compiler(wrap, kind, rest_list[i], mod)
            rest = tuple(rest_list)
        for kind in AOT_COMPILERS:
            if callable(kwargs.get(kind)):
                kwargs[kind] = _wrap_aot_compiler(wrap, kind, kwargs[kind], mod)
        return around(mod, lambda: original(mod, args, *rest, **kwargs))

    common.aot_module_simplified = aot_module_simplified

    def remove() -> None:
        if common.aot_module_simplified is aot_module_simplified:
            common.aot_module_simplified = original

    return Removable(remove)


def _wrap_aot_compiler(
    wrap: Callable[[str, Callable[..., Any], Any], Callable[..., Any]], kind: str, compiler: Any, mod: Any
) -> Any:
    # Inductor's compilers are SerializableAOTDispatchCompiler objects, and AOTAutograd
    # treats those differently from plain functions (it may cache their results): a copy
    # with the inner function wrapped keeps the type.
    if hasattr(compiler, "output_code_ty") and callable(getattr(compiler, "compiler_fn", None)):
        import copy

        clone = copy.copy(compiler)
        clone.compiler_fn = wrap(kind, compiler.compiler_fn, mod)
        return clone
    return wrap(kind, compiler, mod)


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


# --------------------------------------------------------------------------- framescope.debug
#
# A debugger's own Python code runs inside compiled code whenever it stops there: the trace
# function and everything it calls (pdb's prompt, debugpy's variable views) start frames on
# a thread where torch.compile's frame hook is still installed. torch.compile then compiles
# the debugger's functions, which costs time, shifts the numbers of later graphs
# (``__compiled_fn_<n>``) and puts the debugger into a dump. A code object marked
# SKIP/SKIP runs plainly and so does everything it calls.


def mark_skip_all(code: types.CodeType) -> None:
    """Make frames of ``code``, and every frame they call, run without torch.compile's hook."""
    require(DEBUG)
    from torch._C._dynamo import eval_frame as c_eval_frame
    from torch._dynamo.types import FrameAction, FrameExecStrategy

    c_eval_frame.set_code_exec_strategy(code, FrameExecStrategy(FrameAction.SKIP, FrameAction.SKIP))


def on_compile_end(callback: Callable[[], None]) -> Removable:
    """Call ``callback()`` when torch.compile has finished compiling a frame (outermost
    compiles only): after its bytecode hooks ran, before the new code first runs."""
    require(DEBUG)
    from torch._dynamo.callback import callback_handler

    def end(args: object) -> None:
        callback()

    callback_handler.register_end_callback(end)
    return Removable(lambda: callback_handler.remove_end_callback(end))
