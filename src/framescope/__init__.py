"""framescope: read, diff and debug what torch.compile and the CPython compiler did.

``import framescope`` never imports torch; the torch-facing parts load it on first use.
"""
from framescope.errors import DecompilationError

__version__ = "0.1.0"

__all__ = ["DecompilationError", "__version__", "decompile"]


def decompile(obj: object, *, indent: int = 4) -> str:
    """Return Python source for a function, method, code object or module code object.

    Raises ``DecompilationError`` when equivalent source cannot be produced and
    ``TypeError`` for objects that hold no bytecode.
    """
    from framescope.decompiler.api import decompile as _decompile

    return _decompile(obj, indent=indent)
