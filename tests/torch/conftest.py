"""Shared by the torch tests: no test may leave a cache entry that fell back to Dynamo's
bytecode in a dump, except one that a test forces on purpose. Each test's ``tmp_path`` is
checked after the test; the folders a module makes otherwise (``tmp_path_factory``, for
module-scoped fixtures) are checked when the module is done."""
from __future__ import annotations

from pathlib import Path
from typing import List, Set

import pytest

#: A fallback a test makes on purpose says so in its reason.
FORCED = "forced for the test"

#: The tmp_path folders checked after their test already.
_CHECKED: Set[Path] = set()


def fallbacks_under(folder: Path) -> List[str]:
    """Every cache entry, in each dump folder below ``folder``, that fell back (unforced)."""
    from framescope.report.index import dumps_under

    return ["%s: %s" % (dump.path, why) for dump in dumps_under(str(folder))
            for why in dump.fallbacks() if FORCED not in why]


def fail_on_fallbacks(folders: List[Path]) -> None:
    found = [line for folder in folders for line in fallbacks_under(folder)]
    if found:
        pytest.fail("cache entries fell back to Dynamo's bytecode:\n" + "\n".join(found), pytrace=False)


@pytest.fixture(autouse=True)
def no_fallback(request):
    folder = request.getfixturevalue("tmp_path") if "tmp_path" in request.fixturenames else None
    yield
    if folder is not None:
        _CHECKED.add(folder)
        fail_on_fallbacks([folder])


@pytest.fixture(scope="module", autouse=True)
def no_fallback_in_module_folders(tmp_path_factory: pytest.TempPathFactory):
    """The folders made under the session's base temp while the module ran, but for the
    tmp_path folders checked after their tests."""
    base = tmp_path_factory.getbasetemp()
    before = folders_in(base)
    yield
    fail_on_fallbacks(sorted(folders_in(base) - before - _CHECKED))


def folders_in(base: Path) -> Set[Path]:
    # Not the links pytest makes to the newest of each numbered name (``<name>current``).
    return {path for path in base.iterdir() if path.is_dir() and not path.is_symlink()}
