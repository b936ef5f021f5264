"""``framescope run``: run a program the way ``python`` would, inside ``framescope.dump``.

The program's stdout is left to it alone: progress lines and the summary go to stderr.
"""
from __future__ import annotations

import contextlib
import importlib.util
import io
import os
import runpy
import sys
import time
import traceback
import types
from types import FrameType, TracebackType
from typing import Any, ContextManager, Dict, Iterator, List, Optional, TextIO

from framescope.errors import UnsupportedTorchError
from framescope.dump.naming import folder_rank, rank_folder
from framescope.report.index import DumpError, load_dump
from framescope.report.pages import write_report
from framescope.report.summary import format_summary


class Progress:
    """Prints a line to stderr per compile, from the dump's ``on_event`` callback."""

    def __init__(self, stream: TextIO) -> None:
        #: Where lines go: the stderr framescope started with, whatever the program does to sys.stderr.
        self.stream = stream
        #: Compiles seen so far.
        self.compiles = 0

    def __call__(self, event: Dict[str, Any]) -> None:
        if event.get("event") != "compile":
            return
        self.compiles += 1
        entry = event.get("entry")
        what = "recompiled" if isinstance(entry, int) and entry > 0 else "compiled"
        line = "framescope: %s %s (cache entry %s, compile %s)%s" % (
            what, event.get("frame", "?"), entry, event.get("compile_id", "?"),
            "" if event.get("decompiled", True) else ", not decompiled")
        self.stream.write(line + "\n")
        self.stream.flush()


def check_program(program: List[str], module: bool) -> Optional[str]:
    """Why the program cannot be run (one line), or None."""
    if not program:
        return "nothing to run: give a script (framescope run prog.py) or a module (framescope run -m pkg.mod)"
    if not module and not os.path.isfile(program[0]):
        return "cannot run %s: no such file" % program[0]
    if importlib.util.find_spec("torch") is None:
        return "torch is not installed; framescope run needs torch (pip install torch)"
    if module:
        return check_module(program[0])
    return None


def check_module(name: str) -> Optional[str]:
    """Why module ``name`` cannot be run, looked up as ``python -m`` does (the current folder
    first, unless -P), or None."""
    saved = sys.path[:]
    if not getattr(sys.flags, "safe_path", False):
        set_path0(os.getcwd())
    try:
        found = importlib.util.find_spec(name)
    except (ImportError, ValueError) as err:  # a parent package that is missing or broken
        return "cannot find module %s: %s" % (name, err)
    finally:
        sys.path[:] = saved
    if found is None:
        return "no module named %s" % name
    return None


def run_program(program: List[str], module: bool, out: str, report: bool = True, debug: bool = False,
                caches: bool = True) -> int:
    """Run the checked program inside a dump (and inside ``framescope.debug()`` if ``debug``;
    with torch.compile's compile caches off unless ``caches``); print the summary; return its
    exit status."""
    import framescope.dump

    stderr = sys.stderr
    progress = Progress(stderr)
    # sys.argv is the program's from the start: the dump records it.
    with as_main(program, module):
        try:
            dumping = framescope.dump(out, on_event=progress, caches=caches)
            session = dumping.__enter__()
        except UnsupportedTorchError as err:
            # The user asked to run the program: it runs, as plain ``python`` would run it.
            stderr.write("framescope: %s; running the program without a dump\n" % " ".join(str(err).split()))
            return run_main(program, module)
        except Exception as err:
            stderr.write("framescope: error: cannot start the dump: %s\n" % " ".join(str(err).split()))
            return 2
        try:
            debugger = debugging(debug)
            debugger.__enter__()
        except Exception as err:
            dumping.__exit__(None, None, None)
            stderr.write("framescope: error: cannot start framescope.debug(): %s\n" % " ".join(str(err).split()))
            return 2
        status = 0
        try:
            try:
                # pdb's quit, when pdb runs framescope, goes on to pdb once the dump is
                # finished, past the summary: pdb ends, and the run cut short gets none.
                status = run_main(program, module)
            finally:
                debugger.__exit__(None, None, None)
        finally:
            sys.stdout.flush()
            try:
                dumping.__exit__(None, None, None)
            except Exception as err:  # the program's own outcome still counts
                stderr.write("framescope: error: finishing the dump failed: %s\n" % " ".join(str(err).split()))
                status = status or 1
    directory = str(session.directory)
    rank = folder_rank(os.path.basename(directory))
    if rank is None:
        print_summary(directory, report, stderr)
    elif rank == 0:
        # Under torchrun every rank runs framescope: rank 0 alone speaks, once the others
        # are done (or have stopped writing), and says where the ranks compiled differently.
        # The ranks' folders are beside its own (the --out folder, or its parent when it was
        # named rank_0 already).
        print_ranks_summary(os.path.dirname(directory), report, stderr)
    return status


def wait_for_ranks(root: str, world: int, timeout: float) -> List[str]:
    """Wait until each rank's dump in ``root`` has ended, ``timeout`` seconds at most; return
    the ranks that had not."""
    deadline = time.monotonic() + timeout
    waiting = [rank_folder(rank) for rank in range(world)]
    while True:
        waiting = [name for name in waiting if not _finished(os.path.join(root, name))]
        if not waiting or time.monotonic() >= deadline:
            return waiting
        time.sleep(0.2)


def _finished(folder: str) -> bool:
    try:
        return load_dump(folder).finished
    except DumpError:  # not written yet
        return False


def print_ranks_summary(root: str, report: bool, stream: TextIO) -> None:
    """Rank 0's summary, then how the ranks' compiles differ (framescope.report.ranks)."""
    from framescope.report.index import dumps_of
    from framescope.report.ranks import divergence_lines

    try:
        world = int(os.environ.get("WORLD_SIZE", "1"))
    except ValueError:
        world = 1
    waiting = wait_for_ranks(root, world, float(os.environ.get("FRAMESCOPE_RANKS_WAIT", "120")))
    print_summary(os.path.join(root, rank_folder(0)), report, stream)
    try:
        dumps = dumps_of(root)
    except DumpError as err:
        stream.write("framescope: no comparison of the ranks: %s\n" % err)
        return
    lines = [""] + divergence_lines(dumps)
    if waiting:
        lines.append("(still running or stopped when compared: %s)" % ", ".join(waiting))
    lines.append("every rank: framescope explain %s" % root)
    stream.write("\n".join(lines) + "\n")
    stream.flush()


def debugging(on: bool) -> ContextManager[object]:
    """``framescope.debug()`` when ``on``, else a block that does nothing."""
    if not on:
        return contextlib.nullcontext()
    from framescope.debugging import debug

    return debug()


def print_summary(folder: str, report: bool, stream: TextIO) -> None:
    try:
        dump = load_dump(folder)
    except DumpError as err:
        stream.write("framescope: no summary: %s\n" % err)
        return
    index = None
    if report:
        try:
            index = write_report(dump, os.path.join(folder, "report"))
        except OSError as err:
            stream.write("framescope: cannot write the report: %s\n" % (err.strerror or err))
    stream.write("\n" + format_summary(dump, index) + "\n")
    stream.flush()


@contextlib.contextmanager
def as_main(program: List[str], module: bool) -> Iterator[None]:
    """``sys.argv`` and ``sys.path[0]`` as ``python`` sets them for the program; restored after."""
    saved_argv, saved_path0, saved_cwd = sys.argv[:], sys.path[0] if sys.path else None, os.getcwd()
    if module:
        set_path0(os.getcwd())  # what python -m puts first
        spec = importlib.util.find_spec(program[0])
        sys.argv = [(spec.origin if spec else None) or program[0]] + program[1:]
    else:
        sys.argv = list(program)
        set_path0(os.path.dirname(os.path.abspath(program[0])))
    try:
        yield
    finally:
        sys.argv = saved_argv
        if saved_path0 is not None:
            set_path0(saved_path0)
        try:
            os.chdir(saved_cwd)  # the summary's relative paths are relative to where run started
        except OSError:
            pass


def run_main(program: List[str], module: bool) -> int:
    """Run a script or module as ``__main__``; return the exit status ``python`` would give."""
    try:
        if module:
            runpy.run_module(program[0], run_name="__main__", alter_sys=True)
        else:
            run_script(program[0])
        return 0
    except SystemExit as exc:
        return exit_status(exc.code)
    except KeyboardInterrupt as exc:
        print_exception(exc)
        return 130  # what a shell reports for a program ended by SIGINT
    except BaseException as exc:
        if is_debugger_quit(exc):
            raise  # pdb's quit: pdb ends, as without framescope; not the program's failure
        print_exception(exc)
        return 1


def is_debugger_quit(exc: BaseException) -> bool:
    """Whether ``exc`` is ``quit`` in a debugger that runs framescope (``python -m pdb -m
    framescope run ...``) and ends quietly on it. Where the program itself started the
    debugger (``breakpoint()``), nothing catches it: it is reported as ``python`` does."""
    bdb = sys.modules.get("bdb")  # never raised where no debugger loaded bdb
    if bdb is None or not isinstance(exc, bdb.BdbQuit):
        return False
    runs = {getattr(bdb.Bdb, name).__code__ for name in ("run", "runeval", "runcall")}
    frame: Optional[FrameType] = sys._getframe()
    while frame is not None and frame.f_code not in runs:
        frame = frame.f_back
    return frame is not None


def run_script(path: str) -> None:
    """Run a script file as ``python path`` does: ``__main__.__file__`` and the code's file
    name absolute (3.9+), ``sys.argv[0]`` as given (``runpy.run_path`` would make it the
    path it was given, so it gets the absolute one only for its file name)."""
    import pkgutil

    if pkgutil.get_importer(path) is not None:  # a folder or zip file with a __main__.py
        runpy.run_path(path, run_name="__main__")
        return
    full = os.path.abspath(path)
    with io.open_code(full) as handle:
        code = pkgutil.read_code(handle)  # a .pyc given as the script
    if code is None:
        with io.open_code(full) as handle:
            code = compile(handle.read(), full, "exec")
    main = types.ModuleType("__main__")
    main.__dict__.update(__file__=full, __cached__=None, __loader__=None, __package__=None, __spec__=None)
    saved = sys.modules.get("__main__")
    sys.modules["__main__"] = main
    try:
        exec(code, main.__dict__)
    finally:
        if saved is not None:
            sys.modules["__main__"] = saved


def set_path0(path: str) -> None:
    if sys.path:
        sys.path[0] = path
    else:
        sys.path.insert(0, path)


def exit_status(code: object) -> int:
    """The exit status ``python`` gives for ``sys.exit(code)`` (printing a non-int code)."""
    if code is None:
        return 0
    if isinstance(code, int):
        return code
    sys.stderr.write("%s\n" % (code,))
    return 1


def print_exception(exc: BaseException) -> None:
    """The traceback ``python`` would print: framescope's and runpy's frames left out."""
    sys.stdout.flush()
    traceback.print_exception(type(exc), exc, user_frames(exc.__traceback__), file=sys.stderr)


HERE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def user_frames(tb: Optional[TracebackType]) -> Optional[TracebackType]:
    while tb is not None:
        filename = tb.tb_frame.f_code.co_filename
        if not (filename.startswith(HERE + os.sep) or filename == runpy.__file__ or filename == "<frozen runpy>"):
            break
        tb = tb.tb_next
    return tb
