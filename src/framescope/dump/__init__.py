"""framescope.dump: every torch.compile cache entry as a Python file, and the program runs it.

::

    import framescope

    with framescope.dump("framescope_dump"):
        main()          # any program that uses torch.compile

For each frame torch.compile compiles, the folder gets ``__transformed_code_<i>_for_<fn>.py``
(cache entry ``i``'s code, decompiled; the cache entry then runs the code compiled from that
file, so breakpoints in it work), ``full_code_for_<fn>.py`` (the original source, each
entry's guard as a Python function, the transformed code and a dispatcher, in one valid
Python file) and ``index.json`` / ``index.md``. See docs/dump.md.

``framescope.dump`` is this module, and calling it starts a dump: ``framescope.dump(path)``
is :func:`dump`. Importing it does not import torch; entering a dump does.
"""
from __future__ import annotations

import atexit
import os
import signal
import sys
import threading
import types
from pathlib import Path
from typing import Any, Callable, Dict, List, Optional

from framescope.dump.session import DumpSession, DumpWarning

__all__ = ["DumpSession", "DumpWarning", "active_session", "dump", "last_folder", "prepare_debug"]

_active_lock = threading.Lock()
_active: Optional[DumpSession] = None


# The folder of each dump started in this process, in order.
_started: List[Path] = []


def active_session() -> Optional[DumpSession]:
    """The session of the dump block running now, or None."""
    return _active


def last_folder() -> Optional[Path]:
    """The folder the dump started last in this process wrote into (absolute), or None."""
    return _started[-1] if _started else None


class dump:
    """Context manager: dump what torch.compile makes inside the block into ``path``.

    ``on_event(event)`` (optional) is called after every compile with a dict such as
    ``{"event": "compile", "frame": "f", "entry": 0, "compile_id": "0/0",
    "file": "__transformed_code_0_for_f.py", "decompiled": True}``.

    ``caches=False`` turns torch.compile's FX graph and AOTAutograd caches off inside the
    block, so that every graph is compiled cold and each of its stages gets a file. By
    default the caches stay as the program has them: a graph served from a cache has the
    files of the stages the cached artefact holds, and index.json says what each cache did
    (``caches`` of each graph).

    ``log_bytecode=True`` also writes, next to each ``__transformed_code_<i>_for_<f>.py``,
    the entry's code objects as ``marshal`` data (``marshal.load`` reads them back):
    ``.original_bytecode`` (the function's), ``.transformed_bytecode`` (Dynamo's) and
    ``.decompiled_and_compiled_back_bytecode`` (the code compiled from the file, which the
    entry runs).

    One dump at a time per process: entering a second one while one is active raises
    RuntimeError; one after another is fine. On exit torch's hooks are removed, the code
    torch.compile made inside the block keeps running from the dumped files, and every
    file and the index are complete. A dump entered by hand (``dump(path).__enter__()``)
    and never left is finished when the process exits: at interpreter exit, and on SIGTERM
    where the program has no handler of its own (the process then still ends by SIGTERM).
    """

    def __init__(
        self,
        path: "os.PathLike[str] | str" = "framescope_dump",
        *,
        on_event: Optional[Callable[[Dict[str, Any]], None]] = None,
        log_bytecode: bool = False,
        caches: bool = True,
    ) -> None:
        if not isinstance(path, (str, os.PathLike)):
            raise TypeError("framescope.dump needs a folder path, not %s" % type(path).__name__)
        #: The folder to write into.
        self.path = path
        #: The progress callback, or None.
        self.on_event = on_event
        #: Whether each entry's code objects are written too.
        self.log_bytecode = log_bytecode
        #: Whether torch.compile's compile caches stay on (False: off inside the block).
        self.caches = caches
        #: The running session while the block runs, else None.
        self.session: Optional[DumpSession] = None
        self._capture: Any = None
        #: Takes back what finishes the dump at process exit (see _finish_at_exit).
        self._at_exit: Optional[Callable[[], None]] = None
        #: The folder the last session of this block wrote into, once it wrote.
        self.folder: Optional[Path] = None
        self._entered = False

    def __enter__(self) -> DumpSession:
        global _active
        from framescope.dump import capture

        with _active_lock:
            if _active is not None:
                raise RuntimeError(
                    "framescope.dump is already active (writing to %s); dumps cannot be nested"
                    % _active.root
                )
            if os.path.exists(self.path) and not os.path.isdir(self.path):
                raise NotADirectoryError(
                    "framescope.dump: %s exists and is not a folder" % os.fspath(self.path)
                )
            session = DumpSession(self.path, on_event=self.on_event, log_bytecode=self.log_bytecode,
                                  caches=self.caches)
            self._capture = capture.start(session)
            self.session = _active = session
            self._entered = True
            _started.append(session.root)
        capture.hide_debugger(session)
        self._at_exit = _finish_at_exit(self)
        return session

    def __exit__(self, *exc_info: object) -> None:
        global _active
        from framescope.dump import capture

        session, self.session = self.session, None
        if session is not None:
            self.folder = session.opened_folder or self.folder
        undo, self._at_exit = self._at_exit, None
        if undo is not None:
            undo()
        try:
            if session is not None:
                try:
                    capture.stop(self._capture, session)
                finally:
                    session.release()
        finally:
            with _active_lock:
                _active = None
            self._capture = None


    def save(self) -> Optional[Path]:
        """Write the index now and the HTML report into ``<folder>/report`` (a dump writes its
        index after every compile anyway); return the folder, None while nothing was written.
        Inside the block or after it, e.g. from a notebook cell while the kernel runs on."""
        session = self.session
        if session is not None:
            session.save()
            self.folder = session.opened_folder
        if self.folder is None:
            return None
        from framescope.notebook import Summary, write_report_of
        from framescope.report.index import DumpError

        try:
            write_report_of(Summary(self.folder).load())
        except DumpError:
            pass  # nothing readable yet: the summary says so when shown
        return self.folder

    def summary(self) -> Any:
        """The dump's :class:`framescope.notebook.Summary`: HTML in a notebook, text elsewhere."""
        from framescope.notebook import Summary

        if self.session is not None:
            self.folder = self.session.opened_folder or self.folder
        return Summary(self.folder if self.folder is not None else self.path)

    def _repr_html_(self) -> str:
        return self.summary()._repr_html_()

    def __repr__(self) -> str:
        state = ("running" if self.session is not None else "finished" if self.folder
                 else "finished: nothing was compiled" if self._entered else "not started")
        head = "framescope.dump(%r): %s" % (os.fspath(self.path), state)
        return head + "\n" + repr(self.summary()) if self.session is not None or self.folder else head


def _finish_at_exit(block: dump) -> Callable[[], None]:
    """Make the process finish ``block`` if it is still open when the process ends; return
    the undo step (for a block left as usual)."""

    def finish() -> None:
        if block.session is not None:
            block.__exit__(None, None, None)

    atexit.register(finish)
    undo_signal = _finish_on_sigterm(finish)

    def undo() -> None:
        atexit.unregister(finish)
        undo_signal()

    return undo


def _finish_on_sigterm(finish: Callable[[], None]) -> Callable[[], None]:
    """On SIGTERM, ``finish()`` and then end by SIGTERM as before; only where the program left
    SIGTERM to its default (killing the process) and from the main thread, which alone may
    set handlers. Returns the undo step."""
    if threading.current_thread() is not threading.main_thread():
        return lambda: None
    try:
        if signal.getsignal(signal.SIGTERM) is not signal.SIG_DFL:
            return lambda: None
    except (AttributeError, ValueError):  # no SIGTERM here (Windows, WebAssembly)
        return lambda: None

    def on_sigterm(signum: int, frame: object) -> None:
        signal.signal(signal.SIGTERM, signal.SIG_DFL)
        try:
            finish()
        finally:
            os.kill(os.getpid(), signal.SIGTERM)  # ends the process as SIGTERM would have

    signal.signal(signal.SIGTERM, on_sigterm)

    def undo() -> None:
        if threading.current_thread() is threading.main_thread() and signal.getsignal(signal.SIGTERM) is on_sigterm:
            signal.signal(signal.SIGTERM, signal.SIG_DFL)

    return undo


def prepare_debug(
    dump_src_dir: "os.PathLike[str] | str" = "framescope_dump",
    clean_wild_fx_code: bool = True,
    log_bytecode: bool = False,
    **options: Any,
) -> dump:
    """:func:`dump` under depyf's name and with its parameters.

    ``clean_wild_fx_code`` is accepted and changes nothing: a dump writes only the graphs
    that belong to a compile, each named after it, so there is no stray FX code to clean.
    ``log_bytecode`` is :func:`dump`'s. Works as a context manager and entered by hand
    (``prepare_debug(path).__enter__()``): then files are complete when the process exits.
    """
    return dump(dump_src_dir, log_bytecode=log_bytecode, **options)


class _CallableModule(types.ModuleType):
    """``framescope.dump`` is both this package and a call that starts a dump."""

    def __call__(self, path: "os.PathLike[str] | str" = "framescope_dump", **options: Any) -> dump:
        return dump(path, **options)


sys.modules[__name__].__class__ = _CallableModule
