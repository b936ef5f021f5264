"""depyf's own test suite, run against depyf and against framescope's drop-in; a table.

    python benchmarks/depyf_suite.py DEPYF_SOURCE [--python PY] [--with depyf,framescope]
                                     [--depyf-deps DIR] [--only NAME,...] [--keep]

DEPYF_SOURCE is a depyf source tree (a clone of github.com/thuml/depyf, or its sdist
unpacked): its ``tests/`` and ``python_coverage.py`` are run as depyf's two CI workflows
run them, unedited, once with ``import depyf`` finding the tree's own ``depyf`` package and
once with it finding framescope's (``python -m framescope.depyf install --dir`` into a
folder the run adds as a site folder). Nothing is fetched: depyf's own run needs its
requirements, ``astor`` and ``dill``, importable by PY or in ``--depyf-deps DIR``. PY (default:
this interpreter) needs torch and pytest.

Each run gets a fresh copy of the tests in a temporary folder (they write into the current
folder). What counts as one test:

* ``tests/test.py``, ``tests/test_advanced.py``: each pytest test;
* ``python_coverage.py``, ``tests/test_code_owner.py``, ``tests/test_ensure.py``,
  ``tests/assert.py`` and the scripts of ``tests/test_pytorch/`` the CI runs: exit status 0;
* ``spawn_tests.py``'s 24 configurations (backend x grad x dynamic shape x function/module):
  one test each, passed when all three processes started at once exit 0 (``c`` answers the
  breakpoint ``depyf.debug()`` stops at);
* ``cmp_output.py``: its check of the files written against ``tests/depyf_output``;
* ``test_debug.py`` fed ``debug_input.txt``, then ``check_debug_output.py``: one test.
"""
from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
import xml.etree.ElementTree as ElementTree
from typing import Dict, List, Optional, Tuple

HERE = os.path.dirname(os.path.abspath(__file__))
SRC = os.path.join(os.path.dirname(HERE), "src")
SCRIPTS = ["python_coverage.py", "tests/test_code_owner.py", "tests/test_ensure.py", "tests/assert.py"]
TORCH_SCRIPTS = ["test_wrapper.py", "test_mp.py", "test_no_graph.py", "test_export.py", "test_irregular.py",
                 "test_simple_graph.py", "test_logging.py", "test_cellvars.py"]
PYTESTS = ["tests/test.py", "tests/test_advanced.py"]
TIMEOUT = 900


class Row:
    """One line of the table: a test file's passes out of its tests, with the failures' names."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.passed = 0
        self.total = 0
        self.failed: List[str] = []
        self.seconds = 0.0

    def add(self, ok: bool, what: str) -> None:
        self.total += 1
        self.passed += ok
        if not ok:
            self.failed.append(what)


def environment(which: str, work: str, python: str, deps: Optional[str], source: str) -> Dict[str, str]:
    env = dict(os.environ)
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    paths = []
    if which == "depyf":
        paths = [source] + ([deps] if deps else [])
    else:
        site_dir = os.path.join(work, "_site")
        subprocess.run([python, "-m", "framescope.depyf", "install", "--dir", site_dir], check=True,
                       env=dict(env, PYTHONPATH=SRC), stdout=subprocess.DEVNULL)
        # A sitecustomize that makes the folder a site folder, so that Python reads the .pth
        # file there, in every process the tests start.
        custom = os.path.join(work, "_custom")
        os.makedirs(custom)
        with open(os.path.join(custom, "sitecustomize.py"), "w") as handle:
            handle.write("import site\nsite.addsitedir(%r)\n" % site_dir)
        paths = [custom, SRC]
    env["PYTHONPATH"] = os.pathsep.join(paths + [p for p in [env.get("PYTHONPATH")] if p])
    return env


def run(command: List[str], work: str, env: Dict[str, str], stdin: Optional[str] = None,
        log: Optional[str] = None) -> Tuple[int, str]:
    try:
        done = subprocess.run(command, cwd=work, env=env, input=stdin, text=True, timeout=TIMEOUT,
                              stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
        status, output = done.returncode, done.stdout
    except subprocess.TimeoutExpired as err:
        status, output = -9, "timed out after %d s\n%s" % (TIMEOUT, err.stdout or "")
    if log:
        with open(log, "a") as handle:
            handle.write("$ %s\n%s\n[exit %d]\n" % (" ".join(command), output, status))
    return status, output


def pytest_row(name: str, python: str, work: str, env: Dict[str, str], log: str) -> Row:
    row = Row(name)
    report = os.path.join(work, "_junit_%s.xml" % os.path.basename(name))
    run([python, "-m", "pytest", "-q", "-p", "no:cacheprovider", "--junitxml=" + report, name], work, env, log=log)
    if not os.path.exists(report):
        row.add(False, "pytest did not run")
        return row
    for case in ElementTree.parse(report).iter("testcase"):
        bad = [child for child in case if child.tag in ("failure", "error")]
        skipped = any(child.tag == "skipped" for child in case)
        row.add(not bad and not skipped, case.get("name", "?"))
    return row


def script_row(name: str, python: str, work: str, env: Dict[str, str], log: str,
               extra: Optional[Dict[str, str]] = None) -> Row:
    row = Row(name)
    status, _ = run([python, name], work, dict(env, **(extra or {})), log=log)
    row.add(status == 0, "exit %d" % status)
    return row


def spawn_row(python: str, work: str, env: Dict[str, str], log: str) -> Row:
    """spawn_tests.py's configurations, three processes each at once, as it starts them."""
    row = Row("tests/test_pytorch/spawn_tests.py (24 configurations)")
    for backend in ("eager", "aot_eager", "inductor"):
        for grad in ("0", "1"):
            for dynamic in ("0", "1"):
                for kind in ("function", "module"):
                    config = dict(env, TORCH_COMPILE_BACKEND=backend, REQUIRES_GRAD=grad, DYNAMIC_SHAPE=dynamic,
                                  COMPILE_TYPE=kind, USAGE_TYPE="debug")
                    procs = [subprocess.Popen([python, "tests/test_pytorch/test_pytorch.py"], cwd=work, env=config,
                                              stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                              stderr=subprocess.STDOUT, text=True) for _ in range(3)]
                    outputs = [proc.communicate("c\n", timeout=TIMEOUT) for proc in procs]
                    name = "%s grad=%s dynamic=%s %s" % (backend, grad, dynamic, kind)
                    with open(log, "a") as handle:
                        for proc, (out, _) in zip(procs, outputs):
                            handle.write("$ spawn %s\n%s\n[exit %d]\n" % (name, out, proc.returncode))
                    row.add(all(proc.returncode == 0 for proc in procs), name)
    return row


def debug_row(python: str, work: str, env: Dict[str, str], log: str) -> Row:
    row = Row("tests/test_pytorch/test_debug.py + check_debug_output.py")
    with open(os.path.join(work, "tests/test_pytorch/debug_input.txt")) as handle:
        answers = handle.read()
    status, output = run([python, "tests/test_pytorch/test_debug.py"], work, env, stdin=answers, log=log)
    with open(os.path.join(work, "tests/test_pytorch/debug_output.txt"), "w") as handle:
        handle.write(output)
    check, _ = run([python, "tests/test_pytorch/check_debug_output.py"], work, env, log=log)
    row.add(status == 0 and check == 0, "exit %d, check exit %d" % (status, check))
    return row


def suite(which: str, source: str, python: str, deps: Optional[str], only: List[str], keep: bool) -> List[Row]:
    work = tempfile.mkdtemp(prefix="depyf-suite-%s-" % which)
    shutil.copytree(os.path.join(source, "tests"), os.path.join(work, "tests"))
    shutil.copy(os.path.join(source, "python_coverage.py"), work)
    env = environment(which, work, python, deps, source)
    log = os.path.join(work, "_log.txt")
    wanted = lambda name: not only or any(part in name for part in only)  # noqa: E731
    rows = []
    steps = [(name, lambda n=name: pytest_row(n, python, work, env, log)) for name in PYTESTS]
    steps += [(name, lambda n=name: script_row(n, python, work, env, log)) for name in SCRIPTS]
    for name in TORCH_SCRIPTS:
        extra = {"TORCH_LOGS": "+bytecode"} if name == "test_logging.py" else None
        path = "tests/test_pytorch/" + name
        steps.append((path, lambda n=path, e=extra: script_row(n, python, work, env, log, e)))
    steps += [("spawn_tests.py", lambda: spawn_row(python, work, env, log)),
              ("cmp_output.py", lambda: script_row("tests/test_pytorch/cmp_output.py", python, work, env, log)),
              ("test_debug.py", lambda: debug_row(python, work, env, log))]
    for name, step in steps:
        if wanted(name):
            start = time.perf_counter()
            row = step()
            row.seconds = time.perf_counter() - start
            rows.append(row)
            print("  %-10s %-58s %3d/%-3d %6.1f s" % (which, row.name, row.passed, row.total, row.seconds),
                  file=sys.stderr, flush=True)
    print("  %s: log in %s" % (which, log) if keep else "", file=sys.stderr)
    if not keep:
        shutil.rmtree(work, ignore_errors=True)
    return rows


def table(results: Dict[str, List[Row]]) -> str:
    names = list(results)
    lines = ["| test file | " + " | ".join(names) + " |", "|---|" + "---|" * len(names)]
    by_name = {which: {row.name: row for row in rows} for which, rows in results.items()}
    for name in [row.name for row in results[names[0]]]:
        cells = ["%d / %d" % (by_name[w][name].passed, by_name[w][name].total) if name in by_name[w] else "-"
                 for w in names]
        lines.append("| `%s` | %s |" % (name, " | ".join(cells)))
    totals = ["**%d / %d**" % (sum(r.passed for r in rows), sum(r.total for r in rows)) for rows in results.values()]
    lines.append("| all | %s |" % " | ".join(totals))
    for which, rows in results.items():
        for row in rows:
            for what in row.failed:
                lines.append("- %s fails %s: %s" % (which, row.name, what))
    return "\n".join(lines)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("source", help="a depyf source tree (with tests/ and python_coverage.py)")
    parser.add_argument("--python", default=sys.executable, help="interpreter with torch and pytest")
    parser.add_argument("--with", dest="which", default="depyf,framescope", help="depyf, framescope or both")
    parser.add_argument("--depyf-deps", help="a folder with depyf's requirements (astor, dill)")
    parser.add_argument("--only", default="", help="comma-separated parts of test file names to run")
    parser.add_argument("--keep", action="store_true", help="keep the working folders and their logs")
    args = parser.parse_args()
    args.python = shutil.which(args.python) or args.python
    args.python = os.path.abspath(args.python) if os.sep in args.python else args.python
    if not os.path.isfile(os.path.join(args.source, "tests", "test.py")):
        print("depyf_suite: error: %s is not a depyf source tree (no tests/test.py)" % args.source, file=sys.stderr)
        return 2
    version = subprocess.run([args.python, "-c", "import sys, torch; print('%d.%d' % sys.version_info[:2], "
                              "torch.__version__)"], capture_output=True, text=True)
    print("depyf's suite from %s, CPython %s" % (args.source, version.stdout.strip() or version.stderr.strip()[-200:]))
    results = {}
    for which in args.which.split(","):
        results[which] = suite(which, os.path.abspath(args.source), args.python, args.depyf_deps,
                               [part for part in args.only.split(",") if part], args.keep)
    print(table(results))
    return 0


if __name__ == "__main__":
    sys.exit(main())
