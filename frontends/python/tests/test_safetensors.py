"""nn.safe_load / safe_load_metadata / safe_save over the core's safetensors reader and writer,
against files written byte by byte here (struct + json) and values from numpy and torch."""
import json
import re
import struct

import numpy as np
import pytest

from polygrad import Device, Tensor, nn

torch = pytest.importorskip("torch")

_ST = {"float32": "F32", "float64": "F64", "float16": "F16", "bool": "BOOL", "int8": "I8",
       "int16": "I16", "int32": "I32", "int64": "I64", "uint8": "U8"}


def write_st(path, arrays, metadata=None):
    """A safetensors file of {name: (dtype name, shape, bytes)}, header unpadded, by hand."""
    header, data = {}, b""
    if metadata is not None:
        header["__metadata__"] = metadata
    for name, (dtype, shape, blob) in arrays.items():
        header[name] = {"dtype": dtype, "shape": list(shape),
                        "data_offsets": [len(data), len(data) + len(blob)]}
        data += blob
    text = json.dumps(header).encode()
    path.write_bytes(struct.pack("<Q", len(text)) + text + data)
    return path


def np_entry(a):
    a = np.asarray(a)  # (np.ascontiguousarray would make shape () into (1,))
    return (_ST[a.dtype.name], a.shape, a.astype(a.dtype.newbyteorder("<"), order="C").tobytes())


def test_loads_a_hand_written_file_of_every_dtype(tmp_path):
    rng = np.random.default_rng(0)
    arrays = {
        "f32": rng.standard_normal((2, 3)).astype(np.float32),
        "f64": rng.standard_normal(4),
        "f16": rng.standard_normal((3, 1)).astype(np.float16),
        "i8": np.array([-128, 0, 127], np.int8),
        "i16": np.array([-300, 300], np.int16),
        "i32": np.array([[1, -2], [3, -4]], np.int32),
        "i64": np.array([-(2 ** 40), 5], np.int64),
        "u8": np.array([0, 200, 255], np.uint8),
        "mask": np.array([True, False, True]),
        "scalar": np.array(2.5, np.float32),
        "empty": np.zeros((0, 4), np.float32),
    }
    path = write_st(tmp_path / "all.safetensors", {k: np_entry(v) for k, v in arrays.items()})
    back = nn.safe_load(str(path))
    assert list(back) == list(arrays)  # the header's order
    for k, a in arrays.items():
        assert back[k].dtype == a.dtype.name, k
        assert back[k].shape == a.shape, k
        np.testing.assert_array_equal(back[k].numpy(), a, err_msg=k)


def test_half_and_bfloat16_values_match_numpy_and_torch(tmp_path):
    values = [0.0, -0.0, 1.0, -2.5, 65504.0, 6e-8, 3.14159, float("inf"), -1e-3, 0.1]
    h = np.array(values, np.float16)
    b = torch.tensor(values, dtype=torch.bfloat16)
    path = write_st(tmp_path / "h.safetensors", {
        "h": ("F16", h.shape, h.tobytes()),
        "b": ("BF16", (len(values),), b.view(torch.int16).numpy().tobytes())})
    back = nn.safe_load(path)
    assert back["h"].dtype == "float16"
    if "float16" in Device.dtypes():  # the wasm device has no float16 kernels
        np.testing.assert_array_equal(back["h"].float().numpy(), h.astype(np.float32))
    assert back["b"].dtype == "float32"  # BF16 widened exactly
    np.testing.assert_array_equal(back["b"].numpy(), b.float().numpy())
    np.testing.assert_array_equal(np.signbit(back["b"].numpy()), np.signbit(b.float().numpy()))


def test_saved_files_read_back_byte_by_byte(tmp_path):
    w = np.arange(6, dtype=np.float32).reshape(2, 3)
    tensors = {"layer.w": Tensor(w) * 2, "idx": np.array([3, -4], np.int64),
               "f64": np.array([0.1, 0.2])}
    path = tmp_path / "m.safetensors"
    nn.safe_save(tensors, path, metadata={"format": "pt", "epoch": 3})
    raw = path.read_bytes()
    (n,) = struct.unpack("<Q", raw[:8])
    assert (8 + n) % 8 == 0  # the data starts 8-byte aligned
    header = json.loads(raw[8:8 + n])
    assert list(header) == ["__metadata__", "layer.w", "idx", "f64"]
    assert header["__metadata__"] == {"format": "pt", "epoch": "3"}
    assert header["layer.w"] == {"dtype": "F32", "shape": [2, 3], "data_offsets": [0, 24]}
    assert header["idx"] == {"dtype": "I64", "shape": [2], "data_offsets": [24, 40]}
    assert header["f64"]["dtype"] == "F64"
    data = raw[8 + n:]
    np.testing.assert_array_equal(np.frombuffer(data[:24], "<f4").reshape(2, 3), w * 2)
    np.testing.assert_array_equal(np.frombuffer(data[24:40], "<i8"), [3, -4])
    np.testing.assert_array_equal(np.frombuffer(data[40:56], "<f8"), [0.1, 0.2])
    assert nn.safe_load_metadata(path) == header


def test_metadata_of_a_hand_written_file(tmp_path):
    path = write_st(tmp_path / "m.safetensors", {"x": np_entry(np.zeros(2, np.float32))},
                    metadata={"format": "pt", "note": "caf\u00e9"})
    meta = nn.safe_load_metadata(str(path))
    assert meta == {"__metadata__": {"format": "pt", "note": "caf\u00e9"},
                    "x": {"dtype": "F32", "shape": [2], "data_offsets": [0, 8]}}
    assert "__metadata__" not in nn.safe_load_metadata(
        write_st(tmp_path / "n.safetensors", {"x": np_entry(np.zeros(2, np.float32))}))


def test_sharded_checkpoint_through_its_index(tmp_path):
    a, b = np.array([1.0, 2.0], np.float32), np.array([[3, 4]], np.int32)
    write_st(tmp_path / "model-00001-of-00002.safetensors", {"a": np_entry(a)})
    write_st(tmp_path / "model-00002-of-00002.safetensors", {"b": np_entry(b)})
    index = tmp_path / "model.safetensors.index.json"
    index.write_text(json.dumps({"metadata": {"total_size": 16}, "weight_map": {
        "a": "model-00001-of-00002.safetensors", "b": "model-00002-of-00002.safetensors"}}))
    back = nn.safe_load(index)
    np.testing.assert_array_equal(back["a"].numpy(), a)
    np.testing.assert_array_equal(back["b"].numpy(), b)
    assert nn.safe_load_metadata(index)["__metadata__"] == {"total_size": "16"}


def raw(header, data=b""):
    """A file of a header given as text."""
    return struct.pack("<Q", len(header.encode())) + header.encode() + data


def _broken(tmp_path):
    """(file name, bytes, what the error says) for each way a file can be broken."""
    good = {"w": np_entry(np.arange(6, dtype=np.float32))}
    whole = write_st(tmp_path / "whole", good).read_bytes()
    entry = '{"w":{"dtype":"%s","shape":%s,"data_offsets":%s}}'
    return [
        ("truncated_data", whole[:-5], "tensor 'w': \"data_offsets\" [0, 24] run past the end"),
        ("truncated_length", whole[:5], "truncated: 5 bytes"),
        ("past_end", struct.pack("<Q", 4096) + b"{}", "header length 4096 runs past the end"),
        ("oversized", struct.pack("<Q", 2 ** 40) + b"{}", "over the 100 MB limit"),
        ("garbage", struct.pack("<Q", 16) + bytes(range(240, 256)), "is not UTF-8"),
        ("not_json", raw('{"w": [1,'), "is not valid JSON"),
        ("size", raw(entry % ("F32", "[2,3]", "[0,8]"), bytes(8)),
         "tensor 'w': \"data_offsets\" [0,8] hold 8 bytes, but F32 [2,3] needs 24"),
        ("dtype", raw(entry % ("F17", "[2]", "[0,8]"), bytes(8)),
         "tensor 'w' has the unknown dtype 'F17'"),
        ("overlap", raw('{"a":{"dtype":"U8","shape":[2],"data_offsets":[0,2]},'
                        '"b":{"dtype":"U8","shape":[2],"data_offsets":[1,3]}}', bytes(3)),
         "tensors 'a' [0, 2] and 'b' [1, 3] overlap"),
    ]


def test_each_broken_file_is_an_error_naming_the_file(tmp_path):
    for name, data, says in _broken(tmp_path):
        path = tmp_path / (name + ".safetensors")
        path.write_bytes(data)
        for load in (nn.safe_load, nn.safe_load_metadata):
            with pytest.raises(ValueError) as e:
                load(path)
            assert str(path) in str(e.value), (name, str(e.value))
            assert says in str(e.value), (name, str(e.value))
    with pytest.raises(ValueError, match=re.escape(str(tmp_path / "absent.safetensors")) +
                       ": cannot open"):
        nn.safe_load(tmp_path / "absent.safetensors")


def test_save_errors_name_the_tensor(tmp_path):
    with pytest.raises(ValueError, match="'c' has dtype complex64"):
        nn.safe_save({"c": np.zeros(2, np.complex64)}, tmp_path / "c.safetensors")
    with pytest.raises(ValueError, match="tensor '__metadata__': the name is reserved"):
        nn.safe_save({"__metadata__": Tensor([1.0])}, tmp_path / "r.safetensors")
    missing = tmp_path / "no" / "dir" / "x.safetensors"
    with pytest.raises(ValueError, match=re.escape(str(missing)) + ": cannot write"):
        nn.safe_save({"x": Tensor([1.0])}, missing)
