"""Round-trip cases for statements that leave a try statement through its finally body, and
for constructs 3.8's block stack and peephole optimizer lay out their own way."""
from typing import List

from tests.decompiler.cases import Case

#: Callables for the try bodies: one returns, the others raise what the clauses catch (or not).
CALLS = ("def ok():\n    return 1\ndef bad_value():\n    int('x')\ndef bad_key():\n    {}['k']\n"
         "def bad_type():\n    len(1)\n")
#: Calls that run each kind of item at each place of a list.
LISTS = ["([ok, bad_value, ok], [])", "([bad_value, bad_value], [])", "([ok, bad_key, ok], [])", "([bad_type, ok], [])",
         "([], [])"]

#: An async context manager and an async iterable that log what happens, and a driver that runs
#: a coroutine that never waits to its end.
ASYNC = ("class CM:\n    def __init__(self, log):\n        self.log = log\n    async def __aenter__(self):\n"
         "        self.log.append('enter')\n        return self\n    async def __aexit__(self, *exc):\n"
         "        self.log.append('exit')\n        return False\n"
         "class Items:\n    def __init__(self, items):\n        self.items = list(items)\n    def __aiter__(self):\n"
         "        return self\n    async def __anext__(self):\n        if not self.items:\n"
         "            raise StopAsyncIteration\n        return self.items.pop(0)\n"
         "def run(co):\n    try:\n        co.send(None)\n    except StopIteration as stop:\n        return stop.value\n")

#: A context manager that logs its entry and exit.
CM_LOG = ("class CM:\n    def __init__(self, log):\n        self.log = log\n    def __enter__(self):\n"
          "        self.log.append('enter')\n        return self\n    def __exit__(self, *exc):\n"
          "        self.log.append('exit')\n")

CASES: List[Case] = [
    Case("exits_continue_in_except_with_finally",
         "def f(xs, log):\n    for x in xs:\n        try:\n            x()\n        except ValueError:\n            continue\n"
         "        finally:\n            log.append(1)\n    return log\n" + CALLS, LISTS),
    Case("exits_continue_in_except_with_finally_then_code",
         "def f(xs, log):\n    for x in xs:\n        try:\n            x()\n        except ValueError as e:\n"
         "            log.append(type(e).__name__)\n            continue\n        finally:\n            log.append(1)\n"
         "        log.append(2)\n    return log\n" + CALLS, LISTS),
    Case("exits_break_in_except_with_finally",
         "def f(xs, log):\n    for x in xs:\n        try:\n            x()\n        except ValueError:\n            break\n"
         "        finally:\n            log.append(1)\n        log.append(2)\n    return log\n" + CALLS, LISTS),
    Case("exits_return_in_except_with_finally_in_loop",
         "def f(xs, log):\n    for x in xs:\n        try:\n            x()\n        except ValueError:\n            return 'v', log\n"
         "        finally:\n            log.append(1)\n    return log\n" + CALLS, LISTS),
    Case("exits_each_clause_leaves_with_finally",
         "def f(xs, log):\n    while xs:\n        try:\n            xs.pop()()\n        except ValueError:\n            return log\n"
         "        except KeyError:\n            break\n        except TypeError:\n            continue\n"
         "        finally:\n            log.append(1)\n        log.append(3)\n    return 0\n" + CALLS, LISTS),
    Case("exits_in_try_body_with_except_and_finally",
         "def f(xs, log):\n    for x in xs:\n        try:\n            if x is ok:\n                continue\n"
         "            if x is bad_type:\n                break\n            x()\n        except ValueError:\n            pass\n"
         "        finally:\n            log.append(1)\n        log.append(2)\n    return log\n" + CALLS, LISTS),
    Case("exits_return_in_try_body_in_loop_with_finally",
         "def f(xs, log):\n    for x in xs:\n        try:\n            if x is ok:\n                return log\n"
         "        except ValueError:\n            pass\n        finally:\n            log.append(1)\n    return 0\n" + CALLS,
         LISTS),
    Case("exits_clause_continues_in_branch_with_finally",
         "def f(xs, log):\n    for x in xs:\n        try:\n            x()\n        except ValueError:\n            if log:\n"
         "                continue\n            log.append(4)\n        finally:\n            log.append(1)\n    return log\n"
         + CALLS, LISTS),
    Case("exits_except_returns_with_finally",
         "def f(x, log):\n    try:\n        x()\n    except ValueError:\n        return 1\n    finally:\n"
         "        log.append(2)\n    return 3\n" + CALLS, ["(ok, [])", "(bad_value, [])", "(bad_key, [])"]),
    Case("exits_named_except_returns_with_finally",
         "def f(x, log):\n    try:\n        x()\n    except ValueError as e:\n        return type(e)\n    finally:\n"
         "        log.append(2)\n" + CALLS, ["(ok, [])", "(bad_value, [])", "(bad_key, [])"]),
    Case("exits_clause_returns_beside_else_with_finally",
         "def f(x, log):\n    try:\n        x()\n    except ValueError:\n        return 1\n    except KeyError:\n"
         "        log.append(5)\n    else:\n        log.append(2)\n    finally:\n        log.append(3)\n    return 4\n" + CALLS,
         ["(ok, [])", "(bad_value, [])", "(bad_key, [])", "(bad_type, [])"]),
    # The clauses go on where the else clause does: into the one copy of the finally body.
    Case("exits_clauses_and_else_share_finally",
         "def f(self, log):\n    old = self.x\n    try:\n        self.x()\n    except KeyboardInterrupt:\n        raise\n"
         "    except KeyError as e:\n        log.append(0)\n    except TypeError:\n        pass\n    except:\n"
         "        info = 1\n    else:\n        if log and old:\n            log.append(2)\n    finally:\n"
         "        log.append(len(log) and old is ok)\n    return log\n"
         "class O:\n    def __init__(self, x):\n        self.x = x\n" + CALLS,
         ["(O(ok), [])", "(O(ok), [1])", "(O(bad_key), [])", "(O(bad_type), [])", "(O(bad_value), [])"]),
    Case("exits_return_ends_try_finally_body",
         "def f(x, log):\n    try:\n        x()\n        return 1\n    finally:\n        log.append(1)\n" + CALLS,
         ["(ok, [])", "(bad_key, [])"]),
    # The finally body's copy on the return's path branches: the return is no break to it.
    Case("exits_return_from_loop_through_branching_finally",
         "def f(xs, end, log):\n    try:\n        while xs:\n            if end:\n                return xs\n"
         "            log.append(xs.pop())\n    finally:\n        if end:\n            log.append('f')\n"
         "    return log",
         ["([1, 2], 0, [])", "([1, 2], 1, [])", "([], 1, [])"]),
    Case("exits_return_from_for_through_branching_finally",
         "def f(xs, end, log):\n    try:\n        for x in xs:\n            if x == end:\n                return x\n"
         "            log.append(x)\n    finally:\n        if end:\n            log.append('f')\n"
         "    return log",
         ["([1, 2], 0, [])", "([1, 2], 2, [])", "([], 1, [])"]),
    Case("exits_break_through_branching_finally",
         "def f(xs, end, log):\n    while xs:\n        try:\n            if xs.pop() == end:\n                break\n"
         "        finally:\n            if end:\n                log.append('f')\n        log.append(0)\n"
         "    log.append(1)\n    return log",
         ["([1, 2], 0, [])", "([1, 2], 2, [])", "([1, 2], 1, [])"]),
    Case("exits_continue_ends_try_finally_body_then_code",
         "def f(xs, log):\n    for x in xs:\n        try:\n            x()\n            continue\n        finally:\n"
         "            log.append(1)\n        log.append(2)\n    return log\n" + CALLS, ["([ok, ok], [])", "([ok, bad_key], [])"]),
    Case("exits_nested_try_inner_clause_raises",
         "def f(x):\n    try:\n        try:\n            return x()\n        except ValueError:\n            raise TypeError\n"
         "    except TypeError:\n        return 2\n" + CALLS, ["(ok,)", "(bad_value,)", "(bad_type,)", "(bad_key,)"]),
    Case("exits_nested_try_inner_clause_raises_from",
         "def f(x, log):\n    try:\n        try:\n            x()\n        except ValueError as e:\n"
         "            raise KeyError(e) from e\n        log.append(0)\n    except KeyError:\n        log.append(1)\n"
         "    return log\n" + CALLS, ["(ok, [])", "(bad_value, [])", "(bad_key, [])", "(bad_type, [])"]),
    Case("exits_async_with_async_for_then_comprehension",
         "def f(items, log):\n    async def body(cm, it):\n        async with cm:\n            async for x in it:\n"
         "                log.append(x)\n            return [y async for y in Items(items)]\n"
         "    return run(body(CM(log), Items(items))), log\n" + ASYNC, ["([1, 2], [])", "([], [])"]),
    Case("exits_async_with_as_async_for_then_comprehension_stored",
         "def f(items, log):\n    async def body():\n        async with CM(log) as c:\n            async for x in Items(items):\n"
         "                log.append(x)\n            else:\n                log.append('else')\n"
         "            r = {y: c is not None async for y in Items(items)}\n        return r\n"
         "    return run(body()), log\n" + ASYNC, ["([1, 2], [])", "([], [])"]),
    Case("exits_async_for_in_finally",
         "def f(items, log):\n    async def body(x):\n        try:\n            x()\n        finally:\n"
         "            async for y in Items(items):\n                log.append(y)\n"
         "    try:\n        run(body(ok if items else bad_key))\n    except KeyError:\n        log.append('key')\n"
         "    return log\n" + CALLS + ASYNC, ["([1, 2], [])", "([], [])"]),
    # Two returns from a with statement round a loop: the inner loop's exit is the outer loop's
    # next round, not code after it that the second return would copy (3.10+).
    Case("exits_returns_from_with_round_nested_loops",
         "def f(args, a, log):\n    with CM(log) as ctx:\n        while args:\n            x = args.pop()\n"
         "            if x > a:\n                if x > 5:\n                    return ctx.log\n            else:\n"
         "                while args:\n                    if args.pop() == a:\n                        return log\n"
         "    log.append('end')\n    return log\n" + CM_LOG,
         ["([1, 3, 0, 5, 2], 2, [])", "([7, 1], 2, [])", "([2, 2, 1], 1, [])", "([], 0, [])", "([9, 2], 1, [])"]),
    # 3.8-3.9 return an arm's value where it would jump to the shared RETURN_VALUE.
    Case("exits_and_or_in_returned_conditional",
         "def f(a, b, c, x):\n    return (a and b) or c if x is not None else -1",
         ["(1, 2, 3, 0)", "(0, 2, 3, 0)", "(1, 0, 3, 0)", "(1, 2, 3, None)"]),
]
