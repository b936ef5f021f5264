"""The folder a dump writes into: atomic writes, one lock per program, and what to do when
the disk refuses.

Every file goes to a temporary name in its folder first and is then renamed over its real
name, so a reader (or a program killed mid-write) never leaves a half-written file: a file
is its last complete text, or absent.

When the disk refuses, the program must go on unchanged, and framescope must not fail again
on every later compile:

* The folder cannot take files (read-only, full, gone, deleted or replaced while the
  program runs): the folder *stops*. Every later write is refused at once without touching
  the disk; at the end of the dump the index is tried once more, since a full disk may have
  room again by then.
* One file cannot be replaced (something else is in its place): that name is *refused*;
  the other files go on being written.

Either way the write raises :class:`NotWritten`, whose ``first`` says whether this is the
first time the cause was met, so that the session warns once.
"""
from __future__ import annotations

import errno
import os
import re
from pathlib import Path
from typing import Any, Dict, Optional, Tuple

from framescope.dump.naming import parse_file_name

__all__ = ["DumpFolder", "FolderLock", "NotWritten", "is_dump_file"]

# Errors that say the folder, not one file, cannot be written.
_FOLDER_ERRORS = {getattr(errno, name, None) for name in ("EROFS", "ENOSPC", "EDQUOT", "EIO", "ENOENT", "EACCES", "EPERM")}
# Of those, the ones that may pass (space freed): worth one more try at the end.
_PASSING_ERRORS = {getattr(errno, name, None) for name in ("ENOSPC", "EDQUOT")}


class NotWritten(OSError):
    """A dump file was not written; the message says which and why."""

    def __init__(self, message: str, first: bool) -> None:
        super().__init__(message)
        #: Whether this is the first write refused for this cause (warn once).
        self.first = first


class DumpFolder:
    """One dump's folder: where its files go and whether the disk still takes them."""

    def __init__(self, path: Path) -> None:
        #: The folder, absolute.
        self.path = path
        #: Why the whole folder stopped taking files (None while it takes them).
        self.stopped: Optional[str] = None
        #: Whether the cause may pass (a full disk), so the final index is tried again.
        self.may_retry = False
        #: File name -> why it could not be replaced, for names refused one by one.
        self.refused: Dict[str, str] = {}
        self._identity: Optional[Tuple[int, int]] = None

    def open(self) -> None:
        """Make the folder; a folder that cannot be made stops at once."""
        try:
            self.path.mkdir(parents=True, exist_ok=True)
            self._identity = _identity(self.path)
        except OSError as exc:
            self._stop("cannot create the folder: %s" % _why(exc), exc)

    def write(self, name: str, data: "str | bytes", retry: bool = False) -> Path:
        """Write ``data`` to the file ``name`` (relative to the folder), atomically; return its
        path. Raises NotWritten when the folder or that name no longer takes files; with
        ``retry``, a folder stopped by a full disk is tried once more."""
        if self.stopped is not None and not (retry and self.may_retry):
            raise NotWritten("%s not written: %s" % (name, self.stopped), first=False)
        if name in self.refused:
            raise NotWritten("%s not written: %s" % (name, self.refused[name]), first=False)
        if self._identity is not None and _identity(self.path) != self._identity:
            self._stop("the folder was deleted or replaced while the program ran", None)
            raise NotWritten("%s not written: %s" % (name, self.stopped), first=True)
        path = self.path / name
        temp = path.with_name(".%s.%d.tmp" % (path.name, os.getpid()))
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            _write_file(temp, data)
        except OSError as exc:
            _remove(temp)
            first = self.stopped is None
            if exc.errno in _FOLDER_ERRORS or not isinstance(exc.errno, int):
                self._stop("%s: %s" % (name, _why(exc)), exc)
            else:
                self.refused[name] = _why(exc)
            raise NotWritten("%s not written: %s" % (name, _why(exc)), first=first) from None
        try:
            os.replace(str(temp), str(path))
        except OSError as exc:
            _remove(temp)
            self.refused[name] = _why(exc)
            raise NotWritten("%s not written: %s" % (name, _why(exc)), first=True) from None
        if retry and self.stopped is not None:
            self.stopped, self.may_retry = None, False  # the disk has room again
        return path

    def _stop(self, reason: str, exc: Optional[OSError]) -> None:
        self.stopped = reason
        self.may_retry = exc is not None and exc.errno in _PASSING_ERRORS


def _identity(path: Path) -> Optional[Tuple[int, int]]:
    try:
        stat = os.stat(str(path))
    except OSError:
        return None
    return (stat.st_dev, stat.st_ino)


def _write_file(path: Path, data: "str | bytes") -> None:
    if isinstance(data, bytes):
        with open(path, "wb") as handle:
            handle.write(data)
    else:
        with open(path, "w", encoding="utf-8") as handle:
            handle.write(data)


def _remove(path: Path) -> None:
    try:
        os.unlink(str(path))
    except OSError:  # never made, or the folder is gone
        pass


def _why(exc: OSError) -> str:
    return exc.strerror or str(exc) if exc.errno is not None else str(exc)


class FolderLock:
    """A dump folder in use by one process: an exclusive ``flock`` on ``.framescope.lock`` in
    it, held while the dump runs and let go by the system if the process dies. Where the
    platform has no ``flock`` every take succeeds (two programs then share the folder)."""

    NAME = ".framescope.lock"

    def __init__(self, handle: Any) -> None:
        self._handle = handle

    @classmethod
    def take(cls, folder: Path) -> "Optional[FolderLock]":
        """The lock of ``folder``, or None when another live process holds it."""
        try:
            import fcntl
        except ImportError:  # Windows, WebAssembly
            return cls(None)
        try:
            # Unbuffered: a pid that a full disk refuses is not kept to fail again at close.
            handle = open(folder / cls.NAME, "a+b", buffering=0)
        except OSError:  # a folder framescope cannot write: later writes say so
            return cls(None)
        try:
            fcntl.flock(handle.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:  # held by another process
            handle.close()
            return None
        except OSError:  # a file system without locks: share the folder
            handle.close()
            return cls(None)
        try:
            handle.seek(0)
            handle.truncate()
            handle.write(b"%d\n" % os.getpid())
        except OSError:  # a full disk: the lock holds without the pid
            pass
        return cls(handle)

    @classmethod
    def holder(cls, folder: Path) -> Optional[str]:
        """The pid the holder wrote into the lock file, if it can be read."""
        try:
            return (folder / cls.NAME).read_text(encoding="utf-8").strip() or None
        except OSError:
            return None

    def release(self) -> None:
        handle, self._handle = self._handle, None
        if handle is not None:
            try:
                handle.close()  # closing lets the flock go
            except OSError:  # the system lets it go with the descriptor all the same
                pass


def remove_stale(folder: Path) -> None:
    """Remove the files an earlier dump left in ``folder`` (names a dump writes, and their
    temporary files), so that it shows this run only."""
    try:
        paths = list(folder.iterdir())
    except OSError:  # gone or unreadable: the first write says so
        return
    for path in paths:
        if (is_dump_file(path.name) or _is_temp_file(path.name)) and path.is_file() and not path.is_symlink():
            _remove(path)


def is_dump_file(name: str) -> bool:
    """Whether a file name is one framescope.dump writes (index, transformed, full code, graphs)."""
    return parse_file_name(name) is not None


def _is_temp_file(name: str) -> bool:
    """A temporary file of DumpFolder.write that a killed program left."""
    match = re.fullmatch(r"\.(.+)\.\d+\.tmp", name)
    return match is not None and is_dump_file(match.group(1))
