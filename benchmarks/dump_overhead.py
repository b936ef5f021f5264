"""Wall time of a torch.compile workload with framescope.dump against without it.

Each run is a fresh interpreter (fresh Dynamo caches), so every run pays for every compile,
as a program's first run does. The time is taken from the first torch.compile call to the
end of the workload (importing torch is not counted); with a dump it includes leaving the
``with`` block, which writes the last files. Runs with and without a dump take turns.

The workload: an MLP trained for a few steps through the aot_eager backend (forward and
backward graphs), a function with a graph break called with four int values (dynamic=False:
four recompiles of it and of its resume function), a small module through the eager backend,
then a few hundred warm calls of each.

    python benchmarks/dump_overhead.py [--repeat 5] [--calls 300] [--json FILE]

Prints the median, best and worst seconds per mode, the ratio of the medians (dump /
plain), the time spent inside framescope's bytecode hook, and what the dump wrote.
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

import torch


class MLP(torch.nn.Module):
    def __init__(self, width: int = 32, depth: int = 4) -> None:
        super().__init__()
        self.layers = torch.nn.ModuleList(torch.nn.Linear(width, width) for _ in range(depth))

    def forward(self, x):
        for layer in self.layers:
            x = torch.relu(layer(x))
        return x.sum()


def with_break(x, n):
    y = torch.sin(x) * n
    torch._dynamo.graph_break()
    return torch.cos(y) + n


class Small(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.lin = torch.nn.Linear(8, 8)

    def forward(self, x):
        return torch.tanh(self.lin(x)) * 2


def workload(calls: int) -> float:
    """Run the workload; return a number that depends on every result."""
    torch.manual_seed(0)
    model = torch.compile(MLP(), backend="aot_eager")
    broken = torch.compile(with_break, backend="eager", dynamic=False)
    small = torch.compile(Small(), backend="eager")
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
    total = 0.0
    x, v, s = torch.randn(16, 32), torch.randn(64), torch.randn(4, 8)
    for step in range(calls):
        optimizer.zero_grad()
        loss = model(x)
        loss.backward()
        optimizer.step()
        total += loss.item() + broken(v, 1 + step % 4).sum().item() + small(s).sum().item()
    return total


def child(mode: str, folder: str, calls: int) -> None:
    in_hooks = [0.0]
    if mode == "dump":
        from framescope.dump import capture

        # Time spent inside framescope's bytecode hook (decompiling, compiling, checking,
        # writing files and the index): the part of the overhead that is framescope's own.
        hook = capture.Capture.on_bytecode

        def timed(self, code, new_code):
            begin = time.perf_counter()
            try:
                return hook(self, code, new_code)
            finally:
                in_hooks[0] += time.perf_counter() - begin

        capture.Capture.on_bytecode = timed
    start = time.perf_counter()
    if mode == "dump":
        import framescope

        with framescope.dump(folder):
            workload(calls)
    else:
        workload(calls)
    seconds = time.perf_counter() - start
    print("SECONDS %.6f %.6f" % (seconds, in_hooks[0]))


def run_child(mode: str, folder: str, calls: int) -> "tuple[float, float]":
    done = subprocess.run(
        [sys.executable, os.path.abspath(__file__), "--child", mode, folder, "--calls", str(calls)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        universal_newlines=True,
        check=False,
    )
    lines = [line for line in done.stdout.splitlines() if line.startswith("SECONDS ")]
    if done.returncode != 0 or not lines:
        raise SystemExit("the %s run failed:\n%s" % (mode, done.stderr[-3000:]))
    fields = lines[-1].split()
    return float(fields[1]), float(fields[2])


def describe(folder: str) -> dict:
    with open(os.path.join(folder, "index.json"), encoding="utf-8") as handle:
        index = json.load(handle)
    entries = [entry for frame in index["frames"] for entry in frame["entries"]]
    return {
        "frames": len(index["frames"]),
        "entries": len(entries),
        "decompiled": sum(1 for entry in entries if entry["decompiled"]),
        "files": len(os.listdir(folder)),
        "warnings": len(index["warnings"]),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5, help="runs per mode (default 5)")
    parser.add_argument("--calls", type=int, default=300, help="workload iterations (default 300)")
    parser.add_argument("--json", help="also write the figures to this file")
    parser.add_argument("--child", nargs=2, metavar=("MODE", "FOLDER"), help=argparse.SUPPRESS)
    options = parser.parse_args()
    if options.child:
        child(options.child[0], options.child[1], options.calls)
        return

    times = {"plain": [], "dump": []}
    hooks = []
    with tempfile.TemporaryDirectory() as scratch:
        folder = os.path.join(scratch, "dump")
        for _ in range(options.repeat):
            for mode in ("plain", "dump"):
                seconds, in_hooks = run_child(mode, folder, options.calls)
                times[mode].append(seconds)
                if mode == "dump":
                    hooks.append(in_hooks)
        written = describe(folder)
    medians = {mode: statistics.median(values) for mode, values in times.items()}
    ratio = medians["dump"] / medians["plain"]
    print("torch %s, Python %s, %d runs per mode, %d iterations" % (
        torch.__version__, sys.version.split()[0], options.repeat, options.calls))
    print()
    print("| mode  | median s | best s | worst s |")
    print("|-------|---------:|-------:|--------:|")
    for mode, values in times.items():
        print("| %-5s | %8.2f | %6.2f | %7.2f |" % (mode, medians[mode], min(values), max(values)))
    print()
    print("dump / plain: %.3fx (medians), %.3fx (best runs)" % (ratio, min(times["dump"]) / min(times["plain"])))
    print("inside framescope's bytecode hook: median %.3f s per run (%.1f ms per cache entry)" % (
        statistics.median(hooks), 1000 * statistics.median(hooks) / max(1, written["entries"])))
    print("dump wrote: %(frames)d frames, %(entries)d cache entries (%(decompiled)d decompiled), "
          "%(files)d files, %(warnings)d warnings" % written)
    if options.json:
        with open(options.json, "w", encoding="utf-8") as handle:
            json.dump(
                {"times": times, "medians": medians, "ratio": ratio, "hook_seconds": hooks, "dump": written},
                handle,
                indent=2,
            )


if __name__ == "__main__":
    main()
