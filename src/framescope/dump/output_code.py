"""Inductor's output modules, run from their dumped files.

Inductor's output code is a Python module torch loads from its cache folder; its ``call``
runs the graph. The dump writes the module's text into the graph's ``inductor`` file (from
torch's structured trace) and then gives each function of the loaded module the code
compiled from that file, so that breakpoints in the file stop and behaviour is unchanged.
This happens when Inductor's compiler returns (a compile, or an FX graph cache hit), after
an AOTAutograd cache hit (which calls no compiler: the module is found among those torch
loaded), and for a graph compiled before the dump began.
"""
from __future__ import annotations

from typing import Any, Callable, Dict, Tuple

from framescope import torch_internals
from framescope.dump.graph_files import code_tree, module_functions, swap_code


class OutputModules:
    """The output modules written and not yet run from their files, by the path torch loads
    them from."""

    def __init__(self, session: Any, warn: Callable[[str], None]) -> None:
        #: The DumpSession: ``path_of`` gives the dumped files.
        self.session = session
        self._warn = warn
        # path torch loads the module from -> (graph, stage, the dumped file's name and text).
        self._pending: Dict[str, Tuple[Any, str, str, str]] = {}

    def written(self, path: str, graph: Any, stage: str, file: str, text: str) -> None:
        """The output module torch loads from ``path`` was dumped as ``file`` (``text``)."""
        self._pending[path] = (graph, stage, file, text)

    def run_compiled(self, compiled: object) -> bool:
        """Run an Inductor compile result's module from its dumped file; return whether
        ``compiled`` is Inductor's output."""
        call = torch_internals.output_code_callable(compiled)
        if call is None:
            return False
        function = getattr(call, "__func__", call)
        code = getattr(function, "__code__", None)
        if code is None or code.co_filename not in self._pending:
            self._warn("Inductor's output code runs from torch's cache folder, not the dump")
            return True
        self.swap(function.__globals__, code.co_filename)
        return True

    def run_cached(self, graph: Any) -> None:
        """After an AOTAutograd cache hit, which calls no compiler: the modules torch loaded
        for ``graph`` from the FX graph cache run from their dumped files."""
        for path, (owner, _stage, _file, _text) in list(self._pending.items()):
            if owner is not graph:
                continue
            module = torch_internals.output_code_module(path)
            if module is None:
                self._warn("Inductor's output code for %s runs from torch's cache folder, not the dump" % graph.name)
                self._pending.pop(path)
            else:
                self.swap(vars(module), path)

    def swap(self, module_globals: Dict[str, Any], path: str) -> None:
        """Give the functions of the module loaded from ``path`` (its globals) the code of its
        dumped file; note the stage as run from its file."""
        graph, stage, file, text = self._pending.pop(path)
        new_functions = code_tree(compile(text, str(self.session.path_of(file)), "exec", dont_inherit=True))
        swapped = 0
        for qualname, old in module_functions(module_globals, path):
            new = new_functions.get(qualname)
            if new is not None and swap_code(old, new):
                swapped += 1
        if swapped and stage not in graph.runs:
            graph.runs.append(stage)
