"""The operations that compute values: loads, operators, stack shuffles, collections,
f-strings and calls, run on a symbolic stack (`simulator.Simulator` adds the ones that
make statements)."""
import ast
import copy
import keyword
from types import CodeType
from typing import Any, Callable, Dict, List, Optional

from framescope.decompiler.frontend import versions
from framescope.decompiler.frontend.instructions import Instr
from framescope.decompiler.simulate import marks
from framescope.decompiler.simulate import values as v
from framescope.decompiler.simulate.expressions import pinned_compare
from framescope.decompiler.simulate.state import (
    AssertionErrorName, BINOPS, CMPOPS, COMPREHENSIONS, ClassBody, ClassValue, CompAppend, DEAD, State,
    TupleGroup, UNARY, const, const_expr, const_value, is_class_body, is_constant, is_definition, make_slice,
    name, set_items,
)
from framescope.errors import DecompilationError


class ValueSimulator:
    """Run the value-computing canonical instructions on a `State`."""

    #: Whether a tuple or list literal passed alone to ``CALL_FUNCTION_EX`` stays a starred
    #: argument where the source must have written one (`written_starred`); machine-made
    #: code builds such lists itself, and reads best with the items as arguments.
    keeps_starred = True

    def __init__(self, code: CodeType, nested: Callable[[v.Function], Any]) -> None:
        self.code = code
        #: Builds a nested function/class/comprehension from a `values.Function`.
        self.nested = nested
        #: The ``op_*`` method of each operation seen so far (looked up once: every step needs one).
        self.methods: Dict[str, Callable[[Instr, State], None]] = {}

    # -- driver ------------------------------------------------------------------------------------
    def step(self, ins: Instr, state: State) -> None:
        method = self.methods.get(ins.op)
        if method is None:
            method = getattr(self, "op_" + ins.op, None)
            if method is None:
                raise DecompilationError("unsupported instruction", code_name=self.code.co_name,
                                         offset=ins.offset, opname=ins.raw or ins.op)
            self.methods[ins.op] = method
        try:
            method(ins, state)
        except DecompilationError as err:
            if err.offset is None:
                raise DecompilationError(err.reason, code_name=self.code.co_name, offset=ins.offset,
                                         opname=ins.raw or ins.op) from None
            raise

    def expr(self, value: Any) -> ast.expr:
        """The expression a stack value stands for."""
        if isinstance(value, (ast.expr, ast.slice)):  # 3.8: slices are not expressions
            return value
        if isinstance(value, v.Chain):
            return self.named_expr(value)
        if isinstance(value, v.Function):
            return ClassBody(value) if is_class_body(value) else self.nested(value)
        if isinstance(value, v.Converted):
            return value.value
        raise DecompilationError("%s used as a value" % type(value).__name__)

    def named_expr(self, chain: v.Chain) -> ast.NamedExpr:
        """``(a := v)``: the value stored once and still on the stack, used as a value."""
        if len(chain.targets) != 1 or not isinstance(chain.targets[0], ast.Name):
            raise DecompilationError("chained assignment used as a value")
        if chain.named is None or chain.named.target is not chain.targets[0]:
            chain.named = ast.NamedExpr(target=chain.targets[0], value=self.expr(chain.value))
        return chain.named

    def pop_expr(self, state: State) -> ast.expr:
        return self.expr(state.pop())

    def emit(self, state: State, stmt: ast.stmt) -> None:
        state.stmts.append(stmt)

    # -- constants and names -----------------------------------------------------------------------
    def op_LOAD_CONST(self, ins: Instr, state: State) -> None:
        value = ins.arg
        if isinstance(value, CodeType):
            state.push(value)  # consumed by MAKE_FUNCTION
        else:
            state.push(const_expr(value))

    def op_LOAD_COMMON_CONSTANT(self, ins: Instr, state: State) -> None:
        node = name(ins.arg)
        marks.mark(node, marks.BUILTIN)  # 3.14 tests ``f is all`` before inlining ``all(genexpr)``
        state.push(node)

    def op_LOAD_ASSERTION_ERROR(self, ins: Instr, state: State) -> None:
        state.push(AssertionErrorName(id="AssertionError", ctx=ast.Load()))

    def _load(self, ins: Instr, state: State) -> None:
        state.push(name(ins.arg))

    op_LOAD_FAST = op_LOAD_NAME = op_LOAD_GLOBAL = op_LOAD_DEREF = _load

    def op_LOAD_FROM_DICT_OR_DEREF(self, ins: Instr, state: State) -> None:
        state.pop()  # 3.12+: the class namespace from LOAD_LOCALS
        state.push(name(ins.arg))

    op_LOAD_FROM_DICT_OR_GLOBALS = op_LOAD_FROM_DICT_OR_DEREF

    def op_LOAD_CLOSURE(self, ins: Instr, state: State) -> None:
        state.push(name(ins.arg))

    def op_LOAD_FAST_AND_CLEAR(self, ins: Instr, state: State) -> None:
        state.push(v.SavedLocal(ins.arg))

    def op_LOAD_LOCALS(self, ins: Instr, state: State) -> None:
        state.push(v.Namespace())

    def op_PUSH_NULL(self, ins: Instr, state: State) -> None:
        state.push(v.NULL)

    def op_MAKE_CELL(self, ins: Instr, state: State) -> None:
        pass

    def op_COPY_FREE_VARS(self, ins: Instr, state: State) -> None:
        pass

    def op_RETURN_GENERATOR(self, ins: Instr, state: State) -> None:
        state.push(v.NULL)

    def op_GEN_START(self, ins: Instr, state: State) -> None:
        pass  # 3.10: discards the first value sent in, which the symbolic stack never held

    def op_NOP(self, ins: Instr, state: State) -> None:
        pass  # the empty range of a 3.8-3.10 try body (see `opcodes.keep_empty_range`)

    def op_POP_TOP(self, ins: Instr, state: State) -> None:
        value = state.pop()
        if isinstance(value, v.UnpackSlot):
            # 3.13+ drops a store that a later target of the same unpacking overwrites
            # (``a, _, _ = x``): the slot is that later target.
            value.group.targets[value.index] = DEAD
            self.finish_unpack(state, value.group)
            return
        module = value.module if isinstance(value, v.ImportedName) else value
        if isinstance(module, v.Module) and state.stack and isinstance(state.stack[-1], v.ImportedName) \
                and state.stack[-1].module is module:
            return  # ``import a.b.c as d`` goes on from ``a.b``: the module is done with at the end
        if isinstance(value, v.ImportedName) and value.module.fromlist is None:
            self.finish_import(state, value.module)  # that end: ``a.b`` popped once ``d`` is stored
            return
        if isinstance(value, (v.Marker,)) and not isinstance(value, (v.Chain, v.Function, v.Module)):
            return
        if isinstance(value, v.Chain) and state.stack and state.stack[-1] is value:
            return  # a copy of a stored value (3.10-3.11's ``case _`` of ``match (x := v):``): it stays
        if isinstance(value, v.Chain):
            self.finish_chain(state, value)
            return
        if isinstance(value, v.Module):
            self.finish_import(state, value)
            return
        if marks.marked(value, marks.COPIED):
            return
        node = self.expr(value)
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            # A constant statement compiles to no code: this one was an f-string without
            # fields (``f'text'``), which is not a docstring either.
            node = ast.JoinedStr(values=[node])
        self.emit(state, ast.Expr(value=node))

    # -- attributes, subscripts, operators ---------------------------------------------------------
    def op_LOAD_ATTR(self, ins: Instr, state: State) -> None:
        obj = self.pop_expr(state)
        state.push(ast.Attribute(value=obj, attr=ins.arg, ctx=ast.Load()))

    def op_LOAD_METHOD(self, ins: Instr, state: State) -> None:
        self.op_LOAD_ATTR(ins, state)
        state.push(v.NULL)

    def op_LOAD_SUPER_ATTR(self, ins: Instr, state: State) -> None:
        attr, method, two_args = ins.arg
        self_arg = self.pop_expr(state)
        cls = self.pop_expr(state)
        func = self.pop_expr(state)
        args = [cls, self_arg] if two_args else []
        call = ast.Call(func=func, args=args, keywords=[])
        state.push(ast.Attribute(value=call, attr=attr, ctx=ast.Load()))
        if method:
            state.push(v.NULL)

    def op_BINARY_SUBSCR(self, ins: Instr, state: State) -> None:
        index = self.pop_expr(state)
        obj = self.pop_expr(state)
        state.push(ast.Subscript(value=obj, slice=index, ctx=ast.Load()))

    def op_BINARY_SLICE(self, ins: Instr, state: State) -> None:
        stop = self.pop_expr(state)
        start = self.pop_expr(state)
        obj = self.pop_expr(state)
        state.push(ast.Subscript(value=obj, slice=make_slice(start, stop), ctx=ast.Load()))

    def op_BUILD_SLICE(self, ins: Instr, state: State) -> None:
        parts = [self.expr(x) for x in state.popn(ins.arg)]
        step = parts[2] if len(parts) == 3 else None
        state.push(make_slice(parts[0], parts[1], step))

    def op_BINARY_OP(self, ins: Instr, state: State) -> None:
        right = self.pop_expr(state)
        left = self.pop_expr(state)
        symbol = ins.arg
        if symbol.endswith("=") and symbol not in ("==",):
            state.push(v.Inplace(left, BINOPS[symbol[:-1]](), right))
        else:
            state.push(ast.BinOp(left=left, op=BINOPS[symbol](), right=right))

    def op_UNARY_OP(self, ins: Instr, state: State) -> None:
        operand = self.pop_expr(state)
        state.push(ast.UnaryOp(op=UNARY[ins.arg](), operand=operand))

    def op_COMPARE_OP(self, ins: Instr, state: State) -> None:
        right = self.pop_expr(state)
        left = self.pop_expr(state)
        state.push(ast.Compare(left=left, ops=[CMPOPS[ins.arg]()], comparators=[right]))

    def op_IS_OP(self, ins: Instr, state: State) -> None:
        right = self.pop_expr(state)
        left = self.pop_expr(state)
        op = ast.IsNot() if ins.arg else ast.Is()
        state.push(pinned_compare(left, op, right))

    def op_CONTAINS_OP(self, ins: Instr, state: State) -> None:
        right = self.pop_expr(state)
        if isinstance(right, ast.Constant) and isinstance(right.value, frozenset):
            right = ast.Set(elts=set_items(right.value))
        left = self.pop_expr(state)
        op = ast.NotIn() if ins.arg else ast.In()
        state.push(pinned_compare(left, op, right))

    # -- stack shuffles ----------------------------------------------------------------------------
    def op_COPY(self, ins: Instr, state: State) -> None:
        value = state.peek(ins.arg)
        if isinstance(value, ast.expr):
            marks.mark(value, marks.COPIED)  # popping a copy is clean-up, not a statement
        state.push(value)

    def op_SWAP(self, ins: Instr, state: State) -> None:
        n = ins.arg
        if len(state.stack) < n:
            raise DecompilationError("stack underflow")
        self.group(state.stack[-n:])
        state.stack[-1], state.stack[-n] = state.stack[-n], state.stack[-1]

    def op_ROT(self, ins: Instr, state: State) -> None:
        n = ins.arg
        if not 0 < n <= len(state.stack):
            raise DecompilationError("stack underflow")
        self.group(state.stack[-n:])
        top = state.stack.pop()
        state.stack.insert(len(state.stack) - n + 1, top)

    def group(self, values: List[Any]) -> None:
        """Values shuffled before their stores: maybe ``a, b = x, y`` (see `regroup`)."""
        if len(values) not in (2, 3) or not all(isinstance(x, ast.expr) for x in values):
            return
        if any(marks.marked(x, marks.COPIED) or marks.marked(x, marks.GROUP, None) is not None for x in values):
            return
        group = TupleGroup(list(values))
        for value in values:
            marks.mark(value, marks.GROUP, group)

    def regroup(self, state: State, value: Any, stmt: ast.Assign) -> None:
        """Once every value of a shuffled group is stored, write the stores as one tuple assignment."""
        group = marks.marked(value, marks.GROUP, None)
        if group is None:
            return
        group.stores.append((value, stmt))
        if len(group.stores) < len(group.values):
            return
        stmts = [st for _, st in group.stores]
        if state.stmts[-len(stmts):] != stmts or any(len(st.targets) != 1 for st in stmts):
            return
        by_value = {id(val): st.targets[0] for val, st in group.stores}
        if len(by_value) != len(group.values):
            return
        targets = [by_value[id(val)] for val in group.values]
        del state.stmts[-len(stmts):]
        state.stmts.append(ast.Assign(targets=[ast.Tuple(elts=targets, ctx=ast.Store())],
                                      value=ast.Tuple(elts=list(group.values), ctx=ast.Load()), type_comment=None))

    # -- building collections ----------------------------------------------------------------------
    def op_BUILD_TUPLE(self, ins: Instr, state: State) -> None:
        items = state.popn(ins.arg)
        if items and all(isinstance(x, v.TypeParam) for x in items):
            state.push(v.TypeParams([x.node for x in items]))
            return
        if items and all(isinstance(x, v.Marker) and not isinstance(x, (v.Chain, v.Function)) for x in items):
            raise DecompilationError("tuple of interpreter values")
        state.push(ast.Tuple(elts=[self.expr(x) for x in items], ctx=ast.Load()))

    def op_BUILD_LIST(self, ins: Instr, state: State) -> None:
        state.push(ast.List(elts=[self.expr(x) for x in state.popn(ins.arg)], ctx=ast.Load()))

    def op_BUILD_SET(self, ins: Instr, state: State) -> None:
        state.push(ast.Set(elts=[self.expr(x) for x in state.popn(ins.arg)]))

    def op_BUILD_MAP(self, ins: Instr, state: State) -> None:
        items = [self.expr(x) for x in state.popn(2 * ins.arg)]
        state.push(ast.Dict(keys=items[0::2], values=items[1::2]))

    def op_BUILD_CONST_KEY_MAP(self, ins: Instr, state: State) -> None:
        keys = state.pop()
        vals = [self.expr(x) for x in state.popn(ins.arg)]
        key_values = const_value(keys)
        if not isinstance(key_values, tuple):
            raise DecompilationError("BUILD_CONST_KEY_MAP without constant keys")
        state.push(ast.Dict(keys=[const(k) for k in key_values], values=vals))

    def op_BUILD_STRING(self, ins: Instr, state: State) -> None:
        parts = [self.expr(x) for x in state.popn(ins.arg)]
        values: List[ast.expr] = []
        for part in parts:
            if isinstance(part, ast.JoinedStr):
                values.extend(part.values)
            else:
                values.append(part)
        state.push(ast.JoinedStr(values=values))

    def op_LIST_EXTEND(self, ins: Instr, state: State) -> None:
        items = self.pop_expr(state)
        self._extend(state.own_display(ins.arg), items)

    def op_SET_UPDATE(self, ins: Instr, state: State) -> None:
        items = self.pop_expr(state)
        self._extend(state.own_display(ins.arg), items)

    def _extend(self, target: Any, items: ast.expr) -> None:
        if not isinstance(target, (ast.List, ast.Set)):
            raise DecompilationError("extend of a non-literal")
        if isinstance(items, ast.Tuple) and is_constant(items):
            # 3.9+ build a display of three or more constants from the constant tuple:
            # ``[1, 2, 3]`` (``[*(1, 2, 3)]`` compiles alike).
            target.elts.extend(items.elts)
        elif isinstance(items, ast.Constant) and isinstance(items.value, frozenset):
            elts = set_items(items.value)
            if not target.elts and 0 < len(elts) < 3:
                # The source repeated an item (``{a, a, b}``): the compiler folds a display of
                # three or more constants, whatever their number once a set; so do three.
                elts += [copy.deepcopy(elts[-1]) for _ in range(3 - len(elts))]
            target.elts.extend(elts)
        else:
            target.elts.append(ast.Starred(value=items, ctx=ast.Load()))

    def op_DICT_UPDATE(self, ins: Instr, state: State) -> None:
        items = self.pop_expr(state)
        target = state.own_display(ins.arg)
        if not isinstance(target, ast.Dict):
            raise DecompilationError("dict update of a non-literal")
        target.keys.append(None)
        target.values.append(items)

    def op_DICT_MERGE(self, ins: Instr, state: State) -> None:
        items = self.pop_expr(state)
        target = state.own_display(ins.arg)
        if not isinstance(target, ast.Dict):
            raise DecompilationError("dict merge of a non-literal")
        target.keys.append(None)
        target.values.append(items)

    def op_LIST_TO_TUPLE(self, ins: Instr, state: State) -> None:
        items = self.pop_expr(state)
        if not isinstance(items, ast.List):
            raise DecompilationError("tuple of a non-literal list")
        state.push(ast.Tuple(elts=items.elts, ctx=ast.Load()))

    def op_BUILD_UNPACK(self, ins: Instr, state: State) -> None:
        """3.8's ``BUILD_*_UNPACK``: runs of plain items alternate with ``*x``/``**x`` parts.

        The compiler starts a new literal for each run of plain items, so a literal
        right after another literal can only be an unpacked one (``**{...}``).
        """
        kind, count = ins.arg
        parts = [self.expr(x) for x in state.popn(count)]
        literal = ast.Dict if kind == "dict" else (ast.Set if kind == "set" else (ast.Tuple, ast.List))
        runs: List[bool] = []  # for each part: is it a run of plain items?
        for i, part in enumerate(parts):
            runs.append(isinstance(part, literal) and count > 1 and not (i and runs[i - 1]))
        if kind == "dict":
            keys: List[Optional[ast.expr]] = []
            vals: List[ast.expr] = []
            for part, run in zip(parts, runs):
                if run:
                    keys.extend(part.keys)
                    vals.extend(part.values)
                else:
                    keys.append(None)
                    vals.append(part)
            state.push(ast.Dict(keys=keys, values=vals))
            return
        elts: List[ast.expr] = []
        for part, run in zip(parts, runs):
            if run:
                elts.extend(part.elts)
            else:
                elts.append(ast.Starred(value=part, ctx=ast.Load()))
        if kind == "set":
            state.push(ast.Set(elts=elts))
        else:
            state.push((ast.Tuple if kind == "tuple" else ast.List)(elts=elts, ctx=ast.Load()))

    def in_display(self, state: State, depth: int, kind) -> bool:
        """Whether an append adds to a literal being built (``[*a, b]``), not to a comprehension.

        A comprehension's collection lies below the loop's iterator; a display's is
        reached without passing one.
        """
        if len(state.stack) < depth:
            return False
        target = state.stack[-depth]
        between = state.stack[len(state.stack) - depth + 1:]
        return isinstance(target, kind) and not any(isinstance(x, v.Iterator) for x in between)

    def op_LIST_APPEND(self, ins: Instr, state: State) -> None:
        value = self.pop_expr(state)
        if self.in_display(state, ins.arg, (ast.List, ast.Set)):
            state.own_display(ins.arg).elts.append(value)
            return
        self.emit(state, CompAppend(value=value, key=None, depth=ins.arg))

    op_SET_ADD = op_LIST_APPEND

    def op_MAP_ADD(self, ins: Instr, state: State) -> None:
        value = self.pop_expr(state)
        key = self.pop_expr(state)
        if self.in_display(state, ins.arg, ast.Dict):
            target = state.own_display(ins.arg)
            target.keys.append(key)
            target.values.append(value)
            return
        self.emit(state, CompAppend(value=value, key=key, depth=ins.arg))

    # -- f-strings ---------------------------------------------------------------------------------
    def op_CONVERT_VALUE(self, ins: Instr, state: State) -> None:
        state.push(v.Converted(self.pop_expr(state), ins.arg))

    def op_FORMAT_VALUE(self, ins: Instr, state: State) -> None:
        conversion, has_spec = ins.arg
        spec = self.pop_expr(state) if has_spec else None
        value = state.pop()
        if isinstance(value, v.Converted):
            conversion, value = value.conversion, value.value
        value = self.expr(value)
        if spec is not None and not isinstance(spec, ast.JoinedStr):
            spec = ast.JoinedStr(values=[spec])
        state.push(ast.JoinedStr(values=[ast.FormattedValue(value=value, conversion=conversion, format_spec=spec)]))

    # -- calls -------------------------------------------------------------------------------------
    def op_CALL(self, ins: Instr, state: State) -> None:
        argc, kwnames, slots = ins.arg
        self._call(state, argc, kwnames or (), slots)

    def op_CALL_KW(self, ins: Instr, state: State) -> None:
        argc, slots = ins.arg
        names = const_value(state.pop())
        if not isinstance(names, tuple):
            raise DecompilationError("keyword names are not a constant")
        self._call(state, argc, names, slots)

    def _call(self, state: State, argc: int, kwnames: tuple, slots: int) -> None:
        args = state.popn(argc)
        func, implicit = self._pop_callable(state, slots)
        args = implicit + args
        argc = len(args)
        npos = argc - len(kwnames)
        positional = args[:npos]
        keywords = [ast.keyword(arg=k, value=self.expr(a)) for k, a in zip(kwnames, args[npos:])]
        if isinstance(func, v.WithExit):
            state.push(v.ExitResult())
            return
        if isinstance(func, v.EnterMethod):
            state.push(v.Entered(func.manager, func.is_async))
            return
        if isinstance(func, v.BuildClass):
            state.push(self.nested_class(positional, keywords))
            return
        if isinstance(func, v.Function) and func.code.co_name.startswith(v.GENERIC_SCOPE) and not keywords:
            func.call_args = positional  # 3.12+: a generic definition, made by its own function
            state.push(self.nested(func, "generic"))
            return
        if (isinstance(func, v.Function) and len(positional) == 1 and not keywords
                and func.code.co_name in COMPREHENSIONS and isinstance(positional[0], v.Iterator)):
            state.push(self.nested(func, None, positional[0]))
            return
        if (len(positional) == 1 and not keywords and isinstance(positional[0], v.Function)
                and is_definition(positional[0]) and not isinstance(func, v.Marker)):
            positional[0].decorators.insert(0, func)
            state.push(positional[0])
            return
        if len(positional) == 1 and not keywords and isinstance(positional[0], ClassValue):
            positional[0].node.decorator_list.insert(0, self.expr(func))
            state.push(positional[0])
            return
        call = ast.Call(func=self.expr(func), args=[self.expr(a) for a in positional], keywords=keywords)
        state.push(call)

    def _pop_callable(self, state: State, slots: int) -> Any:
        """The callable below a call's arguments, and any implicit first argument.

        With two slots, one is NULL unless the second holds the first argument itself
        (3.11 calls a comprehension's function as ``[function, iterator]``).
        """
        below = state.popn(slots)
        callables = [x for x in below if x is not v.NULL]
        if len(callables) == 2:
            return callables[0], [callables[1]]
        if len(callables) != 1:
            raise DecompilationError("call without a callable")
        return callables[0], []

    def op_CALL_FUNCTION_EX(self, ins: Instr, state: State) -> None:
        has_kwargs, slots = ins.arg
        kwargs = state.pop() if has_kwargs is not False else None
        if kwargs is v.NULL:
            kwargs = None
        star = self.pop_expr(state)
        func, implicit = self._pop_callable(state, slots)
        if implicit:
            raise DecompilationError("unexpected value below a call")
        builds_class = isinstance(func, v.BuildClass)
        func = None if builds_class else self.expr(func)
        if isinstance(star, (ast.Tuple, ast.List)) and not (kwargs is None and self.keeps_starred and written_starred(star)):
            args = list(star.elts)
        else:
            args = [ast.Starred(value=star, ctx=ast.Load())]
        keywords = [] if kwargs is None else call_keywords(self.expr(kwargs), args)
        if builds_class:  # ``class A(*bases, **kw)``
            if not args or not isinstance(args[0], ClassBody):
                raise DecompilationError("class without a body")
            state.push(self.nested_class([args[0].func] + args[1:], keywords))
            return
        state.push(ast.Call(func=func, args=args, keywords=keywords))


def written_starred(star: ast.expr) -> bool:
    """Whether a tuple or list passed alone to ``CALL_FUNCTION_EX`` was a starred argument,
    ``f(*(0, 1))``: a call without keywords with as few positional arguments (none starred)
    keeps them on the stack (`versions.POSITIONAL_ARGS_ON_STACK`)."""
    limit = versions.POSITIONAL_ARGS_ON_STACK
    return not any(isinstance(elt, ast.Starred) for elt in star.elts) and (limit is None or len(star.elts) <= limit)


def call_keywords(kwargs: ast.expr, args: List[ast.expr]) -> List[ast.keyword]:
    """The keyword arguments of a ``CALL_FUNCTION_EX`` from the dict it passes.

    The dict's own keys are keyword arguments only where they name one and the call has
    ``*args`` or ``**x`` too (``f(1, k=v)`` alone compiles to a plain call, unless it has
    too many keywords for the stack) or the dict cannot be a ``**{...}`` literal (3.9+
    merges such a literal into a fresh dict); else the dict is a literal the source
    unpacked: ``f(1, **{'k': v})``.
    """
    if not isinstance(kwargs, ast.Dict):
        return [ast.keyword(arg=None, value=kwargs)]
    unpacked = None in kwargs.keys or any(isinstance(a, ast.Starred) for a in args) \
        or versions.UNPACKED_DICT_MERGED
    if not unpacked or not all(k is None or is_keyword_name(k) for k in kwargs.keys):
        return [ast.keyword(arg=None, value=kwargs)]
    keywords = [ast.keyword(arg=None if k is None else k.value, value=val)
                for k, val in zip(kwargs.keys, kwargs.values)]
    if versions.KEYWORDS_MERGED_ONE_BY_ONE:
        keywords = merged_keywords(keywords)
    return keywords


def merged_keywords(keywords: List[ast.keyword]) -> List[ast.keyword]:
    """``f(**d, k=v)`` for ``f(**d, **{'k': v})``: right after another ``**x``, a merged
    literal of keyword names compiles as the keyword arguments do."""
    out: List[ast.keyword] = []
    names = {kw.arg for kw in keywords if kw.arg is not None}
    for kw in keywords:
        literal = kw.value
        if (out and out[-1].arg is None and kw.arg is None and isinstance(literal, ast.Dict) and literal.keys
                and all(k is not None and is_keyword_name(k) for k in literal.keys)
                and not names & {k.value for k in literal.keys}
                and len({k.value for k in literal.keys}) == len(literal.keys)):
            names |= {k.value for k in literal.keys}
            out += [ast.keyword(arg=k.value, value=val) for k, val in zip(literal.keys, literal.values)]
        else:
            out.append(kw)
    return out


def is_keyword_name(key: ast.expr) -> bool:
    return isinstance(key, ast.Constant) and isinstance(key.value, str) and key.value.isidentifier() \
        and not keyword.iskeyword(key.value)
