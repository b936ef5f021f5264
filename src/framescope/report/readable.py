"""Recompile reasons and graph breaks in a line each, places as ``file:line``, and advice on
what to change; built on the parsed texts of :mod:`framescope.torch_text`.
"""
from __future__ import annotations

import functools
import importlib.util
import os
import re
import sys
import sysconfig
from typing import Any, List, Optional, Tuple

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
    """``file:line``: a file of an installed package (or of the standard library) from its
    package's folder, ``transformers/modeling_utils.py:4769``; another file relative to the
    current folder when it is inside it, else as it is."""
    if not filename:
        return "<unknown location>"
    shown = package_path(filename) or filename
    if shown == filename:
        try:
            relative = os.path.relpath(filename)
            if not relative.startswith(os.pardir + os.sep) and relative != os.pardir:
                shown = relative
        except ValueError:  # another drive on Windows
            pass
    return "%s:%s" % (shown, lineno) if lineno else shown


# --------------------------------------------------------------------------- library code

# Folders that hold installed packages, and a standard library's folder (``lib/python3.11/``).
_PACKAGE_FOLDERS = ("site-packages", "dist-packages")
_STDLIB_FOLDER = re.compile(r"[/\\]lib(?:64)?[/\\]python\d+(?:\.\d+)?t?[/\\]")


@functools.lru_cache(maxsize=None)
def _library_roots() -> Tuple[Tuple[str, str], ...]:
    """(folder, how its files are named) of this interpreter's standard library and package
    folders, and of torch's package wherever it is (a source checkout of torch included)."""
    paths = sysconfig.get_paths()
    roots = {os.path.abspath(paths[name]): "" for name in ("stdlib", "platstdlib", "purelib", "platlib")
             if paths.get(name)}
    torch = sys.modules.get("torch")
    origin = getattr(torch, "__file__", None)
    if origin is None:
        try:
            spec = importlib.util.find_spec("torch")
        except (ImportError, ValueError):
            spec = None
        origin = spec.origin if spec is not None else None
    if origin:
        roots.setdefault(os.path.dirname(os.path.abspath(origin)), "torch/")
    return tuple(sorted(roots.items(), key=lambda item: len(item[0]), reverse=True))  # innermost first


def package_path(filename: Optional[str]) -> Optional[str]:
    """The path of a file of an installed package from the folder that holds the packages
    (``transformers/modeling_utils.py``), of a standard library module from the library's
    folder (``logging/__init__.py``); None for any other file."""
    if not filename or filename.startswith("<"):
        return None
    parts = re.split(r"[/\\]", filename)
    marks = [i for i, part in enumerate(parts[:-1]) if part in _PACKAGE_FOLDERS]
    if marks:
        return "/".join(parts[marks[-1] + 1:])
    for root, prefix in _library_roots():
        if filename.startswith(root + os.sep):
            return prefix + filename[len(root) + 1:].replace(os.sep, "/")
    stdlib = _STDLIB_FOLDER.search(filename)  # another interpreter's, where the dump was written
    return filename[stdlib.end():].replace("\\", "/") if stdlib else None


def library_package(filename: Optional[str], qualname: Optional[str] = None) -> Optional[str]:
    """The package whose code a file is (``transformers``, ``torch``, ``logging``), or
    ``dataclasses`` for the methods a dataclass generates; None for the program's own code."""
    if qualname and qualname.startswith("__create_fn__"):
        return "dataclasses"
    inside = package_path(filename)
    if inside is None:
        return None
    top = inside.split("/")[0]
    return top[:-3] if top.endswith(".py") else top


def is_dynamo_name(expression: str) -> bool:
    """Whether an expression starts from a name Dynamo made rather than the program: a value
    it carries over a graph break (``___stack2``), its own state (``__nested_resume_fns``)."""
    root = re.match(r"[A-Za-z_]\w*", expression.strip())
    return bool(root) and root.group(0).startswith(("___", "__nested_"))


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
    """What to change so that a changing argument stops recompiling, or None (always for a
    name Dynamo made: the program cannot change it)."""
    if is_dynamo_name(name):
        return None
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


# torch's advice for an nn.Module's int attribute, which it takes as a constant, in short.
MODULE_INT_HINT = ("The int attributes of an nn.Module are constants to torch.compile: set "
                   "torch._dynamo.config.allow_unspec_int_on_nn_module = True to make them dynamic, "
                   "or keep the value in a tensor")


def module_attribute_advice(paths: List[str], owner: Optional[str], hint: Optional[str]) -> str:
    """Advice for recompiles on an nn.Module's int attribute (``self.k``), in torch's words
    where it gave them."""
    module = "a %s module" % owner if owner else "an nn.Module"
    attribute = paths[0].rsplit(".", 1)[-1]
    said = "%s is an int attribute of %s" % (paths[0], module) if len(paths) == 1 else \
        "%s are the int attribute %s of %s" % (" and ".join(paths), attribute, module)
    return "%s, and each new value compiles again. %s" % (
        said, "torch's hint: " + hint if hint else MODULE_INT_HINT)
