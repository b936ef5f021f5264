"""The side channel passes leave on AST nodes: what copies of a marked node keep."""
import ast
import copy

from framescope.decompiler.simulate import marks


def test_a_node_without_marks_gives_the_default():
    node = ast.Name(id="x", ctx=ast.Load())
    assert marks.marked(node, marks.COPIED) is False
    assert marks.marked(node, marks.GROUP, None) is None
    assert marks.marked(42, marks.ASYNC) is False  # any stack value may be asked


def test_a_deep_copy_keeps_the_marks():
    node = ast.Name(id="x", ctx=ast.Load())
    marks.mark(node, marks.COPIED)
    assert marks.marked(copy.deepcopy(node), marks.COPIED) is True


def test_a_later_mark_on_a_shallow_copy_leaves_the_original_alone():
    node = ast.Name(id="x", ctx=ast.Load())
    marks.mark(node, marks.COPIED)
    twin = copy.copy(node)
    marks.mark(twin, marks.BUILTIN)
    assert marks.marked(twin, marks.BUILTIN) and marks.marked(twin, marks.COPIED)
    assert not marks.marked(node, marks.BUILTIN)
