"""Decompiling machine-made bytecode: code that no source produced, such as torch.compile's.

Placeholder while the straight-line decompiler is written: falls back to the source decompiler
without its self-check.
"""
from types import CodeType


def decompile_transformed(code: CodeType, *, indent: int = 4) -> str:
    """Source of a ``def`` equivalent to ``code``; raises DecompilationError when there is none."""
    from framescope.decompiler.api import decompile

    return decompile(code, indent=indent, verify=False)
