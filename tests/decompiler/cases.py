"""Construct-by-construct programs for the decompiler's round-trip tests.

Each case is a module source defining ``f``, and the arguments to call it with (each
written as the parenthesized arguments of a call, ``(1, k=2)``, evaluated in the module's
namespace). The round trip decompiles ``f``, requires bytecode equivalent to the original
(the decompiler checks it itself), then runs the decompiled function on the same arguments
and requires the same result or the same exception type. The original must get into its
body on every call, and return on at least one, unless the case raises by design.
"""
import importlib
import os
import pkgutil
import sys
from typing import List, NamedTuple, Tuple

PY = sys.version_info[:2]


class Case(NamedTuple):
    name: str
    source: str
    #: Calls of ``f``: each the parenthesized arguments of a call, ``(1, k=2)``, evaluated in
    #: the case's own namespace.
    calls: List[str] = ["()"]
    #: Oldest Python version whose syntax the case needs.
    since: Tuple[int, int] = (3, 8)


#: Runs a coroutine that never waits to its end, with no event loop (under Pyodide, whose
#: loop runs already, asyncio.run raises RuntimeError).
RUN = "def run(co):\n    try:\n        co.send(None)\n    except StopIteration as stop:\n        return stop.value\n"


CASES: List[Case] = [
    Case("arithmetic", "def f(a, b):\n    return (a + b) * (a - b) / 2 ** -b // 3 % 7 @ 1 if 0 else -a ** 2 + ~b",
         ['(3, 2)', '(5, 1)']),
    Case("names_and_calls", "def f(a, *args, k=1, **kw):\n    x = g(a, *args, k=k, **kw)\n    return x, len(args)\n"
         "def g(*a, **k):\n    return a, sorted(k)", ['(1, 2, 3)', '(4,)']),
    Case("attributes_subscripts", "def f(a):\n    a[0] = a[1]\n    del a[2]\n    a[1:] = a[:1]\n    return a[::2], a[-1]",
         ['([1, 2, 3, 4],)']),
    Case("augmented", "def f(a, d):\n    a += 1\n    d['k'] += a\n    d['o'].x -= 2\n    return a, d['k'], d['o'].x\n"
         "class O:\n    x = 5", ["(1, {'k': 2, 'o': O()})"]),
    Case("unpacking", "def f(t):\n    a, (b, *c), d = t\n    x = y = a\n    return a, b, c, d, x, y", ['((1, (2, 3, 4), 5),)']),
    Case("literals", "def f(a):\n    return [a, *a], {a[0]: 1, **{'z': 2}}, {*a}, (a, *a), b'x', 1j, 1e400, ...",
         ['((1, 2),)']),
    Case("if_elif_else", "def f(a):\n    if a > 2:\n        r = 'big'\n    elif a > 1:\n        r = 'mid'\n    else:\n"
         "        r = 'small'\n    return r", ['(3,)', '(2,)', '(0,)']),
    Case("and_or_not", "def f(a, b, c):\n    if a and (b or not c):\n        return 1\n    return 2", ['(1, 0, 0)', '(0, 1, 1)', '(1, 0, 1)']),
    Case("boolean_values", "def f(a, b, c):\n    x = a or b and c\n    y = not a\n    return x, y, a and b", ['(0, 1, 2)', '(3, 0, 0)']),
    Case("conditional_expression", "def f(a):\n    return 'y' if a else 'n'", ['(1,)', '(0,)']),
    Case("chained_comparison", "def f(a, b, c):\n    if a < b <= c:\n        return a == b != c\n    return a < b < c < 9",
         ['(1, 2, 3)', '(3, 2, 1)']),
    Case("for_else_break_continue", "def f(xs):\n    t = 0\n    for x in xs:\n        if x < 0:\n            continue\n"
         "        if x > 9:\n            break\n        t += x\n    else:\n        t = -t\n    return t", ['([1, -2, 3],)', '([1, 20, 3],)']),
    Case("while_else", "def f(n):\n    while n > 0:\n        n -= 3\n        if n == 4:\n            break\n    else:\n        n = 100\n"
         "    return n", ['(10,)', '(7,)']),
    Case("while_true", "def f(n):\n    while True:\n        n += 1\n        if n % 5 == 0:\n            return n", ['(1,)']),
    Case("nested_loops", "def f(m):\n    out = []\n    for row in m:\n        for x in row:\n            if x:\n                out.append(x)\n"
         "    return out", ['([[1, 0], [2]],)']),
    Case("try_except", "def f(a):\n    try:\n        x = 1 / a\n    except ZeroDivisionError as e:\n        x = str(e)\n"
         "    except (TypeError, ValueError):\n        x = 'type'\n    else:\n        x = x + 1\n    return x",
         ['(1,)', '(0,)', "('s',)"]),
    Case("try_finally", "def f(a, log):\n    try:\n        x = 10 // a\n    finally:\n        log.append(1)\n    return x, log",
         ['(2, [])', '(0, [])']),
    Case("bare_except_reraise", "def f(a):\n    try:\n        return 1 // a\n    except:\n        if a is None:\n            raise\n"
         "        return -1", ['(1,)', '(0,)', '(None,)']),
    Case("raise_from", "def f(a):\n    if a:\n        raise ValueError(a) from None\n    raise KeyError", ['(1,)', '(0,)']),
    Case("with", "def f(cm, other):\n    with cm as x, other:\n        y = x\n    return y\n"
         "import contextlib\n@contextlib.contextmanager\ndef cm():\n    yield 5", ["(cm(), cm())"]),
    Case("assert", "def f(a):\n    assert a, 'msg'\n    assert a > 0\n    return a", ['(1,)', '(0,)', '(-1,)']),
    Case("comprehensions", "def f(xs):\n    return [x * 2 for x in xs if x], {x for x in xs}, {x: 1 for x in xs}, list(x for x in xs)",
         ['([0, 1, 2],)']),
    Case("nested_comprehension", "def f(m):\n    return [y for row in m for y in row if y > 1]", ['([[1, 2], [3]],)']),
    Case("lambda_closure", "def f(a):\n    g = lambda x, y=2: x + y + a\n    def h():\n        return a\n    return g(1), h()",
         ['(3,)']),
    Case("nonlocal_global", "G = 1\ndef f(a):\n    global G\n    G = a\n    def inc():\n        nonlocal a\n        a += 1\n"
         "    inc()\n    return a, G", ['(5,)']),
    Case("imports", "def f():\n    import os.path\n    import json as j\n    from collections import OrderedDict as OD, deque\n"
         "    return os.path.sep, j.dumps(1), OD, deque", ['()']),
    Case("fstrings", "def f(a, w):\n    return f'{a!r:>{w}} {a:x} {{}} {a!s}'", ['(255, 6)']),
    Case("generator", "def f(n):\n    def g():\n        for i in range(n):\n            yield i\n        yield from range(2)\n"
         "    return list(g())", ['(3,)']),
    Case("class_in_function", "def f(a):\n    class C(list):\n        'doc'\n        k = a\n        def m(self):\n"
         "            return super().__len__() + self.k\n    return C([1]).m()", ['(2,)']),
    Case("decorators", "def f(a):\n    @staticmethod\n    @dec\n    def g():\n        return a\n    return g.__func__()\n"
         "def dec(fn):\n    return fn", ['(1,)']),
    Case("walrus", "def f(xs):\n    if (n := len(xs)) > 2:\n        return n\n    return -n", ['([1, 2, 3],)', '([],)'], since=(3, 8)),
    Case("del_and_slices", "def f(a):\n    b = a[1:-1:2]\n    del a[0], a[-1]\n    return b, a", ['([1, 2, 3, 4, 5],)']),
    Case("docstring", "def f(a):\n    'The docstring.'\n    return a", ['(1,)']),
    Case("star_args_call", "def f(a, b):\n    return g(*a, *b, x=1, **{'y': 2})\ndef g(*a, **k):\n    return a, k", ['((1,), [2])']),
    Case("async_with_for_await", "def f(a):\n    async def g(a):\n        async with CM() as c:\n            x = await c\n"
         "        async for y in AIter(a):\n            x += y\n        return x\n    return run(g(a))\n" + RUN +
         "class CM:\n    async def __aenter__(self):\n        return aw()\n    async def __aexit__(self, *exc):\n        return None\n"
         "async def aw():\n    return 1\n"
         "class AIter:\n    def __init__(self, n):\n        self.n = n\n    def __aiter__(self):\n        return self\n"
         "    async def __anext__(self):\n        self.n -= 1\n        if self.n < 0:\n            raise StopAsyncIteration\n"
         "        return self.n", ["(3,)"]),
    Case("async_comprehension", "def f(n):\n    async def g(n):\n        return [x async for x in agen(n) if x]\n"
         "    return run(g(n))\n" + RUN +
         "async def agen(n):\n    for i in range(n):\n        yield i", ["(4,)"]),
    Case("match", "def f(p):\n    match p:\n        case 1 | 2:\n            return 'small'\n        case [x, y, *rest]:\n"
         "            return x\n        case {'k': v, **kw}:\n            return v\n        case str() as s:\n"
         "            return s\n        case _:\n            return None", ["(1,)", "([5, 6, 7],)", "({'k': 3},)", "('s',)", "(4.5,)"],
         since=(3, 10)),
    Case("match_literals", "def f(p):\n    match p:\n        case 0:\n            return 'zero'\n        case -1 | 1.5 | 2j:\n"
         "            return 'odd'\n        case 'a' | b'b':\n            return 'text'\n        case None:\n            return 'none'\n"
         "        case True:\n            return 'true'\n        case False:\n            return 'false'\n    return 'other'",
         ["(0,)", "(-1,)", "(1.5,)", "(2j,)", "('a',)", "(b'b',)", "(None,)", "(True,)", "(False,)", "(7,)"], since=(3, 10)),
    Case("match_value_patterns", "import enum\nclass Color(enum.Enum):\n    RED = 1\n    GREEN = 2\n"
         "def f(c):\n    match c:\n        case Color.RED:\n            r = 'r'\n        case Color.GREEN | enum.Enum:\n"
         "            r = 'g'\n        case _:\n            r = '?'\n    return r",
         ["(Color.RED,)", "(Color.GREEN,)", "(3,)"], since=(3, 10)),
    Case("match_capture_as_or", "def f(p):\n    match p:\n        case (1, x) | (2, x) | [3, _, x]:\n            return x\n"
         "        case [int() | float() as n, *_] as whole:\n            return n, whole\n        case str(s) if s:\n            return s\n"
         "        case other:\n            return ('other', other)",
         ["((1, 5),)", "([2, 6],)", "([3, 0, 7],)", "([4.5, 0],)", "('xy',)", "('',)", "(None,)"], since=(3, 10)),
    Case("match_sequences", "def f(p):\n    match p:\n        case []:\n            return 'empty'\n        case [x]:\n            return x\n"
         "        case [_, _]:\n            return 'pair'\n        case [first, *_, last] if first == last:\n            return 'same ends'\n"
         "        case [*_, 0]:\n            return 'ends with 0'\n        case [a, *middle, b]:\n            return a, middle, b\n"
         "        case [*_]:\n            return 'sequence'\n    return None",
         ["([],)", "([1],)", "((1, 2),)", "([1, 2, 1],)", "([1, 2, 0],)", "([1, 2, 3],)", "('s',)", "(5,)"], since=(3, 10)),
    Case("match_mappings", "def f(p):\n    match p:\n        case {}:\n            r = 'empty'\n        case {'k': 1, 'v': v}:\n"
         "            r = v\n        case {'k': [x, y], **rest}:\n            r = x, y, rest\n        case {1: _, **rest}:\n"
         "            r = rest\n        case _:\n            r = None\n    return r",
         ["({},)", "({'k': 1, 'v': 2},)", "({'k': [1, 2], 'z': 3},)", "({1: 0, 2: 3},)", "(5,)"], since=(3, 10)),
    Case("match_classes", "class Point:\n    __match_args__ = ('x', 'y')\n    def __init__(self, x, y):\n        self.x, self.y = x, y\n"
         "def f(p):\n    match p:\n        case Point(x=0, y=0):\n            return 'origin'\n        case Point(0, yy):\n"
         "            return 'y axis', yy\n        case Point(x=xx, y=0) if xx > 0:\n            return 'positive x', xx\n"
         "        case Point(_, y=[1, *others]):\n            return others\n        case int(n) | float(n):\n            return n\n"
         "        case Point():\n            return 'point'",
         ["(Point(0, 0),)", "(Point(0, 3),)", "(Point(2, 0),)", "(Point(-2, 0),)", "(Point(5, [1, 2]),)", "(4,)", "('x',)"],
         since=(3, 10)),
    Case("match_nested", "class Node:\n    __match_args__ = ('op', 'args')\n    def __init__(self, op, args):\n"
         "        self.op, self.args = op, args\n"
         "def f(t):\n    match t:\n        case Node('+', [Node('lit', [a]), Node('lit', [b])]):\n            return a + b\n"
         "        case Node(op=('-' | '~') as op, args=[{'v': v}]):\n            return op, v\n        case [Node(), *rest] if len(rest) > 1:\n"
         "            return len(rest)\n    return 'no match'",
         ["(Node('+', [Node('lit', [1]), Node('lit', [2])]),)", "(Node('-', [{'v': 3}]),)", "([Node('x', []), 1, 2],)", "(0,)"],
         since=(3, 10)),
    Case("match_in_loop", "def f(commands):\n    out = []\n    for c in commands:\n        match c.split():\n"
         "            case ['quit']:\n                break\n            case ['skip', *_]:\n                continue\n"
         "            case ['go', where]:\n                out.append(where)\n            case [verb, *args] if args:\n"
         "                out.append((verb, len(args)))\n            case _:\n                out.append('?')\n        out.append(';')\n    return out",
         ["(['go north', 'skip it', 'x', 'say a b', 'quit', 'go south'],)"], since=(3, 10)),
    Case("match_while_return", "def f(items):\n    i = 0\n    while i < len(items):\n        match items[i]:\n"
         "            case int(n) if n < 0:\n                return i\n            case str():\n                i += 2\n"
         "                continue\n        i += 1\n    return -1",
         ["([1, 2, -3],)", "(['a', 'b', -1, 0],)", "([1, 'a', -1],)", "([],)"], since=(3, 10)),
    Case("match_tuple_subject", "def f(a, b):\n    match a, b:\n        case (0, 0):\n            result = 'both'\n"
         "        case (0, _) | (_, 0):\n            result = 'one'\n        case _:\n            result = 'none'\n    return result",
         ["(0, 0)", "(0, 1)", "(1, 0)", "(1, 1)"], since=(3, 10)),
    Case("match_single_case", "def f(p):\n    match p:\n        case {'type': 'user', 'name': str(name)}:\n            print(name)\n"
         "            return name.upper()\n    return None", ["({'type': 'user', 'name': 'ann'},)", "({'type': 'x'},)", "(1,)"],
         since=(3, 10)),
    Case("finally_branches_and_return", "def f(a, log):\n    try:\n        if a:\n            return 10 // a\n    finally:\n"
         "        if log is not None:\n            log.append(a)\n        log = None\n    return log", ["(2, [])", "(0, [])", "(0, None)"]),
    Case("retry_loop", "def f(n):\n    i = 0\n    while True:\n        try:\n            x = 10 // (n - i)\n        except ZeroDivisionError:\n"
         "            i += 1\n            if i > 5:\n                raise\n        else:\n            break\n    return x, i", ["(0,)", "(3,)"]),
    Case("return_in_loop", "def f(xs, k):\n    for x in xs:\n        if x == k and x is not None:\n            return x\n    return -1",
         ["([1, 2], 2)", "([1], 5)"]),
    Case("starred_displays", "def f(a, b, c):\n    return [*a, b, 1], {*a, b}, {**c, 'k': 1}", ["([1, 2], 3, {'x': 0})"]),
    Case("nested_except_return", "def f(mon, names):\n    try:\n        mon = names.index(mon) + 1\n    except ValueError:\n"
         "        try:\n            imon = int(mon)\n        except ValueError:\n            return None\n"
         "        if 1 <= imon <= 12:\n            mon = imon\n        else:\n            return None\n    return mon",
         ["('b', ['a', 'b'])", "('7', [])", "('x', [])", "('40', [])"]),
    Case("repeated_unpack_targets", "def f(xs):\n    out = []\n    for a, _, _, b in xs:\n        out.append(a + b)\n"
         "    c, _, _ = xs[0][:3]\n    return out, c", ["([(1, 2, 3, 4)],)"]),
    Case("return_from_named_except", "def f(a, v):\n    try:\n        return 1 // a\n    except ZeroDivisionError as exc:\n"
         "        return exc is not v\n    except TypeError as exc:\n        if exc is v:\n            return False\n        raise",
         ["(0, None)", "(1, None)", "('x', None)"]),
    Case("finally_if_at_end", "def f(o, log):\n    try:\n        log.append(1 // o)\n    finally:\n        if log:\n"
         "            log.append('closed')", ["(1, [])", "(0, [])"]),
    Case("keyword_only", "def f(a, /, b, *, c, d=4):\n    return a, b, c, d", ['(1, 2, c=3)', '(1, b=2, c=3, d=5)']),
]


def all_cases() -> List[Case]:
    """``CASES`` here and in every ``cases_<topic>.py`` module next to this one."""
    found = list(CASES)
    package = __name__.rpartition(".")[0]
    for module in sorted(pkgutil.iter_modules([os.path.dirname(__file__)]), key=lambda m: m.name):
        if module.name.startswith("cases_"):
            found.extend(importlib.import_module(package + "." + module.name).CASES)
    return found
