"""The ``framescope`` command (also ``python -m framescope``).

Exit codes: 0 success; 1 the work ran but part of it failed (for example a
function that could not be decompiled, printed as a comment); 2 bad input (a
missing file, an unreadable or foreign ``.pyc``, an unknown target or module, a
folder that is no dump). ``framescope run`` exits with the program's own exit status.
"""
import argparse
import glob
import os
import subprocess
import sys
from types import CodeType
from typing import List, Optional, Tuple

from framescope import __version__
from framescope.errors import DecompilationError

OK, PARTIAL, BAD_INPUT = 0, 1, 2


EXIT_CODES = """exit codes:
  0  success
  1  the work ran but part of it failed (e.g. a function that could not be
     decompiled, shown as a comment; a report that could not be written)
  2  bad usage or input (missing file, unknown target, folder that is no dump,
     torch not installed for run), reported as one line on stderr
  framescope run exits with the program's own exit status (1 if it raised)
  output read only in part (| head) ends the command quietly, with the exit
  status the work earns"""


def main(argv: Optional[List[str]] = None) -> int:
    return command(argv)


def emit(text: str) -> None:
    """Print ``text`` to stdout. A reader that went away (``framescope decompile x.py | head``)
    has what it wanted: the rest goes nowhere, quietly, as with cat, and the exit status is
    the one the work itself earns, however far the output got."""
    try:
        print(text)
        sys.stdout.flush()
    except BrokenPipeError:
        try:
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, sys.stdout.fileno())
        except (OSError, ValueError):
            pass


def command(argv: Optional[List[str]] = None) -> int:
    parser = argparse.ArgumentParser(
        prog="framescope", description="Read, diff and debug what the CPython compiler and torch.compile did.",
        epilog=EXIT_CODES, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--version", action="version", version="framescope " + __version__)
    commands = parser.add_subparsers(dest="command", metavar="COMMAND")
    decompile = commands.add_parser(
        "decompile", help="print Python source for a .py file, a .pyc file, a module or module:qualname",
        description="Decompile TARGET and print the source. TARGET is a .py file (compiled, then decompiled), "
                    "a .pyc file (one of another Python version is decompiled by that version's interpreter "
                    "when one is installed), module:qualname (a function, method or class to import) or a "
                    "module name such as json.decoder (the whole module, from its cached .pyc when that is "
                    "up to date, else from its source compiled; the module itself is not run, its parent "
                    "packages are imported). Modules are looked up as python -m does, the current folder "
                    "first. A name that is both a module and a file means the module (write ./NAME for the "
                    "file); a name no module has is read as a file.",
        epilog=EXIT_CODES, formatter_class=argparse.RawDescriptionHelpFormatter)
    decompile.add_argument("target", metavar="TARGET", help="file.py, file.pyc, module:qualname or module")
    decompile.add_argument("--indent", type=int, default=4, help="spaces per indentation level (default 4)")
    run = commands.add_parser(
        "run", help="run a program inside framescope.dump and sum up what torch.compile did",
        usage="framescope run [--out DIR] [--no-report] [--debug] [--cold] (script.py | -m module) [args ...]",
        description="Run a script (like python script.py args) or a module (like python -m module args) "
                    "inside framescope.dump(DIR), then print a summary: compiled frames, cache entries, each "
                    "recompile with the failed guard and the user's line, each graph break with its reason "
                    "and place, graph sizes, compile times. Progress lines and the summary go to stderr, so "
                    "the program's stdout stays its own. Options go before the script: everything after it "
                    "is the program's, except a final --out DIR when no --out came before the script "
                    "(framescope run script.py args --out DIR). The HTML report is written to DIR/report. "
                    "With --debug the program also runs inside framescope.debug(), for a debugger that "
                    "starts framescope itself (python -m pdb -m framescope run --debug script.py). "
                    "torch.compile's compile caches stay as the program has them; --cold turns them off.",
        epilog=EXIT_CODES, formatter_class=argparse.RawDescriptionHelpFormatter)
    run.add_argument("--out", default=None, metavar="DIR",
                     help="dump folder (default framescope_dump)")
    run.add_argument("--no-report", dest="report", action="store_false", help="do not write the HTML report")
    run.add_argument("--debug", action="store_true",
                     help="run inside framescope.debug() too, for a debugger (pdb, VS Code) that runs "
                          "framescope: stepping into graph code, breakpoints in files the dump writes later")
    run.add_argument("--cold", action="store_true",
                     help="turn torch.compile's FX graph and AOTAutograd caches off: every graph is compiled "
                          "cold and each of its stages gets a file")
    run.add_argument("-m", dest="module", action="store_true", help="run a module, like python -m")
    run.add_argument("program", nargs=argparse.REMAINDER, help="the script (or module) and its arguments")
    report = commands.add_parser(
        "report", help="write an HTML report of a dump folder",
        description="Write a static HTML report of the dump folder DIR (made by framescope.dump or framescope "
                    "run): per compiled frame the original source beside each cache entry's guard and "
                    "transformed code, the graphs per stage, Inductor's kernels, recompiles and graph breaks, "
                    "linked to each other. Open HTML_DIR/index.html in a browser; it needs no server.",
        epilog=EXIT_CODES, formatter_class=argparse.RawDescriptionHelpFormatter)
    report.add_argument("dump", metavar="DIR", help="the dump folder")
    report.add_argument("--out", metavar="HTML_DIR", help="where to write the report (default DIR/report)")
    explain = commands.add_parser(
        "explain", help="what to fix first: recompiles and graph breaks of a dump folder, ranked",
        description="Print what to change in the program that wrote the dump folder DIR, most worth fixing "
                    "first: frames that reached torch.compile's recompile limit (they run uncompiled for new "
                    "arguments from then on), recompiles with the values behind them, graph breaks with torch's "
                    "code and hints; each with its line and a suggestion, ranked by the compile time it cost.",
        epilog=EXIT_CODES, formatter_class=argparse.RawDescriptionHelpFormatter)
    explain.add_argument("dump", metavar="DIR", help="the dump folder")
    explain.add_argument("--json", action="store_true", help="print the findings as JSON")
    diff = commands.add_parser(
        "diff", help="what torch.compile did differently in two dump folders",
        description="Compare the dump folders A and B (two runs, before and after a change or a torch upgrade, "
                    "or two ranks): frames, cache entries, guards, transformed code, graphs, graph breaks, "
                    "recompiles, failed compiles and compile-cache results added (+), removed (-) or changed (~), "
                    "with unified diffs of the texts that changed. Paths, ids and hashes that differ between any "
                    "two runs are left out of the comparison.",
        epilog="exit codes:\n  0  the dumps are the same\n  1  they differ\n  2  bad input (a folder that is "
               "no dump), one line on stderr", formatter_class=argparse.RawDescriptionHelpFormatter)
    diff.add_argument("a", metavar="A", help="the first dump folder")
    diff.add_argument("b", metavar="B", help="the second dump folder")
    diff.add_argument("--json", action="store_true", help="print the differences as JSON")
    args = parser.parse_args(argv)
    if args.command == "decompile":
        return decompile_command(args.target, args.indent)
    if args.command == "run":
        program, out = trailing_out(args.program, args.out)
        return run_command(program, args.module, out, args.report, args.debug, args.cold)
    if args.command == "report":
        return report_command(args.dump, args.out)
    if args.command == "explain":
        return explain_command(args.dump, args.json)
    if args.command == "diff":
        return diff_command(args.a, args.b, args.json)
    parser.print_help()
    return BAD_INPUT


def trailing_out(program: List[str], out: Optional[str]) -> Tuple[List[str], str]:
    """The program's arguments and the dump folder: a final ``--out DIR`` is framescope's when
    no ``--out`` came before the script."""
    if out is None and len(program) >= 3 and program[-2] == "--out":
        return program[:-2], program[-1]
    if out is None and len(program) >= 2 and program[-1].startswith("--out="):
        return program[:-1], program[-1][len("--out="):]
    return program, out or "framescope_dump"


def error(message: str) -> int:
    print("framescope: error: %s" % " ".join(str(message).split()), file=sys.stderr)
    return BAD_INPUT


def decompile_command(target: str, indent: int) -> int:
    from framescope.decompiler.api import decompile, decompile_class
    from framescope.decompiler.frontend.pyc import ForeignPycError, load_pyc

    if target.endswith(".pyc"):
        try:
            code = load_pyc(target)
        except ForeignPycError as err:
            return rerun_under(err.version, target, indent, err)
        except DecompilationError as err:
            return error(err)
        return print_module(code, indent)
    if target.endswith(".py") or is_path(target):
        return print_file(target, indent)
    if ":" not in target:
        return print_named_module(target, indent)
    try:
        obj = import_target(target)
    except (ImportError, AttributeError, ValueError) as err:
        return error(err)
    except Exception as err:  # the module's own code failed: say so in one line
        return error("importing %s raised %s: %s" % (target.partition(":")[0], type(err).__name__, err))
    try:
        if isinstance(obj, type):
            source, stubbed = decompile_class(obj, indent=indent, partial=True)
        else:
            source, stubbed = decompile(obj, indent=indent), []
    except (DecompilationError, TypeError) as err:
        return error(err)
    emit(source)
    return report_stubs(stubbed)


def is_path(target: str) -> bool:
    return any(sep and sep in target for sep in (os.path.sep, os.path.altsep))


def print_file(path: str, indent: int) -> int:
    """A source file: compiled here, then decompiled."""
    try:
        with open(path, encoding="utf-8") as handle:
            source = handle.read()
        code = compile(source, path, "exec")
    except OSError as err:
        return error("cannot read %s: %s" % (path, err.strerror or err))
    except (SyntaxError, ValueError) as err:
        return error("%s does not compile: %s" % (path, err))
    return print_module(code, indent)


def print_named_module(name: str, indent: int) -> int:
    """A module by its dotted name, or else a file of that name in the current folder."""
    try:
        code = module_code(name)
    except (ImportError, SyntaxError, ValueError, OSError) as err:
        return error(err)
    if code is not None:
        return print_module(code, indent)
    if os.path.isfile(name):
        return print_file(name, indent)
    if not is_module_name(name):
        return error("%r is not a file, a module name or module:qualname" % name)
    return error("no module named %r, and no file of that name" % name)


def module_code(name: str) -> Optional[CodeType]:
    """The code of module ``name`` as importing it would run it (its up-to-date cached .pyc,
    else its source compiled), without running it or writing a .pyc; None if there is no
    such module."""
    if not is_module_name(name):
        return None
    importable_from_current_folder()
    writes = sys.dont_write_bytecode
    sys.dont_write_bytecode = True
    try:
        spec = find_module(name)
        if spec is None:
            return None
        code = spec_code(name, spec)
    finally:
        sys.dont_write_bytecode = writes
    return code


def spec_code(name: str, spec) -> CodeType:
    """The code object the module's loader runs; ValueError for a module that has none."""
    from importlib.machinery import BuiltinImporter

    if spec.loader is BuiltinImporter or spec.origin == "built-in":
        raise ValueError("module %s is built into the interpreter: it has no Python bytecode" % name)
    if spec.submodule_search_locations is not None and spec.origin in (None, "namespace"):
        raise ValueError("%s is a namespace package: it has no code of its own" % name)
    get_code = getattr(spec.loader, "get_code", None)
    code = get_code(name) if get_code is not None else None
    if code is None:
        raise ValueError("module %s is compiled code (%s): it has no Python bytecode" % (name, spec.origin))
    return code


def is_module_name(name: str) -> bool:
    return all(part.isidentifier() for part in name.split("."))


def find_module(name: str):
    """``importlib.util.find_spec``, with its parent packages' failures as one-line errors."""
    import importlib.util

    try:
        return importlib.util.find_spec(name)
    except ModuleNotFoundError:
        return None  # a parent package is missing
    except (ImportError, ValueError):
        raise
    except Exception as err:  # a parent package's own code failed
        parent = name.rpartition(".")[0] or name
        raise ImportError("importing %s raised %s: %s" % (parent, type(err).__name__, err)) from None


def importable_from_current_folder() -> None:
    """Look modules up as ``python -m`` does: the current folder first (unless -P)."""
    if getattr(sys.flags, "safe_path", False):
        return
    here = os.getcwd()
    if "" not in sys.path and here not in sys.path:
        sys.path.insert(0, here)


def print_module(code: CodeType, indent: int) -> int:
    """The whole module, a function that cannot be decompiled as a stub with the reason in a
    comment (see ``decompile(partial=True)``); if the module's own code cannot be, each
    function and class on its own, failures as comments."""
    from framescope.decompiler.api import decompile, decompile_parts, is_function_code

    try:
        source, stubbed = decompile_parts(code, indent=indent)
    except DecompilationError as err:
        module_error = err
    else:
        emit(source)
        return report_stubs(stubbed)
    pieces = ["# framescope: the module as a whole could not be decompiled: %s\n"
              "# framescope: each function and class below is printed from its own code, without the defaults,\n"
              "# decorators and bases the module's code gives it" % module_error]
    refused = ["the module's own code: %s" % module_error]
    for child in code.co_consts:
        if isinstance(child, CodeType) and child.co_name.isidentifier():  # functions and classes
            try:
                if is_function_code(child):
                    text, stubbed = decompile(child, indent=indent), []
                else:  # a class body: a method that cannot be decompiled becomes a stub
                    text, stubbed = decompile_parts(child, indent=indent)
            except DecompilationError as err:
                pieces.append("# framescope: cannot decompile %s" % " ".join(str(err).split()))
                refused.append(str(err))
            else:
                pieces.append(text)
                refused += ["%s.%s: %s" % (child.co_name, stub.qualname, stub.reason) for stub in stubbed]
    emit("\n\n\n".join(pieces))  # PEP 8's two blank lines, as between definitions
    print_refused(refused, "left out, a comment or a stub in their place")
    return PARTIAL


def report_stubs(stubbed: list) -> int:
    """Exit status for source printed with ``stubbed`` functions; each named on stderr."""
    print_refused(["%s: %s" % (stub.qualname, stub.reason) for stub in stubbed],
                  "written as stubs that raise NotImplementedError")
    return PARTIAL if stubbed else OK


def print_refused(lines: List[str], what: str) -> None:
    if lines:
        print("framescope: %d could not be decompiled, %s:" % (len(lines), what), file=sys.stderr)
        for line in lines:
            print("  %s" % " ".join(line.split()), file=sys.stderr)


def import_target(target: str):
    import importlib

    module_name, _, qualname = target.partition(":")
    if not qualname:
        raise ValueError("%r is not a file, a module name or module:qualname" % target)
    importable_from_current_folder()
    obj = importlib.import_module(module_name)
    for part in qualname.split("."):
        obj = getattr(obj, part)
    return obj


def rerun_under(version: Optional[str], target: str, indent: int, err: Exception) -> int:
    """Decompile a foreign ``.pyc`` with the interpreter of its version, if one is installed."""
    from framescope.decompiler.frontend.pyc import is_read, read_versions

    if version is not None and not is_read(version):
        return error("%s; framescope reads the bytecode of Python %s" % (err, read_versions()))
    python = find_python(version) if version else None
    if python is None:
        return error("%s; no Python %s interpreter found to decompile it" % (err, version or "of that version"))
    env = dict(os.environ)
    src = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    env["PYTHONPATH"] = src + os.pathsep + env.get("PYTHONPATH", "")
    result = subprocess.run([python, "-m", "framescope", "decompile", target, "--indent", str(indent)], env=env)
    return result.returncode


def find_python(version: str) -> Optional[str]:
    """An installed interpreter of ``version``: ``pythonX.Y`` on PATH, or one from pyenv."""
    import shutil

    roots = [os.environ.get("PYENV_ROOT", ""), os.path.expanduser("~/.pyenv")]
    for root in roots:
        for candidate in sorted(glob.glob(os.path.join(root, "versions", version + ".*", "bin", "python"))):
            return candidate
    found = shutil.which("python" + version)
    if found and "shims" not in found:  # a pyenv shim fails for versions not selected
        return found
    return None


def run_command(program: List[str], module: bool, out: str, report: bool, debug: bool = False,
                cold: bool = False) -> int:
    from framescope.report.run import check_program, run_program

    problem = check_program(program, module)
    if problem:
        return error(problem)
    return run_program(program, module, out, report, debug, caches=not cold)


def report_command(folder: str, out: Optional[str]) -> int:
    from framescope.report.highlight import have_pygments
    from framescope.report.index import DumpError, dumps_of
    from framescope.report.pages import write_ranks_index, write_report
    from framescope.report.ranks import divergences

    out = out or os.path.join(folder, "report")
    try:
        dumps = dumps_of(folder)  # a distributed run: one complete dump per rank, in rank_<r>/
    except DumpError as err:
        return error(err)
    try:
        for name, dump in dumps:
            index = write_report(dump, os.path.join(out, name) if name else out)
        if dumps[0][0]:
            index = write_ranks_index(out, [(name, dump.path) for name, dump in dumps], divergences(dumps))
    except OSError as err:
        print("framescope: error: cannot write the report to %s: %s" % (out, err.strerror or err), file=sys.stderr)
        return PARTIAL
    if not have_pygments():
        print("framescope: Pygments is not installed, so code is not highlighted "
              "(pip install 'framescope[report]')", file=sys.stderr)
    emit(index)
    return OK


def explain_command(folder: str, as_json: bool) -> int:
    """One dump's findings; for the folder of a distributed run, where the ranks compiled
    differently, then each rank's findings under its name (JSON: ``{"divergences": [...],
    "ranks": {"rank_0": ..., ...}}``)."""
    import json

    from framescope.report.explain import explain_record, format_explain
    from framescope.report.index import DumpError, dumps_of

    try:
        dumps = dumps_of(folder)
    except DumpError as err:
        return error(err)
    from framescope.report.ranks import divergence_lines, divergence_records

    if as_json:
        if dumps[0][0]:
            emit(json.dumps({"divergences": divergence_records(dumps),
                             "ranks": {name: explain_record(dump) for name, dump in dumps}}, indent=1))
        else:
            emit(json.dumps(explain_record(dumps[0][1]), indent=1))
    elif dumps[0][0]:
        # The ranks' divergences first: where ranks compile differently, collectives stop matching.
        emit("\n".join(divergence_lines(dumps)) + "\n\n"
             + "\n\n".join("== %s ==\n%s" % (name, format_explain(dump)) for name, dump in dumps))
    else:
        emit(format_explain(dumps[0][1]))
    return OK


def diff_command(first: str, second: str, as_json: bool) -> int:
    """0 when the dumps are the same, 1 when they differ, 2 when either is no dump."""
    import json

    from framescope.report.diff import compare, diff_record, format_diff
    from framescope.report.index import DumpError, load_dump

    try:
        a, b = load_dump(first), load_dump(second)
    except DumpError as err:
        return error(err)
    changes = compare(a, b)
    emit(json.dumps(diff_record(a, b, changes), indent=1) if as_json else format_diff(a, b, changes))
    return PARTIAL if changes else OK


if __name__ == "__main__":
    sys.exit(main())

