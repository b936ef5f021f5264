"""The walk over machine code's paths: straight-line code and forward branches, joins printed once."""
import ast
import copy
import dis
from types import CodeType
from typing import AbstractSet, Any, Callable, Dict, List, Optional, Sequence, Set, Tuple

from framescope.decompiler.frontend.instructions import POP_JUMPS, Handler, Instr
from framescope.decompiler.frontend.opcodes import canonical_instructions
from framescope.decompiler.machine.inline import inline_temporaries
from framescope.decompiler.machine.lists import MachineSimulator
from framescope.decompiler.machine.sinking import tidy_across
from framescope.decompiler.machine.values import Cell, frozen_outputs, is_pure
from framescope.decompiler.simulate import values as v
from framescope.decompiler.simulate.signature import arguments, parameter_names
from framescope.decompiler.simulate.state import State, name
from framescope.errors import DecompilationError


#: How many instructions one code object may take in all its paths (joins are copied per path).
STEP_BUDGET_FACTOR = 16


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

    def function(self, scratch: AbstractSet[str] = frozenset(), shown: AbstractSet[str] = frozenset(),
                 modules: AbstractSet[str] = frozenset()) -> ast.FunctionDef:
        """The ``def``; ``scratch``: locals nothing outside the code reads, ``shown`` those of them
        to keep under their name, ``modules`` globals bound to modules (see inline_temporaries),
        its arguments and cells aside."""
        state = State()
        self.path(0, state)
        code = self.code
        kept = set(parameter_names(code)) | set(code.co_cellvars) | set(code.co_freevars)
        scratch = set(scratch) - kept
        body = inline_temporaries(state.stmts, self.sim.temps, self.sim.frozen, scratch, shown, modules)
        #: The names the output may rename: temporaries and scratch locals not to be shown.
        self.renamable = set(self.sim.temps) | (scratch - set(shown))
        body = tidy_across(body, self.renamable, set(parameter_names(code)),
                           set(code.co_cellvars) | set(code.co_freevars))
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
            raise Unmergeable
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


class Unmergeable(Exception):
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
