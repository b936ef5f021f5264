"""Round-trip every standard-library source file through framescope's AST printer.

Each ``.py`` file of the running interpreter's standard library (a folder, or the zip
archive Pyodide uses) is parsed, printed with ``framescope.decompiler.emit.unparse.unparse``
and parsed again; the file passes when ``ast.dump`` of both trees is equal. Files the
running interpreter cannot parse (test data with deliberate syntax errors, sources for
other versions) are counted as skipped.

Run with ``PYTHONPATH=src python benchmarks/unparse_stdlib.py [--root DIR] [--show N]``.
"""
from __future__ import annotations

import argparse
import ast
import os
import sys
import time
import warnings
import zipfile
from typing import Iterator, List, Optional, Tuple

from framescope.decompiler.emit.unparse import unparse


def stdlib_root() -> str:
    """The folder (or zip archive, as in Pyodide) holding the standard library's sources."""
    return os.path.dirname(os.__file__)


def sources(root: str) -> Iterator[Tuple[str, bytes]]:
    """(name, source bytes) of every .py file under ``root``, sorted, site-packages left out."""
    if zipfile.is_zipfile(root):
        with zipfile.ZipFile(root) as archive:
            for name in sorted(archive.namelist()):
                if name.endswith(".py") and "site-packages/" not in name:
                    yield name, archive.read(name)
        return
    paths = []
    for folder, dirs, files in os.walk(root):
        dirs[:] = [d for d in dirs if d not in ("site-packages", "__pycache__")]
        paths.extend(os.path.join(folder, f) for f in files if f.endswith(".py"))
    for path in sorted(paths):
        with open(path, "rb") as handle:
            yield os.path.relpath(path, root), handle.read()


def first_difference(before: str, after: str) -> str:
    """A short excerpt of two ``ast.dump`` strings around where they first differ."""
    index = next((i for i, (a, b) in enumerate(zip(before, after)) if a != b), min(len(before), len(after)))
    start = max(0, index - 60)
    return "%r != %r" % (before[start : index + 60], after[start : index + 60])


def check(source: bytes) -> Tuple[str, Optional[str], float]:
    """('ok' | 'failed' | 'skipped', reason, seconds spent printing) for one file."""
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError):
        return "skipped", None, 0.0
    start = time.perf_counter()
    try:
        text = unparse(tree)
    except (ValueError, RecursionError) as error:
        return "failed", "unparse: %s: %s" % (type(error).__name__, error), time.perf_counter() - start
    seconds = time.perf_counter() - start
    try:
        again = ast.parse(text)
    except SyntaxError as error:
        line = (error.text or "").strip()
        return "failed", "output does not parse: %s at line %s: %s" % (error.msg, error.lineno, line), seconds
    before, after = ast.dump(tree), ast.dump(again)
    if before != after:
        return "failed", "tree differs: " + first_difference(before, after), seconds
    return "ok", None, seconds


def main(argv: Optional[List[str]] = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--root", default=stdlib_root(), help="folder or zip of sources (default: the stdlib)")
    parser.add_argument("--show", type=int, default=10, help="failures to list (default 10)")
    options = parser.parse_args(argv)
    # Old test files trip invalid-escape and similar warnings while parsing.
    warnings.simplefilter("ignore")
    counts = {"ok": 0, "failed": 0, "skipped": 0}
    failures = []
    printing = 0.0
    began = time.perf_counter()
    for name, source in sources(options.root):
        outcome, reason, seconds = check(source)
        counts[outcome] += 1
        printing += seconds
        if reason is not None:
            failures.append((name, reason))
    total = time.perf_counter() - began
    parsed = counts["ok"] + counts["failed"]
    version = "%d.%d.%d" % sys.version_info[:3]
    print("python   files  skipped      ok  failed   ok%   unparse s   total s")
    print(
        "%-7s %6d %8d %7d %7d %6.2f %11.2f %9.2f"
        % (
            version,
            parsed + counts["skipped"],
            counts["skipped"],
            counts["ok"],
            counts["failed"],
            100.0 * counts["ok"] / parsed if parsed else 100.0,
            printing,
            total,
        )
    )
    for name, reason in failures[: options.show]:
        print("FAIL %s: %s" % (name, reason[:400]))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
