"""The round trip's stand-in for a perfect decompiler: a function's own source, re-laid-out.

``roundtrip.py --decompiler identity`` prints each function's ``def`` node with
``ast.unparse`` (3.8 has none: its source text), with private names mangled the way
the compiler did inside the class, as a perfect decompiler would print them. It
validates the harness: identity mode must report (close to) 100% identical.
"""
from __future__ import annotations

import ast
import copy
import io
import tokenize
from types import CodeType
from typing import Dict, List, Optional, Tuple

from framescope.decompiler.verify.equivalence import _reindent


class SourceIndex:
    """Maps a function's code object to its ``def`` node in the module's syntax tree."""

    def __init__(self, source: str, tree: ast.Module) -> None:
        self.source = source
        #: (first line incl. decorators, name) -> (def node, name of the class whose private names apply)
        self.defs: Dict[Tuple[int, str], Tuple[ast.AST, Optional[str]]] = {}
        self._index(tree, None)

    def _index(self, node: ast.AST, private: Optional[str]) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)):
                first = min([child.lineno] + [d.lineno for d in child.decorator_list])
                self.defs[(first, child.name)] = (child, private)
                self._index(child, private)
            elif isinstance(child, ast.ClassDef):
                self._index(child, child.name)
            else:
                self._index(child, private)

    def identity(self, code: CodeType) -> str:
        """The function's own source, as a perfect decompiler would print it."""
        found = self.defs.get((code.co_firstlineno, code.co_name))
        if found is None:
            raise LookupError("no def of %s at line %d" % (code.co_name, code.co_firstlineno))
        node, private = found
        if hasattr(ast, "unparse"):
            node = copy.deepcopy(node)
            node.decorator_list = []
            return ast.unparse(_Mangler(private).visit(node)) + "\n"
        lines = io.StringIO(self.source).readlines()[node.lineno - 1:node.end_lineno]
        text = _reindent("".join(lines), node.col_offset, "")
        return _mangle_tokens(text, private) if private else text


def _mangled(name: str, private: Optional[str]) -> str:
    """``name`` as the compiler stores it inside class ``private`` (private name mangling)."""
    stripped = (private or "").lstrip("_")
    if stripped and name.startswith("__") and not name.endswith("__") and "." not in name:
        return "_" + stripped + name
    return name


class _Mangler(ast.NodeTransformer):
    """Applies private name mangling to a syntax tree, as compiling it inside its class did."""

    def __init__(self, private: Optional[str]) -> None:
        self.private = private

    def visit_Name(self, node: ast.Name) -> ast.AST:
        node.id = _mangled(node.id, self.private)
        return node

    def visit_Attribute(self, node: ast.Attribute) -> ast.AST:
        self.generic_visit(node)
        node.attr = _mangled(node.attr, self.private)
        return node

    def visit_arg(self, node: ast.arg) -> ast.AST:
        self.generic_visit(node)
        node.arg = _mangled(node.arg, self.private)
        return node

    def visit_ExceptHandler(self, node: ast.ExceptHandler) -> ast.AST:
        self.generic_visit(node)
        if node.name:
            node.name = _mangled(node.name, self.private)
        return node

    def visit_Global(self, node: ast.Global) -> ast.AST:
        node.names = [_mangled(name, self.private) for name in node.names]
        return node

    visit_Nonlocal = visit_Global

    def visit_Import(self, node: ast.Import) -> ast.AST:
        for alias in node.names:
            if alias.asname:
                alias.asname = _mangled(alias.asname, self.private)
            else:
                alias.name = _mangled(alias.name, self.private)
        return node

    def visit_ClassDef(self, node: ast.ClassDef) -> ast.AST:
        # The class statement itself is in the outer class; its body in this one.
        for field in ("decorator_list", "bases", "keywords"):
            setattr(node, field, [self.visit(item) for item in getattr(node, field)])
        outer, self.private = self.private, node.name
        node.body = [self.visit(item) for item in node.body]
        self.private = outer
        return node


def _mangle_tokens(text: str, private: str) -> str:
    """Private name mangling on source text (3.8, which has no ``ast.unparse``).

    Names that follow ``def``/``class`` and keyword arguments of calls keep
    their spelling, as the compiler does; nested classes are not told apart.
    """
    tokens = list(tokenize.generate_tokens(io.StringIO(text).readline))
    edits: List[Tuple[int, int, int, str]] = []
    brackets: List[str] = []
    significant = [t for t in tokens if t.type not in (tokenize.NL, tokenize.COMMENT)]
    for index, token in enumerate(significant):
        if token.type == tokenize.OP and token.string in "([{":
            before = significant[index - 2].string if index >= 2 else ""
            brackets.append("def" if token.string == "(" and before == "def" else "other")
        elif token.type == tokenize.OP and token.string in ")]}":
            brackets.pop()
        elif token.type == tokenize.NAME:
            previous = significant[index - 1].string if index else ""
            following = significant[index + 1].string if index + 1 < len(significant) else ""
            keyword_argument = following == "=" and brackets and brackets[-1] == "other"
            if previous in ("def", "class", "import") or keyword_argument:
                continue
            new = _mangled(token.string, private)
            if new != token.string:
                edits.append((token.start[0], token.start[1], token.end[1], new))
    lines = io.StringIO(text).readlines()
    for row, start, end, new in reversed(edits):
        line = lines[row - 1]
        lines[row - 1] = line[:start] + new + line[end:]
    return "".join(lines)
