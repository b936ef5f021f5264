"""Loading dump folders: ``index.json`` into the records of :mod:`framescope.dump.records`.

Broken JSON, a field of the wrong type or a folder that is no dump raises :class:`DumpError`
with one line that says which; a folder of dump files without index.json loads from the
files' names (see recover).
"""
from __future__ import annotations

import json
import os
from typing import List

from framescope.dump.records import Dump, DumpError, from_data
from framescope.report import recover

__all__ = ["Dump", "DumpError", "load_dump", "dumps_under"]


def dumps_under(folder: str) -> List[Dump]:
    """Every dump folder at or below ``folder`` (each holds an index.json that loads), sorted."""
    found = []
    for parent, _dirs, files in sorted(os.walk(folder)):
        if "index.json" in files:
            try:
                found.append(load_dump(parent))
            except DumpError:
                continue  # an index.json of something else, or a broken dump
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

