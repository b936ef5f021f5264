"""framescope: read, diff and debug what torch.compile and the CPython compiler did.

``import framescope`` never imports torch; the torch-facing parts load it on first use.
"""
from framescope.errors import DecompilationError, UnsupportedTorchError

__version__ = "0.1.0"

__all__ = ["DecompilationError", "UnsupportedTorchError", "__version__", "debug", "decompile", "dump", "prepare_debug",
           "summary"]


def decompile(obj: object, *, indent: int = 4, verify: bool = True, machine: bool = True,
              partial: bool = False) -> str:
    """Return Python source for a function, method, code object or module code object.

    The source is recompiled and compared with ``obj``'s bytecode; ``TypeError`` is raised
    for objects that hold no bytecode.  ``verify=False`` skips that check and returns
    best-effort source. Bytecode that no source produced (torch.compile's transformed code)
    has no equivalent source: for a function's code, framescope's machine-code decompiler
    then answers (unless ``machine=False``), correct by construction, and the first line of
    the text says so. ``DecompilationError`` is raised when neither can.

    ``partial=True`` (for module and class body code) returns source even when some of the
    functions defined in it cannot be decompiled: each of those is a stub with the same
    signature that raises ``NotImplementedError``, the reason and its disassembly in a
    comment above it; the rest is checked as usual. ``DecompilationError`` is still raised
    when the module's own code cannot be decompiled.
    """
    from framescope.decompiler.api import decompile as _decompile

    return _decompile(obj, indent=indent, verify=verify, machine=machine, partial=partial)


def __getattr__(name: str) -> object:
    # framescope.dump (a package that is also called to start a dump), prepare_debug, debug,
    # summary and depyf (depyf's API) load on first use, so that importing framescope stays light.
    if name == "dump":
        import framescope.dump

        return framescope.dump
    if name == "prepare_debug":
        from framescope.dump import prepare_debug

        return prepare_debug
    if name == "depyf":
        import framescope.depyf

        return framescope.depyf
    if name == "debug":
        from framescope.debugging import debug

        return debug
    if name == "summary":
        from framescope.notebook import summary

        return summary
    raise AttributeError("module 'framescope' has no attribute %r" % name)


def load_ipython_extension(ipython: object) -> None:
    """``%load_ext framescope`` in IPython or Jupyter: the ``%%framescope`` cell magic."""
    from framescope.notebook import load_ipython_extension as load

    load(ipython)
