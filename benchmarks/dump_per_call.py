"""The cost a dump adds to each call of a compiled function: a trivial function compiled with
the eager backend, called 20,000 times plainly and then inside ``framescope.dump`` (best of
three rounds each), in microseconds per call.

    PYTHONPATH=src python benchmarks/dump_per_call.py [--calls 20000]

Under a dump each call also goes through torch's guard completion hook (calls that miss every
entry are counted) and, on CPython 3.12 and later, the PY_START event that counts the calls of
the entry's code.
"""
from __future__ import annotations

import argparse
import sys
import tempfile
import time

import torch

import framescope


def f(x):
    return x + 1


def per_call(compiled, x, calls: int) -> float:
    began = time.perf_counter()
    for _ in range(calls):
        compiled(x)
    return (time.perf_counter() - began) / calls * 1e6


def main(argv) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=20000)
    args = parser.parse_args(argv)
    compiled = torch.compile(f, backend="eager")
    x = torch.ones(2)
    compiled(x)
    plain = min(per_call(compiled, x, args.calls) for _ in range(3))
    with tempfile.TemporaryDirectory() as folder:
        with framescope.dump(folder):
            compiled(x)
            dumped = min(per_call(compiled, x, args.calls) for _ in range(3))
    print("torch %s, python %s: %.2f us per call plainly, %.2f us in a dump (+%.2f us)"
          % (torch.__version__, sys.version.split()[0], plain, dumped, dumped - plain))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
