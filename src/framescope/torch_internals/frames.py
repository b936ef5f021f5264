"""torch's frame-evaluation hook and cache entries, for framescope.evalframe and framescope.debug.

Facts this module relies on (checked on torch 2.10 to 2.15):

* ``set_eval_frame(callback)`` installs ``callback(frame, first_cache_entry, frame_state)``
  for the current thread and returns the previous one; ``None`` means plain evaluation.
* The callback must return a ``ConvertFrameReturn``: its ``frame_exec_strategy`` decides what
  happens to this frame (and, with ``apply_to_code``, to every later frame of the same code),
  its ``guarded_code`` (a ``GuardedCode``) becomes a new cache entry that runs at once.
* A cache entry's guard must be a ``GuardManagerWrapper``; a Python predicate becomes one
  through ``root.add_lambda_guard``. An exception raised by such a predicate is swallowed by
  torch and counts as a failed guard.
* Cache entries remember the backend that made them (the callback object itself unless it
  has ``_torchdynamo_orig_backend``) and are only tried while a callback with the same
  backend is installed, so entries made by framescope and by torch.compile never mix.
"""
from __future__ import annotations

import threading
import types
from typing import Any, Callable, Dict, List, NamedTuple, Optional, Tuple

from framescope.torch_internals.probes import DEBUG, EVALFRAME, FOREIGN_ENTRY_REASON, require


class RawEntry(NamedTuple):
    """One cache entry of a code object, as torch stores it, in plain Python terms."""

    #: The code object that runs when the guard passes.
    code: types.CodeType
    #: The object the entry was made for: a framescope hook, or torch.compile's backend.
    owner: object
    #: What framescope attached to an entry it made itself; None for torch.compile's.
    payload: object
    #: ``check(f_locals) -> bool``: runs the entry's guard on a dict of local variables.
    check: Callable[[Dict[str, object]], bool]
    #: The guard as torch prints it, one string per check (often not valid Python).
    code_parts: Tuple[str, ...]
    #: torch.compile's id for the compile that made the entry ("0/1"), or None.
    compile_id: Optional[str]
    #: The guard manager itself (its tree of checks: see guard_tree).
    manager: object = None


class _Torch:
    """The torch objects framescope uses, resolved once after probing them."""

    def __init__(self) -> None:
        from torch._C._dynamo import eval_frame as c_eval_frame
        from torch._dynamo import guards, types as dynamo_types

        #: torch._C._dynamo.eval_frame: set_eval_frame, set_code_exec_strategy, ...
        self.c = c_eval_frame
        #: Class of the object a callback returns.
        self.ConvertFrameReturn = dynamo_types.ConvertFrameReturn
        #: Class of a new cache entry (code plus guard manager).
        self.GuardedCode = dynamo_types.GuardedCode
        #: Class of a frame strategy: (action for this frame, action for its callees).
        self.Strategy = dynamo_types.FrameExecStrategy
        #: DEFAULT / SKIP / RUN_ONLY.
        self.Action = dynamo_types.FrameAction
        #: Guard manager class for framescope's entries, see _hook_guard_class.
        self.HookGuard = _hook_guard_class(guards)

        action = self.Action
        # The results a framescope callback hands back to torch, made once: torch only reads
        # their fields. DEFAULT as the action for callees keeps the hook on in called code.
        self.skip = self.ConvertFrameReturn(
            frame_exec_strategy=self.Strategy(action.SKIP, action.DEFAULT), apply_to_code=True
        )
        self.skip_all = self.ConvertFrameReturn(
            frame_exec_strategy=self.Strategy(action.SKIP, action.SKIP), apply_to_code=True
        )
        self.run_original = self.ConvertFrameReturn(
            frame_exec_strategy=self.Strategy(action.DEFAULT, action.DEFAULT), apply_to_code=False
        )
        self.default_strategy = self.Strategy(action.DEFAULT, action.DEFAULT)
        self.skip_strategy = self.Strategy(action.SKIP, action.DEFAULT)


def _hook_guard_class(guards: Any) -> type:
    # torch.compile walks every cache entry of a code object when it recompiles, to log why
    # each guard failed, and that walk needs fields only its own guard managers have. It
    # stops early for a DeletedGuardManagerWrapper and just prints its reason, so
    # framescope's guards subclass that: torch.compile then treats them as foreign entries.
    class HookGuardManager(guards.DeletedGuardManagerWrapper):
        def __init__(self, payload: object) -> None:
            super().__init__(FOREIGN_ENTRY_REASON)
            #: What framescope wants back when it lists this entry.
            self.framescope_payload = payload

    return HookGuardManager


_torch: Optional[_Torch] = None


def load() -> _Torch:
    """torch's frame-evaluation internals, resolved once after probing them."""
    global _torch
    if _torch is None:
        require(EVALFRAME)
        _torch = _Torch()
    return _torch


# --------------------------------------------------------------------------- the hook


def set_eval_frame(callback: object) -> object:
    """Install ``callback`` as this thread's frame-evaluation callback; return the old one."""
    return load().c.set_eval_frame(callback)


def current_callback() -> object:
    """This thread's frame-evaluation callback (None when there is none)."""
    return load().c.get_eval_frame_callback()


def skip_result() -> object:
    """Callback result: run this frame normally and never call back for its code again."""
    return load().skip


def skip_all_result() -> object:
    """Callback result: like skip_result, and the frames it calls never reach the callback.

    Not for code that installs a callback itself: torch puts the callback that was active
    back when such a frame returns, undoing what the frame installed.
    """
    return load().skip_all


def run_original_result() -> object:
    """Callback result: run this frame normally, call back again next time."""
    return load().run_original


def guarded_result(
    code: types.CodeType, predicate: Callable[[Dict[str, object]], bool], text: str, payload: object
) -> object:
    """Callback result: add a cache entry (``code`` guarded by ``predicate``) and run it now.

    ``payload`` comes back in :attr:`RawEntry.payload` when the entry is listed.
    """
    t = load()
    guard = t.HookGuard(payload)
    _add_lambda_guard(guard.root, predicate, text)
    guard.populate_code_parts_for_debugging()
    entry = t.GuardedCode(code, guard, None)
    return t.ConvertFrameReturn(
        frame_exec_strategy=t.default_strategy, apply_to_code=False, guarded_code=entry
    )


def _add_lambda_guard(root: Any, predicate: Callable[[Dict[str, object]], bool], text: str) -> None:
    # torch 2.13+ take the user's stack as a third argument (None: none), torch 2.10-2.12
    # take the predicate and its text only. pybind11 checks the arguments before the call
    # and says TypeError; the predicate does not run here.
    try:
        root.add_lambda_guard(predicate, [text], None)
    except TypeError:
        root.add_lambda_guard(predicate, [text])


def mark_default(code: types.CodeType) -> None:
    """Undo a skip mark: frames of ``code`` reach the callback again."""
    t = load()
    t.c.set_code_exec_strategy(code, t.default_strategy)


def mark_skip(code: types.CodeType) -> None:
    """Put back a skip mark that mark_default took away."""
    t = load()
    t.c.set_code_exec_strategy(code, t.skip_strategy)


def reset_code(code: types.CodeType) -> None:
    """Drop every cache entry, mark and frame state torch keeps on ``code``."""
    load().c.reset_code(code)


# --------------------------------------------------------------------------- cache entries


def raw_entries(code: types.CodeType, feature: str = EVALFRAME) -> List[RawEntry]:
    """The cache entries of ``code`` in the order torch tries them (most recently used first);
    ``feature`` is the framescope feature that asks, for the message when torch lacks them."""
    require(feature)
    from torch._C._dynamo import eval_frame as c_eval_frame

    result = []
    for entry in c_eval_frame._debug_get_cache_entry_list(code):
        guard = entry.guard_manager
        compile_id = entry.compile_id
        result.append(
            RawEntry(
                code=entry.code,
                owner=entry.backend,
                payload=getattr(guard, "framescope_payload", None),
                check=guard.check,
                code_parts=tuple(guard.code_parts or ()),
                compile_id=None if compile_id is None else str(compile_id),
                manager=guard,
            )
        )
    return result


# --------------------------------------------------------------------------- torch.compile


def compile_function(fn: Callable[..., Any], options: Dict[str, Any]) -> Callable[..., Any]:
    """``torch.compile(fn, **options)``, after probing the hook's internals."""
    load()
    import torch

    return torch.compile(fn, **options)


def compiled_inner(obj: object) -> List[object]:
    """What a torch.compile wrapper wraps, one level down; [] for anything else."""
    inner = []
    orig = getattr(obj, "_torchdynamo_orig_callable", None)
    if orig is not None:
        inner.append(orig)
    if getattr(obj, "_orig_mod", None) is not None:
        # torch.compile(module) gives an OptimizedModule; for torch's own module classes it
        # compiles a wrapper frame around the module, reachable through its forward.
        inner.append(obj.forward)  # type: ignore[attr-defined]
    return inner


# --------------------------------------------------------------------------- framescope.debug
#
# A debugger's own Python code runs inside compiled code whenever it stops there: the trace
# function and everything it calls (pdb's prompt, debugpy's variable views) start frames on
# a thread where torch.compile's frame hook is still installed. torch.compile then compiles
# the debugger's functions, which costs time, shifts the numbers of later graphs
# (``__compiled_fn_<n>``) and puts the debugger into a dump. A code object marked
# SKIP/SKIP runs plainly and so does everything it calls.


def keep_out_of_dynamo(function: Callable[..., Any]) -> None:
    """Make every call of ``function`` (a hook torch calls: a log handler, a compile
    callback) and everything it calls run without torch.compile's frame hook.

    torch calls some of framescope's hooks from the program's own code with the frame hook
    on: a structured-trace record logged while a backward compiles lazily on the first
    ``loss.backward()`` under a compiled frame, say. torch.compile would otherwise compile
    framescope's functions, and a program would compile other frames, with other compile
    ids, under a dump than without one. Marks the code object (shared by every closure made
    from it), so marking again costs nothing. Not for a hook that calls back into torch:
    see framescope_side.
    """
    code = getattr(getattr(function, "__func__", function), "__code__", None)
    if isinstance(code, types.CodeType):
        _set_strategy(code, "SKIP", "SKIP")


class _SavedHooks(threading.local):
    def __init__(self) -> None:
        #: The program's frame hook at each framescope_side call running on this thread.
        self.stack: List[object] = []


_saved = _SavedHooks()


def framescope_side(function: Callable[..., Any]) -> Callable[..., Any]:
    """``function`` (a hook torch calls, which calls torch back through program_side) as a
    function that runs without torch.compile's frame hook, itself never seen by it.

    torch compiles a backward lazily, from the program's code, where the frame hook may be
    on: the compiler framescope wraps then runs torch's compiler under the program's hook,
    as it would without framescope (program_side), and framescope's own code without it.
    """

    # Resolved now: no Python function may run before the hook is off.
    set_hook = _eval_frame().set_eval_frame

    def outside_dynamo(*args: Any, **kwargs: Any) -> Any:
        program_hook = set_hook(None)
        _saved.stack.append(program_hook)
        try:
            return function(*args, **kwargs)
        finally:
            _saved.stack.pop()
            set_hook(program_hook)

    # The frame itself is not shown to the hook; what it calls is, until the hook is off.
    _set_strategy(outside_dynamo.__code__, "SKIP", "DEFAULT")
    _copy_names(function, outside_dynamo)
    return outside_dynamo


def program_side(function: Callable[..., Any]) -> Callable[..., Any]:
    """``function`` (torch's, called from framescope code under framescope_side) as a
    function that runs under the frame hook the program had when torch called framescope."""

    set_hook = _eval_frame().set_eval_frame

    def as_the_program_runs(*args: Any, **kwargs: Any) -> Any:
        if not _saved.stack:
            return function(*args, **kwargs)
        own = set_hook(_saved.stack[-1])
        try:
            return function(*args, **kwargs)
        finally:
            set_hook(own)

    _copy_names(function, as_the_program_runs)
    return as_the_program_runs


def _copy_names(source: object, target: Callable[..., Any]) -> None:
    for name in ("__name__", "__qualname__"):
        value = getattr(source, name, None)
        if isinstance(value, str):
            setattr(target, name, value)


def _eval_frame() -> Any:
    from torch._C._dynamo import eval_frame as c_eval_frame

    return c_eval_frame


def _set_strategy(code: types.CodeType, current: str, callees: str) -> None:
    from torch._dynamo.types import FrameAction, FrameExecStrategy

    strategy = FrameExecStrategy(getattr(FrameAction, current), getattr(FrameAction, callees))
    _eval_frame().set_code_exec_strategy(code, strategy)


def on_guards_checked(callback: Callable[[bool], None]) -> Any:
    """Call ``callback(hit)`` each time torch has checked the guards of a frame that has cache
    entries: ``hit`` is whether one passed. A hook installed before (torch's guard
    collectives) keeps working: it is called first and its verdict stands. Returns a
    Removable, or None where this torch has no such hook."""
    from framescope.torch_internals.compiles import Removable
    from framescope.torch_internals.probes import GUARD_HOOK, missing

    if missing(GUARD_HOOK):
        return None
    c = _eval_frame()
    previous: List[Any] = [None]

    def guard_complete(hit: bool) -> bool:
        if previous[0] is not None:
            hit = previous[0](hit)
        callback(hit)
        return hit

    keep_out_of_dynamo(guard_complete)
    previous[0] = c.set_guard_complete_hook(guard_complete)

    def remove() -> None:
        c.set_guard_complete_hook(previous[0])

    return Removable(remove)


def mark_skip_all(code: types.CodeType) -> None:
    """Make frames of ``code``, and every frame they call, run without torch.compile's hook."""
    require(DEBUG)
    _set_strategy(code, "SKIP", "SKIP")
