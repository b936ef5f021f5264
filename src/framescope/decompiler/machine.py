"""Decompiling machine-made bytecode: code that no source produced, such as torch.compile's.

The source decompiler (`api.py`) recognises what a compiler makes of statements and checks its
result by recompiling it. Code written by a program (Dynamo's transformed code, its resume
functions) follows no source shape: values are shuffled on the stack (``SWAP``, ``COPY``), lists
are built and sliced to pass values around, and side effects happen while other values wait on
the stack. Recompiling cannot check such code, so this decompiler is correct by construction:

* every value on the symbolic stack stays an expression until something uses it, as in
  `simulate.py`, but before a statement runs, any waiting value that the statement could affect
  or that has effects of its own (a call, an attribute, an operator) is first stored in a
  temporary (*spilled*), so the printed code evaluates everything once and in bytecode order;
* a list that the code builds itself (``BUILD_LIST``) and that nothing else has seen yet is kept
  as a Python list of stack values (`NewList`): indexing, slicing, extending and slice-assigning
  it with constants is done at decompile time, so Dynamo's list juggling disappears from the
  output instead of turning into ``[[()][0]]``-style noise; the list becomes a real list
  expression only when something else receives it;
* control flow may only go forward (straight-line code with ``if`` branches); a join of two
  branches is printed in both. Loops and exception handlers are refused.

Anything else raises DecompilationError; callers keep the original bytecode then.
"""
import ast
import copy
import inspect
from types import CodeType
from typing import Any, Dict, Iterator, List, Optional, Set, Tuple

from framescope.decompiler import values as v
from framescope.decompiler.function import nested
from framescope.decompiler.instructions import POP_JUMPS, Instr
from framescope.decompiler.opcodes import canonical_instructions
from framescope.decompiler.signature import arguments
from framescope.decompiler.simulate import Simulator, State, as_store, const_expr, name
from framescope.decompiler.unparse import unparse
from framescope.errors import DecompilationError

#: How many instructions one code object may take in all its paths (joins are copied per path).
STEP_BUDGET_FACTOR = 16

_SUSPENDABLE = inspect.CO_GENERATOR | inspect.CO_COROUTINE | inspect.CO_ASYNC_GENERATOR


class NewList:
    """A list this code built and no other code has seen: its items are still stack values."""

    def __init__(self, items: List[Any]) -> None:
        #: The stack values in the list, in order.
        self.items = items
        #: False once an item of unknown length was added (``[*x]``): positions are unknown.
        self.exact = True

    def __repr__(self) -> str:
        return "NewList(%r)" % (self.items,)


def decompile_transformed(code: CodeType, *, indent: int = 4) -> str:
    """Source of a ``def`` that does what ``code`` does; DecompilationError when there is none.

    ``code`` is machine-made bytecode, e.g. a torch.compile cache entry's transformed code.
    """
    if not isinstance(code, CodeType):
        raise TypeError("decompile_transformed() needs a code object, not %s" % type(code).__name__)
    if code.co_flags & _SUSPENDABLE:
        raise DecompilationError("generators and coroutines are not machine-decompiled", code_name=code.co_name)
    try:
        node = MachineDecompiler(code).function()
        source = unparse(ast.Module(body=[node], type_ignores=[]), indent=indent)
    except DecompilationError:
        raise
    except Exception as err:  # a gap in the decompiler must never look like a user error
        raise DecompilationError("internal error (%s: %s)" % (type(err).__name__, err),
                                 code_name=code.co_name) from err
    try:
        compile(source, code.co_filename, "exec")
    except SyntaxError as err:
        raise DecompilationError("produced invalid source (%s)" % err.msg, code_name=code.co_name) from None
    return source


# --------------------------------------------------------------------------- what may wait


def is_pure(node: Any) -> bool:
    """Whether evaluating ``node`` later, or twice, cannot change what the program does.

    Names, constants, and displays and slices of them. Subscripting a graph's output with a
    constant is pure too: torch.compile's graphs return plain lists and tuples.
    """
    if isinstance(node, (ast.Name, ast.Constant, v.Marker)):
        return True
    if isinstance(node, (ast.Tuple, ast.List)):
        return all(is_pure(x) for x in node.elts)
    if isinstance(node, ast.Slice):
        return all(x is None or is_pure(x) for x in (node.lower, node.upper, node.step))
    if isinstance(node, ast.Subscript):
        base = node.value
        return (isinstance(base, ast.Name) and base.id.startswith("graph_out_")
                and isinstance(node.slice, ast.Constant))
    return False


def waits_impure(value: Any) -> bool:
    """Whether a waiting value must be spilled before effects (lists built here wait as lists)."""
    return not isinstance(value, NewList) and not is_pure(value)


def names_read(node: Any) -> Set[str]:
    if not isinstance(node, ast.AST):
        return set()
    return {n.id for n in ast.walk(node) if isinstance(n, ast.Name)}


def names_written(stmt: ast.stmt) -> Set[str]:
    targets: List[ast.expr] = []
    if isinstance(stmt, ast.Assign):
        targets = list(stmt.targets)
    elif isinstance(stmt, (ast.AugAssign, ast.AnnAssign)):
        targets = [stmt.target]
    elif isinstance(stmt, ast.Delete):
        targets = list(stmt.targets)
    elif isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        return {stmt.name}
    written = set()
    for target in targets:
        for node in ast.walk(target):
            if isinstance(node, ast.Name) and isinstance(node.ctx, (ast.Store, ast.Del)):
                written.add(node.id)
    return written


def has_effects(stmt: ast.stmt) -> bool:
    """Whether running ``stmt`` may do more than bind or unbind local names."""
    if isinstance(stmt, ast.Delete):
        return not all(isinstance(t, ast.Name) for t in stmt.targets)
    if isinstance(stmt, ast.Assign):
        return not (all(isinstance(t, ast.Name) for t in stmt.targets) and is_pure(stmt.value))
    return True


def constant_index(node: Any) -> Optional[int]:
    if isinstance(node, ast.Constant) and type(node.value) is int:
        return node.value
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        inner = constant_index(node.operand)
        return None if inner is None else -inner
    return None


def constant_slice(node: Any) -> Optional[slice]:
    """A ``slice`` for a slice node whose bounds are int constants or None."""
    if not isinstance(node, ast.Slice):
        return None
    parts = []
    for part in (node.lower, node.upper, node.step):
        if part is None or (isinstance(part, ast.Constant) and part.value is None):
            parts.append(None)
            continue
        index = constant_index(part)
        if index is None:
            return None
        parts.append(index)
    if parts[2] is not None and parts[2] != 1:
        return None
    return slice(parts[0], parts[1])


# --------------------------------------------------------------------------- the simulator


class MachineSimulator(Simulator):
    """`Simulator` with spilling and `NewList`s, for code with no source shape."""

    def __init__(self, code: CodeType) -> None:
        super().__init__(code, self.nested_value)
        #: Names the code already uses; temporaries avoid them.
        self.taken = set(code.co_varnames) | set(code.co_names) | set(code.co_cellvars) | set(code.co_freevars)
        self.counter = 0

    # -- temporaries ------------------------------------------------------------------------------
    def temp(self) -> str:
        while True:
            candidate = "__stack_%d" % self.counter
            self.counter += 1
            if candidate not in self.taken:
                self.taken.add(candidate)
                return candidate

    def pending(self, state: State) -> Iterator[Tuple[list, int, Any]]:
        """Every waiting value, in the order the bytecode computed it: (container, index, value)."""
        seen: Set[int] = set()

        def walk(container: list) -> Iterator[Tuple[list, int, Any]]:
            for index, value in enumerate(container):
                yield container, index, value
                if isinstance(value, NewList) and id(value) not in seen:
                    seen.add(id(value))
                    yield from walk(value.items)

        yield from walk(state.stack)

    def replace(self, state: State, old: Any, new: Any) -> None:
        """Put ``new`` wherever ``old`` (the same object) waits."""
        seen: Set[int] = set()

        def walk(container: list) -> None:
            for index, value in enumerate(container):
                if value is old:
                    container[index] = new
                elif isinstance(value, NewList) and id(value) not in seen:
                    seen.add(id(value))
                    walk(value.items)

        walk(state.stack)

    def count(self, state: State, obj: Any) -> int:
        """How many times ``obj`` waits, on the stack or in a waiting list."""
        seen: Set[int] = set()
        total = 0

        def walk(container: list) -> None:
            nonlocal total
            for value in container:
                if value is obj:
                    total += 1
                if isinstance(value, NewList) and id(value) not in seen:
                    seen.add(id(value))
                    walk(value.items)

        walk(state.stack)
        return total

    def spill(self, state: State, value: Any, target: Optional[str] = None) -> ast.Name:
        """Evaluate ``value`` now into a temporary (or ``target``); it waits as that name from now on.

        Impure values computed before it are spilled first, so the order stays the bytecode's.
        """
        self.spill_before(state, value)
        ident = target or self.temp()
        if isinstance(value, NewList):
            node: ast.expr = ast.List(elts=[self.expr_of(state, x) for x in value.items], ctx=ast.Load())
        else:
            node = self.expr_of(state, value)
        state.stmts.append(ast.Assign(targets=[name(ident, True)], value=node, type_comment=None))
        result = name(ident)
        self.replace(state, value, result)
        return result

    def spill_before(self, state: State, stop: Any) -> None:
        """Spill every impure waiting value computed before ``stop``."""
        while True:
            for container, index, value in self.pending(state):
                if value is stop:
                    return
                if waits_impure(value):
                    self.spill(state, value)
                    break
            else:
                return

    def spill_impure(self, state: State) -> None:
        """Spill every impure waiting value."""
        while True:
            for container, index, value in self.pending(state):
                if waits_impure(value):
                    self.spill(state, value)
                    break
            else:
                return

    def emit(self, state: State, stmt: ast.stmt) -> None:
        effects = has_effects(stmt)
        written = names_written(stmt)
        while True:
            for container, index, value in self.pending(state):
                if (effects and waits_impure(value)) or (written and names_read(value) & written):
                    self.spill(state, value)
                    break
            else:
                break
        state.stmts.append(stmt)

    # -- values -----------------------------------------------------------------------------------
    def nested_value(self, func: v.Function, target: Any = None, iterator: Optional[v.Iterator] = None) -> Any:
        if target is None and iterator is None and func.code.co_name.isidentifier():
            raise DecompilationError("function used as a value")
        return nested(func, target, iterator)

    def expr(self, value: Any) -> ast.expr:
        if isinstance(value, NewList):
            return ast.List(elts=[self.expr(x) for x in value.items], ctx=ast.Load())
        return super().expr(value)

    def expr_of(self, state: State, value: Any) -> ast.expr:
        """``value`` as an expression, once it has left the stack."""
        if isinstance(value, NewList):
            if self.count(state, value):
                # Still reachable elsewhere: make it a real list, under a name.
                return self.spill(state, value)
            return ast.List(elts=[self.expr_of(state, x) for x in value.items], ctx=ast.Load())
        if isinstance(value, v.Function):
            return self.define(state, value)
        return super().expr(value)

    def pop_expr(self, state: State) -> ast.expr:
        return self.expr_of(state, state.pop())

    def define(self, state: State, func: v.Function) -> ast.Name:
        """A function made here and used as a value: define it under its own name first."""
        ident = func.code.co_name
        if not ident.isidentifier() or ident in self.code.co_varnames or ident in self.code.co_cellvars:
            raise DecompilationError("function %r used as a value" % ident)
        self.emit(state, nested(func, name(ident, True)))
        return name(ident)

    # -- statements -------------------------------------------------------------------------------
    def op_POP_TOP(self, ins: Instr, state: State) -> None:
        self.discard(state, state.pop())

    def discard(self, state: State, value: Any) -> None:
        if isinstance(value, NewList):
            if not self.count(state, value):
                for item in value.items:
                    self.discard(state, item)
            return
        if isinstance(value, v.Marker) or is_pure(value):
            return
        self.emit(state, ast.Expr(value=value))

    def store(self, state: State, target: ast.expr) -> None:
        value = state.pop()
        if isinstance(value, v.Inplace):
            if not ast.dump(as_store(value.target)) == ast.dump(as_store(target)):
                raise DecompilationError("in-place result stored elsewhere")
            self.emit(state, ast.AugAssign(target=as_store(target), op=value.op, value=value.value))
            return
        if isinstance(value, v.Function) and isinstance(target, ast.Name) and target.id == value.code.co_name:
            self.emit(state, nested(value, target))
            return
        if isinstance(value, NewList) and isinstance(target, ast.Name) and self.count(state, value):
            self.spill(state, value, target.id)
            return
        if isinstance(value, v.Marker) and not isinstance(value, v.Function):
            raise DecompilationError("%s stored" % type(value).__name__)
        self.emit(state, ast.Assign(targets=[as_store(target)], value=self.expr_of(state, value),
                                    type_comment=None))

    def op_DELETE_FAST(self, ins: Instr, state: State) -> None:
        self.emit(state, ast.Delete(targets=[ast.Name(id=ins.arg, ctx=ast.Del())]))

    op_DELETE_NAME = op_DELETE_GLOBAL = op_DELETE_DEREF = op_DELETE_FAST

    def op_RETURN_VALUE(self, ins: Instr, state: State) -> None:
        value = self.pop_expr(state)
        self.emit(state, ast.Return(value=value))

    # -- stack shuffles ---------------------------------------------------------------------------
    def op_COPY(self, ins: Instr, state: State) -> None:
        if len(state.stack) < ins.arg:
            raise DecompilationError("stack underflow")
        value = state.stack[-ins.arg]
        if not isinstance(value, NewList) and not is_pure(value):
            value = self.spill(state, value)
        state.push(value)

    def copy_to_name(self, state: State, ident: str) -> None:
        """``COPY 1`` + ``STORE_FAST name``: evaluate the value into ``name`` and keep using it."""
        value = state.stack[-1]
        above_reads = False
        for container, index, item in self.pending(state):
            if item is not value and ident in names_read(item):
                above_reads = True
        if above_reads or isinstance(value, v.Marker):
            raise DecompilationError("copy stored over a waiting value")
        if isinstance(value, NewList) or not is_pure(value):
            self.spill(state, value, ident)
            return
        self.emit(state, ast.Assign(targets=[name(ident, True)], value=value, type_comment=None))

    def shuffle_window(self, state: State, n: int) -> None:
        """Before values are reordered: spill if two of them (or their items) have effects."""
        if len(state.stack) < n:
            raise DecompilationError("stack underflow")
        window = State(state.stack[-n:])
        impure = [x for _, _, x in self.pending(window) if waits_impure(x)]
        if len(impure) >= 2:
            self.spill_before(state, impure[-1])
            self.spill(state, impure[-1])

    def op_SWAP(self, ins: Instr, state: State) -> None:
        self.shuffle_window(state, ins.arg)
        state.stack[-1], state.stack[-ins.arg] = state.stack[-ins.arg], state.stack[-1]

    def op_ROT(self, ins: Instr, state: State) -> None:
        self.shuffle_window(state, ins.arg)
        top = state.stack.pop()
        state.stack.insert(len(state.stack) - ins.arg + 1, top)

    # -- lists built here -------------------------------------------------------------------------
    def op_BUILD_LIST(self, ins: Instr, state: State) -> None:
        state.push(NewList(state.popn(ins.arg)))

    def grows(self, state: State, target: NewList, items: List[Any]) -> None:
        """``items`` (computed last) join ``target``: impure values waiting above it go first."""
        if all(is_pure(x) or isinstance(x, NewList) for x in items):
            return
        position = next((i for i, x in enumerate(state.stack) if x is target or self.holds(x, target)),
                        len(state.stack))
        above = State(state.stack[position + 1:])
        if any(waits_impure(x) for _, _, x in self.pending(above)):
            self.spill_impure(state)

    def holds(self, value: Any, target: NewList) -> bool:
        return isinstance(value, NewList) and any(x is target or self.holds(x, target) for x in value.items)

    def op_LIST_EXTEND(self, ins: Instr, state: State) -> None:
        items = state.pop()
        target = state.stack[-ins.arg]
        if isinstance(target, NewList):
            if isinstance(items, NewList) and items.exact and not self.count(state, items):
                self.grows(state, target, items.items)
                target.items.extend(items.items)
                return
            if isinstance(items, ast.Constant) and isinstance(items.value, tuple):
                target.items.extend(const_expr(x) for x in items.value)
                return
            node = self.expr_of(state, items)
            self.grows(state, target, [node])
            target.items.append(ast.Starred(value=node, ctx=ast.Load()))
            target.exact = False
            return
        self.method_call(state, ins.arg, "extend", items)

    def op_LIST_APPEND(self, ins: Instr, state: State) -> None:
        item = state.pop()
        target = state.stack[-ins.arg]
        if isinstance(target, NewList):
            self.grows(state, target, [item])
            target.items.append(item)
            return
        self.method_call(state, ins.arg, "append", item)

    def method_call(self, state: State, depth: int, method: str, argument: Any) -> None:
        """``target.method(argument)`` on a value that stays on the stack ``depth`` deep."""
        target = state.stack[-depth]
        if isinstance(target, v.Marker) or isinstance(target, NewList):
            raise DecompilationError("%s on an interpreter value" % method)
        arg = self.expr_of(state, argument)
        if not is_pure(target):
            target = self.spill(state, target)
        call = ast.Call(func=ast.Attribute(value=target, attr=method, ctx=ast.Load()), args=[arg], keywords=[])
        self.emit(state, ast.Expr(value=call))

    def op_DICT_UPDATE(self, ins: Instr, state: State) -> None:
        target = state.stack[-ins.arg - 1]
        if isinstance(target, ast.Dict) and self.count(state, target) == 1:
            super().op_DICT_UPDATE(ins, state)
            return
        self.method_call(state, ins.arg, "update", state.pop())

    def op_BINARY_SUBSCR(self, ins: Instr, state: State) -> None:
        index = state.pop()
        obj = state.stack[-1]
        if isinstance(obj, NewList) and obj.exact:
            position = constant_index(index)
            part = constant_slice(index)
            if position is not None and -len(obj.items) <= position < len(obj.items):
                state.pop()
                self.take(state, obj, lambda items: items[position])
                return
            if part is not None:
                state.pop()
                self.take(state, obj, lambda items: NewList(items[part]))
                return
        index = self.expr_of(state, index)
        obj = self.pop_expr(state)
        state.push(ast.Subscript(value=obj, slice=index, ctx=ast.Load()))

    def take(self, state: State, source: NewList, pick: Any) -> None:
        """Push ``pick(source.items)``: items taken from ``source``, which left the stack.

        An impure item must not be evaluated twice (``source`` still waits elsewhere) nor lose
        its evaluation (left behind in a list nobody sees any more), so such items are spilled
        first, in list order.
        """
        alive = self.count(state, source) > 0
        impure = [x for x in source.items if not isinstance(x, NewList) and not is_pure(x)]
        if impure:
            chosen = pick(source.items)
            chosen_items = chosen.items if isinstance(chosen, NewList) else [chosen]
            dropped = any(not any(x is c for c in chosen_items) for x in impure)
            if alive or dropped:
                state.push(source)  # reachable while its items are spilled
                for item in impure:
                    self.spill(state, item)
                state.pop()
        state.push(pick(source.items))

    def op_STORE_SUBSCR(self, ins: Instr, state: State) -> None:
        index = state.pop()
        obj = state.pop()
        if isinstance(obj, NewList) and obj.exact:
            position = constant_index(index)
            part = constant_slice(index)
            value = state.stack[-1]
            if position is not None and -len(obj.items) <= position < len(obj.items):
                state.pop()
                self.overwrite(state, obj, slice(position, position + 1 or None), [value])
                return
            if part is not None and isinstance(value, NewList) and value.exact:
                state.pop()
                self.overwrite(state, obj, part, list(value.items))
                return
        index = self.expr_of(state, index)
        target_obj = self.expr_of(state, obj)
        self.store(state, ast.Subscript(value=target_obj, slice=index, ctx=ast.Store()))

    def overwrite(self, state: State, target: NewList, part: slice, items: List[Any]) -> None:
        """``target[part] = items`` on a list built here (``target`` has left the stack)."""
        state.push(target)  # reachable while values are spilled
        for old in target.items[part]:
            if not isinstance(old, NewList) and not is_pure(old) and self.count(state, old) == 1:
                self.spill(state, old)  # its evaluation must not be lost
        for item in items:
            if not isinstance(item, NewList) and not is_pure(item) and self.count(state, item):
                self.spill(state, item)  # about to wait in two places
        items = [target.items[i] if False else item for i, item in enumerate(items)]
        state.pop()
        self.grows(state, target, items)
        target.items[part] = items

    def op_DELETE_SUBSCR(self, ins: Instr, state: State) -> None:
        index = state.pop()
        obj = state.pop()
        if isinstance(obj, NewList) and obj.exact:
            position = constant_index(index)
            part = constant_slice(index)
            if position is not None and -len(obj.items) <= position < len(obj.items):
                self.overwrite(state, obj, slice(position, position + 1 or None), [])
                return
            if part is not None:
                self.overwrite(state, obj, part, [])
                return
        index = self.expr_of(state, index)
        target_obj = self.expr_of(state, obj)
        self.emit(state, ast.Delete(targets=[ast.Subscript(value=target_obj, slice=index, ctx=ast.Del())]))

    def op_LIST_TO_TUPLE(self, ins: Instr, state: State) -> None:
        items = state.pop()
        if isinstance(items, NewList) and not self.count(state, items):
            state.push(ast.Tuple(elts=[self.expr_of(state, x) for x in items.items], ctx=ast.Load()))
            return
        state.push(ast.Call(func=name("tuple"), args=[self.expr_of(state, items)], keywords=[]))

    def op_CALL_FUNCTION_EX(self, ins: Instr, state: State) -> None:
        position = len(state.stack) - (2 if ins.arg[0] is not False else 1)
        star = state.stack[position]
        if isinstance(star, NewList) and star.exact and self.count(state, star) == 1:
            # ``f(*[a, b])`` is ``f(a, b)``: spell the items as positional arguments.
            state.stack[position] = v.NULL  # out of sight while its items become expressions
            state.stack[position] = ast.Tuple(elts=[self.expr_of(state, x) for x in star.items], ctx=ast.Load())
        super().op_CALL_FUNCTION_EX(ins, state)

    def op_UNPACK_SEQUENCE(self, ins: Instr, state: State) -> None:
        value = state.pop()
        if isinstance(value, NewList) and value.exact and len(value.items) == ins.arg and not self.count(state, value):
            for item in reversed(value.items):
                state.push(item)
            return
        node = self.expr_of(state, value)
        temps = [self.temp() for _ in range(ins.arg)]
        self.emit(state, ast.Assign(targets=[ast.Tuple(elts=[name(t, True) for t in temps], ctx=ast.Store())],
                                    value=node, type_comment=None))
        for ident in reversed(temps):
            state.push(name(ident))

    def op_UNPACK_EX(self, ins: Instr, state: State) -> None:
        before, after = ins.arg & 0xFF, ins.arg >> 8
        node = self.pop_expr(state)
        temps = [self.temp() for _ in range(before + 1 + after)]
        elts: List[ast.expr] = [name(t, True) for t in temps]
        elts[before] = ast.Starred(value=elts[before], ctx=ast.Store())
        self.emit(state, ast.Assign(targets=[ast.Tuple(elts=elts, ctx=ast.Store())], value=node, type_comment=None))
        for ident in reversed(temps):
            state.push(name(ident))


# --------------------------------------------------------------------------- control flow


class MachineDecompiler:
    """Walk the code's paths from the start, copying joins, into one ``def``."""

    def __init__(self, code: CodeType) -> None:
        self.code = code
        self.instrs = canonical_instructions(code)
        for ins in self.instrs:
            if ins.op in ("SETUP_FINALLY", "SETUP_WITH", "POP_BLOCK"):
                raise DecompilationError("block-stack handlers in machine-made code", code_name=code.co_name,
                                         offset=ins.offset, opname=ins.raw or ins.op)
        self.index: Dict[int, int] = {ins.offset: i for i, ins in enumerate(self.instrs)}
        self.sim = MachineSimulator(code)
        self.budget = STEP_BUDGET_FACTOR * max(len(self.instrs), 16)

    def function(self) -> ast.FunctionDef:
        body = self.path(0, State())
        if body and isinstance(body[-1], ast.Return) and isinstance(body[-1].value, ast.Constant) \
                and body[-1].value.value is None:
            body.pop()
        node = ast.FunctionDef(name=self.code.co_name, args=arguments(self.code), body=body or [ast.Pass()],
                               decorator_list=[], returns=None, type_comment=None)
        if hasattr(ast, "TypeAlias"):
            node.type_params = []
        return node

    def path(self, position: int, state: State) -> List[ast.stmt]:
        """Statements from instruction ``position`` to the end of every path leaving it."""
        instrs = self.instrs
        while True:
            if position >= len(instrs):
                raise DecompilationError("code runs off its end", code_name=self.code.co_name)
            self.budget -= 1
            if self.budget < 0:
                raise DecompilationError("too many paths through machine-made code", code_name=self.code.co_name)
            ins = instrs[position]
            if ins.handler is not None:
                position = self.protected(position, state)
                continue
            if ins.op == "JUMP":
                position = self.forward(ins)
                continue
            if ins.op in POP_JUMPS:
                self.branch(ins, position, state)
                return state.stmts
            if (ins.op == "COPY" and ins.arg == 1 and position + 1 < len(instrs)
                    and instrs[position + 1].op in ("STORE_FAST", "STORE_DEREF")):
                self.sim.copy_to_name(state, instrs[position + 1].arg)
                position += 2
                continue
            self.sim.step(ins, state)
            if ins.op in ("RETURN_VALUE", "RAISE_VARARGS", "RERAISE"):
                return state.stmts
            position += 1

    def protected(self, position: int, state: State) -> int:
        """A run of instructions with an exception handler: ``try: ... except BaseException: ...; raise``.

        Dynamo protects the instruction at a graph break inside a ``with`` block this way: the
        handler calls the context manager's ``__exit__`` and re-raises. Values the run leaves on
        the stack are evaluated inside the ``try``. Returns where the code goes on after the run.
        """
        sim = self.sim
        handler = self.instrs[position].handler
        end = position
        while end < len(self.instrs) and self.instrs[end].handler == handler:
            if self.instrs[end].op in POP_JUMPS or self.instrs[end].op in ("JUMP", "RETURN_VALUE"):
                raise DecompilationError("control flow inside a protected run", code_name=self.code.co_name,
                                         offset=self.instrs[end].offset)
            end += 1
        sim.spill_impure(state)
        outer, state.stmts = state.stmts, []
        for ins in self.instrs[position:end]:
            self.budget -= 1
            sim.step(ins, state)
        sim.spill_impure(state)
        body, state.stmts = state.stmts, outer
        cleanup = self.handler_body(handler.target)
        if not body:
            body = [ast.Pass()]
        state.stmts.append(ast.Try(
            body=body,
            handlers=[ast.ExceptHandler(type=name("BaseException"), name=None, body=cleanup)],
            orelse=[], finalbody=[]))
        return end

    def handler_body(self, offset: int) -> List[ast.stmt]:
        """The statements of a handler that ends by re-raising what it caught."""
        position = self.index.get(offset)
        if position is None or self.instrs[position].op != "PUSH_EXC_INFO":
            raise DecompilationError("unknown exception handler shape", code_name=self.code.co_name, offset=offset)
        state = State([v.Exc("prev"), v.Exc("exc")])
        for ins in self.instrs[position + 1:]:
            self.budget -= 1
            if ins.op == "RERAISE":
                state.stmts.append(ast.Raise(exc=None, cause=None))
                return state.stmts
            if ins.op in POP_JUMPS or ins.op in ("JUMP", "RETURN_VALUE", "POP_EXCEPT", "PUSH_EXC_INFO"):
                break
            self.sim.step(ins, state)
        raise DecompilationError("exception handler does not re-raise", code_name=self.code.co_name, offset=offset)

    def forward(self, ins: Instr) -> int:
        target = self.index.get(ins.target)
        if target is None or ins.target <= ins.offset:
            raise DecompilationError("backward jump (a loop) in machine-made code", code_name=self.code.co_name,
                                     offset=ins.offset, opname=ins.raw or ins.op)
        return target

    def branch(self, ins: Instr, position: int, state: State) -> None:
        sim = self.sim
        condition = state.pop()
        test = sim.expr_of(state, condition)
        if not is_pure(test):
            sim.spill_impure(state)
        if ins.op == "POP_JUMP_IF_NONE":
            test = ast.Compare(left=test, ops=[ast.Is()], comparators=[ast.Constant(value=None)])
        elif ins.op == "POP_JUMP_IF_NOT_NONE":
            test = ast.Compare(left=test, ops=[ast.IsNot()], comparators=[ast.Constant(value=None)])
        jumped = self.path(self.forward(ins), self.fork(state))
        fell = self.path(position + 1, self.fork(state))
        if ins.op == "POP_JUMP_IF_FALSE":
            jumped, fell = fell, jumped
        # ``jumped`` now runs when the test holds.
        if ends(jumped):
            state.stmts.append(ast.If(test=test, body=jumped, orelse=[]))
            state.stmts.extend(fell)
        else:
            state.stmts.append(ast.If(test=test, body=jumped, orelse=fell))

    def fork(self, state: State) -> State:
        memo = {id(v.NULL): v.NULL}
        return State(copy.deepcopy(state.stack, memo))


def ends(stmts: List[ast.stmt]) -> bool:
    return bool(stmts) and isinstance(stmts[-1], (ast.Return, ast.Raise))
