"""Pass 1: a code object's raw bytecode → canonical instructions (``instructions.Instr``).

``versions`` names what differs between CPython releases; ``opcodes`` spells every
operation one way whatever the release (with ``blockstack`` and ``finally38`` for the
exception blocks of 3.8-3.10); ``bytecode`` is a lean decoder for the equivalence check;
``pyc`` and ``marshalscan`` read ``.pyc`` files and refuse malformed ones; ``wellformed``
refuses code objects whose bytecode no compiler wrote, before anything reads ``co_code``.
"""
