"""Machine-made bytecode for the machine-code decompiler's tests: a random program generator
and an assembler, both spelling their programs for the running interpreter.

Random programs are in the style torch.compile writes, assembled with the ``bytecode``
package: straight-line stack code with forward conditional jumps, calls of logging
functions, properties that log, lists built, sliced, extended and slice-assigned in the
code, stack shuffles. :func:`check` runs a program as a function and its decompilation with
the same arguments and fresh globals: the two must observe the same (every logged call with
its arguments, which objects are the same object, the return value, and the contents of
every list either run saw).

A typed model of the stack (`Seq`, `Obj`...) keeps every generated program valid: no index
out of range, no attribute of a list, no local read before its store. The original must
never raise; if it does, the generator is wrong and :func:`check` says so.

Used by tests/decompiler/test_machine.py and benchmarks/machine_fuzz.py.
"""
from __future__ import annotations

import dis
import io
import random
import sys
import types
from typing import Any, Dict, List, Optional, Tuple

import bytecode  # a test dependency: assembles the programs
from bytecode import Bytecode, CompilerFlags, Instr, Label

from framescope.decompiler.machine import decompile_transformed
from framescope.errors import DecompilationError

PY = sys.version_info[:2]

#: Truth patterns each program runs under: every object false, every object true, then mixes.
TRUTH_SEEDS = (0, 1, 2, 3)


# --------------------------------------------------------------------------- the world a program sees


class World:
    """Globals and arguments of one run, and the log of everything they saw happen."""

    def __init__(self, truth_seed: int) -> None:
        #: Decides each object's truth value from its creation number.
        self.truth_seed = truth_seed
        #: (tag, arguments) in the order they happened; arguments as `canon` spells them.
        self.log: List[Tuple[str, Any]] = []
        #: Objects made so far (their creation numbers).
        self.made = 0
        #: id -> (number, list): every list seen, numbered by first sight, kept alive.
        self.lists: Dict[int, Tuple[int, list]] = {}
        self.o = self.thing()
        self.args = (self.thing(), [self.thing(), self.thing(), self.thing()])

    def thing(self) -> "Thing":
        self.made += 1
        if self.truth_seed < 2:
            truth = bool(self.truth_seed)
        else:
            truth = random.Random(self.truth_seed * 1000003 + self.made).random() < 0.5
        return Thing(self, self.made, truth)

    def record(self, tag: str, *args: Any) -> None:
        self.log.append((tag, self.canon(args)))

    def canon(self, value: Any, inside: Tuple[int, ...] = ()) -> Any:
        """``value`` with identities made comparable across runs: objects by creation number,
        lists by order of first sight plus their contents now."""
        if isinstance(value, Thing):
            return ("obj", value.number)
        if isinstance(value, list):
            number = self.lists.setdefault(id(value), (len(self.lists), value))[0]
            if id(value) in inside:
                return ("list", number, "...")
            return ("list", number, tuple(self.canon(x, inside + (id(value),)) for x in value))
        if isinstance(value, tuple):
            return ("tuple",) + tuple(self.canon(x, inside) for x in value)
        return (type(value).__name__, value)

    def globals(self) -> Dict[str, Any]:
        def f(*args: Any) -> Thing:
            self.record("f", *args)
            return self.thing()

        def g(*args: Any) -> List[Thing]:
            self.record("g", *args)
            return [self.thing() for _ in args]

        return {"f": f, "g": g, "o": self.o, "__builtins__": __builtins__}

    def observe(self, function: types.FunctionType) -> Any:
        """What a run of ``function`` shows: the log, the result, every list seen at the end."""
        try:
            result = self.canon(function(*self.args))
        except Exception as err:  # compared, not raised: the other run may raise the same
            result = ("raised", type(err).__name__, str(err))
        final = [self.canon(lst) for _, lst in sorted(self.lists.values(), key=lambda item: item[0])]
        return {"log": self.log, "result": result, "lists": final}


class Thing:
    """An object whose property ``a`` and truth value log every use."""

    def __init__(self, world: World, number: int, truth: bool) -> None:
        self.world = world
        self.number = number
        self.truth = truth

    @property
    def a(self) -> "Thing":
        self.world.record("get", self)
        return self.world.thing()

    @a.setter
    def a(self, value: Any) -> None:
        self.world.record("set", self, value)

    def __bool__(self) -> bool:
        self.world.record("bool", self)
        return self.truth

    def __repr__(self) -> str:
        return "Thing(%d)" % self.number


# --------------------------------------------------------------------------- assembling, per version


class Assembler:
    """The instructions of one operation, spelled for the running interpreter."""

    def __init__(self) -> None:
        self.out: List[Any] = [Instr("RESUME", 0)] if PY >= (3, 11) else []
        #: Exception handlers to place after the code: (label, tag of the call they make).
        self.handlers: List[Tuple[Label, int]] = []

    def add(self, name: str, arg: Any = bytecode.UNSET) -> None:
        self.out.append(Instr(name, arg) if arg is not bytecode.UNSET else Instr(name))

    def const(self, value: Any) -> None:
        self.add("LOAD_CONST", value)

    def callable(self, name: str) -> None:
        self.add("LOAD_GLOBAL", (True, name) if PY >= (3, 11) else name)

    def load_global(self, name: str) -> None:
        self.add("LOAD_GLOBAL", (False, name) if PY >= (3, 11) else name)

    def call(self, argc: int) -> None:
        if PY >= (3, 12):
            self.add("CALL", argc)
        elif PY == (3, 11):
            self.add("PRECALL", argc)
            self.add("CALL", argc)
        else:
            self.add("CALL_FUNCTION", argc)

    def call_ex(self) -> None:
        if PY >= (3, 14):
            self.add("PUSH_NULL")  # the kwargs slot; the flag argument is gone
            self.add("CALL_FUNCTION_EX")
        else:
            self.add("CALL_FUNCTION_EX", 0)

    def load_attr(self, name: str) -> None:
        self.add("LOAD_ATTR", (False, name) if PY >= (3, 12) else name)

    def subscr(self) -> None:
        if PY >= (3, 14):
            self.add("BINARY_OP", bytecode.BinaryOp.SUBSCR)
        else:
            self.add("BINARY_SUBSCR")

    def slice_const(self, part: slice, fused: bool) -> None:
        """Push a slice's bounds; ``fused``: leave them for BINARY_SLICE/STORE_SLICE (3.12+)."""
        self.const(part.start)
        self.const(part.stop)
        if not fused:
            self.add("BUILD_SLICE", 2)

    def list_to_tuple(self) -> None:
        if PY >= (3, 12):
            self.add("CALL_INTRINSIC_1", bytecode.Intrinsic1Op.INTRINSIC_LIST_TO_TUPLE)
        else:
            self.add("LIST_TO_TUPLE")

    def copy(self, n: int) -> None:
        if PY >= (3, 11):
            self.add("COPY", n)
        elif n == 1:
            self.add("DUP_TOP")
        elif n == 2:
            for op in ("ROT_TWO", "DUP_TOP", "ROT_THREE"):
                self.add(op)
        else:
            raise ValueError("COPY %d has no spelling before 3.11" % n)

    def swap(self, n: int) -> None:
        if PY >= (3, 11):
            self.add("SWAP", n)
            return
        self.rot(n)  # the top goes down to n; then what was at n comes up
        for _ in range(n - 2):
            self.rot(n - 1)

    def rotate(self, n: int) -> None:
        """The top of the stack goes down to position ``n``."""
        if PY >= (3, 11):
            for i in range(n, 1, -1):
                self.add("SWAP", i)
        else:
            self.rot(n)

    def rot(self, n: int) -> None:
        if n <= 4:
            self.add({2: "ROT_TWO", 3: "ROT_THREE", 4: "ROT_FOUR"}[n])
        else:
            self.add("ROT_N", n)

    def jump_if(self, when: bool, label: Label) -> None:
        if PY >= (3, 13):
            self.add("TO_BOOL")
        if PY == (3, 11):
            self.add("POP_JUMP_FORWARD_IF_TRUE" if when else "POP_JUMP_FORWARD_IF_FALSE", label)
        else:
            self.add("POP_JUMP_IF_TRUE" if when else "POP_JUMP_IF_FALSE", label)

    def protected_call(self, argc: int, tag: int) -> None:
        """A call inside ``try: ... except BaseException: f(tag); raise``, the way Dynamo
        protects a call inside a ``with`` block (3.10: a SETUP_FINALLY block; 3.11+: an
        exception-table range); the handler goes to the end."""
        handler = Label()
        if PY < (3, 11):
            self.add("SETUP_FINALLY", handler)
            self.call(argc)
            self.add("POP_BLOCK")
        else:
            begin = bytecode.TryBegin(handler, push_lasti=False)
            self.out.append(begin)
            self.call(argc)
            self.out.append(bytecode.TryEnd(begin))
        self.handlers.append((handler, tag))

    def code(self, name: str, args: List[str]) -> types.CodeType:
        for handler, tag in self.handlers:
            if PY < (3, 11):  # the six values the interpreter pushes stay; RERAISE takes three
                self.out.append(handler)
                self.callable("f")
                self.const(tag)
                self.call(1)
                self.add("POP_TOP")
                self.add("RERAISE", 0)
                continue
            cleanup = Label()
            self.out.append(handler)
            begin = bytecode.TryBegin(cleanup, push_lasti=True)
            self.out.append(begin)
            self.add("PUSH_EXC_INFO")
            self.callable("f")
            self.const(tag)
            self.call(1)
            self.add("POP_TOP")
            self.add("RERAISE", 0)
            self.out.append(bytecode.TryEnd(begin))
            self.out.append(cleanup)
            self.add("COPY", 3)
            self.add("POP_EXCEPT")
            self.add("RERAISE", 1)
        self.handlers = []
        program = Bytecode(self.out)
        program.name = name
        program.argcount = len(args)
        program.argnames = list(args)
        program.flags = CompilerFlags.OPTIMIZED | CompilerFlags.NEWLOCALS
        return program.to_code()


# --------------------------------------------------------------------------- the typed model


class Value:
    """What the generator knows of one value on the stack or in a local."""


class Const(Value):
    def __init__(self, value: Any) -> None:
        #: The constant itself (an int, a str or None).
        self.value = value


class Obj(Value):
    """A `Thing`: it has the logging property ``a`` and a logging truth value."""


class Unknown(Value):
    """A value of unknown kind (after a join, or an item of a list of unknown contents)."""


class Seq(Value):
    """A list or a tuple."""

    def __init__(self, items: Optional[List[Value]], mutable: bool, min_len: int = 0) -> None:
        #: The items when known (then exactly these, in order), else None.
        self.items = items
        #: True for a list, False for a tuple.
        self.mutable = mutable
        #: A lower bound of the length when the items are unknown.
        self._min_len = min_len

    @property
    def min_len(self) -> int:
        return len(self.items) if self.items is not None else self._min_len

    def forget(self, min_len: int) -> None:
        self.items = None
        self._min_len = max(0, min_len)


class Frame:
    """A callable waiting for its arguments (everything above it on the stack)."""

    def __init__(self, function: str) -> None:
        #: "f" (returns a new object) or "g" (returns a new list of new objects, one per argument).
        self.function = function


class Barrier:
    """The bottom of a branch's own stack: the branch may not touch what lies below."""


def slice_length(part: slice, length: int) -> int:
    return len(range(*part.indices(length)))


class Model:
    """The stack and the locals while a program is generated."""

    def __init__(self, stack: List[Any], local: Dict[str, Value]) -> None:
        self.stack = stack
        self.local = local

    def region(self) -> List[Any]:
        """The values above the last frame or barrier: the ones the next operation may use."""
        for i in range(len(self.stack) - 1, -1, -1):
            if isinstance(self.stack[i], (Frame, Barrier)):
                return self.stack[i + 1:]
        return self.stack

    def clone(self) -> Tuple["Model", Dict[int, Any]]:
        """A copy that shares no mutable model; also the map from each original's id to its copy."""
        copies: Dict[int, Any] = {}

        def copy(value: Any) -> Any:
            if id(value) in copies:
                return copies[id(value)]
            if isinstance(value, Seq):
                new = Seq(None, value.mutable, value._min_len)
                copies[id(value)] = new
                new.items = None if value.items is None else [copy(x) for x in value.items]
                return new
            copies[id(value)] = value  # immutable: shared
            return value

        model = Model([copy(x) for x in self.stack], {k: copy(x) for k, x in self.local.items()})
        return model, copies

    def seqs(self) -> List[Seq]:
        """Every list or tuple reachable from the stack and the locals."""
        found: Dict[int, Seq] = {}

        def walk(value: Any) -> None:
            if isinstance(value, Seq) and id(value) not in found:
                found[id(value)] = value
                for x in value.items or ():
                    walk(x)

        for value in list(self.stack) + list(self.local.values()):
            walk(value)
        return list(found.values())

    def join(self, other: "Model", copies: Dict[int, Any]) -> None:
        """Become what is known on both paths: ``self`` (no branch) and ``other`` (the branch's copy)."""
        for seq in self.seqs():
            twin = copies.get(id(seq))
            if twin is None or not seq.mutable:
                continue
            same = (seq.items is not None and twin.items is not None and len(seq.items) == len(twin.items)
                    and all(copies.get(id(a)) is b for a, b in zip(seq.items, twin.items)))
            if not same:
                seq.forget(min(seq.min_len, twin.min_len))
        for name in list(self.local):
            mine, theirs = self.local[name], other.local.get(name)
            if theirs is None:
                del self.local[name]
            elif copies.get(id(mine)) is not theirs:
                self.local[name] = Unknown()


# --------------------------------------------------------------------------- the generator


#: Locals besides the arguments ``x`` (an object) and ``y`` (a list of three objects).
LOCALS = ["a", "b", "c"]
#: Where programs keep a call's list the way torch.compile keeps a graph's outputs: stored
#: from the call, read as ``graph_out_0[k]``, deleted; rarely used any other way.
GRAPH_OUT = "graph_out_0"
CONSTANTS = [0, 1, 2, -1, "s", None]
BOUNDS = [None, 0, 1, 2, -1, -2]


class Generator:
    """One random program: `Assembler` instructions and the model they keep valid."""

    def __init__(self, rng: random.Random, size: int = 24) -> None:
        self.rng = rng
        self.asm = Assembler()
        #: Operations in the program's main block.
        self.size = size
        #: The last tag given to a call site (each logs its own first).
        self.tags = 0
        #: How many branches the operation being generated is inside.
        self.depth = 0
        #: Whether slices may use 3.12+'s BINARY_SLICE/STORE_SLICE.
        self.fused = PY >= (3, 12)
        #: Whether this program uses the graph output like any other local.
        self.any_use = rng.random() < 0.1

    def program(self) -> types.CodeType:
        model = Model([], {"x": Obj(), "y": Seq([Obj(), Obj(), Obj()], True)})
        self.block(model, self.size)
        self.finish(model, returns=True)
        return self.asm.code("program", ["x", "y"])

    # -- driving ---------------------------------------------------------------------------------
    def block(self, model: Model, steps: int) -> None:
        for _ in range(steps):
            options = [op for op in self.operations() if op[1](model, test=True)]
            weights = [w for w, _ in options]
            _, op = self.rng.choices(options, weights)[0]
            op(model, test=False)

    def operations(self) -> List[Tuple[float, Any]]:
        ops = [
            (4, self.op_const), (4, self.op_load), (2, self.op_store), (1, self.op_delete),
            (3, self.op_callable), (2, self.op_callable_under), (4, self.op_call), (1, self.op_two_calls), (2, self.op_call_ex), (2, self.op_attr),
            (1, self.op_global), (1, self.op_store_attr), (3, self.op_build_list), (1, self.op_build_tuple),
            (3, self.op_subscr), (2, self.op_slice), (2, self.op_store_subscr), (1, self.op_store_slice),
            (1, self.op_del_subscr), (1, self.op_del_slice), (1, self.op_unpack), (2, self.op_pop),
            (2, self.op_list_append), (1, self.op_branch), (1, self.op_graph), (2, self.op_graph_read),
        ]
        if PY >= (3, 9):
            ops += [(3, self.op_list_extend), (1, self.op_list_to_tuple),
                    (1, self.op_copy_list)]
        if PY >= (3, 11):
            ops += [(3, self.op_copy), (2, self.op_swap)]
        else:
            ops += [(2, self.op_dup), (2, self.op_rot)]
        return ops

    def finish(self, model: Model, returns: bool) -> None:
        """Call every waiting callable of this block; then return the top value or clear the block."""
        while True:
            stack = model.stack
            top = len(stack) - len(model.region()) - 1
            if top < 0 or isinstance(stack[top], Barrier):
                break
            self.op_call(model, test=False)
        if returns:
            if not model.region():
                self.op_const(model, test=False)
            model.stack.pop()
            self.asm.add("RETURN_VALUE")
            return
        while model.region():
            if self.rng.random() < 0.3:
                self.op_store(model, test=False)
            else:
                model.stack.pop()
                self.asm.add("POP_TOP")

    # -- values ----------------------------------------------------------------------------------
    def op_const(self, model: Model, test: bool) -> bool:
        if test:
            return True
        value = self.rng.choice(CONSTANTS + [(1, 2)])
        self.asm.const(value)
        model.stack.append(Seq([Const(1), Const(2)], False) if isinstance(value, tuple) else Const(value))
        return True

    def names(self, model: Model) -> List[str]:
        """Bound locals a general operation may use: the graph output only in some programs."""
        return sorted(n for n in model.local if n != GRAPH_OUT or self.any_use)

    def op_load(self, model: Model, test: bool) -> bool:
        if test:
            return bool(self.names(model))
        name = self.rng.choice(self.names(model))
        self.asm.add("LOAD_FAST", name)
        model.stack.append(model.local[name])
        return True

    def op_store(self, model: Model, test: bool) -> bool:
        if test:
            return bool(model.region())
        name = self.rng.choice(["x", "y"] + LOCALS + ([GRAPH_OUT] if self.any_use else []))
        self.asm.add("STORE_FAST", name)
        model.local[name] = model.stack.pop()
        return True

    def op_delete(self, model: Model, test: bool) -> bool:
        if test:
            return bool(model.local)
        name = self.rng.choice(sorted(model.local))  # graph outputs are deleted too
        self.asm.add("DELETE_FAST", name)
        del model.local[name]
        return True

    def op_global(self, model: Model, test: bool) -> bool:
        if test:
            return True
        self.asm.load_global("o")
        model.stack.append(Obj())
        return True

    def op_graph(self, model: Model, test: bool) -> bool:
        if test:
            return True
        self.tags += 1
        count = self.rng.randint(0, 3)
        self.asm.callable("g")
        for value in [self.tags] + list(range(count)):
            self.asm.const(value)
        self.asm.call(count + 1)
        self.asm.add("STORE_FAST", GRAPH_OUT)
        model.local[GRAPH_OUT] = Seq([Obj() for _ in range(count + 1)], True)
        return True

    def op_graph_read(self, model: Model, test: bool) -> bool:
        out = model.local.get(GRAPH_OUT)
        if test:
            return isinstance(out, Seq) and out.min_len > 0
        index = self.index(out)
        self.asm.add("LOAD_FAST", GRAPH_OUT)
        self.asm.const(index)
        self.asm.subscr()
        model.stack.append(out.items[index] if out.items is not None else Unknown())
        return True

    # -- calls -----------------------------------------------------------------------------------
    def op_callable(self, model: Model, test: bool) -> bool:
        if test:
            return sum(isinstance(x, Frame) for x in model.stack) < 3
        function = self.rng.choice("fg")
        self.asm.callable(function)
        model.stack.append(Frame(function))
        self.tags += 1
        self.asm.const(self.tags)  # each call site logs its own tag first
        model.stack.append(Const(self.tags))
        return True

    def op_callable_under(self, model: Model, test: bool) -> bool:
        """A callable loaded after its first arguments and rotated below them, as Dynamo does."""
        region = model.region()
        if test:
            return bool(region) and sum(isinstance(x, Frame) for x in model.stack) < 3
        k = self.rng.randint(1, min(3, len(region)))
        function = self.rng.choice("fg")
        self.asm.callable(function)
        slots = 2 if PY >= (3, 11) else 1  # NULL and the callable
        for _ in range(slots):
            self.asm.rotate(k + slots)
        model.stack.insert(len(model.stack) - k, Frame(function))
        return True

    def op_two_calls(self, model: Model, test: bool) -> bool:
        """Two calls whose results change places at once: the first must still run first."""
        if test:
            return True
        for _ in range(2):
            self.tags += 1
            self.asm.callable("f")
            self.asm.const(self.tags)
            self.asm.call(1)
            model.stack.append(Obj())
        if PY >= (3, 11):
            self.asm.add("SWAP", 2)
        else:
            self.asm.add("ROT_TWO")
        return True

    def frame_index(self, model: Model) -> int:
        index = len(model.stack) - len(model.region()) - 1
        return index if index >= 0 and isinstance(model.stack[index], Frame) else -1

    def op_call(self, model: Model, test: bool) -> bool:
        index = self.frame_index(model)
        if test:
            return index >= 0 and len(model.stack) - index - 1 <= 6
        frame = model.stack[index]
        argc = len(model.stack) - index - 1
        del model.stack[index:]
        if PY >= (3, 10) and self.rng.random() < 0.1:
            self.tags += 1
            self.asm.protected_call(argc, self.tags)
        else:
            self.asm.call(argc)
        model.stack.append(self.result(frame, argc))
        return True

    def result(self, frame: Frame, argc: Optional[int]) -> Value:
        if frame.function == "f":
            return Obj()
        if argc is None:
            return Seq(None, True, 0)
        return Seq([Obj() for _ in range(argc)], True)

    def op_call_ex(self, model: Model, test: bool) -> bool:
        """``f(*list)``: the list on top, or one built from the arguments there, as Dynamo does."""
        index = self.frame_index(model)
        argc = len(model.stack) - index - 1
        if test:
            return index >= 0 and 1 <= argc <= 4
        if not (argc == 1 and isinstance(model.stack[-1], Seq) and self.rng.random() < 0.5):
            self.asm.add("BUILD_LIST", argc)
            items = model.stack[index + 1:]
            del model.stack[index + 1:]
            model.stack.append(Seq(items, True))
            if PY >= (3, 9) and self.rng.random() < 0.3:
                self.asm.list_to_tuple()
        star = model.stack.pop()
        frame = model.stack.pop()
        self.asm.call_ex()
        model.stack.append(self.result(frame, star.min_len if star.items is not None else None))
        return True

    # -- attributes ------------------------------------------------------------------------------
    def op_attr(self, model: Model, test: bool) -> bool:
        region = model.region()
        if test:
            return bool(region) and isinstance(region[-1], Obj)
        self.asm.load_attr("a")
        model.stack[-1] = Obj()
        return True

    def op_store_attr(self, model: Model, test: bool) -> bool:
        region = model.region()
        if test:
            return len(region) >= 2 and isinstance(region[-1], Obj)
        self.asm.add("STORE_ATTR", "a")
        del model.stack[-2:]
        return True

    # -- building ---------------------------------------------------------------------------------
    def op_build_list(self, model: Model, test: bool) -> bool:
        return self.build(model, test, "BUILD_LIST", True)

    def op_build_tuple(self, model: Model, test: bool) -> bool:
        return self.build(model, test, "BUILD_TUPLE", False)

    def build(self, model: Model, test: bool, opname: str, mutable: bool) -> bool:
        """A list or tuple of up to 3 of the values on top."""
        region = model.region()
        if test:
            return True
        n = self.rng.randint(0, min(3, len(region)))
        self.asm.add(opname, n)
        items = model.stack[len(model.stack) - n:]
        del model.stack[len(model.stack) - n:]
        model.stack.append(Seq(items, mutable))
        return True

    def op_list_to_tuple(self, model: Model, test: bool) -> bool:
        region = model.region()
        if test:
            return bool(region) and isinstance(region[-1], Seq) and region[-1].mutable
        seq = model.stack.pop()
        self.asm.list_to_tuple()
        items = None if seq.items is None else list(seq.items)
        model.stack.append(Seq(items, False, seq.min_len))
        return True

    def target_depths(self, model: Model, after_pop: int) -> List[int]:
        """Depths ``i`` (as LIST_APPEND/LIST_EXTEND count them) of lists in the region."""
        region = model.region()
        rest = region[:len(region) - after_pop]
        return [i for i in range(1, len(rest) + 1) if isinstance(rest[-i], Seq) and rest[-i].mutable]

    def op_list_append(self, model: Model, test: bool) -> bool:
        depths = self.target_depths(model, 1) if model.region() else []
        if test:
            return bool(depths)
        depth = self.rng.choice(depths)
        item = model.stack.pop()
        target = model.stack[-depth]
        self.asm.add("LIST_APPEND", depth)
        if target.items is not None:
            target.items.append(item)
        else:
            target.forget(target.min_len + 1)
        return True

    def op_list_extend(self, model: Model, test: bool) -> bool:
        region = model.region()
        depths = self.target_depths(model, 1) if region and isinstance(region[-1], Seq) else []
        if test:
            return bool(depths)
        depth = self.rng.choice(depths)
        items = model.stack.pop()
        target = model.stack[-depth]
        self.asm.add("LIST_EXTEND", depth)
        if target.items is not None and items.items is not None:
            target.items.extend(list(items.items))
        else:
            target.forget(target.min_len + items.min_len)
        return True

    def op_copy_list(self, model: Model, test: bool) -> bool:
        """``[*l]`` next to ``l``, the way Dynamo copies a list: ``BUILD_LIST 0; COPY 2; LIST_EXTEND 1``."""
        region = model.region()
        if test:
            return bool(region) and isinstance(region[-1], Seq)
        self.asm.add("BUILD_LIST", 0)
        self.asm.copy(2)
        self.asm.add("LIST_EXTEND", 1)
        seq = model.stack[-1]
        model.stack.append(Seq(None if seq.items is None else list(seq.items), True, seq.min_len))
        return True

    # -- subscripts --------------------------------------------------------------------------------
    def index(self, seq: Seq) -> int:
        return self.rng.randint(-seq.min_len, seq.min_len - 1)

    def bounds(self) -> slice:
        return slice(self.rng.choice(BOUNDS), self.rng.choice(BOUNDS))

    def op_subscr(self, model: Model, test: bool) -> bool:
        region = model.region()
        if test:
            return bool(region) and isinstance(region[-1], Seq) and region[-1].min_len > 0
        seq = model.stack.pop()
        index = self.index(seq)
        self.asm.const(index)
        self.asm.subscr()
        model.stack.append(seq.items[index] if seq.items is not None else Unknown())
        return True

    def op_slice(self, model: Model, test: bool) -> bool:
        region = model.region()
        if test:
            return bool(region) and isinstance(region[-1], Seq)
        seq = model.stack.pop()
        part = self.bounds()
        fused = self.fused and self.rng.random() < 0.5
        self.asm.slice_const(part, fused)
        if fused:
            self.asm.add("BINARY_SLICE")
        else:
            self.asm.subscr()
        if seq.items is not None:
            model.stack.append(Seq(seq.items[part], seq.mutable))
        else:
            model.stack.append(Seq(None, seq.mutable, slice_length(part, seq.min_len)))
        return True

    def op_store_subscr(self, model: Model, test: bool) -> bool:
        region = model.region()
        if test:
            return len(region) >= 2 and isinstance(region[-1], Seq) and region[-1].mutable and region[-1].min_len > 0
        target = model.stack.pop()
        value = model.stack.pop()
        index = self.index(target)
        self.asm.const(index)
        self.asm.add("STORE_SUBSCR")
        if target.items is not None:
            target.items[index] = value
        return True

    def op_store_slice(self, model: Model, test: bool) -> bool:
        region = model.region()
        if test:
            return (len(region) >= 2 and isinstance(region[-1], Seq) and region[-1].mutable
                    and isinstance(region[-2], Seq))
        target = model.stack.pop()
        value = model.stack.pop()
        part = self.bounds()
        fused = self.fused and self.rng.random() < 0.5
        self.asm.slice_const(part, fused)
        self.asm.add("STORE_SLICE" if fused else "STORE_SUBSCR")
        self.assign_slice(target, part, value)
        return True

    def assign_slice(self, target: Seq, part: slice, value: Seq) -> None:
        if target.items is not None and value.items is not None:
            target.items[part] = list(value.items)
            return
        # The length after ``t[part] = v`` grows with the length before it.
        kept = target.min_len - slice_length(part, target.min_len)
        target.forget(kept + value.min_len)

    def op_del_subscr(self, model: Model, test: bool) -> bool:
        region = model.region()
        if test:
            return bool(region) and isinstance(region[-1], Seq) and region[-1].mutable and region[-1].min_len > 0
        target = model.stack.pop()
        index = self.index(target)
        self.asm.const(index)
        self.asm.add("DELETE_SUBSCR")
        if target.items is not None:
            del target.items[index]
        else:
            target.forget(target.min_len - 1)
        return True

    def op_del_slice(self, model: Model, test: bool) -> bool:
        region = model.region()
        if test:
            return bool(region) and isinstance(region[-1], Seq) and region[-1].mutable
        target = model.stack.pop()
        part = self.bounds()
        self.asm.slice_const(part, False)
        self.asm.add("DELETE_SUBSCR")
        self.assign_slice(target, part, Seq([], False))
        return True

    def op_unpack(self, model: Model, test: bool) -> bool:
        region = model.region()
        if test:
            return (bool(region) and isinstance(region[-1], Seq) and region[-1].items is not None
                    and len(region[-1].items) <= 4)
        seq = model.stack.pop()
        self.asm.add("UNPACK_SEQUENCE", len(seq.items))
        model.stack.extend(reversed(seq.items))
        return True

    # -- shuffles ----------------------------------------------------------------------------------
    def op_pop(self, model: Model, test: bool) -> bool:
        if test:
            return bool(model.region())
        model.stack.pop()
        self.asm.add("POP_TOP")
        return True

    def op_copy(self, model: Model, test: bool) -> bool:
        region = model.region()
        if test:
            return bool(region)
        n = self.rng.randint(1, min(4, len(region)))
        self.asm.add("COPY", n)
        model.stack.append(model.stack[-n])
        return True

    def op_swap(self, model: Model, test: bool) -> bool:
        region = model.region()
        if test:
            return len(region) >= 2
        n = self.rng.randint(2, min(4, len(region)))
        self.asm.add("SWAP", n)
        model.stack[-1], model.stack[-n] = model.stack[-n], model.stack[-1]
        return True

    def op_dup(self, model: Model, test: bool) -> bool:
        region = model.region()
        if test:
            return bool(region)
        if len(region) >= 2 and self.rng.random() < 0.3:
            self.asm.add("DUP_TOP_TWO")
            model.stack.extend(model.stack[-2:])
        else:
            self.asm.add("DUP_TOP")
            model.stack.append(model.stack[-1])
        return True

    def op_rot(self, model: Model, test: bool) -> bool:
        region = model.region()
        if test:
            return len(region) >= 2
        n = self.rng.randint(2, min(5 if PY >= (3, 10) else 4, len(region)))
        if n <= 4 and (PY < (3, 10) or self.rng.random() < 0.7):
            self.asm.add({2: "ROT_TWO", 3: "ROT_THREE", 4: "ROT_FOUR"}[n])
        else:
            self.asm.add("ROT_N", n)
        top = model.stack.pop()
        model.stack.insert(len(model.stack) - n + 1, top)
        return True

    # -- control flow ------------------------------------------------------------------------------
    def op_branch(self, model: Model, test: bool) -> bool:
        """``if``: code the jump skips, then the join; or ``if``/``else`` with a forward jump
        over the second block. A block may return instead of joining."""
        if test:
            return bool(model.region()) and self.depth < 2
        model.stack.pop()
        label = Label()
        self.asm.jump_if(self.rng.random() < 0.5, label)
        branches = 2 if self.rng.random() < 0.3 else 1
        joined = []
        for number in range(branches):
            branch, copies = model.clone()
            branch.stack.append(Barrier())
            self.depth += 1
            self.block(branch, self.rng.randint(1, 8))
            self.depth -= 1
            # The last block joins if no other did: the code after it must be reachable.
            returns = self.rng.random() < 0.4 and (joined or number < branches - 1)
            self.finish(branch, returns)
            if not returns:
                branch.stack.pop()  # the barrier
                joined.append((branch, copies))
            if number < branches - 1:
                end = Label()
                if not returns:
                    self.asm.add("JUMP_FORWARD", end)
                self.asm.out.append(label)
                label = end
        self.asm.out.append(label)
        if branches == 1 and not joined:
            return True  # the jump's path goes on with the model as it is
        for branch, copies in joined:
            model.join(branch, copies)
        return True


def generate(seed: int, size: int = 0) -> types.CodeType:
    """The program for ``seed``: ``size`` operations, or by default 6 to 30 (small programs
    put effects close together, large ones give shuffles and branches room)."""
    rng = random.Random(seed)
    return Generator(rng, size or rng.randint(6, 30)).program()


# --------------------------------------------------------------------------- running and comparing


def disassembly(code: types.CodeType) -> str:
    out = io.StringIO()
    dis.dis(code, file=out)
    return out.getvalue()


def run_code(code: types.CodeType, truth_seed: int) -> Any:
    world = World(truth_seed)
    return world.observe(types.FunctionType(code, world.globals()))


def run_source(source: str, name: str, truth_seed: int) -> Any:
    world = World(truth_seed)
    namespace = world.globals()
    exec(compile(source, "<decompiled>", "exec"), namespace)
    return world.observe(namespace[name])


def check(code: types.CodeType) -> Tuple[str, str]:
    """("equivalent" | "refused" | "internal" | "wrong" | "invalid", details) for one program.

    The program is decompiled twice: as it is, and with every local but its arguments named
    scratch (so that locals stored and read once are folded away); both must do what it does.
    The details of an equivalent program are the first decompilation."""
    try:
        source = decompile_transformed(code)
        folded = decompile_transformed(code, scratch=frozenset(code.co_varnames))
    except DecompilationError as err:
        return ("internal" if err.internal else "refused"), str(err)
    outcome, details = _runs_alike(code, source)
    if outcome == "equivalent":
        outcome, details = _runs_alike(code, folded)
        details = source if outcome == "equivalent" else "with its locals as scratch: " + details
    return outcome, details


def _runs_alike(code: types.CodeType, source: str) -> Tuple[str, str]:
    for truth_seed in TRUTH_SEEDS:
        expected = run_code(code, truth_seed)
        if expected["result"][0] == "raised":
            return "invalid", "the generated program raised %r" % (expected["result"],)
        try:
            got = run_source(source, code.co_name, truth_seed)
        except Exception as err:  # e.g. source that does not compile
            return "wrong", "%s\n%s: %s" % (source, type(err).__name__, err)
        if got != expected:
            return "wrong", "%s\ntruth seed %d\n%s" % (source, truth_seed, difference(expected, got))
    return "equivalent", source


def difference(expected: Any, got: Any) -> str:
    for key in ("log", "result", "lists"):
        if expected[key] != got[key]:
            if key == "log":
                for i, (a, b) in enumerate(zip(expected["log"], got["log"])):
                    if a != b:
                        return "log entry %d: expected %r, got %r" % (i, a, b)
                return "log length: expected %d entries, got %d" % (len(expected["log"]), len(got["log"]))
            return "%s: expected %r, got %r" % (key, expected[key], got[key])
    return "no difference"


# --------------------------------------------------------------------------- the fuzz test


def assemble(text: str, args: Tuple[str, ...] = ("x", "y")) -> types.CodeType:
    """A code object from one operation a line, spelled for the running interpreter:
    ``const 1``, ``load x``, ``store x``, ``delete x``, ``global o``, ``callable f`` (with its
    NULL slot), ``push_null``, ``call 2``, ``protected_call 1``,
    ``call_ex``, ``attr``, ``store_attr``, ``list 2``, ``tuple 2``, ``copy 1``, ``swap 2``,
    ``extend 1``, ``append 1``, ``subscr``, ``slice 1 None``, ``store_subscr``, ``delete_subscr``,
    ``unpack 2``, ``to_tuple``, ``pop``, ``if_true L``, ``if_false L``, ``jump L`` (forward),
    ``back L`` (backward), ``label L``, ``return``."""
    asm = Assembler()
    labels: Dict[str, Label] = {}
    for line in text.strip().splitlines():
        op, *rest = line.split()
        arg = rest[0] if rest else None
        number = int(arg) if arg is not None and arg.lstrip("-").isdigit() else None
        if op == "const":
            asm.const(number if number is not None else (None if arg == "None" else arg))
        elif op in ("load", "store", "delete"):
            asm.add({"load": "LOAD_FAST", "store": "STORE_FAST", "delete": "DELETE_FAST"}[op], arg)
        elif op == "global":
            asm.load_global(arg)
        elif op == "callable":
            asm.callable(arg)
        elif op == "push_null":
            asm.add("PUSH_NULL")
        elif op == "call":
            asm.call(number)
        elif op == "protected_call":
            asm.protected_call(number, 99)
        elif op == "call_ex":
            asm.call_ex()
        elif op == "attr":
            asm.load_attr("a")
        elif op == "store_attr":
            asm.add("STORE_ATTR", "a")
        elif op in ("list", "tuple", "unpack"):
            asm.add({"list": "BUILD_LIST", "tuple": "BUILD_TUPLE", "unpack": "UNPACK_SEQUENCE"}[op], number)
        elif op in ("extend", "append"):
            asm.add("LIST_EXTEND" if op == "extend" else "LIST_APPEND", number)
        elif op == "copy":
            asm.copy(number)
        elif op == "swap":
            asm.swap(number)
        elif op == "subscr":
            asm.subscr()
        elif op == "slice":
            bounds = [None if x == "None" else int(x) for x in rest]
            asm.slice_const(slice(*bounds), False)
        elif op in ("store_subscr", "delete_subscr"):
            asm.add(op.upper())
        elif op == "to_tuple":
            asm.list_to_tuple()
        elif op == "pop":
            asm.add("POP_TOP")
        elif op in ("if_true", "if_false"):
            asm.jump_if(op == "if_true", labels.setdefault(arg, Label()))
        elif op == "jump":
            asm.add("JUMP_FORWARD", labels.setdefault(arg, Label()))
        elif op == "back":
            asm.add("JUMP_BACKWARD" if PY >= (3, 11) else "JUMP_ABSOLUTE", labels.setdefault(arg, Label()))
        elif op == "label":
            asm.out.append(labels.setdefault(arg, Label()))
        elif op == "return":
            asm.add("RETURN_VALUE")
        else:
            raise ValueError("unknown operation %r" % line)
    return asm.code("program", list(args))
