"""The two arms of a branch: comparing and joining them, and how a statement list ends.

Helpers of `statements.Structurer` that work on the statements and values an arm built,
not on the walk.
"""
import ast
import copy
from typing import List, Optional

from framescope.decompiler.frontend import versions
from framescope.decompiler.graph.cfg import Block
from framescope.decompiler.simulate import marks
from framescope.decompiler.simulate.expressions import is_pinned
from framescope.decompiler.simulate.sametree import same_tree
from framescope.decompiler.simulate.state import AssertionErrorName, is_none_return
from framescope.decompiler.graph.traversal import follow_jumps, jump_chain, reachable
from framescope.decompiler.structure.conditions import Cond, negate, passing_jump


def both_arms_leave(test: ast.expr, body: List[ast.stmt], orelse: List[ast.stmt]) -> List[ast.stmt]:
    """The statements of an ``if`` neither of whose arms goes on (the one laid out first is the body)."""
    shared = common_tail(body, orelse)
    written = [marks.marked(arm[-1], marks.WRITTEN_RETURN, None) if arm else None for arm in (body, orelse)]
    if shared and written[0] != written[1]:
        shared = []  # a return the source wrote, which more than one way reaches, and another: no copies
    if shared and len(body) == len(shared) <= len(orelse):
        # The arm laid out first is only the exit the other one ends with too: a guard
        # clause (``if not ok: return``) before the rest, the rest maybe that exit alone.
        return [ast.If(test=test, body=body, orelse=[])] + orelse
    if shared:
        # 3.11+ copies the code after an if/else into both arms when it is short.
        body, orelse = body[:len(body) - len(shared)], orelse[:len(orelse) - len(shared)]
        return ([if_else(test, body, orelse)] if body or orelse else []) + shared
    if body and orelse and ends_control(body):
        # The other arm follows the body, which leaves.
        return [ast.If(test=test, body=body, orelse=[])] + orelse
    return [if_else(test, body, orelse)]


def if_else(test: ast.expr, body: List[ast.stmt], orelse: List[ast.stmt], passed: bool = False) -> ast.If:
    """``if test: body else: orelse``, with a negated test when only the else arm has statements
    (``if a is b: pass`` and an ``else`` where ``not`` would flip the operator; and when the
    empty arm is ``passed``: a jump of its own past the other arm)."""
    if not body and not is_pinned(test) and not passed:
        test, body, orelse = negate(test), orelse, []
    return ast.If(test=test, body=body or [ast.Pass()], orelse=orelse)


def passed_arm(blocks: List[Block], cond: Cond, true_end: Optional[Block], false_end: Optional[Block],
               body: List[ast.stmt], orelse: List[ast.stmt]):
    """``(test, leaving arm, the statements after, where the walk goes on, the state there)``
    when the test falls into a jump of its own laid out right after it and the other arm
    returns or raises: the source wrote ``if test: pass`` and an ``else`` (the jump is the ``pass``
    arm's way past it); else None."""
    fall = passing_jump(cond, blocks)
    if fall is None:
        return None
    target = follow_jumps(fall)
    if false_end is None and leaves_function(orelse) and cond.true_block in (fall, target) \
            and not asserted(orelse, cond.false_block):
        return cond.expr, orelse, body, true_end, cond.true_state
    if true_end is None and leaves_function(body) and cond.false_block in (fall, target) \
            and not is_pinned(cond.expr) and not asserted(body, cond.true_block):
        # (else ``if a in b: <leaves>`` jumps alike)
        return negate(cond.expr), body, orelse, false_end, cond.false_state
    return None


def asserted(arm: List[ast.stmt], block: Optional[Block]) -> bool:
    """Whether an arm that raises the compiler's ``AssertionError`` is the failure of an ``assert``
    on the test, not ``assert False`` in an ``else``: 3.14 borrows its loads only when the
    test's jump leads to it directly (`versions.BORROWED_LOADS`)."""
    if not (versions.BORROWED_LOADS and block is not None and arm and isinstance(arm[-1], ast.Raise)):
        return False
    exc = arm[-1].exc
    if isinstance(exc, ast.Call):
        exc = exc.func
    return isinstance(exc, AssertionErrorName) and any(ins.is_borrowed_load() for ins in block.instrs)


def leaves_function(arm: List[ast.stmt]) -> bool:
    """Whether an arm ends with a return or raise of its own."""
    return bool(arm) and isinstance(arm[-1], (ast.Return, ast.Raise))


def passed_then_else(blocks: List[Block], cond: Cond, body: List[ast.stmt],
                     orelse: List[ast.stmt]) -> Optional[ast.If]:
    """``if test: pass`` and an ``else``, when the empty arm is the last test falling into a lone
    jump of its own laid out right after it: the ``pass`` arm's way past the ``else``
    (3.8, 3.9 and 3.11 keep it; ``if not test:`` and the other arm alone would have no such
    jump). None otherwise."""
    fall = passing_jump(cond, blocks)
    if fall is None or fall.jump is None or fall.jump.index < fall.index:
        return None  # a jump back is the loop's own (3.12+ jumps back only that way)
    passed = jump_chain(fall)
    if not body and orelse and cond.true_block in passed and cond.false_block not in passed:
        return ast.If(test=cond.expr, body=[ast.Pass()], orelse=orelse)
    if body and not orelse and cond.false_block in passed and cond.true_block not in passed:
        return ast.If(test=negate(cond.expr), body=[ast.Pass()], orelse=body)
    return None


def unreached_else_jump(blocks: List[Block], test: Block, staying: Optional[Block]) -> bool:
    """Whether a lone jump no path reaches sits right before ``staying``, the arm of the branch
    ending ``test`` laid out after the other one, which always leaves (``raise``, ``break``,
    ``continue``): the body's jump past an ``else``, which 3.8-3.9 keep after a body that
    cannot reach it (only the one after a ``return`` goes). Without the ``else`` there would
    be no such jump."""
    if staying is None or not test.index + 1 < staying.index < len(blocks):
        return False
    before = blocks[staying.index - 1]
    return before.is_lone_jump() and unreached_jump(before)


def unreached_jump(block: Block, depth: int = 0) -> bool:
    """Whether no path reaches ``block``: only unreached lone jumps go there (the jump past the
    ``else`` of an inner ``if`` that always leaves goes to the outer one's, before threading)."""
    return depth < 20 and all(pred.is_lone_jump() and unreached_jump(pred, depth + 1) for pred in block.preds)


def written_else_end(blocks: List[Block], cond: Cond, stop: Optional[Block]) -> Optional[Block]:
    """Where an ``if`` whose first arm always leaves ends, when the unreached jump past its
    ``else`` (see `unreached_else_jump`) shows it: the first block along that jump's way that
    the ``else`` reaches too. None otherwise."""
    for staying in (cond.true_block, cond.false_block):
        if unreached_else_jump(blocks, cond.last_test(), staying):
            reached = reachable([staying], stop=stop)
            return next((block for block in jump_chain(blocks[staying.index - 1])[1:] if block in reached), None)
    return None


def releases(instrs) -> bool:
    """Whether ``instrs`` only release handled exceptions (``POP_EXCEPT``, ``name = None; del name``)."""
    i = 0
    while i < len(instrs):
        if instrs[i].op == "POP_EXCEPT":
            i += 1
        elif (i + 2 < len(instrs) and instrs[i].op == "LOAD_CONST" and instrs[i].arg is None
              and instrs[i + 1].op.startswith("STORE_") and instrs[i + 2].op.startswith("DELETE_")
              and instrs[i + 1].arg == instrs[i + 2].arg):
            i += 3
        else:
            return False
    return True


def is_bare_raise(instrs) -> bool:
    """A lone ``raise`` or the re-raise ending a ``finally`` (3.11+ copies such small exits after
    ``POP_EXCEPT`` into an except clause)."""
    return len(instrs) == 1 and instrs[0].op in ("RAISE_VARARGS", "RERAISE") and instrs[0].arg == 0


def path_leaves_function(path: Optional[List[Block]]) -> bool:
    """Whether an exit path (see `exit_path`) ends in a return or raise."""
    return bool(path) and path[-1].last.op in ("RETURN_VALUE", "RAISE_VARARGS", "RERAISE")


def uses_earlier(a: ast.AST, b: ast.AST, below: list) -> bool:
    """Whether ``a`` and ``b`` both use one of the expressions of ``below`` (a stack under a test)."""
    return any(isinstance(x, ast.expr) and uses(a, x) and uses(b, x) for x in below)


def uses(tree: ast.AST, node: ast.AST) -> bool:
    """Whether ``node`` itself (not an equal copy) is part of ``tree``."""
    return any(sub is node for sub in ast.walk(tree))


def merge_difference(a: ast.AST, b: ast.AST, join) -> Optional[ast.AST]:
    """``a`` with the one subexpression where it differs from ``b`` replaced by ``join(part_a, part_b)``."""
    if same_tree(a, b):
        return a
    if type(a) is type(b):
        fields = [name for name in a._fields if not same_value(getattr(a, name, None), getattr(b, name, None))]
        if len(fields) == 1:
            name = fields[0]
            x, y = getattr(a, name), getattr(b, name)
            if isinstance(a, ast.Slice):  # a missing bound is None
                x = ast.Constant(value=None) if x is None else x
                y = ast.Constant(value=None) if y is None else y
            if isinstance(x, ast.AST) and isinstance(y, ast.AST):
                part = merge_difference(x, y, join)
                if part is None:
                    return None
                node = copy.copy(a)
                setattr(node, name, part)
                return node
            if isinstance(x, list) and isinstance(y, list) and len(x) == len(y):
                where = [i for i in range(len(x)) if not same_value(x[i], y[i])]
                if len(where) == 1 and isinstance(x[where[0]], ast.AST) and isinstance(y[where[0]], ast.AST):
                    part = merge_difference(x[where[0]], y[where[0]], join)
                    if part is None:
                        return None
                    node = copy.copy(a)
                    setattr(node, name, x[:where[0]] + [part] + x[where[0] + 1:])
                    return node
    if isinstance(a, ast.expr) and isinstance(b, ast.expr) and not isinstance(a, (ast.Starred, ast.Slice)):
        return join(a, b)
    return None


def same_value(x, y) -> bool:
    """Whether two field values print alike under ``ast.dump``: trees, lists of them, plain values."""
    if isinstance(x, ast.AST) or isinstance(y, ast.AST):
        return isinstance(x, ast.AST) and isinstance(y, ast.AST) and same_tree(x, y)
    if isinstance(x, list) and isinstance(y, list):
        return len(x) == len(y) and all(same_value(a, b) for a, b in zip(x, y))
    return repr(x) == repr(y)


def laid_out_first(a: Optional[Block], b: Optional[Block]) -> bool:
    return a is not None and b is not None and a.index < b.index


#: The attribute of a ``return`` statement that holds the source line of its instruction.
LINE = "_framescope_line"


def mark_line(stmt: ast.stmt, line: Optional[int]) -> None:
    """Note the line the instruction that made ``stmt`` has (see `written_apart`)."""
    setattr(stmt, LINE, line)


def written_apart(a: ast.stmt, b: ast.stmt) -> bool:
    """Whether two look-alike returns of a value are on lines of their own: each written in
    the source, not one the compiler copied (a copy keeps its line)."""
    if not versions.COPIES_EXITS:
        return True  # no release before 3.10 copies a return: each was written
    if is_none_return(a):
        return False  # the implicit return takes the line of each place it was copied to
    x, y = getattr(a, LINE, None), getattr(b, LINE, None)
    return x is not None and y is not None and x != y


def common_tail(a: List[ast.stmt], b: List[ast.stmt]) -> List[ast.stmt]:
    """The statements both lists end with, when those end in a return or raise that the
    compiler copied into both."""
    n = 0
    while n < min(len(a), len(b)) and same_tree(a[-1 - n], b[-1 - n]) and not written_apart(a[-1 - n], b[-1 - n]):
        n += 1
    if not n or not isinstance(a[-1], (ast.Return, ast.Raise)):
        return []
    return a[len(a) - n:]


def is_substantial(body: List[ast.stmt]) -> bool:
    """Whether an arm is worth un-nesting: several statements, or a compound one."""
    return len(body) > 1 or any(isinstance(s, (ast.If, ast.For, ast.While, ast.Try, ast.With, ast.AsyncFor,
                                                 ast.AsyncWith)) for s in body)


def ends_control(body: List[ast.stmt]) -> bool:
    """Whether a statement list always leaves (its last statement returns, raises, breaks...)."""
    if not body:
        return False
    last = body[-1]
    if isinstance(last, (ast.Return, ast.Raise, ast.Break, ast.Continue)):
        return True
    if isinstance(last, ast.If):
        return ends_control(last.body) and ends_control(last.orelse)
    return False


def threaded_break(arm: List[ast.stmt], block: Optional[Block]) -> bool:
    """Whether an arm that is only ``break`` is the test's own jump to the loop's exit (the
    source wrote ``if not ok: break``), not a jump of its own after the other arm."""
    return len(arm) == 1 and isinstance(arm[0], ast.Break) and block is not None \
        and not all(ins.op == "POP_TOP" for ins in block.instrs[:-1 if block.last.op == "JUMP" else None])
