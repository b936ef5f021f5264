"""Reading the cases of a match statement: its pattern code run on `patterns.Node` values.

See `patterns` for how the compiler lays a match statement out. `Reader` walks one
case at a time from the subject's copy to the case body, collecting what the pattern
code tests into the subject's nodes, and checks that every failure path pops back to
one place; it builds no statement (the case bodies are walked by `matches.MatchBuilder`).
"""
import ast
from typing import TYPE_CHECKING, Any, Callable, List, Optional, Tuple

from framescope.decompiler.frontend import versions
from framescope.decompiler.frontend.instructions import CONDITIONAL_JUMPS
from framescope.decompiler.graph.cfg import Block
from framescope.decompiler.simulate.state import State
from framescope.decompiler.structure.conditions import (
    Cond, collect_condition, is_builtin_check, simple_condition,
)
from framescope.decompiler.structure.patterns import (
    Case, EmptyDict, FromEnd, KeyItem, LOADS, Length, MAX_STEPS, Merged, Node, NotAPattern, Pos,
    Rest, Result, Test, after, constant_strings, follow_pops, is_dotted, is_int, is_value,
    is_wildcard, like_assignment, merge, result_size, same_position, same_stack, takes_item,
    to_pattern,
)
from framescope.errors import DecompilationError

if TYPE_CHECKING:
    from framescope.decompiler.structure.statements import Structurer


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
                    if case.body is None or not (same_position(case.body, rest[0].body)
                                                 or same_position(case.body, rest[0].matched)):
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
        if not last and fail is not None and same_position(end, fail):
            # A guard that is always false: the compiler dropped it and the body, the
            # pattern's success goes on with the next case (which keeps the subject).
            return Case(pattern, ast.Constant(value=False), end, None, fail, True)
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
