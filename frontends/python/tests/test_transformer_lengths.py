"""A transformer block over several sequence lengths: values and gradients against torch from
the same weights, and no kernel compiled after the third length (attention's seq x seq
kernels are generalised over the length from two kernels that differ only in it; a backward
kernel's split can differ between the first two lengths, and then its general kernel comes
from the second and third; docs/compiler.md)."""
import numpy as np
import torch

import polygrad
from polygrad import Tensor

B, D, H, F = 2, 24, 3, 44
LENGTHS = [5, 6, 7, 9, 11, 13, 17]  # none equal to H, D // H, D or F (those merge strides)


def weights():
    rng = np.random.default_rng(7)
    shapes = {"wqkv": (3 * D, D), "bqkv": (3 * D,), "wo": (D, D), "bo": (D,),
              "w1": (F, D), "b1": (F,), "w2": (D, F), "b2": (D,)}
    return {k: rng.uniform(-0.3, 0.3, s).astype(np.float32) for k, s in shapes.items()}


def block(x, w, t, lib):
    """One pre-norm block; `lib` picks the layer functions of polygrad or torch."""
    if lib == "torch":
        ln = lambda v: torch.nn.functional.layer_norm(v, (D,))
        linear = torch.nn.functional.linear
        def attn(q, k, v):  # torch 1.13 has no scaled_dot_product_attention
            s = q @ k.transpose(-2, -1) / (D // H) ** 0.5
            s = s.masked_fill(torch.ones(t, t, dtype=torch.bool).triu(1), float("-inf"))
            return s.softmax(-1) @ v
        gelu = lambda v: torch.nn.functional.gelu(v, approximate="tanh")
    else:
        ln = lambda v: v.layernorm()
        linear = lambda v, wt, b: v.linear(wt, b)
        attn = lambda q, k, v: q.scaled_dot_product_attention(k, v, is_causal=True)
        gelu = lambda v: v.gelu()
    qkv = linear(ln(x), w["wqkv"], w["bqkv"]).reshape(B, t, 3, H, D // H).permute(2, 0, 3, 1, 4)
    q, k, v = qkv[0], qkv[1], qkv[2]
    a = attn(q, k, v).permute(0, 2, 1, 3).reshape(B, t, D)
    x = x + linear(a, w["wo"], w["bo"])
    return x + linear(gelu(linear(ln(x), w["w1"], w["b1"])), w["w2"], w["b2"])


def test_sequence_lengths_share_the_attention_kernels():
    w = weights()
    rng = np.random.default_rng(3)
    compiled = None
    for t in LENGTHS:
        x = rng.uniform(-1, 1, (B, t, D)).astype(np.float32)
        u = rng.uniform(0.5, 1.5, (B, t, D)).astype(np.float32)
        pw = {k: Tensor(v, requires_grad=True) for k, v in w.items()}
        tw = {k: torch.tensor(v, requires_grad=True) for k, v in w.items()}
        po = block(Tensor(x), pw, t, "polygrad")
        to = block(torch.tensor(x), tw, t, "torch")
        (po * Tensor(u)).sum().backward()
        (to * torch.tensor(u)).sum().backward()
        np.testing.assert_allclose(po.numpy(), to.detach().numpy(), atol=2e-5, rtol=1e-4,
                                   err_msg=f"length {t}")
        for k in w:
            np.testing.assert_allclose(pw[k].grad.numpy(), tw[k].grad.numpy(), atol=2e-4,
                                       rtol=1e-3, err_msg=f"gradient of {k}, length {t}")
        if t == LENGTHS[2]:
            compiled = polygrad.compiled_kernel_count()
    assert polygrad.compiled_kernel_count() == compiled, "a new sequence length compiled"


def test_decoding_with_a_kv_cache_compiles_nothing_per_step():
    """One new token per step attends to a cache grown by cat: the cache length is an extent
    and an offset, learnt as a * t + b from three steps; values against numpy."""
    h, dh = 3, 20
    rng = np.random.default_rng(5)
    ks = [rng.standard_normal((1, h, 1, dh)).astype(np.float32)]
    vs = [rng.standard_normal((1, h, 1, dh)).astype(np.float32)]
    kc, vc = Tensor(ks[0]).realize(), Tensor(vs[0]).realize()
    compiled = None
    for step in range(2, 16):
        q = rng.standard_normal((1, h, 1, dh)).astype(np.float32)
        ks.append(rng.standard_normal((1, h, 1, dh)).astype(np.float32))
        vs.append(rng.standard_normal((1, h, 1, dh)).astype(np.float32))
        kc = kc.cat(Tensor(ks[-1]), dim=2).realize()
        vc = vc.cat(Tensor(vs[-1]), dim=2).realize()
        got = Tensor(q).scaled_dot_product_attention(kc, vc).numpy()
        k, v = np.concatenate(ks, 2).astype(np.float64), np.concatenate(vs, 2).astype(np.float64)
        s = q.astype(np.float64) @ k.transpose(0, 1, 3, 2) / np.sqrt(dh)
        w = np.exp(s - s.max(-1, keepdims=True))
        np.testing.assert_allclose(got, (w / w.sum(-1, keepdims=True)) @ v, atol=1e-5,
                                   err_msg=f"step {step}")
        if step == 5:
            compiled = polygrad.compiled_kernel_count()
    assert polygrad.compiled_kernel_count() == compiled, "a decoding step compiled"
