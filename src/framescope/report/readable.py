"""torch's guard-failure and graph-break texts, made short and readable.

torch writes a failed guard as, for example::

    0/1: L['mode'] == 'cos'      # if mode == "sin":  # prog.py:11 in f

(the compile id of the entry whose guard failed, the check in terms of the frame's locals
``L[...]`` and globals ``G[...]``, and a comment with the user's line), and several of them
for one recompile, one per earlier entry, sometimes followed by a user stack trace. A graph
break reason is a paragraph with an explanation and hints.
"""
from __future__ import annotations

import os
import re
from dataclasses import dataclass
from typing import Any, List, Optional

COMPILE_ID = re.compile(r"^\[?(\d+/\d+)\]?:\s*")
TRAILING_COMMENT = re.compile(r"\s{2,}#.*$")
SCOPE = re.compile(r"\b[LG]\[(['\"])([A-Za-z_][A-Za-z0-9_]*)\1\]")
TYPE_ID = re.compile(r"^___check_type_id\((.*), \d+\)$")
OBJ_ID = re.compile(r"^___check_obj_id\((.*), \d+\)$")


@dataclass
class FailedGuard:
    """One failed check of a recompile."""

    #: The check, in the user's names (``mode == 'cos'``).
    text: str
    #: Compile id of the entry whose guard it belongs to, when torch gives it.
    compile_id: Optional[str] = None


def readable_guard(text: str) -> str:
    """One guard check in the user's names: ``L['x']`` -> ``x``, ids spelled out."""
    text = TRAILING_COMMENT.sub("", text.strip())
    text = SCOPE.sub(lambda match: match.group(2), text)
    match = TYPE_ID.match(text)
    if match:
        return "type(%s) is the type seen when compiling" % match.group(1)
    match = OBJ_ID.match(text)
    if match:
        return "%s is the object seen when compiling" % match.group(1)
    return text


def failed_guards(reason: str) -> List[FailedGuard]:
    """The checks a recompile reason names, most recent entry first (as torch lists them)."""
    found = []
    in_trace = False
    for line in reason.splitlines():
        line = line.strip()
        if line.startswith("- "):
            line = line[2:].strip()
        if not line or line.startswith(("Recompiling function", "triggered by the following guard failure")):
            continue
        if line.startswith("User stack trace"):
            in_trace = True  # "File ..., line N" and the line's text follow
            continue
        match = COMPILE_ID.match(line)
        if in_trace and not match:
            continue
        in_trace = False
        compile_id = match.group(1) if match else None
        text = readable_guard(line[match.end():] if match else line)
        if text:
            found.append(FailedGuard(text, compile_id))
    return found


def guard_summary(reason: str, most: int = 3) -> str:
    """A recompile reason on one line: ``mode == 'cos' (entry 0/1); mode == 'sin' (entry 0/0)``.

    At most ``most`` checks are named (the latest entries' first), then how many more failed.
    """
    guards = failed_guards(reason)
    parts = [guard.text + (" (entry %s)" % guard.compile_id if guard.compile_id else "") for guard in guards[:most]]
    if len(guards) > most:
        parts.append("%d more" % (len(guards) - most))
    return "; ".join(parts) or " ".join(reason.split())


# Lines of a graph-break reason that introduce it, explain or advise rather than say what happened.
PREAMBLE = ("Graph Break Reason:", "Encountered graph break when attempting to trace")
DETAILS = ("Explanation:", "Hint:", "Developer debug context:", "For more details")


def break_summary(reason: str) -> str:
    """A graph-break reason on one line: what failed, and torch's explanation."""
    lines = [line.strip() for line in reason.splitlines() if line.strip()]
    title = next((line for line in lines if not line.startswith(PREAMBLE + DETAILS)), None)
    explanation = next((line[len("Explanation:"):].strip() for line in lines if line.startswith("Explanation:")),
                       None)
    if title and explanation:
        return "%s: %s" % (title.rstrip(":"), explanation)
    return title or explanation or (lines[0] if lines else "(no reason given)")


# torch's words when it gives up on a whole frame at a graph break (torch 2.11+).
_SKIPPED = "skipping the function and falling back to eager"
_RESUME = re.compile(r"^torch_dynamo_resume_in_(.+)_at_\d+(?:_\d+)?$")


def resumed_name(resume: Optional[str]) -> Optional[str]:
    """The function a resume function's name says it continues: ``loop`` for
    ``torch_dynamo_resume_in_loop_at_12``."""
    match = _RESUME.match(resume or "")
    return match.group(1) if match else None


def skipped_frame(brk: Any) -> bool:
    """Dynamo gave up on the whole function at this graph break: it runs uncompiled."""
    return brk.skipped or _SKIPPED in brk.reason.lower()


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
SHAPE_GUARD = re.compile(r"size mismatch|stride mismatch|\.size\(\)|\.stride\(\)|\bsize\(|tensor .* mismatch")


def guarded_names(reason: str, names: List[str]) -> List[str]:
    """The argument names a recompile's failed checks mention, in argument order."""
    text = " ".join(guard.text for guard in failed_guards(reason)) or reason
    # A name as code (not inside a string: mode == 'k' names no k), or torch's "tensor 'x' ...".
    return [name for name in names
            if re.search(r"(?<![\w.'\"])%s\b|\btensor '%s'" % (re.escape(name), re.escape(name)), text)]


def recompile_advice(reason: str, name: str, kind: str) -> Optional[str]:
    """What to change so that a changing argument stops recompiling, or None."""
    if kind == "Tensor" or SHAPE_GUARD.search(reason):
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
