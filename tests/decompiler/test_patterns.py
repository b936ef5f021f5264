"""Match statements (3.10+): patterns read back from their bytecode, readable and equivalent."""
import random
import sys
import textwrap

import pytest

from framescope import DecompilationError, decompile
from framescope.decompiler.frontend.opcodes import canonical_instructions

pytestmark = pytest.mark.skipif(sys.version_info < (3, 10), reason="match statements are new in 3.10")


def define(source: str, name: str = "f", namespace: dict = None):
    namespace = {} if namespace is None else namespace
    exec(compile(textwrap.dedent(source), "<test>", "exec"), namespace)
    return namespace[name]


#: Functions whose decompiled text is their source, on every interpreter.
SOURCES = [
    '''\
def f(p):
    match p:
        case 0 | 1:
            return 'bit'
        case None:
            return 'none'
        case 'a' | 'b' as letter:
            return letter
        case -1.5 | 2j | b'x':
            return 'odd'
    return 'other'
''',
    '''\
def f(p):
    match p:
        case []:
            kind = 'empty'
        case [x]:
            kind = x
        case [first, *_, last] if first == last:
            kind = 'same ends'
        case [x, *rest]:
            kind = x, rest
        case {'k': 1, 'v': v}:
            kind = v
        case {'k': [x, y], **others}:
            kind = x, y, others
        case Point(x=0, y=0):
            kind = 'origin'
        case Point(0, yy) | Point(x=yy, y=0):
            kind = yy
        case str() | bytes():
            kind = 'text'
        case _:
            kind = None
    return kind
''',
    '''\
def f(events):
    seen = []
    for event in events:
        match event:
            case {'type': 'stop'}:
                break
            case {'type': 'skip'}:
                continue
            case {'type': kind, 'value': value} if value > 0:
                seen.append((kind, value))
            case _:
                seen.append(None)
        seen.append(';')
    return seen
''',
    '''\
def f(t):
    match t:
        case Node('+', [Node('lit', [a]), Node('lit', [b])]):
            return a + b
        case Node(op='-' | '~' as op, args=[{'v': v}]):
            return op, v
        case [Node(), *rest] if len(rest) > 1:
            return len(rest)
    return 'no match'
''',
    '''\
def f(msg):
    match msg:
        case {'message': str(), 'type': str()}:
            pass
        case {'completions': list(completions)} if all(isinstance(c, str) for c in completions):
            pass
        case _:
            raise AssertionError(f'bad message {msg}')
''',
    '''\
def f(p):
    match n := len(p):
        case 0:
            return 'empty'
        case 1 | 2:
            return n
    return -n
''',
]


@pytest.mark.parametrize("source", SOURCES, ids=["literals", "kinds", "loop", "nested", "ends_function", "walrus"])
def test_output_is_the_source_back(source):
    assert decompile(define(source)) + "\n" == source


@pytest.mark.parametrize("source", [
    "def f(x):\n    a = b = x\n    if a:\n        return b\n    return a",
    "def f(xs):\n    if (n := len(xs)) == 1:\n        return n\n    return -n",
    "def f(p):\n    x = p\n    if x > 0:\n        return x\n    return 0",
])
def test_code_that_compiles_like_a_match_stays_plain(source):
    assert decompile(define(source)) == source


def test_single_irrefutable_case_with_a_guard_reads_as_assignment_and_if():
    source = "def f(p):\n    match p:\n        case x if x > 0:\n            return x\n    return 0"
    assert decompile(define(source)) == "def f(p):\n    x = p\n    if x > 0:\n        return x\n    return 0"


def test_match_at_module_level_and_in_a_class_body():
    module = compile("match cmd.split():\n    case [verb]:\n        print(verb)\n    case [verb, obj] if obj:\n"
                     "        print(verb, obj)\n    case _:\n        print('?')\nprint('done')", "<test>", "exec")
    assert decompile(module) == ("match cmd.split():\n    case [verb]:\n        print(verb)\n"
                                 "    case [verb, obj] if obj:\n        print(verb, obj)\n    case _:\n"
                                 "        print('?')\nprint('done')")
    klass = compile("class K:\n    match mode:\n        case 'fast' | 'quick' as speed:\n            delay = 0\n"
                    "        case {'delay': delay}:\n            pass", "<test>", "exec")
    assert "case 'fast' | 'quick' as speed:" in decompile(klass)


def test_match_results_are_one_value_tested_for_none_on_every_version():
    # 3.10 pushes a success flag over MATCH_CLASS's and MATCH_KEYS's result; the canonical
    # instructions test a copy of the result for None, as 3.11+ does.
    f = define("def f(p):\n    match p:\n        case {'k': int(n)}:\n            return n")
    ops = [ins.op for ins in canonical_instructions(f.__code__)]
    for name in ("MATCH_KEYS", "MATCH_CLASS"):
        at = ops.index(name)
        assert ops[at + 1] == "COPY" and "POP_JUMP_IF_NONE" in ops[at + 2:at + 5]


# -- generated match statements -------------------------------------------------------------------
class Point:
    __match_args__ = ("x", "y")

    def __init__(self, x, y):
        self.x, self.y = x, y


class Names:
    A, B = 1, "b"


INPUTS = [None, 0, 1, "s", 1.5, (), [1, 2], (0, [1]), {"k": 1}, {"a": 2, "k": [0, 1]}, Point(1, 0), Point(0, "b")]


def pattern(r: random.Random, depth: int, names: list) -> str:
    kinds = ["value", "value", "capture", "wild", "seq", "map", "cls", "or", "as"] if depth < 2 else ["value", "wild"]
    kind = r.choice(kinds)
    if kind == "value":
        return r.choice(["0", "1", "'s'", "-2", "1.5", "None", "True", "C.A", "C.B"])
    if kind in ("capture", "as"):
        name = "v%d" % len(names)
        names.append(name)
        return name if kind == "capture" else "(%s) as %s" % (pattern(r, depth + 1, names), name)
    if kind == "seq":
        items = [pattern(r, depth + 1, names) for _ in range(r.randint(0, 2))]
        if r.random() < 0.4:
            items.insert(r.randint(0, len(items)), r.choice(["*_", "*rest%d" % len(names)]))
        return "[%s]" % ", ".join(items)
    if kind == "map":
        keys = r.sample(["'a'", "'k'", "1", "C.A"], r.randint(0, 2))
        rest = [] if r.random() < 0.7 else ["**more%d" % len(names)]
        return "{%s}" % ", ".join(["%s: %s" % (k, pattern(r, depth + 1, names)) for k in keys] + rest)
    if kind == "cls":
        args = [pattern(r, depth + 1, names) for _ in range(r.randint(0, 1))]
        args += ["y=%s" % pattern(r, depth + 1, names)] if r.random() < 0.5 else []
        return "%s(%s)" % (r.choice(["Point", "int", "str"]) if not args else "Point", ", ".join(args))
    if kind == "or":
        return " | ".join("(%s)" % pattern(r, depth + 1, []) for _ in range(r.randint(2, 3)))
    return "_"


def program(r: random.Random) -> str:
    loop = r.random() < 0.4
    pad = "        " if loop else "    "
    lines = ["def f(p, q):", "    out = []"] + (["    for _ in range(2):"] if loop else [])
    lines.append(pad + "match %s:" % r.choice(["p", "p, q", "[p]"]))
    for index in range(r.randint(1, 4)):
        names: list = []
        text = pattern(r, 0, names)
        guard = " if q" if r.random() < 0.25 or (text in ("_",) + tuple(names) and index == 0) else ""
        lines.append(pad + "    case %s%s:" % (text, guard))
        body = r.choice(["out.append(%s)" % (names[0] if names else index), "return %d" % index, "x = %d" % index]
                        + (["break", "continue"] if loop else []))
        lines.append(pad + "        " + body)
    lines.append(pad + "out.append(-1)")
    lines.append("    return out")
    return "\n".join(lines)


def outcome(func, *args):
    try:
        return "value", func(*args)
    except Exception as err:
        return "raises", type(err)


def test_generated_match_statements_decompile_to_what_they_do():
    r = random.Random(2024)
    tried = refused = 0
    for _ in range(250):
        source = program(r)
        namespace = {"Point": Point, "C": Names}
        try:
            original = define(source, namespace=namespace)
        except SyntaxError:
            continue  # e.g. a capture that makes the next cases unreachable
        tried += 1
        try:
            text = decompile(original)  # raises unless the output recompiles equivalently
        except DecompilationError as err:
            assert "\n" not in str(err)
            refused += 1
            continue
        rebuilt = define(text, namespace={"Point": Point, "C": Names})
        for p in INPUTS:
            assert outcome(rebuilt, p, p) == outcome(original, p, p), (source, text, p)
    assert tried > 150
    assert refused <= tried // 50, "%d of %d generated match statements refused" % (refused, tried)
