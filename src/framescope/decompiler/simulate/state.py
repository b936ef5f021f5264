"""The simulator's data: the walk state, the markers statements leave, and the helpers
that build names and constants."""
import ast
import copy
import inspect
import itertools
from typing import Any, List, Optional

from framescope.decompiler.simulate import values as v
from framescope.decompiler.simulate.sametree import same_tree
from framescope.errors import DecompilationError

#: Numbers the paths (`State.serial`); a display under construction records its path's under
#: this attribute.
_SERIALS = itertools.count()
_OWNER = "_framescope_path"


BINOPS = {
    "+": ast.Add, "-": ast.Sub, "*": ast.Mult, "/": ast.Div, "//": ast.FloorDiv, "%": ast.Mod,
    "**": ast.Pow, "@": ast.MatMult, "<<": ast.LShift, ">>": ast.RShift, "&": ast.BitAnd,
    "|": ast.BitOr, "^": ast.BitXor,
}
CMPOPS = {"<": ast.Lt, "<=": ast.LtE, "==": ast.Eq, "!=": ast.NotEq, ">": ast.Gt, ">=": ast.GtE}
UNARY = {"+": ast.UAdd, "-": ast.USub, "~": ast.Invert, "not": ast.Not}
COMPREHENSIONS = ("<listcomp>", "<setcomp>", "<dictcomp>", "<genexpr>")


class CompAppend(ast.stmt):
    """A comprehension's ``LIST_APPEND``/``SET_ADD``/``MAP_ADD``: the element it adds."""

    _fields = ("value", "key", "depth")


class AssertionErrorName(ast.Name):
    """``AssertionError`` as an ``assert`` statement loads it (not through the builtins)."""

    _fields = ("id", "ctx")


class ExceptEnd(ast.stmt):
    """Where an except clause released its exception (``POP_EXCEPT``); removed after structuring."""

    _fields = ()


#: An unpacking target whose store the compiler dropped (see ``op_POP_TOP``).
DEAD = ast.Name(id="_", ctx=ast.Store())


class TupleGroup:
    """Values a stack shuffle reordered for their stores, in the order they were pushed."""

    def __init__(self, values: List[Any]) -> None:
        self.values = values
        #: (value, its assignment statement), in store order.
        self.stores: List[Any] = []


#: The deepest expression the simulator builds. No interpreter recompiles a deeper one
#: (CPython's compiler gives up near 1,000 levels), and a far deeper tree, built only to be
#: dropped, overflows the C stack while it is freed (under Pyodide's WebAssembly stack).
MAX_DEPTH = 1000
#: Pushes between two checks of the stack's depth: an expression grows at most one level a
#: push, so no value on the stack gets past MAX_DEPTH + CHECK_EVERY unseen.
CHECK_EVERY = 128


def deeper_than(node: ast.AST, limit: int) -> bool:
    """Whether the tree under ``node`` has more than ``limit`` levels (an iterative walk)."""
    todo = [(node, 1)]
    while todo:
        node, depth = todo.pop()
        if depth > limit:
            return True
        todo.extend((child, depth + 1) for child in ast.iter_child_nodes(node))
    return False


class State:
    """The symbolic stack and the statements completed so far."""

    def __init__(self, stack: Optional[list] = None, pushes: int = 0) -> None:
        self.stack: List[Any] = list(stack or [])
        #: Tells this path's own displays from those it shares with another (`own_display`).
        self.serial = next(_SERIALS)
        #: Values pushed so far on this path (every CHECK_EVERY-th one checks the depth).
        self.pushes = pushes
        self.stmts: List[ast.stmt] = []
        #: Stores of a tuple assignment seen so far: (target, value), in store order.
        self.run: List[Any] = []
        #: Set by ``POP_EXCEPT``: the except clause being built is over.
        self.ended = False
        #: Where the code after an ended clause continues inside its last block: (block, index).
        self.tail = None

    def push(self, value: Any) -> None:
        self.stack.append(value)
        self.pushes += 1
        if self.pushes % CHECK_EVERY == 0:
            self.check_depth()

    def check_depth(self) -> None:
        # Only values pushed since the last check can be deeper than then: at most the top
        # CHECK_EVERY. Checking the whole stack made a graph call's hundreds of waiting inputs
        # cost quadratic time.
        for value in self.stack[-CHECK_EVERY:]:
            if isinstance(value, ast.AST) and deeper_than(value, MAX_DEPTH):
                raise DecompilationError("too deeply nested to decompile")

    def pop(self) -> Any:
        if not self.stack:
            raise DecompilationError("stack underflow")
        return self.stack.pop()

    def popn(self, n: int) -> List[Any]:
        if n == 0:
            return []
        if len(self.stack) < n:
            raise DecompilationError("stack underflow")
        items = self.stack[-n:]
        del self.stack[-n:]
        return items

    def peek(self, depth: int) -> Any:
        """The value ``depth`` places down the stack (1: the top)."""
        if not 0 < depth <= len(self.stack):
            raise DecompilationError("stack underflow")
        return self.stack[-depth]

    def own_display(self, depth: int) -> Any:
        """The literal being built at ``stack[-depth]``, this path's own to add to.

        Two paths from a branch start with one stack; a display built across the branch
        (3.10 copies the code after it into each path) is copied before the first item
        this path adds, so the other path does not see it.
        """
        node = self.peek(depth)
        if isinstance(node, (ast.List, ast.Set, ast.Tuple, ast.Dict)) and getattr(node, _OWNER, None) != self.serial:
            node = copy.copy(node)
            for field in ("elts", "keys", "values"):
                if hasattr(node, field):
                    setattr(node, field, list(getattr(node, field)))
            setattr(node, _OWNER, self.serial)
            self.stack[-depth] = node
        return node

    def copy(self) -> "State":
        return State(self.stack, self.pushes)


# One context object for every name, as ``ast.parse`` shares them: making one per name is
# a noticeable part of building the statements (most nodes are names).
LOAD, STORE = ast.Load(), ast.Store()


def name(id_: str, store: bool = False) -> ast.Name:
    return ast.Name(id=id_, ctx=STORE if store else LOAD)


def const(value: Any) -> ast.expr:
    return ast.Constant(value=value)


def is_none(node: Any) -> bool:
    return isinstance(node, ast.Constant) and node.value is None


def is_none_return(stmt: ast.stmt) -> bool:
    """``return`` or ``return None``."""
    return isinstance(stmt, ast.Return) and (stmt.value is None or is_none(stmt.value))


def as_store(node: ast.expr) -> ast.expr:
    """The same target in store context (for stores of names, attributes, subscripts)."""
    if isinstance(node, ast.Name):
        return name(node.id, True)
    if isinstance(node, ast.Attribute):
        return ast.Attribute(value=node.value, attr=node.attr, ctx=ast.Store())
    if isinstance(node, ast.Subscript):
        return ast.Subscript(value=node.value, slice=node.slice, ctx=ast.Store())
    if isinstance(node, (ast.Tuple, ast.List)):
        return type(node)(elts=[as_store(e) for e in node.elts], ctx=ast.Store())
    if isinstance(node, ast.Starred):
        return ast.Starred(value=as_store(node.value), ctx=ast.Store())
    return node


def same_target(a: ast.expr, b: ast.expr) -> bool:
    return same_tree(as_store(a), as_store(b))


class ClassValue(v.Marker):
    """A class built by ``__build_class__``, waiting for its name to be stored."""

    def __init__(self, node: ast.ClassDef) -> None:
        self.node = node


class ClassBody(ast.expr):
    """A class body's function as an item of the arguments tuple of ``__build_class__``
    (``class A(*bases, **kw)`` calls it with ``CALL_FUNCTION_EX``); never printed."""

    _fields = ()

    def __init__(self, func: v.Function) -> None:
        super().__init__()
        self.func = func


def is_class_body(func: v.Function) -> bool:
    """A class body's code: the only nested code without fresh locals."""
    return not func.code.co_flags & inspect.CO_NEWLOCALS


def is_definition(func: v.Function) -> bool:
    return func.code.co_name not in COMPREHENSIONS and func.code.co_name != "<lambda>"


def make_slice(start: ast.expr, stop: ast.expr, step: Optional[ast.expr] = None) -> ast.Slice:
    return ast.Slice(lower=None if is_none(start) else start, upper=None if is_none(stop) else stop,
                     step=None if step is None or is_none(step) else step)


def set_items(value: frozenset) -> List[ast.expr]:
    """A frozenset constant's items as expressions, sorted so that the text does not depend
    on hash randomisation."""
    return [const_expr(x) for x in sorted(value, key=repr)]


def const_expr(value: Any) -> ast.expr:
    """An expression for a constant, spelled the way the compiler folds it back."""
    if isinstance(value, tuple):
        return ast.Tuple(elts=[const_expr(x) for x in value], ctx=ast.Load())
    if isinstance(value, slice):  # 3.14 folds constant slices
        return make_slice(const_expr(value.start), const_expr(value.stop),
                          None if value.step is None else const_expr(value.step))
    return ast.Constant(value=value)


def is_constant(node: Any) -> bool:
    """Whether ``node`` spells a constant (a tuple of constants included): one `const_value` reads."""
    return isinstance(node, ast.Constant) or (isinstance(node, ast.Tuple) and all(map(is_constant, node.elts)))


def const_value(node: Any) -> Any:
    """The Python value of a constant expression (tuples of constants included)."""
    if isinstance(node, ast.Constant):
        return node.value
    if isinstance(node, ast.Tuple):
        return tuple(const_value(e) for e in node.elts)
    raise DecompilationError("expected a constant")
