"""Process-wide counters of the runtime."""
from ._ffi import byref, c_size_t, c_uint64, check, lib


def compiled_kernel_count():
    """Kernels compiled so far in this process (each distinct kernel once per device). A new
    batch size that reuses the compiled kernels leaves it unchanged."""
    out = c_size_t()
    check(lib.pg_compiled_kernel_count(byref(out)))
    return out.value


def panel_cache_stats():
    """The panel cache: copies of weights in a matmul's panels kept until the weight is written.
    A dict: `copies_made` (so far in this process, one per weight version and layout),
    `reuses` (realizes that used a kept copy), `entries` and `bytes` (held now), `limit`."""
    made, reuses, entries = c_size_t(), c_size_t(), c_size_t()
    nbytes, limit = c_uint64(), c_uint64()
    check(lib.pg_panel_cache_stats(byref(made), byref(reuses), byref(entries), byref(nbytes),
                                   byref(limit)))
    return {"copies_made": made.value, "reuses": reuses.value, "entries": entries.value,
            "bytes": nbytes.value, "limit": limit.value}


def set_panel_cache_limit(nbytes):
    """Sets the most memory the panel cache may hold (an eighth of the
    machine's memory by default, at least 1 GiB; 0 keeps no copy)."""
    check(lib.pg_set_panel_cache_limit(int(nbytes)))
