"""What a dump knows of one graph while torch compiles it, and what becomes its record.

The working state of :mod:`framescope.dump.graphs`: the files written per stage, the stages
that run from their files, the pieces of a split graph, Inductor's kernels and what the
compile caches did. :meth:`GraphState.record` is the graph's entry in index.json.
"""
from __future__ import annotations

import weakref
from typing import Any, Dict, List, Optional, Tuple

from framescope import torch_internals, torch_text
from framescope.dump import naming

# torch's structured-trace artifacts that say what a compile cache did:
# name -> (the cache, as index.json names it; the result).
CACHE_ARTIFACTS = {
    "fx_graph_cache_hit": ("fx_graph", "hit"),
    "fx_graph_bundled_cache_hit": ("fx_graph", "hit"),
    "fx_graph_cache_miss": ("fx_graph", "miss"),
    "fx_graph_cache_bypass": ("fx_graph", "bypass"),
    "aotautograd_cache_hit": ("aot_autograd", "hit"),
    "aotautograd_cache_miss": ("aot_autograd", "miss"),
    "aotautograd_cache_bypass": ("aot_autograd", "bypass"),
}



class GraphState:
    """One graph of the dump and what has been written for it."""

    def __init__(self, name: str, torch_name: Optional[str], compile_id: Optional[str], backend: str) -> None:
        #: The dump's name: ``__compiled_fn_1`` for the first graph of the dump.
        self.name = name
        #: torch's name (``__compiled_fn_<n>_<uuid>``, the global the code calls), or None.
        self.torch_name = torch_name
        #: torch's id of the frame compile that captured the graph ("0/0").
        self.compile_id = compile_id
        #: The backend's name: "inductor", "eager", "aot_eager", a function's name.
        self.backend = backend
        #: FX nodes and call_* nodes in Dynamo's graph.
        self.nodes = 0
        self.ops = 0
        #: Dynamo's graph inputs as shape text ("f32[4, 8]").
        self.inputs: List[str] = []
        #: stage -> file name, in the order written.
        self.files: Dict[str, str] = {}
        #: Stages whose code runs from the dumped file.
        self.runs: List[str] = []
        #: The compiled function and where it is: ``f (/abs/prog.py:8)``; None if unknown.
        self.source: Optional[str] = None
        #: Dynamo's GraphModule, weakly (None until known).
        self.module: Optional[Any] = None
        #: Pieces a backend compiled on their own: (the piece's module, weakly; "piece_<k>").
        self.pieces: List[Tuple[Any, str]] = []
        #: "piece_<k>" -> the piece's name in the graph the backend returned ("submod_0").
        self.piece_names: Dict[str, str] = {}
        #: Per Inductor kernel (provenance tracking): the stage whose output code defines it
        #: ("inductor", "inductor_backward", "piece_<k>.inductor"), its name, [file, line] of
        #: each user line it computes and the FX nodes it computes (pre- and post-grad).
        self.kernel_lines: List[Dict[str, Any]] = []
        #: (stage, torch's kernel key) -> that kernel's item of kernel_lines.
        self.kernel_keys: Dict[Tuple[str, str], Dict[str, Any]] = {}
        #: What each compile cache did: "fx_graph", "fx_graph_backward", "aot_autograd" (with
        #: a "piece_<k>." prefix for a piece) -> "hit", "miss" or "bypass".
        self.caches: Dict[str, str] = {}
        #: Why a cache missed or was bypassed, where torch says.
        self.cache_reasons: Dict[str, str] = {}
        #: Compile seconds each hit saved, as torch measured them when it compiled cold.
        self.cache_saved_s: Dict[str, float] = {}

    def kernel(self, stage: str, key: str) -> Dict[str, Any]:
        """The kernel_lines item of one kernel (torch's key: "cpp_fused_sin_0:1"), made on
        first sight: the two provenance artifacts name the same kernels."""
        item = self.kernel_keys.get((stage, key))
        if item is None:
            item = {"stage": stage, "kernel": torch_text.kernel_name(key), "lines": [],
                    "pre_grad_nodes": [], "post_grad_nodes": []}
            self.kernel_keys[(stage, key)] = item
            self.kernel_lines.append(item)
        return item

    def measure(self, gm: Any) -> List[Any]:
        """Take Dynamo's GraphModule as this graph's (weakly) and count its nodes and its
        operations (``call_*`` nodes); return the nodes."""
        self.module = weakref.ref(gm)
        nodes = list(gm.graph.nodes)
        self.nodes = len(nodes)
        self.ops = sum(1 for node in nodes if node.op in ("call_function", "call_method", "call_module"))
        return nodes

    def stage_prefix(self, module: Any) -> str:
        """"" for Dynamo's graph itself, "piece_<k>." for a piece of it (one made on first sight)."""
        # Inductor's pre-grad passes may hand AOTAutograd a new module; it keeps Dynamo's name.
        if module is None or (self.module is not None and self.module() is module) or (
                self.torch_name is not None and torch_internals.graph_identity(module)[0] == self.torch_name):
            return ""
        for ref, piece in self.pieces:
            if ref() is module:
                return piece + "."
        piece = naming.piece_name(len(self.pieces) + 1)
        self.pieces.append((weakref.ref(module), piece))
        return piece + "."

    def record(self) -> Dict[str, Any]:
        """The graph's entry in index.json ``graphs`` (frame/entry come from compile_id)."""
        return {
            "name": self.name,
            "torch_name": self.torch_name,
            "compile_id": self.compile_id,
            "backend": self.backend,
            "nodes": self.nodes,
            "ops": self.ops,
            "inputs": list(self.inputs),
            "files": dict(self.files),
            "runs_from_file": list(self.runs),
            "pieces": [{"piece": piece, "module": self.piece_names.get(piece)} for _ref, piece in self.pieces],
            "kernels": [dict(kernel) for kernel in self.kernel_lines],
            "caches": dict(self.caches),
            "cache_reasons": dict(self.cache_reasons),
            "cache_saved_s": dict(self.cache_saved_s),
        }

    def note_cache(self, kind: str, result: str, payload: str, phase: str, prefix: str, loaded: set) -> None:
        """What a compile cache did (``kind``: "fx_graph" or "aot_autograd") in the compile
        phase ``phase`` of the graph or piece ``prefix``. ``loaded`` holds what AOTAutograd's
        compile of the module met outside any compiler call: on an AOTAutograd cache hit the
        forward's FX graph is looked up first, then the backward's."""
        if kind == "fx_graph" and (phase == "backward" or (phase == "aot" and "fx_graph" in loaded)):
            kind = "fx_graph_backward"
        elif kind == "fx_graph" and phase == "aot":
            loaded.add("fx_graph")
        details = torch_text.cache_details(payload)
        self.caches[prefix + kind] = result
        if details.reason:
            self.cache_reasons[prefix + kind] = details.reason
        if details.saved_s is not None and result == "hit":
            self.cache_saved_s[prefix + kind] = details.saved_s
