"""Collectives across the devices of one process, without any ccl plugin.

all_reduce_devices([t0, t1, ...]) reduces tensors that live on different devices (of one plugin
or several: cpu and emu, two GPUs) and gives every device the result: the core's
pg_all_reduce_devices (core/include/polygrad/device_collectives.hpp describes the naive
reduction and the ring), written in the tensor IR, so its copies between devices and its
reductions are kernels the scheduler runs like any other.
"""

from ctypes import c_void_p

from ._ffi import PolygradValueError, check, lib
from .tensor import Tensor, _wrap

#: Tensors of at least this many bytes take the ring; smaller ones the naive reduction
#: (polygrad::kRingBytes).
RING_BYTES = 1 << 20

_OPS = {"sum": 0, "max": 1, "mean": 2}  # pg_comm_reduce
_ALGORITHMS = {"auto": 0, "naive": 1, "ring": 2}  # pg_device_reduce


def all_reduce_devices(tensors, op="sum", algorithm="auto", ring_bytes=None):
    """Reduces `tensors` (one per device, same shape and dtype; the devices may be of different
    plugins) with `op` ("sum", "max" or "mean") and returns one realised result per input, on
    the input's device, in order. The inputs are not written. `algorithm`: "naive", "ring", or
    "auto" (ring from `ring_bytes`, default RING_BYTES, up). The core's pg_all_reduce_devices."""
    tensors = list(tensors)
    if op not in _OPS:
        raise PolygradValueError(f"all_reduce_devices: reduction {op!r}: expected one of "
                                 f"{', '.join(_OPS)}")
    if algorithm not in _ALGORITHMS:
        raise PolygradValueError(f"all_reduce_devices: algorithm {algorithm!r}: expected "
                                 "'auto', 'naive' or 'ring'")
    for i, t in enumerate(tensors):
        if not isinstance(t, Tensor):
            raise PolygradValueError(f"all_reduce_devices: item {i} is a {type(t).__name__}, "
                                     "not a Tensor")
    limit = RING_BYTES if ring_bytes is None else int(ring_bytes)
    if limit <= 0:
        raise PolygradValueError(f"all_reduce_devices: ring_bytes {limit}: expected a positive "
                                 "size")
    n = len(tensors)
    handles = (c_void_p * n)(*[t._h for t in tensors])
    outs = (c_void_p * n)()
    check(lib.pg_all_reduce_devices(handles, n, _OPS[op], _ALGORITHMS[algorithm], limit, outs))
    return [_wrap(c_void_p(h)) for h in outs]


__all__ = ["all_reduce_devices", "RING_BYTES"]
