"""What to fix first in a program that uses torch.compile, ranked, from a dump.

A finding is one thing a user can change: a frame that reached torch's recompile limit
(from then on it runs uncompiled for new arguments: the costliest, since it is silent), the
recompiles of a frame on one argument, or one distinct graph break. Each costs the compile
time torch spent because of it (the entries a recompile made; the resume frame a break
started), which is how findings of one kind are ranked. ``framescope explain DIR`` prints
them with the recompiles and graph breaks; ``framescope run`` ends its summary with the top
three.
"""
from __future__ import annotations

from typing import Any, Dict, List, NamedTuple, Optional

from framescope.dump.records import Dump, GraphBreak, Recompile
from framescope.report.readable import guard_summary, skipped_frame, where
from framescope.torch_text import break_summary, resumed_name
from framescope.dump.index import cache_summary
from framescope.report.summary import (
    argument_changes, breaks_lines, compile_time, distinct_breaks, recompiles_lines, user_line,
)

# Ranks of the kinds of findings: a frame that stopped compiling comes before all others.
LIMIT, RECOMPILES, BREAK = 0, 1, 2

class Finding(NamedTuple):
    """One thing worth changing in the program."""

    #: LIMIT, RECOMPILES or BREAK.
    kind: int
    #: Compile seconds torch spent because of it (None where unknown).
    cost_s: Optional[float]
    #: What it is, on one line.
    title: str
    #: Where, ``file:line``, and the user's line there (None where unknown).
    place: str
    line: Optional[str]
    #: What to change, or None.
    advice: Optional[str]

    def record(self) -> Dict[str, Any]:
        return {"kind": ("recompile_limit", "recompiles", "graph_break")[self.kind],
                "cost_s": None if self.cost_s is None else round(self.cost_s, 3),
                "title": self.title, "place": self.place, "line": self.line, "advice": self.advice}


def findings(dump: Dump) -> List[Finding]:
    """Every finding, the most worth fixing first."""
    found = [limit_finding(dump, r) for r in dump.recompiles if r.limit]
    found += recompile_findings(dump)
    found += [break_finding(dump, brk, count) for brk, count in distinct_breaks(dump.graph_breaks)]
    return sorted(found, key=lambda f: (f.kind, -(f.cost_s or 0.0)))


def limit_finding(dump: Dump, recompile: Recompile) -> Finding:
    frame = dump.frame(recompile.frame)
    name = frame.qualname if frame else recompile.frame or "a frame"
    changes = argument_changes(dump, recompile)
    return Finding(
        LIMIT, compile_time(frame) if frame else None,
        "%s reached torch.compile's %s%s: calls that no cache entry accepts run without torch.compile"
        % (name, recompile.limit.name, " (%d)" % recompile.limit.value if recompile.limit.value else ""),
        where(recompile.filename, recompile.lineno),
        user_line(recompile.filename, recompile.lineno, recompile.source_line),
        next((change.advice for change in changes if change.advice), None))


def recompile_findings(dump: Dump) -> List[Finding]:
    """The recompiles (not refused ones) of each frame on the same guarded arguments, together."""
    groups: Dict[tuple, List[Recompile]] = {}
    for recompile in dump.recompiles:
        if not recompile.limit:
            names = tuple(change.name for change in argument_changes(dump, recompile))
            groups.setdefault((recompile.frame, names), []).append(recompile)
    found = []
    for (frame_id, names), members in groups.items():
        frame = dump.frame(frame_id)
        made = {r.entry for r in members}
        cost = sum(e.compile_time_s or 0.0 for e in frame.entries if e.index in made) if frame else None
        last = members[-1]
        advice = next((c.advice for c in argument_changes(dump, last) if c.advice), None)
        subject = " on " + ", ".join(names) if names else ": guard failed: " + guard_summary(last.reason)
        found.append(Finding(
            RECOMPILES, cost, "%s recompiled %s%s" % (
                frame.qualname if frame else frame_id, "once" if len(members) == 1 else "%d times" % len(members),
                subject),
            where(last.filename, last.lineno), user_line(last.filename, last.lineno, last.source_line), advice))
    return found


def break_finding(dump: Dump, brk: GraphBreak, count: int) -> Finding:
    resume = dump.frame(brk.resume)
    if resume is None and skipped_frame(brk):
        # Dynamo gave up on the whole frame: it runs uncompiled, every call.
        frame = dump.frame(brk.frame)
        name = frame.qualname if frame else resumed_name(brk.resume) or "a function"
        return Finding(
            LIMIT, None, "%s runs without torch.compile: Dynamo skipped the whole function at a graph break%s"
            % (name, " [%s]" % brk.gb_code if brk.gb_code else ""),
            where(brk.filename, brk.lineno), user_line(brk.filename, brk.lineno, brk.source_line),
            brk.hints[0] if brk.hints else None)
    return Finding(
        BREAK, compile_time(resume) if resume else None,
        "graph break%s: %s%s" % (" (%d compiles)" % count if count > 1 else "",
                                 "[%s] " % brk.gb_code if brk.gb_code else "", break_summary(brk.reason)),
        where(brk.filename, brk.lineno), user_line(brk.filename, brk.lineno, brk.source_line),
        brk.hints[0] if brk.hints else None)


def finding_lines(number: int, finding: Finding) -> List[str]:
    cost = "" if finding.cost_s is None else " (%.2f s compiling)" % finding.cost_s
    out = ["  %d. %s%s" % (number, finding.title, cost),
           "     %s%s" % (finding.place, ": " + finding.line if finding.line else "")]
    if finding.advice:
        out.append("     suggestion: " + finding.advice)
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
        out.append("nothing to fix: no recompiles, no graph breaks")
    else:
        out += ["", "worth fixing, most first:"]
        for number, finding in enumerate(found, 1):
            out += finding_lines(number, finding)
    out += recompiles_lines(dump) + breaks_lines(dump) + caches_lines(dump)
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
            "caches": [{"graph": graph.name, "frame": graph.frame, "caches": dict(graph.caches),
                        "reasons": dict(graph.cache_reasons), "saved_s": dict(graph.cache_saved_s)}
                       for graph in dump.graphs if graph.caches]}
