"""Tensor methods for shapes, indexing, joining, linear algebra and nn functions; each is one
C call unless its docstring says otherwise."""
import numbers

import numpy as np

from . import _ffi
from ._ffi import Index, byref, c_size_t, c_void_p, int64s, lib
from .symbolic import dims as _sym_dims, is_bound as _is_bound
from .tensor import Tensor, _call, _pair, _scalar, _shape_args, _wrap


def _list_op(name):
    f = getattr(lib, "pg_tensor_" + name)

    sym = getattr(lib, "pg_tensor_" + name + "_sym", None)

    def method(self, *values):
        values = _shape_args(values)
        if sym is not None and any(_is_bound(v) for v in values):
            arr, handles, n = _sym_dims(values)
            return _call(sym, self._h, arr, handles, n)
        arr, n = int64s(values)
        return _call(f, self._h, arr, n)
    method.__name__ = name
    return method


for _n in ("reshape", "view", "expand", "permute", "repeat"):
    setattr(Tensor, _n, _list_op(_n))


def flip(self, axis):
    arr, n = int64s((axis,) if isinstance(axis, numbers.Integral) else axis)
    return _call(lib.pg_tensor_flip, self._h, arr, n)


def transpose(self, dim0=-2, dim1=-1):
    return _call(lib.pg_tensor_transpose, self._h, int(dim0), int(dim1))


def squeeze(self, dim=None):
    d = None if dim is None else byref(_ffi.c_int64(_ffi.int64_arg(dim, "squeeze")))
    return _call(lib.pg_tensor_squeeze, self._h, d)


def unsqueeze(self, dim):
    return _call(lib.pg_tensor_unsqueeze, self._h, int(dim))


def flatten(self, start_dim=0, end_dim=-1):
    return _call(lib.pg_tensor_flatten, self._h, int(start_dim), int(end_dim))


def unflatten(self, dim, sizes):
    arr, n = int64s(sizes)
    return _call(lib.pg_tensor_unflatten, self._h, int(dim), arr, n)


def shrink(self, arg):
    """arg: one (start, end) per axis; None keeps the axis whole."""
    shape = self.shape
    bounds = []
    for i, b in enumerate(arg):
        bounds.extend((0, shape[i]) if b is None else b)
    if any(_is_bound(b) for b in bounds):
        arr, handles, _ = _sym_dims(bounds)
        return _call(lib.pg_tensor_shrink_sym, self._h, arr, handles, len(arg))
    arr, _ = int64s(bounds)
    return _call(lib.pg_tensor_shrink, self._h, arr, len(arg))


_PAD_MODES = {"constant": 0, "reflect": 1, "replicate": 2, "circular": 3}


def pad(self, arg, mode="constant", value=0.0):
    """arg: one (before, after) per axis (None: no padding), or torch's flat form
    (last axis first: (left, right, top, bottom, ...)); an empty one pads nothing, as torch's.
    mode: "constant" (fills with value), "reflect", "replicate" or "circular", as tinygrad's and
    torch's; only "constant" takes a value."""
    if mode not in _PAD_MODES:
        raise _ffi.PolygradValueError(
            f"pad: mode {mode!r} is not one of {', '.join(map(repr, _PAD_MODES))}")
    if mode != "constant" and value != 0.0:
        raise _ffi.PolygradValueError(f"pad: mode {mode!r} takes no value (got {value!r})")
    nd = self.ndim
    if all(isinstance(a, numbers.Integral) for a in arg):  # (() is the flat form, no pairs)
        if len(arg) % 2 or len(arg) // 2 > nd:
            raise _ffi.PolygradValueError(
                f"pad: flat padding {tuple(arg)} needs an even length of at most {2 * nd} "
                f"(a (left, right) pair per axis) for shape {self.shape}")
        pairs = [(0, 0)] * nd
        for i in range(len(arg) // 2):
            pairs[nd - 1 - i] = (arg[2 * i], arg[2 * i + 1])
    else:
        pairs = [(0, 0) if a is None else tuple(a) for a in arg]
    flat = [v for p in pairs for v in p]
    if any(_is_bound(v) for v in flat):
        if mode != "constant" or value != 0.0:
            raise _ffi.PolygradValueError("pad: a bound variable pads with zeros only")
        arr, handles, _ = _sym_dims(flat)
        return _call(lib.pg_tensor_pad_sym, self._h, arr, handles, len(pairs))
    arr, _ = int64s(flat)
    if mode == "constant":
        return _call(lib.pg_tensor_pad, self._h, arr, len(pairs), float(value))
    return _call(lib.pg_tensor_pad_mode, self._h, arr, len(pairs), _PAD_MODES[mode], 0.0)


for _f in (flip, transpose, squeeze, unsqueeze, flatten, unflatten, shrink, pad):
    setattr(Tensor, _f.__name__, _f)


# ---- indexing ---------------------------------------------------------------------------------

def _slice_bound(v):
    """A slice bound or step as an int64: beyond int64 it is clamped (an axis is shorter than
    2**63, so the slice is the same), where ctypes would silently wrap it."""
    return min(max(int(v), _ffi.INT64_MIN), _ffi.INT64_MAX)


def _index_entry(i):
    if i is None:
        return Index(2, 0, 0, 0, 0, 0, 1)
    if i is Ellipsis:
        return Index(3, 0, 0, 0, 0, 0, 1)
    if isinstance(i, slice):
        step = 1 if i.step is None else _slice_bound(i.step)
        if step == 0:
            raise ValueError("slice step cannot be zero")
        return Index(1, 0, i.start is not None, 0 if i.start is None else _slice_bound(i.start),
                     i.stop is not None, 0 if i.stop is None else _slice_bound(i.stop), step)
    if isinstance(i, (bool, np.bool_)):
        # numpy and torch read a bool as a new axis (kept or emptied), tinygrad has no bool
        # indexing; as an int it silently picked row 1 or 0
        raise TypeError(f"getitem: a bool index ({i!r}) is not supported; use None for a new "
                        "axis or an int")
    if isinstance(i, numbers.Integral):
        if not _ffi.INT64_MIN <= int(i) <= _ffi.INT64_MAX:
            raise IndexError(f"getitem: index {int(i)} is out of range")
        return Index(0, int(i), 0, 0, 0, 0, 1)
    raise TypeError(f"unsupported index {i!r}")


def __getitem__(self, idx):
    """int, slice (with steps), None, Ellipsis, negative indices: one pg_tensor_getitem call.
    A tensor, list or numpy array of ints (on the first axis only) is a gather (composition);
    negative entries count from the end, as in torch."""
    if isinstance(idx, Tensor):
        return _take(self, idx)
    if isinstance(idx, (list, np.ndarray)):
        return _take(self, _host_index(self, idx), wrap=False)
    if not isinstance(idx, tuple):
        idx = (idx,)
    if any(isinstance(i, slice) and (_is_bound(i.start) or _is_bound(i.stop)) for i in idx):
        return _symbolic_slice(self, idx)
    n = len(idx)
    arr = (Index * max(n, 1))(*[_index_entry(i) for i in idx])
    return _call(lib.pg_tensor_getitem, self._h, arr, n)


def __setitem__(self, idx, value):
    """self[idx] = value for ints, slices (a bound variable among their bounds too), None and
    Ellipsis: the value (broadcast to the view) is written through the view into this tensor's
    buffer at once, the other elements untouched, as torch and tinygrad do. A lazy tensor is
    realised first; an index that broadcasts or pads (a gather, a strided slice that pads) is
    an error naming the op."""
    if isinstance(idx, (Tensor, list, np.ndarray)):
        raise TypeError("setitem: a tensor, list or array index is not supported; use ints, "
                        "slices, None and Ellipsis")
    if not self.is_realized():
        self.realize()
    self[idx].assign(value)


def _symbolic_slice(self, idx):
    """x[a:b, ...] with a bound variable among the bounds: a shrink (slices of step 1 with
    non-negative bounds, on leading axes, and Ellipsis or nothing after them)."""
    if len(idx) and idx[-1] is Ellipsis:
        idx = idx[:-1]
    shape = self.shape
    if len(idx) > len(shape) or not all(isinstance(i, slice) for i in idx):
        raise _ffi.PolygradValueError(
            "getitem: a bound variable is taken in slices only (x[:n], x[a:b, :])")
    arg = []
    for i, s in enumerate(idx):
        if s.step not in (None, 1):
            raise _ffi.PolygradValueError("getitem: a slice with a bound variable has step 1")
        start = 0 if s.start is None else s.start
        stop = shape[i] if s.stop is None else s.stop
        for b in (start, stop):
            if not _is_bound(b) and int(b) < 0:
                raise _ffi.PolygradValueError(
                    "getitem: a slice with a bound variable has non-negative bounds")
        arg.append((start, stop))
    arg += [None] * (len(shape) - len(idx))
    return self.shrink(arg)


def _host_index(self, idx):
    """A list or numpy array of ints as an index tensor for axis 0, negatives wrapped; an entry
    outside [-n, n) raises IndexError (torch's), as the values are known here."""
    arr = np.asarray(idx)
    if arr.size == 0:
        arr = arr.astype(np.int64)
    if arr.dtype.kind not in "iu":
        raise TypeError(f"an index list or array must hold ints, not {arr.dtype}")
    if not self.shape:
        raise IndexError("a 0-d tensor cannot be indexed by a list or array")
    n, arr = self.shape[0], arr.astype(np.int64)
    _check_bounds(arr, n)
    return self._operand(np.where(arr < 0, arr + n, arr), "int32" if n <= 2**31 else "int64")


def _check_realized_index(index, n):
    """An IndexError (torch's) for an entry outside [-n, n) of an index tensor that holds a
    buffer in host memory (PG_CAP_HOST_MEMORY): its values are known without running anything. A lazy index's
    are not (the gather reads 0 for one outside the axis), nor anything while capturing.
    Returns whether every entry is known to be at least 0 (nothing to wrap)."""
    from .capture import is_capturing
    from .device import Device
    if is_capturing() or not index.is_realized() or not Device.host_memory(index._device_bytes().decode()):
        return False
    return _check_bounds(index.numpy(), n)


def _check_bounds(arr, n):
    """IndexError (torch's) for the first entry of `arr` outside [-n, n); else whether every
    entry is at least 0."""
    if arr.size == 0:
        return True
    lo, hi = arr.min(), arr.max()
    if lo < -n or hi >= n:
        bad = (arr < -n) | (arr >= n)
        raise IndexError(f"index {arr[bad].flat[0]} is out of bounds for axis 0 with size {n}")
    return bool(lo >= 0)


def _whole_float_index(index, n):
    """A float index (token ids as tinygrad's Embedding takes them) as an int32 one. Its values,
    when known on the host (as _check_realized_index), must be whole numbers in [0, n): else a
    ValueError or IndexError naming the first bad one, as the core's gather says."""
    from .capture import is_capturing
    from .device import Device
    if (not is_capturing() and index.is_realized()
            and Device.host_memory(index._device_bytes().decode())):
        arr = index.numpy().astype(np.float64).reshape(-1)
        frac = arr != np.trunc(arr)
        if frac.any():
            raise _ffi.PolygradValueError(f"gather: index {arr[frac][0]:g} is not a whole number (a "
                                     "float index must hold whole numbers)")
        out = (arr < 0) | (arr >= n)
        if out.any():
            raise _ffi.PolygradIndexError(f"gather: index {arr[out][0]:g} is out of bounds for an axis of "
                             f"size {n}")
    return index.cast("int32" if n <= 2**31 else "int64")


def _take(self, index, wrap=True):
    """self[index] along axis 0 for an int tensor `index`: reshape, expand and gather; with
    `wrap`, negative entries are wrapped lazily (lt, add, where), unless the index holds cpu
    data with none (see _check_realized_index)."""
    if index.dtype.startswith(("float", "bfloat")):
        index = _whole_float_index(index, self.shape[0] if self.shape else 0)
    if wrap and index.dtype.startswith("int"):
        n = self.shape[0] if self.shape else 0
        if not _check_realized_index(index, n):
            index = (index < 0).where(index + n, index)
    rest = self.shape[1:]
    flat = index.reshape(-1)
    k = flat.shape[0]
    ix = flat.reshape(k, *([1] * len(rest))).expand(k, *rest)
    return self.gather(0, ix).reshape(*index.shape, *rest)


def gather(self, dim, index):
    return _call(lib.pg_tensor_gather, self._h, int(dim), index._h)


def _handles(tensors):
    if len(tensors) == 1 and isinstance(tensors[0], (list, tuple)):
        tensors = tuple(tensors[0])
    return (c_void_p * max(len(tensors), 1))(*[t._h for t in tensors]), len(tensors)


def cat(self, *others, dim=0):
    """Tensor.cat(a, b, ..., dim=0) or a.cat(b, ..., dim=0) or Tensor.cat([a, b])."""
    ts = (list(self) if isinstance(self, (list, tuple)) else [self]) + list(others)
    arr, n = _handles(ts)
    return _call(lib.pg_tensor_cat, arr, n, int(dim))


def stack(self, *others, dim=0):
    ts = (list(self) if isinstance(self, (list, tuple)) else [self]) + list(others)
    arr, n = _handles(ts)
    return _call(lib.pg_tensor_stack, arr, n, int(dim))


def _pieces(f, *args):
    cap = 8
    while True:
        outs = (c_void_p * cap)()
        count = c_size_t()
        st = f(*args, outs, cap, byref(count))
        if st == 0:
            return [_wrap(c_void_p(outs[i])) for i in range(count.value)]
        if count.value <= cap:
            _ffi.raise_error(st)
        cap = count.value


def split(self, sizes, dim=0):
    if isinstance(sizes, numbers.Integral):
        return _pieces(lib.pg_tensor_split, self._h, int(sizes), int(dim))
    arr, n = int64s(sizes)
    return _pieces(lib.pg_tensor_split_sizes, self._h, arr, n, int(dim))


def chunk(self, n, dim=0):
    return _pieces(lib.pg_tensor_chunk, self._h, int(n), int(dim))


Tensor.__getitem__ = __getitem__
Tensor.__setitem__ = __setitem__
Tensor.gather = gather
Tensor.cat = cat
Tensor.stack = stack
Tensor.split = split
Tensor.chunk = chunk


def __iter__(self):
    for i in range(len(self)):
        yield self[i]


Tensor.__iter__ = __iter__


# ---- linear algebra and nn functions --------------------------------------------------------

def matmul(self, other):
    other = self._operand(other)
    return _call(lib.pg_tensor_matmul, self._h, other._h)


def __rmatmul__(self, other):
    return matmul(self._operand(other), self)


def linear(self, weight, bias=None):
    return _call(lib.pg_tensor_linear, self._h, weight._h, None if bias is None else bias._h)


def layernorm(self, axis=-1, eps=1e-5):
    arr, n = int64s((axis,) if isinstance(axis, numbers.Integral) else axis)
    return _call(lib.pg_tensor_layernorm, self._h, arr, n, float(eps))


_REDUCTIONS = {"mean": 0, "sum": 1, "none": 2}


def _reduction(name):
    if name not in _REDUCTIONS:
        raise ValueError(f"reduction must be 'mean', 'sum' or 'none', not {name!r}")
    return _REDUCTIONS[name]


def cross_entropy(self, target, axis=-1, label_smoothing=0.0, reduction="mean",
                  ignore_index=-100):
    """Cross-entropy of logits against class indices or probabilities (torch's, and its
    ignore_index)."""
    target = self._operand(target)
    return _call(lib.pg_tensor_cross_entropy, self._h, target._h, int(axis),
                 float(label_smoothing), int(ignore_index), _reduction(reduction))


def sparse_categorical_crossentropy(self, Y, ignore_index=-1, label_smoothing=0.0,
                                    reduction="mean"):
    """tinygrad's: cross-entropy against class indices, ignoring class -1 by default."""
    return cross_entropy(self, Y, -1, label_smoothing, reduction, ignore_index)


def binary_crossentropy(self, target, reduction="mean"):
    target = self._operand(target)
    return _call(lib.pg_tensor_binary_crossentropy, self._h, target._h, _reduction(reduction))


def binary_crossentropy_logits(self, target, reduction="mean", pos_weight=None):
    target = self._operand(target)
    pw = None if pos_weight is None else self._operand(pos_weight)
    return _call(lib.pg_tensor_binary_crossentropy_logits, self._h, target._h,
                 None if pw is None else pw._h, _reduction(reduction))


def einsum(formula, *operands):
    arr, n = _handles(operands)
    return _call(lib.pg_tensor_einsum, formula.encode(), arr, n)


def rearrange(self, formula, **sizes):
    names = list(sizes)
    n = len(names)
    carr = (_ffi.c_char_p * max(n, 1))(*[k.encode() for k in names])
    iarr, _ = int64s([sizes[k] for k in names])
    return _call(lib.pg_tensor_rearrange, self._h, formula.encode(), carr, iarr, n)


def conv2d(self, weight, bias=None, groups=1, stride=1, dilation=1, padding=0):
    s, d, p = (int64s(_pair(v, "conv2d", n))[0] for v, n in
               ((stride, "stride"), (dilation, "dilation"), (padding, "padding")))
    return _call(lib.pg_tensor_conv2d, self._h, weight._h, None if bias is None else bias._h,
                 int(groups), s, d, p)


def max_pool2d(self, kernel_size=(2, 2), stride=None, dilation=1, padding=0, ceil_mode=False):
    k = int64s(_pair(kernel_size, "max_pool2d", "kernel_size"))[0]
    s = None if stride is None else int64s(_pair(stride, "max_pool2d", "stride"))[0]
    d = int64s(_pair(dilation, "max_pool2d", "dilation"))[0]
    p = int64s(_pair(padding, "max_pool2d", "padding"))[0]
    return _call(lib.pg_tensor_max_pool2d, self._h, k, s, d, p, int(bool(ceil_mode)))


def avg_pool2d(self, kernel_size=(2, 2), stride=None, padding=0, ceil_mode=False,
               count_include_pad=True):
    k = int64s(_pair(kernel_size, "avg_pool2d", "kernel_size"))[0]
    s = None if stride is None else int64s(_pair(stride, "avg_pool2d", "stride"))[0]
    p = int64s(_pair(padding, "avg_pool2d", "padding"))[0]
    return _call(lib.pg_tensor_avg_pool2d, self._h, k, s, p,
                 int(bool(ceil_mode)), int(bool(count_include_pad)))


def scaled_dot_product_attention(self, key, value, attn_mask=None, is_causal=False):
    return _call(lib.pg_tensor_scaled_dot_product_attention, self._h, key._h, value._h,
                 None if attn_mask is None else attn_mask._h, int(bool(is_causal)))


def dropout(self, p=0.5):
    """Zeroes each element with probability p and scales the rest by 1/(1-p) while
    Tensor.training is set (composition: rand_like, ge, where, mul)."""
    if not 0 <= p <= 1:
        raise ValueError(f"dropout: probability has to be between 0 and 1, not {p}")
    if not Tensor.training or p == 0:
        return self
    if p == 1:  # every element dropped (torch's zeros), no 1 / 0 scale
        return self * 0.0
    keep = self.rand_like().ge(p)
    return keep.where(self, 0.0) * (1.0 / (1.0 - p))


def sequential(self, layers):
    x = self
    for f in layers:
        x = f(x)
    return x


def tril(self, diagonal=0):
    return _call(lib.pg_tensor_tril, self._h, int(diagonal))


def triu(self, diagonal=0):
    return _call(lib.pg_tensor_triu, self._h, int(diagonal))


def masked_fill(self, mask, value):
    mask = self._operand(mask)
    return _call(lib.pg_tensor_masked_fill, self._h, mask._h, _scalar(value))


def one_hot(self, num_classes=-1):
    return _call(lib.pg_tensor_one_hot, self._h, int(num_classes))


def lerp(self, end, weight):
    """self + weight * (end - self); a scalar weight becomes a tensor of self's dtype."""
    end = self._operand(end)
    weight = weight if isinstance(weight, Tensor) else self._scalar_like(float(weight))
    return _call(lib.pg_tensor_lerp, self._h, end._h, weight._h)


def roll(self, shifts, dims=None):
    s = (shifts,) if isinstance(shifts, numbers.Integral) else tuple(shifts)
    d = () if dims is None else (dims,) if isinstance(dims, numbers.Integral) else tuple(dims)
    sa, sn = int64s(s)
    da, dn = int64s(d)
    return _call(lib.pg_tensor_roll, self._h, sa, sn, da, dn)


def celu(self, alpha=1.0):
    return _call(lib.pg_tensor_celu, self._h, float(alpha))


def _binary_as(name):
    f = getattr(lib, "pg_tensor_" + name)

    def method(self, other):
        other = self._operand(other)
        return _call(f, self._h, other._h)
    method.__name__ = name
    return method


for _f in (tril, triu, masked_fill, one_hot, lerp, roll, celu):
    setattr(Tensor, _f.__name__, _f)
for _n in ("logical_and", "logical_or", "outer", "dot"):
    setattr(Tensor, _n, _binary_as(_n))


for _f in (matmul, linear, layernorm, cross_entropy, sparse_categorical_crossentropy,
           binary_crossentropy, binary_crossentropy_logits, rearrange, conv2d, max_pool2d,
           avg_pool2d, scaled_dot_product_attention, dropout, sequential):
    setattr(Tensor, _f.__name__, _f)


Tensor.__matmul__ = matmul
Tensor.__rmatmul__ = __rmatmul__
Tensor.einsum = staticmethod(einsum)
