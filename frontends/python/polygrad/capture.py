"""Capture and replay (the C API's pg_capture_*; polygrad/capture.hpp in the core).

capture(fn, *args) calls fn once with every realisation recorded instead of run: graphs are
built, scheduled and compiled, no kernel runs, and reading values (numpy, item) inside fn is an
error. Captured.run() then launches the recorded kernels over the same memory as often as
wanted, with no graph building or scheduling: inputs whose memory is written in place
(Tensor._data, arrays shared with Tensor(ndarray), assign) are read anew, random tensors drawn
inside fn are drawn again, and the rest of fn (Python control flow, constants such as a learning
rate) is fixed at capture time.
"""
import functools
from ctypes import byref, c_int, c_size_t, c_void_p

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


def _swap(obj, by_id):
    if isinstance(obj, Tensor):
        return by_id.get(id(obj), obj)
    if isinstance(obj, (list, tuple)):
        return type(obj)(_swap(o, by_id) for o in obj)
    if isinstance(obj, dict):
        return {k: _swap(v, by_id) for k, v in obj.items()}
    return obj


class Captured:
    """A recording: run() launches it; `result` is what the captured function returned (its
    tensors hold the values of the latest run)."""

    def __init__(self, handle, result):
        self._h, self.result = handle, result

    def run(self, inputs=None, replacements=None):
        """Replays; with `replacements[i]` read in place of `inputs[i]` (a tensor the captured
        function read; same shape, dtype and device), without a copy."""
        if inputs is None and replacements is None:
            check(lib.pg_capture_run(self._h))
            return self.result
        inputs, replacements = list(inputs or []), list(replacements or [])
        n = len(inputs)
        if len(replacements) != n:
            raise ValueError(f"Captured.run: {n} inputs but {len(replacements)} replacements")
        ins = (c_void_p * max(n, 1))(*[t._h for t in inputs])
        reps = (c_void_p * max(n, 1))(*[t._h for t in replacements])
        check(lib.pg_capture_run_with(self._h, ins, reps, n))
        # A returned input (fn(x) returning x itself) is the tensor read in its place this run.
        return _swap(self.result, {id(a): b for a, b in zip(inputs, replacements)})

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


def is_capturing():
    """Whether this thread is recording a capture (tensor values cannot be read then)."""
    out = c_int()
    check(lib.pg_capture_active(byref(out)))
    return out.value == 1


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


class TinyJit:
    """tinygrad's TinyJit over capture. The first call with given input shapes runs `fn`
    eagerly; the second captures it and runs the capture; later calls run the capture with
    their tensor arguments read in place of the captured ones (no copy) and return the same
    result tensors, holding the new values. Tensor arguments that require grad (parameters)
    and other arguments are fixed at capture: a different one, or other shapes or dtypes of
    the inputs, is a new entry with its own capture."""

    def __init__(self, fn):
        self.fn = fn
        self._eager = set()
        self._captured = {}  # key -> (Captured, the input tensors it read)
        functools.update_wrapper(self, fn)

    def reset(self):
        self._eager.clear()
        self._captured.clear()

    @staticmethod
    def _split(args, kwargs):
        flat = list(args) + [kwargs[k] for k in sorted(kwargs)]
        inputs, key = [], [tuple(sorted(kwargs))]
        for a in flat:
            if isinstance(a, Tensor) and not a.requires_grad:
                inputs.append(a)
                key.append((tuple(a.shape), a.dtype, a.device))
            elif isinstance(a, Tensor):
                key.append(("tensor", id(a)))
            else:
                try:
                    hash(a)
                    key.append(("fixed", a))
                except TypeError:
                    key.append(("object", id(a)))
        return inputs, tuple(key)

    def __call__(self, *args, **kwargs):
        inputs, key = self._split(args, kwargs)
        entry = self._captured.get(key)
        if entry is not None:
            captured, captured_inputs = entry
            return captured.run(captured_inputs, inputs)
        if key not in self._eager:
            self._eager.add(key)
            return self.fn(*args, **kwargs)
        if inputs:
            Tensor.realize_all(inputs)
        captured = capture(self.fn, *args, **kwargs)
        self._captured[key] = (captured, inputs)
        return captured.run()
