"""depyf's ``depyf.explain``: :func:`dump_src`, the full source of a compiled function,
and depyf's names for ``prepare_debug``, ``debug``, ``install`` and ``uninstall``."""
from __future__ import annotations

from types import CodeType
from typing import Any

__all__ = ["debug", "dump_src", "install", "prepare_debug", "uninstall"]


def dump_src(original_code: CodeType, module: Any = None) -> str:
    """The text of ``full_code_for_<fn>.py`` for ``original_code`` in the dump running now:
    its cache entries' guards and transformed code, its graphs and the dispatch between
    them. ``module`` (depyf: the module whose globals the code reads) is not needed: the
    dump knows. RuntimeError outside a dump, or for code torch.compile has not compiled."""
    from framescope.dump import active_session

    session = active_session()
    if session is None:
        raise RuntimeError("dump_src must be called inside prepare_debug (a framescope dump)")
    frame_id = session.frame_id(original_code)
    if frame_id is None:
        raise RuntimeError("%s has not been compiled by torch.compile in this dump" % original_code.co_name)
    from framescope.dump.naming import full_code_file

    return session.path_of(full_code_file(frame_id)).read_text(encoding="utf-8")


def __getattr__(name: str) -> Any:
    if name in ("debug", "prepare_debug", "install", "uninstall"):
        import framescope.depyf

        return getattr(framescope.depyf, name)
    raise AttributeError("module %r has no attribute %r" % (__name__, name))
