"""Pass 4: straight-line canonical instructions → expressions and simple statements.

The simulator runs instructions on a symbolic stack of `ast` expressions (and the
markers of `values.py`) and appends the statements they complete to a list.  One
method per canonical operation, like ``dis``.  Control flow is not its business:
the structurer (`structure.py`) calls `Simulator.step` for the body of each block and
reads the stack itself at jumps.
"""
import ast
from types import CodeType
from typing import Any, Callable, Dict, List, Optional

from framescope.decompiler.simulate import marks
from framescope.decompiler.simulate import values as v
from framescope.decompiler.frontend.instructions import Instr
from framescope.decompiler.simulate.sametree import same_tree
from framescope.errors import DecompilationError

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


class State:
    """The symbolic stack and the statements completed so far."""

    def __init__(self, stack: Optional[list] = None) -> None:
        self.stack: List[Any] = list(stack or [])
        self.stmts: List[ast.stmt] = []
        #: Stores of a tuple assignment seen so far: (target, value), in store order.
        self.run: List[Any] = []
        #: Set by ``POP_EXCEPT``: the except clause being built is over.
        self.ended = False
        #: Where the code after an ended clause continues inside its last block: (block, index).
        self.tail = None

    def push(self, value: Any) -> None:
        self.stack.append(value)

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

    def copy(self) -> "State":
        return State(self.stack)


# One context object for every name, as ``ast.parse`` shares them: making one per name is
# a noticeable part of building the statements (most nodes are names).
LOAD, STORE = ast.Load(), ast.Store()


def name(id_: str, store: bool = False) -> ast.Name:
    return ast.Name(id=id_, ctx=STORE if store else LOAD)


def const(value: Any) -> ast.expr:
    return ast.Constant(value=value)


def is_none(node: Any) -> bool:
    return isinstance(node, ast.Constant) and node.value is None


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


class Simulator:
    """Run canonical instructions on a `State`."""

    def __init__(self, code: CodeType, nested: Callable[[v.Function], Any]) -> None:
        self.code = code
        #: Builds a nested function/class/comprehension from a `values.Function`.
        self.nested = nested
        #: The ``op_*`` method of each operation seen so far (looked up once: every step needs one).
        self.methods: Dict[str, Callable[[Instr, State], None]] = {}

    # -- driver ------------------------------------------------------------------------------------
    def step(self, ins: Instr, state: State) -> None:
        method = self.methods.get(ins.op)
        if method is None:
            method = getattr(self, "op_" + ins.op, None)
            if method is None:
                raise DecompilationError("unsupported instruction", code_name=self.code.co_name,
                                         offset=ins.offset, opname=ins.raw or ins.op)
            self.methods[ins.op] = method
        try:
            method(ins, state)
        except DecompilationError as err:
            if err.offset is None:
                raise DecompilationError(err.reason, code_name=self.code.co_name, offset=ins.offset,
                                         opname=ins.raw or ins.op) from None
            raise

    def expr(self, value: Any) -> ast.expr:
        """The expression a stack value stands for."""
        if isinstance(value, (ast.expr, ast.slice)):  # 3.8: slices are not expressions
            return value
        if isinstance(value, v.Chain):
            if len(value.targets) == 1 and isinstance(value.targets[0], ast.Name):
                return ast.NamedExpr(target=value.targets[0], value=self.expr(value.value))
            raise DecompilationError("chained assignment used as a value")
        if isinstance(value, v.Function):
            return self.nested(value)
        if isinstance(value, v.Converted):
            return value.value
        raise DecompilationError("%s used as a value" % type(value).__name__)

    def pop_expr(self, state: State) -> ast.expr:
        return self.expr(state.pop())

    def emit(self, state: State, stmt: ast.stmt) -> None:
        state.stmts.append(stmt)

    # -- constants and names -----------------------------------------------------------------------
    def op_LOAD_CONST(self, ins: Instr, state: State) -> None:
        value = ins.arg
        if isinstance(value, CodeType):
            state.push(value)  # consumed by MAKE_FUNCTION
        else:
            state.push(const_expr(value))

    def op_LOAD_COMMON_CONSTANT(self, ins: Instr, state: State) -> None:
        node = name(ins.arg)
        marks.mark(node, marks.BUILTIN)  # 3.14 tests ``f is all`` before inlining ``all(genexpr)``
        state.push(node)

    def op_LOAD_ASSERTION_ERROR(self, ins: Instr, state: State) -> None:
        state.push(AssertionErrorName(id="AssertionError", ctx=ast.Load()))

    def _load(self, ins: Instr, state: State) -> None:
        state.push(name(ins.arg))

    op_LOAD_FAST = op_LOAD_NAME = op_LOAD_GLOBAL = op_LOAD_DEREF = _load

    def op_LOAD_FROM_DICT_OR_DEREF(self, ins: Instr, state: State) -> None:
        state.pop()  # 3.12+: the class namespace from LOAD_LOCALS
        state.push(name(ins.arg))

    op_LOAD_FROM_DICT_OR_GLOBALS = op_LOAD_FROM_DICT_OR_DEREF

    def op_LOAD_CLOSURE(self, ins: Instr, state: State) -> None:
        state.push(name(ins.arg))

    def op_LOAD_FAST_AND_CLEAR(self, ins: Instr, state: State) -> None:
        state.push(v.SavedLocal(ins.arg))

    def op_LOAD_LOCALS(self, ins: Instr, state: State) -> None:
        state.push(v.Namespace())

    def op_PUSH_NULL(self, ins: Instr, state: State) -> None:
        state.push(v.NULL)

    def op_MAKE_CELL(self, ins: Instr, state: State) -> None:
        pass

    def op_COPY_FREE_VARS(self, ins: Instr, state: State) -> None:
        pass

    def op_RETURN_GENERATOR(self, ins: Instr, state: State) -> None:
        state.push(v.NULL)

    def op_GEN_START(self, ins: Instr, state: State) -> None:
        pass  # 3.10: discards the first value sent in, which the symbolic stack never held

    def op_POP_TOP(self, ins: Instr, state: State) -> None:
        value = state.pop()
        if isinstance(value, v.UnpackSlot):
            # 3.13+ drops a store that a later target of the same unpacking overwrites
            # (``a, _, _ = x``): the slot is that later target.
            value.group.targets[value.index] = DEAD
            self.finish_unpack(state, value.group)
            return
        if isinstance(value, (v.Marker,)) and not isinstance(value, (v.Chain, v.Function, v.Module)):
            return
        if isinstance(value, v.Chain):
            self.finish_chain(state, value)
            return
        if isinstance(value, v.Module):
            self.finish_import(state, value)
            return
        if marks.marked(value, marks.COPIED):
            return
        node = self.expr(value)
        self.emit(state, ast.Expr(value=node))

    # -- stores ------------------------------------------------------------------------------------
    def store(self, state: State, target: ast.expr) -> None:
        value = state.pop()
        if isinstance(value, v.UnpackSlot):
            value.group.targets[value.index] = target
            self.finish_unpack(state, value.group)
            return
        if isinstance(value, v.Inplace) and same_target(value.target, target):
            self.emit(state, ast.AugAssign(target=as_store(target), op=value.op, value=value.value))
            return
        if isinstance(value, v.ImportedName):
            asname = target.id if isinstance(target, ast.Name) else None
            value.module.names.append((value.name, asname))
            return
        if isinstance(value, v.Module):
            self.store_import(state, value, target)
            return
        if isinstance(value, v.Function):
            stmt = self.nested(value, target)
            if stmt is not None:
                self.emit(state, stmt)
                return
            value = self.expr(value)
        if isinstance(value, v.Bindable):
            value.target = as_store(target)
            return
        if isinstance(value, ClassValue):
            if not (isinstance(target, ast.Name) and target.id == value.node.name):
                raise DecompilationError("class stored under another name")
            self.emit(state, value.node)
            return
        if isinstance(value, (v.SavedLocal, v.Namespace)):
            return  # a 3.12+ comprehension restoring a local; 3.13+ saving a class's namespace
        if isinstance(value, v.Chain):
            value.targets.append(as_store(target))
            if state.stack and state.stack[-1] is value:
                return
            self.finish_chain(state, value)
            return
        if state.stack and state.stack[-1] is value:
            # The same value is still on the stack: ``a = b = value`` or ``(a := value)``.
            state.stack[-1] = v.Chain(value, [as_store(target)])
            return
        top = state.stack[-1] if state.stack else None
        if (isinstance(top, ast.expr) and isinstance(value, ast.expr) and marks.marked(value, marks.GROUP, None) is None
                and not marks.marked(top, marks.COPIED)):
            # Another value waits under this one: 3.11+ compiles ``a, b = x, y`` as two
            # loads and two stores in reverse order (no swap).
            state.run.append((as_store(target), value))
            return
        if state.run:
            pairs = state.run + [(as_store(target), value)]
            state.run = []
            self.emit(state, ast.Assign(targets=[ast.Tuple(elts=[t for t, _ in reversed(pairs)], ctx=ast.Store())],
                                        value=ast.Tuple(elts=[self.expr(x) for _, x in reversed(pairs)],
                                                        ctx=ast.Load()), type_comment=None))
            return
        stmt = ast.Assign(targets=[as_store(target)], value=self.expr(value), type_comment=None)
        self.emit(state, stmt)
        self.regroup(state, value, stmt)

    def finish_chain(self, state: State, chain: v.Chain) -> None:
        self.emit(state, ast.Assign(targets=list(chain.targets), value=self.expr(chain.value), type_comment=None))

    def finish_unpack(self, state: State, group: v.Unpack) -> None:
        if any(t is None for t in group.targets):
            return
        elts = list(group.targets)
        for i, target in enumerate(elts):
            if target is DEAD:
                later = [t for t in elts[i + 1:] if isinstance(t, ast.Name) and t is not DEAD]
                if not later:
                    raise DecompilationError("unpacking target dropped")
                elts[i] = name(later[0].id, True)
        if group.star is not None:
            elts[group.star] = ast.Starred(value=elts[group.star], ctx=ast.Store())
        target = ast.Tuple(elts=elts, ctx=ast.Store())
        if group.parent is not None:
            group.parent.group.targets[group.parent.index] = target
            self.finish_unpack(state, group.parent.group)
            return
        value = group.value
        if isinstance(value, v.Bindable):
            value.target = target
            return
        if group.chained is True and state.stack and state.stack[-1] is value:
            state.stack[-1] = v.Chain(value, [target])
            return
        targets = list(group.chained) if isinstance(group.chained, list) else []
        stmt = ast.Assign(targets=targets + [target], value=value, type_comment=None)
        self.emit(state, stmt)
        self.regroup(state, value, stmt)  # ``(a, b), (c, d) = x, y``

    def _store_name(self, ins: Instr, state: State) -> None:
        self.store(state, name(ins.arg, True))

    op_STORE_FAST = op_STORE_NAME = op_STORE_GLOBAL = op_STORE_DEREF = _store_name

    def op_STORE_ATTR(self, ins: Instr, state: State) -> None:
        obj = self.pop_expr(state)
        self.store(state, ast.Attribute(value=obj, attr=ins.arg, ctx=ast.Store()))

    def op_STORE_SUBSCR(self, ins: Instr, state: State) -> None:
        index = self.pop_expr(state)
        obj = self.pop_expr(state)
        self.store(state, ast.Subscript(value=obj, slice=index, ctx=ast.Store()))

    def op_STORE_SLICE(self, ins: Instr, state: State) -> None:
        stop = self.pop_expr(state)
        start = self.pop_expr(state)
        obj = self.pop_expr(state)
        self.store(state, ast.Subscript(value=obj, slice=make_slice(start, stop), ctx=ast.Store()))

    def _delete(self, target: ast.expr, state: State) -> None:
        self.emit(state, ast.Delete(targets=[target]))

    def _delete_name(self, ins: Instr, state: State) -> None:
        self._delete(ast.Name(id=ins.arg, ctx=ast.Del()), state)

    op_DELETE_FAST = op_DELETE_NAME = op_DELETE_GLOBAL = op_DELETE_DEREF = _delete_name

    def op_DELETE_ATTR(self, ins: Instr, state: State) -> None:
        obj = self.pop_expr(state)
        self._delete(ast.Attribute(value=obj, attr=ins.arg, ctx=ast.Del()), state)

    def op_DELETE_SUBSCR(self, ins: Instr, state: State) -> None:
        index = self.pop_expr(state)
        obj = self.pop_expr(state)
        self._delete(ast.Subscript(value=obj, slice=index, ctx=ast.Del()), state)

    def op_UNPACK_SEQUENCE(self, ins: Instr, state: State) -> None:
        self._unpack(state, ins.arg, None)

    def op_UNPACK_EX(self, ins: Instr, state: State) -> None:
        before, after = ins.arg & 0xFF, ins.arg >> 8
        self._unpack(state, before + 1 + after, before)

    def _unpack(self, state: State, count: int, star: Optional[int]) -> None:
        value = state.pop()
        parent = value if isinstance(value, v.UnpackSlot) else None
        chained: Any = None
        if isinstance(value, v.Chain):
            chained, value = value.targets, value.value  # ``a = (b, c) = v``: the last target
        elif state.stack and state.stack[-1] is value and isinstance(value, ast.expr):
            chained = True  # ``(b, c) = a = v``: the copy is stored after the unpacking
        if parent is None and not isinstance(value, v.Bindable):
            value = self.expr(value)
        group = v.Unpack(value, [None] * count, star, parent, chained)
        for index in reversed(range(count)):
            state.push(v.UnpackSlot(group, index))

    # -- attributes, subscripts, operators ---------------------------------------------------------
    def op_LOAD_ATTR(self, ins: Instr, state: State) -> None:
        obj = self.pop_expr(state)
        state.push(ast.Attribute(value=obj, attr=ins.arg, ctx=ast.Load()))

    def op_LOAD_METHOD(self, ins: Instr, state: State) -> None:
        self.op_LOAD_ATTR(ins, state)
        state.push(v.NULL)

    def op_LOAD_SUPER_ATTR(self, ins: Instr, state: State) -> None:
        attr, method, two_args = ins.arg
        self_arg = self.pop_expr(state)
        cls = self.pop_expr(state)
        func = self.pop_expr(state)
        args = [cls, self_arg] if two_args else []
        call = ast.Call(func=func, args=args, keywords=[])
        state.push(ast.Attribute(value=call, attr=attr, ctx=ast.Load()))
        if method:
            state.push(v.NULL)

    def op_BINARY_SUBSCR(self, ins: Instr, state: State) -> None:
        index = self.pop_expr(state)
        obj = self.pop_expr(state)
        state.push(ast.Subscript(value=obj, slice=index, ctx=ast.Load()))

    def op_BINARY_SLICE(self, ins: Instr, state: State) -> None:
        stop = self.pop_expr(state)
        start = self.pop_expr(state)
        obj = self.pop_expr(state)
        state.push(ast.Subscript(value=obj, slice=make_slice(start, stop), ctx=ast.Load()))

    def op_BUILD_SLICE(self, ins: Instr, state: State) -> None:
        parts = [self.expr(x) for x in state.popn(ins.arg)]
        step = parts[2] if len(parts) == 3 else None
        state.push(make_slice(parts[0], parts[1], step))

    def op_BINARY_OP(self, ins: Instr, state: State) -> None:
        right = self.pop_expr(state)
        left = self.pop_expr(state)
        symbol = ins.arg
        if symbol.endswith("=") and symbol not in ("==",):
            state.push(v.Inplace(left, BINOPS[symbol[:-1]](), right))
        else:
            state.push(ast.BinOp(left=left, op=BINOPS[symbol](), right=right))

    def op_UNARY_OP(self, ins: Instr, state: State) -> None:
        operand = self.pop_expr(state)
        state.push(ast.UnaryOp(op=UNARY[ins.arg](), operand=operand))

    def op_COMPARE_OP(self, ins: Instr, state: State) -> None:
        right = self.pop_expr(state)
        left = self.pop_expr(state)
        state.push(ast.Compare(left=left, ops=[CMPOPS[ins.arg]()], comparators=[right]))

    def op_IS_OP(self, ins: Instr, state: State) -> None:
        right = self.pop_expr(state)
        left = self.pop_expr(state)
        op = ast.IsNot() if ins.arg else ast.Is()
        state.push(ast.Compare(left=left, ops=[op], comparators=[right]))

    def op_CONTAINS_OP(self, ins: Instr, state: State) -> None:
        right = self.pop_expr(state)
        if isinstance(right, ast.Constant) and isinstance(right.value, frozenset):
            right = ast.Set(elts=set_items(right.value))
        left = self.pop_expr(state)
        op = ast.NotIn() if ins.arg else ast.In()
        state.push(ast.Compare(left=left, ops=[op], comparators=[right]))

    # -- stack shuffles ----------------------------------------------------------------------------
    def op_COPY(self, ins: Instr, state: State) -> None:
        if len(state.stack) < ins.arg:
            raise DecompilationError("stack underflow")
        value = state.stack[-ins.arg]
        if isinstance(value, ast.expr):
            marks.mark(value, marks.COPIED)  # popping a copy is clean-up, not a statement
        state.push(value)

    def op_SWAP(self, ins: Instr, state: State) -> None:
        n = ins.arg
        if len(state.stack) < n:
            raise DecompilationError("stack underflow")
        self.group(state.stack[-n:])
        state.stack[-1], state.stack[-n] = state.stack[-n], state.stack[-1]

    def op_ROT(self, ins: Instr, state: State) -> None:
        n = ins.arg
        if len(state.stack) < n:
            raise DecompilationError("stack underflow")
        self.group(state.stack[-n:])
        top = state.stack.pop()
        state.stack.insert(len(state.stack) - n + 1, top)

    def group(self, values: List[Any]) -> None:
        """Values shuffled before their stores: maybe ``a, b = x, y`` (see `regroup`)."""
        if len(values) not in (2, 3) or not all(isinstance(x, ast.expr) for x in values):
            return
        if any(marks.marked(x, marks.COPIED) or marks.marked(x, marks.GROUP, None) is not None for x in values):
            return
        group = TupleGroup(list(values))
        for value in values:
            marks.mark(value, marks.GROUP, group)

    def regroup(self, state: State, value: Any, stmt: ast.Assign) -> None:
        """Once every value of a shuffled group is stored, write the stores as one tuple assignment."""
        group = marks.marked(value, marks.GROUP, None)
        if group is None:
            return
        group.stores.append((value, stmt))
        if len(group.stores) < len(group.values):
            return
        stmts = [st for _, st in group.stores]
        if state.stmts[-len(stmts):] != stmts or any(len(st.targets) != 1 for st in stmts):
            return
        by_value = {id(val): st.targets[0] for val, st in group.stores}
        if len(by_value) != len(group.values):
            return
        targets = [by_value[id(val)] for val in group.values]
        del state.stmts[-len(stmts):]
        state.stmts.append(ast.Assign(targets=[ast.Tuple(elts=targets, ctx=ast.Store())],
                                      value=ast.Tuple(elts=list(group.values), ctx=ast.Load()), type_comment=None))

    # -- building collections ----------------------------------------------------------------------
    def op_BUILD_TUPLE(self, ins: Instr, state: State) -> None:
        items = state.popn(ins.arg)
        if items and all(isinstance(x, v.Marker) and not isinstance(x, (v.Chain, v.Function)) for x in items):
            raise DecompilationError("tuple of interpreter values")
        state.push(ast.Tuple(elts=[self.expr(x) for x in items], ctx=ast.Load()))

    def op_BUILD_LIST(self, ins: Instr, state: State) -> None:
        state.push(ast.List(elts=[self.expr(x) for x in state.popn(ins.arg)], ctx=ast.Load()))

    def op_BUILD_SET(self, ins: Instr, state: State) -> None:
        state.push(ast.Set(elts=[self.expr(x) for x in state.popn(ins.arg)]))

    def op_BUILD_MAP(self, ins: Instr, state: State) -> None:
        items = [self.expr(x) for x in state.popn(2 * ins.arg)]
        state.push(ast.Dict(keys=items[0::2], values=items[1::2]))

    def op_BUILD_CONST_KEY_MAP(self, ins: Instr, state: State) -> None:
        keys = state.pop()
        vals = [self.expr(x) for x in state.popn(ins.arg)]
        key_values = const_value(keys)
        if not isinstance(key_values, tuple):
            raise DecompilationError("BUILD_CONST_KEY_MAP without constant keys")
        state.push(ast.Dict(keys=[const(k) for k in key_values], values=vals))

    def op_BUILD_STRING(self, ins: Instr, state: State) -> None:
        parts = [self.expr(x) for x in state.popn(ins.arg)]
        values: List[ast.expr] = []
        for part in parts:
            if isinstance(part, ast.JoinedStr):
                values.extend(part.values)
            else:
                values.append(part)
        state.push(ast.JoinedStr(values=values))

    def op_LIST_EXTEND(self, ins: Instr, state: State) -> None:
        items = self.pop_expr(state)
        target = state.stack[-ins.arg]
        self._extend(target, items)

    def op_SET_UPDATE(self, ins: Instr, state: State) -> None:
        items = self.pop_expr(state)
        target = state.stack[-ins.arg]
        self._extend(target, items)

    def _extend(self, target: Any, items: ast.expr) -> None:
        if not isinstance(target, (ast.List, ast.Set)):
            raise DecompilationError("extend of a non-literal")
        if isinstance(items, ast.Constant) and isinstance(items.value, tuple):
            target.elts.extend(const_expr(x) for x in items.value)
        elif isinstance(items, ast.Constant) and isinstance(items.value, frozenset):
            target.elts.extend(set_items(items.value))
        else:
            target.elts.append(ast.Starred(value=items, ctx=ast.Load()))

    def op_DICT_UPDATE(self, ins: Instr, state: State) -> None:
        items = self.pop_expr(state)
        target = state.stack[-ins.arg]
        if not isinstance(target, ast.Dict):
            raise DecompilationError("dict update of a non-literal")
        target.keys.append(None)
        target.values.append(items)

    def op_DICT_MERGE(self, ins: Instr, state: State) -> None:
        items = self.pop_expr(state)
        target = state.stack[-ins.arg]
        if not isinstance(target, ast.Dict):
            raise DecompilationError("dict merge of a non-literal")
        target.keys.append(None)
        target.values.append(items)

    def op_LIST_TO_TUPLE(self, ins: Instr, state: State) -> None:
        items = self.pop_expr(state)
        if not isinstance(items, ast.List):
            raise DecompilationError("tuple of a non-literal list")
        state.push(ast.Tuple(elts=items.elts, ctx=ast.Load()))

    def op_BUILD_UNPACK(self, ins: Instr, state: State) -> None:
        """3.8's ``BUILD_*_UNPACK``: runs of plain items alternate with ``*x``/``**x`` parts.

        The compiler starts a new literal for each run of plain items, so a literal
        right after another literal can only be an unpacked one (``**{...}``).
        """
        kind, count = ins.arg
        parts = [self.expr(x) for x in state.popn(count)]
        literal = ast.Dict if kind == "dict" else (ast.Set if kind == "set" else (ast.Tuple, ast.List))
        runs: List[bool] = []  # for each part: is it a run of plain items?
        for i, part in enumerate(parts):
            runs.append(isinstance(part, literal) and count > 1 and not (i and runs[i - 1]))
        if kind == "dict":
            keys: List[Optional[ast.expr]] = []
            vals: List[ast.expr] = []
            for part, run in zip(parts, runs):
                if run:
                    keys.extend(part.keys)
                    vals.extend(part.values)
                else:
                    keys.append(None)
                    vals.append(part)
            state.push(ast.Dict(keys=keys, values=vals))
            return
        elts: List[ast.expr] = []
        for part, run in zip(parts, runs):
            if run:
                elts.extend(part.elts)
            else:
                elts.append(ast.Starred(value=part, ctx=ast.Load()))
        if kind == "set":
            state.push(ast.Set(elts=elts))
        else:
            state.push((ast.Tuple if kind == "tuple" else ast.List)(elts=elts, ctx=ast.Load()))

    def in_display(self, state: State, depth: int, kind) -> bool:
        """Whether an append adds to a literal being built (``[*a, b]``), not to a comprehension.

        A comprehension's collection lies below the loop's iterator; a display's is
        reached without passing one.
        """
        if len(state.stack) < depth:
            return False
        target = state.stack[-depth]
        between = state.stack[len(state.stack) - depth + 1:]
        return isinstance(target, kind) and not any(isinstance(x, v.Iterator) for x in between)

    def op_LIST_APPEND(self, ins: Instr, state: State) -> None:
        value = self.pop_expr(state)
        if self.in_display(state, ins.arg, (ast.List, ast.Set)):
            state.stack[-ins.arg].elts.append(value)
            return
        self.emit(state, CompAppend(value=value, key=None, depth=ins.arg))

    op_SET_ADD = op_LIST_APPEND

    def op_MAP_ADD(self, ins: Instr, state: State) -> None:
        value = self.pop_expr(state)
        key = self.pop_expr(state)
        if self.in_display(state, ins.arg, ast.Dict):
            state.stack[-ins.arg].keys.append(key)
            state.stack[-ins.arg].values.append(value)
            return
        self.emit(state, CompAppend(value=value, key=key, depth=ins.arg))

    # -- f-strings ---------------------------------------------------------------------------------
    def op_CONVERT_VALUE(self, ins: Instr, state: State) -> None:
        state.push(v.Converted(self.pop_expr(state), ins.arg))

    def op_FORMAT_VALUE(self, ins: Instr, state: State) -> None:
        conversion, has_spec = ins.arg
        spec = self.pop_expr(state) if has_spec else None
        value = state.pop()
        if isinstance(value, v.Converted):
            conversion, value = value.conversion, value.value
        value = self.expr(value)
        if spec is not None and not isinstance(spec, ast.JoinedStr):
            spec = ast.JoinedStr(values=[spec])
        state.push(ast.JoinedStr(values=[ast.FormattedValue(value=value, conversion=conversion, format_spec=spec)]))

    # -- calls -------------------------------------------------------------------------------------
    def op_CALL(self, ins: Instr, state: State) -> None:
        argc, kwnames, slots = ins.arg
        self._call(state, argc, kwnames or (), slots)

    def op_CALL_KW(self, ins: Instr, state: State) -> None:
        argc, slots = ins.arg
        names = const_value(state.pop())
        if not isinstance(names, tuple):
            raise DecompilationError("keyword names are not a constant")
        self._call(state, argc, names, slots)

    def _call(self, state: State, argc: int, kwnames: tuple, slots: int) -> None:
        args = state.popn(argc)
        func, implicit = self._pop_callable(state, slots)
        args = implicit + args
        argc = len(args)
        npos = argc - len(kwnames)
        positional = args[:npos]
        keywords = [ast.keyword(arg=k, value=self.expr(a)) for k, a in zip(kwnames, args[npos:])]
        if isinstance(func, v.WithExit):
            state.push(v.ExitResult())
            return
        if isinstance(func, v.EnterMethod):
            state.push(v.Entered(func.manager, func.is_async))
            return
        if isinstance(func, v.BuildClass):
            state.push(self.nested_class(positional, keywords))
            return
        if (isinstance(func, v.Function) and len(positional) == 1 and not keywords
                and func.code.co_name in COMPREHENSIONS and isinstance(positional[0], v.Iterator)):
            state.push(self.nested(func, None, positional[0]))
            return
        if (len(positional) == 1 and not keywords and isinstance(positional[0], v.Function)
                and is_definition(positional[0]) and not isinstance(func, v.Marker)):
            positional[0].decorators.insert(0, func)
            state.push(positional[0])
            return
        if len(positional) == 1 and not keywords and isinstance(positional[0], ClassValue):
            positional[0].node.decorator_list.insert(0, self.expr(func))
            state.push(positional[0])
            return
        call = ast.Call(func=self.expr(func), args=[self.expr(a) for a in positional], keywords=keywords)
        state.push(call)

    def _pop_callable(self, state: State, slots: int) -> Any:
        """The callable below a call's arguments, and any implicit first argument.

        With two slots, one is NULL unless the second holds the first argument itself
        (3.11 calls a comprehension's function as ``[function, iterator]``).
        """
        below = state.popn(slots)
        callables = [x for x in below if x is not v.NULL]
        if len(callables) == 2:
            return callables[0], [callables[1]]
        if len(callables) != 1:
            raise DecompilationError("call without a callable")
        return callables[0], []

    def op_CALL_FUNCTION_EX(self, ins: Instr, state: State) -> None:
        has_kwargs, slots = ins.arg
        kwargs = state.pop() if has_kwargs is not False else None
        if kwargs is v.NULL:
            kwargs = None
        star = self.pop_expr(state)
        func, implicit = self._pop_callable(state, slots)
        if implicit:
            raise DecompilationError("unexpected value below a call")
        func = self.expr(func)
        args: List[ast.expr] = []
        if isinstance(star, ast.Tuple):
            args = list(star.elts)
        elif isinstance(star, ast.List):
            args = list(star.elts)
        else:
            args = [ast.Starred(value=star, ctx=ast.Load())]
        keywords: List[ast.keyword] = []
        if kwargs is not None:
            kwargs = self.expr(kwargs)
            if isinstance(kwargs, ast.Dict):
                for k, val in zip(kwargs.keys, kwargs.values):
                    if k is None:
                        keywords.append(ast.keyword(arg=None, value=val))
                    else:
                        keywords.append(ast.keyword(arg=k.value, value=val))
            else:
                keywords.append(ast.keyword(arg=None, value=kwargs))
        state.push(ast.Call(func=func, args=args, keywords=keywords))

    # -- functions and classes ---------------------------------------------------------------------
    def op_MAKE_FUNCTION(self, ins: Instr, state: State) -> None:
        flags, has_qualname = ins.arg
        if has_qualname:
            state.pop()
        code = state.pop()
        if not isinstance(code, CodeType):
            raise DecompilationError("MAKE_FUNCTION without a code object")
        func = v.Function(code)
        if flags & 0x08:
            func.closure = state.pop()
        if flags & 0x04:
            func.annotations = state.pop()
        if flags & 0x02:
            func.kwdefaults = state.pop()
        if flags & 0x01:
            func.defaults = state.pop()
        state.push(func)

    def op_SET_FUNCTION_ATTRIBUTE(self, ins: Instr, state: State) -> None:
        func = state.pop()
        value = state.pop()
        if not isinstance(func, v.Function):
            raise DecompilationError("function attribute on a non-function")
        attr = {1: "defaults", 2: "kwdefaults", 4: "annotations", 8: "closure", 16: "annotate"}[ins.arg]
        setattr(func, attr, value)
        state.push(func)

    def op_LOAD_BUILD_CLASS(self, ins: Instr, state: State) -> None:
        state.push(v.BuildClass())

    def nested_class(self, positional: List[Any], keywords: List[ast.keyword]) -> "ClassValue":
        if len(positional) < 2 or not isinstance(positional[0], v.Function):
            raise DecompilationError("class without a body")
        body_fn = positional[0]
        class_name = self.expr(positional[1])
        bases = [self.expr(b) for b in positional[2:]]
        node = self.nested(body_fn, "class")
        node.name = class_name.value
        node.bases = bases
        node.keywords = keywords
        return ClassValue(node)

    # -- returns, raises, asserts ------------------------------------------------------------------
    def op_RETURN_VALUE(self, ins: Instr, state: State) -> None:
        value = self.pop_expr(state)
        self.emit(state, ast.Return(value=value))

    def op_RAISE_VARARGS(self, ins: Instr, state: State) -> None:
        args = [self.expr(x) for x in state.popn(ins.arg)]
        exc = args[0] if args else None
        cause = args[1] if len(args) > 1 else None
        self.emit(state, ast.Raise(exc=exc, cause=cause))

    # -- generators and coroutines ------------------------------------------------------------------
    def op_YIELD_VALUE(self, ins: Instr, state: State) -> None:
        value = self.pop_expr(state)
        state.push(ast.Yield(value=None if is_none(value) else value))

    def op_YIELD_FROM(self, ins: Instr, state: State) -> None:
        state.pop()  # the value sent first (None)
        source = state.pop()
        if isinstance(source, (ast.Await, v.Entered, v.ExitResult)) or marks.marked(source, marks.ASYNC):
            state.push(source)
        elif isinstance(source, v.Iterator):
            state.push(ast.YieldFrom(value=source.source))
        else:
            raise DecompilationError("yield from without an iterator")

    def op_ASYNC_GEN_WRAP(self, ins: Instr, state: State) -> None:
        pass

    def op_GET_ITER(self, ins: Instr, state: State) -> None:
        state.push(v.Iterator(self.pop_expr(state)))

    def op_GET_AITER(self, ins: Instr, state: State) -> None:
        state.push(v.Iterator(self.pop_expr(state), True))

    def op_GET_YIELD_FROM_ITER(self, ins: Instr, state: State) -> None:
        state.push(v.Iterator(self.pop_expr(state)))

    def op_GET_AWAITABLE(self, ins: Instr, state: State) -> None:
        value = state.pop()
        if isinstance(value, (v.Entered, v.ExitResult)) or marks.marked(value, marks.ASYNC):
            state.push(value)  # awaited by ``async with`` / an async comprehension itself
            return
        state.push(ast.Await(value=self.expr(value)))

    def op_SETUP_ANNOTATIONS(self, ins: Instr, state: State) -> None:
        pass

    # -- exceptions and with statements ------------------------------------------------------------
    def op_PUSH_EXC_INFO(self, ins: Instr, state: State) -> None:
        exc = state.pop()
        state.push(v.Exc("prev"))
        state.push(exc)

    def op_POP_EXCEPT(self, ins: Instr, state: State) -> None:
        state.popn(ins.arg)
        state.ended = True
        self.emit(state, ExceptEnd())

    def op_CHECK_EXC_MATCH(self, ins: Instr, state: State) -> None:
        state.push(v.ExcMatch(self.pop_expr(state)))

    def op_EXC_MATCH(self, ins: Instr, state: State) -> None:
        exc_type = self.pop_expr(state)
        state.pop()
        state.push(v.ExcMatch(exc_type))

    def op_RERAISE(self, ins: Instr, state: State) -> None:
        node = ast.Raise(exc=None, cause=None)
        marks.mark(node, marks.RERAISE)  # the end of a finally body, not a ``raise`` of the source
        self.emit(state, node)

    def op_SETUP_FINALLY(self, ins: Instr, state: State) -> None:
        pass

    def op_POP_BLOCK(self, ins: Instr, state: State) -> None:
        pass

    def op_BEFORE_ASYNC_WITH(self, ins: Instr, state: State) -> None:
        manager = self.pop_expr(state)
        state.push(v.WithExit(manager, True))
        state.push(v.Entered(manager, True))

    def op_BEFORE_WITH(self, ins: Instr, state: State) -> None:
        manager = self.pop_expr(state)
        state.push(v.WithExit(manager))
        state.push(v.Entered(manager))

    def op_LOAD_SPECIAL(self, ins: Instr, state: State) -> None:
        manager = self.pop_expr(state)
        if ins.arg in ("__exit__", "__aexit__"):
            state.push(v.WithExit(manager, ins.arg == "__aexit__"))
        else:
            state.push(v.EnterMethod(manager, ins.arg == "__aenter__"))
        state.push(v.NULL)

    # -- imports -----------------------------------------------------------------------------------
    def op_IMPORT_NAME(self, ins: Instr, state: State) -> None:
        fromlist = const_value(state.pop())
        level = const_value(state.pop())
        state.push(v.Module(ins.arg, level, fromlist))

    def op_IMPORT_FROM(self, ins: Instr, state: State) -> None:
        module = state.stack[-1]
        if isinstance(module, v.ImportedName):  # ``import a.b.c as d`` goes down one level per name
            module = module.module
        if not isinstance(module, v.Module):
            raise DecompilationError("IMPORT_FROM without a module")
        state.push(v.ImportedName(module, ins.arg))

    def op_IMPORT_STAR(self, ins: Instr, state: State) -> None:
        module = state.pop()
        self.emit(state, ast.ImportFrom(module=module.name or None, names=[ast.alias(name="*", asname=None)],
                                        level=module.level))

    def finish_import(self, state: State, module: v.Module) -> None:
        """The module is popped: emit the from-import (or dotted import-as) it served."""
        if module.fromlist is None:  # ``import a.b.c as d``: attributes taken one by one
            if not module.names:
                raise DecompilationError("import without a target")
            alias = ast.alias(name=module.name, asname=module.names[-1][1])
            self.emit(state, ast.Import(names=[alias]))
            return
        names = [ast.alias(name=n, asname=None if a == n else a) for n, a in module.names]
        self.emit(state, ast.ImportFrom(module=module.name or None, names=names, level=module.level))

    def store_import(self, state: State, module: v.Module, target: ast.expr) -> None:
        if not isinstance(target, ast.Name):
            raise DecompilationError("import stored to a non-name")
        top = module.name.split(".")[0]
        if module.attrs or target.id != top:
            alias = ast.alias(name=module.name, asname=target.id)
        else:
            alias = ast.alias(name=module.name, asname=None)
        self.emit(state, ast.Import(names=[alias]))

    def op_PRINT_EXPR(self, ins: Instr, state: State) -> None:
        self.emit(state, ast.Expr(value=self.pop_expr(state)))


class ClassValue(v.Marker):
    """A class built by ``__build_class__``, waiting for its name to be stored."""

    def __init__(self, node: ast.ClassDef) -> None:
        self.node = node


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


def const_value(node: Any) -> Any:
    """The Python value of a constant expression (tuples of constants included)."""
    if isinstance(node, ast.Constant):
        return node.value
    if isinstance(node, ast.Tuple):
        return tuple(const_value(e) for e in node.elts)
    raise DecompilationError("expected a constant")
