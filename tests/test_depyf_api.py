"""framescope.depyf without torch: the decompiler names, and depyf's signatures."""
from __future__ import annotations

import inspect

import pytest

from framescope import depyf
import framescope


def scale(x, k=2):
    return x * k


async def fetch(url):
    return url


def test_the_decompiler_names_are_framescopes():
    assert depyf.decompile is framescope.decompile
    assert depyf.DecompilationError is framescope.DecompilationError
    assert depyf.__version__ == framescope.__version__
    assert depyf.Decompiler(scale).decompile() == framescope.decompile(scale)


def test_decompiler_renames_the_function_and_indents():
    text = depyf.Decompiler(scale).decompile(indentation=2, overwite_fn_name="renamed")
    assert text.startswith("def renamed(x, k=2):\n  return x * k"), text
    namespace = {}
    exec(compile(text, "<renamed>", "exec"), namespace)
    assert namespace["renamed"](3) == 6
    assert depyf.Decompiler(fetch.__code__).decompile(overwite_fn_name="get").startswith("async def get(url):")


def test_signatures_are_depyfs():
    assert list(inspect.signature(depyf.prepare_debug).parameters)[:3] == [
        "dump_src_dir", "clean_wild_fx_code", "log_bytecode"]
    assert inspect.signature(depyf.prepare_debug).parameters["clean_wild_fx_code"].default is True
    assert inspect.signature(depyf.prepare_debug).parameters["log_bytecode"].default is False
    assert list(inspect.signature(depyf.Decompiler.decompile).parameters) == [
        "self", "indentation", "temp_prefix", "overwite_fn_name"]
    assert list(inspect.signature(depyf.install).parameters) == []
    assert list(inspect.signature(depyf.uninstall).parameters) == []
    assert list(inspect.signature(depyf.debug).parameters) == []
    from framescope.depyf.optimization import TorchCompileWrapperWithCustomDispatcher as Wrapper

    assert list(inspect.signature(Wrapper.__init__).parameters) == [
        "self", "compiled_callable", "use_custom_dispatcher"]
    assert list(inspect.signature(Wrapper.dispatch_to_code).parameters) == ["self", "index"]


def test_framescope_prepare_debug_is_depyfs():
    assert framescope.prepare_debug is framescope.dump.prepare_debug
    block = depyf.prepare_debug("somewhere", False, True)
    assert isinstance(block, framescope.dump.dump)
    assert block.log_bytecode is True and str(block.path) == "somewhere"


def test_uninstall_without_install_does_nothing():
    depyf.uninstall()
    depyf.uninstall()
    assert depyf._handle is None


def test_depyfs_decompile_example_dataclass_methods():
    # depyf's decompile() docstring: the methods dataclasses generate, which have no source file.
    from dataclasses import dataclass

    @dataclass
    class Data:
        x: int
        y: float

    init = depyf.decompile(Data.__init__)
    assert init.startswith("def __init__(self, x, y):\n") and "self.x = x\n" in init and "self.y = y" in init
    eq = depyf.decompile(Data.__eq__)
    assert eq.startswith("def __eq__(self, other):") and "NotImplemented" in eq
    namespace = {}
    exec(compile(eq, "<eq>", "exec"), namespace)
    assert namespace["__eq__"](Data(1, 2.0), Data(1, 2.0)) is True
    assert namespace["__eq__"](Data(1, 2.0), Data(1, 3.0)) is False


# --------------------------------------------------------------------------- depyf's helpers


def test_depyfs_helper_modules():
    import functools

    from framescope.depyf import utils
    from framescope.depyf.decompiler import Decompiler

    def outer():
        y = 2

        def inner(a, *rest, k=1, **named):
            return [a + y for _ in rest]
        return inner

    inner = outer()
    assert utils.get_function_signature(inner.__code__) == "def inner(a, k, *rest, **named):\n"
    assert utils.get_function_signature(scale.__code__, "g") == "def g(x, k):\n"
    assert [code.co_name for code in utils.collect_all_code_objects(outer.__code__)][:2] == ["outer", "inner"]

    class Adder:
        def __call__(self, a, b):
            return a + b
    assert utils.get_code_owner(Adder()) is Adder.__call__
    assert utils.get_code_owner(functools.partial(scale, 1)) is scale
    assert utils.get_code_owner(functools.lru_cache(None)(scale)) is scale
    for wrapped in (functools.partial(scale, 1), functools.lru_cache(None)(scale)):
        assert depyf.decompile(wrapped) == depyf.decompile(scale)
    assert depyf.decompile(Adder()) == "def __call__(self, a, b):\n    return a + b"
    names = Decompiler.supported_opnames()
    assert "LOAD_FAST" in names and "RETURN_VALUE" in names or "RETURN_CONST" in names
    assert not [name for name in names if name.startswith("INSTRUMENTED_")]


def test_decompile_ensure_gives_a_placeholder_with_the_reason():
    from framescope.depyf.utils import decompile_ensure

    assert decompile_ensure(scale.__code__) == framescope.decompile(scale.__code__)
    def neg(a, *b):
        return some_global  # noqa: F821
    code = neg.__code__.replace(co_names=())  # a name its bytecode loads is gone: refused everywhere
    text = decompile_ensure(code, "renamed")
    assert text.startswith("def renamed(a, *b):\n    # framescope: neg: malformed bytecode: name index 0"), text
    namespace = {}
    exec(compile(text, "<placeholder>", "exec"), namespace)
    assert namespace["renamed"](1) is None


def test_fix_irregular_code_gives_a_function_that_can_replace_the_original():
    from framescope.depyf.code_transform import add_indentation, fix_irregular_code, remove_indentation
    from framescope.depyf.utils import collect_all_code_objects

    def outer():
        y, z = 2, 3

        def inner(a):
            """Adds.
  indented"""
            return a + y * z
        return inner

    inner = outer()
    fixed = fix_irregular_code(inner.__code__, depyf.decompile(inner))
    made = [c for c in collect_all_code_objects(compile(fixed, "<fixed>", "exec")) if c.co_name == "inner"][0]
    assert made.co_freevars == ("y", "z") and made.co_code == inner.__code__.co_code
    assert made.co_consts == inner.__code__.co_consts  # the docstring's text is untouched
    inner.__code__ = made
    assert inner(1) == 7
    # Source from elsewhere that lacks a local variable: one that never runs is added.
    def with_extra(x, k=2):
        extra = x
        return extra * k
    bare = fix_irregular_code(with_extra.__code__, "def with_extra(x, k=2):\n    return x * k")
    made = [c for c in collect_all_code_objects(compile(bare, "<bare>", "exec")) if c.co_name == "with_extra"][0]
    assert made.co_varnames == ("x", "k", "extra")
    text = 'def f():\n    s = """a\nb"""\n    return s\n'
    assert remove_indentation(add_indentation(text)) == text
    assert add_indentation(text).splitlines()[2] == 'b"""'


def test_depyf_modules_by_depyfs_names():
    from framescope.depyf import decompiler, explain, utils  # noqa: F401

    assert decompiler.Decompiler is depyf.Decompiler and decompiler.decompile is framescope.decompile
    assert explain.prepare_debug is depyf.prepare_debug and explain.install is depyf.install
    with pytest.raises(RuntimeError, match="inside prepare_debug"):
        explain.dump_src(scale.__code__, None)


@pytest.mark.needs_subprocess
def test_import_depyf_means_framescope_once_installed(tmp_path):
    import os
    import subprocess
    import sys

    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    env = dict(os.environ, PYTHONPATH=os.path.join(root, "src"))
    env.pop("FRAMESCOPE_DEPYF", None)

    def python(*args, **extra):
        return subprocess.run([sys.executable, *args], capture_output=True, text=True, env=dict(env, **extra))

    site_dir = str(tmp_path / "site")
    done = python("-m", "framescope.depyf", "install", "--dir", site_dir)
    assert done.returncode == 0 and (tmp_path / "site" / "framescope_depyf.pth").exists(), done.stderr
    assert python("-m", "framescope.depyf", "status", "--dir", site_dir).stdout.startswith("installed: ")
    probe = ("import site; site.addsitedir(%r)\n"
             "import depyf, depyf.utils\n"
             "from depyf.decompiler import Decompiler\n"
             "from depyf.optimization import TorchCompileWrapperWithCustomDispatcher\n"
             "import framescope.depyf, framescope.depyf.utils, sys\n"
             "print(depyf is framescope.depyf, depyf.utils is framescope.depyf.utils, 'torch' in sys.modules)\n"
             "print(depyf.decompile(lambda x: x + 1))" % site_dir)
    done = python("-c", probe)
    assert done.stdout == "True True False\nlambda x: x + 1\n", done.stderr
    assert "No module named 'depyf'" in python("-c", probe, FRAMESCOPE_DEPYF="0").stderr
    done = python("-m", "framescope.depyf", "uninstall", "--dir", site_dir)
    assert done.returncode == 0 and not (tmp_path / "site" / "framescope_depyf.pth").exists()
    assert "No module named 'depyf'" in python("-c", probe).stderr
