"""Capture and replay (the C API's pg_capture_*; polygrad/capture.hpp in the core).

capture(fn, *args) calls fn once with every realisation recorded instead of run: graphs are
built, scheduled and compiled, no kernel runs, and reading values (numpy, item) inside fn is an
error. Captured.run() then launches the recorded kernels over the same memory as often as
wanted, with no graph building or scheduling: inputs whose memory is written in place
(Tensor._data, arrays shared with Tensor(ndarray), assign) are read anew, random tensors drawn
inside fn are drawn again, and the rest of fn (Python control flow, constants such as a learning
rate) is fixed at capture time.
"""
from ctypes import byref, c_size_t, c_void_p

from ._ffi import check, lib
from .tensor import Tensor


def _tensors_in(obj):
    if isinstance(obj, Tensor):
        return [obj]
    if isinstance(obj, (list, tuple)):
        return [t for o in obj for t in _tensors_in(o)]
    if isinstance(obj, dict):
        return [t for o in obj.values() for t in _tensors_in(o)]
    return []


class Captured:
    """A recording: run() launches it; `result` is what the captured function returned (its
    tensors hold the values of the latest run)."""

    def __init__(self, handle, result):
        self._h, self.result = handle, result

    def run(self):
        check(lib.pg_capture_run(self._h))
        return self.result

    @property
    def kernel_count(self):
        out = c_size_t()
        check(lib.pg_capture_kernel_count(self._h, byref(out)))
        return out.value

    def __del__(self):
        h = getattr(self, "_h", None)
        if h and lib is not None:
            try:
                lib.pg_capture_free(h)
            except Exception:  # interpreter shutdown
                pass


def capture(fn, *args, **kwargs):
    """Records fn(*args, **kwargs) (see the module docstring). The tensors fn returns, and the
    losses backward() was called on, are realised inside the recording."""
    check(lib.pg_capture_begin())
    try:
        result = fn(*args, **kwargs)
        pending = Tensor._take_pending_roots() + _tensors_in(result)
        if pending:
            Tensor.realize_all(pending)
    except BaseException:
        h = c_void_p()
        if lib.pg_capture_end(byref(h)) == 0:
            lib.pg_capture_free(h)
        raise
    h = c_void_p()
    check(lib.pg_capture_end(byref(h)))
    return Captured(h, result)
