"""torch's text formats, read in one place: compile ids, the names torch gives to what it
generates, guard code parts (and those parts as a Python expression), recompile and graph-break reasons, limits, stack traces, Inductor's provenance.

torch writes these for people, not programs, and changes them between releases; each is
parsed here once, with the releases whose spelling a pattern allows. Nothing here imports
torch (``framescope report`` reads old dumps without it); ``torch_internals`` holds what
touches torch's objects.
"""
from __future__ import annotations

import ast
import builtins
import json
import re
from typing import Any, Dict, List, Mapping, NamedTuple, Optional, Sequence, Tuple

# --------------------------------------------------------------------------- compile ids

# A compile id at the start of a log line: "0/1: ", "[0/1] ", "[0/1_1]: ".
_ID_PREFIX = re.compile(r"^\s*\S*\d+/\d+\S*: ")
# A compile id at the start of one failed guard of a recompile reason: "0/1: ", "[0/1]: ".
_GUARD_ID = re.compile(r"^\[?(\d+/\d+)\]?:\s*")


def compile_frame(compile_id: str) -> str:
    """The frame part of a compile id: ``"5"`` for ``"5/4"`` (the fifth compile of frame 5);
    compiles with the same frame part are of the same code object."""
    return compile_id.split("/")[0]


def compile_order(compile_id: Optional[str]) -> Tuple[int, int]:
    """A sort key that puts compile ids ("3/1", "[0/2]", "0/1_1") in the order torch made
    them: by frame, then by attempt; an id that cannot be read sorts last."""
    numbers = re.findall(r"\d+", compile_id or "")
    if len(numbers) < 2:
        return (1 << 30, 1 << 30)
    return (int(numbers[0]), int(numbers[1]))


def without_compile_id(text: str) -> str:
    """``text`` without the compile id torch starts a log line with."""
    return _ID_PREFIX.sub("", text, count=1)


def split_compile_id(line: str) -> Tuple[Optional[str], str]:
    """(compile id, rest) of one line of a recompile reason; (None, line) without an id."""
    match = _GUARD_ID.match(line)
    return (match.group(1), line[match.end():]) if match else (None, line)


# --------------------------------------------------------------------------- generated names

# torch names each compiled graph ``__compiled_fn_<n>`` and, since 2.13, appends a random uuid;
# <n> comes from a counter of the whole process.
_UUID = r"_[0-9a-f]{8}_[0-9a-f]{4}_[0-9a-f]{4}_[0-9a-f]{4}_[0-9a-f]{12}"
_GRAPH_NAME = re.compile(r"\b(__compiled_fn_\d+)%s\b" % _UUID)
_PLAIN_GRAPH_NAME = re.compile(r"__compiled_fn_\d+")
# The global that holds a resume function: ``__resume_at_<offset>_<n>``.
_RESUME_GLOBAL = re.compile(r"^__resume_at_\d+_\d+$")
# A resume function's code name: ``torch_dynamo_resume_in_<function>_at_<line>``.
_RESUME_CODE = re.compile(r"^torch_dynamo_resume_in_(.+)_at_(\d+)$")
# ... and as a report names it, where two of one function at one line are told apart by a
# ``_<k>`` suffix.
_RESUME_ID = re.compile(r"^torch_dynamo_resume_in_(.+)_at_\d+(?:_\d+)?$")


# The local Dynamo's code keeps a graph's outputs in: ``graph_out_0``.
_GRAPH_OUTPUT = re.compile(r"^graph_out_\d+$")


def is_graph_output(name: str) -> bool:
    """Whether a local of Dynamo's code holds a graph's outputs (``graph_out_0``)."""
    return bool(_GRAPH_OUTPUT.match(name))


def stable_graph_name(name: str) -> str:
    """A graph's global name without torch's uuid: ``__compiled_fn_3_ab12...`` -> ``__compiled_fn_3``."""
    match = _GRAPH_NAME.fullmatch(name)
    return match.group(1) if match else name


# A global Dynamo installs for one object, named after the object's id() and the compile
# (``install_global_by_id``): ``___module_collections_140111645401520_c0``; the id changes
# from run to run.
_BY_ID_GLOBAL = re.compile(r"(\w*?)_\d{6,}_c(\d+)")


def stable_global_name(name: str) -> str:
    """A global's name without the id() torch puts in some: ``___module_collections_140111645401520_c0``
    -> ``___module_collections_c0``; any other name as it is."""
    match = _BY_ID_GLOBAL.fullmatch(name)
    return "%s_c%s" % match.groups() if match else name


def rename_globals(text: str, names: Mapping[str, str]) -> str:
    """``text`` with every name that ``names`` maps replaced by its new name (whole names
    only, in one pass, so that a new name is never renamed again)."""
    if not names:
        return text
    pattern = re.compile(r"\b(?:%s)\b" % "|".join(re.escape(name) for name in sorted(names, key=len, reverse=True)))
    return pattern.sub(lambda match: names[match.group(0)], text)


def is_graph_name(name: str) -> bool:
    """Whether a global name is one of torch's compiled graphs (with or without uuid)."""
    return _PLAIN_GRAPH_NAME.fullmatch(stable_graph_name(name)) is not None


def is_resume_global(name: str) -> bool:
    """Whether a global name is one of torch's resume functions (``__resume_at_<offset>_<n>``)."""
    return _RESUME_GLOBAL.match(name) is not None


def resume_line(code_name: str) -> Optional[int]:
    """The user line a resume function continues at, from its code name; None for others."""
    match = _RESUME_CODE.match(code_name)
    return int(match.group(2)) if match else None


def resume_name(function: str, line: int) -> str:
    """torch's code name for the resume function of ``function`` at ``line``; a resume
    function's own resume functions are named after the user's function too."""
    outer = _RESUME_CODE.match(function)
    return "torch_dynamo_resume_in_%s_at_%d" % (outer.group(1) if outer else function, line)


def resumed_name(resume: Optional[str]) -> Optional[str]:
    """The function a resume function's name (or a dump's id for it) says it continues:
    ``loop`` for ``torch_dynamo_resume_in_loop_at_12``."""
    match = _RESUME_ID.match(resume or "")
    return match.group(1) if match else None


# --------------------------------------------------------------------------- guard code parts

# torch prints some guards with the type of the guarded value appended.
_TYPE_SUFFIX = re.compile(r",\s*type=<class '([\w.]+)'>\s*$")
_ID_CHECK = re.compile(r"^___check_(type|obj)_id\((.*), (\d+)\)$")
_GLOBAL_STATE = re.compile(r"^___check_global_state\(\) against (\{.*\})$", re.S)
_TENSOR_CHECK = re.compile(
    r"^check_tensor\((.+?), \w+, DispatchKeySet\([^)]*\), (torch\.\w+), device=(\w+|None), "
    r"requires_grad=(True|False), size=\[([^\]]*)\], stride=\[([^\]]*)\]\)$"
)
# A frame's local or global by torch's spelling: ``L['x']``, ``G["y"]``.
_SCOPED = re.compile(r"\b([LG])\[(['\"])([^\W\d]\w*)\2\]")
# A submodule, parameter or buffer reached through a module's dicts: ``._modules['lin']``.
_MODULE_ITEM = re.compile(r"\._(?:modules|parameters|buffers)\['([A-Za-z_][A-Za-z0-9_]*)'\]")


class IdCheck(NamedTuple):
    """``___check_type_id(x, 94...)`` or ``___check_obj_id(x, 94...)``."""

    #: "type" (the type of subject is the class with that id) or "obj" (subject is the object).
    kind: str
    #: The checked expression, as torch wrote it.
    subject: str
    #: The id, as torch wrote it.
    number: str


class TensorCheck(NamedTuple):
    """``check_tensor(x, Tensor, DispatchKeySet(...), torch.float32, device=None, ...)``."""

    subject: str
    #: ``torch.float32``.
    dtype: str
    #: The device index, or ``None`` (any).
    device: str
    #: ``True`` or ``False``.
    requires_grad: str
    #: The sizes and strides between the brackets, ``None`` for a dynamic one: ``2, None``.
    size: str
    stride: str


def split_type_suffix(part: str) -> Tuple[str, Optional[str]]:
    """(part without it, class name) of a guard part ending in ``, type=<class 'int'>``;
    (part, None) without one."""
    suffix = _TYPE_SUFFIX.search(part)
    return (part[: suffix.start()], suffix.group(1)) if suffix else (part, None)


def id_check(part: str) -> Optional[IdCheck]:
    match = _ID_CHECK.match(part)
    return IdCheck(*match.groups()) if match else None


def tensor_check(part: str) -> Optional[TensorCheck]:
    match = _TENSOR_CHECK.match(" ".join(part.split()))
    return TensorCheck(*match.groups()) if match else None


def global_state(part: str) -> Optional[Dict[str, Any]]:
    """The settings a ``___check_global_state() against {...}`` part compares with (torch
    2.13+ prints them as JSON); None for other parts, or settings that do not parse."""
    match = _GLOBAL_STATE.match(part)
    if not match:
        return None
    try:
        state = json.loads(match.group(1))
    except ValueError:
        return None
    return state if isinstance(state, dict) else None


def unscoped(text: str, shadowed: frozenset = frozenset()) -> str:
    """``L['x']`` and ``G['x']`` as ``x``; ``globals()['x']`` for a global in ``shadowed``
    (a local of the same name hides it)."""
    def name(match: "re.Match[str]") -> str:
        scope, _quote, found = match.groups()
        return "globals()[%r]" % found if scope == "G" and found in shadowed else found

    return _SCOPED.sub(name, text)


def user_expression(source: str) -> str:
    """torch's source of a value in the user's spelling:
    ``L['self']._modules['lin']._parameters['w']`` -> ``self.lin.w``."""
    return _MODULE_ITEM.sub(r".\1", unscoped(source))


# --------------------------------------------------------------------------- recompile reasons

# torch puts "  # <source line>  # <file>:<line> in <fn>" after a failed guard's text.
_GUARD_COMMENT = re.compile(r"\s{2,}# .*?(?=; |$)", re.M)
_TRAILING_COMMENT = re.compile(r"\s{2,}#.*$")
# ... whose last part names where the guarded value is used: "# prog.py:31 in f".
_GUARD_PLACE = re.compile(r"#\s*([^#;\n]+?):(\d+) in [^\s;]+")
# A failed guard on a tensor's shape, as torch words it.
_SHAPE_GUARD = re.compile(r"size mismatch|stride mismatch|\.size\(\)|\.stride\(\)|\bsize\(|tensor .* mismatch")
_TRACE_FILE = re.compile(r'^\s*File "(.+)", line (\d+), in (\S+)', re.M)
_TRACE_LINE = re.compile(r'File "([^"]+)", line (\d+)')


class FailedGuard(NamedTuple):
    """One failed check of a recompile."""

    #: The check, in the user's names (``mode == 'cos'``).
    text: str
    #: Compile id of the entry whose guard it belongs to, when torch gives it.
    compile_id: Optional[str] = None


def trace_places(text: str) -> List[Tuple[str, int]]:
    """(file, line) of each frame of a Python stack trace in ``text``, outermost first."""
    return [(filename, int(line)) for filename, line in _TRACE_LINE.findall(text)]


def parse_recompile_reason(text: str) -> Dict[str, Any]:
    """reason (the failed guard as torch prints it), filename and lineno (where the guarded
    value comes from, when torch knows) of a recompile reason."""
    head, _, stack = text.partition("\nUser stack trace:")
    head = without_compile_id(head.strip())
    reason = _GUARD_COMMENT.sub("", head).strip()
    frames = _TRACE_FILE.findall(stack)
    filename, lineno = (frames[-1][0], int(frames[-1][1])) if frames else (None, None)
    if filename is None:
        # torch 2.10-2.12 give no stack, only the guard's own comment; its first failed guard.
        place = _GUARD_PLACE.search(head.splitlines()[0] if head else "")
        if place:
            filename, lineno = place.group(1).strip(), int(place.group(2))
    return {"reason": reason, "filename": filename, "lineno": lineno}


# torch ends some failed guards' comments with advice: "... in forward (HINT: torch.compile
# considers integer attributes of the nn.Module to be static. ...)" (torch 2.5+).
_GUARD_HINT = re.compile(r"\(HINT: (.+?)\)\s*$", re.M)


def recompile_hints(text: str) -> List[str]:
    """torch's hints in the comments of a recompile reason's failed guards, without repeats."""
    return list(dict.fromkeys(" ".join(hint.split()) for hint in _GUARD_HINT.findall(text)))


def readable_guard(text: str) -> str:
    """One guard check in the user's names: ``L['x']`` -> ``x``, ids spelled out."""
    text = unscoped(_TRAILING_COMMENT.sub("", text.strip()))
    check = id_check(text)
    if check is not None and check.kind == "type":
        return "type(%s) is the type seen when compiling" % check.subject
    if check is not None:
        return "%s is the object seen when compiling" % check.subject
    return text


def failed_guards(reason: str) -> List[FailedGuard]:
    """The checks a recompile reason names, most recent entry first (as torch lists them)."""
    found = []
    in_trace = False
    for line in reason.splitlines():
        line = line.strip()
        if line.startswith("- "):
            line = line[2:].strip()
        if not line or line.startswith(("Recompiling function", "triggered by the following guard failure")):
            continue
        if line.startswith("User stack trace"):
            in_trace = True  # "File ..., line N" and the line's text follow
            continue
        compile_id, rest = split_compile_id(line)
        if in_trace and compile_id is None:
            continue
        in_trace = False
        text = readable_guard(rest)
        if text:
            found.append(FailedGuard(text, compile_id))
    return found


def is_shape_guard(reason: str) -> bool:
    """Whether a recompile reason names a tensor's size or stride."""
    return _SHAPE_GUARD.search(reason) is not None


# --------------------------------------------------------------------------- graph breaks

_BREAK_AT = re.compile(r"^Graph break in user code at (.+):(\d+)$", re.M)
# torch 2.8+ ends a break's reason with the page of its graph-break code: ".../gb/gb0059.html".
_BREAK_CODE = re.compile(r"(https?://\S+)?/gb/gb(\d{4})\.html")
_HINT = re.compile(r"^\s*Hint: (.+)$", re.M)
# Lines of a graph-break reason that introduce it, explain or advise rather than say what happened.
_PREAMBLE = ("Graph Break Reason:", "Encountered graph break when attempting to trace")
_DETAILS = ("Explanation:", "Hint:", "Developer debug context:", "For more details")
# torch's words when it gives up on a whole frame at a graph break (torch 2.11+).
_SKIPPED = "skipping the function and falling back to eager"


def parse_graph_break(text: str) -> Dict[str, Any]:
    """reason, filename, lineno, gb_code, docs, hints of a ``dynamo_graph_break_reason``
    payload (torch's text)."""
    body = text.split("\nTraceback (most recent call last):", 1)[0]
    user, _, traceback_text = body.partition("User code traceback:")
    filename: Optional[str] = None
    lineno: Optional[int] = None
    match = _BREAK_AT.search(user)
    if match:
        filename, lineno = match.group(1), int(match.group(2))
    else:
        frames = _TRACE_FILE.findall(traceback_text or body)
        if frames:
            filename, lineno = frames[-1][0], int(frames[-1][1])
    code = _BREAK_CODE.search(user)
    return {
        "reason": _break_reason(user),
        "filename": filename,
        "lineno": lineno,
        "gb_code": "GB" + code.group(2) if code else None,
        "docs": code.group(0) if code and code.group(1) else None,
        "hints": [hint.strip() for hint in _HINT.findall(user)],
    }


def _break_reason(text: str) -> str:
    """The graph-break kind and torch's explanation: ``Failed to trace builtin operator:
    Dynamo does not know how to trace builtin operator `print` ...``."""
    reason = text.split("Graph Break Reason:", 1)[1] if "Graph Break Reason:" in text else text
    lines = [line.rstrip() for line in reason.strip().splitlines()]
    # The first paragraph says what Dynamo was doing ("Encountered graph break when
    # attempting to trace CALL ..."); the next one starts with the kind of break.
    paragraphs = "\n".join(lines).split("\n\n")
    head = paragraphs[1] if len(paragraphs) > 1 and paragraphs[0].startswith("Encountered") else paragraphs[0]
    head_lines = head.strip().splitlines()
    if not head_lines:
        return lines[0] if lines else ""
    kind = head_lines[0].strip()
    explanation = next(
        (line.strip()[len("Explanation:"):].strip() for line in head_lines if line.strip().startswith("Explanation:")),
        None,
    )
    return "%s: %s" % (kind, explanation) if explanation else kind


def break_summary(reason: str) -> str:
    """A graph-break reason on one line: what failed, and torch's explanation. The dump
    stores it so already; a dump written by torch's own logs may hold the whole paragraph."""
    lines = [line.strip() for line in reason.splitlines() if line.strip()]
    title = next((line for line in lines if not line.startswith(_PREAMBLE + _DETAILS)), None)
    explanation = next((line[len("Explanation:"):].strip() for line in lines if line.startswith("Explanation:")),
                       None)
    if title and explanation:
        return "%s: %s" % (title.rstrip(":"), explanation)
    return title or explanation or (lines[0] if lines else "(no reason given)")


def gave_up_on_frame(reason: str) -> bool:
    """Whether a graph-break reason says Dynamo gave up on the whole function."""
    return _SKIPPED in reason.lower()


# --------------------------------------------------------------------------- limits

# A compile refused because the frame has too many entries (torch's fail_reason).
_LIMIT_HIT = re.compile(r"recompile[_ ]limit|cache[_ ]size[_ ]limit|accumulated_recompile_limit", re.I)
_LIMIT_NAME = re.compile(r"Limit type: (\w+)")
_LIMIT_VALUE = re.compile(r"currently set to (\d+)")
_LIMIT_REACHED = re.compile(r"\b(\w*recompile_limit|cache_size_limit) reached")


def limit_reached(fail_reason: Optional[str]) -> Optional[Tuple[str, Optional[int]]]:
    """(the limit's name, its value) when a compile failed because its frame reached torch's
    limit on cache entries (the value None where torch does not say it, as 2.10 does not);
    None for any other outcome."""
    if not fail_reason or not _LIMIT_HIT.search(fail_reason):
        return None
    named = _LIMIT_NAME.search(fail_reason) or _LIMIT_REACHED.search(fail_reason)
    value = _LIMIT_VALUE.search(fail_reason)
    return (named.group(1) if named else "recompile_limit", int(value.group(1)) if value else None)


# --------------------------------------------------------------------------- generated code

# A kernel in Inductor's output code: ``triton_poi_fused_sin_0 = async_compile.triton(...``.
_KERNEL = re.compile(r"^([A-Za-z_][A-Za-z0-9_]*) = async_compile\.\w+\(")
# torch appends "# graph id: <id()>" to pre-grad listings.
_GRAPH_ID = re.compile(r"\n+ *# graph id: \d+\s*$")


def kernel_defined(line: str) -> Optional[str]:
    """The kernel a line of Inductor's output code defines, or None."""
    match = _KERNEL.match(line)
    return match.group(1) if match else None


def without_graph_id(listing: str) -> str:
    """A graph listing without the ``# graph id`` torch ends some with: a number that
    changes between runs."""
    return _GRAPH_ID.sub("\n", listing)


# --------------------------------------------------------------------------- provenance
#
# Inductor's provenance tracking writes two artifacts per compiled graph (torch 2.10-2.15):
# ``..._kernel_stack_traces``, {kernel key: [user stack trace, ...]}, and ``..._node_mappings``,
# {"postToPre": {post-grad node: [pre-grad nodes]}, "cppCodeToPost": {kernel key: [post-grad
# nodes]}, ...}. A kernel key is the kernel's name in the output code and a number:
# "cpp_fused_add_sin_0:1", "extern_kernels.mm:2" (a name used twice gets two numbers).

# A node's line in an FX graph listing: ``sin: "f32[4]..." = torch.sin(l_x_)``, ``l_x_ = L_x_``.
_FX_NODE = re.compile(r'^\s*([A-Za-z_][A-Za-z0-9_]*)(?:: "[^"]*")? = (?!=)')


class KernelNodes(NamedTuple):
    """The FX nodes behind one kernel, as Inductor's node mappings give them."""

    #: Nodes of the graph after Inductor's pre-grad passes (Dynamo's node names).
    pre_grad: List[str]
    #: Nodes of the graph after Inductor's post-grad passes that the kernel computes.
    post_grad: List[str]


def kernel_name(key: str) -> str:
    """The kernel's name in the output code, from a provenance key: ``cpp_fused_add_sin_0``."""
    return key.split(":")[0]


def _json_object(payload: str) -> Dict[str, Any]:
    try:
        found = json.loads(payload)
    except ValueError:
        return {}
    return found if isinstance(found, dict) else {}


def _strings(items: Any) -> List[str]:
    return [item for item in items if isinstance(item, str)] if isinstance(items, list) else []


class CacheDetails(NamedTuple):
    """What a compile-cache artifact (``fx_graph_cache_miss``, ``aotautograd_cache_bypass``,
    ...) says besides its result."""

    #: torch's reason for a bypass (``cache_bypass_reason``), or its kind of miss
    #: (``cache_status_detailed`` when it is more than the result: "full_miss"); None if none.
    reason: Optional[str]
    #: Compile seconds a hit saved, as measured when the artefact was compiled; None if unknown.
    saved_s: Optional[float]


def cache_details(payload: str) -> CacheDetails:
    """The reason and the time saved in the JSON payload of a compile-cache artifact."""
    data = _json_object(payload)
    reason = data.get("cache_bypass_reason")
    if not isinstance(reason, str) or not reason:
        detailed = data.get("cache_status_detailed")
        state = data.get("cache_state")
        reason = detailed if isinstance(detailed, str) and detailed not in ("hit", "miss", "bypass", state) else None
    saved = None
    for key, scale in (("time_saved_ms", 1e-3), ("time_saved_ns", 1e-9)):
        value = data.get(key)
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            saved = round(float(value) * scale, 6)
            break
    return CacheDetails(reason, saved)


def kernel_stack_lines(payload: str) -> Dict[str, List[Tuple[str, int]]]:
    """Kernel key -> (file, line) of each user line it computes: the innermost frame of each
    of its stack traces, in order, without repeats."""
    result = {}
    for key, stacks in _json_object(payload).items():
        lines: List[Tuple[str, int]] = []
        for stack in _strings(stacks):
            found = trace_places(stack)
            if found and found[-1] not in lines:
                lines.append(found[-1])
        result[key] = lines
    return result


def kernel_nodes(payload: str) -> Dict[str, KernelNodes]:
    """Kernel key -> the FX nodes it computes, from Inductor's node mappings."""
    mappings = _json_object(payload)
    to_post = mappings.get("cppCodeToPost")
    post_to_pre = mappings.get("postToPre")
    post_to_pre = post_to_pre if isinstance(post_to_pre, dict) else {}
    result = {}
    for key, post in (to_post.items() if isinstance(to_post, dict) else ()):
        post_nodes = _strings(post)
        pre_nodes: List[str] = []
        for node in post_nodes:
            pre_nodes += [pre for pre in _strings(post_to_pre.get(node)) if pre not in pre_nodes]
        result[key] = KernelNodes(pre_grad=pre_nodes, post_grad=post_nodes)
    return result


# The comment above the nodes a user line made, in an FX graph listing:
# ``# File: /abs/prog.py:12 in f, code: y = torch.sin(x) + 1``.
_LISTING_PLACE = re.compile(r"^\s*# File: (.+?):(\d+) in \S+, code: ")


class ListedNode(NamedTuple):
    """One node of an FX graph listing."""

    #: Its name: ``sin``, ``l_x_``.
    name: str
    #: The listing's line that defines it (from 1).
    line: int
    #: (file, line) of the user line that made it, from the ``# File:`` comment above it;
    #: None for nodes no user line made (inputs, outputs).
    place: Optional[Tuple[str, int]]


def fx_node_defined(line: str) -> Optional[str]:
    """The node a line of an FX graph listing defines, or None."""
    match = _FX_NODE.match(line)
    return match.group(1) if match else None


def listing_nodes(text: str) -> List[ListedNode]:
    """The nodes of an FX graph listing, each with the user line that made it."""
    nodes = []
    place: Optional[Tuple[str, int]] = None
    for number, line in enumerate(text.split("\n"), 1):
        found = _LISTING_PLACE.match(line)
        if found:
            place = (found.group(1), int(found.group(2)))
            continue
        if not line.strip():
            place = None  # torch leaves a blank line after each user line's nodes
            continue
        name = fx_node_defined(line)
        if name is not None:
            nodes.append(ListedNode(name, number, place))
    return nodes


# --------------------------------------------------------------------------- guards as Python


# Names that torch's guards use for Dynamo's own modules.
_DYNAMO_NAMES = ("utils_device.",)


def render_guard(code_parts: Sequence[str], local_names: Sequence[str] = ()) -> str:
    """Render torch's guard code parts as one Python expression, plus comments.

    Parts that have a Python meaning become clauses of a parenthesized ``and``; ``L['x']``
    becomes ``x`` and ``G['x']`` becomes ``x`` (``globals()['x']`` when a local shadows
    it). The rest (checks on torch's global state, parts that do not parse) follow as
    ``#`` comments. The result always parses with :func:`ast.parse`.
    """
    names = frozenset(local_names)
    clauses, others = [], []
    for part in code_parts:
        clause = _guard_clause(" ".join(part.split()), names)
        if clause is None:
            others.append("# " + " ".join(part.split()))
        else:
            clauses.append(clause)
    if not clauses:
        head = ["True"]
    elif len(clauses) == 1:
        head = [clauses[0]]
    else:
        head = ["("] + ["    " + clauses[0]] + ["    and " + c for c in clauses[1:]] + [")"]
    return "\n".join(head + others)


def _guard_clause(part: str, names: frozenset) -> Optional[str]:
    """One guard code part as a Python expression, or None."""
    part, type_name = split_type_suffix(part)
    part = unscoped(part, names)
    check = id_check(part)
    if check is not None:
        if check.kind == "type":
            if type_name is not None and hasattr(builtins, type_name):
                return "type(%s) is %s" % (check.subject, type_name)
            return "id(type(%s)) == %s" % (check.subject, check.number)
        return "id(%s) == %s" % (check.subject, check.number)
    tensor = tensor_check(part)
    if tensor is not None:
        return _tensor_clause(tensor)
    if "___" in part or part.startswith(_DYNAMO_NAMES):  # meaningless outside Dynamo
        return None
    return part if parses(part) else None


def parses(text: str) -> bool:
    """Whether ``text`` is one Python expression."""
    try:
        ast.parse(text, mode="eval")
    except SyntaxError:
        return False
    return True


def _tensor_clause(tensor: TensorCheck) -> str:
    subject, dtype, requires_grad = tensor.subject, tensor.dtype, tensor.requires_grad
    size, stride = tensor.size, tensor.stride
    clauses = ["%s.dtype == %s" % (subject, dtype), "%s.requires_grad is %s" % (subject, requires_grad)]
    sizes, strides = _dims(size), _dims(stride)
    if "None" in sizes:  # a dynamic dimension: check the known ones one by one
        clauses.append("%s.dim() == %d" % (subject, len(sizes)))
    for what, dims in (("size", sizes), ("stride", strides)):
        if "None" in dims:
            clauses += ["%s.%s(%d) == %s" % (subject, what, i, d) for i, d in enumerate(dims) if d != "None"]
        else:
            clauses.append("%s.%s() == %s" % (subject, what, _tuple_text(dims)))
    return " and ".join(clauses)


def _tuple_text(items: List[str]) -> str:
    return "(%s,)" % items[0] if len(items) == 1 else "(%s)" % ", ".join(items)


def _dims(text: str) -> List[str]:
    return [d.strip() for d in text.split(",") if d.strip()]
