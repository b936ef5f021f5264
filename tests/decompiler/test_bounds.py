"""Input too deep or too large to decompile is refused in bounded time, with one line."""
from __future__ import annotations

import dis
import time

import pytest

from framescope import DecompilationError, decompile


def test_an_expression_nested_ten_thousand_levels_deep_is_refused():
    code = compile("def f(x):\n    return -x\n", "<t>", "exec").co_consts[0]
    raw = code.co_code
    at = next(i for i in range(0, len(raw), 2) if raw[i] == dis.opmap["UNARY_NEGATIVE"])
    deep = code.replace(co_code=raw[:at] + raw[at:at + 2] * 10000 + raw[at + 2:])
    began = time.perf_counter()
    with pytest.raises(DecompilationError) as refused:
        decompile(deep)
    assert time.perf_counter() - began < 60
    message = str(refused.value)
    assert "too deeply nested" in message and "internal error" not in message and "\n" not in message


def many_loops(lines: int) -> str:
    """A function of ``lines`` lines: assignments, calls, ifs and for loops, over and over."""
    body = []
    while len(body) < lines - 2:
        k = len(body)
        body += ["    x = x + %d" % k, "    if x > y:", "        y = g(x, y, %d)" % k,
                 "    for i in range(y):", "        x += i"]
    return "def f(x, y):\n" + "\n".join(body[:lines - 2]) + "\n    return x, y\n"


def test_a_fifty_thousand_line_function_is_refused_in_bounded_time():
    source = many_loops(50000)
    assert source.count("\n") == 50000
    code = compile(source, "<big>", "exec").co_consts[0]
    began = time.perf_counter()
    with pytest.raises(DecompilationError) as refused:
        decompile(code)
    assert time.perf_counter() - began < 120
    assert "too large to decompile in bounded time" in str(refused.value)


def test_a_large_function_under_the_bound_decompiles():
    code = compile(many_loops(1000), "<big>", "exec").co_consts[0]
    assert decompile(code).startswith("def f(x, y):")
