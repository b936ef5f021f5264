"""Swap an instrumented code object in for a function's own, with a frame hook.

``instrument(fn)`` recompiles a function's source with one statement added at the top of its
body: a call that records the arguments. The hook's callback returns that code as a
GuardedCode whose guard only accepts non-negative widths, so calls with a negative width
reach the callback again and run the original code (RUN_ORIGINAL). The function object is
never touched: once the hook is gone, ``area`` is back to its own code.

A replacement must take the same arguments as the original; the last part shows the error
framescope raises for one that does not.

    python examples/evalframe_swap.py
"""
import ast
import inspect
import textwrap

from framescope import evalframe

RECORDED = []


def record(name, arguments):
    RECORDED.append((name, arguments))


def instrument(fn):
    """fn's code, recompiled with ``record(<name>, locals())`` as its first statement."""
    tree = ast.parse(textwrap.dedent(inspect.getsource(fn)))
    function = tree.body[0]
    probe = ast.parse("record(%r, dict(locals()))" % fn.__name__).body[0]
    function.body.insert(0, probe)
    module = compile(ast.fix_missing_locations(tree), fn.__code__.co_filename, "exec")
    # The function's code object is a constant of the module code that defines it.
    return next(c for c in module.co_consts if inspect.iscode(c) and c.co_name == fn.__name__)


def area(width, height):
    return width * height


def perimeter(width, height):
    return 2 * (width + height)


def swap_in(frame, cache_entries, frame_state):
    if frame.f_code is not area.__code__:
        return None
    if frame.f_locals["width"] < 0:
        return evalframe.RUN_ORIGINAL
    return evalframe.GuardedCode(
        code=instrument(area), guard=lambda f_locals: f_locals["width"] >= 0, text="width >= 0"
    )


def main():
    with evalframe.hook(swap_in):
        results = [area(2, 3), area(4, 5), area(-1, 5), perimeter(2, 3)]
        for entry in evalframe.cache_entries(area):
            print("cache entry of area: guard %r, made by %s" % (entry.text, entry.origin))
    print("results:", results)
    print("recorded by the instrumented code:", RECORDED)
    area(7, 7)
    print("after the hook, area(7, 7) is not recorded:", RECORDED[-1])

    with evalframe.hook(swap_in_wrong_code):
        try:
            area(1, 1)
        except ValueError as exc:
            print("a replacement with other arguments is refused:", exc)


def swap_in_wrong_code(frame, cache_entries, frame_state):
    if frame.f_code is not area.__code__:
        return None
    return evalframe.GuardedCode(code=record.__code__, guard=lambda f_locals: True)


if __name__ == "__main__":
    main()
