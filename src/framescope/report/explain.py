"""What to fix first in a program that uses torch.compile, ranked, from a dump.

A finding is one cause a user can change (see :mod:`framescope.report.findings`): a frame
that reached torch's recompile limit (from then on it runs uncompiled for new arguments: the
costliest, since it is silent) with the recompiles that led there, the recompiles on one
value across frames, or one graph break at one place, in whichever frames met it. Each
costs the compile time torch spent because of it (the entries the recompiles made; the
resume frames a break started), which is how findings of one kind are ranked; the program's
own findings come before those in library code. ``framescope explain DIR`` prints them with
the recompiles and graph breaks; ``framescope run`` ends its summary with the top three.
"""
from __future__ import annotations

from typing import Any, Dict, List

from framescope.dump.index import cache_summary
from framescope.dump.records import Dump, to_data
from framescope.report.findings import BREAK, FAILED, LIMIT, RECOMPILES, Covered, Finding, findings
from framescope.report.summary import breaks_lines, failures_lines, recompiles_lines

__all__ = ["BREAK", "FAILED", "LIMIT", "RECOMPILES", "Covered", "Finding", "explain_record", "findings", "format_explain",
           "worth_fixing_lines"]


def finding_lines(number: int, finding: Finding) -> List[str]:
    """A finding: its title and cost, its place (library code says whose), the frames it
    covers where more than one, and the suggestion."""
    cost = "" if finding.cost_s is None else " (%.2f s compiling)" % finding.cost_s
    out = ["  %d. %s%s" % (number, finding.title, cost),
           "     %s%s%s" % (finding.place, " (library: %s)" % finding.package if finding.library else "",
                            ": " + finding.line if finding.line else "")]
    if len(finding.frames) > 1 or any(covered.limit for covered in finding.frames):
        out.append("     in " + finding.frames_text())
    if finding.advice:
        out.append("     suggestion: " + finding.advice)
    elif finding.note:
        out.append("     " + finding.note)
    return out


def worth_fixing_lines(dump: Dump, most: int = 3) -> List[str]:
    """The summary's last section: the ``most`` findings most worth fixing."""
    found = findings(dump)[:most]
    if not found:
        return []
    out = ["", "worth fixing first:"]
    for number, finding in enumerate(found, 1):
        out += finding_lines(number, finding)
    return out


def format_explain(dump: Dump) -> str:
    """``framescope explain``'s text: every finding, ranked, then the recompiles and breaks."""
    found = findings(dump)
    out = ["framescope explain: %s" % dump.path]
    if not found:
        out.append("nothing to fix: no failed compiles, no recompiles, no graph breaks")
    else:
        out += ["", "worth fixing, most first:"]
        for number, finding in enumerate(found, 1):
            out += finding_lines(number, finding)
    out += failures_lines(dump) + recompiles_lines(dump) + breaks_lines(dump) + caches_lines(dump)
    return "\n".join(out)


def caches_lines(dump: Dump) -> List[str]:
    """The compile caches: each graph served from a cache or compiled cold, with torch's
    reason for a miss or a bypass."""
    cached = [graph for graph in dump.graphs if graph.caches]
    if not cached:
        return []
    out = ["", "compile caches:"]
    for graph in cached:
        frame = dump.frame(graph.frame)
        out.append("  %s (%s): %s" % (graph.name, frame.qualname if frame else "?", cache_summary(graph)))
    return out


def explain_record(dump: Dump) -> Dict[str, Any]:
    """``framescope explain --json``: the findings, ranked, as plain data, and what the
    compile caches did per graph."""
    return {"dump": dump.path, "findings": [finding.record() for finding in findings(dump)],
            "failures": [to_data(failure) for failure in dump.failures],
            "caches": [{"graph": graph.name, "frame": graph.frame, "caches": dict(graph.caches),
                        "reasons": dict(graph.cache_reasons), "saved_s": dict(graph.cache_saved_s)}
                       for graph in dump.graphs if graph.caches]}
