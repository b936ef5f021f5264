"""The machine-code decompiler on torch.compile's real transformed code.

Every cache entry's code is decompiled, compiled and run in place of Dynamo's own; the
program's results must equal plain eager results. Runs in a fresh interpreter.
"""
from __future__ import annotations

import json
import textwrap

import pytest

pytest.importorskip("torch")

pytestmark = pytest.mark.torch

PROGRAM = r'''
import json, torch
from framescope.decompiler.machine import decompile_transformed
from framescope.errors import DecompilationError

texts, refused = {}, {}

def constant_name(value):
    # a global of this module bound to the constant itself: the code runs with these globals
    ident = "__constant_%d" % len([k for k in globals() if k.startswith("__constant_")])
    globals()[ident] = value
    return ident

def hook(code, new_code):
    try:
        source = decompile_transformed(new_code, constant_name=constant_name)
    except DecompilationError as err:
        refused[code.co_name] = str(err)
        return None
    texts.setdefault(code.co_name, []).append(source)
    namespace = {}
    if new_code.co_freevars:
        # free variables come from the frame's closure: compile the def inside a factory
        lines = source.splitlines()
        # nonlocal keeps a free variable the code does not read (its cell is still passed on)
        lines.insert(1, "    nonlocal " + ", ".join(new_code.co_freevars))
        inner = "\n".join("    " + line for line in lines)
        factory = "def factory():\n    %s = None\n%s\n    return %s" % (
            " = ".join(new_code.co_freevars), inner, new_code.co_name)
        exec(compile(factory, "<decompiled>", "exec"), namespace)
        made = namespace["factory"]().__code__
    else:
        exec(compile(source, "<decompiled>", "exec"), namespace)
        made = namespace[new_code.co_name].__code__
    return made.replace(co_name=new_code.co_name)

torch._dynamo.convert_frame.register_bytecode_hook(hook)

def inner(x):
    y = x + 1
    print("inner break")
    return y * 2

def outer(x, lst):
    z = inner(x) - 1
    lst.append(z.sum().item())
    return z

def branch(x):
    if x.sum() > 0:
        return x * 2
    return x - 5

def make_scaled(k):
    def scaled(x):
        y = x * k
        torch._dynamo.graph_break()
        return y + k
    return scaled

class Obj:
    pass

def side_effects(x, o):
    o.attr = x + 1
    d = {"a": x}
    d["b"] = x * 2
    return d

def with_no_grad(x):
    with torch.no_grad():
        y = x * 2
        print("in with")
        y = y + 1
    return y

def keywords(x, *args, scale=2, **kwargs):
    return x * scale + len(args) + len(kwargs)

def unpack(x):
    a, b = x.chunk(2)
    print("unpacked")
    return a, b

def returns_closure(x):
    k = 3
    def times(y):
        return y * k
    return times, times(x)

def returns_dtype(x):
    return x + 1, x.dtype

def mutates_dict(d, x):
    d["new"] = x + 1
    del d["old"]
    return x * 2

def run(compile):
    out = []
    lst = []
    out.append(compile(outer)(torch.ones(3), lst))
    out.append(lst)
    out.append(compile(branch)(torch.ones(3)))
    out.append(compile(branch)(-torch.ones(3)))
    out.append(compile(make_scaled(3))(torch.ones(2)))
    o = Obj()
    out.append(compile(side_effects)(torch.ones(2), o))
    out.append(o.attr)
    out.append(compile(with_no_grad)(torch.ones(2, requires_grad=True)))
    out.append(compile(keywords)(torch.ones(2), 1, 2, scale=3, z=1))
    out.append(compile(unpack)(torch.arange(4.0)))
    out.append(compile(returns_closure)(torch.ones(2))[1])
    d = {"old": 1, "kept": 2}
    out.append([compile(mutates_dict)(d, torch.ones(2)), d])
    result, dtype = compile(returns_dtype)(torch.ones(2))
    out.append([result, str(dtype)])
    return out

def plain(values):
    if isinstance(values, torch.Tensor):
        return values.tolist()
    if isinstance(values, dict):
        return {k: plain(v) for k, v in values.items()}
    if isinstance(values, (list, tuple)):
        return [plain(v) for v in values]
    return values

compiled = plain(run(lambda f: torch.compile(f, backend="eager")))
eager = plain(run(lambda f: f))
print("RESULT " + json.dumps({"same": compiled == eager, "texts": texts, "refused": refused}))
'''


def test_transformed_code_runs_from_its_decompilation(run_python):
    done = run_python(textwrap.dedent(PROGRAM), timeout=300)
    line = [x for x in done.stdout.splitlines() if x.startswith("RESULT ")][-1]
    result = json.loads(line[len("RESULT "):])
    assert result["same"], done.stdout
    assert not result["refused"], result["refused"]
    texts = [t for group in result["texts"].values() for t in group]
    assert len(texts) >= 12
    for text in texts:
        assert "[[" not in text and "[()]" not in text, text
    assert "__constant_" in "\n".join(result["texts"]["returns_dtype"])  # torch.float32 has no literal
    scaled = "\n".join(result["texts"]["scaled"])
    assert "(lambda: k).__closure__[0]" in scaled  # the cell itself is passed on, not its value


# What vLLM's compile wrapper does: its own bytecode hook writes the source of each code
# object Dynamo makes, from framescope.decompile (depyf.decompile before).
OWN_HOOK_PROGRAM = r'''
import json, torch, framescope
from torch._dynamo.convert_frame import register_bytecode_hook

texts = {}

def hook(code, new_code):
    texts.setdefault(code.co_name, []).append(framescope.decompile(new_code))

def f(x, n):
    y = torch.sin(x) * n
    print("graph break")
    return y + n

handle = register_bytecode_hook(hook)
out = torch.compile(f, backend="eager")(torch.ones(3), 2)
handle.remove()
print("OUT " + json.dumps({"texts": texts, "same": bool(torch.equal(out, f(torch.ones(3), 2)))}))
'''


def test_framescope_decompile_of_dynamo_code_in_ones_own_bytecode_hook(run_python):
    from framescope.decompiler.api import MACHINE_MADE

    done = run_python(OWN_HOOK_PROGRAM, timeout=300)
    out = json.loads(next(line[4:] for line in done.stdout.splitlines() if line.startswith("OUT ")))
    assert out["same"]
    names = sorted(out["texts"])
    assert names[0] == "f" and len(names) == 2 and names[1].startswith("torch_dynamo_resume_in_f_at_")
    for name, [text] in out["texts"].items():
        # No source compiles to Dynamo's bytecode: the machine-code decompiler answers, and says so.
        assert text.startswith(MACHINE_MADE + " (no source has it: "), text
        compile(text, name, "exec")
    assert "__compiled_fn_" in out["texts"]["f"][0] and "print" in out["texts"]["f"][0]
