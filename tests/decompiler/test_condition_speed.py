"""Long ``if``/``elif`` chains: decompiled once per link, and still right.

Each link of a chain probes the rest of the chain for ``and``/``or`` folding; the
walk reuses what the probe found instead of simulating the rest again, so the work
grows with the chain's length, not its square.
"""

import pytest

from framescope import decompile
from framescope.decompiler.simulate import simulator as simulate


def elif_chain(links: int) -> str:
    lines = ["def f(x, g):", "    if x == 0:", "        r = g(0)"]
    for k in range(1, links):
        lines += ["    elif x == %d:" % k, "        r = g(%d)" % k]
    lines += ["    else:", "        r = None", "    return r"]
    return "\n".join(lines) + "\n"


def load(source: str) -> dict:
    namespace: dict = {}
    exec(compile(source, "<case>", "exec"), namespace)
    return namespace


def steps_to_decompile(source: str, monkeypatch) -> int:
    """How many instructions the simulator runs to decompile ``f`` of ``source``."""
    count = [0]
    real = simulate.Simulator.step

    def counting(self, ins, state):
        count[0] += 1
        return real(self, ins, state)

    func = load(source)["f"]
    with monkeypatch.context() as patch:
        patch.setattr(simulate.Simulator, "step", counting)
        decompile(func, verify=False)
    return count[0]


def test_elif_chain_is_simulated_in_linear_time(monkeypatch) -> None:
    short = steps_to_decompile(elif_chain(20), monkeypatch)
    long = steps_to_decompile(elif_chain(40), monkeypatch)
    # Twice the links, about twice the work (re-simulating the rest at each link made it four times).
    assert long < 2.5 * short, (short, long)


CHAINS = [
    # Statement arms: the chain's links are walked one after the other.
    elif_chain(12),
    # Values already on the stack under each test (the called function).
    "def f(x, g):\n    r = g('a' if x == 1 else 'b' if x == 2 else 'c' if x == 3 else 'd')\n    return r\n",
    # Short-circuit links in the middle of the chain.
    "def f(x, g):\n    if x == 1:\n        r = 1\n    elif x > 5 and x < 9:\n        r = 2\n"
    "    elif x == 3 or x == 4:\n        r = 3\n    elif not x:\n        r = 4\n    else:\n        r = 5\n    return r\n",
    # A link that stores (a named expression) is walked, not taken from the probe.
    "def f(x, g):\n    if x == 1:\n        r = 1\n    elif (y := g(x)) > 3:\n        r = y\n"
    "    elif x == 2:\n        r = 2\n    else:\n        r = 0\n    return r\n",
    # A link whose arm starts with statements before the next test.
    "def f(x, g):\n    if x == 1:\n        r = 1\n    elif x == 2:\n        r = g(x)\n        if r > 3:\n"
    "            r = 0\n    elif x == 3:\n        r = 3\n    else:\n        r = -1\n    return r\n",
    # An assert chain.
    "def f(x, g):\n    assert x != 1\n    assert x != 2, 'two'\n    assert x != 3 and x != 4\n    return g(x)\n",
]


@pytest.mark.parametrize("source", CHAINS)
def test_chain_round_trip(source: str) -> None:
    original = load(source)["f"]
    text = decompile(original)  # raises when the recompiled code differs
    again = load(text)["f"]
    for x in range(-1, 14):
        expected = outcome(original, x)
        assert outcome(again, x) == expected, (x, text)


def outcome(func, x):
    try:
        return ("value", func(x, lambda v: v * 10))
    except AssertionError as err:
        return ("assert", str(err))
