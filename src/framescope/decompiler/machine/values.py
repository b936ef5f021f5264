"""The values of machine-code decompiling: closure cells, lists built here, and which
expressions may wait on the stack (`is_pure`)."""
import ast
from typing import Any, List, Optional, Set, Tuple

from framescope.decompiler.frontend.instructions import Instr
from framescope.decompiler.simulate import marks
from framescope.decompiler.simulate import values as v
from framescope.decompiler.simulate.state import name


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
