"""index.json's records (framescope.dump.records): what the writer writes, the reader reads back."""
import json

import pytest

from framescope.dump import records

INDEX = {
    "format": records.FORMAT, "torch": "2.15.0", "python": "3.13.0", "argv": ["prog.py"],
    "frames": [{
        "id": "f", "name": "f", "qualname": "f", "filename": "/p/prog.py", "firstlineno": 3,
        "resume_of": None, "resume_line": None, "full_code": "full_code_for_f.py",
        "entries": [{
            "index": 0, "compile_id": "0/0", "file": "__transformed_code_0_for_f.py", "decompiled": True,
            "fallback_reason": None, "guard_function": "__guard_0_for_f", "guard": ["L['n'] == 1"], "guard_count": 9,
            "guard_latency_us": 12.5,
            "graphs": ["__compiled_fn_1"], "calls_resume": [], "compile_time_s": 0.5,
            "recompile_reason": None, "bytecode_files": [], "op_count": 2,
            "arguments": {"n": {"type": "int", "value": "1"}}, "phases_s": {"dynamo": 0.25},
            "caches": {"inductor_fx_misses": 1}, "compiled_before_dump": True, "calls": 3}]}],
    "graphs": [{
        "name": "__compiled_fn_1", "torch_name": "__compiled_fn_7", "compile_id": "0/0",
        "backend": "inductor", "nodes": 4, "ops": 2, "inputs": ["f32[4]"],
        "files": {"dynamo": "__compiled_fn_1.dynamo.py"}, "runs_from_file": ["dynamo"],
        "pieces": [{"piece": "piece_1", "module": "submod_0"}],
        "kernels": [{"stage": "inductor", "kernel": "cpp_fused_sin_0", "lines": [["/p/prog.py", 5]],
                     "pre_grad_nodes": ["y", "sin"], "post_grad_nodes": ["add", "sin"]}],
        "caches": {"aot_autograd": "hit", "fx_graph": "hit"}, "cache_reasons": {},
        "cache_saved_s": {"aot_autograd": 1.5}, "frame": "f", "entry": 0}],
    "graph_breaks": [{
        "frame": "f", "entry": 0, "compile_id": "0/0", "reason": "print", "gb_code": "GB0059", "docs": None,
        "hints": ["avoid print"], "filename": "/p/prog.py", "lineno": 6, "source_line": "print(x)",
        "resume": "torch_dynamo_resume_in_f_at_6", "skipped": False, "arguments": {}}],
    "recompiles": [{
        "frame": "f", "entry": 1, "compile_id": "0/1", "reason": "n == 1", "filename": "/p/prog.py",
        "lineno": 3, "source_line": "def f(x, n):", "limit": {"name": "recompile_limit", "value": 8},
        "arguments": {}, "hints": ["convert this integer into a tensor"]}],
    "warnings": ["one"],
    "calls_missed": 2,
    "finished": True,
    "failures": [{"frame": None, "compile_id": "1/0", "function": "whole", "function_filename": "/p/prog.py",
                  "function_lineno": 9, "kind": "Unsupported", "reason": "Data-dependent branching", "gb_code": "GB0170",
                  "docs": None, "hints": ["make it branchless"], "filename": "/p/prog.py", "lineno": 10,
                  "source_line": "if x.sum() > 0:", "arguments": {}}],
    "precompiled": [{"function": "step", "filename": "/p/prog.py", "lineno": 20, "file": "precompiled_1_for_step.py",
                     "backend": "eager", "frame": None}],
}


def test_every_field_read_is_written_back_the_same():
    dump = records.from_data(json.loads(json.dumps(INDEX)), "/d", "/d/index.json")
    assert dump.path == "/d" and dump.graphs[0].piece_module("piece_1") == "submod_0"
    assert dump.recompiles[0].limit == records.Limit("recompile_limit", 8)
    assert dump.graphs[0].kernels[0].lines == [("/p/prog.py", 5)]
    assert dump.graphs[0].kernels[0].post_grad_nodes == ["add", "sin"]
    assert dump.graphs[0].served_from_cache() and dump.graphs[0].lacks() == ["pre_grad", "aot_forward"]
    assert dump.frames[0].entries[0].calls == 3 and dump.calls_missed == 2
    assert dump.frames[0].entries[0].guard_latency_us == 12.5 and dump.precompiled[0].function == "step"
    assert dump.failures[0].gb_code == "GB0170" and dump.failures[0].lineno == 10
    assert json.loads(json.dumps(records.to_data(dump))) == INDEX


def test_a_key_the_format_does_not_declare_is_left_out_and_named():
    left_out = []
    limit = records.record(records.Limit, {"name": "recompile_limit", "limit_value": 8}, left_out)
    assert limit == records.Limit("recompile_limit", None) and left_out == ["Limit.limit_value"]
    assert records.record(records.Limit, {"name": "cache_size_limit"}, left_out).value is None
    assert left_out == ["Limit.limit_value"]


def test_a_field_of_the_wrong_type_is_one_line():
    broken = dict(INDEX, frames=[dict(INDEX["frames"][0], firstlineno="3")])
    with pytest.raises(records.DumpError, match=r"frames\[0\]\.firstlineno should be an integer, found a string"):
        records.from_data(broken, "/d", "/d/index.json")
    with pytest.raises(records.DumpError, match="format is 'other/1'"):
        records.from_data(dict(INDEX, format="other/1"), "/d", "/d/index.json")


def test_a_precompile_artefacts_file_name_reads_back():
    from framescope.dump import naming

    name = naming.precompiled_file(2, "step")
    assert name == "precompiled_2_for_step.py"
    assert naming.parse_file_name(name) == ("precompiled", "step", "2")
