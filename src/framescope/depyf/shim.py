"""``import depyf`` meaning :mod:`framescope.depyf`, for depyf programs left as they are.

``python -m framescope.depyf install`` writes ``framescope_depyf.pth`` into the
interpreter's site-packages (``--user``: the user's; ``--dir``: a folder of your choice that
Python reads ``.pth`` files from). From then on, in every process of that interpreter,
``import depyf`` and ``import depyf.<sub>`` give framescope's modules of the same names,
even when depyf itself is installed. ``python -m framescope.depyf uninstall`` removes the
file; ``status`` says where it is. ``FRAMESCOPE_DEPYF=0`` in a process's environment turns
the alias off for that process.

At start-up the ``.pth`` file costs one small import (this module and ``framescope``'s
package, not torch); the depyf modules load when a program imports them.
"""
from __future__ import annotations

import argparse
import importlib
import importlib.abc
import importlib.machinery
import importlib.util
import os
import site
import sys
import sysconfig
from types import ModuleType
from typing import List, Optional, Sequence

#: The name of the file ``install`` writes.
PTH_NAME = "framescope_depyf.pth"
#: Its one line: Python runs lines of a ``.pth`` file that begin with ``import``.
PTH_LINE = "import framescope.depyf.shim as _framescope_depyf; _framescope_depyf.activate()\n"

__all__ = ["activate", "deactivate", "install", "uninstall"]


class DepyfAlias(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """Finds ``depyf`` and ``depyf.*`` as ``framescope.depyf`` and ``framescope.depyf.*``."""

    def find_spec(self, fullname: str, path: Optional[Sequence[str]] = None,
                  target: Optional[ModuleType] = None) -> Optional[importlib.machinery.ModuleSpec]:
        if fullname != "depyf" and not fullname.startswith("depyf."):
            return None
        real = "framescope." + fullname
        try:
            found = importlib.util.find_spec(real)
        except (ImportError, ValueError):
            return None
        if found is None:
            return None
        return importlib.machinery.ModuleSpec(fullname, self, is_package=found.submodule_search_locations is not None)

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> ModuleType:
        # The same module object under both names: state (an installed hook, a running dump)
        # is shared, whichever name a program imports.
        return importlib.import_module("framescope." + spec.name)

    def exec_module(self, module: ModuleType) -> None:
        pass  # framescope's module ran when create_module imported it


_alias = DepyfAlias()


def activate() -> None:
    """Put the alias first on ``sys.meta_path`` (unless ``FRAMESCOPE_DEPYF=0``)."""
    if os.environ.get("FRAMESCOPE_DEPYF", "1") == "0":
        return
    if _alias not in sys.meta_path:
        sys.meta_path.insert(0, _alias)


def deactivate() -> None:
    """Take the alias off ``sys.meta_path``; modules already imported as ``depyf`` stay."""
    while _alias in sys.meta_path:
        sys.meta_path.remove(_alias)


def default_dir(user: bool) -> str:
    return site.getusersitepackages() if user else sysconfig.get_paths()["purelib"]


def install(directory: Optional[str] = None, user: bool = False) -> str:
    """Write the ``.pth`` file into ``directory`` (default: site-packages); its path."""
    folder = directory or default_dir(user)
    os.makedirs(folder, exist_ok=True)
    path = os.path.join(folder, PTH_NAME)
    with open(path, "w", encoding="utf-8") as handle:
        handle.write(PTH_LINE)
    return path


def installed_files() -> List[str]:
    folders = list(dict.fromkeys([default_dir(False), default_dir(True)] + site.getsitepackages()))
    return [os.path.join(folder, PTH_NAME) for folder in folders if os.path.isfile(os.path.join(folder, PTH_NAME))]


def uninstall(directory: Optional[str] = None, user: bool = False) -> List[str]:
    """Remove the ``.pth`` file (from ``directory``, or wherever this interpreter has one)."""
    paths = [os.path.join(directory, PTH_NAME)] if directory else installed_files()
    removed = []
    for path in paths:
        if os.path.isfile(path):
            os.remove(path)
            removed.append(path)
    return removed


def main(argv: Optional[List[str]] = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m framescope.depyf",
        description="Make import depyf mean framescope.depyf in every process of this interpreter "
                    "(install), undo it (uninstall), or say whether it is on (status).")
    parser.add_argument("action", choices=["install", "uninstall", "status"])
    where = parser.add_mutually_exclusive_group()
    where.add_argument("--user", action="store_true", help="the user's site-packages, not the interpreter's")
    where.add_argument("--dir", metavar="DIR", help="a folder Python reads .pth files from")
    args = parser.parse_args(argv)
    try:
        if args.action == "install":
            print("import depyf now means framescope.depyf: %s" % install(args.dir, args.user))
        elif args.action == "uninstall":
            removed = uninstall(args.dir, args.user)
            print("removed %s" % ", ".join(removed) if removed else "not installed: nothing to remove")
        else:
            files = [os.path.join(args.dir, PTH_NAME)] if args.dir else installed_files()
            files = [path for path in files if os.path.isfile(path)]
            print("installed: %s" % ", ".join(files) if files else "not installed")
    except OSError as err:
        print("framescope: error: %s" % (err.strerror and "%s: %s" % (err.filename, err.strerror) or err),
              file=sys.stderr)
        return 2
    return 0
