"""A tiny GPT-2 from transformers, trained with torch.compile: what `framescope explain` says
about a program whose compiled code is mostly a library's.

    framescope run examples/transformers_train.py
    framescope explain framescope_dump

The model is built from a config (nothing is downloaded) and is small enough to train on a
CPU in seconds. The program does what training scripts often do, and each costs compiles:

- the batches' sequence length changes (a recompile, of the step and of transformers' code);
- the compiled step logs the loss with ``.item()`` (a graph break);
- a warm-up module keeps its step count in a plain int attribute (a recompile per step,
  up to torch's recompile limit);
- an evaluation helper compiled with ``fullgraph=True`` cannot be one graph (it fails; the
  program catches the error and carries on).
"""
import math

import torch
from transformers import GPT2Config, GPT2LMHeadModel

BACKEND = "aot_eager"  # compiles forward and backward graphs, without Inductor's code generation


class Warmup(torch.nn.Module):
    """Scales the loss up over the first steps; counts steps in an int attribute."""

    def __init__(self, steps):
        super().__init__()
        self.steps = steps
        self.k = 0

    def forward(self, loss):
        return loss * min(1.0, (self.k + 1) / self.steps)


@torch.compile(backend=BACKEND)
def train_step(model, warmup, input_ids):
    loss = model(input_ids=input_ids, labels=input_ids).loss
    print("step %d: loss %.4f" % (warmup.k, loss.item()))  # .item(): a graph break
    loss = warmup(loss)
    loss.backward()
    return loss.detach()


@torch.compile(backend=BACKEND, fullgraph=True)
def perplexity(model, input_ids):
    loss = model(input_ids=input_ids, labels=input_ids).loss
    return math.exp(loss.item())  # a Python number out of a tensor: not in one graph


def main():
    torch.manual_seed(0)
    config = GPT2Config(vocab_size=128, n_positions=64, n_embd=32, n_layer=2, n_head=2)
    model = GPT2LMHeadModel(config)
    model.train()
    warmup = Warmup(steps=10)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    for k, length in enumerate([8, 8, 12, 16, 8, 12, 16, 24, 8, 12]):
        warmup.k = k
        input_ids = torch.randint(0, config.vocab_size, (2, length))
        train_step(model, warmup, input_ids)
        optimizer.step()
        optimizer.zero_grad()
    model.eval()
    try:
        with torch.no_grad():
            print("perplexity %.2f" % perplexity(model, torch.randint(0, config.vocab_size, (2, 8))))
    except Exception as error:  # torch._dynamo.exc.Unsupported
        print("perplexity could not compile as one graph: %s" % type(error).__name__)


if __name__ == "__main__":
    main()
