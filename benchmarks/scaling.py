"""How the dump's decompilation of transformed code scales with the model's depth.

    PYTHONPATH=src python benchmarks/scaling.py [--layers 1,2,4,8,16,32,48] [--models gpt2,llama] [--repeat 5]

For each model, one fresh process builds a tiny-width transformers model (GPT-2, Llama;
random weights) of each layer count, runs its forward pass under ``torch.compile`` (backend
``eager``: the transformed code is the same, the graph is not compiled) inside
``framescope.dump``, and records every decompilation of a cache entry's transformed code.
Then it times them again in rounds that take every depth in turn, best of ``--repeat``:
``decompile_transformed`` alone, and the whole of making the entry's file (decompiling,
compiling the source, checking it against Dynamo's bytecode). The machine's speed drifts over
minutes; within a round every depth sees about the same. The table gives the instructions of
the largest transformed code, the graph inputs of its graph call, and microseconds per
instruction over all entries: flat from 1 to 48 layers means linear, and the fitted exponent
of total time against instructions says the same in one number.
"""
from __future__ import annotations

import argparse
import dis
import json
import math
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, Dict, List, Tuple

REPO = Path(__file__).resolve().parent.parent


def build(model_name: str, layers: int) -> Any:
    import torch
    import transformers

    torch.manual_seed(0)
    if model_name == "gpt2":
        config = transformers.GPT2Config(n_layer=layers, n_embd=32, n_head=2, n_positions=64, vocab_size=128)
        return transformers.GPT2LMHeadModel(config).eval()
    config = transformers.LlamaConfig(num_hidden_layers=layers, hidden_size=32, intermediate_size=64,
                                      num_attention_heads=2, num_key_value_heads=2, vocab_size=128,
                                      max_position_embeddings=64)
    return transformers.LlamaForCausalLM(config).eval()


def worker(model_name: str, layer_counts: List[int], dump: str, repeat: int = 5) -> List[Dict[str, Any]]:
    """Every depth of one model compiled in this process, then its calls timed in rounds."""
    import torch

    import framescope
    import framescope.decompiler.machine as machine
    from framescope.dump import transformed

    originals = {"decompile": machine.decompile_transformed, "make": transformed.make}

    def recording(kind: str, log: List[Tuple[tuple, Dict[str, Any]]]) -> Any:
        def record(*args: Any, **options: Any) -> Any:
            log.append((args, options))
            return originals[kind](*args, **options)
        return record

    rows: List[Dict[str, Any]] = []
    recorded: List[Dict[str, List[Tuple[tuple, Dict[str, Any]]]]] = []
    for layers in layer_counts:
        calls: Dict[str, List[Tuple[tuple, Dict[str, Any]]]] = {"decompile": [], "make": []}
        machine.decompile_transformed = recording("decompile", calls["decompile"])
        transformed.make = recording("make", calls["make"])
        folder = Path(dump) / str(layers)
        try:
            with torch.no_grad(), framescope.dump(str(folder)):
                torch.compile(build(model_name, layers), backend="eager")(input_ids=torch.randint(0, 128, (1, 16)))
        finally:
            machine.decompile_transformed, transformed.make = originals["decompile"], originals["make"]
            torch._dynamo.reset()
        index = json.loads((folder / "index.json").read_text(encoding="utf-8"))
        entries = [entry for frame in index["frames"] for entry in frame["entries"]]
        rows.append({
            "model": model_name, "layers": layers, "entries": len(entries),
            "fallbacks": sum(1 for entry in entries if not entry["decompiled"]),
            "largest": max(instructions(args[0]) for args, _ in calls["decompile"]),
            "graph_inputs": max((len(graph.get("inputs", ())) for graph in index["graphs"]), default=0),
            "instructions": sum(instructions(args[0]) for args, _ in calls["decompile"]),
        })
        recorded.append(calls)
    # Timed again after the runs, in rounds that take every depth in turn, best of ``repeat``:
    # the machine's speed drifts by up to a factor of two over minutes, and each round sees
    # every depth at about the same speed.
    best = [{"decompile": float("inf"), "make": float("inf")} for _ in rows]
    for _ in range(repeat):
        for times, logged in zip(best, recorded):
            times["decompile"] = min(times["decompile"], total_time(originals["decompile"], logged["decompile"]))
            times["make"] = min(times["make"], total_time(originals["make"], logged["make"], fresh_globals))
    for row, times, logged in zip(rows, best, recorded):
        row["decompile_us"] = 1e6 * times["decompile"] / row["instructions"]
        row["make_us"] = 1e6 * times["make"] / max(1, sum(instructions(args[1]) for args, _ in logged["make"]))
    return rows


def total_time(function: Any, calls: List[Tuple[tuple, Dict[str, Any]]], arguments: Any = tuple) -> float:
    began = time.perf_counter()
    for args, options in calls:
        function(*arguments(args), **options)
    return time.perf_counter() - began


def instructions(code: Any) -> int:
    return len(list(dis.get_instructions(code)))


def fresh_globals(args: tuple) -> tuple:
    """``make``'s arguments with a copy of the module's globals (it binds constants there)."""
    return args[:5] + tuple(dict(x) if isinstance(x, dict) else x for x in args[5:6]) + args[6:]


def run(model_name: str, layer_counts: List[int], repeat: int) -> List[Dict[str, Any]]:
    with tempfile.TemporaryDirectory(prefix="scaling-") as temp:
        out = Path(temp) / "rows.json"
        env = dict(os.environ, PYTHONPATH=str(REPO / "src"))
        done = subprocess.run([sys.executable, __file__, "--worker", model_name,
                               ",".join(map(str, layer_counts)), str(out), str(repeat)],
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, universal_newlines=True, env=env)
        if done.returncode != 0 or not out.exists():
            tail = (done.stderr.strip().splitlines() or ["exit %d" % done.returncode])[-1]
            return [{"model": model_name, "layers": layers, "error": tail[:160]} for layers in layer_counts]
        return json.loads(out.read_text())


def growth(rows: List[Dict[str, Any]], column: str) -> float:
    """The exponent k of total time ~ instructions^k, fitted by least squares on logarithms."""
    xs = [math.log(row["instructions"]) for row in rows]
    ys = [math.log(row[column] * row["instructions"]) for row in rows]
    mean_x, mean_y = sum(xs) / len(xs), sum(ys) / len(ys)
    spread = sum((x - mean_x) ** 2 for x in xs)
    return sum((x - mean_x) * (y - mean_y) for x, y in zip(xs, ys)) / spread


def main(argv: List[str]) -> int:
    if argv[:1] == ["--worker"]:
        model_name, out, repeat = argv[1], argv[3], int(argv[4])
        layer_counts = [int(n) for n in argv[2].split(",")]
        with tempfile.TemporaryDirectory(prefix="scaling-dump-") as dump:
            rows = worker(model_name, layer_counts, dump, repeat)
        Path(out).write_text(json.dumps(rows))
        return 0
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--layers", default="1,2,4,8,16,32,48")
    parser.add_argument("--models", default="gpt2,llama")
    parser.add_argument("--repeat", type=int, default=5, help="time each call this many times, keep the best")
    parser.add_argument("--json", help="also write the rows to this file")
    args = parser.parse_args(argv)
    import torch

    print("torch %s, python %s" % (torch.__version__, sys.version.split()[0]))
    columns = ("model", "layers", "entries", "fallbacks", "largest", "graph_inputs", "instructions",
               "decompile_us", "make_us")
    print("| " + " | ".join(c.replace("_us", " µs/instr").replace("_", " ") for c in columns) + " |")
    print("|" + "---|" * len(columns))
    rows = []
    for model_name in args.models.split(","):
        for row in run(model_name, [int(n) for n in args.layers.split(",")], args.repeat):
            rows.append(row)
            if "error" in row:
                print("| %s | %d | error: %s |" % (model_name, row["layers"], row["error"]), flush=True)
                continue
            print("| " + " | ".join("%.1f" % row[c] if c.endswith("_us") else str(row[c]) for c in columns) + " |",
                  flush=True)
    for model_name in args.models.split(","):
        fitted = [row for row in rows if row["model"] == model_name and "error" not in row]
        if len(fitted) > 1:
            print("%s: total time grows as instructions^%.2f (decompile), ^%.2f (make); 1.00 is linear"
                  % (model_name, growth(fitted, "decompile_us"), growth(fitted, "make_us")))
    if args.json:
        Path(args.json).write_text(json.dumps(rows, indent=1))
    return 0 if all("error" not in row and not row["fallbacks"] for row in rows) else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
