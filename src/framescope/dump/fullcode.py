"""``full_code_for_<fn>.py``: everything torch.compile made for one frame, as one Python file.

The file is for reading: the original function, then per cache entry its guard as a Python
function of ``L`` (the frame's locals) and ``G`` (its globals) and its transformed code, stubs
for the compiled graphs and resume functions it calls, and a dispatcher that shows in which
order torch tries the entries. It always compiles; the code that runs is in the
``__transformed_code_*`` files.
"""
from __future__ import annotations

import ast
import functools
import inspect
import keyword
import re
import textwrap
import types
from typing import TYPE_CHECKING, Dict, List, Optional, Sequence

from framescope import torch_text
from framescope.dump import guards as _guards
from framescope.dump import live_guards
from framescope.dump import naming, transformed

if TYPE_CHECKING:
    from framescope.dump.session import DumpSession, FrameState

# Longest torch guard text repeated in a comment; the whole text is in index.json.
_COMMENT_LIMIT = 160


def write(session: "DumpSession", state: "FrameState") -> None:
    """(Re)write the full-code file of a frame, unless nothing it shows has changed since."""
    shown = _shown(session, state)
    if shown == state.full_code_shown:
        return
    with transformed.collector_paused():
        text = render(session, state)
    session.write(state.record["full_code"], text)
    state.full_code_shown = shown


def _shown(session: "DumpSession", state: "FrameState") -> tuple:
    """What a frame's full-code file shows that can change while the dump runs: its entries
    and their guards, the resume functions and graphs they call (and those graphs' files)."""
    entries = tuple((entry["index"], len(entry["guard"]), entry.get("guard_count"), tuple(entry["calls_resume"]),
                     tuple(entry["graphs"]), entry.get("recompile_reason"))
                    for entry in state.record["entries"])
    graphs = tuple(tuple(_graph_files(session, name)) for entry in state.record["entries"] for name in entry["graphs"])
    resumes = tuple((name, session.frame_id(code)) for name, code in sorted(state.resume_globals.items()))
    return (entries, resumes, graphs, tuple(state.guard_leaves), state.record["resume_of"])


def render(session: "DumpSession", state: "FrameState") -> str:
    """The text of a frame's full-code file."""
    frame = state.record
    code = state.code
    if state.original_source is None:
        state.original_source = original_source(code)
    entries = frame["entries"]
    clauses = [guard_clauses(session, state, entry) for entry in entries]
    used = set()
    for items in clauses:
        used |= _guards.helpers_used(items)

    intro = [
        "# Everything torch.compile made for %s (%s:%d), in one Python file to read."
        % (frame["qualname"], frame["filename"], frame["firstlineno"]),
        "# It is not what runs: each cache entry runs the code of its __transformed_code_* file.",
        "# Guards are functions of L (the frame's local variables) and G (its global variables).",
    ]
    if frame["resume_of"]:
        intro.append(
            "# %s continues %s after a graph break, at line %s."
            % (frame["name"], frame["resume_of"], frame["resume_line"])
        )
    sections: List[str] = ["\n".join(intro)]
    modules = ["torch"] + sorted({_guards.NEEDS[name] for name in used if name in _guards.NEEDS})
    imports = ["import %s" % module for module in modules]
    if "utils_device" in used:
        imports.append(_guards.HELPERS["utils_device"])
    sections.append("\n".join(imports))
    helpers = [_guards.HELPERS[name] for name in _guards.HELPERS if name in used and name != "utils_device"]
    if helpers:
        title = "# Helpers for guard checks that have no plain Python spelling.\n\n"
        sections.append(title + "\n\n\n".join(helpers))
    sections.append(_original_section(frame, state.original_source, code.co_freevars))
    stubs = _stubs(session, state)
    if stubs:
        sections.append(stubs)
    for entry, items, source in zip(entries, clauses, state.entry_sources):
        sections.append(_guard_function(entry, items))
        sections.append(_transformed_function(frame, entry, code, source))
    sections.append(_dispatcher(frame, code, state.original_source))
    # Each section is whole top-level statements, so the file compiles when each one does.
    text = "\n\n\n".join(section if _compiles(section) else _commented(section) for section in sections)
    text = text.rstrip("\n") + "\n"
    if not _compiles(text):  # never seen; a file of comments is still better than none
        text = _commented(text) + "\n"
    return text


def original_source(code: types.CodeType) -> Optional[str]:
    """Source of the original function: from its file, else decompiled; None if neither."""
    if torch_text.resume_line(code.co_name) is None:
        try:
            source = textwrap.dedent(inspect.getsource(code))
        except (OSError, TypeError, IndentationError):
            source = None
        if source is not None and _compiles(source):
            return source.rstrip("\n")
    try:
        if torch_text.resume_line(code.co_name) is not None:
            # Resume functions are machine-made: torch writes them as bytecode.
            from framescope.decompiler.machine import decompile_transformed

            return decompile_transformed(code, indent=4).rstrip("\n")
        from framescope import decompile

        return decompile(code).rstrip("\n")
    except Exception:  # no source and no decompilation: the section says so
        return None


def _original_section(frame: Dict, source: Optional[str], free: Sequence[str]) -> str:
    title = "# ---- %s as written (%s:%d)" % (frame["qualname"], frame["filename"], frame["firstlineno"])
    if frame["resume_of"]:
        title = "# ---- %s, made by torch.compile to continue %s after a graph break" % (
            frame["name"], frame["resume_of"])
    if source is None:
        return title + "\n# (no source, and framescope could not decompile it)"
    return title + "\n" + closure_def(source, frame["name"], free)


def _stubs(session: "DumpSession", state: "FrameState") -> str:
    """Stand-ins for the graphs and resume functions that transformed code calls."""
    lines: List[str] = []
    graphs: List[str] = []
    for entry in state.record["entries"]:
        graphs += [name for name in entry["graphs"] if name not in graphs]
    for name in graphs:
        files = _graph_files(session, name)
        where = ", ".join(files) if files else "%s.dynamo.py" % name
        lines += [
            "def %s(*args):" % name,
            '    """A graph compiled by torch.compile: see %s."""' % where,
            "    ...",
            "",
            "",
        ]
    for name, resume in state.resume_globals.items():
        frame_id = session.frame_id(resume)
        where = "not compiled yet" if frame_id is None else "see %s" % naming.full_code_file(frame_id)
        lines += [
            "def %s(*args):" % name,
            '    """Continues %s after a graph break, at line %s (%s)."""'
            % (state.record["name"], torch_text.resume_line(resume.co_name), where),
            "    ...",
            "",
            "",
        ]
    if not lines:
        return ""
    return "# ---- what the transformed code calls\n\n" + "\n".join(lines).rstrip("\n")


def _graph_files(session: "DumpSession", name: str) -> List[str]:
    for graph in session.graphs:
        if graph.get("name") == name:
            return sorted((graph.get("files") or {}).values())
    return []


def guard_clauses(session: "DumpSession", state: "FrameState", entry: Dict) -> List[_guards.Clause]:
    """The clauses of an entry's guard function: every leaf of torch's guard tree where it
    was read, else torch's printed guard parts (a torch whose tree framescope cannot read)."""
    leaves = state.guard_leaves.get(entry["index"])
    if leaves is None:
        return _guards.render(entry["guard"])
    return _guards.render_leaves(leaves, live_guards.entry_key(session.root, state.record["id"], entry["index"]))


def _guard_function(entry: Dict, clauses: Sequence[_guards.Clause]) -> str:
    lines = [
        "# ---- cache entry %d (torch.compile id %s): %s"
        % (entry["index"], entry["compile_id"], entry["file"]),
        "",
        "def %s(L, G):" % entry["guard_function"],
    ]
    if entry.get("recompile_reason"):
        reason = _one_line(entry["recompile_reason"]).replace('"', "'")
        lines.append('    """Made because earlier entries failed on: %s"""' % reason)
    if not clauses:
        lines.append("    return True  # the guard was not known when this file was written")
        return "\n".join(lines)
    if entry.get("guard_count") is not None:
        lines.append("    # torch makes %d checks for this entry, each one below; a check that fails" % entry["guard_count"])
        lines.append("    # with an error fails the guard, as in torch.")
    lines.append("    try:")
    lines.append("        return (")
    for n, clause in enumerate(clauses):
        prefix = "            " if n == 0 else "            and "
        expr_lines = clause.expr.splitlines() or [clause.expr]
        body = [prefix + expr_lines[0]] + ["            " + line for line in expr_lines[1:]]
        if clause.original is not None and clause.original != clause.expr:
            body[-1] += "  # torch: " + _truncate(clause.original)
        lines += body
    lines.append("        )")
    lines.append("    except Exception:")
    lines.append("        return False")
    return "\n".join(lines)


def _transformed_function(frame: Dict, entry: Dict, code: types.CodeType, source: Optional[str]) -> str:
    name = "__transformed_code_%d_for_%s" % (entry["index"], frame["id"])
    if source is None:
        return "\n".join(
            [
                "def %s(%s):" % (name, signature(code)),
                '    """Not decompiled (%s): see %s for Dynamo\'s bytecode."""'
                % (_one_line(entry["fallback_reason"] or "").replace('"', "'"), entry["file"]),
                "    ...",
            ]
        )
    return closure_def(_rename_def(source, name), name, code.co_freevars)


def closure_def(source: str, name: str, free: Sequence[str]) -> str:
    """``source`` (a ``def`` of ``name``) as top-level code that defines ``name``; a closure
    goes into a factory that binds its free variables, called once."""
    if not free or not _defines(source, name):
        return source
    factory = transformed.wrapped(source.rstrip("\n") + "\n", name, free)
    return "\n".join(factory + ["", "", "%s = __closure_of_%s()" % (name, name)])


def _rename_def(source: str, name: str) -> str:
    tree = ast.parse(source)
    node = next(n for n in tree.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)))
    lines = source.splitlines()
    row = node.lineno - 1
    head = r"^(\s*(?:async\s+)?def\s+)%s\b" % re.escape(node.name)
    lines[row] = re.sub(head, r"\g<1>" + name, lines[row], count=1)
    return "\n".join(lines)


def _dispatcher(frame: Dict, code: types.CodeType, source: Optional[str]) -> str:
    call = call_arguments(code)
    lines = [
        "# ---- how torch picks an entry",
        "",
        "def __dispatch_for_%s(L, G):" % frame["id"],
        '    """Run the first cache entry whose guard passes.',
        "",
        "    Newest entry first, as right after the last compile; torch moves an entry that",
        '    passes to the front, so at run time the most recently used one is tried first."""',
    ]
    for entry in reversed(frame["entries"]):
        lines.append("    if %s(L, G):" % entry["guard_function"])
        lines.append("        return __transformed_code_%d_for_%s(%s)" % (entry["index"], frame["id"], call))
    lines.append("    # No guard passes: torch.compile compiles %s again, into a new entry." % frame["name"])
    if source is not None and _defines(source, code.co_name):
        lines.append("    return %s(%s)" % (code.co_name, call))
    else:
        lines.append('    raise LookupError("no cache entry of %s applies")' % frame["name"])
    return "\n".join(lines)


def signature(code: types.CodeType) -> str:
    """A parameter list with the code object's parameters (no defaults)."""
    names = code.co_varnames
    positional = code.co_argcount
    posonly = getattr(code, "co_posonlyargcount", 0)
    kwonly = code.co_kwonlyargcount
    params = list(names[:posonly])
    if posonly:
        params.append("/")
    params += names[posonly:positional]
    rest = positional + kwonly
    if code.co_flags & inspect.CO_VARARGS:
        params.append("*" + names[rest])
        rest += 1
    elif kwonly:
        params.append("*")
    params += names[positional : positional + kwonly]
    if code.co_flags & inspect.CO_VARKEYWORDS:
        params.append("**" + names[rest])
    return ", ".join(params)


def call_arguments(code: types.CodeType) -> str:
    """Arguments that call a function with ``code``'s parameters from a locals dict ``L``."""
    names = code.co_varnames
    positional = code.co_argcount
    kwonly = code.co_kwonlyargcount
    args = ["L[%r]" % name for name in names[:positional]]
    rest = positional + kwonly
    if code.co_flags & inspect.CO_VARARGS:
        args.append("*L[%r]" % names[rest])
        rest += 1
    args += ["%s=L[%r]" % (name, name) for name in names[positional : positional + kwonly]]
    if code.co_flags & inspect.CO_VARKEYWORDS:
        args.append("**L[%r]" % names[rest])
    return ", ".join(args)


def _defines(source: str, name: str) -> bool:
    if not name.isidentifier() or keyword.iskeyword(name):
        return False
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return False
    return any(
        isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name == name for node in tree.body
    )


@functools.lru_cache(maxsize=1024)
def _compiles(text: str) -> bool:
    try:
        compile(text, "<full code>", "exec", dont_inherit=True)
    except (SyntaxError, ValueError):
        return False
    return True


def _commented(section: str) -> str:
    return "# (framescope: this part is not valid Python, so it is shown as comments)\n" + "\n".join(
        "# " + line if line else "#" for line in section.splitlines()
    )


def _one_line(text: str) -> str:
    return " ".join(str(text).split())


def _truncate(text: str) -> str:
    text = _one_line(text)
    return text if len(text) <= _COMMENT_LIMIT else text[: _COMMENT_LIMIT - 3] + "..."
