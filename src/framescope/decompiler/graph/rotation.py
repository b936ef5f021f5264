"""Loop rotation undone, before structuring.

* **Loop rotation** (3.10+): ``while cond: body`` is compiled as a test before the
  loop and a copy of the test at the end of the body that jumps back to the body.
  When the copy matches the first test instruction for instruction, the copy is
  replaced by a jump back to the first test, which is the shape every version
  compiles from, and which recompiles to the same rotated code.
* **Duplicated exits** (3.11+): a small block that ends the function (``return x``)
  is copied into each place that jumps to it, e.g. into a ``break``.  When the code
  after a ``for`` loop ends with the same instructions as such a copy, it is split
  there, so that the loop's ``else`` clause and the code after it are separate blocks.
"""
from typing import List, Optional, Set, Tuple

from framescope.decompiler.frontend import versions
from framescope.decompiler.frontend.instructions import OR_POP_JUMPS, Instr
from framescope.decompiler.graph.cfg import CFG, Block
from framescope.decompiler.graph.copies import OPPOSITE, TERMINAL, same, same_exit, same_handling, same_run
from framescope.decompiler.graph.traversal import follow_jumps, reachable


STATEMENT_ENDS = ("STORE_FAST", "STORE_NAME", "STORE_GLOBAL", "STORE_DEREF", "STORE_ATTR", "STORE_SUBSCR",
                  "POP_TOP", "DELETE_FAST", "DELETE_NAME", "DELETE_GLOBAL", "DELETE_DEREF", "DELETE_ATTR",
                  "DELETE_SUBSCR", "STORE_SLICE", "GEN_START")


def test_length(head: Block, latch: Block) -> int:
    """How many instructions before their final jumps ``head`` and ``latch`` share as a whole test.

    The shared run must start where a statement starts in both (after a store, a
    pop, or at the block start), so that it is a complete condition.
    """
    a, b = head.instrs[:-1], latch.instrs[:-1]
    common = 0
    while common < min(len(a), len(b)) and same(a[-1 - common], b[-1 - common]):
        common += 1
    for k in range(1, common + 1):
        a_ok = k == len(a) or a[-1 - k].op in STATEMENT_ENDS
        b_ok = k == len(b) or b[-1 - k].op in STATEMENT_ENDS
        if a_ok and b_ok:
            return k
    return 0


def unrotate_loops(cfg: CFG) -> bool:
    changed = False
    for head in list(cfg.blocks):
        if not head.last.is_pop_jump() or head.fall is None or head.jump is None:
            continue
        # The first side that matches is the loop's (``head`` may be split on the way).
        changed = any(unrotate_loop(cfg, head, body, exit) for body, exit in loop_sides(head)) or changed
    return changed


def loop_sides(head: Block) -> List[Tuple[Block, Block]]:
    """The ways (body, exit) a loop's test at the end of ``head`` may go: it falls into the body,
    or (3.12+, where the exit is a jump back to an outer loop) it falls into that lone jump."""
    sides = [(head.fall, head.jump)]
    if head.fall.is_lone_jump():
        sides.append((head.jump, head.fall))
    return sides


def unrotate_loop(cfg: CFG, head: Block, body: Block, exit: Block) -> bool:
    """Replace the copies of ``head``'s test that loop back to ``body`` by jumps back to it."""
    changed = False
    for latch in list(body.preds):
        if latch.is_lone_jump() and len(latch.preds) == 1:
            latch = latch.preds[0]  # 3.12+: the test falls into a lone jump back
        if latch is head:
            continue
        k = test_length(head, latch)
        if not k:
            continue
        test = head.instrs[len(head.instrs) - 1 - k:-1]
        tail = rotated_copy(latch, test, head, body, exit)
        if tail is None:
            continue
        if k < len(head.instrs) - 1:  # the test shares its block with code before the loop
            head = cfg.split(head, len(head.instrs) - 1 - k)
        # Replace the copied test by a jump back to the original one.
        start = len(latch.instrs) - len(test) - 1
        jump = Instr("JUMP", None, latch.instrs[start].offset if start < len(latch.instrs) else latch.last.offset,
                     head.start, latch.last.line, latch.handler, "JUMP")
        for succ in latch.succs():
            succ.preds = [p for p in succ.preds if p is not latch]
        latch.instrs = latch.instrs[:start] + [jump]
        latch.fall, latch.jump = None, head
        head.preds.append(latch)
        cfg.loop_tests[head] = exit
        if tail is not latch:  # the now unreachable jump back
            tail.preds = []
            body.preds = [p for p in body.preds if p is not tail]
        changed = True
    return changed


def unrotate_compound_loop(cfg: CFG) -> bool:
    """Undo one loop rotation whose test spans several blocks (``while a or b:``).

    The copy of the test at the end of the body is matched block by block against
    the test before the loop: the same instructions, conditional jumps of the same or
    the opposite sense whose targets correspond (the same block, two copies of one
    exit, or a lone jump to the same block).  The copy is then replaced by a jump back
    to the first test, as `unrotate_loops` does for a test in one block.
    """
    by_operand = {}
    for block in cfg.blocks:
        if block.last.is_cond_jump() and len(block.instrs) > 1:
            by_operand.setdefault(key(block.instrs[-2]), []).append(block)
    for group in by_operand.values():
        for head in group:
            for latch in group:
                if latch.index <= head.index:
                    continue
                k = test_length(head, latch)
                if not k or not starts_statement(head, len(head.instrs) - 1 - k) \
                        or not starts_statement(latch, len(latch.instrs) - 1 - k):
                    continue
                pairs = match_test(head, len(head.instrs) - 1 - k, latch, len(latch.instrs) - 1 - k)
                if pairs is None or len(pairs) < 2 or not jumps_back(pairs):
                    continue
                exits = [t for t in terminals(pairs) if not cfg.dom.dominates(t, latch)]
                head = replace_test_copy(cfg, head, len(head.instrs) - 1 - k, latch, len(latch.instrs) - 1 - k,
                                         pairs)
                if len(exits) == 1:
                    cfg.loop_tests[head] = exits[0]
                return True
    return False


def jumps_back(pairs) -> bool:
    """Whether ``pairs`` (test block -> copy block) are a loop's rotated test: a test and its
    copy go to one block that lies after the test and not after the copy, the loop's body
    (its jump back maybe through a lone jump, or the copy ending the body's own block). Two
    copies of a test that both go on to a loop's start round it (``continue``), or forward
    only (a returned conditional value, 3.11+), are not."""
    for head, copy in pairs.items():
        for target in head.succs():
            body = follow_jumps(target, SHORT_CHAIN)
            if head.index < body.index <= copy.index \
                    and any(follow_jumps(succ, SHORT_CHAIN) is body for succ in copy.succs()):
                return True
    return False


def starts_statement(block: Block, index: int) -> bool:
    """Whether the stack is empty before ``block.instrs[index]``, as far as the code around tells.

    Within a block, ``test_length`` only starts after a statement; a block start counts
    when everything that leads there ends a statement or pops a test.
    """
    if index:
        return True
    for pred in block.preds:
        ins = pred.instrs
        if ins[-1].op in STATEMENT_ENDS or (ins[-1].op == "JUMP" and (len(ins) == 1 or ins[-2].op in STATEMENT_ENDS)):
            continue
        if ins[-1].is_pop_jump() and (len(ins) == 1 or ins[-2].op != "COPY") and not keeps_chain_operand(ins):
            continue  # ``x or y`` as a value keeps a copy of ``x`` on the stack
        return False
    return True


def keeps_chain_operand(instrs: List[Instr]) -> bool:
    """Whether ``instrs`` end in a comparison of a chain (``a < x < b``) that keeps its
    middle operand on the stack for the next one."""
    copies = [(ins.op, ins.arg) for ins in instrs[-4:-2]]
    return len(instrs) >= 4 and instrs[-2].op == "COMPARE_OP" and copies == versions.CHAIN_KEEPS_OPERAND


def key(ins: Instr):
    return ins.op, type(ins.arg).__name__, repr(ins.arg)


#: Lone jumps followed when comparing where a test and its copy leave (short: the compiler
#: threads its own jumps, so a long chain there is code of another shape).
SHORT_CHAIN = 4


def match_test(head: Block, head_start: int, latch: Block, latch_start: int):
    """Head test block → the block of its copy, when the copy from ``latch`` repeats the test from ``head``."""
    pairs = {}
    copies = set()
    todo = [(head, head_start, latch, latch_start)]
    while todo:
        h, hi, c, ci = todo.pop()
        if h in pairs:
            if pairs[h] is not c or (h is head and head_start) or (c is latch and latch_start):
                return None  # a jump to the code before the test: not the same place
            continue
        if c in copies or c in pairs or len(pairs) > 20:
            return None
        pairs[h] = c
        copies.add(c)
        successors = test_successors(h, hi, c, ci, copies)
        if successors is None:
            return None
        todo.extend(successors)
    if any(h is not head and not all(p in pairs for p in h.preds) for h in pairs):
        return None  # entered from elsewhere: not part of the test (checked once all pairs are known)
    if any(p in copies for h in pairs for p in h.preds):
        return None  # the test and its copy overlap
    for c in copies:
        if c is not latch and not all(p in copies for p in c.preds):
            return None  # the copy is entered from elsewhere: it must stay
    return pairs


def test_successors(h: Block, hi: int, c: Block, ci: int, copies: Set[Block]):
    """The pairs (test block, index, copy block, index) to compare after ``h`` and its copy ``c``
    from their given instructions on; None when they differ."""
    if h.last.op in OR_POP_JUMPS:  # ``x[:n or None]`` before 3.12
        if c.last.op != h.last.op or not same_run(h.instrs[hi:-1], c.instrs[ci:-1]):
            return None
        return [(h.jump, 0, c.jump, 0), (h.fall, 0, c.fall, 0)]
    if not h.last.is_pop_jump():
        # Part of an operand (``x[:n or None]``) that falls on, or the clean-up of a chained
        # comparison that failed early (pop the spare operand), which the copy may lay out
        # falling into the exit where the test jumps there.
        if hi == ci == 0 and ends_alike(h, c):
            return []  # both leave the function the same way (3.12+ copies the code there)
        h_next, h_run = straight_on(h, hi)
        c_next, c_run = straight_on(c, ci)
        if h_next is None or c_next is None or h.last.op in TERMINAL or not same_run(h_run, c_run):
            return None
        if "JUMP" in (h.last.op, c.last.op) and not all(ins.op == "POP_TOP" for ins in h_run):
            return None  # only a clean-up jumps on: the code of a value jumps to where it is used
        if h_run and same_exit(follow_jumps(c_next, SHORT_CHAIN), follow_jumps(h_next, SHORT_CHAIN)):
            return []  # both go on to the same place
        return [(h_next, 0, c_next, 0)]
    if not same_run(h.instrs[hi:-1], c.instrs[ci:-1]):
        return None
    if c.last.op == h.last.op:
        arms = [(h.jump, c.jump), (h.fall, c.fall)]
    elif c.last.op == OPPOSITE.get(h.last.op):
        arms = [(h.jump, c.fall), (h.fall, c.jump)]
    else:
        return None
    found = []
    for target, copy in arms:
        if target is None or copy is None:
            return None
        if same_exit(follow_jumps(copy, SHORT_CHAIN), follow_jumps(target, SHORT_CHAIN)):
            continue  # both leave the test for the same place
        if target in copies:
            return None
        found.append((target, 0, copy, 0))
    return found


def ends_alike(a: Block, b: Block) -> bool:
    """Whether straight-line code from ``a`` and from ``b`` runs the same instructions to the
    same end of the function, the blocks split in other places (a clean-up that pops and a
    copy of the return after it, or the pop falling into the return)."""
    a_run, b_run = run_to_end(a), run_to_end(b)
    return a_run is not None and b_run is not None and same_run(a_run[0], b_run[0]) \
        and all(same_handling(x, y) for x in a_run[1] for y in b_run[1])


def run_to_end(block: Block) -> Optional[Tuple[List[Instr], List[Block]]]:
    """The instructions from ``block`` on to a return or raise through straight-line code
    (plain jumps left out), and its blocks; None when it branches first or runs long."""
    instrs: List[Instr] = []
    blocks: List[Block] = []
    current: Optional[Block] = block
    while current is not None and len(blocks) < SHORT_CHAIN:
        blocks.append(current)
        if current.last.op in TERMINAL:
            return instrs + current.instrs, blocks
        nxt, run = straight_on(current, 0)
        instrs += run
        current = nxt
    return None


def drop_unreached_run(cfg: CFG, block: Block) -> None:
    """Remove ``block``, which nothing reaches, and the straight-line code after it that only
    it reached (a copy of the function's end, or a clean-up falling into one)."""
    current: Optional[Block] = block
    while current is not None and not current.preds and current in cfg.blocks:
        cfg.blocks.remove(current)
        nxt = current.jump or current.fall
        if nxt is not None:
            nxt.preds = [p for p in nxt.preds if p is not current]
        current = nxt


def straight_on(block: Block, start: int) -> Tuple[Optional[Block], List[Instr]]:
    """Where ``block`` goes on by a plain jump or by falling through, and its instructions
    from ``start`` on before that jump; (None, []) when it branches or ends."""
    if block.jump is not None and block.last.op != "JUMP":
        return None, []
    return block.jump or block.fall, block.before_jump()[start:]


def terminals(pairs) -> List[Block]:
    """Where the test whose blocks are ``pairs``' keys leads: the loop's body and its exit."""
    found: List[Block] = []
    for block in pairs:
        for succ in block.succs():
            if succ not in pairs and succ not in found:
                found.append(succ)
    return found


def split_shared_headers(cfg: CFG) -> bool:
    """Give ``while True:`` its own header when its body starts with a (3.10+ rotated) ``while cond:``.

    Both loops jump back to the inner loop's test.  The jumps that come from after the
    inner loop (reachable from its exit without passing the test) belong to the outer
    loop: they are sent to a new lone jump placed before the test, which heads the outer loop.
    """
    changed = False
    for head, exit in list(cfg.loop_tests.items()):
        if head not in cfg.blocks or exit not in cfg.blocks or head is cfg.entry:
            continue
        after = reachable([exit], exclude=head)
        outer = [p for p in head.preds if p in after and cfg.dom.dominates(head, p)]
        if not outer or any(b.handler is not None and b.handler.target == head.start for b in cfg.blocks):
            continue
        entries = [p for p in head.preds if not cfg.dom.dominates(head, p)]
        if not entries or len(outer) + len(entries) == len(head.preds):
            continue  # nothing left for the inner loop
        jump = Instr("JUMP", None, head.start, head.start, head.instrs[0].line, head.handler, "JUMP")
        top = Block(0, [jump], jump=head, handler=head.handler, catch=head.catch)
        for pred in outer + entries:
            if pred.fall is head:
                if cfg.blocks.index(pred) + 1 != cfg.blocks.index(head):
                    return changed  # falls in from elsewhere in the layout: leave it
                pred.fall = top
            if pred.jump is head:
                pred.jump = top
            top.preds.append(pred)
        head.preds = [p for p in head.preds if p not in top.preds] + [top]
        cfg.blocks.insert(cfg.blocks.index(head), top)
        cfg.renumber()
        changed = True
    return changed


def replace_test_copy(cfg: CFG, head: Block, head_start: int, latch: Block, latch_start: int, pairs) -> Block:
    if head_start:  # the test shares its block with code before the loop
        head = cfg.split(head, head_start)
    dropped = [c for c in pairs.values() if c is not latch]
    for c in dropped:  # lone jumps back that only the copy reached
        for succ in c.succs():
            if succ.is_lone_jump() and succ.preds == [c]:
                dropped.append(succ)
    for block in [latch] + dropped:
        for succ in block.succs():
            succ.preds = [p for p in succ.preds if p is not block]
    for block in dropped:
        for succ in block.succs():
            if not succ.preds and run_to_end(succ) is not None:  # an exit copy only the copy reached
                drop_unreached_run(cfg, succ)
        if block in cfg.blocks:
            cfg.blocks.remove(block)
    anchor = latch.instrs[latch_start]
    jump = Instr("JUMP", None, anchor.offset, head.start, anchor.line, latch.handler, "JUMP")
    latch.instrs = latch.instrs[:latch_start] + [jump]
    latch.fall, latch.jump = None, head
    head.preds.append(latch)
    cfg.renumber()
    return head


def rotated_copy(latch: Block, test: List[Instr], head: Block, body: Block, exit: Block) -> Optional[Block]:
    """The block that jumps back to ``body`` when ``latch`` ends with a copy of ``head``'s test:
    ``latch`` itself, or (3.12+) the lone jump back it falls into."""
    if len(latch.instrs) < len(test) + 1:
        return None
    copy = latch.instrs[len(latch.instrs) - len(test) - 1:-1]
    if not same_run(copy, test):
        return None
    # Where the copy goes where the test goes to the body and to the exit.
    if latch.last.op == head.last.op:
        copy_of = {id(head.jump): latch.jump, id(head.fall): latch.fall}
    elif latch.last.op == OPPOSITE.get(head.last.op):
        copy_of = {id(head.jump): latch.fall, id(head.fall): latch.jump}
    else:
        return None
    to_body, to_exit = copy_of[id(body)], copy_of[id(exit)]
    if to_body is None or not same_exit(follow_jumps(to_exit, SHORT_CHAIN), follow_jumps(exit, SHORT_CHAIN)):
        return None
    if to_body is body and latch.jump is body:
        return latch
    # 3.12+ jumps back only unconditionally: the copy falls into a lone jump back.
    if to_body is latch.fall and to_body.is_lone_jump() \
            and to_body.jump is body and to_body.preds == [latch]:
        return to_body
    return None


def split_loop_tails(cfg: CFG) -> bool:
    changed = False
    for header in list(cfg.blocks):
        if header.instrs[0].op != "FOR_ITER" or header.jump is None:
            continue
        exit = header.jump
        if exit.last.op not in TERMINAL:
            continue
        for block in list(cfg.blocks):
            if block is exit or block.last.op not in TERMINAL:
                continue
            for index, ins in enumerate(block.instrs[:-1]):
                if ins.op != "POP_TOP" or (index and block.instrs[index - 1].op in ("SWAP", "ROT")):
                    continue  # not a break: ``return value`` pops the iterator from under the value
                tail = block.instrs[index + 1:]
                if tail[0].op == "RETURN_VALUE":
                    continue  # the value was computed before: the popped value is no iterator
                if tail[0].op == "POP_TOP":
                    continue  # another iterator: a return from nested loops (a statement never starts by popping)
                n = len(exit.instrs)
                if n > len(tail) and same_run(exit.instrs[n - len(tail):], tail):
                    cfg.split(exit, n - len(tail))
                    return True
    return changed
