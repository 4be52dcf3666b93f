"""ctypes bindings of libpolygrad's C API (core/include/polygrad/polygrad.h).

Finds the library, declares every entry point's signature, and turns each failing status into
a Python exception carrying pg_last_error()'s message. Nothing here computes anything.
"""
import ctypes
import os
from ctypes import POINTER, Structure, byref, c_char_p, c_double, c_int, c_int64, c_size_t
from ctypes import c_uint32, c_uint64, c_void_p

_PKG_DIR = os.path.dirname(os.path.abspath(__file__))


class PolygradError(Exception):
    """Base of every error raised from a failing C API call."""


class PolygradValueError(PolygradError, ValueError):
    """PG_API_ERR_INVALID_ARGUMENT: a bad shape, axis, dtype, device name or handle."""


class PolygradIndexError(PolygradValueError, IndexError):
    """PG_API_ERR_INDEX: an index outside its axis (getitem, gather): an IndexError as numpy's
    and torch's (and a PolygradValueError, as every invalid argument is)."""


class PolygradDeviceError(PolygradError, RuntimeError):
    """PG_API_ERR_DEVICE: a device plugin failed (load, compile, launch, memory)."""


class PolygradInternalError(PolygradError, RuntimeError):
    """PG_API_ERR_INTERNAL: a bug in polygrad, or the host ran out of memory."""


class PolygradCommError(PolygradDeviceError):
    """PG_API_ERR_COMM: a collective failed for want of its peers (one died or left, or none
    answered within the timeout); the message names them, and the communicator is broken."""


_ERRORS = {1: PolygradValueError, 2: PolygradDeviceError, 3: PolygradInternalError,
           4: PolygradIndexError, 5: PolygradCommError}


def _candidates():
    env = os.environ.get("POLYGRAD_LIB")
    if env:
        return [env]
    found = []
    libdir = os.path.join(_PKG_DIR, "_lib")
    for name in ("libpolygrad.so", "libpolygrad.so.0.1"):
        found.append(os.path.join(libdir, name))
    # Development: POLYGRAD_BUILD_DIR, then the repo's build/release (the package sits in
    # <repo>/frontends/python/polygrad).
    build = os.environ.get("POLYGRAD_BUILD_DIR")
    if build:
        found.append(os.path.join(build, "lib", "libpolygrad.so"))
    d = _PKG_DIR
    for _ in range(6):
        d = os.path.dirname(d)
        if os.path.isfile(os.path.join(d, "CMakePresets.json")):
            found.append(os.path.join(d, "build", "release", "lib", "libpolygrad.so"))
            break
    return found


def _load():
    tried = []
    for path in _candidates():
        if not os.path.exists(path):
            tried.append(path + " (missing)")
            continue
        try:
            lib = ctypes.CDLL(path)
            lib.pg_tensor_add  # noqa: B018 - an older build without the C API is skipped
            return lib, path
        except (OSError, AttributeError) as e:
            tried.append(f"{path} ({e})")
    raise ImportError("polygrad: cannot load libpolygrad: tried " + "; ".join(tried) +
                      ". Set POLYGRAD_LIB to the library's path, or reinstall the package "
                      "after building the C++ core (cmake --build build/release).")


lib, LIB_PATH = _load()

T = c_void_p  # pg_tensor_t
PT = POINTER(c_void_p)
I64P = POINTER(c_int64)
DP = POINTER(c_double)
ST = c_int  # pg_api_status


class Scalar(Structure):
    """pg_scalar: a value, whether Python saw an int, and the int exactly."""
    _fields_ = [("value", c_double), ("is_int", c_int), ("int_value", c_int64)]


class Index(Structure):
    """pg_index: one entry of a Python index."""
    _fields_ = [("kind", c_int), ("value", c_int64), ("has_start", c_int), ("start", c_int64),
                ("has_stop", c_int), ("stop", c_int64), ("step", c_int64)]


# Dtypes in pg_dtype order (PG_DTYPES in sdk/include/polygrad/plugin.h).
DTYPE_NAMES = ["void", "bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32",
               "uint64", "float16", "bfloat16", "float32", "float64"]
DTYPE_CODES = {n: i for i, n in enumerate(DTYPE_NAMES)}

# The op lists of polygrad.h's X-macros.
UNARY_OPS = ("neg logical_not exp log exp2 log2 sqrt rsqrt square abs sign reciprocal sin cos "
             "tan ceil floor round trunc isnan isinf relu relu6 sigmoid tanh gelu quick_gelu "
             "silu mish swish hardswish hardsigmoid T detach clone contiguous isfinite log1p expm1 "
             "log10 sinh cosh asinh acosh atanh atan asin acos logsigmoid softsign selu").split()
LIKE_OPS = "zeros_like ones_like rand_like randn_like".split()
PARAM_OPS = "leaky_relu elu softplus celu".split()
BINARY_OPS = ("add sub mul div pow lt le gt ge eq ne maximum minimum floordiv mod bitwise_and "
              "bitwise_or bitwise_xor matmul dot logical_and logical_or outer").split()
SCALAR_OPS = "add sub mul div pow lt le gt ge eq ne maximum minimum floordiv mod".split()
FILL_OPS = "zeros ones empty rand randn".split()
REDUCE_OPS = "sum max min prod mean any all".split()
AXIS_OPS = "softmax log_softmax cumsum unsqueeze".split()
LIST_OPS = "reshape view expand permute flip repeat".split()

# void (*release)(void* context) of pg_tensor_from_host_memory.
RELEASE_FN = ctypes.CFUNCTYPE(None, c_void_p)

_SIGNATURES = {
    "pg_manual_seed": [c_uint64],
    "pg_compiled_kernel_count": [POINTER(c_size_t)],
    "pg_panel_cache_stats": [POINTER(c_size_t), POINTER(c_size_t), POINTER(c_size_t),
                             POINTER(c_uint64), POINTER(c_uint64)],
    "pg_set_panel_cache_limit": [c_uint64],
    "pg_tensor_from_host_memory": [c_void_p, c_int, I64P, c_size_t, c_char_p, RELEASE_FN, c_void_p,
                                   POINTER(c_int), PT],
    "pg_tensor_from_data": [c_void_p, c_int, I64P, c_size_t, c_char_p, PT],
    "pg_tensor_scalar": [c_double, c_int, c_char_p, PT],
    "pg_tensor_full": [I64P, c_size_t, c_double, c_int, c_char_p, PT],
    "pg_tensor_full_int": [I64P, c_size_t, c_int64, c_int, c_char_p, PT],
    "pg_tensor_randint": [c_int64, c_int64, I64P, c_size_t, c_int, c_char_p, PT],
    "pg_tensor_arange": [c_double, c_double, c_double, c_int, c_char_p, PT],
    "pg_tensor_arange_int": [c_int64, c_int64, c_int64, c_int, c_char_p, PT],
    "pg_tensor_linspace": [c_double, c_double, c_int64, c_int, c_char_p, PT],
    "pg_tensor_eye": [c_int64, c_int64, c_int, c_char_p, PT],
    "pg_tensor_full_like": [T, c_double, PT],
    "pg_tensor_shape": [T, I64P, c_size_t, POINTER(c_size_t)],
    "pg_tensor_ndim": [T, POINTER(c_size_t)],
    "pg_tensor_dtype": [T, POINTER(c_int)],
    "pg_tensor_device": [T, POINTER(c_char_p)],
    "pg_tensor_numel": [T, I64P],
    "pg_tensor_size": [T, c_int64, I64P],
    "pg_tensor_element_size": [T, I64P],
    "pg_tensor_is_realized": [T, POINTER(c_int)],
    "pg_tensor_realize": [T],
    "pg_tensor_realize_all": [PT, c_size_t],
    "pg_tensor_to_host": [T, c_void_p, c_size_t],
    "pg_tensor_item": [T, DP],
    "pg_tensor_item_int64": [T, I64P],
    "pg_tensor_to": [T, c_char_p, PT],
    "pg_tensor_assign": [T, T],
    "pg_tensor_cast": [T, c_int, PT],
    "pg_tensor_pow_base": [Scalar, T, PT],
    "pg_tensor_where": [T, T, T, PT],
    "pg_tensor_where_scalar": [T, Scalar, Scalar, PT],
    "pg_tensor_tril": [T, c_int64, PT],
    "pg_tensor_triu": [T, c_int64, PT],
    "pg_tensor_masked_fill": [T, T, Scalar, PT],
    "pg_tensor_one_hot": [T, c_int64, PT],
    "pg_tensor_lerp": [T, T, T, PT],
    "pg_tensor_roll": [T, I64P, c_size_t, I64P, c_size_t, PT],
    "pg_tensor_clamp": [T, DP, DP, PT],
    "pg_tensor_clamp_scalar": [T, POINTER(Scalar), POINTER(Scalar), PT],
    "pg_tensor_hardtanh": [T, c_double, c_double, PT],
    "pg_tensor_var": [T, I64P, c_size_t, c_int, c_double, PT],
    "pg_tensor_std": [T, I64P, c_size_t, c_int, c_double, PT],
    "pg_tensor_argmax": [T, I64P, c_int, PT],
    "pg_tensor_argmin": [T, I64P, c_int, PT],
    "pg_tensor_logsumexp": [T, c_int64, c_int, PT],
    "pg_tensor_transpose": [T, c_int64, c_int64, PT],
    "pg_tensor_squeeze": [T, I64P, PT],
    "pg_tensor_flatten": [T, c_int64, c_int64, PT],
    "pg_tensor_unflatten": [T, c_int64, I64P, c_size_t, PT],
    "pg_tensor_shrink": [T, I64P, c_size_t, PT],
    "pg_tensor_pad": [T, I64P, c_size_t, c_double, PT],
    "pg_tensor_pad_mode": [T, I64P, c_size_t, c_int, c_double, PT],
    "pg_variable_bind": [c_char_p, c_int64, c_int64, c_int64, PT],
    "pg_dim_affine": [c_void_p, c_int64, c_int64, PT],
    "pg_dim_add": [c_void_p, c_void_p, PT],
    "pg_tensor_reshape_sym": [T, I64P, PT, c_size_t, PT],
    "pg_tensor_expand_sym": [T, I64P, PT, c_size_t, PT],
    "pg_tensor_shrink_sym": [T, I64P, PT, c_size_t, PT],
    "pg_tensor_pad_sym": [T, I64P, PT, c_size_t, PT],
    "pg_tensor_getitem": [T, POINTER(Index), c_size_t, PT],
    "pg_tensor_gather": [T, c_int64, T, PT],
    "pg_tensor_cat": [PT, c_size_t, c_int64, PT],
    "pg_tensor_stack": [PT, c_size_t, c_int64, PT],
    "pg_tensor_split": [T, c_int64, c_int64, PT, c_size_t, POINTER(c_size_t)],
    "pg_tensor_split_sizes": [T, I64P, c_size_t, c_int64, PT, c_size_t, POINTER(c_size_t)],
    "pg_tensor_chunk": [T, c_int64, c_int64, PT, c_size_t, POINTER(c_size_t)],
    "pg_tensor_linear": [T, T, T, PT],
    "pg_tensor_layernorm": [T, I64P, c_size_t, c_double, PT],
    "pg_tensor_cross_entropy": [T, T, c_int64, c_double, c_int64, c_int, PT],
    "pg_tensor_binary_crossentropy": [T, T, c_int, PT],
    "pg_tensor_binary_crossentropy_logits": [T, T, T, c_int, PT],
    "pg_tensor_einsum": [c_char_p, PT, c_size_t, PT],
    "pg_tensor_rearrange": [T, c_char_p, POINTER(c_char_p), I64P, c_size_t, PT],
    "pg_tensor_conv2d": [T, T, T, c_int64, I64P, I64P, I64P, PT],
    "pg_tensor_max_pool2d": [T, I64P, I64P, I64P, I64P, c_int, PT],
    "pg_tensor_avg_pool2d": [T, I64P, I64P, I64P, c_int, c_int, PT],
    "pg_tensor_scaled_dot_product_attention": [T, T, T, T, c_int, PT],
    "pg_tensor_set_requires_grad": [T, c_int],
    "pg_tensor_requires_grad": [T, POINTER(c_int)],
    "pg_tensor_grad": [T, PT],
    "pg_tensor_set_grad": [T, T],
    "pg_tensor_backward": [T, T],
    "pg_tensor_gradient": [T, PT, c_size_t, T, PT],
    "pg_capture_begin": [],
    "pg_capture_active": [POINTER(c_int)],
    "pg_capture_end": [POINTER(c_void_p)],
    "pg_capture_run": [c_void_p],
    "pg_capture_run_with": [c_void_p, PT, PT, c_size_t],
    "pg_capture_kernel_count": [c_void_p, POINTER(c_size_t)],
    "pg_device_list": [POINTER(c_char_p)],
    "pg_device_default": [POINTER(c_char_p)],
    "pg_device_canonical": [c_char_p, POINTER(c_char_p)],
    "pg_device_flags": [c_char_p, POINTER(c_uint32)],
    "pg_device_dtypes": [c_char_p, POINTER(c_uint64)],
    "pg_plugin_load": [c_char_p, POINTER(c_char_p)],
    "pg_plugin_report": [c_int, POINTER(c_char_p)],
    "pg_comm_init": [c_char_p, c_int, c_int, c_char_p, c_double, POINTER(c_void_p)],
    "pg_comm_rank": [c_void_p, POINTER(c_int)],
    "pg_comm_world_size": [c_void_p, POINTER(c_int)],
    "pg_comm_transport": [c_void_p, POINTER(c_char_p)],
    "pg_comm_all_reduce": [c_void_p, T, c_int, PT],
    "pg_comm_all_reduce_inplace": [c_void_p, T, c_int],
    "pg_comm_broadcast": [c_void_p, T, c_int, PT],
    "pg_comm_all_gather": [c_void_p, T, PT],
    "pg_comm_reduce_scatter": [c_void_p, T, c_int, PT],
    "pg_comm_barrier": [c_void_p],
    "pg_all_reduce_devices": [PT, c_size_t, c_int, c_int, c_uint64, PT],
}
# safetensors checkpoints (pg_safetensors_t handles are c_void_p).
_SIGNATURES.update({
    "pg_safetensors_open": [c_char_p, POINTER(c_void_p)],
    "pg_safetensors_open_index": [c_char_p, POINTER(c_void_p)],
    "pg_safetensors_count": [c_void_p, POINTER(c_size_t)],
    "pg_safetensors_entry": [c_void_p, c_size_t, POINTER(c_char_p), POINTER(c_char_p),
                             POINTER(c_int), POINTER(c_size_t)],
    "pg_safetensors_shape": [c_void_p, c_size_t, I64P, c_size_t, POINTER(c_size_t)],
    "pg_safetensors_location": [c_void_p, c_size_t, POINTER(c_uint64), POINTER(c_uint64),
                                POINTER(c_char_p)],
    "pg_safetensors_find": [c_void_p, c_char_p, POINTER(c_size_t)],
    "pg_safetensors_tensor": [c_void_p, c_char_p, c_int, c_char_p, PT],
    "pg_safetensors_metadata_count": [c_void_p, POINTER(c_size_t)],
    "pg_safetensors_metadata": [c_void_p, c_size_t, POINTER(c_char_p), POINTER(c_char_p)],
    "pg_safetensors_save": [c_char_p, POINTER(c_char_p), PT, c_size_t, POINTER(c_char_p),
                            POINTER(c_char_p), c_size_t],
})
# GPT-2 and its tokenizer (pg_gpt2_t and pg_tokenizer_t handles are c_void_p).
_SIGNATURES.update({
    "pg_gpt2_load": [c_char_p, c_int64, c_int64, c_char_p, POINTER(c_void_p)],
    "pg_gpt2_load_bytes": [c_char_p, c_size_t, POINTER(c_char_p), POINTER(c_size_t), c_size_t,
                           c_int64, c_int64, c_char_p, POINTER(c_void_p)],
    "pg_gpt2_config": [c_void_p, I64P, c_size_t, POINTER(c_size_t)],
    "pg_gpt2_forward": [c_void_p, T, T, PT],
    "pg_gpt2_prefill": [c_void_p, T, PT],
    "pg_gpt2_step": [c_void_p, T, PT],
    "pg_gpt2_position": [c_void_p, I64P],
    "pg_tokenizer_load": [c_char_p, c_char_p, POINTER(c_void_p)],
    "pg_tokenizer_load_bytes": [c_char_p, c_size_t, c_char_p, c_size_t, POINTER(c_void_p)],
    "pg_tokenizer_encode": [c_void_p, c_char_p, c_size_t, I64P, c_size_t, POINTER(c_size_t)],
    "pg_tokenizer_decode": [c_void_p, I64P, c_size_t, c_char_p, c_size_t, POINTER(c_size_t)],
    "pg_tokenizer_vocab_size": [c_void_p, I64P],
})
for _n in FILL_OPS:
    _SIGNATURES["pg_tensor_" + _n] = [I64P, c_size_t, c_int, c_char_p, PT]
for _n in UNARY_OPS + LIKE_OPS:
    _SIGNATURES["pg_tensor_" + _n] = [T, PT]
for _n in PARAM_OPS:
    _SIGNATURES["pg_tensor_" + _n] = [T, c_double, PT]
for _n in BINARY_OPS:
    _SIGNATURES["pg_tensor_" + _n] = [T, T, PT]
for _n in SCALAR_OPS:
    _SIGNATURES["pg_tensor_" + _n + "_scalar"] = [T, Scalar, PT]
for _n in REDUCE_OPS:
    _SIGNATURES["pg_tensor_" + _n] = [T, I64P, c_size_t, c_int, PT]
for _n in AXIS_OPS:
    _SIGNATURES["pg_tensor_" + _n] = [T, c_int64, PT]
for _n in LIST_OPS:
    _SIGNATURES["pg_tensor_" + _n] = [T, I64P, c_size_t, PT]

INT64_MIN, INT64_MAX = -2**63, 2**63 - 1


def int64_arg(v, where="argument"):
    """`v` as an int for a C int64, or PolygradValueError when int64 cannot hold it (ctypes
    would silently keep its low 64 bits: an axis of 2**64 became axis 0)."""
    v = int(v)
    if not INT64_MIN <= v <= INT64_MAX:
        raise PolygradValueError(f"{where}: {v} does not fit in int64")
    return v


def _checked(name, f, positions):
    """`f` with its c_int64 arguments at `positions` range-checked before the call."""
    def call(*args):
        for i in positions:
            if isinstance(args[i], int):
                int64_arg(args[i], name)
        return f(*args)
    call.__name__ = name
    return call


MISSING = []
for _name, _args in _SIGNATURES.items():
    _fn = getattr(lib, _name, None)
    if _fn is None:
        MISSING.append(_name)
        continue
    _fn.argtypes = _args
    _fn.restype = ST
    _ints = [i for i, a in enumerate(_args) if a is c_int64]
    if _ints:
        setattr(lib, _name, _checked(_name, _fn, _ints))
lib.pg_last_error.argtypes = []
lib.pg_last_error.restype = c_char_p
lib.pg_tensor_free.argtypes = [T]
lib.pg_tensor_free.restype = None
if hasattr(lib, "pg_dim_free"):
    lib.pg_dim_free.argtypes = [c_void_p]
    lib.pg_dim_free.restype = None
if hasattr(lib, "pg_capture_free"):
    lib.pg_capture_free.argtypes = [c_void_p]
    lib.pg_capture_free.restype = None
if hasattr(lib, "pg_comm_free"):
    lib.pg_comm_free.argtypes = [c_void_p]
    lib.pg_comm_free.restype = None

if hasattr(lib, "pg_safetensors_free"):
    lib.pg_safetensors_free.argtypes = [c_void_p]
    lib.pg_safetensors_free.restype = None

for _name in ("pg_gpt2_free", "pg_tokenizer_free"):
    if hasattr(lib, _name):
        getattr(lib, _name).argtypes = [c_void_p]
        getattr(lib, _name).restype = None


def raise_error(status):
    """Raises the exception for a failing status with the core's message."""
    msg = lib.pg_last_error().decode("utf-8", "replace")
    raise _ERRORS.get(status, PolygradInternalError)(msg)


def check(status):
    if status:
        raise_error(status)


def fn(name):
    """The entry point `name`, or a function raising a clear error when this build lacks it."""
    f = getattr(lib, name, None)
    if f is None or name in MISSING:
        def missing(*_args):
            raise PolygradInternalError(f"{name}: not exported by {LIB_PATH}")
        return missing
    return f


def int64s(values):
    """A C int64 array of `values` (a fresh array, kept alive by the caller)."""
    values = [int64_arg(v, "an int in a shape, axis or size list") for v in values]
    return (c_int64 * max(len(values), 1))(*values), len(values)


__all__ = ["lib", "check", "fn", "RELEASE_FN", "raise_error", "int64s", "int64_arg", "Scalar",
           "Index", "PolygradError", "PolygradCommError", "PolygradIndexError",
           "PolygradValueError", "PolygradDeviceError", "PolygradInternalError", "byref",
           "c_void_p", "c_int64", "c_double", "c_int", "c_char_p", "c_size_t", "c_uint64",
           "POINTER", "DTYPE_NAMES", "DTYPE_CODES"]
