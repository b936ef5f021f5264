"""Bytecode no compiler wrote is refused with a reason before anything reads it as CPython
does: argument indices, jump targets, inline caches and the exception table are checked on
the code units themselves (the adaptive code on 3.11+, never ``co_code``)."""
from __future__ import annotations

import dis
import sys
import types

import pytest

import framescope
from framescope.decompiler.frontend.wellformed import code_units, malformed
from framescope.errors import DecompilationError


def sample(a, b=2, *rest, key=None, **more):
    total = a
    for item in rest:
        try:
            total += item.value[b]
        except (KeyError, IndexError) as err:
            total -= len(str(err))
    return lambda: total + len(more) + (key or 0)


def first(code: types.CodeType, opname: str) -> int:
    return next(ins.offset for ins in dis.get_instructions(code) if ins.opname == opname)


def with_arg(code: types.CodeType, opname: str, arg: int) -> types.CodeType:
    """``code`` with the first ``opname``'s argument byte set to ``arg``."""
    raw = bytearray(code.co_code)
    raw[first(code, opname) + 1] = arg
    return code.replace(co_code=bytes(raw))


def all_codes(code: types.CodeType):
    yield code
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            yield from all_codes(const)


def test_compiled_code_is_wellformed():
    for module in ("textwrap", "fractions", "json.decoder", "dataclasses"):
        spec = __import__("importlib.util").util.find_spec(module)
        code = compile(spec.loader.get_source(module), spec.origin or module, "exec", dont_inherit=True)
        assert [c.co_name for c in all_codes(code) if malformed(c)] == []


def test_code_that_ran_specialised_and_traced_is_wellformed():
    code = sample.__code__
    for _ in range(200):  # 3.11+ specialise the adaptive code in place
        sample(1, 0, types.SimpleNamespace(value=[3]), types.SimpleNamespace(value={}))
    assert_reads_as_co_code(code)
    sys.settrace(lambda *args: None)  # 3.12+ instrument it
    try:
        sample(1, 0, types.SimpleNamespace(value=[3]))
    finally:
        sys.settrace(None)
    assert_reads_as_co_code(code)


def assert_reads_as_co_code(code: types.CodeType) -> None:
    assert malformed(code) is None
    units, offsets = code_units(code), [ins.offset for ins in dis.get_instructions(code)]
    # The instructions read back as co_code has them (inline caches hold counters, not zeros).
    assert [units[at:at + 2] for at in offsets] == [code.co_code[at:at + 2] for at in offsets]


@pytest.mark.parametrize("opname, what", [("LOAD_CONST", "constant index"), ("LOAD_FAST", "variable index"),
                                          ("LOAD_GLOBAL", "name index")])
def test_an_index_out_of_range_is_refused_with_a_reason(opname, what):
    code = sample.__code__
    raw = bytearray(code.co_code)
    at = first(code, opname)
    raw[at + 1] = 250
    try:
        bad = code.replace(co_code=bytes(raw))
    except ValueError:  # 3.13+ check some arguments themselves
        pytest.skip("CPython refuses the code object itself")
    assert malformed(bad).startswith("%s " % what) and malformed(bad).endswith("at offset %d" % at)
    with pytest.raises(DecompilationError, match="malformed bytecode: %s" % what):
        framescope.decompile(bad)


def test_a_jump_out_of_the_bytecode_is_refused():
    code = sample.__code__
    jump = next(ins for ins in dis.get_instructions(code) if ins.opcode in dis.hasjrel + dis.hasjabs
                and ins.opname != "EXTENDED_ARG")
    raw = bytearray(code.co_code)
    raw[jump.offset + 1] = 255
    if jump.offset - 2 >= 0 and raw[jump.offset - 2] == dis.opmap["EXTENDED_ARG"]:
        raw[jump.offset - 1] = 255
    bad = code.replace(co_code=bytes(raw))
    assert "jumps to" in malformed(bad)


def test_a_copy_deeper_than_nothing_is_refused():
    def f(x):
        return x

    if "COPY" in dis.opmap:
        raw = bytearray(f.__code__.co_code)
        at = len(raw) - 2  # the return becomes COPY 0
        raw[at], raw[at + 1] = dis.opmap["COPY"], 0
        assert malformed(f.__code__.replace(co_code=bytes(raw))) == "COPY with argument 0 at offset %d" % at


@pytest.mark.skipif(sys.version_info < (3, 11), reason="inline caches are 3.11+")
def test_caches_past_the_end_are_refused_without_reading_co_code():
    def f(x):
        y = x
        return y

    raw = bytearray(f.__code__.co_code)
    # The instruction before the last becomes LOAD_ATTR: its first cache is the last unit
    # (CPython makes the object), the others lie past the end, where co_code would write.
    raw[-4] = dis.opmap["LOAD_ATTR"]
    bad = f.__code__.replace(co_code=bytes(raw))
    assert "inline caches past the end" in malformed(bad)


@pytest.mark.skipif(sys.version_info < (3, 11), reason="the exception table is 3.11+")
def test_an_exception_table_off_the_instructions_is_refused():
    code = sample.__code__
    table = bytearray(code.co_exceptiontable)
    assert table
    table[0] = 0x80 | 63  # the first range starts past the end (units counted in 6 bits)
    bad = code.replace(co_exceptiontable=bytes(table))
    assert "exception table" in malformed(bad)


@pytest.mark.skipif(sys.version_info < (3, 11), reason="locals, cells and free variables share numbers from 3.11")
def test_the_variable_count_is_that_of_the_code_object():
    def outer(a, b):
        def inner():
            return a + c
        c = 1
        return inner

    for code in all_codes(outer.__code__):  # a cell that is an argument, and a free variable
        count = len(code.co_varnames) + len(code.co_cellvars) + len(code.co_freevars) \
            - len(set(code.co_varnames) & set(code.co_cellvars))
        code._varname_from_oparg(count - 1)
        with pytest.raises(IndexError):
            code._varname_from_oparg(count)


@pytest.mark.skipif(sys.version_info < (3, 13), reason="ENTER_EXECUTOR is 3.13+")
def test_an_executor_no_optimizer_wrote_is_refused():
    from framescope.decompiler.frontend.wellformed import optimizer_running

    if optimizer_running():
        pytest.skip("an optimizer runs here: its executors are taken for its own")
    raw = bytearray(sample.__code__.co_code)
    raw[2] = dis.opmap["ENTER_EXECUTOR"]
    bad = sample.__code__.replace(co_code=bytes(raw))
    assert malformed(bad).startswith("ENTER_EXECUTOR at offset 2")
