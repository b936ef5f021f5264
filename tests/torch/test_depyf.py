"""depyf's API on framescope (``from framescope import depyf``): depyf's documented examples,
run with framescope in place of depyf and checked as depyf's documents describe them, and the
way vLLM uses it (per-rank dumps entered by hand, a backend that splits graphs)."""
from __future__ import annotations

import json
import marshal
import re
import socket
import subprocess
import sys
from pathlib import Path
from typing import Dict, List, Optional

import pytest

pytest.importorskip("torch")

from tests.support.environment import program_environment  # noqa: E402
from tests.support.pdb_driver import PdbError, PdbSession  # noqa: E402

pytestmark = [pytest.mark.torch, pytest.mark.needs_subprocess]

ROOT = Path(__file__).resolve().parents[2]


environment = program_environment


def run(folder: Path, program: str, *args: str, env: Optional[Dict[str, str]] = None,
        timeout: float = 300) -> subprocess.CompletedProcess:
    """Write ``program`` to folder/prog.py and run it there; fail the test on a non-zero exit."""
    (folder / "prog.py").write_text(program, encoding="utf-8")
    done = subprocess.run([sys.executable, "prog.py", *args], cwd=str(folder), env=env or environment(),
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE, universal_newlines=True,
                          timeout=timeout)
    assert done.returncode == 0, "exit %d\nstdout:\n%s\nstderr:\n%s" % (
        done.returncode, done.stdout[-3000:], done.stderr[-6000:])
    return done


def assert_all_compile(folder: Path) -> List[Path]:
    files = sorted(folder.rglob("*.py"))
    assert files
    for path in files:
        compile(path.read_text(encoding="utf-8"), str(path), "exec")
    return files


# --------------------------------------------------------------------------- depyf's README

# depyf's README, first example, with `from framescope import depyf` for `import depyf`, and
# the results printed (the README's main() discards them) so that eager can be compared.
README_PROGRAM = '''\
import sys
import torch
from framescope import depyf

@torch.compile
def toy_example(a, b):
    x = a / (torch.abs(a) + 1)
    if b.sum() < 0:
        b = b * -1
    return x * b

def main():
    torch.manual_seed(0)
    total = 0.0
    for _ in range(100):
        total += float(toy_example(torch.randn(10), torch.randn(10)).sum())
    print("TOTAL %.6f" % total)

if __name__ == "__main__":
    if sys.argv[1] == "eager":
        with torch.compiler.set_stance("force_eager"):
            main()
        sys.exit(0)
    with depyf.prepare_debug("./dump_src_dir"):
        main()
    if sys.argv[1] == "debug":
        with depyf.debug():
            main()
'''


def test_readme_prepare_debug_writes_what_depyf_describes(tmp_path):
    eager = run(tmp_path, README_PROGRAM, "eager").stdout
    done = run(tmp_path, README_PROGRAM, "dump")
    assert done.stdout == eager  # outputs unchanged
    folder = tmp_path / "dump_src_dir"
    names = [path.name for path in assert_all_compile(folder)]
    # The README's list: full_code_for_xxx.py per compiled function, __transformed_code_* per
    # graph's Python code, __compiled_fn_* per graph and its stages (AOT graphs, Inductor's code).
    assert "full_code_for_toy_example.py" in names
    assert "__transformed_code_0_for_toy_example.py" in names
    # The branch on b.sum() breaks the graph: Dynamo continues each way in a resume function.
    resumes = [name for name in names if name.startswith("__transformed_code_0_for_torch_dynamo_resume_in_toy_example")]
    assert len(resumes) == 2, names
    stages = {name.split(".")[1] for name in names if name.startswith("__compiled_fn_")}
    assert {"dynamo", "aot_forward", "inductor"} <= stages, names
    index = json.loads((folder / "index.json").read_text())
    resume = [frame for frame in index["frames"] if frame["resume_of"] == "toy_example"]
    assert len(resume) == 2 and all(len(frame["entries"]) == 1 for frame in resume)
    full = (folder / "full_code_for_toy_example.py").read_text()
    assert "def toy_example(a, b):" in full and "__guard_0_for_toy_example" in full


def test_readme_debug_stops_at_breakpoints_in_the_dumped_files(tmp_path):
    eager = run(tmp_path, README_PROGRAM, "eager").stdout
    with PdbSession.start([sys.executable, "prog.py", "debug"], cwd=str(tmp_path), env=environment(),
                          timeout=600) as pdb:
        # depyf.debug() pauses after the dump: the files are there to set breakpoints in.
        assert "framescope paused the program" in pdb.transcript
        assert str(tmp_path / "dump_src_dir") in pdb.transcript
        transformed = tmp_path / "dump_src_dir" / "__transformed_code_0_for_toy_example.py"
        [line] = [n for n, text in enumerate(transformed.read_text().splitlines(), 1) if "__compiled_fn_" in text
                  and "=" in text and "import" not in text]
        assert "Breakpoint 1" in pdb.command("break %s:%d" % (transformed, line)).text
        stop = pdb.command("continue", timeout=300).stop
        assert stop is not None and (stop.path, stop.line) == (str(transformed), line)
        pdb.command("clear 1")
        pdb.process.stdin.write(b"continue\n")
        pdb.process.stdin.flush()
        assert pdb.process.wait(300) == 0
        with pytest.raises(PdbError):
            pdb.wait_prompt(5)
        out = pdb.transcript
    # The program's output: the dump's run, then the same again under depyf.debug().
    totals = re.findall(r"TOTAL \S+", out)
    assert totals == [eager.strip()] * 2, out[-3000:]


def test_a_breakpoint_at_line_2_of_a_transformed_file_as_depyfs_test_sets_it(tmp_path):
    # depyf's own tests/test_pytorch/test_debug.py and debug_input.txt: its breakpoint, given
    # relative to the current folder (pdb looks only in sys.path's folders), on line 2 of the
    # file: the first statement of the def on line 1.
    (tmp_path / "prog.py").write_text(README_PROGRAM.replace("./dump_src_dir", "./test_debug_output"))
    with PdbSession.start([sys.executable, "prog.py", "debug"], cwd=str(tmp_path), env=environment(),
                          timeout=600) as pdb:
        transformed = tmp_path / "test_debug_output" / "__transformed_code_0_for_toy_example.py"
        lines = transformed.read_text().splitlines()
        assert lines[0] == "def toy_example(a, b):" and lines[1].startswith("    "), lines[:3]
        reply = pdb.command("b test_debug_output/__transformed_code_0_for_toy_example.py:2").text
        assert "Breakpoint 1 at %s:2" % transformed in reply, reply
        stop = pdb.command("continue", timeout=300).stop
        assert stop is not None and (stop.path, stop.line) == (str(transformed), 2)
        pdb.command("clear test_debug_output/__transformed_code_0_for_toy_example.py:2")
        pdb.process.stdin.write(b"continue\n")
        pdb.process.stdin.flush()
        assert pdb.process.wait(300) == 0


# --------------------------------------------------------------------------- install()

INSTALL_PROGRAM = '''\
import torch
from framescope import depyf

depyf.install()
depyf.install()  # twice: one hook

@torch.compile(backend="eager")
def f(a, b):
    x = a + b
    print("graph break")
    return x * 2

f(torch.tensor(1), torch.tensor(2))
depyf.uninstall()
print("UNINSTALLED", flush=True)
f(torch.tensor(1.0), torch.tensor(2.0))  # a recompile: no source logged now
'''


def logged_sources(log: str) -> List[str]:
    """The texts logged after "possible source code:" in torch's bytecode log."""
    lines = [re.sub(r"^.*\[__bytecode\] ?", "", line) for line in log.splitlines() if "[__bytecode]" in line]
    texts, current = [], None
    for line in lines:
        if line.startswith("possible source code:"):
            current = []
            texts.append(current)
        elif current is not None and (line.startswith(("ORIGINAL BYTECODE", "MODIFIED BYTECODE")) or not line):
            current = None
        elif current is not None:
            current.append(line)
    return ["\n".join(text) + "\n" for text in texts]


def test_install_logs_decompiled_source_with_torch_logs_bytecode(tmp_path):
    from framescope.decompiler.api import MACHINE_MADE

    done = run(tmp_path, INSTALL_PROGRAM, env=environment(TORCH_LOGS="+bytecode"))
    before, _, after = done.stderr.partition("MODIFIED BYTECODE torch_dynamo_resume_in_f")
    texts = logged_sources(done.stderr)
    # Two compiles while installed (f and its resume function), one source each.
    assert len(texts) == 2, done.stderr[-5000:]
    assert done.stderr.count("MODIFIED BYTECODE") == 4  # and two more after uninstall()
    for text in texts:
        assert text.startswith(MACHINE_MADE), text
        compile(text, "<logged>", "exec")
    assert "def f(a, b):" in texts[0] and "__compiled_fn_" in texts[0]
    assert "def torch_dynamo_resume_in_f_at_" in texts[1]
    assert before and after
    # Without TORCH_LOGS nothing is logged (and nothing decompiled).
    quiet = run(tmp_path, INSTALL_PROGRAM)
    assert "possible source code" not in quiet.stderr and "graph break" in quiet.stdout


# --------------------------------------------------------------------------- log_bytecode

BYTECODE_PROGRAM = '''\
import torch
from framescope import depyf

def f(a, b):
    return torch.sin(a) + b

with depyf.prepare_debug("dump", clean_wild_fx_code=False, log_bytecode=True):
    torch.compile(f, backend="eager")(torch.ones(3), torch.ones(3))
'''


def test_log_bytecode_writes_each_entrys_code_objects(tmp_path):
    run(tmp_path, BYTECODE_PROGRAM)
    folder = tmp_path / "dump"
    index = json.loads((folder / "index.json").read_text())
    [frame] = index["frames"]
    [entry] = frame["entries"]
    stem = "__transformed_code_0_for_f.py"
    assert entry["bytecode_files"] == [stem + ".original_bytecode", stem + ".transformed_bytecode",
                                       stem + ".decompiled_and_compiled_back_bytecode"]
    original, transformed, back = (marshal.loads((folder / name).read_bytes()) for name in entry["bytecode_files"])
    assert original.co_name == transformed.co_name == back.co_name == "f"
    assert original.co_filename == transformed.co_filename == str(tmp_path / "prog.py")
    assert back.co_filename == str(folder / stem)  # the code the entry runs, compiled from the file
    assert "__compiled_fn_1" not in original.co_names and any(
        name.startswith("__compiled_fn_") for name in transformed.co_names)


# --------------------------------------------------------------------------- the dispatcher

# depyf's optimization tutorial: call the compiled code directly, without its guards. The
# backend counts compiles and graph runs.
DISPATCH_PROGRAM = '''\
import json, sys
import torch
from framescope import depyf
from framescope.depyf.optimization import TorchCompileWrapperWithCustomDispatcher

compiles, runs = [], []

def counting(gm, example_inputs):
    compiles.append(len(gm.graph.nodes))
    def run(*args):
        runs.append(1)
        return gm.forward(*args)
    return run

class F(torch.nn.Module):
    def __init__(self, i):
        super().__init__()
        self.i = i

    def forward(self, x):
        return x + self.i

class Mod(TorchCompileWrapperWithCustomDispatcher):
    def __init__(self, n: int):
        self.fs = torch.nn.ModuleList([F(i) for i in range(n)])
        compiled_callable = torch.compile(self.forward, backend=counting)
        super().__init__(compiled_callable)

    def forward(self, x):
        for f in self.fs:
            x = f(x)
        return x

    def __call__(self, x):
        if len(self.compiled_codes) == 1:
            with self.dispatch_to_code(0):
                self.ran = type(self).forward.__code__
                return self.forward(x)
        else:
            return self.compiled_callable(x)

dump = depyf.prepare_debug("dump") if sys.argv[1] == "dump" else None
if dump is not None:
    dump.__enter__()
mod = Mod(10)
other = Mod(3)
first = mod(torch.tensor([1]))           # compiles
second = mod(torch.tensor([2]))          # dispatched: no guard, the graph runs
mod.fs[0].i = 100                        # a guard would fail now; the dispatched code keeps 0
third = mod(torch.tensor([2]))
other_out = other(torch.tensor([1]))     # another object: its own code, not mod's
print("OUT " + json.dumps({
    "outputs": [int(first), int(second), int(third), int(other_out)],
    "codes": [len(mod.compiled_codes), len(other.compiled_codes)],
    "compiles": len(compiles), "runs": len(runs),
    "ran_file": mod.ran.co_filename,
    "restored": type(mod).forward.__code__ is mod.original_code_object,
}))
'''


@pytest.mark.parametrize("mode", ["plain", "dump"])
def test_dispatcher_calls_the_chosen_entry_without_guards(tmp_path, mode):
    out = json.loads(run(tmp_path, DISPATCH_PROGRAM, mode).stdout.split("OUT ", 1)[1])
    assert out["outputs"] == [1 + 45, 2 + 45, 2 + 45, 1 + 3]
    assert out["codes"] == [1, 1]
    assert out["compiles"] == 2  # one per object; the dispatched calls compiled nothing
    assert out["runs"] == 4      # every call ran a compiled graph
    assert out["restored"]
    if mode == "dump":  # the code that ran is the entry's, compiled from its dumped file
        assert out["ran_file"] == str(tmp_path / "dump" / "__transformed_code_0_for_forward.py")
    else:
        assert out["ran_file"] == str(tmp_path / "prog.py")


# --------------------------------------------------------------------------- as vLLM uses it

# Two ranks (gloo), each entering prepare_debug by hand into <root>/rank_<r> when compiling
# starts and never leaving it, with a backend that splits each graph at its relu calls and
# compiles every piece (as vLLM's piecewise backend does), and an all_reduce between ranks.
VLLM_PROGRAM = '''\
import json, os, sys
import torch
import torch.distributed as dist
from torch._guards import detect_fake_mode
from torch._inductor.compile_fx import compile_fx
from torch.fx.passes.split_module import split_module
from framescope import depyf

rank = int(os.environ["RANK"])
dist.init_process_group("gloo")

pieces = []

class CompilePieces(torch.fx.Interpreter):
    """Run the split graph on the example inputs, compiling each piece with Inductor when
    it is reached, as vLLM's piecewise backend does."""

    def call_module(self, target, args, kwargs):
        out = super().call_module(target, args, kwargs)
        pieces.append(target)
        self.module.__dict__[target] = compile_fx(self.fetch_attr(target), list(args))
        return out

def piecewise(gm, example_inputs):
    counter = [0]
    def split_at_relu(node):
        if node.op == "call_function" and node.target is torch.relu:
            counter[0] += 2  # each relu is a piece of its own
            return counter[0] - 1
        return counter[0]
    split = split_module(gm, None, split_at_relu)
    fake_mode = detect_fake_mode(example_inputs)  # shapes only, as vLLM compiles them
    with fake_mode:
        CompilePieces(split).run(*[fake_mode.from_tensor(t) if isinstance(t, torch.Tensor) else t
                                   for t in example_inputs])
    return split

class Model(torch.nn.Module):
    def __init__(self):
        super().__init__()
        torch.manual_seed(0)
        self.a = torch.nn.Linear(8, 8)
        self.b = torch.nn.Linear(8, 8)

    def forward(self, x):
        h = torch.relu(self.a(x))
        if h.sum() > 1e9:  # never: a data-dependent branch, so a graph break
            h = h * 0
        return torch.relu(self.b(h)) * (rank + 1)

model = Model()
x = torch.ones(4, 8) * (rank + 1)
expected = model(x).detach()
dist.all_reduce(expected)

if sys.argv[1] == "dump":
    depyf.prepare_debug(os.path.join(sys.argv[2], "rank_%d" % rank)).__enter__()

compiled = torch.compile(model, backend=piecewise)
with torch.no_grad():
    out = compiled(x)
    out = compiled(x)
dist.all_reduce(out)
print("OUT " + json.dumps({"rank": rank, "same": bool(torch.allclose(out, expected)), "pieces": len(pieces)}),
      flush=True)
dist.destroy_process_group()
'''


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def test_vllm_shaped_two_ranks_enter_prepare_debug_by_hand(tmp_path):
    (tmp_path / "prog.py").write_text(VLLM_PROGRAM, encoding="utf-8")
    port = str(free_port())
    ranks = [
        subprocess.Popen(
            [sys.executable, "prog.py", "dump", str(tmp_path / "debug_dump")], cwd=str(tmp_path),
            env=environment(RANK=str(rank), WORLD_SIZE="2", MASTER_ADDR="127.0.0.1", MASTER_PORT=port),
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, universal_newlines=True,
        )
        for rank in (0, 1)
    ]
    outputs = []
    for process in ranks:
        try:
            stdout, stderr = process.communicate(timeout=600)
        finally:
            process.kill()
        assert process.returncode == 0, stderr[-6000:]
        outputs.append(json.loads(stdout.split("OUT ", 1)[1]))
    assert [out["rank"] for out in outputs] == [0, 1]
    assert all(out["same"] for out in outputs)
    assert all(out["pieces"] >= 2 for out in outputs)
    # Each rank's dump in the folder the program named (not rank_<r>/rank_<r>), finished at
    # process exit although the program never left prepare_debug.
    assert sorted(path.name for path in (tmp_path / "debug_dump").iterdir()) == ["rank_0", "rank_1"]
    for rank in (0, 1):
        folder = tmp_path / "debug_dump" / ("rank_%d" % rank)
        index = json.loads((folder / "index.json").read_text())
        names = {frame["name"] for frame in index["frames"]}
        assert "forward" in names and any(name.startswith("torch_dynamo_resume_in_forward") for name in names)
        assert all(entry["decompiled"] for frame in index["frames"] for entry in frame["entries"])
        files = [path.name for path in assert_all_compile(folder)]
        assert "full_code_for_forward.py" in files
        # Both graphs (before and after the break) split: every piece's Inductor code and the
        # split graph, each running from its file.
        assert len(index["graphs"]) == 2 and not index["warnings"]
        for graph in index["graphs"]:
            pieces = [piece["piece"] for piece in graph["pieces"]]
            assert len(pieces) >= 2
            # (Inductor writes no code for a piece it reduces to an alias of its input: rank 0's "* 1".)
            coded = [piece for piece in pieces if "%s.inductor" % piece in graph["files"]]
            assert len(coded) >= 2
            assert graph["runs_from_file"] == ["%s.inductor" % piece for piece in coded] + ["split"]
