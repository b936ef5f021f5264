"""Run framescope's torch tests on every supported (CPython, torch) pair and print one table.

    python3 benchmarks/torch_matrix.py                         # every pair
    python3 benchmarks/torch_matrix.py --pairs 3.13:2.15.0,3.11:2.13.0
    python3 benchmarks/torch_matrix.py --clean                 # delete each venv after its run
    python3 benchmarks/torch_matrix.py -- -k closure           # arguments after -- go to pytest

Each pair gets a virtual environment in ``.venvs/torch/<python>-<torch>`` (reused while it
has that torch): ``pip install torch==<torch>`` (PyPI's Linux wheels are CUDA builds that run
on the CPU, about 5 GB with their nvidia-* packages), then framescope editable with its
``test-torch`` extra. The torch test suite (``tests/torch``: dump, debugging with real pdb and
debugpy, evalframe, run/report) runs with ``FRAMESCOPE_REQUIRE_TORCH=1``, so nothing may skip
for want of torch or of a package of the ``test-torch`` extra. Every dump the tests write stays under the run's pytest base folder, and
each cache entry that fell back to Dynamo's bytecode in any of them is counted (those a test
forces on purpose excepted). The table: pair, tests passed/failed/skipped, fallbacks, minutes.
Then, as a new user would, ``framescope run examples/torch_program.py`` (a graph break in a
closure, recompiles, a module trained through Inductor): the "example" column says whether it
exited 0 with a dump whose every ``.py`` file compiles, no fallback, and an HTML report.
``--json FILE`` also appends one JSON line per pair.
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Dict, List, Optional, Tuple

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
sys.path.insert(0, str(REPO / "scripts"))

import test as runner  # noqa: E402  (scripts/test.py: interpreters, pip, pytest's counts)

sys.path.insert(0, str(REPO / "src"))
from framescope.report.index import dumps_under  # noqa: E402

#: The supported pairs: torch 2.13-2.15 on CPython 3.10-3.13 (PyPI has no 2.15 for 3.10),
#: torch 2.10-2.12 on 3.11 and 3.12; the newest patch release of each.
PAIRS = [
    ("3.10", "2.13.0"), ("3.10", "2.14.1"),
    ("3.11", "2.13.0"), ("3.11", "2.14.1"), ("3.11", "2.15.0"),
    ("3.12", "2.13.0"), ("3.12", "2.14.1"), ("3.12", "2.15.0"),
    ("3.13", "2.13.0"), ("3.13", "2.14.1"), ("3.13", "2.15.0"),
    ("3.11", "2.10.0"), ("3.11", "2.11.0"), ("3.11", "2.12.1"),
    ("3.12", "2.10.0"), ("3.12", "2.11.0"), ("3.12", "2.12.1"),
]

VENVS = REPO / ".venvs" / "torch"

# A fallback a test makes on purpose says so in its reason.
FORCED = "forced for the test"


class Result:
    """What one pair's run gave."""

    def __init__(self, python: str, torch: str) -> None:
        self.python, self.torch = python, torch
        #: The interpreter's and torch's own version strings, once known.
        self.python_version = python
        self.torch_version = torch
        #: pytest's counts by outcome.
        self.counts: Dict[str, int] = {}
        #: "frame entry N: reason" of each cache entry that fell back.
        self.fallbacks: List[str] = []
        self.setup_s = 0.0
        self.test_s = 0.0
        #: Why the pair could not be tested, or None.
        self.error: Optional[str] = None
        #: What ``framescope run`` of the example gave: "ok", or what went wrong.
        self.example = "not run"

    @property
    def ok(self) -> bool:
        failed = self.counts.get("failed", 0) + self.counts.get("error", 0)
        return (self.error is None and failed == 0 and self.counts.get("passed", 0) > 0 and not self.fallbacks
                and self.example == "ok")

    def row(self) -> str:
        c = self.counts
        return "| %s | %s | %s | %d | %d | %d | %d | %s | %.1f + %.1f |" % (
            self.python_version, self.torch_version, "ok" if self.ok else (self.error or "FAILED"),
            c.get("passed", 0), c.get("failed", 0) + c.get("error", 0), c.get("skipped", 0),
            len(self.fallbacks), self.example, self.setup_s / 60, self.test_s / 60,
        )

    def record(self) -> Dict[str, object]:
        return {
            "python": self.python_version, "torch": self.torch_version, "ok": self.ok,
            "counts": self.counts, "fallbacks": self.fallbacks, "setup_s": round(self.setup_s, 1),
            "test_s": round(self.test_s, 1), "error": self.error, "example": self.example,
        }


HEADER = (
    "| python | torch | status | passed | failed | skipped | fallbacks | example | minutes (setup + tests) |\n"
    "|---|---|---|---|---|---|---|---|---|"
)


def run(cmd: List[str], env: Optional[Dict[str, str]] = None, timeout: float = 3600) -> Tuple[int, str]:
    proc = subprocess.run(cmd, cwd=str(REPO), env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                          universal_newlines=True, errors="replace", timeout=timeout)
    return proc.returncode, proc.stdout


def installed_torch(python: Path) -> Optional[str]:
    if not python.exists():
        return None
    code = "import importlib.metadata as m; print(m.version('torch'))"
    rc, out = run([str(python), "-c", code], timeout=120)
    return out.strip() if rc == 0 else None


def setup(result: Result, venv: Path) -> Path:
    """Make (or reuse) the pair's venv; return its python."""
    python = venv / "bin" / "python"
    found = installed_torch(python)
    if found is None or found.split("+")[0] != result.torch:
        interpreter = runner.find_cpython(result.python)
        if interpreter is None:
            raise RuntimeError("CPython %s is not installed" % result.python)
        if venv.exists():
            shutil.rmtree(str(venv))
        venv.parent.mkdir(parents=True, exist_ok=True)
        rc, out = run([str(interpreter), "-m", "venv", str(venv)])
        if rc != 0:
            raise RuntimeError("venv failed: " + out.strip()[-300:])
        print("  installing torch==%s into %s" % (result.torch, venv.relative_to(REPO)), flush=True)
    pip = [str(python), "-m", "pip", "install", "-q", "--progress-bar", "off", "--disable-pip-version-check"]
    rc, out = run(pip + ["torch==" + result.torch, "-e", ".[test-torch]"], env=runner.pip_env())
    if rc != 0:
        raise RuntimeError("pip install failed: " + out.strip().splitlines()[-1][-300:])
    rc, out = run([str(python), "-c", "import platform, torch; print(platform.python_version(), torch.__version__)"])
    if rc != 0:
        raise RuntimeError("torch does not import: " + out.strip()[-300:])
    result.python_version, result.torch_version = out.split()
    return python


def fallbacks(base: Path) -> List[str]:
    """Each cache entry, in every dump under ``base``, that runs Dynamo's bytecode."""
    return [why for dump in dumps_under(str(base)) for why in dump.fallbacks() if FORCED not in why]


def test(result: Result, python: Path, pytest_args: List[str], log: Path) -> None:
    base = Path(tempfile.mkdtemp(prefix="torch-matrix-"))
    try:
        env = dict(os.environ, FRAMESCOPE_REQUIRE_TORCH="1", PYTHONUNBUFFERED="1")
        cmd = [str(python), "-m", "pytest", "tests/torch", "-p", "no:cacheprovider", "-q", "-rfE",
               "--basetemp", str(base / "tmp")] + pytest_args
        start = time.monotonic()
        rc, out = run(cmd, env=env)
        result.test_s = time.monotonic() - start
        log.write_text(out)
        result.counts = runner.parse_counts(out)
        result.fallbacks = fallbacks(base)
        if rc not in (0, 1):
            result.error = "pytest exit %d" % rc
    finally:
        shutil.rmtree(str(base), ignore_errors=True)


EXAMPLE = "examples/torch_program.py"

# Prints each .py file under argv[1] that does not compile, with why.
COMPILE_ALL = """
import pathlib, sys
for path in sorted(pathlib.Path(sys.argv[1]).rglob("*.py")):
    try:
        compile(path.read_text(encoding="utf-8"), str(path), "exec")
    except SyntaxError as exc:
        print("%s: %s" % (path.name, exc))
"""


def try_example(result: Result, python: Path) -> None:
    """``framescope run`` of the example, checked as a user would look at its dump."""
    base = Path(tempfile.mkdtemp(prefix="torch-example-"))
    try:
        dump = base / "dump"
        rc, out = run([str(python), "-m", "framescope", "run", "--out", str(dump), EXAMPLE], timeout=1800)
        files = sorted(dump.rglob("*.py"))
        # Compiled by the pair's own interpreter, whose code runs from these files.
        _, broken = run([str(python), "-c", COMPILE_ALL, str(dump)])
        if rc != 0:
            result.example = "exit %d: %s" % (rc, out.strip().splitlines()[-1][-200:] if out.strip() else "")
        elif not files or broken.strip():
            result.example = "invalid files: %s" % (broken.strip().replace("\n", "; ")[:300] or "none written")
        elif fallbacks(dump):
            result.example = "fallback: %s" % fallbacks(dump)[0]
        elif not (dump / "report" / "index.html").is_file():
            result.example = "no report"
        else:
            result.example = "ok"
    finally:
        shutil.rmtree(str(base), ignore_errors=True)


def main(argv: List[str]) -> int:
    if "--" in argv:
        split = argv.index("--")
        argv, pytest_args = argv[:split], argv[split + 1:]
    else:
        pytest_args = []
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pairs", help="comma-separated python:torch pairs (default: all %d)" % len(PAIRS))
    parser.add_argument("--clean", action="store_true", help="delete each pair's venv after its run (~5 GB each)")
    parser.add_argument("--json", metavar="FILE", help="append one JSON line per pair to FILE")
    args = parser.parse_args(argv)
    pairs = PAIRS
    if args.pairs:
        pairs = [tuple(p.split(":", 1)) for p in args.pairs.split(",")]  # type: ignore[misc]
        unknown = [p for p in pairs if len(p) != 2 or p[0] not in runner.CPYTHONS]
        if unknown:
            parser.error("pairs look like 3.13:2.15.0 (python:torch), not %s" % ":".join(unknown[0]))
    results = []
    for python_minor, torch in pairs:
        result = Result(python_minor, torch)
        venv = VENVS / ("%s-%s" % (python_minor, torch))
        print("%s + torch %s" % (python_minor, torch), flush=True)
        start = time.monotonic()
        try:
            python = setup(result, venv)
            result.setup_s = time.monotonic() - start
            test(result, python, pytest_args, VENVS / ("%s-%s.log" % (python_minor, torch)))
            try_example(result, python)
        except (RuntimeError, OSError, subprocess.SubprocessError) as exc:
            result.setup_s = result.setup_s or time.monotonic() - start
            result.error = "setup failed: %s" % exc
        finally:
            if args.clean and venv.exists():
                shutil.rmtree(str(venv))
        print("  " + result.row(), flush=True)
        for line in result.fallbacks:
            print("  fallback: " + line, flush=True)
        if args.json:
            with open(args.json, "a") as out:
                out.write(json.dumps(result.record()) + "\n")
        results.append(result)
    print()
    print(HEADER)
    for result in results:
        print(result.row())
    return 0 if all(r.ok for r in results) else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
