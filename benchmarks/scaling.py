"""How the dump's decompilation of transformed code scales with the model's depth.

    PYTHONPATH=src python benchmarks/scaling.py [--layers 1,2,4,8,16,32,48] [--models gpt2,llama] [--repeat 5]

For each model and layer count, a fresh process builds a tiny-width transformers model with
random weights (GPT-2, Llama), runs its forward pass under ``torch.compile`` (backend
``eager``: the transformed code is the same, the graph is not compiled) inside
``framescope.dump``, and times every decompilation of a cache entry's transformed code:
``decompile_transformed`` alone, and the whole of making the entry's file (decompiling,
compiling the source, checking it against Dynamo's bytecode), each call again after the run,
best of ``--repeat``, in the same process (its heap as large as the model made it). The table
gives, per run, the instructions of the largest transformed code, the graph inputs of its graph call, and
microseconds per instruction over all entries: flat from 1 to 48 layers means linear.
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


def worker(model_name: str, layers: int, dump: str, repeat: int = 5) -> Dict[str, Any]:
    import torch
    import transformers

    import framescope
    import framescope.decompiler.machine as machine
    from framescope.dump import transformed

    torch.manual_seed(0)
    if model_name == "gpt2":
        config = transformers.GPT2Config(n_layer=layers, n_embd=32, n_head=2, n_positions=64, vocab_size=128)
        model = transformers.GPT2LMHeadModel(config)
    else:
        config = transformers.LlamaConfig(num_hidden_layers=layers, hidden_size=32, intermediate_size=64,
                                          num_attention_heads=2, num_key_value_heads=2, vocab_size=128,
                                          max_position_embeddings=64)
        model = transformers.LlamaForCausalLM(config)
    model.eval()
    # Each call is recorded during the run and timed again afterwards, best of ``repeat``: one
    # timing of a call that takes a second swings by a factor of two on a shared machine.
    originals = {"decompile": machine.decompile_transformed, "make": transformed.make}
    calls: Dict[str, List[Tuple[tuple, Dict[str, Any]]]] = {"decompile": [], "make": []}

    def recording(kind: str) -> Any:
        def record(*args: Any, **options: Any) -> Any:
            calls[kind].append((args, options))
            return originals[kind](*args, **options)
        return record

    machine.decompile_transformed = recording("decompile")
    transformed.make = recording("make")
    ids = torch.randint(0, 128, (1, 16))
    with torch.no_grad(), framescope.dump(dump):
        torch.compile(model, backend="eager")(input_ids=ids)
    machine.decompile_transformed, transformed.make = originals["decompile"], originals["make"]
    index = json.loads((Path(dump) / "index.json").read_text(encoding="utf-8"))
    entries = [entry for frame in index["frames"] for entry in frame["entries"]]
    decompiled = [(instructions(args[0]), best_time(originals["decompile"], args, options, repeat))
                  for args, options in calls["decompile"]]
    made = [(instructions(args[1]), best_time(originals["make"], fresh_globals(args), options, repeat))
            for args, options in calls["make"]]
    return {
        "model": model_name, "layers": layers, "entries": len(entries),
        "fallbacks": sum(1 for entry in entries if not entry["decompiled"]),
        "largest": max(n for n, _ in decompiled),
        "graph_inputs": max((len(graph.get("inputs", ())) for graph in index["graphs"]), default=0),
        "instructions": sum(n for n, _ in decompiled),
        "decompile_us": 1e6 * sum(s for _, s in decompiled) / max(1, sum(n for n, _ in decompiled)),
        "make_us": 1e6 * sum(s for _, s in made) / max(1, sum(n for n, _ in made)),
    }


def instructions(code: Any) -> int:
    return len(list(dis.get_instructions(code)))


def fresh_globals(args: tuple) -> tuple:
    """``make``'s arguments with a copy of the module's globals (it binds constants there)."""
    return args[:5] + tuple(dict(x) if isinstance(x, dict) else x for x in args[5:6]) + args[6:]


def best_time(function: Any, args: tuple, options: Dict[str, Any], repeat: int) -> float:
    best = float("inf")
    for _ in range(repeat):
        began = time.perf_counter()
        function(*args, **options)
        best = min(best, time.perf_counter() - began)
    return best


def run(model_name: str, layers: int, repeat: int) -> Dict[str, Any]:
    with tempfile.TemporaryDirectory(prefix="scaling-") as temp:
        out = Path(temp) / "row.json"
        env = dict(os.environ, PYTHONPATH=str(REPO / "src"))
        done = subprocess.run([sys.executable, __file__, "--worker", model_name, str(layers), str(out),
                               str(repeat)],
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, universal_newlines=True, env=env)
        if done.returncode != 0 or not out.exists():
            tail = (done.stderr.strip().splitlines() or ["exit %d" % done.returncode])[-1]
            return {"model": model_name, "layers": layers, "error": tail[:160]}
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
        model_name, layers, out, repeat = argv[1], int(argv[2]), argv[3], int(argv[4])
        with tempfile.TemporaryDirectory(prefix="scaling-dump-") as dump:
            row = worker(model_name, layers, dump, repeat)
        Path(out).write_text(json.dumps(row))
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
        for layers in (int(n) for n in args.layers.split(",")):
            row = run(model_name, layers, args.repeat)
            rows.append(row)
            if "error" in row:
                print("| %s | %d | error: %s |" % (model_name, layers, row["error"]), flush=True)
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
