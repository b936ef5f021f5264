"""Reading ``.pyc`` files: header, version check, code object."""
import importlib.util
import marshal
from types import CodeType
from typing import Optional

from framescope.decompiler.frontend import versions
from framescope.errors import DecompilationError

class ForeignPycError(DecompilationError):
    """A ``.pyc`` written by another Python version than the running one."""

    def __init__(self, path: str, version: Optional[str], magic: int) -> None:
        #: ``"3.12"``-style version that wrote the file, or None for an unknown magic number.
        self.version = version
        #: Whether framescope reads that version's bytecode (with that version's interpreter).
        self.readable = version is not None and is_read(version)
        what = "Python %s" % version if version else "an unknown Python version (magic number %d)" % magic
        super().__init__("%s was compiled by %s; this is Python %s" % (path, what, running_version()))


def running_version() -> str:
    return "%d.%d" % versions.PY


def read_versions() -> str:
    """``"3.8 to 3.14"``: the releases framescope reads."""
    return "%d.%d to %d.%d" % (versions.OLDEST_READ + versions.NEWEST_READ)


def is_read(version: str) -> bool:
    major, _, minor = version.partition(".")
    return minor.isdigit() and versions.OLDEST_READ <= (int(major), int(minor)) <= versions.NEWEST_READ


def pyc_version(data: bytes) -> Optional[str]:
    """The Python version whose magic number starts ``data``, if known."""
    if len(data) < 4 or data[2:4] != b"\r\n":
        return None
    return magic_version(int.from_bytes(data[:2], "little"))


def magic_version(magic: int) -> Optional[str]:
    if magic in versions.MAGIC_PYTHON2:
        return "2"
    found = None
    for first, version in versions.MAGIC_FIRST:
        if magic >= first:
            found = version
    last = versions.MAGIC_FIRST[-1][0]
    return found if magic < last + versions.MAGIC_SPAN else None


def load_pyc(path: str) -> CodeType:
    """The module code object stored in a ``.pyc`` file of the running Python version."""
    try:
        with open(path, "rb") as handle:
            data = handle.read()
    except OSError as err:
        raise DecompilationError("cannot read %s: %s" % (path, err.strerror or err)) from None
    if len(data) < 16 or data[2:4] != b"\r\n":
        raise DecompilationError("%s is not a .pyc file (too short or no magic number)" % path)
    if data[:4] != importlib.util.MAGIC_NUMBER:
        raise ForeignPycError(path, pyc_version(data), int.from_bytes(data[:2], "little"))
    refuse_malformed(path, data[16:])
    try:
        code = marshal.loads(data[16:])
    except (EOFError, ValueError, TypeError, SystemError, MemoryError, RecursionError):
        # marshal checks what it reads as it goes: corrupt data can fail in any of these.
        raise DecompilationError("%s is truncated or corrupt" % path) from None
    if not isinstance(code, CodeType):
        raise DecompilationError("%s does not hold a code object" % path)
    return code


def refuse_malformed(path: str, data: bytes) -> None:
    """DecompilationError for marshal data that CPython could not read safely: a code object
    whose bytecode is malformed (CPython would write past it on creation). Checked in
    Python, before ``marshal.loads`` sees it; data the walk cannot follow is left to
    ``marshal.loads``, which refuses what it cannot read."""
    from framescope.decompiler.frontend.marshalscan import Unsafe, code_strings
    from framescope.decompiler.frontend.opcodes import malformed_bytecode

    try:
        strings = code_strings(data)
    except Unsafe as err:
        raise DecompilationError("%s is corrupt: %s" % (path, err)) from None
    except ValueError:  # marshal.loads says what is wrong, for data it can read at all
        return
    for raw in strings:
        why = malformed_bytecode(raw)
        if why is not None:
            raise DecompilationError("%s is corrupt: malformed bytecode (%s)" % (path, why))
