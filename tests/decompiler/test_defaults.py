"""A function object's defaults in the decompiled signature: literals, module globals,
attributes of globals, and a marked ``...`` for values no source spells."""
import ast
import json.decoder
import re
import textwrap

import pytest

from framescope import decompile
from framescope.decompiler.emit.defaults import function_defaults
from framescope.decompiler.emit.unparse import unparse


def define(source: str, name: str = "f", namespace=None):
    namespace = {} if namespace is None else namespace
    exec(compile(textwrap.dedent(source), "<test>", "exec"), namespace)
    return namespace[name]


def signature(text: str) -> str:
    return next(line for line in text.splitlines() if not line.startswith("#"))


def spelled(value) -> str:
    func = define("def f(x):\n    return x\n")
    func.__defaults__ = (value,)
    defaults, _, notes = function_defaults(func)
    return "..." if notes else unparse(defaults[0])


def test_py_scanstring_keeps_its_defaults():
    text = decompile(json.decoder.py_scanstring)
    assert text.startswith("def py_scanstring(s, end, strict=True, _b=BACKSLASH, _m=STRINGCHUNK.match):\n")


@pytest.mark.parametrize("value", [
    0, -1, 10 ** 30, -2.5, -0.0, float("inf"), 1j, complex(-0.0, -1.0), "", "a'\"\n\x00\u2028", b"\x00b", None,
    True, False, ..., (), (1,), (1, ("x", None)), [], [1, [2]], {}, {"k": [1], 2: (3,)}, set(), {1, "a"},
    frozenset(), frozenset({1, (2, 3)}),
])
def test_literal_defaults_read_back_equal_and_of_the_same_type(value):
    text = spelled(value)
    assert text != "..." or value is ...
    back = eval(text, {})
    assert type(back) is type(value) and (back == value or repr(back) == repr(value))


def test_nan_and_values_without_a_literal():
    assert repr(eval(spelled(float("nan")), {})) == "nan"
    assert spelled(object()) == "..."
    assert spelled(type("T", (), {})()) == "..."
    loop = []
    loop.append(loop)
    assert spelled(loop) == "..."  # a list holding itself has no finite display


def test_a_mix_shows_every_default_and_marks_those_without_a_spelling():
    namespace = {"re": re}
    func = define("""\
        SENTINEL = object()
        PATTERN = re.compile('a')
        def f(a, b=1, c=SENTINEL, d=object(), e=PATTERN.match, g=re.IGNORECASE, h=len, *, k=object(), m='x'):
            return a
        """, namespace=namespace)
    text = decompile(func)
    lines = text.splitlines()
    assert lines[2] == ("def f(a, b=1, c=SENTINEL, d=..., e=PATTERN.match, g=re.IGNORECASE, h=len, *, k=..., "
                        "m='x'):")
    assert lines[0].startswith("# framescope: d=... stands for a default with no source spelling: <object object")
    assert lines[1].startswith("# framescope: k=... stands for a default with no source spelling: <object object")
    compile(text, "<decompiled>", "exec")


def test_a_mutable_global_is_named_not_copied():
    func = define("TABLE = {'a': 1}\nSEEN = []\ndef f(x, t=TABLE, s=SEEN, fresh=[]):\n    return x\n")
    assert signature(decompile(func)) == "def f(x, t=TABLE, s=SEEN, fresh=[]):"


def test_a_shadowed_builtin_is_not_a_spelling():
    func = define("def f(x, n=len, s=set()):\n    return x\nlen = set = None\n")
    text = decompile(func)
    assert signature(text) == "def f(x, n=..., s=...):"
    assert text.count("# framescope:") == 2


def test_keyword_only_and_positional_only_defaults():
    func = define("G = (1, 2)\ndef f(a, b=-3, /, c=G, *args, d, e=None, g=G, **kw):\n    return a\n")
    assert signature(decompile(func)) == "def f(a, b=-3, /, c=G, *args, d, e=None, g=G, **kw):"
    func = define("def f(*, a=b'x', b=(1, [2])):\n    return a\n")
    assert signature(decompile(func)) == "def f(*, a=b'x', b=(1, [2])):"


def test_lambda_defaults_likewise():
    text = decompile(define("OBJ = object()\nf = lambda x, y=OBJ, z=object(), *, k=2: x\n"))
    assert text.splitlines()[0].startswith("# framescope: z=... stands for a default")
    assert text.splitlines()[1] == "lambda x, y=OBJ, z=..., *, k=2: x"


def test_a_closure_and_a_method_keep_their_defaults():
    func = define("""\
        MISSING = object()
        def outer(n):
            def f(x, default=MISSING, step=n):
                return x + step
            return f
        f = outer(3)
        """)
    assert signature(decompile(func)) == "def f(x, default=MISSING, step=3):"
    assert signature(decompile(json.JSONDecoder.__init__)).startswith("def __init__(self, *, object_hook=None,")


def test_a_default_whose_repr_fails_is_still_marked():
    class Bad:
        def __repr__(self):
            raise RuntimeError("no repr")

    func = define("def f(x, y=None):\n    return x\n")
    func.__defaults__ = (Bad(),)
    text = decompile(func)
    assert text.splitlines()[0].startswith("# framescope: y=... stands for a default with no source spelling: <Bad instance at 0x")
    ast.parse(text)
