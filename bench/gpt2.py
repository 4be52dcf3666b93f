#!/usr/bin/env python3
"""A GPT-2-small-shaped forward and decode loop, polygrad against torch in the same run.

Usage (the Makefile's `bench` target runs it):
  PYTHONPATH=frontends/python POLYGRAD_LIB=build/release/lib/libpolygrad.so \\
    build/release/venv/bin/python bench/gpt2.py [--rounds N] [--decode-tokens N]

The model has GPT-2 small's shapes (12 layers, 768 wide, 12 heads, MLP 3072, vocabulary 50257,
logits tied to the token embedding) and random weights, the same in both libraries; every
Linear is `x @ w.T + b` with w (out, in), as torch's F.linear. Cases, timed in interleaved
rounds (polygrad, then torch, each round), medians printed:

- forward: 64 tokens, full logits (64 x 50257);
- decode: greedy, one token at a time from a 32-token prompt. There is no KV cache: each step
  runs the forward over the whole prefix again and multiplies only the last position by the
  embedding (a one-row logits product). Both libraries decode the same tokens (checked);
- the logits product alone, 64 x 768 @ (50257 x 768).T: GFLOP/s;
- one-row products with the 768 x 50257 weight, `x @ w.T` (w (50257, 768), the tied logits)
  and `x @ w` (w (768, 50257)): GB/s of the weight read, against the machine's read bandwidth
  measured in the same round (the faster of torch's and polygrad's sum over the same 154 MB):
  from the medians, and the median over the rounds of each round's own fraction.

- hf prefill: polygrad.hf's GPT-2 (load_hf of a checkpoint in the Hub's layout that the bench
  writes from the same weights) on 64 tokens, full logits, against torch_forward with gelu_new;
- KV-cache decode: polygrad.hf's prefill of the 32-token prompt, then greedy steps over its KV
  cache, against a GPT-2 in torch with its own KV cache (TorchKV, written here: no transformers
  package); tokens per second over the steps, the same tokens checked.

Ratios are torch's time / polygrad's (> 1: polygrad faster); issue 37's targets are printed
beside them. Weights live in polygrad's own buffers (a tensor over a numpy array's memory is
read in place, and copies of it in panels are not kept: see docs/compiler.md).
"""
import argparse
import json
import os
import tempfile
import statistics
import time

import numpy as np
import torch

import polygrad
from polygrad import Tensor
from polygrad.hf import load_hf
from polygrad.nn.state import safe_save

F = torch.nn.functional
L, D, H, FF, V = 12, 768, 12, 3072, 50257


def make_weights(seed=0):
    rng = np.random.default_rng(seed)

    def n(*shape, std=0.02):
        return (rng.standard_normal(shape, dtype=np.float32) * std).astype(np.float32)

    w = {"wte": n(V, D), "wpe": n(1024, D, std=0.01), "lnf_g": 1 + n(D), "lnf_b": n(D)}
    for i in range(L):
        w.update({f"{i}.ln1_g": 1 + n(D), f"{i}.ln1_b": n(D), f"{i}.qkv_w": n(3 * D, D),
                  f"{i}.qkv_b": n(3 * D), f"{i}.proj_w": n(D, D), f"{i}.proj_b": n(D),
                  f"{i}.ln2_g": 1 + n(D), f"{i}.ln2_b": n(D), f"{i}.fc_w": n(FF, D),
                  f"{i}.fc_b": n(FF), f"{i}.out_w": n(D, FF), f"{i}.out_b": n(D)})
    return w


def pg_weights(w):
    # (x * 1): a buffer of polygrad's own, not the numpy array's memory read in place.
    out = {k: (Tensor(v) * 1) for k, v in w.items()}
    Tensor.realize(*out.values())
    return out


def pg_forward(w, tok, last_only=False):
    t = tok.shape[0]
    x = w["wte"][tok] + w["wpe"][:t]
    for i in range(L):
        p = f"{i}."
        h = x.layernorm() * w[p + "ln1_g"] + w[p + "ln1_b"]
        qkv = h @ w[p + "qkv_w"].T + w[p + "qkv_b"]
        q, k, v = (qkv[:, j * D:(j + 1) * D].reshape(t, H, D // H).permute(1, 0, 2)
                   for j in range(3))
        a = q.scaled_dot_product_attention(k, v, is_causal=True)
        x = x + a.permute(1, 0, 2).reshape(t, D) @ w[p + "proj_w"].T + w[p + "proj_b"]
        h = x.layernorm() * w[p + "ln2_g"] + w[p + "ln2_b"]
        x = x + (h @ w[p + "fc_w"].T + w[p + "fc_b"]).gelu() @ w[p + "out_w"].T + w[p + "out_b"]
    if last_only:
        x = x[t - 1:]
    x = x.layernorm() * w["lnf_g"] + w["lnf_b"]
    return x @ w["wte"].T


def torch_forward(w, tok, last_only=False, gelu=F.gelu):
    t = tok.shape[0]
    x = w["wte"][tok] + w["wpe"][:t]
    for i in range(L):
        p = f"{i}."
        h = F.layer_norm(x, (D,), w[p + "ln1_g"], w[p + "ln1_b"])
        qkv = F.linear(h, w[p + "qkv_w"], w[p + "qkv_b"])
        q, k, v = (qkv[:, j * D:(j + 1) * D].reshape(t, H, D // H).permute(1, 0, 2)
                   for j in range(3))
        # (torch 1.13 has no scaled_dot_product_attention)
        s = (q @ k.transpose(-1, -2)) / (D // H) ** 0.5
        a = (s + torch.full((t, t), float("-inf")).triu(1)).softmax(-1) @ v
        x = x + F.linear(a.permute(1, 0, 2).reshape(t, D), w[p + "proj_w"], w[p + "proj_b"])
        h = F.layer_norm(x, (D,), w[p + "ln2_g"], w[p + "ln2_b"])
        x = x + F.linear(gelu(F.linear(h, w[p + "fc_w"], w[p + "fc_b"])), w[p + "out_w"],
                         w[p + "out_b"])
    if last_only:
        x = x[t - 1:]
    x = F.layer_norm(x, (D,), w["lnf_g"], w["lnf_b"])
    return F.linear(x, w["wte"])


def torch_forward_tanh(w, tok):
    """torch_forward with GPT-2's gelu_new (tanh), as the Hub's GPT-2 and polygrad.hf use."""
    return torch_forward(w, tok, gelu=lambda x: F.gelu(x, approximate="tanh"))


def pg_decode(w, prompt, steps):
    tok = list(prompt)
    for _ in range(steps):
        logits = pg_forward(w, Tensor(np.array(tok, dtype=np.int32)), last_only=True)
        tok.append(int(logits.argmax().item()))
    return tok[len(prompt):]


def torch_decode(w, prompt, steps):
    tok = list(prompt)
    with torch.no_grad():
        for _ in range(steps):
            logits = torch_forward(w, torch.tensor(tok), last_only=True)
            tok.append(int(logits.argmax()))
    return tok[len(prompt):]


def write_hf_checkpoint(w, folder):
    """The weights as a Hub GPT-2 folder (config.json, model.safetensors; Conv1D weights
    stored (in, out), the logits tied to wte), for polygrad.hf.load_hf."""
    cfg = {"model_type": "gpt2", "vocab_size": V, "n_positions": 1024, "n_embd": D,
           "n_layer": L, "n_head": H, "n_inner": FF, "layer_norm_epsilon": 1e-5,
           "activation_function": "gelu_new"}
    st = {"wte.weight": w["wte"], "wpe.weight": w["wpe"], "ln_f.weight": w["lnf_g"],
          "ln_f.bias": w["lnf_b"]}
    for i in range(L):
        p, h = f"{i}.", f"h.{i}."
        st.update({h + "ln_1.weight": w[p + "ln1_g"], h + "ln_1.bias": w[p + "ln1_b"],
                   h + "attn.c_attn.weight": w[p + "qkv_w"].T, h + "attn.c_attn.bias": w[p + "qkv_b"],
                   h + "attn.c_proj.weight": w[p + "proj_w"].T, h + "attn.c_proj.bias": w[p + "proj_b"],
                   h + "ln_2.weight": w[p + "ln2_g"], h + "ln_2.bias": w[p + "ln2_b"],
                   h + "mlp.c_fc.weight": w[p + "fc_w"].T, h + "mlp.c_fc.bias": w[p + "fc_b"],
                   h + "mlp.c_proj.weight": w[p + "out_w"].T, h + "mlp.c_proj.bias": w[p + "out_b"]})
    os.makedirs(folder, exist_ok=True)
    with open(os.path.join(folder, "config.json"), "w") as f:
        json.dump(cfg, f)
    safe_save({"transformer." + k: np.ascontiguousarray(v) for k, v in st.items()},
              os.path.join(folder, "model.safetensors"))


class TorchKV:
    """GPT-2 in torch with its own KV cache (transformers' GPT2LMHeadModel with use_cache, as
    the bench has no transformers package): prefill, then one token a step over the cache."""

    def __init__(self, w, max_len):
        self.w, self.max_len = w, max_len
        self.k = torch.zeros(L, H, max_len, D // H)
        self.v = torch.zeros(L, H, max_len, D // H)
        self.pos = 0

    def run(self, tok):
        """Logits (T, V) of tokens tok (T,) at positions pos.., the cache written."""
        w, t, p0 = self.w, tok.shape[0], self.pos
        x = w["wte"][tok] + w["wpe"][p0:p0 + t]
        n = p0 + t
        mask = torch.full((t, n), float("-inf")).triu(p0 + 1)
        for i in range(L):
            p = f"{i}."
            h = F.layer_norm(x, (D,), w[p + "ln1_g"], w[p + "ln1_b"])
            qkv = F.linear(h, w[p + "qkv_w"], w[p + "qkv_b"])
            q, k, v = (qkv[:, j * D:(j + 1) * D].reshape(t, H, D // H).permute(1, 0, 2)
                       for j in range(3))
            self.k[i, :, p0:n] = k
            self.v[i, :, p0:n] = v
            s = (q @ self.k[i, :, :n].transpose(-1, -2)) / (D // H) ** 0.5
            a = (s + mask).softmax(-1) @ self.v[i, :, :n]
            x = x + F.linear(a.permute(1, 0, 2).reshape(t, D), w[p + "proj_w"], w[p + "proj_b"])
            h = F.layer_norm(x, (D,), w[p + "ln2_g"], w[p + "ln2_b"])
            x = x + F.linear(F.gelu(F.linear(h, w[p + "fc_w"], w[p + "fc_b"]), approximate="tanh"),
                             w[p + "out_w"], w[p + "out_b"])
        self.pos = n
        x = F.layer_norm(x[t - 1:], (D,), w["lnf_g"], w["lnf_b"])
        return F.linear(x, w["wte"])


def kv_decode(prefill, step, prompt, steps):
    """Greedy decoding over a KV cache: (tokens, seconds spent in the steps)."""
    tok = [int(prefill(prompt).argmax())]
    start = time.perf_counter()
    for _ in range(steps - 1):
        tok.append(int(step(tok[-1]).argmax()))
    return tok, time.perf_counter() - start


def pg_kv_decode(inst, prompt, steps):
    return kv_decode(lambda p: inst.prefill(np.array([p])), lambda t: inst.step([[t]]), prompt,
                     steps)


def torch_kv_decode(w, prompt, steps):
    model = TorchKV(w, len(prompt) + steps)
    with torch.no_grad():
        return kv_decode(lambda p: model.run(torch.tensor(p)), lambda t: model.run(
            torch.tensor([t])), prompt, steps)


def copies_made():
    # (None with a library older than the panel cache, for comparing builds.)
    try:
        return polygrad.panel_cache_stats()["copies_made"]
    except Exception:  # noqa: BLE001 - any failure means: no such counter
        return None


def timed(fn):
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--decode-tokens", type=int, default=8)
    ap.add_argument("--kv-tokens", type=int, default=32,
                    help="tokens decoded over the KV cache (polygrad.hf against torch)")
    args = ap.parse_args()
    torch.set_num_threads(int(os.environ.get("OMP_NUM_THREADS", "2")))
    w = make_weights()
    pw = pg_weights(w)
    tw = {k: torch.from_numpy(v) for k, v in w.items()}
    rng = np.random.default_rng(1)
    tokens = rng.integers(0, V, 64).astype(np.int32)
    prompt = [int(t) for t in tokens[:32]]
    x64 = rng.standard_normal((64, D), dtype=np.float32)
    x1 = rng.standard_normal((1, D), dtype=np.float32)
    wT = rng.standard_normal((V, D), dtype=np.float32) * 0.02  # x @ wT.T
    wN = np.ascontiguousarray(wT.T)                            # x @ wN, (768, 50257)
    p_x64, p_x1 = Tensor(x64), Tensor(x1)
    p_wT, p_wN = (Tensor(wT) * 1).realize(), (Tensor(wN) * 1).realize()
    t_x64, t_x1, t_wT, t_wN = (torch.from_numpy(a) for a in (x64, x1, wT, wN))
    p_tok, t_tok = Tensor(tokens), torch.from_numpy(tokens.astype(np.int64))

    # Checks (and warm-up: kernels compiled, weights packed).
    out = pg_forward(pw, p_tok).numpy()
    with torch.no_grad():
        ref = torch_forward(tw, t_tok).numpy()
    err = np.abs(out - ref).max() / np.abs(ref).max()
    print(f"forward: max |polygrad - torch| / max |torch| = {err:.2e}")
    pg_gen, t_gen = pg_decode(pw, prompt, args.decode_tokens), torch_decode(tw, prompt,
                                                                            args.decode_tokens)
    print(f"decode: {args.decode_tokens} tokens, {'same' if pg_gen == t_gen else 'DIFFERENT'} "
          f"tokens in both (polygrad {pg_gen[:4]}..., torch {t_gen[:4]}...)")
    for name, a, b in (("logits", (p_x64 @ p_wT.T).numpy(), x64 @ wT.T),
                       ("one row x @ w.T", (p_x1 @ p_wT.T).numpy(), x1 @ wT.T),
                       ("one row x @ w", (p_x1 @ p_wN).numpy(), x1 @ wN)):
        print(f"{name}: max error relative to the largest value "
              f"{np.abs(a - b).max() / np.abs(b).max():.2e}")

    # polygrad.hf's GPT-2 from a checkpoint written here, against torch's KV-cache decoder.
    folder = tempfile.mkdtemp(prefix="pg_gpt2_bench_")
    write_hf_checkpoint(w, folder)
    inst = load_hf(folder, max_batch=1, max_seq_len=max(64, len(prompt) + args.kv_tokens))
    tok64 = tokens.reshape(1, 64)
    hf_out = inst.logits(tok64).numpy()[0]
    with torch.no_grad():
        t_full = torch_forward_tanh(tw, t_tok).numpy()
    print(f"hf prefill, 64 tokens: max |polygrad - torch| / max |torch| = "
          f"{np.abs(hf_out - t_full).max() / np.abs(t_full).max():.2e}")
    pg_kv, _ = pg_kv_decode(inst, prompt, args.kv_tokens)
    t_kv, _ = torch_kv_decode(tw, prompt, args.kv_tokens)
    print(f"KV decode: {args.kv_tokens} tokens, {'same' if pg_kv == t_kv else 'DIFFERENT'} "
          f"tokens in both (polygrad {pg_kv[:4]}..., torch {t_kv[:4]}...)")
    kv_times = ([], [])

    cases = {
        "forward": (lambda: pg_forward(pw, p_tok).realize(),
                    lambda: torch_forward(tw, t_tok)),
        "decode": (lambda: pg_decode(pw, prompt, args.decode_tokens),
                   lambda: torch_decode(tw, prompt, args.decode_tokens)),
        "hf_prefill": (lambda: inst.logits(tok64).realize(),
                       lambda: torch_forward_tanh(tw, t_tok)),
        "logits": (lambda: (p_x64 @ p_wT.T).realize(), lambda: t_x64 @ t_wT.T),
        "row_wT": (lambda: (p_x1 @ p_wT.T).realize(), lambda: t_x1 @ t_wT.T),
        "row_w": (lambda: (p_x1 @ p_wN).realize(), lambda: t_x1 @ t_wN),
        "read": (lambda: p_wT.sum().realize(), lambda: t_wT.sum()),
    }
    times = {c: ([], []) for c in cases}
    made = copies_made()
    with torch.no_grad():
        for _ in range(args.rounds):
            for c, (pg_fn, t_fn) in cases.items():
                times[c][0].append(timed(pg_fn))
                times[c][1].append(timed(t_fn))
            kv_times[0].append(pg_kv_decode(inst, prompt, args.kv_tokens)[1])
            kv_times[1].append(torch_kv_decode(tw, prompt, args.kv_tokens)[1])
    copies = None if made is None else copies_made() - made
    med = {c: (statistics.median(p), statistics.median(t)) for c, (p, t) in times.items()}

    load = os.getloadavg()[0]
    print(f"\nmedians of {args.rounds} interleaved rounds, load average {load:.1f} on "
          f"{os.cpu_count()} cores; weight copies made while timing: {copies}")
    print(f"{'case':<34}{'polygrad':>12}{'torch':>12}{'torch/pg':>10}   target")
    flop_fwd = 2 * 64 * (L * (4 * D * D + 2 * D * FF) + D * V)
    rows = [("forward, 64 tokens, full logits", "forward", f"<= 0.9x torch's time "
             f"(met: {med['forward'][0] <= 0.9 * med['forward'][1]})"),
            (f"decode, {args.decode_tokens} tokens, no KV cache", "decode", ""),
            ("hf prefill, 64 tokens, full logits", "hf_prefill", "<= 1.0x torch's time "
             f"(met: {med['hf_prefill'][0] <= med['hf_prefill'][1]})"),
            ("logits 64 x 768 x 50257", "logits", ""),
            ("one row x @ w.T, w 50257 x 768", "row_wT", ""),
            ("one row x @ w, w 768 x 50257", "row_w", ""),
            ("sum of the 154 MB weight", "read", "")]
    for label, c, target in rows:
        p, t = med[c]
        print(f"{label:<34}{p * 1e3:>10.2f}ms{t * 1e3:>10.2f}ms{t / p:>9.2f}x   {target}")
    print(f"forward: polygrad {flop_fwd / med['forward'][0] / 1e9:.0f} GFLOP/s, torch "
          f"{flop_fwd / med['forward'][1] / 1e9:.0f} (matmuls only)")
    per_tok = med["decode"][0] / args.decode_tokens, med["decode"][1] / args.decode_tokens
    print(f"decode: polygrad {per_tok[0] * 1e3:.1f} ms a token, torch {per_tok[1] * 1e3:.1f} "
          "(each step recomputes the whole prefix: no KV cache)")
    kv = statistics.median(kv_times[0]), statistics.median(kv_times[1])
    steps = args.kv_tokens - 1
    print(f"KV-cache decode, {steps} steps after a {len(prompt)}-token prefill: polygrad.hf "
          f"{steps / kv[0]:.1f} tokens/s, torch {steps / kv[1]:.1f}: {kv[1] / kv[0]:.2f}x "
          f"torch's rate (target >= 1.0x, met: {kv[0] <= kv[1]})")
    flop = 2 * 64 * D * V
    pg_gf, t_gf = flop / med["logits"][0] / 1e9, flop / med["logits"][1] / 1e9
    print(f"logits: polygrad {pg_gf:.1f} GFLOP/s, torch {t_gf:.1f}: {pg_gf / t_gf:.2f}x torch's "
          f"(target >= 0.9x, met: {pg_gf >= 0.9 * t_gf})")
    nbytes = V * D * 4
    bw = nbytes / min(med["read"]) / 1e9
    print(f"read bandwidth (faster sum of the weight): {bw:.1f} GB/s")
    # The fraction of the read bandwidth per round: the product's time against the faster sum
    # timed in the same round, moments later (on a loaded host the bandwidth a process gets
    # moves by 2x from one minute to the next); the median of the rounds' fractions.
    read_round = [min(p, t) for p, t in zip(*times["read"])]
    for label, c in (("x @ w.T", "row_wT"), ("x @ w", "row_w")):
        p, t = med[c]
        frac = statistics.median(r / q for r, q in zip(read_round, times[c][0]))
        print(f"one row {label}: polygrad {nbytes / p / 1e9:.1f} GB/s ({nbytes / p / 1e9 / bw:.0%}"
              f" of the read bandwidth of the medians; per round {frac:.0%}, target >= 80%, met: "
              f"{frac >= 0.8}), torch {nbytes / t / 1e9:.1f} GB/s")


if __name__ == "__main__":
    main()
