"""Differential fuzzing of the machine-code decompiler, at scale.

Runs the random program generator of ``tests/support/machine_programs.py`` over many seeds:
each program (straight-line stack code with forward jumps, in torch.compile's style) is
assembled for the interpreter, run, decompiled with ``decompile_transformed``, and the
decompilation run with the same arguments under several truth patterns. A program is
*equivalent* when every run logs the same calls with the same arguments (by value and by
identity), returns the same and leaves every list with the same contents; *refused* when the
decompiler raises DecompilationError; *wrong* otherwise; *invalid* if the generated program
itself raised (a generator bug).

    PYTHONPATH=src python benchmarks/machine_fuzz.py                  # this interpreter
    PYTHONPATH=src python benchmarks/machine_fuzz.py --all            # .venvs/3.8 ... 3.13
    PYTHONPATH=src python benchmarks/machine_fuzz.py --programs 20000 --size 40 --show 3

Needs the test dependencies (pytest, bytecode) in each interpreter.
"""
from __future__ import annotations

import argparse
import hashlib
import importlib.util
import json
import os
import platform
import subprocess
import sys
import time
from pathlib import Path
from typing import Any, Dict, List, Optional

REPO = Path(__file__).resolve().parent.parent
TEST_MODULE = REPO / "tests" / "support" / "machine_programs.py"
VERSIONS = ["3.8", "3.9", "3.10", "3.11", "3.12", "3.13"]
OUTCOMES = ["equivalent", "refused", "internal", "wrong", "invalid"]


def load_generator() -> Any:
    spec = importlib.util.spec_from_file_location("machine_fuzz_programs", str(TEST_MODULE))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)  # type: ignore[union-attr]
    return module


def fuzz(start: int, programs: int, size: int, show: int, outputs: Optional[str] = None) -> Dict[str, Any]:
    """Counts of each outcome for seeds start .. start+programs-1 on this interpreter;
    ``outputs``: a file to write each program's decompiled text to, hashed (or its refusal)."""
    fuzzer = load_generator()
    texts: List[str] = []
    counts = {key: 0 for key in OUTCOMES}
    reasons: Dict[str, int] = {}
    examples: List[str] = []
    began = time.perf_counter()
    for seed in range(start, start + programs):
        code = fuzzer.generate(seed, size)
        outcome, details = fuzzer.check(code)
        if outputs:
            texts.append("%d %s" % (seed, decompiled_hash(code)))
        counts[outcome] += 1
        if outcome == "refused":
            reason = details.split(": ", 1)[-1]
            reasons[reason] = reasons.get(reason, 0) + 1
        elif outcome != "equivalent" and len(examples) < show:
            examples.append("seed %d (size %d): %s\n%s\n%s" % (seed, size, outcome, details,
                                                               fuzzer.disassembly(code)))
    if outputs:
        with open(outputs, "w", encoding="utf-8") as handle:
            handle.write("\n".join(texts) + "\n")
    return {
        "python": platform.python_version(),
        "counts": counts,
        "refusals": reasons,
        "examples": examples,
        "seconds": round(time.perf_counter() - began, 2),
    }


def decompiled_hash(code: Any) -> str:
    """A hash of what the machine decompiler prints for ``code``, or its refusal."""
    from framescope import DecompilationError
    from framescope.decompiler.machine import decompile_transformed

    try:
        text = decompile_transformed(code)
    except DecompilationError as error:
        text = "refused: %s" % error
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]


#: The interpreter name that runs the worker under Pyodide (CPython 3.14 in WebAssembly).
PYODIDE = "pyodide"


def run_worker(python: str, args: argparse.Namespace) -> Dict[str, Any]:
    options = ["--worker", "--programs", str(args.programs), "--start", str(args.start), "--size", str(args.size),
               "--show", str(args.show)]
    if python == PYODIDE:  # the repository is its working directory there
        command = ["node", str(REPO / "benchmarks" / "pyodide_run.mjs"), "benchmarks/machine_fuzz.py"] + options
    else:
        command = [python, str(Path(__file__).resolve())] + options
    env = dict(os.environ, PYTHONPATH=str(REPO / "src"))
    done = subprocess.run(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, universal_newlines=True,
                          env=env)
    if done.returncode != 0:
        return {"python": python, "error": (done.stderr.strip().splitlines() or ["exit %d" % done.returncode])[-1]}
    return json.loads(done.stdout)


def table(results: List[Dict[str, Any]]) -> str:
    lines = ["%-10s %9s %11s %8s %8s %6s %8s %8s" % ("python", "programs", "equivalent", "refused", "internal",
                                                       "wrong", "invalid", "time")]
    for result in results:
        if "error" in result:
            lines.append("%-10s %s" % (result["python"], result["error"]))
            continue
        counts = result["counts"]
        lines.append("%-10s %9d %11d %8d %8d %6d %8d %7.1fs" % (
            result["python"], sum(counts.values()), counts["equivalent"], counts["refused"],
            counts.get("internal", 0), counts["wrong"], counts["invalid"], result["seconds"]))
    return "\n".join(lines)


def main(argv: List[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--programs", type=int, default=5000, help="programs per interpreter (default 5000)")
    parser.add_argument("--start", type=int, default=0, help="first seed (default 0)")
    parser.add_argument("--size", type=int, default=24, help="operations per program (default 24)")
    parser.add_argument("--all", action="store_true", help="run on .venvs/3.8 ... .venvs/3.13")
    parser.add_argument("--python", action="append", default=[],
                        help="run on this interpreter (repeatable); 'pyodide' runs CPython 3.14 under Node "
                             "(.pyodide/ as scripts/test.py --pyodide-only sets it up)")
    parser.add_argument("--show", type=int, default=2, help="wrong or invalid programs printed (default 2)")
    parser.add_argument("--json", help="write the results to this file")
    parser.add_argument("--outputs", help="write each program's decompiled text, hashed, to this file "
                        "(to compare two versions of the decompiler; this interpreter only)")
    parser.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.worker:
        if sys.platform == "emscripten":  # the test wheels (bytecode) scripts/test.py unpacked there
            sys.path.insert(0, str(REPO / ".pyodide" / "site"))
        print(json.dumps(fuzz(args.start, args.programs, args.size, args.show)))
        return 0
    pythons = list(args.python)
    if args.all:
        pythons += [str(REPO / ".venvs" / v / "bin" / "python") for v in VERSIONS
                    if (REPO / ".venvs" / v / "bin" / "python").exists()]
    if pythons:
        results = [run_worker(python, args) for python in pythons]
    else:
        results = [fuzz(args.start, args.programs, args.size, args.show, args.outputs)]
    print(table(results))
    failed = False
    for result in results:
        for reason, count in sorted(result.get("refusals", {}).items(), key=lambda item: -item[1])[:5]:
            print("  %s refused %d: %s" % (result["python"], count, reason))
        for example in result.get("examples", []):
            print("\n--- %s %s" % (result["python"], example))
        failed = failed or "error" in result or bool(result["counts"]["wrong"] + result["counts"]["invalid"])
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=1))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
