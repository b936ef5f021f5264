"""depyf's ``depyf.decompiler``: :class:`Decompiler`, and :func:`decompile` and
:class:`DecompilationError`, which are framescope's (``decompile`` takes what depyf's takes:
functions, methods, callable objects, ``functools.partial`` and ``lru_cache`` wrappers, code
objects; and classes)."""
from __future__ import annotations

import dis
import re
from typing import Any, List, Optional

from framescope import decompile
from framescope.errors import DecompilationError

__all__ = ["DecompilationError", "Decompiler", "decompile"]


class Decompiler:
    """depyf's decompiler object: ``Decompiler(code).decompile()`` is ``decompile(code)``."""

    def __init__(self, code: Any) -> None:
        #: The function or code object to decompile.
        self.code = code

    def decompile(self, indentation: int = 4, temp_prefix: str = "__temp_",
                  overwite_fn_name: Optional[str] = None) -> str:
        """The source, indented by ``indentation``; the function named ``overwite_fn_name``
        if given (depyf's spelling). ``temp_prefix`` is accepted and unused: framescope names
        the values it has to hold itself."""
        source = decompile(self.code, indent=indentation)
        if overwite_fn_name is not None:
            source = rename_function(source, overwite_fn_name)
        return source

    @staticmethod
    def supported_opnames() -> List[str]:
        """The opcodes of the running interpreter that framescope's decompiler reads: all but
        the specialised and instrumented forms that only running code holds (their code is
        refused; the bytecode of a file or of ``code.co_code`` never has them)."""
        return [name for name in dis.opmap if not is_runtime_only(name)]


def is_runtime_only(opname: str) -> bool:
    return opname == "ENTER_EXECUTOR" or opname.startswith("INSTRUMENTED_")


def rename_function(source: str, name: str) -> str:
    """``source`` with its first ``def`` (or a lambda's ``lambda``) named ``name``."""
    renamed, count = re.subn(r"^((?:async )?def )\w+(?=\()", lambda m: m.group(1) + name, source,
                             count=1, flags=re.MULTILINE)
    if count:
        return renamed
    if source.lstrip().startswith("lambda"):  # a lambda's code: give it the name asked for
        return "%s = %s" % (name, source.strip())
    return source
