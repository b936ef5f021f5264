"""The workloads of benchmarks/model_zoo.py: each builds a model with fixed weights and runs it.

Every workload is a function ``run(compile) -> outputs``: it builds its model from a fixed
seed, wraps what it compiles in ``compile(fn_or_module)`` (the identity for eager) and returns
the tensors to compare with eager, gradients included. The transformers models use tiny
configurations with random weights: real architectures, seconds to compile on a CPU.
"""
from __future__ import annotations

from typing import Callable, Dict, List

import torch

Compile = Callable[..., object]


def _seeded() -> None:
    torch.manual_seed(0)


def _grads(model: torch.nn.Module) -> List[torch.Tensor]:
    return [p.grad.detach().clone() for p in model.parameters() if p.grad is not None]


def _causal_lm(config_class: str, model_class: str, **config: object) -> Callable[[Compile], List[torch.Tensor]]:
    def run(compile: Compile) -> List[torch.Tensor]:
        import transformers

        _seeded()
        model = getattr(transformers, model_class)(getattr(transformers, config_class)(**config))
        model.train()
        ids = torch.randint(0, 128, (2, 16))
        step = compile(model)
        out = step(input_ids=ids, labels=ids)
        out.loss.backward()
        return [out.loss.detach(), out.logits.detach()] + _grads(model)

    return run


gpt2 = _causal_lm("GPT2Config", "GPT2LMHeadModel", n_layer=2, n_embd=32, n_head=2, vocab_size=128,
                  n_positions=64, resid_pdrop=0.0, embd_pdrop=0.0, attn_pdrop=0.0)
llama = _causal_lm("LlamaConfig", "LlamaForCausalLM", hidden_size=32, intermediate_size=64, num_hidden_layers=2,
                   num_attention_heads=2, num_key_value_heads=1, vocab_size=128, max_position_embeddings=64)
mistral = _causal_lm("MistralConfig", "MistralForCausalLM", hidden_size=32, intermediate_size=64,
                     num_hidden_layers=2, num_attention_heads=2, num_key_value_heads=1, vocab_size=128,
                     max_position_embeddings=64, sliding_window=None)


def bert(compile: Compile) -> List[torch.Tensor]:
    import transformers

    _seeded()
    config = transformers.BertConfig(hidden_size=32, num_hidden_layers=2, num_attention_heads=2, intermediate_size=64,
                                     vocab_size=128, hidden_dropout_prob=0.0, attention_probs_dropout_prob=0.0)
    model = transformers.BertForSequenceClassification(config)
    ids = torch.randint(0, 128, (2, 16))
    out = compile(model)(input_ids=ids, labels=torch.tensor([0, 1]))
    out.loss.backward()
    return [out.loss.detach(), out.logits.detach()] + _grads(model)


def dynamic_lengths(compile: Compile) -> List[torch.Tensor]:
    """BERT on three sequence lengths: a recompile that makes the length dynamic."""
    import transformers

    _seeded()
    config = transformers.BertConfig(hidden_size=32, num_hidden_layers=2, num_attention_heads=2, intermediate_size=64,
                                     vocab_size=128, hidden_dropout_prob=0.0, attention_probs_dropout_prob=0.0)
    model = transformers.BertModel(config).eval()
    forward = compile(model)
    outs = []
    with torch.no_grad():
        for length in (8, 12, 16):
            outs.append(forward(input_ids=torch.randint(0, 128, (2, length))).last_hidden_state)
    return outs


def t5(compile: Compile) -> List[torch.Tensor]:
    import transformers

    _seeded()
    config = transformers.T5Config(d_model=32, d_ff=64, d_kv=16, num_layers=2, num_heads=2, vocab_size=128,
                                   dropout_rate=0.0, decoder_start_token_id=0)
    model = transformers.T5ForConditionalGeneration(config)
    ids = torch.randint(0, 128, (2, 12))
    out = compile(model)(input_ids=ids, labels=ids)
    out.loss.backward()
    return [out.loss.detach()] + _grads(model)


def vit(compile: Compile) -> List[torch.Tensor]:
    import transformers

    _seeded()
    config = transformers.ViTConfig(image_size=32, patch_size=8, hidden_size=32, num_hidden_layers=2,
                                    num_attention_heads=2, intermediate_size=64, num_labels=4,
                                    hidden_dropout_prob=0.0, attention_probs_dropout_prob=0.0)
    model = transformers.ViTForImageClassification(config)
    out = compile(model)(pixel_values=torch.randn(2, 3, 32, 32), labels=torch.tensor([0, 3]))
    out.loss.backward()
    return [out.loss.detach(), out.logits.detach()] + _grads(model)


def whisper(compile: Compile) -> List[torch.Tensor]:
    import transformers

    _seeded()
    config = transformers.WhisperConfig(d_model=32, encoder_layers=1, decoder_layers=1, encoder_attention_heads=2,
                                        decoder_attention_heads=2, encoder_ffn_dim=64, decoder_ffn_dim=64,
                                        num_mel_bins=16, max_source_positions=32, max_target_positions=32,
                                        vocab_size=128, dropout=0.0, pad_token_id=0, decoder_start_token_id=1)
    model = transformers.WhisperForConditionalGeneration(config).eval()
    features = torch.randn(1, 16, 64)
    with torch.no_grad():
        out = compile(model)(input_features=features, decoder_input_ids=torch.tensor([[1, 5, 7]]))
    return [out.logits]


def kv_decode(compile: Compile) -> List[torch.Tensor]:
    """GPT-2 decoding four tokens greedily with its key/value cache."""
    import transformers

    _seeded()
    config = transformers.GPT2Config(n_layer=2, n_embd=32, n_head=2, vocab_size=128, n_positions=64)
    model = transformers.GPT2LMHeadModel(config).eval()
    forward = compile(model)
    ids = torch.randint(0, 128, (1, 6))
    tokens = []
    with torch.no_grad():
        out = forward(input_ids=ids, use_cache=True)
        for _ in range(4):
            token = out.logits[:, -1:].argmax(-1)
            tokens.append(token)
            out = forward(input_ids=token, past_key_values=out.past_key_values, use_cache=True)
    return tokens + [out.logits]


def adamw_step(compile: Compile) -> List[torch.Tensor]:
    """Two training steps of an MLP whose AdamW step is compiled."""
    _seeded()
    model = torch.nn.Sequential(torch.nn.Linear(16, 32), torch.nn.ReLU(), torch.nn.Linear(32, 4))
    opt = torch.optim.AdamW(model.parameters(), lr=0.01)
    step = compile(opt.step)
    x, y = torch.randn(8, 16), torch.randn(8, 4)
    for _ in range(2):
        opt.zero_grad()
        torch.nn.functional.mse_loss(model(x), y).backward()
        step()
    return [p.detach().clone() for p in model.parameters()]


class _Block(torch.nn.Module):
    """A ResNet basic block (two 3x3 convolutions and a shortcut)."""

    def __init__(self, inputs: int, outputs: int, stride: int) -> None:
        super().__init__()
        self.conv1 = torch.nn.Conv2d(inputs, outputs, 3, stride, 1, bias=False)
        self.bn1 = torch.nn.BatchNorm2d(outputs)
        self.conv2 = torch.nn.Conv2d(outputs, outputs, 3, 1, 1, bias=False)
        self.bn2 = torch.nn.BatchNorm2d(outputs)
        self.down = None
        if stride != 1 or inputs != outputs:
            self.down = torch.nn.Sequential(torch.nn.Conv2d(inputs, outputs, 1, stride, bias=False),
                                            torch.nn.BatchNorm2d(outputs))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        out = torch.relu(self.bn1(self.conv1(x)))
        out = self.bn2(self.conv2(out))
        return torch.relu(out + (x if self.down is None else self.down(x)))


def _resnet18() -> torch.nn.Module:
    try:
        import torchvision

        return torchvision.models.resnet18(num_classes=4)
    except Exception:  # no torchvision for this torch: the same architecture, written here
        widths = [64, 128, 256, 512]
        layers: List[torch.nn.Module] = [torch.nn.Conv2d(3, 64, 7, 2, 3, bias=False), torch.nn.BatchNorm2d(64),
                                         torch.nn.ReLU(), torch.nn.MaxPool2d(3, 2, 1)]
        inputs = 64
        for i, width in enumerate(widths):
            layers += [_Block(inputs, width, 1 if i == 0 else 2), _Block(width, width, 1)]
            inputs = width
        layers += [torch.nn.AdaptiveAvgPool2d(1), torch.nn.Flatten(), torch.nn.Linear(512, 4)]
        return torch.nn.Sequential(*layers)


def resnet(compile: Compile) -> List[torch.Tensor]:
    _seeded()
    # Batch norm from running statistics: in training mode, batch statistics of two 32x32
    # images make gradients of ~1e3 that Inductor's fused kernels reproduce only to ~1%.
    model = _resnet18().eval()
    out = compile(model)(torch.randn(2, 3, 32, 32))
    out.sum().backward()
    return [out.detach()] + _grads(model)


def graph_breaks(compile: Compile) -> List[torch.Tensor]:
    """A loop whose body breaks the graph twice (a print, a data-dependent branch)."""
    def step(x: torch.Tensor, i: int) -> torch.Tensor:
        x = torch.sin(x) * 1.5
        print("step", i, end="\r")
        if x.sum() > 0:
            x = x - 0.5
        return torch.cos(x)

    run_step = compile(step)
    _seeded()
    x = torch.randn(16)
    outs = []
    for i in range(4):
        x = run_step(x, i)
        outs.append(x)
    return outs


def piecewise(compile: Compile) -> List[torch.Tensor]:
    """A backend that splits the graph at each relu and compiles every piece with Inductor, as
    vLLM's piecewise backend does (the compile function given is ignored: this is the backend)."""
    from torch._inductor.compile_fx import compile_fx
    from torch.fx.passes.split_module import split_module

    def backend(gm: torch.fx.GraphModule, example_inputs: List[torch.Tensor]) -> Callable[..., object]:
        part = [0]

        def split_at(node: torch.fx.Node) -> int:
            if node.op == "call_function" and node.target in (torch.relu, torch.nn.functional.relu):
                part[0] += 1
            return part[0]

        split = split_module(gm, None, split_at)
        for name, child in list(split.named_children()):
            setattr(split, name, _CompiledPiece(child, compile_fx))
        return split

    _seeded()
    model = torch.nn.Sequential(torch.nn.Linear(8, 16), torch.nn.ReLU(), torch.nn.Linear(16, 16), torch.nn.ReLU(),
                                torch.nn.Linear(16, 4))
    x = torch.randn(4, 8)
    if compile.__name__ == "eager":
        return [model(x)]
    return [torch.compile(model, backend=backend)(x)]


class _CompiledPiece(torch.nn.Module):
    """A piece of a split graph, compiled with Inductor on its first call."""

    def __init__(self, module: torch.nn.Module, compile_fx: Callable[..., object]) -> None:
        super().__init__()
        self.module, self.compile_fx, self.compiled = module, compile_fx, None

    def forward(self, *args: torch.Tensor) -> object:
        if self.compiled is None:
            self.compiled = self.compile_fx(self.module, list(args))
        return self.compiled(*args)


#: Name -> workload, in the order the table lists them.
WORKLOADS: Dict[str, Callable[[Compile], List[torch.Tensor]]] = {
    "gpt2": gpt2, "llama": llama, "mistral": mistral, "bert": bert, "t5": t5, "vit": vit, "whisper": whisper,
    "adamw_step": adamw_step, "kv_decode": kv_decode, "dynamic_lengths": dynamic_lengths, "resnet": resnet,
    "graph_breaks": graph_breaks, "piecewise": piecewise,
}
