"""Decompiled transformed code kept between runs, beside torch.compile's own caches.

A program's second run compiles the same frames into the same bytecode, and torch serves
their graphs from its caches; decompiling each entry again is most of what a dump then
adds to the run. So a dump keeps the ``def`` it decompiled for each entry's code, and a
later run whose entry has the same code takes it from there: it is compiled from the file
and checked against Dynamo's code (validate.py) as a fresh decompilation is.

The key is a digest of everything the text depends on: the code object field by field
(nested code objects too), with torch's per-run global names (a graph's uuid, an object's
id()) replaced by the dump's names for them; the names the decompiler was given for graph
inputs and module globals; the interpreter; and framescope's decompiler, by the size and
time of each of its files. Texts that bind constants through the module's globals (objects
no literal spells) are kept with where each constant is in the code, and bound again from the
code of the run that takes them.

The texts live in ``framescope/sources`` inside torch's cache folder (``TORCHINDUCTOR_CACHE_DIR``,
or torch's default), one file per key. A dump with ``caches=False`` neither reads nor
writes them. A folder that cannot be read or written is no cache: nothing is kept.
"""
from __future__ import annotations

import hashlib
import json
import os
import sys
import types
from pathlib import Path
from typing import Any, Dict, Iterable, List, Mapping, Optional, Sequence, Tuple

_FIELDS = ("co_argcount", "co_posonlyargcount", "co_kwonlyargcount", "co_nlocals", "co_flags", "co_name",
           "co_qualname", "co_filename", "co_firstlineno", "co_varnames", "co_freevars", "co_cellvars",
           "co_exceptiontable", "co_linetable", "co_lnotab", "co_stacksize")


# The first line of a kept text that reads constants from globals: where each is in the code.
_CONSTANTS = "# framescope constants: "


class SourceCache:
    """The decompiled texts kept in one folder."""

    def __init__(self, folder: Path) -> None:
        #: The folder of the texts.
        self.folder = folder

    def key(self, code: types.CodeType, renames: Mapping[str, str], given: Iterable[Any]) -> str:
        """The key of the text decompiled from ``code`` with torch's names ``renames``
        replaced by the dump's, and ``given``: what else the decompiler was told."""
        digest = hashlib.sha256()
        digest.update(repr((sys.version, _decompiler_stamp())).encode())
        _add_code(digest, code, renames)
        digest.update(repr(sorted(repr(item) for item in given)).encode())
        return digest.hexdigest()

    def get(self, key: str) -> Optional[Tuple[str, Dict[str, List[int]]]]:
        """The text kept under ``key`` and the places of its constants (see put), or None."""
        try:
            content = self._path(key).read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError):
            return None
        first, _, rest = content.partition("\n")
        if not first.startswith(_CONSTANTS):
            return content, {}
        try:
            places = json.loads(first[len(_CONSTANTS):])
        except ValueError:
            return None
        return rest, places if isinstance(places, dict) else {}

    def put(self, key: str, text: str, places: Optional[Mapping[str, Sequence[int]]] = None) -> None:
        """Keep ``text`` under ``key`` (written beside and renamed into place; a folder that
        refuses it keeps nothing). ``places``: for each global the text reads a constant of
        the code from (an object no literal spells), where that constant is in the code:
        indices into ``co_consts``, through nested code objects."""
        if places:
            text = _CONSTANTS + json.dumps({name: list(place) for name, place in places.items()}) + "\n" + text
        path = self._path(key)
        temporary = path.with_name("%s.%d.tmp" % (path.name, os.getpid()))
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            temporary.write_text(text, encoding="utf-8")
            os.replace(str(temporary), str(path))
        except OSError:
            try:
                temporary.unlink()
            except OSError:
                pass

    def _path(self, key: str) -> Path:
        return self.folder / key[:2] / ("%s.py" % key)


def _add_code(digest: Any, code: types.CodeType, renames: Mapping[str, str]) -> None:
    digest.update(code.co_code)
    for field in _FIELDS:
        digest.update(repr(getattr(code, field, None)).encode())
    digest.update(repr(tuple(renames.get(name, name) for name in code.co_names)).encode())
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            _add_code(digest, const, renames)
        else:
            digest.update(_constant_text(const).encode())


def _constant_text(value: object) -> str:
    """A constant's text, the same in every run (a frozenset's order depends on the run)."""
    if isinstance(value, frozenset):
        return "frozenset(%s)" % sorted(_constant_text(item) for item in value)
    if isinstance(value, tuple):
        return "(%s)" % ", ".join(_constant_text(item) for item in value)
    return "%s:%r" % (type(value).__name__, value)


_stamp: Optional[str] = None


def _decompiler_stamp() -> str:
    """framescope's decompiler and the transformed-code writer, by the size and time of
    each file: a changed framescope makes new keys."""
    global _stamp
    if _stamp is None:
        root = Path(__file__).resolve().parent.parent
        files: List[Path] = sorted((root / "decompiler").rglob("*.py"))
        files += [root / "dump" / "transformed.py", root / "dump" / "validate.py", root / "torch_text.py"]
        parts = []
        for path in files:
            try:
                status = path.stat()
            except OSError:
                continue
            parts.append("%s:%d:%d" % (path.relative_to(root), status.st_size, status.st_mtime_ns))
        _stamp = hashlib.sha256("\n".join(parts).encode()).hexdigest()
    return _stamp


def constant_places(code: types.CodeType, constants: Mapping[str, object]) -> Optional[Dict[str, List[int]]]:
    """Where each constant is in ``code`` (see SourceCache.put), or None if one is not there."""
    places = {}
    for name, value in constants.items():
        place = _find(code, value, ())
        if place is None:
            return None
        places[name] = place
    return places


def constants_at(code: types.CodeType, places: Mapping[str, Sequence[int]]) -> Optional[Dict[str, object]]:
    """The constants of ``code`` at ``places``, by their global's name; None if a place is
    not in the code."""
    found = {}
    for name, place in places.items():
        holder: Any = code
        try:
            for index in place[:-1]:
                holder = holder.co_consts[index]
            found[name] = holder.co_consts[place[-1]]
        except (AttributeError, IndexError, TypeError):
            return None
    return found


def _find(code: types.CodeType, value: object, prefix: Tuple[int, ...]) -> Optional[List[int]]:
    for index, const in enumerate(code.co_consts):
        if const is value:
            return list(prefix + (index,))
        if isinstance(const, types.CodeType):
            found = _find(const, value, prefix + (index,))
            if found is not None:
                return found
    return None
