"""torch's text formats (torch_text): each parser on the texts of the torch releases it reads.

None of these needs torch: a dump is read, and its report written, without it.
"""
import json
import textwrap

from framescope import torch_text


def test_stable_graph_names():
    long = "__compiled_fn_12_a02bc87c_2897_495c_849e_77bc54606c2c"
    assert torch_text.stable_graph_name(long) == "__compiled_fn_12"
    # In one pass: a new name that is also one of torch's is not renamed again.
    names = {long: "__compiled_fn_1", "__compiled_fn_1": "__compiled_fn_2"}
    text = "y = %s(x); z = __compiled_fn_1(y); w = __compiled_fn_12(z); __compiled_fn_1x" % long
    assert torch_text.rename_globals(text, names) == (
        "y = __compiled_fn_1(x); z = __compiled_fn_2(y); w = __compiled_fn_12(z); __compiled_fn_1x")
    # A global torch named after an object's id() loses the id.
    by_id = "___module_collections_140111645401520_c0"
    assert torch_text.stable_global_name(by_id) == "___module_collections_c0"
    assert torch_text.stable_global_name("_140111645401520_c3") == "_c3"
    for other in (long, "__resume_at_80_4", "tmp_3", "x_12345_c0"):
        assert torch_text.stable_global_name(other) == other
    assert torch_text.is_graph_name(long) and torch_text.is_graph_name("__compiled_fn_3")
    assert not torch_text.is_graph_name("__compiled_fn_x")
    assert torch_text.is_resume_global("__resume_at_40_3")
    assert torch_text.resume_line("torch_dynamo_resume_in_f_at_16") == 16


def test_parse_recompile_reason():
    text = (
        "1/0: n == 2                                                   # y = y * n  "
        "# mp/fx/prog.py:19 in torch_dynamo_resume_in_f_at_18\nUser stack trace:\n"
        '  File "/tmp/fx/prog.py", line 19, in torch_dynamo_resume_in_f_at_18\n    y = y * n'
    )
    assert torch_text.parse_recompile_reason(text) == {"reason": "n == 2", "filename": "/tmp/fx/prog.py", "lineno": 19}
    # torch 2.10-2.12: no stack; the failed guard's comment says where (the first guard's place).
    text = "0/0: mode == 'a'  # if mode == 'a':  # /tmp/prog.py:7 in f; n == 2  #   # /tmp/p.py:9 in g"
    assert torch_text.parse_recompile_reason(text) == {
        "reason": "mode == 'a'; n == 2", "filename": "/tmp/prog.py", "lineno": 7}
    plain = torch_text.parse_recompile_reason("0/0: tensor 'x' size mismatch at index 0. expected 4, actual 5")
    assert plain == {"reason": "tensor 'x' size mismatch at index 0. expected 4, actual 5", "filename": None, "lineno": None}


def test_parse_graph_break():
    text = textwrap.dedent(
        """\
        Graph break in user code at /tmp/prog.py:18
        Graph Break Reason: Encountered graph break when attempting to trace CALL: a function call, e.g. f(x, y):

        Failed to trace builtin operator
          Explanation: Dynamo does not know how to trace builtin operator `print`
          Hint: Avoid calling builtin `print`.
          Hint: Please report an issue to PyTorch.

          Developer debug context: builtin print False

         For more details about this graph break, please visit: https://example.org/site/gb/gb0059.html

        User code traceback:
          File "/tmp/prog.py", line 18, in f
            print("break one")

        Traceback (most recent call last):
          File "/torch/_dynamo/symbolic_convert.py", line 1076, in wrapper
        """
    )
    assert torch_text.parse_graph_break(text) == {
        "reason": "Failed to trace builtin operator: Dynamo does not know how to trace builtin operator `print`",
        "filename": "/tmp/prog.py",
        "lineno": 18,
        "gb_code": "GB0059",
        "docs": "https://example.org/site/gb/gb0059.html",
        "hints": ["Avoid calling builtin `print`.", "Please report an issue to PyTorch."],
    }
    # A torch without graph-break codes (or hints) gives none.
    bare = torch_text.parse_graph_break("Graph break in user code at /tmp/prog.py:3\nGraph Break Reason: Unsupported")
    assert (bare["gb_code"], bare["docs"], bare["hints"]) == (None, None, [])


def test_guard_parts():
    part = "___check_type_id(L['n'], 9417760), type=<class 'int'>"
    assert torch_text.split_type_suffix(part) == ("___check_type_id(L['n'], 9417760)", "int")
    assert torch_text.split_type_suffix("L['n'] == 2") == ("L['n'] == 2", None)
    check = torch_text.id_check("___check_obj_id(G['torch'].nn, 140)")
    assert check == ("obj", "G['torch'].nn", "140")
    assert torch_text.id_check("L['n'] == 2") is None


def test_tensor_checks_with_and_without_a_device():
    text = ("check_tensor(L['x'], Tensor, DispatchKeySet(CPU, BackendSelect), torch.float32, device=%s, "
            "requires_grad=False, size=[4, None], stride=[None, 1])")
    for device in ("None", "0"):
        tensor = torch_text.tensor_check(text % device)
        assert tensor == ("L['x']", "torch.float32", device, "False", "4, None", "None, 1")
    # Line breaks torch puts into a long check do not matter.
    assert torch_text.tensor_check((text % "None").replace(", ", ",\n    ", 2)) is not None
    assert torch_text.tensor_check("check_tensor(L['x'])") is None


def test_global_state():
    part = '___check_global_state() against {"grad_mode": true, "num_threads": 4}'
    assert torch_text.global_state(part) == {"grad_mode": True, "num_threads": 4}
    assert torch_text.global_state("___check_global_state() against {not json}") is None
    assert torch_text.global_state("L['x'] == 1") is None


def test_scoped_names():
    text = "L['x'] + G['scale'] + G[\"bias\"] + L['self'].w"
    assert torch_text.unscoped(text) == "x + scale + bias + self.w"
    # A global that a local hides is reached through globals().
    assert torch_text.unscoped("L['scale'] * G['scale']", frozenset(["scale"])) == "scale * globals()['scale']"
    assert torch_text.user_expression("L['self']._modules['lin']._parameters['weight']") == "self.lin.weight"


def test_resume_names():
    assert torch_text.resume_name("f", 12) == "torch_dynamo_resume_in_f_at_12"
    # A resume function's own resume function is named after the user's function.
    assert torch_text.resume_name("torch_dynamo_resume_in_f_at_12", 15) == "torch_dynamo_resume_in_f_at_15"
    assert torch_text.resumed_name("torch_dynamo_resume_in_loop_at_12") == "loop"
    assert torch_text.resumed_name("torch_dynamo_resume_in_loop_at_12_2") == "loop"
    assert torch_text.resumed_name("loop") is None and torch_text.resumed_name(None) is None
    assert torch_text.resume_line("f") is None


def test_failed_guards_of_a_recompile_reason():
    reason = ("triggered by the following guard failure(s):\n"
              "- 0/1: L['mode'] == 'cos'      # if mode == \"sin\":  # prog.py:11 in f\n"
              "- 0/0: ___check_type_id(L['n'], 9417760)\n"
              "User stack trace:\n  File \"prog.py\", line 11, in f\n    if mode == 'sin':\n")
    assert torch_text.failed_guards(reason) == [
        ("mode == 'cos'", "0/1"), ("type(n) is the type seen when compiling", "0/0")]
    assert torch_text.is_shape_guard("tensor 'x' size mismatch at index 0")
    assert not torch_text.is_shape_guard("mode == 'cos'")


def test_graph_break_summaries():
    paragraph = ("Graph Break Reason: Encountered graph break when attempting to trace CALL\n"
                 "Failed to trace builtin operator\n  Explanation: Dynamo does not know `print`\n  Hint: avoid")
    assert torch_text.break_summary(paragraph) == "Failed to trace builtin operator: Dynamo does not know `print`"
    assert torch_text.break_summary("") == "(no reason given)"
    assert torch_text.gave_up_on_frame("... Skipping the function and falling back to eager ...")


def test_recompile_limits():
    text = "Limit type: recompile_limit ... currently set to 8"
    assert torch_text.limit_reached(text) == ("recompile_limit", 8)
    # torch 2.10 names the limit only.
    assert torch_text.limit_reached("cache_size_limit reached") == ("cache_size_limit", None)
    assert torch_text.limit_reached("some other failure") is None and torch_text.limit_reached(None) is None


def test_generated_code():
    assert torch_text.kernel_defined("triton_poi_fused_sin_0 = async_compile.triton('x', '''") == "triton_poi_fused_sin_0"
    assert torch_text.kernel_defined("x = 1") is None
    assert torch_text.without_graph_id("class G:\n    pass\n\n # graph id: 1402\n") == "class G:\n    pass\n"
    assert torch_text.trace_places('File "/a.py", line 3, in f\n  File "/b.py", line 9, in g') == [
        ("/a.py", 3), ("/b.py", 9)]


# As torch 2.13 writes them for ``y = torch.sin(x) + 1`` then ``z = y @ w``.
NODE_MAPPINGS = json.dumps({
    "preToPost": {"sin": ["sin"], "y": ["add"], "z": ["mm"]},
    "postToPre": {"sin": ["sin"], "add": ["y"], "mm": ["z"]},
    "cppCodeToPost": {"cpp_fused_add_sin_0:1": ["add", "sin"], "extern_kernels.mm:2": ["mm"]},
    "postToCppCode": {"add": ["cpp_fused_add_sin_0:1"], "sin": ["cpp_fused_add_sin_0:1"], "mm": ["extern_kernels.mm:2"]},
    "version": 2.0,
})
STACK_TRACES = json.dumps({
    "cpp_fused_add_sin_0:1": ['  File "/p/prog.py", line 12, in f\n    y = torch.sin(x) + 1\n'],
    "extern_kernels.mm:2": ['  File "/p/prog.py", line 3, in outer\n  File "/p/prog.py", line 13, in f\n',
                            '  File "/p/prog.py", line 13, in f\n'],
})
LISTING = '''def forward(self, L_x_: "f32[4, 4][4, 1]cpu", L_w_: "f32[4, 4][4, 1]cpu"):
    l_x_ = L_x_
    l_w_ = L_w_

    # File: /p/prog.py:12 in f, code: y = torch.sin(x) + 1
    sin: "f32[4, 4][4, 1]cpu" = torch.sin(l_x_);  l_x_ = None
    y: "f32[4, 4][4, 1]cpu" = sin + 1;  sin = None

    # File: /p/prog.py:13 in f, code: z = y @ w
    z: "f32[4, 4][4, 1]cpu" = y @ l_w_;  y = l_w_ = None
    return (z,)
'''


def test_inductor_provenance():
    assert torch_text.kernel_nodes(NODE_MAPPINGS) == {
        "cpp_fused_add_sin_0:1": torch_text.KernelNodes(pre_grad=["y", "sin"], post_grad=["add", "sin"]),
        "extern_kernels.mm:2": torch_text.KernelNodes(pre_grad=["z"], post_grad=["mm"]),
    }
    assert torch_text.kernel_stack_lines(STACK_TRACES) == {
        "cpp_fused_add_sin_0:1": [("/p/prog.py", 12)], "extern_kernels.mm:2": [("/p/prog.py", 13)]}
    assert torch_text.kernel_name("extern_kernels.mm:2") == "extern_kernels.mm"
    for broken in ("", "not json", "[1]", '{"cppCodeToPost": [1]}'):
        assert torch_text.kernel_nodes(broken) == {}
    # A broken list of nodes leaves its kernel without nodes, and the other kernels as they are.
    for nodes in ('"add"', "null", "1", '{"add": 1}', "[1, null]"):
        broken = '{"cppCodeToPost": {"k:1": %s, "mm:2": ["mm"]}, "postToPre": {"mm": ["z"]}}' % nodes
        assert torch_text.kernel_nodes(broken) == {
            "k:1": torch_text.KernelNodes(pre_grad=[], post_grad=[]),
            "mm:2": torch_text.KernelNodes(pre_grad=["z"], post_grad=["mm"])}
    # A broken postToPre leaves the post-grad nodes only.
    assert torch_text.kernel_nodes('{"cppCodeToPost": {"mm:2": ["mm"]}, "postToPre": [1]}') == {
        "mm:2": torch_text.KernelNodes(pre_grad=[], post_grad=["mm"])}
    assert torch_text.kernel_stack_lines("not json") == {}


def test_fx_listing_nodes_and_the_lines_that_made_them():
    assert torch_text.listing_nodes(LISTING) == [
        torch_text.ListedNode("l_x_", 2, None), torch_text.ListedNode("l_w_", 3, None),
        torch_text.ListedNode("sin", 6, ("/p/prog.py", 12)), torch_text.ListedNode("y", 7, ("/p/prog.py", 12)),
        torch_text.ListedNode("z", 10, ("/p/prog.py", 13)),
    ]
    assert torch_text.fx_node_defined("    return (z,)") is None
    assert torch_text.fx_node_defined("    add: \"f32[4]\" = torch.ops.aten.add.Tensor(sin, 1)") == "add"
    assert torch_text.fx_node_defined("    x == y") is None


def test_graph_output_locals():
    assert torch_text.is_graph_output("graph_out_0") and torch_text.is_graph_output("graph_out_12")
    assert not torch_text.is_graph_output("graph_out") and not torch_text.is_graph_output("tmp_3")
