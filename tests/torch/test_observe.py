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
from typing import Any, Dict

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


def run_both(folder: Path, program: str, backend: str, timeout: float = 400) -> Dict[str, Any]:
    """Run ``program`` plainly and inside a dump; return {"plain": ..., "dump": ...} of what
    each recorded, and ``folder`` / ``dump``."""
    path = folder / "prog.py"
    path.write_text(RECORDER + textwrap.dedent(program))
    results: Dict[str, Any] = {}
    # Each run compiles cold: the same starting point for both.
    for label, args in (("plain", []), ("dump", [str(folder / "dump")])):
        env = dict(os.environ, BACKEND=backend, TORCHINDUCTOR_CACHE_DIR=str(folder / ("cache_" + label)))
        done = subprocess.run([sys.executable, str(path)] + args, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                              universal_newlines=True, timeout=timeout, cwd=str(folder), env=env)
        assert done.returncode == 0, done.stderr[-6000:]
        lines = [line for line in done.stdout.splitlines() if line.startswith("RESULT ")]
        assert lines, done.stderr[-4000:]
        results[label] = json.loads(lines[-1][len("RESULT "):])
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
