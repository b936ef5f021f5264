"""Which private pieces of torch framescope uses, and whether the installed torch has them.

:data:`INTERNALS` lists every private attribute framescope touches, each with the features
(as a user knows them) that need it. Before a feature first touches torch, the internals it
needs are probed once (they exist and have the expected fields or parameters): a torch that
has them all is used, whatever its version (one ``UserWarning`` for a version outside the
tested range); a missing one raises :class:`UnsupportedTorchError` naming the internal and
the feature.
"""
from __future__ import annotations

import importlib
import inspect
import re
import warnings
from typing import Any, Dict, List, NamedTuple, Optional, Tuple

from framescope.errors import UnsupportedTorchError

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
GUARD_HOOK = "framescope.dump (calls that missed every cache entry)"
ENTRY_CALLS = "framescope.dump (the calls each cache entry served, before CPython 3.12)"
AOT_COMPILE = "framescope.dump (functions compiled with torch.compile(...).aot_compile)"
SOURCE_CACHE = "framescope.dump (decompiled code kept between runs, with the compile caches)"
PRECOMPILE = "framescope.dump (functions torch.compiler.precompile captures)"
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
    #: The first torch release (major, minor) that has it; the features that need a newer
    #: one than installed are left out, not refused.
    since: Tuple[int, int] = (2, 10)

    @property
    def name(self) -> str:
        return self.path.replace(":", ".")


_HOOK = (EVALFRAME, DUMP, DEBUG)
# Every feature that installs a hook torch may call with its frame hook on (keep_out_of_dynamo).
_SKIPPING = _HOOK + (DEPYF_INSTALL, DEPYF_DISPATCH)
_EVAL_FRAME = "torch._C._dynamo.eval_frame:"

#: Every private internal framescope touches, with the features that need it.
INTERNALS = (
    Internal(_EVAL_FRAME + "set_eval_frame", _SKIPPING),
    Internal(_EVAL_FRAME + "get_eval_frame_callback", (EVALFRAME,)),
    Internal(_EVAL_FRAME + "set_code_exec_strategy", _SKIPPING),
    Internal(_EVAL_FRAME + "reset_code", (EVALFRAME,)),
    # torch.compile(fn, fullgraph=True).aot_compile(...) compiles through this function and
    # returns an AOTCompiledFunction (its _artifacts: original_code, runtime_env.bytecode,
    # guard_manager, backend_id; fn, the function it calls).
    Internal("torch._dynamo.aot_compile:aot_compile_fullgraph", (AOT_COMPILE,),
             params=("model", "example_inputs", "hooks", "backend")),
    Internal("torch._dynamo.aot_compile:CompileArtifacts", (AOT_COMPILE,),
             params=("guard_manager", "backend_id", "original_code", "runtime_env")),
    Internal("torch._dynamo.convert_frame:GraphRuntimeEnv", (AOT_COMPILE,), params=("bytecode",)),
    # torch.compiler.precompile (a prototype of torch 2.15): its make_fx capture holds the
    # artefact it writes as _rendered (python_code, cache) and what it traced as _module
    # (a PrecompiledModule: _fn, _backend) once called.
    Internal("torch._precompile:_MakeFxCapture", (PRECOMPILE,), attrs=("__call__", "_write"), since=(2, 15)),
    Internal("torch._precompile:PrecompiledModule", (PRECOMPILE,), attrs=("to_python_code",), since=(2, 15)),
    # Called after each guard check of a frame with entries, with whether one passed.
    Internal(_EVAL_FRAME + "set_guard_complete_hook", (GUARD_HOOK,)),
    # An epilogue guard that always passes counts the calls an entry serves (count_passes).
    Internal("torch._C._dynamo.guards:RootGuardManager", (ENTRY_CALLS,), attrs=("add_epilogue_lambda_guard",)),
    Internal(_EVAL_FRAME + "_debug_get_cache_entry_list", (EVALFRAME, DUMP, DEPYF_DISPATCH)),
    Internal(
        _EVAL_FRAME + "_CacheEntry",
        (EVALFRAME, DUMP, DEPYF_DISPATCH),
        attrs=("code", "guard_manager", "backend", "compile_id"),
    ),
    Internal("torch._C._dynamo.guards:RootGuardManager", (EVALFRAME,), attrs=("add_lambda_guard",)),
    # The guard tree a dump writes leaf by leaf (guard_tree).
    Internal(
        "torch._C._dynamo.guards:RootGuardManager",
        (DUMP,),
        attrs=("get_leaf_guards", "get_child_managers", "get_epilogue_lambda_guards", "get_source",
               "get_type_of_guarded_value", "check"),
    ),
    Internal(
        "torch._dynamo.types:ConvertFrameReturn",
        _HOOK,
        params=("frame_exec_strategy", "apply_to_code", "guarded_code"),
    ),
    Internal("torch._dynamo.types:GuardedCode", (EVALFRAME,), params=("code", "guard_manager", "compile_id")),
    Internal("torch._dynamo.types:FrameExecStrategy", _SKIPPING, attrs=("cur_action", "recursive_action")),
    Internal("torch._dynamo.types:FrameAction", _SKIPPING, attrs=("DEFAULT", "SKIP", "RUN_ONLY")),
    Internal(
        "torch._dynamo.guards:DeletedGuardManagerWrapper",
        (EVALFRAME,),
        attrs=("populate_code_parts_for_debugging",),
    ),
    Internal(
        "torch._dynamo.convert_frame:register_bytecode_hook", (DUMP, DEPYF_INSTALL, DEPYF_DISPATCH), params=("hook",)
    ),
    Internal("torch._dynamo.convert_frame:_compile", (DUMP, DEPYF_DISPATCH), params=("globals", "locals")),
    # The code objects torch.compile's frame hook was given: where a dump finds the entries
    # compiled before it began.
    Internal("torch._dynamo.convert_frame:input_codes", (DUMP,), attrs=("seen",)),
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
    # The output modules Inductor loaded: found by file after an AOTAutograd cache hit.
    Internal("torch._inductor.codecache:PyCodeCache", (AOT_GRAPHS,), attrs=("modules",)),
    Internal("torch._inductor.config:fx_graph_remote_cache", (AOT_GRAPHS,)),
    # The folder of torch's compile caches, where a dump keeps the code it decompiled.
    Internal("torch._inductor.runtime.cache_dir_utils:cache_dir", (SOURCE_CACHE,)),
    Internal("torch._functorch.config:enable_autograd_cache", (AOT_GRAPHS,)),
    Internal("torch._functorch.config:enable_remote_autograd_cache", (AOT_GRAPHS,)),
    # Inductor's provenance tracking: which FX nodes and user lines each kernel computes.
    Internal("torch._inductor.config:trace", (PROVENANCE,), attrs=("provenance_tracking_level",)),
    Internal("torch._logging:trace_structured", (TRACE,)),
    # The structured trace's logger (``torch.__trace``).
    Internal("torch._logging._internal:trace_log", (TRACE,), attrs=("handlers",)),
)


#: Each internal probed so far -> what torch lacks of it (None: nothing).
_probed: Dict[Internal, Optional[str]] = {}
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
            if internal not in _probed:
                _probed[internal] = probe(internal)
            if _probed[internal] is not None:
                lacking.append(_probed[internal])
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
