"""The text summary ``framescope run`` prints: frames, recompiles, graph breaks, graphs."""
from __future__ import annotations

import re
from typing import Dict, List, NamedTuple, Optional, Tuple

from framescope.report.chart import phase_totals
from framescope.dump.index import cache_summary, entry_use
from framescope.dump.records import Dump, Failure, Frame, GraphBreak, Recompile
from framescope.report.readable import guard_summary, guarded_names, recompile_advice, skipped_frame, where
from framescope.report.source import source_line
from framescope.torch_text import break_summary, failed_guards, resumed_name


def plural(count: int, one: str, many: Optional[str] = None) -> str:
    return "%d %s" % (count, one if count == 1 else many or one + "s")


def compile_time(frame: Frame) -> Optional[float]:
    times = [entry.compile_time_s for entry in frame.entries if entry.compile_time_s is not None]
    return sum(times) if times else None


def seconds(value: Optional[float]) -> str:
    return "-" if value is None else "%.2f s" % value


def break_groups(breaks: List[GraphBreak]) -> List[List[GraphBreak]]:
    """Graph breaks by place and kind (torch's graph-break code, else its reason), across
    frames and compiles: a break inside a function that several compiled frames call is one.
    A break at which Dynamo gave up on the whole function is apart from those it resumed after."""
    groups: Dict[Tuple, List[GraphBreak]] = {}
    for brk in breaks:
        key = (brk.filename, brk.lineno, brk.gb_code or break_summary(brk.reason), skipped_frame(brk))
        groups.setdefault(key, []).append(brk)
    return list(groups.values())


def distinct_breaks(breaks: List[GraphBreak]) -> List[Tuple[GraphBreak, int]]:
    """Graph breaks by place and reason (a frame compiled again breaks again), with their counts."""
    counts: Dict[Tuple, List] = {}
    for brk in breaks:
        key = (brk.frame, brk.filename, brk.lineno, break_summary(brk.reason))
        counts.setdefault(key, [brk, 0])[1] += 1
    return [(brk, count) for brk, count in counts.values()]


def recompile_lines(dump: Dump, recompile: Recompile, shown: Optional[set] = None) -> List[str]:
    """A recompile: the failed guard, the user's line, the values involved and advice; or a
    recompile torch refused at its limit, and what that means for the program. torch's hints
    already in ``shown`` are left out (and those shown are added to it)."""
    frame = dump.frame(recompile.frame)
    name = frame.qualname if frame else recompile.frame or "<unknown frame>"
    entry = next((e for e in frame.entries if e.index == recompile.entry), None) if frame else None
    if recompile.limit:
        head = "  %s: torch.compile's %s%s was reached: guard failed: %s" % (
            name, recompile.limit.name, " (%d)" % recompile.limit.value if recompile.limit.value else "",
            guard_summary(recompile.reason))
    elif entry is None:
        head = "  %s%s, which made no cache entry: guard failed: %s" % (
            name, ", compile %s" % recompile.compile_id if recompile.compile_id else "",
            guard_summary(recompile.reason))
    else:
        head = "  %s, entry %s%s: guard failed: %s" % (
            name, recompile.entry, " (compile %s)" % entry.compile_id if entry.compile_id else "",
            guard_summary(recompile.reason))
    text = user_line(recompile.filename, recompile.lineno, recompile.source_line)
    lines = [head, "      %s%s" % (where(recompile.filename, recompile.lineno), ": " + text if text else "")]
    if recompile.limit:
        lines.append("      from now on, calls of %s that no cache entry accepts run without torch.compile" % name)
    changes = argument_changes(dump, recompile)
    for change in changes:
        lines.append("      " + change.text())
        if change.advice:
            lines.append("      suggestion: " + change.advice)
    shown = set() if shown is None else shown
    if not any(change.advice for change in changes):
        lines += ["      hint: " + hint for hint in recompile.hints if hint not in shown]
        shown.update(recompile.hints)
    return lines


class ArgumentChange(NamedTuple):
    """An argument a recompile's failed guard checks: its value then and before."""

    name: str
    #: The value the call that recompiled passed (None where not known).
    now: Optional[str]
    #: The values the earlier entries were compiled for, oldest first, without repeats.
    before: List[str]
    #: What to change so that it stops recompiling, or None.
    advice: Optional[str]

    def text(self) -> str:
        parts = ["called with %s = %s" % (self.name, self.now)] if self.now is not None else []
        if self.before:
            parts.append("compiled for %s = %s" % (self.name, ", ".join(self.before[-5:])))
        return "; ".join(parts)


def argument_changes(dump: Dump, recompile: Recompile) -> List[ArgumentChange]:
    """The arguments a recompile's failed guard checks, from what the frame was called with."""
    frame = dump.frame(recompile.frame)
    if frame is None:
        return []
    entry = next((e for e in frame.entries if e.index == recompile.entry), None)
    earlier = [e for e in frame.entries if recompile.entry is None or e.index < recompile.entry]
    args = entry.arguments if entry else recompile.arguments
    known = list(args) or list(dict.fromkeys(name for e in earlier for name in e.arguments))
    changes = []
    for name in guarded_names(recompile.reason, known):
        before = list(dict.fromkeys(e.arguments[name]["value"] for e in earlier if name in e.arguments))
        now = args.get(name)
        kind = (now or next((e.arguments[name] for e in earlier if name in e.arguments), {})).get("type", "")
        attribute = attribute_values(recompile.reason, name)
        if attribute and all(opaque(value) for value in before + ([now["value"]] if now else [])):
            # An object shown by its type only: the attribute the guard compares says more.
            changes.append(ArgumentChange(attribute[0], None, attribute[1], None))
            continue
        changes.append(ArgumentChange(name, now["value"] if now else None, before,
                                      recompile_advice(recompile.reason, name, kind)))
    return changes


def opaque(value: str) -> bool:
    """Whether an argument's value is shown by its type only (``<Warmup>``)."""
    return value.startswith("<") and value.endswith(">")


def attribute_values(reason: str, name: str) -> Optional[Tuple[str, List[str]]]:
    """(``self.k``, the values the entries were compiled for, oldest first) where a
    recompile's failed guards compare an attribute of ``name`` with values."""
    pattern = re.compile(r"^(%s(?:\.[A-Za-z_]\w*)+) == (.+)$" % re.escape(name))
    path, values = None, []
    for guard in reversed(failed_guards(reason)):
        match = pattern.match(guard.text)
        if match and path in (None, match.group(1)):
            path = match.group(1)
            values.append(match.group(2).strip())
    return (path, list(dict.fromkeys(values))) if path else None


def user_line(filename: Optional[str], lineno: Optional[int], text: Optional[str]) -> Optional[str]:
    text = text if text is not None else source_line(filename, lineno)
    return text.strip() if text and text.strip() else None


def format_summary(dump: Dump, report: Optional[str] = None) -> str:
    """The summary as lines of text (no trailing newline)."""
    from framescope.report.explain import worth_fixing_lines

    out = [totals_line(dump)]
    out += frames_lines(dump) + failures_lines(dump) + recompiles_lines(dump) + breaks_lines(dump) + graphs_lines(dump)
    if dump.warnings:
        out += ["", "warnings:"] + ["  - " + " ".join(w.split()) for w in dump.warnings]
    out += worth_fixing_lines(dump)
    out += ["", "dump:   " + dump.path]
    if report:
        out.append("report: " + report)
    return "\n".join(out)


def counts(dump: Dump) -> str:
    """``3 compiled frames, 4 cache entries, 1 recompile, 2 graph breaks, 5 graphs``: a
    recompile torch refused at its limit is no recompile, and a graph break is counted once
    for all the frames and compiles that met it. The summary and the report say the same."""
    entries = sum(len(frame.entries) for frame in dump.frames)
    recompiles = sum(1 for recompile in dump.recompiles if not recompile.limit)
    return "%s, %s, %s, %s, %s" % (
        plural(len(dump.frames), "compiled frame"), plural(entries, "cache entry", "cache entries"),
        plural(recompiles, "recompile"), plural(len(break_groups(dump.graph_breaks)), "graph break"),
        plural(len(dump.graphs), "graph"))


def totals_line(dump: Dump) -> str:
    """The summary's first line: the dump's counts, compile time and what else stands out."""
    total = sum(t for t in (compile_time(frame) for frame in dump.frames) if t is not None)
    line = "framescope: %s; %.2f s compiling" % (counts(dump), total)
    return line + "".join("; " + part for part in extra_totals(dump))


def extra_totals(dump: Dump) -> List[str]:
    """What the totals line adds where there is something to say: frames at the recompile
    limit, entries compiled before the dump, graphs served from the compile caches, calls
    that missed every entry, functions torch.compiler.precompile captured."""
    parts = []
    limited = list(dict.fromkeys(recompile.frame for recompile in dump.recompiles if recompile.limit))
    if limited:
        parts.append("%s reached the recompile limit" % plural(len(limited), "frame"))
    before = sum(1 for frame in dump.frames for entry in frame.entries if entry.compiled_before_dump)
    if before:
        parts.append("%s compiled before the dump began" % plural(before, "entry", "entries"))
    cached = [graph for graph in dump.graphs if graph.served_from_cache()]
    if cached:
        saved = sum(sum(graph.cache_saved_s.values()) for graph in cached)
        parts.append("%s served from the compile cache%s" % (
            plural(len(cached), "graph"), " (%.2f s of compiling saved)" % saved if saved else ""))
    if dump.calls_missed:
        parts.append("%s missed every cache entry" % plural(dump.calls_missed, "call"))
    if dump.failures:
        parts.append("%s failed" % plural(len(dump.failures), "compile"))
    if dump.precompiled:
        parts.append("%s captured by torch.compiler.precompile (%s)" % (
            plural(len(dump.precompiled), "function"), ", ".join(item.file or item.function for item in dump.precompiled)))
    return parts


def frames_lines(dump: Dump) -> List[str]:
    if not dump.frames:
        return []
    out = ["", "frames:"]
    width = max(len(frame.qualname) for frame in dump.frames)
    places = max(len(where(frame.filename, frame.firstlineno)) for frame in dump.frames)
    for frame in dump.frames:
        graphs = sum(len(entry.graphs) for entry in frame.entries)
        line = "  %-*s  %-*s  %s, %s, %s compiling" % (
            width, frame.qualname, places, where(frame.filename, frame.firstlineno),
            plural(len(frame.entries), "cache entry", "cache entries"), plural(graphs, "graph"),
            seconds(compile_time(frame)))
        if frame.resume_of:
            parent = dump.frame(frame.resume_of)
            line += "; resumes %s%s" % (parent.qualname if parent else frame.resume_of,
                                        " at line %d" % frame.resume_line if frame.resume_line else "")
        out.append(line)
        phases = phases_text(frame)
        if phases:
            out.append("      " + phases)
        uses = ["entry %d: %s" % (entry.index, entry_use(entry)) for entry in frame.entries if entry_use(entry)]
        if uses:
            out.append("      " + "; ".join(uses))
    return out


PHASE_NAMES = (("dynamo", "Dynamo"), ("aot", "AOTAutograd"), ("inductor", "Inductor"), ("codegen", "codegen"))


def phases_text(frame: Frame) -> str:
    """``Dynamo 0.31 s, AOTAutograd 0.50 s, Inductor 1.20 s, codegen 0.40 s`` over the frame's
    entries; "" when torch timed no phase."""
    totals = phase_totals([entry.phases_s for entry in frame.entries])
    return ", ".join("%s %.2f s" % (label, totals[name]) for name, label in PHASE_NAMES
                     if totals.get(name, 0.0) >= 0.005)


def recompiles_lines(dump: Dump) -> List[str]:
    if not dump.recompiles:
        return []
    out = ["", "recompiles:"]
    shown: set = set()  # torch's hints, each said once
    for recompile in dump.recompiles:
        out += recompile_lines(dump, recompile, shown)
    return out


def coded_reason(gb_code: Optional[str], reason: str, shown: Optional[str] = None) -> str:
    """``[GB0059] Failed to trace builtin operator: ...``: torch's graph-break code (left out
    where it is ``shown`` already) and its reason on one line."""
    return "%s%s" % ("[%s] " % gb_code if gb_code and gb_code != shown else "", break_summary(reason))


def failure_inside(dump: Dump, members: List[GraphBreak]) -> Optional[Failure]:
    """The failed compile of these graph breaks' compiles: for a frame Dynamo skipped at a
    break, it holds the break Dynamo met inside, which torch's text of the outer one leaves out."""
    compiles = {member.compile_id for member in members}
    return next((failure for failure in dump.failures if failure.compile_id in compiles), None)


def failures_lines(dump: Dump) -> List[str]:
    """The compiles torch.compile gave up on: the function, torch's kind of failure and whole
    first line of its reason, the user's line; the inner reason of a frame Dynamo skipped."""
    if not dump.failures:
        return []
    out = ["", "failed compiles:"]
    for failure in dump.failures:
        out.append("  %s (compile %s) at %s: %s: %s" % (
            failure.function, failure.compile_id, where(failure.filename, failure.lineno), failure.kind,
            coded_reason(failure.gb_code, failure.reason)))
        text = user_line(failure.filename, failure.lineno, failure.source_line)
        if text:
            out.append("      " + text)
        out += ["      hint: " + hint for hint in failure.hints[:1]]
    return out


def breaks_lines(dump: Dump) -> List[str]:
    """The graph breaks, one per place and kind, with the frames that met each and torch's
    hints once."""
    groups = break_groups(dump.graph_breaks)
    if not groups:
        return []
    # A torch before 2.8 names no graph-break codes: say so once rather than show none.
    coded = any(brk.gb_code for members in groups for brk in members)
    out = ["", "graph breaks:" if coded else "graph breaks (torch %s gives no graph-break codes):" % (
        dump.torch or "of the dump")]
    for members in groups:
        out += break_lines(dump, members)
    return out


def break_lines(dump: Dump, members: List[GraphBreak]) -> List[str]:
    brk = members[0]
    by_frame: Dict[Optional[str], List[GraphBreak]] = {}
    for member in members:
        by_frame.setdefault(member.frame, []).append(member)
    named = [(break_frame_name(dump, found[0]), found) for found in by_frame.values()]
    if len(named) == 1:
        name, found = named[0]
        head = "%s%s" % (" in " + name if name else "", " (%d compiles)" % len(found) if len(found) > 1 else "")
    else:
        head = " in %d frames" % len(named)
    out = ["  %s%s: %s" % (where(brk.filename, brk.lineno), head, coded_reason(brk.gb_code, brk.reason))]
    text = user_line(brk.filename, brk.lineno, brk.source_line)
    if text:
        out.append("      " + text)
    inner = failure_inside(dump, members)
    if inner is not None and skipped_frame(brk):
        # torch's text of a break it could not handle ends before the break it met inside.
        out.append("      the break inside: " + coded_reason(inner.gb_code, inner.reason))
    for name, found in named:
        after = break_continuation(dump, found[0], name)
        if len(named) == 1:
            out += ["      " + after] if after else []
        else:
            out.append("      in %s%s%s" % (name or "an unknown frame", " (%d compiles)" % len(found) if len(found) > 1
                                             else "", ": " + after if after else ""))
    hints = dict.fromkeys(hint for member in members for hint in member.hints)
    return out + ["      hint: " + hint for hint in hints]


def break_frame_name(dump: Dump, brk: GraphBreak) -> Optional[str]:
    frame = dump.frame(brk.frame)
    skipped = skipped_frame(brk) and dump.frame(brk.resume) is None
    return frame.qualname if frame else resumed_name(brk.resume) if skipped else None


def break_continuation(dump: Dump, brk: GraphBreak, name: Optional[str]) -> Optional[str]:
    """What ran after the break: the resume function and what it cost, or nothing compiled."""
    resume = dump.frame(brk.resume)
    if resume is not None:
        graphs = sum(len(entry.graphs) for entry in resume.entries)
        return "continues in %s, which adds %s and %s of compiling" % (
            brk.resume, plural(graphs, "graph"), seconds(compile_time(resume)))
    if skipped_frame(brk):
        return "Dynamo skipped the whole function: every call of %s runs without torch.compile" % (name or "it")
    if brk.resume:
        return "the rest of the frame ran without torch.compile (its resume function %s was never compiled)" \
            % brk.resume
    return None


def graphs_lines(dump: Dump) -> List[str]:
    if not dump.graphs:
        return []
    out = ["", "graphs:"]
    width = max(len(graph.name) for graph in dump.graphs)
    for graph in dump.graphs:
        frame = dump.frame(graph.frame)
        size = ", ".join(part for part in (
            plural(graph.nodes, "node") if graph.nodes is not None else "",
            plural(graph.ops, "op") if graph.ops is not None else "") if part)
        owner = "%s entry %s" % (frame.qualname if frame else graph.frame, graph.entry) \
            if graph.frame is not None else "called from an unknown entry"
        out.append("  %-*s  %s  %s  %s%s" % (
            width, graph.name, owner,
            graph.backend or "-", size or "size unknown",
            "  inputs " + ", ".join(graph.inputs) if graph.inputs else ""))
        caches = cache_summary(graph)
        if caches:
            out.append("  %-*s  %s" % (width, "", caches))
    return out
