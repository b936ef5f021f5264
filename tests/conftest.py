"""Configuration shared by all of framescope's tests.

Markers (registered in pyproject.toml):

* ``torch``: the test needs torch. It skips where torch is not installed, except that with
  ``FRAMESCOPE_REQUIRE_TORCH=1`` (set by scripts/test.py on the interpreter that has torch)
  a missing torch is an error, and a test skipped by ``pytest.importorskip`` of torch or of
  a package of the ``test-torch`` extra in pyproject.toml (transformers, debugpy, nbclient,
  ...) fails instead of skipping. Under Emscripten, which has no torch, it always skips.
* ``needs_subprocess``, ``needs_threads``, ``needs_sockets``: the test uses something that
  CPython on Emscripten (Pyodide) lacks; it skips there and runs everywhere else.

Fixtures: ``run_python`` runs code in a fresh interpreter (skipping under Emscripten).

Hypothesis profiles: ``ci`` (the default when CI=true), ``dev`` (the default otherwise) and
``thorough``; the environment variable HYPOTHESIS_PROFILE picks another.
"""
from __future__ import annotations

import importlib.util
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Callable, FrozenSet, Optional

import pytest

IS_EMSCRIPTEN = sys.platform == "emscripten"
REQUIRE_TORCH = os.environ.get("FRAMESCOPE_REQUIRE_TORCH", "").lower() in ("1", "true", "yes")
IN_CI = os.environ.get("CI", "").lower() in ("1", "true", "yes")

# What each marker needs that CPython on Emscripten does not have.
EMSCRIPTEN_LACKS = {
    "needs_subprocess": "Emscripten (Pyodide) cannot start subprocesses",
    "needs_threads": "Emscripten (Pyodide) cannot start threads",
    "needs_sockets": "Emscripten (Pyodide) has no sockets",
}

PYPROJECT = Path(__file__).resolve().parent.parent / "pyproject.toml"

# The messages of pytest.importorskip (a failed import, or a version below minversion); the
# group is the module asked for, e.g. torch._dynamo.
IMPORT_SKIP = re.compile(r"(?:could not import|module) '([\w.]+)'")


def extra_packages(extra: str, pyproject: Path = PYPROJECT) -> FrozenSet[str]:
    """The import names of what ``pip install .[extra]`` installs on this interpreter: the
    extra's requirements whose markers hold here, with those of the extras of this project
    it names (``framescope[test]``). A distribution's import name is its normalized name."""
    from packaging.requirements import Requirement

    extras = _optional_dependencies(pyproject)
    found, pending, seen = set(), [extra], set()
    while pending:
        name = pending.pop()
        seen.add(name)
        for requirement in map(Requirement, extras[name]):
            if requirement.marker is not None and not requirement.marker.evaluate({"extra": name}):
                continue
            if requirement.name == "framescope":
                pending += [own for own in requirement.extras if own not in seen]
            else:
                found.add(re.sub(r"[-_.]+", "_", requirement.name).lower())
    return frozenset(found)


def _optional_dependencies(pyproject: Path) -> dict:
    try:
        import tomllib
    except ImportError:  # before 3.11: tomli, which pytest itself needs there
        import tomli as tomllib
    with open(str(pyproject), "rb") as handle:
        return tomllib.load(handle)["project"]["optional-dependencies"]


#: What may not skip with FRAMESCOPE_REQUIRE_TORCH=1: torch and the test-torch extra.
REQUIRED_MODULES: FrozenSet[str] = frozenset()


def torch_installed() -> bool:
    # find_spec looks for torch without importing it: the suite must not import torch
    # behind the back of tests that check who imports it.
    spec = importlib.util.find_spec("torch")
    # A directory named torch on sys.path without __init__.py (tests/torch, say) is a
    # namespace package, found only where the real torch is not installed.
    return spec is not None and spec.origin not in (None, "namespace")


# --------------------------------------------------------------------------- hypothesis

try:
    from hypothesis import HealthCheck, settings
except ImportError:  # hypothesis is a test dependency; conftest still loads without it
    settings = None
else:
    # CI: reproducible (derandomized), bounded, and no wall-clock deadline, since a loaded
    # 2-core machine or WebAssembly runs several times slower than a workstation.
    settings.register_profile(
        "ci",
        max_examples=50,
        deadline=None,
        derandomize=True,
        database=None,
        print_blob=True,
        suppress_health_check=[HealthCheck.too_slow],
    )
    settings.register_profile("dev", deadline=None)
    settings.register_profile("thorough", max_examples=2000, deadline=None)


def _hypothesis_profile() -> str:
    return os.environ.get("HYPOTHESIS_PROFILE") or ("ci" if IN_CI else "dev")


def _load_hypothesis_profile() -> None:
    if settings is None:
        return
    name = _hypothesis_profile()
    try:
        settings.load_profile(name)
    except Exception:  # hypothesis' InvalidArgument, with a long message
        raise pytest.UsageError(
            "HYPOTHESIS_PROFILE=%s is not a known profile; use ci, dev or thorough" % name
        )


# --------------------------------------------------------------------------- hooks


def pytest_configure(config: pytest.Config) -> None:
    global REQUIRED_MODULES
    _load_hypothesis_profile()
    if REQUIRE_TORCH and not torch_installed():
        raise pytest.UsageError(
            "FRAMESCOPE_REQUIRE_TORCH=1 but torch is not installed for %s" % sys.executable
        )
    if REQUIRE_TORCH:
        REQUIRED_MODULES = extra_packages("test-torch") | {"torch"}


def pytest_report_header(config: pytest.Config) -> str:
    if not torch_installed():
        torch = "not installed"
    else:
        try:
            from importlib.metadata import version

            torch = version("torch")
        except Exception:  # metadata missing or unreadable: still worth a header line
            torch = "installed"
    required = ", required" if REQUIRE_TORCH else ""
    profile = _hypothesis_profile() if settings is not None else "(hypothesis not installed)"
    return "framescope: torch %s%s; hypothesis profile %s; platform %s" % (
        torch,
        required,
        profile,
        sys.platform,
    )


def pytest_runtest_setup(item: pytest.Item) -> None:
    if IS_EMSCRIPTEN:
        for marker, reason in EMSCRIPTEN_LACKS.items():
            if item.get_closest_marker(marker) is not None:
                pytest.skip(reason)
    if item.get_closest_marker("torch") is not None and not torch_installed():
        if IS_EMSCRIPTEN:
            pytest.skip("torch does not run under Emscripten (Pyodide)")
        # With FRAMESCOPE_REQUIRE_TORCH=1, pytest_configure has already stopped the run.
        pytest.skip("torch is not installed")


def _required_skip_reason(report: pytest.BaseReport) -> Optional[str]:
    """The reason if the report is a skip by importorskip of a required module, else None."""
    if not report.skipped or hasattr(report, "wasxfail"):
        return None
    longrepr = report.longrepr
    reason = longrepr[2] if isinstance(longrepr, tuple) and len(longrepr) == 3 else str(longrepr)
    match = IMPORT_SKIP.search(reason)
    if match is None or match.group(1).partition(".")[0] not in REQUIRED_MODULES:
        return None
    return reason[len("Skipped: ") :] if reason.startswith("Skipped: ") else reason


def _fail_required_skip(report: pytest.BaseReport) -> None:
    reason = _required_skip_reason(report)
    if REQUIRE_TORCH and reason is not None:
        report.outcome = "failed"
        report.longrepr = "FRAMESCOPE_REQUIRE_TORCH=1, so this may not skip: %s" % reason


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo) -> object:
    outcome = yield
    _fail_required_skip(outcome.get_result())


@pytest.hookimpl(hookwrapper=True)
def pytest_make_collect_report(collector: pytest.Collector) -> object:
    # A module-level pytest.importorskip("torch") (or "nbclient") skips the whole module at collection.
    outcome = yield
    _fail_required_skip(outcome.get_result())


# --------------------------------------------------------------------------- fixtures


@pytest.fixture
def run_python() -> Callable[..., subprocess.CompletedProcess]:
    """Run Python source in a fresh interpreter (this one's executable and environment).

    Returns ``run(code, *, check=True, timeout=120) -> CompletedProcess`` with text stdout and
    stderr; with check=True a non-zero exit fails the test and shows stderr. Skips under
    Emscripten, which cannot start processes.
    """
    if IS_EMSCRIPTEN:
        pytest.skip(EMSCRIPTEN_LACKS["needs_subprocess"])

    def run(code: str, *, check: bool = True, timeout: float = 120) -> subprocess.CompletedProcess:
        done = subprocess.run(
            [sys.executable, "-c", code],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            universal_newlines=True,
            timeout=timeout,
        )
        if check and done.returncode != 0:
            pytest.fail(
                "fresh interpreter exited with %d:\n%s" % (done.returncode, done.stderr), pytrace=False
            )
        return done

    return run
