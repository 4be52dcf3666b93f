"""polygrad.Tensor: a lazy tensor over the C API. Each method is one C call (see docs/python.md
for the few compositions, where the C API has no direct entry)."""
import math
import numbers

import numpy as np

from . import _ffi, _pending
from ._ffi import (DTYPE_CODES, DTYPE_NAMES, MISSING, Scalar, byref, c_char_p, c_double, c_int,
                   c_int64, c_size_t, c_void_p, check, int64s, lib, raise_error)
from .device import Device, canonical_device_arg, device_display
from . import dtypes as _dt
from ._host_data import _NP_OF, _aligned_empty, _from_numpy, fits_int32

_FLOATS = ("float16", "bfloat16", "float32", "float64")


def _wrap(handle):
    t = object.__new__(Tensor)
    t._h = handle
    t._shape = None
    return t


def _call(f, *args):
    """Calls an entry point whose last parameter is a pg_tensor_t* and wraps the result."""
    out = c_void_p()
    st = f(*args, byref(out))
    if st:
        raise_error(st)
    return _wrap(out)


def _int_dtype(v):
    """The dtype of a Python int: int32, the default int, or int64 when int32 cannot hold it."""
    return "int32" if fits_int32(v) else "int64"


def _int64_bits(v):
    """An int as int64 bits, exactly (a uint64 above 2**63 wraps to its bit pattern): int64
    values beyond 2**53 have no double, so they travel as these."""
    return (int(v) + 2**63) % 2**64 - 2**63


def _scalar_handle(v, code, dev):
    """A new handle for a 0-d tensor of dtype `code` holding the Python number `v`; an int
    beyond 2**53 (no double holds it) goes in exactly as int64 bits."""
    out = c_void_p()
    if (isinstance(v, numbers.Integral) and not isinstance(v, (bool, np.bool_))
            and abs(int(v)) > 2**53 and DTYPE_NAMES[code] not in _FLOATS + ("bool",)):
        check(lib.pg_tensor_full_int(None, 0, _int64_bits(v), code, dev, byref(out)))
    else:
        check(lib.pg_tensor_scalar(float(v), code, dev, byref(out)))
    return out


def _scalar(v):
    if isinstance(v, (bool, np.bool_)):
        return Scalar(1.0 if v else 0.0, 1, 1 if v else 0)
    if isinstance(v, numbers.Integral):
        return Scalar(float(v), 1, _int64_bits(v))
    return Scalar(float(v), 0, 0)


def _is_scalar(v):
    return isinstance(v, (numbers.Number, np.bool_)) and not isinstance(v, complex)


def _axes(axis):
    if axis is None:
        return int64s(())
    if isinstance(axis, numbers.Integral):
        return int64s((axis,))
    return int64s(axis)


def _shape_args(shape):
    if len(shape) == 1 and isinstance(shape[0], (tuple, list)):
        return tuple(shape[0])
    return tuple(shape)


def _dtype_code(dtype, default="float32"):
    if dtype is None:
        dtype = default
    name = _dt.name_of(dtype)
    if name not in DTYPE_CODES:
        raise _ffi.PolygradValueError(f"unknown dtype {dtype!r}")
    return DTYPE_CODES[name]


def _dev(device):
    return None if device is None else canonical_device_arg(device).encode()


def _pair(v, op="", name=""):
    """An int or a 2-sequence as a pair; the C entries read exactly two values, so any other
    length is an error here (a 1-tuple was read past its end, a longer one cut short)."""
    if isinstance(v, numbers.Integral):
        return (v, v)
    t = tuple(v)
    if len(t) != 2:
        raise _ffi.PolygradValueError(f"{op}: {name} must be an int or a pair of ints, not {v!r}")
    return t


def _unary(name):
    f = getattr(lib, "pg_tensor_" + name)

    def method(self):
        out = c_void_p()
        st = f(self._h, byref(out))
        if st:
            raise_error(st)
        return _wrap(out)
    method.__name__ = name
    method.__doc__ = f"pg_tensor_{name}."
    return method


def _binary(name, compare=False):
    ft = getattr(lib, "pg_tensor_" + name)
    fs = getattr(lib, "pg_tensor_" + name + "_scalar")

    def method(self, other):
        out = c_void_p()
        tp = type(other)
        if tp is Tensor:
            st = ft(self._h, other._h, byref(out))
        elif tp is float:
            st = fs(self._h, Scalar(other, 0), byref(out))
        elif tp is int:
            st = fs(self._h, _scalar(other), byref(out))
        elif isinstance(other, Tensor):
            st = ft(self._h, other._h, byref(out))
        elif isinstance(other, (bool, np.bool_)):
            # (The C API's scalars are ints or floats: a bool one goes as a 0-d tensor of the
            # dtype it keeps, so bool + True stays bool as in torch.)
            other = self._scalar_like(other)
            st = ft(self._h, other._h, byref(out))
        elif _is_scalar(other):
            st = fs(self._h, _scalar(other), byref(out))
        else:
            other = self._operand(other)  # kept alive across the call
            st = ft(self._h, other._h, byref(out))
        if st:
            raise_error(st)
        r = _wrap(out)
        # The seed's comparisons give float tensors; the core's give bool (one cast).
        return r.cast("float32") if compare else r
    method.__name__ = name
    return method


def _reflected(name):
    """`scalar <op> tensor`: the C API has no entry, so the scalar becomes a 0-d tensor of the
    dtype the core promotes to, and the tensor-tensor entry broadcasts it."""
    ft = getattr(lib, "pg_tensor_" + name)

    def method(self, other):
        if not isinstance(other, Tensor):
            other = self._scalar_like(other)
        return _call(ft, other._h, self._h)
    return method


def _leaky_relu(self, neg_slope=0.01):
    return _call(lib.pg_tensor_leaky_relu, self._h, float(neg_slope))


def _elu(self, alpha=1.0):
    return _call(lib.pg_tensor_elu, self._h, float(alpha))


def _softplus(self, beta=1.0):
    return _call(lib.pg_tensor_softplus, self._h, float(beta))


def _reduce(name):
    f = getattr(lib, "pg_tensor_" + name)

    def method(self, axis=None, keepdim=False):
        arr, n = _axes(axis)
        return _call(f, self._h, arr, n, int(bool(keepdim)))
    method.__name__ = name
    return method


class Tensor:
    """A lazy n-d array on a device; operations build a graph that runs on realize()."""

    __slots__ = ("_h", "_shape", "_host", "__weakref__")
    training = False

    class train:
        """`with Tensor.train():` sets Tensor.training inside the block (mode=False clears
        it); it is restored afterwards."""

        def __init__(self, mode=True):
            self.mode = mode

        def __enter__(self):
            self.prev, Tensor.training = Tensor.training, self.mode
            return self

        def __exit__(self, *exc):
            Tensor.training = self.prev

    # ---- construction -----------------------------------------------------------------------

    def __init__(self, data, device=None, dtype=None, requires_grad=None):
        if isinstance(data, c_void_p):
            self._h, self._shape = data, None
            return
        self._shape = None
        dev = _dev(device)
        if isinstance(data, Tensor):
            t = data.to(device) if device is not None else data.clone()
            if dtype is not None:
                t = t.cast(dtype)
            self._h, t._h = t._h, c_void_p()
        elif _is_scalar(data) and not isinstance(data, (np.ndarray, np.generic)):
            if dtype is None:
                dtype = ("bool" if isinstance(data, (bool, np.bool_)) else
                         _int_dtype(data) if isinstance(data, numbers.Integral) else "float32")
            self._h = _scalar_handle(data, _dtype_code(dtype), dev)
        else:
            if isinstance(data, (list, tuple)) and data and all(isinstance(x, Tensor)
                                                                 for x in data):
                t = Tensor.stack(*data)
                self._h, t._h = t._h, c_void_p()
            else:
                self._h, self._host = _from_numpy(data, dtype, dev)
        if requires_grad:
            self.requires_grad = True

    def _scalar_like(self, v):
        """A 0-d tensor for scalar `v` in the dtype `self op v` promotes to (a bool keeps self's
        dtype, an int too except with a bool tensor, where it gives int32, and a float turns an
        int or bool tensor into float32)."""
        name = self.dtype
        is_bool = isinstance(v, (bool, np.bool_))
        if not is_bool and not isinstance(v, numbers.Integral) and name not in _FLOATS:
            name = "float32"
        elif not is_bool and name == "bool":
            name = _int_dtype(v)
        return _wrap(_scalar_handle(v, DTYPE_CODES[name], self._device_bytes()))

    def _operand(self, x, dtype=None):
        """`x` as an operand of this tensor: itself when it is a Tensor, else host data (a
        list, an array) as a tensor on this tensor's device, as a scalar operand follows it."""
        if isinstance(x, Tensor):
            return x
        return Tensor(x, device=self._device_bytes().decode(), dtype=dtype)

    # ---- lifetime ---------------------------------------------------------------------------

    def __del__(self):
        h = getattr(self, "_h", None)
        if h and lib is not None:
            try:
                lib.pg_tensor_free(h)
            except Exception:  # interpreter shutdown
                pass

    # ---- properties -------------------------------------------------------------------------

    @property
    def shape(self):
        s = self._shape
        if s is None:
            dims = (c_int64 * 16)()
            n = c_size_t()
            check(lib.pg_tensor_shape(self._h, dims, 16, byref(n)))
            if n.value > 16:
                dims = (c_int64 * n.value)()
                check(lib.pg_tensor_shape(self._h, dims, n.value, byref(n)))
            s = self._shape = tuple(dims[: n.value])
        return s

    @property
    def ndim(self):
        return len(self.shape)

    @property
    def dtype(self):
        out = c_int()
        check(lib.pg_tensor_dtype(self._h, byref(out)))
        return DTYPE_NAMES[out.value]

    def _device_bytes(self):
        out = c_char_p()
        check(lib.pg_tensor_device(self._h, byref(out)))
        return out.value

    @property
    def device(self):
        """'CPU', 'CUDA', or with an index when it is not 0 ('CUDA:1')."""
        return device_display(self._device_bytes().decode())

    T = property(_unary("T"))

    @property
    def requires_grad(self):
        out = c_int()
        check(lib.pg_tensor_requires_grad(self._h, byref(out)))
        return bool(out.value)

    @requires_grad.setter
    def requires_grad(self, on):
        check(lib.pg_tensor_set_requires_grad(self._h, int(bool(on))))

    def requires_grad_(self, on=True):
        self.requires_grad = on
        return self

    @property
    def grad(self):
        out = c_void_p()
        check(lib.pg_tensor_grad(self._h, byref(out)))
        return _wrap(out) if out.value else None

    @grad.setter
    def grad(self, g):
        if g is not None:
            g = self._operand(g)
        check(lib.pg_tensor_set_grad(self._h, None if g is None else g._h))

    def numel(self):
        return math.prod(self.shape)

    def size(self, dim=None):
        if dim is None:
            return self.shape
        return self.shape[dim]

    def element_size(self):
        out = c_int64()
        check(lib.pg_tensor_element_size(self._h, byref(out)))
        return out.value

    @property
    def nbytes(self):
        return self.numel() * self.element_size()

    def is_realized(self):
        out = c_int()
        check(lib.pg_tensor_is_realized(self._h, byref(out)))
        return bool(out.value)

    def __len__(self):
        if not self.shape:
            raise TypeError("len() of a 0-d tensor")
        return self.shape[0]

    def __bool__(self):
        if self.numel() != 1:
            raise ValueError(f"the truth value of a tensor of shape {self.shape} is ambiguous")
        return bool(self.item())

    def __float__(self):
        return float(self.item())

    def __int__(self):
        return int(self.item())

    def __repr__(self):
        return f"<Tensor shape={self.shape} dtype={self.dtype} device={self.device}>"

    __hash__ = object.__hash__

    # ---- realisation and conversion ---------------------------------------------------------

    def realize(self, *others):
        """Runs the pending graph (of self and `others`, in one schedule); returns self."""
        if others:
            Tensor.realize_all(self, *others)
        else:
            check(lib.pg_tensor_realize(self._h))
        return self

    @staticmethod
    def realize_all(*tensors):
        if len(tensors) == 1 and isinstance(tensors[0], (list, tuple)):
            tensors = tuple(tensors[0])
        arr = (c_void_p * max(len(tensors), 1))(*[t._h for t in tensors])
        check(lib.pg_tensor_realize_all(arr, len(tensors)))

    def _readable(self):
        """The handle to copy from: self when realised, else a detached handle, so that
        reading values does not replace self's graph (gradients taken later still flow
        through it; the values are computed again if the graph is realised again)."""
        return self if self.is_realized() else self.detach()

    def numpy(self):
        t, name = self._readable(), self.dtype
        if name == "bfloat16":
            t, name = t.cast("float32"), "float32"
        out = np.empty(self.shape, dtype=_NP_OF[name])
        check(lib.pg_tensor_to_host(t._h, out.ctypes.data_as(c_void_p), out.nbytes))
        return out

    @property
    def _data(self):
        """The numpy array this tensor's memory is, as in the seed's compile_step example
        (`x._data[:] = batch` writes the next input in place). A tensor built from an aligned
        ndarray already is that array; any other cpu tensor is realised and moved into a new
        aligned array first (from then on it is that array). A device whose memory the host
        cannot view (no PG_CAP_HOST_MEMORY) has none."""
        host = getattr(self, "_host", None)
        if host is None:
            host = self._bind_host()
        return host

    def _bind_host(self):
        name = self.dtype
        if name == "bfloat16" or name not in _NP_OF:
            raise TypeError(f"_data: numpy has no {name} array")
        if not Device.host_memory(self._device_bytes().decode()) or self.numel() == 0:
            raise ValueError(f"_data: a tensor on {self.device} with {self.numel()} elements has "
                             "no host memory to view")
        arr = _aligned_empty(self.shape, _NP_OF[name])
        arr[...] = self.numpy()
        h, host = _from_numpy(arr, None, self._device_bytes())
        if host is None:
            lib.pg_tensor_free(h)
            raise ValueError(f"_data: the {self.device} device does not use host memory in place")
        grad = self.requires_grad
        old, self._h, self._host = self._h, h, host
        lib.pg_tensor_free(old)
        if grad:
            self.requires_grad = True
        return host

    def item(self):
        t = self._readable()  # kept alive across the call
        name = self.dtype
        if name not in _FLOATS and name != "bool":
            iout = c_int64()
            check(lib.pg_tensor_item_int64(t._h, byref(iout)))
            return iout.value % 2**64 if name == "uint64" else iout.value
        out = c_double()
        check(lib.pg_tensor_item(t._h, byref(out)))
        if name == "bool":
            return bool(out.value)
        return out.value

    def tolist(self):
        return self.numpy().tolist()

    def __array__(self, dtype=None):
        a = self.numpy()
        return a if dtype is None else a.astype(dtype)

    def to(self, device):
        try:
            return _call(lib.pg_tensor_to, self._h, _dev(device))
        except _ffi.PolygradValueError as e:
            if not str(device).lower().startswith("cuda"):
                raise
            from .device import Device
            raise _ffi.PolygradDeviceError(
                f"{e}; no CUDA device is available (Device.cuda_available() is False). Plugin "
                f"load report:\n{Device.report()}") from None

    def cpu(self):
        return self.to("cpu")

    def cuda(self):
        return self.to("cuda")

    detach = _unary("detach")
    clone = _unary("clone")
    contiguous = _unary("contiguous")

    def assign(self, value):
        """Writes `value` into this tensor's buffer (lazily); returns self. On a view of a
        realised tensor (a slice, a transpose: `t[2:4].assign(v)`) the write goes through the
        view into that tensor's buffer, the other elements untouched, and runs at once."""
        value = self._operand(value, self.dtype)
        check(lib.pg_tensor_assign(self._h, value._h))
        return self

    def cast(self, dtype):
        return _call(lib.pg_tensor_cast, self._h, _dtype_code(dtype))

    def float(self):
        return self.cast("float32")

    def double(self):
        return self.cast("float64")

    def half(self):
        return self.cast("float16")

    def int(self):
        return self.cast("int32")

    def long(self):
        return self.cast("int64")

    def bool(self):
        return self.cast("bool")

    # ---- autograd ---------------------------------------------------------------------------

    def backward(self, gradient=None):
        """Adds d(self)/d(leaf) to the grad of every requires_grad leaf; returns self."""
        if gradient is not None:
            gradient = self._operand(gradient)
        check(lib.pg_tensor_backward(self._h, None if gradient is None else gradient._h))
        _pending.add_root(self)  # realised with the gradients at the next optimizer step
        return self

    @staticmethod
    def _take_pending_roots():
        return _pending.take()

    def gradient(self, *targets, gradient=None):
        """d(self)/d(targets) as new tensors, without touching any grad."""
        if gradient is not None:
            gradient = self._operand(gradient)
        n = len(targets)
        arr = (c_void_p * n)(*[t._h for t in targets])
        outs = (c_void_p * n)()
        check(lib.pg_tensor_gradient(self._h, arr, n,
                                     None if gradient is None else gradient._h, outs))
        return [_wrap(c_void_p(h)) for h in outs]

    # ---- arithmetic -------------------------------------------------------------------------

    add = _binary("add")
    sub = _binary("sub")
    mul = _binary("mul")
    div = _binary("div")
    pow = _binary("pow")
    maximum = _binary("maximum")
    minimum = _binary("minimum")
    floordiv = floor_divide = __floordiv__ = _binary("floordiv")
    mod = remainder = __mod__ = _binary("mod")
    __rfloordiv__ = _reflected("floordiv")
    __rmod__ = _reflected("mod")
    __add__ = add
    __sub__ = sub
    __mul__ = mul
    __truediv__ = div
    __pow__ = pow
    __radd__ = add
    __rmul__ = mul
    __rsub__ = _reflected("sub")
    __rtruediv__ = _reflected("div")
    neg = _unary("neg")
    __neg__ = neg
    __abs__ = _unary("abs")

    def __rpow__(self, base):
        if isinstance(base, Tensor):
            return base.pow(self)
        return _call(lib.pg_tensor_pow_base, _scalar(base), self._h)

    def __iadd__(self, o):
        return self.add(o)

    def __isub__(self, o):
        return self.sub(o)

    def __imul__(self, o):
        return self.mul(o)

    def __itruediv__(self, o):
        return self.div(o)

    lt = _binary("lt", True)
    le = _binary("le", True)
    gt = _binary("gt", True)
    ge = _binary("ge", True)
    eq = _binary("eq", True)
    ne = _binary("ne", True)
    __lt__, __le__, __gt__, __ge__, __eq__, __ne__ = lt, le, gt, ge, eq, ne

    def _bitwise(name):
        f = getattr(lib, "pg_tensor_" + name)

        def method(self, other):
            if not isinstance(other, Tensor):
                other = self._scalar_like(other)
            return _call(f, self._h, other._h)
        return method

    bitwise_and = _bitwise("bitwise_and")
    bitwise_or = _bitwise("bitwise_or")
    bitwise_xor = _bitwise("bitwise_xor")
    __and__, __or__, __xor__ = bitwise_and, bitwise_or, bitwise_xor
    __rand__, __ror__, __rxor__ = bitwise_and, bitwise_or, bitwise_xor
    logical_not = _unary("logical_not")

    def __invert__(self):
        """~x: logical not of a bool tensor, bitwise not of an integer one (torch's)."""
        name = self.dtype
        if name == "bool":
            return self.logical_not()
        if name in _FLOATS:
            raise TypeError(f"~ needs an integer or bool tensor, not {name}")
        ones = (1 << (8 * np.dtype(_NP_OF[name]).itemsize)) - 1 if name.startswith("uint") else -1
        return self.bitwise_xor(self.full_like(ones))
    del _bitwise

    # ---- element-wise math and activations -----------------------------------------------

    for _n in ("exp log exp2 log2 sqrt rsqrt square abs sign reciprocal sin cos tan ceil floor "
               "round trunc isnan isinf isfinite log1p expm1 log10 sinh cosh asinh acosh atanh "
               "atan asin acos relu relu6 sigmoid tanh gelu quick_gelu silu mish swish hardswish "
               "hardsigmoid logsigmoid softsign selu").split():
        locals()[_n] = _unary(_n)
    del _n
    leaky_relu = _leaky_relu
    elu = _elu
    softplus = _softplus

    def hardtanh(self, min_val=-1.0, max_val=1.0):
        return _call(lib.pg_tensor_hardtanh, self._h, float(min_val), float(max_val))

    def clamp(self, min_=None, max_=None, *, min=None, max=None):
        """Clamps into [lo, hi]; with a tensor bound it is maximum then minimum (composition),
        as in torch, where hi wins when lo > hi."""
        lo = min_ if min_ is not None else min
        hi = max_ if max_ is not None else max
        if isinstance(lo, Tensor) or isinstance(hi, Tensor):
            out = self if lo is None else self.maximum(lo)
            return out if hi is None else out.minimum(hi)
        if "pg_tensor_clamp_scalar" not in MISSING:
            # int bounds keep an int tensor's dtype, float ones (0.0 too) make it float32
            lo_c = None if lo is None else byref(_scalar(lo))
            hi_c = None if hi is None else byref(_scalar(hi))
            return _call(lib.pg_tensor_clamp_scalar, self._h, lo_c, hi_c)
        lo_c = None if lo is None else byref(c_double(float(lo)))
        hi_c = None if hi is None else byref(c_double(float(hi)))
        return _call(lib.pg_tensor_clamp, self._h, lo_c, hi_c)

    clip = clamp

    def where(self, x, y):
        """self ? x : y. A mix of one scalar and one tensor branch makes the scalar a 0-d
        tensor (the C API has entries for two tensors or two scalars only)."""
        xt, yt = isinstance(x, Tensor), isinstance(y, Tensor)
        bools = (bool, np.bool_)
        if isinstance(x, bools) and isinstance(y, bools):
            # (the C API's scalars are ints or floats: two bools go as 0-d bool tensors, so
            # the result stays bool, as in torch and tinygrad)
            dev = self._device_bytes()
            x, y = (_wrap(_scalar_handle(v, DTYPE_CODES["bool"], dev)) for v in (x, y))
            return _call(lib.pg_tensor_where, self._h, x._h, y._h)
        if not xt and not yt and _is_scalar(x) and _is_scalar(y):
            return _call(lib.pg_tensor_where_scalar, self._h, _scalar(x), _scalar(y))
        if not xt:
            x = y._scalar_like(x) if yt and _is_scalar(x) else (y if yt else self)._operand(x)
        if not yt:
            y = x._scalar_like(y) if _is_scalar(y) else x._operand(y)
        return _call(lib.pg_tensor_where, self._h, x._h, y._h)

    # ---- reductions ---------------------------------------------------------------------------

    sum = _reduce("sum")
    max = _reduce("max")
    min = _reduce("min")
    prod = _reduce("prod")
    mean = _reduce("mean")
    any = _reduce("any")
    all = _reduce("all")

    def var(self, axis=None, keepdim=False, correction=1):
        arr, n = _axes(axis)
        return _call(lib.pg_tensor_var, self._h, arr, n, int(bool(keepdim)), float(correction))

    def std(self, axis=None, keepdim=False, correction=1):
        arr, n = _axes(axis)
        return _call(lib.pg_tensor_std, self._h, arr, n, int(bool(keepdim)), float(correction))

    def argmax(self, axis=None, keepdim=False):
        ax = None if axis is None else byref(c_int64(_ffi.int64_arg(axis, "axis")))
        return _call(lib.pg_tensor_argmax, self._h, ax, int(bool(keepdim)))

    def argmin(self, axis=None, keepdim=False):
        ax = None if axis is None else byref(c_int64(_ffi.int64_arg(axis, "axis")))
        return _call(lib.pg_tensor_argmin, self._h, ax, int(bool(keepdim)))

    def logsumexp(self, axis=-1, keepdim=False):
        return _call(lib.pg_tensor_logsumexp, self._h, int(axis), int(bool(keepdim)))

    def softmax(self, axis=-1):
        return _call(lib.pg_tensor_softmax, self._h, int(axis))

    def log_softmax(self, axis=-1):
        return _call(lib.pg_tensor_log_softmax, self._h, int(axis))

    def cumsum(self, axis=0):
        return _call(lib.pg_tensor_cumsum, self._h, int(axis))


from . import _construction  # noqa: E402,F401  (adds the constructors and the *_like methods)
from . import _movement  # noqa: E402,F401  (adds movement, nn and indexing methods)
