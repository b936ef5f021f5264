"""framescope.decompile on every kind of object, readable output, and bad input."""
import functools
import sys
import textwrap

import pytest

from framescope import DecompilationError, decompile

README_SOURCE = '''\
def parse(items, *, strict=False):
    """Parse numbers, skipping blanks."""
    out = []
    for item in items:
        if not item:
            continue
        try:
            out.append(int(item))
        except ValueError as err:
            if strict:
                raise ValueError(f'bad item {item!r}') from err
    return out'''


def define(source: str, name: str = "f"):
    namespace: dict = {}
    exec(compile(textwrap.dedent(source), "<test>", "exec"), namespace)
    return namespace[name]


def test_readme_example_reads_like_the_original():
    assert decompile(define(README_SOURCE, "parse")) == README_SOURCE


@pytest.mark.parametrize("source", [
    "def f(a, b):\n    if a:\n        x = 1\n    elif b:\n        x = 2\n    else:\n        x = 3\n    return x",
    "def f(n):\n    total = 0\n    while n:\n        total += n\n        n -= 1\n    return total",
    "def f(xs):\n    return [x for x in xs if x > 0]",
    # Displays of constants (3.9+ build them from a constant tuple or frozenset), starred
    # literals passed to calls, a set display that repeats an item.
    "def f(g):\n    x = ['a', 'b', 'c']\n    g(*['try:', 'pass'])\n    g(*(0, 1))\n    return x, {3, 3, 3}",
])
def test_output_is_the_source_back(source):
    assert decompile(define(source)) == source


def test_methods_partials_and_wrapped():
    class C:
        def m(self, x):
            return x + 1

        @staticmethod
        def s(y):
            return -y

    def plain(a, b):
        return a * b

    @functools.wraps(plain)
    def wrapper(*args):
        return plain(*args)

    assert decompile(C().m).startswith("def m(self, x):")
    assert decompile(C.m).startswith("def m(self, x):")
    assert decompile(C.__dict__["s"]).startswith("def s(y):")
    assert decompile(functools.partial(plain, 2)).startswith("def plain(a, b):")
    assert decompile(wrapper).startswith("def plain(a, b):")


def test_code_objects_and_modules():
    module = compile("import os\nX = [1, 2]\nfor i in X:\n    print(i)\n", "<mod>", "exec")
    text = decompile(module)
    assert "import os" in text and "for i in X:" in text
    func = define("def f(a):\n    return a\n")
    assert decompile(func.__code__) == "def f(a):\n    return a"


def test_lambda_and_async_and_generator():
    assert "lambda x: x + 1" in decompile(define("def f():\n    return lambda x: x + 1\n"))
    assert decompile(define("async def f(a):\n    return await a\n")).startswith("async def f(a):")
    assert "yield" in decompile(define("def f(a):\n    yield a\n"))


@pytest.mark.parametrize("bad", [42, "text", None, object()])
def test_bad_input_is_a_type_error(bad):
    with pytest.raises(TypeError) as info:
        decompile(bad)
    assert "\n" not in str(info.value)


def test_decompilation_error_is_one_line():
    err = DecompilationError("stack underflow", code_name="f", offset=12, opname="POP_TOP")
    assert str(err) == "f, offset 12, POP_TOP: stack underflow"


def test_lambda_objects_decompile_to_lambda_expressions():
    assert decompile(lambda x, y=2: x + y) == "lambda x, y=2: x + y"
    k = 3
    assert decompile(lambda x: x + k) == "lambda x: x + k"


def test_internal_failures_surface_as_decompilation_errors():
    # A code object whose bytecode was tampered with cannot be decompiled; the error says so in one line.
    code = define("def f(a):\n    return a\n").__code__
    broken = code.replace(co_code=code.co_code[:-2]) if hasattr(code, "replace") else code
    with pytest.raises(DecompilationError) as info:
        decompile(broken)
    assert "\n" not in str(info.value)


def test_verify_false_returns_unchecked_source():
    func = define("def f(a):\n    return a + 1\n")
    assert decompile(func, verify=False) == decompile(func)
    import framescope.decompiler.api as api

    calls = []
    original = api.check
    api.check = lambda source, code: calls.append(code)
    try:
        decompile(func, verify=False)
        assert calls == []  # no self-check was run
        decompile(func)
        assert len(calls) == 1
    finally:
        api.check = original


@pytest.mark.skipif(__import__("sys").platform == "emscripten", reason="Pyodide cannot start processes")
def test_set_displays_read_the_same_under_every_hash_seed():
    """A set of strings is a frozenset constant whose order follows hash randomisation."""
    import os
    import subprocess
    import sys

    program = ("from framescope import decompile\n"
               "def f(x):\n    return {'gettext', 'ngettext', 'pgettext', 'npgettext', 'lgettext'} & x\n"
               "print(decompile(f))\n")
    texts = set()
    for seed in ("1", "2", "3"):
        env = dict(os.environ, PYTHONHASHSEED=seed)
        done = subprocess.run([sys.executable, "-c", program], env=env, stdout=subprocess.PIPE,
                              universal_newlines=True, check=True)
        texts.add(done.stdout)
    assert len(texts) == 1, texts


def module(source: str):
    return compile(textwrap.dedent(source), "m.py", "exec")


# 3.14 compiles module annotations into __annotate__ with __conditional_annotations__.
MODULE_ANNOTATIONS = pytest.mark.xfail(
    sys.version_info >= (3, 14), strict=True, raises=DecompilationError,
    reason="3.14 module annotations (__conditional_annotations__) are not decompiled yet")


@pytest.mark.parametrize("source, expected, since", [
    ("import a.b.c as d\nimport x.y.z as w\n", None, (3, 8)),
    ("from m import *\nfrom .. import *\n", None, (3, 8)),
    # Up to 3.11 an f-string statement is compiled (3.12+ drops it): it is not the docstring.
    ("f'''Not a docstring'''\nx = 1\n", "f'Not a docstring'\nx = 1\n", (3, 8)),
    pytest.param("x: int\ny: str = 'a'\nif y:\n    z: int = 1\n", None, (3, 8), marks=MODULE_ANNOTATIONS),
    ("class C[T]:\n    pass\n\n\ntype A = list[int]\n", None, (3, 12)),
    # 3.8 loads an assert's AssertionError with LOAD_GLOBAL, in a module or class body too.
    ("import sys\nassert sys.platform != 'none', 'platform'\n\n\nclass C:\n    assert len('ab') == 2\n", None, (3, 8)),
    # Under the future import annotations are kept as text: they read back as expressions.
    pytest.param("from __future__ import annotations\nx: list[int] = []\n\n\ndef f(a: int, *b: str) -> dict[str, int]:\n"
                 "    class C:\n        y: 'quoted'\n    return C\n", None, (3, 8), marks=MODULE_ANNOTATIONS),
])
def test_module_code(source, expected, since):
    if sys.version_info < since:
        pytest.skip("needs Python %d.%d" % since)
    if expected is not None and sys.version_info >= (3, 12):
        expected = "x = 1\n"
    text = decompile(module(source), machine=False)  # checked: recompiles to the same bytecode
    assert text.strip() == (expected or source).strip()


def test_module_code_with_a_long_statement():
    """The decompiled statement is one long line, where 3.8-3.9's peephole optimizer does not
    fold the constants of a lambda's defaults into a tuple; the source's short lines it folds."""
    source = "x = 1\nd = dict(\n" + "".join("    a%d=[lambda x=False: None],\n" % i for i in range(30)) + ")\ny = 2\n"
    text = decompile(module(source), machine=False)  # checked: recompiles to equivalent bytecode
    assert text.startswith("x = 1\nd = dict(a0=[lambda x=False: None], ")


MIXED = '''\
import os


def fine(a, b=1):
    return a + b


def keep(func):
    return func


@keep
def refused(x, *args, k=2, **kw):
    return os.sep * x


class T:
    """Doc."""

    def method(self):
        return super().method()

    def other(self):
        return refused(1)


X = fine(1)'''


@pytest.fixture
def refusing(monkeypatch):
    """Make the source decompiler refuse the functions named ``refused`` and ``method``."""
    from framescope.decompiler import function

    real = function.function_def

    def refuse_some(code, func=None, name=None):
        if code.co_name in ("refused", "method"):
            raise DecompilationError("pretend this cannot be read", code_name=code.co_name)
        return real(code, func, name)

    monkeypatch.setattr(function, "function_def", refuse_some)


def test_partial_writes_stubs_for_refused_functions(refusing):
    code = module(MIXED)
    with pytest.raises(DecompilationError):
        decompile(code)  # strict by default
    text = decompile(code, partial=True)
    assert "def fine(a, b=1):\n    return a + b" in text and "X = fine(1)" in text
    assert "# framescope: cannot decompile refused: pretend this cannot be read\n" in text
    # The comment goes above the decorators, and holds the function's disassembly.
    comment = text[text.index("# framescope: cannot decompile refused"):text.index("@keep")]
    assert "RETURN_VALUE" in comment and all(line.startswith("#") for line in comment.splitlines())
    assert "def refused(x, *args, k=2, **kw):\n    raise NotImplementedError(" in text
    assert "    # framescope: cannot decompile T.method: " in text and "    def other(self):\n" in text
    namespace: dict = {}
    exec(compile(text, "m.py", "exec"), namespace)
    assert namespace["fine"](2) == 3
    with pytest.raises(NotImplementedError, match="pretend this cannot be read"):
        namespace["T"]().other()


def test_partial_is_the_whole_source_when_nothing_is_refused():
    code = module(MIXED)
    assert decompile(code, partial=True) == decompile(code)


def test_partial_of_a_class_body(refusing):
    namespace: dict = {}
    exec(compile(MIXED, "m.py", "exec"), namespace)
    body = next(c for c in module(MIXED).co_consts if getattr(c, "co_name", "") == "T")
    text = decompile(body, partial=True)
    assert text.startswith("class T:") and "def other(self):\n        return refused(1)" in text
    assert "def method(self):\n        __class__\n        raise NotImplementedError(" in text


def test_partial_refuses_what_stubs_do_not_help(monkeypatch):
    """When the module's own code is refused, partial raises as the strict call does."""
    import framescope.decompiler.api as api

    def refuse(*args, **kwargs):
        raise DecompilationError("module code refused", code_name="<module>")

    monkeypatch.setattr(api, "module_tree", refuse)
    with pytest.raises(DecompilationError, match="module code refused"):
        decompile(module(MIXED), partial=True)


def test_cli_prints_stubs_and_exits_partial(refusing, capsys):
    from framescope.cli import PARTIAL, print_module

    assert print_module(module(MIXED), 4) == PARTIAL
    out = capsys.readouterr().out
    assert "def fine(a, b=1):" in out and "# framescope: cannot decompile refused:" in out


def test_partial_stubs_a_function_that_differs_only_in_the_whole(monkeypatch):
    """A function whose own check passes but that differs in the recompiled module is a stub too."""
    import ast as ast_module

    from framescope.decompiler import function, partial

    real = function.function_def

    def wrong_fine(code, func=None, name=None):
        node = real(code, func, name)
        if code.co_name == "fine":
            node.body = [ast_module.Return(value=ast_module.Constant(value=0))]
        return node

    monkeypatch.setattr(function, "function_def", wrong_fine)
    monkeypatch.setattr(partial, "check_alone", lambda node, code, indent: None)
    text = decompile(module(MIXED), partial=True)
    assert "# framescope: cannot decompile fine: recompiled code differs: <module>.fine: " in text
    assert "def fine(a, b=1):\n    raise NotImplementedError(" in text
    assert "def other(self):\n        return refused(1)" in text
