"""What README.md, docs/dump.md and docs/debugging.md promise of the torch side, checked with
real torch, real pdb and debugpy, in fresh processes:

* the rank a dump writes under, from ``RANK`` / ``WORLD_SIZE`` before any process group;
* ``framescope.debug(just_my_code=False)`` leaves pdb's stepping alone;
* a debugger started inside a ``framescope.debug()`` block (``breakpoint()``, a debugpy
  client attached late) stops in dumped files and steps into graph code;
* ``framescope.debugging.hide_debugger()`` and ``refresh_breakpoints()``;
* the full-code file's ``__dispatch_for_<fn>`` picks the entry torch runs;
* a dump whose disk filled up writes its index at the end once there is room again.
"""
from __future__ import annotations

import importlib.util
import json
import os
import shutil
import socket
import subprocess
import sys
import sysconfig
import tempfile
import time
from pathlib import Path
from typing import Dict, List, Optional, Tuple

import pytest

pytest.importorskip("torch")

from tests.support.dap import DapConnection, Debuggee, free_port  # noqa: E402
from tests.support.environment import program_environment  # noqa: E402
from tests.support.pdb_driver import Answer, PdbSession, Stop, program_lines  # noqa: E402

pytestmark = [pytest.mark.torch, pytest.mark.needs_subprocess]

ROOT = Path(__file__).resolve().parents[2]


environment = program_environment


def run(folder: Path, *args: str, env: Optional[Dict[str, str]] = None, timeout: float = 300) -> str:
    """Run ``prog.py args`` in ``folder``; its stdout and stderr together (it must succeed)."""
    done = subprocess.run(
        [sys.executable, "prog.py", *args],
        cwd=str(folder),
        env=env or environment(),
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        universal_newlines=True,
        timeout=timeout,
    )
    assert done.returncode == 0, done.stdout[-6000:]
    return done.stdout


def tagged(output: str, tag: str) -> object:
    """The JSON the program printed after ``tag``."""
    lines = program_lines(output, tag + " ")
    assert lines, "no %s line in:\n%s" % (tag, output[-4000:])
    return json.loads(lines[-1][len(tag) + 1 :])


def line_of(path: Path, text: str) -> int:
    """The number of the only line of ``path`` that contains ``text``."""
    found = [n for n, line in enumerate(path.read_text().splitlines(), 1) if text in line]
    assert len(found) == 1, "%s: %d lines contain %r" % (path, len(found), text)
    return found[0]


def where(stop: Optional[Stop]) -> Tuple[str, int]:
    assert stop is not None
    return stop.path, stop.line


def library_folders() -> Tuple[str, ...]:
    """torch's package folder (found without importing torch) and the standard library's."""
    spec = importlib.util.find_spec("torch")
    assert spec is not None and spec.submodule_search_locations
    folders = [list(spec.submodule_search_locations)[0], sysconfig.get_paths()["stdlib"]]
    return tuple(os.path.realpath(folder) + os.sep for folder in folders)


def is_library(stop: Stop) -> bool:
    return os.path.realpath(stop.path).startswith(library_folders())


# --------------------------------------------------------------------------- the rank


RANK_PROGRAM = '''\
import json, os, sys
import torch
import framescope


def f(x):
    return x.sin() + 1


if sys.argv[2] == "group":
    import torch.distributed as dist
    dist.init_process_group("gloo", store=dist.HashStore(), rank=0, world_size=1)
with framescope.dump(sys.argv[1]) as session:
    out = torch.compile(f, backend="eager")(torch.ones(2))
    print("DIRECTORY", json.dumps(str(session.directory)))
print("INITIALIZED", json.dumps(torch.distributed.is_initialized()))
'''


def test_rank_comes_from_rank_and_world_size_before_init_process_group(tmp_path):
    # docs/dump.md: with more than one process each rank writes into path/rank_<r>/; the rank
    # comes from the initialised process group, else from RANK / WORLD_SIZE.
    (tmp_path / "prog.py").write_text(RANK_PROGRAM)

    # No process group, WORLD_SIZE > 1: rank 3's files go into <folder>/rank_3/.
    output = run(tmp_path, "env", "-", env=environment(RANK="3", WORLD_SIZE="4"))
    assert tagged(output, "INITIALIZED") is False
    folder = tmp_path / "env"
    assert tagged(output, "DIRECTORY") == str(folder / "rank_3")
    assert sorted(path.name for path in folder.iterdir()) == ["rank_3"]
    index = json.loads((folder / "rank_3" / "index.json").read_text())
    assert [frame["name"] for frame in index["frames"]] == ["f"]
    assert (folder / "rank_3" / "__transformed_code_0_for_f.py").is_file()

    # One process (WORLD_SIZE=1): no rank folder.
    output = run(tmp_path, "single", "-", env=environment(RANK="0", WORLD_SIZE="1"))
    assert tagged(output, "DIRECTORY") == str(tmp_path / "single")
    assert (tmp_path / "single" / "index.json").is_file()
    assert not list((tmp_path / "single").glob("rank_*"))

    # An initialised group decides over the variables: a group of one process writes no
    # rank folder, whatever RANK / WORLD_SIZE say.
    output = run(tmp_path, "group", "group", env=environment(RANK="3", WORLD_SIZE="4"))
    assert tagged(output, "INITIALIZED") is True
    assert tagged(output, "DIRECTORY") == str(tmp_path / "group")
    assert not list((tmp_path / "group").glob("rank_*"))


# --------------------------------------------------------------------------- debuggers

# f is compiled with dynamic=False and called with n = 1, 2, 1, 2: entry 0 (n == 1) and
# entry 1 (n == 2) are made by the first two calls and hit by the last two.
PROGRAM = '''\
import sys

import torch

import framescope
from framescope import debugging


def f(x, n):
    y = x * n
    return y.sin() + 1


def calls(compiled, x, ns, start=0):
    for call, n in enumerate(ns, start):
        print("CALL %d n=%d %s" % (call, n, compiled(x, n).tolist()))


def main(folder, mode):
    compiled = torch.compile(f, backend="eager", dynamic=False)
    x = torch.ones(3)
    if mode == "plain":
        with framescope.dump(folder):
            calls(compiled, x, (1, 2, 1, 2))
    elif mode in ("just-my-code", "all-code"):
        with framescope.dump(folder), framescope.debug(just_my_code=mode == "just-my-code") as session:
            calls(compiled, x, (1, 2, 1, 2))
        print("DEBUGGERS %s" % session.debuggers)
    elif mode == "breakpoint":
        with framescope.dump(folder), framescope.debug() as session:
            breakpoint()
            calls(compiled, x, (1, 2, 1, 2))
        print("DEBUGGERS %s" % session.debuggers)
    elif mode == "attach":
        import debugpy

        with framescope.dump(folder), framescope.debug() as session:
            calls(compiled, x, (1,))
            debugpy.listen(("127.0.0.1", int(sys.argv[3])))
            print("LISTENING", flush=True)
            debugpy.wait_for_client()
            calls(compiled, x, (2, 1, 2), start=1)
        print("DEBUGGERS %s" % session.debuggers)
    elif mode == "refresh":
        with framescope.dump(folder):
            calls(compiled, x, (1,))
            print("BOUND %d" % debugging.refresh_breakpoints())
            calls(compiled, x, (1,), start=1)


main(sys.argv[1], sys.argv[2])
'''

OUT = {1: [1.8414709568023682] * 3, 2: [1.9092974662780762] * 3}


def expected_calls(ns, start=0) -> List[str]:
    return ["CALL %d n=%d %s" % (call, n, OUT[n]) for call, n in enumerate(ns, start)]


class Layout:
    """A dump of PROGRAM, and the places in its files that breakpoints go to."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.dump = folder / "dump"
        self.index = json.loads((self.dump / "index.json").read_text())
        [frame] = [frame for frame in self.index["frames"] if frame["name"] == "f"]
        #: Per cache entry of f: (its transformed-code file name, its graph's name).
        self.entries = [(entry["file"], entry["graphs"][0]) for entry in frame["entries"]]

    def transformed(self, entry: int, folder: Path) -> Tuple[str, int]:
        """(file, line) of the graph call in an entry's transformed code, in ``folder``'s dump."""
        name, graph = self.entries[entry]
        return str(folder / "dump" / name), line_of(self.dump / name, "= %s(" % graph)

    def graph(self, entry: int, folder: Path) -> Tuple[str, int]:
        """(file, line) of ``y = x * n`` in the forward of an entry's graph, in ``folder``'s dump."""
        name = "%s.dynamo.py" % self.entries[entry][1]
        return str(folder / "dump" / name), line_of(self.dump / name, " * %d" % (entry + 1))

    def frame_names(self) -> List[str]:
        return [frame["name"] for frame in self.index["frames"]]

    def graph_names(self) -> List[str]:
        return [graph for _name, graph in self.entries]


@pytest.fixture(scope="module")
def plain(tmp_path_factory) -> Layout:
    """PROGRAM run once without a debugger: the files and lines the debugger runs use."""
    folder = tmp_path_factory.mktemp("claims_plain")
    (folder / "prog.py").write_text(PROGRAM)
    output = run(folder, "dump", "plain")
    assert program_lines(output, "CALL ") == expected_calls((1, 2, 1, 2))
    layout = Layout(folder)
    assert len(layout.entries) == 2
    return layout


def copy_of(plain: Layout, tmp_path: Path) -> Path:
    """The plain run's folder copied: its dump exists before the debugged run starts."""
    folder = tmp_path / "run"
    shutil.copytree(str(plain.folder), str(folder))
    return folder


def continue_to_exit(pdb: PdbSession, timeout: float = 120) -> Tuple[int, str]:
    """``continue`` a program that then ends (no pdb prompt comes back): its exit status and
    what it printed after the command."""
    start = len(pdb.transcript)
    stdin = pdb.process.stdin
    assert stdin is not None
    stdin.write(b"continue\n")
    stdin.flush()
    try:
        status = pdb.process.wait(timeout)
    except subprocess.TimeoutExpired:
        raise AssertionError("the program did not end:\n%s" % pdb.transcript[start:]) from None
    pdb.close()  # the process is gone: this only collects the rest of its output
    return status, pdb.transcript[start:]


def test_pdb_step_with_just_my_code_false_walks_through_library_code(plain, tmp_path):
    # docs/debugging.md: framescope.debug() makes pdb's step skip library code, so one step
    # from the graph call is the graph's forward; framescope.debug(just_my_code=False) leaves
    # stepping alone: the step stops in library code (torch's wrappers) first. The debugger stays out of
    # torch.compile either way.
    folder = copy_of(plain, tmp_path)
    e0, g0 = plain.transformed(0, folder), plain.graph(0, folder)
    firsts = {}
    for mode in ("just-my-code", "all-code"):
        argv = [sys.executable, "-m", "pdb", "prog.py", "dump", mode]
        with PdbSession.start(argv, cwd=str(folder), env=environment()) as pdb:
            assert "Breakpoint" in pdb.command("break %s:%d" % e0).text
            assert where(pdb.command("continue").stop) == e0  # the call that compiles entry 0
            firsts[mode, "compiling"] = pdb.command("step").stop
            assert where(pdb.command("continue").stop) == e0  # call 2: entry 0 from the cache
            first = pdb.command("step").stop
            firsts[mode, "cached"] = first
            path = []
            stop = first
            for _ in range(300):
                if stop is None or stop.path == g0[0]:
                    break
                path.append(stop)
                stop = pdb.command("step").stop
            assert stop is not None and (stop.path, stop.function) == (g0[0], "forward"), (mode, path[-5:])
            answer = pdb.command("continue")
            assert "The program finished and will be restarted" in answer.text
            assert program_lines(pdb.transcript, "CALL ") == expected_calls((1, 2, 1, 2))
            assert program_lines(pdb.transcript, "DEBUGGERS ") == ["DEBUGGERS ['pdb']"]
        if mode == "just-my-code":
            assert path == []  # straight into forward
        else:
            # Every stop on the way to forward is library code: torch's wrappers around the
            # graph and the standard library they call.
            assert len(path) >= 2, path
            outside = [stop for stop in path if not is_library(stop)]
            assert outside == [], outside
        after = Layout(folder)
        assert after.frame_names() == ["f"], (mode, after.frame_names())
        assert after.graph_names() == plain.graph_names()
    for call in ("compiling", "cached"):
        assert (firsts["just-my-code", call].path, firsts["just-my-code", call].function) == (g0[0], "forward")
        assert is_library(firsts["all-code", call]), firsts["all-code", call]


def test_pdb_started_by_breakpoint_inside_debug_stops_in_dumped_files(plain, tmp_path):
    # docs/debugging.md: framescope.debug() works with a debugger that starts inside the
    # block (breakpoint()): it looks again after every compile. A breakpoint set at that
    # prompt in a dumped file stops when its entry runs, step goes from the graph call into
    # the graph's forward (on the compiling call and on the cached one), and pdb's own code
    # stays out of torch.compile.
    folder = copy_of(plain, tmp_path)
    e0, g0 = plain.transformed(0, folder), plain.graph(0, folder)
    argv = [sys.executable, "prog.py", "dump", "breakpoint"]
    with PdbSession.start(argv, cwd=str(folder), env=environment()) as pdb:
        # Stopped by breakpoint(), in main, before the first compile (on the line of the
        # call up to CPython 3.12, on the next line from 3.13 on).
        first = Answer(pdb.transcript).stop
        assert first is not None and first.function == "main" and "CALL " not in pdb.transcript, pdb.transcript
        assert "Breakpoint" in pdb.command("break %s:%d" % e0).text
        for call in ("compiling", "cached"):
            assert where(pdb.command("continue").stop) == e0, call
            assert pdb.command("p n").text.strip() == "1"
            first = pdb.command("step").stop
            assert first is not None and (first.path, first.function) == (g0[0], "forward"), (call, first)
            assert pdb.command("p L_x_").text.strip() == "tensor([1., 1., 1.])"
        status, rest = continue_to_exit(pdb)
    assert status == 0, rest
    assert program_lines(pdb.transcript, "CALL ") == expected_calls((1, 2, 1, 2))
    assert program_lines(rest, "DEBUGGERS ") == ["DEBUGGERS ['pdb']"]
    after = Layout(folder)
    assert after.frame_names() == ["f"]
    assert after.graph_names() == plain.graph_names()


def frame_where(frame: Dict) -> Tuple[str, int]:
    return os.path.normpath(frame["source"]["path"]), frame["line"]


def connect(port: int, process: subprocess.Popen, log, timeout: float = 60) -> socket.socket:
    """A connection to the debugpy adapter of a program that called debugpy.listen()."""
    deadline = time.monotonic() + timeout
    while True:
        log.seek(0)
        printed = log.read().decode("utf-8", "replace")
        if "LISTENING" in printed:
            return socket.create_connection(("127.0.0.1", port), timeout=5)
        if process.poll() is not None or time.monotonic() > deadline:
            raise AssertionError("the program did not listen (exit %s):\n%s" % (process.poll(), printed))
        time.sleep(0.1)


def test_debugpy_attached_late_inside_debug_binds_and_steps_into_graph(plain, tmp_path):
    # docs/debugging.md: framescope.debug() works with a debugger attached late. The
    # program compiles entry 0, then listens; the client attaches with a breakpoint in entry
    # 0's file (written already) and one in entry 1's (not written yet: debugpy refuses it),
    # justMyCode off. The missing file's breakpoint binds when the dump writes it, Step Into
    # from the graph call goes straight to the graph's forward, and the dump stays as
    # without a debugger.
    pytest.importorskip("debugpy")
    (tmp_path / "prog.py").write_text(PROGRAM)
    e0, g0 = plain.transformed(0, tmp_path), plain.graph(0, tmp_path)
    e1, e1_line = plain.transformed(1, tmp_path)
    after_call = (e1, e1_line + 1)
    port = free_port()
    log = tempfile.TemporaryFile()
    process = subprocess.Popen(
        [sys.executable, "prog.py", "dump", "attach", str(port)],
        cwd=str(tmp_path), env=environment(), stdin=subprocess.DEVNULL, stdout=log,
        stderr=subprocess.STDOUT, start_new_session=True,
    )
    try:
        sock = connect(port, process, log)
    except BaseException:
        Debuggee(process, DapConnection(socket.socket()), log).close()
        raise
    with Debuggee(process, DapConnection(sock), log) as session:
        assert Path(e0[0]).is_file() and not Path(e1).exists()
        answers = session.attach({e0[0]: [e0[1]], e1: [after_call[1]]}, just_my_code=False)
        assert [answers[e0[0]][0]["verified"], answers[e1][0]["verified"]] == [True, False]
        seen = []
        for call in (1, 2, 3):
            stop = session.wait_stopped()
            frame = session.top_frame(stop)
            local = session.locals(frame)
            seen.append((frame_where(frame), local["n"]))
            if call == 2:
                stop = session.step_in(stop)
                frame = session.top_frame(stop)
                assert (frame_where(frame)[0], frame["name"]) == (g0[0], "forward")
                assert session.locals(frame)["L_x_"] == "tensor([1., 1., 1.])"
            session.resume(stop)
        assert seen == [(after_call, "2"), (e0, "1"), (after_call, "2")]
        assert process.wait(120) == 0
        output = session.program_output()
    assert program_lines(output, "CALL ") == expected_calls((1, 2, 1, 2))
    assert program_lines(output, "DEBUGGERS ") == ["DEBUGGERS ['debugpy']"]
    after = Layout(tmp_path)
    assert after.frame_names() == ["f"]
    assert after.graph_names() == plain.graph_names()


def test_refresh_breakpoints_binds_debugpy_breakpoints_in_files_written_since(plain, tmp_path):
    # framescope.debugging.refresh_breakpoints(): adds the breakpoints debugpy was given for
    # files that did not exist then and exist now, and returns how many it bound. Here a
    # plain dump (no framescope.debug()) writes entry 0's file; the program calls it, and
    # the cached call that follows stops at the breakpoint debugpy had refused.
    pytest.importorskip("debugpy")
    (tmp_path / "prog.py").write_text(PROGRAM)
    e0 = plain.transformed(0, tmp_path)
    argv = [sys.executable, "prog.py", "dump", "refresh"]
    with Debuggee.start(argv, cwd=str(tmp_path), env=environment()) as session:
        answers = session.attach({e0[0]: [e0[1]]})
        assert answers[e0[0]][0]["verified"] is False
        stop = session.wait_stopped()
        frame = session.top_frame(stop)
        assert frame_where(frame) == e0 and session.locals(frame)["n"] == "1"
        session.resume(stop)
        assert session.wait_exit() == 0
        output = session.program_output()
    assert program_lines(output, "BOUND ") == ["BOUND 1"]
    assert program_lines(output, "CALL ") == expected_calls((1, 1))
    stops = [event for event in session.dap.events if event.get("event") == "stopped"]
    assert len(stops) == 1


LINECACHE_PROGRAM = '''\
import linecache, os, sys
import pdb
from framescope import debugging

path = os.path.join(sys.argv[1], "written.py")
with open(path, "w") as handle:
    handle.write("first = 1\\n")
before = linecache.getline(path, 1).strip()
with open(path, "w") as handle:
    handle.write("second_text = 2\\n")
stale = linecache.getline(path, 1).strip()
bound = debugging.refresh_breakpoints()
after = linecache.getline(path, 1).strip()
marked = debugging.hide_debugger()
again = debugging.hide_debugger()
print(before, stale, bound, after, marked > 0, again)
'''


def test_refresh_breakpoints_drops_outdated_lines_and_hide_debugger_walks_once(run_python, tmp_path):
    # refresh_breakpoints() drops outdated lines from linecache (no debugger: nothing to
    # bind, 0); hide_debugger() marks pdb's and bdb's functions once ("cheap to call
    # again: modules are walked once").
    done = run_python(LINECACHE_PROGRAM.replace("sys.argv[1]", repr(str(tmp_path))))
    assert done.stdout.split() == ["first", "=", "1", "first", "=", "1", "0", "second_text", "=", "2",
                                   "True", "0"]


HIDE_PROGRAM = '''\
import os, sys
import torch
from torch._dynamo.convert_frame import register_bytecode_hook

compiled_codes = []
register_bytecode_hook(
    lambda code, new_code: compiled_codes.append("%s:%s" % (os.path.basename(code.co_filename), code.co_name)))


def f(x):
    y = x * 2
    return y.sin()


if sys.argv[1] == "hide":
    from framescope import debugging
    print("MARKED %d" % debugging.hide_debugger())
compiled = torch.compile(f, backend="eager")
x = torch.ones(3)
for call in range(2):
    compiled(x)
print("COMPILED %s" % sorted(set(compiled_codes)))
'''


def test_hide_debugger_keeps_pdb_out_of_torch_compile(tmp_path):
    # framescope.debugging.hide_debugger(), no dump: pdb stops in f's compiled code (its
    # transformed code has f's def line only), prints a tensor and returns. Without it
    # torch.compile compiles pdb's own functions run there (pdb's user_return, reprlib's
    # repr: seen by torch's bytecode hook); with it, f is the only code torch compiles.
    (tmp_path / "prog.py").write_text(HIDE_PROGRAM)
    def_line = line_of(tmp_path / "prog.py", "def f(x):")
    compiled = {}
    for mode in ("hide", "plain"):
        argv = [sys.executable, "-m", "pdb", "prog.py", mode]
        with PdbSession.start(argv, cwd=str(tmp_path), env=environment()) as pdb:
            assert "Breakpoint" in pdb.command("break prog.py:%d" % def_line).text
            assert pdb.command("continue").stop.function == "<module>"  # the def statement
            for call in range(2):
                stop = pdb.command("continue").stop
                assert stop is not None and (stop.function, stop.line) == ("f", def_line), (call, stop)
                assert pdb.command("p x").text.strip() == "tensor([1., 1., 1.])"
                assert pdb.command("next").stop.returning
            assert "The program finished and will be restarted" in pdb.command("continue").text
            if mode == "hide":
                [marked] = program_lines(pdb.transcript, "MARKED ")
                assert int(marked.split()[1]) > 0
            [line] = program_lines(pdb.transcript, "COMPILED ")
            compiled[mode] = eval(line[len("COMPILED "):])
    assert compiled["hide"] == ["prog.py:f"]
    debugger = [name for name in compiled["plain"] if name != "prog.py:f"]
    assert all(name.split(":")[0] in ("pdb.py", "bdb.py", "reprlib.py") for name in debugger), debugger
    if sys.version_info < (3, 12):
        # Here torch.compile does compile pdb's functions when nothing hides them (on
        # CPython 3.13 with torch 2.15 it leaves them alone in this program either way).
        assert "pdb.py:user_return" in debugger, compiled["plain"]


# --------------------------------------------------------------------------- full code

DISPATCH_PROGRAM = '''\
import importlib.util, json, os, sys
import torch
import framescope
from torch._dynamo.eval_frame import _debug_get_cache_entry_list

FOLDER = os.path.abspath(sys.argv[1])


def f(x, n):
    y = x * n
    return y.sin() + 1


def g(x):
    return x.cos() * 2


def h(x):
    return x + 1


def torch_choice(fn):
    """The entry torch ran on the call just made: it moves that entry to the front."""
    name = os.path.basename(_debug_get_cache_entry_list(fn.__code__)[0].code.co_filename)
    found = name.startswith("__transformed_code_") and name.endswith("_for_%s.py" % fn.__name__)
    return int(name.split("_")[4]) if found else "not dumped"


def dispatch(fn, arguments):
    """Call __dispatch_for_<fn> of the full-code file, its graph stubs bound to the graphs they
    stand for (as the program's globals have them); which entry's code it ran, and its result."""
    path = os.path.join(FOLDER, "full_code_for_%s.py" % fn.__name__)
    spec = importlib.util.spec_from_file_location("full_code_for_%s" % fn.__name__, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    scope = vars(module)
    for name, value in fn.__globals__.items():
        # The graphs under the dump's names (the stubs'), and the modules Dynamo's code reads.
        if (name.startswith("__compiled_fn_") and name in scope) or name.startswith("__import_"):
            scope[name] = value
    ran = []
    for name in list(scope):
        if name.startswith("__transformed_code_") and name.endswith("_for_%s" % fn.__name__):
            def recording(*args, _index=int(name.split("_")[4]), _code=scope[name]):
                ran.append(_index)
                return _code(*args)
            scope[name] = recording
    result = getattr(module, "__dispatch_for_%s" % fn.__name__)(dict(arguments), fn.__globals__)
    assert len(ran) <= 1, ran
    return (ran[0] if ran else "original"), result


compiled_f = torch.compile(f, backend="eager", dynamic=False)
compiled_g = torch.compile(g, backend="eager")
x = torch.ones(3)
choices = []


def probe(fn, compiled, arguments):
    picked, result = dispatch(fn, arguments)
    expected = compiled(**arguments)
    choices.append([fn.__name__, repr(arguments.get("n", tuple(arguments["x"].shape))), picked,
                    torch_choice(fn), bool(torch.equal(result, expected))])


with framescope.dump(FOLDER):
    for n in (1, 2, 3):
        compiled_f(x, n)
    compiled_g(torch.ones(2))
    compiled_g(torch.ones(3))  # automatic dynamic: entry 1 takes every size from 2 on
    torch.compile(h, backend="eager")(x)  # the next compile: the guards above are complete
    for n in (2, 3, 1, 1, 2):
        probe(f, compiled_f, {"x": x, "n": n})
    for size in (2, 5, 3):
        probe(g, compiled_g, {"x": torch.ones(size)})
# After the dump: arguments no entry takes (torch compiles a new entry, outside the dump).
probe(f, compiled_f, {"x": x, "n": 4})
probe(g, compiled_g, {"x": torch.ones(1)})
print("CHOICES " + json.dumps(choices))
'''


def test_full_code_dispatch_picks_the_entry_torch_runs(tmp_path):
    # docs/dump.md: __dispatch_for_<fn>(L, G) in full_code_for_<fn>.py tries the guards newest
    # entry first and calls the matching entry's code, as torch does right after the last
    # compile; with no guard passing it calls the original function. In the process that
    # compiled the entries, it must pick the entry torch runs: torch's choice is the entry it
    # moved to the front of the cache, and (CPython 3.12+) the calls index.json counts.
    (tmp_path / "prog.py").write_text(DISPATCH_PROGRAM)
    output = run(tmp_path, "dump")
    choices = tagged(output, "CHOICES")
    assert choices == [
        ["f", "2", 1, 1, True],
        ["f", "3", 2, 2, True],
        ["f", "1", 0, 0, True],
        ["f", "1", 0, 0, True],
        ["f", "2", 1, 1, True],
        # g's entry 0 (size 2) and entry 1 (sizes from 2 on) both take size 2: the newer
        # one is tried first, by torch and by the dispatch function.
        ["g", "(2,)", 1, 1, True],
        ["g", "(5,)", 1, 1, True],
        ["g", "(3,)", 1, 1, True],
        ["f", "4", "original", "not dumped", True],
        ["g", "(1,)", "original", "not dumped", True],
    ], choices
    index = json.loads((tmp_path / "dump" / "index.json").read_text())
    calls = {frame["id"]: [entry["calls"] for entry in frame["entries"]] for frame in index["frames"]}
    # The call that compiled each entry, and the probes inside the dump.
    assert calls["f"] == [1 + 2, 1 + 2, 1 + 1] and calls["g"] == [1, 1 + 3], calls


# --------------------------------------------------------------------------- a full disk

FULL_DISK_PROGRAM = '''\
import json, os, sys, warnings
import torch
import framescope

folder, filler, mode = sys.argv[1], sys.argv[2], sys.argv[3]


def f(x, n):
    return (x * n).sin() + 1


compiled = torch.compile(f, backend="eager", dynamic=False)
x = torch.ones(3)
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    with framescope.dump(folder):
        print("RESULT %s" % compiled(x, 1).tolist())
        if mode == "room":
            os.remove(filler)  # space again, before the dump ends
        print("RESULT %s" % compiled(x, 2).tolist())
        print("DURING " + json.dumps(sorted(os.listdir(folder))))
print("WARNINGS " + json.dumps([str(w.message) for w in caught if type(w.message).__name__ == "DumpWarning"]))
'''

needs_root = pytest.mark.skipif(not hasattr(os, "geteuid") or os.geteuid() != 0,
                                reason="mounting a tmpfs needs root")


def fill(path: Path) -> None:
    """Write zeros into ``path`` until the file system has no space left."""
    handle = open(str(path), "wb")
    try:
        while True:
            handle.write(b"\0" * 4096)
            handle.flush()
    except OSError:
        pass
    try:
        handle.close()
    except OSError:
        pass


class Tmpfs:
    """A small tmpfs, filled up to the last byte but for a ``dump`` folder made first."""

    def __init__(self, mount: Path) -> None:
        self.mount = mount
        self.dump = mount / "dump"
        self.filler = mount / "filler"


@pytest.fixture
def full_disk(tmp_path):
    mount = tmp_path / "mnt"
    mount.mkdir()
    mounted = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=64k", "tmpfs", str(mount)],
                             stdout=subprocess.PIPE, stderr=subprocess.STDOUT, universal_newlines=True)
    if mounted.returncode != 0:
        pytest.skip("cannot mount a tmpfs here: %s" % mounted.stdout.strip())
    try:
        disk = Tmpfs(mount)
        disk.dump.mkdir()
        fill(disk.filler)
        (tmp_path / "prog.py").write_text(FULL_DISK_PROGRAM)
        yield disk
    finally:
        # Unmounted before the check for entries that fell back: these fell back on purpose.
        subprocess.run(["umount", "-l", str(mount)], check=False)


def run_on_full_disk(tmp_path: Path, disk: "Tmpfs", mode: str) -> str:
    """The program's output with its dump on the full disk (``mode`` "room": the disk has room
    again before the dump ends; "full": it never has), checked for the program's results and
    for the dump's one warning, about the full disk."""
    output = run(tmp_path, str(disk.dump), str(disk.filler), mode)
    assert program_lines(output, "RESULT ") == ["RESULT %s" % OUT[1], "RESULT %s" % OUT[2]]
    warned = tagged(output, "WARNINGS")
    assert len(warned) == 1 and "No space left on device" in warned[0], warned
    return output


@needs_root
def test_index_is_written_at_the_end_once_a_full_disk_has_room(tmp_path, full_disk):
    # docs/reliability.md: a folder that stops taking files (full) gives one DumpWarning and
    # nothing more is written there; at the end of the dump the index is tried once more when
    # the cause was a full disk. Here the disk is full when the dump starts and has room
    # again before it ends: nothing is written meanwhile, then index.json and index.md are
    # written at the end and list every entry, also the one compiled after the stop.
    output = run_on_full_disk(tmp_path, full_disk, "room")
    assert tagged(output, "DURING") == [".framescope.lock"]  # the dump's own lock file only
    assert sorted(path.name for path in full_disk.dump.iterdir()) == [".framescope.lock", "index.json", "index.md"]
    index = json.loads((full_disk.dump / "index.json").read_text())
    [frame] = index["frames"]
    assert [entry["compile_id"] for entry in frame["entries"]] == ["0/0", "0/1"]
    # Neither entry has a file to run from: both run Dynamo's own code.
    assert [entry["decompiled"] for entry in frame["entries"]] == [False, False]
    assert any("No space left on device" in warning for warning in index["warnings"]), index["warnings"]


@needs_root
def test_a_disk_full_from_start_to_end_leaves_the_exit_status_alone(tmp_path, full_disk):
    # README: a dump folder that fills up costs one warning, never the program's results;
    # docs/reliability.md: the program's results and exit status are the same as without
    # framescope. The disk never has room: one warning, no index, exit status 0.
    run_on_full_disk(tmp_path, full_disk, "full")
    assert sorted(path.name for path in full_disk.dump.iterdir()) == [".framescope.lock"]
