"""Loading dump folders: ``index.json`` into the records of :mod:`framescope.dump.records`.

Broken JSON, a field of the wrong type or a folder that is no dump raises :class:`DumpError`
with one line that says which; a folder of dump files without index.json loads from the
files' names (see recover).
"""
from __future__ import annotations

import glob
import json
import os
from typing import List, Optional, Tuple

from framescope.dump.naming import folder_rank
from framescope.dump.records import Dump, DumpError, from_data
from framescope.report import recover

__all__ = ["Dump", "DumpError", "dumps_of", "dumps_under", "load_dump"]


def dumps_of(folder: str) -> List[Tuple[str, Dump]]:
    """The dumps a command given ``folder`` works on, each with its name: ``[("", dump)]`` for
    a dump folder; ``[("rank_0", dump), ...]`` for the folder of a distributed run (one dump
    per rank in ``rank_<r>/``). Else DumpError, naming the dumps further down if there are."""
    if os.path.isdir(folder) and not os.path.isfile(os.path.join(folder, "index.json")):
        ranks = sorted(glob.glob(os.path.join(glob.escape(folder), "rank_*", "index.json")),
                       key=lambda path: rank_order(os.path.basename(os.path.dirname(path))))
        if ranks:
            return [(os.path.basename(os.path.dirname(path)), load_dump(os.path.dirname(path))) for path in ranks]
    try:
        return [("", load_dump(folder))]
    except DumpError as err:
        below = [os.path.relpath(dump.path, folder) for dump in dumps_under(folder, limit=4)] \
            if os.path.isdir(folder) else []
        if below:
            raise DumpError("%s; dump folders below it: %s%s" % (
                err, ", ".join(below[:3]), ", ..." if len(below) > 3 else "")) from None
        raise


def rank_order(name: str) -> tuple:
    rank = folder_rank(name)
    return (0, rank, "") if rank is not None else (1, 0, name)


def dumps_under(folder: str, limit: Optional[int] = None) -> List[Dump]:
    """Every dump folder at or below ``folder`` (each holds an index.json that loads), sorted;
    the first ``limit`` of them if given."""
    found: List[Dump] = []
    for parent, dirs, files in os.walk(folder):
        dirs.sort()
        if "index.json" in files:
            try:
                found.append(load_dump(parent))
            except DumpError:
                continue  # an index.json of something else, or a broken dump
            if limit is not None and len(found) >= limit:
                break
    return found


def load_dump(path: str) -> Dump:
    """Read ``path/index.json``; raise :class:`DumpError` (one line) if that fails. A folder
    of dump files without index.json loads from the files' names (see recover)."""
    if not os.path.exists(path):
        raise DumpError("%s does not exist" % path)
    if not os.path.isdir(path):
        raise DumpError("%s is not a folder" % path)
    index = os.path.join(path, "index.json")
    if not os.path.isfile(index):
        names = recover.dump_files(path)
        if names:
            return recover.from_files(path, names)
        raise DumpError("%s has no index.json: not a framescope dump folder" % path)
    try:
        with open(index, encoding="utf-8") as handle:
            data = json.load(handle)
    except OSError as err:
        raise DumpError("cannot read %s: %s" % (index, err.strerror or err))
    except UnicodeDecodeError as err:
        raise DumpError("%s is not UTF-8: %s" % (index, err.reason))
    except ValueError as err:  # json.JSONDecodeError
        raise DumpError("%s is not valid JSON: %s" % (index, err))
    dump = from_data(data, os.path.abspath(path), index)
    missing = recover.missing_files(dump)
    if missing:
        dump.warnings.append(
            "index.json names %d files that are not in the folder (the program was killed, or the "
            "disk refused them): %s" % (len(missing), ", ".join(missing)))
    return dump

