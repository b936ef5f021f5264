"""What a dump folder holds when its index.json does not say it all.

A dump writes each file whole or not at all, but a program killed mid-run, or a disk that
filled up, leaves a folder whose index is older than its files, or absent:

* :func:`missing_files`: the files the index names that are not in the folder.
* :func:`from_files`: for a folder without index.json, the frames, cache entries and graphs
  that the names of its files give (guards, graph breaks, recompiles and times are unknown).
"""
from __future__ import annotations

import os
from typing import Dict, List

from framescope.dump.naming import FALLBACK_LINE, parse_file_name
from framescope.dump.records import Dump, Entry, Frame, Graph, Precompiled, in_stage_order

__all__ = ["missing_files", "from_files", "dump_files"]


def missing_files(dump: Dump) -> List[str]:
    """The files ``dump``'s index names that are not in its folder, in index order."""
    named: List[str] = []
    for frame in dump.frames:
        named += [entry.file for entry in frame.entries if entry.file]
        if frame.full_code:
            named.append(frame.full_code)
    for graph in dump.graphs:
        named += list(graph.files.values())
    return [name for name in named if dump.file(name) is None]


def dump_files(path: str) -> List[str]:
    """The names of the files in ``path`` that a dump writes, sorted."""
    try:
        names = os.listdir(path)
    except OSError:
        return []
    return sorted(name for name in names if parse_file_name(name) and os.path.isfile(os.path.join(path, name)))


def from_files(path: str, names: List[str]) -> Dump:
    """The Dump that the dump files ``names`` in ``path`` give, with a warning that says
    the index is missing."""
    frames: Dict[str, Frame] = {}
    graphs: Dict[str, Dict[str, str]] = {}
    precompiled: List[Precompiled] = []
    for name in names:
        kind, key, detail = parse_file_name(name) or ("", "", "")
        if kind == "transformed":
            frame = frames.setdefault(key, Frame(id=key, name=key, qualname=key))
            frame.entries.append(Entry(index=int(detail), file=name, decompiled=not _is_fallback(path, name)))
        elif kind == "full_code":
            frames.setdefault(key, Frame(id=key, name=key, qualname=key)).full_code = name
        elif kind == "graph":
            graphs.setdefault(key, {})[detail] = name
        elif kind == "precompiled":
            precompiled.append(Precompiled(function=key, file=name))
    for frame in frames.values():
        frame.entries.sort(key=lambda entry: entry.index)
    warning = ("index.json is missing: the program stopped (killed, or the disk refused the file) "
               "before it was written. This report is built from the names of the %d files in the "
               "folder; guards, graph breaks, recompiles and compile times are unknown." % len(names))
    return Dump(
        path=os.path.abspath(path),
        frames=list(frames.values()),
        graphs=[Graph(name=name, files=in_stage_order(files)) for name, files in sorted(graphs.items(), key=_graph_key)],
        warnings=[warning],
        precompiled=precompiled,
    )


def _graph_key(item: "tuple[str, Dict[str, str]]") -> int:
    digits = item[0].rpartition("_")[2]
    return int(digits) if digits.isdigit() else 0


def _is_fallback(path: str, name: str) -> bool:
    try:
        with open(os.path.join(path, name), encoding="utf-8", errors="replace") as handle:
            return any(line.rstrip("\n") == FALLBACK_LINE for line in handle)
    except OSError:
        return False
