"""The ``framescope`` command (also ``python -m framescope``).

Exit codes: 0 success; 1 the work ran but part of it failed (for example a
function that could not be decompiled, printed as a comment); 2 bad input (a
missing file, an unreadable or foreign ``.pyc``, an unknown target).
"""
import argparse
import glob
import os
import subprocess
import sys
from types import CodeType
from typing import List, Optional

from framescope import __version__
from framescope.errors import DecompilationError

OK, PARTIAL, BAD_INPUT = 0, 1, 2


def main(argv: Optional[List[str]] = None) -> int:
    parser = argparse.ArgumentParser(
        prog="framescope", description="Read, diff and debug what the CPython compiler and torch.compile did.")
    parser.add_argument("--version", action="version", version="framescope " + __version__)
    commands = parser.add_subparsers(dest="command", metavar="COMMAND")
    decompile = commands.add_parser(
        "decompile", help="print Python source for a .py file, a .pyc file or module:qualname",
        description="Decompile TARGET and print the source. TARGET is a .py file (compiled, then decompiled), "
                    "a .pyc file (one of another Python version is decompiled by that version's interpreter "
                    "when one is installed) or module:qualname (a function or method to import).")
    decompile.add_argument("target")
    decompile.add_argument("--indent", type=int, default=4, help="spaces per indentation level (default 4)")
    args = parser.parse_args(argv)
    if args.command == "decompile":
        return decompile_command(args.target, args.indent)
    parser.print_help()
    return BAD_INPUT


def error(message: str) -> int:
    print("framescope: error: %s" % " ".join(str(message).split()), file=sys.stderr)
    return BAD_INPUT


def decompile_command(target: str, indent: int) -> int:
    from framescope.decompiler.api import decompile
    from framescope.decompiler.pyc import ForeignPycError, load_pyc

    if target.endswith(".pyc"):
        try:
            code = load_pyc(target)
        except ForeignPycError as err:
            return rerun_under(err.version, target, indent, err)
        except DecompilationError as err:
            return error(err)
        return print_module(code, indent)
    if target.endswith(".py") or os.path.sep in target:
        try:
            with open(target, encoding="utf-8") as handle:
                source = handle.read()
            code = compile(source, target, "exec")
        except OSError as err:
            return error("cannot read %s: %s" % (target, err.strerror or err))
        except (SyntaxError, ValueError) as err:
            return error("%s does not compile: %s" % (target, err))
        return print_module(code, indent)
    try:
        obj = import_target(target)
    except (ImportError, AttributeError, ValueError) as err:
        return error(err)
    try:
        print(decompile(obj, indent=indent))
    except (DecompilationError, TypeError) as err:
        return error(err)
    return OK


def print_module(code: CodeType, indent: int) -> int:
    """The whole module; if that fails, each function on its own, failures as comments."""
    from framescope.decompiler.api import decompile

    try:
        print(decompile(code, indent=indent))
        return OK
    except DecompilationError as err:
        module_error = err
    status = PARTIAL
    print("# framescope: the module as a whole could not be decompiled: %s" % module_error)
    for child in code.co_consts:
        if isinstance(child, CodeType) and child.co_name.isidentifier():  # functions and classes
            try:
                print(decompile(child, indent=indent))
            except DecompilationError as err:
                print("# framescope: cannot decompile %s: %s\n" % (child.co_name, err))
    return status


def import_target(target: str):
    import importlib

    module_name, _, qualname = target.partition(":")
    if not qualname:
        raise ValueError("%r is not a file or module:qualname" % target)
    obj = importlib.import_module(module_name)
    for part in qualname.split("."):
        obj = getattr(obj, part)
    return obj


def rerun_under(version: Optional[str], target: str, indent: int, err: Exception) -> int:
    """Decompile a foreign ``.pyc`` with the interpreter of its version, if one is installed."""
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


if __name__ == "__main__":
    sys.exit(main())
