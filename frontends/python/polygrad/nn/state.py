"""State dicts and safetensors files (format: 8-byte little-endian header length, a JSON
header {name: {dtype, shape, data_offsets}}, then the raw little-endian data). The files are
read and written by the core (pg_safetensors_* of the C API)."""
import os

import numpy as np

from .._ffi import DTYPE_CODES, byref, c_char_p, c_int64, c_size_t, c_uint64, c_void_p, check, fn
from .._ffi import lib
from ..device import canonical_device_arg
from ..tensor import Tensor, _wrap


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


# numpy dtypes safe_save writes for array-likes that are not Tensors.
_SAVABLE = ("bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
            "float16", "float32", "float64")


def _path_arg(path):
    return os.fsencode(os.fspath(path))


class _Checkpoint:
    """An opened safetensors file (or sharded checkpoint) of the core's reader: every check of
    the file is the core's (pg_safetensors_* in polygrad.h), and its errors name the file."""

    def __init__(self, path):
        self.path = os.fspath(path)
        self._h = c_void_p()
        opener = (fn("pg_safetensors_open_index") if str(self.path).endswith(".json")
                  else fn("pg_safetensors_open"))
        check(opener(_path_arg(path), byref(self._h)))

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        if self._h:
            lib.pg_safetensors_free(self._h)
            self._h = c_void_p()

    def entries(self):
        """[(name, safetensors dtype name, shape, (begin, end))] in the file's order."""
        count = c_size_t()
        check(fn("pg_safetensors_count")(self._h, byref(count)))
        out = []
        for i in range(count.value):
            name, dtype_name, ndim = c_char_p(), c_char_p(), c_size_t()
            check(fn("pg_safetensors_entry")(self._h, i, byref(name), byref(dtype_name), None,
                                             byref(ndim)))
            dims = (c_int64 * max(ndim.value, 1))()
            check(fn("pg_safetensors_shape")(self._h, i, dims, ndim.value, byref(ndim)))
            begin, end = c_uint64(), c_uint64()
            check(fn("pg_safetensors_location")(self._h, i, byref(begin), byref(end), None))
            out.append((name.value.decode(), dtype_name.value.decode(), list(dims[:ndim.value]),
                        (begin.value, end.value)))
        return out

    def metadata(self):
        count = c_size_t()
        check(fn("pg_safetensors_metadata_count")(self._h, byref(count)))
        out = {}
        for i in range(count.value):
            key, value = c_char_p(), c_char_p()
            check(fn("pg_safetensors_metadata")(self._h, i, byref(key), byref(value)))
            out[key.value.decode()] = value.value.decode()
        return out

    def tensor(self, name, dtype=None, device=None):
        code = DTYPE_CODES["void"] if dtype is None else DTYPE_CODES[dtype]
        out = c_void_p()
        dev = None if device is None else canonical_device_arg(device).encode()
        check(fn("pg_safetensors_tensor")(self._h, name.encode(), code, dev, byref(out)))
        return _wrap(out)


def safe_save(tensors, path, metadata=None):
    """Writes {name: Tensor or array} to a safetensors file at `path` (the core's writer:
    realised and copied to the host one tensor at a time, the header padded to 8 bytes, written
    beside `path` and renamed, so a failure leaves no partial file). `metadata` values are
    written as str()."""
    names, handles, alive = [], [], []  # (alive: the Tensors own the handles)
    for name, t in tensors.items():
        if not isinstance(t, Tensor):
            a = np.asarray(t)
            if a.dtype.name not in _SAVABLE:
                raise ValueError(f"safe_save: '{name}' has dtype {a.dtype.name}, which "
                                 f"safetensors cannot hold here")
            t = Tensor(a, dtype=a.dtype.name)
        names.append(str(name).encode())
        handles.append(t._h)
        alive.append(t)
    meta = {str(k): str(v) for k, v in (metadata or {}).items()}
    n, m = len(names), len(meta)
    c_names = (c_char_p * max(n, 1))(*names)
    c_tensors = (c_void_p * max(n, 1))(*handles)
    keys = (c_char_p * max(m, 1))(*[k.encode() for k in meta])
    values = (c_char_p * max(m, 1))(*[v.encode() for v in meta.values()])
    check(fn("pg_safetensors_save")(_path_arg(path), c_names, c_tensors, n, keys, values, m))


def safe_load_metadata(path):
    """The header of a safetensors file as its JSON reads: {name: {"dtype", "shape",
    "data_offsets"}}, with "__metadata__" when the file has any. Checked in full by the core
    (errors name the file and the key)."""
    with _Checkpoint(path) as c:
        header = {}
        metadata = c.metadata()
        if metadata:
            header["__metadata__"] = metadata
        for name, dtype_name, shape, offsets in c.entries():
            header[name] = {"dtype": dtype_name, "shape": shape, "data_offsets": list(offsets)}
        return header


def safe_load(path, device=None):
    """{name: Tensor} from a safetensors file, or from a sharded checkpoint through its
    model.safetensors.index.json. The core memory-maps and checks the file (errors name the file
    and the key) and copies each tensor to the device; BF16 is widened to float32 (exactly),
    every other dtype is kept."""
    with _Checkpoint(path) as c:
        out = {}
        for name, dtype_name, _shape, _offsets in c.entries():
            out[name] = c.tensor(name, "float32" if dtype_name == "BF16" else None, device)
        return out
