"""Round-trip benchmark: decompile every function of a fixed set of standard-library modules.

For the running interpreter, each module's source file is read (never
imported) and compiled; every function code object is decompiled with
``framescope.decompile``, the output is recompiled with
``recompile_function`` and compared with ``compare_code`` against a
reference: the module re-laid-out by ``ast.unparse(ast.parse(source))``
(3.8 has no ``ast.unparse``: the original compile is the reference).

``--decompiler=identity`` replaces the decompiler by ``ast.unparse`` of the
function's own source node (on 3.8 its source text), with private names
mangled the way the compiler did, as a perfect decompiler would print them.
It validates the harness and the equivalence checker: it must report close
to 100% equivalent on every version.

Run with ``PYTHONPATH=src python benchmarks/roundtrip.py [options]``.
"""
from __future__ import annotations

import argparse
import ast
import collections
import copy
import dis
import functools
import hashlib
import io
import json
import os
import platform
import re
import sys
import time
import tokenize
import zipfile
from types import CodeType
from typing import Callable, Dict, Iterator, List, Optional, Tuple

from framescope import DecompilationError
from framescope.decompiler.verify.equivalence import _reindent, find_difference, recompile_function

# Large, varied modules.  An entry with alternatives takes the first one the
# running interpreter has: the pure-Python datetime moved to _pydatetime in
# 3.12, sre_parse became re._parser in 3.11.
MODULES = [
    "argparse", "ast", "asyncio.base_events", "asyncio.tasks", "bdb", "calendar", "collections",
    "configparser", "contextlib", "copy", "csv", "dataclasses", ("_pydatetime", "datetime"), "_pydecimal",
    "difflib", "dis", "doctest", "email.message", "email.utils", "enum", "fractions", "ftplib", "functools",
    "gettext", "glob", "gzip", "heapq", "http.client", "http.cookiejar", "imaplib", "inspect", "ipaddress",
    "json.decoder", "json.encoder", "locale", "logging", "mailbox", "optparse", "pathlib", "pdb", "pickle",
    "platform", "plistlib", "pprint", "pydoc", "random", ("re._parser", "sre_parse"), "selectors",
    "shlex", "shutil", "smtplib", "statistics", "string", "subprocess", "tarfile", "textwrap", "threading",
    "tokenize", "traceback", "typing", "unittest.case", "urllib.parse", "urllib.request", "uuid",
    "weakref", "xml.dom.minidom", "zipfile",
]

_CO_OPTIMIZED_NEWLOCALS = 0x01 | 0x02


def stdlib_root() -> str:
    """The folder (or zip archive, as in Pyodide) holding the standard library's sources."""
    return os.path.dirname(os.__file__)


def read_source(name: str, root: str) -> Optional[Tuple[str, str]]:
    """(path, text) of a standard-library module's source, without importing it; None if absent."""
    relative = name.replace(".", "/")
    candidates = [relative + ".py", relative + "/__init__.py"]
    if os.path.isdir(root):
        for candidate in candidates:
            path = os.path.join(root, candidate)
            if os.path.isfile(path):
                with open(path, "rb") as handle:
                    return path, _decode(handle.read())
        return None
    with zipfile.ZipFile(root) as archive:
        members = set(archive.namelist())
        for candidate in candidates:
            if candidate in members:
                return root + "/" + candidate, _decode(archive.read(candidate))
    return None


def _decode(data: bytes) -> str:
    encoding, _ = tokenize.detect_encoding(io.BytesIO(data).readline)
    # Line numbers in the syntax tree count \r\n and \r as one line end, like \n.
    return data.decode(encoding).replace("\r\n", "\n").replace("\r", "\n")


def is_function(code: CodeType) -> bool:
    """A function's code: not a module or class body, lambda or comprehension.

    The compiler also makes functions that no ``def`` wrote; ``run`` keeps
    only those with a ``def`` in the source.
    """
    if code.co_flags & _CO_OPTIMIZED_NEWLOCALS != _CO_OPTIMIZED_NEWLOCALS:
        return False
    return not code.co_name.startswith("<")


def functions(code: CodeType, path: Tuple[Tuple[str, int], ...] = ()) -> Iterator[Tuple[tuple, CodeType]]:
    """Every function below ``code``, keyed by the path of (co_name, index among same-named siblings)."""
    seen = collections.Counter()  # type: collections.Counter
    for const in code.co_consts:
        if isinstance(const, CodeType):
            key = path + ((const.co_name, seen[const.co_name]),)
            seen[const.co_name] += 1
            if is_function(const):
                yield key, const
            yield from functions(const, key)


def qualname(key: tuple) -> str:
    return ".".join(name for name, _ in key)


# -- the identity stand-in ---------------------------------------------------------------------


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


# -- the benchmark -----------------------------------------------------------------------------


class Tally:
    """Counts of one run."""

    def __init__(self) -> None:
        #: Function code objects tried.
        self.functions = 0
        #: Decompiled without an exception.
        self.decompiled = 0
        #: Whose output compiled and defined the function.
        self.recompiled = 0
        #: Whose recompiled code was equivalent to the reference.
        self.equivalent = 0
        #: Decompiler raised DecompilationError.
        self.decompilation_errors = 0
        #: Of those, how many have unchecked output (``verify=False``) that still compiles.
        self.unchecked_compiles = 0
        #: Decompiler raised anything else.
        self.other_errors = 0
        #: Seconds spent inside the decompiler.
        self.seconds = 0.0
        #: Failure reason -> count.
        self.reasons = collections.Counter()  # type: collections.Counter
        #: Failure reason -> first example "module:qualname".
        self.examples: Dict[str, str] = {}
        #: Modules read.
        self.modules = 0
        #: Modules of the list that this interpreter does not have.
        self.missing: List[str] = []
        #: ("module:qualname", decompiled text or "refused: <reason>") of each function decompiled.
        self.outputs: List[Tuple[str, str]] = []

    def fail(self, reason: str, where: str) -> None:
        self.reasons[reason] += 1
        self.examples.setdefault(reason, where)


_DIFFERENT_OPS = re.compile(r"offset \d+ (\w+).* vs offset \d+ (\w+)")
_DIFFERENT_ATTRIBUTE = re.compile(r"\b(co_\w+|docstring|exception handler)\b")


def reason_key(reason: str) -> str:
    """Group a decompiler's failure reason: its text up to the first colon, plus what differed.

    A reason that quotes a ``compare_code`` message ("recompiled code
    differs: f: offset 4 LOAD_FAST 'x' vs offset 4 LOAD_CONST 1") is grouped
    by the opnames or the attribute that differ, not by function and offset.
    """
    reason = _first_line(reason, 400)
    head = reason.split(":", 1)[0]
    ops = _DIFFERENT_OPS.search(reason)
    if ops:
        left, right = ops.groups()
        return "%s: %s" % (head, left if left == right else left + "/" + right)
    attribute = _DIFFERENT_ATTRIBUTE.search(reason)
    if attribute and head != reason:
        return "%s: %s" % (head, attribute.group(1))
    return _first_line(reason, 60)


def _first_line(text: str, width: int = 70) -> str:
    line = (text.strip().splitlines() or [""])[0]
    return line if len(line) <= width else line[:width - 3] + "..."


def run_function(
    decompile: Callable[[CodeType], str],
    code: CodeType,
    reference: CodeType,
    where: str,
    tally: Tally,
    show: bool,
    verbose: bool,
) -> None:
    tally.functions += 1
    started = time.perf_counter()
    try:
        text = decompile(code)
    except DecompilationError as error:
        tally.seconds += time.perf_counter() - started
        tally.outputs.append((where, "refused: %s" % error))
        tally.decompilation_errors += 1
        tally.fail("DecompilationError: " + reason_key(error.reason), where)
        _report(show or verbose, where, "DecompilationError: %s" % error)
        import framescope

        if getattr(decompile, "func", None) is framescope.decompile:
            try:  # what a user asking for unchecked output (verify=False) would get
                recompile_function(framescope.decompile(code, verify=False, machine=False), code)
                tally.unchecked_compiles += 1
            except Exception:
                pass
        return
    except Exception as error:  # every other failure is counted, not fatal
        tally.seconds += time.perf_counter() - started
        tally.other_errors += 1
        tally.fail("%s: %s" % (type(error).__name__, _first_line(str(error), 60)), where)
        _report(show or verbose, where, "%s: %s" % (type(error).__name__, error))
        return
    tally.seconds += time.perf_counter() - started
    tally.decompiled += 1
    tally.outputs.append((where, text))
    if show:
        print("---- %s: decompiled\n%s" % (where, text))
    try:
        recompiled = recompile_function(text, code)
    except (SyntaxError, ValueError) as error:
        tally.fail("does not recompile: %s: %s" % (type(error).__name__, _first_line(str(error), 50)), where)
        _report(show or verbose, where, "does not recompile: %s: %s" % (type(error).__name__, error))
        return
    tally.recompiled += 1
    difference = find_difference(reference, recompiled)
    if difference is None:
        tally.equivalent += 1
        if show:
            print("---- %s: equivalent" % where)
        return
    tally.fail("not equivalent: " + difference.kind, where)
    _report(show or verbose, where, "not equivalent: " + difference.message)
    if show and verbose:
        print("---- reference")
        dis.dis(reference)
        print("---- recompiled")
        dis.dis(recompiled)


def _report(enabled: bool, where: str, text: str) -> None:
    if enabled:
        print("%s: %s" % (where, text))


def run(args: argparse.Namespace) -> Tally:
    tally = Tally()
    root = stdlib_root()
    wanted = [args.module] if args.module else MODULES
    for entry in wanted:
        names = entry if isinstance(entry, tuple) else (entry,)
        found = None
        for name in names:
            found = read_source(name, root)
            if found is not None:
                break
        if found is None:
            tally.missing.append(names[0])
            continue
        path, source = found
        tally.modules += 1
        tree = ast.parse(source)
        original = compile(source, path, "exec", dont_inherit=True)
        if hasattr(ast, "unparse"):
            reference = compile(ast.unparse(tree), path, "exec", dont_inherit=True)
        else:
            reference = original
        references = dict(functions(reference))
        index = SourceIndex(source, tree)
        if args.decompiler == "identity":
            decompile: Callable[[CodeType], str] = index.identity
        else:
            import framescope

            # The source decompiler alone: what the machine-code decompiler would answer for
            # a refused function is no source to compare.
            decompile = functools.partial(framescope.decompile, machine=False)
        for key, code in functions(original):
            if (code.co_firstlineno, code.co_name) not in index.defs:
                continue  # made by the compiler: 3.12+ type alias values and bounds, 3.14 __annotate__
            where = "%s:%s" % (name, qualname(key))
            if args.function and args.function not in (code.co_name, qualname(key)):
                continue
            if args.limit is not None and tally.functions >= args.limit:
                return tally
            ref = references.get(key)
            if ref is None:
                tally.functions += 1
                tally.fail("harness: no reference function", where)
                continue
            run_function(decompile, code, ref, where, tally, bool(args.function), args.verbose)
    return tally


def row(tally: Tally, decompiler: str) -> dict:
    """The run's figures, as written by --json and read by roundtrip_all.py."""
    return {
        "python": platform.python_version(),
        "platform": sys.platform,
        "decompiler": decompiler,
        "modules": tally.modules,
        "missing_modules": tally.missing,
        "functions": tally.functions,
        "decompiled": tally.decompiled,
        "recompiled": tally.recompiled,
        "equivalent": tally.equivalent,
        "decompilation_errors": tally.decompilation_errors,
        "unchecked_compiles": tally.unchecked_compiles,
        "other_errors": tally.other_errors,
        "decompile_seconds": round(tally.seconds, 3),
        "reasons": [[reason, count, tally.examples[reason]] for reason, count in tally.reasons.most_common()],
    }


HEADER = ("python", "functions", "decompiled", "recompiled", "equivalent", "DecompErr", "other",
          "unchecked", "time")


def format_row(data: dict) -> Tuple[str, ...]:
    total = data["functions"] or 1

    def percent(count: int) -> str:
        return "%.1f%%" % (100.0 * count / total)

    return (
        data["python"],
        str(data["functions"]),
        percent(data["decompiled"]),
        percent(data["recompiled"]),
        percent(data["equivalent"]),
        percent(data["decompilation_errors"]),
        percent(data["other_errors"]),
        percent(data["recompiled"] + data.get("unchecked_compiles", 0)),
        "%.1fs" % data["decompile_seconds"],
    )


def format_table(rows: List[Tuple[str, ...]]) -> str:
    table = [HEADER] + rows
    widths = [max(len(line[column]) for line in table) for column in range(len(HEADER))]
    return "\n".join(
        "  ".join(cell.ljust(width) if column == 0 else cell.rjust(width)
                  for column, (cell, width) in enumerate(zip(line, widths)))
        for line in table
    )


def format_reasons(data: dict, top: int) -> str:
    reasons = data["reasons"][:top]
    if not reasons:
        return "no failures"
    lines = ["most common failures (count, reason, first example):"]
    for reason, count, example in reasons:
        lines.append("%6d  %s  [%s]" % (count, reason, example))
    return "\n".join(lines)


def main(argv: Optional[List[str]] = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--decompiler", choices=("framescope", "identity"), default="framescope",
                        help="framescope.decompile, or the ast.unparse stand-in that validates the harness")
    parser.add_argument("--module", help="only this module (any importable name; its source is read)")
    parser.add_argument("--function", help="only functions with this co_name or dotted path; prints each case")
    parser.add_argument("--limit", type=int, help="stop after N functions")
    parser.add_argument("--verbose", action="store_true", help="print every failure (with --function: dis too)")
    parser.add_argument("--top", type=int, default=15, help="how many failure reasons to list")
    parser.add_argument("--json", help="write the row (figures and reasons) to this file")
    parser.add_argument("--outputs", help="write each function's decompiled text (or refusal), hashed, to "
                        "this file: two runs give the same file exactly when every output is the same")
    args = parser.parse_args(argv)
    tally = run(args)
    if args.outputs:
        with open(args.outputs, "w", encoding="utf-8") as handle:
            for where, text in tally.outputs:
                digest = hashlib.sha1(text.encode("utf-8", "surrogatepass")).hexdigest()
                handle.write("%s %s\n" % (digest, where))
    data = row(tally, args.decompiler)
    print("%d modules (missing here: %s), decompiler=%s"
          % (tally.modules, ", ".join(tally.missing) or "none", args.decompiler))
    print(format_table([format_row(data)]))
    print(format_reasons(data, args.top))
    if args.json:
        with open(args.json, "w") as handle:
            json.dump(data, handle, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
