"""Decide whether two code objects behave the same.

The decompiler promises that its output recompiles to *equivalent* bytecode.
"Equivalent" is judged here, and has to survive everything that the CPython
compiler does differently for the same program written with another layout:
3.11+ copies small exit blocks depending on line numbers, jumps get threaded,
``NOP`` instructions stand in for lines, 3.13+ fuses neighbouring local loads
and stores into superinstructions only when they share a line.

So the two programs are compared as graphs (`nodes.NodeGraph`), not as
instruction lists.  Each instruction becomes a node with a normalised name, an argument compared by
value (never by index into ``co_consts`` or ``co_names``) and its successors:
the next instruction unless it cannot fall through, its jump target, and on
3.11+ its exception handler (with stack depth and ``lasti``).  Unconditional
jumps are followed transparently.  Two code objects are equivalent when the
graphs are bisimilar from the entry and the attributes that change behaviour
agree; nested code objects are compared recursively.

Only the standard library and the running interpreter's ``dis`` are used.
"""
from __future__ import annotations

import __future__
import io
import math
import tokenize
from collections import deque
from dataclasses import dataclass
from types import CodeType
from typing import Collection, Dict, Optional, Tuple

from framescope.decompiler.frontend import bytecode, versions
from framescope.decompiler.verify.nodes import CANNOT_RAISE, END, NodeGraph

__all__ = ["Difference", "compare_code", "equivalent", "find_difference", "future_flags", "recompile_function"]

# co_flags that change what calling the function does; NOFREE, OPTIMIZED,
# NEWLOCALS and the future-import bits are bookkeeping.
_CO_VARARGS = 0x04
_CO_VARKEYWORDS = 0x08
_CO_NESTED = 0x10
_CO_GENERATOR = 0x20
_CO_COROUTINE = 0x80
_CO_ITERABLE_COROUTINE = 0x100
_CO_ASYNC_GENERATOR = 0x200
_BEHAVIOUR_FLAGS = (
    _CO_VARARGS | _CO_VARKEYWORDS | _CO_NESTED | _CO_GENERATOR
    | _CO_COROUTINE | _CO_ITERABLE_COROUTINE | _CO_ASYNC_GENERATOR
)
_CO_OPTIMIZED_NEWLOCALS = 0x01 | 0x02
# 3.14 marks a docstring with a flag instead of reserving co_consts[0].
_CO_HAS_DOCSTRING = 0x4000000

# Future imports are recorded in co_flags; recompiling must enable the same ones.
_FUTURE_FLAGS = 0
for _name in __future__.all_feature_names:
    _FUTURE_FLAGS |= getattr(__future__, _name).compiler_flag
_FUTURE_FLAGS &= ~_CO_NESTED  # nested_scopes shares the bit with CO_NESTED and is a no-op


def future_flags(code: CodeType) -> int:
    """The future imports in force for ``code``: the flags to recompile its source with."""
    return code.co_flags & _FUTURE_FLAGS

@dataclass(frozen=True)
class Difference:
    """The first difference found between two code objects."""

    #: Dotted ``co_name`` path from the compared code object to the one that differs.
    where: str
    #: Short category for grouping: an opname, "ops A/B", an attribute name, "exception handler"...
    kind: str
    #: What differs, in a few words (both sides' instructions or values).
    detail: str

    @property
    def message(self) -> str:
        """The whole difference on one line."""
        return "%s: %s" % (self.where, self.detail)


def find_difference(a: CodeType, b: CodeType, skip: Collection[CodeType] = ()) -> Optional[Difference]:
    """Return the first behavioural difference between ``a`` and ``b``, or None.

    The code objects nested in ``a`` that ``skip`` holds are not compared: any code
    object of the same name stands for them (a stub written in place of a function).
    """
    if not isinstance(a, CodeType) or not isinstance(b, CodeType):
        raise TypeError("find_difference() needs two code objects, got %s and %s"
                        % (type(a).__name__, type(b).__name__))
    return _Comparison(skip).code(a, b, a.co_name)


def compare_code(a: CodeType, b: CodeType, skip: Collection[CodeType] = ()) -> Optional[str]:
    """None when ``a`` and ``b`` are equivalent, else a one-line description of the first difference
    (``skip``: see `find_difference`)."""
    difference = find_difference(a, b, skip)
    return None if difference is None else difference.message


def equivalent(a: CodeType, b: CodeType) -> bool:
    """Whether ``a`` and ``b`` are equivalent code objects."""
    return find_difference(a, b) is None


def _docstring(code: CodeType) -> Optional[object]:
    """The docstring a function's code carries, or None."""
    if code.co_flags & _CO_OPTIMIZED_NEWLOCALS != _CO_OPTIMIZED_NEWLOCALS:
        return None  # module and class bodies store __doc__ with instructions
    if versions.DOCSTRING_FLAG:
        return code.co_consts[0] if code.co_flags & _CO_HAS_DOCSTRING else None
    if code.co_name.startswith("<") and code.co_name != "<lambda>":
        return None  # comprehensions and generator expressions reserve no slot
    first = code.co_consts[0] if code.co_consts else None
    return first if isinstance(first, str) else None


_ATTRIBUTES = (
    "co_name",
    "co_argcount",
    "co_posonlyargcount",
    "co_kwonlyargcount",
    "co_cellvars",
    "co_freevars",
)


def _locals(code: CodeType) -> Tuple[Tuple[str, ...], frozenset]:
    """Parameter names in order, and the other local names as a set.

    The order of the other locals only follows where the source first mentions
    them; instructions name locals, so it does not change what the code does.
    """
    count = code.co_argcount + code.co_kwonlyargcount
    count += bool(code.co_flags & 0x04) + bool(code.co_flags & 0x08)
    return tuple(code.co_varnames[:count]), frozenset(code.co_varnames[count:])


class _Comparison:
    """One comparison, with a memo so that a nested code object is compared once per pair."""

    def __init__(self, skip: Collection[CodeType] = ()) -> None:
        self._memo: Dict[Tuple[int, int], Optional[Difference]] = {}
        self._skip = list(skip)

    def code(self, a: CodeType, b: CodeType, where: str) -> Optional[Difference]:
        if any(a == stub for stub in self._skip):  # by value: one function compiled twice is equal
            return None if a.co_name == b.co_name else Difference(where, "co_name", "co_name %r vs %r" % (
                a.co_name, b.co_name))
        key = (id(a), id(b))
        if key not in self._memo:
            self._memo[key] = None  # a code object cannot contain itself; guards anyway
            self._memo[key] = self._code(a, b, where)
        return self._memo[key]

    def _code(self, a: CodeType, b: CodeType, where: str) -> Optional[Difference]:
        for attribute in _ATTRIBUTES:
            left, right = getattr(a, attribute), getattr(b, attribute)
            if left != right:
                return Difference(where, attribute, "%s %r vs %r" % (attribute, left, right))
        if _locals(a) != _locals(b):
            return Difference(where, "co_varnames", "co_varnames %r vs %r" % (a.co_varnames, b.co_varnames))
        left_flags, right_flags = a.co_flags & _BEHAVIOUR_FLAGS, b.co_flags & _BEHAVIOUR_FLAGS
        if left_flags != right_flags:
            return Difference(where, "co_flags", "co_flags %#x vs %#x" % (left_flags, right_flags))
        left_doc, right_doc = _docstring(a), _docstring(b)
        if left_doc != right_doc:
            return Difference(where, "docstring", "docstring %s vs %s" % (_short(left_doc), _short(right_doc)))
        return self._graphs(NodeGraph(a), NodeGraph(b), where)

    def _graphs(self, ga: NodeGraph, gb: NodeGraph, where: str) -> Optional[Difference]:
        start = (ga.follow(0 if ga.ops else END), gb.follow(0 if gb.ops else END))
        seen = {start}
        queue = deque([start])
        ops_a, ops_b, args_a, args_b = ga.ops, gb.ops, ga.args, gb.args
        edges_a, edges_b = ga.edges(), gb.edges()
        while queue:
            i, j = queue.popleft()
            if i < 0 or j < 0:
                if i != j:
                    return self._mismatch(ga, gb, i, j, where)
                continue
            op = ops_a[i]
            if op != ops_b[j]:
                return self._mismatch(ga, gb, i, j, where)
            if ga.is_const[i] or args_a[i] != args_b[j]:
                difference = self._args(ga, gb, i, j, where)
                if difference is not None:
                    return difference
            next_a, handler_a = edges_a[i]
            next_b, handler_b = edges_b[j]
            for pair in zip(next_a, next_b):
                if pair not in seen:
                    seen.add(pair)
                    queue.append(pair)
            ha, hb = ga.handlers[i], gb.handlers[j]
            if ha is None and hb is None or op in CANNOT_RAISE:
                continue  # whether the table covers a jump depends on layout, never on behaviour
            if ha is None or hb is None or ha[1:] != hb[1:]:
                return Difference(where, "exception handler", "%s handler %s vs %s handler %s" % (
                    ga.show(i), _handler(ha), gb.show(j), _handler(hb)))
            pair = (handler_a, handler_b)  # type: ignore[assignment]
            if pair not in seen:
                seen.add(pair)
                queue.append(pair)
        return None

    def _args(self, ga: NodeGraph, gb: NodeGraph, i: int, j: int, where: str) -> Optional[Difference]:
        left, right = ga.args[i], gb.args[j]
        if ga.is_const[i]:
            if isinstance(left, CodeType) and isinstance(right, CodeType):
                return self.code(left, right, where + "." + left.co_name)
            if _const_key(left) == _const_key(right):
                return None
        elif left == right:
            return None
        return Difference(where, ga.ops[i], "%s vs %s" % (ga.show(i), gb.show(j)))

    @staticmethod
    def _mismatch(ga: NodeGraph, gb: NodeGraph, i: int, j: int, where: str) -> Difference:
        left = ga.names[i] if i >= 0 else ga.show(i)
        right = gb.names[j] if j >= 0 else gb.show(j)
        return Difference(where, "%s/%s" % (left, right), "%s vs %s" % (ga.show(i), gb.show(j)))


def _handler(handler: Optional[Tuple[int, int, bool]]) -> str:
    if handler is None:
        return "none"
    return "[depth %d%s]" % (handler[1], " lasti" if handler[2] else "")


def _short(value: object) -> str:
    shown = repr(value)
    return shown if len(shown) <= 40 else shown[:37] + "..."


def _float_key(value: float) -> object:
    # nan equals nan; 0.0 and -0.0 differ (they print and divide differently).
    if math.isnan(value):
        return "nan"
    return (value, math.copysign(1.0, value))


def _const_key(value: object) -> object:
    """A hashable key that is equal exactly for constants of the same type and value."""
    kind = type(value)
    if kind is float:
        return (kind, _float_key(value))  # type: ignore[arg-type]
    if kind is complex:
        return (kind, _float_key(value.real), _float_key(value.imag))  # type: ignore[attr-defined]
    if kind is tuple:
        return (kind, tuple(_const_key(item) for item in value))  # type: ignore[attr-defined]
    if kind is frozenset:
        return (kind, frozenset(_const_key(item) for item in value))  # type: ignore[attr-defined]
    if kind is slice:
        return (kind, _const_key(value.start), _const_key(value.stop), _const_key(value.step))  # type: ignore[attr-defined]
    if kind is CodeType:
        return (kind, id(value))  # only found inside tuples by hand-built code
    return (kind, value)


def _reindent(source: str, remove: int, add: str) -> str:
    """Shift every line that starts a statement: drop ``remove`` leading columns, then prefix ``add``.

    Lines that continue a statement (inside brackets, after a backslash, or
    inside a multi-line string) are left alone, so string values do not change.
    """
    lines = io.StringIO(source).readlines()  # rows as tokenize counts them (not str.splitlines)
    try:
        starts = _statement_rows(source)
    except (tokenize.TokenError, SyntaxError):
        starts = set(range(1, len(lines) + 1))
    out = []
    for row, line in enumerate(lines, 1):
        if row in starts:
            cut = 0
            while cut < remove and cut < len(line) and line[cut] in " \t":
                cut += 1
            line = add + line[cut:]
        out.append(line)
    return "".join(out)


_SKIP_TOKENS = frozenset([tokenize.NL, tokenize.COMMENT, tokenize.INDENT, tokenize.DEDENT, tokenize.NEWLINE,
                          tokenize.ENCODING])


def _statement_rows(source: str) -> set:
    """Rows (1-based) whose first token begins a logical line."""
    rows = set()
    at_start = True
    for token in tokenize.generate_tokens(io.StringIO(source).readline):
        if token.type == tokenize.NEWLINE:
            at_start = True
        elif at_start and token.type not in _SKIP_TOKENS and token.type != tokenize.ENDMARKER:
            rows.add(token.start[0])
            at_start = False
    return rows


def recompile_function(source: str, code: CodeType) -> CodeType:
    """Compile decompiled ``source`` (a complete ``def``) and return the code object standing for ``code``.

    A function with free variables is a closure, so the ``def`` is placed in
    a synthetic enclosing function that binds them; one that uses
    ``__class__`` (zero-argument ``super()``) is placed in a synthetic class.
    A function that was nested gets the enclosing function even without free
    variables, so that it is compiled as nested; one that was nested and loads a
    global of its own name (a method ``all`` calling the builtin ``all``) was defined in
    a class body, which binds no closure variable: it gets the synthetic class too.  The future imports
    recorded in ``code.co_flags`` are in force.  Raises ``SyntaxError`` when
    the source does not compile and ``ValueError`` when it defines no
    function named ``code.co_name``.  The names ``code`` calls attributes of as
    imported names (`imported_names`) are imported at the end of the module, so
    that the calls compile as they did in their own module.
    """
    free = [name for name in code.co_freevars if name != "__class__"]
    path = []
    text = source if source.endswith("\n") else source + "\n"
    if "__class__" in code.co_freevars or _names_itself_globally(code):
        text = "class __framescope_class__:\n" + _reindent(text, 0, "    ")
        path.append("__framescope_class__")
    if free or code.co_flags & _CO_NESTED:
        binds = "".join("    %s = None\n" % name for name in free)
        text = "def __framescope_outer__():\n" + binds + _reindent(text, 0, "    ")
        path.append("__framescope_outer__")
    text += "".join("import %s\n" % name for name in sorted(imported_names(code)))
    module = compile(text, "<decompiled>", "exec", flags=future_flags(code), dont_inherit=True)
    found = module
    for name in list(reversed(path)) + [code.co_name]:
        found = _child(found, name)  # type: ignore[assignment]
        if found is None:
            raise ValueError("decompiled source defines no function named %r" % code.co_name)
    return found


def _names_itself_globally(code: CodeType) -> bool:
    return bool(code.co_flags & _CO_NESTED) and code.co_name in code.co_names and code.co_name not in code.co_freevars


_NAME_LOADS = frozenset(["LOAD_FAST", "LOAD_DEREF", "LOAD_NAME", "LOAD_GLOBAL", "LOAD_CLASSDEREF",
                         "LOAD_FAST_BORROW", "LOAD_FAST_CHECK"])


def imported_names(code: CodeType) -> set:
    """The names whose attributes ``code`` (or code nested in it) calls the way it calls
    the attributes of names its module imports (`versions.IMPORTED_NAMES_SKIP_METHOD_CALLS`).

    A call that cannot be a method call anyway (``x.a(*args)``) has the same shape, so
    a name found here may not be imported; declaring it costs nothing, because the
    comparison spells both kinds of call alike, except where the way a call's keywords
    are passed depends on it (more than 15 keywords).
    """
    names: set = set()
    if not versions.IMPORTED_NAMES_SKIP_METHOD_CALLS:
        return names
    decoded = bytecode.instructions(code)  # (offset, opcode, opname, arg, argval)
    for i in range(len(decoded) - 1):
        (_, _, load, load_arg, name), (_, _, attribute, attribute_arg, _) = decoded[i], decoded[i + 1]
        if load not in _NAME_LOADS or attribute != "LOAD_ATTR":
            continue
        if versions.LOAD_ATTR_METHOD_BIT and attribute_arg & 1:
            continue
        if versions.NULL_AFTER_CALLABLE:
            called = i + 2 < len(decoded) and decoded[i + 2][2] == "PUSH_NULL"
        else:
            called = (load == "LOAD_GLOBAL" and load_arg & 1) or (i > 0 and decoded[i - 1][2] == "PUSH_NULL")
        if called and isinstance(name, str):
            names.add(name)
    for const in code.co_consts:
        if isinstance(const, CodeType):
            names |= imported_names(const)
    return names


def _child(code: CodeType, name: str) -> Optional[CodeType]:
    """The first code constant of ``code`` named ``name``.

    A 3.12+ ``def f[T]()`` keeps ``f`` inside a ``<generic parameters of f>`` code object.
    """
    for const in code.co_consts:
        if isinstance(const, CodeType):
            if const.co_name == name:
                return const
            if const.co_name == "<generic parameters of %s>" % name:
                return _child(const, name)
    return None
