"""The package itself: what importing it costs, its version, its error type."""
from __future__ import annotations

import re
import sys
from pathlib import Path

import pytest

import framescope

PYPROJECT = Path(__file__).resolve().parent.parent / "pyproject.toml"

# Prints the torch modules loaded after running the code before it, one per line.
TORCH_PROBE = """
import sys
print("\\n".join(sorted(m for m in sys.modules if m == "torch" or m.startswith("torch."))))
"""


def torch_modules_after(run_python, code: str) -> list:
    return run_python(code + TORCH_PROBE).stdout.split()


@pytest.mark.needs_subprocess
@pytest.mark.parametrize("module", ["framescope", "framescope.errors", "framescope.decompiler"])
def test_import_does_not_import_torch(run_python, module):
    assert torch_modules_after(run_python, "import " + module) == []


#: Each torch-facing module, and a first use of it that needs torch (compiling nothing).
FIRST_USE = {
    "framescope.evalframe": "from framescope import evalframe\nevalframe.cache_entries(lambda: 0)",
    "framescope.dump": (
        "import tempfile, framescope.dump\n"
        "with tempfile.TemporaryDirectory() as folder, framescope.dump(folder):\n    pass"),
    "framescope.torch_internals": "from framescope import torch_internals\ntorch_internals.load()",
    "framescope.depyf": "import framescope.depyf\nframescope.depyf.install()\nframescope.depyf.uninstall()",
    "framescope.depyf.optimization": (
        "from framescope.depyf.optimization import TorchCompileWrapperWithCustomDispatcher as W\n"
        "class M(W):\n    def forward(self, x):\n        return x\nM(lambda x: x)"),
}


@pytest.mark.needs_subprocess
@pytest.mark.parametrize("module", sorted(FIRST_USE))
def test_torch_facing_modules_import_torch_on_first_use_only(run_python, module):
    assert torch_modules_after(run_python, "import " + module) == []


@pytest.mark.torch  # skips where torch is not installed; FRAMESCOPE_REQUIRE_TORCH=1 makes that an error
@pytest.mark.needs_subprocess
@pytest.mark.parametrize("module", sorted(FIRST_USE))
def test_torch_facing_modules_import_torch_on_first_use(run_python, module):
    assert "torch" in torch_modules_after(run_python, FIRST_USE[module])


@pytest.mark.needs_subprocess
def test_import_takes_under_150_ms(run_python):
    # In a fresh interpreter, the best of three (a loaded machine slows single runs).
    code = (
        "import time\n"
        "start = time.perf_counter()\n"
        "import framescope\n"
        "print(time.perf_counter() - start)\n"
    )
    best = min(float(run_python(code).stdout) for _ in range(3))
    assert best < 0.150


@pytest.mark.torch
@pytest.mark.needs_subprocess
def test_torch_probe_sees_torch(run_python):
    # The check above would pass vacuously if the probe could not see torch at all.
    assert "torch" in torch_modules_after(run_python, "import framescope, torch")


def pyproject_version() -> str:
    # A plain scan, since tomllib only exists from Python 3.11 on.
    in_project = False
    for line in PYPROJECT.read_text(encoding="utf-8").splitlines():
        if line.startswith("["):
            in_project = line.strip() == "[project]"
        match = re.match(r'\s*version\s*=\s*"([^"]+)"', line)
        if in_project and match:
            return match.group(1)
    raise AssertionError("no version in the [project] table of %s" % PYPROJECT)


def test_version_matches_pyproject():
    assert framescope.__version__ == pyproject_version()


def test_the_torch_sessions_require_the_test_torch_extra():
    # With FRAMESCOPE_REQUIRE_TORCH=1 none of these may skip (tests/conftest.py).
    from tests.conftest import extra_packages

    required = extra_packages("test-torch")
    assert {"transformers", "debugpy", "ipykernel", "nbclient", "nbformat"} <= required
    assert extra_packages("test") <= required and {"pytest", "hypothesis"} <= required
    assert "framescope" not in required and "torch" not in required


@pytest.mark.skipif(
    sys.platform == "emscripten", reason="under Pyodide framescope runs from src/, not installed"
)
def test_version_matches_installed_metadata():
    from importlib.metadata import version

    assert version("framescope") == framescope.__version__


def test_decompilation_error_is_an_exception():
    assert issubclass(framescope.DecompilationError, Exception)
    with pytest.raises(Exception):
        raise framescope.DecompilationError("unsupported opcode")


def test_decompilation_error_message_is_one_line():
    err = framescope.DecompilationError(
        "stack underflow\n  while   merging\tbranches",
        code_name="f",
        offset=12,
        opname="POP_TOP",
    )
    message = str(err)
    assert "\n" not in message
    for part in ("f", "offset 12", "POP_TOP", "stack underflow while merging branches"):
        assert part in message
    assert (err.reason, err.code_name, err.offset, err.opname) == (
        "stack underflow\n  while   merging\tbranches",
        "f",
        12,
        "POP_TOP",
    )


def test_decompilation_error_without_location():
    assert str(framescope.DecompilationError("no bytecode")) == "no bytecode"


def test_public_names():
    for name in framescope.__all__:
        assert hasattr(framescope, name), name
