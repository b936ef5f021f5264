"""Match statements (3.10+): the bytecode of ``match``/``case`` → `ast.Match`.

The compiler lays a match statement out as one run of code per case, in order::

    subject
    COPY 1                  (every case but the last, which consumes the subject)
    <pattern>               tests that jump to the case's failure code on no match
    STORE name...           the captures, all stored once the whole pattern matched
    <guard>                 a condition that jumps to the failure code when false
    POP_TOP                 (every case but the last: the subject's copy)
    <body>                  then a jump to the end of the statement
    POP_TOP...              failure code: pops what the pattern left, falls into the next case

and a trailing ``case _:`` as plain code after the last case's failure code.

Patterns are read by running their code on a stack of `Node` values (the subject, and
the items, values and attributes taken out of it) that collect what is tested:
``MATCH_SEQUENCE`` and a length test make a sequence pattern, ``MATCH_CLASS`` a class
pattern, a comparison a value pattern, a store a capture.  Stack shuffles (whose order
the optimiser rearranges from version to version) need no special treatment.  An
or-pattern is the one shape with several success paths: each alternative tests a copy
of its subject and jumps to a shared end, failing into the next alternative.

A case is only taken as such when every failure path pops back to one place with the
subject in place; anything else is not a match statement (and the walker goes on
with the instructions as they are).

This module holds the values the pattern code runs on and the ``ast`` patterns they
become; `case_reader` reads the cases, `matches` builds the statement.
"""
import ast
from dataclasses import dataclass, field
from typing import Any, Dict, List, Optional, Tuple

from framescope.decompiler.graph.cfg import Block
from framescope.decompiler.graph.copies import same_run
from framescope.decompiler.simulate import values as v

#: Instructions at which a match statement may start (with its subject on the stack); none before 3.10.
MATCH_STARTS = frozenset({"COPY", "MATCH_SEQUENCE", "MATCH_MAPPING", "MATCH_CLASS"} if hasattr(ast, "Match") else ())

#: Loads the pattern reader leaves to the simulator: class names, values and mapping keys.
LOADS = frozenset({
    "LOAD_CONST", "LOAD_GLOBAL", "LOAD_NAME", "LOAD_DEREF", "LOAD_FAST", "LOAD_ATTR", "LOAD_LOCALS",
    "LOAD_FROM_DICT_OR_GLOBALS", "LOAD_FROM_DICT_OR_DEREF", "BUILD_TUPLE",
})

#: Instructions read per case at most (a bound on work for code that is no pattern).
MAX_STEPS = 5000

#: A place in the code: a block and the index of an instruction in it.
Pos = Tuple[Block, int]
#: What building a statement returns: None (no match statement there), else a 1-tuple of
#: the block where the code after it starts (None: control ended).
Next = Optional[Tuple[Optional[Block]]]


class NotAPattern(Exception):
    """The code read is not the code of a pattern."""


@dataclass(eq=False)
class Node(v.Marker):
    """A value a pattern tests: the subject, or an item, value or attribute taken from it."""

    #: The starred item of a sequence pattern.
    star: bool = False
    #: What the pattern tests: None (nothing: a capture or ``_``), "value", "singleton",
    #: "sequence", "mapping", "class" or "or".
    kind: Optional[str] = None
    #: The value compared with (value, singleton patterns) or the class (class patterns).
    value: Any = None
    #: Sequences: the length test, ("==" or ">=", n), if any.
    length: Optional[Tuple[str, int]] = None
    #: Parts taken out: item index (or ("end", k) for ``len - k``), key or attribute position → node.
    items: Dict[Any, "Node"] = field(default_factory=dict)
    #: Sequences taken apart by ``UNPACK_*``: (item count, index of the starred item or None).
    unpack: Optional[Tuple[int, Optional[int]]] = None
    #: Mappings: the key expressions.
    keys: Optional[List[ast.expr]] = None
    #: Mappings: the name bound to the remaining items (``**rest``).
    rest: Optional[str] = None
    #: Class patterns: the number of positional patterns, and the keyword names.
    npos: int = 0
    kwnames: Tuple[str, ...] = ()
    #: Or-patterns: one node per alternative.
    alternatives: List["Node"] = field(default_factory=list)
    #: Names the value is captured in, innermost first.
    names: List[str] = field(default_factory=list)
    #: How many times it was copied for an as-pattern (``P as name``): each copy is
    #: tested (by P), the value itself captured.
    aliased: int = 0


@dataclass(eq=False)
class Test(v.Marker):
    """The outcome of a test on a node, consumed by the jump that follows it."""

    node: Node
    #: "sequence", "mapping", "length", "value", "singleton" or "result".
    kind: str
    #: The length test, the value, the singleton or the `Result`.
    arg: Any = None


@dataclass(eq=False)
class Length(v.Marker):
    """``len(node)``."""

    node: Node


@dataclass(eq=False)
class FromEnd(v.Marker):
    """``len(node) - k``: the index of an item after a starred wildcard."""

    node: Node
    k: int


@dataclass(eq=False)
class Result(v.Marker):
    """What ``MATCH_CLASS`` or ``MATCH_KEYS`` pushed: the tuple of attributes or values, or None."""

    node: Node
    #: "class" (data: class expression, positional count, keyword names) or "mapping" (data: keys).
    kind: str
    data: Any


@dataclass(eq=False)
class Rest(v.Marker):
    """The dict of a mapping's remaining items, bound by ``**rest``."""

    node: Node


class EmptyDict(v.Marker):
    """``BUILD_MAP 0``: the start of a ``**rest`` dict (3.11+)."""


class KeyItem(v.Marker):
    """A key taken from the keys tuple, deleted from the ``**rest`` dict (3.11+)."""


@dataclass(eq=False)
class Merged(v.Marker):
    """One capture of an or-pattern: the same name in each alternative."""

    members: List[Any]


@dataclass(eq=False)
class Case:
    """One case as read from the bytecode."""

    pattern: ast.AST
    guard: Optional[ast.expr]
    #: Where the pattern's code ends (the guard, the subject's pop or the body follows).
    matched: Pos
    #: Where the body starts; None where the compiler dropped it (``case 0 if False:``).
    body: Optional[Pos]
    #: Where control goes when the case does not match (None: it always matches).
    fail: Optional[Pos]
    #: Whether the pattern or guard can fail.
    refutable: bool


def after(pos: Pos) -> Pos:
    """The position after the instruction at ``pos`` when control falls through."""
    block, index = pos
    if index + 1 < len(block.instrs):
        return block, index + 1
    if block.fall is None:
        raise NotAPattern
    return block.fall, 0


def same_position(a: Pos, b: Pos) -> bool:
    """The same place, or two copies of one code that ends the function (the compiler copies those)."""
    if a[0] is b[0] and a[1] == b[1]:
        return True
    return (not a[0].succs() and not b[0].succs()
            and same_run(a[0].instrs[a[1]:], b[0].instrs[b[1]:]))


def follow_pops(pos: Pos, stack: List[Any], floor: int, passed: Optional[List[Block]] = None):
    """Follow a failure path: its pops (down to ``floor``) and jumps; return (position, stack).

    The blocks it runs through are added to ``passed``.
    """
    block, index = pos
    stack = list(stack)
    seen = 0
    while block is not None and seen < 1000:
        seen += 1
        if index >= len(block.instrs):
            block, index = block.fall, 0
            continue
        op = block.instrs[index].op
        if op == "POP_TOP" and len(stack) > floor:
            stack.pop()
            index += 1
        elif op == "JUMP":
            if passed is not None:
                passed.append(block)
            block, index = block.jump, 0
        else:
            if passed is not None and index:
                passed.append(block)
            return (block, index), stack
        if passed is not None and index >= len(block.instrs):
            passed.append(block)
    return None


def same_stack(a: List[Any], b: List[Any]) -> bool:
    return len(a) == len(b) and all(x is y for x, y in zip(a, b))


def takes_item(block: Block, index: int) -> bool:
    """Whether the ``COPY 1`` at ``index`` copies a sequence to take an item out of it (not an or/as)."""
    rest = block.instrs[index + 1:index + 3]
    if rest and rest[0].op == "GET_LEN":
        return True
    return len(rest) == 2 and rest[0].op == "LOAD_CONST" and type(rest[0].arg) is int \
        and rest[1].op == "BINARY_SUBSCR"


def merge(values: List[Any]) -> Any:
    """The value the alternatives of an or-pattern leave in one stack slot."""
    if all(x is values[0] for x in values):
        return values[0]
    members: List[Any] = []
    for value in values:
        if isinstance(value, Merged):
            members.extend(value.members)
        elif isinstance(value, (Node, Rest)):
            members.append(value)
        else:
            raise NotAPattern
    return Merged(members)


def result_size(result: Result) -> int:
    if result.kind == "class":
        _, npos, kwnames = result.data
        return npos + len(kwnames)
    return len(result.data)


def is_int(node: Any) -> bool:
    return isinstance(node, ast.Constant) and type(node.value) is int


def is_dotted(node: Any) -> bool:
    while isinstance(node, ast.Attribute):
        node = node.value
    return isinstance(node, ast.Name)


def is_value(node: Any) -> bool:
    """Whether ``node`` can be the value of a value pattern or a mapping key."""
    if isinstance(node, ast.Constant):
        return node.value is not Ellipsis
    return isinstance(node, ast.Attribute) and is_dotted(node)


def constant_strings(node: Any) -> Optional[Tuple[str, ...]]:
    if isinstance(node, ast.Tuple) and all(isinstance(e, ast.Constant) and isinstance(e.value, str)
                                           for e in node.elts):
        return tuple(e.value for e in node.elts)
    return None


# -- nodes → patterns -----------------------------------------------------------------------------
def wildcard() -> ast.AST:
    return ast.MatchAs(pattern=None, name=None)


def is_wildcard(pattern: ast.AST) -> bool:
    return isinstance(pattern, ast.MatchAs) and pattern.pattern is None and pattern.name is None


def to_pattern(node: Optional[Node]) -> ast.AST:
    """The pattern that tests what ``node`` collected."""
    if node is None:
        return wildcard()
    if node.star:
        if node.kind is not None or len(node.names) > 1:
            raise NotAPattern
        return ast.MatchStar(name=node.names[0] if node.names else None)
    names = list(node.names)
    pattern = tested(node)
    if pattern is None:
        pattern = ast.MatchAs(pattern=None, name=names.pop(0) if len(names) > node.aliased else None)
    if len(names) != node.aliased:
        raise NotAPattern  # each copy for an as-pattern is matched against, the value captured
    for name in names:
        pattern = ast.MatchAs(pattern=pattern, name=name)
    return pattern


def like_assignment(pattern: ast.AST) -> bool:
    """Whether a pattern compiles like an assignment: ``case a`` as ``a = x``, ``case a as b`` as ``a = b = x``."""
    if isinstance(pattern, ast.MatchAs) and pattern.name is not None and isinstance(pattern.pattern, ast.MatchAs):
        pattern = pattern.pattern
    return isinstance(pattern, ast.MatchAs) and pattern.pattern is None and pattern.name is not None


def tested(node: Node) -> Optional[ast.AST]:
    kind = node.kind
    if kind is None:
        if node.items or node.unpack:
            raise NotAPattern
        return None
    if kind == "value":
        return ast.MatchValue(value=node.value)
    if kind == "singleton":
        return ast.MatchSingleton(value=node.value)
    if kind == "or":
        return ast.MatchOr(patterns=[to_pattern(alt) for alt in node.alternatives])
    if kind == "class":
        count = node.npos + len(node.kwnames)
        parts = [to_pattern(node.items.get(i)) for i in range(count)]
        return ast.MatchClass(cls=node.value, patterns=parts[:node.npos], kwd_attrs=list(node.kwnames),
                              kwd_patterns=parts[node.npos:])
    if kind == "mapping":
        keys = node.keys or []
        return ast.MatchMapping(keys=keys, patterns=[to_pattern(node.items.get(i)) for i in range(len(keys))],
                                rest=node.rest)
    return ast.MatchSequence(patterns=sequence_items(node))


def sequence_items(node: Node) -> List[ast.AST]:
    if node.unpack is not None:  # (the starred item is a node of its own)
        return [to_pattern(node.items.get(i)) for i in range(node.unpack[0])]
    op, n = node.length if node.length is not None else (">=", 0)
    if not node.items:  # only wildcards: nothing is taken out
        if node.length is None:
            return [ast.MatchStar(name=None)]
        return [wildcard() for _ in range(n)] + ([ast.MatchStar(name=None)] if op == ">=" else [])
    if op != ">=":
        raise NotAPattern
    size = n + 1  # items taken by index around a starred wildcard
    front = [k for k in node.items if isinstance(k, int)]
    back = [size - k[1] for k in node.items if not isinstance(k, int)]
    star = max(front) + 1 if front else min(back) - 1
    if star < 0 or star >= size or any(i >= star for i in front) or any(i <= star for i in back):
        raise NotAPattern
    items = [wildcard() for _ in range(size)]
    for key, child in node.items.items():
        items[key if isinstance(key, int) else size - key[1]] = to_pattern(child)
    items[star] = ast.MatchStar(name=None)
    return items


# -- the statement -------------------------------------------------------------------------------
