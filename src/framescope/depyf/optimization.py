"""depyf's ``TorchCompileWrapperWithCustomDispatcher``: call a chosen compiled cache entry
directly, without torch.compile's guards.

::

    from framescope.depyf.optimization import TorchCompileWrapperWithCustomDispatcher

    class Model(TorchCompileWrapperWithCustomDispatcher):
        def __init__(self):
            super().__init__(torch.compile(self.forward))

        def forward(self, x):
            ...

        def __call__(self, x):
            if len(self.compiled_codes) == 1:
                with self.dispatch_to_code(0):
                    return self.forward(x)
            return self.compiled_callable(x)

The caller answers for what the guards would have checked. Importing this module does not
import torch; creating a wrapper does.
"""
from __future__ import annotations

import contextlib
import types
import warnings
import weakref
from abc import abstractmethod
from typing import Any, Callable, Dict, Iterator, List, Optional, Tuple

__all__ = ["TorchCompileWrapperWithCustomDispatcher"]


class TorchCompileWrapperWithCustomDispatcher:
    """A wrapper around ``torch.compile`` of its own ``forward``, dispatching by hand.

    Subclasses implement ``forward``, call ``__init__`` with what ``torch.compile`` made of
    it, and dispatch in ``__call__``: ``self.compiled_codes`` holds the code torch.compile
    made for ``forward`` called on this object, in compile order, and inside
    ``with self.dispatch_to_code(i):`` a call of ``self.forward`` runs the i-th of them,
    guards unchecked. Under a dump, that is the code the cache entry runs (compiled from its
    dumped file, where breakpoints stop).
    """

    def __init__(self, compiled_callable: Callable[..., Any], use_custom_dispatcher: bool = True) -> None:
        from framescope import torch_internals

        #: What torch.compile returned for ``self.forward``.
        self.compiled_callable = compiled_callable
        #: The code of the class's ``forward``, which torch.compile compiles.
        self.original_code_object: types.CodeType = self.__class__.forward.__code__
        #: The code torch.compile made for this object's ``forward``, in compile order.
        self.compiled_codes: List[types.CodeType] = []
        #: Whether ``__call__`` should dispatch by hand (for subclasses; not read here).
        self.use_custom_dispatcher = use_custom_dispatcher
        # id(code made) -> (compile id, code): to find the code its cache entry runs.
        self._compile_ids: Dict[int, Tuple[Optional[str], types.CodeType]] = {}
        self._warned = False
        # The hook holds the wrapper weakly, and goes when the wrapper does.
        handle = torch_internals.register_bytecode_hook(_hook_of(weakref.ref(self)), torch_internals.DEPYF_DISPATCH)
        weakref.finalize(self, handle.remove)

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        """Dispatch here; by default, call the compiled callable (with its guards)."""
        return self.compiled_callable(*args, **kwargs)

    @abstractmethod
    def forward(self, *args: Any, **kwargs: Any) -> Any:
        ...

    def bytecode_hook(self, old_code: types.CodeType, new_code: types.CodeType) -> None:
        """Called after each compile of ``forward`` (of any object): keep ``new_code`` if the
        frame compiled was this object's."""
        from framescope import torch_internals

        frame_locals = torch_internals.compiling_locals(torch_internals.DEPYF_DISPATCH)
        if frame_locals is not None and frame_locals.get("self") is self:
            self.compiled_codes.append(new_code)

    @contextlib.contextmanager
    def dispatch_to_code(self, index: int) -> Iterator[None]:
        """Inside the block, ``self.forward`` (on any object of the class) runs
        ``compiled_codes[index]`` directly: torch.compile's code has the arguments, cell
        and free variables of ``forward``, so it can stand in as the function's code."""
        owner = self.__class__.forward
        owner.__code__ = self.running_code(self.compiled_codes[index])
        try:
            yield
        finally:
            owner.__code__ = self.original_code_object

    def running_code(self, code: types.CodeType) -> types.CodeType:
        """The code torch's cache entry runs for ``code`` that torch.compile made: ``code``
        itself, or, when a dump put the code compiled from its file in the entry, that."""
        from framescope import torch_internals

        compile_id, _made = self._compile_ids.get(id(code), (None, code))
        if compile_id is None:
            return code
        for entry in torch_internals.raw_entries(self.original_code_object, torch_internals.DEPYF_DISPATCH):
            if entry.compile_id == compile_id:
                return entry.code
        return code

    def _on_bytecode(self, old_code: types.CodeType, new_code: types.CodeType) -> None:
        from framescope import torch_internals

        if old_code is not self.original_code_object:
            return
        try:
            compile_id = torch_internals.current_compile_id(torch_internals.DEPYF_DISPATCH)
            self._compile_ids[id(new_code)] = (compile_id, new_code)
            self.bytecode_hook(old_code, new_code)
        except Exception as exc:  # runs inside torch.compile: warn, never fail the compile
            if not self._warned:
                self._warned = True
                warnings.warn("%s could not record code torch.compile made: %s: %s"
                              % (type(self).__name__, type(exc).__name__, exc), stacklevel=2)


def _hook_of(wrapper: "weakref.ReferenceType[TorchCompileWrapperWithCustomDispatcher]") -> Callable[..., None]:
    def hook(old_code: types.CodeType, new_code: types.CodeType) -> None:
        alive = wrapper()
        if alive is not None:
            alive._on_bytecode(old_code, new_code)
        return None

    return hook
