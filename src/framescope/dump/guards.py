"""torch's guard text as Python: one expression per guard part, over ``L`` and ``G``.

torch prints each check of a cache entry's guard as a "code part" that mostly reads as
Python over ``L`` (the frame's locals) and ``G`` (its globals), but not always: some carry a
``, type=<class 'int'>`` suffix, some name torch's global state, some call helpers that
exist only inside torch. Each part becomes a Python expression; parts with no Python
spelling become calls to small helper functions whose source is returned alongside, so
that the full-code file that shows them defines them.
"""
from __future__ import annotations

import ast
import builtins
import functools
import re
from typing import Any, Dict, FrozenSet, List, NamedTuple, Optional, Sequence, Set

from framescope import torch_text

# Helper functions a rendered guard may call, by name: their source in the full-code file.
HELPERS: Dict[str, str] = {
    "___check_type_id": '''def ___check_type_id(value, type_id):
    """The type of value is the class that had this id when the entry was compiled."""
    return id(type(value)) == type_id''',
    "___check_obj_id": '''def ___check_obj_id(value, object_id):
    """value is the very object that had this id when the entry was compiled."""
    return id(value) == object_id''',
    "___check_tensor": '''def ___check_tensor(value, dtype, device, requires_grad, size, stride):
    """A tensor like the one the entry was compiled for (None: any size/stride there)."""
    def same(have, want):
        return len(have) == len(want) and all(w is None or h == w for h, w in zip(have, want))

    return (
        isinstance(value, torch.Tensor)
        and value.dtype == dtype
        and (device is None or value.device.index == device)
        and value.requires_grad == requires_grad
        and same(value.size(), size)
        and same(value.stride(), stride)
    )''',
    "___check_global_state": '''def ___check_global_state(state=None):
    """torch's global settings are as when the entry was compiled (the main ones). torch
    before 2.13 does not print the settings it compares with (state None): it checks
    them in C++."""
    if state is None:
        return True
    return (
        torch.is_grad_enabled() == state["grad_mode"]
        and torch.are_deterministic_algorithms_enabled() == state["deterministic_algorithms"]
        and torch.get_num_threads() == state["num_threads"]
    )''',
    "___check_torch_function_mode_stack": '''def ___check_torch_function_mode_stack():
    """The stack of TorchFunctionMode objects is as when the entry was compiled (checked by
    torch in C++)."""
    return True''',
    "___torch_guard": '''def ___torch_guard(text):
    """A check with no plain Python spelling (text is torch's), written where framescope
    could not read torch's guard tree: only torch can make it, so here it fails."""
    raise LookupError("only torch can make this check: " + text)''',
    "___torch_leaf": '''def ___torch_leaf(entry, number, value):
    """One of torch's checks with no plain Python spelling, made by torch itself: check
    number (counted from 0, in this function's order) of the entry's guard, on value. It
    needs the process that compiled the entry; elsewhere it raises LookupError, and the
    guard fails."""
    from framescope.dump.live_guards import check_leaf

    return check_leaf(entry, number, value)''',
    "___torch_entry": '''def ___torch_entry(entry, L):
    """torch's own check of the entry's whole guard, for checks of values Python cannot reach
    (torch's text for them is not Python). Needs the process that compiled the entry."""
    from framescope.dump.live_guards import check_entry

    return check_entry(entry, L)''',
    "___dict_contains": '''def ___dict_contains(key, mapping):
    return key in mapping''',
    "___odict_getitem": '''def ___odict_getitem(mapping, key):
    return collections.OrderedDict.__getitem__(mapping, key)''',
    "___tuple_iterator_len": '''def ___tuple_iterator_len(iterator):
    return len(iterator.__reduce__()[1][0]) - iterator.__reduce__()[2]''',
    "___namedtuple_fields": '''def ___namedtuple_fields(value):
    return value._fields''',
    "___dataclass_fields": '''def ___dataclass_fields(value):
    return dataclasses.fields(value)''',
    "__math_isnan": '''__math_isnan = math.isnan''',
    "inf": '''inf = float("inf")''',
    "device": '''device = torch.device''',
    "utils_device": '''import torch.utils._device as utils_device''',
}
# Helpers that need other helpers or modules imported first.
NEEDS = {"___odict_getitem": "collections", "___dataclass_fields": "dataclasses", "__math_isnan": "math"}
# Names a guard may use besides the helpers: the frame's locals and globals, torch, builtins.
_KNOWN = frozenset(["L", "G", "torch"]) | frozenset(dir(builtins))
_HELPER_NAMES = frozenset(HELPERS)
# The names a guard clause may read.
_USABLE_NAMES = _KNOWN | _HELPER_NAMES


class Clause(NamedTuple):
    """One guard part as Python."""

    #: A Python expression over L and G (and helpers).
    expr: str
    #: torch's own text, when the expression differs from it; else None.
    original: Optional[str]


def render(parts: Sequence[str]) -> List[Clause]:
    """Each of torch's guard code parts as a Python expression."""
    return [_clause(part) for part in parts]


# Kinds of torch's leaf guards whose text, as Python, makes the very check torch makes (an
# EQUALS_MATCH also checks the value's class first: added below).
_PYTHON_KINDS = frozenset([
    "ID_MATCH", "TYPE_MATCH", "EQUALS_MATCH", "NONE_MATCH", "NOT_NONE_MATCH", "TRUE_MATCH", "FALSE_MATCH",
    "LENGTH_CHECK", "DICT_LENGTH", "NO_HASATTR", "DIMENSION_DYNAMIC_MARKING_GUARD", "DICT_CONTAINS",
    "LAMBDA_GUARD",
])


def render_leaves(leaves: Sequence[Any], entry: str) -> List[Clause]:
    """Each leaf of an entry's guard tree (torch_internals.GuardLeaf) as a Python clause that
    makes the check torch makes: torch's text where it is that check in Python, else a call
    that asks torch for that one leaf (``___torch_leaf``, by its number in ``leaves``). ``entry`` is the entry's key
    (live_guards.entry_key). Every clause has torch's kind and text as its comment."""
    clauses: List[Clause] = []
    whole = False
    for number, leaf in enumerate(leaves):
        text = "%s: %s" % (leaf.kind, " and ".join(" ".join(part.split()) for part in leaf.parts))
        python = _leaf_python(leaf)
        if python is not None:
            clauses.append(Clause(python, text))
            continue
        value = "L" if leaf.source is None else leaf.source
        if _usable(value):
            clauses.append(Clause("___torch_leaf(%r, %d, %s)" % (entry, number, value), text))
        elif not whole:  # a value only torch can reach: torch checks the whole guard once
            whole = True
            clauses.append(Clause("___torch_entry(%r, L)" % entry, text))
    return clauses


def _leaf_python(leaf: Any) -> Optional[str]:
    """The Python of a leaf that makes torch's check, or None."""
    if leaf.kind not in _PYTHON_KINDS or not leaf.parts:
        return None
    exprs = []
    for part in leaf.parts:
        clause = _clause(part)
        if "___torch_guard" in clause.expr or "___check_tensor" in clause.expr \
                or "___check_global_state" in clause.expr or not _usable(clause.expr):
            return None
        exprs.append(clause.expr)
    if leaf.kind == "EQUALS_MATCH":
        # torch compares the value's class before the value: 1.0 == 1, but not for torch.
        if leaf.source is None or leaf.value_type is None or not _spelled(leaf.value_type):
            return None
        exprs.insert(0, "type(%s) is %s" % (leaf.source, leaf.value_type))
    return exprs[0] if len(exprs) == 1 else "(%s)" % " and ".join(exprs)


def helpers_used(clauses: Sequence[Clause]) -> Set[str]:
    """The helper names the clauses call (keys of HELPERS)."""
    used: Set[str] = set()
    for clause in clauses:
        used |= _names_in(clause.expr)
    return used


def _names_in(expr: str) -> FrozenSet[str]:
    return (_names(expr) or frozenset()) & _HELPER_NAMES


@functools.lru_cache(maxsize=8192)
def _names(text: str) -> Optional[FrozenSet[str]]:
    """The names ``text`` reads, or None when it is no Python expression. Entries of one frame
    share most guard parts, and a frame's file is rendered again after each compile: each
    text is parsed once."""
    try:
        tree = ast.parse(text.strip(), mode="eval")
    except SyntaxError:
        return None
    return frozenset(node.id for node in ast.walk(tree) if isinstance(node, ast.Name))


@functools.lru_cache(maxsize=4096)
def _clause(part: str) -> Clause:
    text = part.strip()
    flat = " ".join(text.split())
    state = torch_text.global_state(text)
    if state is not None and {"grad_mode", "deterministic_algorithms", "num_threads"} <= set(state):
        keep = {key: state[key] for key in ("grad_mode", "deterministic_algorithms", "num_threads")}
        return Clause("___check_global_state(%r)" % keep, flat)
    text, type_name = torch_text.split_type_suffix(text)
    check = torch_text.id_check(text)
    if check is not None and torch_text.parses(check.subject):
        if check.kind == "type" and type_name is not None and _spelled(type_name):
            return Clause("type(%s) is %s" % (check.subject, type_name), flat)
        return Clause("___check_%s_id(%s, %s)" % check, flat if type_name is not None else None)
    tensor = torch_text.tensor_check(text)
    if tensor is not None and torch_text.parses(tensor.subject):
        return Clause("___check_tensor(%s, %s, %s, %s, [%s], [%s])" % tensor, flat)
    if _usable(text):
        return Clause(text, None)
    return Clause("___torch_guard(%r)" % flat, None)


def _spelled(type_name: str) -> bool:
    """Whether the full-code file can name the class: a builtin, or torch's (torch.Tensor)."""
    if "." not in type_name:
        return hasattr(builtins, type_name)
    return re.fullmatch(r"torch(\.[A-Za-z_]\w*)+", type_name) is not None


def _usable(text: str) -> bool:
    """Whether ``text`` is a Python expression using only names the full-code file has."""
    names = _names(text)
    return names is not None and names <= _USABLE_NAMES
