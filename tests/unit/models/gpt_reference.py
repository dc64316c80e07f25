#!/usr/bin/python3
"""gpt_reference: nanoGPT's GPT (karpathy/nanoGPT model.py, bias=True, torch 1.13's explicit attention) in plain
PyTorch, the reference for balancenet's gpt.

Usage: /usr/bin/python3 gpt_reference.py STATE BATCH OUT HEADS
  STATE  the C++ model's exportStateDict file (nanoGPT's parameter names, lm_head tied to transformer.wte)
  BATCH  a pickled {"x": [N,T] int64 tokens, "y": [N,T] int64 targets}
  OUT    written: {"loss": mean cross-entropy, "logits": [N,T,V], "grad/<name>": gradient of every parameter}
Sizes (vocabulary, context, embed, layers) are read from STATE's shapes.
"""
import math
import sys

import torch
import torch.nn as nn
from torch.nn import functional as F


class CausalSelfAttention(nn.Module):
    def __init__(self, embed, heads, context):
        super().__init__()
        self.c_attn = nn.Linear(embed, 3 * embed)
        self.c_proj = nn.Linear(embed, embed)
        self.n_head = heads
        self.n_embd = embed
        mask = torch.tril(torch.ones(context, context)).view(1, 1, context, context)
        self.register_buffer("bias", mask, persistent=False)

    def forward(self, x):
        B, T, C = x.size()
        q, k, v = self.c_attn(x).split(self.n_embd, dim=2)
        k = k.view(B, T, self.n_head, C // self.n_head).transpose(1, 2)
        q = q.view(B, T, self.n_head, C // self.n_head).transpose(1, 2)
        v = v.view(B, T, self.n_head, C // self.n_head).transpose(1, 2)
        att = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(k.size(-1)))
        att = att.masked_fill(self.bias[:, :, :T, :T] == 0, float("-inf"))
        att = F.softmax(att, dim=-1)
        y = att @ v
        y = y.transpose(1, 2).contiguous().view(B, T, C)
        return self.c_proj(y)


class MLP(nn.Module):
    def __init__(self, embed):
        super().__init__()
        self.c_fc = nn.Linear(embed, 4 * embed)
        self.gelu = nn.GELU()
        self.c_proj = nn.Linear(4 * embed, embed)

    def forward(self, x):
        return self.c_proj(self.gelu(self.c_fc(x)))


class Block(nn.Module):
    def __init__(self, embed, heads, context):
        super().__init__()
        self.ln_1 = nn.LayerNorm(embed)
        self.attn = CausalSelfAttention(embed, heads, context)
        self.ln_2 = nn.LayerNorm(embed)
        self.mlp = MLP(embed)

    def forward(self, x):
        x = x + self.attn(self.ln_1(x))
        x = x + self.mlp(self.ln_2(x))
        return x


class GPT(nn.Module):
    def __init__(self, vocab, context, layers, heads, embed):
        super().__init__()
        self.transformer = nn.ModuleDict(dict(
            wte=nn.Embedding(vocab, embed),
            wpe=nn.Embedding(context, embed),
            h=nn.ModuleList([Block(embed, heads, context) for _ in range(layers)]),
            ln_f=nn.LayerNorm(embed),
        ))
        self.lm_head = nn.Linear(embed, vocab, bias=False)
        self.transformer.wte.weight = self.lm_head.weight  # tied, as nanoGPT

    def forward(self, idx):
        t = idx.size(1)
        pos = torch.arange(0, t, dtype=torch.long)
        x = self.transformer.wte(idx) + self.transformer.wpe(pos)
        for block in self.transformer.h:
            x = block(x)
        return self.lm_head(self.transformer.ln_f(x))


def main():
    state_path, batch_path, out_path, heads = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
    state = torch.load(state_path)  # the exported state_dict loads as users load it (weights_only=True)
    batch = torch.load(batch_path, weights_only=False)  # the test's own tagged dict (torch::pickle_save)
    vocab, embed = state["transformer.wte.weight"].shape
    context = state["transformer.wpe.weight"].shape[0]
    layers = len({k.split(".")[2] for k in state if k.startswith("transformer.h.")})
    model = GPT(vocab, context, layers, heads, embed)
    state["lm_head.weight"] = state["transformer.wte.weight"]
    model.load_state_dict(state)  # strict: every name must match nanoGPT's

    logits = model(batch["x"])
    loss = F.cross_entropy(logits.view(-1, logits.size(-1)), batch["y"].view(-1))
    loss.backward()
    out = {"loss": loss.detach(), "logits": logits.detach()}
    for name, p in model.named_parameters():  # the tied weight once, as transformer.wte.weight
        out["grad/" + name] = p.grad
    torch.save(out, out_path)
    print(f"reference loss {loss.item():.8f}, {len(out) - 2} gradients")


if __name__ == "__main__":
    main()
