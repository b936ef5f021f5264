"""A frame-evaluation hook: see, skip or replace the code of each Python frame before it runs.

This is the PEP 523 hook that torch.compile is built on, opened up as a small, stable API::

    from framescope import evalframe

    def callback(frame, cache_entries, frame_state):
        print("calling", frame.f_code.co_name)
        return None                      # run it normally, do not ask again for this code

    with evalframe.hook(callback):
        main()

A callback is called when a frame starts and none of the cache entries of its code object
(made by earlier calls of the same callback) has a guard that passes. It returns

* ``None``: run the frame normally; frames of this code no longer reach the callback;
* :data:`RUN_ORIGINAL`: run the frame normally this time only;
* :class:`GuardedCode`: add a cache entry, ``code`` guarded by ``guard(f_locals) -> bool``,
  and run ``code`` in place of the frame's code now. Later frames of the same code run the
  first entry whose guard passes; when none passes the callback is called again.

Everything a hook leaves on code objects (skip marks, cache entries) is undone when the hook
is removed. torch is imported on first use, never by importing this module.
"""
from __future__ import annotations

import dis
import inspect
import threading
import types
from dataclasses import dataclass, field
from typing import Any, Callable, Dict, Hashable, List, Optional, Sequence, Tuple

from framescope import torch_internals as _torch
from framescope.torch_text import render_guard
from framescope.torch_internals import UnsupportedTorchError

__all__ = [
    "RUN_ORIGINAL",
    "CacheEntry",
    "Dispatcher",
    "Frame",
    "GuardError",
    "GuardedCode",
    "UnsupportedTorchError",
    "cache_entries",
    "hook",
    "render_guard",
    "reset",
    "set_callback",
    "signature_key",
]

Guard = Callable[[Dict[str, object]], object]

# Code objects whose frames can be suspended and resumed. The hook runs a replacement as a
# plain call, which would break them, so they are never handed to a callback.
_SUSPENDABLE = inspect.CO_GENERATOR | inspect.CO_COROUTINE | inspect.CO_ASYNC_GENERATOR
# Flags that decide how a frame is set up, so a replacement must have the same ones.
_FRAME_FLAGS = inspect.CO_VARARGS | inspect.CO_VARKEYWORDS | inspect.CO_NEWLOCALS


class GuardError(Exception):
    """A guard of a :class:`GuardedCode` raised; the original exception is the cause."""


class _RunOriginal:
    def __repr__(self) -> str:
        return "RUN_ORIGINAL"


#: Callback result: run the frame's own code this time, and call back again next time.
RUN_ORIGINAL = _RunOriginal()


@dataclass(frozen=True)
class Frame:
    """The frame about to run, as a callback sees it."""

    #: The code object the frame is about to run.
    f_code: types.CodeType
    #: The frame's local variables so far: its arguments (a fresh copy, changes are lost).
    f_locals: Dict[str, object]
    #: The globals of the frame's function.
    f_globals: Dict[str, object] = field(repr=False)
    #: The builtins the frame sees.
    f_builtins: Dict[str, object] = field(repr=False)
    #: The current line: the ``def`` line, since the frame has not started yet.
    f_lineno: int


@dataclass(frozen=True)
class GuardedCode:
    """Callback result: run ``code`` now and for later calls whose ``guard`` passes."""

    #: The code to run in place of the frame's code. It must take the same arguments and
    #: have the same cell and free variables (checked; a mismatch raises ValueError).
    code: types.CodeType
    #: ``guard(f_locals) -> bool``, called with the arguments of a later call of the same
    #: code; the entry runs when it returns true. Not called for the call that made it.
    guard: Guard
    #: The guard as text, for listings; by default the guard's name.
    text: Optional[str] = None


@dataclass(frozen=True)
class CacheEntry:
    """One cache entry of a code object: code that runs in its place when a guard passes."""

    #: The code that runs in place of the original when the guard passes.
    code: types.CodeType
    #: ``guard(f_locals) -> bool``: whether the entry applies to a dict of local variables.
    guard: Guard = field(repr=False)
    #: The guard as Python source where possible; parts that are not are kept as comments.
    text: str
    #: Who made the entry: ``"framescope"`` (a hook) or ``"torch.compile"``.
    origin: str
    #: torch.compile's compile id ("0/1") for its entries, None for a hook's.
    compile_id: Optional[str] = None


Callback = Callable[[Frame, List[CacheEntry], Dict[Any, Any]], object]


# --------------------------------------------------------------------------- the hook


class _Session:
    """One installed callback: the object torch calls, and what it left on code objects.

    torch remembers the callback object that made each cache entry and only tries an entry
    while that object is installed, so each session sees its own entries and no others.
    """

    def __init__(self, callback: Callback) -> None:
        #: The user's callback.
        self.callback = callback
        #: The callback that was installed before this session (None: no hook).
        self.prior: object = None
        #: id(code) -> (code, frame_state dict) for each code object passed to the callback.
        self.frame_states: Dict[int, Tuple[types.CodeType, Dict[Any, Any]]] = {}
        #: Code objects marked "skip", to unmark when the session ends.
        self.skipped: List[types.CodeType] = []
        #: id(code) -> code for each code object given a cache entry.
        self.guarded: Dict[int, types.CodeType] = {}
        #: False once the session ended: its entries' guards then always fail.
        self.live = True
        #: An exception a guard raised, to raise from the next callback call.
        self.guard_error: Optional[BaseException] = None

    def __call__(self, frame: Any, cache_entry: object, frame_state: object) -> object:
        # torch calls this with its own callback slot emptied, so neither this method nor
        # the user's callback or guards are ever seen by the hook themselves.
        code = frame.f_code
        if code.co_filename in _OWN_FILES:
            # framescope's own frames, for good, and what they call too; except code that
            # switches hooks (torch would undo the switch when it returns) or reads them.
            return _torch.skip_result() if code in _HOOK_AWARE else _torch.skip_all_result()
        if code.co_flags & _SUSPENDABLE:
            self.skipped.append(code)
            return _torch.skip_result()
        error = self.guard_error
        if error is not None:
            self.guard_error = None
            raise error
        entries = [raw.payload for raw in _torch.raw_entries(code) if raw.owner is self]
        state = self.frame_states.setdefault(id(code), (code, {}))[1]
        # torch gives 3.10 frames that have not started line 0; they are at the def line.
        lineno = frame.f_lineno or code.co_firstlineno
        view = Frame(code, frame.f_locals, frame.f_globals, frame.f_builtins, lineno)
        result = self.callback(view, entries, state)
        if result is None:
            self.skipped.append(code)
            return _torch.skip_result()
        if result is RUN_ORIGINAL:
            return _torch.run_original_result()
        if isinstance(result, GuardedCode):
            return self._install(code, result)
        raise TypeError(
            "an evalframe callback must return None, RUN_ORIGINAL or GuardedCode, not %s"
            % type(result).__name__
        )

    def _install(self, code: types.CodeType, result: GuardedCode) -> object:
        check_replacement(code, result.code)
        if not callable(result.guard):
            raise TypeError("GuardedCode.guard must be callable, not %s" % type(result.guard).__name__)
        text = _guard_name(result.guard) if result.text is None else result.text
        if not isinstance(text, str):
            raise TypeError("GuardedCode.text must be a str, not %s" % type(text).__name__)
        entry = CacheEntry(code=result.code, guard=result.guard, text=text, origin="framescope")
        self.guarded[id(code)] = code
        return _torch.guarded_result(result.code, self._predicate(entry, code), text, entry)

    def _predicate(self, entry: CacheEntry, code: types.CodeType) -> Callable[[dict], bool]:
        guard = entry.guard

        def predicate(f_locals: Dict[str, object]) -> bool:
            if not self.live or self.guard_error is not None:
                return False
            try:
                return bool(guard(f_locals))
            except BaseException as exc:
                # torch swallows a guard's exception as "guard failed"; keep it, fail every
                # guard of this session for this call, and raise it from the callback call
                # that the miss leads to (KeyboardInterrupt and the like as they are).
                if isinstance(exc, Exception):
                    error = GuardError(
                        "guard %s of %s raised %s: %s"
                        % (entry.text, _where(code), type(exc).__name__, _one_line(exc))
                    )
                    error.__cause__ = exc
                    exc = error
                self.guard_error = exc
                return False

        return predicate

    def suspend(self) -> None:
        """Lift the skip marks while another hook is installed on top of this one."""
        for code in self.skipped:
            _torch.mark_default(code)

    def resume(self) -> None:
        """Put the skip marks back when the hook on top is removed."""
        for code in self.skipped:
            _torch.mark_skip(code)

    def close(self) -> None:
        """End the session: unmark skipped code and drop the cache entries it made."""
        self.live = False
        self.suspend()
        for code in self.guarded.values():
            raws = _torch.raw_entries(code)
            # An entry of torch.compile or of a live session would be lost too; left in
            # place, the dead entries are never run (their guards now fail).
            if all(isinstance(raw.owner, _Session) and not raw.owner.live for raw in raws):
                _torch.reset_code(code)
        self.skipped = []
        self.guarded = {}
        self.frame_states = {}


def _install(callback: Callback) -> _Session:
    session = _Session(callback)
    session.prior = _torch.set_eval_frame(session)
    if isinstance(session.prior, _Session):
        session.prior.suspend()
    return session


def _uninstall(session: _Session) -> None:
    prior = session.prior
    # Hooks removed out of order must not come back: restore the newest one still live.
    while isinstance(prior, _Session) and not prior.live:
        prior = prior.prior
    # Restore first: what runs below must not reach the session's callback.
    _torch.set_eval_frame(prior)
    session.close()
    if isinstance(prior, _Session):
        prior.resume()


class hook:
    """Context manager: install ``callback`` as the frame-evaluation hook of this thread.

    On exit (also on an exception) the previous hook comes back and everything the callback
    left on code objects is undone. If the callback or a guard raises, the exception
    propagates from the call being started and the hook stays off until the block ends.
    """

    def __init__(self, callback: Callback) -> None:
        if not callable(callback):
            raise TypeError("hook() needs a callable, not %s" % type(callback).__name__)
        #: The user's callback.
        self.callback = callback
        self._session: Optional[_Session] = None

    def __enter__(self) -> "hook":
        if self._session is not None:
            raise RuntimeError("this evalframe.hook is already installed")
        self._session = _install(self.callback)
        return self

    def __exit__(self, *exc_info: object) -> None:
        session, self._session = self._session, None
        _uninstall(session)  # type: ignore[arg-type]


_thread = threading.local()  # .installed: the session of set_callback, per thread


def set_callback(callback: Optional[Callback]) -> Optional[Callback]:
    """Install ``callback`` as this thread's hook until :func:`reset` (None: remove it).

    Replaces a callback installed earlier by ``set_callback`` and returns that one.
    """
    if callback is not None and not callable(callback):
        raise TypeError("set_callback() needs a callable or None, not %s" % type(callback).__name__)
    installed = getattr(_thread, "installed", None)
    previous = None
    if installed is not None:
        _thread.installed = None
        _uninstall(installed)
        previous = installed.callback
    if callback is not None:
        _thread.installed = _install(callback)
    return previous


def reset() -> None:
    """Remove the callback installed by :func:`set_callback`, restoring the hook before it."""
    set_callback(None)


# --------------------------------------------------------------------------- replacement code


def check_replacement(original: types.CodeType, replacement: object) -> None:
    """Raise TypeError/ValueError unless ``replacement`` can run in place of ``original``.

    torch copies the frame's arguments, cell and free variables into the new frame by
    position, so a replacement whose layout differs would read the wrong values or crash.
    """
    if not isinstance(replacement, types.CodeType):
        raise TypeError("GuardedCode.code must be a code object, not %s" % type(replacement).__name__)
    if replacement.co_flags & _SUSPENDABLE:
        raise TypeError(
            "GuardedCode.code for %s is a generator or coroutine, which cannot replace a frame"
            % _where(original)
        )
    for what, get in _LAYOUT:
        want, got = get(original), get(replacement)
        if want != got:
            raise ValueError(
                "GuardedCode.code does not fit %s: %s %r, expected %r" % (_where(original), what, got, want)
            )


def _arg_names(code: types.CodeType) -> Tuple[str, ...]:
    count = code.co_argcount + code.co_kwonlyargcount
    count += bool(code.co_flags & inspect.CO_VARARGS) + bool(code.co_flags & inspect.CO_VARKEYWORDS)
    return code.co_varnames[:count]


def _flag_names(flags: int) -> Tuple[str, ...]:
    return tuple(name for bit, name in sorted(dis.COMPILER_FLAG_NAMES.items()) if flags & bit)


_LAYOUT: Sequence[Tuple[str, Callable[[types.CodeType], object]]] = (
    ("arguments", _arg_names),
    ("positional-only count", lambda code: code.co_posonlyargcount),
    ("positional count", lambda code: code.co_argcount),
    ("keyword-only count", lambda code: code.co_kwonlyargcount),
    ("frame flags", lambda code: _flag_names(code.co_flags & _FRAME_FLAGS)),
    ("cell variables", lambda code: code.co_cellvars),
    ("free variables", lambda code: code.co_freevars),
)


# --------------------------------------------------------------------------- cache entries


def cache_entries(obj: object) -> List[CacheEntry]:
    """The cache entries of a function's code, in the order they are tried.

    ``obj`` is a function, method, code object, module, or what torch.compile returned.
    Lists torch.compile's entries and those of hooks installed now.
    """
    code = code_of(obj)
    result = []
    for raw in _torch.raw_entries(code):
        if isinstance(raw.owner, _Session):
            if raw.owner.live:
                result.append(raw.payload)
            continue
        text = render_guard(raw.code_parts, _local_names(code))
        result.append(
            CacheEntry(
                code=raw.code, guard=raw.check, text=text, origin="torch.compile", compile_id=raw.compile_id
            )
        )
    return result


def code_of(obj: object) -> types.CodeType:
    """The code object torch keeps ``obj``'s cache entries on.

    For what torch.compile returned, that is the first code object behind its wrappers that
    has cache entries (for torch's own functions and modules, torch.compile compiles a
    wrapper frame shared by all of them); without entries, the wrapped function's code.
    """
    items = _wrapped(obj)
    codes = [code for code in map(_code_of_item, items) if code is not None]
    for code in codes:
        if _torch.raw_entries(code):
            return code
    leaves = [_code_of_item(item) for item in items if not _torch.compiled_inner(item)]
    for code in leaves + codes:
        if code is not None:
            return code
    raise TypeError("expected a function, method, module or code object, not %s" % type(obj).__name__)


def _wrapped(obj: object) -> List[object]:
    """``obj`` and what torch.compile's wrappers around it wrap, outermost first."""
    found: List[object] = []
    queue = [obj]
    while queue and len(found) < 16:  # wrappers nest a few levels at most
        item = queue.pop(0)
        if not any(item is seen for seen in found):
            found.append(item)
            queue.extend(_torch.compiled_inner(item))
    return found


def _code_of_item(obj: object) -> Optional[types.CodeType]:
    if isinstance(obj, types.CodeType):
        return obj
    code = getattr(getattr(obj, "__func__", obj), "__code__", None)
    if isinstance(code, types.CodeType):
        return code
    forward = getattr(obj, "forward", None)  # a module: its forward method
    code = getattr(getattr(forward, "__func__", forward), "__code__", None)
    return code if isinstance(code, types.CodeType) else None


def _local_names(code: types.CodeType) -> frozenset:
    return frozenset(code.co_varnames + code.co_cellvars + code.co_freevars)


# --------------------------------------------------------------------------- dispatcher


class Dispatcher:
    """Call a function's torch.compile'd code chosen by a key, skipping guard evaluation.

    ``Dispatcher(fn, key=None, **compile_options)``: the first call with a new
    ``key(*args, **kwargs)`` goes through ``torch.compile(fn, **compile_options)``; the
    cache entry it used is then remembered for that key, and later calls with the key run
    that entry's code directly, without torch's guards. The key must capture everything the
    compiled code depends on (the default, :func:`signature_key`, covers tensor shapes,
    strides, dtypes and devices and scalar values, but not global state such as grad mode).
    """

    def __init__(
        self, fn: Callable[..., Any], key: Optional[Callable[..., Hashable]] = None, **compile_options: Any
    ) -> None:
        func = getattr(fn, "__func__", fn)
        if not isinstance(func, types.FunctionType):
            raise TypeError("Dispatcher needs a Python function or method, not %s" % type(fn).__name__)
        #: The function or bound method being dispatched.
        self.fn = fn
        self._key = signature_key if key is None else key
        self._options = compile_options
        self._compiled: Optional[Callable[..., Any]] = None
        self._table: Dict[Hashable, Callable[..., Any]] = {}
        #: key -> the compiled code used for it (None: torch.compile made no entry).
        self.codes: Dict[Hashable, Optional[types.CodeType]] = {}

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        key = self._key(*args, **kwargs)
        try:
            fast = self._table[key]
        except KeyError:
            return self._first_call(key, args, kwargs)
        except TypeError:
            raise TypeError("Dispatcher key %r is not hashable" % (key,)) from None
        return fast(*args, **kwargs)

    def lookup(self, *args: Any, **kwargs: Any) -> Optional[Callable[..., Any]]:
        """What a call with these arguments would run, if their key has been seen; else None.

        That is a function (a bound method for a method) made from the compiled code, or
        ``fn`` itself where torch.compile made no entry.
        """
        return self._table.get(self._key(*args, **kwargs))

    def _first_call(self, key: Hashable, args: tuple, kwargs: dict) -> Any:
        if self._compiled is None:
            self._compiled = _torch.compile_function(self.fn, self._options)
        result = self._compiled(*args, **kwargs)
        target = self._target()
        code = None if target is None else self._used_code(target, args, kwargs)
        self.codes[key] = code
        self._table[key] = self.fn if code is None else self._function(target, code)  # type: ignore[arg-type]
        return result

    def _target(self) -> Optional[Tuple[types.FunctionType, object]]:
        """(function, bound self) whose frame torch.compile compiled for ``fn``, or None.

        That is ``fn`` itself, except for torch's own functions and modules, for which
        torch.compile compiles a wrapper function around them.
        """
        for item in _wrapped(self._compiled):
            func = getattr(item, "__func__", item)
            if isinstance(func, types.FunctionType) and any(
                not isinstance(raw.owner, _Session) for raw in _torch.raw_entries(func.__code__)
            ):
                return func, getattr(item, "__self__", None) if func is not item else None
        return None

    def _used_code(
        self, target: Tuple[types.FunctionType, object], args: tuple, kwargs: dict
    ) -> Optional[types.CodeType]:
        # The entry just used went to the front of the list, so it is the first one whose
        # guard passes on these arguments.
        f_locals = _frame_locals(target, args, kwargs)
        for raw in _torch.raw_entries(target[0].__code__):
            if not isinstance(raw.owner, _Session) and raw.check(f_locals):
                return raw.code
        return None

    @staticmethod
    def _function(target: Tuple[types.FunctionType, object], code: types.CodeType) -> Callable[..., Any]:
        func, bound = target
        fast = types.FunctionType(code, func.__globals__, func.__name__, func.__defaults__, func.__closure__)
        fast.__kwdefaults__ = func.__kwdefaults__
        return fast if bound is None else types.MethodType(fast, bound)


def _frame_locals(target: Tuple[types.FunctionType, object], args: tuple, kwargs: dict) -> Dict[str, object]:
    """The local variables a frame of the target function starts with for these arguments."""
    func, bound = target
    if bound is not None:
        args = (bound,) + args
    binding = inspect.signature(func, follow_wrapped=False).bind(*args, **kwargs)
    binding.apply_defaults()
    f_locals = dict(binding.arguments)
    for name, cell in zip(func.__code__.co_freevars, func.__closure__ or ()):
        f_locals[name] = cell.cell_contents
    return f_locals


def signature_key(*args: Any, **kwargs: Any) -> Hashable:
    """A key for :class:`Dispatcher`: each argument's type and, for tensors, shape, strides,
    dtype, device and requires_grad; for scalars, the value; for lists and tuples, the key of
    each item; for other objects, the identity.
    """
    key: Tuple[Hashable, ...] = tuple(map(_value_key, args))
    if kwargs:
        key += tuple(sorted((name, _value_key(value)) for name, value in kwargs.items()))
    return key


_SCALARS = frozenset([int, float, bool, complex, str, bytes, type(None)])
_SCALAR, _TENSOR, _SEQUENCE, _OBJECT = range(4)
_KINDS: Dict[type, int] = {}  # type -> how _value_key treats it; the key is on the hot path


def _value_key(value: Any) -> Hashable:
    kind = type(value)
    how = _KINDS.get(kind)
    if how is None:
        how = _KINDS[kind] = _classify(kind)
    if how == _TENSOR:
        return kind, value.shape, value.stride(), value.dtype, value.device, value.requires_grad
    if how == _SCALAR:
        return kind, value
    if how == _SEQUENCE:
        return (kind,) + tuple(map(_value_key, value))
    return kind, id(value)


def _classify(kind: type) -> int:
    if kind in _SCALARS:
        return _SCALAR
    if kind is tuple or kind is list:
        return _SEQUENCE
    if all(hasattr(kind, name) for name in ("shape", "stride", "dtype", "device", "requires_grad")):
        return _TENSOR
    return _OBJECT


# --------------------------------------------------------------------------- helpers


def _where(code: types.CodeType) -> str:
    return "%s (%s:%d)" % (code.co_name, code.co_filename, code.co_firstlineno)


def _guard_name(guard: object) -> str:
    name = getattr(guard, "__qualname__", None) or type(guard).__qualname__
    return "%s(f_locals)" % name


def _one_line(exc: BaseException) -> str:
    return " ".join(str(exc).split()) or "(no message)"


_OWN_FILES = frozenset([_where.__code__.co_filename, *_torch.FILES,
                        render_guard.__code__.co_filename])
# framescope's code that installs, removes or reads the callback: the hook must stay on for
# it (see _Session.__call__).
_HOOK_AWARE = frozenset(
    fn.__code__
    for fn in (
        hook.__enter__,
        hook.__exit__,
        set_callback,
        reset,
        _install,
        _uninstall,
        _torch.set_eval_frame,
        _torch.current_callback,
    )
)
