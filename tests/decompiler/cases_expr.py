"""Round-trip cases for statement- and expression-level constructs (asserts, assignments, names)."""
from typing import List

from tests.decompiler.cases import Case

CASES: List[Case] = [
    Case("expr_starred_literal_arguments", "def f(g, k, a, b):\n    r = [g(*(0, 1)), g(*(a, b)), g(*[a, 2]), g(0, 1, **k)]\n"
         "    r.append(g(*(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24,"
         " 25, 26, 27, 28, 29, 30, 31)))\n    return r",
         ["(lambda *a, **k: (a, sorted(k.items())), {'z': 1}, 3, 4)"]),
    Case("expr_assert_false_in_if_in_loop", "def f(xs):\n    for x in xs:\n        if x != 0:\n"
         "            assert False, 'unexpected'\n    return len(xs)", ["([0, 0],)", "([0, 1],)"]),
    Case("expr_assert_false_message", "def f(x):\n    if x:\n        return 1\n    assert False, 'bad %s' % x",
         ["(1,)", "(0,)"]),
    Case("expr_assert_false_bare", "def f(x):\n    for y in x:\n        if y:\n            return y\n    assert False",
         ["([0, 2],)", "([0],)"]),
    Case("expr_assert_after_shared_raise", "def f(s):\n    assert isinstance(s, int)\n    assert 0 <= s < 24\n"
         "    return s", ["(3,)", "(30,)", "('a',)"]),
    Case("expr_unpack_then_chain", "def f(g):\n    i, j, k = x = g()\n    return i, j, k, x", ["(lambda: (1, 2, 3),)"]),
    Case("expr_chain_then_unpack", "def f(h):\n    y = z = (m, *n) = h\n    p = (q, r) = h[:2]\n"
         "    return y, z, m, n, p, q, r", ["([1, 2, 3],)", "((4, 5),)"]),
    Case("expr_break_to_shared_tail", "def f(fmt, d):\n    if fmt is None:\n        for info in d:\n"
         "            if info > 2:\n                p = info\n                break\n        else:\n"
         "            raise KeyError(d)\n    else:\n        p = fmt\n    q = p + 1\n    return q * 2",
         ["(None, [1, 5])", "(None, [1])", "(7, [])"]),
    Case("expr_if_then_break", "def f(names, lookup):\n    for n in names:\n        v = lookup.get(n)\n"
         "        if v:\n            if n == 'L':\n                v = v.split(':')[0]\n            break\n"
         "    else:\n        v = 'C'\n    return v",
         ["(['A', 'L'], {'L': 'x:y'})", "(['A'], {'A': 'a'})", "(['B'], {})"]),
    Case("expr_break_else_raise", "def f(name, n):\n    parts = name.split('/')\n    for i in range(1, len(parts)):\n"
         "        head = '/'.join(parts[:i])\n        name = '/'.join(parts[i:])\n"
         "        if len(head) <= n and len(name) <= n:\n            break\n    else:\n"
         "        raise ValueError('too long')\n    return head, name",
         ["('ab/cd/ef', 5)", "('abcdef/g', 2)", "('a/b', 1)"]),
    Case("expr_dead_code_local", "def f(text, margin):\n    text = text.strip()\n    if 0 and margin:\n"
         "        for line in text.split():\n            assert line.startswith(margin)\n    return text",
         ["(' a b ', 'a')"]),
    Case("expr_unpack_repeated_target", "def f(url):\n    nil, netloc, nil, nil, nil = url.split('/')\n"
         "    return netloc, nil", ["('a/b/c/d/e',)"]),
    Case("expr_with_return_then_suppressed", "import contextlib\nclass N:\n    base = [3, 1]\n"
         "def f(self):\n    with contextlib.suppress(AttributeError):\n        return self.names\n"
         "    self.names = sorted(self.base)\n    return self.names", ["(N(),)"]),
    Case("expr_chain_then_more_tests", "def f(s, us):\n    if not (isinstance(s, int) and 0 <= s < 86400):\n"
         "        raise ValueError(s)\n    if not isinstance(us, int):\n        raise ValueError(s)\n    return s + us",
         ["(3, 4)", "(-1, 4)", "(3, 'x')", "(90000, 1)"]),
    Case("expr_chain_inside_and", "def f(a, b, c):\n    if a and 0 <= b < 10 and c:\n        return 1\n    return 2",
         ["(1, 5, 1)", "(1, 50, 1)", "(0, 5, 1)", "(1, 5, 0)"]),
    Case("expr_if_around_try_test", "def f(flag, entries, ign):\n    out = []\n    for entry in entries:\n"
         "        if flag:\n            try:\n                if not entry.real:\n                    continue\n"
         "            except AttributeError as e:\n                if not ign(e):\n                    raise\n"
         "                continue\n        out.append(entry)\n    return out",
         ["(1, [1, 0, 'a'], bool)", "(0, [1, 0], bool)", "(1, ['a'], lambda e: 0)"]),
    Case("expr_return_from_nested_loops", "def f(rows, log):\n    for row in rows:\n        for x in row:\n"
         "            if x > 2:\n                log.append(x)\n                return\n            log.append(-x)\n"
         "    log.append(0)\n    return log", ["([[1], [2, 3, 4]], [])", "([[1]], [])"]),
    Case("expr_bare_return_from_nested_loops", "def f(rows, log):\n    for row in rows:\n        for x in row:\n"
         "            if x > 2:\n                return\n            log.append(-x)\n    log.append(0)",
         ["([[1], [2, 3, 4]], [])", "([[1]], [])"]),
    Case("expr_nested_for_else_return", "def f(attrs, mro):\n    for attr in attrs:\n        for base in mro:\n"
         "            if attr in base:\n                if base[attr] is None:\n                    return 'none'\n"
         "                break\n            if attr > 'm':\n                break\n        else:\n"
         "            return 'missing'\n    return True",
         ["(['a'], [{'a': 1}])", "(['a'], [{'a': None}])", "(['a', 'b'], [{'a': 1}])", "(['z'], [{}])"]),
    # Chained assignment with tuple targets: one value, unpacked for each in turn.
    Case("expr_chained_tuple_targets",
         "def f():\n    abc = a, b, c = x, y, z = xyz = 1, 2, (3, 4)\n    return abc, a, b, c, x, y, z, xyz"),
    Case("expr_chained_nested_tuple_targets",
         "def f(v):\n    (b, c) = (d, e) = a = v\n    g = (h, i) = j = (k, l) = v\n    return a, b, c, d, e, g, h, i, j, k, l",
         ["((1, 2),)"]),
    # A dict literal unpacked into a call: its keys need not be keyword names.
    Case("expr_call_unpacked_dict_literal",
         "def g(*a, **k):\n    return a, sorted(k.items())\n"
         "def f(name, x):\n    return (g(1, **{'2': 2}), g(**{'\"': 'quote'}), g(**{name: x}), g(*name, **{'a': 1}), g(*name, a=1),"
         " g(**{'a': 1}, **{'b': 2}), g(x, **{'if': 1}))",
         ["('n', 3)"]),
    # More keywords than the stack holds at once (3.10+ builds them into a dict), on a plain
    # call and on an attribute of an imported module (3.11+: not a method call).
    Case("expr_call_many_keywords",
         "import types as t\n"
         "def g(**k):\n    return sorted(k.items())\n"
         "def f(c, x):\n"
         "    return (g(k0=x, k1=x, k2=x, k3=None if c else x, k4=x, k5=x, k6=x, k7=x, k8=x, k9=x, k10=x, k11=x, k12=x, k13=x, k14=x, k15=x),\n"
         "            t.SimpleNamespace(k0=x, k1=x, k2=x, k3=None if c else x, k4=x, k5=x, k6=x, k7=x, k8=x, k9=x, k10=x, k11=x, k12=x, k13=x, k14=x, k15=x).k3)",
         ["(True, 1)", "(False, 2)"]),
    # A conditional value formatted in a returned f-string: 3.12+ copies the formatting
    # and the return into both arms.
    Case("expr_fstring_conditional_field_returned",
         "def f(s, d):\n    return f'{s}: {d.real if d else \"#\"} {d if d else 1}'",
         ["('a', 2)", "('b', 0)"]),
    Case("expr_call_bytes_key_dict", "def f():\n    return str('x', **{b'foo': 1})"),
    # An f-string without fields is no docstring (the compiler keeps its value).
    Case("expr_fstring_first_statement",
         "def f(a):\n    f\'\'\'Not a docstring\'\'\'\n    f'{a}'\n    return f.__doc__, a", ["(1,)"]),
    # A guard that is always false drops the case's body; one always true leaves no test.
    Case("expr_match_constant_guards",
         "def f(p):\n    match p:\n        case 0 if False:\n            x = 1\n        case 0 if True:\n            x = 2\n"
         "        case _:\n            x = 3\n    return x", ["(0,)", "(1,)"], since=(3, 10)),
    Case("expr_match_false_guard_then_more",
         "def f():\n    match 0:\n        case 0 if False:\n            x = 1\n        case 0 if True:\n            x = 2\n"
         "    return x", since=(3, 10)),
    # A first ``case _ if guard:`` whose guard jumps on when true to the next case.
    Case("expr_match_negated_wildcard_guard_first",
         "def f(p, ok):\n    match g(p):\n        case _ if not ok:\n            return False\n        case [x]:\n"
         "            return x\n    return True\ndef g(p):\n    return p", ["([1], 0)", "([1], 1)", "(2, 1)"], since=(3, 10)),
    # The same with a stored subject: 3.10-3.11 copy it for the ``case _`` and pop the copy.
    Case("expr_match_stored_subject_wildcard_guard_first",
         "def f(arg):\n    match inferred := g(arg):\n        case _ if not inferred:\n            return False\n"
         "        case int():\n            return inferred + 1\n    return True\ndef g(p):\n    return p",
         ["(0,)", "(2,)", "('a',)"], since=(3, 10)),
    # A negated ``in``/``is`` test inside ``and``/``or`` keeps its operator.
    Case("expr_negated_membership_chain",
         "def f(a, n, d):\n    if not (a and n in d):\n        return False\n    if not (a is None or d is n):\n"
         "        return 1\n    return [x for x in d if not (x and x in n)]",
         ["(1, 'k', {'k': 1})", "(0, 'k', {})", "(1, 'q', {'k': 1})", "(None, 2, [1, 2])"]),
    Case("expr_identity_assert_and_pass_arm",
         "def f(s, t, u):\n    assert s is not t\n    assert s in (1, 2), 'no'\n    if s is u:\n        pass\n    else:\n"
         "        t = 0\n    return t", ["(1, 5, 1)", "(2, 5, 1)", "(3, 5, 3)", "(1, 1, 1)"]),
    # ``import a.b.c as d`` takes each attribute in turn.
    Case("expr_import_dotted_as",
         "def f():\n    import os.path as p\n    import xml.etree.ElementTree as ET\n    import xml.dom.minidom as m, json as j\n"
         "    return p.sep, ET.__name__, m.__name__, j.__name__"),
    Case("expr_walrus_as_middle_of_chained_comparison",
         "def f(k, n):\n    if not 1 <= k < n or not 0 < (p := k / (n - k)) < 1:\n        return None\n    return p",
         ["(1, 4)", "(3, 4)", "(0, 4)", "(1, 1)"]),
    # A test whose operand holds a conditional value of its own folds into the chain.
    Case("expr_test_operand_holds_or",
         "def f(xs, a):\n    out = []\n    for x in xs:\n        if len(x or ()) or g(a or ()):\n            out.append(x)\n"
         "    return out\ndef g(v):\n    return len(v) > 1",
         ["([[1], [], None], [1, 2])", "([[], None], None)", "([], [1])"]),
    Case("expr_test_operands_hold_values",
         "def f(a, x, c, y, z):\n    if a and len(x if c else ()) and max(y or (0,), z and (1,) or (2,)):\n        return 1\n"
         "    return [v for v in (a, x) if v or len(y or ())]",
         ["(1, [1], 1, (3,), 1)", "(0, [1], 1, (), 0)", "(1, [], 0, (), 1)", "(1, [1], 0, None, 0)"]),
    Case("expr_while_test_operand_holds_or",
         "def f(a, b):\n    n = 0\n    while a and len(b or ()) > n:\n        n += 1\n    return n",
         ["(1, [1, 2])", "(0, [1])", "(1, None)"]),
    # A returned conditional value inside a with or try statement meets where the statement's
    # clean-up starts, outside the region.
    Case("expr_return_conditional_value_in_with_in_loop",
         "class CM:\n    def __init__(self, log):\n        self.log = log\n    def __enter__(self):\n        return self\n"
         "    def __exit__(self, *exc):\n        self.log.append('exit')\n        return False\n"
         "def f(xs, log):\n    for x in xs:\n        with CM(log):\n            return x if x else 0\n    return log\n",
         ["([3], [])", "([0], [])", "([], [])"]),
    Case("expr_return_conditional_value_in_try_finally",
         "def f(a, log):\n    try:\n        return len(a) if a else a\n    finally:\n        log.append(1)",
         ["([1], [])", "([], [])", "(None, [])"]),
    # Chained comparisons as operands of and/or, in tests, values, loops and filters: their
    # clean-up (pop the middle operand kept for the next comparison) sits between the tests.
    Case('expr_chained_comparisons_in_and_of_ors',
         'def f(lo, hi, a, b):\n    return (lo is None or a <= lo <= b) and (hi is None or a <= hi <= b)',
         ['(None, None, 0, 5)', '(1, 7, 0, 5)', '(3, None, 0, 5)', '(None, 9, 0, 5)', '(-1, 2, 0, 5)']),
    Case('expr_chained_comparison_returned_after_and',
         'def f(x, a, b, y):\n    return y and a <= x <= b',
         ['(3, 1, 5, 0)', '(0, 1, 5, [])', '(7, 1, 5, 2)', "(2, 3, 1, 'a')", '(4, 0, 9, [0, 2, 0])']),
    Case('expr_chained_comparison_returned_after_or',
         'def f(x, a, b, y):\n    return y or a < x < b < 9',
         ['(3, 1, 5, 0)', '(0, 1, 5, [])', '(7, 1, 5, 2)', "(2, 3, 1, 'a')", '(4, 0, 9, [0, 2, 0])']),
    Case('expr_chained_comparison_in_or_operand_of_and',
         'def f(x, a, b, y):\n    return (x or a <= x <= b) and y',
         ['(3, 1, 5, 0)', '(0, 1, 5, [])', '(7, 1, 5, 2)', "(2, 3, 1, 'a')", '(4, 0, 9, [0, 2, 0])']),
    Case('expr_while_chained_comparison',
         'def f(x, a, b):\n    while a < x < b:\n        x = x * 2 + 1\n    return x',
         ['(1, 0, 50)', '(0, 0, 9)', '(60, 0, 50)']),
    Case('expr_comprehension_filter_or_chained_comparison',
         'def f(x, a, b, y):\n    return [z for z in y if z or a < x < b], [z for z in y if a < z < b or z > 8]',
         ['(3, 1, 5, [0, 2, 9, 4])', '(0, 1, 5, [1, 0, 3])', '(7, 1, 5, [])', '(2, 1, 5, [0, 0])']),
    Case('expr_if_or_chained_comparison_in_loop',
         'def f(x, a, b, y):\n    out = []\n    for z in y:\n        if z or a < x < b:\n            out.append(z)\n    return out',
         ['(3, 1, 5, [0, 2, 9, 4])', '(0, 1, 5, [1, 0, 3])', '(7, 1, 5, [])', '(2, 1, 5, [0, 0])']),
    Case('expr_comprehension_filter_long_chain_or',
         'def f(a, b, c, y, w):\n    return [z for z in y if a < z < b < c or w]',
         ['(1, 5, 9, [0, 2, 6, 7], 0)', '(1, 5, 9, [0, 2, 6, 7], 1)', '(1, 5, 3, [2], 0)', '(0, 0, 0, [], 0)']),
    Case('expr_while_chained_comparison_and',
         'def f(x, a, b, y):\n    while a <= x <= b and y is None:\n        x = x * 2 + 1\n    return x',
         ['(1, 0, 50, None)', '(1, 0, 50, 1)', '(60, 0, 50, None)']),
    Case('expr_while_chained_comparison_or',
         'def f(x, a, b, y):\n    while a <= x <= b or y is None:\n        x = x * 2 + 1\n        y = x if x > 40 else y\n    return x',
         ['(1, 0, 50, None)', '(1, 0, 50, 1)', '(60, 0, 50, 1)', '(60, 0, 50, None)']),
]
