"""How the dump's decompilation of transformed code scales with the model's depth.

    PYTHONPATH=src python benchmarks/scaling.py [--layers 1,2,4,8,16,32,48] [--models gpt2,llama]

For each model and layer count, a fresh process builds a tiny-width transformers model with
random weights (GPT-2, Llama), runs its forward pass under ``torch.compile`` (backend
``eager``: the transformed code is the same, the graph is not compiled) inside
``framescope.dump``, and times every decompilation of a cache entry's transformed code:
``decompile_transformed`` alone, and the whole of making the entry's file (decompiling,
compiling the source, checking it against Dynamo's bytecode). The table gives, per run, the
instructions of the largest transformed code, the graph inputs of its graph call, and
microseconds per instruction over all entries: flat from 1 to 48 layers means linear.
"""
from __future__ import annotations

import argparse
import dis
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, Dict, List

REPO = Path(__file__).resolve().parent.parent


def worker(model_name: str, layers: int, dump: str) -> Dict[str, Any]:
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
    timings: Dict[str, List[Any]] = {"decompile": [], "make": []}
    decompile, make = machine.decompile_transformed, transformed.make

    def timed_decompile(code: Any, **options: Any) -> str:
        began = time.perf_counter()
        try:
            return decompile(code, **options)
        finally:
            timings["decompile"].append((len(list(dis.get_instructions(code))), time.perf_counter() - began))

    def timed_make(original: Any, dynamo: Any, *args: Any, **options: Any) -> Any:
        began = time.perf_counter()
        try:
            return make(original, dynamo, *args, **options)
        finally:
            timings["make"].append((len(list(dis.get_instructions(dynamo))), time.perf_counter() - began,
                                    dynamo.co_names))

    machine.decompile_transformed = timed_decompile
    transformed.make = timed_make
    ids = torch.randint(0, 128, (1, 16))
    with torch.no_grad(), framescope.dump(dump):
        torch.compile(model, backend="eager")(input_ids=ids)
    index = json.loads((Path(dump) / "index.json").read_text(encoding="utf-8"))
    entries = [entry for frame in index["frames"] for entry in frame["entries"]]
    instructions = sum(n for n, _ in timings["decompile"])
    return {
        "model": model_name, "layers": layers, "entries": len(entries),
        "fallbacks": sum(1 for entry in entries if not entry["decompiled"]),
        "largest": max(n for n, _ in timings["decompile"]),
        "graph_inputs": max((len(graph.get("inputs", ())) for graph in index["graphs"]), default=0),
        "instructions": instructions,
        "decompile_us": 1e6 * sum(s for _, s in timings["decompile"]) / instructions,
        "make_us": 1e6 * sum(s for _, s, _ in timings["make"]) / max(1, sum(n for n, _, _ in timings["make"])),
    }


def run(model_name: str, layers: int) -> Dict[str, Any]:
    with tempfile.TemporaryDirectory(prefix="scaling-") as temp:
        out = Path(temp) / "row.json"
        env = dict(os.environ, PYTHONPATH=str(REPO / "src"))
        done = subprocess.run([sys.executable, __file__, "--worker", model_name, str(layers), str(out)],
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, universal_newlines=True, env=env)
        if done.returncode != 0 or not out.exists():
            tail = (done.stderr.strip().splitlines() or ["exit %d" % done.returncode])[-1]
            return {"model": model_name, "layers": layers, "error": tail[:160]}
        return json.loads(out.read_text())


def main(argv: List[str]) -> int:
    if argv[:1] == ["--worker"]:
        model_name, layers, out = argv[1], int(argv[2]), argv[3]
        with tempfile.TemporaryDirectory(prefix="scaling-dump-") as dump:
            row = worker(model_name, layers, dump)
        Path(out).write_text(json.dumps(row))
        return 0
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--layers", default="1,2,4,8,16,32,48")
    parser.add_argument("--models", default="gpt2,llama")
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
            row = run(model_name, layers)
            rows.append(row)
            if "error" in row:
                print("| %s | %d | error: %s |" % (model_name, layers, row["error"]), flush=True)
                continue
            print("| " + " | ".join("%.1f" % row[c] if c.endswith("_us") else str(row[c]) for c in columns) + " |",
                  flush=True)
    if args.json:
        Path(args.json).write_text(json.dumps(rows, indent=1))
    return 0 if all("error" not in row and not row["fallbacks"] for row in rows) else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
