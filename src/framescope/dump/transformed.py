"""``__transformed_code_<i>_for_<fn>.py``: one cache entry's code, as the Python it runs from.

Dynamo's bytecode is decompiled into a ``def``; the file is compiled, the function's code
object is taken out of it, checked against Dynamo's (validate.py), and handed back to torch,
so the cache entry runs code whose ``co_filename`` is the dumped file. When any step fails
the file says why and shows Dynamo's bytecode as comments, and Dynamo's own code runs.
"""
from __future__ import annotations

import __future__
import ast
import contextlib
import dis
import gc
import types
from dataclasses import dataclass
from typing import Callable, Dict, FrozenSet, Iterator, List, Mapping, Optional, Sequence, Set, Tuple, Union

from framescope import torch_text
from framescope.dump import naming, validate
from framescope.dump.source_cache import SourceCache, constant_places, constants_at

# Future-import flags a code object may carry; the recompiled file must enable the same.
# (nested_scopes shares its bit with CO_NESTED and changes nothing.)
_FUTURE_FLAGS = 0
for _feature in __future__.all_feature_names:
    _FUTURE_FLAGS |= getattr(__future__, _feature).compiler_flag
_FUTURE_FLAGS &= ~__future__.nested_scopes.compiler_flag


@dataclass
class Result:
    """What became of one cache entry's code."""

    #: The text of the dumped file.
    text: str
    #: The code compiled from the file, to run in the cache entry; None: Dynamo's runs.
    code: Optional[types.CodeType]
    #: The ``def`` as in the file (uuid-free names, declarations added, no factory), for the
    #: full-code file; None on failure.
    source: Optional[str]
    #: Why the file holds Dynamo's bytecode instead of Python; None when decompiled.
    reason: Optional[str]
    #: The dump's name of each graph the code calls (as the file and ``source`` name it) ->
    #: torch's name for it (the global the code loads); empty on failure.
    aliases: Dict[str, str]


@contextlib.contextmanager
def collector_paused():  # type: ignore[no-untyped-def]
    """Python's cyclic garbage collector off while a file of the dump is made (if it was on).
    Its full collections walk the whole heap, a large model's included, and the trees the
    decompiler and the guard writer build set them off ever more often the longer the code: a
    fifth of the time at 48 layers, and one full collection of a transformers model's heap
    takes a quarter of a second. The cycles made meanwhile are collected once it is back on."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


@collector_paused()
def make(
    original: types.CodeType,
    dynamo: types.CodeType,
    filename: str,
    header: Sequence[str],
    graph_name: Callable[[str], str] = torch_text.stable_graph_name,
    module_globals: Optional[Dict[str, object]] = None,
    graph_inputs: Mapping[str, Sequence[str]] = {},
    sources: Optional[SourceCache] = None,
) -> Result:
    """Decompile, compile and check Dynamo's code for one entry; never raises for bad code.

    ``graph_name`` gives the dump's name for each of torch's graph names: the file calls
    graphs by the dump's names, while the code compiled from it still loads torch's.
    Constants of Dynamo's code that no literal spells (a ``torch.dtype``, a module's globals,
    a code object) are read from globals of the function's module, ``module_globals``, bound
    once the code passed its checks; without them such code keeps Dynamo's bytecode.
    ``graph_inputs`` maps torch's name of a graph to the names its listing gives its inputs:
    the values the code passes it are named so (``l_x_``), as in the graph's file.
    ``sources``: decompiled texts kept by earlier runs (source_cache); a text found there is
    compiled and checked as a fresh one is, and a fresh one that passed is kept there.
    """
    constants: Dict[str, object] = {}

    def constant_name(value: object) -> str:
        if module_globals is None:
            raise ValueError("a constant of type %s needs the module's globals" % type(value).__name__)
        for ident, bound in constants.items():
            if bound is value:
                return ident
        taken = dict(module_globals)
        taken.update(constants)
        ident = naming.constant_global(value, taken)
        constants[ident] = value
        return ident

    # The dump's name -> torch's, for each graph the code calls and each global torch named
    # after an object's id().
    aliases = {graph_name(name): name for name in _names(dynamo) if torch_text.is_graph_name(name)}
    aliases.update(_stable_globals(dynamo, set(aliases) | set(module_globals or ())))
    try:
        from framescope.decompiler.machine import decompile_transformed

        named = dynamo
        if not dynamo.co_name.isidentifier():
            # A lambda's "<lambda>" cannot name a def; _rename gives the name back.
            named = dynamo.replace(co_name=naming.sanitise(dynamo.co_name))
        # The locals Dynamo added (tmp_3, graph_out_0) only its own code reads; a graph's
        # outputs stay under their name, where a debugger shows them after the graph call.
        scratch = frozenset(dynamo.co_varnames) - frozenset(original.co_varnames)
        renames = {long: short for short, long in aliases.items()}
        modules = _module_globals(dynamo, module_globals)

        def parameters(name: str) -> Optional[Sequence[str]]:
            return graph_inputs.get(name) or _parameters(module_globals, name)

        key = None if sources is None else sources.key(named, renames, _told(dynamo, parameters, renames, modules))
        kept = None if key is None else _kept(sources.get(key), dynamo, module_globals, constants)
        if kept is not None:
            try:
                text, code, source = _checked(original, dynamo, kept, filename, header, aliases, constants)
            except Exception:  # a kept text that no longer passes: decompile afresh
                kept = None
                constants.clear()
        if kept is None:
            fresh = decompile_transformed(named, indent=4, constant_name=constant_name, parameters=parameters,
                                          scratch=scratch,
                                          shown=frozenset(filter(torch_text.is_graph_output, scratch)),
                                          modules=modules)
            fresh = torch_text.rename_globals(fresh, renames)
            text, code, source = _checked(original, dynamo, fresh, filename, header, aliases, constants)
            places = constant_places(dynamo, constants)
            if key is not None and places is not None:
                sources.put(key, fresh, places)
        if module_globals is not None:
            module_globals.update(constants)
    except Exception as exc:  # the decompiler's own errors and anything else it raises
        reason = "%s: %s" % (type(exc).__name__, " ".join(str(exc).split()))
        return Result(fallback_text(header, reason, dynamo), None, None, reason, {})
    code = _rename(code, original)
    return Result(text, code, source, None, aliases)


def resume_code(value: object) -> Optional[types.CodeType]:
    """The code of a resume function global: the function itself, or, for resume functions
    with free variables, a factory that holds the code in its closure."""
    code = getattr(value, "__code__", None)
    if isinstance(code, types.CodeType) and torch_text.resume_line(code.co_name) is not None:
        return code
    for cell in getattr(value, "__closure__", None) or ():
        try:
            content = cell.cell_contents
        except ValueError:  # an empty cell
            continue
        if isinstance(content, types.CodeType) and torch_text.resume_line(content.co_name) is not None:
            return content
    return None


def _kept(found: Optional[Tuple[str, Dict[str, List[int]]]], dynamo: types.CodeType,
          module_globals: Optional[Dict[str, object]], constants: Dict[str, object]) -> Optional[str]:
    """A kept text whose constants are in this code and whose globals for them are free (or
    hold them already), with those constants put in ``constants``; else None."""
    if found is None:
        return None
    text, places = found
    bound = constants_at(dynamo, places)
    if bound is None or (bound and module_globals is None):
        return None
    for name, value in bound.items():
        if name in (module_globals or {}) and module_globals[name] is not value:
            return None
    constants.update(bound)
    return text


def _checked(original: types.CodeType, dynamo: types.CodeType, source: str, filename: str, header: Sequence[str],
             aliases: Dict[str, str], constants: Dict[str, object]) -> Tuple[str, types.CodeType, str]:
    """The file's text, the code compiled from it (loading torch's names) and the ``def`` as
    the file has it, for the decompiled ``source``; raises when the code is not Dynamo's."""
    text, code, compiled_source = _compile(original, dynamo, source, filename, header)
    code = _load_as(code, aliases)
    validate.check(dynamo, code, constants=constants)
    return text, code, compiled_source


def _told(code: types.CodeType, parameters: Callable[[str], Optional[Sequence[str]]], renames: Mapping[str, str],
          modules: FrozenSet[str]) -> List[object]:
    """What the decompiler is told besides the code, for the key of its text: the parameter
    names of each function the code calls by a global, and the globals that are modules."""
    told: List[object] = [("modules", tuple(sorted(renames.get(name, name) for name in modules)))]
    for name in _names(code):
        found = parameters(name)
        if found is not None:
            told.append((renames.get(name, name), tuple(found)))
    return told


def _module_globals(code: types.CodeType, module_globals: Optional[Dict[str, object]]) -> FrozenSet[str]:
    """The globals ``code`` reads that hold modules (torch's ``__import_torch_dot_...``)."""
    if module_globals is None:
        return frozenset()
    return frozenset(name for name in code.co_names if isinstance(module_globals.get(name), types.ModuleType))


def _parameters(module_globals: Optional[Dict[str, object]], name: str) -> Optional[List[str]]:
    """The positional parameters of the function a global holds (a resume function), if any."""
    value = None if module_globals is None else module_globals.get(name)
    code = resume_code(value) if torch_text.is_resume_global(name) else getattr(value, "__code__", None)
    if not isinstance(code, types.CodeType):
        return None
    return list(code.co_varnames[:code.co_argcount])


def _stable_globals(code: types.CodeType, taken: Set[str]) -> Dict[str, str]:
    """A name without an id() -> torch's name, for each such global ``code`` loads: the same
    text on every run. A name already taken gets a number."""
    found: Dict[str, str] = {}
    for name in _names(code):
        stable = torch_text.stable_global_name(name)
        if stable == name:
            continue
        candidate, number = stable, 1
        while candidate in taken or candidate in found or candidate in code.co_names:
            number += 1
            candidate = "%s_%d" % (stable, number)
        found[candidate] = name
    return found


def _names(code: types.CodeType) -> List[str]:
    """``co_names`` of ``code`` and of the code objects nested in it, each name once."""
    found = list(code.co_names)
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            found += [name for name in _names(const) if name not in found]
    return found


def _load_as(code: types.CodeType, names: Dict[str, str]) -> types.CodeType:
    """``code`` (and the code nested in it) with each name of ``names`` in ``co_names``
    replaced by the name it maps to.

    The file says ``__compiled_fn_1(x)``, the code loads torch's ``__compiled_fn_7_<uuid>``:
    the dump's names start at 1 in every dump, so in a second dump of one process the
    same name means another graph, and the code of the first dump must keep calling its own.
    torch's names are unique, and torch keeps each global as long as the code that uses it.
    """
    if not names:
        return code
    consts = tuple(
        _load_as(const, names) if isinstance(const, types.CodeType) else const for const in code.co_consts
    )
    return code.replace(co_names=tuple(names.get(name, name) for name in code.co_names), co_consts=consts)


def install_aliases(result: Result, module_globals: Dict[str, object]) -> None:
    """Make the dump's graph names of ``result`` global names of the function's module,
    bound to the graphs, so that a debugger can evaluate them (the code does not use them).

    A name is bound only where it is free or holds a graph framescope bound it to before
    (an earlier dump's): never over a global of the program's own.
    """
    for short, name in result.aliases.items():
        if name not in module_globals:
            continue
        key = (id(module_globals), short)
        if short in module_globals and _bound.get(key) != id(module_globals[short]):
            continue
        module_globals[short] = module_globals[name]
        _bound[key] = id(module_globals[name])


# (id of a module's globals, alias name) -> id of the graph framescope bound the name to.
_bound: Dict[Tuple[int, str], int] = {}


def _compile(
    original: types.CodeType, dynamo: types.CodeType, source: str, filename: str, header: Sequence[str]
) -> Tuple[str, types.CodeType, str]:
    """The file text, the function code compiled from it (with the same free variables and
    cells as Dynamo's code) and the ``def`` as it is in the file."""
    name = _def_name(source)
    body = source.rstrip("\n") + "\n"
    for _ in range(2):
        # The code first, its def on line 1 as depyf writes it (a breakpoint at line 2 stops
        # at its first statement); what it is, below it.
        text = "\n".join(wrapped(body, name, dynamo.co_freevars) + [""] + list(header)) + "\n"
        flags = dynamo.co_flags & _FUTURE_FLAGS
        module = compile(_one_line_statements(text, filename, flags), filename, "exec", flags=flags,
                         dont_inherit=True)
        code = _find(module, name, bool(dynamo.co_freevars))
        free = [n for n in dynamo.co_freevars if n not in code.co_freevars]
        cells = [n for n in dynamo.co_cellvars if n not in code.co_cellvars]
        if not free and not cells:
            return text, code, body
        # Dynamo's code keeps every cell and free variable of the original even where it
        # no longer uses them; declare them so that the layout torch copies into matches.
        body = _declare(body, free, cells)
    return text, code, body


# The statements the decompiler's printer writes one argument a line when a call is long.
_WRAPPABLE = (ast.Assign, ast.Expr, ast.Return)


def _one_line_statements(text: str, filename: str, flags: int) -> Union[str, ast.Module]:
    """What to compile for the file ``text``: the text itself, or, where a call is written one
    argument a line, its tree with each such statement on the statement's first line. The
    code then runs the statement as one line, as if written on one: a breakpoint on it stops
    once per run (else CPython reports the arguments' lines, then the call's line again) and
    ``next`` goes past it in one step. Other lines keep their numbers."""
    if "(\n" not in text:
        return text
    tree = compile(text, filename, "exec", flags=flags | ast.PyCF_ONLY_AST, dont_inherit=True)
    lines = text.split("\n")
    for stmt in _statements(tree.body):
        if isinstance(stmt, _WRAPPABLE) and (stmt.end_lineno or stmt.lineno) > stmt.lineno:
            _onto_line(stmt, stmt.lineno, len(lines[stmt.lineno - 1].encode("utf-8")))
    return tree


def _statements(nodes: Sequence[ast.AST]) -> Iterator[ast.AST]:
    """The statements among ``nodes`` and in their blocks, without walking expressions."""
    for node in nodes:
        yield node
        for field in ("body", "orelse", "finalbody", "handlers", "cases"):
            inner = getattr(node, field, None)
            if isinstance(inner, list):
                yield from _statements(inner)


def _onto_line(stmt: ast.stmt, row: int, width: int) -> None:
    """Put every node of ``stmt`` on line ``row`` (``width`` bytes long): what starts or ends
    on a later line starts or ends at the end of ``row``."""
    for node in ast.walk(stmt):
        if getattr(node, "end_lineno", None) is None:
            continue  # no position (Load, an operator)
        if node.lineno != row:
            node.col_offset = width
        if node.end_lineno != row:
            node.end_col_offset = width
        node.lineno = node.end_lineno = row


def _def_name(source: str) -> str:
    tree = ast.parse(source)
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            return node.name
    raise ValueError("the decompiler returned no def")


def wrapped(body: str, name: str, free: Sequence[str]) -> List[str]:
    """The lines of a ``def``; for a closure inside a factory that binds its free variables."""
    if not free:
        return body.splitlines()
    lines = ["def __closure_of_%s():" % name]
    lines.append("    # %s's free variables: when it runs, its closure supplies them" % name)
    lines += ["    %s = None" % var for var in free]
    lines += [("    " + line) if line else "" for line in body.splitlines()]
    lines.append("    return %s" % name)
    return lines


def _declare(body: str, free: Sequence[str], cells: Sequence[str]) -> str:
    """``body`` with declarations that make ``free`` free and ``cells`` cell variables."""
    func = ast.parse(body).body[0]
    first = func.body[0]  # type: ignore[attr-defined]
    lines = body.splitlines()
    indent = " " * first.col_offset
    added = []
    if free:
        added.append("%snonlocal %s  # free variables of the original" % (indent, ", ".join(free)))
    if cells:
        names = ", ".join(cells)
        added.append("%sif False:  # keeps %s a cell variable, as in the original" % (indent, names))
        added += ["%s    %s = lambda: %s" % (indent, var, var) for var in cells]
    row = first.lineno - 1
    if hasattr(first, "decorator_list") and first.decorator_list:
        row = first.decorator_list[0].lineno - 1
    return "\n".join(lines[:row] + added + lines[row:]) + "\n"


def _find(module: types.CodeType, name: str, in_factory: bool) -> types.CodeType:
    scope = module
    if in_factory:
        scope = _child(module, "__closure_of_%s" % name)
    return _child(scope, name)


def _child(code: types.CodeType, name: str) -> types.CodeType:
    for const in code.co_consts:
        if isinstance(const, types.CodeType) and const.co_name == name:
            return const
    raise ValueError("the compiled file defines no function %s" % name)


def _rename(code: types.CodeType, original: types.CodeType) -> types.CodeType:
    """``code`` under the original's name and qualified name (line numbers stay the file's)."""
    changes = {"co_name": original.co_name}
    if hasattr(original, "co_qualname"):
        changes["co_qualname"] = original.co_qualname
    return code.replace(**changes)


def fallback_text(header: Sequence[str], reason: str, dynamo: types.CodeType) -> str:
    """A file of comments only: why, and Dynamo's bytecode."""
    lines = list(header)
    lines.append("#")
    lines.append(naming.FALLBACK_LINE)
    lines.append("#   %s" % reason)
    lines.append("# The cache entry runs Dynamo's own bytecode, disassembled here:")
    lines.append("#")
    lines += ["#   " + line if line else "#" for line in disassembly(dynamo).splitlines()]
    return "\n".join(lines) + "\n"


def disassembly(code: types.CodeType) -> str:
    """``dis`` output for ``code`` and the code objects nested in it."""
    try:
        return dis.Bytecode(code).dis() + "".join(
            "\nDisassembly of %s:\n%s" % (const.co_name, disassembly(const))
            for const in code.co_consts
            if isinstance(const, types.CodeType)
        )
    except Exception as exc:  # dis itself can trip over unusual machine-made code
        return "(no disassembly: %s: %s)" % (type(exc).__name__, exc)
