"""Round-trip cases for ``except*`` (PEP 654, 3.11+), called with exception groups the clauses split."""
from typing import List

from tests.decompiler.cases import Case

#: What an exception that left the statement was: its type and the types in it, nested groups
#: flattened (a result the round trip compares, where an exception would only show its type).
KINDS = ("def kinds(err):\n    if isinstance(err, BaseExceptionGroup):\n"
         "        return sorted(k for e in err.exceptions for k in kinds(e))\n    return [type(err).__name__]\n")

#: Groups to call the cases with: one matching each clause, several, none, and no exception.
GROUPS = ["([],)", "([ValueError(1)],)", "([ValueError(1), TypeError(2)],)", "([KeyError(1), ZeroDivisionError()],)",
          "([OSError(), ValueError(2), ValueError(3)],)", "([ZeroDivisionError()],)",
          "([ExceptionGroup('inner', [TypeError(4)]), ValueError(5)],)"]

CASES: List[Case] = [
    Case("exc_star_one_clause",
         "def f(excs):\n    log = []\n    try:\n        raise ExceptionGroup('g', excs)\n    except* ValueError:\n"
         "        log.append('v')\n    return log",
         ["([ValueError(1)],)", "([ValueError(1), ValueError(2)],)", "([TypeError(1)],)",
          "([ValueError(1), TypeError(2)],)"], since=(3, 11)),
    Case("exc_star_clauses_named_and_tuple",
         "def f(excs):\n    log = []\n    try:\n        try:\n            if excs:\n"
         "                raise ExceptionGroup('g', excs)\n            log.append('none')\n"
         "        except* ValueError as e:\n            log.append(('v', len(e.exceptions)))\n"
         "        except* (TypeError, KeyError) as e:\n            log.append(('tk', kinds(e)))\n"
         "        except* OSError:\n            log.append('os')\n"
         "    except ExceptionGroup as rest:\n        log.append(('rest', kinds(rest)))\n    return log\n" + KINDS,
         GROUPS, since=(3, 11)),
    Case("exc_star_call_and_bare_exception",
         "def f(g, *args):\n    try:\n        g(*args)\n    except* ValueError as e:\n        print(1, e)\n"
         "    except* (TypeError, KeyError):\n        print(2)\n"
         "def group(*excs):\n    raise ExceptionGroup('g', list(excs))\n",
         ["(len, [])", "(int, 'x')", "(len, 1)", "(group, KeyError(1), ValueError(2))", "(group, OSError())"],
         since=(3, 11)),
    Case("exc_star_raise_in_body",
         "def f(excs, how):\n    log = []\n    try:\n        try:\n            raise ExceptionGroup('g', excs)\n"
         "        except* ValueError as e:\n            log.append('v')\n            if how == 1:\n                raise\n"
         "            if how == 2:\n                raise KeyError(len(e.exceptions))\n            log.append('kept')\n"
         "        except* TypeError:\n            raise RuntimeError('t') from None\n"
         "    except Exception as err:\n        log.append((type(err).__name__, kinds(err)))\n    return log\n" + KINDS,
         ["([ValueError(1)], 0)", "([ValueError(1)], 1)", "([ValueError(1)], 2)", "([ValueError(1), TypeError(2)], 0)",
          "([ValueError(1), TypeError(2)], 2)", "([TypeError(2)], 1)", "([OSError()], 0)"], since=(3, 11)),
    Case("exc_star_nested_in_clause",
         "def f(excs, inner):\n    log = []\n    try:\n        try:\n            raise ExceptionGroup('g', excs)\n"
         "        except* ValueError as e:\n            try:\n                raise ExceptionGroup('i', inner)\n"
         "            except* KeyError as k:\n                log.append(('k', len(k.exceptions), len(e.exceptions)))\n"
         "            except* OSError:\n                log.append('os')\n            log.append('after inner')\n"
         "        except* TypeError:\n            log.append('t')\n"
         "    except ExceptionGroup as rest:\n        log.append(('rest', kinds(rest)))\n    return log\n" + KINDS,
         ["([ValueError(1)], [KeyError(1)])", "([ValueError(1), TypeError(2)], [OSError(), KeyError(2)])",
          "([ValueError(1)], [ZeroDivisionError()])", "([TypeError(1)], [KeyError(1)])"], since=(3, 11)),
    Case("exc_star_else_finally",
         "def f(excs, log):\n    try:\n        if excs:\n            raise ExceptionGroup('g', excs)\n"
         "    except* ValueError:\n        log.append('v')\n    except* TypeError as e:\n        log.append(kinds(e))\n"
         "    else:\n        log.append('else')\n    finally:\n        log.append('finally')\n    return log\n" + KINDS,
         ["([], [])", "([ValueError(1)], [])", "([ValueError(1), TypeError(2)], [])", "([KeyError(1)], [])"],
         since=(3, 11)),
    Case("exc_star_finally_only_clause_reraises",
         "def f(excs, log):\n    try:\n        raise ExceptionGroup('g', excs)\n    except* ValueError:\n"
         "        log.append('v')\n        raise\n    finally:\n        log.append('finally')\n",
         ["([ValueError(1)], [])", "([TypeError(1)], [])"], since=(3, 11)),
    Case("exc_star_in_loop",
         "def f(groups):\n    log = []\n    for excs in groups:\n        try:\n            if excs is None:\n"
         "                continue\n            if not excs:\n                break\n"
         "            raise ExceptionGroup('g', excs)\n        except* ValueError:\n            log.append('v')\n"
         "        except* TypeError as e:\n            log.append(len(e.exceptions))\n        log.append('next')\n"
         "    return log",
         ["([[ValueError(1)], None, [TypeError(1), TypeError(2)], [], [ValueError(3)]],)",
          "([[ValueError(1), TypeError(2)]],)", "([[KeyError(1)]],)"], since=(3, 11)),
    Case("exc_star_loop_in_clause",
         "def f(excs):\n    log = []\n    try:\n        raise ExceptionGroup('g', excs)\n    except* ValueError as e:\n"
         "        for x in e.exceptions:\n            if x.args[0] > 2:\n                break\n            log.append(x.args[0])\n"
         "        else:\n            log.append('all')\n    return log",
         ["([ValueError(1), ValueError(2)],)", "([ValueError(1), ValueError(3)],)", "([TypeError(1)],)"],
         since=(3, 11)),
    Case("exc_star_name_in_closure",
         "def f(excs):\n    try:\n        raise ExceptionGroup('g', excs)\n    except* ValueError as e:\n"
         "        got = lambda: len(e.exceptions)\n    return got()",
         ["([ValueError(1), ValueError(2)],)", "([ValueError(1), TypeError(1)],)"], since=(3, 11)),
    Case("exc_star_return_in_body_branches_in_clause",
         "def f(g, n):\n    try:\n        if n:\n            return g(n)\n        g()\n    except* ValueError as e:\n"
         "        if len(e.exceptions) > 1:\n            print('many')\n        else:\n            print('one')\n"
         "    except* TypeError:\n        try:\n            n = 1 // n\n        except ZeroDivisionError:\n"
         "            n = -1\n    return n\n"
         "def group(*excs):\n    raise ExceptionGroup('g', [ValueError(i) for i in range(len(excs))] + [TypeError()])\n",
         ["(group, 0)", "(group, 2)", "(int, 0)", "(abs, -3)", "(group, 'ab')"], since=(3, 11)),
    Case("exc_star_in_except_clause",
         "def f(a, excs):\n    try:\n        return 1 // a\n    except ZeroDivisionError as z:\n        try:\n"
         "            raise ExceptionGroup('g', excs)\n        except* ValueError:\n            a = 'v'\n"
         "        except* KeyError:\n            pass\n        return a, type(z).__name__\n    return 'after'",
         ["(1, [])", "(0, [KeyError(1)])", "(0, [ValueError(1)])", "(0, [OSError()])"], since=(3, 11)),
    Case("exc_star_generator_and_async",
         "def f(excs):\n    def gen():\n        try:\n            yield 1\n            raise ExceptionGroup('g', excs)\n"
         "        except* ValueError as e:\n            yield len(e.exceptions)\n    async def co():\n        try:\n"
         "            raise ExceptionGroup('g', excs)\n        except* ValueError:\n            return_value = 'v'\n"
         "        return return_value\n    c = co()\n    try:\n        c.send(None)\n    except StopIteration as stop:\n"
         "        return list(gen()), stop.value",
         ["([ValueError(1), ValueError(2)],)", "([TypeError(1)],)"], since=(3, 11)),
    Case("exc_star_global_name",
         "def f(excs):\n    global seen\n    try:\n        raise ExceptionGroup('g', excs)\n"
         "    except* ValueError as seen:\n        pass\n    return 'seen' in globals()",
         ["([ValueError(1)],)"], since=(3, 11)),
    Case("exc_star_in_with",
         "def f(excs, log):\n    with Log(log):\n        try:\n            raise ExceptionGroup('g', excs)\n"
         "        except* ValueError:\n            log.append('v')\n    return log\n"
         "class Log:\n    def __init__(self, log):\n        self.log = log\n    def __enter__(self):\n        return self\n"
         "    def __exit__(self, *exc):\n        self.log.append(exc[0] is not None)\n        return True\n",
         ["([ValueError(1)], [])", "([TypeError(1)], [])"], since=(3, 11)),
]
