"""A function's parameter list, rebuilt from its code object's counts and flags."""
import ast
import inspect
from types import CodeType
from typing import Dict, List, Optional, Sequence


def arguments(
    code: CodeType,
    defaults: Sequence[ast.expr] = (),
    kwdefaults: Optional[Dict[str, ast.expr]] = None,
    annotations: Optional[Dict[str, ast.expr]] = None,
) -> ast.arguments:
    """``ast.arguments`` for ``code``: positional-only, positional, ``*args``, keyword-only, ``**kw``."""
    names = code.co_varnames
    posonly = getattr(code, "co_posonlyargcount", 0)
    npos = code.co_argcount
    nkw = code.co_kwonlyargcount
    annotations = annotations or {}
    kwdefaults = kwdefaults or {}

    def arg(name: str) -> ast.arg:
        node = ast.arg(arg=name, annotation=annotations.get(name))
        node.type_comment = None
        return node

    args = [arg(n) for n in names[:npos]]
    kwonly = [arg(n) for n in names[npos:npos + nkw]]
    index = npos + nkw
    vararg = kwarg = None
    if code.co_flags & inspect.CO_VARARGS:
        vararg = arg(names[index])
        index += 1
    if code.co_flags & inspect.CO_VARKEYWORDS:
        kwarg = arg(names[index])
    return ast.arguments(
        posonlyargs=args[:posonly],
        args=args[posonly:],
        vararg=vararg,
        kwonlyargs=kwonly,
        kw_defaults=[kwdefaults.get(a.arg) for a in kwonly],
        kwarg=kwarg,
        defaults=list(defaults),
    )


def parameter_names(code: CodeType) -> List[str]:
    """Names of all parameters, in ``co_varnames`` order."""
    count = code.co_argcount + code.co_kwonlyargcount
    count += bool(code.co_flags & inspect.CO_VARARGS) + bool(code.co_flags & inspect.CO_VARKEYWORDS)
    return list(code.co_varnames[:count])
