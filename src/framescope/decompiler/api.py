"""``framescope.decompile``: from a Python object to checked source text."""
import ast
import functools
import inspect
from types import CodeType, FunctionType, MethodType
from typing import Any, List, Optional, Sequence, Tuple

from framescope.decompiler.emit.cleanup import annotations_of, clean_body, strip_return_none
from framescope.decompiler.origin import compiled_from_source
from framescope.decompiler.function import Build, TooLarge, body_of, function_def, guarded, lambda_expr, nested
from framescope.decompiler.simulate.values import Function
from framescope.decompiler.emit.defaults import function_defaults
from framescope.decompiler.emit.literals import percent_format
from framescope.decompiler.emit.unparse import NestedTooDeeply, unparse
from framescope.errors import DecompilationError

#: The first line of what the machine-code decompiler answers for `decompile`.
MACHINE_MADE = "# framescope: machine-made bytecode"


def decompile(obj: Any, *, indent: int = 4, verify: bool = True, machine: bool = True,
              partial: bool = False) -> str:
    """Source text for ``obj``; see `framescope.decompile`."""
    if isinstance(obj, type):
        return decompile_class(obj, indent=indent, verify=verify, partial=partial)[0]
    func, code = unwrap(obj)
    if partial and not is_function_code(code):
        return decompile_parts(code, indent=indent, verify=verify)[0]
    refuse_malformed(code)
    try:
        return guarded(decompile_code, code, func, indent, verify)
    except DecompilationError as refused:
        if not machine or not is_machine_candidate(code) or isinstance(refused, TooLarge) \
                or compiled_from_source(code):
            raise
        try:
            source = guarded(machine_code, code, indent)
        except DecompilationError as also:
            raise DecompilationError("%s; as machine-made code: %s" % (refused.reason, also.reason),
                                     code_name=refused.code_name or code.co_name, offset=refused.offset,
                                     opname=refused.opname) from None
        return "%s (no source has it: %s); every value is evaluated once, in bytecode order\n%s" % (
            MACHINE_MADE, " ".join(refused.reason.split()), source)


def refuse_malformed(code: CodeType) -> None:
    """DecompilationError for bytecode that no compiler wrote, which CPython's own readers
    or the decompiler could fail on (see frontend/wellformed.py), in ``code`` or a code
    object nested in it: checked before anything reads ``co_code``."""
    from framescope.decompiler.frontend.wellformed import refuse_malformed as refuse

    refuse(code)


def decompile_parts(code: CodeType, *, indent: int = 4, verify: bool = True) -> Tuple[str, List[Any]]:
    """The source of module or class body code, and the functions in it written as stubs
    (`partial.Refusal`: their code and why), none when the whole decompiles.

    Raises the whole's DecompilationError when stubs do not help (the module's own code
    is refused).
    """
    from framescope.decompiler.partial import partial_source

    refuse_malformed(code)
    try:
        return guarded(decompile_code, code, None, indent, verify), []
    except DecompilationError as refused:
        if isinstance(refused, TooLarge):
            raise
        whole = refused
    try:
        source, stubbed = partial_source(code, indent, verify, module=not is_class_body(code))
    except DecompilationError:
        raise whole from None
    except Exception as err:  # a gap in the decompiler must never look like a user error
        raise DecompilationError("internal error (%s: %s)" % (type(err).__name__, err),
                                 code_name=code.co_name) from err
    if not stubbed:
        raise whole
    return source, stubbed


def decompile_class(cls: type, *, indent: int = 4, verify: bool = True,
                    partial: bool = False) -> Tuple[str, List[Any]]:
    """A class's source and the functions in it written as stubs (see `decompile_parts`):
    its class body's code, found in its module's code, with its bases in the ``class`` line;
    else, for a class whose module has no code for it, the functions it holds, each checked."""
    from framescope.decompiler.classes import class_body_code, with_bases

    body = class_body_code(cls)
    if body is None:
        return rebuilt_class(cls, indent, verify), []
    if partial:
        source, stubbed = decompile_parts(body, indent=indent, verify=verify)
    else:
        source, stubbed = decompile(body, indent=indent, verify=verify, machine=False), []
    return with_bases(source, cls), stubbed


def rebuilt_class(cls: type, indent: int, verify: bool) -> str:
    from framescope.decompiler.classes import header, member_functions

    members = member_functions(cls)
    if not members:
        raise TypeError("framescope.decompile(): class %s has no class body code in its module and no "
                        "functions of its own to decompile" % cls.__qualname__)
    pieces = ["# framescope: %s rebuilt from the functions it holds (its module has no code for the "
              "class body)" % cls.__qualname__, header(cls)]
    for decorator, func in members:
        text = decompile(func, indent=indent, verify=verify)
        if decorator is not None:
            text = "@%s\n%s" % (decorator, text)
        pieces.append("\n".join((" " * indent + line) if line else line for line in text.split("\n")))
    return "\n".join(pieces[:2]) + "\n" + "\n\n".join(pieces[2:])


def is_machine_candidate(code: CodeType) -> bool:
    """Code the machine-code decompiler may answer for: a function's, named like one."""
    return is_function_code(code) and code.co_name.isidentifier() and not is_class_body(code)


def machine_code(code: CodeType, indent: int) -> str:
    from framescope.decompiler.machine import decompile_transformed

    return decompile_transformed(code, indent=indent)


def decompile_code(code: CodeType, func: Optional[FunctionType], indent: int, verify: bool) -> str:
    notes: List[str] = []  # comment lines above the text
    if is_class_body(code):
        tree = ast.Module(body=[nested(Function(code), "class")], type_ignores=[])
    elif code.co_name == "<lambda>":
        node = lambda_expr(code, Function(code))
        if func is not None:
            notes = add_defaults(node.args, func)
        tree = ast.Module(body=[ast.Expr(value=node)], type_ignores=[])
    elif code.co_name == "<module>" or not is_function_code(code):
        tree = module_tree(code)
    else:
        node = function_def(code)
        if func is not None:
            notes = add_defaults(node.args, func)  # type: ignore[attr-defined]
        tree = ast.Module(body=[node], type_ignores=[])
    try:
        source = layout(tree, indent)
    except NestedTooDeeply:
        raise
    except (ValueError, TypeError) as err:  # a node the printer cannot spell: a decompiler gap
        try:
            if not PercentFormats().changed(tree):
                raise
            source = layout(tree, indent)
        except (ValueError, TypeError):
            raise DecompilationError("cannot print the result (%s)" % err, code_name=code.co_name) from None
    source = "".join(note + "\n" for note in notes) + source
    if verify:
        check(source, code)
    return source


def layout(tree: ast.Module, indent: int) -> str:
    """The module's text: PEP 8's blank lines around functions and classes (see unparse)."""
    return unparse(tree, indent=indent)


class PercentFormats(ast.NodeTransformer):
    """Spell as ``'%r: %s' % (a, b)`` the f-strings the printer cannot write for this Python.

    3.11+ compiles ``%`` with a literal format and a tuple like an f-string; before 3.12
    an f-string whose fields hold a backslash cannot be written, the ``%`` form can.
    """

    def __init__(self) -> None:
        self.count = 0

    def changed(self, tree: ast.AST) -> bool:
        self.visit(tree)
        return self.count > 0

    def visit_JoinedStr(self, node: ast.JoinedStr) -> ast.AST:
        try:
            unparse(ast.Module(body=[ast.Expr(value=node)], type_ignores=[]))
            return node
        except ValueError:
            modulo = percent_format(node.values)
        if modulo is None:
            return node
        self.count += 1
        return self.generic_visit(modulo)


def unwrap(obj: Any) -> Tuple[Optional[FunctionType], CodeType]:
    """The function (when there is one) and the code object behind ``obj``."""
    seen = 0
    while seen < 100:
        seen += 1
        if isinstance(obj, CodeType):
            return None, obj
        if isinstance(obj, FunctionType):
            wrapped = getattr(obj, "__wrapped__", None)
            if wrapped is not None and wrapped is not obj:
                obj = wrapped
                continue
            return obj, obj.__code__
        if isinstance(obj, MethodType):
            obj = obj.__func__
        elif isinstance(obj, (staticmethod, classmethod)):
            obj = obj.__func__
        elif isinstance(obj, functools.partial):
            obj = obj.func
        elif isinstance(obj, property) and obj.fget is not None:
            obj = obj.fget
        elif getattr(obj, "__wrapped__", None) is not None:
            obj = obj.__wrapped__
        elif hasattr(obj, "__code__") and isinstance(obj.__code__, CodeType):
            return None, obj.__code__
        elif isinstance(getattr(type(obj), "__call__", None), FunctionType):
            obj = type(obj).__call__  # a callable object: its class's __call__
        else:
            break
    raise TypeError("framescope.decompile() needs a function, method, class, callable object or code object, not %s"
                    % type(obj).__name__)


def is_function_code(code: CodeType) -> bool:
    return bool(code.co_flags & inspect.CO_NEWLOCALS)


def is_class_body(code: CodeType) -> bool:
    """A class body's code: no fresh locals (like a module), named after the class."""
    return not is_function_code(code) and code.co_name.isidentifier()


def module_tree(code: CodeType, build: Optional[Build] = None) -> ast.Module:
    body = annotations_of(code, clean_body(strip_return_none(body_of(code, build=build))))
    if body and isinstance(body[0], ast.Assign) and len(body[0].targets) == 1:
        target = body[0].targets[0]
        if isinstance(target, ast.Name) and target.id == "__doc__" and isinstance(body[0].value, ast.Constant):
            body[0] = ast.Expr(value=body[0].value)
    return ast.Module(body=body, type_ignores=[])


def add_defaults(args: ast.arguments, func: FunctionType) -> List[str]:
    """Put the function object's defaults in its signature (see emit/defaults); the comment
    lines naming those that have no spelling and show as ``...``."""
    defaults, kwdefaults, notes = function_defaults(func)
    args.defaults = defaults
    args.kw_defaults = [kwdefaults.get(arg.arg) for arg in args.kwonlyargs]
    return notes


def check(source: str, code: CodeType) -> None:
    """Recompile ``source`` and require bytecode equivalent to ``code``."""
    recompiled_code(source, code)


def recompiled_code(source: str, code: CodeType, stubbed: Sequence[CodeType] = ()) -> None:
    """Recompile ``source`` and require bytecode equivalent to ``code``, the code objects in
    ``stubbed`` (nested in ``code``) standing for any function of their name."""
    difference = first_difference(source, code, stubbed)
    if difference is not None:
        raise DecompilationError("recompiled code differs: %s" % difference.message, code_name=code.co_name)


def first_difference(source: str, code: CodeType, stubbed: Sequence[CodeType] = ()) -> Any:
    """The first `equivalence.Difference` between ``code`` and ``source`` recompiled, or None."""
    from framescope.decompiler.verify.equivalence import find_difference, future_flags, recompile_function

    flags = future_flags(code)
    try:
        if is_class_body(code):
            module = compile(source, code.co_filename, "exec", flags=flags, dont_inherit=True)
            recompiled = next(c for c in module.co_consts if isinstance(c, CodeType) and c.co_name == code.co_name)
        elif code.co_name == "<module>" or not is_function_code(code):
            recompiled = compile(source, code.co_filename, "exec", flags=flags, dont_inherit=True)
        else:
            recompiled = recompile_function(source, code)
    except SyntaxError as err:
        raise DecompilationError("produced invalid source (%s)" % err.msg, code_name=code.co_name) from None
    return find_difference(code, recompiled, stubbed)

__all__: List[str] = ["decompile", "decompile_parts", "unwrap"]
