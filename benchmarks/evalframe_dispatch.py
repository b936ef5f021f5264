"""Per-call cost of framescope.evalframe.Dispatcher against plain torch.compile, both warm.

For each case the same function runs eagerly, through torch.compile (its guards checked on
every call) and through a Dispatcher (a Python key picks the compiled code, which is then
called directly), once with the default signature_key and once with a constant key. Tensors
are tiny, so the times are mostly per-call overhead.

    python benchmarks/evalframe_dispatch.py [--backend eager] [--calls 20000] [--repeat 5]

Prints microseconds per call (best of --repeat runs); the overhead of each way of calling is
its time minus that of the compiled code called directly (no guards, no key); and the ratios
torch.compile / Dispatcher of time per call and of overhead.
"""
import argparse
import time

import torch

from framescope.evalframe import Dispatcher


def pointwise(x, y):
    return torch.relu(x @ y) + 1


class MLP(torch.nn.Module):
    def __init__(self, width=16, depth=4):
        super().__init__()
        self.layers = torch.nn.ModuleList(torch.nn.Linear(width, width) for _ in range(depth))

    def forward(self, x):
        for layer in self.layers:
            x = torch.relu(layer(x))
        return x


def per_call_us(functions, args, calls, repeat):
    """{label: best microseconds per call}; the runs take turns, so drift hits all alike."""
    for fn in functions.values():
        for _ in range(200):  # warm up: compile, fill caches
            fn(*args)
    best = dict.fromkeys(functions, float("inf"))
    for _ in range(repeat):
        for label, fn in functions.items():
            start = time.perf_counter()
            for _ in range(calls):
                fn(*args)
            best[label] = min(best[label], time.perf_counter() - start)
    return {label: seconds / calls * 1e6 for label, seconds in best.items()}


def cases():
    x, y = torch.randn(8, 8), torch.randn(8, 8)
    yield "pointwise f(x, y)", pointwise, (x, y)
    model = MLP()
    yield "MLP forward (4 layers)", model.forward, (torch.randn(2, 16),)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--backend", default="eager", help="torch.compile backend (default: eager)")
    parser.add_argument("--calls", type=int, default=20000, help="calls per timed run")
    parser.add_argument("--repeat", type=int, default=5, help="timed runs; the best one counts")
    options = parser.parse_args()

    print(
        "torch %s, backend %s, %d calls x %d runs"
        % (torch.__version__, options.backend, options.calls, options.repeat)
    )
    print("overhead: time per call minus that of the compiled code called directly")
    with torch.no_grad():
        for name, fn, args in cases():
            compiled = torch.compile(fn, backend=options.backend)
            dispatcher = Dispatcher(fn, backend=options.backend)
            constant = Dispatcher(fn, key=lambda *a: 0, backend=options.backend)
            dispatcher(*args)
            functions = {
                "eager": fn,
                "compiled code, direct": dispatcher.lookup(*args),
                "torch.compile": compiled,
                "Dispatcher": dispatcher,
                "Dispatcher, constant key": constant,
            }
            results = per_call_us(functions, args, options.calls, options.repeat)
            direct = results["compiled code, direct"]
            print("\n%s" % name)
            for label, us in results.items():
                print("  %-26s %8.2f us/call   overhead %+7.2f us" % (label, us, us - direct))
            overhead_compile = results["torch.compile"] - direct
            overhead_dispatch = results["Dispatcher"] - direct
            ratio = results["torch.compile"] / results["Dispatcher"]
            print("  torch.compile / Dispatcher: %.2fx time per call" % ratio)
            if overhead_dispatch > 0.05:
                print("  torch.compile / Dispatcher: %.1fx overhead" % (overhead_compile / overhead_dispatch))
            else:
                print("  Dispatcher overhead below the noise of this measurement")


if __name__ == "__main__":
    main()
