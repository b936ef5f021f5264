"""Corrupt .pyc files are refused before CPython unmarshals them: the marshal walk finds every
code object's bytecode, and bytecode whose inline caches run past its end is refused."""
from __future__ import annotations

import importlib.util
import marshal
import sys
import types

import pytest

from framescope.decompiler.frontend.marshalscan import code_strings
from framescope.decompiler.frontend.opcodes import malformed_bytecode
from framescope.decompiler.frontend.pyc import load_pyc
from framescope.errors import DecompilationError


def all_codes(code):
    yield code
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            yield from all_codes(const)


@pytest.mark.parametrize("module", ["colorsys", "fnmatch", "queue", "textwrap"])
def test_the_walk_finds_every_code_object(module):
    spec = importlib.util.find_spec(module)
    source = spec.loader.get_source(module)  # the standard library may be in a zip (Pyodide)
    code = compile(source, spec.origin or module, "exec", dont_inherit=True)
    assert sorted(code_strings(marshal.dumps(code))) == sorted(c.co_code for c in all_codes(code))


@pytest.mark.skipif(sys.version_info < (3, 11), reason="inline caches are 3.11+")
def test_caches_past_the_end_are_malformed():
    def f(x):
        return x.y

    raw = f.__code__.co_code
    assert malformed_bytecode(raw) is None
    load_attr = next(i for i in range(0, len(raw), 2) if raw[i] == __import__("dis").opmap["LOAD_ATTR"])
    cut = raw[:load_attr + 2]  # LOAD_ATTR without its caches
    assert "inline caches past the end" in malformed_bytecode(cut)


@pytest.mark.skipif(sys.version_info < (3, 11), reason="inline caches are 3.11+")
def test_a_pyc_with_malformed_bytecode_is_refused_before_it_is_loaded(tmp_path):
    def f(x):
        return x.y

    data = bytearray(marshal.dumps(f.__code__))
    raw = f.__code__.co_code
    at = bytes(data).index(raw)
    # The last instruction becomes LOAD_ATTR, whose caches would lie past the end.
    data[at + len(raw) - 2] = __import__("dis").opmap["LOAD_ATTR"]
    path = tmp_path / "bad.pyc"
    path.write_bytes(importlib.util.MAGIC_NUMBER + b"\x00" * 12 + bytes(data))
    with pytest.raises(DecompilationError, match="malformed bytecode"):
        load_pyc(str(path))


def test_a_name_that_is_not_a_string_is_refused(tmp_path):
    """CPython 3.8-3.10 abort the interpreter on unmarshalling such a code object."""
    data = marshal.dumps(compile("qqq = 1\n", "<t>", "exec"))
    for kind in (b"Z", b"z", b"\xda", b"\xfa"):  # short ascii str, interned or not, with a ref flag or not
        if kind + b"\x03qqq" in data:
            break
    else:
        pytest.fail("no short string 'qqq' in %r" % data)
    # The same 5 bytes as an int (keeping the reference flag, so later references still match).
    number = (b"\xe9" if kind[0] & 0x80 else b"i") + (7).to_bytes(4, "little")
    path = tmp_path / "bad.pyc"
    path.write_bytes(importlib.util.MAGIC_NUMBER + b"\0" * 12 + data.replace(kind + b"\x03qqq", number, 1))
    with pytest.raises(DecompilationError, match="names are not all strings"):
        load_pyc(str(path))
