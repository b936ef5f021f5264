"""Round-trip cases for if/else and try/else structuring."""
from typing import List

from tests.decompiler.cases import Case

RAISES = "def bad():\n    raise ValueError\ndef badkey():\n    raise KeyError\n"
QUIET = ("class Quiet:\n    def __enter__(self):\n        return self\n    def __exit__(self, *exc):\n        return exc[0] is ZeroDivisionError\n")

CASES: List[Case] = [
    # A return from a try inside a with inside a try: leaving the with pops its context
    # manager from below the returned value.
    Case("else_return_from_with_in_try",
         "def f(a, log):\n    try:\n        with Ctx(log) as c:\n            try:\n                g(a)\n"
         "                return a\n            except ValueError:\n                pass\n            log.append(c)\n"
         "    except KeyError as e:\n        raise TypeError(e)\n    return -1\n"
         "def g(a):\n    if a == 1:\n        raise ValueError\n    if a == 2:\n        raise KeyError\n"
         "class Ctx:\n    def __init__(self, log):\n        self.log = log\n"
         "    def __enter__(self):\n        return 'c'\n    def __exit__(self, *exc):\n        self.log.append('exit')\n",
         ["(0, [])", "(1, [])", "(2, [])"]),
    # A try inside an if arm inside a try: the inner body jumps on through the if's join,
    # where the inner except clause goes on too, so the inner try has no else clause.
    Case("else_try_in_if_in_try",
         "def f(url):\n    try:\n        if url == 1:\n            try:\n                t = 10 // url\n"
         "            except ValueError:\n                t = 0\n        else:\n            t = 5 // url\n"
         "    except Exception as exc:\n        t = type(exc).__name__\n    return t\n",
         ["(1,)", "(0,)", "(2,)", "('x',)"]),
    # A with statement whose body always leaves: the code after it runs only when
    # ``__exit__`` swallows the exception.
    Case("else_with_body_returns",
         "def f(a):\n    with Quiet():\n        return 10 // a\n    return -1\n" + QUIET, ["(2,)", "(0,)"]),
    Case("else_with_returns_constant",
         "def f(a, log):\n    with Quiet():\n        log.append(1 // a)\n        return 1\n    log.append(2)\n"
         "    return log\n" + QUIET, ["(1, [])", "(0, [])"]),
    Case("else_with_in_if_elif",
         "def f(a, kind):\n    if kind == 'css':\n        with Quiet() as q:\n            return str(1 // a)\n"
         "    elif kind == 'html':\n        return 'html'\n    raise TypeError(kind)\n" + QUIET,
         ["(1, 'css')", "(0, 'css')", "(1, 'html')", "(1, 'x')"]),
    Case("else_nested_with_returns",
         "def f(a):\n    with Quiet(), Quiet():\n        return 1 // a\n" + QUIET, ["(1,)", "(0,)"]),
    Case("else_with_in_loop_leaves",
         "def f(xs):\n    out = []\n    for x in xs:\n        with Quiet():\n            if x > 5:\n                break\n"
         "            out.append(1 // x)\n            continue\n        out.append('swallowed')\n    out.append('end')\n    return out\n" + QUIET,
         ["([1, 0, 2],)", "([1, 9, 0],)"]),
    # A try's else clause that ends the function inside an enclosing try: the final
    # ``return None`` is copied onto each path that reaches it.
    Case("else_try_else_at_end_in_try",
         "def f(a, log):\n    try:\n        try:\n            log.append(1 // a)\n        except (ZeroDivisionError, KeyError):\n"
         "            log.append('div')\n        else:\n            log.append(int(a))\n    except ValueError:\n"
         "        log.append('value')\n",
         ["(1, [])", "(0, [])", "('1', [])", "('x', [])"]),
    # ``return`` from ``except E as name`` at the end of a function, inside a try: the
    # clause's clean-up (``name = None; del name``) ends a block, and the return is a
    # copy of the implicit one, so the clause reads as falling off the try.
    Case("else_return_from_named_clause",
         "def f(a, log):\n    try:\n        if a is not None:\n            try:\n                p = g(a)\n"
         "            except OSError as e:\n                if e.errno:\n                    return\n                else:\n"
         "                    raise\n            log.append(p)\n    except:\n        log.append('any')\n        raise\n"
         "def g(a):\n    if a < 2:\n        raise OSError(a, 'no')\n    return a\n",
         ["(None, [])", "(0, [])", "(1, [])", "(5, [])"], since=(3, 9)),
    # ``if a:`` then ``try: if b and c:``: the tests on either side of the try's start are
    # two statements, not one ``and``; the inner if's arms stop at a jump out of the try
    # and at its target.
    Case("else_condition_before_try",
         "def f(a, b, log):\n    if a:\n        try:\n            if b and log[b]:\n                log.append(b)\n"
         "        except KeyError:\n            pass\n    log.append('end')\n    return log\n",
         ["(0, 1, [])", "(1, 0, [])", "(1, 1, [])", "(1, 1, [1, 2])"]),
    # A with statement whose body falls off before ``return``: 3.12+ copies the return
    # onto the normal exit, which is not a statement of the body.
    Case("else_with_then_return",
         "def f(a, log):\n    with Quiet():\n        with Quiet():\n            y = 1 // a\n        log.append(y)\n"
         "    return log\n" + QUIET, ["(1, [])"]),
    # ``return None`` from an except clause inside a with: the return follows the with's
    # exit, so the clause seems to go on outside the with.
    Case("else_clause_returns_from_with",
         "def f(words, log):\n    with Quiet():\n        try:\n            i = words.index('x')\n        except ValueError:\n"
         "            return None\n        for w in words[i:]:\n            log.append(w)\n    return log\n" + QUIET,
         ["(['a'], [])", "(['a', 'x', 'b'], [])"]),
    # A try with an else clause inside a try, before a return: the inner clauses go on
    # out of the outer try, and so does the else clause.
    Case("else_try_else_in_try_before_return",
         "def f(a, log):\n    try:\n        try:\n            log.append(10 // a)\n        except (ZeroDivisionError, KeyError):\n"
         "            log.append('div')\n        else:\n            log.append(int(a))\n    except ValueError as e:\n"
         "        log.append('value')\n        if a == 'x':\n            raise\n    uniq = len(log)\n    return uniq\n",
         ["(1, [])", "(0, [])", "(2.5, [])", "('x', [])"]),
    # ``break`` after a try inside ``while True`` whose except clause continues: 3.8 threads
    # the body's jump straight to the loop's exit and leaves the break's jump unreachable.
    Case("else_break_after_retry",
         "def f(mode, d):\n    while True:\n        try:\n            fp = 10 // mode\n        except ZeroDivisionError:\n"
         "            if mode in d:\n                mode = d[mode]\n                continue\n            raise\n        break\n"
         "    return fp, mode\n",
         ["(0, {0: 5})", "(2, {})", "(0, {})"]),
    # ``continue`` from an except clause inside an ``except E as name`` clause: the jump
    # back releases both exceptions and the name first.
    Case("else_continue_from_nested_clause",
         "def f(xs, log):\n    for x in xs:\n        try:\n            log.append(10 // x)\n        except ZeroDivisionError as e:\n"
         "            try:\n                log.append(int(str(x) + 'z'))\n            except ValueError:\n                continue\n"
         "        log.append('again')\n    return log\n",
         ["([1, 0, 2], [])"]),
    # The same without ``as``: before 3.11 the jump back follows the releases in one block,
    # which must not pass for a copy of the inner try's own exit.
    Case("else_continue_from_nested_clause_unnamed",
         "def f(xs, log):\n    for x in xs:\n        try:\n            log.append(10 // x)\n        except ZeroDivisionError:\n"
         "            try:\n                log.append(int(str(x) + 'z'))\n            except ValueError:\n                continue\n"
         "        log.append('again')\n    return log\n",
         ["([1, 0, 2], [])"]),
    # An except clause that passes, an else clause that raises, then a return (more-itertools'
    # ``only``): 3.10+ lays the return out right after the clause, which falls into it; the
    # body never gets there, so it is the code after the try, not the clause's own return.
    Case("else_raises_clause_passes_then_return",
         "def f(iterable, default=None, too_long=None):\n    it = iter(iterable)\n    first_value = next(it, default)\n"
         "    try:\n        second_value = next(it)\n    except StopIteration:\n        pass\n    else:\n"
         "        msg = 'Expected exactly one item, got {!r}, {!r}.'.format(first_value, second_value)\n"
         "        raise too_long or ValueError(msg)\n    return first_value\n",
         ["([],)", "([1],)", "([1, 2],)", "([1, 2], 0, KeyError)"]),
    # The same after a try whose clause raises from the exception (more-itertools' ``one``).
    Case("else_raises_after_raise_from",
         "def f(iterable, too_short=None, too_long=None):\n    it = iter(iterable)\n    try:\n"
         "        first_value = next(it)\n    except StopIteration as exc:\n"
         "        raise (too_short or ValueError('too few items')) from exc\n    try:\n        second_value = next(it)\n"
         "    except StopIteration:\n        pass\n    else:\n"
         "        raise too_long or ValueError('{!r}, {!r}'.format(first_value, second_value))\n    return first_value\n",
         ["([],)", "([1],)", "([1, 2],)"]),
    Case("else_returns_clause_passes",
         "def f(a):\n    try:\n        b = a()\n    except ValueError:\n        pass\n    else:\n        return b\n"
         "    return a\n" + RAISES, ["(int,)", "(bad,)"]),
    # Two clauses go on to the code after the try, the first by falling into it, the second
    # by a copy (3.12+); the first loads ``b`` with a check that it is bound.
    Case("else_returns_two_clauses_go_on",
         "def f(a):\n    try:\n        b = a()\n    except ValueError:\n        pass\n    except KeyError:\n"
         "        b = 2\n    else:\n        return b\n    return a, b\n" + RAISES,
         ["(int,)", "(bad,)", "(badkey,)"]),
    Case("else_named_clause_passes_raises",
         "def f(a):\n    try:\n        b = a()\n    except ValueError as e:\n        pass\n    else:\n"
         "        raise TypeError(b)\n    return a\n" + RAISES, ["(int,)", "(bad,)"]),
    # An else clause that branches to the code after the try: the clause's tail is a copy
    # of a block the else clause reaches, not on its straight path.
    Case("else_branches_to_code_after",
         "def f(a):\n    try:\n        b = a()\n    except ValueError:\n        pass\n    else:\n        if b:\n"
         "            raise TypeError(b)\n    return a\n" + RAISES, ["(str,)", "(bad,)", "(object,)"]),
    # The else clause ends with a look-alike of the code after the try on a line of its own.
    Case("else_returns_look_alike",
         "def f(a):\n    try:\n        b = a()\n    except ValueError:\n        pass\n    else:\n        if b:\n"
         "            return a\n        raise TypeError(b)\n    return a\n" + RAISES,
         ["(str,)", "(bad,)", "(object,)"]),
    Case("else_raises_after_clause_returns",
         "def f(a):\n    try:\n        b = a()\n    except ValueError:\n        return 1\n    except KeyError:\n"
         "        pass\n    else:\n        raise TypeError(b)\n    return a\n" + RAISES,
         ["(int,)", "(bad,)", "(badkey,)"]),
    Case("else_raises_in_except_clause",
         "def f(a, log):\n    try:\n        a(1)\n    except TypeError:\n        try:\n            b = a()\n"
         "        except ValueError:\n            pass\n        else:\n            raise KeyError(b)\n        return a\n"
         "    return log\n" + RAISES + "def one(*x):\n    if x:\n        raise TypeError\n    return 1\n",
         ["(int, [])", "(one, [])", "(lambda *x: bad() if not x else bad(), [])"]),
    # In a loop: the clause goes on with the rest of the loop body.
    Case("else_raises_clause_goes_on_in_loop",
         "def f(xs, log):\n    for x in xs:\n        try:\n            b = x()\n        except ValueError:\n            pass\n"
         "        else:\n            raise TypeError(b)\n        log.append(x)\n    return log\n" + RAISES,
         ["([bad, bad], [])", "([bad, int], [])"]),
    Case("else_returns_in_while_loop",
         "def f(n, log):\n    while n:\n        n -= 1\n        try:\n            b = log[n]\n        except IndexError:\n"
         "            pass\n        else:\n            return b\n    return n\n",
         ["(3, [])", "(3, [7])"]),
]
