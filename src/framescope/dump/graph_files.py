"""The text of graph files: a GraphModule's readable code, torch's listings made valid
Python, and the functions of a written module (to run the program from the files)."""

import re
import types
from typing import Any, Dict, List, Optional, Sequence, Tuple

from framescope import torch_internals, torch_text
from framescope.dump.naming import sanitise, shape_text


def graph_signature(gm: Any) -> Tuple[Tuple[str, str, str], ...]:
    """The graph's nodes as (op, name, target) triples: equal while no pass changed it."""
    return tuple((node.op, node.name, str(node.target)) for node in gm.graph.nodes)


def placeholder_inputs(
    gm: Any, example_inputs: Sequence[Any], dynamo: bool
) -> List[Tuple[str, str, Optional[str]]]:
    """(name, shape text, user expression) of each graph input, for the file header."""
    rows = []
    placeholders = [node for node in gm.graph.nodes if node.op == "placeholder"]
    for i, node in enumerate(placeholders):
        value = node.meta.get("val", node.meta.get("example_value"))
        if value is None and i < len(example_inputs):
            value = example_inputs[i]
        source = torch_internals.graph_input_source(node) if dynamo else None
        name = node.target if isinstance(node.target, str) else node.name
        rows.append((name, shape_text(value) if value is not None else "?", user_expression(source)))
    return rows


def user_expression(source: Optional[str]) -> Optional[str]:
    """torch's source text made readable: ``L['self']._modules['lin']._parameters['w']``
    -> ``self.lin.w``."""
    if not source:
        return None
    return torch_text.user_expression(source)


def module_source(gm: Any) -> str:
    """The readable code of a GraphModule: its forward (with shapes on every line), then a
    class per submodule GraphModule holding that one's forward."""
    parts = [verbose_code(gm)]
    for qualname, module in graph_modules(gm):
        if not qualname:
            continue
        names = qualname.rstrip(".").split(".")
        depth = len(names) - 1
        body = verbose_code(module)
        parts.append(
            indent("# self.%s\nclass %s:\n" % (".".join(names), names[-1]), depth)
            + indent(body, depth + 1)
        )
    return "\n\n".join(parts)


def verbose_code(gm: Any) -> str:
    code = gm.graph.python_code(root_module="self", verbose=True, include_stride=True, include_device=True)
    return code.src.strip("\n") + "\n"


def indent(text: str, depth: int) -> str:
    pad = "    " * depth
    return "".join(pad + line if line.strip() else line for line in text.splitlines(True))


def graph_modules(gm: Any) -> List[Tuple[str, Any]]:
    """(qualified name with a trailing dot, or "" for gm itself; module) of gm and every
    GraphModule below it, parents first; only modules reached through GraphModules."""
    import torch

    found: List[Tuple[str, Any]] = []

    def walk(module: Any, prefix: str) -> None:
        found.append((prefix, module))
        for child_name, child in module.named_children():
            if isinstance(child, torch.fx.GraphModule) and child_name.isidentifier():
                walk(child, prefix + child_name + ".")

    walk(gm, "")
    return found


def code_tree(code: types.CodeType) -> Dict[str, types.CodeType]:
    """Every function code object in a module's code, by its dotted path of names
    (``forward``, ``wrap_body_0.forward``, ``Runner.call``); nested code keeps the first."""
    found: Dict[str, types.CodeType] = {}

    def walk(parent: types.CodeType, prefix: str) -> None:
        for const in parent.co_consts:
            if isinstance(const, types.CodeType):
                path = prefix + const.co_name
                found.setdefault(path, const)
                walk(const, path + ".")

    walk(code, "")
    return found


def module_functions(namespace: Dict[str, Any], filename: str) -> List[Tuple[str, Any]]:
    """The functions a module defined from ``filename``, including its classes' methods:
    (qualified name, function)."""
    found: Dict[str, Any] = {}
    for value in list(namespace.values()):
        members = vars(value).values() if isinstance(value, type) else [value]
        for member in members:
            member = getattr(member, "__func__", member)
            if (
                isinstance(member, types.FunctionType)
                and member.__code__.co_filename == filename
                and "<locals>" not in member.__qualname__
            ):
                found.setdefault(member.__qualname__, member)
    return list(found.items())


def swap_code(function: object, new: types.CodeType) -> bool:
    """Make ``function`` run ``new`` if both are the same code apart from lines, names of
    the file and annotations; return whether it did."""
    old = getattr(function, "__code__", None)
    if not isinstance(old, types.CodeType):
        return False
    if (
        old.co_freevars != new.co_freevars
        or old.co_argcount != new.co_argcount
        or old.co_kwonlyargcount != new.co_kwonlyargcount
        or old.co_varnames[: old.co_argcount] != new.co_varnames[: new.co_argcount]
        or set(old.co_names) != set(new.co_names)
    ):
        return False
    function.__code__ = new  # type: ignore[attr-defined]
    return True


def listing(text: str) -> str:
    """A graph listing from torch's trace as a valid, stable Python file."""
    text = torch_text.without_graph_id(text)  # else two dumps of one program would differ
    # Listings name the module's class after the module, which may be "<lambda>".
    text = re.sub(
        r"^(\s*class )([^\s(:]+)(?=\()",
        lambda m: m.group(1) + (m.group(2) if m.group(2).isidentifier() else sanitise(m.group(2))),
        text,
        flags=re.M,
    )
    try:
        compile(text, "<listing>", "exec", dont_inherit=True)
    except SyntaxError as exc:
        # Keep what torch printed, readable, in a file that still compiles.
        note = "# torch's listing is not valid Python (%s); shown as comments.\n" % exc.msg
        return note + "".join("# " + line for line in text.splitlines(True))
    return text
