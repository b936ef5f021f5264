"""The decompiler's pipeline for one code object, and the nested definitions inside it.

instructions (`frontend`) → basic blocks (`graph`) → structured statements
(`structure`, with `simulate` for straight-line code) → clean-up (`emit`).
Nested code objects met on the way (functions, lambdas, classes, comprehensions)
are decompiled by the same pipeline, recursively.
"""
import ast
import inspect
from types import CodeType
from typing import Any, Callable, Dict, List, Optional, Tuple

from framescope.decompiler.emit.annotations import (
    CLASS_ANNOTATE, ClassAnnotations, annotate_items, written_annotations,
)
from framescope.decompiler.emit.cleanup import clean_body, comprehension, function_body, class_body
from framescope.decompiler.emit.unparse import NestedTooDeeply
from framescope.decompiler.frontend.instructions import Instr
from framescope.decompiler.frontend.opcodes import (
    canonical_instructions, docstring, jumps_and_loops, used_locals,
)
from framescope.decompiler.generic import generic_definition, lazy_value
from framescope.decompiler.graph.cfg import CFG
from framescope.decompiler.graph.normalize import normalize
from framescope.decompiler.simulate import marks
from framescope.decompiler.simulate import values as v
from framescope.decompiler.simulate.signature import arguments
from framescope.decompiler.simulate.simulator import Simulator
from framescope.decompiler.simulate.state import State
from framescope.decompiler.structure.statements import Structurer
from framescope.errors import DecompilationError


#: Builds what a nested code object stands for: `nested`, or a stand-in of the same
#: signature (`partial.Stubs.build` stubs the definitions it cannot decompile).
Build = Callable[..., Any]


def body_of(code: CodeType, state: Optional[State] = None, build: Optional[Build] = None) -> List[ast.stmt]:
    """The raw statements of ``code``'s body (before clean-up)."""
    refuse_unbounded(code)
    return statements(code, canonical_instructions(code), state, build)


def statements(code: CodeType, instrs: List[Instr], state: Optional[State] = None,
               build: Optional[Build] = None) -> List[ast.stmt]:
    """The raw statements of ``code``'s body from its canonical instructions (see
    refuse_unbounded, which comes first: decoding a huge function takes long already)."""
    if not instrs:
        return []
    cfg = CFG(instrs)
    normalize(cfg)
    make = build or nested
    sim = Simulator(code, lambda func, target=None, iterator=None: make(func, target, iterator))
    return Structurer(code, cfg, sim).body(state)


def declarations(code: CodeType, instrs: List[Instr]) -> List[ast.stmt]:
    """``global``/``nonlocal`` statements the stores and deletes of ``code`` need."""
    explicit_globals: List[str] = []
    assigned_free: List[str] = []
    for ins in instrs:
        if ins.op in ("STORE_GLOBAL", "DELETE_GLOBAL") and ins.arg not in explicit_globals:
            explicit_globals.append(ins.arg)
        if ins.op in ("STORE_DEREF", "DELETE_DEREF") and ins.arg in code.co_freevars \
                and ins.arg not in assigned_free:
            assigned_free.append(ins.arg)
    out: List[ast.stmt] = []
    if explicit_globals:
        out.append(ast.Global(names=explicit_globals))
    if assigned_free:
        out.append(ast.Nonlocal(names=assigned_free))
    return out


#: Finding a loop's blocks looks at the function's blocks once per loop. Past this many
#: (jumps x loops) that takes minutes; the largest functions of the standard library and
#: popular packages stay under a tenth of it.
MAX_LOOP_WORK = 1_000_000


class TooLarge(DecompilationError):
    """A function too large to decompile in bounded time (by either decompiler)."""


def refuse_unbounded(code: CodeType) -> None:
    """TooLarge for a function too large to structure in bounded time."""
    jumps, loops = jumps_and_loops(code)
    if (jumps + 1) * (loops + 1) > MAX_LOOP_WORK:
        raise TooLarge("too large to decompile in bounded time: %d jumps and %d loops "
                       "(framescope stops at %d jumps x loops)" % (jumps, loops, MAX_LOOP_WORK),
                       code_name=code.co_name)


def function_def(code: CodeType, func: Optional[v.Function] = None, name: Optional[str] = None) -> ast.stmt:
    """A complete ``def``/``async def`` statement for a function's code object."""
    node = def_header(code, func, name)
    refuse_unbounded(code)
    instrs = canonical_instructions(code)
    body = declarations(code, instrs) + function_body(code, statements(code, instrs)) + dead_locals(code)
    doc = docstring(code)
    if doc is not None:
        body.insert(0, ast.Expr(value=ast.Constant(value=doc)))
    node.body = body or [ast.Pass()]
    return node


def def_header(code: CodeType, func: Optional[v.Function] = None, name: Optional[str] = None) -> ast.stmt:
    """A ``def``/``async def`` statement for a function's code object, its body empty: the
    name, signature, decorators and type parameters."""
    defaults: List[ast.expr] = []
    kwdefaults: Dict[str, ast.expr] = {}
    annotations: Dict[str, ast.expr] = {}
    decorators: List[ast.expr] = []
    if func is not None:
        defaults = tuple_items(func.defaults)
        kwdefaults = dict_items(func.kwdefaults)
        annotations = annotation_items(func.annotations)
        if func.annotate is not None:  # 3.14+: a function returns them
            annotations = dict(annotate_items(body_of(func.annotate.code)))
        decorators = [d for d in func.decorators]
        annotations = written_annotations(code, annotations)
    args = arguments(code, defaults, kwdefaults, annotations)
    is_async = bool(code.co_flags & (inspect.CO_COROUTINE | inspect.CO_ASYNC_GENERATOR))
    node_type = ast.AsyncFunctionDef if is_async else ast.FunctionDef
    node = node_type(name=name or code.co_name, args=args, body=[], decorator_list=decorators,
                     returns=annotations.get("return"), type_comment=None)
    if hasattr(ast, "TypeAlias"):
        node.type_params = func.type_params if func is not None else []
    return node


def dead_locals(code: CodeType) -> List[ast.stmt]:
    """``if 0:`` assigning the locals that no instruction uses, or nothing.

    Code the compiler drops as unreachable (``if 0 and x:`` ...) still makes the names it
    assigns local variables; only such dead code gives them back.
    """
    used = used_locals(code)
    dead = [name for name in code.co_varnames if name not in used]
    if not dead:
        return []
    body: List[ast.stmt] = [ast.Assign(targets=[ast.Name(id=name, ctx=ast.Store())], value=ast.Constant(value=None),
                                       type_comment=None) for name in dead]
    return [ast.If(test=ast.Constant(value=0), body=body, orelse=[])]


def nested(func: v.Function, target: Any = None, iterator: Optional[v.Iterator] = None,
           build: Optional[Build] = None) -> Any:
    """Build what a nested code object stands for where it is used.

    ``target`` is the store target for definitions (``def``), ``"class"`` for class
    bodies, ``"generic"`` for the function that makes a generic definition (3.12+),
    ``"lazy"`` for the function of a lazily evaluated value (a type alias's, a type
    parameter's bound); ``iterator`` is the outermost iterable for a comprehension.
    ``build`` stands for `nested` in a class body (see `Build`).
    """
    code = func.code
    if target == "generic":
        return generic_definition(func, nested)
    if target == "lazy":
        return lazy_value(clean_body(body_of(code)), code.co_name)
    if target == "class":
        node = ast.ClassDef(name=code.co_name, bases=[], keywords=[],
                            body=class_body(code, body_of(code, build=build)), decorator_list=[])
        if hasattr(ast, "TypeAlias"):
            node.type_params = []
        return node
    if iterator is not None:
        node = comprehension(code, body_of(code), iterator.source)
        if code.co_flags & inspect.CO_COROUTINE and code.co_name != "<genexpr>":
            marks.mark(node, marks.ASYNC)  # the call's await belongs to the comprehension
        return node
    if code.co_name == "<lambda>":
        if target is not None:
            return None
        return lambda_expr(code, func)
    if target is None:
        if code.co_name in ("<listcomp>", "<setcomp>", "<dictcomp>", "<genexpr>"):
            raise DecompilationError("comprehension called without its iterator", code_name=code.co_name)
        raise DecompilationError("function definition used as a value", code_name=code.co_name)
    if isinstance(target, ast.Name) and target.id == CLASS_ANNOTATE and code.co_name == "__annotate__":
        conditional: dict = {}
        return ClassAnnotations(items=annotate_items(body_of(code), conditional), conditional=conditional)
    if not isinstance(target, ast.Name) or target.id != code.co_name:
        raise DecompilationError("function stored under another name", code_name=code.co_name)
    return function_def(code, func, code.co_name)


def lambda_expr(code: CodeType, func: v.Function) -> ast.Lambda:
    value = returned_expr(clean_body(body_of(code)))
    if value is None:
        raise DecompilationError("lambda body is not one expression", code_name=code.co_name)
    args = arguments(code, tuple_items(func.defaults), dict_items(func.kwdefaults))
    return ast.Lambda(args=args, body=value)


def returned_expr(body: List[ast.stmt]) -> Optional[ast.expr]:
    """The one expression a body of returns computes, or None.

    3.12+ copies the ``RETURN_VALUE`` of a lambda into both arms of a conditional
    expression, so ``lambda p: a if p else b`` reads as ``if p: return a`` then
    ``return b``.
    """
    if len(body) == 1 and isinstance(body[0], ast.Return):
        value = body[0].value
        return value if value is not None else ast.Constant(value=None)
    if not body or not isinstance(body[0], ast.If):
        return None
    test = body[0]
    then = returned_expr(test.body)
    orelse = returned_expr(test.orelse if test.orelse else body[1:])
    if then is None or orelse is None or (test.orelse and len(body) > 1):
        return None
    return ast.IfExp(test=test.test, body=then, orelse=orelse)


def tuple_items(node: Any) -> List[ast.expr]:
    if node is None or node == []:
        return []
    if isinstance(node, ast.Tuple):
        return list(node.elts)
    if isinstance(node, ast.Constant) and isinstance(node.value, tuple):
        return [ast.Constant(value=x) for x in node.value]
    raise DecompilationError("defaults are not a tuple")


def dict_items(node: Any) -> Dict[str, ast.expr]:
    if node is None or node == []:
        return {}
    if isinstance(node, ast.Dict) and all(is_name_constant(k) for k in node.keys):
        return {k.value: val for k, val in zip(node.keys, node.values)}
    raise DecompilationError("keyword defaults are not a dict")


def annotation_items(node: Any) -> Dict[str, ast.expr]:
    if node is None or node == []:
        return {}
    pairs = annotation_pairs(node)
    if pairs is None or not all(isinstance(key, str) for key, _ in pairs):
        raise DecompilationError("annotations are not a dict")
    return dict(pairs)


def annotation_pairs(node: Any) -> Optional[List[Tuple[Any, ast.expr]]]:
    """(name, annotation) pairs of a function's annotations as the bytecode builds them, or
    None for a value that holds none."""
    if isinstance(node, ast.Dict) and all(is_name_constant(k) for k in node.keys):
        return [(k.value, val) for k, val in zip(node.keys, node.values)]
    if isinstance(node, ast.Tuple) and len(node.elts) % 2 == 0:  # 3.10+: (name, value, name, value...)
        elts = node.elts
        if all(is_name_constant(elts[i]) for i in range(0, len(elts), 2)):
            return [(elts[i].value, elts[i + 1]) for i in range(0, len(elts), 2)]
    if isinstance(node, ast.Constant) and isinstance(node.value, tuple) and len(node.value) % 2 == 0:
        items = node.value
        return [(items[i], ast.Constant(value=items[i + 1])) for i in range(0, len(items), 2)]
    return None


def is_name_constant(node: Any) -> bool:
    return isinstance(node, ast.Constant) and isinstance(node.value, str)


def guarded(step: Callable[..., str], code: CodeType, *args: Any) -> str:
    """``step(code, *args)``, any failure but DecompilationError turned into one."""
    try:
        return step(code, *args)
    except DecompilationError:
        raise
    except (RecursionError, MemoryError, NestedTooDeeply):
        raise DecompilationError("too deeply nested to decompile", code_name=code.co_name) from None
    except Exception as err:  # a gap in the decompiler must never look like a user error
        raise DecompilationError("internal error (%s: %s)" % (type(err).__name__, err),
                                 code_name=code.co_name) from err
