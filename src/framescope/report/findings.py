"""The recompiles and graph breaks of a dump, grouped by cause, as findings.

A program that calls into a library meets one cause in many frames: a graph break inside a
library function breaks every compiled frame that calls it, and a sequence length that
changes recompiles each frame the tensor goes through. Each cause is one finding here:

* graph breaks at one place (``file:line``) of one kind (torch's graph-break code, else its
  reason), in whichever frames and compiles;
* recompiles on one guarded value (an argument, or an attribute path such as ``self.k``) by
  one kind of guard (shape, value, type, ...), across frames: the same attribute of objects
  of one class is one value (``warmup.k`` and ``self.k`` of a ``Warmup``), and tensors
  whose same dimension changed between the same sizes at once are one (a batch's sequence
  length); a frame that reached torch's recompile limit on it is part of the same finding.

Each finding says which frames it covers, how often, and whether its place is library code
(an installed package, torch, the standard library): the program's own findings rank first.
"""
from __future__ import annotations

import re
from typing import Any, Dict, List, NamedTuple, Optional, Tuple

from framescope.dump.records import Dump, Failure, GraphBreak, Recompile
from framescope.report.readable import (
    guard_summary, is_dynamo_name, library_package, module_attribute_advice, recompile_advice, skipped_frame,
    where,
)
from framescope.report.summary import (argument_changes, break_frame_name, break_groups, coded_reason, compile_time,
                                      failure_inside, user_line)
from framescope.torch_text import failed_guards, is_shape_guard, resumed_name

# Ranks of the kinds of findings: a compile that failed, then a frame that stopped compiling,
# come before all others.
FAILED, LIMIT, RECOMPILES, BREAK = 0, 1, 2, 3
KIND_NAMES = ("failed_compile", "recompile_limit", "recompiles", "graph_break")


class Covered(NamedTuple):
    """A frame a finding covers."""

    #: The frame's id in the dump, and its qualified name.
    frame: Optional[str]
    name: str
    #: Its recompiles of this cause, or the compiles of it that met this graph break.
    count: int
    #: What it recompiled on there (``self.k``), for recompiles.
    subject: Optional[str] = None
    #: It reached torch's recompile limit.
    limit: bool = False

    def text(self, unit: str) -> str:
        if unit == "recompile":
            if not self.count:
                return "%s: the recompile limit%s" % (self.name, " on " + self.subject if self.subject else "")
            return "%s: %d recompile%s%s%s" % (
                self.name, self.count, "" if self.count == 1 else "s",
                " on " + self.subject if self.subject else "", ", then the recompile limit" if self.limit else "")
        return self.name + (" (%d compiles)" % self.count if self.count > 1 else "")

    def record(self) -> Dict[str, Any]:
        return {"frame": self.frame, "name": self.name, "count": self.count, "subject": self.subject,
                "limit": self.limit}


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
    #: The frames it covers, in the order the program compiled them.
    frames: Tuple[Covered, ...] = ()
    #: Recompiles (not the compiles refused at the limit), or compiles that met the break.
    count: int = 1
    #: The package whose code ``place`` is (``transformers``), None for the program's own code.
    package: Optional[str] = None
    #: Why there is no advice, where there is a reason to say so.
    note: Optional[str] = None

    @property
    def library(self) -> bool:
        return self.package is not None

    def frames_text(self) -> str:
        """The frames it covers: ``train_step: 1 recompile on input_ids; ForCausalLMLoss: ...``."""
        unit = "recompile" if any(covered.subject or covered.limit for covered in self.frames) else "compile"
        return "; ".join(covered.text(unit) for covered in self.frames)

    def record(self) -> Dict[str, Any]:
        return {"kind": KIND_NAMES[self.kind],
                "cost_s": None if self.cost_s is None else round(self.cost_s, 3),
                "title": self.title, "place": self.place, "line": self.line, "advice": self.advice,
                "frames": [covered.record() for covered in self.frames], "count": self.count,
                "library": self.library, "package": self.package, "note": self.note}


def findings(dump: Dump) -> List[Finding]:
    """Every finding, one per cause: the program's own first, then by kind (a frame that
    stopped compiling first), then the costliest first."""
    found = [recompile_finding(dump, group) for group in recompile_groups(dump)]
    found += [break_finding(dump, group) for group in break_groups(dump.graph_breaks)]
    found += [failure_finding(dump, group) for group in failure_groups(dump)]
    # A recompile on a name Dynamo made (a note says so) has no advice: after the rest.
    return sorted(found, key=lambda f: (f.library, f.note is not None, f.kind, -(f.cost_s or 0.0)))


# --------------------------------------------------------------------------- recompiles

class Cause(NamedTuple):
    """What a recompile's first failed guard checks."""

    #: "shape", "value" (compared with a value), "type", "object" or "other".
    kind: str
    #: The guarded value in the program's names: ``input_ids``, ``warmup.k``.
    subject: str
    #: What recompiles of one cause share: the subject, its first name as its class where
    #: the guard checks an attribute of an object (``Warmup.k``).
    key: str
    #: For a size that changed: (dimension, size before, size now).
    dim: Optional[Tuple[str, str, str]] = None
    #: The value a "value" guard compares with, as torch wrote it.
    value: Optional[str] = None


_PATH = r"[A-Za-z_]\w*(?:\.[A-Za-z_]\w*|\[[^\]]*\])*"
_SIZE = re.compile(r"^tensor '(.+?)' (?:size|stride) mismatch at index (\d+)\. expected (\d+), actual (\d+)")
_SIZED = re.compile(r"(%s)\.(?:size|stride)\(" % _PATH)
_SEEN = re.compile(r"^(?:type\((.+)\)|(.+)) is the (type|object) seen when compiling$")
_COMPARE = re.compile(r"^(%s)\s*(?:==|!=|<=|>=|<|>| is not | is )\s*(.+)$" % _PATH)
_KEYWORD = re.compile(r"^[A-Za-z_]\w*\['([A-Za-z_]\w*)'\]")
# Types whose values are no objects of the program's classes.
_BUILTIN_TYPES = ("int", "float", "complex", "bool", "str", "bytes", "NoneType", "list", "tuple", "dict",
                  "set", "frozenset", "Tensor", "Parameter", "function", "method", "type")


def plain_name(expression: str) -> str:
    """A tensor in a frame's ``**kwargs`` by its keyword: ``kwargs['input_ids']`` -> ``input_ids``."""
    keyword = _KEYWORD.match(expression)
    return keyword.group(1) + expression[keyword.end():] if keyword else expression


def argument_type(dump: Dump, recompile: Recompile, name: str) -> Optional[str]:
    """The type of a frame's argument when the recompile happened, or when it compiled before."""
    frame = dump.frame(recompile.frame)
    found = [recompile.arguments] + ([e.arguments for e in reversed(frame.entries)] if frame else [])
    return next((args[name]["type"] for args in found if name in args and args[name].get("type")), None)


def recompile_cause(dump: Dump, recompile: Recompile) -> Cause:
    guards = failed_guards(recompile.reason)
    text = guards[0].text if guards else " ".join(recompile.reason.split())
    size = _SIZE.match(text)
    if size:
        subject = plain_name(size.group(1))
        return Cause("shape", subject, subject, (size.group(2), size.group(3), size.group(4)))
    if is_shape_guard(text):
        sized = _SIZED.search(text)
        subject = plain_name(sized.group(1)) if sized else text
        return Cause("shape", subject, subject)
    seen = _SEEN.match(text)
    compare = _COMPARE.match(text)
    if seen:
        kind, subject, value = seen.group(3), seen.group(1) or seen.group(2), None
    elif compare:
        kind, subject, value = "value", plain_name(compare.group(1)), compare.group(2).strip()
    else:
        return Cause("other", text, text)
    root, rest = re.match(r"([A-Za-z_]\w*)(.*)$", subject).groups()
    owner = argument_type(dump, recompile, root) if rest.startswith(".") else None
    key = owner + rest if owner and owner not in _BUILTIN_TYPES else subject
    if is_dynamo_name(subject):
        key = "%s:%s" % (recompile.frame, subject)  # Dynamo's names mean something per frame only
    return Cause(kind, subject, key, None, value)


def recompile_groups(dump: Dump) -> List[List[Tuple[Recompile, Cause]]]:
    """The recompiles (refused ones too) grouped by cause, in the order of their first."""
    found = [(recompile, recompile_cause(dump, recompile)) for recompile in dump.recompiles]
    parent = list(range(len(found)))

    def root(i: int) -> int:
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    first: Dict[Tuple, int] = {}
    for i, (_recompile, cause) in enumerate(found):
        marks = [("key", cause.kind, cause.key)] + ([("dim",) + cause.dim] if cause.dim else [])
        for mark in marks:
            if mark in first:
                parent[root(i)] = root(first[mark])
            else:
                first[mark] = i
    groups: Dict[int, List[Tuple[Recompile, Cause]]] = {}
    for i, member in enumerate(found):
        groups.setdefault(root(i), []).append(member)
    return sorted(groups.values(), key=lambda group: found.index(group[0]))


def covered_frames(dump: Dump, members: List[Tuple[Recompile, Cause]]) -> List[Covered]:
    by_frame: Dict[Optional[str], Covered] = {}
    for recompile, cause in members:
        frame = dump.frame(recompile.frame)
        name = frame.qualname if frame else recompile.frame or "<unknown frame>"
        seen = by_frame.get(recompile.frame, Covered(recompile.frame, name, 0, cause.subject))
        by_frame[recompile.frame] = seen._replace(
            count=seen.count + (0 if recompile.limit else 1), limit=seen.limit or bool(recompile.limit))
    return list(by_frame.values())


def _package(dump: Dump, recompile: Any) -> Optional[str]:
    frame = dump.frame(recompile.frame)
    return library_package(recompile.filename, frame.qualname if frame else None)


def lead_member(dump: Dump, members: List[Tuple[Recompile, Cause]]) -> Tuple[Recompile, Cause]:
    """The recompile a finding shows: at the limit first, then the latest (its reason names
    the most failed guards), the program's own code before a library's."""
    ordered = [m for m in members if m[0].limit] + [m for m in reversed(members) if not m[0].limit]
    return next((m for m in ordered if _package(dump, m[0]) is None), ordered[0])


def recompile_finding(dump: Dump, members: List[Tuple[Recompile, Cause]]) -> Finding:
    lead, cause = lead_member(dump, members)
    covered = covered_frames(dump, members)
    count = sum(c.count for c in covered)
    made = {(r.frame, r.entry) for r, _cause in members if not r.limit and r.entry is not None}
    times = [e.compile_time_s for f in dump.frames for e in f.entries
             if (f.id, e.index) in made and e.compile_time_s is not None]
    advice, note = recompile_group_advice(dump, members, lead, cause)
    limits = [c for c in covered if c.limit]
    if limits:
        limit = lead.limit or next(r.limit for r, _cause in members if r.limit)
        title = "%s reached torch.compile's %s%s: calls that no cache entry accepts run without torch.compile" % (
            names_text([c.name for c in limits]), limit.name, " (%d)" % limit.value if limit.value else "")
    else:
        title = recompiles_title(dump, covered, lead, count)
    return Finding(LIMIT if limits else RECOMPILES, sum(times) if times else None, title,
                   where(lead.filename, lead.lineno), user_line(lead.filename, lead.lineno, lead.source_line),
                   advice, tuple(covered), count, _package(dump, lead), note)


def names_text(names: List[str], most: int = 2) -> str:
    if len(names) <= most:
        return " and ".join(names)
    return "%s and %d more frames" % (", ".join(names[:most]), len(names) - most)


def recompiles_title(dump: Dump, covered: List[Covered], lead: Recompile, count: int) -> str:
    times = "once" if count == 1 else "%d times" % count
    subjects = list(dict.fromkeys(c.subject for c in covered if c.subject))
    if len(covered) == 1:
        # Without what the frame was called with, torch's failed guards say more than a name.
        known = argument_changes(dump, lead) and subjects
        subject = " on " + ", ".join(subjects) if known else ": guard failed: " + guard_summary(lead.reason)
        return "%s recompiled %s%s" % (covered[0].name, times, subject)
    return "%s recompiled %s in all, on %s" % (names_text([c.name for c in covered]), times, ", ".join(subjects))


def recompile_group_advice(dump: Dump, members: List[Tuple[Recompile, Cause]], lead: Recompile,
                           cause: Cause) -> Tuple[Optional[str], Optional[str]]:
    """(advice, why there is none) for recompiles of one cause."""
    subjects = list(dict.fromkeys(c.subject for _r, c in [(lead, cause)] + members))
    if cause.kind != "other" and all(is_dynamo_name(subject) for subject in subjects):
        return None, "no suggestion: %s %s" % (", ".join(subjects), dynamo_name_text(subjects))
    subjects = [subject for subject in subjects if not is_dynamo_name(subject)]
    if is_module_attribute(dump, lead, cause):
        owner = cause.key.split(".")[0] if cause.key != cause.subject else None
        hint = next((h for r, _c in members for h in r.hints if "nn.Module" in h), None)
        return module_attribute_advice(subjects, owner, hint), None
    sized = next((c for _r, c in [(lead, cause)] + members if c.dim and not is_dynamo_name(c.subject)), None)
    if cause.kind == "shape" and sized is not None:
        dim, before, now = sized.dim
        return ("the shape of %s changed (dimension %s: %s, then %s): mark the dimension dynamic "
                "(torch._dynamo.mark_dynamic(%s, %s)) or compile with dynamic=True"
                % (", ".join(subjects), dim, before, now, sized.subject, dim)), None
    for recompile, _cause in [(lead, cause)] + members:
        advice = next((change.advice for change in argument_changes(dump, recompile) if change.advice), None)
        if advice or recompile.hints:
            return advice or recompile.hints[0], None
    if cause.kind == "shape" and not is_dynamo_name(cause.subject):
        return recompile_advice(lead.reason, cause.subject, "Tensor"), None
    return None, None


def dynamo_name_text(names: List[str]) -> str:
    """What names Dynamo made are, for a finding that can give no advice on them."""
    if all(re.match(r"___stack\d", name) for name in names):
        what = "a value Dynamo carries over a graph break" if len(names) == 1 else \
            "values Dynamo carries over a graph break"
    else:
        what = "a name Dynamo made" if len(names) == 1 else "names Dynamo made"
    return "%s %s, not one of the program's names" % ("is" if len(names) == 1 else "are", what)


def is_module_attribute(dump: Dump, recompile: Recompile, cause: Cause) -> bool:
    """Whether the cause is an int attribute of an nn.Module (torch says so in its hint; a
    dump without hints: an int attribute of an object of the program's classes)."""
    if cause.kind != "value" or "." not in cause.subject or not re.fullmatch(r"-?\d+", cause.value or ""):
        return False
    return any("nn.Module" in hint for hint in recompile.hints) or cause.key != cause.subject


# --------------------------------------------------------------------------- graph breaks

def break_finding(dump: Dump, members: List[GraphBreak]) -> Finding:
    """One finding for the graph breaks of one kind at one place, in whichever frames."""
    brk = members[0]
    covered = break_frames(dump, members)
    frame = dump.frame(brk.frame)
    package = library_package(brk.filename, frame.qualname if frame else None)
    place, line = where(brk.filename, brk.lineno), user_line(brk.filename, brk.lineno, brk.source_line)
    hints = list(dict.fromkeys(hint for member in members for hint in member.hints))
    if all(dump.frame(member.resume) is None and skipped_frame(member) for member in members):
        # Dynamo gave up on the whole frame: it runs uncompiled, every call. The failure of
        # its compile holds the inner reason, the break Dynamo could not handle.
        inner = failure_inside(dump, members)
        names = [c.name for c in covered] or [inner.function if inner else resumed_name(brk.resume) or "a function"]
        hints = hints or (inner.hints if inner else [])
        return Finding(
            LIMIT, None, "%s %s without torch.compile: Dynamo skipped the whole function at a graph break%s%s"
            % (names_text(names), "runs" if len(names) == 1 else "run", " [%s]" % brk.gb_code if brk.gb_code else "",
               inner_text(inner, brk.gb_code)),
            place, line, hints[0] if hints else None, tuple(covered), len(members), package)
    # The cost: the resume functions the break started (a frame that names itself as its
    # resume function started none).
    resumes = list(dict.fromkeys(m.resume for m in members if m.resume and m.resume != m.frame))
    times = [t for t in (compile_time(f) for f in map(dump.frame, resumes) if f is not None) if t is not None]
    return Finding(
        BREAK, sum(times) if times else None,
        "graph break%s: %s" % (break_count(len(covered), len(members)), coded_reason(brk.gb_code, brk.reason)),
        place, line, hints[0] if hints else None, tuple(covered), len(members), package)


def break_count(frames: int, compiles: int) -> str:
    """`` in 4 frames (5 compiles)``, `` (2 compiles)`` or nothing, for a break's title."""
    many = " (%d compiles)" % compiles if compiles > max(frames, 1) else ""
    return " in %d frames%s" % (frames, many) if frames > 1 else many


def break_frames(dump: Dump, members: List[GraphBreak]) -> List[Covered]:
    by_frame: Dict[Optional[str], List[GraphBreak]] = {}
    for member in members:
        by_frame.setdefault(member.frame, []).append(member)
    return [Covered(frame_id, break_frame_name(dump, found[0]) or frame_id or "<unknown frame>", len(found))
            for frame_id, found in by_frame.items()]


# --------------------------------------------------------------------------- failed compiles

def inner_text(failure: Optional[Failure], shown: Optional[str] = None) -> str:
    """``: [GB0059] Failed to trace builtin operator: ...``: the reason a compile failed (its
    code left out where it is ``shown`` already)."""
    return "" if failure is None else ": " + coded_reason(failure.gb_code, failure.reason, shown)


def failure_groups(dump: Dump) -> List[List[Failure]]:
    """The failed compiles by function, place and kind; those of frames Dynamo skipped at a
    graph break are told with that break."""
    skipped = {brk.compile_id for brk in dump.graph_breaks if skipped_frame(brk)}
    groups: Dict[Tuple, List[Failure]] = {}
    for failure in dump.failures:
        if failure.compile_id in skipped:
            continue
        key = (failure.function, failure.filename, failure.lineno, failure.kind, failure.gb_code or failure.reason)
        groups.setdefault(key, []).append(failure)
    return list(groups.values())


def failure_finding(dump: Dump, members: List[Failure]) -> Finding:
    """One finding for the compiles of one function that failed the same way at one place."""
    failure = members[0]
    frame = dump.frame(failure.frame)
    package = library_package(failure.filename, frame.qualname if frame else failure.function)
    name = frame.qualname if frame else failure.function
    return Finding(
        FAILED, None, "%s failed to compile (%s%s)%s" % (
            name, failure.kind, ", %d times" % len(members) if len(members) > 1 else "", inner_text(failure)),
        where(failure.filename, failure.lineno), user_line(failure.filename, failure.lineno, failure.source_line),
        failure.hints[0] if failure.hints else None, (Covered(failure.frame, name, len(members)),), len(members),
        package)
