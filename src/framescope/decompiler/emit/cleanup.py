"""Statement-level clean-ups that undo what the compiler adds to a body.

* the implicit ``return None`` at the end of a function (and at the end of each arm
  of a final ``if``, where the compiler duplicated it);
* a class body's ``__module__``/``__qualname__``/``__firstlineno__``/``__static_attributes__``
  stores and ``return __classcell__``;
* comprehension bodies (``for``/``if`` nests around an append) → comprehension nodes.
"""
import ast
import dis
import inspect
from types import CodeType
from typing import List

from framescope.decompiler.emit.annotations import class_annotations, stored_annotations, stringified
from framescope.decompiler.emit.final_else import restore_final_else
from framescope.decompiler.emit.try_else import place_after_try
from framescope.decompiler.frontend import versions
from framescope.decompiler.frontend.bytecode import instructions, is_jump
from framescope.decompiler.frontend.opcodes import sets_up_annotations
from framescope.decompiler.simulate import marks
from framescope.decompiler.simulate.expressions import is_misflipped, negate
from framescope.decompiler.simulate.sametree import same_tree
from framescope.decompiler.simulate.state import AssertionErrorName, is_none_return
from framescope.decompiler.structure.clauses import TRY_NODES
from framescope.decompiler.structure.comprehensions import build, collect
from framescope.errors import DecompilationError

CLASS_HIDDEN = ("__module__", "__qualname__", "__firstlineno__", "__static_attributes__", "__classdict__",
                "__classdictcell__", "__type_params__", "__conditional_annotations__")


def clean_body(body: List[ast.stmt]) -> List[ast.stmt]:
    """Rewrite compiler shapes back into the statements that produce them, recursively."""
    out: List[ast.stmt] = []
    body = list(body)
    for index, stmt in enumerate(body):
        for field in ("body", "orelse", "finalbody"):
            inner = getattr(stmt, field, None)
            if isinstance(inner, list) and inner:
                setattr(stmt, field, clean_body(inner))
        for handler in getattr(stmt, "handlers", ()):
            handler.body = clean_body(handler.body)
        for case in getattr(stmt, "cases", ()):
            case.body = clean_body(case.body)
        if isinstance(stmt, (ast.For, ast.AsyncFor, ast.While)):
            stmt.body = strip_trailing_continue(stmt.body) or [ast.Pass()]
        if is_match(stmt):
            hoist_match_tail(stmt, body, index + 1)
        out.append(as_assert(stmt))
    return out


def is_match(stmt: ast.stmt) -> bool:
    return type(stmt).__name__ == "Match"


def hoist_match_tail(stmt: ast.stmt, body: List[ast.stmt], after: int, returns: bool = False) -> None:
    """Take out of the cases of a match statement the code after it that the compiler copied into them.

    3.10+ copies a short ``return x`` after a match statement (at ``body[after:]``, then
    the function's own ``return None`` if ``returns``) into each case that goes there; the
    code before that copy then only runs when no case matched: it is the statement's
    ``case _``.
    """
    rest = body[after:] + ([ast.Return(value=ast.Constant(value=None))] if returns else [])
    if not rest or not isinstance(rest[-1], (ast.Return, ast.Raise)):
        return
    cases = stmt.cases  # type: ignore[attr-defined]
    tails = [common_length(case.body, rest) for case in cases]
    shared = min([n for n in tails if n] or [0])
    if not shared or any(not n and not last_leaves(case.body) for n, case in zip(tails, cases)):
        return
    before = rest[:len(rest) - shared]
    last = cases[-1]
    if before and last.guard is None and getattr(last.pattern, "pattern", True) is None:
        return  # the last case always matches: the code after the statement is not a ``case _``
    for n, case in zip(tails, cases):
        if n:
            case.body = case.body[:len(case.body) - shared] or [ast.Pass()]
    if before:
        cases.append(ast.match_case(pattern=ast.MatchAs(pattern=None, name=None), guard=None, body=list(before)))
        del body[after:after + len(before)]


def common_length(a: List[ast.stmt], b: List[ast.stmt]) -> int:
    """How many statements ``a`` and ``b`` end with alike."""
    n = 0
    while n < min(len(a), len(b)) and same_tree(a[-1 - n], b[-1 - n]):
        n += 1
    return n


def last_leaves(body: List[ast.stmt]) -> bool:
    return bool(body) and isinstance(body[-1], (ast.Return, ast.Raise, ast.Break, ast.Continue))


def strip_trailing_continue(body: List[ast.stmt]) -> List[ast.stmt]:
    """Drop ``continue`` where the loop body ends anyway (the compiler's jumps are the same)."""
    if not body:
        return body
    last = body[-1]
    if isinstance(last, ast.Continue):
        return body if marks.marked(last, marks.WRITTEN_CONTINUE) else body[:-1]
    if isinstance(last, ast.If):
        if not marks.marked(last, marks.WRITTEN_ELSE):
            last.body = strip_trailing_continue(last.body) or [ast.Pass()]
        last.orelse = strip_trailing_continue(last.orelse)
    elif isinstance(last, (ast.With, ast.AsyncWith)) and not versions.FINALLY_SUBROUTINES:
        # 3.8 leaves a with statement by ``continue`` through its own exit call (``POP_FINALLY``).
        last.body = strip_trailing_continue(last.body) or [ast.Pass()]
    elif isinstance(last, ast.Try) and not last.finalbody:
        if last.orelse:
            last.orelse = strip_trailing_continue(last.orelse)
        else:
            last.body = strip_trailing_continue(last.body) or [ast.Pass()]
        for handler in last.handlers:
            if not (handler.name and versions.FINALLY_SUBROUTINES):
                handler.body = strip_trailing_continue(handler.body) or [ast.Pass()]
            # 3.8 leaves ``except E as name`` by ``continue`` through a call of the clean-up
            # of ``name``, not by running into it: that ``continue`` stays.
    return body


def as_assert(stmt: ast.stmt) -> ast.stmt:
    """``if not test: raise AssertionError(msg)`` with the compiler's own AssertionError → ``assert``."""
    if isinstance(stmt, ast.Raise) and stmt.cause is None and versions.ASSERT_FALSE_UNTESTED:
        # 3.10+ drops the test of ``assert False, msg``, not the assertion (3.8 and 3.9 keep it).
        exc = stmt.exc.func if isinstance(stmt.exc, ast.Call) else stmt.exc
        if isinstance(exc, AssertionErrorName):
            node = as_assert(ast.If(test=ast.UnaryOp(op=ast.Not(), operand=ast.Constant(value=False)),
                                    body=[stmt], orelse=[]))
            marks.mark(node, marks.UNTESTED)
            return node
    if not (isinstance(stmt, ast.If) and not stmt.orelse and len(stmt.body) == 1):
        return stmt
    if marks.marked(stmt.body[0], marks.UNTESTED):  # the branch around it is its test
        return ast.Assert(test=negate(stmt.test), msg=stmt.body[0].msg)  # type: ignore[attr-defined]
    raise_ = stmt.body[0]
    if not isinstance(raise_, ast.Raise) or raise_.cause is not None:
        return stmt
    exc, msg = raise_.exc, None
    test = stmt.test.operand if isinstance(stmt.test, ast.UnaryOp) and isinstance(stmt.test.op, ast.Not) else stmt.test
    # 3.8 loads AssertionError as a global, as ``raise`` does; but an ``if`` on a constant
    # test leaves no branch in the bytecode, an ``assert`` does (``assert False, msg``); and
    # an ``if`` on a flipped ``is``/``in`` test recompiles to the other operator, an
    # ``assert`` on the test as it was does not.
    flipped = versions.ASSERT_LOADS_GLOBAL and is_misflipped(stmt.test)
    spelled_by_assert = isinstance(test, ast.Constant) or flipped
    kinds = (AssertionErrorName, ast.Name) if spelled_by_assert else (AssertionErrorName,)
    if isinstance(exc, ast.Call) and isinstance(exc.func, kinds) and exc.func.id == "AssertionError" \
            and len(exc.args) == 1 and not exc.keywords:
        msg = exc.args[0]
    elif not (isinstance(exc, kinds) and exc.id == "AssertionError"):
        return stmt
    return ast.Assert(test=negate(stmt.test), msg=msg)


def strip_return_none(body: List[ast.stmt]) -> List[ast.stmt]:
    """Drop the trailing ``return None`` the compiler adds to every function."""
    if not body:
        return body
    last = body[-1]
    if is_none_return(last) and not marks.marked(last, marks.WRITTEN_RETURN):
        return body[:-1]
    if isinstance(last, ast.If):
        if last.body and marks.marked(last.body[-1], marks.WRITTEN_RETURN) and last.orelse:
            # ``if test: ... return`` then the rest of the function: the return was written.
            rest, last.orelse = last.orelse, []
            return body + strip_return_none(rest)
        last.body = strip_return_none(last.body) or [ast.Pass()]
        if last.orelse:
            last.orelse = strip_return_none(last.orelse)
    if is_match(last):
        for case in last.cases:  # type: ignore[attr-defined]
            case.body = strip_return_none(case.body) or [ast.Pass()]
    if versions.COPIES_EXITS and isinstance(last, TRY_NODES) and not last.finalbody:
        # A try statement that ends the function: 3.10+ copies the implicit return into the
        # end of its body (or else clause) and of each except clause.
        if last.orelse:
            last.orelse = strip_return_none(last.orelse)
        else:
            last.body = strip_return_none(last.body) or [ast.Pass()]
        for handler in last.handlers:
            handler.body = strip_return_none(handler.body) or [ast.Pass()]
    return body


def function_body(code: CodeType, body: List[ast.stmt]) -> List[ast.stmt]:
    body = clean_body(body if wrote_final_return(code, body) else strip_return_none(body))
    matches = [i for i, stmt in enumerate(body) if is_match(stmt)]
    if matches:  # the cases of a match statement that ends the function may end with its return
        hoist_match_tail(body[matches[-1]], body, matches[-1] + 1, returns=True)
    body = restore_final_else(code, body)
    body = place_after_try(code, body)
    if code.co_flags & (inspect.CO_GENERATOR | inspect.CO_ASYNC_GENERATOR) and not contains_yield(body):
        # A generator whose yields were all unreachable: keep it a generator.
        body.append(ast.If(test=ast.Constant(value=False), body=[ast.Expr(value=ast.Yield(value=None))],
                           orelse=[]))
    return body


def wrote_final_return(code: CodeType, body: List[ast.stmt]) -> bool:
    """Whether the source wrote the ``return None`` that ends ``body`` after an ``if`` or
    ``while`` (or the ones that end the clauses of a final try statement): 3.10+ copies the
    implicit one into each way there (it has no line of its own), so one ``return None`` that
    more than one way reaches, and no other copy, was written."""
    if not (versions.COPIES_EXITS and ends_where_exits_meet(body)):
        return False
    exits, final_reached, any_reached = none_returns(code)
    written = sum(1 for stmt in body for node in walk_same_scope(stmt) if is_none_return(node))
    # A try statement's clean-up code comes after the return its clauses meet at.
    reached = any_reached if isinstance(body[-1], TRY_NODES) else final_reached
    return reached and exits == written


def ends_where_exits_meet(body: List[ast.stmt]) -> bool:
    """Whether ``body`` ends with ``return None`` after an ``if`` or ``while``, or with a try
    statement: places more than one way reaches, so a written ``return None`` stays one."""
    if len(body) >= 2 and isinstance(body[-2], (ast.If, ast.While)) and is_none_return(body[-1]):
        return True
    return bool(body) and isinstance(body[-1], TRY_NODES)


def none_returns(code: CodeType) -> "tuple[int, bool, bool]":
    """How many ``return None`` sequences ``code`` has, whether a jump reaches the last
    instruction's one (besides falling into it), and whether a jump reaches any of them
    (or the release of handled exceptions right before it)."""
    instrs = instructions(code)
    targets = {argval for _, op, _, _, argval in instrs if is_jump(op)}
    count, starts, reached = 0, [], False
    for k, (offset, _, name, arg, _) in enumerate(instrs):
        start = None
        if name == "RETURN_CONST" and code.co_consts[arg] is None:
            start = k
        elif (name == "RETURN_VALUE" and k and instrs[k - 1][2] == "LOAD_CONST"
              and code.co_consts[instrs[k - 1][3]] is None):
            start = k - 1
        if start is not None:
            count, starts = count + 1, starts + [instrs[start][0]]
            reached = reached or any(instrs[j][0] in targets for j in releases_before(instrs, start))
    # The code's last instructions are its last return None when that starts where they do.
    end = warm_end(code, instrs, starts[-1] if starts else None)
    last = instrs[end - 2 if instrs[end - 1][2] == "RETURN_VALUE" else end - 1][0]
    return count, bool(starts) and starts[-1] == last and last in targets, reached


def warm_end(code: CodeType, instrs, after) -> int:
    """Where the code that runs without an exception ends: at the first exception handler
    laid out after offset ``after`` (3.12+ moves handlers, as the clean-up of an inlined
    comprehension, after the function's last return), else at the end."""
    if after is None or not versions.EXCEPTION_TABLE:
        return len(instrs)
    handlers = {entry.target for entry in dis.Bytecode(code).exception_entries}
    return next((k for k, ins in enumerate(instrs) if ins[0] > after and ins[0] in handlers), len(instrs))


def releases_before(instrs, k: int) -> range:
    """The indexes of instruction ``k`` and of the ``POP_EXCEPT``/``POP_BLOCK`` run right before it."""
    first = k
    while first and instrs[first - 1][2] in ("POP_EXCEPT", "POP_BLOCK", "NOP"):
        first -= 1
    return range(first, k + 1)


def contains_yield(body: List[ast.stmt]) -> bool:
    for stmt in body:
        for node in walk_same_scope(stmt):
            if isinstance(node, (ast.Yield, ast.YieldFrom, ast.Await)):
                return True
    return False


def walk_same_scope(node: ast.AST):
    """``ast.walk`` that does not descend into nested functions, lambdas or classes."""
    todo = [node]
    while todo:
        node = todo.pop()
        yield node
        for child in ast.iter_child_nodes(node):
            if not isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)):
                todo.append(child)


def class_body(code: CodeType, body: List[ast.stmt]) -> List[ast.stmt]:
    body = annotations_of(code, clean_body(body))
    out: List[ast.stmt] = []
    hidden: List[str] = []  # the compiler stores each once; a second store is the source's own
    for stmt in body:
        if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name):
            target = stmt.targets[0].id
            if target in CLASS_HIDDEN and target not in hidden:
                hidden.append(target)
                continue
            if target == "__doc__" and isinstance(stmt.value, ast.Constant) and not out:
                out.append(ast.Expr(value=stmt.value))
                continue
        if isinstance(stmt, ast.Return):
            continue  # ``return None`` or ``return __classcell__``
        out.append(stmt)
    return out or [ast.Pass()]


def annotations_of(code: CodeType, body: List[ast.stmt]) -> List[ast.stmt]:
    """A class or module body with its annotated assignments put back."""
    strings = stringified(code)
    if sets_up_annotations(code):
        body = stored_annotations(body, strings)
    return class_annotations(body, strings)


def comprehension(code: CodeType, body: List[ast.stmt], iterable: ast.expr) -> ast.expr:
    """Rebuild a comprehension from the body of its code object (``.0`` is the outer iterable)."""
    kind = code.co_name
    if len(body) == 1 and isinstance(body[0], ast.Return) and \
            isinstance(body[0].value, (ast.ListComp, ast.SetComp, ast.DictComp)):
        node = body[0].value
        first = node.generators[0]
        if not (isinstance(first.iter, ast.Name) and first.iter.id == ".0"):
            raise DecompilationError("comprehension does not iterate over its argument", code_name=kind)
        first.iter = iterable
        return node
    stmts = [s for s in body if not isinstance(s, ast.Return)]
    if kind == "<genexpr>":
        stmts = strip_return_none(body)
    generators: List[ast.comprehension] = []
    element = collect(stmts, generators, kind)
    if not generators:
        raise DecompilationError("comprehension without a loop", code_name=kind)
    first = generators[0]
    if not (isinstance(first.iter, ast.Name) and first.iter.id == ".0"):
        raise DecompilationError("comprehension does not iterate over its argument", code_name=kind)
    first.iter = iterable
    return build(kind, element, generators)
