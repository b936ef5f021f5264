"""Round-trip cases for the defaults a function object shows in its signature: literals,
module globals (the same object, shared with the rebuilt function) and keyword-only ones.
Calls lean on the defaults, so a default left out or spelled wrong changes the result."""
from typing import List

from tests.decompiler.cases import Case

CASES: List[Case] = [
    Case("defaults_literals",
         "def f(a, b=-1, c=2.5, d='s', e=b'b', g=None, h=(1, (2, 'x')), i=[1, {'k': {3}}], j=frozenset({4}),"
         " k=1j, m=...):\n    return a, b, c, d, e, g, h, i, j, k, m",
         ["(0,)", "(0, 1, 2)"]),
    Case("defaults_module_globals",
         "TABLE = {'a': 1}\nSEEN = []\nMISSING = object()\n"
         "def f(key, table=TABLE, seen=SEEN, missing=MISSING, get=TABLE.get, size=len):\n"
         "    seen.append(key)\n    value = get(key, missing)\n"
         "    return value is missing, value if value is not missing else None, size(seen) > 0, seen is SEEN",
         ["('a',)", "('b',)"]),
    Case("defaults_keyword_only",
         "import re\nFLAGS = re.IGNORECASE\n"
         "def f(text, *, pattern='A', flags=FLAGS, count=0, sep=None, **kw):\n"
         "    return re.findall(pattern, text, flags), count, sep, kw",
         ["('aAb',)"]),
    Case("defaults_positional_only",
         "LIMIT = [10]\ndef f(a, b=2, /, c=LIMIT, *args, d=(), e=-1):\n    return a, b, c, c is LIMIT, args, d, e",
         ["(1,)", "(1, 3, [4], 5)"]),
]
