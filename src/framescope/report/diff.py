"""``framescope diff A B``: what torch.compile did differently in two dumps.

Two runs of a program (before and after a change, on two torch versions) or two ranks of
one run: the frames each compiled, their cache entries and guards, the graphs, graph
breaks, recompiles, failed compiles and what the compile caches did. Each difference is a
:class:`Change`: added (only in B), removed (only in A) or changed, with a unified diff
where a file's text changed.

Frames are matched by qualified name, file name and ``def`` line (not by their ids, which
follow the order of compiling); entries by their number; graphs by the entry that calls
them and their place in its calls. Texts are compared after the parts that differ between
any two runs are normalised (see :func:`normalise`): the dump folders' paths, memory
addresses, ids that torch puts in names, hashes and uuids, paths into torch's caches.
"""
from __future__ import annotations

import difflib
import os
import re
from dataclasses import dataclass, field
from typing import Any, Dict, List, Optional, Tuple

from framescope.dump.records import Dump, Entry, Frame, Graph, to_data
from framescope.torch_text import break_summary

__all__ = ["Change", "compare", "diff_record", "format_diff"]

ADDED, REMOVED, CHANGED = "added", "removed", "changed"
_SIGNS = {ADDED: "+", REMOVED: "-", CHANGED: "~"}


@dataclass
class Change:
    """One difference between dump A and dump B."""

    #: What differs: "frame", "entry", "guard", "code", "graph", "graph_file", "caches",
    #: "graph_break", "recompile", "failure".
    kind: str
    #: ADDED (only in B), REMOVED (only in A) or CHANGED.
    change: str
    #: Which one, in words: ``f (prog.py:3) entry 1``.
    what: str
    #: What changed about it, on one line (``2 -> 3 cache entries``); "" where the diff says it.
    detail: str = ""
    #: A unified diff of the texts, A to B, for a changed text.
    diff: List[str] = field(default_factory=list)


FrameKey = Tuple[str, str, Optional[int]]


def frame_key(frame: Frame) -> FrameKey:
    return (frame.qualname, os.path.basename(frame.filename or ""), frame.firstlineno)


def frame_label(frame: Frame) -> str:
    return "%s (%s:%s)" % (frame.qualname, os.path.basename(frame.filename or "?"), frame.firstlineno)


# --------------------------------------------------------------------------- normalising

_ADDRESS = re.compile(r"\b0x[0-9a-fA-F]{4,}\b")
_HASH = re.compile(r"\b[0-9a-f]{24,}\b")
_BY_ID = re.compile(r"_\d{6,}_c(\d+)\b")
_ID_CHECK = re.compile(r"(_id\([^,()]+(?:\([^()]*\))?[^,()]*, )\d+\)")
_CACHE_PATH = re.compile(r"(?:/[^\s'\"]*)?/(?:torchinductor_[^/\s'\"]+|inductor_cache[^/\s'\"]*)(/[^\s'\"]*)?")


def normalise(text: str, dump: Dump) -> str:
    """``text`` without what differs between any two runs of one program: the dump's folder,
    paths into torch's caches, addresses, hashes, and the object ids in torch's id checks and
    in the globals it names after an id."""
    text = text.replace(dump.path, "<dump>")
    text = _CACHE_PATH.sub(lambda m: "<torch cache>/" + os.path.basename(m.group(1) or ""), text)
    text = _ADDRESS.sub("0x?", text)
    text = _HASH.sub("<hash>", text)
    text = _ID_CHECK.sub(r"\1<id>)", text)
    return _BY_ID.sub(r"_<id>_c\1", text)


def _read(dump: Dump, name: Optional[str]) -> Optional[str]:
    path = dump.file(name)
    if path is None:
        return None
    try:
        with open(path, encoding="utf-8", errors="replace") as handle:
            return normalise(handle.read(), dump)
    except OSError:
        return None


def _text_diff(kind: str, what: str, a_text: Optional[str], b_text: Optional[str], a_name: str,
               b_name: str) -> List[Change]:
    if a_text == b_text:
        return []
    if a_text is None or b_text is None:
        return [Change(kind, ADDED if a_text is None else REMOVED, what)]
    lines = list(difflib.unified_diff(a_text.splitlines(), b_text.splitlines(), "a/" + a_name, "b/" + b_name,
                                      lineterm="", n=2))
    return [Change(kind, CHANGED, what, diff=lines)]


# --------------------------------------------------------------------------- comparing

def compare(a: Dump, b: Dump) -> List[Change]:
    """Every difference from dump ``a`` to dump ``b``, frames first."""
    changes: List[Change] = []
    a_frames = {frame_key(frame): frame for frame in a.frames}
    b_frames = {frame_key(frame): frame for frame in b.frames}
    for key, frame in a_frames.items():
        if key not in b_frames:
            changes.append(Change("frame", REMOVED, frame_label(frame), _entries_text(frame)))
    for key, frame in b_frames.items():
        if key not in a_frames:
            changes.append(Change("frame", ADDED, frame_label(frame), _entries_text(frame)))
    for key, frame in a_frames.items():
        if key in b_frames:
            changes += _frame_changes(a, b, frame, b_frames[key])
    changes += _set_changes("graph_break", _breaks(a), _breaks(b))
    changes += _set_changes("recompile", _recompiles(a), _recompiles(b))
    changes += _set_changes("failure", _failures(a), _failures(b))
    return changes


def _entries_text(frame: Frame) -> str:
    count = len(frame.entries)
    return "%d cache entr%s" % (count, "y" if count == 1 else "ies")


def _frame_changes(a: Dump, b: Dump, a_frame: Frame, b_frame: Frame) -> List[Change]:
    label = frame_label(a_frame)
    changes: List[Change] = []
    if len(a_frame.entries) != len(b_frame.entries):
        changes.append(Change("frame", CHANGED, label, "%s -> %s" % (_entries_text(a_frame), _entries_text(b_frame))))
    b_entries = {entry.index: entry for entry in b_frame.entries}
    for entry in a_frame.entries:
        other = b_entries.pop(entry.index, None)
        what = "%s entry %d" % (label, entry.index)
        if other is None:
            changes.append(Change("entry", REMOVED, what))
            continue
        changes += _entry_changes(a, b, what, entry, other)
    changes += [Change("entry", ADDED, "%s entry %d" % (label, entry.index)) for entry in b_entries.values()]
    return changes


def _entry_changes(a: Dump, b: Dump, what: str, a_entry: Entry, b_entry: Entry) -> List[Change]:
    changes: List[Change] = []
    if a_entry.guard and b_entry.guard:  # a guard not read yet (a job still running) is unknown
        a_guard = normalise("\n".join(a_entry.guard), a)
        b_guard = normalise("\n".join(b_entry.guard), b)
        changes += _text_diff("guard", what, a_guard, b_guard, "%s guard" % what, "%s guard" % what)
    if a_entry.guard_count != b_entry.guard_count and a_entry.guard_count is not None \
            and b_entry.guard_count is not None:
        changes.append(Change("guard", CHANGED, what, "%d -> %d checks" % (a_entry.guard_count, b_entry.guard_count)))
    changes += _text_diff("code", what, _read(a, a_entry.file), _read(b, b_entry.file),
                          a_entry.file or "?", b_entry.file or "?")
    for position in range(max(len(a_entry.graphs), len(b_entry.graphs))):
        a_graph = a.graph(a_entry.graphs[position]) if position < len(a_entry.graphs) else None
        b_graph = b.graph(b_entry.graphs[position]) if position < len(b_entry.graphs) else None
        changes += _graph_changes(a, b, "%s graph %d" % (what, position + 1), a_graph, b_graph)
    return changes


def _graph_changes(a: Dump, b: Dump, what: str, a_graph: Optional[Graph], b_graph: Optional[Graph]) -> List[Change]:
    if a_graph is None or b_graph is None:
        if a_graph is b_graph:
            return []
        return [Change("graph", ADDED if a_graph is None else REMOVED, what, (a_graph or b_graph).name)]
    changes: List[Change] = []
    if (a_graph.nodes, a_graph.ops) != (b_graph.nodes, b_graph.ops):
        changes.append(Change("graph", CHANGED, what, "%s nodes, %s ops -> %s nodes, %s ops"
                              % (a_graph.nodes, a_graph.ops, b_graph.nodes, b_graph.ops)))
    if dict(a_graph.caches) != dict(b_graph.caches):
        stages = sorted(set(a_graph.caches) | set(b_graph.caches))
        changes.append(Change("caches", CHANGED, what, ", ".join(
            "%s %s -> %s" % (stage, a_graph.caches.get(stage, "-"), b_graph.caches.get(stage, "-"))
            for stage in stages if a_graph.caches.get(stage) != b_graph.caches.get(stage))))
    for stage in list(dict.fromkeys(list(a_graph.files) + list(b_graph.files))):
        changes += _text_diff("graph_file", "%s %s" % (what, stage), _read(a, a_graph.files.get(stage)),
                              _read(b, b_graph.files.get(stage)), a_graph.files.get(stage, "?"),
                              b_graph.files.get(stage, "?"))
    return changes


def _breaks(dump: Dump) -> Dict[Any, str]:
    return {(os.path.basename(brk.filename or ""), brk.lineno, brk.gb_code or break_summary(brk.reason)):
            "%s:%s %s%s" % (os.path.basename(brk.filename or "?"), brk.lineno,
                            "[%s] " % brk.gb_code if brk.gb_code else "", break_summary(brk.reason))
            for brk in dump.graph_breaks}


def _recompiles(dump: Dump) -> Dict[Any, str]:
    found = {}
    for recompile in dump.recompiles:
        frame = dump.frame(recompile.frame)
        name = frame.qualname if frame else recompile.frame or "?"
        if recompile.limit:
            found[(name, "limit")] = "%s reached the recompile limit" % name
        else:
            found[(name, recompile.reason)] = "%s: %s" % (name, recompile.reason)
    return found


def _failures(dump: Dump) -> Dict[Any, str]:
    return {(failure.function, os.path.basename(failure.filename or ""), failure.lineno, failure.kind):
            "%s at %s:%s: %s: %s" % (failure.function, os.path.basename(failure.filename or "?"), failure.lineno,
                                     failure.kind, break_summary(failure.reason))
            for failure in dump.failures}


def _set_changes(kind: str, a_items: Dict[Any, str], b_items: Dict[Any, str]) -> List[Change]:
    return ([Change(kind, REMOVED, text) for key, text in a_items.items() if key not in b_items]
            + [Change(kind, ADDED, text) for key, text in b_items.items() if key not in a_items])


# --------------------------------------------------------------------------- output

_TITLES = (("frame", "frames"), ("entry", "cache entries"), ("guard", "guards"), ("code", "transformed code"),
           ("graph", "graphs"), ("graph_file", "graph files"), ("caches", "compile caches"),
           ("graph_break", "graph breaks"), ("recompile", "recompiles"), ("failure", "failed compiles"))


def format_diff(a: Dump, b: Dump, changes: List[Change]) -> str:
    """``framescope diff``'s text: a line per difference, grouped by kind, diffs below."""
    out = ["framescope diff: %s -> %s" % (a.path, b.path)]
    if (a.torch, a.python) != (b.torch, b.python):
        out.append("torch %s, Python %s -> torch %s, Python %s" % (a.torch, a.python, b.torch, b.python))
    if not changes:
        out.append("no differences: the same frames, entries, guards, graphs, breaks, recompiles and caches")
        return "\n".join(out)
    for kind, title in _TITLES:
        found = [change for change in changes if change.kind == kind]
        if not found:
            continue
        out += ["", "%s:" % title]
        for change in found:
            out.append("  %s %s%s" % (_SIGNS[change.change], change.what, ": " + change.detail if change.detail else ""))
            out += ["      " + line for line in change.diff]
    counts = {sign: sum(1 for change in changes if change.change == name) for name, sign in _SIGNS.items()}
    out += ["", "%d added, %d removed, %d changed" % (counts["+"], counts["-"], counts["~"])]
    return "\n".join(out)


def diff_record(a: Dump, b: Dump, changes: List[Change]) -> Dict[str, Any]:
    """``framescope diff --json``: the same as data."""
    return {"a": {"dump": a.path, "torch": a.torch, "python": a.python},
            "b": {"dump": b.path, "torch": b.torch, "python": b.python},
            "same": not changes, "changes": [to_data(change) for change in changes]}
