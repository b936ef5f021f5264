"""The simulator that keeps every waiting value's effects in bytecode order by spilling."""
import ast
from types import CodeType, FunctionType
from typing import Any, Callable, Dict, FrozenSet, Iterator, List, Optional, Set, Tuple

from framescope.decompiler.frontend.instructions import Instr
from framescope.decompiler.function import nested
from framescope.decompiler.machine.values import (
    Cell, NewList, arguments_none, assign, has_effects, is_pure, names_read, names_written,
    spellable, unstarred,
)
from framescope.decompiler.simulate import marks
from framescope.decompiler.simulate import values as v
from framescope.decompiler.simulate.simulator import Simulator
from framescope.decompiler.simulate.state import State, as_store, name
from framescope.errors import DecompilationError


class SpillingSimulator(Simulator):
    """`Simulator` with spilling and `NewList`s, for code with no source shape.

    It keeps one invariant: every *impure* waiting value (one with effects of its own, see
    `is_pure`) waits in exactly one place, and walking the stack from the bottom, a list
    built here at its first place, meets them in the order the bytecode computed them
    (`pending`). Then a statement may run once every impure waiting value is spilled
    (`emit`), and a value popped from the top was computed after everything still waiting.
    Operations that only move values at decompile time (`rearrange`: shuffles, copies,
    ``UNPACK_SEQUENCE`` and subscripts of lists built here...) check that they keep it, and
    spill from the earliest impure value until they do.
    """

    keeps_starred = False

    def __init__(self, code: CodeType, frozen: Set[str] = frozenset(),
                 constant_name: Optional[Callable[[object], str]] = None) -> None:
        super().__init__(code, self.nested_value)
        #: Names globals bound to constants no literal spells (see `decompile_transformed`).
        self.constant_name = constant_name
        #: Locals whose constant subscripts are pure (`frozen_outputs`).
        self.frozen = frozen
        #: Names the code already uses; temporaries avoid them.
        self.taken = set(code.co_varnames) | set(code.co_names) | set(code.co_cellvars) | set(code.co_freevars)
        self.counter = 0
        #: The temporaries made so far.
        self.temps: Set[str] = set()
        #: id(value) -> (value, the names it reads, whether it is impure), for waiting values:
        #: each statement asks about every value waiting (hundreds before a graph call), and a
        #: value's tree never changes once built.
        self._facts: Dict[int, Tuple[Any, FrozenSet[str], bool]] = {}
        #: id(state) -> the state's settled run: see `settled`.
        self._settled: Dict[int, SettledRun] = {}

    # -- what waits -------------------------------------------------------------------------------
    def pure(self, value: Any) -> bool:
        return is_pure(value, self.frozen)

    def impure(self, value: Any) -> bool:
        """Whether a waiting value has effects of its own (a list built here waits as its items)."""
        return self.facts(value)[2]

    def reads(self, value: Any) -> FrozenSet[str]:
        """The names a waiting value reads."""
        return self.facts(value)[1]

    def facts(self, value: Any) -> Tuple[Any, FrozenSet[str], bool]:
        known = self._facts.get(id(value))
        if known is None or known[0] is not value:
            impure = not isinstance(value, NewList) and not is_pure(value, self.frozen)
            known = self._facts[id(value)] = (value, frozenset(names_read(value)), impure)
        return known

    def pending(self, state: State, start: int = 0) -> Iterator[Tuple[Optional[NewList], int, Any]]:
        """Every waiting value in bytecode order: (the list it waits in or None for the stack,
        index, value); from stack slot ``start`` on (below it, see `settled`)."""
        seen: Set[int] = set()

        def walk(owner: Optional[NewList], container: list, first: int
                 ) -> Iterator[Tuple[Optional[NewList], int, Any]]:
            for index in range(first, len(container)):
                value = container[index]
                yield owner, index, value
                if isinstance(value, NewList) and id(value) not in seen:
                    seen.add(id(value))
                    yield from walk(value, value.items, 0)

        yield from walk(None, state.stack, start)

    def settled(self, state: State) -> Tuple[int, Dict[str, int]]:
        """The length of the run of pure values at the bottom of the stack, and how often each
        name is read in it. The scans for impure values start above it: before a graph call
        hundreds of inputs wait there, and every instruction would otherwise look at each of
        them again. A list built here joins the run while its items are pure (after a graph
        call Dynamo pushes the arguments of every side effect it replays, a list among the
        first, before it makes the calls)."""
        run = self.settled_run(state)
        return len(run.values), run.readers

    def settled_run(self, state: State) -> "SettledRun":
        """The settled run of ``state``, brought up to date. It is remembered per state and
        checked against the stack each time (the same objects in the same slots, each list
        with the same items)."""
        run = self._settled.get(id(state))
        if run is None or run.state is not state:
            run = self._settled[id(state)] = SettledRun(state)
        run.truncate(run.still_held())
        stack = state.stack
        while len(run.values) < len(stack):
            value = stack[len(run.values)]
            reads = self.settled_reads(value)
            if reads is None:
                break
            run.append(value, reads)
        return run

    def settled_reads(self, value: Any) -> Optional[FrozenSet[str]]:
        """The names ``value`` reads if it may join a settled run; None if it may not."""
        if not isinstance(value, NewList):
            return None if self.impure(value) else self.reads(value)
        if any(isinstance(x, NewList) or self.impure(x) for x in value.items):
            return None
        return frozenset().union(*(self.reads(x) for x in value.items))

    def scan_start(self, state: State, obj: Any) -> int:
        """Where on the stack the places ``obj`` waits in begin: above the settled run unless it
        is pure or a list in the run."""
        if not isinstance(obj, NewList) and not self.impure(obj):
            return 0
        run = self.settled_run(state)
        return 0 if id(obj) in run.lists else len(run.values)

    def unsettled(self, state: State) -> Iterator[Tuple[Optional[NewList], int, Any]]:
        """The waiting values that may be impure: `pending` above the settled run."""
        return self.pending(state, self.settled(state)[0])

    def read_while_waiting(self, state: State, ident: str, value: Any) -> bool:
        """Whether a waiting value other than ``value`` reads ``ident``."""
        start, readers = self.settled(state)
        if readers.get(ident):
            start = 0
        return any(ident in self.reads(x) for _, _, x in self.pending(state, start) if x is not value)

    def impure_ids(self, state: State) -> List[int]:
        return [id(x) for _, _, x in self.unsettled(state) if self.impure(x)]

    def inside(self, value: NewList) -> List[Any]:
        """The values in ``value`` and in the lists in it, in order."""
        return [x for _, _, x in self.pending(State([value]))][1:]

    def replace(self, state: State, old: Any, new: Any) -> None:
        """Put ``new`` wherever ``old`` (the same object) waits."""
        for owner, index, value in list(self.pending(state, self.scan_start(state, old))):
            if value is old:
                (owner.items if owner is not None else state.stack)[index] = new

    def count(self, state: State, obj: Any) -> int:
        """How many times ``obj`` waits, on the stack or in a waiting list."""
        return sum(1 for _, _, value in self.pending(state, self.scan_start(state, obj)) if value is obj)

    # -- spilling ---------------------------------------------------------------------------------
    def temp(self) -> str:
        while True:
            candidate = "__stack_%d" % self.counter
            self.counter += 1
            if candidate not in self.taken:
                self.taken.add(candidate)
                self.temps.add(candidate)
                return candidate

    def spill(self, state: State, value: Any, target: Optional[str] = None) -> Any:
        """Evaluate ``value`` (waiting somewhere) now into a temporary, or ``target``; it waits as
        that name from now on. If evaluating it has effects, impure values computed before it
        are spilled first.
        """
        if target is not None and self.read_while_waiting(state, target, value):
            # Waiting values read the old ``target``: they are spilled before it changes.
            temp = self.spill(state, value)
            self.emit(state, assign(target, temp))
            return temp
        if isinstance(value, v.Function):
            return self.define(state, value)
        if self.impure(value) or (isinstance(value, NewList) and any(self.impure(x) for x in self.inside(value))):
            self.spill_before(state, value)
        ident = target or self.temp()
        result: Any = name(ident)
        if isinstance(value, NewList):
            node: ast.expr = self.display(state, value)
        elif isinstance(value, ast.Starred):
            # ``*x`` in a list built here reads x now: into a list of its own, which then waits
            # as ``*temporary``. The list itself keeps waiting.
            node = ast.List(elts=[value], ctx=ast.Load())
            result = ast.Starred(value=result, ctx=ast.Load())
            marks.mark(result, marks.FIXED)
        else:
            node = self.expr(value)
        state.stmts.append(assign(ident, node))
        self.replace(state, value, result)
        return result

    def spill_before(self, state: State, stop: Any) -> None:
        """Spill every impure waiting value computed before ``stop``."""
        while True:
            for _, _, value in self.unsettled(state):
                if value is stop:
                    return
                if self.impure(value):
                    self.spill(state, value)
                    break
            else:
                return

    def spill_impure(self, state: State) -> None:
        """Spill every impure waiting value."""
        while self.spill_first(state):
            pass

    def spill_first(self, state: State) -> bool:
        """Spill the earliest impure waiting value; False if there is none."""
        for _, _, value in self.unsettled(state):
            if self.impure(value):
                self.spill(state, value)
                return True
        return False

    def emit(self, state: State, stmt: ast.stmt) -> None:
        """Append ``stmt``, which runs after everything waiting was computed."""
        effects = has_effects(stmt, self.frozen)
        written = names_written(stmt)
        while True:
            start, readers = self.settled(state)
            if any(readers.get(ident) for ident in written):
                start = 0  # a settled value reads a name the statement binds
            for _, _, value in self.pending(state, start):
                if (effects and self.impure(value)) or (written and self.reads(value) & written):
                    self.spill(state, value)
                    break
            else:
                break
        state.stmts.append(stmt)

    def rearrange(self, state: State, apply: Callable[[], None], undo: Callable[[], None]) -> None:
        """Run ``apply``, a change of the stack or of lists built here that emits no code, if every
        impure waiting value still waits once and in the same order after it; if not, ``undo`` it,
        spill the earliest impure value, and try again.
        """
        while True:
            before = self.impure_ids(state)
            apply()
            after = self.impure_ids(state)
            if after == before and len(set(after)) == len(after):
                return
            undo()
            if not self.spill_first(state):
                raise DecompilationError("values reordered")  # unreachable: nothing impure waits

    # -- values -----------------------------------------------------------------------------------
    def nested_value(self, func: v.Function, target: Any = None, iterator: Optional[v.Iterator] = None) -> Any:
        if target is None and iterator is None and func.code.co_name.isidentifier():
            return self.made_function(func)
        return nested(func, target, iterator)

    def made_function(self, func: v.Function) -> ast.expr:
        """A function made from a code object of the code's own (a resume function that torch
        before 2.13 builds in place) as the call that makes it: ``FunctionType(code, globals(),
        name, defaults, closure)``, the type and the code read from globals the caller binds."""
        if self.constant_name is None or func.kwdefaults or func.annotations is not None or func.decorators:
            raise DecompilationError("function used as a value")
        maker = self.constant_name(FunctionType)
        self.taken.add(maker)
        args = [self.expr(func.code), ast.Call(func=name("globals"), args=[], keywords=[]),
                ast.Constant(value=func.code.co_name)]
        args += [self.expr(part) if part else ast.Constant(value=None) for part in (func.defaults, func.closure)]
        return ast.Call(func=name(maker), args=args, keywords=[])

    def op_LOAD_CONST(self, ins: Instr, state: State) -> None:
        value = ins.arg
        if isinstance(value, CodeType) or spellable(value):
            super().op_LOAD_CONST(ins, state)
            return
        if self.constant_name is None:
            raise DecompilationError("a constant of type %s has no source spelling" % type(value).__name__)
        ident = self.constant_name(value)
        self.taken.add(ident)
        state.push(name(ident))

    def op_LOAD_CLOSURE(self, ins: Instr, state: State) -> None:
        state.push(Cell(ins.arg))

    def expr(self, value: Any) -> ast.expr:
        if isinstance(value, CodeType):
            # A code object passed as a value (Dynamo rebuilding a nested function): no literal.
            if self.constant_name is None:
                raise DecompilationError("a code object used as a value has no source spelling")
            ident = self.constant_name(value)
            self.taken.add(ident)
            return name(ident)
        if isinstance(value, Cell):
            # The cell object itself, not its value: the only source spelling is the closure
            # of a function that uses the variable.
            getter = ast.Lambda(args=arguments_none(), body=name(value.name))
            closure = ast.Attribute(value=getter, attr="__closure__", ctx=ast.Load())
            return ast.Subscript(value=closure, slice=ast.Constant(value=0), ctx=ast.Load())
        if isinstance(value, NewList):
            # Every use of a list built here goes through `settle`; one that does not is a gap.
            raise DecompilationError("list built here used where it is not tracked")
        return super().expr(value)

    def display(self, state: State, value: NewList) -> ast.List:
        """A waiting list built here as a display; lists in it that also wait elsewhere are named first."""
        while True:
            shared = next((x for x in self.inside(value) if isinstance(x, NewList) and self.count(state, x) > 1),
                          None)
            if shared is None:
                return self.build(value)
            self.spill(state, shared)

    def build(self, value: NewList) -> ast.List:
        return ast.List(elts=[self.build(x) if isinstance(x, NewList) else self.expr(x) for x in value.items],
                        ctx=ast.Load())

    def settle(self, state: State, n: int) -> None:
        """The top ``n`` values are about to be used by one instruction: lists built here among
        them become displays, or names where they also wait elsewhere."""
        if len(state.stack) < n:
            raise DecompilationError("stack underflow")
        for i in range(len(state.stack) - n, len(state.stack)):
            value = state.stack[i]
            if isinstance(value, NewList):
                if self.count(state, value) > 1:
                    self.spill(state, value)
                else:
                    state.stack[i] = self.display(state, value)

    def expr_of(self, state: State, value: Any) -> ast.expr:
        """``value``, which has just left the top of the stack, as an expression."""
        state.push(value)
        self.settle(state, 1)
        value = state.pop()
        if isinstance(value, v.Function):
            return self.define(state, value)
        return self.expr(value)

    def pop_expr(self, state: State) -> ast.expr:
        return self.expr_of(state, state.pop())

    def define(self, state: State, func: v.Function) -> ast.Name:
        """A function made here and used as a value: define it under its own name, which takes
        its place wherever it waits."""
        ident = func.code.co_name
        code = self.code
        if not ident.isidentifier() or ident in code.co_varnames + code.co_cellvars + code.co_names:
            raise DecompilationError("function %r used as a value" % ident)
        if func.defaults or func.kwdefaults or func.annotations is not None:
            self.spill_before(state, func)  # the def evaluates them: after what came before
        for _, _, value in list(self.pending(state)):
            if value is not func and ident in self.reads(value):
                self.spill(state, value)
        state.stmts.append(nested(func, name(ident, True)))
        self.replace(state, func, name(ident))
        return name(ident)

    # -- instructions that use their operands as expressions ---------------------------------------
    def op_CALL(self, ins: Instr, state: State) -> None:
        argc, _, slots = ins.arg
        self.settle(state, argc + slots)
        super().op_CALL(ins, state)

    def op_CALL_KW(self, ins: Instr, state: State) -> None:
        argc, slots = ins.arg
        self.settle(state, argc + slots + 1)
        super().op_CALL_KW(ins, state)

    def op_CALL_FUNCTION_EX(self, ins: Instr, state: State) -> None:
        # ``f(*[a, b])`` is ``f(a, b)``: the simulator spells a list display's items as arguments.
        self.settle(state, 2 if ins.arg[0] is not False else 1)
        super().op_CALL_FUNCTION_EX(ins, state)

    def op_BUILD_TUPLE(self, ins: Instr, state: State) -> None:
        self.settle(state, ins.arg)
        super().op_BUILD_TUPLE(ins, state)

    def op_BUILD_SET(self, ins: Instr, state: State) -> None:
        self.settle(state, ins.arg)
        super().op_BUILD_SET(ins, state)

    def op_BUILD_MAP(self, ins: Instr, state: State) -> None:
        self.settle(state, 2 * ins.arg)
        super().op_BUILD_MAP(ins, state)

    def op_BUILD_CONST_KEY_MAP(self, ins: Instr, state: State) -> None:
        self.settle(state, ins.arg + 1)
        super().op_BUILD_CONST_KEY_MAP(ins, state)

    def op_BUILD_STRING(self, ins: Instr, state: State) -> None:
        self.settle(state, ins.arg)
        super().op_BUILD_STRING(ins, state)

    def op_BUILD_SLICE(self, ins: Instr, state: State) -> None:
        self.settle(state, ins.arg)
        super().op_BUILD_SLICE(ins, state)

    def op_BUILD_UNPACK(self, ins: Instr, state: State) -> None:
        self.settle(state, ins.arg[1])
        super().op_BUILD_UNPACK(ins, state)

    def op_RAISE_VARARGS(self, ins: Instr, state: State) -> None:
        self.settle(state, ins.arg)
        super().op_RAISE_VARARGS(ins, state)

    # -- statements -------------------------------------------------------------------------------
    def op_POP_TOP(self, ins: Instr, state: State) -> None:
        self.discard(state, state.pop())

    def discard(self, state: State, *values: Any) -> None:
        """``values`` left the top of the stack unused: evaluate what they have of effects, once
        each (a list in two of them is one list; one that still waits elsewhere is left alone)."""
        seen: Set[int] = set()

        def drop(value: Any) -> None:
            if isinstance(value, NewList):
                if id(value) not in seen and not self.count(state, value):
                    seen.add(id(value))
                    for item in value.items:
                        drop(item)
                return
            if isinstance(value, v.Inplace):
                raise DecompilationError("in-place operation's result dropped")
            if isinstance(value, v.Marker) or self.pure(value):
                return
            self.emit(state, ast.Expr(value=unstarred(self.expr(value))))

        for value in values:
            drop(value)

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
            self.spill(state, value, target.id)  # every place it waits reads the name from now on
            return
        if isinstance(value, v.Marker) and not isinstance(value, v.Function):
            raise DecompilationError("%s stored" % type(value).__name__)
        self.emit(state, ast.Assign(targets=[as_store(target)], value=self.expr_of(state, value), type_comment=None))

    def op_DELETE_FAST(self, ins: Instr, state: State) -> None:
        self.emit(state, ast.Delete(targets=[ast.Name(id=ins.arg, ctx=ast.Del())]))

    op_DELETE_NAME = op_DELETE_GLOBAL = op_DELETE_DEREF = op_DELETE_FAST

    def op_RETURN_VALUE(self, ins: Instr, state: State) -> None:
        value = self.pop_expr(state)
        # What is left on the stack was computed before the value and is never used.
        for _, _, waiting in list(self.pending(state)):
            if self.impure(waiting) and not isinstance(waiting, v.Function):
                state.stmts.append(ast.Expr(value=unstarred(self.expr(waiting))))
        del state.stack[:]
        state.stmts.append(ast.Return(value=value))

    # -- stack shuffles ---------------------------------------------------------------------------
    def op_COPY(self, ins: Instr, state: State) -> None:
        if len(state.stack) < ins.arg:
            raise DecompilationError("stack underflow")
        self.rearrange(state, lambda: state.push(state.stack[-ins.arg]), state.pop)

    def copy_to_name(self, state: State, ident: str) -> None:
        """``COPY 1`` + ``STORE_FAST name``: evaluate the value into ``name`` and keep using it."""
        value = state.peek(1)
        if isinstance(value, v.Marker):
            raise DecompilationError("%s stored" % type(value).__name__)
        if isinstance(value, NewList) or self.impure(value):
            self.spill(state, value, ident)
            return
        self.emit(state, assign(ident, self.expr(value)))

    def op_SWAP(self, ins: Instr, state: State) -> None:
        n = ins.arg
        if len(state.stack) < n:
            raise DecompilationError("stack underflow")

        def swap() -> None:
            state.stack[-1], state.stack[-n] = state.stack[-n], state.stack[-1]

        self.rearrange(state, swap, swap)

    def op_ROT(self, ins: Instr, state: State) -> None:
        n = ins.arg
        if len(state.stack) < n:
            raise DecompilationError("stack underflow")

        def down() -> None:
            state.stack.insert(len(state.stack) - n, state.stack.pop())

        def up() -> None:
            state.stack.append(state.stack.pop(len(state.stack) - n))

        self.rearrange(state, down, up)


class SettledRun:
    """The run of pure values at the bottom of one state's stack (`SpillingSimulator.settled`)."""

    def __init__(self, state: State) -> None:
        #: The state whose stack it is.
        self.state = state
        #: The values of the run, bottom first.
        self.values: List[Any] = []
        #: The names each of them reads.
        self.reads: List[FrozenSet[str]] = []
        #: How many of them read each name.
        self.readers: Dict[str, int] = {}
        #: id(list built here) -> (its first slot in the run, its items when it joined).
        self.lists: Dict[int, Tuple[int, List[Any]]] = {}

    def still_held(self) -> int:
        """How many of the run's slots the stack still holds unchanged."""
        stack = self.state.stack
        kept = len(self.values)
        if kept > len(stack) or stack[:kept] != self.values:
            kept = _common_prefix(stack, self.values)
        for slot, items in self.lists.values():
            if slot < kept and stack[slot].items != items:
                kept = slot
        return kept

    def truncate(self, length: int) -> None:
        if length >= len(self.values):
            return
        for reads in self.reads[length:]:
            for ident in reads:
                self.readers[ident] -= 1
        del self.values[length:], self.reads[length:]
        self.lists = {key: entry for key, entry in self.lists.items() if entry[0] < length}

    def append(self, value: Any, reads: FrozenSet[str]) -> None:
        if isinstance(value, NewList) and id(value) not in self.lists:
            self.lists[id(value)] = (len(self.values), list(value.items))
        self.values.append(value)
        self.reads.append(reads)
        for ident in reads:
            self.readers[ident] = self.readers.get(ident, 0) + 1


def _common_prefix(stack: List[Any], run: List[Any]) -> int:
    """How many slots at the bottom of ``stack`` still hold ``run``'s values (by bisection:
    each comparison of two slices runs at C speed)."""
    low, high = 0, min(len(stack), len(run))
    while low < high:
        middle = (low + high + 1) // 2
        if stack[:middle] == run[:middle]:
            low = middle
        else:
            high = middle - 1
    return low
