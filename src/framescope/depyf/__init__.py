"""depyf's API on framescope: ``from framescope import depyf`` in place of ``import depyf``.

Each name takes depyf's arguments and means what it means in depyf 0.20 (the last release);
docs/depyf.md lists every depyf name with its framescope counterpart and the differences.
Like the rest of framescope, importing this module does not import torch.

* :func:`prepare_debug` -- :func:`framescope.dump` under depyf's name and parameters; a
  context manager, or entered by hand and finished when the process exits.
* :func:`debug` -- pause at a breakpoint, then run the compiled code without compiling more.
* :func:`install` / :func:`uninstall` -- decompiled source in ``TORCH_LOGS="+bytecode"``.
* :func:`decompile`, :class:`Decompiler`, :class:`DecompilationError` -- the decompiler.
* :mod:`framescope.depyf.optimization` -- ``TorchCompileWrapperWithCustomDispatcher``.
* :mod:`framescope.depyf.utils`, :mod:`framescope.depyf.code_transform`,
  :mod:`framescope.depyf.decompiler`, :mod:`framescope.depyf.explain` -- the helpers of depyf's
  that its users and its own tests reach.

``python -m framescope.depyf install`` makes ``import depyf`` mean this package, so that a
depyf program runs unchanged (:mod:`framescope.depyf.shim`).
"""
from __future__ import annotations

import contextlib
import logging
import threading
import types
import warnings
from typing import Any, Iterator

from framescope import __version__
from framescope.depyf.decompiler import DecompilationError, Decompiler, decompile

__all__ = [
    "DecompilationError", "Decompiler", "__version__", "debug", "decompile", "install",
    "prepare_debug", "uninstall",
]


def prepare_debug(dump_src_dir: Any = "framescope_dump", clean_wild_fx_code: bool = True,
                  log_bytecode: bool = False, **options: Any) -> Any:
    """Dump what torch.compile makes into ``dump_src_dir``: :func:`framescope.dump.prepare_debug`."""
    from framescope.dump import prepare_debug as _prepare_debug

    return _prepare_debug(dump_src_dir, clean_wild_fx_code, log_bytecode, **options)


# --------------------------------------------------------------------------- debug


@contextlib.contextmanager
def debug() -> Iterator[None]:
    """Pause at a breakpoint so that breakpoints can be set in the dumped files, then run the
    block with torch.compile's code and without compiling anything new.

    Call it after a dump (:func:`prepare_debug`) has run the code once: the cache entries
    then run from the dumped files, where breakpoints stop. In the block a call whose guards
    all fail runs eagerly instead of compiling (torch's ``eager_on_recompile`` stance), and
    pdb and debugpy step from the transformed code into the graphs (:func:`framescope.debug`).
    """
    import torch

    from framescope.debugging import debug as stepping, files_from_the_current_folder
    from framescope.dump import last_folder

    folder = last_folder()
    where = ("in %s" % folder) if folder is not None else "where prepare_debug wrote them (no dump ran in this process)"
    print("framescope paused the program at a breakpoint. The dumped files are %s: full_code_for_<function>.py "
          "shows each function's cache entries and guards; set breakpoints in its __transformed_code_* and "
          "__compiled_fn_* files, then continue." % where)
    # A breakpoint given relative to the current folder, as the dump's folder usually is
    # (b dump/__transformed_code_0_for_f.py:2), is found, from the first prompt on.
    undo = files_from_the_current_folder()
    try:
        breakpoint()
        with torch.compiler.set_stance("eager_on_recompile"), stepping():
            yield
    finally:
        undo()


# --------------------------------------------------------------------------- install


_install_lock = threading.Lock()
_handle: Any = None
_warned = False


def install() -> None:
    """Log the decompiled source of each of Dynamo's new code objects to torch's bytecode log.

    With ``TORCH_LOGS="+bytecode"``, after torch's ``MODIFIED BYTECODE`` listing of each
    compile comes ``possible source code:`` and the code as Python. Does nothing when
    installed already; :func:`uninstall` takes it out.
    """
    global _handle
    from framescope import torch_internals

    with _install_lock:
        if _handle is None:
            _handle = torch_internals.register_bytecode_hook(_log_source, torch_internals.DEPYF_INSTALL)


def uninstall() -> None:
    """Undo :func:`install`; does nothing when it is not installed."""
    global _handle
    with _install_lock:
        handle, _handle = _handle, None
    if handle is not None:
        handle.remove()


def _log_source(code: types.CodeType, new_code: types.CodeType) -> None:
    # Runs inside torch.compile: nothing may fail the compile. Returns None, so that the
    # cache entry runs the code it would have run without this hook.
    global _warned
    from framescope import torch_internals

    try:
        log = torch_internals.bytecode_logger()
        if not log.isEnabledFor(logging.DEBUG):
            return None
        try:
            source = decompile(new_code)
        except DecompilationError as exc:
            log.debug("framescope could not decompile the modified bytecode of %s: %s", code.co_name, exc)
        else:
            log.debug("possible source code:\n%s", source)
    except Exception as exc:
        if not _warned:
            _warned = True
            warnings.warn("framescope.depyf.install: could not log decompiled source (%s: %s)"
                          % (type(exc).__name__, exc), stacklevel=2)
    return None
