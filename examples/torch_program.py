"""A small torch.compile program that does what makes torch.compile worth looking into.

    framescope run examples/torch_program.py       # then open framescope_dump/report/index.html

It has a graph break (a ``print``) inside a closure, recompiles (``n`` takes four values and
``dynamic=False`` makes each one a constant to Dynamo: three recompiles), and an
``nn.Module`` trained for two steps through Inductor, backward included. It does not use
framescope itself: ``framescope run`` dumps it from outside.
"""
import torch


def make_scale(k):
    def scale(x):
        y = torch.cos(x) * k
        print("graph break in scale, k =", k)
        return y + k

    return scale


def f(x, n):
    return torch.sin(x) * n + n


class MLP(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = torch.nn.Linear(8, 16)
        self.fc2 = torch.nn.Linear(16, 1)

    def forward(self, x):
        return self.fc2(torch.relu(self.fc1(x)))


def main():
    torch.manual_seed(0)
    compiled_f = torch.compile(f, backend="eager", dynamic=False)
    for n in (1, 2, 3, 4):
        compiled_f(torch.ones(4), n)
    scale = torch.compile(make_scale(2.0), backend="aot_eager")
    print("scale", scale(torch.ones(3)).tolist())
    model = MLP()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    step = torch.compile(model, backend="inductor")
    for _ in range(2):
        loss = step(torch.randn(5, 8)).pow(2).mean()
        loss.backward()
        optimizer.step()
        optimizer.zero_grad()
    print("loss %.4f" % float(loss))


if __name__ == "__main__":
    main()
