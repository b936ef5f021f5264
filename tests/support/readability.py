"""How transformed-code files read: the figures benchmarks/model_zoo.py prints and the dump
tests bound."""
from __future__ import annotations

import ast
import re
from pathlib import Path
from typing import Dict, Iterable

#: framescope's and Dynamo's temporaries: ``__stack_<k>``, ``tmp_<k>``.
TEMPORARY = re.compile(r"^(tmp_\d+|__stack_\d+)$")


def figures(paths: Iterable[Path]) -> Dict[str, int]:
    """Lines (neither blank nor comments), temporaries, temporaries read once, aliases
    (``t = name``) and ``del`` statements of some files."""
    found = {"lines": 0, "temporaries": 0, "read_once": 0, "aliases": 0, "del_lines": 0}
    for path in paths:
        text = Path(path).read_text(encoding="utf-8")
        found["lines"] += sum(1 for line in text.splitlines() if line.strip() and not line.lstrip().startswith("#"))
        loads: Dict[str, int] = {}
        stored = set()
        for node in ast.walk(ast.parse(text)):
            if isinstance(node, ast.Name) and TEMPORARY.match(node.id):
                if isinstance(node.ctx, ast.Load):
                    loads[node.id] = loads.get(node.id, 0) + 1
                elif isinstance(node.ctx, ast.Store):
                    stored.add(node.id)
            found["del_lines"] += isinstance(node, ast.Delete)
            found["aliases"] += (isinstance(node, ast.Assign) and len(node.targets) == 1
                                 and isinstance(node.targets[0], ast.Name) and isinstance(node.value, ast.Name))
        found["temporaries"] += len(stored)
        found["read_once"] += sum(1 for ident in stored if loads.get(ident) == 1)
    return found
