"""Spelling a function object's default values, which it holds as values, not as source.

A default prints as the name that a module global or a builtin has for that very object
(``_b=BACKSLASH``, ``key=len``), or as a literal that evaluates back to an equal value of
the same type (``1``, ``-2.5``, ``'x'``, ``(1, [None])``, ``frozenset({1})``): numbers,
strings and empty tuples as the literal (the interpreter shares such objects, so that a
global being the same one says nothing), other values by their name first, since a list
or dict that is a global's is shared with it. Else a default prints as an attribute of a
module global (``flags=re.IGNORECASE``, ``_m=STRINGCHUNK.match``).
A default with none of these is printed as ``...`` and named in a comment above the
``def``, so that no default is left out silently and the text still compiles.
"""
import ast
import builtins
import keyword
import reprlib
import types
from typing import Any, Dict, Iterator, List, Mapping, Optional, Sequence, Tuple

from framescope.decompiler.emit.literals import escape_unprintable

#: Values that are their own literal (``ast.Constant``); exact types, so that an ``IntEnum``
#: member or a ``str`` subclass is not printed as a plain number or string.
SCALARS = (int, float, complex, str, bytes, bool, type(None), type(Ellipsis))

#: At most this many values, nested at most this deep, are looked at in one default (a
#: list holding itself has no end).
MAX_LITERAL_ITEMS = 10_000
MAX_LITERAL_DEPTH = 100

#: Objects whose attributes may name a default (``re.IGNORECASE``, ``Color.RED``).
NAMESPACES = (types.ModuleType, type)

#: Bound methods (``STRINGCHUNK.match``) are a new object each time they are read, equal
#: to the default, not the same one.
BOUND_METHODS = (types.MethodType, types.BuiltinMethodType)

#: What a comment shows of a default's repr.
DESCRIBE = reprlib.Repr()
DESCRIBE.maxother = DESCRIBE.maxstring = 120


class Scope:
    """The names a default may be spelled with: the function's module globals, then the
    builtins those globals do not hide."""

    def __init__(self, namespace: Mapping[str, Any]) -> None:
        self.globals = namespace
        found = namespace.get("__builtins__", builtins)
        self.builtins = found if isinstance(found, dict) else vars(found)

    def is_builtin(self, name: str) -> bool:
        return name not in self.globals and self.builtins.get(name) is getattr(builtins, name, None)

    def names(self) -> Iterator[Tuple[str, Any]]:
        for name, value in list(self.globals.items()):
            if spellable_name(name):
                yield name, value
        for name, value in list(self.builtins.items()):
            if spellable_name(name) and name not in self.globals:
                yield name, value


def spellable_name(name: Any) -> bool:
    # A name like `__x` would be read as `_C__x` where the def sits in a class body.
    return (isinstance(name, str) and name.isidentifier() and not keyword.iskeyword(name)
            and not (name.startswith("__") and not name.endswith("__")))


class Defaults:
    """A function's defaults as expressions, and comment lines for those shown as ``...``."""

    def __init__(self, func: types.FunctionType) -> None:
        self.scope = Scope(getattr(func, "__globals__", {}) or {})
        self.notes: List[str] = []
        code = func.__code__
        positional = code.co_argcount
        values = tuple(func.__defaults__ or ())[-positional:] if positional else ()
        names = code.co_varnames[positional - len(values):positional]
        self.positional = [self.spell(name, value) for name, value in zip(names, values)]
        kwonly = code.co_varnames[positional:positional + code.co_kwonlyargcount]
        given = func.__kwdefaults__ or {}
        self.keyword = {name: self.spell(name, given[name]) for name in kwonly if name in given}

    def spell(self, name: str, value: Any) -> ast.expr:
        node = None
        if not shared_by_value(value):
            node = self.global_name(value)
        node = node or literal(value, self.scope, [MAX_LITERAL_ITEMS]) or self.attribute(value)
        if node is not None:
            return node
        self.notes.append("# framescope: %s=... stands for a default with no source spelling: %s"
                          % (name, describe(value)))
        return ast.Constant(value=Ellipsis)

    def global_name(self, value: Any) -> Optional[ast.expr]:
        """A module global's or a builtin's name for ``value`` itself."""
        for name, candidate in self.scope.names():
            if candidate is value:
                return load(name)
        return None

    def attribute(self, value: Any) -> Optional[ast.expr]:
        """An attribute of a module global that reads back ``value``."""
        if isinstance(value, BOUND_METHODS):
            method = self.bound_method(value)
            if method is not None:
                return method
        for name, candidate in self.scope.names():
            if isinstance(candidate, NAMESPACES):
                attribute = attribute_holding(candidate, value)
                if attribute is not None:
                    return ast.Attribute(value=load(name), attr=attribute, ctx=ast.Load())
        return None

    def bound_method(self, method: Any) -> Optional[ast.expr]:
        owner, attribute = getattr(method, "__self__", None), getattr(method, "__name__", None)
        if owner is None or not spellable_name(attribute):
            return None
        for name, candidate in self.scope.names():
            if candidate is owner and reads(candidate, attribute, method):
                return ast.Attribute(value=load(name), attr=attribute, ctx=ast.Load())
        return None


def shared_by_value(value: Any) -> bool:
    """Values the interpreter may share between unrelated places (small ints, interned
    strings, the empty tuple): being a global's object does not make them that global."""
    return type(value) in SCALARS or (type(value) in (tuple, frozenset) and not value)


def literal(value: Any, scope: Scope, budget: List[int], depth: int = 0) -> Optional[ast.expr]:
    """A display or constant that evaluates to a value equal to ``value``, of its type."""
    budget[0] -= 1
    if budget[0] < 0 or depth > MAX_LITERAL_DEPTH:
        return None
    kind = type(value)
    if kind in SCALARS:
        return ast.Constant(value=value)
    if kind is dict:
        keys = items(list(value.keys()), scope, budget, depth)
        values = items(list(value.values()), scope, budget, depth)
        return None if keys is None or values is None else ast.Dict(keys=keys, values=values)
    if kind not in (tuple, list, set, frozenset):
        return None
    elements = items(list(value), scope, budget, depth)
    if elements is None:
        return None
    if kind is tuple:
        return ast.Tuple(elts=elements, ctx=ast.Load())
    if kind is list:
        return ast.List(elts=elements, ctx=ast.Load())
    if kind is frozenset:  # the printer spells it frozenset({...}), sorted
        return ast.Constant(value=value) if scope.is_builtin("frozenset") else None
    if elements:
        return ast.Set(elts=elements)
    return ast.Call(func=load("set"), args=[], keywords=[]) if scope.is_builtin("set") else None


def items(values: Sequence[Any], scope: Scope, budget: List[int], depth: int) -> Optional[List[ast.expr]]:
    out = []
    for value in values:
        node = literal(value, scope, budget, depth + 1)
        if node is None:
            return None
        out.append(node)
    return out


def attribute_holding(namespace: Any, value: Any) -> Optional[str]:
    """The name of an attribute of ``namespace`` (a module or class) that is ``value``."""
    try:
        names = list(vars(namespace))
    except TypeError:
        return None
    for attribute in names:
        if spellable_name(attribute) and reads(namespace, attribute, value, same=True):
            return attribute
    return None


def reads(owner: Any, attribute: str, value: Any, same: bool = False) -> bool:
    """Whether ``owner.attribute`` reads back ``value`` (the same object if ``same``)."""
    try:
        found = getattr(owner, attribute)
        return found is value if same else bool(found is value or found == value)
    except Exception:  # an attribute that runs code of its own: not a spelling to trust
        return False


def describe(value: Any) -> str:
    """``value``'s repr on one line, short, with nothing a comment cannot hold."""
    try:
        text = DESCRIBE.repr(value)
    except Exception:
        text = "<%s object>" % type(value).__name__
    return escape_unprintable(" ".join(text.split()))


def load(name: str) -> ast.Name:
    return ast.Name(id=name, ctx=ast.Load())


def function_defaults(func: types.FunctionType) -> Tuple[List[ast.expr], Dict[str, ast.expr], List[str]]:
    """``func``'s positional and keyword-only defaults as expressions, and the comment
    lines that name the defaults shown as ``...``."""
    spelled = Defaults(func)
    return spelled.positional, spelled.keyword, spelled.notes
