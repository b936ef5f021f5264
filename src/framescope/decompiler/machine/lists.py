"""Lists machine code builds itself, kept as lists of stack values at decompile time."""
import ast
from typing import Any, Callable, List

from framescope.decompiler.frontend.instructions import Instr
from framescope.decompiler.machine.spilling import SpillingSimulator
from framescope.decompiler.machine.values import NewList, constant_index, constant_slice
from framescope.decompiler.simulate import values as v
from framescope.decompiler.simulate.state import State, const_expr, make_slice, name
from framescope.errors import DecompilationError


class MachineSimulator(SpillingSimulator):
    """`SpillingSimulator` with the operations on lists this code built (`NewList`): indexing,
    slicing, extending and slice-assigning them with constants happen at decompile time."""

    def op_BUILD_LIST(self, ins: Instr, state: State) -> None:
        state.push(NewList(state.popn(ins.arg)))

    def holds(self, value: Any, target: NewList) -> bool:
        """Whether ``target`` is ``value`` or inside it."""
        return value is target or (isinstance(value, NewList) and any(x is target for x in self.inside(value)))

    def cyclic(self, state: State, target: Any, item: Any) -> bool:
        """Whether putting ``item`` into ``target``, a list built here, would make it hold itself
        (both still wait); then ``target`` becomes a real list under a name."""
        if not isinstance(target, NewList) or not self.holds(item, target):
            return False
        self.spill(state, target)
        return True

    def change(self, state: State, target: NewList, part: slice, items: List[Any]) -> None:
        """``target[part] = items`` on a list built here that still waits, where ``items`` (values,
        or another list's items) just left the top of the stack."""
        holder = NewList(list(items))
        saved: List[Any] = []

        def apply() -> None:
            saved[:] = target.items
            state.pop()
            target.items[part] = holder.items

        def undo() -> None:
            target.items[:] = saved
            state.push(holder)

        state.push(holder)  # the items wait on top until they join the list
        self.rearrange(state, apply, undo)

    def op_LIST_APPEND(self, ins: Instr, state: State) -> None:
        target = state.peek(ins.arg + 1)
        if isinstance(target, NewList) and not self.cyclic(state, target, state.peek(1)):
            self.change(state, target, slice(len(target.items), None), [state.pop()])
            return
        self.method_call(state, ins.arg, "append", state.pop())

    def op_LIST_EXTEND(self, ins: Instr, state: State) -> None:
        target = state.peek(ins.arg + 1)
        if isinstance(target, NewList) and not self.cyclic(state, target, state.peek(1)):
            items = state.pop()
            end = slice(len(target.items), None)
            if isinstance(items, NewList):
                self.change(state, target, end, list(items.items))
                target.exact = target.exact and items.exact
            elif isinstance(items, ast.Constant) and isinstance(items.value, tuple):
                self.change(state, target, end, [const_expr(x) for x in items.value])
            else:
                self.change(state, target, end, [ast.Starred(value=self.expr_of(state, items), ctx=ast.Load())])
                target.exact = False
            return
        self.method_call(state, ins.arg, "extend", state.pop())

    def method_call(self, state: State, depth: int, method: str, argument: Any) -> None:
        """``target.method(argument)`` on a value that stays on the stack ``depth`` deep."""
        arg = self.expr_of(state, argument)
        target = state.peek(depth)
        if isinstance(target, v.Marker) or isinstance(target, NewList):
            raise DecompilationError("%s on an interpreter value" % method)
        if not self.pure(target):
            target = self.spill(state, target)
        call = ast.Call(func=ast.Attribute(value=target, attr=method, ctx=ast.Load()), args=[arg], keywords=[])
        self.emit(state, ast.Expr(value=call))

    def display_below(self, state: State, depth: int, kind: Any) -> bool:
        """Whether the value that ``depth`` names (with the operand still on top) is a display of
        ``kind`` that may take the operand in: what waits above it has no effects, since the
        display is evaluated before them."""
        if len(state.stack) <= depth:
            raise DecompilationError("stack underflow")
        target = state.stack[-depth - 1]
        above = State(state.stack[len(state.stack) - depth:-1])
        return (isinstance(target, kind) and self.count(state, target) == 1
                and not any(self.impure(x) for _, _, x in self.pending(above)))

    def op_DICT_UPDATE(self, ins: Instr, state: State) -> None:
        if self.display_below(state, ins.arg, ast.Dict):
            super().op_DICT_UPDATE(ins, state)
            return
        self.method_call(state, ins.arg, "update", state.pop())

    def op_DICT_MERGE(self, ins: Instr, state: State) -> None:
        if not self.display_below(state, ins.arg, ast.Dict):
            raise DecompilationError("keyword arguments merged into a value that waits")
        super().op_DICT_MERGE(ins, state)

    def op_SET_UPDATE(self, ins: Instr, state: State) -> None:
        if self.display_below(state, ins.arg, ast.Set):
            super().op_SET_UPDATE(ins, state)
            return
        self.method_call(state, ins.arg, "update", state.pop())

    def op_SET_ADD(self, ins: Instr, state: State) -> None:
        if self.display_below(state, ins.arg, ast.Set):
            super().op_SET_ADD(ins, state)
            return
        self.method_call(state, ins.arg, "add", state.pop())

    def op_MAP_ADD(self, ins: Instr, state: State) -> None:
        if not self.display_below(state, ins.arg + 1, ast.Dict):
            raise DecompilationError("item added to a dict that waits")
        super().op_MAP_ADD(ins, state)

    def op_LIST_TO_TUPLE(self, ins: Instr, state: State) -> None:
        self.settle(state, 1)
        items = state.pop()
        if isinstance(items, ast.List):
            state.push(ast.Tuple(elts=items.elts, ctx=ast.Load()))
            return
        state.push(ast.Call(func=name("tuple"), args=[self.expr(items)], keywords=[]))

    # -- subscripts -------------------------------------------------------------------------------
    def op_BINARY_SUBSCR(self, ins: Instr, state: State) -> None:
        index = state.peek(1)
        obj = state.stack[-2] if len(state.stack) > 1 else None
        if isinstance(obj, NewList) and obj.exact:
            position = constant_index(index)
            part = constant_slice(index)
            if position is not None and -len(obj.items) <= position < len(obj.items):
                state.pop()
                self.take(state, lambda items: items[position])
                return
            if part is not None:
                state.pop()
                self.take(state, lambda items: NewList(items[part]))
                return
        index = self.pop_expr(state)
        obj = self.pop_expr(state)
        state.push(ast.Subscript(value=obj, slice=index, ctx=ast.Load()))

    def op_BINARY_SLICE(self, ins: Instr, state: State) -> None:
        self.slice_on_top(state)
        self.op_BINARY_SUBSCR(ins, state)

    def slice_on_top(self, state: State) -> None:
        """3.12+'s ``start; stop`` on top of the stack as the one slice value ``BUILD_SLICE`` makes."""
        stop = self.pop_expr(state)
        start = self.pop_expr(state)
        state.push(make_slice(start, stop))

    def take(self, state: State, pick: Callable[[List[Any]], Any]) -> None:
        """Replace the list built here on top of the stack by ``pick(its items)``."""
        source = state.peek(1)

        def apply() -> None:
            state.stack[-1] = pick(source.items)

        def undo() -> None:
            state.stack[-1] = source

        self.rearrange(state, apply, undo)

    def op_STORE_SUBSCR(self, ins: Instr, state: State) -> None:
        if len(state.stack) < 3:
            raise DecompilationError("stack underflow")
        value, obj, index = state.stack[-3:]
        if isinstance(obj, NewList) and obj.exact and not self.cyclic(state, obj, value):
            position = constant_index(index)
            part = constant_slice(index)
            if position is not None and -len(obj.items) <= position < len(obj.items):
                del state.stack[-2:]
                self.store_items(state, obj, slice(position, position + 1 or None), [state.pop()])
                return
            if part is not None and isinstance(value, NewList):
                del state.stack[-3:]
                self.store_items(state, obj, part, list(value.items), value)
                obj.exact = obj.exact and value.exact
                return
        index = self.pop_expr(state)
        target = self.pop_expr(state)
        self.store(state, ast.Subscript(value=target, slice=index, ctx=ast.Store()))

    def store_items(self, state: State, target: NewList, part: slice, items: List[Any], source: Any = None) -> None:
        """``target[part] = items`` where ``target``, the items and the value they came from
        (``source``, when not the items themselves) left the top of the stack."""
        if self.count(state, target):
            self.change(state, target, part, items)
            return
        # Nobody sees the list any more: only the evaluations of what it held are left, in
        # the bytecode's order (the stored value was below the list).
        self.discard(state, *([source] if source is not None else items), target)

    def op_STORE_SLICE(self, ins: Instr, state: State) -> None:
        self.slice_on_top(state)
        self.op_STORE_SUBSCR(ins, state)

    def op_DELETE_SUBSCR(self, ins: Instr, state: State) -> None:
        index = state.peek(1)
        obj = state.stack[-2] if len(state.stack) > 1 else None
        if isinstance(obj, NewList) and obj.exact:
            position = constant_index(index)
            part = constant_slice(index)
            if position is not None:
                valid = -len(obj.items) <= position < len(obj.items)
                part = slice(position, position + 1 or None) if valid else None
            if part is not None:
                del state.stack[-2:]
                self.store_items(state, obj, part, [])
                return
        index = self.pop_expr(state)
        target = self.pop_expr(state)
        self.emit(state, ast.Delete(targets=[ast.Subscript(value=target, slice=index, ctx=ast.Del())]))

    def op_UNPACK_SEQUENCE(self, ins: Instr, state: State) -> None:
        value = state.stack[-1] if state.stack else None
        n = ins.arg
        if isinstance(value, NewList) and value.exact and len(value.items) == n:

            def apply() -> None:
                state.pop()
                state.stack.extend(reversed(value.items))

            def undo() -> None:
                del state.stack[len(state.stack) - n:]
                state.push(value)

            self.rearrange(state, apply, undo)
            return
        if (isinstance(value, ast.Tuple) and len(value.elts) == n and not any(isinstance(x, ast.Starred)
                                                                               for x in value.elts)
                and sum(1 for x in value.elts if not self.pure(x)) <= 1):
            # Reversed on the stack: only one of them may have effects, or the order would change.
            state.pop()
            state.stack.extend(reversed(value.elts))
            return
        node = self.pop_expr(state)
        temps = [self.temp() for _ in range(n)]
        self.emit(state, ast.Assign(targets=[ast.Tuple(elts=[name(t, True) for t in temps], ctx=ast.Store())],
                                    value=node, type_comment=None))
        for ident in reversed(temps):
            state.push(name(ident))

    def op_UNPACK_EX(self, ins: Instr, state: State) -> None:
        before, after = ins.arg & 0xFF, ins.arg >> 8
        node = self.pop_expr(state)
        temps = [self.temp() for _ in range(before + 1 + after)]
        elts: List[ast.expr] = [name(t, True) for t in temps]
        elts[before] = ast.Starred(value=elts[before], ctx=ast.Store())
        self.emit(state, ast.Assign(targets=[ast.Tuple(elts=elts, ctx=ast.Store())], value=node, type_comment=None))
        for ident in reversed(temps):
            state.push(name(ident))
