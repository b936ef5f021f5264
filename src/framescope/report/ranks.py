"""The ranks of a distributed run side by side: where they compiled differently.

Ranks that compile differently stop meeting in their collectives: one rank recompiles,
breaks a graph or misses a cache where the others do not, and the job slows down or hangs.
Each rank's dump is compared with the first rank's (:func:`framescope.report.diff.compare`);
a difference is a divergence, told once with the ranks it holds on: a frame compiled on some
ranks only, a different number of entries, a different guard, transformed code or graph, a
graph break, recompile or failed compile on some ranks only, different cache results.

The indexes are written as compiles happen, so this works on the folder of a job that is
still running, or hangs.
"""
from __future__ import annotations

from typing import Any, Dict, List, Tuple

from framescope.dump.records import Dump, to_data
from framescope.report.diff import ADDED, CHANGED, REMOVED, Change, compare

__all__ = ["Divergence", "divergences", "divergence_lines", "divergence_records"]

# The kinds of differences, most telling first: what a rank compiled, then how.
_ORDER = ("frame", "failure", "graph_break", "recompile", "entry", "graph", "guard", "code", "graph_file", "caches")


class Divergence:
    """One difference between the first rank and some others."""

    def __init__(self, change: Change, reference: str) -> None:
        #: The difference, as the first rank against each of ``ranks``.
        self.change = change
        #: The first rank's name (``rank_0``).
        self.reference = reference
        #: The ranks where it holds (``rank_1``, ...).
        self.ranks: List[str] = []

    def text(self) -> str:
        """``f (prog.py:3) compiled on rank_1 only``: the difference in words, with its ranks."""
        change, on = self.change, ", ".join(self.ranks)
        detail = ": " + change.detail if change.detail else ""
        if change.change == ADDED:
            return "%s %s%s: on %s, not on %s" % (_noun(change.kind), change.what, detail, on, self.reference)
        if change.change == REMOVED:
            return "%s %s%s: on %s, not on %s" % (_noun(change.kind), change.what, detail, self.reference, on)
        return "%s %s differs on %s from %s%s" % (_noun(change.kind), change.what, on, self.reference, detail)


_NOUNS = {"frame": "frame", "entry": "cache entry", "guard": "guard of", "code": "transformed code of",
          "graph": "graph", "graph_file": "graph file", "caches": "compile caches of", "graph_break": "graph break",
          "recompile": "recompile", "failure": "failed compile"}


def _noun(kind: str) -> str:
    return _NOUNS.get(kind, kind)


def divergences(dumps: List[Tuple[str, Dump]]) -> List[Divergence]:
    """The differences between the first rank's dump and each other's, each with the ranks it
    holds on, what a rank compiled first."""
    if len(dumps) < 2:
        return []
    reference, first = dumps[0]
    found: Dict[Tuple[Any, ...], Divergence] = {}
    for name, dump in dumps[1:]:
        for change in compare(first, dump):
            key = (change.kind, change.change, change.what, change.detail, tuple(change.diff[2:]))
            found.setdefault(key, Divergence(change, reference)).ranks.append(name)
    order = {kind: number for number, kind in enumerate(_ORDER)}
    return sorted(found.values(), key=lambda d: (order.get(d.change.kind, len(order)), d.change.change != CHANGED))


def divergence_lines(dumps: List[Tuple[str, Dump]]) -> List[str]:
    """The text of the ranks' divergences, or that they compiled alike."""
    found = divergences(dumps)
    names = ", ".join(name for name, _dump in dumps)
    if not found:
        return ["ranks %s compiled alike: the same frames, entries, guards, graphs, breaks, recompiles and caches"
                % names]
    out = ["ranks diverge (%s against each of the others): %d difference%s"
           % (dumps[0][0], len(found), "" if len(found) == 1 else "s")]
    for number, divergence in enumerate(found, 1):
        out.append("  %d. %s" % (number, divergence.text()))
        out += ["       " + line for line in divergence.change.diff]
    return out


def divergence_records(dumps: List[Tuple[str, Dump]]) -> List[Dict[str, Any]]:
    """The divergences as data: each change with ``reference`` and ``ranks``."""
    return [dict(to_data(d.change), reference=d.reference, ranks=list(d.ranks)) for d in divergences(dumps)]
