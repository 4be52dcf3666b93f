"""all_reduce_devices: tensors on devices of different plugins (cpu and the GPU emulator) in
one process, reduced without any ccl plugin, against numpy: sum, max and mean, through the
naive reduction and the ring (two devices, and three with chunks of unequal length)."""
import numpy as np
import pytest

import polygrad.distributed as dist
from polygrad import Device, Tensor, PolygradValueError
from polygrad.distributed_devices import RING_BYTES


def _has_emu():
    return any(line.startswith("loaded") and "polygrad_gpu_emu.so" in line
               for line in Device.report().splitlines())


pytestmark = [pytest.mark.needs_cpu,
              pytest.mark.skipif(not _has_emu(), reason="the emu plugin is not loaded")]

REDUCE = {"sum": lambda a: a.sum(0), "max": lambda a: a.max(0), "mean": lambda a: a.mean(0)}


def _inputs(devices, shape, seed):
    rng = np.random.default_rng(seed)
    arrays = [rng.standard_normal(shape).astype(np.float32) for _ in devices]
    return arrays, [Tensor(a, device=d) for a, d in zip(arrays, devices)]


@pytest.mark.parametrize("op", ["sum", "max", "mean"])
@pytest.mark.parametrize("algorithm", ["naive", "ring"])
@pytest.mark.parametrize("devices,shape", [
    (["cpu", "emu"], (6, 5)),            # ring: 2 chunks of 15
    (["cpu", "emu", "cpu"], (7, 11)),    # ring: chunks of 25, 26, 26
    (["emu", "cpu"], (1000,)),
])
def test_reduction_matches_numpy(op, algorithm, devices, shape):
    arrays, tensors = _inputs(devices, shape, seed=len(devices) * 100 + shape[0])
    out = dist.all_reduce_devices(tensors, op=op, algorithm=algorithm)
    want = REDUCE[op](np.stack(arrays))
    assert len(out) == len(tensors)
    for t, src, a in zip(out, tensors, arrays):
        assert t.device == src.device
        assert tuple(t.shape) == shape
        np.testing.assert_allclose(t.numpy(), want, rtol=1e-6, atol=1e-6)
        np.testing.assert_array_equal(src.numpy(), a)  # the inputs are not written


def test_auto_takes_the_ring_from_ring_bytes_and_agrees_with_naive():
    # Integers in float32: every summation order gives the same bits, so ring == naive exactly.
    rng = np.random.default_rng(7)
    arrays = [rng.integers(-50, 50, (300,)).astype(np.float32) for _ in range(2)]
    tensors = [Tensor(arrays[0], device="cpu"), Tensor(arrays[1], device="emu")]
    want = arrays[0] + arrays[1]
    for kwargs in ({"ring_bytes": 1}, {"ring_bytes": 1 << 30}, {}):
        out = dist.all_reduce_devices(tensors, **kwargs)
        for t in out:
            np.testing.assert_array_equal(t.numpy(), want)


def test_ring_above_the_default_size():
    n = RING_BYTES // 4 + 3  # float32, just above: the ring
    arrays, tensors = _inputs(["cpu", "emu"], (n,), seed=3)
    out = dist.all_reduce_devices(tensors, op="sum")
    for t in out:
        np.testing.assert_allclose(t.numpy(), arrays[0] + arrays[1], rtol=1e-6, atol=1e-6)


def test_integer_sum_and_max():
    a = np.arange(-10, 10, dtype=np.int32)
    b = (a * 3) % 7
    tensors = [Tensor(a, device="cpu"), Tensor(b, device="emu")]
    for op, want in (("sum", a + b), ("max", np.maximum(a, b))):
        for algorithm in ("naive", "ring"):
            for t in dist.all_reduce_devices(tensors, op=op, algorithm=algorithm):
                np.testing.assert_array_equal(t.numpy(), want)


def test_bad_arguments_are_value_errors():
    x = Tensor(np.zeros(4, np.float32), device="cpu")
    y = Tensor(np.zeros(5, np.float32), device="emu")
    with pytest.raises(PolygradValueError, match="same shape and dtype"):
        dist.all_reduce_devices([x, y])
    with pytest.raises(PolygradValueError, match="reduction 'min'"):
        dist.all_reduce_devices([x, x], op="min")
    with pytest.raises(PolygradValueError, match="mean needs a floating-point dtype"):
        dist.all_reduce_devices([Tensor(np.zeros(4, np.int32))] * 2, op="mean")
    with pytest.raises(PolygradValueError, match="no tensors"):
        dist.all_reduce_devices([])


_TWO_CPUS = r"""
import numpy as np
import polygrad.distributed as dist
from polygrad import Tensor
rng = np.random.default_rng(5)
a, b = (rng.standard_normal((9, 13)).astype(np.float32) for _ in range(2))
x, y = Tensor(a, device="cpu"), Tensor(b, device="cpu:1")
assert (x.device, y.device) == ("CPU", "CPU:1"), (x.device, y.device)
for algorithm in ("naive", "ring"):
    for op, want in (("sum", a + b), ("max", np.maximum(a, b)), ("mean", (a + b) / 2)):
        out = dist.all_reduce_devices([x, y], op=op, algorithm=algorithm)
        assert [t.device for t in out] == ["CPU", "CPU:1"]
        for t in out:
            np.testing.assert_allclose(t.numpy(), want, rtol=1e-6, atol=1e-6)
print("ok")
"""


def test_two_cpu_devices_of_one_plugin(tmp_path):
    """cpu_clang's `count` option offers cpu:1 beside cpu; the config is read at start, so the
    check runs in a process of its own."""
    import os
    import subprocess
    import sys
    config = tmp_path / "polygrad.yaml"
    config.write_text("devices:\n  cpu:\n    count: 2\n")
    env = dict(os.environ, POLYGRAD_CONFIG=str(config))
    r = subprocess.run([sys.executable, "-c", _TWO_CPUS], env=env, capture_output=True,
                       text=True, timeout=300)
    assert r.returncode == 0 and r.stdout.strip() == "ok", r.stdout + r.stderr
