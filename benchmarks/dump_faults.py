"""The dump under faults: a real torch.compile program whose dump folder fails or whose process
dies, checked as a user would look at it afterwards. Prints one table.

    python3 benchmarks/dump_faults.py                    # every fault, kills repeated 100 times
    python3 benchmarks/dump_faults.py --kills 20 --only kill,interrupt

Faults (the first five need root, for mount):

* ``read-only``: the dump folder is on a tmpfs remounted read-only.
* ``full-<size>``: the dump folder is on a tmpfs of that size, which fills up during the run.
* ``deleted``: the program deletes the dump folder between two compiles.
* ``blocked``: a directory stands where index.json goes.
* ``kill``: SIGKILL at a random moment of the run (repeated; seeded).
* ``interrupt``: a KeyboardInterrupt raised inside a compile (a backend that raises it), with
  and without framescope.

For each: whether the program printed the same results with the same exit status as without
framescope, how many DumpWarnings it printed, and what the folder held afterwards: .py files
(all must compile), index.json (valid, absent or broken), whether ``framescope report`` of
the folder worked and what it said is missing. tests/torch/test_faults.py runs the same
scenarios at a small count.
"""
from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Dict, Iterator, List, Optional

REPO = Path(__file__).resolve().parent.parent

#: The program: compiles, graph breaks and recompiles over a few seconds; ``mode`` is
#: plain (no framescope), dump, delete (the folder is deleted mid-run) or interrupt.
PROGRAM = r'''
import contextlib, json, shutil, sys
import torch
import framescope

mode, out = sys.argv[1], sys.argv[2]


def make(k):
    def step(x, n):
        y = torch.sin(x) * k + n
        print("", end="")  # a graph break
        return torch.cos(y) - n
    step.__qualname__ = step.__name__ = "step_%d" % k
    step.__code__ = step.__code__.replace(co_name="step_%d" % k)
    return step


def interrupting(gm, example_inputs):
    raise KeyboardInterrupt


print("READY", flush=True)
results = []
block = contextlib.nullcontext() if mode.endswith("plain") else framescope.dump(out)
with block:
    for k in range(6):
        fn = torch.compile(make(k), backend=interrupting if mode.startswith("interrupt") else "eager",
                           dynamic=False)
        for n in range(3):  # an int argument: a recompile for each value
            results.append(round(fn(torch.ones(4), n).sum().item(), 5))
        if mode == "delete" and k == 2:
            shutil.rmtree(out)
print("RESULT " + json.dumps(results), flush=True)
'''


@dataclass
class Outcome:
    """What one run of the program under a fault did, and what its folder held afterwards."""

    fault: str
    #: Same results and exit status as the program without framescope.
    same: bool = False
    exit_status: Optional[int] = None
    #: For the kills: whether the program was still running when the signal came, and
    #: whether the dump had written a .py file by then.
    killed: bool = False
    started: bool = False
    #: DumpWarnings the program printed.
    warnings: int = 0
    #: .py files left in the folder, and those that do not compile.
    files: int = 0
    broken: List[str] = field(default_factory=list)
    #: "valid", "absent" or "broken: <why>".
    index: str = "absent"
    #: ``framescope report`` of the folder: "ok", "not a dump" (no index.json and no dump
    #: file), "folder gone" (deleted by the program) or its error.
    report: str = ""
    #: What the report's warnings say is missing (first line).
    missing: str = ""
    stderr: str = ""

    @property
    def ok(self) -> bool:
        """Same output, at most one warning, and what the folder holds loads, unless nothing
        was written: a folder with .py files in it is a dump, index.json or not."""
        report = ("ok", "folder gone") if self.files else ("ok", "not a dump", "folder gone")
        return (self.same and self.warnings <= 1 and not self.broken and not self.index.startswith("broken")
                and self.report in report)


def write_program(folder: Path) -> Path:
    path = folder / "fault_program.py"
    path.write_text(PROGRAM, encoding="utf-8")
    return path


def run(program: Path, mode: str, out: Path, timeout: float = 600) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, str(program), mode, str(out)], stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE, universal_newlines=True, timeout=timeout, cwd=str(program.parent))


def result_line(stdout: str) -> Optional[str]:
    lines = [line for line in stdout.splitlines() if line.startswith("RESULT ")]
    return lines[-1] if lines else None


def examine(outcome: Outcome, folder: Path, report_dir: Path) -> Outcome:
    """Fill in what the folder holds: files that compile, the index, the report."""
    files = sorted(folder.rglob("*.py")) if folder.is_dir() else []
    outcome.files = len(files)
    for path in files:
        try:
            compile(path.read_bytes(), str(path), "exec")
        except (SyntaxError, ValueError) as exc:
            outcome.broken.append("%s: %s" % (path.name, exc))
    index = folder / "index.json"
    if index.is_file():
        try:
            json.loads(index.read_text(encoding="utf-8"))
            outcome.index = "valid"
        except (ValueError, UnicodeDecodeError) as exc:
            outcome.index = "broken: %s" % exc
    done = subprocess.run([sys.executable, "-m", "framescope", "report", "--out", str(report_dir), str(folder)],
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE, universal_newlines=True, timeout=300)
    if done.returncode == 0:
        outcome.report = "ok"
        from framescope.report.index import load_dump

        said = [w for w in load_dump(str(folder)).warnings if "missing" in w or "not in the folder" in w]
        outcome.missing = said[0] if said else ""
    elif "no index.json" in done.stderr or "does not exist" in done.stderr:
        outcome.report = "not a dump"
    else:
        outcome.report = (done.stderr.strip().splitlines() or ["exit %d" % done.returncode])[-1]
    return outcome


def finish(outcome: Outcome, done: subprocess.CompletedProcess, expected: str) -> None:
    outcome.exit_status = done.returncode
    outcome.same = done.returncode == 0 and result_line(done.stdout) == expected
    outcome.warnings = done.stderr.count("DumpWarning:")
    outcome.stderr = done.stderr[-3000:]


@contextmanager
def tmpfs(mount_point: Path, size: str, read_only: bool = False) -> Iterator[Path]:
    """A tmpfs of ``size`` at ``mount_point`` (root only), unmounted afterwards."""
    mount_point.mkdir(parents=True, exist_ok=True)
    subprocess.run(["mount", "-t", "tmpfs", "-o", "size=" + size, "tmpfs", str(mount_point)], check=True)
    try:
        if read_only:
            subprocess.run(["mount", "-o", "remount,ro", str(mount_point)], check=True)
        yield mount_point
    finally:
        subprocess.run(["umount", "-l", str(mount_point)], check=False)


def plain_result(program: Path, work: Path) -> str:
    done = run(program, "plain", work / "unused")
    line = result_line(done.stdout)
    if done.returncode != 0 or line is None:
        raise RuntimeError("the program fails without framescope: " + done.stderr[-2000:])
    return line


def on_mount(program: Path, work: Path, expected: str, name: str, size: str, read_only: bool) -> Outcome:
    outcome = Outcome(name)
    with tmpfs(work / ("mnt-" + name), size, read_only) as mount:
        folder = mount / "dump"
        finish(outcome, run(program, "dump", folder), expected)
        return examine(outcome, folder, work / ("report-" + name))


def deleted(program: Path, work: Path, expected: str) -> Outcome:
    outcome = Outcome("deleted")
    folder = work / "deleted-dump"
    finish(outcome, run(program, "delete", folder), expected)
    if folder.exists():
        return examine(outcome, folder, work / "report-deleted")
    outcome.index, outcome.report = "absent (folder gone)", "folder gone"
    return outcome


def blocked(program: Path, work: Path, expected: str) -> Outcome:
    outcome = Outcome("blocked")
    folder = work / "blocked-dump"
    (folder / "index.json").mkdir(parents=True)
    finish(outcome, run(program, "dump", folder), expected)
    return examine(outcome, folder, work / "report-blocked")


def killed(program: Path, work: Path, number: int, seed: int, window_s: float) -> Outcome:
    """SIGKILL at a random moment of the first 90% of ``window_s`` seconds after the program
    is ready (torch imported): the span a dump run took."""
    outcome = Outcome("kill #%d" % number)
    folder = work / ("kill-%d" % number)
    delay = random.Random(seed * 1000 + number).uniform(0.0, 0.9 * window_s)
    process = subprocess.Popen([sys.executable, str(program), "dump", str(folder)], stdout=subprocess.PIPE,
                               stderr=subprocess.DEVNULL, universal_newlines=True, cwd=str(program.parent))
    assert process.stdout is not None
    process.stdout.readline()  # READY
    time.sleep(delay)
    outcome.started = folder.is_dir() and any(folder.rglob("*.py"))
    outcome.killed = process.poll() is None  # a run faster than the timing run may be over
    process.send_signal(signal.SIGKILL)
    process.wait()
    outcome.exit_status = process.returncode
    outcome.same = True  # a killed program has no output to compare; its folder is the point
    return examine(outcome, folder, work / ("report-kill-%d" % number))


def interrupted(program: Path, work: Path) -> Outcome:
    """A KeyboardInterrupt inside a compile ends the program as it does without framescope."""
    outcome = Outcome("interrupt")
    folder = work / "interrupt-dump"
    plain = run(program, "interrupt-plain", work / "unused")
    done = run(program, "interrupt", folder)
    outcome.exit_status = done.returncode
    last = [line for line in done.stderr.strip().splitlines() if line.strip()][-1:]
    plain_last = [line for line in plain.stderr.strip().splitlines() if line.strip()][-1:]
    outcome.same = done.returncode == plain.returncode != 0 and last == plain_last == ["KeyboardInterrupt"]
    outcome.warnings = done.stderr.count("DumpWarning:")
    outcome.stderr = done.stderr[-3000:]
    return examine(outcome, folder, work / "report-interrupt")


def kill_window(program: Path, work: Path) -> float:
    """Seconds from READY to the end of a dump run: the span random kills are drawn from."""
    process = subprocess.Popen([sys.executable, str(program), "dump", str(work / "timing-dump")],
                               stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, universal_newlines=True)
    assert process.stdout is not None
    process.stdout.readline()
    start = time.monotonic()
    process.wait()
    return time.monotonic() - start


FAULTS = ("read-only", "full", "deleted", "blocked", "kill", "interrupt")
FULL_SIZES = ("8k", "32k", "64k", "128k")


def run_faults(work: Path, only=FAULTS, kills: int = 100, seed: int = 0) -> List[Outcome]:
    program = write_program(work)
    expected = plain_result(program, work)
    outcomes: List[Outcome] = []
    if "read-only" in only:
        outcomes.append(on_mount(program, work, expected, "read-only", "1m", read_only=True))
    if "full" in only:
        outcomes += [on_mount(program, work, expected, "full-" + size, size, read_only=False) for size in FULL_SIZES]
    if "deleted" in only:
        outcomes.append(deleted(program, work, expected))
    if "blocked" in only:
        outcomes.append(blocked(program, work, expected))
    if "kill" in only and kills:
        window = kill_window(program, work)
        outcomes += [killed(program, work, number, seed, window) for number in range(kills)]
    if "interrupt" in only:
        outcomes.append(interrupted(program, work))
    return outcomes


def table(outcomes: List[Outcome]) -> List[str]:
    rows = ["| fault | same output and status | DumpWarnings | .py files (broken) | index.json | report | ok |",
            "|---|---|---|---|---|---|---|"]
    kills = [o for o in outcomes if o.fault.startswith("kill")]
    for outcome in [o for o in outcomes if not o.fault.startswith("kill")]:
        rows.append("| %s | %s (exit %s) | %d | %d (%d) | %s | %s%s | %s |" % (
            outcome.fault, "yes" if outcome.same else "NO", outcome.exit_status, outcome.warnings, outcome.files,
            len(outcome.broken), outcome.index, outcome.report, "; says missing" if outcome.missing else "",
            "yes" if outcome.ok else "NO"))
    if kills:
        indexes: Dict[str, int] = {}
        for outcome in kills:
            key = outcome.index.split(":")[0]
            indexes[key] = indexes.get(key, 0) + 1
        reports: Dict[str, int] = {}
        for outcome in kills:
            reports[outcome.report] = reports.get(outcome.report, 0) + 1
        rows.append("| SIGKILL x%d (%d while running) | (killed) | - | %d (%d) | %s | %s | %s |" % (
            len(kills), sum(o.killed for o in kills), sum(o.files for o in kills), sum(len(o.broken) for o in kills),
            ", ".join("%s %d" % item for item in sorted(indexes.items())),
            ", ".join("%s %d" % item for item in sorted(reports.items())),
            "yes" if all(o.ok for o in kills) else "NO (%d)" % sum(not o.ok for o in kills)))
    return rows


def main(argv: List[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--kills", type=int, default=100, help="SIGKILL runs (default 100)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--only", help="comma-separated faults: " + ",".join(FAULTS))
    args = parser.parse_args(argv)
    only = tuple(args.only.split(",")) if args.only else FAULTS
    if os.geteuid() != 0 and {"read-only", "full"} & set(only):
        parser.error("the read-only and full faults mount a tmpfs: run as root, or leave them out with --only")
    work = Path(tempfile.mkdtemp(prefix="dump-faults-"))
    start = time.monotonic()
    try:
        outcomes = run_faults(work, only, args.kills, args.seed)
    finally:
        shutil.rmtree(str(work), ignore_errors=True)
    print("\n".join(table(outcomes)))
    print("\n%.1f minutes; python %s" % ((time.monotonic() - start) / 60, sys.version.split()[0]))
    for outcome in outcomes:
        if not outcome.ok:
            print("\n%s: %s" % (outcome.fault, outcome))
    return 0 if all(o.ok for o in outcomes) else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
