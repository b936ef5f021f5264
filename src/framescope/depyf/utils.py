"""depyf's ``depyf.utils``: helpers its users and its tests reach."""
from __future__ import annotations

import functools
import inspect
import os
from types import CodeType
from typing import Any, List, Optional

from framescope.decompiler.origin import nested_codes


__all__ = ["collect_all_code_objects", "decompile_ensure", "get_code_owner", "get_function_signature",
           "safe_create_directory"]


def get_function_signature(code_obj: CodeType, overwite_fn_name: Optional[str] = None) -> str:
    """``def name(a, b, *args, **kwargs):`` and a newline, from a code object's arguments;
    a comprehension's ``.0`` argument is spelled ``comp_arg_0``."""
    count = code_obj.co_argcount + code_obj.co_kwonlyargcount
    names = [name.replace(".", "comp_arg_") for name in code_obj.co_varnames[:count]]
    if code_obj.co_flags & inspect.CO_VARARGS:
        names.append("*" + code_obj.co_varnames[count])
        count += 1
    if code_obj.co_flags & inspect.CO_VARKEYWORDS:
        names.append("**" + code_obj.co_varnames[count])
    return "def %s(%s):\n" % (overwite_fn_name or code_obj.co_name, ", ".join(names))


def collect_all_code_objects(code: CodeType) -> List[CodeType]:
    """``code`` and every code object nested in it, outermost first."""
    return list(nested_codes(code))


def safe_create_directory(path: "os.PathLike[str] | str") -> None:
    """``os.makedirs(path)``, safe when several processes make the same folder at once."""
    try:
        os.makedirs(path, exist_ok=True)
    except OSError:
        if not os.path.isdir(path):
            raise


def get_code_owner(fn: Any) -> Any:
    """The function whose ``__code__`` can be replaced for ``fn``: a bound method's function,
    a decorator's wrapped function, a partial's function, a callable object's ``__call__``."""
    seen = 0
    while seen < 100:
        seen += 1
        if hasattr(fn, "__func__"):
            fn = fn.__func__
        elif getattr(fn, "__wrapped__", None) is not None:
            fn = fn.__wrapped__
        elif isinstance(fn, functools.partial):
            fn = fn.func
        elif hasattr(getattr(fn, "__call__", None), "__func__"):
            fn = fn.__call__.__func__
        else:
            break
    return fn


def decompile_ensure(fn: Any, overwite_fn_name: Optional[str] = None) -> str:
    """The source of ``fn``, or, when framescope cannot give checked source, its signature
    with a body that says so: the reason in a comment and a string, as depyf's body is."""
    from framescope.depyf.decompiler import DecompilationError, Decompiler

    try:
        return Decompiler(fn).decompile(overwite_fn_name=overwite_fn_name)
    except DecompilationError as err:
        code = fn if isinstance(fn, CodeType) else getattr(get_code_owner(fn), "__code__", None)
        if code is None:
            raise
        return "%s    # framescope: %s\n    'Failed to decompile.'\n" % (
            get_function_signature(code, overwite_fn_name), " ".join(str(err).split()))
