"""Host data into tensors: numpy arrays and Python data made into core tensors, in place where
the device takes the memory (see _from_numpy)."""
import ctypes
import itertools

import numpy as np

from ._ffi import (DTYPE_CODES, MISSING, RELEASE_FN, byref, c_int, c_void_p, check, int64s,
                   lib)
from . import dtypes as _dt

_NP_OF = {"bool": np.bool_, "int8": np.int8, "int16": np.int16, "int32": np.int32,
          "int64": np.int64, "uint8": np.uint8, "uint16": np.uint16, "uint32": np.uint32,
          "uint64": np.uint64, "float16": np.float16, "float32": np.float32,
          "float64": np.float64}

# Arrays whose memory tensors use in place (see _from_numpy), by key; the core calls
# _release(key) once it no longer uses one. The callback object is made immortal: the core may
# release memory while this module is being torn down at exit.
_HELD = {}
_KEYS = itertools.count(1)
_IN_PLACE = "pg_tensor_from_host_memory" not in MISSING  # False with an older library


def _release(key):
    _HELD.pop(key, None)


_RELEASE = RELEASE_FN(_release)
ctypes.pythonapi.Py_IncRef(ctypes.py_object(_RELEASE))


def fits_int32(v):
    """Whether Python ints (an int, or an int64 array of them) fit int32, the default int: the
    ones that do not give int64, as numpy and torch do, rather than wrap."""
    if isinstance(v, np.ndarray):
        return v.size == 0 or (int(v.min()) >= -2**31 and int(v.max()) < 2**31)
    return -2**31 <= int(v) < 2**31


def _from_numpy(data, dtype, dev):
    """A new handle for `data` (list, tuple or ndarray). A C-contiguous, aligned, writeable array
    of a core dtype is offered to the device in place; where the device takes it (the cpu
    device, for memory 64-byte aligned like its own buffers) there is no copy: as with
    torch.from_numpy, the tensor then sees later writes to the array, and assign() writes into
    it. Anything else is copied."""
    if dtype is not None and _dt.name_of(dtype) == "bfloat16":  # (numpy has no bfloat16)
        h, _ = _from_numpy(data, "float32", dev)
        out = c_void_p()
        try:
            check(lib.pg_tensor_cast(h, DTYPE_CODES["bfloat16"], byref(out)))
        finally:
            lib.pg_tensor_free(h)
        return out, None
    if isinstance(data, np.generic):  # a numpy scalar keeps its dtype, as an array does
        data = np.asarray(data)
    if isinstance(data, np.ndarray):
        arr = data
        if dtype is not None:
            arr = arr.astype(_NP_OF[_dt.name_of(dtype)], copy=False)
    else:
        arr = np.asarray(data)
        if dtype is not None:
            arr = arr.astype(_NP_OF[_dt.name_of(dtype)], copy=False)
        elif arr.dtype == np.float64 or arr.size == 0:
            arr = arr.astype(np.float32)
        elif arr.dtype == np.int64 and fits_int32(arr):
            arr = arr.astype(np.int32)  # (ints int32 cannot hold stay int64, as numpy's)
    name = arr.dtype.name
    if name not in _NP_OF:
        if arr.dtype.kind not in "biuf":  # (a float128 still becomes float32)
            # object arrays hold ints beyond int64/uint64 or None; a cast to float32 turned
            # them into rounded values and NaN, and dropped a complex's imaginary part
            raise TypeError(f"Tensor: cannot hold data of numpy dtype {arr.dtype} (ints beyond "
                            "int64/uint64, None, complex numbers and strings have no tensor "
                            "dtype)")
        arr, name = arr.astype(np.float32), "float32"
    if not arr.dtype.isnative:  # (big-endian data, say: the core reads native byte order)
        arr = arr.astype(arr.dtype.newbyteorder("="))
    if not arr.flags.c_contiguous:  # (np.ascontiguousarray would turn shape () into (1,))
        arr = np.ascontiguousarray(arr)
    dims, n = int64s(arr.shape)
    out = c_void_p()
    if _IN_PLACE and arr.size and arr.flags.aligned and arr.flags.writeable:
        key, shared = next(_KEYS), c_int(0)
        _HELD[key] = arr
        check(lib.pg_tensor_from_host_memory(arr.ctypes.data_as(c_void_p), DTYPE_CODES[name], dims,
                                             n, dev, _RELEASE, c_void_p(key), byref(shared),
                                             byref(out)))
        return out, (arr if shared.value else None)
    check(lib.pg_tensor_from_data(arr.ctypes.data_as(c_void_p), DTYPE_CODES[name], dims, n, dev,
                                  byref(out)))
    return out, None


def _aligned_empty(shape, dtype, align=64):
    """An uninitialised C-contiguous array whose data starts on an `align`-byte boundary (the
    cpu device uses such memory in place)."""
    dtype = np.dtype(dtype)
    nbytes = int(np.prod(shape, dtype=np.int64)) * dtype.itemsize
    raw = np.empty(nbytes + align, np.uint8)
    start = -raw.ctypes.data % align
    return raw[start:start + nbytes].view(dtype).reshape(shape)
