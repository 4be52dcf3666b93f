#!/usr/bin/env python3
"""Writes the seed corpus of safetensors_fuzz (safetensors_corpus/): small valid files and one
file per way of being broken. Run from anywhere; the files are committed."""
import json
import os
import struct

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "safetensors_corpus")


def st(header, data=b"", length=None):
    text = header if isinstance(header, bytes) else json.dumps(header, separators=(",", ":")).encode()
    return struct.pack("<Q", len(text) if length is None else length) + text + data


def entry(dtype, shape, begin, end):
    return {"dtype": dtype, "shape": shape, "data_offsets": [begin, end]}


FILES = {
    "valid_scalar": st({"x": entry("F32", [], 0, 4)}, struct.pack("<f", 1.5)),
    "valid_many": st({"__metadata__": {"format": "pt"}, "w": entry("F32", [2, 2], 0, 16),
                      "b": entry("BOOL", [3], 16, 19), "i": entry("I64", [1], 19, 27)},
                     bytes(27)),
    "valid_half": st({"h": entry("F16", [2], 0, 4), "b": entry("BF16", [1], 4, 6)},
                     bytes([0, 0x3c, 0, 0xc0, 0x80, 0x3f])),
    "valid_empty": st({"e": entry("U8", [0, 4], 0, 0), "f8": entry("F8_E4M3", [1], 0, 1)},
                      b"\x01"),
    "valid_padded": st(b'{"a":{"dtype":"I8","shape":[1],"data_offsets":[0,1]}}   ', b"\x05"),
    "truncated_length": b"\x10\x00\x00",
    "past_end": st({}, length=4096),
    "huge_length": st({}, length=1 << 40),
    "not_utf8": st(b'{"\xff":1}'),
    "not_json": st(b'{"w": [1,'),
    "duplicate": st(b'{"a":{"dtype":"U8","shape":[1],"data_offsets":[0,1]},'
                    b'"a":{"dtype":"U8","shape":[1],"data_offsets":[0,1]}}', b"\x00"),
    "overlap": st({"a": entry("U8", [2], 0, 2), "b": entry("U8", [2], 1, 3)}, bytes(3)),
    "size_mismatch": st({"a": entry("F32", [2, 3], 0, 8)}, bytes(8)),
    "unknown_dtype": st({"a": entry("F17", [1], 0, 1)}, bytes(1)),
    "data_truncated": st({"a": entry("F64", [4], 0, 32)}, bytes(5)),
    "bad_metadata": st({"__metadata__": {"k": 1}}),
    "deep": st(b"[" * 80 + b"]" * 80),
}

os.makedirs(OUT, exist_ok=True)
for name, data in FILES.items():
    with open(os.path.join(OUT, name), "wb") as f:
        f.write(data)
