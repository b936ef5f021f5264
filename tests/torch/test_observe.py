"""A dump observes torch.compile without altering it: the same frames compile, in the same
order, with the same compile ids and graph breaks, with the dump and without it.

Each program runs twice in a fresh interpreter, once plainly and once inside
``framescope.dump``, and records every frame compile with torch's own bytecode hook (not
framescope's) and torch's own counters.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any, Dict, Optional

import pytest

pytestmark = [pytest.mark.torch, pytest.mark.needs_subprocess]

# Records what torch compiles, through torch's hook and counters; ``main()`` runs the
# program, inside framescope.dump when argv[1] names a folder.
RECORDER = '''
import json, os, sys
import torch
from torch._dynamo import convert_frame
from torch._dynamo.utils import counters
from torch._guards import CompileContext

compiled = []
# Every frame torch.compile's frame hook looked at, from outside torch and the standard
# library: the program's own (Dynamo skips the others at a glance, but a dump's structured
# trace makes torch run more of its logging code under the hook).
seen = []
OWN = (os.path.dirname(torch.__file__), os.path.dirname(os.__file__), "<")

def record(code, new_code):
    compiled.append("%s:%s:%s" % (os.path.basename(code.co_filename), code.co_name,
                                  CompileContext.current_compile_id()))

convert_frame.register_bytecode_hook(record)
convert_one = convert_frame.ConvertFrame.__call__

def look(self, frame, *args, **kwargs):
    code = frame.f_code
    if not code.co_filename.startswith(OWN):
        seen.append("%s:%s" % (code.co_filename, code.co_name))
    return convert_one(self, frame, *args, **kwargs)

convert_frame.ConvertFrame.__call__ = look

def finish(main):
    if len(sys.argv) > 1:
        import framescope
        with framescope.dump(sys.argv[1]):
            main()
    else:
        main()
    print("RESULT " + json.dumps({
        "compiled": compiled,
        "graph_breaks": sorted(counters["graph_break"].items()),
        "seen": seen,
        "unique_graphs": counters["stats"]["unique_graphs"],
    }))
'''

# The everyday training-loop shape: a graph break on loss.item(), then loss.backward() in
# the resume function, which compiles the backward lazily under a compiled frame; and an
# Inductor function after it.
TRAINING_STEP = '''
class Net(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = torch.nn.Linear(8, 8)

    def forward(self, x):
        return torch.relu(self.fc(x))

torch.manual_seed(0)
net = Net()

@torch.compile(backend=os.environ["BACKEND"])
def step(x):
    loss = net(x).sum()
    print("loss", loss.item())
    loss.backward()
    return loss

@torch.compile(backend="inductor")
def ind(x):
    return torch.sin(x) + 1

def main():
    for _ in range(3):
        step(torch.randn(4, 8))
    ind(torch.randn(5))

finish(main)
'''

# A real library's model: a tiny GPT-2 from a config, a compiled training step.
GPT2_STEP = '''
from transformers import GPT2Config, GPT2LMHeadModel

torch.manual_seed(0)
config = GPT2Config(vocab_size=96, n_positions=32, n_embd=32, n_layer=2, n_head=2,
                    bos_token_id=95, eos_token_id=95)
model = GPT2LMHeadModel(config)
optimizer = torch.optim.SGD(model.parameters(), lr=0.01)

@torch.compile(backend=os.environ["BACKEND"])
def train_step(ids):
    loss = model(ids, labels=ids).loss
    print("loss", float(loss))
    loss.backward()
    optimizer.step()
    optimizer.zero_grad()
    return loss

def main():
    for length in (12, 12, 16):
        train_step(torch.randint(0, 96, (2, length)))

finish(main)
'''


def run_file(path: Path, *args: str, cache_dir: Optional[Path] = None, **env: str) -> Dict[str, Any]:
    """Run the program file ``path`` in a fresh interpreter (its folder the current one, a
    cache folder of its own: ``cache_dir`` or one next to it); return what it printed after
    ``RESULT``."""
    environment = dict(os.environ, TORCHINDUCTOR_CACHE_DIR=str(cache_dir or path.parent / "cache"), **env)
    done = subprocess.run([sys.executable, str(path)] + list(args), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                          universal_newlines=True, timeout=600, cwd=str(path.parent), env=environment)
    assert done.returncode == 0, done.stderr[-6000:]
    lines = [line for line in done.stdout.splitlines() if line.startswith("RESULT ")]
    assert lines, done.stderr[-4000:]
    return json.loads(lines[-1][len("RESULT "):])


def run_both(folder: Path, program: str, backend: str, timeout: float = 400) -> Dict[str, Any]:
    """Run ``program`` plainly and inside a dump; return {"plain": ..., "dump": ...} of what
    each recorded, and ``folder`` / ``dump``."""
    path = folder / "prog.py"
    path.write_text(RECORDER + textwrap.dedent(program))
    results: Dict[str, Any] = {}
    # Each run compiles cold: the same starting point for both.
    for label, args in (("plain", []), ("dump", [str(folder / "dump")])):
        results[label] = run_file(path, *args, cache_dir=folder / ("cache_" + label), BACKEND=backend)
    results["dump_folder"] = folder / "dump"
    return results


def assert_same_compiles(results: Dict[str, Any]) -> None:
    plain, dumped = results["plain"], results["dump"]
    assert plain["compiled"], "the program compiled nothing"
    assert dumped["compiled"] == plain["compiled"]
    assert dumped["graph_breaks"] == plain["graph_breaks"]
    assert dumped["seen"] == plain["seen"]
    assert dumped["unique_graphs"] == plain["unique_graphs"]
    # Dynamo never looked at framescope's code, and the dump has every compile.
    assert not any("framescope" in item for item in dumped["seen"])
    index = json.loads((results["dump_folder"] / "index.json").read_text())
    ids = sorted(entry["compile_id"] for frame in index["frames"] for entry in frame["entries"])
    assert ids == sorted(item.rsplit(":", 1)[1] for item in plain["compiled"])


@pytest.mark.parametrize("backend", ["aot_eager", "inductor"])
def test_a_lazily_compiled_backward_compiles_nothing_of_framescope(tmp_path, backend):
    results = run_both(tmp_path, TRAINING_STEP, backend)
    # The backward after the graph break compiles under the resume function's frame.
    assert any("resume_in_step" in item for item in results["plain"]["compiled"])
    assert_same_compiles(results)


@pytest.mark.slow
def test_a_transformers_training_step_compiles_the_same_frames(tmp_path):
    pytest.importorskip("transformers")
    results = run_both(tmp_path, GPT2_STEP, "aot_eager", timeout=600)
    assert_same_compiles(results)


# --------------------------------------------------------------------------- warm caches

CACHED = '''
import json, sys
import torch
import framescope

@torch.compile(backend="inductor")
def f(x):
    return torch.sin(x) * 2 + 1

class Net(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = torch.nn.Linear(8, 8)

    def forward(self, x):
        return torch.relu(self.fc(x)).sum()

torch.manual_seed(0)
net = torch.compile(Net())
ran = set()

def trace(frame, event, arg):
    if frame.f_code.co_filename.startswith(sys.argv[1]):
        ran.add(frame.f_code.co_filename.rsplit("/", 1)[1])
    return None

def main():
    sys.settrace(trace)
    y = f(torch.ones(5))
    net(torch.ones(4, 8)).backward()
    sys.settrace(None)
    return y

if sys.argv[2] == "plain":
    y = main()
else:
    with framescope.dump(sys.argv[1], caches=sys.argv[2] == "on"):
        y = main()
print("RESULT " + json.dumps({"ran": sorted(ran), "y": y.tolist()}))
'''


def run_cached(folder: Path, dump: str, caches: str, cache_dir: Path) -> Dict[str, Any]:
    path = folder / "cached.py"
    path.write_text(CACHED)
    result = run_file(path, str(folder / dump), caches, cache_dir=cache_dir)
    if caches != "plain":
        result["index"] = json.loads((folder / dump / "index.json").read_text())
    return result


@pytest.mark.slow
def test_caches_stay_on_and_a_hit_still_has_its_code(tmp_path):
    cache_dir = tmp_path / "cache"
    cold = run_cached(tmp_path, "cold", "on", cache_dir)
    warm = run_cached(tmp_path, "warm", "on", cache_dir)
    assert warm["y"] == cold["y"]
    cold_graphs, warm_graphs = cold["index"]["graphs"], warm["index"]["graphs"]
    assert [g["name"] for g in cold_graphs] == [g["name"] for g in warm_graphs] and len(warm_graphs) == 2
    for graph in cold_graphs:
        assert graph["caches"]["aot_autograd"] == "miss" and graph["caches"]["fx_graph"] == "miss"
    for graph in warm_graphs:
        assert graph["caches"]["aot_autograd"] == "hit" and graph["caches"]["fx_graph"] == "hit", graph
        assert graph["cache_saved_s"]["aot_autograd"] > 0
        # Served from the cache: Inductor's code is there, and it is what runs.
        assert "inductor" in graph["files"] and "inductor" in graph["runs_from_file"]
        assert "dynamo" not in graph["runs_from_file"]
        assert graph["files"]["inductor"] in warm["ran"]
        assert "pre_grad" not in graph["files"]
    training = warm_graphs[1]
    assert training["caches"]["fx_graph_backward"] == "hit"
    assert {"inductor", "inductor_backward"} <= set(training["files"])
    assert training["files"]["inductor_backward"] in warm["ran"]
    # index.md says what the caches did and which stages a hit has no file for.
    text = (tmp_path / "warm" / "index.md").read_text()
    assert "served from the compile cache: " in text and "no files for pre_grad" in text


@pytest.mark.slow
def test_a_cache_a_plain_run_filled_serves_the_dumped_run(tmp_path):
    # The dump changes nothing the caches' keys hash: what the program's own runs compiled
    # is what its dumped run gets.
    cache_dir = tmp_path / "cache"
    plain = run_cached(tmp_path, "unused", "plain", cache_dir)
    dumped = run_cached(tmp_path, "dump", "on", cache_dir)
    assert dumped["y"] == plain["y"] and len(dumped["index"]["graphs"]) == 2
    for graph in dumped["index"]["graphs"]:
        assert graph["caches"]["aot_autograd"] == "hit" and graph["caches"]["fx_graph"] == "hit", graph


@pytest.mark.slow
def test_caches_off_compiles_every_stage(tmp_path):
    cache_dir = tmp_path / "cache"
    run_cached(tmp_path, "first", "on", cache_dir)
    off = run_cached(tmp_path, "off", "off", cache_dir)
    assert len(off["index"]["graphs"]) == 2
    for graph in off["index"]["graphs"]:
        assert graph["caches"] == {}
        assert {"pre_grad", "aot_forward", "post_grad", "inductor"} <= set(graph["files"])


# --------------------------------------------------------------------------- entries made before

BEFORE = '''
import json, sys
import torch
import framescope

def f(x, n):
    return torch.sin(x) * n

@torch.compile(backend="inductor")
def g(x):
    return torch.cos(x) + 1

compiled_f = torch.compile(f, backend="eager", dynamic=False)
x = torch.ones(4)
compiled_f(x, 1)
compiled_f(x, 2)
g(x)
ran = set()

def trace(frame, event, arg):
    if frame.f_code.co_filename.startswith(sys.argv[1]):
        ran.add(frame.f_code.co_filename.rsplit("/", 1)[1])
    return None

with framescope.dump(sys.argv[1]):
    sys.settrace(trace)
    compiled_f(x, 1)
    compiled_f(x, 3)
    for _ in range(5):
        y = g(x)
    sys.settrace(None)
print("RESULT " + json.dumps({"ran": sorted(ran), "error": (y - torch.cos(x) - 1).abs().max().item()}))
'''


def test_entries_compiled_before_the_dump_are_dumped(tmp_path):
    path = tmp_path / "before.py"
    path.write_text(BEFORE)
    result = run_file(path, str(tmp_path / "dump"))
    index = json.loads((tmp_path / "dump" / "index.json").read_text())
    assert result["error"] < 1e-6
    frames = {frame["id"]: frame for frame in index["frames"]}
    f_entries, g_entries = frames["f"]["entries"], frames["g"]["entries"]
    # In compile order: the two entries made before the dump, then the one made inside it.
    assert [(e["index"], e["compile_id"], e["compiled_before_dump"]) for e in f_entries] == [
        (0, "0/0", True), (1, "0/1", True), (2, "0/2", False)]
    assert [(e["compile_id"], e["compiled_before_dump"]) for e in g_entries] == [("1/0", True)]
    for entry in f_entries + g_entries:
        text = (tmp_path / "dump" / entry["file"]).read_text()
        assert "def " in text and entry["decompiled"]
        assert entry["guard"], "the guard torch holds for the entry"
        assert entry["graphs"]
    full_code = (tmp_path / "dump" / "full_code_for_f.py").read_text()
    for entry in f_entries:
        assert "def %s(" % entry["guard_function"] in full_code
    # The graphs of the earlier entries: Dynamo's graph (eager) and Inductor's code, which
    # runs from the dump from then on.
    graphs = {graph["name"]: graph for graph in index["graphs"]}
    assert "dynamo" in graphs[f_entries[0]["graphs"][0]]["files"]
    inductor = graphs[g_entries[0]["graphs"][0]]
    assert inductor["files"]["inductor"] in result["ran"]
    assert "compiled before the dump began" in (tmp_path / "dump" / "index.md").read_text()
    # Calls served per entry: f(x, 1) by entry 0/0, f(x, 3) by the entry it compiled, g five
    # times; and the one call that missed every entry of f and compiled its third.
    calls = [e["calls"] for e in f_entries + g_entries]
    assert calls == [1, 0, 1, 5]
    assert index["calls_missed"] == 1
    # torch's guard size and the time it measured checking the guard once, for the entry
    # compiled inside the dump (torch measures it at the end of a compile).
    made = f_entries[2]
    assert made["guard_count"] > 0 and made["guard_latency_us"] > 0
    markdown = (tmp_path / "dump" / "index.md").read_text()
    assert "guard: %d checks, " % made["guard_count"] in markdown and " to check them once" in markdown


# --------------------------------------------------------------------------- exact guards

# Compiles entries of three kinds (an int and a float argument with dynamic=False, a dynamic
# shape, a Module method reading an int attribute and a global), then, in the same process,
# calls each entry's guard function from its full-code file and torch's own check of that
# entry on many probe calls, and reports both verdicts.
GUARD_PROBES = 'import json, runpy, sys\nimport torch\nimport framescope\nfrom torch._C._dynamo.eval_frame import _debug_get_cache_entry_list\n\nSCALE = 2.0\n\ndef f(x, n):\n    return torch.sin(x) * n * SCALE\n\ndef g(x):\n    return x.sum(0) * 2\n\nclass M(torch.nn.Module):\n    def __init__(self):\n        super().__init__()\n        self.k = 3\n        self.fc = torch.nn.Linear(4, 4)\n\n    def forward(self, x):\n        return self.fc(x) * self.k\n\nm = M()\ncf = torch.compile(f, backend="eager", dynamic=False)\ncg = torch.compile(g, backend="eager", dynamic=True)\ncm = torch.compile(m.forward, backend="eager")\nfolder = sys.argv[1]\nwith framescope.dump(folder):\n    cf(torch.ones(4), 1)\n    cf(torch.ones(4), 2.5)\n    cg(torch.ones(4, 3))\n    cm(torch.ones(2, 4))\n\ndef t(*shape, **kw):\n    return torch.ones(*shape, **kw)\n\nprobes = {\n    f: [dict(x=t(4), n=1), dict(x=t(4), n=1.0), dict(x=t(4), n=True), dict(x=t(4), n=2), dict(x=t(4), n=2.5),\n        dict(x=t(5), n=1), dict(x=t(4, dtype=torch.float64), n=1), dict(x=t(4, requires_grad=True), n=1),\n        dict(x=t(2, 2), n=1), dict(x=t(4), n="1"), dict(x=t(4), n=None)],\n    g: [dict(x=t(4, 3)), dict(x=t(1, 3)), dict(x=t(0, 3)), dict(x=t(7, 3)), dict(x=t(4, 1)), dict(x=t(4)),\n        dict(x=t(4, 3, dtype=torch.int64)), dict(x=t(2, 3, 2))],\n    M.forward: [dict(self=m, x=t(2, 4)), dict(self=m, x=t(3, 4)), dict(self=m, x=t(2, 5))],\n}\ncodes = {f: f.__code__, g: g.__code__, M.forward: M.forward.__code__}\nindex = json.load(open(folder + "/index.json"))\nverdicts = []\n\ndef attribute_probes(fn):\n    # values of globals and module attributes, and grad mode, around each probe\n    yield "plain", lambda: None, lambda: None\n    old = {}\n    def set_scale(): old["s"] = globals()["SCALE"]; globals()["SCALE"] = 3.0\n    def put_scale(): globals()["SCALE"] = old["s"]\n    yield "SCALE=3.0", set_scale, put_scale\n    def set_k(): m.k = 4\n    def put_k(): m.k = 3\n    yield "m.k=4", set_k, put_k\n    def set_k_float(): m.k = 3.0\n    yield "m.k=3.0", set_k_float, put_k\n    grad = torch.no_grad()\n    yield "no_grad", grad.__enter__, lambda: grad.__exit__(None, None, None)\n\nfor fn, calls in probes.items():\n    code = codes[fn]\n    frame = next(fr for fr in index["frames"] if fr["name"] == code.co_name and fr["resume_of"] is None)\n    full = runpy.run_path(folder + "/" + frame["full_code"])\n    entries = _debug_get_cache_entry_list(code)\n    by_id = {str(e.compile_id): e for e in entries}\n    for record in frame["entries"]:\n        entry = by_id[record["compile_id"]]\n        guard = full[record["guard_function"]]\n        for L in calls:\n            for label, before, after in attribute_probes(fn):\n                before()\n                try:\n                    ours = bool(guard(L, fn.__globals__))\n                    theirs = bool(entry.guard_manager.check(L))\n                finally:\n                    after()\n                verdicts.append({"fn": code.co_name, "entry": record["index"], "probe": label + " " + repr({k: (tuple(v.shape), str(v.dtype), v.requires_grad) if isinstance(v, torch.Tensor) else v for k, v in L.items() if k != "self"}),\n                                 "ours": ours, "torch": theirs})\nprint("RESULT " + json.dumps({"verdicts": verdicts, "counts": [e["guard_count"] for fr in index["frames"] for e in fr["entries"]]}))\n'


def test_the_dumped_guards_are_torchs_guards(tmp_path):
    path = tmp_path / "probe.py"
    path.write_text(GUARD_PROBES)
    result = run_file(path, str(tmp_path / "dump"))
    verdicts = result["verdicts"]
    differ = [item for item in verdicts if item["ours"] != item["torch"]]
    assert differ == []
    # Not vacuous: both verdicts, on every kind of probe.
    assert len(verdicts) == 165
    passed = [item for item in verdicts if item["torch"]]
    assert 10 <= len(passed) <= len(verdicts) - 100
    for probe in ("n': 1.0", "n': True", "(0, 3)", "(1, 3)", "float64", "True)", "m.k=4", "m.k=3.0", "SCALE=3.0",
                  "no_grad"):
        assert any(probe in item["probe"] for item in verdicts), probe
    # Each entry's guard makes as many checks as torch's tree has leaves.
    assert all(count and count >= 7 for count in result["counts"])
    text = (tmp_path / "dump" / "full_code_for_f.py").read_text()
    assert "torch makes 10 checks for this entry" in text
    assert "(type(L['n']) is int and L['n'] == 1)" in text


# --------------------------------------------------------------------------- other ways to compile

AOT_COMPILE = '''
import json, sys
import torch
import framescope

def f(x):
    return torch.sin(x) + 1

ran = set()

def trace(frame, event, arg):
    if frame.f_code.co_filename.startswith(sys.argv[1]):
        ran.add(frame.f_code.co_filename.rsplit("/", 1)[1])
    return None

compiled = torch.compile(f, fullgraph=True, backend="eager")
with framescope.dump(sys.argv[1]):
    artifact = compiled.aot_compile(((torch.ones(3),), {}))
    sys.settrace(trace)
    y = artifact(torch.ones(3))
    sys.settrace(None)
index = json.load(open(sys.argv[1] + "/index.json"))
print("RESULT " + json.dumps({"frames": [frame["id"] for frame in index["frames"]],
                              "graphs": [[graph["frame"], graph["entry"]] for graph in index["graphs"]],
                              "entries": [entry for frame in index["frames"] for entry in frame["entries"]],
                              "ran": sorted(ran), "error": (y - torch.sin(torch.ones(3)) - 1).abs().max().item()}))
'''


def test_an_aot_compiled_function_is_dumped_like_a_frame(tmp_path):
    torch = pytest.importorskip("torch")
    if not hasattr(torch.compile(lambda x: x), "aot_compile"):
        pytest.skip("this torch has no aot_compile")
    path = tmp_path / "aot.py"
    path.write_text(AOT_COMPILE)
    result = run_file(path, str(tmp_path / "dump"))
    assert result["frames"] == ["f"] and result["graphs"] == [["f", 0]] and result["error"] == 0.0
    (entry,) = result["entries"]
    assert entry["decompiled"] and entry["guard"] and entry["guard_count"]
    # Its transformed code runs from the dumped file, and so does its graph.
    assert {entry["file"], "__compiled_fn_1.dynamo.py"} <= set(result["ran"])


# A module compiled ahead of time for two input shapes (torch.compile(module)._aot_compile,
# as vLLM compiles), and a function captured by torch.compiler.precompile (a prototype of
# torch 2.15): both inside a dump.
AHEAD_OF_TIME = '''
import json, sys
import torch
import framescope

class M(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = torch.nn.Linear(4, 4)

    def forward(self, x):
        return torch.relu(self.fc(x)) + 1

def step(model, x):
    return model(x).sum()

torch.manual_seed(0)
m = M()
out = sys.argv[1]
result = {}
with framescope.dump(out + "/dump"):
    if sys.argv[2] == "module":
        from torch._dynamo.aot_compile import ModelInput
        torch._dynamo.config.enable_aot_compile = True
        compiled = torch.compile(m, fullgraph=True, backend="eager")
        compiled._aot_compile([ModelInput((torch.ones(2, 4),), {}, []), ModelInput((torch.ones(3, 4),), {}, [])])
        for rows in (2, 3, 3):
            result["error"] = (compiled(torch.ones(rows, 4)) - m(torch.ones(rows, 4))).abs().max().item()
    else:
        with torch.compiler.precompile.capture(step, artifact_path=out + "/step.py", cache_path=out + "/step.cache",
                                               backend="eager") as capture:
            result["error"] = (capture(m, torch.ones(2, 4)) - step(m, torch.ones(2, 4))).abs().item()
        result["artefact"] = open(out + "/step.py").read()
print("RESULT " + json.dumps(result))
'''


def test_a_module_compiled_ahead_of_time_is_dumped_entry_by_entry(tmp_path):
    torch = pytest.importorskip("torch")
    if not hasattr(torch.compile(torch.nn.Linear(1, 1)), "_aot_compile"):
        pytest.skip("this torch has no ahead-of-time module compile")
    path = tmp_path / "ahead.py"
    path.write_text(AHEAD_OF_TIME)
    result = run_file(path, str(tmp_path), "module")
    assert result["error"] == 0.0
    index = json.loads((tmp_path / "dump" / "index.json").read_text())
    (frame,) = index["frames"]
    assert frame["name"] == "forward"
    # One entry per input shape, each with its guard, its transformed code and its graph;
    # the calls each served (2 rows once, 3 rows twice), counted on CPython 3.12+ only: the
    # module checks an entry's guard before calling it and the entry checks it again.
    calls = [(1, 2), (None, None)][sys.version_info < (3, 12)]
    assert [(e["index"], e["calls"]) for e in frame["entries"]] == [(0, calls[0]), (1, calls[1])]
    for entry in frame["entries"]:
        assert entry["decompiled"] and entry["guard_count"] and len(entry["graphs"]) == 1
        assert "def forward(" in (tmp_path / "dump" / entry["file"]).read_text()


def test_a_precompile_capture_keeps_its_artefact_in_the_dump(tmp_path):
    torch = pytest.importorskip("torch")
    if not hasattr(getattr(torch.compiler, "precompile", None), "capture"):
        pytest.skip("this torch has no torch.compiler.precompile")
    path = tmp_path / "ahead.py"
    path.write_text(AHEAD_OF_TIME)
    result = run_file(path, str(tmp_path), "precompile")
    assert result["error"] == 0.0
    index = json.loads((tmp_path / "dump" / "index.json").read_text())
    (item,) = index["precompiled"]
    assert item["function"] == "step" and item["backend"] == "eager" and item["lineno"] == 14
    assert item["filename"] == str(path) and item["file"] == "precompiled_1_for_step.py"
    # The very artefact torch wrote to the capture's artifact_path.
    assert (tmp_path / "dump" / item["file"]).read_text() == result["artefact"]
    assert "[`precompiled_1_for_step.py`]" in (tmp_path / "dump" / "index.md").read_text()
