#!/usr/bin/env python3
"""Whole training steps of small models, polygrad against torch in the same run.

Usage (the Makefile's `bench` target runs it):
  PYTHONPATH=frontends/python POLYGRAD_LIB=build/release/lib/libpolygrad.so \
    build/release/venv/bin/python bench/models.py [model-substring]

Each step is a forward pass, the backward pass and every gradient realised, from the same
weights and inputs in both libraries; the losses are printed side by side. Prints the best of
8 steps in milliseconds and the ratio torch / polygrad (> 1: polygrad is faster), for
polygrad's eager step (the graph built, looked up in the schedule cache and launched every
step) and for the same step under TinyJit (kernels replayed; its gradients are checked equal
to the eager step's, also with other inputs read in place).
"""
import sys
import time

import numpy as np
import torch

from polygrad import Tensor, TinyJit

F = torch.nn.functional
rng = np.random.default_rng(0)


def param(shape, scale=0.1):
    return rng.uniform(-scale, scale, shape).astype(np.float32)


def vit(w, inp, lib):
    """4 x 4 patches of 32 x 32 images, one attention layer, mean-pooled, 10 classes."""
    x, y = inp
    b = x.shape[0]
    h = x.reshape(b, 3, 8, 4, 8, 4).permute(0, 2, 4, 1, 3, 5).reshape(b, 64, 48) @ w["pe"]
    if lib == "pg":
        h = h.layernorm()
        return ((h + h.scaled_dot_product_attention(h, h)).mean(1) @ w["head"]).cross_entropy(y)
    h = F.layer_norm(h, (h.shape[-1],))
    a = ((h @ h.transpose(-1, -2)) / h.shape[-1] ** 0.5).softmax(-1) @ h
    return F.cross_entropy((h + a).mean(1) @ w["head"], y.long())


def bag_of_words(w, inp, lib):
    """A 5000 x 64 embedding, mean over 32 tokens, a linear classifier."""
    tok, y = inp
    if lib == "pg":
        return (w["emb"][tok].mean(1) @ w["head"]).cross_entropy(y)
    return F.cross_entropy(F.embedding(tok.long(), w["emb"]).mean(1) @ w["head"], y.long())


def tied_lm(w, inp, lib):
    """Token embedding, layer norm and the transposed embedding as the output layer."""
    tok, y = inp
    v = w["emb"].shape[0]
    if lib == "pg":
        logits = w["emb"][tok].layernorm() @ w["emb"].T
        return logits.reshape(-1, v).cross_entropy(y.reshape(-1))
    logits = F.layer_norm(F.embedding(tok.long(), w["emb"]), (w["emb"].shape[1],)) @ w["emb"].T
    return F.cross_entropy(logits.reshape(-1, v), y.reshape(-1).long())


def depthwise(w, inp, lib):
    """Depthwise-separable convolutions, the second depthwise one strided."""
    x, y = inp
    if lib == "pg":
        h = x.conv2d(w["dw1"], groups=32, padding=1).relu().conv2d(w["pw1"]).relu()
        h = h.conv2d(w["dw2"], groups=64, padding=1, stride=2).relu().conv2d(w["pw2"]).relu()
        return h.mean((2, 3)).cross_entropy(y)
    h = F.relu(F.conv2d(F.relu(F.conv2d(x, w["dw1"], groups=32, padding=1)), w["pw1"]))
    h = F.relu(F.conv2d(F.relu(F.conv2d(h, w["dw2"], groups=64, padding=1, stride=2)), w["pw2"]))
    return F.cross_entropy(h.mean((2, 3)), y.long())


def lstm(w, inp, lib):
    """An LSTM over 12 steps, its gates one (batch, 4 * hidden) product chunked in four."""
    (x,) = inp
    h = c = None
    for t in range(x.shape[1]):
        z = x[:, t] @ w["wx"] + w["b"]
        if h is not None:
            z = z + h @ w["wh"]
        i, f, g, o = z.chunk(4, dim=-1)
        i, f, o, g = i.sigmoid(), f.sigmoid(), o.sigmoid(), g.tanh()
        c = i * g if c is None else f * c + i * g
        h = o * c.tanh()
    return ((h @ w["wo"]) ** 2).mean()


def labels(n, classes):
    return rng.integers(0, classes, n).astype(np.int32)


MODELS = {
    "vit": (vit, {"pe": param((48, 96)), "head": param((96, 10))},
            [param((32, 3, 32, 32), 1), labels(32, 10)]),
    "bag_of_words": (bag_of_words, {"emb": param((5000, 64)), "head": param((64, 4))},
                     [rng.integers(0, 5000, (64, 32)).astype(np.int32), labels(64, 4)]),
    "tied_lm": (tied_lm, {"emb": param((2048, 128))},
                [rng.integers(0, 2048, (8, 64)).astype(np.int32),
                 rng.integers(0, 2048, (8, 64)).astype(np.int32)]),
    "depthwise": (depthwise, {"dw1": param((32, 1, 3, 3)), "pw1": param((64, 32, 1, 1)),
                              "dw2": param((64, 1, 3, 3)), "pw2": param((10, 64, 1, 1))},
                  [param((32, 32, 16, 16), 1), labels(32, 10)]),
    "lstm": (lstm, {"wx": param((32, 256)), "wh": param((64, 256)), "b": param((256,)),
                    "wo": param((64, 8))}, [param((16, 12, 32), 1)]),
}


def best_ms(step, reps=8):
    step()
    step()
    times = []
    for _ in range(reps):
        start = time.perf_counter()
        step()
        times.append(time.perf_counter() - start)
    return min(times) * 1e3


def compare(name, build, weights, inputs):
    pw = {k: Tensor(v, requires_grad=True) for k, v in weights.items()}
    tw = {k: torch.tensor(v, requires_grad=True) for k, v in weights.items()}
    pin, tin = [Tensor(v) for v in inputs], [torch.tensor(v) for v in inputs]

    def pg_step(*inp):
        loss = build(pw, list(inp) or pin, "pg")
        loss.backward()
        out = [loss] + [p.grad for p in pw.values()]
        Tensor.realize_all(out)
        for p in pw.values():
            p.grad = None
        return out

    def torch_step():
        loss = build(tw, tin, "torch")
        loss.backward()
        for p in tw.values():
            p.grad = None
        return loss

    jit_step = TinyJit(pg_step)
    for inp in (pin, [Tensor(np.ascontiguousarray(v[::-1])) for v in inputs]):
        for _ in range(3):
            got = jit_step(*inp)
        for want, have in zip(pg_step(*inp), got):
            if not np.array_equal(want.numpy(), have.numpy()):
                raise SystemExit(f"{name}: the TinyJit step differs from the eager step")
    lp, lt = pg_step()[0].item(), torch_step().item()
    ours, jit, theirs = best_ms(pg_step), best_ms(lambda: jit_step(*pin)), best_ms(torch_step)
    print(f"{name:<14}{lp:>10.5f}{lt:>10.5f}{ours:>9.2f}{theirs / ours:>7.2f}{jit:>9.2f}"
          f"{theirs / jit:>7.2f}{theirs:>10.2f}")


def main():
    torch.set_num_threads(2)
    only = sys.argv[1] if len(sys.argv) > 1 else ""
    print(f"{'':<34}{'polygrad eager':>16}{'under TinyJit':>16}")
    print(f"{'model':<14}{'loss':>10}{'torch':>10}{'ms':>9}{'ratio':>7}{'ms':>9}{'ratio':>7}"
          f"{'torch ms':>10}")
    for name, (build, weights, inputs) in MODELS.items():
        if only in name:
            compare(name, build, weights, inputs)


if __name__ == "__main__":
    main()
