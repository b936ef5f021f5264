"""Exceptions raised by framescope."""
from typing import Optional


class DecompilationError(Exception):
    """The decompiler cannot produce source that is equivalent to the bytecode.

    The message is one line: the code object's name, the offset and opcode
    where decompilation stopped, and the reason.
    """

    def __init__(
        self,
        reason: str,
        *,
        code_name: Optional[str] = None,
        offset: Optional[int] = None,
        opname: Optional[str] = None,
    ) -> None:
        #: Why decompilation failed, in a few words.
        self.reason = reason
        #: ``co_name`` of the code object being decompiled, when known.
        self.code_name = code_name
        #: Bytecode offset of the instruction where it failed, when known.
        self.offset = offset
        #: Opcode name at ``offset``, when known.
        self.opname = opname
        super().__init__(self._message())

    @property
    def internal(self) -> bool:
        """Whether this is a failure inside the decompiler (an exception it did not expect,
        relabelled), rather than a refusal with a reason: a defect, counted apart."""
        return "internal error (" in self.reason

    def _message(self) -> str:
        where = []
        if self.code_name is not None:
            where.append(self.code_name)
        if self.offset is not None:
            where.append("offset %d" % self.offset)
        if self.opname is not None:
            where.append(self.opname)
        text = " ".join(self.reason.split())
        return "%s: %s" % (", ".join(where), text) if where else text


class UnsupportedTorchError(RuntimeError):
    """torch is missing, or lacks an internal that a framescope feature needs.

    The message is one line: what torch lacks, which feature needs it, and what works
    without it.
    """
