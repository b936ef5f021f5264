"""Loop exits through try statements: every combination, decompiled and run.

Builds small functions from every combination of a loop (``for``, ``while True``, ``while n``,
``while len(log) < n``), a statement in its body (try/except, try/except as, try/finally,
try/except/finally, try/except/else, with), where an exit sits in it (body, except clause,
else clause, finally body), which exit (``break``, ``continue``, ``return x``, ``return``,
``raise``), behind an ``if`` or not, with or without code after the exit, after the statement
and after the loop (the last three drawn with a fixed seed). Each function is decompiled,
recompiled and run on five argument sets (the result or exception and the log must match),
and compared instruction for instruction with its own source (`identical.first_difference`).

    PYTHONPATH=src:. python benchmarks/loop_exits.py [--show=refused|equivalent|wrong] [--only=NAME_PART]

Prints one line: the interpreter, then how many functions were identical, equivalent,
refused and wrong (run under Pyodide with benchmarks/pyodide_run.mjs for 3.14).
"""
import ast
import itertools
import os
import random
import signal
import sys
import warnings

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import identical  # noqa: E402
from framescope import DecompilationError, decompile  # noqa: E402

CM = ("class CM:\n"
      "    def __init__(self, log):\n        self.log = log\n"
      "    def __enter__(self):\n        self.log.append('enter')\n        return self\n"
      "    def __exit__(self, *exc):\n        self.log.append('exit')\n"
      "        return exc[0] is ZeroDivisionError\n")

LOOPS = {
    "for": ("for x in xs:", []),
    "whiletrue": ("while True:", ["x = xs.pop()"]),
    "whilen": ("while n:", ["n -= 1", "x = xs.pop()"]),
    "whilelen": ("while len(log) < n:", ["x = xs.pop()"]),
}
EXITS = {
    "break": "break",
    "continue": "continue",
    "retval": "return x",
    "retnone": "return",
    "raise": "raise ValueError(x)",
}
#: Statement kind -> the places an exit can sit in it.
STATEMENTS = {
    "exc": ["body", "handler"],
    "excas": ["body", "handler"],
    "fin": ["body", "final"],
    "excfin": ["body", "handler", "final"],
    "excelse": ["body", "handler", "else"],
    "with": ["body"],
}
CALLS = ["([1, 3, 0, 5, 2], [], 3)", "([0, 4], [], 2)", "([], [], 1)", "([3, 0, 0, 1], [], 9)",
         "([2, 1], [], 5)"]


def block(default, where, place, exit_stmt, guard, after_exit):
    """The statements of one clause: its default action, with the exit placed in it when it sits here."""
    lines = [default]
    if where != place:
        return lines
    if guard:
        lines += ["if x > 2:", "    " + exit_stmt]
        if after_exit:
            lines.append("log.append('a')")
    else:
        lines.append(exit_stmt)
    return lines


def indent(lines, n=1):
    return ["    " * n + l for l in lines]


def statement(kind, place, exit_stmt, guard, after_exit):
    b = lambda default, where: block(default, where, place, exit_stmt, guard, after_exit)
    body = b("log.append(10 // x)", "body")
    if kind == "with":
        return ["with CM(log):"] + indent(body)
    out = ["try:"] + indent(body)
    if kind in ("exc", "excfin", "excelse"):
        out += ["except ZeroDivisionError:"] + indent(b("log.append('h')", "handler"))
    if kind == "excas":
        out += ["except ZeroDivisionError as e:"] + indent(b("log.append(type(e).__name__)", "handler"))
    if kind == "excelse":
        out += ["else:"] + indent(b("log.append('e')", "else"))
    if kind in ("fin", "excfin"):
        out += ["finally:"] + indent(b("log.append('f')", "final"))
    return out


def functions():
    rng = random.Random(0)
    for loop, stmt, exit_name, guard in itertools.product(LOOPS, STATEMENTS, EXITS, (False, True)):
        for place in STATEMENTS[stmt]:
            after_exit = guard and rng.random() < 0.5
            after_stmt = rng.random() < 0.5
            after_loop = rng.random() < 0.5
            head, pre = LOOPS[loop]
            body = pre + statement(stmt, place, EXITS[exit_name], guard, after_exit)
            if after_stmt:
                body.append("log.append('s')")
            lines = ["def f(xs, log, n):", "    " + head] + indent(body, 2)
            if after_loop:
                lines += ["    log.append('end')", "    return log"]
            name = "_".join([loop, stmt, place, exit_name, "if" if guard else "plain",
                             "A" if after_exit else "", "S" if after_stmt else "", "L" if after_loop else ""])
            yield name, "\n".join(lines) + "\n" + CM


class Timeout(BaseException):
    pass


def _alarm(signum, frame):
    raise Timeout()


def outcome(func, call, namespace):
    args = eval(call, namespace)
    log = args[1]
    timer = getattr(signal, "setitimer", None)  # none under Pyodide: no guard there
    if timer is not None:
        signal.signal(signal.SIGALRM, _alarm)
        timer(signal.ITIMER_REAL, 1.0)
    try:
        try:
            result = ("value", func(*args))
        except Exception as err:
            result = ("raises", type(err).__name__)
        finally:
            if timer is not None:
                timer(signal.ITIMER_REAL, 0)
    except Timeout:
        return ("timeout",)
    return result + (list(log),)


def load(source):
    ns = {"__name__": "probe"}
    exec(compile(source, "<probe>", "exec"), ns)
    return ns


def classify(name, source):
    original = load(source)
    try:
        text = decompile(original["f"], machine=False)
    except DecompilationError as err:
        return ("internal" if err.internal else "refused"), str(err).splitlines()[0][:150]
    except Exception as err:
        return "wrong", "crash %s: %s" % (type(err).__name__, err)
    try:
        rebuilt = load(text + "\n" + CM)
    except SyntaxError as err:
        return "wrong", "syntax: %s\n%s" % (err, text)
    for call in CALLS:
        a = outcome(original["f"], call, original)
        b = outcome(rebuilt["f"], call, rebuilt)
        if a != b:
            return "wrong", "%s: %r != %r\n%s" % (call, a, b, text)
    reference_source = ast.unparse(ast.parse(source)) if hasattr(ast, "unparse") else source
    reference = load(reference_source)["f"].__code__
    diff = identical.first_difference(reference, rebuilt["f"].__code__)
    if diff is None:
        return "identical", ""
    return "equivalent", "%s\n%s" % (diff.detail, text)


def main():
    show = set(a.split("=", 1)[1] for a in sys.argv[1:] if a.startswith("--show="))
    only = [a.split("=", 1)[1] for a in sys.argv[1:] if a.startswith("--only=")]
    counts = dict.fromkeys(["functions", "identical", "equivalent", "refused", "internal", "wrong"], 0)
    for name, source in functions():
        if only and not any(o in name for o in only):
            continue
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", SyntaxWarning)  # 3.14: exits in finally bodies
            kind, detail = classify(name, source)
        counts["functions"] += 1
        counts[kind] += 1
        if kind in show:
            print("==== %s %s: %s\n%s" % (name, kind, detail, source))
    v = "%d.%d" % sys.version_info[:2]
    print(v, " ".join("%s=%d" % kv for kv in counts.items()))


if __name__ == "__main__":
    main()
