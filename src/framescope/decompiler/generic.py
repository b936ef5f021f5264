"""Generic definitions (3.12+): ``class C[T]``, ``def g[T]()``, ``type A[T] = ...``.

The compiler makes each one inside a function of its own, ``<generic parameters of C>``,
called where the definition stands: it makes the type parameters (``T`` is its local),
then the class, function or alias, and returns it. The class reaches the type
parameters through ``.type_params`` and takes ``Generic[T]`` as its last base,
``.generic_base``; the function gets its defaults as ``.defaults`` and ``.kwdefaults``.
"""
import ast
from typing import Any, Callable, Dict, List, Optional

from framescope.decompiler.emit.annotations import is_format_check
from framescope.decompiler.frontend.opcodes import canonical_instructions
from framescope.decompiler.simulate import values as v
from framescope.decompiler.simulate.signature import parameter_names
from framescope.decompiler.simulate.simulator import Simulator
from framescope.decompiler.simulate.state import ClassValue, State, name
from framescope.errors import DecompilationError

#: The generic scope's names for the type parameters and the class's ``Generic[...]`` base.
TYPE_PARAMS = ".type_params"
GENERIC_BASE = ".generic_base"


def generic_definition(func: v.Function, nested: Callable[..., Any]) -> Any:
    """What ``func`` (a generic scope's function, called with ``func.call_args``) returns:
    the `ClassValue`, `values.Function` or `values.TypeAlias` with its type parameters."""
    code = func.code
    sim = Simulator(code, nested)
    state = State([])
    arguments: Dict[str, Any] = dict(zip(parameter_names(code), func.call_args))
    if len(arguments) != len(func.call_args):
        raise DecompilationError("generic definition called with other arguments", code_name=code.co_name)
    params: Optional[v.TypeParams] = None
    made = None
    for ins in canonical_instructions(code):
        if ins.op == "RETURN_VALUE":
            made = state.pop()
            break
        if ins.op.startswith("STORE_") and ins.arg == TYPE_PARAMS:
            params = state.pop()
        elif ins.op.startswith("STORE_") and ins.arg == GENERIC_BASE:
            state.pop()
        elif ins.op == "CALL_INTRINSIC_1" and ins.arg == "INTRINSIC_SUBSCRIPT_GENERIC":
            state.pop()
            state.push(name(GENERIC_BASE))
        elif ins.op == "LOAD_FAST" and ins.arg in arguments:
            state.push(arguments[ins.arg])
        elif ins.target is not None or ins.is_final():
            raise DecompilationError("generic definition with control flow", code_name=code.co_name,
                                     offset=ins.offset, opname=ins.raw)
        else:
            sim.step(ins, state)
    if state.stmts or state.stack:
        raise DecompilationError("generic definition of an unknown shape", code_name=code.co_name)
    return typed(made, params, code.co_name)


def typed(made: Any, params: Optional[v.TypeParams], scope: str) -> Any:
    """``made`` with the class's type parameters put in place."""
    if isinstance(made, ClassValue) and isinstance(params, v.TypeParams):
        node: ast.ClassDef = made.node
        bases = [b for b in node.bases if not (isinstance(b, ast.Name) and b.id == GENERIC_BASE)]
        if len(bases) != len(node.bases) - 1:
            raise DecompilationError("generic class without its generic base", code_name=scope)
        node.bases = bases
        node.type_params = params.params
        return made
    if isinstance(made, (v.Function, v.TypeAlias)) and params is None:
        return made
    raise DecompilationError("generic definition of an unknown shape", code_name=scope)


def lazy_value(body: List[ast.stmt], scope: str) -> ast.expr:
    """The expression a lazily evaluated value's function returns (a type alias's value,
    a type parameter's bound, constraints or default). 3.14 tests its ``format`` first, as
    an ``__annotate__`` function does."""
    if len(body) == 2 and is_format_check(body[0]):
        body = body[1:]
    if len(body) == 1 and isinstance(body[0], ast.Return) and body[0].value is not None:
        return body[0].value
    raise DecompilationError("lazy value is not one expression", code_name=scope)
