"""framescope.depyf without torch: the decompiler names, and depyf's signatures."""
from __future__ import annotations

import inspect

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
