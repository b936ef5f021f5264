"""Round-trip benchmark: decompile every function of a corpus, recompile it, compare.

Two corpora: ``stdlib`` (the default), a fixed set of large standard-library modules,
and ``wide``, the pure-Python sources of the packages pinned in ``corpus_packages.txt``
(torch's _dynamo, fx and _inductor, transformers, sympy, pandas, ...; fetched once with
``benchmarks/corpus.py fetch``). For the running interpreter each source file is read
(never imported) and compiled (files this version cannot compile are counted and
skipped); every function code object is decompiled with ``framescope.decompile``
(``machine=False``), the output recompiled with ``recompile_function`` and compared with
a reference: the module re-laid-out by ``ast.unparse(ast.parse(source))`` and compiled
(3.8 has no ``ast.unparse``: the original compile is the reference). Each function is

* *identical*: the recompiled instructions equal the reference's one for one
  (``identical.py``: NOP, EXTENDED_ARG, CACHE dropped, superinstructions split,
  jumps as instruction indexes, constants and nested code compared recursively,
  lines and positions ignored);
* *equivalent*: framescope's equivalence check passes, but not identical;
* *refused*: ``DecompilationError``;
* *wrong*: anything else (another exception, output that does not recompile or is
  not equivalent, more than ``--timeout`` seconds).

Then the most frequent first differences of the equivalent ones, refusal reasons and
wrong results, so the decompiler can be improved in order of frequency.

``--decompiler=identity`` replaces the decompiler by ``ast.unparse`` of the
function's own source node (``roundtrip_standin.py``). It validates the harness
and both comparisons: it must report close to 100% identical on every version.

Run with ``PYTHONPATH=src python benchmarks/roundtrip.py [options]``.
"""
from __future__ import annotations

import argparse
import ast
import collections
import contextlib
import dis
import functools
import hashlib
import io
import json
import os
import platform
import re
import signal
import sys
import time
import tokenize
import warnings
import zipfile
from types import CodeType
from typing import Callable, Dict, Iterator, List, NamedTuple, Optional, Set, Tuple

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))  # runpy (Pyodide) does not add it

import corpus  # noqa: E402
import identical  # noqa: E402
from roundtrip_report import (OUTCOMES, format_packages, format_reasons, format_row,  # noqa: E402
                              format_table)
from roundtrip_sample import SurveyCache, sample  # noqa: E402
from roundtrip_standin import SourceIndex  # noqa: E402

from framescope import DecompilationError  # noqa: E402
from framescope.decompiler.verify.equivalence import find_difference, recompile_function  # noqa: E402

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


# -- the files of a corpus ---------------------------------------------------------------------


class Unit(NamedTuple):
    """One source file of a corpus."""

    #: The package it is counted for ("stdlib" for the standard-library corpus).
    package: str
    #: The module name (stdlib) or path inside the wheel (wide): stable across interpreters.
    name: str
    path: str


def stdlib_units(only: Optional[str], missing: List[str]) -> List[Unit]:
    """The modules of MODULES (or only ``only``) this interpreter has; the others go to ``missing``."""
    root = stdlib_root()
    units = []
    for entry in [only] if only else MODULES:
        names = entry if isinstance(entry, tuple) else (entry,)
        for name in names:
            found = read_source(name, root)
            if found is not None:
                units.append(Unit("stdlib", name, found[0]))
                break
        else:
            missing.append(names[0])
    return units


def wide_units(directory: str, package: Optional[str], only: Optional[str]) -> List[Unit]:
    units = [Unit(item.package, item.name, item.path) for item in corpus.source_files(directory)]
    if package:
        units = [unit for unit in units if unit.package == package]
    if only:
        units = [unit for unit in units if unit.name == only or unit.name.endswith("/" + only)]
    return units


def load_text(unit: Unit) -> str:
    if unit.package == "stdlib":
        found = read_source(unit.name, stdlib_root())
        assert found is not None
        return found[1]
    with open(unit.path, "rb") as handle:
        return _decode(handle.read())


def compile_quietly(text: str, path: str) -> CodeType:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # invalid escape sequences and the like in old sources
        return compile(text, path, "exec", dont_inherit=True)


_UNCOMPILABLE = (SyntaxError, ValueError, UnicodeDecodeError, RecursionError, MemoryError, LookupError)


# -- the benchmark -----------------------------------------------------------------------------


def new_counts() -> Dict[str, int]:
    keys = ("files", "rejected_files", "no_reference_files", "population", "functions", "harness") + OUTCOMES
    return dict.fromkeys(keys, 0)


class Ranking:
    """What went how often, with a first example of each."""

    def __init__(self) -> None:
        self.counts = collections.Counter()  # type: collections.Counter
        self.examples: Dict[str, str] = {}

    def add(self, what: str, example: str) -> None:
        self.counts[what] += 1
        self.examples.setdefault(what, example)

    def rows(self) -> List[list]:
        return [[what, count, self.examples[what]] for what, count in self.counts.most_common()]


class Tally:
    """Counts of one run."""

    def __init__(self) -> None:
        #: package -> new_counts(); the standard-library corpus is the one package "stdlib".
        self.packages: Dict[str, Dict[str, int]] = {}
        #: Decompiled without an exception; whose output compiled and defined the function.
        self.decompiled = 0
        self.recompiled = 0
        #: Refused functions whose unchecked output (``verify=False``) still compiles.
        self.unchecked_compiles = 0
        #: Sampled functions that no ``def`` wrote (3.12+ type alias values, 3.14 ``__annotate__``).
        self.compiler_made = 0
        #: Seconds spent inside the decompiler.
        self.seconds = 0.0
        self.differences = Ranking()
        self.refusals = Ranking()
        #: Failures inside the decompiler, counted apart from refusals.
        self.internal = Ranking()
        self.wrong = Ranking()
        #: Modules of the list that this interpreter does not have.
        self.missing: List[str] = []
        #: ("module:qualname", decompiled text or "refused: <reason>") of each function decompiled.
        self.outputs: List[Tuple[str, str]] = []

    def counts(self, package: str) -> Dict[str, int]:
        return self.packages.setdefault(package, new_counts())

    def total(self, key: str) -> int:
        return sum(counts[key] for counts in self.packages.values())


_DIFFERENT_OPS = re.compile(r"offset \d+ (\w+).* vs offset \d+ (\w+)")
_DIFFERENT_ATTRIBUTE = re.compile(r"\b(co_\w+|docstring|exception handler)\b")
_QUOTED = re.compile(r"'[^']*'|\"[^\"]*\"")
_NUMBER = re.compile(r"\b\d+\b")


def reason_key(reason: str) -> str:
    """Group a failure reason: its text up to the first colon, plus what differed.

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


def refusal_key(error: DecompilationError) -> str:
    """A refusal's reason with names and numbers taken out (plus the opcode an unsupported one has)."""
    key = _NUMBER.sub("N", _QUOTED.sub("'...'", reason_key(error.reason)))
    if error.opname and key.startswith("unsupported"):
        key += " " + error.opname
    return key


def _first_line(text: str, width: int = 70) -> str:
    line = (text.strip().splitlines() or [""])[0]
    return line if len(line) <= width else line[:width - 3] + "..."


class Timeout(BaseException):
    """A function's round trip took too long (a BaseException: the decompiler must not catch it)."""


@contextlib.contextmanager
def time_limit(seconds: float) -> Iterator[None]:
    """Raise Timeout after ``seconds`` of wall time, where the platform has interval timers."""
    if not seconds or not hasattr(signal, "setitimer"):
        yield
        return

    def expire(signum: int, frame: object) -> None:
        raise Timeout()

    previous = signal.signal(signal.SIGALRM, expire)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


class Result(NamedTuple):
    #: One of OUTCOMES.
    outcome: str
    #: For ranking: the first difference, refusal reason or failure ("" when identical).
    what: str
    #: The whole story on one line.
    detail: str


def round_trip(decompile: Callable[[CodeType], str], code: CodeType, reference: CodeType, where: str,
               tally: Tally, show: bool) -> Result:
    started = time.perf_counter()
    try:
        text = decompile(code)
    except DecompilationError as error:
        tally.seconds += time.perf_counter() - started
        tally.outputs.append((where, "refused: %s" % error))
        if getattr(decompile, "func", None) is not None and unchecked_compiles(code):
            tally.unchecked_compiles += 1
        return Result("internal" if error.internal else "refused", refusal_key(error), str(error))
    except Exception as error:  # every other failure is counted, not fatal
        tally.seconds += time.perf_counter() - started
        return Result("wrong", "%s: %s" % (type(error).__name__, _first_line(str(error), 60)),
                      "%s: %s" % (type(error).__name__, error))
    tally.seconds += time.perf_counter() - started
    tally.decompiled += 1
    tally.outputs.append((where, text))
    if show:
        print("---- %s: decompiled\n%s" % (where, text))
    try:
        recompiled = recompile_function(text, code)
    except (SyntaxError, ValueError, RecursionError, MemoryError) as error:
        what = "does not recompile: %s: %s" % (type(error).__name__, _first_line(str(error), 50))
        return Result("wrong", what, what)
    tally.recompiled += 1
    difference = find_difference(reference, recompiled)
    if difference is not None:
        return Result("wrong", "not equivalent: " + difference.kind, "not equivalent: " + difference.message)
    not_identical = identical.first_difference(reference, recompiled)
    if not_identical is None:
        return Result("identical", "", "identical")
    return Result("equivalent", not_identical.kind, "not identical: " + not_identical.detail)


def unchecked_compiles(code: CodeType) -> bool:
    """Whether what a user asking for unchecked output (``verify=False``) would get compiles."""
    import framescope

    try:
        recompile_function(framescope.decompile(code, verify=False, machine=False), code)
        return True
    except Exception:
        return False


def run_function(decompile: Callable[[CodeType], str], code: CodeType, reference: CodeType, where: str,
                 package: str, tally: Tally, args: argparse.Namespace) -> None:
    show = bool(args.function)
    try:
        with time_limit(args.timeout):
            result = round_trip(decompile, code, reference, where, tally, show)
    except Timeout:
        what = "timeout: more than %gs" % args.timeout
        result = Result("wrong", what, what)
    except RecursionError as error:
        result = Result("wrong", "RecursionError", "RecursionError: %s" % error)
    tally.counts(package)[result.outcome] += 1
    tally.counts(package)["functions"] += 1
    ranking = {"equivalent": tally.differences, "refused": tally.refusals, "internal": tally.internal,
               "wrong": tally.wrong}
    if result.outcome in ranking:
        ranking[result.outcome].add(result.what, where)
    if show or (args.verbose and result.outcome != "identical"):
        print("%s: %s: %s" % (where, result.outcome, result.detail))
    if show and args.verbose and result.outcome != "identical":
        print("---- reference")
        dis.dis(reference)
        print("---- recompiled")
        dis.dis(recompile_function(decompile(code), code))


def survey(units: List[Unit], tally: Tally, function: Optional[str], cache: SurveyCache
           ) -> Dict[str, List[Tuple[str, tuple]]]:
    """Compile every file; the (file, key) of each function, per package. Counts files and rejects."""
    candidates: Dict[str, List[Tuple[str, tuple]]] = {}
    for unit in units:
        counts = tally.counts(unit.package)
        counts["files"] += 1
        items = candidates.setdefault(unit.package, [])
        keys = cache.get(unit.name, unit.path)
        if keys is None:
            keys = function_keys(unit)
            cache.put(unit.name, unit.path, keys)
        if keys is False:
            counts["rejected_files"] += 1
            continue
        for key in keys:
            if function and function not in (key[-1][0], qualname(key)):
                continue
            if key[-1][0] != "__annotate__":  # made by 3.14 for annotations, without a def
                items.append((unit.name, key))
    cache.save()
    return candidates


def function_keys(unit: Unit) -> object:
    """The keys of the functions of a file, or False when this interpreter cannot compile it."""
    try:
        module = compile_quietly(load_text(unit), unit.path)
    except _UNCOMPILABLE:
        return False
    return [key for key, _ in functions(module)]


def check_unit(unit: Unit, chosen: Set[Tuple[str, tuple]], tally: Tally, args: argparse.Namespace) -> None:
    """The round trip of the chosen functions of one file."""
    counts = tally.counts(unit.package)
    source = load_text(unit)
    try:
        tree = ast.parse(source)
        original = compile_quietly(source, unit.path)
        reference = compile_quietly(ast.unparse(tree), unit.path) if hasattr(ast, "unparse") else original
    except _UNCOMPILABLE:
        counts["no_reference_files"] += 1  # ast.unparse did not round-trip the file
        return
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
        if (unit.name, key) not in chosen:
            continue
        if (code.co_firstlineno, code.co_name) not in index.defs:
            tally.compiler_made += 1  # 3.12+ type alias values and bounds
            continue
        where = "%s:%s" % (unit.name, qualname(key))
        ref = references.get(key)
        if ref is None:
            counts["harness"] += 1
            tally.wrong.add("harness: no reference function", where)
            continue
        run_function(decompile, code, ref, where, unit.package, tally, args)


def run(args: argparse.Namespace) -> Tally:
    tally = Tally()
    if args.corpus == "stdlib":
        units = stdlib_units(args.module, tally.missing)
    else:
        units = wide_units(args.corpus_dir, args.package, args.module)
    cache = SurveyCache(os.path.join(args.corpus_dir, "survey") if args.corpus == "wide" else None)
    candidates = survey(units, tally, args.function, cache)
    for package, items in candidates.items():
        tally.counts(package)["population"] = len(items)
    chosen = sample(candidates, args.sample, args.seed)
    if args.limit is not None:
        ordered = [item for items in candidates.values() for item in items if item in chosen]
        chosen = set(ordered[:args.limit])
    files = {name for name, _ in chosen}
    started, package = time.time(), None
    for unit in units:
        if unit.name not in files:
            continue
        if args.progress and unit.package != package:
            package = unit.package
            print("%6.0fs %s" % (time.time() - started, package), file=sys.stderr, flush=True)
        check_unit(unit, chosen, tally, args)
    return tally


def row(tally: Tally, args: argparse.Namespace) -> dict:
    """The run's figures, as written by --json and read by roundtrip_all.py."""
    python = platform.python_version()
    if sys.platform == "emscripten":
        python += " (Pyodide)"
    data = {
        "python": python,
        "platform": sys.platform,
        "decompiler": args.decompiler,
        "corpus": args.corpus,
        "sample": args.sample,
        "seed": args.seed,
        "missing_modules": tally.missing,
        "files": tally.total("files"),
        "rejected_files": tally.total("rejected_files"),
        "no_reference_files": tally.total("no_reference_files"),
        "functions": tally.total("functions"),
        "harness": tally.total("harness"),
        "compiler_made": tally.compiler_made,
        "decompiled": tally.decompiled,
        "recompiled": tally.recompiled,
        "unchecked_compiles": tally.unchecked_compiles,
        "decompile_seconds": round(tally.seconds, 3),
        "differences": tally.differences.rows(),
        "refusals": tally.refusals.rows(),
        "internal_errors": tally.internal.rows(),
        "wrong_results": tally.wrong.rows(),
    }
    for outcome in OUTCOMES:
        data[outcome] = tally.total(outcome)
    if args.corpus == "wide":
        data["packages"] = tally.packages
    return data


def main(argv: Optional[List[str]] = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--decompiler", choices=("framescope", "identity"), default="framescope",
                        help="framescope.decompile, or the ast.unparse stand-in that validates the harness")
    parser.add_argument("--corpus", choices=("stdlib", "wide"), default="stdlib",
                        help="standard-library modules, or the packages of corpus_packages.txt")
    parser.add_argument("--corpus-dir", default=corpus.default_dir(),
                        help="where `corpus.py fetch` unpacked the wide corpus (default: %(default)s)")
    parser.add_argument("--package", help="wide corpus: only this package")
    parser.add_argument("--module", help="only this module (stdlib: its name; wide: a path inside the wheel)")
    parser.add_argument("--function", help="only functions with this co_name or dotted path; prints each case")
    parser.add_argument("--sample", type=int, help="check N functions, spread evenly over the packages "
                        "(the same ones on every interpreter, as far as each has them)")
    parser.add_argument("--seed", type=int, default=0, help="which sample (default 0)")
    parser.add_argument("--limit", type=int, help="stop after N functions")
    parser.add_argument("--timeout", type=float, default=30.0,
                        help="seconds a function's round trip may take before it counts as wrong (default 30)")
    parser.add_argument("--verbose", action="store_true", help="print every failure (with --function: dis too)")
    parser.add_argument("--progress", action="store_true", help="print each package as it starts, on stderr")
    parser.add_argument("--top", type=int, default=15, help="how many of each ranking to list")
    parser.add_argument("--json", help="write the row (figures and rankings) to this file")
    parser.add_argument("--outputs", help="write each function's decompiled text (or refusal), hashed, to "
                        "this file: two runs give the same file exactly when every output is the same")
    args = parser.parse_args(argv)
    tally = run(args)
    if args.outputs:
        with open(args.outputs, "w", encoding="utf-8") as handle:
            for where, text in tally.outputs:
                digest = hashlib.sha1(text.encode("utf-8", "surrogatepass")).hexdigest()
                handle.write("%s %s\n" % (digest, where))
    data = row(tally, args)
    print(describe(data))
    print(format_table([format_row(data)]))
    if args.corpus == "wide":
        print(format_packages(data))
    print(format_reasons(data, args.top))
    if args.json:
        with open(args.json, "w") as handle:
            json.dump(data, handle, indent=1)
    return 0


def describe(data: dict) -> str:
    """The line above the table: what was read, and what was left out."""
    parts = ["corpus=%s" % data["corpus"], "decompiler=%s" % data["decompiler"],
             "%d files" % data["files"]]
    if data["missing_modules"]:
        parts.append("missing here: %s" % ", ".join(data["missing_modules"]))
    parts.append("%d do not compile on this version" % data["rejected_files"])
    if data["no_reference_files"]:
        parts.append("%d without a reference (ast.unparse does not round-trip them)" % data["no_reference_files"])
    if data["sample"]:
        parts.append("sample of %d, seed %d" % (data["sample"], data["seed"]))
    return ", ".join(parts)


if __name__ == "__main__":
    sys.exit(main())
