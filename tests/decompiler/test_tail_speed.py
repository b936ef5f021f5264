"""Code after an ``if`` whose arm returns or raises is decompiled once, not once per arm.

Such an ``if`` has no post-dominator, so each arm used to walk the rest of the
function and the copies were merged (or kept) afterwards: the work, and often the
text, doubled with each such ``if`` in a row.
"""
import time

from framescope import decompile

ARMS = 8


def chain_source(arms: int) -> str:
    """``f`` with ``arms`` if/elif/else statements in a row, each with an arm that returns, then a tail."""
    lines = ["def f(a, b):", "    r = []"]
    for i in range(arms):
        lines += ["    if a == %d:" % i, "        r.append(%d)" % i,
                  "    elif b == %d:" % i, "        return -%d" % i,
                  "    else:", "        r.append(b)"]
    lines += ["    tail_marker = len(r)", "    return tail_marker"]
    return "\n".join(lines) + "\n"


def compiled(source: str):
    namespace: dict = {}
    exec(compile(source, "<chain>", "exec"), namespace)
    return namespace["f"]


def test_tail_written_once():
    text = decompile(compiled(chain_source(ARMS)))
    assert text.count("tail_marker = len(r)") == 1, text


def test_guard_then_shared_tail():
    # A chain whose last arm returns, then code both other arms go on to.
    source = ("def f(self, other):\n    if isinstance(other, int):\n        other = other + 1\n"
              "    elif isinstance(other, str):\n        pass\n    else:\n        return None\n"
              "    value = len(str(other))\n    return value\n")
    f = compiled(source)
    text = decompile(f)
    assert text.count("value = len(str(other))") == 1, text
    g = compiled(text)
    for arg in (1, "ab", 2.5):
        assert g(None, arg) == f(None, arg)


def test_chain_time_grows_linearly():
    # Each ``if`` in the chain used to double the walk of everything after it.
    def cost(arms: int) -> float:
        # The fastest of a few runs: a busy machine only makes a run slower.
        f = compiled(chain_source(arms))
        runs = []
        for _ in range(3):
            start = time.process_time()
            decompile(f)
            runs.append(time.process_time() - start)
        return min(runs)

    cost(2)  # warm up
    small, large = cost(ARMS), cost(2 * ARMS)
    assert large < 6 * small, (small, large)
