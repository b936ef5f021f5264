"""What the symbolic stack holds besides plain expressions.

The stack simulator (`simulate.py`) pushes `ast.expr` nodes for values the source
spells as expressions, and the markers below for the interpreter's bookkeeping
values (a NULL slot, an iterator, a with-statement's exit method...).  Markers never
reach the printed source; `expr()` turns the ones that stand for an expression into one.
"""
import ast
from dataclasses import dataclass, field
from types import CodeType
from typing import Any, List, Optional

from framescope.decompiler.frontend import versions


class Marker:
    """Base of every non-expression stack value."""


class Bindable(Marker):
    """A marker that a store binds to a target instead of assigning (``for x``, ``as x``)."""

    #: The store target, once the store ran.
    target = None  # type: Optional[ast.expr]


class LoopItem(Bindable):
    """The next item a ``FOR_ITER`` pushed; its store is the loop's target."""


class Null(Marker):
    """The NULL slot pushed next to a callable (``PUSH_NULL``, ``LOAD_GLOBAL`` with NULL bit)."""

    def __repr__(self) -> str:
        return "NULL"


@dataclass(eq=False)
class Iterator(Marker):
    """``iter(source)``: what ``GET_ITER``/``GET_AITER`` pushed."""

    #: The iterable expression.
    source: ast.expr
    #: True for ``async for`` iterators.
    is_async: bool = False


@dataclass(eq=False)
class Exc(Bindable):
    """Exception values pushed on entry to a handler (any version's layout)."""

    #: What the slot holds: ``"exc"`` (the exception), ``"prev"`` (saved exception state),
    #: ``"lasti"`` (offset of the raising instruction), ``"type"``/``"tb"`` (3.8-3.10 triple).
    kind: str


class Namespace(Marker):
    """A class body's namespace (``LOAD_LOCALS``), read by 3.12+'s ``LOAD_FROM_DICT_OR_*``."""


@dataclass(eq=False)
class ExcMatch(Marker):
    """The result of testing the current exception against an ``except`` clause's type."""

    type: ast.expr


@dataclass(eq=False)
class ExcGroupMatch(Bindable):
    """The part of an exception group an ``except*`` clause's type matched (``CHECK_EG_MATCH``).

    Bound by ``except* E as name``; None when nothing matched, which the clause tests.
    """

    type: ast.expr


@dataclass(eq=False)
class ExitResult(Marker):
    """What calling a with statement's ``__exit__`` on the normal path returned."""


@dataclass(eq=False)
class EnterMethod(Marker):
    """``__enter__``/``__aenter__`` looked up by 3.14's ``LOAD_SPECIAL``."""

    manager: ast.expr
    is_async: bool = False


@dataclass(eq=False)
class WithExit(Marker):
    """The bound ``__exit__`` (or ``__aexit__``) that a with statement calls on the way out."""

    #: The context manager expression.
    manager: ast.expr
    is_async: bool = False


@dataclass(eq=False)
class Entered(Bindable):
    """The value of ``__enter__()``: stored for ``with m as x``, popped for ``with m``."""

    manager: ast.expr
    is_async: bool = False


@dataclass(eq=False)
class Function(Marker):
    """A function object built by ``MAKE_FUNCTION`` (not yet named by a store)."""

    code: CodeType
    #: Positional defaults, keyword-only defaults (a dict of name → expr), annotations, closure.
    defaults: List[ast.expr] = field(default_factory=list)
    kwdefaults: List[Any] = field(default_factory=list)
    annotations: Optional[ast.expr] = None
    closure: Optional[ast.expr] = None
    #: The function that returns the annotations (3.14+), in place of ``annotations``.
    annotate: Optional["Function"] = None
    #: Decorators applied by calls before the store (outermost first).
    decorators: List[ast.expr] = field(default_factory=list)
    #: The type parameters of a generic function (3.12+: ``def g[T]()``).
    type_params: List[ast.AST] = field(default_factory=list)
    #: What a generic definition's own function is called with (its ``.defaults``...).
    call_args: List[Any] = field(default_factory=list)


#: The name of the code that makes a generic definition's type parameters (3.12+).
GENERIC_SCOPE = "<generic parameters of "


@dataclass(eq=False)
class TypeParam(Marker):
    """A type parameter being made (``ast.TypeVar``, ``ParamSpec`` or ``TypeVarTuple``)."""

    node: ast.AST


@dataclass(eq=False)
class TypeParams(Marker):
    """The tuple of a generic definition's type parameters."""

    params: List[ast.AST]


@dataclass(eq=False)
class TypeAlias(Marker):
    """``type Name[params] = value`` waiting for its store."""

    name: str
    params: List[ast.AST]
    value: ast.expr


@dataclass(eq=False)
class Unused(Marker):
    """A result the bytecode pops unused (3.12+: the None of ``from m import *``)."""


@dataclass(eq=False)
class BuildClass(Marker):
    """``__build_class__`` loaded by ``LOAD_BUILD_CLASS``."""


@dataclass(eq=False)
class Module(Marker):
    """A module pushed by ``IMPORT_NAME``."""

    name: str
    level: int
    fromlist: Any
    #: Names taken with ``IMPORT_FROM`` so far: (name, asname).
    names: List[Any] = field(default_factory=list)
    #: For ``import a.b.c as d``: attribute path followed after the import.
    attrs: List[str] = field(default_factory=list)


@dataclass(eq=False)
class ImportedName(Marker):
    """``IMPORT_FROM name``: one name taken from a module, waiting for its store."""

    module: Module
    name: str


@dataclass(eq=False)
class UnpackSlot(Marker):
    """One target position of an ``a, b = ...`` unpacking, waiting for its store."""

    group: "Unpack"
    index: int


@dataclass(eq=False)
class Unpack:
    """An unpacking in progress: the value and the targets stored so far."""

    value: ast.expr
    targets: List[Optional[ast.expr]]
    #: Index of the starred target (``UNPACK_EX``), if any.
    star: Optional[int] = None
    #: Enclosing unpacking when this one is nested (``a, (b, c) = ...``).
    parent: Optional[UnpackSlot] = None
    #: Targets stored before the unpacking, or True when a copy of the value waits under it
    #: for later targets: ``a = (b, c) = v`` or ``(b, c) = a = v`` (one evaluation of ``v``);
    #: or the `Chain` of earlier targets, when it waits under the unpacking for more:
    #: ``a = (b, c) = d = v``.
    chained: Any = None


@dataclass(eq=False)
class Chain(Marker):
    """A value stored once and still on the stack: ``a = b = v`` or ``(a := v)``."""

    value: ast.expr
    targets: List[ast.expr]
    #: The ``(a := v)`` it stands for once used as a value: copies of it on the stack (the
    #: middle operand of a chained comparison) are one expression.
    named: Optional[ast.NamedExpr] = None


@dataclass(eq=False)
class Inplace(Marker):
    """Result of an in-place operator (``x += v``) waiting to be stored back."""

    target: ast.expr
    op: ast.operator
    value: ast.expr


@dataclass(eq=False)
class SavedLocal(Marker):
    """A local saved by ``LOAD_FAST_AND_CLEAR`` around a 3.12+ inlined comprehension."""

    name: str


@dataclass(eq=False)
class Converted(Marker):
    """A value after 3.13+'s ``CONVERT_VALUE`` (``!r``, ``!s``, ``!a``) in an f-string."""

    value: ast.expr
    conversion: int


NULL = Null()


def handler_entry_values(lasti: bool) -> list:
    """What the interpreter pushes on entry to an exception handler."""
    if versions.EXCEPTION_TABLE:
        return ([Exc("lasti")] if lasti else []) + [Exc("exc")]
    # The saved exception state, then the new exception, each as traceback, value, type.
    return [Exc("prev_tb"), Exc("prev_value"), Exc("prev_type"), Exc("tb"), Exc("value"), Exc("exc")]
