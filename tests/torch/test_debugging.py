"""Real debuggers in the code of a framescope dump: pdb through its stdin, debugpy over DAP.

The program compiles ``f(x, n)`` with ``dynamic=False`` and calls it with n = 1, 2, 1, 2:
cache entry 0 (guard n == 1) and entry 1 (guard n == 2) are made by the first two calls and
hit by the last two. A breakpoint in an entry's dumped file must stop exactly when that
entry runs, on the compiling calls and on the cached ones, and the program must print what
it prints without a debugger.
"""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Dict, List, Optional, Tuple

import pytest

pytest.importorskip("torch")

from tests.support.dap import Debuggee  # noqa: E402
from tests.support.environment import program_environment  # noqa: E402
from tests.support.pdb_driver import PdbSession, Stop, program_lines  # noqa: E402

pytestmark = [pytest.mark.torch, pytest.mark.needs_subprocess]

ROOT = Path(__file__).resolve().parents[2]

PROGRAM = '''\
import contextlib
import sys

import torch

import framescope


def f(x, n):
    y = x * n
    return y.sin() + 1


def main(folder, debug):
    compiled = torch.compile(f, backend="eager", dynamic=False)
    x = torch.ones(3)
    with framescope.dump(folder):
        with framescope.debug() if debug else contextlib.nullcontext():
            for call, n in enumerate((1, 2, 1, 2)):
                print("CALL %d n=%d %s" % (call, n, compiled(x, n).tolist()))


main(sys.argv[1], sys.argv[2:] == ["debug"])
'''


environment = program_environment


def write_program(folder: Path) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "prog.py"
    path.write_text(PROGRAM)
    return path


class Layout:
    """What a plain run of the program dumped, and where its breakpoints go."""

    def __init__(self, folder: Path, output: str) -> None:
        #: The folder holding prog.py and dump/.
        self.folder = folder
        #: The program's CALL lines without a debugger.
        self.calls = program_lines(output, "CALL ")
        self.dump = folder / "dump"
        self.index = json.loads((self.dump / "index.json").read_text())
        [frame] = [frame for frame in self.index["frames"] if frame["name"] == "f"]
        #: Per cache entry of f: (dumped file, its graph's name).
        self.entries: List[Tuple[Path, str]] = [
            (self.dump / entry["file"], entry["graphs"][0]) for entry in frame["entries"]
        ]

    def transformed(self, entry: int, folder: Optional[Path] = None) -> Tuple[str, int]:
        """(file, line) of the graph call in an entry's transformed code; the file in the
        dump of ``folder`` (a run of the same program) if given."""
        path = self.entries[entry][0]
        line = line_of(path, "= %s(" % self.entries[entry][1])
        return str((folder or self.folder) / "dump" / path.name), line

    def graph(self, entry: int, folder: Optional[Path] = None) -> Tuple[str, int]:
        """(file, line) of ``y = x * n`` in the forward of an entry's graph."""
        path = self.dump / ("%s.dynamo.py" % self.entries[entry][1])
        line = line_of(path, " * %d" % (entry + 1))
        return str((folder or self.folder) / "dump" / path.name), line

    def graph_names(self) -> List[str]:
        """The graph each entry of f calls."""
        return [graph for _path, graph in self.entries]

    def graph_files(self) -> List[str]:
        """The graph files of the dump."""
        return sorted(path.name for path in self.dump.glob("__compiled_fn_*.py"))

    def torch_numbers(self) -> List[int]:
        """torch's own number of each graph (``__compiled_fn_<n>_<uuid>``): it counts every
        graph torch.compile makes in the process, in the dump or not."""
        return [int(graph["torch_name"].split("_")[4]) for graph in self.index["graphs"]]


def line_of(path: Path, text: str) -> int:
    """The number of the only line of ``path`` that contains ``text``."""
    found = [n for n, line in enumerate(path.read_text().splitlines(), 1) if text in line]
    assert len(found) == 1, "%s: %d lines contain %r" % (path, len(found), text)
    return found[0]


def run_plain(folder: Path, *args: str) -> str:
    done = subprocess.run(
        [sys.executable, "prog.py", "dump", *args],
        cwd=str(folder),
        env=environment(),
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        universal_newlines=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stdout
    return done.stdout


@pytest.fixture(scope="module")
def plain(tmp_path_factory) -> Layout:
    """A plain run (no debugger): the dump every debugger run starts from, and the output."""
    folder = tmp_path_factory.mktemp("plain")
    write_program(folder)
    layout = Layout(folder, run_plain(folder))
    assert len(layout.entries) == 2
    assert layout.calls == [
        "CALL 0 n=1 %s" % ([1.8414709568023682] * 3),
        "CALL 1 n=2 %s" % ([1.9092974662780762] * 3),
        "CALL 2 n=1 %s" % ([1.8414709568023682] * 3),
        "CALL 3 n=2 %s" % ([1.9092974662780762] * 3),
    ]
    return layout


@pytest.fixture
def copy(plain, tmp_path) -> Layout:
    """The plain run's folder, copied: breakpoints can be set before the debugged run starts."""
    folder = tmp_path / "run"
    shutil.copytree(str(plain.folder), str(folder))
    return Layout(folder, "\n".join(plain.calls))


def start_pdb(layout: Layout, *args: str) -> PdbSession:
    return PdbSession.start(
        [sys.executable, "-m", "pdb", "prog.py", "dump", *args], cwd=str(layout.folder), env=environment()
    )


def where(stop: Stop) -> Tuple[str, int]:
    return stop.path, stop.line


# --------------------------------------------------------------------------- pdb


def test_pdb_breakpoints_stop_in_the_entry_that_runs(copy):
    e0, e1 = copy.transformed(0), copy.transformed(1)
    with start_pdb(copy) as pdb:
        for path, line in (e0, e1):
            assert "Breakpoint" in pdb.command("break %s:%d" % (path, line)).text
        # Two runs in one session: pdb restarts the program when it ends; names are stable,
        # so the breakpoints apply to the files the second run writes again.
        for run in range(2):
            seen, ns = [], []
            transcript_start = len(pdb.transcript)
            for _ in range(4):
                stop = pdb.command("continue").stop
                assert stop is not None
                seen.append(where(stop))
                ns.append(pdb.command("p n").text.strip())
            answer = pdb.command("continue")
            assert "The program finished and will be restarted" in answer.text
            # Compiling calls (0, 1), then cached ones (2, 3): each stops in its own entry.
            assert seen == [e0, e1, e0, e1], "run %d" % run
            assert ns == ["1", "2", "1", "2"]
            assert program_lines(pdb.transcript[transcript_start:], "CALL ") == copy.calls
        assert pdb.quit() == 0


def test_pdb_breakpoints_in_graph_code(copy):
    # Graph code runs from the dumped graph files too. The dump numbers its graphs itself
    # (__compiled_fn_<n>, from 1 in each dump), so the names are the same in every run of
    # the program, also when pdb restarts it in the same process.
    g0, g1 = copy.graph(0), copy.graph(1)
    with start_pdb(copy) as pdb:
        for path, line in (g1, g0):
            assert "Breakpoint" in pdb.command("break %s:%d" % (path, line)).text
        for run in range(2):
            start = len(pdb.transcript)
            stops = pdb.stops_until_end()
            assert [where(stop) for stop in stops] == [g0, g1, g0, g1], "run %d" % run
            assert {stop.function for stop in stops} == {"forward"}
            assert program_lines(pdb.transcript[start:], "CALL ") == copy.calls
            assert Layout(copy.folder, "").graph_files() == ["__compiled_fn_1.dynamo.py", "__compiled_fn_2.dynamo.py"]


@pytest.mark.parametrize("debug", [True, False], ids=["debug", "plain"])
def test_pdb_step_into_the_graph(copy, plain, debug):
    # With framescope.debug(), one step from the graph call in the transformed code is the
    # first line of the graph's forward, on the compiling call and on the cached one;
    # without it, pdb walks into torch's wrappers (or torch.compile's own work) first.
    e0 = copy.transformed(0)
    g0 = copy.graph(0)
    args = ["debug"] if debug else []
    with start_pdb(copy, *args) as pdb:
        pdb.command("break %s:%d" % e0)
        firsts = []
        for call in ("compiling", "cached"):
            stop = pdb.command("continue").stop
            assert where(stop) == e0, call
            first = pdb.command("step").stop
            firsts.append(first)
            if not debug:
                continue
            # Through the forward line by line, reading its locals on the way.
            assert (first.path, first.function) == (g0[0], "forward")
            steps = [pdb.command("step").stop for _ in range(3)]
            assert where(steps[1]) == g0  # y = x * n, about to run
            assert steps[2].path == g0[0] and steps[2].line > g0[1]
            assert pdb.command("p y").text.strip() == "tensor([1., 1., 1.])"
            stop = steps[-1]
            while stop.path == g0[0]:
                stop = pdb.command("step").stop
            # Back in the transformed code, on the line after the graph call.
            assert where(stop) == (e0[0], e0[1] + 1)
            assert pdb.command("p graph_out_0").text.strip() == "(tensor([1.8415, 1.8415, 1.8415]),)"
        assert "The program finished" in pdb.command("continue").text
        assert program_lines(pdb.transcript, "CALL ") == plain.calls
    if debug:
        assert all(first.path == g0[0] for first in firsts)
    else:
        assert all(first.path not in (g0[0], e0[0]) for first in firsts), firsts
    # pdb ran in compiled code (the trace function on every line, the prompt, and without
    # framescope.debug() its steps through torch's wrappers) and torch.compile compiled none
    # of it: the dump keeps the debugger out, with framescope.debug() or without. Else
    # pdb's functions would be frames of the dump and the second entry's graph would not
    # be the one it is without a debugger.
    after = Layout(copy.folder, "")
    assert [frame["name"] for frame in after.index["frames"]] == ["f"]
    assert after.graph_files() == plain.graph_files()
    assert after.graph_names() == plain.graph_names()
    assert after.torch_numbers() == plain.torch_numbers()


def test_pdb_commands_in_a_plain_dump_compile_nothing(copy, plain):
    # No framescope.debug(): printing a tensor and returning from the transformed code run
    # pdb's user_return and reprlib's repr under torch.compile's frame hook. The dump keeps
    # them out: no frames of pdb's in the dump, and torch.compile made exactly the graphs
    # it makes without a debugger (its own count says so).
    e0 = copy.transformed(0)
    with start_pdb(copy) as pdb:
        pdb.command("break %s:%d" % e0)
        for _call in range(2):
            assert where(pdb.command("continue").stop) == e0
            assert pdb.command("p x").text.strip() == "tensor([1., 1., 1.])"
            returned = pdb.command("return").stop
            assert (returned.path, returned.returning) == (e0[0], True)
        assert "The program finished" in pdb.command("continue").text
        assert program_lines(pdb.transcript, "CALL ") == plain.calls
    after = Layout(copy.folder, "")
    assert [frame["name"] for frame in after.index["frames"]] == ["f"]
    assert after.graph_files() == plain.graph_files()
    assert after.torch_numbers() == plain.torch_numbers()


def test_pdb_refuses_a_file_that_does_not_exist_yet(tmp_path):
    # pdb checks the line when the breakpoint is set, so the dump must exist (from an
    # earlier run, or from the first pass before pdb restarts the program).
    write_program(tmp_path)
    missing = tmp_path / "dump" / "__transformed_code_0_for_f.py"
    with PdbSession.start(
        [sys.executable, "-m", "pdb", "prog.py", "dump"], cwd=str(tmp_path), env=environment()
    ) as pdb:
        answer = pdb.command("break %s:12" % missing)
        assert "Breakpoint" not in answer.text
        # pdb's words for it: "End of file" up to 3.12, "... not found from sys.path" on 3.13.
        assert "End of file" in answer.text or "'%s' not found from sys.path" % missing in answer.text
        assert pdb.stops_until_end() == []
        # Now the files exist: the restarted program stops in them.
        path, line = Layout(tmp_path, "").transformed(0)
        assert "Breakpoint" in pdb.command("break %s:%d" % (path, line)).text
        assert where(pdb.command("continue").stop) == (path, line)


# CPython 3.13.0's pdb reads options after ``-m module`` as its own ("unrecognized
# arguments: --debug") unless ``--`` ends its options; other versions pass ``--`` on to the program.
PDB_OPTIONS_END = ["--"] if sys.version_info[:3] == (3, 13, 0) else []

# A program with no dump of its own, for framescope run.
RUN_PROGRAM = '''\
import torch


def f(x, n):
    y = x * n
    return y.sin() + 1


compiled = torch.compile(f, backend="eager", dynamic=False)
for call, n in enumerate((1, 2)):
    print("CALL %d n=%d %s" % (call, n, compiled(torch.ones(3), n).tolist()))
'''


def start_framescope_run(folder: Path) -> PdbSession:
    """``python -m pdb -m framescope run --debug --no-report --out dump prog.py`` in ``folder``."""
    argv = [sys.executable, "-m", "pdb", "-m", "framescope", *PDB_OPTIONS_END, "run", "--debug", "--no-report",
            "--out", "dump", "prog.py"]
    return PdbSession.start(argv, cwd=str(folder), env=environment())


def first_pass(pdb: PdbSession, folder: Path) -> Layout:
    """Run the program to its end once (writing the dump); pdb then restarts it."""
    first_run = pdb.command("continue", timeout=300).text
    assert "The program exited via sys.exit(). Exit status: 0" in first_run
    return Layout(folder, first_run)


def test_pdb_steps_into_the_graph_under_framescope_run_debug(tmp_path):
    # python -m pdb -m framescope run --debug prog.py: how an IDE runs a program it did not
    # change. The first pass writes the dump; in the restarted one, in the same process,
    # the files have the same names, the breakpoint stops, and one step from the graph call
    # is the graph's forward, as framescope.debug() makes it (without it, torch's wrappers).
    (tmp_path / "prog.py").write_text(RUN_PROGRAM)
    with start_framescope_run(tmp_path) as pdb:
        layout = first_pass(pdb, tmp_path)
        assert layout.calls == ["CALL 0 n=1 %s" % ([1.8414709568023682] * 3),
                                "CALL 1 n=2 %s" % ([1.9092974662780762] * 3)]
        e0, g0 = layout.transformed(0), layout.graph(0)
        start = len(pdb.transcript)
        assert "Breakpoint" in pdb.command("break %s:%d" % e0).text
        assert where(pdb.command("continue").stop) == e0
        first = pdb.command("step").stop
        assert (first.path, first.function) == (g0[0], "forward")
        assert "Exit status: 0" in pdb.command("continue").text
        assert program_lines(pdb.transcript[start:], "CALL ") == layout.calls
        assert Layout(tmp_path, "").graph_files() == layout.graph_files()


# The same with Inductor, the compiled function called twice with the same arguments: the
# call that compiles and a cached one.
INDUCTOR_RUN_PROGRAM = '''\
import torch


def f(x, n):
    y = x * n
    return y.sin() + 1


compiled = torch.compile(f, backend="inductor", dynamic=False)
for call in range(2):
    print("CALL %d %s" % (call, compiled(torch.ones(3), 1).tolist()))
'''


@pytest.mark.slow
def test_pdb_steps_into_inductor_code_under_framescope_run_debug(tmp_path):
    # Between the graph call and Inductor's ``call`` lie torch's wrappers, some of them code
    # that torch generates and compiles under a file name of its own (in torch's folder,
    # with no module name in its globals): stepping skips them like any torch code.
    (tmp_path / "prog.py").write_text(INDUCTOR_RUN_PROGRAM)
    with start_framescope_run(tmp_path) as pdb:
        layout = first_pass(pdb, tmp_path)
        assert len(layout.entries) == 1
        e0, graph = layout.transformed(0), layout.entries[0][1]
        [record] = [item for item in layout.index["graphs"] if item["name"] == graph]
        assert record["runs_from_file"] == ["inductor"]
        inductor = str(layout.dump / ("%s.inductor.py" % graph))
        assert "Breakpoint" in pdb.command("break %s:%d" % e0).text
        for call in ("compiling", "cached"):
            assert where(pdb.command("continue", timeout=300).stop) == e0, call
            stop = pdb.command("step").stop
            assert (stop.path, stop.function) == (inductor, "call"), (call, stop)
            # Through ``call`` and back to the line after the graph call.
            for _ in range(30):
                stop = pdb.command("step").stop
                if stop.path != inductor:
                    break
            assert where(stop) == (e0[0], e0[1] + 1), call
        assert "Exit status: 0" in pdb.command("continue").text


def test_pdb_quit_ends_framescope_run(tmp_path):
    # q at a breakpoint ends pdb, as it does in a program run without framescope: no
    # traceback of bdb.BdbQuit as if the program had failed, no summary of the run cut
    # short, and no restart. The dump is finished as far as the program ran.
    (tmp_path / "prog.py").write_text(RUN_PROGRAM)
    with start_framescope_run(tmp_path) as pdb:
        layout = first_pass(pdb, tmp_path)
        e1 = layout.transformed(1)
        assert "Breakpoint" in pdb.command("break %s:%d" % e1).text
        assert where(pdb.command("continue").stop) == e1
        start = len(pdb.transcript)
        stdin = pdb.process.stdin
        assert stdin is not None
        stdin.write(b"quit\n")  # stdin stays open: a restarted program would wait for more
        stdin.flush()
        try:
            status = pdb.process.wait(60)
        except subprocess.TimeoutExpired:
            raise AssertionError("pdb did not end after quit:\n%s" % pdb.transcript[start:]) from None
        pdb.close()
        after = pdb.transcript[start:]
    assert status == 0, after
    for text in ("BdbQuit", "Traceback", "exited via sys.exit()", "restarted", "dump:"):
        assert text not in after, after
    index = json.loads((layout.dump / "index.json").read_text())
    [frame] = index["frames"]
    assert [entry["file"] for entry in frame["entries"]] == [path.name for path, _graph in layout.entries]


# --------------------------------------------------------------------------- debugpy


def start_debugpy(folder: Path, *args: str) -> Debuggee:
    pytest.importorskip("debugpy")
    return Debuggee.start([sys.executable, "prog.py", "dump", *args], cwd=str(folder), env=environment())


def frame_where(frame: Dict) -> Tuple[str, int]:
    return os.path.normpath(frame["source"]["path"]), frame["line"]


def test_debugpy_stops_in_dumped_files(copy):
    # Entry 0's graph code and entry 1's transformed code: each stops when its entry runs.
    g0 = copy.graph(0)
    e1 = copy.transformed(1)
    with start_debugpy(copy.folder) as session:
        answers = session.attach({g0[0]: [g0[1]], e1[0]: [e1[1]]})
        assert [bp["verified"] for bps in answers.values() for bp in bps] == [True, True]
        seen, values = [], []
        for _ in range(4):
            stop = session.wait_stopped()
            assert stop["reason"] == "breakpoint"
            frame = session.top_frame(stop)
            seen.append((frame_where(frame), frame["name"]))
            local = session.locals(frame)
            values.append(local["L_x_"] if frame["name"] == "forward" else local["n"])
            session.resume(stop)
        assert seen == [(g0, "forward"), (e1, "f"), (g0, "forward"), (e1, "f")]
        assert values == ["tensor([1., 1., 1.])", "2", "tensor([1., 1., 1.])", "2"]
        assert session.wait_exit() == 0
        assert program_lines(session.program_output(), "CALL ") == copy.calls


def test_debugpy_binds_breakpoints_in_files_written_later(plain, tmp_path):
    # The dump does not exist when VS Code sends the breakpoints: debugpy answers
    # "Breakpoint in file that does not exist" and, with framescope.debug(), binds them
    # when the dump writes the files. Step Into goes from the graph call straight into the
    # graph's forward even with justMyCode off (framescope.debug() turns it on; with it off
    # debugpy steps into torch's wrapper), and showing tensors in the variables view does
    # not change what torch.compile compiles.
    write_program(tmp_path)
    e0, (e1, e1_line) = plain.transformed(0, tmp_path), plain.transformed(1, tmp_path)
    after_call = (e1, e1_line + 1)
    g0 = plain.graph(0, tmp_path)
    with start_debugpy(tmp_path, "debug") as session:
        answers = session.attach({e0[0]: [e0[1]], e1: [after_call[1]]}, just_my_code=False)
        assert [bp["verified"] for bps in answers.values() for bp in bps] == [False, False]
        stop = session.wait_stopped()
        assert frame_where(session.top_frame(stop)) == e0
        stop = session.step_in(stop)
        frame = session.top_frame(stop)
        assert (frame_where(frame)[0], frame["name"]) == (g0[0], "forward")
        assert session.locals(frame)["L_x_"] == "tensor([1., 1., 1.])"
        session.resume(stop)
        seen = []
        for _ in range(3):
            stop = session.wait_stopped()
            frame = session.top_frame(stop)
            local = session.locals(frame)
            seen.append((frame_where(frame), local["n"], local.get("graph_out_0")))
            session.resume(stop)
        out1 = "(tensor([1.9093, 1.9093, 1.9093]),)"
        assert seen == [(after_call, "2", out1), (e0, "1", None), (after_call, "2", out1)]
        assert session.wait_exit() == 0
        assert program_lines(session.program_output(), "CALL ") == plain.calls
    after = Layout(tmp_path, "")
    assert after.graph_names() == plain.graph_names()
    assert [frame["name"] for frame in after.index["frames"]] == ["f"]


def test_debugpy_breakpoints_in_missing_files_need_debug(plain, tmp_path):
    # The same breakpoints without framescope.debug(): debugpy never binds them.
    write_program(tmp_path)
    missing, line = plain.transformed(0, tmp_path)
    with start_debugpy(tmp_path) as session:
        answers = session.attach({missing: [line]})
        assert answers[missing][0]["verified"] is False
        assert "does not exist" in answers[missing][0]["message"]
        assert session.wait_exit(timeout=120) == 0
        assert [event for event in session.dap.events if event.get("event") == "stopped"] == []
        assert program_lines(session.program_output(), "CALL ") == plain.calls


# A graph with inputs enough that the dump writes its call one argument a line.
WIDE_PROGRAM = '''\
import sys

import torch

import framescope


def f(first_input, second_input, third_input, fourth_input, fifth_input, sixth_input):
    return (first_input + second_input + third_input + fourth_input + fifth_input + sixth_input) * 2


compiled = torch.compile(f, backend="eager")
inputs = [torch.ones(3) + i for i in range(6)]
with framescope.dump(sys.argv[1]):
    for call in range(2):
        print("CALL %d %s" % (call, compiled(*inputs).tolist()))
'''


def test_pdb_stops_once_on_a_graph_call_written_over_several_lines(tmp_path):
    # A statement runs as one line of its file, however many lines it is written on: a
    # breakpoint on the first line of the graph call stops once per call (for code compiled
    # as written, CPython 3.11 and later report the lines of the arguments, then the call's
    # line again), and ``next`` goes from the call to the line after it.
    (tmp_path / "prog.py").write_text(WIDE_PROGRAM)
    layout = Layout(tmp_path, run_plain(tmp_path))
    path, line = layout.transformed(0)
    lines = Path(path).read_text().splitlines()
    assert lines[line - 1].endswith("(") and lines[line].strip() == "first_input,"
    after = line + lines[line:].index("    )") + 2
    with start_pdb(layout) as pdb:
        assert "Breakpoint" in pdb.command("break %s:%d" % (path, line)).text
        assert [where(stop) for stop in pdb.stops_until_end()] == [(path, line)] * 2
        assert where(pdb.command("continue").stop) == (path, line)
        assert where(pdb.command("next").stop) == (path, after)
        assert where(pdb.command("continue").stop) == (path, line)
        assert "The program finished" in pdb.command("continue").text
        assert program_lines(pdb.transcript, "CALL ") == layout.calls * 2


# --------------------------------------------------------------------------- resume functions, other backends

BREAKING_PROGRAM = '''\
import sys

import torch

import framescope


def f(x, n):
    scale = x * n
    print("graph break")
    total = scale.sum() + 1
    return total


def main(folder, backend):
    compiled = torch.compile(f, backend=backend, dynamic=False)
    x = torch.ones(3)
    with framescope.dump(folder):
        for call in range(2):
            print("CALL %d %s" % (call, compiled(x, 2).item()))


main(sys.argv[1], sys.argv[2])
'''

# The line of the code each backend runs for the graph of f (in the stage file the graph
# runs from): AOTAutograd's forward graph for aot_eager, Inductor's wrapper for inductor.
GRAPH_LINE = {"aot_eager": "torch.ops.aten.mul.Tensor(", "inductor": "cpp_fused_mul_0(arg0_1"}


@pytest.mark.parametrize(
    "backend", ["aot_eager", pytest.param("inductor", marks=pytest.mark.slow)]
)
def test_pdb_in_resume_functions_and_backend_code(tmp_path, backend):
    (tmp_path / "prog.py").write_text(BREAKING_PROGRAM)
    output = run_plain(tmp_path, backend)
    index = json.loads((tmp_path / "dump" / "index.json").read_text())
    [f] = [frame for frame in index["frames"] if frame["name"] == "f"]
    [resume] = [frame for frame in index["frames"] if frame["resume_of"] == f["id"]]
    [graph] = f["entries"][0]["graphs"]
    [record] = [item for item in index["graphs"] if item["name"] == graph]
    [stage] = record["runs_from_file"]
    graph_file = tmp_path / "dump" / ("%s.%s.py" % (graph, stage))
    g = (str(graph_file), line_of(graph_file, GRAPH_LINE[backend]))
    resume_file = tmp_path / "dump" / resume["entries"][0]["file"]
    r = (str(resume_file), line_of(resume_file, "= %s(" % resume["entries"][0]["graphs"][0]))
    argv = [sys.executable, "-m", "pdb", "prog.py", "dump", backend]
    with PdbSession.start(argv, cwd=str(tmp_path), env=environment(), timeout=120) as pdb:
        for path, line in (g, r):
            assert "Breakpoint" in pdb.command("break %s:%d" % (path, line)).text
        seen, values = [], []
        for _ in range(4):
            stop = pdb.command("continue", timeout=300).stop
            seen.append(where(stop))
            # The resume function's argument under the user's name for it.
            values.append(pdb.command("p scale" if where(stop) == r else "p arg0_1").text.strip())
        assert "The program finished" in pdb.command("continue").text
        assert seen == [g, r, g, r]
        assert values == ["tensor([1., 1., 1.])", "tensor([2., 2., 2.])"] * 2
        assert program_lines(pdb.transcript, "CALL ") == program_lines(output, "CALL ")


# --------------------------------------------------------------------------- the API


def test_debug_is_lazy_and_library_code_is_known(run_python):
    done = run_python(
        "import sys, framescope\n"
        "from framescope import debugging\n"
        "assert framescope.debug is debugging.debug\n"
        "assert 'torch' not in sys.modules\n"
        "import torch\n"
        "import collections\n"
        "point = collections.namedtuple('Point', 'x y').__new__.__globals__['__name__']\n"
        "names = ['torch', 'torch._dynamo.eval_frame', 'os', 'framescope.dump', point, '__main__', None]\n"
        "print([debugging.is_library_module(name) for name in names])\n"
    )
    # A namedtuple's __new__ is made by collections (its own globals, named namedtuple_Point).
    assert done.stdout.strip() == "[True, True, True, True, True, False, False]"


LIBRARY_FRAMES = '''\
import os, sys, torch
from framescope import debugging


def frame_of(filename, module):
    scope = {} if module is None else {"__name__": module}
    exec(compile("import sys\\nframe = sys._getframe()", filename, "exec"), scope)
    return scope["frame"]


cases = [
    (os.path.dirname(torch.__file__) + "/_functorch/_aot_autograd/codegen.py:codegen(runtime)", None),
    (%r + "/dump/__compiled_fn_1.inductor.py", "torch._inductor.runtime.compile_tasks.c1abc"),
    ("<string>", "namedtuple_Point"),
    ("<string>", None),
    (os.path.dirname(torch.__file__) + "/__main__.py", "__main__"),
]
print([debugging.is_library_frame(frame_of(*case)) for case in cases])
'''


def test_library_code_is_decided_by_file(run_python, tmp_path):
    # torch's generated wrappers: a file name in torch's folder, globals that name no
    # module. Inductor's output code: a module named torch._inductor..., a file of the dump.
    # Code without a file: its module decides. The program is never library code.
    done = run_python(LIBRARY_FRAMES % str(tmp_path))
    assert done.stdout.strip() == "[True, False, True, False, False]"


def test_debug_without_a_debugger_changes_nothing(run_python):
    # No debugger: the block only watches compiles; results and dump are as without it.
    done = run_python(
        "import torch, framescope\n"
        "def f(x):\n"
        "    return x * 2\n"
        "with framescope.debug() as session:\n"
        "    out = torch.compile(f, backend='eager')(torch.ones(2))\n"
        "print(session.debuggers, out.tolist())\n"
    )
    assert done.stdout.strip() == "[] [2.0, 2.0]"
