"""The fast paths of the decompiler and its check give the answers of the slow ones they replace.

`bytecode.instructions` stands in for ``dis.get_instructions`` in the equivalence
check, `bytecode.argrepr` for the argument text of one instruction, and
`sametree.same_tree` for comparing ``ast.dump`` strings.  Each is compared with the
standard library's own answer on real code: the standard-library modules below,
compiled by the running interpreter.
"""
import ast
import dis
import importlib.util
import sys
from types import CodeType
from typing import Iterator, List

import pytest

from framescope.decompiler.frontend.bytecode import argrepr, instructions
from framescope.decompiler.verify.equivalence import find_difference
from framescope.decompiler.simulate.sametree import same_tree

MODULES = ["argparse", "enum", "inspect", "tarfile", "difflib", "asyncio/base_events"]

_JUMPS = set(dis.hasjrel) | set(dis.hasjabs) | set(getattr(dis, "hasjump", []))
_NAMED = set(dis.hasname) | set(dis.haslocal) | set(dis.hasfree)


def source_of(module: str) -> str:
    """The source of a standard-library module, from its loader: Pyodide's standard library
    is a zip file, whose loader reads the source all the same."""
    name = module.replace("/", ".")
    spec = importlib.util.find_spec(name)
    source = spec.loader.get_source(name) if spec is not None and spec.loader is not None else None
    assert source is not None, "no source of the standard library's %s here" % name
    return source


def code_objects(code: CodeType) -> Iterator[CodeType]:
    yield code
    for const in code.co_consts:
        if isinstance(const, CodeType):
            yield from code_objects(const)


def all_code() -> List[CodeType]:
    found: List[CodeType] = []
    for module in MODULES:
        found.extend(code_objects(compile(source_of(module), module + ".py", "exec")))
    return found


@pytest.fixture(scope="module")
def codes() -> List[CodeType]:
    return all_code()


def same_as_dis(code: CodeType) -> int:
    """Assert that `instructions` decodes ``code`` as dis does; return how many arguments it resolved."""
    mine = instructions(code)
    ref = list(dis.get_instructions(code))
    assert len(mine) == len(ref), code
    resolved = 0
    for (offset, opcode, opname, arg, argval), instr in zip(mine, ref):
        assert (offset, opcode, opname, arg) == (instr.offset, instr.opcode, instr.opname, instr.arg)
        if instr.opcode in _JUMPS or (instr.opcode in _NAMED and instr.opcode not in dis.hasconst):
            assert argval == instr.argval, (code, instr)
            resolved += 1
    return resolved


def test_instructions_match_dis(codes: List[CodeType]) -> None:
    assert sum(same_as_dis(code) for code in codes) > 10000


def test_extended_arguments_match_dis() -> None:
    # Over 256 locals, and a jump over more than 256 instructions, need EXTENDED_ARG.
    names = ["v%d" % i for i in range(300)]
    body = "".join("    %s = a\n" % n for n in names) + "    if a:\n" + "".join(
        "        a = %s + 1\n" % n for n in names) + "    return a\n"
    code = compile("def f(a):\n" + body, "<test>", "exec").co_consts[0]
    assert any(i.opname == "EXTENDED_ARG" for i in dis.get_instructions(code))
    assert same_as_dis(code) > 600


def test_argrepr_matches_dis(codes: List[CodeType]) -> None:
    checked = 0
    for code in codes[:400]:
        for instr in dis.get_instructions(code):
            if instr.opname in ("EXTENDED_ARG", "CACHE") or instr.opcode in _JUMPS:
                continue  # a jump's text names its target, which the check never prints this way
            assert argrepr(code, instr.offset) == instr.argrepr, (code, instr)
            checked += 1
    assert checked > 1000


def test_difference_message_explains_the_operator() -> None:
    a = compile("def f(x):\n    return x < 1\n", "<a>", "exec").co_consts[0]
    b = compile("def f(x):\n    return x > 1\n", "<b>", "exec").co_consts[0]
    difference = find_difference(a, b)
    assert difference is not None
    assert "COMPARE_OP" in difference.detail and "(<)" in difference.detail and "(>)" in difference.detail


def statements(module: str) -> List[ast.stmt]:
    return [node for node in ast.walk(ast.parse(source_of(module))) if isinstance(node, ast.stmt)]


def test_same_tree_agrees_with_dump() -> None:
    first, second = statements("argparse"), statements("argparse")
    pairs = list(zip(first, second))  # equal trees, distinct objects
    pairs += list(zip(first, first[1:]))  # neighbours: mostly different, some alike
    pairs += list(zip(first, reversed(second)))
    equal = 0
    for a, b in pairs:
        expected = ast.dump(a) == ast.dump(b)
        assert same_tree(a, b) == expected, ast.dump(a)[:200]
        equal += expected
    assert 0 < equal < len(pairs)


@pytest.mark.parametrize("left, right", [
    ("x = 1", "x = True"),
    ("x = 1", "x = 1.0"),
    ("x = 0.0", "x = -0.0"),
    ("x = 'a'", "x = b'a'"),
    ("x = (1, 2)", "x = (1, 2)"),
    ("f(a, b)", "f(a, b=b)"),
    ("x.y = 1", "x.y = 1"),
    ("del x", "x"),
])
def test_same_tree_on_constants_and_contexts(left: str, right: str) -> None:
    a, b = ast.parse(left).body[0], ast.parse(right).body[0]
    assert same_tree(a, b) == (ast.dump(a) == ast.dump(b))


def test_same_tree_on_built_nodes() -> None:
    # Nodes built by hand may leave optional fields out or set them to None or [].
    pairs = [
        (ast.Return(), ast.Return(value=None)),
        (ast.Return(value=ast.Constant(value=None)), ast.Return(value=None)),
        (ast.Call(func=ast.Name(id="f", ctx=ast.Load()), args=[], keywords=[]),
         ast.Call(func=ast.Name(id="f", ctx=ast.Load()), args=[ast.Name(id="a", ctx=ast.Load())], keywords=[])),
        (ast.Raise(exc=None, cause=None), ast.Raise()),
    ]
    for a, b in pairs:
        assert same_tree(a, b) == (ast.dump(a) == ast.dump(b)), (ast.dump(a), ast.dump(b))


def test_same_tree_needs_nodes() -> None:
    with pytest.raises(TypeError):
        same_tree(ast.Pass(), "pass")  # type: ignore[arg-type]


if __name__ == "__main__":
    sys.exit(pytest.main([__file__, "-q"]))
