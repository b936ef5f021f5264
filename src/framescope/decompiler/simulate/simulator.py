"""Pass 4: straight-line canonical instructions → expressions and simple statements.

The simulator runs instructions on a symbolic stack of `ast` expressions (and the
markers of `values.py`) and appends the statements they complete to a list.  One
method per canonical operation, like ``dis``.  Control flow is not its business:
the structurer (`structure/`) calls `Simulator.step` for the body of each block and
reads the stack itself at jumps.
"""
import ast
from types import CodeType
from typing import Any, List, Optional

from framescope.decompiler.frontend.instructions import Instr
from framescope.decompiler.simulate import marks
from framescope.decompiler.simulate import values as v
from framescope.decompiler.simulate.operations import ValueSimulator
from framescope.decompiler.simulate.state import (
    ClassValue, DEAD, ExceptEnd, State, as_store, const_value, is_none, make_slice, name,
    same_target,
)
from framescope.errors import DecompilationError


#: The ``ast`` node of the type parameter each intrinsic makes (3.12+).
TYPE_PARAM_KINDS = {"INTRINSIC_TYPEVAR": "TypeVar", "INTRINSIC_PARAMSPEC": "ParamSpec",
                    "INTRINSIC_TYPEVARTUPLE": "TypeVarTuple"}


class Simulator(ValueSimulator):
    """Run canonical instructions on a `State`: `ValueSimulator` and the operations that
    complete statements (stores, definitions, returns and raises, yields, exception
    handling, imports)."""

    # -- stores ------------------------------------------------------------------------------------
    def store(self, state: State, target: ast.expr) -> None:
        value = state.pop()
        if isinstance(value, v.Function):
            stmt = self.nested(value, target)
            if stmt is not None:
                self.emit(state, stmt)
                return
            value = self.expr(value)
        elif self.store_marker(state, value, target):
            return
        self.store_value(state, value, target)

    def store_marker(self, state: State, value: Any, target: ast.expr) -> bool:
        """Store a marker value (an unpacked item, an import, a class...); False for other values."""
        if isinstance(value, v.UnpackSlot):
            value.group.targets[value.index] = target
            self.finish_unpack(state, value.group)
        elif isinstance(value, v.Inplace) and same_target(value.target, target):
            self.emit(state, ast.AugAssign(target=as_store(target), op=value.op, value=value.value))
        elif isinstance(value, v.ImportedName):
            asname = target.id if isinstance(target, ast.Name) else None
            value.module.names.append((value.name, asname))
        elif isinstance(value, v.Module):
            self.store_import(state, value, target)
        elif isinstance(value, v.Bindable):
            value.target = as_store(target)
        elif isinstance(value, ClassValue):
            if not (isinstance(target, ast.Name) and target.id == value.node.name):
                raise DecompilationError("class stored under another name")
            self.emit(state, value.node)
        elif isinstance(value, (v.SavedLocal, v.Namespace, v.TypeParam)):
            pass  # a 3.12+ comprehension restoring a local; 3.13+ saving a class's namespace;
            # a type parameter's name in its generic definition's scope
        elif isinstance(value, v.TypeAlias):
            if not (isinstance(target, ast.Name) and target.id == value.name):
                raise DecompilationError("type alias stored under another name")
            self.emit(state, ast.TypeAlias(name=as_store(target), type_params=value.params, value=value.value))
        elif isinstance(value, v.Chain):
            value.targets.append(as_store(target))
            if not (state.stack and state.stack[-1] is value):
                self.finish_chain(state, value)
        else:
            return False
        return True

    def store_value(self, state: State, value: Any, target: ast.expr) -> None:
        """Store an expression: an assignment, or part of a chained or tuple assignment."""
        if state.stack and state.stack[-1] is value:
            # The same value is still on the stack: ``a = b = value`` or ``(a := value)``.
            state.stack[-1] = v.Chain(value, [as_store(target)])
            return
        top = state.stack[-1] if state.stack else None
        if (isinstance(top, ast.expr) and isinstance(value, ast.expr) and marks.marked(value, marks.GROUP, None) is None
                and not marks.marked(top, marks.COPIED)):
            # Another value waits under this one: 3.11+ compiles ``a, b = x, y`` as two
            # loads and two stores in reverse order (no swap).
            state.run.append((as_store(target), value))
            return
        if state.run:
            pairs = state.run + [(as_store(target), value)]
            state.run = []
            self.emit(state, ast.Assign(targets=[ast.Tuple(elts=[t for t, _ in reversed(pairs)], ctx=ast.Store())],
                                        value=ast.Tuple(elts=[self.expr(x) for _, x in reversed(pairs)],
                                                        ctx=ast.Load()), type_comment=None))
            return
        stmt = ast.Assign(targets=[as_store(target)], value=self.expr(value), type_comment=None)
        self.emit(state, stmt)
        self.regroup(state, value, stmt)

    def finish_chain(self, state: State, chain: v.Chain) -> None:
        self.emit(state, ast.Assign(targets=list(chain.targets), value=self.expr(chain.value), type_comment=None))

    def finish_unpack(self, state: State, group: v.Unpack) -> None:
        if any(t is None for t in group.targets):
            return
        elts = list(group.targets)
        for i, target in enumerate(elts):
            if target is DEAD:
                later = [t for t in elts[i + 1:] if isinstance(t, ast.Name) and t is not DEAD]
                if not later:
                    raise DecompilationError("unpacking target dropped")
                elts[i] = name(later[0].id, True)
        if group.star is not None:
            elts[group.star] = ast.Starred(value=elts[group.star], ctx=ast.Store())
        target = ast.Tuple(elts=elts, ctx=ast.Store())
        if group.parent is not None:
            group.parent.group.targets[group.parent.index] = target
            self.finish_unpack(state, group.parent.group)
            return
        value = group.value
        if isinstance(value, v.Bindable):
            value.target = target
            return
        if isinstance(group.chained, v.Chain):
            group.chained.targets.append(target)
            return
        if group.chained is True and state.stack and state.stack[-1] is value:
            state.stack[-1] = v.Chain(value, [target])
            return
        targets = list(group.chained) if isinstance(group.chained, list) else []
        stmt = ast.Assign(targets=targets + [target], value=value, type_comment=None)
        self.emit(state, stmt)
        self.regroup(state, value, stmt)  # ``(a, b), (c, d) = x, y``

    def _store_name(self, ins: Instr, state: State) -> None:
        self.store(state, name(ins.arg, True))

    op_STORE_FAST = op_STORE_NAME = op_STORE_GLOBAL = op_STORE_DEREF = _store_name

    def op_STORE_ATTR(self, ins: Instr, state: State) -> None:
        obj = self.pop_expr(state)
        self.store(state, ast.Attribute(value=obj, attr=ins.arg, ctx=ast.Store()))

    def op_STORE_SUBSCR(self, ins: Instr, state: State) -> None:
        index = self.pop_expr(state)
        obj = self.pop_expr(state)
        self.store(state, ast.Subscript(value=obj, slice=index, ctx=ast.Store()))

    def op_STORE_SLICE(self, ins: Instr, state: State) -> None:
        stop = self.pop_expr(state)
        start = self.pop_expr(state)
        obj = self.pop_expr(state)
        self.store(state, ast.Subscript(value=obj, slice=make_slice(start, stop), ctx=ast.Store()))

    def _delete(self, target: ast.expr, state: State) -> None:
        self.emit(state, ast.Delete(targets=[target]))

    def _delete_name(self, ins: Instr, state: State) -> None:
        self._delete(ast.Name(id=ins.arg, ctx=ast.Del()), state)

    op_DELETE_FAST = op_DELETE_NAME = op_DELETE_GLOBAL = op_DELETE_DEREF = _delete_name

    def op_DELETE_ATTR(self, ins: Instr, state: State) -> None:
        obj = self.pop_expr(state)
        self._delete(ast.Attribute(value=obj, attr=ins.arg, ctx=ast.Del()), state)

    def op_DELETE_SUBSCR(self, ins: Instr, state: State) -> None:
        index = self.pop_expr(state)
        obj = self.pop_expr(state)
        self._delete(ast.Subscript(value=obj, slice=index, ctx=ast.Del()), state)

    def op_UNPACK_SEQUENCE(self, ins: Instr, state: State) -> None:
        self._unpack(state, ins.arg, None)

    def op_UNPACK_EX(self, ins: Instr, state: State) -> None:
        before, after = ins.arg & 0xFF, ins.arg >> 8
        self._unpack(state, before + 1 + after, before)

    def _unpack(self, state: State, count: int, star: Optional[int]) -> None:
        value = state.pop()
        parent = value if isinstance(value, v.UnpackSlot) else None
        chained: Any = None
        if isinstance(value, v.Chain) and state.stack and state.stack[-1] is value:
            chained, value = value, value.value  # ``a = (b, c) = d = v``: more targets follow
        elif isinstance(value, v.Chain):
            chained, value = value.targets, value.value  # ``a = (b, c) = v``: the last target
        elif state.stack and state.stack[-1] is value and isinstance(value, ast.expr):
            chained = True  # ``(b, c) = a = v``: the copy is stored after the unpacking
        if parent is None and not isinstance(value, v.Bindable):
            value = self.expr(value)
        group = v.Unpack(value, [None] * count, star, parent, chained)
        for index in reversed(range(count)):
            state.push(v.UnpackSlot(group, index))

    # -- functions and classes ---------------------------------------------------------------------
    def op_MAKE_FUNCTION(self, ins: Instr, state: State) -> None:
        flags, has_qualname = ins.arg
        if has_qualname:
            state.pop()
        code = state.pop()
        if not isinstance(code, CodeType):
            raise DecompilationError("MAKE_FUNCTION without a code object")
        func = v.Function(code)
        if flags & 0x08:
            func.closure = state.pop()
        if flags & 0x04:
            func.annotations = state.pop()
        if flags & 0x02:
            func.kwdefaults = state.pop()
        if flags & 0x01:
            func.defaults = state.pop()
        state.push(func)

    def op_SET_FUNCTION_ATTRIBUTE(self, ins: Instr, state: State) -> None:
        func = state.pop()
        value = state.pop()
        if not isinstance(func, v.Function):
            raise DecompilationError("function attribute on a non-function")
        attr = {1: "defaults", 2: "kwdefaults", 4: "annotations", 8: "closure", 16: "annotate"}[ins.arg]
        setattr(func, attr, value)
        state.push(func)

    # -- type parameters and aliases (3.12+) --------------------------------------------------------
    def op_CALL_INTRINSIC_1(self, ins: Instr, state: State) -> None:
        kind = TYPE_PARAM_KINDS.get(ins.arg)
        if kind is None:
            raise DecompilationError("unsupported intrinsic %s" % ins.arg)
        param_name = const_value(state.pop())
        if not isinstance(param_name, str):
            raise DecompilationError("type parameter without a name")
        node = getattr(ast, kind)(name=param_name)
        if kind == "TypeVar":
            node.bound = None
        state.push(v.TypeParam(node))

    def op_CALL_INTRINSIC_2(self, ins: Instr, state: State) -> None:
        second = state.pop()
        first = state.pop()
        if ins.arg == "INTRINSIC_SET_FUNCTION_TYPE_PARAMS":
            if not isinstance(first, v.Function) or not isinstance(second, v.TypeParams):
                raise DecompilationError("type parameters of a non-function")
            first.type_params = second.params
            state.push(first)
            return
        if not isinstance(second, v.Function):
            raise DecompilationError("type parameter without its lazy value")
        value = self.nested(second, "lazy")
        if ins.arg == "INTRINSIC_SET_TYPEPARAM_DEFAULT" and isinstance(first, v.TypeParam):
            first.node.default_value = value  # type: ignore[attr-defined]
            state.push(first)
        elif ins.arg in ("INTRINSIC_TYPEVAR_WITH_BOUND", "INTRINSIC_TYPEVAR_WITH_CONSTRAINTS"):
            if ins.arg.endswith("CONSTRAINTS") and not isinstance(value, ast.Tuple):
                raise DecompilationError("type parameter constraints are not a tuple")
            state.push(v.TypeParam(ast.TypeVar(name=const_value(first), bound=value)))
        else:
            raise DecompilationError("unsupported intrinsic %s" % ins.arg)

    def op_TYPE_ALIAS(self, ins: Instr, state: State) -> None:
        value, params, alias_name = state.pop(), state.pop(), const_value(state.pop())
        if not isinstance(value, v.Function) or not isinstance(alias_name, str):
            raise DecompilationError("type alias of an unknown shape")
        type_params = params.params if isinstance(params, v.TypeParams) else []
        if not type_params and not is_none(params):
            raise DecompilationError("type alias of an unknown shape")
        state.push(v.TypeAlias(alias_name, type_params, self.nested(value, "lazy")))

    def op_LOAD_BUILD_CLASS(self, ins: Instr, state: State) -> None:
        state.push(v.BuildClass())

    def nested_class(self, positional: List[Any], keywords: List[ast.keyword]) -> "ClassValue":
        if len(positional) < 2 or not isinstance(positional[0], v.Function):
            raise DecompilationError("class without a body")
        body_fn = positional[0]
        class_name = self.expr(positional[1])
        bases = [self.expr(b) for b in positional[2:]]
        node = self.nested(body_fn, "class")
        node.name = class_name.value
        node.bases = bases
        node.keywords = keywords
        return ClassValue(node)

    # -- returns, raises, asserts ------------------------------------------------------------------
    def op_RETURN_VALUE(self, ins: Instr, state: State) -> None:
        value = self.pop_expr(state)
        self.emit(state, ast.Return(value=value))

    def op_RAISE_VARARGS(self, ins: Instr, state: State) -> None:
        args = [self.expr(x) for x in state.popn(ins.arg)]
        exc = args[0] if args else None
        cause = args[1] if len(args) > 1 else None
        self.emit(state, ast.Raise(exc=exc, cause=cause))

    # -- generators and coroutines ------------------------------------------------------------------
    def op_YIELD_VALUE(self, ins: Instr, state: State) -> None:
        value = self.pop_expr(state)
        state.push(ast.Yield(value=None if is_none(value) else value))

    def op_YIELD_FROM(self, ins: Instr, state: State) -> None:
        state.pop()  # the value sent first (None)
        source = state.pop()
        if isinstance(source, (ast.Await, v.Entered, v.ExitResult)) or marks.marked(source, marks.ASYNC):
            state.push(source)
        elif isinstance(source, v.Iterator):
            state.push(ast.YieldFrom(value=source.source))
        else:
            raise DecompilationError("yield from without an iterator")

    def op_ASYNC_GEN_WRAP(self, ins: Instr, state: State) -> None:
        pass

    def op_GET_ITER(self, ins: Instr, state: State) -> None:
        state.push(v.Iterator(self.pop_expr(state)))

    def op_GET_AITER(self, ins: Instr, state: State) -> None:
        state.push(v.Iterator(self.pop_expr(state), True))

    def op_GET_YIELD_FROM_ITER(self, ins: Instr, state: State) -> None:
        state.push(v.Iterator(self.pop_expr(state)))

    def op_GET_AWAITABLE(self, ins: Instr, state: State) -> None:
        value = state.pop()
        if isinstance(value, (v.Entered, v.ExitResult)) or marks.marked(value, marks.ASYNC):
            state.push(value)  # awaited by ``async with`` / an async comprehension itself
            return
        state.push(ast.Await(value=self.expr(value)))

    def op_SETUP_ANNOTATIONS(self, ins: Instr, state: State) -> None:
        pass

    # -- exceptions and with statements ------------------------------------------------------------
    def op_PUSH_EXC_INFO(self, ins: Instr, state: State) -> None:
        exc = state.pop()
        state.push(v.Exc("prev"))
        state.push(exc)

    def op_POP_EXCEPT(self, ins: Instr, state: State) -> None:
        state.popn(ins.arg)
        state.ended = True
        self.emit(state, ExceptEnd())

    def op_CHECK_EXC_MATCH(self, ins: Instr, state: State) -> None:
        state.push(v.ExcMatch(self.pop_expr(state)))

    def op_CHECK_EG_MATCH(self, ins: Instr, state: State) -> None:
        exc_type = self.pop_expr(state)
        state.pop()
        state.push(v.Exc("exc"))  # what is left of the group for the next clauses
        state.push(v.ExcGroupMatch(exc_type))

    def op_EXC_MATCH(self, ins: Instr, state: State) -> None:
        exc_type = self.pop_expr(state)
        state.pop()
        state.push(v.ExcMatch(exc_type))

    def op_RERAISE(self, ins: Instr, state: State) -> None:
        node = ast.Raise(exc=None, cause=None)
        marks.mark(node, marks.RERAISE)  # the end of a finally body, not a ``raise`` of the source
        self.emit(state, node)

    def op_SETUP_FINALLY(self, ins: Instr, state: State) -> None:
        pass

    def op_POP_BLOCK(self, ins: Instr, state: State) -> None:
        pass

    def op_BEFORE_ASYNC_WITH(self, ins: Instr, state: State) -> None:
        manager = self.pop_expr(state)
        state.push(v.WithExit(manager, True))
        state.push(v.Entered(manager, True))

    def op_BEFORE_WITH(self, ins: Instr, state: State) -> None:
        manager = self.pop_expr(state)
        state.push(v.WithExit(manager))
        state.push(v.Entered(manager))

    def op_LOAD_SPECIAL(self, ins: Instr, state: State) -> None:
        manager = self.pop_expr(state)
        if ins.arg in ("__exit__", "__aexit__"):
            state.push(v.WithExit(manager, ins.arg == "__aexit__"))
        else:
            state.push(v.EnterMethod(manager, ins.arg == "__aenter__"))
        state.push(v.NULL)

    # -- imports -----------------------------------------------------------------------------------
    def op_IMPORT_NAME(self, ins: Instr, state: State) -> None:
        fromlist = const_value(state.pop())
        level = const_value(state.pop())
        state.push(v.Module(ins.arg, level, fromlist))

    def op_IMPORT_FROM(self, ins: Instr, state: State) -> None:
        module = state.peek(1)
        if isinstance(module, v.ImportedName):  # ``import a.b.c as d`` goes down one level per name
            module = module.module
        if not isinstance(module, v.Module):
            raise DecompilationError("IMPORT_FROM without a module")
        state.push(v.ImportedName(module, ins.arg))

    def op_IMPORT_STAR(self, ins: Instr, state: State) -> None:
        module = state.pop()
        if not isinstance(module, v.Module):
            raise DecompilationError("import * without a module")
        self.emit(state, ast.ImportFrom(module=module.name or None, names=[ast.alias(name="*", asname=None)],
                                        level=module.level))
        if ins.arg:  # 3.12+: an intrinsic, whose None result is popped
            state.push(v.Unused())

    def finish_import(self, state: State, module: v.Module) -> None:
        """The module is popped: emit the from-import (or dotted import-as) it served."""
        if module.fromlist is None:  # ``import a.b.c as d``: attributes taken one by one
            if not module.names:
                raise DecompilationError("import without a target")
            alias = ast.alias(name=module.name, asname=module.names[-1][1])
            self.emit(state, ast.Import(names=[alias]))
            return
        names = [ast.alias(name=n, asname=None if a == n else a) for n, a in module.names]
        self.emit(state, ast.ImportFrom(module=module.name or None, names=names, level=module.level))

    def store_import(self, state: State, module: v.Module, target: ast.expr) -> None:
        if not isinstance(target, ast.Name):
            raise DecompilationError("import stored to a non-name")
        top = module.name.split(".")[0]
        if module.attrs or target.id != top:
            alias = ast.alias(name=module.name, asname=target.id)
        else:
            alias = ast.alias(name=module.name, asname=None)
        self.emit(state, ast.Import(names=[alias]))

    def op_PRINT_EXPR(self, ins: Instr, state: State) -> None:
        self.emit(state, ast.Expr(value=self.pop_expr(state)))
