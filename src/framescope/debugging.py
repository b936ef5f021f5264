"""framescope.debug(): pdb and VS Code (debugpy) in torch.compile's code.

Breakpoints need nothing from this module: the code of every cache entry that a dump
(:mod:`framescope.dump`) makes, and the graph code that runs as Python, is compiled from the
dumped files, so a breakpoint set by file and line in one of them stops there, in pdb and in
VS Code alike. ``framescope.debug()`` is for what plain breakpoints cannot do::

    with framescope.dump("framescope_dump"), framescope.debug():
        main()

* It keeps the debugger's own code out of torch.compile (:func:`hide_debugger`). While a
  debugger stops in compiled code, its prompt and its variable views run on a thread where
  torch.compile's frame hook is installed, so torch.compile compiles the debugger's
  functions: that takes time and puts debugger functions into the dump. Every dump does
  this too, when it starts and whenever a compile starts; debug() also does it outside one.
* Stepping goes from the transformed code straight into the graph's ``forward`` (Inductor's
  ``call``) and back: pdb's ``step`` skips library code (the standard library, site-packages,
  torch, framescope; see :func:`is_library_frame`), as VS Code does with
  ``"justMyCode": true``, which it turns on for debugpy.
* Breakpoints that VS Code set in a dumped file before the file existed bind as soon as the
  dump writes it (debugpy refuses a breakpoint in a missing file and never retries).

torch is imported when the block is entered, never when this module is imported.
"""
from __future__ import annotations

import functools
import linecache
import os
import site
import sys
import sysconfig
import threading
import types
from typing import Any, Callable, Dict, Iterator, List, Optional, Set, Tuple

from framescope.decompiler.origin import nested_codes

__all__ = ["debug", "hide_debugger", "is_library_file", "is_library_frame", "is_library_module",
           "refresh_breakpoints"]

# Module names of pdb and its base, whose functions run whenever pdb stops or steps.
_PDB_MODULES = ("bdb", "pdb")

_lock = threading.RLock()
# Names of the modules already looked at (debugger modules are marked then), so that a
# later call only looks at modules loaded since.
_seen_modules: Set[str] = set()


class debug:
    """Context manager: make pdb and debugpy work well in torch.compile's code.

    ``just_my_code`` (default True): stepping skips library code, so that ``step`` in pdb
    and Step Into in VS Code go from the transformed code into the graph's ``forward``
    without walking through torch's wrappers. False leaves stepping as the debugger has it.

    Works with the debugger running when the block is entered, and with one that starts or
    attaches inside the block (looked for again after every compile). Blocks may nest; on
    exit the debugger's settings are as before. The marks that keep debugger code out of
    torch.compile stay: that code is never worth compiling.
    """

    def __init__(self, *, just_my_code: bool = True) -> None:
        #: Whether stepping skips library code.
        self.just_my_code = just_my_code
        #: The debuggers found, by name ("pdb", "debugpy"), in the order found.
        self.debuggers: List[str] = []
        self._undo: List[Callable[[], None]] = []
        self._patched: Set[int] = set()
        self._hook: Any = None

    def __enter__(self) -> "debug":
        from framescope import torch_internals

        torch_internals.require(torch_internals.DEBUG)
        try:
            self._undo.append(files_from_the_current_folder())
            self._attach()
            self._hook = torch_internals.on_compile_end(self._after_compile)
        except BaseException:
            self.__exit__(None, None, None)
            raise
        return self

    def __exit__(self, *exc_info: object) -> None:
        hook, self._hook = self._hook, None
        if hook is not None:
            hook.remove()
        undo, self._undo = self._undo, []
        for step in reversed(undo):
            step()
        self._patched = set()

    def _after_compile(self) -> None:
        # Runs inside torch.compile, after the dump wrote this compile's files and before
        # their code first runs; a failure here must not fail the compile.
        try:
            self._attach()
            refresh_breakpoints()
        except Exception as exc:  # a debugger in a state framescope does not know
            sys.stderr.write("framescope.debug: %s: %s\n" % (type(exc).__name__, exc))

    def _attach(self) -> None:
        hide_debugger()
        pdb = _running_bdb()
        if pdb is not None and id(pdb) not in self._patched:
            self._patched.add(id(pdb))
            self.debuggers.append("pdb")
            if self.just_my_code:
                self._undo.append(_skip_library_frames(pdb))
        py_db = _running_pydevd()
        if py_db is not None and id(py_db) not in self._patched:
            self._patched.add(id(py_db))
            self.debuggers.append("debugpy")
            if self.just_my_code:
                self._undo.append(_pydevd_just_my_code(py_db))


# --------------------------------------------------------------------------- debugger code


def hide_debugger() -> int:
    """Keep the running debugger's own code out of torch.compile; return how many code
    objects were marked now.

    Marks the current trace function's code, and every function of pdb, bdb and debugpy's
    pydevd where they are loaded, so that they and all they call run without torch.compile's
    frame hook. Cheap to call again: modules are walked once.
    """
    from framescope import torch_internals

    marked = 0
    with _lock:
        trace = sys.gettrace()
        code = _code_of(trace)
        if code is not None:
            torch_internals.mark_skip_all(code)
            marked += 1
        for name, module in _debugger_modules():
            for code in _module_codes(module):
                torch_internals.mark_skip_all(code)
                marked += 1
    return marked


def _debugger_modules() -> Iterator[Tuple[str, types.ModuleType]]:
    """Loaded debugger modules not walked yet: pdb, bdb, and those of pydevd and debugpy."""
    for name in _PDB_MODULES:
        module = sys.modules.get(name)
        if name not in _seen_modules and isinstance(module, types.ModuleType):
            _seen_modules.add(name)
            yield name, module
    roots = []
    for package in ("pydevd", "debugpy"):
        module = sys.modules.get(package)
        path = getattr(module, "__file__", None)
        if path:
            roots.append(os.path.dirname(os.path.realpath(path)) + os.sep)
    if not roots:
        return  # no pydevd yet: look at the other modules once it is loaded
    for name, module in list(sys.modules.items()):
        if name in _seen_modules or not isinstance(module, types.ModuleType):
            continue
        _seen_modules.add(name)
        path = getattr(module, "__file__", None)
        if path and os.path.realpath(path).startswith(tuple(roots)):
            yield name, module


def _module_codes(module: types.ModuleType) -> Iterator[types.CodeType]:
    """Code objects of the functions defined in ``module``: top-level, in classes, nested."""
    seen: Set[int] = set()
    name = module.__name__
    stack: List[Any] = list(vars(module).values())
    while stack:
        item = stack.pop()
        if isinstance(item, type):
            if item.__module__ == name and id(item) not in seen:
                seen.add(id(item))
                stack.extend(vars(item).values())
            continue
        if isinstance(item, (staticmethod, classmethod)):
            item = item.__func__
        elif isinstance(item, property):
            stack.extend(f for f in (item.fget, item.fset, item.fdel) if f is not None)
            continue
        try:
            code = getattr(item, "__code__", None)
            owner = getattr(item, "__module__", None)
        except Exception:  # an object whose attribute look-up fails: not a function
            continue
        if not isinstance(code, types.CodeType) or owner != name:
            continue
        for inner in nested_codes(code):
            if id(inner) not in seen:
                seen.add(id(inner))
                yield inner


def _code_of(function: object) -> Optional[types.CodeType]:
    function = getattr(function, "__func__", function)
    code = getattr(function, "__code__", None)
    return code if isinstance(code, types.CodeType) else None


# --------------------------------------------------------------------------- library code


@functools.lru_cache(maxsize=None)
def _library_roots() -> Tuple[str, ...]:
    paths = sysconfig.get_paths()
    roots = [paths.get(key) for key in ("stdlib", "platstdlib", "purelib", "platlib")]
    try:
        roots += list(site.getsitepackages())
    except AttributeError:  # virtualenv's old site module has no getsitepackages
        pass
    user = getattr(site, "getusersitepackages", None)
    if user is not None:
        roots.append(user())
    here = os.path.dirname(os.path.abspath(__file__))
    roots.append(here)  # framescope itself
    return tuple(sorted({os.path.realpath(root) + os.sep for root in roots if root}))


_library_tops: Dict[str, bool] = {}


#: The module name collections.namedtuple gives the code of a class's ``__new__``
#: (``namedtuple_Point``).
NAMEDTUPLE_MODULE = "namedtuple_"


def is_library_module(name: Optional[str]) -> bool:
    """Whether code of the module ``name`` counts as library code for stepping.

    Library code: the standard library, what is installed in site-packages (torch among
    it) and framescope. Decided once per top-level package, from where it was loaded.
    None (code run with globals that name no module) is not library code.
    """
    if not name:
        return False
    top = name.partition(".")[0]
    if top == "__main__":
        # The program itself; sys.modules["__main__"] may still be the module of the
        # launcher (pdb, debugpy) that runs it.
        return False
    known = _library_tops.get(top)
    if known is not None:
        return known
    if top in sys.builtin_module_names or top in getattr(sys, "stdlib_module_names", ()):
        result = True
    elif top.startswith(NAMEDTUPLE_MODULE):
        # collections.namedtuple evaluates each class's __new__ in globals of its own, named
        # after the class: library code wherever the class is (torch makes some per call).
        result = True
    elif top == "framescope":
        result = True
    else:
        module = sys.modules.get(top)
        path = getattr(module, "__file__", None)
        if not path:
            locations = list(getattr(module, "__path__", None) or [])
            path = locations[0] if locations else None
        if path is None:
            return False  # not loaded (yet): decide again next time
        result = os.path.realpath(path).startswith(_library_roots())
    _library_tops[top] = result
    return result


_library_files: Dict[str, bool] = {}


def is_library_frame(frame: types.FrameType) -> bool:
    """Whether a frame runs library code, for stepping.

    Its file decides where the code has a file path (:func:`is_library_file`): Inductor's
    output code is the program's to step into, although it runs as a module named
    ``torch._inductor...``; torch's generated wrappers, compiled under a path in torch's
    folder and run in globals that name no module, are not. Code compiled from a string
    (``<string>``, ``<frozen runpy>``) is decided by its module (:func:`is_library_module`).
    The program, run as ``__main__``, is not library code wherever its file is.
    """
    filename = frame.f_code.co_filename
    known = _library_files.get(filename)
    if known is None:
        if not (filename and os.path.isabs(filename)):
            return is_library_module(frame.f_globals.get("__name__"))
        known = is_library_file(filename)
    return known and frame.f_globals.get("__name__") != "__main__"


def is_library_file(filename: str) -> bool:
    """Whether the absolute path ``filename`` is inside the standard library, site-packages or
    framescope (the file need not exist: torch names generated code
    ``.../torch/_functorch/_aot_autograd/codegen.py:codegen(...)``)."""
    known = _library_files.get(filename)
    if known is None:
        known = _library_files[filename] = os.path.realpath(filename).startswith(_library_roots())
    return known


# --------------------------------------------------------------------------- pdb


def _running_bdb() -> Any:
    """The pdb (any bdb.Bdb) whose trace function is installed on this thread, or None."""
    if "bdb" not in sys.modules:
        return None
    import bdb

    owner = getattr(sys.gettrace(), "__self__", None)
    return owner if isinstance(owner, bdb.Bdb) else None


def files_from_the_current_folder() -> Callable[[], None]:
    """Let pdb's ``break FILE:LINE`` take FILE relative to the current folder (where a dump's
    folder usually is, ``b dump/__transformed_code_0_for_f.py:2``) when its own lookup, which
    tries only the folders of ``sys.path``, finds nothing; return the undo step. Patches
    ``pdb.Pdb`` itself: the pdb a ``breakpoint()`` starts is made after the patch."""
    import pdb

    original = pdb.Pdb.lookupmodule
    if getattr(original, "_framescope", False):
        return lambda: None

    def lookupmodule(self: Any, filename: str) -> Optional[str]:
        found = original(self, filename)
        if found is None and not os.path.isabs(filename) and os.path.isfile(filename):
            return os.path.abspath(filename)
        return found

    lookupmodule._framescope = True  # type: ignore[attr-defined]
    pdb.Pdb.lookupmodule = lookupmodule  # type: ignore[method-assign]

    def undo() -> None:
        pdb.Pdb.lookupmodule = original  # type: ignore[method-assign]

    return undo


def _skip_library_frames(debugger: Any) -> Callable[[], None]:
    """Make ``debugger`` (a bdb.Bdb) never stop in library code; return the undo step.

    bdb asks ``stop_here(frame)`` before every stop, and on every call whether to trace the
    new frame at all; it answers no for library code (:func:`is_library_frame`, cached, so
    cheap on every call and line) and otherwise asks bdb's own, whose ``skip`` patterns
    still apply.
    """
    had_own = "stop_here" in vars(debugger)
    own = vars(debugger).get("stop_here")
    original = debugger.stop_here

    def stop_here(frame: types.FrameType) -> bool:
        return not is_library_frame(frame) and bool(original(frame))

    debugger.stop_here = stop_here

    def undo() -> None:
        if had_own:
            debugger.stop_here = own
        else:
            vars(debugger).pop("stop_here", None)

    return undo


# --------------------------------------------------------------------------- debugpy


def _running_pydevd() -> Any:
    """debugpy's debugger (pydevd's PyDB) when one is running in this process, else None."""
    if "pydevd" not in sys.modules:
        return None
    try:
        from _pydevd_bundle.pydevd_constants import get_global_debugger
    except ImportError:
        return None
    return get_global_debugger()


def _pydevd_just_my_code(py_db: Any) -> Callable[[], None]:
    """Turn on debugpy's library filter (justMyCode); return the undo step."""
    getter = getattr(py_db, "get_use_libraries_filter", None)
    setter = getattr(py_db, "set_use_libraries_filter", None)
    if getter is None or setter is None:
        return lambda: None
    before = bool(getter())
    if not before:
        setter(True)
    return lambda: None if before else setter(False)


def refresh_breakpoints() -> int:
    """Let debuggers see files a dump wrote since: return how many breakpoints were bound.

    Drops outdated lines from :mod:`linecache` (which pdb and tracebacks read), and adds
    the breakpoints that debugpy was given for files that did not exist then and exist now.
    """
    linecache.checkcache()
    py_db = _running_pydevd()
    if py_db is None:
        return 0
    return _bind_pending(py_db)


def _bind_pending(py_db: Any) -> int:
    try:
        from _pydevd_bundle.pydevd_api import PyDevdAPI
    except ImportError:
        return 0
    api = PyDevdAPI()
    bound = 0
    # (client's file, breakpoint id) -> (pydevd's file key, the add_breakpoint arguments)
    received = dict(getattr(py_db, "api_received_breakpoints", {}))
    for canonical, params in received.values():
        filename, kind, line = params[0], params[1], params[3]
        if kind != "python-line" or line in py_db.breakpoints.get(canonical, {}):
            continue
        if not os.path.exists(api.filename_to_server(filename)):
            continue
        result = api.add_breakpoint(py_db, *params)
        if not getattr(result, "error_code", 0):
            bound += 1
    return bound
