"""Which functions the round-trip benchmark checks: all, or a sample spread over the packages.

A sample is the same on every interpreter as far as each has the functions: a
function's rank is a hash of the seed, its file and its place in the file, so it
does not depend on what else the corpus holds. The wide corpus's list of
functions per file is kept per interpreter (``DIR/survey/``), since compiling
some ten thousand files takes longer than checking a small sample.
"""
from __future__ import annotations

import hashlib
import json
import os
import platform
import sys
from typing import Dict, List, Optional, Set, Tuple


def rank(seed: int, name: str, key: tuple) -> str:
    """A function's place in the sample: a hash, so that it is the same on every interpreter."""
    return hashlib.sha1(("%d|%s|%r" % (seed, name, key)).encode("utf-8")).hexdigest()


def quotas(sizes: Dict[str, int], total: int) -> Dict[str, int]:
    """Share ``total`` out among packages as evenly as their sizes allow (small packages are taken whole)."""
    out = {}
    left = total
    order = sorted(sizes, key=lambda package: (sizes[package], package))
    for position, package in enumerate(order):
        out[package] = min(sizes[package], left // (len(order) - position))
        left -= out[package]
    return out


def sample(candidates: Dict[str, List[Tuple[str, tuple]]], size: Optional[int], seed: int
           ) -> Set[Tuple[str, tuple]]:
    """The (file, function key) pairs to check: all, or ``size`` of them spread over the packages."""
    if not size:
        return {item for items in candidates.values() for item in items}
    shares = quotas({package: len(items) for package, items in candidates.items()}, size)
    chosen: Set[Tuple[str, tuple]] = set()
    for package, items in candidates.items():
        ranked = sorted(items, key=lambda item: rank(seed, item[0], item[1]))
        chosen.update(ranked[:shares[package]])
    return chosen


class SurveyCache:
    """The function keys of each file (or False: it does not compile), for this interpreter.

    An entry holds while the file's size and modification time are the same.
    ``folder=None`` keeps nothing.
    """

    def __init__(self, folder: Optional[str]) -> None:
        self.path = None
        self.entries: Dict[str, list] = {}
        self.changed = False
        if folder is None:
            return
        version = "%s-%s%s" % (platform.python_implementation(), platform.python_version(),
                               "-" + sys.platform if sys.platform == "emscripten" else "")
        self.path = os.path.join(folder, version + ".json")
        try:
            with open(self.path, encoding="utf-8") as handle:
                self.entries = json.load(handle)
        except (OSError, ValueError):
            self.entries = {}

    @staticmethod
    def _stamp(path: str) -> List[int]:
        status = os.stat(path)
        return [status.st_size, int(status.st_mtime)]

    def get(self, name: str, path: str) -> object:
        """The keys recorded for ``name`` (tuples again), False, or None when not known."""
        entry = self.entries.get(name)
        if self.path is None or entry is None or entry[0] != self._stamp(path):
            return None
        if entry[1] is False:
            return False
        return [tuple(tuple(step) for step in key) for key in entry[1]]

    def put(self, name: str, path: str, keys: object) -> None:
        if self.path is not None:
            self.entries[name] = [self._stamp(path), keys]
            self.changed = True

    def save(self) -> None:
        if self.path is None or not self.changed:
            return
        os.makedirs(os.path.dirname(self.path), exist_ok=True)
        with open(self.path + ".tmp", "w", encoding="utf-8") as handle:
            json.dump(self.entries, handle)
        os.replace(self.path + ".tmp", self.path)
