"""The wide round-trip corpus: the pure-Python sources of popular packages.

The packages and their pinned versions are listed in ``corpus_packages.txt``
next to this script. ``fetch`` downloads each wheel with pip (``--no-deps``,
wheels preferred) into ``DIR/wheels``, checks it against the hash recorded in
the list (``--record`` writes the hashes of a first download into it) and
unpacks its ``.py`` files, and nothing else, into ``DIR/src/NAME-VERSION``.
Nothing is imported or installed: ``roundtrip.py --corpus wide`` reads and
compiles the files.

    python3 benchmarks/corpus.py fetch --dir /work/corpus
    python3 benchmarks/corpus.py stats --dir /work/corpus     # files and functions per package

The directory defaults to ``$FRAMESCOPE_CORPUS``, else ``~/.cache/framescope/corpus``.
"""
from __future__ import annotations

import argparse
import hashlib
import os
import re
import subprocess
import sys
import warnings
import zipfile
from types import CodeType
from typing import Iterator, List, NamedTuple, Optional, Tuple

HERE = os.path.dirname(os.path.abspath(__file__))
PACKAGE_LIST = os.path.join(HERE, "corpus_packages.txt")
_DONE = ".unpacked"


class Package(NamedTuple):
    """One line of the package list."""

    name: str
    version: str
    #: Folders of the wheel that count, each reported as a package of its own; () for all.
    folders: Tuple[str, ...]
    #: The wheel's recorded sha256, or "" when none is recorded yet.
    sha256: str

    @property
    def label(self) -> str:
        return "%s-%s" % (self.name, self.version)


def default_dir() -> str:
    return os.environ.get("FRAMESCOPE_CORPUS") or os.path.expanduser("~/.cache/framescope/corpus")


def read_list(path: str = PACKAGE_LIST) -> List[Package]:
    packages = []
    with open(path, encoding="utf-8") as handle:
        for line in handle:
            fields = line.split("#", 1)[0].split()
            if not fields:
                continue
            name, _, version = fields[0].partition("==")
            if not version:
                raise ValueError("%s: %r is not pinned (NAME==VERSION)" % (path, fields[0]))
            hashes = [field[len("sha256="):] for field in fields[1:] if field.startswith("sha256=")]
            folders = tuple(field.strip("/") for field in fields[1:] if not field.startswith("sha256="))
            packages.append(Package(name, version, folders, hashes[0] if hashes else ""))
    return packages


def _normal(name: str) -> str:
    return re.sub(r"[-_.]+", "_", name).lower()


def find_wheel(folder: str, package: Package) -> Optional[str]:
    """The downloaded wheel of ``package`` in ``folder`` (names compared as pip does), or None.

    A local version label counts as the same version: torch's CPU wheel is 2.13.0+cpu.
    """
    if not os.path.isdir(folder):
        return None
    for entry in sorted(os.listdir(folder)):
        fields = entry.split("-")
        if entry.endswith(".whl") and len(fields) >= 3 and _normal(fields[0]) == _normal(package.name) \
                and fields[1].split("+")[0] == package.version:
            return os.path.join(folder, entry)
    return None


def sha256(path: str) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def download(package: Package, wheels: str) -> str:
    wheel = find_wheel(wheels, package)
    if wheel is None:
        command = [sys.executable, "-m", "pip", "download", "--no-deps", "--prefer-binary", "--quiet",
                   "%s==%s" % (package.name, package.version), "-d", wheels]
        subprocess.run(command, check=True)
        wheel = find_wheel(wheels, package)
    if wheel is None:
        raise RuntimeError("pip downloaded no wheel of %s (an sdist only?)" % package.label)
    return wheel


def wanted(member: str, folders: Tuple[str, ...]) -> bool:
    """Whether a wheel member is a source file of the corpus."""
    if not member.endswith(".py"):
        return False
    top = member.split("/", 1)[0]
    if top.endswith(".dist-info") or top.endswith(".data"):
        return False
    return not folders or any(member.startswith(folder + "/") for folder in folders)


def unpack(wheel: str, package: Package, target: str) -> int:
    """Write the wheel's source files under ``target``; how many."""
    count = 0
    with zipfile.ZipFile(wheel) as archive:
        for member in archive.namelist():
            if not wanted(member, package.folders) or ".." in member.split("/"):
                continue
            path = os.path.join(target, *member.split("/"))
            os.makedirs(os.path.dirname(path), exist_ok=True)
            with open(path, "wb") as handle:
                handle.write(archive.read(member))
            count += 1
    with open(os.path.join(target, _DONE), "w") as handle:
        handle.write("%d\n" % count)
    return count


def fetch(directory: str, record: bool) -> int:
    packages = read_list()
    wheels = os.path.join(directory, "wheels")
    os.makedirs(wheels, exist_ok=True)
    recorded = {}
    problems = 0
    for package in packages:
        wheel = download(package, wheels)
        digest = sha256(wheel)
        recorded[package.label] = digest
        if package.sha256 and package.sha256 != digest:
            print("%s: %s has sha256 %s, the list says %s" % (package.label, wheel, digest, package.sha256))
            problems += 1
            continue
        target = os.path.join(directory, "src", package.label)
        if os.path.isfile(os.path.join(target, _DONE)):
            continue
        print("%s: %d source files" % (package.label, unpack(wheel, package, target)))
    if record:
        _record_hashes(recorded)
    return 1 if problems else 0


def _record_hashes(recorded: dict) -> None:
    """Write each wheel's hash into the package list, where it has none yet."""
    with open(PACKAGE_LIST, encoding="utf-8") as handle:
        lines = handle.readlines()
    out = []
    for line in lines:
        fields = line.split("#", 1)[0].split()
        label = fields[0].replace("==", "-") if fields else ""
        if label in recorded and "sha256=" not in line:
            line = line.rstrip("\n") + " sha256=%s\n" % recorded[label]
        out.append(line)
    with open(PACKAGE_LIST, "w", encoding="utf-8") as handle:
        handle.writelines(out)


class SourceFile(NamedTuple):
    """One file of the corpus."""

    #: The package it counts for: the package's name, or the folder named in the list.
    package: str
    #: Absolute path.
    path: str
    #: Path inside the wheel, with "/".
    name: str


def source_files(directory: str, packages: Optional[List[Package]] = None) -> Iterator[SourceFile]:
    """Every source file of the unpacked corpus, package by package, in a fixed order."""
    for package in packages if packages is not None else read_list():
        root = os.path.join(directory, "src", package.label)
        if not os.path.isfile(os.path.join(root, _DONE)):
            raise FileNotFoundError("%s is not unpacked: run `python3 benchmarks/corpus.py fetch --dir %s`"
                                    % (root, directory))
        for group in package.folders or ("",):
            base = os.path.join(root, *group.split("/")) if group else root
            for folder, subfolders, files in os.walk(base):
                subfolders.sort()
                for entry in sorted(files):
                    if entry.endswith(".py"):
                        path = os.path.join(folder, entry)
                        name = os.path.relpath(path, root).replace(os.sep, "/")
                        yield SourceFile(group or package.name, path, name)


def _count_functions(code: CodeType) -> int:
    count = 0
    for const in code.co_consts:
        if isinstance(const, CodeType):
            count += (const.co_flags & 3 == 3 and not const.co_name.startswith("<")) + _count_functions(const)
    return count


def stats(directory: str) -> int:
    """Files, files this interpreter cannot compile, and functions, per package."""
    rows = {}  # type: dict
    for item in source_files(directory):
        row = rows.setdefault(item.package, [0, 0, 0])
        row[0] += 1
        with open(item.path, "rb") as handle:
            data = handle.read()
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                row[2] += _count_functions(compile(data, item.path, "exec", dont_inherit=True))
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            row[1] += 1
    print("%-20s %7s %9s %9s" % ("package", "files", "rejected", "functions"))
    for package, (files, rejected, functions) in rows.items():
        print("%-20s %7d %9d %9d" % (package, files, rejected, functions))
    total = [sum(column) for column in zip(*rows.values())]
    print("%-20s %7d %9d %9d" % ("total", total[0], total[1], total[2]))
    return 0


def main(argv: Optional[List[str]] = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("command", choices=("fetch", "stats"))
    parser.add_argument("--dir", default=default_dir(), help="the corpus directory (default: %(default)s)")
    parser.add_argument("--record", action="store_true", help="fetch: write the hashes of new wheels into the list")
    args = parser.parse_args(argv)
    if args.command == "fetch":
        return fetch(args.dir, args.record)
    return stats(args.dir)


if __name__ == "__main__":
    sys.exit(main())
