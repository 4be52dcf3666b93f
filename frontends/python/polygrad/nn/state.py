"""State dicts and safetensors files (format: 8-byte little-endian header length, a JSON
header {name: {dtype, shape, data_offsets}}, then the raw little-endian data)."""
import json
import struct

import numpy as np

from ..tensor import Tensor


def get_state_dict(obj, prefix=""):
    """{'weight': Tensor, 'l1.bias': Tensor, 'layers.0.weight': ...}: every Tensor reachable
    through attributes, lists, tuples and dicts, in definition order."""
    out = {}

    def walk(o, name, seen):
        if isinstance(o, Tensor):
            out[name] = o
            return
        if id(o) in seen:
            return
        if isinstance(o, (list, tuple)):
            seen = seen | {id(o)}
            for i, v in enumerate(o):
                walk(v, f"{name}.{i}" if name else str(i), seen)
        elif isinstance(o, dict):
            seen = seen | {id(o)}
            for k, v in o.items():
                walk(v, f"{name}.{k}" if name else str(k), seen)
        elif hasattr(o, "__dict__") and not isinstance(o, type):
            seen = seen | {id(o)}
            for k, v in vars(o).items():
                walk(v, f"{name}.{k}" if name else k, seen)

    walk(obj, prefix.rstrip("."), frozenset())
    return out


def get_parameters(obj):
    """The distinct Tensors of get_state_dict(obj), in order."""
    seen, params = set(), []
    for t in get_state_dict(obj).values():
        if id(t) not in seen:
            seen.add(id(t))
            params.append(t)
    return params


def load_state_dict(model, state_dict, strict=True):
    """Writes state_dict's values into the model's tensors (assign), realised in one call."""
    own = get_state_dict(model)
    if strict:
        missing = [k for k in own if k not in state_dict]
        unexpected = [k for k in state_dict if k not in own]
        if missing or unexpected:
            raise KeyError(f"load_state_dict: missing keys {missing}, unexpected keys "
                           f"{unexpected}")
    targets = []
    for k, t in own.items():
        if k not in state_dict:
            continue
        v = state_dict[k]
        if not isinstance(v, Tensor):
            v = Tensor(np.asarray(v))
        if tuple(v.shape) != tuple(t.shape):
            raise ValueError(f"load_state_dict: '{k}' has shape {tuple(t.shape)} in the model, "
                             f"{tuple(v.shape)} in the state dict")
        t.assign(v.to(t.device) if v.device != t.device else v)
        targets.append(t)
    if targets:
        Tensor.realize_all(targets)


_ST_DTYPES = {"float32": "F32", "float64": "F64", "float16": "F16", "bool": "BOOL",
              "int8": "I8", "int16": "I16", "int32": "I32", "int64": "I64", "uint8": "U8",
              "uint16": "U16", "uint32": "U32", "uint64": "U64"}
_NP_DTYPES = {v: k for k, v in _ST_DTYPES.items()}


def safe_save(tensors, path, metadata=None):
    """Writes {name: Tensor} to a safetensors file."""
    header, blobs, offset = {}, [], 0
    for name, t in tensors.items():
        a = t.numpy() if isinstance(t, Tensor) else np.asarray(t)
        if a.dtype.name not in _ST_DTYPES:
            raise ValueError(f"safe_save: '{name}' has dtype {a.dtype.name}, which safetensors "
                             f"cannot hold here")
        data = np.ascontiguousarray(a).astype(a.dtype.newbyteorder("<"), copy=False).tobytes()
        header[name] = {"dtype": _ST_DTYPES[a.dtype.name], "shape": list(a.shape),
                        "data_offsets": [offset, offset + len(data)]}
        blobs.append(data)
        offset += len(data)
    if metadata:
        header["__metadata__"] = {str(k): str(v) for k, v in metadata.items()}
    text = json.dumps(header, separators=(",", ":")).encode()
    text += b" " * (-len(text) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(text)))
        f.write(text)
        for b in blobs:
            f.write(b)


def safe_load_metadata(path):
    """The JSON header of a safetensors file (with its __metadata__, if any)."""
    with open(path, "rb") as f:
        (n,) = struct.unpack("<Q", f.read(8))
        return json.loads(f.read(n))


def safe_load(path, device=None):
    """{name: Tensor} from a safetensors file (BF16 is widened to float32)."""
    with open(path, "rb") as f:
        raw = f.read()
    (n,) = struct.unpack("<Q", raw[:8])
    header = json.loads(raw[8:8 + n])
    base = 8 + n
    out = {}
    for name, info in header.items():
        if name == "__metadata__":
            continue
        begin, end = info["data_offsets"]
        buf = raw[base + begin:base + end]
        if info["dtype"] == "BF16":
            a = (np.frombuffer(buf, dtype="<u2").astype(np.uint32) << 16).view(np.float32)
        elif info["dtype"] in _NP_DTYPES:
            a = np.frombuffer(buf, dtype=np.dtype(_NP_DTYPES[info["dtype"]]).newbyteorder("<"))
        else:
            raise ValueError(f"safe_load: '{name}' has unsupported dtype {info['dtype']}")
        a = a.reshape(info["shape"]).astype(a.dtype.newbyteorder("="), copy=False)
        out[name] = Tensor(a, device=device)
    return out
