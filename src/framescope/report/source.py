"""The user's original source, read when the report is made."""
from __future__ import annotations

import ast
import linecache
import tokenize
from dataclasses import dataclass
from typing import List, Optional

# Without a function around the line (module code, unparsable file): lines shown around it.
CONTEXT = 40


@dataclass
class SourceBlock:
    """Consecutive lines of a source file."""

    #: The file they come from.
    filename: str
    #: Number of the first line.
    start: int
    #: The lines, without line ends.
    lines: List[str]

    def __contains__(self, lineno: object) -> bool:
        return isinstance(lineno, int) and self.start <= lineno < self.start + len(self.lines)


def read_lines(filename: str) -> Optional[List[str]]:
    try:
        with tokenize.open(filename) as handle:  # honours the file's coding declaration
            return handle.read().splitlines()
    except (OSError, SyntaxError, UnicodeDecodeError, ValueError):
        return None


def source_block(filename: Optional[str], lineno: Optional[int]) -> Optional[SourceBlock]:
    """The innermost function (with its decorators) around ``lineno``, else lines near it."""
    if not filename or not lineno or lineno < 1:
        return None
    lines = read_lines(filename)
    if lines is None or lineno > len(lines):
        return None
    try:
        tree = ast.parse("\n".join(lines) + "\n")
    except (SyntaxError, ValueError):
        tree = None
    best = None
    for node in ast.walk(tree) if tree is not None else ():
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            first = min([node.lineno] + [d.lineno for d in node.decorator_list])
            last = getattr(node, "end_lineno", None) or node.lineno
            # co_firstlineno is the first decorator's line; a resume function's may lie inside.
            if first <= lineno <= last and (best is None or first >= best[0]):
                best = (first, last)
    if best is None:
        if len(lines) <= 2 * CONTEXT:
            best = (1, len(lines))
        else:
            best = (max(1, lineno - CONTEXT // 4), min(len(lines), lineno + CONTEXT))
    return SourceBlock(filename, best[0], lines[best[0] - 1:best[1]])


def source_line(filename: Optional[str], lineno: Optional[int]) -> Optional[str]:
    """The text of one line, or None."""
    if not filename or not lineno:
        return None
    line = linecache.getline(filename, lineno)
    return line.rstrip("\r\n") or None
