"""The machine-code decompiler (`decompile_transformed`), checked by running what it prints.

Machine-made bytecode has no source shape, so its decompilation cannot be checked by
recompiling. Instead, random programs in the style torch.compile writes (made by
`tests/support/machine_programs.py`) run as a function and so does their decompilation,
and the two must observe the same. A program the decompiler refuses is allowed, but only
a small share of them. Then one construct at a time, from assembled programs.

`benchmarks/machine_fuzz.py` runs many more seeds with the same generator.
"""
from __future__ import annotations

import sys
import textwrap
import types
from typing import Any, Dict

import pytest

from framescope.decompiler.machine import decompile_transformed
from framescope.errors import DecompilationError
from tests.support.machine_programs import assemble, check, disassembly, generate

PY = sys.version_info[:2]

#: Programs per interpreter in one test run, and the share of them the decompiler may refuse.
PROGRAMS = 1000
MAX_REFUSED = 0.02


def test_random_programs_do_what_their_decompilation_does() -> None:
    counts = {"equivalent": 0, "refused": 0, "internal": 0, "wrong": 0, "invalid": 0}
    failures = []
    refusals: Dict[str, int] = {}
    for seed in range(PROGRAMS):
        code = generate(seed)
        outcome, details = check(code)
        counts[outcome] += 1
        if outcome in ("wrong", "invalid", "internal") and len(failures) < 3:
            failures.append("seed %d: %s\n%s\n%s" % (seed, outcome, details, disassembly(code)))
        if outcome == "refused":
            reason = details.split(": ", 1)[-1]
            refusals[reason] = refusals.get(reason, 0) + 1
    assert not failures, "%r\n\n%s" % (counts, "\n\n".join(failures))
    assert counts["refused"] <= MAX_REFUSED * PROGRAMS, "%r refused: %r" % (counts, refusals)


# --------------------------------------------------------------------------- one construct at a time


def decompiled(text: str) -> str:
    """The decompilation of a program, checked to do what the program does."""
    code = assemble(text)
    outcome, details = check(code)
    assert outcome == "equivalent", "%s\n%s\n%s" % (outcome, details, disassembly(code))
    return details


def body(source: str) -> str:
    """The function's body, dedented: what the tests below compare."""
    lines = source.splitlines()
    assert lines[0] == "def program(x, y):", source
    return "\n".join(line[4:] for line in lines[1:])


needs_list_extend = pytest.mark.skipif(PY < (3, 9), reason="LIST_EXTEND and LIST_TO_TUPLE are 3.9+")


def test_calls_nest_when_nothing_happens_between() -> None:
    assert body(decompiled("""
        callable g
        const 1
        callable f
        const 2
        call 1
        call 2
        return
    """)) == "return g(1, f(2))"


def test_a_value_waiting_while_a_call_runs_is_evaluated_first() -> None:
    assert body(decompiled("""
        load x
        attr
        callable f
        const 1
        call 1
        pop
        return
    """)) == "__stack_0 = x.a\nf(1)\nreturn __stack_0"


def test_swapped_calls_keep_their_order() -> None:
    assert body(decompiled("""
        callable f
        const 1
        call 1
        callable f
        const 2
        call 1
        swap 2
        tuple 2
        return
    """)) == "__stack_0 = f(1)\nreturn f(2), __stack_0"


def test_a_copied_call_result_is_evaluated_once() -> None:
    assert body(decompiled("""
        callable f
        const 1
        call 1
        copy 1
        tuple 2
        return
    """)) == "__stack_0 = f(1)\nreturn __stack_0, __stack_0"


def test_values_left_on_the_stack_still_run() -> None:
    assert body(decompiled("""
        callable f
        const 1
        call 1
        load x
        attr
        const 2
        return
    """)) == "f(1)\nx.a\nreturn 2"


def folded(text: str, scratch: frozenset, shown: frozenset = frozenset()) -> str:
    """The body decompiled with ``scratch`` locals (the program checked to run alike with every
    local as scratch)."""
    code = assemble(text)
    outcome, details = check(code)
    assert outcome == "equivalent", "%s\n%s\n%s" % (outcome, details, disassembly(code))
    return body(decompile_transformed(code, scratch=scratch, shown=shown))


CALL_THEN_USE = """
    callable f
    const 1
    call 1
    store t
    callable g
    load t
    call 1
    pop
    load x
    store u
    delete t
    const None
    return
"""


def test_scratch_locals_fold_into_their_one_use_and_their_del_goes() -> None:
    assert body(decompiled(CALL_THEN_USE)) == "t = f(1)\ng(t)\nu = x\ndel t"
    assert folded(CALL_THEN_USE, frozenset({"t", "u"})) == "g(f(1))"
    # Only the scratch ones: x is the caller's (an argument is never scratch).
    assert folded(CALL_THEN_USE, frozenset({"u", "x"})) == "t = f(1)\ng(t)\ndel t"


GRAPH_OUTPUT = """
    callable g
    const 1
    call 1
    store graph_out_0
    load graph_out_0
    const 0
    subscr
    delete graph_out_0
    return
"""


def test_a_shown_scratch_local_keeps_its_name_and_a_del_before_return_goes() -> None:
    assert body(decompiled(GRAPH_OUTPUT)) == (
        "graph_out_0 = g(1)\n__stack_0 = graph_out_0[0]\ndel graph_out_0\nreturn __stack_0")
    out = frozenset({"graph_out_0"})
    assert folded(GRAPH_OUTPUT, out, shown=out) == "graph_out_0 = g(1)\nreturn graph_out_0[0]"
    assert folded(GRAPH_OUTPUT, out) == "return g(1)[0]"


COPIES = """
    load x
    store a
    const 2
    store b
    load a
    store c
    callable f
    load a
    load b
    call 2
    pop
    callable f
    load c
    load b
    call 2
    delete a
    return
"""


def test_a_scratch_copy_of_a_constant_or_a_steady_name_reads_what_it_copies() -> None:
    assert body(decompiled(COPIES)) == "a = x\nb = 2\nc = a\nf(a, b)\ndel a\nreturn f(c, b)"
    # c copies a copy of x: all three go, and so does a's del.
    assert folded(COPIES, frozenset({"a", "b", "c"})) == "f(x, 2)\nreturn f(x, 2)"
    # Without c as scratch: c keeps its name but reads x, as a did.
    assert folded(COPIES, frozenset({"a", "b"})) == "c = x\nf(x, 2)\nreturn f(c, 2)"


def test_consecutive_dels_are_one_statement() -> None:
    assert body(decompiled("""
        const 1
        store a
        const 2
        store b
        delete a
        delete b
        load x
        return
    """)) == "a = 1\nb = 2\ndel a, b\nreturn x"


def test_a_read_waiting_while_its_local_changes_keeps_the_old_value() -> None:
    assert body(decompiled("""
        load x
        const 1
        store x
        return
    """)) == "__stack_0 = x\nx = 1\nreturn __stack_0"


# Two values passed through a list that is built, read and taken apart in place.
JUGGLED = """
    load x
    load y
    list 2
    copy 1
    const -1
    subscr
    swap 2
    copy 1
    const -1
    delete_subscr
    const 0
    subscr
    tuple 2
    return
"""


def test_list_juggling_disappears() -> None:
    # torch.compile passes values around in lists it builds and takes apart at once.
    assert body(decompiled("""
        tuple 0
        list 1
        const 0
        subscr
        return
    """)) == "return ()"
    assert body(decompiled(JUGGLED)) == "return y, x"


@pytest.mark.skipif(PY not in ((3, 11), (3, 12)), reason="the NULL slot goes below the callable on 3.11-3.12")
def test_dynamo_resume_call() -> None:
    # torch.compile 2.13 on 3.11, for ``z = inner(x) - 1`` breaking the graph in ``outer(x, lst)``
    # (inner called f, the resume function g): its frame values travel in lists it takes apart.
    assert body(decompiled("""
        tuple 0
        list 1
        push_null
        global f
        load x
        list 0
        list 0
        swap 2
        load y
        list 1
        extend 2
        pop
        list 1
        swap 4
        swap 3
        swap 2
        call 1
        list 1
        copy 2
        const 0
        subscr
        slice 0 0
        store_subscr
        copy 1
        const 0
        subscr
        swap 2
        pop
        list 1
        swap 2
        copy 1
        const 0
        subscr
        swap 2
        pop
        list 1
        swap 2
        copy 1
        const 0
        subscr
        copy 1
        copy 1
        const 1
        subscr
        swap 2
        pop
        list 1
        swap 2
        slice 1 None
        store_subscr
        copy 2
        pop
        list 0
        swap 3
        pop
        global g
        swap 3
        swap 2
        copy 1
        copy 1
        const -1
        subscr
        swap 2
        const -1
        delete_subscr
        swap 3
        swap 2
        list 2
        swap 2
        extend 1
        push_null
        swap 3
        swap 2
        call_ex
        return
    """)) == "return g([], [], f(x), y)"


def test_slices_of_a_built_list_are_taken_at_once() -> None:
    assert body(decompiled("""
        callable f
        const 1
        call 1
        load x
        list 2
        slice 1 None
        subscr
        return
    """)) == "f(1)\nreturn [x]"


def test_slice_assignment_on_a_built_list() -> None:
    assert body(decompiled("""
        load x
        list 1
        load y
        list 1
        copy 2
        slice 0 0
        store_subscr
        return
    """)) == "return [y, x]"


def test_a_list_used_twice_is_one_list() -> None:
    assert body(decompiled("""
        callable f
        const 1
        list 0
        copy 1
        call 3
        return
    """)) == "__stack_0 = []\nreturn f(1, __stack_0, __stack_0)"


def test_a_list_nobody_sees_still_evaluates_its_items() -> None:
    assert body(decompiled("""
        callable f
        const 1
        call 1
        list 1
        const 0
        delete_subscr
        const 2
        return
    """)) == "f(1)\nreturn 2"


def test_a_list_waiting_at_the_bottom_keeps_its_items_in_order() -> None:
    # After a graph call Dynamo pushes the arguments of the side effects it replays, a list
    # among the first, before it makes the calls. While the list's items are pure, the scans for impure values start above it; once an item is impure, or a
    # name an item reads changes, it must be seen again.
    assert body(decompiled("""
        load x
        list 1
        const 1
        store x
        return
    """)) == "__stack_0 = x\nx = 1\nreturn [__stack_0]"
    assert body(decompiled("""
        load y
        list 1
        load x
        callable f
        const 1
        call 1
        append 2
        callable f
        const 2
        call 1
        pop
        pop
        return
    """)) == "__stack_0 = f(1)\nf(2)\nreturn [y, __stack_0]"


def test_appending_a_list_to_itself() -> None:
    assert body(decompiled("""
        list 0
        copy 1
        append 1
        return
    """)) == "__stack_0 = []\n__stack_0.append(__stack_0)\nreturn __stack_0"


@needs_list_extend
def test_star_call_of_a_built_list() -> None:
    assert body(decompiled("""
        callable f
        const 1
        load x
        list 2
        load y
        extend 1
        to_tuple
        call_ex
        return
    """)) == "return f(1, x, *y)"


@needs_list_extend
def test_an_extended_list_reads_what_it_extends_with_at_once() -> None:
    # ``[*y]`` must iterate y before y[0] changes.
    assert body(decompiled("""
        list 0
        load y
        extend 1
        const 5
        load y
        const 0
        store_subscr
        return
    """)) == "__stack_0 = [*y]\ny[0] = 5\nreturn [*__stack_0]"


@needs_list_extend
def test_a_copied_list_shares_no_evaluation() -> None:
    # Dynamo copies a list with ``BUILD_LIST 0; COPY 2; LIST_EXTEND 1``.
    assert body(decompiled("""
        callable f
        const 1
        call 1
        list 1
        list 0
        copy 2
        extend 1
        tuple 2
        return
    """)) == "__stack_0 = f(1)\nreturn [__stack_0], [__stack_0]"


def test_unpacking_a_built_list_reverses_nothing() -> None:
    assert body(decompiled("""
        callable f
        const 1
        call 1
        callable f
        const 2
        call 1
        list 2
        unpack 2
        tuple 2
        return
    """)) == "__stack_0 = f(1)\nreturn f(2), __stack_0"


def test_a_branch_runs_waiting_calls_before_its_test() -> None:
    assert body(decompiled("""
        callable f
        const 1
        call 1
        load x
        if_true L
        const 2
        return
        label L
        return
    """)) == "__stack_0 = f(1)\nif x:\n    return __stack_0\nreturn 2"


def test_a_join_is_printed_once_after_the_if() -> None:
    assert body(decompiled("""
        load x
        if_false L
        callable f
        const 1
        call 1
        pop
        label L
        const 2
        return
    """)) == "if x:\n    f(1)\nreturn 2"


def test_arms_that_meet_with_the_same_values_waiting_join() -> None:
    # torch.compile 2.15 brackets each graph call so: the callable and its argument wait on the
    # stack while a conditional whose value is dropped runs (``if profiling: t = enter()``).
    assert body(decompiled("""
        callable g
        load x
        load x
        if_false L
        callable f
        call 0
        store y
        const None
        jump M
        label L
        const None
        label M
        pop
        load y
        call 2
        return
    """)) == "if x:\n    y = f()\nreturn g(x, y)"


def test_arms_that_meet_with_other_values_waiting_print_the_join_in_both() -> None:
    assert body(decompiled("""
        callable g
        load x
        if_false L
        const 1
        jump M
        label L
        callable f
        const 2
        call 1
        label M
        call 1
        return
    """)) == "if x:\n    return g(1)\nreturn g(f(2))"


def test_graph_outputs_are_read_where_they_are_used() -> None:
    # torch.compile keeps a compiled graph's result in graph_out_0 and only reads items of it.
    code = """
        const 0
        store a
        callable g
        const 1
        const 2
        call 2
        delete a
        store graph_out_0
        load graph_out_0
        const 0
        subscr
        callable f
        const 3
        call 1
        pop
        return
    """
    assert body(decompiled(code)) == "a = 0\ndel a\ngraph_out_0 = g(1, 2)\nf(3)\nreturn graph_out_0[0]"
    # Passed to a call, the list could change: then its items are read in bytecode order.
    other = code.replace("store graph_out_0", "store graph_out_0\ncallable f\nload graph_out_0\ncall 1\npop")
    assert "__stack_0 = graph_out_0[0]\nf(3)\nreturn __stack_0" in body(decompiled(other))


@pytest.mark.skipif(PY < (3, 10), reason="torch.compile (and so Dynamo's code) needs 3.10+")
def test_a_protected_call_is_a_try_statement() -> None:
    assert body(decompiled("""
        load x
        attr
        callable f
        const 1
        protected_call 1
        tuple 2
        return
    """)) == ("__stack_0 = x.a\ntry:\n    __stack_1 = f(1)\nexcept BaseException:\n    f(99)\n    raise\n"
              "return __stack_0, __stack_1")


def test_loops_and_generators_are_refused_in_one_line() -> None:
    code = assemble("""
        label L
        load x
        if_false E
        back L
        label E
        const 1
        return
    """)
    with pytest.raises(DecompilationError) as info:
        decompile_transformed(code)
    assert "\n" not in str(info.value) and "loop" in str(info.value)

    def generator():
        yield 1

    with pytest.raises(DecompilationError):
        decompile_transformed(generator.__code__)
    with pytest.raises(TypeError):
        decompile_transformed("not code")  # type: ignore[arg-type]


def test_a_straight_loop_is_a_for_statement() -> None:
    # Dynamo rebuilds a dict it changed with such a loop; its body may not branch.
    def rebuild(source, target):
        target.clear()
        for key, value in source.items():
            target.__setitem__(key, value)
        return len(target)

    text = decompile_transformed(rebuild.__code__)
    assert "for key, value in source.items():" in text
    namespace: Dict[str, Any] = {}
    exec(compile(text, "<machine>", "exec"), namespace)
    target: Dict[str, int] = {"stale": 0}
    assert namespace["rebuild"]({"a": 1, "b": 2}, target) == 2
    assert target == {"a": 1, "b": 2}


def test_a_loop_that_can_leave_early_is_refused() -> None:
    def early(items):
        for item in items:
            if item:
                return item
        return None

    with pytest.raises(DecompilationError):
        decompile_transformed(early.__code__)


def test_constants_with_no_literal_are_named_by_the_caller() -> None:
    def give():
        return "token"

    marker = object()
    code = give.__code__.replace(co_consts=tuple(marker if c == "token" else c for c in give.__code__.co_consts))
    with pytest.raises(DecompilationError, match="no source spelling"):
        decompile_transformed(code)
    text = decompile_transformed(code, constant_name=lambda value: "THE_MARKER" if value is marker else "?")
    assert "return THE_MARKER" in text


def test_a_function_made_from_a_code_constant_is_made_by_a_call() -> None:
    # torch.compile before 2.13 builds a resume function in place: MAKE_FUNCTION of its code
    # object with the cells it closes over. No ``def`` can say that; a call of the function
    # type can, with the type and the code read from globals the caller binds.
    def outer():
        k = 5

        def maker():
            return call(1, lambda: k)  # noqa: F821  (a global of the run below)

        return maker

    code = outer().__code__
    [lambda_code] = [c for c in code.co_consts if isinstance(c, types.CodeType)]
    resume = lambda_code.replace(co_name="resume", **({"co_qualname": "resume"} if PY >= (3, 11) else {}))
    code = code.replace(co_consts=tuple(resume if c is lambda_code else c for c in code.co_consts))
    bound = {"__function": types.FunctionType, "__code_resume": resume}
    text = decompile_transformed(code, constant_name=lambda value: next(k for k, v in bound.items() if v is value))
    assert "return call(1, __function(__code_resume, globals(), 'resume', None, ((lambda: k).__closure__[0],)))" in text
    namespace: Dict[str, Any] = dict(bound, call=lambda one, function: function)
    exec(compile("def outer():\n    k = 5\n%s\n    return maker\n" % textwrap.indent(text, "    "), "<machine>", "exec"),
         namespace)
    made = namespace["outer"]()()
    assert (made.__name__, made.__code__, made()) == ("resume", resume, 5)


def test_framescope_decompile_answers_machine_made_code_with_the_machine_decompiler() -> None:
    import framescope
    from framescope.decompiler.api import MACHINE_MADE

    code = assemble(JUGGLED)
    with pytest.raises(DecompilationError):
        framescope.decompile(code, machine=False)  # no source compiles to this bytecode
    first, rest = framescope.decompile(code).split("\n", 1)
    assert first.startswith(MACHINE_MADE + " (no source has it: ") and "\n" not in first
    assert first.endswith("); every value is evaluated once, in bytecode order")
    assert rest == decompile_transformed(code) and body(rest) == "return y, x"


def test_framescope_decompile_refuses_what_both_decompilers_refuse() -> None:
    import framescope

    # Dynamo's list juggling (no source) in a loop (which the machine-code decompiler refuses).
    juggling = JUGGLED.strip().replace("return", "pop")
    code = assemble("label L\nload x\nif_false M\n" + juggling + "\nback L\nlabel M\nconst 1\nreturn\n")
    with pytest.raises(DecompilationError) as refused:
        framescope.decompile(code)
    assert "; as machine-made code: " in str(refused.value) and "\n" not in str(refused.value)


def test_a_temporary_passed_on_is_named_after_the_parameter() -> None:
    # Dynamo's call of a resume function: the value waiting for it gets the parameter's name.
    code = assemble("""
        callable g
        callable f
        const 1
        call 1
        callable f
        const 2
        call 1
        pop
        call 1
        return
    """)
    plain = decompile_transformed(code)
    named = decompile_transformed(code, parameters=lambda name: ["value"] if name == "g" else None)
    assert "__stack_" in plain and "__stack_" not in named, plain
    assert "return g(value)" in named
    assert check(code)[0] == "equivalent"


# --------------------------------------------------------------------------- across statements


def test_a_display_of_names_moves_to_its_one_reading_past_a_call() -> None:
    # Building (x, y) later gives the same tuple: nothing in between can bind x or y.
    assert folded("""
        load x
        load y
        tuple 2
        store t
        callable f
        const 1
        call 1
        pop
        callable g
        load t
        call 1
        return
    """, frozenset({"t"})) == "f(1)\nreturn g((x, y))"


def test_a_display_stays_where_a_name_it_reads_is_bound_before_its_reading() -> None:
    assert folded("""
        load x
        tuple 1
        store t
        const 2
        store x
        callable g
        load t
        load x
        call 2
        return
    """, frozenset({"t"})) == "t = (x,)\nx = 2\nreturn g(t, x)"


def test_a_call_result_handed_to_a_local_takes_its_name() -> None:
    assert folded("""
        callable f
        const 1
        call 1
        store t
        callable g
        load t
        call 1
        pop
        load t
        store y
        callable g
        load y
        call 1
        return
    """, frozenset({"t"})) == "y = f(1)\ng(y)\nreturn g(y)"


def test_no_new_name_where_the_local_is_read_in_between() -> None:
    assert folded("""
        callable f
        const 1
        call 1
        store t
        callable g
        load y
        call 1
        pop
        load t
        store y
        load y
        return
    """, frozenset({"t"})) == "t = f(1)\ng(y)\ny = t\nreturn y"


def test_a_parameter_stored_into_itself_is_dropped() -> None:
    assert folded("""
        callable f
        const 1
        call 1
        pop
        load x
        store x
        load x
        return
    """, frozenset()) == "f(1)\nreturn x"


@pytest.mark.skipif(PY < (3, 11), reason="the program spells its NULL slot with PUSH_NULL (3.11+)")
def test_a_module_attribute_does_not_stop_a_call_result_from_nesting() -> None:
    # torch's bookkeeping pair reads utils.exit(utils.enter()) once its module is known.
    code = assemble("""
        global o
        attr
        push_null
        call 0
        store t
        global o
        attr
        push_null
        load t
        call 1
        return
    """)
    assert body(decompile_transformed(code, scratch=frozenset({"t"}), modules=frozenset({"o"}))) == "return o.a(o.a())"
    assert body(decompile_transformed(code, scratch=frozenset({"t"}))) == "t = o.a()\nreturn o.a(t)"
