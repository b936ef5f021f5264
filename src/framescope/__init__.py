"""framescope: read, diff and debug what torch.compile and the CPython compiler did.

``import framescope`` never imports torch; the torch-facing parts load it on first use.
"""
from framescope.errors import DecompilationError

__version__ = "0.1.0"

__all__ = ["DecompilationError", "__version__", "decompile"]


def decompile(obj: object, *, indent: int = 4, verify: bool = True) -> str:
    """Return Python source for a function, method, code object or module code object.

    The source is recompiled and compared with ``obj``'s bytecode; ``DecompilationError``
    is raised when equivalent source cannot be produced, ``TypeError`` for objects that
    hold no bytecode.  ``verify=False`` skips that check and returns best-effort source
    (for bytecode that never came from source, where behaviour is tested otherwise).
    """
    from framescope.decompiler.api import decompile as _decompile

    return _decompile(obj, indent=indent, verify=verify)
