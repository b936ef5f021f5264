"""A class as a decompile target: the code of its class body, found in its module's code.

Python keeps no reference from a class to the code that built it, so the class body is
looked up in the code object of the module that defines the class (read as importing it
would: its loader's ``get_code``). A class whose module has no code to read (one made in
an interactive session, by ``exec`` or ``type()``) is rebuilt from the functions it holds.
"""
import inspect
import sys
from types import CodeType, FunctionType
from typing import List, Optional

from framescope.decompiler.origin import nested_codes


def class_body_code(cls: type) -> Optional[CodeType]:
    """The code of ``cls``'s class body, or None when its module's code has none that fits."""
    module = module_code_of(cls)
    if module is None:
        return None
    found = [code for code in nested_codes(module) if is_body_of(code, cls)]
    if len(found) > 1:
        line = first_line(cls)
        found = [code for code in found if code.co_firstlineno == line] or found[:1]
    return found[0] if found else None


def module_code_of(cls: type) -> Optional[CodeType]:
    module = sys.modules.get(getattr(cls, "__module__", None) or "")
    if module is None:
        return None
    spec = getattr(module, "__spec__", None)
    loader = getattr(spec, "loader", None) or getattr(module, "__loader__", None)
    get_code = getattr(loader, "get_code", None)
    name = spec.name if spec is not None else getattr(module, "__name__", "")
    try:
        return get_code(name) if get_code is not None else None
    except Exception:  # the module's file went away or no longer compiles: fall back on the class
        return None


def is_body_of(code: CodeType, cls: type) -> bool:
    if code.co_flags & inspect.CO_NEWLOCALS or code.co_name != cls.__name__:
        return False  # a function's code, or another name
    qualname = getattr(code, "co_qualname", None)  # 3.11+
    return qualname is None or qualname == cls.__qualname__


def first_line(cls: type) -> Optional[int]:
    line = getattr(cls, "__firstlineno__", None)  # 3.13+
    if line is None:
        try:
            line = inspect.getsourcelines(cls)[1]
        except (OSError, TypeError):
            return None
    return line


def header(cls: type) -> str:
    """``class Name(Base, ...):`` with the bases' names, ``object`` left out."""
    bases = [base.__name__ for base in cls.__bases__ if base is not object]
    return "class %s%s:" % (cls.__name__, "(%s)" % ", ".join(bases) if bases else "")


def with_bases(source: str, cls: type) -> str:
    """The decompiled class body's text with the bases in its ``class`` line (a class body's
    code does not hold them: they are evaluated before it runs)."""
    lines = source.split("\n")
    for number, line in enumerate(lines):
        if line.startswith("class %s" % cls.__name__):
            lines[number] = header(cls)
            break
    return "\n".join(lines)


def member_functions(cls: type) -> List[tuple]:
    """(decorator or None, function) for each function defined in ``cls``'s own namespace."""
    members = []
    for value in vars(cls).values():
        if isinstance(value, (staticmethod, classmethod)):
            members.append((type(value).__name__, value.__func__))
        elif isinstance(value, property) and isinstance(value.fget, FunctionType):
            members.append(("property", value.fget))
        elif isinstance(value, FunctionType):
            members.append((None, value))
    return members
