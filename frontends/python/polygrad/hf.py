"""GPT-2 checkpoints as the HuggingFace Hub stores them (config.json + safetensors, F32, F16 or
BF16, single or sharded), run by the core's GPT-2 (pg_gpt2_* of the C API), with a KV cache
for decoding and GPT-2's byte-level BPE tokenizer (pg_tokenizer_*) when the folder has
vocab.json and merges.txt.

    inst = load_hf("path/to/gpt2", max_batch=1, max_seq_len=64)
    out = inst.forward(x=tokens, positions=np.arange(T).reshape(1, -1), arange=np.arange(64))
    generate(inst, tokens, max_new_tokens=16, top_k=1)        # greedy
"""
import json
import os
import time
from ctypes import c_char as ctypes_char

import numpy as np

from ._ffi import PolygradIndexError, PolygradValueError, byref, c_char_p, c_int64, c_size_t
from ._ffi import c_void_p, check, fn, lib
from .tensor import Tensor, _wrap

_CONFIG_FIELDS = ("vocab_size", "n_positions", "n_embd", "n_layer", "n_head", "n_inner",
                  "max_batch", "max_seq_len")


class Tokenizer:
    """GPT-2's byte-level BPE (vocab.json + merges.txt), run by the core."""

    def __init__(self, handle):
        self._h = handle

    @classmethod
    def from_files(cls, vocab_path, merges_path):
        h = c_void_p()
        check(fn("pg_tokenizer_load")(os.fsencode(vocab_path), os.fsencode(merges_path),
                                      byref(h)))
        return cls(h)

    @classmethod
    def from_bytes(cls, vocab_json, merges_txt):
        """From the two files' contents (str or bytes)."""
        v = vocab_json.encode() if isinstance(vocab_json, str) else bytes(vocab_json)
        m = merges_txt.encode() if isinstance(merges_txt, str) else bytes(merges_txt)
        h = c_void_p()
        check(fn("pg_tokenizer_load_bytes")(v, len(v), m, len(m), byref(h)))
        return cls(h)

    def encode(self, text):
        """The ids (a list of ints) of a str."""
        data = text.encode("utf-8")
        cap = max(len(data), 1)
        while True:
            ids, count = (c_int64 * cap)(), c_size_t()
            check(lib.pg_tokenizer_encode(self._h, data, len(data), ids, cap, byref(count)))
            if count.value <= cap:
                return list(ids[:count.value])
            cap = count.value

    def decode(self, ids):
        """The text of a sequence of ids (bytes that are not UTF-8 become U+FFFD)."""
        ids = [int(i) for i in np.asarray(ids).reshape(-1)]
        arr = (c_int64 * max(len(ids), 1))(*ids)
        cap = max(8 * len(ids), 1)
        while True:
            buf, size = (ctypes_char * cap)(), c_size_t()
            check(lib.pg_tokenizer_decode(self._h, arr, len(ids), buf, cap, byref(size)))
            if size.value <= cap:
                return bytes(buf[:size.value]).decode("utf-8", "replace")
            cap = size.value

    @property
    def vocab_size(self):
        out = c_int64()
        check(lib.pg_tokenizer_vocab_size(self._h, byref(out)))
        return out.value

    def __del__(self):
        if getattr(self, "_h", None) and lib is not None:
            fn("pg_tokenizer_free")(self._h)
            self._h = None



def _ids(a, name, n=None):
    """A token or position array (list, numpy or Tensor) as a 2-d Tensor: float ids stay
    float, ints become int32. Ids given as host data are checked here, on every device: each
    must be a whole number in [0, n) (the core checks a tensor's only where its memory is the
    host's)."""
    if isinstance(a, Tensor):
        return a if len(a.shape) == 2 else a.reshape(1, -1)
    arr = np.asarray(a)
    if arr.dtype.kind == "f":
        arr = arr.astype(np.float32)
        frac = arr != np.trunc(arr)
        if frac.any():
            raise PolygradValueError(f"gpt2: {name}: index {arr[frac][0]:g} is not a whole "
                                     "number (a float index must hold whole numbers)")
    elif arr.dtype.kind in "iu":
        arr = arr.astype(np.int64)
    else:
        raise TypeError(f"{name} must hold numbers, not {arr.dtype}")
    if n is not None and arr.size:
        bad = (arr < 0) | (arr >= n)
        if bad.any():
            raise PolygradIndexError(f"gpt2: {name}: index {arr[bad][0]:g} is out of bounds "
                                     f"for an axis of size {n}")
    if arr.dtype.kind != "f":
        arr = arr.astype(np.int32)
    if arr.ndim == 1:
        arr = arr.reshape(1, -1)
    if arr.ndim != 2:
        raise ValueError(f"{name} must be 1-d or 2-d (batch, tokens), not {arr.ndim}-d")
    return Tensor(np.ascontiguousarray(arr))


class PolyInstance:
    """A loaded GPT-2: `forward` as the seed's instance API, `logits` (lazy, unpadded),
    `prefill` and `step` over the KV cache. `config` holds config.json's sizes, `tokenizer`
    the folder's tokenizer or None."""

    def __init__(self, handle, tokenizer=None):
        self._h = handle
        self.tokenizer = tokenizer
        vals = (c_int64 * len(_CONFIG_FIELDS))()
        check(lib.pg_gpt2_config(self._h, vals, len(_CONFIG_FIELDS), None))
        self.config = dict(zip(_CONFIG_FIELDS, list(vals)))
        self.vocab_size = self.config["vocab_size"]
        self.max_batch = self.config["max_batch"]
        self.max_seq_len = self.config["max_seq_len"]

    def logits(self, tokens, positions=None):
        """A lazy Tensor of logits (B, T, vocab_size) for token ids (B, T)."""
        x = _ids(tokens, "token", self.vocab_size)
        pos = (None if positions is None
               else _ids(positions, "position", self.config["n_positions"]))
        out = c_void_p()
        check(lib.pg_gpt2_forward(self._h, x._h, None if pos is None else pos._h, byref(out)))
        return _wrap(out)

    def forward(self, x, positions=None, arange=None):
        """The seed's instance call: token ids x (B, T) (float32 arrays holding whole numbers,
        or ints), their positions (B, T; default 0..T-1) and `arange` (np.arange(max_seq_len),
        checked). The tokens are padded to max_seq_len, so {'output': logits} holds
        B * max_seq_len * vocab_size float32 values (row t < T is token t's)."""
        arr = x.numpy() if isinstance(x, Tensor) else np.asarray(x)
        if arr.ndim == 1:
            arr = arr.reshape(1, -1)
        b, t = arr.shape
        s = self.max_seq_len
        if t > s:
            raise ValueError(f"forward: {t} tokens do not fit max_seq_len {s}")
        if arange is not None and not np.array_equal(np.asarray(arange).reshape(-1), np.arange(s)):
            raise ValueError(f"forward: arange must be np.arange(max_seq_len) = 0..{s - 1}")
        pos = (np.broadcast_to(np.arange(t), (b, t)) if positions is None
               else np.asarray(positions).reshape(b, t))
        dtype = np.float32 if arr.dtype.kind == "f" else np.int32
        xs = np.zeros((b, s), dtype)
        xs[:, :t] = arr
        ps = np.broadcast_to(np.arange(s), (b, s)).astype(dtype)
        ps[:, :t] = pos
        return {"output": self.logits(xs, ps).numpy().reshape(-1)}

    __call__ = forward

    def prefill(self, tokens):
        """Starts a sequence in the KV cache with prompt ids (B, T); the last position's logits
        (B, vocab_size) as numpy."""
        x = _ids(tokens, "token", self.vocab_size)
        out = c_void_p()
        check(lib.pg_gpt2_prefill(self._h, x._h, byref(out)))
        return _wrap(out).numpy()

    def step(self, tokens):
        """One token per sequence (B, 1) at the next position; logits (B, vocab_size)."""
        x = _ids(np.asarray(tokens).reshape(-1, 1) if not isinstance(tokens, Tensor) else tokens,
                 "token", self.vocab_size)
        out = c_void_p()
        check(lib.pg_gpt2_step(self._h, x._h, byref(out)))
        return _wrap(out).numpy()

    @property
    def position(self):
        """The next position step() writes."""
        out = c_int64()
        check(lib.pg_gpt2_position(self._h, byref(out)))
        return out.value

    def __del__(self):
        if getattr(self, "_h", None) and lib is not None:
            fn("pg_gpt2_free")(self._h)
            self._h = None


def _device(device):
    return None if device is None else str(device).encode()


def load_hf(path, max_batch=1, max_seq_len=0, device=None):
    """Loads a GPT-2 model folder (config.json, model.safetensors or the shards of
    model.safetensors.index.json, and vocab.json + merges.txt when present). max_seq_len 0
    means the config's n_positions. Errors (ValueError) name the file and the key."""
    h = c_void_p()
    check(fn("pg_gpt2_load")(os.fsencode(os.fspath(path)), int(max_batch), int(max_seq_len),
                             _device(device), byref(h)))
    vocab, merges = os.path.join(path, "vocab.json"), os.path.join(path, "merges.txt")
    tok = (Tokenizer.from_files(vocab, merges)
           if os.path.isfile(vocab) and os.path.isfile(merges) else None)
    return PolyInstance(h, tok)


def load_hf_bytes(config, weights, max_batch=1, max_seq_len=0, device=None, vocab=None,
                  merges=None):
    """load_hf without a file system: `config` is config.json as a dict, str or bytes;
    `weights` the bytes of a safetensors file, or a list of them (shards); `vocab` and
    `merges`, when given, the tokenizer's vocab.json and merges.txt contents."""
    if isinstance(config, dict):
        config = json.dumps(config)
    cfg = config.encode() if isinstance(config, str) else bytes(config)
    blobs = [weights] if isinstance(weights, (bytes, bytearray, memoryview)) else list(weights)
    blobs = [bytes(b) for b in blobs]
    ptrs = (c_char_p * max(len(blobs), 1))(*blobs)
    sizes = (c_size_t * max(len(blobs), 1))(*[len(b) for b in blobs])
    h = c_void_p()
    check(fn("pg_gpt2_load_bytes")(cfg, len(cfg), ptrs, sizes, len(blobs), int(max_batch),
                                   int(max_seq_len), _device(device), byref(h)))
    tok = Tokenizer.from_bytes(vocab, merges) if vocab is not None and merges is not None else None
    return PolyInstance(h, tok)


def download_hf(repo_id, cache_dir=None):
    """Downloads a model repository's config, weights and tokenizer files from the Hub through
    huggingface_hub (an optional dependency) and returns the local folder for load_hf."""
    try:
        from huggingface_hub import snapshot_download
    except ImportError:
        raise ImportError("download_hf needs the huggingface_hub package (pip install "
                          "huggingface_hub); or pass a local model folder to load_hf") from None
    return snapshot_download(repo_id, cache_dir=cache_dir,
                             allow_patterns=["config.json", "*.safetensors",
                                             "model.safetensors.index.json", "vocab.json",
                                             "merges.txt"])


def _pick(logits, temperature, top_k, rng):
    """The next id of each row of logits (B, V): argmax at top_k 1 or temperature 0, else a
    draw from softmax(logits / temperature) over the top_k largest (all when top_k is None)."""
    if top_k == 1 or temperature == 0:
        return logits.argmax(-1)
    z = logits.astype(np.float64) / temperature
    if top_k is not None and top_k < z.shape[-1]:
        kth = np.partition(z, -top_k, axis=-1)[:, -top_k][:, None]
        z = np.where(z >= kth, z, -np.inf)
    p = np.exp(z - z.max(-1, keepdims=True))
    p /= p.sum(-1, keepdims=True)
    return np.array([rng.choice(p.shape[-1], p=row) for row in p])


def generate(inst, tokens, max_new_tokens, temperature=1.0, top_k=50, seed=0, progress=None):
    """Autoregressive decoding with the KV cache: the prompt is run once (prefill), then one
    step per new token. `tokens`: ids (B, T) or (T,) as a numpy array or list (the result has
    the same dtype and the new ids appended), or a str when the instance has a tokenizer (the
    result is the prompt and its continuation as text). Greedy at top_k=1 (or temperature 0);
    otherwise sampled from the top_k most likely ids with numpy's generator seeded by `seed`.
    `progress`, when given, is called as progress(done, total, seconds) after each token."""
    as_text = isinstance(tokens, str)
    if as_text:
        if inst.tokenizer is None:
            raise ValueError("generate: text needs a tokenizer (vocab.json and merges.txt in the "
                             "model folder); pass token ids instead")
        arr = np.array(inst.tokenizer.encode(tokens), dtype=np.int64)
    else:
        arr = tokens.numpy() if isinstance(tokens, Tensor) else np.asarray(tokens)
    one_d = arr.ndim == 1
    prompt = arr.reshape(1, -1) if one_d else arr
    if prompt.shape[1] == 0:
        raise ValueError("generate: the prompt is empty")
    needed = prompt.shape[1] + max(int(max_new_tokens) - 1, 0)
    if needed > inst.max_seq_len:
        raise ValueError(f"generate: {prompt.shape[1]} prompt tokens and {max_new_tokens} new "
                         f"ones do not fit max_seq_len {inst.max_seq_len}")
    rng = np.random.default_rng(seed)
    new = []
    start = time.perf_counter()
    if max_new_tokens > 0:
        logits = inst.prefill(prompt)
        for i in range(int(max_new_tokens)):
            nxt = _pick(logits, temperature, top_k, rng)
            new.append(nxt)
            if progress is not None:
                progress(i + 1, int(max_new_tokens), time.perf_counter() - start)
            if i + 1 < max_new_tokens:
                logits = inst.step(nxt.reshape(-1, 1).astype(np.int32))
    out = np.concatenate([prompt.astype(np.int64)] + [n.reshape(-1, 1) for n in new], axis=1)
    if as_text:
        return inst.tokenizer.decode(out[0])
    out = out.astype(arr.dtype)
    return out[0] if one_d else out


__all__ = ["load_hf", "load_hf_bytes", "download_hf", "generate", "PolyInstance", "Tokenizer"]
