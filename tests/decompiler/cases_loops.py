"""Round-trip cases for loops and irregular control flow."""
from typing import List

from tests.decompiler.cases import Case
from tests.decompiler.cases_exits import ASYNC

#: A context manager that logs its exit and lets exceptions through.
LOG = ("class Log:\n    def __init__(self, log):\n        self.log = log\n    def __enter__(self):\n        return self\n"
       "    def __exit__(self, *exc):\n        self.log.append('exit')\n")

CASES: List[Case] = [
    # A for loop whose body always returns never jumps back to its header.
    Case("loops_for_always_returns",
         "def f(d):\n    for key in list(d):\n        value = d[key]\n        del d[key]\n        return key, value\n"
         "    raise KeyError",
         ["({1: 2, 3: 4},)", "({},)"]),
    Case("loops_for_always_breaks",
         "def f(xs):\n    r = None\n    for x in xs:\n        r = x * 2\n        break\n    else:\n        r = -1\n"
         "    return r",
         ["([3, 4],)", "([],)"]),
    Case("loops_for_returns_or_raises",
         "def f(xs):\n    for x in xs:\n        if x:\n            return x\n        raise ValueError(x)\n    return 'empty'",
         ["([1],)", "([0],)", "([],)"]),
    # ``break`` after statements, to code after the loop that returns.
    Case("loops_break_to_returning_tail",
         "def f(xs):\n    r = None\n    for x in xs:\n        if x:\n            r = x * 2\n            break\n"
         "    else:\n        r = -1\n    return r",
         ["([0, 3],)", "([0],)", "([],)"]),
    # The values of ``a, b = x, y`` unpacked again: the swap keeps both on the stack.
    Case("loops_nested_parallel_unpack",
         "def f(x, y, z):\n    (a, b), (c, d) = x, y\n    e, (g, h) = z, x\n    (i, j), k = y, z\n"
         "    return a, b, c, d, e, g, h, i, j, k",
         ["((1, 2), (3, 4), 5)"]),
    # 3.10+ rotate ``while a or b:``: the test is repeated at the end of the body.
    Case("loops_while_compound_test",
         "def f(a, b):\n    r = []\n    while a or b:\n        if a:\n            x = a.pop()\n        else:\n"
         "            x = b.pop()\n        r.append(x)\n    return r",
         ["([1, 2], [3])", "([], [])"]),
    Case("loops_while_compound_test_in_for",
         "def f(rows):\n    r = []\n    for xs, ys in rows:\n        if xs is None:\n            r.append(ys)\n"
         "            continue\n        while xs and ys or not r:\n            r.append((xs.pop() if xs else 0, ys.pop()))\n"
         "    return r",
         ["([([1, 2], [3, 4, 5]), (None, 7)],)", "([([], [1])],)"]),
    # A rotated test whose operands branch too (``x[:n or None]``); a test part-way
    # through it must not be taken for the loop's.
    Case("loops_while_test_with_operand_branch",
         "def f(a, b):\n    post = 0\n    while a[:post or None] and b[:post or None] and a[post-1] == b[post-1]:\n"
         "        post -= 1\n    return post",
         ["('abc', 'xbc')", "('abc', 'abc')", "('', 'a')"]),
    # Two loops whose tests and exits are the same: neither is a copy of the other's test.
    Case("loops_twin_loops_same_break_test",
         "def f(a, b, c):\n    r = []\n    if c:\n        while True:\n            line = a.pop()\n"
         "            r.append(line)\n            if line == 0 or not line:\n                break\n    else:\n"
         "        while True:\n            line = b.pop()\n            r.append(-line)\n"
         "            if line == 0 or not line:\n                break\n    return r",
         ["([0, 2, 1], [0, 5], 1)", "([3, 0], [0, 7], 0)"]),
    # ``while True:`` whose body starts with ``while cond:``: both jump back to the inner test.
    Case("loops_while_true_around_while",
         "def f(items):\n    got = []\n    it = iter(items)\n    def g():\n        while True:\n"
         "            while len(got) < 2 or not got[-1]:\n                try:\n                    got.append(next(it))\n"
         "                except StopIteration:\n                    return\n            x = got.pop()\n"
         "            yield (x, got and got[-1] or x)\n    return list(g())",
         ["([1, 2, 0, 3, 4, 5],)", "([],)"]),
    # A for loop whose else clause raises: code after the loop is reached only by ``break``.
    Case("loops_for_else_raises_in_except",
         "def f(errs, code):\n    try:\n        raise OSError(code)\n    except OSError as why:\n"
         "        for err in errs:\n            if why.args[0] == err:\n                break\n        else:\n"
         "            raise\n    return 'ok'",
         ["([1, 2], 2)", "([1, 2], 3)", "([], 1)"]),
    Case("loops_for_else_returns",
         "def f(xs):\n    for x in xs:\n        if x > 2:\n            break\n    else:\n        return None\n"
         "    y = x * 2\n    return y",
         ["([1, 5],)", "([1],)"]),
    # Pops before jumps that are not ``break``: a chained comparison's spare operand, a
    # statement's value before a jump back.
    Case("loops_chained_compare_then_raise",
         "def f(xs):\n    out = []\n    for d in xs:\n        if isinstance(d, int) and 0 <= d <= 9:\n"
         "            out.append(d)\n        else:\n            raise ValueError(d)\n    return out",
         ["([1, 2],)", "([1, 20],)", "(['a'],)"]),
    Case("loops_endless_inner_loop",
         "def f(grouping):\n    def g():\n        last = None\n        for i in grouping:\n            if i == 5:\n"
         "                return\n            if i == 0:\n                if last is None:\n"
         "                    raise ValueError('no')\n                while True:\n                    yield last\n"
         "            yield i\n            last = i\n    it = g()\n    return [next(it) for _ in range(4)]",
         ["([1, 2, 0],)", "([0],)", "([1, 5, 7, 8],)"]),
    # ``return`` in a for loop in a try: the iterator is popped inside the try, the
    # return itself runs after it.
    Case("loops_return_from_for_in_try",
         "def f(opts, seen):\n    try:\n        for opt, val in opts:\n            if opt == '-b':\n"
         "                seen.append(val)\n            if opt == '-k':\n                seen.append(-val)\n"
         "                return\n        if seen:\n            return seen\n    except ValueError:\n        return 'bad'",
         ["([('-b', 1), ('-k', 2), ('-b', 3)], [])", "([('-b', 1)], [])", "([('-x',)], [])", "([], [])"]),
    # ``break`` out of a for loop in an except clause, the loop's else raising, in nested trys.
    Case("loops_break_in_except_in_try",
         "def f(d, items, value):\n    try:\n        try:\n            m = d[value]\n        except TypeError:\n"
         "            for name, c in items:\n                if c == value[0]:\n                    m = name\n"
         "                    break\n            else:\n                raise KeyError\n    except KeyError:\n"
         "        m = None\n    return m",
         ["({1: 'a'}, [], 1)", "({}, [('x', 2)], [2])", "({}, [('x', 2)], [3])", "({}, [], 5)"]),
    # A chained comparison ending a while body: its clean-up jumps back through the loop's test.
    Case("loop_chained_comparison_ends_while_body",
         "def f(stack, a, b):\n    out = []\n    while stack:\n        x = stack.pop()\n"
         "        if 2 <= len(a) < len(x):\n            out.append(a)\n        if 2 <= len(b) < len(x):\n"
         "            out.append(b)\n    return out",
         ["([[1, 2, 3], [1]], [1, 2], [1, 2, 3, 4])", "([], [], [])"]),
    # ``return CONSTANT`` from two loops: the compiler pops both iterators, and may share the
    # return with the outer loop's own; no break to a for-else.
    Case("loop_return_constant_from_nested_loops",
         "def f(bufs, ok):\n    for buf in bufs:\n        if buf:\n            if not ok:\n                return False\n"
         "        else:\n            for a in buf:\n                if a != 1:\n                    return False\n    return True",
         ["([[1]], True)", "([[], [2]], True)", "([[], [1]], False)", "([[1], []], True)"]),
    # A return from a loop in an except clause (in a loop, too) is no break out of the clause.
    Case("loop_return_from_loop_in_except_clause",
         "def f(kw, deps):\n    try:\n        kw[0]\n    except KeyError:\n        for d in deps:\n            if d:\n"
         "                return False\n    for name, value in kw.items():\n        try:\n            if value():\n"
         "                return False\n        except KeyError:\n            for name in deps:\n"
         "                if name in kw:\n                    return None\n    return True",
         ["({}, [0, 1])", "({}, [0])", "({0: lambda: 0}, [])", "({0: lambda: 1}, [])", "({0: dict}, [])"]),
    # A closure whose first statement is ``while a or b``: the prologue (3.11+) shares the
    # test's block.
    Case("loop_compound_test_first_in_closure",
         "def f(a, b):\n    out = []\n    def step(a, b):\n        while a != 0 or b != 0:\n"
         "            a, b = max(0, a - 1), max(0, b - 2)\n            out.append((a, b))\n    step(a, b)\n    return out",
         ["(2, 3)", "(0, 0)"]),
    # A try statement in a loop whose body leaves only by return or break gets back to the
    # loop's start through its handler alone: its body is in the loop all the same.
    Case("loop_try_for_then_return_in_while_true",
         "def f(seqs):\n    out = []\n    iters = [iter(s) for s in seqs]\n    while True:\n        try:\n"
         "            for itr in iters:\n                out.append(next(itr))\n            return out\n"
         "        except StopIteration:\n            iters = [i for i in iters if i is not itr]",
         ["([[1, 2], [3], [4, 5, 6]],)", "([],)"]),
    Case("loop_try_for_then_return_in_generator",
         "def f(seqs):\n    def interleave(seqs):\n        iters = itertools.cycle(map(iter, seqs))\n"
         "        while True:\n            try:\n                for itr in iters:\n                    yield next(itr)\n"
         "                return\n            except StopIteration:\n"
         "                predicate = functools.partial(operator.is_not, itr)\n"
         "                iters = itertools.cycle(itertools.takewhile(predicate, iters))\n"
         "    return list(interleave(seqs))\nimport functools, itertools, operator",
         ["([[1, 2, 3], [4], [5, 6]],)", "([],)"]),
    Case("loop_try_for_continue_then_return",
         "def f(xs, out):\n    while True:\n        try:\n            for x in xs:\n                if x < 0:\n"
         "                    continue\n                out.append(10 // x)\n            return out\n"
         "        except ZeroDivisionError:\n            xs = [x for x in xs if x]",
         ["([1, -2, 0, 5], [])", "([], [])"]),
    Case("loop_try_for_break_then_return",
         "def f(xs, out):\n    while True:\n        try:\n            for x in xs:\n                if x is None:\n"
         "                    break\n                out.append(10 // x)\n            return\n"
         "        except ZeroDivisionError:\n            xs = [x for x in xs if x]",
         ["([1, 0, None, 5], [])", "([2], [])"]),
    Case("loop_try_for_then_return_in_while_test",
         "def f(xs, n):\n    while n:\n        try:\n            for x in xs:\n                n = 10 // x\n"
         "            return n\n        except ZeroDivisionError:\n            n -= 1\n            xs = xs[1:]\n"
         "    return -1",
         ["([0, 0, 5], 3)", "([0, 0, 5], 1)", "([], 2)"]),
    Case("loop_try_for_then_return_in_for",
         "def f(rows):\n    for row in rows:\n        try:\n            for x in row:\n                y = 10 // x\n"
         "            return row\n        except ZeroDivisionError:\n            continue\n    return None",
         ["([[1, 0], [2, 5]],)", "([[0]],)"]),
    Case("loop_try_for_then_return_except_as",
         "def f(xs):\n    while True:\n        n = len(xs)\n        try:\n            for x in xs:\n"
         "                n += 10 // x\n            return n\n        except (ZeroDivisionError, TypeError) as e:\n"
         "            xs = [x for x in xs if x and type(x) is int]\n            if str(e).startswith('x'):\n"
         "                return e",
         ["([1, 0, 'a', 2],)", "([],)"]),
    Case("loop_try_nested_for_then_raise",
         "def f(rows, out):\n    while True:\n        try:\n            for row in rows:\n                for x in row:\n"
         "                    out.append(next(x))\n            raise ValueError(out)\n        except StopIteration:\n"
         "            rows = rows[1:]",
         ["([[iter([1])], [iter([])], [iter([2])]], [])"]),
    # ``break`` ends the try body: the body goes back to the loop's start only through the
    # handler's ``continue``.
    Case("loop_statement_then_try_break_in_while_true",
         "def f(a, b, c, attempts):\n    while True:\n        n = attempts.pop()\n        try:\n"
         "            check(n)\n            break\n        except OSError:\n            if a or (b and c):\n"
         "                continue\n            raise\n    return n\n"
         "def check(n):\n    if n < 0:\n        raise OSError(n)",
         ["(1, 0, 0, [1, -1, -2])", "(0, 1, 0, [1, -1])", "(0, 1, 1, [2, -1])", "(0, 0, 0, [3])"]),
    Case("loop_statement_then_try_break_except_as",
         "def f(name, attempts):\n    while True:\n        tmp = name + str(attempts.pop())\n        try:\n"
         "            fd = check(tmp)\n            break\n        except OSError as e:\n"
         "            if e.errno == errno.EEXIST or (os.name == 'nt' and e.errno == errno.EACCES\n"
         "                                           and os.path.isdir(e.filename)):\n                continue\n"
         "            raise\n    return fd, tmp\nimport errno, os\n"
         "def check(tmp):\n    if tmp.endswith('1'):\n        raise OSError(errno.EEXIST, 'exists', tmp)\n"
         "    if tmp.endswith('2'):\n        raise OSError(errno.EACCES, 'denied', tmp)\n    return len(tmp)",
         ["('x', [0, 1, 1])", "('x', [0, 2])", "('x', [5])"]),
    Case("loop_statement_then_try_return_in_while_true",
         "def f(a, attempts):\n    while True:\n        n = attempts.pop()\n        try:\n            return 10 // n\n"
         "        except ZeroDivisionError:\n            if a:\n                continue\n            raise",
         ["(1, [5, 0])", "(0, [0])"]),
    Case("loop_statement_then_try_break_in_for",
         "def f(xs, a):\n    n = None\n    for x in xs:\n        n = x * 2\n        try:\n            check(n)\n"
         "            break\n        except OSError:\n            if a:\n                continue\n            raise\n"
         "    return n\ndef check(n):\n    if n < 0:\n        raise OSError(n)",
         ["([-1, 3, 4], 1)", "([-1], 0)", "([], 0)"]),
    # A ``while`` loop with a test: the try body's ``break`` jumps to where the test leaves
    # (3.8 leaves the loop's jump back unreached after it).
    Case("loop_try_break_in_while_test",
         "def f(m, attempts):\n    while m:\n        try:\n            check(attempts.pop())\n            break\n"
         "        except OSError:\n            pass\n    return attempts\n"
         "def check(n):\n    if n < 0:\n        raise OSError(n)",
         ["(1, [1, -1, -2])", "(0, [1])", "(1, [2])"]),
    Case("loop_statement_then_try_break_in_while_test",
         "def f(a, b, c, attempts):\n    n = None\n    while attempts:\n        n = attempts.pop()\n        try:\n"
         "            check(n)\n            break\n        except OSError:\n            if a or (b and c):\n"
         "                continue\n            raise\n    return n\n"
         "def check(n):\n    if n < 0:\n        raise OSError(n)",
         ["(1, 0, 0, [1, -1, -2])", "(0, 1, 0, [1, -1])", "(1, 0, 0, [-1])", "(0, 0, 0, [])"]),
    # 3.10+ copy ``return out`` into the ``break``; the end of the try body's range splits both
    # copies before their ``RETURN_VALUE``.
    Case("loop_break_copy_split_by_try_range",
         "def f(xs, out):\n    try:\n        for x in xs:\n            if x is None:\n                break\n"
         "            out.append(10 // x)\n        return out\n    except ZeroDivisionError:\n        pass\n"
         "    return None",
         ["([1, None, 0], [])", "([1, 0], [])", "([2], [])"]),
    Case("loop_try_for_break_copy_then_return_in_while_true",
         "def f(xs, out):\n    while True:\n        try:\n            for x in xs:\n                if x is None:\n"
         "                    break\n                out.append(10 // x)\n            return out\n"
         "        except ZeroDivisionError:\n            xs = [x for x in xs if x]",
         ["([1, 0, None, 5], [])", "([2, 0], [])"]),
    # ``while True`` left only by a ``break`` in an except clause: only exception edges lead to
    # the clause, so the natural loop has no way out; inside a with statement the code after the
    # loop is the with's exit, which the clause must not take as its own.
    Case("loop_break_in_except_in_with",
         "def f(items, log):\n    it = iter(items)\n    with Log(log):\n        while True:\n            try:\n"
         "                i = next(it)\n            except StopIteration:\n                break\n            log.append(i)\n"
         "    log.append('after')\n    return log\n" + LOG, ["([1, 2], [])", "([], [])"]),
    Case("loop_break_in_except_else_in_with",
         "def f(items, log):\n    it = iter(items)\n    with Log(log):\n        while True:\n            try:\n"
         "                i = next(it)\n            except StopIteration:\n                break\n            else:\n"
         "                log.append(i)\n    log.append('after')\n    return log\n" + LOG, ["([1, 2], [])", "([], [])"]),
    Case("loop_break_in_except_in_with_in_for",
         "def f(groups, log):\n    for items in groups:\n        with Log(log):\n            it = iter(items)\n"
         "            got = []\n            while True:\n                try:\n                    i = next(it)\n"
         "                except StopIteration:\n                    break\n                else:\n"
         "                    got.append(i)\n            log.append(got)\n    return log\n" + LOG,
         ["([[1, 2], []], [])", "([], [])"]),
    Case("loop_break_in_except_in_with_then_code_in_for",
         "def f(groups, log):\n    for items in groups:\n        it = iter(items)\n        with Log(log):\n"
         "            while True:\n                try:\n                    i = next(it)\n"
         "                except StopIteration:\n                    break\n                log.append(i)\n"
         "        log.append('next')\n    return log\n" + LOG, ["([[1, 2], []], [])", "([], [])"]),
    Case("loop_break_in_except_in_with_in_while",
         "def f(groups, log):\n    while groups:\n        it = iter(groups.pop())\n        with Log(log):\n"
         "            while True:\n                try:\n                    i = next(it)\n"
         "                except StopIteration:\n                    break\n                log.append(i)\n"
         "        log.append('next')\n    return log\n" + LOG, ["([[1, 2], []], [])", "([], [])"]),
    Case("loop_break_in_except_then_return_in_with",
         "def f(items, log):\n    it = iter(items)\n    with Log(log):\n        while True:\n            try:\n"
         "                i = next(it)\n            except StopIteration:\n                break\n            log.append(i)\n"
         "        return len(log)\n" + LOG, ["([1, 2], [])", "([], [])"]),
    Case("loop_break_in_except_then_code_in_with",
         "def f(items, log):\n    it = iter(items)\n    with Log(log):\n        while True:\n            try:\n"
         "                i = next(it)\n            except StopIteration:\n                break\n            log.append(i)\n"
         "        log.append('end')\n    return log\n" + LOG, ["([1, 2], [])", "([], [])"]),
    Case("loop_break_or_continue_in_excepts_in_with_in_for",
         "def f(groups, log):\n    for items in groups:\n        it = iter(items)\n        with Log(log):\n"
         "            while True:\n                try:\n                    i = 10 // next(it)\n"
         "                except StopIteration:\n                    break\n                except ZeroDivisionError:\n"
         "                    continue\n                log.append(i)\n        log.append('next')\n    return log\n" + LOG,
         ["([[1, 0, 2], []], [])", "([], [])"]),
    Case("loop_break_under_test_in_except_in_with",
         "def f(items, log):\n    it = iter(items)\n    with Log(log):\n        while True:\n            try:\n"
         "                i = next(it)\n            except StopIteration:\n                if log:\n                    break\n"
         "                it = iter([0])\n                continue\n            log.append(i)\n    return log\n" + LOG,
         ["([1, 2], [])", "([], [])"]),
    Case("loop_break_in_except_as_in_nested_with",
         "def f(items, log):\n    it = iter(items)\n    with Log(log), Log(log):\n        while True:\n            try:\n"
         "                i = next(it)\n            except StopIteration as e:\n                log.append(type(e).__name__)\n"
         "                break\n            log.append(i)\n    log.append('after')\n    return log\n" + LOG,
         ["([1, 2], [])", "([], [])"]),
    # The first clause goes on to a try statement whose body returns: still inside the loop,
    # which that statement's clause goes back to.
    Case("loop_clauses_pass_between_tries_that_return",
         "def f(items):\n    it = iter(items)\n    while True:\n        try:\n            return 10 // next(it)\n"
         "        except ZeroDivisionError:\n            pass\n        try:\n            return 10 // (next(it) - 1)\n"
         "        except ZeroDivisionError:\n            pass",
         ["([0, 1, 2],)", "([5],)", "([0, 3],)", "([0, 1],)"]),
    Case("loop_break_in_except_in_try",
         "def f(items, log):\n    it = iter(items)\n    try:\n        while True:\n            try:\n"
         "                i = 10 // next(it)\n            except StopIteration:\n                break\n            log.append(i)\n"
         "    except ZeroDivisionError:\n        log.append('zero')\n    log.append('after')\n    return log",
         ["([1, 2], [])", "([1, 0], [])", "([], [])"]),
    Case("loop_break_in_except_in_async_with",
         "def f(items, log):\n    async def body():\n        it = iter(items)\n        async with CM(log):\n"
         "            while True:\n                try:\n                    i = next(it)\n"
         "                except StopIteration:\n                    break\n                log.append(i)\n"
         "        log.append('after')\n    run(body())\n    return log\n" + ASYNC, ["([1, 2], [])", "([], [])"]),
    # The body of an ``async with`` that ends with ``return CONSTANT``: the return follows the
    # call of ``__aexit__`` on the normal path, as in a with statement.
    Case("loop_break_in_except_then_return_constant_in_async_with",
         "def f(items, log):\n    async def body():\n        it = iter(items)\n        async with CM(log):\n"
         "            while True:\n                try:\n                    i = next(it)\n"
         "                except StopIteration:\n                    break\n                log.append(i)\n"
         "            return 1\n    return run(body()), log\n" + ASYNC, ["([1, 2], [])", "([], [])"]),
    Case("loop_for_then_return_constant_in_async_with",
         "def f(items, log):\n    async def body():\n        async with CM(log):\n            for i in items:\n"
         "                log.append(i)\n            return 1\n    return run(body()), log\n" + ASYNC,
         ["([1, 2], [])", "([], [])"]),
    # 3.12+: the while test falls into the jump back to the outer loop; ``continue`` jumps to
    # that test, the body's end to the copy of it.
    Case("loops_while_continue_in_for_body",
         "def f(groups, seen):\n    out = []\n    for g in groups:\n        queue = list(g)\n        while queue:\n"
         "            cur = queue.pop(0)\n            if cur in seen:\n                continue\n"
         "            out.append(cur)\n    return out",
         ["([[1, 2, 3], [], [4]], {2})", "([], set())"]),
    # An except clause that breaks, and a break after the try: the clause's break is its own.
    Case("loops_break_in_except_clause_and_after_try",
         "def f(classes, atts):\n    for i, cls in enumerate(classes):\n        if cls.startswith('x'):\n"
         "            try:\n                n = int(cls[1:])\n            except ValueError:\n                break\n"
         "            atts['style'] = n\n            classes.pop(i)\n            break\n"
         "    classes.append('field-list')\n    return classes, atts",
         ["(['a', 'x1', 'x2'], {})", "(['a', 'xy', 'x2'], {})", "(['a'], {})"]),
]
