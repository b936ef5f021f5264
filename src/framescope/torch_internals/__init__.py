"""The one place where framescope touches torch's private Dynamo internals.

Everything here is built on ``torch._C._dynamo.eval_frame`` (the C-level PEP 523 hook that
torch.compile installs) and on a few Python types and hooks of ``torch._dynamo``. These are
private and change between torch releases, so every use is gathered here and listed in
:data:`INTERNALS`, each with the framescope features that need it. Before a feature first
touches torch, the internals it needs are probed once (they exist and have the expected
fields or parameters): a torch that has them all is used, whatever its version (one
``UserWarning`` for a version outside the tested range); a missing one raises
:class:`UnsupportedTorchError` naming the internal and the feature. Features that do not
need it keep working, and the decompiler and ``framescope report`` never need torch.

torch is imported on first use only, never when this package is imported.

Its modules: ``probes`` (what framescope uses of torch and whether torch has it),
``frames`` (the frame-evaluation hook and cache entries), ``compiles`` (torch.compile's
hooks, trace and graph pipeline). Everything is also importable from here.
"""
from __future__ import annotations

from framescope.errors import UnsupportedTorchError  # noqa: F401  (raised here, also exported here)
from framescope.torch_internals.probes import (
    AOT_GRAPHS,
    DEBUG,
    DEPYF_DISPATCH,
    DEPYF_INSTALL,
    DUMP,
    EVALFRAME,
    FOREIGN_ENTRY_REASON,
    GRAPHS,
    GUARD_HOOK,
    INTERNALS,
    Internal,
    PROVENANCE,
    TESTED_TORCH,
    TRACE,
    WORKS_WITHOUT_TORCH,
    missing,
    parse_version,
    probe,
    require,
    tested_range,
    version_warning,
)
from framescope.torch_internals.frames import (
    framescope_side,
    keep_out_of_dynamo,
    program_side,
    RawEntry,
    compile_function,
    compiled_inner,
    current_callback,
    guarded_result,
    load,
    mark_default,
    mark_skip,
    mark_skip_all,
    on_guards_checked,
    raw_entries,
    reset_code,
    run_original_result,
    set_eval_frame,
    skip_all_result,
    skip_result,
)
from framescope.torch_internals.guard_tree import EPILOGUE, GuardLeaf, leaves
from framescope.torch_internals.compiles import (
    AOT_COMPILERS,
    Removable,
    TraceRecord,
    add_trace_listener,
    backend_name,
    bytecode_logger,
    codes_seen,
    compiled_graph_parts,
    compiling_globals,
    compiling_locals,
    current_compile_id,
    dynamo_limit,
    entry_guard,
    graph_identity,
    graph_input_source,
    hook_aot_compilers,
    hook_backend_calls,
    is_generated_function,
    module_globals_of,
    no_compile_caches,
    on_compile_end,
    on_compile_start,
    output_code_callable,
    output_code_module,
    provenance_tracking,
    register_bytecode_hook,
)

__all__ = [
    "FILES",
    "EPILOGUE",
    "GuardLeaf",
    "leaves",
    "UnsupportedTorchError",
    "AOT_COMPILERS",
    "AOT_GRAPHS",
    "DEBUG",
    "DEPYF_DISPATCH",
    "DEPYF_INSTALL",
    "DUMP",
    "EVALFRAME",
    "FOREIGN_ENTRY_REASON",
    "GRAPHS",
    "GUARD_HOOK",
    "INTERNALS",
    "Internal",
    "PROVENANCE",
    "RawEntry",
    "Removable",
    "TESTED_TORCH",
    "TRACE",
    "TraceRecord",
    "WORKS_WITHOUT_TORCH",
    "add_trace_listener",
    "backend_name",
    "bytecode_logger",
    "compile_function",
    "compiled_inner",
    "codes_seen",
    "compiled_graph_parts",
    "compiling_globals",
    "compiling_locals",
    "current_callback",
    "current_compile_id",
    "dynamo_limit",
    "entry_guard",
    "graph_identity",
    "graph_input_source",
    "guarded_result",
    "hook_aot_compilers",
    "hook_backend_calls",
    "is_generated_function",
    "framescope_side",
    "keep_out_of_dynamo",
    "program_side",
    "load",
    "module_globals_of",
    "mark_default",
    "mark_skip",
    "mark_skip_all",
    "missing",
    "no_compile_caches",
    "on_compile_end",
    "on_compile_start",
    "on_guards_checked",
    "output_code_callable",
    "output_code_module",
    "parse_version",
    "probe",
    "provenance_tracking",
    "raw_entries",
    "register_bytecode_hook",
    "require",
    "reset_code",
    "run_original_result",
    "set_eval_frame",
    "skip_all_result",
    "skip_result",
    "tested_range",
    "version_warning",
]

#: The files of this package's modules, as their code objects name them: framescope's own
#: frames, which framescope's hooks leave alone.
FILES = frozenset(fn.__code__.co_filename for fn in (require, load, register_bytecode_hook))
