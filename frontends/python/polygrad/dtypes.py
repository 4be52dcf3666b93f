"""dtype names: the core's dtypes are plain strings ('float32', 'int32', ...). These constants
and name_of() accept strings, numpy dtypes and numpy scalar types alike."""
import numpy as np

bool = "bool"  # noqa: A001 - mirrors the dtype's name
int8, int16, int32, int64 = "int8", "int16", "int32", "int64"
uint8, uint16, uint32, uint64 = "uint8", "uint16", "uint32", "uint64"
float16, bfloat16, float32, float64 = "float16", "bfloat16", "float32", "float64"
half, float, double = float16, float32, float64  # noqa: A001
int, long = int32, int64  # noqa: A001
default_float, default_int = float32, int32

_ALIASES = {"half": "float16", "float": "float32", "double": "float64", "int": "int32",
            "long": "int64", "bool_": "bool"}


def name_of(dtype):
    """The core's name for `dtype` (a string, a numpy dtype or a Python/numpy type)."""
    if isinstance(dtype, str):
        return _ALIASES.get(dtype, dtype)
    import builtins
    if dtype is builtins.float:
        return "float32"
    if dtype is builtins.int:
        return "int32"
    if dtype is builtins.bool:
        return "bool"
    return np.dtype(dtype).name
