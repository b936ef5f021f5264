"""Round-trip cases for try/except/finally and with statements, reduced from the standard library."""
from typing import List

from tests.decompiler.cases import Case

CASES: List[Case] = [
    Case("exc_body_return_constant_after_if_and_loop",
         "def f(x):\n    try:\n        if g(x):\n            for b in x:\n                if b > 1:\n"
         "                    return True\n        return False\n    except TypeError:\n        return None\n"
         "def g(x):\n    return len(x) > 0",
         ["([0, 2],)", "([0],)", "([],)", "(3,)"]),
    Case("exc_try_except_finally_if_last",
         "def f(a, b):\n    r = []\n    if a is not None:\n        if not b:\n            return None\n        try:\n"
         "            if a == 1:\n                return r\n            x = 10 // a\n            if x == 5:\n"
         "                r.append(x)\n        except ZeroDivisionError as e:\n            if b > 1:\n"
         "                r.append('big')\n            elif e.args:\n                r.append('args')\n"
         "        finally:\n            r.append('done')\n    return r",
         ["(None, 1)", "(1, 0)", "(1, 1)", "(2, 1)", "(3, 1)", "(0, 2)", "(0, 1)"]),
    Case("exc_raise_in_try_like_raise_after",
         "def f(e):\n    try:\n        c = e[1:2]\n        if c in '123':\n            raise ValueError\n"
         "        if len(e) == 2:\n            if c in 'ab':\n                raise KeyError('bad %s' % e)\n"
         "            return ord(e[1])\n    except ValueError:\n        pass\n    raise KeyError('bad %s' % e)",
         ["('x1',)", "('xa',)", "('xz',)", "('xzz',)"]),
    Case("exc_bare_raise_after_nested_try",
         "def f(a, b):\n    r = []\n    try:\n        return 10 // a\n    except ZeroDivisionError:\n"
         "        try:\n            r.append(1 // b)\n        except ZeroDivisionError:\n            pass\n        raise",
         ["(1, 1)", "(0, 1)", "(0, 0)"]),
    Case("exc_try_in_finally_of_return",
         "def f(w, t):\n    got = False\n    try:\n        got = 10 // t\n        return got\n    finally:\n"
         "        w.append(1)\n        if not got:\n            try:\n                w.remove(3)\n"
         "            except ValueError:\n                pass",
         ["([], 1)", "([3], 0)", "([], 0)", "([], 20)"], since=(3, 10)),
    Case("exc_for_else_in_except_clause",
         "def f(names, mro, pred):\n    results = []\n    for key in names:\n        try:\n            value = key[0]\n"
         "        except IndexError:\n            for base in mro:\n                if key in base:\n"
         "                    value = base[key]\n                    break\n            else:\n                continue\n"
         "        if not pred or pred(value):\n            results.append((key, value))\n    return results",
         ["(['ab', '', 'c'], [{'': 1}], None)", "(['ab', ''], [{}], len)", "(['x'], [], bool)"]),
    Case("exc_break_in_except_in_loop_in_except",
         "def f(rows):\n    out = []\n    try:\n        out.append(rows[0])\n    except IndexError:\n"
         "        for r in rows or ['1', 'x', '2']:\n            try:\n                n = int(r)\n"
         "            except ValueError:\n                break\n            out.append(n)\n    return out",
         ["([],)", "(['5'],)"]),
    Case("exc_return_from_try_in_except_clause",
         "def f(path, make):\n    try:\n        len(path)\n    except TypeError:\n        try:\n"
         "            return make(path)\n        except KeyError:\n            pass\n    raise ValueError('clash: %s' % path)",
         ["('a', str)", "(1, str)", "(1, {}.__getitem__)"]),
    Case("exc_return_from_try_in_named_except_clause",
         "def f(path, make):\n    try:\n        len(path)\n    except TypeError as e:\n        try:\n"
         "            return make(path, type(e))\n        except KeyError:\n            pass\n    raise ValueError('clash: %s' % path)",
         ["('a', max)", "(1, max)", "(1, {}.get)", "(1, {}.__getitem__)"]),
    Case("exc_finally_starting_with_try_finally",
         "def f(s):\n    try:\n        s.append(1)\n    finally:\n        try:\n            if s[0]:\n"
         "                s.append(2)\n        finally:\n            s.append(3)\n    return s",
         ["([0],)", "([1],)", "([],)", "(None,)"], since=(3, 11)),
    Case("exc_if_first_in_try_after_condition",
         "def f(obj, mods):\n    for name, m in mods:\n        if name == 'a' or m is None:\n            continue\n"
         "        try:\n            if m[0] is obj:\n                return name\n        except IndexError:\n"
         "            pass\n    return 'main'",
         ["(1, [('a', [1]), ('b', None), ('c', []), ('d', [1])])", "(2, [('d', [1])])"]),
    Case("exc_return_in_finally",
         "def f(s, e):\n    try:\n        if s:\n            s.pop()\n    finally:\n        if e == 1:\n"
         "            s.append(e)\n            return\n        s.append(2)\n    return s",
         ["([1, 2], 1)", "([1, 2], 0)", "([], 1)", "(None, 1)", "(None, 0)"], since=(3, 9)),
    Case("exc_return_value_in_finally",
         "def f(s, e):\n    try:\n        if s:\n            s.pop()\n    finally:\n        if e == 1:\n"
         "            s.append(e)\n            return len(s)\n        s.append(2)\n    return s",
         ["([1, 2], 1)", "([1, 2], 0)", "([], 1)", "(None, 1)", "(None, 0)"], since=(3, 11)),
    Case("exc_return_in_finally_after_try",
         "def f(s, e):\n    try:\n        if s:\n            s.pop()\n    finally:\n        if e == 1:\n"
         "            if s:\n                try:\n                    s.remove(0)\n                except ValueError:\n"
         "                    pass\n            s.append(0)\n            return\n        s.append(2)\n    return s",
         ["([0, 1, 2], 1)", "([1, 2], 1)", "([1, 2], 0)", "([], 1)", "(None, 1)", "(None, 0)"], since=(3, 9)),
    Case("exc_finally_that_raises_in_except_clause",
         "def f(s):\n    try:\n        s.pop()\n    except IndexError:\n        try:\n            s.append(1)\n"
         "        finally:\n            raise\n    finally:\n        s.append(2)\n    return s",
         ["([1],)", "([],)", "(None,)"], since=(3, 9)),
    Case("exc_named_clause_deletes_its_name_then_finally",
         "def f(s):\n    args = 1\n    try:\n        s.pop()\n    except Exception as exc:\n        exc.args = ()\n"
         "        del exc\n        s.append(1)\n    finally:\n        args = None\n    return s, args",
         ["([1],)", "([],)"]),
    Case("exc_nested_clauses_end_with_the_function",
         "def f(s, log):\n    try:\n        s.pop()\n    except KeyError:\n        raise\n"
         "    except BaseException as exc:\n        try:\n            s.append(len(exc.args))\n        except KeyError:\n"
         "            raise\n        except BaseException:\n            log.append(1)",
         ["([1], [])", "([], [])", "(None, [])", "({}, [])"]),
    Case("exc_while_true_clause_returns",
         "def f(it, d):\n    while True:\n        try:\n            return d[next(it)]\n"
         "        except StopIteration:\n            return None\n        except KeyError:\n            continue",
         ["(iter([1, 2]), {2: 'b'})", "(iter([1]), {})", "(iter([]), {})"]),
    Case("exc_return_from_loop_in_except_clause",
         "def f(start, vals):\n    if not vals:\n        return start\n    try:\n        last = vals[-1]\n"
         "        if last == 3:\n            return last + 1\n        else:\n            raise TypeError\n"
         "    except TypeError:\n        for v in reversed(vals):\n            try:\n                return v + 1\n"
         "            except TypeError:\n                pass\n        return start",
         ["(0, [])", "(0, [1, 3])", "(0, [1, 2])", "(0, [1, 'a'])", "(0, ['a', 'b'])"]),
    # The clause's return pops the loop's iterator like the body's later return of a local does.
    Case("exc_return_local_from_clause_in_loop",
         "def f(xs, d):\n    for x in xs:\n        try:\n            v = d[x]\n        except KeyError:\n"
         "            return x\n        if v:\n            return v\n    return None",
         ["([1, 2], {1: 0})", "([1, 2], {1: 0, 2: 5})", "([1], {1: 0})"]),
    Case("exc_return_from_loop_in_with",
         "import io\ndef f(text, name):\n    fp = io.StringIO(text)\n    with fp:\n"
         "        for n, line in enumerate(fp, start=1):\n            if line == name:\n                return name, n\n"
         "    return None",
         ["('a\\nb\\n', 'b\\n')", "('a\\n', 'c')"]),
    Case("exc_while_else_break_in_with",
         "import threading\ndef f(s, blocking):\n    rc = False\n    with threading.Lock():\n        while s[0] == 0:\n"
         "            if not blocking:\n                break\n            s[0] += 1\n        else:\n"
         "            s[0] -= 1\n            rc = True\n    return rc, s",
         ["([0], False)", "([0], True)", "([3], False)"]),
    # A return inside loops inside a try body, and one after them: the loops' returns are no
    # breaks though the code after the loops returns too.
    Case("exc_return_in_loops_in_try",
         "def f(d, r):\n    try:\n        for k, arr in d.items():\n            for node in arr:\n"
         "                if not node:\n                    return r\n                stack = [node]\n"
         "                while stack:\n                    cur = stack.pop()\n                    if cur is None:\n"
         "                        return r\n        return {}\n    except Exception as e:\n        return r",
         ["({'a': [1, 2]}, 'r')", "({'a': [1, 0]}, 'r')", "({'a': [[None]]}, 'r')", "(None, 'r')"]),
    Case("exc_return_in_for_in_try_then_return",
         "def f(d, r):\n    try:\n        for arr in d:\n            if arr:\n                return r\n"
         "        return d\n    except Exception:\n        return r",
         ["([0, 1], 'r')", "([0], 'r')", "(None, 'r')"]),
    # An except clause that leaves the with statement its try ends: by continue, break or
    # return, after the with's clean-up, while the try body leaves by the with's normal exit.
    Case("exc_clause_leaves_with_by_continue",
         "import contextlib\ndef f(parts):\n    out = []\n    for part in parts:\n"
         "        with contextlib.nullcontext():\n            try:\n                r = 1 / part\n"
         "            except ZeroDivisionError:\n                if out:\n                    continue\n"
         "                raise\n        out.append(r)\n    return out",
         ["([1, 2],)", "([1, 0, 2],)", "([0],)"]),
    Case("exc_clause_leaves_with_by_break_or_return",
         "import contextlib\ndef f(parts, stop):\n    out = []\n    for part in parts:\n"
         "        with contextlib.nullcontext():\n            try:\n                r = 1 / part\n"
         "            except ZeroDivisionError:\n                if stop:\n                    break\n"
         "                return out\n        out.append(r)\n    with contextlib.nullcontext():\n"
         "        try:\n            r = 1 / len(out)\n        except ZeroDivisionError:\n            return None\n"
         "    return out, r",
         ["([1, 2], True)", "([1, 0, 2], True)", "([1, 0, 2], False)", "([0], True)"]),
    # 3.8: a try body that ends with ``return <constant>`` inside a with statement returns after
    # the with's clean-up, before the handler; the except clauses' own returns leave the with too.
    Case("exc_try_returns_constant_in_with",
         "import contextlib\ndef f(x):\n    with contextlib.nullcontext(x) as t:\n        try:\n"
         "            r = 1 / t\n            return True\n        except ZeroDivisionError:\n            return False",
         ["(1,)", "(0,)", "('a',)"]),
    Case("exc_try_returns_constant_in_two_withs",
         "import contextlib\ndef f(x):\n    with contextlib.nullcontext(x) as t, contextlib.nullcontext():\n"
         "        try:\n            1 / t\n            return True\n        except ZeroDivisionError:\n"
         "            return False",
         ["(1,)", "(0,)", "('a',)"]),
    Case("exc_try_returns_constant_in_with_in_loop",
         "import contextlib\ndef f(xs):\n    for x in xs:\n        with contextlib.nullcontext(x) as t:\n"
         "            try:\n                1 / t\n                return True\n"
         "            except ZeroDivisionError:\n                break\n    return 4",
         ["([1],)", "([0, 1],)", "([],)", "(['a'],)"]),
    # 3.8: a try body in an except clause that ends with ``return <constant>`` releases the
    # clause's exception first; it is the body's return, not an else clause's.
    Case("exc_try_returns_constant_in_named_clause",
         "def f(s, default=False):\n    try:\n        s.append(1 // s[0])\n    except Exception as e:\n        try:\n"
         "            s.append(len(s[1]))\n            return False\n        except Exception:\n            pass\n"
         "        return default\n    return True",
         ["([1],)", "([0, 'ab'],)", "([0, 1],)", "([],)"]),
    Case("exc_try_returns_constant_in_clause_in_loop",
         "def f(s, xs):\n    for x in xs:\n        try:\n            s.append(1 // x)\n        except Exception:\n"
         "            try:\n                s.append(len(x))\n                return False\n"
         "            except Exception:\n                continue\n    return True",
         ["([], [1, 2])", "([], [1, 0])", "([], ['', 1])"]),
    Case("exc_try_returns_constant_in_with_in_clause",
         "import contextlib\ndef f(s, xs):\n    try:\n        s.append(1 // xs)\n    except Exception:\n"
         "        with contextlib.nullcontext():\n            try:\n                s.append(len(xs))\n"
         "                return False\n            except Exception:\n                pass\n    return 3",
         ["([], 1)", "([], 0)", "([], 'ab')"]),
    # A with statement that always raises ends an ``except ... as e`` clause: the code after
    # the with (reached when __exit__ swallows the exception) is the clause's clean-up.
    Case("exc_with_raising_ends_named_clause",
         "import contextlib\ndef f(x, swallow):\n    try:\n        r = 1 / x\n    except ZeroDivisionError as e:\n"
         "        with contextlib.suppress(ValueError if swallow else KeyError) as h:\n"
         "            if h is None:\n                raise ValueError('x') from e\n            else:\n"
         "                raise OSError('y')\n        r = 0\n    return r",
         ["(2, True)", "(0, True)", "(0, False)"]),
    # The code after a try whose body always raises: 3.12+ lays it out right after the
    # except clause, which only falls into it.
    Case("exc_code_after_try_whose_body_raises",
         "def f(items):\n    try:\n        it = iter(items)\n        first = next(it)\n    except StopIteration:\n"
         "        return None\n    try:\n        next(it)\n        raise ValueError('more than one')\n"
         "    except StopIteration:\n        pass\n    return first",
         ["([],)", "([1],)", "([1, 2],)"]),
    # A return from an except clause inside a loop: after POP_EXCEPT the value waits on the
    # stack above the iterator (3.12+ swaps it down): not code after the try statement.
    Case("exc_return_from_clause_in_loop",
         "def f(xs, log):\n    for x in xs:\n        try:\n            log.append(10 // x)\n"
         "        except ZeroDivisionError:\n            return x\n    return log\n",
         ["([1, 0, 2], [])", "([1, 2], [])"]),
    # 3.8: a jump in a finally body aimed at an ``EXTENDED_ARG`` prefix (the loop's jump
    # back past offset 255) must go to the copy of that body, not the shared original.
    Case("exc_finally_loop_jump_to_extended_arg",
         "def f(env, log):\n    a0 = env.get(0); a1 = env.get(1); a2 = env.get(2); a3 = env.get(3); a4 = env.get(4)\n    a5 = env.get(5); a6 = env.get(6); a7 = env.get(7); a8 = env.get(8); a9 = env.get(9)\n    b0 = env.get(0); b1 = env.get(1); b2 = env.get(2); b3 = env.get(3); b4 = env.get(4)\n    b5 = env.get(5); b6 = env.get(6); b7 = env.get(7); b8 = env.get(8); b9 = env.get(9)\n    old = {}\n    try:\n        for k, v in env.items():\n            old[k] = log.get(k)\n            log[k] = v\n        log['n'] = 10 // len(env)\n    finally:\n        for k, v in old.items():\n            if v is None:\n                pass\n            else:\n                log[k] = v\n        log['a'] = (a0, a1, a2, a3, a4, a5, a6, a7, a8, a9, b0, b1, b2, b3, b4, b5, b6, b7, b8, b9)\n    return log",
         ["({1: 2, 3: None}, {})", "({}, {})", "({1: 2}, {1: 5})"]),
    # 3.8-3.10: a ``return CONSTANT`` leaves the enclosing try first (POP_BLOCK), after its
    # region, in the else clause and in the except clause alike.
    Case("exc_try_else_return_constants_in_try_except_as",
         "def f(a):\n    try:\n        try:\n            x = 10 // a\n        except ZeroDivisionError:\n"
         "            return 1\n        else:\n            return 5\n    except TypeError as e:\n        return 2",
         ["(1,)", "(0,)", "('x',)"]),
    # 3.8: the dead POP_EXCEPT of an ``except E as name`` clause that returns is a block apart
    # from its jump, which still marks where the else clause ends.
    Case("exc_except_as_return_else_try_finally_in_try_finally",
         "def f(a, log):\n    try:\n        try:\n            x = 10 // a\n        except ZeroDivisionError as e:\n"
         "            return 1\n        else:\n            try:\n                return x\n            finally:\n"
         "                log.append(x)\n    finally:\n        log.append(0)", ["(1, [])", "(0, [])", "('x', [])"]),
    # 3.8: the body and the clause all return through the finally body; its END_FINALLY is followed
    # by the unreached copy of the finally body on the normal path (one with branches here).
    Case("exc_try_return_except_return_finally_if",
         "def f(a, log):\n    try:\n        x = 10 // a\n        return x\n    except ZeroDivisionError:\n"
         "        return 0\n    finally:\n        if log:\n            log.append(1)",
         ["(1, [])", "(0, [5])", "('x', [])"]),
    Case("exc_loop_break_return_except_return_finally_if",
         "def f(log, g):\n    try:\n        while 1:\n            line = g(log)\n            if not line:\n                break\n"
         "            log.append(line)\n        return 0\n    except ZeroDivisionError:\n        return 1\n    finally:\n"
         "        if log:\n            log.append(2)",
         ["([3], lambda log: len(log) < 3 and 5)", "([], lambda log: 1 // 0)", "([], lambda log: [].pop())"]),
    # A return of a constant from a loop in a try body is no break to a copy of the code after
    # the loop: that code (a second try statement) ends with the same return.
    Case("exc_loop_return_constant_then_try_return_constant",
         "def f(a, b):\n    try:\n        for k in a:\n            if k:\n                return False\n"
         "    except StopIteration:\n        return False\n    try:\n        next(b)\n    except StopIteration:\n"
         "        return True\n    return False", ["([0, 1], iter([]))", "([0], iter([]))", "([], iter([1]))"]),
    # A loop in a try body whose body always returns: it never loops back, and the try's
    # region ends before the returned value is loaded.
    Case("exc_try_loop_body_always_returns",
         "def f(x):\n    try:\n        for b in x:\n            return b\n        return False\n"
         "    except TypeError:\n        return None", ["([1],)", "([],)", "(3,)"]),
]
