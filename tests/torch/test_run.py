"""``framescope run`` on real torch.compile programs, each in a fresh ``python -m framescope``."""
from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("torch")

pytestmark = [pytest.mark.torch, pytest.mark.needs_subprocess]

ROOT = Path(__file__).resolve().parents[2]

# Three recompiles (four values of mode; a str is never made dynamic) and two graph breaks:
# the print, and torch._dynamo.graph_break() in the function that resumes after it.
PROGRAM = '''\
import os
import sys

import torch


@torch.compile(backend="inductor")
def f(x, mode):
    if mode == "sin":
        y = x.sin()
    elif mode == "cos":
        y = x.cos()
    else:
        y = x.tanh()
    print("break one", mode)
    y = y + 1
    torch._dynamo.graph_break()
    return y * 2


if __name__ == "__main__":
    x = torch.ones(4)
    for mode in ("sin", "cos", "tan", "exp"):
        f(x, mode)
    print("args", sys.argv[1:], "path0", sys.path[0] == os.path.dirname(os.path.abspath(__file__)))
    sys.exit(3)
'''

# Prints where torch.compile's end-of-compile callbacks come from: framescope.debug()
# installs one (through framescope.torch_internals), framescope.dump none.
DEBUGGED = '''\
import torch
from torch._dynamo.callback import callback_handler


@torch.compile(backend="eager")
def g(x):
    return x + 1


print(g(torch.ones(2)).tolist(), sorted(set(c.__module__ for c in callback_handler.end_callbacks)))
'''

FAILING = '''\
import torch


@torch.compile(backend="eager")
def g(x):
    return x + 1


def fail():
    raise ValueError("boom")


g(torch.ones(2))
fail()
'''


def line_of(text: str, program: str = PROGRAM) -> int:
    return next(i for i, line in enumerate(program.splitlines(), 1) if line.strip() == text)


def framescope(*args: str, cwd: Path, path: str = "") -> subprocess.CompletedProcess:
    env = dict(os.environ, PYTHONPATH=path + str(ROOT / "src"))
    return subprocess.run([sys.executable, "-m", "framescope", *args], cwd=str(cwd), env=env,
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE, universal_newlines=True, timeout=600)


@pytest.fixture(scope="module")
def ran(tmp_path_factory):
    """prog.py run once by framescope run: (folder, completed process)."""
    folder = tmp_path_factory.mktemp("run")
    (folder / "prog.py").write_text(PROGRAM)
    done = framescope("run", "--out", "dump", "prog.py", "a", "--out", "z", cwd=folder)
    return folder, done


def test_program_runs_as_under_python(ran):
    folder, done = ran
    # Its exit status, its stdout untouched (argv after the script is its own, sys.path[0] its folder).
    assert done.returncode == 3, done.stderr
    assert done.stdout == ("break one sin\nbreak one cos\nbreak one tan\nbreak one exp\n"
                           "args ['a', '--out', 'z'] path0 True\n")
    assert not (folder / "z").exists()
    # The dump records the program's command line, not framescope's.
    assert json.loads((folder / "dump" / "index.json").read_text())["argv"] == ["prog.py", "a", "--out", "z"]


def test_progress_is_printed_to_stderr_per_compile(ran):
    _, done = ran
    progress = [line for line in done.stderr.splitlines()
                if line.startswith(("framescope: compiled ", "framescope: recompiled "))]
    assert progress[0] == "framescope: compiled f (cache entry 0, compile 0/0)"
    assert [line for line in progress if line.startswith("framescope: recompiled f ")] == [
        "framescope: recompiled f (cache entry %d, compile 0/%d)" % (n, n) for n in (1, 2, 3)]
    assert len(progress) == 6  # f four times, each resume function once


def test_summary_names_each_recompile_with_its_guard_and_line(ran):
    _, done = ran
    lines = done.stderr.splitlines()
    assert any(line.startswith("framescope: 3 compiled frames, 6 cache entries, 3 recompiles, 2 graph breaks, ")
               for line in lines), done.stderr
    guard_line = line_of('if mode == "sin":')
    for entry, previous in ((1, "sin"), (2, "cos"), (3, "tan")):
        header = "  f, entry %d (compile 0/%d): guard failed: mode == '%s'" % (entry, entry, previous)
        assert header in lines, done.stderr
        assert lines[lines.index(header) + 1] == '      prog.py:%d: if mode == "sin":' % guard_line


def test_summary_names_each_graph_break_with_its_reason_and_line(ran):
    _, done = ran
    lines = done.stderr.splitlines()
    first, second = line_of('print("break one", mode)'), line_of("torch._dynamo.graph_break()")
    resume1, resume2 = "torch_dynamo_resume_in_f_at_%d" % first, "torch_dynamo_resume_in_f_at_%d" % second
    start = next(i for i, line in enumerate(lines) if line.startswith("  prog.py:%d in f" % first))
    assert "`print`" in lines[start]
    assert re.search(r": (\[GB\d{4}\] )?Failed to trace builtin operator: ", lines[start]), lines[start]
    assert lines[start + 1] == '      print("break one", mode)'
    assert re.match(r"      continues in %s, which adds \d+ graphs? and \d+\.\d\d s of compiling$" % resume1,
                    lines[start + 2]), lines[start + 2]
    assert lines[start + 3].startswith("      hint: ") and "`print`" in lines[start + 3]  # torch's hints
    start = next(i for i, line in enumerate(lines) if line.startswith("  prog.py:%d in %s" % (second, resume1)))
    assert "torch._dynamo.graph_break()" in lines[start]
    assert lines[start + 1] == "      torch._dynamo.graph_break()"
    assert lines[start + 2].startswith("      continues in %s, which adds " % resume2), lines[start + 2]
    # The frames, with what they resume, and the graphs with their sizes.
    assert any(line.startswith("  %s " % resume2) and line.endswith("resumes %s at line %d" % (resume1, second))
               for line in lines)
    graphs = [line for line in lines if line.startswith("  __compiled_fn_")]
    assert len(graphs) == 6 and all(" inductor " in line and " nodes, " in line for line in graphs)


def test_summary_says_where_the_dump_and_report_are(ran):
    folder, done = ran
    lines = done.stderr.splitlines()
    dump = folder / "dump"
    assert lines[-2:] == ["dump:   %s" % dump.resolve(), "report: %s" % (dump / "report" / "index.html").resolve()]


def test_report_of_the_run_loads_in_the_browser(ran):
    if str(ROOT) not in sys.path:
        sys.path.insert(0, str(ROOT))
    from tests.test_report import browser, check_in_browser, read_page

    folder, _ = ran
    index = folder / "dump" / "report" / "index.html"
    # The report also comes from the report command, the same.
    done = framescope("report", "dump", "--out", "again", cwd=folder)
    assert done.returncode == 0 and done.stdout.strip() == str(folder / "again" / "index.html")
    page = read_page(index)
    assert "frame_f.html#entry-3" in page.links
    driver = browser()
    try:
        assert check_in_browser(driver, index) > 50
    finally:
        driver.quit()


def test_exception_in_a_module_prints_its_traceback_and_the_summary(tmp_path):
    (tmp_path / "failing.py").write_text(FAILING)
    done = framescope("run", "--out", "dump", "--no-report", "-m", "failing", cwd=tmp_path)
    assert done.returncode == 1
    trace = done.stderr[done.stderr.index("Traceback (most recent call last):"):]
    trace = trace[:trace.index("ValueError: boom") + len("ValueError: boom")]
    # As python -m failing prints it: the program's frames only (3.11's ^^^ marks aside).
    assert [line for line in trace.splitlines()[1:] if line.strip(" ^~")] == [
        '  File "%s", line %d, in <module>' % (tmp_path / "failing.py", line_of("fail()", FAILING)),
        "    fail()",
        '  File "%s", line %d, in fail' % (tmp_path / "failing.py", line_of('raise ValueError("boom")', FAILING)),
        '    raise ValueError("boom")',
        "ValueError: boom"]
    assert "runpy" not in trace and str(ROOT / "src" / "framescope") not in trace
    assert "framescope: 1 compiled frame, 1 cache entry, 0 recompiles, 0 graph breaks, 1 graph;" in done.stderr
    assert not (tmp_path / "dump" / "report").exists()


def test_debug_runs_the_program_inside_framescope_debug(tmp_path):
    # No debugger is attached: the program runs as without --debug, with the debug block's
    # compile hook installed.
    (tmp_path / "prog.py").write_text(DEBUGGED)
    done = framescope("run", "--debug", "--no-report", "--out", "dump", "prog.py", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    result, modules = done.stdout.strip().split("] ", 1)
    assert result == "[2.0, 2.0"
    assert "framescope.torch_internals" in modules
    assert "framescope: 1 compiled frame, 1 cache entry, " in done.stderr


def test_a_torch_without_an_internal_runs_the_program_without_a_dump(tmp_path):
    # Real torch with one internal the dump needs taken away before framescope starts, as an
    # older or newer torch may lack it: one line says so, and the program runs unchanged.
    site = tmp_path / "site"
    site.mkdir()
    (site / "sitecustomize.py").write_text(
        "import torch._dynamo.convert_frame as convert_frame\n"
        "del convert_frame.register_bytecode_hook\n"
    )
    (tmp_path / "prog.py").write_text(PROGRAM)
    done = framescope("run", "--out", "dump", "prog.py", "a", cwd=tmp_path, path=str(site) + os.pathsep)
    plain = subprocess.run([sys.executable, "prog.py", "a"], cwd=str(tmp_path), stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE, universal_newlines=True, timeout=600)
    assert (done.returncode, done.stdout) == (plain.returncode, plain.stdout) == (3, plain.stdout)
    import torch

    assert [line for line in done.stderr.splitlines() if line.startswith("framescope")] == [
        "framescope: torch %s lacks torch._dynamo.convert_frame.register_bytecode_hook, which "
        "framescope.dump needs; framescope decompile and framescope report do not need torch; "
        "running the program without a dump" % torch.__version__
    ]
    assert not (tmp_path / "dump").exists()


def test_the_explain_example_names_what_to_fix_first(tmp_path):
    # examples/explain_program.py: a graph break in a helper called from a loop (Dynamo skips
    # the loop's frame), a data-dependent branch, value recompiles up to the recompile limit
    # and a size recompile.
    example = ROOT / "examples" / "explain_program.py"
    shutil.copy(str(example), str(tmp_path / "explain_program.py"))
    done = framescope("run", "--out", "dump", "--no-report", "explain_program.py", cwd=tmp_path)
    assert done.returncode == 0, done.stderr[-3000:]
    lines = done.stderr.splitlines()
    top = lines[lines.index("worth fixing first:") + 1:]
    firsts = [line for line in top if line[:5] in ("  1. ", "  2. ", "  3. ")]
    assert firsts[0].startswith("  1. scale reached torch.compile's recompile_limit (4): calls that no cache entry")
    # With the break Dynamo met inside the loop, which torch's text of the outer break leaves out.
    assert re.match(r"  2\. loop runs without torch.compile: Dynamo skipped the whole function at a graph break"
                    r"( \[GB\d{4}\])?: ", firsts[1]) and ".item()" in firsts[1], firsts[1]
    # The recompiles that led to the limit are part of its finding, not one of their own.
    assert top[top.index(firsts[0]) + 2] == "     in scale: 3 recompiles on n, then the recompile limit"
    assert firsts[2].startswith("  3. grow recompiled once on x ")
    # The first limit names the user's file as it does every other place.
    assert top[top.index(firsts[0]) + 1].startswith("     explain_program.py:32: return x * n"), top
    assert "      Dynamo skipped the whole function: every call of loop runs without torch.compile" in lines
    assert "      called with n = 3; compiled for n = 1, 2" in lines
    assert "      called with x = f32[8]; compiled for x = f32[4]" in lines
    assert any(line.startswith("      suggestion: the shape of x changed") for line in lines)
    assert any("Data-dependent branching" in line for line in lines)
    explained = framescope("explain", "dump", "--json", cwd=tmp_path)
    assert explained.returncode == 0
    kinds = [finding["kind"] for finding in json.loads(explained.stdout)["findings"]]
    assert kinds[:2] == ["recompile_limit", "recompile_limit"] and "graph_break" in kinds


SHOWS_ITS_START = '''\
import sys
import torch
print(sys.argv, __file__, __name__, sys.path[0] == %r)
print(torch.compile(lambda x: x + 1, backend="eager")(torch.ones(1)).item())
'''


def test_scripts_and_modules_start_as_under_python(tmp_path):
    # The console script, whose own sys.path[0] is its bin folder: modules are still looked up
    # in the current folder first, as python -m does, and a script's sys.argv[0] is as given.
    (tmp_path / "mymod.py").write_text(SHOWS_ITS_START % str(tmp_path))
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "__init__.py").write_text("")
    (tmp_path / "pkg" / "mod.py").write_text(SHOWS_ITS_START % str(tmp_path))
    (tmp_path / "prog.py").write_text(SHOWS_ITS_START % str(tmp_path))
    console = Path(sys.executable).parent / "framescope"
    assert console.exists()
    env = dict(os.environ, PYTHONPATH=str(ROOT / "src"))
    for program in (["-m", "mymod", "x", "y"], ["-m", "pkg.mod", "a"], ["prog.py", "q"]):
        plain = subprocess.run([sys.executable, *program], cwd=str(tmp_path), env=env, capture_output=True,
                               text=True, timeout=600)
        under = subprocess.run([str(console), "run", "--no-report", "--out", "d", *program], cwd=str(tmp_path),
                               env=env, capture_output=True, text=True, timeout=600)
        assert plain.returncode == 0, plain.stderr
        assert under.returncode == 0, under.stderr
        assert under.stdout == plain.stdout, program
        assert json.loads((tmp_path / "d" / "index.json").read_text())["argv"] == \
            [plain.stdout.split("'")[1]] + program[2 if program[0] == "-m" else 1:]
