"""Round-trip cases for constructs whose bytecode 3.14 lays out its own way."""
from typing import List

from tests.decompiler.cases import Case

CASES: List[Case] = [
    # 3.14 threads the jump of the first operand straight to the last one.
    Case("py314_and_or_value", "def f(d, m):\n    return d[m and 'a' or 'b']",
         ["({'a': 1, 'b': 2}, 1)", "({'a': 1, 'b': 2}, 0)", "({'': 1, 'a': 3, 'b': 2}, '')"]),
    Case("py314_or_and_value", "def f(m, n):\n    x = (m or n) and 'b'\n    return x",
         ["(1, 0)", "(0, 0)", "(0, 2)", "('', [])"]),
    # 3.11+ copies the short return after a conditional value into both of its arms.
    Case("py314_conditional_in_returned_tuple",
         "def f(s):\n    a, d, b = s.partition('=')\n    return a, (b if d else None)", ["('x=1',)", "('x',)"]),
    Case("py314_conditional_argument_returned",
         "def f(x, c):\n    return max(x, -x if c else 0)", ["(3, 1)", "(-3, 0)", "(2, 0)"]),
    Case("py314_boolean_in_returned_tuple", "def f(a, b):\n    return a, (b or None), 1", ["(1, 0)", "(1, 2)"]),
    # 3.12+ copies a lambda's return into both arms of its conditional expression.
    Case("py314_lambda_conditional",
         "def f(x):\n    g = lambda p: -1.0 + p ** 0.5 if p < 1 / 2 else (1.0 if p > 2 else p * 2)\n    return g(x)",
         ["(0.25,)", "(3,)", "(1,)"]),
    # 3.14 keeps ``__exit__`` and its ``self`` on the stack: a return awaits the exit first.
    Case("py314_async_with_return",
         "class CM:\n    async def __aenter__(self):\n        return self\n"
         "    async def __aexit__(self, *exc):\n        return False\n"
         "async def g(x):\n    return x * 2\n"
         "def f(x):\n    async def h(cm):\n        async with cm:\n            return await g(x)\n"
         "    co = h(CM())\n    try:\n        co.send(None)\n    except StopIteration as stop:\n        return stop.value",
         ["(2,)", "('a',)"]),
    # A return from an except clause inside a with statement: the exit call takes the
    # with statement's values from under the returned one.  (3.13 and older lay the
    # return out differently, a shape not handled yet.)
    Case("py314_return_from_clause_in_with",
         "class CM:\n    def __enter__(self):\n        return self\n    def __exit__(self, *exc):\n        return False\n"
         "def f(items):\n    try:\n        with CM():\n            while items:\n                try:\n"
         "                    x = items.pop()\n                except (EOFError, KeyError):\n"
         "                    return None, None, False\n    except SyntaxError as e:\n        raise\n    return 1",
         ["([1, 2],)", "([],)", "(set([1, 2]),)"], since=(3, 14)),
    # An except clause that goes on after the try, in a loop left only by return or continue.
    # (3.8-3.10 mark no stack depth on the clause's code: not handled there yet.)
    Case("py314_clause_in_while_true_falls_through",
         "def f(items):\n    out = []\n    while True:\n        try:\n            payload = {'reply': items.pop()}\n"
         "        except IndexError:\n            payload = {'signal': 'EOF'}\n        except Exception as exc:\n"
         "            out.append(str(exc))\n            continue\n        out.append(payload)\n        return out",
         ["([1],)", "([],)", "([1, None][1:] + [1],)"], since=(3, 11)),
    # A try around a loop left only by break: 3.14 breaks straight into the finally code.
    Case("py314_try_finally_around_while_true",
         "def f(items):\n    log = []\n    try:\n        while True:\n            log.append(items.pop())\n"
         "            if len(log) > 2:\n                break\n    finally:\n        log.append('end')\n    return log",
         ["([1, 2, 3, 4],)", "([1],)"]),
    # A try whose body is only a test: the test is not part of the loop's condition.
    # (3.10 lays the break out through POP_BLOCK, a shape not handled yet.)
    Case("py314_try_test_in_while",
         "class CM:\n    def __enter__(self):\n        return self\n    def __exit__(self, *exc):\n        return False\n"
         "def f(items):\n    out = []\n    with CM():\n        while len(out) < 5:\n            try:\n"
         "                if not (x := items.pop()):\n                    break\n            except IndexError:\n"
         "                out.append('empty')\n                continue\n            out.append(x)\n    return out",
         ["([0, 1, 2],)", "([],)", "([0],)"], since=(3, 11)),
]
