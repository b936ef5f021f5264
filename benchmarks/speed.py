"""How long ``framescope.decompile`` takes, beside depyf's ``decompile`` where depyf is installed.

Two measures, each decompiler timed on the same code objects in the same process, in
alternation, the self-check of framescope included:

* a sample of ``--sample`` functions (default 300) spread over the round-trip benchmark's
  standard-library modules (the same seeded sample as ``roundtrip.py --sample``): the
  total of each function's median time;
* the standard-library functions whose source spans 90 to 110 lines: median, 90th
  percentile and slowest per-function median, and how many times faster than depyf.

A function that a decompiler refuses or fails on is timed all the same (its time to
fail, at most ``LIMIT`` seconds) and counted; the ratios use the functions that both decompile.

    PYTHONPATH=src python benchmarks/speed.py [--repeat N] [--show K] [--sample N] [--cpu] [--no-depyf]
"""
from __future__ import annotations

import argparse
import functools
import os
import statistics
import sys
import time
from types import CodeType
from typing import Callable, Dict, Iterator, List, NamedTuple, Optional, Tuple

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import roundtrip  # noqa: E402  (the module list and source reading)
from roundtrip_sample import sample  # noqa: E402

from framescope import DecompilationError, decompile  # noqa: E402

Decompile = Callable[[CodeType], str]


def line_span(code: CodeType) -> int:
    lines = [line for _, _, line in code.co_lines() if line is not None] if hasattr(code, "co_lines") else []
    if not lines:
        import dis

        lines = [line for _, line in dis.findlinestarts(code) if line is not None]
    return (max(lines) - code.co_firstlineno + 1) if lines else 0


def stdlib_functions() -> Iterator[Tuple[str, tuple, CodeType]]:
    """(module, key, code) of every function of the round-trip benchmark's stdlib modules."""
    for unit in roundtrip.stdlib_units(None, []):
        try:
            module = roundtrip.compile_quietly(roundtrip.load_text(unit), unit.path)
        except SyntaxError:
            continue
        for key, code in roundtrip.functions(module):
            yield unit.name, key, code


#: framescope's failures inside the decompiler met while timing, printed after the tables.
INTERNAL_ERRORS: List[str] = []


class Contender(NamedTuple):
    """A decompiler to time."""

    decompile: Decompile
    #: Empties the decompiler's own caches, so that every timed call starts cold (both keep
    #: results per code object, which compare by value: a repeat would time a look-up).
    forget: Callable[[], None]


def framescope_contender() -> Contender:
    from framescope.decompiler.frontend import opcodes

    # The source decompiler alone, so that a refusal counts as one.
    return Contender(functools.partial(decompile, machine=False), opcodes._canonical.cache_clear)


def depyf_contender() -> Optional[Contender]:
    """depyf's decompiler, when depyf is installed."""
    try:
        import depyf
        from depyf.decompiler import Decompiler
    except ImportError:
        return None
    return Contender(depyf.decompile, Decompiler.decompile.cache_clear)


class Timing(NamedTuple):
    """One function's median time under one decompiler, and whether it gave source."""

    seconds: float
    ok: bool


#: Seconds after which a decompilation is stopped and counted as a failure (depyf can take
#: minutes on a function that framescope decompiles in milliseconds).
LIMIT = 10.0


def time_one(contender: Contender, code: CodeType, clock: Callable[[], float]) -> Tuple[float, bool]:
    contender.forget()
    start = clock()
    try:
        with roundtrip.time_limit(LIMIT):
            contender.decompile(code)
        ok = True
    except DecompilationError as error:
        ok = False
        if getattr(error, "internal", False):  # framescope's: a defect, not a refusal, reported apart
            INTERNAL_ERRORS.append("%s: %s" % (code.co_name, error))
    except roundtrip.Timeout:
        ok = False
    except Exception:  # depyf raises whatever it meets
        ok = False
    return clock() - start, ok


def measure(decompilers: Dict[str, Contender], code: CodeType, repeat: int,
            clock: Callable[[], float]) -> Dict[str, Timing]:
    """Each decompiler's median over ``repeat`` rounds, the decompilers taking turns."""
    times: Dict[str, List[float]] = {name: [] for name in decompilers}
    oks: Dict[str, bool] = {name: True for name in decompilers}
    for _ in range(repeat):
        for name, contender in decompilers.items():
            seconds, ok = time_one(contender, code, clock)
            times[name].append(seconds)
            oks[name] = oks[name] and ok
    return {name: Timing(statistics.median(times[name]), oks[name]) for name in decompilers}


def percentile(values: List[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[int(share * (len(ordered) - 1))]


def report_sample(rows: List[Tuple[str, Dict[str, Timing]]], names: List[str]) -> None:
    both = [timings for _, timings in rows if all(timings[name].ok for name in names)]
    print("sample: %d functions; %s" % (len(rows), ", ".join(
        "%s refused %d" % (name, sum(1 for _, t in rows if not t[name].ok)) for name in names)))
    for name in names:
        total = sum(timings[name].seconds for _, timings in rows)
        print("  %-10s all: %8.1f ms   decompiled by all: %8.1f ms (%d functions)"
              % (name, 1000 * total, 1000 * sum(t[name].seconds for t in both), len(both)))
    if len(names) > 1:
        ratio = sum(t[names[1]].seconds for t in both) / sum(t[names[0]].seconds for t in both)
        print("  framescope is %.1fx as fast as %s on the functions both decompile" % (ratio, names[1]))


def report_long(rows: List[Tuple[str, Dict[str, Timing]]], names: List[str], show: int) -> None:
    print("functions of 90-110 lines: %d" % len(rows))
    for name in names:
        medians = [timings[name].seconds for _, timings in rows]
        print("  %-10s median %6.1f ms, 90th percentile %6.1f ms, slowest %6.1f ms, refused %d"
              % (name, 1000 * statistics.median(medians), 1000 * percentile(medians, 0.9), 1000 * max(medians),
                 sum(1 for _, t in rows if not t[name].ok)))
    if len(names) > 1:
        ratios = [t[names[1]].seconds / t[names[0]].seconds for _, t in rows if t[names[0]].ok and t[names[1]].ok]
        if ratios:
            print("  framescope / %s speed-up per function both decompile: median %.1fx, lowest %.1fx (%d functions)"
                  % (names[1], statistics.median(ratios), min(ratios), len(ratios)))
        totals = [sum(t[name].seconds for _, t in rows) for name in names[:2]]
        print("  all %d functions, failures at their time to fail: framescope %.0f ms, %s %.0f ms (%.1fx)"
              % (len(rows), 1000 * totals[0], names[1], 1000 * totals[1], totals[1] / totals[0]))
    print("  slowest for framescope:")
    for name, timings in sorted(rows, key=lambda row: -row[1][names[0]].seconds)[:show]:
        cells = ["%s %.1f ms%s" % (n, 1000 * timings[n].seconds, "" if timings[n].ok else " (refused)") for n in names]
        print("    %s: %s" % (name, ", ".join(cells)))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--show", type=int, default=5, help="slowest functions to list")
    parser.add_argument("--sample", type=int, default=300, help="functions in the stdlib sample (0: skip it)")
    parser.add_argument("--seed", type=int, default=0, help="which sample")
    parser.add_argument("--no-depyf", action="store_true", help="time framescope alone")
    parser.add_argument("--cpu", action="store_true",
                        help="count this process's CPU time instead of wall time (steadier on a busy machine)")
    args = parser.parse_args()
    clock = time.process_time if args.cpu else time.perf_counter
    decompilers: Dict[str, Contender] = {"framescope": framescope_contender()}
    other = None if args.no_depyf else depyf_contender()
    if other is not None:
        decompilers["depyf"] = other
    names = list(decompilers)
    print("python %d.%d.%d, %s time, framescope's self-check included; %s"
          % (sys.version_info[:3] + ("CPU" if args.cpu else "wall",
                                     "depyf beside it" if other else "depyf not installed")))
    everything = list(stdlib_functions())
    if args.sample:
        chosen = sample({"stdlib": [(module, key) for module, key, _ in everything]}, args.sample, args.seed)
        rows = [("%s:%s" % (module, roundtrip.qualname(key)), measure(decompilers, code, args.repeat, clock))
                for module, key, code in everything if (module, key) in chosen]
        report_sample(rows, names)
    long_rows = [("%s:%s" % (module, roundtrip.qualname(key)), measure(decompilers, code, args.repeat, clock))
                 for module, key, code in everything if 90 <= line_span(code) <= 110]
    if long_rows:
        report_long(long_rows, names, args.show)
    # A refusal is a reason; a failure inside framescope's decompiler is a defect: counted apart.
    print("framescope internal errors: %d" % len(set(INTERNAL_ERRORS)))
    for line in sorted(set(INTERNAL_ERRORS)):
        print("  " + line)


if __name__ == "__main__":
    main()
