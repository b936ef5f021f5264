"""Decompiling machine-made bytecode: code that no source produced, such as torch.compile's.

The source decompiler (`api.py`) recognises what a compiler makes of statements and checks its
result by recompiling it. Code written by a program (Dynamo's transformed code, its resume
functions) follows no source shape: values are shuffled on the stack (``SWAP``, ``COPY``), lists
are built and sliced to pass values around, and side effects happen while other values wait on
the stack. Recompiling cannot check such code, so this decompiler is correct by construction:

* every value on the symbolic stack stays an expression until something uses it, as in
  `simulate.py`, but before a statement runs, any waiting value that the statement could affect
  or that has effects of its own (a call, an attribute, an operator) is first stored in a
  temporary (*spilled*), so the printed code evaluates everything once and in bytecode order
  (`MachineSimulator` states the invariant this rests on);
* a list that the code builds itself (``BUILD_LIST``) and that nothing else has seen yet is kept
  as a Python list of stack values (`NewList`): indexing, slicing, extending and slice-assigning
  it with constants is done at decompile time, so Dynamo's list juggling disappears from the
  output instead of turning into ``[[()][0]]``-style noise; the list becomes a real list
  expression only when an instruction uses it as a value, under a name if it waits elsewhere too;
* control flow may only go forward (straight-line code with ``if`` branches). Where the two
  arms of a branch meet again with the same values waiting on the stack (names, constants),
  the code after the join is printed once, after the ``if``; elsewhere it is printed in both
  arms. Loops are refused, and so are exception handlers except the
  ``try: ... except BaseException: ...; raise`` that Dynamo puts around a call in a ``with``;
* last, a temporary read once, by the next statement, before anything else there has an
  effect, is put back in its place (`inline_temporaries`).

Anything else raises DecompilationError; callers keep the original bytecode then.
tests/decompiler/test_machine.py checks the result by running it against the bytecode on
random programs.
"""
import ast
import copy
import dis
import inspect
from types import CodeType, FunctionType
from typing import Any, Callable, Dict, Iterator, List, Optional, Sequence, Set, Tuple

from framescope.decompiler.simulate import marks
from framescope.decompiler.simulate import values as v
from framescope.decompiler.function import guarded, nested
from framescope.decompiler.frontend.instructions import POP_JUMPS, Handler, Instr
from framescope.decompiler.frontend.opcodes import canonical_instructions
from framescope.decompiler.simulate.signature import arguments, parameter_names
from framescope.decompiler.simulate.simulator import Simulator, State, as_store, const_expr, make_slice, name
from framescope.decompiler.emit.unparse import unparse
from framescope.errors import DecompilationError

#: How many instructions one code object may take in all its paths (joins are copied per path).
STEP_BUDGET_FACTOR = 16

_SUSPENDABLE = inspect.CO_GENERATOR | inspect.CO_COROUTINE | inspect.CO_ASYNC_GENERATOR


class Cell:
    """The cell of a variable (``LOAD_CLOSURE``), as a closure tuple holds it."""

    def __init__(self, name: str) -> None:
        #: The variable whose cell this is.
        self.name = name


#: Types whose values the printer spells as literals.
LITERAL_TYPES = (type(None), bool, int, float, complex, str, bytes, type(Ellipsis))


def spellable(value: object) -> bool:
    """Whether a constant can be written as a literal (tuples, frozensets and slices of them too)."""
    if type(value) in LITERAL_TYPES:
        return True
    if type(value) in (tuple, frozenset):
        return all(spellable(x) for x in value)
    if type(value) is slice:
        return all(spellable(x) for x in (value.start, value.stop, value.step))
    return False


def arguments_none() -> ast.arguments:
    return ast.arguments(posonlyargs=[], args=[], vararg=None, kwonlyargs=[], kw_defaults=[], kwarg=None,
                         defaults=[])


class NewList:
    """A list this code built and no other code has seen: its items are still stack values."""

    def __init__(self, items: List[Any]) -> None:
        #: The stack values in the list, in order.
        self.items = items
        #: False once an item of unknown length was added (``[*x]``): positions are unknown.
        self.exact = True

    def __repr__(self) -> str:
        return "NewList(%r)" % (self.items,)


def decompile_transformed(
    code: CodeType,
    *,
    indent: int = 4,
    constant_name: Optional[Callable[[object], str]] = None,
    parameters: Optional[Callable[[str], Optional[Sequence[str]]]] = None,
) -> str:
    """Source of a ``def`` that does what ``code`` does; DecompilationError when there is none.

    ``code`` is machine-made bytecode, e.g. a torch.compile cache entry's transformed code.
    Such code may hold constants no literal spells (a ``torch.dtype``, a module's globals):
    ``constant_name(value)`` gives the name of a global the caller binds to that very object,
    and the source reads that name. Without it such code is refused. ``parameters(name)``
    gives the parameter names of the function a global ``name`` holds, when known: a
    temporary passed to it is named after its parameter (a resume function's ``y``).
    """
    if not isinstance(code, CodeType):
        raise TypeError("decompile_transformed() needs a code object, not %s" % type(code).__name__)
    if code.co_flags & _SUSPENDABLE:
        raise DecompilationError("generators and coroutines are not machine-decompiled", code_name=code.co_name)
    source = guarded(_machine_source, code, constant_name, parameters, indent)
    try:
        compile(source, code.co_filename, "exec")
    except SyntaxError as err:
        raise DecompilationError("produced invalid source (%s)" % err.msg, code_name=code.co_name) from None
    return source


def _machine_source(code: CodeType, constant_name: Optional[Callable[[object], str]],
                    parameters: Optional[Callable[[str], Optional[Sequence[str]]]], indent: int) -> str:
    try:
        decompiler = MachineDecompiler(code, constant_name)
        node = decompiler.function()
    except _Unmergeable:
        # Arms that meet with different waiting values: print each join in every arm.
        decompiler = MachineDecompiler(code, constant_name, merge=False)
        node = decompiler.function()
    if parameters is not None:
        name_after_parameters(node, decompiler.sim.temps, parameters, code)
    return unparse(ast.Module(body=[node], type_ignores=[]), indent=indent)


# --------------------------------------------------------------------------- what may wait


def is_pure(node: Any, frozen: Set[str] = frozenset()) -> bool:
    """Whether evaluating ``node`` later, or twice, cannot change what the program does.

    Names, constants, the interpreter's NULL and exception slots, closure cells, and tuples and slices of
    them. Not functions made here nor list displays (each evaluation makes another one), nor
    ``*x`` (it reads what ``x`` holds now, unless ``x`` is a temporary list made for it, see
    `MachineSimulator.spill`). A constant subscript of a name in ``frozen`` is pure too: see
    `frozen_outputs`. Names are pure because the code reading them is the only code that
    binds them; globals are assumed not to be rebound by the calls in between.
    """
    if isinstance(node, (ast.Name, ast.Constant, v.Null, v.Exc, Cell)):
        return True
    if isinstance(node, ast.Tuple):
        return all(is_pure(x, frozen) for x in node.elts)
    if isinstance(node, ast.Slice):
        return all(x is None or is_pure(x, frozen) for x in (node.lower, node.upper, node.step))
    if isinstance(node, ast.Subscript):
        base = node.value
        return isinstance(base, ast.Name) and base.id in frozen and isinstance(node.slice, ast.Constant)
    if isinstance(node, ast.Starred):
        return marks.marked(node, marks.FIXED)  # ``*t`` of a temporary nobody changes
    return False


def frozen_outputs(instrs: List[Instr]) -> Set[str]:
    """Locals named ``graph_out_*`` that hold a call's result and are only ever read as ``name[k]``.

    torch.compile stores what a compiled graph returns (a new tuple or list that nothing else
    holds) in such a local and reads items out of it: reading an item later reads the same
    value, so ``graph_out_0[0]`` may wait like a name. Any other use and the local is ordinary.
    """
    names = {ins.arg for ins in instrs
             if ins.op in ("LOAD_FAST", "STORE_FAST") and str(ins.arg).startswith("graph_out_")}
    for i, ins in enumerate(instrs):
        if not isinstance(ins.arg, str) or ins.arg not in names:
            continue
        if ins.op == "LOAD_FAST":
            after = instrs[i + 1:i + 3]
            if not (len(after) == 2 and after[0].op == "LOAD_CONST" and type(after[0].arg) is int
                    and after[1].op == "BINARY_SUBSCR"):
                names.discard(ins.arg)
        elif ins.op == "STORE_FAST":
            before = i - 1
            while before >= 0 and instrs[before].op == "DELETE_FAST":
                before -= 1  # torch.compile deletes its temporaries while the result waits
            if before < 0 or instrs[before].op not in ("CALL", "CALL_KW", "CALL_FUNCTION_EX"):
                names.discard(ins.arg)
        elif ins.op != "DELETE_FAST":
            names.discard(ins.arg)
    return names


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
    elif isinstance(stmt, ast.For):
        targets = [stmt]  # the loop target and everything its body binds
    written = set()
    for target in targets:
        for node in ast.walk(target):
            if isinstance(node, ast.Name) and isinstance(node.ctx, (ast.Store, ast.Del)):
                written.add(node.id)
    return written


def constant_index(node: Any) -> Optional[int]:
    if isinstance(node, ast.Constant) and type(node.value) is int:
        return node.value
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        inner = constant_index(node.operand)
        return None if inner is None else -inner
    return None


def constant_bound(node: Any) -> Tuple[bool, Optional[int]]:
    """(whether ``node`` is a constant slice bound, the bound): an int constant or None."""
    if node is None or (isinstance(node, ast.Constant) and node.value is None):
        return True, None
    index = constant_index(node)
    return index is not None, index


def constant_slice(node: Any) -> Optional[slice]:
    """A ``slice`` for a slice node whose bounds are int constants or None, step 1."""
    if not isinstance(node, ast.Slice):
        return None
    parts = [constant_bound(part) for part in (node.lower, node.upper, node.step)]
    if not all(known for known, _ in parts) or parts[2][1] not in (None, 1):
        return None
    return slice(parts[0][1], parts[1][1])


def assign(ident: str, value: ast.expr) -> ast.Assign:
    return ast.Assign(targets=[name(ident, True)], value=value, type_comment=None)


# --------------------------------------------------------------------------- the simulator


class MachineSimulator(Simulator):
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

    # -- what waits -------------------------------------------------------------------------------
    def pure(self, value: Any) -> bool:
        return is_pure(value, self.frozen)

    def impure(self, value: Any) -> bool:
        """Whether a waiting value has effects of its own (a list built here waits as its items)."""
        return not isinstance(value, NewList) and not is_pure(value, self.frozen)

    def pending(self, state: State) -> Iterator[Tuple[Optional[NewList], int, Any]]:
        """Every waiting value in bytecode order: (the list it waits in or None for the stack, index, value)."""
        seen: Set[int] = set()

        def walk(owner: Optional[NewList], container: list) -> Iterator[Tuple[Optional[NewList], int, Any]]:
            for index, value in enumerate(container):
                yield owner, index, value
                if isinstance(value, NewList) and id(value) not in seen:
                    seen.add(id(value))
                    yield from walk(value, value.items)

        yield from walk(None, state.stack)

    def impure_ids(self, state: State) -> List[int]:
        return [id(x) for _, _, x in self.pending(state) if self.impure(x)]

    def inside(self, value: NewList) -> List[Any]:
        """The values in ``value`` and in the lists in it, in order."""
        return [x for _, _, x in self.pending(State([value]))][1:]

    def replace(self, state: State, old: Any, new: Any) -> None:
        """Put ``new`` wherever ``old`` (the same object) waits."""
        for owner, index, value in list(self.pending(state)):
            if value is old:
                (owner.items if owner is not None else state.stack)[index] = new

    def count(self, state: State, obj: Any) -> int:
        """How many times ``obj`` waits, on the stack or in a waiting list."""
        return sum(1 for _, _, value in self.pending(state) if value is obj)

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
        if target is not None and any(target in names_read(x) for _, _, x in self.pending(state) if x is not value):
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
            for _, _, value in self.pending(state):
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
        for _, _, value in self.pending(state):
            if self.impure(value):
                self.spill(state, value)
                return True
        return False

    def emit(self, state: State, stmt: ast.stmt) -> None:
        """Append ``stmt``, which runs after everything waiting was computed."""
        effects = has_effects(stmt, self.frozen)
        written = names_written(stmt)
        while True:
            for _, _, value in self.pending(state):
                if (effects and self.impure(value)) or (written and names_read(value) & written):
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
            if value is not func and ident in names_read(value):
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
        value = state.stack[-1]
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

    # -- lists built here -------------------------------------------------------------------------
    def op_BUILD_LIST(self, ins: Instr, state: State) -> None:
        state.push(NewList(state.popn(ins.arg)))

    def holds(self, value: Any, target: NewList) -> bool:
        """Whether ``target`` is ``value`` or inside it."""
        return value is target or (isinstance(value, NewList) and any(x is target for x in self.inside(value)))

    def cyclic(self, state: State, target: Any, item: Any) -> bool:
        """Whether putting ``item`` into ``target``, a list built here, would make it hold itself
        (both still wait); then ``target`` becomes a real list under a name."""
        if not isinstance(target, NewList) or not self.holds(item, target):
            return False
        self.spill(state, target)
        return True

    def change(self, state: State, target: NewList, part: slice, items: List[Any]) -> None:
        """``target[part] = items`` on a list built here that still waits, where ``items`` (values,
        or another list's items) just left the top of the stack."""
        holder = NewList(list(items))
        saved: List[Any] = []

        def apply() -> None:
            saved[:] = target.items
            state.pop()
            target.items[part] = holder.items

        def undo() -> None:
            target.items[:] = saved
            state.push(holder)

        state.push(holder)  # the items wait on top until they join the list
        self.rearrange(state, apply, undo)

    def op_LIST_APPEND(self, ins: Instr, state: State) -> None:
        target = state.stack[-ins.arg - 1]
        if isinstance(target, NewList) and not self.cyclic(state, target, state.stack[-1]):
            self.change(state, target, slice(len(target.items), None), [state.pop()])
            return
        self.method_call(state, ins.arg, "append", state.pop())

    def op_LIST_EXTEND(self, ins: Instr, state: State) -> None:
        target = state.stack[-ins.arg - 1]
        if isinstance(target, NewList) and not self.cyclic(state, target, state.stack[-1]):
            items = state.pop()
            end = slice(len(target.items), None)
            if isinstance(items, NewList):
                self.change(state, target, end, list(items.items))
                target.exact = target.exact and items.exact
            elif isinstance(items, ast.Constant) and isinstance(items.value, tuple):
                self.change(state, target, end, [const_expr(x) for x in items.value])
            else:
                self.change(state, target, end, [ast.Starred(value=self.expr_of(state, items), ctx=ast.Load())])
                target.exact = False
            return
        self.method_call(state, ins.arg, "extend", state.pop())

    def method_call(self, state: State, depth: int, method: str, argument: Any) -> None:
        """``target.method(argument)`` on a value that stays on the stack ``depth`` deep."""
        arg = self.expr_of(state, argument)
        target = state.stack[-depth]
        if isinstance(target, v.Marker) or isinstance(target, NewList):
            raise DecompilationError("%s on an interpreter value" % method)
        if not self.pure(target):
            target = self.spill(state, target)
        call = ast.Call(func=ast.Attribute(value=target, attr=method, ctx=ast.Load()), args=[arg], keywords=[])
        self.emit(state, ast.Expr(value=call))

    def display_below(self, state: State, depth: int, kind: Any) -> bool:
        """Whether the value that ``depth`` names (with the operand still on top) is a display of
        ``kind`` that may take the operand in: what waits above it has no effects, since the
        display is evaluated before them."""
        if len(state.stack) <= depth:
            raise DecompilationError("stack underflow")
        target = state.stack[-depth - 1]
        above = State(state.stack[len(state.stack) - depth:-1])
        return (isinstance(target, kind) and self.count(state, target) == 1
                and not any(self.impure(x) for _, _, x in self.pending(above)))

    def op_DICT_UPDATE(self, ins: Instr, state: State) -> None:
        if self.display_below(state, ins.arg, ast.Dict):
            super().op_DICT_UPDATE(ins, state)
            return
        self.method_call(state, ins.arg, "update", state.pop())

    def op_DICT_MERGE(self, ins: Instr, state: State) -> None:
        if not self.display_below(state, ins.arg, ast.Dict):
            raise DecompilationError("keyword arguments merged into a value that waits")
        super().op_DICT_MERGE(ins, state)

    def op_SET_UPDATE(self, ins: Instr, state: State) -> None:
        if self.display_below(state, ins.arg, ast.Set):
            super().op_SET_UPDATE(ins, state)
            return
        self.method_call(state, ins.arg, "update", state.pop())

    def op_SET_ADD(self, ins: Instr, state: State) -> None:
        if self.display_below(state, ins.arg, ast.Set):
            super().op_SET_ADD(ins, state)
            return
        self.method_call(state, ins.arg, "add", state.pop())

    def op_MAP_ADD(self, ins: Instr, state: State) -> None:
        if not self.display_below(state, ins.arg + 1, ast.Dict):
            raise DecompilationError("item added to a dict that waits")
        super().op_MAP_ADD(ins, state)

    def op_LIST_TO_TUPLE(self, ins: Instr, state: State) -> None:
        self.settle(state, 1)
        items = state.pop()
        if isinstance(items, ast.List):
            state.push(ast.Tuple(elts=items.elts, ctx=ast.Load()))
            return
        state.push(ast.Call(func=name("tuple"), args=[self.expr(items)], keywords=[]))

    # -- subscripts -------------------------------------------------------------------------------
    def op_BINARY_SUBSCR(self, ins: Instr, state: State) -> None:
        index = state.stack[-1]
        obj = state.stack[-2] if len(state.stack) > 1 else None
        if isinstance(obj, NewList) and obj.exact:
            position = constant_index(index)
            part = constant_slice(index)
            if position is not None and -len(obj.items) <= position < len(obj.items):
                state.pop()
                self.take(state, lambda items: items[position])
                return
            if part is not None:
                state.pop()
                self.take(state, lambda items: NewList(items[part]))
                return
        index = self.pop_expr(state)
        obj = self.pop_expr(state)
        state.push(ast.Subscript(value=obj, slice=index, ctx=ast.Load()))

    def op_BINARY_SLICE(self, ins: Instr, state: State) -> None:
        self.slice_on_top(state)
        self.op_BINARY_SUBSCR(ins, state)

    def slice_on_top(self, state: State) -> None:
        """3.12+'s ``start; stop`` on top of the stack as the one slice value ``BUILD_SLICE`` makes."""
        stop = self.pop_expr(state)
        start = self.pop_expr(state)
        state.push(make_slice(start, stop))

    def take(self, state: State, pick: Callable[[List[Any]], Any]) -> None:
        """Replace the list built here on top of the stack by ``pick(its items)``."""
        source = state.stack[-1]

        def apply() -> None:
            state.stack[-1] = pick(source.items)

        def undo() -> None:
            state.stack[-1] = source

        self.rearrange(state, apply, undo)

    def op_STORE_SUBSCR(self, ins: Instr, state: State) -> None:
        if len(state.stack) < 3:
            raise DecompilationError("stack underflow")
        value, obj, index = state.stack[-3:]
        if isinstance(obj, NewList) and obj.exact and not self.cyclic(state, obj, value):
            position = constant_index(index)
            part = constant_slice(index)
            if position is not None and -len(obj.items) <= position < len(obj.items):
                del state.stack[-2:]
                self.store_items(state, obj, slice(position, position + 1 or None), [state.pop()])
                return
            if part is not None and isinstance(value, NewList):
                del state.stack[-3:]
                self.store_items(state, obj, part, list(value.items), value)
                obj.exact = obj.exact and value.exact
                return
        index = self.pop_expr(state)
        target = self.pop_expr(state)
        self.store(state, ast.Subscript(value=target, slice=index, ctx=ast.Store()))

    def store_items(self, state: State, target: NewList, part: slice, items: List[Any], source: Any = None) -> None:
        """``target[part] = items`` where ``target``, the items and the value they came from
        (``source``, when not the items themselves) left the top of the stack."""
        if self.count(state, target):
            self.change(state, target, part, items)
            return
        # Nobody sees the list any more: only the evaluations of what it held are left, in
        # the bytecode's order (the stored value was below the list).
        self.discard(state, *([source] if source is not None else items), target)

    def op_STORE_SLICE(self, ins: Instr, state: State) -> None:
        self.slice_on_top(state)
        self.op_STORE_SUBSCR(ins, state)

    def op_DELETE_SUBSCR(self, ins: Instr, state: State) -> None:
        index = state.stack[-1]
        obj = state.stack[-2] if len(state.stack) > 1 else None
        if isinstance(obj, NewList) and obj.exact:
            position = constant_index(index)
            part = constant_slice(index)
            if position is not None:
                valid = -len(obj.items) <= position < len(obj.items)
                part = slice(position, position + 1 or None) if valid else None
            if part is not None:
                del state.stack[-2:]
                self.store_items(state, obj, part, [])
                return
        index = self.pop_expr(state)
        target = self.pop_expr(state)
        self.emit(state, ast.Delete(targets=[ast.Subscript(value=target, slice=index, ctx=ast.Del())]))

    def op_UNPACK_SEQUENCE(self, ins: Instr, state: State) -> None:
        value = state.stack[-1] if state.stack else None
        n = ins.arg
        if isinstance(value, NewList) and value.exact and len(value.items) == n:

            def apply() -> None:
                state.pop()
                state.stack.extend(reversed(value.items))

            def undo() -> None:
                del state.stack[len(state.stack) - n:]
                state.push(value)

            self.rearrange(state, apply, undo)
            return
        if (isinstance(value, ast.Tuple) and len(value.elts) == n and not any(isinstance(x, ast.Starred)
                                                                               for x in value.elts)
                and sum(1 for x in value.elts if not self.pure(x)) <= 1):
            # Reversed on the stack: only one of them may have effects, or the order would change.
            state.pop()
            state.stack.extend(reversed(value.elts))
            return
        node = self.pop_expr(state)
        temps = [self.temp() for _ in range(n)]
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


def unstarred(node: ast.expr) -> ast.expr:
    """An expression statement for ``node``: ``*x`` alone is not one, ``[*x]`` is."""
    return ast.List(elts=[node], ctx=ast.Load()) if isinstance(node, ast.Starred) else node


def has_effects(stmt: ast.stmt, frozen: Set[str] = frozenset()) -> bool:
    """Whether running ``stmt`` may do more than bind or unbind local names."""
    if isinstance(stmt, ast.Delete):
        return not all(isinstance(t, ast.Name) for t in stmt.targets)
    if isinstance(stmt, ast.Assign):
        return not (all(isinstance(t, ast.Name) for t in stmt.targets) and is_pure(stmt.value, frozen))
    return True


# --------------------------------------------------------------------------- control flow


class MachineDecompiler:
    """Walk the code's paths from the start into one ``def``: the code after a join once, where
    the arms meet with the same values waiting, else once in each arm."""

    def __init__(self, code: CodeType, constant_name: Optional[Callable[[object], str]] = None,
                 merge: bool = True) -> None:
        self.code = code
        #: Whether the code after a join is printed once (see `branch`), else once per arm.
        self.merge = merge
        self.instrs = canonical_instructions(code)
        for ins in self.instrs:
            if ins.op in ("SETUP_FINALLY", "SETUP_WITH", "POP_BLOCK"):
                raise DecompilationError("block-stack handlers in machine-made code", code_name=code.co_name,
                                         offset=ins.offset, opname=ins.raw or ins.op)
        #: Offset -> position of its first canonical instruction (one raw instruction may make
        #: several, e.g. 3.11+'s ``LOAD_GLOBAL`` with the NULL bit is ``PUSH_NULL; LOAD_GLOBAL``).
        self.index: Dict[int, int] = {}
        for i, ins in enumerate(self.instrs):
            self.index.setdefault(ins.offset, i)
        self.sim = MachineSimulator(code, frozen_outputs(self.instrs), constant_name)
        self.budget = STEP_BUDGET_FACTOR * max(len(self.instrs), 16)
        #: Positions of conditional jumps that carry a handler only because they follow a
        #: protected instruction (see `opcodes.cover_jumps`): they end the protected run.
        self.unprotected = unprotected_jumps(code, self.instrs)

    def function(self) -> ast.FunctionDef:
        state = State()
        self.path(0, state)
        body = inline_temporaries(state.stmts, self.sim.temps, self.sim.frozen)
        if body and isinstance(body[-1], ast.Return) and isinstance(body[-1].value, ast.Constant) \
                and body[-1].value.value is None:
            body.pop()
        node = ast.FunctionDef(name=self.code.co_name, args=arguments(self.code), body=body or [ast.Pass()],
                               decorator_list=[], returns=None, type_comment=None)
        if hasattr(ast, "TypeAlias"):
            node.type_params = []
        return node

    def path(self, position: int, state: State, stop: Optional[int] = None) -> bool:
        """Add to ``state.stmts`` the statements from instruction ``position`` to the end of
        every path leaving it, or up to position ``stop``; return whether the code reaches
        ``stop`` (then ``state.stack`` is the stack there)."""
        instrs = self.instrs
        while True:
            if position == stop:
                return True
            if position >= len(instrs):
                raise DecompilationError("code runs off its end", code_name=self.code.co_name)
            self.budget -= 1
            if self.budget < 0:
                raise DecompilationError("too many paths through machine-made code", code_name=self.code.co_name)
            ins = instrs[position]
            if ins.handler is not None and position not in self.unprotected:
                position = self.protected(position, state)
                continue
            if ins.op == "JUMP":
                position = self.forward(ins)
                continue
            if ins.op in POP_JUMPS:
                taken = self.constant_test(ins, state)
                if taken is None:
                    after = self.branch(ins, position, state, stop)
                    if after is None:
                        return False
                    position = after
                    continue
                position = self.forward(ins) if taken else position + 1
                continue
            if ins.op == "FOR_ITER":
                position = self.loop(position, state)
                continue
            if (ins.op == "COPY" and ins.arg == 1 and position + 1 < len(instrs)
                    and instrs[position + 1].op in ("STORE_FAST", "STORE_DEREF")):
                self.sim.copy_to_name(state, instrs[position + 1].arg)
                position += 2
                continue
            self.sim.step(ins, state)
            if ins.op in ENDS_PATH:
                return False
            position += 1

    def loop(self, position: int, state: State) -> int:
        """A ``for`` loop whose body is straight-line code and whose only exit is running out.

        Dynamo writes such loops to rebuild a dict (``for k, v in d.items(): t[k] = v``). The
        body runs on a stack of its own: reaching below the loop's iterator is refused. Returns
        where the code goes on after the loop.
        """
        sim, instrs = self.sim, self.instrs
        head = instrs[position]
        iterator = state.pop()
        if not isinstance(iterator, v.Iterator) or iterator.is_async:
            raise DecompilationError("loop over something not made by GET_ITER", code_name=self.code.co_name,
                                     offset=head.offset)
        end = position + 1
        while end < len(instrs) and not (instrs[end].op == "JUMP" and instrs[end].target == head.offset):
            ins = instrs[end]
            if (ins.op in POP_JUMPS or ins.op in ("JUMP", "FOR_ITER", "RETURN_VALUE", "RAISE_VARARGS", "RERAISE")
                    or ins.handler is not None):
                raise DecompilationError("control flow inside a loop body", code_name=self.code.co_name,
                                         offset=ins.offset, opname=ins.raw or ins.op)
            end += 1
        after = self.index.get(head.target)
        if end >= len(instrs) or after != end + 1:
            raise DecompilationError("loop with an unusual exit", code_name=self.code.co_name, offset=head.offset)
        body = instrs[position + 1:end]
        target, used = loop_target(body)
        inside = State()
        if target is None:
            ident = sim.temp()
            target = name(ident, True)
            inside.push(name(ident))
        for ins in body[used:]:
            self.budget -= 1
            sim.step(ins, inside)
        if inside.stack:
            raise DecompilationError("loop body leaves values on the stack", code_name=self.code.co_name,
                                     offset=head.offset)
        node = ast.For(target=target, iter=iterator.source, body=inside.stmts or [ast.Pass()], orelse=[],
                       type_comment=None)
        sim.emit(state, node)
        return after

    def protected(self, position: int, state: State) -> int:
        """A run of instructions with an exception handler: ``try: ... except BaseException: ...; raise``.

        Dynamo protects the instruction at a graph break inside a ``with`` block this way: the
        handler calls the context manager's ``__exit__`` and re-raises. Values the run leaves on
        the stack are evaluated inside the ``try``. Returns where the code goes on after the run.
        """
        sim = self.sim
        handler = self.instrs[position].handler
        end = position
        while end < len(self.instrs) and self.instrs[end].handler == handler and end not in self.unprotected:
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
        cleanup = self.handler_body(handler)
        if not body:
            body = [ast.Pass()]
        state.stmts.append(ast.Try(
            body=body,
            handlers=[ast.ExceptHandler(type=name("BaseException"), name=None, body=cleanup)],
            orelse=[], finalbody=[]))
        return end

    def handler_body(self, handler: Handler) -> List[ast.stmt]:
        """The statements of a handler that ends by re-raising what it caught."""
        position = self.index.get(handler.target)
        if position is None:
            raise DecompilationError("unknown exception handler shape", code_name=self.code.co_name,
                                     offset=handler.target)
        # Only the values the interpreter pushes on entry matter: the handler re-raises.
        state = State(v.handler_entry_values(handler.lasti))
        if self.instrs[position].op == "PUSH_EXC_INFO":  # 3.11+: the previous exception under it
            state = State([v.Exc("prev"), v.Exc("exc")])
            position += 1
        for ins in self.instrs[position:]:
            self.budget -= 1
            if ins.op == "RERAISE":
                state.stmts.append(ast.Raise(exc=None, cause=None))
                return state.stmts
            if ins.op in POP_JUMPS or ins.op in ("JUMP", "RETURN_VALUE", "POP_EXCEPT", "PUSH_EXC_INFO"):
                break
            self.sim.step(ins, state)
        raise DecompilationError("exception handler does not re-raise", code_name=self.code.co_name,
                                 offset=handler.target)

    def forward(self, ins: Instr) -> int:
        target = self.index.get(ins.target)
        if target is None or ins.target <= ins.offset:
            raise DecompilationError("backward jump (a loop) in machine-made code", code_name=self.code.co_name,
                                     offset=ins.offset, opname=ins.raw or ins.op)
        return target

    def constant_test(self, ins: Instr, state: State) -> Optional[bool]:
        """Whether a jump on a constant is taken (the constant is popped); None if not a constant."""
        test = state.stack[-1] if state.stack else None
        if not isinstance(test, ast.Constant):
            return None
        state.pop()
        if ins.op in ("POP_JUMP_IF_NONE", "POP_JUMP_IF_NOT_NONE"):
            return (test.value is None) == (ins.op == "POP_JUMP_IF_NONE")
        return bool(test.value) == (ins.op == "POP_JUMP_IF_TRUE")

    def branch(self, ins: Instr, position: int, state: State, stop: Optional[int]) -> Optional[int]:
        """An ``if`` statement for a conditional jump; return where the code goes on after it
        (the join of its arms, or ``stop``), None when no path goes on."""
        sim = self.sim
        test = sim.pop_expr(state)
        sim.spill_impure(state)  # testing the value calls its __bool__: an effect of its own
        if ins.op == "POP_JUMP_IF_NONE":
            test = ast.Compare(left=test, ops=[ast.Is()], comparators=[ast.Constant(value=None)])
        elif ins.op == "POP_JUMP_IF_NOT_NONE":
            test = ast.Compare(left=test, ops=[ast.IsNot()], comparators=[ast.Constant(value=None)])
        join = self.join(position) if self.merge else None
        if join is None or (stop is not None and join > stop):
            join = stop
        jumped, fell = self.fork(state), self.fork(state)
        arms = [(jumped, self.path(self.forward(ins), jumped, join)), (fell, self.path(position + 1, fell, join))]
        if ins.op == "POP_JUMP_IF_FALSE":
            arms.reverse()
        # arms[0] now runs when the test holds.
        (true, _), (false, _) = arms
        if not true.stmts and false.stmts:
            state.stmts.append(ast.If(test=negate(test), body=false.stmts, orelse=[]))
        elif ends(true.stmts) or not false.stmts:
            state.stmts.append(ast.If(test=test, body=true.stmts or [ast.Pass()], orelse=[]))
            state.stmts.extend(false.stmts)
        else:
            state.stmts.append(ast.If(test=test, body=true.stmts, orelse=false.stmts))
        arrived = [arm for arm, reached in arms if reached]
        if not arrived:
            return None
        if len(arrived) == 2 and not same_stack(arrived[0].stack, arrived[1].stack, sim.frozen):
            raise _Unmergeable
        state.stack = arrived[0].stack
        return join

    def join(self, position: int) -> Optional[int]:
        """The first position that both arms of the branch at ``position`` can reach, if any."""
        common = self.reach(position + 1) & self.reach(self.forward(self.instrs[position]))
        return min(common) if common else None

    def reach(self, start: int) -> Set[int]:
        """Positions reachable from ``start`` along forward edges (handlers re-raise: not followed)."""
        seen: Set[int] = set()
        work = [start]
        while work:
            position = work.pop()
            if position in seen or position >= len(self.instrs):
                continue
            seen.add(position)
            ins = self.instrs[position]
            if ins.op in ENDS_PATH:
                continue
            if ins.op == "JUMP" or ins.op in POP_JUMPS or ins.op == "FOR_ITER":
                target = self.index.get(ins.target)
                if target is not None and ins.target > ins.offset:
                    work.append(target)
                if ins.op == "JUMP":
                    continue
            work.append(position + 1)
        return seen

    def fork(self, state: State) -> State:
        memo = {id(v.NULL): v.NULL}
        return State(copy.deepcopy(state.stack, memo))


def unprotected_jumps(code: CodeType, instrs: List[Instr]) -> Set[int]:
    """Positions of conditional jumps with a handler although neither they nor anything the
    canonical instructions dropped before them (3.13's ``TO_BOOL``) is in an exception range."""
    entries = getattr(dis.Bytecode(code), "exception_entries", None)
    if entries is None:
        return set()  # before 3.11 handlers come from the block stack, which is refused
    offsets = [ins.offset for ins in dis.get_instructions(code)]
    found = set()
    for position, ins in enumerate(instrs):
        if ins.op not in POP_JUMPS or ins.handler is None or position == 0:
            continue
        gap = [o for o in offsets if instrs[position - 1].offset < o <= ins.offset]
        if not any(e.start <= o < e.end for o in gap for e in entries):
            found.add(position)
    return found


def name_after_parameters(node: ast.FunctionDef, temps: Set[str],
                          parameters: Callable[[str], Optional[Sequence[str]]], code: CodeType) -> None:
    """Rename each temporary passed as a positional argument to a known function after that
    parameter, where the name is free: ``return __resume_at_40_3(..., y)`` for Dynamo's resume
    call, so the value reads the same on both sides of a graph break."""
    # A local of the original the code never touches is free to take (Dynamo keeps the
    # original's local names; the user's ``y`` usually is one).
    taken = set(parameter_names(code)) | set(code.co_names) | set(code.co_cellvars) | set(code.co_freevars)
    taken |= {n.id for n in ast.walk(node) if isinstance(n, ast.Name)}
    renames: Dict[str, str] = {}
    for call in ast.walk(node):
        if not (isinstance(call, ast.Call) and isinstance(call.func, ast.Name)):
            continue
        names = parameters(call.func.id) or ()
        for arg, param in zip(call.args, names):
            if (isinstance(arg, ast.Name) and arg.id in temps and arg.id not in renames
                    and param.isidentifier() and not param.startswith("_") and param not in taken):
                renames[arg.id] = param
                taken.add(param)
    for item in ast.walk(node):
        if isinstance(item, ast.Name) and item.id in renames:
            item.id = renames[item.id]


def loop_target(body: List[Instr]) -> Tuple[Optional[ast.expr], int]:
    """The names a loop's first instructions store its item in, and how many instructions that takes."""
    stores = ("STORE_FAST", "STORE_DEREF")
    if body and body[0].op in stores:
        return name(body[0].arg, True), 1
    if body and body[0].op == "UNPACK_SEQUENCE":
        count = body[0].arg
        names = [ins.arg for ins in body[1:1 + count] if ins.op in stores]
        if len(names) == count and len(set(names)) == count:
            return ast.Tuple(elts=[name(n, True) for n in names], ctx=ast.Store()), 1 + count
    return None, 0


def ends(stmts: List[ast.stmt]) -> bool:
    return bool(stmts) and isinstance(stmts[-1], (ast.Return, ast.Raise))


#: Instructions after which a path does not go on.
ENDS_PATH = ("RETURN_VALUE", "RAISE_VARARGS", "RERAISE")


class _Unmergeable(Exception):
    """Two arms of a branch meet with different values waiting on the stack."""


def same_stack(one: List[Any], other: List[Any], frozen: Set[str]) -> bool:
    """Whether two arms' stacks at a join hold the same values: the code after the join may
    then use either. Only values that read the same wherever they are read (pure ones)."""
    if len(one) != len(other):
        return False
    for a, b in zip(one, other):
        if isinstance(a, ast.AST) or isinstance(b, ast.AST):
            if not (isinstance(a, ast.AST) and isinstance(b, ast.AST) and is_pure(a, frozen)
                    and is_pure(b, frozen) and ast.dump(a) == ast.dump(b)):
                return False
        elif isinstance(a, Cell) and isinstance(b, Cell):
            if a.name != b.name:
                return False
        elif not (a is b is v.NULL):
            return False
    return True


def negate(test: ast.expr) -> ast.expr:
    """``not test``, as ``x is not None`` for ``x is None``."""
    if isinstance(test, ast.Compare) and len(test.ops) == 1 and isinstance(test.ops[0], (ast.Is, ast.IsNot)):
        op = ast.IsNot() if isinstance(test.ops[0], ast.Is) else ast.Is()
        return ast.Compare(left=test.left, ops=[op], comparators=test.comparators)
    return ast.UnaryOp(op=ast.Not(), operand=test)


# --------------------------------------------------------------------------- tidying


#: Expressions whose evaluation has no effect of its own (their operands may have some).
INERT = (ast.Name, ast.Constant, ast.Tuple, ast.List, ast.Slice, ast.Load)

#: Expressions whose evaluation order `evaluation` knows.
ORDERED = INERT + (ast.Call, ast.keyword, ast.Attribute, ast.Subscript, ast.Starred, ast.BinOp, ast.UnaryOp,
                   ast.Compare, ast.operator, ast.unaryop, ast.cmpop)


def evaluation(node: ast.AST) -> Iterator[ast.AST]:
    """``node`` and its sub-expressions in the order Python finishes evaluating them."""
    if isinstance(node, ast.Call):
        children: List[ast.AST] = [node.func] + list(node.args) + [k.value for k in node.keywords]
    else:
        children = list(ast.iter_child_nodes(node))
    for child in children:
        yield from evaluation(child)
    yield node


def statement_parts(stmt: ast.stmt) -> Optional[List[ast.AST]]:
    """The expressions a simple statement evaluates, in order; None for other statements."""
    if isinstance(stmt, (ast.Return, ast.Expr)):
        return [stmt.value] if stmt.value is not None else []
    if isinstance(stmt, ast.If):
        return [stmt.test]
    if isinstance(stmt, (ast.Assign, ast.Delete)):
        parts: List[ast.AST] = [stmt.value] if isinstance(stmt, ast.Assign) else []
        for target in stmt.targets:
            if isinstance(target, ast.Attribute):
                parts.append(target.value)
            elif isinstance(target, ast.Subscript):
                parts.extend([target.value, target.slice])
            elif not isinstance(target, ast.Name):
                return None
        return parts
    return None


def first_effect_reads(stmt: ast.stmt, ident: str) -> bool:
    """Whether ``stmt`` reads ``ident`` before anything it evaluates has an effect."""
    parts = statement_parts(stmt)
    if parts is None:
        return False
    for part in parts:
        for node in evaluation(part):
            if not isinstance(node, ORDERED):
                return False
            if isinstance(node, ast.Name) and node.id == ident and isinstance(node.ctx, ast.Load):
                return True
            if not isinstance(node, INERT) and not isinstance(node, (ast.operator, ast.unaryop, ast.cmpop)):
                return False
    return False


class Substitute(ast.NodeTransformer):
    """Put an expression where a temporary is read (``*t`` of a ``t = [*x]`` becomes ``*x``)."""

    def __init__(self, ident: str, value: ast.expr) -> None:
        self.ident = ident
        self.value = value

    def visit_Name(self, node: ast.Name) -> ast.AST:
        return self.value if node.id == self.ident else node

    def visit_Starred(self, node: ast.Starred) -> ast.AST:
        value = self.value
        if (isinstance(node.value, ast.Name) and node.value.id == self.ident and isinstance(value, ast.List)
                and len(value.elts) == 1 and isinstance(value.elts[0], ast.Starred)):
            return value.elts[0]
        self.generic_visit(node)
        return node


def inline_temporaries(body: List[ast.stmt], temps: Set[str], frozen: Set[str] = frozenset()) -> List[ast.stmt]:
    """Drop ``t = value`` where the temporary ``t`` is read once, by the next statement, before
    that statement does anything else: the value is evaluated there instead, at the same point.
    A temporary never read keeps only its value's evaluation."""
    reads: Dict[str, int] = {}
    for node in ast.walk(ast.Module(body=body, type_ignores=[])):
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load) and node.id in temps:
            reads[node.id] = reads.get(node.id, 0) + 1

    def tidy(stmts: List[ast.stmt]) -> List[ast.stmt]:
        out: List[ast.stmt] = []
        for stmt in stmts:
            for field in ("body", "orelse", "finalbody"):
                if isinstance(getattr(stmt, field, None), list):
                    setattr(stmt, field, tidy(getattr(stmt, field)))
            for handler in getattr(stmt, "handlers", []):
                handler.body = tidy(handler.body)
            while out and is_temporary(out[-1], temps) and reads.get(out[-1].targets[0].id) == 1:
                previous = out[-1]
                ident = previous.targets[0].id
                if not first_effect_reads(stmt, ident):
                    break
                stmt = Substitute(ident, previous.value).visit(stmt)
                out.pop()
            if is_temporary(stmt, temps) and not reads.get(stmt.targets[0].id):
                # Never read: only the evaluation is left, if it does anything.
                if is_pure(stmt.value, frozen):
                    continue
                stmt = ast.Expr(value=stmt.value)
            out.append(stmt)
        return out

    return tidy(body)


def is_temporary(stmt: ast.stmt, temps: Set[str]) -> bool:
    return (isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name)
            and stmt.targets[0].id in temps)
