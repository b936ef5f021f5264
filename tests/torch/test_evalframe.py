"""framescope.evalframe on real torch: the frame hook, cache entries and the Dispatcher.

Every test that installs a hook runs in a fresh interpreter, so a hook left behind or a
crash inside torch's C code fails that test only.
"""
from __future__ import annotations

import ast
import json
import sys
import textwrap
import types
from pathlib import Path

import pytest

torch = pytest.importorskip("torch")

from framescope import evalframe, torch_internals  # noqa: E402

pytestmark = pytest.mark.torch

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples"

# Defined at the top of every hooked snippet.
HEADER = '''
import json
from framescope import evalframe, torch_internals

def f(x):
    return x + 1

def g(x):
    return x + 2

def report(**values):
    print("RESULT " + json.dumps(values))
'''


def run_hooked(run_python, body: str) -> dict:
    """Run HEADER + body in a fresh interpreter; return what it passed to report()."""
    done = run_python(HEADER + textwrap.dedent(body))
    lines = [line for line in done.stdout.splitlines() if line.startswith("RESULT ")]
    assert lines, "the snippet reported nothing; stdout:\n%s\nstderr:\n%s" % (done.stdout, done.stderr)
    return json.loads(lines[-1][len("RESULT ") :])


# --------------------------------------------------------------------------- the three seed behaviours

# What the call counter prints for f, g, f, g, f: the sequences of the original post.
SEED_OUTPUT = {
    "skip": """\
calling the 1-th function: __main__.f
the function has 0 cache entries now.
calling the 2-th function: __main__.g
the function has 0 cache entries now.
""",
    "hit": """\
calling the 1-th function: __main__.f
the function has 0 cache entries now.
calling the 2-th function: __main__.g
the function has 0 cache entries now.
guard called with 1 args.
guard called with 1 args.
guard called with 1 args.
""",
    "miss": """\
calling the 1-th function: __main__.f
the function has 0 cache entries now.
calling the 2-th function: __main__.g
the function has 0 cache entries now.
guard called with 1 args.
calling the 3-th function: __main__.f
the function has 1 cache entries now.
number of caches in the last call: 0
guard called with 1 args.
calling the 4-th function: __main__.g
the function has 1 cache entries now.
number of caches in the last call: 0
guard called with 1 args.
guard called with 1 args.
calling the 5-th function: __main__.f
the function has 2 cache entries now.
number of caches in the last call: 0
""",
}
SEED_COUNTS = {
    "skip": "callback calls: 2, guard calls: 0, cache sizes seen: [0, 0]",
    "hit": "callback calls: 2, guard calls: 3, cache sizes seen: [0, 0]",
    "miss": "callback calls: 5, guard calls: 4, cache sizes seen: [0, 0, 1, 1, 2]",
}


def run_counter(run_python, *modes: str) -> str:
    path = str(EXAMPLES / "evalframe_counter.py")
    code = "import runpy, sys\nsys.argv = [%r] + %r\nrunpy.run_path(%r, run_name='__main__')" % (
        path,
        list(modes),
        path,
    )
    return run_python(code).stdout


@pytest.mark.needs_subprocess
@pytest.mark.parametrize("mode", ["skip", "hit", "miss"])
def test_counter_example_prints_the_seed_sequences(run_python, mode):
    expected = "== always %s\n%s%s\n" % (mode, SEED_OUTPUT[mode], SEED_COUNTS[mode])
    assert run_counter(run_python, mode) == expected


@pytest.mark.needs_subprocess
def test_counter_modes_in_one_process_do_not_leak(run_python):
    # Each hook undoes its skip marks and drops its entries on exit, so the same f and g
    # behave the same under the next hook.
    out = run_counter(run_python, "miss", "skip", "hit", "miss")
    assert [line for line in out.splitlines() if line.startswith("callback calls")] == [
        SEED_COUNTS["miss"],
        SEED_COUNTS["skip"],
        SEED_COUNTS["hit"],
        SEED_COUNTS["miss"],
    ]


# --------------------------------------------------------------------------- callback semantics


@pytest.mark.needs_subprocess
def test_frame_fields(run_python):
    result = run_hooked(
        run_python,
        """
        import builtins
        seen = []
        def callback(frame, entries, state):
            if frame.f_code is f.__code__:
                seen.append([frame.f_locals, frame.f_globals is globals(), frame.f_lineno,
                             frame.f_code.co_firstlineno, frame.f_builtins is builtins.__dict__])
            return evalframe.RUN_ORIGINAL
        with evalframe.hook(callback):
            f(41)
        report(seen=seen)
        """,
    )
    [[f_locals, same_globals, lineno, firstlineno, same_builtins]] = result["seen"]
    assert f_locals == {"x": 41}
    assert same_globals and same_builtins
    assert lineno == firstlineno


@pytest.mark.needs_subprocess
def test_run_original_calls_back_every_time(run_python):
    result = run_hooked(
        run_python,
        """
        names = []
        def callback(frame, entries, state):
            names.append(frame.f_code.co_name)
            return evalframe.RUN_ORIGINAL
        with evalframe.hook(callback):
            values = [f(1), f(2), g(3)]
        report(names=names, values=values)
        """,
    )
    assert result == {"names": ["f", "f", "g"], "values": [2, 3, 5]}


@pytest.mark.needs_subprocess
def test_guarded_code_replaces_and_guards_choose(run_python):
    result = run_hooked(
        run_python,
        """
        def double(x):
            return x * 2
        def negate(x):
            return -x
        calls, shown = [], []
        def callback(frame, entries, state):
            if frame.f_code is not f.__code__:
                return None
            x = frame.f_locals["x"]
            calls.append(x)
            shown.append([(e.text, e.origin, e.code.co_name) for e in entries])
            if x > 0:
                return evalframe.GuardedCode(double.__code__, lambda L: L["x"] > 0, "x > 0")
            return evalframe.GuardedCode(negate.__code__, lambda L: L["x"] < 0, "x < 0")
        with evalframe.hook(callback):
            values = [f(3), f(5), f(-4), f(-6), f(7), f(0)]
            listed = [(e.text, e.origin) for e in evalframe.cache_entries(f)]
        report(calls=calls, values=values, shown=shown, listed=listed,
               after=len(evalframe.cache_entries(f)), plain=f(3))
        """,
    )
    # The first call of each sign makes an entry and runs it; later calls of that sign hit
    # it; 0 passes neither guard, so the callback sees it (and installs an entry for it).
    assert result["calls"] == [3, -4, 0]
    assert result["values"] == [6, 10, 4, 6, 14, 0]
    double, negate = ["x > 0", "framescope", "double"], ["x < 0", "framescope", "negate"]
    assert result["shown"] == [[], [double], [double, negate]]
    # Listed in the order they are tried: newest or most recently used first.
    assert result["listed"] == [["x < 0", "framescope"], ["x > 0", "framescope"], ["x < 0", "framescope"]]
    assert result["after"] == 0 and result["plain"] == 4


@pytest.mark.needs_subprocess
def test_frame_state_persists_per_code_object(run_python):
    result = run_hooked(
        run_python,
        """
        snapshots = []
        def callback(frame, entries, state):
            snapshots.append([frame.f_code.co_name, dict(state)])
            state["calls"] = state.get("calls", 0) + 1
            state.setdefault("first_x", frame.f_locals["x"])
            return evalframe.RUN_ORIGINAL
        with evalframe.hook(callback):
            f(1); g(2); f(3); f(4); g(5)
        report(snapshots=snapshots)
        """,
    )
    assert result["snapshots"] == [
        ["f", {}],
        ["g", {}],
        ["f", {"calls": 1, "first_x": 1}],
        ["f", {"calls": 2, "first_x": 1}],
        ["g", {"calls": 1, "first_x": 2}],
    ]


@pytest.mark.needs_subprocess
def test_own_frames_and_guards_never_reach_the_callback(run_python):
    result = run_hooked(
        run_python,
        """
        import framescope, os
        package = os.path.dirname(framescope.__file__)
        files = set()
        def guard(f_locals):
            return f(0) > 100  # calls f: must not reach the callback
        def callback(frame, entries, state):
            files.add(frame.f_code.co_filename)
            if frame.f_code is f.__code__:
                f(1)  # nor may calls made by the callback itself
                return evalframe.GuardedCode(f.__code__, guard)
            return None
        with evalframe.hook(callback):
            f(1); f(2)
            evalframe.cache_entries(f)
            evalframe.render_guard(["L['x'] == 1"])
        report(own=sorted(name for name in files if name.startswith(package)), files=len(files))
        """,
    )
    assert result["own"] == []


@pytest.mark.needs_subprocess
def test_generators_are_not_handed_to_the_callback(run_python):
    result = run_hooked(
        run_python,
        """
        def gen(n):
            yield n
            yield n + 1
        async def coro():
            return 5
        names = []
        def callback(frame, entries, state):
            names.append(frame.f_code.co_name)
            return evalframe.GuardedCode(frame.f_code, lambda L: True)
        with evalframe.hook(callback):
            values = list(gen(3)) + list(gen(10))
            c = coro()
            try:
                c.send(None)
            except StopIteration as stop:
                values.append(stop.value)
        report(names=names, values=values)
        """,
    )
    assert result == {"names": [], "values": [3, 4, 10, 11, 5]}


# --------------------------------------------------------------------------- installing and removing


@pytest.mark.needs_subprocess
def test_hook_restores_the_previous_callback(run_python):
    result = run_hooked(
        run_python,
        """
        names = []
        with evalframe.hook(lambda frame, e, s: names.append(frame.f_code.co_name)):
            inside = type(torch_internals.current_callback()).__name__
            f(1)
        after = torch_internals.current_callback()
        f(2)
        report(names=names, inside=inside, after=repr(after))
        """,
    )
    assert result == {"names": ["f"], "inside": "_Session", "after": "None"}


@pytest.mark.needs_subprocess
def test_exception_in_with_block_removes_the_hook(run_python):
    result = run_hooked(
        run_python,
        """
        names = []
        try:
            with evalframe.hook(lambda frame, e, s: names.append(frame.f_code.co_name)):
                f(1)
                raise KeyError("boom")
        except KeyError:
            pass
        f(2); g(3)
        report(names=names, after=repr(torch_internals.current_callback()))
        """,
    )
    assert result == {"names": ["f"], "after": "None"}


@pytest.mark.needs_subprocess
def test_nested_hooks_see_code_the_outer_one_skipped(run_python):
    result = run_hooked(
        run_python,
        """
        seen = []
        def make(name):
            return lambda frame, e, s: seen.append([name, frame.f_code.co_name])
        outer, inner, later = make("outer"), make("inner"), make("later")
        with evalframe.hook(outer):
            f(1)
            with evalframe.hook(inner):
                f(2); f(3)
            f(4)
            outer_again = type(torch_internals.current_callback()).__name__
        with evalframe.hook(later):
            f(5)
        report(seen=seen, outer_again=outer_again)
        """,
    )
    assert result["seen"] == [["outer", "f"], ["inner", "f"], ["later", "f"]]
    assert result["outer_again"] == "_Session"


@pytest.mark.needs_subprocess
def test_set_callback_and_reset(run_python):
    result = run_hooked(
        run_python,
        """
        seen = []
        def first(frame, e, s):
            seen.append(["first", frame.f_code.co_name])
        def second(frame, e, s):
            seen.append(["second", frame.f_code.co_name])
        none_before = evalframe.set_callback(first)
        f(1)
        replaced = evalframe.set_callback(second)
        f(2)
        evalframe.reset()
        f(3)
        report(seen=seen, none_before=none_before is None, replaced=replaced is first,
               after=repr(torch_internals.current_callback()))
        """,
    )
    assert result == {
        "seen": [["first", "f"], ["second", "f"]],
        "none_before": True,
        "replaced": True,
        "after": "None",
    }


@pytest.mark.needs_subprocess
def test_hooks_removed_out_of_order_do_not_come_back(run_python):
    result = run_hooked(
        run_python,
        """
        seen = []
        def first(frame, e, s):
            seen.append(["first", frame.f_code.co_name])
        def second(frame, e, s):
            seen.append(["second", frame.f_code.co_name])
        with evalframe.hook(first):
            evalframe.set_callback(second)  # installed on top of first
        f(1)  # leaving the block restored what was there before it: no hook
        evalframe.reset()  # removes second, and must not bring back first
        f(2)
        report(seen=seen, after=repr(torch_internals.current_callback()))
        """,
    )
    assert result == {"seen": [], "after": "None"}


@pytest.mark.needs_subprocess
@pytest.mark.needs_threads
def test_hooks_are_per_thread(run_python):
    result = run_hooked(
        run_python,
        """
        import threading
        seen = []
        def make(name):
            return lambda frame, e, s: seen.append([name, frame.f_code.co_name, frame.f_locals.get("x")])
        main_hook, worker_hook = make("main"), make("worker")
        def worker():
            f(10)  # the main thread's hook must not see this
            with evalframe.hook(worker_hook):
                f(11)
        with evalframe.hook(main_hook):
            thread = threading.Thread(target=worker)
            thread.start()
            thread.join()
            f(1)
        report(seen=[item for item in seen if item[1] == "f"])
        """,
    )
    assert result["seen"] == [["worker", "f", 11], ["main", "f", 1]]


def test_hook_and_set_callback_reject_what_is_not_callable():
    with pytest.raises(TypeError, match="hook\\(\\) needs a callable, not int"):
        evalframe.hook(42)
    with pytest.raises(TypeError, match="set_callback\\(\\) needs a callable or None, not str"):
        evalframe.set_callback("f")


# --------------------------------------------------------------------------- bad returns


@pytest.mark.needs_subprocess
@pytest.mark.parametrize(
    "returned, error, words",
    [
        ("42", "TypeError", "must return None, RUN_ORIGINAL or GuardedCode, not int"),
        ("evalframe.GuardedCode(h.__code__, lambda L: True)", "ValueError", "arguments ('a', 'b'), expected ('x',)"),
        ("evalframe.GuardedCode(closure.__code__, lambda L: True)", "ValueError", "free variables"),
        ("evalframe.GuardedCode(with_cell.__code__, lambda L: True)", "ValueError", "cell variables"),
        ("evalframe.GuardedCode(star.__code__, lambda L: True)", "ValueError", "positional count 0, expected 1"),
        ("evalframe.GuardedCode(gen.__code__, lambda L: True)", "TypeError", "generator or coroutine"),
        ("evalframe.GuardedCode('x + 1', lambda L: True)", "TypeError", "must be a code object, not str"),
        ("evalframe.GuardedCode(f.__code__, 'x > 0')", "TypeError", "guard must be callable"),
        ("evalframe.GuardedCode(f.__code__, bool, text=5)", "TypeError", "text must be a str"),
    ],
)
def test_bad_returns_raise_one_clear_error(run_python, returned, error, words):
    result = run_hooked(
        run_python,
        """
        def h(a, b):
            return a + b
        def outer():
            y = 1
            def closure(x):
                return x + y
            return closure
        closure = outer()
        def with_cell(x):
            return lambda: x
        def star(*x):
            return x
        def gen(x):
            yield x
        def callback(frame, entries, state):
            if frame.f_code is not f.__code__:
                return None
            return %s
        with evalframe.hook(callback):
            try:
                f(1)
                caught = None
            except Exception as exc:
                caught = [type(exc).__name__, str(exc)]
            off = repr(torch_internals.current_callback())
            value = f(10)  # the hook is off after the error: plain f
        report(caught=caught, off=off, value=value, after=repr(torch_internals.current_callback()))
        """
        % returned,
    )
    kind, message = result["caught"]
    assert kind == error
    assert words in message and "\n" not in message
    assert result["value"] == 11
    assert result["off"] == "None" and result["after"] == "None"


@pytest.mark.needs_subprocess
def test_guard_that_raises_gives_guard_error(run_python):
    result = run_hooked(
        run_python,
        """
        def guard(f_locals):
            if f_locals["x"] == 2:
                raise KeyError("no entry for 2")
            return True
        def callback(frame, entries, state):
            if frame.f_code is f.__code__:
                return evalframe.GuardedCode(g.__code__, guard, text="x != 2")
        with evalframe.hook(callback):
            values = [f(1), f(3)]
            try:
                f(2)
                caught = None
            except evalframe.GuardError as exc:
                caught = [str(exc), repr(exc.__cause__)]
        report(values=values, caught=caught)
        """,
    )
    assert result["values"] == [3, 5]  # g's code ran in place of f's
    message, cause = result["caught"]
    assert message.startswith("guard x != 2 of f (") and message.endswith("raised KeyError: 'no entry for 2'")
    assert cause == "KeyError('no entry for 2')"


@pytest.mark.needs_subprocess
def test_guard_interrupted_is_not_swallowed(run_python):
    result = run_hooked(
        run_python,
        """
        def guard(f_locals):
            raise KeyboardInterrupt
        def callback(frame, entries, state):
            if frame.f_code is f.__code__:
                return evalframe.GuardedCode(f.__code__, guard)
        with evalframe.hook(callback):
            first = f(1)
            try:
                f(2)
                caught = None
            except KeyboardInterrupt:
                caught = "KeyboardInterrupt"
        frame = evalframe.Frame(f.__code__, {"x": 1}, globals(), {}, 4)
        report(first=first, caught=caught, frame=repr(frame))
        """,
    )
    assert result["first"] == 2 and result["caught"] == "KeyboardInterrupt"
    assert result["frame"].startswith("Frame(f_code=<code object f") and "f_globals" not in result["frame"]


@pytest.mark.needs_subprocess
def test_callback_that_raises_propagates_from_the_call(run_python):
    result = run_hooked(
        run_python,
        """
        def callback(frame, entries, state):
            raise RuntimeError("callback failed for %s" % frame.f_code.co_name)
        with evalframe.hook(callback):
            try:
                f(1)
            except RuntimeError as exc:
                message = str(exc)
        report(message=message, after=repr(torch_internals.current_callback()))
        """,
    )
    assert result == {"message": "callback failed for f", "after": "None"}


# --------------------------------------------------------------------------- torch.compile interplay


@pytest.mark.needs_subprocess
def test_torch_compile_inside_a_hook_and_on_hooked_code(run_python):
    result = run_hooked(
        run_python,
        """
        import torch
        def k(x):
            return torch.sin(x) + 1
        compiled = torch.compile(k, backend="eager")
        names = []
        def callback(frame, entries, state):
            names.append(frame.f_code.co_name)
            if frame.f_code is k.__code__:
                return evalframe.GuardedCode(g.__code__, lambda L: True, "True")
        with evalframe.hook(callback):
            hooked = k(torch.zeros(2)).tolist()       # the hook's entry: g's code
            by_compile = compiled(torch.zeros(2)).tolist()  # torch.compile's own callback
            inside = [(e.origin, e.text) for e in evalframe.cache_entries(k)]
        after = [e.origin for e in evalframe.cache_entries(compiled)]
        recompiled = compiled(torch.zeros(3, 2)).tolist()
        report(hooked=hooked, by_compile=by_compile, inside=inside, after=after,
               recompiled=recompiled, entries=len(evalframe.cache_entries(k)),
               k_seen=names.count("k"))
        """,
    )
    assert result["hooked"] == [2.0, 2.0]  # x + 2
    assert result["by_compile"] == [1.0, 1.0]
    assert [origin for origin, _ in result["inside"]] == ["torch.compile", "framescope"]
    assert result["after"] == ["torch.compile"]
    assert result["recompiled"] == [[1.0, 1.0]] * 3
    assert result["entries"] == 2 and result["k_seen"] == 1


@pytest.mark.needs_subprocess
def test_code_a_hook_skipped_is_not_compiled_until_the_hook_is_removed(run_python):
    result = run_hooked(
        run_python,
        """
        import torch
        def k(x):
            return torch.cos(x)
        compiled = torch.compile(k, backend="eager")
        with evalframe.hook(lambda frame, entries, state: None):
            k(torch.zeros(1))  # skipped by the hook
            inside = compiled(torch.zeros(1)).tolist()
            entries_inside = len(evalframe.cache_entries(k))
        after = compiled(torch.zeros(1)).tolist()
        report(inside=inside, entries_inside=entries_inside, entries_after=len(evalframe.cache_entries(k)))
        """,
    )
    assert result == {"inside": [1.0], "entries_inside": 0, "entries_after": 1}


# --------------------------------------------------------------------------- cache_entries


def test_cache_entries_of_a_compiled_function():
    def scale(x, n):
        return x * n + 1

    compiled = torch.compile(scale, backend="eager")
    compiled(torch.ones(3), 2)
    compiled(torch.ones(3), 5)
    entries = evalframe.cache_entries(compiled)
    assert entries == evalframe.cache_entries(scale) == evalframe.cache_entries(scale.__code__)
    assert [e.origin for e in entries] == ["torch.compile"] * len(entries)
    assert len(entries) == 2
    newest = entries[0]
    assert newest.compile_id is not None and newest.code is not scale.__code__
    assert newest.code.co_name == "scale" and newest.code.co_varnames[:2] == ("x", "n")
    for entry in entries:
        ast.parse(entry.text)
        assert "L['" not in entry.text.split("\n#")[0]
        assert "x.dtype == torch.float32" in entry.text
        assert "# ___check_global_state()" in entry.text
    # The guards, run on plain dicts of local variables.
    assert any(e.guard({"x": torch.ones(3), "n": 5}) for e in entries)
    assert not any(e.guard({"x": torch.ones(4, 4), "n": 2}) for e in entries)
    assert not any(e.guard({"x": torch.ones(3, dtype=torch.float64), "n": 2}) for e in entries)


class Affine(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.scale = torch.nn.Parameter(torch.ones(3))

    def forward(self, x):
        return x * self.scale + 1


def test_cache_entries_of_a_compiled_module():
    model = Affine()
    compiled = torch.compile(model, backend="eager")
    compiled(torch.ones(4, 3))
    entries = evalframe.cache_entries(compiled)
    assert len(entries) == 1 and entries == evalframe.cache_entries(model)
    assert evalframe.code_of(compiled) is Affine.forward.__code__
    assert entries[0].code.co_name == "forward"
    assert "self.scale" in entries[0].text.replace("self._parameters['scale']", "self.scale")
    ast.parse(entries[0].text)


def test_cache_entries_of_a_compiled_torch_module():
    # For torch's own modules torch.compile compiles a wrapper frame around the module.
    model = torch.nn.Linear(3, 2)
    compiled = torch.compile(model, backend="eager")
    assert evalframe.cache_entries(compiled) == []
    compiled(torch.ones(4, 3))
    entries = evalframe.cache_entries(compiled)
    assert entries and all(e.origin == "torch.compile" for e in entries)
    assert evalframe.code_of(compiled) is not torch.nn.Linear.forward.__code__
    assert any(e.guard({"args": (torch.ones(4, 3),), "kwargs": {}, "fn": model}) for e in entries)


def test_cache_entries_of_plain_code_is_empty():
    def untouched(x):
        return x

    assert evalframe.cache_entries(untouched) == []


@pytest.mark.parametrize("thing", [42, "f", None])
def test_cache_entries_rejects_what_has_no_code(thing):
    with pytest.raises(TypeError, match="expected a function, method, module or code object"):
        evalframe.cache_entries(thing)


# --------------------------------------------------------------------------- render_guard


def test_render_guard_rewrites_what_it_knows_and_comments_the_rest():
    parts = [
        "L['n'] == 2",
        "___check_type_id(L['n'], 140445963604480), type=<class 'float'>",
        "___check_type_id(L['m'], 94870591531376), type=<class '__main__.M'>",
        "___check_obj_id(G['torch'], 1399), type=<class 'module'>",
        "G['K'] == 3",
        "G['x'] == 3",
        "check_tensor(L['x'], Tensor, DispatchKeySet(CPU, BackendSelect), torch.float32, device=None, "
        "requires_grad=False, size=[3, None], stride=[None, 1])",
        '___check_global_state() against {"grad_mode":true}',
        "torch._functorch.aot_autograd.utils.top_saved_tensors_hooks ids == None",
    ]
    text = evalframe.render_guard(parts, local_names=["x", "n", "m"])
    assert text.splitlines() == [
        "(",
        "    n == 2",
        "    and type(n) is float",
        "    and id(type(m)) == 94870591531376",
        "    and id(torch) == 1399",
        "    and K == 3",
        "    and globals()['x'] == 3",
        "    and x.dtype == torch.float32 and x.requires_grad is False and x.dim() == 2"
        " and x.size(0) == 3 and x.stride(1) == 1",
        ")",
        '# ___check_global_state() against {"grad_mode":true}',
        "# torch._functorch.aot_autograd.utils.top_saved_tensors_hooks ids == None",
    ]
    ast.parse(text)


def test_render_guard_edge_cases():
    assert evalframe.render_guard([]) == "True"
    assert evalframe.render_guard(["L['a'] == 1"]) == "a == 1"
    assert evalframe.render_guard(["___check_tensors(L['x'])"]) == "True\n# ___check_tensors(L['x'])"
    two_lines = evalframe.render_guard(["L['s'] ==\n  'a'"])
    assert two_lines == "s == 'a'"


# --------------------------------------------------------------------------- torch versions


def test_installed_torch_has_every_internal():
    installed = torch_internals.parse_version(torch.__version__)
    for internal in torch_internals.INTERNALS:
        if internal.since <= installed:
            assert torch_internals.probe(internal) is None, internal.path
    assert torch_internals.load() is torch_internals.load()


def test_probes_find_what_torch_lacks(monkeypatch):
    # Real torch, with one internal taken away and one given another shape.
    from torch._dynamo import types as dynamo_types

    strategy = torch_internals.INTERNALS[[i.path for i in torch_internals.INTERNALS].index(
        "torch._dynamo.types:FrameExecStrategy")]
    monkeypatch.delattr(dynamo_types, "FrameExecStrategy")
    assert torch_internals.probe(strategy) == "torch._dynamo.types.FrameExecStrategy"
    compile_hook = torch_internals.Internal("torch._dynamo.convert_frame:register_bytecode_hook", (), params=("hook", "when"))
    assert torch_internals.probe(compile_hook) == "when of torch._dynamo.convert_frame.register_bytecode_hook"
    gone = torch_internals.Internal("torch._dynamo.no_such_module:thing", ())
    assert torch_internals.probe(gone) == "the module torch._dynamo.no_such_module (ModuleNotFoundError)"


@pytest.mark.needs_subprocess
def test_a_missing_internal_names_itself_and_the_feature(run_python):
    # In a fresh process: the probes run once per process.
    out = run_python(
        "import warnings; warnings.simplefilter('error')\n"
        "import torch._dynamo.convert_frame as cf\n"
        "del cf.register_bytecode_hook\n"
        "import framescope, framescope.evalframe, framescope.torch_internals as t\n"
        "try:\n"
        "    with framescope.dump('unused'):\n"
        "        pass\n"
        "except t.UnsupportedTorchError as exc:\n"
        "    print('error:', exc)\n"
        "with framescope.evalframe.hook(lambda frame: None):\n"
        "    pass\n"
        "print('evalframe works')\n"
        "print(framescope.decompile(lambda x: x + 1).strip())\n"
    ).stdout.splitlines()
    assert out[0] == (
        "error: torch %s lacks torch._dynamo.convert_frame.register_bytecode_hook, which "
        "framescope.dump needs; framescope decompile and framescope report do not need torch"
        % torch.__version__
    )
    assert out[1:] == ["evalframe works", "lambda x: x + 1"]


@pytest.mark.parametrize(
    "version, warned",
    [("2.10.0", False), ("2.13.0+cpu", False), ("2.15.0+cu132", False), ("2.15.3", False),
     ("2.16.0", True), ("3.0.0", True), ("2.9.1", True), ("2.16.0a0+git1234", True)],
)
def test_versions_outside_the_tested_range_are_warned_about(version, warned):
    message = torch_internals.version_warning(version)
    if warned:
        assert message == (
            "framescope is tested with torch 2.10 to 2.15, not %s; torch %s has every internal "
            "framescope uses, so it is used" % (version, version)
        )
    else:
        assert message is None


@pytest.mark.needs_subprocess
def test_one_warning_for_an_untested_torch(run_python):
    out = run_python(
        "import warnings, torch\n"
        "torch.__version__ = '2.99.0'\n"
        "import framescope.torch_internals as t\n"
        "with warnings.catch_warnings(record=True) as seen:\n"
        "    warnings.simplefilter('always')\n"
        "    t.load(); t.require(t.DUMP); t.require(t.DEBUG)\n"
        "print([(w.category.__name__, str(w.message)) for w in seen])\n"
    ).stdout.strip()
    assert out == str([("UserWarning", "framescope is tested with torch 2.10 to 2.15, not 2.99.0; torch 2.99.0 "
                                       "has every internal framescope uses, so it is used")])


@pytest.mark.needs_subprocess
def test_importing_evalframe_does_not_import_torch(run_python):
    out = run_python(
        "import sys, framescope.evalframe, framescope.torch_internals\n"
        "print([m for m in sys.modules if m == 'torch' or m.startswith('torch.')])"
    ).stdout
    assert out.strip() == "[]"


# --------------------------------------------------------------------------- Dispatcher


class CountingBackend:
    """A torch.compile backend that counts the graphs it is given and runs them as they are."""

    def __init__(self):
        self.graphs = 0

    def __call__(self, gm, example_inputs):
        self.graphs += 1
        return gm.forward


def test_dispatcher_matches_eager_and_compiles_once_per_signature():
    def fn(x, y, scale=2.0):
        return torch.relu(x @ y) * scale + 1

    backend = CountingBackend()
    dispatcher = evalframe.Dispatcher(fn, backend=backend)
    inputs = [
        (torch.randn(4, 4), torch.randn(4, 4)),
        (torch.randn(4, 4), torch.randn(4, 4)),
        (torch.randn(2, 3), torch.randn(3, 5)),
        (torch.randn(4, 4), torch.randn(4, 4)),
    ]
    for x, y in inputs:
        assert torch.allclose(dispatcher(x, y), fn(x, y))
    assert torch.allclose(dispatcher(x, y, scale=3.0), fn(x, y, 3.0))
    assert backend.graphs == 3  # (4x4, 4x4), (2x3, 3x5), then scale=3.0
    assert len(dispatcher.codes) == 3
    for code in dispatcher.codes.values():
        assert isinstance(code, types.CodeType) and code is not fn.__code__
    assert dispatcher.lookup(*inputs[0]).__code__ in dispatcher.codes.values()
    assert dispatcher.lookup(torch.randn(7, 7), torch.randn(7, 7)) is None


def test_dispatcher_skips_guards():
    # With a key that ignores shapes, a second shape runs the code compiled for the first
    # shape without any guard being checked: no recompile, where torch.compile recompiles.
    def fn(x):
        return x.sum(0) * 2

    backend = CountingBackend()
    dispatcher = evalframe.Dispatcher(fn, key=lambda x: "any", backend=backend)
    small, large = torch.ones(2, 3), torch.ones(5, 3)
    assert dispatcher(small).tolist() == [4.0] * 3
    assert dispatcher(large).tolist() == [10.0] * 3
    assert backend.graphs == 1
    compiled_backend = CountingBackend()
    compiled = torch.compile(fn, backend=compiled_backend, dynamic=False)
    compiled(small), compiled(large)
    assert compiled_backend.graphs == 2


def test_dispatcher_on_a_module_method_and_closure():
    model = torch.nn.Sequential(torch.nn.Linear(4, 8), torch.nn.ReLU(), torch.nn.Linear(8, 2))
    offset = torch.tensor(0.5)

    def run(x):
        return model(x) + offset

    for fn in (model.forward, run):
        dispatcher = evalframe.Dispatcher(fn, backend="eager")
        x = torch.randn(3, 4)
        with torch.no_grad():
            assert torch.allclose(dispatcher(x), fn(x))
            assert torch.allclose(dispatcher(x * 2), fn(x * 2))
        assert len(dispatcher.codes) == 1
        assert all(code is not None for code in dispatcher.codes.values())


def test_dispatcher_with_a_graph_break():
    # The code after the break runs uncompiled through the dispatcher, with the same result.
    def fn(x):
        y = torch.sin(x) + 1
        torch._dynamo.graph_break()
        return y * 2

    dispatcher = evalframe.Dispatcher(fn, backend="eager")
    x = torch.randn(5)
    assert torch.allclose(dispatcher(x), fn(x))
    assert torch.allclose(dispatcher(x + 1), fn(x + 1))
    [code] = dispatcher.codes.values()
    assert code is not None and code is not fn.__code__


def test_dispatcher_rejects_what_is_not_a_function():
    with pytest.raises(TypeError, match="needs a Python function or method, not int"):
        evalframe.Dispatcher(42)
    with pytest.raises(TypeError, match="needs a Python function or method, not builtin_function_or_method"):
        evalframe.Dispatcher(len)


def test_dispatcher_unhashable_key():
    dispatcher = evalframe.Dispatcher(lambda x: x + 1, key=lambda x: [x], backend="eager")
    with pytest.raises(TypeError, match="key .* is not hashable"):
        dispatcher(1)


def test_signature_key():
    a, b = torch.ones(2, 3), torch.ones(2, 3)
    assert evalframe.signature_key(a, 1) == evalframe.signature_key(b, 1)
    assert evalframe.signature_key(a, 1) != evalframe.signature_key(a, 2)
    assert evalframe.signature_key(a) != evalframe.signature_key(a.t())  # strides differ
    assert evalframe.signature_key(a) != evalframe.signature_key(a.double())
    assert evalframe.signature_key(a) != evalframe.signature_key(torch.ones(2, 3, requires_grad=True))
    assert evalframe.signature_key(x=1, y=2) == evalframe.signature_key(y=2, x=1)
    assert evalframe.signature_key([a, 1.5]) == evalframe.signature_key([b, 1.5])
    assert evalframe.signature_key(1) != evalframe.signature_key(True)
