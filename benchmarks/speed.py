"""How long ``framescope.decompile`` takes on a function of about 100 lines.

Picks the standard-library functions (from the round-trip benchmark's modules)
whose source spans 90 to 110 lines, decompiles each several times (the self-check
included) and prints the median and the slowest, per function and overall.

    PYTHONPATH=src python benchmarks/speed.py [--repeat N] [--show K]
"""
import argparse
import os
import statistics
import sys
import time
from types import CodeType

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import roundtrip  # noqa: E402  (the module list and source reading)

from framescope import DecompilationError, decompile  # noqa: E402


def line_span(code: CodeType) -> int:
    lines = [line for _, _, line in code.co_lines() if line is not None] if hasattr(code, "co_lines") else []
    if not lines:
        import dis

        lines = [line for _, line in dis.findlinestarts(code) if line is not None]
    return (max(lines) - code.co_firstlineno + 1) if lines else 0


def candidates(low: int, high: int):
    root = roundtrip.stdlib_root()
    for entry in roundtrip.MODULES:
        names = entry if isinstance(entry, tuple) else (entry,)
        for name in names:
            found = roundtrip.read_source(name, root)
            if found is None:
                continue
            path, source = found
            module = compile(source, path, "exec")
            for key, code in roundtrip.functions(module):
                if low <= line_span(code) <= high:
                    yield "%s:%s" % (name, roundtrip.qualname(key)), code
            break


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--show", type=int, default=5, help="slowest functions to list")
    parser.add_argument("--cpu", action="store_true",
                        help="count this process's CPU time instead of wall time (steadier on a busy machine)")
    args = parser.parse_args()
    clock = time.process_time if args.cpu else time.perf_counter
    rows = []
    for name, code in candidates(90, 110):
        times = []
        ok = True
        for _ in range(args.repeat):
            start = clock()
            try:
                decompile(code)
            except DecompilationError:
                ok = False
            times.append(clock() - start)
        rows.append((statistics.median(times), name, ok))
    if not rows:
        print("no functions of 90-110 lines found")
        return
    medians = sorted(r[0] for r in rows)
    print("python %d.%d.%d: %d functions of 90-110 lines, decompile %s time (self-check included)"
          % (sys.version_info[:3] + (len(rows), "CPU" if args.cpu else "wall")))
    print("median %.1f ms, 90th percentile %.1f ms, slowest %.1f ms"
          % (1000 * statistics.median(medians), 1000 * medians[int(0.9 * (len(medians) - 1))], 1000 * medians[-1]))
    for seconds, name, ok in sorted(rows, reverse=True)[:args.show]:
        print("  %7.1f ms  %s%s" % (1000 * seconds, name, "" if ok else "  (DecompilationError)"))


if __name__ == "__main__":
    main()
