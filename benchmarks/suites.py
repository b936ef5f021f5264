"""Packages' own test suites, run from framescope's decompiled modules: do the outcomes change?

Each package of ``SUITES`` (a pinned source distribution: its code and its tests) is copied
twice. In one copy every ``.py`` file of the package and of its tests is compiled and
replaced by ``decompile_parts(code)``'s source (the module, decompiled and checked as a
whole; a function that cannot be decompiled becomes a stub of the same signature that
raises ``NotImplementedError``). The test suite then runs in both copies, each in its own
``pytest`` process, with the running interpreter, and the outcome of every test (passed,
failed, error, skipped) is compared by test id.

    python3 benchmarks/suites.py fetch [--dir DIR]
    PYTHONPATH=src .venvs/3.11/bin/python benchmarks/suites.py run [--dir DIR] [--only click]
                                                                 [--json F] [--keep DIR]

The table: modules decompiled, ``def`` functions in them, functions written as stubs,
modules that could not be decompiled at all (left as their source, and listed), tests run,
tests that pass from the source, tests whose outcome differs, and of those the ones whose
failure names a stub (a refusal, an honest one) and the others (wrong code: none may be).
Tests that need something not installed are skipped alike in both runs.
"""
from __future__ import annotations

import argparse
import hashlib
import json
import os
import shutil
import subprocess
import sys
import tarfile
import tempfile
import time
import xml.etree.ElementTree as ET
from pathlib import Path
from types import CodeType
from typing import Any, Dict, Iterator, List, NamedTuple, Optional, Tuple

HERE = Path(__file__).resolve().parent
REPO = HERE.parent


class Suite(NamedTuple):
    """One package whose source distribution carries its test suite."""

    #: The distribution's name and version on PyPI.
    name: str
    version: str
    #: sha256 of the source distribution, checked by ``fetch``.
    sha256: str
    #: Folders of the unpacked distribution whose modules are decompiled.
    folders: Tuple[str, ...]
    #: Folder (or file) of the tests, given to pytest; decompiled too when it is in ``folders``.
    tests: str
    #: Where the package is imported from, put on PYTHONPATH ("." for the top).
    path: str = "."
    #: Extra pytest options.
    options: Tuple[str, ...] = ()

    @property
    def label(self) -> str:
        return "%s-%s" % (self.name, self.version)


# Pure-Python packages that support CPython 3.8 and whose tests need only pytest.
SUITES = [
    Suite("click", "8.1.7", "ca9853ad459e787e2192211578cc907e7594e294c7ccc834310722b41b9ca6de",
          ("src/click", "tests"), "tests", path="src",
          # its settings make every warning an error, a newer pytest's deprecations included
          options=("-o", "filterwarnings=ignore::DeprecationWarning")),
    Suite("more-itertools", "10.5.0", "5482bfef7849c25dc3c6dd53a6173ae4795da2a41a80faea6700d9f5846c5da6",
          ("more_itertools", "tests"), "tests"),
    Suite("toolz", "1.0.0", "2c86e3d9a04798ac556793bced838816296a2f085017664e4995cb40a1047a02",
          ("toolz", "tlz"), "toolz/tests"),
]


def default_dir() -> Path:
    return Path(os.environ.get("FRAMESCOPE_SUITES") or os.path.expanduser("~/.cache/framescope/suites"))


# --------------------------------------------------------------------------- fetch


def sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with open(str(path), "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def fetch(suite: Suite, folder: Path) -> Path:
    """The unpacked source distribution of ``suite``, downloaded and checked once."""
    unpacked = folder / "src" / suite.label
    if (unpacked / ".unpacked").exists():
        return unpacked
    sdists = folder / "sdists"
    sdists.mkdir(parents=True, exist_ok=True)
    subprocess.run([sys.executable, "-m", "pip", "download", "--quiet", "--no-deps", "--no-binary", ":all:",
                    "-d", str(sdists), "%s==%s" % (suite.name, suite.version)], check=True)
    archive = next(path for path in sdists.iterdir()
                   if path.name.lower().replace("_", "-").startswith(suite.label.lower()))
    found = sha256(archive)
    if found != suite.sha256:
        raise SystemExit("%s: sha256 %s, expected %s" % (archive.name, found, suite.sha256))
    shutil.rmtree(str(unpacked), ignore_errors=True)
    with tarfile.open(str(archive)) as tar, tempfile.TemporaryDirectory() as scratch:
        tar.extractall(scratch)
        (top,) = Path(scratch).iterdir()
        shutil.move(str(top), str(unpacked))
    (unpacked / ".unpacked").write_text("")
    return unpacked


# --------------------------------------------------------------------------- decompile a copy


class Decompiled(NamedTuple):
    """What decompiling one copy's modules gave."""

    modules: int
    functions: int
    #: "file:qualname: reason" for each function written as a stub.
    stubs: List[str]
    #: "file: reason" for each module left as its source.
    failed: List[str]
    seconds: float


def python_files(root: Path, folders: Tuple[str, ...]) -> Iterator[Path]:
    for folder in folders:
        top = root / folder
        yield from sorted([top] if top.is_file() else top.rglob("*.py"))


def count_functions(code: CodeType) -> int:
    inner = [const for const in code.co_consts if isinstance(const, CodeType)]
    own = 1 if code.co_name[:1] != "<" and code.co_flags & 0x2 else 0  # CO_NEWLOCALS: a function
    return own + sum(count_functions(const) for const in inner)


def decompile_copy(root: Path, folders: Tuple[str, ...]) -> Decompiled:
    """Replace every module under ``folders`` of ``root`` by its decompiled source."""
    from framescope import DecompilationError
    from framescope.decompiler.api import decompile_parts

    modules = functions = 0
    stubs: List[str] = []
    failed: List[str] = []
    began = time.perf_counter()
    for path in python_files(root, folders):
        name = str(path.relative_to(root))
        source = path.read_text(encoding="utf-8")
        try:
            code = compile(source, str(path), "exec", dont_inherit=True)
        except SyntaxError:
            continue  # a file for another Python version: pytest will not import it either
        modules += 1
        functions += count_functions(code)
        try:
            text, refused = decompile_parts(code)
        except DecompilationError as error:
            failed.append("%s: %s" % (name, " ".join(error.reason.split())))
            continue
        stubs += ["%s:%s: %s" % (name, refusal.qualname, " ".join(refusal.reason.split())) for refusal in refused]
        path.write_text(text + "\n", encoding="utf-8")
    return Decompiled(modules, functions, stubs, failed, time.perf_counter() - began)


# --------------------------------------------------------------------------- run a suite


def outcomes(report: Path) -> Dict[str, Tuple[str, str]]:
    """Each test's outcome and first line of message, from pytest's JUnit XML."""
    found: Dict[str, Tuple[str, str]] = {}
    if not report.exists():
        return found
    for case in ET.parse(str(report)).getroot().iter("testcase"):
        test = "%s::%s" % (case.get("classname"), case.get("name"))
        outcome, message = "passed", ""
        for child in case:
            if child.tag in ("failure", "error", "skipped"):
                outcome = {"failure": "failed"}.get(child.tag, child.tag)
                message = " ".join(((child.get("message") or "") + " " + (child.text or "")).split())
                break
        found[test] = (outcome, message)
    return found


def run_suite(suite: Suite, root: Path, report: Path) -> Tuple[Dict[str, Tuple[str, str]], float, str]:
    env = dict(os.environ, PYTHONPATH=str(root / suite.path), PYTHONDONTWRITEBYTECODE="1")
    env.pop("PYTHONHASHSEED", None)
    command = [sys.executable, "-m", "pytest", suite.tests, "-q", "-p", "no:cacheprovider", "-o", "addopts=",
               "--junitxml", str(report)] + list(suite.options)
    began = time.perf_counter()
    done = subprocess.run(command, cwd=str(root), env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                          universal_newlines=True)
    tail = done.stdout.strip().splitlines()[-1:] or ["exit %d" % done.returncode]
    return outcomes(report), time.perf_counter() - began, tail[0]


def compare(suite: Suite, unpacked: Path, work: Path) -> Dict[str, Any]:
    original, decompiled = work / "original", work / "decompiled"
    for copy in (original, decompiled):
        shutil.rmtree(str(copy), ignore_errors=True)
        shutil.copytree(str(unpacked), str(copy))
    made = decompile_copy(decompiled, suite.folders)
    before, seconds_before, summary_before = run_suite(suite, original, work / "original.xml")
    after, seconds_after, summary_after = run_suite(suite, decompiled, work / "decompiled.xml")
    changed = []
    for test in sorted(set(before) | set(after)):
        was, now = before.get(test, ("missing", "")), after.get(test, ("missing", ""))
        if was[0] != now[0]:
            changed.append({"test": test, "source": was[0], "decompiled": now[0], "message": now[1][:300]})
    by_stub = [row for row in changed if "framescope could not decompile" in row["message"]]
    return {
        "package": suite.label, "modules": made.modules, "functions": made.functions, "stubs": made.stubs,
        "failed_modules": made.failed, "decompile_seconds": round(made.seconds, 1),
        "tests": len(before), "passed": sum(1 for outcome, _ in before.values() if outcome == "passed"),
        "changed": changed, "changed_by_stub": len(by_stub), "changed_otherwise": len(changed) - len(by_stub),
        "summary_source": summary_before, "summary_decompiled": summary_after,
        "seconds": [round(seconds_before, 1), round(seconds_after, 1)],
    }


# --------------------------------------------------------------------------- report


COLUMNS = ("package", "modules", "functions", "stubs", "modules left", "internal", "tests", "passed", "changed",
           "by a stub", "otherwise")

#: How a failure inside the decompiler reads in a stub's or a module's reason (see
#: DecompilationError.internal): counted apart from the refusals among them.
INTERNAL = "internal error ("


def table(rows: List[Dict[str, Any]]) -> str:
    lines = ["| " + " | ".join(COLUMNS) + " |", "|" + "---|" * len(COLUMNS)]
    for row in rows:
        internal = sum(INTERNAL in line for line in row["stubs"] + row["failed_modules"])
        cells = [row["package"], row["modules"], row["functions"], len(row["stubs"]), len(row["failed_modules"]),
                 internal, row["tests"], row["passed"], len(row["changed"]), row["changed_by_stub"], row["changed_otherwise"]]
        lines.append("| " + " | ".join(str(cell) for cell in cells) + " |")
    return "\n".join(lines)


def details(rows: List[Dict[str, Any]]) -> str:
    out = []
    for row in rows:
        for line in row["failed_modules"]:
            out.append("%s: module left as source: %s" % (row["package"], line))
        for line in row["stubs"]:
            out.append("%s: stub: %s" % (row["package"], line))
        for change in row["changed"]:
            out.append("%s: %s: %s -> %s %s" % (row["package"], change["test"], change["source"],
                                                change["decompiled"], change["message"][:160]))
    return "\n".join(out)


def main(argv: List[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("action", choices=("fetch", "run"))
    parser.add_argument("--dir", type=Path, default=default_dir(), help="where the source distributions go")
    parser.add_argument("--only", default="", help="comma-separated package names")
    parser.add_argument("--json", type=Path, help="write the rows here")
    parser.add_argument("--keep", type=Path, help="keep the two copies of each package here")
    args = parser.parse_args(argv)
    chosen = [suite for suite in SUITES if not args.only or suite.name in args.only.split(",")]
    if args.action == "fetch":
        for suite in chosen:
            print(fetch(suite, args.dir))
        return 0
    sys.path.insert(0, str(REPO / "src"))
    rows = []
    with tempfile.TemporaryDirectory() as scratch:
        for suite in chosen:
            work = (args.keep or Path(scratch)) / suite.label
            work.mkdir(parents=True, exist_ok=True)
            row = compare(suite, fetch(suite, args.dir), work)
            print("%s: source: %s; decompiled: %s" % (suite.label, row["summary_source"], row["summary_decompiled"]),
                  flush=True)
            rows.append(row)
    print("CPython %s" % sys.version.split()[0])
    print(table(rows))
    print(details(rows))
    if args.json:
        args.json.write_text(json.dumps(rows, indent=1))
    return 1 if any(row["changed_otherwise"] for row in rows) else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
