"""What `framescope run` and `framescope explain` find: graph breaks, recompiles, a recompile limit.

    framescope run examples/explain_program.py
    framescope explain framescope_dump
"""
import torch

torch._dynamo.config.recompile_limit = 4


def log(x):
    print("step", float(x.sum()))  # a graph break, hit from a loop


@torch.compile(backend="eager")
def loop(x):
    for _ in range(10):
        x = x * 1.1
        log(x)
    return x


@torch.compile(backend="eager")
def branch(x):
    if x.sum() > 0:  # data-dependent: a graph break
        return x + 1
    return x - 1


@torch.compile(backend="eager", dynamic=False)
def scale(x, n):
    return x * n  # n == 1, 2, 3 ...: a recompile each, then the limit


@torch.compile(backend="eager", dynamic=False)
def grow(x):
    return torch.cat([x, x])  # a new length: a recompile on the size


def main():
    x = torch.ones(4)
    loop(x)
    branch(x)
    branch(-x)
    for n in range(1, 7):
        scale(x, n)
    grow(torch.ones(4))
    grow(torch.ones(8))


if __name__ == "__main__":
    main()
