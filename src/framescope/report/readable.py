"""Recompile reasons and graph breaks in a line each, places as ``file:line``, and advice on
what to change; built on the parsed texts of :mod:`framescope.torch_text`.
"""
from __future__ import annotations

import os
import re
from typing import Any, List, Optional

from framescope.torch_text import failed_guards, gave_up_on_frame, is_shape_guard


def guard_summary(reason: str, most: int = 3) -> str:
    """A recompile reason on one line: ``mode == 'cos' (entry 0/1); mode == 'sin' (entry 0/0)``.

    At most ``most`` checks are named (the latest entries' first), then how many more failed.
    """
    guards = failed_guards(reason)
    parts = [guard.text + (" (entry %s)" % guard.compile_id if guard.compile_id else "") for guard in guards[:most]]
    if len(guards) > most:
        parts.append("%d more" % (len(guards) - most))
    return "; ".join(parts) or " ".join(reason.split())


def skipped_frame(brk: Any) -> bool:
    """Dynamo gave up on the whole function at this graph break: it runs uncompiled."""
    return brk.skipped or gave_up_on_frame(brk.reason)


def where(filename: Optional[str], lineno: Optional[int]) -> str:
    """``file:line``, the file relative to the current folder when it is inside it."""
    if not filename:
        return "<unknown location>"
    shown = filename
    try:
        relative = os.path.relpath(filename)
        if not relative.startswith(os.pardir + os.sep) and relative != os.pardir:
            shown = relative
    except ValueError:  # another drive on Windows
        pass
    return "%s:%s" % (shown, lineno) if lineno else shown


# --------------------------------------------------------------------------- recompile advice

NUMBERS = ("int", "float", "complex")
CONSTANTS = ("str", "bool", "NoneType", "bytes")


def guarded_names(reason: str, names: List[str]) -> List[str]:
    """The argument names a recompile's failed checks mention, in argument order."""
    text = " ".join(guard.text for guard in failed_guards(reason)) or reason
    # A name as code (not inside a string: mode == 'k' names no k), or torch's "tensor 'x' ...".
    return [name for name in names
            if re.search(r"(?<![\w.'\"])%s\b|\btensor '%s'" % (re.escape(name), re.escape(name)), text)]


def recompile_advice(reason: str, name: str, kind: str) -> Optional[str]:
    """What to change so that a changing argument stops recompiling, or None."""
    if kind == "Tensor" or is_shape_guard(reason):
        return ("the shape of %s changed: mark the dimension dynamic (torch._dynamo.mark_dynamic(%s, dim)) "
                "or compile with dynamic=True" % (name, name))
    if kind in NUMBERS:
        return ("%s is a Python %s and each new value compiles again: compile with dynamic=True (the default, "
                "dynamic=None, does so after the first change; dynamic=False never does), or pass it as a "
                "tensor" % (name, kind))
    if kind in CONSTANTS:
        return ("each value of %s compiles a cache entry of its own: fine for a few values; for more, pass it "
                "as a tensor or raise torch._dynamo.config.recompile_limit" % name)
    return None
