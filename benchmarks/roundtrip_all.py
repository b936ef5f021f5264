"""Run the round-trip benchmark under every supported interpreter and print one table.

CPython 3.8-3.13 are taken from pyenv (the newest installed patch release
of each), with ``PYTHONPATH=src``; 3.14 runs in Pyodide under Node
(``benchmarks/pyodide_run.mjs``), installed into ``.pyodide/`` with npm when
absent.  Arguments this script does not know are passed to ``roundtrip.py``:

    python3 benchmarks/roundtrip_all.py --decompiler identity
    python3 benchmarks/roundtrip_all.py --versions 3.12,3.14 --limit 500
    python3 benchmarks/roundtrip_all.py --corpus wide --corpus-dir /work/corpus --sample 5000

A corpus folder given with ``--corpus-dir`` is mounted into Pyodide at its own path.
"""
from __future__ import annotations

import argparse
import glob
import json
import os
import shutil
import subprocess
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor
from typing import List, Optional, Tuple

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
sys.path[:0] = [HERE, os.path.join(REPO, "src")]

from roundtrip_report import format_packages, format_reasons, format_row, format_table  # noqa: E402

CPYTHONS = ["3.8", "3.9", "3.10", "3.11", "3.12", "3.13"]
PYODIDE = "3.14"
PYODIDE_PACKAGE = "pyodide@314.0.7"
PYODIDE_CACHE = os.path.join(REPO, ".pyodide")


def pyenv_root() -> str:
    try:
        out = subprocess.run(["pyenv", "root"], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                             universal_newlines=True, check=True).stdout.strip()
        if out:
            return out
    except (OSError, subprocess.CalledProcessError):
        pass
    return os.path.expanduser("~/.pyenv")


def find_cpython(version: str, root: str) -> Optional[str]:
    """The newest pyenv-installed CPython ``version``.x interpreter, or None."""
    found = []
    for folder in glob.glob(os.path.join(root, "versions", version + ".*")):
        patch = os.path.basename(folder)[len(version) + 1:]
        python = os.path.join(folder, "bin", "python")
        if patch.isdigit() and os.path.isfile(python):
            found.append((int(patch), python))
    return max(found)[1] if found else None


def ensure_pyodide() -> Optional[str]:
    """Install Pyodide into .pyodide/ if needed; None when ready, else why it is not."""
    if shutil.which("node") is None:
        return "node is not installed"
    if os.path.isfile(os.path.join(PYODIDE_CACHE, "node_modules", "pyodide", "pyodide.mjs")):
        return None
    if shutil.which("npm") is None:
        return "npm is not installed"
    os.makedirs(PYODIDE_CACHE, exist_ok=True)
    done = subprocess.run(["npm", "install", "--no-save", "--prefix", PYODIDE_CACHE, PYODIDE_PACKAGE],
                          stdout=subprocess.PIPE, stderr=subprocess.STDOUT, universal_newlines=True)
    if done.returncode != 0:
        return "npm install %s failed: %s" % (PYODIDE_PACKAGE, done.stdout.strip().splitlines()[-1:])
    return None


def corpus_dir(passed: List[str]) -> Optional[str]:
    """The --corpus-dir passed on to roundtrip.py, if any."""
    for position, argument in enumerate(passed):
        if argument.startswith("--corpus-dir="):
            return argument.split("=", 1)[1]
        if argument == "--corpus-dir" and position + 1 < len(passed):
            return passed[position + 1]
    return None


def run_one(version: str, command: List[str], json_path: str, timeout: int) -> Tuple[str, Optional[dict], str]:
    """Run one benchmark; (version, its row or None, what went wrong)."""
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [os.path.join(REPO, "src"), env.get("PYTHONPATH")]))
    try:
        done = subprocess.run(command, cwd=REPO, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                              universal_newlines=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return version, None, "timed out after %ds" % timeout
    if done.returncode != 0 or not os.path.isfile(json_path):
        tail = "\n".join(done.stdout.strip().splitlines()[-5:])
        return version, None, "exit status %d:\n%s" % (done.returncode, tail)
    with open(json_path) as handle:
        return version, json.load(handle), ""


def main(argv: Optional[List[str]] = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--versions", default=",".join(CPYTHONS + [PYODIDE]),
                        help="comma-separated versions to run (default: all of 3.8-3.14)")
    parser.add_argument("--jobs", type=int, default=2, help="benchmarks running at once (default 2)")
    parser.add_argument("--timeout", type=int, default=3600, help="seconds allowed per interpreter")
    parser.add_argument("--json", help="write all rows to this file")
    parser.add_argument("--top", type=int, default=5, help="entries of each ranking listed per version")
    args, passed = parser.parse_known_args(argv)
    versions = [v.strip() for v in args.versions.split(",") if v.strip()]

    root = pyenv_root()
    # Pyodide reads and writes only inside the mounted repository, so results go under .pyodide/.
    os.makedirs(PYODIDE_CACHE, exist_ok=True)
    scratch = tempfile.mkdtemp(prefix="roundtrip-", dir=PYODIDE_CACHE)
    jobs = []
    problems: List[Tuple[str, str]] = []
    for version in versions:
        json_path = os.path.join(scratch, version + ".json")
        script_args = passed + ["--json", os.path.relpath(json_path, REPO)]
        if version == PYODIDE:
            why = ensure_pyodide()
            if why:
                problems.append((version, why))
                continue
            command = ["node", os.path.join(HERE, "pyodide_run.mjs"), "benchmarks/roundtrip.py"] + script_args
            if corpus_dir(passed):
                os.environ["PYODIDE_MOUNTS"] = os.path.abspath(corpus_dir(passed))
        else:
            python = find_cpython(version, root)
            if python is None:
                problems.append((version, "not installed under %s" % root))
                continue
            command = [python, os.path.join(HERE, "roundtrip.py")] + script_args
        jobs.append((version, command, json_path))

    with ThreadPoolExecutor(max_workers=max(1, args.jobs)) as pool:
        results = list(pool.map(lambda job: run_one(job[0], job[1], job[2], args.timeout), jobs))
    shutil.rmtree(scratch, ignore_errors=True)

    rows = [data for _, data, _ in results if data is not None]
    problems += [(version, why) for version, data, why in results if data is None]
    decompiler = rows[0]["decompiler"] if rows else "?"
    print("round trip, decompiler=%s" % decompiler)
    print(format_table([format_row(data) for data in rows]))
    for data in rows:
        print("\n%s:" % data["python"])
        if data.get("packages"):
            print(format_packages(data))
        print(format_reasons(data, args.top))
    for version, why in problems:
        print("\n%s: no result: %s" % (version, why))
    if args.json:
        with open(args.json, "w") as handle:
            json.dump(rows, handle, indent=1)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
