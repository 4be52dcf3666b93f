"""Collectives across the devices of one process, without any ccl plugin.

all_reduce_devices([t0, t1, ...]) reduces tensors that live on different devices (of one plugin
or several: cpu and emu, two GPUs) and gives every device the result. It is written in the
tensor IR, so the copies between devices (Tensor.to) and the reductions are kernels the
scheduler runs like any other:

- naive (below `ring_bytes`): every tensor is copied to the first device and reduced there, and
  the result is copied back to each of the others (2 (n-1) whole-tensor copies, serialised
  through one device);
- ring (from `ring_bytes` up): the flattened tensor is cut into n chunks; n-1 reduce-scatter
  steps pass chunk (i - s) mod n from device i to device i+1, which folds it into its own, so
  device i ends with the full reduction of chunk (i + 1) mod n; n-1 all-gather steps then pass
  the finished chunks around the ring. Each device sends and receives 2 (n-1)/n of the tensor,
  the bandwidth-optimal schedule.
"""

from ._ffi import PolygradValueError
from .tensor import Tensor

#: Tensors of at least this many bytes take the ring; smaller ones the naive reduction.
RING_BYTES = 1 << 20

_OPS = ("sum", "max", "mean")


def _combine(a, b, op):
    return a.maximum(b) if op == "max" else a + b


def _check(tensors, op, algorithm):
    if op not in _OPS:
        raise PolygradValueError(f"all_reduce_devices: reduction {op!r}: expected one of "
                                 f"{', '.join(_OPS)}")
    if algorithm not in ("auto", "naive", "ring"):
        raise PolygradValueError(f"all_reduce_devices: algorithm {algorithm!r}: expected "
                                 "'auto', 'naive' or 'ring'")
    if not tensors:
        raise PolygradValueError("all_reduce_devices: no tensors")
    first = tensors[0]
    for i, t in enumerate(tensors):
        if not isinstance(t, Tensor):
            raise PolygradValueError(f"all_reduce_devices: item {i} is a {type(t).__name__}, "
                                     "not a Tensor")
        if tuple(t.shape) != tuple(first.shape) or t.dtype != first.dtype:
            raise PolygradValueError(
                f"all_reduce_devices: tensor {i} on {t.device} is {t.dtype} {tuple(t.shape)}, "
                f"tensor 0 on {first.device} is {first.dtype} {tuple(first.shape)}: every "
                "tensor must have the same shape and dtype")
    if op == "mean" and not first.dtype.startswith(("float", "bfloat")):
        raise PolygradValueError(f"all_reduce_devices: mean needs a floating-point dtype, not "
                                 f"{first.dtype}")


def _naive(flats, devices, op):
    acc = flats[0]
    for x in flats[1:]:
        acc = _combine(acc, x.to(devices[0]), op)
    return [acc if i == 0 else acc.to(d) for i, d in enumerate(devices)]


def _ring(flats, devices, op):
    n = len(flats)
    total = flats[0].numel()
    bounds = [total * k // n for k in range(n + 1)]
    # chunks[i][c]: device i's current value of chunk c (lazy tensors on device i).
    chunks = [[x[bounds[c]:bounds[c + 1]] for c in range(n)] for x in flats]
    for s in range(n - 1):  # reduce-scatter
        sent = [(i, (i - s) % n) for i in range(n)]
        moved = [chunks[i][c].to(devices[(i + 1) % n]) for i, c in sent]
        for (i, c), piece in zip(sent, moved):
            j = (i + 1) % n
            chunks[j][c] = _combine(chunks[j][c], piece, op)
    for s in range(n - 1):  # all-gather: device i holds the finished chunk (i + 1 - s) mod n
        sent = [(i, (i + 1 - s) % n) for i in range(n)]
        moved = [chunks[i][c].to(devices[(i + 1) % n]) for i, c in sent]
        for (i, c), piece in zip(sent, moved):
            chunks[(i + 1) % n][c] = piece
    return [row[0].cat(*row[1:]) if n > 1 else row[0] for row in chunks]


def all_reduce_devices(tensors, op="sum", algorithm="auto", ring_bytes=None):
    """Reduces `tensors` (one per device, same shape and dtype; the devices may be of different
    plugins) with `op` ("sum", "max" or "mean") and returns one realised result per input, on
    the input's device, in order. The inputs are not written. `algorithm`: "naive", "ring", or
    "auto" (ring from `ring_bytes`, default RING_BYTES, up)."""
    tensors = list(tensors)
    _check(tensors, op, algorithm)
    devices = [t.device for t in tensors]
    shape = tuple(tensors[0].shape)
    n = len(tensors)
    if algorithm == "auto":
        limit = RING_BYTES if ring_bytes is None else int(ring_bytes)
        algorithm = "ring" if tensors[0].nbytes >= limit else "naive"
    flats = [t.reshape(-1) for t in tensors]
    if n == 1:
        out = [flats[0].contiguous()]
    elif algorithm == "ring" and tensors[0].numel() >= n:  # else some chunk would be empty
        out = _ring(flats, devices, op)
    else:
        out = _naive(flats, devices, op)
    if op == "mean":
        out = [x / n for x in out]
    out = [x.reshape(shape) for x in out]
    Tensor.realize_all(*out)
    return out


__all__ = ["all_reduce_devices", "RING_BYTES"]
