"""Process-wide counters of the runtime."""
from ._ffi import byref, c_size_t, check, lib


def compiled_kernel_count():
    """Kernels compiled so far in this process (each distinct kernel once per device). A new
    batch size that reuses the compiled kernels leaves it unchanged."""
    out = c_size_t()
    check(lib.pg_compiled_kernel_count(byref(out)))
    return out.value
