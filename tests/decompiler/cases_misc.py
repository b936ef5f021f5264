"""Round-trip cases for loop exits and loop tests that span several blocks."""
from typing import List

from tests.decompiler.cases import Case

CASES: List[Case] = [
    # Two arms each run code and then break out of an inner ``while True``: the break target
    # is where the arms meet, not the first arm.
    Case("misc_inner_loop_arms_break",
         "def f(a):\n    starts = []\n    while True:\n        line = a.pop() if a else None\n"
         "        if line == 1:\n            starts.append(line)\n            while True:\n"
         "                line = a.pop() if a else None\n                if line == 2:\n"
         "                    starts.append(0)\n                    break\n                elif not line:\n"
         "                    starts.append(1)\n                    break\n        elif not line:\n"
         "            break\n    return starts",
         ["([0, 2, 5, 1],)", "([0, 1],)", "([3, 0],)", "([],)"]),
    # A plain break and an arm with an ``if`` of its own that ends in break.
    Case("misc_break_arm_with_if",
         "def f(src, out):\n    while True:\n        this = src.pop() if src else None\n"
         "        if this is None:\n            break\n        if this == \"[\":\n            items = []\n"
         "            while True:\n                this = src.pop() if src else None\n"
         "                if this is None:\n                    raise ValueError(\"unterminated\")\n"
         "                if this == \"]\" and items:\n                    break\n"
         "                code = this\n                if src and src[-1] == \"-\":\n"
         "                    src.pop()\n                    that = src.pop() if src else None\n"
         "                    if that is None:\n                        raise ValueError(\"bad\")\n"
         "                    if that == \"]\":\n                        if code == \"x\":\n"
         "                            code = \"y\"\n                        items.append(code)\n"
         "                        items.append(\"-\")\n                        break\n"
         "                    items.append((code, that))\n                else:\n"
         "                    items.append(code)\n            out.append(items)\n        else:\n"
         "            out.append(this)\n    return out",
         ["(list(reversed('ab[cd]e')), [])", "(list(reversed('[a-]x[x-]')), [])", "(list(reversed('[a-b]]')), [])",
          "(list(reversed('[a')), [])", "(list(reversed('[a-')), [])", "([], [])"]),
    # ``while`` tests made of several jumps: 3.10+ copies them to the end of the body.
    Case("misc_while_compound_test",
         "def f(y, M, L=8):\n    R = 0\n    while R <= L and y >= M or R > L and y >= M:\n"
         "        y = y // 2\n        R += 1\n    return R, y",
         ["(1000, 3)", "(1, 3)", "(10 ** 6, 7, 2)"]),
    Case("misc_while_test_with_walrus",
         "def f(s, i):\n    j = i + 1\n    while i < len(s) and ((ch := s[i]).isspace() or ch in ')#'):\n"
         "        i += 1\n        j += 1\n    return i, j",
         ["('a  )# b', 1)", "('abc', 0)", "('   ', 0)"]),
    Case("misc_while_not_or",
         "def f(a, n):\n    while not a or a[-1] < n and len(a) < 9:\n        a.append(len(a))\n"
         "        if a[-1] == 7:\n            continue\n    return a",
         ["([], 5)", "([3], 1)", "([0], 20)"]),
    # 3.11+ copies the end of a statement into both arms of a conditional expression inside
    # it; values computed before the test show it belongs inside the statement.
    Case("misc_return_tuple_conditional",
         "def f(user):\n    user, delim, passwd = user.partition(':')\n    return user, (passwd if delim else None)",
         ["('a:b',)", "('ab',)"]),
    Case("misc_call_conditional_at_end",
         "def f(obj, out, proto):\n    if proto >= 2:\n        out.append('T' if obj else 'F')\n    else:\n"
         "        out.append(1 if obj else 0)",
         ["(True, [], 2)", "(0, [], 3)", "(1, [], 0)", "(None, [], 1)"]),
    Case("misc_raise_keyword_conditional",
         "def f(a, b, c):\n    if a is None:\n        return\n"
         "    raise KeyError(a, dict(output=b if b else None, err=c if c else None))",
         ["(None, 1, 2)", "(1, 2, 0)", "(1, 0, 3)"]),
    Case("misc_slice_conditional_bound",
         "def f(s):\n    m = s.find('#')\n    return s[:m if m >= 0 else None].strip()",
         ["('ab # c',)", "(' abc ',)"]),
    # ``if (x if c else y)`` inside a comprehension, whose element cannot be written twice.
    Case("misc_comprehension_conditional_test",
         "def f(xs):\n    return [x for x in xs if (x[0] if x[1] is None else x[1])]",
         ["([(1, None), (0, None), (0, 2), (1, 0)],)"]),
    # 3.11 compiles ``%`` formatting like an f-string; a backslash in a field has to stay ``%``.
    Case("misc_percent_format_backslash_field",
         "def f(name, xs):\n    return '%r member 100%% mismatch:\\n      %s' % (name, '\\n      '.join(xs))",
         ["('a', ['b', 'c'])", "(1, [])"]),
    # An if inside a try whose arms leave the try for the same place, one through a lone jump;
    # the code there starts another try statement, not a return to copy into the arm.
    Case("misc_try_arm_then_next_try",
         "def f(exc, name):\n    if isinstance(exc, KeyError):\n        try:\n            d = dir(exc)\n"
         "            if name[:1] != '_':\n                d = [x for x in d if x[:1] != '_']\n"
         "        except Exception:\n            return None\n    else:\n        d = []\n"
         "    try:\n        import json\n    except ImportError:\n        pass\n    else:\n"
         "        return len(d), json.dumps(name)\n    n = 0\n    for x in d:\n        n += len(x)\n    return n",
         ["(KeyError(), 'a')", "(KeyError(), '_a')", "(ValueError(), 'b')", "(KeyError(), None)"]),
    # A block that starts inside an expression (after ``post or None``) is no loop test of its own.
    Case("misc_while_test_value_inside",
         "def f(a, b):\n    post = 0\n    while a[:post or None] and b[:post or None] and a[post - 1] == b[post - 1]:\n"
         "        post -= 1\n    return post",
         ["('abc', 'xbc')", "('abc', 'abc')", "('', 'a')", "('ab', 'b')"]),
    # A return inside a with inside a loop: the arm that leaves the with is the exit, not the
    # arm that goes back to the loop.
    Case("misc_return_from_with_in_loop",
         "def f(self, line):\n    try:\n        buffer = line\n        if line is None:\n"
         "            with self.cm():\n                while self.g(buffer) is None:\n"
         "                    if self.raw:\n                        line = self.inp()\n"
         "                    else:\n                        line = self.readline()\n"
         "                        if not len(line):\n"
         "                            self.lastcmd = \"\"\n"
         "                            self.write('\\n')\n                            return\n"
         "                        else:\n                            line = line.rstrip()\n"
         "                    buffer += '\\n' + line\n        save = self.x\n"
         "        self.y = save\n    except:\n        self.err()"
         "\nclass S:\n    def __init__(self, lines, raw=False):\n"
         "        self.lines, self.raw, self.out = lines, raw, []\n"
         "    def cm(self):\n        import contextlib\n        return contextlib.nullcontext()\n"
         "    def g(self, b):\n        return b if b.count('\\n') >= 2 else None\n"
         "    def inp(self):\n        return self.lines.pop()\n    readline = inp\n"
         "    def write(self, t):\n        self.out.append(t)\n    def err(self):\n        self.out.append('err')\n"
         "    x = 5\n",
         ["(S(['b  ', 'a  ']), '')", "(S(['', 'a']), '')", "(S(['b', 'a'], True), '')", "(S([]), 'x')",
          "(S([]), None)"]),
    # Two copies of one finally body that go on differently: only one arm returns a value.
    Case("misc_return_value_through_finally",
         "def f(self, line):\n    try:\n        code, buffer, is_await = self.read(line)\n"
         "        if buffer is None:\n            return\n        save = self.x\n        try:\n"
         "            self.x = 1\n            if is_await:\n                self.aw(buffer)\n"
         "                return True\n            else:\n                if not self.ex(buffer):\n"
         "                    self.exe(code)\n        finally:\n            self.x = save\n"
         "    except:\n        self.err()\n"
         "class S:\n    x = 0\n    def __init__(self, r):\n        self.r = r\n"
         "    def read(self, line):\n        return self.r\n    def aw(self, b):\n        self.x = 2\n"
         "    def ex(self, b):\n        return b > 1\n    def exe(self, c):\n        self.x = c\n"
         "    def err(self):\n        self.x = -1",
         ["(S((1, None, 0)), '')", "(S((1, 2, 1)), '')", "(S((1, 0, 0)), '')", "(S(None), '')"]),
    # Arms that go round the loop again (continue, or raise) on some paths only still meet
    # where the code after the if starts.
    Case("misc_continue_arm_then_shared_code",
         "def f(src, verbose, out):\n    while True:\n        this = src.pop() if src else None\n"
         "        if this is None:\n            break\n        if this in '|)':\n            break\n"
         "        if verbose:\n            if this in ' \\t':\n                continue\n"
         "            if this == '#':\n                while True:\n"
         "                    this = src.pop() if src else None\n"
         "                    if this is None or this == '\\n':\n                        break\n"
         "                continue\n        if this[0] == '\\\\':\n            out.append(1)\n"
         "        elif this not in '[*':\n            out.append(2)\n        elif this == '[':\n"
         "            out.append(3)\n        else:\n            out.append(4)\n    return out",
         ["(list(reversed('ab# c\\nd\\\\e[f|g')), True, [])", "(list(reversed('a #b[')), False, [])",
          "(list(reversed(' # x')), True, [])"]),
    Case("misc_arms_meet_before_continue",
         "def f(items, out):\n    for this in items:\n        if this == '?':\n"
         "            lo, hi = 0, 1\n        elif this == '{':\n            if not out:\n"
         "                out.append('{')\n                continue\n            lo, hi = 2, 3\n"
         "        else:\n            raise ValueError(this)\n        out.append((lo, hi))\n"
         "    return out",
         ["(['?', '{', '{'], [])", "(['{', '?'], [])", "(['?', 'x'], [])"]),
    Case("misc_for_conditional_test",
         "def f(xs):\n    out = []\n    for x in xs:\n        if (x[0] if x[1] is None else x[1]):\n"
         "            out.append(x)\n    return out",
         ["([(1, None), (0, None), (0, 2), (1, 0)],)"]),
]
