"""File names in a dump folder: stable across runs of the same program.

Names come from code object names and compile order only, never from ids, times, the
uuids torch puts into some of its generated names or torch's counters of the whole process,
so that two runs of a program give the same list of files, in a fresh process or not.
"""
from __future__ import annotations

import gc
import hashlib
import re
import sys
import types
from typing import Dict, Mapping, Optional, Set, Tuple


def qualname(code: types.CodeType) -> str:
    """The qualified name of a code object's function (``Net.forward``).

    Code objects carry it from CPython 3.11 on; before, it is the ``__qualname__`` of a
    function that runs the code, and the plain name where no function does.
    """
    name = getattr(code, "co_qualname", None)
    if name:
        return name
    for holder in gc.get_referrers(code):
        if isinstance(holder, types.FunctionType) and holder.__code__ is code:
            return holder.__qualname__
    return code.co_name


#: torch's short names of dtypes, as its graph listings print them.
DTYPES = {
    "float32": "f32", "float64": "f64", "float16": "f16", "bfloat16": "bf16",
    "float8_e4m3fn": "f8e4m3fn", "float8_e5m2": "f8e5m2",
    "int64": "i64", "int32": "i32", "int16": "i16", "int8": "i8", "uint8": "u8",
    "uint16": "u16", "uint32": "u32", "uint64": "u64", "bool": "b8",
    "complex64": "c64", "complex128": "c128", "complex32": "c32",
}


def shape_text(value: object) -> str:
    """A graph input as torch lists it: ``f32[4, 8]``, ``i64[]``, ``Sym(s0)``, ``int``."""
    shape = getattr(value, "shape", None)
    dtype = getattr(value, "dtype", None)
    if shape is not None and dtype is not None:
        kind = str(dtype).replace("torch.", "")
        return "%s[%s]" % (DTYPES.get(kind, kind), ", ".join(str(size) for size in shape))
    kind = type(value).__name__
    if kind in ("SymInt", "SymFloat", "SymBool"):
        return "Sym(%s)" % value
    return kind


#: Plain values whose repr a dump shows; anything else is shown by its type.
_SHOWN = (bool, int, float, complex, str, bytes, type(None))


def describe_values(values: Mapping[str, object], limit: int = 80) -> Dict[str, Dict[str, str]]:
    """``{name: {"type": ..., "value": ...}}`` of a frame's arguments, briefly: a tensor as
    its dtype and shape (``f32[4, 8]``), a number or string by its repr (cut at ``limit``),
    anything else by its type only. Reads nothing that could run user code."""
    torch = sys.modules.get("torch")
    described = {}
    for name, value in values.items():
        kind = type(value)
        if torch is not None and isinstance(value, torch.Tensor):
            text = shape_text(value)
        elif kind in _SHOWN:
            text = repr(value)
            text = text if len(text) <= limit else text[:limit - 3] + "..."
        else:
            text = "<%s>" % kind.__qualname__
        described[str(name)] = {"type": kind.__qualname__, "value": text}
    return described


def sanitise(name: str) -> str:
    """``name`` with every character outside ``[A-Za-z0-9_]`` replaced by ``_``."""
    return re.sub(r"[^A-Za-z0-9_]", "_", name) or "_"


#: The longest stem of a file name made from a code object's name: with the longest prefix
#: and suffix a dump adds (``__transformed_code_<i>_for_``, ``_<k>``,
#: ``.py.decompiled_and_compiled_back_bytecode``) a name stays far below the 255 bytes file
#: systems allow.
MAX_STEM = 96


def bounded(stem: str, name: str) -> str:
    """``stem`` cut to MAX_STEM characters, ending in a hash of the whole ``name`` when cut,
    so that long names that differ only at the end stay apart, the same in every run."""
    if len(stem) <= MAX_STEM:
        return stem
    digest = hashlib.sha1(name.encode("utf-8", "surrogatepass")).hexdigest()[:10]
    return "%s_%s" % (stem[:MAX_STEM - 11], digest)


def graph_name(number: int) -> str:
    """A dump's name for its ``number``-th graph (from 1): ``__compiled_fn_<number>``."""
    return "__compiled_fn_%d" % number


def transformed_file(index: int, frame_id: str) -> str:
    """File of cache entry ``index`` of a frame."""
    return "__transformed_code_%d_for_%s.py" % (index, frame_id)


#: The code objects written next to a transformed-code file with ``log_bytecode``: the
#: original code, Dynamo's, and the code compiled from the file (depyf's suffixes).
BYTECODE_KINDS = ("original", "transformed", "decompiled_and_compiled_back")


def bytecode_file(transformed: str, kind: str) -> str:
    """The file of one code object of an entry (``marshal.load`` reads it back)."""
    return "%s.%s_bytecode" % (transformed, kind)


def piece_name(number: int) -> str:
    """The name of the ``number``-th piece (from 1) of a graph a backend split: ``piece_2``."""
    return "piece_%d" % number


def split_stage(stage: str) -> Tuple[str, str]:
    """(piece, stage) of a graph file's stage key: ``("piece_2", "inductor")`` for a piece's
    ``piece_2.inductor``, ``("", "inductor")`` for the graph's own ``inductor``."""
    piece, _, base = stage.rpartition(".")
    return piece, base


def piece_number(piece: str) -> int:
    """The number of a piece (``piece_2`` -> 2); 0 for the graph itself ("")."""
    digits = piece[len("piece_"):]
    return int(digits) if piece.startswith("piece_") and digits.isdigit() else 0


def full_code_file(frame_id: str) -> str:
    """The one-file summary of a frame."""
    return "full_code_for_%s.py" % frame_id


def precompiled_file(number: int, function_name: str) -> str:
    """The Python artefact of the ``number``-th (from 1) ``torch.compiler.precompile``
    capture of a dump, of the function named ``function_name``."""
    stem = bounded(sanitise(function_name), function_name)
    return "precompiled_%d_for_%s.py" % (number, stem)


#: The line that starts the explanation in a transformed-code file that holds Dynamo's
#: bytecode instead of Python.
FALLBACK_LINE = "# framescope could not turn this code into Python:"

_TRANSFORMED_FILE = re.compile(r"__transformed_code_(\d+)_for_(\w+)\.py")
_FULL_CODE_FILE = re.compile(r"full_code_for_(\w+)\.py")
_GRAPH_FILE = re.compile(r"(__compiled_fn_\d+)\.((?:piece_\d+\.)?\w+)\.py")
_PRECOMPILED_FILE = re.compile(r"precompiled_(\d+)_for_(\w+)\.py")
_BYTECODE_FILE = re.compile(r"__transformed_code_\d+_for_\w+\.py\.\w+_bytecode")


def parse_file_name(name: str) -> Optional[Tuple[str, str, str]]:
    """What a dump file's name says, the inverse of the names above: ``("transformed",
    frame_id, index)``, ``("full_code", frame_id, "")``, ``("graph", graph, stage)``,
    ``("bytecode", file, "")``, ``("precompiled", function, number)`` or ``("index", name,
    "")``; None for any other name."""
    if name in ("index.json", "index.md"):
        return ("index", name, "")
    match = _TRANSFORMED_FILE.fullmatch(name)
    if match:
        return ("transformed", match.group(2), match.group(1))
    match = _FULL_CODE_FILE.fullmatch(name)
    if match:
        return ("full_code", match.group(1), "")
    match = _GRAPH_FILE.fullmatch(name)
    if match:
        return ("graph", match.group(1), match.group(2))
    if _BYTECODE_FILE.fullmatch(name):
        return ("bytecode", name, "")
    match = _PRECOMPILED_FILE.fullmatch(name)
    if match:
        return ("precompiled", match.group(2), match.group(1))
    return None


def rank_folder(rank: int) -> str:
    """The folder of one rank's dump inside the folder of a distributed run: ``rank_<r>``."""
    return "rank_%d" % rank


def folder_rank(name: str) -> Optional[int]:
    """The rank whose dump a folder of this name holds (``rank_3`` -> 3), or None."""
    digits = name[len("rank_"):]
    return int(digits) if name.startswith("rank_") and digits.isdigit() else None


def guard_function(index: int, frame_id: str) -> str:
    """Name of the guard function of cache entry ``index`` in the frame's full-code file."""
    return "__guard_%d_for_%s" % (index, frame_id)


class FrameIds:
    """Hands out the ``<fn>`` stem of each code object: its sanitised name, made unique.

    The first code object with a given sanitised name gets the bare name, later different
    ones ``_2``, ``_3``, ... in the order they are first seen.
    """

    def __init__(self) -> None:
        #: Every stem handed out so far.
        self._taken: Set[str] = set()

    def new(self, code_name: str) -> str:
        """A fresh stem for a code object named ``code_name``."""
        base = bounded(sanitise(code_name), code_name)
        stem, count = base, 1
        while stem in self._taken:  # "f_2" may also be a code object's own name
            count += 1
            stem = "%s_%d" % (base, count)
        self._taken.add(stem)
        return stem


def constant_global(value: object, module_globals: Mapping[str, object]) -> str:
    """A global name for a constant of Dynamo's code that no literal spells (``torch.float32``
    becomes ``__torch_float32``): free in ``module_globals`` or already bound to ``value``."""
    if isinstance(value, types.CodeType):
        text = "code_" + value.co_name  # a resume function's code: __code_torch_dynamo_resume_in_f_at_5
    elif isinstance(value, type):
        text = value.__name__  # __function for types.FunctionType
    else:
        text = repr(value)
    if len(text) > 60 or not re.fullmatch(r"[\w.]+", text):
        text = "const_" + type(value).__name__
    base = "__" + sanitise(text).strip("_")
    candidate, number = base, 1
    while candidate in module_globals and module_globals[candidate] is not value:
        number += 1
        candidate = "%s_%d" % (base, number)
    return candidate
