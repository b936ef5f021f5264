"""Ranks side by side, under real torchrun (gloo on the CPU): where the ranks of a job
compile differently, said once after the job, by explain on the job's folder, and while the
job hangs because of it."""
from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import List

import pytest

from tests.support.environment import program_environment

pytestmark = [pytest.mark.torch, pytest.mark.needs_subprocess, pytest.mark.needs_sockets]

# Rank 1 alone calls the block with 6 rows (a recompile) and alone takes a data-dependent
# branch (a graph break); the ranks meet in an all_reduce after each step.
DIVERGENT = '''
import torch
import torch.distributed as dist

dist.init_process_group("gloo")
rank = dist.get_rank()
odd_one = rank == 1  # what the block reads: the same on every rank but rank 1


class Block(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = torch.nn.Linear(8, 8)

    def forward(self, x):
        y = self.fc(x)
        if odd_one and y.sum() > -1e9:
            y = y * 2
        return torch.relu(y)


torch.manual_seed(0)
step = torch.compile(Block(), backend="eager")
for rows in ([4, 6] if odd_one else [4, 4]):
    total = torch.tensor([float(step(torch.randn(rows, 8)).sum())])
    dist.all_reduce(total)
dist.destroy_process_group()
print("rank", rank, "done")
'''

# Rank 1 compiles a function with a collective that rank 0 never reaches (rank 0 waits for a
# message rank 1 never sends): the job hangs.
HANGS = '''
import torch
import torch.distributed as dist

dist.init_process_group("gloo")
rank = dist.get_rank()


def everyone(x):
    dist.all_reduce(x)
    return x * 2


@torch.compile(backend="eager")
def local(x):
    return torch.sin(x) + 1


local(torch.ones(3))
if rank == 1:
    torch.compile(everyone, backend="eager")(torch.ones(3))
else:
    dist.recv(torch.zeros(3), src=1)
'''


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def torchrun(folder: Path, ranks: int, program: str) -> List[str]:
    return [sys.executable, "-m", "torch.distributed.run", "--nproc-per-node", str(ranks), "--master-addr",
            "127.0.0.1", "--master-port", str(free_port()), "-m", "framescope", "run", "--out", str(folder / "dump"),
            "--no-report", program]


def framescope(folder: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "framescope", *args], cwd=str(folder), stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE, universal_newlines=True, env=program_environment(), timeout=300)


@pytest.mark.parametrize("ranks", [2, 4])
def test_ranks_that_compile_differently_are_named_once_after_the_job(tmp_path, ranks):
    (tmp_path / "train.py").write_text(DIVERGENT)
    done = subprocess.run(torchrun(tmp_path, ranks, "train.py"), cwd=str(tmp_path), stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE, universal_newlines=True, timeout=600,
                          env=program_environment(TORCHINDUCTOR_CACHE_DIR=str(tmp_path / "cache"), OMP_NUM_THREADS="1"))
    assert done.returncode == 0, done.stderr[-4000:]
    assert sorted(p.name for p in (tmp_path / "dump").iterdir()) == ["rank_%d" % r for r in range(ranks)]
    # One summary for the job, from rank 0, with where the ranks diverge.
    summaries = [line for line in done.stderr.splitlines() if line.startswith("framescope: ") and "compiled frame" in line]
    assert len(summaries) == 1, done.stderr[-4000:]
    assert done.stderr.count("ranks diverge (rank_0 against each of the others)") == 1
    explained = framescope(tmp_path, "explain", "dump")
    assert explained.returncode == 0, explained.stderr
    lines = explained.stdout.splitlines()
    assert lines[0].startswith("ranks diverge (rank_0 against each of the others): ")
    head = lines[:next(i for i, line in enumerate(lines) if line.startswith("== rank_0 =="))]
    # The break and the recompile are rank 1's alone; no other rank differs from rank 0.
    breaks = [line for line in head if "graph break train.py:" in line]
    assert breaks and all(line.endswith("on rank_1, not on rank_0") for line in breaks), head
    assert any("recompile " in line and "on rank_1, not on rank_0" in line for line in head), head
    assert not any("rank_2" in line or "rank_3" in line for line in head), head
    record = json.loads(framescope(tmp_path, "explain", "dump", "--json").stdout)
    assert record["divergences"] and all(d["ranks"] == ["rank_1"] for d in record["divergences"])
    assert sorted(record["ranks"]) == ["rank_%d" % r for r in range(ranks)]


def test_explain_names_the_divergence_while_the_job_hangs(tmp_path):
    (tmp_path / "hang.py").write_text(HANGS)
    job = subprocess.Popen(torchrun(tmp_path, 2, "hang.py"), cwd=str(tmp_path), stdout=subprocess.DEVNULL,
                           stderr=subprocess.DEVNULL, start_new_session=True,
                           env=program_environment(TORCHINDUCTOR_CACHE_DIR=str(tmp_path / "cache"), OMP_NUM_THREADS="1"))
    try:
        index = tmp_path / "dump" / "rank_1" / "index.json"
        deadline = time.monotonic() + 240
        while time.monotonic() < deadline:
            try:
                if any(frame["name"] == "everyone" for frame in json.loads(index.read_text())["frames"]):
                    break
            except (OSError, ValueError):
                pass
            assert job.poll() is None, "the job ended instead of hanging"
            time.sleep(0.5)
        else:
            pytest.fail("rank 1 never compiled everyone()")
        time.sleep(2)
        assert job.poll() is None, "the job ended instead of hanging"
        explained = framescope(tmp_path, "explain", "dump")
        assert explained.returncode == 0, explained.stderr
        head = explained.stdout.split("== rank_0 ==")[0]
        assert "frame everyone (hang.py:9): 1 cache entry: on rank_1, not on rank_0" in head, head
        # What rank 0 has not finished reading (a guard) is no divergence.
        assert head.count("\n  ") == 1, head
        assert job.poll() is None
    finally:
        os.killpg(job.pid, signal.SIGKILL)
        job.wait(timeout=60)
