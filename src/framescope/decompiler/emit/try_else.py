"""Whether the code after a try statement was its ``else`` clause: the order of the locals tells.

When every except clause of a try statement leaves (``return``, ``raise``, ``break``,
``continue``), the code after the statement runs only after the body, as an ``else``
clause would. 3.12+ moves the clauses out of line, to the end of the function, so both
spellings compile to the same instructions; so does a clause that ends the function with
the implicit ``return None`` (3.10+ copies it into the clause). On 3.11 the layout shows
which one the source wrote, but the structurer does not always read it.

The code object tells them apart: the compiler numbers a function's locals in the order its
code generator first meets them, and from 3.11 on it generates an ``else`` clause before
the except clauses, the code after the statement after them. A local that only the clauses use
numbered before one that only the code after uses means that code followed the statement;
the other way round, it was the ``else``. Without such locals the structurer's choice stays.
"""
import ast
from types import CodeType
from typing import Iterable, List, Optional, Set

from framescope.decompiler.emit.blocks import rewrite_blocks
from framescope.decompiler.frontend import versions

_LEAVING = (ast.Return, ast.Raise, ast.Continue, ast.Break)
_SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)


def place_after_try(code: CodeType, body: List[ast.stmt]) -> List[ast.stmt]:
    """``body`` (a function's) with the code after each try statement whose clauses all leave
    put in its ``else`` clause or after it, as the numbering of ``code``'s locals shows."""
    if not versions.ELSE_GENERATED_FIRST:
        return body  # the locals come in one order either way
    return Placer(code, body).block(body, ends_function=True)


class Placer:
    """Moves the code after try statements, for one function body."""

    def __init__(self, code: CodeType, body: List[ast.stmt]) -> None:
        #: The compiler's number of each local.
        self.index = {name: i for i, name in enumerate(code.co_varnames)}
        self.arguments = set(code.co_varnames[:arguments_count(code)])
        self.body = body

    def block(self, stmts: List[ast.stmt], ends_function: bool = False) -> List[ast.stmt]:
        """``stmts`` with each of its try statements placed, nested blocks first."""
        for stmt in stmts:
            rewrite_blocks(stmt, self.block)
        for at in range(len(stmts) - 1, -1, -1):
            stmt = stmts[at]
            if isinstance(stmt, ast.Try) and stmt.handlers and not stmt.finalbody:
                stmts = self.place(stmts, at, ends_function and at == len(stmts) - 1)
        return stmts

    def place(self, stmts: List[ast.stmt], at: int, last: bool) -> List[ast.stmt]:
        stmt = stmts[at]
        if stmt.orelse and all(always_leaves(h.body) or last for h in stmt.handlers):
            if self.after_clauses(stmt.handlers, stmt.orelse) is True:
                for handler in stmt.handlers:
                    if not always_leaves(handler.body):
                        handler.body.append(ast.Return(value=None))  # the implicit one, copied
                rest, stmt.orelse = stmt.orelse, []
                return stmts[:at + 1] + rest + stmts[at + 1:]
        elif not stmt.orelse and stmts[at + 1:] and all(always_leaves(h.body) for h in stmt.handlers):
            if self.after_clauses(stmt.handlers, stmts[at + 1:]) is False:
                stmt.orelse = stmts[at + 1:]
                return stmts[:at + 1]
        return stmts

    def after_clauses(self, handlers: List[ast.ExceptHandler], code: List[ast.stmt]) -> Optional[bool]:
        """True when the locals say ``code`` came after the except clauses ``handlers``, False
        when before them (an ``else``), None when they do not say.

        Each hypothesis orders the statements (and each clause's ``except`` line) one way; a
        local is first met in the first of them that uses it. The numbering must agree with
        the order that gives, where two locals are first met in different statements."""
        clauses = [unit for handler in handlers for unit in [except_line(handler)] + [[s] for s in handler.body]]
        after = [[stmt] for stmt in code]
        skip = {id(node) for node in list(handlers) + list(code)}
        elsewhere = names(self.body, skip) | self.arguments
        local = sorted((name for name in names(handlers) | names(code) if name in self.index and name not in elsewhere),
                       key=self.index.__getitem__)
        fits_after = ordered(local, clauses + after)
        fits_else = ordered(local, after + clauses)
        if fits_after != fits_else:
            return fits_after
        return None

def ordered(local: List[str], units: List[list]) -> bool:
    """Whether the locals ``local``, in the compiler's numbering, are first met in the given
    order of ``units`` (lists of nodes) without going back to an earlier unit."""
    first: dict = {}
    for rank, unit in enumerate(units):
        for name in names([node for node in unit if node is not None]):
            first.setdefault(name, rank)
    ranks = [first[name] for name in local]
    return all(a <= b for a, b in zip(ranks, ranks[1:]))


def except_line(handler: ast.ExceptHandler) -> list:
    """What an ``except`` line evaluates and binds, as nodes."""
    return [handler.type] + ([ast.Name(id=handler.name, ctx=ast.Store())] if handler.name else [])


def arguments_count(code: CodeType) -> int:
    flags = code.co_flags
    return code.co_argcount + code.co_kwonlyargcount + bool(flags & 0x04) + bool(flags & 0x08)


def always_leaves(stmts: List[ast.stmt]) -> bool:
    """Whether ``stmts`` never go on to what follows them (a last ``return``, ``raise``,
    ``break`` or ``continue``, maybe in both arms of an ``if``)."""
    if not stmts:
        return False
    last = stmts[-1]
    if isinstance(last, ast.If):
        return always_leaves(last.body) and always_leaves(last.orelse)
    return isinstance(last, _LEAVING)


def names(nodes: Iterable[ast.AST], skip: Set[int] = frozenset()) -> Set[str]:  # type: ignore[assignment]
    """The names that ``nodes`` bind or use in their own scope (not nested functions' or
    classes' bodies), leaving out the nodes whose ids are in ``skip``."""
    found: Set[str] = set()
    todo = [node for node in nodes if id(node) not in skip]
    while todo:
        node = todo.pop()
        if isinstance(node, ast.Name):
            found.add(node.id)
        elif isinstance(node, ast.ExceptHandler) and node.name:
            found.add(node.name)
        elif isinstance(node, ast.alias):
            found.add(node.asname or node.name.split(".")[0])
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            found.add(node.name)
        elif type(node).__name__ in ("MatchAs", "MatchStar") and getattr(node, "name", None):
            found.add(node.name)  # type: ignore[attr-defined]
        elif type(node).__name__ == "MatchMapping" and getattr(node, "rest", None):
            found.add(node.rest)  # type: ignore[attr-defined]
        todo.extend(child for child in children(node) if id(child) not in skip)
    return found


def children(node: ast.AST) -> Iterable[ast.AST]:
    """The child nodes of ``node`` evaluated in its scope: a nested function's or class's
    decorators, defaults and bases, not its body."""
    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
        return list(node.decorator_list) + list(node.args.defaults) + [d for d in node.args.kw_defaults if d]
    if isinstance(node, ast.ClassDef):
        return list(node.decorator_list) + list(node.bases) + [k.value for k in node.keywords]
    if isinstance(node, ast.Lambda):
        return list(node.args.defaults) + [d for d in node.args.kw_defaults if d]
    return ast.iter_child_nodes(node)
