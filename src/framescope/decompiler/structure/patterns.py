"""Match statements (3.10+): the bytecode of ``match``/``case`` → `ast.Match`.

The compiler lays a match statement out as one run of code per case, in order::

    subject
    COPY 1                  (every case but the last, which consumes the subject)
    <pattern>               tests that jump to the case's failure code on no match
    STORE name...           the captures, all stored once the whole pattern matched
    <guard>                 a condition that jumps to the failure code when false
    POP_TOP                 (every case but the last: the subject's copy)
    <body>                  then a jump to the end of the statement
    POP_TOP...              failure code: pops what the pattern left, falls into the next case

and a trailing ``case _:`` as plain code after the last case's failure code.

Patterns are read by running their code on a stack of `Node` values (the subject, and
the items, values and attributes taken out of it) that collect what is tested:
``MATCH_SEQUENCE`` and a length test make a sequence pattern, ``MATCH_CLASS`` a class
pattern, a comparison a value pattern, a store a capture.  Stack shuffles (whose order
the optimiser rearranges from version to version) need no special treatment.  An
or-pattern is the one shape with several success paths: each alternative tests a copy
of its subject and jumps to a shared end, failing into the next alternative.

A case is only taken as such when every failure path pops back to one place with the
subject in place; anything else is not a match statement (and the walker goes on
with the instructions as they are).
"""
import ast
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Callable, Dict, List, Optional, Tuple

from framescope.decompiler.simulate import values as v
from framescope.decompiler.frontend import versions
from framescope.decompiler.graph.cfg import Block
from framescope.decompiler.structure.conditions import Cond, collect_condition, is_builtin_check, simple_condition
from framescope.decompiler.frontend.instructions import CONDITIONAL_JUMPS
from framescope.decompiler.graph.normalize import same_run
from framescope.decompiler.simulate.simulator import State
from framescope.errors import DecompilationError

if TYPE_CHECKING:
    from framescope.decompiler.structure.context import StructureContext
    from framescope.decompiler.structure.statements import Structurer

#: Instructions at which a match statement may start (with its subject on the stack); none before 3.10.
MATCH_STARTS = frozenset({"COPY", "MATCH_SEQUENCE", "MATCH_MAPPING", "MATCH_CLASS"} if hasattr(ast, "Match") else ())

#: Loads the pattern reader leaves to the simulator: class names, values and mapping keys.
LOADS = frozenset({
    "LOAD_CONST", "LOAD_GLOBAL", "LOAD_NAME", "LOAD_DEREF", "LOAD_FAST", "LOAD_ATTR", "LOAD_LOCALS",
    "LOAD_FROM_DICT_OR_GLOBALS", "LOAD_FROM_DICT_OR_DEREF", "BUILD_TUPLE",
})

#: Instructions read per case at most (a bound on work for code that is no pattern).
MAX_STEPS = 5000

#: A place in the code: a block and the index of an instruction in it.
Pos = Tuple[Block, int]
#: What building a statement returns: None (no match statement there), else a 1-tuple of
#: the block where the code after it starts (None: control ended).
Next = Optional[Tuple[Optional[Block]]]


class NotAPattern(Exception):
    """The code read is not the code of a pattern."""


@dataclass(eq=False)
class Node(v.Marker):
    """A value a pattern tests: the subject, or an item, value or attribute taken from it."""

    #: The starred item of a sequence pattern.
    star: bool = False
    #: What the pattern tests: None (nothing: a capture or ``_``), "value", "singleton",
    #: "sequence", "mapping", "class" or "or".
    kind: Optional[str] = None
    #: The value compared with (value, singleton patterns) or the class (class patterns).
    value: Any = None
    #: Sequences: the length test, ("==" or ">=", n), if any.
    length: Optional[Tuple[str, int]] = None
    #: Parts taken out: item index (or ("end", k) for ``len - k``), key or attribute position → node.
    items: Dict[Any, "Node"] = field(default_factory=dict)
    #: Sequences taken apart by ``UNPACK_*``: (item count, index of the starred item or None).
    unpack: Optional[Tuple[int, Optional[int]]] = None
    #: Mappings: the key expressions.
    keys: Optional[List[ast.expr]] = None
    #: Mappings: the name bound to the remaining items (``**rest``).
    rest: Optional[str] = None
    #: Class patterns: the number of positional patterns, and the keyword names.
    npos: int = 0
    kwnames: Tuple[str, ...] = ()
    #: Or-patterns: one node per alternative.
    alternatives: List["Node"] = field(default_factory=list)
    #: Names the value is captured in, innermost first.
    names: List[str] = field(default_factory=list)
    #: How many times it was copied for an as-pattern (``P as name``): each copy is
    #: tested (by P), the value itself captured.
    aliased: int = 0


@dataclass(eq=False)
class Test(v.Marker):
    """The outcome of a test on a node, consumed by the jump that follows it."""

    node: Node
    #: "sequence", "mapping", "length", "value", "singleton" or "result".
    kind: str
    #: The length test, the value, the singleton or the `Result`.
    arg: Any = None


@dataclass(eq=False)
class Length(v.Marker):
    """``len(node)``."""

    node: Node


@dataclass(eq=False)
class FromEnd(v.Marker):
    """``len(node) - k``: the index of an item after a starred wildcard."""

    node: Node
    k: int


@dataclass(eq=False)
class Result(v.Marker):
    """What ``MATCH_CLASS`` or ``MATCH_KEYS`` pushed: the tuple of attributes or values, or None."""

    node: Node
    #: "class" (data: class expression, positional count, keyword names) or "mapping" (data: keys).
    kind: str
    data: Any


@dataclass(eq=False)
class Rest(v.Marker):
    """The dict of a mapping's remaining items, bound by ``**rest``."""

    node: Node


class EmptyDict(v.Marker):
    """``BUILD_MAP 0``: the start of a ``**rest`` dict (3.11+)."""


class KeyItem(v.Marker):
    """A key taken from the keys tuple, deleted from the ``**rest`` dict (3.11+)."""


@dataclass(eq=False)
class Merged(v.Marker):
    """One capture of an or-pattern: the same name in each alternative."""

    members: List[Any]


@dataclass(eq=False)
class Case:
    """One case as read from the bytecode."""

    pattern: ast.AST
    guard: Optional[ast.expr]
    #: Where the pattern's code ends (the guard, the subject's pop or the body follows).
    matched: Pos
    #: Where the body starts.
    body: Pos
    #: Where control goes when the case does not match (None: it always matches).
    fail: Optional[Pos]
    #: Whether the pattern or guard can fail.
    refutable: bool


class Reader:
    """Reads the cases of one match statement; pure: it runs no structuring."""

    def __init__(self, st: "Structurer", outer: List[Any], subject: ast.expr, extra: List[Any]) -> None:
        self.st = st
        #: The stack below the subject (values the statement leaves alone).
        self.outer = outer
        self.subject = subject
        #: Values above the subject at the start (a class pattern's class and keyword names).
        self.extra = extra
        self.floor = len(outer)
        #: Undo log of node changes: (object, attribute, old value).
        self.log: List[Tuple[Any, str, Any]] = []
        self.steps = 0
        self.stored = False
        #: Blocks of failure code (pops on the way to the next case), which belong to the statement.
        self.fail_blocks: List[Block] = []

    # -- cases ---------------------------------------------------------------------------------------
    def cases(self, pos: Pos, first: bool = True) -> Optional[List[Case]]:
        """The cases from ``pos`` on, the subject on top of the stack."""
        block, index = pos
        ins = block.instrs[index]
        mark = len(self.fail_blocks)
        copied = ins.op == "COPY" and ins.arg == 1
        found = None
        if (copied or not first) and not (first and self.extra):
            # A case before the last; ``case _ if guard:`` leaves no pattern code (not even the copy).
            case = self.case(pos, last=False, first=first, copied=copied)
            if case is not None:
                rest = self.cases(case.fail, first=False) if case.fail is not None else None
                if rest is not None:
                    found = [case] + rest
                    if not (same_position(case.body, rest[0].body) or same_position(case.body, rest[0].matched)):
                        return found
                    # Two cases going on alike: the alternatives of a last or-pattern, if they can be.
            saved = self.fail_blocks[mark:]
            del self.fail_blocks[mark:]
        case = self.case(pos, last=True, first=first)
        if case is None or (not first and is_wildcard(case.pattern) and case.guard is None):
            # (a trailing ``case _`` compiles to no pattern code at all)
            if found is not None:
                self.fail_blocks[mark:] = saved
            return found
        return [case]

    def case(self, pos: Pos, last: bool, first: bool, copied: bool = True) -> Optional[Case]:
        subject = Node()
        stack = self.outer + [subject] + (self.extra if first else [])
        if last:
            root, floor, start = subject, self.floor, pos
        elif copied:
            root, floor, start = Node(), self.floor + 1, after(pos)
            stack.append(root)
        else:
            root, floor, start = Node(), self.floor + 1, pos
        self.stored = False
        self.steps = 0
        mark = len(self.fail_blocks)
        try:
            end, stack, failures = self.follow(start, stack, self.case_stop(floor, subject, last))
            expected = self.outer + ([] if last else [subject])
            fail = self.converge(failures, floor, expected)
            pattern = to_pattern(root)
        except (NotAPattern, DecompilationError):
            del self.fail_blocks[mark:]
            return None
        guard, body, fail = self.guard(end, last, fail, first, pattern)
        if body is None:
            del self.fail_blocks[mark:]
            return None
        return Case(pattern, guard, end, body, fail, fail is not None)

    def case_stop(self, floor: int, subject: Node, last: bool) -> Callable:
        def stop(block: Block, index: int, stack: List[Any]) -> bool:
            return len(stack) == floor and (last or stack[-1] is subject)
        return stop

    def guard(self, pos: Pos, last: bool, fail: Optional[Pos], first: bool, pattern: ast.AST):
        """(guard, where the body starts, failure position) after the pattern of a case.

        The body of a case before the last starts after the subject's pop; a guard before
        that pop jumps to the failure position when false.  The last case has no pop: a
        condition there is its guard when it fails to the same place as the pattern.  When
        the pattern cannot fail, a condition is read as a guard only where it must be one:
        after ``_`` following other cases (else the case would be a ``case _:`` compiling
        to no code), or after a pattern that compiles unlike any assignment.
        """
        wildcard, plain = is_wildcard(pattern), like_assignment(pattern)
        block, index = pos
        if not last and block.instrs[index].op == "POP_TOP":
            return None, after(pos), fail
        read = self.read_guard(pos, last, fail, fail is not None or (not first and wildcard) or not plain)
        if read is not None:
            return read
        return None, (pos if last else None), fail

    def read_guard(self, pos: Pos, last: bool, fail: Optional[Pos], allowed: bool, start: Optional[State] = None):
        """(guard, where the body starts, failure position) when the code at ``pos`` tests a guard;
        ``start``: the stack there, when not the statement's own (after an inlined builtin)."""
        block, index = pos
        if (last and not allowed) or not block.last.is_cond_jump():
            return None
        expected = self.outer + ([] if last else [self.subject])
        probe = State(start.stack if start is not None else expected)
        cond = self.guard_condition(block, index, probe)
        if (cond is None or probe.stmts or cond.true_kept or cond.false_kept or cond.true_block is None
                or cond.false_block is None or any(node is self.subject for node in ast.walk(cond.expr))):
            return None  # (a test of the subject itself is the next case's pattern)
        if is_builtin_check(cond.expr) and start is None:
            # 3.14 inlines ``all``/``any`` of a generator expression when the name is the
            # builtin; the other arm calls it, and the guard tests what the call returned.
            join = self.st.join(cond, None)
            value = State(cond.false_state.stack)
            try:
                if join is None or self.st.walk(cond.false_block, join, value) is not join or value.stmts:
                    return None
            except DecompilationError:
                return None
            return self.read_guard((join, 0), last, fail, allowed, value)
        return self.guarded_body(cond, last, fail, expected)

    def guard_condition(self, block: Block, index: int, probe: State) -> Optional[Cond]:
        """The condition ``block`` tests from instruction ``index`` on (run on ``probe``), None if none."""
        try:
            for ins in block.instrs[index:-1]:
                self.st.ctx.sim.step(ins, probe)
        except DecompilationError:
            return None
        try:
            cond = collect_condition(self.st.ctx, block, State(probe.stack), pops=False)
            if any(node is self.subject for node in ast.walk(cond.expr)):
                raise DecompilationError("the next case's test")
        except DecompilationError:  # it went on into the next case's code: a guard of one test
            try:
                cond = simple_condition(self.st.ctx, block, State(probe.stack))
            except DecompilationError:
                return None
        return cond

    def guarded_body(self, cond: Cond, last: bool, fail: Optional[Pos], expected: List[Any]):
        """(guard, where the body starts, failure position) of the guard ``cond``, when its false
        arm fails to the case's failure position and its true arm starts the body."""
        passed: List[Block] = []
        miss = follow_pops((cond.false_block, 0), list(cond.false_state.stack), len(expected), passed)
        if miss is None or not same_stack(miss[1], expected) or len(cond.false_state.stack) != len(expected) \
                or (fail is not None and not same_position(miss[0], fail)):
            return None
        body: Optional[Pos] = (cond.true_block, 0)
        depth = len(cond.true_state.stack)
        if not last and depth == len(expected):
            if cond.true_block.instrs[0].op != "POP_TOP":
                return None
            body = after(body)
        elif depth != self.floor:
            return None
        self.fail_blocks.extend(passed)
        return cond.expr, body, fail or miss[0]

    def converge(self, failures, floor: int, expected: List[Any]) -> Optional[Pos]:
        """The one place all failure paths reach once they popped the stack down to ``floor``."""
        place = None
        for pos, stack in failures:
            reached = follow_pops(pos, stack, floor, self.fail_blocks)
            if reached is None or not same_stack(reached[1], expected):
                raise NotAPattern
            if place is None:
                place = reached[0]
            elif not same_position(place, reached[0]):
                raise NotAPattern
        return place

    # -- running pattern code ------------------------------------------------------------------------
    def follow(self, pos: Pos, stack: List[Any], stop: Callable):
        """Run pattern code along its success path until ``stop``; return (position, stack, failures).

        The failures are the other sides of the tests: (position, stack) pairs.
        """
        failures: List[Tuple[Pos, List[Any]]] = []
        block, index = pos
        while True:
            self.steps += 1
            if self.steps > MAX_STEPS:
                raise NotAPattern
            if index >= len(block.instrs):
                if block.fall is None:
                    raise NotAPattern
                block, index = block.fall, 0
                continue
            if stop(block, index, stack):
                return (block, index), stack, failures
            ins = block.instrs[index]
            op = ins.op
            if (op == "COPY" and ins.arg == 1 and stack and isinstance(stack[-1], Node) and not self.stored
                    and not takes_item(block, index)):
                found = self.alternatives((block, index), stack)
                if found is not None:
                    (block, index), stack, more = found
                    failures.extend(more)
                    continue
                self.set(stack[-1], "aliased", stack[-1].aliased + 1)
            if op in CONDITIONAL_JUMPS:
                if self.stored or block.jump is None or block.fall is None:
                    raise NotAPattern
                taken = self.passes(op, self.pop(stack))
                good, bad = (block.jump, block.fall) if taken else (block.fall, block.jump)
                failures.append(((bad, 0), list(stack)))
                block, index = good, 0
                continue
            if op == "JUMP":
                block, index = block.jump, 0
                if block is None:
                    raise NotAPattern
                continue
            self.step(ins, stack)
            index += 1

    def alternatives(self, pos: Pos, stack: List[Any]):
        """Read an or-pattern whose first alternative starts at ``pos`` (a ``COPY 1``); None if it is none."""
        mark, passed, stored = len(self.log), len(self.fail_blocks), self.stored
        try:
            return self.read_or(pos, stack)
        except (NotAPattern, DecompilationError):
            while len(self.log) > mark:
                obj, attr, old = self.log.pop()
                setattr(obj, attr, old)
            del self.fail_blocks[passed:]
            self.stored = stored
            return None

    def read_or(self, pos: Pos, stack: List[Any]):
        subject = stack[-1]
        depth = len(stack)
        alternatives: List[Node] = []
        ends: List[Tuple[Pos, List[Any]]] = []
        failed: List[Tuple[Pos, List[Any]]] = []

        def stop(block: Block, index: int, now: List[Any]) -> bool:
            if block.instrs[index].op == "POP_TOP" and now and now[-1] is subject:
                return True
            if not any(x is subject for x in now):
                raise NotAPattern
            return False

        entry, stored = self.stored, False
        while True:
            alternative = Node()
            alternatives.append(alternative)
            self.stored = entry  # each alternative is a path of its own
            end, after_stack, failures = self.follow(after(pos), stack + [alternative], stop)
            stored = stored or self.stored
            after_stack.pop()
            ends.append((after(end), after_stack))
            if not failures:
                if len(alternatives) == 1:
                    raise NotAPattern  # only the last alternative may always match
                break
            place = self.converge(failures, depth, stack)
            ins = place[0].instrs[place[1]]
            if ins.op == "COPY" and ins.arg == 1:
                pos = place
                continue
            if ins.op == "POP_TOP" and (after(place) == ends[0][0]
                                        or (versions.EMPTY_LAST_ALTERNATIVE and same_position(after(place), ends[0][0]))):
                # A last alternative ``_`` leaves no code (3.12+ drops its ``COPY 1; POP_TOP``):
                # the failure goes on as a success, to the same code or a copy of it.
                alternatives.append(Node())
                ends.append((after(place), stack[:-1]))
                break
            if ins.op == "POP_TOP" and len(alternatives) > 1:
                failed.append((after(place), stack[:-1]))  # no alternative matched
                break
            raise NotAPattern
        place, merged = ends[0]
        for other, other_stack in ends[1:]:
            if not same_position(place, other) or len(other_stack) != len(merged):
                raise NotAPattern
        merged = [merge([s[i] for _, s in ends]) for i in range(len(merged))]
        self.stored = stored
        if subject.kind is not None:
            raise NotAPattern
        self.set(subject, "kind", "or")
        self.set(subject, "alternatives", alternatives)
        return place, merged, failed

    def set(self, obj: Any, attr: str, value: Any) -> None:
        self.log.append((obj, attr, getattr(obj, attr)))
        setattr(obj, attr, value)

    def pop(self, stack: List[Any]) -> Any:
        if len(stack) <= self.floor:
            raise NotAPattern
        return stack.pop()

    def passes(self, op: str, test: Any) -> bool:
        """Apply what a conditional jump tests; return whether it jumps when the pattern matches."""
        if isinstance(test, Test):
            self.apply(test)
            if op in ("POP_JUMP_IF_FALSE", "POP_JUMP_IF_TRUE"):
                return op == "POP_JUMP_IF_TRUE"
        elif isinstance(test, Result):  # a copy of the result: None when there is no match
            self.apply(Test(test.node, "result", test))
            if op in ("POP_JUMP_IF_NONE", "POP_JUMP_IF_NOT_NONE"):
                return op == "POP_JUMP_IF_NOT_NONE"
        elif isinstance(test, Node):  # ``case None`` folded into a jump on None (3.12+)
            self.apply(Test(test, "singleton", None))
            if op in ("POP_JUMP_IF_NONE", "POP_JUMP_IF_NOT_NONE"):
                return op == "POP_JUMP_IF_NONE"
        raise NotAPattern

    def apply(self, test: Test) -> None:
        node, kind = test.node, test.kind
        if kind in ("sequence", "mapping", "value", "singleton") and node.kind is None:
            self.set(node, "kind", kind)
            if kind in ("value", "singleton"):
                self.set(node, "value", test.arg)
        elif kind == "length" and node.kind in ("sequence", "mapping") and node.length is None:
            self.set(node, "length", test.arg)
        elif kind == "result" and test.arg.kind == "class" and node.kind is None:
            cls, npos, kwnames = test.arg.data
            self.set(node, "kind", "class")
            self.set(node, "value", cls)
            self.set(node, "npos", npos)
            self.set(node, "kwnames", kwnames)
        elif kind == "result" and test.arg.kind == "mapping" and node.kind == "mapping" and node.keys is None:
            self.set(node, "keys", test.arg.data)
        else:
            raise NotAPattern

    def step(self, ins, stack: List[Any]) -> None:
        method = getattr(self, "op_" + ins.op, None)
        if method is not None:
            method(ins, stack)
            return
        if ins.op not in LOADS:
            raise NotAPattern
        state = State()
        state.stack = stack
        self.st.ctx.sim.step(ins, state)
        if state.stmts:
            raise NotAPattern

    def item(self, node: Node, key: Any, star: bool = False) -> Node:
        if key in node.items:
            raise NotAPattern
        child = Node(star=star)
        items = dict(node.items)
        items[key] = child
        self.set(node, "items", items)
        return child

    # -- one method per instruction ----------------------------------------------------------------
    def op_COPY(self, ins, stack: List[Any]) -> None:
        if len(stack) - ins.arg < self.floor or self.stored:
            raise NotAPattern  # (captures are stored last: ``a = b = c = x`` copies between its stores)
        stack.append(stack[-ins.arg])

    def op_SWAP(self, ins, stack: List[Any]) -> None:
        if len(stack) - ins.arg < self.floor:
            raise NotAPattern
        stack[-1], stack[-ins.arg] = stack[-ins.arg], stack[-1]

    def op_ROT(self, ins, stack: List[Any]) -> None:
        if len(stack) - ins.arg < self.floor:
            raise NotAPattern
        stack.insert(len(stack) - ins.arg, stack.pop())

    def op_POP_TOP(self, ins, stack: List[Any]) -> None:
        self.pop(stack)

    def op_STORE_FAST(self, ins, stack: List[Any]) -> None:
        self.capture(self.pop(stack), ins.arg)

    op_STORE_NAME = op_STORE_GLOBAL = op_STORE_DEREF = op_STORE_FAST

    def capture(self, value: Any, name: str) -> None:
        self.stored = True
        if isinstance(value, Merged):
            for member in value.members:
                self.capture(member, name)
        elif isinstance(value, Node):
            self.set(value, "names", value.names + [name])
        elif isinstance(value, Rest) and value.node.rest is None:
            self.set(value.node, "rest", name)
        else:
            raise NotAPattern

    def top_node(self, stack: List[Any]) -> Node:
        if len(stack) <= self.floor or not isinstance(stack[-1], Node):
            raise NotAPattern
        return stack[-1]

    def op_MATCH_SEQUENCE(self, ins, stack: List[Any]) -> None:
        stack.append(Test(self.top_node(stack), "sequence"))

    def op_MATCH_MAPPING(self, ins, stack: List[Any]) -> None:
        stack.append(Test(self.top_node(stack), "mapping"))

    def op_GET_LEN(self, ins, stack: List[Any]) -> None:
        stack.append(Length(self.top_node(stack)))

    def op_COMPARE_OP(self, ins, stack: List[Any]) -> None:
        right, left = self.pop(stack), self.pop(stack)
        if isinstance(left, Length) and ins.arg in ("==", ">=") and is_int(right):
            stack.append(Test(left.node, "length", (ins.arg, right.value)))
        elif isinstance(left, Node) and ins.arg == "==" and is_value(right):
            stack.append(Test(left, "value", right))
        else:
            raise NotAPattern

    def op_IS_OP(self, ins, stack: List[Any]) -> None:
        right, left = self.pop(stack), self.pop(stack)
        constant = isinstance(right, ast.Constant) and right.value in (None, True, False)
        if isinstance(left, Node) and constant and not ins.arg:
            stack.append(Test(left, "singleton", right.value))
        elif isinstance(left, Result) and constant and right.value is None and ins.arg:
            stack.append(Test(left.node, "result", left))
        else:
            raise NotAPattern

    def op_MATCH_CLASS(self, ins, stack: List[Any]) -> None:
        names, cls, subject = self.pop(stack), self.pop(stack), self.pop(stack)
        kwnames = constant_strings(names)
        if not isinstance(subject, Node) or kwnames is None or not is_dotted(cls):
            raise NotAPattern
        stack.append(Result(subject, "class", (cls, ins.arg, kwnames)))

    def op_MATCH_KEYS(self, ins, stack: List[Any]) -> None:
        if len(stack) < self.floor + 2 or not isinstance(stack[-2], Node) or not isinstance(stack[-1], ast.Tuple):
            raise NotAPattern
        keys = list(stack[-1].elts)
        if not all(is_value(k) for k in keys):
            raise NotAPattern
        stack.append(Result(stack[-2], "mapping", keys))

    def op_UNPACK_SEQUENCE(self, ins, stack: List[Any]) -> None:
        value = self.pop(stack)
        count = ins.arg
        if isinstance(value, Node) and value.kind == "sequence" and value.unpack is None:
            self.set(value, "unpack", (count, None))
            items = [self.item(value, i) for i in range(count)]
        elif isinstance(value, Result) and value.node.kind in ("class", "mapping") and count == result_size(value):
            items = [self.item(value.node, i) for i in range(count)]
        elif isinstance(value, ast.Tuple) and len(value.elts) == count:
            items = [KeyItem() for _ in range(count)]  # the keys deleted from a ``**rest`` dict
        else:
            raise NotAPattern
        stack.extend(reversed(items))

    def op_UNPACK_EX(self, ins, stack: List[Any]) -> None:
        value = self.pop(stack)
        before, after_star = ins.arg & 0xFF, ins.arg >> 8
        count = before + 1 + after_star
        if not isinstance(value, Node) or value.kind != "sequence" or value.unpack is not None:
            raise NotAPattern
        self.set(value, "unpack", (count, before))
        stack.extend(reversed([self.item(value, i, i == before) for i in range(count)]))

    def op_BINARY_SUBSCR(self, ins, stack: List[Any]) -> None:
        index, value = self.pop(stack), self.pop(stack)
        if isinstance(value, Node) and value.kind == "sequence" and is_int(index):
            stack.append(self.item(value, index.value))
        elif isinstance(value, Node) and isinstance(index, FromEnd) and index.node is value:
            stack.append(self.item(value, ("end", index.k)))
        elif isinstance(value, Result) and value.node.kind in ("class", "mapping") and is_int(index) \
                and 0 <= index.value < result_size(value):
            stack.append(self.item(value.node, index.value))  # 3.10 takes values one by one
        else:
            raise NotAPattern

    def op_BINARY_OP(self, ins, stack: List[Any]) -> None:
        right, left = self.pop(stack), self.pop(stack)
        if ins.arg != "-" or not isinstance(left, Length) or not is_int(right):
            raise NotAPattern
        stack.append(FromEnd(left.node, right.value))

    def op_COPY_DICT_WITHOUT_KEYS(self, ins, stack: List[Any]) -> None:  # 3.10
        self.pop(stack)
        stack.append(Rest(self.top_node(stack)))

    def op_BUILD_MAP(self, ins, stack: List[Any]) -> None:
        if ins.arg:
            raise NotAPattern
        stack.append(EmptyDict())

    def op_DICT_UPDATE(self, ins, stack: List[Any]) -> None:
        source = self.pop(stack)
        if len(stack) - ins.arg < self.floor or not isinstance(stack[-ins.arg], EmptyDict) \
                or not isinstance(source, Node):
            raise NotAPattern
        stack[-ins.arg] = Rest(source)

    def op_DELETE_SUBSCR(self, ins, stack: List[Any]) -> None:
        key, value = self.pop(stack), self.pop(stack)
        if not isinstance(key, KeyItem) or not isinstance(value, Rest):
            raise NotAPattern


# -- positions ---------------------------------------------------------------------------------------
def after(pos: Pos) -> Pos:
    """The position after the instruction at ``pos`` when control falls through."""
    block, index = pos
    if index + 1 < len(block.instrs):
        return block, index + 1
    if block.fall is None:
        raise NotAPattern
    return block.fall, 0


def same_position(a: Pos, b: Pos) -> bool:
    """The same place, or two copies of one code that ends the function (the compiler copies those)."""
    if a[0] is b[0] and a[1] == b[1]:
        return True
    return (not a[0].succs() and not b[0].succs()
            and same_run(a[0].instrs[a[1]:], b[0].instrs[b[1]:]))


def follow_pops(pos: Pos, stack: List[Any], floor: int, passed: Optional[List[Block]] = None):
    """Follow a failure path: its pops (down to ``floor``) and jumps; return (position, stack).

    The blocks it runs through are added to ``passed``.
    """
    block, index = pos
    stack = list(stack)
    seen = 0
    while block is not None and seen < 1000:
        seen += 1
        if index >= len(block.instrs):
            block, index = block.fall, 0
            continue
        op = block.instrs[index].op
        if op == "POP_TOP" and len(stack) > floor:
            stack.pop()
            index += 1
        elif op == "JUMP":
            if passed is not None:
                passed.append(block)
            block, index = block.jump, 0
        else:
            if passed is not None and index:
                passed.append(block)
            return (block, index), stack
        if passed is not None and index >= len(block.instrs):
            passed.append(block)
    return None


def through(block: Block) -> Block:
    """Where a block that only jumps on leads (3.13+ keeps such blocks for line numbers)."""
    seen = 0
    while len(block.instrs) == 1 and block.last.op == "JUMP" and block.jump is not None and seen < 20:
        block = block.jump
        seen += 1
    return block


def same_stack(a: List[Any], b: List[Any]) -> bool:
    return len(a) == len(b) and all(x is y for x, y in zip(a, b))


def takes_item(block: Block, index: int) -> bool:
    """Whether the ``COPY 1`` at ``index`` copies a sequence to take an item out of it (not an or/as)."""
    rest = block.instrs[index + 1:index + 3]
    if rest and rest[0].op == "GET_LEN":
        return True
    return len(rest) == 2 and rest[0].op == "LOAD_CONST" and type(rest[0].arg) is int \
        and rest[1].op == "BINARY_SUBSCR"


def merge(values: List[Any]) -> Any:
    """The value the alternatives of an or-pattern leave in one stack slot."""
    if all(x is values[0] for x in values):
        return values[0]
    members: List[Any] = []
    for value in values:
        if isinstance(value, Merged):
            members.extend(value.members)
        elif isinstance(value, (Node, Rest)):
            members.append(value)
        else:
            raise NotAPattern
    return Merged(members)


def result_size(result: Result) -> int:
    if result.kind == "class":
        _, npos, kwnames = result.data
        return npos + len(kwnames)
    return len(result.data)


def is_int(node: Any) -> bool:
    return isinstance(node, ast.Constant) and type(node.value) is int


def is_dotted(node: Any) -> bool:
    while isinstance(node, ast.Attribute):
        node = node.value
    return isinstance(node, ast.Name)


def is_value(node: Any) -> bool:
    """Whether ``node`` can be the value of a value pattern or a mapping key."""
    if isinstance(node, ast.Constant):
        return node.value is not Ellipsis
    return isinstance(node, ast.Attribute) and is_dotted(node)


def constant_strings(node: Any) -> Optional[Tuple[str, ...]]:
    if isinstance(node, ast.Tuple) and all(isinstance(e, ast.Constant) and isinstance(e.value, str)
                                           for e in node.elts):
        return tuple(e.value for e in node.elts)
    return None


# -- nodes → patterns -----------------------------------------------------------------------------
def wildcard() -> ast.AST:
    return ast.MatchAs(pattern=None, name=None)


def is_wildcard(pattern: ast.AST) -> bool:
    return isinstance(pattern, ast.MatchAs) and pattern.pattern is None and pattern.name is None


def to_pattern(node: Optional[Node]) -> ast.AST:
    """The pattern that tests what ``node`` collected."""
    if node is None:
        return wildcard()
    if node.star:
        if node.kind is not None or len(node.names) > 1:
            raise NotAPattern
        return ast.MatchStar(name=node.names[0] if node.names else None)
    names = list(node.names)
    pattern = tested(node)
    if pattern is None:
        pattern = ast.MatchAs(pattern=None, name=names.pop(0) if len(names) > node.aliased else None)
    if len(names) != node.aliased:
        raise NotAPattern  # each copy for an as-pattern is matched against, the value captured
    for name in names:
        pattern = ast.MatchAs(pattern=pattern, name=name)
    return pattern


def like_assignment(pattern: ast.AST) -> bool:
    """Whether a pattern compiles like an assignment: ``case a`` as ``a = x``, ``case a as b`` as ``a = b = x``."""
    if isinstance(pattern, ast.MatchAs) and pattern.name is not None and isinstance(pattern.pattern, ast.MatchAs):
        pattern = pattern.pattern
    return isinstance(pattern, ast.MatchAs) and pattern.pattern is None and pattern.name is not None


def tested(node: Node) -> Optional[ast.AST]:
    kind = node.kind
    if kind is None:
        if node.items or node.unpack:
            raise NotAPattern
        return None
    if kind == "value":
        return ast.MatchValue(value=node.value)
    if kind == "singleton":
        return ast.MatchSingleton(value=node.value)
    if kind == "or":
        return ast.MatchOr(patterns=[to_pattern(alt) for alt in node.alternatives])
    if kind == "class":
        count = node.npos + len(node.kwnames)
        parts = [to_pattern(node.items.get(i)) for i in range(count)]
        return ast.MatchClass(cls=node.value, patterns=parts[:node.npos], kwd_attrs=list(node.kwnames),
                              kwd_patterns=parts[node.npos:])
    if kind == "mapping":
        keys = node.keys or []
        return ast.MatchMapping(keys=keys, patterns=[to_pattern(node.items.get(i)) for i in range(len(keys))],
                                rest=node.rest)
    return ast.MatchSequence(patterns=sequence_items(node))


def sequence_items(node: Node) -> List[ast.AST]:
    if node.unpack is not None:  # (the starred item is a node of its own)
        return [to_pattern(node.items.get(i)) for i in range(node.unpack[0])]
    op, n = node.length if node.length is not None else (">=", 0)
    if not node.items:  # only wildcards: nothing is taken out
        if node.length is None:
            return [ast.MatchStar(name=None)]
        return [wildcard() for _ in range(n)] + ([ast.MatchStar(name=None)] if op == ">=" else [])
    if op != ">=":
        raise NotAPattern
    size = n + 1  # items taken by index around a starred wildcard
    front = [k for k in node.items if isinstance(k, int)]
    back = [size - k[1] for k in node.items if not isinstance(k, int)]
    star = max(front) + 1 if front else min(back) - 1
    if star < 0 or star >= size or any(i >= star for i in front) or any(i <= star for i in back):
        raise NotAPattern
    items = [wildcard() for _ in range(size)]
    for key, child in node.items.items():
        items[key if isinstance(key, int) else size - key[1]] = to_pattern(child)
    items[star] = ast.MatchStar(name=None)
    return items


# -- the statement -------------------------------------------------------------------------------
class MatchBuilder:
    """Builds ``match`` statements from the cases a `Reader` finds, for the walker."""

    def __init__(self, ctx: "StructureContext", walker: "Structurer") -> None:
        self.ctx = ctx
        #: Walks the case bodies.
        self.walker = walker

    def match_statement(self, block: Block, index: int, state: State, stop: Optional[Block]) -> Next:
        """Build the match statement starting at ``block.instrs[index]``, if one does."""
        ins = block.instrs[index]
        depth = 3 if ins.op == "MATCH_CLASS" else 1
        if (ins.op == "COPY" and ins.arg != 1) or len(state.stack) < depth:
            return None
        try:
            subject = self.ctx.sim.expr(state.stack[-depth])
        except DecompilationError:
            return None
        outer = state.stack[:len(state.stack) - depth]
        reader = Reader(self.walker, outer, subject, state.stack[len(state.stack) - depth + 1:])
        cases = reader.cases((block, index))
        if not cases or (len(cases) == 1 and not cases[0].refutable and like_assignment(cases[0].pattern)):
            return None  # ``a = b = x`` compiles alike and reads better
        return self.build_match(block, reader, cases, state, stop)

    def guarded_match(self, cond: Cond, state: State, stop: Optional[Block]) -> Next:
        """A match statement whose first case is ``case _ if guard:`` (``cond``), if one is there.

        That case compiles to its guard alone, with the subject left on the stack: the
        guard's true arm pops it before the body, its false arm goes on with the next case.
        """
        if not state.stack or not isinstance(state.stack[-1], ast.expr) or cond.true_kept or cond.false_kept \
                or cond.true_block is None or cond.false_block is None \
                or not same_stack(cond.false_state.stack, state.stack):
            return None
        popped = same_stack(cond.true_state.stack, state.stack[:-1])  # a body that only jumps, looked through
        if not popped and not (same_stack(cond.true_state.stack, state.stack)
                               and cond.true_block.instrs[0].op == "POP_TOP"):
            return None
        reader = Reader(self.walker, state.stack[:-1], state.stack[-1], [])
        try:
            body = (cond.true_block, 0) if popped else after((cond.true_block, 0))
            rest = reader.cases((cond.false_block, 0), first=False)
        except NotAPattern:
            return None
        if rest is None:
            return None
        first = Case(wildcard(), cond.expr, (cond.head, len(cond.head.instrs) - 1), body, (cond.false_block, 0), True)
        return self.build_match(cond.head, reader, [first] + rest, state, stop)

    def build_match(self, block: Block, reader: Reader, cases: List[Case], state: State,
                    stop: Optional[Block]) -> Next:
        """Emit the match statement of ``cases`` (starting in ``block``); return where the code goes on."""
        subject, outer = reader.subject, reader.outer
        fail = cases[-1].fail
        inside = [case.body[0] for case in cases] + reader.fail_blocks
        # After other cases, a last ``case _ if guard`` is followed by a ``case _``: a last
        # wildcard compiles to no pattern code, so the case read is the one before it.
        default = fail is not None and len(cases) > 1 and is_wildcard(cases[-1].pattern)
        end = self.match_end(block, inside, fail, default, cases[-1].body[0], stop)
        inner = end if end is not None else stop
        node = ast.Match(subject=subject, cases=[])
        ends = []
        for case in cases:
            body = State(outer)
            ends.append(self.walker.walk(case.body[0], inner, body, first=case.body[1]))
            node.cases.append(ast.match_case(pattern=case.pattern, guard=case.guard, body=body.stmts or [ast.Pass()]))
        if fail is not None and (default or (end is not None and (fail[0] is not end or fail[1]))):
            body = State(outer)  # ``case _:``, whose code follows the failure code of the last case
            ends.append(self.walker.walk(fail[0], inner, body, first=fail[1]))
            node.cases.append(ast.match_case(pattern=wildcard(), guard=None, body=body.stmts or [ast.Pass()]))
            fail = None
        if any(e is not None and e is not inner for e in ends):
            raise self.ctx.error("a case of a match statement ends elsewhere", block)
        state.stack[:] = outer
        state.stmts.append(node)
        if end is not None:
            return (end,)
        if fail is not None:
            self.ctx.resume[fail[0]] = fail[1]
            return (fail[0],)
        return (inner if any(e is not None for e in ends) else None,)

    def match_end(self, head: Block, inside: List[Block], fail: Optional[Pos], default: bool, last: Block,
                  stop: Optional[Block]) -> Optional[Block]:
        """The block after a match statement, None if control never gets there.

        The code of the statement is laid out from ``head`` on, holding the ``inside``
        blocks (the first block of each body, the failure code), and the statement ends
        at the first block where that code leaves only to it (or by loop control).  The
        last case's failure target ``fail`` is that end unless a ``case _`` follows there
        (certainly so with ``default``).  Nothing marks where the last body of the
        statement ends (the ``case _``'s, else the ``last`` case's if no failure code
        follows it): the end is where code before that body goes too.  A statement that
        ends a loop's body ends where the walk stops (the loop's header).
        """
        blocks = self.ctx.cfg.blocks
        escapes = set()
        for loop in self.ctx.loops:
            escapes.update(b for b in (loop.header, loop.exit, loop.brk) if b is not None)
            escapes.update(loop.break_blocks)
        low = head.index
        succs = {b: [through(s) for s in b.succs()] for b in blocks[low:]}

        def closed(e: int) -> bool:
            return all(low <= s.index <= e or s in escapes for b in blocks[low:e] for s in succs[b])

        def reached(end: Block, before: int) -> bool:
            return any(end in succs[b] for b in blocks[low:before])

        need = max([low + 1] + [b.index + 1 for b in inside])
        tail = last
        if fail is not None and fail[0].index > last.index:
            tail = fail[0]
            if not default and not fail[1] and need <= tail.index and closed(tail.index):
                return tail
        if fail is not None and low <= fail[0].index:
            need = max(need, fail[0].index + 1)
        for e in range(need, len(blocks) + 1):
            if not closed(e):
                continue
            for end in (blocks[e] if e < len(blocks) and blocks[e] not in escapes else None, stop):
                if end is not None and reached(end, tail.index):
                    return end
            if e == len(blocks) or not reached(blocks[e], e):
                return None  # the code never leaves: every case returns, raises or jumps out of a loop
        return None
