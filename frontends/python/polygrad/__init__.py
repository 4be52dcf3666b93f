"""polygrad: a lazy tensor library over libpolygrad's C API (ctypes; no compiler logic here)."""
from ._ffi import (LIB_PATH, PolygradCommError, PolygradDeviceError, PolygradError,
                   PolygradIndexError, PolygradInternalError, PolygradValueError)
from . import dtypes
from .device import Device
from .tensor import Tensor
from .capture import Captured, TinyJit, capture
from .diagnostics import compiled_kernel_count, panel_cache_stats, set_panel_cache_limit
from .symbolic import BoundVariable, SymbolicSize, Variable

__version__ = "0.1.0"
__all__ = ["Tensor", "Device", "Variable", "BoundVariable", "SymbolicSize", "capture", "Captured",
           "TinyJit", "compiled_kernel_count", "dtypes",
           "panel_cache_stats", "set_panel_cache_limit",
           "PolygradError", "PolygradValueError", "PolygradIndexError", "PolygradDeviceError",
           "PolygradInternalError", "PolygradCommError",
           "LIB_PATH"]
