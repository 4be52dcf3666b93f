"""Generates text with a GPT-2 checkpoint through polygrad.hf (KV-cache decoding).

    python3 examples/gpt2_generate.py path/to/gpt2 --prompt "The meaning of life is" -n 32
    python3 examples/gpt2_generate.py            # a small random GPT-2 written here

A model folder holds config.json, model.safetensors (or the shards of
model.safetensors.index.json) and, for text, vocab.json and merges.txt: what
polygrad.hf.download_hf('gpt2') fetches. With no folder, the example writes a small random
GPT-2 (random weights, a byte-level vocabulary of 256 symbols) to a temporary folder and
generates from it: the text is then random bytes. A progress bar shows the tokens decoded and
the rate; the prefill (the prompt) and the decoding are timed apart.
"""
import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from polygrad import Tensor
from polygrad.hf import generate, load_hf
from polygrad.nn.state import safe_save


def byte_symbols():
    """GPT-2's printable stand-in of each byte (bytes_to_unicode)."""
    keep = set(range(ord("!"), ord("~") + 1)) | set(range(0xA1, 0xAD)) | set(range(0xAE, 0x100))
    out, extra = [], 0
    for b in range(256):
        out.append(chr(b) if b in keep else chr(256 + extra))
        extra += b not in keep
    return out


def write_random_gpt2(folder, n_layer=4, n_embd=128, n_head=4, n_positions=256, seed=0):
    """A random GPT-2 in the Hub's layout, with a byte-level tokenizer (no merges)."""
    rng = np.random.default_rng(seed)
    v, d = 256, n_embd

    def n(*shape, std=0.02):
        return Tensor((rng.standard_normal(shape) * std).astype(np.float32))

    w = {"transformer.wte.weight": n(v, d), "transformer.wpe.weight": n(n_positions, d, std=0.01),
         "transformer.ln_f.weight": Tensor(np.ones(d, np.float32)),
         "transformer.ln_f.bias": n(d)}
    for i in range(n_layer):
        p = f"transformer.h.{i}."
        w.update({p + "ln_1.weight": Tensor(np.ones(d, np.float32)), p + "ln_1.bias": n(d),
                  p + "attn.c_attn.weight": n(d, 3 * d), p + "attn.c_attn.bias": n(3 * d),
                  p + "attn.c_proj.weight": n(d, d), p + "attn.c_proj.bias": n(d),
                  p + "ln_2.weight": Tensor(np.ones(d, np.float32)), p + "ln_2.bias": n(d),
                  p + "mlp.c_fc.weight": n(d, 4 * d), p + "mlp.c_fc.bias": n(4 * d),
                  p + "mlp.c_proj.weight": n(4 * d, d), p + "mlp.c_proj.bias": n(d)})
    safe_save(w, str(folder / "model.safetensors"))
    (folder / "config.json").write_text(json.dumps({
        "model_type": "gpt2", "vocab_size": v, "n_positions": n_positions, "n_embd": d,
        "n_layer": n_layer, "n_head": n_head, "activation_function": "gelu_new"}))
    (folder / "vocab.json").write_text(json.dumps({s: i for i, s in enumerate(byte_symbols())}))
    (folder / "merges.txt").write_text("#version: 0.2\n")


class ProgressBar:
    def __init__(self, width=30):
        self.width = width

    def __call__(self, done, total, seconds):
        filled = self.width * done // total
        rate = done / seconds if seconds > 0 else 0.0
        sys.stderr.write(f"\r[{'#' * filled}{'.' * (self.width - filled)}] {done}/{total} "
                         f"{rate:7.1f} tok/s")
        if done == total:
            sys.stderr.write("\n")
        sys.stderr.flush()


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("model", nargs="?", help="a model folder (default: a random GPT-2)")
    ap.add_argument("--prompt", default="Hello, world.",
                    help="text, or comma-separated token ids when the folder has no tokenizer")
    ap.add_argument("-n", "--max-new-tokens", type=int, default=32)
    ap.add_argument("--max-seq-len", type=int, default=0, help="0: prompt + new tokens")
    ap.add_argument("--top-k", type=int, default=1, help="1: greedy")
    ap.add_argument("--temperature", type=float, default=1.0)
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()

    tmp = None
    folder = args.model
    if folder is None:
        tmp = tempfile.TemporaryDirectory()
        folder = Path(tmp.name)
        write_random_gpt2(folder)
        print(f"wrote a random GPT-2 to {folder}")

    start = time.perf_counter()
    probe = load_hf(folder, max_seq_len=1)  # (reads the config and the tokenizer)
    text_mode = probe.tokenizer is not None and not args.prompt.replace(",", "").isdigit()
    prompt = (args.prompt if text_mode
              else np.array([int(t) for t in args.prompt.split(",")], dtype=np.int64))
    prompt_len = len(probe.tokenizer.encode(prompt)) if text_mode else len(prompt)
    del probe
    max_seq_len = args.max_seq_len or prompt_len + args.max_new_tokens
    inst = load_hf(folder, max_batch=1, max_seq_len=max_seq_len)
    print(f"loaded {inst.config['n_layer']} layers, width {inst.config['n_embd']}, vocabulary "
          f"{inst.vocab_size} in {time.perf_counter() - start:.2f} s")

    times = []

    def progress(done, total, seconds):
        times.append(seconds)
        bar(done, total, seconds)

    bar = ProgressBar()
    start = time.perf_counter()
    out = generate(inst, prompt, args.max_new_tokens, temperature=args.temperature,
                   top_k=args.top_k, seed=args.seed, progress=progress)
    total = time.perf_counter() - start
    print(out if text_mode else " ".join(str(int(t)) for t in out))
    if len(times) > 1:
        # The first step schedules the step's graph for every position (at its own and at
        # probe positions, docs/compiler.md); the steps after it reuse that schedule.
        line = (f"prefill ({prompt_len} tokens) + first token: {times[0]:.3f} s; "
                f"first decode step: {times[1] - times[0]:.3f} s")
        if len(times) > 2:
            decode = times[-1] - times[1]
            line += (f"; {len(times) - 2} more: {decode:.3f} s, "
                     f"{(len(times) - 2) / decode:.1f} tokens/s")
        print(line + f"; total {total:.2f} s")


if __name__ == "__main__":
    main()
