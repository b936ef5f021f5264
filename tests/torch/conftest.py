"""Shared by the torch tests: no test may leave a cache entry that fell back to Dynamo's
bytecode in a dump under its ``tmp_path``, except one that a test forces on purpose."""
from __future__ import annotations

from pathlib import Path
from typing import List

import pytest

#: A fallback a test makes on purpose says so in its reason.
FORCED = "forced for the test"


def fallbacks_under(folder: Path) -> List[str]:
    """Every cache entry, in each dump folder below ``folder``, that fell back (unforced)."""
    from framescope.report.index import dumps_under

    return ["%s: %s" % (dump.path, why) for dump in dumps_under(str(folder))
            for why in dump.fallbacks() if FORCED not in why]


@pytest.fixture(autouse=True)
def no_fallback(request):
    folder = request.getfixturevalue("tmp_path") if "tmp_path" in request.fixturenames else None
    yield
    if folder is not None:
        found = fallbacks_under(folder)
        if found:
            pytest.fail("cache entries fell back to Dynamo's bytecode:\n" + "\n".join(found), pytrace=False)
