"""The bytecode strings of the code objects in marshal data, read without making them.

CPython trusts what it unmarshals: a code object whose bytecode ends inside an
instruction's inline caches makes the interpreter write past its buffer as soon as the
object exists (3.12+ warms the caches up on creation; 3.11 when its ``co_code`` is read).
So a corrupt ``.pyc`` is checked here first, in Python, before ``marshal.loads`` sees it.

The walk follows Python/marshal.c's format (the parts the running interpreter writes); data
it cannot follow raises ValueError, as corrupt data does.
"""
import struct
from typing import Any, List

from framescope.decompiler.frontend import versions

__all__ = ["code_strings", "Unsafe"]


_FLAG_REF = 0x80
# Objects that carry nothing more than their type byte.
_SINGLETONS = frozenset(b"0NFTS.")
# Strings with a 4-byte length, and with a 1-byte one.
_LONG_STRINGS = frozenset(b"stuaA")
_SHORT_STRINGS = frozenset(b"zZ")


class Unsafe(ValueError):
    """Marshal data that CPython would crash on rather than refuse (not merely corrupt)."""


#: What the walk returns for a str (any of marshal's string kinds but bytes).
_STR = "str"


class _Reader:
    def __init__(self, data: bytes) -> None:
        self.data = data
        self.at = 0
        #: The object of each reference slot, as ``object`` returns it.
        self.refs: List[Any] = []
        #: The bytecode string of each code object, in the order met.
        self.codes: List[bytes] = []
        self.depth = 0

    def take(self, size: int) -> bytes:
        if size < 0 or self.at + size > len(self.data):
            raise ValueError("marshal data ends early")
        piece = self.data[self.at:self.at + size]
        self.at += size
        return piece

    def long(self) -> int:
        return struct.unpack("<i", self.take(4))[0]

    def byte(self) -> int:
        return self.take(1)[0]

    def object(self) -> Any:
        """Read one object; return it if it is a bytes string, _STR for a str, a tuple of
        these for a tuple, else None."""
        self.depth += 1
        if self.depth > 2000:
            raise ValueError("marshal data nests too deeply")
        try:
            code = self.byte()
            flag, kind = code & _FLAG_REF, code & ~_FLAG_REF
            slot = None
            if flag:
                slot = len(self.refs)
                self.refs.append(None)
            value = self.body(kind)
            if slot is not None:
                self.refs[slot] = value
            return value
        finally:
            self.depth -= 1

    def body(self, kind: int) -> Any:
        if kind in _SINGLETONS:
            return None
        if kind == ord("i"):
            self.take(4)
        elif kind == ord("l"):
            self.take(2 * abs(self.long()))
        elif kind == ord("g"):
            self.take(8)
        elif kind == ord("y"):
            self.take(16)
        elif kind == ord("f"):
            self.take(self.byte())
        elif kind == ord("x"):
            self.take(self.byte())
            self.take(self.byte())
        elif kind in _LONG_STRINGS:
            data = self.take(self.long())
            return data if kind == ord("s") else _STR
        elif kind in _SHORT_STRINGS:
            self.take(self.byte())
            return _STR
        elif kind == ord("("):
            return tuple(self.object() for _ in range(self.long()))
        elif kind == ord(")"):
            return tuple(self.object() for _ in range(self.byte()))
        elif kind in b"[<>":
            for _ in range(self.long()):
                self.object()
        elif kind == ord("{"):
            while self.data[self.at:self.at + 1] not in (b"0", b""):
                self.object()
                self.object()
            self.take(1)
        elif kind == ord(":"):  # 3.14: a slice constant
            for _ in range(3):
                self.object()
        elif kind == ord("r"):
            index = self.long()
            if not 0 <= index < len(self.refs):
                raise ValueError("a marshal reference to nothing")
            return self.refs[index]
        elif kind == ord("c"):
            self.code()
        else:
            raise ValueError("unknown marshal type %r" % chr(kind))
        return None

    def code(self) -> None:
        # argcount, posonlyargcount, kwonlyargcount, [nlocals before 3.11,] stacksize, flags
        self.take(4 * (5 if versions.LOCALS_PLUS else 6))
        raw = self.object()
        if not isinstance(raw, bytes):
            raise ValueError("a code object without bytecode")
        self.codes.append(raw)
        # Seven objects: consts, names, then (3.11+) localsplusnames, localspluskinds,
        # filename, name, qualname, or (3.8-3.10) varnames, freevars, cellvars, filename,
        # name; then firstlineno, and the line table (3.11+: and the exception table).
        fields = [self.object() for _ in range(7)]
        # CPython interns these names as it makes the code object, and 3.8-3.10 abort the
        # interpreter ("non-string found in code slot") when one is not a str.
        name_tuples = fields[1:3] if versions.LOCALS_PLUS else fields[1:5]
        for names in name_tuples:
            if isinstance(names, tuple) and any(name != _STR for name in names):
                raise Unsafe("a code object's names are not all strings")
        self.take(4)
        self.object()
        if versions.LOCALS_PLUS:
            self.object()


def code_strings(data: bytes) -> List[bytes]:
    """The bytecode (``co_code``) of every code object in the marshal data ``data``, in the
    order they appear; ValueError if ``data`` is not marshal data this interpreter writes."""
    reader = _Reader(data)
    reader.object()
    return reader.codes
