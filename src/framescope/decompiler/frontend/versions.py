"""What differs between the CPython releases framescope reads (3.8-3.14), as named facts.

Each constant says one thing about the running interpreter's bytecode, code objects or
grammar, with the release that brought it; every version test in framescope reads one of
these rather than comparing ``sys.version_info`` itself.
"""
from __future__ import annotations

import sys

#: (major, minor) of the running interpreter.
PY = sys.version_info[:2]

# --------------------------------------------------------------------------- encoding

#: Instructions are followed by inline cache entries (3.11+).
INLINE_CACHES = PY >= (3, 11)
#: ``dis.hasarg`` lists the opcodes that take an argument (3.12+); before, they are the
#: ones from ``dis.HAVE_ARGUMENT`` on.
LISTS_ARG_OPCODES = PY >= (3, 12)
#: Jump arguments count 2-byte code units (3.10+), not bytes.
JUMPS_COUNT_UNITS = PY >= (3, 10)
#: A relative jump counts from after the jump's inline caches (3.12+).
JUMPS_FROM_AFTER_CACHES = PY >= (3, 12)
#: An instruction without an argument ends an ``EXTENDED_ARG`` prefix (3.10+; before,
#: ``dis`` carries the prefix on).
NO_ARG_ENDS_EXTENDED_ARG = PY >= (3, 10)
#: ``dis`` reads an argument of 2**31 or more as negative (3.11+).
SIGNED_ARGUMENTS = PY >= (3, 11)
#: A code object keeps the bytecode the interpreter runs apart from ``co_code``, and
#: specialises it in place (``_co_code_adaptive``, 3.11+). ``co_code`` is a copy of it with
#: each instruction put back to its base opcode and as many code units after it zeroed as
#: that opcode has inline caches: reading it writes past the copy's end when the last
#: instruction's caches run past the bytecode. Reading ``_co_code_adaptive`` only copies.
ADAPTIVE_CODE = PY >= (3, 11)
#: Monitoring (``sys.monitoring``, and ``sys.settrace`` on top of it) replaces instructions of
#: the adaptive code by ``INSTRUMENTED_LINE`` or ``INSTRUMENTED_INSTRUCTION`` (3.12+), which
#: keep the opcode they replaced in tables Python cannot read. CPython crashes making a code
#: object whose bytecode holds them, so a code object that has them was instrumented by the
#: interpreter itself after it ran.
MONITORING_HIDES_OPCODES = PY >= (3, 12)
#: The tier-2 optimizer may replace an instruction of the adaptive code by ``ENTER_EXECUTOR``
#: (3.13+), keeping the opcode it replaced in its own tables. It runs only where the
#: experimental JIT is built and turned on; a code object made with that opcode has no such
#: table, and ``co_code`` reads it all the same (a crash).
EXECUTORS = PY >= (3, 13)
#: How far ``COMPARE_OP``'s argument is shifted above the operator's index in ``cmp_op``:
#: 4 flag bits (3.12), 5 (3.13+); up to 3.11 the argument is the index.
COMPARE_OP_SHIFT = 5 if PY >= (3, 13) else 4 if PY >= (3, 12) else 0
#: Locals, cells and free variables share one numbering, ``co_localsplusnames`` (3.11+);
#: before, cells and free variables are numbered apart. The code object's marshal layout
#: changed with it (no ``co_nlocals``; an exception table).
LOCALS_PLUS = PY >= (3, 11)
#: ``dis.Instruction.starts_line`` is a bool and the line is ``line_number`` (3.13+).
LINE_NUMBER_FIELD = PY >= (3, 13)
#: A code object's flags say whether its first constant is the docstring (3.14+); before,
#: a function's first constant is its docstring or None.
DOCSTRING_FLAG = PY >= (3, 14)

# --------------------------------------------------------------------------- names and calls

#: ``LOAD_GLOBAL``'s low argument bit pushes a NULL before the global (3.11+): calls have a
#: NULL-or-self slot below the callable.
LOAD_GLOBAL_NULL_BIT = PY >= (3, 11)
#: The NULL of a call is pushed after the callable, not before (3.13+).
NULL_AFTER_CALLABLE = PY >= (3, 13)
#: ``LOAD_METHOD`` is ``LOAD_ATTR`` with its low argument bit set (3.12+), and
#: ``LOAD_SUPER_ATTR`` keeps two flags in its low bits.
LOAD_ATTR_METHOD_BIT = PY >= (3, 12)
#: ``CALL_FUNCTION_EX`` has a NULL-or-self slot below the callable (3.11+) ...
CALL_EX_NULL_SLOT = PY >= (3, 11)
#: ... and always a keyword-arguments slot, NULL when there are none (3.14+).
CALL_EX_KWARGS_SLOT = PY >= (3, 14)
#: ``END_ASYNC_FOR``'s argument is a backward jump to the loop's ``SEND`` (3.14+), as ``dis``
#: reads it; before, it has no jump.
END_ASYNC_FOR_JUMPS_BACK = PY >= (3, 14)
#: Conditional jumps go forward only (3.12+): ``if test: body`` at the end of a loop body
#: jumps over a jump back to the loop when the test is true, as ``if not test: continue``
#: would; ``if test: continue`` jumps over it when the test is false.
FORWARD_CONDITIONAL_JUMPS = PY >= (3, 12)
#: ``x.a(...)`` is not compiled as a method call when the module imports ``x`` (3.11+): a NULL,
#: a plain load of ``x`` and a plain ``LOAD_ATTR`` (3.13+: the NULL after them).
IMPORTED_NAMES_SKIP_METHOD_CALLS = PY >= (3, 11)
#: ``MAKE_FUNCTION`` takes the qualified name from the stack (up to 3.10).
MAKE_FUNCTION_QUALNAME = PY < (3, 11)
#: A cell object is pushed by ``LOAD_FAST`` of the cell variable (3.13+), not ``LOAD_CLOSURE``.
CELLS_LOADED_BY_LOAD_FAST = PY >= (3, 13)
#: A call's keyword arguments after a ``**x`` are merged in one group at a time (``DICT_MERGE``,
#: 3.9+): ``f(**d, k=v)`` compiles as ``f(**d, **{'k': v})`` does; 3.8 builds them all at once.
KEYWORDS_MERGED_ONE_BY_ONE = PY >= (3, 9)
#: A ``**x`` argument is merged into a fresh dict (``BUILD_MAP 0`` + ``DICT_MERGE``, 3.9+), so
#: a dict that ``CALL_FUNCTION_EX`` takes as built holds keyword arguments: with more than 15
#: of them (3.10+) even ``f(k0=a, ..., k15=p)`` compiles that way.
UNPACKED_DICT_MERGED = PY >= (3, 9)
#: A call with more positional arguments than this passes them as one tuple to
#: ``CALL_FUNCTION_EX`` (3.10+), a constant one when they all are: ``f(0, ..., 30)`` compiles
#: as ``f(*(0, ..., 30))`` does. None where every such call keeps its arguments on the stack.
POSITIONAL_ARGS_ON_STACK = 30 if PY >= (3, 10) else None
#: ``in`` and ``is`` have their own opcodes, ``CONTAINS_OP`` and ``IS_OP`` (3.9+); before,
#: they are ``COMPARE_OP`` 6-9.
CONTAINS_OP = PY >= (3, 9)

# --------------------------------------------------------------------------- control flow

#: Exception handlers come from the code's exception table (3.11+), not from ``SETUP_*``
#: instructions and a block stack; a handler is entered with one exception value (and
#: ``lasti``), not three pairs, and ``POP_EXCEPT`` pops one value.
EXCEPTION_TABLE = PY >= (3, 11)
#: ``finally`` bodies are subroutines entered by ``CALL_FINALLY`` (3.8 only).
FINALLY_SUBROUTINES = PY < (3, 9)
#: How a finally body that leaves (``break``, ``continue``, ``return``) drops the exception
#: it was entered with before going on, without and with a return value kept on top: the
#: exception alone (3.11+), or its three values (up to 3.10).
FINALLY_EXIT_RELEASES = ((("POP_TOP", "POP_EXCEPT"), ("SWAP", "POP_TOP", "SWAP", "POP_EXCEPT"))
                         if EXCEPTION_TABLE else
                         (("POP_TOP", "POP_TOP", "POP_TOP", "POP_EXCEPT"),
                          ("ROT", "POP_TOP", "POP_TOP", "POP_TOP", "ROT", "POP_EXCEPT")))
#: A try statement whose finally body leaves (``break``, ``continue``, ``return``) pushes a
#: placeholder None before its block, counted in its handler's depth, which each way out of
#: the finally body pops with the exception (3.8; it stands for the return value that a
#: ``return`` in the try body keeps while the finally body runs).
FINALLY_EXIT_PLACEHOLDER = PY < (3, 9)
#: The compiler copies short code that ends the function (``return x``) into each block
#: that goes there (3.10+); before, it exists once.
COPIES_EXITS = PY >= (3, 10)
#: When every except clause leaves, the code after the try statement follows the clauses,
#: and only an else clause comes between the body and them (up to 3.11); 3.12+ lays out both
#: right after the body.
ELSE_BEFORE_CLAUSES = PY < (3, 12)
#: The copy of a finally body on the normal path jumps over the handler to the code after
#: the try statement, laid out after the handler (3.9-3.11; 3.12+ moves handlers to the end,
#: 3.8 calls the finally body): a copy that falls into code before the handler runs for a
#: statement that leaves the body.
AFTER_FINALLY_FOLLOWS_HANDLER = (3, 9) <= PY < (3, 12)
#: The code generator emits a try statement's else clause before its except clauses (3.11+;
#: before, after them): the locals first used in the else clause are numbered first.
ELSE_GENERATED_FIRST = PY >= (3, 11)
#: A ``return <constant>`` that ends a try body is laid out after the protected range, before
#: the handler (up to 3.13; 3.12-3.13 spell it ``RETURN_CONST``); 3.14 may put the code after
#: the statement there too.
CONSTANT_RETURN_BEFORE_HANDLER = PY < (3, 14)
#: A ``return <constant>`` out of a try statement shows that it leaves the statement: its
#: ``POP_BLOCK`` comes before the constant (up to 3.10), or the constant is loaded after the
#: protected range and not read as the body's own (3.14, see `CONSTANT_RETURN_BEFORE_HANDLER`).
CONSTANT_RETURN_LEAVES_TRY = not EXCEPTION_TABLE or not CONSTANT_RETURN_BEFORE_HANDLER
#: ``LOAD_CONST; RETURN_VALUE`` is folded into ``RETURN_CONST`` before the return of a
#: conditional value is copied into its arms (3.12-3.13): an arm that returns a constant by
#: the two instructions is such a copy, where a written ``return <constant>`` is one
#: ``RETURN_CONST``.
COPIED_CONSTANT_RETURN_UNFOLDED = (3, 12) <= PY < (3, 14)
#: The ``END_FINALLY`` that re-raises an exception no except clause matched is laid out to
#: fall through to the code after the try statement (3.8; 3.9+ end the clauses with
#: ``RERAISE``): a ``return <constant>`` laid out before the handler, after leaving the with
#: statements and except clauses around the try, is the body's own, not the code after it.
UNMATCHED_FALLS_THROUGH = PY < (3, 9)
#: A handler's ``END_FINALLY`` goes on with the code laid out after it when nothing is to
#: be re-raised (3.8): after a try statement whose body always leaves, that is the code
#: after the statement, which no jump reaches from its arm of an ``if`` (3.9+ end the
#: handler with ``RERAISE``).
HANDLER_END_FALLS_THROUGH = PY < (3, 9)
#: The peephole optimizer folds ``LOAD_CONST``s built into a tuple into one tuple constant
#: (3.8-3.9), but leaves a code object whose line table holds a jump of 255 or more bytes
#: in one step as it is: a long statement written on one line keeps ``BUILD_TUPLE``.
PEEPHOLE_SKIPS_LONG_LINES = PY < (3, 10)
#: A function whose last statement is not a ``return`` ends in ``return None`` even where
#: nothing reaches it (up to 3.9; 3.10+ drop unreached blocks).
KEEPS_UNREACHED_FINAL_RETURN = PY < (3, 10)
#: An except clause that ends in ``continue`` (or another way out) is still followed by its
#: ``POP_EXCEPT`` and jump past the statement, which nothing reaches (up to 3.9): the sign of
#: a written ``continue`` where running off a clause at the end of a loop body also jumps back.
KEEPS_UNREACHED_CLAUSE_EXIT = PY < (3, 10)
#: How a chained comparison (``a < x < b``) keeps its middle operand under the first result
#: for the next comparison, as canonical instructions: ``SWAP 2; COPY 2`` (3.11+), before
#: ``DUP_TOP; ROT_THREE``.
CHAIN_KEEPS_OPERAND = [("SWAP", 2), ("COPY", 2)] if PY >= (3, 11) else [("COPY", 1), ("ROT", 3)]
#: The peephole optimizer turns a jump to a lone ``RETURN_VALUE`` into that ``RETURN_VALUE``
#: (up to 3.9): an arm of a returned conditional value may return it itself.
RETURN_JUMPS_THREADED = PY < (3, 10)
#: ``JUMP_IF_TRUE_OR_POP`` / ``JUMP_IF_FALSE_OR_POP`` exist (up to 3.11).
OR_POP_JUMPS = PY < (3, 12)
#: A conditional jump takes a bool that ``TO_BOOL`` made (3.13+): the jump itself cannot raise.
TO_BOOL = PY >= (3, 13)
#: An exhausted ``FOR_ITER`` jumps to an ``END_FOR`` that pops the iterator (3.12+) ...
FOR_ITER_TO_END_FOR = PY >= (3, 12)
#: ... followed by a ``POP_TOP`` of its own (3.13+).
END_FOR_THEN_POP_TOP = PY >= (3, 13)
#: A load of a local is borrowed (``LOAD_FAST_BORROW``, 3.14+) where the compiler's last pass
#: sees the value consumed in its own block. A value left on the stack when its block ends
#: (an arm of a conditional value, before the copy of the return that follows it) keeps
#: ``LOAD_FAST``, and so does code the pass never reaches: exception handlers, and the code
#: after a try statement that only the end of the body leads to (an else clause is reached).
BORROWED_LOADS = PY >= (3, 14)
#: ``yield from`` and ``await`` are a ``SEND`` loop (3.11+), not one ``YIELD_FROM`` ...
SEND_LOOPS = PY >= (3, 11)
#: ... that ends in ``END_SEND`` (3.12+).
END_SEND = PY >= (3, 12)
#: Swaps before stores of one line are resolved at compile time by reordering the stores (3.11+).
SWAPS_FOLDED_INTO_STORES = PY >= (3, 11)
#: A ``match`` case pushes a success flag over the subject's captures (3.10); later
#: releases test a copy of the result for None.
MATCH_SUCCESS_FLAG = PY < (3, 11)
#: A last ``case _`` alternative of an or-pattern leaves no code (3.12+ drops its ``COPY 1; POP_TOP``).
EMPTY_LAST_ALTERNATIVE = PY >= (3, 12)
#: ``assert False, msg`` compiles to the raise alone (3.10+); 3.8 and 3.9 keep the test.
ASSERT_FALSE_UNTESTED = PY >= (3, 10)
#: ``assert`` loads ``AssertionError`` with ``LOAD_GLOBAL`` (3.8; 3.9+ have
#: ``LOAD_ASSERTION_ERROR``): in a module or class body, where a name written in the source
#: is loaded with ``LOAD_NAME``, that load is an assert's.
ASSERT_LOADS_GLOBAL = PY < (3, 9)

# --------------------------------------------------------------------------- source and ast

#: f-string fields may reuse the string's quote and hold backslashes (PEP 701, 3.12+).
PEP701_FSTRINGS = PY >= (3, 12)
#: A starred tuple without parentheses is allowed in ``for x in *a, b`` and ``x += *a, b`` (3.9+).
STAR_TUPLE_ANYWHERE = PY >= (3, 9)
#: ``except*`` clauses (PEP 654) parse, as ``ast.TryStar`` (3.11+).
EXCEPT_STAR = PY >= (3, 11)
#: ``d[*a]`` parses (3.11+).
STAR_SUBSCRIPT = PY >= (3, 11)
#: ``ast.dump`` leaves out fields that are None or empty lists (3.13+).
AST_DUMP_OMITS_EMPTY = PY >= (3, 13)

# --------------------------------------------------------------------------- .pyc files

#: The releases whose bytecode framescope reads, oldest and newest.
OLDEST_READ, NEWEST_READ = (3, 8), (3, 14)
#: The first ``.pyc`` magic number (the header's first two bytes, little-endian) of each
#: release's development, alphas and betas included: a magic number belongs to the last
#: release here whose first number it reaches (CPython's Lib/importlib/_bootstrap_external.py).
MAGIC_FIRST = (
    (3000, "3.0"), (3141, "3.1"), (3160, "3.2"), (3190, "3.3"), (3250, "3.4"), (3320, "3.5"), (3360, "3.6"),
    (3390, "3.7"), (3400, "3.8"), (3420, "3.9"), (3430, "3.10"), (3450, "3.11"), (3500, "3.12"),
    (3550, "3.13"), (3600, "3.14"), (3650, "3.15"),
)
#: Past the last release's first number by this much, a magic number is of no known release.
MAGIC_SPAN = 50
#: Python 2 wrote magic numbers from 20121 (1.5) to 62211 (2.7).
MAGIC_PYTHON2 = range(20121, 62212)
