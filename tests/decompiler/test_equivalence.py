"""The bytecode equivalence checker, recompile_function, and the round-trip benchmark harness.

Positive cases compile the same program twice with different layouts (what
``ast.unparse`` prints, one-line compound statements, blank lines, line
continuations) and must be equivalent; negative cases differ in behaviour and
must not be.  Everything runs on the interpreter running the tests.
"""
from __future__ import annotations

import ast
import copy
import importlib.util
import os
import sys
import textwrap
from types import CodeType
from typing import List, Tuple

import pytest

from framescope import DecompilationError
from framescope.decompiler.verify.equivalence import (
    Difference,
    compare_code,
    equivalent,
    find_difference,
    recompile_function,
)

PY = sys.version_info[:2]
HAS_UNPARSE = hasattr(ast, "unparse")
REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def module(source: str) -> CodeType:
    return compile(textwrap.dedent(source), "<test>", "exec", dont_inherit=True)


def function(source: str, name: str = "f") -> CodeType:
    """The code object of function ``name`` defined at the top of ``source``."""
    for const in module(source).co_consts:
        if isinstance(const, CodeType) and const.co_name == name:
            return const
    raise AssertionError("no function %s" % name)


def unparsed(source: str) -> CodeType:
    return module(ast.unparse(ast.parse(textwrap.dedent(source))))


# ------------------------------------------------------------------ snippets that ast.unparse re-lays out

# (minimum version, source).  Layouts are deliberately unlike ast.unparse's.
SNIPPETS = [
    ((3, 8), """
        def f(a, b):
            if a: return 1
            elif b:
                x = 2
            else: x = 3

            return x
    """),
    ((3, 8), """
        def f(a, b, *args, c=1, **kw):
            total = (a +
                     b) * \\
                c
            for item in args:
                if item is None: continue
                if item == 'stop': break
                total += item
            else:
                total = -total
            return total, kw
    """),
    ((3, 8), """
        def f(xs):
            i = 0
            while i < len(xs):
                if xs[i]:
                    i += 2; continue
                i += 1
            else:
                return None
    """),
    ((3, 8), """
        def f(path):
            try:
                handle = open(path)
            except (OSError,
                    ValueError) as error:
                print(error); raise
            except Exception:
                return None
            else:
                return handle.read()
            finally:
                print('done')
    """),
    ((3, 8), """
        def f(a, b):
            with a as x, b as y:
                return x + y
    """),
    ((3, 8), """
        async def f(session, urls):
            async with session:
                async for chunk in session.get(urls):
                    await session.put(chunk)
            return [u async for u in urls if u]
    """),
    ((3, 8), """
        def f(n):
            yield n
            got = yield from range(n)
            return got
    """),
    ((3, 8), """
        def f(data):
            squares = [x * x for x in data
                       if x % 2]
            lookup = {k: v for k, v in
                      data.items()}
            unique = {x for x in data}
            lazy = (x for x in data if x)
            key = lambda item: (item[1],
                                item[0])
            return squares, lookup, unique, lazy, key
    """),
    ((3, 8), """
        def f(value):
            def inner(extra):
                nonlocal value
                value = value + extra
                return value
            return inner
    """),
    ((3, 8), """
        class C(Base):
            '''A class.'''
            attribute = 1

            def method(self, x):
                return super().method(x) + self.__secret

            @property
            def prop(self):
                return self.attribute
    """),
    ((3, 8), """
        def f(a, b, c):
            return (a if b else c,
                    a and b or c,
                    not a,
                    a < b <= c,
                    a is not None,
                    b not in c,
                    f'{a!r:>{b}} and {c}',
                    a[1:2], a[::2], a[b, c],
                    [*a, *b], {**b, 'k': c},
                    -a, ~b, a ** -1)
    """),
    ((3, 8), """
        def f(items):
            first, *rest = items
            (a, b), c = rest[0], rest[1]
            del items[0]
            assert first, 'empty'
            global counter
            counter += 1
            return a, b, c
    """),
    ((3, 8), """
        def f(x):
            if (n := len(x)) > 10:
                return n
            return x.strip() \\
                .lower() \\
                .split()
    """),
    ((3, 8), """
        def f(a, b):
            '''Docstring with
               several lines.'''
            raise ValueError(a) from b
    """),
    ((3, 8), """
        def f(a, /, b, *, c):
            return a, b, c
    """),
    ((3, 10), """
        def f(command):
            match command.split():
                case [action]:
                    return action
                case ['go', direction] | ['move', direction]:
                    return direction
                case {'x': x, **rest} if x > 0:
                    return rest
                case Point(x=0, y=y):
                    return y
                case _:
                    return None
    """),
    ((3, 11), """
        def f(task):
            try:
                task()
            except* ValueError as group:
                print(group)
            except* TypeError:
                pass
    """),
    ((3, 12), """
        def f[T: int, *Ts, **P](x: T) -> T:
            type Alias[K] = list[K]
            return x
    """),
]


def _runs(minimum: Tuple[int, int]) -> bool:
    return PY >= minimum


@pytest.mark.skipif(not HAS_UNPARSE, reason="ast.unparse is new in 3.9")
@pytest.mark.parametrize("minimum, source", SNIPPETS)
def test_unparse_round_trip_is_equivalent(minimum: Tuple[int, int], source: str) -> None:
    if not _runs(minimum):
        pytest.skip("syntax needs Python %d.%d" % minimum)
    assert compare_code(module(source), unparsed(source)) is None


@pytest.mark.parametrize("minimum, source", SNIPPETS)
def test_moved_code_is_equivalent(minimum: Tuple[int, int], source: str) -> None:
    # Other first line, file name and line table: nothing that changes behaviour.
    if not _runs(minimum):
        pytest.skip("syntax needs Python %d.%d" % minimum)
    original = module(source)
    moved = compile("\n\n\n" + textwrap.dedent(source), "<elsewhere>", "exec", dont_inherit=True)
    first = [c for c in original.co_consts if isinstance(c, CodeType)][0]
    moved_first = [c for c in moved.co_consts if isinstance(c, CodeType)][0]
    assert moved_first.co_firstlineno == first.co_firstlineno + 3
    assert equivalent(original, moved)


# ------------------------------------------------------------------ layout tolerance

# The same function in two layouts; 3.11+ compile some of them to different bytes.
LAYOUTS = [
    ("""
        def f(a):
            try:
                g()
            except E:
                h()
    """, """
        def f(a):
            try: g()
            except E: h()
    """),
    ("""
        def f(a):
            return [x
                    for x in a
                    if x]
    """, """
        def f(a):
            return [x for x in a if x]
    """),
    ("""
        def f(a, b):
            x = a
            y = b
            return x, y
    """, """
        def f(a, b):
            x = a; y = b
            return x, y
    """),
    ("""
        def f(a, b):
            if a:
                g()

            h()
    """, """
        def f(a, b):
            if a: g()
            h()
    """),
    ("""
        def f(a, b):
            while a:
                if b:
                    break
                a = g(a)
    """, """
        def f(a, b):
            while a:
                if b: break
                a = g(a)
    """),
    ("""
        def f(o):
            return (isinstance(o, A) or
                    isinstance(o, B) and
                        bool(o.flags & 4) or
                    isinstance(o, C))
    """, """
        def f(o):
            return isinstance(o, A) or (isinstance(o, B) and bool(o.flags & 4)) or isinstance(o, C)
    """),
    ("""
        def f(lines):
            for line in lines[1:]:
                content = len(line.lstrip())
                if content:
                    indent = len(line) - content
                    margin = min(margin, indent)
            return margin
    """, """
        def f(lines):
            for line in lines[1:]:
                content = len(line.lstrip())
                if content: indent = len(line) - content; margin = min(margin, indent)
            return margin
    """),
]


def _bytes(code: CodeType) -> Tuple[bytes, bytes]:
    return code.co_code, getattr(code, "co_exceptiontable", b"")


@pytest.mark.parametrize("left, right", LAYOUTS)
def test_layouts_are_equivalent(left: str, right: str) -> None:
    assert compare_code(function(left), function(right)) is None


def test_some_layouts_compile_to_different_bytes() -> None:
    # Without this, the layout tests above would prove nothing on 3.11+.
    differing = [pair for pair in LAYOUTS if _bytes(function(pair[0])) != _bytes(function(pair[1]))]
    if PY >= (3, 11):
        assert differing, "no layout pair compiles differently on this version"
    for left, right in differing:
        assert equivalent(function(left), function(right))


def test_thread_jump_if_or_pop() -> None:
    # 3.10-3.11 thread `or`/`and` jumps only when both tests share a line.
    left, right = LAYOUTS[5]
    assert compare_code(function(left), function(right)) is None


MATCH_CAPTURES = ("""
    def f(self, payload):
        match payload:
            case {
                "complete": {
                    "text": str(text),
                    "line": str(line),
                    "begidx": int(begidx),
                    "endidx": int(endidx),
                }
            }:
                return self.complete(text, line, begidx, endidx)
""", """
    def f(self, payload):
        match payload:
            case {'complete': {'text': str(text), 'line': str(line), 'begidx': int(begidx), 'endidx': int(endidx)}}:
                return self.complete(text, line, begidx, endidx)
""")


@pytest.mark.skipif(PY < (3, 10), reason="match is new in 3.10")
def test_swaps_resolved_into_reordered_stores_are_equivalent() -> None:
    # 3.14 turns the SWAPs after the captures into reordered stores only when they share a line.
    left, right = (function(source) for source in MATCH_CAPTURES)
    if PY >= (3, 14):
        assert _bytes(left) != _bytes(right)
    assert compare_code(left, right) is None


@pytest.mark.parametrize("left, right", [
    ("def f(a, b):\n    a, b = b, a\n    return a, b", "def f(a, b):\n    b, a = b, a\n    return a, b"),
    ("def f(t):\n    x, _, y = t\n    return x", "def f(t):\n    y, _, x = t\n    return x"),
    ("def f(t):\n    x, x = t\n    return x", "def f(t):\n    x, y = t\n    return x"),
    ("def f(a, b):\n    x, y = a, b\n    return x", "def f(a, b):\n    y, x = a, b\n    return x"),
])
def test_reordered_stores_to_other_locals_are_not_equivalent(left: str, right: str) -> None:
    assert compare_code(function(left), function(right)) is not None


# ------------------------------------------------------------------ different behaviour

NOT_EQUIVALENT = [
    ("a + b", "b + a"),
    ("x = 1", "x = 2"),
    ("x = 0", "x = False"),
    ("x = 0", "x = 0.0"),
    ("x = 1", "x = True"),
    ("x = 0.0", "x = -0.0"),
    ("x = 1j", "x = -1j"),
    ("x = ''", "x = b''"),
    ("x = ()", "x = (0,)"),
    ("x = (0, 1)", "x = (False, 1)"),
    ("y = x in {0, 1}", "y = x in {False, 1}"),
    ("if a: f()", "if not a: f()"),
    ("if a: f()\nelse: g()", "if a: g()\nelse: f()"),
    ("while a: f()", "if a: f()"),
    ("for x in y: break", "for x in y: continue"),
    ("try: f()\nexcept ValueError: pass", "try: f()\nexcept TypeError: pass"),
    ("try: f()\nexcept E: pass\ng()", "try:\n    f()\n    g()\nexcept E: pass"),
    ("try: f()\nfinally: g()", "try: f()\nexcept: g()"),
    ("x = a < b", "x = a > b"),
    ("x = a is None", "x = a is not None"),
    ("x = a and b", "x = a or b"),
    ("x = a[1:2]", "x = a[1:3]"),
    ("f(a, b)", "f(b, a)"),
    ("f(x=1)", "f(y=1)"),
    ("f(*a)", "f(a)"),
    ("x = a.b", "x = a.c"),
    ("del x", "x = None"),
    ("raise E", "raise E from None"),
    ("def f(a, b=1): pass", "def f(a, b): pass"),
    ("def f(a, b=1): pass", "def f(a, b=2): pass"),
    ("def f(a, *, b): pass", "def f(a, b): pass"),
    ("def f(a, /, b): pass", "def f(a, b): pass"),
    ("def f(*a): pass", "def f(a): pass"),
    ("def f(**a): pass", "def f(a): pass"),
    ("def f(): yield 1", "def f(): return 1"),
    ("async def f(): return 1", "def f(): return 1"),
    ("def f(): return g()", "def f(): g()"),
    ("def f():\n    x = 1\n    return x", "def f():\n    y = 1\n    return y"),
    ("def f():\n    global x\n    x = 1", "def f():\n    x = 1"),
    ("def f():\n    '''doc'''", "def f():\n    pass"),
    ("def f():\n    '''doc'''", "def f():\n    '''other'''"),
    ("k = lambda: 1", "k = lambda: 2"),
    ("k = lambda a: a", "k = lambda b: b"),
    ("k = [x for x in y]", "k = [x for x in z]"),
    ("def f():\n    x = 1\n    def g(): return x", "def f():\n    x = 1\n    def g(): return 1"),
    ("class C:\n    def m(self): return 1", "class C:\n    def m(self): return 2"),
    ("while True: pass", "while True: f()"),
]


@pytest.mark.parametrize("left, right", NOT_EQUIVALENT)
def test_different_behaviour_is_not_equivalent(left: str, right: str) -> None:
    a, b = module(left), module(right)
    difference = compare_code(a, b)
    assert difference is not None
    assert "\n" not in difference
    assert compare_code(b, a) is not None
    # Each side is equivalent to a fresh compile of itself.
    assert equivalent(a, module(left)) and equivalent(b, module(right))


def test_nan_equals_nan() -> None:
    # The compiler folds inf - inf into a nan constant; two compiles hold two nan objects.
    assert equivalent(module("x = 1e400 - 1e400"), module("x = 1e400 - 1e400"))
    assert equivalent(module("x = (1e400 - 1e400, 1)"), module("x = (1e400 - 1e400, 1)"))
    assert not equivalent(module("x = 1e400 - 1e400"), module("x = 1e400"))


def test_difference_names_code_offset_and_instructions() -> None:
    found = find_difference(function("def f(a):\n    return a + 1"), function("def f(a):\n    return a + 2"))
    assert isinstance(found, Difference)
    assert found.where == "f"
    assert found.kind == "LOAD_CONST"
    assert "offset" in found.detail and "1" in found.detail and "2" in found.detail
    assert found.message.startswith("f: ")


def test_nested_difference_is_reported_with_its_path() -> None:
    left = function("def f():\n    def g():\n        return [x for x in 'ab']\n    return g")
    right = function("def f():\n    def g():\n        return [x for x in 'ac']\n    return g")
    message = compare_code(left, right)
    assert message is not None and message.startswith("f.g")


def test_attributes_are_compared() -> None:
    assert "co_name" in (compare_code(function("def f(): pass"), function("def g(): pass", "g")) or "")
    assert "co_varnames" in (compare_code(function("def f(a): pass"), function("def f(b): pass")) or "")
    assert "co_flags" in (compare_code(function("def f(): yield"), function("async def f(): yield")) or "")


def test_needs_code_objects() -> None:
    with pytest.raises(TypeError, match="needs two code objects"):
        compare_code("x = 1", module("x = 1"))  # type: ignore[arg-type]


# ------------------------------------------------------------------ the standard library, mutated

STDLIB = ["textwrap", "argparse", "difflib"]


def _stdlib_source(name: str) -> str:
    spec = importlib.util.find_spec(name)
    assert spec is not None and spec.loader is not None
    return spec.loader.get_source(name)  # type: ignore[attr-defined]


def _functions(code: CodeType) -> List[CodeType]:
    found = []
    for const in code.co_consts:
        if isinstance(const, CodeType):
            found.append(const)
            found.extend(_functions(const))
    return found


@pytest.mark.skipif(not HAS_UNPARSE, reason="ast.unparse is new in 3.9")
@pytest.mark.parametrize("name", STDLIB)
def test_stdlib_unparsed_is_equivalent(name: str) -> None:
    source = _stdlib_source(name)
    original = module(source)
    assert compare_code(original, unparsed(source)) is None


class _NegateFirstTest(ast.NodeTransformer):
    """``if t:`` -> ``if not t:`` on the first ``if`` whose branches are not both empty."""

    def __init__(self) -> None:
        self.done = False

    def visit_If(self, node: ast.If) -> ast.AST:
        if not self.done and not isinstance(node.test, ast.Constant) and not _only_pass(node):
            node.test = ast.UnaryOp(ast.Not(), node.test)
            self.done = True
        return self.generic_visit(node)

    def visit_FunctionDef(self, node: ast.AST) -> ast.AST:
        return node  # a nested function's own code is compared as a constant; keep to this one

    visit_AsyncFunctionDef = visit_ClassDef = visit_Lambda = visit_FunctionDef


def _only_pass(node: ast.If) -> bool:
    return all(isinstance(s, ast.Pass) for s in node.body + node.orelse)


@pytest.mark.skipif(not HAS_UNPARSE, reason="ast.unparse is new in 3.9")
@pytest.mark.parametrize("name", STDLIB)
def test_stdlib_negated_tests_are_not_equivalent(name: str) -> None:
    tree = ast.parse(_stdlib_source(name))
    checked = 0
    for node in ast.walk(tree):
        if not isinstance(node, ast.FunctionDef):
            continue
        mutant = copy.deepcopy(node)
        negate = _NegateFirstTest()
        mutant.body = [negate.visit(statement) for statement in mutant.body]
        if not negate.done:
            continue
        before = function(ast.unparse(ast.Module([node], [])), node.name)
        after = function(ast.unparse(ast.Module([mutant], [])), node.name)
        assert compare_code(before, after) is not None, node.name
        checked += 1
    assert checked >= 5


# ------------------------------------------------------------------ recompile_function


def _inner(source: str, *names: str) -> CodeType:
    code = module(source)
    for name in names:
        code = next(c for c in code.co_consts if isinstance(c, CodeType) and c.co_name == name)
    return code


def test_recompile_plain_function() -> None:
    code = function("def f(a):\n    return a + 1")
    recompiled = recompile_function("def f(a):\n    return a + 1", code)
    assert recompiled.co_name == "f" and equivalent(code, recompiled)


def test_recompile_closure() -> None:
    source = """
        def outer():
            x, y = 1, 2
            def inner(z):
                return x + y + z
            return inner
    """
    code = _inner(source, "outer", "inner")
    assert code.co_freevars == ("x", "y")
    recompiled = recompile_function("def inner(z):\n    return x + y + z\n", code)
    assert recompiled.co_freevars == ("x", "y")
    assert compare_code(code, recompiled) is None


def test_recompile_nested_function_without_free_variables_stays_nested() -> None:
    code = _inner("def outer():\n    def inner():\n        return 1\n    return inner", "outer", "inner")
    assert equivalent(code, recompile_function("def inner():\n    return 1", code))


def test_recompile_method_named_like_the_global_it_calls() -> None:
    # A method ``all`` of a class inside a function calls the builtin ``all``: a class body
    # binds no closure variable, so the name stays global in the recompiled method too.
    source = """
        def f(tmpdir):
            class A:
                def all(self):
                    return all(self)

                def open(self, path):
                    return open(tmpdir + path)
            return A
    """
    cls = _inner(source, "f", "A")
    for name, text in (("all", "def all(self):\n    return all(self)\n"),
                       ("open", "def open(self, path):\n    return open(tmpdir + path)\n")):
        code = next(c for c in cls.co_consts if isinstance(c, CodeType) and c.co_name == name)
        assert name not in code.co_freevars
        assert compare_code(code, recompile_function(text, code)) is None


def test_recompile_method_using_super() -> None:
    source = """
        class C(B):
            def method(self):
                return super().method() + self._C__private
    """
    code = _inner(source, "C", "method")
    assert "__class__" in code.co_freevars
    text = "def method(self):\n    return super().method() + self._C__private\n"
    assert compare_code(code, recompile_function(text, code)) is None


def test_recompile_keeps_multiline_strings_and_continuations() -> None:
    # Indenting into the synthetic scopes must not change string values.
    source = '''
        def outer(x):
            def inner():
                """First line.
        Second line at column 0.
                """
                return x + len("""a
        b""") + (1 +
        2)
            return inner
    '''
    code = _inner(source, "outer", "inner")
    text = '''def inner():
    """First line.
Second line at column 0.
        """
    return x + len("""a
b""") + (1 +
2)
'''
    assert compare_code(code, recompile_function(text, code)) is None


def test_recompile_nested_class_and_function_qualnames_do_not_matter() -> None:
    source = """
        class C:
            def method(self):
                class K:
                    pass
                def helper():
                    pass
                return K, helper
    """
    code = _inner(source, "C", "method")
    text = "def method(self):\n    class K:\n        pass\n    def helper():\n        pass\n    return K, helper\n"
    assert compare_code(code, recompile_function(text, code)) is None


def test_recompile_uses_the_future_imports_of_the_code() -> None:
    source = """
        from __future__ import annotations
        def f():
            def g(x: Undefined) -> Other:
                pass
            return g
    """
    code = _inner(source, "f")
    text = "def f():\n    def g(x: Undefined) -> Other:\n        pass\n    return g\n"
    assert compare_code(code, recompile_function(text, code)) is None


@pytest.mark.skipif(PY < (3, 12), reason="type parameters are new in 3.12")
def test_recompile_finds_function_with_type_parameters() -> None:
    code = _inner("def f[T](x: T) -> T:\n    return x", "<generic parameters of f>", "f")
    assert equivalent(code, recompile_function("def f[T](x: T) -> T:\n    return x", code))


def test_recompile_errors() -> None:
    code = function("def f():\n    return 1")
    with pytest.raises(SyntaxError):
        recompile_function("def f(:\n", code)
    with pytest.raises(ValueError, match="no function named 'f'"):
        recompile_function("def g():\n    return 1\n", code)


def test_recompiled_wrong_body_is_not_equivalent() -> None:
    code = _inner("def outer():\n    x = 1\n    def inner():\n        return x\n    return inner", "outer", "inner")
    assert compare_code(code, recompile_function("def inner():\n    return -x\n", code)) is not None


# ------------------------------------------------------------------ the benchmark harness


def _roundtrip():
    spec = importlib.util.spec_from_file_location("roundtrip", os.path.join(REPO, "benchmarks", "roundtrip.py"))
    assert spec is not None and spec.loader is not None
    loaded = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(loaded)  # type: ignore[union-attr]
    return loaded


@pytest.mark.parametrize("name", ["textwrap", "http.client"])
def test_identity_benchmark_is_fully_equivalent(name: str, tmp_path, capsys) -> None:
    # http.client uses private names (self.__state): the harness must mangle them as the compiler did.
    roundtrip = _roundtrip()
    out = tmp_path / "row.json"
    assert roundtrip.main(["--decompiler", "identity", "--module", name, "--json", str(out)]) == 0
    import json

    row = json.loads(out.read_text())
    assert row["functions"] >= 10
    assert row["identical"] + row["equivalent"] == row["functions"], row["refusals"]
    assert "100.0%" in capsys.readouterr().out


def test_benchmark_counts_each_kind_of_failure() -> None:
    import argparse

    roundtrip = _roundtrip()
    code = function("def f(a):\n    return a + 1")
    tally = roundtrip.Tally()
    args = argparse.Namespace(function=None, timeout=60, verbose=False)

    def run(result) -> None:
        def decompile(_: CodeType) -> str:
            if isinstance(result, BaseException):
                raise result
            return result

        roundtrip.run_function(decompile, code, code, "m:f", "stdlib", tally, args)

    run("def f(a):\n    return a + 1\n")
    run("def f(a):\n    return a - 1\n")
    run("def f(a):\n    return a +\n")
    run(DecompilationError("unsupported instruction", code_name="f", offset=4, opname="BINARY_OP"))
    run(RuntimeError("boom"))
    counts = tally.counts("stdlib")
    assert (counts["functions"], counts["identical"], counts["refused"], counts["wrong"]) == (5, 1, 1, 3)
    assert (tally.decompiled, tally.recompiled) == (3, 2)
    wrong = dict(tally.wrong.counts)
    assert wrong["not equivalent: BINARY_OP" if PY >= (3, 11) else "not equivalent: BINARY_ADD/BINARY_SUBTRACT"] == 1
    assert wrong["RuntimeError: boom"] == 1
    assert dict(tally.refusals.counts) == {"unsupported instruction BINARY_OP": 1}


def test_reason_key_groups_comparison_messages() -> None:
    roundtrip = _roundtrip()
    key = roundtrip.reason_key("recompiled code differs: f: offset 4 LOAD_FAST 'x' vs offset 4 LOAD_CONST 1")
    assert key == "recompiled code differs: LOAD_FAST/LOAD_CONST"
    assert roundtrip.reason_key("recompiled code differs: f: co_varnames ('a',) vs ('b',)") == (
        "recompiled code differs: co_varnames")
    assert roundtrip.reason_key("stack underflow") == "stack underflow"


@pytest.mark.parametrize("left, right", [
    ("def f(a, b):\n    if a not in b:\n        return 1\n    return 2\n",
     "def f(a, b):\n    if a in b:\n        return 2\n    return 1\n"),
    ("def f(a, b):\n    if a is not b:\n        g()\n    else:\n        h()\n",
     "def f(a, b):\n    if not a is not b:\n        h()\n    else:\n        g()\n"),
])
def test_negated_membership_and_identity_tests_are_equivalent(left: str, right: str) -> None:
    assert compare_code(function(left), function(right)) is None


def test_negated_membership_test_with_same_arms_is_not_equivalent() -> None:
    left = "def f(a, b):\n    if a not in b:\n        return 1\n    return 2\n"
    right = "def f(a, b):\n    if a in b:\n        return 1\n    return 2\n"
    assert compare_code(function(left), function(right)) is not None
