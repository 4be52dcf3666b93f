"""Tensor constructors (zeros, full, rand, arange, eye, ...) and the *_like methods: one C call
each, attached to Tensor at import (as _movement's methods are)."""
import numbers

from . import _ffi
from . import dtypes as _dt
from ._ffi import DTYPE_CODES, check, int64s, lib
from ._host_data import fits_int32
from .tensor import (_FLOATS, Tensor, _call, _dev, _dtype_code, _int64_bits, _int_dtype,
                     _shape_args)


def _with_grad(t, requires_grad):
    if requires_grad:
        t.requires_grad = True
    return t


def _make(fname, shape, dtype, device, requires_grad, default="float32"):
    dims, n = int64s(_shape_args(shape))
    t = _call(getattr(lib, fname), dims, n, _dtype_code(dtype, default), _dev(device))
    return _with_grad(t, requires_grad)


def zeros(*shape, dtype=None, device=None, requires_grad=None):
    return _make("pg_tensor_zeros", shape, dtype, device, requires_grad)


def ones(*shape, dtype=None, device=None, requires_grad=None):
    return _make("pg_tensor_ones", shape, dtype, device, requires_grad)


def empty(*shape, dtype=None, device=None, requires_grad=None):
    return _make("pg_tensor_empty", shape, dtype, device, requires_grad)


def rand(*shape, dtype=None, device=None, requires_grad=None):
    return _make("pg_tensor_rand", shape, dtype, device, requires_grad)


def randn(*shape, dtype=None, device=None, requires_grad=None):
    return _make("pg_tensor_randn", shape, dtype, device, requires_grad)


def full(shape, fill_value, dtype=None, device=None, requires_grad=None):
    if isinstance(shape, numbers.Integral):
        shape = (shape,)
    if dtype is None:
        dtype = ("bool" if isinstance(fill_value, bool) else
                 _int_dtype(fill_value) if isinstance(fill_value, numbers.Integral)
                 else "float32")
    dims, n = int64s(shape)
    if (isinstance(fill_value, numbers.Integral) and not isinstance(fill_value, bool)
            and _dt.name_of(dtype) not in _FLOATS + ("bool",)):
        t = _call(lib.pg_tensor_full_int, dims, n, _int64_bits(fill_value), _dtype_code(dtype),
                  _dev(device))
    else:
        t = _call(lib.pg_tensor_full, dims, n, float(fill_value), _dtype_code(dtype),
                  _dev(device))
    return _with_grad(t, requires_grad)


def randint(low, high=None, shape=(), dtype="int32", device=None):
    """Uniform integers in [low, high); randint(high, shape=...) starts at 0."""
    if high is None:
        low, high = 0, low
    if isinstance(shape, numbers.Integral):
        shape = (shape,)
    dims, n = int64s(shape)
    return _call(lib.pg_tensor_randint, int(low), int(high), dims, n, _dtype_code(dtype),
                 _dev(device))


def uniform(*shape, low=0.0, high=1.0, dtype=None, device=None, requires_grad=None):
    """Uniform in [low, high): rand scaled (composition of rand, mul, add)."""
    return _with_grad(rand(*shape, dtype=dtype, device=device) * (high - low) + low,
                      requires_grad)


def arange(stop, start=None, step=1, *, dtype=None, device=None):
    """0..stop-1, or start..stop-1 by step. Two positional numbers a, b are read as torch's
    arange(start=a, stop=b) when that is non-empty, otherwise as arange(stop=a, start=b)."""
    if start is None:
        lo, hi = 0, stop
    elif (start - stop) * step > 0:  # arange(a, b): torch order gives values
        lo, hi = stop, start
    else:
        lo, hi = start, stop
    code = _dtype_code(dtype, "void") if dtype is not None else 0
    ints = all(isinstance(v, numbers.Integral) for v in (lo, hi, step))
    if ints and dtype is None and not all(fits_int32(v) for v in (lo, hi, step)):
        code = DTYPE_CODES["int64"]
    if ints and any(abs(int(v)) > 2**53 for v in (lo, hi, step)) and (
            dtype is None or _dt.name_of(dtype) not in _FLOATS + ("bool",)):
        code = code or DTYPE_CODES["int64"]  # (exactly: beyond 2**53 a double is not)
        return _call(lib.pg_tensor_arange_int, int(lo), int(hi), int(step), code, _dev(device))
    if dtype is None and not all(float(v).is_integer() for v in (lo, hi, step)):
        code = DTYPE_CODES["float32"]
    return _call(lib.pg_tensor_arange, float(lo), float(hi), float(step), code, _dev(device))


def linspace(start, stop, steps, dtype=None, device=None):
    return _call(lib.pg_tensor_linspace, float(start), float(stop), int(steps),
                 _dtype_code(dtype), _dev(device))


def eye(n, m=None, dtype=None, device=None):
    if m is not None and int(m) < 0:  # (the C API reads a negative m as m = n)
        raise _ffi.PolygradValueError(f"eye: negative size m={m}")
    return _call(lib.pg_tensor_eye, int(n), -1 if m is None else int(m), _dtype_code(dtype),
                 _dev(device))


def manual_seed(seed=0):
    check(lib.pg_manual_seed(int(seed)))


def full_like(self, fill_value, dtype=None, device=None, requires_grad=None):
    """A tensor of self's shape filled with fill_value; dtype and device default to self's
    (tinygrad's and torch's keywords)."""
    if (dtype is not None or device is not None
            or isinstance(fill_value, numbers.Integral) and abs(int(fill_value)) > 2**53):
        return full(self.shape, fill_value, dtype=dtype or self.dtype,
                    device=device or self.device, requires_grad=requires_grad)
    return _with_grad(_call(lib.pg_tensor_full_like, self._h, float(fill_value)), requires_grad)


def zeros_like(self, dtype=None, device=None, requires_grad=None):
    return full_like(self, 0, dtype, device, requires_grad)


def ones_like(self, dtype=None, device=None, requires_grad=None):
    return full_like(self, 1, dtype, device, requires_grad)


def rand_like(self, dtype=None, device=None, requires_grad=None):
    return rand(*self.shape, dtype=dtype or self.dtype, device=device or self.device,
                requires_grad=requires_grad)


def randn_like(self, dtype=None, device=None, requires_grad=None):
    return randn(*self.shape, dtype=dtype or self.dtype, device=device or self.device,
                 requires_grad=requires_grad)


for _f in (zeros, ones, empty, rand, randn, full, randint, uniform, arange, linspace, eye,
           manual_seed):
    setattr(Tensor, _f.__name__, staticmethod(_f))
for _f in (full_like, zeros_like, ones_like, rand_like, randn_like):
    setattr(Tensor, _f.__name__, _f)
