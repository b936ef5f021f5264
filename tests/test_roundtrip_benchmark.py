"""The round-trip benchmark's own logic: the identity comparison, the sample, the grouping of refusals."""
import importlib.util
import sys
from pathlib import Path
from types import CodeType

import pytest

from framescope import DecompilationError

BENCHMARKS = Path(__file__).resolve().parent.parent / "benchmarks"


def load(name):
    if str(BENCHMARKS) not in sys.path:
        sys.path.insert(0, str(BENCHMARKS))
    spec = importlib.util.spec_from_file_location(name, str(BENCHMARKS / (name + ".py")))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


identical = load("identical")
roundtrip = load("roundtrip")
roundtrip_sample = load("roundtrip_sample")


def function(source, name="f"):
    """The code of function ``name`` in module ``source``, searched through nested code."""
    pending = [compile(source, "<test>", "exec", dont_inherit=True)]
    while pending:
        code = pending.pop()
        for const in code.co_consts:
            if isinstance(const, CodeType):
                if const.co_name == name:
                    return const
                pending.append(const)
    raise LookupError(name)


def test_layout_is_not_a_difference():
    one_line = "def f(a, b):\n    x, y = a, b\n    return a + b if x else y\n"
    spread = "def f(a,\n      b):\n\n    x, y = (a,\n            b)\n    return (a\n            + b) if x else y\n"
    assert identical.first_difference(function(one_line), function(spread)) is None


def test_another_operation_is_a_difference():
    difference = identical.first_difference(function("def f(a):\n    return a + 1\n"),
                                            function("def f(a):\n    return a - 1\n"))
    assert difference is not None
    assert "argument" in difference.kind or "/" in difference.kind


def test_constants_are_compared_by_type():
    difference = identical.first_difference(function("def f():\n    return 0\n"),
                                            function("def f():\n    return 0.0\n"))
    assert difference is not None


def test_another_branch_order_is_a_difference():
    left = "def f(a):\n    if a:\n        return 1\n    return 2\n"
    right = "def f(a):\n    if not a:\n        return 2\n    return 1\n"
    assert identical.first_difference(function(left), function(right)) is not None


def test_nested_code_is_compared():
    left = "def f(a):\n    return [x + 1 for x in a]\n"
    right = "def f(a):\n    return [x + 2 for x in a]\n"
    difference = identical.first_difference(function(left), function(right))
    assert difference is not None


def test_where_a_function_is_compiled_does_not_matter():
    # Inside its module, a call on an imported module's attribute compiles differently on 3.11-3.13;
    # the qualname constants (3.8-3.10) differ when the function is nested elsewhere.
    in_module = "import os\ndef f():\n    def g():\n        return 1\n    return os.getcwd(os.sep.join([]))\n"
    alone = "def f():\n    def g():\n        return 1\n    return os.getcwd(os.sep.join([]))\n"
    assert identical.first_difference(function(in_module), function(alone)) is None
    body = "".join("    " + line + "\n" for line in in_module.splitlines()[1:])
    one, other = function("import os\ndef outer():\n" + body), function("def other():\n" + body)
    assert identical.first_difference(one, other) is None


def test_jump_targets_are_instruction_indexes():
    code = function("def f(a):\n    while a:\n        a -= 1\n    return a\n")
    jumps = [instruction.arg for instruction in identical.listing(code).instructions
             if isinstance(instruction.arg, tuple) and instruction.arg[:1] == ("jump",)]
    count = len(identical.listing(code).instructions)
    assert jumps and all(0 <= index <= count for _, index in jumps)


def test_quotas_take_small_packages_whole():
    shares = roundtrip_sample.quotas({"small": 5, "big": 1000, "bigger": 2000}, 105)
    assert shares == {"small": 5, "big": 50, "bigger": 50}
    assert roundtrip_sample.quotas({"a": 3, "b": 4}, 100) == {"a": 3, "b": 4}


def test_the_sample_is_the_same_whatever_else_is_there():
    first = {"p": [("m.py", (("f%d" % n, 0),)) for n in range(100)]}
    more = {"p": first["p"] + [("n.py", (("g%d" % n, 0),)) for n in range(100)]}
    chosen = roundtrip_sample.sample(first, 10, seed=1)
    assert len(chosen) == 10 and chosen == roundtrip_sample.sample(first, 10, seed=1)
    assert chosen != roundtrip_sample.sample(first, 10, seed=2)
    # The rank of a function does not depend on the others: the sample of a bigger corpus
    # keeps the functions of the smaller one that rank high enough.
    bigger = roundtrip_sample.sample(more, 20, seed=1)
    assert len(bigger) == 20
    ranked = sorted(first["p"], key=lambda item: roundtrip_sample.rank(1, *item))
    kept = bigger & set(first["p"])
    assert 0 < len(kept) < 20 and kept == set(ranked[:len(kept)])


def test_refusals_are_grouped_without_names_and_numbers():
    one = DecompilationError("cannot place 'x' at 12", code_name="f", offset=12, opname="STORE_FAST")
    two = DecompilationError("cannot place 'y' at 40", code_name="g", offset=40, opname="STORE_FAST")
    assert roundtrip.refusal_key(one) == roundtrip.refusal_key(two) == "cannot place '...' at N"
    unsupported = DecompilationError("unsupported instruction", opname="SETUP_ANNOTATIONS")
    assert roundtrip.refusal_key(unsupported) == "unsupported instruction SETUP_ANNOTATIONS"


@pytest.mark.skipif(not hasattr(roundtrip.signal, "setitimer"), reason="no interval timers here")
def test_a_slow_round_trip_is_stopped():
    import time

    with pytest.raises(roundtrip.Timeout):
        with roundtrip.time_limit(0.05):
            time.sleep(2)


#: Sources whose layout the bytecode tells apart from equivalent ones (guard clauses, arms in
#: written order, tests not folded across an exit, returns written in each arm): the output
#: recompiles to the very instructions.
LAYOUT_SOURCES = [
    # A while loop with an else in a generator: the generator's own handler (3.12+) starts no try.
    "def f(mods, skip):\n    for m in mods:\n        name = g(m)\n        while not ok(name):\n            old = name\n"
    "            name = up(name)\n            if name == old:\n                break\n        else:\n            yield name",
    # An except clause that breaks, and a break after the try (3.11+ took the first for a copy).
    "def f(classes, atts):\n    for i, cls in enumerate(classes):\n        if cls.startswith('x'):\n"
    "            try:\n                n = g(cls)\n            except ValueError:\n                break\n"
    "            atts['style'] = n\n            classes.pop(i)\n            break\n    classes.append('field-list')",
    # A loop in a try body whose body always returns (it never loops back).
    "def f(x):\n    try:\n        for b in x:\n            return True\n        return False\n    except E:\n"
    "        return False",
    # ``match (x := v):`` whose first case is ``case _ if not x:`` (3.10-3.11 keep a copy for it).
    pytest.param("def f(arg):\n    match inferred := g(arg):\n        case _ if not inferred:\n            return False\n"
                 "        case T():\n            return 1\n    return True",
                 marks=pytest.mark.skipif(sys.version_info < (3, 10), reason="match needs 3.10")),
    # ``assert False, msg`` in an ``if``: 3.8-3.9 keep its test, a statement of its own.
    "def f(xs):\n    for x in xs:\n        m = g(x)\n        if m != 0:\n            assert False, 'unexpected'",
    # A try body ending in ``return <constant>`` that an ``if`` and the loop in it both reach.
    "def f(x):\n    try:\n        if g(x):\n            for b in x:\n                if k(b):\n"
    "                    return True\n        return False\n    except E:\n        return False",
    # A tuple or list literal passed starred stays so (no call without keywords needs one).
    "def f(g, a):\n    g(*(0, 1))\n    return g(*[a, 2])",
    "def f(code, xs):\n    if not len(code):\n        return None\n    xs.append(code)\n    return xs",
    "def f(xs, out):\n    for x in xs:\n        if x:\n            out.append(x)\n            out.append(-x)\n    return out",
    "def f(xs, out):\n    for x in xs:\n        if not x:\n            continue\n        out.append(x)\n"
    "        out.append(-x)\n    return out",
    pytest.param("def f(xs, out):\n    for x in xs:\n        if x > 0:\n            out.append(x)\n        else:\n"
                 "            break\n    return out", marks=pytest.mark.xfail(
                     sys.version_info[:2] in ((3, 10), (3, 12), (3, 13), (3, 14)), strict=True,
                     raises=AssertionError, reason="an else arm that only breaks comes out as a guard clause")),
    "def f(xs, out):\n    for x in xs:\n        r = g(x)\n        if not r:\n            break\n        out.append(r)\n"
    "    return out",
    "def f(a):\n    return f' {a.v}' if a.arg is not None else ''",
    "def f(v):\n    return None if v is None else int(v * 1000)",
    pytest.param("def f(x):\n    if x.is_Integer:\n        return abs(int(x))\n    elif x.is_Mul:\n"
                 "        return abs(int(x.args[0])) if x.args[0].is_Integer else 1\n    else:\n        return 1",
                 marks=pytest.mark.xfail(sys.version_info[:2] in ((3, 10), (3, 14)), strict=True,
                                         raises=AssertionError,
                                         reason="3.10 and 3.14: a returned conditional value in an "
                                                "elif arm folds into the test before it")),
    "def f(key):\n    if not key.startswith('m:'):\n        return key\n    if (new := g()) is not None:\n"
    "        return new\n    return key",
    "def f(event, cb):\n    if event == 'call':\n        g()\n        return cb\n    elif event == 'line':\n"
    "        h()\n        return cb\n    return cb",
    "def f(xs, res, out):\n    for x in xs:\n        if x:\n            if res is None:\n                continue\n"
    "            out.append(x)\n    return out",
    "def f(x, out):\n    if x == 1:\n        out.append(x)\n    elif x == 2:\n        pass\n    else:\n"
    "        raise ValueError(x)\n    out.append(0)",
    "def f(x, out):\n    if x == 2:\n        pass\n    else:\n        raise ValueError(x)\n    out.append(0)",
    "def f(edges, agg):\n    for k in edges:\n        if k not in agg:\n            agg[k] = 1\n            edges[k] = {}\n"
    "    return agg",
    "def f(attrs):\n    return tuple(a for a in attrs if a.hash is True or (a.hash is None and a.eq is True))",
    "def f(xs, out):\n    for x in xs:\n        for y in x:\n            if y != 1:\n                return False\n"
    "    if not out:\n        return False\n    return True",
    "def f(a, b):\n    if a:\n        return 1\n    elif b:\n        return 2\n    else:\n        b = a + 1\n"
    "        return b",
    "def f(a, b):\n    if a:\n        return 1\n    elif b:\n        return 2\n    else:\n        return None",
    "def f(xs):\n    for x in xs:\n        g(x)\n    else:\n        return xs",
    "def f(xs, n, d, out):\n    for c in xs:\n        if c.name != n:\n            continue\n"
    "        if d is not None and d != c.d:\n            continue\n        out.append(c)",
    "def f(m):\n    try:\n        import m\n    except ImportError:\n        return None\n    else:\n"
    "        return m.x",
    "def f(xs):\n    for x in xs:\n        if x.a and g(x):\n            return False\n    return True",
    "def f(xs, out):\n    for x in xs:\n        out.append(x)\n        if x.a and g(x):\n            y = 1\n"
    "            out.append(y)\n    return out",
    "def f(a):\n    try:\n        g()\n        if a:\n            h()\n    except OSError:\n        log()",
    "def f(a):\n    try:\n        g()\n    except OSError:\n        if a:\n            log()",
    "def f(a, b):\n    if a is not None:\n        s = a.size()\n    elif b is not None:\n        s = b.size()\n"
    "    else:\n        raise ValueError(b)\n    k(s)",
    # A ``not`` next to an ``is``/``in`` test flips its operator: negations stay outside.
    "def f(self, item, name):\n    if not (self.ok(item) and name in self.store):\n        return False\n    return True",
    "def f(x, y):\n    if not (isinstance(x, int) and x.value is y):\n        return None\n    return x",
    "def f(a, b, c):\n    if not (a is None or b in c):\n        return 1\n    return 2",
    "def f(a, b, c):\n    if a and not (b in c or a.x):\n        return 1\n    return 2",
    "def f(a, b, c):\n    if a.x() or not (b in c and a):\n        g()\n    return 2",
    "def f(a, b, c):\n    while not (a and b is c):\n        a = g()\n    return a",
    "def f(a, c):\n    return [x for x in a if not (x and x in c)]",
    "def f(a, b, c):\n    x = 1 if not (a and b in c) else 2\n    return x",
    "def f(a, b, c):\n    if a.x is b:\n        pass\n    else:\n        g()\n    return c",
    "def f(rules, key):\n    for f, value in rules:\n        if key in f:\n            return value\n    return None",
    "def f(s):\n    assert s.a is False\n    assert s.b in s.c, 'no'\n    return s",
    # A test whose operand holds a conditional value (``x or ()``) is one condition with the others.
    "def f(t):\n    for x in t:\n        if g(x.a or ()) or g(x.b or ()):\n            return True\n    return False",
    "def f(a, x, c):\n    if a or g(x if c else 1):\n        return 1\n    return 2",
    "def f(a, x, y, z):\n    if a and g(x or (), y and z):\n        return 1\n    return 2",
    "def f(a, b, x):\n    while a and h(b or x):\n        a = a[1:]\n    return a",
    "def f(xs, x):\n    return [y for y in xs if y or g(x or ())]",
    # A ``return`` that two ways reach is the source's (3.10+ copies its own final return per way).
    "def f(self, values, node, start, end):\n    if start == end:\n        if start < len(values):\n"
    "            self.tree[node] = values[start]\n        return\n    mid = (start + end) // 2\n"
    "    self._build(values, node, start, mid)",
    # A loop left only by a break inside an if: the code after that if is where its arms meet.
    "def f(f, n, u, K):\n    g = one(u, K)\n    while True:\n        n, m = n // 2, n\n        if m & 1:\n"
    "            g = mul(g, f, u, K)\n            if not n:\n                break\n        f = sqr(f, u, K)\n    return g",
    # A returned conditional value inside a with or try statement.
    "def f(a, m):\n    with m:\n        return g(a) if a else a",
    "def f(a, m):\n    try:\n        return g(a) if a else a\n    finally:\n        m.close()",
    "def f(a, m):\n    for x in a:\n        with m:\n            return x if x else 0",
    # ``if a: continue`` before ``if b:`` at the end of a loop body: two statements.
    "def f(self, tag_id):\n    for node in self.nodes:\n        if node.op not in OPS:\n            continue\n"
    "        for user in node.users:\n            if user.op not in OPS:\n                continue\n"
    "            if tag_id is None or int(user.tag) < tag_id:\n                self.r[node].add(user)\n    return self.r",
    # Clauses that all leave: the code after the body is its else clause or follows the statement.
    # 3.12+ lays both out alike; the numbering of the locals tells which one was written.
    "def f(self, key):\n    try:\n        g(key)\n    except OSError as exc:\n        self.warn(exc)\n        return\n"
    "    data = h(key)\n    try:\n        f = self.open(data)\n    except OSError as exc:\n        self.warn(exc)\n"
    "    else:\n        f.write(data)",
    "def f(args):\n    try:\n        config = g(args)\n    except E as e:\n        tw = h(e)\n        return tw\n"
    "    else:\n        ret = config.run()\n        return ret",
    "def f(self, a):\n    try:\n        g(a)\n    except E:\n        pass\n    else:\n        raise V(self)",
    "def f(self, a):\n    try:\n        g(a)\n    except E:\n        return 1\n    h(self)",
    "def f(self, xs):\n    for a in xs:\n        try:\n            g(a)\n        except E:\n"
    "            continue\n        else:\n            h(self)",
    "def f(self, xs):\n    for a in xs:\n        try:\n            g(a)\n        except E:\n            continue",
    "def f(self, other):\n    if isinstance(other, str):\n        try:\n            other = g(other)\n"
    "        except E:\n            return None\n    elif not h(other):\n        return None\n"
    "    return self.x == other.x",
    # A returned conditional value whose arm is a local, and the two returns it is not.
    "def f(self, key, default):\n    return self[key] if key in self else default",
    "def f(self, key, default):\n    if key in self:\n        return self[key]\n    return default",
    "def f(xs, key, d):\n    for x in xs:\n        return x[key] if key in x else d\n    return None",
    # An assert that ends a loop body, and ``assert False`` in the else of an ``if test: pass``.
    "def f(xs, s):\n    for x in xs:\n        assert g(x), f'{x} {s}'",
    "def f(xs, s):\n    for x in xs:\n        if g(x):\n            pass\n        else:\n            assert False, s",
    # ``if test: pass`` and an ``else``: 3.8, 3.9 and 3.11 keep the pass arm's jump past it.
    "def f(a, b):\n    if g(a):\n        pass\n    else:\n        b.append(a)\n    return 1",
    "def f(fs, m):\n    if fs.a:\n        fs.g()\n    elif m is not None and isinstance(fs, m.A):\n        pass\n"
    "    else:\n        raise ValueError(fs)\n    return fs",
    # An ``else`` after a body that raises, breaks or continues: 3.8-3.9 keep the unreached
    # jump past it.
    "def f(a, b):\n    if a:\n        raise E\n    else:\n        b.append(a)\n    return 1",
    "def f(a, b):\n    if a:\n        g()\n        raise E\n    elif b:\n        b.append(a)\n    return 1",
    "def f(a, b):\n    for x in a:\n        if x:\n            raise E(x)\n        else:\n            b.append(x)\n"
    "    return b",
    "def f(a, b):\n    for x in a:\n        if x:\n            continue\n        else:\n            b.append(x)",
    "def f(s, e):\n    while True:\n        d = g(e)\n        if d == 0:\n            break\n        else:\n"
    "            s.n += d\n    return s",
    "def f(s, e):\n    if e.err:\n        x = e.err\n        if isinstance(x, T):\n            raise C(s) from e\n"
    "        else:\n            raise N(s, x)\n    else:\n        raise N(s) from e",
    "def f(name, xs):\n    try:\n        for p in xs:\n            if name.startswith(p):\n                name = name[1:]\n"
    "                return name\n        return 2\n    except ValueError:\n        pass",
    "def f(fn):\n    if fn is None:\n        return None\n    xs = [i for i in g(fn) if i]\n"
    "    if len(xs) == 2 and xs[1].op == 'R':\n        return xs[0]\n    return None",
    "def f(values, m):\n    if len(values) == 2:\n        r = h(values)\n    else:\n        raise AssertionError('sort')\n"
    "    for a in r:\n        a.m = m\n    return tuple(r)",
    "def f(xs, m):\n    for x in xs:\n        if x == 2:\n            r = h(x)\n        else:\n            raise ValueError(x)\n"
    "        m.append(r)\n    return m",
    "def f(graph):\n    for node in graph:\n        if len(node.args) == 2:\n            if not node.b or node.alpha != 1:\n"
    "                continue\n            g(node)",
    "def f(node, m):\n    if node.a():\n        g()\n    elif any(a.r() == 'P' for a in node.acc()):\n        pass\n"
    "    else:\n        node.mark()\n    g(m)\n    return m",
    "def f(a, b, c, x, y):\n    if a.n():\n        pass\n    elif b.n():\n        pass\n    elif c.n():\n        x, y = y, x\n"
    "    elif not ok(x):\n        raise ValueError('A')\n    return g(x, y)",
    "def f(fs, pa, so):\n    if fs is not None:\n        if pa is not None and isinstance(fs, pa.F):\n            if so:\n"
    "                raise NotImplementedError('x')\n        elif so is not None and isinstance(fs, so.A):\n"
    "            pass\n        else:\n            raise ValueError('y')\n    return g(fs)",
    pytest.param("def f(v1, v2, a, b):\n    if v1 is v2 is None:\n        if a == b:\n            return 0\n"
                 "        else:\n            return -1 if a else 1\n    elif v1 is None:\n        return -1 if a else 1\n"
                 "    if a == b and v1 == v2:\n        return 0\n    return 5",
                 marks=pytest.mark.xfail(sys.version_info < (3, 10), strict=True, raises=AssertionError,
                                         reason="up to 3.9 a returned conditional value after a returning if "
                                                "comes out as an if statement")),
    # A loop whose body always leaves: 3.8 keeps the jump back after the handler's END_FINALLY.
    "def f(log):\n    while True:\n        with Swallow():\n            log.append(0)\n"
    "            return 1 // (len(log) - 1)",
    pytest.param("def f(log):\n    while True:\n        try:\n            return len(log)\n        finally:\n"
                 "            log.append(0)",
                 marks=pytest.mark.xfail(sys.version_info[:2] == (3, 9), strict=True, raises=AssertionError,
                                         reason="3.9 keeps the unreached jump back, which the output drops")),
    pytest.param("def f(log):\n    while True:\n        try:\n            return 1 // len(log)\n"
                 "        except ZeroDivisionError:\n            return -1",
                 marks=pytest.mark.xfail(sys.version_info[:2] == (3, 9), strict=True, raises=AssertionError,
                                         reason="3.9 keeps the unreached jump back, which the output drops")),
    # A break and a continue through the finally body of a try in while True; a break out of
    # while True that a try/finally contains (3.12+ lay the code after the loop out in place).
    "def f(log, n):\n    while True:\n        try:\n            if len(log) > n:\n                break\n"
    "            log.append(1)\n        finally:\n            log.append(0)\n    return log",
    "def f(log, n):\n    while True:\n        try:\n            if len(log) < n:\n                continue\n"
    "            return len(log)\n        finally:\n            log.append(0)",
    "def f(items):\n    log = []\n    try:\n        while True:\n            log.append(items.pop())\n"
    "            if len(log) > 2:\n                break\n    finally:\n        log.append('end')\n    return log",
    "def f(self, data, silent, cache):\n    try:\n        rv = self.loads(data)\n    except ValueError as e:\n"
    "        if silent:\n            rv = None\n            if cache:\n                self._c = (self._c[0], rv)\n"
    "        else:\n            rv = self.fail(e)\n            if cache:\n                self._c = (rv, self._c[1])\n"
    "    else:\n        if cache:\n            self._c = (rv, rv)\n    return rv",
    # A return behind an ``if`` in the try body of while True, code after the ``if``.
    "def f(xs, log):\n    while True:\n        x = xs.pop()\n        try:\n            log.append(10 // x)\n"
    "            if x > 2:\n                return x\n            log.append('a')\n        except ZeroDivisionError:\n"
    "            log.append('h')\n        log.append('s')",
    # A break behind an ``if`` in the body of (nested) with statements in while True.
    "def f(xs, log):\n    while True:\n        x = xs.pop()\n        with g(log):\n            log.append(10 // x)\n"
    "            if x > 2:\n                break\n            log.append('a')\n    log.append('end')\n    return log",
    "def f(xs, log):\n    while True:\n        x = xs.pop()\n        with g(log):\n            with g(x):\n"
    "                if x > 2:\n                    break\n                log.append(10 // x)\n            log.append('b')\n"
    "    log.append('end')\n    return log",
    # A break from an except clause through the finally body in while True.
    "def f(xs, log):\n    while True:\n        x = xs.pop()\n        try:\n            log.append(10 // x)\n"
    "        except ZeroDivisionError:\n            log.append('h')\n            break\n        finally:\n"
    "            log.append('f')\n    log.append('end')\n    return log",
    # Chained comparisons as operands of and/or.
    pytest.param('def f(lo, hi, a, b):\n    return (lo is None or a <= lo <= b) and (hi is None or a <= hi <= b)',
                 marks=pytest.mark.xfail(sys.version_info >= (3, 14), strict=True, raises=AssertionError,
                                         reason='3.14: a chained comparison after a kept test, in and')),
    'def f(x, a, b, y):\n    return y and a <= x <= b',
    'def f(x, a, b, y):\n    return y or a < x < b < 9',
    pytest.param('def f(x, a, b, y):\n    return (x or a <= x <= b) and y',
                 marks=pytest.mark.xfail(sys.version_info >= (3, 14), strict=True, raises=AssertionError,
                                         reason='3.14: a chained comparison after a kept test, in and')),
    'def f(x, a, b):\n    while a < x < b:\n        x = x * 2 + 1\n    return x',
    'def f(x, a, b, y):\n    return [z for z in y if z or a < x < b], [z for z in y if a < z < b or z > 8]',
    'def f(x, a, b, y):\n    out = []\n    for z in y:\n        if z or a < x < b:\n            out.append(z)\n    return out',
    'def f(a, b, c, y, w):\n    return [z for z in y if a < z < b < c or w]',
    'def f(x, a, b, y):\n    while a <= x <= b and y is None:\n        x = x * 2 + 1\n    return x',
    'def f(x, a, b, y):\n    while a <= x <= b or y is None:\n        x = x * 2 + 1\n        y = x if x > 40 else y\n    return x',
    # Returns from a with statement in two nested loops (3.10+ took one for a break).
    pytest.param("def f(cm, args, a, b, c):\n    with cm as ctx:\n        while args:\n            if a:\n"
                 "                if b:\n                    return ctx\n            else:\n                while args:\n"
                 "                    if c:\n                        return ctx",
                 marks=pytest.mark.xfail(sys.version_info >= (3, 14), strict=True, raises=AssertionError,
                                         reason="3.14: returns from a with statement round two loops")),
    # A with statement whose body always leaves a while loop (3.8: the jump back follows its exit).
    "def f(xs, log):\n    while xs:\n        x = xs.pop()\n        with g():\n            log.append(10 // x)\n"
    "            break\n    log.append('end')\n    return log",
    "def f(xs, log):\n    while xs:\n        x = xs.pop()\n        with g():\n            log.append(10 // x)\n"
    "            return x\n        log.append('s')\n    return log",
    # A continue, return or break ending the try body of try/except/finally in a loop, code
    # after the statement; a break ending the try body of try/finally (3.9-3.11: the copy of
    # the finally body falls into the pop of the iterator).
    "def f(xs, log):\n    for x in xs:\n        try:\n            log.append(10 // x)\n            continue\n"
    "        except ZeroDivisionError:\n            log.append('h')\n        finally:\n            log.append('f')\n"
    "        log.append('s')",
    "def f(xs, log, n):\n    while n:\n        n -= 1\n        x = xs.pop()\n        try:\n            log.append(10 // x)\n"
    "            return\n        except ZeroDivisionError:\n            log.append('h')\n        finally:\n"
    "            log.append('f')\n        log.append('s')\n    return log",
    "def f(xs, log):\n    for x in xs:\n        try:\n            log.append(10 // x)\n            break\n"
    "        except ZeroDivisionError:\n            log.append('h')\n        finally:\n            log.append('f')\n"
    "    return log",
    "def f(xs, log):\n    for x in xs:\n        try:\n            log.append(10 // x)\n            break\n"
    "        finally:\n            log.append('f')",
    # Finally bodies that leave the loop: break, return, a continue behind an if (the exception
    # path drops the exception and leaves like the normal path's copy).
    "def f(xs, log):\n    for x in xs:\n        try:\n            log.append(10 // x)\n"
    "        except ZeroDivisionError:\n            log.append('h')\n        finally:\n"
    "            log.append('f')\n            break\n    log.append('end')\n    return log",
    "def f(xs, log):\n    for x in xs:\n        try:\n            log.append(10 // x)\n"
    "        finally:\n            log.append('f')\n            return x\n    return log",
    "def f(xs, log):\n    while len(log) < 6:\n        x = xs.pop()\n        try:\n"
    "            log.append(10 // x)\n        finally:\n            log.append('f')\n"
    "            if x > 2:\n                continue\n        log.append('s')\n    return log",
]


@pytest.mark.parametrize("source", LAYOUT_SOURCES)
def test_the_layout_comes_back_identical(source):
    from framescope import decompile

    code = function(source)
    again = function(decompile(code))
    assert identical.first_difference(code, again) is None, decompile(code)
